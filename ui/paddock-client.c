/* paddock-client.c — the app's live connection to paddockd
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "paddock-client.h"
#include "paddock-lease-item.h"
#include "paddock-session-item.h"

/* PaddockClient follows org.paddock.Daemon on the session bus for as long as
 * the app runs, and keeps models that mirror the daemon's lists:
 *
 *  - when the name appears it makes a proxy, subscribes to LeasesChanged and
 *    then loads ListLeases;
 *  - LeasesChanged (position, removed, added) is applied as one
 *    g_list_store_splice(), so list widgets only see the rows that changed;
 *  - when the name vanishes (daemon stopped, crashed or replaced) the lists
 *    empty and the state says so; when it comes back everything reloads.
 *
 * Ordering: the daemon emits a signal after it changed its list, and the bus
 * keeps one sender's messages in order. A signal received while ListLeases is
 * pending is already reflected in its reply (or it will arrive after the
 * reply), so signals are ignored while loading. A signal that does not fit the
 * current list (a bug somewhere) triggers a reload instead of a wrong splice.
 *
 * Sessions follow the same pattern on Manager1 (ListSessions,
 * SessionsChanged), with one difference: a session's dictionary is sent
 * again each time its state changes, and the item for an id is kept (and
 * updated) rather than replaced, so that selections, open terminals and
 * the item's own Session1 proxy survive the change.
 *
 * One client is shared by every window of the app. */
struct _PaddockClient
{
  GObject             parent_instance;

  GDBusConnection    *connection;
  /* Cancelled in dispose: the bus lookup. */
  GCancellable       *cancellable;
  /* Cancelled in dispose and whenever the daemon vanishes: everything that
   * belongs to one daemon instance. */
  GCancellable       *daemon_cancellable;
  PaddockIpcPorts1   *ports;
  PaddockIpcManager1 *manager;
  GListStore         *leases;
  GListStore         *sessions;
  char               *error;

  guint               watch_id;
  gulong              leases_changed_id;
  gulong              sessions_changed_id;
  PaddockClientState  state;
  guint               loading : 1;
  guint               loading_sessions : 1;
};

G_DEFINE_FINAL_TYPE (PaddockClient, paddock_client, G_TYPE_OBJECT)

G_DEFINE_ENUM_TYPE (PaddockClientState, paddock_client_state,
                    G_DEFINE_ENUM_VALUE (PADDOCK_CLIENT_STATE_CONNECTING, "connecting"),
                    G_DEFINE_ENUM_VALUE (PADDOCK_CLIENT_STATE_CONNECTED, "connected"),
                    G_DEFINE_ENUM_VALUE (PADDOCK_CLIENT_STATE_DISCONNECTED, "disconnected"))

enum {
  PROP_0,
  PROP_CONNECTION,
  PROP_STATE,
  PROP_ERROR,
  PROP_LEASES,
  PROP_SESSIONS,
  PROP_MANAGER,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void paddock_client_load_leases   (PaddockClient *self);
static void paddock_client_load_sessions (PaddockClient *self);

static void
paddock_client_set_state (PaddockClient      *self,
                          PaddockClientState  state)
{
  if (self->state == state)
    return;

  self->state = state;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
}

static void
paddock_client_set_error (PaddockClient *self,
                          const char    *error)
{
  if (g_strcmp0 (self->error, error) == 0)
    return;

  g_free (self->error);
  self->error = g_strdup (error);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ERROR]);
}

static GPtrArray *
items_from_variant (GVariant *leases)
{
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);
  GVariantIter iter;
  GVariant *child;

  g_variant_iter_init (&iter, leases);
  while ((child = g_variant_iter_next_value (&iter)))
    {
      g_autoptr(GVariant) lease = child;

      g_ptr_array_add (items, paddock_lease_item_new_from_variant (lease));
    }

  return g_steal_pointer (&items);
}

static void
paddock_client_replace_leases (PaddockClient *self,
                               GPtrArray     *items)
{
  g_list_store_splice (self->leases,
                       0,
                       g_list_model_get_n_items (G_LIST_MODEL (self->leases)),
                       items != NULL ? items->pdata : NULL,
                       items != NULL ? items->len : 0);
}

/* Forget the daemon instance we talked to: pending calls, proxy, lists. */
static void
paddock_client_drop_daemon (PaddockClient *self)
{
  g_cancellable_cancel (self->daemon_cancellable);
  g_clear_object (&self->daemon_cancellable);

  if (self->ports != NULL)
    g_clear_signal_handler (&self->leases_changed_id, self->ports);
  g_clear_object (&self->ports);

  if (self->manager != NULL)
    g_clear_signal_handler (&self->sessions_changed_id, self->manager);
  if (self->manager != NULL)
    {
      g_clear_object (&self->manager);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MANAGER]);
    }

  self->loading = FALSE;
  self->loading_sessions = FALSE;

  if (self->leases != NULL)
    paddock_client_replace_leases (self, NULL);
  if (self->sessions != NULL)
    g_list_store_remove_all (self->sessions);
}

/* The item already shown for this session, if any, so that it lives on. */
static PaddockSessionItem *
paddock_client_find_session (PaddockClient *self,
                             GVariant      *dict)
{
  const char *id = NULL;
  guint n_items;

  if (!g_variant_lookup (dict, "id", "&s", &id))
    return NULL;

  n_items = g_list_model_get_n_items (G_LIST_MODEL (self->sessions));
  for (guint i = 0; i < n_items; i++)
    {
      g_autoptr(PaddockSessionItem) item = g_list_model_get_item (G_LIST_MODEL (self->sessions), i);

      if (g_strcmp0 (paddock_session_item_get_id (item), id) == 0)
        return g_steal_pointer (&item);
    }

  return NULL;
}

static GPtrArray *
session_items_from_variant (PaddockClient *self,
                            GVariant      *sessions)
{
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);
  GVariantIter iter;
  GVariant *child;

  g_variant_iter_init (&iter, sessions);
  while ((child = g_variant_iter_next_value (&iter)))
    {
      g_autoptr(GVariant) dict = child;
      PaddockSessionItem *item;

      if ((item = paddock_client_find_session (self, dict)))
        paddock_session_item_update (item, dict);
      else
        item = paddock_session_item_new (self->connection, dict);

      g_ptr_array_add (items, item);
    }

  return g_steal_pointer (&items);
}

static void
sessions_changed_cb (PaddockIpcManager1 *manager,
                     guint               position,
                     guint               removed,
                     GVariant           *added,
                     PaddockClient      *self)
{
  g_autoptr(GPtrArray) items = NULL;
  guint n_items;

  g_assert (PADDOCK_IS_CLIENT (self));

  if (manager != self->manager || self->loading_sessions)
    return;

  n_items = g_list_model_get_n_items (G_LIST_MODEL (self->sessions));
  if (position > n_items || removed > n_items - position)
    {
      g_debug ("SessionsChanged(%u, %u) does not fit %u sessions: reloading",
               position, removed, n_items);
      paddock_client_load_sessions (self);
      return;
    }

  items = session_items_from_variant (self, added);
  g_list_store_splice (self->sessions, position, removed, items->pdata, items->len);
}

static void
list_sessions_cb (GObject      *object,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autoptr(PaddockClient) self = user_data;
  g_autoptr(GVariant) sessions = NULL;
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(GError) error = NULL;

  if (!paddock_ipc_manager1_call_list_sessions_finish (PADDOCK_IPC_MANAGER1 (object),
                                                       &sessions, result, &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_debug ("ListSessions failed: %s", error->message);
      if ((PaddockIpcManager1 *)object == self->manager)
        self->loading_sessions = FALSE;
      return;
    }

  if ((PaddockIpcManager1 *)object != self->manager)
    return;

  self->loading_sessions = FALSE;
  items = session_items_from_variant (self, sessions);
  g_list_store_splice (self->sessions,
                       0,
                       g_list_model_get_n_items (G_LIST_MODEL (self->sessions)),
                       items->pdata,
                       items->len);
}

static void
paddock_client_load_sessions (PaddockClient *self)
{
  g_assert (PADDOCK_IS_CLIENT (self));
  g_assert (self->manager != NULL);

  self->loading_sessions = TRUE;
  paddock_ipc_manager1_call_list_sessions (self->manager,
                                           self->daemon_cancellable,
                                           list_sessions_cb,
                                           g_object_ref (self));
}

static void
manager_proxy_new_cb (GObject      *object,
                      GAsyncResult *result,
                      gpointer      user_data)
{
  g_autoptr(PaddockClient) self = user_data;
  g_autoptr(PaddockIpcManager1) manager = NULL;
  g_autoptr(GError) error = NULL;

  if (!(manager = paddock_ipc_manager1_proxy_new_finish (result, &error)))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_debug ("Cannot make a Manager1 proxy: %s", error->message);
      return;
    }

  if (self->daemon_cancellable == NULL ||
      g_cancellable_is_cancelled (self->daemon_cancellable))
    return;

  g_assert (self->manager == NULL);

  /* Creating a session may wait for the sandbox to come up. */
  g_dbus_proxy_set_default_timeout (G_DBUS_PROXY (manager), 120 * 1000);

  self->manager = g_steal_pointer (&manager);
  self->sessions_changed_id = g_signal_connect (self->manager,
                                                "sessions-changed",
                                                G_CALLBACK (sessions_changed_cb),
                                                self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MANAGER]);
  paddock_client_load_sessions (self);
}

static void
leases_changed_cb (PaddockIpcPorts1 *ports,
                   guint             position,
                   guint             removed,
                   GVariant         *added,
                   PaddockClient    *self)
{
  g_autoptr(GPtrArray) items = NULL;
  guint n_items;

  g_assert (PADDOCK_IS_CLIENT (self));

  if (ports != self->ports || self->loading)
    return;

  n_items = g_list_model_get_n_items (G_LIST_MODEL (self->leases));
  if (position > n_items || removed > n_items - position)
    {
      g_debug ("LeasesChanged(%u, %u) does not fit %u leases: reloading",
               position, removed, n_items);
      paddock_client_load_leases (self);
      return;
    }

  items = items_from_variant (added);
  g_list_store_splice (self->leases, position, removed, items->pdata, items->len);
}

static void
list_leases_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(PaddockClient) self = user_data;
  g_autoptr(GVariant) leases = NULL;
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(GError) error = NULL;

  if (!paddock_ipc_ports1_call_list_leases_finish (PADDOCK_IPC_PORTS1 (object),
                                                   &leases, result, &error))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;

      if ((PaddockIpcPorts1 *)object != self->ports)
        return;

      g_dbus_error_strip_remote_error (error);
      g_debug ("ListLeases failed: %s", error->message);
      self->loading = FALSE;
      paddock_client_set_error (self, error->message);
      paddock_client_set_state (self, PADDOCK_CLIENT_STATE_DISCONNECTED);
      return;
    }

  if ((PaddockIpcPorts1 *)object != self->ports)
    return;

  self->loading = FALSE;
  items = items_from_variant (leases);
  paddock_client_replace_leases (self, items);
  paddock_client_set_error (self, NULL);
  paddock_client_set_state (self, PADDOCK_CLIENT_STATE_CONNECTED);
}

static void
paddock_client_load_leases (PaddockClient *self)
{
  g_assert (PADDOCK_IS_CLIENT (self));
  g_assert (self->ports != NULL);

  self->loading = TRUE;
  paddock_ipc_ports1_call_list_leases (self->ports,
                                       self->daemon_cancellable,
                                       list_leases_cb,
                                       g_object_ref (self));
}

static void
ports_proxy_new_cb (GObject      *object,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  g_autoptr(PaddockClient) self = user_data;
  g_autoptr(PaddockIpcPorts1) ports = NULL;
  g_autoptr(GError) error = NULL;

  if (!(ports = paddock_ipc_ports1_proxy_new_finish (result, &error)))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;

      g_debug ("Cannot make a Ports1 proxy: %s", error->message);
      paddock_client_set_error (self, error->message);
      paddock_client_set_state (self, PADDOCK_CLIENT_STATE_DISCONNECTED);
      return;
    }

  /* The daemon may have vanished while the proxy was being made. */
  if (self->daemon_cancellable == NULL ||
      g_cancellable_is_cancelled (self->daemon_cancellable))
    return;

  g_assert (self->ports == NULL);

  /* Subscribe first, then list: see the ordering note at the top. */
  self->ports = g_steal_pointer (&ports);
  self->leases_changed_id = g_signal_connect (self->ports,
                                              "leases-changed",
                                              G_CALLBACK (leases_changed_cb),
                                              self);
  paddock_client_load_leases (self);
}

static void
name_appeared_cb (GDBusConnection *connection,
                  const char      *name,
                  const char      *name_owner,
                  gpointer         user_data)
{
  PaddockClient *self = user_data;

  g_assert (PADDOCK_IS_CLIENT (self));

  g_debug ("%s appeared as %s", name, name_owner);

  paddock_client_drop_daemon (self);
  self->daemon_cancellable = g_cancellable_new ();
  paddock_client_set_state (self, PADDOCK_CLIENT_STATE_CONNECTING);

  /* The well-known name, without auto-start: when this daemon goes away we
   * want to notice it, not to start another one behind the user's back. */
  paddock_ipc_ports1_proxy_new (connection,
                                G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START,
                                PADDOCK_BUS_NAME,
                                PADDOCK_OBJECT_PATH,
                                self->daemon_cancellable,
                                ports_proxy_new_cb,
                                g_object_ref (self));
  paddock_ipc_manager1_proxy_new (connection,
                                  G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START,
                                  PADDOCK_BUS_NAME,
                                  PADDOCK_OBJECT_PATH,
                                  self->daemon_cancellable,
                                  manager_proxy_new_cb,
                                  g_object_ref (self));
}

static void
name_vanished_cb (GDBusConnection *connection,
                  const char      *name,
                  gpointer         user_data)
{
  PaddockClient *self = user_data;

  g_assert (PADDOCK_IS_CLIENT (self));

  g_debug ("%s vanished", name);

  paddock_client_drop_daemon (self);
  paddock_client_set_state (self, PADDOCK_CLIENT_STATE_DISCONNECTED);
}

static void
paddock_client_watch (PaddockClient *self)
{
  g_assert (self->connection != NULL);
  g_assert (self->watch_id == 0);

  /* AUTO_START asks the bus to activate the daemon once, when the app
   * starts, if it is installed as a D-Bus service. */
  self->watch_id = g_bus_watch_name_on_connection (self->connection,
                                                   PADDOCK_BUS_NAME,
                                                   G_BUS_NAME_WATCHER_FLAGS_AUTO_START,
                                                   name_appeared_cb,
                                                   name_vanished_cb,
                                                   self,
                                                   NULL);
}

static void
bus_get_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(PaddockClient) self = user_data;
  g_autoptr(GDBusConnection) connection = NULL;
  g_autoptr(GError) error = NULL;

  if (!(connection = g_bus_get_finish (result, &error)))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;

      g_debug ("No session bus: %s", error->message);
      paddock_client_set_error (self, error->message);
      paddock_client_set_state (self, PADDOCK_CLIENT_STATE_DISCONNECTED);
      return;
    }

  self->connection = g_steal_pointer (&connection);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CONNECTION]);
  paddock_client_watch (self);
}

static void
paddock_client_constructed (GObject *object)
{
  PaddockClient *self = (PaddockClient *)object;

  G_OBJECT_CLASS (paddock_client_parent_class)->constructed (object);

  if (self->connection != NULL)
    paddock_client_watch (self);
  else
    g_bus_get (G_BUS_TYPE_SESSION, self->cancellable, bus_get_cb, g_object_ref (self));
}

static void
paddock_client_dispose (GObject *object)
{
  PaddockClient *self = (PaddockClient *)object;

  g_cancellable_cancel (self->cancellable);
  g_clear_handle_id (&self->watch_id, g_bus_unwatch_name);
  paddock_client_drop_daemon (self);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->connection);
  g_clear_object (&self->leases);
  g_clear_object (&self->sessions);

  G_OBJECT_CLASS (paddock_client_parent_class)->dispose (object);
}

static void
paddock_client_finalize (GObject *object)
{
  PaddockClient *self = (PaddockClient *)object;

  g_clear_pointer (&self->error, g_free);

  G_OBJECT_CLASS (paddock_client_parent_class)->finalize (object);
}

static void
paddock_client_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  PaddockClient *self = PADDOCK_CLIENT (object);

  switch (prop_id)
    {
    case PROP_CONNECTION:
      g_value_set_object (value, self->connection);
      break;

    case PROP_STATE:
      g_value_set_enum (value, self->state);
      break;

    case PROP_ERROR:
      g_value_set_string (value, self->error);
      break;

    case PROP_LEASES:
      g_value_set_object (value, self->leases);
      break;

    case PROP_SESSIONS:
      g_value_set_object (value, self->sessions);
      break;

    case PROP_MANAGER:
      g_value_set_object (value, self->manager);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_client_set_property (GObject      *object,
                             guint         prop_id,
                             const GValue *value,
                             GParamSpec   *pspec)
{
  PaddockClient *self = PADDOCK_CLIENT (object);

  switch (prop_id)
    {
    case PROP_CONNECTION:
      self->connection = g_value_dup_object (value);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_client_class_init (PaddockClientClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = paddock_client_constructed;
  object_class->dispose = paddock_client_dispose;
  object_class->finalize = paddock_client_finalize;
  object_class->get_property = paddock_client_get_property;
  object_class->set_property = paddock_client_set_property;

  /**
   * PaddockClient:connection:
   *
   * The bus the daemon is looked for on; %NULL at construction means the
   * session bus, looked up asynchronously.
   */
  properties[PROP_CONNECTION] =
    g_param_spec_object ("connection", NULL, NULL,
                         G_TYPE_DBUS_CONNECTION,
                         (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                          G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  properties[PROP_STATE] =
    g_param_spec_enum ("state", NULL, NULL,
                       PADDOCK_TYPE_CLIENT_STATE,
                       PADDOCK_CLIENT_STATE_CONNECTING,
                       (G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * PaddockClient:error:
   *
   * Why the daemon cannot be used although it may be running (no session
   * bus, a failed call), or %NULL.
   */
  properties[PROP_ERROR] =
    g_param_spec_string ("error", NULL, NULL,
                         NULL,
                         (G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  properties[PROP_LEASES] =
    g_param_spec_object ("leases", NULL, NULL,
                         G_TYPE_LIST_MODEL,
                         (G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  properties[PROP_SESSIONS] =
    g_param_spec_object ("sessions", NULL, NULL,
                         G_TYPE_LIST_MODEL,
                         (G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  /**
   * PaddockClient:manager:
   *
   * The Manager1 proxy while the daemon is on the bus, else %NULL.
   */
  properties[PROP_MANAGER] =
    g_param_spec_object ("manager", NULL, NULL,
                         PADDOCK_IPC_TYPE_MANAGER1,
                         (G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
paddock_client_init (PaddockClient *self)
{
  self->cancellable = g_cancellable_new ();
  self->leases = g_list_store_new (PADDOCK_TYPE_LEASE_ITEM);
  self->sessions = g_list_store_new (PADDOCK_TYPE_SESSION_ITEM);
  self->state = PADDOCK_CLIENT_STATE_CONNECTING;
}

/**
 * paddock_client_new:
 * @connection: (nullable): a bus connection, or %NULL for the session bus
 *
 * Returns: (transfer full): a client that starts following the daemon at once
 */
PaddockClient *
paddock_client_new (GDBusConnection *connection)
{
  g_return_val_if_fail (connection == NULL || G_IS_DBUS_CONNECTION (connection), NULL);

  return g_object_new (PADDOCK_TYPE_CLIENT,
                       "connection", connection,
                       NULL);
}

/**
 * paddock_client_get_connection:
 *
 * Returns: (transfer none) (nullable): the bus, once it is known
 */
GDBusConnection *
paddock_client_get_connection (PaddockClient *self)
{
  g_return_val_if_fail (PADDOCK_IS_CLIENT (self), NULL);

  return self->connection;
}

PaddockClientState
paddock_client_get_state (PaddockClient *self)
{
  g_return_val_if_fail (PADDOCK_IS_CLIENT (self), PADDOCK_CLIENT_STATE_DISCONNECTED);

  return self->state;
}

/**
 * paddock_client_get_error:
 *
 * Returns: (transfer none) (nullable): see #PaddockClient:error
 */
const char *
paddock_client_get_error (PaddockClient *self)
{
  g_return_val_if_fail (PADDOCK_IS_CLIENT (self), NULL);

  return self->error;
}

/**
 * paddock_client_get_leases:
 *
 * The daemon's leases ordered by port, as #PaddockLeaseItem; empty while
 * the daemon is not reachable.
 *
 * Returns: (transfer none): a #GListModel of #PaddockLeaseItem
 */
GListModel *
paddock_client_get_leases (PaddockClient *self)
{
  g_return_val_if_fail (PADDOCK_IS_CLIENT (self), NULL);

  return G_LIST_MODEL (self->leases);
}

/**
 * paddock_client_get_ports:
 *
 * Returns: (transfer none) (nullable): the Ports1 proxy while connected
 */
PaddockIpcPorts1 *
paddock_client_get_ports (PaddockClient *self)
{
  g_return_val_if_fail (PADDOCK_IS_CLIENT (self), NULL);

  return self->ports;
}

/**
 * paddock_client_get_sessions:
 *
 * The daemon's sessions in creation order, as #PaddockSessionItem; empty
 * while the daemon is not reachable.
 *
 * Returns: (transfer none): a #GListModel of #PaddockSessionItem
 */
GListModel *
paddock_client_get_sessions (PaddockClient *self)
{
  g_return_val_if_fail (PADDOCK_IS_CLIENT (self), NULL);

  return G_LIST_MODEL (self->sessions);
}

/**
 * paddock_client_get_manager:
 *
 * Returns: (transfer none) (nullable): the Manager1 proxy while connected
 */
PaddockIpcManager1 *
paddock_client_get_manager (PaddockClient *self)
{
  g_return_val_if_fail (PADDOCK_IS_CLIENT (self), NULL);

  return self->manager;
}
