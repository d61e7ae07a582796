/* fuzz-http-body.c — fuzz target: HTTP body framing as the proxy follows an origin's response (paddock-http-body.c)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The first byte picks the framing (and a Content-Length), the rest is the
 * body as the origin sends it. Besides not crashing: how the bytes arrive
 * (one read, or many small ones) must not change where the body ends, nor
 * whether its framing was broken.
 */

#include "config.h"

#include <stdint.h>

#include "paddock-http-body.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  PaddockHttpBodyKind kind;
  PaddockHttpBody whole, pieces;
  guint64 length;
  gsize used_whole, used_pieces = 0, step;

  if (size < 1)
    return 0;
  kind = (PaddockHttpBodyKind) (data[0] % 4);
  length = data[0] >> 2;
  step = (data[0] % 5) + 1;
  data++;
  size--;

  paddock_http_body_init (&whole, kind, length);
  used_whole = paddock_http_body_accept (&whole, data, size);
  g_assert_cmpuint (used_whole, <=, size);
  if (size == 0)
    return 0;   /* nothing to split */

  paddock_http_body_init (&pieces, kind, length);
  for (gsize at = 0; at < size && !pieces.complete; at += step)
    {
      gsize n = MIN (step, size - at);
      gsize used = paddock_http_body_accept (&pieces, data + at, n);

      g_assert_cmpuint (used, <=, n);
      used_pieces += used;
      /* Only the end of the body leaves bytes of a read unused. */
      if (used < n)
        g_assert_true (pieces.complete);
    }

  g_assert_cmpint (whole.broken, ==, pieces.broken);
  g_assert_cmpint (whole.complete, ==, pieces.complete);
  if (!whole.broken)
    g_assert_cmpuint (used_whole, ==, used_pieces);
  if (kind == PADDOCK_HTTP_BODY_LENGTH && !whole.broken)
    g_assert_cmpuint (used_whole, ==, MIN (length, size));
  return 0;
}
