/* paddock-review-private.h — what the paddock-review*.c files share
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Not installed and not for callers of paddock-review.h: the review's
 * instance, the sides of a path, and the helpers of its parts.
 */

#pragma once

#include <gio/gio.h>
#include <git2.h>

#include "paddock-baseline.h"
#include "paddock-file-stamp.h"
#include "paddock-review.h"

G_BEGIN_DECLS

G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_repository, git_repository_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_odb, git_odb_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_index, git_index_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_tree, git_tree_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_diff, git_diff_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_patch, git_patch_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_blob, git_blob_free)
#define RENAME_LIMIT 1000

typedef enum {
  SIDE_NONE,
  SIDE_FILE,
  SIDE_LINK,
  SIDE_DIR,
  SIDE_OTHER,  /* fifo, socket, device: not something a review can show */
} SideType;

typedef struct {
  SideType type;
  guint32 mode;
  PaddockFileStamp stamp;  /* lstat() of the entry, whiteouts included */
} Side;

struct _PaddockReview
{
  GObject parent_instance;

  GPtrArray *changes;       /* PaddockChange, in display order: file changes */
  GPtrArray *metadata;      /* PaddockChange, in display order: repository metadata */
  GHashTable *by_path;      /* path → PaddockChange (borrowed from changes) */
  GHashTable *delta_index;  /* path → GUINT_TO_POINTER (index in diff + 1) */
  GHashTable *similarity;   /* path → GUINT_TO_POINTER (rename similarity) */
  GHashTable *stamps;       /* row path or old path → PaddockFileStamp[2]: stage, workspace */
  /* Kept for get_diff(): the in-memory repository holds both sides' blobs. */
  git_repository *repo;
  git_diff *diff;
};

/* The folder last opened beneath one side's root, kept for the next
 * path: a review walks its paths sorted, so the files of one folder come
 * one after another, and resolving the same folder again for each of them
 * (openat2 walks the whole path) was a syscall and a path walk per file. */
typedef struct {
  char *dir;          /* relative path of the folder; NULL: nothing kept */
  int   fd;           /* O_PATH fd of it, or -1 when it could not be opened */
  int   open_errno;   /* why, when fd is -1 */
} ParentCache;

#define PARENT_CACHE_INIT { NULL, -1, 0 }

void parent_cache_clear (ParentCache *cache);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ParentCache, parent_cache_clear)
typedef struct {
  PaddockStageKind kind;
  int w_fd;
  int s_fd;
  GHashTable *candidates;  /* set of relpaths that may differ */
  PaddockBaseline *copy_baseline;  /* nullable: the copy's stamps when it was made */
  PaddockReviewCache *cache;  /* nullable */
  GCancellable *cancellable;
  guint depth;             /* folders below the root the walk is in now */
} Collect;

/* The most names a row's path has: a longer one has at least PATH_MAX
 * bytes ("a/" repeated), so nothing deeper could be applied, and each level
 * costs the walking thread stack and an open folder. An agent can make a
 * tree as deep as it likes; the review must not run out of either (a
 * copy stage 1,920 folders deep overflowed the worker thread's stack). */
#define REVIEW_MAX_DEPTH (PATH_MAX / 2)
/* Where blobs go: the in-memory object database, its one backend (to
 * store an object whose id is already known) and the cache of ids. */
typedef struct {
  git_odb *odb;
  git_odb_backend *mempack;
  PaddockReviewCache *cache;  /* nullable */
} Blobs;

/* Helpers one file of the part calls in another, grouped by the file
 * that defines them (their comments are there). */

/* paddock-review-walk.c */

void
ensure_libgit2 (void);

gboolean
review_set_errno_error (GError     **error,
                        int          saved_errno,
                        const char  *what,
                        const char  *path);

gboolean
set_git_error (GError     **error,
               const char  *what);

gboolean
errno_means_absent (int e);

gboolean
lookup_side (ParentCache *cache,
             int          root_fd,
             const char  *rel,
             gboolean     overlay_upper,
             Side        *out,
             int         *out_parent_fd,
             const char **out_base,
             GError     **error);

gboolean
collect_upper (Collect     *c,
               int          dir_fd,
               int          w_dir,
               const char  *rel,
               GError     **error);

gboolean
collect_pair (Collect     *c,
              int          w_dir,
              int          s_dir,
              const char  *rel,
              GError     **error);

/* paddock-review-git.c */

gboolean
index_add_side (git_index   *index,
                Blobs       *blobs,
                int          parent_fd,
                const char  *base,
                const char  *rel,
                const Side  *side,
                GError     **error);

G_END_DECLS
