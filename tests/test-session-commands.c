/* test-session-commands.c — a session's command table alone: ids, quota, pids, pending calls, deadlines
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * On a private bus (GTestDBus), without a daemon: real method calls are
 * kept pending in the table, answered when their deadline passes (the
 * handler of "spawn-deadline" answers) or all at once; the bound on kept
 * commands is the typed quota error.
 */

#include "config.h"

#include "paddock-error.h"
#include "paddock-session-commands.h"

#define WAIT_USEC (10 * G_USEC_PER_SEC)

static const char introspection[] =
  "<node><interface name='org.paddock.Test'><method name='Wait'/></interface></node>";

typedef struct
{
  PaddockSessionCommands *commands;
  guint32                 next_id;      /* the id the next call is pending as */
  guint                   n_deadlines;
  guint32                 deadline_id;
} Fixture;

static void
method_call_cb (GDBusConnection       *connection,
                const char            *sender,
                const char            *object_path,
                const char            *interface_name,
                const char            *method_name,
                GVariant              *parameters,
                GDBusMethodInvocation *invocation,
                gpointer               user_data)
{
  Fixture *fixture = user_data;

  paddock_session_commands_add_pending (fixture->commands, fixture->next_id, invocation);
}

static const GDBusInterfaceVTable vtable = { method_call_cb, NULL, NULL, { 0 } };

/* What the session does: the call that waited too long gets its answer.
 * (Only command 7's here: the others are left waiting, for the session's
 * end to answer.) */
static void
spawn_deadline_cb (PaddockSessionCommands *commands,
                   guint                   id,
                   Fixture                *fixture)
{
  GDBusMethodInvocation *invocation;

  fixture->n_deadlines++;
  fixture->deadline_id = id;
  if (id != 7)
    return;
  invocation = paddock_session_commands_steal_pending (commands, id);
  g_assert_nonnull (invocation);
  g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_FAILED, "too late");
}

static void
call_done_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  GError **out = user_data;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, out);

  /* Every call of this test ends in an error: a reply would be a bug. */
  g_assert_null (reply);
  g_assert_nonnull (*out);
}

static void
call_wait (GDBusConnection *client,
           const char      *server_name,
           GError         **out)
{
  g_dbus_connection_call (client, server_name, "/test", "org.paddock.Test", "Wait", NULL, NULL,
                          G_DBUS_CALL_FLAGS_NONE, 60 * 1000, NULL, call_done_cb, out);
}

static void
iterate_until_error (GError **error)
{
  gint64 deadline = g_get_monotonic_time () + WAIT_USEC;

  while (*error == NULL && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_nonnull (*error);
}

static GDBusConnection *
new_connection (const char *address)
{
  g_autoptr(GError) error = NULL;
  GDBusConnection *connection =
    g_dbus_connection_new_for_address_sync (address, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                                     G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                                            NULL, NULL, &error);

  g_assert_no_error (error);
  return connection;
}

static void
test_pending_and_deadlines (void)
{
  g_autoptr(GTestDBus) bus = g_test_dbus_new (G_TEST_DBUS_NONE);
  g_autoptr(GDBusConnection) server = NULL;
  g_autoptr(GDBusConnection) client = NULL;
  g_autoptr(GDBusNodeInfo) info = NULL;
  g_autoptr(GError) late = NULL;
  g_autoptr(GError) first = NULL;
  g_autoptr(GError) second = NULL;
  g_autoptr(GError) failure = NULL;
  Fixture fixture = { 0, };
  guint registration;

  g_assert_cmpuint (paddock_session_commands_get_spawn_deadline_ms (), ==, 50);

  g_test_dbus_up (bus);
  server = new_connection (g_test_dbus_get_bus_address (bus));
  client = new_connection (g_test_dbus_get_bus_address (bus));
  info = g_dbus_node_info_new_for_xml (introspection, NULL);
  fixture.commands = paddock_session_commands_new ();
  g_signal_connect (fixture.commands, "spawn-deadline", G_CALLBACK (spawn_deadline_cb), &fixture);
  registration = g_dbus_connection_register_object (server, "/test", info->interfaces[0], &vtable,
                                                    &fixture, NULL, NULL);
  g_assert_cmpuint (registration, >, 0);

  /* Ids: never 0, never the same twice. */
  g_assert_cmpuint (paddock_session_commands_next_id (fixture.commands), ==, 1);
  g_assert_cmpuint (paddock_session_commands_next_id (fixture.commands), ==, 2);

  /* A call left pending is answered once its deadline passes. */
  fixture.next_id = 7;
  call_wait (client, g_dbus_connection_get_unique_name (server), &late);
  iterate_until_error (&late);
  g_assert_error (late, PADDOCK_ERROR, PADDOCK_ERROR_FAILED);
  g_assert_cmpuint (fixture.n_deadlines, ==, 1);
  g_assert_cmpuint (fixture.deadline_id, ==, 7);
  g_assert_null (paddock_session_commands_get_pending (fixture.commands, 7));

  /* Two calls wait (their deadlines may pass: nobody answers them then);
   * the session's end answers both with its error. */
  fixture.next_id = 8;
  call_wait (client, g_dbus_connection_get_unique_name (server), &first);
  while (paddock_session_commands_get_pending (fixture.commands, 8) == NULL)
    g_main_context_iteration (NULL, TRUE);
  fixture.next_id = 9;
  call_wait (client, g_dbus_connection_get_unique_name (server), &second);
  while (paddock_session_commands_get_pending (fixture.commands, 9) == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_set_error (&failure, PADDOCK_ERROR, PADDOCK_ERROR_BUSY, "Session gone before the command started");
  paddock_session_commands_fail_pending (fixture.commands, failure);
  iterate_until_error (&first);
  iterate_until_error (&second);
  g_assert_error (first, PADDOCK_ERROR, PADDOCK_ERROR_BUSY);
  g_assert_error (second, PADDOCK_ERROR, PADDOCK_ERROR_BUSY);
  g_assert_null (paddock_session_commands_get_pending (fixture.commands, 8));
  g_assert_null (paddock_session_commands_get_pending (fixture.commands, 9));

  g_dbus_connection_unregister_object (server, registration);
  g_clear_object (&fixture.commands);
  g_dbus_connection_close_sync (server, NULL, NULL);
  g_dbus_connection_close_sync (client, NULL, NULL);
  g_clear_object (&server);
  g_clear_object (&client);
  g_test_dbus_down (bus);
}

/* The table keeps at most PADDOCK_SESSION_MAX_COMMANDS_KEPT commands,
 * finished or not; the host pids of each are its own. */
static void
test_quota_and_pids (void)
{
  g_autoptr(GTestDBus) bus = g_test_dbus_new (G_TEST_DBUS_NONE);
  g_autoptr(GDBusConnection) connection = NULL;
  g_autoptr(PaddockSessionCommands) commands = paddock_session_commands_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) pids = NULL;
  g_autoptr(GArray) all = NULL;
  g_autoptr(GPtrArray) listed = NULL;

  g_test_dbus_up (bus);
  connection = new_connection (g_test_dbus_get_bus_address (bus));

  for (guint i = 0; i < PADDOCK_SESSION_MAX_COMMANDS_KEPT; i++)
    {
      guint32 id = paddock_session_commands_next_id (commands);
      g_autofree char *path = g_strdup_printf ("/test/command/%u", id);
      /* No caller: nothing is subscribed for it. */
      g_autoptr(PaddockCommandImpl) command = paddock_command_impl_new (connection, path, id, NULL, FALSE, 0);

      g_assert_true (paddock_session_commands_check_quota (commands, ":1.9", &error));
      g_assert_no_error (error);
      paddock_session_commands_add (commands, command);
    }
  g_assert_false (paddock_session_commands_check_quota (commands, ":1.9", &error));
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_QUOTA_EXCEEDED);
  g_clear_error (&error);
  g_assert_nonnull (paddock_session_commands_lookup (commands, 5));
  listed = paddock_session_commands_dup_all (commands);
  g_assert_cmpuint (listed->len, ==, PADDOCK_SESSION_MAX_COMMANDS_KEPT);
  paddock_session_commands_remove (commands, 5);
  g_assert_null (paddock_session_commands_lookup (commands, 5));
  g_assert_true (paddock_session_commands_check_quota (commands, ":1.9", &error));
  g_assert_no_error (error);

  paddock_session_commands_add_pid (commands, 1000, 3);
  paddock_session_commands_add_pid (commands, 1001, 3);
  paddock_session_commands_add_pid (commands, 2000, 4);
  pids = paddock_session_commands_dup_pids (commands, 3);
  g_assert_cmpuint (pids->len, ==, 2);
  all = paddock_session_commands_dup_pids (commands, 0);
  g_assert_cmpuint (all->len, ==, 3);
  g_assert_cmpuint (paddock_session_commands_take_pid (commands, 2000), ==, 4);
  g_assert_cmpuint (paddock_session_commands_take_pid (commands, 2000), ==, 0);
  g_assert_cmpuint (paddock_session_commands_take_pid (commands, 4242), ==, 0);

  g_clear_pointer (&listed, g_ptr_array_unref);
  g_clear_object (&commands);
  g_dbus_connection_close_sync (connection, NULL, NULL);
  g_clear_object (&connection);
  g_test_dbus_down (bus);
}

int
main (int    argc,
      char **argv)
{
  /* Short deadlines (read at each add_pending), set before any thread. */
  g_setenv ("PADDOCK_TEST_SPAWN_DEADLINE_MS", "50", TRUE);
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/session-commands/pending-and-deadlines", test_pending_and_deadlines);
  g_test_add_func ("/session-commands/quota-and-pids", test_quota_and_pids);

  return g_test_run ();
}
