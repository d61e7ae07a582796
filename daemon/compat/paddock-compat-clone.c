/* paddock-compat-clone.c — a file's data shared, not copied, where the filesystem can
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Checkpoints and copy stages share extents where the filesystem has
 * them: instant, and no space until either side is written. Linux: the
 * FICLONE ioctl (btrfs, xfs, bcachefs). macOS: fclonefileat(2) on APFS
 * (docs/PORTING.md). The fallback fails with EOPNOTSUPP, the answer
 * FICLONE gives on a filesystem without shared extents, and every caller
 * then copies the bytes: a clone is only a faster copy, so nothing is
 * weaker without it.
 */

#include "config.h"

#include "paddock-compat.h"
#include "paddock-compat-clone.h"

#include <errno.h>

#if PADDOCK_COMPAT_LINUX
#include <linux/fs.h>
#include <sys/ioctl.h>
#endif

/* 0 when @to now shares @from's data; -1 with errno set otherwise. */
int
paddock_compat_clone_file_data (int to,
                                int from)
{
#if PADDOCK_COMPAT_LINUX
  return ioctl (to, FICLONE, from);
#else
  errno = EOPNOTSUPP;
  return -1;
#endif
}
