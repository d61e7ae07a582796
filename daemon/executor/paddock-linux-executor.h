/* paddock-linux-executor.h — a session's processes in a sandbox of paddock-sandbox's
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include "paddock-executor.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_LINUX_EXECUTOR (paddock_linux_executor_get_type ())

G_DECLARE_FINAL_TYPE (PaddockLinuxExecutor, paddock_linux_executor, PADDOCK, LINUX_EXECUTOR, GObject)

PaddockExecutor     *paddock_linux_executor_new         (void);
PaddockKeeperClient *paddock_linux_executor_adopt_agent (PaddockLinuxExecutor  *self,
                                                         const char            *session_id,
                                                         const char            *hold_dir,
                                                         pid_t                  keeper_pid,
                                                         int                    keeper_pidfd,
                                                         int                   *out_pty_master,
                                                         GError               **error);
void                 paddock_linux_executor_hold        (PaddockLinuxExecutor  *self);
gboolean             paddock_linux_executor_request_proxy (PaddockLinuxExecutor  *self,
                                                         GError               **error);

G_END_DECLS
