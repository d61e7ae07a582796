/* paddock-terminal-calls.h — Session1's terminal calls (Attach, ReadOutput, SendInput, Resize) answered from a PaddockTerminal
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-ipc-generated.h"
#include "paddock-session-config.h"
#include "paddock-session-gate.h"
#include "paddock-terminal.h"

G_BEGIN_DECLS

/* Bounds on what one client can make the daemon hold or do. */
#define PADDOCK_TERMINAL_READ_OUTPUT_MAX (1024 * 1024)
#define PADDOCK_TERMINAL_SEND_INPUT_MAX  (64 * 1024)

#define PADDOCK_TYPE_TERMINAL_CALLS (paddock_terminal_calls_get_type ())

G_DECLARE_FINAL_TYPE (PaddockTerminalCalls, paddock_terminal_calls, PADDOCK, TERMINAL_CALLS, GObject)

/* SESSION_ID names the session in the error of a terminal that hung up;
 * CONFIG (the session's) keeps the window size Resize sets. */
PaddockTerminalCalls *paddock_terminal_calls_new    (const char           *session_id,
                                                     PaddockTerminal      *terminal,
                                                     PaddockSessionGate   *gate,
                                                     PaddockSessionConfig *config);
void                  paddock_terminal_calls_attach (PaddockTerminalCalls *self,
                                                     PaddockIpcSession1   *skeleton);

G_END_DECLS
