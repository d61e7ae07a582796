/* paddock-agent-home.c — an agent's own HOME that persists between its sessions
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * STATE/agents/NAME/home is bound writable at /home/agent in each safe
 * session of agent NAME, so a login made inside lasts to the next one,
 * and nothing of it is ever written into the real HOME. Its contents are
 * the agent's: any name in it may be a symlink the agent made to anywhere.
 * So the daemon walks it only by descriptors, never following a link:
 * reset removes links as links, and import-login writes each credential
 * through folders it opened with O_NOFOLLOW.
 */

#include "config.h"

#include "paddock-agent-home.h"

#include <gio/gio.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-error.h"

/* Deeper than any agent's state: a deeper tree is refused, not walked. */
#define MAX_DEPTH 128

char *
paddock_agent_home_path (const char *state_dir,
                         const char *name)
{
  return g_build_filename (state_dir, "agents", name, "home", NULL);
}

static gboolean
set_errno_error (GError    **error,
                 int         saved_errno,
                 const char *what,
                 const char *path)
{
  g_set_error (error, PADDOCK_ERROR, saved_errno == ENOSPC ? PADDOCK_ERROR_NO_SPACE : PADDOCK_ERROR_FAILED,
               "%s %s: %s", what, path, g_strerror (saved_errno));
  return FALSE;
}

/**
 * paddock_agent_home_ensure:
 *
 * Returns: (transfer full): the agent's home folder, made (0700) when
 *   missing; NULL with @error set.
 */
char *
paddock_agent_home_ensure (const char  *state_dir,
                           const char  *name,
                           GError     **error)
{
  g_autofree char *home = paddock_agent_home_path (state_dir, name);
  struct stat st;

  if (g_mkdir_with_parents (home, 0700) != 0)
    {
      set_errno_error (error, errno, "Could not make the agent's home", home);
      return NULL;
    }
  /* Only a real folder of ours: a link here would bind whatever it names. */
  if (lstat (home, &st) != 0 || !S_ISDIR (st.st_mode) || st.st_uid != getuid ())
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "The agent's home %s is not a folder of this user", home);
      return NULL;
    }
  return g_steal_pointer (&home);
}

/* Removes @name in @dir_fd and all below it, links as links. */
static gboolean
remove_at (int          dir_fd,
           const char  *name,
           guint        depth,
           int         *out_errno)
{
  struct stat st;

  if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    {
      *out_errno = errno;
      return errno == ENOENT;
    }
  if (S_ISDIR (st.st_mode))
    {
      paddock_autofd int fd = -1;
      DIR *dir;
      struct dirent *entry;
      gboolean ok = TRUE;

      if (depth >= MAX_DEPTH)
        {
          *out_errno = ELOOP;
          return FALSE;
        }
      fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 && errno == EACCES)
        {
          /* A folder the agent made unreadable is still its own. */
          fchmodat (dir_fd, name, 0700, 0);
          fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
      if (fd < 0)
        {
          *out_errno = errno;
          return FALSE;
        }
      fchmod (fd, 0700);
      dir = fdopendir (paddock_steal_fd (&fd));
      if (dir == NULL)
        {
          *out_errno = errno;
          return FALSE;
        }
      while (ok && (entry = readdir (dir)) != NULL)
        if (!g_str_equal (entry->d_name, ".") && !g_str_equal (entry->d_name, ".."))
          ok = remove_at (dirfd (dir), entry->d_name, depth + 1, out_errno);
      closedir (dir);
      if (!ok)
        return FALSE;
      if (unlinkat (dir_fd, name, AT_REMOVEDIR) != 0)
        {
          *out_errno = errno;
          return FALSE;
        }
      return TRUE;
    }
  if (unlinkat (dir_fd, name, 0) != 0 && errno != ENOENT)
    {
      *out_errno = errno;
      return FALSE;
    }
  return TRUE;
}

/* Removes what resets moved aside (folder "home.reset-*" of the agent's
 * folder), on a worker thread: a home of caches and node packages holds
 * tens of thousands of files, and the daemon's main loop relays every
 * session's terminal meanwhile. */
static void
remove_aside_thread (GTask        *task,
                     gpointer      source_object,
                     gpointer      task_data,
                     GCancellable *cancellable)
{
  paddock_autofd int dir_fd = GPOINTER_TO_INT (task_data) - 1;
  DIR *dir = NULL;
  g_autoptr(GPtrArray) asides = g_ptr_array_new_with_free_func (g_free);
  struct dirent *entry;
  int dup_fd = fcntl (dir_fd, F_DUPFD_CLOEXEC, 3);

  if (dup_fd < 0 || (dir = fdopendir (dup_fd)) == NULL)
    {
      if (dup_fd >= 0)
        close (dup_fd);
      return;
    }
  while ((entry = readdir (dir)) != NULL && asides->len < 64)
    if (g_str_has_prefix (entry->d_name, "home.reset-"))
      g_ptr_array_add (asides, g_strdup (entry->d_name));
  closedir (dir);
  for (guint i = 0; i < asides->len; i++)
    {
      int saved_errno = 0;

      if (!remove_at (dir_fd, g_ptr_array_index (asides, i), 0, &saved_errno))
        g_message ("Could not remove an agent's old home %s: %s (tried again at its next reset)",
                   (const char *) g_ptr_array_index (asides, i), g_strerror (saved_errno));
    }
  fsync (dir_fd);
}

/**
 * paddock_agent_home_reset:
 *
 * Empties the agent's home: moved aside (one rename, so no session ever
 * starts with a half-removed home) and made again empty, at once; what
 * was moved aside is removed on a worker thread, with what an earlier
 * reset may have left. The caller checked that no session of the agent
 * runs.
 */
gboolean
paddock_agent_home_reset (const char  *state_dir,
                          const char  *name,
                          GError     **error)
{
  g_autofree char *agent_dir = g_build_filename (state_dir, "agents", name, NULL);
  g_autofree char *home = paddock_agent_home_path (state_dir, name);
  g_autofree char *aside = g_strdup_printf ("home.reset-%08x", g_random_int ());
  paddock_autofd int dir_fd = open (agent_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  g_autofree char *made = NULL;

  if (dir_fd < 0)
    {
      if (errno == ENOENT)
        {
          made = paddock_agent_home_ensure (state_dir, name, error);
          return made != NULL;
        }
      return set_errno_error (error, errno, "Could not open", agent_dir);
    }
  if (renameat (dir_fd, "home", dir_fd, aside) != 0 && errno != ENOENT)
    return set_errno_error (error, errno, "Could not move aside", home);
  if (fsync (dir_fd) != 0)
    return set_errno_error (error, errno, "Could not sync", agent_dir);
  made = paddock_agent_home_ensure (state_dir, name, error);
  if (made == NULL)
    return FALSE;
  {
    g_autoptr(GTask) task = g_task_new (NULL, NULL, NULL, NULL);

    /* The descriptor goes with the task (+1: 0 is a descriptor too). */
    g_task_set_task_data (task, GINT_TO_POINTER (paddock_steal_fd (&dir_fd) + 1), NULL);
    g_task_run_in_thread (task, remove_aside_thread);
  }
  return TRUE;
}

/* Opens (making it when missing) the folder @relative below @root_fd,
 * component by component, following no link. */
static int
open_folders (int          root_fd,
              const char  *relative,
              GError     **error)
{
  g_auto(GStrv) parts = g_strsplit (relative, "/", -1);
  paddock_autofd int fd = fcntl (root_fd, F_DUPFD_CLOEXEC, 3);

  for (guint i = 0; fd >= 0 && parts[i] != NULL; i++)
    {
      int next;

      if (mkdirat (fd, parts[i], 0700) != 0 && errno != EEXIST)
        {
          set_errno_error (error, errno, "Could not make the folder", relative);
          return -1;
        }
      next = openat (fd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0)
        {
          g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_CONFLICT,
                       "%s in the agent's home is not a folder (a link or a file is there): "
                       "reset the agent's home first (paddockctl agents reset)", relative);
          return -1;
        }
      paddock_close_fd (&fd);
      fd = next;
    }
  return paddock_steal_fd (&fd);
}

/* Copies the regular file @src (no link followed at its last component)
 * to @name in @dir_fd: temp file, fsync, rename, fsync of the folder. */
static gboolean
copy_one (const char  *src,
          int          dir_fd,
          const char  *name,
          GError     **error)
{
  paddock_autofd int in = open (src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  paddock_autofd int out = -1;
  g_autofree char *temp = g_strdup_printf (".%s.paddock-%08x", name, g_random_int ());
  g_autofree char *data = NULL;
  struct stat st;
  gsize done = 0;

  if (in < 0 || fstat (in, &st) != 0)
    return set_errno_error (error, errno, "Could not read", src);
  if (!S_ISREG (st.st_mode) || st.st_size > PADDOCK_AGENT_CREDENTIAL_MAX_BYTES)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                   "%s is not a regular file of at most 1 MiB; nothing of it was copied", src);
      return FALSE;
    }
  data = g_malloc ((gsize) st.st_size + 1);
  while (done < (gsize) st.st_size + 1)
    {
      ssize_t n = read (in, data + done, (gsize) st.st_size + 1 - done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return set_errno_error (error, errno, "Could not read", src);
      if (n == 0)
        break;
      done += (gsize) n;
    }
  if (done > (gsize) st.st_size)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_CONFLICT, "%s changed while it was read; try again", src);
      return FALSE;
    }
  out = openat (dir_fd, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0)
    return set_errno_error (error, errno, "Could not write a copy of", src);
  for (gsize written = 0; written < done;)
    {
      ssize_t n = write (out, data + written, done - written);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved_errno = errno;

          unlinkat (dir_fd, temp, 0);
          return set_errno_error (error, saved_errno, "Could not write a copy of", src);
        }
      written += (gsize) n;
    }
  if (fsync (out) != 0 || renameat (dir_fd, temp, dir_fd, name) != 0 || fsync (dir_fd) != 0)
    {
      int saved_errno = errno;

      unlinkat (dir_fd, temp, 0);
      return set_errno_error (error, saved_errno, "Could not save the copy of", src);
    }
  return TRUE;
}

/**
 * paddock_agent_home_import:
 * @preset: whose "credentials" are copied
 * @real_home: the user's HOME, where they are read
 *
 * Copies each credential file of @preset that exists in @real_home into
 * the agent's home, at the same place relative to it. Nothing else of the
 * real HOME is read.
 *
 * Returns: (transfer full): the paths copied (relative); NULL with
 *   NotFound when the preset names none or none exists, or another error.
 */
GStrv
paddock_agent_home_import (const char               *state_dir,
                           const PaddockAgentPreset *preset,
                           const char               *real_home,
                           GError                  **error)
{
  g_autofree char *home = paddock_agent_home_ensure (state_dir, preset->name, error);
  g_autoptr(GPtrArray) copied = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *names = g_strjoinv (", ", preset->credentials);
  paddock_autofd int home_fd = -1;

  if (home == NULL)
    return NULL;
  if (preset->credentials[0] == NULL)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
                   "The %s preset names no credential files to import (its \"credentials\" is empty)",
                   preset->name);
      return NULL;
    }
  home_fd = open (home, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (home_fd < 0)
    {
      set_errno_error (error, errno, "Could not open", home);
      return NULL;
    }
  for (guint i = 0; preset->credentials[i] != NULL; i++)
    {
      const char *relative = preset->credentials[i];
      g_autofree char *src = g_build_filename (real_home, relative, NULL);
      g_autofree char *parent = g_path_get_dirname (relative);
      g_autofree char *base = g_path_get_basename (relative);
      paddock_autofd int dir_fd = -1;
      struct stat st;

      if (lstat (src, &st) != 0)
        continue;
      dir_fd = g_str_equal (parent, ".") ? fcntl (home_fd, F_DUPFD_CLOEXEC, 3) : open_folders (home_fd, parent, error);
      if (dir_fd < 0)
        {
          if (error != NULL && *error == NULL)
            set_errno_error (error, errno, "Could not open", home);
          return NULL;
        }
      if (!copy_one (src, dir_fd, base, error))
        return NULL;
      g_ptr_array_add (copied, g_strdup (relative));
    }
  if (copied->len == 0)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
                   "None of %s's credential files is in %s (looked for %s): log in inside a session "
                   "instead (paddockctl create --agent %s -- LOGIN-COMMAND)",
                   preset->title, real_home, names, preset->name);
      return NULL;
    }
  g_ptr_array_add (copied, NULL);
  return (GStrv) g_ptr_array_free (g_steal_pointer (&copied), FALSE);
}
