/* paddock-socks5.c — pure SOCKS5 (RFC 1928) message parsing, CONNECT without authentication
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The proxy speaks SOCKS5 for what is not HTTP (ssh, databases, anything
 * TCP), on the same listener as HTTP: only "no authentication" (the
 * listener is inside the session's own namespace; there is nobody else to
 * tell apart) and only CONNECT (BIND and UDP ASSOCIATE would open ways in
 * or around the TCP policy). These functions only read bytes; the proxy
 * (paddock-proxy-socks.c) judges the target with the same policy as an
 * HTTP CONNECT. Unit-tested and fuzzed alone (tests/fuzz/fuzz-socks5.c).
 */

#include "config.h"

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "paddock-socks5.h"

/**
 * paddock_socks5_parse_greeting:
 * @out_used: (out): the greeting's length, when %PADDOCK_SOCKS5_OK
 *
 * VER NMETHODS METHODS…: OK when it offers "no authentication".
 */
PaddockSocks5Result
paddock_socks5_parse_greeting (const guint8 *data,
                               gsize         len,
                               gsize        *out_used)
{
  gsize n_methods;

  if (len < 1)
    return PADDOCK_SOCKS5_NEED_MORE;
  if (data[0] != PADDOCK_SOCKS5_VERSION)
    return PADDOCK_SOCKS5_BAD_VERSION;
  if (len < 2)
    return PADDOCK_SOCKS5_NEED_MORE;
  n_methods = data[1];
  if (len < 2 + n_methods)
    return PADDOCK_SOCKS5_NEED_MORE;
  *out_used = 2 + n_methods;
  if (memchr (data + 2, PADDOCK_SOCKS5_METHOD_NONE, n_methods) == NULL)
    return PADDOCK_SOCKS5_NO_METHOD;
  return PADDOCK_SOCKS5_OK;
}

/**
 * paddock_socks5_parse_request:
 * @out_request: (out): filled when %PADDOCK_SOCKS5_OK, and its command and
 *   address type as soon as they are known (for the reply to a refusal)
 * @out_used: (out): the request's length, when %PADDOCK_SOCKS5_OK
 *
 * VER CMD RSV ATYP DST.ADDR DST.PORT.
 */
PaddockSocks5Result
paddock_socks5_parse_request (const guint8         *data,
                              gsize                 len,
                              PaddockSocks5Request *out_request,
                              gsize                *out_used)
{
  gsize address_len, at;

  memset (out_request, 0, sizeof *out_request);
  if (len < 1)
    return PADDOCK_SOCKS5_NEED_MORE;
  if (data[0] != PADDOCK_SOCKS5_VERSION)
    return PADDOCK_SOCKS5_BAD_VERSION;
  if (len < 2)
    return PADDOCK_SOCKS5_NEED_MORE;
  out_request->command = data[1];
  /* Refused before its address is read: nothing more is needed to say no. */
  if (data[1] != PADDOCK_SOCKS5_COMMAND_CONNECT)
    return PADDOCK_SOCKS5_BAD_COMMAND;
  if (len < 4)
    return PADDOCK_SOCKS5_NEED_MORE;
  out_request->address_type = data[3];
  switch (data[3])
    {
    case PADDOCK_SOCKS5_ADDRESS_IPV4:
      address_len = 4;
      at = 4;
      break;
    case PADDOCK_SOCKS5_ADDRESS_IPV6:
      address_len = 16;
      at = 4;
      break;
    case PADDOCK_SOCKS5_ADDRESS_DOMAIN:
      if (len < 5)
        return PADDOCK_SOCKS5_NEED_MORE;
      address_len = data[4];
      at = 5;
      break;
    default:
      return PADDOCK_SOCKS5_BAD_ADDRESS_TYPE;
    }
  if (len < at + address_len + 2)
    return PADDOCK_SOCKS5_NEED_MORE;

  switch (data[3])
    {
    case PADDOCK_SOCKS5_ADDRESS_IPV4:
      if (inet_ntop (AF_INET, data + at, out_request->host, sizeof out_request->host) == NULL)
        return PADDOCK_SOCKS5_BAD_ADDRESS;
      break;
    case PADDOCK_SOCKS5_ADDRESS_IPV6:
      if (inet_ntop (AF_INET6, data + at, out_request->host, sizeof out_request->host) == NULL)
        return PADDOCK_SOCKS5_BAD_ADDRESS;
      break;
    default:
      /* A NUL would end the name early: what the policy judged would not
       * be what was asked for. */
      if (address_len == 0 || memchr (data + at, '\0', address_len) != NULL)
        return PADDOCK_SOCKS5_BAD_ADDRESS;
      memcpy (out_request->host, data + at, address_len);
      out_request->host[address_len] = '\0';
      break;
    }
  out_request->port = ((guint) data[at + address_len] << 8) | data[at + address_len + 1];
  *out_used = at + address_len + 2;
  return PADDOCK_SOCKS5_OK;
}

/* VER REP RSV ATYP BND.ADDR BND.PORT, with 0.0.0.0:0 as the bound address:
 * where the proxy's own socket sits is the daemon's business, and clients
 * of CONNECT do not use it. */
void
paddock_socks5_format_reply (PaddockSocks5Reply code,
                             guint8             out[PADDOCK_SOCKS5_REPLY_LEN])
{
  memset (out, 0, PADDOCK_SOCKS5_REPLY_LEN);
  out[0] = PADDOCK_SOCKS5_VERSION;
  out[1] = (guint8) code;
  out[3] = PADDOCK_SOCKS5_ADDRESS_IPV4;
}

/* For records: why a SOCKS5 request was refused before any policy. */
const char *
paddock_socks5_result_to_string (PaddockSocks5Result result)
{
  switch (result)
    {
    case PADDOCK_SOCKS5_NEED_MORE:
      return "the SOCKS5 message is incomplete";
    case PADDOCK_SOCKS5_OK:
      return "ok";
    case PADDOCK_SOCKS5_BAD_VERSION:
      return "not a SOCKS5 message";
    case PADDOCK_SOCKS5_NO_METHOD:
      return "the SOCKS5 greeting does not offer \"no authentication\", the only method served";
    case PADDOCK_SOCKS5_BAD_COMMAND:
      return "only the SOCKS5 CONNECT command is served";
    case PADDOCK_SOCKS5_BAD_ADDRESS_TYPE:
      return "unknown SOCKS5 address type";
    case PADDOCK_SOCKS5_BAD_ADDRESS:
    default:
      return "malformed SOCKS5 address";
    }
}
