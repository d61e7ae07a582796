/* paddock-apply-fs.c — errors, paths beneath the workspace, content of the entries
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

/* ---- errors ------------------------------------------------------------ */

static int
code_from_errno (int saved_errno)
{
  switch (saved_errno)
    {
    case ENOSPC:
    case EDQUOT:
      return PADDOCK_APPLY_ERROR_NO_SPACE;
    case EROFS:
    case EACCES:
    case EPERM:
      return PADDOCK_APPLY_ERROR_READ_ONLY;
    default:
      return PADDOCK_APPLY_ERROR_FAILED;
    }
}

/* Paths are raw bytes; messages are UTF-8. */
char *
printable (const char *path)
{
  return g_utf8_make_valid (path, -1);
}

gboolean
set_errno_error (GError     **error,
                 int          saved_errno,
                 const char  *what,
                 const char  *path)
{
  g_autofree char *p = printable (path != NULL ? path : "");

  g_set_error (error, PADDOCK_APPLY_ERROR, code_from_errno (saved_errno),
               "%s “%s”: %s", what, p, g_strerror (saved_errno));
  return FALSE;
}

gboolean
propagate_io_error (GError **error,
                    GError  *io_error)
{
  int code = PADDOCK_APPLY_ERROR_FAILED;

  if (g_error_matches (io_error, G_IO_ERROR, G_IO_ERROR_NO_SPACE))
    code = PADDOCK_APPLY_ERROR_NO_SPACE;
  else if (g_error_matches (io_error, G_IO_ERROR, G_IO_ERROR_READ_ONLY) ||
           g_error_matches (io_error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED))
    code = PADDOCK_APPLY_ERROR_READ_ONLY;
  g_set_error_literal (error, PADDOCK_APPLY_ERROR, code, io_error->message);
  g_error_free (io_error);
  return FALSE;
}

/* ---- paths beneath a root ---------------------------------------------- */

/* Opens @rel beneath @root_fd. RESOLVE_BENEATH: no '..' or absolute path
 * escapes the workspace (or the stage); RESOLVE_NO_SYMLINKS: a symlink in
 * place of a folder is refused (ELOOP) rather than followed out of the tree,
 * since the agent — or anyone writing to the workspace — could plant one;
 * RESOLVE_NO_MAGICLINKS: no /proc-style jumps. Mount points are crossed. */
int
open_beneath (int         root_fd,
              const char *rel,
              int         flags)
{
  int fd;
  int tries = 0;

  if (rel[0] == '\0')
    return openat (root_fd, ".", flags | O_CLOEXEC);

  do
    fd = paddock_compat_openat2_beneath (root_fd, rel, flags, 0);
  /* EAGAIN: a concurrent rename raced the lookup; the kernel asks us to retry. */
  while (fd < 0 && (errno == EINTR || errno == EAGAIN) && ++tries < 16);

  return fd;
}

char *
path_parent (const char *path)
{
  const char *slash = strrchr (path, '/');

  return slash != NULL ? g_strndup (path, (gsize) (slash - path)) : g_strdup ("");
}

const char *
path_name (const char *path)
{
  const char *slash = strrchr (path, '/');

  return slash != NULL ? slash + 1 : path;
}

guint
path_depth (const char *path)
{
  guint depth = 1;

  for (; *path; path++)
    if (*path == '/')
      depth++;
  return depth;
}

gboolean
validate_path (const char  *path,
               GError     **error)
{
  g_auto(GStrv) parts = NULL;
  g_autofree char *p = printable (path);

  if (path[0] == '\0' || path[0] == '/')
    goto invalid;

  parts = g_strsplit (path, "/", -1);
  for (guint i = 0; parts[i] != NULL; i++)
    {
      if (parts[i][0] == '\0' || strcmp (parts[i], ".") == 0 || strcmp (parts[i], "..") == 0)
        goto invalid;
      /* Our own temp/backup names are reserved: an item naming one could
       * collide with, or remove, another batch's backup. */
      if (g_str_has_prefix (parts[i], TEMP_PREFIX))
        goto invalid;
    }
  return TRUE;

invalid:
  g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH,
               "Invalid path “%s”", p);
  return FALSE;
}

void
stamp_clear (PaddockFileStamp *stamp)
{
  memset (stamp, 0, sizeof *stamp);
}

int
stamp_at (int               dir_fd,
          const char       *name,
          PaddockFileStamp *stamp)
{
  struct stat st;

  stamp_clear (stamp);
  if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? 0 : -1;
  paddock_file_stamp_from_stat (stamp, &st);
  return 0;
}

/* The lstat() stamp of @rel beneath @root_fd; absent when a folder on the
 * way is missing, is not a folder, or is a symlink (the entry is then not
 * part of the tree; the plan refuses to create beneath such a symlink). */
gboolean
stamp_beneath (int               root_fd,
               const char       *rel,
               PaddockFileStamp *stamp,
               GError          **error)
{
  g_autofree char *parent = path_parent (rel);
  paddock_autofd int fd = open_beneath (root_fd, parent, O_RDONLY | O_DIRECTORY);

  stamp_clear (stamp);
  if (fd < 0)
    {
      if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
        return TRUE;
      return set_errno_error (error, errno, "Could not open the folder of", rel);
    }
  if (stamp_at (fd, path_name (rel), stamp) != 0)
    return set_errno_error (error, errno, "Could not inspect", rel);
  return TRUE;
}

/* After a rename the moved inode's ctime changes (ext4, tmpfs), so the
 * check after our own rename compares what a writer would change: identity,
 * type, mode, size and mtime. A folder's own size and mtime change when the
 * batch renames its children to backups, so a folder compares identity and
 * mode only. */
gboolean
stamp_same_entry (const PaddockFileStamp *a,
                  const PaddockFileStamp *b)
{
  if (a->present != b->present)
    return FALSE;
  if (!a->present)
    return TRUE;
  if (a->ino != b->ino || a->mode != b->mode)
    return FALSE;
  if (S_ISDIR (a->mode))
    return TRUE;
  return a->size == b->size && a->mtime_ns == b->mtime_ns;
}

/* ---- content ----------------------------------------------------------- */

gboolean
write_all (int          fd,
           const char  *data,
           gsize        length)
{
  while (length > 0)
    {
      gssize n = write (fd, data, length);

      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return FALSE;
        }
      data += n;
      length -= (gsize) n;
    }
  return TRUE;
}

static char *sha256_fd (int fd);

/* The SHA-256 of a file's bytes; for a file with holes larger than a
 * review blob, paddock_sparse_sha256() (*out_extents set) so a sparse
 * terabyte is not read as a terabyte of zeros. */
char *
sha256_fd_bounded (int       fd,
                   gboolean *out_extents)
{
  struct stat st;

  *out_extents = FALSE;
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && st.st_size > 8 * 1024 * 1024 &&
      paddock_allocated_bytes (&st) < (guint64) st.st_size)
    {
      *out_extents = TRUE;
      return paddock_sparse_sha256 (fd, NULL, NULL);
    }
  return sha256_fd (fd);
}

static char *
sha256_fd (int fd)
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  char buf[65536];
  off_t offset = 0;

  for (;;)
    {
      gssize n = pread (fd, buf, sizeof buf, offset);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return NULL;
      if (n == 0)
        break;
      g_checksum_update (sum, (const guchar *) buf, n);
      offset += n;
    }
  return g_strdup (g_checksum_get_string (sum));
}

char *
read_link_at (int         dir_fd,
              const char *name)
{
  char buf[PATH_MAX + 1];
  gssize n = readlinkat (dir_fd, name, buf, sizeof buf - 1);

  if (n < 0)
    return NULL;
  return g_strndup (buf, (gsize) n);
}

/* The SHA-256 of a file's content or a symlink's text; NULL for anything
 * else (folders) or when it cannot be read. */
char *
sha256_entry_at (int                     dir_fd,
                 const char             *name,
                 const PaddockFileStamp *stamp,
                 gboolean               *out_extents)
{
  *out_extents = FALSE;
  if (!stamp->present)
    return NULL;
  if (S_ISREG (stamp->mode))
    {
      /* O_NOFOLLOW: the entry was a file at lstat time; if it became a
       * symlink since, do not read through it. */
      paddock_autofd int fd = openat (dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

      return fd >= 0 ? sha256_fd_bounded (fd, out_extents) : NULL;
    }
  if (S_ISLNK (stamp->mode))
    {
      g_autofree char *text = read_link_at (dir_fd, name);

      return text != NULL ? g_compute_checksum_for_string (G_CHECKSUM_SHA256, text, -1) : NULL;
    }
  return NULL;
}

/* TRUE when the folder @name holds nothing but this batch's temp names
 * (the backups of its children removed earlier in the batch). */
gboolean
dir_holds_only_ours (int         dir_fd,
                     const char *name,
                     const char *prefix)
{
  int fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR *dir;
  struct dirent *de;
  gboolean only_ours = TRUE;

  if (fd < 0)
    return FALSE;
  dir = fdopendir (fd);
  if (dir == NULL)
    {
      close (fd);
      return FALSE;
    }
  while ((de = readdir (dir)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (!g_str_has_prefix (de->d_name, prefix))
        {
          only_ours = FALSE;
          break;
        }
    }
  closedir (dir);
  return only_ours;
}

/* Removes the entry @name, which is ours (a temp or a backup). A folder
 * loses the entries named with @prefix (nested temps and backups), then
 * itself; anything else in it stays and so does the folder. Never follows
 * a symlink. Only unlinks, so it works on a full disk. */
gboolean
remove_ours_at (int         dir_fd,
                const char *name,
                const char *prefix)
{
  struct stat st;

  if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT;

  if (S_ISDIR (st.st_mode))
    {
      int fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
      DIR *dir;
      struct dirent *de;

      if (fd < 0)
        return FALSE;
      /* Let us unlink in it even if the batch made it read-only. */
      (void) fchmod (fd, (st.st_mode & 07777) | S_IRWXU);
      dir = fdopendir (fd);
      if (dir == NULL)
        {
          close (fd);
          return FALSE;
        }
      while ((de = readdir (dir)) != NULL)
        if (g_str_has_prefix (de->d_name, prefix))
          g_ptr_array_add (names, g_strdup (de->d_name));
      for (guint i = 0; i < names->len; i++)
        (void) remove_ours_at (dirfd (dir), g_ptr_array_index (names, i), prefix);
      closedir (dir);
      return unlinkat (dir_fd, name, AT_REMOVEDIR) == 0;
    }

  return unlinkat (dir_fd, name, 0) == 0;
}
