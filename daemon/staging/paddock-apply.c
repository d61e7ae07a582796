/* paddock-apply.c — apply reviewed staging changes to a workspace in one crash-safe batch
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A batch either fully happens or fully does not, even when the daemon is
 * killed half-way:
 *
 *   1. plan: validate the paths, check each item's workspace entry against
 *      its baseline (a conflicting, non-forced item is skipped with its
 *      group), and order the operations: removals deepest-first, folder
 *      operations shallowest-first, then the other puts;
 *   2. journal "preparing" (durable), naming every temporary/backup entry the
 *      batch will use: `.paddock-apply-<batch>-<n>` in the destination's own
 *      folder, so every rename stays within one folder and file system;
 *   3. write each new entry under its temporary name (files: copied from
 *      the stage, fchmod, fsync);
 *   4. journal "applying" with the temporaries' inode numbers;
 *   5. one renameat2() per item: RENAME_EXCHANGE over an existing entry (the
 *      old version then sits at the temporary name: the backup),
 *      RENAME_NOREPLACE onto a free name, and a removal renames the entry to
 *      its backup name;
 *   6. fsync every touched folder; 7. journal "committed"; 8. ledger line;
 *   9. remove the backups; 10. remove the journal.
 *
 * Any failure before 7 undoes everything in reverse with renames, unlinks
 * and chmods only — none of which needs space, so a full disk cannot stop the
 * rollback. paddock_apply_recover() does the same from the journal after a
 * crash: before "committed" it rolls back (deciding by inode number which
 * renames happened), from "committed" on it rolls forward.
 *
 * Fault injection: with PADDOCK_FAULT_APPLY_STEP=N in the environment the
 * batch raises SIGKILL on reaching its N-th step. Steps, counted from 1:
 * each durable journal write (preparing, applying, committed), each
 * temporary entry created, each rename/chmod of an item (step 5), each
 * folder fsync (step 6), the ledger append, each backup removal, and the
 * journal removal. A batch of k temporaries, r renames, f folders and
 * b backups thus has 3 + k + r + f + 1 + b + 1 steps (the ledger's 1 only
 * with a ledger file). PADDOCK_FAULT_APPLY_STOP=N raises SIGSTOP there
 * instead, so a test can change the workspace at that point and resume it.
 * PADDOCK_TEST_APPLY_STEP_HOLD=PATH holds the batch before the step PATH
 * names while PATH exists (paddock-apply-journal.c), so a test can kill or
 * replace the whole daemon there from outside.
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

G_DEFINE_QUARK (paddock-apply-error-quark, paddock_apply_error)

static void
op_free (Op *op)
{
  g_free (op->path);
  g_free (op->parent);
  g_free (op->name);
  g_free (op->temp);
  g_free (op->link_text);
  g_free (op->old_sha);
  g_free (op->new_sha);
  if (op->dir_fd >= 0)
    close (op->dir_fd);
  g_free (op);
}

static void
close_fd_value (gpointer data)
{
  close (GPOINTER_TO_INT (data) - 1);
}

static void
batch_free (Batch *b)
{
  g_free (b->batch_id);
  g_free (b->temp_prefix);
  if (b->w_fd >= 0)
    close (b->w_fd);
  if (b->stage_fd >= 0)
    close (b->stage_fd);
  g_clear_pointer (&b->dirs, g_hash_table_unref);
  g_clear_pointer (&b->ops, g_ptr_array_unref);
  g_free (b->journal_dir);
  g_free (b->journal_path);
  g_clear_pointer (&b->stale, g_ptr_array_unref);
  g_free (b->ledger_file);
  g_free (b->hold_path);
  g_free (b);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Batch, batch_free)

PaddockApplyItem *
paddock_apply_item_new (const char             *path,
                        PaddockApplyAction      action,
                        guint                   group,
                        gboolean                forced,
                        const PaddockFileStamp *baseline)
{
  PaddockApplyItem *item = g_new0 (PaddockApplyItem, 1);

  g_return_val_if_fail (path != NULL, NULL);

  item->path = g_strdup (path);
  item->action = action;
  item->group = group;
  item->forced = forced;
  if (baseline != NULL)
    item->baseline = *baseline;
  return item;
}

void
paddock_apply_item_free (PaddockApplyItem *item)
{
  if (item == NULL)
    return;
  g_free (item->path);
  g_free (item->pin_sha);
  g_clear_object (&item->pin_review);
  g_free (item);
}

void
paddock_apply_result_free (PaddockApplyResult *result)
{
  if (result == NULL)
    return;
  g_clear_pointer (&result->applied, g_ptr_array_unref);
  g_clear_pointer (&result->conflicts, g_ptr_array_unref);
  g_clear_pointer (&result->new_stamps, g_ptr_array_unref);
  g_free (result->batch_id);
  g_free (result);
}

static gboolean
stage_one (Batch   *b,
           Op      *op,
           GError **error)
{
  int pfd = op_parent_fd (b, op);
  struct stat st;

  if (op->kind == OP_DIR)
    {
      step (b);
      /* 0700 until the batch is placed: we must be able to create the
       * children's temps in it whatever its final mode. */
      if (mkdirat (pfd, op->temp, 0700) != 0)
        return set_errno_error (error, errno, "Could not create a folder for", op->path);
      op->staged = TRUE;
      op->dir_fd = openat (pfd, op->temp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (op->dir_fd < 0 || fstat (op->dir_fd, &st) != 0)
        return set_errno_error (error, errno, "Could not open the new folder", op->path);
      op->ino = st.st_ino;
      g_hash_table_insert (b->dirs, g_strdup (op->path),
                           GINT_TO_POINTER (fcntl (op->dir_fd, F_DUPFD_CLOEXEC, 3) + 1));
      return TRUE;
    }

  g_assert (op->kind == OP_PUT);

  if (op->stage_type == S_IFLNK)
    {
      g_autofree char *sparent = path_parent (op->path);
      paddock_autofd int sfd = open_beneath (b->stage_fd, sparent, O_RDONLY | O_DIRECTORY);

      if (sfd < 0 || (op->link_text = read_link_at (sfd, op->name)) == NULL)
        return set_errno_error (error, errno, "Could not read the stage's", op->path);
      op->new_sha = g_compute_checksum_for_string (G_CHECKSUM_SHA256, op->link_text, -1);
      if (op->item->pinned)
        {
          /* The text we are about to write is the one the review saw. */
          if (!bytes_match_pin (op->item, op->link_text, strlen (op->link_text)))
            {
              note_stale (b, op->path);
              return TRUE;
            }
        }

      step (b);
      if (symlinkat (op->link_text, pfd, op->temp) != 0)
        return set_errno_error (error, errno, "Could not create a symlink for", op->path);
      op->staged = TRUE;
      if (fstatat (pfd, op->temp, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return set_errno_error (error, errno, "Could not inspect the new", op->path);
      op->ino = st.st_ino;
      return TRUE;
    }
  else
    {
      /* The stage is agent-written: O_NOFOLLOW and RESOLVE_NO_SYMLINKS so
       * a symlink swapped in since the review cannot make us copy a file
       * from elsewhere into the workspace. */
      paddock_autofd int sfd = open_beneath (b->stage_fd, op->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
      paddock_autofd int fd = -1;

      if (sfd < 0)
        return set_errno_error (error, errno, "Could not open the stage's", op->path);
      if (fstat (sfd, &st) != 0 || !S_ISREG (st.st_mode))
        {
          g_autofree char *p = printable (op->path);
          g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_FAILED,
                       "“%s” in the stage is no longer a regular file", p);
          return FALSE;
        }

      /* Still the inode the plan saw, and still linked to the earlier
       * one's: then this name is a hard link to what that op wrote. One
       * step either way: a batch's step count is fixed by its plan. */
      step (b);
      if (op->link_of != NULL && op->link_of->staged && op->link_of->ino != 0)
        {
          struct stat first_st;

          if (stage_lstat (b, op->link_of->path, &first_st) && first_st.st_ino == st.st_ino &&
              first_st.st_dev == st.st_dev)
            {
              if (linkat (op_parent_fd (b, op->link_of), op->link_of->temp, pfd, op->temp, 0) == 0)
                {
                  op->staged = TRUE;
                  op->ino = op->link_of->ino;
                  op->new_sha = g_strdup (op->link_of->new_sha);
                  op->new_sha_extents = op->link_of->new_sha_extents;
                  /* The link lands the first name's bytes (checked against
                   * its own pin) under this name too: they must be this
                   * name's pinned bytes as well. The agent may have linked
                   * the two names only after a review that showed them
                   * with different content. */
                  if (op->item->pinned)
                    {
                      g_autoptr(GError) read_error = NULL;
                      paddock_autofd int linked = openat (pfd, op->temp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                      int matches = linked >= 0 ? fd_matches_pin (op->item, linked, &read_error) : -1;

                      if (matches < 0)
                        return set_errno_error (error, EIO, "Could not read back", op->path);
                      if (matches == 0)
                        note_stale (b, op->path);
                    }
                  return TRUE;
                }
              /* EXDEV (the two folders are on different mounts), EMLINK:
               * a copy of its own, as without the link. */
              if (errno != EXDEV && errno != EMLINK)
                return set_errno_error (error, errno, "Could not link", op->path);
            }
          op->link_of = NULL;
        }

      /* O_EXCL|O_NOFOLLOW: never write through whatever might sit at the
       * temp name. */
      fd = openat (pfd, op->temp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0)
        return set_errno_error (error, errno, "Could not create a file for", op->path);
      op->staged = TRUE;
      {
        g_autoptr(GError) copy_error = NULL;

        /* Data extents only: a hole in the stage stays a hole here. */
        if (!paddock_sparse_copy (sfd, fd, NULL, &copy_error))
          {
            int code = g_error_matches (copy_error, G_IO_ERROR, G_IO_ERROR_NO_SPACE)
                         ? PADDOCK_APPLY_ERROR_NO_SPACE : PADDOCK_APPLY_ERROR_FAILED;
            g_autofree char *p = printable (op->path);

            g_set_error (error, PADDOCK_APPLY_ERROR, code, "Could not write “%s”: %s",
                         p, copy_error->message);
            return FALSE;
          }
      }
      /* No fsync here: sync_staged() makes every temp durable at once. */
      if (fchmod (fd, op->new_mode) != 0 ||
          fstat (fd, &st) != 0)
        return set_errno_error (error, errno, "Could not write", op->path);
      op->ino = st.st_ino;
      op->new_sha = sha256_fd_bounded (sfd, &op->new_sha_extents);
      if (op->item->pinned)
        {
          /* Hash what was written, not the stage (which the agent may be
           * rewriting as we read it): this temp is what the rename will
           * put in place, and only the pinned bytes may be. */
          g_autoptr(GError) read_error = NULL;
          int matches = fd_matches_pin (op->item, fd, &read_error);

          if (matches < 0)
            return set_errno_error (error, EIO, "Could not read back", op->path);
          if (matches == 0)
            note_stale (b, op->path);
        }
      if (close (paddock_steal_fd (&fd)) != 0)
        return set_errno_error (error, errno, "Could not write", op->path);
      return TRUE;
    }
}

/* Makes every temp durable before the journal says "applying": one
 * syncfs() per file system the batch wrote to, rather than an fsync() per
 * file, which for 20,000 small files was a journal commit each (92 s here
 * against a few for the whole batch). syncfs() reports writeback errors
 * of the file system (Linux 5.8+), so a failed write is still caught. */
static gboolean
sync_staged (Batch   *b,
             GError **error)
{
  g_autoptr(GHashTable) devs = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  GHashTableIter iter;
  gpointer key, value;

  g_hash_table_iter_init (&iter, b->dirs);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      int fd = GPOINTER_TO_INT (value) - 1;
      struct stat st;
      gint64 dev;

      if (fstat (fd, &st) != 0)
        return set_errno_error (error, errno, "Could not inspect the folder", key);
      dev = (gint64) st.st_dev;
      if (g_hash_table_contains (devs, &dev))
        continue;
      g_hash_table_add (devs, g_memdup2 (&dev, sizeof dev));
      if (syncfs (fd) != 0)
        return set_errno_error (error, errno, "Could not write the new files to disk under", key);
    }
  return TRUE;
}

static gboolean
place_one (Batch   *b,
           Op      *op,
           GError **error)
{
  int pfd = op_parent_fd (b, op);
  PaddockFileStamp backup;
  int r;

  if (op->kind == OP_CHMOD)
    {
      int fd = dir_fd_for (b, op->path);

      step (b);
      if (fd < 0 || fchmod (fd, op->new_mode) != 0)
        return set_errno_error (error, errno, "Could not change the mode of", op->path);
      op->done = TRUE;
      return TRUE;
    }

  /* A folder goes away (removed, or replaced by a file or symlink) only
   * when empty at this point of the batch, i.e. holding only the backups
   * of its children removed earlier in it. */
  if (op->check.present && S_ISDIR (op->check.mode) &&
      !dir_holds_only_ours (pfd, op->name, b->temp_prefix))
    {
      g_autofree char *p = printable (op->path);
      g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_FAILED,
                   "The folder “%s” is not empty", p);
      return FALSE;
    }

  step (b);
  if (op->kind == OP_REMOVE)
    r = paddock_compat_rename_noreplace (pfd, op->name, pfd, op->temp);
  else if (op->existed)
    r = paddock_compat_rename_exchange (pfd, op->temp, pfd, op->name);
  else
    r = paddock_compat_rename_noreplace (pfd, op->temp, pfd, op->name);
  if (r != 0)
    {
      int saved_errno = errno;
      g_autofree char *p = printable (op->path);

      /* The entry vanished (ENOENT) or one appeared (EEXIST) since the
       * conflict check: someone else is writing there. */
      if ((saved_errno == ENOENT && (op->kind == OP_REMOVE || op->existed)) ||
          (saved_errno == EEXIST && op->kind != OP_REMOVE && !op->existed))
        {
          g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_CONFLICT,
                       "“%s” changed in the workspace while the batch was applied", p);
          return FALSE;
        }
      return set_errno_error (error, saved_errno, "Could not rename", op->path);
    }
  op->done = TRUE;

  if (op->kind != OP_REMOVE && !op->existed)
    return TRUE;

  /* The old version now sits at the temp name. If another writer changed
   * it between the conflict check and the rename, the user never reviewed
   * what we are about to discard: undo the whole batch. */
  if (stamp_at (pfd, op->temp, &backup) != 0)
    return set_errno_error (error, errno, "Could not inspect the old version of", op->path);
  if (!stamp_same_entry (&backup, &op->check))
    {
      g_autofree char *p = printable (op->path);
      g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_CONFLICT,
                   "“%s” changed in the workspace while the batch was applied", p);
      return FALSE;
    }
  return TRUE;
}

char *
join_rel (const char *parent,
          const char *name)
{
  return parent[0] != '\0' ? g_strconcat (parent, "/", name, NULL) : g_strdup (name);
}

/* After a rollback: the entries back in place as they were, but for the
 * ctime (and a folder's mtime) our renames gave them. */
void
note_restored (GPtrArray              *restored,
               int                     w_fd,
               const char             *path,
               const PaddockFileStamp *check)
{
  PaddockFileStamp now;
  PaddockApplyRestored *r;

  if (!check->present || !stamp_beneath (w_fd, path, &now, NULL))
    return;
  if (!stamp_same_entry (&now, check) || paddock_file_stamp_equal (&now, check))
    return;
  r = g_new0 (PaddockApplyRestored, 1);
  r->path = g_strdup (path);
  r->from = *check;
  r->to = now;
  g_ptr_array_add (restored, r);
}

void
record_restored (const char *journal_dir,
                 GPtrArray  *restored)
{
  g_autoptr(GError) error = NULL;

  /* Not fatal: without the record the entries are conflicts, never
   * silently overwritten. */
  if (!paddock_apply_restored_add (journal_dir, restored, &error))
    g_message ("Could not record what the rollback put back in %s: %s", journal_dir,
               error->message);
}

/* Undoes, in reverse, every rename and chmod done, then removes every temp.
 * Renames, unlinks and chmods only: nothing here needs free space. */
static gboolean
rollback (Batch *b)
{
  gboolean ok = TRUE;

  for (guint i = 0; i < b->ops->len; i++)
    {
      Op *op = g_ptr_array_index (b->ops, i);

      if (op->kind == OP_DIR && op->dir_fd >= 0)
        (void) fchmod (op->dir_fd, 0700);
    }

  for (guint i = b->ops->len; i-- > 0; )
    {
      Op *op = g_ptr_array_index (b->ops, i);
      int pfd;
      int r = 0;

      if (!op->done)
        continue;
      pfd = op_parent_fd (b, op);
      switch (op->kind)
        {
        case OP_REMOVE:
          r = paddock_compat_rename_noreplace (pfd, op->temp, pfd, op->name);
          break;
        case OP_CHMOD:
          r = fchmod (dir_fd_for (b, op->path), op->old_mode);
          break;
        case OP_DIR:
        case OP_PUT:
          if (op->existed)
            r = paddock_compat_rename_exchange (pfd, op->temp, pfd, op->name);
          else
            r = paddock_compat_rename_noreplace (pfd, op->name, pfd, op->temp);
          break;
        default:
          g_assert_not_reached ();
        }
      if (r != 0)
        ok = FALSE;
      else
        op->done = FALSE;
    }

  for (guint i = b->ops->len; i-- > 0; )
    {
      Op *op = g_ptr_array_index (b->ops, i);

      if (!op->staged || op->done)
        continue;
      if (unlinkat (op_parent_fd (b, op), op->temp, op->kind == OP_DIR ? AT_REMOVEDIR : 0) != 0 &&
          errno != ENOENT)
        ok = FALSE;
    }

  return ok;
}

static char *
ledger_line_new (Batch      *b,
                 const char *who)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *time = g_date_time_format_iso8601 (now);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "time");
  json_builder_add_string_value (builder, time);
  json_builder_set_member_name (builder, "who");
  json_builder_add_string_value (builder, who != NULL ? who : "");
  json_builder_set_member_name (builder, "batch");
  json_builder_add_string_value (builder, b->batch_id);
  json_builder_set_member_name (builder, "items");
  json_builder_begin_array (builder);
  for (guint i = 0; i < b->ops->len; i++)
    {
      Op *op = g_ptr_array_index (b->ops, i);

      if (op->item == NULL)
        continue;
      json_builder_begin_object (builder);
      if (g_utf8_validate (op->path, -1, NULL))
        {
          json_builder_set_member_name (builder, "path");
          json_builder_add_string_value (builder, op->path);
        }
      else
        add_b64 (builder, "path_base64", op->path);
      json_builder_set_member_name (builder, "action");
      json_builder_add_string_value (builder, op->kind == OP_REMOVE ? "remove" : "put");
      /* A sparse file larger than a review blob is known by the hash of
       * its extents (paddock_sparse_sha256()), under its own name. */
      json_builder_set_member_name (builder, "old_sha256");
      if (op->old_sha != NULL && !op->old_sha_extents)
        json_builder_add_string_value (builder, op->old_sha);
      else
        json_builder_add_null_value (builder);
      if (op->old_sha != NULL && op->old_sha_extents)
        {
          json_builder_set_member_name (builder, "old_extents_sha256");
          json_builder_add_string_value (builder, op->old_sha);
        }
      json_builder_set_member_name (builder, "new_sha256");
      if (op->new_sha != NULL && !op->new_sha_extents)
        json_builder_add_string_value (builder, op->new_sha);
      else
        json_builder_add_null_value (builder);
      if (op->new_sha != NULL && op->new_sha_extents)
        {
          json_builder_set_member_name (builder, "new_extents_sha256");
          json_builder_add_string_value (builder, op->new_sha);
        }
      if (op->link_of != NULL)
        {
          json_builder_set_member_name (builder, "hardlink_of");
          if (g_utf8_validate (op->link_of->path, -1, NULL))
            json_builder_add_string_value (builder, op->link_of->path);
          else
            {
              g_autofree char *b64 = g_base64_encode ((const guchar *) op->link_of->path,
                                                      strlen (op->link_of->path));
              json_builder_add_string_value (builder, b64);
            }
        }
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, NULL);
}

gboolean
ledger_append (const char  *ledger_file,
               const char  *line,
               GError     **error)
{
  g_autofree char *with_nl = g_strconcat (line, "\n", NULL);
  paddock_autofd int fd = open (ledger_file, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

  if (fd < 0)
    return set_errno_error (error, errno, "Could not open the ledger", ledger_file);
  /* One write() of the whole line with O_APPEND, so lines never interleave. */
  if (!write_all (fd, with_nl, strlen (with_nl)) || fdatasync (fd) != 0)
    return set_errno_error (error, errno, "Could not write the ledger", ledger_file);
  return TRUE;
}

gboolean
ledger_has_batch (const char *ledger_file,
                  const char *batch_id)
{
  g_autofree char *contents = NULL;
  g_autofree char *needle = g_strdup_printf ("\"batch\":\"%s\"", batch_id);

  if (!g_file_get_contents (ledger_file, &contents, NULL, NULL))
    return FALSE;
  return strstr (contents, needle) != NULL;
}

/**
 * paddock_apply_batch:
 * @workspace: the workspace W
 * @stage_root: the folder the session's agent wrote to (overlay upper or copy)
 * @journal_dir: a private folder of the daemon's, on any file system, one
 *   per workspace; holds the journal and its lock
 * @ledger_file: (nullable): a JSON-lines file; one line per applied batch
 * @who: (nullable): recorded in the ledger
 * @items: (element-type PaddockApplyItem): what to apply
 * @result: (out): what was applied and what was skipped as a conflict
 *
 * Applies @items in one batch (see the top of this file). A conflicting,
 * non-forced item is skipped with its group and every PUT beneath it; the
 * rest is applied. Any failure undoes the whole batch before returning it:
 * %PADDOCK_APPLY_ERROR_NO_SPACE, %PADDOCK_APPLY_ERROR_READ_ONLY,
 * %PADDOCK_APPLY_ERROR_INVALID_PATH (a bad path, or a symlink or file where
 * the batch needs a folder), %PADDOCK_APPLY_ERROR_CONFLICT (an entry changed
 * between the check and its rename) or %PADDOCK_APPLY_ERROR_FAILED. A batch
 * left unfinished by a crash is recovered first.
 *
 * An undone rename still gives the entry a new ctime: after a failed batch,
 * the items it touched no longer match baselines taken before it.
 *
 * Returns: %TRUE when the batch was committed.
 */
gboolean
paddock_apply_batch (const char          *workspace,
                     const char          *stage_root,
                     const char          *journal_dir,
                     const char          *ledger_file,
                     const char          *who,
                     GPtrArray           *items,
                     PaddockApplyResult **result,
                     GCancellable        *cancellable,
                     GError             **error)
{
  g_autoptr(Batch) b = g_new0 (Batch, 1);
  g_autoptr(PaddockApplyResult) res = g_new0 (PaddockApplyResult, 1);
  g_autoptr(GPtrArray) selected = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) skipped_groups = g_hash_table_new (NULL, NULL);
  g_autoptr(GHashTable) put_items = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) checked = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) restored = NULL;
  g_autofree char *ledger_line = NULL;
  g_autoptr(GError) local_error = NULL;
  paddock_autofd int lock_fd = -1;
  const char *fault;
  gboolean cleanup_ok = TRUE;

  g_return_val_if_fail (workspace != NULL, FALSE);
  g_return_val_if_fail (stage_root != NULL, FALSE);
  g_return_val_if_fail (journal_dir != NULL, FALSE);
  g_return_val_if_fail (items != NULL, FALSE);
  g_return_val_if_fail (result != NULL && *result == NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  b->w_fd = -1;
  b->stage_fd = -1;
  b->dirs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, close_fd_value);
  b->ops = g_ptr_array_new_with_free_func ((GDestroyNotify) op_free);
  b->journal_dir = g_strdup (journal_dir);
  b->journal_path = g_build_filename (journal_dir, JOURNAL_NAME, NULL);
  b->stale = g_ptr_array_new_with_free_func (g_free);
  b->ledger_file = g_strdup (ledger_file);
  {
    g_autofree char *uuid = g_uuid_string_random ();
    GString *id = g_string_new (NULL);

    for (const char *c = uuid; *c; c++)
      if (*c != '-')
        g_string_append_c (id, *c);
    b->batch_id = g_string_free (id, FALSE);
  }
  b->temp_prefix = g_strdup_printf (TEMP_PREFIX "%s-", b->batch_id);
  fault = g_getenv ("PADDOCK_FAULT_APPLY_STEP");
  if (fault != NULL)
    b->fault_step = (guint) g_ascii_strtoull (fault, NULL, 10);
  fault = g_getenv ("PADDOCK_FAULT_APPLY_STOP");
  if (fault != NULL)
    b->stop_step = (guint) g_ascii_strtoull (fault, NULL, 10);
  fault = g_getenv ("PADDOCK_TEST_APPLY_STEP_HOLD");
  if (fault != NULL && fault[0] != '\0')
    b->hold_path = g_strdup (fault);

  res->applied = g_ptr_array_new_with_free_func (g_free);
  res->conflicts = g_ptr_array_new_with_free_func (g_free);
  res->new_stamps = g_ptr_array_new_with_free_func (g_free);
  res->batch_id = g_strdup (b->batch_id);

  lock_fd = lock_journal_dir (journal_dir, error);
  if (lock_fd < 0)
    return FALSE;
  /* A batch the daemon did not finish is finished (or undone) first. */
  if (!recover_locked (journal_dir, workspace, NULL, error))
    return FALSE;

  b->w_fd = open (workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (b->w_fd < 0)
    return set_errno_error (error, errno, "Could not open the workspace", workspace);
  {
    struct stat st;

    if (fstat (b->w_fd, &st) != 0)
      return set_errno_error (error, errno, "Could not inspect the workspace", workspace);
    b->w_dev = st.st_dev;
    b->w_ino = st.st_ino;
  }
  b->stage_fd = open (stage_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (b->stage_fd < 0)
    return set_errno_error (error, errno, "Could not open the stage", stage_root);
  restored = paddock_apply_restored_load (journal_dir);

  /* Plan: validate, then check every item against its baseline. */
  for (guint i = 0; i < items->len; i++)
    {
      const PaddockApplyItem *item = g_ptr_array_index (items, i);
      Selected *s = g_new0 (Selected, 1);

      g_ptr_array_add (checked, s);
      s->item = item;
      if (!validate_path (item->path, error))
        return FALSE;
      if (!g_hash_table_add (seen, item->path))
        {
          g_autofree char *p = printable (item->path);
          g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH,
                       "“%s” appears twice in the batch", p);
          return FALSE;
        }
      if (!stamp_beneath (b->w_fd, item->path, &s->current, error))
        return FALSE;
      /* An entry an earlier rollback put back is unchanged: only its
       * ctime moved, by our own renames. */
      if (paddock_apply_restored_matches (restored, item->path, &item->baseline, &s->current))
        s->current = item->baseline;
      if (!paddock_file_stamp_equal (&s->current, &item->baseline) && !item->forced)
        g_ptr_array_add (res->conflicts, g_strdup (item->path));
    }
  for (guint i = 0; i < checked->len; i++)
    {
      Selected *s = g_ptr_array_index (checked, i);

      s->skipped = !paddock_file_stamp_equal (&s->current, &s->item->baseline) && !s->item->forced;
      if (s->skipped)
        g_hash_table_add (skipped_groups, GUINT_TO_POINTER (s->item->group));
    }
  for (guint i = 0; i < checked->len; i++)
    {
      Selected *s = g_ptr_array_index (checked, i);

      if (s->item->action == PADDOCK_APPLY_PUT)
        g_hash_table_insert (put_items, (gpointer) s->item->path, s);
    }
  /* Skip, until nothing changes: the group of a skipped item, and a PUT
   * beneath a skipped PUT (a file in a folder the batch was to create
   * cannot go in without it; it is listed as a conflict too). */
  for (gboolean changed = TRUE; changed; )
    {
      changed = FALSE;
      for (guint i = 0; i < checked->len; i++)
        {
          Selected *s = g_ptr_array_index (checked, i);

          if (s->skipped)
            {
              g_hash_table_add (skipped_groups, GUINT_TO_POINTER (s->item->group));
              continue;
            }
          if (g_hash_table_contains (skipped_groups, GUINT_TO_POINTER (s->item->group)))
            {
              s->skipped = changed = TRUE;
              continue;
            }
          if (s->item->action == PADDOCK_APPLY_PUT &&
              find_ancestor (put_items, s->item->path, TRUE) != NULL)
            {
              s->skipped = changed = TRUE;
              g_ptr_array_add (res->conflicts, g_strdup (s->item->path));
            }
        }
    }
  for (guint i = 0; i < checked->len; i++)
    {
      Selected *s = g_ptr_array_index (checked, i);

      if (!s->skipped)
        g_ptr_array_add (selected, g_memdup2 (s, sizeof *s));
    }

  if (!plan_ops (b, selected, error))
    return FALSE;
  if (!check_space (b, error))
    return FALSE;

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;

  if (!journal_write (b, "preparing", NULL, NULL, error))
    {
      (void) journal_remove (journal_dir, b->journal_path, NULL);
      return FALSE;
    }

  for (guint i = 0; i < b->ops->len; i++)
    {
      Op *op = g_ptr_array_index (b->ops, i);

      if (op->noop || op->kind == OP_REMOVE || op->kind == OP_CHMOD)
        continue;
      /* Writing the temps is most of a big batch: a client gone (the
       * caller's name left the bus) stops it here, rolled back whole. */
      if (g_cancellable_set_error_if_cancelled (cancellable, &local_error) ||
          !stage_one (b, op, &local_error))
        goto fail;
    }
  /* Every temp is written and checked: refuse the batch if any differs
   * from its review's pin (the rollback removes the temps). */
  if (b->stale->len > 0)
    {
      stale_error (b, &local_error);
      goto fail;
    }

  if (!sync_staged (b, &local_error))
    goto fail;
  if (!journal_write (b, "applying", NULL, NULL, &local_error))
    goto fail;

  for (guint i = 0; i < b->ops->len; i++)
    {
      Op *op = g_ptr_array_index (b->ops, i);

      if (op->noop)
        continue;
      if (g_cancellable_set_error_if_cancelled (cancellable, &local_error) ||
          !place_one (b, op, &local_error))
        goto fail;
    }

  /* The new folders take their own mode now that their children are in. */
  for (guint i = 0; i < b->ops->len; i++)
    {
      Op *op = g_ptr_array_index (b->ops, i);

      if (op->kind == OP_DIR && !op->noop && fchmod (op->dir_fd, op->new_mode) != 0)
        {
          set_errno_error (&local_error, errno, "Could not change the mode of", op->path);
          goto fail;
        }
    }

  /* Make every rename durable before saying "committed". */
  {
    GHashTableIter iter;
    gpointer key, value;

    g_hash_table_iter_init (&iter, b->dirs);
    while (g_hash_table_iter_next (&iter, &key, &value))
      {
        step (b);
        if (fsync (GPOINTER_TO_INT (value) - 1) != 0)
          {
            set_errno_error (&local_error, errno, "Could not sync the folder", key);
            goto fail;
          }
      }
  }

  ledger_line = ledger_line_new (b, who);
  if (!journal_write (b, "committed", ledger_file, ledger_line, &local_error))
    goto fail;

  /* Committed: from here on, nothing is undone. */
  if (ledger_file != NULL)
    {
      step (b);
      if (!ledger_append (ledger_file, ledger_line, NULL))
        cleanup_ok = FALSE;  /* the journal stays; recovery retries */
    }

  for (guint i = 0; i < b->ops->len; i++)
    {
      Op *op = g_ptr_array_index (b->ops, i);
      PaddockFileStamp *stamp;

      if (op->item == NULL)
        continue;
      g_ptr_array_add (res->applied, g_strdup (op->path));
      stamp = g_new0 (PaddockFileStamp, 1);
      if (op->kind != OP_REMOVE)
        (void) stamp_at (op_parent_fd (b, op), op->name, stamp);
      g_ptr_array_add (res->new_stamps, stamp);
    }

  for (guint i = 0; i < b->ops->len; i++)
    {
      Op *op = g_ptr_array_index (b->ops, i);

      if (!op->done || !(op->kind == OP_REMOVE || op->existed) || op->kind == OP_CHMOD)
        continue;
      step (b);
      if (!remove_ours_at (op_parent_fd (b, op), op->temp, b->temp_prefix))
        cleanup_ok = FALSE;
    }

  if (cleanup_ok)
    {
      step (b);
      (void) journal_remove (journal_dir, b->journal_path, NULL);
    }
  if (g_hash_table_size (restored) > 0)
    paddock_apply_restored_forget (journal_dir, res->applied);

  *result = g_steal_pointer (&res);
  return TRUE;

fail:
  /* Nothing was committed: put the workspace back as it was. If the
   * rollback itself fails the journal stays, for paddock_apply_recover(). */
  if (rollback (b))
    {
      g_autoptr(GPtrArray) put_back =
        g_ptr_array_new_with_free_func ((GDestroyNotify) paddock_apply_restored_free);

      for (guint i = 0; i < b->ops->len; i++)
        {
          Op *op = g_ptr_array_index (b->ops, i);

          note_restored (put_back, b->w_fd, op->path, &op->check);
        }
      record_restored (journal_dir, put_back);
      (void) journal_remove (journal_dir, b->journal_path, NULL);
    }
  g_propagate_error (error, g_steal_pointer (&local_error));
  return FALSE;
}
