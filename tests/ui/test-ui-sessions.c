/* test-ui-sessions.c — the sidebar, terminal, changes and actions of sessions, under Xvfb
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gstdio.h>
#include <string.h>
#include <vte/vte.h>

#include "paddock-application.h"
#include "paddock-change-item.h"
#include "paddock-changes-view.h"
#include "paddock-layer-item.h"
#include "paddock-new-session-dialog.h"
#include "paddock-safety-view.h"
#include "paddock-session-item.h"
#include "paddock-session-row.h"
#include "paddock-session-view.h"
#include "paddock-terminal-view.h"
#include "paddock-test-daemon.h"
#include "paddock-test-session.h"
#include "paddock-ui-test.h"
#include "paddock-window.h"

#define TIMEOUT_MS PADDOCK_UI_TIMEOUT_MS

/* Helpers: everything reached through the templates, as a user sees it. */

static GListModel *
sidebar_model (PaddockWindow *window)
{
  return G_LIST_MODEL (paddock_ui_window_child (window, "sessions_selection"));
}

static const char *
visible_page (PaddockWindow *window)
{
  return gtk_stack_get_visible_child_name (GTK_STACK (paddock_ui_window_child (window, "stack")));
}

static VteTerminal *
current_terminal (PaddockWindow *window)
{
  return paddock_terminal_view_get_terminal (PADDOCK_TERMINAL_VIEW (paddock_ui_session_view_child (window, "terminal_view")));
}

static PaddockChangesView *
current_changes_view (PaddockWindow *window)
{
  return PADDOCK_CHANGES_VIEW (paddock_ui_session_view_child (window, "changes_view"));
}

static PaddockSafetyView *
current_safety_view (PaddockWindow *window)
{
  return PADDOCK_SAFETY_VIEW (paddock_ui_session_view_child (window, "safety_view"));
}

static char *
terminal_text (VteTerminal *terminal)
{
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  return vte_terminal_get_text (terminal, NULL, NULL, NULL);
  G_GNUC_END_IGNORE_DEPRECATIONS
}

static GtkScrolledWindow *
find_scrolled_window (GtkWidget *widget)
{
  if (GTK_IS_SCROLLED_WINDOW (widget))
    return GTK_SCROLLED_WINDOW (widget);

  for (GtkWidget *child = gtk_widget_get_first_child (widget);
       child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkScrolledWindow *found = find_scrolled_window (child);

      if (found != NULL)
        return found;
    }

  return NULL;
}

static gboolean
boundary_known (gpointer data)
{
  PaddockWindow *window = data;
  PaddockSessionItem *item = paddock_session_view_get_item (paddock_ui_current_session_view (window));

  return paddock_session_item_get_boundary_status (item) != NULL;
}

/* The Safety page's row of @layer, as a user would find it, with the
 * layer it was made from. */
static PaddockLayerItem *
safety_row (PaddockWindow *window,
            const char    *layer,
            GtkWidget    **row_out)
{
  GtkWidget *row;

  if (!paddock_test_wait_for (boundary_known, window, TIMEOUT_MS))
    g_error ("the boundary of the session is not known after %d ms", TIMEOUT_MS);
  paddock_ui_settle (100);
  row = paddock_safety_view_find_row (current_safety_view (window), layer);
  if (row == NULL)
    g_error ("the Safety page has no row for %s", layer);
  g_assert_true (ADW_IS_EXPANDER_ROW (row));
  if (row_out != NULL)
    *row_out = row;

  return g_object_get_data (G_OBJECT (row), "paddock-layer-item");
}

/* Conditions */

typedef struct
{
  PaddockWindow *window;
  const char    *page;
  guint          n_sessions;
} ShowsSessions;

static gboolean
shows_sessions (gpointer data)
{
  ShowsSessions *expect = data;

  return g_strcmp0 (visible_page (expect->window), expect->page) == 0 &&
         g_list_model_get_n_items (sidebar_model (expect->window)) == expect->n_sessions;
}

static void
assert_shows_sessions (PaddockWindow *window,
                       const char    *page,
                       guint          n_sessions)
{
  ShowsSessions expect = { window, page, n_sessions };

  if (!paddock_test_wait_for (shows_sessions, &expect, TIMEOUT_MS))
    g_error ("the window shows page %s with %u sessions; expected %s with %u",
             visible_page (window), g_list_model_get_n_items (sidebar_model (window)), page, n_sessions);
}

typedef struct
{
  PaddockWindow *window;
  const char    *needle;
} ShowsText;

static gboolean
terminal_shows (gpointer data)
{
  ShowsText *expect = data;
  g_autofree char *text = terminal_text (current_terminal (expect->window));

  return text != NULL && strstr (text, expect->needle) != NULL;
}

static void
assert_terminal_shows (PaddockWindow *window,
                       const char    *needle)
{
  ShowsText expect = { window, needle };

  if (!paddock_test_wait_for (terminal_shows, &expect, TIMEOUT_MS))
    {
      g_autofree char *text = terminal_text (current_terminal (window));

      g_error ("the terminal does not show “%s”; it shows:\n%s", needle, text);
    }
}

/* D-Bus, as a script would call it; the agent is a plain bash. */

/* The New Session dialog's preset row says whether the preset was found
 * (ListAgents answered). */
static gboolean
agent_row_described (gpointer data)
{
  const char *subtitle = adw_action_row_get_subtitle (ADW_ACTION_ROW (data));

  return subtitle != NULL && *subtitle != '\0';
}

static const char * const bash_argv[] = { "bash", "--norc", "--noprofile", NULL };

static void
send_input (GDBusConnection *connection,
            const char      *path,
            const char      *text)
{
  g_autoptr(PaddockIpcSession1) session = paddock_test_session (connection, path);
  g_autoptr(GError) error = NULL;

  paddock_ipc_session1_call_send_input_sync (session,
                                             g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, text, strlen (text), 1),
                                             NULL, &error);
  g_assert_no_error (error);
}

static gboolean
is_not_enforced (const GError *error)
{
  g_autofree char *name = NULL;

  if (error == NULL || !g_dbus_error_is_remote_error (error))
    return FALSE;

  name = g_dbus_error_get_remote_error (error);
  return g_strcmp0 (name, "org.paddock.Error.NotEnforced") == 0;
}

/* The application under test, on the library's workspace, which starts
 * with a README for the session to change. */

static void
write_readme (PaddockUiFixture *fixture)
{
  g_autofree char *readme = g_build_filename (fixture->workspace, "README", NULL);

  g_assert_true (g_file_set_contents (readme, "hello\n", -1, NULL));
}

static gboolean
terminal_has_selection (gpointer data)
{
  return vte_terminal_get_has_selection (data);
}

static gboolean
shows_item (gpointer data)
{
  PaddockWindow *window = ((gpointer *)data)[0];

  return paddock_session_view_get_item (paddock_ui_current_session_view (window)) == ((gpointer *)data)[1];
}

static gboolean
terminal_attached (gpointer data)
{
  PaddockWindow *window = data;

  return paddock_terminal_view_is_attached (PADDOCK_TERMINAL_VIEW (paddock_ui_session_view_child (window, "terminal_view")));
}


/* The sidebar's row of the only session listed. */
static GtkWidget *
find_session_row (GtkWidget *widget)
{
  if (PADDOCK_IS_SESSION_ROW (widget))
    return widget;

  for (GtkWidget *child = gtk_widget_get_first_child (widget);
       child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_session_row (child);

      if (found != NULL)
        return found;
    }

  return NULL;
}

static gpointer
session_row_child (PaddockWindow *window,
                   const char    *name)
{
  GtkWidget *row = find_session_row (GTK_WIDGET (window));

  g_assert_nonnull (row);
  return gtk_widget_get_template_child (row, PADDOCK_TYPE_SESSION_ROW, name);
}

typedef struct
{
  GdkClipboard *clipboard;
  char         *text;
  gboolean      done;
} ClipboardRead;

static void
clipboard_read_cb (GObject      *object,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  ClipboardRead *read = user_data;

  read->text = gdk_clipboard_read_text_finish (GDK_CLIPBOARD (object), result, NULL);
  read->done = TRUE;
}

static gboolean
clipboard_read_done (gpointer data)
{
  return ((ClipboardRead *)data)->done;
}

static char *
clipboard_text (GtkWidget *widget)
{
  ClipboardRead read = { gtk_widget_get_clipboard (widget), NULL, FALSE };

  gdk_clipboard_read_text_async (read.clipboard, NULL, clipboard_read_cb, &read);
  g_assert_true (paddock_test_wait_for (clipboard_read_done, &read, TIMEOUT_MS));
  return read.text;
}

static void
terminal_and_destroy_cb (GApplication     *app,
                         PaddockUiFixture *fixture)
{
  GDBusConnection *connection = paddock_test_daemon_get_connection (fixture->daemon);
  PaddockWindow *window = paddock_ui_fixture_window (app);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *size_line = NULL;
  PaddockNewSessionDialog *dialog;
  g_autoptr(GFile) workspace = NULL;
  VteTerminal *terminal;

  write_readme (fixture);

  /* The keyboard shortcuts the app promises. */
  {
    static const struct { const char *accel; const char *action; } accels[] = {
      { "<Control>n", "win.new-session" },
      { "<Control>w", "window.close" },
      { "<Control>q", "app.quit" },
    };

    for (guint i = 0; i < G_N_ELEMENTS (accels); i++)
      {
        g_auto(GStrv) actions = gtk_application_get_actions_for_accel (GTK_APPLICATION (app), accels[i].accel);

        g_assert_true (g_strv_contains ((const char * const *)actions, accels[i].action));
      }
  }

  /* The shortcuts window lists them. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-help-overlay", NULL));
  {
    GtkWindow *help = GTK_WINDOW (gtk_application_window_get_help_overlay (GTK_APPLICATION_WINDOW (window)));

    g_assert_nonnull (help);
    g_assert_true (paddock_test_wait_for ((gboolean (*) (gpointer))gtk_widget_get_mapped, help, TIMEOUT_MS));
    paddock_ui_save_screenshot (help, "sessions-shortcuts");
    gtk_widget_set_visible (GTK_WIDGET (help), FALSE);
  }

  /* Nothing yet: the empty state invites a new session. */
  assert_shows_sessions (window, "no-sessions", 0);
  paddock_ui_save_screenshot (GTK_WINDOW (window), "sessions-empty");
  paddock_ui_assert_buttons_named (GTK_WIDGET (window));

  /* A session created by a script appears in the sidebar, selected. */
  path = paddock_ui_create_session_argv (connection, fixture->workspace, "shell on ws", "host", bash_argv, &error);
  g_assert_no_error (error);
  assert_shows_sessions (window, "sessions", 1);
  {
    g_autoptr(PaddockSessionItem) item = g_list_model_get_item (sidebar_model (window), 0);

    g_assert_cmpstr (paddock_session_item_get_name (item), ==, "shell on ws");
    g_assert_cmpstr (paddock_session_item_get_agent (item), ==, "bash");
    g_assert_cmpstr (paddock_session_item_get_object_path (item), ==, path);
  }

  /* Its terminal attaches and replays, then shows live output. */
  g_assert_true (paddock_test_wait_for (terminal_attached, window, TIMEOUT_MS));
  send_input (connection, path, "echo from-the-script-$((6*7))\n");
  assert_terminal_shows (window, "from-the-script-42");

  /* Typing into the terminal reaches the session (VTE's ::commit). */
  terminal = current_terminal (window);
  vte_terminal_feed_child (terminal, "echo typed-$((2+3))\r", -1);
  assert_terminal_shows (window, "typed-5");

  /* The session's terminal has the size of the widget. */
  vte_terminal_feed_child (terminal, "stty size\r", -1);
  size_line = g_strdup_printf ("%ld %ld", vte_terminal_get_row_count (terminal),
                               vte_terminal_get_column_count (terminal));
  assert_terminal_shows (window, size_line);

  /* Copy (Ctrl+Shift+C's action) puts the selection on the clipboard;
   * paste (Ctrl+Shift+V's) types the clipboard into the session. */
  {
    GtkWidget *terminal_view = paddock_ui_session_view_child (window, "terminal_view");
    g_autofree char *copied = NULL;
    double scale;

    vte_terminal_select_all (terminal);
    g_assert_true (gtk_widget_activate_action (terminal_view, "terminal.copy", NULL));
    copied = clipboard_text (GTK_WIDGET (terminal));
    g_assert_nonnull (copied);
    g_assert_nonnull (strstr (copied, "typed-5"));
    vte_terminal_unselect_all (terminal);

    gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (terminal)), "echo pasted-$((3*3))\n");
    g_assert_true (gtk_widget_activate_action (terminal_view, "terminal.paste", NULL));
    /* bash takes a paste as bracketed text: it runs on Enter. */
    assert_terminal_shows (window, "echo pasted-$((3*3))");
    vte_terminal_feed_child (terminal, "\r", -1);
    assert_terminal_shows (window, "pasted-9");

    /* Zoom in, out and back (Ctrl+plus, Ctrl+minus, Ctrl+0). */
    scale = vte_terminal_get_font_scale (terminal);
    g_assert_true (gtk_widget_activate_action (terminal_view, "terminal.zoom-in", NULL));
    g_assert_cmpfloat (vte_terminal_get_font_scale (terminal), >, scale);
    g_assert_true (gtk_widget_activate_action (terminal_view, "terminal.zoom-out", NULL));
    g_assert_true (gtk_widget_activate_action (terminal_view, "terminal.zoom-out", NULL));
    g_assert_cmpfloat (vte_terminal_get_font_scale (terminal), <, scale);
    g_assert_true (gtk_widget_activate_action (terminal_view, "terminal.zoom-reset", NULL));
    g_assert_cmpfloat (vte_terminal_get_font_scale (terminal), ==, 1.0);
  }
  paddock_ui_save_screenshot (GTK_WINDOW (window), "sessions-terminal");
  paddock_ui_assert_buttons_named (GTK_WIDGET (window));

  /* Search, through its shortcut's action. */
  g_assert_true (gtk_widget_activate_action (paddock_ui_session_view_child (window, "terminal_view"),
                                             "terminal.search", NULL));
  {
    /* Typing in the search entry selects the match in the terminal. */
    GtkEditable *entry = GTK_EDITABLE (gtk_widget_get_template_child (paddock_ui_session_view_child (window, "terminal_view"),
                                                                      PADDOCK_TYPE_TERMINAL_VIEW, "search_entry"));

    g_assert_false (vte_terminal_get_has_selection (terminal));
    gtk_editable_set_text (entry, "typed-5");
    g_assert_true (paddock_test_wait_for (terminal_has_selection, terminal, TIMEOUT_MS));
  }
  paddock_ui_save_screenshot (GTK_WINDOW (window), "sessions-terminal-search");

  paddock_ui_show_view (window, "info");
  paddock_ui_save_screenshot (GTK_WINDOW (window), "sessions-info");
  paddock_ui_assert_buttons_named (GTK_WIDGET (window));

  /* The host profile asks for no layer: the Safety page says nothing is
   * enforced, every layer in red or grey. */
  paddock_ui_show_view (window, "safety");
  {
    PaddockSessionItem *item = paddock_session_view_get_item (paddock_ui_current_session_view (window));
    GListModel *boundary;
    GtkWidget *row = NULL;
    PaddockLayerItem *layer = safety_row (window, "seccomp", &row);

    g_assert_cmpstr (paddock_session_item_get_boundary_status (item), ==, "unenforced");
    g_assert_false (paddock_layer_item_get_requested (layer));
    g_assert_cmpstr (paddock_layer_item_get_status (layer), !=, "enforced");
    boundary = paddock_session_item_get_boundary (item);
    for (guint i = 0; i < g_list_model_get_n_items (boundary); i++)
      {
        g_autoptr(PaddockLayerItem) each = g_list_model_get_item (boundary, i);

        g_assert_false (paddock_layer_item_get_requested (each));
      }
    g_assert_true (gtk_test_accessible_has_property (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_LABEL));
    adw_expander_row_set_expanded (ADW_EXPANDER_ROW (row), TRUE);
  }
  paddock_ui_save_screenshot (GTK_WINDOW (window), "sessions-safety-host");
  paddock_ui_assert_buttons_named (GTK_WIDGET (window));

  paddock_ui_show_view (window, "changes");
  paddock_ui_save_screenshot (GTK_WINDOW (window), "sessions-changes-host");

  /* A second session through the New Session dialog: it gets selected. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.new-session", NULL));
  {
    GListModel *toplevels = gtk_window_get_toplevels ();

    dialog = NULL;
    for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
      {
        g_autoptr(GObject) toplevel = g_list_model_get_item (toplevels, i);

        if (PADDOCK_IS_NEW_SESSION_DIALOG (toplevel))
          dialog = PADDOCK_NEW_SESSION_DIALOG (toplevel);
      }
  }
  g_assert_nonnull (dialog);
  workspace = g_file_new_for_path (fixture->workspace);
  paddock_new_session_dialog_set_workspace (dialog, workspace);
  paddock_ui_save_screenshot (GTK_WINDOW (dialog), "sessions-new-session");
  paddock_ui_assert_buttons_named (GTK_WIDGET (dialog));
  {
    /* The presets the issue asks for, then a custom command; the profile,
     * network and ports choices. */
    static const char * const presets[] = {
      "Shell (bash)", "Claude Code (claude)", "Codex (codex)", "OpenCode (opencode)", "pi (pi)", "Custom Command",
    };
    static const char * const rows[] = { "profile_row", "net_row", "allow_row", "ports_row", "name_row" };
    GListModel *model = adw_combo_row_get_model (ADW_COMBO_ROW (gtk_widget_get_template_child (GTK_WIDGET (dialog),
                                                                                              PADDOCK_TYPE_NEW_SESSION_DIALOG,
                                                                                              "agent_row")));

    g_assert_cmpuint (g_list_model_get_n_items (model), ==, G_N_ELEMENTS (presets));
    for (guint i = 0; i < G_N_ELEMENTS (presets); i++)
      g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (model), i), ==, presets[i]);
    for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
      g_assert_nonnull (gtk_widget_get_template_child (GTK_WIDGET (dialog), PADDOCK_TYPE_NEW_SESSION_DIALOG, rows[i]));
  }
  {
    /* The selected preset (the shell) is found, and the row says where;
     * its network is the proxy until the user picks one. */
    GObject *agent_row = gtk_widget_get_template_child (GTK_WIDGET (dialog), PADDOCK_TYPE_NEW_SESSION_DIALOG,
                                                          "agent_row");
    GObject *net_row = gtk_widget_get_template_child (GTK_WIDGET (dialog), PADDOCK_TYPE_NEW_SESSION_DIALOG,
                                                        "net_row");

    g_assert_true (paddock_test_wait_for (agent_row_described, agent_row, TIMEOUT_MS));
    g_assert_true (g_str_has_prefix (adw_action_row_get_subtitle (ADW_ACTION_ROW (agent_row)), "Found: /"));
    g_assert_cmpuint (adw_combo_row_get_selected (ADW_COMBO_ROW (net_row)), ==, 2);   /* proxy */
  }
  {
    AdwComboRow *profile_row = ADW_COMBO_ROW (gtk_widget_get_template_child (GTK_WIDGET (dialog),
                                                                             PADDOCK_TYPE_NEW_SESSION_DIALOG,
                                                                             "profile_row"));
    adw_combo_row_set_selected (profile_row, 1);  /* host: works wherever the test runs */
  }
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "dialog.create", NULL));
  assert_shows_sessions (window, "sessions", 2);
  {
    /* Selected once CreateSession answered the dialog, which may come
     * after the sidebar listed it. */
    g_autoptr(PaddockSessionItem) second = g_list_model_get_item (sidebar_model (window), 1);
    gpointer data[] = { window, second };

    g_assert_true (paddock_test_wait_for (shows_item, data, TIMEOUT_MS));
    /* Made from the Shell preset: named for it (Session1.Agent), its
     * command the program the preset found. */
    g_assert_cmpstr (paddock_session_item_get_agent (second), ==, "shell");
    g_assert_true (g_str_has_suffix (paddock_session_item_get_command_line (second), "/bash"));
  }
  paddock_ui_save_screenshot (GTK_WINDOW (window), "sessions-two-sessions");

  /* Destroy, confirmed: the toast reports the survivors, which must be 0. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.destroy-session", NULL));
  paddock_ui_answer_dialog ("sessions-destroy-confirm", "destroy");
  paddock_ui_assert_toast (window, "Session destroyed: 0 processes left");
  assert_shows_sessions (window, "sessions", 1);
  paddock_ui_save_screenshot (GTK_WINDOW (window), "sessions-destroyed");

  /* Stopping the first one, confirmed, the same way. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.stop-session", NULL));
  paddock_ui_answer_dialog (NULL, "stop");
  paddock_ui_assert_toast (window, "Session stopped: 0 processes left");
  paddock_ui_show_view (window, "terminal");
  /* Shown again after it ended, the terminal holds its output once: the
   * replay of its scrollback arrives on the main loop (slowly under ASan). */
  assert_terminal_shows (window, "from-the-script-42");
  paddock_ui_save_screenshot (GTK_WINDOW (window), "sessions-stopped");
  {
    g_autofree char *text = terminal_text (current_terminal (window));
    const char *first = strstr (text, "from-the-script-42");

    g_assert_nonnull (first);
    g_assert_null (strstr (first + 1, "from-the-script-42"));
  }

  /* A stopped session is still listed until it is destroyed. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.destroy-session", NULL));
  paddock_ui_answer_dialog (NULL, "destroy");
  paddock_ui_assert_toast (window, "Session destroyed: 0 processes left");
  assert_shows_sessions (window, "no-sessions", 0);

  gtk_window_destroy (GTK_WINDOW (window));
  fixture->ran = TRUE;
}

static gboolean
changes_counted (gpointer data)
{
  GtkLabel *count = data;

  return gtk_widget_get_visible (GTK_WIDGET (count)) && g_strcmp0 (gtk_label_get_label (count), "2") == 0;
}

static gboolean
changes_listed (gpointer data)
{
  PaddockWindow *window = data;
  GListModel *changes = paddock_changes_view_get_model (current_changes_view (window));

  return g_list_model_get_n_items (changes) >= 3;
}

static gboolean
diff_shown (gpointer data)
{
  PaddockWindow *window = data;
  GtkTextView *diff_view = GTK_TEXT_VIEW (gtk_widget_get_template_child (GTK_WIDGET (current_changes_view (window)),
                                                                        PADDOCK_TYPE_CHANGES_VIEW, "diff_view"));
  GtkTextIter start, end;
  g_autofree char *text = NULL;

  gtk_text_buffer_get_bounds (gtk_text_view_get_buffer (diff_view), &start, &end);
  text = gtk_text_buffer_get_text (gtk_text_view_get_buffer (diff_view), &start, &end, FALSE);
  return strstr (text, "+new") != NULL;
}

static gboolean
readme_conflicts (gpointer data)
{
  GListModel *changes = paddock_changes_view_get_model (PADDOCK_CHANGES_VIEW (data));

  for (guint i = 0; i < g_list_model_get_n_items (changes); i++)
    {
      g_autoptr(PaddockChangeItem) change = g_list_model_get_item (changes, i);

      if (g_str_equal (paddock_change_item_get_path (change), "README"))
        return paddock_change_item_get_conflict (change);
    }

  return FALSE;
}

static gboolean
drop_enabled (gpointer data)
{
  return gtk_widget_is_sensitive (GTK_WIDGET (gtk_widget_get_template_child (GTK_WIDGET (data),
                                                                             PADDOCK_TYPE_CHANGES_VIEW,
                                                                             "drop_button")));
}

static gboolean
changes_empty (gpointer data)
{
  return g_list_model_get_n_items (paddock_changes_view_get_model (PADDOCK_CHANGES_VIEW (data))) == 0;
}

static gboolean
file_exists (gpointer data)
{
  return g_file_test (data, G_FILE_TEST_EXISTS);
}

static void
changes_cb (GApplication     *app,
            PaddockUiFixture *fixture)
{
  GDBusConnection *connection = paddock_test_daemon_get_connection (fixture->daemon);
  PaddockWindow *window = paddock_ui_fixture_window (app);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *added = g_build_filename (fixture->workspace, "added.txt", NULL);
  g_autofree char *readme = g_build_filename (fixture->workspace, "README", NULL);
  g_autofree char *readme_text = NULL;
  PaddockChangesView *changes_view;
  GListModel *changes;
  GtkSelectionModel *selection;
  guint added_position = G_MAXUINT;

  write_readme (fixture);

  assert_shows_sessions (window, "no-sessions", 0);

  path = paddock_ui_create_session_argv (connection, fixture->workspace, "staged shell", "safe", bash_argv, &error);
  if (is_not_enforced (error))
    {
      fixture->skipped = TRUE;
      gtk_window_destroy (GTK_WINDOW (window));
      fixture->ran = TRUE;
      return;
    }
  g_assert_no_error (error);
  assert_shows_sessions (window, "sessions", 1);

  /* The agent writes a new file and changes one: staged, not applied. */
  send_input (connection, path, "echo new > added.txt; echo more >> README; echo '[submodule]' > .gitmodules; "
              "echo wrote-$((1+1))\n");
  assert_terminal_shows (window, "wrote-2");
  g_assert_false (g_file_test (added, G_FILE_TEST_EXISTS));

  /* The Safety page: seccomp requested and enforced, its evidence one
   * click away; the canary probes in a group of their own. */
  paddock_ui_show_view (window, "safety");
  {
    GtkWidget *row = NULL;
    PaddockLayerItem *layer = safety_row (window, "seccomp", &row);
    PaddockSessionItem *item = paddock_session_view_get_item (paddock_ui_current_session_view (window));
    GListModel *boundary = paddock_session_item_get_boundary (item);
    guint n_probes = 0;

    g_assert_true (paddock_layer_item_get_requested (layer));
    g_assert_cmpstr (paddock_layer_item_get_status (layer), ==, "enforced");
    g_assert_cmpstr (paddock_layer_item_get_title (layer), ==, "Seccomp");
    g_assert_cmpstr (adw_preferences_row_get_title (ADW_PREFERENCES_ROW (row)), ==, "Seccomp");
    g_assert_true (gtk_test_accessible_has_property (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_LABEL));
    g_assert_cmpstr (paddock_session_item_get_profile (item), ==, "safe");
    g_assert_nonnull (paddock_session_item_get_network_mode (item));
    for (guint i = 0; i < g_list_model_get_n_items (boundary); i++)
      {
        g_autoptr(PaddockLayerItem) each = g_list_model_get_item (boundary, i);

        g_test_message ("boundary: %s requested=%d %s — %s", paddock_layer_item_get_layer (each),
                        paddock_layer_item_get_requested (each), paddock_layer_item_get_status (each),
                        paddock_layer_item_get_evidence (each));
        if (paddock_layer_item_is_probe (each))
          {
            n_probes++;
            g_assert_nonnull (paddock_safety_view_find_row (current_safety_view (window),
                                                            paddock_layer_item_get_layer (each)));
          }
      }
    g_test_message ("boundary: %s, %u not enforced, %u probes",
                    paddock_session_item_get_boundary_status (item),
                    paddock_session_item_get_n_unenforced (item), n_probes);
    adw_expander_row_set_expanded (ADW_EXPANDER_ROW (row), TRUE);
  }
  paddock_ui_save_screenshot (GTK_WINDOW (window), "sessions-safety");
  paddock_ui_assert_buttons_named (GTK_WIDGET (window));

  /* Further down, the canary probes. */
  {
    GtkScrolledWindow *scrolled = find_scrolled_window (GTK_WIDGET (current_safety_view (window)));
    GtkAdjustment *adjustment;
    GtkWidget *probe_row = NULL;

    g_assert_nonnull (scrolled);
    safety_row (window, "probe:hidden-path", &probe_row);
    adw_expander_row_set_expanded (ADW_EXPANDER_ROW (probe_row), TRUE);
    paddock_ui_settle (200);
    adjustment = gtk_scrolled_window_get_vadjustment (scrolled);
    gtk_adjustment_set_value (adjustment, gtk_adjustment_get_upper (adjustment) - gtk_adjustment_get_page_size (adjustment));
  }
  paddock_ui_save_screenshot (GTK_WINDOW (window), "sessions-safety-probes");

  paddock_ui_show_view (window, "changes");
  g_assert_true (paddock_test_wait_for (changes_listed, window, TIMEOUT_MS));
  changes_view = current_changes_view (window);

  /* The sidebar: the boundary at a glance, the file changes waiting (the
   * metadata row is in the list, not in the count). */
  {
    GtkLabel *count = session_row_child (window, "changes_label");
    GtkWidget *badge = session_row_child (window, "boundary_badge");
    g_autofree char *wrong = NULL;

    g_assert_true (paddock_test_wait_for (changes_counted, count, TIMEOUT_MS));
    g_assert_true (gtk_widget_get_visible (badge));
    g_assert_true (gtk_widget_has_css_class (badge, "enforced"));
    wrong = gtk_test_accessible_check_property (GTK_ACCESSIBLE (badge), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                                "Boundary enforced");
    g_assert_null (wrong);
    wrong = gtk_test_accessible_check_property (GTK_ACCESSIBLE (find_session_row (GTK_WIDGET (window))),
                                                GTK_ACCESSIBLE_PROPERTY_LABEL,
                                                "staged shell, bash, Running, Boundary enforced, 2 changes to review");
    g_assert_null (wrong);
  }
  changes = paddock_changes_view_get_model (changes_view);
  for (guint i = 0; i < g_list_model_get_n_items (changes); i++)
    {
      g_autoptr(PaddockChangeItem) change = g_list_model_get_item (changes, i);

      if (g_str_equal (paddock_change_item_get_path (change), "added.txt"))
        {
          g_assert_cmpstr (paddock_change_item_get_kind (change), ==, "added");
          g_assert_null (paddock_change_item_get_metadata_reason (change));
          added_position = i;
        }
      /* Repository metadata is listed, marked, after the file changes. */
      if (g_str_equal (paddock_change_item_get_path (change), ".gitmodules"))
        {
          g_autofree char *label = NULL;

          g_assert_nonnull (paddock_change_item_get_metadata_reason (change));
          g_object_get (change, "kind-label", &label, NULL);
          g_assert_true (g_str_has_prefix (label, "Metadata"));
          g_assert_cmpuint (i, ==, g_list_model_get_n_items (changes) - 1);
        }
    }
  g_assert_cmpuint (added_position, !=, G_MAXUINT);

  /* Selecting it shows its diff. */
  selection = GTK_SELECTION_MODEL (gtk_widget_get_template_child (GTK_WIDGET (changes_view),
                                                                  PADDOCK_TYPE_CHANGES_VIEW, "selection"));
  gtk_selection_model_select_item (selection, added_position, TRUE);
  g_assert_true (paddock_test_wait_for (diff_shown, window, TIMEOUT_MS));
  paddock_ui_save_screenshot (GTK_WINDOW (window), "sessions-changes");
  paddock_ui_assert_buttons_named (GTK_WIDGET (window));

  /* Apply selected, confirmed: only that file reaches the workspace. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (changes_view), "changes.apply-selected", NULL));
  {
    /* The confirmation lists what it writes and says it cannot be undone. */
    const char *body = adw_message_dialog_get_body (ADW_MESSAGE_DIALOG (paddock_ui_wait_for_message_dialog ()));

    g_assert_nonnull (strstr (body, "Applying cannot be undone"));
    g_assert_nonnull (strstr (body, "added.txt"));
    g_assert_null (strstr (body, "README"));
  }
  paddock_ui_answer_dialog ("sessions-apply-confirm", "apply");
  paddock_ui_assert_toast (window, "Applied 1 change");
  g_assert_true (paddock_test_wait_for (file_exists, added, TIMEOUT_MS));
  g_assert_true (g_file_get_contents (readme, &readme_text, NULL, NULL));
  g_assert_cmpstr (readme_text, ==, "hello\n");
  paddock_ui_save_screenshot (GTK_WINDOW (window), "sessions-applied");

  /* The workspace's README changes under the session's feet: a conflict,
   * which Apply leaves alone unless told to overwrite. */
  g_assert_true (g_file_set_contents (readme, "changed outside\n", -1, NULL));
  g_assert_true (paddock_test_wait_for (readme_conflicts, changes_view, TIMEOUT_MS));
  paddock_ui_save_screenshot (GTK_WINDOW (window), "sessions-conflict");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (changes_view), "changes.apply-all", NULL));
  {
    /* "All" is the file changes: the metadata is named as left out. */
    const char *body = adw_message_dialog_get_body (ADW_MESSAGE_DIALOG (paddock_ui_wait_for_message_dialog ()));

    g_assert_nonnull (strstr (body, "README"));
    g_assert_null (strstr (body, ".gitmodules"));
    g_assert_nonnull (strstr (body, "Repository metadata"));
  }
  paddock_ui_answer_dialog ("sessions-apply-conflict-confirm", "apply");
  paddock_ui_assert_toast (window, "Applied 0, 1 conflicting change was left alone");
  paddock_ui_settle (1000);
  {
    g_autofree char *gitmodules = g_build_filename (fixture->workspace, ".gitmodules", NULL);
    g_assert_false (g_file_test (gitmodules, G_FILE_TEST_EXISTS));
  }
  g_clear_pointer (&readme_text, g_free);
  g_assert_true (g_file_get_contents (readme, &readme_text, NULL, NULL));
  g_assert_cmpstr (readme_text, ==, "changed outside\n");

  /* Drop waits for the session to stop; then the rest of the stage goes. */
  g_assert_false (gtk_widget_is_sensitive (GTK_WIDGET (gtk_widget_get_template_child (GTK_WIDGET (changes_view),
                                                                                      PADDOCK_TYPE_CHANGES_VIEW,
                                                                                      "drop_button"))));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.stop-session", NULL));
  paddock_ui_answer_dialog (NULL, "stop");
  paddock_ui_assert_toast (window, "Session stopped: 0 processes left");
  g_assert_true (paddock_test_wait_for (drop_enabled, changes_view, TIMEOUT_MS));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (changes_view), "changes.drop", NULL));
  paddock_ui_answer_dialog ("sessions-drop-confirm", "drop");
  paddock_ui_assert_toast (window, "Changes dropped");
  g_assert_true (paddock_test_wait_for (changes_empty, changes_view, TIMEOUT_MS));
  g_clear_pointer (&readme_text, g_free);
  g_assert_true (g_file_get_contents (readme, &readme_text, NULL, NULL));
  g_assert_cmpstr (readme_text, ==, "changed outside\n");
  paddock_ui_save_screenshot (GTK_WINDOW (window), "sessions-dropped");

  /* Destroy: nothing is left running. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.destroy-session", NULL));
  paddock_ui_answer_dialog (NULL, "destroy");
  paddock_ui_assert_toast (window, "Session destroyed: 0 processes left");
  assert_shows_sessions (window, "no-sessions", 0);

  gtk_window_destroy (GTK_WINDOW (window));
  fixture->ran = TRUE;
}


/* Replay: a session that printed far more than one screen (3 MiB between
 * two marker lines) before anyone looked. Opening its terminal rebuilds
 * all of it, progressively (a progress bar while it runs), then live
 * output follows: nothing lost, reordered or doubled. */
#define REPLAY_LINES 50000
#define REPLAY_SCRIPT                                                                   \
  "echo replay-first-$((40+2)); "                                                       \
  "seq -f 'filler line %g of the replay, about as long as output usually is' 1 50000; " \
  "echo replay-last-$((50+3)); read answer; echo live-$answer; read again; exit 7"

typedef struct
{
  GDBusConnection *connection;
  const char      *path;
} SessionRef;

/* The agent printed its last marker (and waits for input). */
static gboolean
output_has_last_marker (gpointer data)
{
  SessionRef *ref = data;
  g_autoptr(GVariant) offset = paddock_test_session_property (ref->connection, ref->path, "OutputOffset");
  guint64 end = g_variant_get_uint64 (offset);
  g_autoptr(PaddockIpcSession1) session = NULL;
  g_autoptr(GVariant) bytes = NULL;
  g_autofree char *tail = NULL;
  gsize size;

  if (end < 3 * 1024 * 1024)
    return FALSE;
  session = paddock_test_session (ref->connection, ref->path);
  if (!paddock_ipc_session1_call_read_output_sync (session, end - 64, 64, &bytes, NULL, NULL, NULL, NULL))
    return FALSE;
  tail = g_strndup (g_variant_get_fixed_array (bytes, &size, 1), g_variant_get_size (bytes));
  return strstr (tail, "replay-last-53") != NULL;
}

static PaddockTerminalView *
current_terminal_view (PaddockWindow *window)
{
  return PADDOCK_TERMINAL_VIEW (paddock_ui_session_view_child (window, "terminal_view"));
}

static gboolean
terminal_replaying (gpointer data)
{
  return paddock_terminal_view_is_replaying (current_terminal_view (data));
}

static gboolean
terminal_replayed (gpointer data)
{
  return paddock_terminal_view_is_attached (current_terminal_view (data)) &&
         !paddock_terminal_view_is_replaying (current_terminal_view (data));
}

/* All the terminal holds, its history included, as VTE gives it. */
static char *
terminal_all_text (VteTerminal *terminal)
{
  g_autoptr(GOutputStream) stream = g_memory_output_stream_new_resizable ();
  g_autoptr(GError) error = NULL;

  g_assert_true (vte_terminal_write_contents_sync (terminal, stream, VTE_WRITE_DEFAULT, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_output_stream_write_all (stream, "", 1, NULL, NULL, NULL));
  g_assert_true (g_output_stream_close (stream, NULL, NULL));
  return g_memory_output_stream_steal_data (G_MEMORY_OUTPUT_STREAM (stream));
}

static guint
count_of (const char *haystack,
          const char *needle)
{
  guint n = 0;

  for (const char *at = strstr (haystack, needle); at != NULL; at = strstr (at + 1, needle))
    n++;
  return n;
}

static void
terminal_replay_cb (GApplication     *app,
                    PaddockUiFixture *fixture)
{
  GDBusConnection *connection = paddock_test_daemon_get_connection (fixture->daemon);
  PaddockWindow *window = paddock_ui_fixture_window (app);
  PaddockWindow *first_window;
  g_autoptr(GError) error = NULL;
  g_autofree char *quiet = NULL;
  g_autofree char *loud = NULL;
  g_autofree char *text = NULL;
  g_autofree char *last_filler = g_strdup_printf ("filler line %d of the replay", REPLAY_LINES);
  const char *first, *filler_1, *filler_n, *last, *live;
  SessionRef ref;

  /* A quiet session is shown first (on its Info page), so that nothing
   * attaches to the loud one before it has printed everything. */
  quiet = paddock_ui_create_session (connection, fixture->workspace, "quiet", "host", "exec sleep 300", &error);
  g_assert_no_error (error);
  assert_shows_sessions (window, "sessions", 1);
  paddock_ui_show_view (window, "info");

  loud = paddock_ui_create_session (connection, fixture->workspace, "loud", "host", REPLAY_SCRIPT, &error);
  g_assert_no_error (error);
  ref.connection = connection;
  ref.path = loud;
  if (!paddock_test_wait_for (output_has_last_marker, &ref, TIMEOUT_MS))
    g_error ("the session did not print its 3 MiB");

  /* Open its terminal in a window made now, so that nothing of it was
   * attached before (the first window may show it in passing while its
   * sidebar changes): the replay runs, its progress shown. */
  assert_shows_sessions (window, "sessions", 2);
  first_window = window;
  window = NULL;
  g_action_group_activate_action (G_ACTION_GROUP (app), "new-window", NULL);
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL; l = l->next)
    if (PADDOCK_IS_WINDOW (l->data) && l->data != first_window)
      window = l->data;
  g_assert_nonnull (window);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 760);
  assert_shows_sessions (window, "sessions", 2);
  paddock_ui_select_session (window, loud);
  paddock_ui_show_view (window, "terminal");
  /* Generous: under the sanitizers on a loaded machine, making the view
   * and attaching alone can take most of TIMEOUT_MS. */
  if (!paddock_test_wait_for (terminal_replaying, window, 4 * TIMEOUT_MS))
    {
      PaddockSessionItem *item = paddock_session_view_get_item (paddock_ui_current_session_view (window));

      g_error ("the terminal did not start replaying (attached: %d; the view's session %s, its cached "
               "OutputOffset %" G_GUINT64_FORMAT ")",
               paddock_terminal_view_is_attached (current_terminal_view (window)),
               paddock_session_item_get_object_path (item),
               paddock_session_item_get_proxy (item) != NULL
                 ? paddock_ipc_session1_get_output_offset (paddock_session_item_get_proxy (item)) : 0);
    }
  {
    GtkRevealer *revealer = GTK_REVEALER (gtk_widget_get_template_child (GTK_WIDGET (current_terminal_view (window)),
                                                                         PADDOCK_TYPE_TERMINAL_VIEW,
                                                                         "replay_revealer"));
    GtkLabel *label = GTK_LABEL (gtk_widget_get_template_child (GTK_WIDGET (current_terminal_view (window)),
                                                                PADDOCK_TYPE_TERMINAL_VIEW, "replay_label"));

    g_assert_true (gtk_revealer_get_reveal_child (revealer));
    g_assert_true (g_str_has_prefix (gtk_label_get_label (label), "Replaying output…"));
    paddock_ui_save_screenshot (GTK_WINDOW (window), "sessions-terminal-replay");

    if (!paddock_test_wait_for (terminal_replayed, window, 4 * TIMEOUT_MS))
      g_error ("the replay did not finish");
    g_assert_false (gtk_revealer_get_reveal_child (revealer));
  }

  /* Live output after it. */
  send_input (connection, loud, "after\n");
  assert_terminal_shows (window, "live-after");

  /* Everything is in VTE, once each, in order. */
  text = terminal_all_text (current_terminal (window));
  first = strstr (text, "replay-first-42");
  filler_1 = strstr (text, "filler line 1 of the replay");
  filler_n = strstr (text, last_filler);
  last = strstr (text, "replay-last-53");
  live = strstr (text, "live-after");
  g_assert_nonnull (first);
  g_assert_nonnull (filler_1);
  g_assert_nonnull (filler_n);
  g_assert_nonnull (last);
  g_assert_nonnull (live);
  g_assert_true (first < filler_1 && filler_1 < filler_n && filler_n < last && last < live);
  g_assert_cmpuint (count_of (text, "replay-first-42"), ==, 1);
  g_assert_cmpuint (count_of (text, "replay-last-53"), ==, 1);
  g_assert_cmpuint (count_of (text, " of the replay, about"), ==, REPLAY_LINES);

  /* The agent exits by itself: a toast says so, with its status. */
  send_input (connection, loud, "bye\n");
  paddock_ui_assert_toast (window, "“loud” exited with status 7");

  g_variant_unref (paddock_ui_destroy_session (connection, loud));
  g_variant_unref (paddock_ui_destroy_session (connection, quiet));
  assert_shows_sessions (window, "no-sessions", 0);

  gtk_window_destroy (GTK_WINDOW (window));
  gtk_window_destroy (GTK_WINDOW (first_window));
  fixture->ran = TRUE;
}

/* The Safety page's profile badge, for each profile that can run here:
 * its text, its look (a CSS class each) and its accessible name. */
static GtkLabel *
profile_badge (PaddockWindow *window)
{
  return GTK_LABEL (gtk_widget_get_template_child (GTK_WIDGET (current_safety_view (window)),
                                                   PADDOCK_TYPE_SAFETY_VIEW, "profile_badge"));
}

static gboolean
boundary_is (gpointer data)
{
  PaddockWindow *window = ((gpointer *)data)[0];
  const char *status = ((gpointer *)data)[1];
  PaddockSessionItem *item = paddock_session_view_get_item (paddock_ui_current_session_view (window));

  return g_strcmp0 (paddock_session_item_get_boundary_status (item), status) == 0;
}

static void
safety_badge_cb (GApplication     *app,
                 PaddockUiFixture *fixture)
{
  static const struct {
    const char *profile;
    const char *boundary;     /* what the daemon must report for it */
    const char *label;
    const char *css_class;
    const char *accessible;
  } expected[] = {
    { "host", "unenforced", "Host · No Isolation", "host", "Profile: host, no isolation" },
    { "safe", "enforced", "Safe", "safe", "Profile: safe" },
    { "strict", "enforced", "Strict", "strict", "Profile: strict, every layer verified enforced" },
  };
  static const char * const looks[] = { "host", "safe", "strict", "strict-unverified" };
  GDBusConnection *connection = paddock_test_daemon_get_connection (fixture->daemon);
  PaddockWindow *window = paddock_ui_fixture_window (app);
  guint n_shown = 0;

  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *path = paddock_ui_create_session (connection, fixture->workspace, expected[i].profile,
                                                         expected[i].profile, "exec sleep 300", &error);
      g_autofree char *screenshot = NULL;
      gpointer data[] = { window, (gpointer)expected[i].boundary };
      GtkLabel *badge;

      if (path == NULL)
        {
          /* Only the sandboxed profiles may be refused, for a reason. */
          g_assert_cmpstr (expected[i].profile, !=, "host");
          g_assert_true (g_dbus_error_is_remote_error (error));
          g_test_message ("the %s profile cannot run here: %s", expected[i].profile, error->message);
          continue;
        }

      assert_shows_sessions (window, "sessions", 1);
      paddock_ui_select_session (window, path);
      paddock_ui_show_view (window, "safety");
      if (!paddock_test_wait_for (boundary_is, data, TIMEOUT_MS))
        g_error ("the %s session's boundary is not %s", expected[i].profile, expected[i].boundary);
      paddock_ui_settle (100);

      badge = profile_badge (window);
      g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (badge)));
      g_assert_cmpstr (gtk_label_get_label (badge), ==, expected[i].label);
      for (guint j = 0; j < G_N_ELEMENTS (looks); j++)
        g_assert_cmpint (gtk_widget_has_css_class (GTK_WIDGET (badge), looks[j]), ==,
                         g_str_equal (looks[j], expected[i].css_class));
      {
        g_autofree char *wrong = gtk_test_accessible_check_property (GTK_ACCESSIBLE (badge),
                                                                     GTK_ACCESSIBLE_PROPERTY_LABEL,
                                                                     expected[i].accessible);

        if (wrong != NULL)
          g_error ("the badge's accessible name: %s", wrong);
      }
      /* What the agent can reach, in words. */
      {
        PaddockSafetyView *view = current_safety_view (window);
        const char *workspace = adw_action_row_get_subtitle (ADW_ACTION_ROW (gtk_widget_get_template_child (
          GTK_WIDGET (view), PADDOCK_TYPE_SAFETY_VIEW, "workspace_row")));
        const char *home = adw_action_row_get_subtitle (ADW_ACTION_ROW (gtk_widget_get_template_child (
          GTK_WIDGET (view), PADDOCK_TYPE_SAFETY_VIEW, "home_row")));
        const char *network = adw_action_row_get_subtitle (ADW_ACTION_ROW (gtk_widget_get_template_child (
          GTK_WIDGET (view), PADDOCK_TYPE_SAFETY_VIEW, "network_row")));

        g_assert_true (g_str_has_prefix (workspace, fixture->workspace));
        g_assert_nonnull (strstr (workspace, g_str_equal (expected[i].profile, "host")
                                               ? "Writes go straight to the folder"
                                               : "Writes are staged for your review"));
        if (g_str_equal (expected[i].profile, "host"))
          g_assert_cmpstr (home, ==, "All of them: the host profile sees your whole home");
        else
          g_assert_cmpstr (home, !=, "Not known yet");
        g_assert_cmpstr (network, ==, paddock_session_item_describe_network_mode ("host"));
        g_assert_cmpstr (network, ==, "Your own network, unrestricted and unrecorded");
      }
      screenshot = g_strdup_printf ("safety-badge-%s", expected[i].profile);
      paddock_ui_save_screenshot (GTK_WINDOW (window), screenshot);
      n_shown++;

      g_variant_unref (paddock_ui_destroy_session (connection, path));
      assert_shows_sessions (window, "no-sessions", 0);
    }

  g_assert_cmpuint (n_shown, >=, 1);
  gtk_window_destroy (GTK_WINDOW (window));
  fixture->ran = TRUE;
}

static void
test_safety_badge (void)
{
  paddock_ui_run_app (G_CALLBACK (safety_badge_cb), NULL);
}

static void
test_terminal_replay (void)
{
  paddock_ui_run_app (G_CALLBACK (terminal_replay_cb), NULL);
}

static gboolean
window_gone (gpointer data)
{
  return *(gpointer *)data == NULL;
}

/* Several windows show the same session, each its own terminal attached;
 * closing one window leaves the session running and the other window
 * attached. */
static void
two_windows_cb (GApplication     *app,
                PaddockUiFixture *fixture)
{
  GDBusConnection *connection = paddock_test_daemon_get_connection (fixture->daemon);
  PaddockWindow *first = paddock_ui_fixture_window (app);
  PaddockWindow *second = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GVariant) state = NULL;
  gpointer first_alive = first;

  path = paddock_ui_create_session_argv (connection, fixture->workspace, "shared", "host", bash_argv, &error);
  g_assert_no_error (error);
  assert_shows_sessions (first, "sessions", 1);
  g_assert_true (paddock_test_wait_for (terminal_attached, first, TIMEOUT_MS));

  /* A second window (app.new-window, Ctrl+Shift+N) shows it too. */
  g_action_group_activate_action (G_ACTION_GROUP (app), "new-window", NULL);
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL; l = l->next)
    if (PADDOCK_IS_WINDOW (l->data) && l->data != first)
      second = l->data;
  g_assert_nonnull (second);
  gtk_window_set_default_size (GTK_WINDOW (second), 1280, 760);
  assert_shows_sessions (second, "sessions", 1);
  g_assert_true (paddock_test_wait_for (terminal_attached, second, TIMEOUT_MS));

  send_input (connection, path, "echo both-$((2*4))\n");
  assert_terminal_shows (first, "both-8");
  assert_terminal_shows (second, "both-8");
  paddock_ui_save_screenshot (GTK_WINDOW (second), "sessions-second-window");

  /* Closing a window never stops the session. */
  g_object_add_weak_pointer (G_OBJECT (first), &first_alive);
  gtk_window_close (GTK_WINDOW (first));
  g_assert_true (paddock_test_wait_for (window_gone, &first_alive, TIMEOUT_MS));
  paddock_ui_settle (500);
  state = paddock_test_session_property (connection, path, "State");
  g_assert_cmpstr (g_variant_get_string (state, NULL), ==, "running");
  g_assert_true (terminal_attached (second));
  send_input (connection, path, "echo still-$((3+4))\n");
  assert_terminal_shows (second, "still-7");

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (second), "win.destroy-session", NULL));
  paddock_ui_answer_dialog (NULL, "destroy");
  paddock_ui_assert_toast (second, "Session destroyed: 0 processes left");
  assert_shows_sessions (second, "no-sessions", 0);

  gtk_window_destroy (GTK_WINDOW (second));
  fixture->ran = TRUE;
}

static void
test_two_windows (void)
{
  paddock_ui_run_app (G_CALLBACK (two_windows_cb), NULL);
}

static void
test_terminal_and_destroy (void)
{
  paddock_ui_run_app (G_CALLBACK (terminal_and_destroy_cb), NULL);
}

static void
test_changes (void)
{
  paddock_ui_run_app (G_CALLBACK (changes_cb), "the safe profile is not enforced here (NotEnforced)");
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

  g_test_add_func ("/ui/sessions/terminal-and-destroy", test_terminal_and_destroy);
  g_test_add_func ("/ui/sessions/changes", test_changes);
  g_test_add_func ("/ui/sessions/terminal-replay", test_terminal_replay);
  g_test_add_func ("/ui/sessions/safety-badge", test_safety_badge);
  g_test_add_func ("/ui/sessions/two-windows", test_two_windows);

  return g_test_run ();
}
