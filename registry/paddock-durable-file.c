/* paddock-durable-file.c — atomic, durable replacement of small state files
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <dirent.h>
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

/* ---- removing a tree ------------------------------------------------------------- */

/* One folder on the way down: its name in its parent (NULL for the top)
 * and the folders in it still to be entered (the rest of what it held is
 * removed when it is read). */
typedef struct
{
  char      *name;
  GPtrArray *folders;
  guint      next;
} RemovalLevel;

static void
removal_level_free (gpointer data)
{
  RemovalLevel *level = data;

  g_free (level->name);
  g_ptr_array_unref (level->folders);
  g_free (level);
}

static gboolean
is_folder_at (int            dir_fd,
              struct dirent *entry)
{
  struct stat st;

  if (entry->d_type != DT_UNKNOWN)
    return entry->d_type == DT_DIR;
  return fstatat (dir_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode);
}

/* Reads the folder open as @fd once: removes what is not a folder and
 * lists the folders, to be entered one by one. Returns a new level named
 * @name (taken). */
static RemovalLevel *
removal_level_read (int   fd,
                    char *name)
{
  RemovalLevel *level = g_new0 (RemovalLevel, 1);
  int scan_fd = fcntl (fd, F_DUPFD_CLOEXEC, 0);
  DIR *dir = scan_fd >= 0 ? fdopendir (scan_fd) : NULL;
  struct dirent *entry;

  level->name = name;
  level->folders = g_ptr_array_new_with_free_func (g_free);
  if (dir == NULL)
    {
      if (scan_fd >= 0)
        close (scan_fd);
      return level;
    }
  while ((entry = readdir (dir)) != NULL)
    {
      if (g_str_equal (entry->d_name, ".") || g_str_equal (entry->d_name, ".."))
        continue;
      if (is_folder_at (fd, entry))
        g_ptr_array_add (level->folders, g_strdup (entry->d_name));
      else
        unlinkat (fd, entry->d_name, 0);
    }
  closedir (dir);
  return level;
}

/* The folder @name in @dir_fd, never through a symbolic link. */
static int
open_folder_at (int         dir_fd,
                const char *name)
{
  int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  int fd = openat (dir_fd, name, flags);
  struct stat st;

  /* overlayfs leaves its work folder mode 000; ours to open again. */
  if (fd < 0 && errno == EACCES && fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISDIR (st.st_mode) && st.st_uid == getuid () && fchmodat (dir_fd, name, 0700, 0) == 0)
    fd = openat (dir_fd, name, flags);
  return fd;
}

/* Removes what the folder open as @top_fd holds. A walk down and back up
 * through descriptors ("..", never a path), with the names on the way in
 * memory: an agent's stage may nest folders deeper than PATH_MAX, or than
 * the stack would take, and at most three descriptors are open at once.
 * Each folder is read once and entered once; it is removed on the way
 * back up (or left, when something in it would not go). */
static void
empty_folder (int top_fd)
{
  g_autoptr(GPtrArray) levels = g_ptr_array_new_with_free_func (removal_level_free);
  int fd = fcntl (top_fd, F_DUPFD_CLOEXEC, 0);

  if (fd >= 0)
    g_ptr_array_add (levels, removal_level_read (fd, NULL));
  while (fd >= 0)
    {
      RemovalLevel *level = g_ptr_array_index (levels, levels->len - 1);
      int parent_fd;

      if (level->next < level->folders->len)
        {
          const char *name = g_ptr_array_index (level->folders, level->next++);
          int child_fd = open_folder_at (fd, name);

          if (child_fd < 0)
            {
              /* Unreadable: it goes if it is empty. */
              unlinkat (fd, name, AT_REMOVEDIR);
              continue;
            }
          close (fd);
          fd = child_fd;
          g_ptr_array_add (levels, removal_level_read (fd, g_strdup (name)));
          continue;
        }

      /* This folder is as empty as it gets: back up, and remove it. */
      if (levels->len == 1)
        break;
      parent_fd = openat (fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      close (fd);
      fd = parent_fd;
      if (fd >= 0)
        unlinkat (fd, level->name, AT_REMOVEDIR);
      g_ptr_array_remove_index (levels, levels->len - 1);
    }
  if (fd >= 0)
    close (fd);
}

/* Deletes @path and everything below it, best effort (the caller has
 * nothing better to do with a file that will not go). Symbolic links are
 * removed, never followed: a link planted in a session's folder must not
 * make the daemon delete what it points to. */
void
paddock_remove_tree (const char *path)
{
  g_return_if_fail (path != NULL);

  paddock_remove_tree_at (AT_FDCWD, path);
}

/* paddock_remove_tree() of @name in the folder open as @dir_fd: for an
 * entry whose whole path may be longer than PATH_MAX. */
void
paddock_remove_tree_at (int         dir_fd,
                        const char *name)
{
  struct stat st;
  int fd;

  g_return_if_fail (name != NULL);

  if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return;
  if (!S_ISDIR (st.st_mode))
    {
      unlinkat (dir_fd, name, 0);
      return;
    }

  fd = open_folder_at (dir_fd, name);
  if (fd >= 0)
    {
      empty_folder (fd);
      close (fd);
    }
  unlinkat (dir_fd, name, AT_REMOVEDIR);
}
