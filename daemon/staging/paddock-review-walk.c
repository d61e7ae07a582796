/* paddock-review-walk.c — the walk of the stage: its sides, whiteouts and the candidate paths
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Part of PaddockReview (paddock-review.c builds the list).
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

void
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

gboolean
review_set_errno_error (GError     **error,
                        int          saved_errno,
                        const char  *what,
                        const char  *path)
{
  g_autofree char *display = g_filename_display_name (*path != '\0' ? path : ".");

  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "%s %s: %s", what, display, g_strerror (saved_errno));
  return FALSE;
}

gboolean
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
gboolean
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


void
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
gboolean
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
      return review_set_errno_error (error, errno, "Could not open the folder of", rel);
    }

  if (fstatat (parent_fd, base, &st, AT_SYMLINK_NOFOLLOW) != 0)
    {
      if (errno_means_absent (errno))
        return TRUE;
      return review_set_errno_error (error, errno, "Could not stat", rel);
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
    return review_set_errno_error (error, errno, "Could not read", rel), NULL;
  /* fdopendir() reads from the fd's offset: rewind a dup'ed directory. */
  lseek (dup_fd, 0, SEEK_SET);
  dir = fdopendir (dup_fd);
  if (dir == NULL)
    {
      int saved_errno = errno;
      close (dup_fd);
      return review_set_errno_error (error, saved_errno, "Could not read", rel), NULL;
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
      return review_set_errno_error (error, saved_errno, "Could not read", rel), NULL;
    }
  closedir (dir);

  g_ptr_array_sort (names, (GCompareFunc) (void (*) (void)) g_strcmp0);
  return g_steal_pointer (&names);
}

/* Whether the walk may go into a folder listed at its current depth:
 * what is in it has one name more, and no row has more than
 * REVIEW_MAX_DEPTH. */
static gboolean
can_descend (const Collect *c)
{
  return c->depth + 1 < REVIEW_MAX_DEPTH;
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
      gboolean ok;

      add_candidate (c, path);
      if (!can_descend (c))
        continue;  /* listed; nothing below it could be applied */
      sub_fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub_fd < 0)
        {
          if (errno_means_absent (errno))
            continue;
          return review_set_errno_error (error, errno, "Could not open", path);
        }
      c->depth++;
      ok = add_subtree (c, sub_fd, path, error);
      c->depth--;
      if (!ok)
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
  return review_set_errno_error (error, errno, "Could not open", path);
}

/* Overlay: only the upper dir is walked, so the cost follows the size of
 * the change, not of the workspace. @w_dir is the workspace's folder at
 * @rel, or -1 when it has none: then nothing of the workspace can be
 * hidden below, and no entry costs a lookup there. (Each entry used to
 * resolve its whole path in the workspace, one openat2 per staged file.) */
gboolean
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
      gboolean ok;

      if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        {
          if (errno == ENOENT)
            continue;
          return review_set_errno_error (error, errno, "Could not stat", path);
        }

      add_candidate (c, path);
      if (!open_workspace_dir (w_dir, name, path, &w_sub, error))
        return FALSE;

      if (!can_descend (c))
        continue;  /* listed; nothing below it could be applied */
      c->depth++;
      if (S_ISDIR (st.st_mode))
        {
          paddock_autofd int sub_fd = openat (dir_fd, name,
                                              O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

          ok = TRUE;
          if (sub_fd < 0)
            ok = review_set_errno_error (error, errno, "Could not open", path);
          else if (w_sub >= 0 && is_opaque (sub_fd))
            {
              /* An opaque folder hides all of the workspace's below it,
               * and nothing of it shows through further down. */
              ok = add_subtree (c, w_sub, path, error);
              paddock_close_fd (&w_sub);
            }
          ok = ok && collect_upper (c, sub_fd, w_sub, path, error);
        }
      else
        /* A whiteout, file or link over a W directory hides all of it. */
        ok = w_sub < 0 || add_subtree (c, w_sub, path, error);
      c->depth--;
      if (!ok)
        return FALSE;
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
      return review_set_errno_error (error, errno, "Could not open", rel);
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
          return review_set_errno_error (error, errno, "Could not read", rel);
        }
      /* Read exactly as much of b, however many reads that takes. */
      while (got < (gsize) na)
        {
          nb = read (b, buf_b + got, (gsize) na - got);
          if (nb < 0 && errno == EINTR)
            continue;
          if (nb < 0)
            return review_set_errno_error (error, errno, "Could not read", rel);
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

/* Whether the links @name in both folders point at the same text. Out of
 * collect_pair(), whose frame is on the stack once per folder level: its
 * two PATH_MAX buffers were most of that frame. */
static gboolean __attribute__ ((noinline))
same_link (int         a_dir,
           int         b_dir,
           const char *name)
{
  char a[PATH_MAX], b[PATH_MAX];
  ssize_t na = readlinkat (a_dir, name, a, sizeof a);
  ssize_t nb = readlinkat (b_dir, name, b, sizeof b);

  return na >= 0 && na == nb && memcmp (a, b, (gsize) na) == 0;
}

static gboolean collect_pair_below (Collect *c, int w_dir, int s_dir, const char *rel, GError **error);

/* Copy: walk the copy and W side by side; either fd may be -1 when only
 * one side has the directory. With the copy's stamps from when it was
 * made, only what the session touched is a candidate; without them, every
 * difference is. Files of equal size and mode are compared by content,
 * since a rewrite may have kept the bytes. */
gboolean
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
          if (st_ == SIDE_DIR && can_descend (c))
            {
              if (wt == SIDE_DIR)
                w_sub = openat (w_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
              s_sub = openat (s_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
              if (s_sub >= 0 && !collect_pair_below (c, w_sub, s_sub, path, error))
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
      else if (wt == SIDE_LINK && st_ == SIDE_LINK && same_link (w_dir, s_dir, name))
        continue;

      /* Two directories with the same permissions are the same entry; the
       * difference, if any, is below. */
      if (!(wt == SIDE_DIR && st_ == SIDE_DIR && (wst.st_mode & 07777) == (sst.st_mode & 07777)))
        add_candidate (c, path);
      if (!can_descend (c))
        continue;  /* nothing below could be applied */

      if (wt == SIDE_DIR)
        w_sub = openat (w_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (st_ == SIDE_DIR)
        s_sub = openat (s_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

      if ((w_sub >= 0 || s_sub >= 0) && !collect_pair_below (c, w_sub, s_sub, path, error))
        return FALSE;
    }

  return TRUE;
}

/* collect_pair() one folder deeper (the caller checked can_descend()). */
static gboolean
collect_pair_below (Collect     *c,
                    int          w_dir,
                    int          s_dir,
                    const char  *rel,
                    GError     **error)
{
  gboolean ok;

  c->depth++;
  ok = collect_pair (c, w_dir, s_dir, rel, error);
  c->depth--;
  return ok;
}
