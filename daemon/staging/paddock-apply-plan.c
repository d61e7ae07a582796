/* paddock-apply-plan.c — the batch's plan: review pins, ordered operations, the space check
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

static Op *
op_new (OpKind      kind,
        const char *path)
{
  Op *op = g_new0 (Op, 1);

  op->kind = kind;
  op->path = g_strdup (path);
  op->parent = path_parent (path);
  op->name = g_strdup (path_name (path));
  op->dir_fd = -1;
  return op;
}

static void
op_take_temp (Batch *b,
              Op    *op)
{
  op->temp = g_strdup_printf ("%s%u", b->temp_prefix, b->n_temps++);
}

static int
compare_removals (gconstpointer a,
                  gconstpointer c)
{
  const Op *x = *(Op * const *) a;
  const Op *y = *(Op * const *) c;
  guint dx = path_depth (x->path);
  guint dy = path_depth (y->path);

  if (dx != dy)
    return dx > dy ? -1 : 1;
  return strcmp (x->path, y->path);
}

static int
compare_dirs_shallow_first (gconstpointer a,
                            gconstpointer c)
{
  const char *x = *(const char * const *) a;
  const char *y = *(const char * const *) c;
  guint dx = path_depth (x);
  guint dy = path_depth (y);

  if (dx != dy)
    return dx < dy ? -1 : 1;
  return strcmp (x, y);
}

/* The Selected of a proper ancestor of @path in @table (path → Selected),
 * if any; with @skipped_only, only one that is skipped. */
gpointer
find_ancestor (GHashTable *table,
               const char *path,
               gboolean    skipped_only)
{
  g_autofree char *buf = g_strdup (path);

  for (char *slash = strchr (buf, '/'); slash != NULL; slash = strchr (slash + 1, '/'))
    {
      Selected *found;

      *slash = '\0';
      found = g_hash_table_lookup (table, buf);
      *slash = '/';
      if (found != NULL && (!skipped_only || found->skipped))
        return found;
    }
  return NULL;
}

/* ---- review pins ---------------------------------------------------------- */

/* Records @path as not what its review pinned. The batch goes on checking
 * the others, so the error names every such path at once, then refuses. */
void
note_stale (Batch      *b,
            const char *path)
{
  g_ptr_array_add (b->stale, g_strdup (path));
}

#define STALE_NAMED_MAX 20

gboolean
stale_error (Batch   *b,
             GError **error)
{
  g_autoptr(GString) names = g_string_new (NULL);

  for (guint i = 0; i < b->stale->len && i < STALE_NAMED_MAX; i++)
    {
      g_autofree char *p = printable (g_ptr_array_index (b->stale, i));
      g_string_append_printf (names, "%s“%s”", i > 0 ? ", " : "", p);
    }
  if (b->stale->len > STALE_NAMED_MAX)
    g_string_append_printf (names, " and %u more", b->stale->len - STALE_NAMED_MAX);
  g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_STALE,
               "Changed in the stage since the review, so nothing was applied: %s "
               "(review again to see the new content)", names->str);
  return FALSE;
}

/* Whether the stage entry as the plan saw it has the pinned type and
 * permission bits (its content is checked on the written temporary). */
static gboolean
stat_matches_pin (const PaddockApplyItem *item,
                  const struct stat      *st)
{
  return !item->pinned ||
         ((guint32) (st->st_mode & S_IFMT) == item->pin_type &&
          (guint32) (st->st_mode & 07777) == item->pin_mode);
}

/* Whether @sha (a written temp's canonical digest, or a link text's) is
 * the pinned one. */
static gboolean
sha_matches_pin (const PaddockApplyItem *item,
                 const char             *sha)
{
  return !item->pinned || (sha != NULL && item->pin_sha != NULL && g_str_equal (sha, item->pin_sha));
}

/* Whether @data (a link text) is the pinned content. */
gboolean
bytes_match_pin (const PaddockApplyItem *item,
                 const void             *data,
                 gsize                   length)
{
  g_autofree char *sha = NULL;

  if (!item->pinned)
    return TRUE;
  if (item->pin_review != NULL)
    {
      g_autoptr(GBytes) want = paddock_review_dup_new_content (item->pin_review, item->path);

      return want != NULL && g_bytes_get_size (want) == length &&
             memcmp (g_bytes_get_data (want, NULL), data, length) == 0;
    }
  sha = paddock_content_hash_bytes (data, length);
  return sha_matches_pin (item, sha);
}

/* Whether the regular file @fd (a written temp) holds the pinned content:
 * 1 yes, 0 no, -1 when it could not be read (@error set). Compared byte
 * for byte with the review's bytes when the pin has them (cheaper than a
 * digest, and exact), else by the canonical digest. */
int
fd_matches_pin (const PaddockApplyItem  *item,
                int                      fd,
                GError                 **error)
{
  g_autofree char *sha = NULL;

  if (!item->pinned)
    return 1;
  if (item->pin_review != NULL)
    {
      g_autoptr(GBytes) want = paddock_review_dup_new_content (item->pin_review, item->path);

      /* Gone from the review (it cannot be while the token holds it):
       * matches nothing. */
      return want != NULL ? paddock_content_equal_fd (fd, want, error) : 0;
    }
  sha = paddock_content_hash_fd (fd, NULL, error);
  if (sha == NULL)
    return -1;
  return sha_matches_pin (item, sha) ? 1 : 0;
}

gboolean
stage_lstat (Batch       *b,
             const char  *path,
             struct stat *st)
{
  g_autofree char *parent = path_parent (path);
  paddock_autofd int fd = open_beneath (b->stage_fd, parent, O_RDONLY | O_DIRECTORY);

  if (fd < 0)
    return FALSE;
  return fstatat (fd, path_name (path), st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Builds b->ops from the selected items. */
gboolean
plan_ops (Batch      *b,
          GPtrArray  *selected,
          GError    **error)
{
  g_autoptr(GHashTable) dir_items = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) file_items = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) dir_set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) new_dirs = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) removes = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) inodes = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  g_autoptr(GPtrArray) dir_list = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer key;

  for (guint i = 0; i < selected->len; i++)
    {
      Selected *s = g_ptr_array_index (selected, i);
      const char *path = s->item->path;

      if (s->item->action == PADDOCK_APPLY_REMOVE)
        continue;

      if (!stage_lstat (b, path, &s->stage))
        {
          int saved_errno = errno;
          g_autofree char *p = printable (path);

          /* A symlink (or file) where the stage should have a folder: the
           * agent may have planted it to make us copy from elsewhere. */
          if (saved_errno == ELOOP || saved_errno == ENOTDIR || saved_errno == EXDEV)
            {
              g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH,
                           "“%s” is not beneath a folder of the stage", p);
              return FALSE;
            }
          if (s->item->pinned)
            {
              /* Pinned as present, gone now: changed since the review. */
              note_stale (b, path);
              continue;
            }
          return set_errno_error (error, saved_errno, "Not found in the stage:", path);
        }
      if (!stat_matches_pin (s->item, &s->stage))
        {
          note_stale (b, path);
          continue;
        }
      if (S_ISDIR (s->stage.st_mode))
        g_hash_table_insert (dir_items, (gpointer) path, s);
      else if (S_ISREG (s->stage.st_mode) || S_ISLNK (s->stage.st_mode))
        g_hash_table_insert (file_items, (gpointer) path, s);
      else
        {
          g_autofree char *p = printable (path);
          g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_FAILED,
                       "“%s” in the stage is neither a file, a symlink nor a folder", p);
          return FALSE;
        }

      /* Every folder above a PUT must be a folder after the batch. */
      for (g_autofree char *d = path_parent (path); d[0] != '\0'; )
        {
          char *up = path_parent (d);

          g_hash_table_add (dir_set, g_steal_pointer (&d));
          d = up;
        }
      if (S_ISDIR (s->stage.st_mode))
        g_hash_table_add (dir_set, g_strdup (path));
    }

  /* Nothing is written when an entry is not of the pinned type and mode. */
  if (b->stale->len > 0)
    return stale_error (b, error);

  /* A PUT beneath a REMOVE or beneath a file PUT contradicts it. By hash
   * lookups of each ancestor: batches can be large. */
  for (guint i = 0; i < selected->len; i++)
    {
      Selected *s = g_ptr_array_index (selected, i);

      if (s->item->action == PADDOCK_APPLY_REMOVE)
        g_hash_table_insert (removes, (gpointer) s->item->path, s);
    }
  for (guint i = 0; i < selected->len; i++)
    {
      Selected *t = g_ptr_array_index (selected, i);

      if (t->item->action == PADDOCK_APPLY_PUT &&
          (find_ancestor (removes, t->item->path, FALSE) != NULL ||
           find_ancestor (file_items, t->item->path, FALSE) != NULL))
        {
          g_autofree char *p = printable (t->item->path);
          g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH,
                       "“%s” lies beneath an entry the batch removes or makes a file", p);
          return FALSE;
        }
    }

  /* Removals. */
  for (guint i = 0; i < selected->len; i++)
    {
      Selected *s = g_ptr_array_index (selected, i);
      Op *op;

      if (s->item->action != PADDOCK_APPLY_REMOVE)
        continue;
      op = op_new (OP_REMOVE, s->item->path);
      op->item = s->item;
      op->check = s->current;
      g_ptr_array_add (b->ops, op);
      if (!s->current.present)
        {
          op->noop = TRUE;  /* nothing there: nothing to remove */
          continue;
        }
      if (dir_fd_for (b, op->parent) < 0)
        return set_errno_error (error, errno, "Could not open the folder of", op->path);
      op->ino = s->current.ino;
      op->old_sha = sha256_entry_at (dir_fd_for (b, op->parent), op->name, &op->check,
                                    &op->old_sha_extents);
      op_take_temp (b, op);
    }
  /* Only removals so far: deepest first, so a folder's children go first. */
  g_ptr_array_sort (b->ops, compare_removals);

  /* Folders, shallowest first, so a parent is placed before its children. */
  g_hash_table_iter_init (&iter, dir_set);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_ptr_array_add (dir_list, key);
  g_ptr_array_sort (dir_list, compare_dirs_shallow_first);
  for (guint i = 0; i < dir_list->len; i++)
    {
      const char *d = g_ptr_array_index (dir_list, i);
      g_autofree char *parent = path_parent (d);
      Selected *explicit = g_hash_table_lookup (dir_items, d);
      PaddockFileStamp current;
      Op *op;

      if (g_hash_table_contains (file_items, d))
        continue;  /* refused above */

      stamp_clear (&current);
      if (!g_hash_table_contains (new_dirs, parent))
        {
          int pfd = dir_fd_for (b, parent);

          if (pfd < 0)
            {
              int saved_errno = errno;
              g_autofree char *p = printable (parent);

              if (saved_errno == ELOOP || saved_errno == ENOTDIR || saved_errno == EXDEV)
                {
                  g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH,
                               "“%s” in the workspace is not a folder (a symlink?)", p);
                  return FALSE;
                }
              return set_errno_error (error, saved_errno, "Could not open", parent);
            }
          if (stamp_at (pfd, path_name (d), &current) != 0)
            return set_errno_error (error, errno, "Could not inspect", d);
        }

      if (current.present && S_ISDIR (current.mode))
        {
          if (dir_fd_for (b, d) < 0)
            return set_errno_error (error, errno, "Could not open", d);
          if (explicit == NULL)
            continue;
          op = op_new (OP_CHMOD, d);
          op->item = explicit->item;
          op->check = current;
          op->old_mode = current.mode & 07777;
          op->new_mode = explicit->stage.st_mode & 01777;
          op->noop = op->old_mode == op->new_mode;
          g_ptr_array_add (b->ops, op);
          continue;
        }

      if (current.present && explicit == NULL)
        {
          /* Refused, not replaced: the user did not ask for this entry to
           * change, and a symlink here would lead writes out of the tree. */
          g_autofree char *p = printable (d);
          g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH,
                       "“%s” in the workspace is not a folder (a symlink?)", p);
          return FALSE;
        }

      op = op_new (OP_DIR, d);
      op->item = explicit != NULL ? explicit->item : NULL;
      op->check = current;
      op->existed = current.present;
      if (explicit != NULL)
        op->new_mode = explicit->stage.st_mode & 01777;
      else
        {
          struct stat st;

          op->new_mode = stage_lstat (b, d, &st) && S_ISDIR (st.st_mode) ? st.st_mode & 01777 : 0755;
        }
      if (op->existed)
        op->old_sha = sha256_entry_at (dir_fd_for (b, parent), op->name, &op->check,
                                    &op->old_sha_extents);
      op_take_temp (b, op);
      g_hash_table_add (new_dirs, op->path);
      g_ptr_array_add (b->ops, op);
    }

  /* Files and symlinks. */
  for (guint i = 0; i < selected->len; i++)
    {
      Selected *s = g_ptr_array_index (selected, i);
      Op *op;

      if (!g_hash_table_contains (file_items, s->item->path))
        continue;
      op = op_new (OP_PUT, s->item->path);
      op->item = s->item;
      op->check = s->current;
      op->existed = s->current.present;
      op->stage_type = s->stage.st_mode & S_IFMT;
      /* Never setuid/setgid: the agent must not mint privileged programs. */
      op->new_mode = s->stage.st_mode & 01777;
      if (op->stage_type == S_IFREG)
        {
          op->allocated = paddock_allocated_bytes (&s->stage);
          /* Names of one stage inode land as names of one new inode: a
           * file the agent hard-linked N times is not N copies on the
           * user's disk. Only within the batch: a link to anything else
           * (the workspace's own files, an unselected change) is copied. */
          if (s->stage.st_nlink > 1)
            {
              gint64 ino_key = (gint64) s->stage.st_ino;
              Op *first = g_hash_table_lookup (inodes, &ino_key);

              if (first != NULL)
                op->link_of = first;
              else
                g_hash_table_insert (inodes, g_memdup2 (&ino_key, sizeof ino_key), op);
            }
        }
      g_ptr_array_add (b->ops, op);
      /* An existing folder is opened now (a new one when its temp is made). */
      if (!g_hash_table_contains (new_dirs, op->parent) && dir_fd_for (b, op->parent) < 0)
        {
          int saved_errno = errno;
          g_autofree char *p = printable (op->parent);

          if (saved_errno == ELOOP || saved_errno == ENOTDIR || saved_errno == EXDEV)
            {
              g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH,
                           "“%s” in the workspace is not a folder (a symlink?)", p);
              return FALSE;
            }
          return set_errno_error (error, saved_errno, "Could not open", op->parent);
        }
      if (op->existed)
        op->old_sha = sha256_entry_at (dir_fd_for (b, op->parent), op->name, &op->check,
                                    &op->old_sha_extents);
      op_take_temp (b, op);
    }

  return TRUE;
}

/* Refuses a batch that cannot fit before it writes anything: the bytes
 * its new files allocate in the stage (holes cost nothing, a hard-linked
 * inode counts once) and a block per new folder, against what the
 * workspace's file system has free, and the same for inodes. The old
 * versions stay as backups until the commit, so nothing is subtracted for
 * what the batch replaces. The workspace's own file system only: a mount
 * inside it is caught by ENOSPC while writing, with the same rollback. */
gboolean
check_space (Batch   *b,
             GError **error)
{
  struct statvfs vfs;
  guint64 need = 0, inodes = 0, avail;

  for (guint i = 0; i < b->ops->len; i++)
    {
      Op *op = g_ptr_array_index (b->ops, i);

      if (op->noop || op->kind == OP_REMOVE || op->kind == OP_CHMOD)
        continue;
      if (op->kind == OP_DIR)
        {
          need += 4096;
          inodes++;
        }
      else if (op->link_of == NULL)
        {
          need += op->stage_type == S_IFREG ? op->allocated : 4096;
          inodes++;
        }
    }
  if (fstatvfs (b->w_fd, &vfs) != 0)
    return set_errno_error (error, errno, "Could not inspect the file system of", ".");
  avail = (guint64) vfs.f_bavail * (guint64) vfs.f_frsize;
  if (need > avail)
    {
      g_autofree char *need_s = g_format_size_full (need, G_FORMAT_SIZE_IEC_UNITS);
      g_autofree char *avail_s = g_format_size_full (avail, G_FORMAT_SIZE_IEC_UNITS);

      g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_NO_SPACE,
                   "The changes need %s on the folder's file system; %s are free",
                   need_s, avail_s);
      return FALSE;
    }
  /* f_files == 0: a file system without an inode limit (btrfs). */
  if (vfs.f_files != 0 && inodes > (guint64) vfs.f_favail)
    {
      g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_NO_SPACE,
                   "The changes need %" G_GUINT64_FORMAT " new entries on the folder's "
                   "file system; it has room for %" G_GUINT64_FORMAT,
                   inodes, (guint64) vfs.f_favail);
      return FALSE;
    }
  return TRUE;
}
