/* paddock-test-daemon.h — a private bus with paddockd from the build tree
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _PaddockTestDaemon PaddockTestDaemon;

PaddockTestDaemon *paddock_test_daemon_new            (const char * const *extra_args);
PaddockTestDaemon *paddock_test_daemon_new_activatable (void);
void               paddock_test_daemon_start          (PaddockTestDaemon  *self);
void               paddock_test_daemon_stop           (PaddockTestDaemon  *self);
void               paddock_test_daemon_kill           (PaddockTestDaemon  *self);
void               paddock_test_daemon_kill_keeping_sessions (PaddockTestDaemon  *self);
void               paddock_test_daemon_restart_bus    (PaddockTestDaemon  *self);
GSubprocess       *paddock_test_daemon_spawn_replacement (PaddockTestDaemon *self);
void               paddock_test_daemon_adopt          (PaddockTestDaemon  *self,
                                                       GSubprocess        *process);
gboolean           paddock_test_daemon_is_running     (PaddockTestDaemon  *self);
GDBusConnection   *paddock_test_daemon_get_connection (PaddockTestDaemon  *self);
GVariant          *paddock_test_call                  (GDBusConnection    *connection,
                                                       const char         *path,
                                                       const char         *interface,
                                                       const char         *method,
                                                       GVariant           *parameters,
                                                       const GVariantType *reply_type,
                                                       GError            **error);
GDBusConnection   *paddock_test_daemon_new_connection (PaddockTestDaemon  *self);
const char        *paddock_test_daemon_get_address    (PaddockTestDaemon  *self);
const char        *paddock_test_daemon_get_state_dir  (PaddockTestDaemon  *self);
guint16            paddock_test_daemon_get_first_port (PaddockTestDaemon  *self);
guint16            paddock_test_daemon_get_last_port  (PaddockTestDaemon  *self);
char              *paddock_test_port_range_new        (guint               size,
                                                       guint16            *first,
                                                       guint16            *last);
char              *paddock_test_build_path            (const char         *first_element,
                                                       ...) G_GNUC_NULL_TERMINATED;
void               paddock_test_daemon_free           (PaddockTestDaemon  *self);
gboolean           paddock_test_have_sandbox          (void);
gboolean           paddock_test_wait_for              (gboolean          (*condition) (gpointer),
                                                       gpointer            data,
                                                       guint               timeout_ms);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PaddockTestDaemon, paddock_test_daemon_free)

G_END_DECLS
