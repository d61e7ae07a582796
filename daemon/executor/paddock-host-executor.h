/* paddock-host-executor.h — a session's processes as the user, under keepers
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include "paddock-executor.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_HOST_EXECUTOR (paddock_host_executor_get_type ())

G_DECLARE_FINAL_TYPE (PaddockHostExecutor, paddock_host_executor, PADDOCK, HOST_EXECUTOR, GObject)

PaddockExecutor     *paddock_host_executor_new         (void);
PaddockKeeperClient *paddock_host_executor_adopt_agent (PaddockHostExecutor  *self,
                                                        const char           *hold_dir,
                                                        pid_t                 keeper_pid,
                                                        int                   keeper_pidfd,
                                                        int                  *out_pty_master,
                                                        GError              **error);
void                 paddock_host_executor_hold        (PaddockHostExecutor  *self);

G_END_DECLS
