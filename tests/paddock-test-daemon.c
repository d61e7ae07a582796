/* paddock-test-daemon.c — a private bus with paddockd from the build tree
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "paddock-durable-file.h"
#include "paddock-test-daemon.h"

struct _PaddockTestDaemon
{
  GSubprocess     *bus;
  char            *bus_dir;
  char            *bus_address;
  char            *state_dir;
  GStrv            extra_args;
  gboolean         activatable;
  char            *port_range;
  guint16          first_port;
  guint16          last_port;
  GSubprocess     *process;
  GDBusConnection *connection;
};

/* Whether this build has the Linux executor's helper: a portable build
 * (-Dlinux_executor=false) has none, and its daemon refuses every safe or
 * strict session with NotEnforced. */
gboolean
paddock_test_have_sandbox (void)
{
  g_autofree char *helper = paddock_test_build_path ("daemon", "sandbox", "paddock-sandbox", NULL);

  return g_file_test (helper, G_FILE_TEST_IS_EXECUTABLE);
}

char *
paddock_test_build_path (const char *first_element,
                         ...)
{
  const char *root = g_getenv ("PADDOCK_BUILD_ROOT");
  g_autoptr(GPtrArray) parts = g_ptr_array_new ();
  va_list args;

  if (root == NULL)
    g_error ("PADDOCK_BUILD_ROOT is not set: run the tests through meson test");

  g_ptr_array_add (parts, (gpointer) root);
  g_ptr_array_add (parts, (gpointer) first_element);
  va_start (args, first_element);
  for (const char *element = va_arg (args, const char *); element != NULL;
       element = va_arg (args, const char *))
    g_ptr_array_add (parts, (gpointer) element);
  va_end (args);
  g_ptr_array_add (parts, NULL);

  return g_build_filenamev ((char **) parts->pdata);
}

gboolean
paddock_test_wait_for (gboolean (*condition) (gpointer),
                       gpointer   data,
                       guint      timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  while (!condition (data))
    {
      if (g_get_monotonic_time () > deadline)
        return FALSE;
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (5 * 1000);
    }

  return TRUE;
}

static gboolean
name_has_owner (GDBusConnection *connection)
{
  g_autoptr(GVariant) reply = NULL;
  gboolean has_owner = FALSE;

  reply = g_dbus_connection_call_sync (connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "NameHasOwner",
                                       g_variant_new ("(s)", "org.paddock.Daemon"),
                                       G_VARIANT_TYPE ("(b)"), G_DBUS_CALL_FLAGS_NONE,
                                       5000, NULL, NULL);
  if (reply != NULL)
    g_variant_get (reply, "(b)", &has_owner);

  return has_owner;
}

static guint32
name_owner_pid (GDBusConnection *connection)
{
  g_autoptr(GVariant) reply = NULL;
  guint32 pid = 0;

  reply = g_dbus_connection_call_sync (connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "GetConnectionUnixProcessID",
                                       g_variant_new ("(s)", "org.paddock.Daemon"),
                                       G_VARIANT_TYPE ("(u)"), G_DBUS_CALL_FLAGS_NONE,
                                       5000, NULL, NULL);
  if (reply != NULL)
    g_variant_get (reply, "(u)", &pid);

  return pid;
}

/* Serving means: *our* process owns the name (not a daemon it is replacing)
 * and the registry answers (the daemon loads its state right after getting
 * the name). */
static gboolean
daemon_serves (PaddockTestDaemon *self)
{
  g_autoptr(GVariant) reply = NULL;
  const char *identifier = g_subprocess_get_identifier (self->process);

  if (!name_has_owner (self->connection) || identifier == NULL ||
      name_owner_pid (self->connection) != (guint32) g_ascii_strtoull (identifier, NULL, 10))
    return FALSE;

  reply = g_dbus_connection_call_sync (self->connection, "org.paddock.Daemon", "/org/paddock/Daemon",
                                       "org.paddock.Ports1", "ListLeases", NULL,
                                       G_VARIANT_TYPE ("(aa{sv})"), G_DBUS_CALL_FLAGS_NO_AUTO_START,
                                       5000, NULL, NULL);
  return reply != NULL;
}

/* A test that aborts must not leave its daemon holding the test's stdout
 * (meson would wait for it until the timeout). */
static void
die_with_test (gpointer user_data)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

static GSubprocess *
spawn_daemon (PaddockTestDaemon *self,
              gboolean           replace)
{
  g_autofree char *paddockd = paddock_test_build_path ("daemon", "paddockd", NULL);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GError) error = NULL;
  GSubprocess *process;

  g_ptr_array_add (argv, paddockd);
  g_ptr_array_add (argv, (gpointer) "--state-dir");
  g_ptr_array_add (argv, self->state_dir);
  /* Verbose logs land in the test log; benchmarks ask for quiet. */
  if (g_getenv ("PADDOCK_TEST_QUIET") == NULL)
    g_ptr_array_add (argv, (gpointer) "--verbose");
  if (replace)
    g_ptr_array_add (argv, (gpointer) "--replace");
  if (self->port_range != NULL)
    {
      g_ptr_array_add (argv, (gpointer) "--port-range");
      g_ptr_array_add (argv, self->port_range);
    }
  for (guint i = 0; self->extra_args != NULL && self->extra_args[i] != NULL; i++)
    g_ptr_array_add (argv, self->extra_args[i]);
  g_ptr_array_add (argv, NULL);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  g_subprocess_launcher_set_child_setup (launcher, die_with_test, NULL, NULL);
  process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);

  return process;
}

/* A deadline for a daemon that is stuck, not a measure of speed: a
 * sanitizer build starting on a 2-core machine busy with other suites has
 * taken over 15 s. */
#define SERVING_DEADLINE_S 60

static void
wait_until_serving (PaddockTestDaemon *self)
{
  gint64 deadline = g_get_monotonic_time () + SERVING_DEADLINE_S * G_USEC_PER_SEC;

  while (!daemon_serves (self))
    {
      if (g_subprocess_get_identifier (self->process) == NULL)
        g_error ("paddockd exited before serving (status %d)",
                 g_subprocess_get_status (self->process));
      if (g_get_monotonic_time () > deadline)
        g_error ("paddockd did not own org.paddock.Daemon within %d s", SERVING_DEADLINE_S);
      g_usleep (10 * 1000);
    }
}

void
paddock_test_daemon_start (PaddockTestDaemon *self)
{
  g_assert_null (self->process);

  self->process = spawn_daemon (self, FALSE);
  wait_until_serving (self);
}

GSubprocess *
paddock_test_daemon_spawn_replacement (PaddockTestDaemon *self)
{
  return spawn_daemon (self, TRUE);
}

/* Takes @process (started with --replace) as the daemon, once it serves,
 * and checks that the daemon it replaced went away cleanly by itself. */
void
paddock_test_daemon_adopt (PaddockTestDaemon *self,
                           GSubprocess       *process)
{
  g_autoptr(GSubprocess) previous = g_steal_pointer (&self->process);
  g_autoptr(GError) error = NULL;

  self->process = g_object_ref (process);
  wait_until_serving (self);

  if (previous != NULL)
    {
      g_subprocess_wait (previous, NULL, &error);
      g_assert_no_error (error);
      g_assert_true (g_subprocess_get_if_exited (previous));
      g_assert_cmpint (g_subprocess_get_exit_status (previous), ==, 0);
    }
}

static void
wait_for_exit (PaddockTestDaemon *self,
               gboolean           expect_clean)
{
  g_autoptr(GError) error = NULL;

  g_subprocess_wait (self->process, NULL, &error);
  g_assert_no_error (error);

  if (expect_clean)
    {
      g_assert_true (g_subprocess_get_if_exited (self->process));
      g_assert_cmpint (g_subprocess_get_exit_status (self->process), ==, 0);
    }

  g_clear_object (&self->process);
}

void
paddock_test_daemon_stop (PaddockTestDaemon *self)
{
  g_assert_nonnull (self->process);

  g_subprocess_send_signal (self->process, SIGTERM);
  wait_for_exit (self, TRUE);
}

/* SIGKILL, as a crash. The sessions' keepers then hold them for the next
 * daemon (re-adoption, test-paddockctl-adopt.sh); paddock_test_daemon_kill()
 * also takes their sockets away, so that what the suites using it check is
 * what a daemon does with a session it cannot adopt: end what is left of
 * it (paddock-session-leftovers.c). */
void
paddock_test_daemon_kill_keeping_sessions (PaddockTestDaemon *self)
{
  g_assert_nonnull (self->process);

  g_subprocess_force_exit (self->process);
  wait_for_exit (self, FALSE);
}

void
paddock_test_daemon_kill (PaddockTestDaemon *self)
{
  g_autofree char *sessions_dir = NULL;
  g_autoptr(GDir) dir = NULL;
  const char *name;

  paddock_test_daemon_kill_keeping_sessions (self);
  sessions_dir = g_build_filename (paddock_test_daemon_get_state_dir (self), "sessions", NULL);
  dir = g_dir_open (sessions_dir, 0, NULL);
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *socket_path = g_build_filename (sessions_dir, name, "keeper.sock", NULL);
      g_autofree char *record_path = g_build_filename (sessions_dir, name, "session.json", NULL);
      g_autofree char *record = NULL;
      const char *named;
      int keeper_pid = 0;
      gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;

      /* A keeper the record names binds its socket once told to hold
       * (asked as the record became durable, maybe not acted on yet): it
       * is unlinked once there, or once the keeper is gone. */
      if (g_file_get_contents (record_path, &record, NULL, NULL) &&
          (named = strstr (record, "\"keeper_pid\"")) != NULL)
        sscanf (named, "\"keeper_pid\" : %d", &keeper_pid);
      while (keeper_pid > 1 && !g_file_test (socket_path, G_FILE_TEST_EXISTS) &&
             kill (keeper_pid, 0) == 0 && g_get_monotonic_time () < deadline)
        g_usleep (10 * 1000);
      g_unlink (socket_path);
    }
}

gboolean
paddock_test_daemon_is_running (PaddockTestDaemon *self)
{
  return self->process != NULL && g_subprocess_get_identifier (self->process) != NULL;
}

/* Our own bus rather than GTestDBus: its watcher process (a fork of the
 * test) outlives a failing test holding the test's stdout, and meson then
 * waits for the timeout instead of reporting the failure. */
static void
start_bus (PaddockTestDaemon *self)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *config_path = NULL;
  g_autofree char *config = NULL;
  g_autofree char *address = NULL;
  g_autofree char *servicedir = NULL;

  self->bus_dir = g_dir_make_tmp ("paddock-bus-XXXXXX", &error);
  g_assert_no_error (error);

  /* An activatable daemon: the bus starts paddockd from the build tree on
   * first use of the name, as the installed .service file makes it do. */
  servicedir = g_build_filename (self->bus_dir, "services", NULL);
  g_assert_no_errno (g_mkdir (servicedir, 0700));
  if (self->activatable)
    {
      g_autofree char *paddockd = paddock_test_build_path ("daemon", "paddockd", NULL);
      g_autofree char *service_path = g_build_filename (servicedir, "org.paddock.Daemon.service", NULL);
      g_autofree char *service = g_strdup_printf ("[D-BUS Service]\n"
                                                  "Name=org.paddock.Daemon\n"
                                                  "Exec=%s --state-dir %s --port-range %s\n",
                                                  paddockd, self->state_dir, self->port_range);

      g_file_set_contents (service_path, service, -1, &error);
      g_assert_no_error (error);
    }

  config = g_strdup_printf ("<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
                            " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                            "<busconfig>\n"
                            "  <type>session</type>\n"
                            "  <listen>unix:dir=%s</listen>\n"
                            "  <servicedir>%s</servicedir>\n"
                            "  <policy context=\"default\">\n"
                            "    <allow send_destination=\"*\" eavesdrop=\"true\"/>\n"
                            "    <allow eavesdrop=\"true\"/>\n"
                            "    <allow own=\"*\"/>\n"
                            "  </policy>\n"
                            "</busconfig>\n", self->bus_dir, servicedir);
  config_path = g_build_filename (self->bus_dir, "bus.conf", NULL);
  g_file_set_contents (config_path, config, -1, &error);
  g_assert_no_error (error);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_subprocess_launcher_set_child_setup (launcher, die_with_test, NULL, NULL);
  self->bus = g_subprocess_launcher_spawn (launcher, &error, "dbus-daemon", "--nofork",
                                           "--print-address=1", "--config-file", config_path,
                                           NULL);
  g_assert_no_error (error);

  out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (self->bus));
  address = g_data_input_stream_read_line (out, NULL, NULL, &error);
  g_assert_no_error (error);
  if (address == NULL)
    g_error ("dbus-daemon exited without printing its address");

  self->bus_address = g_steal_pointer (&address);
  g_setenv ("DBUS_SESSION_BUS_ADDRESS", self->bus_address, TRUE);
}

static void
stop_bus (PaddockTestDaemon *self)
{
  if (self->bus != NULL)
    {
      g_subprocess_send_signal (self->bus, SIGTERM);
      g_subprocess_wait (self->bus, NULL, NULL);
    }
  g_clear_object (&self->bus);

  if (self->bus_dir != NULL)
    {
      g_autofree char *config_path = g_build_filename (self->bus_dir, "bus.conf", NULL);
      g_autofree char *servicedir = g_build_filename (self->bus_dir, "services", NULL);
      g_autofree char *service_path = g_build_filename (servicedir, "org.paddock.Daemon.service", NULL);

      g_unlink (config_path);
      g_unlink (service_path);
      g_rmdir (servicedir);
      g_rmdir (self->bus_dir);
    }
  g_clear_pointer (&self->bus_dir, g_free);
  g_clear_pointer (&self->bus_address, g_free);
}

/* The lowest port a test pool starts at, and the size of the pools
 * paddock_test_daemon_new() gives a daemon whose test sets none (room for
 * test-ports-dbus's 2,000 concurrent leases). */
#define TEST_POOL_FLOOR 10000
#define TEST_POOL_SIZE  2500

/* A pool of @size ports for one test daemon, starting at a random port
 * between TEST_POOL_FLOOR and the kernel's ephemeral range (the daemon
 * warns of an overlap, and the kernel takes ports from there for outgoing
 * connections). A registry hands ports out from the start of its pool
 * onwards, so what makes test runs sharing a machine (a developer's and
 * CI's, several at once, or the user's own daemon on the default
 * 20000-29999) meet is pools that start at the same port: with a random,
 * unaligned start two daemons' ports rarely meet even where their pools
 * overlap. */
char *
paddock_test_port_range_new (guint    size,
                             guint16 *first,
                             guint16 *last)
{
  g_autofree char *contents = NULL;
  guint ephemeral_low = 32768;
  guint start;

  g_assert_cmpuint (size, >=, 1);
  if (g_file_get_contents ("/proc/sys/net/ipv4/ip_local_port_range", &contents, NULL, NULL))
    {
      unsigned int lo = 0;

      if (sscanf (contents, "%u", &lo) == 1 && lo <= G_MAXUINT16)
        ephemeral_low = lo;
    }
  if (ephemeral_low < TEST_POOL_FLOOR + size)
    ephemeral_low = MIN (G_MAXUINT16 + 1u, 20000 + size);  /* a machine set up oddly */
  /* The pid too: tests started within one clock tick (meson starting a
   * suite at once) then differ even if their seeds came out alike. */
  start = TEST_POOL_FLOOR + ((guint) g_random_int () ^ (guint) getpid ()) %
                            (ephemeral_low - TEST_POOL_FLOOR - size + 1);
  g_assert_cmpuint (start + size - 1, <=, G_MAXUINT16);
  if (first != NULL)
    *first = (guint16) start;
  if (last != NULL)
    *last = (guint16) (start + size - 1);
  return g_strdup_printf ("%u-%u", start, start + size - 1);
}

/* Unless the test sets its own pool (then read back from its arguments),
 * each daemon gets a random pool of TEST_POOL_SIZE ports; tests read the
 * pool with paddock_test_daemon_get_first_port()/_get_last_port(). */
static void
choose_port_range (PaddockTestDaemon *self)
{
  for (guint i = 0; self->extra_args != NULL && self->extra_args[i] != NULL; i++)
    if (g_str_equal (self->extra_args[i], "--port-range") && self->extra_args[i + 1] != NULL)
      {
        unsigned int first = 0;
        unsigned int last = 0;

        g_assert_cmpint (sscanf (self->extra_args[i + 1], "%u-%u", &first, &last), ==, 2);
        self->first_port = (guint16) first;
        self->last_port = (guint16) last;
        return;
      }

  self->port_range = paddock_test_port_range_new (TEST_POOL_SIZE, &self->first_port,
                                                  &self->last_port);
}

guint16
paddock_test_daemon_get_first_port (PaddockTestDaemon *self)
{
  return self->first_port;
}

guint16
paddock_test_daemon_get_last_port (PaddockTestDaemon *self)
{
  return self->last_port;
}

PaddockTestDaemon *
paddock_test_daemon_new (const char * const *extra_args)
{
  PaddockTestDaemon *self = g_new0 (PaddockTestDaemon, 1);
  g_autoptr(GError) error = NULL;

  start_bus (self);

  self->state_dir = g_dir_make_tmp ("paddock-test-XXXXXX", &error);
  g_assert_no_error (error);
  self->extra_args = g_strdupv ((char **) extra_args);
  choose_port_range (self);
  self->connection = paddock_test_daemon_new_connection (self);

  paddock_test_daemon_start (self);

  return self;
}

/* A private bus on which paddockd is only activatable: nothing runs until a
 * client uses the name. The activated daemon is the bus's child, not ours:
 * paddock_test_daemon_free() stops it through its pid on the bus. */
PaddockTestDaemon *
paddock_test_daemon_new_activatable (void)
{
  PaddockTestDaemon *self = g_new0 (PaddockTestDaemon, 1);
  g_autoptr(GError) error = NULL;

  self->activatable = TRUE;
  self->state_dir = g_dir_make_tmp ("paddock-test-XXXXXX", &error);
  g_assert_no_error (error);
  choose_port_range (self);
  start_bus (self);
  self->connection = paddock_test_daemon_new_connection (self);

  return self;
}

GDBusConnection *
paddock_test_daemon_get_connection (PaddockTestDaemon *self)
{
  return self->connection;
}

GDBusConnection *
paddock_test_daemon_new_connection (PaddockTestDaemon *self)
{
  g_autoptr(GError) error = NULL;
  GDBusConnection *connection;

  connection = g_dbus_connection_new_for_address_sync (self->bus_address,
                                                       G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                                       G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                                                       NULL, NULL, &error);
  g_assert_no_error (error);
  g_dbus_connection_set_exit_on_close (connection, FALSE);

  return connection;
}

/* Logs the user out and in again, as far as the bus is concerned: a new
 * bus (whose unique names start again at :1.0) and the daemon on it, with
 * the same state dir. Every client connection of the old bus is gone. */
void
paddock_test_daemon_restart_bus (PaddockTestDaemon *self)
{
  if (paddock_test_daemon_is_running (self))
    paddock_test_daemon_stop (self);
  g_clear_object (&self->process);

  g_dbus_connection_close_sync (self->connection, NULL, NULL);
  g_clear_object (&self->connection);
  stop_bus (self);

  start_bus (self);
  self->connection = paddock_test_daemon_new_connection (self);
  paddock_test_daemon_start (self);
}

const char *
paddock_test_daemon_get_address (PaddockTestDaemon *self)
{
  return self->bus_address;
}

const char *
paddock_test_daemon_get_state_dir (PaddockTestDaemon *self)
{
  return self->state_dir;
}

void
paddock_test_daemon_free (PaddockTestDaemon *self)
{
  if (self == NULL)
    return;

  if (paddock_test_daemon_is_running (self))
    paddock_test_daemon_stop (self);
  g_clear_object (&self->process);

  if (self->activatable && self->connection != NULL)
    {
      guint32 pid = name_owner_pid (self->connection);

      /* Stop an activated daemon the way systemd would, and wait for it
       * to let go of the name (and so of its sockets). */
      if (pid != 0)
        {
          gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

          kill ((pid_t) pid, SIGTERM);
          while (name_has_owner (self->connection) && g_get_monotonic_time () < deadline)
            g_usleep (10 * 1000);
        }
    }

  if (self->connection != NULL)
    g_dbus_connection_close_sync (self->connection, NULL, NULL);
  g_clear_object (&self->connection);

  stop_bus (self);
  g_unsetenv ("DBUS_SESSION_BUS_ADDRESS");

  paddock_remove_tree (self->state_dir);
  g_free (self->state_dir);
  g_free (self->port_range);
  g_strfreev (self->extra_args);
  g_free (self);
}

/* A synchronous call to the daemon, with a timeout long enough for a
 * loaded machine (a sanitizer build on two busy cores). Only for what the
 * generated proxies (paddock-test-client.h) cannot send: arguments no C
 * type of theirs holds (a NUL inside a folder, in the fuzz suite), and
 * the standard interfaces (Introspect, Properties.GetAll). */
GVariant *
paddock_test_call (GDBusConnection     *connection,
                   const char          *path,
                   const char          *interface,
                   const char          *method,
                   GVariant            *parameters,
                   const GVariantType  *reply_type,
                   GError             **error)
{
  return g_dbus_connection_call_sync (connection, "org.paddock.Daemon", path, interface, method,
                                      parameters, reply_type, G_DBUS_CALL_FLAGS_NONE, 60000,
                                      NULL, error);
}
