/* paddock-stage-copy.c — dropping changes, checkpoints and the agent's commits
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Part of PaddockStage (paddock-stage.c: the stage, its baseline and reviews).
 */

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <limits.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "paddock-apply-restored.h"
#include "paddock-autofd.h"
#include "paddock-baseline.h"
#include "paddock-change.h"
#include "paddock-durable-file.h"
#include "paddock-review-token.h"
#include "paddock-stage.h"
#include "paddock-stage-private.h"

static gpointer
ref_copy (gconstpointer object,
          gpointer      unused)
{
  return g_object_ref ((gpointer) object);
}

/* Empties a folder in place (the overlay's work folder, a whole drop). */
static gboolean
reset_dir (const char  *path,
           GError     **error)
{
  paddock_remove_tree (path);
  return paddock_ensure_private_dir (path, error);
}

/* Copies the workspace's entry @name (a file, link or whole folder), in
 * the folder open as @ws_dir, into the stage's folder open as @stage_dir
 * under the same name. */
static gboolean
copy_from_workspace (int            ws_dir,
                     int            stage_dir,
                     const char    *name,
                     GCancellable  *cancellable,
                     GError       **error)
{
  g_autofree char *tmp = NULL;
  struct stat st;

  /* Beside its destination first, then renamed over it: the stage never
   * holds half an entry. A name of our own that nothing there has (not
   * built from @name: a long name would make it longer than NAME_MAX). */
  do
    {
      g_free (tmp);
      tmp = g_strdup_printf (".paddock-drop-%08x", g_random_int ());
    }
  while (fstatat (stage_dir, tmp, &st, AT_SYMLINK_NOFOLLOW) == 0);
  if (!paddock_entry_copy_at (ws_dir, name, stage_dir, tmp, cancellable, error))
    {
      paddock_remove_tree_at (stage_dir, tmp);
      return FALSE;
    }
  paddock_remove_tree_at (stage_dir, name);
  if (renameat (stage_dir, tmp, stage_dir, name) != 0)
    {
      int saved_errno = errno;
      paddock_remove_tree_at (stage_dir, tmp);
      return errno_error (error, saved_errno, "Could not place", name);
    }
  return TRUE;
}

/* The folder @name in the folder open as @dir_fd, never through a
 * symbolic link, or -1 (also for a @dir_fd of -1: nothing there). */
static int
open_folder_in (int         dir_fd,
                const char *name)
{
  return dir_fd < 0 ? -1 : openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Makes the stage show the workspace's own entry at @rel again. Walked
 * folder by folder through descriptors, never by the whole path: a row
 * of an agent's tree may be longer than PATH_MAX. */
static gboolean
drop_path (PaddockStage  *self,
           const char    *rel,
           GCancellable  *cancellable,
           GError       **error)
{
  g_auto(GStrv) parts = g_strsplit (rel, "/", -1);
  paddock_autofd int stage_dir = open (self->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  paddock_autofd int ws_dir = open (self->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  guint n = g_strv_length (parts);
  struct stat st;

  if (stage_dir < 0)
    return errno_error (error, errno, "Could not open", self->root);
  if (ws_dir < 0)
    return errno_error (error, errno, "Could not open", self->workspace);

  /* The folders on the way. In an overlay upper a missing folder means
   * "unchanged, the workspace shows through" — and so does everything
   * below it: nothing to do. A whiteout or a non-folder there (the
   * session deleted or replaced the folder) becomes an opaque folder that
   * will hold just the entry brought back. A copy stage gets the folder
   * made. The workspace's side is followed as far as it has folders. */
  for (guint i = 0; i + 1 < n; i++)
    {
      int stat_errno = fstatat (stage_dir, parts[i], &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
      gboolean made = FALSE;
      int stage_sub;
      int ws_sub;

      if (stat_errno != 0 || !S_ISDIR (st.st_mode))
        {
          struct stat ws_st;

          if (stat_errno != 0 && stat_errno != ENOENT)
            return errno_error (error, stat_errno, "Could not inspect", rel);
          if (stat_errno == ENOENT && self->kind == PADDOCK_STAGE_KIND_OVERLAY)
            return TRUE;
          if (ws_dir < 0 || fstatat (ws_dir, parts[i], &ws_st, AT_SYMLINK_NOFOLLOW) != 0 ||
              !S_ISDIR (ws_st.st_mode))
            return TRUE;   /* the workspace has no folder here either */
          paddock_remove_tree_at (stage_dir, parts[i]);
          if (mkdirat (stage_dir, parts[i], ws_st.st_mode & 07777) != 0)
            return errno_error (error, errno, "Could not create a folder of", rel);
          made = TRUE;
        }
      stage_sub = open_folder_in (stage_dir, parts[i]);
      if (stage_sub < 0)
        return errno_error (error, errno, "Could not open a folder of", rel);
      ws_sub = open_folder_in (ws_dir, parts[i]);
      paddock_close_fd (&stage_dir);
      paddock_close_fd (&ws_dir);
      stage_dir = stage_sub;
      ws_dir = ws_sub;
      if (made && self->kind == PADDOCK_STAGE_KIND_OVERLAY &&
          fsetxattr (stage_dir, "user.overlay.opaque", "y", 1, 0) != 0)
        return errno_error (error, errno, "Could not mark opaque a folder of", rel);
    }

  if (ws_dir >= 0 && fstatat (ws_dir, parts[n - 1], &st, AT_SYMLINK_NOFOLLOW) == 0)
    return copy_from_workspace (ws_dir, stage_dir, parts[n - 1], cancellable, error);
  paddock_remove_tree_at (stage_dir, parts[n - 1]);
  return TRUE;
}

/* The folder holding the copy's entry at @rel, open, and the entry's
 * name in it; -1 when a folder on the way is not there. */
static int
open_parent_of (PaddockStage *self,
                const char   *rel,
                const char  **out_name)
{
  g_auto(GStrv) parts = g_strsplit (rel, "/", -1);
  guint n = g_strv_length (parts);
  int dir = open (self->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  for (guint i = 0; dir >= 0 && i + 1 < n; i++)
    {
      int sub = open_folder_in (dir, parts[i]);

      close (dir);
      dir = sub;
    }
  *out_name = strrchr (rel, '/') != NULL ? strrchr (rel, '/') + 1 : rel;
  return dir;
}

/* Adds the copy's entry @name in the folder open as @dir_fd, at @rel (or
 * its absence), and, for a folder, everything below it, with their stamps
 * now. What a drop brought back is a copy of the workspace's, made no
 * deeper than the copy's own bound (paddock-checkpoint.c): the recursion
 * is as deep. */
static void
note_copy_entries_at (int         dir_fd,
                      const char *name,
                      const char *rel,
                      GPtrArray  *relpaths,
                      GPtrArray  *stamps)
{
  PaddockFileStamp *stamp = NULL;
  paddock_autofd int sub = -1;
  int scan;
  struct stat st;
  DIR *dir;
  struct dirent *entry;

  /* The copy's stamps are kept for paths apply could take (PATH_MAX, as
   * the baseline's records): a longer one, and all below it, is compared
   * by its contents in later reviews, as without stamps. */
  if (strlen (rel) >= PATH_MAX)
    return;
  stamp = g_new0 (PaddockFileStamp, 1);
  if (dir_fd >= 0 && fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    paddock_file_stamp_from_stat (stamp, &st);
  g_ptr_array_add (relpaths, g_strdup (rel));
  g_ptr_array_add (stamps, stamp);
  if (!stamp->present || !S_ISDIR (st.st_mode) || (sub = open_folder_in (dir_fd, name)) < 0)
    return;
  scan = fcntl (sub, F_DUPFD_CLOEXEC, 3);
  dir = scan >= 0 ? fdopendir (scan) : NULL;
  if (dir == NULL)
    {
      if (scan >= 0)
        close (scan);
      return;
    }
  while ((entry = readdir (dir)) != NULL)
    {
      g_autofree char *child = NULL;

      if (g_str_equal (entry->d_name, ".") || g_str_equal (entry->d_name, ".."))
        continue;
      child = g_strconcat (rel, "/", entry->d_name, NULL);
      note_copy_entries_at (sub, entry->d_name, child, relpaths, stamps);
    }
  closedir (dir);
}

static void
note_copy_entries (PaddockStage *self,
                   const char   *rel,
                   GPtrArray    *relpaths,
                   GPtrArray    *stamps)
{
  const char *name = NULL;
  paddock_autofd int parent = open_parent_of (self, rel, &name);

  note_copy_entries_at (parent, name, rel, relpaths, stamps);
}

gboolean
paddock_stage_drop (PaddockStage       *self,
                    const char *const  *paths,
                    GCancellable       *cancellable,
                    GError            **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  g_autoptr(PaddockReview) review = NULL;
  g_autoptr(GPtrArray) chosen = NULL;
  g_autoptr(GPtrArray) relpaths = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) stamps = g_ptr_array_new_with_free_func (g_free);
  PaddockBaseline *copy_baseline;

  forget_last_review (self);
  if (paths == NULL || paths[0] == NULL)
    {
      if (self->kind == PADDOCK_STAGE_KIND_OVERLAY)
        return reset_dir (self->root, error) && reset_dir (self->work, error);
      paddock_remove_tree (self->root);
      return make_copy (self, cancellable, error);
    }

  review = locked_review (self, cancellable, error);
  if (review == NULL)
    return FALSE;
  copy_baseline = locked_get_copy_baseline (self);
  {
    /* Dropping is always safe: metadata rows may be named too (it is how
     * a user discards what the agent wrote into .git). */
    g_autoptr(GPtrArray) every = g_ptr_array_copy (paddock_review_get_changes (review),
                                                   ref_copy, NULL);

    g_ptr_array_set_free_func (every, g_object_unref);
    g_ptr_array_extend (every, paddock_review_get_metadata (review),
                        ref_copy, NULL);
    chosen = select_changes (every, NULL, paths, SELECT_FOR_DROP, error);
  }
  if (chosen == NULL)
    return FALSE;
  for (guint i = 0; i < chosen->len; i++)
    {
      PaddockChange *change = g_ptr_array_index (chosen, i);
      const char *old_path = paddock_change_get_old_path (change);

      if (!drop_path (self, paddock_change_get_path (change), cancellable, error))
        return FALSE;
      if (old_path != NULL && !drop_path (self, old_path, cancellable, error))
        return FALSE;
      if (copy_baseline != NULL)
        {
          note_copy_entries (self, paddock_change_get_path (change), relpaths, stamps);
          if (old_path != NULL)
            note_copy_entries (self, old_path, relpaths, stamps);
        }
    }
  forget_last_review (self);

  /* What was dropped is the workspace's again, as the copy now has it: a
   * later edit of it by the user is theirs, not the session's. */
  if (copy_baseline != NULL && !paddock_baseline_update_many (copy_baseline, relpaths, stamps, error))
    return FALSE;
  return TRUE;
}

char *
paddock_stage_create_checkpoint (PaddockStage  *self,
                                 const char    *name,
                                 GCancellable  *cancellable,
                                 GError       **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  g_autoptr(PaddockReview) review = NULL;
  g_autoptr(GString) listed = NULL;
  g_autofree char *chosen = NULL;
  g_autofree char *list_file = NULL;
  g_autoptr(GError) local_error = NULL;

  if (self->kind != PADDOCK_STAGE_KIND_COPY || locked_get_copy_baseline (self) == NULL)
    return paddock_checkpoint_create (self->checkpoints_dir, name, self->root, cancellable, error);

  /* A restored copy has new stamps throughout: which of its entries are
   * the session's must be kept with the checkpoint. */
  review = locked_review (self, cancellable, error);
  if (review == NULL)
    return NULL;
  chosen = paddock_checkpoint_create (self->checkpoints_dir, name, self->root, cancellable, error);
  if (chosen == NULL)
    return NULL;

  listed = g_string_new (NULL);
  for (guint i = 0; i < paddock_review_get_changes (review)->len; i++)
    {
      PaddockChange *change = g_ptr_array_index (paddock_review_get_changes (review), i);
      const char *old_path = paddock_change_get_old_path (change);

      g_string_append_len (listed, paddock_change_get_path (change),
                           (gssize) strlen (paddock_change_get_path (change)) + 1);
      if (old_path != NULL)
        g_string_append_len (listed, old_path, (gssize) strlen (old_path) + 1);
    }
  list_file = g_build_filename (self->checkpoints_dir, chosen, COPY_CHANGES_FILE, NULL);
  /* Without it, a restore lists every difference: the safe way round. */
  if (!paddock_durable_file_replace (list_file, listed->str, (gssize) listed->len, 0600, &local_error))
    g_message ("Checkpoint %s: could not keep the session's paths: %s", chosen, local_error->message);
  return g_steal_pointer (&chosen);
}

GPtrArray *
paddock_stage_list_checkpoints (PaddockStage  *self,
                                GError       **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  return paddock_checkpoint_list (self->checkpoints_dir, error);
}

/* After a restore, copy/ has new stamps throughout: its stamps now are
 * the copy's, except for the paths the session had changed when the
 * checkpoint was made, which are always compared ("unknown" stamps, and
 * "was there" for those it had deleted). A checkpoint without that list
 * (made by an older daemon) leaves no stamps: every difference is listed. */
static gboolean
restamp_restored_copy (PaddockStage  *self,
                       const char    *name,
                       GCancellable  *cancellable,
                       GError       **error)
{
  g_autofree char *list_file = g_build_filename (self->checkpoints_dir, name, COPY_CHANGES_FILE, NULL);
  g_autofree char *listed = NULL;
  g_autoptr(GPtrArray) relpaths = g_ptr_array_new ();
  g_autoptr(GPtrArray) stamps = g_ptr_array_new ();
  PaddockFileStamp unknown = { TRUE, 0, 0, 0, 0, G_MININT64 };
  g_autoptr(GError) local_error = NULL;
  gsize length = 0;

  if (!forget_copy_baseline (self, error))
    return FALSE;
  if (!g_file_get_contents (list_file, &listed, &length, NULL))
    return TRUE;
  if (!record_copy_baseline (self, cancellable, error))
    return FALSE;

  for (gsize pos = 0; pos < length; )
    {
      const char *path = listed + pos;
      gsize len = strnlen (path, length - pos);

      if (pos + len == length)
        break;  /* not NUL-terminated: cut short */
      g_ptr_array_add (relpaths, (gpointer) path);
      g_ptr_array_add (stamps, &unknown);
      pos += len + 1;
    }
  if (!paddock_baseline_update_many (self->copy_baseline, relpaths, stamps, &local_error))
    {
      g_message ("Checkpoint %s: the session's paths could not be kept (%s): every difference "
                 "will be listed", name, local_error->message);
      return forget_copy_baseline (self, error);
    }
  return TRUE;
}

gboolean
paddock_stage_restore_checkpoint (PaddockStage  *self,
                                  const char    *name,
                                  GCancellable  *cancellable,
                                  GError       **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  forget_last_review (self);
  if (!paddock_checkpoint_restore (self->checkpoints_dir, name, self->root, cancellable, error))
    return FALSE;
  if (self->kind == PADDOCK_STAGE_KIND_COPY)
    return restamp_restored_copy (self, name, cancellable, error);
  /* overlayfs keeps scratch state in the work folder; it belongs to the
   * upper layer that just left. */
  return reset_dir (self->work, error);
}

/* The commits the agent made in the stage's repository, against the
 * workspace's repository as it is now (paddock-agent-commits.c). */
PaddockAgentCommits *
paddock_stage_list_commits (PaddockStage  *self,
                            GCancellable  *cancellable,
                            GError       **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  return paddock_agent_commits_new (self->workspace, self->root, self->kind, cancellable, error);
}

/* Lists the commits again and offers them as @branch of the workspace's
 * repository, in one locked step: what is applied is what was just read.
 * Sets the tip and how many objects were copied. */
gboolean
paddock_stage_apply_commits (PaddockStage  *self,
                             const char    *branch,
                             const char    *who,
                             char         **out_tip,
                             guint         *out_n_objects,
                             guint         *out_n_commits,
                             GCancellable  *cancellable,
                             GError       **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  g_autoptr(PaddockAgentCommits) commits = NULL;

  commits = paddock_agent_commits_new (self->workspace, self->root, self->kind, cancellable, error);
  if (commits == NULL ||
      !paddock_agent_commits_apply (commits, branch, self->ledger_file, who, out_n_objects, error))
    return FALSE;
  if (out_tip != NULL)
    *out_tip = g_strdup (paddock_agent_commits_get_tip (commits));
  if (out_n_commits != NULL)
    *out_n_commits = paddock_agent_commits_get_commits (commits)->len;
  return TRUE;
}
