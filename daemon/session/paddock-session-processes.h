/* paddock-session-processes.h — org.paddock.Session1's process list and kill
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-ipc-generated.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_SESSION_PROCESSES (paddock_session_processes_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionProcesses, paddock_session_processes, PADDOCK, SESSION_PROCESSES, GObject)

PaddockSessionProcesses *paddock_session_processes_new         (void);
gboolean                 paddock_session_processes_handle_list (PaddockSessionProcesses *self,
                                                                PaddockIpcSession1      *session,
                                                                GDBusMethodInvocation   *invocation);
gboolean                 paddock_session_processes_handle_kill (PaddockSessionProcesses *self,
                                                                PaddockIpcSession1      *session,
                                                                GDBusMethodInvocation   *invocation,
                                                                guint                    pid,
                                                                guint                    signum);

G_END_DECLS
