/* paddock-proxy-pump.c — bounded copies between client and origin, and the origin's response
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Each connection has two pumps (client → origin, origin → client), each
 * with a 16 KiB buffer: it copies until its input or output would block
 * (then waits for that), its input ends, or PUMP_ROUNDS copies were made
 * (then yields to the other connections). A tunnel's pumps copy blindly;
 * a forwarded request's downward pump follows the response: its head is
 * rewritten to "Connection: close" for the client and its body's framing
 * (paddock-http-body.c) says where it ends, so that the origin connection
 * can be kept (paddock-proxy-pool.c).
 */

#include "config.h"

#include <errno.h>
#include <libsoup/soup.h>
#include <string.h>
#include <sys/socket.h>

#include "paddock-autofd.h"
#include "paddock-http-head.h"
#include "paddock-proxy-private.h"

static gboolean response_take      (Conn *conn, Pump *pump, gsize n);
static void     conn_response_done (Conn *conn);

/* A kept origin connection that the origin had closed (or closes as we
 * send): if not one byte of the response came and the whole request was
 * in what we sent, it is sent again on a new connection. */
gboolean
_paddock_proxy_conn_retry_fresh (Conn *conn)
{
  if (!conn->reused || conn->resp_bytes > 0 || conn->body_unlimited || conn->body_remaining > 0)
    return FALSE;

  _paddock_proxy_wait_clear (&conn->up.wait);
  _paddock_proxy_wait_clear (&conn->down.wait);
  paddock_close_fd (&conn->origin);
  conn->up.pending = conn->down.pending = 0;
  conn->up.done = conn->down.done = FALSE;
  conn->reused = FALSE;
  conn->no_pool = TRUE;
  _paddock_proxy_conn_resolve (conn);
  return TRUE;
}

/* The origin ended before the response did. */
static void
conn_response_cut (Conn       *conn,
                   const char *what)
{
  if (_paddock_proxy_conn_retry_fresh (conn))
    return;
  if (conn->resp_head != NULL && conn->down.pending == 0)
    {
      /* Nothing of a final response reached the client: say so. */
      g_autofree char *body = g_strdup_printf ("Paddock proxy: %s:%u %s before its response header "
                                               "ended\n", conn->host, conn->port, what);
      _paddock_proxy_conn_respond_error (conn, 502, PADDOCK_NET_VERDICT_ERROR, body);
      return;
    }
  _paddock_proxy_conn_finish (conn, conn->resp_body.kind == PADDOCK_HTTP_BODY_UNTIL_CLOSE ? NULL
                                                         : "the origin closed before the response ended");
}

static void
pump_end_of_input (Pump *pump)
{
  Conn *conn = pump->conn;

  pump->done = TRUE;
  if (conn->mode == MODE_FORWARD)
    {
      /* The origin's close ends a response framed by it, and cuts one
       * framed otherwise; a client that half-closes after its request
       * just stops the upward pump. */
      if (!pump->up)
        conn_response_cut (conn, "closed");
      else if (pump->limited && pump->remaining > 0)
        _paddock_proxy_conn_finish (conn, "the client closed before the request body ended");
      return;
    }

  /* A tunnel passes a half-close on, and ends when both sides have. */
  shutdown (pump->out, SHUT_WR);
  if (conn->up.done && conn->down.done)
    _paddock_proxy_conn_finish (conn, NULL);
}

static void
pump_failed (Pump       *pump,
             gboolean    writing)
{
  g_autofree char *text = NULL;

  if (pump->conn->mode == MODE_FORWARD && pump->up == writing && _paddock_proxy_conn_retry_fresh (pump->conn))
    return;

  text = g_strdup_printf ("%s: %s",
                                           writing ? (pump->up ? "writing to the origin"
                                                               : "writing to the client")
                                                   : (pump->up ? "reading from the client"
                                                               : "reading from the origin"),
                                           g_strerror (errno));
  _paddock_proxy_conn_finish (pump->conn, text);
}

/* Copies until the input would block (then waits for it), the output
 * would block (then waits for that), the input ends, or PUMP_ROUNDS
 * copies were made (then yields to the other connections). */
static void
pump_run (Conn     *conn,
          gpointer  data)
{
  Pump *pump = data;

  for (guint round = 0; ; round++)
    {
      ssize_t n;

      while (pump->pending > 0)
        {
          n = send (pump->out, pump->send_from + pump->offset, pump->pending, MSG_NOSIGNAL);
          if (n < 0 && errno == EINTR)
            continue;
          if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            {
              _paddock_proxy_conn_wait (conn, &pump->wait, pump->out, G_IO_OUT, pump_run, pump);
              return;
            }
          if (n < 0)
            {
              pump_failed (pump, TRUE);
              return;
            }
          pump->offset += (gsize) n;
          pump->pending -= (gsize) n;
        }

      if (!pump->up && conn->resp_body.complete)
        {
          conn_response_done (conn);
          return;
        }
      if (pump->done)
        return;  /* the request body is complete: what follows is not read */
      if (round >= PUMP_ROUNDS)
        {
          _paddock_proxy_conn_wait (conn, &pump->wait, pump->in, G_IO_IN, pump_run, pump);
          return;
        }

      n = recv (pump->in, pump->buffer,
                pump->limited ? (gsize) MIN ((guint64) PUMP_BUFFER_SIZE, pump->remaining)
                              : PUMP_BUFFER_SIZE, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        {
          _paddock_proxy_conn_wait (conn, &pump->wait, pump->in, G_IO_IN, pump_run, pump);
          return;
        }
      if (n < 0)
        {
          pump_failed (pump, FALSE);
          return;
        }
      if (n == 0)
        {
          pump_end_of_input (pump);
          return;
        }

      if (!pump->up && conn->mode == MODE_FORWARD)
        {
          if (!response_take (conn, pump, (gsize) n))
            return;
          paddock_net_record_add_bytes (conn->record, 0, pump->pending);
          continue;
        }
      if (pump->up)
        paddock_net_record_add_bytes (conn->record, (guint64) n, 0);
      else
        paddock_net_record_add_bytes (conn->record, 0, (guint64) n);
      pump->send_from = pump->buffer;
      pump->offset = 0;
      pump->pending = (gsize) n;
      if (pump->limited)
        {
          pump->remaining -= (guint64) n;
          /* The request body is complete once written; what the client
           * sends after it (a pipelined request) is not read: one request
           * per connection. */
          pump->done = pump->remaining == 0;
        }
    }
}

static void
pump_init (Conn     *conn,
           Pump     *pump,
           gboolean  up)
{
  pump->conn = conn;
  pump->up = up;
  pump->in = up ? conn->client : conn->origin;
  pump->out = up ? conn->origin : conn->client;
  if (pump->buffer == NULL)
    pump->buffer = g_malloc (PUMP_BUFFER_SIZE);
}

void
_paddock_proxy_conn_start_pumps (Conn     *conn,
                                 gpointer  data)
{
  pump_init (conn, &conn->up, TRUE);
  pump_init (conn, &conn->down, FALSE);

  if (conn->mode == MODE_FORWARD && !conn->body_unlimited)
    {
      conn->up.limited = TRUE;
      conn->up.remaining = conn->body_remaining;
      if (conn->up.remaining == 0)
        conn->up.done = TRUE;
    }

  if (!conn->up.done)
    pump_run (conn, &conn->up);
  /* The origin has just been sent the request (or the tunnel just
   * opened): its answer is not there yet, and reading now would only say
   * EAGAIN (about one recv in three did, with 64 clients). Wait for it. */
  if (!conn->closed)
    _paddock_proxy_conn_wait (conn, &conn->down.wait, conn->down.in, G_IO_IN, pump_run, &conn->down);
}

/* ---------------------------------------------------------------------- */
/* The origin's response: its framing, so that the origin connection can  */
/* be kept, and its head, so that the client hears "Connection: close"    */

typedef struct {
  GByteArray *out;
  const char *connection;
} ResponseCopy;

static void
copy_response_header (const char *name,
                      const char *value,
                      gpointer    user_data)
{
  ResponseCopy *copy = user_data;

  /* The client↔proxy connection ends with this response. */
  if (g_ascii_strcasecmp (name, "Connection") == 0 || g_ascii_strcasecmp (name, "Keep-Alive") == 0 ||
      g_ascii_strcasecmp (name, "Proxy-Connection") == 0 ||
      (copy->connection != NULL && g_ascii_strcasecmp (name, "Transfer-Encoding") != 0 &&
       soup_header_contains (copy->connection, name)))
    return;
  g_byte_array_append (copy->out, (const guint8 *) name, (guint) strlen (name));
  g_byte_array_append (copy->out, (const guint8 *) ": ", 2);
  g_byte_array_append (copy->out, (const guint8 *) value, (guint) strlen (value));
  g_byte_array_append (copy->out, (const guint8 *) "\r\n", 2);
}

/* The response head is complete at @end: note its framing, queue it
 * (rewritten) for the client, then the body bytes that came with it.
 * FALSE if the connection was answered with an error instead. */
static gboolean
response_head_done (Conn *conn,
                    gsize end)
{
  g_autoptr(SoupMessageHeaders) headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
  const char *data = (const char *) conn->resp_head->data;
  SoupHTTPVersion version = SOUP_HTTP_1_0;
  const char *first_end = memchr (data, '\n', end);
  const char *connection, *length;
  ResponseCopy copy;
  gsize fields_end = end;
  PaddockHttpBodyKind kind;
  guint64 body_length = 0;
  guint status = 0;
  gsize used;

  while (fields_end > 0 && (data[fields_end - 1] == '\n' || data[fields_end - 1] == '\r'))
    fields_end--;
  if (first_end == NULL ||
      !soup_headers_parse_response (data, (int) fields_end + 2, headers, &version, &status, NULL))
    {
      _paddock_proxy_conn_respond_error (conn, 502, PADDOCK_NET_VERDICT_ERROR,
                                         "Paddock proxy: the origin's response header is malformed\n");
      return FALSE;
    }

  if (conn->resp_out == NULL)
    conn->resp_out = g_byte_array_new ();

  /* An interim response (100 Continue…) goes through as it is; the final
   * one follows it. */
  if (status >= 100 && status < 200 && status != 101)
    {
      g_byte_array_append (conn->resp_out, conn->resp_head->data, (guint) end);
      g_byte_array_remove_range (conn->resp_head, 0, (guint) end);
      return TRUE;
    }

  connection = soup_message_headers_get_list (headers, "Connection");
  length = soup_message_headers_get_one (headers, "Content-Length");
  conn->resp_reusable = conn->want_reuse && version == SOUP_HTTP_1_1 &&
                        (connection == NULL || !soup_header_contains (connection, "close"));
  if (conn->is_head || status == 204 || status == 304)
    kind = PADDOCK_HTTP_BODY_NONE;
  else if (soup_message_headers_get_one (headers, "Transfer-Encoding") != NULL)
    kind = soup_message_headers_get_encoding (headers) == SOUP_ENCODING_CHUNKED
           ? PADDOCK_HTTP_BODY_CHUNKED : PADDOCK_HTTP_BODY_UNTIL_CLOSE;
  else if (length != NULL && paddock_http_parse_content_length (length, &body_length))
    kind = PADDOCK_HTTP_BODY_LENGTH;
  else
    kind = PADDOCK_HTTP_BODY_UNTIL_CLOSE;
  if (kind == PADDOCK_HTTP_BODY_UNTIL_CLOSE || status == 101)
    {
      kind = PADDOCK_HTTP_BODY_UNTIL_CLOSE;
      conn->resp_reusable = FALSE;
    }
  paddock_http_body_init (&conn->resp_body, kind, body_length);

  copy.out = conn->resp_out;
  copy.connection = connection;
  g_byte_array_append (conn->resp_out, conn->resp_head->data,
                       (guint) (first_end - data + 1));
  soup_message_headers_foreach (headers, copy_response_header, &copy);
  g_byte_array_append (conn->resp_out, (const guint8 *) "Connection: close\r\n\r\n", 21);

  used = paddock_http_body_accept (&conn->resp_body, conn->resp_head->data + end,
                                   conn->resp_head->len - end);
  if (used < conn->resp_head->len - end || conn->resp_body.broken)
    conn->resp_reusable = FALSE;  /* the origin sent more than the response */
  g_byte_array_append (conn->resp_out, conn->resp_head->data + end, (guint) used);
  g_clear_pointer (&conn->resp_head, g_byte_array_unref);
  return TRUE;
}

/* @n bytes from the origin are in the down pump's buffer: decides what of
 * them goes to the client (pump->send_from, pending). FALSE if the
 * connection was answered or ended instead. */
static gboolean
response_take (Conn  *conn,
               Pump  *pump,
               gsize  n)
{
  conn->resp_bytes += n;
  pump->offset = 0;

  if (conn->resp_head == NULL)
    {
      gsize used = paddock_http_body_accept (&conn->resp_body, pump->buffer, n);

      if (used < n || conn->resp_body.broken)
        conn->resp_reusable = FALSE;
      pump->send_from = pump->buffer;
      pump->pending = used;
      return TRUE;
    }

  if (conn->resp_out != NULL)
    g_byte_array_set_size (conn->resp_out, 0);  /* sent already */
  g_byte_array_append (conn->resp_head, pump->buffer, (guint) n);
  for (;;)
    {
      gsize end = paddock_http_find_head_end (conn->resp_head->data, conn->resp_head->len, 0);

      if (end == 0 || end > PADDOCK_PROXY_MAX_HEADER_BYTES)
        {
          if (end == 0 && conn->resp_head->len <= PADDOCK_PROXY_MAX_HEADER_BYTES)
            break;  /* more to come */
          _paddock_proxy_conn_respond_error (conn, 502, PADDOCK_NET_VERDICT_ERROR,
                                             "Paddock proxy: the origin's response header is larger than 32 KiB\n");
          return FALSE;
        }
      if (!response_head_done (conn, end))
        return FALSE;
      if (conn->resp_head == NULL)
        break;
    }

  /* The head (rewritten) and the body bytes that came with it; it stays
   * in resp_out until sent, since nothing is read while bytes wait. */
  if (conn->resp_out != NULL && conn->resp_out->len > 0)
    {
      pump->send_from = conn->resp_out->data;
      pump->pending = conn->resp_out->len;
    }
  else
    pump->pending = 0;
  return TRUE;
}

/* The response is complete and sent: keep the origin connection if it
 * can serve another request, and end the client's. */
static void
conn_response_done (Conn *conn)
{
  PaddockProxy *proxy = conn->proxy;

  if (conn->resp_reusable && conn->up.done && conn->up.pending == 0 && conn->origin >= 0 &&
      proxy != NULL && !proxy->stopped)
    {
      _paddock_proxy_wait_clear (&conn->up.wait);
      _paddock_proxy_pool_put (proxy, conn->host, conn->port, conn->origin);
      conn->origin = -1;
    }
  _paddock_proxy_conn_finish (conn, NULL);
}
