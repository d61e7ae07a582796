/* paddock-checkpoint.h — copies of a stage: whole-tree copies and named checkpoints
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define PADDOCK_CHECKPOINTS_MAX    32
#define PADDOCK_CHECKPOINT_NAME_MAX 64

typedef struct {
  char    *name;
  guint64  created_usec;   /* Unix time */
} PaddockCheckpointInfo;

void       paddock_checkpoint_info_free (PaddockCheckpointInfo *info);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PaddockCheckpointInfo, paddock_checkpoint_info_free)

gboolean   paddock_tree_copy            (const char    *source,
                                         const char    *dest,
                                         GCancellable  *cancellable,
                                         GError       **error);
gboolean   paddock_entry_copy           (const char    *from_dir,
                                         const char    *name,
                                         const char    *to_dir,
                                         const char    *to_name,
                                         GCancellable  *cancellable,
                                         GError       **error);
gboolean   paddock_entry_copy_at        (int            from_dir,
                                         const char    *name,
                                         int            to_dir,
                                         const char    *to_name,
                                         GCancellable  *cancellable,
                                         GError       **error);
gboolean   paddock_checkpoint_name_is_valid (const char *name);
char      *paddock_checkpoint_create    (const char    *checkpoints_dir,
                                         const char    *name,
                                         const char    *stage_root,
                                         GCancellable  *cancellable,
                                         GError       **error);
GPtrArray *paddock_checkpoint_list      (const char    *checkpoints_dir,
                                         GError       **error);
gboolean   paddock_checkpoint_restore   (const char    *checkpoints_dir,
                                         const char    *name,
                                         const char    *stage_root,
                                         GCancellable  *cancellable,
                                         GError       **error);

G_END_DECLS
