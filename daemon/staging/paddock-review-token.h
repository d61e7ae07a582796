/* paddock-review-token.h — what a review listed, pinned by content, for an apply of exactly that
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-change.h"
#include "paddock-review.h"

G_BEGIN_DECLS

/* Tokens one stage keeps; the oldest goes first. A client reviews, looks,
 * applies: a few in flight is plenty, and each holds a review's rows. */
#define PADDOCK_REVIEW_TOKENS_MAX     4
/* A token older than this is expired: a review left on screen that long
 * is no longer what the user has in mind. */
#define PADDOCK_REVIEW_TOKEN_MAX_AGE_US (G_TIME_SPAN_HOUR * 4)

/* What one stage entry was when the review pinned it. */
typedef struct {
  PaddockEntryType type;        /* NONE: absent (a deletion) */
  guint32          mode;        /* st_mode & 07777 */
  char            *sha;         /* files: paddock_content_hash_fd(); symlinks: of the text */
  gboolean         unreadable;  /* could not be pinned: never matches */
  /* TRUE: the content is the bytes the token's review read and kept
   * (paddock_review_dup_new_content()), known by this id; sha is NULL. */
  gboolean         in_review;
  guint8           content_id[PADDOCK_REVIEW_CONTENT_ID_SIZE];
} PaddockPin;

typedef struct _PaddockReviewToken PaddockReviewToken;

void                paddock_pin_clear             (PaddockPin           *pin);
gboolean            paddock_pin_stage_entry       (int                   stage_fd,
                                                   const char           *rel,
                                                   gboolean              with_content,
                                                   PaddockPin           *out,
                                                   GCancellable         *cancellable,
                                                   GError              **error);
guint32             paddock_pin_type_bits         (const PaddockPin     *pin);

PaddockReviewToken *paddock_review_token_new      (PaddockReview        *review,
                                                   const char           *stage_root,
                                                   GCancellable         *cancellable,
                                                   GError              **error);
PaddockReviewToken *paddock_review_token_ref      (PaddockReviewToken   *self);
void                paddock_review_token_unref    (PaddockReviewToken   *self);
const char         *paddock_review_token_get_id   (PaddockReviewToken   *self);
PaddockReview      *paddock_review_token_get_review (PaddockReviewToken *self);
const PaddockPin   *paddock_review_token_lookup_pin (PaddockReviewToken *self,
                                                     const char         *path);
guint               paddock_review_token_get_n_pins (PaddockReviewToken *self);

PaddockReviewToken *paddock_review_tokens_add     (GPtrArray            *tokens,
                                                   PaddockReviewToken   *token);
PaddockReviewToken *paddock_review_tokens_lookup  (GPtrArray            *tokens,
                                                   const char           *id,
                                                   GError              **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PaddockReviewToken, paddock_review_token_unref)

G_END_DECLS
