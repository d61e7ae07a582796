/* paddock-systemd-scope.c — a delegated cgroup asked of the systemd user manager
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <string.h>
#include <unistd.h>

#include "paddock-cgroup.h"
#include "paddock-systemd-scope.h"

/* A daemon that systemd did not start (make run, D-Bus activation by a
 * dbus-daemon without systemd integration) sits in a cgroup it may not
 * write, so its sessions would get no cgroup of their own. Where a
 * systemd user manager is on the session bus it can move us into a
 * transient scope of our own with Delegate=yes — what
 * `systemd-run --user --scope` does — and that scope's subtree is then
 * ours to make session cgroups in (systemd's CGROUP_DELEGATION.md).
 *
 * The exchange, as org.freedesktop.systemd1(5) documents it:
 * StartTransientUnit(name, mode "fail", properties, no auxiliary units)
 * returns a job; the job is over when the manager emits JobRemoved for it
 * with its result ("done" or why not). JobRemoved goes to the client that
 * asked for the job even without Subscribe(), but it may arrive before the
 * method's reply is read, so we listen before asking and remember early
 * signals. */

#define SYSTEMD_BUS_NAME   "org.freedesktop.systemd1"
#define SYSTEMD_PATH       "/org/freedesktop/systemd1"
#define SYSTEMD_MANAGER    "org.freedesktop.systemd1.Manager"

typedef struct
{
  GDBusConnection *connection;
  char            *unit;
  /* The job the manager returned; NULL until its reply is in. */
  char            *job;
  /* Job path → result of every JobRemoved seen before the reply. */
  GHashTable      *early_results;
  guint            subscription_id;
  GSource         *timeout_source;
  GSource         *cancelled_source;
  /* Cancels the call still in flight once the request is over. */
  GCancellable    *call_cancellable;
  guint            timeout_ms;
  gboolean         done;
} ScopeRequest;

static void
scope_request_free (gpointer data)
{
  ScopeRequest *request = data;

  if (request->subscription_id != 0)
    g_dbus_connection_signal_unsubscribe (request->connection, request->subscription_id);
  if (request->timeout_source != NULL)
    {
      g_source_destroy (request->timeout_source);
      g_source_unref (request->timeout_source);
    }
  if (request->cancelled_source != NULL)
    {
      g_source_destroy (request->cancelled_source);
      g_source_unref (request->cancelled_source);
    }
  g_clear_object (&request->call_cancellable);
  g_clear_object (&request->connection);
  g_clear_pointer (&request->early_results, g_hash_table_unref);
  g_free (request->unit);
  g_free (request->job);
  g_free (request);
}

/* Ends the request once: stops listening and waiting, cancels what is in
 * flight, answers the caller with @scope_path or @error (taken) and drops
 * the reference the request held while it was pending. */
static void
scope_request_complete (GTask  *task,
                        char   *scope_path,
                        GError *error)
{
  ScopeRequest *request = g_task_get_task_data (task);

  if (request->done)
    {
      g_free (scope_path);
      g_clear_error (&error);
      return;
    }
  request->done = TRUE;

  if (request->subscription_id != 0)
    {
      g_dbus_connection_signal_unsubscribe (request->connection, request->subscription_id);
      request->subscription_id = 0;
    }
  if (request->timeout_source != NULL)
    g_source_destroy (request->timeout_source);
  if (request->cancelled_source != NULL)
    g_source_destroy (request->cancelled_source);
  g_cancellable_cancel (request->call_cancellable);

  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, scope_path, g_free);
  g_object_unref (task);
}

/* The job is over: with "done" we are in the scope, whose cgroup we then
 * check is ours to write before moving into its leaf. */
static void
scope_request_job_removed (GTask      *task,
                           const char *result)
{
  ScopeRequest *request = g_task_get_task_data (task);
  g_autofree char *scope = NULL;
  g_autofree char *reason = NULL;
  g_autofree char *name = NULL;
  GError *error = NULL;

  if (g_strcmp0 (result, "done") != 0)
    {
      scope_request_complete (task, NULL,
                              g_error_new (G_IO_ERROR, G_IO_ERROR_FAILED,
                                           "the systemd user manager's job for %s ended “%s”",
                                           request->unit, result));
      return;
    }

  /* Trust what the kernel says about where we are, not the reply: the
   * scope's cgroup is named after the unit (…/app.slice/UNIT). */
  scope = paddock_cgroup_find_own (&reason);
  if (scope == NULL)
    {
      scope_request_complete (task, NULL,
                              g_error_new (G_IO_ERROR, G_IO_ERROR_FAILED,
                                           "after the scope %s was started: %s", request->unit, reason));
      return;
    }
  name = g_path_get_basename (scope);
  if (!g_str_equal (name, request->unit))
    {
      scope_request_complete (task, NULL,
                              g_error_new (G_IO_ERROR, G_IO_ERROR_FAILED,
                                           "the systemd user manager said %s was started, but the daemon is in %s",
                                           request->unit, scope));
      return;
    }
  if (access (scope, W_OK) != 0)
    {
      scope_request_complete (task, NULL,
                              g_error_new (G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                                           "the scope's cgroup %s is not writable (not delegated)", scope));
      return;
    }
  if (!paddock_cgroup_enter_leaf (scope, PADDOCK_SYSTEMD_SCOPE_DAEMON_LEAF, &error))
    {
      scope_request_complete (task, NULL, error);
      return;
    }

  scope_request_complete (task, g_steal_pointer (&scope), NULL);
}

static void
scope_request_job_removed_cb (GDBusConnection *connection,
                              const char      *sender_name,
                              const char      *object_path,
                              const char      *interface_name,
                              const char      *signal_name,
                              GVariant        *parameters,
                              gpointer         user_data)
{
  GTask *task = user_data;
  ScopeRequest *request = g_task_get_task_data (task);
  const char *job = NULL;
  const char *unit = NULL;
  const char *result = NULL;
  guint32 id = 0;

  if (request->done || !g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(uoss)")))
    return;

  g_variant_get (parameters, "(u&o&s&s)", &id, &job, &unit, &result);
  if (request->job == NULL)
    {
      /* Bounded: only our own unit's jobs are remembered. */
      if (g_str_equal (unit, request->unit))
        g_hash_table_insert (request->early_results, g_strdup (job), g_strdup (result));
      return;
    }
  if (g_str_equal (job, request->job))
    scope_request_job_removed (task, result);
}

static void
scope_request_started_cb (GObject      *source,
                          GAsyncResult *result,
                          gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ScopeRequest *request = g_task_get_task_data (task);
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;
  const char *early;

  reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  if (request->done)
    return;

  if (reply == NULL)
    {
      g_autofree char *remote = g_dbus_error_get_remote_error (error);

      g_dbus_error_strip_remote_error (error);
      if (g_strcmp0 (remote, "org.freedesktop.DBus.Error.ServiceUnknown") == 0 ||
          g_strcmp0 (remote, "org.freedesktop.DBus.Error.NameHasNoOwner") == 0)
        scope_request_complete (task, NULL,
                                g_error_new (G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                                             "no systemd user manager (%s) on the session bus to ask for a delegated scope",
                                             SYSTEMD_BUS_NAME));
      else
        scope_request_complete (task, NULL,
                                g_error_new (G_IO_ERROR, G_IO_ERROR_FAILED,
                                             "the systemd user manager refused the scope %s: %s",
                                             request->unit, error->message));
      return;
    }

  g_variant_get (reply, "(o)", &request->job);
  early = g_hash_table_lookup (request->early_results, request->job);
  if (early != NULL)
    scope_request_job_removed (task, early);
}

static gboolean
scope_request_timeout_cb (gpointer user_data)
{
  GTask *task = user_data;
  ScopeRequest *request = g_task_get_task_data (task);

  /* If the manager finishes the job later we sit in a scope we do not
   * use: harmless, and the sessions' evidence says why they have no
   * cgroups. */
  scope_request_complete (task, NULL,
                          g_error_new (G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                                       "the systemd user manager did not start the scope %s within %u ms",
                                       request->unit, request->timeout_ms));
  return G_SOURCE_REMOVE;
}

static gboolean
scope_request_cancelled_cb (GCancellable *cancellable,
                            gpointer      user_data)
{
  GTask *task = user_data;

  scope_request_complete (task, NULL,
                          g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                               "the daemon stopped before the systemd user manager answered"));
  return G_SOURCE_REMOVE;
}

/* Asks the systemd user manager on @connection (the session bus) for a
 * transient scope with Delegate=yes holding this process, waits at most
 * @timeout_ms for its job, and moves the process into a leaf of the
 * scope (PADDOCK_SYSTEMD_SCOPE_DAEMON_LEAF). The result is the scope's
 * cgroup folder, where the sessions' cgroups go. Never auto-starts
 * anything on the bus. */
void
paddock_systemd_scope_request_async (GDBusConnection     *connection,
                                     guint                timeout_ms,
                                     GCancellable        *cancellable,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  ScopeRequest *request;
  GVariantBuilder properties;
  guint32 pid = (guint32) getpid ();
  GMainContext *context = g_main_context_ref_thread_default ();

  g_return_if_fail (G_IS_DBUS_CONNECTION (connection));

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, paddock_systemd_scope_request_async);
  /* Our own error says what was cancelled. */
  g_task_set_check_cancellable (task, FALSE);

  request = g_new0 (ScopeRequest, 1);
  request->connection = g_object_ref (connection);
  /* The desktop naming convention for scopes:
   * app-<ApplicationID>-<unique>.scope. */
  request->unit = g_strdup_printf ("app-org.paddock.Daemon-%u.scope", pid);
  request->early_results = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  request->call_cancellable = g_cancellable_new ();
  request->timeout_ms = timeout_ms;
  g_task_set_task_data (task, request, scope_request_free);

  /* The request's own reference while it is pending, dropped by
   * scope_request_complete(); the subscription and the sources below
   * borrow it (a subscription's callback is not run once unsubscribed). */
  g_object_ref (task);
  request->subscription_id =
    g_dbus_connection_signal_subscribe (connection, SYSTEMD_BUS_NAME, SYSTEMD_MANAGER, "JobRemoved",
                                        SYSTEMD_PATH, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                        scope_request_job_removed_cb, task, NULL);

  request->timeout_source = g_timeout_source_new (timeout_ms);
  g_source_set_callback (request->timeout_source, scope_request_timeout_cb, task, NULL);
  g_source_attach (request->timeout_source, context);
  if (cancellable != NULL)
    {
      request->cancelled_source = g_cancellable_source_new (cancellable);
      g_source_set_callback (request->cancelled_source, G_SOURCE_FUNC (scope_request_cancelled_cb), task, NULL);
      g_source_attach (request->cancelled_source, context);
    }
  g_main_context_unref (context);

  g_variant_builder_init (&properties, G_VARIANT_TYPE ("a(sv)"));
  g_variant_builder_add (&properties, "(sv)", "Description",
                         g_variant_new_string ("Paddock session daemon and its sessions"));
  g_variant_builder_add (&properties, "(sv)", "PIDs", g_variant_new_fixed_array (G_VARIANT_TYPE_UINT32, &pid, 1, sizeof pid));
  /* The subtree is ours: the manager hands the cgroup (and its
   * cgroup.procs, cgroup.subtree_control, cgroup.threads) to our user and
   * leaves what is below it alone. */
  g_variant_builder_add (&properties, "(sv)", "Delegate", g_variant_new_boolean (TRUE));

  g_dbus_connection_call (connection, SYSTEMD_BUS_NAME, SYSTEMD_PATH, SYSTEMD_MANAGER, "StartTransientUnit",
                          g_variant_new ("(ssa(sv)a(sa(sv)))", request->unit, "fail", &properties, NULL),
                          G_VARIANT_TYPE ("(o)"), G_DBUS_CALL_FLAGS_NO_AUTO_START, (int) timeout_ms,
                          request->call_cancellable, scope_request_started_cb, g_object_ref (task));
}

/* The scope's cgroup folder (the parent for sessions' cgroups), or NULL
 * with why in @error. */
char *
paddock_systemd_scope_request_finish (GAsyncResult  *result,
                                      GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
