/* paddock-lease-item.h — one port lease as the daemon describes it
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define PADDOCK_TYPE_LEASE_ITEM (paddock_lease_item_get_type ())

G_DECLARE_FINAL_TYPE (PaddockLeaseItem, paddock_lease_item, PADDOCK, LEASE_ITEM, GObject)

PaddockLeaseItem *paddock_lease_item_new              (guint16           port,
                                                       const char       *name,
                                                       const char       *owner,
                                                       const char       *session,
                                                       const char       *state);
PaddockLeaseItem *paddock_lease_item_new_from_variant (GVariant         *lease);
guint16           paddock_lease_item_get_port         (PaddockLeaseItem *self);
const char       *paddock_lease_item_get_name         (PaddockLeaseItem *self);
const char       *paddock_lease_item_get_owner_label    (PaddockLeaseItem *self);
const char       *paddock_lease_item_get_owner        (PaddockLeaseItem *self);
const char       *paddock_lease_item_get_session      (PaddockLeaseItem *self);
gboolean          paddock_lease_item_is_reserved      (PaddockLeaseItem *self);
const char       *paddock_lease_item_get_state        (PaddockLeaseItem *self);
gboolean          paddock_lease_item_is_lost          (PaddockLeaseItem *self);
char             *paddock_lease_item_dup_url          (PaddockLeaseItem *self);

G_END_DECLS
