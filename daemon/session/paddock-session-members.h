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

/* What a session knows of its agent's tree of processes: kept by its
 * PaddockSessionProcess, and read back from a record by a restore
 * (paddock-session-restore.c); found, listed and signalled alike, through
 * paddock_session_members_of(). */
typedef struct
{
  /* The agent (host) or the helper (sandbox), and what tells whether a
   * recorded pid is still the same process. */
  pid_t                   pid;
  guint64                 pid_start_time;
  gboolean                reaped;
  gboolean                sandboxed;
  /* Set once the agent's own process session (host profile: sid = its
   * pid) is known to be over; see agent_session_may_live(). */
  gboolean                agent_session_gone;
  PaddockSandboxPidns     pidns;                 /* sandbox: its PID namespace, pid 1 */
  /* A keeper an earlier daemon left (0: none), pinned by its pidfd. */
  pid_t                   leftover_keeper;
  int                     leftover_keeper_pidfd;
} PaddockSessionTree;

#define PADDOCK_SESSION_TREE_INIT { .leftover_keeper_pidfd = -1 }

void paddock_session_tree_clear (PaddockSessionTree *tree);
/* Moves SRC into DEST (cleared first); SRC is left empty. */
void paddock_session_tree_move  (PaddockSessionTree *dest,
                                 PaddockSessionTree *src);

/* What a session's processes are found by, borrowed from it for one call
 * (built in one place: paddock_session_members_of()). */
typedef struct
{
  PaddockExecutor        *executor;              /* NULL before start */
  PaddockCgroup          *cgroup;                /* NULL: none */
  /* In and out: a listing may find the agent's process session over
   * (agent_session_gone). */
  PaddockSessionTree     *tree;
  PaddockSessionCommands *commands;
} PaddockSessionMembers;

PaddockSessionMembers paddock_session_members_of (PaddockSessionTree     *tree,
                                                  PaddockExecutor        *executor,
                                                  PaddockCgroup          *cgroup,
                                                  PaddockSessionCommands *commands);


gboolean paddock_session_members_keepers_running (const PaddockSessionMembers *members);
GArray  *paddock_session_members_list            (PaddockSessionMembers       *members);
void     paddock_session_members_signal_all      (PaddockSessionMembers       *members,
                                                  int                          signum,
                                                  GArray                      *listed);

G_END_DECLS
