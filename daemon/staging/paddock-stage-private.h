/* paddock-stage-private.h — what the paddock-stage*.c files share
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Not installed and not for callers of paddock-stage.h: the stage's
 * instance and the helpers its parts call under its lock.
 */

#pragma once

#include <gio/gio.h>

#include "paddock-baseline.h"
#include "paddock-review-cache.h"
#include "paddock-stage.h"

G_BEGIN_DECLS

/* In a checkpoint of a copy stage: the paths the session had changed,
 * each NUL-terminated. */
#define COPY_CHANGES_FILE "session-paths"

struct _PaddockStage
{
  GObject           parent_instance;

  char             *dir;
  char             *workspace;
  PaddockStageKind  kind;
  char             *root;            /* upper/ or copy/ */
  char             *work;            /* work/ (overlay only) */
  char             *baseline_file;
  char             *since_file;
  char             *copy_baseline_file;
  char             *journal_dir;
  char             *ledger_file;
  char             *checkpoints_dir;

  /* One operation at a time; and the baseline, which a thread records
   * once the session has started, is waited for before any review (which
   * asks for it at once: baseline_wanted). */
  GMutex            lock;
  GCond             baseline_cond;
  gboolean          baseline_pending;
  gboolean          baseline_wanted;
  GCancellable     *baseline_cancellable;
  PaddockBaseline  *baseline;
  /* When the session's view of the workspace was set up (prepare), on the
   * file-time clock; 0 before. The baseline stands for that moment. */
  gint64            started_ns;
  /* Copy stages: the copy's stamps as made (NULL until first needed, or
   * when they could not be read: every difference is then listed). */
  PaddockBaseline  *copy_baseline;

  /* The last review, for GetDiff: a diff is taken from it while both
   * sides of that change still have the stamps they had (path → two
   * PaddockFileStamp, stage then workspace), else recomputed. */
  PaddockReview    *last_review;
  GHashTable       *last_stamps;
  /* Blob ids and line counts from the last review, for the next one. */
  PaddockReviewCache *review_cache;
  /* PaddockReviewToken: the last few pinned reviews, oldest first. */
  GPtrArray        *tokens;
};

/* Helpers one file of the part calls in another, grouped by the file
 * that defines them (their comments are there). */

/* paddock-stage.c */

gboolean
errno_error (GError    **error,
             int         saved_errno,
             const char *what,
             const char *path);

gboolean
forget_copy_baseline (PaddockStage  *self,
                      GError       **error);

gboolean
record_copy_baseline (PaddockStage  *self,
                      GCancellable  *cancellable,
                      GError       **error);

gboolean
make_copy (PaddockStage  *self,
           GCancellable  *cancellable,
           GError       **error);

PaddockBaseline *
locked_get_baseline (PaddockStage  *self,
                     GCancellable  *cancellable,
                     GError       **error);

PaddockBaseline *
locked_get_copy_baseline (PaddockStage *self);

void
locked_take_restored (PaddockStage *self);

void
forget_last_review (PaddockStage *self);

PaddockReview *
locked_review (PaddockStage  *self,
               GCancellable  *cancellable,
               GError       **error);

/* paddock-stage-apply.c */

/* How select_changes() treats a row apply cannot take (a path over
 * PATH_MAX…): an apply leaves it, or refuses it when named; a drop takes
 * it like any other (the drop walks folder by folder). */
typedef enum {
  SELECT_FOR_APPLY,
  SELECT_FOR_DROP,
} SelectPurpose;

GPtrArray *
select_changes (GPtrArray          *changes,
                PaddockReview      *review,
                const char *const  *paths,
                SelectPurpose       purpose,
                GError            **error);

G_END_DECLS
