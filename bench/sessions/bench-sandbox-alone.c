/* bench-sandbox-alone.c — paddock-sandbox by itself next to `unshare -Urmpf`
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * How much of a safe session's start (bench-sessions: CreateSession to the
 * agent's first byte) is the sandbox's own: the helper the daemon execs,
 * with the options a daemon-made `safe` session passes it (an overlay
 * stage, the canary probes, the protected paths, --die-with-parent, the
 * daemon's ready-made seccomp program in a sealed memfd; no terminal and no
 * control channel), running `sh -c 'echo x'`, until it has exited with "x"
 * read; next to `unshare -Urmpf --mount-proc sh -c 'echo x'`, the issue's
 * peer for the start, rounds interleaved. No daemon and no D-Bus: what the
 * sandbox alone costs against the target (start < 2x unshare). And the
 * same sandbox made ahead (--spare, as the daemon keeps one after a safe
 * start), timed from its session's options to "x": its part of a start
 * when the daemon had one ready (made, untimed, 50 ms before).
 *
 * Usage: bench-sandbox-alone [--rounds N]   (default 60)
 */

#include "config.h"

#include "bench-common.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-seccomp.h"
#include "paddock-spare-options.h"
#include "paddock-test-daemon.h"

static G_NORETURN void G_GNUC_PRINTF (1, 2)
bail (const char *format,
      ...)
{
  va_list args;

  va_start (args, format);
  g_printerr ("bench-sandbox-alone: ");
  g_vprintf (format, args);
  g_printerr ("\n");
  va_end (args);
  exit (1);
}

/* Reads what PID prints on PIPE_READ until it exits; the ms since START.
 * Fails unless it printed exactly "x\n" and exited 0. */
static double
read_x_until_exit (int         pipe_read,
                   pid_t       pid,
                   gint64      start,
                   const char *what)
{
  char buffer[64];
  gsize got = 0;
  int status = 0;
  double ms;
  ssize_t n;

  while ((n = read (pipe_read, buffer + got, sizeof buffer - 1 - got)) != 0)
    {
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        bail ("read: %s", g_strerror (errno));
      got += (gsize) n;
      if (got == sizeof buffer - 1)
        break;
    }
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  ms = bench_ms_since (start);
  close (pipe_read);
  buffer[got] = '\0';
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0 || g_strcmp0 (buffer, "x\n") != 0)
    bail ("%s exited with %d and printed \"%s\"", what, status, g_strescape (buffer, NULL));
  return ms;
}

/* Runs ARGV with stdout on a pipe until it exits; its time in ms. Fails
 * unless it printed exactly "x\n" and exited 0. */
static double
run_ms (const char * const *argv)
{
  posix_spawn_file_actions_t actions;
  int pipe_fds[2];
  pid_t pid;
  int status;
  gint64 start;

  if (pipe2 (pipe_fds, O_CLOEXEC) != 0)
    bail ("pipe2: %s", g_strerror (errno));
  posix_spawn_file_actions_init (&actions);
  posix_spawn_file_actions_adddup2 (&actions, pipe_fds[1], STDOUT_FILENO);
  start = g_get_monotonic_time ();
  status = posix_spawn (&pid, argv[0], &actions, NULL, (char * const *) argv, environ);
  posix_spawn_file_actions_destroy (&actions);
  close (pipe_fds[1]);
  if (status != 0)
    bail ("posix_spawn %s: %s", argv[0], g_strerror (status));
  return read_x_until_exit (pipe_fds[0], pid, start, argv[0]);
}

/* A spare made with SPARE_ARGV (its control socket at fd 4), given
 * SESSION_ARGS after 50 ms as the daemon gives them; the time from then
 * until it exited with "x" read. */
static double
run_spare_ms (const char * const *spare_argv,
              const char * const *session_args)
{
  posix_spawn_file_actions_t actions;
  int pipe_fds[2];
  int pair[2];
  pid_t pid;
  int status;
  gint64 start;
  double ms;

  if (pipe2 (pipe_fds, O_CLOEXEC) != 0 || socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    bail ("pipe2/socketpair: %s", g_strerror (errno));
  posix_spawn_file_actions_init (&actions);
  posix_spawn_file_actions_adddup2 (&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2 (&actions, pair[1], 4);
  status = posix_spawn (&pid, spare_argv[0], &actions, NULL, (char * const *) spare_argv, environ);
  posix_spawn_file_actions_destroy (&actions);
  close (pipe_fds[1]);
  close (pair[1]);
  if (status != 0)
    bail ("posix_spawn %s: %s", spare_argv[0], g_strerror (status));
  g_usleep (50 * 1000);

  start = g_get_monotonic_time ();
  status = paddock_spare_options_send (pair[0], session_args);
  if (status != 0)
    bail ("the spare did not take its options: %s", g_strerror (status));
  ms = read_x_until_exit (pipe_fds[0], pid, start, "the spare");
  close (pair[0]);
  return ms;
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  g_autofree char *helper = NULL;
  g_autofree char *unshare = g_find_program_in_path ("unshare");
  g_autofree char *workspace = NULL;
  g_autofree char *stage = NULL;
  g_autofree char *upper = NULL;
  g_autofree char *work = NULL;
  g_autofree char *seccomp_fd = NULL;
  g_autofree char *probe_pid = NULL;
  g_autofree char *probe_abstract = NULL;
  g_autoptr(GArray) ours = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) peer = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) spare = g_array_new (FALSE, FALSE, sizeof (double));
  guint rounds = 60;
  int memfd;
  double ours_ms, peer_ms, spare_ms;

  for (int i = 1; i < argc; i++)
    if (g_str_equal (argv[i], "--rounds") && i + 1 < argc)
      rounds = (guint) g_ascii_strtoull (argv[++i], NULL, 10);
    else
      bail ("usage: bench-sandbox-alone [--rounds N]");
  if (rounds == 0)
    bail ("--rounds must be at least 1");
  if (unshare == NULL)
    bail ("no unshare in PATH (util-linux)");

  helper = paddock_test_build_path ("daemon", "sandbox", "paddock-sandbox", NULL);
  memfd = paddock_seccomp_build_sealed (&error);
  if (memfd < 0)
    bail ("the seccomp program: %s", error->message);
  /* Passed to the helper (the daemon passes its own the same way). */
  fcntl (memfd, F_SETFD, 0);
  seccomp_fd = g_strdup_printf ("%d", memfd);
  probe_pid = g_strdup_printf ("%d", (int) getpid ());
  probe_abstract = g_strdup_printf ("paddock-canary-%d", (int) getpid ());

  workspace = g_dir_make_tmp ("paddock-bench-ws-XXXXXX", &error);
  stage = workspace != NULL ? g_dir_make_tmp ("paddock-bench-stage-XXXXXX", &error) : NULL;
  if (stage == NULL)
    bail ("%s", error->message);
  upper = g_build_filename (stage, "upper", NULL);
  work = g_build_filename (stage, "work", NULL);
  if (g_mkdir (upper, 0700) != 0 || g_mkdir (work, 0700) != 0)
    bail ("mkdir in %s: %s", stage, g_strerror (errno));

  {
    g_autofree char *stage_arg = g_strconcat ("overlay:", stage, NULL);
    g_autofree char *home_probe = g_build_filename (g_get_home_dir (), ".ssh", NULL);
    const char *sandbox_argv[] = {
      helper, "--workspace", workspace, "--stage", stage_arg,
      "--probe-hidden", home_probe, "--probe-abstract", probe_abstract, "--probe-pid", probe_pid,
      "--net", "host", "--seccomp-fd", seccomp_fd,
      "--protect", ".git/hooks", "--protect", ".git/config", "--die-with-parent",
      "--env", "PATH=/usr/local/bin:/usr/bin:/bin", "--env", "LANG=C.UTF-8",
      "--", "sh", "-c", "echo x", NULL
    };
    const char *unshare_argv[] = { unshare, "-Urmpf", "--mount-proc", "sh", "-c", "echo x", NULL };
    const char *spare_argv[] = {
      helper, "--spare", "--control-fd", "4", "--net", "host", "--seccomp-fd", seccomp_fd, "--die-with-parent", NULL
    };
    /* The same session, as the daemon sends it to a spare: without the
     * options fixed when the spare was made. */
    const char *session_args[] = {
      "--workspace", workspace, "--stage", stage_arg,
      "--probe-hidden", home_probe, "--probe-abstract", probe_abstract, "--probe-pid", probe_pid,
      "--protect", ".git/hooks", "--protect", ".git/config",
      "--env", "PATH=/usr/local/bin:/usr/bin:/bin", "--env", "LANG=C.UTF-8",
      "--", "sh", "-c", "echo x", NULL
    };

    /* Warm both (page cache, the dynamic linker's). */
    run_ms (sandbox_argv);
    run_ms (unshare_argv);
    for (guint i = 0; i < rounds; i++)
      {
        double ms;

        ms = run_ms (sandbox_argv);
        g_array_append_val (ours, ms);
        ms = run_ms (unshare_argv);
        g_array_append_val (peer, ms);
        ms = run_spare_ms (spare_argv, session_args);
        g_array_append_val (spare, ms);
      }
  }

  ours_ms = bench_median (ours);
  peer_ms = bench_median (peer);
  spare_ms = bench_median (spare);
  g_print ("bench/sandbox-alone - the sandbox helper by itself, %u rounds interleaved, medians\n", rounds);
  g_print ("%-52s %6.2f ms\n", "unshare -Urmpf --mount-proc sh -c 'echo x'", peer_ms);
  g_print ("%-52s %6.2f ms   %.2fx unshare\n", "paddock-sandbox, a safe session's options", ours_ms,
           ours_ms / peer_ms);
  g_print ("%-52s %6.2f ms   %.2fx unshare\n", "the same, made ahead (--spare): options to exit", spare_ms,
           spare_ms / peer_ms);
  g_print ("   the whole start's target is < 2x unshare (bench-sessions); this is the sandbox's part alone\n");

  g_rmdir (upper);
  {
    /* The overlay's work dir may hold its own "work" and "index". */
    g_autofree char *work_work = g_build_filename (work, "work", NULL);
    g_autofree char *work_index = g_build_filename (work, "index", NULL);

    g_rmdir (work_work);
    g_rmdir (work_index);
    g_rmdir (work);
  }
  g_rmdir (stage);
  g_rmdir (workspace);
  return 0;
}
