/* paddock-apply.h — apply reviewed staging changes to a workspace in one crash-safe batch
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-file-stamp.h"
#include "paddock-review.h"

G_BEGIN_DECLS

#define PADDOCK_APPLY_ERROR (paddock_apply_error_quark ())

typedef enum {
  PADDOCK_APPLY_ERROR_FAILED,
  PADDOCK_APPLY_ERROR_CONFLICT,
  PADDOCK_APPLY_ERROR_INVALID_PATH,
  PADDOCK_APPLY_ERROR_CORRUPT_JOURNAL,
  PADDOCK_APPLY_ERROR_NO_SPACE,
  PADDOCK_APPLY_ERROR_READ_ONLY,
  PADDOCK_APPLY_ERROR_STALE,  /* an entry is not what the review pinned */
} PaddockApplyError;

typedef enum {
  PADDOCK_APPLY_PUT,
  PADDOCK_APPLY_REMOVE,
} PaddockApplyAction;

/* One entry of a batch. @path is relative to the workspace, raw bytes, no
 * leading '/', no '.', '..' or empty component. PUT makes the workspace's
 * entry what STAGE_ROOT/@path is (regular file: content and permission bits
 * without setuid/setgid; symlink: the same text, never followed; directory:
 * a directory with its mode, children come as their own items). REMOVE
 * removes the workspace's entry (a directory only when it is empty at that
 * point of the batch). Items sharing a @group (every value, 0 included, is
 * a group) are applied or skipped together: give unrelated items distinct
 * groups. */
typedef struct {
  char               *path;
  PaddockApplyAction  action;
  guint               group;
  gboolean            forced;
  PaddockFileStamp    baseline;
  /* A PUT pinned by a review (paddock-review-token.h): the stage entry's
   * type (S_IFREG, S_IFLNK, S_IFDIR), permission bits (07777) and content
   * or link text must be these, as checked on what the batch actually
   * wrote: exactly pin_review's new bytes of the path when set (fetched
   * one file at a time as it is checked, so a batch does not hold a
   * second copy of everything the review kept), else a
   * paddock_content_hash() of pin_sha. Any difference refuses the whole
   * batch with PADDOCK_APPLY_ERROR_STALE. */
  gboolean            pinned;
  guint32             pin_type;
  guint32             pin_mode;
  char               *pin_sha;
  PaddockReview      *pin_review;
} PaddockApplyItem;

typedef struct {
  GPtrArray *applied;     /* char *: paths applied */
  GPtrArray *conflicts;   /* char *: paths in conflict, skipped with their group */
  GPtrArray *new_stamps;  /* PaddockFileStamp *, parallel to @applied */
  char      *batch_id;
} PaddockApplyResult;

GQuark            paddock_apply_error_quark  (void);

PaddockApplyItem *paddock_apply_item_new     (const char          *path,
                                              PaddockApplyAction   action,
                                              guint                group,
                                              gboolean             forced,
                                              const PaddockFileStamp *baseline);
void              paddock_apply_item_free    (PaddockApplyItem    *item);
void              paddock_apply_result_free  (PaddockApplyResult  *result);

gboolean          paddock_apply_batch        (const char          *workspace,
                                              const char          *stage_root,
                                              const char          *journal_dir,
                                              const char          *ledger_file,
                                              const char          *who,
                                              GPtrArray           *items,
                                              PaddockApplyResult **result,
                                              GCancellable        *cancellable,
                                              GError             **error);
gboolean          paddock_apply_recover      (const char          *journal_dir,
                                              const char          *workspace,
                                              gboolean            *out_rolled_back_or_forward,
                                              GError             **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PaddockApplyItem, paddock_apply_item_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PaddockApplyResult, paddock_apply_result_free)

G_END_DECLS
