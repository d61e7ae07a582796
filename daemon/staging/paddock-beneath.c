/* paddock-beneath.c — opening a path beneath a folder without following any symlink
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The stage and the workspace are written by the agent: review, pins and
 * apply's details all open their entries through here, so a link planted
 * on the way never makes the daemon read (and show, or apply) a file from
 * elsewhere, and a path over PATH_MAX (the agent can make one a folder at
 * a time) is reached one name at a time instead of failing the whole
 * review.
 */

#include "config.h"

#include "paddock-beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-compat-openat2.h"

/* Opens @rel beneath @root_fd without following any symlink on the way:
 * the stage and the workspace are written by the agent, and a link planted
 * in either must never make us read (and show, or later apply) a file from
 * elsewhere. openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) does this in
 * the kernel; a component-by-component O_NOFOLLOW walk is the fallback for
 * kernels older than 5.6. Returns -1 with errno set. */
int
paddock_open_beneath (int         root_fd,
              const char *rel,
              int         flags)
{
  g_auto(GStrv) parts = NULL;
  paddock_autofd int dir_fd = -1;
  long fd;
  int tries = 0;

  do
    fd = paddock_compat_openat2_beneath (root_fd, *rel != '\0' ? rel : ".", flags | O_NOFOLLOW, 0);
  while (fd < 0 && errno == EAGAIN && ++tries < 16);
  /* ENAMETOOLONG: a path over PATH_MAX, which the agent can make one
   * folder at a time; the walk below reaches it one name at a time. */
  if (fd >= 0 || (errno != ENOSYS && errno != ENAMETOOLONG))
    return (int) fd;

  dir_fd = fcntl (root_fd, F_DUPFD_CLOEXEC, 3);
  if (dir_fd < 0)
    return -1;
  if (*rel == '\0')
    return openat (dir_fd, ".", flags | O_NOFOLLOW | O_CLOEXEC);

  parts = g_strsplit (rel, "/", -1);
  for (guint i = 0; parts[i] != NULL; i++)
    {
      gboolean last = parts[i + 1] == NULL;
      int next;

      /* What RESOLVE_BENEATH refuses: no way up, no empty name. */
      if (parts[i][0] == '\0' || strcmp (parts[i], "..") == 0)
        {
          errno = EXDEV;
          return -1;
        }
      next = openat (dir_fd, parts[i],
                         last ? flags | O_NOFOLLOW | O_CLOEXEC
                              : O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

      if (next < 0)
        return -1;
      paddock_close_fd (&dir_fd);
      dir_fd = next;
    }

  return paddock_steal_fd (&dir_fd);
}

/* Splits @rel at its last '/' and opens the parent as an O_PATH fd. */
int
paddock_open_parent_beneath (int          root_fd,
                     const char  *rel,
                     const char **out_base)
{
  const char *slash = strrchr (rel, '/');
  g_autofree char *parent = NULL;

  if (slash == NULL)
    {
      *out_base = rel;
      return fcntl (root_fd, F_DUPFD_CLOEXEC, 3);
    }

  *out_base = slash + 1;
  parent = g_strndup (rel, (gsize) (slash - rel));
  return paddock_open_beneath (root_fd, parent, O_PATH | O_DIRECTORY);
}

