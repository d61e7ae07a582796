/* paddock-stage.h — one session's stage: where its writes go, review, apply, drop, checkpoints
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-agent-commits.h"
#include "paddock-apply.h"
#include "paddock-checkpoint.h"
#include "paddock-review.h"
#include "paddock-review-token.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_STAGE (paddock_stage_get_type ())

G_DECLARE_FINAL_TYPE (PaddockStage, paddock_stage, PADDOCK, STAGE, GObject)

const char    *paddock_stage_kind_to_string      (PaddockStageKind   kind);
gboolean       paddock_stage_kind_from_string    (const char        *text,
                                                  PaddockStageKind  *kind);
gboolean       paddock_stage_probe_overlay       (const char        *helper,
                                                  const char        *scratch_dir,
                                                  char             **out_reason);

PaddockStage  *paddock_stage_new                 (const char        *dir,
                                                  const char        *workspace,
                                                  PaddockStageKind   kind);
PaddockStageKind paddock_stage_get_kind          (PaddockStage      *self);
const char    *paddock_stage_get_root            (PaddockStage      *self);
char          *paddock_stage_dup_sandbox_arg     (PaddockStage      *self);
gboolean       paddock_stage_prepare             (PaddockStage      *self,
                                                  GCancellable      *cancellable,
                                                  GError           **error);
void           paddock_stage_record_baseline_in_thread (PaddockStage *self,
                                                        guint         delay_ms);
void           paddock_stage_cancel_baseline     (PaddockStage      *self);
gboolean       paddock_stage_recover             (PaddockStage      *self,
                                                  GError           **error);
char          *paddock_stage_dup_last_recovery   (PaddockStage      *self);
PaddockReview *paddock_stage_review              (PaddockStage      *self,
                                                  GCancellable      *cancellable,
                                                  GError           **error);
GBytes        *paddock_stage_get_diff            (PaddockStage      *self,
                                                  const char        *path,
                                                  GCancellable      *cancellable,
                                                  GError           **error);
gboolean       paddock_stage_apply               (PaddockStage      *self,
                                                  const char *const *paths,
                                                  const char *const *force_paths,
                                                  const char        *who,
                                                  PaddockApplyResult **result,
                                                  GCancellable      *cancellable,
                                                  GError           **error);
PaddockReviewToken *paddock_stage_review_pinned  (PaddockStage      *self,
                                                  GCancellable      *cancellable,
                                                  GError           **error);
GBytes        *paddock_stage_get_reviewed_diff   (PaddockStage      *self,
                                                  const char        *token_id,
                                                  const char        *path,
                                                  GError           **error);
gboolean       paddock_stage_apply_reviewed      (PaddockStage      *self,
                                                  const char        *token_id,
                                                  const char *const *paths,
                                                  const char *const *force_paths,
                                                  const char *const *metadata_paths,
                                                  const char        *who,
                                                  PaddockApplyResult **result,
                                                  GCancellable      *cancellable,
                                                  GError           **error);
gboolean       paddock_stage_drop                (PaddockStage      *self,
                                                  const char *const *paths,
                                                  GCancellable      *cancellable,
                                                  GError           **error);
char          *paddock_stage_create_checkpoint   (PaddockStage      *self,
                                                  const char        *name,
                                                  GCancellable      *cancellable,
                                                  GError           **error);
GPtrArray     *paddock_stage_list_checkpoints    (PaddockStage      *self,
                                                  GError           **error);
gboolean       paddock_stage_restore_checkpoint  (PaddockStage      *self,
                                                  const char        *name,
                                                  GCancellable      *cancellable,
                                                  GError           **error);
PaddockAgentCommits *paddock_stage_list_commits  (PaddockStage      *self,
                                                  GCancellable      *cancellable,
                                                  GError           **error);
gboolean       paddock_stage_apply_commits       (PaddockStage      *self,
                                                  const char        *branch,
                                                  const char        *who,
                                                  char             **out_tip,
                                                  guint             *out_n_objects,
                                                  guint             *out_n_commits,
                                                  GCancellable      *cancellable,
                                                  GError           **error);

G_END_DECLS
