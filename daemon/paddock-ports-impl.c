/* paddock-ports-impl.c — org.paddock.Ports1: the port registry on the bus
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <gio/gunixfdlist.h>

#include "paddock-compat-proc.h"
#include "paddock-dbus-checks.h"
#include "paddock-error.h"
#include "paddock-ports-impl.h"
#include "paddock-state-space.h"
#include "paddock-session-ports.h"

struct _PaddockPortsImpl
{
  PaddockIpcPorts1Skeleton  parent_instance;

  GDBusConnection          *connection;
  PaddockRegistry          *registry;
  guint                     name_owner_changed_id;
  guint                     reclaim_id;

  /* Unique name → "command (pid N)", asked of the bus once per client, so
   * that people see which program holds a lease rather than ":1.42". */
  GHashTable               *owner_labels;
  GCancellable             *cancellable;

  PaddockSessionExistsFunc  session_exists;
  gpointer                  session_exists_data;
};

static void paddock_ports_iface_init (PaddockIpcPorts1Iface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (PaddockPortsImpl, paddock_ports_impl,
                               PADDOCK_IPC_TYPE_PORTS1_SKELETON,
                               G_IMPLEMENT_INTERFACE (PADDOCK_IPC_TYPE_PORTS1,
                                                      paddock_ports_iface_init))

/* The registry is a library with its own domain; what crosses the bus is
 * always PADDOCK_ERROR so that scripts see one set of names. */
void
paddock_error_propagate_registry (GError **dest,
                                  GError  *src)
{
  PaddockError code = PADDOCK_ERROR_FAILED;

  g_return_if_fail (src != NULL);

  if (src->domain == PADDOCK_REGISTRY_ERROR)
    {
      switch ((PaddockRegistryError) src->code)
        {
        case PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT: code = PADDOCK_ERROR_INVALID_ARGUMENT; break;
        case PADDOCK_REGISTRY_ERROR_NOT_FOUND:        code = PADDOCK_ERROR_NOT_FOUND; break;
        case PADDOCK_REGISTRY_ERROR_ACCESS_DENIED:    code = PADDOCK_ERROR_ACCESS_DENIED; break;
        case PADDOCK_REGISTRY_ERROR_PORT_IN_USE:      code = PADDOCK_ERROR_PORT_IN_USE; break;
        case PADDOCK_REGISTRY_ERROR_PORT_EXHAUSTED:   code = PADDOCK_ERROR_PORT_EXHAUSTED; break;
        case PADDOCK_REGISTRY_ERROR_QUOTA_EXCEEDED:   code = PADDOCK_ERROR_QUOTA_EXCEEDED; break;
        case PADDOCK_REGISTRY_ERROR_NO_SPACE:         code = PADDOCK_ERROR_NO_SPACE; break;
        case PADDOCK_REGISTRY_ERROR_FAILED:
        default:                                      code = PADDOCK_ERROR_FAILED; break;
        }
    }
  else if (src->domain == PADDOCK_ERROR)
    code = src->code;

  g_set_error_literal (dest, PADDOCK_ERROR, code, src->message);
  g_error_free (src);
}

static gboolean
paddock_ports_impl_check_ready (PaddockPortsImpl      *self,
                                GDBusMethodInvocation *invocation)
{
  /* Objects are exported before the name is owned; until the state-dir lock
   * is ours and the leases are loaded nothing may be handed out. */
  if (self->registry == NULL)
    {
      g_dbus_method_invocation_return_error_literal (invocation, PADDOCK_ERROR, PADDOCK_ERROR_BUSY,
                                                     "The daemon is still starting");
      return FALSE;
    }

  return TRUE;
}

static void
paddock_ports_impl_return_error (GDBusMethodInvocation *invocation,
                                 GError                *registry_error)
{
  g_autoptr(GError) error = NULL;

  paddock_error_propagate_registry (&error, registry_error);
  g_dbus_method_invocation_return_gerror (invocation, error);
}

/* The registry's description of @lease plus what only the daemon knows: the
 * label of the owning program. Returns a floating reference. */
static GVariant *
paddock_ports_impl_describe (PaddockPortsImpl *self,
                             PaddockLease     *lease)
{
  g_autoptr(GVariant) description = paddock_lease_to_variant (lease);
  const char *label = g_hash_table_lookup (self->owner_labels, paddock_lease_get_owner (lease));
  g_auto(GVariantDict) dict = G_VARIANT_DICT_INIT (description);

  if (label != NULL && label[0] != '\0')
    g_variant_dict_insert (&dict, "owner-label", "s", label);

  return g_variant_dict_end (&dict);
}

static void
paddock_ports_impl_owner_pid_cb (GObject      *source,
                                 GAsyncResult *result,
                                 gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  PaddockPortsImpl *self = g_task_get_source_object (task);
  const char *owner = g_task_get_task_data (task);
  g_autoptr(GVariant) reply = NULL;
  g_autofree char *comm = NULL;
  guint32 pid = 0;

  reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, NULL);
  if (reply == NULL || self->registry == NULL ||
      !g_hash_table_contains (self->owner_labels, owner))
    return;

  g_variant_get (reply, "(u)", &pid);
  comm = paddock_compat_proc_read_name (pid);
  if (comm == NULL)
    comm = g_strdup ("?");

  /* comm is the client's own choice of name: keep it printable and short. */
  g_strcanon (comm, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+ ", '?');
  g_hash_table_replace (self->owner_labels, g_strdup (owner),
                        g_strdup_printf ("%s (pid %u)", comm, pid));

  /* Tell the clients: each of the owner's rows changed in place. */
  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (self->registry)); i++)
    {
      g_autoptr(PaddockLease) lease = g_list_model_get_item (G_LIST_MODEL (self->registry), i);
      GVariantBuilder added;

      if (g_strcmp0 (paddock_lease_get_owner (lease), owner) != 0)
        continue;

      g_variant_builder_init (&added, G_VARIANT_TYPE ("aa{sv}"));
      g_variant_builder_add_value (&added, paddock_ports_impl_describe (self, lease));
      paddock_ipc_ports1_emit_leases_changed (PADDOCK_IPC_PORTS1 (self), i, 1,
                                              g_variant_builder_end (&added));
    }
}

static void
paddock_ports_impl_learn_owner (PaddockPortsImpl *self,
                                const char       *owner)
{
  g_autoptr(GTask) task = NULL;

  if (owner[0] != ':' || g_hash_table_contains (self->owner_labels, owner))
    return;

  /* "" until the bus answers; the entry goes when the client does. */
  g_hash_table_insert (self->owner_labels, g_strdup (owner), g_strdup (""));
  task = g_task_new (self, self->cancellable, NULL, NULL);
  g_task_set_task_data (task, g_strdup (owner), g_free);
  g_dbus_connection_call (self->connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                          "org.freedesktop.DBus", "GetConnectionUnixProcessID",
                          g_variant_new ("(s)", owner), G_VARIANT_TYPE ("(u)"),
                          G_DBUS_CALL_FLAGS_NONE, 5000, self->cancellable,
                          paddock_ports_impl_owner_pid_cb, g_steal_pointer (&task));
}

/* What Lease and LeaseMany share before taking a port: the caller, its
 * options, the session it names. Returns FALSE once it has answered
 * @invocation with an error. */
static gboolean
paddock_ports_impl_check_lease_call (PaddockPortsImpl      *self,
                                     GDBusMethodInvocation *invocation,
                                     const char            *name,
                                     GVariant              *options,
                                     const char           **out_session)
{
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  const char *session = NULL;
  g_autoptr(GError) error = NULL;
  GVariantIter iter;
  const char *key;
  GVariant *value;

  if (!paddock_ports_impl_check_ready (self, invocation))
    return FALSE;

  if (sender == NULL)
    {
      g_dbus_method_invocation_return_error_literal (invocation, PADDOCK_ERROR,
                                                     PADDOCK_ERROR_INVALID_ARGUMENT,
                                                     "Leases are made over the message bus only");
      return FALSE;
    }

  /* Unknown options are refused rather than ignored: a script that misspells
   * "session" must not silently get a client lease that dies with it. */
  g_variant_iter_init (&iter, options);
  while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
    {
      g_autoptr(GVariant) owned_value = value;

      if (g_str_equal (key, "session") && g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
        session = g_variant_get_string (value, NULL);
      else
        {
          g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR,
                                                 PADDOCK_ERROR_INVALID_ARGUMENT,
                                                 "Unknown lease option “%s” of type %s",
                                                 key, g_variant_get_type_string (value));
          return FALSE;
        }
    }

  if (session != NULL && session[0] == '\0')
    session = NULL;
  /* No port of a session may look like one of its reserved ports. */
  if (session != NULL && !_paddock_session_ports_check_name (name, &error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return FALSE;
    }

  if (session != NULL &&
      (self->session_exists == NULL ||
       !self->session_exists (session, self->session_exists_data)))
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
                                             "No session “%s”", session);
      return FALSE;
    }

  *out_session = session;
  return TRUE;
}

/* A Lease or LeaseMany waiting for the registry's durable write. */
typedef struct
{
  PaddockPortsImpl      *self;
  GDBusMethodInvocation *invocation;
  gboolean               many;
} LeaseCall;

static void
lease_call_free (LeaseCall *call)
{
  g_object_unref (call->self);
  g_object_unref (call->invocation);
  g_free (call);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LeaseCall, lease_call_free)

static void
paddock_ports_impl_release_all (PaddockPortsImpl *self,
                                GPtrArray        *leases)
{
  for (guint i = 0; i < leases->len; i++)
    paddock_registry_release (self->registry,
                              paddock_lease_get_port (g_ptr_array_index (leases, i)), NULL, NULL);
}

/* The leases are durable and listed: pass their sockets, or, if even one
 * cannot be passed (fd limit), keep none the caller never learnt about. */
static void
paddock_ports_impl_lease_cb (GObject      *source,
                             GAsyncResult *result,
                             gpointer      user_data)
{
  g_autoptr(LeaseCall) call = user_data;
  PaddockPortsImpl *self = call->self;
  GDBusMethodInvocation *invocation = call->invocation;
  g_autoptr(GPtrArray) leases = NULL;
  g_autoptr(GUnixFDList) fd_list = g_unix_fd_list_new ();
  g_autoptr(GError) error = NULL;
  GVariantBuilder descriptions;
  GVariantBuilder handles;
  int handle = -1;

  leases = paddock_registry_lease_finish (PADDOCK_REGISTRY (source), result, &error);
  if (leases == NULL)
    {
      g_debug ("Lease for %s refused: %s",
               g_dbus_method_invocation_get_sender (invocation), error->message);
      paddock_ports_impl_return_error (invocation, g_steal_pointer (&error));
      return;
    }

  g_variant_builder_init (&descriptions, G_VARIANT_TYPE ("aa{sv}"));
  g_variant_builder_init (&handles, G_VARIANT_TYPE ("ah"));
  for (guint i = 0; i < leases->len; i++)
    {
      PaddockLease *lease = g_ptr_array_index (leases, i);

      handle = g_unix_fd_list_append (fd_list, paddock_lease_get_fd (lease), &error);
      if (handle < 0)
        {
          g_variant_builder_clear (&descriptions);
          g_variant_builder_clear (&handles);
          paddock_ports_impl_release_all (self, leases);
          g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                                                 "Could not pass the leased socket: %s",
                                                 error->message);
          return;
        }
      g_variant_builder_add_value (&descriptions, paddock_ports_impl_describe (self, lease));
      g_variant_builder_add (&handles, "h", handle);
    }

  g_debug ("Leased %u port(s) from %u “%s” to %s", leases->len,
           paddock_lease_get_port (g_ptr_array_index (leases, 0)),
           paddock_lease_get_name (g_ptr_array_index (leases, 0)),
           paddock_lease_get_owner (g_ptr_array_index (leases, 0)));
  paddock_ports_impl_learn_owner (self, paddock_lease_get_owner (g_ptr_array_index (leases, 0)));

  if (call->many)
    paddock_ipc_ports1_complete_lease_many (PADDOCK_IPC_PORTS1 (self), invocation, fd_list,
                                            g_variant_builder_end (&descriptions),
                                            g_variant_builder_end (&handles));
  else
    {
      g_autoptr(GVariant) all = g_variant_ref_sink (g_variant_builder_end (&descriptions));
      g_autoptr(GVariant) description = g_variant_get_child_value (all, 0);

      g_variant_builder_clear (&handles);
      paddock_ipc_ports1_complete_lease (PADDOCK_IPC_PORTS1 (self), invocation, fd_list,
                                         description, g_variant_new_handle (handle));
    }
}

/* Lease and LeaseMany, once their arguments are checked: the registry
 * takes the ports now and answers once they are durable, so calls that
 * arrive while one fdatasync runs share the next one (group commit). */
static void
paddock_ports_impl_start_lease (PaddockPortsImpl      *self,
                                GDBusMethodInvocation *invocation,
                                const char            *session,
                                const char            *name,
                                guint16                preferred_port,
                                guint                  count,
                                gboolean               many)
{
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  g_autoptr(GError) error = NULL;
  LeaseCall *call;

  /* A lease that cannot be journalled is not handed out: said up front,
   * naming the full filesystem, rather than as the journal's write error. */
  if (!paddock_state_space_check_writable (&error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return;
    }

  /* Method calls and NameOwnerChanged arrive in bus order on this one main
   * context, so a client that disconnects right after this call is released
   * by name_owner_changed_cb after its ports are taken: the registry then
   * releases them again once they are durable (or refuses them): no lease
   * is orphaned. */
  call = g_new0 (LeaseCall, 1);
  call->self = g_object_ref (self);
  call->invocation = g_object_ref (invocation);
  call->many = many;
  paddock_registry_lease_async (self->registry, session != NULL ? NULL : sender, session,
                                name, preferred_port, count, self->cancellable,
                                paddock_ports_impl_lease_cb, call);
}

static gboolean
paddock_ports_impl_handle_lease (PaddockIpcPorts1      *ports,
                                 GDBusMethodInvocation *invocation,
                                 GUnixFDList           *in_fd_list,
                                 const char            *name,
                                 guint16                preferred_port,
                                 GVariant              *options)
{
  PaddockPortsImpl *self = PADDOCK_PORTS_IMPL (ports);
  const char *session = NULL;

  if (paddock_ports_impl_check_lease_call (self, invocation, name, options, &session))
    paddock_ports_impl_start_lease (self, invocation, session, name, preferred_port, 1, FALSE);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* At most this many in one LeaseMany: the message bus's default limit of
 * descriptors in one message (max_message_unix_fds) is 16, and a bus
 * disconnects a sender that exceeds it, which would cut the daemon off the
 * bus. A client needing more calls again. */
#define LEASE_MANY_MAX 16

static gboolean
paddock_ports_impl_handle_lease_many (PaddockIpcPorts1      *ports,
                                      GDBusMethodInvocation *invocation,
                                      GUnixFDList           *in_fd_list,
                                      const char            *name,
                                      guint                  count,
                                      GVariant              *options)
{
  PaddockPortsImpl *self = PADDOCK_PORTS_IMPL (ports);
  const char *session = NULL;

  if (!paddock_ports_impl_check_lease_call (self, invocation, name, options, &session))
    return G_DBUS_METHOD_INVOCATION_HANDLED;

  if (count == 0 || count > LEASE_MANY_MAX)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                             "A count of 1 to %d ports, not %u", LEASE_MANY_MAX, count);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  /* All or nothing, with one durable write for all of them (and for
   * whatever other leases share the batch). */
  paddock_ports_impl_start_lease (self, invocation, session, name, 0, count, TRUE);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
paddock_ports_impl_handle_release (PaddockIpcPorts1      *ports,
                                   GDBusMethodInvocation *invocation,
                                   guint16                port)
{
  PaddockPortsImpl *self = PADDOCK_PORTS_IMPL (ports);
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  g_autoptr(GError) error = NULL;

  if (!paddock_ports_impl_check_ready (self, invocation))
    return G_DBUS_METHOD_INVOCATION_HANDLED;

  /* A NULL requester means "privileged" to the registry; a bus caller
   * without a sender name must never get that. */
  if (sender == NULL)
    sender = "";

  if (!paddock_registry_release (self->registry, port, sender, &error))
    {
      paddock_ports_impl_return_error (invocation, g_steal_pointer (&error));
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  g_debug ("Released port %u for %s", port, sender);
  paddock_ipc_ports1_complete_release (ports, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static GVariant *
paddock_ports_impl_list_range (PaddockPortsImpl *self,
                               guint             position,
                               guint             n_items)
{
  GVariantBuilder builder;

  g_variant_builder_init (&builder, G_VARIANT_TYPE ("aa{sv}"));

  for (guint i = position; i < position + n_items; i++)
    {
      g_autoptr(PaddockLease) lease = g_list_model_get_item (G_LIST_MODEL (self->registry), i);

      if (lease != NULL)
        g_variant_builder_add_value (&builder, paddock_ports_impl_describe (self, lease));
    }

  return g_variant_builder_end (&builder);
}

static gboolean
paddock_ports_impl_handle_list_leases (PaddockIpcPorts1      *ports,
                                       GDBusMethodInvocation *invocation)
{
  PaddockPortsImpl *self = PADDOCK_PORTS_IMPL (ports);

  if (!paddock_ports_impl_check_ready (self, invocation))
    return G_DBUS_METHOD_INVOCATION_HANDLED;

  paddock_ipc_ports1_complete_list_leases (ports, invocation,
                                           paddock_ports_impl_list_range (self, 0,
                                                                          g_list_model_get_n_items (G_LIST_MODEL (self->registry))));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void
paddock_ports_iface_init (PaddockIpcPorts1Iface *iface)
{
  iface->handle_lease = paddock_ports_impl_handle_lease;
  iface->handle_lease_many = paddock_ports_impl_handle_lease_many;
  iface->handle_release = paddock_ports_impl_handle_release;
  iface->handle_list_leases = paddock_ports_impl_handle_list_leases;
}

/* Leases we do not hold (after a restart: still open in their owner's
 * program, or taken by another one) are taken back as soon as their port is
 * free, so that the window in which nobody guards them stays short. */
#define PADDOCK_RECLAIM_INTERVAL_MS 1000

static gboolean paddock_ports_impl_reclaim_cb (gpointer user_data);

static void
paddock_ports_impl_items_changed_cb (GListModel       *model,
                                     guint             position,
                                     guint             removed,
                                     guint             added,
                                     PaddockPortsImpl *self)
{
  paddock_ipc_ports1_set_lease_count (PADDOCK_IPC_PORTS1 (self),
                                      g_list_model_get_n_items (model));
  paddock_ipc_ports1_emit_leases_changed (PADDOCK_IPC_PORTS1 (self), position, removed,
                                          paddock_ports_impl_list_range (self, position, added));
  /* A lease lost while running (a port its session's agent was to bind
   * itself, taken by another program meanwhile: paddock_registry_take_back())
   * is taken back once free, as those lost while no daemon ran. */
  for (guint i = position; self->reclaim_id == 0 && i < position + added; i++)
    {
      g_autoptr(PaddockLease) lease = g_list_model_get_item (model, i);

      if (lease != NULL && paddock_lease_get_state (lease) == PADDOCK_LEASE_STATE_LOST)
        self->reclaim_id = g_timeout_add (PADDOCK_RECLAIM_INTERVAL_MS, paddock_ports_impl_reclaim_cb, self);
    }
}

static void
paddock_ports_impl_name_owner_changed_cb (GDBusConnection *connection,
                                          const char      *sender_name,
                                          const char      *object_path,
                                          const char      *interface_name,
                                          const char      *signal_name,
                                          GVariant        *parameters,
                                          gpointer         user_data)
{
  PaddockPortsImpl *self = user_data;
  const char *name;
  const char *old_owner;
  const char *new_owner;
  guint released;

  if (self->registry == NULL ||
      !g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(sss)")))
    return;

  g_variant_get (parameters, "(&s&s&s)", &name, &old_owner, &new_owner);

  /* Only unique names own leases; a unique name never comes back. */
  if (name[0] != ':' || new_owner[0] != '\0')
    return;

  released = paddock_registry_release_owner (self->registry, name);
  g_hash_table_remove (self->owner_labels, name);
  if (released > 0)
    g_debug ("Client %s disconnected: released %u lease(s)", name, released);
}


static gboolean
paddock_ports_impl_reclaim_cb (gpointer user_data)
{
  PaddockPortsImpl *self = user_data;
  g_autoptr(GError) error = NULL;
  guint unheld = 0;
  guint reclaimed;

  reclaimed = paddock_registry_reclaim (self->registry, &unheld, &error);
  if (reclaimed > 0)
    g_debug ("Took back %u lease(s) whose port was free again", reclaimed);
  if (error != NULL)
    g_message ("Could not save the leases after taking some back: %s", error->message);

  if (unheld == 0)
    {
      self->reclaim_id = 0;
      return G_SOURCE_REMOVE;
    }

  return G_SOURCE_CONTINUE;
}

static void
paddock_ports_impl_dispose (GObject *object)
{
  PaddockPortsImpl *self = PADDOCK_PORTS_IMPL (object);

  g_clear_handle_id (&self->reclaim_id, g_source_remove);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->owner_labels, g_hash_table_unref);

  if (self->name_owner_changed_id != 0 && self->connection != NULL)
    g_dbus_connection_signal_unsubscribe (self->connection, self->name_owner_changed_id);
  self->name_owner_changed_id = 0;

  if (self->registry != NULL)
    g_signal_handlers_disconnect_by_data (self->registry, self);

  g_clear_object (&self->registry);
  g_clear_object (&self->connection);

  G_OBJECT_CLASS (paddock_ports_impl_parent_class)->dispose (object);
}

PADDOCK_DBUS_DEFINE_CHECKED_VTABLE (paddock_ports_impl)

static void
paddock_ports_impl_class_init (PaddockPortsImplClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  /* Every call's arguments are checked before a handler sees them. */
  G_DBUS_INTERFACE_SKELETON_CLASS (klass)->get_vtable = paddock_ports_impl_get_checked_vtable;

  object_class->dispose = paddock_ports_impl_dispose;
}

static void
paddock_ports_impl_init (PaddockPortsImpl *self)
{
  self->owner_labels = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->cancellable = g_cancellable_new ();
}

PaddockPortsImpl *
paddock_ports_impl_new (GDBusConnection *connection)
{
  PaddockPortsImpl *self;

  g_return_val_if_fail (G_IS_DBUS_CONNECTION (connection), NULL);

  self = g_object_new (PADDOCK_TYPE_PORTS_IMPL, NULL);
  self->connection = g_object_ref (connection);

  /* Subscribed before any lease exists, so no disconnect can be missed. */
  self->name_owner_changed_id =
    g_dbus_connection_signal_subscribe (connection,
                                        "org.freedesktop.DBus",
                                        "org.freedesktop.DBus",
                                        "NameOwnerChanged",
                                        "/org/freedesktop/DBus",
                                        NULL,
                                        G_DBUS_SIGNAL_FLAGS_NONE,
                                        paddock_ports_impl_name_owner_changed_cb,
                                        self, NULL);

  return self;
}

void
paddock_ports_impl_set_registry (PaddockPortsImpl *self,
                                 PaddockRegistry  *registry)
{
  g_return_if_fail (PADDOCK_IS_PORTS_IMPL (self));
  g_return_if_fail (PADDOCK_IS_REGISTRY (registry));
  g_return_if_fail (self->registry == NULL);

  self->registry = g_object_ref (registry);
  g_signal_connect (registry, "items-changed",
                    G_CALLBACK (paddock_ports_impl_items_changed_cb), self);

  paddock_ipc_ports1_set_port_range_start (PADDOCK_IPC_PORTS1 (self),
                                           paddock_registry_get_first_port (registry));
  paddock_ipc_ports1_set_port_range_end (PADDOCK_IPC_PORTS1 (self),
                                         paddock_registry_get_last_port (registry));
  paddock_ipc_ports1_set_max_leases (PADDOCK_IPC_PORTS1 (self),
                                     paddock_registry_get_max_leases (registry));
  paddock_ipc_ports1_set_max_leases_per_owner (PADDOCK_IPC_PORTS1 (self),
                                               paddock_registry_get_max_per_owner (registry));
  paddock_ipc_ports1_set_lease_count (PADDOCK_IPC_PORTS1 (self),
                                      g_list_model_get_n_items (G_LIST_MODEL (registry)));

  /* Unless a lease it found lost started the timer already (items-changed).
   * Called by hand, the callback's "remove" clears reclaim_id but cannot
   * remove a timer already running: that is ours to remove, or it would
   * run on, unowned (and past this object's end). */
  {
    guint timer = self->reclaim_id;

    if (paddock_ports_impl_reclaim_cb (self) == G_SOURCE_REMOVE)
      {
        if (timer != 0)
          g_source_remove (timer);
      }
    else if (self->reclaim_id == 0)
      self->reclaim_id = g_timeout_add (PADDOCK_RECLAIM_INTERVAL_MS,
                                        paddock_ports_impl_reclaim_cb, self);
  }
}

void
paddock_ports_impl_set_session_exists_func (PaddockPortsImpl         *self,
                                            PaddockSessionExistsFunc  func,
                                            gpointer                  user_data)
{
  g_return_if_fail (PADDOCK_IS_PORTS_IMPL (self));

  self->session_exists = func;
  self->session_exists_data = user_data;
}

/* After a restart the persisted leases of clients that disconnected while no
 * daemon was running must go: one ListNames tells which owners are still
 * on the bus. (Leases of an earlier bus were dropped at load: see
 * paddock_registry_set_bus_id().) */
void
paddock_ports_impl_forget_vanished_owners (PaddockPortsImpl *self)
{
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GHashTable) present = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) owners = NULL;
  g_autofree const char **names = NULL;
  const char *ourselves;

  g_return_if_fail (PADDOCK_IS_PORTS_IMPL (self));
  g_return_if_fail (self->registry != NULL);

  reply = g_dbus_connection_call_sync (self->connection, "org.freedesktop.DBus",
                                       "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                       "ListNames", NULL, G_VARIANT_TYPE ("(as)"),
                                       G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &error);
  if (reply == NULL)
    {
      /* Keep the leases: dropping them on a transient bus error would hand
       * a live client's port to someone else. */
      g_message ("Could not list the clients on the bus, keeping every lease: %s", error->message);
      return;
    }

  g_variant_get (reply, "(^a&s)", &names);
  for (guint i = 0; names[i] != NULL; i++)
    g_hash_table_add (present, (gpointer) names[i]);

  /* Our own unique name is never a client's, whatever an old record says. */
  ourselves = g_dbus_connection_get_unique_name (self->connection);
  if (ourselves != NULL)
    g_hash_table_remove (present, ourselves);

  owners = paddock_registry_dup_owners (self->registry);
  for (guint i = 0; owners[i] != NULL; i++)
    {
      if (owners[i][0] != ':' || g_hash_table_contains (present, owners[i]))
        continue;

      g_debug ("Client %s left while the daemon was down: released %u lease(s)",
               owners[i], paddock_registry_release_owner (self->registry, owners[i]));
    }
}
