/* paddock-review.c — what a session changed, compared with the live workspace
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-repo-metadata.h"
#include "paddock-review.h"
#include "paddock-beneath.h"
#include "paddock-sparse-copy.h"
#include "paddock-change-details.h"
#include "paddock-review-cache.h"
#include "paddock-review-private.h"
#include "paddock-git-path.h"

G_DEFINE_ENUM_TYPE (PaddockStageKind, paddock_stage_kind,
  G_DEFINE_ENUM_VALUE (PADDOCK_STAGE_KIND_OVERLAY, "overlay"),
  G_DEFINE_ENUM_VALUE (PADDOCK_STAGE_KIND_COPY, "copy"))

/* Renames are looked for among at most this many added × deleted files
 * (libgit2's rename_limit); exact renames are always found. */
G_DEFINE_FINAL_TYPE (PaddockReview, paddock_review, G_TYPE_OBJECT)

static void
paddock_review_finalize (GObject *object)
{
  PaddockReview *self = PADDOCK_REVIEW (object);

  g_clear_pointer (&self->changes, g_ptr_array_unref);
  g_clear_pointer (&self->metadata, g_ptr_array_unref);
  g_clear_pointer (&self->by_path, g_hash_table_unref);
  g_clear_pointer (&self->delta_index, g_hash_table_unref);
  g_clear_pointer (&self->similarity, g_hash_table_unref);
  g_clear_pointer (&self->stamps, g_hash_table_unref);
  g_clear_pointer (&self->diff, git_diff_free);
  g_clear_pointer (&self->repo, git_repository_free);

  G_OBJECT_CLASS (paddock_review_parent_class)->finalize (object);
}

static void
paddock_review_class_init (PaddockReviewClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = paddock_review_finalize;
}

static void
paddock_review_init (PaddockReview *self)
{
  self->changes = g_ptr_array_new_with_free_func (g_object_unref);
  self->metadata = g_ptr_array_new_with_free_func (g_object_unref);
  self->by_path = g_hash_table_new (g_str_hash, g_str_equal);
  self->delta_index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->similarity = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->stamps = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

/* --- rows ----------------------------------------------------------- */

typedef struct {
  Side w;
  Side s;
} SidePair;

/* Where a row goes relative to the rows below its path. */
typedef enum {
  ORDER_NORMAL,          /* by path */
  ORDER_AFTER_CHILDREN,  /* a deleted directory: after its contents */
  ORDER_AFTER_DIRECTORY, /* a file or link where a directory was deleted */
} RowOrder;

/* One byte of a row's sort key: the path, then for the later orders '/'
 * and a "byte" greater than any other (256, or 257 to come after 256).
 * -1 is the end of the key. So an apply that walks the list in order
 * removes a directory's contents, then the directory, then puts a file in
 * its place. */
static int
key_byte (const char *path,
          gsize       len,
          RowOrder    order,
          gsize       i)
{
  if (i < len)
    return (guchar) path[i];
  if (order == ORDER_NORMAL)
    return -1;
  if (i == len)
    return '/';
  return order == ORDER_AFTER_CHILDREN ? 256 : 257;
}

static gboolean
is_deleted_directory (PaddockChange *change)
{
  return paddock_change_get_kind (change) == PADDOCK_CHANGE_KIND_DELETED &&
         S_ISDIR (paddock_change_get_old_mode (change));
}

static RowOrder
row_order (PaddockChange *change,
           GHashTable    *deleted_dirs)
{
  if (is_deleted_directory (change))
    return ORDER_AFTER_CHILDREN;
  if (g_hash_table_contains (deleted_dirs, paddock_change_get_path (change)))
    return ORDER_AFTER_DIRECTORY;
  return ORDER_NORMAL;
}

/* Display order: by path bytes (memcmp), adjusted by row_order().
 * Allocation-free: it runs n log n times. */
static int
change_compare (gconstpointer a,
                gconstpointer b,
                gpointer      user_data)
{
  PaddockChange *ca = *(PaddockChange * const *) a;
  PaddockChange *cb = *(PaddockChange * const *) b;
  GHashTable *deleted_dirs = user_data;
  const char *pa = paddock_change_get_path (ca);
  const char *pb = paddock_change_get_path (cb);
  RowOrder oa = row_order (ca, deleted_dirs);
  RowOrder ob = row_order (cb, deleted_dirs);
  gsize la = strlen (pa);
  gsize lb = strlen (pb);
  int cmp = memcmp (pa, pb, MIN (la, lb));

  if (cmp != 0)
    return cmp;

  /* Past the shared prefix each key ends within two more steps. */
  for (gsize i = MIN (la, lb); ; i++)
    {
      int ka = key_byte (pa, la, oa, i);
      int kb = key_byte (pb, lb, ob, i);

      if (ka != kb)
        return ka < kb ? -1 : 1;
      if (ka == -1 || ka >= 256)
        return 0;
    }
}

static gboolean
current_stamp (int               w_fd,
               const char       *rel,
               PaddockFileStamp *out,
               GError          **error)
{
  paddock_autofd int parent_fd = -1;
  const char *base = NULL;
  struct stat st;

  memset (out, 0, sizeof *out);
  parent_fd = paddock_open_parent_beneath (w_fd, rel, &base);
  if (parent_fd < 0)
    {
      if (errno_means_absent (errno))
        return TRUE;
      return review_set_errno_error (error, errno, "Could not open the folder of", rel);
    }
  if (fstatat (parent_fd, base, &st, AT_SYMLINK_NOFOLLOW) != 0)
    {
      if (errno_means_absent (errno))
        return TRUE;
      return review_set_errno_error (error, errno, "Could not stat", rel);
    }
  paddock_file_stamp_from_stat (out, &st);
  return TRUE;
}

/* The workspace entry changed since the baseline (appeared, vanished or was
 * touched): applying the session's version would overwrite that edit.
 * @sides has the workspace's stamp of every candidate, taken as the
 * review read it. */
static gboolean
path_conflicts (PaddockBaseline  *baseline,
                int               w_fd,
                GHashTable       *sides,
                const char       *rel,
                gboolean         *out_conflict,
                GError          **error)
{
  const SidePair *pair;
  PaddockFileStamp now, then;

  *out_conflict = FALSE;
  if (baseline == NULL || rel == NULL)
    return TRUE;
  pair = g_hash_table_lookup (sides, rel);
  if (pair != NULL)
    now = pair->w.stamp;
  else if (!current_stamp (w_fd, rel, &now, error))
    return FALSE;
  paddock_baseline_lookup (baseline, rel, &then);
  *out_conflict = !paddock_file_stamp_equal (&now, &then);
  return TRUE;
}

static PaddockEntryType
entry_type_from_git_mode (guint32 mode)
{
  if (mode == GIT_FILEMODE_LINK)
    return PADDOCK_ENTRY_TYPE_SYMLINK;
  return PADDOCK_ENTRY_TYPE_FILE;
}

/* Adds every proper ancestor directory of @rel ("a" and "a/b" for
 * "a/b/c") to @set. */
static void
add_ancestors (GHashTable *set,
               const char *rel)
{
  for (const char *slash = strchr (rel, '/'); slash != NULL; slash = strchr (slash + 1, '/'))
    {
      char *dir = g_strndup (rel, (gsize) (slash - rel));
      if (!g_hash_table_add (set, dir))
        break;  /* its own ancestors are in already */
    }
}

/* How many lines the change of delta @i adds and removes (none when
 * either side is binary), as `git diff --numstat` counts them: from the
 * patch xdiff computes, or from the cache when this pair of blobs was
 * diffed before. */
static gboolean
line_stats (PaddockReviewCache *cache,
            git_diff           *diff,
            gsize               i,
            PaddockLineStats   *out,
            GError            **error)
{
  const git_diff_delta *delta = git_diff_get_delta (diff, i);
  g_autoptr(git_patch) patch = NULL;
  size_t context = 0, added = 0, removed = 0;

  memset (out, 0, sizeof *out);
  if (cache != NULL && paddock_review_cache_lookup_stats (cache, &delta->old_file.id, &delta->new_file.id, out))
    return TRUE;

  if (git_patch_from_diff (&patch, diff, i) != 0)
    return set_git_error (error, "Could not compute a diff");
  if (patch != NULL && git_patch_line_stats (&context, &added, &removed, patch) != 0)
    return set_git_error (error, "Could not count lines");
  out->binary = patch != NULL && (git_patch_get_delta (patch)->flags & GIT_DIFF_FLAG_BINARY) != 0;
  if (!out->binary)
    {
      out->added = (guint) MIN (added, G_MAXUINT);
      out->removed = (guint) MIN (removed, G_MAXUINT);
    }
  if (cache != NULL)
    paddock_review_cache_add_stats (cache, &delta->old_file.id, &delta->new_file.id, out);
  return TRUE;
}

/* Whether rename detection by similarity could pair anything that exact
 * rename detection does not. libgit2 pairs each rename target with its
 * most similar source, an identical one scoring 100 and winning over any
 * other; sources are deleted files, targets added ones (regular files, not
 * links), and a type change is both. So when, after pairing deleted with
 * added files of the same content, no deleted or no added file is left
 * over (and nothing changed type), similarity scores cannot change the
 * outcome, and computing a signature of every candidate is wasted. */
static gboolean
needs_similarity (git_diff *diff)
{
  g_autoptr(GHashTable) balance = g_hash_table_new_full ((GHashFunc) g_bytes_hash, (GEqualFunc) g_bytes_equal,
                                                         (GDestroyNotify) g_bytes_unref, NULL);
  gsize n_deltas = git_diff_num_deltas (diff);
  gsize left_deleted = 0;
  gsize left_added = 0;
  GHashTableIter iter;
  gpointer value;

  for (gsize i = 0; i < n_deltas; i++)
    {
      const git_diff_delta *delta = git_diff_get_delta (diff, i);
      const git_diff_file *file;
      GBytes *key;
      gssize count;

      if (delta->status == GIT_DELTA_TYPECHANGE)
        return TRUE;
      if (delta->status == GIT_DELTA_DELETED)
        file = &delta->old_file;
      else if (delta->status == GIT_DELTA_ADDED)
        file = &delta->new_file;
      else
        continue;
      if (file->mode != GIT_FILEMODE_BLOB && file->mode != GIT_FILEMODE_BLOB_EXECUTABLE)
        continue;

      /* +1 per deleted file, -1 per added one, by content. */
      key = g_bytes_new (file->id.id, GIT_OID_RAWSZ);
      count = (gssize) GPOINTER_TO_SIZE (g_hash_table_lookup (balance, key));
      count += delta->status == GIT_DELTA_DELETED ? 1 : -1;
      g_hash_table_replace (balance, key, GSIZE_TO_POINTER ((gsize) count));
    }

  g_hash_table_iter_init (&iter, balance);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      gssize count = (gssize) GPOINTER_TO_SIZE (value);

      if (count > 0)
        left_deleted += (gsize) count;
      else
        left_added += (gsize) -count;
    }
  return left_deleted > 0 && left_added > 0;
}

static gboolean
compute (PaddockReview    *self,
         Collect          *c,
         PaddockBaseline  *baseline,
         GError          **error)
{
  g_autoptr(GPtrArray) paths = NULL;
  g_autoptr(GHashTable) sides = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  g_autoptr(GHashTable) non_empty = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GPtrArray) added_dirs = g_ptr_array_new ();
  g_autoptr(git_repository) repo = NULL;
  g_autoptr(git_odb) odb = NULL;
  g_autoptr(git_index) old_index = NULL;
  g_autoptr(git_index) new_index = NULL;
  g_autoptr(git_tree) old_tree = NULL;
  g_autoptr(git_tree) new_tree = NULL;
  g_autoptr(git_diff) diff = NULL;
  git_odb_backend *mempack = NULL;
  git_diff_options diff_opts = GIT_DIFF_OPTIONS_INIT;
  git_diff_find_options find_opts = GIT_DIFF_FIND_OPTIONS_INIT;
  git_oid old_tree_id, new_tree_id;
  Blobs blobs = { NULL, NULL, c->cache };
  gboolean overlay = c->kind == PADDOCK_STAGE_KIND_OVERLAY;
  g_auto(ParentCache) w_parents = PARENT_CACHE_INIT;
  g_auto(ParentCache) s_parents = PARENT_CACHE_INIT;
  gsize n_deltas;

  ensure_libgit2 ();

  /* A repository with no directory: objects live in a mempack backend and
   * vanish with it. Nothing touches the disk or any git config. */
  if (git_repository_new (&repo) != 0 || git_odb_new (&odb) != 0 ||
      git_mempack_new (&mempack) != 0)
    return set_git_error (error, "Could not create an in-memory repository");
  if (git_odb_add_backend (odb, mempack, 1) != 0)
    {
      mempack->free (mempack);
      return set_git_error (error, "Could not create an in-memory repository");
    }
  if (git_repository_set_odb (repo, odb) != 0 ||
      git_index_new (&old_index) != 0 || git_index_new (&new_index) != 0)
    return set_git_error (error, "Could not create an in-memory repository");
  blobs.odb = odb;
  blobs.mempack = mempack;

  paths = g_ptr_array_sized_new (g_hash_table_size (c->candidates));
  {
    GHashTableIter iter;
    gpointer key;

    g_hash_table_iter_init (&iter, c->candidates);
    while (g_hash_table_iter_next (&iter, &key, NULL))
      g_ptr_array_add (paths, key);
  }
  g_ptr_array_sort (paths, (GCompareFunc) (void (*) (void)) g_strcmp0);

  for (guint i = 0; i < paths->len; i++)
    {
      const char *rel = g_ptr_array_index (paths, i);
      SidePair *pair = g_new0 (SidePair, 1);
      int w_parent = -1;  /* borrowed from the caches */
      int s_parent = -1;
      const char *w_base = NULL;
      const char *s_base = NULL;

      g_hash_table_insert (sides, (gpointer) rel, pair);

      if (g_cancellable_set_error_if_cancelled (c->cancellable, error))
        return FALSE;
      if (!lookup_side (&w_parents, c->w_fd, rel, FALSE, &pair->w, &w_parent, &w_base, error) ||
          !lookup_side (&s_parents, c->s_fd, rel, overlay, &pair->s, &s_parent, &s_base, error))
        return FALSE;

      if (pair->w.type == SIDE_DIR && pair->s.type == SIDE_DIR)
        {
          gboolean conflict = FALSE;

          if ((pair->w.mode & 07777) == (pair->s.mode & 07777))
            continue;
          if (!path_conflicts (baseline, c->w_fd, sides, rel, &conflict, error))
            return FALSE;
          g_ptr_array_add (self->changes,
                           paddock_change_new (rel, NULL, PADDOCK_CHANGE_KIND_MODE_CHANGED,
                                               PADDOCK_ENTRY_TYPE_DIRECTORY,
                                               pair->w.mode, pair->s.mode,
                                               FALSE, 0, 0, conflict));
          continue;
        }

      if (pair->w.type == SIDE_DIR)
        {
          gboolean conflict = FALSE;

          /* Gone from the session's view: a row after its files, typed
           * DIRECTORY (unlike a deleted file's NONE) so a list can show it
           * as a folder. */
          if (!path_conflicts (baseline, c->w_fd, sides, rel, &conflict, error))
            return FALSE;
          g_ptr_array_add (self->changes,
                           paddock_change_new (rel, NULL, PADDOCK_CHANGE_KIND_DELETED,
                                               PADDOCK_ENTRY_TYPE_DIRECTORY, pair->w.mode, 0,
                                               FALSE, 0, 0, conflict));
        }
      else if (pair->w.type != SIDE_NONE &&
               !index_add_side (old_index, &blobs, w_parent, w_base, rel, &pair->w, error))
        return FALSE;

      if (pair->s.type == SIDE_DIR)
        g_ptr_array_add (added_dirs, (gpointer) rel);
      else if (pair->s.type != SIDE_NONE &&
               !index_add_side (new_index, &blobs, s_parent, s_base, rel, &pair->s, error))
        return FALSE;
    }

  if (git_index_write_tree_to (&old_tree_id, old_index, repo) != 0 ||
      git_index_write_tree_to (&new_tree_id, new_index, repo) != 0 ||
      git_tree_lookup (&old_tree, repo, &old_tree_id) != 0 ||
      git_tree_lookup (&new_tree, repo, &new_tree_id) != 0)
    return set_git_error (error, "Could not build the trees to compare");

  diff_opts.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
  if (git_diff_tree_to_tree (&diff, repo, old_tree, new_tree, &diff_opts) != 0)
    return set_git_error (error, "Could not compare the workspace and the stage");

  /* Exact renames first, then by similarity (50% by default), as git does.
   * Similarity needs a signature of every file on both sides; when exact
   * matches leave nothing to pair, it would find nothing more. */
  find_opts.flags = GIT_DIFF_FIND_RENAMES;
  if (!needs_similarity (diff))
    find_opts.flags |= GIT_DIFF_FIND_EXACT_MATCH_ONLY;
  find_opts.rename_limit = RENAME_LIMIT;
  if (git_diff_find_similar (diff, &find_opts) != 0)
    return set_git_error (error, "Could not detect renames");

  n_deltas = git_diff_num_deltas (diff);
  for (gsize i = 0; i < n_deltas; i++)
    {
      const git_diff_delta *delta = git_diff_get_delta (diff, i);
      PaddockLineStats stats;
      g_autofree char *old_path = paddock_git_path_decode (delta->old_file.path);
      g_autofree char *new_path = paddock_git_path_decode (delta->new_file.path);
      const SidePair *old_pair = g_hash_table_lookup (sides, old_path);
      const SidePair *new_pair = g_hash_table_lookup (sides, new_path);
      PaddockChangeKind kind;
      const char *path = new_path;
      const char *renamed_from = NULL;
      PaddockEntryType entry_type = entry_type_from_git_mode (delta->new_file.mode);
      guint32 old_mode = old_pair != NULL ? old_pair->w.mode : 0;
      guint32 new_mode = new_pair != NULL ? new_pair->s.mode : 0;
      size_t added = 0, removed = 0;
      gboolean binary;
      gboolean conflict = FALSE, old_conflict = FALSE;

      if (g_cancellable_set_error_if_cancelled (c->cancellable, error))
        return FALSE;

      switch (delta->status)
        {
        case GIT_DELTA_ADDED:
          kind = PADDOCK_CHANGE_KIND_ADDED;
          old_mode = 0;
          break;
        case GIT_DELTA_DELETED:
          kind = PADDOCK_CHANGE_KIND_DELETED;
          path = old_path;
          entry_type = PADDOCK_ENTRY_TYPE_NONE;
          new_mode = 0;
          break;
        case GIT_DELTA_MODIFIED:
          kind = git_oid_equal (&delta->old_file.id, &delta->new_file.id)
                 ? PADDOCK_CHANGE_KIND_MODE_CHANGED : PADDOCK_CHANGE_KIND_MODIFIED;
          break;
        case GIT_DELTA_RENAMED:
          kind = PADDOCK_CHANGE_KIND_RENAMED;
          renamed_from = old_path;
          break;
        case GIT_DELTA_TYPECHANGE:
          kind = PADDOCK_CHANGE_KIND_TYPE_CHANGED;
          break;
        case GIT_DELTA_UNMODIFIED:
        case GIT_DELTA_COPIED:
        case GIT_DELTA_IGNORED:
        case GIT_DELTA_UNTRACKED:
        case GIT_DELTA_UNREADABLE:
        case GIT_DELTA_CONFLICTED:
        default:
          continue;  /* not produced by a tree-to-tree diff with these options */
        }

      if (!line_stats (c->cache, diff, i, &stats, error))
        return FALSE;
      binary = stats.binary;
      added = stats.added;
      removed = stats.removed;

      if (!path_conflicts (baseline, c->w_fd, sides, path, &conflict, error) ||
          !path_conflicts (baseline, c->w_fd, sides, renamed_from, &old_conflict, error))
        return FALSE;

      g_ptr_array_add (self->changes,
                       paddock_change_new (path, renamed_from, kind, entry_type,
                                           old_mode, new_mode, binary,
                                           (guint) MIN (added, G_MAXUINT),
                                           (guint) MIN (removed, G_MAXUINT),
                                           conflict || old_conflict));
      g_hash_table_insert (self->delta_index, g_strdup (path), GUINT_TO_POINTER ((guint) i + 1));
      if (kind == PADDOCK_CHANGE_KIND_RENAMED)
        g_hash_table_insert (self->similarity, g_strdup (path),
                             GUINT_TO_POINTER ((guint) delta->similarity));
    }

  /* Directories with a row or a new directory somewhere below them. */
  for (guint i = 0; i < self->changes->len; i++)
    add_ancestors (non_empty, paddock_change_get_path (g_ptr_array_index (self->changes, i)));
  for (guint i = 0; i < added_dirs->len; i++)
    add_ancestors (non_empty, g_ptr_array_index (added_dirs, i));

  /* A new directory with something in it is implied by its contents; an
   * empty one needs its own row, or applying would not reproduce it. */
  for (guint i = 0; i < added_dirs->len; i++)
    {
      const char *rel = g_ptr_array_index (added_dirs, i);
      const SidePair *pair = g_hash_table_lookup (sides, rel);
      gboolean conflict = FALSE;

      if (g_hash_table_contains (non_empty, rel))
        continue;
      if (!path_conflicts (baseline, c->w_fd, sides, rel, &conflict, error))
        return FALSE;
      g_ptr_array_add (self->changes,
                       paddock_change_new (rel, NULL, PADDOCK_CHANGE_KIND_ADDED,
                                           PADDOCK_ENTRY_TYPE_DIRECTORY,
                                           pair->w.type == SIDE_NONE ? 0 : pair->w.mode,
                                           pair->s.mode, FALSE, 0, 0, conflict));
    }

  {
    g_autoptr(GHashTable) deleted_dirs = g_hash_table_new (g_str_hash, g_str_equal);

    for (guint i = 0; i < self->changes->len; i++)
      {
        PaddockChange *change = g_ptr_array_index (self->changes, i);
        if (is_deleted_directory (change))
          g_hash_table_add (deleted_dirs, (gpointer) paddock_change_get_path (change));
      }
    g_ptr_array_sort_with_data (self->changes, change_compare, deleted_dirs);
  }
  /* Both sides' stamps of every row's paths, as this review saw them. */
  for (guint i = 0; i < self->changes->len; i++)
    {
      PaddockChange *change = g_ptr_array_index (self->changes, i);
      const char *row_paths[2] = { paddock_change_get_path (change), paddock_change_get_old_path (change) };

      for (guint k = 0; k < G_N_ELEMENTS (row_paths); k++)
        {
          const SidePair *pair = row_paths[k] != NULL ? g_hash_table_lookup (sides, row_paths[k]) : NULL;
          PaddockFileStamp *both;

          if (pair == NULL || g_hash_table_contains (self->stamps, row_paths[k]))
            continue;
          both = g_new (PaddockFileStamp, 2);
          both[0] = pair->s.stamp;
          both[1] = pair->w.stamp;
          g_hash_table_insert (self->stamps, g_strdup (row_paths[k]), both);
        }
    }

  for (guint i = 0; i < self->changes->len; i++)
    {
      PaddockChange *change = g_ptr_array_index (self->changes, i);
      /* A path has one row; a type change of a directory into a file is
       * the only way to get two (the deleted directory and the new file),
       * and the file's row is the one get_diff() shows. */
      if (!g_hash_table_contains (self->by_path, paddock_change_get_path (change)) ||
          !S_ISDIR (paddock_change_get_old_mode (change)))
        g_hash_table_insert (self->by_path, (gpointer) paddock_change_get_path (change), change);
    }

  self->repo = g_steal_pointer (&repo);
  self->diff = g_steal_pointer (&diff);
  return TRUE;
}

/**
 * paddock_review_new:
 * @workspace: the live workspace W
 * @stage_root: the overlay upper dir, or the full copy, per @kind
 * @kind: how the stage was made
 * @baseline: (nullable): W's stamps at session start; without it no row is
 *   a conflict
 * @copy_baseline: (nullable): for a copy stage, the copy's own stamps when
 *   it was made, so that only what the session touched is compared (an
 *   entry only the user changed is then not listed); without them every
 *   difference between the copy and W is a row
 * @cache: (nullable): what the previous review of this stage learnt (blob
 *   ids by stamp, line counts by blob pair); updated with this one's
 *
 * Computes the list of what the session changed relative to the current
 * W. Reads only; nothing in W or the stage is modified. Symlinks in W or in
 * the stage are never followed.
 */
PaddockReview *
paddock_review_new (const char          *workspace,
                    const char          *stage_root,
                    PaddockStageKind     kind,
                    PaddockBaseline     *baseline,
                    PaddockBaseline     *copy_baseline,
                    PaddockReviewCache  *cache,
                    GCancellable        *cancellable,
                    GError             **error)
{
  g_autoptr(PaddockReview) self = NULL;
  g_autoptr(GHashTable) candidates = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  paddock_autofd int w_fd = -1;
  paddock_autofd int s_fd = -1;
  Collect c = { kind, -1, -1, candidates, copy_baseline, cache, cancellable };
  gint64 started_ns = paddock_file_time_now_ns ();

  g_return_val_if_fail (workspace != NULL, NULL);
  g_return_val_if_fail (stage_root != NULL, NULL);
  g_return_val_if_fail (kind == PADDOCK_STAGE_KIND_OVERLAY || kind == PADDOCK_STAGE_KIND_COPY, NULL);
  g_return_val_if_fail (baseline == NULL || PADDOCK_IS_BASELINE (baseline), NULL);
  g_return_val_if_fail (copy_baseline == NULL || PADDOCK_IS_BASELINE (copy_baseline), NULL);
  g_return_val_if_fail (cache == NULL || PADDOCK_IS_REVIEW_CACHE (cache), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  w_fd = open (workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (w_fd < 0)
    return review_set_errno_error (error, errno, "Could not open the workspace", workspace), NULL;
  s_fd = open (stage_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (s_fd < 0)
    return review_set_errno_error (error, errno, "Could not open the stage", stage_root), NULL;
  c.w_fd = w_fd;
  c.s_fd = s_fd;

  if (kind == PADDOCK_STAGE_KIND_OVERLAY)
    {
      if (!collect_upper (&c, s_fd, w_fd, "", error))
        return NULL;
    }
  else if (!collect_pair (&c, w_fd, s_fd, "", error))
    return NULL;

  self = g_object_new (PADDOCK_TYPE_REVIEW, NULL);
  if (cache != NULL)
    paddock_review_cache_begin (cache, started_ns);
  if (!compute (self, &c, baseline, error))
    return NULL;
  if (cache != NULL)
    paddock_review_cache_commit (cache);
  /* Sizes, hard links and unappliable paths (paddock-change-details.c). */
  if (!paddock_change_details_fill (s_fd, self->changes, cancellable, error))
    return NULL;

  /* Repository metadata is never a file change: its rows go to a list of
   * their own (paddock-repo-metadata.c says why). by_path keeps every row,
   * so GetDiff shows what the agent wrote there. */
  paddock_repo_metadata_classify (self->changes, w_fd, s_fd);
  {
    g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_object_unref);

    for (guint i = 0; i < self->changes->len; i++)
      {
        PaddockChange *change = g_ptr_array_index (self->changes, i);

        g_ptr_array_add (paddock_change_get_metadata_reason (change) != NULL ? self->metadata : files,
                         g_object_ref (change));
      }
    g_clear_pointer (&self->changes, g_ptr_array_unref);
    self->changes = g_steal_pointer (&files);
  }

  return g_steal_pointer (&self);
}

/* Returns: (transfer none) (element-type PaddockChange): the rows, sorted
 * by path; a deleted directory comes after its contents. */
GPtrArray *
paddock_review_get_changes (PaddockReview *self)
{
  g_return_val_if_fail (PADDOCK_IS_REVIEW (self), NULL);
  return self->changes;
}

/* Returns: (transfer none) (element-type PaddockChange): the rows that are
 * repository metadata (each with its reason), in the same order; never
 * among paddock_review_get_changes()'s. */
GPtrArray *
paddock_review_get_metadata (PaddockReview *self)
{
  g_return_val_if_fail (PADDOCK_IS_REVIEW (self), NULL);
  return self->metadata;
}

/* Returns: (transfer none) (nullable): the row for @path (a file change or
 * a metadata row) */
PaddockChange *
paddock_review_lookup (PaddockReview *self,
                       const char    *path)
{
  g_return_val_if_fail (PADDOCK_IS_REVIEW (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);
  return g_hash_table_lookup (self->by_path, path);
}

/**
 * paddock_review_get_stamps:
 * @path: a row's path, or a renamed row's old path
 *
 * What lstat() said of @path on each side when this review read it: a
 * later stamp that differs means that side changed since.
 *
 * Returns: FALSE when @path is not one of the rows' paths
 */
gboolean
paddock_review_get_stamps (PaddockReview    *self,
                           const char       *path,
                           PaddockFileStamp *out_stage,
                           PaddockFileStamp *out_workspace)
{
  const PaddockFileStamp *both;

  g_return_val_if_fail (PADDOCK_IS_REVIEW (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  both = g_hash_table_lookup (self->stamps, path);
  if (both == NULL)
    return FALSE;
  *out_stage = both[0];
  *out_workspace = both[1];
  return TRUE;
}
