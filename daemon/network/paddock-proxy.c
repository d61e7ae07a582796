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
 * do the actual parsing of the request line and fields. The policy judges
 * host and port together (paddock_domain_rules_check_target()). After the
 * head:
 *
 *  - CONNECT host:port  → policy, resolve, connect, "200 Connection
 *    established", then two pumps copy bytes until the tunnel ends.
 *  - a first byte of 5 → SOCKS5 (paddock-proxy-socks.c): greeting, then a
 *    CONNECT request, and from there the same as an HTTP CONNECT, answered
 *    with SOCKS5 reply codes.
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
 * The files: this one is the object (listener, accepting, lifecycle,
 * policy changes); paddock-proxy-private.h says where the rest lives.
 *
 * Names are resolved here (there is no resolver inside); what a name
 * resolved to is kept for NAME_CACHE_USEC (at most NAME_CACHE_MAX names),
 * so a burst of tunnels to one host costs one lookup, and every answer,
 * kept or fresh, is judged by address_is_reachable() when it is used.
 *
 * Every wait is the connection's: the fd becoming readable or writable
 * (a one-shot wait in the proxy's PaddockCompatFdWatch) or a timer (a
 * GSource), and name resolution takes the connection's GCancellable:
 * closing a connection takes its waits back, destroys its timer and
 * cancels the lookup, so nothing of it runs afterwards. Every buffer is bounded (the
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
 *
 * Why one epoll set for the waits rather than a GSource each
 * (paddock-compat-fd-watch.c): each source's fd added to or removed from
 * the context costs an eventfd write (~6 a request), and every iteration
 * polled every socket of every connection. With 64 clients the proxy
 * thread now makes about as many system calls a request as the one-thread
 * relay of bench/network (accept4, 2 recv, 2 send, 2 epoll_ctl, close and
 * the journal's write), and the origin's answer is waited for, not read
 * for first (a third of the recvs said EAGAIN).
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-proxy-private.h"

G_DEFINE_FINAL_TYPE (PaddockProxy, paddock_proxy, G_TYPE_OBJECT)

enum {
  RECORD_ADDED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

void
_paddock_proxy_emit_record (PaddockProxy     *proxy,
                            PaddockNetRecord *record)
{
  g_signal_emit (proxy, signals[RECORD_ADDED], 0, record);
}

/* ---------------------------------------------------------------------- */
/* Accepting                                                               */

static void
reject_busy (PaddockProxy *self,
             int           fd)
{
  g_autoptr(GBytes) response = _paddock_proxy_error_response (503, "Paddock proxy: too many connections\n");
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
  if (g_hash_table_size (self->connections) >= self->max_connections)
    {
      reject_busy (self, fd);
      return;
    }
  _paddock_proxy_conn_start (self, fd);
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
  _paddock_proxy_conn_unref (data);
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
    if (!only_denied || !_paddock_proxy_conn_still_allowed (key))
      g_ptr_array_add (conns, _paddock_proxy_conn_ref (key));
  for (guint i = 0; i < conns->len; i++)
    {
      Conn *conn = g_ptr_array_index (conns, i);

      if (!conn->record_done)
        _paddock_proxy_conn_complete_record (conn, paddock_net_record_get_verdict (conn->record), reason);
      _paddock_proxy_conn_close (conn);
      _paddock_proxy_conn_unref (conn);
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
  _paddock_proxy_pool_clear (self);

  close_connections (self, "the proxy stopped", FALSE);
}

static void
paddock_proxy_dispose (GObject *object)
{
  PaddockProxy *self = PADDOCK_PROXY (object);

  paddock_proxy_stop (self);
  _paddock_proxy_pool_clear (self);
  g_clear_pointer (&self->names, g_hash_table_unref);
  g_clear_object (&self->resolver);
  g_clear_object (&self->rules);
  g_clear_pointer (&self->resolver_override, g_hash_table_unref);
  g_clear_pointer (&self->connections, g_hash_table_unref);
  /* After the connections and the pool, which took their waits back. */
  g_clear_pointer (&self->fd_watch, paddock_compat_fd_watch_free);

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
  self->names = _paddock_proxy_names_new ();
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
  self->fd_watch = paddock_compat_fd_watch_new (g_main_context_get_thread_default (), error);
  if (self->fd_watch == NULL)
    return NULL;
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
  _paddock_proxy_pool_clear (self);
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

/**
 * paddock_proxy_git_ssh_command:
 * @proxy_port: where the proxy listens inside (127.0.0.1)
 *
 * A GIT_SSH_COMMAND for sessions: ssh with a ProxyCommand that opens a
 * CONNECT tunnel through the proxy using nothing but bash and cat, which
 * every session has (netcat often is not installed), so that git over ssh
 * to a host a rule allows on port 22 works without configuration. The
 * value is parsed by sh (git runs it with "sh -c"); the ProxyCommand
 * reports the proxy's refusal ("HTTP/1.1 403 …") on stderr.
 *
 * Returns: (transfer full): the command
 */
char *
paddock_proxy_git_ssh_command (guint proxy_port)
{
  return g_strdup_printf ("ssh -o 'ProxyCommand=bash -c '\\''"
                          "exec 3<>/dev/tcp/127.0.0.1/%u; "
                          "printf \"CONNECT %%h:%%p HTTP/1.0\\r\\n\\r\\n\" >&3; "
                          "read -r s <&3; "
                          "case $s in *\" 200 \"*) ;; *) echo \"$s\" >&2; exit 1;; esac; "
                          "while read -r l <&3 && [ ${#l} -gt 1 ]; do :; done; "
                          "cat <&3 & exec cat >&3'\\'''",
                          proxy_port);
}
