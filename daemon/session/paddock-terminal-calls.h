/* paddock-terminal-calls.h — Session1's terminal calls (Attach, ReadOutput, SendInput, Resize) answered from a PaddockTerminal
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-ipc-generated.h"
#include "paddock-terminal.h"

G_BEGIN_DECLS

/* Bounds on what one client can make the daemon hold or do. */
#define PADDOCK_TERMINAL_READ_OUTPUT_MAX (1024 * 1024)
#define PADDOCK_TERMINAL_SEND_INPUT_MAX  (64 * 1024)

/* Each answers INVOCATION, a call on SESSION, whose checks of its own
 * (whether the session may still be called) came first. */
void     paddock_terminal_calls_attach      (PaddockTerminal       *terminal,
                                             PaddockIpcSession1    *session,
                                             GDBusMethodInvocation *invocation,
                                             GVariant              *options);
void     paddock_terminal_calls_read_output (PaddockTerminal       *terminal,
                                             PaddockIpcSession1    *session,
                                             GDBusMethodInvocation *invocation,
                                             guint64                offset,
                                             guint                  max_bytes);
/* SESSION_ID names the session in the error of a terminal that hung up. */
void     paddock_terminal_calls_send_input  (PaddockTerminal       *terminal,
                                             PaddockIpcSession1    *session,
                                             GDBusMethodInvocation *invocation,
                                             const char            *session_id,
                                             GVariant              *data);
/* TRUE: the terminal has the new size (the caller keeps it too). */
gboolean paddock_terminal_calls_resize      (PaddockTerminal       *terminal,
                                             PaddockIpcSession1    *session,
                                             GDBusMethodInvocation *invocation,
                                             guint16                columns,
                                             guint16                rows);

G_END_DECLS
