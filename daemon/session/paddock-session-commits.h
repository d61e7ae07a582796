/* paddock-session-commits.h — org.paddock.Session1's ListCommits, GetCommitDiff and ApplyCommits
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-ipc-generated.h"
#include "paddock-session-gate.h"
#include "paddock-stage.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_SESSION_COMMITS (paddock_session_commits_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionCommits, paddock_session_commits, PADDOCK, SESSION_COMMITS, GObject)

/* @stage NULL: the session stages nothing (the host profile). */
PaddockSessionCommits *paddock_session_commits_new             (const char            *session_id,
                                                                PaddockStage          *stage,
                                                                PaddockSessionGate    *gate);

void paddock_session_commits_attach (PaddockSessionCommits *self,
                                    PaddockIpcSession1 *skeleton);

G_END_DECLS
