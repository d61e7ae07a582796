/* paddock-compat-rename.c — renames that never replace, and atomic exchanges
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Apply puts each staged entry in place with one rename: onto a free name
 * without ever replacing what the user may have made there meanwhile
 * (RENAME_NOREPLACE), or swapped with the existing entry so that the old
 * one can be restored (RENAME_EXCHANGE); see paddock-apply.c. Linux has
 * renameat2(2); macOS has renamex_np(RENAME_EXCL / RENAME_SWAP). The
 * fallback does not emulate either with a check-then-rename, which would
 * race with the user's own writes: it fails with ENOSYS, so Apply fails
 * with its typed error and the workspace is left as it was.
 */

#include "config.h"

#include "paddock-compat.h"
#include "paddock-compat-rename.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

#if PADDOCK_COMPAT_LINUX
#include <linux/fs.h>
#endif

/* 0, or -1 with errno set (EEXIST: @to exists). */
int
paddock_compat_rename_noreplace (int         from_dir,
                                 const char *from,
                                 int         to_dir,
                                 const char *to)
{
#if PADDOCK_COMPAT_LINUX
  return renameat2 (from_dir, from, to_dir, to, RENAME_NOREPLACE);
#else
  errno = ENOSYS;
  return -1;
#endif
}

/* 0, or -1 with errno set (ENOENT: either side is missing). */
int
paddock_compat_rename_exchange (int         from_dir,
                                const char *from,
                                int         to_dir,
                                const char *to)
{
#if PADDOCK_COMPAT_LINUX
  return renameat2 (from_dir, from, to_dir, to, RENAME_EXCHANGE);
#else
  errno = ENOSYS;
  return -1;
#endif
}
