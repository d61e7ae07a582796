/* bench-exec.c — Session1.Exec and Session1.Run round trips next to a native fork/exec/wait
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Prints, in one run on this machine, the round trip of running `true`
 * through the daemon in a running session — Session1.Exec, until the
 * command's exit status and its (empty) stdout are in the client's hands —
 * for a "safe" session (the sandbox's pid 1 spawns it) and a "host" one,
 * next to fork + exec + waitpid of /bin/true in this process, interleaved
 * in the same run; and the same through Session1.Run, one call that
 * answers with exit status and output (from a second connection of this
 * process, and with nothing listening to PropertiesChanged during those
 * rounds, as for a script that uses Run alone).
 * ANCHORS.md's peer: coding-tools-mcp, 50 ms p50, 8.8× native.
 *
 * The client does what a careful client does: it listens to the command's
 * PropertiesChanged (subscribed before Exec, so nothing is missed), waits
 * for State to leave "starting"/"running", reads stdout once, and releases
 * the command without waiting for that reply (Release is not part of the
 * figure; D-Bus keeps one client's calls in order, so the next Exec sees it).
 *
 * Next to wall time, CPU time per round trip, read around each one from
 * the kernel's per-thread counters (schedstat, ns) and the session
 * cgroup's usage_usec: for Exec, the client (this process), the bus daemon,
 * paddockd and the session's cgroup (the sandbox's pid 1, supervisor and
 * command, or the host command); natively, this process and its child.
 * CPU is what a loaded machine does not inflate by waiting for a core
 * (the sandbox's cgroup part is "n/a" without a session cgroup).
 *
 * Usage: bench-exec [--runs N]   (default 300)
 *
 * Exits non-zero when a command does not run to exit status 0.
 */

#include "config.h"

#include "bench-common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-test-client.h"
#include "paddock-test-daemon.h"

#define WARM_UP  10

static PaddockTestDaemon *daemon_under_test;
static char *workspace;
static GHashTable *ended;       /* command path -> exit status, from PropertiesChanged */

/* After the sessions (the helper library destroys those it made). */
static void
remove_files (gpointer data G_GNUC_UNUSED)
{
  g_clear_pointer (&daemon_under_test, paddock_test_daemon_free);
  if (workspace != NULL)
    rmdir (workspace);
}

/* @fraction of the way through the sorted values: 0.5 is the median. */
static double
quantile (GArray *values,
          double  fraction)
{
  g_array_sort (values, bench_compare_double);
  return g_array_index (values, double, (guint) (fraction * (values->len - 1) + 0.5));
}

static double
us_since (gint64 start)
{
  return (double) (g_get_monotonic_time () - start);
}

static char *
create_session (GDBusConnection *connection,
                const char      *profile)
{
  const char *argv[] = { "sleep", "3600", NULL };

  return paddock_test_create_session_or_fail (connection, workspace, profile, argv, NULL);
}

/* CPU time of every thread of PID so far, in ns; 0 if unreadable. */
static gint64
process_cpu_ns (int pid)
{
  g_autofree char *task_dir = g_strdup_printf ("/proc/%d/task", pid);
  g_autoptr(GDir) dir = g_dir_open (task_dir, 0, NULL);
  const char *tid;
  gint64 sum = 0;

  while (dir != NULL && (tid = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_strdup_printf ("%s/%s/schedstat", task_dir, tid);
      g_autofree char *text = NULL;

      if (g_file_get_contents (path, &text, NULL, NULL))
        sum += g_ascii_strtoll (text, NULL, 10);
    }
  return sum;
}

/* The unix pid of a bus name's owner (org.freedesktop.DBus: the bus
 * daemon itself), or 0. */
static int
bus_name_pid (GDBusConnection *connection,
              const char      *name)
{
  g_autoptr(GVariant) reply =
    g_dbus_connection_call_sync (connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                 "org.freedesktop.DBus", "GetConnectionUnixProcessID",
                                 g_variant_new ("(s)", name), G_VARIANT_TYPE ("(u)"),
                                 G_DBUS_CALL_FLAGS_NONE, 10000, NULL, NULL);
  guint32 pid = 0;

  if (reply != NULL)
    g_variant_get (reply, "(u)", &pid);
  return (int) pid;
}

/* usage_usec of a cpu.stat in ns, or 0. */
static gint64
cgroup_cpu_ns (const char *cpu_stat)
{
  return MAX (bench_cpu_usage_us (cpu_stat), 0) * 1000;
}

static int bus_pid;
static int daemon_pid;

enum { CPU_CLIENT, CPU_BUS, CPU_DAEMON, CPU_SESSION, N_CPU_PARTS };
static const char *const cpu_part_names[] = { "client", "bus", "paddockd", "session" };

/* The CPU time of everything an Exec involves, so far, in ns, by part. */
static void
exec_cpu_ns (const char *cpu_stat,
             gint64      parts[N_CPU_PARTS])
{
  parts[CPU_CLIENT] = process_cpu_ns (getpid ());
  parts[CPU_BUS] = process_cpu_ns (bus_pid);
  parts[CPU_DAEMON] = process_cpu_ns (daemon_pid);
  parts[CPU_SESSION] = cgroup_cpu_ns (cpu_stat);
}

/* Appends the CPU used between BEFORE and AFTER, in µs: the total to
 * TOTAL and each part to PARTS[i]. */
static void
record_cpu (const gint64  before[N_CPU_PARTS],
            const gint64  after[N_CPU_PARTS],
            GArray       *total,
            GArray       *parts[N_CPU_PARTS])
{
  double sum = 0;

  for (guint i = 0; i < N_CPU_PARTS; i++)
    {
      double us = (double) (after[i] - before[i]) / 1000.0;

      sum += us;
      g_array_append_val (parts[i], us);
    }
  g_array_append_val (total, sum);
}

static void
print_cpu_parts (GArray *parts[N_CPU_PARTS])
{
  g_print ("%-44s", "    by part (medians):");
  for (guint i = 0; i < N_CPU_PARTS; i++)
    g_print (" %s %.0f us%s", cpu_part_names[i], quantile (parts[i], 0.5), i + 1 < N_CPU_PARTS ? "," : "\n");
}

/* Every command's PropertiesChanged: remember those that ended. */
static void
properties_changed_cb (GDBusConnection *connection,
                       const char      *sender_name,
                       const char      *object_path,
                       const char      *interface_name,
                       const char      *signal_name,
                       GVariant        *parameters,
                       gpointer         user_data)
{
  g_autoptr(GVariant) changed = NULL;
  const char *interface = NULL;
  const char *state = NULL;
  gint32 status = -1;

  g_variant_get (parameters, "(&s@a{sv}@as)", &interface, &changed, NULL);
  if (!g_str_equal (interface, "org.paddock.Command1") ||
      !g_variant_lookup (changed, "State", "&s", &state) ||
      g_str_equal (state, "starting") || g_str_equal (state, "running"))
    return;
  g_variant_lookup (changed, "ExitStatus", "i", &status);
  g_hash_table_insert (ended, g_strdup (object_path), GINT_TO_POINTER (status));
}

/* Exec(['true']) until its exit status and stdout are in hand, in µs;
 * @reply_us is the Exec reply alone. */
static double
paddock_exec_us (PaddockIpcSession1 *session,
                 double             *reply_us)
{
  const char *argv[] = { "true", NULL };
  const char *path = g_dbus_proxy_get_object_path (G_DBUS_PROXY (session));
  g_autoptr(GVariant) output = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *command = NULL;
  gpointer status = NULL;
  gint64 start;
  double us;

  start = g_get_monotonic_time ();
  if (!paddock_ipc_session1_call_exec_sync (session, argv, "", g_variant_new ("a{ss}", NULL), 0, FALSE, &command,
                                            NULL, &error))
    paddock_test_bail ("Exec: %s", error->message);
  *reply_us = us_since (start);

  while (!g_hash_table_lookup_extended (ended, command, NULL, &status))
    {
      if (us_since (start) > 10 * G_USEC_PER_SEC)
        paddock_test_bail ("%s never ended", command);
      g_main_context_iteration (NULL, TRUE);
    }

  output = paddock_test_command_call (session, command, "ReadOutput",
                                      g_variant_new ("(stu)", "stdout", (guint64) 0, 65536), &error);
  if (output == NULL)
    paddock_test_bail ("ReadOutput: %s", error->message);
  us = us_since (start);

  if (GPOINTER_TO_INT (status) != 0)
    paddock_test_bail ("`true` in %s exited with %d", path, GPOINTER_TO_INT (status));

  g_clear_pointer (&output, g_variant_unref);
  output = paddock_test_command_call (session, command, "Release", NULL, NULL);
  g_hash_table_remove (ended, command);
  return us;
}

/* Run(['true']) until its result is in hand, in µs. */
static double
paddock_run_us (PaddockIpcSession1 *session)
{
  const char *argv[] = { "true", NULL };
  g_autoptr(GVariant) result = NULL;
  g_autoptr(GVariant) output = NULL;
  g_autoptr(GError) error = NULL;
  gint32 status = -1;
  gint64 start;
  double us;

  start = g_get_monotonic_time ();
  if (!paddock_ipc_session1_call_run_sync (session, argv, "", g_variant_new ("a{ss}", NULL), 0,
                                           g_variant_new ("a{sv}", NULL), &result, NULL, &error))
    paddock_test_bail ("Run: %s", error->message);
  us = us_since (start);

  output = g_variant_lookup_value (result, "stdout", G_VARIANT_TYPE_BYTESTRING);
  if (!g_variant_lookup (result, "exit-status", "i", &status) || output == NULL)
    paddock_test_bail ("Run's result lacks exit-status or stdout");
  if (status != 0)
    paddock_test_bail ("`true` in %s exited with %d", g_dbus_proxy_get_object_path (G_DBUS_PROXY (session)),
                       status);
  return us;
}

/* fork + exec + waitpid of /bin/true, here. */
static double
native_us (const char *true_path)
{
  gint64 start = g_get_monotonic_time ();
  int status = 0;
  pid_t pid;

  pid = fork ();
  if (pid == 0)
    {
      /* This process has GDBus threads: only async-signal-safe calls. */
      const char *argv[] = { true_path, NULL };
      execv (true_path, (char * const *) argv);
      _exit (127);
    }
  if (pid < 0)
    paddock_test_bail ("fork: %s", g_strerror (errno));
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    paddock_test_bail ("%s failed", true_path);
  return us_since (start);
}

/* One way of running `true` through the daemon, and what it measured. */
typedef struct
{
  const char *label;
  const char *session;
  /* Made before the clock starts: Exec's on the bench's connection,
   * Run's on the script's. */
  PaddockIpcSession1 *proxy;
  const char *cpu_stat;
  gboolean    run;
  GArray     *wall;
  GArray     *reply;
  GArray     *cpu;
  GArray     *parts[N_CPU_PARTS];
} Way;

enum { SAFE_EXEC, HOST_EXEC, SAFE_RUN, HOST_RUN, N_WAYS };

static void
print_way (Way    *way,
           double  native_median,
           double  native_cpu)
{
  double median = quantile (way->wall, 0.5);
  double cpu = quantile (way->cpu, 0.5);

  g_print ("%-44s %6.0f us %6.0f us %6.0f us   %5.2fx native\n", way->label, median,
           quantile (way->wall, 0.1), quantile (way->wall, 0.9), median / native_median);
  if (!way->run)
    g_print ("%-44s %6.0f us\n", "  of which: the Exec reply", quantile (way->reply, 0.5));
  g_print ("%-44s %6.0f us%s   %5.2fx native\n", "  CPU (client, bus, paddockd, session)", cpu,
           way->cpu_stat == NULL ? " (no session cgroup: without the session's part)" : "", cpu / native_cpu);
  print_cpu_parts (way->parts);
}

int
main (int   argc,
      char *argv[])
{
  GDBusConnection *connection;
  g_autoptr(GDBusConnection) script_connection = NULL;
  g_autofree char *true_path = NULL;
  g_autofree char *safe = NULL;
  g_autofree char *host = NULL;
  g_autoptr(GArray) native = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) native_cpu = g_array_new (FALSE, FALSE, sizeof (double));
  g_autofree char *safe_stat = NULL;
  g_autofree char *host_stat = NULL;
  gint64 safe_run_start;
  gint64 safe_run_ns;
  guint64 runs = 300;
  guint subscription = 0;
  Way ways[N_WAYS];
  double n;

  if (argc == 3 && g_str_equal (argv[1], "--runs"))
    runs = g_ascii_strtoull (argv[2], NULL, 10);
  else if (argc != 1)
    {
      g_printerr ("usage: %s [--runs N]\n", argv[0]);
      return 2;
    }
  if (runs < 1 || runs > 100000)
    {
      g_printerr ("bench-exec: --runs takes 1 to 100000\n");
      return 2;
    }

  true_path = g_find_program_in_path ("true");
  if (true_path == NULL)
    paddock_test_bail ("true is not installed");

  if (g_getenv ("PADDOCK_BUILD_ROOT") == NULL)
    {
      g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
      g_autofree char *bench_dir = g_path_get_dirname (exe);
      g_autofree char *root = g_build_filename (bench_dir, "..", "..", NULL);

      g_setenv ("PADDOCK_BUILD_ROOT", root, TRUE);
    }

  paddock_test_set_fail_mode (PADDOCK_TEST_FAIL_BAIL, "bench-exec");
  paddock_test_on_bail (remove_files, NULL);
  ended = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  workspace = g_dir_make_tmp ("paddock-bench-XXXXXX", NULL);
  if (workspace == NULL)
    paddock_test_bail ("no temporary folder");

  g_setenv ("PADDOCK_TEST_QUIET", "1", TRUE);
  daemon_under_test = paddock_test_daemon_new (NULL);
  connection = paddock_test_daemon_get_connection (daemon_under_test);
  script_connection = paddock_test_daemon_new_connection (daemon_under_test);

  safe = create_session (connection, "safe");
  host = create_session (connection, "host");
  bus_pid = bus_name_pid (connection, "org.freedesktop.DBus");
  daemon_pid = bus_name_pid (connection, "org.paddock.Daemon");
  safe_stat = bench_session_cpu_stat (connection, safe);
  host_stat = bench_session_cpu_stat (connection, host);

  ways[SAFE_EXEC] = (Way) { "paddock safe session, Session1.Exec", safe,
                            paddock_test_session (connection, safe), safe_stat, FALSE, };
  ways[HOST_EXEC] = (Way) { "paddock host session, Session1.Exec", host,
                            paddock_test_session (connection, host), host_stat, FALSE, };
  ways[SAFE_RUN] = (Way) { "paddock safe session, Session1.Run", safe,
                           paddock_test_session (script_connection, safe), safe_stat, TRUE, };
  ways[HOST_RUN] = (Way) { "paddock host session, Session1.Run", host,
                           paddock_test_session (script_connection, host), host_stat, TRUE, };
  for (guint w = 0; w < N_WAYS; w++)
    {
      ways[w].wall = g_array_new (FALSE, FALSE, sizeof (double));
      ways[w].reply = g_array_new (FALSE, FALSE, sizeof (double));
      ways[w].cpu = g_array_new (FALSE, FALSE, sizeof (double));
      for (guint i = 0; i < N_CPU_PARTS; i++)
        ways[w].parts[i] = g_array_new (FALSE, FALSE, sizeof (double));
    }

  safe_run_start = cgroup_cpu_ns (safe_stat);
  /* Interleaved, so that the machine's noise hits all five alike. */
  for (gint64 r = -WARM_UP; r < (gint64) runs; r++)
    {
      gint64 c0 = process_cpu_ns (getpid ()) + (gint64) (bench_children_cpu_ms () * 1e6);
      double nat = native_us (true_path);
      gint64 c1 = process_cpu_ns (getpid ()) + (gint64) (bench_children_cpu_ms () * 1e6);
      double nc = (double) (c1 - c0) / 1000.0;

      for (guint w = 0; w < N_WAYS; w++)
        {
          gint64 before[N_CPU_PARTS];
          gint64 after[N_CPU_PARTS];
          double reply_us = 0;
          double us;

          /* The Exec client listens to PropertiesChanged during its rounds
           * only: a script that uses Run listens to nothing, so Run's rounds
           * must not pay for a listener (outside the timed part). */
          if (!ways[w].run && subscription == 0)
            {
              subscription = g_dbus_connection_signal_subscribe (connection, "org.paddock.Daemon",
                                                                 "org.freedesktop.DBus.Properties",
                                                                 "PropertiesChanged", NULL, "org.paddock.Command1",
                                                                 G_DBUS_SIGNAL_FLAGS_NONE, properties_changed_cb,
                                                                 NULL, NULL);
              bus_name_pid (connection, "org.freedesktop.DBus");   /* the AddMatch is in */
            }
          else if (ways[w].run && subscription != 0)
            {
              g_dbus_connection_signal_unsubscribe (connection, subscription);
              subscription = 0;
              bus_name_pid (connection, "org.freedesktop.DBus");   /* the RemoveMatch is in */
              while (g_main_context_iteration (NULL, FALSE))
                ;
            }

          exec_cpu_ns (ways[w].cpu_stat, before);
          if (ways[w].run)
            us = paddock_run_us (ways[w].proxy);
          else
            us = paddock_exec_us (ways[w].proxy, &reply_us);
          exec_cpu_ns (ways[w].cpu_stat, after);
          if (r < 0)
            continue;
          record_cpu (before, after, ways[w].cpu, ways[w].parts);
          g_array_append_val (ways[w].wall, us);
          g_array_append_val (ways[w].reply, reply_us);
        }

      if (r < 0)
        continue;
      g_array_append_val (native_cpu, nc);
      g_array_append_val (native, nat);
    }

  if (subscription != 0)
    g_dbus_connection_signal_unsubscribe (connection, subscription);
  safe_run_ns = cgroup_cpu_ns (safe_stat) - safe_run_start;

  n = quantile (native, 0.5);

  g_print ("bench/exec - Exec(['true']) until exit status and stdout are in hand, and Run(['true']); %"
           G_GUINT64_FORMAT " runs each, interleaved; %u cores\n\n", runs, g_get_num_processors ());
  g_print ("%-44s %9s %9s %9s\n", "", "median", "p10", "p90");
  g_print ("%-44s %6.0f us %6.0f us %6.0f us\n", "native fork + exec + waitpid of true", n,
           quantile (native, 0.1), quantile (native, 0.9));
  g_print ("%-44s %6.0f us\n", "  CPU (bench + child)", quantile (native_cpu, 0.5));
  for (guint w = 0; w < N_WAYS; w++)
    print_way (&ways[w], n, quantile (native_cpu, 0.5));
  if (safe_stat != NULL)
    /* Also what the sandbox does between round trips: forking the next
     * spare supervisor while idle. */
    g_print ("%-44s %6.0f us\n", "safe session's cgroup per round trip, whole run",
             (double) safe_run_ns / 1000.0 / (double) (2 * (runs + WARM_UP)));
  {
    double se = quantile (ways[SAFE_EXEC].wall, 0.5);
    double he = quantile (ways[HOST_EXEC].wall, 0.5);
    double sr = quantile (ways[SAFE_RUN].wall, 0.5);
    double hr = quantile (ways[HOST_RUN].wall, 0.5);

    g_print ("   target < 2x native: safe Exec %s, host Exec %s; safe Run %s, host Run %s\n",
             se < 2 * n ? "met" : "MISSED", he < 2 * n ? "met" : "MISSED",
             sr < 2 * n ? "met" : "MISSED", hr < 2 * n ? "met" : "MISSED");
  }
  g_print ("   peer figure (ANCHORS.md): coding-tools-mcp exec, 50 ms p50, 8.8x native\n");

  for (guint w = 0; w < N_WAYS; w++)
    {
      g_object_unref (ways[w].proxy);
      g_array_unref (ways[w].wall);
      g_array_unref (ways[w].reply);
      g_array_unref (ways[w].cpu);
      for (guint i = 0; i < N_CPU_PARTS; i++)
        g_array_unref (ways[w].parts[i]);
    }
  g_clear_object (&script_connection);
  paddock_test_destroy_made ();
  remove_files (NULL);
  g_hash_table_unref (ended);
  return EXIT_SUCCESS;
}
