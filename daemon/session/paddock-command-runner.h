/* paddock-command-runner.h — a session's Exec and Run: checked, started through its executor, answered
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <sys/types.h>

#include "paddock-cgroup.h"
#include "paddock-executor.h"
#include "paddock-session-commands.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_COMMAND_RUNNER (paddock_command_runner_get_type ())

G_DECLARE_FINAL_TYPE (PaddockCommandRunner, paddock_command_runner, PADDOCK, COMMAND_RUNNER, GObject)

PaddockCommandRunner *paddock_command_runner_new            (const char             *session_id,
                                                             const char             *session_path,
                                                             const char             *workspace,
                                                             PaddockSessionCommands *commands);
void                  paddock_command_runner_set_executor   (PaddockCommandRunner   *self,
                                                             PaddockExecutor        *executor);
gboolean              paddock_command_runner_start          (PaddockCommandRunner   *self,
                                                             GDBusConnection        *connection,
                                                             GDBusMethodInvocation  *invocation,
                                                             const char * const     *argv,
                                                             const char             *cwd,
                                                             GVariant               *env,
                                                             char                  **base_envp,
                                                             guint                   timeout_ms,
                                                             gboolean                tty,
                                                             PaddockCgroup          *cgroup,
                                                             int                     cgroup_procs_fd);
void                  paddock_command_runner_handle_event   (PaddockCommandRunner   *self,
                                                             GDBusConnection        *connection,
                                                             JsonObject             *event,
                                                             int                    *fd);
void                  paddock_command_runner_command_exited (PaddockCommandRunner   *self,
                                                             pid_t                   pid,
                                                             int                     wait_status);
void                  paddock_command_runner_fail_pending   (PaddockCommandRunner   *self);
void                  paddock_command_runner_expect_kill    (PaddockCommandRunner   *self);
void                  paddock_command_runner_sandbox_gone   (PaddockCommandRunner   *self);
void                  paddock_command_runner_quit           (PaddockCommandRunner   *self);
void                  paddock_command_runner_let_go         (PaddockCommandRunner   *self);
void                  paddock_command_runner_close          (PaddockCommandRunner   *self);

G_END_DECLS
