/* paddockctl-review.c — review, apply, drop and checkpoint: a session's staged changes
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include "paddock-error.h"
#include "paddockctl-private.h"

/* A review or an apply of a large tree takes longer than a usual call. */
#define STAGING_CALL_TIMEOUT_MS (10 * 60 * 1000)

/* A path as a person can read it on one line: control characters and bytes
 * that are not UTF-8 are written as escapes, everything else as is. */
static char *
printable_path (const char *path)
{
  GString *out = g_string_new (NULL);
  const char *p = path;

  while (*p != '\0')
    {
      gunichar c = g_utf8_get_char_validated (p, -1);

      if (c == (gunichar) -1 || c == (gunichar) -2)
        {
          g_string_append_printf (out, "\\x%02x", (guchar) *p);
          p++;
          continue;
        }
      if (c == '\n')
        g_string_append (out, "\\n");
      else if (c == '\t')
        g_string_append (out, "\\t");
      else if (c == '\\')
        g_string_append (out, "\\\\");
      else if (g_unichar_iscntrl (c))
        g_string_append_printf (out, "\\x%02x", (guint) c);
      else
        g_string_append_len (out, p, g_utf8_next_char (p) - p);
      p = g_utf8_next_char (p);
    }
  return g_string_free (out, FALSE);
}

/* JSON strings are UTF-8: a path that is not gets its exact bytes as
 * base64 in NAME_base64 next to a readable NAME. */
static void
add_path_member (JsonBuilder *builder,
                 const char  *name,
                 const char  *path)
{
  json_builder_set_member_name (builder, name);
  if (path == NULL)
    {
      json_builder_add_null_value (builder);
      return;
    }
  if (g_utf8_validate (path, -1, NULL))
    {
      json_builder_add_string_value (builder, path);
      return;
    }
  {
    g_autofree char *readable = g_utf8_make_valid (path, -1);
    g_autofree char *member = g_strconcat (name, "_base64", NULL);
    g_autofree char *encoded = g_base64_encode ((const guchar *) path, strlen (path));

    json_builder_add_string_value (builder, readable);
    json_builder_set_member_name (builder, member);
    json_builder_add_string_value (builder, encoded);
  }
}

static void
add_path_array (JsonBuilder *builder,
                const char  *name,
                char       **paths)
{
  json_builder_set_member_name (builder, name);
  json_builder_begin_array (builder);
  for (guint i = 0; paths != NULL && paths[i] != NULL; i++)
    {
      const char *path = paths[i];

      if (g_utf8_validate (path, -1, NULL))
        json_builder_add_string_value (builder, path);
      else
        {
          g_autofree char *readable = g_utf8_make_valid (path, -1);
          json_builder_add_string_value (builder, readable);
        }
    }
  json_builder_end_array (builder);
}

static PaddockIpcSession1 *
open_session (Paddockctl  *ctl,
              const char  *id,
              GError     **error)
{
  PaddockIpcSession1 *session = paddockctl_dup_session (ctl, id, error);

  if (session != NULL)
    g_dbus_proxy_set_default_timeout (G_DBUS_PROXY (session), STAGING_CALL_TIMEOUT_MS);
  return session;
}

static const char *
kind_letter (const char *kind)
{
  static const struct { const char *kind; const char *letter; } letters[] = {
    { "added", "A" }, { "modified", "M" }, { "deleted", "D" }, { "renamed", "R" },
    { "type-changed", "T" }, { "mode-changed", "X" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (letters); i++)
    if (g_str_equal (kind, letters[i].kind))
      return letters[i].letter;
  return "?";
}

/* ---- review ------------------------------------------------------------------ */

#define REVIEW_SUMMARY \
  "List the changes the session made in its stage, against the workspace as\n" \
  "it is now: A added, M modified, D deleted, R renamed (old -> new),\n" \
  "T type changed, X mode changed; “conflict” marks a path the workspace\n" \
  "also changed since the session started. With --diff, the unified diff of\n" \
  "every change, or of PATH only."

static gboolean
print_diff (Paddockctl         *ctl,
            PaddockIpcSession1 *session,
            const char         *path,
            JsonBuilder        *builder,
            GError            **error)
{
  g_autoptr(GVariant) diff = NULL;
  gsize length = 0;
  const char *bytes;

  if (!paddock_ipc_session1_call_get_diff_sync (session, path, &diff, NULL, error))
    return FALSE;
  bytes = g_variant_get_fixed_array (diff, &length, 1);
  /* A bytestring carries its NUL; the diff is the bytes before it. */
  if (length > 0 && bytes[length - 1] == '\0')
    length--;

  if (builder != NULL)
    {
      g_autofree char *text = g_utf8_make_valid (bytes, (gssize) length);
      json_builder_set_member_name (builder, "diff");
      json_builder_add_string_value (builder, text);
    }
  else
    fwrite (bytes, 1, length, stdout);
  return TRUE;
}

int
paddockctl_review (Paddockctl  *ctl,
                   int          argc,
                   char       **argv)
{
  const char *command_path = "paddockctl review";
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockIpcSession1) session = NULL;
  g_autoptr(GVariant) changes = NULL;
  g_autofree char *id = NULL;
  gboolean with_diff = FALSE;
  const char *only_path = NULL;
  const GOptionEntry entries[] = {
    { "diff", 0, 0, G_OPTION_ARG_NONE, &with_diff, "Show the unified diff of each change", NULL },
    { NULL }
  };
  g_autoptr(JsonBuilder) builder = NULL;
  int exit_code = PADDOCKCTL_EXIT_OK;
  GVariantIter iter;
  const char *path, *old_path, *kind, *type;
  gboolean binary, conflict;
  guint32 added, removed;
  guint n_conflicts = 0;
  guint n_changes = 0;
  g_autoptr(GVariant) details = NULL;
  guint n_details = 0;
  guint row = 0;

  context = paddockctl_option_context_new (ctl, "ID [PATH]", REVIEW_SUMMARY, entries);
  if (!paddockctl_parse_options (ctl, context, command_path, &argc, &argv, &exit_code))
    return exit_code;
  if (argc < 2)
    return paddockctl_usage_error (ctl, command_path, "missing session ID");
  if (argc > 3)
    return paddockctl_usage_error (ctl, command_path, "unexpected argument “%s”", argv[3]);
  if (argc == 3)
    {
      if (!with_diff)
        return paddockctl_usage_error (ctl, command_path, "a PATH goes with --diff");
      only_path = argv[2];
    }
  if (!(id = paddockctl_parse_session_id (ctl, command_path, argv[1], &exit_code)))
    return exit_code;
  if (!(session = open_session (ctl, id, &error)))
    return paddockctl_fail (ctl, error);

  if (only_path != NULL)
    {
      if (ctl->json)
        {
          g_autoptr(JsonNode) root = NULL;

          builder = json_builder_new ();
          json_builder_begin_object (builder);
          add_path_member (builder, "path", only_path);
        }
      if (!print_diff (ctl, session, only_path, builder, &error))
        return paddockctl_fail_session (ctl, id, &error);
      if (builder != NULL)
        {
          g_autoptr(JsonNode) root = NULL;
          json_builder_end_object (builder);
          root = json_builder_get_root (builder);
          paddockctl_print_json (ctl, root);
        }
      return PADDOCKCTL_EXIT_OK;
    }

  if (!paddock_ipc_session1_call_list_changes_sync (session, &changes, NULL, &error))
    return paddockctl_fail_session (ctl, id, &error);
  /* Sizes, hard links and unappliable rows; a daemon without the method
   * (older) or a review that changed in between leaves them out. */
  {
    g_autoptr(GError) details_error = NULL;

    if (paddock_ipc_session1_call_list_change_details_sync (session, &details, NULL, &details_error))
      n_details = (guint) g_variant_n_children (details);
  }

  if (ctl->json)
    {
      builder = json_builder_new ();
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "id");
      json_builder_add_string_value (builder, id);
      json_builder_set_member_name (builder, "changes");
      json_builder_begin_array (builder);
    }

  g_variant_iter_init (&iter, changes);
  while (g_variant_iter_next (&iter, "(^&ay^&ay&s&sbuub)", &path, &old_path, &kind, &type,
                              &binary, &added, &removed, &conflict))
    {
      g_autoptr(GVariant) dict = NULL;
      guint64 size = 0, allocated = 0;
      const char *link_of = NULL;
      const char *unappliable = NULL;
      gboolean have_details = FALSE;

      /* Row by row, as both lists come from one review; checked by path. */
      if (row < n_details)
        {
          const char *detail_path = NULL;

          g_variant_get_child (details, row, "(^&ay@a{sv})", &detail_path, &dict);
          if (g_strcmp0 (detail_path, path) == 0)
            {
              have_details = TRUE;
              g_variant_lookup (dict, "size", "t", &size);
              g_variant_lookup (dict, "allocated", "t", &allocated);
              g_variant_lookup (dict, "hardlink_of", "^&ay", &link_of);
              g_variant_lookup (dict, "unappliable", "&s", &unappliable);
            }
        }
      row++;
      n_changes++;
      n_conflicts += conflict ? 1 : 0;
      if (builder != NULL)
        {
          json_builder_begin_object (builder);
          add_path_member (builder, "path", path);
          json_builder_set_member_name (builder, "kind");
          json_builder_add_string_value (builder, kind);
          add_path_member (builder, "old_path", old_path[0] != '\0' ? old_path : NULL);
          json_builder_set_member_name (builder, "type");
          json_builder_add_string_value (builder, type);
          json_builder_set_member_name (builder, "binary");
          json_builder_add_boolean_value (builder, binary);
          json_builder_set_member_name (builder, "added_lines");
          json_builder_add_int_value (builder, added);
          json_builder_set_member_name (builder, "removed_lines");
          json_builder_add_int_value (builder, removed);
          json_builder_set_member_name (builder, "conflict");
          json_builder_add_boolean_value (builder, conflict);
          if (have_details)
            {
              json_builder_set_member_name (builder, "size");
              json_builder_add_int_value (builder, (gint64) size);
              json_builder_set_member_name (builder, "allocated");
              json_builder_add_int_value (builder, (gint64) allocated);
              add_path_member (builder, "hardlink_of", link_of);
              json_builder_set_member_name (builder, "unappliable");
              if (unappliable != NULL)
                json_builder_add_string_value (builder, unappliable);
              else
                json_builder_add_null_value (builder);
            }
          if (with_diff && !print_diff (ctl, session, path, builder, &error))
            return paddockctl_fail_session (ctl, id, &error);
          json_builder_end_object (builder);
          continue;
        }

      if (with_diff)
        {
          if (!print_diff (ctl, session, path, NULL, &error))
            return paddockctl_fail_session (ctl, id, &error);
          continue;
        }

      {
        g_autofree char *shown = printable_path (path);
        g_autofree char *shown_old = old_path[0] != '\0' ? printable_path (old_path) : NULL;
        g_autofree char *stats = binary ? g_strdup ("binary")
                                        : g_strdup_printf ("+%u -%u", added, removed);
        g_autofree char *sizes = NULL;
        g_autofree char *shown_link = link_of != NULL ? printable_path (link_of) : NULL;

        /* A file's size, and what it really takes when that is less (holes). */
        if (have_details && g_str_equal (type, "file"))
          {
            g_autofree char *apparent = g_format_size_full (size, G_FORMAT_SIZE_IEC_UNITS);

            if (allocated < size)
              {
                g_autofree char *on_disk = g_format_size_full (allocated, G_FORMAT_SIZE_IEC_UNITS);
                sizes = g_strdup_printf ("  %s (%s on disk)", apparent, on_disk);
              }
            else
              sizes = g_strdup_printf ("  %s", apparent);
          }

        g_print ("%s  %s%s%s%s  %s%s%s%s%s%s%s\n", kind_letter (kind),
                 shown_old != NULL ? shown_old : "", shown_old != NULL ? " -> " : "", shown,
                 g_str_equal (type, "directory") ? "/" : g_str_equal (type, "symlink") ? " (link)" : "",
                 stats, sizes != NULL ? sizes : "",
                 shown_link != NULL ? "  hard link of " : "", shown_link != NULL ? shown_link : "",
                 unappliable != NULL ? "  unappliable: " : "", unappliable != NULL ? unappliable : "",
                 conflict ? "  conflict" : "");
      }
    }

  if (builder != NULL)
    {
      g_autoptr(JsonNode) root = NULL;

      json_builder_end_array (builder);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  else if (!with_diff)
    {
      if (n_changes == 0)
        g_print ("No changes: the stage matches the workspace.\n");
      else if (n_conflicts > 0)
        g_print ("%u change%s, %u in conflict (apply them with --force-path).\n", n_changes,
                 n_changes == 1 ? "" : "s", n_conflicts);
    }
  return PADDOCKCTL_EXIT_OK;
}

/* ---- apply and drop ----------------------------------------------------------- */

#define APPLY_SUMMARY \
  "Apply the session's staged changes to the real workspace in one batch:\n" \
  "all of them, or the --path ones. The batch happens entirely or not at\n" \
  "all. A path the workspace also changed since the session started is a\n" \
  "conflict and is left alone unless named with --force-path. Exits 1 when\n" \
  "conflicts were left."

int
paddockctl_apply (Paddockctl  *ctl,
                  int          argc,
                  char       **argv)
{
  const char *command_path = "paddockctl apply";
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockIpcSession1) session = NULL;
  g_auto(GStrv) applied = NULL;
  g_auto(GStrv) conflicts = NULL;
  g_autoptr(GPtrArray) chosen = g_ptr_array_new ();
  g_autofree char *batch = NULL;
  g_autofree char *id = NULL;
  g_auto(GStrv) paths = NULL;
  g_auto(GStrv) force_paths = NULL;
  const GOptionEntry entries[] = {
    { "path", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &paths, "Apply this change only (repeatable)", "P" },
    { "force-path", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &force_paths,
      "Apply this change even in conflict, overwriting the workspace's version (repeatable)", "P" },
    { NULL }
  };
  const char *const empty[] = { NULL };
  int exit_code = PADDOCKCTL_EXIT_OK;
  guint n_applied, n_conflicts;

  context = paddockctl_option_context_new (ctl, "ID", APPLY_SUMMARY, entries);
  if (!paddockctl_parse_options (ctl, context, command_path, &argc, &argv, &exit_code))
    return exit_code;
  if (!(id = paddockctl_parse_only_session_id (ctl, command_path, argc, argv, &exit_code)))
    return exit_code;

  /* With --path, a forced path is one of the chosen ones too. */
  for (guint i = 0; paths != NULL && paths[i] != NULL; i++)
    g_ptr_array_add (chosen, paths[i]);
  for (guint i = 0; paths != NULL && force_paths != NULL && force_paths[i] != NULL; i++)
    if (!g_strv_contains ((const char *const *) paths, force_paths[i]))
      g_ptr_array_add (chosen, force_paths[i]);
  g_ptr_array_add (chosen, NULL);

  if (!(session = open_session (ctl, id, &error)))
    return paddockctl_fail (ctl, error);
  if (!paddock_ipc_session1_call_apply_sync (session, (const char *const *) chosen->pdata,
                                             force_paths != NULL ? (const char *const *) force_paths : empty,
                                             &applied, &conflicts, &batch, NULL, &error))
    return paddockctl_fail_session (ctl, id, &error);

  n_applied = g_strv_length (applied);
  n_conflicts = g_strv_length (conflicts);
  if (ctl->json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) root = NULL;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "id");
      json_builder_add_string_value (builder, id);
      add_path_array (builder, "applied", applied);
      add_path_array (builder, "conflicts", conflicts);
      json_builder_set_member_name (builder, "journal");
      json_builder_add_string_value (builder, batch);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  else
    {
      g_print ("Applied %u path%s to the workspace (batch %s).\n", n_applied,
               n_applied == 1 ? "" : "s", batch);
      for (guint i = 0; conflicts[i] != NULL; i++)
        {
          g_autofree char *shown = printable_path (conflicts[i]);
          g_print ("conflict, left alone: %s\n", shown);
        }
    }
  return n_conflicts == 0 ? PADDOCKCTL_EXIT_OK : PADDOCKCTL_EXIT_FAILED;
}

int
paddockctl_drop (Paddockctl  *ctl,
                 int          argc,
                 char       **argv)
{
  const char *command_path = "paddockctl drop";
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockIpcSession1) session = NULL;
  g_autofree char *id = NULL;
  g_auto(GStrv) paths = NULL;
  const GOptionEntry entries[] = {
    { "path", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &paths, "Drop this change only (repeatable)", "P" },
    { NULL }
  };
  const char *const empty[] = { NULL };
  int exit_code = PADDOCKCTL_EXIT_OK;

  context = paddockctl_option_context_new (ctl, "ID",
                                           "Discard the session's staged changes (all, or the "
                                           "--path ones): the stage\nshows the workspace again. "
                                           "The session must be stopped.", entries);
  if (!paddockctl_parse_options (ctl, context, command_path, &argc, &argv, &exit_code))
    return exit_code;
  if (!(id = paddockctl_parse_only_session_id (ctl, command_path, argc, argv, &exit_code)))
    return exit_code;

  if (!(session = open_session (ctl, id, &error)))
    return paddockctl_fail (ctl, error);
  if (!paddock_ipc_session1_call_drop_sync (session, paths != NULL ? (const char *const *) paths : empty,
                                            NULL, &error))
    return paddockctl_fail_session (ctl, id, &error);

  if (ctl->json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) root = NULL;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "id");
      json_builder_add_string_value (builder, id);
      json_builder_set_member_name (builder, "dropped");
      json_builder_add_boolean_value (builder, TRUE);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  else
    g_print ("Dropped %s staged changes of %s.\n", paths != NULL ? "the chosen" : "all", id);
  return PADDOCKCTL_EXIT_OK;
}

/* ---- checkpoint ---------------------------------------------------------------- */

int
paddockctl_checkpoint (Paddockctl  *ctl,
                       int          argc,
                       char       **argv)
{
  const char *command_path = "paddockctl checkpoint";
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockIpcSession1) session = NULL;
  g_autoptr(JsonBuilder) builder = NULL;
  g_autofree char *id = NULL;
  const char *action;
  const char *name;
  int exit_code = PADDOCKCTL_EXIT_OK;

  context = paddockctl_option_context_new (ctl, "ID create|list|restore [NAME]",
                                           "Save a copy of the session's stage (create [NAME]), "
                                           "list the copies,\nor put one back (restore NAME; the "
                                           "session must be stopped).", NULL);
  if (!paddockctl_parse_options (ctl, context, command_path, &argc, &argv, &exit_code))
    return exit_code;
  if (argc < 3)
    return paddockctl_usage_error (ctl, command_path, "expected ID and create, list or restore");
  if (argc > 4)
    return paddockctl_usage_error (ctl, command_path, "unexpected argument “%s”", argv[4]);
  if (!(id = paddockctl_parse_session_id (ctl, command_path, argv[1], &exit_code)))
    return exit_code;
  action = argv[2];
  name = argc == 4 ? argv[3] : NULL;
  if (!g_str_equal (action, "create") && !g_str_equal (action, "list") && !g_str_equal (action, "restore"))
    return paddockctl_usage_error (ctl, command_path, "unknown action “%s”: create, list or restore", action);
  if (g_str_equal (action, "restore") && name == NULL)
    return paddockctl_usage_error (ctl, command_path, "restore needs the checkpoint's NAME");
  if (g_str_equal (action, "list") && name != NULL)
    return paddockctl_usage_error (ctl, command_path, "unexpected argument “%s”", name);

  if (!(session = open_session (ctl, id, &error)))
    return paddockctl_fail (ctl, error);
  if (ctl->json)
    {
      builder = json_builder_new ();
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "id");
      json_builder_add_string_value (builder, id);
    }

  if (g_str_equal (action, "create"))
    {
      g_autofree char *created = NULL;

      if (!paddock_ipc_session1_call_create_checkpoint_sync (session, name != NULL ? name : "",
                                                             &created, NULL, &error))
        return paddockctl_fail_session (ctl, id, &error);
      if (builder != NULL)
        {
          json_builder_set_member_name (builder, "checkpoint");
          json_builder_add_string_value (builder, created);
        }
      else
        g_print ("Checkpoint %s of %s saved.\n", created, id);
    }
  else if (g_str_equal (action, "restore"))
    {
      if (!paddock_ipc_session1_call_restore_checkpoint_sync (session, name, NULL, &error))
        return paddockctl_fail_session (ctl, id, &error);
      if (builder != NULL)
        {
          json_builder_set_member_name (builder, "restored");
          json_builder_add_string_value (builder, name);
        }
      else
        g_print ("The stage of %s is back as checkpoint %s left it.\n", id, name);
    }
  else
    {
      g_autoptr(GVariant) list = NULL;
      GVariantIter iter;
      const char *cp_name;
      guint64 created;

      if (!paddock_ipc_session1_call_list_checkpoints_sync (session, &list, NULL, &error))
        return paddockctl_fail_session (ctl, id, &error);
      if (builder != NULL)
        {
          json_builder_set_member_name (builder, "checkpoints");
          json_builder_begin_array (builder);
        }
      g_variant_iter_init (&iter, list);
      while (g_variant_iter_next (&iter, "(&st)", &cp_name, &created))
        {
          g_autoptr(GDateTime) when = g_date_time_new_from_unix_local ((gint64) (created / G_USEC_PER_SEC));
          g_autofree char *when_text = when != NULL ? g_date_time_format (when, "%Y-%m-%d %H:%M:%S") : g_strdup ("?");

          if (builder != NULL)
            {
              json_builder_begin_object (builder);
              json_builder_set_member_name (builder, "name");
              json_builder_add_string_value (builder, cp_name);
              json_builder_set_member_name (builder, "created");
              json_builder_add_int_value (builder, (gint64) created);
              json_builder_end_object (builder);
            }
          else
            g_print ("%-24s %s\n", cp_name, when_text);
        }
      if (builder != NULL)
        json_builder_end_array (builder);
      else if (g_variant_n_children (list) == 0)
        g_print ("No checkpoints.\n");
    }

  if (builder != NULL)
    {
      g_autoptr(JsonNode) root = NULL;

      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  return PADDOCKCTL_EXIT_OK;
}
