/* paddock-test-client.c — the daemon as the tests and benches call it:
 * the generated proxies, one create-session, properties, destroy, lease,
 * and one way to fail (a test asserts, a bench destroys what it made)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "paddock-test-client.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "paddock-error.h"

#define DAEMON_NAME "org.paddock.Daemon"
#define DAEMON_PATH "/org/paddock/Daemon"

/* Long enough for a loaded machine: a sanitizer build on two busy cores
 * making a sandbox. */
#define CALL_TIMEOUT_MS 60000

typedef struct {
  GDBusConnection *connection;
  char            *path;
} Made;

typedef struct {
  GDestroyNotify cleanup;
  gpointer       data;
} Cleanup;

static PaddockTestFailMode fail_mode = PADDOCK_TEST_FAIL_ASSERT;
static char *program_name;
/* The sessions made through this library while benches bail, newest last,
 * and the bench's own cleanups, run after them, newest first. */
static GPtrArray *made;
static GArray *cleanups;
static gboolean bailing;

static void
made_free (gpointer data)
{
  Made *m = data;

  g_object_unref (m->connection);
  g_free (m->path);
  g_free (m);
}

/* MODE for every later failure of a helper of this library; PROGRAM names
 * the bench in what it prints when it bails. */
void
paddock_test_set_fail_mode (PaddockTestFailMode  mode,
                            const char          *program)
{
  fail_mode = mode;
  g_free (program_name);
  program_name = g_strdup (program);
  if (mode == PADDOCK_TEST_FAIL_BAIL && made == NULL)
    made = g_ptr_array_new_with_free_func (made_free);
}

/* CLEANUP (DATA) runs when the bench bails, after its sessions are
 * destroyed: the daemon under test stopped, a marker file removed. */
void
paddock_test_on_bail (GDestroyNotify cleanup,
                      gpointer       data)
{
  Cleanup c = { cleanup, data };

  if (cleanups == NULL)
    cleanups = g_array_new (FALSE, FALSE, sizeof (Cleanup));
  g_array_append_val (cleanups, c);
}

/* Destroys every session made through this library that is still there
 * (a bench's last step, and what bailing does first). */
void
paddock_test_destroy_made (void)
{
  while (made != NULL && made->len > 0)
    {
      Made *m = g_ptr_array_index (made, made->len - 1);
      g_autoptr(GDBusConnection) connection = g_object_ref (m->connection);
      g_autofree char *path = g_strdup (m->path);
      g_autoptr(GError) error = NULL;

      /* Removes it from the list, whatever the answer. */
      if (!paddock_test_destroy_session (connection, path, NULL, &error))
        g_printerr ("%s: Destroy %s: %s\n", program_name ? program_name : g_get_prgname (), path,
                    error->message);
    }
}

/* A bench's one way out on failure: what it made destroyed, its cleanups
 * run, FORMAT printed, exit status 1. A test calling this fails. */
void
paddock_test_bail (const char *format,
                   ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  if (fail_mode == PADDOCK_TEST_FAIL_ASSERT)
    g_error ("%s", message);

  g_printerr ("%s: %s\n", program_name ? program_name : g_get_prgname (), message);
  /* A failure while cleaning up after a failure must not loop. */
  if (!bailing)
    {
      bailing = TRUE;
      paddock_test_destroy_made ();
      while (cleanups != NULL && cleanups->len > 0)
        {
          Cleanup c = g_array_index (cleanups, Cleanup, cleanups->len - 1);

          g_array_remove_index (cleanups, cleanups->len - 1);
          c.cleanup (c.data);
        }
    }
  exit (EXIT_FAILURE);
}

/* ERROR from WHAT fails the test, or bails the bench. */
static void
fail_on_error (const char *what,
               GError     *error)
{
  if (error == NULL)
    return;
  if (fail_mode == PADDOCK_TEST_FAIL_BAIL)
    paddock_test_bail ("%s: %s", what, error->message);
  g_assert_no_error (error);
}

/* The proxies: made for one call each (a test restarts its daemon, and a
 * proxy sends to the name's owner when it was made), without loading or
 * watching properties: a test reads them fresh (paddock_test_*_property).
 * Not started at construction either: a call starts an activatable daemon
 * as g_dbus_connection_call() would, and a test that wants none gets none.
 * No match rule: a proxy lives for one call, so the owner's changes need
 * no watching, and a bench's figure gets no AddMatch/RemoveMatch in it
 * (one GetNameOwner to the bus stays). Registering PADDOCK_ERROR first
 * makes the daemon's errors come back in it rather than as
 * G_IO_ERROR_DBUS_ERROR. */
static gpointer
new_proxy (GType               type,
           GDBusInterfaceInfo *info,
           GDBusConnection    *connection,
           const char         *name,
           const char         *path)
{
  g_autoptr(GError) error = NULL;
  GDBusProxy *proxy;

  (void) paddock_error_quark ();
  proxy = g_initable_new (type, NULL, &error,
                          "g-flags", G_DBUS_PROXY_FLAGS_DO_NOT_LOAD_PROPERTIES |
                                     G_DBUS_PROXY_FLAGS_DO_NOT_CONNECT_SIGNALS |
                                     G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START_AT_CONSTRUCTION |
                                     G_DBUS_PROXY_FLAGS_NO_MATCH_RULE,
                          "g-name", name, "g-connection", connection, "g-object-path", path,
                          "g-interface-name", info->name, NULL);
  if (error != NULL)
    {
      g_autofree char *what = g_strdup_printf ("a %s proxy for %s", info->name, path);

      fail_on_error (what, error);
    }
  g_dbus_proxy_set_default_timeout (proxy, CALL_TIMEOUT_MS);
  return proxy;
}

PaddockIpcManager1 *
paddock_test_manager (GDBusConnection *connection)
{
  return new_proxy (PADDOCK_IPC_TYPE_MANAGER1_PROXY, paddock_ipc_manager1_interface_info (), connection,
                    DAEMON_NAME, DAEMON_PATH);
}

PaddockIpcPorts1 *
paddock_test_ports (GDBusConnection *connection)
{
  return new_proxy (PADDOCK_IPC_TYPE_PORTS1_PROXY, paddock_ipc_ports1_interface_info (), connection,
                    DAEMON_NAME, DAEMON_PATH);
}

PaddockIpcSession1 *
paddock_test_session (GDBusConnection *connection,
                      const char      *path)
{
  return new_proxy (PADDOCK_IPC_TYPE_SESSION1_PROXY, paddock_ipc_session1_interface_info (), connection,
                    DAEMON_NAME, path);
}

PaddockIpcCommand1 *
paddock_test_command (GDBusConnection *connection,
                      const char      *path)
{
  return new_proxy (PADDOCK_IPC_TYPE_COMMAND1_PROXY, paddock_ipc_command1_interface_info (), connection,
                    DAEMON_NAME, path);
}

/* Command1's METHOD on PATH with PARAMETERS (floating, or NULL), sent to
 * the daemon SESSION's proxy talks to, checked against the generated
 * interface as a proxy would check it: METHOD must be one of Command1's,
 * the reply has its out arguments' types. No proxy per command: one made
 * and freed costs about 200 us of the client's CPU (bench-exec's "client"
 * part, measured), which a bench timing a command per round cannot carry. */
GVariant *
paddock_test_command_call (PaddockIpcSession1  *session,
                           const char          *path,
                           const char          *method,
                           GVariant            *parameters,
                           GError             **error)
{
  GDBusInterfaceInfo *info = paddock_ipc_command1_interface_info ();
  GDBusMethodInfo *method_info = g_dbus_interface_info_lookup_method (info, method);
  GDBusProxy *proxy = G_DBUS_PROXY (session);
  g_autofree char *owner = g_dbus_proxy_get_name_owner (proxy);
  g_autoptr(GString) reply_type = g_string_new ("(");

  if (method_info == NULL)
    paddock_test_bail ("%s has no method %s", info->name, method);
  for (guint i = 0; method_info->out_args != NULL && method_info->out_args[i] != NULL; i++)
    g_string_append (reply_type, method_info->out_args[i]->signature);
  g_string_append_c (reply_type, ')');
  return g_dbus_connection_call_sync (g_dbus_proxy_get_connection (proxy), owner != NULL ? owner : DAEMON_NAME,
                                      path, info->name, method, parameters, G_VARIANT_TYPE (reply_type->str),
                                      G_DBUS_CALL_FLAGS_NONE, CALL_TIMEOUT_MS, NULL, error);
}

/* CreateSession's options: @profile in @workspace running @argv, with the
 * options of @extra (a floating or owned a{sv}, or NULL) added after them.
 * A NULL @profile or @argv leaves that option out: the daemon's default,
 * or an agent preset's ("agent" in @extra). Returns a floating a{sv}. */
GVariant *
paddock_test_session_options (const char         *workspace,
                              const char         *profile,
                              const char * const *argv,
                              GVariant           *extra)
{
  GVariantBuilder options;

  g_variant_builder_init (&options, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&options, "{sv}", "workspace", g_variant_new_bytestring (workspace));
  if (argv != NULL)
    g_variant_builder_add (&options, "{sv}", "command", g_variant_new_bytestring_array (argv, -1));
  if (profile != NULL)
    g_variant_builder_add (&options, "{sv}", "profile", g_variant_new_string (profile));
  if (extra != NULL)
    {
      GVariantIter iter;
      const char *key;
      GVariant *value;

      g_variant_ref_sink (extra);
      g_variant_iter_init (&iter, extra);
      while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
        {
          g_variant_builder_add (&options, "{sv}", key, value);
          g_variant_unref (value);
        }
      g_variant_unref (extra);
    }
  return g_variant_builder_end (&options);
}

/* A session at PATH on CONNECTION to destroy when a bench bails. */
void
paddock_test_track_session (GDBusConnection *connection,
                            const char      *path)
{
  Made *m;

  if (made == NULL)
    return;
  m = g_new0 (Made, 1);
  m->connection = g_object_ref (connection);
  m->path = g_strdup (path);
  g_ptr_array_add (made, m);
}

static void
untrack_session (GDBusConnection *connection,
                 const char      *path)
{
  for (guint i = 0; made != NULL && i < made->len; i++)
    {
      Made *m = g_ptr_array_index (made, i);

      if (m->connection == connection && g_str_equal (m->path, path))
        {
          g_ptr_array_remove_index (made, i);
          return;
        }
    }
}

/* The one CreateSession: @profile in @workspace running @argv, with
 * @extra's options; returns the session's object path, or NULL with
 * @error set. A bench's session is destroyed when it bails. */
char *
paddock_test_create_session_argv (GDBusConnection     *connection,
                                  const char          *workspace,
                                  const char          *profile,
                                  const char * const  *argv,
                                  GVariant            *extra,
                                  GError             **error)
{
  g_autoptr(PaddockIpcManager1) manager = paddock_test_manager (connection);
  char *path = NULL;

  if (!paddock_ipc_manager1_call_create_session_sync (manager,
                                                      paddock_test_session_options (workspace, profile, argv, extra),
                                                      &path, NULL, error))
    return NULL;
  paddock_test_track_session (connection, path);
  return path;
}

/* CreateSession running `sh -c SCRIPT`. */
char *
paddock_test_create_session (GDBusConnection  *connection,
                             const char       *workspace,
                             const char       *profile,
                             const char       *script,
                             GVariant         *extra,
                             GError          **error)
{
  const char *argv[] = { "sh", "-c", script, NULL };

  return paddock_test_create_session_argv (connection, workspace, profile, argv, extra, error);
}

/* paddock_test_create_session_argv(), failing the test or bailing the
 * bench when the daemon refuses. */
char *
paddock_test_create_session_or_fail (GDBusConnection    *connection,
                                     const char         *workspace,
                                     const char         *profile,
                                     const char * const *argv,
                                     GVariant           *extra)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *what = g_strdup_printf ("CreateSession (%s profile)", profile);
  char *path = paddock_test_create_session_argv (connection, workspace, profile, argv, extra, &error);

  fail_on_error (what, error);
  return path;
}

/* paddock_test_create_session(), with the test skipped (and NULL
 * returned) where this machine cannot enforce the profile; any other
 * error fails the test. */
char *
paddock_test_create_session_or_skip (GDBusConnection *connection,
                                     const char      *workspace,
                                     const char      *profile,
                                     const char      *script,
                                     GVariant        *extra)
{
  g_autoptr(GError) error = NULL;
  char *path = NULL;

  path = paddock_test_create_session (connection, workspace, profile, script, extra, &error);
  if (g_error_matches (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED))
    {
      g_test_skip (error->message);
      return NULL;
    }
  g_assert_no_error (error);
  return path;
}

/* CreateSession, answered asynchronously (@callback finishes it with
 * paddock_test_create_session_finish()), with @fds (or NULL) sent with
 * the call: for options of type h, such as "terminal". The generated
 * call has no fd list (CreateSession is not annotated UnixFD), so this
 * goes through the same proxy's fd-list call. */
void
paddock_test_create_session_async (GDBusConnection     *connection,
                                   const char          *workspace,
                                   const char          *profile,
                                   const char * const  *argv,
                                   GVariant            *extra,
                                   GUnixFDList         *fds,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  g_autoptr(PaddockIpcManager1) manager = paddock_test_manager (connection);

  g_dbus_proxy_call_with_unix_fd_list (G_DBUS_PROXY (manager), "CreateSession",
                                       g_variant_new ("(@a{sv})",
                                                      paddock_test_session_options (workspace, profile, argv, extra)),
                                       G_DBUS_CALL_FLAGS_NONE, CALL_TIMEOUT_MS, fds, NULL, callback, user_data);
}

/* The session's path from paddock_test_create_session_async()'s RESULT,
 * or NULL with @error set. */
char *
paddock_test_create_session_finish (GAsyncResult  *result,
                                    GError       **error)
{
  GDBusProxy *proxy = G_DBUS_PROXY (g_async_result_get_source_object (result));
  g_autoptr(GVariant) reply = NULL;
  char *path = NULL;

  reply = g_dbus_proxy_call_with_unix_fd_list_finish (proxy, NULL, result, error);
  if (reply != NULL)
    {
      if (!g_variant_is_of_type (reply, G_VARIANT_TYPE ("(o)")))
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "CreateSession answered %s",
                     g_variant_get_type_string (reply));
      else
        {
          g_variant_get (reply, "(o)", &path);
          paddock_test_track_session (g_dbus_proxy_get_connection (proxy), path);
        }
    }
  g_object_unref (proxy);
  return path;
}

/* Property NAME of PROXY's interface, read from the daemon now (not from
 * a cache), or NULL with @error set when the daemon does not answer. A
 * name the interface lacks, or a value of another type than the XML says,
 * fails the test: the test is wrong, or the daemon is. */
GVariant *
paddock_test_read_property (GDBusProxy  *proxy,
                            const char  *name,
                            GError     **error)
{
  GDBusInterfaceInfo *info = g_dbus_proxy_get_interface_info (proxy);
  GDBusPropertyInfo *property = g_dbus_interface_info_lookup_property (info, name);
  g_autoptr(GVariant) reply = NULL;
  GVariant *value = NULL;

  if (property == NULL)
    paddock_test_bail ("%s has no property %s", info->name, name);
  reply = g_dbus_proxy_call_sync (proxy, "org.freedesktop.DBus.Properties.Get",
                                  g_variant_new ("(ss)", info->name, name), G_DBUS_CALL_FLAGS_NONE,
                                  CALL_TIMEOUT_MS, NULL, error);
  if (reply == NULL)
    return NULL;
  g_variant_get (reply, "(v)", &value);
  if (!g_variant_is_of_type (value, G_VARIANT_TYPE (property->signature)))
    paddock_test_bail ("%s of %s: %s, not %s", name, g_dbus_proxy_get_object_path (proxy),
                       g_variant_get_type_string (value), property->signature);
  return value;
}

static GVariant *
read_property (GDBusProxy *proxy,
               const char *name)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *what = g_strdup_printf ("Get %s of %s", name, g_dbus_proxy_get_object_path (proxy));
  GVariant *value = paddock_test_read_property (proxy, name, &error);

  fail_on_error (what, error);
  return value;
}

/* Session1's property NAME of the session at PATH. */
GVariant *
paddock_test_session_property (GDBusConnection *connection,
                               const char      *path,
                               const char      *name)
{
  g_autoptr(PaddockIpcSession1) session = paddock_test_session (connection, path);

  return read_property (G_DBUS_PROXY (session), name);
}

/* Command1's property NAME of the command at PATH. */
GVariant *
paddock_test_command_property (GDBusConnection *connection,
                               const char      *path,
                               const char      *name)
{
  g_autoptr(PaddockIpcCommand1) command = paddock_test_command (connection, path);

  return read_property (G_DBUS_PROXY (command), name);
}

/* The session's MainPid: its agent's (host) or its sandbox helper's. */
GPid
paddock_test_session_main_pid (GDBusConnection *connection,
                               const char      *path)
{
  g_autoptr(GVariant) value = paddock_test_session_property (connection, path, "MainPid");

  return (GPid) g_variant_get_uint32 (value);
}

/* Session1.Destroy of PATH; its result (survivors, elapsed-ms) in
 * @out_result. The session is no longer one to destroy on bail, whatever
 * the answer. */
gboolean
paddock_test_destroy_session (GDBusConnection  *connection,
                              const char       *path,
                              GVariant        **out_result,
                              GError          **error)
{
  g_autoptr(PaddockIpcSession1) session = paddock_test_session (connection, path);

  untrack_session (connection, path);
  return paddock_ipc_session1_call_destroy_sync (session, out_result, NULL, error);
}

/* Destroy, failing the test or bailing the bench unless the daemon
 * answers that no process of the session survived. */
void
paddock_test_destroy_or_fail (GDBusConnection *connection,
                              const char      *path)
{
  g_autoptr(GVariant) result = NULL;
  g_autoptr(GError) error = NULL;
  guint32 survivors = G_MAXUINT32;

  paddock_test_destroy_session (connection, path, &result, &error);
  fail_on_error ("Destroy", error);
  g_variant_lookup (result, "survivors", "u", &survivors);
  if (survivors != 0)
    paddock_test_bail ("Destroy %s: %u processes survived", path, survivors);
}

/* Ports1.Lease of NAME (PREFERRED, or 0 for any), with OPTIONS (floating,
 * or NULL for none); returns the lease's a{sv} and its socket in @out_fd
 * (or closes it when @out_fd is NULL), or NULL with @error set. */
GVariant *
paddock_test_lease (GDBusConnection  *connection,
                    const char       *name,
                    guint16           preferred,
                    GVariant         *options,
                    int              *out_fd,
                    GError          **error)
{
  g_autoptr(PaddockIpcPorts1) ports = paddock_test_ports (connection);
  g_autoptr(GUnixFDList) fds = NULL;
  g_autoptr(GVariant) handle = NULL;
  g_autoptr(GError) local_error = NULL;
  GVariant *lease = NULL;
  int fd;

  if (options == NULL)
    options = g_variant_new ("a{sv}", NULL);
  if (!paddock_ipc_ports1_call_lease_sync (ports, name, preferred, options, NULL, &lease, &handle, &fds, NULL,
                                           error))
    return NULL;
  fd = g_unix_fd_list_get (fds, g_variant_get_handle (handle), &local_error);
  fail_on_error ("Lease's socket", local_error);
  if (out_fd != NULL)
    *out_fd = fd;
  else
    close (fd);
  return lease;
}

/* Ports1.LeaseMany of COUNT for NAME; returns the (leases, sockets) pair
 * as (aa{sv}ah) with the fds in @out_fds, or NULL with @error set. */
GVariant *
paddock_test_lease_many (GDBusConnection  *connection,
                         const char       *name,
                         guint             count,
                         GUnixFDList     **out_fds,
                         GError          **error)
{
  g_autoptr(PaddockIpcPorts1) ports = paddock_test_ports (connection);
  g_autoptr(GVariant) leases = NULL;
  g_autoptr(GVariant) sockets = NULL;

  if (!paddock_ipc_ports1_call_lease_many_sync (ports, name, count, g_variant_new ("a{sv}", NULL), NULL, &leases,
                                                &sockets, out_fds, NULL, error))
    return NULL;
  return g_variant_ref_sink (g_variant_new ("(@aa{sv}@ah)", leases, sockets));
}

/* Ports1.Release of PORT. */
gboolean
paddock_test_release (GDBusConnection  *connection,
                      guint16           port,
                      GError          **error)
{
  g_autoptr(PaddockIpcPorts1) ports = paddock_test_ports (connection);

  return paddock_ipc_ports1_call_release_sync (ports, port, NULL, error);
}

/* Ports1.ListLeases: every lease, as aa{sv}. */
GVariant *
paddock_test_list_leases (GDBusConnection *connection)
{
  g_autoptr(PaddockIpcPorts1) ports = paddock_test_ports (connection);
  g_autoptr(GError) error = NULL;
  GVariant *leases = NULL;

  paddock_ipc_ports1_call_list_leases_sync (ports, &leases, NULL, &error);
  fail_on_error ("ListLeases", error);
  return leases;
}

/* Manager1.ListSessions: every session, as aa{sv}. */
GVariant *
paddock_test_list_sessions (GDBusConnection *connection)
{
  g_autoptr(PaddockIpcManager1) manager = paddock_test_manager (connection);
  g_autoptr(GError) error = NULL;
  GVariant *sessions = NULL;

  paddock_ipc_manager1_call_list_sessions_sync (manager, &sessions, NULL, &error);
  fail_on_error ("ListSessions", error);
  return sessions;
}

/* Session1.Attach of PATH with OPTIONS (floating, or NULL for none): the
 * viewer's socket (the caller's to close), the offset of its first byte in
 * @out_first_offset; -1 with @error set when refused. */
int
paddock_test_attach (GDBusConnection  *connection,
                     const char       *path,
                     GVariant         *options,
                     guint64          *out_first_offset,
                     GError          **error)
{
  g_autoptr(PaddockIpcSession1) session = paddock_test_session (connection, path);
  g_autoptr(GUnixFDList) fds = NULL;
  g_autoptr(GVariant) handle = NULL;
  guint64 first_offset = 0;

  if (options == NULL)
    options = g_variant_new ("a{sv}", NULL);
  if (!paddock_ipc_session1_call_attach_sync (session, options, NULL, &handle, &first_offset, &fds, NULL, error))
    return -1;
  if (out_first_offset != NULL)
    *out_first_offset = first_offset;
  return g_unix_fd_list_get (fds, g_variant_get_handle (handle), error);
}
