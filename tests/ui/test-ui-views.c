/* test-ui-views.c — the processes, ports and network views of a session, under Xvfb
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <gio/gunixfdlist.h>
#include <string.h>
#include <unistd.h>

#include "paddock-change-item.h"
#include "paddock-changes-view.h"
#include "paddock-client.h"
#include "paddock-lease-item.h"
#include "paddock-new-session-dialog.h"
#include "paddock-network-record.h"
#include "paddock-network-view.h"
#include "paddock-ports-view.h"
#include "paddock-process-item.h"
#include "paddock-processes-view.h"
#include "paddock-session-item.h"
#include "paddock-test-client.h"
#include "paddock-ui-test.h"
#include "paddock-visible-text.h"

/* Processes ---------------------------------------------------------------- */

static GVariant *
process_rows (const char *text)
{
  g_autoptr(GError) error = NULL;
  GVariant *rows = g_variant_parse (G_VARIANT_TYPE ("a(uusss)"), text, NULL, NULL, &error);

  g_assert_no_error (error);
  return rows;  /* g_variant_parse gives a full, non-floating reference */
}

static PaddockProcessItem *
child_at (GListModel *model,
          guint       position)
{
  g_assert_cmpuint (position, <, g_list_model_get_n_items (model));
  return PADDOCK_PROCESS_ITEM (g_list_model_get_item (model, position));
}

/* The tree the rows make, without a daemon: parents, reuse of a pid, and
 * items that survive a refresh (selection and expansion stay put). */
static void
test_processes_tree (void)
{
  GtkWidget *window = gtk_window_new ();
  PaddockProcessesView *view = PADDOCK_PROCESSES_VIEW (paddock_processes_view_new ());
  g_autoptr(GVariant) first = process_rows ("[(uint32 10, uint32 5, 'S', 'sh', 'sh -c agent'),"
                                            " (11, 10, 'S', 'sleep', 'sleep 300'),"
                                            " (12, 10, 'R', 'node', 'node server.js'),"
                                            " (13, 12, 'S', 'esbuild', 'esbuild --watch')]");
  g_autoptr(GVariant) second = process_rows ("[(uint32 10, uint32 5, 'S', 'sh', 'sh -c agent'),"
                                             " (11, 12, 'Z', 'cc', ''),"
                                             " (12, 10, 'S', 'node', 'node server.js')]");
  g_autoptr(PaddockProcessItem) root = NULL;
  g_autoptr(PaddockProcessItem) node = NULL;
  g_autoptr(PaddockProcessItem) node_again = NULL;
  g_autoptr(PaddockProcessItem) reused = NULL;
  GListModel *roots;
  GtkSingleSelection *selection;

  gtk_window_set_default_size (GTK_WINDOW (window), 900, 420);
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (view));
  gtk_window_present (GTK_WINDOW (window));

  g_assert_cmpstr (paddock_processes_view_get_page (view), ==, "empty");
  paddock_processes_view_set_processes (view, first);
  g_assert_cmpstr (paddock_processes_view_get_page (view), ==, "processes");

  /* One root (its parent is not the session's), two children, one grandchild;
   * every row open. */
  roots = paddock_processes_view_get_roots (view);
  g_assert_cmpuint (g_list_model_get_n_items (roots), ==, 1);
  root = child_at (roots, 0);
  g_assert_cmpuint (paddock_process_item_get_pid (root), ==, 10);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (paddock_process_item_get_children (root))), ==, 2);
  node = child_at (G_LIST_MODEL (paddock_process_item_get_children (root)), 1);
  g_assert_cmpstr (paddock_process_item_get_name (node), ==, "node");
  g_assert_cmpstr (paddock_process_item_get_state_label (node), ==, "Running");
  selection = paddock_processes_view_get_selection (view);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (selection)), ==, 4);

  /* Nothing selected: nothing to kill. */
  g_assert_false (gtk_widget_activate_action (GTK_WIDGET (view), "processes.kill", NULL) &&
                  paddock_processes_view_get_kill_dialog (view) != NULL);
  g_assert_true (paddock_processes_view_select_pid (view, 12));
  paddock_ui_save_screenshot (GTK_WINDOW (window), "processes-tree");

  /* A refresh: 13 ended, 12 sleeps now, and pid 11 was reused by a child of
   * 12 — another process, so another item. */
  paddock_processes_view_set_processes (view, second);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (selection)), ==, 3);
  node_again = child_at (G_LIST_MODEL (paddock_process_item_get_children (root)), 0);
  g_assert_true (node_again == node);
  g_assert_cmpstr (paddock_process_item_get_state_label (node), ==, "Sleeping");
  reused = child_at (G_LIST_MODEL (paddock_process_item_get_children (node)), 0);
  g_assert_cmpuint (paddock_process_item_get_pid (reused), ==, 11);
  g_assert_cmpstr (paddock_process_item_get_state_label (reused), ==, "Zombie");
  /* The selection stayed on the same process. */
  {
    GtkTreeListRow *row = gtk_single_selection_get_selected_item (selection);
    g_autoptr(PaddockProcessItem) selected = NULL;

    g_assert_nonnull (row);
    selected = gtk_tree_list_row_get_item (row);
    g_assert_true (selected == node);
  }

  gtk_window_destroy (GTK_WINDOW (window));
}

/* The view of the session shown now: the window may make the session's
 * views again when the daemon's list is reloaded. */
static PaddockProcessesView *
current_processes_view (PaddockWindow *window)
{
  paddock_ui_show_view (window, "processes");
  return PADDOCK_PROCESSES_VIEW (paddock_ui_session_view_child (window, "processes_view"));
}

static gboolean
shows_process (gpointer data)
{
  PaddockProcessesView *view = current_processes_view (((gpointer *)data)[0]);
  const char *command_line = ((gpointer *)data)[1];
  gboolean wanted = GPOINTER_TO_INT (((gpointer *)data)[2]);
  GListModel *rows = G_LIST_MODEL (paddock_processes_view_get_selection (view));
  gboolean found = FALSE;

  for (guint i = 0; i < g_list_model_get_n_items (rows) && !found; i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (rows, i);
      g_autoptr(PaddockProcessItem) process = gtk_tree_list_row_get_item (row);

      found = g_strcmp0 (paddock_process_item_get_command_line (process), command_line) == 0;
    }
  return found == wanted;
}

static guint
find_pid (PaddockProcessesView *view,
          const char           *command_line)
{
  GListModel *rows = G_LIST_MODEL (paddock_processes_view_get_selection (view));

  for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (rows, i);
      g_autoptr(PaddockProcessItem) process = gtk_tree_list_row_get_item (row);

      if (g_strcmp0 (paddock_process_item_get_command_line (process), command_line) == 0)
        return paddock_process_item_get_pid (process);
    }
  return 0;
}

static void
wait_for_process (PaddockWindow *window,
                  const char    *command_line,
                  gboolean       shown)
{
  gpointer data[] = { window, (gpointer) command_line, GINT_TO_POINTER (shown) };

  if (!paddock_test_wait_for (shows_process, data, PADDOCK_UI_TIMEOUT_MS))
    {
      PaddockProcessesView *view = current_processes_view (window);
      GListModel *rows = G_LIST_MODEL (paddock_processes_view_get_selection (view));
      g_autoptr(GString) listed = g_string_new (NULL);

      for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
        {
          g_autoptr(GtkTreeListRow) row = g_list_model_get_item (rows, i);
          g_autoptr(PaddockProcessItem) process = gtk_tree_list_row_get_item (row);

          g_string_append_printf (listed, "\n  %u %s", paddock_process_item_get_pid (process),
                                  paddock_process_item_get_command_line (process));
        }
      g_error ("the Processes view %s “%s” (page %s); it lists:%s", shown ? "does not show" : "still shows",
               command_line, paddock_processes_view_get_page (view), listed->str);
    }
}

/* Against the daemon: the session's real processes appear, and killing
 * one (confirmed) ends that one. */
static void
processes_cb (GApplication     *app,
              PaddockUiFixture *fixture)
{
  GDBusConnection *connection = paddock_test_daemon_get_connection (fixture->daemon);
  PaddockWindow *window = paddock_ui_fixture_window (app);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GVariant) result = NULL;
  g_autofree char *toast = NULL;
  PaddockProcessesView *view;
  guint pid;

  path = paddock_ui_create_session (connection, fixture->workspace, "sleepers", "host",
                                    "sleep 311 & sleep 312 & wait", &error);
  g_assert_no_error (error);
  paddock_ui_wait_for_sessions (window, 1);
  wait_for_process (window, "sleep 311", TRUE);
  wait_for_process (window, "sleep 312", TRUE);
  view = current_processes_view (window);
  paddock_ui_save_screenshot (GTK_WINDOW (window), "processes");
  paddock_ui_assert_controls_named (GTK_WIDGET (window));

  pid = find_pid (view, "sleep 311");
  g_assert_cmpuint (pid, !=, 0);
  g_assert_true (paddock_processes_view_select_pid (view, pid));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (view), "processes.kill", NULL));
  paddock_ui_answer_dialog ("processes-kill", "kill");

  wait_for_process (window, "sleep 311", FALSE);
  view = current_processes_view (window);
  toast = g_strdup_printf ("Process %u signalled", pid);
  paddock_ui_assert_toast (window, toast);
  /* The other one was not touched. */
  g_assert_cmpuint (find_pid (view, "sleep 312"), !=, 0);

  result = paddock_ui_destroy_session (connection, path);
  {
    guint32 survivors = 99;

    g_assert_true (g_variant_lookup (result, "survivors", "u", &survivors));
    g_assert_cmpuint (survivors, ==, 0);
  }
  paddock_ui_wait_for_sessions (window, 0);
  gtk_window_destroy (GTK_WINDOW (window));
  fixture->ran = TRUE;
}

static void
test_processes_live (void)
{
  paddock_ui_run_app (G_CALLBACK (processes_cb), NULL);
}

/* Ports ---------------------------------------------------------------------- */

static gboolean
network_view_answered (gpointer data)
{
  return paddock_network_view_is_loaded (PADDOCK_NETWORK_VIEW (data));
}

/* Leases a port through Ports1, as a script would, not through the app;
 * tied to @session when given. Returns the port; the daemon keeps the
 * socket, ours is closed. */
static guint16
lease_port (GDBusConnection *connection,
            const char      *name,
            const char      *session)
{
  g_autoptr(GVariant) lease = NULL;
  g_autoptr(GError) error = NULL;
  GVariantDict options;
  guint16 port = 0;

  g_variant_dict_init (&options, NULL);
  if (session != NULL)
    g_variant_dict_insert (&options, "session", "s", session);
  /* A NULL out_fd: the library closes our end of the socket. */
  lease = paddock_test_lease (connection, name, 0, g_variant_dict_end (&options), NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_variant_lookup (lease, "port", "q", &port));
  return port;
}

static GListModel *
current_ports_model (PaddockWindow *window)
{
  paddock_ui_show_view (window, "ports");
  return paddock_ports_view_get_model (PADDOCK_PORTS_VIEW (paddock_ui_session_view_child (window, "ports_view")));
}

static gboolean
ports_page_has_n (gpointer data)
{
  GListModel *model = current_ports_model (((gpointer *)data)[0]);
  guint n = GPOINTER_TO_UINT (((gpointer *)data)[1]);

  return model != NULL && g_list_model_get_n_items (model) == n;
}

/* A session's Ports page lists the leases tied to it, not the others, and
 * copies their address. */
static void
ports_cb (GApplication     *app,
          PaddockUiFixture *fixture)
{
  GDBusConnection *connection = paddock_test_daemon_get_connection (fixture->daemon);
  PaddockWindow *window = paddock_ui_fixture_window (app);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GVariant) result = NULL;
  g_autofree char *toast = NULL;
  g_autofree char *id = NULL;
  PaddockPortsView *view;
  GListModel *model;
  guint16 port;

  path = paddock_ui_create_session (connection, fixture->workspace, "web app", "host", "exec sleep 300", &error);
  g_assert_no_error (error);
  id = g_path_get_basename (path);
  paddock_ui_wait_for_sessions (window, 1);
  {
    gpointer data[] = { window, GUINT_TO_POINTER (0) };

    g_assert_true (paddock_test_wait_for (ports_page_has_n, data, PADDOCK_UI_TIMEOUT_MS));
  }
  paddock_ui_save_screenshot (GTK_WINDOW (window), "session-ports-empty");

  /* One lease of the session, one of nobody's session. */
  port = lease_port (connection, "web", id);
  (void) lease_port (connection, "elsewhere", NULL);
  {
    gpointer data[] = { window, GUINT_TO_POINTER (1) };

    g_assert_true (paddock_test_wait_for (ports_page_has_n, data, PADDOCK_UI_TIMEOUT_MS));
  }
  view = PADDOCK_PORTS_VIEW (paddock_ui_session_view_child (window, "ports_view"));
  model = paddock_ports_view_get_model (view);
  {
    g_autoptr(PaddockLeaseItem) lease = g_list_model_get_item (model, 0);

    g_assert_cmpuint (paddock_lease_item_get_port (lease), ==, port);
    g_assert_cmpstr (paddock_lease_item_get_name (lease), ==, "web");
    g_assert_cmpstr (paddock_lease_item_get_session (lease), ==, id);
  }
  paddock_ui_save_screenshot (GTK_WINDOW (window), "session-ports");
  paddock_ui_assert_controls_named (GTK_WIDGET (window));

  /* Copy URL: the address lands on the clipboard (and a toast says so). */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (view), "ports.copy-address", "q", port));
  toast = g_strdup_printf ("Copied http://127.0.0.1:%u", (guint) port);
  paddock_ui_assert_toast (window, toast);

  /* The Network page answers from the daemon's records (this session's
   * network is the host's: none, and the page says so). */
  paddock_ui_show_view (window, "network");
  {
    PaddockNetworkView *network = PADDOCK_NETWORK_VIEW (paddock_ui_session_view_child (window, "network_view"));

    g_assert_true (paddock_test_wait_for (network_view_answered, network, PADDOCK_UI_TIMEOUT_MS));
    g_assert_cmpstr (paddock_network_view_get_page (network), ==, "network");
    paddock_ui_save_screenshot (GTK_WINDOW (window), "network-live");
  }

  /* Destroying the session releases its lease: the page empties. */
  result = paddock_ui_destroy_session (connection, path);
  paddock_ui_wait_for_sessions (window, 0);
  gtk_window_destroy (GTK_WINDOW (window));
  fixture->ran = TRUE;
}

static void
test_ports (void)
{
  paddock_ui_run_app (G_CALLBACK (ports_cb), NULL);
}

/* Changes: what the agent wrote, shown ------------------------------------------- */

/* A staged file whose lines would hide one another on a terminal (cursor
 * up, erase line), clear it, reorder text (U+202E) and break a line with
 * \r, under a name that does the same. */
#define TRICK_SCRIPT \
  "printf '+shown\\n\\033[1A\\033[2Khidden\\n\\033[2Jrtl:\\342\\200\\256evil\\342\\200\\254" \
  " cr:safe\\rEVIL\\n' > trick.txt; " \
  "printf 'x\\n' > \"$(printf 'name\\342\\200\\256\\033[2Jtxt.sh')\"; exec sleep 300"

static PaddockChangeItem *
find_change (PaddockChangesView *view,
             const char         *prefix,
             guint              *out_position)
{
  GListModel *changes = paddock_changes_view_get_model (view);

  for (guint i = 0; i < g_list_model_get_n_items (changes); i++)
    {
      g_autoptr(PaddockChangeItem) change = g_list_model_get_item (changes, i);

      if (g_str_has_prefix (paddock_change_item_get_path (change), prefix))
        {
          if (out_position != NULL)
            *out_position = i;
          return g_steal_pointer (&change);
        }
    }
  return NULL;
}

static gboolean
both_changes_listed (gpointer data)
{
  return g_list_model_get_n_items (paddock_changes_view_get_model (PADDOCK_CHANGES_VIEW (data))) >= 2;
}

static GtkTextBuffer *
diff_buffer (PaddockChangesView *view)
{
  return gtk_text_view_get_buffer (GTK_TEXT_VIEW (gtk_widget_get_template_child (GTK_WIDGET (view),
                                                                                 PADDOCK_TYPE_CHANGES_VIEW,
                                                                                 "diff_view")));
}

static char *
dup_buffer_text (GtkTextBuffer *buffer)
{
  GtkTextIter start, end;

  gtk_text_buffer_get_bounds (buffer, &start, &end);
  return gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
}

static gboolean
trick_diff_shown (gpointer data)
{
  g_autofree char *text = dup_buffer_text (diff_buffer (PADDOCK_CHANGES_VIEW (data)));

  return strstr (text, "hidden") != NULL;
}

/* The character at the first @needle of @buffer carries the highlight. */
static gboolean
highlighted_at (GtkTextBuffer *buffer,
                const char    *needle)
{
  GtkTextIter start, match;
  GtkTextTag *tag = gtk_text_tag_table_lookup (gtk_text_buffer_get_tag_table (buffer), PADDOCK_VISIBLE_TEXT_TAG);

  gtk_text_buffer_get_start_iter (buffer, &start);
  g_assert_true (gtk_text_iter_forward_search (&start, needle, 0, &match, NULL, NULL));
  return tag != NULL && gtk_text_iter_has_tag (&match, tag);
}

static void
changes_visible_cb (GApplication     *app,
                    PaddockUiFixture *fixture)
{
  GDBusConnection *connection = paddock_test_daemon_get_connection (fixture->daemon);
  PaddockWindow *window = paddock_ui_fixture_window (app);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) result = NULL;
  g_autoptr(PaddockChangeItem) trick = NULL;
  g_autoptr(PaddockChangeItem) named = NULL;
  g_autofree char *path = NULL;
  g_autofree char *remote = NULL;
  g_autofree char *text = NULL;
  g_autofree char *label = NULL;
  PaddockChangesView *view;
  GtkTextBuffer *buffer;
  GtkTextIter start, match;
  guint position = 0;

  path = paddock_ui_create_session (connection, fixture->workspace, "tricky", "safe", TRICK_SCRIPT, &error);
  if (error != NULL)
    remote = g_dbus_error_get_remote_error (error);
  if (g_strcmp0 (remote, "org.paddock.Error.NotEnforced") == 0)
    {
      g_test_message ("no sandbox here: %s", error->message);
      fixture->skipped = TRUE;
      fixture->ran = TRUE;
      gtk_window_destroy (GTK_WINDOW (window));
      return;
    }
  g_assert_no_error (error);

  paddock_ui_wait_for_sessions (window, 1);
  paddock_ui_show_view (window, "changes");
  view = PADDOCK_CHANGES_VIEW (paddock_ui_session_view_child (window, "changes_view"));
  if (!paddock_test_wait_for (both_changes_listed, view, PADDOCK_UI_TIMEOUT_MS))
    g_error ("the Changes view lists %u changes after %d ms, not 2",
             g_list_model_get_n_items (paddock_changes_view_get_model (view)), PADDOCK_UI_TIMEOUT_MS);

  /* The name: its ESC and U+202E as pictures, on one line. */
  named = find_change (view, "name", NULL);
  g_assert_nonnull (named);
  label = paddock_change_item_dup_display_path (named);
  g_assert_cmpstr (label, ==, "name<U+202E>^[[2Jtxt.sh");

  /* The diff: every control and invisible character a picture, each
   * highlighted; nothing left that reorders or breaks a line. */
  trick = find_change (view, "trick.txt", &position);
  g_assert_nonnull (trick);
  gtk_selection_model_select_item (GTK_SELECTION_MODEL (gtk_widget_get_template_child (GTK_WIDGET (view),
                                                                                       PADDOCK_TYPE_CHANGES_VIEW,
                                                                                       "selection")),
                                   position, TRUE);
  if (!paddock_test_wait_for (trick_diff_shown, view, PADDOCK_UI_TIMEOUT_MS))
    g_error ("the diff of trick.txt is not shown after %d ms", PADDOCK_UI_TIMEOUT_MS);
  buffer = diff_buffer (view);
  text = dup_buffer_text (buffer);
  g_test_message ("diff shown: %s", text);
  g_assert_nonnull (strstr (text, "+^[[1A^[[2Khidden\n"));
  g_assert_nonnull (strstr (text, "+^[[2Jrtl:<U+202E>evil<U+202C> cr:safe^MEVIL\n"));
  g_assert_null (strchr (text, '\033'));
  g_assert_null (strchr (text, '\r'));
  g_assert_null (strstr (text, "\u202e"));
  g_assert_true (highlighted_at (buffer, "^[[2J"));
  g_assert_true (highlighted_at (buffer, "<U+202E>"));
  g_assert_true (highlighted_at (buffer, "^M"));
  g_assert_false (highlighted_at (buffer, "hidden"));

  /* The \r did not start a line of its own: the line with it is one line
   * of the diff, starting with its +. */
  gtk_text_buffer_get_start_iter (buffer, &start);
  g_assert_true (gtk_text_iter_forward_search (&start, "EVIL", 0, &match, NULL, NULL));
  gtk_text_iter_set_line_offset (&match, 0);
  g_assert_cmpint (gtk_text_iter_get_char (&match), ==, '+');
  paddock_ui_save_screenshot (GTK_WINDOW (window), "changes-visible-controls");

  result = paddock_ui_destroy_session (connection, path);
  paddock_ui_wait_for_sessions (window, 0);
  gtk_window_destroy (GTK_WINDOW (window));
  fixture->ran = TRUE;
}

static void
test_changes_visible (void)
{
  paddock_ui_run_app (G_CALLBACK (changes_visible_cb),
                      "the safe profile cannot run here (NotEnforced): nothing is staged");
}

/* Network -------------------------------------------------------------------- */

/* The agent asks the session's proxy for a name nobody allowed: the daemon
 * answers 403 and records it, and the Network page shows that record. */
#define DENIED_REQUEST_SCRIPT \
  "python3 -c 'import urllib.request as u\n" \
  "try:\n    u.urlopen(\"http://denied.test/\", timeout=10)\n" \
  "except Exception as e:\n    print(\"answered:\", e)'; exec sleep 300"

static gboolean
shows_denied_record (gpointer data)
{
  GListModel *records = paddock_network_view_get_shown (PADDOCK_NETWORK_VIEW (data));

  for (guint i = 0; i < g_list_model_get_n_items (records); i++)
    {
      g_autoptr(PaddockNetworkRecord) record = g_list_model_get_item (records, i);

      if (g_strcmp0 (paddock_network_record_get_host (record), "denied.test") == 0 &&
          g_strcmp0 (paddock_network_record_get_verdict (record), "denied") == 0 &&
          paddock_network_record_get_port (record) == 80)
        return TRUE;
    }
  return FALSE;
}

/* Whether the daemon's allowlist of the session has a domain. */
static gboolean
daemon_allows (gpointer data)
{
  GDBusConnection *connection = ((gpointer *) data)[0];
  g_autoptr(PaddockIpcSession1) session = paddock_test_session (connection, ((gpointer *) data)[1]);
  g_autoptr(GVariant) value = NULL;
  g_autofree const char **domains = NULL;

  /* Not answered yet: asked again on the next poll. */
  value = paddock_test_read_property (G_DBUS_PROXY (session), "AllowedDomains", NULL);
  if (value == NULL)
    return FALSE;
  domains = g_variant_get_strv (value, NULL);
  return g_strv_contains (domains, ((gpointer *) data)[2]);
}

/* The session's leases in the daemon (Ports1.ListLeases). */
static guint
count_session_leases (GDBusConnection *connection,
                      const char      *session)
{
  g_autoptr(GVariant) leases = paddock_test_list_leases (connection);
  guint n = 0;

  for (gsize i = 0; i < g_variant_n_children (leases); i++)
    {
      g_autoptr(GVariant) lease = g_variant_get_child_value (leases, i);
      const char *owner_session = NULL;

      if (g_variant_lookup (lease, "session", "&s", &owner_session) && g_strcmp0 (owner_session, session) == 0)
        n++;
    }
  return n;
}

/* Counts the shown (mapped) state pills saying @text and Open buttons. */
static void
count_port_rows (GtkWidget  *widget,
                 const char *text,
                 guint      *n_state,
                 guint      *n_buttons)
{
  if (!gtk_widget_get_mapped (widget))
    return;
  if (GTK_IS_LABEL (widget) && gtk_widget_has_css_class (widget, "lease-state") &&
      g_strcmp0 (gtk_label_get_text (GTK_LABEL (widget)), text) == 0)
    (*n_state)++;
  if (GTK_IS_ACTIONABLE (widget) &&
      g_strcmp0 (gtk_actionable_get_action_name (GTK_ACTIONABLE (widget)), "ports.open-address") == 0)
    (*n_buttons)++;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    count_port_rows (child, text, n_state, n_buttons);
}

static gboolean
ports_badge_is_one (gpointer data)
{
  return adw_view_stack_page_get_badge_number (ADW_VIEW_STACK_PAGE (data)) == 1;
}

static void
network_live_cb (GApplication     *app,
                 PaddockUiFixture *fixture)
{
  GDBusConnection *connection = paddock_test_daemon_get_connection (fixture->daemon);
  PaddockWindow *window = paddock_ui_fixture_window (app);
  const char *argv[] = { "sh", "-c", DENIED_REQUEST_SCRIPT, NULL };
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *remote = NULL;
  PaddockNetworkView *network;
  GVariantDict options;

  g_variant_dict_init (&options, NULL);
  g_variant_dict_insert_value (&options, "workspace", g_variant_new_bytestring (fixture->workspace));
  g_variant_dict_insert_value (&options, "command", g_variant_new_bytestring_array (argv, -1));
  g_variant_dict_insert (&options, "profile", "s", "safe");
  g_variant_dict_insert (&options, "name", "s", "proxied");
  g_variant_dict_insert (&options, "net", "s", "proxy");
  reply = g_dbus_connection_call_sync (connection, PADDOCK_BUS_NAME, PADDOCK_OBJECT_PATH,
                                       "org.paddock.Manager1", "CreateSession",
                                       g_variant_new ("(@a{sv})", g_variant_dict_end (&options)),
                                       G_VARIANT_TYPE ("(o)"), G_DBUS_CALL_FLAGS_NO_AUTO_START,
                                       PADDOCK_UI_TIMEOUT_MS * 3, NULL, &error);
  if (error != NULL)
    remote = g_dbus_error_get_remote_error (error);
  if (g_strcmp0 (remote, "org.paddock.Error.NotEnforced") == 0)
    {
      g_test_message ("no sandbox here: %s", error->message);
      fixture->skipped = TRUE;
      fixture->ran = TRUE;
      gtk_window_destroy (GTK_WINDOW (window));
      return;
    }
  g_assert_no_error (error);
  g_variant_get (reply, "(o)", &path);

  paddock_ui_wait_for_sessions (window, 1);
  paddock_ui_show_view (window, "network");
  network = PADDOCK_NETWORK_VIEW (paddock_ui_session_view_child (window, "network_view"));
  if (!paddock_test_wait_for (shows_denied_record, network, PADDOCK_UI_TIMEOUT_MS))
    g_error ("the Network page shows no denied record for denied.test after %d ms", PADDOCK_UI_TIMEOUT_MS);
  g_assert_cmpstr (paddock_network_view_get_page (network), ==, "network");
  paddock_ui_save_screenshot (GTK_WINDOW (window), "network-proxy-live");

  /* The allowlist, edited from the page, is the daemon's: a domain typed
   * into Add Domain and applied reaches Session1.AllowedDomains. */
  {
    AdwEntryRow *add_row = ADW_ENTRY_ROW (gtk_widget_get_template_child (GTK_WIDGET (network), PADDOCK_TYPE_NETWORK_VIEW,
                                                                         "add_domain_row"));
    gpointer data[] = { connection, path, (gpointer) "denied.test" };

    gtk_editable_set_text (GTK_EDITABLE (add_row), "denied.test");
    g_signal_emit_by_name (add_row, "apply");
    if (!paddock_test_wait_for (daemon_allows, data, PADDOCK_UI_TIMEOUT_MS))
      g_error ("the daemon's allowlist does not have the domain added on the page");
  }

  /* A proxy session under Landlock's TCP rules reserves ports for
   * LeasePort: its Ports page lists them as reserved, with no address to
   * copy or open (nothing is forwarded to them yet). */
  {
    g_autofree char *id = g_path_get_basename (path);
    guint reserved = count_session_leases (connection, id);
    gpointer data[] = { window, GUINT_TO_POINTER (reserved) };
    guint n_state = 0;
    guint n_buttons = 0;

    if (reserved == 0)
      g_test_message ("no port reserved here (Landlock without TCP rules): reserved rows not checked");
    else
      {
        g_assert_true (paddock_test_wait_for (ports_page_has_n, data, PADDOCK_UI_TIMEOUT_MS));
        paddock_ui_settle (200);
        count_port_rows (GTK_WIDGET (paddock_ui_session_view_child (window, "ports_view")), "Reserved",
                         &n_state, &n_buttons);
        paddock_ui_save_screenshot (GTK_WINDOW (window), "session-ports-reserved");
        g_assert_cmpuint (n_state, ==, reserved);
        g_assert_cmpuint (n_buttons, ==, 0);

        /* The page's badge counts the ports a program can be reached at:
         * none while all are reserved, one once LeasePort names one. */
        {
          AdwViewStackPage *ports_page = ADW_VIEW_STACK_PAGE (
            gtk_widget_get_template_child (GTK_WIDGET (paddock_ui_current_session_view (window)),
                                           PADDOCK_TYPE_SESSION_VIEW, "ports_page"));
          g_autoptr(PaddockIpcSession1) session = paddock_test_session (connection, path);
          g_autoptr(GVariant) leased = NULL;

          g_assert_cmpuint (adw_view_stack_page_get_badge_number (ports_page), ==, 0);
          paddock_ipc_session1_call_lease_port_sync (session, "web", &leased, NULL, &error);
          g_assert_no_error (error);
          if (!paddock_test_wait_for (ports_badge_is_one, ports_page, PADDOCK_UI_TIMEOUT_MS))
            g_error ("the Ports page's badge is %u after LeasePort named a reserved port, not 1",
                     adw_view_stack_page_get_badge_number (ports_page));
        }
      }
  }

  result = paddock_ui_destroy_session (connection, path);
  paddock_ui_wait_for_sessions (window, 0);
  gtk_window_destroy (GTK_WINDOW (window));
  fixture->ran = TRUE;
}

static void
test_network_live (void)
{
  paddock_ui_run_app (G_CALLBACK (network_live_cb),
                      "the safe profile cannot run here (NotEnforced): no proxy session");
}

static GVariant *
network_records (const char *text)
{
  g_autoptr(GError) error = NULL;
  GVariant *records = g_variant_parse (G_VARIANT_TYPE ("aa{sv}"), text, NULL, NULL, &error);

  g_assert_no_error (error);
  return records;
}

static GtkToggleButton *
network_filter_button (PaddockNetworkView *view,
                       const char         *name)
{
  return GTK_TOGGLE_BUTTON (gtk_widget_get_template_child (GTK_WIDGET (view), PADDOCK_TYPE_NETWORK_VIEW, name));
}

/* Records fed through the model as the signal and the list would: newest
 * first, each shown once, filtered by verdict; the allowlist as rows. */
static void
test_network_records (void)
{
  GtkWidget *window = gtk_window_new ();
  PaddockNetworkView *view = PADDOCK_NETWORK_VIEW (paddock_network_view_new ());
  g_autoptr(GVariant) first = network_records (
    "[{'seq': <uint64 1>, 'time': <int64 1795000000000000>, 'method': <'CONNECT'>, 'host': <'api.github.com'>,"
    "  'port': <uint32 443>, 'verdict': <'allowed'>, 'bytes_up': <uint64 2048>, 'bytes_down': <uint64 183000>,"
    "  'duration_ms': <int64 412>},"
    " {'seq': <uint64 2>, 'time': <int64 1795000001000000>, 'method': <'GET'>, 'host': <'evil.example'>,"
    "  'port': <uint32 80>, 'verdict': <'denied'>, 'bytes_up': <uint64 0>, 'bytes_down': <uint64 0>,"
    "  'duration_ms': <int64 1>},"
    " {'seq': <uint64 3>, 'time': <int64 1795000002000000>, 'method': <'CONNECT'>, 'host': <'registry.npmjs.org'>,"
    "  'port': <uint32 443>, 'verdict': <'error'>, 'bytes_up': <uint64 517>, 'bytes_down': <uint64 0>,"
    "  'duration_ms': <int64 10003>}]");
  /* The signal repeating a record the list gave, then a new one. */
  g_autoptr(GVariant) again = network_records (
    "[{'seq': <uint64 3>, 'method': <'CONNECT'>, 'host': <'registry.npmjs.org'>, 'verdict': <'error'>},"
    " {'seq': <uint64 4>, 'time': <int64 1795000003000000>, 'method': <'GET'>, 'host': <'pypi.org'>,"
    "  'port': <uint32 443>, 'verdict': <'denied'>, 'duration_ms': <int64 2>}]");
  const char *domains[] = { "api.github.com", "*.npmjs.org", NULL };
  GListModel *shown = paddock_network_view_get_shown (view);
  GtkWidget *domains_list;

  gtk_window_set_default_size (GTK_WINDOW (window), 1000, 460);
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (view));
  gtk_window_present (GTK_WINDOW (window));

  g_assert_cmpuint (g_list_model_get_n_items (shown), ==, 0);
  paddock_network_view_add_records (view, first);
  paddock_network_view_add_records (view, again);
  g_assert_cmpuint (g_list_model_get_n_items (shown), ==, 4);
  {
    g_autoptr(PaddockNetworkRecord) newest = g_list_model_get_item (shown, 0);
    g_autoptr(PaddockNetworkRecord) oldest = g_list_model_get_item (shown, 3);

    g_assert_cmpstr (paddock_network_record_get_host (newest), ==, "pypi.org");
    g_assert_cmpuint (paddock_network_record_get_seq (oldest), ==, 1);
    g_assert_cmpuint (paddock_network_record_get_bytes_down (oldest), ==, 183000);
    g_assert_cmpuint (paddock_network_record_get_port (oldest), ==, 443);
  }

  paddock_network_view_set_domains (view, domains);
  domains_list = (GtkWidget *) gtk_widget_get_template_child (GTK_WIDGET (view), PADDOCK_TYPE_NETWORK_VIEW, "domains_list");
  g_assert_nonnull (gtk_list_box_get_row_at_index (GTK_LIST_BOX (domains_list), 1));
  g_assert_null (gtk_list_box_get_row_at_index (GTK_LIST_BOX (domains_list), 2));
  paddock_ui_save_screenshot (GTK_WINDOW (window), "network");
  paddock_ui_assert_controls_named (GTK_WIDGET (window));

  /* The filter, as a user clicks it. */
  gtk_toggle_button_set_active (network_filter_button (view, "denied_button"), TRUE);
  g_assert_cmpuint (g_list_model_get_n_items (shown), ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(PaddockNetworkRecord) record = g_list_model_get_item (shown, i);

      g_assert_cmpstr (paddock_network_record_get_verdict (record), ==, "denied");
    }
  paddock_ui_save_screenshot (GTK_WINDOW (window), "network-denied");
  gtk_toggle_button_set_active (network_filter_button (view, "allowed_button"), TRUE);
  g_assert_cmpuint (g_list_model_get_n_items (shown), ==, 1);
  gtk_toggle_button_set_active (network_filter_button (view, "all_button"), TRUE);
  g_assert_cmpuint (g_list_model_get_n_items (shown), ==, 4);

  gtk_window_destroy (GTK_WINDOW (window));
}

/* Settings ------------------------------------------------------------------- */

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

      if (PADDOCK_IS_NEW_SESSION_DIALOG (toplevel))
        return PADDOCK_NEW_SESSION_DIALOG (toplevel);
    }
  return NULL;
}

/* The window opens at the size it was closed at and saves it again; the
 * New Session dialog starts from the newest recent folder that exists. */
static void
settings_cb (GApplication     *app,
             PaddockUiFixture *fixture)
{
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (app));
  g_autoptr(GSettings) settings = g_settings_new ("org.paddock.Paddock");
  const char *recent[] = { "/nonexistent/paddock-gone", fixture->workspace, "/", NULL };
  PaddockNewSessionDialog *dialog;
  g_autofree char *display = g_filename_display_name (fixture->workspace);
  int width = 0, height = 0;

  gtk_window_get_default_size (window, &width, &height);
  g_assert_cmpint (width, ==, 1000);
  g_assert_cmpint (height, ==, 640);
  g_assert_false (gtk_window_is_maximized (window));

  g_settings_set_strv (settings, "recent-workspaces", recent);
  g_assert_true (paddock_test_wait_for (client_connected, window, PADDOCK_UI_TIMEOUT_MS));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.new-session", NULL));
  dialog = find_new_session_dialog ();
  g_assert_nonnull (dialog);
  {
    AdwActionRow *workspace_row = ADW_ACTION_ROW (gtk_widget_get_template_child (GTK_WIDGET (dialog),
                                                                                PADDOCK_TYPE_NEW_SESSION_DIALOG,
                                                                                "workspace_row"));
    GtkMenuButton *recent_button = GTK_MENU_BUTTON (gtk_widget_get_template_child (GTK_WIDGET (dialog),
                                                                                  PADDOCK_TYPE_NEW_SESSION_DIALOG,
                                                                                  "recent_button"));
    GMenuModel *menu = gtk_menu_button_get_menu_model (recent_button);

    g_assert_cmpstr (adw_action_row_get_subtitle (workspace_row), ==, display);
    /* The folder that is gone is not offered. */
    g_assert_nonnull (menu);
    g_assert_cmpint (g_menu_model_get_n_items (menu), ==, 2);
  }
  paddock_ui_save_screenshot (GTK_WINDOW (dialog), "new-session-recent");
  paddock_ui_assert_controls_named (GTK_WIDGET (dialog));
  gtk_window_destroy (GTK_WINDOW (dialog));

  /* Closing saves the size. */
  gtk_window_set_default_size (window, 900, 600);
  fixture->ran = TRUE;
  gtk_window_close (window);
}

static void
test_settings (void)
{
  g_autoptr(GSettings) settings = g_settings_new ("org.paddock.Paddock");

  g_settings_set_int (settings, "window-width", 1000);
  g_settings_set_int (settings, "window-height", 640);
  g_settings_set_boolean (settings, "window-maximized", FALSE);

  paddock_ui_run_app (G_CALLBACK (settings_cb), NULL);

  g_assert_cmpint (g_settings_get_int (settings, "window-width"), ==, 900);
  g_assert_cmpint (g_settings_get_int (settings, "window-height"), ==, 600);
  g_assert_false (g_settings_get_boolean (settings, "window-maximized"));
  g_settings_reset (settings, "recent-workspaces");
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

  g_test_add_func ("/ui/views/processes/tree", test_processes_tree);
  g_test_add_func ("/ui/views/processes/live", test_processes_live);
  g_test_add_func ("/ui/views/ports", test_ports);
  g_test_add_func ("/ui/views/network/records", test_network_records);
  g_test_add_func ("/ui/views/network/live-proxy", test_network_live);
  g_test_add_func ("/ui/views/settings", test_settings);
  g_test_add_func ("/ui/views/changes/visible-controls", test_changes_visible);

  return g_test_run ();
}
