/* paddock-sparse-copy.h — copy and hash files by their data extents, keeping holes
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>
#include <sys/stat.h>

G_BEGIN_DECLS

/* What a file really occupies on disk (st_blocks are 512-byte units
 * whatever the file system's block size). */
static inline guint64
paddock_allocated_bytes (const struct stat *st)
{
  return (guint64) st->st_blocks * 512;
}

gboolean paddock_sparse_copy   (int            in_fd,
                                int            out_fd,
                                GCancellable  *cancellable,
                                GError       **error);
char    *paddock_sparse_sha256 (int            fd,
                                GCancellable  *cancellable,
                                GError       **error);

G_END_DECLS
