/* paddock-apply-recover.c — recovery: a batch a crash left, rolled back or forward from its journal
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Part of the journaled apply (the steps: paddock-apply.c's head comment).
 */

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "paddock-apply.h"
#include "paddock-apply-restored.h"
#include "paddock-autofd.h"
#include "paddock-compat-openat2.h"
#include "paddock-compat-rename.h"
#include "paddock-content-hash.h"
#include "paddock-durable-file.h"
#include "paddock-sparse-copy.h"
#include "paddock-apply-private.h"

/* ---- recovery ---------------------------------------------------------- */

typedef struct {
  OpKind   kind;
  char    *parent;
  char    *name;
  char    *temp;
  gboolean existed;
  guint64  ino;
  guint32  old_mode;
  PaddockFileStamp check;
} JournalOp;

static void
journal_op_free (JournalOp *op)
{
  g_free (op->parent);
  g_free (op->name);
  g_free (op->temp);
  g_free (op);
}

static char *
b64_member (JsonObject *obj,
            const char *member)
{
  const char *b64 = json_object_get_string_member_with_default (obj, member, NULL);
  gsize len = 0;
  guchar *raw;

  if (b64 == NULL)
    return NULL;
  raw = g_base64_decode (b64, &len);
  if (memchr (raw, '\0', len) != NULL)
    {
      g_free (raw);
      return NULL;
    }
  raw = g_realloc (raw, len + 1);
  raw[len] = '\0';
  return (char *) raw;
}

static gboolean
corrupt (GError     **error,
         const char  *path)
{
  g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_CORRUPT_JOURNAL,
               "The apply journal %s is damaged", path);
  return FALSE;
}

/* A name that only a batch can have made: recovery never touches others. */
static gboolean
is_our_name (const char *name,
             const char *prefix)
{
  return name != NULL && g_str_has_prefix (name, prefix) && strchr (name, '/') == NULL;
}

gboolean
recover_locked (const char  *journal_dir,
                const char  *workspace,
                gboolean    *out_done,
                GError     **error)
{
  g_autofree char *journal_path = g_build_filename (journal_dir, JOURNAL_NAME, NULL);
  g_autofree char *contents = NULL;
  g_autofree char *prefix = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GPtrArray) ops = g_ptr_array_new_with_free_func ((GDestroyNotify) journal_op_free);
  g_autoptr(GError) local_error = NULL;
  paddock_autofd int w_fd = -1;
  JsonObject *root;
  JsonArray *array;
  const char *state;
  const char *batch;
  const char *outcome = NULL;
  gboolean ok = TRUE;
  g_autoptr(GPtrArray) restored =
    g_ptr_array_new_with_free_func ((GDestroyNotify) paddock_apply_restored_free);

  if (out_done != NULL)
    *out_done = FALSE;

  if (!g_file_get_contents (journal_path, &contents, NULL, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return TRUE;
      g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_FAILED,
                   "Could not read the apply journal: %s", local_error->message);
      return FALSE;
    }

  if (!json_parser_load_from_data (parser, contents, -1, NULL) ||
      !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return corrupt (error, journal_path);
  root = json_node_get_object (json_parser_get_root (parser));
  state = json_object_get_string_member_with_default (root, "state", NULL);
  batch = json_object_get_string_member_with_default (root, "batch", NULL);
  if (state == NULL || batch == NULL || !json_object_has_member (root, "ops") ||
      !JSON_NODE_HOLDS_ARRAY (json_object_get_member (root, "ops")))
    return corrupt (error, journal_path);
  prefix = g_strdup_printf (TEMP_PREFIX "%s-", batch);

  array = json_object_get_array_member (root, "ops");
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *node = json_array_get_element (array, i);
      JsonObject *obj;
      JournalOp *op;
      const char *kind;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        return corrupt (error, journal_path);
      obj = json_node_get_object (node);
      op = g_new0 (JournalOp, 1);
      g_ptr_array_add (ops, op);
      kind = json_object_get_string_member_with_default (obj, "kind", "");
      if (strcmp (kind, "remove") == 0)
        op->kind = OP_REMOVE;
      else if (strcmp (kind, "dir") == 0)
        op->kind = OP_DIR;
      else if (strcmp (kind, "chmod") == 0)
        op->kind = OP_CHMOD;
      else if (strcmp (kind, "put") == 0)
        op->kind = OP_PUT;
      else
        return corrupt (error, journal_path);
      op->parent = b64_member (obj, "parent");
      op->name = b64_member (obj, "name");
      op->temp = g_strdup (json_object_get_string_member_with_default (obj, "temp", NULL));
      op->existed = json_object_get_boolean_member_with_default (obj, "existed", FALSE);
      op->ino = (guint64) json_object_get_int_member_with_default (obj, "ino", 0);
      op->old_mode = (guint32) json_object_get_int_member_with_default (obj, "old_mode", 0) & 07777;
      if (json_object_has_member (obj, "check") &&
          JSON_NODE_HOLDS_ARRAY (json_object_get_member (obj, "check")))
        {
          JsonArray *c = json_object_get_array_member (obj, "check");

          if (json_array_get_length (c) != 5)
            return corrupt (error, journal_path);
          op->check.present = TRUE;
          op->check.mode = (guint32) json_array_get_int_element (c, 0);
          op->check.ino = (guint64) json_array_get_int_element (c, 1);
          op->check.size = (guint64) json_array_get_int_element (c, 2);
          op->check.mtime_ns = json_array_get_int_element (c, 3);
          op->check.ctime_ns = json_array_get_int_element (c, 4);
        }
      if (op->parent == NULL || op->name == NULL || op->name[0] == '\0' ||
          strchr (op->name, '/') != NULL ||
          (op->kind != OP_CHMOD && !is_our_name (op->temp, prefix)))
        return corrupt (error, journal_path);
      if (op->parent[0] != '\0' && !validate_path (op->parent, NULL))
        return corrupt (error, journal_path);
    }

  w_fd = open (workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (w_fd < 0)
    return set_errno_error (error, errno, "Could not open the workspace", workspace);
  {
    struct stat st;

    if (fstat (w_fd, &st) != 0)
      return set_errno_error (error, errno, "Could not inspect the workspace", workspace);
    if ((guint64) json_object_get_int_member_with_default (root, "workspace_dev", 0) != st.st_dev ||
        (guint64) json_object_get_int_member_with_default (root, "workspace_ino", 0) != st.st_ino)
      {
        g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_FAILED,
                     "The apply journal %s belongs to another workspace than %s",
                     journal_path, workspace);
        return FALSE;
      }
  }

  if (strcmp (state, "preparing") == 0 || strcmp (state, "applying") == 0)
    {
      gboolean applying = strcmp (state, "applying") == 0;

      /* New folders back to 0700, parents first, so their temps can go. */
      for (guint i = 0; applying && i < ops->len; i++)
        {
          JournalOp *op = g_ptr_array_index (ops, i);
          paddock_autofd int pfd = -1;
          paddock_autofd int fd = -1;
          struct stat st;

          if (op->kind != OP_DIR)
            continue;
          pfd = open_beneath (w_fd, op->parent, O_RDONLY | O_DIRECTORY);
          if (pfd < 0)
            continue;
          fd = openat (pfd, op->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (fd >= 0 && fstat (fd, &st) == 0 && st.st_ino == op->ino)
            (void) fchmod (fd, 0700);
        }

      for (guint i = ops->len; i-- > 0; )
        {
          JournalOp *op = g_ptr_array_index (ops, i);
          paddock_autofd int pfd = open_beneath (w_fd, op->parent, O_RDONLY | O_DIRECTORY);
          PaddockFileStamp dest, temp;

          /* The folder is not reachable: its own op (earlier in the list,
           * undone after this one) takes our temps away with it. */
          if (pfd < 0)
            continue;
          if (op->kind == OP_CHMOD)
            {
              paddock_autofd int fd = -1;

              if (!applying)
                continue;
              fd = openat (pfd, op->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
              if (fd < 0 || fchmod (fd, op->old_mode) != 0)
                ok = FALSE;
              continue;
            }
          if (stamp_at (pfd, op->name, &dest) != 0 || stamp_at (pfd, op->temp, &temp) != 0)
            {
              ok = FALSE;
              continue;
            }
          if (op->kind == OP_REMOVE)
            {
              /* Renamed away (the backup has the entry's inode) → back. */
              if (applying && temp.present && temp.ino == op->ino && !dest.present &&
                  paddock_compat_rename_noreplace (pfd, op->temp, pfd, op->name) != 0)
                ok = FALSE;
              continue;
            }
          if (!applying)
            {
              /* No rename happened yet: only temps to drop. */
              if (temp.present && !remove_ours_at (pfd, op->temp, prefix))
                ok = FALSE;
              continue;
            }
          if (dest.present && dest.ino == op->ino)
            {
              /* The rename happened: exchange back, or take the new entry
               * back to its temp name, then drop it. */
              if (op->existed)
                {
                  if (!temp.present ||
                      paddock_compat_rename_exchange (pfd, op->temp, pfd, op->name) != 0)
                    {
                      ok = FALSE;
                      continue;
                    }
                }
              else if (paddock_compat_rename_noreplace (pfd, op->name, pfd, op->temp) != 0)
                {
                  ok = FALSE;
                  continue;
                }
              if (!remove_ours_at (pfd, op->temp, prefix))
                ok = FALSE;
            }
          else if (temp.present && temp.ino == op->ino)
            {
              if (!remove_ours_at (pfd, op->temp, prefix))
                ok = FALSE;
            }
        }

      /* What the next batch must not take for a conflict. */
      for (guint i = 0; ok && i < ops->len; i++)
        {
          JournalOp *op = g_ptr_array_index (ops, i);
          g_autofree char *path = join_rel (op->parent, op->name);

          note_restored (restored, w_fd, path, &op->check);
        }
      outcome = "rolled-back";
    }
  else if (strcmp (state, "committed") == 0)
    {
      const char *ledger = json_object_get_string_member_with_default (root, "ledger", NULL);
      const char *line = json_object_get_string_member_with_default (root, "ledger_line", NULL);

      /* Roll forward: the new tree is in place; drop the backups. */
      for (guint i = 0; i < ops->len; i++)
        {
          JournalOp *op = g_ptr_array_index (ops, i);
          paddock_autofd int pfd = -1;

          if (!(op->kind == OP_REMOVE || ((op->kind == OP_PUT || op->kind == OP_DIR) && op->existed)))
            continue;
          pfd = open_beneath (w_fd, op->parent, O_RDONLY | O_DIRECTORY);
          if (pfd >= 0 && !remove_ours_at (pfd, op->temp, prefix))
            ok = FALSE;
        }
      /* The stage's baseline still has the entries of before the batch
       * (paddock-apply-restored.c): what they are now goes with them. Not a
       * folder: one the batch made for its children is no item, and its
       * stamp would make a conflict of the next child added. */
      for (guint i = 0; i < ops->len; i++)
        {
          JournalOp *op = g_ptr_array_index (ops, i);
          g_autofree char *path = join_rel (op->parent, op->name);
          PaddockApplyRestored *r;
          PaddockFileStamp now;

          if (op->kind == OP_DIR || !stamp_beneath (w_fd, path, &now, NULL) ||
              paddock_file_stamp_equal (&now, &op->check))
            continue;
          r = g_new0 (PaddockApplyRestored, 1);
          r->path = g_steal_pointer (&path);
          r->from = op->check;
          r->to = now;
          g_ptr_array_add (restored, r);
        }
      if (ledger != NULL && line != NULL && !ledger_has_batch (ledger, batch) &&
          !ledger_append (ledger, line, &local_error))
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      outcome = "rolled-forward";
    }
  else
    return corrupt (error, journal_path);

  if (!ok)
    {
      g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_FAILED,
                   "Could not finish or undo batch %s in %s; the journal is kept", batch, workspace);
      return FALSE;
    }

  /* Recorded before the journal goes: a crash in between recovers (and
   * records) again, which at worst says it twice. */
  record_restored (journal_dir, restored);
  if (!paddock_apply_record_recovery (journal_dir,
                                      json_object_get_string_member_with_default (root, "ledger", NULL),
                                      batch, outcome,
                                      strcmp (outcome, "rolled-back") == 0 ? restored->len : 0,
                                      &local_error))
    g_message ("Could not record the recovery of batch %s: %s", batch, local_error->message);
  if (!journal_remove (journal_dir, journal_path, error))
    return FALSE;
  if (out_done != NULL)
    *out_done = TRUE;
  return TRUE;
}

/**
 * paddock_apply_recover:
 * @journal_dir: as given to paddock_apply_batch()
 * @workspace: the workspace the journal belongs to (checked)
 * @out_rolled_back_or_forward: (out) (optional): %TRUE when a journal was
 *   found and dealt with
 *
 * Called at daemon start: rolls an uncommitted batch back, a committed one
 * forward (backups dropped, ledger line appended if missing), then deletes
 * the journal. Without a journal it does nothing and returns %TRUE. When it
 * cannot finish, the journal stays for the next attempt.
 */
gboolean
paddock_apply_recover (const char  *journal_dir,
                       const char  *workspace,
                       gboolean    *out_rolled_back_or_forward,
                       GError     **error)
{
  paddock_autofd int lock_fd = -1;

  g_return_val_if_fail (journal_dir != NULL, FALSE);
  g_return_val_if_fail (workspace != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (out_rolled_back_or_forward != NULL)
    *out_rolled_back_or_forward = FALSE;
  if (!g_file_test (journal_dir, G_FILE_TEST_IS_DIR))
    return TRUE;
  lock_fd = lock_journal_dir (journal_dir, error);
  if (lock_fd < 0)
    return FALSE;
  return recover_locked (journal_dir, workspace, out_rolled_back_or_forward, error);
}
