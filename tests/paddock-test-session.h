/* paddock-test-session.h — what the D-Bus session tests share: making a
 * session, and looking at its processes from outside
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>
#include <gio/gunixfdlist.h>

G_BEGIN_DECLS

char     *paddock_test_create_session (GDBusConnection  *connection,
                                       const char       *workspace,
                                       const char       *profile,
                                       const char       *script,
                                       GVariant         *extra,
                                       GError          **error);
void      paddock_test_create_session_async (GDBusConnection     *connection,
                                             const char          *workspace,
                                             const char          *profile,
                                             const char * const  *argv,
                                             GVariant            *extra,
                                             GUnixFDList         *fds,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
gboolean  paddock_test_pid_alive      (GPid              pid);
guint     paddock_test_count_marked   (const char       *marker);
void      paddock_test_wait_for_marked (const char      *marker,
                                        guint            count);

char     *paddock_test_create_session_or_skip (GDBusConnection *connection,
                                               const char      *workspace,
                                               const char      *profile,
                                               const char      *script,
                                               GVariant        *extra);
GVariant *paddock_test_session_property (GDBusConnection *connection,
                                         const char      *path,
                                         const char      *name);
GPid      paddock_test_session_main_pid (GDBusConnection *connection,
                                         const char      *path);
GPid      paddock_test_daemon_pid     (GDBusConnection  *connection);
guint     paddock_test_daemon_fd_count (GDBusConnection *connection);
GPid      paddock_test_wait_for_spare_sandbox (GDBusConnection *connection,
                                               GPid             not_this);

G_END_DECLS
