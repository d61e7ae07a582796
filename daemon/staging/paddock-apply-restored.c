/* paddock-apply-restored.c — what a rolled-back batch gave back, so the next one does not see conflicts
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A batch that is rolled back (in place, or by recovery after a crash)
 * renames entries back where they were. A rename gives the moved inode a
 * new ctime, and a folder whose children moved out and back a new mtime
 * too, so the entries no longer match the session's baseline stamps:
 * the next review would list false conflicts and the next apply would
 * skip them, and with them the folders that needed them emptied first
 * ("folder … is not empty"), leaving a partly applied folder.
 *
 * The rollback therefore records, for every entry it put back that is
 * still the entry it saw before the batch (same inode, type, mode; for a
 * file also size and mtime), the stamp it had then and the stamp it has
 * now, in `apply-restored.json` next to the journal (written durably).
 * An apply treats "baseline == from and current == to" as unchanged, and
 * the stage moves its baseline from @from to @to. A writer that changes
 * the entry after the rollback changes its ctime again and is a conflict
 * as before; one that managed to rewrite a file between our rename and
 * our lstat() — keeping its size and mtime — is taken as ours: that window
 * is one syscall wide, and the same writer could have done the same just
 * before the batch's own check.
 *
 * A batch that recovery rolls forward after a crash left the stage's
 * baseline where it was (the daemon died before it could move it): its
 * entries are recorded the same way, from the stamp the batch's check saw
 * to the one the new entry has (or nothing, for a removal), so that the
 * session's next change to one of them is no false conflict.
 *
 * The same folder keeps `last-recovery.json`: the last time recovery
 * finished a batch a daemon left behind, for `paddockctl status`.
 */

#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "paddock-apply-restored.h"
#include "paddock-durable-file.h"

#define RESTORED_NAME       "apply-restored.json"
#define LAST_RECOVERY_NAME  "last-recovery.json"
/* Rollbacks of ever larger batches must not grow this without end. */
#define RESTORED_MAX        (256 * 1024)

void
paddock_apply_restored_free (PaddockApplyRestored *restored)
{
  if (restored == NULL)
    return;
  g_free (restored->path);
  g_free (restored);
}

static void
add_stamp (JsonBuilder            *builder,
           const char             *member,
           const PaddockFileStamp *stamp)
{
  json_builder_set_member_name (builder, member);
  /* Nothing there (a file a rolled-forward batch created or removed). */
  if (!stamp->present)
    {
      json_builder_add_null_value (builder);
      return;
    }
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "mode");
  json_builder_add_int_value (builder, stamp->mode);
  json_builder_set_member_name (builder, "ino");
  json_builder_add_int_value (builder, (gint64) stamp->ino);
  json_builder_set_member_name (builder, "size");
  json_builder_add_int_value (builder, (gint64) stamp->size);
  json_builder_set_member_name (builder, "mtime_ns");
  json_builder_add_int_value (builder, stamp->mtime_ns);
  json_builder_set_member_name (builder, "ctime_ns");
  json_builder_add_int_value (builder, stamp->ctime_ns);
  json_builder_end_object (builder);
}

static gboolean
read_stamp (JsonObject       *obj,
            const char       *member,
            PaddockFileStamp *stamp)
{
  JsonObject *s;

  memset (stamp, 0, sizeof *stamp);
  if (json_object_has_member (obj, member) && JSON_NODE_HOLDS_NULL (json_object_get_member (obj, member)))
    return TRUE;
  if (!json_object_has_member (obj, member) ||
      !JSON_NODE_HOLDS_OBJECT (json_object_get_member (obj, member)))
    return FALSE;
  s = json_object_get_object_member (obj, member);
  stamp->present = TRUE;
  stamp->mode = (guint32) json_object_get_int_member_with_default (s, "mode", 0);
  stamp->ino = (guint64) json_object_get_int_member_with_default (s, "ino", 0);
  stamp->size = (guint64) json_object_get_int_member_with_default (s, "size", 0);
  stamp->mtime_ns = json_object_get_int_member_with_default (s, "mtime_ns", 0);
  stamp->ctime_ns = json_object_get_int_member_with_default (s, "ctime_ns", 0);
  return TRUE;
}

/**
 * paddock_apply_restored_load:
 *
 * Returns: (transfer full): path → #PaddockApplyRestored; empty when there
 *   is no record or it cannot be read (then every such entry is a
 *   conflict, the safe side).
 */
GHashTable *
paddock_apply_restored_load (const char *journal_dir)
{
  g_autofree char *file = g_build_filename (journal_dir, RESTORED_NAME, NULL);
  g_autofree char *contents = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  GHashTable *table = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                             (GDestroyNotify) paddock_apply_restored_free);
  JsonArray *array;

  if (!g_file_get_contents (file, &contents, NULL, NULL) ||
      !json_parser_load_from_data (parser, contents, -1, NULL) ||
      !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return table;
  array = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "entries");
  for (guint i = 0; array != NULL && i < json_array_get_length (array); i++)
    {
      JsonNode *node = json_array_get_element (array, i);
      JsonObject *obj;
      const char *b64;
      g_autoptr(PaddockApplyRestored) r = NULL;
      gsize len = 0;
      guchar *raw;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        continue;
      obj = json_node_get_object (node);
      b64 = json_object_get_string_member_with_default (obj, "path_base64", NULL);
      if (b64 == NULL)
        continue;
      r = g_new0 (PaddockApplyRestored, 1);
      raw = g_base64_decode (b64, &len);
      if (len == 0 || memchr (raw, '\0', len) != NULL)
        {
          g_free (raw);
          continue;
        }
      r->path = g_strndup ((const char *) raw, len);
      g_free (raw);
      if (!read_stamp (obj, "from", &r->from) || !read_stamp (obj, "to", &r->to))
        continue;
      {
        char *key = r->path;

        g_hash_table_replace (table, key, g_steal_pointer (&r));
      }
    }
  return table;
}

static gboolean
save (const char  *journal_dir,
      GHashTable  *table,
      GError     **error)
{
  g_autofree char *file = g_build_filename (journal_dir, RESTORED_NAME, NULL);
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;
  GHashTableIter iter;
  gpointer value;

  if (g_hash_table_size (table) == 0)
    {
      if (g_unlink (file) != 0 && errno != ENOENT)
        {
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno),
                       "Could not remove %s: %s", file, g_strerror (errno));
          return FALSE;
        }
      return TRUE;
    }

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "version");
  json_builder_add_int_value (builder, 1);
  json_builder_set_member_name (builder, "entries");
  json_builder_begin_array (builder);
  g_hash_table_iter_init (&iter, table);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      PaddockApplyRestored *r = value;
      g_autofree char *b64 = g_base64_encode ((const guchar *) r->path, strlen (r->path));

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "path_base64");
      json_builder_add_string_value (builder, b64);
      add_stamp (builder, "from", &r->from);
      add_stamp (builder, "to", &r->to);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (gen, root);
  text = json_generator_to_data (gen, NULL);
  return paddock_durable_file_replace (file, text, -1, 0600, error);
}

/**
 * paddock_apply_restored_add:
 * @restored: (element-type PaddockApplyRestored): entries a rollback put back
 *
 * Records @restored. An entry restored again by a later rollback keeps its
 * first @from (the session's baseline), so chains of failed batches still
 * match it.
 */
gboolean
paddock_apply_restored_add (const char  *journal_dir,
                            GPtrArray   *restored,
                            GError     **error)
{
  g_autoptr(GHashTable) table = NULL;

  if (restored == NULL || restored->len == 0)
    return TRUE;
  table = paddock_apply_restored_load (journal_dir);
  for (guint i = 0; i < restored->len; i++)
    {
      PaddockApplyRestored *r = g_ptr_array_index (restored, i);
      PaddockApplyRestored *old = g_hash_table_lookup (table, r->path);
      PaddockApplyRestored *copy = g_new0 (PaddockApplyRestored, 1);

      copy->path = g_strdup (r->path);
      copy->from = r->from;
      copy->to = r->to;
      if (old != NULL && paddock_file_stamp_equal (&old->to, &r->from))
        copy->from = old->from;
      if (g_hash_table_size (table) >= RESTORED_MAX && old == NULL)
        {
          paddock_apply_restored_free (copy);
          continue;  /* not recorded: a conflict, never a silent overwrite */
        }
      g_hash_table_replace (table, copy->path, copy);
    }
  return save (journal_dir, table, error);
}

/* Drops the records of @paths (char *): a batch applied them. */
void
paddock_apply_restored_forget (const char *journal_dir,
                               GPtrArray  *paths)
{
  g_autoptr(GHashTable) table = paddock_apply_restored_load (journal_dir);
  g_autoptr(GError) error = NULL;
  gboolean changed = FALSE;

  for (guint i = 0; paths != NULL && i < paths->len; i++)
    changed |= g_hash_table_remove (table, g_ptr_array_index (paths, i));
  if (changed && !save (journal_dir, table, &error))
    g_message ("Could not update %s/" RESTORED_NAME ": %s", journal_dir, error->message);
}

/* TRUE when @current is what a rollback made of the entry that matched
 * @baseline. */
gboolean
paddock_apply_restored_matches (GHashTable             *table,
                                const char             *path,
                                const PaddockFileStamp *baseline,
                                const PaddockFileStamp *current)
{
  PaddockApplyRestored *r = table != NULL ? g_hash_table_lookup (table, path) : NULL;

  return r != NULL && paddock_file_stamp_equal (&r->from, baseline) &&
         paddock_file_stamp_equal (&r->to, current);
}

/**
 * paddock_apply_record_recovery:
 * @ledger_file: (nullable): the apply ledger, which gets a line too
 * @outcome: "rolled-back" or "rolled-forward"
 *
 * Logs a recovery and records it in `last-recovery.json` and the ledger.
 */
gboolean
paddock_apply_record_recovery (const char  *journal_dir,
                               const char  *ledger_file,
                               const char  *batch,
                               const char  *outcome,
                               guint        n_restored,
                               GError     **error)
{
  g_autofree char *file = g_build_filename (journal_dir, LAST_RECOVERY_NAME, NULL);
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *time = g_date_time_format_iso8601 (now);
  g_autofree char *text = NULL;

  g_message ("Recovered an interrupted apply: batch %s %s (%u entries put back)",
             batch, outcome, n_restored);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "time");
  json_builder_add_string_value (builder, time);
  /* Not "batch": the ledger tells a committed batch by that member. */
  json_builder_set_member_name (builder, "recovered_batch");
  json_builder_add_string_value (builder, batch);
  json_builder_set_member_name (builder, "recovery");
  json_builder_add_string_value (builder, outcome);
  json_builder_set_member_name (builder, "restored");
  json_builder_add_int_value (builder, n_restored);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (gen, root);
  text = json_generator_to_data (gen, NULL);

  if (ledger_file != NULL)
    {
      g_autofree char *line = g_strconcat (text, "\n", NULL);
      g_autoptr(GFile) ledger = g_file_new_for_path (ledger_file);
      g_autoptr(GFileOutputStream) out = g_file_append_to (ledger, G_FILE_CREATE_PRIVATE, NULL, error);

      /* One write of the whole line in append mode, as the batches' lines. */
      if (out == NULL ||
          !g_output_stream_write_all (G_OUTPUT_STREAM (out), line, strlen (line), NULL, NULL, error) ||
          !g_output_stream_close (G_OUTPUT_STREAM (out), NULL, error))
        return FALSE;
    }
  return paddock_durable_file_replace (file, text, -1, 0600, error);
}

/**
 * paddock_apply_dup_last_recovery:
 *
 * Returns: (nullable): the JSON object of the last recovery, if any
 */
char *
paddock_apply_dup_last_recovery (const char *journal_dir)
{
  g_autofree char *file = g_build_filename (journal_dir, LAST_RECOVERY_NAME, NULL);
  char *contents = NULL;

  if (!g_file_get_contents (file, &contents, NULL, NULL))
    return NULL;
  return contents;
}
