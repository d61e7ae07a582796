/* paddock-http-body.h — pure HTTP/1.x message body framing (no I/O, no GIO)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define PADDOCK_HTTP_MAX_CHUNK_LINE    4096          /* a chunk-size line, extensions included */
#define PADDOCK_HTTP_MAX_TRAILER_BYTES (32 * 1024)

typedef enum {
  PADDOCK_HTTP_BODY_NONE,         /* HEAD, 204, 304: ends with the head */
  PADDOCK_HTTP_BODY_LENGTH,       /* Content-Length */
  PADDOCK_HTTP_BODY_CHUNKED,      /* Transfer-Encoding: chunked */
  PADDOCK_HTTP_BODY_UNTIL_CLOSE,  /* whatever comes until the origin closes */
} PaddockHttpBodyKind;

/* Where a body is as it streams past; a plain struct (the proxy embeds
 * one per connection), set up by paddock_http_body_init(). */
typedef struct
{
  PaddockHttpBodyKind kind;
  guint64             left;           /* LENGTH: bytes; CHUNKED: of this chunk */
  int                 chunk_state;
  gsize               chunk_line;     /* bytes of the current size or trailer line */
  gsize               trailer_bytes;
  gboolean            chunk_digits;
  gboolean            complete;       /* the body ended */
  gboolean            broken;         /* …because its framing made no sense */
} PaddockHttpBody;

void  paddock_http_body_init   (PaddockHttpBody     *body,
                                PaddockHttpBodyKind  kind,
                                guint64              length);
gsize paddock_http_body_accept (PaddockHttpBody     *body,
                                const guint8        *data,
                                gsize                len);

G_END_DECLS
