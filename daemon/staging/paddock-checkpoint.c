/* paddock-checkpoint.c — copies of a stage: whole-tree copies and named checkpoints
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A stage is a folder tree with overlayfs's own marks in it: whiteouts
 * (character devices 0:0) and user.overlay.* extended attributes (opaque
 * folders). A copy that lost either would show deleted files again, so the
 * copy here keeps them, together with modes, times and symlinks as links.
 * Files are cloned (FICLONE) where the filesystem shares extents, else
 * copied in the kernel (copy_file_range).
 */

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-change.h"
#include "paddock-checkpoint.h"
#include "paddock-compat-clone.h"
#include "paddock-durable-file.h"

/* Deeper trees than this are refused rather than recursed into. */
#define TREE_DEPTH_MAX 256
#define XATTR_LIST_MAX_BYTES (64 * 1024)

void
paddock_checkpoint_info_free (PaddockCheckpointInfo *info)
{
  if (info == NULL)
    return;
  g_free (info->name);
  g_free (info);
}

static gboolean
set_errno_error (GError    **error,
                 int         saved_errno,
                 const char *what,
                 const char *name)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "%s “%s”: %s", what, name, g_strerror (saved_errno));
  return FALSE;
}

/* The user.* attributes carry overlayfs's opaque and whiteout marks. */
static gboolean
copy_xattrs (int          from,
             int          to,
             const char  *name,
             GError     **error)
{
  g_autofree char *list = g_malloc (XATTR_LIST_MAX_BYTES);
  ssize_t len = flistxattr (from, list, XATTR_LIST_MAX_BYTES);

  if (len < 0)
    {
      if (errno == ENOTSUP)
        return TRUE;
      return set_errno_error (error, errno, "Could not list the attributes of", name);
    }

  for (ssize_t off = 0; off < len; off += (ssize_t) strlen (list + off) + 1)
    {
      const char *key = list + off;
      char value[4096];
      ssize_t n;

      if (!g_str_has_prefix (key, "user."))
        continue;
      n = fgetxattr (from, key, value, sizeof value);
      if (n < 0)
        return set_errno_error (error, errno, "Could not read an attribute of", name);
      if (fsetxattr (to, key, value, (size_t) n, 0) != 0)
        return set_errno_error (error, errno, "Could not copy an attribute of", name);
    }
  return TRUE;
}

static gboolean
copy_file_data (int          from,
                int          to,
                const char  *name,
                GError     **error)
{
  /* Shared extents where the filesystem can (btrfs, xfs): instant and
   * costs no space until either side is written. */
  if (paddock_compat_clone_file_data (to, from) == 0)
    return TRUE;

  for (;;)
    {
      ssize_t n = copy_file_range (from, NULL, to, NULL, 1 << 30, 0);

      if (n == 0)
        return TRUE;
      if (n > 0)
        continue;
      if (errno == EINTR)
        continue;
      if (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)
        break;
      return set_errno_error (error, errno, "Could not copy", name);
    }

  /* Plain read/write where copy_file_range cannot go. */
  for (;;)
    {
      char buf[64 * 1024];
      ssize_t n = read (from, buf, sizeof buf);

      if (n == 0)
        return TRUE;
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return set_errno_error (error, errno, "Could not read", name);
        }
      for (ssize_t done = 0; done < n;)
        {
          ssize_t w = write (to, buf + done, (size_t) (n - done));
          if (w < 0)
            {
              if (errno == EINTR)
                continue;
              return set_errno_error (error, errno, "Could not write", name);
            }
          done += w;
        }
    }
}

static gboolean copy_dir_contents (int           from_dir,
                                   int           to_dir,
                                   guint         depth,
                                   GCancellable *cancellable,
                                   GError      **error);

static gboolean
copy_entry (int           from_dir,
            const char   *name,
            int           to_dir,
            const char   *to_name,
            guint         depth,
            GCancellable *cancellable,
            GError      **error)
{
  struct stat st;
  struct timespec times[2];

  if (fstatat (from_dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return set_errno_error (error, errno, "Could not inspect", name);
  times[0] = st.st_atim;
  times[1] = st.st_mtim;

  if (S_ISDIR (st.st_mode))
    {
      paddock_autofd int from = -1;
      paddock_autofd int to = -1;

      if (depth >= TREE_DEPTH_MAX)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_TOO_MANY_LINKS,
                       "Folders nested deeper than %u levels at “%s”", TREE_DEPTH_MAX, name);
          return FALSE;
        }
      if (mkdirat (to_dir, to_name, 0700) != 0)
        return set_errno_error (error, errno, "Could not create the folder", name);
      from = openat (from_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      to = openat (to_dir, to_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (from < 0 || to < 0)
        return set_errno_error (error, errno, "Could not open the folder", name);
      if (!copy_dir_contents (from, to, depth + 1, cancellable, error) ||
          !copy_xattrs (from, to, name, error))
        return FALSE;
      if (fchmod (to, st.st_mode & 07777) != 0 || futimens (to, times) != 0)
        return set_errno_error (error, errno, "Could not set the mode of", name);
      return TRUE;
    }

  if (S_ISREG (st.st_mode))
    {
      paddock_autofd int from = openat (from_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      paddock_autofd int to = -1;

      if (from < 0)
        return set_errno_error (error, errno, "Could not open", name);
      to = openat (to_dir, to_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (to < 0)
        return set_errno_error (error, errno, "Could not create", name);
      if (!copy_file_data (from, to, name, error) || !copy_xattrs (from, to, name, error))
        return FALSE;
      if (fchmod (to, st.st_mode & 07777) != 0 || futimens (to, times) != 0)
        return set_errno_error (error, errno, "Could not set the mode of", name);
      return TRUE;
    }

  if (S_ISLNK (st.st_mode))
    {
      char target[PATH_MAX + 1];
      ssize_t n = readlinkat (from_dir, name, target, PATH_MAX);

      if (n < 0)
        return set_errno_error (error, errno, "Could not read the link", name);
      target[n] = '\0';
      if (symlinkat (target, to_dir, to_name) != 0)
        return set_errno_error (error, errno, "Could not create the link", name);
      utimensat (to_dir, to_name, times, AT_SYMLINK_NOFOLLOW);
      return TRUE;
    }

  if (S_ISCHR (st.st_mode) && major (st.st_rdev) == 0 && minor (st.st_rdev) == 0)
    {
      /* An overlayfs whiteout: "this path was deleted". Any user may make
       * one (Linux 5.8), and only this kind of device. */
      if (mknodat (to_dir, to_name, S_IFCHR | 0, makedev (0, 0)) != 0)
        return set_errno_error (error, errno, "Could not copy the deletion mark", name);
      return TRUE;
    }

  if (S_ISFIFO (st.st_mode))
    {
      if (mkfifoat (to_dir, to_name, st.st_mode & 0777) != 0)
        return set_errno_error (error, errno, "Could not copy the pipe", name);
      return TRUE;
    }

  /* Sockets and devices: nothing a stage can carry (the workspace is
   * mounted nodev, and a socket is not content). */
  return TRUE;
}

static gboolean
copy_dir_contents (int           from_dir,
                   int           to_dir,
                   guint         depth,
                   GCancellable *cancellable,
                   GError      **error)
{
  paddock_autofd int dup_fd = fcntl (from_dir, F_DUPFD_CLOEXEC, 3);
  DIR *dir;
  struct dirent *entry;
  gboolean ok = TRUE;

  if (dup_fd < 0)
    return set_errno_error (error, errno, "Could not open", ".");
  dir = fdopendir (dup_fd);
  if (dir == NULL)
    return set_errno_error (error, errno, "Could not list", ".");
  dup_fd = -1;   /* the DIR owns it now */

  while (ok && (errno = 0, entry = readdir (dir)) != NULL)
    {
      if (g_str_equal (entry->d_name, ".") || g_str_equal (entry->d_name, ".."))
        continue;
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        ok = FALSE;
      else
        ok = copy_entry (from_dir, entry->d_name, to_dir, entry->d_name, depth, cancellable, error);
    }
  if (ok && errno != 0)
    ok = set_errno_error (error, errno, "Could not list", ".");
  closedir (dir);
  return ok;
}

/* Copies the tree at @source to @dest, which must not exist yet. */
gboolean
paddock_tree_copy (const char    *source,
                   const char    *dest,
                   GCancellable  *cancellable,
                   GError       **error)
{
  paddock_autofd int from = -1;
  paddock_autofd int to = -1;
  struct stat st;

  g_return_val_if_fail (source != NULL && dest != NULL, FALSE);

  from = open (source, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (from < 0 || fstat (from, &st) != 0)
    return set_errno_error (error, errno, "Could not open", source);
  if (mkdir (dest, 0700) != 0)
    return set_errno_error (error, errno, "Could not create", dest);
  to = open (dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (to < 0)
    return set_errno_error (error, errno, "Could not open", dest);
  if (!copy_dir_contents (from, to, 0, cancellable, error) ||
      !copy_xattrs (from, to, dest, error))
    return FALSE;
  if (fchmod (to, st.st_mode & 07777) != 0)
    return set_errno_error (error, errno, "Could not set the mode of", dest);
  return TRUE;
}

/* Copies one entry (a file, link, whiteout or whole folder) of @from_dir
 * to @to_dir as @to_name, which must not exist yet. */
gboolean
paddock_entry_copy (const char    *from_dir,
                    const char    *name,
                    const char    *to_dir,
                    const char    *to_name,
                    GCancellable  *cancellable,
                    GError       **error)
{
  paddock_autofd int from = open (from_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  paddock_autofd int to = open (to_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  if (from < 0)
    return set_errno_error (error, errno, "Could not open", from_dir);
  if (to < 0)
    return set_errno_error (error, errno, "Could not open", to_dir);
  return copy_entry (from, name, to, to_name, 0, cancellable, error);
}

/* paddock_entry_copy() between folders open as @from_dir and @to_dir: for
 * an entry whose whole path may be longer than PATH_MAX. */
gboolean
paddock_entry_copy_at (int           from_dir,
                       const char   *name,
                       int           to_dir,
                       const char   *to_name,
                       GCancellable *cancellable,
                       GError      **error)
{
  return copy_entry (from_dir, name, to_dir, to_name, 0, cancellable, error);
}

gboolean
paddock_checkpoint_name_is_valid (const char *name)
{
  size_t len = strlen (name);

  if (len == 0 || len > PADDOCK_CHECKPOINT_NAME_MAX || name[0] == '.')
    return FALSE;
  for (const char *p = name; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_' && *p != '.')
      return FALSE;
  return TRUE;
}

static gboolean
sync_folder (const char  *path,
             GError     **error)
{
  paddock_autofd int fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  /* One syncfs() makes the whole copied tree durable: cheaper than an
   * fsync per file, and the checkpoint is renamed into place only after. */
  if (fd < 0 || syncfs (fd) != 0)
    return set_errno_error (error, errno, "Could not flush", path);
  return TRUE;
}

static gboolean
fsync_folder (const char  *path,
              GError     **error)
{
  paddock_autofd int fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  if (fd < 0 || fsync (fd) != 0)
    return set_errno_error (error, errno, "Could not flush", path);
  return TRUE;
}

/* A checkpoint is checkpoints_dir/NAME/{tree,created}: made under a
 * dot-name and renamed into place once complete and durable, so a crash
 * half-way leaves no checkpoint that looks whole. */
char *
paddock_checkpoint_create (const char    *checkpoints_dir,
                           const char    *name,
                           const char    *stage_root,
                           GCancellable  *cancellable,
                           GError       **error)
{
  g_autofree char *chosen = NULL;
  g_autofree char *final = NULL;
  g_autofree char *partial = NULL;
  g_autofree char *tree = NULL;
  g_autofree char *created = NULL;
  g_autofree char *stamp = NULL;
  g_autoptr(GPtrArray) existing = NULL;

  if (!paddock_ensure_private_dir (checkpoints_dir, error))
    return NULL;
  existing = paddock_checkpoint_list (checkpoints_dir, error);
  if (existing == NULL)
    return NULL;
  if (existing->len >= PADDOCK_CHECKPOINTS_MAX)
    {
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_TOO_LARGE,
                   "The session already has %u checkpoints, the most it may keep",
                   PADDOCK_CHECKPOINTS_MAX);
      return NULL;
    }

  if (name != NULL && name[0] != '\0')
    {
      if (!paddock_checkpoint_name_is_valid (name))
        {
          g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_INVALID_PATH,
                       "“%s” is not a checkpoint name: use letters, digits, '-', '_' and '.', "
                       "at most %d, not starting with '.'", name, PADDOCK_CHECKPOINT_NAME_MAX);
          return NULL;
        }
      chosen = g_strdup (name);
    }
  else
    {
      g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
      g_autofree char *base = g_date_time_format (now, "%Y%m%d-%H%M%S");

      chosen = g_strdup (base);
      /* Two in one second: a suffix keeps both. */
      for (guint i = 2; ; i++)
        {
          g_autofree char *probe = g_build_filename (checkpoints_dir, chosen, NULL);
          if (!g_file_test (probe, G_FILE_TEST_EXISTS))
            break;
          g_free (chosen);
          chosen = g_strdup_printf ("%s-%u", base, i);
        }
    }

  final = g_build_filename (checkpoints_dir, chosen, NULL);
  if (g_file_test (final, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CONFLICT,
                   "A checkpoint named “%s” exists already", chosen);
      return NULL;
    }

  partial = g_strdup_printf ("%s/.partial-%s", checkpoints_dir, chosen);
  paddock_remove_tree (partial);
  if (g_mkdir (partial, 0700) != 0)
    {
      set_errno_error (error, errno, "Could not create", partial);
      return NULL;
    }
  tree = g_build_filename (partial, "tree", NULL);
  created = g_build_filename (partial, "created", NULL);
  stamp = g_strdup_printf ("%" G_GINT64_FORMAT "\n", g_get_real_time ());
  if (!paddock_tree_copy (stage_root, tree, cancellable, error) ||
      !g_file_set_contents (created, stamp, -1, error) ||
      !sync_folder (partial, error) ||
      g_rename (partial, final) != 0)
    {
      if (error != NULL && *error == NULL)
        set_errno_error (error, errno, "Could not complete the checkpoint", chosen);
      paddock_remove_tree (partial);
      return NULL;
    }
  if (!fsync_folder (checkpoints_dir, error))
    return NULL;
  return g_steal_pointer (&chosen);
}

static gint
compare_created (gconstpointer a,
                 gconstpointer b)
{
  const PaddockCheckpointInfo *x = *(PaddockCheckpointInfo *const *) a;
  const PaddockCheckpointInfo *y = *(PaddockCheckpointInfo *const *) b;

  if (x->created_usec != y->created_usec)
    return x->created_usec < y->created_usec ? -1 : 1;
  return strcmp (x->name, y->name);
}

GPtrArray *
paddock_checkpoint_list (const char  *checkpoints_dir,
                         GError     **error)
{
  g_autoptr(GPtrArray) list = g_ptr_array_new_with_free_func ((GDestroyNotify) paddock_checkpoint_info_free);
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GError) local_error = NULL;
  const char *name;

  dir = g_dir_open (checkpoints_dir, 0, &local_error);
  if (dir == NULL)
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return g_steal_pointer (&list);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }

  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *created = g_build_filename (checkpoints_dir, name, "created", NULL);
      g_autofree char *text = NULL;
      PaddockCheckpointInfo *info;
      guint64 usec = 0;

      if (name[0] == '.' || !paddock_checkpoint_name_is_valid (name))
        continue;
      if (!g_file_get_contents (created, &text, NULL, NULL))
        continue;
      g_strstrip (text);
      if (!g_ascii_string_to_unsigned (text, 10, 0, G_MAXUINT64, &usec, NULL))
        continue;
      info = g_new0 (PaddockCheckpointInfo, 1);
      info->name = g_strdup (name);
      info->created_usec = usec;
      g_ptr_array_add (list, info);
    }
  g_ptr_array_sort (list, compare_created);
  return g_steal_pointer (&list);
}

/* Replaces @stage_root with the checkpoint's tree: the copy is made beside
 * it first, then swapped in by renames, so the stage is whole at every
 * moment. The caller makes sure nothing has the stage mounted. */
gboolean
paddock_checkpoint_restore (const char    *checkpoints_dir,
                            const char    *name,
                            const char    *stage_root,
                            GCancellable  *cancellable,
                            GError       **error)
{
  g_autofree char *tree = NULL;
  g_autofree char *incoming = g_strconcat (stage_root, ".restoring", NULL);
  g_autofree char *outgoing = g_strconcat (stage_root, ".replaced", NULL);
  g_autofree char *parent = g_path_get_dirname (stage_root);

  if (!paddock_checkpoint_name_is_valid (name))
    {
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_NOT_FOUND, "No checkpoint named “%s”", name);
      return FALSE;
    }
  tree = g_build_filename (checkpoints_dir, name, "tree", NULL);
  if (!g_file_test (tree, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_NOT_FOUND, "No checkpoint named “%s”", name);
      return FALSE;
    }

  paddock_remove_tree (incoming);
  paddock_remove_tree (outgoing);
  if (!paddock_tree_copy (tree, incoming, cancellable, error) ||
      !sync_folder (incoming, error))
    {
      paddock_remove_tree (incoming);
      return FALSE;
    }
  if (g_rename (stage_root, outgoing) != 0 && errno != ENOENT)
    {
      set_errno_error (error, errno, "Could not move aside", stage_root);
      paddock_remove_tree (incoming);
      return FALSE;
    }
  if (g_rename (incoming, stage_root) != 0)
    {
      int saved_errno = errno;
      g_rename (outgoing, stage_root);
      paddock_remove_tree (incoming);
      return set_errno_error (error, saved_errno, "Could not put in place", stage_root);
    }
  paddock_remove_tree (outgoing);
  return fsync_folder (parent, error);
}
