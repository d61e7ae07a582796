/* paddock-review.h — what a session changed, compared with the live workspace
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-baseline.h"
#include "paddock-change.h"
#include "paddock-review-cache.h"

G_BEGIN_DECLS

/* How a session's writes are kept apart from the workspace. */
typedef enum {
  PADDOCK_STAGE_KIND_OVERLAY,  /* stage_root is an overlayfs upper dir over the workspace */
  PADDOCK_STAGE_KIND_COPY,     /* stage_root is a full copy of the workspace */
} PaddockStageKind;

/* Diffs larger than this fail with PADDOCK_STAGING_ERROR_TOO_LARGE. */
#define PADDOCK_REVIEW_MAX_DIFF_SIZE  (16 * 1024 * 1024)
/* Files larger than this are compared by SHA-256 only, and shown as binary. */
#define PADDOCK_REVIEW_MAX_BLOB_SIZE  (8 * 1024 * 1024)

#define PADDOCK_TYPE_STAGE_KIND (paddock_stage_kind_get_type ())
#define PADDOCK_TYPE_REVIEW     (paddock_review_get_type ())

GType paddock_stage_kind_get_type (void);

G_DECLARE_FINAL_TYPE (PaddockReview, paddock_review, PADDOCK, REVIEW, GObject)

PaddockReview *paddock_review_new         (const char          *workspace,
                                           const char          *stage_root,
                                           PaddockStageKind     kind,
                                           PaddockBaseline     *baseline,
                                           PaddockBaseline     *copy_baseline,
                                           PaddockReviewCache  *cache,
                                           GCancellable        *cancellable,
                                           GError             **error);
GPtrArray     *paddock_review_get_changes (PaddockReview     *self);
GPtrArray     *paddock_review_get_metadata (PaddockReview    *self);
PaddockChange *paddock_review_lookup      (PaddockReview     *self,
                                           const char        *path);
gboolean       paddock_review_get_stamps  (PaddockReview     *self,
                                           const char        *path,
                                           PaddockFileStamp  *out_stage,
                                           PaddockFileStamp  *out_workspace);
GBytes        *paddock_review_dup_new_content (PaddockReview *self,
                                               const char    *path);
/* The size of a content id (a blob id of the review's object store). */
#define PADDOCK_REVIEW_CONTENT_ID_SIZE 20
gboolean       paddock_review_get_new_content_id (PaddockReview *self,
                                                  const char    *path,
                                                  guint8        *out_id);
GBytes        *paddock_review_get_diff    (PaddockReview     *self,
                                           const char        *path,
                                           GError           **error);

G_END_DECLS
