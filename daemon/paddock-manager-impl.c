/* paddock-manager-impl.c — org.paddock.Manager1: the daemon's entry point
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <errno.h>
#include <gio/gunixfdlist.h>
#include <glib/gstdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "paddock-agent-session.h"
#include "paddock-agents-dbus.h"
#include "paddock-dbus-checks.h"
#include "paddock-stage-guard.h"
#include "paddock-autofd.h"
#include "paddock-boundary.h"
#include "paddock-durable-file.h"
#include "paddock-error.h"
#include "paddock-folder-trash.h"
#include "paddock-manager-impl.h"
#include "paddock-state-space.h"
#include "paddock-session-record-salvage.h"
#include "paddock-net-modes.h"
#include "paddock-record-writer.h"
#include "paddock-reserved-ports.h"
#include "paddock-session-impl.h"
#include "paddock-session-network.h"
#include "paddock-path.h"
#include "paddock-spare-folder.h"
#include "paddock-spare-sandbox.h"
#include "paddock-stage.h"

/* Bounds on what one client may ask of the daemon (typed errors when hit). */
#define MAX_SESSIONS            64
#define MAX_SESSIONS_PER_CLIENT 16
#define MAX_ARGV_ITEMS          4096
#define MAX_ARGV_BYTES          (256 * 1024)
#define MAX_ENV_ITEMS           256
#define MAX_ENV_BYTES           (256 * 1024)
#define MAX_NAME_BYTES          128
#define DESTROYED_LINGER_SECONDS 60

struct _PaddockManagerImpl
{
  PaddockIpcManager1Skeleton parent_instance;

  char            *state_dir;
  char            *helper_path;
  gboolean         hand_over;   /* replaced: running host sessions are let go, not killed */
  /* Where sessions' cgroups go, found once as the daemon starts (its own
   * cgroup, or a delegated scope's): NULL, and cgroup_reason says why,
   * where there is none. */
  char            *cgroup_parent;
  /* How safe sessions stage their writes, found out at the first one:
   * "overlay", or "copy" where overlayfs cannot be mounted (and why). */
  char            *staging;
  char            *staging_reason;
  char            *cgroup_reason;
  gint64           started;

  GDBusConnection *connection;
  PaddockRegistry *registry;
  /* PaddockSessionImpl in creation order: the ListSessions order. */
  GPtrArray       *sessions;
  /* Created, waiting for the sandbox to say the agent runs. */
  GPtrArray       *starting;
  /* The next safe session's folder, made ahead (once staging is known). */
  PaddockSpareFolder *spare;
  PaddockSpareSandbox *spare_sandbox;   /* the next safe session's sandbox, made ahead */
  guint               spare_sandbox_refill;   /* idle source that makes it… */
  PaddockSessionImpl *spare_sandbox_like;     /* …like this session's */
  char               *spare_sandbox_id;       /* the id of the session that will take it */
};

static void paddock_manager_iface_init (PaddockIpcManager1Iface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (PaddockManagerImpl, paddock_manager_impl,
                               PADDOCK_IPC_TYPE_MANAGER1_SKELETON,
                               G_IMPLEMENT_INTERFACE (PADDOCK_IPC_TYPE_MANAGER1,
                                                      paddock_manager_iface_init))

static gboolean
paddock_manager_impl_handle_get_info (PaddockIpcManager1     *manager,
                                      GDBusMethodInvocation  *invocation)
{
  PaddockManagerImpl *self = PADDOCK_MANAGER_IMPL (manager);
  g_auto(GVariantDict) info = G_VARIANT_DICT_INIT (NULL);

  g_variant_dict_insert (&info, "version", "s", PACKAGE_VERSION);
  g_variant_dict_insert (&info, "state-dir", "s",
                         paddock_ipc_manager1_get_state_dir (manager));
  g_variant_dict_insert (&info, "pid", "u", (guint32) getpid ());
  g_variant_dict_insert (&info, "started", "t", (guint64) self->started);
  g_variant_dict_insert (&info, "helper", "s",
                         self->helper_path != NULL ? self->helper_path : "");
  g_variant_dict_insert (&info, "cgroup", "s", self->cgroup_parent != NULL ? self->cgroup_parent : "");
  if (self->cgroup_reason != NULL)
    g_variant_dict_insert (&info, "cgroup-unavailable", "s", self->cgroup_reason);
  {
    g_autofree char *state = paddock_state_space_describe ();

    g_variant_dict_insert (&info, "state", "s", state);
  }

  paddock_ipc_manager1_complete_get_info (manager, invocation,
                                          g_variant_dict_end (&info));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}


static gboolean
return_invalid (GDBusMethodInvocation *invocation,
                const char            *message)
{
  g_dbus_method_invocation_return_error_literal (invocation, PADDOCK_ERROR,
                                                 PADDOCK_ERROR_INVALID_ARGUMENT, message);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* Sessions of @owner that are live (starting or running): ended ones cost
 * only their scrollback, which the total limit bounds. */
static guint
count_sessions_of (PaddockManagerImpl *self,
                   const char         *owner)
{
  guint count = 0;

  for (guint i = 0; i < self->starting->len; i++)
    if (g_strcmp0 (paddock_session_impl_get_owner (g_ptr_array_index (self->starting, i)), owner) == 0)
      count++;
  for (guint i = 0; i < self->sessions->len; i++)
    {
      PaddockSessionImpl *session = g_ptr_array_index (self->sessions, i);
      const char *state = paddock_ipc_session1_get_state (PADDOCK_IPC_SESSION1 (session));

      if (g_strcmp0 (paddock_session_impl_get_owner (session), owner) == 0 &&
          (g_strcmp0 (state, "running") == 0 || g_strcmp0 (state, "starting") == 0))
        count++;
    }
  return count;
}

static void
paddock_manager_impl_emit_changed (PaddockManagerImpl *self,
                                   guint               position,
                                   guint               removed,
                                   guint               added)
{
  GVariantBuilder builder;

  g_variant_builder_init (&builder, G_VARIANT_TYPE ("aa{sv}"));
  for (guint i = position; i < position + added; i++)
    g_variant_builder_add_value (&builder,
                                 paddock_session_impl_describe (g_ptr_array_index (self->sessions, i)));
  paddock_ipc_manager1_emit_sessions_changed (PADDOCK_IPC_MANAGER1 (self), position, removed,
                                              g_variant_builder_end (&builder));
}

static void
paddock_manager_impl_session_changed_cb (PaddockSessionImpl *session,
                                         PaddockManagerImpl *self)
{
  guint position;

  if (g_ptr_array_find (self->sessions, session, &position))
    paddock_manager_impl_emit_changed (self, position, 1, 1);
}

/* Freed sessions leave their pages in malloc's free lists; a daemon that
 * ran thousands keeps its peak unless they are handed back. At most once a
 * second, whatever the number of sessions that went (bench-soak.sh). */
static guint trim_id;

static gboolean
trim_cb (gpointer user_data)
{
  trim_id = 0;
  malloc_trim (0);
  return G_SOURCE_REMOVE;
}

static gboolean
paddock_manager_impl_unexport_cb (gpointer user_data)
{
  g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (user_data));
  if (trim_id == 0)
    trim_id = g_timeout_add_seconds (1, trim_cb, NULL);
  return G_SOURCE_REMOVE;
}

/* The ports leased for a session at create, released when it is gone or
 * never started. */
static void
release_session_leases (PaddockManagerImpl *self,
                        const char         *id)
{
  g_autofree char *owner = g_strconcat ("session:", id, NULL);

  if (self->registry != NULL)
    paddock_registry_release_owner (self->registry, owner);
}

static void
paddock_manager_impl_session_destroyed_cb (PaddockSessionImpl *session,
                                           PaddockManagerImpl *self)
{
  guint position;

  /* Its leases die with it. */
  release_session_leases (self, paddock_session_impl_get_id (session));

  /* Off the list at once; on the bus for one more minute, so that a late
   * call (a second Destroy, a Stop racing it) gets a clear NotFound rather
   * than "no such object". */
  g_timeout_add_seconds_full (G_PRIORITY_DEFAULT, DESTROYED_LINGER_SECONDS,
                              paddock_manager_impl_unexport_cb, g_object_ref (session), g_object_unref);
  if (g_ptr_array_find (self->sessions, session, &position))
    {
      g_signal_handlers_disconnect_by_data (session, self);
      g_ptr_array_remove_index (self->sessions, position);
      paddock_manager_impl_emit_changed (self, position, 1, 0);
    }
}

typedef struct
{
  PaddockManagerImpl    *manager;
  GDBusMethodInvocation *invocation;
  char                  *session_dir;
} PendingCreate;

static void
pending_create_free (PendingCreate *pending)
{
  g_clear_object (&pending->manager);
  g_clear_object (&pending->invocation);
  g_free (pending->session_dir);
  g_free (pending);
}

/* In the sessions folder: the id a sandbox made ahead has its cgroup named
 * for (not a session: session ids are hex). */
#define SPARE_SANDBOX_MARKER ".spare-sandbox-id"
#define SPARE_SANDBOX_DELAY_MS 100

static char *new_session_id (PaddockManagerImpl *self);

/* Makes the next safe session's sandbox ahead, like the last one's (its
 * network mode); see paddock-spare-sandbox.c. */
static gboolean
refill_spare_sandbox_cb (gpointer data)
{
  PaddockManagerImpl *self = data;
  g_autoptr(PaddockSessionImpl) like = g_steal_pointer (&self->spare_sandbox_like);

  self->spare_sandbox_refill = 0;
  if (self->spare_sandbox_id == NULL)
    {
      g_autofree char *marker = g_build_filename (self->state_dir, "sessions", SPARE_SANDBOX_MARKER, NULL);

      self->spare_sandbox_id = new_session_id (self);
      /* So that a daemon after us can remove its cgroup should we die
       * (the spare dies with us; its cgroup would not). */
      g_file_set_contents (marker, self->spare_sandbox_id, -1, NULL);
    }
  paddock_session_impl_refill_spare_sandbox (like, self->spare_sandbox, self->spare_sandbox_id);
  return G_SOURCE_REMOVE;
}

/* The sandbox said the agent runs (or why it could not): only now does the
 * creator get its answer, so a session that cannot start is an error, not
 * a session that dies a moment later. */
static void
paddock_manager_impl_session_ready_cb (PaddockSessionImpl *session,
                                       const GError       *error,
                                       gpointer            user_data)
{
  PendingCreate *pending = user_data;
  PaddockManagerImpl *self = pending->manager;
  g_autoptr(GError) export_error = NULL;
  g_autoptr(PaddockSessionImpl) kept = g_object_ref (session);

  g_ptr_array_remove (self->starting, session);

  if (error == NULL &&
      !g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (session), self->connection,
                                         paddock_session_impl_get_object_path (session), &export_error))
    error = export_error;

  if (error != NULL)
    {
      g_debug ("Session %s did not start: %s", paddock_session_impl_get_id (session), error->message);
      release_session_leases (pending->manager, paddock_session_impl_get_id (session));
      paddock_session_impl_kill_now (session);
      /* Nothing may write into the folder once it is gone. */
      if (_paddock_session_impl_get_stage (session) != NULL)
        paddock_stage_cancel_baseline (_paddock_session_impl_get_stage (session));
      paddock_record_writer_flush ();
      paddock_remove_tree (pending->session_dir);
      g_dbus_method_invocation_return_gerror (g_steal_pointer (&pending->invocation), error);
      pending_create_free (pending);
      return;
    }

  g_signal_connect (session, "changed", G_CALLBACK (paddock_manager_impl_session_changed_cb), self);
  g_signal_connect (session, "destroyed", G_CALLBACK (paddock_manager_impl_session_destroyed_cb), self);
  g_ptr_array_add (self->sessions, g_object_ref (session));

  /* The creator's answer first, then the signal: the session is listed
   * already (ListSessions has it), and the signal, whose session
   * dictionary carries the whole boundary report, costs a noticeable
   * part of a millisecond to build and send, which the creator need not
   * wait for. */
  paddock_ipc_manager1_complete_create_session (PADDOCK_IPC_MANAGER1 (self),
                                                g_steal_pointer (&pending->invocation),
                                                paddock_session_impl_get_object_path (session));
  paddock_manager_impl_emit_changed (self, self->sessions->len - 1, 0, 1);

  /* And its sandbox, a moment later (SPARE_SANDBOX_DELAY_MS) and when the
   * main loop is idle: the making (a few ms of CPU) is not in the way of
   * this session's first moments, nor of the calls that follow a start. */
  if (_paddock_session_impl_get_stage (session) != NULL && self->helper_path != NULL)
    {
      if (self->spare_sandbox == NULL)
        self->spare_sandbox = paddock_spare_sandbox_new (self->helper_path, self->cgroup_parent);
      g_set_object (&self->spare_sandbox_like, session);
      if (self->spare_sandbox_refill == 0)
        self->spare_sandbox_refill = g_timeout_add_full (G_PRIORITY_LOW, SPARE_SANDBOX_DELAY_MS,
                                                         refill_spare_sandbox_cb, self, NULL);
    }

  /* The next safe session's folder, now that this one's start is done. */
  if (_paddock_session_impl_get_stage (session) != NULL && self->staging != NULL)
    {
      if (self->spare == NULL)
        {
          g_autofree char *spare = g_build_filename (self->state_dir, "sessions", ".spare", NULL);

          self->spare = paddock_spare_folder_new (spare, g_strcmp0 (self->staging, "overlay") == 0);
        }
      paddock_spare_folder_refill (self->spare);
    }
  pending_create_free (pending);
}

static int
compare_created (gconstpointer a,
                 gconstpointer b)
{
  /* g_ptr_array_sort() passes pointers to the elements */
  guint64 x = paddock_ipc_session1_get_created (PADDOCK_IPC_SESSION1 (*(gpointer *) a));
  guint64 y = paddock_ipc_session1_get_created (PADDOCK_IPC_SESSION1 (*(gpointer *) b));

  return (x > y) - (x < y);
}

static char *
new_session_id (PaddockManagerImpl *self)
{
  for (;;)
    {
      g_autofree char *id = g_strdup_printf ("%06x%06x", g_random_int () & 0xffffff,
                                             g_random_int () & 0xffffff);

      if (!paddock_manager_impl_has_session (self, id) && g_strcmp0 (id, self->spare_sandbox_id) != 0)
        return g_steal_pointer (&id);
    }
}

/* The first safe session asks the helper whether overlayfs works here,
 * once: the answer depends on the kernel and the state folder's
 * filesystem, neither of which changes under a running daemon. */
static const char *
paddock_manager_impl_get_staging (PaddockManagerImpl *self)
{
  if (self->staging == NULL)
    {
      g_autofree char *scratch = g_strdup_printf ("%s/probe-%08x", self->state_dir, g_random_int ());
      g_autofree char *reason = NULL;

      /* PADDOCK_STAGING=copy: for filesystems where overlayfs mounts but
       * misbehaves, and for the tests of the copy stage. */
      if (g_strcmp0 (g_getenv ("PADDOCK_STAGING"), "copy") != 0 &&
          paddock_stage_probe_overlay (self->helper_path, scratch, &reason))
        self->staging = g_strdup ("overlay");
      else
        {
          if (reason == NULL)
            reason = g_strdup ("PADDOCK_STAGING=copy is set in the daemon's environment");
          self->staging = g_strdup ("copy");
          self->staging_reason = g_steal_pointer (&reason);
          g_message ("Sessions stage their writes in a copy of the workspace: %s", self->staging_reason);
        }
    }
  return self->staging;
}

/* CreateSession's "terminal": the handle's fd from the call's own fd list,
 * checked to be a connected stream socket of this machine (one end of a
 * socketpair), which is what a viewer of the terminal reads and writes.
 * Returns a descriptor of our own (O_CLOEXEC), or -1 with @error set. */
static int
take_terminal_socket (GDBusMethodInvocation  *invocation,
                      GVariant               *handle,
                      GError                **error)
{
  GUnixFDList *fd_list = g_dbus_message_get_unix_fd_list (g_dbus_method_invocation_get_message (invocation));
  gint32 index = g_variant_get_handle (handle);
  paddock_autofd int fd = -1;
  struct sockaddr_storage peer;
  socklen_t peer_length = sizeof peer;
  int domain = 0;
  int type = 0;
  int listening = 0;
  socklen_t length = sizeof (int);

  if (fd_list == NULL || index < 0 || index >= g_unix_fd_list_get_length (fd_list))
    {
      g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                           "“terminal” names no file descriptor sent with the call");
      return -1;
    }
  /* A dup with O_CLOEXEC; the message keeps (and closes) its own. Out of
   * descriptors (EMFILE) is the daemon's failure, said as one of ours. */
  {
    g_autoptr(GError) dup_error = NULL;

    fd = g_unix_fd_list_get (fd_list, index, &dup_error);
    if (fd < 0)
      {
        g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                     "Could not take the “terminal” descriptor: %s", dup_error->message);
        return -1;
      }
  }
  if (getsockopt (fd, SOL_SOCKET, SO_DOMAIN, &domain, &length) != 0 || domain != AF_UNIX ||
      getsockopt (fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0 || type != SOCK_STREAM ||
      getsockopt (fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0 || listening != 0 ||
      getpeername (fd, (struct sockaddr *) &peer, &peer_length) != 0)
    {
      g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                           "“terminal” must be a connected local stream socket, such as one end of "
                           "socketpair (AF_UNIX, SOCK_STREAM)");
      return -1;
    }
  return paddock_steal_fd (&fd);
}

static gboolean
paddock_manager_impl_handle_create_session (PaddockIpcManager1    *manager,
                                            GDBusMethodInvocation *invocation,
                                            GVariant              *options)
{
  PaddockManagerImpl *self = PADDOCK_MANAGER_IMPL (manager);
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  g_auto(PaddockSessionConfig) config = { 0, };
  g_auto(GStrv) allow_write = NULL;
  g_autoptr(PaddockSessionImpl) session = NULL;
  g_autoptr(GPtrArray) reserved = NULL;
  guint reserved_ports = PADDOCK_SESSION_RESERVED_PORTS;
  gboolean reserved_ports_given = FALSE;
  g_autofree char *port_handover = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *id = NULL;
  gboolean takes_spare;
  gboolean started;
  g_autofree char *session_dir = NULL;
  g_autofree char *resolved = NULL;
  g_autofree char *agent = NULL;
  g_auto(GStrv) port_names = NULL;
  PendingCreate *pending;
  GVariantIter iter;
  const char *key;
  GVariant *value;
  gsize argv_bytes = 0;
  paddock_autofd int terminal = -1;

  if (self->connection == NULL)
    {
      g_dbus_method_invocation_return_error_literal (invocation, PADDOCK_ERROR, PADDOCK_ERROR_BUSY,
                                                     "The daemon is still starting");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  /* A session needs its folder, record and stage on the state dir: on a
   * full disk none is started (paddock-state-space.c). */
  if (!paddock_state_space_check_writable (&error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  config.env = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  config.columns = 80;
  config.rows = 24;
  config.profile = g_strdup ("safe");
  config.owner = g_strdup (sender != NULL ? sender : "");

  g_variant_iter_init (&iter, options);
  while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
    {
      g_autoptr(GVariant) owned = value;

      if (g_str_equal (key, "workspace") && g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING))
        {
          g_free (config.workspace);
          config.workspace = g_variant_dup_bytestring (value, NULL);
        }
      else if (g_str_equal (key, "command") && g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING_ARRAY))
        {
          g_strfreev (config.command);
          config.command = g_variant_dup_bytestring_array (value, NULL);
        }
      else if (g_str_equal (key, "name") && g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
        {
          g_free (config.name);
          config.name = g_variant_dup_string (value, NULL);
        }
      else if (g_str_equal (key, "profile") && g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
        {
          g_free (config.profile);
          config.profile = g_variant_dup_string (value, NULL);
        }
      else if (g_str_equal (key, "agent") && g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
        {
          g_free (agent);
          agent = g_variant_dup_string (value, NULL);
        }
      else if (g_str_equal (key, "net") && g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
        {
          g_free (config.net_mode);
          config.net_mode = g_variant_dup_string (value, NULL);
        }
      else if (g_str_equal (key, "ports") && g_variant_is_of_type (value, G_VARIANT_TYPE_STRING_ARRAY))
        {
          g_strfreev (port_names);
          port_names = g_variant_dup_strv (value, NULL);
        }
      else if (g_str_equal (key, "reserved-ports") && g_variant_is_of_type (value, G_VARIANT_TYPE_UINT32))
        {
          /* Checked below against the named ones and the network mode. */
          reserved_ports = g_variant_get_uint32 (value);
          reserved_ports_given = TRUE;
        }
      else if (g_str_equal (key, "port-handover") && g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
        {
          g_free (port_handover);
          port_handover = g_variant_dup_string (value, NULL);
        }
      else if (g_str_equal (key, "allow-domains") && g_variant_is_of_type (value, G_VARIANT_TYPE_STRING_ARRAY))
        {
          g_strfreev (config.allow_domains);
          config.allow_domains = g_variant_dup_strv (value, NULL);
        }
      else if (g_str_equal (key, "env") && g_variant_is_of_type (value, G_VARIANT_TYPE ("a{ss}")))
        {
          GVariantIter env_iter;
          const char *env_key;
          const char *env_value;

          if (!paddock_dbus_check_env (value, "option “env”", MAX_ENV_ITEMS, MAX_ENV_BYTES, &error))
            {
              g_dbus_method_invocation_return_gerror (invocation, error);
              return G_DBUS_METHOD_INVOCATION_HANDLED;
            }
          g_variant_iter_init (&env_iter, value);
          while (g_variant_iter_next (&env_iter, "{&s&s}", &env_key, &env_value))
            g_hash_table_replace (config.env, g_strdup (env_key), g_strdup (env_value));
        }
      else if (g_str_equal (key, "expose") && g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING_ARRAY))
        {
          g_auto(GStrv) paths = g_variant_dup_bytestring_array (value, NULL);
          g_autofree char *home = g_canonicalize_filename (g_get_home_dir (), "/");
          g_autoptr(GPtrArray) relative = g_ptr_array_new_with_free_func (g_free);

          /* Bounded like the sandbox's list; each a path inside the HOME
           * (not the HOME itself) that exists now. */
          if (g_strv_length (paths) > 16)
            return return_invalid (invocation, "At most 16 paths can be exposed");
          for (guint i = 0; paths[i] != NULL; i++)
            {
              g_autofree char *absolute = g_canonicalize_filename (paths[i], home);

              if (g_str_equal (home, "/") || !g_str_has_prefix (absolute, home) || absolute[strlen (home)] != '/' ||
                  strlen (absolute + strlen (home) + 1) > 256)
                {
                  g_autofree char *shown = paddock_dbus_display_bytes (paths[i]);

                  g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                                         "“%s” is not a path inside your HOME (%s)", shown, home);
                  return G_DBUS_METHOD_INVOCATION_HANDLED;
                }
              if (!g_file_test (absolute, G_FILE_TEST_EXISTS))
                {
                  g_autofree char *shown = paddock_dbus_display_bytes (absolute);

                  g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
                                                         "Nothing to expose at %s", shown);
                  return G_DBUS_METHOD_INVOCATION_HANDLED;
                }
              g_ptr_array_add (relative, g_strdup (absolute + strlen (home) + 1));
            }
          g_ptr_array_add (relative, NULL);
          g_strfreev (config.expose);
          config.expose = (GStrv) g_ptr_array_free (g_steal_pointer (&relative), FALSE);
        }
      else if (g_str_equal (key, "pids-max") && g_variant_is_of_type (value, G_VARIANT_TYPE_UINT64))
        {
          config.pids_max = g_variant_get_uint64 (value);
          if (config.pids_max < PADDOCK_SESSION_PIDS_MAX_MIN || config.pids_max > PADDOCK_SESSION_PIDS_MAX_MAX)
            return return_invalid (invocation, "pids-max is 16 to 4194304 processes");
        }
      else if (g_str_equal (key, "memory-max") && g_variant_is_of_type (value, G_VARIANT_TYPE_UINT64))
        {
          config.memory_max = g_variant_get_uint64 (value);
          if (config.memory_max < PADDOCK_SESSION_MEMORY_MAX_MIN || config.memory_max > PADDOCK_SESSION_MEMORY_MAX_MAX)
            return return_invalid (invocation, "memory-max is 64 MiB to 16 TiB");
        }
      else if (g_str_equal (key, "stage-limit") && g_variant_is_of_type (value, G_VARIANT_TYPE_UINT64))
        {
          config.stage_limit = g_variant_get_uint64 (value);
          if (config.stage_limit < PADDOCK_STAGE_LIMIT_MIN || config.stage_limit > PADDOCK_STAGE_LIMIT_MAX)
            return return_invalid (invocation, "stage-limit is 1 MiB to 16 TiB");
        }
      else if (g_str_equal (key, "allow-write") && g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING_ARRAY))
        {
          /* Checked against the workspace below, once it is known. */
          g_strfreev (allow_write);
          allow_write = g_variant_dup_bytestring_array (value, NULL);
        }
      else if (g_str_equal (key, "pass-env") && g_variant_is_of_type (value, G_VARIANT_TYPE_STRING_ARRAY))
        {
          /* The client resolves these and sends them in "env". */
        }
      else if (g_str_equal (key, "terminal") && g_variant_is_of_type (value, G_VARIANT_TYPE_HANDLE))
        {
          paddock_close_fd (&terminal);
          terminal = take_terminal_socket (invocation, value, &error);
          if (terminal < 0)
            {
              g_dbus_method_invocation_return_gerror (invocation, error);
              return G_DBUS_METHOD_INVOCATION_HANDLED;
            }
        }
      else if ((g_str_equal (key, "columns") || g_str_equal (key, "rows")) &&
               g_variant_is_of_type (value, G_VARIANT_TYPE_UINT16))
        {
          guint16 cells = g_variant_get_uint16 (value);

          if (cells < 1 || cells > 1000)
            return return_invalid (invocation, "A terminal is 1 to 1000 cells wide and high");
          if (key[0] == 'c')
            config.columns = cells;
          else
            config.rows = cells;
        }
      else
        {
          g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                                 "Unknown session option “%s” of type %s",
                                                 key, g_variant_get_type_string (value));
          return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
    }

  if (config.workspace == NULL || config.workspace[0] == '\0')
    return return_invalid (invocation, "A session needs a workspace folder");
  /* An agent: its program (unless a command was given), environment,
   * home and network, or a refusal now saying where it looked. */
  if (agent != NULL &&
      !paddock_agent_session_configure (&config, agent, self->state_dir, config.net_mode != NULL, &error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (allow_write != NULL)
    {
      g_autoptr(GPtrArray) normalized = g_ptr_array_new_with_free_func (g_free);

      /* Only a protected path can be allowed (the rest of the workspace is
       * writable anyway), so the list is bounded by theirs. */
      for (guint i = 0; allow_write[i] != NULL; i++)
        {
          char *relative = paddock_boundary_normalize_protected (config.workspace, allow_write[i]);

          if (relative == NULL)
            {
              g_autofree char *known = g_strjoinv (", ", (char **) paddock_boundary_protected_paths ());
              g_autofree char *shown = paddock_dbus_display_bytes (allow_write[i]);

              g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                                     "“%s” is not a protected path of the workspace "
                                                     "(those are %s)", shown, known);
              return G_DBUS_METHOD_INVOCATION_HANDLED;
            }
          if (g_ptr_array_find_with_equal_func (normalized, relative, g_str_equal, NULL))
            g_free (relative);
          else
            g_ptr_array_add (normalized, relative);
        }
      g_ptr_array_add (normalized, NULL);
      config.allow_write = (GStrv) g_ptr_array_free (g_steal_pointer (&normalized), FALSE);
    }
  if (config.command == NULL || config.command[0] == NULL || config.command[0][0] == '\0')
    return return_invalid (invocation, "A session needs a command to run");
  if (g_strv_length (config.command) > MAX_ARGV_ITEMS)
    return return_invalid (invocation, "The command has too many arguments (at most 4096)");
  for (guint i = 0; config.command[i] != NULL; i++)
    argv_bytes += strlen (config.command[i]) + 1;
  if (argv_bytes > MAX_ARGV_BYTES)
    return return_invalid (invocation, "The command is too long (at most 256 KiB)");
  if (g_strcmp0 (config.profile, "host") != 0 && g_strcmp0 (config.profile, "safe") != 0 &&
      g_strcmp0 (config.profile, "strict") != 0)
    return return_invalid (invocation, "The profile is “host”, “safe” or “strict”");
  if (config.net_mode == NULL)
    config.net_mode = g_strdup ("host");
  if (!paddock_net_mode_is_valid (config.net_mode))
    return return_invalid (invocation, "The network mode is " PADDOCK_NET_MODES_TEXT);
  if (g_strcmp0 (config.net_mode, "host") != 0 && g_strcmp0 (config.profile, "host") == 0)
    return return_invalid (invocation, "The host profile has no network namespace: use net none or proxy "
                                       "with safe or strict");
  if (port_names != NULL && g_strv_length (port_names) > PADDOCK_SESSION_MAX_PORTS)
    return return_invalid (invocation, "A session leases at most " G_STRINGIFY (PADDOCK_SESSION_MAX_PORTS)
                                       " ports at create");
  for (guint i = 0; port_names != NULL && port_names[i] != NULL; i++)
    {
      g_autoptr(GError) name_error = NULL;

      if (!paddock_registry_validate_name (port_names[i], &name_error))
        return return_invalid (invocation, name_error->message);
      for (guint j = 0; j < i; j++)
        if (g_str_equal (port_names[i], port_names[j]))
          return return_invalid (invocation, "Each port name once");
      if (!_paddock_session_ports_check_name (port_names[i], &name_error))
        return return_invalid (invocation, name_error->message);
    }
  {
    guint n_named = port_names != NULL ? g_strv_length (port_names) : 0;

    /* Reserved ports are held for LeasePort in a namespace of the
     * session's own; by default none (PADDOCK_SESSION_RESERVED_PORTS). */
    if (reserved_ports_given && g_strcmp0 (config.net_mode, "host") == 0)
      return return_invalid (invocation, "Reserved ports are for net none or proxy: on the host's network "
                                         "the agent gets its sockets at start, so name them all in “ports”");
    /* Not n_named + reserved_ports, which a client's G_MAXUINT32 wraps
     * round (n_named is at most MAX_PORTS, checked above). */
    if (reserved_ports_given && reserved_ports > PADDOCK_SESSION_MAX_PORTS - n_named)
      return return_invalid (invocation, "A session has at most " G_STRINGIFY (PADDOCK_SESSION_MAX_PORTS)
                                         " ports, named and reserved together");
    if (!reserved_ports_given)
      reserved_ports = MIN (reserved_ports, PADDOCK_SESSION_MAX_PORTS - n_named);
  }
  if (port_handover != NULL && !g_str_equal (port_handover, "release") &&
      !g_str_equal (port_handover, "listen-fds"))
    return return_invalid (invocation, "“port-handover” is “release” (the agent binds its ports itself) or "
                                       "“listen-fds” (it gets them listening, by socket activation)");
  if (g_strcmp0 (port_handover, "listen-fds") == 0 && g_strcmp0 (config.net_mode, "host") != 0)
    return return_invalid (invocation, "“port-handover” “listen-fds” needs net host: with net none or proxy "
                                       "the leased sockets belong to the host's network, not the session's, "
                                       "so they are forwarded in and the agent binds the ports itself");
  if (config.allow_domains != NULL && config.allow_domains[0] != NULL &&
      g_strcmp0 (config.net_mode, "proxy") != 0)
    return return_invalid (invocation, "Allowed domains apply to the proxy: they need net proxy");
  {
    g_autoptr(GError) rules_error = NULL;

    /* Parsed once, here: the session keeps these and its proxy uses them. */
    config.net_rules = _paddock_session_network_build_rules (config.net_mode,
                                                             (const char * const *) config.allow_domains,
                                                             &rules_error);
    if (config.net_rules == NULL)
      {
        g_dbus_method_invocation_return_gerror (invocation, rules_error);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
      }
  }
  if (config.name != NULL && (strlen (config.name) > MAX_NAME_BYTES || strchr (config.name, '\n') != NULL))
    return return_invalid (invocation, "A session name is one line of at most 128 bytes");

  resolved = realpath (config.workspace, NULL);
  if (resolved == NULL || !g_file_test (resolved, G_FILE_TEST_IS_DIR))
    {
      g_autofree char *shown = paddock_dbus_display_bytes (config.workspace);

      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
                                             "No workspace folder “%s”", shown);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  g_free (config.workspace);
  config.workspace = g_steal_pointer (&resolved);

  /* The stage lives in the state folder: the two must not contain each
   * other (overlayfs refuses it, and a copy would copy itself). */
  if (g_strcmp0 (config.profile, "host") != 0 &&
      (paddock_path_is_within (self->state_dir, config.workspace) ||
       paddock_path_is_within (config.workspace, self->state_dir)))
    return return_invalid (invocation, "The workspace and Paddock's state folder contain one another");

  if (self->sessions->len + self->starting->len >= MAX_SESSIONS)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_QUOTA_EXCEEDED,
                                             "The daemon keeps at most %u sessions; destroy ended ones "
                                             "to make room", MAX_SESSIONS);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (count_sessions_of (self, config.owner) >= MAX_SESSIONS_PER_CLIENT)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_QUOTA_EXCEEDED,
                                             "A client may run at most %u sessions at once",
                                             MAX_SESSIONS_PER_CLIENT);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  if (config.name == NULL)
    {
      g_autofree char *program = config.agent != NULL ? g_strdup (config.agent) : g_path_get_basename (config.command[0]);
      g_autofree char *folder = g_path_get_basename (config.workspace);

      config.name = g_strdup_printf ("%s on %s", program, folder);
    }

  /* A session the sandbox made ahead fits takes its id: the spare's
   * cgroup has that name already. (With leased sockets to pass listening,
   * on the host's network, it makes its own sandbox.) */
  takes_spare = self->spare_sandbox != NULL && self->spare_sandbox_id != NULL &&
                g_strcmp0 (config.profile, "host") != 0 && self->helper_path != NULL &&
                !(g_strcmp0 (config.net_mode, "host") == 0 && port_names != NULL && port_names[0] != NULL &&
                  g_strcmp0 (port_handover, "listen-fds") == 0) &&
                paddock_spare_sandbox_fits (self->spare_sandbox, config.net_mode);
  id = takes_spare ? g_strdup (self->spare_sandbox_id) : new_session_id (self);
  session_dir = g_build_filename (self->state_dir, "sessions", id, NULL);
  config.home = g_build_filename (session_dir, "home", NULL);
  /* A safe session takes the folder made ahead, if there is one; what it
   * lacks is made below and when the stage is prepared. */
  if (g_strcmp0 (config.profile, "host") != 0 && self->helper_path != NULL && self->spare != NULL)
    paddock_spare_folder_take (self->spare, session_dir);
  if (g_mkdir_with_parents (config.home, 0700) != 0)
    {
      int saved_errno = errno;
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                                             "Could not make %s: %s", config.home, g_strerror (saved_errno));
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  /* Its ports, leased to the session itself: they die with it. */
  for (guint i = 0; port_names != NULL && port_names[i] != NULL; i++)
    {
      PaddockLease *lease = self->registry != NULL
                            ? paddock_registry_lease (self->registry, NULL, id, port_names[i], 0, &error)
                            : NULL;

      if (lease == NULL)
        {
          release_session_leases (self, id);
          paddock_remove_tree (session_dir);
          if (error == NULL)
            g_set_error_literal (&error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED, "No port registry");
          g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR,
                                                 error->domain == PADDOCK_ERROR ? error->code : PADDOCK_ERROR_FAILED,
                                                 "Could not lease port “%s”: %s", port_names[i], error->message);
          return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
      if (config.leases == NULL)
        config.leases = g_ptr_array_new_with_free_func (g_object_unref);
      g_ptr_array_add (config.leases, lease);
    }
  /* And those asked to be held for LeasePort (paddock-session-ports.c). */
  reserved = _paddock_session_ports_reserve (self->registry, id, config.profile, config.net_mode, reserved_ports,
                                             &error);
  if (reserved == NULL)
    {
      release_session_leases (self, id);
      paddock_remove_tree (session_dir);
      g_dbus_method_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  config.helper = g_strdup (self->helper_path);
  if (g_strcmp0 (config.profile, "host") != 0 && self->helper_path != NULL)
    config.staging = g_strdup (paddock_manager_impl_get_staging (self));
#if !PADDOCK_ENABLE_LINUX
  /* The portable build has only the host executor: its sessions still
   * stage, in a copy (shared extents where the filesystem has them), so
   * that review and Apply work; the boundary says nothing enforces it. */
  else if (g_strcmp0 (config.profile, "host") == 0)
    config.staging = g_strdup ("copy");
#endif
  config.cgroup_parent = g_strdup (self->cgroup_parent);
  config.cgroup_reason = g_strdup (self->cgroup_reason);
  session = paddock_session_impl_new (id, &config);
  _paddock_session_ports_take_reserved (_paddock_session_network_get_ports (_paddock_session_impl_get_network (session)),
                                        reserved);
  /* On the host's network the default is 'release': the agent binds its
   * ports itself. What users run on a leased port is a dev server (npm run
   * dev, python3 -m http.server "$PORT", vite, rails), and such a program
   * binds $PORT: handed a listening socket it does not look for, it dies
   * with EADDRINUSE (issue #21). A program that wants socket activation
   * is rare and says so ('listen-fds'), and a refusal at create would
   * only make every user type the option the default could have been.
   * The cost is the moment between release and bind in which another
   * host program could take the port: said as the lease's "lost". */
  _paddock_session_ports_set_release (_paddock_session_network_get_ports (_paddock_session_impl_get_network (session)),
                                      g_strcmp0 (config.net_mode, "host") == 0 &&
                                      g_strcmp0 (port_handover, "listen-fds") != 0);
  pending = g_new0 (PendingCreate, 1);
  pending->manager = g_object_ref (self);
  /* The handler's reference, answered (and so released) in
   * paddock_manager_impl_session_ready_cb(); an extra one would never be
   * dropped, and with it the call's GDBusMessage. */
  pending->invocation = invocation;
  pending->session_dir = g_strdup (session_dir);
  /* Counted against the quotas from now on, listed once it runs — which
   * may be before start() returns (a host agent runs at once). */
  g_ptr_array_add (self->starting, g_object_ref (session));
  if (takes_spare)
    {
      g_clear_pointer (&self->spare_sandbox_id, g_free);
      paddock_session_impl_offer_spare_sandbox (session, self->spare_sandbox);
    }
  started = paddock_session_impl_start (session, paddock_manager_impl_session_ready_cb, pending, &error);
  /* Taken, or its cgroup named for a session that did not take it. */
  if (takes_spare)
    paddock_spare_sandbox_discard (self->spare_sandbox);
  if (!started)
    {
      g_ptr_array_remove (self->starting, session);
      release_session_leases (self, id);
      paddock_remove_tree (session_dir);
      g_dbus_method_invocation_return_gerror (g_steal_pointer (&pending->invocation), error);
      pending_create_free (pending);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  /* The creator's viewer, before the main loop reads a byte of the
   * terminal: it gets all of it, from the first. */
  if (terminal >= 0)
    paddock_session_impl_attach_terminal (session, paddock_steal_fd (&terminal));

  g_debug ("Session %s created by %s: %s in %s (%s)", id, config.owner, config.command[0],
           config.workspace, config.profile);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
paddock_manager_impl_handle_list_sessions (PaddockIpcManager1    *manager,
                                           GDBusMethodInvocation *invocation)
{
  PaddockManagerImpl *self = PADDOCK_MANAGER_IMPL (manager);
  GVariantBuilder builder;

  g_variant_builder_init (&builder, G_VARIANT_TYPE ("aa{sv}"));
  for (guint i = 0; i < self->sessions->len; i++)
    g_variant_builder_add_value (&builder, paddock_session_impl_describe (g_ptr_array_index (self->sessions, i)));

  paddock_ipc_manager1_complete_list_sessions (manager, invocation, g_variant_builder_end (&builder));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
paddock_manager_impl_handle_list_agents (PaddockIpcManager1    *manager,
                                         GDBusMethodInvocation *invocation)
{
  PaddockManagerImpl *self = PADDOCK_MANAGER_IMPL (manager);

  paddock_ipc_manager1_complete_list_agents (manager, invocation, paddock_agents_dbus_list (self->state_dir));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* Whether a session of @agent is starting or has not ended: its home is
 * bound in it, and must not be emptied under it. */
static gboolean
agent_in_use (PaddockManagerImpl *self,
              const char         *agent)
{
  for (guint i = 0; i < self->starting->len; i++)
    if (g_strcmp0 (paddock_session_impl_get_agent (g_ptr_array_index (self->starting, i)), agent) == 0)
      return TRUE;
  for (guint i = 0; i < self->sessions->len; i++)
    {
      PaddockSessionImpl *session = g_ptr_array_index (self->sessions, i);
      const char *state = paddock_ipc_session1_get_state (PADDOCK_IPC_SESSION1 (session));

      if (g_strcmp0 (paddock_session_impl_get_agent (session), agent) == 0 &&
          g_strcmp0 (state, "exited") != 0 && g_strcmp0 (state, "stopped") != 0)
        return TRUE;
    }
  return FALSE;
}

static gboolean
paddock_manager_impl_handle_reset_agent (PaddockIpcManager1    *manager,
                                         GDBusMethodInvocation *invocation,
                                         const char            *name)
{
  PaddockManagerImpl *self = PADDOCK_MANAGER_IMPL (manager);
  g_autoptr(GError) error = NULL;

  if (!paddock_agents_dbus_reset (self->state_dir, name, agent_in_use (self, name), &error))
    g_dbus_method_invocation_return_gerror (invocation, error);
  else
    paddock_ipc_manager1_complete_reset_agent (manager, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
paddock_manager_impl_handle_import_agent_login (PaddockIpcManager1    *manager,
                                                GDBusMethodInvocation *invocation,
                                                const char            *name)
{
  PaddockManagerImpl *self = PADDOCK_MANAGER_IMPL (manager);
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) copied = paddock_agents_dbus_import (self->state_dir, name, &error);

  if (copied == NULL)
    g_dbus_method_invocation_return_gerror (invocation, error);
  else
    paddock_ipc_manager1_complete_import_agent_login (manager, invocation, (const char * const *) copied);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void
paddock_manager_iface_init (PaddockIpcManager1Iface *iface)
{
  iface->handle_list_agents = paddock_manager_impl_handle_list_agents;
  iface->handle_reset_agent = paddock_manager_impl_handle_reset_agent;
  iface->handle_import_agent_login = paddock_manager_impl_handle_import_agent_login;
  iface->handle_get_info = paddock_manager_impl_handle_get_info;
  iface->handle_create_session = paddock_manager_impl_handle_create_session;
  iface->handle_list_sessions = paddock_manager_impl_handle_list_sessions;
}

static void
paddock_manager_impl_finalize (GObject *object)
{
  PaddockManagerImpl *self = PADDOCK_MANAGER_IMPL (object);

  g_clear_pointer (&self->helper_path, g_free);
  g_clear_pointer (&self->state_dir, g_free);
  g_clear_pointer (&self->cgroup_parent, g_free);
  g_clear_pointer (&self->staging, g_free);
  g_clear_pointer (&self->staging_reason, g_free);
  g_clear_pointer (&self->cgroup_reason, g_free);
  g_clear_pointer (&self->sessions, g_ptr_array_unref);
  g_clear_pointer (&self->starting, g_ptr_array_unref);
  g_clear_pointer (&self->spare, paddock_spare_folder_free);
  g_clear_handle_id (&self->spare_sandbox_refill, g_source_remove);
  g_clear_object (&self->spare_sandbox_like);
  g_clear_pointer (&self->spare_sandbox, paddock_spare_sandbox_free);
  g_clear_pointer (&self->spare_sandbox_id, g_free);
  g_clear_object (&self->registry);
  g_clear_object (&self->connection);

  G_OBJECT_CLASS (paddock_manager_impl_parent_class)->finalize (object);
}

PADDOCK_DBUS_DEFINE_CHECKED_VTABLE (paddock_manager_impl)

static void
paddock_manager_impl_class_init (PaddockManagerImplClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  /* Every call's arguments are checked before a handler sees them. */
  G_DBUS_INTERFACE_SKELETON_CLASS (klass)->get_vtable = paddock_manager_impl_get_checked_vtable;

  object_class->finalize = paddock_manager_impl_finalize;
}

static void
paddock_manager_impl_init (PaddockManagerImpl *self)
{
  self->started = g_get_real_time ();
  self->sessions = g_ptr_array_new_with_free_func (g_object_unref);
  self->starting = g_ptr_array_new_with_free_func (g_object_unref);
}

PaddockManagerImpl *
paddock_manager_impl_new (const char *state_dir,
                          const char *helper_path)
{
  PaddockManagerImpl *self;

  g_return_val_if_fail (state_dir != NULL, NULL);

  self = g_object_new (PADDOCK_TYPE_MANAGER_IMPL, NULL);
  self->helper_path = g_strdup (helper_path);
  self->state_dir = g_strdup (state_dir);
  /* An earlier daemon's spare folder may have been made for another kind
   * of stage: this one makes its own. */
  {
    g_autofree char *spare = g_build_filename (state_dir, "sessions", ".spare", NULL);

    paddock_remove_tree (spare);
  }
  /* What an earlier daemon destroyed and did not get to remove. */
  {
    g_autofree char *trash = paddock_folder_trash_dir (state_dir);

    paddock_folder_trash_empty (trash);
  }
  paddock_ipc_manager1_set_version (PADDOCK_IPC_MANAGER1 (self), PACKAGE_VERSION);
  paddock_ipc_manager1_set_state_dir (PADDOCK_IPC_MANAGER1 (self), state_dir);

  return self;
}

void
paddock_manager_impl_set_connection (PaddockManagerImpl *self,
                                     GDBusConnection    *connection)
{
  g_return_if_fail (PADDOCK_IS_MANAGER_IMPL (self));

  g_set_object (&self->connection, connection);
}

/* Where sessions created from now on get their cgroups (@parent), or why
 * they get none (@reason); the daemon decides as it starts. */
void
paddock_manager_impl_set_cgroup_parent (PaddockManagerImpl *self,
                                        const char         *parent,
                                        const char         *reason)
{
  g_return_if_fail (PADDOCK_IS_MANAGER_IMPL (self));

  g_free (self->cgroup_parent);
  self->cgroup_parent = g_strdup (parent);
  g_free (self->cgroup_reason);
  self->cgroup_reason = g_strdup (reason);
}

void
paddock_manager_impl_set_registry (PaddockManagerImpl *self,
                                   PaddockRegistry    *registry)
{
  g_return_if_fail (PADDOCK_IS_MANAGER_IMPL (self));

  g_set_object (&self->registry, registry);
  /* Sessions lease ports while running too (Session1.LeasePort). */
  _paddock_session_ports_set_registry (registry);
}

gboolean
paddock_manager_impl_has_session (PaddockManagerImpl *self,
                                  const char         *id)
{
  g_return_val_if_fail (PADDOCK_IS_MANAGER_IMPL (self), FALSE);

  for (guint i = 0; i < self->sessions->len; i++)
    if (g_strcmp0 (paddock_session_impl_get_id (g_ptr_array_index (self->sessions, i)), id) == 0)
      return TRUE;
  return FALSE;
}

/* The daemon is going away. Its sessions are killed rather than left
 * running with nobody supervising them; but when another daemon replaced
 * us (paddock_manager_impl_hand_over_at_shutdown()), a session its
 * keeper holds is handed over to it instead (a sandbox no keeper holds,
 * see paddock-linux-executor.c, dies with us). */
/* Another daemon took our name (--replace): it adopts what it can. */
void
paddock_manager_impl_hand_over_at_shutdown (PaddockManagerImpl *self)
{
  g_return_if_fail (PADDOCK_IS_MANAGER_IMPL (self));

  self->hand_over = TRUE;
}

void
paddock_manager_impl_shutdown (PaddockManagerImpl *self)
{
  g_return_if_fail (PADDOCK_IS_MANAGER_IMPL (self));

  for (guint i = 0; i < self->sessions->len; i++)
    {
      PaddockSessionImpl *session = g_ptr_array_index (self->sessions, i);

      g_signal_handlers_disconnect_by_data (session, self);
      if (!self->hand_over || !paddock_session_impl_hand_over (session))
        paddock_session_impl_kill_now (session);
      g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (session));
    }
  g_ptr_array_set_size (self->sessions, 0);

  /* The sandbox made ahead goes now, not at the daemon's exit: its cgroup
   * with it. */
  g_clear_handle_id (&self->spare_sandbox_refill, g_source_remove);
  g_clear_object (&self->spare_sandbox_like);
  g_clear_pointer (&self->spare_sandbox, paddock_spare_sandbox_free);

  /* A session still starting has a CreateSession call waiting for it: the
   * ready callback kills it and answers that call with the error. */
  while (self->starting->len > 0)
    {
      g_autoptr(PaddockSessionImpl) session = g_object_ref (g_ptr_array_index (self->starting, 0));
      g_autoptr(GError) error = g_error_new_literal (PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                                                     "The daemon is shutting down");

      g_ptr_array_remove_index (self->starting, 0);
      paddock_session_impl_abandon_start (session, error);
      /* In case nobody was waiting (the callback kills it otherwise). */
      paddock_session_impl_kill_now (session);
    }
}

/* The grace an earlier daemon's leftovers get between SIGTERM and SIGKILL:
 * what the app's Stop gives. For tests, PADDOCK_TEST_LEFTOVER_GRACE_MS=N
 * makes it N ms (an hour, to look at a restart while it runs). */
#define LEFTOVER_GRACE_MS (5 * 1000)

static gint64
leftover_grace_ms (void)
{
  const char *test_grace = g_getenv ("PADDOCK_TEST_LEFTOVER_GRACE_MS");
  guint64 grace_ms;

  if (test_grace != NULL && g_ascii_string_to_unsigned (test_grace, 10, 0, 24 * 3600 * 1000, &grace_ms, NULL))
    return (gint64) grace_ms;
  return LEFTOVER_GRACE_MS;
}

/* Lists the sessions an earlier daemon left in the state dir, with their
 * last state; see paddock_session_impl_new_from_record() for what happens
 * to processes that were still running. */
void
paddock_manager_impl_restore (PaddockManagerImpl *self)
{
  g_autofree char *sessions_dir = NULL;
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GPtrArray) restored = g_ptr_array_new_with_free_func (g_object_unref);
  const char *entry;

  g_return_if_fail (PADDOCK_IS_MANAGER_IMPL (self));
  g_return_if_fail (self->connection != NULL);

  sessions_dir = g_build_filename (self->state_dir, "sessions", NULL);
  dir = g_dir_open (sessions_dir, 0, NULL);
  while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *record = g_build_filename (sessions_dir, entry, "session.json", NULL);
      g_autoptr(PaddockSessionImpl) session = NULL;
      g_autoptr(GError) error = NULL;

      /* A session's folder whose record is gone altogether is listed as
       * damaged too (below): its stage may hold work. */
      if (!g_file_test (record, G_FILE_TEST_IS_REGULAR))
        {
          g_autofree char *folder = g_build_filename (sessions_dir, entry, NULL);

          if (!paddock_session_record_is_session_id (entry) ||
              !g_file_test (folder, G_FILE_TEST_IS_DIR) || g_file_test (record, G_FILE_TEST_EXISTS))
            continue;
        }

      session = paddock_session_impl_new_from_record (record, self->helper_path, &error);
      if (session == NULL && !paddock_manager_impl_has_session (self, entry))
        {
          /* Damaged: listed all the same, with what is left of it, so that
           * work in its stage is not made invisible. */
          g_autofree char *reason = NULL;
          g_autoptr(PaddockSessionRecord) salvaged =
            paddock_session_record_salvage (record, entry, error != NULL ? error->message : "unreadable",
                                            &reason);

          if (salvaged != NULL)
            {
              g_message ("Session %s: %s", entry, reason);
              /* Damaged with @reason: the salvaged record says so. */
              session = paddock_session_impl_new_from_loaded_record (salvaged, record, self->helper_path);
            }
        }
      if (session == NULL ||
          g_strcmp0 (paddock_session_impl_get_id (session), entry) != 0 ||
          paddock_manager_impl_has_session (self, entry))
        {
          g_message ("Skipping the session record %s: %s", record,
                     error != NULL ? error->message : "its id does not match its folder");
          /* Not listed, so not left running either. */
          if (session != NULL)
            paddock_session_impl_kill_now (session);
          continue;
        }

      g_ptr_array_add (restored, g_steal_pointer (&session));
    }

  /* In creation order, as ListSessions promises. */
  g_ptr_array_sort (restored, compare_created);

  for (guint i = 0; i < restored->len; i++)
    {
      PaddockSessionImpl *session = g_ptr_array_index (restored, i);
      g_autoptr(GError) error = NULL;

      if (!g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (session), self->connection,
                                             paddock_session_impl_get_object_path (session), &error))
        {
          g_message ("Could not export session %s: %s", paddock_session_impl_get_id (session),
                     error->message);
          paddock_session_impl_kill_now (session);
          continue;
        }
      g_signal_connect (session, "changed", G_CALLBACK (paddock_manager_impl_session_changed_cb), self);
      g_signal_connect (session, "destroyed", G_CALLBACK (paddock_manager_impl_session_destroyed_cb), self);
      g_ptr_array_add (self->sessions, g_object_ref (session));
      /* Nothing of ours serves its ports now (of any profile). What an
       * earlier daemon left of it that still has a leased socket keeps
       * that port in use, not held by us, and is left alone until it is
       * ended below and the port taken back; then it is refused too
       * (_paddock_session_ports_refuse_all()). Unless it was adopted:
       * then its agent runs on, serving them as before. */
      if (!_paddock_session_impl_is_adopted (session))
        _paddock_session_ports_refuse_all (_paddock_session_network_get_ports (
                                             _paddock_session_impl_get_network (session)));
    }

  /* What the earlier daemon left running is ended on the main loop, for
   * every session at once: one grace for all, and the daemon serves
   * meanwhile (each session says "stopped" once its processes are gone). */
  {
    gint64 kill_at = g_get_monotonic_time () + leftover_grace_ms () * 1000;

    for (guint i = 0; i < self->sessions->len; i++)
      paddock_session_impl_end_leftovers (g_ptr_array_index (self->sessions, i), kill_at);
  }

  /* A sandbox an earlier daemon made ahead died with it, but not its
   * cgroup, named for a session that never was (or none listed now):
   * removed if still there. Its processes die with that daemon
   * (PR_SET_PDEATHSIG) but not at once: a daemon restarted right after a
   * crash may find them still going. Nothing in it is anybody's but that
   * dead daemon's, so it is ended first (a second at most). */
  {
    g_autofree char *marker = g_build_filename (sessions_dir, SPARE_SANDBOX_MARKER, NULL);
    g_autofree char *spare_id = NULL;

    if (g_file_get_contents (marker, &spare_id, NULL, NULL) && self->cgroup_parent != NULL &&
        strlen (spare_id) == 12 && strspn (spare_id, "0123456789abcdef") == 12 &&
        !paddock_manager_impl_has_session (self, spare_id))
      {
        g_autofree char *path = g_strconcat (self->cgroup_parent, "/paddock-session-", spare_id, NULL);
        g_autoptr(PaddockCgroup) cgroup = paddock_cgroup_open (path);

        if (cgroup != NULL && !paddock_cgroup_remove (cgroup))
          {
            paddock_cgroup_kill (cgroup);
            for (guint i = 0; i < 100 && !paddock_cgroup_remove (cgroup); i++)
              g_usleep (10 * 1000);
          }
        if (cgroup != NULL)
          g_debug ("%s %s, the cgroup of a sandbox an earlier daemon made ahead",
                   g_file_test (path, G_FILE_TEST_EXISTS) ? "Could not remove" : "Removed", path);
      }
    g_unlink (marker);
  }

  if (restored->len > 0)
    g_debug ("Listed %u session(s) of an earlier daemon", restored->len);
}
