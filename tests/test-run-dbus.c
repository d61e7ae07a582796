/* test-run-dbus.c — Session1.Run against the real daemon, host and safe profile
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "paddock-error.h"
#include "paddock-test-daemon.h"
#include "paddock-test-session.h"

static char *workspace;

/* Creates a session of @profile running `sh -c SCRIPT`; returns its path,
 * or NULL with the test skipped where the profile cannot be enforced. */
static char *
create_session (GDBusConnection *connection,
                const char      *profile,
                const char      *script)
{
  return paddock_test_create_session_or_skip (connection, workspace, profile, script, NULL);
}

static GVariant *
run_parameters (const char *script,
                const char *cwd,
                guint       timeout_ms,
                GVariant   *options)
{
  const char *argv[] = { "sh", "-c", script, NULL };

  if (options == NULL)
    options = g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0);
  return g_variant_new ("(^aay^aya{ss}u@a{sv})", argv, cwd, NULL, timeout_ms, options);
}

/* Session1.Run of `sh -c SCRIPT`; returns its result dictionary. */
static GVariant *
run (GDBusConnection  *connection,
     const char       *session,
     const char       *script,
     guint             timeout_ms,
     GVariant         *options,
     GError          **error)
{
  const char *argv[] = { "sh", "-c", script, NULL };

  return paddock_test_run (connection, session, argv, "", timeout_ms, options, error);
}

static char *
lookup_bytes (GVariant   *result,
              const char *key)
{
  g_autoptr(GVariant) value = g_variant_lookup_value (result, key, G_VARIANT_TYPE_BYTESTRING);
  gsize length = 0;
  const char *data;

  g_assert_nonnull (value);
  data = g_variant_get_fixed_array (value, &length, 1);
  return g_strndup (data, length);
}

static gsize
lookup_size (GVariant   *result,
             const char *key)
{
  g_autoptr(GVariant) value = g_variant_lookup_value (result, key, G_VARIANT_TYPE_BYTESTRING);

  g_assert_nonnull (value);
  return g_variant_get_size (value);
}

static gint32
lookup_int (GVariant   *result,
            const char *key)
{
  gint32 value = G_MININT32;

  g_assert_true (g_variant_lookup (result, key, "i", &value));
  return value;
}

static guint32
lookup_uint (GVariant   *result,
             const char *key)
{
  guint32 value = G_MAXUINT32;

  g_assert_true (g_variant_lookup (result, key, "u", &value));
  return value;
}

static guint64
lookup_uint64 (GVariant   *result,
               const char *key)
{
  guint64 value = G_MAXUINT64;

  g_assert_true (g_variant_lookup (result, key, "t", &value));
  return value;
}

static gboolean
lookup_boolean (GVariant   *result,
                const char *key)
{
  gboolean value = FALSE;

  g_assert_true (g_variant_lookup (result, key, "b", &value));
  return value;
}

static char *
lookup_string (GVariant   *result,
               const char *key)
{
  char *value = NULL;

  g_assert_true (g_variant_lookup (result, key, "s", &value));
  return value;
}

/* The command objects under @session, as the daemon lists them now. */
static GDBusNodeInfo *
introspect_commands (GDBusConnection *connection,
                     const char      *session)
{
  g_autofree char *path = g_strconcat (session, "/command", NULL);
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;
  GDBusNodeInfo *node;
  const char *xml;

  reply = paddock_test_call (connection, path, "org.freedesktop.DBus.Introspectable", "Introspect", NULL,
                             G_VARIANT_TYPE ("(s)"), &error);
  g_assert_no_error (error);
  g_variant_get (reply, "(&s)", &xml);
  node = g_dbus_node_info_new_for_xml (xml, &error);
  g_assert_no_error (error);
  return node;
}

static guint
count_command_objects (GDBusConnection *connection,
                       const char      *session)
{
  g_autoptr(GDBusNodeInfo) node = introspect_commands (connection, session);
  guint count = 0;

  while (node->nodes != NULL && node->nodes[count] != NULL)
    count++;
  return count;
}

/* The path of the one command object under @session, once it is there.
 * A sandboxed command is published when the daemon hears from its
 * supervisor that it runs, which may come a moment after the program is
 * seen running (seen under ASan on a loaded machine), so this waits; the
 * deadline is for a daemon that never publishes, not a measure of speed. */
static char *
only_command_path (GDBusConnection *connection,
                   const char      *session)
{
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

  for (;;)
    {
      g_autoptr(GDBusNodeInfo) node = introspect_commands (connection, session);

      if (node->nodes != NULL && node->nodes[0] != NULL)
        {
          g_assert_null (node->nodes[1]);
          return g_strconcat (session, "/command/", node->nodes[0]->path, NULL);
        }
      if (g_get_monotonic_time () > deadline)
        g_error ("no command object under %s within 30 s", session);
      g_usleep (10 * 1000);
    }
}

/* Run's commands are released once it has answered (from the daemon's
 * main loop, so the last one may take a moment). */
static void
wait_for_no_commands (GDBusConnection *connection,
                      const char      *session)
{
  for (guint i = 0; i < 100 && count_command_objects (connection, session) > 0; i++)
    g_usleep (20 * 1000);
  g_assert_cmpuint (count_command_objects (connection, session), ==, 0);
}

/* The session still serves: the next Run runs and answers as usual (after
 * a command that was stopped, killed or given up on). */
static void
assert_still_serves (GDBusConnection *connection,
                     const char      *session)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) again = run (connection, session, "echo again", 0, NULL, &error);
  g_autofree char *out = NULL;

  g_assert_no_error (error);
  out = lookup_bytes (again, "stdout");
  g_assert_cmpstr (out, ==, "again\n");
  g_assert_cmpint (lookup_int (again, "exit-status"), ==, 0);
  wait_for_no_commands (connection, session);
}

/* ------------------------------------------------------------------------ */

/* What a script checks: output, stderr apart, status, signal, input, and
 * that all output is in, even what a background child writes late. */
static void
check_output_and_status (const char *profile)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;

  session = create_session (connection, profile, "exec sleep 300");
  if (session == NULL)
    return;

  {
    g_autoptr(GVariant) result = run (connection, session, "echo to-out; echo to-err >&2; exit 3", 0, NULL, &error);
    g_autofree char *out = NULL;
    g_autofree char *err = NULL;
    g_autofree char *state = NULL;

    g_assert_no_error (error);
    out = lookup_bytes (result, "stdout");
    err = lookup_bytes (result, "stderr");
    state = lookup_string (result, "state");
    g_assert_cmpstr (out, ==, "to-out\n");
    g_assert_cmpstr (err, ==, "to-err\n");
    g_assert_cmpint (lookup_int (result, "exit-status"), ==, 3);
    g_assert_cmpuint (lookup_uint (result, "signal"), ==, 0);
    g_assert_cmpstr (state, ==, "exited");
    g_assert_false (lookup_boolean (result, "timed-out"));
    g_assert_cmpuint (lookup_uint64 (result, "stdout-length"), ==, 7);
    g_assert_cmpuint (lookup_uint64 (result, "stderr-length"), ==, 7);
    g_assert_cmpuint (lookup_uint64 (result, "elapsed-ms"), <, 60000);
  }

  /* Ended by a signal of its own. */
  {
    g_autoptr(GVariant) result = run (connection, session, "kill -TERM $$", 0, NULL, &error);

    g_assert_no_error (error);
    g_assert_cmpuint (lookup_uint (result, "signal"), ==, SIGTERM);
    g_assert_cmpint (lookup_int (result, "exit-status"), ==, 128 + SIGTERM);
  }

  /* Its input: what "stdin" gives, then EOF; none at all by default. */
  {
    g_auto(GVariantBuilder) options = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
    g_autoptr(GVariant) result = NULL;
    g_autofree char *out = NULL;

    g_variant_builder_add (&options, "{sv}", "stdin",
                           g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, "shout\n", 6, 1));
    result = run (connection, session, "tr a-z A-Z", 0, g_variant_builder_end (&options), &error);
    g_assert_no_error (error);
    out = lookup_bytes (result, "stdout");
    g_assert_cmpstr (out, ==, "SHOUT\n");
  }
  /* More input than a pipe holds, written as the command reads it. */
  {
    g_auto(GVariantBuilder) options = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
    g_autofree guint8 *input = g_malloc0 (300000);
    g_autoptr(GVariant) result = NULL;
    g_autofree char *out = NULL;

    g_variant_builder_add (&options, "{sv}", "stdin",
                           g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, input, 300000, 1));
    result = run (connection, session, "wc -c", 0, g_variant_builder_end (&options), &error);
    g_assert_no_error (error);
    out = lookup_bytes (result, "stdout");
    g_assert_cmpint (atoi (out), ==, 300000);
  }
  {
    g_autoptr(GVariant) result = run (connection, session, "cat; echo read-all", 0, NULL, &error);
    g_autofree char *out = NULL;

    g_assert_no_error (error);
    out = lookup_bytes (result, "stdout");
    g_assert_cmpstr (out, ==, "read-all\n");
  }

  /* All output is in: the command exits at once, its child writes later
   * to the same stdout. */
  {
    g_autoptr(GVariant) result = run (connection, session, "(sleep 0.5; echo late) & echo early", 0, NULL, &error);
    g_autofree char *out = NULL;

    g_assert_no_error (error);
    out = lookup_bytes (result, "stdout");
    g_assert_cmpstr (out, ==, "early\nlate\n");
    g_assert_cmpint (lookup_int (result, "exit-status"), ==, 0);
  }

  /* Their commands are gone. */
  wait_for_no_commands (connection, session);
}

static void
test_host_output_and_status (void)
{
  check_output_and_status ("host");
}

static void
test_safe_output_and_status (void)
{
  check_output_and_status ("safe");
}

/* More than the 1 MiB kept per stream: the lengths say how much there was. */
static void
check_big_output (const char *profile)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autoptr(GVariant) result = NULL;

  session = create_session (connection, profile, "exec sleep 300");
  if (session == NULL)
    return;

  result = run (connection, session, "head -c 3000000 /dev/zero; head -c 1500000 /dev/zero >&2; echo tail", 0,
                NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (lookup_uint64 (result, "stdout-length"), ==, 3000005);
  g_assert_cmpuint (lookup_uint64 (result, "stderr-length"), ==, 1500000);
  g_assert_cmpuint (lookup_size (result, "stdout"), ==, 1024 * 1024);
  g_assert_cmpuint (lookup_size (result, "stderr"), ==, 1024 * 1024);
  /* the end is kept, the start dropped */
  {
    g_autofree char *out = lookup_bytes (result, "stdout");
    g_autoptr(GVariant) value = g_variant_lookup_value (result, "stdout", G_VARIANT_TYPE_BYTESTRING);
    gsize length = 0;
    const char *data = g_variant_get_fixed_array (value, &length, 1);

    g_assert_cmpmem (data + length - 5, 5, "tail\n", 5);
  }
}

static void
test_host_big_output (void)
{
  check_big_output ("host");
}

static void
test_safe_big_output (void)
{
  check_big_output ("safe");
}

/* The timeout kills the command's whole tree, and Run says so. */
static void
check_timeout_kills_tree (const char *profile)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autofree char *marker = g_build_filename (workspace, "marker-run-timeout", NULL);
  g_autofree char *script = NULL;
  g_autoptr(GVariant) result = NULL;
  g_autofree char *state = NULL;
  g_autofree char *out = NULL;

  session = create_session (connection, profile, "exec sleep 300");
  if (session == NULL)
    return;

  g_assert_no_errno (symlink ("/bin/sleep", marker));
  script = g_strdup_printf ("%s 300 & %s 300 & (%s 300 &); echo started; exec %s 300", marker, marker, marker, marker);
  result = run (connection, session, script, 700, NULL, &error);
  g_assert_no_error (error);
  state = lookup_string (result, "state");
  out = lookup_bytes (result, "stdout");
  g_assert_cmpstr (state, ==, "timed-out");
  g_assert_true (lookup_boolean (result, "timed-out"));
  g_assert_cmpuint (lookup_uint (result, "signal"), ==, SIGKILL);
  g_assert_cmpstr (out, ==, "started\n");
  paddock_test_wait_for_marked (marker, 0);
  unlink (marker);
}

static void
test_host_timeout_kills_tree (void)
{
  check_timeout_kills_tree ("host");
}

static void
test_safe_timeout_kills_tree (void)
{
  check_timeout_kills_tree ("safe");
}

/* Kills what a test left running that its session may not have taken
 * with it (a host session without cgroups cannot catch a setsid()). */
static void
kill_marked_processes (const char *marker)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *entry;

  while (proc != NULL && (entry = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *cmdline_path = g_strdup_printf ("/proc/%s/cmdline", entry);
      g_autofree char *cmdline = NULL;
      gsize length = 0;

      if (g_ascii_isdigit (entry[0]) &&
          g_file_get_contents (cmdline_path, &cmdline, &length, NULL) && length > 0 &&
          strstr (cmdline, marker) != NULL)
        kill ((pid_t) atoi (entry), SIGKILL);
    }
}

/* Output held open by what the command left behind: the timeout ends
 * Run's wait, whether it passes after the command exited (a background
 * child) or kills a command whose setsid()ed child holds the output. */
static void
check_timeout_ends_wait_for_output (const char *profile)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autofree char *marker = g_build_filename (workspace, "marker-run-held", NULL);
  g_autofree char *script = NULL;

  session = create_session (connection, profile, "exec sleep 300");
  if (session == NULL)
    return;
  g_assert_no_errno (symlink ("/bin/sleep", marker));

  script = g_strdup_printf ("%s 300 & echo done", marker);
  {
    g_autoptr(GVariant) result = run (connection, session, script, 700, NULL, &error);
    g_autofree char *out = NULL;
    g_autofree char *state = NULL;

    g_assert_no_error (error);
    out = lookup_bytes (result, "stdout");
    state = lookup_string (result, "state");
    g_assert_cmpstr (out, ==, "done\n");
    g_assert_true (lookup_boolean (result, "timed-out"));
    /* Run's own word for it: the command's State says "exited". */
    g_assert_cmpstr (state, ==, "timed-out");
    /* it had exited by itself: its status stands */
    g_assert_cmpint (lookup_int (result, "exit-status"), ==, 0);
    g_assert_cmpuint (lookup_uint (result, "signal"), ==, 0);
  }
  g_clear_pointer (&script, g_free);

  script = g_strdup_printf ("setsid %s 300 & echo started; exec %s 300", marker, marker);
  {
    g_autoptr(GVariant) result = run (connection, session, script, 500, NULL, &error);
    g_autofree char *out = NULL;
    g_autofree char *state = NULL;

    g_assert_no_error (error);
    out = lookup_bytes (result, "stdout");
    state = lookup_string (result, "state");
    g_assert_cmpstr (out, ==, "started\n");
    g_assert_cmpstr (state, ==, "timed-out");
    g_assert_cmpuint (lookup_uint (result, "signal"), ==, SIGKILL);
  }

  {
    g_autoptr(GVariant) destroyed = NULL;

    g_assert_true (paddock_test_destroy_session (connection, session, &destroyed, &error));
    g_assert_no_error (error);
  }
  kill_marked_processes (marker);
  paddock_test_wait_for_marked (marker, 0);
  unlink (marker);
}

static void
test_host_timeout_ends_wait_for_output (void)
{
  check_timeout_ends_wait_for_output ("host");
}

static void
test_safe_timeout_ends_wait_for_output (void)
{
  check_timeout_ends_wait_for_output ("safe");
}

/* A caller that leaves the bus while Run waits takes the command's tree
 * with it. */
static void
check_leaving_caller_kills_tree (const char *profile)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GDBusConnection) leaver = paddock_test_daemon_new_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autofree char *marker = g_build_filename (workspace, "marker-run-leaver", NULL);
  g_autofree char *script = NULL;

  session = create_session (connection, profile, "exec sleep 300");
  if (session == NULL)
    return;

  g_assert_no_errno (symlink ("/bin/sleep", marker));
  script = g_strdup_printf ("%s 300 & %s 300 & (%s 300 &); %s 300", marker, marker, marker, marker);
  g_dbus_connection_call (leaver, "org.paddock.Daemon", session, "org.paddock.Session1", "Run",
                          run_parameters (script, "", 0, NULL), G_VARIANT_TYPE ("(a{sv})"),
                          G_DBUS_CALL_FLAGS_NONE, G_MAXINT, NULL, NULL, NULL);
  paddock_test_wait_for_marked (marker, 4);
  g_assert_cmpuint (count_command_objects (connection, session), ==, 1);
  g_dbus_connection_close_sync (leaver, NULL, NULL);
  paddock_test_wait_for_marked (marker, 0);

  /* The session is untouched, and the daemon still runs commands. */
  {
    g_autoptr(GVariant) result = run (connection, session, "echo still", 0, NULL, &error);
    g_autofree char *out = NULL;

    g_assert_no_error (error);
    out = lookup_bytes (result, "stdout");
    g_assert_cmpstr (out, ==, "still\n");
  }
  unlink (marker);
}

static void
test_host_leaving_caller_kills_tree (void)
{
  check_leaving_caller_kills_tree ("host");
}

static void
test_safe_leaving_caller_kills_tree (void)
{
  check_leaving_caller_kills_tree ("safe");
}

typedef struct
{
  GVariant *reply;
  GError   *error;
  gboolean  done;
} Pending;

static void
pending_done_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  Pending *pending = user_data;

  pending->reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &pending->error);
  pending->done = TRUE;
}

/* A session stopped or destroyed while Run waits: Run answers, once, with
 * the command killed, as the command's own State says. */
static void
check_session_end_answers (const char *profile,
                           gboolean    destroy)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autofree char *marker = g_build_filename (workspace, "marker-run-stop", NULL);
  g_autofree char *script = NULL;
  g_autoptr(GVariant) stopped = NULL;
  g_autoptr(GVariant) result = NULL;
  g_autofree char *state = NULL;
  Pending pending = { NULL, NULL, FALSE };

  session = create_session (connection, profile, "exec sleep 300");
  if (session == NULL)
    return;

  g_assert_no_errno (symlink ("/bin/sleep", marker));
  script = g_strdup_printf ("echo before; exec %s 300", marker);
  g_dbus_connection_call (connection, "org.paddock.Daemon", session, "org.paddock.Session1", "Run",
                          run_parameters (script, "", 0, NULL), G_VARIANT_TYPE ("(a{sv})"),
                          G_DBUS_CALL_FLAGS_NONE, G_MAXINT, NULL, pending_done_cb, &pending);
  paddock_test_wait_for_marked (marker, 1);
  g_assert_false (pending.done);

  if (destroy)
    paddock_test_destroy_session (connection, session, &stopped, &error);
  else
    {
      g_autoptr(PaddockIpcSession1) proxy = paddock_test_session (connection, session);

      paddock_ipc_session1_call_stop_sync (proxy, 0, &stopped, NULL, &error);
    }
  g_assert_no_error (error);

  while (!pending.done)
    g_main_context_iteration (NULL, TRUE);
  g_assert_no_error (pending.error);
  result = g_variant_get_child_value (pending.reply, 0);
  state = lookup_string (result, "state");
  g_assert_cmpstr (state, ==, "killed");
  g_assert_cmpuint (lookup_uint (result, "signal"), ==, SIGKILL);
  {
    g_autofree char *out = lookup_bytes (result, "stdout");
    g_assert_cmpstr (out, ==, "before\n");
  }
  g_variant_unref (pending.reply);
  paddock_test_wait_for_marked (marker, 0);

  /* A session that does not run runs nothing (destroyed: no such session). */
  {
    g_autoptr(GVariant) again = run (connection, session, "true", 0, NULL, &error);

    g_assert_null (again);
    if (destroy)
      g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND);
    else
      g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_BUSY);
    g_clear_error (&error);
  }
  unlink (marker);
}

static void
test_host_stop_answers (void)
{
  check_session_end_answers ("host", FALSE);
}

static void
test_safe_stop_answers (void)
{
  check_session_end_answers ("safe", FALSE);
}

static void
test_safe_destroy_answers (void)
{
  check_session_end_answers ("safe", TRUE);
}

/* While Run waits its command is an ordinary Command1: another client may
 * read its State but not Kill it (a command is its caller's); its caller
 * may, and Run answers with how it ended. */
static void
check_kill_answers (const char *profile)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GDBusConnection) other = paddock_test_daemon_new_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autofree char *marker = g_build_filename (workspace, "marker-run-kill", NULL);
  g_autofree char *script = NULL;
  g_autofree char *command = NULL;
  g_autoptr(GVariant) state = NULL;
  g_autoptr(GVariant) result = NULL;
  g_autofree char *end_state = NULL;
  Pending pending = { NULL, NULL, FALSE };

  session = create_session (connection, profile, "exec sleep 300");
  if (session == NULL)
    return;

  g_assert_no_errno (symlink ("/bin/sleep", marker));
  script = g_strdup_printf ("exec %s 300", marker);
  g_dbus_connection_call (connection, "org.paddock.Daemon", session, "org.paddock.Session1", "Run",
                          run_parameters (script, "", 0, NULL), G_VARIANT_TYPE ("(a{sv})"),
                          G_DBUS_CALL_FLAGS_NONE, G_MAXINT, NULL, pending_done_cb, &pending);
  paddock_test_wait_for_marked (marker, 1);

  command = only_command_path (other, session);
  state = paddock_test_command_property (other, command, "State");
  g_assert_cmpstr (g_variant_get_string (state, NULL), ==, "running");
  {
    g_autoptr(PaddockIpcCommand1) as_other = paddock_test_command (other, command);
    g_autoptr(PaddockIpcCommand1) as_caller = paddock_test_command (connection, command);

    g_assert_false (paddock_ipc_command1_call_kill_sync (as_other, SIGKILL, NULL, &error));
    g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_ACCESS_DENIED);
    g_clear_error (&error);
    g_assert_true (paddock_test_count_marked (marker) == 1);
    paddock_ipc_command1_call_kill_sync (as_caller, SIGKILL, NULL, &error);
    g_assert_no_error (error);
  }

  while (!pending.done)
    g_main_context_iteration (NULL, TRUE);
  g_assert_no_error (pending.error);
  result = g_variant_get_child_value (pending.reply, 0);
  g_variant_unref (pending.reply);
  end_state = lookup_string (result, "state");
  g_assert_cmpstr (end_state, ==, "killed");
  g_assert_cmpuint (lookup_uint (result, "signal"), ==, SIGKILL);
  paddock_test_wait_for_marked (marker, 0);
  wait_for_no_commands (connection, session);
  unlink (marker);
}

static void
test_host_kill_answers (void)
{
  check_kill_answers ("host");
}

static void
test_safe_kill_answers (void)
{
  check_kill_answers ("safe");
}

/* The command's supervisor (its parent inside the sandbox) is in the
 * session's reach: a command may kill it. The Run is answered all the
 * same (the command is reported ended with status 255, or, had it been
 * killed before it said the command started, as a command that did not
 * start), and the daemon goes on serving the session. */
static void
test_safe_supervisor_killed_answers (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autoptr(GVariant) result = NULL;
  g_autoptr(GVariant) again = NULL;
  g_autofree char *out = NULL;

  session = create_session (connection, "safe", "exec sleep 300");
  if (session == NULL)
    return;

  result = run (connection, session, "sleep 0.3; kill -KILL $PPID; echo after-kill", 0, NULL, &error);
  if (result == NULL)
    {
      g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED);
      g_assert_nonnull (strstr (error->message, "supervisor"));
      g_clear_error (&error);
    }
  else
    {
      g_autofree char *end_state = lookup_string (result, "state");

      g_assert_cmpint (lookup_int (result, "exit-status"), ==, 255);
      g_assert_cmpstr (end_state, ==, "exited");
    }

  /* Still serving: the next Run runs and answers as usual. */
  again = run (connection, session, "echo still-serving; exit 4", 0, NULL, &error);
  g_assert_no_error (error);
  out = lookup_bytes (again, "stdout");
  g_assert_cmpstr (out, ==, "still-serving\n");
  g_assert_cmpint (lookup_int (again, "exit-status"), ==, 4);
  wait_for_no_commands (connection, session);
}

/* PID's state letter and parent, from /proc/PID/stat; FALSE once it is
 * gone. */
static gboolean
read_process (GPid  pid,
              char *state,
              GPid *parent)
{
  g_autofree char *stat_path = g_strdup_printf ("/proc/%d/stat", pid);
  g_autofree char *stat = NULL;
  const char *end;
  int ppid = 0;

  if (!g_file_get_contents (stat_path, &stat, NULL, NULL) || (end = strrchr (stat, ')')) == NULL ||
      sscanf (end + 1, " %c %d", state, &ppid) != 2)
    return FALSE;
  *parent = (GPid) ppid;
  return TRUE;
}

/* The daemon's child that runs the session whose agent is AGENT (the
 * sandbox: one of the agent's ancestors), or 0. */
static GPid
sandbox_of (GPid daemon,
            GPid agent)
{
  GPid pid = agent;

  for (guint depth = 0; depth < 32 && pid > 1; depth++)
    {
      GPid parent = 0;
      char state = 0;

      if (!read_process (pid, &state, &parent))
        return 0;
      if (parent == daemon)
        return pid;
      pid = parent;
    }
  return 0;
}

/* TRUE once PID has ended and its parent (stopped) has not reaped it. */
static gboolean
is_zombie (gpointer data)
{
  GPid parent = 0;
  char state = 0;

  return read_process (GPOINTER_TO_INT (data), &state, &parent) && state == 'Z';
}

/* TRUE once PID (the daemon's child: the sandbox's keeper, or its helper)
 * has ended, or, a keeper, has nothing left below it: the sandbox is
 * over, and the keeper stays until the daemon has its end on disk
 * (paddock-keeper-protocol.h). */
static gboolean
sandbox_over (gpointer data)
{
  int pid = GPOINTER_TO_INT (data);
  g_autofree char *path = g_strdup_printf ("/proc/%d/task/%d/children", pid, pid);
  g_autofree char *children = NULL;

  return is_zombie (data) ||
         (g_file_get_contents (path, &children, NULL, NULL) && g_strstrip (children)[0] == '\0');
}

/* A command that ended just before its sandbox did reports its own exit
 * status, not the sandbox's end (137): what its supervisor wrote before
 * the end is read first. Made certain by stopping the daemon while the
 * command and then the sandbox end, so that it learns of both at once:
 * the command waits for /tmp/go, which the agent makes on SIGUSR1 (sent
 * to MainPid, the sandbox's helper, which passes it on through pid 1) and
 * then waits for the command to take; the agent ends (and its sandbox
 * with it) once the command's supervisor has reaped it (it reports just
 * after) and a moment more, and the daemon goes on once that very
 * sandbox is over. */
static void
status_before_sandbox_end (gboolean tty)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  const char *argv[] = { "sh", "-c", "echo $$ > /tmp/command; while [ ! -e /tmp/go ]; do sleep 0.02; done; "
                         "rm -f /tmp/go; exit 3", NULL };
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autofree char *command = NULL;
  guint32 agent = 0;
  GPid pid;
  GPid sandbox;
  gint32 status = G_MININT32;
  char *state = NULL;

  session = create_session (connection, "safe",
                            "trap 'touch /tmp/go; while [ -e /tmp/go ]; do sleep 0.02; done; "
                            "while [ -e /proc/$(cat /tmp/command) ]; do sleep 0.02; done; sleep 0.2; exit 0' USR1; "
                            "while :; do sleep 0.05; done");
  if (session == NULL)
    return;
  agent = (guint32) paddock_test_session_main_pid (connection, session);
  g_assert_cmpuint (agent, >, 0);

  command = paddock_test_exec (connection, session, argv, "", 0, tty, &error);
  g_assert_no_error (error);

  pid = paddock_test_daemon_pid (connection);
  sandbox = sandbox_of (pid, (GPid) agent);
  g_assert_cmpint (sandbox, >, 0);
  g_assert_cmpint (kill (pid, SIGSTOP), ==, 0);
  g_assert_cmpint (kill ((pid_t) agent, SIGUSR1), ==, 0);
  /* The sandbox (the daemon's child) has ended: so has the command. */
  if (!paddock_test_wait_for (sandbox_over, GINT_TO_POINTER (sandbox), 30000))
    {
      kill (pid, SIGCONT);
      g_error ("the sandbox did not end within 30 s");
    }
  g_assert_cmpint (kill (pid, SIGCONT), ==, 0);

  for (guint i = 0; i < 500; i++)
    {
      g_autoptr(GVariant) properties = NULL;
      g_autoptr(GVariant) all = NULL;

      properties = paddock_test_call (connection, command, "org.freedesktop.DBus.Properties", "GetAll",
                                      g_variant_new ("(s)", "org.paddock.Command1"),
                                      G_VARIANT_TYPE ("(a{sv})"), &error);
      g_assert_no_error (error);
      all = g_variant_get_child_value (properties, 0);
      g_clear_pointer (&state, g_free);
      g_assert_true (g_variant_lookup (all, "State", "s", &state));
      g_assert_true (g_variant_lookup (all, "ExitStatus", "i", &status));
      if (!g_str_equal (state, "running"))
        break;
      g_usleep (20 * 1000);
    }
  g_assert_cmpstr (state, ==, "exited");
  g_assert_cmpint (status, ==, 3);
  g_free (state);
}

/* Its events on a channel of its own. */
static void
test_safe_status_before_sandbox_end (void)
{
  status_before_sandbox_end (FALSE);
}

/* On a terminal: its events relayed by pid 1. */
static void
test_safe_status_before_sandbox_end_tty (void)
{
  status_before_sandbox_end (TRUE);
}

/* Every State a Command1 PropertiesChanged carries, as "PATH STATE". */
static void
command_state_changed_cb (GDBusConnection *connection,
                          const char      *sender_name,
                          const char      *object_path,
                          const char      *interface_name,
                          const char      *signal_name,
                          GVariant        *parameters,
                          gpointer         user_data)
{
  GPtrArray *seen = user_data;
  g_autoptr(GVariant) changed = g_variant_get_child_value (parameters, 1);
  const char *state;

  if (g_variant_lookup (changed, "State", "&s", &state))
    g_ptr_array_add (seen, g_strdup_printf ("%s %s", object_path, state));
}

typedef struct
{
  GPtrArray  *seen;
  const char *ended;   /* "PATH exited" */
} StatesSeen;

static gboolean
state_was_seen (gpointer data)
{
  StatesSeen *states = data;

  for (guint i = 0; i < states->seen->len; i++)
    if (g_str_equal (g_ptr_array_index (states->seen, i), states->ended))
      return TRUE;
  return FALSE;
}

/* A sandboxed command is published once it runs: its first State is
 * "running" (never the undocumented "starting" it had before it ran), and
 * the only State a listener is sent is its end. */
static void
test_safe_command_published_running (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  const char *argv[] = { "sh", "-c", "sleep 0.5", NULL };
  g_autoptr(GPtrArray) seen = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) properties = NULL;
  g_autoptr(GVariant) all = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autofree char *ended = NULL;
  g_autofree char *first_state = NULL;
  StatesSeen states;
  g_autofree char *command = NULL;
  guint subscription;

  session = create_session (connection, "safe", "exec sleep 300");
  if (session == NULL)
    return;
  /* In place before the Exec: the bus handles our messages in order. */
  subscription = g_dbus_connection_signal_subscribe (connection, NULL, "org.freedesktop.DBus.Properties",
                                                     "PropertiesChanged", NULL, "org.paddock.Command1",
                                                     G_DBUS_SIGNAL_FLAGS_NONE, command_state_changed_cb,
                                                     g_ptr_array_ref (seen), (GDestroyNotify) g_ptr_array_unref);

  command = paddock_test_exec (connection, session, argv, "", 0, FALSE, &error);
  g_assert_no_error (error);
  properties = paddock_test_call (connection, command, "org.freedesktop.DBus.Properties", "GetAll",
                                  g_variant_new ("(s)", "org.paddock.Command1"),
                                  G_VARIANT_TYPE ("(a{sv})"), &error);
  g_assert_no_error (error);
  all = g_variant_get_child_value (properties, 0);
  g_assert_true (g_variant_lookup (all, "State", "s", &first_state));
  g_assert_true (g_str_equal (first_state, "running") || g_str_equal (first_state, "exited"));

  ended = g_strdup_printf ("%s exited", command);
  states.seen = seen;
  states.ended = ended;
  g_assert_true (paddock_test_wait_for (state_was_seen, &states, 30000));
  g_dbus_connection_signal_unsubscribe (connection, subscription);
  for (guint i = 0; i < seen->len; i++)
    {
      g_test_message ("State: %s", (const char *) g_ptr_array_index (seen, i));
      g_assert_cmpstr (g_ptr_array_index (seen, i), ==, ended);
    }
}

/* ------------------------------------------------------------------------ */
/* The sandbox's supervisors, seen from outside as a user would with ps:
 * pid 1 is the helper's child (MainPid is the helper), and each command
 * supervisor a child of pid 1 that, being a fork of it, shares its name;
 * the agent exec'd a program of its own. */

static char *
read_comm (GPid pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/comm", (int) pid);
  char *comm = NULL;

  if (!g_file_get_contents (path, &comm, NULL, NULL))
    return NULL;
  return g_strchomp (comm);
}

/* The children of PARENT, those named COMM only unless it is NULL. */
static GArray *
children_of (GPid        parent,
             const char *comm)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  GArray *children = g_array_new (FALSE, FALSE, sizeof (GPid));
  const char *entry;

  while (proc != NULL && (entry = g_dir_read_name (proc)) != NULL)
    {
      GPid pid = (GPid) atoi (entry);
      g_autofree char *name = NULL;
      GPid ppid = 0;
      char state = 0;

      if (g_ascii_isdigit (entry[0]) && read_process (pid, &state, &ppid) && ppid == parent &&
          state != 'Z' && (comm == NULL || g_strcmp0 (name = read_comm (pid), comm) == 0))
        g_array_append_val (children, pid);
    }
  return children;
}

/* The session's pid 1, as the host sees it. */
static GPid
sandbox_init_pid (GDBusConnection *connection,
                  const char      *session)
{
  g_autoptr(GArray) children = NULL;

  children = children_of (paddock_test_session_main_pid (connection, session), NULL);
  g_assert_cmpuint (children->len, ==, 1);
  return g_array_index (children, GPid, 0);
}

/* The spare: once the session is quiet, pid 1 keeps exactly one idle
 * supervisor. Waits (up to 20 s) until one and the same sleeps there for
 * a few looks in a row. */
static GPid
wait_for_spare (GPid init)
{
  g_autofree char *comm = read_comm (init);
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  GPid seen = 0;
  guint steady = 0;

  g_assert_nonnull (comm);
  while (steady < 5)
    {
      g_autoptr(GArray) supervisors = children_of (init, comm);
      GPid ppid = 0;
      char state = 0;

      if (supervisors->len == 1 && g_array_index (supervisors, GPid, 0) == seen &&
          read_process (seen, &state, &ppid) && state == 'S')
        steady++;
      else
        {
          steady = 0;
          seen = supervisors->len == 1 ? g_array_index (supervisors, GPid, 0) : 0;
        }
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (50 * 1000);
    }
  return seen;
}

/* Sends PID SIGSTOP and waits until it is stopped. */
static void
stop_process (GPid pid)
{
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  GPid ppid = 0;
  char state = 0;

  g_assert_no_errno (kill (pid, SIGSTOP));
  while (read_process (pid, &state, &ppid) && state != 'T')
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (10 * 1000);
    }
  g_assert_cmpint (state, ==, 'T');
}

/* A first command in SESSION, after which pid 1 keeps a spare supervisor:
 * that spare, and pid 1 in *INIT. */
static GPid
first_command_then_spare (GDBusConnection *connection,
                          const char      *session,
                          GPid            *init)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) first = run (connection, session, "true", 0, NULL, &error);

  g_assert_no_error (error);
  *init = sandbox_init_pid (connection, session);
  return wait_for_spare (*init);
}

/* Any process of the session can SIGSTOP the spare supervisor (the same
 * user, the same Landlock domain). The next Run still answers: pid 1
 * resumes the spare as it hands it the command. */
static void
test_safe_stopped_spare_answers (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autoptr(GVariant) result = NULL;
  g_autofree char *out = NULL;
  GPid init;
  GPid spare;

  session = create_session (connection, "safe", "exec sleep 300");
  if (session == NULL)
    return;

  spare = first_command_then_spare (connection, session, &init);
  stop_process (spare);

  result = run (connection, session, "echo ok", 0, NULL, &error);
  g_assert_no_error (error);
  out = lookup_bytes (result, "stdout");
  g_assert_cmpstr (out, ==, "ok\n");
  g_assert_cmpint (lookup_int (result, "exit-status"), ==, 0);

  assert_still_serves (connection, session);
}

/* Commands in a row, each longer than pid 1's short idle wait before it
 * forks a spare: the one supervisor serves them all, each one's command
 * being its child, and it is the spare again after each (no fork of pid 1,
 * no exit, per command). Before, pid 1 forked a new spare while the command
 * ran and the free supervisor then exited unused. */
static void
test_safe_commands_in_a_row_one_supervisor (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autofree char *expected = NULL;
  GPid init;
  GPid spare;

  session = create_session (connection, "safe", "exec sleep 300");
  if (session == NULL)
    return;

  spare = first_command_then_spare (connection, session, &init);
  g_assert_cmpint (paddock_test_namespace_pid (spare), >, 0);
  expected = g_strdup_printf ("%d\n", paddock_test_namespace_pid (spare));

  for (guint i = 0; i < 4; i++)
    {
      g_autoptr(GVariant) result = NULL;
      g_autofree char *out = NULL;

      result = run (connection, session, "echo $PPID; sleep 0.05", 0, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (lookup_int (result, "exit-status"), ==, 0);
      out = lookup_bytes (result, "stdout");
      g_assert_cmpstr (out, ==, expected);
      g_assert_cmpint (wait_for_spare (init), ==, spare);
    }
}

/* SIGSTOP to a supervisor for as long as it lives or until told to
 * stop, every 200 µs: a process of the session that keeps it stopped.
 * Through a pidfd, so that no other process is ever hit. */
typedef struct
{
  int pidfd;
  gint done;
} Stopper;

static gpointer
stopper_main (gpointer data)
{
  Stopper *stopper = data;

  /* Not a busy loop: on a 2-core machine it would take a core from the
   * daemon and the sandbox it tests. */
  while (!g_atomic_int_get (&stopper->done) &&
         syscall (SYS_pidfd_send_signal, stopper->pidfd, SIGSTOP, NULL, 0) == 0)
    g_usleep (200);
  return NULL;
}

/* The supervisor of a running command stopped from inside the session,
 * once (a Kill of SIGNAL_NUMBER still reaches the command: pid 1 resumes
 * the supervisor first) or KEPT stopped (the timeout's SIGKILL still ends
 * it: pid 1 sees it stopped and kills its tree, then it, without its
 * help). Either way Run answers. */
static void
check_stopped_supervisor (gboolean kept,
                          guint    signal_number)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GDBusConnection) other = paddock_test_daemon_new_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autofree char *marker = g_build_filename (workspace, "marker-run-stopped-supervisor", NULL);
  g_autofree char *script = NULL;
  g_autofree char *state = NULL;
  g_autoptr(GArray) commands = NULL;
  g_autoptr(GVariant) result = NULL;
  Stopper stopper = { -1, 0 };
  GThread *thread = NULL;
  gint64 deadline;
  Pending pending = { NULL, NULL, FALSE };
  GPid supervisor = 0;

  session = create_session (connection, "safe", "exec sleep 300");
  if (session == NULL)
    return;

  g_assert_no_errno (symlink ("/bin/sleep", marker));
  script = g_strdup_printf ("exec %s 300", marker);
  g_dbus_connection_call (connection, "org.paddock.Daemon", session, "org.paddock.Session1", "Run",
                          /* The timeout must not pass before the supervisor is
                           * found and stopped, even on a loaded machine. */
                          run_parameters (script, "", signal_number == 0 ? 6000 : 0, NULL),
                          G_VARIANT_TYPE ("(a{sv})"), G_DBUS_CALL_FLAGS_NONE, G_MAXINT, NULL,
                          pending_done_cb, &pending);
  paddock_test_wait_for_marked (marker, 1);

  /* The command's parent is its supervisor. */
  commands = children_of (sandbox_init_pid (connection, session), NULL);
  for (guint i = 0; i < commands->len && supervisor == 0; i++)
    {
      g_autoptr(GArray) below = children_of (g_array_index (commands, GPid, i), NULL);

      for (guint j = 0; j < below->len; j++)
        {
          g_autofree char *cmdline_path = g_strdup_printf ("/proc/%d/cmdline", (int) g_array_index (below, GPid, j));
          g_autofree char *cmdline = NULL;

          if (g_file_get_contents (cmdline_path, &cmdline, NULL, NULL) && strstr (cmdline, marker) != NULL)
            supervisor = g_array_index (commands, GPid, i);
        }
    }
  g_assert_cmpint (supervisor, >, 0);
  stop_process (supervisor);
  if (kept)
    {
      stopper.pidfd = (int) syscall (SYS_pidfd_open, supervisor, 0);
      g_assert_cmpint (stopper.pidfd, >=, 0);
      thread = g_thread_new ("stopper", stopper_main, &stopper);
    }
  g_assert_false (pending.done);

  if (signal_number != 0)
    {
      g_autofree char *command = only_command_path (other, session);
      g_autoptr(PaddockIpcCommand1) proxy = paddock_test_command (connection, command);

      paddock_ipc_command1_call_kill_sync (proxy, (guint) signal_number, NULL, &error);
      g_assert_no_error (error);
    }

  /* Not for ever: past the timeout, by far. */
  deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  while (!pending.done)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (10 * 1000);
    }
  if (thread != NULL)
    {
      g_atomic_int_set (&stopper.done, 1);
      g_thread_join (thread);
      close (stopper.pidfd);
    }
  g_assert_no_error (pending.error);
  result = g_variant_get_child_value (pending.reply, 0);
  g_clear_pointer (&pending.reply, g_variant_unref);
  state = lookup_string (result, "state");
  g_assert_cmpstr (state, ==, signal_number == 0 ? "timed-out" : "killed");
  if (signal_number != 0)
    g_assert_cmpuint (lookup_uint (result, "signal"), ==, signal_number);
  else
    {
      /* Ended without its supervisor's account, as when a supervisor is
       * killed (see test_safe_supervisor_killed_answers). */
      g_assert_cmpint (lookup_int (result, "exit-status"), ==, 255);
      g_assert_cmpuint (lookup_uint (result, "signal"), ==, 0);
    }
  paddock_test_wait_for_marked (marker, 0);
  wait_for_no_commands (connection, session);
  unlink (marker);
}

static void
test_safe_stopped_supervisor_kill (void)
{
  check_stopped_supervisor (FALSE, SIGTERM);
}

static void
test_safe_kept_stopped_supervisor_timeout (void)
{
  check_stopped_supervisor (TRUE, 0);
}

/* A daemon whose wait for a command's "spawned" is 2 s rather than 10:
 * short, but long enough for any start on a loaded machine. */
static PaddockTestDaemon *
new_daemon_with_short_spawn_bound (void)
{
  PaddockTestDaemon *daemon;

  g_setenv ("PADDOCK_TEST_SPAWN_DEADLINE_MS", "2000", TRUE);
  daemon = paddock_test_daemon_new (NULL);
  g_unsetenv ("PADDOCK_TEST_SPAWN_DEADLINE_MS");
  return daemon;
}

/* The spare kept stopped by a process of the session, so that pid 1's
 * SIGCONT as it hands it the command is undone at once: Run answers
 * all the same, within the daemon's bound (made short here) with an
 * error that says why, or with the command's result should the spare
 * have got through before it was stopped again (which one depends on
 * the scheduler). The next Run, unhindered, runs.
 *
 * A spare that got as far as "spawned" before it was stopped again (its
 * command is then published) is past the bound, and its Run has no
 * timeout here, as for a command that runs for ever: the stopper then
 * lets go and resumes it, as a process of the session that stops
 * stopping it would, and Run answers with the command's result. Without
 * that the test would wait on itself (its stopper ends with the Run). */
static void
test_safe_kept_stopped_spare_answers (void)
{
  g_autoptr(PaddockTestDaemon) daemon = NULL;
  GDBusConnection *connection;
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autoptr(GVariant) first = NULL;
  g_autoptr(GVariant) result = NULL;
  Stopper stopper = { -1, 0 };
  Pending pending = { NULL, NULL, FALSE };
  GThread *thread;
  gint64 deadline;
  guint look;
  GPid spare;

  daemon = new_daemon_with_short_spawn_bound ();
  connection = paddock_test_daemon_get_connection (daemon);

  session = create_session (connection, "safe", "exec sleep 300");
  if (session == NULL)
    return;
  first = run (connection, session, "true", 0, NULL, &error);
  g_assert_no_error (error);
  /* So that a command object, below, is the next Run's. */
  wait_for_no_commands (connection, session);
  spare = wait_for_spare (sandbox_init_pid (connection, session));
  stop_process (spare);
  stopper.pidfd = (int) syscall (SYS_pidfd_open, spare, 0);
  g_assert_cmpint (stopper.pidfd, >=, 0);
  thread = g_thread_new ("stopper", stopper_main, &stopper);

  g_dbus_connection_call (connection, "org.paddock.Daemon", session, "org.paddock.Session1", "Run",
                          run_parameters ("echo ok", "", 0, NULL),
                          G_VARIANT_TYPE ("(a{sv})"), G_DBUS_CALL_FLAGS_NONE, G_MAXINT, NULL,
                          pending_done_cb, &pending);
  deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  look = 0;
  while (!pending.done)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      if (thread != NULL && ++look % 10 == 0 && count_command_objects (connection, session) > 0)
        {
          g_atomic_int_set (&stopper.done, 1);
          g_clear_pointer (&thread, g_thread_join);
          syscall (SYS_pidfd_send_signal, stopper.pidfd, SIGCONT, NULL, 0);
        }
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (10 * 1000);
    }
  if (thread != NULL)
    {
      g_atomic_int_set (&stopper.done, 1);
      g_thread_join (thread);
    }
  close (stopper.pidfd);
  if (pending.reply != NULL)
    {
      result = g_variant_get_child_value (pending.reply, 0);
      g_clear_pointer (&pending.reply, g_variant_unref);
    }
  else
    g_propagate_error (&error, g_steal_pointer (&pending.error));
  if (result == NULL)
    {
      g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED);
      g_assert_nonnull (strstr (error->message, "supervisor did not answer"));
      g_clear_error (&error);
      g_assert_cmpuint (count_command_objects (connection, session), ==, 0);
    }
  else
    {
      g_autofree char *out = lookup_bytes (result, "stdout");

      g_assert_cmpstr (out, ==, "ok\n");
    }

  assert_still_serves (connection, session);
}

/* Whatever keeps the command's start from being reported (here the whole
 * sandbox, stopped from outside: the same silence a supervisor stopped
 * again after pid 1 resumed it gives), Run answers once the daemon's
 * bound has passed: an error that says why, no command object left, and
 * the session serves the next Run. */
static void
test_safe_spawn_deadline (void)
{
  g_autoptr(PaddockTestDaemon) daemon = NULL;
  GDBusConnection *connection;
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autoptr(GVariant) first = NULL;
  g_autoptr(GVariant) result = NULL;
  GPid init;

  daemon = new_daemon_with_short_spawn_bound ();
  connection = paddock_test_daemon_get_connection (daemon);

  session = create_session (connection, "safe", "exec sleep 300");
  if (session == NULL)
    return;
  first = run (connection, session, "true", 0, NULL, &error);
  g_assert_no_error (error);

  /* From outside its namespace, SIGSTOP reaches pid 1. */
  init = sandbox_init_pid (connection, session);
  stop_process (init);
  result = run (connection, session, "echo lost", 0, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "supervisor did not answer"));
  g_clear_error (&error);
  g_assert_cmpuint (count_command_objects (connection, session), ==, 0);

  g_assert_no_errno (kill (init, SIGCONT));
  assert_still_serves (connection, session);
}

/* Typed errors, before anything runs. */
/* Released while Run waits (by its caller, never by another client, or
 * the daemon quitting):
 * Run still gets its one answer, an error that says so, and the command's
 * tree is gone. */
static void
check_release_answers (const char *profile,
                       gboolean    daemon_quits)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GDBusConnection) other = paddock_test_daemon_new_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autofree char *marker = g_build_filename (workspace, "marker-run-release", NULL);
  g_autofree char *script = NULL;
  Pending pending = { NULL, NULL, FALSE };

  session = create_session (connection, profile, "exec sleep 300");
  if (session == NULL)
    return;

  g_assert_no_errno (symlink ("/bin/sleep", marker));
  script = g_strdup_printf ("echo before; exec %s 300", marker);
  g_dbus_connection_call (connection, "org.paddock.Daemon", session, "org.paddock.Session1", "Run",
                          run_parameters (script, "", 0, NULL), G_VARIANT_TYPE ("(a{sv})"),
                          G_DBUS_CALL_FLAGS_NONE, G_MAXINT, NULL, pending_done_cb, &pending);
  paddock_test_wait_for_marked (marker, 1);

  if (daemon_quits)
    paddock_test_daemon_stop (daemon);
  else
    {
      g_autofree char *command = only_command_path (other, session);
      g_autoptr(PaddockIpcCommand1) as_other = paddock_test_command (other, command);
      g_autoptr(PaddockIpcCommand1) as_caller = paddock_test_command (connection, command);

      /* Only its caller may release it. */
      g_assert_false (paddock_ipc_command1_call_release_sync (as_other, NULL, &error));
      g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_ACCESS_DENIED);
      g_clear_error (&error);
      g_assert_false (pending.done);
      paddock_ipc_command1_call_release_sync (as_caller, NULL, &error);
      g_assert_no_error (error);
    }

  while (!pending.done)
    g_main_context_iteration (NULL, TRUE);
  g_assert_null (pending.reply);
  /* Not the bus's NoReply: the daemon answered. */
  if (daemon_quits)
    g_assert_error (pending.error, PADDOCK_ERROR, PADDOCK_ERROR_BUSY);
  else
    g_assert_error (pending.error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED);
  g_clear_error (&pending.error);
  paddock_test_wait_for_marked (marker, 0);
  if (!daemon_quits)
    wait_for_no_commands (connection, session);
  unlink (marker);
}

static void
test_host_release_answers (void)
{
  check_release_answers ("host", FALSE);
}

static void
test_safe_release_answers (void)
{
  check_release_answers ("safe", FALSE);
}

static void
test_host_daemon_quit_answers (void)
{
  check_release_answers ("host", TRUE);
}

static void
test_safe_daemon_quit_answers (void)
{
  check_release_answers ("safe", TRUE);
}

static void
test_bad_input (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autoptr(GVariant) reply = NULL;
  const char *empty[] = { NULL };
  const char *missing[] = { "no-such-program-here", NULL };
  GVariant *tty = g_variant_new_parsed ("{'tty': <true>}");
  GVariant *unknown = g_variant_new_parsed ("{'stdin-file': <'/etc/passwd'>}");

  session = create_session (connection, "host", "exec sleep 300");

  reply = paddock_test_run (connection, session, empty, "", 0, NULL, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  reply = run (connection, session, "true", 0, tty, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  reply = run (connection, session, "true", 0, unknown, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  {
    g_auto(GVariantBuilder) options = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
    g_autofree guint8 *input = g_malloc0 (1024 * 1024 + 1);

    g_variant_builder_add (&options, "{sv}", "stdin",
                           g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, input, 1024 * 1024 + 1, 1));
    reply = run (connection, session, "cat", 0, g_variant_builder_end (&options), &error);
    g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
  }
  {
    const char *argv[] = { "sh", "-c", "true", NULL };

    reply = paddock_test_run (connection, session, argv, "relative/dir", 0, NULL, &error);
  }
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  reply = run (connection, session, "true", G_MAXUINT32, NULL, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  reply = paddock_test_run (connection, session, missing, "", 0, NULL, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* A Run's command counts among its caller's 16 while it runs. */
  for (guint i = 0; i < 16; i++)
    {
      const char *argv[] = { "sleep", "300", NULL };
      g_autofree char *command = paddock_test_exec (connection, session, argv, "", 0, FALSE, &error);

      g_assert_no_error (error);
    }
  reply = run (connection, session, "true", 0, NULL, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_QUOTA_EXCEEDED);
  g_clear_error (&error);
}

/* A Run's command is released once Run has answered: more Runs than the
 * commands a session keeps (256) all run, one after the other. */
static void
check_commands_released (const char *profile)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  const char *argv[] = { "true", NULL };
  guint fds_before = 0;

  session = create_session (connection, profile, "exec sleep 300");
  if (session == NULL)
    return;

  for (guint i = 0; i < 300; i++)
    {
      g_autoptr(GVariant) result = paddock_test_run (connection, session, argv, "", 0, NULL, &error);

      if (error != NULL)
        g_test_message ("Run %u of 300 failed", i + 1);
      g_assert_no_error (error);
      /* What the session keeps after a first command (its spare
       * supervisor, say) is counted in, and so is the sandbox the daemon
       * makes ahead after a safe start (its terminal and socket). */
      if (i == 0)
        {
          wait_for_no_commands (connection, session);
          if (g_str_equal (profile, "safe"))
            paddock_test_wait_for_spare_sandbox (connection, 0);
          fds_before = paddock_test_daemon_fd_count (connection);
        }
    }

  wait_for_no_commands (connection, session);
  /* Nor does the daemon keep anything of them: each command's pipes and
   * event channel are closed once it is over. The last command's may
   * still be closing as its object goes (seen once: one descriptor over,
   * with no cgroup), so the count is given a few seconds to come back;
   * one kept per command would leave hundreds. */
  {
    gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
    guint fds;

    while ((fds = paddock_test_daemon_fd_count (connection)) > fds_before && g_get_monotonic_time () < deadline)
      g_usleep (20 * 1000);
    g_assert_cmpuint (fds, <=, fds_before);
  }
}

static void
test_host_commands_released (void)
{
  check_commands_released ("host");
}

static void
test_safe_commands_released (void)
{
  check_commands_released ("safe");
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

  g_test_add_func ("/run/host/output-and-status", test_host_output_and_status);
  g_test_add_func ("/run/safe/output-and-status", test_safe_output_and_status);
  g_test_add_func ("/run/host/big-output", test_host_big_output);
  g_test_add_func ("/run/safe/big-output", test_safe_big_output);
  g_test_add_func ("/run/host/timeout-kills-tree", test_host_timeout_kills_tree);
  g_test_add_func ("/run/safe/timeout-kills-tree", test_safe_timeout_kills_tree);
  g_test_add_func ("/run/host/timeout-ends-wait-for-output", test_host_timeout_ends_wait_for_output);
  g_test_add_func ("/run/safe/timeout-ends-wait-for-output", test_safe_timeout_ends_wait_for_output);
  g_test_add_func ("/run/host/leaving-caller-kills-tree", test_host_leaving_caller_kills_tree);
  g_test_add_func ("/run/safe/leaving-caller-kills-tree", test_safe_leaving_caller_kills_tree);
  g_test_add_func ("/run/host/stop-answers", test_host_stop_answers);
  g_test_add_func ("/run/safe/stop-answers", test_safe_stop_answers);
  g_test_add_func ("/run/safe/destroy-answers", test_safe_destroy_answers);
  g_test_add_func ("/run/host/kill-answers", test_host_kill_answers);
  g_test_add_func ("/run/safe/kill-answers", test_safe_kill_answers);
  g_test_add_func ("/run/safe/supervisor-killed-answers", test_safe_supervisor_killed_answers);
  g_test_add_func ("/run/safe/status-before-sandbox-end", test_safe_status_before_sandbox_end);
  g_test_add_func ("/run/safe/status-before-sandbox-end-tty", test_safe_status_before_sandbox_end_tty);
  g_test_add_func ("/run/safe/command-published-running", test_safe_command_published_running);
  g_test_add_func ("/run/safe/stopped-spare-answers", test_safe_stopped_spare_answers);
  g_test_add_func ("/run/safe/commands-in-a-row-one-supervisor", test_safe_commands_in_a_row_one_supervisor);
  g_test_add_func ("/run/safe/stopped-supervisor-kill", test_safe_stopped_supervisor_kill);
  g_test_add_func ("/run/safe/kept-stopped-supervisor-timeout", test_safe_kept_stopped_supervisor_timeout);
  g_test_add_func ("/run/safe/spawn-deadline", test_safe_spawn_deadline);
  g_test_add_func ("/run/safe/kept-stopped-spare-answers", test_safe_kept_stopped_spare_answers);
  g_test_add_func ("/run/host/release-answers", test_host_release_answers);
  g_test_add_func ("/run/safe/release-answers", test_safe_release_answers);
  g_test_add_func ("/run/host/daemon-quit-answers", test_host_daemon_quit_answers);
  g_test_add_func ("/run/safe/daemon-quit-answers", test_safe_daemon_quit_answers);
  g_test_add_func ("/run/bad-input", test_bad_input);
  g_test_add_func ("/run/host/commands-released", test_host_commands_released);
  g_test_add_func ("/run/safe/commands-released", test_safe_commands_released);

  status = g_test_run ();
  /* Left empty by every test; a run must not leave it behind. */
  g_rmdir (workspace);
  g_free (workspace);
  return status;
}
