/* paddock-session-calls.h — what the session's stage calls share: who called, and its errors as D-Bus's
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Who called, as the bus tells it (uid, pid, comm), for the apply ledger. */
char   *paddock_session_describe_caller    (GDBusMethodInvocation *invocation);
/* The staging library's error domains (and GIO's) as org.paddock.Error.* */
GError *paddock_session_error_from_staging (const GError          *error);

G_END_DECLS
