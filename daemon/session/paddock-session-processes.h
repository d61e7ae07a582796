/* paddock-session-processes.h — org.paddock.Session1's process list and kill
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-ipc-generated.h"
#include "paddock-session-gate.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_SESSION_PROCESSES (paddock_session_processes_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionProcesses, paddock_session_processes, PADDOCK, SESSION_PROCESSES, GObject)

PaddockSessionProcesses *paddock_session_processes_new         (PaddockSessionGate *gate);

void paddock_session_processes_attach (PaddockSessionProcesses *self,
                                      PaddockIpcSession1 *skeleton);

G_END_DECLS
