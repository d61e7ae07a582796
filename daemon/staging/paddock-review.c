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

G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_repository, git_repository_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_odb, git_odb_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_index, git_index_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_tree, git_tree_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_diff, git_diff_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_patch, git_patch_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_blob, git_blob_free)

G_DEFINE_ENUM_TYPE (PaddockStageKind, paddock_stage_kind,
  G_DEFINE_ENUM_VALUE (PADDOCK_STAGE_KIND_OVERLAY, "overlay"),
  G_DEFINE_ENUM_VALUE (PADDOCK_STAGE_KIND_COPY, "copy"))

/* Renames are looked for among at most this many added × deleted files
 * (libgit2's rename_limit); exact renames are always found. */
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

static void
ensure_libgit2 (void)
{
  static gsize initialized = 0;

  /* git_libgit2_init() is reference counted and we never shut down: its
   * global state lives as long as the process. */
  if (g_once_init_enter (&initialized))
    {
      git_libgit2_init ();
      /* Every object read back is one we stored, in memory, under the id
       * we hashed (or an earlier review hashed, for a file whose stamp is
       * unchanged): hashing it again on each read (a patch reads both
       * sides, rename detection reads them again) only doubles the cost.
       * The option is process-wide; this is the daemon's only use of
       * libgit2. */
      git_libgit2_opts (GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
      g_once_init_leave (&initialized, 1);
    }
}

static gboolean
set_errno_error (GError     **error,
                 int          saved_errno,
                 const char  *what,
                 const char  *path)
{
  g_autofree char *display = g_filename_display_name (*path != '\0' ? path : ".");

  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "%s %s: %s", what, display, g_strerror (saved_errno));
  return FALSE;
}

static gboolean
set_git_error (GError     **error,
               const char  *what)
{
  const git_error *e = git_error_last ();

  g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_FAILED,
               "%s: %s", what, e != NULL && e->message != NULL ? e->message : "libgit2 error");
  return FALSE;
}

/* "Absent" answers from path resolution: nothing there, a non-directory
 * where a directory was expected, or a symlink we refuse to follow. */
static gboolean
errno_means_absent (int e)
{
  return e == ENOENT || e == ENOTDIR || e == ELOOP;
}

static char *
join_path (const char *dir,
           const char *name)
{
  return *dir != '\0' ? g_strconcat (dir, "/", name, NULL) : g_strdup (name);
}

static gboolean
fd_has_xattr (int         fd,
              const char *name,
              char        want)
{
  char value[2] = { 0 };
  ssize_t n = fgetxattr (fd, name, value, sizeof value);

  if (n < 0)
    return FALSE;  /* ENODATA, or EPERM for trusted.* when unprivileged */
  return want == '\0' || (n >= 1 && value[0] == want);
}

/* A whiteout is how overlayfs records "deleted": a 0:0 character device, or
 * (for whiteouts stored in a lower layer of a nested overlay) an empty file
 * carrying the overlay.whiteout xattr. */
static gboolean
is_whiteout (int                dir_fd,
             const char        *name,
             const struct stat *st)
{
  paddock_autofd int fd = -1;

  if (S_ISCHR (st->st_mode) && major (st->st_rdev) == 0 && minor (st->st_rdev) == 0)
    return TRUE;
  if (!S_ISREG (st->st_mode) || st->st_size != 0)
    return FALSE;

  fd = openat (dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return FALSE;
  return fd_has_xattr (fd, "user.overlay.whiteout", '\0') ||
         fd_has_xattr (fd, "trusted.overlay.whiteout", '\0');
}

/* An opaque upper directory hides everything of the lower one. With
 * userxattr (rootless overlay) the marker is user.overlay.opaque. */
static gboolean
is_opaque (int dir_fd)
{
  return fd_has_xattr (dir_fd, "user.overlay.opaque", 'y') ||
         fd_has_xattr (dir_fd, "trusted.overlay.opaque", 'y');
}

static SideType
side_type_from_mode (mode_t mode)
{
  if (S_ISREG (mode))
    return SIDE_FILE;
  if (S_ISLNK (mode))
    return SIDE_LINK;
  if (S_ISDIR (mode))
    return SIDE_DIR;
  return SIDE_OTHER;
}

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

static void parent_cache_clear (ParentCache *cache);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ParentCache, parent_cache_clear)

static void
parent_cache_clear (ParentCache *cache)
{
  g_clear_pointer (&cache->dir, g_free);
  paddock_close_fd (&cache->fd);
  cache->open_errno = 0;
}

/* Returns: (transfer none): the folder of @rel beneath @root_fd, or -1
 * with errno set; @out_base: its last component. */
static int
parent_cache_open (ParentCache *cache,
                   int          root_fd,
                   const char  *rel,
                   const char **out_base)
{
  const char *slash = strrchr (rel, '/');
  gsize len = slash != NULL ? (gsize) (slash - rel) : 0;

  *out_base = slash != NULL ? slash + 1 : rel;
  if (cache->dir != NULL && strlen (cache->dir) == len && strncmp (cache->dir, rel, len) == 0)
    {
      errno = cache->open_errno;
      return cache->fd;
    }
  parent_cache_clear (cache);
  cache->dir = g_strndup (rel, len);
  cache->fd = len == 0 ? fcntl (root_fd, F_DUPFD_CLOEXEC, 3)
                       : paddock_open_beneath (root_fd, cache->dir, O_PATH | O_DIRECTORY);
  cache->open_errno = cache->fd < 0 ? errno : 0;
  errno = cache->open_errno;
  return cache->fd;
}

/* What @rel is beneath @root_fd, as the session or the workspace sees it.
 * For an overlay upper, a whiteout reads as absent. The folder holding it
 * is left in @out_parent_fd (borrowed from @cache, -1 when there is none),
 * so that reading the entry costs no second walk of its path. */
static gboolean
lookup_side (ParentCache *cache,
             int          root_fd,
             const char  *rel,
             gboolean     overlay_upper,
             Side        *out,
             int         *out_parent_fd,
             const char **out_base,
             GError     **error)
{
  int parent_fd;
  const char *base = NULL;
  struct stat st;

  memset (out, 0, sizeof *out);
  *out_parent_fd = -1;
  *out_base = NULL;

  parent_fd = parent_cache_open (cache, root_fd, rel, &base);
  if (parent_fd < 0)
    {
      if (errno_means_absent (errno))
        return TRUE;
      return set_errno_error (error, errno, "Could not open the folder of", rel);
    }

  if (fstatat (parent_fd, base, &st, AT_SYMLINK_NOFOLLOW) != 0)
    {
      if (errno_means_absent (errno))
        return TRUE;
      return set_errno_error (error, errno, "Could not stat", rel);
    }

  paddock_file_stamp_from_stat (&out->stamp, &st);
  *out_base = base;
  *out_parent_fd = parent_fd;
  if (overlay_upper && is_whiteout (parent_fd, base, &st))
    return TRUE;

  out->type = side_type_from_mode (st.st_mode);
  out->mode = st.st_mode;
  if (out->type == SIDE_OTHER)
    out->type = SIDE_NONE;
  return TRUE;
}

/* --- candidates ----------------------------------------------------- */

typedef struct {
  PaddockStageKind kind;
  int w_fd;
  int s_fd;
  GHashTable *candidates;  /* set of relpaths that may differ */
  PaddockBaseline *copy_baseline;  /* nullable: the copy's stamps when it was made */
  PaddockReviewCache *cache;  /* nullable */
  GCancellable *cancellable;
} Collect;

static void
add_candidate (Collect    *c,
               const char *rel)
{
  g_hash_table_add (c->candidates, g_strdup (rel));
}

/* Reads the names of a directory (without "." and ".."), sorted so the
 * walk is deterministic. Takes a dup of @dir_fd: fdopendir() owns its fd. */
static GPtrArray *
read_names (int          dir_fd,
            const char  *rel,
            GError     **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  int dup_fd = fcntl (dir_fd, F_DUPFD_CLOEXEC, 3);
  struct dirent *de;
  DIR *dir;

  if (dup_fd < 0)
    return set_errno_error (error, errno, "Could not read", rel), NULL;
  /* fdopendir() reads from the fd's offset: rewind a dup'ed directory. */
  lseek (dup_fd, 0, SEEK_SET);
  dir = fdopendir (dup_fd);
  if (dir == NULL)
    {
      int saved_errno = errno;
      close (dup_fd);
      return set_errno_error (error, saved_errno, "Could not read", rel), NULL;
    }

  while ((errno = 0, de = readdir (dir)) != NULL)
    {
      if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
        g_ptr_array_add (names, g_strdup (de->d_name));
    }
  if (errno != 0)
    {
      int saved_errno = errno;
      closedir (dir);
      return set_errno_error (error, saved_errno, "Could not read", rel), NULL;
    }
  closedir (dir);

  g_ptr_array_sort (names, (GCompareFunc) (void (*) (void)) g_strcmp0);
  return g_steal_pointer (&names);
}

/* Adds every entry below @dir_fd (one side's directory at @rel). */
static gboolean
add_subtree (Collect     *c,
             int          dir_fd,
             const char  *rel,
             GError     **error)
{
  g_autoptr(GPtrArray) names = NULL;

  if (g_cancellable_set_error_if_cancelled (c->cancellable, error))
    return FALSE;

  names = read_names (dir_fd, rel, error);
  if (names == NULL)
    return FALSE;

  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      g_autofree char *path = join_path (rel, name);
      paddock_autofd int sub_fd = -1;

      add_candidate (c, path);
      sub_fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub_fd < 0)
        {
          if (errno_means_absent (errno))
            continue;
          return set_errno_error (error, errno, "Could not open", path);
        }
      if (!add_subtree (c, sub_fd, path, error))
        return FALSE;
    }

  return TRUE;
}

/* The workspace's folder @name in @w_dir (-1: the workspace has none
 * there), opened without following a symlink: the folder an upper entry
 * of that name hides or lies over. */
static gboolean
open_workspace_dir (int          w_dir,
                    const char  *name,
                    const char  *path,
                    int         *out_fd,
                    GError     **error)
{
  *out_fd = -1;
  if (w_dir < 0)
    return TRUE;
  *out_fd = openat (w_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (*out_fd >= 0 || errno_means_absent (errno))
    return TRUE;
  return set_errno_error (error, errno, "Could not open", path);
}

/* Overlay: only the upper dir is walked, so the cost follows the size of
 * the change, not of the workspace. @w_dir is the workspace's folder at
 * @rel, or -1 when it has none: then nothing of the workspace can be
 * hidden below, and no entry costs a lookup there. (Each entry used to
 * resolve its whole path in the workspace, one openat2 per staged file.) */
static gboolean
collect_upper (Collect     *c,
               int          dir_fd,
               int          w_dir,
               const char  *rel,
               GError     **error)
{
  g_autoptr(GPtrArray) names = NULL;

  if (g_cancellable_set_error_if_cancelled (c->cancellable, error))
    return FALSE;

  names = read_names (dir_fd, rel, error);
  if (names == NULL)
    return FALSE;

  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      g_autofree char *path = join_path (rel, name);
      paddock_autofd int w_sub = -1;
      struct stat st;

      if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        {
          if (errno == ENOENT)
            continue;
          return set_errno_error (error, errno, "Could not stat", path);
        }

      add_candidate (c, path);
      if (!open_workspace_dir (w_dir, name, path, &w_sub, error))
        return FALSE;

      if (S_ISDIR (st.st_mode))
        {
          paddock_autofd int sub_fd = openat (dir_fd, name,
                                              O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

          if (sub_fd < 0)
            return set_errno_error (error, errno, "Could not open", path);
          if (w_sub >= 0 && is_opaque (sub_fd))
            {
              /* An opaque folder hides all of the workspace's below it,
               * and nothing of it shows through further down. */
              if (!add_subtree (c, w_sub, path, error))
                return FALSE;
              paddock_close_fd (&w_sub);
            }
          if (!collect_upper (c, sub_fd, w_sub, path, error))
            return FALSE;
        }
      else if (w_sub >= 0 && !add_subtree (c, w_sub, path, error))
        {
          /* A whiteout, file or link over a W directory hides all of it. */
          return FALSE;
        }
    }

  return TRUE;
}

/* TRUE when two regular files (already known to have the same size) have
 * the same bytes. */
static gboolean
same_contents (int          a_dir,
               int          b_dir,
               const char  *name,
               const char  *rel,
               gboolean    *out_same,
               GError     **error)
{
  paddock_autofd int a = openat (a_dir, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  paddock_autofd int b = openat (b_dir, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  g_autofree char *buf_a = NULL;
  g_autofree char *buf_b = NULL;
  const gsize chunk = 64 * 1024;

  *out_same = FALSE;
  if (a < 0 || b < 0)
    {
      if (errno_means_absent (errno))
        return TRUE;
      return set_errno_error (error, errno, "Could not open", rel);
    }

  /* A large file is compared by its data extents (see
   * paddock-sparse-copy.c): reading a terabyte-sized hole byte by byte
   * would keep the daemon busy for hours. */
  {
    struct stat sa;

    if (fstat (a, &sa) == 0 && (guint64) sa.st_size > PADDOCK_REVIEW_MAX_BLOB_SIZE)
      {
        g_autoptr(GError) local_error = NULL;
        g_autofree char *ha = paddock_sparse_sha256 (a, NULL, &local_error);
        g_autofree char *hb = ha != NULL ? paddock_sparse_sha256 (b, NULL, &local_error) : NULL;

        if (hb == NULL)
          {
            g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_FAILED,
                         "Could not read “%s”: %s", rel, local_error->message);
            return FALSE;
          }
        *out_same = strcmp (ha, hb) == 0;
        return TRUE;
      }
  }

  buf_a = g_malloc (chunk);
  buf_b = g_malloc (chunk);
  for (;;)
    {
      ssize_t na = read (a, buf_a, chunk);
      ssize_t nb;
      gsize got = 0;

      if (na < 0)
        {
          if (errno == EINTR)
            continue;
          return set_errno_error (error, errno, "Could not read", rel);
        }
      /* Read exactly as much of b, however many reads that takes. */
      while (got < (gsize) na)
        {
          nb = read (b, buf_b + got, (gsize) na - got);
          if (nb < 0 && errno == EINTR)
            continue;
          if (nb < 0)
            return set_errno_error (error, errno, "Could not read", rel);
          if (nb == 0)
            return TRUE;  /* b is shorter now: different */
          got += (gsize) nb;
        }
      if (memcmp (buf_a, buf_b, (gsize) na) != 0)
        return TRUE;
      if (na == 0)
        {
          char extra;
          nb = read (b, &extra, 1);
          *out_same = nb == 0;
          return TRUE;
        }
    }
}

/* Whether the session left the copy's entry at @path as the copy was made
 * (@sst, or nothing when @s_type is SIDE_NONE): the same stamp as when
 * copied, or absent now and then. Whatever the workspace has there was
 * then put there by someone else after the session started: not a change
 * of the session's, and never one to apply over theirs. */
static gboolean
copy_untouched (PaddockBaseline   *copy_baseline,
                const char        *path,
                SideType           s_type,
                const struct stat *sst)
{
  PaddockFileStamp then, now;
  gboolean was_there = paddock_baseline_lookup (copy_baseline, path, &then);

  if (s_type == SIDE_NONE)
    return !was_there;
  paddock_file_stamp_from_stat (&now, sst);
  return paddock_file_stamp_equal (&now, &then);
}

/* Copy: walk the copy and W side by side; either fd may be -1 when only
 * one side has the directory. With the copy's stamps from when it was
 * made, only what the session touched is a candidate; without them, every
 * difference is. Files of equal size and mode are compared by content,
 * since a rewrite may have kept the bytes. */
static gboolean
collect_pair (Collect     *c,
              int          w_dir,
              int          s_dir,
              const char  *rel,
              GError     **error)
{
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) w_names = NULL;
  g_autoptr(GPtrArray) s_names = NULL;
  g_autoptr(GPtrArray) all = g_ptr_array_new ();

  if (g_cancellable_set_error_if_cancelled (c->cancellable, error))
    return FALSE;

  if (w_dir >= 0 && (w_names = read_names (w_dir, rel, error)) == NULL)
    return FALSE;
  if (s_dir >= 0 && (s_names = read_names (s_dir, rel, error)) == NULL)
    return FALSE;

  for (guint side = 0; side < 2; side++)
    {
      GPtrArray *names = side == 0 ? w_names : s_names;

      for (guint i = 0; names != NULL && i < names->len; i++)
        if (g_hash_table_add (seen, g_ptr_array_index (names, i)))
          g_ptr_array_add (all, g_ptr_array_index (names, i));
    }

  for (guint i = 0; i < all->len; i++)
    {
      const char *name = g_ptr_array_index (all, i);
      g_autofree char *path = join_path (rel, name);
      struct stat wst, sst;
      SideType wt = SIDE_NONE, st_ = SIDE_NONE;
      paddock_autofd int w_sub = -1;
      paddock_autofd int s_sub = -1;

      if (w_dir >= 0 && fstatat (w_dir, name, &wst, AT_SYMLINK_NOFOLLOW) == 0)
        wt = side_type_from_mode (wst.st_mode);
      if (s_dir >= 0 && fstatat (s_dir, name, &sst, AT_SYMLINK_NOFOLLOW) == 0)
        st_ = side_type_from_mode (sst.st_mode);

      if (c->copy_baseline != NULL && copy_untouched (c->copy_baseline, path, st_, &sst))
        {
          /* A folder the session left alone may still hold its changes. */
          if (st_ == SIDE_DIR)
            {
              if (wt == SIDE_DIR)
                w_sub = openat (w_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
              s_sub = openat (s_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
              if (s_sub >= 0 && !collect_pair (c, w_sub, s_sub, path, error))
                return FALSE;
            }
          continue;
        }

      if (wt == SIDE_FILE && st_ == SIDE_FILE && wst.st_size == sst.st_size &&
          (wst.st_mode & 0111) == (sst.st_mode & 0111))
        {
          gboolean same = FALSE;

          if (!same_contents (w_dir, s_dir, name, path, &same, error))
            return FALSE;
          if (same)
            continue;
        }
      else if (wt == SIDE_LINK && st_ == SIDE_LINK)
        {
          char a[PATH_MAX], b[PATH_MAX];
          ssize_t na = readlinkat (w_dir, name, a, sizeof a);
          ssize_t nb = readlinkat (s_dir, name, b, sizeof b);

          if (na >= 0 && na == nb && memcmp (a, b, (gsize) na) == 0)
            continue;
        }

      if (wt == SIDE_DIR)
        w_sub = openat (w_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (st_ == SIDE_DIR)
        s_sub = openat (s_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

      /* Two directories with the same permissions are the same entry; the
       * difference, if any, is below. */
      if (!(wt == SIDE_DIR && st_ == SIDE_DIR && (wst.st_mode & 07777) == (sst.st_mode & 07777)))
        add_candidate (c, path);

      if ((w_sub >= 0 || s_sub >= 0) && !collect_pair (c, w_sub, s_sub, path, error))
        return FALSE;
    }

  return TRUE;
}

/* --- libgit2 side --------------------------------------------------- */

/* libgit2 refuses some names in an index or tree (".git", "..", NTFS
 * aliases such as "GIT~1"), but a workspace may hold any of them: prefix
 * every component with '_' so each is valid, and strip it on the way out. */
static char *
encode_git_path (const char *rel)
{
  GString *s = g_string_new ("_");

  for (const char *p = rel; *p != '\0'; p++)
    {
      g_string_append_c (s, *p);
      if (*p == '/')
        g_string_append_c (s, '_');
    }
  return g_string_free (s, FALSE);
}

static char *
decode_git_path (const char *encoded)
{
  GString *s = g_string_new (NULL);
  gboolean at_start = TRUE;

  for (const char *p = encoded; *p != '\0'; p++)
    {
      if (at_start)
        {
          at_start = FALSE;
          continue;  /* the '_' */
        }
      g_string_append_c (s, *p);
      if (*p == '/')
        at_start = TRUE;
    }
  return g_string_free (s, FALSE);
}

/* Whether the open file @fd still has the stamp @before. */
static gboolean
unchanged_since (int                fd,
                 const struct stat *before)
{
  PaddockFileStamp a, b;
  struct stat after;

  if (fstat (fd, &after) != 0)
    return FALSE;
  paddock_file_stamp_from_stat (&a, before);
  paddock_file_stamp_from_stat (&b, &after);
  return paddock_file_stamp_equal (&a, &b);
}

/* Where blobs go: the in-memory object database, its one backend (to
 * store an object whose id is already known) and the cache of ids. */
typedef struct {
  git_odb *odb;
  git_odb_backend *mempack;
  PaddockReviewCache *cache;  /* nullable */
} Blobs;

/* Stores one side's version of @rel (@base in @parent_fd) as a blob. Files over
 * PADDOCK_REVIEW_MAX_BLOB_SIZE are not loaded: the blob is a marker holding
 * their SHA-256, so an unchanged or moved large file still compares equal,
 * and the leading NUL makes libgit2 treat it as binary. */
static gboolean
write_side_blob (Blobs       *blobs,
                 int          parent_fd,
                 const char  *base,
                 const char  *rel,
                 SideType     type,
                 git_oid     *out_oid,
                 guint64     *out_size,
                 GError     **error)
{
  git_odb *odb = blobs->odb;
  paddock_autofd int fd = -1;
  g_autoptr(GByteArray) data = NULL;
  g_autoptr(GChecksum) checksum = NULL;
  guint64 total = 0;
  struct stat st;

  if (type == SIDE_LINK)
    {
      char target[PATH_MAX];
      ssize_t n = readlinkat (parent_fd, base, target, sizeof target);

      if (n < 0)
        return set_errno_error (error, errno, "Could not read the link", rel);
      *out_size = (guint64) n;
      if (git_odb_write (out_oid, odb, target, (gsize) n, GIT_OBJECT_BLOB) != 0)
        return set_git_error (error, "Could not store a link");
      return TRUE;
    }

  /* O_NOFOLLOW | O_NONBLOCK: the entry was a regular file when we looked;
   * if it was swapped for a link or a fifo since, fail rather than follow
   * or hang. */
  fd = openat (parent_fd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return set_errno_error (error, errno, "Could not open", rel);
  if (fstat (fd, &st) != 0)
    return set_errno_error (error, errno, "Could not stat", rel);
  if (!S_ISREG (st.st_mode))
    {
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_FAILED,
                   "An entry changed type while it was read");
      return FALSE;
    }

  /* Larger than a blob may be: known by its apparent size and a hash of
   * its data extents only, so a sparse terabyte costs what it allocates. A
   * file that grows past the limit while read is caught below. */
  if ((guint64) st.st_size > PADDOCK_REVIEW_MAX_BLOB_SIZE)
    {
      g_autoptr(GError) local_error = NULL;
      g_autofree char *sum = paddock_sparse_sha256 (fd, NULL, &local_error);
      g_autofree char *marker = NULL;
      gsize len;

      if (sum == NULL)
        {
          g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_FAILED,
                       "Could not read “%s”: %s", rel, local_error->message);
          return FALSE;
        }
      marker = g_strdup_printf ("%cpaddock-large-file\nsize %" G_GUINT64_FORMAT
                                "\nextents-sha256 %s\n", '\0', (guint64) st.st_size, sum);
      len = 1 + strlen (marker + 1);
      *out_size = (guint64) st.st_size;
      if (git_odb_write (out_oid, odb, marker, len, GIT_OBJECT_BLOB) != 0)
        return set_git_error (error, "Could not store a file");
      return TRUE;
    }

  data = g_byte_array_sized_new ((guint) MIN ((guint64) st.st_size + 1,
                                              PADDOCK_REVIEW_MAX_BLOB_SIZE + 1));
  for (;;)
    {
      guint8 buf[64 * 1024];
      ssize_t n = read (fd, buf, sizeof buf);

      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return set_errno_error (error, errno, "Could not read", rel);
        }
      if (n == 0)
        break;
      total += (guint64) n;
      if (checksum != NULL)
        g_checksum_update (checksum, buf, n);
      else
        {
          g_byte_array_append (data, buf, (guint) n);
          /* Grown past the limit: switch to hashing, keep no more bytes. */
          if (data->len > PADDOCK_REVIEW_MAX_BLOB_SIZE)
            {
              checksum = g_checksum_new (G_CHECKSUM_SHA256);
              g_checksum_update (checksum, data->data, data->len);
              g_byte_array_set_size (data, 0);
            }
        }
    }

  *out_size = total;
  if (checksum != NULL)
    {
      g_autofree char *marker = g_strdup_printf ("%cpaddock-large-file\nsize %" G_GUINT64_FORMAT
                                                 "\nsha256 %s\n", '\0', total,
                                                 g_checksum_get_string (checksum));
      gsize len = 1 + strlen (marker + 1);

      if (git_odb_write (out_oid, odb, marker, len, GIT_OBJECT_BLOB) != 0)
        return set_git_error (error, "Could not store a file");
      return TRUE;
    }

  /* Known by its stamp, and read whole: stored under the id an earlier
   * review computed, without hashing it again. A file that changed while
   * it was read is hashed, and not remembered. */
  if (blobs->cache != NULL && total == (guint64) st.st_size && unchanged_since (fd, &st))
    {
      if (paddock_review_cache_lookup_blob (blobs->cache, &st, out_oid))
        {
          if (blobs->mempack->write (blobs->mempack, out_oid, data->data, data->len, GIT_OBJECT_BLOB) != 0)
            return set_git_error (error, "Could not store a file");
          return TRUE;
        }
      if (git_odb_write (out_oid, odb, data->data, data->len, GIT_OBJECT_BLOB) != 0)
        return set_git_error (error, "Could not store a file");
      paddock_review_cache_add_blob (blobs->cache, &st, out_oid);
      return TRUE;
    }

  if (git_odb_write (out_oid, odb, data->data, data->len, GIT_OBJECT_BLOB) != 0)
    return set_git_error (error, "Could not store a file");
  return TRUE;
}

static gboolean
index_add_side (git_index   *index,
                Blobs       *blobs,
                int          parent_fd,
                const char  *base,
                const char  *rel,
                const Side  *side,
                GError     **error)
{
  g_autofree char *encoded = encode_git_path (rel);
  git_index_entry entry = { 0 };
  guint64 size = 0;

  if (!write_side_blob (blobs, parent_fd, base, rel, side->type, &entry.id, &size, error))
    return FALSE;

  if (side->type == SIDE_LINK)
    entry.mode = GIT_FILEMODE_LINK;
  else if (side->mode & S_IXUSR)
    entry.mode = GIT_FILEMODE_BLOB_EXECUTABLE;
  else
    entry.mode = GIT_FILEMODE_BLOB;
  entry.file_size = (guint32) MIN (size, G_MAXUINT32);
  entry.path = encoded;

  if (git_index_add (index, &entry) != 0)
    return set_git_error (error, "Could not index a file");
  return TRUE;
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
      return set_errno_error (error, errno, "Could not open the folder of", rel);
    }
  if (fstatat (parent_fd, base, &st, AT_SYMLINK_NOFOLLOW) != 0)
    {
      if (errno_means_absent (errno))
        return TRUE;
      return set_errno_error (error, errno, "Could not stat", rel);
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
      g_autofree char *old_path = decode_git_path (delta->old_file.path);
      g_autofree char *new_path = decode_git_path (delta->new_file.path);
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
    return set_errno_error (error, errno, "Could not open the workspace", workspace), NULL;
  s_fd = open (stage_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (s_fd < 0)
    return set_errno_error (error, errno, "Could not open the stage", stage_root), NULL;
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

/* --- diff text ------------------------------------------------------ */

/* Quotes a path the way git does when it must (control characters, '"',
 * '\\', bytes that are not UTF-8), so that a name with a newline cannot
 * forge a header line. Valid UTF-8 is kept as is for readability. */
static void
append_quoted (GString    *out,
               const char *prefix,
               const char *path)
{
  g_autofree char *full = g_strconcat (prefix, path, NULL);
  gboolean needs = !g_utf8_validate (full, -1, NULL);

  for (const char *p = full; *p != '\0' && !needs; p++)
    needs = (guchar) *p < 0x20 || *p == '"' || *p == '\\' || *p == 0x7f;

  if (!needs)
    {
      g_string_append (out, full);
      return;
    }

  g_string_append_c (out, '"');
  for (const char *p = full; *p != '\0'; )
    {
      const char *end = NULL;
      guchar ch = (guchar) *p;

      if (ch == '\n') { g_string_append (out, "\\n"); p++; continue; }
      if (ch == '\t') { g_string_append (out, "\\t"); p++; continue; }
      if (ch == '"' || ch == '\\') { g_string_append_c (out, '\\'); g_string_append_c (out, (char) ch); p++; continue; }
      if (ch >= 0x80 && g_utf8_validate (p, MIN ((gssize) strlen (p), 4), &end) == FALSE && end == p)
        {
          g_string_append_printf (out, "\\%03o", ch);
          p++;
          continue;
        }
      if (ch >= 0x80)
        {
          const char *next = g_utf8_next_char (p);
          g_string_append_len (out, p, next - p);
          p = next;
          continue;
        }
      if (ch < 0x20 || ch == 0x7f)
        g_string_append_printf (out, "\\%03o", ch);
      else
        g_string_append_c (out, (char) ch);
      p++;
    }
  g_string_append_c (out, '"');
}

static void
append_side_name (GString    *out,
                  const char *prefix,
                  const char *path,
                  gboolean    present)
{
  if (present)
    append_quoted (out, prefix, path);
  else
    g_string_append (out, "/dev/null");
}

static gboolean
check_size (GString  *out,
            GError  **error)
{
  if (out->len <= PADDOCK_REVIEW_MAX_DIFF_SIZE)
    return TRUE;
  g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_TOO_LARGE,
               "The diff is larger than %d bytes", PADDOCK_REVIEW_MAX_DIFF_SIZE);
  return FALSE;
}

static GBytes *
directory_diff (PaddockChange *change)
{
  GString *out = g_string_new ("diff --git ");
  const char *path = paddock_change_get_path (change);

  append_quoted (out, "a/", path);
  g_string_append_c (out, ' ');
  append_quoted (out, "b/", path);
  g_string_append_c (out, '\n');
  switch (paddock_change_get_kind (change))
    {
    case PADDOCK_CHANGE_KIND_ADDED:
      g_string_append_printf (out, "new directory mode %06o\n", paddock_change_get_new_mode (change));
      break;
    case PADDOCK_CHANGE_KIND_DELETED:
      g_string_append_printf (out, "deleted directory mode %06o\n", paddock_change_get_old_mode (change));
      break;
    case PADDOCK_CHANGE_KIND_MODIFIED:
    case PADDOCK_CHANGE_KIND_RENAMED:
    case PADDOCK_CHANGE_KIND_TYPE_CHANGED:
    case PADDOCK_CHANGE_KIND_MODE_CHANGED:
    default:
      g_string_append_printf (out, "old mode %06o\nnew mode %06o\n",
                              paddock_change_get_old_mode (change),
                              paddock_change_get_new_mode (change));
      break;
    }
  return g_string_free_to_bytes (out);
}

/**
 * paddock_review_dup_new_content:
 * @path: a row's path
 *
 * The new side's bytes of the row at @path exactly as this review read
 * them (a file's content, a symlink's text): what its diff shows. Not
 * thread-safe, as get_diff().
 *
 * Returns: (transfer full) (nullable): the bytes, or %NULL when the row
 *   has no new file or link side, or the file was too large to be kept
 *   (over PADDOCK_REVIEW_MAX_BLOB_SIZE: shown as binary, by hash only)
 */
GBytes *
paddock_review_dup_new_content (PaddockReview *self,
                                const char    *path)
{
  g_autoptr(git_blob) blob = NULL;
  const git_diff_delta *delta;
  const char *data;
  gsize length;
  gsize index;
  static const char marker[] = "paddock-large-file\n";

  g_return_val_if_fail (PADDOCK_IS_REVIEW (self), NULL);

  index = GPOINTER_TO_UINT (g_hash_table_lookup (self->delta_index, path));
  if (index == 0)
    return NULL;
  /* The delta alone names the blob: a patch (git_patch_from_diff) would
   * compute the whole text diff just to be thrown away, which for a
   * pinned review of 1,000 files was most of what pinning cost. */
  delta = git_diff_get_delta (self->diff, index - 1);
  if (delta == NULL || delta->status == GIT_DELTA_DELETED ||
      git_blob_lookup (&blob, self->repo, &delta->new_file.id) != 0)
    return NULL;
  data = git_blob_rawcontent (blob);
  length = (gsize) git_blob_rawsize (blob);
  if (length > sizeof marker && data[0] == '\0' && memcmp (data + 1, marker, sizeof marker - 1) == 0)
    return NULL;
  /* The blob lives in the review's in-memory object database: lend its
   * bytes rather than copy them. */
  return g_bytes_new_with_free_func (data, length, (GDestroyNotify) git_blob_free, g_steal_pointer (&blob));
}

/**
 * paddock_review_get_diff:
 *
 * Returns: (transfer full): a git-style unified diff of the row at @path,
 * paths as raw bytes (quoted git-style when they hold control characters
 * or invalid UTF-8). Not thread-safe: call from one thread at a time.
 */
GBytes *
paddock_review_get_diff (PaddockReview  *self,
                         const char     *path,
                         GError        **error)
{
  g_autoptr(git_patch) patch = NULL;
  g_autoptr(GString) out = NULL;
  g_autofree char *old_path = NULL;
  g_autofree char *new_path = NULL;
  PaddockChange *change;
  const git_diff_delta *delta;
  gboolean has_old, has_new;
  gsize index;

  g_return_val_if_fail (PADDOCK_IS_REVIEW (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  change = g_hash_table_lookup (self->by_path, path);
  if (change == NULL)
    {
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_NOT_FOUND,
                   "No change at this path");
      return NULL;
    }

  index = GPOINTER_TO_UINT (g_hash_table_lookup (self->delta_index, path));
  if (index == 0)
    return directory_diff (change);
  index--;

  if (git_patch_from_diff (&patch, self->diff, index) != 0 || patch == NULL)
    return set_git_error (error, "Could not compute a diff"), NULL;
  delta = git_patch_get_delta (patch);
  old_path = decode_git_path (delta->old_file.path);
  new_path = decode_git_path (delta->new_file.path);
  has_old = delta->status != GIT_DELTA_ADDED;
  has_new = delta->status != GIT_DELTA_DELETED;

  out = g_string_new ("diff --git ");
  append_quoted (out, "a/", old_path);
  g_string_append_c (out, ' ');
  append_quoted (out, "b/", new_path);
  g_string_append_c (out, '\n');

  if (!has_old)
    g_string_append_printf (out, "new file mode %06o\n", delta->new_file.mode);
  else if (!has_new)
    g_string_append_printf (out, "deleted file mode %06o\n", delta->old_file.mode);
  else if (delta->old_file.mode != delta->new_file.mode)
    g_string_append_printf (out, "old mode %06o\nnew mode %06o\n",
                            delta->old_file.mode, delta->new_file.mode);

  if (delta->status == GIT_DELTA_RENAMED)
    {
      g_string_append_printf (out, "similarity index %u%%\nrename from ",
                              GPOINTER_TO_UINT (g_hash_table_lookup (self->similarity, path)));
      append_quoted (out, "", old_path);
      g_string_append (out, "\nrename to ");
      append_quoted (out, "", new_path);
      g_string_append_c (out, '\n');
    }

  if (git_oid_equal (&delta->old_file.id, &delta->new_file.id))
    return g_string_free_to_bytes (g_steal_pointer (&out));

  {
    char old_hex[8], new_hex[8];

    git_oid_tostr (old_hex, sizeof old_hex, &delta->old_file.id);
    git_oid_tostr (new_hex, sizeof new_hex, &delta->new_file.id);
    g_string_append_printf (out, "index %s..%s", old_hex, new_hex);
    if (has_old && has_new && delta->old_file.mode == delta->new_file.mode)
      g_string_append_printf (out, " %06o", delta->old_file.mode);
    g_string_append_c (out, '\n');
  }

  if (delta->flags & GIT_DIFF_FLAG_BINARY)
    {
      g_string_append (out, "Binary files ");
      append_side_name (out, "a/", old_path, has_old);
      g_string_append (out, " and ");
      append_side_name (out, "b/", new_path, has_new);
      g_string_append (out, " differ\n");
      return g_string_free_to_bytes (g_steal_pointer (&out));
    }

  g_string_append (out, "--- ");
  append_side_name (out, "a/", old_path, has_old);
  g_string_append (out, "\n+++ ");
  append_side_name (out, "b/", new_path, has_new);
  g_string_append_c (out, '\n');

  for (gsize h = 0; h < git_patch_num_hunks (patch); h++)
    {
      const git_diff_hunk *hunk = NULL;
      size_t n_lines = 0;

      if (git_patch_get_hunk (&hunk, &n_lines, patch, h) != 0)
        return set_git_error (error, "Could not read a diff"), NULL;
      g_string_append_len (out, hunk->header, (gssize) hunk->header_len);

      for (size_t l = 0; l < n_lines; l++)
        {
          const git_diff_line *line = NULL;

          if (git_patch_get_line_in_hunk (&line, patch, h, l) != 0)
            return set_git_error (error, "Could not read a diff"), NULL;
          /* The "no newline at end of file" markers carry their own text. */
          if (line->origin == GIT_DIFF_LINE_CONTEXT || line->origin == GIT_DIFF_LINE_ADDITION ||
              line->origin == GIT_DIFF_LINE_DELETION)
            g_string_append_c (out, line->origin);
          g_string_append_len (out, line->content, (gssize) line->content_len);
          /* Checked per line so the text never grows far past the bound. */
          if (!check_size (out, error))
            return NULL;
        }
    }

  if (!check_size (out, error))
    return NULL;
  return g_string_free_to_bytes (g_steal_pointer (&out));
}
