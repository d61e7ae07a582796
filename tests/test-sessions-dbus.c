/* test-sessions-dbus.c — sessions over D-Bus against the real daemon (host profile)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixfdlist.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "paddock-error.h"
#include "paddock-test-daemon.h"
#include "paddock-test-session.h"

static char *workspace;
/* The profile create_session() asks for. */
static const char *profile = "host";

/* Creates a host-profile session running `sh -c SCRIPT`; returns its path. */
static char *
create_session (GDBusConnection  *connection,
                const char       *script,
                GVariant         *extra,
                GError          **error)
{
  return paddock_test_create_session (connection, workspace, profile, script, extra, error);
}

static GString *
read_output (GDBusConnection *connection,
             const char      *path)
{
  g_autoptr(PaddockIpcSession1) session = paddock_test_session (connection, path);
  g_autoptr(GVariant) data = NULL;
  g_autoptr(GError) error = NULL;
  guint64 first = 0;
  guint64 next = 0;
  gsize length = 0;
  const char *bytes;

  paddock_ipc_session1_call_read_output_sync (session, 0, 1024 * 1024, &data, &first, &next, NULL, &error);
  g_assert_no_error (error);
  bytes = g_variant_get_fixed_array (data, &length, 1);
  return g_string_new_len (bytes, (gssize) length);
}

static gboolean
wait_for_output (GDBusConnection *connection,
                 const char      *path,
                 const char      *needle)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (g_get_monotonic_time () < deadline)
    {
      g_autoptr(GString) output = read_output (connection, path);

      if (strstr (output->str, needle) != NULL)
        return TRUE;
      g_usleep (20 * 1000);
    }

  {
    g_autoptr(GString) output = read_output (connection, path);
    g_test_message ("output so far: %s", output->str);
  }
  return FALSE;
}

static char *
get_state (GDBusConnection *connection,
           const char      *path)
{
  g_autoptr(GVariant) value = paddock_test_session_property (connection, path, "State");

  return g_variant_dup_string (value, NULL);
}

/* Stop or Destroy; returns the result dictionary. */
static GVariant *
stop (GDBusConnection  *connection,
      const char       *path,
      guint             grace,
      gboolean          destroy,
      GError          **error)
{
  g_autoptr(PaddockIpcSession1) session = paddock_test_session (connection, path);
  GVariant *result = NULL;

  if (destroy)
    paddock_test_destroy_session (connection, path, &result, error);
  else
    paddock_ipc_session1_call_stop_sync (session, grace, &result, NULL, error);
  return result;
}

/* Starts the daemon (again) with its grace for a restored session's
 * leftovers set to GRACE_MS (PADDOCK_TEST_LEFTOVER_GRACE_MS) rather than
 * 5 s: "0", a short one, or one longer than the test to hold the sweep
 * open at its SIGTERM. */
static void
start_with_leftover_grace (PaddockTestDaemon *daemon,
                           const char        *grace_ms)
{
  g_setenv ("PADDOCK_TEST_LEFTOVER_GRACE_MS", grace_ms, TRUE);
  paddock_test_daemon_start (daemon);
  g_unsetenv ("PADDOCK_TEST_LEFTOVER_GRACE_MS");
}

/* Waits for FILE to hold a whole line, and returns it. */
static char *
wait_for_line (const char *file)
{
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;

  for (;;)
    {
      g_autofree char *contents = NULL;

      if (g_file_get_contents (file, &contents, NULL, NULL) && strchr (contents, '\n') != NULL)
        return g_strchomp (g_steal_pointer (&contents));
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (20 * 1000);
    }
}

/* Gone for good, as anyone sees it from outside: no such process (not
 * even a zombie). */
static gboolean
process_gone (pid_t pid)
{
  return kill (pid, 0) < 0 && errno == ESRCH;
}

/* ------------------------------------------------------------------------ */

static void
test_output_environment_and_size (void)
{
  g_autoptr(PaddockTestDaemon) daemon = NULL;
  GDBusConnection *connection;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GString) output = NULL;
  g_autoptr(GVariant) result = NULL;

  /* A canary in the daemon's environment must not reach the agent. */
  g_setenv ("PADDOCK_CANARY_SECRET", "sk-canary-4242", TRUE);
  daemon = paddock_test_daemon_new (NULL);
  g_unsetenv ("PADDOCK_CANARY_SECRET");
  connection = paddock_test_daemon_get_connection (daemon);

  path = create_session (connection,
                         "echo hello from the agent; env; echo size: $(stty size); "
                         "echo cwd: $(pwd); echo done-printing; exec sleep 300",
                         g_variant_new_parsed ("{'rows': <uint16 41>, 'columns': <uint16 133>,"
                                               " 'env': <{'EXPLICIT': 'yes'}>}"),
                         &error);
  g_assert_no_error (error);
  g_assert_true (wait_for_output (connection, path, "done-printing"));

  output = read_output (connection, path);
  g_assert_nonnull (strstr (output->str, "hello from the agent"));
  g_assert_nonnull (strstr (output->str, "size: 41 133"));
  g_assert_nonnull (strstr (output->str, "EXPLICIT=yes"));
  g_assert_nonnull (strstr (output->str, "PADDOCK_SESSION="));
  g_assert_null (strstr (output->str, "sk-canary-4242"));
  g_assert_null (strstr (output->str, "DBUS_SESSION_BUS_ADDRESS"));
  {
    /* The portable build's host sessions start in their copy stage,
     * which lives in the session's folder. */
    g_autofree char *cwd = paddock_test_have_sandbox ()
                           ? g_strconcat ("cwd: ", workspace, NULL)
                           : g_strconcat ("cwd: ", paddock_test_daemon_get_state_dir (daemon), "/sessions/", NULL);
    g_assert_nonnull (strstr (output->str, cwd));
  }

  {
    g_autofree char *state = get_state (connection, path);
    g_assert_cmpstr (state, ==, "running");
  }
  result = stop (connection, path, 5, TRUE, &error);
  g_assert_no_error (error);
}

static void
test_input_and_resize (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autoptr(PaddockIpcSession1) session = NULL;
  static const char typed[] = "typed into the terminal\n";

  /* The program reports every SIGWINCH with the size it then sees, and
   * echoes what it reads. */
  path = create_session (connection,
                         "trap 'echo winch: $(stty size)' WINCH; echo ready; "
                         "while read line; do echo \"got: $line\"; done",
                         NULL, &error);
  g_assert_no_error (error);
  g_assert_true (wait_for_output (connection, path, "ready"));

  session = paddock_test_session (connection, path);
  paddock_ipc_session1_call_send_input_sync (session,
                                             g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, typed, strlen (typed), 1),
                                             NULL, &error);
  g_assert_no_error (error);
  g_assert_true (wait_for_output (connection, path, "got: typed into the terminal"));

  paddock_ipc_session1_call_resize_sync (session, 120, 50, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (wait_for_output (connection, path, "winch: 50 120"));

  /* Out of range sizes are refused. */
  paddock_ipc_session1_call_resize_sync (session, 0, 50, NULL, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
}

static void
test_stop_waits_for_every_process (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GVariant) result = NULL;
  g_autoptr(GString) output = NULL;
  g_autofree char *state = NULL;
  GArray *children = g_array_new (FALSE, FALSE, sizeof (GPid));
  guint32 survivors = 99;
  guint64 elapsed = 0;
  const char *cursor;

  /* Twenty children that ignore SIGTERM, in the session's process session. */
  path = create_session (connection,
                         "for i in $(seq 20); do sh -c 'trap \"\" TERM HUP; echo child $$; "
                         "exec sleep 300' & done; sleep 1; echo all-started; wait",
                         NULL, &error);
  g_assert_no_error (error);
  g_assert_true (wait_for_output (connection, path, "all-started"));

  output = read_output (connection, path);
  for (cursor = strstr (output->str, "child "); cursor != NULL; cursor = strstr (cursor + 1, "child "))
    {
      GPid child = (GPid) g_ascii_strtoll (cursor + 6, NULL, 10);
      g_array_append_val (children, child);
    }
  g_assert_cmpuint (children->len, ==, 20);

  result = stop (connection, path, 1, FALSE, &error);
  g_assert_no_error (error);
  g_assert_true (g_variant_lookup (result, "survivors", "u", &survivors));
  g_assert_true (g_variant_lookup (result, "elapsed-ms", "t", &elapsed));
  g_assert_cmpuint (survivors, ==, 0);
  /* They ignored SIGTERM: only the SIGKILL after the grace ended them. */
  g_assert_cmpuint (elapsed, >=, 900);

  /* Checked from outside: none of them is left. */
  for (guint i = 0; i < children->len; i++)
    g_assert_false (paddock_test_pid_alive (g_array_index (children, GPid, i)));
  g_array_unref (children);

  state = get_state (connection, path);
  g_assert_cmpstr (state, ==, "stopped");

  /* Stopping again returns at once; destroying works after a stop. */
  g_clear_pointer (&result, g_variant_unref);
  result = stop (connection, path, 5, FALSE, &error);
  g_assert_no_error (error);
  g_clear_pointer (&result, g_variant_unref);
  result = stop (connection, path, 0, TRUE, &error);
  g_assert_no_error (error);
}

static void
test_sessions_outlive_their_clients (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *observer = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GDBusConnection) creator = paddock_test_daemon_new_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *state = NULL;
  g_autoptr(GVariant) result = NULL;

  path = create_session (creator, "echo started; exec sleep 300", NULL, &error);
  g_assert_no_error (error);
  g_dbus_connection_close_sync (creator, NULL, NULL);

  g_usleep (200 * 1000);
  state = get_state (observer, path);
  g_assert_cmpstr (state, ==, "running");
  /* And anyone can read the scrollback from the start. */
  g_assert_true (wait_for_output (observer, path, "started"));

  result = stop (observer, path, 0, TRUE, &error);
  g_assert_no_error (error);
}

static void
test_destroy_releases_leases_and_files (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *id = NULL;
  g_autofree char *session_dir = NULL;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) leases = NULL;

  path = create_session (connection, "exec sleep 300", NULL, &error);
  g_assert_no_error (error);
  id = g_path_get_basename (path);
  session_dir = g_build_filename (paddock_test_daemon_get_state_dir (daemon), "sessions", id, NULL);
  g_assert_true (g_file_test (session_dir, G_FILE_TEST_IS_DIR));

  reply = paddock_test_lease (connection, "web", 0, g_variant_new_parsed ("{'session': <%s>}", id), NULL, &error);
  g_assert_no_error (error);
  g_clear_pointer (&reply, g_variant_unref);

  reply = stop (connection, path, 0, TRUE, &error);
  g_assert_no_error (error);
  g_clear_pointer (&reply, g_variant_unref);

  leases = paddock_test_list_leases (connection);
  g_assert_cmpuint (g_variant_n_children (leases), ==, 0);
  g_assert_false (g_file_test (session_dir, G_FILE_TEST_EXISTS));

  /* Gone from the list and from the bus: a second destroy is an error. */
  {
    g_autoptr(GVariant) sessions = paddock_test_list_sessions (connection);
    g_assert_cmpuint (g_variant_n_children (sessions), ==, 0);
  }
  g_clear_pointer (&reply, g_variant_unref);
  reply = stop (connection, path, 0, TRUE, &error);
  g_assert_null (reply);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND);
}

static void
stop_reply_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  GVariant **out = user_data;
  g_autoptr(GError) error = NULL;

  *out = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  g_assert_no_error (error);
}

static void
test_stop_and_destroy_at_once (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GVariant) stop_reply = NULL;
  g_autoptr(GVariant) destroy_reply = NULL;
  gint64 deadline;

  path = create_session (connection, "trap '' TERM HUP; exec sleep 300", NULL, &error);
  g_assert_no_error (error);

  /* Stop with a long grace, and Destroy right behind it: destroy's zero
   * grace wins, both answer. */
  g_dbus_connection_call (connection, "org.paddock.Daemon", path, "org.paddock.Session1", "Stop",
                          g_variant_new ("(u)", 60), G_VARIANT_TYPE ("(a{sv})"),
                          G_DBUS_CALL_FLAGS_NONE, 30000, NULL, stop_reply_cb, &stop_reply);
  destroy_reply = stop (connection, path, 0, TRUE, &error);
  g_assert_no_error (error);
  {
    guint32 survivors = 1;
    g_assert_true (g_variant_lookup (destroy_reply, "survivors", "u", &survivors));
    g_assert_cmpuint (survivors, ==, 0);
  }

  /* The Stop got its answer too, long before its 60 s grace. */
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (stop_reply == NULL && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, FALSE);
  g_assert_nonnull (stop_reply);
}

static void
test_bad_input (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GPtrArray) huge = g_ptr_array_new_with_free_func (g_free);

  /* missing workspace folder */
  path = paddock_test_create_session_argv (connection, "/nonexistent/paddock", "host",
                                           (const char *[]) { "true", NULL }, NULL, &error);
  g_assert_null (path);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* empty argv, unknown option, bad profile, bad size, bad env name,
   * a name on two lines */
  path = create_session (connection, "true", g_variant_new_parsed ("{'command': <@aay []>}"), &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  path = create_session (connection, "true", g_variant_new_parsed ("{'wrokspace': <'x'>}"), &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  path = create_session (connection, "true", g_variant_new_parsed ("{'profile': <'yolo'>}"), &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  path = create_session (connection, "true", g_variant_new_parsed ("{'rows': <@q 0>}"), &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  path = create_session (connection, "true", g_variant_new_parsed ("{'env': <{'1BAD': 'x'}>}"), &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  path = create_session (connection, "true", g_variant_new_parsed ("{'name': <'two\\nlines'>}"), &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* huge argv: 5,000 arguments */
  for (guint i = 0; i < 5000; i++)
    g_ptr_array_add (huge, g_strdup ("x"));
  g_ptr_array_add (huge, NULL);
  {
    GVariantBuilder extra;

    g_variant_builder_init (&extra, G_VARIANT_TYPE_VARDICT);
    g_variant_builder_add (&extra, "{sv}", "command",
                           g_variant_new_bytestring_array ((const char * const *) huge->pdata, -1));
    path = create_session (connection, "true", g_variant_builder_end (&extra), &error);
    g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
  }

  /* a program that does not exist */
  {
    GVariantBuilder extra;

    g_variant_builder_init (&extra, G_VARIANT_TYPE_VARDICT);
    g_variant_builder_add (&extra, "{sv}", "command",
                           g_variant_new_bytestring_array ((const char *[]) { "no-such-agent-here", NULL }, -1));
    path = create_session (connection, "true", g_variant_builder_end (&extra), &error);
    g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND);
    g_clear_error (&error);
  }

  /* An unknown session is no object at all. */
  g_clear_pointer (&reply, g_variant_unref);
  reply = stop (connection, "/org/paddock/Daemon/session/000000000000", 0, FALSE, &error);
  g_assert_null (reply);
  g_assert_nonnull (error);
  g_clear_error (&error);

  /* and the daemon still serves (paddock_test_list_sessions fails the
   * test if it does not) */
  g_clear_pointer (&reply, g_variant_unref);
  reply = paddock_test_list_sessions (connection);
}

/* The teardown guarantee of the safe profile: two hundred processes, some
 * of which left the session (setsid), were orphaned (double fork) or
 * ignore SIGTERM and SIGHUP — none of them is left when Destroy returns. */
static void
test_safe_teardown_of_200 (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *marker = g_build_filename (workspace, "marker-sleep", NULL);
  g_autofree char *script = NULL;
  g_autoptr(GVariant) result = NULL;
  guint32 survivors = 99;

  g_assert_no_errno (symlink ("/bin/sleep", marker));
  script = g_strdup_printf ("M=%s; "
                            "for i in $(seq 50); do $M 300 & done; "
                            "for i in $(seq 50); do setsid $M 300 & done; "
                            "for i in $(seq 50); do sh -c \"($M 300 &)\"; done; "
                            "for i in $(seq 50); do sh -c \"trap '' TERM HUP; exec $M 300\" & done; "
                            "echo spawned; wait", marker);

  profile = "safe";
  path = create_session (connection, script, NULL, &error);
  profile = "host";
  if (g_error_matches (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED))
    {
      g_test_skip (error->message);
      unlink (marker);
      return;
    }
  g_assert_no_error (error);
  g_assert_true (wait_for_output (connection, path, "spawned"));

  paddock_test_wait_for_marked (marker, 200);

  result = stop (connection, path, 0, TRUE, &error);
  g_assert_no_error (error);
  g_assert_true (g_variant_lookup (result, "survivors", "u", &survivors));
  g_assert_cmpuint (survivors, ==, 0);
  /* Checked from outside, the moment Destroy answered. */
  g_assert_cmpuint (paddock_test_count_marked (marker), ==, 0);

  unlink (marker);
}

static void
test_safe_view_and_environment (void)
{
  g_autoptr(PaddockTestDaemon) daemon = NULL;
  GDBusConnection *connection;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GString) output = NULL;
  g_autoptr(GVariant) result = NULL;

  g_setenv ("PADDOCK_CANARY_SECRET", "sk-canary-4242", TRUE);
  daemon = paddock_test_daemon_new (NULL);
  g_unsetenv ("PADDOCK_CANARY_SECRET");
  connection = paddock_test_daemon_get_connection (daemon);

  profile = "safe";
  path = create_session (connection,
                         "echo pid=$$ home=$HOME; env; touch /usr/x 2>&1; echo write-ok > $PWD/from-agent; "
                         "echo done-printing; exec sleep 300", NULL, &error);
  profile = "host";
  if (g_error_matches (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED))
    {
      g_test_skip (error->message);
      return;
    }
  g_assert_no_error (error);
  g_assert_true (wait_for_output (connection, path, "done-printing"));

  output = read_output (connection, path);
  /* pid 2 of its own namespace, a private HOME, no daemon secrets, a
   * read-only system, and writes to the workspace staged: listed for
   * review, not in the real folder until applied. */
  g_assert_nonnull (strstr (output->str, "pid=2 home=/home/agent"));
  g_assert_null (strstr (output->str, "sk-canary-4242"));
  g_assert_nonnull (strstr (output->str, "Read-only file system"));
  {
    g_autofree char *written = g_build_filename (workspace, "from-agent", NULL);
    g_autoptr(GVariant) changes = NULL;
    const char *changed_path = NULL;
    const char *kind = NULL;
    g_autoptr(PaddockIpcSession1) session = paddock_test_session (connection, path);

    g_assert_false (g_file_test (written, G_FILE_TEST_EXISTS));
    paddock_ipc_session1_call_list_changes_sync (session, &changes, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (g_variant_n_children (changes), ==, 1);
    g_variant_get_child (changes, 0, "(^&ay^&ay&s&sbuub)",
                         &changed_path, NULL, &kind, NULL, NULL, NULL, NULL, NULL);
    g_assert_cmpstr (changed_path, ==, "from-agent");
    g_assert_cmpstr (kind, ==, "added");
  }

  result = stop (connection, path, 0, TRUE, &error);
  g_assert_no_error (error);
}

static GVariant *
list_sessions (GDBusConnection *connection)
{
  return paddock_test_list_sessions (connection);
}

static char *
listed_state (GVariant   *sessions,
              const char *path,
              gint       *exit_status)
{
  for (gsize i = 0; i < g_variant_n_children (sessions); i++)
    {
      g_autoptr(GVariant) session = g_variant_get_child_value (sessions, i);
      const char *session_path = NULL;
      char *state = NULL;

      g_variant_lookup (session, "path", "&o", &session_path);
      if (g_strcmp0 (session_path, path) != 0)
        continue;
      g_variant_lookup (session, "state", "s", &state);
      if (exit_status != NULL)
        g_variant_lookup (session, "exit-status", "i", exit_status);
      return state;
    }
  return NULL;
}

/* A daemon killed without warning leaves its sessions behind; the next one
 * lists them with their last state, and nothing of them runs unsupervised:
 * the safe sandbox died with the daemon, and what is left of a host
 * session is killed. Their files stay. */
static void
test_restart_lists_and_cleans_up (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *marker = g_build_filename (workspace, "marker-restart", NULL);
  g_autofree char *script = NULL;
  g_autofree char *host_path = NULL;
  g_autofree char *safe_path = NULL;
  g_autofree char *exited_path = NULL;
  g_autoptr(GVariant) sessions = NULL;
  g_autofree char *host_state = NULL;
  g_autofree char *safe_state = NULL;
  g_autofree char *exited_state = NULL;
  gint exit_status = 0;
  gint64 deadline;

  g_assert_no_errno (symlink ("/bin/sleep", marker));
  script = g_strdup_printf ("trap '' HUP TERM; echo up; exec %s 300", marker);

  host_path = create_session (connection, script, NULL, &error);
  g_assert_no_error (error);
  profile = "safe";
  safe_path = create_session (connection, script, NULL, &error);
  profile = "host";
  if (g_error_matches (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED))
    g_clear_error (&error);
  g_assert_no_error (error);
  exited_path = create_session (connection, "exit 7", NULL, &error);
  g_assert_no_error (error);

  g_assert_true (wait_for_output (connection, host_path, "up"));
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  paddock_test_wait_for_marked (marker, safe_path != NULL ? 2 : 1);
  while (TRUE)
    {
      g_autofree char *state = get_state (connection, exited_path);
      if (g_strcmp0 (state, "exited") == 0)
        break;
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (20 * 1000);
    }

  paddock_test_daemon_kill (daemon);
  paddock_test_daemon_start (daemon);

  /* They are all listed with their last state: the running ones as
   * "running" while what is left of them is ended (SIGTERM, the grace,
   * SIGKILL: it ignores SIGTERM), then "stopped"... */
  deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  for (;;)
    {
      g_clear_pointer (&host_state, g_free);
      g_clear_pointer (&safe_state, g_free);
      g_clear_pointer (&sessions, g_variant_unref);
      sessions = list_sessions (connection);
      host_state = listed_state (sessions, host_path, NULL);
      if (safe_path != NULL)
        safe_state = listed_state (sessions, safe_path, NULL);
      if (g_strcmp0 (host_state, "stopped") == 0 && (safe_path == NULL || g_strcmp0 (safe_state, "stopped") == 0))
        break;
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (50 * 1000);
    }

  /* ...and once "stopped", nothing of them runs any more. */
  g_assert_cmpuint (paddock_test_count_marked (marker), ==, 0);

  exited_state = listed_state (sessions, exited_path, &exit_status);
  g_assert_cmpstr (exited_state, ==, "exited");
  g_assert_cmpint (exit_status, ==, 7);

  /* Their files are still there, and destroying them works. */
  {
    g_autofree char *id = g_path_get_basename (host_path);
    g_autofree char *dir = g_build_filename (paddock_test_daemon_get_state_dir (daemon), "sessions", id, NULL);
    g_autoptr(GVariant) result = NULL;

    g_assert_true (g_file_test (dir, G_FILE_TEST_IS_DIR));
    result = stop (connection, host_path, 0, TRUE, &error);
    g_assert_no_error (error);
    g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));
  }

  unlink (marker);
}

/* ------------------------------------------------------------------------ */
/* A session's end goes out once its record is on disk, without holding up
 * the daemon meanwhile. The daemon's own PADDOCK_TEST_RECORD_WRITE_HOLD
 * holds its record writer while a file exists, so that what is seen while
 * a record is not on disk yet depends on no timing. */

static guint32
get_main_pid (GDBusConnection *connection,
              const char      *path)
{
  return (guint32) paddock_test_session_main_pid (connection, path);
}

/* The agent reaped: MainPid goes to 0 at once (it is not part of the end
 * that waits for the record), in the same turn as the end is recorded. */
static void
wait_for_reaped (GDBusConnection *connection,
                 const char      *path)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (get_main_pid (connection, path) != 0)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (20 * 1000);
    }
}

static void
wait_for_state (GDBusConnection *connection,
                const char      *path,
                const char      *wanted)
{
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;

  for (;;)
    {
      g_autofree char *state = get_state (connection, path);

      if (g_strcmp0 (state, wanted) == 0)
        return;
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (20 * 1000);
    }
}

/* Waits (bounded) for NAME in the session's folder: its keeper's socket
 * (bound once the keeper holds the session), its exit file. */
static void
wait_for_session_file (PaddockTestDaemon *daemon,
                       const char        *path,
                       const char        *name)
{
  g_autofree char *id = g_path_get_basename (path);
  g_autofree char *file = g_build_filename (paddock_test_daemon_get_state_dir (daemon), "sessions", id, name, NULL);
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (!g_file_test (file, G_FILE_TEST_EXISTS))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (20 * 1000);
    }
}

/* The state and exit status in the session's record on disk. */
static char *
record_state (PaddockTestDaemon *daemon,
              const char        *path,
              gint64            *exit_status)
{
  g_autofree char *id = g_path_get_basename (path);
  g_autofree char *file = g_build_filename (paddock_test_daemon_get_state_dir (daemon), "sessions", id,
                                            "session.json", NULL);
  g_autofree char *contents = NULL;
  g_autoptr(GRegex) state_regex = g_regex_new ("\"state\"\\s*:\\s*\"([a-z]+)\"", 0, 0, NULL);
  g_autoptr(GRegex) status_regex = g_regex_new ("\"exit_status\"\\s*:\\s*(-?[0-9]+)", 0, 0, NULL);
  g_autoptr(GMatchInfo) state_match = NULL;
  g_autoptr(GMatchInfo) status_match = NULL;

  g_assert_true (g_file_get_contents (file, &contents, NULL, NULL));
  g_assert_true (g_regex_match (state_regex, contents, 0, &state_match));
  g_assert_true (g_regex_match (status_regex, contents, 0, &status_match));
  if (exit_status != NULL)
    {
      g_autofree char *number = g_match_info_fetch (status_match, 1);
      *exit_status = g_ascii_strtoll (number, NULL, 10);
    }
  return g_match_info_fetch (state_match, 1);
}

static void
send_line (GDBusConnection *connection,
           const char      *path)
{
  g_autoptr(PaddockIpcSession1) session = paddock_test_session (connection, path);
  g_autoptr(GError) error = NULL;

  paddock_ipc_session1_call_send_input_sync (session, g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, "\n", 1, 1),
                                             NULL, &error);
  g_assert_no_error (error);
}

static void
call_done_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  GVariant **reply = user_data;
  g_autoptr(GError) error = NULL;

  *reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  g_assert_no_error (error);
}

static void
call_async (GDBusConnection *connection,
            const char      *path,
            const char      *method,
            GVariant        *parameters,
            GVariant       **reply)
{
  g_dbus_connection_call (connection, "org.paddock.Daemon", path, "org.paddock.Session1", method,
                          parameters, G_VARIANT_TYPE ("(a{sv})"), G_DBUS_CALL_FLAGS_NONE, 60 * 1000,
                          NULL, call_done_cb, reply);
}

static gboolean
pointer_set (gpointer user_data)
{
  return *(gpointer *) user_data != NULL;
}

static char *
hold_record_writes (void)
{
  g_autofree char *dir = g_dir_make_tmp ("paddock-hold-XXXXXX", NULL);
  char *hold = g_build_filename (dir, "hold", NULL);

  g_assert_nonnull (dir);
  g_setenv ("PADDOCK_TEST_RECORD_WRITE_HOLD", hold, TRUE);
  return hold;
}

static void
remove_hold (char *hold)
{
  g_autofree char *dir = g_path_get_dirname (hold);

  g_unlink (hold);
  g_rmdir (dir);
  g_free (hold);
  g_unsetenv ("PADDOCK_TEST_RECORD_WRITE_HOLD");
}

/* While the record of an end is being written, the daemon serves as ever
 * and still says the session runs (as its record on disk does), unless
 * the agent's keeper keeps that end (an agent that exited by itself);
 * Stop and Destroy called meanwhile are answered once the record is
 * there. Then the end goes out, with its exit status, as the record
 * says. */
static void
test_end_published_once_durable (void)
{
  g_autofree char *hold = hold_record_writes ();
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *exiting = NULL;
  g_autofree char *stopped = NULL;
  g_autofree char *destroyed = NULL;
  g_autofree char *destroyed_dir = NULL;
  g_autoptr(GVariant) stop_exited_reply = NULL;
  g_autoptr(GVariant) stop_reply = NULL;
  g_autoptr(GVariant) destroy_reply = NULL;
  gint64 recorded_status = 0;

  exiting = create_session (connection, "echo up; read line; exit 7", NULL, &error);
  g_assert_no_error (error);
  stopped = create_session (connection, "echo up; exec sleep 300", NULL, &error);
  g_assert_no_error (error);
  destroyed = create_session (connection, "echo up; read line; exit 3", NULL, &error);
  g_assert_no_error (error);
  {
    g_autofree char *id = g_path_get_basename (destroyed);
    destroyed_dir = g_build_filename (paddock_test_daemon_get_state_dir (daemon), "sessions", id, NULL);
  }
  g_assert_true (wait_for_output (connection, exiting, "up"));
  g_assert_true (wait_for_output (connection, stopped, "up"));
  g_assert_true (wait_for_output (connection, destroyed, "up"));

  /* From here on, no record write reaches the disk. */
  g_assert_true (g_file_set_contents (hold, "", 0, NULL));

  /* (a) The agent exits: its end is recorded, not on disk yet. It goes
   * out all the same, with its status: the agent's keeper, which holds
   * the session (its socket is there), keeps that end until the record
   * is on disk, and a daemon killed meanwhile leaves it to the next one
   * (test-paddockctl-adopt.sh, "an end published before its record is
   * on disk"). */
  wait_for_session_file (daemon, exiting, "keeper.sock");
  send_line (connection, exiting);
  wait_for_reaped (connection, exiting);
  wait_for_state (connection, exiting, "exited");
  {
    g_autofree char *on_disk = record_state (daemon, exiting, NULL);
    g_autoptr(GVariant) sessions = list_sessions (connection);
    gint exit_status = 0;
    g_autofree char *listed = listed_state (sessions, exiting, &exit_status);
    g_autoptr(GString) other_output = read_output (connection, stopped);

    g_assert_cmpstr (listed, ==, "exited");
    g_assert_cmpint (exit_status, ==, 7);
    g_assert_cmpstr (on_disk, ==, "running");
    g_assert_nonnull (strstr (other_output->str, "up"));
  }

  /* Stop of the session that ended meanwhile, (c) Stop of a running one
   * and Destroy of another that ended meanwhile: none is answered before
   * the records are on disk. */
  call_async (connection, exiting, "Stop", g_variant_new ("(u)", 5), &stop_exited_reply);
  call_async (connection, stopped, "Stop", g_variant_new ("(u)", 5), &stop_reply);
  send_line (connection, destroyed);
  wait_for_reaped (connection, destroyed);
  call_async (connection, destroyed, "Destroy", NULL, &destroy_reply);
  wait_for_reaped (connection, stopped);
  {
    g_autofree char *state = get_state (connection, stopped);
    g_autofree char *on_disk = record_state (daemon, stopped, NULL);

    g_assert_cmpstr (state, ==, "running");
    g_assert_cmpstr (on_disk, ==, "running");
    g_assert_true (g_file_test (destroyed_dir, G_FILE_TEST_IS_DIR));
  }
  /* The calls before this one were dispatched: no answer came meanwhile. */
  {
    g_autoptr(GVariant) sessions = list_sessions (connection);
    g_autofree char *listed = listed_state (sessions, stopped, NULL);

    g_assert_cmpstr (listed, ==, "running");
    while (g_main_context_iteration (NULL, FALSE))
      ;
    g_assert_null (stop_exited_reply);
    g_assert_null (stop_reply);
    g_assert_null (destroy_reply);
  }

  /* (b) The writes land: the ends go out, as on disk. */
  g_assert_cmpint (g_unlink (hold), ==, 0);
  /* Its Stop is answered once the record is on disk (the end itself was
   * out before). */
  g_assert_true (paddock_test_wait_for (pointer_set, &stop_exited_reply, 30 * 1000));
  {
    g_autoptr(GVariant) sessions = list_sessions (connection);
    gint exit_status = 0;
    g_autofree char *listed = listed_state (sessions, exiting, &exit_status);
    g_autofree char *on_disk = record_state (daemon, exiting, &recorded_status);

    g_assert_cmpstr (listed, ==, "exited");
    g_assert_cmpint (exit_status, ==, 7);
    g_assert_cmpstr (on_disk, ==, "exited");
    g_assert_cmpint (recorded_status, ==, 7);
  }

  g_assert_true (paddock_test_wait_for (pointer_set, &stop_exited_reply, 30 * 1000));
  g_assert_true (paddock_test_wait_for (pointer_set, &stop_reply, 30 * 1000));
  g_assert_true (paddock_test_wait_for (pointer_set, &destroy_reply, 30 * 1000));
  {
    g_autoptr(GVariant) result = g_variant_get_child_value (stop_exited_reply, 0);
    const char *state = NULL;

    g_assert_true (g_variant_lookup (result, "state", "&s", &state));
    g_assert_cmpstr (state, ==, "exited");
  }
  {
    g_autoptr(GVariant) result = g_variant_get_child_value (stop_reply, 0);
    const char *state = NULL;
    g_autofree char *on_disk = record_state (daemon, stopped, NULL);
    g_autofree char *published = get_state (connection, stopped);

    g_assert_true (g_variant_lookup (result, "state", "&s", &state));
    g_assert_cmpstr (state, ==, "stopped");
    g_assert_cmpstr (on_disk, ==, "stopped");
    g_assert_cmpstr (published, ==, "stopped");
  }
  {
    g_autoptr(GVariant) result = g_variant_get_child_value (destroy_reply, 0);
    const char *state = NULL;
    g_autoptr(GVariant) sessions = list_sessions (connection);
    g_autofree char *listed = listed_state (sessions, destroyed, NULL);

    g_assert_true (g_variant_lookup (result, "state", "&s", &state));
    g_assert_cmpstr (state, ==, "destroyed");
    g_assert_false (g_file_test (destroyed_dir, G_FILE_TEST_EXISTS));
    g_assert_null (listed);
  }

  g_clear_pointer (&stop_reply, g_variant_unref);
  stop_reply = stop (connection, exiting, 0, TRUE, &error);
  g_assert_no_error (error);
  g_clear_pointer (&stop_reply, g_variant_unref);
  stop_reply = stop (connection, stopped, 0, TRUE, &error);
  g_assert_no_error (error);
  remove_hold (g_steal_pointer (&hold));
}

/* (d) A daemon killed while the record of an end is not on disk yet: the
 * next one lists the end a client was told, never contradicting it: here
 * the agent's keeper kept it, and left it to the next daemon. And a
 * daemon that quits in that moment writes the record before it goes, and
 * the next one lists the end. */
static void
test_end_interrupted_before_durable (void)
{
  g_autofree char *hold = hold_record_writes ();
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *killed = NULL;
  g_autofree char *quit = NULL;
  g_autoptr(GSubprocess) release = NULL;
  g_autoptr(GVariant) result = NULL;

  killed = create_session (connection, "echo up; read line; exit 7", NULL, &error);
  g_assert_no_error (error);
  g_assert_true (wait_for_output (connection, killed, "up"));
  wait_for_session_file (daemon, killed, "keeper.sock");
  g_assert_true (g_file_set_contents (hold, "", 0, NULL));
  send_line (connection, killed);
  wait_for_reaped (connection, killed);
  wait_for_state (connection, killed, "exited");

  paddock_test_daemon_kill (daemon);
  {
    /* The end never reached the disk... */
    g_autofree char *on_disk = record_state (daemon, killed, NULL);
    g_assert_cmpstr (on_disk, ==, "running");
  }
  /* ...its keeper wrote it down as it went... */
  wait_for_session_file (daemon, killed, "agent-exit");
  g_assert_cmpint (g_unlink (hold), ==, 0);
  paddock_test_daemon_start (daemon);
  {
    /* ...and the next daemon lists what the client was told. */
    g_autoptr(GVariant) sessions = list_sessions (connection);
    gint exit_status = 0;
    g_autofree char *listed = listed_state (sessions, killed, &exit_status);

    g_assert_cmpstr (listed, ==, "exited");
    g_assert_cmpint (exit_status, ==, 7);
  }

  /* Quitting while held: the shutdown waits for the write (released by
   * another process, once the daemon is quitting), then the next daemon
   * lists the end. */
  quit = create_session (connection, "echo up; read line; exit 5", NULL, &error);
  g_assert_no_error (error);
  g_assert_true (wait_for_output (connection, quit, "up"));
  g_assert_true (g_file_set_contents (hold, "", 0, NULL));
  send_line (connection, quit);
  wait_for_reaped (connection, quit);
  {
    const char *argv[] = { "sh", "-c", "sleep 0.5; rm -f \"$0\"", hold, NULL };

    release = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_NONE, &error);
    g_assert_no_error (error);
  }
  paddock_test_daemon_stop (daemon);
  g_assert_true (g_subprocess_wait (release, NULL, &error));
  g_assert_no_error (error);
  paddock_test_daemon_start (daemon);
  {
    g_autoptr(GVariant) sessions = list_sessions (connection);
    gint exit_status = 0;
    g_autofree char *listed = listed_state (sessions, quit, &exit_status);

    g_assert_cmpstr (listed, ==, "exited");
    g_assert_cmpint (exit_status, ==, 5);
  }

  result = stop (connection, killed, 0, TRUE, &error);
  g_assert_no_error (error);
  g_clear_pointer (&result, g_variant_unref);
  result = stop (connection, quit, 0, TRUE, &error);
  g_assert_no_error (error);
  remove_hold (g_steal_pointer (&hold));
}

static gboolean
all_files_exist (gpointer user_data)
{
  char **paths = user_data;

  for (guint i = 0; paths[i] != NULL; i++)
    if (!g_file_test (paths[i], G_FILE_TEST_EXISTS))
      return FALSE;
  return TRUE;
}

/* A daemon killed while three sessions run processes that ignore SIGTERM:
 * the next one ends what is left of them all at once, as Stop would
 * (SIGTERM, a grace, SIGKILL), serving meanwhile. The grace is made an
 * hour here, so that what is seen during it cannot depend on timing: every
 * session has had its SIGTERM while the first one's grace still runs (one
 * grace for all, not one after the other), ListSessions answers with all
 * three still running, Stop and Destroy end a session's leftovers at once,
 * and a daemon that quits in the middle leaves nothing running. */
static void
test_restart_ends_leftovers_at_once (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *marker = g_build_filename (workspace, "marker-leftover", NULL);
  char *paths[3] = { NULL, };
  g_auto(GStrv) term_files = g_new0 (char *, 4);
  g_autoptr(GVariant) sessions = NULL;
  g_autoptr(GVariant) result = NULL;
  guint marked;

  g_assert_no_errno (symlink ("/bin/sleep", marker));
  for (guint i = 0; i < 3; i++)
    {
      g_autofree char *script = NULL;

      term_files[i] = g_strdup_printf ("%s/term-%u", workspace, i);
      /* The shell notes its SIGTERM and goes on; its child ignores it. */
      script = g_strdup_printf ("trap '' HUP; trap 'echo > %s' TERM; "
                                "(trap '' TERM HUP; exec %s 300) & echo up; "
                                "while :; do wait; done", term_files[i], marker);
      paths[i] = create_session (connection, script, NULL, &error);
      g_assert_no_error (error);
      g_assert_true (wait_for_output (connection, paths[i], "up"));
    }
  /* Each shell's child (the shells themselves are "sh" to ps). */
  paddock_test_wait_for_marked (marker, 3);
  marked = paddock_test_count_marked (marker);

  paddock_test_daemon_kill (daemon);
  start_with_leftover_grace (daemon, "3600000");

  /* Every session got its SIGTERM within the first one's grace... */
  g_assert_true (paddock_test_wait_for (all_files_exist, term_files, 30 * 1000));

  /* ...while the daemon answers, listing them as they are: running. */
  sessions = list_sessions (connection);
  for (guint i = 0; i < 3; i++)
    {
      g_autofree char *state = listed_state (sessions, paths[i], NULL);
      g_assert_cmpstr (state, ==, "running");
    }
  g_assert_cmpuint (paddock_test_count_marked (marker), ==, marked);
  /* Nothing new runs in them meanwhile. */
  {
    const char *argv[] = { "true", NULL };
    g_autofree char *command = paddock_test_exec (connection, paths[2], argv, "", 0, FALSE, &error);

    g_assert_null (command);
    g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_BUSY);
    g_clear_error (&error);
  }

  /* Destroy ends a session's leftovers now, and answers once they are
   * gone (with its files); Stop likewise. */
  result = stop (connection, paths[0], 0, TRUE, &error);
  g_assert_no_error (error);
  g_clear_pointer (&result, g_variant_unref);
  g_assert_cmpuint (paddock_test_count_marked (marker), ==, marked - 1);
  {
    g_autofree char *id = g_path_get_basename (paths[0]);
    g_autofree char *dir = g_build_filename (paddock_test_daemon_get_state_dir (daemon), "sessions", id, NULL);

    g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));
  }
  result = stop (connection, paths[1], 0, FALSE, &error);
  g_assert_no_error (error);
  g_clear_pointer (&result, g_variant_unref);
  g_assert_cmpuint (paddock_test_count_marked (marker), ==, marked - 2);
  {
    g_autofree char *state = get_state (connection, paths[1]);
    g_assert_cmpstr (state, ==, "stopped");
  }

  /* A daemon that quits within the grace leaves nothing running... */
  paddock_test_daemon_stop (daemon);
  paddock_test_wait_for_marked (marker, 0);

  /* ...and the next one lists that session as stopped (once a process
   * that was still exiting has gone). */
  paddock_test_daemon_start (daemon);
  {
    gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;

    for (;;)
      {
        g_autofree char *state = NULL;

        g_clear_pointer (&sessions, g_variant_unref);
        sessions = list_sessions (connection);
        state = listed_state (sessions, paths[2], NULL);
        if (g_strcmp0 (state, "stopped") == 0)
          break;
        g_assert_cmpstr (state, ==, "running");
        g_assert_cmpint (g_get_monotonic_time (), <, deadline);
        g_usleep (20 * 1000);
      }
  }
  for (guint i = 1; i < 3; i++)
    {
      result = stop (connection, paths[i], 0, TRUE, &error);
      g_assert_no_error (error);
      g_clear_pointer (&result, g_variant_unref);
    }

  for (guint i = 0; i < 3; i++)
    {
      unlink (term_files[i]);
      g_free (paths[i]);
    }
  unlink (marker);
}

/* The record of @path (its daemon stopped) names @fake as its cgroup
 * instead of any it had: a folder that is no cgroup, which never empties
 * while @keep, a file in it, is there. The next daemon takes it for what an
 * earlier one left running of the session, and ends it once @keep is
 * gone: a sweep held open for as long as a test needs. */
static void
record_fake_cgroup (PaddockTestDaemon *daemon,
                    const char        *path,
                    const char        *fake,
                    const char        *keep)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *id = g_path_get_basename (path);
  g_autofree char *record = g_build_filename (paddock_test_daemon_get_state_dir (daemon), "sessions", id,
                                              "session.json", NULL);
  g_autofree char *contents = NULL;
  g_autofree char *edited = NULL;

  g_file_get_contents (record, &contents, NULL, &error);
  g_assert_no_error (error);
  /* A member named again: the parser keeps the last. */
  g_strchomp (contents);
  g_assert_true (g_str_has_suffix (contents, "}"));
  contents[strlen (contents) - 1] = '\0';
  edited = g_strdup_printf ("%s, \"cgroup\" : \"%s\"}\n", contents, fake);
  g_file_set_contents (record, edited, -1, &error);
  g_assert_no_error (error);
  g_assert_no_errno (g_mkdir (fake, 0700));
  g_file_set_contents (keep, "", 0, &error);
  g_assert_no_error (error);
}

/* What an earlier daemon left that outlives its SIGKILL (here its record
 * names a "cgroup" that never empties: a folder that is no cgroup, with a
 * file in it): a Stop that waits for it is answered that something
 * survived, as Stop answers for a session's own survivors, not left
 * waiting for as long as it lasts; and the session ends once it is gone. */
static void
test_restart_leftovers_that_survive (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *fake = g_build_filename (workspace, "paddock-session-fake", NULL);
  g_autofree char *keep = g_build_filename (fake, "keep", NULL);
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) result = NULL;
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  /* The sweep is held open by the record's cgroup: a build without the
   * Linux executor has no cgroup layer and never reads one. */
  if (!paddock_test_have_sandbox ())
    {
      g_test_skip ("a portable build reads no cgroup, so a record's cgroup cannot hold the sweep open");
      return;
    }
  path = create_session (connection, "exit 7", NULL, &error);
  g_assert_no_error (error);
  for (;;)
    {
      g_autofree char *state = get_state (connection, path);

      if (g_strcmp0 (state, "exited") == 0)
        break;
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (20 * 1000);
    }
  paddock_test_daemon_stop (daemon);

  record_fake_cgroup (daemon, path, fake, keep);

  start_with_leftover_grace (daemon, "0");

  /* Answered (after the SIGKILL and Stop's own wait of 10 s), not
   * waited on until the call's timeout. */
  reply = g_dbus_connection_call_sync (connection, "org.paddock.Daemon", path, "org.paddock.Session1", "Stop",
                                       g_variant_new ("(u)", 0), G_VARIANT_TYPE ("(a{sv})"),
                                       G_DBUS_CALL_FLAGS_NONE, 40000, NULL, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED);
  g_assert_null (reply);
  g_clear_error (&error);

  /* Gone: the session is what its record said, and goes with Destroy. */
  g_assert_no_errno (unlink (keep));
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  g_assert_true (g_file_test (fake, G_FILE_TEST_IS_DIR));
  for (;;)
    {
      g_autofree char *state = get_state (connection, path);

      if (!g_file_test (fake, G_FILE_TEST_EXISTS))
        {
          g_assert_cmpstr (state, ==, "exited");
          break;
        }
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (20 * 1000);
    }
  result = stop (connection, path, 0, TRUE, &error);
  g_assert_no_error (error);
}

/* The calls that need a session that runs, on a restored one: while what
 * an earlier daemon left of it is @being_ended, all Busy, saying so; after,
 * as for any session that ended: Exec and Run Busy, LeasePort and
 * SetNetworkPolicy (the policy it has, which a running host session
 * takes) Conflict. */
static void
assert_refused_unless_running (GDBusConnection *connection,
                               const char      *path,
                               gboolean         being_ended)
{
  gint exec_code = PADDOCK_ERROR_BUSY;
  gint network_code = being_ended ? PADDOCK_ERROR_BUSY : PADDOCK_ERROR_CONFLICT;
  const char *argv[] = { "true", NULL };
  const char *no_domains[] = { NULL };
  g_autoptr(PaddockIpcSession1) session = paddock_test_session (connection, path);
  /* One method each, called by name through the generated proxy (its
   * interface info checks the name and types the reply). */
  struct
  {
    const char *method;
    GVariant   *parameters;
    gint        code;
  } calls[] = {
    { "Exec", g_variant_new ("(^aay^aya{ss}ub)", argv, "", NULL, 0, FALSE), exec_code },
    { "Run", g_variant_new ("(^aay^aya{ss}ua{sv})", argv, "", NULL, 0, NULL), exec_code },
    { "LeasePort", g_variant_new ("(s)", "web"), network_code },
    { "SetNetworkPolicy", g_variant_new ("(s^as)", "host", no_domains), network_code },
  };

  for (guint i = 0; i < G_N_ELEMENTS (calls); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GVariant) reply = NULL;

      reply = g_dbus_proxy_call_sync (G_DBUS_PROXY (session), calls[i].method, calls[i].parameters,
                                      G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
      g_test_message ("%s: %s", calls[i].method, error != NULL ? error->message : "accepted");
      g_assert_error (error, PADDOCK_ERROR, calls[i].code);
      g_assert_true ((strstr (error->message, "being ended") != NULL) == being_ended);
      g_assert_nonnull (strstr (error->message, "not running"));
    }
}

/* A host session left running by a daemon killed without warning: one
 * process that heeds SIGTERM, one that ignores it (both ignore the
 * terminal's hangup, so both outlive the daemon). The next daemon lists
 * the session and ends them, as seen from outside through /proc: the
 * SIGTERM the first, the SIGKILL after the grace the second; meanwhile the
 * session runs nothing new and takes no port or network policy (Busy,
 * saying why), and once they are gone it says "stopped", which refuses
 * those calls as for any session that ended. */
static void
test_restart_sweep_of_leftovers (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *stubborn = g_build_filename (workspace, "marker-sweep-stubborn", NULL);
  g_autofree char *meek = g_build_filename (workspace, "marker-sweep-meek", NULL);
  g_autofree char *script = NULL;
  g_autoptr(GVariant) result = NULL;

  g_assert_no_errno (symlink ("/bin/sleep", stubborn));
  g_assert_no_errno (symlink ("/bin/sleep", meek));
  script = g_strdup_printf ("trap '' HUP; (trap '' TERM HUP; exec %s 300) & (trap '' HUP; exec %s 300) & "
                            "echo up; while :; do wait; done", stubborn, meek);

  /* First with a grace longer than the test: the sweep is held open at
   * its SIGTERM for as long as it takes to look. */
  {
    g_autofree char *path = create_session (connection, script, NULL, &error);
    g_autoptr(GVariant) sessions = NULL;
    g_autofree char *state = NULL;

    g_assert_no_error (error);
    g_assert_true (wait_for_output (connection, path, "up"));
    paddock_test_wait_for_marked (stubborn, 1);
    paddock_test_wait_for_marked (meek, 1);

    paddock_test_daemon_kill (daemon);
    g_assert_cmpuint (paddock_test_count_marked (stubborn), ==, 1);
    start_with_leftover_grace (daemon, "3600000");

    /* The SIGTERM ends the one that heeds it; the other runs on. */
    paddock_test_wait_for_marked (meek, 0);
    g_assert_cmpuint (paddock_test_count_marked (stubborn), ==, 1);
    sessions = list_sessions (connection);
    state = listed_state (sessions, path, NULL);
    g_assert_cmpstr (state, ==, "running");
    assert_refused_unless_running (connection, path, TRUE);
    g_assert_cmpuint (paddock_test_count_marked (stubborn), ==, 1);

    /* That daemon killed in its turn, within the grace: the next one
     * still knows what is left of the session, and ends it. */
    paddock_test_daemon_kill (daemon);
    g_assert_cmpuint (paddock_test_count_marked (stubborn), ==, 1);
    start_with_leftover_grace (daemon, "300");
    wait_for_state (connection, path, "stopped");
    g_assert_cmpuint (paddock_test_count_marked (stubborn), ==, 0);

    result = stop (connection, path, 0, TRUE, &error);
    g_assert_no_error (error);
    g_clear_pointer (&result, g_variant_unref);
  }

  /* Then with a short grace, the sweep left to itself. */
  {
    g_autofree char *path = create_session (connection, script, NULL, &error);
    g_autoptr(GVariant) sessions = NULL;
    g_autofree char *state = NULL;
    gint64 deadline;

    g_assert_no_error (error);
    g_assert_true (wait_for_output (connection, path, "up"));
    paddock_test_wait_for_marked (stubborn, 1);
    paddock_test_wait_for_marked (meek, 1);

    paddock_test_daemon_kill (daemon);
    start_with_leftover_grace (daemon, "300");

    /* Listed all along (as it was, then "stopped")... */
    deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
    for (;;)
      {
        g_clear_pointer (&state, g_free);
        g_clear_pointer (&sessions, g_variant_unref);
        sessions = list_sessions (connection);
        state = listed_state (sessions, path, NULL);
        if (g_strcmp0 (state, "stopped") == 0)
          break;
        g_assert_cmpstr (state, ==, "running");
        g_assert_cmpint (g_get_monotonic_time (), <, deadline);
        g_usleep (20 * 1000);
      }
    /* ...and once "stopped", nothing of it runs, SIGTERM or not. */
    g_assert_cmpuint (paddock_test_count_marked (stubborn), ==, 0);
    g_assert_cmpuint (paddock_test_count_marked (meek), ==, 0);
    assert_refused_unless_running (connection, path, FALSE);

    result = stop (connection, path, 0, TRUE, &error);
    g_assert_no_error (error);
    g_clear_pointer (&result, g_variant_unref);
  }

  /* Last, a Stop during a long sweep: it hurries the sweep to its own
   * grace (1 s), the one that ignores SIGTERM ends only at the SIGKILL
   * after it, and the Stop's elapsed-ms counts from the call, not from the
   * leftovers' end. */
  {
    g_autofree char *path = create_session (connection, script, NULL, &error);
    guint64 elapsed = 0;
    guint survivors = G_MAXUINT;

    g_assert_no_error (error);
    g_assert_true (wait_for_output (connection, path, "up"));
    paddock_test_wait_for_marked (stubborn, 1);
    paddock_test_wait_for_marked (meek, 1);

    paddock_test_daemon_kill (daemon);
    start_with_leftover_grace (daemon, "3600000");
    paddock_test_wait_for_marked (meek, 0);

    result = stop (connection, path, 1, FALSE, &error);
    g_assert_no_error (error);
    g_assert_true (g_variant_lookup (result, "survivors", "u", &survivors));
    g_assert_true (g_variant_lookup (result, "elapsed-ms", "t", &elapsed));
    g_assert_cmpuint (survivors, ==, 0);
    g_assert_cmpuint (elapsed, >=, 900);
    g_assert_cmpuint (paddock_test_count_marked (stubborn), ==, 0);
    g_clear_pointer (&result, g_variant_unref);

    result = stop (connection, path, 0, TRUE, &error);
    g_assert_no_error (error);
  }

  unlink (stubborn);
  unlink (meek);
}

/* What a host session's agent left by setsid() (a server that ignores
 * SIGTERM and SIGHUP) outlives a daemon killed without warning, held by the
 * agent's keeper rather than by init; the next daemon finds it below that
 * keeper (as root its cgroup does too; unprivileged, without one, only the
 * keeper does) and ends it, the session then listed as it ended. */
static void
test_restart_ends_what_the_keeper_held (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *marker = g_build_filename (workspace, "marker-keeper-held", NULL);
  g_autofree char *pid_file = g_build_filename (workspace, "keeper-held.pid", NULL);
  g_autofree char *script = NULL;
  g_autofree char *path = NULL;
  g_autofree char *line = NULL;
  g_autoptr(GVariant) result = NULL;
  gint64 deadline;
  pid_t escaped;

  g_assert_no_errno (symlink ("/bin/sleep", marker));
  /* HUP ignored from the start: the agent's exit hangs its terminal up. */
  script = g_strdup_printf ("trap '' HUP; sh -c 'echo $$ > %s; trap \"\" TERM; exec setsid %s 300' "
                            "</dev/null >/dev/null 2>&1 & exit 0", pid_file, marker);
  path = create_session (connection, script, NULL, &error);
  g_assert_no_error (error);
  line = wait_for_line (pid_file);
  escaped = atoi (line);
  g_assert_cmpint (escaped, >, 1);
  paddock_test_wait_for_marked (marker, 1);
  wait_for_state (connection, path, "exited");

  paddock_test_daemon_kill (daemon);
  g_assert_false (process_gone (escaped));
  g_assert_cmpint (getsid (escaped), ==, escaped);

  start_with_leftover_grace (daemon, "300");
  deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  while (!process_gone (escaped))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (20 * 1000);
    }
  g_assert_cmpuint (paddock_test_count_marked (marker), ==, 0);
  wait_for_state (connection, path, "exited");

  result = stop (connection, path, 0, TRUE, &error);
  g_assert_no_error (error);
  unlink (marker);
  unlink (pid_file);
}

/* What a leftover forks during the sweep's grace is named in no record:
 * a host session whose agent the SIGTERM ended, with a child that answers
 * SIGTERM by starting a process that ignores it, and the daemon killed
 * within the grace. The next daemon finds that process too (through the
 * agent's process session, which outlives the agent), and ends it before
 * the session says "stopped". (As root the session's cgroup finds it
 * anyway; unprivileged, without one, only the process session does.) */
static void
test_restart_sweep_finds_late_children (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *late = g_build_filename (workspace, "marker-sweep-late", NULL);
  g_autofree char *script = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GVariant) result = NULL;

  g_assert_no_errno (symlink ("/bin/sleep", late));
  script = g_strdup_printf ("trap '' HUP; "
                            "(trap '' HUP; trap '(trap \"\" TERM HUP; exec %s 300) &' TERM; "
                            "while :; do sleep 1 & wait; done) & "
                            "echo up; while :; do wait; done", late);
  path = create_session (connection, script, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (wait_for_output (connection, path, "up"));

  paddock_test_daemon_kill (daemon);
  start_with_leftover_grace (daemon, "3600000");
  /* The SIGTERM has been heeded: the late one runs. */
  paddock_test_wait_for_marked (late, 1);

  paddock_test_daemon_kill (daemon);
  start_with_leftover_grace (daemon, "300");
  wait_for_state (connection, path, "stopped");
  g_assert_cmpuint (paddock_test_count_marked (late), ==, 0);

  result = stop (connection, path, 0, TRUE, &error);
  g_assert_no_error (error);
  unlink (late);
}

/* A staged session restored while what an earlier daemon left of it is
 * being ended: nothing holds those processes still (no cgroup of ours to
 * freeze), so Apply, a checkpoint, Drop and RestoreCheckpoint wait for
 * them to be gone (Busy, saying why) and the workspace is left alone;
 * the review list can be read meanwhile. Once they are gone, Apply works.
 * (The leftovers are a fake cgroup, which holds the sweep open without
 * depending on how fast a sandbox dies with its daemon.) */
static void
test_restart_leftovers_hold_the_stage (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  /* Outside the workspace: a change there would make the apply a
   * conflict. */
  g_autofree char *outside = g_dir_make_tmp ("paddock-fake-XXXXXX", NULL);
  g_autofree char *fake = g_build_filename (outside, "paddock-session-fake", NULL);
  g_autofree char *keep = g_build_filename (fake, "keep", NULL);
  g_autofree char *written = g_build_filename (workspace, "from-agent-before-restart", NULL);
  g_autofree char *path = NULL;
  /* Made once the second daemon runs: a proxy keeps the owner it found. */
  g_autoptr(PaddockIpcSession1) session = NULL;
  g_autoptr(GVariant) reply = NULL;
  gint64 deadline;

  profile = "safe";
  path = create_session (connection, "echo staged > $PWD/from-agent-before-restart; exit 7", NULL, &error);
  profile = "host";
  if (g_error_matches (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED))
    {
      g_test_skip (error->message);
      g_rmdir (outside);
      return;
    }
  g_assert_no_error (error);
  wait_for_state (connection, path, "exited");
  paddock_test_daemon_stop (daemon);
  record_fake_cgroup (daemon, path, fake, keep);
  start_with_leftover_grace (daemon, "0");
  session = paddock_test_session (connection, path);

  {
    const char *no_paths[] = { NULL };
    /* By name through the generated proxy, as in
     * assert_refused_unless_running. */
    struct
    {
      const char *method;
      GVariant   *parameters;
    } calls[] = {
      { "Apply", g_variant_new ("(^aay^aay)", no_paths, no_paths) },
      { "CreateCheckpoint", g_variant_new ("(s)", "") },
      { "Drop", g_variant_new ("(^aay)", no_paths) },
      { "RestoreCheckpoint", g_variant_new ("(s)", "none-such") },
    };

    for (guint i = 0; i < G_N_ELEMENTS (calls); i++)
      {
        reply = g_dbus_proxy_call_sync (G_DBUS_PROXY (session), calls[i].method, calls[i].parameters,
                                        G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
        g_test_message ("%s: %s", calls[i].method, error != NULL ? error->message : "accepted");
        g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_BUSY);
        g_assert_nonnull (strstr (error->message, "being ended"));
        /* What it will say: what its record said, not "stopped". */
        g_assert_nonnull (strstr (error->message, "it says exited"));
        g_clear_error (&error);
      }
  }
  g_assert_false (g_file_test (written, G_FILE_TEST_EXISTS));
  paddock_ipc_session1_call_list_changes_sync (session, &reply, NULL, &error);
  g_assert_no_error (error);
  g_clear_pointer (&reply, g_variant_unref);

  /* Gone: the session is what its record said, and its changes apply. */
  g_assert_no_errno (unlink (keep));
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (g_file_test (fake, G_FILE_TEST_EXISTS))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (20 * 1000);
    }
  wait_for_state (connection, path, "exited");
  {
    const char *no_paths[] = { NULL };

    g_auto(GStrv) applied = NULL;
    g_auto(GStrv) conflicts = NULL;
    g_autofree char *batch = NULL;

    paddock_ipc_session1_call_apply_sync (session, no_paths, no_paths, &applied, &conflicts, &batch, NULL, &error);
    g_assert_no_error (error);
  }
  g_assert_true (g_file_test (written, G_FILE_TEST_EXISTS));
  unlink (written);
  g_rmdir (outside);

  reply = stop (connection, path, 0, TRUE, &error);
  g_assert_no_error (error);
}

static int
attach (GDBusConnection *connection,
        const char      *path,
        guint64         *first_offset)
{
  g_autoptr(GUnixFDList) fds = NULL;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;
  gint32 handle = -1;
  int fd;

  reply = g_dbus_connection_call_with_unix_fd_list_sync (connection, "org.paddock.Daemon", path,
                                                         "org.paddock.Session1", "Attach",
                                                         g_variant_new_parsed ("(@a{sv} {},)"),
                                                         G_VARIANT_TYPE ("(ht)"), G_DBUS_CALL_FLAGS_NONE,
                                                         5000, NULL, &fds, NULL, &error);
  g_assert_no_error (error);
  g_variant_get (reply, "(ht)", &handle, first_offset);
  fd = g_unix_fd_list_get (fds, handle, &error);
  g_assert_no_error (error);
  return fd;
}

/* Reads from a viewer's socket until @needle shows up (or 10 s pass). */
static gboolean
viewer_sees (int         fd,
             GString    *seen,
             const char *needle)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (strstr (seen->str, needle) == NULL)
    {
      GPollFD poll_fd = { fd, G_IO_IN, 0 };
      char buffer[4096];
      gssize n;

      if (g_get_monotonic_time () > deadline)
        return FALSE;
      if (g_poll (&poll_fd, 1, 100) <= 0)
        continue;
      n = read (fd, buffer, sizeof buffer);
      if (n <= 0)
        return strstr (seen->str, needle) != NULL;
      g_string_append_len (seen, buffer, n);
    }
  return TRUE;
}

static void
test_attach_replays_and_relays (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GString) first_seen = g_string_new (NULL);
  g_autoptr(GString) second_seen = g_string_new (NULL);
  g_autoptr(GString) late_seen = g_string_new (NULL);
  g_autoptr(GVariant) result = NULL;
  g_autofree char *state = NULL;
  guint64 offset = 99;
  int first;
  int second;
  int late;

  path = create_session (connection, "echo before-anyone-looked; while read line; do echo \"echo: $line\"; done",
                         NULL, &error);
  g_assert_no_error (error);
  g_assert_true (wait_for_output (connection, path, "before-anyone-looked"));

  /* The first viewer gets the scrollback replayed from the start. */
  first = attach (connection, path, &offset);
  g_assert_cmpuint (offset, ==, 0);
  g_assert_true (viewer_sees (first, first_seen, "before-anyone-looked"));

  /* A second one too; what the first types reaches the terminal, and both
   * see the answer live. */
  second = attach (connection, path, &offset);
  g_assert_true (viewer_sees (second, second_seen, "before-anyone-looked"));
  g_assert_cmpint (write (first, "typed by viewer one\n", 20), ==, 20);
  g_assert_true (viewer_sees (first, first_seen, "echo: typed by viewer one"));
  g_assert_true (viewer_sees (second, second_seen, "echo: typed by viewer one"));

  /* Detaching touches nothing. */
  close (first);
  close (second);
  g_usleep (100 * 1000);
  state = get_state (connection, path);
  g_assert_cmpstr (state, ==, "running");

  /* After the end: the replay, then the end of the stream. */
  result = stop (connection, path, 1, FALSE, &error);
  g_assert_no_error (error);
  late = attach (connection, path, &offset);
  g_assert_true (viewer_sees (late, late_seen, "echo: typed by viewer one"));
  {
    char byte;
    GPollFD poll_fd = { late, G_IO_IN, 0 };
    gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
    gssize n = 1;

    while (n > 0 && g_get_monotonic_time () < deadline)
      if (g_poll (&poll_fd, 1, 100) > 0)
        n = read (late, &byte, 1);
    g_assert_cmpint (n, ==, 0);
  }
  close (late);
}

/* CreateSession with "terminal": @fd sent with the call (a descriptor of
 * the caller's, -1 for a handle with no descriptor behind it). Answered
 * asynchronously into @path / @error, so that the caller can read the
 * terminal before the answer comes. */
typedef struct
{
  char     *path;
  GError   *error;
} TerminalCreate;

static void
terminal_create_cb (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  TerminalCreate *created = user_data;

  created->path = paddock_test_create_session_finish (result, &created->error);
}

static gboolean
terminal_create_done (gpointer user_data)
{
  TerminalCreate *created = user_data;

  return created->path != NULL || created->error != NULL;
}

static void
create_with_terminal_argv (GDBusConnection   *connection,
                           const char        *session_profile,
                           const char *const *argv,
                           int                fd,
                           TerminalCreate    *created)
{
  g_autoptr(GUnixFDList) fds = g_unix_fd_list_new ();
  GVariantBuilder extra;

  if (fd >= 0)
    g_assert_cmpint (g_unix_fd_list_append (fds, fd, NULL), ==, 0);
  g_variant_builder_init (&extra, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&extra, "{sv}", "terminal", g_variant_new_handle (0));
  paddock_test_create_session_async (connection, workspace, session_profile, argv, g_variant_builder_end (&extra),
                                     fd >= 0 ? fds : NULL, terminal_create_cb, created);
}

static void
create_with_terminal (GDBusConnection *connection,
                      const char      *session_profile,
                      const char      *script,
                      int              fd,
                      TerminalCreate  *created)
{
  const char *argv[] = { "sh", "-c", script, NULL };

  create_with_terminal_argv (connection, session_profile, argv, fd, created);
}

/* Whether @fd reads end-of-stream within 10 s, after whatever is left. */
static gboolean
reads_to_the_end (int fd)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (g_get_monotonic_time () < deadline)
    {
      GPollFD poll_fd = { fd, G_IO_IN, 0 };
      char buffer[4096];

      if (g_poll (&poll_fd, 1, 100) > 0 && read (fd, buffer, sizeof buffer) == 0)
        return TRUE;
    }
  return FALSE;
}

/* CreateSession's "terminal": the creator's end of a socketpair reads the
 * terminal from its very first byte, without an Attach, and types into
 * it; the session is otherwise the same (a later Attach, its output). */
static void
test_terminal_at_create (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  const char *profiles[] = { "host", "safe" };

  for (guint p = 0; p < G_N_ELEMENTS (profiles); p++)
    {
      TerminalCreate created = { NULL, NULL };
      g_autoptr(GString) seen = g_string_new (NULL);
      g_autoptr(GString) later_seen = g_string_new (NULL);
      g_autoptr(GVariant) result = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *path = NULL;
      guint64 offset = 99;
      int pair[2];
      int later;

      g_test_message ("%s profile", profiles[p]);
      g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), ==, 0);
      create_with_terminal (connection, profiles[p],
                            "echo first-words; while read line; do echo \"echo: $line\"; done", pair[1],
                            &created);
      close (pair[1]);   /* the call's fd list holds its own copy */
      g_assert_true (paddock_test_wait_for (terminal_create_done, &created, 20 * 1000));
      if (g_error_matches (created.error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED))
        {
          g_test_message ("no %s session here: %s", profiles[p], created.error->message);
          g_clear_error (&created.error);
          close (pair[0]);
          continue;
        }
      g_assert_no_error (created.error);
      path = g_steal_pointer (&created.path);

      /* From the first byte: the stream starts with what the agent printed. */
      g_assert_true (viewer_sees (pair[0], seen, "first-words"));
      g_assert_true (g_str_has_prefix (seen->str, "first-words"));
      g_assert_cmpint (write (pair[0], "typed at create\n", 16), ==, 16);
      g_assert_true (viewer_sees (pair[0], seen, "echo: typed at create"));

      /* A viewer like any other: Attach still replays the same terminal. */
      later = attach (connection, path, &offset);
      g_assert_cmpuint (offset, ==, 0);
      g_assert_true (viewer_sees (later, later_seen, "echo: typed at create"));
      close (later);

      /* And its end is the terminal's end. */
      result = stop (connection, path, 1, FALSE, &error);
      g_assert_no_error (error);
      g_assert_true (reads_to_the_end (pair[0]));
      close (pair[0]);
    }
}

/* The creator's socket is the caller's open file description too (a
 * descriptor sent over D-Bus is a duplicate, not a copy): the daemon
 * leaves its flags alone. A caller that passed, say, a socket it also
 * reads with blocking calls must not find it non-blocking afterwards. */
static void
test_terminal_at_create_keeps_callers_flags (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  TerminalCreate created = { NULL, NULL };
  g_autoptr(GString) seen = g_string_new (NULL);
  g_autoptr(GVariant) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  int pair[2];
  int kept;

  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), ==, 0);
  kept = fcntl (pair[1], F_DUPFD_CLOEXEC, 3);
  g_assert_cmpint (kept, >=, 0);
  g_assert_false (fcntl (kept, F_GETFL) & O_NONBLOCK);
  create_with_terminal (connection, "host", "echo first-words; exec sleep 300", pair[1], &created);
  close (pair[1]);
  g_assert_true (paddock_test_wait_for (terminal_create_done, &created, 20 * 1000));
  g_assert_no_error (created.error);
  path = g_steal_pointer (&created.path);
  /* The viewer is attached, and has written to it. */
  g_assert_true (viewer_sees (pair[0], seen, "first-words"));

  g_assert_false (fcntl (kept, F_GETFL) & O_NONBLOCK);

  close (kept);
  result = stop (connection, path, 1, FALSE, &error);
  g_assert_no_error (error);
  g_assert_true (reads_to_the_end (pair[0]));
  close (pair[0]);
}

static gboolean
daemon_has_no_children (gpointer user_data)
{
  guint32 pid = GPOINTER_TO_UINT (user_data);
  g_autofree char *path = g_strdup_printf ("/proc/%u/task/%u/children", pid, pid);
  g_autofree char *children = NULL;

  return g_file_get_contents (path, &children, NULL, NULL) && children[0] == '\0';
}

/* Whether every child of the daemon is a keeper whose tree is empty. */
static gboolean
daemon_has_only_idle_keepers (gpointer user_data)
{
  guint32 pid = GPOINTER_TO_UINT (user_data);
  g_autofree char *path = g_strdup_printf ("/proc/%u/task/%u/children", pid, pid);
  g_autofree char *children = NULL;
  g_auto(GStrv) pids = NULL;

  if (!g_file_get_contents (path, &children, NULL, NULL))
    return FALSE;
  pids = g_strsplit (g_strstrip (children), " ", -1);
  for (guint i = 0; pids[i] != NULL; i++)
    {
      g_autofree char *comm_path = NULL;
      g_autofree char *comm = NULL;

      if (pids[i][0] == '\0')
        continue;
      comm_path = g_strdup_printf ("/proc/%s/comm", pids[i]);
      if (!g_file_get_contents (comm_path, &comm, NULL, NULL) ||
          g_strcmp0 (g_strstrip (comm), "paddock-keeper") != 0 ||
          !daemon_has_no_children (GUINT_TO_POINTER ((guint32) g_ascii_strtoull (pids[i], NULL, 10))))
        return FALSE;
    }
  return TRUE;
}

/* A session whose boundary is still being looked at: its terminal flows
 * already (the look is in a thread, test switch
 * PADDOCK_TEST_BOUNDARY_LOOK_HOLD), and a sandbox that ends meanwhile is
 * a session that ran and exited, not one that could not start. */
static void
test_terminal_while_boundary_looked_at (void)
{
  g_autoptr(PaddockTestDaemon) daemon = NULL;
  GDBusConnection *connection;
  g_autofree char *hold = g_build_filename (workspace, "..", "paddock-look-hold-XXXXXX", NULL);
  g_autofree char *hold_path = NULL;
  TerminalCreate created = { NULL, NULL };
  g_autoptr(GString) seen = g_string_new (NULL);
  g_autoptr(GVariant) sessions = NULL;
  g_autofree char *path = NULL;
  g_autofree char *state = NULL;
  gint exit_status = -1;
  int hold_fd;
  int pair[2];

  hold_fd = g_mkstemp (hold);
  g_assert_cmpint (hold_fd, >=, 0);
  close (hold_fd);
  hold_path = g_canonicalize_filename (hold, NULL);
  g_setenv ("PADDOCK_TEST_BOUNDARY_LOOK_HOLD", hold_path, TRUE);
  daemon = paddock_test_daemon_new (NULL);
  g_unsetenv ("PADDOCK_TEST_BOUNDARY_LOOK_HOLD");
  connection = paddock_test_daemon_get_connection (daemon);

  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), ==, 0);
  create_with_terminal (connection, "safe", "echo first-words; exit 3", pair[1], &created);
  close (pair[1]);

  /* The agent's words arrive while the look is held, so before the
   * answer. */
  if (!viewer_sees (pair[0], seen, "first-words"))
    {
      g_unlink (hold_path);
      g_assert_true (paddock_test_wait_for (terminal_create_done, &created, 20 * 1000));
      close (pair[0]);
      if (g_error_matches (created.error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED))
        {
          g_test_skip (created.error->message);
          g_clear_error (&created.error);
          return;
        }
      g_assert_no_error (created.error);
      g_assert_not_reached ();
    }
  close (pair[0]);
  /* Then the sandbox ends (the agent exited) and is reaped: the daemon has
   * no child left but the sandbox's keeper, itself with none (it stays
   * until the daemon has the end, which it told, on disk). The creator is
   * still waiting for the look. */
  g_assert_true (paddock_test_wait_for (daemon_has_only_idle_keepers,
                                        GUINT_TO_POINTER (paddock_test_daemon_pid (connection)), 10 * 1000));
  g_usleep (100 * 1000);
  g_main_context_iteration (NULL, FALSE);
  g_assert_false (terminal_create_done (&created));

  g_assert_cmpint (g_unlink (hold_path), ==, 0);
  g_assert_true (paddock_test_wait_for (terminal_create_done, &created, 20 * 1000));
  g_assert_no_error (created.error);
  path = g_steal_pointer (&created.path);

  wait_for_state (connection, path, "exited");
  sessions = list_sessions (connection);
  state = listed_state (sessions, path, &exit_status);
  g_assert_cmpstr (state, ==, "exited");
  g_assert_cmpint (exit_status, ==, 3);
}

/* What "terminal" must be, and that a refused one creates nothing and
 * leaves no descriptor behind in the daemon. */
static void
test_terminal_at_create_bad_input (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GVariant) sessions = NULL;
  int pipe_fds[2];
  int datagrams[2];
  int listening;
  int unconnected;
  int tcp_listening;
  int tcp;
  guint fds_before;
  struct {
    const char *what;
    int         fd;
  } bad[6];

  g_assert_cmpint (pipe2 (pipe_fds, O_CLOEXEC), ==, 0);
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, datagrams), ==, 0);
  listening = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (listening, >=, 0);
  {
    /* An abstract name the kernel picks (autobind), so that it can listen. */
    struct sockaddr_un any = { .sun_family = AF_UNIX };

    g_assert_cmpint (bind (listening, (struct sockaddr *) &any, sizeof (sa_family_t)), ==, 0);
  }
  g_assert_cmpint (listen (listening, 1), ==, 0);
  unconnected = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (unconnected, >=, 0);
  /* A connected stream socket, but not a local one. */
  tcp_listening = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  tcp = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (tcp_listening, >=, 0);
  g_assert_cmpint (tcp, >=, 0);
  {
    struct sockaddr_in loopback = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    socklen_t length = sizeof loopback;

    g_assert_cmpint (bind (tcp_listening, (struct sockaddr *) &loopback, sizeof loopback), ==, 0);
    g_assert_cmpint (listen (tcp_listening, 1), ==, 0);
    g_assert_cmpint (getsockname (tcp_listening, (struct sockaddr *) &loopback, &length), ==, 0);
    g_assert_cmpint (connect (tcp, (struct sockaddr *) &loopback, sizeof loopback), ==, 0);
  }
  bad[0].what = "a handle with no descriptor";
  bad[0].fd = -1;
  bad[1].what = "a pipe";
  bad[1].fd = pipe_fds[1];
  bad[2].what = "a datagram socket";
  bad[2].fd = datagrams[0];
  bad[3].what = "a listening socket";
  bad[3].fd = listening;
  bad[4].what = "a stream socket connected to nothing";
  bad[4].fd = unconnected;
  bad[5].what = "a TCP connection";
  bad[5].fd = tcp;

  /* Counted after a round trip, as below: the daemon has handled every
   * call before it. */
  sessions = list_sessions (connection);
  g_clear_pointer (&sessions, g_variant_unref);
  fds_before = paddock_test_daemon_fd_count (connection);
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      TerminalCreate created = { NULL, NULL };

      g_test_message ("%s", bad[i].what);
      create_with_terminal (connection, "host", "echo never", bad[i].fd, &created);
      g_assert_true (paddock_test_wait_for (terminal_create_done, &created, 20 * 1000));
      g_assert_error (created.error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
      g_clear_error (&created.error);
    }
  /* ListSessions is answered after the last refused call's message (and
   * the descriptor it carried) was let go of: the main loop dispatches one
   * call at a time. */
  sessions = list_sessions (connection);
  g_assert_cmpuint (g_variant_n_children (sessions), ==, 0);
  /* Each refused descriptor was closed again. */
  g_assert_cmpuint (paddock_test_daemon_fd_count (connection), ==, fds_before);

  close (pipe_fds[0]);
  close (pipe_fds[1]);
  close (datagrams[0]);
  close (datagrams[1]);
  close (listening);
  close (unconnected);
  close (tcp);
  close (tcp_listening);
}

/* A good "terminal" with a session that does not start: the daemon lets
 * go of it, so that the creator's end reads end-of-stream rather than
 * wait on a socket nobody will write to. Refused before the session is
 * made (an invalid option), failed as it is made (the host profile's
 * missing program), and refused after the viewer was attached: strict,
 * in a daemon whose sandbox leaves seccomp out (PADDOCK_TEST_WITHOUT_LAYERS),
 * is refused once its boundary was looked at. */
static void
test_terminal_at_create_closed_when_not_started (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  g_autoptr(PaddockTestDaemon) lacking = NULL;
  const char *missing[] = { "no-such-program-here", NULL };
  const char *echo[] = { "echo", "never", NULL };
  const char *sleeping[] = { "sleep", "300", NULL };
  struct {
    const char        *what;
    GDBusConnection   *connection;
    const char        *profile;
    const char *const *argv;
  } cases[] = {
    { "an unknown profile", NULL, "nonsense", echo },
    { "the host profile, a missing program", NULL, "host", missing },
    { "strict, refused after the look at its boundary", NULL, "strict", sleeping },
  };

  g_setenv ("PADDOCK_TEST_WITHOUT_LAYERS", "seccomp", TRUE);
  lacking = paddock_test_daemon_new (NULL);
  g_unsetenv ("PADDOCK_TEST_WITHOUT_LAYERS");
  cases[0].connection = paddock_test_daemon_get_connection (daemon);
  cases[1].connection = paddock_test_daemon_get_connection (daemon);
  cases[2].connection = paddock_test_daemon_get_connection (lacking);

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GVariant) sessions = NULL;
      TerminalCreate created = { NULL, NULL };
      int pair[2];

      g_test_message ("%s", cases[i].what);
      g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), ==, 0);
      create_with_terminal_argv (cases[i].connection, cases[i].profile, cases[i].argv, pair[1], &created);
      close (pair[1]);
      g_assert_true (paddock_test_wait_for (terminal_create_done, &created, 20 * 1000));
      g_assert_null (created.path);
      g_assert_nonnull (created.error);
      g_test_message ("…refused: %s", created.error->message);
      g_clear_error (&created.error);
      g_assert_true (reads_to_the_end (pair[0]));
      close (pair[0]);
      sessions = list_sessions (cases[i].connection);
      g_assert_cmpuint (g_variant_n_children (sessions), ==, 0);
    }
}

typedef struct
{
  char    *state;
  gint     exit_status;
  GString *out;
  GString *err;
} ExecResult;

static void
exec_result_clear (ExecResult *result)
{
  g_clear_pointer (&result->state, g_free);
  if (result->out != NULL)
    g_string_free (result->out, TRUE);
  if (result->err != NULL)
    g_string_free (result->err, TRUE);
  result->out = result->err = NULL;
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ExecResult, exec_result_clear)

static char *
command_exec (GDBusConnection  *connection,
              const char       *session_path,
              const char       *script,
              guint             timeout_ms,
              gboolean          tty,
              GError          **error)
{
  const char *argv[] = { "sh", "-c", script, NULL };

  return paddock_test_exec (connection, session_path, argv, "", timeout_ms, tty, error);
}

static char *
command_property_string (GDBusConnection *connection,
                         const char      *path,
                         const char      *name)
{
  g_autoptr(PaddockIpcCommand1) command = paddock_test_command (connection, path);
  g_autoptr(GVariant) value = paddock_test_read_property (G_DBUS_PROXY (command), name, NULL);

  if (value == NULL)
    return NULL;
  return g_variant_print (value, FALSE);
}

static GString *
command_read (GDBusConnection *connection,
              const char      *path,
              const char      *stream)
{
  g_autoptr(PaddockIpcCommand1) command = paddock_test_command (connection, path);
  g_autoptr(GVariant) data = NULL;
  g_autoptr(GError) error = NULL;
  guint64 first = 0;
  guint64 next = 0;
  gsize length = 0;
  const char *bytes;

  paddock_ipc_command1_call_read_output_sync (command, stream, 0, 1024 * 1024, &data, &first, &next, NULL, &error);
  g_assert_no_error (error);
  bytes = g_variant_get_fixed_array (data, &length, 1);
  return g_string_new_len (bytes, (gssize) length);
}

/* Waits for the command to end and collects what a caller would. */
static void
command_wait (GDBusConnection *connection,
              const char      *path,
              ExecResult      *result)
{
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  g_autofree char *status = NULL;

  for (;;)
    {
      g_autofree char *state = command_property_string (connection, path, "State");

      if (state != NULL && g_strcmp0 (state, "'running'") != 0 && g_strcmp0 (state, "'starting'") != 0)
        {
          result->state = g_strndup (state + 1, strlen (state) - 2);
          break;
        }
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (10 * 1000);
    }

  status = command_property_string (connection, path, "ExitStatus");
  result->exit_status = atoi (status);
  result->out = command_read (connection, path, "stdout");
  result->err = command_read (connection, path, "stderr");
}

static void
test_exec_streams_status_stdin_tty (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autofree char *command = NULL;
  g_autoptr(GVariant) reply = NULL;

  session = create_session (connection, "exec sleep 300", NULL, &error);
  g_assert_no_error (error);

  /* stdout and stderr apart, and the exit status */
  command = command_exec (connection, session, "echo to-out; echo to-err >&2; exit 3", 0, FALSE, &error);
  g_assert_no_error (error);
  {
    g_auto(ExecResult) result = { 0, };

    command_wait (connection, command, &result);
    g_assert_cmpstr (result.state, ==, "exited");
    g_assert_cmpint (result.exit_status, ==, 3);
    g_assert_cmpstr (result.out->str, ==, "to-out\n");
    g_assert_cmpstr (result.err->str, ==, "to-err\n");
  }
  {
    g_autoptr(PaddockIpcCommand1) proxy = paddock_test_command (connection, command);

    paddock_ipc_command1_call_release_sync (proxy, NULL, &error);
    g_assert_no_error (error);
  }
  g_clear_pointer (&command, g_free);

  /* standard input */
  command = command_exec (connection, session, "tr a-z A-Z", 0, FALSE, &error);
  g_assert_no_error (error);
  {
    g_autoptr(PaddockIpcCommand1) proxy = paddock_test_command (connection, command);

    paddock_ipc_command1_call_write_stdin_sync (proxy, g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, "shout\n", 6, 1),
                                                TRUE, NULL, &error);
    g_assert_no_error (error);
  }
  {
    g_auto(ExecResult) result = { 0, };

    command_wait (connection, command, &result);
    g_assert_cmpint (result.exit_status, ==, 0);
    g_assert_cmpstr (result.out->str, ==, "SHOUT\n");
  }
  g_clear_pointer (&command, g_free);

  /* on a terminal of its own: one stream */
  command = command_exec (connection, session, "tty; stty size", 0, TRUE, &error);
  g_assert_no_error (error);
  {
    g_auto(ExecResult) result = { 0, };

    command_wait (connection, command, &result);
    g_assert_cmpint (result.exit_status, ==, 0);
    g_assert_true (g_str_has_prefix (result.out->str, "/dev/pts/"));
    g_assert_nonnull (strstr (result.out->str, "24 80"));
    g_assert_cmpstr (result.err->str, ==, "");
  }
}

static void
test_exec_timeout_and_vanishing_caller_kill_trees (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GDBusConnection) leaver = paddock_test_daemon_new_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autofree char *command = NULL;
  g_autofree char *marker = g_build_filename (workspace, "marker-exec", NULL);
  g_autofree char *script = NULL;

  g_assert_no_errno (symlink ("/bin/sleep", marker));
  /* Forked, double-forked, and setsid()ed out of the command's process
   * session: its keeper holds them all. */
  script = g_strdup_printf ("%s 300 & %s 300 & (%s 300 &); (setsid %s 300 &); %s 300",
                            marker, marker, marker, marker, marker);

  session = create_session (connection, "exec sleep 300", NULL, &error);
  g_assert_no_error (error);

  /* A timeout kills the command and everything it started. */
  command = command_exec (connection, session, script, 500, FALSE, &error);
  g_assert_no_error (error);
  paddock_test_wait_for_marked (marker, 5);
  {
    g_auto(ExecResult) result = { 0, };

    command_wait (connection, command, &result);
    g_assert_cmpstr (result.state, ==, "timed-out");
  }
  paddock_test_wait_for_marked (marker, 0);
  g_clear_pointer (&command, g_free);

  /* A caller that leaves the bus takes its commands with it. */
  command = command_exec (leaver, session, script, 0, FALSE, &error);
  g_assert_no_error (error);
  paddock_test_wait_for_marked (marker, 5);
  g_dbus_connection_close_sync (leaver, NULL, NULL);
  paddock_test_wait_for_marked (marker, 0);

  /* The session itself is untouched. */
  {
    g_autofree char *state = get_state (connection, session);
    g_assert_cmpstr (state, ==, "running");
  }
  unlink (marker);
}

/* Inside the sandbox the command's supervisor is a subreaper: a timeout
 * kills its whole tree, setsid()ed and double-forked descendants too. */
static void
test_safe_exec_timeout_kills_tree (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autofree char *command = NULL;
  g_autofree char *marker = g_build_filename (workspace, "marker-safe-exec", NULL);
  g_autofree char *script = NULL;

  profile = "safe";
  session = create_session (connection, "exec sleep 300", NULL, &error);
  profile = "host";
  if (g_error_matches (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED))
    {
      g_test_skip (error->message);
      return;
    }
  g_assert_no_error (error);

  g_assert_no_errno (symlink ("/bin/sleep", marker));
  script = g_strdup_printf ("setsid %s 300 & (%s 300 &); echo started; exec %s 300", marker, marker, marker);
  command = command_exec (connection, session, script, 700, FALSE, &error);
  g_assert_no_error (error);

  paddock_test_wait_for_marked (marker, 3);
  {
    g_auto(ExecResult) result = { 0, };

    command_wait (connection, command, &result);
    g_assert_cmpstr (result.state, ==, "timed-out");
    g_assert_cmpstr (result.out->str, ==, "started\n");
  }
  paddock_test_wait_for_marked (marker, 0);

  /* The agent is untouched. */
  {
    g_autofree char *state = get_state (connection, session);
    g_assert_cmpstr (state, ==, "running");
  }
  unlink (marker);
}

static void
test_exec_bad_input (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autoptr(GVariant) reply = NULL;
  /* NULL after each refused Exec: nothing to free. */
  g_autofree char *refused = NULL;
  const char *empty[] = { NULL };
  const char *argv[] = { "true", NULL };
  const char *missing[] = { "no-such-program-here", NULL };

  session = create_session (connection, "exec sleep 300", NULL, &error);
  g_assert_no_error (error);

  refused = paddock_test_exec (connection, session, empty, "", 0, FALSE, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  refused = paddock_test_exec (connection, session, argv, "relative/dir", 0, FALSE, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  refused = paddock_test_exec (connection, session, argv, "", G_MAXUINT32, FALSE, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  refused = paddock_test_exec (connection, session, missing, "", 0, FALSE, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* 16 at once per client, then QuotaExceeded */
  for (guint i = 0; i < 16; i++)
    {
      g_autofree char *command = command_exec (connection, session, "exec sleep 300", 0, FALSE, &error);
      g_assert_no_error (error);
    }
  {
    g_autofree char *command = command_exec (connection, session, "exec sleep 300", 0, FALSE, &error);
    g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_QUOTA_EXCEEDED);
    g_clear_error (&error);
  }

  /* Destroy takes every command with the session. */
  {
    g_autoptr(GVariant) result = stop (connection, session, 0, TRUE, &error);
    guint32 survivors = 1;

    g_assert_no_error (error);
    g_assert_true (g_variant_lookup (result, "survivors", "u", &survivors));
    g_assert_cmpuint (survivors, ==, 0);
  }
}

/* Even the host profile loses nothing on Destroy: a process that
 * setsid()s stays in the session's cgroup where the daemon can make one
 * (root here, or a delegated systemd unit), and below the session's
 * keeper anyway (unprivileged here: no cgroup). */
static void
test_host_cgroup_catches_escapees (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *marker = g_build_filename (workspace, "marker-cgroup", NULL);
  g_autofree char *script = NULL;
  g_autoptr(GVariant) sessions = NULL;
  g_autoptr(GVariant) result = NULL;
  g_autofree char *cgroup = NULL;
  g_autofree char *reason = NULL;

  g_assert_no_errno (symlink ("/bin/sleep", marker));
  script = g_strdup_printf ("setsid %s 300 & (setsid %s 300 &); echo up; exec %s 300", marker, marker, marker);
  path = create_session (connection, script, NULL, &error);
  g_assert_no_error (error);

  sessions = list_sessions (connection);
  for (gsize i = 0; i < g_variant_n_children (sessions); i++)
    {
      g_autoptr(GVariant) session = g_variant_get_child_value (sessions, i);

      g_variant_lookup (session, "cgroup", "s", &cgroup);
      g_variant_lookup (session, "cgroup-unavailable", "s", &reason);
    }
  /* Either a cgroup, or the reason there is none: never silence. */
  g_assert_true ((cgroup != NULL && cgroup[0] != '\0') || (reason != NULL && reason[0] != '\0'));

  paddock_test_wait_for_marked (marker, 3);

  /* A command run with Exec is the session's as well: its own escapee too. */
  {
    g_autofree char *exec_script = g_strdup_printf ("setsid %s 300 & echo started", marker);
    g_autofree char *command = command_exec (connection, path, exec_script, 0, FALSE, &error);

    g_assert_no_error (error);
    g_assert_nonnull (command);
    paddock_test_wait_for_marked (marker, 4);
  }

  result = stop (connection, path, 0, TRUE, &error);
  g_assert_no_error (error);

  /* Without a cgroup the session's keepers (child subreapers) held them:
   * gone all the same. */
  g_assert_cmpuint (paddock_test_count_marked (marker), ==, 0);
  if (cgroup != NULL && cgroup[0] != '\0')
    g_assert_false (g_file_test (cgroup, G_FILE_TEST_EXISTS));
  unlink (marker);
}

/* The pids Session1.ListProcesses gives (a new array). */
static GArray *
list_process_pids (GDBusConnection *connection,
                   const char      *path)
{
  g_autoptr(PaddockIpcSession1) session = paddock_test_session (connection, path);
  g_autoptr(GVariant) rows = NULL;
  g_autoptr(GError) error = NULL;
  GArray *pids = g_array_new (FALSE, FALSE, sizeof (guint32));
  GVariantIter iter;
  guint32 pid;

  paddock_ipc_session1_call_list_processes_sync (session, &rows, NULL, &error);
  g_assert_no_error (error);
  g_variant_iter_init (&iter, rows);
  while (g_variant_iter_next (&iter, "(uu&s&s&s)", &pid, NULL, NULL, NULL, NULL))
    g_array_append_val (pids, pid);
  return pids;
}

static gboolean
pids_contain (GArray  *pids,
              guint32  pid)
{
  for (guint i = 0; i < pids->len; i++)
    if (g_array_index (pids, guint32, i) == pid)
      return TRUE;
  return FALSE;
}

static guint32
get_process_count (GDBusConnection *connection,
                   const char      *path)
{
  g_autoptr(GVariant) value = paddock_test_session_property (connection, path, "ProcessCount");

  return g_variant_get_uint32 (value);
}

static gboolean
port_is_free (guint16 port)
{
  struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons (port),
                                 .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  gboolean bound;

  g_assert_cmpint (fd, >=, 0);
  bound = bind (fd, (struct sockaddr *) &address, sizeof address) == 0;
  close (fd);
  return bound;
}

/* The seeds' orphan (an `opencode serve`), in every profile: a host
 * session's agent starts a server that leaves both its process session
 * and its parent (setsid and a double fork), ignores SIGTERM and SIGHUP
 * and listens on a port, and a setsid()ed sleep. With a cgroup (root) or
 * without one (unprivileged: the session's keeper, a child subreaper,
 * holds them), the session lists and counts them while they run, and
 * Destroy ends them: from outside, by pid and by the port, none is left,
 * as Destroy's "survivors" says. */
static void
test_host_destroy_ends_escaped_servers (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *marker = g_build_filename (workspace, "marker-escaped", NULL);
  g_autofree char *dir = g_build_filename (workspace, "escaped", NULL);
  g_autofree char *server = g_build_filename (dir, "server.py", NULL);
  g_autofree char *server_info = g_build_filename (dir, "server.info", NULL);
  g_autofree char *sleep_file = g_build_filename (dir, "sleep.pid", NULL);
  g_autofree char *script = NULL;
  g_autofree char *path = NULL;
  g_autofree char *info = NULL;
  g_autofree char *sleep_line = NULL;
  g_autoptr(GVariant) result = NULL;
  g_autoptr(GArray) listed = NULL;
  const char *python = "/usr/bin/python3";
  guint32 survivors = G_MAXUINT32;
  pid_t server_pid = 0;
  pid_t sleep_pid = 0;
  guint port = 0;
  gint64 deadline;

  if (!g_file_test (python, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("no /usr/bin/python3 for the listening server");
      return;
    }
  g_assert_no_errno (g_mkdir (dir, 0700));
  g_assert_true (g_file_set_contents (server,
                                      "import os, signal, socket, sys\n"
                                      "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                      "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
                                      "os.setsid()\n"
                                      "s = socket.socket()\n"
                                      "s.bind(('127.0.0.1', 0))\n"
                                      "s.listen(8)\n"
                                      "with open(sys.argv[1], 'w') as f:\n"
                                      "    f.write('%d %d\\n' % (os.getpid(), s.getsockname()[1]))\n"
                                      "while True:\n"
                                      "    s.accept()[0].close()\n", -1, NULL));
  g_assert_no_errno (symlink ("/bin/sleep", marker));
  script = g_strdup_printf ("trap '' HUP; "
                            "sh -c 'echo $$ > %s; exec setsid %s 300' </dev/null >/dev/null 2>&1 & "
                            "(%s %s %s </dev/null >/dev/null 2>&1 &); "
                            "echo up; exec %s 300",
                            sleep_file, marker, python, server, server_info, marker);
  path = create_session (connection, script, NULL, &error);
  g_assert_no_error (error);

  info = wait_for_line (server_info);
  g_assert_cmpint (sscanf (info, "%d %u", &server_pid, &port), ==, 2);
  sleep_line = wait_for_line (sleep_file);
  sleep_pid = atoi (sleep_line);
  g_assert_cmpint (server_pid, >, 1);
  g_assert_cmpint (sleep_pid, >, 1);
  g_assert_cmpuint (port, >, 0);
  paddock_test_wait_for_marked (marker, 2);
  /* Both left the agent's process session: setsid(). */
  g_assert_cmpint (getsid (server_pid), ==, server_pid);
  g_assert_cmpint (getsid (sleep_pid), ==, sleep_pid);
  g_assert_false (port_is_free ((guint16) port));

  /* Counted as they are: the agent, the sleep and the server; listed by
   * the same measure. */
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (get_process_count (connection, path) != 3)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (50 * 1000);
    }
  listed = list_process_pids (connection, path);
  g_assert_cmpuint (listed->len, ==, 3);
  g_assert_true (pids_contain (listed, (guint32) server_pid));
  g_assert_true (pids_contain (listed, (guint32) sleep_pid));

  result = stop (connection, path, 0, TRUE, &error);
  g_assert_no_error (error);
  g_assert_true (g_variant_lookup (result, "survivors", "u", &survivors));
  g_assert_cmpuint (survivors, ==, 0);

  /* What Destroy said, as seen from outside, at once. */
  g_assert_true (process_gone (server_pid));
  g_assert_true (process_gone (sleep_pid));
  g_assert_true (port_is_free ((guint16) port));
  g_assert_cmpuint (paddock_test_count_marked (marker), ==, 0);

  unlink (marker);
  unlink (server);
  unlink (server_info);
  unlink (sleep_file);
  g_rmdir (dir);
}

/* The same for a command: what a Run leaves behind by setsid() and a
 * double fork is the session's (its keeper holds it), counted and listed,
 * and ended with the session by Stop. */
static void
test_host_run_leaves_nothing_behind (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *marker = g_build_filename (workspace, "marker-run-escaped", NULL);
  g_autofree char *pid_file = g_build_filename (workspace, "run-escaped.pid", NULL);
  g_autofree char *script = NULL;
  g_autofree char *path = NULL;
  g_autofree char *line = NULL;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) result = NULL;
  g_autoptr(GArray) listed = NULL;
  guint32 survivors = G_MAXUINT32;
  gint exit_status = -1;
  pid_t escaped;

  g_assert_no_errno (symlink ("/bin/sleep", marker));
  path = create_session (connection, "echo up; exec sleep 300", NULL, &error);
  g_assert_no_error (error);

  script = g_strdup_printf ("(sh -c 'echo $$ > %s; trap \"\" TERM HUP; exec setsid %s 300' "
                            "</dev/null >/dev/null 2>&1 &); echo done", pid_file, marker);
  {
    const char *argv[] = { "sh", "-c", script, NULL };

    g_clear_pointer (&result, g_variant_unref);
    result = paddock_test_run (connection, path, argv, "", 0, NULL, &error);
    g_assert_no_error (error);
    g_assert_true (g_variant_lookup (result, "exit-status", "i", &exit_status));
    g_assert_cmpint (exit_status, ==, 0);
  }
  line = wait_for_line (pid_file);
  escaped = atoi (line);
  g_assert_cmpint (escaped, >, 1);
  paddock_test_wait_for_marked (marker, 1);
  g_assert_cmpint (getsid (escaped), ==, escaped);

  /* The command is over; what it left is still the session's. */
  listed = list_process_pids (connection, path);
  g_assert_true (pids_contain (listed, (guint32) escaped));

  g_clear_pointer (&result, g_variant_unref);
  result = stop (connection, path, 0, FALSE, &error);
  g_assert_no_error (error);
  g_assert_true (g_variant_lookup (result, "survivors", "u", &survivors));
  g_assert_cmpuint (survivors, ==, 0);
  g_assert_true (process_gone (escaped));
  g_assert_cmpuint (paddock_test_count_marked (marker), ==, 0);

  g_clear_pointer (&result, g_variant_unref);
  result = stop (connection, path, 0, TRUE, &error);
  g_assert_no_error (error);
  unlink (marker);
  unlink (pid_file);
}

/* A client runs at most 16 sessions at once; an ended one frees its place. */
static void
test_session_quota (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  g_autofree char *refused = NULL;
  g_autofree char *accepted = NULL;
  g_autoptr(GVariant) result = NULL;

  for (guint i = 0; i < 16; i++)
    {
      char *path = create_session (connection, "exec sleep 300", NULL, &error);

      g_assert_no_error (error);
      g_ptr_array_add (paths, path);
    }

  refused = create_session (connection, "exec sleep 300", NULL, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_QUOTA_EXCEEDED);
  g_assert_null (refused);
  g_clear_error (&error);

  result = stop (connection, g_ptr_array_index (paths, 0), 0, FALSE, &error);
  g_assert_no_error (error);
  accepted = create_session (connection, "exec sleep 300", NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (accepted);
}

/* Strict runs when every requested layer is observed enforced, and
 * refuses — killing what it started — when one is missing (left out here
 * by the daemon's test switch). */
static void
test_strict_refuses (void)
{
  g_autoptr(PaddockTestDaemon) daemon = NULL;
  g_autoptr(PaddockTestDaemon) lacking = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *refused = NULL;
  g_autoptr(GVariant) sessions = NULL;

  if (!paddock_test_have_sandbox ())
    {
      g_test_skip ("paddock-sandbox is not built (a portable build): no strict session to refuse");
      return;
    }
  daemon = paddock_test_daemon_new (NULL);
  profile = "strict";
  path = create_session (paddock_test_daemon_get_connection (daemon), "exec sleep 300", NULL, &error);
  profile = "host";
  if (g_error_matches (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED) &&
      strstr (error->message, "landlock") != NULL)
    {
      /* A kernel without Landlock: strict must refuse, as it did. */
      g_test_message ("strict refused on this kernel: %s", error->message);
      g_clear_error (&error);
    }
  else
    {
      g_assert_no_error (error);
      g_assert_nonnull (path);
    }

  g_setenv ("PADDOCK_TEST_WITHOUT_LAYERS", "seccomp", TRUE);
  lacking = paddock_test_daemon_new (NULL);
  g_unsetenv ("PADDOCK_TEST_WITHOUT_LAYERS");
  profile = "strict";
  refused = create_session (paddock_test_daemon_get_connection (lacking), "exec sleep 300", NULL, &error);
  profile = "host";
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED);
  g_assert_nonnull (strstr (error->message, "seccomp"));
  g_assert_null (refused);
  sessions = list_sessions (paddock_test_daemon_get_connection (lacking));
  g_assert_cmpuint (g_variant_n_children (sessions), ==, 0);

  /* Landlock in place but its filesystem rules wide open: only the
   * landlock-fs canary (a write into the view's /dev) shows it, and strict
   * must refuse on that alone. */
  g_clear_error (&error);
  if (path != NULL)
    {
      g_autoptr(PaddockTestDaemon) open_fs = NULL;
      g_autofree char *refused_fs = NULL;

      g_setenv ("PADDOCK_TEST_WITHOUT_LAYERS", "landlock-fs", TRUE);
      open_fs = paddock_test_daemon_new (NULL);
      g_unsetenv ("PADDOCK_TEST_WITHOUT_LAYERS");
      profile = "strict";
      refused_fs = create_session (paddock_test_daemon_get_connection (open_fs), "exec sleep 300", NULL, &error);
      profile = "host";
      g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED);
      g_assert_nonnull (strstr (error->message, "landlock-fs (unenforced)"));
      g_assert_null (refused_fs);
      g_clear_error (&error);
    }

  /* Landlock's bind rules letting any free port through: only the
   * landlock-net canary (a bind to a port the session did not lease)
   * shows it, and strict must refuse on that alone. */
  if (path != NULL)
    {
      g_autoptr(PaddockTestDaemon) open_net = NULL;
      g_autofree char *refused_net = NULL;

      g_setenv ("PADDOCK_TEST_WITHOUT_LAYERS", "landlock-net", TRUE);
      open_net = paddock_test_daemon_new (NULL);
      g_unsetenv ("PADDOCK_TEST_WITHOUT_LAYERS");
      profile = "strict";
      refused_net = create_session (paddock_test_daemon_get_connection (open_net), "exec sleep 300", NULL, &error);
      profile = "host";
      g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED);
      g_assert_nonnull (strstr (error->message, "landlock-net (unenforced)"));
      g_assert_null (refused_net);
      g_clear_error (&error);
    }
}

/* What a bench bails through (the helper library's bail mode): one that
 * fails after making a session destroys it (nothing left running, nothing
 * listed), runs its own cleanup after that, and exits 1 saying why. The
 * bench is played by a subprocess of this test, on the same bus. */
static void
bail_cleanup (gpointer data)
{
  GDBusConnection *connection = data;
  g_autoptr(GVariant) sessions = paddock_test_list_sessions (connection);

  g_print ("cleanup ran with %" G_GSIZE_FORMAT " sessions left\n", g_variant_n_children (sessions));
  g_rmdir (workspace);
}

static void
test_bail_destroys_what_was_made (void)
{
  g_autoptr(PaddockTestDaemon) daemon = NULL;
  g_autofree char *marker = NULL;
  g_autoptr(GVariant) sessions = NULL;

  if (g_test_subprocess ())
    {
      const char *argv[] = { g_getenv ("PADDOCK_TEST_BAIL_MARKER"), "300", NULL };
      g_autoptr(GError) error = NULL;
      g_autoptr(GDBusConnection) connection =
        g_dbus_connection_new_for_address_sync (g_getenv ("PADDOCK_TEST_BAIL_ADDRESS"),
                                                G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                                G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                                                NULL, NULL, &error);
      g_autofree char *path = NULL;

      g_assert_no_error (error);
      paddock_test_set_fail_mode (PADDOCK_TEST_FAIL_BAIL, "a-bench");
      paddock_test_on_bail (bail_cleanup, connection);
      path = paddock_test_create_session_or_fail (connection, workspace, "host", argv, NULL);
      paddock_test_wait_for_marked (argv[0], 1);
      paddock_test_bail ("failing on purpose with %s made", path);
    }

  daemon = paddock_test_daemon_new (NULL);
  marker = g_build_filename (workspace, "marker-bail", NULL);
  g_assert_no_errno (symlink ("/bin/sleep", marker));
  g_setenv ("PADDOCK_TEST_BAIL_ADDRESS", paddock_test_daemon_get_address (daemon), TRUE);
  g_setenv ("PADDOCK_TEST_BAIL_MARKER", marker, TRUE);
  g_test_trap_subprocess (NULL, 60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_unsetenv ("PADDOCK_TEST_BAIL_ADDRESS");
  g_unsetenv ("PADDOCK_TEST_BAIL_MARKER");

  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*a-bench: failing on purpose with /org/paddock/*made*");
  g_test_trap_assert_stdout ("*cleanup ran with 0 sessions left*");
  sessions = list_sessions (paddock_test_daemon_get_connection (daemon));
  g_assert_cmpuint (g_variant_n_children (sessions), ==, 0);
  g_assert_cmpuint (paddock_test_count_marked (marker), ==, 0);
  unlink (marker);
}

int
main (int   argc,
      char *argv[])
{
  int status;

  g_test_init (&argc, &argv, NULL);
  (void) paddock_error_quark ();
  signal (SIGPIPE, SIG_IGN);

  workspace = g_dir_make_tmp ("paddock-workspace-XXXXXX", NULL);

  g_test_add_func ("/sessions/output-environment-and-size", test_output_environment_and_size);
  g_test_add_func ("/sessions/input-and-resize", test_input_and_resize);
  g_test_add_func ("/sessions/stop-waits-for-every-process", test_stop_waits_for_every_process);
  g_test_add_func ("/sessions/outlive-their-clients", test_sessions_outlive_their_clients);
  g_test_add_func ("/sessions/destroy-releases-leases-and-files", test_destroy_releases_leases_and_files);
  g_test_add_func ("/sessions/stop-and-destroy-at-once", test_stop_and_destroy_at_once);
  g_test_add_func ("/sessions/bad-input", test_bad_input);
  g_test_add_func ("/sessions/safe/view-and-environment", test_safe_view_and_environment);
  g_test_add_func ("/sessions/safe/teardown-of-200", test_safe_teardown_of_200);
  g_test_add_func ("/sessions/strict-refuses", test_strict_refuses);
  g_test_add_func ("/sessions/attach-replays-and-relays", test_attach_replays_and_relays);
  g_test_add_func ("/sessions/terminal-at-create", test_terminal_at_create);
  g_test_add_func ("/sessions/terminal-at-create/bad-input", test_terminal_at_create_bad_input);
  g_test_add_func ("/sessions/terminal-at-create/closed-when-not-started",
                   test_terminal_at_create_closed_when_not_started);
  g_test_add_func ("/sessions/terminal-at-create/keeps-callers-flags",
                   test_terminal_at_create_keeps_callers_flags);
  g_test_add_func ("/sessions/safe/terminal-while-boundary-looked-at", test_terminal_while_boundary_looked_at);
  g_test_add_func ("/sessions/exec/streams-status-stdin-tty", test_exec_streams_status_stdin_tty);
  g_test_add_func ("/sessions/exec/timeout-and-vanishing-caller-kill-trees", test_exec_timeout_and_vanishing_caller_kill_trees);
  g_test_add_func ("/sessions/exec/bad-input", test_exec_bad_input);
  g_test_add_func ("/sessions/exec/safe-timeout-kills-tree", test_safe_exec_timeout_kills_tree);
  g_test_add_func ("/sessions/host-cgroup-catches-escapees", test_host_cgroup_catches_escapees);
  g_test_add_func ("/sessions/host-destroy-ends-escaped-servers", test_host_destroy_ends_escaped_servers);
  g_test_add_func ("/sessions/host-run-leaves-nothing-behind", test_host_run_leaves_nothing_behind);
  g_test_add_func ("/sessions/quota", test_session_quota);
  g_test_add_func ("/sessions/restart-lists-and-cleans-up", test_restart_lists_and_cleans_up);
  g_test_add_func ("/sessions/restart-ends-leftovers-at-once", test_restart_ends_leftovers_at_once);
  g_test_add_func ("/sessions/restart-leftovers-that-survive", test_restart_leftovers_that_survive);
  g_test_add_func ("/sessions/restart-sweep-of-leftovers", test_restart_sweep_of_leftovers);
  g_test_add_func ("/sessions/restart-sweep-finds-late-children", test_restart_sweep_finds_late_children);
  g_test_add_func ("/sessions/restart-ends-what-the-keeper-held", test_restart_ends_what_the_keeper_held);
  g_test_add_func ("/sessions/restart-leftovers-hold-the-stage", test_restart_leftovers_hold_the_stage);
  g_test_add_func ("/sessions/end-published-once-durable", test_end_published_once_durable);
  g_test_add_func ("/sessions/end-interrupted-before-durable", test_end_interrupted_before_durable);
  g_test_add_func ("/sessions/bail-destroys-what-was-made", test_bail_destroys_what_was_made);

  status = g_test_run ();
  /* Left empty by every test; a run must not leave it behind. */
  g_rmdir (workspace);
  g_free (workspace);
  return status;
}
