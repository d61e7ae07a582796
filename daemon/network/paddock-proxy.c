/* paddock-proxy.c — the HTTP proxy that is a proxy-mode session's only way out
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The sandbox helper makes a listening TCP socket on 127.0.0.1 inside the
 * session's network namespace (which has nothing but loopback) and hands
 * its fd to the daemon; this object serves it. Whatever the session's
 * programs do — honour HTTP_PROXY or not — this socket is the only route
 * out, so every decision here is a boundary decision.
 *
 * Why not SoupServer: it cannot hand over a CONNECT request's socket for a
 * raw tunnel, and using it only for absolute-form requests would leave two
 * parsers with two sets of limits in front of the same boundary. So one
 * small state machine reads the request head itself, with hard limits
 * (bytes, header count, time), and lets libsoup's soup_headers_parse_request()
 * do the actual parsing of the request line and fields. After the head:
 *
 *  - CONNECT host:port  → policy, resolve, connect, "200 Connection
 *    established", then two pumps copy bytes until the tunnel ends.
 *  - absolute-form (GET http://host[:port]/path) → policy, resolve, connect,
 *    send a rewritten head (origin-form target, Host from the URI,
 *    hop-by-hop and Proxy-* fields removed, Via and "Connection: close"
 *    added), the request body (exactly Content-Length bytes, or the stream
 *    as it comes for chunked bodies), and stream the origin's response back
 *    unparsed until the origin closes. One request per client connection:
 *    keeping connections alive would need response framing here, and the
 *    cost of a new loopback connection per request is negligible.
 *
 * Every async call takes the connection's GCancellable; every buffer is
 * bounded (the head at 32 KiB, each pump at 16 KiB); the number of
 * connections is bounded; the head must arrive within a timeout.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libsoup/soup.h>
#include <string.h>
#include <sys/socket.h>

#include "paddock-proxy.h"

#define PUMP_BUFFER_SIZE    (16 * 1024)
#define HEAD_READ_CHUNK     4096
#define DRAIN_TIMEOUT_MS    1000
#define DRAIN_MAX_BYTES     (64 * 1024)
#define CONNECT_TIMEOUT_S   30
#define VIA_VALUE           "1.1 paddock"

struct _PaddockProxy
{
  GObject             parent_instance;

  GSocketService     *service;
  gulong              incoming_id;
  GSocketClient      *client;
  GResolver          *resolver;
  PaddockDomainRules *rules;
  GHashTable         *resolver_override;  /* normalised name → address text */
  GHashTable         *connections;        /* Conn* (one ref each) */

  guint               header_timeout_ms;
  guint               max_connections;

  gboolean            stopped;
};

G_DEFINE_FINAL_TYPE (PaddockProxy, paddock_proxy, G_TYPE_OBJECT)

enum {
  RECORD_ADDED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

typedef enum {
  MODE_NONE,
  MODE_TUNNEL,
  MODE_FORWARD,
} ConnMode;

typedef enum {
  TIMEOUT_NONE,
  TIMEOUT_HEAD,
  TIMEOUT_DRAIN,
} TimeoutKind;

typedef struct _Conn Conn;

typedef struct
{
  Conn          *conn;       /* the pump is part of it */
  gboolean       up;         /* client → origin */
  GInputStream  *in;
  GOutputStream *out;
  GSocket       *out_socket;
  guint8        *buffer;
  gboolean       limited;
  guint64        remaining;
  gboolean       done;
} Pump;

struct _Conn
{
  guint               ref_count;
  PaddockProxy       *proxy;         /* unowned; NULL once closed */
  GSocketConnection  *client;
  GSocketConnection  *origin;
  GCancellable       *cancellable;
  GCancellable       *head_cancellable;
  GSource            *timeout_source;
  TimeoutKind         timeout_kind;
  gboolean            head_timed_out;
  gboolean            closed;
  gboolean            record_done;

  GByteArray         *head;
  gsize               head_end;
  PaddockNetRecord   *record;
  gint64              start_monotonic;

  ConnMode            mode;
  char               *host;          /* normalised */
  guint               port;
  gboolean            host_is_ip;
  gboolean            trust_any_address;
  GString            *upstream;      /* what goes to the origin first */
  gboolean            body_unlimited;
  guint64             body_remaining;
  GList              *addresses;     /* GInetAddress* */
  GList              *next_address;
  char               *connect_error;
  gsize               drained;
  GBytes             *response;      /* an error response being written */

  Pump                up;
  Pump                down;
};

static void conn_close           (Conn *conn);
static void conn_read_head       (Conn *conn);
static void conn_try_next_address (Conn *conn);
static void pump_read            (Pump *pump);

/* ---------------------------------------------------------------------- */
/* Connection lifetime                                                     */

static Conn *
conn_ref (Conn *conn)
{
  g_assert (conn->ref_count > 0);
  conn->ref_count++;
  return conn;
}

static void
conn_unref (Conn *conn)
{
  g_assert (conn->ref_count > 0);
  if (--conn->ref_count > 0)
    return;

  /* Every async operation holds a reference, so none is pending here and
   * the streams can be closed synchronously. */
  g_assert (conn->proxy == NULL);
  g_assert (conn->timeout_source == NULL);
  if (conn->origin != NULL)
    g_io_stream_close (G_IO_STREAM (conn->origin), NULL, NULL);
  if (conn->client != NULL)
    g_io_stream_close (G_IO_STREAM (conn->client), NULL, NULL);
  g_clear_object (&conn->origin);
  g_clear_object (&conn->client);
  g_clear_object (&conn->cancellable);
  g_clear_object (&conn->head_cancellable);
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
  g_free (conn);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Conn, conn_unref)

static void
conn_clear_timeout (Conn *conn)
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
  Conn *conn = user_data;
  TimeoutKind kind = conn->timeout_kind;

  /* The source holds no reference: conn_clear_timeout() destroys it
   * before the connection can go away. */
  g_clear_pointer (&conn->timeout_source, g_source_unref);
  conn->timeout_kind = TIMEOUT_NONE;

  switch (kind)
    {
    case TIMEOUT_HEAD:
      conn->head_timed_out = TRUE;
      g_cancellable_cancel (conn->head_cancellable);
      break;
    case TIMEOUT_DRAIN:
      {
        g_autoptr(Conn) ref = conn_ref (conn);
        conn_close (conn);
      }
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
  conn_clear_timeout (conn);
  conn->timeout_kind = kind;
  conn->timeout_source = g_timeout_source_new (timeout_ms);
  g_source_set_callback (conn->timeout_source, conn_timeout_cb, conn, NULL);
  g_source_attach (conn->timeout_source, g_main_context_get_thread_default ());
}

static void
conn_complete_record (Conn              *conn,
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

  g_signal_emit (proxy, signals[RECORD_ADDED], 0, conn->record);
}

static void
shutdown_connection (GSocketConnection *connection)
{
  if (connection != NULL)
    g_socket_shutdown (g_socket_connection_get_socket (connection), TRUE, TRUE, NULL);
}

/* Ends the connection now: cancels whatever is pending, shuts both
 * sockets down (peers see the end at once), and drops the proxy's
 * reference; the fds close when the last pending callback returns. */
static void
conn_close (Conn *conn)
{
  g_autoptr(Conn) ref = conn_ref (conn);
  PaddockProxy *proxy = conn->proxy;

  if (conn->closed)
    return;
  conn->closed = TRUE;

  conn_complete_record (conn, paddock_net_record_get_verdict (conn->record),
                        conn->mode == MODE_NONE ? "connection closed" : NULL);
  conn_clear_timeout (conn);
  g_cancellable_cancel (conn->head_cancellable);
  g_cancellable_cancel (conn->cancellable);
  shutdown_connection (conn->client);
  shutdown_connection (conn->origin);

  conn->proxy = NULL;
  if (proxy != NULL)
    g_hash_table_remove (proxy->connections, conn);
}

/* The tunnel or forwarded request ran: the verdict stays "allowed", with
 * the error text if it ended badly. */
static void
conn_finish (Conn       *conn,
             const char *error_text)
{
  if (!conn->record_done)
    {
      const char *text = error_text;

      if (text == NULL)
        text = paddock_net_record_get_error (conn->record);
      conn_complete_record (conn, PADDOCK_NET_VERDICT_ALLOWED, text);
    }
  conn_close (conn);
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

static GBytes *
error_response (guint       status,
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
drain_read_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(Conn) conn = user_data;
  gssize n;

  n = g_input_stream_read_finish (G_INPUT_STREAM (source), result, NULL);
  if (conn->closed)
    return;

  conn->drained += (gsize) MAX (n, 0);
  if (n <= 0 || conn->drained >= DRAIN_MAX_BYTES)
    {
      conn_close (conn);
      return;
    }

  g_input_stream_read_async (G_INPUT_STREAM (source), conn->up.buffer, PUMP_BUFFER_SIZE,
                             G_PRIORITY_DEFAULT, conn->cancellable, drain_read_cb,
                             conn_ref (conn));
}

static void
error_written_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autoptr(Conn) conn = user_data;
  gboolean ok;

  ok = g_output_stream_write_all_finish (G_OUTPUT_STREAM (source), result, NULL, NULL);
  if (conn->closed)
    return;
  if (!ok)
    {
      conn_close (conn);
      return;
    }

  /* A lingering close: stop sending, then read (and discard) what the
   * client is still sending for a moment, so that closing with unread
   * data does not reset the connection and destroy the response before
   * the client has read it. Bounded in bytes and time. */
  g_socket_shutdown (g_socket_connection_get_socket (conn->client), FALSE, TRUE, NULL);
  conn_arm_timeout (conn, TIMEOUT_DRAIN, DRAIN_TIMEOUT_MS);
  if (conn->up.buffer == NULL)
    conn->up.buffer = g_malloc (PUMP_BUFFER_SIZE);
  g_input_stream_read_async (g_io_stream_get_input_stream (G_IO_STREAM (conn->client)),
                             conn->up.buffer, PUMP_BUFFER_SIZE, G_PRIORITY_DEFAULT,
                             conn->cancellable, drain_read_cb, conn_ref (conn));
}

/* Records the verdict, answers with @status and @body, closes. */
static void
conn_respond_error (Conn              *conn,
                    guint              status,
                    PaddockNetVerdict  verdict,
                    const char        *body)
{
  g_autoptr(GBytes) response = error_response (status, body);
  g_autofree char *reason = g_strchomp (g_strdup (body));

  conn_clear_timeout (conn);
  conn_complete_record (conn, verdict, reason);
  g_output_stream_write_all_async (g_io_stream_get_output_stream (G_IO_STREAM (conn->client)),
                                   g_bytes_get_data (response, NULL),
                                   g_bytes_get_size (response),
                                   G_PRIORITY_DEFAULT, conn->cancellable,
                                   error_written_cb, conn_ref (conn));
  /* write_all_async does not copy: the bytes live as long as the conn. */
  g_clear_pointer (&conn->response, g_bytes_unref);
  conn->response = g_steal_pointer (&response);
}

/* ---------------------------------------------------------------------- */
/* Pumps: bounded copies in one direction                                 */

static void
pump_write_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(Conn) conn = user_data;
  g_autoptr(GError) error = NULL;
  gsize written = 0;
  Pump *pump;

  g_output_stream_write_all_finish (G_OUTPUT_STREAM (source), result, &written, &error);
  if (conn->closed)
    return;

  pump = (G_OUTPUT_STREAM (source) == conn->up.out) ? &conn->up : &conn->down;
  if (error != NULL)
    {
      g_autofree char *text = g_strdup_printf ("%s: %s",
                                               pump->up ? "writing to the origin"
                                                        : "writing to the client",
                                               error->message);
      conn_finish (conn, text);
      return;
    }

  if (pump->limited)
    {
      pump->remaining -= MIN (pump->remaining, written);
      if (pump->remaining == 0)
        {
          /* The request body is complete; what the client sends after it
           * (a pipelined request) is not read: one request per connection. */
          pump->done = TRUE;
          return;
        }
    }

  pump_read (pump);
}

static void
pump_read_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(Conn) conn = user_data;
  g_autoptr(GError) error = NULL;
  Pump *pump;
  gssize n;

  n = g_input_stream_read_finish (G_INPUT_STREAM (source), result, &error);
  if (conn->closed)
    return;

  pump = (G_INPUT_STREAM (source) == conn->up.in) ? &conn->up : &conn->down;
  if (n < 0)
    {
      g_autofree char *text = g_strdup_printf ("%s: %s",
                                               pump->up ? "reading from the client"
                                                        : "reading from the origin",
                                               error->message);
      conn_finish (conn, text);
      return;
    }

  if (n == 0)
    {
      pump->done = TRUE;
      if (conn->mode == MODE_FORWARD)
        {
          /* The origin's close ends the response (we asked for
           * "Connection: close"); a client that half-closes after its
           * request just stops the upward pump. */
          if (!pump->up)
            conn_finish (conn, NULL);
          else if (pump->limited && pump->remaining > 0)
            conn_finish (conn, "the client closed before the request body ended");
          return;
        }

      /* A tunnel passes a half-close on, and ends when both sides have. */
      g_socket_shutdown (pump->out_socket, FALSE, TRUE, NULL);
      if (conn->up.done && conn->down.done)
        conn_finish (conn, NULL);
      return;
    }

  if (pump->up)
    paddock_net_record_add_bytes (conn->record, (guint64) n, 0);
  else
    paddock_net_record_add_bytes (conn->record, 0, (guint64) n);

  g_output_stream_write_all_async (pump->out, pump->buffer, (gsize) n, G_PRIORITY_DEFAULT,
                                   conn->cancellable, pump_write_cb, conn_ref (conn));
}

static void
pump_read (Pump *pump)
{
  Conn *conn = pump->conn;
  gsize size = PUMP_BUFFER_SIZE;

  if (pump->limited)
    size = (gsize) MIN ((guint64) PUMP_BUFFER_SIZE, pump->remaining);
  g_assert (size > 0);

  g_input_stream_read_async (pump->in, pump->buffer, size, G_PRIORITY_DEFAULT,
                             conn->cancellable, pump_read_cb, conn_ref (conn));
}

static void
pump_init (Conn     *conn,
           Pump     *pump,
           gboolean  up)
{
  GIOStream *from = G_IO_STREAM (up ? conn->client : conn->origin);
  GSocketConnection *to = up ? conn->origin : conn->client;

  pump->conn = conn;
  pump->up = up;
  pump->in = g_io_stream_get_input_stream (from);
  pump->out = g_io_stream_get_output_stream (G_IO_STREAM (to));
  pump->out_socket = g_socket_connection_get_socket (to);
  if (pump->buffer == NULL)
    pump->buffer = g_malloc (PUMP_BUFFER_SIZE);
}

static void
conn_start_pumps (Conn *conn)
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
    pump_read (&conn->up);
  pump_read (&conn->down);
}

/* ---------------------------------------------------------------------- */
/* Connected to the origin                                                 */

static void
upstream_written_cb (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  g_autoptr(Conn) conn = user_data;
  g_autoptr(GError) error = NULL;
  gsize written = 0;

  g_output_stream_write_all_finish (G_OUTPUT_STREAM (source), result, &written, &error);
  if (conn->closed)
    return;
  if (error != NULL)
    {
      g_autofree char *text = g_strdup_printf ("writing to the origin: %s", error->message);
      conn_finish (conn, text);
      return;
    }

  paddock_net_record_add_bytes (conn->record, written, 0);
  conn_start_pumps (conn);
}

static void
conn_send_upstream (Conn *conn)
{
  GOutputStream *out = g_io_stream_get_output_stream (G_IO_STREAM (conn->origin));

  if (conn->upstream->len == 0)
    {
      conn_start_pumps (conn);
      return;
    }
  g_output_stream_write_all_async (out, conn->upstream->str, conn->upstream->len,
                                   G_PRIORITY_DEFAULT, conn->cancellable,
                                   upstream_written_cb, conn_ref (conn));
}

static void
established_written_cb (GObject      *source,
                        GAsyncResult *result,
                        gpointer      user_data)
{
  g_autoptr(Conn) conn = user_data;
  g_autoptr(GError) error = NULL;

  g_output_stream_write_all_finish (G_OUTPUT_STREAM (source), result, NULL, &error);
  if (conn->closed)
    return;
  if (error != NULL)
    {
      g_autofree char *text = g_strdup_printf ("writing to the client: %s", error->message);
      conn_finish (conn, text);
      return;
    }
  conn_send_upstream (conn);
}

static void
conn_connected (Conn *conn)
{
  static const char established[] = "HTTP/1.1 200 Connection established\r\n"
                                    "Via: " VIA_VALUE "\r\n\r\n";

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

  if (conn->mode == MODE_TUNNEL)
    g_output_stream_write_all_async (g_io_stream_get_output_stream (G_IO_STREAM (conn->client)),
                                     established, strlen (established), G_PRIORITY_DEFAULT,
                                     conn->cancellable, established_written_cb, conn_ref (conn));
  else
    conn_send_upstream (conn);
}

static void
connect_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(Conn) conn = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocketConnection) origin = NULL;

  origin = g_socket_client_connect_finish (G_SOCKET_CLIENT (source), result, &error);
  if (conn->closed)
    return;

  if (origin == NULL)
    {
      g_free (conn->connect_error);
      conn->connect_error = g_strdup (error->message);
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
        {
          g_autofree char *body = g_strdup_printf ("Paddock proxy: connecting to %s:%u timed out\n",
                                                   conn->host, conn->port);
          conn_respond_error (conn, 504, PADDOCK_NET_VERDICT_ERROR, body);
          return;
        }
      conn_try_next_address (conn);
      return;
    }

  /* The client's timeout bounded the connect; a tunnel may idle. */
  g_socket_set_timeout (g_socket_connection_get_socket (origin), 0);
  conn->origin = g_steal_pointer (&origin);
  conn_connected (conn);
}

static void
conn_try_next_address (Conn *conn)
{
  g_autoptr(GSocketAddress) address = NULL;
  PaddockProxy *proxy = conn->proxy;

  if (conn->next_address == NULL)
    {
      g_autofree char *body = g_strdup_printf ("Paddock proxy: cannot connect to %s:%u: %s\n",
                                               conn->host, conn->port,
                                               conn->connect_error ? conn->connect_error
                                                                   : "no address");
      conn_respond_error (conn, 502, PADDOCK_NET_VERDICT_ERROR, body);
      return;
    }

  address = g_inet_socket_address_new (conn->next_address->data, (guint16) conn->port);
  conn->next_address = conn->next_address->next;
  g_socket_client_connect_async (proxy->client, G_SOCKET_CONNECTABLE (address),
                                 conn->cancellable, connect_cb, conn_ref (conn));
}

/* Which resolved addresses a name may lead to. A session's names resolve
 * in the daemon's network namespace, where 127.0.0.1 is the *host's*
 * loopback (other users' dev servers, the daemon's own forwarders) and
 * 169.254.169.254 is a cloud metadata service. A name that resolves there
 * (by accident or by DNS rebinding) must not become a way in; an IP literal
 * the policy lists explicitly, or the test resolver override, may. */
static gboolean
address_is_reachable (GInetAddress *address)
{
  return !(g_inet_address_get_is_loopback (address) ||
           g_inet_address_get_is_link_local (address) ||
           g_inet_address_get_is_any (address) ||
           g_inet_address_get_is_multicast (address));
}

static void
conn_use_addresses (Conn  *conn,
                    GList *addresses)
{
  gboolean refused = FALSE;

  for (GList *l = addresses; l != NULL; l = l->next)
    {
      GInetAddress *address = l->data;

      if (conn->trust_any_address || address_is_reachable (address))
        conn->addresses = g_list_append (conn->addresses, g_object_ref (address));
      else
        refused = TRUE;
    }

  if (conn->addresses == NULL)
    {
      g_autofree char *body = NULL;

      if (refused)
        {
          body = g_strdup_printf ("Paddock proxy: %s resolves only to loopback, link-local "
                                  "or multicast addresses, which are never reachable by name\n",
                                  conn->host);
          conn_respond_error (conn, 403, PADDOCK_NET_VERDICT_DENIED, body);
        }
      else
        {
          body = g_strdup_printf ("Paddock proxy: %s has no address\n", conn->host);
          conn_respond_error (conn, 502, PADDOCK_NET_VERDICT_ERROR, body);
        }
      return;
    }

  conn->next_address = conn->addresses;
  conn_try_next_address (conn);
}

static void
resolve_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(Conn) conn = user_data;
  g_autoptr(GError) error = NULL;
  GList *addresses;

  addresses = g_resolver_lookup_by_name_finish (G_RESOLVER (source), result, &error);
  if (conn->closed)
    {
      g_resolver_free_addresses (addresses);
      return;
    }
  if (addresses == NULL)
    {
      g_autofree char *body = g_strdup_printf ("Paddock proxy: cannot resolve %s: %s\n",
                                               conn->host, error->message);
      conn_respond_error (conn, 502, PADDOCK_NET_VERDICT_ERROR, body);
      return;
    }
  conn_use_addresses (conn, addresses);
  g_resolver_free_addresses (addresses);
}

static void
conn_resolve (Conn *conn)
{
  PaddockProxy *proxy = conn->proxy;

  if (conn->host_is_ip)
    {
      g_autoptr(GInetAddress) address = g_inet_address_new_from_string (conn->host);
      GList single = { address, NULL, NULL };

      g_assert (address != NULL);
      /* Only a literal listing allows a literal (paddock-domain-rules.c). */
      conn->trust_any_address = TRUE;
      conn_use_addresses (conn, &single);
      return;
    }

  if (proxy->resolver_override != NULL)
    {
      const char *text = g_hash_table_lookup (proxy->resolver_override, conn->host);
      g_autoptr(GInetAddress) address = text ? g_inet_address_new_from_string (text) : NULL;
      GList single = { address, NULL, NULL };

      /* The override replaces the resolver entirely: a test never falls
       * through to real DNS. */
      if (address == NULL)
        {
          g_autofree char *body = g_strdup_printf ("Paddock proxy: cannot resolve %s "
                                                   "(resolver override)\n", conn->host);
          conn_respond_error (conn, 502, PADDOCK_NET_VERDICT_ERROR, body);
          return;
        }
      conn->trust_any_address = TRUE;
      conn_use_addresses (conn, &single);
      return;
    }

  g_resolver_lookup_by_name_async (proxy->resolver, conn->host, conn->cancellable,
                                   resolve_cb, conn_ref (conn));
}

/* ---------------------------------------------------------------------- */
/* The request head                                                        */

/* Hop-by-hop fields (RFC 9110 §7.6.1) and the proxy's own: they describe
 * the client↔proxy connection, not the request. Transfer-Encoding stays,
 * because the body is passed on in the framing the client chose. */
static gboolean
is_hop_by_hop (const char *name,
               const char *connection_header)
{
  static const char * const fields[] = {
    "Connection", "Keep-Alive", "TE", "Trailer", "Upgrade", "Host", "Via",
  };

  if (g_ascii_strncasecmp (name, "Proxy-", 6) == 0)
    return TRUE;
  for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
    if (g_ascii_strcasecmp (name, fields[i]) == 0)
      return TRUE;
  /* …and whatever the client's Connection field names. */
  return connection_header != NULL && soup_header_contains (connection_header, name);
}

static gboolean
field_is_clean (const char *text)
{
  for (const char *p = text; *p != '\0'; p++)
    if (*p == '\r' || *p == '\n')
      return FALSE;
  return TRUE;
}

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
  if (!field_is_clean (name) || !field_is_clean (value))
    {
      copy->dirty = TRUE;
      return;
    }
  if (is_hop_by_hop (name, copy->connection))
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
static gboolean
parse_authority (const char  *authority,
                 char       **out_host,
                 guint       *out_port)
{
  const char *colon;
  guint64 port;
  char *end = NULL;

  if (authority[0] == '[')
    {
      const char *close = strchr (authority, ']');

      if (close == NULL || close[1] != ':')
        return FALSE;
      colon = close + 1;
    }
  else
    {
      colon = strrchr (authority, ':');
      if (colon == NULL || memchr (authority, ':', (gsize) (colon - authority)) != NULL)
        return FALSE;
    }

  if (colon == authority || !g_ascii_isdigit (colon[1]) || strlen (colon + 1) > 5)
    return FALSE;
  port = g_ascii_strtoull (colon + 1, &end, 10);
  if (*end != '\0' || port == 0 || port > 65535)
    return FALSE;

  *out_host = g_strndup (authority, (gsize) (colon - authority));
  *out_port = (guint) port;
  return TRUE;
}

static gboolean
parse_content_length (const char *text,
                      guint64    *out_length)
{
  guint64 value = 0;

  if (text == NULL || *text == '\0')
    return FALSE;
  for (const char *p = text; *p != '\0'; p++)
    {
      if (!g_ascii_isdigit (*p) || value > (G_MAXINT64 - 9) / 10)
        return FALSE;
      value = value * 10 + (guint64) (*p - '0');
    }
  *out_length = value;
  return TRUE;
}

/* Policy for the target in conn->host/port; then on to resolving. */
static void
conn_check_policy (Conn *conn)
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

  verdict = paddock_domain_rules_check_host (rules, conn->host, &rule);
  switch (verdict)
    {
    case PADDOCK_RULE_VERDICT_INVALID:
      {
        g_autofree char *body = g_strdup_printf ("Paddock proxy: invalid host: %s\n", rule);
        conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR, body);
      }
      return;

    case PADDOCK_RULE_VERDICT_DENY:
      {
        g_autofree char *body = g_strdup_printf ("Paddock proxy: %s is denied (%s)\n",
                                                 conn->host, rule);
        conn_respond_error (conn, 403, PADDOCK_NET_VERDICT_DENIED, body);
      }
      return;

    case PADDOCK_RULE_VERDICT_ALLOW:
      break;

    default:
      g_assert_not_reached ();
    }

  if (!paddock_domain_rules_port_allowed (rules, conn->port))
    {
      g_autofree char *body = g_strdup_printf ("Paddock proxy: %s:%u is denied (port %u is not "
                                               "in the allowed ports)\n",
                                               conn->host, conn->port, conn->port);
      conn_respond_error (conn, 403, PADDOCK_NET_VERDICT_DENIED, body);
      return;
    }

  paddock_net_record_set_verdict (conn->record, PADDOCK_NET_VERDICT_ALLOWED, NULL);
  conn_resolve (conn);
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
      conn_respond_error (conn, status == SOUP_STATUS_NOT_IMPLEMENTED ? 501 : 400,
                          PADDOCK_NET_VERDICT_ERROR,
                          "Paddock proxy: malformed request\n");
      return;
    }

  soup_message_headers_foreach (headers, count_header, &n_fields);
  if (n_fields > PADDOCK_PROXY_MAX_HEADERS)
    {
      conn_respond_error (conn, 431, PADDOCK_NET_VERDICT_ERROR,
                          "Paddock proxy: too many header fields\n");
      return;
    }

  paddock_net_record_set_target (conn->record, method, "", 0);

  if (strcmp (method, "CONNECT") == 0)
    {
      conn->mode = MODE_TUNNEL;
      if (!parse_authority (target, &conn->host, &conn->port))
        {
          conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR,
                              "Paddock proxy: CONNECT needs host:port\n");
          return;
        }
      conn->upstream = g_string_new (NULL);
      conn_check_policy (conn);
      return;
    }

  if (target[0] == '/' || strcmp (target, "*") == 0)
    {
      conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR,
                          "Paddock proxy: this is a proxy; send absolute URIs "
                          "(http://host/path) or CONNECT\n");
      return;
    }
  if (g_ascii_strncasecmp (target, "http://", 7) != 0)
    {
      conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR,
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
        conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR,
                            "Paddock proxy: malformed URI\n");
        return;
      }
    if (version == SOUP_HTTP_1_1 && soup_message_headers_get_one (headers, "Host") == NULL)
      {
        conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR,
                            "Paddock proxy: missing Host header\n");
        return;
      }
    /* Both framings at once is the classic request-smuggling shape. */
    if (content_length != NULL && transfer_encoding != NULL)
      {
        conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR,
                            "Paddock proxy: Content-Length and Transfer-Encoding together\n");
        return;
      }
    if (transfer_encoding != NULL)
      conn->body_unlimited = TRUE;
    else if (content_length != NULL &&
             !parse_content_length (content_length, &conn->body_remaining))
      {
        conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR,
                            "Paddock proxy: bad Content-Length\n");
        return;
      }

    conn->mode = MODE_FORWARD;
    conn->host = g_strdup (g_uri_get_host (uri));
    port = g_uri_get_port (uri);
    conn->port = port > 0 ? (guint) port : 80;

    path = g_uri_get_path (uri);
    query = g_uri_get_query (uri);
    if (!field_is_clean (path) || (query != NULL && !field_is_clean (query)) ||
        strchr (path, ' ') != NULL || (query != NULL && strchr (query, ' ') != NULL))
      {
        conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR,
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
        conn_respond_error (conn, 400, PADDOCK_NET_VERDICT_ERROR,
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

      if (via != NULL && field_is_clean (via))
        g_string_append_printf (up, "Via: %s, " VIA_VALUE "\r\n", via);
      else
        g_string_append (up, "Via: " VIA_VALUE "\r\n");
    }
    g_string_append (up, "Connection: close\r\n\r\n");

    conn->upstream = g_string_new_len (up->str, (gssize) up->len);
  }

  conn_check_policy (conn);
}

/* Index just past the empty line that ends the head ("\r\n\r\n", or the
 * bare "\n\n" some clients send), searching from @from; 0 if not there. */
static gsize
find_head_end (const guint8 *data,
               gsize         len,
               gsize         from)
{
  for (gsize i = from; i < len; i++)
    {
      if (data[i] != '\n')
        continue;
      if (i + 1 < len && data[i + 1] == '\n')
        return i + 2;
      if (i + 2 < len && data[i + 1] == '\r' && data[i + 2] == '\n')
        return i + 3;
    }
  return 0;
}

static void
head_read_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(Conn) conn = user_data;
  g_autoptr(GError) error = NULL;
  gsize old_len = conn->head->len - HEAD_READ_CHUNK;
  gsize lines = 0;
  gssize n;

  n = g_input_stream_read_finish (G_INPUT_STREAM (source), result, &error);
  if (conn->closed)
    return;

  g_byte_array_set_size (conn->head, (guint) (old_len + (gsize) MAX (n, 0)));

  if (n < 0)
    {
      if (conn->head_timed_out)
        conn_respond_error (conn, 408, PADDOCK_NET_VERDICT_ERROR,
                            "Paddock proxy: the request header did not arrive in time\n");
      else
        conn_close (conn);
      return;
    }
  if (n == 0)
    {
      if (conn->head->len == 0)
        {
          /* Connected and left without a byte: nothing to record. */
          conn->record_done = TRUE;
          conn_close (conn);
        }
      else
        {
          conn_complete_record (conn, PADDOCK_NET_VERDICT_ERROR,
                                "the client closed before the request header ended");
          conn_close (conn);
        }
      return;
    }

  conn->head_end = find_head_end (conn->head->data, conn->head->len, old_len > 2 ? old_len - 2 : 0);
  if (conn->head_end == 0 && conn->head->len <= PADDOCK_PROXY_MAX_HEADER_BYTES)
    {
      conn_read_head (conn);
      return;
    }
  if (conn->head_end == 0 || conn->head_end > PADDOCK_PROXY_MAX_HEADER_BYTES)
    {
      conn_respond_error (conn, 431, PADDOCK_NET_VERDICT_ERROR,
                          "Paddock proxy: request header larger than 32 KiB\n");
      return;
    }

  /* Bound the field count before handing the head to the parser. */
  for (gsize i = 0; i < conn->head_end; i++)
    if (conn->head->data[i] == '\n')
      lines++;
  if (lines > PADDOCK_PROXY_MAX_HEADERS + 2)
    {
      conn_respond_error (conn, 431, PADDOCK_NET_VERDICT_ERROR,
                          "Paddock proxy: too many header fields\n");
      return;
    }

  conn_clear_timeout (conn);
  conn_handle_head (conn);
}

static void
conn_read_head (Conn *conn)
{
  gsize old_len = conn->head->len;

  g_byte_array_set_size (conn->head, (guint) (old_len + HEAD_READ_CHUNK));
  g_input_stream_read_async (g_io_stream_get_input_stream (G_IO_STREAM (conn->client)),
                             conn->head->data + old_len, HEAD_READ_CHUNK, G_PRIORITY_DEFAULT,
                             conn->head_cancellable, head_read_cb, conn_ref (conn));
}

/* ---------------------------------------------------------------------- */
/* Accepting                                                               */

static void
reject_busy (PaddockProxy      *self,
             GSocketConnection *connection)
{
  g_autoptr(GBytes) response = error_response (503, "Paddock proxy: too many connections\n");
  g_autoptr(PaddockNetRecord) record = paddock_net_record_new (g_get_real_time (), "", "", 0);
  GSocket *socket = g_socket_connection_get_socket (connection);

  /* A fresh socket's send buffer always has room for this: no waiting,
   * and nothing is held for a client that the limit just turned away. */
  g_socket_send_with_blocking (socket, g_bytes_get_data (response, NULL),
                               g_bytes_get_size (response), FALSE, NULL, NULL);
  g_socket_shutdown (socket, TRUE, TRUE, NULL);
  g_io_stream_close (G_IO_STREAM (connection), NULL, NULL);

  paddock_net_record_set_verdict (record, PADDOCK_NET_VERDICT_ERROR, "too many connections");
  g_signal_emit (self, signals[RECORD_ADDED], 0, record);
}

static gboolean
incoming_cb (GSocketService    *service,
             GSocketConnection *connection,
             GObject           *source_object,
             gpointer           user_data)
{
  PaddockProxy *self = user_data;
  Conn *conn;

  if (self->stopped)
    return FALSE;

  if (g_hash_table_size (self->connections) >= self->max_connections)
    {
      reject_busy (self, connection);
      return TRUE;
    }

  conn = g_new0 (Conn, 1);
  conn->ref_count = 1;
  conn->proxy = self;
  conn->client = g_object_ref (connection);
  conn->cancellable = g_cancellable_new ();
  conn->head_cancellable = g_cancellable_new ();
  conn->head = g_byte_array_new ();
  conn->start_monotonic = g_get_monotonic_time ();
  conn->record = paddock_net_record_new (g_get_real_time (), "", "", 0);
  g_hash_table_add (self->connections, conn);  /* takes the reference */

  conn_arm_timeout (conn, TIMEOUT_HEAD, self->header_timeout_ms);
  conn_read_head (conn);
  return TRUE;
}

/* ---------------------------------------------------------------------- */
/* The object                                                              */

static void
conn_table_unref (gpointer data)
{
  conn_unref (data);
}

/* Whether the current rules would still let @conn through; a connection
 * still reading its head has no target yet and is judged when it has. */
static gboolean
conn_still_allowed (Conn *conn)
{
  PaddockDomainRules *rules = conn->proxy->rules;

  if (conn->host == NULL || conn->mode == MODE_NONE)
    return TRUE;
  return paddock_domain_rules_check_host (rules, conn->host, NULL) == PADDOCK_RULE_VERDICT_ALLOW &&
         paddock_domain_rules_port_allowed (rules, conn->port);
}

static void
close_connections (PaddockProxy *self,
                   const char   *reason,
                   gboolean      only_denied)
{
  g_autoptr(GPtrArray) conns = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer key;

  if (self->connections == NULL)
    return;
  g_hash_table_iter_init (&iter, self->connections);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    if (!only_denied || !conn_still_allowed (key))
      g_ptr_array_add (conns, conn_ref (key));
  for (guint i = 0; i < conns->len; i++)
    {
      Conn *conn = g_ptr_array_index (conns, i);

      if (!conn->record_done)
        conn_complete_record (conn, paddock_net_record_get_verdict (conn->record), reason);
      conn_close (conn);
      conn_unref (conn);
    }
}

/**
 * paddock_proxy_close_denied_connections:
 *
 * Ends every open request and tunnel whose target the current rules no
 * longer allow (their records are completed with @reason), and keeps
 * accepting: tunnels are judged when they open, so a policy that takes
 * access away needs this to take it away from them too.
 */
void
paddock_proxy_close_denied_connections (PaddockProxy *self,
                                        const char   *reason)
{
  g_return_if_fail (PADDOCK_IS_PROXY (self));
  close_connections (self, reason, TRUE);
}

/**
 * paddock_proxy_stop:
 *
 * Stops accepting, closes the listening socket and ends every connection
 * (records are completed with the reason). Idempotent; dispose calls it.
 */
void
paddock_proxy_stop (PaddockProxy *self)
{
  g_return_if_fail (PADDOCK_IS_PROXY (self));

  if (!self->stopped)
    {
      self->stopped = TRUE;
      if (self->service != NULL)
        {
          g_socket_service_stop (self->service);
          g_socket_listener_close (G_SOCKET_LISTENER (self->service));
        }
    }

  close_connections (self, "the proxy stopped", FALSE);
}

static void
paddock_proxy_dispose (GObject *object)
{
  PaddockProxy *self = PADDOCK_PROXY (object);

  paddock_proxy_stop (self);
  if (self->service != NULL)
    g_clear_signal_handler (&self->incoming_id, self->service);
  g_clear_object (&self->service);
  g_clear_object (&self->client);
  g_clear_object (&self->resolver);
  g_clear_object (&self->rules);
  g_clear_pointer (&self->resolver_override, g_hash_table_unref);
  g_clear_pointer (&self->connections, g_hash_table_unref);

  G_OBJECT_CLASS (paddock_proxy_parent_class)->dispose (object);
}

static void
paddock_proxy_class_init (PaddockProxyClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_proxy_dispose;

  /**
   * PaddockProxy::record-added:
   * @record: the finished request or tunnel
   *
   * Emitted once for each request, tunnel or refused connection, when it
   * has finished. The proxy keeps no records: the receiver stores them
   * (the daemon numbers and journals them, PaddockNetJournal).
   */
  signals[RECORD_ADDED] = g_signal_new ("record-added", G_TYPE_FROM_CLASS (klass),
                                        G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                        G_TYPE_NONE, 1, PADDOCK_TYPE_NET_RECORD);
}

static void
paddock_proxy_init (PaddockProxy *self)
{
  self->header_timeout_ms = PADDOCK_PROXY_DEFAULT_HEADER_TIMEOUT_MS;
  self->max_connections = PADDOCK_PROXY_DEFAULT_MAX_CONNECTIONS;
  self->connections = g_hash_table_new_full (NULL, NULL, conn_table_unref, NULL);
}

/**
 * paddock_proxy_new:
 * @listen_fd: a listening SOCK_STREAM socket; always taken over (closed on
 *   failure too)
 * @rules: the policy (referenced, not copied: see paddock_proxy_set_rules())
 *
 * Starts serving @listen_fd on the thread-default main context.
 */
PaddockProxy *
paddock_proxy_new (int                  listen_fd,
                   PaddockDomainRules  *rules,
                   GError             **error)
{
  g_autoptr(PaddockProxy) self = NULL;
  g_autoptr(GSocket) socket = NULL;
  int accepting = 0, type = 0;
  socklen_t len = sizeof accepting;

  g_return_val_if_fail (PADDOCK_IS_DOMAIN_RULES (rules), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (listen_fd < 0 ||
      getsockopt (listen_fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0 ||
      accepting == 0 ||
      (len = sizeof type, getsockopt (listen_fd, SOL_SOCKET, SO_TYPE, &type, &len)) != 0 ||
      type != SOCK_STREAM)
    {
      if (listen_fd >= 0)
        close (listen_fd);
      g_set_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_INVALID_ARGUMENT,
                   "The proxy needs a listening stream socket");
      return NULL;
    }
  /* The fd came from another process: make sure no child inherits it. */
  fcntl (listen_fd, F_SETFD, FD_CLOEXEC);

  socket = g_socket_new_from_fd (listen_fd, error);
  if (socket == NULL)
    {
      close (listen_fd);
      return NULL;
    }

  self = g_object_new (PADDOCK_TYPE_PROXY, NULL);
  self->rules = g_object_ref (rules);
  self->resolver = g_resolver_get_default ();
  self->client = g_socket_client_new ();
  /* The daemon's own proxy settings must not apply to the origin hop,
   * and a connect must not wait forever. */
  g_socket_client_set_enable_proxy (self->client, FALSE);
  g_socket_client_set_timeout (self->client, CONNECT_TIMEOUT_S);

  self->service = g_socket_service_new ();
  if (!g_socket_listener_add_socket (G_SOCKET_LISTENER (self->service), socket, NULL, error))
    return NULL;
  self->incoming_id = g_signal_connect (self->service, "incoming",
                                        G_CALLBACK (incoming_cb), self);
  g_socket_service_start (self->service);

  return g_steal_pointer (&self);
}

/**
 * paddock_proxy_set_rules:
 *
 * Replaces the policy; requests whose head arrives from now on are judged
 * by @rules (tunnels already open stay open).
 */
void
paddock_proxy_set_rules (PaddockProxy       *self,
                         PaddockDomainRules *rules)
{
  g_return_if_fail (PADDOCK_IS_PROXY (self));
  g_return_if_fail (PADDOCK_IS_DOMAIN_RULES (rules));

  g_set_object (&self->rules, rules);
}

PaddockDomainRules *
paddock_proxy_dup_rules (PaddockProxy *self)
{
  g_return_val_if_fail (PADDOCK_IS_PROXY (self), NULL);

  return g_object_ref (self->rules);
}

/**
 * paddock_proxy_set_resolver_override:
 * @name_to_address: (nullable): host name → IP literal; %NULL restores
 *   the system resolver
 *
 * For tests: names are looked up only in this table (never in DNS), and
 * the addresses it gives are trusted even when they are loopback.
 */
void
paddock_proxy_set_resolver_override (PaddockProxy *self,
                                     GHashTable   *name_to_address)
{
  GHashTableIter iter;
  gpointer key, value;

  g_return_if_fail (PADDOCK_IS_PROXY (self));

  g_clear_pointer (&self->resolver_override, g_hash_table_unref);
  if (name_to_address == NULL)
    return;

  self->resolver_override = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_hash_table_iter_init (&iter, name_to_address);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      char *name = paddock_domain_rules_normalize_host (key, NULL, NULL);

      if (name != NULL)
        g_hash_table_replace (self->resolver_override, name, g_strdup (value));
    }
}

void
paddock_proxy_set_header_timeout (PaddockProxy *self,
                                  guint         timeout_ms)
{
  g_return_if_fail (PADDOCK_IS_PROXY (self));
  g_return_if_fail (timeout_ms > 0);

  self->header_timeout_ms = timeout_ms;
}

void
paddock_proxy_set_max_connections (PaddockProxy *self,
                                   guint         max_connections)
{
  g_return_if_fail (PADDOCK_IS_PROXY (self));
  g_return_if_fail (max_connections > 0);

  self->max_connections = max_connections;
}

guint
paddock_proxy_get_n_connections (PaddockProxy *self)
{
  g_return_val_if_fail (PADDOCK_IS_PROXY (self), 0);

  return g_hash_table_size (self->connections);
}
