/* bench-sessions.c — sessions: start, teardown, PTY relay, memory, next to their peers
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Prints, in one run on this machine, each figure next to its peer:
 *  - session start: CreateSession until the first byte of the agent's
 *    output is read from an attached viewer, for the "safe" profile (user,
 *    mount and PID namespaces) and the "host" one, next to a bare
 *    posix_spawn of the same command read through a pipe and to util-linux
 *    `unshare -Urmpf --mount-proc` running it (the same namespaces, no daemon);
 *    rounds 0.2 s apart (a safe start then finds the sandbox the daemon
 *    made ahead), and a second safe start right after the first ("cold":
 *    its sandbox is made for it);
 *    and the CPU time (user + system) each start costs, which the load of a
 *    shared machine changes much less than the wall time;
 *  - teardown of 1,000 processes: Session1.Destroy of a safe session whose
 *    agent started them, next to the raw kernel cost (SIGKILL to pid 1 of an
 *    `unshare -Urpf` namespace holding the same 1,000, until it is reaped)
 *    and ANCHORS.md's published figure;
 *  - PTY relay throughput: N bytes of output through the daemon's terminal
 *    and scrollback to an attached viewer, next to reading a raw PTY;
 *  - the daemon's memory: VmRSS idle and with 50 idle safe sessions.
 *
 * Usage: bench-sessions [--relay-mib N]   (default 1024: 1 GiB)
 *        bench-sessions --start-only       (section 1 alone, for quick runs)
 *
 * Every session made here is destroyed before exit, failures included.
 * Exits non-zero when Paddock's correctness breaks during the run:
 * survivors after Destroy, output bytes lost on the way to the viewer, or a
 * session that does not start.
 */

#include "config.h"

#include "bench-common.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixfdlist.h>
#include <glib-unix.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "paddock-error.h"
#include "paddock-test-daemon.h"
#include "paddock-test-session.h"

#define START_ROUNDS        15
#define START_PAUSE_MS      200   /* between start rounds; the daemon's spare waits 100 ms */
#define TEARDOWN_PROCESSES  1000
#define TEARDOWN_ROUNDS     3
#define RELAY_ROUNDS        3
#define MEMORY_SESSIONS     50
#define PER_CLIENT          16
#define READ_CHUNK          (1024 * 1024)

/* The published peer of ANCHORS.md's "teardown of 500 escaped processes". */
#define PUBLISHED_PIDNS_KILL_MS   31.0
#define PUBLISHED_PIDNS_KILL_OF   500

static PaddockTestDaemon *daemon_under_test;
static char *workspace;
static char *marker_path;   /* the symlink to sleep that marks our processes */
static char *sh_path;
static char *unshare_path;
static char *head_path;

/* ------------------------------------------------------------------------ */
/* Bookkeeping: every session made here is destroyed, whatever happens     */
/* (the helper library's bail mode), then what the bench made on disk.     */

static void
remove_files (gpointer data G_GNUC_UNUSED)
{
  g_clear_pointer (&daemon_under_test, paddock_test_daemon_free);
  if (marker_path != NULL)
    unlink (marker_path);
  if (workspace != NULL)
    rmdir (workspace);
}

static void
destroy_everything (void)
{
  paddock_test_destroy_made ();
  remove_files (NULL);
}

static double
minimum (GArray *values)
{
  g_array_sort (values, bench_compare_double);
  return g_array_index (values, double, 0);
}

static char *
create_or_bail (GDBusConnection    *connection,
                const char         *profile,
                const char * const *argv)
{
  return paddock_test_create_session_or_fail (connection, workspace, profile, argv, NULL);
}

/* Destroy; returns FALSE (and says why) unless the daemon reports that no
 * process of the session survived. */
static gboolean
destroy_session (GDBusConnection *connection,
                 const char      *path,
                 guint64         *elapsed_ms)
{
  g_autoptr(GVariant) result = NULL;
  g_autoptr(GError) error = NULL;
  guint32 survivors = G_MAXUINT32;

  if (!paddock_test_destroy_session (connection, path, &result, &error))
    {
      g_printerr ("bench-sessions: Destroy %s: %s\n", path, error->message);
      return FALSE;
    }
  g_variant_lookup (result, "survivors", "u", &survivors);
  if (elapsed_ms != NULL)
    g_variant_lookup (result, "elapsed-ms", "t", elapsed_ms);
  if (survivors != 0)
    {
      g_printerr ("bench-sessions: Destroy %s: %u survivors\n", path, survivors);
      return FALSE;
    }
  return TRUE;
}

static void
destroy_or_bail (GDBusConnection *connection,
                 const char      *path)
{
  if (!destroy_session (connection, path, NULL))
    paddock_test_bail ("a session did not go away cleanly");
}

/* A viewer's socket, as a client of Attach gets it. */
static int
attach (GDBusConnection *connection,
        const char      *path,
        guint64         *first_offset)
{
  g_autoptr(GError) error = NULL;
  int fd = paddock_test_attach (connection, path, NULL, first_offset, &error);

  if (fd < 0)
    paddock_test_bail ("Attach: %s", error->message);
  return fd;
}

/* Reads one byte, waiting at most 10 s; returns it, or -1. */
static int
read_one_byte (int fd)
{
  struct pollfd p = { .fd = fd, .events = POLLIN };
  unsigned char byte;

  for (;;)
    {
      int ready = poll (&p, 1, 10000);

      if (ready < 0 && errno == EINTR)
        continue;
      if (ready <= 0)
        return -1;
      if (read (fd, &byte, 1) == 1)
        return byte;
      if (errno != EINTR && errno != EAGAIN)
        return -1;
    }
}

/* posix_spawn with stdout on @out_fd (-1: /dev/null, stderr too). */
static pid_t
spawn_with_stdout (const char * const *argv,
                   int                 out_fd)
{
  posix_spawn_file_actions_t actions;
  pid_t pid = -1;
  int status;

  posix_spawn_file_actions_init (&actions);
  if (out_fd >= 0)
    posix_spawn_file_actions_adddup2 (&actions, out_fd, STDOUT_FILENO);
  else
    {
      posix_spawn_file_actions_addopen (&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
      /* util-linux 2.38's unshare complains about its sigprocmask when its
       * child was killed: harmless, and not ours to print. */
      posix_spawn_file_actions_adddup2 (&actions, STDOUT_FILENO, STDERR_FILENO);
    }
  status = posix_spawn (&pid, argv[0], &actions, NULL, (char * const *) argv, environ);
  posix_spawn_file_actions_destroy (&actions);
  if (status != 0)
    paddock_test_bail ("posix_spawn %s: %s", argv[0], g_strerror (status));
  return pid;
}

static void
reap (pid_t pid)
{
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
}

/* ------------------------------------------------------------------------ */
/* 1. Session start                                                          */

/* The agent prints "x": the time to its first byte is the time to a usable
 * session. The same command for every contender. */
#define START_SCRIPT "echo x"

typedef struct
{
  GArray *bare;
  GArray *unshare;
  GArray *host;
  GArray *host_create;
  GArray *safe;
  GArray *safe_create;
  GArray *safe_cold;      /* right after another: no sandbox made ahead yet */
  GArray *host_terminal;  /* CreateSession with "terminal": no Attach */
  GArray *safe_terminal;
  GArray *safe_terminal_create;
} StartFigures;

/* fork/exec of the command itself, its output read through a pipe. */
static double
bare_start_ms (const char * const *argv)
{
  int out[2];
  gint64 start;
  pid_t pid;
  int byte;
  double ms;

  if (pipe2 (out, O_CLOEXEC) != 0)
    paddock_test_bail ("pipe: %s", g_strerror (errno));

  start = g_get_monotonic_time ();
  pid = spawn_with_stdout (argv, out[1]);
  close (out[1]);
  byte = read_one_byte (out[0]);
  ms = bench_ms_since (start);

  close (out[0]);
  reap (pid);
  if (byte != 'x')
    paddock_test_bail ("%s printed no 'x'", argv[0]);
  return ms;
}

/* CreateSession, then Attach, then the first byte on the viewer's socket.
 * CreateSession answers once the agent runs (for "safe": once the sandbox
 * built its root view and forked the agent); the replay of Attach carries
 * anything printed before it. */
static double
paddock_start_ms_keep (GDBusConnection  *connection,
                       const char       *profile,
                       double           *create_ms,
                       char            **kept_path)
{
  const char *argv[] = { "sh", "-c", START_SCRIPT, NULL };
  g_autofree char *path = NULL;
  guint64 first_offset = 0;
  gint64 start;
  double ms;
  int byte;
  int fd;

  start = g_get_monotonic_time ();
  path = create_or_bail (connection, profile, argv);
  *create_ms = bench_ms_since (start);
  fd = attach (connection, path, &first_offset);
  byte = read_one_byte (fd);
  ms = bench_ms_since (start);

  close (fd);
  if (kept_path != NULL)
    *kept_path = g_steal_pointer (&path);
  else
    destroy_or_bail (connection, path);
  if (byte != 'x')
    paddock_test_bail ("the %s session printed no 'x' (got %d)", profile, byte);
  return ms;
}

/* CreateSession with "terminal" (one end of a socketpair, sent with the
 * call), the first byte read from the other end as soon as it comes,
 * before or after the answer, as `paddockctl create --attach` does. */
static gboolean terminal_unsupported;   /* the daemon under test predates "terminal" */

typedef struct
{
  char     *path;
  GError   *error;
  gint64    replied;
  int       byte;
  gint64    read_at;
} TerminalStart;

static void
terminal_start_replied_cb (GObject      *source,
                           GAsyncResult *result,
                           gpointer      user_data)
{
  TerminalStart *t = user_data;

  t->path = paddock_test_create_session_finish (result, &t->error);
  t->replied = g_get_monotonic_time ();
}

static gboolean
terminal_start_readable_cb (int          fd,
                            GIOCondition condition,
                            gpointer     user_data)
{
  TerminalStart *t = user_data;
  unsigned char byte;

  t->byte = read (fd, &byte, 1) == 1 ? byte : -1;
  t->read_at = g_get_monotonic_time ();
  return G_SOURCE_REMOVE;
}

static gboolean
set_flag_cb (gpointer user_data)
{
  *(gboolean *) user_data = TRUE;
  return G_SOURCE_REMOVE;
}

static double
paddock_start_with_terminal_ms (GDBusConnection *connection,
                                const char      *profile,
                                double          *create_ms)
{
  const char *argv[] = { "sh", "-c", START_SCRIPT, NULL };
  TerminalStart t = { .byte = -1 };
  g_autoptr(GUnixFDList) fds = NULL;
  g_autofree char *path = NULL;
  GVariantBuilder extra;
  guint timeout_id;
  gboolean timed_out = FALSE;
  gint64 start;
  int pair[2];
  guint source;

  start = g_get_monotonic_time ();
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    paddock_test_bail ("socketpair: %s", g_strerror (errno));
  fds = g_unix_fd_list_new_from_array (&pair[1], 1);   /* takes pair[1] */
  g_variant_builder_init (&extra, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&extra, "{sv}", "terminal", g_variant_new_handle (0));
  paddock_test_create_session_async (connection, workspace, profile, argv, g_variant_builder_end (&extra), fds,
                                     terminal_start_replied_cb, &t);
  g_clear_object (&fds);   /* the message holds what it sends */
  source = g_unix_fd_add (pair[0], G_IO_IN | G_IO_HUP | G_IO_ERR, terminal_start_readable_cb, &t);
  timeout_id = g_timeout_add_seconds (10, set_flag_cb, &timed_out);
  while ((t.path == NULL && t.error == NULL) || (t.read_at == 0 && !timed_out))
    g_main_context_iteration (NULL, TRUE);
  if (!timed_out)
    g_source_remove (timeout_id);
  if (t.read_at == 0)
    g_source_remove (source);
  close (pair[0]);

  /* A daemon from before "terminal" (--peer-build style A/B runs with
   * PADDOCK_BUILD_ROOT of an older tree): no figure, not a failure. */
  if (g_error_matches (t.error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT) &&
      strstr (t.error->message, "Unknown session option") != NULL)
    {
      g_clear_error (&t.error);
      terminal_unsupported = TRUE;
      *create_ms = NAN;
      return NAN;
    }
  if (t.error != NULL)
    paddock_test_bail ("CreateSession (%s profile, with a terminal): %s", profile, t.error->message);
  path = g_steal_pointer (&t.path);
  destroy_or_bail (connection, path);
  if (t.byte != 'x')
    paddock_test_bail ("the %s session printed no 'x' on its terminal (got %d)", profile, t.byte);
  *create_ms = (double) (t.replied - start) / 1000.0;
  return (double) (t.read_at - start) / 1000.0;
}

static double
paddock_start_ms (GDBusConnection *connection,
                  const char      *profile,
                  double          *create_ms)
{
  return paddock_start_ms_keep (connection, profile, create_ms, NULL);
}

static void
measure_start (GDBusConnection *connection,
               StartFigures    *f)
{
  const char *bare_argv[] = { sh_path, "-c", START_SCRIPT, NULL };
  const char *unshare_argv[] = { unshare_path, "-Urmpf", "--mount-proc", sh_path, "-c", START_SCRIPT, NULL };

  f->bare = g_array_new (FALSE, FALSE, sizeof (double));
  f->unshare = g_array_new (FALSE, FALSE, sizeof (double));
  f->host = g_array_new (FALSE, FALSE, sizeof (double));
  f->host_create = g_array_new (FALSE, FALSE, sizeof (double));
  f->safe = g_array_new (FALSE, FALSE, sizeof (double));
  f->safe_create = g_array_new (FALSE, FALSE, sizeof (double));
  f->safe_cold = g_array_new (FALSE, FALSE, sizeof (double));
  f->host_terminal = g_array_new (FALSE, FALSE, sizeof (double));
  f->safe_terminal = g_array_new (FALSE, FALSE, sizeof (double));
  f->safe_terminal_create = g_array_new (FALSE, FALSE, sizeof (double));

  /* One warm-up of each (page cache, the daemon's first session), then
   * the contenders in turns that rotate each round, so that the machine's
   * noise hits them all. Each comes after the same pause (START_PAUSE_MS),
   * as a user's starts do: a start right after another finds the CPU busy
   * and warm, one after a pause finds it idle, which on this machine is
   * worth a millisecond either way. In the pause the daemon makes the next
   * safe sandbox ahead. A safe start right after the first one finds none
   * yet: the "cold" figure, a sandbox made for its session. */
  for (int r = -1; r < START_ROUNDS; r++)
    {
      enum { BARE, UNSHARE, HOST, HOST_TERMINAL, SAFE, SAFE_TERMINAL, N_CONTENDERS };
      double host_create = 0, safe_create = 0, cold_create = 0, safe_terminal_create = 0, unused_create;
      double ms[N_CONTENDERS];
      double safe_cold = 0;

      for (int turn = 0; turn < N_CONTENDERS; turn++)
        {
          int contender = (turn + MAX (r, 0)) % N_CONTENDERS;

          g_usleep (START_PAUSE_MS * 1000);
          switch (contender)
            {
            case BARE:
              ms[contender] = bare_start_ms (bare_argv);
              break;
            case UNSHARE:
              ms[contender] = bare_start_ms (unshare_argv);
              break;
            case HOST:
              ms[contender] = paddock_start_ms (connection, "host", &host_create);
              break;
            case HOST_TERMINAL:
              ms[contender] = paddock_start_with_terminal_ms (connection, "host", &unused_create);
              break;
            case SAFE:
              ms[contender] = paddock_start_ms (connection, "safe", &safe_create);
              safe_cold = paddock_start_ms (connection, "safe", &cold_create);
              break;
            case SAFE_TERMINAL:
              ms[contender] = paddock_start_with_terminal_ms (connection, "safe", &safe_terminal_create);
              break;
            default:
              g_assert_not_reached ();
            }
        }

      if (r < 0)
        continue;
      g_array_append_val (f->bare, ms[BARE]);
      g_array_append_val (f->unshare, ms[UNSHARE]);
      g_array_append_val (f->host, ms[HOST]);
      g_array_append_val (f->host_create, host_create);
      g_array_append_val (f->safe, ms[SAFE]);
      g_array_append_val (f->safe_create, safe_create);
      g_array_append_val (f->safe_cold, safe_cold);
      g_array_append_val (f->host_terminal, ms[HOST_TERMINAL]);
      g_array_append_val (f->safe_terminal, ms[SAFE_TERMINAL]);
      g_array_append_val (f->safe_terminal_create, safe_terminal_create);
    }
}

/* The floor under any call to the daemon: a method that does no work
 * (Peer.Ping, answered by GDBus itself) through the bus daemon. */
static double
bus_round_trip_ms (GDBusConnection *connection)
{
  g_autoptr(GArray) rounds = g_array_new (FALSE, FALSE, sizeof (double));

  for (guint r = 0; r < 7; r++)
    {
      gint64 start = g_get_monotonic_time ();
      double per;

      for (guint i = 0; i < 100; i++)
        {
          g_autoptr(GVariant) reply =
            g_dbus_connection_call_sync (connection, "org.paddock.Daemon", "/org/paddock/Daemon",
                                         "org.freedesktop.DBus.Peer", "Ping", NULL, NULL,
                                         G_DBUS_CALL_FLAGS_NONE, 30000, NULL, NULL);
        }
      per = bench_ms_since (start) / 100;
      g_array_append_val (rounds, per);
    }
  return bench_median (rounds);
}

/* ------------------------------------------------------------------------ */
/* 2. Teardown of 1,000 processes                                            */

/* Live processes whose argv[0] is @marker (a symlink to sleep in the
 * workspace, at the same path inside the sandbox): counted from outside,
 * whatever namespace they are in. Zombies have exited and do not count. */
static guint
count_marked (const char *marker)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *entry;
  guint count = 0;

  while (proc != NULL && (entry = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *cmdline_path = NULL;
      g_autofree char *stat_path = NULL;
      g_autofree char *cmdline = NULL;
      g_autofree char *stat = NULL;
      const char *after_comm;
      gsize length = 0;

      if (!g_ascii_isdigit (entry[0]))
        continue;
      cmdline_path = g_strdup_printf ("/proc/%s/cmdline", entry);
      if (!g_file_get_contents (cmdline_path, &cmdline, &length, NULL) || length == 0 ||
          strcmp (cmdline, marker) != 0)
        continue;
      stat_path = g_strdup_printf ("/proc/%s/stat", entry);
      if (!g_file_get_contents (stat_path, &stat, NULL, NULL))
        continue;
      after_comm = strrchr (stat, ')');
      if (after_comm != NULL && after_comm[1] == ' ' && after_comm[2] != 'Z' && after_comm[2] != 'X')
        count++;
    }

  return count;
}

static void
wait_for_marked (const char *marker,
                 guint       wanted)
{
  gint64 deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
  guint count = 0;

  while ((count = count_marked (marker)) < wanted)
    {
      if (g_get_monotonic_time () > deadline)
        paddock_test_bail ("only %u of %u processes started within 120 s", count, wanted);
      g_usleep (50 * 1000);
    }
}

static char *
spawn_script (const char *marker)
{
  return g_strdup_printf ("M=%s; i=0; while [ $i -lt %u ]; do $M 300 & i=$((i+1)); done; "
                          "echo spawned; wait", marker, TEARDOWN_PROCESSES);
}

typedef struct
{
  GArray *client;     /* Destroy, as the client waits for it */
  GArray *daemon;     /* Destroy's own "elapsed-ms" */
  GArray *kernel;     /* SIGKILL to pid 1 of a bare PID namespace, until reaped */
  double  spawn_s;    /* how long the 1,000 took to start in the sandbox */
  guint   survivors;  /* seen from outside the moment Destroy answered */
} TeardownFigures;

static double
paddock_teardown_ms (GDBusConnection *connection,
                     const char      *marker,
                     double          *daemon_ms,
                     double          *spawn_s,
                     guint           *survivors)
{
  g_autofree char *script = spawn_script (marker);
  const char *argv[] = { "sh", "-c", script, NULL };
  g_autofree char *path = NULL;
  guint64 elapsed = 0;
  gint64 start;
  double ms;

  start = g_get_monotonic_time ();
  path = create_or_bail (connection, "safe", argv);
  wait_for_marked (marker, TEARDOWN_PROCESSES);
  *spawn_s = bench_ms_since (start) / 1000.0;

  start = g_get_monotonic_time ();
  if (!destroy_session (connection, path, &elapsed))
    paddock_test_bail ("Destroy of the session with %u processes failed", TEARDOWN_PROCESSES);
  ms = bench_ms_since (start);

  *daemon_ms = (double) elapsed;
  *survivors += count_marked (marker);
  return ms;
}

/* The kernel's own cost: the same 1,000 in an unshare'd PID namespace, its
 * pid 1 SIGKILLed; unshare's wait for it returns once the kernel has killed
 * and reaped every process of the namespace. */
static double
kernel_teardown_ms (const char *marker)
{
  g_autofree char *script = spawn_script (marker);
  const char *argv[] = { unshare_path, "-Urpf", "--mount-proc", sh_path, "-c", script, NULL };
  g_autofree char *children_path = NULL;
  g_autofree char *children = NULL;
  guint64 init_pid = 0;
  gint64 start;
  pid_t pid;
  double ms;

  pid = spawn_with_stdout (argv, -1);
  wait_for_marked (marker, TEARDOWN_PROCESSES);

  children_path = g_strdup_printf ("/proc/%d/task/%d/children", (int) pid, (int) pid);
  if (!g_file_get_contents (children_path, &children, NULL, NULL) ||
      !g_ascii_string_to_unsigned (g_strstrip (children), 10, 1, G_MAXINT, &init_pid, NULL))
    {
      kill (pid, SIGKILL);
      reap (pid);
      paddock_test_bail ("could not find pid 1 of unshare's namespace");
    }

  start = g_get_monotonic_time ();
  kill ((pid_t) init_pid, SIGKILL);
  reap (pid);
  ms = bench_ms_since (start);

  if (count_marked (marker) != 0)
    paddock_test_bail ("processes survived the PID namespace's pid 1");
  return ms;
}

static void
measure_teardown (GDBusConnection *connection,
                  TeardownFigures *f)
{
  const char *marker;

  marker_path = g_build_filename (workspace, "bench-sleep", NULL);
  marker = marker_path;
  if (symlink ("/bin/sleep", marker) != 0)
    paddock_test_bail ("symlink %s: %s", marker, g_strerror (errno));

  f->client = g_array_new (FALSE, FALSE, sizeof (double));
  f->daemon = g_array_new (FALSE, FALSE, sizeof (double));
  f->kernel = g_array_new (FALSE, FALSE, sizeof (double));

  for (guint r = 0; r < TEARDOWN_ROUNDS; r++)
    {
      double kernel = kernel_teardown_ms (marker);
      double daemon_ms = 0;
      double spawn_s = 0;
      double client = paddock_teardown_ms (connection, marker, &daemon_ms, &spawn_s, &f->survivors);

      g_array_append_val (f->kernel, kernel);
      g_array_append_val (f->client, client);
      g_array_append_val (f->daemon, daemon_ms);
      f->spawn_s = MAX (f->spawn_s, spawn_s);
    }
}

/* ------------------------------------------------------------------------ */
/* 3. PTY relay throughput                                                   */

typedef struct
{
  guint64 bytes;
  GArray *relay_s;
  GArray *raw_s;
  guint64 lost;        /* bytes the viewer never got (skipped in the ring), worst round */
  guint64 extra;       /* bytes beyond what the agent wrote, worst round */
} RelayFigures;

/* Reads @fd until end of stream; returns the byte count. */
static guint64
drain (int fd)
{
  g_autofree guint8 *buffer = g_malloc (READ_CHUNK);
  guint64 total = 0;

  for (;;)
    {
      gssize n = read (fd, buffer, READ_CHUNK);

      if (n > 0)
        total += (guint64) n;
      else if (n < 0 && errno == EINTR)
        continue;
      else
        break;  /* 0 on the socket; EIO on a PTY master once the slave is gone */
    }
  return total;
}

/* The agent waits for a line before writing, so the viewer is attached
 * before the first byte and nothing is measured but the flow: "R" says
 * it is ready (echo off, so the line typed is not output), then exactly
 * @bytes NUL bytes, which the terminal passes unchanged. */
static double
paddock_relay_s (GDBusConnection *connection,
                 guint64          bytes,
                 guint64         *received)
{
  g_autofree char *script = g_strdup_printf ("stty -echo; echo R; read go; exec head -c %" G_GUINT64_FORMAT
                                             " /dev/zero", bytes);
  const char *argv[] = { "sh", "-c", script, NULL };
  g_autofree char *path = NULL;
  g_autoptr(GString) seen = g_string_new (NULL);
  guint64 first_offset = 0;
  const char *ready;
  gint64 start;
  double s;
  int fd;

  path = create_or_bail (connection, "safe", argv);
  fd = attach (connection, path, &first_offset);
  if (first_offset != 0)
    paddock_test_bail ("the viewer started at offset %" G_GUINT64_FORMAT, first_offset);

  while ((ready = strstr (seen->str, "R\r\n")) == NULL)
    {
      int byte = read_one_byte (fd);

      if (byte < 0)
        paddock_test_bail ("the relay agent never said it was ready");
      g_string_append_c (seen, (char) byte);
    }

  start = g_get_monotonic_time ();
  if (write (fd, "\n", 1) != 1)
    paddock_test_bail ("could not type into the session: %s", g_strerror (errno));
  *received = drain (fd);
  s = bench_ms_since (start) / 1000.0;

  close (fd);
  destroy_or_bail (connection, path);
  return s;
}

/* The same command on a PTY of our own, its master read directly: what any
 * terminal does, and the ceiling for a relay through a daemon. */
static double
raw_pty_s (guint64  bytes,
           guint64 *received)
{
  g_autofree char *count = g_strdup_printf ("%" G_GUINT64_FORMAT, bytes);
  const char *argv[] = { head_path, "-c", count, "/dev/zero", NULL };
  char slave_name[128];
  struct winsize size = { .ws_row = 24, .ws_col = 80 };
  gint64 start;
  double s;
  pid_t pid;
  int master;
  int slave;

  master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || grantpt (master) != 0 || unlockpt (master) != 0 ||
      ptsname_r (master, slave_name, sizeof slave_name) != 0)
    paddock_test_bail ("no PTY: %s", g_strerror (errno));
  slave = open (slave_name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0)
    paddock_test_bail ("open %s: %s", slave_name, g_strerror (errno));
  ioctl (master, TIOCSWINSZ, &size);

  start = g_get_monotonic_time ();
  pid = fork ();
  if (pid == 0)
    {
      /* Only async-signal-safe calls: this process has GDBus threads. */
      if (setsid () < 0 || ioctl (slave, TIOCSCTTY, 0) < 0 ||
          dup2 (slave, 0) < 0 || dup2 (slave, 1) < 0 || dup2 (slave, 2) < 0)
        _exit (126);
      execv (argv[0], (char * const *) argv);
      _exit (127);
    }
  if (pid < 0)
    paddock_test_bail ("fork: %s", g_strerror (errno));
  close (slave);
  *received = drain (master);
  s = bench_ms_since (start) / 1000.0;

  close (master);
  reap (pid);
  return s;
}

static void
measure_relay (GDBusConnection *connection,
               RelayFigures    *f)
{
  f->relay_s = g_array_new (FALSE, FALSE, sizeof (double));
  f->raw_s = g_array_new (FALSE, FALSE, sizeof (double));

  for (guint r = 0; r < RELAY_ROUNDS; r++)
    {
      guint64 raw_received = 0;
      guint64 relay_received = 0;
      double raw = raw_pty_s (f->bytes, &raw_received);
      double relay = paddock_relay_s (connection, f->bytes, &relay_received);

      if (raw_received != f->bytes)
        paddock_test_bail ("the raw PTY gave %" G_GUINT64_FORMAT " bytes of %" G_GUINT64_FORMAT,
              raw_received, f->bytes);
      if (relay_received < f->bytes)
        f->lost = MAX (f->lost, f->bytes - relay_received);
      else
        f->extra = MAX (f->extra, relay_received - f->bytes);
      g_array_append_val (f->raw_s, raw);
      g_array_append_val (f->relay_s, relay);
    }
}

/* ------------------------------------------------------------------------ */
/* 4. Memory                                                                 */

/* A "Key:   N kB" line of a /proc file, in KiB; 0 if absent. */
static guint64
proc_kib (guint32     pid,
          const char *file,
          const char *key)
{
  g_autofree char *path = g_strdup_printf ("/proc/%u/%s", pid, file);
  g_autofree char *contents = NULL;
  g_autofree char *needle = g_strconcat ("\n", key, ":", NULL);
  const char *line;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return 0;
  line = strstr (contents, needle);
  if (line == NULL)
    return 0;
  return g_ascii_strtoull (line + strlen (needle), NULL, 10);
}

static guint32
daemon_pid (GDBusConnection *connection)
{
  g_autoptr(PaddockIpcManager1) manager = paddock_test_manager (connection);
  g_autoptr(GVariant) info = NULL;
  g_autoptr(GError) error = NULL;
  guint32 pid = 0;

  if (!paddock_ipc_manager1_call_get_info_sync (manager, &info, NULL, &error))
    paddock_test_bail ("GetInfo: %s", error->message);
  if (!g_variant_lookup (info, "pid", "u", &pid) || pid == 0)
    paddock_test_bail ("GetInfo gave no pid");
  return pid;
}

/* ------------------------------------------------------------------------ */
/* 1b. CPU time of a start                                                   */

/* Wall time on a shared 2-core machine is mostly waiting for a core; the
 * CPU a start costs is not. Blocks of rounds (not interleaved), after
 * section 1 warmed everything up. */
#define CPU_ROUNDS 30

typedef struct
{
  double bare;
  double unshare;
  double host;
  double safe;
} CpuFigures;

/* User + system CPU of PID and of every child it has reaped (its
 * paddock-sandbox helpers, which reaped their pid 1, which reaped the
 * agent): /proc/PID/stat fields 14-17, in clock ticks. */
static double
process_tree_cpu_ms (guint32 pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%u/stat", pid);
  g_autofree char *contents = NULL;
  g_auto(GStrv) fields = NULL;
  const char *after_name;
  double ticks = 0;

  if (!g_file_get_contents (path, &contents, NULL, NULL) ||
      (after_name = strrchr (contents, ')')) == NULL)
    paddock_test_bail ("cannot read %s", path);
  /* After the name: state (field 3) is fields[0], utime (14) fields[11]. */
  fields = g_strsplit (after_name + 2, " ", -1);
  if (g_strv_length (fields) < 15)
    paddock_test_bail ("%s is shorter than expected", path);
  for (guint i = 11; i <= 14; i++)
    ticks += (double) g_ascii_strtoull (fields[i], NULL, 10);
  return ticks * 1000.0 / (double) sysconf (_SC_CLK_TCK);
}

static void
measure_start_cpu (GDBusConnection *connection,
                   CpuFigures      *f)
{
  const char *bare_argv[] = { sh_path, "-c", START_SCRIPT, NULL };
  const char *unshare_argv[] = { unshare_path, "-Urmpf", "--mount-proc", sh_path, "-c", START_SCRIPT, NULL };
  guint32 pid = daemon_pid (connection);
  const char *profiles[] = { "safe", "host" };
  double *paddock_out[] = { &f->safe, &f->host };
  const char * const *peers[] = { bare_argv, unshare_argv };
  double *peer_out[] = { &f->bare, &f->unshare };

  for (guint p = 0; p < G_N_ELEMENTS (profiles); p++)
    {
      g_autoptr(GPtrArray) kept = g_ptr_array_new_with_free_func (g_free);
      double before = process_tree_cpu_ms (pid);
      double create_ms;

      /* Destroy (its /proc scans and stage removal) is teardown, not
       * start: the sessions are destroyed after the figure is read. The
       * agent exits at once, so its helper is reaped (and its CPU counted
       * in ours) without Destroy; a moment is left for that. */
      for (guint r = 0; r < CPU_ROUNDS; r++)
        {
          char *path = NULL;

          paddock_start_ms_keep (connection, profiles[p], &create_ms, &path);
          g_ptr_array_add (kept, path);
        }
      g_usleep (300 * 1000);
      *paddock_out[p] = (process_tree_cpu_ms (pid) - before) / CPU_ROUNDS;
      for (guint i = 0; i < kept->len; i++)
        destroy_or_bail (connection, g_ptr_array_index (kept, i));
    }
  for (guint p = 0; p < G_N_ELEMENTS (peers); p++)
    {
      double before = bench_children_cpu_ms ();

      for (guint r = 0; r < CPU_ROUNDS; r++)
        bare_start_ms (peers[p]);
      *peer_out[p] = (bench_children_cpu_ms () - before) / CPU_ROUNDS;
    }
}

static void
print_start_cpu (const CpuFigures *cpu)
{
  g_print ("1b. CPU time per start (user + system), blocks of %u, until the agent's first byte and its\n"
           "    exit: paddockd and all it started (helper, pid 1, agent; not dbus-daemon, not this client,\n"
           "    not Destroy), or the peer and its children\n",
           CPU_ROUNDS);
  g_print ("%-46s %7.2f ms\n", "bare posix_spawn", cpu->bare);
  g_print ("%-46s %7.2f ms\n", "unshare -Urmpf --mount-proc", cpu->unshare);
  g_print ("%-46s %7.2f ms\n", "paddock host profile", cpu->host);
  g_print ("%-46s %7.2f ms   %5.2fx unshare\n\n", "paddock safe profile", cpu->safe,
           cpu->safe / cpu->unshare);
}

/* What a session costs outside the daemon: its paddock-sandbox supervisor
 * and the sandbox's pid 1, proportional set size (shared pages split). */
static guint64
helper_pss_kib (GDBusConnection *connection,
                const char      *path)
{
  g_autoptr(GVariant) main_pid = paddock_test_session_property (connection, path, "MainPid");
  guint32 supervisor = g_variant_get_uint32 (main_pid);
  g_autofree char *children_path = g_strdup_printf ("/proc/%u/task/%u/children", supervisor, supervisor);
  g_autofree char *children = NULL;
  guint64 pss = proc_kib (supervisor, "smaps_rollup", "Pss");
  guint64 init_pid = 0;

  if (g_file_get_contents (children_path, &children, NULL, NULL) &&
      g_ascii_string_to_unsigned (g_strstrip (children), 10, 1, G_MAXINT, &init_pid, NULL))
    pss += proc_kib ((guint32) init_pid, "smaps_rollup", "Pss");
  return pss;
}

typedef struct
{
  guint64 idle_kib;
  guint64 loaded_kib;
  guint64 after_kib;
  guint64 helper_kib;   /* per session, supervisor + pid 1 */
} MemoryFigures;

static void
measure_memory (PaddockTestDaemon *daemon,
                MemoryFigures     *f)
{
  GDBusConnection *main_connection = paddock_test_daemon_get_connection (daemon);
  const char *argv[] = { "sleep", "300", NULL };
  g_autoptr(GPtrArray) connections = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) owners = g_ptr_array_new ();
  guint32 pid = daemon_pid (main_connection);
  guint64 helper_total = 0;

  /* One session made and destroyed first, so the daemon's one-time costs
   * (first fork, type registrations, the sandbox's pages in the cache) are
   * not billed to the fifty. */
  {
    g_autofree char *path = create_or_bail (main_connection, "safe", argv);
    destroy_or_bail (main_connection, path);
  }
  g_usleep (500 * 1000);
  f->idle_kib = proc_kib (pid, "status", "VmRSS");

  /* The daemon allows 16 sessions per client: several clients, as several
   * windows and scripts would be. */
  for (guint i = 0; i < MEMORY_SESSIONS; i++)
    {
      GDBusConnection *connection;

      if (i % PER_CLIENT == 0)
        g_ptr_array_add (connections, paddock_test_daemon_new_connection (daemon));
      connection = g_ptr_array_index (connections, connections->len - 1);
      g_ptr_array_add (paths, create_or_bail (connection, "safe", argv));
      g_ptr_array_add (owners, connection);
    }

  /* Idle for a while: the per-second process count has run for each. */
  g_usleep (2500 * 1000);
  f->loaded_kib = proc_kib (pid, "status", "VmRSS");
  for (guint i = 0; i < paths->len; i++)
    helper_total += helper_pss_kib (g_ptr_array_index (owners, i), g_ptr_array_index (paths, i));
  f->helper_kib = helper_total / MEMORY_SESSIONS;

  for (guint i = 0; i < paths->len; i++)
    destroy_or_bail (g_ptr_array_index (owners, i), g_ptr_array_index (paths, i));
  g_usleep (500 * 1000);
  f->after_kib = proc_kib (pid, "status", "VmRSS");
}

/* ------------------------------------------------------------------------ */

static char *
find_or_bail (const char *program)
{
  char *path = g_find_program_in_path (program);

  if (path == NULL)
    paddock_test_bail ("%s is not installed", program);
  return path;
}

static void
print_start (const StartFigures *start,
             double              ping_ms)
{
  double bare = bench_median (start->bare);
  double unshare = bench_median (start->unshare);
  double host = bench_median (start->host);
  double safe = bench_median (start->safe);
  double safe_terminal = bench_median (start->safe_terminal);

  g_print ("1. session start: create -> first output byte of `sh -c '" START_SCRIPT "'`\n");
  g_print ("%-46s %10s %10s\n", "", "median", "min");
  g_print ("%-46s %7.2f ms %7.2f ms\n", "bare posix_spawn, read a pipe", bare, minimum (start->bare));
  g_print ("%-46s %7.2f ms %7.2f ms\n", "unshare -Urmpf --mount-proc, read a pipe", unshare,
           minimum (start->unshare));
  g_print ("%-46s %7.2f ms %7.2f ms   %5.1fx bare\n", "paddock host profile (CreateSession+Attach)",
           host, minimum (start->host), host / bare);
  g_print ("%-46s %7.2f ms\n", "  of which: CreateSession reply", bench_median (start->host_create));
  g_print ("%-46s %7.2f ms %7.2f ms   %5.1fx bare  %5.2fx unshare\n",
           "paddock safe profile (CreateSession+Attach)", safe, minimum (start->safe), safe / bare,
           safe / unshare);
  g_print ("%-46s %7.2f ms\n", "  of which: CreateSession reply", bench_median (start->safe_create));
  g_print ("%-46s %7.2f ms %7.2f ms   %5.1fx bare  %5.2fx unshare\n",
           "  cold: right after another (no spare yet)", bench_median (start->safe_cold),
           minimum (start->safe_cold), bench_median (start->safe_cold) / bare,
           bench_median (start->safe_cold) / unshare);
  if (terminal_unsupported)
    {
      g_print ("%-46s %s\n", "paddock, CreateSession with a terminal", "(this daemon predates \"terminal\")");
      g_print ("%-46s %7.2f ms\n", "bus round trip (Peer.Ping), for scale", ping_ms);
      g_print ("   target: safe < 2x unshare: %s with Attach (%.2fx)\n", bench_verdict (safe < 2 * unshare),
               safe / unshare);
    }
  else
    {
      g_print ("%-46s %7.2f ms %7.2f ms   %5.1fx bare\n", "paddock host, CreateSession with a terminal",
               bench_median (start->host_terminal), minimum (start->host_terminal),
               bench_median (start->host_terminal) / bare);
      g_print ("%-46s %7.2f ms %7.2f ms   %5.1fx bare  %5.2fx unshare\n",
               "paddock safe, CreateSession with a terminal", safe_terminal, minimum (start->safe_terminal),
               safe_terminal / bare, safe_terminal / unshare);
      g_print ("%-46s %7.2f ms\n", "  its CreateSession reply", bench_median (start->safe_terminal_create));
      g_print ("%-46s %7.2f ms\n", "bus round trip (Peer.Ping), for scale", ping_ms);
      g_print ("   target: safe < 2x unshare: %s with a terminal at create (%.2fx), %s with Attach (%.2fx)\n",
               bench_verdict (safe_terminal < 2 * unshare), safe_terminal / unshare,
               bench_verdict (safe < 2 * unshare), safe / unshare);
    }
  g_print ("   peer figures (ANCHORS.md): bare ls ~ 3 ms; namespaces add ~ 4 ms; docker/podman 280-380 ms\n\n");
}

int
main (int   argc,
      char *argv[])
{
  GDBusConnection *connection;
  StartFigures start = { 0, };
  CpuFigures cpu = { 0, };
  TeardownFigures teardown = { 0, };
  RelayFigures relay = { 0, };
  MemoryFigures memory = { 0, };
  double ping_ms;
  double client_ms;
  double kernel_ms;
  double raw_rate;
  double relay_rate;
  double per_session_kib;
  gboolean failed = FALSE;
  gboolean start_only = FALSE;
  guint64 relay_mib = 1024;

  signal (SIGPIPE, SIG_IGN);
  (void) paddock_error_quark ();   /* the daemon's D-Bus errors as PADDOCK_ERROR */

  if (argc == 3 && g_str_equal (argv[1], "--relay-mib"))
    relay_mib = g_ascii_strtoull (argv[2], NULL, 10);
  else if (argc == 2 && g_str_equal (argv[1], "--start-only"))
    start_only = TRUE;
  else if (argc != 1)
    {
      g_printerr ("usage: %s [--relay-mib N | --start-only]\n", argv[0]);
      return 2;
    }
  if (relay_mib == 0 || relay_mib > 64 * 1024)
    {
      g_printerr ("bench-sessions: --relay-mib takes 1 to 65536\n");
      return 2;
    }
  relay.bytes = relay_mib * 1024 * 1024;

  paddock_test_set_fail_mode (PADDOCK_TEST_FAIL_BAIL, "bench-sessions");
  paddock_test_on_bail (remove_files, NULL);
  sh_path = find_or_bail ("sh");
  unshare_path = find_or_bail ("unshare");
  head_path = find_or_bail ("head");

  if (g_getenv ("PADDOCK_BUILD_ROOT") == NULL)
    {
      g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
      g_autofree char *bench_dir = g_path_get_dirname (exe);
      g_autofree char *root = g_build_filename (bench_dir, "..", "..", NULL);

      g_setenv ("PADDOCK_BUILD_ROOT", root, TRUE);
    }

  workspace = g_dir_make_tmp ("paddock-bench-XXXXXX", NULL);
  if (workspace == NULL)
    paddock_test_bail ("no temporary folder");

  g_setenv ("PADDOCK_TEST_QUIET", "1", TRUE);
  daemon_under_test = paddock_test_daemon_new (NULL);
  connection = paddock_test_daemon_get_connection (daemon_under_test);

  if (start_only)
    {
      ping_ms = bus_round_trip_ms (connection);
      measure_start (connection, &start);
      measure_start_cpu (connection, &cpu);
      print_start (&start, ping_ms);
      print_start_cpu (&cpu);
      destroy_everything ();
      return EXIT_SUCCESS;
    }

  /* Memory first, on a daemon that has done nothing else yet. */
  measure_memory (daemon_under_test, &memory);
  ping_ms = bus_round_trip_ms (connection);
  measure_start (connection, &start);
  measure_start_cpu (connection, &cpu);
  measure_teardown (connection, &teardown);
  measure_relay (connection, &relay);

  client_ms = bench_median (teardown.client);
  kernel_ms = bench_median (teardown.kernel);
  raw_rate = (double) relay.bytes / bench_median (relay.raw_s) / (1024.0 * 1024.0);
  relay_rate = (double) relay.bytes / bench_median (relay.relay_s) / (1024.0 * 1024.0);
  per_session_kib = ((double) memory.loaded_kib - (double) memory.idle_kib) / MEMORY_SESSIONS;

  g_print ("bench/sessions - medians of %u rounds (start), %u (teardown, relay); %u cores\n\n",
           START_ROUNDS, TEARDOWN_ROUNDS, g_get_num_processors ());

  print_start (&start, ping_ms);
  print_start_cpu (&cpu);

  g_print ("2. teardown of %u processes (safe session, Session1.Destroy)\n", TEARDOWN_PROCESSES);
  g_print ("%-46s %7.1f ms   (min %.1f, max %.1f)\n", "paddock Destroy, client side", client_ms,
           minimum (teardown.client), g_array_index (teardown.client, double, teardown.client->len - 1));
  g_print ("%-46s %7.1f ms\n", "paddock Destroy, its own elapsed-ms", bench_median (teardown.daemon));
  g_print ("%-46s %7.1f ms   (min %.1f) %5.1fx\n", "kernel: SIGKILL pid 1 of unshare -Urpf, reaped",
           kernel_ms, minimum (teardown.kernel), client_ms / kernel_ms);
  g_print ("%-46s %7.1f ms   for %u (published)\n", "ANCHORS.md: PID namespace kill",
           PUBLISHED_PIDNS_KILL_MS, PUBLISHED_PIDNS_KILL_OF);
  g_print ("%-46s %7u\n", "survivors, seen from outside after Destroy", teardown.survivors);
  g_print ("%-46s %7.1f s\n", "(spawning the 1,000 in the sandbox took, max)", teardown.spawn_s);
  g_print ("   target: < 200 ms: %s\n\n", bench_verdict (client_ms < 200));

  g_print ("3. PTY relay: %" G_GUINT64_FORMAT " MiB of `head -c N /dev/zero`\n", relay_mib);
  g_print ("%-46s %7.0f MiB/s (%.2f s)\n", "raw PTY, master read directly", raw_rate,
           bench_median (relay.raw_s));
  g_print ("%-46s %7.0f MiB/s (%.2f s)  %5.2fx raw\n", "paddock safe session -> Attach viewer",
           relay_rate, bench_median (relay.relay_s), relay_rate / raw_rate);
  g_print ("%-46s %7" G_GUINT64_FORMAT " bytes (worst round)\n", "bytes the viewer skipped", relay.lost);
  g_print ("   target: >= 0.8x raw: %s\n\n", bench_verdict (relay_rate >= 0.8 * raw_rate));

  g_print ("4. daemon memory (paddockd VmRSS)\n");
  g_print ("%-46s %7" G_GUINT64_FORMAT " KiB\n", "idle (after one session made and destroyed)",
           memory.idle_kib);
  g_print ("%-46s %7" G_GUINT64_FORMAT " KiB\n", "with 50 idle safe sessions (sleep 300)",
           memory.loaded_kib);
  g_print ("%-46s %7.0f KiB\n", "per idle session, in the daemon", per_session_kib);
  g_print ("%-46s %7" G_GUINT64_FORMAT " KiB\n", "after destroying the 50", memory.after_kib);
  g_print ("%-46s %7" G_GUINT64_FORMAT " KiB\n", "per session outside it (sandbox helpers, PSS)",
           memory.helper_kib);
  g_print ("   target: < 300 KiB per idle session (daemon): %s\n", bench_verdict (per_session_kib < 300));
  g_print ("   peer figure (ANCHORS.md): pVisor stage, 32 concurrent sessions in 2 GiB\n");

  if (teardown.survivors != 0)
    {
      g_printerr ("bench-sessions: %u processes survived Destroy\n", teardown.survivors);
      failed = TRUE;
    }
  if (relay.lost != 0 || relay.extra != 0)
    {
      g_printerr ("bench-sessions: the viewer got %" G_GUINT64_FORMAT " bytes too few, %"
                  G_GUINT64_FORMAT " too many\n", relay.lost, relay.extra);
      failed = TRUE;
    }

  destroy_everything ();
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
