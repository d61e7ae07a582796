/* paddock-window.c — the main window: the daemon's state and its leases
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gi18n.h>

#include "paddock-ports-view.h"
#include "paddock-window.h"

#define START_COMMAND "systemctl --user start paddockd"

/* The window shows what the shared PaddockClient knows: a spinner while it
 * looks for the daemon, a status page while there is none, and the views
 * over the client's models once connected. Every window of the app shows
 * the same models, so they never disagree. */
struct _PaddockWindow
{
  AdwApplicationWindow  parent_instance;

  PaddockClient        *client;
  PaddockClientState    shown_state;
  guint                 has_connected : 1;

  /* Template widgets */
  AdwToastOverlay      *toast_overlay;
  AdwWindowTitle       *window_title;
  GtkStack             *stack;
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
paddock_window_update_subtitle (PaddockWindow *self)
{
  g_autofree char *subtitle = NULL;

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
        guint n = g_list_model_get_n_items (paddock_client_get_leases (self->client));

        if (n == 0)
          subtitle = g_strdup (_("No leased ports"));
        else
          subtitle = g_strdup_printf (g_dngettext (NULL, "%u leased port", "%u leased ports", n), n);
      }
      break;

    default:
      g_assert_not_reached ();
    }

  adw_window_title_set_subtitle (self->window_title, subtitle);
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
paddock_window_update_state (PaddockWindow *self)
{
  PaddockClientState state = paddock_client_get_state (self->client);
  const char *page = NULL;

  switch (state)
    {
    case PADDOCK_CLIENT_STATE_CONNECTING:
      page = "connecting";
      break;

    case PADDOCK_CLIENT_STATE_CONNECTED:
      page = "ports";
      break;

    case PADDOCK_CLIENT_STATE_DISCONNECTED:
      page = "unreachable";
      break;

    default:
      g_assert_not_reached ();
    }

  /* The spinner only spins while it can be seen. */
  gtk_spinner_set_spinning (self->spinner, state == PADDOCK_CLIENT_STATE_CONNECTING);
  paddock_window_update_unreachable (self);
  gtk_stack_set_visible_child_name (self->stack, page);
  paddock_window_update_subtitle (self);

  if (state == PADDOCK_CLIENT_STATE_CONNECTED && self->shown_state != state)
    {
      if (self->has_connected)
        adw_toast_overlay_add_toast (self->toast_overlay,
                                     adw_toast_new (_("Reconnected to the daemon")));
      self->has_connected = TRUE;
    }

  self->shown_state = state;
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
paddock_window_copy_start_command_action (GtkWidget  *widget,
                                          const char *action_name,
                                          GVariant   *param)
{
  PaddockWindow *self = PADDOCK_WINDOW (widget);

  gdk_clipboard_set_text (gtk_widget_get_clipboard (widget), START_COMMAND);
  adw_toast_overlay_add_toast (self->toast_overlay, adw_toast_new (_("Command copied")));
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
  g_signal_connect_object (paddock_client_get_leases (self->client),
                           "items-changed",
                           G_CALLBACK (leases_changed_cb),
                           self,
                           G_CONNECT_SWAPPED);

  paddock_ports_view_set_model (self->ports_view, paddock_client_get_leases (self->client));

  /* Start on the right page without a transition. */
  gtk_stack_set_transition_type (self->stack, GTK_STACK_TRANSITION_TYPE_NONE);
  paddock_window_update_state (self);
  gtk_stack_set_transition_type (self->stack, GTK_STACK_TRANSITION_TYPE_CROSSFADE);
}

static void
paddock_window_dispose (GObject *object)
{
  PaddockWindow *self = (PaddockWindow *)object;

  gtk_widget_dispose_template (GTK_WIDGET (self), PADDOCK_TYPE_WINDOW);

  g_clear_object (&self->client);

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

static void
paddock_window_class_init (PaddockWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->constructed = paddock_window_constructed;
  object_class->dispose = paddock_window_dispose;
  object_class->get_property = paddock_window_get_property;
  object_class->set_property = paddock_window_set_property;

  properties[PROP_CLIENT] =
    g_param_spec_object ("client", NULL, NULL,
                         PADDOCK_TYPE_CLIENT,
                         (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/paddock/Paddock/paddock-window.ui");
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, window_title);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, spinner);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, unreachable_page);
  gtk_widget_class_bind_template_child (widget_class, PaddockWindow, ports_view);

  gtk_widget_class_install_action (widget_class, "win.copy-start-command", NULL,
                                   paddock_window_copy_start_command_action);

  g_type_ensure (PADDOCK_TYPE_PORTS_VIEW);
}

static void
paddock_window_init (PaddockWindow *self)
{
  self->shown_state = PADDOCK_CLIENT_STATE_CONNECTING;

  gtk_widget_init_template (GTK_WIDGET (self));
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
 * paddock_window_add_toast:
 * @toast: (transfer full): a toast
 */
void
paddock_window_add_toast (PaddockWindow *self,
                          AdwToast      *toast)
{
  g_return_if_fail (PADDOCK_IS_WINDOW (self));
  g_return_if_fail (ADW_IS_TOAST (toast));

  adw_toast_overlay_add_toast (self->toast_overlay, toast);
}
