/* paddock-session-item.c — one agent session as the app shows it
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "paddock-layer-item.h"
#include "paddock-session-item.h"

/* A session item starts from the dictionary ListSessions or SessionsChanged
 * gave for it, then follows its Session1 object: the proxy's cached
 * properties (State, ProcessCount, Staging…) arrive with
 * PropertiesChanged, and every change is a notify that rows and pages bind
 * to. The client keeps one item per session id for as long as the session
 * exists, so selections and open views survive its state changes. */
struct _PaddockSessionItem
{
  GObject             parent_instance;

  GCancellable       *cancellable;
  PaddockIpcSession1 *proxy;

  char               *id;
  char               *object_path;
  char               *name;
  char               *agent;
  char               *state;
  /* NULL, or why the daemon could not read the session's record whole
   * (ListSessions' "damaged"): the sidebar says "Damaged" then. */
  char               *damaged;
  char               *profile;
  char               *staging;
  char               *workspace;
  char               *command_line;
  guint               pid;
  guint               process_count;
  gint                exit_status;     /* -1 while the agent runs */
  guint               n_changes;

  char               *network_mode;
  GVariant           *boundary_variant;
  GListStore         *boundary;
  char               *boundary_status;
  guint               n_unenforced;
};

G_DEFINE_FINAL_TYPE (PaddockSessionItem, paddock_session_item, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_ID,
  PROP_OBJECT_PATH,
  PROP_NAME,
  PROP_AGENT,
  PROP_STATE,
  PROP_STATE_LABEL,
  PROP_PROFILE,
  PROP_STAGING,
  PROP_WORKSPACE,
  PROP_COMMAND_LINE,
  PROP_PID,
  PROP_PROCESS_COUNT,
  PROP_EXIT_STATUS,
  PROP_RUNNING,
  PROP_N_CHANGES,
  PROP_N_CHANGES_LABEL,
  PROP_PROXY,
  PROP_NETWORK_MODE,
  PROP_BOUNDARY,
  PROP_BOUNDARY_STATUS,
  PROP_N_UNENFORCED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
count_changes_cb (GObject      *object,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autoptr(PaddockSessionItem) self = user_data;
  g_autoptr(GVariant) changes = NULL;
  g_autoptr(GError) error = NULL;

  if (!paddock_ipc_session1_call_list_changes_finish (PADDOCK_IPC_SESSION1 (object), &changes, result, &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_debug ("Cannot count the changes of session %s: %s", self->id, error->message);
      return;
    }

  paddock_session_item_set_n_changes (self, g_variant_n_children (changes));
}

/* The sidebar shows how many changes wait for review before the session's
 * Changes view was ever opened (which then keeps the count current): count
 * them when the session is first seen and whenever its state changes. */
static void
paddock_session_item_count_changes (PaddockSessionItem *self)
{
  if (self->proxy == NULL || !paddock_session_item_is_staged (self))
    return;

  paddock_ipc_session1_call_list_changes (self->proxy, self->cancellable, count_changes_cb, g_object_ref (self));
}

static void
set_string (PaddockSessionItem  *self,
            char               **field,
            const char          *value,
            guint                prop_id)
{
  if (value == NULL || g_strcmp0 (*field, value) == 0)
    return;

  g_free (*field);
  *field = g_strdup (value);
  g_object_notify_by_pspec (G_OBJECT (self), properties[prop_id]);

  if (prop_id == PROP_STATE)
    {
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE_LABEL]);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUNNING]);
      paddock_session_item_count_changes (self);
    }
}

static void
set_exit_status (PaddockSessionItem *self,
                 gint                value)
{
  if (self->exit_status == value)
    return;

  self->exit_status = value;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_EXIT_STATUS]);
}

static void
set_uint (PaddockSessionItem *self,
          guint              *field,
          guint               value,
          guint               prop_id)
{
  if (*field == value)
    return;

  *field = value;
  g_object_notify_by_pspec (G_OBJECT (self), properties[prop_id]);
}

/* Paths and argv are bytes on the bus; show them as text, never fail. */
static char *
display_bytes (const char *bytes)
{
  return bytes != NULL ? g_utf8_make_valid (bytes, -1) : NULL;
}

static void
set_command (PaddockSessionItem *self,
             const char * const *argv)
{
  g_autoptr(GString) line = NULL;
  g_autofree char *agent = NULL;

  if (argv == NULL || argv[0] == NULL)
    return;

  line = g_string_new (NULL);
  for (guint i = 0; argv[i] != NULL; i++)
    {
      g_autofree char *arg = display_bytes (argv[i]);
      g_autofree char *quoted = NULL;

      if (i > 0)
        g_string_append_c (line, ' ');

      /* Quote only what needs it, as a shell user would type it. */
      if (*arg == '\0' || strpbrk (arg, " \t\n'\"\\$`;&|<>()*?[]#~") != NULL)
        quoted = g_shell_quote (arg);
      g_string_append (line, quoted != NULL ? quoted : arg);
    }

  {
    g_autofree char *argv0 = display_bytes (argv[0]);
    agent = g_path_get_basename (argv0);
  }

  set_string (self, &self->command_line, line->str, PROP_COMMAND_LINE);
  set_string (self, &self->agent, agent, PROP_AGENT);
}

/* The Boundary property, as layer items: replaced as a whole when it
 * changes (it does so rarely: empty, then once the session started), and
 * summed up for the sidebar's badge and the Safety page's header. */
static void
set_boundary (PaddockSessionItem *self,
              GVariant           *boundary)
{
  g_autoptr(GPtrArray) layers = g_ptr_array_new_with_free_func (g_object_unref);
  const char *status = NULL;
  guint n_requested = 0;
  guint n_enforced = 0;
  guint n_unenforced = 0;
  GVariantIter iter;
  GVariant *dict;

  if (boundary == NULL || !g_variant_is_of_type (boundary, G_VARIANT_TYPE ("aa{sv}")))
    return;
  if (self->boundary_variant != NULL && g_variant_equal (self->boundary_variant, boundary))
    return;

  g_clear_pointer (&self->boundary_variant, g_variant_unref);
  self->boundary_variant = g_variant_ref (boundary);

  g_variant_iter_init (&iter, boundary);
  while ((dict = g_variant_iter_next_value (&iter)))
    {
      PaddockLayerItem *layer = paddock_layer_item_new (dict);

      g_ptr_array_add (layers, layer);
      if (paddock_layer_item_get_requested (layer))
        {
          n_requested++;
          if (g_strcmp0 (paddock_layer_item_get_status (layer), "enforced") == 0)
            n_enforced++;
          else
            n_unenforced++;
        }
      g_variant_unref (dict);
    }

  /* Nothing known yet: no status. Nothing enforced (the host profile, or
   * a sandbox that failed everywhere): unenforced. */
  if (layers->len == 0)
    status = NULL;
  else if (n_enforced == 0)
    status = "unenforced";
  else if (n_enforced == n_requested)
    status = "enforced";
  else
    status = "partial";

  g_list_store_splice (self->boundary, 0, g_list_model_get_n_items (G_LIST_MODEL (self->boundary)),
                       layers->pdata, layers->len);

  if (g_strcmp0 (self->boundary_status, status) != 0)
    {
      g_free (self->boundary_status);
      self->boundary_status = g_strdup (status);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BOUNDARY_STATUS]);
    }
  set_uint (self, &self->n_unenforced, n_unenforced, PROP_N_UNENFORCED);
}

static void
paddock_session_item_sync_proxy (PaddockSessionItem *self)
{
  PaddockIpcSession1 *proxy = self->proxy;
  g_autofree char *workspace = NULL;

  if (proxy == NULL)
    return;

  g_object_freeze_notify (G_OBJECT (self));
  set_string (self, &self->name, paddock_ipc_session1_get_name (proxy), PROP_NAME);
  set_string (self, &self->state, paddock_ipc_session1_get_state (proxy), PROP_STATE);
  set_string (self, &self->profile, paddock_ipc_session1_get_profile (proxy), PROP_PROFILE);
  set_string (self, &self->staging, paddock_ipc_session1_get_staging (proxy), PROP_STAGING);
  workspace = display_bytes (paddock_ipc_session1_get_workspace (proxy));
  set_string (self, &self->workspace, workspace, PROP_WORKSPACE);
  set_command (self, paddock_ipc_session1_get_command (proxy));
  if (paddock_ipc_session1_get_agent (proxy) != NULL && *paddock_ipc_session1_get_agent (proxy) != '\0')
    set_string (self, &self->agent, paddock_ipc_session1_get_agent (proxy), PROP_AGENT);
  set_uint (self, &self->pid, paddock_ipc_session1_get_main_pid (proxy), PROP_PID);
  set_uint (self, &self->process_count, paddock_ipc_session1_get_process_count (proxy), PROP_PROCESS_COUNT);
  set_exit_status (self, paddock_ipc_session1_get_exit_status (proxy));
  set_string (self, &self->network_mode, paddock_ipc_session1_get_network_mode (proxy), PROP_NETWORK_MODE);
  set_boundary (self, paddock_ipc_session1_get_boundary (proxy));
  g_object_thaw_notify (G_OBJECT (self));
}

static void
proxy_properties_changed_cb (PaddockSessionItem *self,
                             GVariant           *changed,
                             GStrv               invalidated,
                             GDBusProxy         *proxy)
{
  paddock_session_item_sync_proxy (self);
}

static void
proxy_new_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(PaddockSessionItem) self = user_data;
  g_autoptr(PaddockIpcSession1) proxy = NULL;
  g_autoptr(GError) error = NULL;

  if (!(proxy = paddock_ipc_session1_proxy_new_finish (result, &error)))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_debug ("No proxy for session %s: %s", self->id, error->message);
      return;
    }

  /* Long calls (Stop waits for the grace period, Apply for the batch) must
   * not time out at GDBus's 25 s default. */
  g_dbus_proxy_set_default_timeout (G_DBUS_PROXY (proxy), G_MAXINT);

  self->proxy = g_steal_pointer (&proxy);
  g_signal_connect_object (self->proxy,
                           "g-properties-changed",
                           G_CALLBACK (proxy_properties_changed_cb),
                           self,
                           G_CONNECT_SWAPPED);
  paddock_session_item_sync_proxy (self);
  paddock_session_item_count_changes (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PROXY]);
}

static void
paddock_session_item_dispose (GObject *object)
{
  PaddockSessionItem *self = (PaddockSessionItem *)object;

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->proxy);

  G_OBJECT_CLASS (paddock_session_item_parent_class)->dispose (object);
}

static void
paddock_session_item_finalize (GObject *object)
{
  PaddockSessionItem *self = (PaddockSessionItem *)object;

  g_clear_pointer (&self->id, g_free);
  g_clear_pointer (&self->object_path, g_free);
  g_clear_pointer (&self->name, g_free);
  g_clear_pointer (&self->agent, g_free);
  g_clear_pointer (&self->state, g_free);
  g_clear_pointer (&self->damaged, g_free);
  g_clear_pointer (&self->profile, g_free);
  g_clear_pointer (&self->staging, g_free);
  g_clear_pointer (&self->workspace, g_free);
  g_clear_pointer (&self->command_line, g_free);
  g_clear_pointer (&self->network_mode, g_free);
  g_clear_pointer (&self->boundary_variant, g_variant_unref);
  g_clear_pointer (&self->boundary_status, g_free);
  g_clear_object (&self->boundary);

  G_OBJECT_CLASS (paddock_session_item_parent_class)->finalize (object);
}

static void
paddock_session_item_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  PaddockSessionItem *self = PADDOCK_SESSION_ITEM (object);

  switch (prop_id)
    {
    case PROP_ID:
      g_value_set_string (value, self->id);
      break;

    case PROP_OBJECT_PATH:
      g_value_set_string (value, self->object_path);
      break;

    case PROP_NAME:
      g_value_set_string (value, self->name);
      break;

    case PROP_AGENT:
      g_value_set_string (value, self->agent);
      break;

    case PROP_STATE:
      g_value_set_string (value, self->state);
      break;

    case PROP_STATE_LABEL:
      g_value_set_string (value, paddock_session_item_get_state_label (self));
      break;

    case PROP_PROFILE:
      g_value_set_string (value, self->profile);
      break;

    case PROP_STAGING:
      g_value_set_string (value, self->staging);
      break;

    case PROP_WORKSPACE:
      g_value_set_string (value, self->workspace);
      break;

    case PROP_COMMAND_LINE:
      g_value_set_string (value, self->command_line);
      break;

    case PROP_PID:
      g_value_set_uint (value, self->pid);
      break;

    case PROP_PROCESS_COUNT:
      g_value_set_uint (value, self->process_count);
      break;

    case PROP_EXIT_STATUS:
      g_value_set_int (value, self->exit_status);
      break;

    case PROP_RUNNING:
      g_value_set_boolean (value, paddock_session_item_is_running (self));
      break;

    case PROP_N_CHANGES:
      g_value_set_uint (value, self->n_changes);
      break;

    case PROP_N_CHANGES_LABEL:
      g_value_take_string (value, self->n_changes > 0 ? g_strdup_printf ("%u", self->n_changes) : NULL);
      break;

    case PROP_PROXY:
      g_value_set_object (value, self->proxy);
      break;

    case PROP_NETWORK_MODE:
      g_value_set_string (value, self->network_mode);
      break;

    case PROP_BOUNDARY:
      g_value_set_object (value, self->boundary);
      break;

    case PROP_BOUNDARY_STATUS:
      g_value_set_string (value, self->boundary_status);
      break;

    case PROP_N_UNENFORCED:
      g_value_set_uint (value, self->n_unenforced);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_session_item_class_init (PaddockSessionItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->dispose = paddock_session_item_dispose;
  object_class->finalize = paddock_session_item_finalize;
  object_class->get_property = paddock_session_item_get_property;

  properties[PROP_ID] = g_param_spec_string ("id", NULL, NULL, NULL, flags);
  properties[PROP_OBJECT_PATH] = g_param_spec_string ("object-path", NULL, NULL, NULL, flags);
  properties[PROP_NAME] = g_param_spec_string ("name", NULL, NULL, NULL, flags);
  /**
   * PaddockSessionItem:agent:
   *
   * The program the session runs: the basename of its argv[0].
   */
  properties[PROP_AGENT] = g_param_spec_string ("agent", NULL, NULL, NULL, flags);
  properties[PROP_STATE] = g_param_spec_string ("state", NULL, NULL, NULL, flags);
  properties[PROP_STATE_LABEL] = g_param_spec_string ("state-label", NULL, NULL, NULL, flags);
  properties[PROP_PROFILE] = g_param_spec_string ("profile", NULL, NULL, NULL, flags);
  properties[PROP_STAGING] = g_param_spec_string ("staging", NULL, NULL, NULL, flags);
  properties[PROP_WORKSPACE] = g_param_spec_string ("workspace", NULL, NULL, NULL, flags);
  properties[PROP_COMMAND_LINE] = g_param_spec_string ("command-line", NULL, NULL, NULL, flags);
  properties[PROP_PID] = g_param_spec_uint ("pid", NULL, NULL, 0, G_MAXUINT, 0, flags);
  properties[PROP_PROCESS_COUNT] = g_param_spec_uint ("process-count", NULL, NULL, 0, G_MAXUINT, 0, flags);
  /**
   * PaddockSessionItem:exit-status:
   *
   * The agent's exit status once it ended (128 + signal), -1 before.
   */
  properties[PROP_EXIT_STATUS] = g_param_spec_int ("exit-status", NULL, NULL, -1, G_MAXINT, -1, flags);
  properties[PROP_RUNNING] = g_param_spec_boolean ("running", NULL, NULL, FALSE, flags);
  /**
   * PaddockSessionItem:n-changes:
   *
   * How many staged changes wait for review, as last listed.
   */
  properties[PROP_N_CHANGES] = g_param_spec_uint ("n-changes", NULL, NULL, 0, G_MAXUINT, 0, flags);
  properties[PROP_N_CHANGES_LABEL] = g_param_spec_string ("n-changes-label", NULL, NULL, NULL, flags);
  properties[PROP_PROXY] = g_param_spec_object ("proxy", NULL, NULL, PADDOCK_IPC_TYPE_SESSION1, flags);
  properties[PROP_NETWORK_MODE] = g_param_spec_string ("network-mode", NULL, NULL, NULL, flags);
  /**
   * PaddockSessionItem:boundary:
   *
   * The safety boundary, a #GListModel of #PaddockLayerItem: empty until
   * the session has started. The same model for the item's whole life.
   */
  properties[PROP_BOUNDARY] = g_param_spec_object ("boundary", NULL, NULL, G_TYPE_LIST_MODEL, flags);
  /**
   * PaddockSessionItem:boundary-status:
   *
   * The boundary at a glance: "enforced" (every requested layer),
   * "partial" (some), "unenforced" (none), or %NULL until it is known.
   */
  properties[PROP_BOUNDARY_STATUS] = g_param_spec_string ("boundary-status", NULL, NULL, NULL, flags);
  /**
   * PaddockSessionItem:n-unenforced:
   *
   * How many requested layers are not (fully) enforced.
   */
  properties[PROP_N_UNENFORCED] = g_param_spec_uint ("n-unenforced", NULL, NULL, 0, G_MAXUINT, 0, flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
paddock_session_item_init (PaddockSessionItem *self)
{
  self->cancellable = g_cancellable_new ();
  self->boundary = g_list_store_new (PADDOCK_TYPE_LAYER_ITEM);
  self->exit_status = -1;
}

/**
 * paddock_session_item_new:
 * @connection: the bus the daemon is on
 * @dict: the session's a{sv} from ListSessions or SessionsChanged
 *
 * Returns: (transfer full): an item that starts following the session's
 *   object at once
 */
PaddockSessionItem *
paddock_session_item_new (GDBusConnection *connection,
                          GVariant        *dict)
{
  PaddockSessionItem *self;
  const char *id = NULL;
  const char *path = NULL;

  g_return_val_if_fail (G_IS_DBUS_CONNECTION (connection), NULL);
  g_return_val_if_fail (g_variant_is_of_type (dict, G_VARIANT_TYPE_VARDICT), NULL);

  self = g_object_new (PADDOCK_TYPE_SESSION_ITEM, NULL);

  g_variant_lookup (dict, "id", "&s", &id);
  g_variant_lookup (dict, "path", "&o", &path);
  self->id = g_strdup (id != NULL ? id : "");
  self->object_path = g_strdup (path);
  self->n_changes = 0;

  paddock_session_item_update (self, dict);

  if (self->object_path != NULL)
    paddock_ipc_session1_proxy_new (connection,
                                    G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START,
                                    PADDOCK_BUS_NAME,
                                    self->object_path,
                                    self->cancellable,
                                    proxy_new_cb,
                                    g_object_ref (self));

  return self;
}

/**
 * paddock_session_item_update:
 * @dict: a newer a{sv} of the same session
 */
void
paddock_session_item_update (PaddockSessionItem *self,
                             GVariant           *dict)
{
  const char *name = NULL;
  const char *state = NULL;
  const char *profile = NULL;
  const char *workspace = NULL;
  g_autofree const char **command = NULL;
  g_autofree char *workspace_text = NULL;
  guint pid = 0;
  guint processes = 0;
  gint exit_status = -1;

  g_return_if_fail (PADDOCK_IS_SESSION_ITEM (self));

  g_object_freeze_notify (G_OBJECT (self));

  if (g_variant_lookup (dict, "name", "&s", &name))
    set_string (self, &self->name, name, PROP_NAME);
  if (g_variant_lookup (dict, "state", "&s", &state))
    set_string (self, &self->state, state, PROP_STATE);
  {
    const char *damaged = NULL;

    if (g_variant_lookup (dict, "damaged", "&s", &damaged))
      set_string (self, &self->damaged, damaged, PROP_STATE);
  }
  if (g_variant_lookup (dict, "profile", "&s", &profile))
    set_string (self, &self->profile, profile, PROP_PROFILE);
  if (g_variant_lookup (dict, "workspace", "^&ay", &workspace))
    {
      workspace_text = display_bytes (workspace);
      set_string (self, &self->workspace, workspace_text, PROP_WORKSPACE);
    }
  if (g_variant_lookup (dict, "command", "^a&ay", &command))
    set_command (self, command);
  /* A preset's session runs its installed file (cli.js, claude.exe):
   * the agent is the preset's name. */
  {
    const char *agent = NULL;

    if (g_variant_lookup (dict, "agent", "&s", &agent) && *agent != '\0')
      set_string (self, &self->agent, agent, PROP_AGENT);
  }
  if (g_variant_lookup (dict, "pid", "u", &pid))
    set_uint (self, &self->pid, pid, PROP_PID);
  if (g_variant_lookup (dict, "processes", "u", &processes))
    set_uint (self, &self->process_count, processes, PROP_PROCESS_COUNT);
  if (g_variant_lookup (dict, "exit-status", "i", &exit_status))
    set_exit_status (self, exit_status);

  g_object_thaw_notify (G_OBJECT (self));
}

const char *
paddock_session_item_get_id (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), NULL);
  return self->id;
}

const char *
paddock_session_item_get_object_path (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), NULL);
  return self->object_path;
}

const char *
paddock_session_item_get_name (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), NULL);
  return self->name;
}

const char *
paddock_session_item_get_agent (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), NULL);
  return self->agent;
}

const char *
paddock_session_item_get_state (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), NULL);
  return self->state;
}

/**
 * paddock_session_item_get_state_label:
 *
 * Returns: (transfer none): the state as a person reads it
 */
const char *
paddock_session_item_get_state_label (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), NULL);

  /* Said before the state: its work may be waiting in the stage. */
  if (self->damaged != NULL && self->damaged[0] != '\0')
    return _("Damaged");
  if (g_strcmp0 (self->state, "starting") == 0)
    return _("Starting");
  if (g_strcmp0 (self->state, "running") == 0)
    return _("Running");
  if (g_strcmp0 (self->state, "exited") == 0)
    return _("Exited");
  if (g_strcmp0 (self->state, "stopped") == 0)
    return _("Stopped");
  if (g_strcmp0 (self->state, "destroyed") == 0)
    return _("Destroyed");

  return self->state;
}

const char *
paddock_session_item_get_profile (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), NULL);
  return self->profile;
}

const char *
paddock_session_item_get_staging (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), NULL);
  return self->staging;
}

const char *
paddock_session_item_get_workspace (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), NULL);
  return self->workspace;
}

const char *
paddock_session_item_get_command_line (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), NULL);
  return self->command_line;
}

guint
paddock_session_item_get_pid (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), 0);
  return self->pid;
}

/**
 * paddock_session_item_get_exit_status:
 *
 * Returns: the agent's exit status (128 + signal), or -1 while it runs
 */
gint
paddock_session_item_get_exit_status (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), -1);

  return self->exit_status;
}

guint
paddock_session_item_get_process_count (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), 0);
  return self->process_count;
}

gboolean
paddock_session_item_is_running (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), FALSE);

  return g_strcmp0 (self->state, "starting") == 0 || g_strcmp0 (self->state, "running") == 0;
}

/**
 * paddock_session_item_is_staged:
 *
 * Returns: whether the session's writes wait for review (not a host session)
 */
gboolean
paddock_session_item_is_staged (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), FALSE);

  if (self->staging != NULL)
    return g_strcmp0 (self->staging, "none") != 0;

  return g_strcmp0 (self->profile, "host") != 0;
}

guint
paddock_session_item_get_n_changes (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), 0);
  return self->n_changes;
}

void
paddock_session_item_set_n_changes (PaddockSessionItem *self,
                                    guint               n_changes)
{
  g_return_if_fail (PADDOCK_IS_SESSION_ITEM (self));

  if (self->n_changes == n_changes)
    return;

  self->n_changes = n_changes;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_CHANGES]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_CHANGES_LABEL]);
}

const char *
paddock_session_item_get_network_mode (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), NULL);
  return self->network_mode;
}

/**
 * paddock_session_item_describe_network_mode:
 * @mode: a NetworkMode value ("host", "none", "proxy")
 *
 * What @mode means for the agent, in the one wording the New Session dialog,
 * the Network page and the Safety page all use.
 *
 * Returns: (nullable): a translated sentence, or %NULL for a mode this app
 *   does not know
 */
const char *
paddock_session_item_describe_network_mode (const char *mode)
{
  if (g_strcmp0 (mode, "host") == 0)
    return _("Your own network, unrestricted and unrecorded");
  if (g_strcmp0 (mode, "none") == 0)
    return _("A network of its own with only its loopback: nothing outside is reachable");
  if (g_strcmp0 (mode, "proxy") == 0)
    return _("Out only through Paddock’s proxy, to the allowed domains; every request is recorded");
  return NULL;
}

/**
 * paddock_session_item_get_boundary:
 *
 * Returns: (transfer none): the boundary's layers, #PaddockLayerItems
 */
GListModel *
paddock_session_item_get_boundary (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), NULL);
  return G_LIST_MODEL (self->boundary);
}

/**
 * paddock_session_item_get_boundary_status:
 *
 * Returns: (nullable): "enforced", "partial", "unenforced", or %NULL
 *   while the boundary is not known
 */
const char *
paddock_session_item_get_boundary_status (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), NULL);
  return self->boundary_status;
}

guint
paddock_session_item_get_n_unenforced (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), 0);
  return self->n_unenforced;
}

/**
 * paddock_session_item_get_proxy:
 *
 * Returns: (transfer none) (nullable): the Session1 proxy, once made
 */
PaddockIpcSession1 *
paddock_session_item_get_proxy (PaddockSessionItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (self), NULL);
  return self->proxy;
}
