/* bench-forward.c — throughput through a forwarded leased port vs direct loopback
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One TCP stream of SIZE bytes, uploaded (client → server, then a one-byte
 * acknowledgement) and downloaded (server → client until EOF):
 *  - through PaddockPortForward (the daemon's code: accept on the lease's
 *    socket, a socket for the far side from the socket func, connect,
 *    splice both ways on the forward's worker thread);
 *  - straight to the same loopback server.
 * The far side's socket is made by this process, in the host's namespace,
 * where a session's is made by its sandbox's pid 1 inside the session's:
 * the bytes take the same path (two loopback TCP connections and the
 * forward's pipes) except that the session's loopback is its own.
 * Rounds of forwarded and direct alternate (the machine is shared);
 * medians of 7, with the ratio.
 *
 * Then the same through a real session: paddockd on a private bus, a
 * `--net none` session with a leased port whose agent is a small Python
 * server binding 127.0.0.1:$PORT in the session's own namespace; the peer
 * is the same script on the host's loopback, reached directly. Besides
 * the streams, a connection's round trip (connect, one byte each way,
 * close), which through the session includes pid 1 making the socket.
 * Skipped (said so) where no sandboxed session can run.
 *
 * Exits non-zero if a transfer comes back short (correctness, not speed).
 */

#include "config.h"

#include "bench-common.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib/gstdio.h>

#include "paddock-port-forward.h"
#include "paddock-test-client.h"
#include "paddock-test-daemon.h"

#define ROUNDS      7
#define BUFFER_SIZE (256 * 1024)

static guint64 transfer_size = 512 * 1024 * 1024;
static guint rounds = ROUNDS;
/* CPU seconds this whole process spent in the last transfer(): in-process,
 * the client, the server and the forward's worker are all ours. */
static double last_transfer_cpu;

static double
process_cpu_seconds (void)
{
  struct rusage usage;

  getrusage (RUSAGE_SELF, &usage);
  return (double) usage.ru_utime.tv_sec + (double) usage.ru_stime.tv_sec +
         (double) (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / G_USEC_PER_SEC;
}

static gboolean
write_all (int         fd,
           const char *buf,
           gsize       n)
{
  while (n > 0)
    {
      ssize_t w = write (fd, buf, n);

      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        return FALSE;
      buf += w;
      n -= (gsize) w;
    }
  return TRUE;
}

/* Reads to EOF or @limit bytes; returns the count. */
static guint64
read_count (int     fd,
            guint64 limit)
{
  static __thread char buf[BUFFER_SIZE];
  guint64 total = 0;

  while (total < limit)
    {
      ssize_t r = read (fd, buf, MIN (sizeof buf, limit - total));

      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      total += (guint64) r;
    }
  return total;
}

/* The server: per connection one byte says upload ('u') or download ('d'). */
static gpointer
server_thread (gpointer data)
{
  int listen_fd = GPOINTER_TO_INT (data);
  static char buf[BUFFER_SIZE];

  memset (buf, 'z', sizeof buf);
  for (;;)
    {
      int fd = accept4 (listen_fd, NULL, NULL, SOCK_CLOEXEC);
      char mode = 0;

      if (fd < 0)
        continue;
      if (read (fd, &mode, 1) == 1 && mode == 'u')
        {
          guint64 got = read_count (fd, transfer_size);
          char ack = got == transfer_size ? 'k' : 'x';

          write_all (fd, &ack, 1);
        }
      else if (mode == 'd')
        {
          for (guint64 sent = 0; sent < transfer_size; sent += sizeof buf)
            if (!write_all (fd, buf, MIN (sizeof buf, transfer_size - sent)))
              break;
        }
      close (fd);
    }
  return NULL;
}

/* The session's agent, and the peer on the host: the same protocol as
 * server_thread, plus 'p' (answer "r" and close) for round trips. */
static const char server_script[] =
  "import os, socket, sys\n"
  "size = int(sys.argv[1])\n"
  "s = socket.socket()\n"
  "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
  "s.bind(('127.0.0.1', int(os.environ['PORT'])))\n"
  "s.listen(64)\n"
  "buf = bytearray(262144)\n"
  "payload = b'z' * 262144\n"
  "while True:\n"
  "    c, _ = s.accept()\n"
  "    mode = c.recv(1)\n"
  "    if mode == b'u':\n"
  "        n = 0\n"
  "        while n < size:\n"
  "            r = c.recv_into(buf)\n"
  "            if not r:\n"
  "                break\n"
  "            n += r\n"
  "        c.sendall(b'k' if n == size else b'x')\n"
  "    elif mode == b'd':\n"
  "        sent = 0\n"
  "        while sent < size:\n"
  "            c.sendall(payload[:min(len(payload), size - sent)])\n"
  "            sent += len(payload)\n"
  "    elif mode == b'p':\n"
  "        c.sendall(b'r')\n"
  "    c.close()\n";

/* One round trip ('p'): connect, a byte each way, close; µs, or < 0 when
 * no answer came (nothing listening yet). */
static double
round_trip (guint16 port)
{
  struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons (port),
                              .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  gint64 start = g_get_monotonic_time ();
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  char answer = 0;
  gboolean ok;

  ok = fd >= 0 && connect (fd, (struct sockaddr *) &addr, sizeof addr) == 0 &&
       write (fd, "p", 1) == 1 && read (fd, &answer, 1) == 1 && answer == 'r';
  if (fd >= 0)
    close (fd);
  return ok ? (double) (g_get_monotonic_time () - start) : -1;
}

/* Seconds for one transfer in @mode to @port; < 0 when it came back short. */
static double
transfer (guint16 port,
          char    mode)
{
  static char buf[BUFFER_SIZE];
  struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons (port),
                              .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  gint64 start = g_get_monotonic_time ();
  double cpu_start = process_cpu_seconds ();
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  gboolean whole = FALSE;

  if (fd < 0 || connect (fd, (struct sockaddr *) &addr, sizeof addr) != 0)
    paddock_test_bail ("cannot connect to %u: %s", port, g_strerror (errno));
  if (!write_all (fd, &mode, 1))
    paddock_test_bail ("cannot write to %u", port);
  if (mode == 'u')
    {
      char ack = 0;

      for (guint64 sent = 0; sent < transfer_size; sent += sizeof buf)
        if (!write_all (fd, buf, MIN (sizeof buf, transfer_size - sent)))
          break;
      whole = read (fd, &ack, 1) == 1 && ack == 'k';
    }
  else
    whole = read_count (fd, G_MAXUINT64) == transfer_size;
  close (fd);
  last_transfer_cpu = process_cpu_seconds () - cpu_start;
  if (!whole)
    return -1;
  return (double) (g_get_monotonic_time () - start) / G_USEC_PER_SEC;
}

/* The socket func: where a session's sandbox makes one inside, we make one here. */
static void
make_socket_cb (PaddockPortForward *forward,
                int                 family,
                gpointer            user_data)
{
  paddock_port_forward_take_inside_socket (forward, socket (family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
}

typedef struct {
  int lease_fd;
  guint16 server_port;
  GMainContext *context;
  GMainLoop *loop;
  GMutex lock;
  GCond ready;
  PaddockPortForward *forward;
} ForwardThread;

static gpointer
forward_thread (gpointer data)
{
  ForwardThread *t = data;
  g_autoptr(GError) error = NULL;

  g_main_context_push_thread_default (t->context);
  g_mutex_lock (&t->lock);
  t->forward = paddock_port_forward_new (t->lease_fd, t->server_port, make_socket_cb, NULL, &error);
  if (t->forward == NULL)
    paddock_test_bail ("cannot forward: %s", error->message);
  g_cond_signal (&t->ready);
  g_mutex_unlock (&t->lock);
  g_main_loop_run (t->loop);
  paddock_port_forward_stop (t->forward);
  g_clear_object (&t->forward);
  g_main_context_pop_thread_default (t->context);
  return NULL;
}

/* The median round trip of 200 connections, in µs. */
static double
round_trip_median (guint16 port)
{
  g_autoptr(GArray) values = g_array_new (FALSE, FALSE, sizeof (double));

  for (guint i = 0; i < 200; i++)
    {
      double us = round_trip (port);

      if (us < 0)
        return -1;
      g_array_append_val (values, us);
    }
  return bench_median (values);
}

static gboolean
wait_for_server (guint16 port)
{
  for (guint i = 0; i < 300; i++)
    {
      if (round_trip (port) >= 0)
        return TRUE;
      g_usleep (50000);
    }
  return FALSE;
}

/* A warm-up of each, then rounds (7, or --rounds N) interleaved rounds of an upload and a
 * download through @ours and straight to @peer, in MiB/s; FALSE if a
 * transfer came back short.  With @rtt_ours and @rtt_peer, each round
 * also takes both connection round trips; with @cpu_ours and @cpu_peer,
 * the process's CPU seconds per GiB moved (upload and download). */
static gboolean
interleave_streams (guint16 ours,
                    guint16 peer,
                    GArray *up_ours,
                    GArray *up_peer,
                    GArray *down_ours,
                    GArray *down_peer,
                    GArray *rtt_ours,
                    GArray *rtt_peer,
                    GArray *cpu_ours,
                    GArray *cpu_peer)
{
  double gib = (double) transfer_size / (1024 * 1024 * 1024);
  double mib = (double) transfer_size / (1024 * 1024);
  gboolean ok = TRUE;

  transfer (ours, 'u');
  transfer (peer, 'u');
  for (guint i = 0; i < rounds; i++)
    {
      double values[4], cpu[4];
      GArray *arrays[4] = { up_ours, up_peer, down_ours, down_peer };

      /* In this order: ours and the peer's alternate. */
      values[0] = transfer (ours, 'u');
      cpu[0] = last_transfer_cpu;
      values[1] = transfer (peer, 'u');
      cpu[1] = last_transfer_cpu;
      values[2] = transfer (ours, 'd');
      cpu[2] = last_transfer_cpu;
      values[3] = transfer (peer, 'd');
      cpu[3] = last_transfer_cpu;
      if (cpu_ours != NULL)
        {
          double o = (cpu[0] + cpu[2]) / (2 * gib), p = (cpu[1] + cpu[3]) / (2 * gib);

          g_array_append_val (cpu_ours, o);
          g_array_append_val (cpu_peer, p);
        }

      for (guint j = 0; j < 4; j++)
        {
          double rate = values[j] > 0 ? mib / values[j] : 0;

          ok = ok && values[j] > 0;
          g_array_append_val (arrays[j], rate);
        }
      if (rtt_ours != NULL)
        {
          double rs = round_trip_median (ours);
          double rp = round_trip_median (peer);

          ok = ok && rs > 0 && rp > 0;
          g_array_append_val (rtt_ours, rs);
          g_array_append_val (rtt_peer, rp);
        }
    }
  return ok;
}

static void
print_streams (GArray *up_ours,
               GArray *up_peer,
               GArray *down_ours,
               GArray *down_peer)
{
  double a = bench_median (up_ours), b = bench_median (up_peer);
  double c = bench_median (down_ours), d = bench_median (down_peer);

  g_print ("%-44s %14s %22s %8s\n", "", "forwarded port", "direct loopback (peer)", "ratio");
  g_print ("%-44s %9.0f MiB/s %17.0f MiB/s %7.2fx\n", "upload (client -> server inside)", a, b, a / b);
  g_print ("%-44s %9.0f MiB/s %17.0f MiB/s %7.2fx\n", "download (server inside -> client)", c, d, c / d);
}

/* Through a real none session; FALSE if a transfer came back short. */
/* The peer's child setup: killed when the bench dies. */
static void
die_with_parent (gpointer user_data)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

/* What bench_session() made, removed when it bails (after its session). */
static PaddockTestDaemon *session_daemon;
static char *session_workspace;
static char *session_script;

static void
remove_session_files (gpointer data G_GNUC_UNUSED)
{
  g_clear_pointer (&session_daemon, paddock_test_daemon_free);
  if (session_script != NULL)
    g_unlink (session_script);
  if (session_workspace != NULL)
    g_rmdir (session_workspace);
}

static gboolean
bench_session (void)
{
  PaddockTestDaemon *daemon = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) list = NULL;
  g_autoptr(GSubprocess) peer = NULL;
  g_autofree char *workspace = g_dir_make_tmp ("paddock-bench-forward-XXXXXX", &error);
  g_autofree char *script = NULL;
  g_autofree char *size_text = g_strdup_printf ("%" G_GUINT64_FORMAT, transfer_size);
  g_autofree char *path = NULL;
  g_autofree char *peer_port_text = NULL;
  GDBusConnection *connection;
  const char *ports[] = { "web", NULL };
  const char *id;
  guint16 session_port = 0, peer_port = 0;
  g_autoptr(GArray) up_s = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) up_p = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) down_s = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) down_p = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) rtt_s = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) rtt_p = g_array_new (FALSE, FALSE, sizeof (double));
  gboolean ok = TRUE;

  if (workspace == NULL)
    paddock_test_bail ("no temporary folder: %s", error->message);
  script = g_build_filename (workspace, "serve.py", NULL);
  if (!g_file_set_contents (script, server_script, -1, &error))
    paddock_test_bail ("cannot write %s: %s", script, error->message);

  session_workspace = workspace;
  session_script = script;
  paddock_test_on_bail (remove_session_files, NULL);
  daemon = session_daemon = paddock_test_daemon_new (NULL);
  connection = paddock_test_daemon_get_connection (daemon);
  {
    const char *argv[] = { "python3", script, size_text, NULL };

    path = paddock_test_create_session_argv (connection, workspace, "safe", argv,
                                             g_variant_new_parsed ("{'net': <'none'>, 'ports': <%^as>}", ports),
                                             &error);
  }
  if (path == NULL)
    {
      g_print ("\nthrough a session: skipped, no --net none session can run here: %s\n", error->message);
      goto out;
    }
  id = strrchr (path, '/') + 1;
  list = paddock_test_list_leases (connection);
  {
    for (gsize i = 0; i < g_variant_n_children (list); i++)
      {
        g_autoptr(GVariant) lease = g_variant_get_child_value (list, i);
        const char *session = NULL;
        const char *name = NULL;

        /* Its port named "web": a none session under Landlock's TCP rules
         * also holds reserved ports, which nothing is forwarded to. */
        if (g_variant_lookup (lease, "session", "&s", &session) && g_str_equal (session, id) &&
            g_variant_lookup (lease, "name", "&s", &name) && g_str_equal (name, ports[0]))
          g_variant_lookup (lease, "port", "q", &session_port);
      }
  }

  /* The peer: the same script on the host's loopback, on a port free now. */
  close (bench_listen_loopback (64, &peer_port));
  peer_port_text = g_strdup_printf ("%u", peer_port);
  {
    g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);

    g_subprocess_launcher_setenv (launcher, "PORT", peer_port_text, TRUE);
    /* Ends with the bench, even one killed in the middle of a round. */
    g_subprocess_launcher_set_child_setup (launcher, die_with_parent, NULL, NULL);
    peer = g_subprocess_launcher_spawn (launcher, &error, "python3", script, size_text, NULL);
    if (peer == NULL)
      paddock_test_bail ("cannot start the peer server: %s", error->message);
  }
  if (session_port == 0 || !wait_for_server (session_port) || !wait_for_server (peer_port))
    {
      /* The session ran: a server that never answers through its leased
       * port is a correctness failure, not a skip. */
      g_print ("\nthrough a session: FAILED, %s\n",
               session_port == 0 ? "no port was leased to it" : "a server did not answer (inside or the peer)");
      ok = FALSE;
      goto out;
    }

  ok = interleave_streams (session_port, peer_port, up_s, up_p, down_s, down_p, rtt_s, rtt_p, NULL, NULL);

  g_print ("\nthrough a --net none session (paddockd, its sandbox, a Python server inside) vs the same server on the host\n\n");
  print_streams (up_s, up_p, down_s, down_p);
  {
    double r1 = bench_median (rtt_s), r2 = bench_median (rtt_p);

    g_print ("%-44s %11.0f us %19.0f us %7.2fx\n", "connection round trip (connect, 1 B each way)", r1, r2, r1 / r2);
  }

out:
  if (peer != NULL)
    {
      g_subprocess_force_exit (peer);
      g_subprocess_wait (peer, NULL, NULL);
    }
  paddock_test_destroy_made ();
  remove_session_files (NULL);
  session_script = session_workspace = NULL;
  return ok;
}

int
main (int    argc,
      char **argv)
{
  guint16 server_port, lease_port;
  int server_fd = bench_listen_loopback (64, &server_port);
  ForwardThread t = { 0, };
  g_autoptr(GArray) fwd_up = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) direct_up = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) fwd_down = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) direct_down = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) fwd_cpu = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) direct_cpu = g_array_new (FALSE, FALSE, sizeof (double));
  GThread *forwarder;
  double mib;
  gboolean ok = TRUE;

  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--quick"))
        transfer_size = 32 * 1024 * 1024;
      else if (g_str_equal (argv[i], "--rounds") && i + 1 < argc)
        {
          guint64 n = g_ascii_strtoull (argv[++i], NULL, 10);

          rounds = (guint) CLAMP (n, 1, 1000);
        }
      else
        g_error ("usage: bench-forward [--quick] [--rounds N]");
    }
  mib = (double) transfer_size / (1024 * 1024);
  /* A failure after the session is made destroys it, not abort(). */
  paddock_test_set_fail_mode (PADDOCK_TEST_FAIL_BAIL, "bench-forward");

  g_thread_unref (g_thread_new ("server", server_thread, GINT_TO_POINTER (server_fd)));
  t.lease_fd = bench_listen_loopback (64, &lease_port);
  t.server_port = server_port;
  t.context = g_main_context_new ();
  t.loop = g_main_loop_new (t.context, FALSE);
  g_mutex_init (&t.lock);
  g_cond_init (&t.ready);
  g_mutex_lock (&t.lock);
  forwarder = g_thread_new ("forward", forward_thread, &t);
  while (t.forward == NULL)
    g_cond_wait (&t.ready, &t.lock);
  g_mutex_unlock (&t.lock);

  ok = interleave_streams (lease_port, server_port, fwd_up, direct_up, fwd_down, direct_down, NULL, NULL,
                           fwd_cpu, direct_cpu);

  g_print ("bench/network forward - one TCP stream of %.0f MiB per transfer; medians of %u interleaved rounds\n\n",
           mib, rounds);
  print_streams (fwd_up, direct_up, fwd_down, direct_down);
  {
    /* Less at the mercy of the machine's other load than the rates: what
     * the same bytes cost in CPU (client, server and forward together). */
    double a = bench_median (fwd_cpu), b = bench_median (direct_cpu);

    g_print ("%-44s %10.3f s/GiB %16.3f s/GiB %7.2fx\n", "CPU of the process per GiB moved", a, b, a / b);
  }
  g_print ("\ntarget: forwarded >= 0.7x direct\n");
  g_main_loop_quit (t.loop);
  g_main_context_wakeup (t.context);
  g_thread_join (forwarder);
  g_main_loop_unref (t.loop);
  g_main_context_unref (t.context);
  close (t.lease_fd);

  ok = bench_session () && ok;
  if (!ok)
    g_printerr ("bench-forward: a transfer came back short, or a server did not answer\n");
  return ok ? 0 : 1;
}
