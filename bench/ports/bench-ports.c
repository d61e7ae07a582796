/* bench-ports.c — lease rate and duplicate handouts: Paddock vs the naive allocator
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Prints, in one run on this machine:
 *  - the round trip of a lease through the daemon (bind + listen + fd passed
 *    over D-Bus, then release) next to the same work done in-process (bind +
 *    listen + fd passed over a socketpair), the peer figure of ANCHORS.md;
 *  - with several processes racing, how often the allocator that in-process
 *    registries use (bind port 0, read it, close, hand it out) hands the same
 *    port to two processes, or loses it to another before its user binds it,
 *    next to Paddock's leases under the same race.
 */

#include "config.h"

#include "bench-common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gio/gunixfdlist.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-test-client.h"
#include "paddock-test-daemon.h"

#define RACE_PROCESSES    8
#define RACE_PER_PROCESS  1000
#define RACE_BATCH        50
#define RATE_ROUNDS       7
#define RATE_PER_ROUND    200
/* The pool: every racer's leases held at once, plus room for ports other
 * programs of this machine happen to use. */
#define RACE_POOL_PORTS   (RACE_PROCESSES * RACE_PER_PROCESS + 1000)

static int
bind_loopback (guint16 port,
               gboolean listening)
{
  struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons (port) };
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;

  addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  /* Servers set SO_REUSEADDR; the probe of a naive allocator does not. */
  if (listening)
    setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind (fd, (struct sockaddr *) &addr, sizeof addr) != 0 ||
      (listening && listen (fd, 128) != 0))
    {
      close (fd);
      return -1;
    }
  return fd;
}

static guint16
port_of (int fd)
{
  struct sockaddr_in addr;
  socklen_t len = sizeof addr;

  getsockname (fd, (struct sockaddr *) &addr, &len);
  return ntohs (addr.sin_port);
}

/* Lease and Release through a Ports1 proxy made before the clock starts
 * (paddock_test_ports): the figure is the call, not the proxy. */
static gboolean
lease_once (PaddockIpcPorts1 *ports,
            const char       *name,
            guint16          *port,
            int              *fd)
{
  g_autoptr(GUnixFDList) fd_list = NULL;
  g_autoptr(GVariant) lease = NULL;
  g_autoptr(GVariant) handle = NULL;
  g_autoptr(GError) error = NULL;

  if (!paddock_ipc_ports1_call_lease_sync (ports, name, 0, g_variant_new ("a{sv}", NULL), NULL, &lease, &handle,
                                           &fd_list, NULL, &error))
    {
      g_printerr ("lease: %s\n", error->message);
      return FALSE;
    }
  g_variant_lookup (lease, "port", "q", port);
  *fd = g_unix_fd_list_get (fd_list, g_variant_get_handle (handle), NULL);
  return TRUE;
}

static void
release_once (PaddockIpcPorts1 *ports,
              guint16           port)
{
  paddock_ipc_ports1_call_release_sync (ports, port, NULL, NULL);
}

/* The in-run peer of "bind + pass fd": what an in-process registry would do
 * at best, with the fd crossing a socketpair as it would to a child. */
static double
native_bind_and_pass_usec (void)
{
  g_autoptr(GArray) rounds = g_array_new (FALSE, FALSE, sizeof (double));
  int pair[2];

  socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair);

  for (guint r = 0; r < RATE_ROUNDS; r++)
    {
      gint64 start = g_get_monotonic_time ();
      double per;

      for (guint i = 0; i < RATE_PER_ROUND; i++)
        {
          guint16 port = (guint16) (30000 + i);
          int fd = bind_loopback (port, TRUE);
          char byte = 'x';
          char cbuf[CMSG_SPACE (sizeof (int))] = { 0 };
          struct iovec iov = { &byte, 1 };
          struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
                                .msg_control = cbuf, .msg_controllen = sizeof cbuf };
          struct cmsghdr *cmsg = CMSG_FIRSTHDR (&msg);
          int received = -1;

          if (fd < 0)
            continue;
          cmsg->cmsg_level = SOL_SOCKET;
          cmsg->cmsg_type = SCM_RIGHTS;
          cmsg->cmsg_len = CMSG_LEN (sizeof (int));
          memcpy (CMSG_DATA (cmsg), &fd, sizeof (int));
          if (sendmsg (pair[0], &msg, 0) == 1)
            {
              struct msghdr rmsg = { .msg_iov = &iov, .msg_iovlen = 1,
                                     .msg_control = cbuf, .msg_controllen = sizeof cbuf };
              if (recvmsg (pair[1], &rmsg, MSG_CMSG_CLOEXEC) == 1)
                memcpy (&received, CMSG_DATA (CMSG_FIRSTHDR (&rmsg)), sizeof (int));
            }
          if (received >= 0)
            close (received);
          close (fd);
        }

      per = (double) (g_get_monotonic_time () - start) / RATE_PER_ROUND;
      g_array_append_val (rounds, per);
    }

  close (pair[0]);
  close (pair[1]);
  return bench_median (rounds);
}

/* The floor under any call to the daemon: a method that does no work
 * (Peer.Ping, answered by GDBus itself) through the bus daemon. */
static double
bus_round_trip_usec (PaddockTestDaemon *daemon)
{
  g_autoptr(GArray) rounds = g_array_new (FALSE, FALSE, sizeof (double));
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);

  for (guint r = 0; r < RATE_ROUNDS; r++)
    {
      gint64 start = g_get_monotonic_time ();
      double per;

      for (guint i = 0; i < RATE_PER_ROUND; i++)
        {
          g_autoptr(GVariant) reply =
            g_dbus_connection_call_sync (connection, "org.paddock.Daemon", "/org/paddock/Daemon",
                                         "org.freedesktop.DBus.Peer", "Ping", NULL, NULL,
                                         G_DBUS_CALL_FLAGS_NONE, 30000, NULL, NULL);
        }
      per = (double) (g_get_monotonic_time () - start) / RATE_PER_ROUND;
      g_array_append_val (rounds, per);
    }

  return bench_median (rounds);
}

static double
paddock_lease_usec (PaddockTestDaemon *daemon)
{
  g_autoptr(GArray) rounds = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(PaddockIpcPorts1) proxy = paddock_test_ports (paddock_test_daemon_get_connection (daemon));
  guint16 ports[RATE_PER_ROUND];

  for (guint r = 0; r < RATE_ROUNDS; r++)
    {
      gint64 start = g_get_monotonic_time ();
      double per;

      for (guint i = 0; i < RATE_PER_ROUND; i++)
        {
          int fd = -1;

          if (!lease_once (proxy, "bench", &ports[i], &fd))
            exit (EXIT_FAILURE);
          close (fd);
        }
      per = (double) (g_get_monotonic_time () - start) / RATE_PER_ROUND;
      g_array_append_val (rounds, per);

      for (guint i = 0; i < RATE_PER_ROUND; i++)
        release_once (proxy, ports[i]);
    }

  return bench_median (rounds);
}

/* ------------------------------------------------------------------------ */

/* One racing process. It hands out ports in batches, as a registry serving
 * several callers would, and then its callers bind them. Writes one line
 * per handed-out port: "<port> <1 if the caller then got it, else 0>". */
static void
race_naive (int out)
{
  g_autoptr(GHashTable) mine = g_hash_table_new (NULL, NULL);
  g_autoptr(GString) report = g_string_new (NULL);
  int held[RACE_PER_PROCESS];
  guint n_held = 0;

  for (guint done = 0; done < RACE_PER_PROCESS; done += RACE_BATCH)
    {
      guint16 batch[RACE_BATCH];

      for (guint i = 0; i < RACE_BATCH; i++)
        {
          /* bind(0), read, close: the kernel's pick is free only now. The
           * registry keeps its own ports apart (a few tries), never anyone
           * else's. */
          for (guint attempt = 0; attempt < 16; attempt++)
            {
              int fd = bind_loopback (0, FALSE);
              guint16 port = fd >= 0 ? port_of (fd) : 0;

              if (fd >= 0)
                close (fd);
              batch[i] = port;
              if (port != 0 && !g_hash_table_contains (mine, GUINT_TO_POINTER (port)))
                break;
            }
          g_hash_table_add (mine, GUINT_TO_POINTER (batch[i]));
        }

      for (guint i = 0; i < RACE_BATCH; i++)
        {
          int fd = bind_loopback (batch[i], TRUE);

          g_string_append_printf (report, "%u %d\n", batch[i], fd >= 0);
          if (fd >= 0)
            held[n_held++] = fd;
        }
    }

  if (write (out, report->str, report->len) != (ssize_t) report->len)
    _exit (1);
  close (out);
  /* Hold everything until the parent has read every process's report. */
  pause ();
  for (guint i = 0; i < n_held; i++)
    close (held[i]);
}

static void
race_paddock (int         out,
              const char *address)
{
  g_autoptr(GDBusConnection) connection = NULL;
  g_autoptr(PaddockIpcPorts1) proxy = NULL;
  g_autoptr(GString) report = g_string_new (NULL);

  connection = g_dbus_connection_new_for_address_sync (address,
                                                       G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                                       G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                                                       NULL, NULL, NULL);
  if (connection == NULL)
    _exit (1);
  proxy = paddock_test_ports (connection);
  for (guint i = 0; i < RACE_PER_PROCESS; i++)
    {
      guint16 port = 0;
      int fd = -1;

      /* A racer refused (its lease said why on stderr) reports what it
       * got: the parent counts handed-out ports, so the shortfall shows. */
      if (!lease_once (proxy, "race", &port, &fd))
        break;
      /* The caller already holds the bound socket: nothing left to race. */
      g_string_append_printf (report, "%u %d\n", port, fd >= 0);
    }

  if (write (out, report->str, report->len) != (ssize_t) report->len)
    _exit (1);
  close (out);
  pause ();
}

typedef struct
{
  guint handed_out;
  guint duplicates;  /* ports handed to more than one process */
  guint lost;        /* handed out, but the caller could not bind it */
  double elapsed_ms;
} RaceResult;

static char *self_exe;

static RaceResult
run_race (const char *address)
{
  g_autoptr(GHashTable) owners = g_hash_table_new (NULL, NULL);
  RaceResult result = { 0, };
  pid_t pids[RACE_PROCESSES];
  int pipes[RACE_PROCESSES][2];
  gint64 start = g_get_monotonic_time ();

  for (guint p = 0; p < RACE_PROCESSES; p++)
    {
      if (pipe2 (pipes[p], O_CLOEXEC) != 0)
        exit (EXIT_FAILURE);
      /* fork + exec, not fork alone: this process runs GDBus threads, and
       * a forked copy of it could not make a bus connection of its own. */
      pids[p] = fork ();
      if (pids[p] == 0)
        {
          char fd_arg[16];

          close (pipes[p][0]);
          if (dup2 (pipes[p][1], 3) < 0)
            _exit (1);
          snprintf (fd_arg, sizeof fd_arg, "3");
          execl (self_exe, self_exe, "--racer", address != NULL ? address : "naive", fd_arg,
                 (char *) NULL);
          _exit (127);
        }
      close (pipes[p][1]);
    }

  for (guint p = 0; p < RACE_PROCESSES; p++)
    {
      g_autoptr(GIOChannel) channel = g_io_channel_unix_new (pipes[p][0]);
      char *line = NULL;

      g_io_channel_set_close_on_unref (channel, TRUE);
      while (g_io_channel_read_line (channel, &line, NULL, NULL, NULL) == G_IO_STATUS_NORMAL)
        {
          guint port = 0;
          int got = 0;

          if (sscanf (line, "%u %d", &port, &got) == 2)
            {
              guint previous = GPOINTER_TO_UINT (g_hash_table_lookup (owners, GUINT_TO_POINTER (port)));

              result.handed_out++;
              if (previous != 0 && previous != p + 1)
                result.duplicates++;
              g_hash_table_insert (owners, GUINT_TO_POINTER (port), GUINT_TO_POINTER (p + 1));
              if (!got)
                result.lost++;
            }
          g_free (line);
        }
    }
  result.elapsed_ms = (double) (g_get_monotonic_time () - start) / 1000.0;

  for (guint p = 0; p < RACE_PROCESSES; p++)
    {
      kill (pids[p], SIGTERM);
      waitpid (pids[p], NULL, 0);
    }

  return result;
}

int
main (int   argc,
      char *argv[])
{
  /* Room for every racer's leases at once: a pool that holds them all
   * (the tests' default of 2,500 would hand out a third of the race), and
   * quotas to match. */
  g_autofree char *pool = paddock_test_port_range_new (RACE_POOL_PORTS, NULL, NULL);
  const char *daemon_args[] = { "--port-range", pool, "--max-leases", "9000",
                                "--max-leases-per-owner", "2000", NULL };
  g_autoptr(PaddockTestDaemon) daemon = NULL;
  double native_usec;
  double paddock_usec;
  double ping_usec;
  RaceResult naive;
  RaceResult paddock;
  guint total = RACE_PROCESSES * RACE_PER_PROCESS;

  signal (SIGPIPE, SIG_IGN);

  if (argc == 4 && g_str_equal (argv[1], "--racer"))
    {
      if (g_str_equal (argv[2], "naive"))
        race_naive (atoi (argv[3]));
      else
        race_paddock (atoi (argv[3]), argv[2]);
      return 0;
    }

  self_exe = g_file_read_link ("/proc/self/exe", NULL);

  if (g_getenv ("PADDOCK_BUILD_ROOT") == NULL)
    {
      g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
      g_autofree char *bench_dir = g_path_get_dirname (exe);
      g_autofree char *root = g_build_filename (bench_dir, "..", "..", NULL);

      g_setenv ("PADDOCK_BUILD_ROOT", root, TRUE);
    }

  g_setenv ("PADDOCK_TEST_QUIET", "1", TRUE);
  daemon = paddock_test_daemon_new (daemon_args);

  native_usec = native_bind_and_pass_usec ();
  paddock_usec = paddock_lease_usec (daemon);
  ping_usec = bus_round_trip_usec (daemon);

  naive = run_race (NULL);
  paddock = run_race (paddock_test_daemon_get_address (daemon));

  g_print ("bench/ports - %u processes x %u ports racing (pool %u-%u); rates are medians of %u rounds x %u\n\n",
           RACE_PROCESSES, RACE_PER_PROCESS, paddock_test_daemon_get_first_port (daemon),
           paddock_test_daemon_get_last_port (daemon), RATE_ROUNDS, RATE_PER_ROUND);
  g_print ("%-44s %14s %30s %8s\n", "what", "paddock", "peer (same run)", "ratio");
  g_print ("%-44s %11.1f us %18.1f us in-proc %7.1fx\n",
           "lease: bind+listen+pass fd, then release", paddock_usec, native_usec,
           paddock_usec / native_usec);
  g_print ("%-44s %11.1f us %27s\n", "  of which: bus round trip (Peer.Ping)", ping_usec, "");
  g_print ("%-44s %11.0f /s %20.0f /s in-proc\n", "leases per second, one client",
           1e6 / paddock_usec, 1e6 / native_usec);
  g_print ("%-44s %9u/%-4u %16u/%-4u naive bind(0)\n", "ports handed out, of asked",
           paddock.handed_out, total, naive.handed_out, total);
  g_print ("%-44s %14u %21u naive bind(0)\n", "ports handed to two processes",
           paddock.duplicates, naive.duplicates);
  g_print ("%-44s %14u %21u naive bind(0)\n", "ports lost before the caller bound them",
           paddock.lost, naive.lost);
  g_print ("%-44s %13.2f%% %20.2f%% naive bind(0)\n", "duplicate or lost, of handed out",
           100.0 * (paddock.duplicates + paddock.lost) / MAX (paddock.handed_out, 1),
           100.0 * (naive.duplicates + naive.lost) / MAX (naive.handed_out, 1));
  g_print ("%-44s %11.0f ms %18.0f ms naive\n", "race wall time", paddock.elapsed_ms,
           naive.elapsed_ms);
  g_print ("\npeer figures (ANCHORS.md): bind + pass fd ~ 32 us in Python; portserver never holds the port\n");

  if (paddock.handed_out != total || paddock.duplicates != 0 || paddock.lost != 0)
    {
      g_printerr ("bench-ports: Paddock handed out %u/%u with %u duplicates, %u lost\n",
                  paddock.handed_out, total, paddock.duplicates, paddock.lost);
      return EXIT_FAILURE;
    }

  return EXIT_SUCCESS;
}
