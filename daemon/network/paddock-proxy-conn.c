/* paddock-proxy-conn.c — one client connection of the proxy, from its first byte to its end
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The state machine: read the head (bounded in bytes, lines and time),
 * judge it, apply the policy, resolve (paddock-proxy-resolver.c) or take a
 * kept origin connection (paddock-proxy-pool.c), connect, then hand over
 * to the pumps (paddock-proxy-pump.c). A first byte of 5 is a SOCKS5
 * greeting, whose messages paddock-proxy-socks.c reads; after them the
 * connection is a tunnel like CONNECT's, judged by the same policy.
 *
 * Every wait is the connection's (the fd becoming readable or writable,
 * in the proxy's fd watch; a timer): closing a connection takes them
 * back and cancels its lookup, so nothing of it runs afterwards. A wait
 * is taken back before its fd is closed, as the watch needs.
 */

#include "config.h"

#include <errno.h>
#include <glib-unix.h>
#include <libsoup/soup.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-http-head.h"
#include "paddock-proxy-private.h"
#include "paddock-socks5.h"

Conn *
_paddock_proxy_conn_ref (Conn *conn)
{
  g_assert (conn->ref_count > 0);
  conn->ref_count++;
  return conn;
}

void
_paddock_proxy_wait_clear (Wait *wait)
{
  if (wait->pending)
    {
      paddock_compat_fd_watch_remove (wait->watch, wait->fd, wait->condition);
      wait->pending = FALSE;
    }
}
void
_paddock_proxy_conn_unref (Conn *conn)
{
  g_assert (conn->ref_count > 0);
  if (--conn->ref_count > 0)
    return;

  g_assert (conn->proxy == NULL);
  g_assert (conn->timeout_source == NULL);
  _paddock_proxy_wait_clear (&conn->wait);
  _paddock_proxy_wait_clear (&conn->up.wait);
  _paddock_proxy_wait_clear (&conn->down.wait);
  paddock_close_fd (&conn->origin);
  paddock_close_fd (&conn->client);
  g_clear_object (&conn->cancellable);
  g_clear_pointer (&conn->head, g_byte_array_unref);
  g_clear_object (&conn->record);
  g_clear_pointer (&conn->host, g_free);
  if (conn->upstream != NULL)
    g_string_free (conn->upstream, TRUE);
  g_list_free_full (conn->addresses, g_object_unref);
  g_clear_pointer (&conn->connect_error, g_free);
  g_clear_pointer (&conn->response, g_bytes_unref);
  g_clear_pointer (&conn->up.buffer, g_free);
  g_clear_pointer (&conn->down.buffer, g_free);
  g_clear_pointer (&conn->resp_head, g_byte_array_unref);
  g_clear_pointer (&conn->resp_out, g_byte_array_unref);
  g_free (conn);
}


static void
wait_ready_cb (int          fd,
               GIOCondition condition,
               gpointer     user_data)
{
  Wait *wait = user_data;
  g_autoptr(Conn) conn = _paddock_proxy_conn_ref (wait->conn);

  wait->pending = FALSE;
  if (!conn->closed)
    wait->step (conn, wait->data);
}

/* Runs @step once @fd has @condition (or an error or hang-up: the step's
 * own recv or send then says which). If the kernel will not take the
 * wait (out of memory), the connection ends with that error. */
void
_paddock_proxy_conn_wait (Conn         *conn,
                          Wait         *wait,
                          int           fd,
                          GIOCondition  condition,
                          ConnStep      step,
                          gpointer      data)
{
  g_autoptr(GError) error = NULL;

  g_assert (!wait->pending);
  g_assert (conn->proxy != NULL);
  wait->conn = conn;
  wait->watch = conn->proxy->fd_watch;
  wait->fd = fd;
  wait->condition = condition;
  wait->step = step;
  wait->data = data;
  if (!paddock_compat_fd_watch_add (wait->watch, fd, condition, wait_ready_cb, wait, &error))
    {
      g_autofree char *text = g_strdup_printf ("Paddock proxy: %s", error->message);

      _paddock_proxy_conn_complete_record (conn, PADDOCK_NET_VERDICT_ERROR, text);
      _paddock_proxy_conn_close (conn);
      return;
    }
  wait->pending = TRUE;
}

void
_paddock_proxy_conn_clear_timeout (Conn *conn)
{
  if (conn->timeout_source != NULL)
    {
      g_source_destroy (conn->timeout_source);
      g_clear_pointer (&conn->timeout_source, g_source_unref);
    }
  conn->timeout_kind = TIMEOUT_NONE;
}

static gboolean
conn_timeout_cb (gpointer user_data)
{
  g_autoptr(Conn) conn = _paddock_proxy_conn_ref (user_data);
  TimeoutKind kind = conn->timeout_kind;

  /* The source holds no reference: _paddock_proxy_conn_clear_timeout() destroys it
   * before the connection can go away. */
  g_clear_pointer (&conn->timeout_source, g_source_unref);
  conn->timeout_kind = TIMEOUT_NONE;

  switch (kind)
    {
    case TIMEOUT_HEAD:
      _paddock_proxy_wait_clear (&conn->wait);
      _paddock_proxy_conn_respond_error (conn, 408, PADDOCK_NET_VERDICT_ERROR,
                                         "Paddock proxy: the request header did not arrive in time\n");
      break;
    case TIMEOUT_CONNECT:
      {
        g_autofree char *body = g_strdup_printf ("Paddock proxy: connecting to %s:%u timed out\n",
                                                 conn->host, conn->port);

        _paddock_proxy_wait_clear (&conn->wait);
        paddock_close_fd (&conn->origin);
        _paddock_proxy_conn_respond_error (conn, 504, PADDOCK_NET_VERDICT_ERROR, body);
      }
      break;
    case TIMEOUT_DRAIN:
      _paddock_proxy_conn_close (conn);
      break;
    case TIMEOUT_NONE:
    default:
      g_assert_not_reached ();
    }

  return G_SOURCE_REMOVE;
}

static void
conn_arm_timeout (Conn        *conn,
                  TimeoutKind  kind,
                  guint        timeout_ms)
{
  _paddock_proxy_conn_clear_timeout (conn);
  conn->timeout_kind = kind;
  conn->timeout_source = g_timeout_source_new (timeout_ms);
  g_source_set_callback (conn->timeout_source, conn_timeout_cb, conn, NULL);
  g_source_attach (conn->timeout_source, g_main_context_get_thread_default ());
}

void
_paddock_proxy_conn_complete_record (Conn              *conn,
                                     PaddockNetVerdict  verdict,
                                     const char        *error_text)
{
  PaddockProxy *proxy = conn->proxy;

  if (conn->record_done)
    return;
  conn->record_done = TRUE;

  paddock_net_record_set_verdict (conn->record, verdict, error_text);
  paddock_net_record_set_duration_ms (conn->record,
                                      (g_get_monotonic_time () - conn->start_monotonic) / 1000);

  if (proxy == NULL)
    return;

  _paddock_proxy_emit_record (proxy, conn->record);
}

/* Ends the connection now: destroys every pending wait and timer, cancels
 * a lookup in flight, closes both sockets (peers see the end at once) and
 * drops the proxy's reference. */
void
_paddock_proxy_conn_close (Conn *conn)
{
  g_autoptr(Conn) ref = _paddock_proxy_conn_ref (conn);
  PaddockProxy *proxy = conn->proxy;

  if (conn->closed)
    return;
  conn->closed = TRUE;

  _paddock_proxy_conn_complete_record (conn, paddock_net_record_get_verdict (conn->record),
                                       conn->mode == MODE_NONE ? "connection closed" : NULL);
  _paddock_proxy_conn_clear_timeout (conn);
  _paddock_proxy_wait_clear (&conn->wait);
  _paddock_proxy_wait_clear (&conn->up.wait);
  _paddock_proxy_wait_clear (&conn->down.wait);
  g_cancellable_cancel (conn->cancellable);
  paddock_close_fd (&conn->client);
  paddock_close_fd (&conn->origin);

  conn->proxy = NULL;
  if (proxy != NULL)
    g_hash_table_remove (proxy->connections, conn);
}

/* The tunnel or forwarded request ran: the verdict stays "allowed", with
 * the error text if it ended badly. */
void
_paddock_proxy_conn_finish (Conn       *conn,
                            const char *error_text)
{
  if (!conn->record_done)
    {
      const char *text = error_text;

      if (text == NULL)
        text = paddock_net_record_get_error (conn->record);
      _paddock_proxy_conn_complete_record (conn, PADDOCK_NET_VERDICT_ALLOWED, text);
    }
  _paddock_proxy_conn_close (conn);
}

/* Writes conn->send_* to conn->send_fd, waiting as needed, then runs
 * conn->send_next; a failed write finishes the connection. */
static void
conn_send_step (Conn     *conn,
                gpointer  data)
{
  while (conn->send_done < conn->send_len)
    {
      ssize_t n = send (conn->send_fd, conn->send_data + conn->send_done,
                        conn->send_len - conn->send_done, MSG_NOSIGNAL);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        {
          _paddock_proxy_conn_wait (conn, &conn->wait, conn->send_fd, G_IO_OUT, conn_send_step, NULL);
          return;
        }
      if (n < 0 && conn->send_fd == conn->origin && _paddock_proxy_conn_retry_fresh (conn))
        return;
      if (n < 0)
        {
          g_autofree char *text = g_strdup_printf ("%s: %s",
                                                   conn->send_fd == conn->origin
                                                     ? "writing to the origin"
                                                     : "writing to the client",
                                                   g_strerror (errno));
          _paddock_proxy_conn_finish (conn, text);
          return;
        }
      conn->send_done += (gsize) n;
    }
  conn->send_next (conn, NULL);
}

void
_paddock_proxy_conn_send (Conn         *conn,
                          int           fd,
                          const void   *data,
                          gsize         len,
                          ConnStep      next)
{
  conn->send_fd = fd;
  conn->send_data = data;
  conn->send_len = len;
  conn->send_done = 0;
  conn->send_next = next;
  conn_send_step (conn, NULL);
}

/* ---------------------------------------------------------------------- */
/* Error responses                                                         */

/* libsoup's reason phrases; 431 (RFC 6585) is newer than libsoup 3.2's
 * table, which would call it "Unknown Error". */
static const char *
status_phrase (guint status)
{
  if (status == 431)
    return "Request Header Fields Too Large";
  return soup_status_get_phrase (status);
}

GBytes *
_paddock_proxy_error_response (guint       status,
                               const char *body)
{
  g_autoptr(GString) text = g_string_new (NULL);

  g_string_append_printf (text,
                          "HTTP/1.1 %u %s\r\n"
                          "Content-Type: text/plain; charset=utf-8\r\n"
                          "Content-Length: %" G_GSIZE_FORMAT "\r\n"
                          "Connection: close\r\n"
                          "Via: " VIA_VALUE "\r\n"
                          "\r\n"
                          "%s",
                          status, status_phrase (status), strlen (body), body);
  return g_string_free_to_bytes (g_steal_pointer (&text));
}

static void
drain_step (Conn     *conn,
            gpointer  data)
{
  char scratch[4096];

  for (;;)
    {
      ssize_t n = recv (conn->client, scratch, sizeof scratch, 0);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        {
          _paddock_proxy_conn_wait (conn, &conn->wait, conn->client, G_IO_IN, drain_step, NULL);
          return;
        }
      conn->drained += (gsize) MAX (n, 0);
      if (n <= 0 || conn->drained >= DRAIN_MAX_BYTES)
        {
          _paddock_proxy_conn_close (conn);
          return;
        }
    }
}

static void
error_written (Conn     *conn,
               gpointer  data)
{
  /* A lingering close: stop sending, then read (and discard) what the
   * client is still sending for a moment, so that closing with unread
   * data does not reset the connection and destroy the response before
   * the client has read it. Bounded in bytes and time. */
  shutdown (conn->client, SHUT_WR);
  conn_arm_timeout (conn, TIMEOUT_DRAIN, DRAIN_TIMEOUT_MS);
  drain_step (conn, NULL);
}

/* Records the verdict, answers with @status and @body, closes. */
void
_paddock_proxy_conn_respond_error (Conn              *conn,
                                   guint              status,
                                   PaddockNetVerdict  verdict,
                                   const char        *body)
{
  g_autofree char *reason = g_strchomp (g_strdup (body));

  _paddock_proxy_conn_clear_timeout (conn);
  _paddock_proxy_conn_complete_record (conn, verdict, reason);
  if (conn->socks)
    {
      /* A SOCKS5 client hears a reply code; before its greeting was
       * accepted there is none to give. */
      if (conn->socks_greeted)
        _paddock_proxy_socks_reply (conn, _paddock_proxy_socks_code_for_status (status, verdict),
                                    error_written);
      else
        _paddock_proxy_conn_close (conn);
      return;
    }
  g_clear_pointer (&conn->response, g_bytes_unref);
  conn->response = _paddock_proxy_error_response (status, body);
  _paddock_proxy_conn_send (conn, conn->client, g_bytes_get_data (conn->response, NULL),
                            g_bytes_get_size (conn->response), error_written);
}

/* ---------------------------------------------------------------------- */
/* Connected to the origin                                                 */

static void
upstream_written (Conn     *conn,
                  gpointer  data)
{
  if (!conn->upstream_counted)
    paddock_net_record_add_bytes (conn->record, conn->send_len, 0);
  conn->upstream_counted = TRUE;
  _paddock_proxy_conn_start_pumps (conn, NULL);
}

static void
conn_send_upstream (Conn     *conn,
                    gpointer  data)
{
  if (conn->upstream->len == 0)
    {
      _paddock_proxy_conn_start_pumps (conn, NULL);
      return;
    }
  _paddock_proxy_conn_send (conn, conn->origin, conn->upstream->str, conn->upstream->len, upstream_written);
}

void
_paddock_proxy_conn_connected (Conn *conn)
{
  static const char established[] = "HTTP/1.1 200 Connection established\r\n"
                                    "Via: " VIA_VALUE "\r\n\r\n";

  _paddock_proxy_conn_clear_timeout (conn);

  /* What the client sent after the head: a tunnel's first bytes, or the
   * beginning of a request body (never more than the body). */
  if (conn->head->len > conn->head_end)
    {
      gsize extra = conn->head->len - conn->head_end;

      if (conn->mode == MODE_FORWARD && !conn->body_unlimited)
        {
          extra = (gsize) MIN ((guint64) extra, conn->body_remaining);
          conn->body_remaining -= extra;
        }
      g_string_append_len (conn->upstream, (const char *) conn->head->data + conn->head_end,
                           (gssize) extra);
    }
  g_byte_array_set_size (conn->head, 0);

  if (conn->mode == MODE_TUNNEL && conn->socks)
    _paddock_proxy_socks_reply (conn, PADDOCK_SOCKS5_REPLY_SUCCEEDED, conn_send_upstream);
  else if (conn->mode == MODE_TUNNEL)
    _paddock_proxy_conn_send (conn, conn->client, established, strlen (established), conn_send_upstream);
  else
    conn_send_upstream (conn, NULL);
}

static void
connect_ready (Conn     *conn,
               gpointer  data)
{
  int error = 0;
  socklen_t len = sizeof error;

  if (getsockopt (conn->origin, SOL_SOCKET, SO_ERROR, &error, &len) != 0)
    error = errno;
  if (error != 0)
    {
      g_free (conn->connect_error);
      conn->connect_error = g_strdup (g_strerror (error));
      paddock_close_fd (&conn->origin);
      _paddock_proxy_conn_try_next_address (conn);
      return;
    }
  _paddock_proxy_conn_connected (conn);
}

void
_paddock_proxy_conn_try_next_address (Conn *conn)
{
  g_autoptr(GSocketAddress) address = NULL;
  struct sockaddr_storage native;
  g_autoptr(GError) error = NULL;

  while (conn->next_address != NULL)
    {
      address = g_inet_socket_address_new (conn->next_address->data, (guint16) conn->port);
      conn->next_address = conn->next_address->next;

      if (!g_socket_address_to_native (address, &native, sizeof native, &error))
        {
          g_free (conn->connect_error);
          conn->connect_error = g_strdup (error->message);
          g_clear_error (&error);
          g_clear_object (&address);
          continue;
        }
      conn->origin = socket (native.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (conn->origin >= 0 &&
          (connect (conn->origin, (struct sockaddr *) &native,
                    (socklen_t) g_socket_address_get_native_size (address)) == 0 ||
           errno == EINPROGRESS))
        {
          /* Loopback usually connects at once; elsewhere wait, bounded. */
          conn_arm_timeout (conn, TIMEOUT_CONNECT, CONNECT_TIMEOUT_MS);
          _paddock_proxy_conn_wait (conn, &conn->wait, conn->origin, G_IO_OUT, connect_ready, NULL);
          return;
        }
      g_free (conn->connect_error);
      conn->connect_error = g_strdup (g_strerror (errno));
      paddock_close_fd (&conn->origin);
      g_clear_object (&address);
    }

  {
    g_autofree char *body = g_strdup_printf ("Paddock proxy: cannot connect to %s:%u: %s\n",
                                             conn->host, conn->port,
                                             conn->connect_error ? conn->connect_error
                                                                 : "no address");
    _paddock_proxy_conn_respond_error (conn, 502, PADDOCK_NET_VERDICT_ERROR, body);
  }
}

/* ---------------------------------------------------------------------- */
/* The request head                                                        */

typedef struct {
  GString    *out;
  const char *connection;
  gboolean    dirty;
  guint       count;
} HeaderCopy;

static void
copy_header (const char *name,
             const char *value,
             gpointer    user_data)
{
  HeaderCopy *copy = user_data;

  copy->count++;
  if (!paddock_http_field_is_clean (name) || !paddock_http_field_is_clean (value))
    {
      copy->dirty = TRUE;
      return;
    }
  if (paddock_http_is_hop_by_hop (name, copy->connection))
    return;
  g_string_append_printf (copy->out, "%s: %s\r\n", name, value);
}

static void
count_header (const char *name,
              const char *value,
              gpointer    user_data)
{
  (*(guint *) user_data)++;
}

/* "host:port" with a mandatory port, IPv6 in brackets. */
/* Policy for the target in conn->host/port; then on to resolving. */
void
_paddock_proxy_conn_check_policy (Conn *conn)
{
  g_autoptr(PaddockDomainRules) rules = g_object_ref (conn->proxy->rules);
  g_autofree char *rule = NULL;
  g_autofree char *normal = NULL;
  PaddockRuleVerdict verdict;

  normal = paddock_domain_rules_normalize_host (conn->host, &conn->host_is_ip, NULL);
  if (normal != NULL)
    {
      g_free (conn->host);
      conn->host = g_steal_pointer (&normal);
    }
  paddock_net_record_set_target (conn->record, paddock_net_record_get_method (conn->record),
                                 conn->host, conn->port);

  /* The name and the port together: rules may name a port
   * ("github.com:22"); those without one allow the rule set's ports. */
  verdict = paddock_domain_rules_check_target (rules, conn->host, conn->port, &rule);
  switch (verdict)
    {
    case PADDOCK_RULE_VERDICT_INVALID:
      {
        g_autofree char *body = g_strdup_printf ("Paddock proxy: invalid host: %s\n", rule);
        _paddock_proxy_conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR, body);
      }
      return;

    case PADDOCK_RULE_VERDICT_DENY:
      {
        g_autofree char *body = g_strdup_printf ("Paddock proxy: %s is denied (%s)\n",
                                                 conn->host, rule);
        _paddock_proxy_conn_respond_error (conn, 403, PADDOCK_NET_VERDICT_DENIED, body);
      }
      return;

    case PADDOCK_RULE_VERDICT_DENY_PORT:
      {
        g_autofree char *body = g_strdup_printf ("Paddock proxy: %s:%u is denied (%s)\n",
                                                 conn->host, conn->port, rule);
        _paddock_proxy_conn_respond_error (conn, 403, PADDOCK_NET_VERDICT_DENIED, body);
      }
      return;

    case PADDOCK_RULE_VERDICT_ALLOW:
      break;

    default:
      g_assert_not_reached ();
    }

  paddock_net_record_set_verdict (conn->record, PADDOCK_NET_VERDICT_ALLOWED, NULL);
  _paddock_proxy_conn_resolve (conn);
}

static void
conn_handle_head (Conn *conn)
{
  g_autoptr(SoupMessageHeaders) headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_REQUEST);
  g_autofree char *method = NULL;
  g_autofree char *target = NULL;
  const char *data = (const char *) conn->head->data;
  SoupHTTPVersion version = SOUP_HTTP_1_0;
  gsize fields_end = conn->head_end;
  guint status;
  guint n_fields = 0;

  /* libsoup wants the head without its final empty line. */
  while (fields_end > 0 && (data[fields_end - 1] == '\n' || data[fields_end - 1] == '\r'))
    fields_end--;
  status = soup_headers_parse_request (data, (int) fields_end + 2, headers,
                                       &method, &target, &version);
  if (status != SOUP_STATUS_OK)
    {
      _paddock_proxy_conn_respond_error (conn, status == SOUP_STATUS_NOT_IMPLEMENTED ? 501 : 400,
                                         PADDOCK_NET_VERDICT_ERROR,
                                         "Paddock proxy: malformed request\n");
      return;
    }

  soup_message_headers_foreach (headers, count_header, &n_fields);
  if (n_fields > PADDOCK_PROXY_MAX_HEADERS)
    {
      _paddock_proxy_conn_respond_error (conn, 431, PADDOCK_NET_VERDICT_ERROR,
                                         "Paddock proxy: too many header fields\n");
      return;
    }

  paddock_net_record_set_target (conn->record, method, "", 0);

  if (strcmp (method, "CONNECT") == 0)
    {
      conn->mode = MODE_TUNNEL;
      if (!paddock_http_parse_authority (target, &conn->host, &conn->port))
        {
          _paddock_proxy_conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR,
                                             "Paddock proxy: CONNECT needs host:port\n");
          return;
        }
      conn->upstream = g_string_new (NULL);
      _paddock_proxy_conn_check_policy (conn);
      return;
    }

  if (target[0] == '/' || strcmp (target, "*") == 0)
    {
      _paddock_proxy_conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR,
                                         "Paddock proxy: this is a proxy; send absolute URIs "
                                         "(http://host/path) or CONNECT\n");
      return;
    }
  if (g_ascii_strncasecmp (target, "http://", 7) != 0)
    {
      _paddock_proxy_conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR,
                                         "Paddock proxy: only http:// URIs are forwarded; "
                                         "use CONNECT for anything else\n");
      return;
    }

  {
    g_autoptr(GUri) uri = NULL;
    g_autoptr(GString) up = g_string_new (NULL);
    const char *path, *query, *connection;
    const char *content_length = soup_message_headers_get_one (headers, "Content-Length");
    const char *transfer_encoding = soup_message_headers_get_one (headers, "Transfer-Encoding");
    HeaderCopy copy = { up, NULL, FALSE, 0 };
    int port;

    uri = g_uri_parse (target, G_URI_FLAGS_ENCODED | G_URI_FLAGS_SCHEME_NORMALIZE, NULL);
    if (uri == NULL || g_uri_get_host (uri) == NULL || g_uri_get_host (uri)[0] == '\0')
      {
        _paddock_proxy_conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR,
                                           "Paddock proxy: malformed URI\n");
        return;
      }
    if (version == SOUP_HTTP_1_1 && soup_message_headers_get_one (headers, "Host") == NULL)
      {
        _paddock_proxy_conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR,
                                           "Paddock proxy: missing Host header\n");
        return;
      }
    /* Both framings at once is the classic request-smuggling shape. */
    if (content_length != NULL && transfer_encoding != NULL)
      {
        _paddock_proxy_conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR,
                                           "Paddock proxy: Content-Length and Transfer-Encoding together\n");
        return;
      }
    if (transfer_encoding != NULL)
      conn->body_unlimited = TRUE;
    else if (content_length != NULL &&
             !paddock_http_parse_content_length (content_length, &conn->body_remaining))
      {
        _paddock_proxy_conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR,
                                           "Paddock proxy: bad Content-Length\n");
        return;
      }

    conn->mode = MODE_FORWARD;
    conn->host = g_strdup (g_uri_get_host (uri));
    port = g_uri_get_port (uri);
    conn->port = port > 0 ? (guint) port : 80;

    path = g_uri_get_path (uri);
    query = g_uri_get_query (uri);
    if (!paddock_http_field_is_clean (path) || (query != NULL && !paddock_http_field_is_clean (query)) ||
        strchr (path, ' ') != NULL || (query != NULL && strchr (query, ' ') != NULL))
      {
        _paddock_proxy_conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR,
                                           "Paddock proxy: malformed URI\n");
        return;
      }

    g_string_append_printf (up, "%s %s%s%s%s HTTP/1.%d\r\n", method,
                            path[0] == '/' ? "" : "/", path,
                            query != NULL ? "?" : "", query != NULL ? query : "",
                            version == SOUP_HTTP_1_1 ? 1 : 0);

    connection = soup_message_headers_get_list (headers, "Connection");
    copy.connection = connection;
    soup_message_headers_foreach (headers, copy_header, &copy);
    if (copy.dirty)
      {
        _paddock_proxy_conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR,
                                           "Paddock proxy: malformed header field\n");
        return;
      }

    /* The URI's authority is the target (RFC 9112 §3.2.2), whatever the
     * client's Host field said; the policy judged that authority. */
    {
      g_autofree char *normal = paddock_domain_rules_normalize_host (conn->host, NULL, NULL);
      const char *host = normal != NULL ? normal : conn->host;
      gboolean v6 = strchr (host, ':') != NULL;

      if (conn->port == 80)
        g_string_append_printf (up, "Host: %s%s%s\r\n", v6 ? "[" : "", host, v6 ? "]" : "");
      else
        g_string_append_printf (up, "Host: %s%s%s:%u\r\n", v6 ? "[" : "", host,
                                v6 ? "]" : "", conn->port);
    }
    {
      const char *via = soup_message_headers_get_list (headers, "Via");

      if (via != NULL && paddock_http_field_is_clean (via))
        g_string_append_printf (up, "Via: %s, " VIA_VALUE "\r\n", via);
      else
        g_string_append (up, "Via: " VIA_VALUE "\r\n");
    }
    /* An HTTP/1.1 request with its body framed by Content-Length leaves
     * the origin connection open for the next request (the response's
     * framing is followed to know where it ends); anything else closes. */
    conn->want_reuse = version == SOUP_HTTP_1_1 && !conn->body_unlimited;
    conn->is_head = strcmp (method, "HEAD") == 0;
    conn->resp_head = g_byte_array_new ();
    g_string_append (up, conn->want_reuse ? "\r\n" : "Connection: close\r\n\r\n");

    conn->upstream = g_string_new_len (up->str, (gssize) up->len);
  }

  _paddock_proxy_conn_check_policy (conn);
}
/* Reads what there is of the head; judges it once its end is there. */
void
_paddock_proxy_conn_read_head (Conn     *conn,
                               gpointer  data)
{
  gsize old_len;
  ssize_t n;

  for (;;)
    {
      old_len = conn->head->len;
      g_byte_array_set_size (conn->head, (guint) (old_len + HEAD_READ_CHUNK));
      n = recv (conn->client, conn->head->data + old_len, HEAD_READ_CHUNK, 0);
      g_byte_array_set_size (conn->head, (guint) (old_len + (gsize) MAX (n, 0)));

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        {
          _paddock_proxy_conn_wait (conn, &conn->wait, conn->client, G_IO_IN, _paddock_proxy_conn_read_head, NULL);
          return;
        }
      if (n < 0)
        {
          _paddock_proxy_conn_close (conn);
          return;
        }
      if (n == 0)
        {
          if (conn->head->len == 0)
            {
              /* Connected and left without a byte: nothing to record. */
              conn->record_done = TRUE;
              _paddock_proxy_conn_close (conn);
            }
          else
            {
              _paddock_proxy_conn_complete_record (conn, PADDOCK_NET_VERDICT_ERROR,
                                                   "the client closed before the request header ended");
              _paddock_proxy_conn_close (conn);
            }
          return;
        }

      /* A SOCKS5 greeting starts with 5, which no HTTP method does. */
      if (conn->head->data[0] == PADDOCK_SOCKS5_VERSION)
        {
          if (!conn->socks)
            paddock_net_record_set_target (conn->record, "SOCKS5", "", 0);
          conn->socks = TRUE;
          _paddock_proxy_conn_read_socks (conn);
          return;
        }

      conn->head_end = paddock_http_find_head_end (conn->head->data, conn->head->len,
                                      old_len > 2 ? old_len - 2 : 0);
      if (conn->head_end != 0 || conn->head->len > PADDOCK_PROXY_MAX_HEADER_BYTES)
        break;
    }

  if (conn->head_end == 0 || conn->head_end > PADDOCK_PROXY_MAX_HEADER_BYTES)
    {
      _paddock_proxy_conn_respond_error (conn, 431, PADDOCK_NET_VERDICT_ERROR,
                                         "Paddock proxy: request header larger than 32 KiB\n");
      return;
    }

  /* Bound the field count before handing the head to the parser. */
  if (paddock_http_count_lines (conn->head->data, conn->head_end) > PADDOCK_PROXY_MAX_HEADERS + 2)
    {
      _paddock_proxy_conn_respond_error (conn, 431, PADDOCK_NET_VERDICT_ERROR,
                                         "Paddock proxy: too many header fields\n");
      return;
    }

  _paddock_proxy_conn_clear_timeout (conn);
  conn_handle_head (conn);
}

/* Takes over the accepted @fd: a new connection, tracked by @proxy, reading
 * its head at once (the client usually sent it before we got here). */
void
_paddock_proxy_conn_start (PaddockProxy *proxy,
                           int           fd)
{
  Conn *conn = g_new0 (Conn, 1);

  conn->ref_count = 1;
  conn->proxy = proxy;
  conn->client = fd;
  conn->origin = -1;
  conn->cancellable = g_cancellable_new ();
  conn->head = g_byte_array_sized_new (HEAD_READ_CHUNK);
  conn->start_monotonic = g_get_monotonic_time ();
  conn->record = paddock_net_record_new (g_get_real_time (), "", "", 0);
  g_hash_table_add (proxy->connections, conn);  /* takes the reference */

  conn_arm_timeout (conn, TIMEOUT_HEAD, proxy->header_timeout_ms);
  {
    g_autoptr(Conn) ref = _paddock_proxy_conn_ref (conn);

    _paddock_proxy_conn_read_head (conn, NULL);
  }
}

/* Whether the current rules would still let @conn through; a connection
 * still reading its head has no target yet and is judged when it has. */
gboolean
_paddock_proxy_conn_still_allowed (Conn *conn)
{
  PaddockDomainRules *rules = conn->proxy->rules;

  if (conn->host == NULL || conn->mode == MODE_NONE)
    return TRUE;
  return paddock_domain_rules_check_target (rules, conn->host, conn->port, NULL) ==
         PADDOCK_RULE_VERDICT_ALLOW;
}
