/* paddock-compat-openat2.c — opening beneath a folder, resolved by the kernel
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The stage and the workspace are the agent's to write: a symlink planted
 * on the way must never make the daemon read or write elsewhere. Linux
 * 5.6's openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
 * resolves the whole path in the kernel. The fallback fails with ENOSYS,
 * the same answer an older Linux kernel gives, so every caller already
 * takes its strict path for it: paddock_open_beneath() walks one name at
 * a time with O_NOFOLLOW (refusing ".." and empty names), never a plain
 * openat() of the whole path. FreeBSD's O_RESOLVE_BENEATH could be a
 * second implementation here.
 */

#include "config.h"

#include "paddock-compat.h"
#include "paddock-compat-openat2.h"

#include <errno.h>
#include <fcntl.h>

#if PADDOCK_COMPAT_LINUX
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* A close-on-exec fd of @rel beneath @root_fd, following no symlink on the
 * way (with O_PATH | O_NOFOLLOW a trailing one is opened itself, as
 * openat2(2) says), or -1 with errno set (EAGAIN: a rename raced the
 * lookup, try again). */
int
paddock_compat_openat2_beneath (int         root_fd,
                                const char *rel,
                                int         flags,
                                guint       mode)
{
#if PADDOCK_COMPAT_LINUX
  struct open_how how = {
    .flags = (guint64) (flags | O_CLOEXEC),
    .mode = (flags & O_CREAT) != 0 ? mode : 0,
    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
  };

  return (int) syscall (SYS_openat2, root_fd, rel, &how, sizeof how);
#else
  errno = ENOSYS;
  return -1;
#endif
}
