/* paddock-session-members.h — which processes are a session's now: its keepers, its process sessions, a signal to all
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>
#include <sys/types.h>

#include "paddock-cgroup.h"
#include "paddock-executor.h"
#include "paddock-sandbox-pidns.h"
#include "paddock-session-commands.h"

G_BEGIN_DECLS

/* What a session's processes are found by, borrowed from it for one call
 * (built in one place: paddock_session_impl_members()). */
typedef struct
{
  PaddockExecutor        *executor;              /* NULL before start */
  /* A keeper an earlier daemon left (0: none), pinned by its pidfd. */
  pid_t                   leftover_keeper;
  int                     leftover_keeper_pidfd;
  PaddockCgroup          *cgroup;                /* NULL: none */
  gboolean                sandboxed;
  PaddockSandboxPidns    *pidns;
  pid_t                   pid;                   /* the agent (host) or the helper (sandbox) */
  guint64                 pid_start_time;
  gboolean                reaped;
  /* In and out: the agent's process session is known to be over (a
   * listing may find so; the caller keeps it). */
  gboolean                agent_session_gone;
  PaddockSessionCommands *commands;
} PaddockSessionMembers;

gboolean paddock_session_members_keepers_running (const PaddockSessionMembers *members);
GArray  *paddock_session_members_list            (PaddockSessionMembers       *members);
void     paddock_session_members_signal_all      (PaddockSessionMembers       *members,
                                                  int                          signum,
                                                  GArray                      *listed);

G_END_DECLS
