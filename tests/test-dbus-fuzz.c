/* test-dbus-fuzz.c — every method of the daemon called with generated bad arguments
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Walks the introspection data of Manager1, Ports1, Session1 and Command1
 * (the generated code's, so a method added later is called too) and calls
 * each method many times with arguments of its own signature made to hurt:
 * bytestrings with NULs inside, invalid UTF-8, 64 KiB paths, relative
 * paths, unknown and mistyped option keys, environment names with "=",
 * empty and huge arrays, extreme numbers, handles that index nothing.
 * Every answer must be a success or a typed org.paddock.Error (never a
 * timeout, a generic failure of the bus, or silence), and the daemon,
 * which runs with fatal warnings and criticals (G_DEBUG from the test
 * environment), must still be serving after each method. The generator is
 * seeded (the seed is printed) so a failure can be replayed with
 * PADDOCK_FUZZ_SEED.
 */

#include "config.h"

#include <fcntl.h>
#include <gio/gunixfdlist.h>
#include <string.h>
#include <unistd.h>

#include "paddock-error.h"
#include "paddock-ipc-generated.h"
#include "paddock-test-daemon.h"
#include "paddock-test-session.h"

#define CALLS_PER_METHOD 40

/* Keys the daemon's a{sv} arguments take, so that generated options hit
 * known keys with wrong types and values as often as unknown ones. */
static const char *const option_keys[] = {
  "workspace", "command", "name", "profile", "net", "ports", "reserved-ports", "port-handover", "allow-domains",
  "env", "expose", "pids-max", "memory-max", "allow-write", "pass-env", "terminal", "columns",
  "rows", "offset", "input", "stdin", "tty", "shared", "session", "port", "agent", "token",
  "paths", "force_paths", "metadata_paths", "bogus", "", NULL,
};

static GVariant *make_value (GRand *rand, const GVariantType *type, guint depth);

static GVariant *
make_bytestring (GRand *rand)
{
  static const char *const samples[] = {
    "", "/", "relative/path", "../../../../etc/passwd", "/tmp", "/proc/self/root",
    "\xff\xfe\xfd not UTF-8", "/tmp/\xc3\x28", "a=b", "-rf", "\x1b[2J\x1b]52;c;SGVsbG8=\a",
  };
  guint pick = g_rand_int_range (rand, 0, G_N_ELEMENTS (samples) + 3);

  if (pick < G_N_ELEMENTS (samples))
    return g_variant_new_bytestring (samples[pick]);
  if (pick == G_N_ELEMENTS (samples))
    {
      /* A NUL inside: "/tmp\0/../../etc". */
      static const char with_nul[] = "/tmp\0/../../etc";

      return g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, with_nul, sizeof with_nul, 1);
    }
  if (pick == G_N_ELEMENTS (samples) + 1)
    {
      /* No terminating NUL at all. */
      return g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, "/tmp", 4, 1);
    }
  {
    /* Longer than any path: 64 KiB. */
    gsize length = 64 * 1024;
    g_autofree char *big = g_malloc (length + 1);

    memset (big, 'a', length);
    big[0] = '/';
    big[length] = '\0';
    return g_variant_new_bytestring (big);
  }
}

static GVariant *
make_string (GRand *rand)
{
  static const char *const samples[] = {
    "", "x", "safe", "host", "strict", "none", "proxy", "A=B", "1ABC", "PATH", "with space",
    "../escape", "stdout", "stderr", "tty", "\u202e\u2066", "ünïcödé", "*.example.com",
  };
  guint pick = g_rand_int_range (rand, 0, G_N_ELEMENTS (samples) + 1);

  if (pick < G_N_ELEMENTS (samples))
    return g_variant_new_string (samples[pick]);
  {
    g_autofree char *big = g_strnfill (100 * 1024, 'n');

    return g_variant_new_string (big);
  }
}

static guint64
make_number (GRand *rand)
{
  static const guint64 samples[] = {
    0, 1, 2, 15, 16, 24, 80, 1000, 1001, 65535, 65536, G_MAXINT32, (guint64) G_MAXINT32 + 1,
    G_MAXUINT32, G_MAXINT64, G_MAXUINT64,
  };

  return samples[g_rand_int_range (rand, 0, G_N_ELEMENTS (samples))];
}

static GVariant *
make_options (GRand *rand,
              guint  depth)
{
  static const char *const value_types[] = { "s", "u", "b", "t", "q", "ay", "aay", "as", "a{ss}", "i", "h" };
  GVariantBuilder builder;
  guint n = g_rand_int_range (rand, 0, 4);

  g_variant_builder_init (&builder, G_VARIANT_TYPE_VARDICT);
  for (guint i = 0; i < n; i++)
    {
      const char *key = option_keys[g_rand_int_range (rand, 0, G_N_ELEMENTS (option_keys) - 1)];
      const char *type = value_types[g_rand_int_range (rand, 0, G_N_ELEMENTS (value_types))];

      g_variant_builder_add (&builder, "{sv}", key, make_value (rand, G_VARIANT_TYPE (type), depth + 1));
    }
  return g_variant_builder_end (&builder);
}

static GVariant *
make_env (GRand *rand)
{
  static const char *const names[] = { "OK_NAME", "A=B", "", "1X", "WITH SPACE", "LD_PRELOAD", "é" };
  GVariantBuilder builder;
  guint n = g_rand_int_range (rand, 0, 3);

  g_variant_builder_init (&builder, G_VARIANT_TYPE ("a{ss}"));
  for (guint i = 0; i < n; i++)
    g_variant_builder_add (&builder, "{ss}", names[g_rand_int_range (rand, 0, G_N_ELEMENTS (names))], "v");
  return g_variant_builder_end (&builder);
}

static GVariant *
make_value (GRand              *rand,
            const GVariantType *type,
            guint               depth)
{
  if (g_variant_type_equal (type, G_VARIANT_TYPE_BYTESTRING))
    return make_bytestring (rand);
  if (g_variant_type_equal (type, G_VARIANT_TYPE_VARDICT))
    return depth < 2 ? make_options (rand, depth) : g_variant_new ("a{sv}", NULL);
  if (g_variant_type_equal (type, G_VARIANT_TYPE ("a{ss}")))
    return make_env (rand);
  if (g_variant_type_equal (type, G_VARIANT_TYPE_STRING))
    return make_string (rand);
  if (g_variant_type_equal (type, G_VARIANT_TYPE_OBJECT_PATH))
    return g_variant_new_object_path (g_rand_boolean (rand) ? "/" : "/org/paddock/Daemon/session/nope");
  if (g_variant_type_equal (type, G_VARIANT_TYPE_BOOLEAN))
    return g_variant_new_boolean (g_rand_boolean (rand));
  if (g_variant_type_equal (type, G_VARIANT_TYPE_BYTE))
    return g_variant_new_byte ((guchar) make_number (rand));
  if (g_variant_type_equal (type, G_VARIANT_TYPE_UINT16))
    return g_variant_new_uint16 ((guint16) make_number (rand));
  if (g_variant_type_equal (type, G_VARIANT_TYPE_INT16))
    return g_variant_new_int16 ((gint16) make_number (rand));
  if (g_variant_type_equal (type, G_VARIANT_TYPE_UINT32))
    return g_variant_new_uint32 ((guint32) make_number (rand));
  if (g_variant_type_equal (type, G_VARIANT_TYPE_INT32))
    return g_variant_new_int32 ((gint32) make_number (rand));
  if (g_variant_type_equal (type, G_VARIANT_TYPE_UINT64))
    return g_variant_new_uint64 (make_number (rand));
  if (g_variant_type_equal (type, G_VARIANT_TYPE_INT64))
    return g_variant_new_int64 ((gint64) make_number (rand));
  if (g_variant_type_equal (type, G_VARIANT_TYPE_DOUBLE))
    return g_variant_new_double (-1.5);
  if (g_variant_type_equal (type, G_VARIANT_TYPE_HANDLE))
    /* 0 is the /dev/null sent with every call; the others index nothing. */
    return g_variant_new_handle (g_rand_boolean (rand) ? 0 : (gint32) g_rand_int_range (rand, 1, 1000));
  if (g_variant_type_is_array (type))
    {
      const GVariantType *element = g_variant_type_element (type);
      gboolean many = g_rand_int_range (rand, 0, 10) == 0;
      guint n = g_rand_int_range (rand, 0, 4);
      GVariantBuilder builder;

      g_variant_builder_init (&builder, type);
      /* Now and then 5000 items, small ones (5000 64 KiB paths would be
       * a 300 MiB message, over the bus's limit). */
      if (many && g_variant_type_equal (element, G_VARIANT_TYPE_BYTESTRING))
        for (guint i = 0; i < 5000; i++)
          g_variant_builder_add_value (&builder, g_variant_new_bytestring ("x"));
      else if (many && g_variant_type_equal (element, G_VARIANT_TYPE_STRING))
        for (guint i = 0; i < 5000; i++)
          g_variant_builder_add_value (&builder, g_variant_new_string ("x"));
      else
        for (guint i = 0; i < n; i++)
          g_variant_builder_add_value (&builder, make_value (rand, element, depth + 1));
      return g_variant_builder_end (&builder);
    }
  if (g_variant_type_is_tuple (type) || g_variant_type_is_dict_entry (type))
    {
      GVariantBuilder builder;

      g_variant_builder_init (&builder, type);
      for (const GVariantType *item = g_variant_type_first (type); item != NULL; item = g_variant_type_next (item))
        g_variant_builder_add_value (&builder, make_value (rand, item, depth + 1));
      return g_variant_builder_end (&builder);
    }
  if (g_variant_type_equal (type, G_VARIANT_TYPE_VARIANT))
    return g_variant_new_variant (make_string (rand));

  g_error ("No generator for type %.*s", (int) g_variant_type_get_string_length (type),
           g_variant_type_peek_string (type));
}

static GVariant *
make_parameters (GRand                 *rand,
                 const GDBusMethodInfo *method)
{
  GVariantBuilder builder;

  g_variant_builder_init (&builder, G_VARIANT_TYPE_TUPLE);
  for (guint i = 0; method->in_args != NULL && method->in_args[i] != NULL; i++)
    {
      const GDBusArgInfo *arg = method->in_args[i];

      /* Never a real pid: a broken check must not kill what it would. */
      if (g_str_equal (method->name, "KillProcess") && g_str_equal (arg->name, "pid"))
        g_variant_builder_add (&builder, "u", (guint32) (g_rand_boolean (rand) ? 0 : G_MAXUINT32));
      else
        g_variant_builder_add_value (&builder, make_value (rand, G_VARIANT_TYPE (arg->signature), 0));
    }
  return g_variant_builder_end (&builder);
}

/* Methods whose success ends what the others are called on; they are
 * called last, on their own. */
static gboolean
ends_the_object (const char *interface,
                 const char *method)
{
  return (g_str_equal (interface, "org.paddock.Session1") &&
          (g_str_equal (method, "Stop") || g_str_equal (method, "Destroy"))) ||
         (g_str_equal (interface, "org.paddock.Command1") && g_str_equal (method, "Release"));
}

typedef struct
{
  PaddockTestDaemon *daemon;
  GDBusConnection   *connection;
  char              *workspace;
  GRand             *rand;
  guint              calls;
  guint              typed_errors;
} Fixture;

static void
assert_still_serving (Fixture    *fixture,
                      const char *after)
{
  g_autoptr(PaddockIpcManager1) manager = paddock_test_manager (fixture->connection);
  g_autoptr(GVariant) sessions = NULL;
  g_autoptr(GError) error = NULL;

  if (!paddock_ipc_manager1_call_list_sessions_sync (manager, &sessions, NULL, &error))
    g_error ("The daemon stopped serving after %s: %s", after, error->message);
}

static void
call_method (Fixture                  *fixture,
             const char               *object_path,
             const GDBusInterfaceInfo *interface,
             const GDBusMethodInfo    *method)
{
  /* Once it has ended its object, a method would only meet UnknownObject. */
  guint calls = ends_the_object (interface->name, method->name) ? 1 : CALLS_PER_METHOD;

  for (guint n = 0; n < calls; n++)
    {
      g_autoptr(GVariant) parameters = g_variant_ref_sink (make_parameters (fixture->rand, method));
      g_autoptr(GUnixFDList) fds = g_unix_fd_list_new ();
      g_autoptr(GVariant) reply = NULL;
      g_autoptr(GError) error = NULL;
      int null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);

      g_assert_cmpint (null_fd, >=, 0);
      g_unix_fd_list_append (fds, null_fd, NULL);
      close (null_fd);

      reply = g_dbus_connection_call_with_unix_fd_list_sync (fixture->connection, "org.paddock.Daemon", object_path,
                                                             interface->name, method->name, parameters, NULL,
                                                             G_DBUS_CALL_FLAGS_NONE, 30000, fds, NULL, NULL,
                                                             &error);
      fixture->calls++;
      if (error != NULL)
        {
          g_autofree char *remote = g_dbus_error_get_remote_error (error);
          g_autofree char *shown = g_variant_print (parameters, TRUE);

          if (strlen (shown) > 300)
            strcpy (shown + 297, "...");
          /* A typed error of ours, or the bus's own refusal of a message
           * whose handle indexes nothing in its fd list. */
          if (remote == NULL ||
              !(g_str_has_prefix (remote, "org.paddock.Error.") ||
                g_str_equal (remote, "org.freedesktop.DBus.Error.InvalidArgs")))
            g_error ("%s.%s%s answered %s: %s", interface->name, method->name, shown,
                     remote != NULL ? remote : "no D-Bus error", error->message);
          if (g_str_equal (remote, "org.paddock.Error.Failed"))
            g_test_message ("%s.%s%s: a generic Failed: %s", interface->name, method->name, shown,
                            error->message);
          fixture->typed_errors++;
        }
    }
  {
    g_autofree char *after = g_strdup_printf ("%s.%s", interface->name, method->name);

    assert_still_serving (fixture, after);
  }
}

static void
call_interface (Fixture                  *fixture,
                const char               *object_path,
                const GDBusInterfaceInfo *interface,
                gboolean                  last_ones)
{
  for (guint i = 0; interface->methods != NULL && interface->methods[i] != NULL; i++)
    {
      const GDBusMethodInfo *method = interface->methods[i];

      if (ends_the_object (interface->name, method->name) == last_ones)
        call_method (fixture, object_path, interface, method);
    }
}

static char *
start_command (Fixture    *fixture,
               const char *session)
{
  const char *argv[] = { "sleep", "600", NULL };
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;
  char *path = NULL;

  reply = paddock_test_call (fixture->connection, session, "org.paddock.Session1", "Exec",
                             g_variant_new ("(^aay^ay@a{ss}ub)", argv, "", g_variant_new ("a{ss}", NULL), 0, FALSE),
                             G_VARIANT_TYPE ("(o)"), &error);
  g_assert_no_error (error);
  g_variant_get (reply, "(o)", &path);
  return path;
}

static void
test_every_method (void)
{
  Fixture fixture = { 0, };
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *session = NULL;
  g_autofree char *command = NULL;
  const char *seed_text = g_getenv ("PADDOCK_FUZZ_SEED");
  guint32 seed = seed_text != NULL ? (guint32) g_ascii_strtoull (seed_text, NULL, 10) : g_random_int ();

  g_test_message ("seed %u (replay with PADDOCK_FUZZ_SEED=%u)", seed, seed);
  fixture.rand = g_rand_new_with_seed (seed);
  fixture.daemon = daemon;
  fixture.connection = paddock_test_daemon_get_connection (daemon);
  fixture.workspace = g_dir_make_tmp ("paddock-fuzz-XXXXXX", &error);
  g_assert_no_error (error);

  /* A host session (it needs nothing of the machine) with a command. */
  session = paddock_test_create_session (fixture.connection, fixture.workspace, "host", "sleep 600", NULL, &error);
  g_assert_no_error (error);
  command = start_command (&fixture, session);

  call_interface (&fixture, "/org/paddock/Daemon", paddock_ipc_manager1_interface_info (), FALSE);
  call_interface (&fixture, "/org/paddock/Daemon", paddock_ipc_ports1_interface_info (), FALSE);
  call_interface (&fixture, session, paddock_ipc_session1_interface_info (), FALSE);
  call_interface (&fixture, command, paddock_ipc_command1_interface_info (), FALSE);
  call_interface (&fixture, command, paddock_ipc_command1_interface_info (), TRUE);
  call_interface (&fixture, session, paddock_ipc_session1_interface_info (), TRUE);

  g_test_message ("%u calls, %u answered with a typed error", fixture.calls, fixture.typed_errors);
  /* Most generated calls are wrong somewhere: a run where nearly all
   * succeeded would mean the generator is not reaching the checks. */
  g_assert_cmpuint (fixture.typed_errors, >, fixture.calls / 2);
  assert_still_serving (&fixture, "every method");
  g_assert_true (paddock_test_daemon_is_running (daemon));

  paddock_test_daemon_stop (daemon);
  g_rand_free (fixture.rand);
  {
    g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", fixture.workspace);
    g_assert_cmpint (system (rm), ==, 0);
  }
  g_free (fixture.workspace);
}

/* The checks of paddock-dbus-checks.c, one by one, with what a user sees. */
static void
test_named_arguments (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = NULL;
  g_autofree char *workspace = NULL;
  g_autofree char *session = NULL;
  g_autofree char *command = NULL;
  GDBusConnection *connection;
  static const char nul_cwd[] = "/tmp\0/../etc";
  const char *argv[] = { "true", NULL };
  Fixture fixture = { 0, };

  connection = paddock_test_daemon_get_connection (daemon);
  workspace = g_dir_make_tmp ("paddock-fuzz-XXXXXX", &error);
  g_assert_no_error (error);
  session = paddock_test_create_session (connection, workspace, "host", "sleep 600", NULL, &error);
  g_assert_no_error (error);

  /* A NUL inside a folder: refused, naming the argument. */
  reply = paddock_test_call (connection, session, "org.paddock.Session1", "Run",
                             g_variant_new ("(^aay@ay@a{ss}u@a{sv})", argv,
                                            g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, nul_cwd, sizeof nul_cwd, 1),
                                            g_variant_new ("a{ss}", NULL), 0, g_variant_new ("a{sv}", NULL)),
                             NULL, &error);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "“cwd”"));
  g_clear_error (&error);

  /* An environment name with "=": refused, naming it. */
  {
    GVariantBuilder env;

    g_variant_builder_init (&env, G_VARIANT_TYPE ("a{ss}"));
    g_variant_builder_add (&env, "{ss}", "A=B", "c");
    reply = paddock_test_call (connection, session, "org.paddock.Session1", "Run",
                               g_variant_new ("(^aay^ay@a{ss}u@a{sv})", argv, "", g_variant_builder_end (&env), 0,
                                              g_variant_new ("a{sv}", NULL)),
                               NULL, &error);
    g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "A=B"));
    g_clear_error (&error);
  }

  /* A folder longer than PATH_MAX: a typed error that says so. */
  {
    g_autofree char *long_cwd = g_strnfill (1024 * 1024, 'a');

    long_cwd[0] = '/';
    reply = paddock_test_call (connection, session, "org.paddock.Session1", "Run",
                               g_variant_new ("(^aay^ay@a{ss}u@a{sv})", argv, long_cwd,
                                              g_variant_new ("a{ss}", NULL), 0, g_variant_new ("a{sv}", NULL)),
                               NULL, &error);
    g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "“cwd”"));
    g_clear_error (&error);
  }

  /* An option Attach does not know is refused, not ignored. */
  {
    GVariantBuilder options;

    g_variant_builder_init (&options, G_VARIANT_TYPE_VARDICT);
    g_variant_builder_add (&options, "{sv}", "ofset", g_variant_new_uint64 (0));
    reply = paddock_test_call (connection, session, "org.paddock.Session1", "Attach",
                               g_variant_new ("(@a{sv})", g_variant_builder_end (&options)), NULL, &error);
    g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "ofset"));
    g_clear_error (&error);
  }

  /* A missing workspace whose name is not UTF-8: a typed error, and the
   * daemon (fatal criticals) still serves. */
  {
    const char *sh[] = { "true", NULL };
    g_autofree char *path = paddock_test_create_session_argv (connection, "/nonexistent/\xff\xfe", "host", sh,
                                                              NULL, &error);

    g_assert_null (path);
    g_assert_nonnull (error);
    if (error->domain != PADDOCK_ERROR)
      g_error ("CreateSession in a missing non-UTF-8 folder: %s", error->message);
    g_clear_error (&error);
  }

  /* A command is its caller's: another client may not read, type into,
   * kill or release it. */
  command = start_command (&(Fixture) { .connection = connection }, session);
  {
    g_autoptr(GDBusConnection) other = paddock_test_daemon_new_connection (daemon);
    struct { const char *method; GVariant *parameters; } calls[] = {
      { "ReadOutput", g_variant_new ("(stu)", "stdout", (guint64) 0, 1024) },
      { "WriteStdin", g_variant_new ("(@ayb)", g_variant_new_bytestring ("x"), FALSE) },
      { "Kill", g_variant_new ("(u)", 9) },
      { "Release", NULL },
    };

    for (guint i = 0; i < G_N_ELEMENTS (calls); i++)
      {
        reply = paddock_test_call (other, command, "org.paddock.Command1", calls[i].method, calls[i].parameters,
                                   NULL, &error);
        g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_ACCESS_DENIED);
        g_clear_error (&error);
      }
    /* Its own caller still may. */
    reply = paddock_test_call (connection, command, "org.paddock.Command1", "ReadOutput",
                               g_variant_new ("(stu)", "stdout", (guint64) 0, 1024), NULL, &error);
    g_assert_no_error (error);
  }

  fixture.connection = connection;
  assert_still_serving (&fixture, "the named checks");
  paddock_test_daemon_stop (daemon);
  {
    g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", workspace);
    g_assert_cmpint (system (rm), ==, 0);
  }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* Remote errors come back in the daemon's domain once it is registered. */
  (void) paddock_error_quark ();
  g_test_add_func ("/dbus-fuzz/named-arguments", test_named_arguments);
  g_test_add_func ("/dbus-fuzz/every-method", test_every_method);
  return g_test_run ();
}
