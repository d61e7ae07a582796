/* paddock-test-session.h — what the D-Bus session tests share: a
 * session's processes (and the daemon's) looked at from outside
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>
#include <gio/gunixfdlist.h>

#include "paddock-test-client.h"

G_BEGIN_DECLS

gboolean  paddock_test_pid_alive      (GPid              pid);
GPid      paddock_test_namespace_pid  (GPid              pid);
guint     paddock_test_count_marked   (const char       *marker);
void      paddock_test_wait_for_marked (const char      *marker,
                                        guint            count);

GPid      paddock_test_daemon_pid     (GDBusConnection  *connection);
guint     paddock_test_daemon_fd_count (GDBusConnection *connection);
GPid      paddock_test_wait_for_spare_sandbox (GDBusConnection *connection,
                                               GPid             not_this);

G_END_DECLS
