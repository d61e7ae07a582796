/* paddockctl-review.c — review, apply, drop and checkpoint: a session's staged changes
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gi18n.h>

#include "paddock-error.h"
#include "paddockctl-escape.h"
#include "paddockctl-private.h"

/* A review or an apply of a large tree takes longer than a usual call. */
#define STAGING_CALL_TIMEOUT_MS (10 * 60 * 1000)

/* A path as a person can read it on one line: controls, invisible and
 * reordering characters and bytes that are not UTF-8 as escapes
 * (paddockctl-escape.c), everything else as is. */
static char *
printable_path (const char *path)
{
  return paddockctl_dup_visible_line (path, STDOUT_FILENO);
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
  N_("List the changes the session made in its stage, against the workspace as\n" \
  "it is now: A added, M modified, D deleted, R renamed (old -> new),\n" \
  "T type changed, X mode changed; “conflict” marks a path the workspace\n" \
  "also changed since the session started. With --diff, the unified diff of\n" \
  "every change, or of PATH only.\n" \
  "\n" \
  "Repository metadata (.git, .gitmodules, nested or bare repositories, .hg,\n" \
  ".svn, .bzr, _darcs, .jj…) is listed apart and never applied unless named\n" \
  "with apply --include-metadata. The review token pins the listed content:\n" \
  "apply --review TOKEN applies exactly it or nothing. On a terminal a diff's\n" \
  "control and invisible characters are shown as escapes (^[, <U+202E>),\n" \
  "unless --raw. Then the commits the agent made in the session's repository\n" \
  "(with --diff, each as git show prints it); --commit SHA shows one of them.")

/* With @token, the diff of the content as that review read it (what its
 * token lands); without, of the stage as it is now. */
static gboolean
print_diff (Paddockctl         *ctl,
            PaddockIpcSession1 *session,
            const char         *token,
            const char         *path,
            JsonBuilder        *builder,
            gboolean            raw,
            GError            **error)
{
  g_autoptr(GVariant) diff = NULL;
  gsize length = 0;
  const char *bytes;

  if (token != NULL
      ? !paddock_ipc_session1_call_get_reviewed_diff_sync (session, token, path, &diff, NULL, error)
      : !paddock_ipc_session1_call_get_diff_sync (session, path, &diff, NULL, error))
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
    paddockctl_write_agent_bytes (bytes, length, raw, PADDOCKCTL_ESCAPE_DEFAULT);
  return TRUE;
}

/* One review row, as JSON members or one human line. */
static gboolean
print_row (Paddockctl         *ctl,
           PaddockIpcSession1 *session,
           const char         *token,
           JsonBuilder        *builder,
           gboolean            with_diff,
           gboolean            raw,
           GHashTable         *details,
           GVariant           *row,
           GError            **error)
{
  GVariant *dict = NULL;
  guint64 size = 0, allocated = 0;
  const char *link_of = NULL;
  const char *unappliable = NULL;
  const char *path, *old_path, *kind, *type;
  const char *reason = NULL;
  gboolean binary, conflict;
  guint32 added, removed;

  if (g_variant_n_children (row) == 9)
    g_variant_get (row, "(^&ay^&ay&s&sbuub&s)", &path, &old_path, &kind, &type,
                   &binary, &added, &removed, &conflict, &reason);
  else
    g_variant_get (row, "(^&ay^&ay&s&sbuub)", &path, &old_path, &kind, &type,
                   &binary, &added, &removed, &conflict);

  /* Sizes, hard links and unappliable rows (ListChangeDetails), where the
   * daemon said them for this path. */
  dict = details != NULL ? g_hash_table_lookup (details, path) : NULL;
  if (dict != NULL)
    {
      g_variant_lookup (dict, "size", "t", &size);
      g_variant_lookup (dict, "allocated", "t", &allocated);
      g_variant_lookup (dict, "hardlink_of", "^&ay", &link_of);
      g_variant_lookup (dict, "unappliable", "&s", &unappliable);
    }

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
      if (reason != NULL)
        {
          json_builder_set_member_name (builder, "reason");
          json_builder_add_string_value (builder, reason);
        }
      if (dict != NULL)
        {
          json_builder_set_member_name (builder, "size");
          json_builder_add_int_value (builder, (gint64) MIN (size, (guint64) G_MAXINT64));
          json_builder_set_member_name (builder, "allocated");
          json_builder_add_int_value (builder, (gint64) MIN (allocated, (guint64) G_MAXINT64));
          add_path_member (builder, "hardlink_of", link_of);
          json_builder_set_member_name (builder, "unappliable");
          if (unappliable != NULL)
            json_builder_add_string_value (builder, unappliable);
          else
            json_builder_add_null_value (builder);
        }
      if (with_diff && !print_diff (ctl, session, token, path, builder, raw, error))
        return FALSE;
      json_builder_end_object (builder);
      return TRUE;
    }

  if (with_diff)
    return print_diff (ctl, session, token, path, NULL, raw, error);

  {
    g_autofree char *shown = printable_path (path);
    g_autofree char *shown_old = old_path[0] != '\0' ? printable_path (old_path) : NULL;
    g_autofree char *stats = binary ? g_strdup ("binary")
                                    : g_strdup_printf ("+%u -%u", added, removed);
    g_autofree char *sizes = NULL;
    g_autofree char *shown_link = link_of != NULL ? printable_path (link_of) : NULL;

    /* A file's size, and what it really takes when that is less (holes). */
    if (dict != NULL && g_str_equal (type, "file"))
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

    g_print ("%s  %s%s%s%s  %s%s%s%s%s%s%s%s%s\n", kind_letter (kind),
             shown_old != NULL ? shown_old : "", shown_old != NULL ? " -> " : "", shown,
             g_str_equal (type, "directory") ? "/" : g_str_equal (type, "symlink") ? " (link)" : "",
             stats, sizes != NULL ? sizes : "",
             shown_link != NULL ? "  hard link of " : "", shown_link != NULL ? shown_link : "",
             unappliable != NULL ? "  unappliable: " : "", unappliable != NULL ? unappliable : "",
             conflict ? "  conflict" : "",
             reason != NULL ? "  " : "", reason != NULL ? reason : "");
  }
  return TRUE;
}

static guint
count_conflicts (GVariant *rows)
{
  guint n = 0;

  for (gsize i = 0; i < g_variant_n_children (rows); i++)
    {
      g_autoptr(GVariant) row = g_variant_get_child_value (rows, i);
      g_autoptr(GVariant) conflict = g_variant_get_child_value (row, 7);

      n += g_variant_get_boolean (conflict) ? 1 : 0;
    }
  return n;
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
  g_autoptr(GVariant) result = NULL;
  g_autoptr(GVariant) changes = NULL;
  g_autoptr(GVariant) metadata = NULL;
  const char *token = NULL;
  g_autofree char *id = NULL;
  gboolean with_diff = FALSE;
  const char *only_path = NULL;
  g_autofree char *review_token = NULL;
  gboolean raw = FALSE;
  g_autofree char *only_commit = NULL;
  const GOptionEntry entries[] = {
    { "diff", 0, 0, G_OPTION_ARG_NONE, &with_diff, N_("Show the unified diff of each change"), NULL },
    { "review", 0, 0, G_OPTION_ARG_STRING, &review_token,
      N_("With --diff PATH: the diff as that review read it (what apply --review TOKEN lands)"), N_("TOKEN") },
    { "raw", 0, 0, G_OPTION_ARG_NONE, &raw,
      N_("Print the diff's bytes as they are, even on a terminal"), NULL },
    { "commit", 0, 0, G_OPTION_ARG_STRING, &only_commit, N_("Show this commit of the agent's"), N_("SHA") },
    { NULL }
  };
  g_autoptr(JsonBuilder) builder = NULL;
  int exit_code = PADDOCKCTL_EXIT_OK;
  guint n_conflicts = 0;
  guint n_changes = 0;
  guint n_metadata = 0;
  g_autoptr(GVariant) details = NULL;
  g_autoptr(GHashTable) details_by_path = NULL;

  context = paddockctl_option_context_new (ctl, "ID [PATH]", REVIEW_SUMMARY, entries);
  if (!paddockctl_parse_options (ctl, context, command_path, &argc, &argv, &exit_code))
    return exit_code;
  if (argc < 2)
    return paddockctl_usage_error (ctl, command_path, _("missing session ID"));
  if (argc > 3)
    return paddockctl_usage_error (ctl, command_path, _("unexpected argument “%s”"), argv[3]);
  if (argc == 3)
    {
      if (!with_diff)
        return paddockctl_usage_error (ctl, command_path, _("a PATH goes with --diff"));
      only_path = argv[2];
    }
  if (review_token != NULL && only_path == NULL)
    return paddockctl_usage_error (ctl, command_path, _("--review TOKEN goes with --diff PATH"));
  if (!(id = paddockctl_parse_session_id (ctl, command_path, argv[1], &exit_code)))
    return exit_code;
  if (!(session = open_session (ctl, id, &error)))
    return paddockctl_fail (ctl, error);

  if (only_commit != NULL)
    {
      if (only_path != NULL)
        return paddockctl_usage_error (ctl, command_path, _("--commit goes without a PATH"));
      return paddockctl_commits_show (ctl, session, id, only_commit);
    }

  if (only_path != NULL)
    {
      if (ctl->json)
        {
          g_autoptr(JsonNode) root = NULL;

          builder = json_builder_new ();
          json_builder_begin_object (builder);
          add_path_member (builder, "path", only_path);
        }
      if (!print_diff (ctl, session, review_token, only_path, builder, raw, &error))
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

  if (!paddock_ipc_session1_call_review_sync (session, g_variant_new ("a{sv}", NULL), &result,
                                              NULL, &error))
    return paddockctl_fail_session (ctl, id, &error);
  changes = g_variant_lookup_value (result, "changes", G_VARIANT_TYPE ("a(ayayssbuub)"));
  metadata = g_variant_lookup_value (result, "metadata", G_VARIANT_TYPE ("a(ayayssbuubs)"));
  if (changes == NULL || metadata == NULL || !g_variant_lookup (result, "token", "&s", &token))
    {
      g_set_error_literal (&error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                           _("The daemon's review lacks its changes, metadata or token"));
      return paddockctl_fail (ctl, error);
    }
  n_changes = (guint) g_variant_n_children (changes);
  n_metadata = (guint) g_variant_n_children (metadata);
  /* Sizes, hard links and unappliable rows; a daemon without the method
   * (older) leaves them out. By path: they come from a review of their own. */
  {
    g_autoptr(GError) details_error = NULL;

    details_by_path = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) g_variant_unref);
    if (paddock_ipc_session1_call_list_change_details_sync (session, &details, NULL, &details_error))
      for (gsize i = 0; i < g_variant_n_children (details); i++)
        {
          const char *detail_path = NULL;
          GVariant *dict = NULL;

          g_variant_get_child (details, i, "(^&ay@a{sv})", &detail_path, &dict);
          g_hash_table_replace (details_by_path, (gpointer) detail_path, dict);
        }
  }
  n_conflicts = count_conflicts (changes);

  if (ctl->json)
    {
      builder = json_builder_new ();
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "id");
      json_builder_add_string_value (builder, id);
      json_builder_set_member_name (builder, "token");
      json_builder_add_string_value (builder, token);
    }

  for (guint list = 0; list < 2; list++)
    {
      GVariant *rows = list == 0 ? changes : metadata;

      if (builder != NULL)
        {
          json_builder_set_member_name (builder, list == 0 ? "changes" : "metadata");
          json_builder_begin_array (builder);
        }
      else if (list == 1 && n_metadata > 0 && !with_diff)
        g_print (_("%sRepository metadata, never applied unless named with --include-metadata "
                   "(a VCS runs what it says):\n"), n_changes > 0 ? "\n" : "");
      for (gsize i = 0; i < g_variant_n_children (rows); i++)
        {
          g_autoptr(GVariant) row = g_variant_get_child_value (rows, i);

          if (builder == NULL && list == 1 && !with_diff)
            g_print ("  ");
          if (!print_row (ctl, session, token, builder, with_diff, raw, details_by_path, row, &error))
            return paddockctl_fail_session (ctl, id, &error);
        }
      if (builder != NULL)
        json_builder_end_array (builder);
    }

  if (builder != NULL)
    {
      g_autoptr(JsonNode) root = NULL;

      if (!paddockctl_commits_review (ctl, session, id, builder, with_diff, &error))
        return paddockctl_fail_session (ctl, id, &error);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  else if (!with_diff)
    {
      if (n_changes == 0 && n_metadata == 0)
        g_print (_("No changes: the stage matches the workspace.\n"));
      else if (n_conflicts > 0)
        g_print (ngettext ("%u change, %u in conflict (apply them with --force-path).\n",
                           "%u changes, %u in conflict (apply them with --force-path).\n",
                           n_changes),
                 n_changes, n_conflicts);
      if (n_changes + n_metadata > 0)
        g_print (_("Review token %s: “paddockctl apply --review %s %s” applies exactly this content, "
                   "or nothing.\n"), token, token, id);
    }
  if (builder == NULL && !paddockctl_commits_review (ctl, session, id, NULL, with_diff, &error))
    return paddockctl_fail_session (ctl, id, &error);
  return PADDOCKCTL_EXIT_OK;
}

/* ---- apply and drop ----------------------------------------------------------- */

#define APPLY_SUMMARY \
  N_("Apply the session's staged changes to the real workspace in one batch:\n" \
  "all of them, or the --path ones. The batch happens entirely or not at\n" \
  "all. A path the workspace also changed since the session started is a\n" \
  "conflict and is left alone unless named with --force-path. Exits 1 when\n" \
  "conflicts were left.\n" \
  "\n" \
  "With --review TOKEN (from “paddockctl review”) the rows of that review\n" \
  "are applied with exactly the content it listed: if the agent changed any\n" \
  "of them since, nothing is applied. Without it, apply takes a review of its\n" \
  "own first and holds the batch to that. Repository metadata (.git, …) is\n" \
  "applied only as named with --include-metadata.\n" \
  "\n" \
  "With --commits, instead, the commits the agent made in the session's\n" \
  "repository become a new branch of the workspace's (paddock/ID, or\n" \
  "--branch NAME; an existing one is refused): no file, HEAD or branch of\n" \
  "yours changes.")

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
  g_auto(GStrv) metadata_paths = NULL;
  g_autofree char *review_token = NULL;
  g_autofree char *fresh_token = NULL;
  guint32 pinned = 0;
  gboolean commits = FALSE;
  g_autofree char *branch = NULL;
  const GOptionEntry entries[] = {
    { "path", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &paths, N_("Apply this change only (repeatable)"), N_("P") },
    { "commits", 0, 0, G_OPTION_ARG_NONE, &commits,
      N_("Create a branch of the workspace's repository from the agent's commits"), NULL },
    { "branch", 0, 0, G_OPTION_ARG_STRING, &branch, N_("With --commits: the branch's name"), N_("NAME") },
    { "force-path", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &force_paths,
      N_("Apply this change even in conflict, overwriting the workspace's version (repeatable)"), N_("P") },
    { "review", 0, 0, G_OPTION_ARG_STRING, &review_token,
      N_("Apply that review's rows with exactly the content it listed, or nothing"), N_("TOKEN") },
    { "include-metadata", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &metadata_paths,
      N_("Apply this repository-metadata row too (repeatable; it can run code in your git)"), N_("PATH") },
    { NULL }
  };
  g_autoptr(GVariant) apply_result = NULL;
  GVariantDict options;
  int exit_code = PADDOCKCTL_EXIT_OK;
  guint n_applied, n_conflicts;

  context = paddockctl_option_context_new (ctl, "ID", APPLY_SUMMARY, entries);
  if (!paddockctl_parse_options (ctl, context, command_path, &argc, &argv, &exit_code))
    return exit_code;
  if (!(id = paddockctl_parse_only_session_id (ctl, command_path, argc, argv, &exit_code)))
    return exit_code;
  if (branch != NULL && !commits)
    return paddockctl_usage_error (ctl, command_path, _("--branch goes with --commits"));
  if (commits)
    {
      if (paths != NULL || force_paths != NULL || review_token != NULL || metadata_paths != NULL)
        return paddockctl_usage_error (ctl, command_path,
                                       _("--commits goes without --path, --force-path, --review or --include-metadata"));
      if (!(session = open_session (ctl, id, &error)))
        return paddockctl_fail (ctl, error);
      return paddockctl_commits_apply (ctl, session, id, branch);
    }

  /* With --path, a forced path is one of the chosen ones too. */
  for (guint i = 0; paths != NULL && paths[i] != NULL; i++)
    g_ptr_array_add (chosen, paths[i]);
  for (guint i = 0; paths != NULL && force_paths != NULL && force_paths[i] != NULL; i++)
    if (!g_strv_contains ((const char *const *) paths, force_paths[i]))
      g_ptr_array_add (chosen, force_paths[i]);
  g_ptr_array_add (chosen, NULL);

  if (!(session = open_session (ctl, id, &error)))
    return paddockctl_fail (ctl, error);

  /* Metadata tells git (hg, …) what to run: applying it is the user's
   * deliberate act, and they are told so every time. */
  for (guint i = 0; metadata_paths != NULL && metadata_paths[i] != NULL; i++)
    {
      g_autofree char *shown = printable_path (metadata_paths[i]);
      paddockctl_warn (_("Warning: applying repository metadata “%s”: git (or another VCS) in your "
                         "folder will act on it, outside any sandbox"), shown);
    }

  if (review_token == NULL)
    {
      /* No review named: take one now and hold the batch to it, so what
       * lands is what that review read even if the agent writes on. */
      g_autoptr(GVariant) review = NULL;
      const char *token = NULL;

      if (!paddock_ipc_session1_call_review_sync (session, g_variant_new ("a{sv}", NULL), &review,
                                                  NULL, &error))
        return paddockctl_fail_session (ctl, id, &error);
      if (!g_variant_lookup (review, "token", "&s", &token))
        {
          g_set_error_literal (&error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED, _("The daemon's review has no token"));
          return paddockctl_fail (ctl, error);
        }
      (void) g_variant_lookup (review, "pinned", "u", &pinned);
      fresh_token = g_strdup (token);
      /* One line, on stderr so that --json keeps one document on stdout. */
      paddockctl_warn (ngettext ("Pinned %u path to the bytes of a fresh review (token %s); content the agent "
                                 "changes before the batch is written is refused",
                                 "Pinned %u paths to the bytes of a fresh review (token %s); content the agent "
                                 "changes before the batch is written is refused",
                                 pinned),
                       pinned, fresh_token);
    }

  g_variant_dict_init (&options, NULL);
  if (force_paths != NULL)
    g_variant_dict_insert_value (&options, "force_paths",
                                 g_variant_new_bytestring_array ((const char *const *) force_paths, -1));
  if (metadata_paths != NULL)
    g_variant_dict_insert_value (&options, "metadata_paths",
                                 g_variant_new_bytestring_array ((const char *const *) metadata_paths, -1));
  if (!paddock_ipc_session1_call_apply_reviewed_sync (session,
                                                      review_token != NULL ? review_token : fresh_token,
                                                      (const char *const *) chosen->pdata,
                                                      g_variant_dict_end (&options), &apply_result,
                                                      NULL, &error))
    return paddockctl_fail_session (ctl, id, &error);
  if (!g_variant_lookup (apply_result, "applied", "^aay", &applied) ||
      !g_variant_lookup (apply_result, "conflicts", "^aay", &conflicts) ||
      !g_variant_lookup (apply_result, "batch", "s", &batch))
    {
      g_set_error_literal (&error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                           _("The daemon's apply result lacks applied, conflicts or batch"));
      return paddockctl_fail (ctl, error);
    }

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
      json_builder_set_member_name (builder, "review");
      json_builder_add_string_value (builder, review_token != NULL ? review_token : fresh_token);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  else
    {
      g_print (ngettext ("Applied %u path to the workspace (batch %s).\n",
                         "Applied %u paths to the workspace (batch %s).\n", n_applied),
               n_applied, batch);
      for (guint i = 0; conflicts[i] != NULL; i++)
        {
          g_autofree char *shown = printable_path (conflicts[i]);
          g_print (_("conflict, left alone: %s\n"), shown);
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
    { "path", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &paths, N_("Drop this change only (repeatable)"), N_("P") },
    { NULL }
  };
  const char *const empty[] = { NULL };
  int exit_code = PADDOCKCTL_EXIT_OK;

  context = paddockctl_option_context_new (ctl, "ID",
                                           N_("Discard the session's staged changes (all, or the "
                                              "--path ones): the stage\nshows the workspace again. "
                                              "The session must be stopped."), entries);
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
    g_print (paths != NULL ? _("Dropped the chosen staged changes of %s.\n")
                           : _("Dropped all staged changes of %s.\n"), id);
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
                                           N_("Save a copy of the session's stage (create [NAME]), "
                                              "list the copies,\nor put one back (restore NAME; the "
                                              "session must be stopped)."), NULL);
  if (!paddockctl_parse_options (ctl, context, command_path, &argc, &argv, &exit_code))
    return exit_code;
  if (argc < 3)
    return paddockctl_usage_error (ctl, command_path, _("expected ID and create, list or restore"));
  if (argc > 4)
    return paddockctl_usage_error (ctl, command_path, _("unexpected argument “%s”"), argv[4]);
  if (!(id = paddockctl_parse_session_id (ctl, command_path, argv[1], &exit_code)))
    return exit_code;
  action = argv[2];
  name = argc == 4 ? argv[3] : NULL;
  if (!g_str_equal (action, "create") && !g_str_equal (action, "list") && !g_str_equal (action, "restore"))
    return paddockctl_usage_error (ctl, command_path, _("unknown action “%s”: create, list or restore"), action);
  if (g_str_equal (action, "restore") && name == NULL)
    return paddockctl_usage_error (ctl, command_path, _("restore needs the checkpoint's NAME"));
  if (g_str_equal (action, "list") && name != NULL)
    return paddockctl_usage_error (ctl, command_path, _("unexpected argument “%s”"), name);

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
        g_print (_("Checkpoint %s of %s saved.\n"), created, id);
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
        g_print (_("The stage of %s is back as checkpoint %s left it.\n"), id, name);
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
            {
              g_autofree char *shown = paddockctl_dup_for_terminal (cp_name, STDOUT_FILENO,
                                                                    PADDOCKCTL_ESCAPE_ONE_LINE);
              g_print ("%-24s %s\n", shown, when_text);
            }
        }
      if (builder != NULL)
        json_builder_end_array (builder);
      else if (g_variant_n_children (list) == 0)
        g_print (_("No checkpoints.\n"));
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
