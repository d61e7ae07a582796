/* paddock-daemon.c — paddockd's top object: the bus, the state dir, the services
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-cgroup.h"
#include "paddock-daemon.h"
#include "paddock-durable-file.h"
#include "paddock-error.h"
#include "paddock-folder-trash.h"
#include "paddock-state-space.h"
#include "paddock-manager-impl.h"
#include "paddock-net-journal.h"
#include "paddock-record-writer.h"
#include "paddock-session-network.h"
#include "paddock-session-staging.h"
#include "paddock-ports-impl.h"
#include "paddock-systemd-scope.h"

/* How long --replace waits for the previous daemon to close its sockets and
 * let go of the state dir before giving up. */
#define PADDOCK_DAEMON_LOCK_WAIT_USEC (10 * G_USEC_PER_SEC)
/* How long a quitting daemon waits for destroyed sessions' folders to be
 * removed (paddock-folder-trash.c). */
#define TRASH_DRAIN_MAX_US (5 * G_USEC_PER_SEC)

struct _PaddockDaemon
{
  GObject               parent_instance;

  PaddockDaemonOptions  options;
  char                 *helper_path;

  GMainLoop            *loop;
  GDBusConnection      *connection;
  PaddockManagerImpl   *manager;
  PaddockPortsImpl     *ports;
  PaddockRegistry      *registry;

  int                   lock_fd;
  guint                 own_name_id;
  guint                 sigterm_id;
  guint                 sigint_id;
  gboolean              name_acquired;
  GError               *fatal_error;

  /* The delegated scope asked of the systemd user manager as we start;
   * the name is owned once it is answered (or not, within the timeout). */
  GCancellable         *scope_cancellable;
  gboolean              scope_pending;
};

G_DEFINE_FINAL_TYPE (PaddockDaemon, paddock_daemon, G_TYPE_OBJECT)

static void
paddock_daemon_fail (PaddockDaemon *self,
                     GError        *error)
{
  if (self->fatal_error == NULL)
    self->fatal_error = error;
  else
    g_error_free (error);

  paddock_daemon_quit (self);
}

/* The state dir belongs to one daemon at a time: two daemons (say on two
 * buses) re-binding the same persisted leases would fight over the ports. */
static gboolean
paddock_daemon_lock_state_dir (PaddockDaemon  *self,
                               GError        **error)
{
  g_autofree char *path = g_build_filename (self->options.state_dir, "daemon.lock", NULL);
  g_autofree char *pid = NULL;
  paddock_autofd int fd = -1;
  gint64 deadline = g_get_monotonic_time () + PADDOCK_DAEMON_LOCK_WAIT_USEC;

  fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    {
      int saved_errno = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not open %s: %s", path, g_strerror (saved_errno));
      return FALSE;
    }

  while (flock (fd, LOCK_EX | LOCK_NB) != 0)
    {
      int saved_errno = errno;

      if (saved_errno == EINTR)
        continue;

      /* Wait a little in every mode: a daemon we replaced, or one that just
       * quit (D-Bus activation may start us the moment it let go of the
       * name), is closing its sockets. */
      if (saved_errno != EWOULDBLOCK || g_get_monotonic_time () > deadline)
        {
          g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_BUSY,
                       "Another paddockd is using the state dir %s", self->options.state_dir);
          return FALSE;
        }

      g_usleep (20 * 1000);
    }

  pid = g_strdup_printf ("%d\n", (int) getpid ());
  if (ftruncate (fd, 0) != 0 || write (fd, pid, strlen (pid)) < 0)
    g_debug ("Could not record our pid in %s: %s", path, g_strerror (errno));

  self->lock_fd = paddock_steal_fd (&fd);
  return TRUE;
}

static gboolean
paddock_daemon_load_state (PaddockDaemon  *self,
                           GError        **error)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(GVariant) bus_id = NULL;
  const char *bus_id_text = NULL;
  g_autofree char *leases_path = NULL;
  g_autoptr(GError) local_error = NULL;

  if (!paddock_daemon_lock_state_dir (self, error))
    return FALSE;

  registry = paddock_registry_new (self->options.first_port,
                                   self->options.last_port,
                                   self->options.max_leases,
                                   self->options.max_leases_per_owner,
                                   error);
  if (registry == NULL)
    return FALSE;

  bus_id = g_dbus_connection_call_sync (self->connection, "org.freedesktop.DBus",
                                        "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId",
                                        NULL, G_VARIANT_TYPE ("(s)"), G_DBUS_CALL_FLAGS_NONE,
                                        5000, NULL, error);
  if (bus_id == NULL)
    return FALSE;
  g_variant_get (bus_id, "(&s)", &bus_id_text);
  paddock_registry_set_bus_id (registry, bus_id_text);

  leases_path = g_build_filename (self->options.state_dir, "leases.json", NULL);
  paddock_state_space_init (self->options.state_dir);
  if (!paddock_registry_load (registry, leases_path, &local_error) &&
      !(paddock_registry_is_loaded (registry) &&
        g_error_matches (local_error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_NO_SPACE)))
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error),
                                  "Could not load the leases from %s: ", leases_path);
      return FALSE;
    }

  /* Read, but not written back: a full disk. Serve what only reads; what
   * writes is refused with NoSpace until space is back (the registry then
   * rewrites its snapshot first). */
  if (local_error != NULL)
    {
      g_autoptr(GError) space_error = NULL;

      g_message ("Could not write back the leases to %s: %s", leases_path, local_error->message);
      if (paddock_state_space_check_writable (&space_error))
        g_message ("Serving anyway; the next change writes them");
      g_clear_error (&local_error);
    }
  else
    {
      /* Says so in the log now if the disk is full already. */
      paddock_state_space_check_writable (NULL);
    }

  self->registry = g_steal_pointer (&registry);
  paddock_ports_impl_set_registry (self->ports, self->registry);
  paddock_manager_impl_set_registry (self->manager, self->registry);
  paddock_manager_impl_restore (self->manager);
  paddock_ports_impl_forget_vanished_owners (self->ports);

  g_debug ("Loaded %u lease(s) from %s",
           g_list_model_get_n_items (G_LIST_MODEL (self->registry)), leases_path);
  return TRUE;
}

static gboolean
paddock_daemon_session_exists (const char *session_id,
                               gpointer    user_data)
{
  PaddockDaemon *self = user_data;

  return self->manager != NULL && paddock_manager_impl_has_session (self->manager, session_id);
}

static void
paddock_daemon_name_acquired_cb (GDBusConnection *connection,
                                 const char      *name,
                                 gpointer         user_data)
{
  PaddockDaemon *self = user_data;
  GError *error = NULL;

  self->name_acquired = TRUE;

  /* Blocking here is deliberate: calls that arrive while we load queue on
   * the main context and are answered with the leases in place. */
  if (!paddock_daemon_load_state (self, &error))
    {
      paddock_daemon_fail (self, error);
      return;
    }

  g_message ("Serving %s (state in %s)", name, self->options.state_dir);
}

/* How long a daemon being replaced lets its Apply calls in flight run on
 * before it cancels them: well within the successor's wait for the state
 * dir (PADDOCK_DAEMON_LOCK_WAIT_USEC). */
#define PADDOCK_DAEMON_APPLY_WAIT_USEC (5 * G_USEC_PER_SEC)

static gboolean
paddock_daemon_wake_cb (gpointer user_data)
{
  return G_SOURCE_CONTINUE;
}

/* Replaced: an Apply in flight is answered first, done (its caller hears
 * what was applied), and the stage it froze thawed, so that the session
 * goes over running and its workspace with no batch half-way for the
 * successor to recover. One that takes too long is cancelled: it rolls
 * back whole (before its commit point) or finishes (after it), and its
 * caller is told. */
static void
paddock_daemon_finish_applies (PaddockDaemon *self)
{
  gint64 deadline = g_get_monotonic_time () + PADDOCK_DAEMON_APPLY_WAIT_USEC;
  gboolean cancelled = FALSE;
  guint wake_id;

  paddock_session_staging_refuse_applies ();
  if (paddock_session_staging_applies_in_flight () == 0)
    return;
  g_message ("Replaced with %u Apply call(s) in flight: answering them before handing over",
             paddock_session_staging_applies_in_flight ());
  wake_id = g_timeout_add (50, paddock_daemon_wake_cb, NULL);
  while (paddock_session_staging_applies_in_flight () > 0)
    {
      if (!cancelled && g_get_monotonic_time () > deadline)
        {
          g_message ("%u Apply call(s) still in flight: cancelled, so that the next daemon can start",
                     paddock_session_staging_applies_in_flight ());
          paddock_session_staging_cancel_applies ();
          cancelled = TRUE;
        }
      g_main_context_iteration (NULL, TRUE);
    }
  g_source_remove (wake_id);
  g_message ("Every Apply call in flight is answered");
}

static void
paddock_daemon_name_lost_cb (GDBusConnection *connection,
                             const char      *name,
                             gpointer         user_data)
{
  PaddockDaemon *self = user_data;

  if (connection == NULL)
    paddock_daemon_fail (self, g_error_new (PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                                            "Lost the connection to the session bus"));
  else if (!self->name_acquired)
    paddock_daemon_fail (self, g_error_new (PADDOCK_ERROR, PADDOCK_ERROR_BUSY,
                                            "%s is owned by another daemon; use --replace to take over",
                                            name));
  else
    {
      g_message ("Replaced by another daemon; handing over and quitting");
      paddock_daemon_finish_applies (self);
      if (self->manager != NULL)
        paddock_manager_impl_hand_over_at_shutdown (self->manager);
      paddock_daemon_quit (self);
    }
}

static gboolean
paddock_daemon_signal_cb (gpointer user_data)
{
  PaddockDaemon *self = user_data;

  g_message ("Quitting on signal");
  paddock_daemon_quit (self);
  return G_SOURCE_CONTINUE;
}

static char *
paddock_daemon_find_helper (void)
{
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *exe_dir = exe != NULL ? g_path_get_dirname (exe) : NULL;
  const char *candidates[3] = { NULL, };
  g_autofree char *beside = NULL;
  g_autofree char *beside_sub = NULL;
  g_autofree char *installed = g_build_filename (PADDOCK_LIBEXECDIR, "paddock-sandbox", NULL);

  /* Next to our own executable first (the build tree, or a relocated
   * install), then libexecdir. */
  if (exe_dir != NULL)
    {
      beside = g_build_filename (exe_dir, "paddock-sandbox", NULL);
      beside_sub = g_build_filename (exe_dir, "sandbox", "paddock-sandbox", NULL);
    }
  candidates[0] = beside;
  candidates[1] = beside_sub;
  candidates[2] = installed;

  for (guint i = 0; i < G_N_ELEMENTS (candidates); i++)
    if (candidates[i] != NULL && g_file_test (candidates[i], G_FILE_TEST_IS_EXECUTABLE))
      return g_strdup (candidates[i]);

  return NULL;
}

/* Exports every object, then owns the name, so that the first caller
 * that finds the name also finds the objects. */
static gboolean
paddock_daemon_serve (PaddockDaemon  *self,
                      GError        **error)
{
  GBusNameOwnerFlags flags = G_BUS_NAME_OWNER_FLAGS_ALLOW_REPLACEMENT;

  if (!g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (self->manager),
                                         self->connection, PADDOCK_OBJECT_PATH, error) ||
      !g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (self->ports),
                                         self->connection, PADDOCK_OBJECT_PATH, error))
    return FALSE;

  if (self->options.replace)
    flags |= G_BUS_NAME_OWNER_FLAGS_REPLACE;

  self->own_name_id = g_bus_own_name_on_connection (self->connection, PADDOCK_BUS_NAME, flags,
                                                    paddock_daemon_name_acquired_cb,
                                                    paddock_daemon_name_lost_cb,
                                                    self, NULL);
  return TRUE;
}

static void
paddock_daemon_scope_cb (GObject      *source,
                         GAsyncResult *result,
                         gpointer      user_data)
{
  PaddockDaemon *self = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *scope = paddock_systemd_scope_request_finish (result, &error);
  GError *serve_error = NULL;

  self->scope_pending = FALSE;
  if (scope != NULL)
    {
      g_message ("Sessions' cgroups go in the delegated scope %s", scope);
      paddock_manager_impl_set_cgroup_parent (self->manager, scope, NULL);
    }
  else
    {
      g_autofree char *own_reason = NULL;
      g_autofree char *own = paddock_cgroup_find_parent (&own_reason);
      g_autofree char *reason = g_strdup_printf ("%s; %s", own_reason != NULL ? own_reason : "the daemon's cgroup is not usable",
                                                 error->message);

      /* Said once here, and in every session's boundary evidence. */
      g_message ("Sessions get no cgroups of their own: %s", reason);
      paddock_manager_impl_set_cgroup_parent (self->manager, NULL, reason);
    }

  if (g_cancellable_is_cancelled (self->scope_cancellable))
    return;
  if (!paddock_daemon_serve (self, &serve_error))
    paddock_daemon_fail (self, serve_error);
}

/* Where sessions' cgroups go. Root, or a daemon whose cgroup was
 * delegated to it (paddockd.service's Delegate=yes), uses its own cgroup
 * and asks nobody. Any other daemon asks the systemd user manager, if one
 * is on the bus, for a scope with Delegate=yes; without one, or when that
 * fails, sessions get no cgroups and their boundary evidence says why.
 * TRUE when the answer is known now; FALSE when it comes asynchronously
 * (paddock_daemon_scope_cb() then serves). */
static gboolean
paddock_daemon_find_cgroup_parent (PaddockDaemon *self)
{
  g_autofree char *reason = NULL;
  g_autofree char *parent = paddock_cgroup_find_parent (&reason);
  g_autofree char *own_reason = NULL;
  g_autofree char *own = NULL;

  if (parent != NULL || geteuid () == 0)
    {
      paddock_manager_impl_set_cgroup_parent (self->manager, parent, reason);
      return TRUE;
    }

  /* No cgroup v2 at all: nothing a scope could change. */
  own = paddock_cgroup_find_own (&own_reason);
  if (own == NULL)
    {
      paddock_manager_impl_set_cgroup_parent (self->manager, NULL, own_reason);
      return TRUE;
    }

  self->scope_cancellable = g_cancellable_new ();
  self->scope_pending = TRUE;
  paddock_systemd_scope_request_async (self->connection, PADDOCK_SYSTEMD_SCOPE_TIMEOUT_MS,
                                       self->scope_cancellable, paddock_daemon_scope_cb, self);
  return FALSE;
}

/* Unexports the objects, closes every held socket, then lets go of the
 * state-dir lock, in that order: a daemon replacing us finds the ports free
 * by the time it gets the lock. */
static void
paddock_daemon_release_state (PaddockDaemon *self)
{
  /* Requests still in flight end now, each recorded in its journal, and
   * no proxy thread outlives this, nor one an ended session told to stop
   * earlier (but one that did not end within the one bounded wait, logged,
   * which the process's exit takes with it). Before the sessions go: a
   * session that goes only tells its proxy to stop, and what the proxy
   * records after that has nowhere to go. */
  paddock_session_network_stop_all_proxies ();
  if (self->manager != NULL)
    paddock_manager_impl_shutdown (self->manager);
  /* Not exported yet when we quit while still asking for a scope. */
  if (self->manager != NULL && g_dbus_interface_skeleton_get_connection (G_DBUS_INTERFACE_SKELETON (self->manager)) != NULL)
    g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (self->manager));
  if (self->ports != NULL && g_dbus_interface_skeleton_get_connection (G_DBUS_INTERFACE_SKELETON (self->ports)) != NULL)
    g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (self->ports));

  g_clear_object (&self->manager);
  g_clear_object (&self->ports);
  g_clear_object (&self->registry);
  /* Every session record on disk before the folder is anyone else's, and
   * every network journal's line (their sync workers die with us). */
  paddock_record_writer_flush ();
  paddock_net_journal_flush_all ();
  /* Destroyed sessions' folders, still being removed: done before the
   * state dir is the next daemon's, unless that takes long (a very large
   * stage), when the next daemon removes the rest. */
  if (!paddock_folder_trash_drain (TRASH_DRAIN_MAX_US))
    g_message ("Destroyed sessions' folders are still being removed; the next daemon removes the rest");
  paddock_close_fd (&self->lock_fd);
}

static void
paddock_daemon_dispose (GObject *object)
{
  PaddockDaemon *self = PADDOCK_DAEMON (object);

  g_clear_handle_id (&self->own_name_id, g_bus_unown_name);
  g_clear_handle_id (&self->sigterm_id, g_source_remove);
  g_clear_handle_id (&self->sigint_id, g_source_remove);

  paddock_daemon_release_state (self);

  g_clear_object (&self->connection);
  g_clear_pointer (&self->loop, g_main_loop_unref);
  g_clear_object (&self->scope_cancellable);

  G_OBJECT_CLASS (paddock_daemon_parent_class)->dispose (object);
}

static void
paddock_daemon_finalize (GObject *object)
{
  PaddockDaemon *self = PADDOCK_DAEMON (object);

  g_clear_pointer (&self->options.state_dir, g_free);
  g_clear_pointer (&self->helper_path, g_free);
  g_clear_error (&self->fatal_error);

  G_OBJECT_CLASS (paddock_daemon_parent_class)->finalize (object);
}

static void
paddock_daemon_class_init (PaddockDaemonClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_daemon_dispose;
  object_class->finalize = paddock_daemon_finalize;
}

static void
paddock_daemon_init (PaddockDaemon *self)
{
  self->lock_fd = -1;
  self->loop = g_main_loop_new (NULL, FALSE);
}

PaddockDaemon *
paddock_daemon_new (const PaddockDaemonOptions *options)
{
  PaddockDaemon *self;

  g_return_val_if_fail (options != NULL, NULL);
  g_return_val_if_fail (options->state_dir != NULL, NULL);

  self = g_object_new (PADDOCK_TYPE_DAEMON, NULL);
  self->options = *options;
  self->options.state_dir = g_strdup (options->state_dir);
  self->helper_path = paddock_daemon_find_helper ();

  return self;
}

int
paddock_daemon_run (PaddockDaemon  *self,
                    GError        **error)
{
  g_return_val_if_fail (PADDOCK_IS_DAEMON (self), EXIT_FAILURE);

  if (!paddock_ensure_private_dir (self->options.state_dir, error))
    return EXIT_FAILURE;

  self->connection = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, error);
  if (self->connection == NULL)
    return EXIT_FAILURE;

  /* Never let the bus connection's end take the process down mid-write:
   * name loss tells us and we shut down in order. */
  g_dbus_connection_set_exit_on_close (self->connection, FALSE);

  self->manager = paddock_manager_impl_new (self->options.state_dir, self->helper_path);
  paddock_manager_impl_set_connection (self->manager, self->connection);
  self->ports = paddock_ports_impl_new (self->connection);
  paddock_ports_impl_set_session_exists_func (self->ports, paddock_daemon_session_exists, self);

  self->sigterm_id = g_unix_signal_add (SIGTERM, paddock_daemon_signal_cb, self);
  self->sigint_id = g_unix_signal_add (SIGINT, paddock_daemon_signal_cb, self);

  if (paddock_daemon_find_cgroup_parent (self) && !paddock_daemon_serve (self, error))
    return EXIT_FAILURE;

  g_main_loop_run (self->loop);

  /* Quit while the user manager had not answered: stop waiting, and let
   * the request end (it answers promptly once cancelled). */
  if (self->scope_pending)
    {
      g_cancellable_cancel (self->scope_cancellable);
      while (self->scope_pending)
        g_main_context_iteration (NULL, TRUE);
    }

  /* Close every held socket and let go of the state dir *before* giving up
   * the name: a successor started the moment the name is free (activation,
   * --replace) then finds the ports and the lock free. */
  paddock_daemon_release_state (self);
  g_clear_handle_id (&self->own_name_id, g_bus_unown_name);
  g_dbus_connection_flush_sync (self->connection, NULL, NULL);

  if (self->fatal_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&self->fatal_error));
      return EXIT_FAILURE;
    }

  return EXIT_SUCCESS;
}

void
paddock_daemon_quit (PaddockDaemon *self)
{
  g_return_if_fail (PADDOCK_IS_DAEMON (self));

  g_main_loop_quit (self->loop);
}

const char *
paddock_daemon_get_state_dir (PaddockDaemon *self)
{
  g_return_val_if_fail (PADDOCK_IS_DAEMON (self), NULL);

  return self->options.state_dir;
}

PaddockRegistry *
paddock_daemon_get_registry (PaddockDaemon *self)
{
  g_return_val_if_fail (PADDOCK_IS_DAEMON (self), NULL);

  return self->registry;
}
