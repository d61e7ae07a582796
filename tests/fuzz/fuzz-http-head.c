/* fuzz-http-head.c — fuzz target: the proxy's HTTP head helpers (paddock-http-head.c)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The input is what a sandboxed client sends as a request head. Besides
 * not crashing, the helpers must agree with themselves: the proxy looks
 * for the head's end again after each read, from just before the new
 * bytes, and must find the same end as one search over the whole.
 */

#include "config.h"

#include <stdint.h>
#include <string.h>

#include "paddock-http-head.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  gsize whole = paddock_http_find_head_end (data, size, 0);
  gsize step = size > 0 ? (data[0] % 7) + 1 : 1;
  gsize incremental = 0;
  g_autofree char *text = NULL;
  g_autofree char *host = NULL;
  guint port = 0;
  guint64 length = 0;

  /* As conn_read_head() does: more bytes each time, searching from two
   * before the new ones. */
  for (gsize len = MIN (step, size); incremental == 0; len = MIN (len + step, size))
    {
      gsize old_len = len > step ? len - step : 0;

      incremental = paddock_http_find_head_end (data, len, old_len > 2 ? old_len - 2 : 0);
      if (len == size)
        break;
    }
  g_assert_cmpuint (incremental, ==, whole);
  g_assert_cmpuint (whole, <=, size);
  g_assert_cmpuint (paddock_http_count_lines (data, size), <=, size);

  /* The rest read strings: the head's text up to a NUL, as libsoup sees it. */
  text = g_strndup ((const char *) data, size);
  if (paddock_http_parse_authority (text, &host, &port))
    {
      g_assert_cmpuint (port, >=, 1);
      g_assert_cmpuint (port, <=, 65535);
      g_assert_cmpuint (strlen (host), >, 0);
      g_assert_cmpuint (strlen (host), <, strlen (text));
    }
  if (paddock_http_parse_content_length (text, &length))
    g_assert_cmpuint (length, <=, (guint64) G_MAXINT64);
  if (!paddock_http_field_is_clean (text))
    g_assert_true (strchr (text, '\r') != NULL || strchr (text, '\n') != NULL);

  /* The first line as a Connection field, the second as a field name. */
  {
    char *newline = strchr (text, '\n');

    if (newline != NULL)
      {
        *newline = '\0';
        paddock_http_list_contains (text, newline + 1);
        paddock_http_is_hop_by_hop (newline + 1, text);
        if (paddock_http_list_contains (text, newline + 1))
          g_assert_true (paddock_http_is_hop_by_hop (newline + 1, text));
      }
  }
  return 0;
}
