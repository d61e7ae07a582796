/* paddock-systemd-scope.h — a delegated cgroup asked of the systemd user manager
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* How long the daemon's start waits for the user manager at most. */
#define PADDOCK_SYSTEMD_SCOPE_TIMEOUT_MS 5000

/* The leaf the daemon moves itself into inside its scope; the sessions'
 * cgroups are its siblings. */
#define PADDOCK_SYSTEMD_SCOPE_DAEMON_LEAF "paddockd"

void  paddock_systemd_scope_request_async  (GDBusConnection      *connection,
                                            guint                 timeout_ms,
                                            GCancellable         *cancellable,
                                            GAsyncReadyCallback   callback,
                                            gpointer              user_data);
char *paddock_systemd_scope_request_finish (GAsyncResult         *result,
                                            GError              **error);

G_END_DECLS
