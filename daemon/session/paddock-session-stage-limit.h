/* paddock-session-stage-limit.h — a running session held still while its stage is full
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-ipc-generated.h"
#include "paddock-session-gate.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_SESSION_STAGE_LIMIT (paddock_session_stage_limit_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionStageLimit, paddock_session_stage_limit, PADDOCK, SESSION_STAGE_LIMIT, GObject)

PaddockSessionStageLimit *paddock_session_stage_limit_new       (const char               *session_id,
                                                                 PaddockSessionGate       *gate);
void                      paddock_session_stage_limit_attach    (PaddockSessionStageLimit *self,
                                                                 PaddockIpcSession1       *skeleton);
/* The session runs with a stage: measured from now on, until _close(). */
void                      paddock_session_stage_limit_begin     (PaddockSessionStageLimit *self,
                                                                 const char               *stage_root,
                                                                 guint64                   limit);
GVariant                 *paddock_session_stage_limit_dup_stage (PaddockSessionStageLimit *self);
void                      paddock_session_stage_limit_close     (PaddockSessionStageLimit *self);
/* SetStageLimit's check and change; Busy while not measuring. */
gboolean                  paddock_session_stage_limit_set_limit (PaddockSessionStageLimit  *self,
                                                                 guint64                    limit,
                                                                 GError                   **error);

G_END_DECLS
