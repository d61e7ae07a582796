/* paddock-compat-pidfd.c — pinning a process so a signal reaches it or no one
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A pid can die and be handed to another program between our check that
 * it is a session's and the signal; a pidfd pins the process checked, so
 * the signal reaches it or fails with ESRCH. Linux has pidfd_open(2) and
 * pidfd_send_signal(2) (5.3). The fallback has no way to pin a process:
 * it fails with ENOSYS, and the callers refuse to signal (KillProcess
 * answers an error; leftovers are not pinned, and say so) rather than
 * fall back to kill(pid), which could reach a stranger. On FreeBSD
 * pdfork(2) and on macOS a kqueue EVFILT_PROC watch are the nearest
 * equivalents (docs/PORTING.md).
 */

#include "config.h"

#include "paddock-compat.h"
#include "paddock-compat-pidfd.h"

#include <errno.h>

#if PADDOCK_COMPAT_LINUX
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* Returns a pidfd (always close-on-exec) or -1 with errno set. */
int
paddock_compat_pidfd_open (pid_t pid)
{
#if PADDOCK_COMPAT_LINUX
  return (int) syscall (SYS_pidfd_open, pid, 0);
#else
  errno = ENOSYS;
  return -1;
#endif
}

/* 0, or -1 with errno set (ESRCH: the pinned process has ended). */
int
paddock_compat_pidfd_send_signal (int pidfd,
                                  int signum)
{
#if PADDOCK_COMPAT_LINUX
  return (int) syscall (SYS_pidfd_send_signal, pidfd, signum, NULL, 0);
#else
  errno = ENOSYS;
  return -1;
#endif
}

gboolean
paddock_compat_pidfd_supported (void)
{
  return PADDOCK_COMPAT_LINUX;
}
