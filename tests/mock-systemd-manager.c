/* mock-systemd-manager.c — a stand-in for the systemd user manager's scopes, for tests
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * This machine has no systemd, so the daemon's request for a delegated
 * scope is tested against this: it owns org.freedesktop.systemd1 on the
 * (private, test) session bus and answers
 * org.freedesktop.systemd1.Manager.StartTransientUnit the way systemd
 * does for a scope (org.freedesktop.systemd1(5), CGROUP_DELEGATION.md):
 * the reply is a job path, the unit's cgroup is made, the PIDs are moved
 * into it, with Delegate=yes the cgroup and its cgroup.procs,
 * cgroup.subtree_control and cgroup.threads are handed to the delegate
 * user, and then JobRemoved(id, job, unit, result) is emitted. Run as
 * root: it makes the scope under --cgroup-parent (a test folder of the
 * cgroup v2 hierarchy) and hands it to --uid/--gid, as the user manager's
 * own cgroups belong to the user.
 *
 * --mode done (the default) does the above; --mode failed emits
 * JobRemoved with "failed" and makes nothing; --mode silent never ends
 * the job. Every call is logged to --log, one line each:
 * "name=… mode=… pids=…,… delegate=true|false|unset description=…".
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char introspection_xml[] =
  "<node>"
  "  <interface name='org.freedesktop.systemd1.Manager'>"
  "    <method name='StartTransientUnit'>"
  "      <arg type='s' name='name' direction='in'/>"
  "      <arg type='s' name='mode' direction='in'/>"
  "      <arg type='a(sv)' name='properties' direction='in'/>"
  "      <arg type='a(sa(sv))' name='aux' direction='in'/>"
  "      <arg type='o' name='job' direction='out'/>"
  "    </method>"
  "    <signal name='JobRemoved'>"
  "      <arg type='u' name='id'/>"
  "      <arg type='o' name='job'/>"
  "      <arg type='s' name='unit'/>"
  "      <arg type='s' name='result'/>"
  "    </signal>"
  "  </interface>"
  "</node>";

static char *cgroup_parent;
static char *log_path;
static char *mode = NULL;
static int delegate_uid = -1;
static int delegate_gid = -1;
static guint32 next_job_id = 1;
static GMainLoop *loop;

typedef struct
{
  GDBusConnection *connection;
  guint32          id;
  char            *job;
  char            *unit;
  char            *result;
} JobEnd;

static void
append_log (const char *line)
{
  FILE *file = fopen (log_path, "ae");

  if (file == NULL)
    return;
  fprintf (file, "%s\n", line);
  fclose (file);
}

static gboolean
write_file (const char *path,
            const char *value)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  gboolean ok;

  if (fd < 0)
    return FALSE;
  ok = write (fd, value, strlen (value)) == (gssize) strlen (value);
  close (fd);
  return ok;
}

/* What systemd does for a started scope: its cgroup, the PIDs in it, and
 * with Delegate=yes the files the delegate may write. */
static gboolean
make_scope (const char  *unit,
            GArray      *pids,
            gboolean     delegate,
            GError     **error)
{
  g_autofree char *path = g_build_filename (cgroup_parent, unit, NULL);
  const char *delegated[] = { "cgroup.procs", "cgroup.subtree_control", "cgroup.threads" };

  if (g_mkdir (path, 0755) != 0)
    {
      int saved_errno = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno), "mkdir %s: %s", path,
                   g_strerror (saved_errno));
      return FALSE;
    }

  for (guint i = 0; i < pids->len; i++)
    {
      g_autofree char *procs = g_build_filename (path, "cgroup.procs", NULL);
      g_autofree char *pid = g_strdup_printf ("%u", g_array_index (pids, guint32, i));

      if (!write_file (procs, pid))
        {
          int saved_errno = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno), "moving %s into %s: %s",
                       pid, path, g_strerror (saved_errno));
          return FALSE;
        }
    }

  if (delegate)
    {
      if (chown (path, (uid_t) delegate_uid, (gid_t) delegate_gid) != 0)
        return FALSE;
      for (guint i = 0; i < G_N_ELEMENTS (delegated); i++)
        {
          g_autofree char *file = g_build_filename (path, delegated[i], NULL);

          if (chown (file, (uid_t) delegate_uid, (gid_t) delegate_gid) != 0)
            {
              int saved_errno = errno;
              g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno), "chown %s: %s",
                           file, g_strerror (saved_errno));
              return FALSE;
            }
        }
    }

  return TRUE;
}

/* After the reply, as systemd's job queue runs after the call returns. */
static gboolean
emit_job_removed (gpointer data)
{
  JobEnd *end = data;

  g_dbus_connection_emit_signal (end->connection, NULL, "/org/freedesktop/systemd1",
                                 "org.freedesktop.systemd1.Manager", "JobRemoved",
                                 g_variant_new ("(uoss)", end->id, end->job, end->unit, end->result), NULL);
  g_object_unref (end->connection);
  g_free (end->job);
  g_free (end->unit);
  g_free (end->result);
  g_free (end);
  return G_SOURCE_REMOVE;
}

static void
handle_method_call (GDBusConnection       *connection,
                    const char            *sender,
                    const char            *object_path,
                    const char            *interface_name,
                    const char            *method_name,
                    GVariant              *parameters,
                    GDBusMethodInvocation *invocation,
                    gpointer               user_data)
{
  const char *unit = NULL;
  const char *job_mode = NULL;
  g_autoptr(GVariantIter) properties = NULL;
  g_autoptr(GVariant) aux = NULL;
  g_autoptr(GArray) pids = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autoptr(GString) pid_list = g_string_new (NULL);
  g_autofree char *description = NULL;
  g_autofree char *line = NULL;
  const char *delegate_text = "unset";
  gboolean delegate = FALSE;
  const char *key;
  GVariant *value;
  JobEnd *end;
  guint32 id;

  g_variant_get (parameters, "(&s&sa(sv)@a(sa(sv)))", &unit, &job_mode, &properties, &aux);
  while (g_variant_iter_loop (properties, "(&sv)", &key, &value))
    {
      if (g_str_equal (key, "PIDs") && g_variant_is_of_type (value, G_VARIANT_TYPE ("au")))
        {
          gsize n = 0;
          const guint32 *items = g_variant_get_fixed_array (value, &n, sizeof (guint32));

          g_array_append_vals (pids, items, (guint) n);
          for (gsize i = 0; i < n; i++)
            g_string_append_printf (pid_list, "%s%u", i > 0 ? "," : "", items[i]);
        }
      else if (g_str_equal (key, "Delegate") && g_variant_is_of_type (value, G_VARIANT_TYPE_BOOLEAN))
        {
          delegate = g_variant_get_boolean (value);
          delegate_text = delegate ? "true" : "false";
        }
      else if (g_str_equal (key, "Description") && g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
        description = g_variant_dup_string (value, NULL);
    }

  line = g_strdup_printf ("name=%s mode=%s pids=%s delegate=%s description=%s", unit, job_mode,
                          pid_list->str, delegate_text, description != NULL ? description : "");
  append_log (line);

  /* What systemd checks before queueing anything. */
  if (!g_str_has_suffix (unit, ".scope"))
    {
      g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.DBus.Error.InvalidArgs",
                                                  "Only scopes are mocked");
      return;
    }
  if (pids->len == 0)
    {
      g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.DBus.Error.InvalidArgs",
                                                  "No PIDs specified for the scope");
      return;
    }
  if (!g_str_equal (job_mode, "fail") && !g_str_equal (job_mode, "replace"))
    {
      g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.DBus.Error.InvalidArgs",
                                                  "Job mode not mocked");
      return;
    }

  id = next_job_id++;
  end = g_new0 (JobEnd, 1);
  end->connection = g_object_ref (connection);
  end->id = id;
  end->job = g_strdup_printf ("/org/freedesktop/systemd1/job/%u", id);
  end->unit = g_strdup (unit);
  end->result = g_strdup ("done");

  if (g_str_equal (mode, "done"))
    {
      g_autoptr(GError) error = NULL;

      if (!make_scope (unit, pids, delegate, &error))
        {
          g_autofree char *failure = g_strdup_printf ("failed to make %s: %s", unit,
                                                      error != NULL ? error->message : g_strerror (errno));
          append_log (failure);
          g_free (end->result);
          end->result = g_strdup ("failed");
        }
    }
  else
    {
      g_free (end->result);
      end->result = g_strdup ("failed");
    }

  g_dbus_method_invocation_return_value (invocation, g_variant_new ("(o)", end->job));
  if (g_str_equal (mode, "silent"))
    {
      g_object_unref (end->connection);
      g_free (end->job);
      g_free (end->unit);
      g_free (end->result);
      g_free (end);
      return;
    }
  g_idle_add (emit_job_removed, end);
}

static const GDBusInterfaceVTable vtable = { handle_method_call, NULL, NULL, { NULL } };

static void
name_acquired_cb (GDBusConnection *connection,
                  const char      *name,
                  gpointer         user_data)
{
  /* The test waits for this line before starting the daemon. */
  append_log ("ready");
}

static void
name_lost_cb (GDBusConnection *connection,
              const char      *name,
              gpointer         user_data)
{
  g_printerr ("mock-systemd-manager: lost or could not own %s\n", name);
  g_main_loop_quit (loop);
}

static gboolean
quit_cb (gpointer user_data)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GDBusConnection) connection = NULL;
  g_autoptr(GDBusNodeInfo) info = NULL;
  guint owner_id;
  const GOptionEntry entries[] = {
    { "cgroup-parent", 0, 0, G_OPTION_ARG_FILENAME, &cgroup_parent, "Where scopes' cgroups are made", "DIR" },
    { "uid", 0, 0, G_OPTION_ARG_INT, &delegate_uid, "The delegate user", "UID" },
    { "gid", 0, 0, G_OPTION_ARG_INT, &delegate_gid, "The delegate group", "GID" },
    { "mode", 0, 0, G_OPTION_ARG_STRING, &mode, "done, failed or silent", "MODE" },
    { "log", 0, 0, G_OPTION_ARG_FILENAME, &log_path, "Where calls are logged", "FILE" },
    { NULL }
  };

  context = g_option_context_new ("— a mock systemd user manager for tests");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("mock-systemd-manager: %s\n", error->message);
      return 2;
    }
  if (mode == NULL)
    mode = g_strdup ("done");
  if (cgroup_parent == NULL || log_path == NULL || delegate_uid < 0 || delegate_gid < 0 ||
      !(g_str_equal (mode, "done") || g_str_equal (mode, "failed") || g_str_equal (mode, "silent")))
    {
      g_printerr ("mock-systemd-manager: --cgroup-parent, --log, --uid, --gid are needed; --mode done|failed|silent\n");
      return 2;
    }

  connection = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &error);
  if (connection == NULL)
    {
      g_printerr ("mock-systemd-manager: %s\n", error->message);
      return 1;
    }
  info = g_dbus_node_info_new_for_xml (introspection_xml, &error);
  g_assert_no_error (error);
  if (g_dbus_connection_register_object (connection, "/org/freedesktop/systemd1", info->interfaces[0],
                                         &vtable, NULL, NULL, &error) == 0)
    {
      g_printerr ("mock-systemd-manager: %s\n", error->message);
      return 1;
    }

  loop = g_main_loop_new (NULL, FALSE);
  owner_id = g_bus_own_name_on_connection (connection, "org.freedesktop.systemd1", G_BUS_NAME_OWNER_FLAGS_NONE,
                                           name_acquired_cb, name_lost_cb, NULL, NULL);
  g_unix_signal_add (SIGTERM, quit_cb, NULL);
  g_unix_signal_add (SIGINT, quit_cb, NULL);
  g_main_loop_run (loop);

  g_bus_unown_name (owner_id);
  g_main_loop_unref (loop);
  g_free (cgroup_parent);
  g_free (log_path);
  g_free (mode);
  return 0;
}
