/* paddock-sandbox-pidns.h — a sandbox's PID namespace as the host sees it: found, listed
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

/* What is known of one sandbox's PID namespace: kept by its owner (the
 * session), filled in by paddock_sandbox_pidns_find() once the helper's
 * pid 1 exists. Zeroed: nothing known yet. */
typedef struct
{
  char    *name;             /* "pid:[inode]" once known */
  /* The sandbox's pid 1 as the host sees it, once known: its exit comes
   * only after every other process of the namespace is gone. */
  pid_t    init_pid;
  guint64  init_start_time;
} PaddockSandboxPidns;

const char *paddock_sandbox_pidns_find  (PaddockSandboxPidns *pidns,
                                         pid_t                helper_pid);
GArray     *paddock_sandbox_pidns_list  (PaddockSandboxPidns *pidns,
                                         pid_t                helper_pid,
                                         gboolean             helper_reaped);
void        paddock_sandbox_pidns_clear (PaddockSandboxPidns *pidns);

G_END_DECLS
