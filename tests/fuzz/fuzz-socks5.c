/* fuzz-socks5.c — fuzz target: SOCKS5 greeting and request parsing (paddock-socks5.c)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The input is what a sandboxed client sends after connecting. Besides not
 * crashing: a message is complete at one length only (every shorter prefix
 * asks for more), and a parsed host is a string the policy can judge.
 */

#include "config.h"

#include <stdint.h>
#include <string.h>

#include "paddock-socks5.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  PaddockSocks5Request request;
  PaddockSocks5Result result;
  gsize used = 0;

  result = paddock_socks5_parse_greeting (data, size, &used);
  if (result == PADDOCK_SOCKS5_OK || result == PADDOCK_SOCKS5_NO_METHOD)
    {
      g_assert_cmpuint (used, >=, 2);
      g_assert_cmpuint (used, <=, MIN (size, PADDOCK_SOCKS5_MAX_GREETING));
      for (gsize len = 0; len < used; len++)
        g_assert_cmpint (paddock_socks5_parse_greeting (data, len, &used), ==, PADDOCK_SOCKS5_NEED_MORE);
    }

  used = 0;
  result = paddock_socks5_parse_request (data, size, &request, &used);
  if (result == PADDOCK_SOCKS5_OK)
    {
      gsize host_len = strnlen (request.host, sizeof request.host);

      g_assert_cmpuint (host_len, <, sizeof request.host);
      g_assert_cmpuint (host_len, >, 0);
      g_assert_cmpuint (used, <=, MIN (size, PADDOCK_SOCKS5_MAX_REQUEST));
      g_assert_cmpuint (request.port, <=, 65535);
      g_assert_cmpuint (request.command, ==, PADDOCK_SOCKS5_COMMAND_CONNECT);
      for (gsize len = 0; len < used; len++)
        g_assert_cmpint (paddock_socks5_parse_request (data, len, &request, &used), ==,
                         PADDOCK_SOCKS5_NEED_MORE);
    }
  return 0;
}
