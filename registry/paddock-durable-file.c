/* paddock-durable-file.c — atomic, durable replacement of small state files
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-durable-file.h"

static gboolean
set_error_from_errno (GError     **error,
                      int          saved_errno,
                      const char  *what,
                      const char  *path)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "%s %s: %s", what, path, g_strerror (saved_errno));
  return FALSE;
}

static gboolean
write_all (int          fd,
           const char  *data,
           gsize        length,
           int         *out_errno)
{
  while (length > 0)
    {
      gssize n = write (fd, data, length);

      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          *out_errno = errno;
          return FALSE;
        }

      data += n;
      length -= (gsize) n;
    }

  return TRUE;
}

/* Replaces @path with @contents so that, after a crash at any point, the
 * file holds either the old or the new contents in full, never a mix or
 * nothing: write a temporary file in the same directory (rename() is only
 * atomic within one file system), fsync it (so the data is on disk before
 * the name points at it), rename it over @path, then fsync the directory
 * (so the rename itself survives a power loss). The file gets exactly @mode,
 * whatever the umask. @length may be -1 for a NUL-terminated @contents. */
gboolean
paddock_durable_file_replace (const char  *path,
                              const char  *contents,
                              gssize       length,
                              int          mode,
                              GError     **error)
{
  g_autofree char *dirname = NULL;
  g_autofree char *basename = NULL;
  g_autofree char *tmp_path = NULL;
  paddock_autofd int fd = -1;
  paddock_autofd int dir_fd = -1;
  int saved_errno = 0;

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (contents != NULL || length == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (length < 0)
    length = (gssize) strlen (contents);

  dirname = g_path_get_dirname (path);
  basename = g_path_get_basename (path);
  /* A dot file next to the target, so it is on the same file system and
   * not mistaken for a state file by anyone listing the directory. */
  tmp_path = g_strdup_printf ("%s/.%s.XXXXXX", dirname, basename);

  /* O_EXCL (inside g_mkstemp_full) so we never write through a file or
   * symlink someone else planted; O_CLOEXEC so no child inherits it. */
  fd = g_mkstemp_full (tmp_path, O_WRONLY | O_CLOEXEC, mode & 07777);
  if (fd < 0)
    return set_error_from_errno (error, errno, "Could not create a temporary file for", path);

  /* The umask may have narrowed the mode; the caller asked for this one. */
  if (fchmod (fd, (mode_t) (mode & 07777)) != 0 ||
      !write_all (fd, contents, (gsize) length, &saved_errno) ||
      fsync (fd) != 0)
    {
      if (saved_errno == 0)
        saved_errno = errno;
      goto fail;
    }

  /* close() can report a deferred write error (e.g. on NFS). */
  if (close (paddock_steal_fd (&fd)) != 0)
    {
      saved_errno = errno;
      goto fail;
    }

  if (rename (tmp_path, path) != 0)
    {
      saved_errno = errno;
      goto fail;
    }

  dir_fd = open (dirname, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0 || fsync (dir_fd) != 0)
    return set_error_from_errno (error, errno, "Could not sync the directory of", path);

  return TRUE;

fail:
  (void) g_unlink (tmp_path);
  return set_error_from_errno (error, saved_errno, "Could not write", path);
}

/* Creates @path and its missing parents with mode 0700, or narrows an
 * existing directory of ours to 0700: the state dir holds who leases what
 * and, later, session data that other local users must not read. A
 * directory owned by someone else is refused, since its owner could swap
 * our files underneath us. */
gboolean
paddock_ensure_private_dir (const char  *path,
                            GError     **error)
{
  paddock_autofd int fd = -1;
  struct stat st;

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (g_mkdir_with_parents (path, 0700) != 0)
    {
      int saved_errno = errno;

      if (saved_errno == ENOTDIR || saved_errno == EEXIST)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY,
                       "%s exists and is not a directory", path);
          return FALSE;
        }
      return set_error_from_errno (error, saved_errno, "Could not create directory", path);
    }

  /* Check and chmod through one fd, so the object we check is the one we
   * change even if the path is swapped in between. */
  fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    {
      if (errno == ENOTDIR)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY,
                       "%s exists and is not a directory", path);
          return FALSE;
        }
      return set_error_from_errno (error, errno, "Could not open directory", path);
    }

  if (fstat (fd, &st) != 0)
    return set_error_from_errno (error, errno, "Could not stat directory", path);

  if (st.st_uid != geteuid ())
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   "Directory %s belongs to another user (uid %u)",
                   path, (guint) st.st_uid);
      return FALSE;
    }

  if ((st.st_mode & 07777) != 0700 && fchmod (fd, 0700) != 0)
    return set_error_from_errno (error, errno, "Could not set mode 0700 on directory", path);

  return TRUE;
}

/* Deletes @path and everything below it, best effort (the caller has
 * nothing better to do with a file that will not go). Symbolic links are
 * removed, never followed: a link planted in a session's folder must not
 * make the daemon delete what it points to. */
void
paddock_remove_tree (const char *path)
{
  g_autoptr(GDir) dir = NULL;
  const char *entry;
  struct stat st;

  g_return_if_fail (path != NULL);

  /* Never through a symlink: a link is removed, not what it points to. */
  if (lstat (path, &st) != 0)
    return;
  if (!S_ISDIR (st.st_mode))
    {
      unlink (path);
      return;
    }

  dir = g_dir_open (path, 0, NULL);
  if (dir == NULL && errno == EACCES && st.st_uid == getuid ())
    {
      /* overlayfs leaves its work folder mode 000; ours to open again. */
      chmod (path, 0700);
      dir = g_dir_open (path, 0, NULL);
    }
  while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, entry, NULL);

      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        paddock_remove_tree (child);
      else
        unlink (child);
    }
  rmdir (path);
}
