/* paddock-http-body.c — pure HTTP/1.x message body framing (no I/O, no GIO)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The proxy follows an origin's response body as it streams past, without
 * keeping it, to know where the response ends: then the origin connection
 * can serve the next request (paddock-proxy-pump.c). The origin is not
 * trusted either, so every line is bounded and nonsense ends the body
 * "broken" rather than being guessed at. No socket or main loop here: it
 * is unit-tested and fuzzed alone (tests/fuzz/fuzz-http-body.c).
 */

#include "config.h"

#include <string.h>

#include "paddock-http-body.h"

enum {
  CHUNK_SIZE,
  CHUNK_EXT,
  CHUNK_DATA,
  CHUNK_DATA_END,
  CHUNK_TRAILER,
};

/**
 * paddock_http_body_init:
 * @length: the Content-Length, for %PADDOCK_HTTP_BODY_LENGTH
 */
void
paddock_http_body_init (PaddockHttpBody     *body,
                        PaddockHttpBodyKind  kind,
                        guint64              length)
{
  memset (body, 0, sizeof *body);
  body->kind = kind;
  body->chunk_state = CHUNK_SIZE;
  if (kind == PADDOCK_HTTP_BODY_LENGTH)
    body->left = length;
}

static int
hex_value (guint8 c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/**
 * paddock_http_body_accept:
 *
 * Returns: how many of @len bytes belong to the body; sets @body->complete
 *   at its end. Framing that makes no sense ends the body where it is
 *   (all of @len taken, @body->broken set): the connection is then not
 *   kept, since where the next message would start is unknown.
 */
gsize
paddock_http_body_accept (PaddockHttpBody *body,
                          const guint8    *data,
                          gsize            len)
{
  gsize i = 0;

  switch (body->kind)
    {
    case PADDOCK_HTTP_BODY_NONE:
      body->complete = TRUE;
      return 0;

    case PADDOCK_HTTP_BODY_UNTIL_CLOSE:
      return len;

    case PADDOCK_HTTP_BODY_LENGTH:
      i = (gsize) MIN ((guint64) len, body->left);
      body->left -= i;
      body->complete = body->left == 0;
      return i;

    case PADDOCK_HTTP_BODY_CHUNKED:
    default:
      break;
    }

  while (i < len && !body->complete)
    {
      guint8 c = data[i];

      switch (body->chunk_state)
        {
        case CHUNK_SIZE:
        case CHUNK_EXT:
          if (c == '\n')
            {
              if (!body->chunk_digits)
                goto broken;
              body->chunk_state = body->left == 0 ? CHUNK_TRAILER : CHUNK_DATA;
              body->chunk_digits = FALSE;
              body->chunk_line = 0;
            }
          else if (body->chunk_state == CHUNK_SIZE && hex_value (c) >= 0)
            {
              if (body->left > (G_MAXUINT64 >> 4))
                goto broken;
              body->left = (body->left << 4) | (guint64) hex_value (c);
              body->chunk_digits = TRUE;
            }
          else if (body->chunk_state == CHUNK_SIZE && c != '\r' && c != ';' && c != ' ' && c != '\t')
            goto broken;
          else if (c != '\r')
            body->chunk_state = CHUNK_EXT;
          if (++body->chunk_line > PADDOCK_HTTP_MAX_CHUNK_LINE)
            goto broken;
          i++;
          break;

        case CHUNK_DATA:
          {
            gsize take = (gsize) MIN ((guint64) (len - i), body->left);

            i += take;
            body->left -= take;
            if (body->left == 0)
              body->chunk_state = CHUNK_DATA_END;
          }
          break;

        case CHUNK_DATA_END:
          if (c == '\n')
            body->chunk_state = CHUNK_SIZE;
          else if (c != '\r')
            goto broken;
          i++;
          break;

        case CHUNK_TRAILER:
        default:
          if (c == '\n')
            {
              body->complete = body->chunk_line == 0;
              body->chunk_line = 0;
            }
          else if (c != '\r')
            body->chunk_line++;
          if (++body->trailer_bytes > PADDOCK_HTTP_MAX_TRAILER_BYTES)
            goto broken;
          i++;
          break;
        }
    }
  return i;

broken:
  body->broken = TRUE;
  body->complete = TRUE;
  return len;
}
