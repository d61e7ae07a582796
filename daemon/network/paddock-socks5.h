/* paddock-socks5.h — pure SOCKS5 (RFC 1928) message parsing, CONNECT without authentication
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define PADDOCK_SOCKS5_VERSION           5
#define PADDOCK_SOCKS5_METHOD_NONE       0x00  /* "no authentication required" */
#define PADDOCK_SOCKS5_METHOD_UNUSABLE   0xff
#define PADDOCK_SOCKS5_COMMAND_CONNECT   0x01
#define PADDOCK_SOCKS5_ADDRESS_IPV4      0x01
#define PADDOCK_SOCKS5_ADDRESS_DOMAIN    0x03
#define PADDOCK_SOCKS5_ADDRESS_IPV6      0x04

/* The reply codes of RFC 1928 §6. */
typedef enum {
  PADDOCK_SOCKS5_REPLY_SUCCEEDED                  = 0x00,
  PADDOCK_SOCKS5_REPLY_GENERAL_FAILURE            = 0x01,
  PADDOCK_SOCKS5_REPLY_NOT_ALLOWED                = 0x02,
  PADDOCK_SOCKS5_REPLY_NETWORK_UNREACHABLE        = 0x03,
  PADDOCK_SOCKS5_REPLY_HOST_UNREACHABLE           = 0x04,
  PADDOCK_SOCKS5_REPLY_CONNECTION_REFUSED         = 0x05,
  PADDOCK_SOCKS5_REPLY_TTL_EXPIRED                = 0x06,
  PADDOCK_SOCKS5_REPLY_COMMAND_NOT_SUPPORTED      = 0x07,
  PADDOCK_SOCKS5_REPLY_ADDRESS_TYPE_NOT_SUPPORTED = 0x08,
} PaddockSocks5Reply;

typedef enum {
  PADDOCK_SOCKS5_NEED_MORE,          /* a prefix of a valid message */
  PADDOCK_SOCKS5_OK,
  PADDOCK_SOCKS5_BAD_VERSION,        /* not SOCKS5 */
  PADDOCK_SOCKS5_NO_METHOD,          /* the greeting does not offer "no authentication" */
  PADDOCK_SOCKS5_BAD_COMMAND,        /* BIND or UDP ASSOCIATE, or unknown */
  PADDOCK_SOCKS5_BAD_ADDRESS_TYPE,
  PADDOCK_SOCKS5_BAD_ADDRESS,        /* an empty name, or one with a NUL byte */
} PaddockSocks5Result;

/* The longest greeting (2 + 255 methods) and request (4 + 1 + 255 + 2). */
#define PADDOCK_SOCKS5_MAX_GREETING 257
#define PADDOCK_SOCKS5_MAX_REQUEST  262
#define PADDOCK_SOCKS5_REPLY_LEN    10

typedef struct
{
  guint8  command;
  guint8  address_type;
  char    host[256];     /* a name as sent, or an IP literal's text (IPv6 without brackets) */
  guint   port;          /* 0…65535 as sent; the policy refuses 0 */
} PaddockSocks5Request;

PaddockSocks5Result paddock_socks5_parse_greeting (const guint8          *data,
                                                   gsize                  len,
                                                   gsize                 *out_used);
PaddockSocks5Result paddock_socks5_parse_request  (const guint8          *data,
                                                   gsize                  len,
                                                   PaddockSocks5Request  *out_request,
                                                   gsize                 *out_used);
void                paddock_socks5_format_reply   (PaddockSocks5Reply     code,
                                                   guint8                 out[PADDOCK_SOCKS5_REPLY_LEN]);
const char         *paddock_socks5_result_to_string (PaddockSocks5Result  result);

G_END_DECLS
