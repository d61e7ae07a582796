/* paddock-session-impl-private.h — what the session's sibling files need of it
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include "paddock-session-impl.h"
#include "paddock-stage.h"

G_BEGIN_DECLS

PaddockStage *_paddock_session_impl_get_stage (PaddockSessionImpl    *self);
gboolean      _paddock_session_impl_is_live   (PaddockSessionImpl    *self);
gboolean      _paddock_session_impl_freeze    (PaddockSessionImpl    *self,
                                               gboolean               frozen);
/* The pids of every process of the session now, as the daemon sees them. */
GArray       *_paddock_session_impl_list_pids (PaddockSessionImpl    *self);

/* org.paddock.Session1's staging methods (paddock-session-staging.c). */
gboolean _paddock_session_impl_handle_list_changes       (PaddockIpcSession1    *session,
                                                          GDBusMethodInvocation *invocation);
gboolean _paddock_session_impl_handle_get_diff           (PaddockIpcSession1    *session,
                                                          GDBusMethodInvocation *invocation,
                                                          const char            *path);
gboolean _paddock_session_impl_handle_apply              (PaddockIpcSession1    *session,
                                                          GDBusMethodInvocation *invocation,
                                                          const char *const     *paths,
                                                          const char *const     *force_paths);
gboolean _paddock_session_impl_handle_drop               (PaddockIpcSession1    *session,
                                                          GDBusMethodInvocation *invocation,
                                                          const char *const     *paths);
gboolean _paddock_session_impl_handle_create_checkpoint  (PaddockIpcSession1    *session,
                                                          GDBusMethodInvocation *invocation,
                                                          const char            *name);
gboolean _paddock_session_impl_handle_list_checkpoints   (PaddockIpcSession1    *session,
                                                          GDBusMethodInvocation *invocation);
gboolean _paddock_session_impl_handle_restore_checkpoint (PaddockIpcSession1    *session,
                                                          GDBusMethodInvocation *invocation,
                                                          const char            *name);

/* org.paddock.Session1's process methods (paddock-session-processes.c). */
gboolean _paddock_session_impl_handle_list_processes     (PaddockIpcSession1    *session,
                                                          GDBusMethodInvocation *invocation);
gboolean _paddock_session_impl_handle_kill_process       (PaddockIpcSession1    *session,
                                                          GDBusMethodInvocation *invocation,
                                                          guint                  pid,
                                                          guint                  signum);

G_END_DECLS
