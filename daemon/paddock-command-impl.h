/* paddock-command-impl.h — org.paddock.Command1: an extra command run in a session
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include "paddock-ipc-generated.h"

G_BEGIN_DECLS

#define PADDOCK_COMMAND_MAX_TIMEOUT_MS (24u * 60 * 60 * 1000)

#define PADDOCK_TYPE_COMMAND_IMPL (paddock_command_impl_get_type ())

G_DECLARE_FINAL_TYPE (PaddockCommandImpl, paddock_command_impl, PADDOCK, COMMAND_IMPL, PaddockIpcCommand1Skeleton)

PaddockCommandImpl *paddock_command_impl_new            (GDBusConnection     *connection,
                                                         const char          *object_path,
                                                         guint32              id,
                                                         const char          *caller,
                                                         gboolean             tty,
                                                         guint                timeout_ms);
gboolean            paddock_command_impl_prepare        (PaddockCommandImpl  *self,
                                                         int                 *out_stdin,
                                                         int                 *out_stdout,
                                                         int                 *out_stderr,
                                                         GError             **error);
gboolean            paddock_command_impl_adopt_terminal (PaddockCommandImpl  *self,
                                                         int                  master,
                                                         GError             **error);
gboolean            paddock_command_impl_needs_terminal (PaddockCommandImpl  *self);
void                paddock_command_impl_started        (PaddockCommandImpl  *self,
                                                         GPid                 host_pid);
void                paddock_command_impl_exited         (PaddockCommandImpl  *self,
                                                         int                  exit_status,
                                                         int                  signal_number);
void                paddock_command_impl_kill           (PaddockCommandImpl  *self,
                                                         int                  signal_number,
                                                         const char          *reason);
void                paddock_command_impl_expect_kill    (PaddockCommandImpl  *self);
gboolean            paddock_command_impl_check_run_options (GVariant     *options,
                                                            GError      **error);
void                paddock_command_impl_answer_when_done (PaddockCommandImpl    *self,
                                                           GDBusMethodInvocation *invocation);
void                paddock_command_impl_answer_run_quitting (PaddockCommandImpl *self);
guint32             paddock_command_impl_get_id         (PaddockCommandImpl  *self);
const char         *paddock_command_impl_get_caller     (PaddockCommandImpl  *self);
const char         *paddock_command_impl_get_object_path (PaddockCommandImpl *self);
gboolean            paddock_command_impl_is_running     (PaddockCommandImpl  *self);

G_END_DECLS
