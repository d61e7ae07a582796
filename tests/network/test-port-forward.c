/* test-port-forward.c — PaddockPortForward: bytes both ways, half-close, the bound, stop
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Everything on 127.0.0.1: a server thread stands in for the program
 * inside a session, and the socket func makes the far side's socket here
 * (a session's sandbox makes it in the session's namespace).
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gio/gio.h>

#include "net-test-util.h"

#include "paddock-port-forward.h"

/* A TCP socket bound to @family's loopback at @port (0: any), listening
 * when @backlog > 0; -1 (errno set) when the port is taken there. */
static int
bind_loopback (int      family,
               guint16 *port,
               int      backlog)
{
  struct sockaddr_in addr4 = { .sin_family = AF_INET, .sin_port = htons (*port),
                               .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  struct sockaddr_in6 addr6 = { .sin6_family = AF_INET6, .sin6_port = htons (*port),
                                .sin6_addr = IN6ADDR_LOOPBACK_INIT };
  struct sockaddr *addr = family == AF_INET6 ? (struct sockaddr *) &addr6 : (struct sockaddr *) &addr4;
  socklen_t len = family == AF_INET6 ? sizeof addr6 : sizeof addr4;
  int fd = socket (family, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (fd < 0)
    return -1;
  if (bind (fd, addr, len) != 0 || (backlog > 0 && listen (fd, backlog) != 0)
      || getsockname (fd, addr, &len) != 0)
    {
      int saved_errno = errno;

      close (fd);
      errno = saved_errno;
      return -1;
    }
  *port = ntohs (family == AF_INET6 ? addr6.sin6_port : addr4.sin_port);
  return fd;
}

static int
listen_loopback (guint16 *out_port)
{
  guint16 port = 0;
  int fd = bind_loopback (AF_INET, &port, 256);

  g_assert_no_errno (fd < 0 ? -1 : 0);
  *out_port = port;
  return fd;
}

static int
connect_loopback (guint16 port)
{
  struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons (port),
                              .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  g_assert_no_errno (connect (fd, (struct sockaddr *) &addr, sizeof addr));
  return fd;
}

/* Reads to EOF (or an error: a reset counts as the end); the byte count.
 * What it read goes to @out and/or @sum, when given. */
static gsize
read_to_end (int        fd,
             GString   *out,
             GChecksum *sum)
{
  char buf[65536];
  gsize total = 0;

  for (;;)
    {
      ssize_t n = read (fd, buf, sizeof buf);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return total;
      if (out != NULL)
        g_string_append_len (out, buf, n);
      if (sum != NULL)
        g_checksum_update (sum, (const guchar *) buf, n);
      total += (gsize) n;
    }
}

/* The server's answer to @size bytes whose SHA-256 is @sum: "got N HASH",
 * HASH the first 16 hex digits, so that bytes lost, repeated or out of
 * order show as well as a count that is off. */
static char *
answer_for (gsize      size,
            GChecksum *sum)
{
  return g_strdup_printf ("got %" G_GSIZE_FORMAT " %.16s", size, g_checksum_get_string (sum));
}

/* The client's bytes: no two 4 KiB pages alike, so a page sent twice or
 * skipped changes the hash. */
static char *
payload_new (gsize size)
{
  char *payload = g_malloc (size);

  for (gsize i = 0; i < size; i++)
    payload[i] = (char) ((i * 2654435761u) >> 11);
  return payload;
}

/* What the server answers to payload_new (@size). */
static char *
expected_answer (gsize size)
{
  g_autofree char *payload = payload_new (size);
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);

  g_checksum_update (sum, (const guchar *) payload, size);
  return answer_for (size, sum);
}

/* Reads @fd to EOF and answers what it got (answer_for()). */
static void
answer_connection (int fd)
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  gsize got = read_to_end (fd, NULL, sum);
  g_autofree char *reply = answer_for (got, sum);

  g_assert_cmpint (write (fd, reply, strlen (reply)), ==, (gssize) strlen (reply));
}

/* The "inside" server: per connection, reads to EOF, answers "got N HASH" and
 * closes; or with @hold, keeps each connection open until the test ends. */
typedef struct {
  int listen_fd;
  guint16 port;
  gboolean hold;
  GPtrArray *held;    /* fds, with hold */
  GMutex lock;
  guint accepted;
  guint gate;         /* non-zero: hold the first @gate connections until @open, then serve them */
  gint open;          /* atomic */
} Server;

static gpointer
server_thread (gpointer data)
{
  Server *server = data;

  for (;;)
    {
      int fd = accept4 (server->listen_fd, NULL, NULL, SOCK_CLOEXEC);

      if (fd < 0)
        return NULL;   /* the test shut the listener down */
      g_mutex_lock (&server->lock);
      server->accepted++;
      g_mutex_unlock (&server->lock);
      if (server->hold || server->gate > 0)
        {
          g_mutex_lock (&server->lock);
          g_ptr_array_add (server->held, GINT_TO_POINTER (fd));
          g_mutex_unlock (&server->lock);
          if (server->gate == 0 || server->held->len < server->gate)
            continue;
          /* All of them are in: serve each once the test says so. */
          while (!g_atomic_int_get (&server->open))
            g_usleep (1000);
          for (guint i = 0; i < server->held->len; i++)
            {
              int held = GPOINTER_TO_INT (g_ptr_array_index (server->held, i));

              answer_connection (held);
              /* The answer's end (closed with the others at server_stop). */
              shutdown (held, SHUT_WR);
            }
          continue;
        }
      answer_connection (fd);
      close (fd);
    }
}

static GThread *
server_start (Server  *server,
              gboolean hold)
{
  server->listen_fd = listen_loopback (&server->port);
  server->hold = hold;
  server->held = g_ptr_array_new ();
  g_mutex_init (&server->lock);
  return g_thread_new ("server", server_thread, server);
}

static void
server_stop (Server  *server,
             GThread *thread)
{
  shutdown (server->listen_fd, SHUT_RDWR);
  g_thread_join (thread);
  close (server->listen_fd);
  for (guint i = 0; i < server->held->len; i++)
    close (GPOINTER_TO_INT (g_ptr_array_index (server->held, i)));
  g_ptr_array_unref (server->held);
  g_mutex_clear (&server->lock);
}

/* Open fds of this process now. */
static int sockets_made;

static void
make_socket_cb (PaddockPortForward *forward,
                int                 family,
                gpointer            user_data)
{
  gboolean fail = GPOINTER_TO_INT (user_data);

  sockets_made++;
  paddock_port_forward_take_inside_socket (forward, fail ? -1 : socket (family, SOCK_STREAM | SOCK_CLOEXEC, 0));
}

/* The main loop turns until @fd is readable: a listening socket the
 * forward accepts on, or a client whose connection was answered or closed
 * (poll() reports a hang-up whatever is asked; a refused connection is
 * tried on [::1] by way of the main loop, hence the turns). */
static void
iterate_until_readable (int fd)
{
  for (int i = 0; i < 5000; i++)
    {
      struct pollfd p = { .fd = fd, .events = POLLIN };

      if (poll (&p, 1, 0) == 1)
        return;
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  g_assert_not_reached ();
}

/* A client in a thread, so that the main loop can accept meanwhile. */
typedef struct {
  guint16 port;
  gsize size;
  GString *answer;
  gint done;
} Client;

static gpointer
client_thread (gpointer data)
{
  Client *client = data;
  int fd = connect_loopback (client->port);
  g_autofree char *payload = payload_new (client->size);
  for (gsize sent = 0; sent < client->size;)
    {
      ssize_t n = write (fd, payload + sent, client->size - sent);

      g_assert_cmpint (n, >, 0);
      sent += (gsize) n;
    }
  /* Half-close: the server answers only after our EOF reaches it. */
  g_assert_no_errno (shutdown (fd, SHUT_WR));
  read_to_end (fd, client->answer, NULL);
  close (fd);
  g_atomic_int_set (&client->done, 1);
  return NULL;
}

static void
test_bytes_and_half_close (void)
{
  Server server = { 0, };
  GThread *thread = server_start (&server, FALSE);
  guint16 lease_port;
  int lease_fd = listen_loopback (&lease_port);
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockPortForward) forward = paddock_port_forward_new (lease_fd, server.port, make_socket_cb,
                                                                    GINT_TO_POINTER (FALSE), &error);
  gsize sizes[] = { 1, 100000, 8 * 1024 * 1024 };

  g_assert_no_error (error);
  for (gsize i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      Client client = { lease_port, sizes[i], g_string_new (NULL), 0 };
      GThread *c = g_thread_new ("client", client_thread, &client);
      g_autofree char *expected = expected_answer (sizes[i]);

      while (!g_atomic_int_get (&client.done))
        {
          g_main_context_iteration (NULL, FALSE);
          g_usleep (500);
        }
      g_thread_join (c);
      /* The worker lets go of a finished connection right after the last
       * bytes; wait for it rather than race it. */
      while (paddock_port_forward_get_n_connections (forward) > 0)
        g_usleep (500);
      g_assert_cmpstr (client.answer->str, ==, expected);
      g_string_free (client.answer, TRUE);
    }
  g_assert_cmpuint (paddock_port_forward_get_n_connections (forward), ==, 0);
  paddock_port_forward_stop (forward);
  server_stop (&server, thread);
  close (lease_fd);
}

/* Pages held by this process's pipes, each pipe counted once (both its
 * ends are open here). */
static guint
pipe_pages_held (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  const char *name;
  guint pages = 0;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename ("/proc/self/fd", name, NULL);
      g_autofree char *target = g_file_read_link (path, NULL);
      int size;

      if (target == NULL || !g_str_has_prefix (target, "pipe:") || g_hash_table_contains (seen, target))
        continue;
      g_hash_table_add (seen, g_steal_pointer (&target));
      size = fcntl (atoi (name), F_GETPIPE_SZ);
      if (size > 0)
        pages += (guint) ((size + sysconf (_SC_PAGESIZE) - 1) / sysconf (_SC_PAGESIZE));
    }
  return pages;
}

/* Many connections at once, more than the pipe budget could give enlarged
 * pipes to: every one carries its bytes whole, and the pipes of the
 * process never hold more pages than the budget. */
static void
test_many_connections_within_pipe_budget (void)
{
  enum { N = 64, SIZE = 200000 };
  Server server = { 0, };
  GThread *thread;
  guint16 lease_port;
  int lease_fd = listen_loopback (&lease_port);
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockPortForward) forward = NULL;
  Client clients[N];
  GThread *threads[N];
  g_autofree char *expected = expected_answer (SIZE);
  guint held_at_peak;

  server.gate = N;
  thread = server_start (&server, FALSE);
  forward = paddock_port_forward_new (lease_fd, server.port, make_socket_cb, GINT_TO_POINTER (FALSE), &error);
  g_assert_no_error (error);
  paddock_port_forward_set_max_connections (forward, N);
  for (guint i = 0; i < N; i++)
    {
      clients[i] = (Client) { lease_port, SIZE, g_string_new (NULL), 0 };
      threads[i] = g_thread_new ("client", client_thread, &clients[i]);
    }

  /* Every connection forwarded and held open inside: the peak. */
  for (;;)
    {
      guint accepted;

      g_mutex_lock (&server.lock);
      accepted = server.accepted;
      g_mutex_unlock (&server.lock);
      if (accepted == N)
        break;
      g_assert_cmpuint (paddock_port_forward_get_n_refused (forward), ==, 0);
      g_main_context_iteration (NULL, FALSE);
      g_usleep (500);
    }
  g_assert_cmpuint (paddock_port_forward_get_n_connections (forward), ==, N);
  held_at_peak = pipe_pages_held ();
  g_test_message ("%d connections: their pipes hold %u pages (budget %d)", N, held_at_peak,
                  PADDOCK_PORT_FORWARD_PIPE_BUDGET_PAGES);
  g_assert_cmpuint (held_at_peak, <=, PADDOCK_PORT_FORWARD_PIPE_BUDGET_PAGES);
  g_assert_cmpuint (paddock_port_forward_get_pipe_pages (), <=, PADDOCK_PORT_FORWARD_PIPE_BUDGET_PAGES);

  g_atomic_int_set (&server.open, 1);
  for (guint i = 0; i < N; i++)
    {
      while (!g_atomic_int_get (&clients[i].done))
        {
          g_main_context_iteration (NULL, FALSE);
          g_usleep (500);
        }
      g_thread_join (threads[i]);
      g_assert_cmpstr (clients[i].answer->str, ==, expected);
      g_string_free (clients[i].answer, TRUE);
    }
  g_assert_cmpuint (paddock_port_forward_get_n_refused (forward), ==, 0);
  paddock_port_forward_stop (forward);
  g_assert_cmpuint (paddock_port_forward_get_pipe_pages (), ==, 0);
  server_stop (&server, thread);
  close (lease_fd);
}

static void
test_bound_refuses_and_stop_closes (void)
{
  guint fds_before = net_test_count_fds ();
  Server server = { 0, };
  GThread *thread = server_start (&server, TRUE);
  guint16 lease_port;
  int lease_fd = listen_loopback (&lease_port);
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockPortForward) forward = paddock_port_forward_new (lease_fd, server.port, make_socket_cb,
                                                                    GINT_TO_POINTER (FALSE), &error);
  int held[2];
  int extra;
  char byte;

  g_assert_no_error (error);
  paddock_port_forward_set_max_connections (forward, 2);
  for (int i = 0; i < 2; i++)
    {
      held[i] = connect_loopback (lease_port);
      iterate_until_readable (lease_fd);
      while (paddock_port_forward_get_n_connections (forward) < (guint) i + 1)
        g_main_context_iteration (NULL, FALSE);
    }
  /* Both reach the server and stay open. */
  for (int i = 0; i < 200; i++)
    {
      guint accepted;

      g_mutex_lock (&server.lock);
      accepted = server.accepted;
      g_mutex_unlock (&server.lock);
      if (accepted == 2)
        break;
      g_usleep (10000);
    }
  g_assert_cmpuint (server.accepted, ==, 2);

  /* The third: accepted and closed at once, counted. */
  extra = connect_loopback (lease_port);
  while (paddock_port_forward_get_n_refused (forward) == 0)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpint (read (extra, &byte, 1), <=, 0);
  close (extra);
  g_assert_cmpuint (paddock_port_forward_get_n_connections (forward), ==, 2);

  /* Stop: the held connections end (EOF or reset), nothing is left. */
  paddock_port_forward_stop (forward);
  g_assert_cmpuint (paddock_port_forward_get_n_connections (forward), ==, 0);
  for (int i = 0; i < 2; i++)
    {
      g_assert_cmpint (read (held[i], &byte, 1), <=, 0);
      close (held[i]);
    }
  g_assert_cmpuint (paddock_port_forward_get_n_refused (forward), ==, 1);
  g_clear_object (&forward);
  server_stop (&server, thread);
  close (lease_fd);
  /* Nothing of the forward is left open: its sockets, pipes, epoll, eventfd. */
  g_assert_cmpuint (net_test_count_fds (), ==, fds_before);
}

static void
test_no_socket_inside_closes_client (void)
{
  guint16 lease_port;
  int lease_fd = listen_loopback (&lease_port);
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockPortForward) forward = NULL;
  int client;
  char byte;

  /* A port nothing listens on inside: connect fails, the client is closed. */
  {
    guint16 dead_port;
    int dead = listen_loopback (&dead_port);

    close (dead);
    sockets_made = 0;
    forward = paddock_port_forward_new (lease_fd, dead_port, make_socket_cb, GINT_TO_POINTER (FALSE), &error);
  }
  g_assert_no_error (error);
  client = connect_loopback (lease_port);
  iterate_until_readable (lease_fd);
  iterate_until_readable (client);
  g_assert_cmpint (read (client, &byte, 1), <=, 0);
  /* 127.0.0.1, then [::1] (where the host has IPv6). */
  g_assert_cmpint (sockets_made, >=, 1);
  close (client);
  while (paddock_port_forward_get_n_connections (forward) > 0)
    g_usleep (1000);
  g_clear_object (&forward);

  /* The sandbox could not make a socket: the client is closed too. */
  sockets_made = 0;
  forward = paddock_port_forward_new (lease_fd, 1, make_socket_cb, GINT_TO_POINTER (TRUE), &error);
  g_assert_no_error (error);
  client = connect_loopback (lease_port);
  iterate_until_readable (lease_fd);
  g_main_context_iteration (NULL, FALSE);
  g_assert_cmpint (sockets_made, ==, 1);
  g_assert_cmpint (read (client, &byte, 1), <=, 0);
  g_assert_cmpuint (paddock_port_forward_get_n_connections (forward), ==, 0);
  close (client);
  close (lease_fd);
}

/* A server inside that listens on [::1] only: 127.0.0.1 refuses, the
 * forward asks for an IPv6 socket and gets through.
 *
 * The kernel lets 127.0.0.1 and [::1] hold the same port number for
 * different sockets, so the test holds 127.0.0.1 at the server's port
 * itself, bound and not listening: a connection there is refused, and
 * nothing else can listen there — not another test, and not this test's
 * own lease, which would otherwise get the forward connecting to itself
 * (in a session the two are in different network namespaces). */
static void
test_server_on_ipv6_loopback (void)
{
  guint16 lease_port = 0;
  int lease_fd;
  int server6 = -1;
  int guard4 = -1;
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockPortForward) forward = NULL;
  Server server = { 0, };
  GThread *thread;
  Client client;
  GThread *c;

  lease_fd = listen_loopback (&lease_port);
  for (guint attempt = 0; attempt < 100 && guard4 < 0; attempt++)
    {
      guint16 port = 0;

      if (server6 >= 0)
        close (server6);
      server6 = bind_loopback (AF_INET6, &port, 16);
      if (server6 < 0 && (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL))
        {
          g_test_skip ("no IPv6 loopback here");
          close (lease_fd);
          return;
        }
      g_assert_no_errno (server6 < 0 ? -1 : 0);
      server.port = port;
      guard4 = bind_loopback (AF_INET, &port, 0);
    }
  g_assert_cmpint (guard4, >=, 0);
  g_assert_cmpuint (server.port, !=, lease_port);
  /* The server thread serves whatever listening socket it is given. */
  server.listen_fd = server6;
  server.held = g_ptr_array_new ();
  g_mutex_init (&server.lock);
  thread = g_thread_new ("server", server_thread, &server);

  sockets_made = 0;
  forward = paddock_port_forward_new (lease_fd, server.port, make_socket_cb, GINT_TO_POINTER (FALSE), &error);
  g_assert_no_error (error);
  client = (Client) { lease_port, 300000, g_string_new (NULL), 0 };
  c = g_thread_new ("client", client_thread, &client);
  while (!g_atomic_int_get (&client.done))
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (500);
    }
  g_thread_join (c);
  {
    g_autofree char *expected = expected_answer (300000);

    g_assert_cmpstr (client.answer->str, ==, expected);
  }
  g_assert_cmpint (sockets_made, ==, 2);
  g_string_free (client.answer, TRUE);
  paddock_port_forward_stop (forward);
  server_stop (&server, thread);
  close (guard4);
  close (lease_fd);
}

/* A socket func that keeps requests to answer later, fails the one
 * numbered @fail_request at once (as the daemon does when it cannot even
 * send the request), or answers at once with a socket of @unfit_family. */
typedef struct {
  GArray *pending;     /* the families asked for, not answered yet */
  guint asked;
  guint fail_request;  /* 1-based; 0: none */
  int unfit_family;    /* non-zero: answer at once with a socket of this family and type */
  int unfit_type;
} Deferred;

static void
deferred_socket_cb (PaddockPortForward *forward,
                    int                 family,
                    gpointer            user_data)
{
  Deferred *deferred = user_data;

  deferred->asked++;
  if (deferred->unfit_family != 0)
    paddock_port_forward_take_inside_socket (forward, socket (deferred->unfit_family,
                                                              deferred->unfit_type | SOCK_CLOEXEC, 0));
  else if (deferred->asked == deferred->fail_request)
    paddock_port_forward_take_inside_socket (forward, -1);
  else
    g_array_append_val (deferred->pending, family);
}

/* The second request fails at once while the first is still in flight:
 * the second connection is the one closed, and the socket answering the
 * first goes to the first connection, which carries its bytes. */
static void
test_answer_goes_to_its_connection (void)
{
  Server server = { 0, };
  GThread *thread = server_start (&server, FALSE);
  guint16 lease_port;
  int lease_fd = listen_loopback (&lease_port);
  g_autoptr(GError) error = NULL;
  Deferred deferred = { g_array_new (FALSE, FALSE, sizeof (int)), 0, 2, 0, 0 };
  g_autoptr(PaddockPortForward) forward = paddock_port_forward_new (lease_fd, server.port, deferred_socket_cb,
                                                                    &deferred, &error);
  Client first = { lease_port, 100000, g_string_new (NULL), 0 };
  GThread *c;
  int second;
  char byte;

  g_assert_no_error (error);
  c = g_thread_new ("client", client_thread, &first);
  while (deferred.asked < 1)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (500);
    }
  second = connect_loopback (lease_port);
  while (deferred.asked < 2)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (500);
    }
  /* The second connection: closed, with nothing read. */
  iterate_until_readable (second);
  g_assert_cmpint (read (second, &byte, 1), <=, 0);
  close (second);
  g_assert_cmpuint (paddock_port_forward_get_n_connections (forward), ==, 1);

  /* The first request's answer arrives now. */
  g_assert_cmpuint (deferred.pending->len, ==, 1);
  paddock_port_forward_take_inside_socket (forward, socket (g_array_index (deferred.pending, int, 0),
                                                            SOCK_STREAM | SOCK_CLOEXEC, 0));
  while (!g_atomic_int_get (&first.done))
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (500);
    }
  g_thread_join (c);
  {
    g_autofree char *expected = expected_answer (100000);

    g_assert_cmpstr (first.answer->str, ==, expected);
  }
  g_string_free (first.answer, TRUE);
  paddock_port_forward_stop (forward);
  g_array_unref (deferred.pending);
  server_stop (&server, thread);
  close (lease_fd);
}

/* A socket that is not what was asked for (an IPv6 one for 127.0.0.1, a
 * UDP one) is not used: the client is closed, and nothing is left open. */
static void
test_unfit_socket_not_used (void)
{
  static const int unfit[][2] = { { AF_INET6, SOCK_STREAM }, { AF_INET, SOCK_DGRAM }, { AF_UNIX, SOCK_STREAM } };
  Server server = { 0, };
  GThread *thread = server_start (&server, FALSE);
  guint16 lease_port;
  int lease_fd = listen_loopback (&lease_port);

  for (gsize i = 0; i < G_N_ELEMENTS (unfit); i++)
    {
      guint fds_before = net_test_count_fds ();
      g_autoptr(GError) error = NULL;
      Deferred deferred = { g_array_new (FALSE, FALSE, sizeof (int)), 0, 0, unfit[i][0], unfit[i][1] };
      g_autoptr(PaddockPortForward) forward = paddock_port_forward_new (lease_fd, server.port, deferred_socket_cb,
                                                                        &deferred, &error);
      int client;
      char byte;

      g_assert_no_error (error);
      client = connect_loopback (lease_port);
      iterate_until_readable (client);
      g_assert_cmpint (read (client, &byte, 1), <=, 0);
      g_assert_cmpuint (deferred.asked, ==, 1);
      g_assert_cmpuint (paddock_port_forward_get_n_connections (forward), ==, 0);
      close (client);
      g_clear_object (&forward);
      g_array_unref (deferred.pending);
      g_assert_cmpuint (net_test_count_fds (), ==, fds_before);
    }
  /* None of them reached the server. */
  g_assert_cmpuint (server.accepted, ==, 0);
  server_stop (&server, thread);
  close (lease_fd);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/port-forward/bytes-and-half-close", test_bytes_and_half_close);
  g_test_add_func ("/port-forward/bound-refuses-and-stop-closes", test_bound_refuses_and_stop_closes);
  g_test_add_func ("/port-forward/no-socket-inside-closes-client", test_no_socket_inside_closes_client);
  g_test_add_func ("/port-forward/many-connections-within-pipe-budget", test_many_connections_within_pipe_budget);
  g_test_add_func ("/port-forward/server-on-ipv6-loopback", test_server_on_ipv6_loopback);
  g_test_add_func ("/port-forward/answer-goes-to-its-connection", test_answer_goes_to_its_connection);
  g_test_add_func ("/port-forward/unfit-socket-not-used", test_unfit_socket_not_used);
  return g_test_run ();
}
