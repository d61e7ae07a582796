/* paddock-review-cache.h — what one review learnt that the next can reuse
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <git2.h>
#include <glib-object.h>
#include <sys/stat.h>

G_BEGIN_DECLS

#define PADDOCK_TYPE_REVIEW_CACHE (paddock_review_cache_get_type ())

G_DECLARE_FINAL_TYPE (PaddockReviewCache, paddock_review_cache, PADDOCK, REVIEW_CACHE, GObject)

/* Line counts of one pair of blobs, as a patch between them gives them. */
typedef struct {
  guint added;
  guint removed;
  gboolean binary;
} PaddockLineStats;

PaddockReviewCache *paddock_review_cache_new          (void);
void                paddock_review_cache_begin        (PaddockReviewCache     *self,
                                                       gint64                  started_ns);
void                paddock_review_cache_commit       (PaddockReviewCache     *self);
gboolean            paddock_review_cache_lookup_blob  (PaddockReviewCache     *self,
                                                       const struct stat      *st,
                                                       git_oid                *out);
void                paddock_review_cache_add_blob     (PaddockReviewCache     *self,
                                                       const struct stat      *st,
                                                       const git_oid          *oid);
gboolean            paddock_review_cache_lookup_stats (PaddockReviewCache     *self,
                                                       const git_oid          *old_id,
                                                       const git_oid          *new_id,
                                                       PaddockLineStats       *out);
void                paddock_review_cache_add_stats    (PaddockReviewCache     *self,
                                                       const git_oid          *old_id,
                                                       const git_oid          *new_id,
                                                       const PaddockLineStats *stats);

G_END_DECLS
