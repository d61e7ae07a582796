/* bench-network.c — a small request's round trip through the session proxy vs direct loopback
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Prints, in one run on this machine, with 8 clients at once each making
 * one small HTTP request after another (a new connection each, on both
 * sides: neither the proxied nor the direct client keeps its connection,
 * as the proxy serves one request per client connection):
 *  - the round trip through PaddockProxy (the daemon's code: head parsed
 *    and judged against the allowlist, origin connected, response streamed
 *    back, each record journalled to a file as the daemon does), and
 *  - the same request straight to the origin over loopback (the peer),
 *  - and, as the floor under the proxy, the same hop through a minimal
 *    one-thread epoll relay (bench-floor-relay.c: no policy, parser or
 *    journal), so that what the second loopback connection and one thread
 *    cost with many clients is told apart from what the proxy adds;
 * medians of 7 interleaved rounds, with the ratio, next to ANCHORS.md's
 * pVisor figures (native 0.69 ms, through its host proxy 10.09 ms).
 *
 * The proxy runs here on a thread of its own rather than in paddockd: in a
 * session the agent's connection goes to a socket on the session's
 * loopback whose other end the daemon accepts, a loopback connection
 * either way, so what differs from here is only the daemon's other work.
 *
 * The origin is an epoll server on two threads that, like any HTTP/1.1
 * server, keeps a connection open after a response framed by
 * Content-Length unless the request said "Connection: close"; the direct
 * client closes after reading the response, and the
 * proxy keeps its origin connections for the next request (its own
 * keep-alive pool), which is what a proxy in front of real servers does.
 */

#include "config.h"

#include "bench-common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench-floor-relay.h"
#include "paddock-net-journal.h"
#include "paddock-proxy.h"

#define CLIENTS          8      /* at once, unless --clients N */
#define MAX_CLIENTS      64
#define ROUNDS           11
#define PER_CLIENT       300    /* for 8 clients; the same total for other counts */
#define ORIGIN_WORKERS   2
#define PVISOR_NATIVE_MS 0.69
#define PVISOR_PROXY_MS  10.09

static guint per_client = PER_CLIENT;

static const char response[] =
  "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n";

/* The origin: an epoll loop per worker over the shared listener and its
 * own connections; answers each request head with "ok", keeps the
 * connection until the client closes it. */
#define ORIGIN_MAX_FD 65536
static GString *origin_buffers[ORIGIN_MAX_FD];
static int origin_stop_fd = -1;

static void
origin_drop (int epfd,
             int fd)
{
  epoll_ctl (epfd, EPOLL_CTL_DEL, fd, NULL);
  g_string_free (origin_buffers[fd], TRUE);
  origin_buffers[fd] = NULL;
  close (fd);
}

static gpointer
origin_worker (gpointer data)
{
  int listen_fd = GPOINTER_TO_INT (data);
  int epfd = epoll_create1 (EPOLL_CLOEXEC);
  struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE, .data.fd = listen_fd };
  struct epoll_event stop = { .events = EPOLLIN, .data.fd = origin_stop_fd };

  if (epfd < 0 || epoll_ctl (epfd, EPOLL_CTL_ADD, listen_fd, &ev) != 0 ||
      epoll_ctl (epfd, EPOLL_CTL_ADD, origin_stop_fd, &stop) != 0)
    g_error ("origin: epoll: %s", g_strerror (errno));

  for (;;)
    {
      struct epoll_event events[64];
      int n = epoll_wait (epfd, events, G_N_ELEMENTS (events), -1);

      for (int e = 0; e < n; e++)
        {
          int fd = events[e].data.fd;

          if (fd == origin_stop_fd)
            {
              for (int i = 0; i < ORIGIN_MAX_FD; i++)
                if (origin_buffers[i] != NULL && epoll_ctl (epfd, EPOLL_CTL_DEL, i, NULL) == 0)
                  origin_drop (epfd, i);
              close (epfd);
              return NULL;
            }
          if (fd == listen_fd)
            {
              int client;

              while ((client = accept4 (listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
                {
                  struct epoll_event cev = { .events = EPOLLIN, .data.fd = client };

                  g_assert (client < ORIGIN_MAX_FD);
                  origin_buffers[client] = g_string_new (NULL);
                  epoll_ctl (epfd, EPOLL_CTL_ADD, client, &cev);
                }
              continue;
            }

          for (;;)
            {
              char buffer[4096];
              ssize_t got = read (fd, buffer, sizeof buffer);

              if (got < 0 && errno == EAGAIN)
                break;
              if (got <= 0)
                {
                  origin_drop (epfd, fd);
                  break;
                }
              g_string_append_len (origin_buffers[fd], buffer, got);
              if (strstr (origin_buffers[fd]->str, "\r\n\r\n") != NULL)
                {
                  /* As HTTP/1.1 servers do: "Connection: close" asked, closed after. */
                  gboolean close_after = strstr (origin_buffers[fd]->str, "\r\nConnection: close\r\n") != NULL;

                  g_string_truncate (origin_buffers[fd], 0);
                  if (write (fd, response, sizeof response - 1) < 0 || close_after)
                    {
                      origin_drop (epfd, fd);
                      break;
                    }
                }
            }
        }
    }
}

typedef struct {
  GMainContext *context;
  GMainLoop    *loop;
  int           listen_fd;
  guint16       origin_port;
  char         *journal_path;
  GMutex        lock;
  GCond         ready;
  gboolean      started;
  guint64       records;
} ProxyThread;

static void
record_added_cb (PaddockProxy     *proxy,
                 PaddockNetRecord *record,
                 gpointer          user_data)
{
  PaddockNetJournal *journal = user_data;

  if (paddock_net_record_get_verdict (record) != PADDOCK_NET_VERDICT_ALLOWED)
    g_error ("the proxy refused a bench request: %s", paddock_net_record_get_error (record));
  paddock_net_journal_append (journal, record);
}

static gpointer
proxy_thread (gpointer data)
{
  ProxyThread *t = data;
  g_autoptr(PaddockDomainRules) rules = paddock_domain_rules_new ();
  g_autoptr(GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(PaddockProxy) proxy = NULL;
  g_autoptr(PaddockNetJournal) journal = NULL;
  g_autoptr(GError) error = NULL;

  g_main_context_push_thread_default (t->context);
  if (!paddock_domain_rules_add_allow (rules, "origin.test", &error) ||
      !paddock_domain_rules_add_port (rules, t->origin_port, &error))
    g_error ("%s", error->message);
  proxy = paddock_proxy_new (t->listen_fd, rules, &error);
  if (proxy == NULL)
    g_error ("%s", error->message);
  g_hash_table_insert (names, (gpointer) "origin.test", (gpointer) "127.0.0.1");
  paddock_proxy_set_resolver_override (proxy, names);
  /* As the daemon: the journal keeps the records the proxy emits. */
  journal = paddock_net_journal_new (t->journal_path, PADDOCK_NET_JOURNAL_DEFAULT_MAX_RECORDS,
                                     PADDOCK_NET_JOURNAL_DEFAULT_MAX_FILE_BYTES);
  g_signal_connect (proxy, "record-added", G_CALLBACK (record_added_cb), journal);

  g_mutex_lock (&t->lock);
  t->started = TRUE;
  g_cond_signal (&t->ready);
  g_mutex_unlock (&t->lock);

  g_main_loop_run (t->loop);
  paddock_proxy_stop (proxy);
  t->records = paddock_net_journal_get_last_seq (journal);
  g_main_context_pop_thread_default (t->context);
  return NULL;
}

typedef struct {
  guint16   port;        /* where to connect: the proxy or the origin */
  char     *request;
  GArray   *latencies;   /* double, ms */
  gboolean  failed;
} Client;

static gpointer
client_thread (gpointer data)
{
  Client *c = data;
  struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons (c->port),
                              .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  gsize request_len = strlen (c->request);

  for (guint i = 0; i < per_client; i++)
    {
      gint64 start = g_get_monotonic_time ();
      int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      int one = 1;
      char buffer[1024];
      gsize have = 0;
      ssize_t n;
      double ms;

      setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      if (fd < 0 || connect (fd, (struct sockaddr *) &addr, sizeof addr) != 0 ||
          write (fd, c->request, request_len) != (ssize_t) request_len)
        {
          c->failed = TRUE;
          if (fd >= 0)
            close (fd);
          return NULL;
        }
      /* The whole response: its head and Content-Length bytes (or until
       * the server closes); then this client closes, on both sides. */
      for (;;)
        {
          const char *end, *length;

          n = read (fd, buffer + have, sizeof buffer - 1 - have);
          if (n <= 0)
            break;
          have += (gsize) n;
          buffer[have] = '\0';
          if ((end = strstr (buffer, "\r\n\r\n")) != NULL &&
              (length = strstr (buffer, "Content-Length: ")) != NULL && length < end &&
              have >= (gsize) (end + 4 - buffer) + g_ascii_strtoull (length + 16, NULL, 10))
            break;
          if (have == sizeof buffer - 1)
            break;
        }
      buffer[have] = '\0';
      close (fd);
      ms = (double) (g_get_monotonic_time () - start) / 1000.0;
      if (!g_str_has_prefix (buffer, "HTTP/1.1 200 OK") || strstr (buffer, "\r\n\r\nok\n") == NULL)
        {
          c->failed = TRUE;
          return NULL;
        }
      g_array_append_val (c->latencies, ms);
    }
  return NULL;
}

/* One round: @n_clients clients at once, per_client requests each; the
 * median of every request's round trip. */
static double
run_round (guint16     port,
           const char *request,
           guint       n_clients)
{
  Client clients[MAX_CLIENTS];
  GThread *threads[MAX_CLIENTS];
  g_autoptr(GArray) all = g_array_new (FALSE, FALSE, sizeof (double));

  g_assert (n_clients <= MAX_CLIENTS);
  for (guint i = 0; i < n_clients; i++)
    {
      clients[i] = (Client) { .port = port, .request = (char *) request,
                              .latencies = g_array_new (FALSE, FALSE, sizeof (double)) };
      threads[i] = g_thread_new ("client", client_thread, &clients[i]);
    }
  for (guint i = 0; i < n_clients; i++)
    {
      g_thread_join (threads[i]);
      if (clients[i].failed)
        g_error ("a request failed (port %u)", port);
      g_array_append_vals (all, clients[i].latencies->data, clients[i].latencies->len);
      g_array_unref (clients[i].latencies);
    }
  return bench_median (all);
}

int
main (int    argc,
      char **argv)
{
  ProxyThread t = { 0 };
  g_autoptr(GArray) proxy_rounds = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) direct_rounds = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) proxy_serial_rounds = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) direct_serial_rounds = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) floor_rounds = g_array_new (FALSE, FALSE, sizeof (double));
  g_autofree char *dir = NULL;
  g_autofree char *proxied_request = NULL;
  g_autofree char *direct_request = NULL;
  g_autoptr(GError) error = NULL;
  GThread *proxy = NULL;
  GThread *origins[ORIGIN_WORKERS];
  guint16 proxy_port;
  int origin_fd;
  double proxy_ms, direct_ms, proxy_serial_ms, direct_serial_ms, floor_ms;
  guint16 floor_port;
  guint n_clients = CLIENTS;
  guint rounds = ROUNDS;

  /* bench/peers runs it with 8 and with 64 clients (issue #23). */
  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--clients") && i + 1 < argc)
        n_clients = (guint) g_ascii_strtoull (argv[++i], NULL, 10);
      else if (g_str_equal (argv[i], "--rounds") && i + 1 < argc)
        rounds = (guint) g_ascii_strtoull (argv[++i], NULL, 10);
      else
        {
          g_printerr ("usage: %s [--clients 1-%d] [--rounds 1-1000]\n", argv[0], MAX_CLIENTS);
          return 2;
        }
    }
  if (n_clients == 0 || n_clients > MAX_CLIENTS || rounds == 0 || rounds > 1000)
    {
      g_printerr ("bench-network: --clients takes 1 to %d, --rounds 1 to 1000\n", MAX_CLIENTS);
      return 2;
    }
  per_client = MAX (PER_CLIENT * CLIENTS / n_clients, 20);

  origin_fd = bench_listen_loopback (512, &t.origin_port);
  origin_stop_fd = eventfd (0, EFD_CLOEXEC);
  if (origin_stop_fd < 0 || fcntl (origin_fd, F_SETFL, O_NONBLOCK) != 0)
    g_error ("origin: %s", g_strerror (errno));
  for (guint i = 0; i < ORIGIN_WORKERS; i++)
    origins[i] = g_thread_new ("origin", origin_worker, GINT_TO_POINTER (origin_fd));

  dir = g_dir_make_tmp ("bench-network-XXXXXX", &error);
  if (dir == NULL)
    g_error ("%s", error->message);
  t.journal_path = g_build_filename (dir, "network.jsonl", NULL);
  t.listen_fd = bench_listen_loopback (512, &proxy_port);
  t.context = g_main_context_new ();
  t.loop = g_main_loop_new (t.context, FALSE);
  g_mutex_init (&t.lock);
  g_cond_init (&t.ready);
  proxy = g_thread_new ("proxy", proxy_thread, &t);
  g_mutex_lock (&t.lock);
  while (!t.started)
    g_cond_wait (&t.ready, &t.lock);
  g_mutex_unlock (&t.lock);

  proxied_request = g_strdup_printf ("GET http://origin.test:%u/ HTTP/1.1\r\nHost: origin.test:%u\r\n"
                                     "User-Agent: bench\r\n\r\n", t.origin_port, t.origin_port);
  direct_request = g_strdup_printf ("GET / HTTP/1.1\r\nHost: origin.test:%u\r\nUser-Agent: bench\r\n\r\n",
                                    t.origin_port);

  /* The same hop by a minimal one-thread relay (bench-floor-relay.c). */
  floor_port = bench_floor_relay_start (t.origin_port, direct_request);

  /* A warm-up of each, then interleaved rounds: the machine is shared. */
  run_round (proxy_port, proxied_request, n_clients);
  run_round (t.origin_port, direct_request, n_clients);
  run_round (floor_port, proxied_request, n_clients);
  for (guint r = 0; r < rounds; r++)
    {
      double p = run_round (proxy_port, proxied_request, n_clients);
      double d = run_round (t.origin_port, direct_request, n_clients);
      double ps = run_round (proxy_port, proxied_request, 1);
      double ds = run_round (t.origin_port, direct_request, 1);
      double f = run_round (floor_port, proxied_request, n_clients);

      g_array_append_val (proxy_rounds, p);
      g_array_append_val (direct_rounds, d);
      g_array_append_val (proxy_serial_rounds, ps);
      g_array_append_val (direct_serial_rounds, ds);
      g_array_append_val (floor_rounds, f);
    }
  proxy_ms = bench_median (proxy_rounds);
  direct_ms = bench_median (direct_rounds);
  proxy_serial_ms = bench_median (proxy_serial_rounds);
  direct_serial_ms = bench_median (direct_serial_rounds);
  floor_ms = bench_median (floor_rounds);
  bench_floor_relay_stop ();

  g_main_loop_quit (t.loop);
  g_thread_join (proxy);
  {
    guint64 one = 1;

    if (write (origin_stop_fd, &one, sizeof one) != sizeof one)
      g_error ("cannot stop the origin: %s", g_strerror (errno));
  }
  for (guint i = 0; i < ORIGIN_WORKERS; i++)
    g_thread_join (origins[i]);
  close (origin_fd);
  close (origin_stop_fd);

  g_print ("bench/network - %u clients at once, %u requests each per round; medians of %u interleaved rounds\n\n",
           n_clients, per_client, rounds);
  g_print ("%-52s %12s %24s %8s\n", "what", "paddock", "peer (same run)", "ratio");
  g_print ("%-52s %9.3f ms %18.3f ms %7.2fx\n", "small request round trip: proxy vs direct loopback",
           proxy_ms, direct_ms, proxy_ms / direct_ms);
  g_print ("%-52s %9.3f ms %18.3f ms %7.2fx\n", "  the same with 1 client (no queueing)",
           proxy_serial_ms, direct_serial_ms, proxy_serial_ms / direct_serial_ms);
  g_print ("%-52s %9.3f ms %18.3f ms %7.2fx\n", "floor: a minimal one-thread C relay vs direct",
           floor_ms, direct_ms, floor_ms / direct_ms);
  g_print ("%-52s %9.3f ms %18.3f ms %7.2fx\n", "proxy vs that floor (the proxy's own cost)",
           proxy_ms, floor_ms, proxy_ms / floor_ms);
  g_print ("%-52s %9.2f ms %18.2f ms %7.2fx\n", "pVisor (ANCHORS.md): host proxy vs native",
           PVISOR_PROXY_MS, PVISOR_NATIVE_MS, PVISOR_PROXY_MS / PVISOR_NATIVE_MS);
  g_print ("\ntarget: proxy < 3x direct: %s; records journalled: %" G_GUINT64_FORMAT "\n",
           proxy_ms < 3 * direct_ms ? "met" : "MISSED", t.records);

  g_unlink (t.journal_path);
  {
    g_autofree char *old = g_strconcat (t.journal_path, ".1", NULL);
    g_unlink (old);
  }
  g_rmdir (dir);
  g_main_loop_unref (t.loop);
  g_main_context_unref (t.context);
  g_free (t.journal_path);
  return 0;
}
