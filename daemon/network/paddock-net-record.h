/* paddock-net-record.h — one proxied request or tunnel, as the session's audit sees it
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

typedef enum {
  PADDOCK_NET_VERDICT_ALLOWED,
  PADDOCK_NET_VERDICT_DENIED,
  PADDOCK_NET_VERDICT_ERROR,
} PaddockNetVerdict;

#define PADDOCK_TYPE_NET_RECORD (paddock_net_record_get_type ())

G_DECLARE_FINAL_TYPE (PaddockNetRecord, paddock_net_record, PADDOCK, NET_RECORD, GObject)

const char        *paddock_net_verdict_to_string      (PaddockNetVerdict   verdict);
gboolean           paddock_net_verdict_from_string    (const char         *text,
                                                       PaddockNetVerdict  *out_verdict);

PaddockNetRecord  *paddock_net_record_new             (gint64              time_usec,
                                                       const char         *method,
                                                       const char         *host,
                                                       guint               port);
gint64             paddock_net_record_get_time        (PaddockNetRecord   *self);
const char        *paddock_net_record_get_method      (PaddockNetRecord   *self);
const char        *paddock_net_record_get_host        (PaddockNetRecord   *self);
guint              paddock_net_record_get_port        (PaddockNetRecord   *self);
PaddockNetVerdict  paddock_net_record_get_verdict     (PaddockNetRecord   *self);
guint64            paddock_net_record_get_bytes_up    (PaddockNetRecord   *self);
guint64            paddock_net_record_get_bytes_down  (PaddockNetRecord   *self);
gint64             paddock_net_record_get_duration_ms (PaddockNetRecord   *self);
const char        *paddock_net_record_get_error       (PaddockNetRecord   *self);

void               paddock_net_record_set_target      (PaddockNetRecord   *self,
                                                       const char         *method,
                                                       const char         *host,
                                                       guint               port);
void               paddock_net_record_set_verdict     (PaddockNetRecord   *self,
                                                       PaddockNetVerdict   verdict,
                                                       const char         *error);
void               paddock_net_record_add_bytes       (PaddockNetRecord   *self,
                                                       guint64             up,
                                                       guint64             down);
void               paddock_net_record_set_duration_ms (PaddockNetRecord   *self,
                                                       gint64              duration_ms);
guint64            paddock_net_record_get_seq         (PaddockNetRecord   *self);
void               paddock_net_record_set_seq         (PaddockNetRecord   *self,
                                                       guint64             seq);

JsonNode          *paddock_net_record_to_json         (PaddockNetRecord   *self);
PaddockNetRecord  *paddock_net_record_new_from_line   (const char         *line,
                                                      GError            **error);
PaddockNetRecord  *paddock_net_record_new_from_json   (JsonNode           *node,
                                                       GError            **error);

G_END_DECLS
