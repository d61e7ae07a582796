/* test-ui-window.c — the window follows paddockd's leases live, under Xvfb
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gstdio.h>
#include <gio/gunixfdlist.h>
#include <unistd.h>

#include "paddock-application.h"
#include "paddock-lease-item.h"
#include "paddock-ports-view.h"
#include "paddock-test-client.h"
#include "paddock-test-daemon.h"
#include "paddock-ui-test.h"
#include "paddock-client.h"
#include "paddock-help-window.h"
#include "paddock-window.h"

#define TIMEOUT_MS 5000

typedef struct
{
  guint16 port;
  int     fd;
} HeldLease;

static void
held_lease_clear (HeldLease *lease)
{
  if (lease->fd >= 0)
    close (lease->fd);
  lease->fd = -1;
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (HeldLease, held_lease_clear)

/* Lease through Ports1, as any script would (not through the app), and
 * keep the bound socket. */
static void
lease_port (GDBusConnection *connection,
            const char      *name,
            HeldLease       *out)
{
  g_autoptr(GVariant) lease = NULL;
  g_autoptr(GError) error = NULL;

  lease = paddock_test_lease (connection, name, 0, NULL, &out->fd, &error);
  g_assert_no_error (error);
  g_assert_true (g_variant_lookup (lease, "port", "q", &out->port));
}

static void
release_port (GDBusConnection *connection,
              guint16          port)
{
  g_autoptr(GError) error = NULL;

  paddock_test_release (connection, port, &error);
  g_assert_no_error (error);
}

/* Widgets, reached through the templates as a user would see them. */

static GtkStack *
window_stack (PaddockWindow *window)
{
  return GTK_STACK (paddock_ui_window_child (window, "stack"));
}

static PaddockPortsView *
window_ports_view (PaddockWindow *window)
{
  return PADDOCK_PORTS_VIEW (paddock_ui_window_child (window, "ports_view"));
}

static GtkStack *
ports_view_stack (PaddockWindow *window)
{
  return GTK_STACK (gtk_widget_get_template_child (GTK_WIDGET (window_ports_view (window)),
                                                   PADDOCK_TYPE_PORTS_VIEW, "stack"));
}

static GListModel *
column_view_model (PaddockWindow *window)
{
  GtkColumnView *column_view;

  column_view = GTK_COLUMN_VIEW (gtk_widget_get_template_child (GTK_WIDGET (window_ports_view (window)),
                                                                PADDOCK_TYPE_PORTS_VIEW, "column_view"));
  return G_LIST_MODEL (gtk_column_view_get_model (column_view));
}

typedef struct
{
  PaddockWindow *window;
  const char    *page;
  const char    *ports_page;
  guint          n_rows;
} Expect;

static gboolean
shows (gpointer data)
{
  Expect *expect = data;
  const char *page = gtk_stack_get_visible_child_name (window_stack (expect->window));

  if (g_strcmp0 (page, expect->page) != 0)
    return FALSE;

  if (expect->ports_page != NULL &&
      g_strcmp0 (gtk_stack_get_visible_child_name (ports_view_stack (expect->window)),
                 expect->ports_page) != 0)
    return FALSE;

  return g_list_model_get_n_items (column_view_model (expect->window)) == expect->n_rows;
}

static void
assert_shows (PaddockWindow *window,
              const char    *page,
              const char    *ports_page,
              guint          n_rows)
{
  Expect expect = { window, page, ports_page, n_rows };

  if (!paddock_test_wait_for (shows, &expect, TIMEOUT_MS))
    g_error ("after %u ms the window shows page %s/%s with %u rows; expected %s/%s with %u",
             TIMEOUT_MS,
             gtk_stack_get_visible_child_name (window_stack (window)),
             gtk_stack_get_visible_child_name (ports_view_stack (window)),
             g_list_model_get_n_items (column_view_model (window)),
             page, ports_page ? ports_page : "*", n_rows);
}

static void
assert_row (PaddockWindow *window,
            guint          position,
            guint16        port,
            const char    *name,
            const char    *state)
{
  g_autoptr(PaddockLeaseItem) item = g_list_model_get_item (column_view_model (window), position);

  g_assert_nonnull (item);
  g_assert_cmpuint (paddock_lease_item_get_port (item), ==, port);
  g_assert_cmpstr (paddock_lease_item_get_name (item), ==, name);
  g_assert_cmpstr (paddock_lease_item_get_state (item), ==, state);
}

typedef struct
{
  PaddockTestDaemon *daemon;
  gboolean           ran;
} Fixture;

/* Runs from the application's activate, inside g_application_run(), as the
 * app really runs; the helpers above iterate the main context. */
static void
follow_leases_cb (GApplication *app,
                  Fixture      *fixture)
{
  GDBusConnection *connection = paddock_test_daemon_get_connection (fixture->daemon);
  g_auto(HeldLease) web = { 0, -1 };
  g_auto(HeldLease) api = { 0, -1 };
  g_auto(HeldLease) db = { 0, -1 };
  PaddockWindow *window;

  window = PADDOCK_WINDOW (gtk_application_get_active_window (GTK_APPLICATION (app)));
  g_assert_nonnull (window);
  gtk_window_set_default_size (GTK_WINDOW (window), 960, 600);

  /* The ports are one entry of the sidebar, below the sessions. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-ports", NULL));

  /* No lease yet: the empty state. */
  assert_shows (window, "ports", "empty", 0);
  paddock_ui_save_screenshot (GTK_WINDOW (window), "ports-empty");
  paddock_ui_assert_buttons_named (GTK_WIDGET (window));

  /* Two leases from another client appear, in port order. */
  lease_port (connection, "web", &web);
  lease_port (connection, "api", &api);
  assert_shows (window, "ports", "leases", 2);
  if (web.port < api.port)
    {
      assert_row (window, 0, web.port, "web", "held");
      assert_row (window, 1, api.port, "api", "held");
    }
  else
    {
      assert_row (window, 0, api.port, "api", "held");
      assert_row (window, 1, web.port, "web", "held");
    }
  paddock_ui_save_screenshot (GTK_WINDOW (window), "ports-two-leases");
  paddock_ui_assert_buttons_named (GTK_WIDGET (window));

  /* Releasing one removes exactly that row. */
  release_port (connection, web.port);
  held_lease_clear (&web);
  assert_shows (window, "ports", "leases", 1);
  assert_row (window, 0, api.port, "api", "held");
  paddock_ui_save_screenshot (GTK_WINDOW (window), "ports-one-lease");

  /* A third lease, whose socket this process will keep across the restart. */
  lease_port (connection, "db", &db);
  assert_shows (window, "ports", "leases", 2);

  /* The daemon goes away: the window says so and the list empties. */
  paddock_test_daemon_stop (fixture->daemon);
  assert_shows (window, "unreachable", NULL, 0);
  paddock_ui_save_screenshot (GTK_WINDOW (window), "ports-daemon-not-running");
  paddock_ui_assert_buttons_named (GTK_WIDGET (window));

  /* It comes back with the persisted leases of a still-connected client and
   * the window reconnects by itself. "api" is held again: nothing else had
   * its port. "db" is lost: this process kept the bound socket, so the port
   * was taken while the daemon was away, and the window must say so. */
  held_lease_clear (&api);
  paddock_test_daemon_start (fixture->daemon);
  assert_shows (window, "ports", "leases", 2);
  if (api.port < db.port)
    {
      assert_row (window, 0, api.port, "api", "held");
      assert_row (window, 1, db.port, "db", "in-use");
    }
  else
    {
      assert_row (window, 0, db.port, "db", "in-use");
      assert_row (window, 1, api.port, "api", "held");
    }
  paddock_ui_save_screenshot (GTK_WINDOW (window), "ports-reconnected");

  /* The last window closes: g_application_run() returns. */
  gtk_window_destroy (GTK_WINDOW (window));
  fixture->ran = TRUE;
}

static void
test_window_follows_leases (void)
{
  g_autofree char *display = g_strdup (g_getenv ("DISPLAY"));
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  g_autoptr(PaddockApplication) app = NULL;
  Fixture fixture = { daemon, FALSE };

  /* Keep DISPLAY whatever the bus harness does with the environment. */
  if (display != NULL)
    g_setenv ("DISPLAY", display, TRUE);

  /* The real application on the private bus: startup loads the style and
   * makes the client, activate opens the window, shutdown lets go of the
   * bus. NON_UNIQUE keeps any other running Paddock out of it. */
  app = paddock_application_new ();
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_NON_UNIQUE);
  g_signal_connect_after (app, "activate", G_CALLBACK (follow_leases_cb), &fixture);
  g_assert_cmpint (g_application_run (G_APPLICATION (app), 0, NULL), ==, 0);
  g_assert_true (fixture.ran);
}

/* D-Bus activation: on a bus where paddockd is only activatable (as the
 * installed .service file makes it), opening the app starts the daemon. */
static gboolean
window_connected (gpointer data)
{
  return paddock_client_get_state (paddock_window_get_client (data)) == PADDOCK_CLIENT_STATE_CONNECTED;
}

static void
activates_daemon_cb (GApplication     *app,
                     PaddockUiFixture *fixture)
{
  PaddockWindow *window = paddock_ui_fixture_window (app);
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;
  gboolean running = FALSE;

  if (!paddock_test_wait_for (window_connected, window, PADDOCK_UI_TIMEOUT_MS))
    g_error ("the app did not start the daemon");
  reply = g_dbus_connection_call_sync (paddock_test_daemon_get_connection (fixture->daemon),
                                       "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "NameHasOwner",
                                       g_variant_new ("(s)", "org.paddock.Daemon"),
                                       G_VARIANT_TYPE ("(b)"), G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &error);
  g_assert_no_error (error);
  g_variant_get (reply, "(b)", &running);
  g_assert_true (running);

  gtk_window_destroy (GTK_WINDOW (window));
  fixture->ran = TRUE;
}

static void
test_window_activates_daemon (void)
{
  paddock_ui_run_app_activatable (G_CALLBACK (activates_daemon_cb), NULL);
}

/* ---- the help: how to run an agent -------------------------------------------- */

/* The label of the menu item that runs ACTION in MODEL (sections
 * included), or NULL. */
static char *
menu_label_for_action (GMenuModel *model,
                       const char *action)
{
  for (int i = 0; i < g_menu_model_get_n_items (model); i++)
    {
      g_autofree char *item_action = NULL;
      g_autofree char *label = NULL;
      g_autoptr(GMenuModel) section = g_menu_model_get_item_link (model, i, G_MENU_LINK_SECTION);

      if (section != NULL)
        {
          char *found = menu_label_for_action (section, action);

          if (found != NULL)
            return found;
        }
      if (g_menu_model_get_item_attribute (model, i, G_MENU_ATTRIBUTE_ACTION, "s", &item_action) &&
          g_str_equal (item_action, action) &&
          g_menu_model_get_item_attribute (model, i, G_MENU_ATTRIBUTE_LABEL, "s", &label))
        return g_steal_pointer (&label);
    }
  return NULL;
}

/* The main menu's label for ACTION, from the window's menu buttons. */
static char *
main_menu_label (GtkWidget  *widget,
                 const char *action)
{
  if (GTK_IS_MENU_BUTTON (widget) && gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (widget)) != NULL)
    {
      char *label = menu_label_for_action (gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (widget)), action);

      if (label != NULL)
        return label;
    }
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL; child = gtk_widget_get_next_sibling (child))
    {
      char *label = main_menu_label (child, action);

      if (label != NULL)
        return label;
    }
  return NULL;
}

/* All the text its labels show, as a user reads it (markup stripped). */
static void
collect_label_text (GtkWidget *widget,
                    GString   *text)
{
  if (GTK_IS_LABEL (widget))
    g_string_append_printf (text, "%s\n", gtk_label_get_text (GTK_LABEL (widget)));
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL; child = gtk_widget_get_next_sibling (child))
    collect_label_text (child, text);
}

static GtkWindow *
find_help_window (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();  /* transfer none */

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GObject) toplevel = g_list_model_get_item (toplevels, i);

      if (PADDOCK_IS_HELP_WINDOW (toplevel) && gtk_widget_get_visible (GTK_WIDGET (toplevel)))
        return GTK_WINDOW (toplevel);
    }
  return NULL;
}

static gboolean
help_window_shown (gpointer data)
{
  return find_help_window () != NULL;
}

static void
shows_help_cb (GApplication     *app,
               PaddockUiFixture *fixture)
{
  PaddockWindow *window = paddock_ui_fixture_window (app);
  g_autofree char *menu_label = main_menu_label (GTK_WIDGET (window), "app.help");
  g_autofree char **accels = gtk_application_get_accels_for_action (GTK_APPLICATION (app), "app.help");
  g_autoptr(GString) text = g_string_new (NULL);
  static const char * const says[] = {
    /* installed per user with npm */
    "npm config set prefix ~/.npm-global", "npm install -g @anthropic-ai/claude-code",
    "@openai/codex", "opencode-ai", "@mariozechner/pi-coding-agent",
    /* found automatically */
    "Paddock looks for each agent where npm", "nvm",
    /* New Session's presets */
    "New Session…", "Claude Code, Codex, OpenCode or pi",
    /* its home persists, and the login */
    "a home of its own that persists", "Run Its Login Command", "codex login",
    /* the command line */
    "paddockctl agents", "paddockctl create --agent claude --workspace",
    "-- claude /login", "paddockctl agents import-login claude --yes",
  };
  GtkWindow *help;

  /* Reachable as a user reaches it: an item of the main menu, and F1. */
  g_assert_cmpstr (menu_label, ==, "_Help");
  g_assert_nonnull (accels);
  g_assert_cmpstr (accels[0], ==, "F1");
  g_strfreev (g_steal_pointer (&accels));

  g_action_group_activate_action (G_ACTION_GROUP (app), "help", NULL);
  if (!paddock_test_wait_for (help_window_shown, NULL, PADDOCK_UI_TIMEOUT_MS))
    g_error ("the help window did not open");
  help = find_help_window ();
  paddock_ui_settle (200);
  g_assert_cmpstr (gtk_window_get_title (help), ==, "Running an Agent");
  g_assert_true (gtk_window_get_transient_for (help) == GTK_WINDOW (window));
  collect_label_text (GTK_WIDGET (help), text);
  for (gsize i = 0; i < G_N_ELEMENTS (says); i++)
    if (strstr (text->str, says[i]) == NULL)
      g_error ("the help does not say “%s”; it says:\n%s", says[i], text->str);
  paddock_ui_save_screenshot (help, "help");

  gtk_window_destroy (help);
  g_assert_null (find_help_window ());
  gtk_window_destroy (GTK_WINDOW (window));
  fixture->ran = TRUE;
}

static void
test_window_shows_help (void)
{
  paddock_ui_run_app (G_CALLBACK (shows_help_cb), NULL);
}

int
main (int   argc,
      char *argv[])
{
  /* GTK and libadwaita start with no session bus at all, before the private
   * one exists: see paddock_ui_test_init(). */
  paddock_ui_test_init (&argc, &argv);

  if (g_getenv ("DISPLAY") == NULL && g_getenv ("WAYLAND_DISPLAY") == NULL)
    {
      g_test_skip ("no display: run under xvfb-run");
      return g_test_run ();
    }

  g_test_add_func ("/ui/window/follows-leases", test_window_follows_leases);
  g_test_add_func ("/ui/window/activates-daemon", test_window_activates_daemon);
  g_test_add_func ("/ui/window/shows-help", test_window_shows_help);

  return g_test_run ();
}
