/* paddock-changes-view.c — a session's staged changes, their diffs, apply/drop
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <gtksourceview/gtksource.h>
#include <string.h>

#include "paddock-change-item.h"
#include "paddock-changes-view.h"
#include "paddock-visible-text.h"
#include "paddock-window.h"

#define REFRESH_SECONDS 2
#define MAX_LISTED_PATHS 12

/* The review list of one session (Session1.Review), refreshed on demand
 * and every two seconds while it is on screen; an unchanged reply leaves
 * the rows (and the selection) alone. Repository metadata rows follow the
 * file changes, marked "Metadata", and are never applied from here. The
 * selected change's diff (Session1.GetReviewedDiff) shows below in a
 * read-only GtkSourceView, as the review on screen read it, and Apply
 * applies with that review's token (Session1.ApplyReviewed): exactly the
 * content shown, or nothing. Apply and Drop ask first, listing the paths,
 * because neither can be undone; no refresh replaces the review while
 * the question is open. */
struct _PaddockChangesView
{
  GtkWidget           parent_instance;

  PaddockSessionItem *item;
  GListStore         *changes;
  GVariant           *last_reply;
  char               *token;       /* the review on screen */
  GBytes             *shown_diff;  /* the diff's bytes in the view */
  /* Cancelled in dispose and when the item changes: every call. */
  GCancellable       *cancellable;
  /* Cancelled when another row is selected. */
  GCancellable       *diff_cancellable;
  guint               refresh_id;
  guint               listing : 1;
  guint               busy : 1;
  guint               confirming : 1;

  /* Template widgets */
  GtkStack           *stack;
  GtkColumnView      *column_view;
  GtkMultiSelection  *selection;
  GtkSourceView      *diff_view;
  GtkStack           *diff_stack;
  GtkLabel           *summary_label;
  GtkActionBar       *action_bar;
  GtkWidget          *drop_button;
};

G_DEFINE_FINAL_TYPE (PaddockChangesView, paddock_changes_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_ITEM,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* As the other views do: the window's toast, which it keeps as its last. */
static void
paddock_changes_view_toast (PaddockChangesView *self,
                            const char         *title)
{
  paddock_window_toast_from (GTK_WIDGET (self), title);
}

static guint
paddock_changes_view_n_changes (PaddockChangesView *self)
{
  return g_list_model_get_n_items (G_LIST_MODEL (self->changes));
}

/* The selected paths, as ListChanges gave them, NULL-terminated. */
static GStrv
paddock_changes_view_dup_selected_paths (PaddockChangesView *self)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  guint n = paddock_changes_view_n_changes (self);

  for (guint i = 0; i < n; i++)
    {
      if (gtk_selection_model_is_selected (GTK_SELECTION_MODEL (self->selection), i))
        {
          g_autoptr(PaddockChangeItem) change = g_list_model_get_item (G_LIST_MODEL (self->changes), i);

          g_strv_builder_add (builder, paddock_change_item_get_path (change));
        }
    }

  return g_strv_builder_end (builder);
}

static void
paddock_changes_view_update_actions (PaddockChangesView *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  g_auto(GStrv) selected = paddock_changes_view_dup_selected_paths (self);
  guint n = paddock_changes_view_n_changes (self);
  gboolean running = self->item != NULL && paddock_session_item_is_running (self->item);
  gboolean has_proxy = self->item != NULL && paddock_session_item_get_proxy (self->item) != NULL;

  gtk_widget_action_set_enabled (widget, "changes.refresh", has_proxy && !self->busy);
  gtk_widget_action_set_enabled (widget, "changes.apply-selected", has_proxy && !self->busy && selected[0] != NULL);
  gtk_widget_action_set_enabled (widget, "changes.apply-all", has_proxy && !self->busy && n > 0);
  gtk_widget_action_set_enabled (widget, "changes.drop", has_proxy && !self->busy && n > 0 && !running);
}

static void
paddock_changes_view_update_summary (PaddockChangesView *self)
{
  guint n_rows = paddock_changes_view_n_changes (self);
  guint n = 0;
  guint n_metadata = 0;
  guint n_conflicts = 0;
  g_autofree char *summary = NULL;

  /* File changes and repository metadata are counted apart, as the
   * sidebar's badge counts the file changes only. */
  for (guint i = 0; i < n_rows; i++)
    {
      g_autoptr(PaddockChangeItem) change = g_list_model_get_item (G_LIST_MODEL (self->changes), i);

      if (paddock_change_item_get_metadata_reason (change) != NULL)
        n_metadata++;
      else
        n++;
      if (paddock_change_item_get_conflict (change))
        n_conflicts++;
    }

  if (n == 0 && n_metadata == 0)
    summary = g_strdup ("");
  else if (n_metadata > 0)
    {
      g_autofree char *changes = g_strdup_printf (g_dngettext (NULL, "%u change", "%u changes", n), n);
      g_autofree char *metadata = g_strdup_printf (g_dngettext (NULL, "%u repository metadata row (never applied here)",
                                                                "%u repository metadata rows (never applied here)",
                                                                n_metadata), n_metadata);

      /* Translators: "3 changes, 1 repository metadata row (never applied here)" */
      summary = g_strdup_printf (_("%s, %s"), changes, metadata);
    }
  else if (n_conflicts == 0)
    summary = g_strdup_printf (g_dngettext (NULL, "%u change", "%u changes", n), n);
  else
    {
      g_autofree char *changes = g_strdup_printf (g_dngettext (NULL, "%u change", "%u changes", n), n);
      g_autofree char *conflicts = g_strdup_printf (g_dngettext (NULL, "%u conflict", "%u conflicts", n_conflicts),
                                                    n_conflicts);

      /* Translators: "3 changes, 1 conflict" */
      summary = g_strdup_printf (_("%s, %s"), changes, conflicts);
    }

  gtk_label_set_label (self->summary_label, summary);
}

static void
get_diff_cb (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(PaddockChangesView) self = user_data;
  g_autoptr(GVariant) diff = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->diff_view));

  if (!paddock_ipc_session1_call_get_reviewed_diff_finish (PADDOCK_IPC_SESSION1 (object), &diff, result, &error))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;

      g_dbus_error_strip_remote_error (error);
      text = g_strdup_printf (_("The diff cannot be shown: %s"), error->message);
      paddock_visible_text_set_buffer (buffer, text, strlen (text));
    }
  else
    {
      gsize len = 0;
      const char *data = g_variant_get_fixed_array (diff, &len, 1);

      /* A bytestring carries its NUL; the diff is the bytes before it.
       * The agent wrote them: its controls and invisible characters are
       * shown, not acted on (paddock-visible-text.c). */
      if (len > 0 && data[len - 1] == '\0')
        len--;
      /* Each refresh is a new review: the same diff again keeps the
       * scroll. */
      {
        g_autoptr(GBytes) bytes = g_bytes_new (data, len);

        if (self->shown_diff != NULL && g_bytes_equal (self->shown_diff, bytes))
          return;
        g_clear_pointer (&self->shown_diff, g_bytes_unref);
        self->shown_diff = g_steal_pointer (&bytes);
      }
      paddock_visible_text_set_buffer (buffer, data, len);
      return;
    }
  g_clear_pointer (&self->shown_diff, g_bytes_unref);
}

static void
paddock_changes_view_show_diff (PaddockChangesView *self)
{
  g_auto(GStrv) selected = paddock_changes_view_dup_selected_paths (self);
  PaddockIpcSession1 *proxy = self->item ? paddock_session_item_get_proxy (self->item) : NULL;

  g_cancellable_cancel (self->diff_cancellable);
  g_clear_object (&self->diff_cancellable);

  gtk_stack_set_visible_child_name (self->diff_stack, selected[0] != NULL ? "diff" : "none");

  if (selected[0] == NULL || proxy == NULL || self->token == NULL)
    {
      gtk_text_buffer_set_text (gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->diff_view)), "", -1);
      g_clear_pointer (&self->shown_diff, g_bytes_unref);
      return;
    }

  self->diff_cancellable = g_cancellable_new ();
  paddock_ipc_session1_call_get_reviewed_diff (proxy,
                                               self->token,
                                               selected[0],
                                               self->diff_cancellable,
                                               get_diff_cb,
                                               g_object_ref (self));
}

static void
selection_changed_cb (PaddockChangesView *self,
                      guint               position,
                      guint               n_items,
                      GtkSelectionModel  *selection)
{
  paddock_changes_view_show_diff (self);
  paddock_changes_view_update_actions (self);
}

static void
paddock_changes_view_show_page (PaddockChangesView *self,
                                const char         *page)
{
  gtk_stack_set_visible_child_name (self->stack, page);
  /* Nothing to apply or drop where nothing is staged. */
  gtk_action_bar_set_revealed (self->action_bar, g_strcmp0 (page, "unstaged") != 0);
}

static void
list_changes_cb (GObject      *object,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(PaddockChangesView) self = user_data;
  g_autoptr(GVariant) result_dict = NULL;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) files = NULL;
  g_autoptr(GVariant) metadata = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) items = NULL;
  g_auto(GStrv) selected = NULL;
  const char *token = NULL;
  guint n;

  if (!paddock_ipc_session1_call_review_finish (PADDOCK_IPC_SESSION1 (object), &result_dict, result, &error))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;

      self->listing = FALSE;

      if (g_dbus_error_is_remote_error (error))
        {
          g_autofree char *name = g_dbus_error_get_remote_error (error);

          if (g_strcmp0 (name, "org.paddock.Error.NotEnforced") == 0)
            {
              paddock_changes_view_show_page (self, "unstaged");
              return;
            }
        }

      g_dbus_error_strip_remote_error (error);
      g_debug ("Review failed: %s", error->message);
      return;
    }

  self->listing = FALSE;

  files = g_variant_lookup_value (result_dict, "changes", G_VARIANT_TYPE ("a(ayayssbuub)"));
  metadata = g_variant_lookup_value (result_dict, "metadata", G_VARIANT_TYPE ("a(ayayssbuubs)"));
  if (files == NULL || metadata == NULL || !g_variant_lookup (result_dict, "token", "&s", &token))
    {
      g_debug ("Review answered without its changes, metadata or token");
      return;
    }
  /* What is shown is this review's: its diffs, and what Apply lands. */
  g_free (self->token);
  self->token = g_strdup (token);
  reply = g_variant_ref_sink (g_variant_new ("(@a(ayayssbuub)@a(ayayssbuubs))", files, metadata));

  /* Nothing changed: keep the rows and the selection; the diff is taken
   * again from the new review (the same bytes keep the view as it is). */
  if (self->last_reply != NULL && g_variant_equal (self->last_reply, reply))
    {
      paddock_changes_view_show_diff (self);
      return;
    }

  g_clear_pointer (&self->last_reply, g_variant_unref);
  self->last_reply = g_variant_ref (reply);

  selected = paddock_changes_view_dup_selected_paths (self);
  items = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint list = 0; list < 2; list++)
    {
      GVariant *rows = list == 0 ? files : metadata;

      for (gsize i = 0; i < g_variant_n_children (rows); i++)
        {
          g_autoptr(GVariant) change = g_variant_get_child_value (rows, i);

          g_ptr_array_add (items, paddock_change_item_new_from_variant (change));
        }
    }

  g_list_store_splice (self->changes, 0, paddock_changes_view_n_changes (self), items->pdata, items->len);

  /* Keep selected what still is there. */
  n = paddock_changes_view_n_changes (self);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(PaddockChangeItem) change = g_list_model_get_item (G_LIST_MODEL (self->changes), i);

      if (g_strv_contains ((const char * const *)selected, paddock_change_item_get_path (change)))
        gtk_selection_model_select_item (GTK_SELECTION_MODEL (self->selection), i, FALSE);
    }

  /* The sidebar counts file changes, as ListChanges does for it. */
  if (self->item != NULL)
    paddock_session_item_set_n_changes (self->item, (guint) g_variant_n_children (files));

  paddock_changes_view_show_page (self, n > 0 ? "changes" : "empty");
  paddock_changes_view_update_summary (self);
  paddock_changes_view_update_actions (self);
  paddock_changes_view_show_diff (self);
}

/**
 * paddock_changes_view_refresh:
 *
 * Lists the session's changes again now.
 */
void
paddock_changes_view_refresh (PaddockChangesView *self)
{
  PaddockIpcSession1 *proxy;

  g_return_if_fail (PADDOCK_IS_CHANGES_VIEW (self));

  /* While Apply or Drop asks, the review it will use stays the one shown. */
  if (self->item == NULL || self->listing || self->confirming)
    return;

  if (!(proxy = paddock_session_item_get_proxy (self->item)))
    return;

  if (!paddock_session_item_is_staged (self->item))
    {
      paddock_changes_view_show_page (self, "unstaged");
      return;
    }

  self->listing = TRUE;
  paddock_ipc_session1_call_review (proxy, g_variant_new ("a{sv}", NULL), self->cancellable,
                                    list_changes_cb, g_object_ref (self));
}

static gboolean
refresh_timeout_cb (gpointer user_data)
{
  paddock_changes_view_refresh (PADDOCK_CHANGES_VIEW (user_data));

  return G_SOURCE_CONTINUE;
}

/* Applying and dropping */

static char *
paths_markup (const char * const *paths,
              GListModel         *all)
{
  g_autoptr(GString) text = g_string_new (NULL);
  guint n = paths != NULL ? g_strv_length ((GStrv)paths) : 0;
  guint shown = 0;

  if (n == 0)
    {
      /* All of them, but repository metadata, which "all" never means. */
      guint n_items = g_list_model_get_n_items (all);

      for (guint i = 0; i < n_items; i++)
        {
          g_autoptr(PaddockChangeItem) change = g_list_model_get_item (all, i);
          g_autofree char *display = NULL;
          g_autofree char *escaped = NULL;

          if (paddock_change_item_get_metadata_reason (change) != NULL)
            continue;
          if (n++ >= MAX_LISTED_PATHS)
            continue;
          display = paddock_change_item_dup_display_path (change);
          escaped = g_markup_escape_text (display, -1);
          g_string_append_printf (text, "\n<tt>%s</tt>", escaped);
          shown++;
        }
    }
  else
    {
      for (guint i = 0; i < n && shown < MAX_LISTED_PATHS; i++, shown++)
        {
          g_autofree char *display = paddock_visible_text_dup_label (paths[i]);
          g_autofree char *escaped = g_markup_escape_text (display, -1);

          g_string_append_printf (text, "\n<tt>%s</tt>", escaped);
        }
    }

  if (n > shown)
    {
      g_string_append_c (text, '\n');
      g_string_append_printf (text, g_dngettext (NULL, "and %u more", "and %u more", n - shown), n - shown);
    }

  return g_string_free (g_steal_pointer (&text), FALSE);
}

static void
apply_cb (GObject      *object,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(PaddockChangesView) self = user_data;
  g_auto(GStrv) applied = NULL;
  g_auto(GStrv) conflicts = NULL;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;

  self->busy = FALSE;

  if (!paddock_ipc_session1_call_apply_reviewed_finish (PADDOCK_IPC_SESSION1 (object), &reply,
                                                        result, &error) ||
      !g_variant_lookup (reply, "applied", "^aay", &applied) ||
      !g_variant_lookup (reply, "conflicts", "^aay", &conflicts))
    {
      g_autofree char *message = NULL;

      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;

      if (error != NULL)
        g_dbus_error_strip_remote_error (error);
      message = g_strdup_printf (_("Nothing was applied: %s"),
                                 error != NULL ? error->message : _("the daemon’s answer was incomplete"));
      paddock_changes_view_toast (self, message);
    }
  else
    {
      guint n_applied = g_strv_length (applied);
      guint n_conflicts = g_strv_length (conflicts);
      g_autofree char *message = NULL;

      if (n_conflicts > 0)
        message = g_strdup_printf (g_dngettext (NULL,
                                                "Applied %u, %u conflicting change was left alone",
                                                "Applied %u, %u conflicting changes were left alone",
                                                n_conflicts),
                                   n_applied, n_conflicts);
      else
        message = g_strdup_printf (g_dngettext (NULL, "Applied %u change", "Applied %u changes", n_applied),
                                   n_applied);
      paddock_changes_view_toast (self, message);
    }

  paddock_changes_view_update_actions (self);
  paddock_changes_view_refresh (self);
}

static void
drop_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(PaddockChangesView) self = user_data;
  g_autoptr(GError) error = NULL;

  self->busy = FALSE;

  if (!paddock_ipc_session1_call_drop_finish (PADDOCK_IPC_SESSION1 (object), result, &error))
    {
      g_autofree char *message = NULL;

      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;

      g_dbus_error_strip_remote_error (error);
      message = g_strdup_printf (_("Nothing was dropped: %s"), error->message);
      paddock_changes_view_toast (self, message);
    }
  else
    paddock_changes_view_toast (self, _("Changes dropped"));

  paddock_changes_view_update_actions (self);
  paddock_changes_view_refresh (self);
}

static void
confirm_response_cb (PaddockChangesView *self,
                     const char         *response,
                     AdwMessageDialog   *dialog)
{
  const char * const *paths = g_object_get_data (G_OBJECT (dialog), "paths");
  const char *token = g_object_get_data (G_OBJECT (dialog), "token");
  PaddockIpcSession1 *proxy = self->item ? paddock_session_item_get_proxy (self->item) : NULL;

  self->confirming = FALSE;
  if (proxy == NULL)
    return;

  if (g_str_equal (response, "apply") || g_str_equal (response, "overwrite"))
    {
      const char * const *conflicts = g_object_get_data (G_OBJECT (dialog), "conflicts");
      GVariantDict options;

      g_variant_dict_init (&options, NULL);
      if (g_str_equal (response, "overwrite"))
        g_variant_dict_insert_value (&options, "force_paths", g_variant_new_bytestring_array (conflicts, -1));
      self->busy = TRUE;
      /* The token of the review the dialog listed: exactly what it showed. */
      paddock_ipc_session1_call_apply_reviewed (proxy, token, paths, g_variant_dict_end (&options),
                                                self->cancellable, apply_cb, g_object_ref (self));
    }
  else if (g_str_equal (response, "drop"))
    {
      self->busy = TRUE;
      paddock_ipc_session1_call_drop (proxy, paths, self->cancellable,
                                      drop_cb, g_object_ref (self));
    }

  paddock_changes_view_update_actions (self);
}

/* The conflicting paths among @paths (all listed changes when empty). */
static GStrv
paddock_changes_view_dup_conflicts (PaddockChangesView *self,
                                    GStrv               paths)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  guint n = paddock_changes_view_n_changes (self);

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(PaddockChangeItem) change = g_list_model_get_item (G_LIST_MODEL (self->changes), i);
      const char *path = paddock_change_item_get_path (change);

      if (paddock_change_item_get_conflict (change) &&
          (paths[0] == NULL || g_strv_contains ((const char * const *)paths, path)))
        g_strv_builder_add (builder, path);
    }

  return g_strv_builder_end (builder);
}

/* The file changes among @paths (all listed ones when empty), leaving
 * out repository metadata, which the app never applies; *@n_metadata
 * counts what was left out. */
static GStrv
paddock_changes_view_dup_applicable (PaddockChangesView *self,
                                     GStrv               paths,
                                     guint              *n_metadata)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  guint n = paddock_changes_view_n_changes (self);

  *n_metadata = 0;
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(PaddockChangeItem) change = g_list_model_get_item (G_LIST_MODEL (self->changes), i);
      const char *path = paddock_change_item_get_path (change);

      if (paths[0] != NULL && !g_strv_contains ((const char * const *)paths, path))
        continue;
      if (paddock_change_item_get_metadata_reason (change) != NULL)
        (*n_metadata)++;
      else if (paths[0] != NULL)
        g_strv_builder_add (builder, path);
    }
  return g_strv_builder_end (builder);
}

static void
paddock_changes_view_confirm (PaddockChangesView  *self,
                              GStrv                asked,
                              gboolean             drop)
{
  guint n_metadata = 0;
  g_auto(GStrv) applicable = drop ? NULL : paddock_changes_view_dup_applicable (self, asked, &n_metadata);
  GStrv paths = drop ? asked : applicable;
  g_autofree char *listing = paths_markup ((const char * const *)paths, G_LIST_MODEL (self->changes));
  g_auto(GStrv) conflicts = drop ? g_new0 (char *, 1) : paddock_changes_view_dup_conflicts (self, paths);
  guint n_conflicts = g_strv_length (conflicts);
  g_autofree char *heading = NULL;
  g_autofree char *body = NULL;
  guint n = paths[0] != NULL ? g_strv_length (paths) : paddock_changes_view_n_changes (self) - n_metadata;
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  AdwMessageDialog *dialog;

  /* Only metadata chosen: an empty list would mean "everything". */
  if (!drop && n == 0)
    {
      paddock_changes_view_toast (self, _("Repository metadata is never applied from here "
                                          "(paddockctl apply --include-metadata names it)"));
      return;
    }

  if (drop)
    {
      heading = g_strdup_printf (g_dngettext (NULL, "Drop %u Change?", "Drop %u Changes?", n), n);
      body = g_strdup_printf ("%s\n%s", _("The session’s work on these paths is discarded. This cannot be undone."),
                              listing);
    }
  else if (n_conflicts > 0)
    {
      g_autofree char *conflict_text =
        g_strdup_printf (g_dngettext (NULL,
                                      "%u of them also changed in the workspace since the session started: "
                                      "Apply leaves it alone, Overwrite replaces the workspace’s version.",
                                      "%u of them also changed in the workspace since the session started: "
                                      "Apply leaves those alone, Overwrite replaces the workspace’s versions.",
                                      n_conflicts),
                         n_conflicts);

      heading = g_strdup_printf (g_dngettext (NULL, "Apply %u Change?", "Apply %u Changes?", n), n);
      body = g_strdup_printf ("%s %s\n%s",
                              _("These paths are written into the real workspace. Applying cannot be undone."),
                              conflict_text, listing);
    }
  else
    {
      heading = g_strdup_printf (g_dngettext (NULL, "Apply %u Change?", "Apply %u Changes?", n), n);
      body = g_strdup_printf ("%s\n%s", _("These paths are written into the real workspace. Applying cannot be undone."),
                              listing);
    }

  dialog = ADW_MESSAGE_DIALOG (adw_message_dialog_new (GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL, heading, NULL));
  adw_message_dialog_set_body_use_markup (dialog, TRUE);
  adw_message_dialog_set_body (dialog, body);
  adw_message_dialog_add_response (dialog, "cancel", _("_Cancel"));
  if (n_conflicts > 0)
    {
      adw_message_dialog_add_response (dialog, "overwrite", _("_Overwrite"));
      adw_message_dialog_set_response_appearance (dialog, "overwrite", ADW_RESPONSE_DESTRUCTIVE);
    }
  adw_message_dialog_add_response (dialog, drop ? "drop" : "apply", drop ? _("_Drop") : _("_Apply"));
  adw_message_dialog_set_response_appearance (dialog, drop ? "drop" : "apply",
                                              drop ? ADW_RESPONSE_DESTRUCTIVE : ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response (dialog, "cancel");
  adw_message_dialog_set_close_response (dialog, "cancel");
  if (!drop && n_metadata > 0)
    {
      g_autofree char *with_note = g_strdup_printf ("%s\n%s", body,
                                                    _("Repository metadata (.git, …) is left out: "
                                                      "it is never applied from here."));
      adw_message_dialog_set_body (dialog, with_note);
    }
  g_object_set_data_full (G_OBJECT (dialog), "paths", g_strdupv (paths), (GDestroyNotify)g_strfreev);
  g_object_set_data_full (G_OBJECT (dialog), "token", g_strdup (self->token), g_free);
  self->confirming = TRUE;
  g_object_set_data_full (G_OBJECT (dialog), "conflicts", g_steal_pointer (&conflicts), (GDestroyNotify)g_strfreev);
  g_signal_connect_object (dialog, "response", G_CALLBACK (confirm_response_cb), self, G_CONNECT_SWAPPED);
  gtk_window_present (GTK_WINDOW (dialog));
}

static void
paddock_changes_view_refresh_action (GtkWidget  *widget,
                                     const char *action_name,
                                     GVariant   *param)
{
  paddock_changes_view_refresh (PADDOCK_CHANGES_VIEW (widget));
}

static void
paddock_changes_view_apply_selected_action (GtkWidget  *widget,
                                            const char *action_name,
                                            GVariant   *param)
{
  PaddockChangesView *self = PADDOCK_CHANGES_VIEW (widget);
  g_auto(GStrv) selected = paddock_changes_view_dup_selected_paths (self);

  if (selected[0] != NULL)
    paddock_changes_view_confirm (self, selected, FALSE);
}

static void
paddock_changes_view_apply_all_action (GtkWidget  *widget,
                                       const char *action_name,
                                       GVariant   *param)
{
  PaddockChangesView *self = PADDOCK_CHANGES_VIEW (widget);
  g_auto(GStrv) all = g_new0 (char *, 1);

  paddock_changes_view_confirm (self, all, FALSE);
}

static void
paddock_changes_view_drop_action (GtkWidget  *widget,
                                  const char *action_name,
                                  GVariant   *param)
{
  PaddockChangesView *self = PADDOCK_CHANGES_VIEW (widget);
  g_auto(GStrv) selected = paddock_changes_view_dup_selected_paths (self);

  /* The selection if there is one, else the whole stage. */
  paddock_changes_view_confirm (self, selected, TRUE);
}

static void
item_changed_cb (PaddockChangesView *self,
                 GParamSpec         *pspec,
                 PaddockSessionItem *item)
{
  paddock_changes_view_update_actions (self);

  if (gtk_widget_get_mapped (GTK_WIDGET (self)))
    paddock_changes_view_refresh (self);
}

static void
style_dark_cb (PaddockChangesView *self,
               GParamSpec         *pspec,
               AdwStyleManager    *style_manager)
{
  GtkSourceStyleSchemeManager *schemes = gtk_source_style_scheme_manager_get_default ();
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->diff_view));
  const char *id = adw_style_manager_get_dark (style_manager) ? "Adwaita-dark" : "Adwaita";
  GtkSourceStyleScheme *scheme = gtk_source_style_scheme_manager_get_scheme (schemes, id);

  if (scheme != NULL)
    gtk_source_buffer_set_style_scheme (GTK_SOURCE_BUFFER (buffer), scheme);
}

static void
paddock_changes_view_map (GtkWidget *widget)
{
  PaddockChangesView *self = PADDOCK_CHANGES_VIEW (widget);

  GTK_WIDGET_CLASS (paddock_changes_view_parent_class)->map (widget);

  paddock_changes_view_refresh (self);
  if (self->refresh_id == 0)
    self->refresh_id = g_timeout_add_seconds (REFRESH_SECONDS, refresh_timeout_cb, self);
}

static void
paddock_changes_view_unmap (GtkWidget *widget)
{
  PaddockChangesView *self = PADDOCK_CHANGES_VIEW (widget);

  g_clear_handle_id (&self->refresh_id, g_source_remove);

  GTK_WIDGET_CLASS (paddock_changes_view_parent_class)->unmap (widget);
}

static void
paddock_changes_view_dispose (GObject *object)
{
  PaddockChangesView *self = (PaddockChangesView *)object;
  GtkWidget *child;

  g_clear_handle_id (&self->refresh_id, g_source_remove);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_cancellable_cancel (self->diff_cancellable);
  g_clear_object (&self->diff_cancellable);

  if (self->item != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->item, self);
      g_clear_object (&self->item);
    }

  gtk_widget_dispose_template (GTK_WIDGET (self), PADDOCK_TYPE_CHANGES_VIEW);
  /* The template's root box is not bound: unparent it too. */
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))))
    gtk_widget_unparent (child);

  g_clear_object (&self->changes);
  g_clear_pointer (&self->last_reply, g_variant_unref);
  g_clear_pointer (&self->token, g_free);
  g_clear_pointer (&self->shown_diff, g_bytes_unref);

  G_OBJECT_CLASS (paddock_changes_view_parent_class)->dispose (object);
}

static void
paddock_changes_view_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  PaddockChangesView *self = PADDOCK_CHANGES_VIEW (object);

  switch (prop_id)
    {
    case PROP_ITEM:
      g_value_set_object (value, self->item);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_changes_view_set_property (GObject      *object,
                                   guint         prop_id,
                                   const GValue *value,
                                   GParamSpec   *pspec)
{
  PaddockChangesView *self = PADDOCK_CHANGES_VIEW (object);

  switch (prop_id)
    {
    case PROP_ITEM:
      paddock_changes_view_set_item (self, g_value_get_object (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_changes_view_class_init (PaddockChangesViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = paddock_changes_view_dispose;
  object_class->get_property = paddock_changes_view_get_property;
  object_class->set_property = paddock_changes_view_set_property;

  widget_class->map = paddock_changes_view_map;
  widget_class->unmap = paddock_changes_view_unmap;

  properties[PROP_ITEM] =
    g_param_spec_object ("item", NULL, NULL,
                         PADDOCK_TYPE_SESSION_ITEM,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_source_init ();
  g_type_ensure (GTK_SOURCE_TYPE_VIEW);
  g_type_ensure (PADDOCK_TYPE_CHANGE_ITEM);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/paddock/Paddock/paddock-changes-view.ui");
  gtk_widget_class_bind_template_child (widget_class, PaddockChangesView, stack);
  gtk_widget_class_bind_template_child (widget_class, PaddockChangesView, column_view);
  gtk_widget_class_bind_template_child (widget_class, PaddockChangesView, selection);
  gtk_widget_class_bind_template_child (widget_class, PaddockChangesView, diff_view);
  gtk_widget_class_bind_template_child (widget_class, PaddockChangesView, diff_stack);
  gtk_widget_class_bind_template_child (widget_class, PaddockChangesView, summary_label);
  gtk_widget_class_bind_template_child (widget_class, PaddockChangesView, action_bar);
  gtk_widget_class_bind_template_child (widget_class, PaddockChangesView, drop_button);
  gtk_widget_class_bind_template_callback (widget_class, selection_changed_cb);

  gtk_widget_class_install_action (widget_class, "changes.refresh", NULL, paddock_changes_view_refresh_action);
  gtk_widget_class_install_action (widget_class, "changes.apply-selected", NULL, paddock_changes_view_apply_selected_action);
  gtk_widget_class_install_action (widget_class, "changes.apply-all", NULL, paddock_changes_view_apply_all_action);
  gtk_widget_class_install_action (widget_class, "changes.drop", NULL, paddock_changes_view_drop_action);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void
paddock_changes_view_init (PaddockChangesView *self)
{
  GtkSourceLanguageManager *languages = gtk_source_language_manager_get_default ();
  AdwStyleManager *style_manager = adw_style_manager_get_default ();
  GtkTextBuffer *buffer;

  gtk_widget_init_template (GTK_WIDGET (self));

  self->cancellable = g_cancellable_new ();
  self->changes = g_list_store_new (PADDOCK_TYPE_CHANGE_ITEM);
  gtk_multi_selection_set_model (self->selection, G_LIST_MODEL (self->changes));

  buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->diff_view));
  gtk_source_buffer_set_language (GTK_SOURCE_BUFFER (buffer),
                                  gtk_source_language_manager_get_language (languages, "diff"));
  gtk_source_buffer_set_highlight_syntax (GTK_SOURCE_BUFFER (buffer), TRUE);
  paddock_visible_text_ensure_tag (buffer);

  g_signal_connect_object (style_manager, "notify::dark", G_CALLBACK (style_dark_cb), self, G_CONNECT_SWAPPED);
  style_dark_cb (self, NULL, style_manager);

  gtk_stack_set_visible_child_name (self->stack, "loading");
  paddock_changes_view_update_actions (self);
}

/**
 * paddock_changes_view_get_item:
 *
 * Returns: (transfer none) (nullable): the session reviewed
 */
PaddockSessionItem *
paddock_changes_view_get_item (PaddockChangesView *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGES_VIEW (self), NULL);

  return self->item;
}

void
paddock_changes_view_set_item (PaddockChangesView *self,
                               PaddockSessionItem *item)
{
  g_return_if_fail (PADDOCK_IS_CHANGES_VIEW (self));
  g_return_if_fail (item == NULL || PADDOCK_IS_SESSION_ITEM (item));

  if (self->item == item)
    return;

  if (self->item != NULL)
    g_signal_handlers_disconnect_by_data (self->item, self);

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  self->listing = FALSE;
  self->busy = FALSE;
  self->confirming = FALSE;
  g_clear_pointer (&self->last_reply, g_variant_unref);
  g_clear_pointer (&self->token, g_free);
  g_list_store_remove_all (self->changes);
  gtk_stack_set_visible_child_name (self->stack, "loading");

  g_set_object (&self->item, item);

  if (self->item != NULL)
    {
      g_signal_connect_object (self->item, "notify::proxy", G_CALLBACK (item_changed_cb), self, G_CONNECT_SWAPPED);
      g_signal_connect_object (self->item, "notify::running", G_CALLBACK (item_changed_cb), self, G_CONNECT_SWAPPED);
      g_signal_connect_object (self->item, "notify::staging", G_CALLBACK (item_changed_cb), self, G_CONNECT_SWAPPED);
    }

  paddock_changes_view_update_actions (self);
  if (gtk_widget_get_mapped (GTK_WIDGET (self)))
    paddock_changes_view_refresh (self);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ITEM]);
}

/**
 * paddock_changes_view_get_model:
 *
 * Returns: (transfer none): the listed changes, as #PaddockChangeItem
 */
GListModel *
paddock_changes_view_get_model (PaddockChangesView *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGES_VIEW (self), NULL);

  return G_LIST_MODEL (self->changes);
}
