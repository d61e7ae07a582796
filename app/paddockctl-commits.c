/* paddockctl-commits.c — the commits an agent made in its session: review, show, apply as a branch
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include <glib/gi18n.h>

#include "paddock-error.h"
#include "paddockctl-escape.h"
#include "paddockctl-private.h"

/* Short ids as git prints them by default. */
#define SHORT_ID_LEN 10

/* A path, subject or author on one line, as `paddockctl review` prints its
 * paths: control, invisible and reordering characters and bytes that are
 * not UTF-8 as escapes (paddockctl-escape.c). The agent wrote all three. */
static char *
printable (const char *text)
{
  return paddockctl_dup_visible_line (text, STDOUT_FILENO);
}

static gboolean
get_diff (PaddockIpcSession1  *session,
          const char          *commit,
          char               **out_text,
          gsize               *out_length,
          GError             **error)
{
  g_autoptr(GVariant) diff = NULL;
  const char *bytes;
  gsize length = 0;

  if (!paddock_ipc_session1_call_get_commit_diff_sync (session, commit, &diff, NULL, error))
    return FALSE;
  bytes = g_variant_get_fixed_array (diff, &length, 1);
  /* A bytestring carries its NUL; the diff is the bytes before it. */
  if (length > 0 && bytes[length - 1] == '\0')
    length--;
  *out_text = g_malloc (length + 1);
  memcpy (*out_text, bytes, length);
  (*out_text)[length] = '\0';
  *out_length = length;
  return TRUE;
}

/**
 * paddockctl_commits_review:
 * @builder: (nullable): the review's JSON object, to add "commits" to; or
 *   %NULL to print a "Commits" section
 * @with_diff: add each commit's diff
 *
 * The commits part of `paddockctl review`. A daemon without ListCommits
 * (an older one) has no commits to show.
 */
gboolean
paddockctl_commits_review (Paddockctl          *ctl,
                           PaddockIpcSession1  *session,
                           const char          *id,
                           JsonBuilder         *builder,
                           gboolean             with_diff,
                           GError             **error)
{
  g_autoptr(GVariant) commits = NULL;
  g_autoptr(GVariant) details = NULL;
  g_autoptr(GError) local_error = NULL;
  const char *head = NULL;
  const char *branch = NULL;
  GVariantIter iter;
  const char *commit, *subject, *author;
  gint64 when;
  GVariant *files;
  gsize n;

  if (!paddock_ipc_session1_call_list_commits_sync (session, &commits, &details, NULL, &local_error))
    {
      g_autofree char *message = NULL;

      if (g_error_matches (local_error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_METHOD))
        return TRUE;
      /* The file review stands on its own: a stage repository we refuse
       * to read (an object only in a pack, one that does not hash to its
       * id) is said, loudly, without hiding the rest. */
      g_dbus_error_strip_remote_error (local_error);
      message = g_utf8_make_valid (local_error->message, -1);
      if (builder != NULL)
        {
          json_builder_set_member_name (builder, "commits_error");
          json_builder_add_string_value (builder, message);
        }
      else
        g_printerr (_("paddockctl: the agent's commits could not be listed: %s\n"), message);
      return TRUE;
    }
  n = g_variant_n_children (commits);
  g_variant_lookup (details, "head", "&s", &head);
  g_variant_lookup (details, "branch", "&s", &branch);

  if (builder != NULL)
    {
      json_builder_set_member_name (builder, "commits");
      json_builder_begin_array (builder);
    }
  else if (n > 0 && !with_diff)
    /* %u, not G_GSIZE_FORMAT: xgettext cannot see through that macro
     * and would cut the message at it. */
    g_print (_("\nCommits the agent made (%u, on %s; paddockctl apply %s --commits "
               "offers them as branch %s):\n"), (guint) MIN (n, G_MAXUINT),
             head != NULL && g_str_has_prefix (head, "refs/heads/") ? head + strlen ("refs/heads/")
                                                                    : _("a detached HEAD"),
             id, branch != NULL ? branch : "?");

  g_variant_iter_init (&iter, commits);
  while (g_variant_iter_next (&iter, "(&s&s&sx@aay)", &commit, &subject, &author, &when, &files))
    {
      g_autoptr(GVariant) owned_files = files;
      g_auto(GStrv) paths = g_variant_dup_bytestring_array (owned_files, NULL);

      if (builder != NULL)
        {
          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "id");
          json_builder_add_string_value (builder, commit);
          json_builder_set_member_name (builder, "subject");
          json_builder_add_string_value (builder, subject);
          json_builder_set_member_name (builder, "author");
          json_builder_add_string_value (builder, author);
          json_builder_set_member_name (builder, "time");
          json_builder_add_int_value (builder, when);
          json_builder_set_member_name (builder, "files");
          json_builder_begin_array (builder);
          for (guint i = 0; paths[i] != NULL; i++)
            {
              g_autofree char *readable = g_utf8_make_valid (paths[i], -1);
              json_builder_add_string_value (builder, readable);
            }
          json_builder_end_array (builder);
          if (with_diff)
            {
              g_autofree char *text = NULL;
              g_autofree char *valid = NULL;
              gsize length;

              if (!get_diff (session, commit, &text, &length, error))
                return FALSE;
              valid = g_utf8_make_valid (text, (gssize) length);
              json_builder_set_member_name (builder, "diff");
              json_builder_add_string_value (builder, valid);
            }
          json_builder_end_object (builder);
          continue;
        }

      if (with_diff)
        {
          g_autofree char *text = NULL;
          gsize length;

          if (!get_diff (session, commit, &text, &length, error))
            return FALSE;
          paddockctl_write_agent_bytes (text, length, FALSE, PADDOCKCTL_ESCAPE_DEFAULT);
          continue;
        }

      {
        g_autofree char *shown_subject = printable (subject);
        g_autofree char *shown_author = printable (author);

        g_print (ngettext ("  %.*s  %s  (%s, %u file)\n", "  %.*s  %s  (%s, %u files)\n",
                           g_strv_length (paths)),
                 SHORT_ID_LEN, commit, shown_subject, shown_author, g_strv_length (paths));
      }
      for (guint i = 0; paths[i] != NULL; i++)
        {
          g_autofree char *shown = printable (paths[i]);
          g_print ("      %s\n", shown);
        }
    }

  if (builder != NULL)
    json_builder_end_array (builder);
  return TRUE;
}

/* `paddockctl review ID --commit SHA`: one commit, as `git show` prints
 * it. SHA may be abbreviated, as long as one commit of the list has it. */
int
paddockctl_commits_show (Paddockctl          *ctl,
                         PaddockIpcSession1  *session,
                         const char          *id,
                         const char          *sha)
{
  g_autoptr(GVariant) commits = NULL;
  g_autoptr(GVariant) details = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *full = NULL;
  g_autofree char *text = NULL;
  GVariantIter iter;
  const char *commit;
  gsize length;
  guint matches = 0;

  if (strlen (sha) < 4 || strlen (sha) > 40 || strspn (sha, "0123456789abcdefABCDEF") != strlen (sha))
    return paddockctl_usage_error (ctl, "paddockctl review", _("--commit takes 4 to 40 hexadecimal digits"));
  if (!paddock_ipc_session1_call_list_commits_sync (session, &commits, &details, NULL, &error))
    return paddockctl_fail_session (ctl, id, &error);
  g_variant_iter_init (&iter, commits);
  while (g_variant_iter_next (&iter, "(&s&s&sx@aay)", &commit, NULL, NULL, NULL, NULL))
    if (g_ascii_strncasecmp (commit, sha, strlen (sha)) == 0)
      {
        matches++;
        g_free (full);
        full = g_strdup (commit);
      }
  if (matches != 1)
    {
      g_set_error (&error, PADDOCK_ERROR, matches == 0 ? PADDOCK_ERROR_NOT_FOUND
                                                       : PADDOCK_ERROR_INVALID_ARGUMENT,
                   matches == 0 ? _("No commit of the session starts with %s")
                                : _("More than one commit of the session starts with %s"), sha);
      return paddockctl_fail (ctl, error);
    }
  if (!get_diff (session, full, &text, &length, &error))
    return paddockctl_fail_session (ctl, id, &error);

  if (ctl->json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) root = NULL;
      g_autofree char *valid = g_utf8_make_valid (text, (gssize) length);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "id");
      json_builder_add_string_value (builder, id);
      json_builder_set_member_name (builder, "commit");
      json_builder_add_string_value (builder, full);
      json_builder_set_member_name (builder, "diff");
      json_builder_add_string_value (builder, valid);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  else
    paddockctl_write_agent_bytes (text, length, FALSE, PADDOCKCTL_ESCAPE_DEFAULT);
  return PADDOCKCTL_EXIT_OK;
}

/* `paddockctl apply ID --commits [--branch NAME]`. */
int
paddockctl_commits_apply (Paddockctl          *ctl,
                          PaddockIpcSession1  *session,
                          const char          *id,
                          const char          *branch)
{
  g_auto(GVariantDict) options = G_VARIANT_DICT_INIT (NULL);
  g_autoptr(GVariant) result = NULL;
  g_autoptr(GError) error = NULL;
  const char *created = NULL;
  const char *commit = NULL;
  guint32 n_commits = 0, n_objects = 0;

  if (branch != NULL)
    g_variant_dict_insert (&options, "branch", "s", branch);
  if (!paddock_ipc_session1_call_apply_commits_sync (session, g_variant_dict_end (&options), &result,
                                                     NULL, &error))
    return paddockctl_fail_session (ctl, id, &error);
  g_variant_lookup (result, "branch", "&s", &created);
  g_variant_lookup (result, "commit", "&s", &commit);
  g_variant_lookup (result, "commits", "u", &n_commits);
  g_variant_lookup (result, "objects", "u", &n_objects);

  if (ctl->json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) root = NULL;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "id");
      json_builder_add_string_value (builder, id);
      json_builder_set_member_name (builder, "branch");
      json_builder_add_string_value (builder, created != NULL ? created : "");
      json_builder_set_member_name (builder, "commit");
      json_builder_add_string_value (builder, commit != NULL ? commit : "");
      json_builder_set_member_name (builder, "commits");
      json_builder_add_int_value (builder, n_commits);
      json_builder_set_member_name (builder, "objects");
      json_builder_add_int_value (builder, n_objects);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  else
    g_print (ngettext ("Created branch %s at %.*s with the session's %u commit; HEAD and your "
                       "branches did not move.\n",
                       "Created branch %s at %.*s with the session's %u commits; HEAD and your "
                       "branches did not move.\n", n_commits),
             created != NULL ? created : "?", SHORT_ID_LEN,
             commit != NULL ? commit : "?", n_commits);
  return PADDOCKCTL_EXIT_OK;
}
