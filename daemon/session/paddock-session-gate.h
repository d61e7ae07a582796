/* paddock-session-gate.h — what a session's parts ask of it: whether it may be called, runs, is busy; its processes held still, listed
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define PADDOCK_TYPE_SESSION_GATE (paddock_session_gate_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionGate, paddock_session_gate, PADDOCK, SESSION_GATE, GObject)

PaddockSessionGate *paddock_session_gate_new           (const char            *session_id);
/* The session is destroyed: from now on every call is answered NotFound. */
void                paddock_session_gate_set_destroyed (PaddockSessionGate    *self);
/* FALSE, INVOCATION answered NotFound, once the session is destroyed. */
gboolean            paddock_session_gate_check_alive   (PaddockSessionGate    *self,
                                                        GDBusMethodInvocation *invocation);
/* TRUE when the session answered INVOCATION itself (Busy): it cannot take
 * a call that needs it running now. */
gboolean            paddock_session_gate_refuse        (PaddockSessionGate    *self,
                                                        GDBusMethodInvocation *invocation);
/* Whether any process of the session may still run. */
gboolean            paddock_session_gate_is_live       (PaddockSessionGate    *self);
/* Its processes held still (TRUE) or let go at once, by its cgroup's
 * freezer; FALSE when it has nothing to freeze with, or nothing to freeze. */
gboolean            paddock_session_gate_freeze        (PaddockSessionGate    *self,
                                                        gboolean               frozen);
/* Every process of the session now (pid_t); never NULL. */
GArray             *paddock_session_gate_list_pids     (PaddockSessionGate    *self);

G_END_DECLS
