/* paddock-new-session-dialog.c — start an agent on a folder
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gi18n.h>

#include "paddock-net-modes.h"
#include "paddock-new-session-dialog.h"
#include "paddock-session-item.h"
#include "paddock-settings.h"

/* Asks for the three things a session needs (a folder, a program, a
 * profile) and calls Manager1.CreateSession. The dialog stays open with a
 * toast when the daemon refuses (a safe profile that cannot be enforced
 * here, say), so nothing typed is lost; ::created hands the new object
 * path to the window, which selects it. */
struct _PaddockNewSessionDialog
{
  AdwWindow          parent_instance;

  PaddockClient     *client;
  GFile             *workspace;
  /* Cancelled in dispose: the folder chooser's lifetime and CreateSession. */
  GCancellable      *cancellable;
  GtkNativeDialog   *chooser;
  guint              creating : 1;
  /* The user picked a network: a preset's default (the proxy) no longer
   * applies, and the choice is sent as it is. */
  guint              net_chosen : 1;
  guint              setting_net : 1;
  /* Manager1.ListAgents' answer (aa{sv}), NULL until it came. */
  GVariant          *agents;

  /* Template widgets */
  AdwToastOverlay   *toast_overlay;
  AdwActionRow      *workspace_row;
  GtkMenuButton     *recent_button;
  /* Recent workspaces; NULL without the schema. */
  GSettings         *settings;
  AdwComboRow       *agent_row;
  AdwActionRow      *login_row;
  GtkSwitch         *login_switch;
  AdwEntryRow       *command_row;
  AdwEntryRow       *name_row;
  AdwComboRow       *profile_row;
  AdwComboRow       *net_row;
  AdwEntryRow       *allow_row;
  AdwEntryRow       *ports_row;
};

G_DEFINE_FINAL_TYPE (PaddockNewSessionDialog, paddock_new_session_dialog, ADW_TYPE_WINDOW)

enum {
  CREATED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

/* The presets (data/agents/NAME.json), in the order of the agent row's
 * model; the last row is "Custom". */
static const char * const agent_presets[] = { "shell", "claude", "codex", "opencode", "pi" };
static const char * const profiles[] = { "safe", "host", "strict" };
static const char * const net_modes[] = { PADDOCK_NET_MODES };

static void
paddock_new_session_dialog_update (PaddockNewSessionDialog *self)
{
  gboolean custom = adw_combo_row_get_selected (self->agent_row) >= G_N_ELEMENTS (agent_presets);

  gtk_widget_set_visible (GTK_WIDGET (self->command_row), custom);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "dialog.create",
                                 self->workspace != NULL && !self->creating &&
                                 self->client != NULL && paddock_client_get_manager (self->client) != NULL);
}

/* ListAgents' dictionary of the selected preset, or NULL. */
static GVariant *
selected_agent (PaddockNewSessionDialog *self)
{
  guint selected = adw_combo_row_get_selected (self->agent_row);

  for (gsize i = 0; self->agents != NULL && selected < G_N_ELEMENTS (agent_presets) &&
                    i < g_variant_n_children (self->agents); i++)
    {
      g_autoptr(GVariant) agent = g_variant_get_child_value (self->agents, i);
      const char *name = NULL;

      if (g_variant_lookup (agent, "name", "&s", &name) && g_str_equal (name, agent_presets[selected]))
        return g_steal_pointer (&agent);
    }
  return NULL;
}

/* The preset's state under its row: where it was found, or why it
 * cannot run and how to install it; and its login command, offered. */
static void
paddock_new_session_dialog_describe_agent (PaddockNewSessionDialog *self)
{
  g_autoptr(GVariant) agent = selected_agent (self);
  g_autoptr(GVariant) program = agent != NULL ? g_variant_lookup_value (agent, "program", G_VARIANT_TYPE_BYTESTRING) : NULL;
  g_autoptr(GVariant) login = agent != NULL ? g_variant_lookup_value (agent, "login", G_VARIANT_TYPE_STRING_ARRAY) : NULL;
  g_autofree const char **login_words = login != NULL ? g_variant_get_strv (login, NULL) : NULL;
  g_autofree char *login_text = login_words != NULL ? g_strjoinv (" ", (char **) login_words) : NULL;
  g_autofree char *subtitle = NULL;
  const char *hint = NULL;
  gboolean found = FALSE;

  if (agent != NULL)
    {
      g_variant_lookup (agent, "found", "b", &found);
      g_variant_lookup (agent, "install-hint", "&s", &hint);
    }
  if (agent == NULL)
    subtitle = NULL;
  else if (found && program != NULL)
    {
      g_autofree char *path = g_filename_display_name (g_variant_get_bytestring (program));

      subtitle = g_strdup_printf (_("Found: %s"), path);
    }
  else if (hint != NULL && *hint != '\0')
    subtitle = g_strdup_printf (_("Not installed: %s"), hint);
  else
    subtitle = g_strdup (_("Not installed"));
  adw_action_row_set_subtitle (ADW_ACTION_ROW (self->agent_row), subtitle != NULL ? subtitle : "");

  gtk_widget_set_visible (GTK_WIDGET (self->login_row), found && login_text != NULL && *login_text != '\0');
  if (login_text != NULL)
    adw_action_row_set_subtitle (self->login_row, login_text);
}

static void
agent_selected_cb (PaddockNewSessionDialog *self)
{
  gboolean preset = adw_combo_row_get_selected (self->agent_row) < G_N_ELEMENTS (agent_presets);

  /* An agent's network by default is the proxy with its domains (the
   * daemon adds them); a custom command's is the host's, as before. */
  if (!self->net_chosen)
    {
      self->setting_net = TRUE;
      for (guint i = 0; i < G_N_ELEMENTS (net_modes); i++)
        if (g_str_equal (net_modes[i], preset ? "proxy" : "host"))
          adw_combo_row_set_selected (self->net_row, i);
      self->setting_net = FALSE;
    }
  gtk_switch_set_active (self->login_switch, FALSE);
  paddock_new_session_dialog_describe_agent (self);
  paddock_new_session_dialog_update (self);
}

static void
list_agents_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(PaddockNewSessionDialog) self = user_data;
  g_autoptr(GVariant) agents = NULL;
  g_autoptr(GError) error = NULL;

  /* An older daemon without ListAgents: the presets are offered as they
   * are, and CreateSession says what is wrong. */
  if (!paddock_ipc_manager1_call_list_agents_finish (PADDOCK_IPC_MANAGER1 (source), &agents, result, &error))
    return;
  g_clear_pointer (&self->agents, g_variant_unref);
  self->agents = g_steal_pointer (&agents);
  paddock_new_session_dialog_describe_agent (self);
}

/* What each profile means, in the order of profiles[] (the order of the
 * row's model); a network mode's words come from
 * paddock_session_item_describe_network_mode(), shared with the pages. */
static const char * const profile_subtitles[] = {
  N_("Safe runs the agent in a sandbox with its writes staged"),
  N_("The agent runs as you, unconfined, and writes to the folder directly"),
  N_("As Safe, but it does not start unless every layer is observed enforced"),
};
/* A profile added to the daemon's list needs its words here (and a row). */
G_STATIC_ASSERT (G_N_ELEMENTS (profile_subtitles) == G_N_ELEMENTS (profiles));

static void
profile_selected_cb (PaddockNewSessionDialog *self)
{
  guint profile = MIN (adw_combo_row_get_selected (self->profile_row), G_N_ELEMENTS (profiles) - 1);

  adw_action_row_set_subtitle (ADW_ACTION_ROW (self->profile_row), _(profile_subtitles[profile]));
}

static void
net_selected_cb (PaddockNewSessionDialog *self)
{
  guint mode = MIN (adw_combo_row_get_selected (self->net_row), G_N_ELEMENTS (net_modes) - 1);

  if (!self->setting_net)
    self->net_chosen = TRUE;
  /* The allowlist means something only to the proxy. */
  gtk_widget_set_visible (GTK_WIDGET (self->allow_row), g_str_equal (net_modes[mode], "proxy"));
  adw_action_row_set_subtitle (ADW_ACTION_ROW (self->net_row),
                               paddock_session_item_describe_network_mode (net_modes[mode]));
}

/* Words of an entry, separated by spaces or commas; NULL when there are none. */
static GStrv
entry_words (AdwEntryRow *row)
{
  g_auto(GStrv) parts = g_regex_split_simple ("[\\s,]+", gtk_editable_get_text (GTK_EDITABLE (row)), 0, 0);
  g_autoptr(GStrvBuilder) words = g_strv_builder_new ();
  gboolean any = FALSE;

  for (guint i = 0; parts[i] != NULL; i++)
    if (parts[i][0] != '\0')
      {
        g_strv_builder_add (words, parts[i]);
        any = TRUE;
      }
  return any ? g_strv_builder_end (words) : NULL;
}

static void
paddock_new_session_dialog_toast (PaddockNewSessionDialog *self,
                                  const char              *title)
{
  g_autofree char *escaped = g_markup_escape_text (title, -1);
  AdwToast *toast = adw_toast_new (escaped);

  adw_toast_set_timeout (toast, 0);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
}

static void
chooser_response_cb (PaddockNewSessionDialog *self,
                     int                      response,
                     GtkNativeDialog         *chooser)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));

      if (file != NULL)
        paddock_new_session_dialog_set_workspace (self, file);
    }

  g_clear_object (&self->chooser);
}

static void
paddock_new_session_dialog_choose_action (GtkWidget  *widget,
                                          const char *action_name,
                                          GVariant   *param)
{
  PaddockNewSessionDialog *self = PADDOCK_NEW_SESSION_DIALOG (widget);
  GtkFileChooserNative *chooser;

  if (self->chooser != NULL)
    return;

  chooser = gtk_file_chooser_native_new (_("Choose the Workspace"),
                                         GTK_WINDOW (self),
                                         GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER,
                                         _("_Select"),
                                         _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  if (self->workspace != NULL)
    gtk_file_chooser_set_file (GTK_FILE_CHOOSER (chooser), self->workspace, NULL);
  g_signal_connect_object (chooser, "response", G_CALLBACK (chooser_response_cb), self, G_CONNECT_SWAPPED);
  self->chooser = GTK_NATIVE_DIALOG (chooser);
  gtk_native_dialog_show (self->chooser);
}

static void
create_session_cb (GObject      *object,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  g_autoptr(PaddockNewSessionDialog) self = user_data;
  g_autofree char *object_path = NULL;
  g_autoptr(GError) error = NULL;

  if (!paddock_ipc_manager1_call_create_session_finish (PADDOCK_IPC_MANAGER1 (object),
                                                        &object_path, result, &error))
    {
      g_autofree char *message = NULL;

      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;

      self->creating = FALSE;
      paddock_new_session_dialog_update (self);
      g_dbus_error_strip_remote_error (error);
      message = g_strdup_printf (_("The session was not started: %s"), error->message);
      paddock_new_session_dialog_toast (self, message);
      return;
    }

  if (self->settings != NULL && self->workspace != NULL)
    {
      g_autofree char *path = g_file_get_path (self->workspace);

      if (path != NULL)
        paddock_settings_add_recent_workspace (self->settings, path);
    }

  g_signal_emit (self, signals[CREATED], 0, object_path);
  gtk_window_destroy (GTK_WINDOW (self));
}

static void
paddock_new_session_dialog_create_action (GtkWidget  *widget,
                                          const char *action_name,
                                          GVariant   *param)
{
  PaddockNewSessionDialog *self = PADDOCK_NEW_SESSION_DIALOG (widget);
  PaddockIpcManager1 *manager = paddock_client_get_manager (self->client);
  guint agent = adw_combo_row_get_selected (self->agent_row);
  guint profile = adw_combo_row_get_selected (self->profile_row);
  const char *name = gtk_editable_get_text (GTK_EDITABLE (self->name_row));
  g_autofree char *workspace = NULL;
  g_auto(GStrv) argv = NULL;
  g_autoptr(GError) error = NULL;
  GVariantDict options;

  if (manager == NULL || self->workspace == NULL || self->creating)
    return;

  if (agent < G_N_ELEMENTS (agent_presets))
    {
      /* The preset's own program, or its login command in its environment
       * (the same path as `paddockctl create --agent NAME -- LOGIN…`). */
      g_autoptr(GVariant) preset = selected_agent (self);
      g_autoptr(GVariant) login = preset != NULL ? g_variant_lookup_value (preset, "login", G_VARIANT_TYPE_STRING_ARRAY) : NULL;

      if (gtk_switch_get_active (self->login_switch) && login != NULL && g_variant_n_children (login) > 0)
        argv = g_variant_dup_strv (login, NULL);
    }
  else if (!g_shell_parse_argv (gtk_editable_get_text (GTK_EDITABLE (self->command_row)), NULL, &argv, &error))
    {
      g_autofree char *message = g_strdup_printf (_("The command cannot be read: %s"), error->message);

      paddock_new_session_dialog_toast (self, message);
      gtk_widget_grab_focus (GTK_WIDGET (self->command_row));
      return;
    }

  workspace = g_file_get_path (self->workspace);
  if (workspace == NULL)
    {
      paddock_new_session_dialog_toast (self, _("The workspace must be a local folder"));
      return;
    }

  g_variant_dict_init (&options, NULL);
  g_variant_dict_insert_value (&options, "workspace", g_variant_new_bytestring (workspace));
  if (agent < G_N_ELEMENTS (agent_presets))
    g_variant_dict_insert (&options, "agent", "s", agent_presets[agent]);
  if (argv != NULL)
    g_variant_dict_insert_value (&options, "command", g_variant_new_bytestring_array ((const char * const *)argv, -1));
  g_variant_dict_insert (&options, "profile", "s", profiles[MIN (profile, G_N_ELEMENTS (profiles) - 1)]);
  if (name != NULL && *name != '\0')
    g_variant_dict_insert (&options, "name", "s", name);
  {
    const char *net = net_modes[MIN (adw_combo_row_get_selected (self->net_row), G_N_ELEMENTS (net_modes) - 1)];
    g_auto(GStrv) allow = g_str_equal (net, "proxy") ? entry_words (self->allow_row) : NULL;
    g_auto(GStrv) ports = entry_words (self->ports_row);

    /* An agent's network unless the user chose one: the daemon's default
     * for it (the proxy with its domains, the host's with the host
     * profile). */
    if (agent >= G_N_ELEMENTS (agent_presets) || self->net_chosen)
      g_variant_dict_insert (&options, "net", "s", net);
    if (allow != NULL)
      g_variant_dict_insert_value (&options, "allow-domains", g_variant_new_strv ((const char * const *) allow, -1));
    if (ports != NULL)
      g_variant_dict_insert_value (&options, "ports", g_variant_new_strv ((const char * const *) ports, -1));
  }

  self->creating = TRUE;
  paddock_new_session_dialog_update (self);
  paddock_ipc_manager1_call_create_session (manager,
                                            g_variant_dict_end (&options),
                                            self->cancellable,
                                            create_session_cb,
                                            g_object_ref (self));
}

static void
paddock_new_session_dialog_use_recent_action (GtkWidget  *widget,
                                              const char *action_name,
                                              GVariant   *param)
{
  g_autoptr(GFile) folder = g_file_new_for_path (g_variant_get_string (param, NULL));

  paddock_new_session_dialog_set_workspace (PADDOCK_NEW_SESSION_DIALOG (widget), folder);
}

/* The recent folders that still exist, as a menu; the newest is where the
 * dialog starts. */
static void
paddock_new_session_dialog_load_recent (PaddockNewSessionDialog *self)
{
  g_autoptr(GMenu) menu = g_menu_new ();
  g_auto(GStrv) recent = NULL;
  guint n = 0;

  if (self->settings == NULL)
    {
      gtk_widget_set_visible (GTK_WIDGET (self->recent_button), FALSE);
      return;
    }

  recent = g_settings_get_strv (self->settings, "recent-workspaces");
  for (guint i = 0; recent[i] != NULL && n < PADDOCK_MAX_RECENT_WORKSPACES; i++)
    {
      g_autofree char *display = NULL;
      g_autoptr(GMenuItem) item = NULL;

      if (!g_path_is_absolute (recent[i]) || !g_file_test (recent[i], G_FILE_TEST_IS_DIR))
        continue;
      display = g_filename_display_name (recent[i]);
      item = g_menu_item_new (display, NULL);
      g_menu_item_set_action_and_target (item, "dialog.use-recent", "s", recent[i]);
      g_menu_append_item (menu, item);
      if (n++ == 0 && self->workspace == NULL)
        {
          g_autoptr(GFile) folder = g_file_new_for_path (recent[i]);

          paddock_new_session_dialog_set_workspace (self, folder);
        }
    }
  gtk_menu_button_set_menu_model (self->recent_button, G_MENU_MODEL (menu));
  gtk_widget_set_visible (GTK_WIDGET (self->recent_button), n > 0);
}

static void
paddock_new_session_dialog_dispose (GObject *object)
{
  PaddockNewSessionDialog *self = (PaddockNewSessionDialog *)object;

  g_cancellable_cancel (self->cancellable);
  if (self->chooser != NULL)
    gtk_native_dialog_destroy (self->chooser);
  g_clear_object (&self->chooser);

  gtk_widget_dispose_template (GTK_WIDGET (self), PADDOCK_TYPE_NEW_SESSION_DIALOG);

  g_clear_object (&self->cancellable);
  g_clear_object (&self->workspace);
  g_clear_object (&self->client);
  g_clear_object (&self->settings);
  g_clear_pointer (&self->agents, g_variant_unref);

  G_OBJECT_CLASS (paddock_new_session_dialog_parent_class)->dispose (object);
}

static void
paddock_new_session_dialog_class_init (PaddockNewSessionDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = paddock_new_session_dialog_dispose;

  /**
   * PaddockNewSessionDialog::created:
   * @object_path: the new session's object path
   */
  signals[CREATED] =
    g_signal_new ("created",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_STRING);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/paddock/Paddock/paddock-new-session-dialog.ui");
  gtk_widget_class_bind_template_child (widget_class, PaddockNewSessionDialog, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, PaddockNewSessionDialog, workspace_row);
  gtk_widget_class_bind_template_child (widget_class, PaddockNewSessionDialog, recent_button);
  gtk_widget_class_bind_template_child (widget_class, PaddockNewSessionDialog, agent_row);
  gtk_widget_class_bind_template_child (widget_class, PaddockNewSessionDialog, login_row);
  gtk_widget_class_bind_template_child (widget_class, PaddockNewSessionDialog, login_switch);
  gtk_widget_class_bind_template_child (widget_class, PaddockNewSessionDialog, command_row);
  gtk_widget_class_bind_template_child (widget_class, PaddockNewSessionDialog, name_row);
  gtk_widget_class_bind_template_child (widget_class, PaddockNewSessionDialog, profile_row);
  gtk_widget_class_bind_template_child (widget_class, PaddockNewSessionDialog, net_row);
  gtk_widget_class_bind_template_child (widget_class, PaddockNewSessionDialog, allow_row);
  gtk_widget_class_bind_template_child (widget_class, PaddockNewSessionDialog, ports_row);
  gtk_widget_class_bind_template_callback (widget_class, net_selected_cb);
  gtk_widget_class_bind_template_callback (widget_class, agent_selected_cb);
  gtk_widget_class_bind_template_callback (widget_class, profile_selected_cb);

  gtk_widget_class_install_action (widget_class, "dialog.choose-workspace", NULL,
                                   paddock_new_session_dialog_choose_action);
  gtk_widget_class_install_action (widget_class, "dialog.use-recent", "s",
                                   paddock_new_session_dialog_use_recent_action);
  gtk_widget_class_install_action (widget_class, "dialog.create", NULL,
                                   paddock_new_session_dialog_create_action);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void
paddock_new_session_dialog_init (PaddockNewSessionDialog *self)
{
  self->cancellable = g_cancellable_new ();

  gtk_widget_init_template (GTK_WIDGET (self));

  self->settings = paddock_settings_new ();
  paddock_new_session_dialog_load_recent (self);
  agent_selected_cb (self);
}

/**
 * paddock_new_session_dialog_new:
 *
 * Returns: (transfer none): a new dialog, owned by GTK's toplevel list
 */
PaddockNewSessionDialog *
paddock_new_session_dialog_new (GtkWindow     *parent,
                                PaddockClient *client)
{
  PaddockNewSessionDialog *self;

  g_return_val_if_fail (parent == NULL || GTK_IS_WINDOW (parent), NULL);
  g_return_val_if_fail (PADDOCK_IS_CLIENT (client), NULL);

  self = g_object_new (PADDOCK_TYPE_NEW_SESSION_DIALOG,
                       "transient-for", parent,
                       NULL);
  self->client = g_object_ref (client);
  if (paddock_client_get_manager (client) != NULL)
    paddock_ipc_manager1_call_list_agents (paddock_client_get_manager (client), self->cancellable,
                                           list_agents_cb, g_object_ref (self));
  paddock_new_session_dialog_update (self);

  return self;
}

/**
 * paddock_new_session_dialog_set_workspace:
 * @workspace: a local folder
 */
void
paddock_new_session_dialog_set_workspace (PaddockNewSessionDialog *self,
                                          GFile                   *workspace)
{
  g_autofree char *path = NULL;
  g_autofree char *display = NULL;

  g_return_if_fail (PADDOCK_IS_NEW_SESSION_DIALOG (self));
  g_return_if_fail (G_IS_FILE (workspace));

  g_set_object (&self->workspace, workspace);
  path = g_file_get_path (workspace);
  display = path != NULL ? g_filename_display_name (path) : g_file_get_uri (workspace);
  adw_action_row_set_subtitle (self->workspace_row, display);

  paddock_new_session_dialog_update (self);
}
