/* paddock-port-forward.c — a leased host port forwarded into a session's network namespace
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A session in net none or proxy has a network namespace of its own: its
 * program binds 127.0.0.1:PORT there, where nothing on the host can reach
 * it. The daemon keeps the lease (the host's socket on PORT, listening) and
 * forwards: each connection accepted on it gets a TCP socket made inside
 * the namespace (by the sandbox's pid 1, through the socket func), which is
 * connected to 127.0.0.1:PORT there, and bytes are moved both ways.
 * A server that listens on [::1]:PORT only refuses that: the connection
 * then asks for an IPv6 socket inside and tries [::1]:PORT (once; a
 * refusal there ends it, as any refused connection does).
 *
 * Accepting runs on the thread that made the forward (the daemon's main
 * loop), since asking the sandbox for a socket goes over the session's
 * control channel there. The bytes never touch that thread: a worker of
 * the forward's own moves them, driven by the compat poller
 * (daemon/compat/paddock-compat-poll.c: epoll, edge-triggered, on Linux;
 * poll() elsewhere, told what each socket waits for). What the session
 * sends out goes through the compat relay (paddock-compat-relay.c:
 * spliced(2) through a pipe on Linux, kernel to kernel, no copy into user
 * space; a read/write loop elsewhere); what the client sends in is
 * copied, because the session's loopback takes packets of up to 512 KiB
 * and only a copy makes them (see pump_upload()).
 * A direction that reads EOF shuts the other socket's writing side once its
 * bytes are through (half-close carried through); a connection ends when
 * both directions have, or on the first error (the other side is closed,
 * which a peer sees as a reset). At most max_connections are forwarded or
 * waiting for their socket at once; one more is accepted and closed at
 * once, counted and logged (a client sees the connection closed, not a
 * hang). Stopping closes everything, the worker included.
 *
 * The pipes of all forwards share one budget of pages
 * (PADDOCK_PORT_FORWARD_PIPE_BUDGET_PAGES, see there why): a pipe is
 * enlarged (fewer, larger splices) while at most half the budget is
 * taken, else it keeps the kernel's default size while at most three
 * quarters are, else it is shrunk to one page (slower, still whole); a
 * connection for which not even that is left is refused like one over
 * the bound.
 */

#include "config.h"

#include "paddock-port-forward.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib-unix.h>

#include "paddock-autofd.h"
#include "paddock-compat-poll.h"
#include "paddock-compat-relay.h"

/* What one move of the relay reads at most (splice(): a pipe holds 64 KiB
 * by default). */
#define SPLICE_CHUNK (1024 * 1024)
/* What one copy into the session moves at most: the largest packet of the
 * session's loopback (paddock-sandbox-net.c, loopback_allow_large_packets()),
 * so that one send() can make one. */
#define UPLOAD_CHUNK (512 * 1024)
/* What each pipe asks for, budget permitting. */
#define PIPE_SIZE    (256 * 1024)
/* SO_SNDBUF of both sockets of a connection (the kernel doubles it for its
 * bookkeeping). Left to autotuning, loopback buffers grow to several MiB,
 * so a byte waits behind megabytes in our queues and is cold in the CPU
 * caches by the time the far end copies it out: that end then spends
 * 1.5–1.8× the CPU per byte it does on a direct connection (the relay
 * experiments in BENCHMARKS.md). Both ends are on this host (leases listen
 * on loopback), so the window needs no more. It also caps the kernel
 * memory a connection can pin (autotuning allows MiBs per socket). */
#define RELAY_SEND_BUFFER (256 * 1024)
/* SO_RCVBUF of both: room for two of the session's 512 KiB packets.
 * The window a receiver offers is about half its buffer and a sender
 * builds no packet larger than half the window it was offered, so with
 * 256 KiB the session's large packets (paddock-sandbox-net.c,
 * loopback_allow_large_packets()) would never be made, whichever way the
 * bytes go: on the inside socket they are what the server inside sends,
 * and on the client's they are what one copy into the session peeks
 * (pump_upload()). Through a session: upload 0.79–0.92× direct with
 * 256 KiB, 1.24–1.52× with this; download 0.65–1.01× and 0.74–1.14×
 * (BENCHMARKS.md, "Forwarded port throughput"). */
#define RELAY_RECEIVE_BUFFER (1024 * 1024)

/* Pages held by the pipes of every forward (atomic), within
 * PADDOCK_PORT_FORWARD_PIPE_BUDGET_PAGES. */
static gint pipe_pages_in_use;

typedef struct _Connection Connection;

typedef struct {
  Connection *connection;
  int side;                 /* 0: the client outside, 1: the socket inside */
} Endpoint;

/* What a connection's last pump stopped on, per direction: with the
 * level-triggered poller (paddock_compat_poller_want()) each socket is
 * watched for exactly that. */
enum {
  UPLOAD_WAITS_READ    = 1 << 0,   /* fd[0] had nothing */
  UPLOAD_WAITS_WRITE   = 1 << 1,   /* fd[1] took nothing */
  DOWNLOAD_WAITS_READ  = 1 << 2,   /* fd[1] had nothing */
  DOWNLOAD_WAITS_WRITE = 1 << 3,   /* fd[0] took nothing */
};

/* Direction d reads fd[d] and writes to fd[1 - d]: direction 0 (upload)
 * by a copy (pump_upload()), direction 1 (download) through the relay. */
struct _Connection {
  int fd[2];                /* fd[1] is -1 while waiting for the socket inside */
  int family;               /* fd[1]'s: AF_INET, then AF_INET6 if 127.0.0.1 refused */
  PaddockCompatRelay relay; /* direction 1's: fd[1] → relay → fd[0] */
  gboolean relay_open;
  guint pipe_pages;         /* taken from the budget for the relay */
  guint waits;              /* UPLOAD_WAITS_READ… */
  gboolean eof[2];          /* fd[d] read to its end */
  gboolean shut[2];         /* fd[1 - d]'s writing side shut */
  gboolean connecting;      /* fd[1] not yet connected */
  gboolean closed;          /* its fds closed; freed after the current batch of events */
  gboolean retrying;        /* handed back after the current batch: its events are stale */
  Endpoint ends[2];
};

struct _PaddockPortForward
{
  GObject parent_instance;

  guint16 inside_port;
  guint max_connections;
  PaddockPortForwardSocketFunc socket_func;
  gpointer user_data;

  /* The forward's thread (the daemon's main loop). */
  int listen_fd;
  GSource *accept_source;
  GQueue waiting;           /* Connection* waiting for their socket inside, in the order asked */
  Connection *asking;       /* the one the socket func is called for, while it runs */
  GSource *retry_source;    /* ready when the worker handed connections back to try [::1] */
  gboolean stopped;
  gboolean refusing;        /* at the bound: logged once per run of refusals */
  guint64 n_refused;

  /* Shared with the worker. */
  GThread *worker;
  PaddockCompatPoller *poller;  /* woken for new connections or stop */
  GMutex lock;
  GPtrArray *incoming;      /* Connection*, handed to the worker */
  GPtrArray *retry;         /* Connection*, handed back by the worker: 127.0.0.1 refused */
  gboolean stopping;
  gint n_active;            /* atomic: connections the worker holds or will */

  /* The worker's own. */
  GHashTable *live;         /* Connection* it holds */
  GPtrArray *refused;       /* Connection* to hand back after this batch of events */
  GPtrArray *closed;        /* Connection* closed during this batch of events */
  char *upload_buffer;      /* UPLOAD_CHUNK bytes, made at the first upload */
};

G_DEFINE_FINAL_TYPE (PaddockPortForward, paddock_port_forward, G_TYPE_OBJECT)

/* How far into the budget each size of pipe may go: enlarged pipes up to
 * half of it, default-size ones up to three quarters, one-page pipes the
 * rest; so a crowd of connections still gets pipes, only smaller ones. */
#define ENLARGED_LIMIT (PADDOCK_PORT_FORWARD_PIPE_BUDGET_PAGES / 2)
#define DEFAULT_LIMIT  (PADDOCK_PORT_FORWARD_PIPE_BUDGET_PAGES / 4 * 3)

/* Takes @pages from the budget, all or nothing, if that leaves at most
 * @limit pages taken. */
static gboolean
pipe_pages_take (guint pages,
                 guint limit)
{
  for (;;)
    {
      gint now = g_atomic_int_get (&pipe_pages_in_use);

      if ((guint) now + pages > limit)
        return FALSE;
      if (g_atomic_int_compare_and_exchange (&pipe_pages_in_use, now, now + (gint) pages))
        return TRUE;
    }
}

static void
pipe_pages_give_back (guint *pages)
{
  g_atomic_int_add (&pipe_pages_in_use, -(gint) *pages);
  *pages = 0;
}

/* Pages held now by the pipes of every forward in the process. */
guint
paddock_port_forward_get_pipe_pages (void)
{
  return (guint) g_atomic_int_get (&pipe_pages_in_use);
}

/* See RELAY_SEND_BUFFER and RELAY_RECEIVE_BUFFER. A socket that refuses
 * keeps autotuning: slower, never wrong. */
static void
bound_socket_buffers (int fd)
{
  int send_size = RELAY_SEND_BUFFER;
  int receive_size = RELAY_RECEIVE_BUFFER;

  setsockopt (fd, SOL_SOCKET, SO_SNDBUF, &send_size, sizeof send_size);
  setsockopt (fd, SOL_SOCKET, SO_RCVBUF, &receive_size, sizeof receive_size);
}

static void
connection_close_pipe (Connection *connection)
{
  paddock_compat_relay_close (&connection->relay);
  connection->relay_open = FALSE;
  pipe_pages_give_back (&connection->pipe_pages);
}

/* A client accepted, waiting for its socket inside (IPv4 first). */
static Connection *
connection_new (int client)
{
  Connection *connection = g_new0 (Connection, 1);

  connection->fd[0] = client;
  connection->fd[1] = -1;
  connection->family = AF_INET;
  connection->relay = (PaddockCompatRelay) PADDOCK_COMPAT_RELAY_INIT;
  connection->ends[0] = (Endpoint) { connection, 0 };
  connection->ends[1] = (Endpoint) { connection, 1 };
  return connection;
}

static void
connection_free (Connection *connection)
{
  for (int i = 0; i < 2; i++)
    paddock_close_fd (&connection->fd[i]);
  connection_close_pipe (connection);
  g_free (connection);
}

/* ---- the worker ------------------------------------------------------------ */

static void
worker_close (PaddockPortForward *self,
              Connection         *connection)
{
  if (connection->closed)
    return;
  /* Out of the poller first: closing an fd takes it out of an epoll set
   * only when its file's last reference goes, and a child the daemon is
   * forking holds one until it execs (CLOEXEC closes it only then). An
   * event on the freed connection would follow (ASan saw it in
   * paddockctl-lease). Removing an fd never added (-1, or before
   * worker_add) does nothing. The memory stays until the batch of events
   * that may still point at it is done. */
  for (int i = 0; i < 2; i++)
    {
      paddock_compat_poller_remove (self->poller, connection->fd[i]);
      paddock_close_fd (&connection->fd[i]);
    }
  connection_close_pipe (connection);
  connection->closed = TRUE;
  g_hash_table_remove (self->live, connection);
  g_ptr_array_add (self->closed, connection);
  g_atomic_int_add (&self->n_active, -1);
}

/* Moves what the client sent into the session, as far as it can without
 * blocking. FALSE on an error that ends the connection.
 *
 * A copy, not a splice: the session's loopback takes packets of up to
 * 512 KiB, and loopback's cost is per packet. A send() fills its packets
 * from 32 KiB chunks, up to that size; a splice() hands over the pages the
 * bytes arrived in one by one, and a packet holds 17 of them at most
 * (MAX_SKB_FRAGS), about 68 KiB. The copy costs less than the packets it
 * saves: an upload through a session went from 0.55× to 1.44× a direct
 * connection's throughput (BENCHMARKS.md, with RELAY_RECEIVE_BUFFER). The
 * bytes are peeked, sent, and only what went out is taken from the
 * client's socket: what the session cannot take yet stays queued there, so
 * the client is held back by TCP as with a splice, and the worker needs
 * one buffer, not one per connection. */
static gboolean
pump_upload (PaddockPortForward *self,
             Connection         *connection)
{
  int src = connection->fd[0];
  int dst = connection->fd[1];

  if (self->upload_buffer == NULL)
    self->upload_buffer = g_malloc (UPLOAD_CHUNK);
  while (!connection->eof[0])
    {
      ssize_t peeked, sent, taken;

      peeked = recv (src, self->upload_buffer, UPLOAD_CHUNK, MSG_PEEK | MSG_DONTWAIT);
      if (peeked == 0)
        {
          connection->eof[0] = TRUE;
          break;
        }
      if (peeked < 0)
        {
          if (errno == EINTR)
            continue;
          connection->waits |= UPLOAD_WAITS_READ;
          return errno == EAGAIN;
        }
      sent = send (dst, self->upload_buffer, (size_t) peeked, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (sent < 0)
        {
          if (errno == EINTR)
            continue;
          connection->waits |= UPLOAD_WAITS_WRITE;
          return errno == EAGAIN;
        }
      /* MSG_TRUNC: TCP drops the bytes instead of copying them out. */
      do
        taken = recv (src, self->upload_buffer, (size_t) sent, MSG_TRUNC | MSG_DONTWAIT);
      while (taken < 0 && errno == EINTR);
      if (taken != sent)
        return FALSE;
    }
  if (!connection->shut[0])
    {
      /* Half-close: the client's FIN passed on after its bytes. */
      shutdown (dst, SHUT_WR);
      connection->shut[0] = TRUE;
    }
  return TRUE;
}

/* Moves what the session sent out to the client, as far as it can without
 * blocking: through the relay (spliced on Linux: the client's loopback
 * takes 64 KiB packets, which spliced pages fill). FALSE on an error that
 * ends the connection. */
static gboolean
pump_download (Connection *connection)
{
  switch (paddock_compat_relay_move (&connection->relay, connection->fd[1], connection->fd[0], SPLICE_CHUNK))
    {
    case PADDOCK_COMPAT_RELAY_WAIT_READ:
      connection->waits |= DOWNLOAD_WAITS_READ;
      return TRUE;
    case PADDOCK_COMPAT_RELAY_WAIT_WRITE:
      connection->waits |= DOWNLOAD_WAITS_WRITE;
      return TRUE;
    case PADDOCK_COMPAT_RELAY_DONE:
      connection->eof[1] = TRUE;
      if (!connection->shut[1])
        {
          /* Half-close: the session's FIN passed on once its bytes are. */
          shutdown (connection->fd[0], SHUT_WR);
          connection->shut[1] = TRUE;
        }
      return TRUE;
    case PADDOCK_COMPAT_RELAY_ERROR:
    default:
      return FALSE;
    }
}

/* Tells the poller what each socket waits for now (a no-op for the
 * edge-triggered one, which watches both ways for the connection's
 * life). Connecting, the inside socket waits to be writable and the
 * client's bytes wait with it. */
static void
connection_want (PaddockPortForward *self,
                 Connection         *connection)
{
  guint outside = 0, inside = 0;

  if (connection->connecting)
    inside = PADDOCK_COMPAT_POLL_OUT;
  else
    {
      if (connection->waits & UPLOAD_WAITS_READ)
        outside |= PADDOCK_COMPAT_POLL_IN;
      if (connection->waits & DOWNLOAD_WAITS_WRITE)
        outside |= PADDOCK_COMPAT_POLL_OUT;
      if (connection->waits & DOWNLOAD_WAITS_READ)
        inside |= PADDOCK_COMPAT_POLL_IN;
      if (connection->waits & UPLOAD_WAITS_WRITE)
        inside |= PADDOCK_COMPAT_POLL_OUT;
    }
  paddock_compat_poller_want (self->poller, connection->fd[0], outside);
  paddock_compat_poller_want (self->poller, connection->fd[1], inside);
}

/* 127.0.0.1:PORT refused: unless that was [::1] already, the connection
 * goes back to the forward's thread, which asks for an IPv6 socket inside.
 * Its client and pipe stay; the refused socket goes. */
static gboolean
worker_retry_inet6 (PaddockPortForward *self,
                    Connection         *connection)
{
  if (connection->family != AF_INET)
    return FALSE;
  /* Both out of the poller by hand: see worker_close(). */
  paddock_compat_poller_remove (self->poller, connection->fd[0]);
  paddock_compat_poller_remove (self->poller, connection->fd[1]);
  paddock_close_fd (&connection->fd[1]);
  connection->family = AF_INET6;
  connection->connecting = FALSE;
  /* This batch of events may still name it: handed over after it. */
  connection->retrying = TRUE;
  g_hash_table_remove (self->live, connection);
  g_ptr_array_add (self->refused, connection);
  return TRUE;
}

/* After a batch of events: the connections 127.0.0.1 refused go back to
 * the forward's thread. */
static void
worker_hand_back (PaddockPortForward *self)
{
  if (self->refused->len == 0)
    return;
  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->refused->len; i++)
    g_ptr_array_add (self->retry, g_ptr_array_index (self->refused, i));
  /* Thread-safe; wakes the forward's context. */
  if (self->retry_source != NULL)
    g_source_set_ready_time (self->retry_source, 0);
  g_mutex_unlock (&self->lock);
  g_ptr_array_set_size (self->refused, 0);
}

static void
worker_event (PaddockPortForward *self,
              Endpoint           *end,
              guint32             events)
{
  Connection *connection = end->connection;

  if (connection->closed || connection->retrying)
    return;
  if (connection->connecting && end->side == 0)
    return;   /* the client's bytes wait: pumped once the inside is connected */
  if (connection->connecting)
    {
      int err = 0;
      socklen_t len = sizeof err;

      if (getsockopt (connection->fd[1], SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0)
        {
          if (err == ECONNREFUSED && worker_retry_inet6 (self, connection))
            return;
          /* Nothing listens inside (yet): the client sees its connection
           * closed, as it would a refused one. */
          worker_close (self, connection);
          return;
        }
      connection->connecting = FALSE;
    }
  else if (events & PADDOCK_COMPAT_POLL_ERR)
    {
      worker_close (self, connection);
      return;
    }

  connection->waits = 0;
  if (!pump_upload (self, connection) || !pump_download (connection))
    {
      worker_close (self, connection);
      return;
    }
  if (connection->shut[0] && connection->shut[1])
    worker_close (self, connection);
  else
    connection_want (self, connection);
}

/* A connection from the forward's thread: connect its inside socket. */
static void
worker_add (PaddockPortForward *self,
            Connection         *connection)
{
  struct sockaddr_in addr = {
    .sin_family = AF_INET,
    .sin_port = htons (self->inside_port),
    .sin_addr.s_addr = htonl (INADDR_LOOPBACK),
  };
  struct sockaddr_in6 addr6 = {
    .sin6_family = AF_INET6,
    .sin6_port = htons (self->inside_port),
    .sin6_addr = IN6ADDR_LOOPBACK_INIT,
  };
  int one = 1;
  int rc;

  connection->retrying = FALSE;
  setsockopt (connection->fd[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  /* Before connecting: the window it offers is sized from it. */
  bound_socket_buffers (connection->fd[1]);
  if (connection->family == AF_INET6)
    rc = connect (connection->fd[1], (struct sockaddr *) &addr6, sizeof addr6);
  else
    rc = connect (connection->fd[1], (struct sockaddr *) &addr, sizeof addr);
  if (rc != 0 && errno != EINPROGRESS)
    {
      /* Not yet in the poller: only the client's fd to take out, and
       * removing an fd never added does nothing. */
      if (errno == ECONNREFUSED && worker_retry_inet6 (self, connection))
        return;
      worker_close (self, connection);
      return;
    }
  connection->connecting = TRUE;
  for (int side = 0; side < 2; side++)
    {
      /* Edge-triggered (epoll), both ways, for the connection's life: the
       * pumps go on until EAGAIN each time, so no edge is missed, and no
       * system call per change of direction is needed. The poll()
       * fallback watches what connection_want() says instead: while
       * connecting, the inside socket's connect. */
      guint wanted = side == 1 ? PADDOCK_COMPAT_POLL_OUT : 0;

      if (!paddock_compat_poller_add (self->poller, connection->fd[side], wanted, &connection->ends[side]))
        {
          worker_close (self, connection);
          return;
        }
    }
}

static gpointer
worker_main (gpointer data)
{
  PaddockPortForward *self = data;
  gboolean stopping = FALSE;

  while (!stopping)
    {
      PaddockCompatPollEvent events[64];
      int n = paddock_compat_poller_wait (self->poller, events, G_N_ELEMENTS (events), -1);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          g_warning ("Port forward to %u: waiting on its sockets: %s", self->inside_port, g_strerror (errno));
          break;
        }
      for (int i = 0; i < n; i++)
        {
          Endpoint *end = events[i].data;

          if (end == NULL)
            {
              g_autoptr(GPtrArray) incoming = NULL;

              g_mutex_lock (&self->lock);
              incoming = g_steal_pointer (&self->incoming);
              self->incoming = g_ptr_array_new ();
              stopping = self->stopping;
              g_mutex_unlock (&self->lock);
              for (guint j = 0; j < incoming->len; j++)
                {
                  Connection *connection = g_ptr_array_index (incoming, j);

                  g_hash_table_add (self->live, connection);
                  worker_add (self, connection);
                }
              continue;
            }
          worker_event (self, end, events[i].events);
        }
      g_ptr_array_set_size (self->closed, 0);
      worker_hand_back (self);
    }

  /* Stopped: every connection ends now (those handed back, in
   * paddock_port_forward_stop()). */
  worker_hand_back (self);
  {
    g_autoptr(GPtrArray) all = g_ptr_array_new ();
    GHashTableIter iter;
    gpointer key;

    g_hash_table_iter_init (&iter, self->live);
    while (g_hash_table_iter_next (&iter, &key, NULL))
      g_ptr_array_add (all, key);
    for (guint i = 0; i < all->len; i++)
      worker_close (self, g_ptr_array_index (all, i));
    g_ptr_array_set_size (self->closed, 0);
  }
  g_clear_pointer (&self->upload_buffer, g_free);
  return NULL;
}

/* ---- the forward's thread -------------------------------------------------- */

/* A relay as large as the budget allows: enlarged, else the size the
 * kernel gave its pipe (its default, or one page once the user is over
 * its soft limit), else one page. FALSE (errno set) when it cannot be
 * made or not even one page is left. */
static gboolean
make_relay (PaddockCompatRelay *relay,
            guint              *pages)
{
  long page = sysconf (_SC_PAGESIZE);
  guint given;

  if (!paddock_compat_relay_open (relay))
    return FALSE;
  given = paddock_compat_relay_get_pages (relay);

  if (pipe_pages_take (PIPE_SIZE / (guint) page, ENLARGED_LIMIT))
    {
      guint got;

      /* The user's own pipe limits may still say no: then it keeps the
       * size it has. */
      if (!paddock_compat_relay_set_pages (relay, PIPE_SIZE / (guint) page))
        got = given;
      else
        got = paddock_compat_relay_get_pages (relay);
      /* Account what it has: less than asked gives the rest back. */
      g_atomic_int_add (&pipe_pages_in_use, (gint) got - (gint) (PIPE_SIZE / (guint) page));
      *pages = got;
      return TRUE;
    }
  if (given > 1 && pipe_pages_take (given, DEFAULT_LIMIT))
    {
      *pages = given;
      return TRUE;
    }
  /* Shrinking an empty pipe is always allowed. */
  if (pipe_pages_take (1, PADDOCK_PORT_FORWARD_PIPE_BUDGET_PAGES))
    {
      if (given > 1 && !paddock_compat_relay_set_pages (relay, 1))
        {
          int saved_errno = errno;

          g_atomic_int_add (&pipe_pages_in_use, -1);
          paddock_compat_relay_close (relay);
          errno = saved_errno;
          return FALSE;
        }
      *pages = 1;
      return TRUE;
    }
  paddock_compat_relay_close (relay);
  errno = ENOBUFS;
  return FALSE;
}

/* Whether @fd is what was asked for: a TCP stream socket of @family,
 * neither listening nor connected (pid 1 made it just now). A socket that
 * is anything else is not used, whoever sent it. */
static gboolean
inside_socket_is_fresh (int fd,
                        int family)
{
  int domain = -1, type = -1, protocol = -1, listening = 1;
  socklen_t len;
  struct sockaddr_storage peer;
  socklen_t peer_len = sizeof peer;

  len = sizeof domain;
  if (getsockopt (fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != family)
    return FALSE;
  len = sizeof type;
  if (getsockopt (fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM)
    return FALSE;
  len = sizeof protocol;
  if (getsockopt (fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &len) != 0 || protocol != IPPROTO_TCP)
    return FALSE;
  len = sizeof listening;
  if (getsockopt (fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || listening != 0)
    return FALSE;
  return getpeername (fd, (struct sockaddr *) &peer, &peer_len) != 0 && errno == ENOTCONN;
}

/* Which waiting connection an answer is for. One asked for right now
 * (the socket func answering before it returns, say because the request
 * could not even be sent) is that one, whatever else is still in flight;
 * otherwise answers come in the order asked, so a failure is the oldest
 * request's, and a socket goes to the oldest connection waiting for a
 * socket of its family (a connection back for [::1] waits for an IPv6
 * one, the others for IPv4), so that no connection gets a socket it
 * cannot use even if answers cross. NULL: nothing waits for it. */
static Connection *
take_waiting_for (PaddockPortForward *self,
                  int                 domain)
{
  if (self->asking != NULL)
    {
      Connection *connection = self->asking;

      self->asking = NULL;
      g_queue_remove (&self->waiting, connection);
      return connection;
    }
  if (domain < 0)
    return g_queue_pop_head (&self->waiting);
  for (GList *l = self->waiting.head; l != NULL; l = l->next)
    {
      Connection *connection = l->data;

      if (connection->family == domain)
        {
          g_queue_delete_link (&self->waiting, l);
          return connection;
        }
    }
  return NULL;
}

/* Asks the socket func for @connection's socket inside, which waits for
 * it in self->waiting. */
static void
ask_for_socket (PaddockPortForward *self,
                Connection         *connection)
{
  g_queue_push_tail (&self->waiting, connection);
  self->asking = connection;
  self->socket_func (self, connection->family, self->user_data);
  /* Answered later (or already, clearing it). */
  self->asking = NULL;
}

static void
connection_drop_waiting (PaddockPortForward *self,
                         Connection         *connection)
{
  connection_free (connection);
  g_atomic_int_add (&self->n_active, -1);
}

void
paddock_port_forward_take_inside_socket (PaddockPortForward *self,
                                         int                 fd)
{
  Connection *connection;
  int domain = AF_UNSPEC;   /* the socket's, if it is a socket; -1 for a failure */

  g_return_if_fail (PADDOCK_IS_PORT_FORWARD (self));

  if (fd >= 0)
    {
      socklen_t len = sizeof domain;

      if (getsockopt (fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0)
        domain = AF_UNSPEC;
    }
  else
    domain = -1;
  if (self->stopped || g_queue_is_empty (&self->waiting))
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  connection = take_waiting_for (self, domain);
  if (connection == NULL)
    {
      /* A socket of a family nobody asked for: not used, and its answer
       * still ends a request, the oldest. */
      g_message ("Port forward to %u: the socket handed over is not one asked for", self->inside_port);
      close (fd);
      connection_drop_waiting (self, g_queue_pop_head (&self->waiting));
      return;
    }
  if (fd >= 0 && !inside_socket_is_fresh (fd, connection->family))
    {
      g_message ("Port forward to %u: the socket handed over is not a fresh TCP socket of the family asked for",
                 self->inside_port);
      close (fd);
      fd = -1;
    }
  if (fd < 0)
    {
      connection_drop_waiting (self, connection);
      return;
    }

  connection->fd[1] = fd;
  /* A connection back for [::1] has its relay already. */
  if (!connection->relay_open && make_relay (&connection->relay, &connection->pipe_pages))
    connection->relay_open = TRUE;
  if (!connection->relay_open || fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) | O_NONBLOCK) != 0)
    {
      if (errno == ENOBUFS)
        {
          /* The daemon-wide pipe budget is spent: refused like one over
           * the bound (the client sees its connection closed). */
          self->n_refused++;
          if (!self->refusing)
            g_message ("Port forward to %u: the forwards' pipe budget (%u pages) is spent; "
                     "refusing connections until some end", self->inside_port,
                       PADDOCK_PORT_FORWARD_PIPE_BUDGET_PAGES);
          self->refusing = TRUE;
        }
      else
        g_message ("Port forward to %u: cannot make its pipe: %s", self->inside_port, g_strerror (errno));
      connection_free (connection);
      g_atomic_int_add (&self->n_active, -1);
      return;
    }

  g_mutex_lock (&self->lock);
  g_ptr_array_add (self->incoming, connection);
  g_mutex_unlock (&self->lock);
  if (!paddock_compat_poller_wake (self->poller))
    g_warning ("Port forward: cannot wake its worker: %s", g_strerror (errno));
}

/* On the forward's thread: connections the worker handed back because
 * 127.0.0.1 refused them each ask for an IPv6 socket inside. */
static gboolean
retry_cb (gpointer user_data)
{
  PaddockPortForward *self = user_data;
  g_autoptr(GPtrArray) retry = NULL;

  g_source_set_ready_time (self->retry_source, -1);
  g_mutex_lock (&self->lock);
  retry = g_steal_pointer (&self->retry);
  self->retry = g_ptr_array_new ();
  g_mutex_unlock (&self->lock);
  for (guint i = 0; i < retry->len && !self->stopped; i++)
    {
      Connection *connection = g_ptr_array_index (retry, i);

      g_ptr_array_index (retry, i) = NULL;
      ask_for_socket (self, connection);
    }
  /* Stopped meanwhile (the socket func may stop it). */
  for (guint i = 0; i < retry->len; i++)
    if (g_ptr_array_index (retry, i) != NULL)
      {
        connection_free (g_ptr_array_index (retry, i));
        g_atomic_int_add (&self->n_active, -1);
      }
  return G_SOURCE_CONTINUE;
}

static gboolean
retry_source_dispatch (GSource     *source,
                       GSourceFunc  callback,
                       gpointer     user_data)
{
  return callback (user_data);
}

/* Ready by its ready time alone, which the worker sets. */
static GSourceFuncs retry_source_funcs = { NULL, NULL, retry_source_dispatch, NULL, NULL, NULL };

static gboolean
accept_cb (int          fd,
           GIOCondition condition,
           gpointer     user_data)
{
  PaddockPortForward *self = user_data;

  /* A few per wake-up, so that a flood does not starve the main loop. */
  for (int i = 0; i < 16; i++)
    {
      int client = accept4 (fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
      int one = 1;

      if (client < 0)
        break;
      if ((guint) g_atomic_int_get (&self->n_active) >= self->max_connections)
        {
          self->n_refused++;
          if (!self->refusing)
            g_message ("Port forward to %u: %u connections forwarded already, the most there may be; "
                       "refusing more until some end", self->inside_port, self->max_connections);
          self->refusing = TRUE;
          close (client);
          continue;
        }
      self->refusing = FALSE;
      setsockopt (client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      /* The lease's socket clears SO_REUSEADDR once listening (a held
       * port refuses every other bind), and accepted sockets inherit
       * that: one we close first would then keep the port from being
       * bound again for TIME_WAIT, a minute in which a daemon started
       * after us (a crash, an upgrade) could not hold the session's
       * lease again and lose its forward. Ours alone, never handed on,
       * and while our listener is there no bind of the port succeeds
       * anyway. */
      setsockopt (client, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      bound_socket_buffers (client);
      g_atomic_int_add (&self->n_active, 1);
      ask_for_socket (self, connection_new (client));
      if (self->stopped)
        break;
    }
  return G_SOURCE_CONTINUE;
}

/**
 * paddock_port_forward_new:
 * @listen_fd: a listening TCP socket (duplicated: the caller keeps its own)
 * @inside_port: the port to connect to on 127.0.0.1 inside
 * @socket_func: asks for a socket inside, see #PaddockPortForwardSocketFunc
 */
PaddockPortForward *
paddock_port_forward_new (int                           listen_fd,
                          guint16                       inside_port,
                          PaddockPortForwardSocketFunc  socket_func,
                          gpointer                      user_data,
                          GError                      **error)
{
  g_autoptr(PaddockPortForward) self = g_object_new (PADDOCK_TYPE_PORT_FORWARD, NULL);
  g_autoptr(GError) poller_error = NULL;

  g_return_val_if_fail (socket_func != NULL, NULL);

  self->inside_port = inside_port;
  self->socket_func = socket_func;
  self->user_data = user_data;
  self->poller = paddock_compat_poller_new (&poller_error);
  if (self->poller == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "Cannot forward port %u: %s",
                   inside_port, poller_error->message);
      return NULL;
    }
  self->listen_fd = fcntl (listen_fd, F_DUPFD_CLOEXEC, 3);
  if (self->listen_fd < 0 || !g_unix_set_fd_nonblocking (self->listen_fd, TRUE, NULL))
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Cannot forward port %u: %s", inside_port, g_strerror (saved_errno));
      return NULL;
    }

  self->worker = g_thread_try_new ("paddock-forward", worker_main, self, error);
  if (self->worker == NULL)
    return NULL;
  self->retry_source = g_source_new (&retry_source_funcs, sizeof (GSource));
  g_source_set_callback (self->retry_source, retry_cb, self, NULL);
  g_source_attach (self->retry_source, g_main_context_get_thread_default ());
  self->accept_source = g_unix_fd_source_new (self->listen_fd, G_IO_IN);
  g_source_set_callback (self->accept_source, G_SOURCE_FUNC (accept_cb), self, NULL);
  g_source_attach (self->accept_source, g_main_context_get_thread_default ());
  return g_steal_pointer (&self);
}

void
paddock_port_forward_set_max_connections (PaddockPortForward *self,
                                          guint               max_connections)
{
  g_return_if_fail (PADDOCK_IS_PORT_FORWARD (self));
  self->max_connections = MAX (max_connections, 1);
}

guint16
paddock_port_forward_get_inside_port (PaddockPortForward *self)
{
  g_return_val_if_fail (PADDOCK_IS_PORT_FORWARD (self), 0);
  return self->inside_port;
}

/* Forwarded or waiting for their socket inside. */
guint
paddock_port_forward_get_n_connections (PaddockPortForward *self)
{
  g_return_val_if_fail (PADDOCK_IS_PORT_FORWARD (self), 0);
  return (guint) g_atomic_int_get (&self->n_active);
}

guint64
paddock_port_forward_get_n_refused (PaddockPortForward *self)
{
  g_return_val_if_fail (PADDOCK_IS_PORT_FORWARD (self), 0);
  return self->n_refused;
}

/* Ends every connection and accepts no more; sockets handed over later are
 * closed. Idempotent. */
void
paddock_port_forward_stop (PaddockPortForward *self)
{
  g_return_if_fail (PADDOCK_IS_PORT_FORWARD (self));

  if (self->stopped)
    return;
  self->stopped = TRUE;
  self->asking = NULL;
  if (self->accept_source != NULL)
    {
      g_source_destroy (self->accept_source);
      g_clear_pointer (&self->accept_source, g_source_unref);
    }
  paddock_close_fd (&self->listen_fd);
  while (!g_queue_is_empty (&self->waiting))
    {
      connection_free (g_queue_pop_head (&self->waiting));
      g_atomic_int_add (&self->n_active, -1);
    }
  if (self->worker != NULL)
    {
      g_mutex_lock (&self->lock);
      self->stopping = TRUE;
      g_mutex_unlock (&self->lock);
      if (!paddock_compat_poller_wake (self->poller))
        g_warning ("Port forward: cannot wake its worker: %s", g_strerror (errno));
      g_thread_join (g_steal_pointer (&self->worker));
    }
  /* After the join: nothing hands connections back any more. */
  if (self->retry_source != NULL)
    {
      g_mutex_lock (&self->lock);
      g_source_destroy (self->retry_source);
      g_clear_pointer (&self->retry_source, g_source_unref);
      g_mutex_unlock (&self->lock);
    }
  for (guint i = 0; i < self->retry->len; i++)
    {
      connection_free (g_ptr_array_index (self->retry, i));
      g_atomic_int_add (&self->n_active, -1);
    }
  g_ptr_array_set_size (self->retry, 0);
}

static void
paddock_port_forward_finalize (GObject *object)
{
  PaddockPortForward *self = PADDOCK_PORT_FORWARD (object);

  paddock_port_forward_stop (self);
  /* Handed over after the worker ended, or with no worker at all. */
  g_ptr_array_set_free_func (self->incoming, (GDestroyNotify) connection_free);
  g_ptr_array_unref (self->incoming);
  g_ptr_array_unref (self->retry);
  g_hash_table_unref (self->live);
  g_ptr_array_unref (self->refused);
  g_ptr_array_unref (self->closed);
  g_clear_pointer (&self->poller, paddock_compat_poller_free);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (paddock_port_forward_parent_class)->finalize (object);
}

static void
paddock_port_forward_class_init (PaddockPortForwardClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = paddock_port_forward_finalize;
}

static void
paddock_port_forward_init (PaddockPortForward *self)
{
  self->max_connections = PADDOCK_PORT_FORWARD_DEFAULT_MAX_CONNECTIONS;
  self->listen_fd = -1;
  g_queue_init (&self->waiting);
  g_mutex_init (&self->lock);
  self->incoming = g_ptr_array_new ();
  self->retry = g_ptr_array_new ();
  self->live = g_hash_table_new (NULL, NULL);
  self->refused = g_ptr_array_new ();
  self->closed = g_ptr_array_new_with_free_func ((GDestroyNotify) connection_free);
}
