/* paddock-session-calls.h — what the session's stage calls share: who called, and its errors as D-Bus's
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-ipc-generated.h"

G_BEGIN_DECLS

/* Who called, as the bus tells it (uid, pid, comm), for the apply ledger. */
char   *paddock_session_describe_caller    (GDBusMethodInvocation *invocation);
/* The staging library's error domains (and GIO's) as org.paddock.Error.* */
GError *paddock_session_error_from_staging (const GError          *error);

/* A component's handlers of the session skeleton's handle-* signals: it
 * answers those calls itself, and they go when it does. */
typedef struct
{
  PaddockIpcSession1 *skeleton;     /* weak: the session owns the component */
  GArray             *handler_ids;  /* gulong */
} PaddockSessionCallHandlers;

void paddock_session_call_handlers_connect (PaddockSessionCallHandlers *handlers,
                                            PaddockIpcSession1         *skeleton,
                                            const char                 *signal,
                                            GCallback                   callback,
                                            gpointer                    data);
void paddock_session_call_handlers_clear   (PaddockSessionCallHandlers *handlers);

G_END_DECLS
