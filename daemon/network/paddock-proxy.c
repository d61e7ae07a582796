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
 *  - absolute-form (GET http://host[:port]/path) → policy, then a kept
 *    connection to that host and port if there is one, else resolve and
 *    connect; send a rewritten head (origin-form target, Host from the
 *    URI, hop-by-hop and Proxy-* fields removed, Via added), the request
 *    body (exactly Content-Length bytes, or the stream as it comes for
 *    chunked bodies), and stream the origin's response back with its head
 *    rewritten to "Connection: close". One request per client connection.
 *    The origin connection outlives it when it can: an HTTP/1.1 request
 *    whose body is framed by Content-Length goes without "Connection:
 *    close", the response's framing (none, Content-Length, chunked, or
 *    until close) is followed as it streams past, and a connection whose
 *    response ended cleanly joins a small pool (POOL_MAX_IDLE, each for
 *    POOL_IDLE_USEC, dropped when the origin closes it or the policy
 *    changes). Profiling showed why: with a new origin connection per
 *    request, TCP set-up and tear-down on loopback (connect, close: the
 *    kernel handles both ends in the caller's context) was most of the
 *    proxy thread's time. A kept connection the origin dropped just as the
 *    request went out is retried once on a new one, when no byte of the
 *    response came and the whole request had been sent in one piece.
 *
 * Names are resolved here (there is no resolver inside); what a name
 * resolved to is kept for NAME_CACHE_USEC (at most NAME_CACHE_MAX names),
 * so a burst of tunnels to one host costs one lookup, and every answer,
 * kept or fresh, is judged by address_is_reachable() when it is used.
 *
 * Every wait is a GSource of the connection's (the fd becoming readable
 * or writable, a timer) and name resolution takes the connection's
 * GCancellable: closing a connection destroys its sources and cancels the
 * lookup, so nothing of it runs afterwards. Every buffer is bounded (the
 * head at 32 KiB, each pump at 16 KiB); the number of connections is
 * bounded; the head must arrive within a timeout.
 *
 * Why plain non-blocking fds rather than GSocketConnection and GIO's
 * async stream calls: on GLib 2.74 each of those costs a GTask, a source
 * and (via g_source_set_ready_time) an eventfd write to wake the very
 * thread that is already running; per proxied request that was ~34
 * system calls, 5 of them such wakeups and 8 more wrapping each accepted
 * socket in a GSocket. Here a request is accept4, recv, socket, connect,
 * send, recv, send and two closes, plus the main loop's polls.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <libsoup/soup.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-proxy.h"

#define PUMP_BUFFER_SIZE    (16 * 1024)
#define HEAD_READ_CHUNK     4096
#define DRAIN_TIMEOUT_MS    1000
#define DRAIN_MAX_BYTES     (64 * 1024)
#define CONNECT_TIMEOUT_MS  30000
#define ACCEPT_BATCH        32     /* connections taken per wake-up, so accepting cannot starve the rest */
#define ACCEPT_PAUSE_MS     100    /* out of fds: wait instead of spinning on a readable listener */
#define PUMP_ROUNDS         8      /* copies per wake-up, so one busy tunnel cannot starve the rest */
#define VIA_VALUE           "1.1 paddock"
#define POOL_MAX_IDLE       32     /* idle origin connections kept, all origins together */
#define POOL_IDLE_USEC      (30 * G_USEC_PER_SEC)  /* …each for at most this long */
#define NAME_CACHE_MAX      256    /* names whose addresses are kept… */
#define NAME_CACHE_USEC     (30 * G_USEC_PER_SEC)  /* …each for this long (GResolver gives no TTL) */
#define MAX_CHUNK_LINE      4096   /* a chunk-size line, extensions included */
#define MAX_TRAILER_BYTES   (32 * 1024)

struct _PaddockProxy
{
  GObject             parent_instance;

  int                 listen_fd;
  GSource            *accept_source;      /* readable listener, or the pause after EMFILE */
  GResolver          *resolver;
  PaddockDomainRules *rules;
  GHashTable         *resolver_override;  /* normalised name → address text */
  GHashTable         *connections;        /* Conn* (one ref each) */

  guint               header_timeout_ms;
  guint               max_connections;

  GQueue              idle;               /* Idle*: kept origin connections, newest last */
  GHashTable         *names;              /* normalised name → CachedName*: recent lookups */
  guint               n_lookups;          /* lookups sent to the resolver */

  gboolean            stopped;
};

/* What a name resolved to, and until when that is used without asking
 * again. The addresses are judged (address_is_reachable) at each use, so
 * a cached answer is never trusted more than a fresh one. */
typedef struct
{
  GList  *addresses;  /* GInetAddress* */
  gint64  expires;
} CachedName;

static void
cached_name_free (gpointer data)
{
  CachedName *cached = data;

  g_resolver_free_addresses (cached->addresses);
  g_free (cached);
}

/* An origin connection kept open after a complete response, for the next
 * request to the same host and port (which the policy judges first). */
typedef struct
{
  PaddockProxy *proxy;
  char         *host;
  guint         port;
  int           fd;
  gint64        since;
  GSource      *watch;    /* readable: the origin closed it (or spoke out of turn) */
} Idle;

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
  TIMEOUT_CONNECT,
  TIMEOUT_DRAIN,
} TimeoutKind;

typedef struct _Conn Conn;
typedef void (*ConnStep) (Conn *conn, gpointer data);

/* One pending wait: @fd readable or writable, then @step runs. The
 * source holds no reference: closing the connection destroys it. */
typedef struct
{
  Conn     *conn;
  GSource  *source;
  ConnStep  step;
  gpointer  data;
} Wait;

typedef struct
{
  Conn          *conn;       /* the pump is part of it */
  gboolean       up;         /* client → origin */
  int            in;
  int            out;
  Wait           wait;
  guint8        *buffer;
  const guint8  *send_from;  /* buffer, or the rewritten response head */
  gsize          pending;    /* read, not yet written */
  gsize          offset;     /* …starting here */
  gboolean       limited;
  guint64        remaining;  /* bytes still to read when limited */
  gboolean       done;       /* no more to read */
} Pump;

struct _Conn
{
  guint               ref_count;
  PaddockProxy       *proxy;         /* unowned; NULL once closed */
  int                 client;
  int                 origin;        /* -1 until connecting */
  GCancellable       *cancellable;   /* the name lookup */
  Wait                wait;          /* the one pending step outside the pumps */
  GSource            *timeout_source;
  TimeoutKind         timeout_kind;
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

  /* Keeping the origin connection: asked for (an HTTP/1.1 request whose
   * body is framed by Content-Length), whether this one came from the
   * pool, and the response's framing as it streams past. */
  gboolean            want_reuse;
  gboolean            reused;
  gboolean            no_pool;          /* a retry after a stale kept connection */
  gboolean            upstream_counted;
  gboolean            is_head;          /* HEAD: the response has no body */
  GByteArray         *resp_head;        /* the response head being read; NULL once passed */
  GByteArray         *resp_out;         /* the rewritten head going to the client */
  guint64             resp_bytes;       /* bytes of response read from the origin */
  enum { BODY_NONE, BODY_LENGTH, BODY_CHUNKED, BODY_UNTIL_CLOSE } body_kind;
  guint64             body_left;        /* BODY_LENGTH: bytes; BODY_CHUNKED: of this chunk */
  enum { CHUNK_SIZE, CHUNK_EXT, CHUNK_DATA, CHUNK_DATA_END, CHUNK_TRAILER } chunk_state;
  gsize               chunk_line;       /* bytes of the current size or trailer line */
  gsize               trailer_bytes;
  gboolean            chunk_digits;
  gboolean            resp_complete;
  gboolean            resp_reusable;

  /* A write in progress outside the pumps: what, where, and then what. */
  int                 send_fd;
  const guint8       *send_data;
  gsize               send_len;
  gsize               send_done;
  ConnStep            send_next;

  Pump                up;
  Pump                down;
};

static void conn_close           (Conn *conn);
static void conn_read_head       (Conn *conn, gpointer data);
static void conn_try_next_address (Conn *conn);
static void pump_run             (Conn *conn, gpointer data);
static void conn_resolve         (Conn *conn);
static gboolean conn_retry_fresh (Conn *conn);
static gboolean response_take    (Conn *conn, Pump *pump, gsize n);
static void conn_response_done   (Conn *conn);

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
wait_clear (Wait *wait)
{
  if (wait->source != NULL)
    {
      g_source_destroy (wait->source);
      g_clear_pointer (&wait->source, g_source_unref);
    }
}

/* ---------------------------------------------------------------------- */
/* Kept origin connections                                                 */

static void
idle_free (Idle *idle)
{
  if (idle->watch != NULL)
    {
      g_source_destroy (idle->watch);
      g_source_unref (idle->watch);
    }
  paddock_close_fd (&idle->fd);
  g_free (idle->host);
  g_free (idle);
}

static gboolean
idle_readable_cb (gint         fd,
                  GIOCondition condition,
                  gpointer     user_data)
{
  Idle *idle = user_data;

  /* Closed by the origin, or bytes nobody asked for: either way unusable. */
  g_queue_remove (&idle->proxy->idle, idle);
  g_clear_pointer (&idle->watch, g_source_unref);
  idle_free (idle);
  return G_SOURCE_REMOVE;
}

static void
pool_put (PaddockProxy *self,
          const char   *host,
          guint         port,
          int           fd)
{
  Idle *idle = g_new0 (Idle, 1);

  idle->proxy = self;
  idle->host = g_strdup (host);
  idle->port = port;
  idle->fd = fd;
  idle->since = g_get_monotonic_time ();
  idle->watch = g_unix_fd_source_new (fd, G_IO_IN);
  g_source_set_callback (idle->watch, (GSourceFunc) (void (*) (void)) idle_readable_cb, idle, NULL);
  g_source_attach (idle->watch, g_main_context_get_thread_default ());
  g_queue_push_tail (&self->idle, idle);
  while (self->idle.length > POOL_MAX_IDLE)
    idle_free (g_queue_pop_head (&self->idle));
}

/* A kept connection to @host:@port (the newest), or -1. */
static int
pool_take (PaddockProxy *self,
           const char   *host,
           guint         port)
{
  gint64 now = g_get_monotonic_time ();

  for (GList *l = self->idle.tail; l != NULL; )
    {
      Idle *idle = l->data;
      GList *prev = l->prev;

      if (now - idle->since > POOL_IDLE_USEC)
        {
          g_queue_delete_link (&self->idle, l);
          idle_free (idle);
        }
      else if (idle->port == port && strcmp (idle->host, host) == 0)
        {
          int fd = idle->fd;

          idle->fd = -1;
          g_queue_delete_link (&self->idle, l);
          idle_free (idle);
          return fd;
        }
      l = prev;
    }
  return -1;
}

static void
pool_clear (PaddockProxy *self)
{
  Idle *idle;

  while ((idle = g_queue_pop_head (&self->idle)) != NULL)
    idle_free (idle);
}

static void
conn_unref (Conn *conn)
{
  g_assert (conn->ref_count > 0);
  if (--conn->ref_count > 0)
    return;

  g_assert (conn->proxy == NULL);
  g_assert (conn->timeout_source == NULL);
  wait_clear (&conn->wait);
  wait_clear (&conn->up.wait);
  wait_clear (&conn->down.wait);
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

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Conn, conn_unref)

static gboolean
wait_ready_cb (gint         fd,
               GIOCondition condition,
               gpointer     user_data)
{
  Wait *wait = user_data;
  g_autoptr(Conn) conn = conn_ref (wait->conn);

  g_clear_pointer (&wait->source, g_source_unref);
  if (!conn->closed)
    wait->step (conn, wait->data);
  return G_SOURCE_REMOVE;
}

/* Runs @step once @fd has @condition (or an error or hang-up: the step's
 * own recv or send then says which). */
static void
conn_wait (Conn         *conn,
           Wait         *wait,
           int           fd,
           GIOCondition  condition,
           ConnStep      step,
           gpointer      data)
{
  g_assert (wait->source == NULL);
  wait->conn = conn;
  wait->step = step;
  wait->data = data;
  wait->source = g_unix_fd_source_new (fd, condition);
  g_source_set_callback (wait->source, (GSourceFunc) (void (*) (void)) wait_ready_cb, wait, NULL);
  g_source_attach (wait->source, g_main_context_get_thread_default ());
}

static void conn_respond_error (Conn              *conn,
                                guint              status,
                                PaddockNetVerdict  verdict,
                                const char        *body);

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
  g_autoptr(Conn) conn = conn_ref (user_data);
  TimeoutKind kind = conn->timeout_kind;

  /* The source holds no reference: conn_clear_timeout() destroys it
   * before the connection can go away. */
  g_clear_pointer (&conn->timeout_source, g_source_unref);
  conn->timeout_kind = TIMEOUT_NONE;

  switch (kind)
    {
    case TIMEOUT_HEAD:
      wait_clear (&conn->wait);
      conn_respond_error (conn, 408, PADDOCK_NET_VERDICT_ERROR,
                          "Paddock proxy: the request header did not arrive in time\n");
      break;
    case TIMEOUT_CONNECT:
      {
        g_autofree char *body = g_strdup_printf ("Paddock proxy: connecting to %s:%u timed out\n",
                                                 conn->host, conn->port);

        wait_clear (&conn->wait);
        paddock_close_fd (&conn->origin);
        conn_respond_error (conn, 504, PADDOCK_NET_VERDICT_ERROR, body);
      }
      break;
    case TIMEOUT_DRAIN:
      conn_close (conn);
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

/* Ends the connection now: destroys every pending wait and timer, cancels
 * a lookup in flight, closes both sockets (peers see the end at once) and
 * drops the proxy's reference. */
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
  wait_clear (&conn->wait);
  wait_clear (&conn->up.wait);
  wait_clear (&conn->down.wait);
  g_cancellable_cancel (conn->cancellable);
  paddock_close_fd (&conn->client);
  paddock_close_fd (&conn->origin);

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
          conn_wait (conn, &conn->wait, conn->send_fd, G_IO_OUT, conn_send_step, NULL);
          return;
        }
      if (n < 0 && conn->send_fd == conn->origin && conn_retry_fresh (conn))
        return;
      if (n < 0)
        {
          g_autofree char *text = g_strdup_printf ("%s: %s",
                                                   conn->send_fd == conn->origin
                                                     ? "writing to the origin"
                                                     : "writing to the client",
                                                   g_strerror (errno));
          conn_finish (conn, text);
          return;
        }
      conn->send_done += (gsize) n;
    }
  conn->send_next (conn, NULL);
}

static void
conn_send (Conn         *conn,
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
          conn_wait (conn, &conn->wait, conn->client, G_IO_IN, drain_step, NULL);
          return;
        }
      conn->drained += (gsize) MAX (n, 0);
      if (n <= 0 || conn->drained >= DRAIN_MAX_BYTES)
        {
          conn_close (conn);
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
static void
conn_respond_error (Conn              *conn,
                    guint              status,
                    PaddockNetVerdict  verdict,
                    const char        *body)
{
  g_autofree char *reason = g_strchomp (g_strdup (body));

  conn_clear_timeout (conn);
  conn_complete_record (conn, verdict, reason);
  g_clear_pointer (&conn->response, g_bytes_unref);
  conn->response = error_response (status, body);
  conn_send (conn, conn->client, g_bytes_get_data (conn->response, NULL),
             g_bytes_get_size (conn->response), error_written);
}

/* ---------------------------------------------------------------------- */
/* Pumps: bounded copies in one direction                                 */

/* A kept origin connection that the origin had closed (or closes as we
 * send): if not one byte of the response came and the whole request was
 * in what we sent, it is sent again on a new connection. */
static gboolean
conn_retry_fresh (Conn *conn)
{
  if (!conn->reused || conn->resp_bytes > 0 || conn->body_unlimited || conn->body_remaining > 0)
    return FALSE;

  wait_clear (&conn->up.wait);
  wait_clear (&conn->down.wait);
  paddock_close_fd (&conn->origin);
  conn->up.pending = conn->down.pending = 0;
  conn->up.done = conn->down.done = FALSE;
  conn->reused = FALSE;
  conn->no_pool = TRUE;
  conn_resolve (conn);
  return TRUE;
}

/* The origin ended before the response did. */
static void
conn_response_cut (Conn       *conn,
                   const char *what)
{
  if (conn_retry_fresh (conn))
    return;
  if (conn->resp_head != NULL && conn->down.pending == 0)
    {
      /* Nothing of a final response reached the client: say so. */
      g_autofree char *body = g_strdup_printf ("Paddock proxy: %s:%u %s before its response header "
                                               "ended\n", conn->host, conn->port, what);
      conn_respond_error (conn, 502, PADDOCK_NET_VERDICT_ERROR, body);
      return;
    }
  conn_finish (conn, conn->body_kind == BODY_UNTIL_CLOSE ? NULL
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
        conn_finish (conn, "the client closed before the request body ended");
      return;
    }

  /* A tunnel passes a half-close on, and ends when both sides have. */
  shutdown (pump->out, SHUT_WR);
  if (conn->up.done && conn->down.done)
    conn_finish (conn, NULL);
}

static void
pump_failed (Pump       *pump,
             gboolean    writing)
{
  g_autofree char *text = NULL;

  if (pump->conn->mode == MODE_FORWARD && pump->up == writing && conn_retry_fresh (pump->conn))
    return;

  text = g_strdup_printf ("%s: %s",
                                           writing ? (pump->up ? "writing to the origin"
                                                               : "writing to the client")
                                                   : (pump->up ? "reading from the client"
                                                               : "reading from the origin"),
                                           g_strerror (errno));
  conn_finish (pump->conn, text);
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
              conn_wait (conn, &pump->wait, pump->out, G_IO_OUT, pump_run, pump);
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

      if (!pump->up && conn->resp_complete)
        {
          conn_response_done (conn);
          return;
        }
      if (pump->done)
        return;  /* the request body is complete: what follows is not read */
      if (round >= PUMP_ROUNDS)
        {
          conn_wait (conn, &pump->wait, pump->in, G_IO_IN, pump_run, pump);
          return;
        }

      n = recv (pump->in, pump->buffer,
                pump->limited ? (gsize) MIN ((guint64) PUMP_BUFFER_SIZE, pump->remaining)
                              : PUMP_BUFFER_SIZE, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        {
          conn_wait (conn, &pump->wait, pump->in, G_IO_IN, pump_run, pump);
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

static void
conn_start_pumps (Conn     *conn,
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
  if (!conn->closed)
    pump_run (conn, &conn->down);
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
  conn_start_pumps (conn, NULL);
}

static void
conn_send_upstream (Conn     *conn,
                    gpointer  data)
{
  if (conn->upstream->len == 0)
    {
      conn_start_pumps (conn, NULL);
      return;
    }
  conn_send (conn, conn->origin, conn->upstream->str, conn->upstream->len, upstream_written);
}

static void
conn_connected (Conn *conn)
{
  static const char established[] = "HTTP/1.1 200 Connection established\r\n"
                                    "Via: " VIA_VALUE "\r\n\r\n";

  conn_clear_timeout (conn);

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
    conn_send (conn, conn->client, established, strlen (established), conn_send_upstream);
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
      conn_try_next_address (conn);
      return;
    }
  conn_connected (conn);
}

static void
conn_try_next_address (Conn *conn)
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
          conn_wait (conn, &conn->wait, conn->origin, G_IO_OUT, connect_ready, NULL);
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
    conn_respond_error (conn, 502, PADDOCK_NET_VERDICT_ERROR, body);
  }
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
  /* Kept for the next requests to the same name; bounded: expired ones
   * go first, then (still full) all of them. */
  {
    PaddockProxy *proxy = conn->proxy;
    CachedName *cached = g_new0 (CachedName, 1);
    gint64 now = g_get_monotonic_time ();

    if (g_hash_table_size (proxy->names) >= NAME_CACHE_MAX)
      {
        GHashTableIter iter;
        gpointer value;

        g_hash_table_iter_init (&iter, proxy->names);
        while (g_hash_table_iter_next (&iter, NULL, &value))
          if (((CachedName *) value)->expires <= now)
            g_hash_table_iter_remove (&iter);
        if (g_hash_table_size (proxy->names) >= NAME_CACHE_MAX)
          g_hash_table_remove_all (proxy->names);
      }
    cached->expires = now + NAME_CACHE_USEC;
    cached->addresses = g_list_copy_deep (addresses, (GCopyFunc) (void (*) (void)) g_object_ref, NULL);
    g_hash_table_replace (proxy->names, g_strdup (conn->host), cached);
  }
  conn_use_addresses (conn, addresses);
  g_resolver_free_addresses (addresses);
}

static void
conn_resolve (Conn *conn)
{
  PaddockProxy *proxy = conn->proxy;

  /* A kept connection to the same host and port needs neither a lookup
   * nor a connect. */
  if (conn->mode == MODE_FORWARD && conn->want_reuse && !conn->no_pool)
    {
      int fd = pool_take (proxy, conn->host, conn->port);

      if (fd >= 0)
        {
          conn->origin = fd;
          conn->reused = TRUE;
          conn_connected (conn);
          return;
        }
    }

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

  {
    CachedName *cached = g_hash_table_lookup (proxy->names, conn->host);

    if (cached != NULL && cached->expires > g_get_monotonic_time ())
      {
        conn_use_addresses (conn, cached->addresses);
        return;
      }
  }
  proxy->n_lookups++;
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
    /* An HTTP/1.1 request with its body framed by Content-Length leaves
     * the origin connection open for the next request (the response's
     * framing is followed to know where it ends); anything else closes. */
    conn->want_reuse = version == SOUP_HTTP_1_1 && !conn->body_unlimited;
    conn->is_head = strcmp (method, "HEAD") == 0;
    conn->resp_head = g_byte_array_new ();
    g_string_append (up, conn->want_reuse ? "\r\n" : "Connection: close\r\n\r\n");

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
/* ---------------------------------------------------------------------- */
/* The origin's response: its framing, so that the origin connection can  */
/* be kept, and its head, so that the client hears "Connection: close"    */

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

/* How many of @len body bytes belong to the response; sets resp_complete
 * at its end. Framing that makes no sense ends the response where it is,
 * and the connection is then not kept. */
static gsize
body_accept (Conn         *conn,
             const guint8 *data,
             gsize         len)
{
  gsize i = 0;

  switch (conn->body_kind)
    {
    case BODY_NONE:
      conn->resp_complete = TRUE;
      return 0;

    case BODY_UNTIL_CLOSE:
      return len;

    case BODY_LENGTH:
      i = (gsize) MIN ((guint64) len, conn->body_left);
      conn->body_left -= i;
      conn->resp_complete = conn->body_left == 0;
      return i;

    case BODY_CHUNKED:
    default:
      break;
    }

  while (i < len && !conn->resp_complete)
    {
      guint8 c = data[i];

      switch (conn->chunk_state)
        {
        case CHUNK_SIZE:
        case CHUNK_EXT:
          if (c == '\n')
            {
              if (!conn->chunk_digits)
                goto broken;
              conn->chunk_state = conn->body_left == 0 ? CHUNK_TRAILER : CHUNK_DATA;
              conn->chunk_digits = FALSE;
              conn->chunk_line = 0;
            }
          else if (conn->chunk_state == CHUNK_SIZE && hex_value (c) >= 0)
            {
              if (conn->body_left > (G_MAXUINT64 >> 4))
                goto broken;
              conn->body_left = (conn->body_left << 4) | (guint64) hex_value (c);
              conn->chunk_digits = TRUE;
            }
          else if (conn->chunk_state == CHUNK_SIZE && c != '\r' && c != ';' && c != ' ' && c != '\t')
            goto broken;
          else if (c != '\r')
            conn->chunk_state = CHUNK_EXT;
          if (++conn->chunk_line > MAX_CHUNK_LINE)
            goto broken;
          i++;
          break;

        case CHUNK_DATA:
          {
            gsize take = (gsize) MIN ((guint64) (len - i), conn->body_left);

            i += take;
            conn->body_left -= take;
            if (conn->body_left == 0)
              conn->chunk_state = CHUNK_DATA_END;
          }
          break;

        case CHUNK_DATA_END:
          if (c == '\n')
            conn->chunk_state = CHUNK_SIZE;
          else if (c != '\r')
            goto broken;
          i++;
          break;

        case CHUNK_TRAILER:
        default:
          if (c == '\n')
            {
              conn->resp_complete = conn->chunk_line == 0;
              conn->chunk_line = 0;
            }
          else if (c != '\r')
            conn->chunk_line++;
          if (++conn->trailer_bytes > MAX_TRAILER_BYTES)
            goto broken;
          i++;
          break;
        }
    }
  return i;

broken:
  conn->resp_reusable = FALSE;
  conn->resp_complete = TRUE;
  return len;
}

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
  guint status = 0;
  gsize used;

  while (fields_end > 0 && (data[fields_end - 1] == '\n' || data[fields_end - 1] == '\r'))
    fields_end--;
  if (first_end == NULL ||
      !soup_headers_parse_response (data, (int) fields_end + 2, headers, &version, &status, NULL))
    {
      conn_respond_error (conn, 502, PADDOCK_NET_VERDICT_ERROR,
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
    conn->body_kind = BODY_NONE;
  else if (soup_message_headers_get_one (headers, "Transfer-Encoding") != NULL)
    conn->body_kind = soup_message_headers_get_encoding (headers) == SOUP_ENCODING_CHUNKED
                      ? BODY_CHUNKED : BODY_UNTIL_CLOSE;
  else if (length != NULL && parse_content_length (length, &conn->body_left))
    conn->body_kind = BODY_LENGTH;
  else
    conn->body_kind = BODY_UNTIL_CLOSE;
  if (conn->body_kind == BODY_UNTIL_CLOSE || status == 101)
    {
      conn->body_kind = BODY_UNTIL_CLOSE;
      conn->resp_reusable = FALSE;
    }

  copy.out = conn->resp_out;
  copy.connection = connection;
  g_byte_array_append (conn->resp_out, conn->resp_head->data,
                       (guint) (first_end - data + 1));
  soup_message_headers_foreach (headers, copy_response_header, &copy);
  g_byte_array_append (conn->resp_out, (const guint8 *) "Connection: close\r\n\r\n", 21);

  used = body_accept (conn, conn->resp_head->data + end, conn->resp_head->len - end);
  if (used < conn->resp_head->len - end)
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
      gsize used = body_accept (conn, pump->buffer, n);

      if (used < n)
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
      gsize end = find_head_end (conn->resp_head->data, conn->resp_head->len, 0);

      if (end == 0 || end > PADDOCK_PROXY_MAX_HEADER_BYTES)
        {
          if (end == 0 && conn->resp_head->len <= PADDOCK_PROXY_MAX_HEADER_BYTES)
            break;  /* more to come */
          conn_respond_error (conn, 502, PADDOCK_NET_VERDICT_ERROR,
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
      wait_clear (&conn->up.wait);
      pool_put (proxy, conn->host, conn->port, conn->origin);
      conn->origin = -1;
    }
  conn_finish (conn, NULL);
}

/* Reads what there is of the head; judges it once its end is there. */
static void
conn_read_head (Conn     *conn,
                gpointer  data)
{
  gsize old_len, lines = 0;
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
          conn_wait (conn, &conn->wait, conn->client, G_IO_IN, conn_read_head, NULL);
          return;
        }
      if (n < 0)
        {
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

      conn->head_end = find_head_end (conn->head->data, conn->head->len,
                                      old_len > 2 ? old_len - 2 : 0);
      if (conn->head_end != 0 || conn->head->len > PADDOCK_PROXY_MAX_HEADER_BYTES)
        break;
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

/* ---------------------------------------------------------------------- */
/* Accepting                                                               */

static void
reject_busy (PaddockProxy *self,
             int           fd)
{
  g_autoptr(GBytes) response = error_response (503, "Paddock proxy: too many connections\n");
  g_autoptr(PaddockNetRecord) record = paddock_net_record_new (g_get_real_time (), "", "", 0);

  /* A fresh socket's send buffer always has room for this: no waiting,
   * and nothing is held for a client that the limit just turned away. */
  if (send (fd, g_bytes_get_data (response, NULL), g_bytes_get_size (response),
            MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
    g_debug ("Cannot answer a connection over the limit: %s", g_strerror (errno));
  shutdown (fd, SHUT_RDWR);
  close (fd);

  paddock_net_record_set_verdict (record, PADDOCK_NET_VERDICT_ERROR, "too many connections");
  g_signal_emit (self, signals[RECORD_ADDED], 0, record);
}

static void
take_connection (PaddockProxy *self,
                 int           fd)
{
  Conn *conn;

  if (g_hash_table_size (self->connections) >= self->max_connections)
    {
      reject_busy (self, fd);
      return;
    }

  conn = g_new0 (Conn, 1);
  conn->ref_count = 1;
  conn->proxy = self;
  conn->client = fd;
  conn->origin = -1;
  conn->cancellable = g_cancellable_new ();
  conn->head = g_byte_array_sized_new (HEAD_READ_CHUNK);
  conn->start_monotonic = g_get_monotonic_time ();
  conn->record = paddock_net_record_new (g_get_real_time (), "", "", 0);
  g_hash_table_add (self->connections, conn);  /* takes the reference */

  conn_arm_timeout (conn, TIMEOUT_HEAD, self->header_timeout_ms);
  {
    g_autoptr(Conn) ref = conn_ref (conn);

    /* The client usually sent its head before we got here. */
    conn_read_head (conn, NULL);
  }
}

static void watch_listener (PaddockProxy *self);

static gboolean
accept_resume_cb (gpointer user_data)
{
  PaddockProxy *self = user_data;

  g_clear_pointer (&self->accept_source, g_source_unref);
  watch_listener (self);
  return G_SOURCE_REMOVE;
}

static gboolean
accept_cb (gint         listen_fd,
           GIOCondition condition,
           gpointer     user_data)
{
  PaddockProxy *self = user_data;

  for (guint i = 0; i < ACCEPT_BATCH && !self->stopped; i++)
    {
      int fd = accept4 (listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

      if (fd >= 0)
        {
          take_connection (self, fd);
          continue;
        }
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        {
          /* The listener stays readable: pause rather than spin. */
          g_message ("The proxy cannot accept a connection now: %s", g_strerror (errno));
          g_clear_pointer (&self->accept_source, g_source_unref);
          self->accept_source = g_timeout_source_new (ACCEPT_PAUSE_MS);
          g_source_set_callback (self->accept_source, accept_resume_cb, self, NULL);
          g_source_attach (self->accept_source, g_main_context_get_thread_default ());
          return G_SOURCE_REMOVE;
        }
      break;  /* EAGAIN: all taken */
    }
  return G_SOURCE_CONTINUE;
}

static void
watch_listener (PaddockProxy *self)
{
  g_assert (self->accept_source == NULL);
  self->accept_source = g_unix_fd_source_new (self->listen_fd, G_IO_IN);
  g_source_set_callback (self->accept_source, (GSourceFunc) (void (*) (void)) accept_cb, self, NULL);
  g_source_attach (self->accept_source, g_main_context_get_thread_default ());
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
      if (self->accept_source != NULL)
        {
          g_source_destroy (self->accept_source);
          g_clear_pointer (&self->accept_source, g_source_unref);
        }
      paddock_close_fd (&self->listen_fd);
    }
  pool_clear (self);

  close_connections (self, "the proxy stopped", FALSE);
}

static void
paddock_proxy_dispose (GObject *object)
{
  PaddockProxy *self = PADDOCK_PROXY (object);

  paddock_proxy_stop (self);
  pool_clear (self);
  g_clear_pointer (&self->names, g_hash_table_unref);
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
  self->listen_fd = -1;
  g_queue_init (&self->idle);
  self->names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, cached_name_free);
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
  /* The fd came from another process: make sure no child inherits it;
   * accepting drains the queue until it would block. */
  if (fcntl (listen_fd, F_SETFD, FD_CLOEXEC) != 0 ||
      fcntl (listen_fd, F_SETFL, fcntl (listen_fd, F_GETFL) | O_NONBLOCK) != 0)
    {
      int saved = errno;

      close (listen_fd);
      g_set_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_INVALID_ARGUMENT,
                   "Cannot set up the proxy's socket: %s", g_strerror (saved));
      return NULL;
    }

  self = g_object_new (PADDOCK_TYPE_PROXY, NULL);
  self->listen_fd = listen_fd;
  self->rules = g_object_ref (rules);
  /* Origins are connected with plain sockets, never through the daemon's
   * own proxy settings; each connect is bounded by CONNECT_TIMEOUT_MS. */
  self->resolver = g_resolver_get_default ();
  watch_listener (self);

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
  /* Kept connections were made under the old policy. */
  pool_clear (self);
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

/* How many names were sent to the resolver (a name looked up less than
 * NAME_CACHE_USEC ago is not sent again). */
guint
paddock_proxy_get_n_lookups (PaddockProxy *self)
{
  g_return_val_if_fail (PADDOCK_IS_PROXY (self), 0);

  return self->n_lookups;
}

guint
paddock_proxy_get_n_connections (PaddockProxy *self)
{
  g_return_val_if_fail (PADDOCK_IS_PROXY (self), 0);

  return g_hash_table_size (self->connections);
}
