/* paddock-session-staging.h — org.paddock.Session1's review, apply, drop and checkpoints
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-ipc-generated.h"
#include "paddock-stage.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_SESSION_STAGING (paddock_session_staging_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionStaging, paddock_session_staging, PADDOCK, SESSION_STAGING, GObject)

/* @stage NULL: the session stages nothing (the host profile). */
PaddockSessionStaging *paddock_session_staging_new                      (const char            *session_id,
                                                                         PaddockStage          *stage);
void                   paddock_session_staging_refresh_last_recovery    (PaddockSessionStaging *self);

gboolean paddock_session_staging_handle_list_change_details (PaddockSessionStaging *self,
                                                             PaddockIpcSession1    *session,
                                                             GDBusMethodInvocation *invocation);
gboolean paddock_session_staging_handle_list_changes        (PaddockSessionStaging *self,
                                                             PaddockIpcSession1    *session,
                                                             GDBusMethodInvocation *invocation);
gboolean paddock_session_staging_handle_get_diff            (PaddockSessionStaging *self,
                                                             PaddockIpcSession1    *session,
                                                             GDBusMethodInvocation *invocation,
                                                             const char            *path);
gboolean paddock_session_staging_handle_apply               (PaddockSessionStaging *self,
                                                             PaddockIpcSession1    *session,
                                                             GDBusMethodInvocation *invocation,
                                                             const char *const     *paths,
                                                             const char *const     *force_paths);
gboolean paddock_session_staging_handle_review              (PaddockSessionStaging *self,
                                                             PaddockIpcSession1    *session,
                                                             GDBusMethodInvocation *invocation,
                                                             GVariant              *options);
gboolean paddock_session_staging_handle_apply_reviewed      (PaddockSessionStaging *self,
                                                             PaddockIpcSession1    *session,
                                                             GDBusMethodInvocation *invocation,
                                                             const char            *token,
                                                             const char *const     *paths,
                                                             GVariant              *options);
gboolean paddock_session_staging_handle_get_reviewed_diff   (PaddockSessionStaging *self,
                                                             PaddockIpcSession1    *session,
                                                             GDBusMethodInvocation *invocation,
                                                             const char            *token,
                                                             const char            *path);
gboolean paddock_session_staging_handle_drop                (PaddockSessionStaging *self,
                                                             PaddockIpcSession1    *session,
                                                             GDBusMethodInvocation *invocation,
                                                             const char *const     *paths);
gboolean paddock_session_staging_handle_create_checkpoint   (PaddockSessionStaging *self,
                                                             PaddockIpcSession1    *session,
                                                             GDBusMethodInvocation *invocation,
                                                             const char            *name);
gboolean paddock_session_staging_handle_list_checkpoints    (PaddockSessionStaging *self,
                                                             PaddockIpcSession1    *session,
                                                             GDBusMethodInvocation *invocation);
gboolean paddock_session_staging_handle_restore_checkpoint  (PaddockSessionStaging *self,
                                                             PaddockIpcSession1    *session,
                                                             GDBusMethodInvocation *invocation,
                                                             const char            *name);

G_END_DECLS
