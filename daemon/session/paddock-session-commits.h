/* paddock-session-commits.h — org.paddock.Session1's ListCommits, GetCommitDiff and ApplyCommits
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-ipc-generated.h"
#include "paddock-stage.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_SESSION_COMMITS (paddock_session_commits_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionCommits, paddock_session_commits, PADDOCK, SESSION_COMMITS, GObject)

/* @stage NULL: the session stages nothing (the host profile). */
PaddockSessionCommits *paddock_session_commits_new             (const char            *session_id,
                                                                PaddockStage          *stage);
gboolean               paddock_session_commits_handle_list     (PaddockSessionCommits *self,
                                                                PaddockIpcSession1    *session,
                                                                GDBusMethodInvocation *invocation);
gboolean               paddock_session_commits_handle_get_diff (PaddockSessionCommits *self,
                                                                PaddockIpcSession1    *session,
                                                                GDBusMethodInvocation *invocation,
                                                                const char            *id);
gboolean               paddock_session_commits_handle_apply    (PaddockSessionCommits *self,
                                                                PaddockIpcSession1    *session,
                                                                GDBusMethodInvocation *invocation,
                                                                GVariant              *options);

G_END_DECLS
