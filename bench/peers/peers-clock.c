/* peers-clock.c — the clock of bench/peers: commands timed as a user meets them
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * bench-peers.sh drives the user's path (paddockctl, D-Bus) next to each
 * peer; a shell cannot time a 3 ms command (on this machine a fork of the
 * shell alone costs 4-5 ms), so the timing is done here:
 *
 *   time [--rounds N] [--marker TEXT] [--summary FILE] LABEL CMD... [:: LABEL CMD...]...
 *     runs every command once per round, in an order that rotates each
 *     round, stdout on a pipe, and prints per round the time to the first
 *     output that holds TEXT, to the command's exit, and the ratio of the
 *     first command's figures to each other's; then the medians (and the
 *     median of the per-round ratios, which interleaving keeps fair).
 *     --summary writes the medians to FILE for the script's closing
 *     table, a line per command: LABEL FIRST_MS EXIT_MS TAIL_MS
 *     FIRST_RATIO EXIT_RATIO (the ratios: the first command's over this
 *     one's, medians of the per-round ratios).
 *   once [--output FILE] CMD...
 *     runs CMD once and prints the milliseconds to its exit; --output
 *     writes what CMD printed to FILE (destroy's own "in N ms", say).
 *   kill-ns TEXT CMD...
 *     runs CMD (an `unshare -f` of a PID namespace), waits for TEXT on its
 *     stdout, then SIGKILLs the namespace's pid 1 (CMD's child) and prints
 *     the milliseconds until CMD is reaped: the kernel has then killed and
 *     reaped every process of the namespace, its own teardown.
 *   lease-race PROCS PER [--many]
 *     PROCS processes, released at once, each leasing PER ports through
 *     org.paddock.Ports1.Lease on the session bus and holding every socket;
 *     prints the leases per second, the ports handed out twice, and how
 *     many of them another program could still bind (0: they are held).
 *     With --many each takes its PER through Ports1.LeaseMany, 16 a call.
 *     With --ping each calls org.freedesktop.DBus.Peer.Ping on the daemon
 *     instead (answered by GDBus itself, on its worker thread): the same
 *     processes and bus with nothing of a lease, the floor under Lease.
 */

#include "config.h"

#include "bench-common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gio/gunixfdlist.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-test-client.h"

#define MAX_ROUNDS        1000
#define MAX_COMMANDS      8
#define MAX_RACERS        64
#define MAX_PER_RACER     1000
#define COMMAND_TIMEOUT_S 120

typedef struct
{
  const char  *label;
  char       **argv;
  GArray      *first_ms;
  GArray      *exit_ms;
} Command;

static int
pidfd_open_cloexec (pid_t pid)
{
  /* pidfds are always close-on-exec. */
  return (int) syscall (SYS_pidfd_open, pid, 0);
}

/* Spawns @argv with stdin /dev/null, stdout on a pipe (returned in
 * @out_fd), stderr inherited. */
static pid_t
spawn_piped (char **argv,
             int   *out_fd)
{
  posix_spawn_file_actions_t actions;
  int fds[2];
  pid_t pid;
  int res;

  if (pipe2 (fds, O_CLOEXEC) != 0)
    paddock_test_bail ("pipe: %s", g_strerror (errno));
  posix_spawn_file_actions_init (&actions);
  posix_spawn_file_actions_addopen (&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2 (&actions, fds[1], STDOUT_FILENO);
  res = posix_spawnp (&pid, argv[0], &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy (&actions);
  close (fds[1]);
  if (res != 0)
    paddock_test_bail ("could not run %s: %s", argv[0], g_strerror (res));
  *out_fd = fds[0];
  return pid;
}

/* Runs @argv to its end: the time to the first output holding @marker
 * (NULL: not looked for) and to its exit, in ms since the spawn; @output
 * (nullable) gets what it printed. */
static void
run_once (char       **argv,
          const char  *marker,
          GString     *output,
          double      *first_ms,
          double      *exit_ms)
{
  g_autoptr(GString) seen = g_string_new (NULL);
  gint64 start = g_get_monotonic_time ();
  gint64 deadline = start + COMMAND_TIMEOUT_S * G_USEC_PER_SEC;
  gboolean found = marker == NULL;
  gboolean eof = FALSE;
  gboolean exited = FALSE;
  int out_fd = -1;
  int status = 0;
  pid_t pid = spawn_piped (argv, &out_fd);
  int pidfd = pidfd_open_cloexec (pid);

  if (pidfd < 0)
    paddock_test_bail ("pidfd_open: %s", g_strerror (errno));
  *first_ms = -1;
  *exit_ms = -1;

  /* The exit is the pidfd's, not the pipe's end: a descendant that keeps
   * stdout open must not count as the command still running. */
  while (!exited)
    {
      struct pollfd pfds[2] = { { .fd = pidfd, .events = POLLIN },
                                { .fd = eof ? -1 : out_fd, .events = POLLIN } };
      int left_ms = (int) ((deadline - g_get_monotonic_time ()) / 1000);

      if (left_ms <= 0)
        {
          kill (pid, SIGKILL);
          paddock_test_bail ("%s did not end within %d s", argv[0], COMMAND_TIMEOUT_S);
        }
      if (poll (pfds, 2, left_ms) < 0)
        {
          if (errno == EINTR)
            continue;
          paddock_test_bail ("poll: %s", g_strerror (errno));
        }
      if (pfds[1].revents != 0)
        {
          char buffer[4096];
          ssize_t n = read (out_fd, buffer, sizeof buffer);

          if (n > 0)
            {
              if (output != NULL && output->len < 65536)
                g_string_append_len (output, buffer, n);
              if (!found)
                {
                  /* Bounded: only what the marker could still span is kept. */
                  g_string_append_len (seen, buffer, n);
                  if (strstr (seen->str, marker) != NULL)
                    {
                      found = TRUE;
                      *first_ms = bench_ms_since (start);
                    }
                  else if (seen->len > 4096)
                    g_string_erase (seen, 0, seen->len - strlen (marker));
                }
            }
          else if (n == 0 || errno != EAGAIN)
            eof = TRUE;
        }
      if (pfds[0].revents != 0)
        {
          exited = TRUE;
          *exit_ms = bench_ms_since (start);
        }
    }
  if (waitpid (pid, &status, 0) != pid)
    paddock_test_bail ("waitpid: %s", g_strerror (errno));
  close (pidfd);
  close (out_fd);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    paddock_test_bail ("%s failed (status 0x%x)", argv[0], status);
  if (!found)
    paddock_test_bail ("%s never printed “%s”", argv[0], marker);
}

static double
median_of_ratios (GArray *ours,
                  GArray *theirs)
{
  g_autoptr(GArray) ratios = g_array_new (FALSE, FALSE, sizeof (double));

  for (guint i = 0; i < ours->len && i < theirs->len; i++)
    {
      double ratio = g_array_index (ours, double, i) / g_array_index (theirs, double, i);

      g_array_append_val (ratios, ratio);
    }
  return bench_median (ratios);
}

static int
time_commands (int    argc,
               char **argv)
{
  Command commands[MAX_COMMANDS];
  guint n_commands = 0;
  guint rounds = 10;
  const char *marker = NULL;
  const char *summary_path = NULL;
  g_autoptr(GString) summary = g_string_new (NULL);
  int i = 0;

  while (i < argc && g_str_has_prefix (argv[i], "--"))
    {
      if (g_str_equal (argv[i], "--rounds") && i + 1 < argc)
        rounds = (guint) g_ascii_strtoull (argv[i + 1], NULL, 10);
      else if (g_str_equal (argv[i], "--marker") && i + 1 < argc)
        marker = argv[i + 1];
      else if (g_str_equal (argv[i], "--summary") && i + 1 < argc)
        summary_path = argv[i + 1];
      else
        paddock_test_bail ("unknown option %s", argv[i]);
      i += 2;
    }
  if (rounds == 0 || rounds > MAX_ROUNDS)
    paddock_test_bail ("--rounds takes 1 to %d", MAX_ROUNDS);

  while (i < argc)
    {
      Command *command;
      int end = i + 1;

      if (n_commands == MAX_COMMANDS)
        paddock_test_bail ("at most %d commands", MAX_COMMANDS);
      while (end < argc && !g_str_equal (argv[end], "::"))
        end++;
      if (end - i < 2)
        paddock_test_bail ("a label and a command expected at %s", argv[i]);
      command = &commands[n_commands++];
      command->label = argv[i];
      command->argv = &argv[i + 1];
      argv[end < argc ? end : argc] = NULL;   /* argv[argc] is NULL already */
      command->first_ms = g_array_new (FALSE, FALSE, sizeof (double));
      command->exit_ms = g_array_new (FALSE, FALSE, sizeof (double));
      i = end + 1;
    }
  if (n_commands == 0)
    paddock_test_bail ("no command to time");

  for (guint round = 0; round < rounds; round++)
    {
      g_autoptr(GString) line = g_string_new (NULL);

      /* Rotating order: no contender always runs right after another. */
      for (guint k = 0; k < n_commands; k++)
        {
          Command *command = &commands[(round + k) % n_commands];
          double first_ms;
          double exit_ms;

          run_once (command->argv, marker, NULL, &first_ms, &exit_ms);
          g_array_append_val (command->first_ms, first_ms);
          g_array_append_val (command->exit_ms, exit_ms);
        }

      g_string_append_printf (line, "round %2u:", round + 1);
      for (guint k = 0; k < n_commands; k++)
        {
          double first_ms = g_array_index (commands[k].first_ms, double, round);
          double exit_ms = g_array_index (commands[k].exit_ms, double, round);

          if (marker != NULL)
            g_string_append_printf (line, "  %s %.2f/%.2f ms", commands[k].label, first_ms, exit_ms);
          else
            g_string_append_printf (line, "  %s %.2f ms", commands[k].label, exit_ms);
          if (k > 0 && marker != NULL)
            g_string_append_printf (line, " (%.2fx/%.2fx)",
                                    g_array_index (commands[0].first_ms, double, round) / first_ms,
                                    g_array_index (commands[0].exit_ms, double, round) / exit_ms);
          else if (k > 0)
            g_string_append_printf (line, " (%.2fx)",
                                    g_array_index (commands[0].exit_ms, double, round) / exit_ms);
        }
      printf ("%s\n", line->str);
      fflush (stdout);
    }

  printf ("medians of %u rounds%s:\n", rounds,
          marker != NULL ? " (first output / exit / exit after first output)" : " (exit)");
  for (guint k = 0; k < n_commands; k++)
    {
      Command *command = &commands[k];
      double first_ratio = k > 0 && marker != NULL ? median_of_ratios (commands[0].first_ms, command->first_ms) : 1;
      double exit_ratio = k > 0 ? median_of_ratios (commands[0].exit_ms, command->exit_ms) : 1;
      double tail_ms = 0;

      if (marker != NULL)
        {
          g_autoptr(GArray) tail = g_array_new (FALSE, FALSE, sizeof (double));

          for (guint r = 0; r < rounds; r++)
            {
              double t = g_array_index (command->exit_ms, double, r) -
                         g_array_index (command->first_ms, double, r);

              g_array_append_val (tail, t);
            }
          tail_ms = bench_median (tail);
          printf ("  %-12s %8.2f ms %8.2f ms %8.2f ms", command->label,
                  bench_median (command->first_ms), bench_median (command->exit_ms), tail_ms);
          if (k > 0)
            printf ("   %s/%s: %.2fx first output, %.2fx exit (median of per-round ratios)",
                    commands[0].label, command->label, first_ratio, exit_ratio);
        }
      else
        {
          printf ("  %-12s %8.2f ms", command->label, bench_median (command->exit_ms));
          if (k > 0)
            printf ("   %s/%s: %.2fx (median of per-round ratios)", commands[0].label,
                    command->label, exit_ratio);
        }
      printf ("\n");
      g_string_append_printf (summary, "%s %.3f %.3f %.3f %.4f %.4f\n", command->label,
                              marker != NULL ? bench_median (command->first_ms) : 0,
                              bench_median (command->exit_ms), tail_ms, first_ratio, exit_ratio);
    }
  if (summary_path != NULL)
    {
      g_autoptr(GError) error = NULL;

      if (!g_file_set_contents (summary_path, summary->str, (gssize) summary->len, &error))
        paddock_test_bail ("%s", error->message);
    }
  return EXIT_SUCCESS;
}

/* ---- kill-ns ----------------------------------------------------------------------- */

static pid_t
only_child_of (pid_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/task/%d/children", pid, pid);
  g_autofree char *children = NULL;

  if (!g_file_get_contents (path, &children, NULL, NULL))
    return -1;
  return (pid_t) atoi (children);
}

static int
kill_namespace (int    argc,
                char **argv)
{
  g_autoptr(GString) seen = g_string_new (NULL);
  const char *marker;
  int out_fd = -1;
  int status = 0;
  pid_t pid;
  pid_t init;
  gint64 start;

  if (argc < 2)
    paddock_test_bail ("kill-ns TEXT CMD...");
  marker = argv[0];
  pid = spawn_piped (&argv[1], &out_fd);
  while (strstr (seen->str, marker) == NULL)
    {
      char buffer[4096];
      ssize_t n = read (out_fd, buffer, sizeof buffer);

      if (n <= 0)
        paddock_test_bail ("%s ended before printing “%s”", argv[1], marker);
      g_string_append_len (seen, buffer, n);
    }
  if ((init = only_child_of (pid)) <= 0)
    paddock_test_bail ("%s has no child to be the namespace's pid 1", argv[1]);

  start = g_get_monotonic_time ();
  if (kill (init, SIGKILL) != 0)
    paddock_test_bail ("kill: %s", g_strerror (errno));
  /* pid 1's exit waits until the kernel has reaped the whole namespace;
   * only then does unshare -f see its child gone and exit. */
  if (waitpid (pid, &status, 0) != pid)
    paddock_test_bail ("waitpid: %s", g_strerror (errno));
  printf ("%.2f\n", bench_ms_since (start));
  close (out_fd);
  return EXIT_SUCCESS;
}

/* ---- lease-race -------------------------------------------------------------------- */

static void G_GNUC_NORETURN
lease_racer (int      go_fd,
             int      out_fd,
             guint    per,
             gboolean many,
             gboolean ping)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GDBusConnection) connection = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &error);
  g_autoptr(GString) report = g_string_new (NULL);
  g_autoptr(PaddockIpcPorts1) ports = NULL;
  char go;

  if (connection == NULL)
    paddock_test_bail ("racer: %s", error->message);
  /* Made before the start: the race is the calls. */
  ports = paddock_test_ports (connection);
  /* The start is the end of the go pipe, for every racer at once: a byte
   * each could be read by a racer done early (see below) instead of the
   * one it was for, which then never started. */
  if (read (go_fd, &go, 1) != 0)
    _exit (1);

  for (guint i = 0; ping && i < per; i++)
    {
      g_autoptr(GVariant) reply =
        g_dbus_connection_call_sync (connection, "org.paddock.Daemon", "/org/paddock/Daemon",
                                     "org.freedesktop.DBus.Peer", "Ping", NULL, NULL,
                                     G_DBUS_CALL_FLAGS_NONE, 30000, NULL, &error);

      if (reply == NULL)
        paddock_test_bail ("racer: Ping: %s", error->message);
      g_string_append_printf (report, "%u\n", i + 1);
    }
  if (ping)
    per = 0;

  /* In calls of at most 16 (LeaseMany's limit, the bus's per message). */
  while (many && per > 0)
    {
      g_autoptr(GUnixFDList) fd_list = NULL;
      g_autoptr(GVariant) leases = NULL;
      g_autoptr(GVariant) handles = NULL;
      guint count = MIN (per, 16);

      if (!paddock_ipc_ports1_call_lease_many_sync (ports, "race", count, g_variant_new ("a{sv}", NULL), NULL,
                                                    &leases, &handles, &fd_list, NULL, &error))
        paddock_test_bail ("racer: LeaseMany: %s", error->message);
      for (gsize i = 0; i < g_variant_n_children (leases); i++)
        {
          g_autoptr(GVariant) lease = g_variant_get_child_value (leases, i);
          guint16 port = 0;

          g_variant_lookup (lease, "port", "q", &port);
          g_string_append_printf (report, "%u\n", port);
        }
      /* The list's descriptors stay open with it until exit: held. */
      (void) g_steal_pointer (&fd_list);
      per -= count;
    }
  for (guint i = 0; i < per; i++)
    {
      g_autoptr(GUnixFDList) fd_list = NULL;
      g_autoptr(GVariant) lease = NULL;
      g_autoptr(GVariant) handle = NULL;
      guint16 port = 0;

      if (!paddock_ipc_ports1_call_lease_sync (ports, "race", 0, g_variant_new ("a{sv}", NULL), NULL, &lease,
                                               &handle, &fd_list, NULL, &error))
        paddock_test_bail ("racer: Lease: %s", error->message);
      g_variant_lookup (lease, "port", "q", &port);
      /* Held: the descriptor stays open (and leaks on purpose) until exit. */
      if (g_unix_fd_list_get (fd_list, g_variant_get_handle (handle), NULL) < 0)
        paddock_test_bail ("racer: no socket with the lease of port %u", port);
      g_string_append_printf (report, "%u\n", port);
    }
  if (write (out_fd, report->str, report->len) != (ssize_t) report->len)
    _exit (1);
  close (out_fd);
  /* Hold every lease until the parent has checked them and kills us. */
  for (;;)
    pause ();
}

static gboolean
bindable (guint16 port)
{
  struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons (port) };
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  gboolean ok;

  addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  ok = bind (fd, (struct sockaddr *) &addr, sizeof addr) == 0;
  close (fd);
  return ok;
}

static int
lease_race (int    argc,
            char **argv)
{
  g_autoptr(GHashTable) seen = g_hash_table_new (NULL, NULL);
  g_autofree char *self_exe = g_file_read_link ("/proc/self/exe", NULL);
  pid_t pids[MAX_RACERS];
  int outs[MAX_RACERS];
  int go[2];
  guint procs;
  guint per;
  gboolean many = FALSE;
  gboolean ping = FALSE;
  guint handed_out = 0;
  guint duplicates = 0;
  guint open_to_others = 0;
  gint64 start;
  double elapsed_ms;

  if (argc == 3 && g_str_equal (argv[2], "--many"))
    many = TRUE;
  else if (argc == 3 && g_str_equal (argv[2], "--ping"))
    ping = TRUE;
  else if (argc != 2)
    paddock_test_bail ("lease-race PROCS PER [--many|--ping]");
  procs = (guint) g_ascii_strtoull (argv[0], NULL, 10);
  per = (guint) g_ascii_strtoull (argv[1], NULL, 10);
  if (procs == 0 || procs > MAX_RACERS || per == 0 || per > MAX_PER_RACER)
    paddock_test_bail ("lease-race takes 1 to %d processes, 1 to %d leases each", MAX_RACERS, MAX_PER_RACER);
  if (pipe2 (go, O_CLOEXEC) != 0)
    paddock_test_bail ("pipe: %s", g_strerror (errno));

  for (guint p = 0; p < procs; p++)
    {
      int out[2];

      if (pipe2 (out, O_CLOEXEC) != 0)
        paddock_test_bail ("pipe: %s", g_strerror (errno));
      /* fork + exec: a forked GDBus process could not connect on its own. */
      pids[p] = fork ();
      if (pids[p] == 0)
        {
          char per_arg[16];
          char go_arg[16];
          char out_arg[16];

          /* Both kept across exec, by number (a dup2 onto the same number
           * would keep close-on-exec). */
          if (fcntl (go[0], F_SETFD, 0) != 0 || fcntl (out[1], F_SETFD, 0) != 0)
            _exit (1);
          snprintf (per_arg, sizeof per_arg, "%u", per);
          snprintf (go_arg, sizeof go_arg, "%d", go[0]);
          snprintf (out_arg, sizeof out_arg, "%d", out[1]);
          execl (self_exe, self_exe, "lease-racer", per_arg, go_arg, out_arg,
                 many ? "many" : ping ? "ping" : "one", (char *) NULL);
          _exit (127);
        }
      close (out[1]);
      outs[p] = out[0];
    }
  close (go[0]);
  /* Let them connect first: the race is the leases, not bus logins. */
  g_usleep (G_USEC_PER_SEC / 2);

  start = g_get_monotonic_time ();
  close (go[1]);
  for (guint p = 0; p < procs; p++)
    {
      g_autoptr(GIOChannel) channel = g_io_channel_unix_new (outs[p]);
      char *line = NULL;

      g_io_channel_set_close_on_unref (channel, TRUE);
      while (g_io_channel_read_line (channel, &line, NULL, NULL, NULL) == G_IO_STATUS_NORMAL)
        {
          guint port = (guint) atoi (line);

          g_free (line);
          handed_out++;
          if (ping)
            continue;
          if (g_hash_table_contains (seen, GUINT_TO_POINTER (port)))
            duplicates++;
          g_hash_table_add (seen, GUINT_TO_POINTER (port));
        }
    }
  elapsed_ms = bench_ms_since (start);

  {
    GHashTableIter iter;
    gpointer key;

    g_hash_table_iter_init (&iter, seen);
    while (g_hash_table_iter_next (&iter, &key, NULL))
      if (bindable ((guint16) GPOINTER_TO_UINT (key)))
        open_to_others++;
  }

  for (guint p = 0; p < procs; p++)
    {
      kill (pids[p], SIGKILL);
      waitpid (pids[p], NULL, 0);
    }

  if (ping)
    {
      printf ("%.0f calls/s (%u in %.1f ms)\n", 1000.0 * handed_out / elapsed_ms, handed_out, elapsed_ms);
      return handed_out == procs * per ? EXIT_SUCCESS : EXIT_FAILURE;
    }
  printf ("%.0f leases/s (%u in %.1f ms), %u duplicates, %u bindable by others\n",
          1000.0 * handed_out / elapsed_ms, handed_out, elapsed_ms, duplicates, open_to_others);
  return handed_out == procs * per && duplicates == 0 && open_to_others == 0
         ? EXIT_SUCCESS : EXIT_FAILURE;
}

int
main (int   argc,
      char *argv[])
{
  /* Makes no session: a failure prints and exits 1. */
  paddock_test_set_fail_mode (PADDOCK_TEST_FAIL_BAIL, "peers-clock");
  signal (SIGPIPE, SIG_IGN);

  if (argc >= 2 && g_str_equal (argv[1], "time"))
    return time_commands (argc - 2, argv + 2);
  if (argc >= 3 && g_str_equal (argv[1], "once"))
    {
      g_autoptr(GString) output = g_string_new (NULL);
      const char *output_path = NULL;
      char **command = argv + 2;
      double first_ms;
      double exit_ms;

      if (argc >= 5 && g_str_equal (argv[2], "--output"))
        {
          output_path = argv[3];
          command = argv + 4;
        }
      run_once (command, NULL, output, &first_ms, &exit_ms);
      if (output_path != NULL && !g_file_set_contents (output_path, output->str, (gssize) output->len, NULL))
        paddock_test_bail ("could not write %s", output_path);
      printf ("%.2f\n", exit_ms);
      return EXIT_SUCCESS;
    }
  if (argc >= 2 && g_str_equal (argv[1], "kill-ns"))
    return kill_namespace (argc - 2, argv + 2);
  if (argc >= 2 && g_str_equal (argv[1], "lease-race"))
    return lease_race (argc - 2, argv + 2);
  if (argc == 6 && g_str_equal (argv[1], "lease-racer"))
    lease_racer (atoi (argv[3]), atoi (argv[4]), (guint) g_ascii_strtoull (argv[2], NULL, 10),
                 g_str_equal (argv[5], "many"), g_str_equal (argv[5], "ping"));

  fprintf (stderr, "usage: %s time [--rounds N] [--marker TEXT] [--summary FILE] LABEL CMD... [:: LABEL CMD...]...\n"
                   "       %s once [--output FILE] CMD...\n"
                   "       %s kill-ns TEXT CMD...\n"
                   "       %s lease-race PROCS PER [--many|--ping]\n", argv[0], argv[0], argv[0], argv[0]);
  return 2;
}
