/* test-ui-e2e.c — the app end to end against a real daemon, driven as a user would, under Xvfb
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One session's life through the app's own widgets: created from the New
 * Session dialog, its output read back from the VTE terminal, a file it
 * writes seen in the Changes view, applied into the workspace after the
 * confirmation, and destroyed with nothing left running.
 */

#include "config.h"

#include <string.h>
#include <vte/vte.h>

#include "paddock-change-item.h"
#include "paddock-changes-view.h"
#include "paddock-client.h"
#include "paddock-new-session-dialog.h"
#include "paddock-safety-view.h"
#include "paddock-session-item.h"
#include "paddock-session-view.h"
#include "paddock-terminal-view.h"
#include "paddock-ui-test.h"
#include "paddock-window-private.h"

#define AGENT_SCRIPT "echo e2e-hello-$((6*7)); echo from-the-agent > agent-note.txt; echo wrote-note; exec sleep 300"

static gboolean
client_connected (gpointer data)
{
  return paddock_client_get_state (paddock_window_get_client (data)) == PADDOCK_CLIENT_STATE_CONNECTED;
}

static PaddockNewSessionDialog *
find_new_session_dialog (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GObject) toplevel = g_list_model_get_item (toplevels, i);

      if (PADDOCK_IS_NEW_SESSION_DIALOG (toplevel) && gtk_widget_get_visible (GTK_WIDGET (toplevel)))
        return PADDOCK_NEW_SESSION_DIALOG (toplevel);
    }
  return NULL;
}

static gpointer
dialog_child (PaddockNewSessionDialog *dialog,
              const char              *name)
{
  return gtk_widget_get_template_child (GTK_WIDGET (dialog), PADDOCK_TYPE_NEW_SESSION_DIALOG, name);
}

static VteTerminal *
current_terminal (PaddockWindow *window)
{
  return paddock_terminal_view_get_terminal (PADDOCK_TERMINAL_VIEW (paddock_ui_session_view_child (window,
                                                                                                    "terminal_view")));
}

static gboolean
terminal_shows (gpointer data)
{
  PaddockWindow *window = ((gpointer *)data)[0];
  const char *needle = ((gpointer *)data)[1];
  g_autofree char *text = NULL;

  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  text = vte_terminal_get_text (current_terminal (window), NULL, NULL, NULL);
  G_GNUC_END_IGNORE_DEPRECATIONS
  return text != NULL && strstr (text, needle) != NULL;
}

static PaddockChangeItem *
find_change (PaddockWindow *window,
             const char    *path)
{
  PaddockChangesView *view = PADDOCK_CHANGES_VIEW (paddock_ui_session_view_child (window, "changes_view"));
  GListModel *changes = paddock_changes_view_get_model (view);

  for (guint i = 0; changes != NULL && i < g_list_model_get_n_items (changes); i++)
    {
      g_autoptr(PaddockChangeItem) change = g_list_model_get_item (changes, i);

      if (g_str_equal (paddock_change_item_get_path (change), path))
        return g_steal_pointer (&change);
    }
  return NULL;
}

static gboolean
change_listed (gpointer data)
{
  g_autoptr(PaddockChangeItem) change = find_change (data, "agent-note.txt");

  return change != NULL;
}

static gboolean
file_has_note (gpointer data)
{
  g_autofree char *contents = NULL;

  return g_file_get_contents (data, &contents, NULL, NULL) && g_str_equal (contents, "from-the-agent\n");
}

/* Whether a safe session can run here at all: without it nothing is staged. */
static gboolean
safe_profile_works (PaddockUiFixture *fixture)
{
  GDBusConnection *connection = paddock_test_daemon_get_connection (fixture->daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = paddock_ui_create_session (connection, fixture->workspace, "probe", "safe", "true", &error);
  g_autoptr(GVariant) result = NULL;

  if (path == NULL)
    {
      g_test_message ("a safe session cannot start here: %s", error->message);
      return FALSE;
    }
  result = paddock_ui_destroy_session (connection, path);
  return TRUE;
}

static gboolean
item_has_proxy (gpointer data)
{
  return paddock_session_item_get_proxy (data) != NULL;
}

static void
end_to_end_cb (GApplication     *app,
               PaddockUiFixture *fixture)
{
  PaddockWindow *window = paddock_ui_fixture_window (app);
  PaddockNewSessionDialog *dialog;
  g_autoptr(GFile) workspace = g_file_new_for_path (fixture->workspace);
  g_autofree char *note = g_build_filename (fixture->workspace, "agent-note.txt", NULL);
  g_autoptr(PaddockChangeItem) change = NULL;
  g_autoptr(GSettings) settings = g_settings_new ("org.paddock.Paddock");
  g_auto(GStrv) recent = NULL;

  if (!paddock_test_wait_for (client_connected, window, PADDOCK_UI_TIMEOUT_MS))
    g_error ("the app did not connect to the daemon");
  if (!safe_profile_works (fixture))
    {
      fixture->skipped = TRUE;
      fixture->ran = TRUE;
      gtk_window_destroy (GTK_WINDOW (window));
      return;
    }
  paddock_ui_wait_for_sessions (window, 0);

  /* New Session: the folder (the native chooser is a portal, so it is set
   * as the chooser would), a custom command, a name, the safe profile. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.new-session", NULL));
  dialog = find_new_session_dialog ();
  g_assert_nonnull (dialog);
  paddock_new_session_dialog_set_workspace (dialog, workspace);
  adw_combo_row_set_selected (dialog_child (dialog, "agent_row"),
                              g_list_model_get_n_items (adw_combo_row_get_model (dialog_child (dialog, "agent_row"))) - 1);
  g_assert_true (gtk_widget_get_visible (dialog_child (dialog, "command_row")));
  gtk_editable_set_text (dialog_child (dialog, "command_row"), "sh -c '" AGENT_SCRIPT "'");
  gtk_editable_set_text (dialog_child (dialog, "name_row"), "end to end");
  adw_combo_row_set_selected (dialog_child (dialog, "profile_row"), 0);  /* safe */
  /* Out only through the proxy, to two domains (the allowlist row shows
   * only for the proxy). */
  g_assert_false (gtk_widget_get_visible (dialog_child (dialog, "allow_row")));
  adw_combo_row_set_selected (dialog_child (dialog, "net_row"), 2);      /* proxy */
  g_assert_true (gtk_widget_get_visible (dialog_child (dialog, "allow_row")));
  gtk_editable_set_text (dialog_child (dialog, "allow_row"), "pypi.org, *.github.com");
  paddock_ui_save_screenshot (GTK_WINDOW (dialog), "e2e-new-session");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "dialog.create", NULL));

  /* It is listed and selected; its terminal shows what it printed. */
  paddock_ui_wait_for_sessions (window, 1);
  {
    PaddockSessionItem *item = paddock_session_view_get_item (PADDOCK_SESSION_VIEW (
      gtk_stack_get_visible_child (GTK_STACK (paddock_ui_window_child (window, "session_stack")))));
    gpointer data[] = { window, (gpointer) "e2e-hello-42" };

    g_assert_cmpstr (paddock_session_item_get_name (item), ==, "end to end");
    g_assert_cmpstr (paddock_session_item_get_profile (item), ==, "safe");
    /* What the daemon made of the dialog's network choice. */
    if (!paddock_test_wait_for (item_has_proxy, item, PADDOCK_UI_TIMEOUT_MS))
      g_error ("the session's D-Bus object never reached the app");
    g_assert_cmpstr (paddock_ipc_session1_get_network_mode (paddock_session_item_get_proxy (item)), ==, "proxy");
    {
      g_autoptr(GVariant) domains = g_dbus_proxy_get_cached_property (G_DBUS_PROXY (paddock_session_item_get_proxy (item)),
                                                                       "AllowedDomains");
      g_autofree const char **strv = NULL;

      g_assert_nonnull (domains);
      strv = g_variant_get_strv (domains, NULL);
      g_assert_cmpuint (g_strv_length ((char **) strv), ==, 2);
      g_assert_true (g_strv_contains (strv, "pypi.org"));
      g_assert_true (g_strv_contains (strv, "*.github.com"));
    }
    /* The Safety page says where it can go: the proxy, to those two. */
    paddock_ui_show_view (window, "safety");
    {
      const char *network = adw_action_row_get_subtitle (ADW_ACTION_ROW (
        gtk_widget_get_template_child (paddock_ui_session_view_child (window, "safety_view"),
                                       PADDOCK_TYPE_SAFETY_VIEW, "network_row")));

      g_assert_true (g_str_has_prefix (network, "Only through the proxy, to "));
      g_assert_nonnull (strstr (network, "pypi.org"));
      g_assert_nonnull (strstr (network, "*.github.com"));
    }
    paddock_ui_save_screenshot (GTK_WINDOW (window), "e2e-safety");
    paddock_ui_show_view (window, "terminal");
    if (!paddock_test_wait_for (terminal_shows, data, PADDOCK_UI_TIMEOUT_MS))
      g_error ("the terminal does not show the agent's output");
  }
  paddock_ui_save_screenshot (GTK_WINDOW (window), "e2e-terminal");

  /* The file it wrote is staged: in the Changes view, not in the folder. */
  paddock_ui_show_view (window, "changes");
  if (!paddock_test_wait_for (change_listed, window, PADDOCK_UI_TIMEOUT_MS))
    g_error ("the Changes view does not list agent-note.txt");
  change = find_change (window, "agent-note.txt");
  g_assert_cmpstr (paddock_change_item_get_kind (change), ==, "added");
  g_assert_false (g_file_test (note, G_FILE_TEST_EXISTS));
  paddock_ui_save_screenshot (GTK_WINDOW (window), "e2e-changes");

  /* Apply all, confirmed: the file is in the workspace with its content. */
  g_assert_true (gtk_widget_activate_action (paddock_ui_session_view_child (window, "changes_view"),
                                             "changes.apply-all", NULL));
  paddock_ui_answer_dialog ("e2e-apply-confirm", "apply");
  if (!paddock_test_wait_for (file_has_note, note, PADDOCK_UI_TIMEOUT_MS))
    g_error ("agent-note.txt did not reach the workspace");

  /* Destroy, confirmed: nothing of it is left running. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.destroy-session", NULL));
  paddock_ui_answer_dialog (NULL, "destroy");
  paddock_ui_assert_toast (window, "Session destroyed: 0 processes left");
  paddock_ui_wait_for_sessions (window, 0);

  /* The folder is remembered for the next New Session. */
  recent = g_settings_get_strv (settings, "recent-workspaces");
  g_assert_cmpstr (recent[0], ==, fixture->workspace);
  g_settings_reset (settings, "recent-workspaces");

  gtk_window_destroy (GTK_WINDOW (window));
  fixture->ran = TRUE;
}

static void
test_end_to_end (void)
{
  paddock_ui_run_app (G_CALLBACK (end_to_end_cb),
                      "the safe profile cannot run here (NotEnforced): nothing would be staged");
}

int
main (int   argc,
      char *argv[])
{
  paddock_ui_test_init (&argc, &argv);

  if (g_getenv ("DISPLAY") == NULL && g_getenv ("WAYLAND_DISPLAY") == NULL)
    {
      g_test_skip ("no display: run under xvfb-run");
      return g_test_run ();
    }

  g_test_add_func ("/ui/e2e/create-watch-apply-destroy", test_end_to_end);

  return g_test_run ();
}
