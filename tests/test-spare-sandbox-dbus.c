/* test-spare-sandbox-dbus.c — the next safe session's sandbox, made ahead
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * After a safe session starts, the daemon makes the next one's sandbox
 * ahead (paddock-sandbox --spare, a child of the daemon waiting for its
 * session's options). What a user and a script can check:
 *  - the next safe session of the same network mode runs in it (its
 *    MainPid is that process) and is the same session it would have been:
 *    its workspace and staging, its pid, its boundary report layer by
 *    layer, its cgroup named for it;
 *  - a session of another network mode makes its own sandbox, and the
 *    spare is then made for that mode;
 *  - a mount made since on the way to the workspace (at it, above it)
 *    makes the session make its own sandbox, which sees the mount; mounts
 *    elsewhere on the host leave the spare to be taken;
 *  - nothing is left when the daemon goes: not the spare, not its cgroup,
 *    and when the daemon was killed, the next daemon removes the cgroup
 *    the dead one's spare left.
 */

#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-error.h"
#include "paddock-test-daemon.h"
#include "paddock-test-session.h"

static char *workspace;

/* The session's boundary report as "layer=status" lines, in order. */
static char *
boundary_statuses (GDBusConnection *connection,
                   const char      *path)
{
  g_autoptr(GVariant) layers = paddock_test_session_property (connection, path, "Boundary");
  g_autoptr(GString) text = g_string_new (NULL);

  for (gsize i = 0; i < g_variant_n_children (layers); i++)
    {
      g_autoptr(GVariant) layer = g_variant_get_child_value (layers, i);
      const char *name = NULL;
      const char *status = NULL;

      g_assert_true (g_variant_lookup (layer, "layer", "&s", &name));
      g_assert_true (g_variant_lookup (layer, "status", "&s", &status));
      g_string_append_printf (text, "%s=%s\n", name, status);
    }
  return g_string_free (g_steal_pointer (&text), FALSE);
}

/* The "cgroup" ListSessions gives for the session at PATH ("" for none). */
static char *
listed_cgroup (GDBusConnection *connection,
               const char      *path)
{
  g_autoptr(GVariant) sessions = paddock_test_list_sessions (connection);

  for (gsize i = 0; i < g_variant_n_children (sessions); i++)
    {
      g_autoptr(GVariant) session = g_variant_get_child_value (sessions, i);
      const char *session_path = NULL;
      const char *cgroup = NULL;

      if (g_variant_lookup (session, "path", "&o", &session_path) && g_str_equal (session_path, path) &&
          g_variant_lookup (session, "cgroup", "&s", &cgroup))
        return g_strdup (cgroup);
    }
  g_assert_not_reached ();
}

/* Session1.Run of `sh -c SCRIPT`, its standard output. */
static char *
run_output (GDBusConnection *connection,
            const char      *path,
            const char      *script)
{
  const char *argv[] = { "sh", "-c", script, NULL };
  g_autoptr(PaddockIpcSession1) session = paddock_test_session (connection, path);
  g_autoptr(GVariant) result = NULL;
  g_autoptr(GVariant) out = NULL;
  g_autoptr(GError) error = NULL;
  gint32 status = -1;
  gsize length = 0;
  const char *data;

  paddock_ipc_session1_call_run_sync (session, argv, "", g_variant_new ("a{ss}", NULL), 20000,
                                      g_variant_new ("a{sv}", NULL), &result, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_variant_lookup (result, "exit-status", "i", &status));
  g_assert_cmpint (status, ==, 0);
  out = g_variant_lookup_value (result, "stdout", G_VARIANT_TYPE_BYTESTRING);
  g_assert_nonnull (out);
  data = g_variant_get_fixed_array (out, &length, 1);
  return g_strndup (data, length);
}

static void
destroy (GDBusConnection *connection,
         const char      *path)
{
  g_autoptr(GVariant) result = NULL;
  g_autoptr(GError) error = NULL;

  paddock_test_destroy_session (connection, path, &result, &error);
  g_assert_no_error (error);
}

/* A safe session running SCRIPT (net NET); NULL and the test skipped
 * when this machine cannot run one. */
static char *
create_safe (GDBusConnection *connection,
             const char      *net,
             const char      *script)
{
  GVariantBuilder extra;

  g_variant_builder_init (&extra, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&extra, "{sv}", "net", g_variant_new_string (net));
  return paddock_test_create_session_or_skip (connection, workspace, "safe", script,
                                              g_variant_builder_end (&extra));
}

/* The cgroup the daemon's spare was born in: named for the session id it
 * reserved (sessions/.spare-sandbox-id), beside FIRST_CGROUP (a session's,
 * "" where sessions have none: then NULL). */
static char *
spare_cgroup_path (PaddockTestDaemon *daemon,
                   const char        *first_cgroup)
{
  g_autofree char *marker = g_build_filename (paddock_test_daemon_get_state_dir (daemon), "sessions",
                                              ".spare-sandbox-id", NULL);
  g_autofree char *reserved = NULL;
  g_autofree char *parent = NULL;
  g_autofree char *name = NULL;

  g_assert_true (g_file_get_contents (marker, &reserved, NULL, NULL));
  if (first_cgroup[0] == '\0')
    return NULL;
  parent = g_path_get_dirname (first_cgroup);
  name = g_strconcat ("paddock-session-", reserved, NULL);
  return g_build_filename (parent, name, NULL);
}

/* The start of the cgroup tests: a first safe session (host network) and
 * the spare the daemon makes after it, its helper's pid in *SPARE and the
 * path of its cgroup in *SPARE_CGROUP (NULL where sessions get no cgroups).
 * The first session's path, or NULL with the test skipped when this
 * machine runs no safe session. */
static char *
start_with_spare (PaddockTestDaemon *daemon,
                  GDBusConnection   *connection,
                  GPid              *spare,
                  char             **spare_cgroup)
{
  char *first = create_safe (connection, "host", "exec sleep 300");
  g_autofree char *cgroup = NULL;

  *spare = 0;
  *spare_cgroup = NULL;
  if (first == NULL)
    return NULL;
  *spare = paddock_test_wait_for_spare_sandbox (connection, 0);
  cgroup = listed_cgroup (connection, first);
  *spare_cgroup = spare_cgroup_path (daemon, cgroup);
  return first;
}

/* Waits until a (re)started daemon serves calls: its restore, and the
 * removal of what a dead daemon's spare left, is done by then. */
static void
wait_until_served (GDBusConnection *connection)
{
  g_autoptr(GVariant) sessions = paddock_test_list_sessions (connection);
}

/* Whether PID is gone within 2 s. */
static gboolean
gone_soon (GPid pid)
{
  for (guint i = 0; i < 200 && paddock_test_pid_alive (pid); i++)
    g_usleep (10 * 1000);
  return !paddock_test_pid_alive (pid);
}

static void
test_taken_by_the_next_session (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autofree char *first_report = NULL;
  g_autofree char *second_report = NULL;
  g_autofree char *seen = NULL;
  g_autofree char *cgroup = NULL;
  g_autofree char *spare_cgroup = NULL;
  GPid spare;
  GPid next_spare;

  /* The first safe session makes its own sandbox; then the daemon makes
   * the next one's. */
  first = create_safe (connection, "host", "exec sleep 300");
  if (first == NULL)
    return;
  spare = paddock_test_wait_for_spare_sandbox (connection, 0);
  g_assert_cmpint (paddock_test_session_main_pid (connection, first), !=, spare);

  /* The next one runs in it, and is the session it would have been. */
  second = create_safe (connection, "host", "cat hello.txt > seen.txt; echo pid=$$ >> seen.txt; exec sleep 300");
  g_assert_nonnull (second);
  g_assert_cmpint (paddock_test_session_main_pid (connection, second), ==, spare);
  {
    g_autofree char *staged_seen = NULL;

    /* The agent's write is staged, not in the real folder. */
    seen = run_output (connection, second, "while [ ! -s seen.txt ] || ! grep -q pid= seen.txt; do sleep 0.05; done; "
                                            "cat seen.txt");
    g_assert_cmpstr (seen, ==, "hello from the workspace\npid=2\n");
    staged_seen = g_build_filename (workspace, "seen.txt", NULL);
    g_assert_false (g_file_test (staged_seen, G_FILE_TEST_EXISTS));
  }
  first_report = boundary_statuses (connection, first);
  second_report = boundary_statuses (connection, second);
  g_assert_cmpstr (second_report, ==, first_report);
  g_assert_nonnull (strstr (second_report, "=enforced\n"));

  /* Its cgroup is named for it, with the spare in it. */
  cgroup = listed_cgroup (connection, second);
  if (cgroup[0] != '\0')
    {
      g_autofree char *base = g_path_get_basename (cgroup);
      g_autofree char *expected = g_strconcat ("paddock-session-", strrchr (second, '/') + 1, NULL);
      g_autofree char *procs_path = g_build_filename (cgroup, "cgroup.procs", NULL);
      g_autofree char *procs = NULL;
      g_autofree char *line = g_strdup_printf ("%d\n", (int) spare);

      g_assert_cmpstr (base, ==, expected);
      g_assert_true (g_file_get_contents (procs_path, &procs, NULL, NULL));
      g_assert_true (g_str_has_prefix (procs, line) || strstr (procs, line) != NULL);
    }

  /* And the next spare is made; the daemon's end leaves nothing of it. */
  next_spare = paddock_test_wait_for_spare_sandbox (connection, spare);
  spare_cgroup = spare_cgroup_path (daemon, cgroup);
  destroy (connection, first);
  destroy (connection, second);
  paddock_test_daemon_stop (daemon);
  g_assert_false (paddock_test_pid_alive (next_spare));
  if (spare_cgroup != NULL)
    g_assert_false (g_file_test (spare_cgroup, G_FILE_TEST_EXISTS));
}

/* Each spare taken leaves nothing open in the daemon: ten sessions in a
 * row, each in the spare made after the one before, then destroyed, and
 * the daemon's descriptors are what they were after the first (once a
 * spare's watch on our mounts stayed open for every spare taken). */
static void
test_taken_spares_leave_no_descriptor (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autofree char *first = NULL;
  guint after_first;
  guint after_all = 0;
  GPid spare;

  first = create_safe (connection, "host", "exec sleep 300");
  if (first == NULL)
    return;
  spare = paddock_test_wait_for_spare_sandbox (connection, 0);
  destroy (connection, first);
  after_first = paddock_test_daemon_fd_count (connection);

  for (guint i = 0; i < 10; i++)
    {
      g_autofree char *session = create_safe (connection, "host", "exec sleep 300");

      g_assert_nonnull (session);
      g_assert_cmpint (paddock_test_session_main_pid (connection, session), ==, spare);
      spare = paddock_test_wait_for_spare_sandbox (connection, spare);
      destroy (connection, session);
    }
  /* A descriptor open for a moment (a /proc walk) may be counted once:
   * a leak per spare would leave ten. */
  for (guint tries = 0; tries < 50; tries++)
    {
      after_all = paddock_test_daemon_fd_count (connection);
      if (after_all <= after_first)
        break;
      g_usleep (100 * 1000);
    }
  g_assert_cmpuint (after_all, <=, after_first);
  paddock_test_daemon_stop (daemon);
}

/* What a process of a session has and sees, read from /proc/PID: its
 * descriptors (where they lead; terminal, inode and pid numbers aside),
 * identity, privileges, seccomp, signal mask and dispositions, root and
 * working folder, and the mounts it sees (mount point, options, type). A
 * shell script, run by Session1.Run; PID "self" describes each of its
 * programs as it runs (each is exec'd with what the command got). */
static char *
describe_script (const char *pid)
{
  return g_strdup_printf (
    "find /proc/%1$s/fd/ -mindepth 1 -printf 'fd %%f %%l\\n' | sed 's/\\[[0-9]*\\]/[N]/; s|pts/[0-9]*|pts/N|; s|^\\(fd [0-9]* /proc/\\)[0-9]*/|\\1N/|' | sort; "
    "grep -E '^(Uid|Gid|Groups|NoNewPrivs|Seccomp|Seccomp_filters|Cap[A-Za-z]*|SigBlk|SigIgn|SigCgt)' /proc/%1$s/status; "
    "readlink /proc/%1$s/root /proc/%1$s/cwd; "
    "awk '{ for (i = 7; $i != \"-\"; i++); print $5, $6, $(i + 1) }' /proc/%1$s/mountinfo",
    pid);
}

static void
test_same_process_and_view (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autofree char *describe_agent = describe_script ("2");
  g_autofree char *describe_command = describe_script ("self");
  g_autofree char *cold = NULL;
  g_autofree char *warm = NULL;
  g_autofree char *cold_agent = NULL;
  g_autofree char *warm_agent = NULL;
  g_autofree char *cold_command = NULL;
  g_autofree char *warm_command = NULL;
  GPid spare;

  /* The agent execs sleep at once: a process that holds still to be
   * described (pid 2, on the terminal). */
  cold = create_safe (connection, "proxy", "exec sleep 300");
  if (cold == NULL)
    return;
  spare = paddock_test_wait_for_spare_sandbox (connection, 0);
  warm = create_safe (connection, "proxy", "exec sleep 300");
  g_assert_nonnull (warm);
  g_assert_cmpint (paddock_test_session_main_pid (connection, warm), ==, spare);

  /* The agent, and a command (through pid 1's supervisor), of a session
   * in the sandbox made ahead have what those of a sandbox made for their
   * session have, nothing more: no descriptor of the options' memfd or of
   * the host's tree, the same mounts, masks and privileges. */
  cold_agent = run_output (connection, cold, describe_agent);
  warm_agent = run_output (connection, warm, describe_agent);
  g_test_message ("The agent in a sandbox made for it:\n%s", cold_agent);
  g_assert_nonnull (strstr (cold_agent, "NoNewPrivs:\t1\n"));
  g_assert_nonnull (strstr (cold_agent, "SigBlk:\t0000000000000000\n"));
  g_assert_nonnull (strstr (cold_agent, "fd 0 /dev/"));
  g_assert_cmpstr (warm_agent, ==, cold_agent);
  cold_command = run_output (connection, cold, describe_command);
  warm_command = run_output (connection, warm, describe_command);
  g_assert_nonnull (strstr (cold_command, "Seccomp:\t2\n"));
  g_assert_cmpstr (warm_command, ==, cold_command);

  destroy (connection, cold);
  destroy (connection, warm);
}

/* A session with a file of the HOME exposed whose name is one of the
 * options a spare is made with ("--net"): the file is the option's value,
 * in the sandbox made ahead as in one made for its session. */
static void
test_exposed_file_named_like_an_option (void)
{
  g_autofree char *real_home = g_strdup (g_getenv ("HOME"));
  g_autofree char *home = g_dir_make_tmp ("paddock-spare-home-XXXXXX", NULL);
  g_autofree char *file = g_build_filename (home, "--net", NULL);
  g_autoptr(PaddockTestDaemon) daemon = NULL;
  GDBusConnection *connection;
  const char *exposed[] = { "--net", NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *cold = NULL;
  g_autofree char *warm = NULL;
  g_autofree char *cold_seen = NULL;
  g_autofree char *warm_seen = NULL;
  GPid spare;

  g_assert_nonnull (home);
  g_assert_true (g_file_set_contents (file, "exposed\n", -1, NULL));
  /* The daemon's HOME, whose files a session may expose. */
  g_setenv ("HOME", home, TRUE);
  daemon = paddock_test_daemon_new (NULL);
  if (real_home != NULL)
    g_setenv ("HOME", real_home, TRUE);
  else
    g_unsetenv ("HOME");
  connection = paddock_test_daemon_get_connection (daemon);

  for (guint i = 0; i < 2; i++)
    {
      GVariantBuilder extra;
      char *path;

      g_variant_builder_init (&extra, G_VARIANT_TYPE_VARDICT);
      g_variant_builder_add (&extra, "{sv}", "net", g_variant_new_string ("none"));
      g_variant_builder_add (&extra, "{sv}", "expose", g_variant_new_bytestring_array (exposed, -1));
      path = paddock_test_create_session (connection, workspace, "safe", "exec sleep 300",
                                          g_variant_builder_end (&extra), &error);
      if (i == 0 && g_error_matches (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED))
        {
          g_test_skip (error->message);
          break;
        }
      g_assert_no_error (error);
      if (i == 0)
        {
          cold = path;
          spare = paddock_test_wait_for_spare_sandbox (connection, 0);
        }
      else
        {
          warm = path;
          g_assert_cmpint (paddock_test_session_main_pid (connection, warm), ==, spare);
        }
    }
  if (cold != NULL)
    {
      cold_seen = run_output (connection, cold, "cat \"$HOME/--net\"");
      g_assert_cmpstr (cold_seen, ==, "exposed\n");
      warm_seen = run_output (connection, warm, "cat \"$HOME/--net\"");
      g_assert_cmpstr (warm_seen, ==, "exposed\n");
      destroy (connection, cold);
      destroy (connection, warm);
    }
  g_clear_pointer (&daemon, paddock_test_daemon_free);
  g_unlink (file);
  g_rmdir (home);
}

/* A safe session on the host's network with a port "web", handed over as
 * HANDOVER ("port-handover"; NULL: the default), running sleep. */
static char *
create_with_port (GDBusConnection *connection,
                  const char      *handover)
{
  const char *ports[] = { "web", NULL };
  g_autoptr(GError) error = NULL;
  GVariantBuilder extra;
  char *id;

  g_variant_builder_init (&extra, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&extra, "{sv}", "net", g_variant_new_string ("host"));
  g_variant_builder_add (&extra, "{sv}", "ports", g_variant_new_strv (ports, -1));
  if (handover != NULL)
    g_variant_builder_add (&extra, "{sv}", "port-handover", g_variant_new_string (handover));
  id = paddock_test_create_session (connection, workspace, "safe", "exec sleep 300",
                                    g_variant_builder_end (&extra), &error);
  g_assert_no_error (error);
  return id;
}

/* On the host's network a session's leased sockets handed over listening
 * ("port-handover" 'listen-fds') go to its sandbox at its exec: such a
 * session makes its own sandbox and leaves the spare to the next session
 * without. */
static void
test_leased_sockets_make_their_own (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autofree char *third = NULL;
  g_autofree char *listening = NULL;
  GPid spare;

  first = create_safe (connection, "host", "exec sleep 300");
  if (first == NULL)
    return;
  spare = paddock_test_wait_for_spare_sandbox (connection, 0);

  /* Handed over listening, which a spare made ahead cannot be given. */
  second = create_with_port (connection, "listen-fds");
  g_assert_cmpint (paddock_test_session_main_pid (connection, second), !=, spare);
  /* Its leased socket is the agent's (socket activation: LISTEN_FDS). */
  listening = run_output (connection, second, "tr '\\0' '\\n' < /proc/2/environ | grep '^LISTEN_FDS='");
  g_assert_cmpstr (listening, ==, "LISTEN_FDS=1\n");
  g_assert_true (paddock_test_pid_alive (spare));

  third = create_safe (connection, "host", "exec sleep 300");
  g_assert_nonnull (third);
  g_assert_cmpint (paddock_test_session_main_pid (connection, third), ==, spare);

  destroy (connection, first);
  destroy (connection, second);
  destroy (connection, third);
}

/* Ports released for the agent to bind (the default on the host's
 * network) need nothing passed at exec: such a session takes the spare,
 * and its agent gets no LISTEN_FDS. */
static void
test_released_ports_take_the_spare (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autofree char *listening = NULL;
  GPid spare;

  first = create_safe (connection, "host", "exec sleep 300");
  if (first == NULL)
    return;
  spare = paddock_test_wait_for_spare_sandbox (connection, 0);

  second = create_with_port (connection, NULL);
  g_assert_cmpint (paddock_test_session_main_pid (connection, second), ==, spare);
  /* PORT, its lease, and no LISTEN_FDS. */
  listening = run_output (connection, second,
                          "tr '\\0' '\\n' < /proc/2/environ | grep -E '^(LISTEN_FDS|PORT)=' | cut -d= -f1");
  g_assert_cmpstr (listening, ==, "PORT\n");

  destroy (connection, first);
  destroy (connection, second);
}

/* A 1 MiB tmpfs over DIR, as a host program's mount (root only); mount(2)'s
 * result. */
static int
mount_small_tmpfs (const char *dir)
{
  return mount ("tmpfs", dir, "tmpfs", 0, "size=1m,mode=0755");
}

/* A workspace mounted after the spare was made: the spare's copy of the
 * host's mounts does not have it (unless they propagate, which on many
 * machines they do not), so the session makes its own sandbox and sees
 * its files, not the empty folder beneath; the next spare, made after,
 * has the mount. Needs root, to mount. */
static void
test_workspace_mounted_after_the_spare (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autofree char *mounted = g_dir_make_tmp ("paddock-spare-mnt-XXXXXX", NULL);
  g_autofree char *file = g_build_filename (mounted, "mounted.txt", NULL);
  char *unmounted_workspace = workspace;
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autofree char *third = NULL;
  g_autofree char *seen = NULL;
  g_autofree char *seen_later = NULL;
  GPid spare;
  GPid next_spare;

  g_assert_nonnull (mounted);
  first = create_safe (connection, "host", "exec sleep 300");
  if (first == NULL)
    {
      g_rmdir (mounted);
      return;
    }
  spare = paddock_test_wait_for_spare_sandbox (connection, 0);
  if (mount_small_tmpfs (mounted) != 0)
    {
      g_test_skip ("Cannot mount a tmpfs here (needs root)");
      destroy (connection, first);
      g_rmdir (mounted);
      return;
    }
  g_assert_true (g_file_set_contents (file, "on the mount\n", -1, NULL));

  workspace = mounted;
  second = create_safe (connection, "host", "exec sleep 300");
  g_assert_nonnull (second);
  g_assert_cmpint (paddock_test_session_main_pid (connection, second), !=, spare);
  seen = run_output (connection, second, "cat mounted.txt");
  g_assert_cmpstr (seen, ==, "on the mount\n");
  g_assert_false (paddock_test_pid_alive (spare));

  next_spare = paddock_test_wait_for_spare_sandbox (connection, spare);
  third = create_safe (connection, "host", "exec sleep 300");
  workspace = unmounted_workspace;
  g_assert_nonnull (third);
  g_assert_cmpint (paddock_test_session_main_pid (connection, third), ==, next_spare);
  seen_later = run_output (connection, third, "cat mounted.txt");
  g_assert_cmpstr (seen_later, ==, "on the mount\n");

  destroy (connection, first);
  destroy (connection, second);
  destroy (connection, third);
  g_clear_pointer (&daemon, paddock_test_daemon_free);
  g_assert_cmpint (umount2 (mounted, MNT_DETACH), ==, 0);
  g_rmdir (mounted);
}

/* Mounts made and ended elsewhere after the spare was made (a container
 * started, a disk plugged in: on a busy host, often) are in neither the
 * spare's view nor a new sandbox's: the next session still takes the
 * spare. A mount over a folder above the workspace is on the way to it:
 * that session makes its own sandbox and sees the workspace on the mount.
 * Needs root, to mount. */
static void
test_mounts_elsewhere_keep_the_spare (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autofree char *elsewhere = g_dir_make_tmp ("paddock-spare-elsewhere-XXXXXX", NULL);
  g_autofree char *above = g_dir_make_tmp ("paddock-spare-above-XXXXXX", NULL);
  g_autofree char *below_mount = NULL;
  g_autofree char *file = NULL;
  char *unmounted_workspace = workspace;
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autofree char *third = NULL;
  g_autofree char *seen = NULL;
  GPid spare;
  GPid next_spare;

  g_assert_nonnull (elsewhere);
  g_assert_nonnull (above);
  first = create_safe (connection, "host", "exec sleep 300");
  if (first == NULL)
    {
      g_rmdir (elsewhere);
      g_rmdir (above);
      return;
    }
  spare = paddock_test_wait_for_spare_sandbox (connection, 0);
  if (mount_small_tmpfs (elsewhere) != 0)
    {
      g_test_skip ("Cannot mount a tmpfs here (needs root)");
      destroy (connection, first);
      g_rmdir (elsewhere);
      g_rmdir (above);
      return;
    }
  g_assert_cmpint (umount2 (elsewhere, MNT_DETACH), ==, 0);
  g_assert_cmpint (mount_small_tmpfs (elsewhere), ==, 0);

  second = create_safe (connection, "host", "exec sleep 300");
  g_assert_nonnull (second);
  g_assert_cmpint (paddock_test_session_main_pid (connection, second), ==, spare);
  seen = run_output (connection, second, "cat hello.txt");
  g_assert_cmpstr (seen, ==, "hello from the workspace\n");
  g_clear_pointer (&seen, g_free);

  /* Above the workspace: the folder the workspace is in, mounted over. */
  next_spare = paddock_test_wait_for_spare_sandbox (connection, spare);
  g_assert_cmpint (mount_small_tmpfs (above), ==, 0);
  below_mount = g_build_filename (above, "ws", NULL);
  file = g_build_filename (below_mount, "mounted.txt", NULL);
  g_assert_cmpint (g_mkdir (below_mount, 0755), ==, 0);
  g_assert_true (g_file_set_contents (file, "under the mount\n", -1, NULL));
  workspace = below_mount;
  third = create_safe (connection, "host", "exec sleep 300");
  workspace = unmounted_workspace;
  g_assert_nonnull (third);
  g_assert_cmpint (paddock_test_session_main_pid (connection, third), !=, next_spare);
  seen = run_output (connection, third, "cat mounted.txt");
  g_assert_cmpstr (seen, ==, "under the mount\n");
  g_assert_false (paddock_test_pid_alive (next_spare));

  destroy (connection, first);
  destroy (connection, second);
  destroy (connection, third);
  g_clear_pointer (&daemon, paddock_test_daemon_free);
  g_assert_cmpint (umount2 (elsewhere, MNT_DETACH), ==, 0);
  g_assert_cmpint (umount2 (above, MNT_DETACH), ==, 0);
  g_rmdir (elsewhere);
  g_rmdir (above);
}

/* A file of /etc replaced by rename after the spare was made (as an
 * editor's save or a network manager's new resolv.conf does) is the new
 * file in the session that takes the spare: /etc is bound when the
 * session comes. Root only: the test replaces /etc/protocols by a copy of
 * itself (same content and mode, a new inode). */
static void
test_etc_replaced_after_the_spare (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  const char *etc_file = "/etc/protocols";
  g_autofree char *copy = g_strconcat (etc_file, ".paddock-test", NULL);
  g_autofree char *contents = NULL;
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autofree char *seen = NULL;
  g_autofree char *expected = NULL;
  gsize length = 0;
  struct stat st;
  GPid spare;

  if (geteuid () != 0 || !g_file_get_contents (etc_file, &contents, &length, NULL) ||
      stat (etc_file, &st) != 0)
    {
      g_test_skip ("Needs root and an /etc/protocols to replace");
      return;
    }
  first = create_safe (connection, "host", "exec sleep 300");
  if (first == NULL)
    return;
  spare = paddock_test_wait_for_spare_sandbox (connection, 0);

  /* The same bytes and mode under a new inode, put in place by rename. */
  g_assert_true (g_file_set_contents_full (copy, contents, (gssize) length, G_FILE_SET_CONTENTS_NONE,
                                           st.st_mode & 07777, NULL));
  g_assert_cmpint (rename (copy, etc_file), ==, 0);
  g_assert_cmpint (stat (etc_file, &st), ==, 0);
  expected = g_strdup_printf ("%lu\n", (unsigned long) st.st_ino);

  second = create_safe (connection, "host", "exec sleep 300");
  g_assert_nonnull (second);
  g_assert_cmpint (paddock_test_session_main_pid (connection, second), ==, spare);
  seen = run_output (connection, second, "stat -c %i /etc/protocols");
  g_assert_cmpstr (seen, ==, expected);

  destroy (connection, first);
  destroy (connection, second);
}

static void
test_other_network_mode_makes_its_own (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autofree char *third = NULL;
  g_autofree char *report = NULL;
  GPid host_spare;
  GPid none_spare;

  first = create_safe (connection, "host", "exec sleep 300");
  if (first == NULL)
    return;
  host_spare = paddock_test_wait_for_spare_sandbox (connection, 0);

  /* A session without the host's network does not take a sandbox that
   * has it; it makes its own, and the spare is then made for its mode. */
  second = create_safe (connection, "none", "exec sleep 300");
  g_assert_nonnull (second);
  g_assert_cmpint (paddock_test_session_main_pid (connection, second), !=, host_spare);
  report = boundary_statuses (connection, second);
  g_assert_nonnull (strstr (report, "network=enforced\n"));
  none_spare = paddock_test_wait_for_spare_sandbox (connection, host_spare);
  /* The host one was ended for it, not kept as well. */
  g_assert_true (gone_soon (host_spare));

  third = create_safe (connection, "none", "exec sleep 300");
  g_assert_nonnull (third);
  g_assert_cmpint (paddock_test_session_main_pid (connection, third), ==, none_spare);
  g_clear_pointer (&report, g_free);
  report = boundary_statuses (connection, third);
  g_assert_nonnull (strstr (report, "network=enforced\n"));

  destroy (connection, first);
  destroy (connection, second);
  destroy (connection, third);
}

/* A spare whose pid 1 does not answer (stopped here) when the daemon
 * ends it is killed after a second, and its cgroup still goes. */
static void
test_stuck_spare_is_killed_and_leaves_nothing (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autofree char *first = NULL;
  g_autofree char *spare_cgroup = NULL;
  g_autofree char *children_path = NULL;
  g_autofree char *children = NULL;
  GPid spare;
  GPid pid1;

  first = start_with_spare (daemon, connection, &spare, &spare_cgroup);
  if (first == NULL)
    return;
  if (spare_cgroup == NULL)
    {
      g_test_skip ("Sessions get no cgroups here");
      destroy (connection, first);
      return;
    }
  /* Its pid 1, the helper's one child. */
  children_path = g_strdup_printf ("/proc/%d/task/%d/children", (int) spare, (int) spare);
  for (guint i = 0; i < 1000; i++)
    {
      g_clear_pointer (&children, g_free);
      if (g_file_get_contents (children_path, &children, NULL, NULL) && children[0] != '\0')
        break;
      g_usleep (10 * 1000);
    }
  g_assert_nonnull (children);
  pid1 = (GPid) g_ascii_strtoll (children, NULL, 10);
  g_assert_cmpint (pid1, >, 0);
  g_assert_cmpint (kill (pid1, SIGSTOP), ==, 0);

  destroy (connection, first);
  paddock_test_daemon_stop (daemon);
  g_assert_false (paddock_test_pid_alive (spare));
  g_assert_false (paddock_test_pid_alive (pid1));
  g_assert_false (g_file_test (spare_cgroup, G_FILE_TEST_EXISTS));
}

static void
test_killed_daemon_leaves_nothing (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autofree char *first = NULL;
  g_autofree char *marker = NULL;
  g_autofree char *spare_cgroup = NULL;
  GPid spare;

  first = start_with_spare (daemon, connection, &spare, &spare_cgroup);
  if (first == NULL)
    return;
  marker = g_build_filename (paddock_test_daemon_get_state_dir (daemon), "sessions", ".spare-sandbox-id", NULL);
  if (spare_cgroup != NULL)
    g_assert_true (g_file_test (spare_cgroup, G_FILE_TEST_IS_DIR));

  /* The spare dies with its daemon (SIGKILL: nothing of the daemon's
   * runs); its cgroup stays until the next daemon removes it. */
  paddock_test_daemon_kill (daemon);
  g_assert_true (gone_soon (spare));
  paddock_test_daemon_start (daemon);
  connection = paddock_test_daemon_get_connection (daemon);
  wait_until_served (connection);
  if (spare_cgroup != NULL)
    g_assert_false (g_file_test (spare_cgroup, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
  destroy (connection, first);
}

/* A daemon restarted right after a crash may find its spare's processes
 * still in the spare's cgroup (they die with the daemon, not at once):
 * the next daemon ends what is there and removes the cgroup. A process
 * the test puts in that cgroup stands for them. */
static void
test_restart_ends_what_the_spare_left (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  const char *sleep_argv[] = { "sleep", "300", NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *first = NULL;
  g_autofree char *spare_cgroup = NULL;
  g_autofree char *procs = NULL;
  g_autofree char *sleeper_text = NULL;
  GPid spare;
  GPid sleeper;
  int status = 0;

  first = start_with_spare (daemon, connection, &spare, &spare_cgroup);
  if (first == NULL)
    return;
  if (spare_cgroup == NULL)
    {
      g_test_skip ("Sessions get no cgroups here");
      destroy (connection, first);
      return;
    }
  procs = g_build_filename (spare_cgroup, "cgroup.procs", NULL);
  g_assert_true (g_spawn_async (NULL, (char **) sleep_argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD,
                                NULL, NULL, &sleeper, &error));
  g_assert_no_error (error);
  sleeper_text = g_strdup_printf ("%d", (int) sleeper);
  if (!g_file_set_contents_full (procs, sleeper_text, -1, G_FILE_SET_CONTENTS_NONE, 0644, &error))
    {
      g_test_skip_printf ("Cannot move a process into %s: %s", spare_cgroup, error->message);
      kill (sleeper, SIGKILL);
      waitpid (sleeper, &status, 0);
      destroy (connection, first);
      return;
    }

  paddock_test_daemon_kill (daemon);
  g_assert_true (gone_soon (spare));
  g_assert_true (paddock_test_pid_alive (sleeper));

  paddock_test_daemon_start (daemon);
  connection = paddock_test_daemon_get_connection (daemon);
  wait_until_served (connection);
  g_assert_false (g_file_test (spare_cgroup, G_FILE_TEST_EXISTS));
  g_assert_cmpint (waitpid (sleeper, &status, 0), ==, sleeper);
  g_assert_true (WIFSIGNALED (status));
  g_assert_cmpint (WTERMSIG (status), ==, SIGKILL);
  destroy (connection, first);
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *hello = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);

  workspace = g_dir_make_tmp ("paddock-spare-ws-XXXXXX", NULL);
  g_assert_nonnull (workspace);
  hello = g_build_filename (workspace, "hello.txt", NULL);
  g_assert_true (g_file_set_contents (hello, "hello from the workspace\n", -1, NULL));

  g_test_add_func ("/spare-sandbox/taken-by-the-next-session", test_taken_by_the_next_session);
  g_test_add_func ("/spare-sandbox/same-process-and-view", test_same_process_and_view);
  g_test_add_func ("/spare-sandbox/taken-spares-leave-no-descriptor", test_taken_spares_leave_no_descriptor);
  g_test_add_func ("/spare-sandbox/exposed-file-named-like-an-option", test_exposed_file_named_like_an_option);
  g_test_add_func ("/spare-sandbox/leased-sockets-make-their-own", test_leased_sockets_make_their_own);
  g_test_add_func ("/spare-sandbox/released-ports-take-the-spare", test_released_ports_take_the_spare);
  g_test_add_func ("/spare-sandbox/workspace-mounted-after-the-spare", test_workspace_mounted_after_the_spare);
  g_test_add_func ("/spare-sandbox/mounts-elsewhere-keep-the-spare", test_mounts_elsewhere_keep_the_spare);
  g_test_add_func ("/spare-sandbox/etc-replaced-after-the-spare", test_etc_replaced_after_the_spare);
  g_test_add_func ("/spare-sandbox/other-network-mode-makes-its-own", test_other_network_mode_makes_its_own);
  g_test_add_func ("/spare-sandbox/stuck-spare-is-killed-and-leaves-nothing", test_stuck_spare_is_killed_and_leaves_nothing);
  g_test_add_func ("/spare-sandbox/killed-daemon-leaves-nothing", test_killed_daemon_leaves_nothing);
  g_test_add_func ("/spare-sandbox/restart-ends-what-the-spare-left", test_restart_ends_what_the_spare_left);

  status = g_test_run ();
  g_unlink (hello);
  g_rmdir (workspace);
  return status;
}
