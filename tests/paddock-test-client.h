/* paddock-test-client.h — the daemon as the tests and benches call it:
 * the generated proxies, one create-session, properties, destroy, lease,
 * and one way to fail (a test asserts, a bench destroys what it made)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>
#include <gio/gunixfdlist.h>

#include "paddock-ipc-generated.h"

G_BEGIN_DECLS

/* What a helper does when the daemon fails it. */
typedef enum {
  /* A test: the failure fails the test (g_error, with the D-Bus error). */
  PADDOCK_TEST_FAIL_ASSERT,
  /* A bench: the sessions made through this library are destroyed, the
   * bench's own cleanups run, the message goes to stderr, exit(1). */
  PADDOCK_TEST_FAIL_BAIL,
} PaddockTestFailMode;

void                paddock_test_set_fail_mode    (PaddockTestFailMode  mode,
                                                   const char          *program);
void                paddock_test_on_bail          (GDestroyNotify       cleanup,
                                                   gpointer             data);
void                paddock_test_bail             (const char          *format,
                                                   ...) G_GNUC_PRINTF (1, 2) G_GNUC_NORETURN;
void                paddock_test_destroy_made     (void);

PaddockIpcManager1 *paddock_test_manager          (GDBusConnection     *connection);
PaddockIpcPorts1   *paddock_test_ports            (GDBusConnection     *connection);
PaddockIpcSession1 *paddock_test_session          (GDBusConnection     *connection,
                                                   const char          *path);
PaddockIpcCommand1 *paddock_test_command          (GDBusConnection     *connection,
                                                   const char          *path);
GVariant           *paddock_test_command_call     (PaddockIpcSession1  *session,
                                                   const char          *path,
                                                   const char          *method,
                                                   GVariant            *parameters,
                                                   GError             **error);

GVariant           *paddock_test_session_options  (const char          *workspace,
                                                   const char          *profile,
                                                   const char * const  *argv,
                                                   GVariant            *extra);
char               *paddock_test_create_session_argv (GDBusConnection  *connection,
                                                   const char          *workspace,
                                                   const char          *profile,
                                                   const char * const  *argv,
                                                   GVariant            *extra,
                                                   GError             **error);
char               *paddock_test_create_session   (GDBusConnection     *connection,
                                                   const char          *workspace,
                                                   const char          *profile,
                                                   const char          *script,
                                                   GVariant            *extra,
                                                   GError             **error);
char               *paddock_test_create_session_or_fail (GDBusConnection *connection,
                                                   const char          *workspace,
                                                   const char          *profile,
                                                   const char * const  *argv,
                                                   GVariant            *extra);
char               *paddock_test_create_session_or_skip (GDBusConnection *connection,
                                                   const char          *workspace,
                                                   const char          *profile,
                                                   const char          *script,
                                                   GVariant            *extra);
void                paddock_test_create_session_async (GDBusConnection *connection,
                                                   const char          *workspace,
                                                   const char          *profile,
                                                   const char * const  *argv,
                                                   GVariant            *extra,
                                                   GUnixFDList         *fds,
                                                   GAsyncReadyCallback  callback,
                                                   gpointer             user_data);
char               *paddock_test_create_session_finish (GAsyncResult   *result,
                                                   GError             **error);
GVariant           *paddock_test_list_sessions    (GDBusConnection     *connection);
void                paddock_test_track_session    (GDBusConnection     *connection,
                                                   const char          *path);

GVariant           *paddock_test_read_property    (GDBusProxy          *proxy,
                                                   const char          *name,
                                                   GError             **error);
GVariant           *paddock_test_session_property (GDBusConnection     *connection,
                                                   const char          *path,
                                                   const char          *name);
GVariant           *paddock_test_command_property (GDBusConnection     *connection,
                                                   const char          *path,
                                                   const char          *name);
GPid                paddock_test_session_main_pid (GDBusConnection     *connection,
                                                   const char          *path);
gboolean            paddock_test_destroy_session  (GDBusConnection     *connection,
                                                   const char          *path,
                                                   GVariant           **out_result,
                                                   GError             **error);
void                paddock_test_destroy_or_fail  (GDBusConnection     *connection,
                                                   const char          *path);

int                 paddock_test_attach           (GDBusConnection     *connection,
                                                   const char          *path,
                                                   GVariant            *options,
                                                   guint64             *out_first_offset,
                                                   GError             **error);

GVariant           *paddock_test_lease            (GDBusConnection     *connection,
                                                   const char          *name,
                                                   guint16              preferred,
                                                   GVariant            *options,
                                                   int                 *out_fd,
                                                   GError             **error);
GVariant           *paddock_test_lease_many       (GDBusConnection     *connection,
                                                   const char          *name,
                                                   guint                count,
                                                   GUnixFDList        **out_fds,
                                                   GError             **error);
gboolean            paddock_test_release          (GDBusConnection     *connection,
                                                   guint16              port,
                                                   GError             **error);
GVariant           *paddock_test_list_leases      (GDBusConnection     *connection);

G_END_DECLS
