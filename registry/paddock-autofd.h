/* paddock-autofd.h — scope-bound file descriptors (GLib's g_autofd is 2.76)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <errno.h>
#include <glib.h>
#include <unistd.h>

G_BEGIN_DECLS

static inline void
paddock_close_fd (int *fd)
{
  if (*fd >= 0)
    {
      int saved_errno = errno;
      close (*fd);
      errno = saved_errno;
      *fd = -1;
    }
}

/* Usage: paddock_autofd int fd = -1;  ownership leaves with paddock_steal_fd(). */
#define paddock_autofd __attribute__((cleanup (paddock_close_fd)))

static inline int
paddock_steal_fd (int *fd)
{
  int ret = *fd;
  *fd = -1;
  return ret;
}

G_END_DECLS
