/* paddock-window.c — the main window: sessions in a sidebar, each one's views, and the ports
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gi18n.h>

#include "paddock-exit-status.h"
#include "paddock-new-session-dialog.h"
#include "paddock-ports-view.h"
#include "paddock-settings.h"
#include "paddock-session-item.h"
#include "paddock-session-row.h"
#include "paddock-session-view.h"
#include "paddock-window-private.h"

#define START_COMMAND "systemctl --user start paddockd"
#define STOP_GRACE_SECONDS 5

/* The window shows what the shared PaddockClient knows: a spinner while it
 * looks for the daemon, a status page while there is none, and once
 * connected a sidebar of sessions (a GtkListView over the client's model)
 * next to the selected session's views, or the ports table.
 *
 * Each session's view is made the first time it is selected and kept in a
 * stack by session id, so its terminal stays attached while another
 * session is shown; it goes when the session leaves the model. Every
 * window of the app shows the same models, so they never disagree. */
struct _PaddockWindow
{
  AdwApplicationWindow  parent_instance;

  PaddockClient        *client;
  PaddockClientState    shown_state;
  /* Cancelled in dispose: Stop and Destroy calls. */
  GCancellable         *cancellable;
  /* Window size and state, kept between runs; NULL without the schema. */
  GSettings            *settings;
  PaddockSessionItem   *selected;
  char                 *select_path;
  char                 *last_toast;
  /* Ids of the listed sessions whose exit was told (or that had ended
   * when first listed); an id goes when its session leaves the list. */
  GHashTable           *exit_told;
  guint                 has_connected : 1;
  guint                 showing_ports : 1;

  /* Template widgets */
  AdwToastOverlay      *toast_overlay;
  AdwLeaflet           *leaflet;
  GtkWidget            *sidebar;
  GtkWidget            *content;
  AdwWindowTitle       *window_title;
  AdwViewSwitcherTitle *switcher_title;
  GtkSingleSelection   *sessions_selection;
  GtkListBox           *nav_list;
  GtkListBoxRow        *ports_row;
  GtkLabel             *ports_count_label;
  GtkStack             *stack;
  GtkStack             *session_stack;
  GtkWidget            *stop_button;
  GtkWidget            *destroy_button;
  GtkSpinner           *spinner;
  AdwStatusPage        *unreachable_page;
  PaddockPortsView     *ports_view;
};

G_DEFINE_FINAL_TYPE (PaddockWindow, paddock_window, ADW_TYPE_APPLICATION_WINDOW)

enum {
  PROP_0,
  PROP_CLIENT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
paddock_window_toast (PaddockWindow *self,
                      const char    *title)
{
  g_autofree char *escaped = g_markup_escape_text (title, -1);

  g_free (self->last_toast);
  self->last_toast = g_strdup (title);
  adw_toast_overlay_add_toast (self->toast_overlay, adw_toast_new (escaped));
}

static void
paddock_window_update_subtitle (PaddockWindow *self)
{
  g_autofree char *subtitle = NULL;
  guint n_leases = g_list_model_get_n_items (paddock_client_get_leases (self->client));
  g_autofree char *count = n_leases > 0 ? g_strdup_printf ("%u", n_leases) : NULL;

  switch (paddock_client_get_state (self->client))
    {
    case PADDOCK_CLIENT_STATE_CONNECTING:
      subtitle = g_strdup (_("Connecting…"));
      break;

    case PADDOCK_CLIENT_STATE_DISCONNECTED:
      subtitle = g_strdup (_("Offline"));
      break;

    case PADDOCK_CLIENT_STATE_CONNECTED:
      {
        guint n = g_list_model_get_n_items (paddock_client_get_sessions (self->client));

        if (n == 0)
          subtitle = g_strdup (_("No sessions"));
        else
          subtitle = g_strdup_printf (g_dngettext (NULL, "%u session", "%u sessions", n), n);
      }
      break;

    default:
      g_assert_not_reached ();
    }

  adw_window_title_set_subtitle (self->window_title, subtitle);
  gtk_label_set_label (self->ports_count_label, count);
}

static void
paddock_window_update_unreachable (PaddockWindow *self)
{
  const char *error = paddock_client_get_error (self->client);
  g_autofree char *description = NULL;

  if (error != NULL)
    {
      g_autofree char *escaped = g_markup_escape_text (error, -1);

      /* Translators: %s is an error message from D-Bus */
      description = g_strdup_printf (_("The Paddock daemon cannot be reached: %s"), escaped);
    }
  else
    {
      description = g_strdup (_("Paddock’s background service is not on the session bus. "
                                 "Start it, and this window reconnects by itself."));
    }

  adw_status_page_set_description (self->unreachable_page, description);
}

static void
paddock_window_update_actions (PaddockWindow *self)
{
  gboolean connected = paddock_client_get_manager (self->client) != NULL;
  gboolean has_session = self->selected != NULL && !self->showing_ports;
  gboolean running = has_session && paddock_session_item_is_running (self->selected);

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.new-session", connected);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.stop-session", running);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.destroy-session", has_session);
}

static void
paddock_window_update_title (PaddockWindow *self)
{
  if (self->showing_ports)
    {
      adw_view_switcher_title_set_title (self->switcher_title, _("Ports"));
      adw_view_switcher_title_set_subtitle (self->switcher_title, NULL);
    }
  else if (self->selected != NULL)
    {
      adw_view_switcher_title_set_title (self->switcher_title, paddock_session_item_get_name (self->selected));
      adw_view_switcher_title_set_subtitle (self->switcher_title, paddock_session_item_get_workspace (self->selected));
    }
  else
    {
      adw_view_switcher_title_set_title (self->switcher_title, NULL);
      adw_view_switcher_title_set_subtitle (self->switcher_title, NULL);
    }
}

/* Which page the content shows, from the client's state and the sidebar. */
static void
paddock_window_update_page (PaddockWindow *self)
{
  PaddockClientState state = paddock_client_get_state (self->client);
  const char *page;
  gboolean session_page;

  switch (state)
    {
    case PADDOCK_CLIENT_STATE_CONNECTING:
      page = "connecting";
      break;

    case PADDOCK_CLIENT_STATE_DISCONNECTED:
      page = "unreachable";
      break;

    case PADDOCK_CLIENT_STATE_CONNECTED:
      if (self->showing_ports)
        page = "ports";
      else if (self->selected != NULL)
        page = "sessions";
      else
        page = "no-sessions";
      break;

    default:
      g_assert_not_reached ();
    }

  session_page = g_str_equal (page, "sessions");
  gtk_widget_set_visible (self->stop_button, session_page);
  gtk_widget_set_visible (self->destroy_button, session_page);
  if (!session_page)
    adw_view_switcher_title_set_stack (self->switcher_title, NULL);

  gtk_stack_set_visible_child_name (self->stack, page);
  paddock_window_update_title (self);
  paddock_window_update_actions (self);
}

static void
paddock_window_update_state (PaddockWindow *self)
{
  PaddockClientState state = paddock_client_get_state (self->client);

  /* The spinner only spins while it can be seen. */
  gtk_spinner_set_spinning (self->spinner, state == PADDOCK_CLIENT_STATE_CONNECTING);
  paddock_window_update_unreachable (self);
  paddock_window_update_page (self);
  paddock_window_update_subtitle (self);

  if (state == PADDOCK_CLIENT_STATE_CONNECTED && self->shown_state != state)
    {
      if (self->has_connected)
        paddock_window_toast (self, _("Reconnected to the daemon"));
      self->has_connected = TRUE;
    }

  self->shown_state = state;
}

static void
selected_item_notify_cb (PaddockWindow      *self,
                         GParamSpec         *pspec,
                         PaddockSessionItem *item)
{
  paddock_window_update_title (self);
  paddock_window_update_actions (self);
}

static void
paddock_window_set_selected (PaddockWindow      *self,
                             PaddockSessionItem *item)
{
  GtkWidget *view = NULL;
  gboolean changed = self->selected != item;

  if (changed)
    {
      if (self->selected != NULL)
        g_signal_handlers_disconnect_by_func (self->selected, selected_item_notify_cb, self);

      g_set_object (&self->selected, item);

      if (self->selected != NULL)
        {
          g_signal_connect_object (self->selected, "notify::name", G_CALLBACK (selected_item_notify_cb),
                                   self, G_CONNECT_SWAPPED);
          g_signal_connect_object (self->selected, "notify::workspace", G_CALLBACK (selected_item_notify_cb),
                                   self, G_CONNECT_SWAPPED);
          g_signal_connect_object (self->selected, "notify::running", G_CALLBACK (selected_item_notify_cb),
                                   self, G_CONNECT_SWAPPED);
        }
    }

  if (item != NULL)
    {
      const char *id = paddock_session_item_get_id (item);

      if (!(view = gtk_stack_get_child_by_name (self->session_stack, id)))
        {
          view = paddock_session_view_new (item);
          paddock_session_view_set_leases (PADDOCK_SESSION_VIEW (view), paddock_client_get_leases (self->client));
          gtk_stack_add_named (self->session_stack, view, id);
        }

      gtk_stack_set_visible_child (self->session_stack, view);
      if (changed && gtk_widget_get_mapped (GTK_WIDGET (self)))
        gtk_widget_grab_focus (view);
      adw_view_switcher_title_set_stack (self->switcher_title,
                                         paddock_session_view_get_view_stack (PADDOCK_SESSION_VIEW (view)));
      self->showing_ports = FALSE;
      gtk_list_box_unselect_all (self->nav_list);
      adw_leaflet_set_visible_child (self->leaflet, self->content);
    }

  paddock_window_update_page (self);
}

static void
selected_item_changed_cb (PaddockWindow      *self,
                          GParamSpec         *pspec,
                          GtkSingleSelection *selection)
{
  PaddockSessionItem *item = gtk_single_selection_get_selected_item (selection);

  /* A session whose state changes is removed and added again in one
   * splice, which drops GtkSingleSelection's selection: sessions_changed_cb
   * (which runs after the selection's own handler) selects it again. */
  if (item == NULL && self->selected != NULL && !self->showing_ports)
    return;

  paddock_window_set_selected (self, item);
}

static gboolean
paddock_window_select_path (PaddockWindow *self,
                            const char    *object_path)
{
  GListModel *sessions = paddock_client_get_sessions (self->client);
  guint n = g_list_model_get_n_items (sessions);

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(PaddockSessionItem) item = g_list_model_get_item (sessions, i);

      if (g_strcmp0 (paddock_session_item_get_object_path (item), object_path) == 0)
        {
          gtk_single_selection_set_selected (self->sessions_selection, i);
          return TRUE;
        }
    }

  return FALSE;
}

/* The agent ended by itself (state "exited"; one stopped on request, from
 * here or from paddockctl, is "stopped" and says nothing): say so once,
 * with its status, whichever session is shown. The state and the status may
 * arrive in either order. A session already ended when listed says
 * nothing. */
static void
session_state_cb (PaddockWindow      *self,
                  GParamSpec         *pspec,
                  PaddockSessionItem *item)
{
  g_autofree char *title = NULL;

  gint status = paddock_session_item_get_exit_status (item);

  if (self->exit_told == NULL ||  /* disposed */
      g_strcmp0 (paddock_session_item_get_state (item), "exited") != 0 ||
      (status < 0 && status != PADDOCK_EXIT_STATUS_UNKNOWN) ||
      !g_hash_table_add (self->exit_told, g_strdup (paddock_session_item_get_id (item))))
    return;

  if (status == PADDOCK_EXIT_STATUS_UNKNOWN)
    /* Translators: a session's name; its agent ended while no daemon watched it */
    title = g_strdup_printf (_("“%s” ended while Paddock was not running; how is unknown"),
                             paddock_session_item_get_name (item));
  else
    /* Translators: a session's name and its agent's exit status */
    title = g_strdup_printf (_("“%s” exited with status %d"), paddock_session_item_get_name (item), status);
  paddock_window_toast (self, title);
}

static gboolean
session_unlisted (gpointer key,
                  gpointer value,
                  gpointer user_data)
{
  GListModel *sessions = user_data;

  for (guint i = 0; i < g_list_model_get_n_items (sessions); i++)
    {
      g_autoptr(PaddockSessionItem) item = g_list_model_get_item (sessions, i);

      if (g_strcmp0 (paddock_session_item_get_id (item), key) == 0)
        return FALSE;
    }
  return TRUE;
}

static void
sessions_changed_cb (PaddockWindow *self,
                     guint          position,
                     guint          removed,
                     guint          added,
                     GListModel    *sessions)
{
  GtkSelectionModel *pages = gtk_stack_get_pages (self->session_stack);
  guint n_pages = g_list_model_get_n_items (G_LIST_MODEL (pages));
  guint n_sessions = g_list_model_get_n_items (sessions);
  g_autoptr(GPtrArray) gone = g_ptr_array_new ();

  if (removed > 0)
    g_hash_table_foreach_remove (self->exit_told, session_unlisted, sessions);

  for (guint i = position; i < position + added; i++)
    {
      g_autoptr(PaddockSessionItem) item = g_list_model_get_item (sessions, i);

      if (g_signal_handler_find (item, G_SIGNAL_MATCH_FUNC | G_SIGNAL_MATCH_DATA, 0, 0, NULL,
                                 session_state_cb, self) != 0)
        continue;
      if (g_strcmp0 (paddock_session_item_get_state (item), "exited") == 0)
        g_hash_table_add (self->exit_told, g_strdup (paddock_session_item_get_id (item)));
      g_signal_connect_object (item, "notify::state", G_CALLBACK (session_state_cb), self, G_CONNECT_SWAPPED);
      g_signal_connect_object (item, "notify::exit-status", G_CALLBACK (session_state_cb), self, G_CONNECT_SWAPPED);
    }

  /* Drop the views of sessions that are no more (destroyed, or the daemon
   * went away): their terminals detach. */
  for (guint i = 0; i < n_pages; i++)
    {
      g_autoptr(GObject) page = g_list_model_get_item (G_LIST_MODEL (pages), i);
      GtkWidget *view = gtk_stack_page_get_child (GTK_STACK_PAGE (page));
      PaddockSessionItem *item = paddock_session_view_get_item (PADDOCK_SESSION_VIEW (view));
      gboolean found = FALSE;

      for (guint j = 0; j < n_sessions && !found; j++)
        {
          g_autoptr(PaddockSessionItem) other = g_list_model_get_item (sessions, j);

          found = other == item;
        }

      if (!found)
        g_ptr_array_add (gone, view);
    }
  g_object_unref (pages);

  for (guint i = 0; i < gone->len; i++)
    gtk_stack_remove (self->session_stack, g_ptr_array_index (gone, i));

  if (self->select_path != NULL && paddock_window_select_path (self, self->select_path))
    g_clear_pointer (&self->select_path, g_free);

  /* The session shown stays shown while it exists; something is always
   * shown while there are sessions. */
  if (gtk_single_selection_get_selected_item (self->sessions_selection) == NULL && !self->showing_ports)
    {
      guint found = 0;

      if (self->selected != NULL &&
          g_list_store_find (G_LIST_STORE (sessions), self->selected, &found))
        gtk_single_selection_set_selected (self->sessions_selection, found);
      else if (n_sessions > 0)
        gtk_single_selection_set_selected (self->sessions_selection, 0);
    }

  paddock_window_set_selected (self, gtk_single_selection_get_selected_item (self->sessions_selection));
  paddock_window_update_subtitle (self);
}

static void
client_state_changed_cb (PaddockWindow *self,
                         GParamSpec    *pspec,
                         PaddockClient *client)
{
  paddock_window_update_state (self);
}

static void
leases_changed_cb (PaddockWindow *self,
                   guint          position,
                   guint          removed,
                   guint          added,
                   GListModel    *leases)
{
  paddock_window_update_subtitle (self);
}

static void
paddock_window_show_ports (PaddockWindow *self)
{
  self->showing_ports = TRUE;
  gtk_single_selection_set_selected (self->sessions_selection, GTK_INVALID_LIST_POSITION);
  gtk_list_box_select_row (self->nav_list, self->ports_row);
  adw_leaflet_set_visible_child (self->leaflet, self->content);
  paddock_window_update_page (self);
}

static void
nav_row_activated_cb (PaddockWindow *self,
                      GtkListBoxRow *row,
                      GtkListBox    *list)
{
  if (row == self->ports_row)
    paddock_window_show_ports (self);
}

static void
back_clicked_cb (PaddockWindow *self)
{
  adw_leaflet_set_visible_child (self->leaflet, self->sidebar);
}

static void
paddock_window_copy_start_command_action (GtkWidget  *widget,
                                          const char *action_name,
                                          GVariant   *param)
{
  PaddockWindow *self = PADDOCK_WINDOW (widget);

  gdk_clipboard_set_text (gtk_widget_get_clipboard (widget), START_COMMAND);
  paddock_window_toast (self, _("Command copied"));
}

static void
paddock_window_show_ports_action (GtkWidget  *widget,
                                  const char *action_name,
                                  GVariant   *param)
{
  paddock_window_show_ports (PADDOCK_WINDOW (widget));
}

static void
session_created_cb (PaddockWindow *self,
                    const char    *object_path)
{
  /* The session may already be listed, or arrive with SessionsChanged. */
  if (!paddock_window_select_path (self, object_path))
    {
      g_free (self->select_path);
      self->select_path = g_strdup (object_path);
    }
}

static void
paddock_window_new_session_action (GtkWidget  *widget,
                                   const char *action_name,
                                   GVariant   *param)
{
  PaddockWindow *self = PADDOCK_WINDOW (widget);
  PaddockNewSessionDialog *dialog;

  dialog = paddock_new_session_dialog_new (GTK_WINDOW (self), self->client);
  g_signal_connect_object (dialog, "created", G_CALLBACK (session_created_cb), self, G_CONNECT_SWAPPED);
  gtk_window_present (GTK_WINDOW (dialog));
}

static void
end_session_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(PaddockWindow) self = user_data;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *message = NULL;
  const char *state = NULL;
  guint survivors = 0;

  if (!(reply = g_dbus_proxy_call_finish (G_DBUS_PROXY (object), result, &error)))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;

      g_dbus_error_strip_remote_error (error);
      message = g_strdup_printf (_("The session could not be ended: %s"), error->message);
      paddock_window_toast (self, message);
      return;
    }

  {
    g_autoptr(GVariant) dict = g_variant_get_child_value (reply, 0);

    g_variant_lookup (dict, "state", "&s", &state);
    g_variant_lookup (dict, "survivors", "u", &survivors);

    if (g_strcmp0 (state, "destroyed") == 0)
      message = g_strdup_printf (g_dngettext (NULL,
                                              "Session destroyed: %u process left",
                                              "Session destroyed: %u processes left",
                                              survivors),
                                 survivors);
    else
      message = g_strdup_printf (g_dngettext (NULL,
                                              "Session stopped: %u process left",
                                              "Session stopped: %u processes left",
                                              survivors),
                                 survivors);
  }

  paddock_window_toast (self, message);
}

static void
end_session_response_cb (PaddockWindow    *self,
                         const char       *response,
                         AdwMessageDialog *dialog)
{
  PaddockSessionItem *item = g_object_get_data (G_OBJECT (dialog), "item");
  PaddockIpcSession1 *proxy = item != NULL ? paddock_session_item_get_proxy (item) : NULL;

  if (proxy == NULL)
    return;

  /* Through GDBusProxy to get the a{sv} result whole, in one callback. */
  if (g_str_equal (response, "stop"))
    g_dbus_proxy_call (G_DBUS_PROXY (proxy), "Stop", g_variant_new ("(u)", STOP_GRACE_SECONDS),
                       G_DBUS_CALL_FLAGS_NONE, -1, self->cancellable,
                       end_session_cb, g_object_ref (self));
  else if (g_str_equal (response, "destroy"))
    g_dbus_proxy_call (G_DBUS_PROXY (proxy), "Destroy", NULL,
                       G_DBUS_CALL_FLAGS_NONE, -1, self->cancellable,
                       end_session_cb, g_object_ref (self));
}

static void
paddock_window_end_session_action (GtkWidget  *widget,
                                   const char *action_name,
                                   GVariant   *param)
{
  PaddockWindow *self = PADDOCK_WINDOW (widget);
  gboolean destroy = g_str_equal (action_name, "win.destroy-session");
  g_autofree char *heading = NULL;
  AdwMessageDialog *dialog;

  if (self->selected == NULL)
    return;

  if (destroy)
    heading = g_strdup_printf (_("Destroy “%s”?"), paddock_session_item_get_name (self->selected));
  else
    heading = g_strdup_printf (_("Stop “%s”?"), paddock_session_item_get_name (self->selected));

  dialog = ADW_MESSAGE_DIALOG (adw_message_dialog_new (GTK_WINDOW (self), heading, NULL));
  if (destroy)
    adw_message_dialog_set_body (dialog,
                                 _("Every process of the session is killed, and its terminal, its "
                                   "staged changes and its records are deleted. Changes that were not "
                                   "applied are lost. This cannot be undone."));
  else
    adw_message_dialog_set_body (dialog,
                                 _("Every process of the session gets a few seconds to exit, then is "
                                   "killed. Its staged changes stay here for review."));

  adw_message_dialog_add_responses (dialog,
                                    "cancel", _("_Cancel"),
                                    destroy ? "destroy" : "stop", destroy ? _("_Destroy") : _("_Stop"),
                                    NULL);
  adw_message_dialog_set_response_appearance (dialog, destroy ? "destroy" : "stop", ADW_RESPONSE_DESTRUCTIVE);
  adw_message_dialog_set_default_response (dialog, "cancel");
  adw_message_dialog_set_close_response (dialog, "cancel");
  g_object_set_data_full (G_OBJECT (dialog), "item", g_object_ref (self->selected), g_object_unref);
  g_signal_connect_object (dialog, "response", G_CALLBACK (end_session_response_cb), self, G_CONNECT_SWAPPED);
  gtk_window_present (GTK_WINDOW (dialog));
}

static void
paddock_window_constructed (GObject *object)
{
  PaddockWindow *self = (PaddockWindow *)object;

  G_OBJECT_CLASS (paddock_window_parent_class)->constructed (object);

  g_assert (PADDOCK_IS_CLIENT (self->client));

  g_signal_connect_object (self->client,
                           "notify::state",
                           G_CALLBACK (client_state_changed_cb),
                           self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (self->client,
                           "notify::error",
                           G_CALLBACK (client_state_changed_cb),
                           self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (self->client,
                           "notify::manager",
                           G_CALLBACK (client_state_changed_cb),
                           self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (paddock_client_get_leases (self->client),
                           "items-changed",
                           G_CALLBACK (leases_changed_cb),
                           self,
                           G_CONNECT_SWAPPED);

  paddock_ports_view_set_model (self->ports_view, paddock_client_get_leases (self->client));

  /* The window's handler runs after the selection's own. */
  gtk_single_selection_set_model (self->sessions_selection, paddock_client_get_sessions (self->client));
  g_signal_connect_object (self->sessions_selection,
                           "notify::selected-item",
                           G_CALLBACK (selected_item_changed_cb),
                           self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (paddock_client_get_sessions (self->client),
                           "items-changed",
                           G_CALLBACK (sessions_changed_cb),
                           self,
                           G_CONNECT_SWAPPED);

  /* Start on the right page without a transition. */
  gtk_stack_set_transition_type (self->stack, GTK_STACK_TRANSITION_TYPE_NONE);
  sessions_changed_cb (self, 0, 0, g_list_model_get_n_items (paddock_client_get_sessions (self->client)),
                       paddock_client_get_sessions (self->client));
  paddock_window_update_state (self);
  gtk_stack_set_transition_type (self->stack, GTK_STACK_TRANSITION_TYPE_CROSSFADE);
}

static void
paddock_window_dispose (GObject *object)
{
  PaddockWindow *self = (PaddockWindow *)object;

  g_cancellable_cancel (self->cancellable);

  if (self->selected != NULL)
    g_signal_handlers_disconnect_by_func (self->selected, selected_item_notify_cb, self);
  g_clear_object (&self->selected);

  gtk_widget_dispose_template (GTK_WIDGET (self), PADDOCK_TYPE_WINDOW);

  g_clear_object (&self->cancellable);
  g_clear_object (&self->client);
  g_clear_object (&self->settings);
  g_clear_pointer (&self->select_path, g_free);
  g_clear_pointer (&self->last_toast, g_free);
  g_clear_pointer (&self->exit_told, g_hash_table_unref);

  G_OBJECT_CLASS (paddock_window_parent_class)->dispose (object);
}

static void
paddock_window_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  PaddockWindow *self = PADDOCK_WINDOW (object);

  switch (prop_id)
    {
    case PROP_CLIENT:
      g_value_set_object (value, self->client);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_window_set_property (GObject      *object,
                             guint         prop_id,
                             const GValue *value,
                             GParamSpec   *pspec)
{
  PaddockWindow *self = PADDOCK_WINDOW (object);

  switch (prop_id)
    {
    case PROP_CLIENT:
      self->client = g_value_dup_object (value);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* The size is saved only when not maximized: unmaximizing then goes back
 * to it (as GNOME apps do). */
static gboolean
paddock_window_close_request (GtkWindow *window)
{
  PaddockWindow *self = PADDOCK_WINDOW (window);

  if (self->settings != NULL)
    {
      gboolean maximized = gtk_window_is_maximized (window);
      int width = 0, height = 0;

      g_settings_delay (self->settings);
      g_settings_set_boolean (self->settings, "window-maximized", maximized);
      if (!maximized)
        {
          gtk_window_get_default_size (window, &width, &height);
          if (width >= 360 && height >= 294)
            {
              g_settings_set_int (self->settings, "window-width", width);
              g_settings_set_int (self->settings, "window-height", height);
            }
        }
      g_settings_apply (self->settings);
    }

  return GTK_WINDOW_CLASS (paddock_window_parent_class)->close_request (window);
}

static void
paddock_window_class_init (PaddockWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkWindowClass *window_class = GTK_WINDOW_CLASS (klass);

  window_class->close_request = paddock_window_close_request;

  object_class->constructed = paddock_window_constructed;
  object_class->dispose = paddock_window_dispose;
  object_class->get_property = paddock_window_get_property;
  object_class->set_property = paddock_window_set_property;

  properties[PROP_CLIENT] =
    g_param_spec_object ("client", NULL, NULL,
                         PADDOCK_TYPE_CLIENT,
                         (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (PADDOCK_TYPE_PORTS_VIEW);
  g_type_ensure (PADDOCK_TYPE_SESSION_ITEM);
  g_type_ensure (PADDOCK_TYPE_SESSION_ROW);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/paddock/Paddock/paddock-window.ui");
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, leaflet);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, sidebar);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, content);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, window_title);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, switcher_title);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, sessions_selection);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, nav_list);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, ports_row);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, ports_count_label);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, session_stack);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, stop_button);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, destroy_button);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, spinner);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, unreachable_page);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, ports_view);
  gtk_widget_class_bind_template_callback (widget_class, nav_row_activated_cb);
  gtk_widget_class_bind_template_callback (widget_class, back_clicked_cb);

  gtk_widget_class_install_action (widget_class, "win.copy-start-command", NULL,
                                   paddock_window_copy_start_command_action);
  gtk_widget_class_install_action (widget_class, "win.show-ports", NULL,
                                   paddock_window_show_ports_action);
  gtk_widget_class_install_action (widget_class, "win.new-session", NULL,
                                   paddock_window_new_session_action);
  gtk_widget_class_install_action (widget_class, "win.stop-session", NULL,
                                   paddock_window_end_session_action);
  gtk_widget_class_install_action (widget_class, "win.destroy-session", NULL,
                                   paddock_window_end_session_action);
}

static void
paddock_window_init (PaddockWindow *self)
{
  self->shown_state = PADDOCK_CLIENT_STATE_CONNECTING;
  self->cancellable = g_cancellable_new ();
  self->exit_told = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  gtk_widget_init_template (GTK_WIDGET (self));

  self->settings = paddock_settings_new ();
  if (self->settings != NULL)
    {
      gtk_window_set_default_size (GTK_WINDOW (self),
                                   g_settings_get_int (self->settings, "window-width"),
                                   g_settings_get_int (self->settings, "window-height"));
      if (g_settings_get_boolean (self->settings, "window-maximized"))
        gtk_window_maximize (GTK_WINDOW (self));
    }
}

/**
 * paddock_window_new:
 * @application: (nullable): the application
 * @client: the connection to the daemon the window shows
 *
 * Returns: (transfer full): a new window
 */
PaddockWindow *
paddock_window_new (GtkApplication *application,
                    PaddockClient  *client)
{
  g_return_val_if_fail (application == NULL || GTK_IS_APPLICATION (application), NULL);
  g_return_val_if_fail (PADDOCK_IS_CLIENT (client), NULL);

  return g_object_new (PADDOCK_TYPE_WINDOW,
                       "application", application,
                       "client", client,
                       NULL);
}

/**
 * paddock_window_get_client:
 *
 * Returns: (transfer none): the client the window shows
 */
PaddockClient *
paddock_window_get_client (PaddockWindow *self)
{
  g_return_val_if_fail (PADDOCK_IS_WINDOW (self), NULL);

  return self->client;
}

/**
 * paddock_window_toast_from:
 * @widget: a view inside a window
 * @title: plain text (escaped here)
 *
 * Shows @title as a toast of @widget's window, which keeps the last one
 * for whoever checks (its tests); outside a PaddockWindow (a view on its
 * own, as widget tests make them), on the nearest toast overlay if any.
 */
void
paddock_window_toast_from (GtkWidget  *widget,
                           const char *title)
{
  GtkRoot *root = gtk_widget_get_root (widget);
  GtkWidget *overlay;
  g_autofree char *escaped = NULL;

  /* The window's own path, which keeps @title as given (not escaped). */
  if (PADDOCK_IS_WINDOW (root))
    {
      paddock_window_toast (PADDOCK_WINDOW (root), title);
      return;
    }

  if ((overlay = gtk_widget_get_ancestor (widget, ADW_TYPE_TOAST_OVERLAY)) == NULL)
    return;
  escaped = g_markup_escape_text (title, -1);
  adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay), adw_toast_new (escaped));
}

/**
 * _paddock_window_get_last_toast:
 *
 * Returns: (nullable): the title of the last toast the window showed
 */
const char *
_paddock_window_get_last_toast (PaddockWindow *self)
{
  g_return_val_if_fail (PADDOCK_IS_WINDOW (self), NULL);

  return self->last_toast;
}
