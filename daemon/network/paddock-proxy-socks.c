/* paddock-proxy-socks.c — a proxy connection that speaks SOCKS5
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Why on the HTTP proxy's own listener rather than a second one: the
 * sandbox helper makes one listening socket inside the namespace, and an
 * HTTP request never starts with the byte 5 while a SOCKS5 greeting
 * always does, so one socket serves both and nothing more crosses the
 * sandbox boundary. Sessions see it as ALL_PROXY=socks5h://… (the "h":
 * names go to the proxy unresolved, since there is no resolver inside).
 *
 * The messages are read by the pure parser (paddock-socks5.c) from the
 * connection's head buffer, under the head's limits (bytes, time). Once
 * the request is read, the connection is a tunnel exactly like an HTTP
 * CONNECT: the same policy on the name and port, the same record (method
 * "SOCKS5"), the same refusals, answered with SOCKS5 reply codes.
 */

#include "config.h"

#include <string.h>

#include "paddock-proxy-private.h"
#include "paddock-socks5.h"

static const guint8 greeting_accepted[] = { PADDOCK_SOCKS5_VERSION, PADDOCK_SOCKS5_METHOD_NONE };
static const guint8 greeting_refused[] = { PADDOCK_SOCKS5_VERSION, PADDOCK_SOCKS5_METHOD_UNUSABLE };

/* The reply that tells a SOCKS5 client what the HTTP status would have. */
guint8
_paddock_proxy_socks_code_for_status (guint             status,
                                      PaddockNetVerdict verdict)
{
  if (verdict == PADDOCK_NET_VERDICT_DENIED || status == 403)
    return PADDOCK_SOCKS5_REPLY_NOT_ALLOWED;
  switch (status)
    {
    case 502:
      return PADDOCK_SOCKS5_REPLY_HOST_UNREACHABLE;
    case 504:
      return PADDOCK_SOCKS5_REPLY_TTL_EXPIRED;
    default:
      return PADDOCK_SOCKS5_REPLY_GENERAL_FAILURE;
    }
}

/* Sends the 10-byte reply @code, then runs @next. */
void
_paddock_proxy_socks_reply (Conn     *conn,
                            guint8    code,
                            ConnStep  next)
{
  guint8 reply[PADDOCK_SOCKS5_REPLY_LEN];

  paddock_socks5_format_reply (code, reply);
  g_clear_pointer (&conn->response, g_bytes_unref);
  conn->response = g_bytes_new (reply, sizeof reply);
  _paddock_proxy_conn_send (conn, conn->client, g_bytes_get_data (conn->response, NULL),
                            g_bytes_get_size (conn->response), next);
}

static void
refused_written (Conn     *conn,
                 gpointer  data)
{
  _paddock_proxy_conn_close (conn);
}

static void
greeting_written (Conn     *conn,
                  gpointer  data)
{
  /* The request may have come with the greeting. */
  _paddock_proxy_conn_read_socks (conn);
}

/* A refusal before there is a target: recorded with @reason, answered,
 * closed. */
static void
socks_refuse (Conn        *conn,
              guint8       code,
              const char  *reason)
{
  _paddock_proxy_conn_clear_timeout (conn);
  _paddock_proxy_conn_complete_record (conn, PADDOCK_NET_VERDICT_ERROR, reason);
  _paddock_proxy_socks_reply (conn, code, refused_written);
}

/**
 * _paddock_proxy_conn_read_socks:
 *
 * The head buffer starts with a SOCKS5 greeting (conn->socks): parses what
 * there is, answers the greeting, and once the request is complete, goes on
 * to the policy like a CONNECT; waits for more bytes when they are needed.
 */
void
_paddock_proxy_conn_read_socks (Conn *conn)
{
  const guint8 *data = conn->head->data;
  gsize len = conn->head->len;
  PaddockSocks5Request request;
  PaddockSocks5Result result;
  gsize used = 0;

  if (!conn->socks_greeted)
    {
      result = paddock_socks5_parse_greeting (data, len, &used);
      if (result == PADDOCK_SOCKS5_NEED_MORE)
        goto need_more;
      if (result != PADDOCK_SOCKS5_OK)
        {
          /* No reply code exists before the greeting is accepted: 0xff
           * says "no acceptable method", and the client goes away. */
          _paddock_proxy_conn_clear_timeout (conn);
          _paddock_proxy_conn_complete_record (conn, PADDOCK_NET_VERDICT_ERROR,
                                               paddock_socks5_result_to_string (result));
          _paddock_proxy_conn_send (conn, conn->client, greeting_refused, sizeof greeting_refused,
                                    refused_written);
          return;
        }
      conn->socks_greeted = TRUE;
      conn->socks_used = used;
      _paddock_proxy_conn_send (conn, conn->client, greeting_accepted, sizeof greeting_accepted,
                                greeting_written);
      return;
    }

  result = paddock_socks5_parse_request (data + conn->socks_used, len - conn->socks_used,
                                         &request, &used);
  switch (result)
    {
    case PADDOCK_SOCKS5_NEED_MORE:
      goto need_more;
    case PADDOCK_SOCKS5_OK:
      break;
    case PADDOCK_SOCKS5_BAD_COMMAND:
      socks_refuse (conn, PADDOCK_SOCKS5_REPLY_COMMAND_NOT_SUPPORTED,
                    paddock_socks5_result_to_string (result));
      return;
    case PADDOCK_SOCKS5_BAD_ADDRESS_TYPE:
      socks_refuse (conn, PADDOCK_SOCKS5_REPLY_ADDRESS_TYPE_NOT_SUPPORTED,
                    paddock_socks5_result_to_string (result));
      return;
    case PADDOCK_SOCKS5_BAD_VERSION:
    case PADDOCK_SOCKS5_NO_METHOD:
    case PADDOCK_SOCKS5_BAD_ADDRESS:
    default:
      socks_refuse (conn, PADDOCK_SOCKS5_REPLY_GENERAL_FAILURE,
                    paddock_socks5_result_to_string (result));
      return;
    }

  /* What follows the request is the tunnel's first bytes
   * (_paddock_proxy_conn_connected() sends them on). */
  conn->head_end = conn->socks_used + used;
  _paddock_proxy_conn_clear_timeout (conn);
  conn->mode = MODE_TUNNEL;
  conn->host = g_strdup (request.host);
  conn->port = request.port;
  conn->upstream = g_string_new (NULL);
  _paddock_proxy_conn_check_policy (conn);
  return;

need_more:
  /* Both messages together are at most 519 bytes: far below the head's
   * limit, which a client sending more without completing them hits. */
  if (len > PADDOCK_PROXY_MAX_HEADER_BYTES)
    {
      socks_refuse (conn, PADDOCK_SOCKS5_REPLY_GENERAL_FAILURE, "SOCKS5 message too long");
      return;
    }
  _paddock_proxy_conn_wait (conn, &conn->wait, conn->client, G_IO_IN,
                            _paddock_proxy_conn_read_head, NULL);
}
