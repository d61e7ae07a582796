/* paddock-http-head.h — pure helpers for HTTP/1.x heads (no I/O, no GIO)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

gsize    paddock_http_find_head_end       (const guint8  *data,
                                           gsize          len,
                                           gsize          from);
gsize    paddock_http_count_lines         (const guint8  *data,
                                           gsize          len);
gboolean paddock_http_parse_authority     (const char    *authority,
                                           char         **out_host,
                                           guint         *out_port);
gboolean paddock_http_parse_content_length (const char   *text,
                                            guint64      *out_length);
gboolean paddock_http_field_is_clean      (const char    *text);
gboolean paddock_http_list_contains       (const char    *list,
                                           const char    *token);
gboolean paddock_http_is_hop_by_hop       (const char    *name,
                                           const char    *connection_header);

G_END_DECLS
