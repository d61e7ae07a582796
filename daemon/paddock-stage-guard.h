/* paddock-stage-guard.h — a running session's stage measured against its size limit
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* A stage holds at most this much unless CreateSession says otherwise. */
#define PADDOCK_STAGE_LIMIT_DEFAULT   (8 * (guint64) 1024 * 1024 * 1024)
#define PADDOCK_STAGE_LIMIT_MIN       ((guint64) 1024 * 1024)
#define PADDOCK_STAGE_LIMIT_MAX       (16 * (guint64) 1024 * 1024 * 1024 * 1024)
/* The state folder's file system keeps at least this much free. */
#define PADDOCK_STAGE_RESERVE_DEFAULT ((guint64) 512 * 1024 * 1024)

#define PADDOCK_TYPE_STAGE_GUARD (paddock_stage_guard_get_type ())

G_DECLARE_FINAL_TYPE (PaddockStageGuard, paddock_stage_guard, PADDOCK, STAGE_GUARD, GObject)

PaddockStageGuard *paddock_stage_guard_new        (const char        *root,
                                                   guint64            limit,
                                                   guint64            reserve);
void               paddock_stage_guard_start      (PaddockStageGuard *self);
void               paddock_stage_guard_stop       (PaddockStageGuard *self);
void               paddock_stage_guard_set_limit  (PaddockStageGuard *self,
                                                   guint64            limit);
guint64            paddock_stage_guard_get_limit  (PaddockStageGuard *self);
guint64            paddock_stage_guard_get_used   (PaddockStageGuard *self);
gboolean           paddock_stage_guard_is_full    (PaddockStageGuard *self);
const char        *paddock_stage_guard_get_reason (PaddockStageGuard *self);
gboolean           paddock_stage_guard_measure    (const char        *root,
                                                   guint64           *out_bytes,
                                                   guint64           *out_free,
                                                   char             **out_unmeasured,
                                                   GError           **error);

G_END_DECLS
