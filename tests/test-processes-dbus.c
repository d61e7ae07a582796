/* test-processes-dbus.c — Session1.ListProcesses and KillProcess against the real daemon
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "paddock-error.h"
#include "paddock-test-daemon.h"
#include "paddock-test-session.h"

static char *workspace;

static char *
create_session (GDBusConnection  *connection,
                const char       *profile,
                const char       *script,
                GError          **error)
{
  return paddock_test_create_session (connection, workspace, profile, script, NULL, error);
}

static GVariant *
list_processes (GDBusConnection *connection,
                const char      *path)
{
  g_autoptr(PaddockIpcSession1) session = paddock_test_session (connection, path);
  g_autoptr(GError) error = NULL;
  GVariant *rows = NULL;

  paddock_ipc_session1_call_list_processes_sync (session, &rows, NULL, &error);
  g_assert_no_error (error);
  return rows;
}

/* The pid of the row whose command line is @command_line, 0 if none. */
static guint32
find_process (GVariant   *rows,
              const char *command_line,
              guint32    *ppid_out,
              char       *state_out)
{
  GVariantIter iter;
  guint32 pid, ppid;
  const char *state, *name, *line;

  g_variant_iter_init (&iter, rows);
  while (g_variant_iter_next (&iter, "(uu&s&s&s)", &pid, &ppid, &state, &name, &line))
    if (g_strcmp0 (line, command_line) == 0)
      {
        if (ppid_out != NULL)
          *ppid_out = ppid;
        if (state_out != NULL)
          *state_out = state[0];
        return pid;
      }
  return 0;
}

static gboolean
has_pid (GVariant *rows,
         guint32   wanted)
{
  GVariantIter iter;
  guint32 pid;

  g_variant_iter_init (&iter, rows);
  while (g_variant_iter_next (&iter, "(u@u@s@s@s)", &pid, NULL, NULL, NULL, NULL))
    if (pid == wanted)
      return TRUE;
  return FALSE;
}

typedef struct {
  GDBusConnection *connection;
  const char      *path;
  const char      *command_line;
  gboolean         present;
} WaitProcess;

static gboolean
process_listed_is (gpointer data)
{
  WaitProcess *wait = data;
  g_autoptr(GVariant) rows = list_processes (wait->connection, wait->path);

  return (find_process (rows, wait->command_line, NULL, NULL) != 0) == wait->present;
}

static void
kill_process (GDBusConnection  *connection,
              const char       *path,
              guint32           pid,
              guint32           signum,
              GError          **error)
{
  g_autoptr(PaddockIpcSession1) session = paddock_test_session (connection, path);

  paddock_ipc_session1_call_kill_process_sync (session, pid, signum, NULL, error);
}

static void
check_list_and_kill (const char *profile)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GVariant) rows = NULL;
  g_autoptr(GVariant) result = NULL;
  WaitProcess wait = { 0, };
  guint32 sleeper, sleeper_parent = 0, waiter;
  guint32 survivors = 99;
  char state = 0;

  /* Two children of the agent's shell, each recognisable by its command line. */
  path = create_session (connection, profile, "sleep 301 & sleep 302 & wait", &error);
  if (g_error_matches (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED))
    {
      g_test_skip (error->message);
      return;
    }
  g_assert_no_error (error);

  /* Each child shows its own command line once it has exec'd. */
  wait = (WaitProcess) { connection, path, "sleep 301", TRUE };
  g_assert_true (paddock_test_wait_for (process_listed_is, &wait, 10000));
  wait = (WaitProcess) { connection, path, "sleep 302", TRUE };
  g_assert_true (paddock_test_wait_for (process_listed_is, &wait, 10000));

  rows = list_processes (connection, path);
  sleeper = find_process (rows, "sleep 301", &sleeper_parent, &state);
  waiter = find_process (rows, "sh -c sleep 301 & sleep 302 & wait", NULL, NULL);
  g_assert_cmpuint (sleeper, !=, 0);
  g_assert_cmpuint (waiter, !=, 0);
  /* Pids as the host sees them: the shell is the sleeper's parent, and
   * both are real processes here. */
  g_assert_cmpuint (sleeper_parent, ==, waiter);
  g_assert_true (state == 'S' || state == 'R');
  g_assert_cmpint (kill ((pid_t) sleeper, 0), ==, 0);
  /* Not the session's: neither the test itself nor init. */
  g_assert_false (has_pid (rows, (guint32) getpid ()));
  g_assert_false (has_pid (rows, 1));

  /* Refused: pids outside the session, and bad signals. */
  kill_process (connection, path, (guint32) getpid (), SIGTERM, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_ACCESS_DENIED);
  g_clear_error (&error);
  kill_process (connection, path, 1, SIGKILL, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_ACCESS_DENIED);
  g_clear_error (&error);
  kill_process (connection, path, sleeper, 0, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  kill_process (connection, path, sleeper, 4096, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  /* Still there after all that. */
  g_clear_pointer (&rows, g_variant_unref);
  rows = list_processes (connection, path);
  g_assert_true (has_pid (rows, sleeper));

  /* Killing one process of the session ends that one only. */
  kill_process (connection, path, sleeper, SIGTERM, &error);
  g_assert_no_error (error);
  wait = (WaitProcess) { connection, path, "sleep 301", FALSE };
  g_assert_true (paddock_test_wait_for (process_listed_is, &wait, 10000));
  g_clear_pointer (&rows, g_variant_unref);
  rows = list_processes (connection, path);
  g_assert_cmpuint (find_process (rows, "sleep 302", NULL, NULL), !=, 0);

  g_assert_true (paddock_test_destroy_session (connection, path, &result, &error));
  g_assert_no_error (error);
  g_assert_true (g_variant_lookup (result, "survivors", "u", &survivors));
  g_assert_cmpuint (survivors, ==, 0);
}

static void
test_host_list_and_kill (void)
{
  check_list_and_kill ("host");
}

static void
test_safe_list_and_kill (void)
{
  check_list_and_kill ("safe");
}

/* A session that has ended has no processes, and kills nothing. */
static void
test_ended_session (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GVariant) rows = NULL;
  g_autoptr(GVariant) result = NULL;

  path = create_session (connection, "host", "exec sleep 303", &error);
  g_assert_no_error (error);
  {
    g_autoptr(PaddockIpcSession1) session = paddock_test_session (connection, path);

    paddock_ipc_session1_call_stop_sync (session, 0, &result, NULL, &error);
    g_assert_no_error (error);
  }

  rows = list_processes (connection, path);
  g_assert_cmpuint (g_variant_n_children (rows), ==, 0);
  kill_process (connection, path, (guint32) getpid (), SIGTERM, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_ACCESS_DENIED);
  g_clear_error (&error);

  g_clear_pointer (&result, g_variant_unref);
  g_assert_true (paddock_test_destroy_session (connection, path, &result, &error));
  g_assert_no_error (error);
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

  g_test_add_func ("/processes/host/list-and-kill", test_host_list_and_kill);
  g_test_add_func ("/processes/safe/list-and-kill", test_safe_list_and_kill);
  g_test_add_func ("/processes/ended-session", test_ended_session);

  status = g_test_run ();
  g_rmdir (workspace);
  g_free (workspace);
  return status;
}
