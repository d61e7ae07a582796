/* paddock-session-commands.h — a session's Exec/Run table: ids, quotas, pending calls, deadlines, callers
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>
#include <sys/types.h>

#include "paddock-command-impl.h"

G_BEGIN_DECLS

/* Bounds on what one client can make a session hold: commands running at
 * once per client, and command objects kept (finished ones until they
 * are released). */
#define PADDOCK_SESSION_MAX_COMMANDS_PER_CLIENT 16
#define PADDOCK_SESSION_MAX_COMMANDS_KEPT       256

#define PADDOCK_TYPE_SESSION_COMMANDS (paddock_session_commands_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionCommands, paddock_session_commands, PADDOCK, SESSION_COMMANDS, GObject)

PaddockSessionCommands *paddock_session_commands_new            (void);
guint                   paddock_session_commands_get_spawn_deadline_ms (void);

guint32             paddock_session_commands_next_id         (PaddockSessionCommands *self);
gboolean            paddock_session_commands_check_quota     (PaddockSessionCommands *self,
                                                              const char             *caller,
                                                              GError                **error);
void                paddock_session_commands_add             (PaddockSessionCommands *self,
                                                              PaddockCommandImpl     *command);
void                paddock_session_commands_remove          (PaddockSessionCommands *self,
                                                              guint32                 id);
PaddockCommandImpl *paddock_session_commands_lookup          (PaddockSessionCommands *self,
                                                              guint32                 id);
GPtrArray          *paddock_session_commands_dup_all         (PaddockSessionCommands *self);

void                paddock_session_commands_add_pid         (PaddockSessionCommands *self,
                                                              pid_t                   pid,
                                                              guint32                 id);
guint32             paddock_session_commands_take_pid        (PaddockSessionCommands *self,
                                                              pid_t                   pid);
GArray             *paddock_session_commands_dup_pids        (PaddockSessionCommands *self,
                                                              guint32                 id);

void                paddock_session_commands_add_pending     (PaddockSessionCommands *self,
                                                              guint32                 id,
                                                              GDBusMethodInvocation  *invocation);
GDBusMethodInvocation *paddock_session_commands_get_pending  (PaddockSessionCommands *self,
                                                              guint32                 id);
GDBusMethodInvocation *paddock_session_commands_steal_pending (PaddockSessionCommands *self,
                                                              guint32                 id);
void                paddock_session_commands_fail_pending    (PaddockSessionCommands *self,
                                                              const GError           *error);

void                paddock_session_commands_watch_caller    (PaddockSessionCommands *self,
                                                              GDBusConnection        *connection,
                                                              const char             *caller);
void                paddock_session_commands_unwatch_callers (PaddockSessionCommands *self);

G_END_DECLS
