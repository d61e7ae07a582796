/* paddock-ui-test.c — what the UI tests share: settling, screenshots, dialogs, the app
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "paddock-application.h"
#include "paddock-session-item.h"
#include "paddock-session-view.h"
#include "paddock-test-client.h"
#include "paddock-ui-test.h"
#include "paddock-window-private.h"

/* Initialise GTK and libadwaita before the private bus exists, with no
 * session bus at all. libadwaita's settings look for the settings portal
 * once and keep their proxy (and so the process's session bus singleton)
 * for the life of the process, and would otherwise hold the private test
 * bus open. Nothing else of GTK needs the bus. */
void
paddock_ui_test_init (int    *argc,
                      char ***argv)
{
  g_test_init (argc, argv, NULL);

  if (g_getenv ("DISPLAY") == NULL && g_getenv ("WAYLAND_DISPLAY") == NULL)
    return;

  g_setenv ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/paddock-test-no-bus", TRUE);
  adw_init ();
  g_unsetenv ("DBUS_SESSION_BUS_ADDRESS");
}

/* Let transitions finish and a frame be drawn. */
void
paddock_ui_settle (guint ms)
{
  gint64 until = g_get_monotonic_time () + (gint64)ms * 1000;

  while (g_get_monotonic_time () < until)
    {
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (2 * 1000);
    }
}

static gboolean
has_size (gpointer data)
{
  return gtk_widget_get_width (data) > 0 && gtk_widget_get_height (data) > 0;
}

/* Renders a window as the compositor would see it, into the build dir's
 * screenshots/ folder as NAME.png. */
void
paddock_ui_save_screenshot (GtkWindow  *window,
                            const char *name)
{
  GtkWidget *widget = GTK_WIDGET (window);
  g_autoptr(GdkPaintable) paintable = NULL;
  g_autoptr(GtkSnapshot) snapshot = NULL;
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autofree char *dir = paddock_test_build_path ("screenshots", NULL);
  g_autofree char *file = g_strdup_printf ("%s.png", name);
  g_autofree char *path = g_build_filename (dir, file, NULL);
  guint attempts;
  int width, height;

  paddock_ui_settle (600);
  if (!paddock_test_wait_for (has_size, widget, PADDOCK_UI_TIMEOUT_MS))
    g_error ("%s has no size after %d ms", name, PADDOCK_UI_TIMEOUT_MS);

  width = gtk_widget_get_width (widget);
  height = gtk_widget_get_height (widget);

  /* A widget waiting for its next layout paints nothing: give the frame
   * clock more frames (CI once caught a window at exactly that point). */
  paintable = gtk_widget_paintable_new (widget);
  for (attempts = 0; node == NULL && attempts < 100; attempts++)
    {
      if (attempts > 0)
        paddock_ui_settle (50);
      snapshot = gtk_snapshot_new ();
      gdk_paintable_snapshot (paintable, GDK_SNAPSHOT (snapshot), width, height);
      node = gtk_snapshot_free_to_node (g_steal_pointer (&snapshot));
    }
  if (node == NULL)
    g_error ("%s renders nothing", name);

  texture = gsk_renderer_render_texture (gtk_native_get_renderer (GTK_NATIVE (window)), node,
                                        &GRAPHENE_RECT_INIT (0, 0, width, height));
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (gdk_texture_save_to_png (texture, path));
  g_test_message ("screenshot: %s", path);
}

/* @every_button: a button inside a column view (the ports list's rows), a
 * tree expander or an entry row must be named too, only by its label
 * property; editables are not looked at. */
static void
assert_controls_named (GtkWidget *widget,
                       gboolean   every_button,
                       guint     *n_checked)
{
  if (!gtk_widget_get_mapped (widget))
    return;

  if (GTK_IS_BUTTON (widget) || GTK_IS_MENU_BUTTON (widget) ||
      (!every_button && GTK_IS_EDITABLE (widget)))
    {
      gboolean has_text_label = GTK_IS_BUTTON (widget) &&
                                gtk_button_get_label (GTK_BUTTON (widget)) != NULL &&
                                !gtk_button_get_use_underline (GTK_BUTTON (widget));
      gboolean gtk_own = gtk_widget_get_ancestor (widget, ADW_TYPE_VIEW_SWITCHER) != NULL ||
                         gtk_widget_get_ancestor (widget, GTK_TYPE_SEARCH_BAR) != NULL ||
                         GTK_IS_TOGGLE_BUTTON (widget);

      /* libadwaita's and GTK's own inner controls (view switcher, combo
       * rows, the text of an entry row) carry their labels elsewhere; only
       * ours must be named explicitly. */
      if (!every_button)
        gtk_own = gtk_own ||
                  gtk_test_accessible_has_relation (GTK_ACCESSIBLE (widget), GTK_ACCESSIBLE_RELATION_LABELLED_BY) ||
                  gtk_widget_get_ancestor (widget, ADW_TYPE_ENTRY_ROW) != NULL ||
                  gtk_widget_get_ancestor (widget, GTK_TYPE_TREE_EXPANDER) != NULL ||
                  gtk_widget_get_ancestor (widget, GTK_TYPE_COLUMN_VIEW) != NULL ||
                  GTK_IS_TEXT (widget);

      if (!has_text_label &&
          !gtk_test_accessible_has_property (GTK_ACCESSIBLE (widget), GTK_ACCESSIBLE_PROPERTY_LABEL) &&
          !gtk_own)
        g_error ("%s (%s, icon %s) has no accessible name",
                 G_OBJECT_TYPE_NAME (widget),
                 gtk_widget_get_name (widget),
                 GTK_IS_BUTTON (widget) ? gtk_button_get_icon_name (GTK_BUTTON (widget)) : "-");
      (*n_checked)++;

      /* A menu button's inner toggle is GTK's own: the menu button is the
       * named control. */
      if (GTK_IS_MENU_BUTTON (widget))
        return;
    }

  for (GtkWidget *child = gtk_widget_get_first_child (widget);
       child != NULL;
       child = gtk_widget_get_next_sibling (child))
    assert_controls_named (child, every_button, n_checked);
}

/* Every control a user can reach names itself to assistive technologies. */
void
paddock_ui_assert_controls_named (GtkWidget *widget)
{
  guint n_checked = 0;

  assert_controls_named (widget, FALSE, &n_checked);
  g_assert_cmpuint (n_checked, >, 0);
}

/* Every button a user can reach names itself by an accessible label (an
 * icon-only one has no text otherwise), wherever it is: stricter about
 * buttons than paddock_ui_assert_controls_named(), blind to editables. */
void
paddock_ui_assert_buttons_named (GtkWidget *widget)
{
  guint n_checked = 0;

  assert_controls_named (widget, TRUE, &n_checked);
  g_assert_cmpuint (n_checked, >, 0);
}

static gboolean
find_message_dialog (gpointer data)
{
  GtkWindow **out = data;
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GtkWindow) window = g_list_model_get_item (toplevels, i);

      if (ADW_IS_MESSAGE_DIALOG (window) && gtk_widget_get_mapped (GTK_WIDGET (window)))
        {
          *out = window;
          return TRUE;
        }
    }
  return FALSE;
}

GtkWindow *
paddock_ui_wait_for_message_dialog (void)
{
  GtkWindow *dialog = NULL;

  if (!paddock_test_wait_for (find_message_dialog, &dialog, PADDOCK_UI_TIMEOUT_MS))
    g_error ("no confirmation shows after %d ms", PADDOCK_UI_TIMEOUT_MS);
  return dialog;
}

/* The confirmation an action opens, answered as a user would. */
void
paddock_ui_answer_dialog (const char *screenshot,
                          const char *response)
{
  GtkWindow *dialog = paddock_ui_wait_for_message_dialog ();

  if (screenshot != NULL)
    paddock_ui_save_screenshot (dialog, screenshot);
  adw_message_dialog_response (ADW_MESSAGE_DIALOG (dialog), response);
  gtk_window_destroy (dialog);
}

static gboolean
has_toast (gpointer data)
{
  PaddockWindow *window = ((gpointer *)data)[0];
  const char *title = ((gpointer *)data)[1];

  return g_strcmp0 (_paddock_window_get_last_toast (window), title) == 0;
}

void
paddock_ui_assert_toast (PaddockWindow *window,
                         const char    *title)
{
  gpointer data[] = { window, (gpointer)title };

  if (!paddock_test_wait_for (has_toast, data, PADDOCK_UI_TIMEOUT_MS))
    g_error ("the last toast says “%s”, expected “%s”", _paddock_window_get_last_toast (window), title);
}

gpointer
paddock_ui_window_child (PaddockWindow *window,
                         const char    *name)
{
  return gtk_widget_get_template_child (GTK_WIDGET (window), PADDOCK_TYPE_WINDOW, name);
}

/* The view of the session the sidebar has selected. */
PaddockSessionView *
paddock_ui_current_session_view (PaddockWindow *window)
{
  GtkWidget *child = gtk_stack_get_visible_child (GTK_STACK (paddock_ui_window_child (window, "session_stack")));

  g_assert_nonnull (child);
  return PADDOCK_SESSION_VIEW (child);
}

/* A view of the session shown, by its template name. */
GtkWidget *
paddock_ui_session_view_child (PaddockWindow *window,
                               const char    *name)
{
  return GTK_WIDGET (gtk_widget_get_template_child (GTK_WIDGET (paddock_ui_current_session_view (window)),
                                                    PADDOCK_TYPE_SESSION_VIEW, name));
}

void
paddock_ui_show_view (PaddockWindow *window,
                      const char    *name)
{
  AdwViewStack *stack = paddock_session_view_get_view_stack (paddock_ui_current_session_view (window));

  /* Only when it changes: the waits below ask again and again. */
  if (g_strcmp0 (adw_view_stack_get_visible_child_name (stack), name) != 0)
    adw_view_stack_set_visible_child_name (stack, name);
}

typedef struct
{
  PaddockWindow *window;
  guint          n_sessions;
} ShowsSessions;

static gboolean
shows_sessions (gpointer data)
{
  ShowsSessions *expect = data;
  GListModel *sidebar = G_LIST_MODEL (paddock_ui_window_child (expect->window, "sessions_selection"));
  GtkStack *session_stack = GTK_STACK (paddock_ui_window_child (expect->window, "session_stack"));

  return g_list_model_get_n_items (sidebar) == expect->n_sessions &&
         (expect->n_sessions == 0 || gtk_stack_get_visible_child (session_stack) != NULL);
}

void
paddock_ui_wait_for_sessions (PaddockWindow *window,
                              guint          n_sessions)
{
  ShowsSessions expect = { window, n_sessions };

  if (!paddock_test_wait_for (shows_sessions, &expect, PADDOCK_UI_TIMEOUT_MS))
    g_error ("the sidebar does not list %u sessions", n_sessions);
}

/* Selects the session at @path in the sidebar, as a click on it does. */
void
paddock_ui_select_session (PaddockWindow *window,
                           const char    *path)
{
  GtkSingleSelection *selection = paddock_ui_window_child (window, "sessions_selection");
  GListModel *sidebar = G_LIST_MODEL (selection);

  for (guint i = 0; i < g_list_model_get_n_items (sidebar); i++)
    {
      g_autoptr(PaddockSessionItem) item = g_list_model_get_item (sidebar, i);

      if (g_strcmp0 (paddock_session_item_get_object_path (item), path) == 0)
        {
          gtk_single_selection_set_selected (selection, i);
          return;
        }
    }
  g_error ("session %s is not in the sidebar", path);
}

/* D-Bus, as a script would call it: @argv in @workspace (the helper
 * library's one CreateSession, through the generated proxy). */
char *
paddock_ui_create_session_argv (GDBusConnection    *connection,
                                const char         *workspace,
                                const char         *name,
                                const char         *profile,
                                const char * const *argv,
                                GError            **error)
{
  return paddock_test_create_session_argv (connection, workspace, profile, argv,
                                           g_variant_new_parsed ("{'name': <%s>}", name), error);
}

/* The same, running `sh -c SCRIPT`. */
char *
paddock_ui_create_session (GDBusConnection *connection,
                           const char      *workspace,
                           const char      *name,
                           const char      *profile,
                           const char      *script,
                           GError         **error)
{
  const char *argv[] = { "sh", "-c", script, NULL };

  return paddock_ui_create_session_argv (connection, workspace, name, profile, argv, error);
}

/* Destroys a session; returns its result dictionary. */
GVariant *
paddock_ui_destroy_session (GDBusConnection *connection,
                            const char      *path)
{
  g_autoptr(GError) error = NULL;
  GVariant *result = NULL;

  paddock_test_destroy_session (connection, path, &result, &error);
  g_assert_no_error (error);
  return result;
}

PaddockWindow *
paddock_ui_fixture_window (GApplication *app)
{
  PaddockWindow *window = PADDOCK_WINDOW (gtk_application_get_active_window (GTK_APPLICATION (app)));

  g_assert_nonnull (window);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 760);
  return window;
}

static void
disable_animations_cb (GApplication *app)
{
  g_object_set (gtk_settings_get_default (), "gtk-enable-animations", FALSE, NULL);
}

static void run_app (GCallback          callback,
                     const char        *skip_reason,
                     PaddockTestDaemon *daemon);

/* Runs the app against a daemon of its own on a private bus; @callback
 * (GApplication *, PaddockUiFixture *) runs once the window is up.  A
 * callback that sets fixture->skipped makes the test skipped, with
 * @skip_reason: never a silent pass. */
void
paddock_ui_run_app (GCallback   callback,
                    const char *skip_reason)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);

  run_app (callback, skip_reason, daemon);
}

/* The same on a bus where paddockd is only activatable (as an installed
 * .service file makes it): nothing runs until the app asks for it. */
void
paddock_ui_run_app_activatable (GCallback   callback,
                                const char *skip_reason)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new_activatable ();

  run_app (callback, skip_reason, daemon);
}

static void
run_app (GCallback          callback,
         const char        *skip_reason,
         PaddockTestDaemon *daemon)
{
  g_autofree char *display = g_strdup (g_getenv ("DISPLAY"));
  g_autoptr(PaddockApplication) app = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *workspace = g_dir_make_tmp ("paddock-ui-ws-XXXXXX", &error);
  PaddockUiFixture fixture = { daemon, workspace, FALSE, FALSE };

  g_assert_no_error (error);
  /* Keep DISPLAY whatever the bus harness does with the environment. */
  if (display != NULL)
    g_setenv ("DISPLAY", display, TRUE);

  app = paddock_application_new ();
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_NON_UNIQUE);
  /* Screenshots show where a transition ends, not a frame of it. */
  g_signal_connect (app, "startup", G_CALLBACK (disable_animations_cb), NULL);
  g_signal_connect_after (app, "activate", callback, &fixture);
  g_assert_cmpint (g_application_run (G_APPLICATION (app), 0, NULL), ==, 0);
  g_assert_true (fixture.ran);

  /* The tests leave only files they name; anything else is a bug. */
  {
    g_autoptr(GDir) dir = g_dir_open (workspace, 0, NULL);
    const char *entry;

    while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
      {
        g_autofree char *path = g_build_filename (workspace, entry, NULL);

        g_unlink (path);
      }
  }
  g_rmdir (workspace);
  if (fixture.skipped)
    g_test_skip (skip_reason != NULL ? skip_reason : "the test's callback skipped (no reason given)");
}
