/* paddock-network-record.h — one request the session's proxy saw
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define PADDOCK_TYPE_NETWORK_RECORD (paddock_network_record_get_type ())

G_DECLARE_FINAL_TYPE (PaddockNetworkRecord, paddock_network_record, PADDOCK, NETWORK_RECORD, GObject)

PaddockNetworkRecord *paddock_network_record_new_from_variant (GVariant             *record);
guint64               paddock_network_record_get_seq          (PaddockNetworkRecord *self);
gint64                paddock_network_record_get_time         (PaddockNetworkRecord *self);
const char           *paddock_network_record_get_method       (PaddockNetworkRecord *self);
const char           *paddock_network_record_get_host         (PaddockNetworkRecord *self);
guint16               paddock_network_record_get_port         (PaddockNetworkRecord *self);
const char           *paddock_network_record_get_verdict      (PaddockNetworkRecord *self);
guint64               paddock_network_record_get_bytes_up     (PaddockNetworkRecord *self);
guint64               paddock_network_record_get_bytes_down   (PaddockNetworkRecord *self);
guint                 paddock_network_record_get_duration_ms  (PaddockNetworkRecord *self);
gboolean              paddock_network_record_is_allowed       (PaddockNetworkRecord *self);

G_END_DECLS
