/* paddock-apply-restored.h — what a rolled-back batch gave back, so the next one does not see conflicts
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-file-stamp.h"

G_BEGIN_DECLS

/* A workspace entry a rollback renamed back into place: the same entry
 * (inode, type, mode, size, mtime) as @from, but with the ctime the
 * rename gave it, @to. */
typedef struct {
  char             *path;
  PaddockFileStamp  from;
  PaddockFileStamp  to;
} PaddockApplyRestored;

void        paddock_apply_restored_free   (PaddockApplyRestored *restored);

GHashTable *paddock_apply_restored_load   (const char   *journal_dir);
gboolean    paddock_apply_restored_add    (const char   *journal_dir,
                                           GPtrArray    *restored,
                                           GError      **error);
void        paddock_apply_restored_forget (const char   *journal_dir,
                                           GPtrArray    *paths);
gboolean    paddock_apply_restored_matches (GHashTable             *table,
                                            const char             *path,
                                            const PaddockFileStamp *baseline,
                                            const PaddockFileStamp *current);

gboolean    paddock_apply_record_recovery (const char   *journal_dir,
                                           const char   *ledger_file,
                                           const char   *batch,
                                           const char   *outcome,
                                           guint         n_restored,
                                           GError      **error);
char       *paddock_apply_dup_last_recovery (const char *journal_dir);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PaddockApplyRestored, paddock_apply_restored_free)

G_END_DECLS
