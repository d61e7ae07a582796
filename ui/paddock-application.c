/* paddock-application.c — the Paddock desktop app
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gi18n.h>

#include "paddock-application.h"
#include "paddock-help-window.h"
#include "paddock-window.h"

/* The application owns the one PaddockClient that all its windows share, so
 * the daemon is followed once however many windows are open. */
struct _PaddockApplication
{
  AdwApplication  parent_instance;

  PaddockClient  *client;
};

G_DEFINE_FINAL_TYPE (PaddockApplication, paddock_application, ADW_TYPE_APPLICATION)

static PaddockWindow *
paddock_application_new_window (PaddockApplication *self)
{
  return paddock_window_new (GTK_APPLICATION (self), self->client);
}

static void
paddock_application_startup (GApplication *app)
{
  PaddockApplication *self = PADDOCK_APPLICATION (app);
  static const char *quit_accels[] = { "<Control>q", NULL };
  static const char *new_session_accels[] = { "<Control>n", NULL };
  static const char *new_window_accels[] = { "<Control><Shift>n", NULL };
  static const char *close_accels[] = { "<Control>w", NULL };
  static const char *help_accels[] = { "F1", NULL };

  G_APPLICATION_CLASS (paddock_application_parent_class)->startup (app);

  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.quit", quit_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "win.new-session", new_session_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.new-window", new_window_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "window.close", close_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.help", help_accels);

  /* The app is registered on the session bus already (when there is one):
   * follow the daemon on that connection, else look the bus up. */
  self->client = paddock_client_new (g_application_get_dbus_connection (app));
}

static void
paddock_application_activate (GApplication *app)
{
  PaddockApplication *self = PADDOCK_APPLICATION (app);
  GtkWindow *window;

  if (!(window = gtk_application_get_active_window (GTK_APPLICATION (app))))
    window = GTK_WINDOW (paddock_application_new_window (self));

  gtk_window_present (window);
}

static void
paddock_application_shutdown (GApplication *app)
{
  PaddockApplication *self = PADDOCK_APPLICATION (app);

  G_APPLICATION_CLASS (paddock_application_parent_class)->shutdown (app);

  g_clear_object (&self->client);
}

static void
paddock_application_dispose (GObject *object)
{
  PaddockApplication *self = (PaddockApplication *)object;

  g_clear_object (&self->client);

  G_OBJECT_CLASS (paddock_application_parent_class)->dispose (object);
}

static void
paddock_application_class_init (PaddockApplicationClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  object_class->dispose = paddock_application_dispose;

  app_class->startup = paddock_application_startup;
  app_class->activate = paddock_application_activate;
  app_class->shutdown = paddock_application_shutdown;
}

static void
paddock_application_quit_action (GSimpleAction *action,
                                 GVariant      *param,
                                 gpointer       user_data)
{
  g_application_quit (G_APPLICATION (user_data));
}

static void
paddock_application_new_window_action (GSimpleAction *action,
                                       GVariant      *param,
                                       gpointer       user_data)
{
  PaddockApplication *self = user_data;

  gtk_window_present (GTK_WINDOW (paddock_application_new_window (self)));
}

static void
paddock_application_about_action (GSimpleAction *action,
                                  GVariant      *param,
                                  gpointer       user_data)
{
  GtkApplication *app = user_data;
  static const char *developers[] = { "The Paddock authors", NULL };
  GtkWindow *parent = gtk_application_get_active_window (app);
  GtkIconTheme *icon_theme = gtk_icon_theme_get_for_display (gdk_display_get_default ());
  GtkWidget *about;

  /* The app icon arrives with the desktop data; until it is installed a
   * generic one beats a broken image. */
  about = g_object_new (ADW_TYPE_ABOUT_WINDOW,
                        "transient-for", parent,
                        "modal", TRUE,
                        "application-name", _("Paddock"),
                        "application-icon", gtk_icon_theme_has_icon (icon_theme, PADDOCK_APP_ID)
                                              ? PADDOCK_APP_ID : "utilities-terminal",
                        "developer-name", _("The Paddock authors"),
                        "version", PACKAGE_VERSION,
                        "comments", _("Run AI coding agents in sessions you can watch, review and stop, "
                                      "with ports no other program can take."),
                        "copyright", "© 2026 The Paddock authors",
                        "license-type", GTK_LICENSE_GPL_3_0,
                        "developers", developers,
                        NULL);
  gtk_window_present (GTK_WINDOW (about));
}

/* How to run an agent (paddock-help-window.c): one page, from the menu or F1. */
static void
paddock_application_help_action (GSimpleAction *action,
                                 GVariant      *param,
                                 gpointer       user_data)
{
  GtkApplication *app = user_data;

  gtk_window_present (paddock_help_window_new (gtk_application_get_active_window (app)));
}

static const GActionEntry app_actions[] = {
  { .name = "quit", .activate = paddock_application_quit_action },
  { .name = "about", .activate = paddock_application_about_action },
  { .name = "help", .activate = paddock_application_help_action },
  { .name = "new-window", .activate = paddock_application_new_window_action },
};

static void
paddock_application_init (PaddockApplication *self)
{
  g_action_map_add_action_entries (G_ACTION_MAP (self),
                                   app_actions,
                                   G_N_ELEMENTS (app_actions),
                                   self);
}

PaddockApplication *
paddock_application_new (void)
{
  return g_object_new (PADDOCK_TYPE_APPLICATION,
                       "application-id", PADDOCK_APP_ID,
                       "flags", G_APPLICATION_DEFAULT_FLAGS,
                       "resource-base-path", "/org/paddock/Paddock",
                       NULL);
}

/**
 * paddock_application_get_client:
 *
 * Returns: (transfer none) (nullable): the client shared by the windows,
 *   once the application has started up
 */
PaddockClient *
paddock_application_get_client (PaddockApplication *self)
{
  g_return_val_if_fail (PADDOCK_IS_APPLICATION (self), NULL);

  return self->client;
}
