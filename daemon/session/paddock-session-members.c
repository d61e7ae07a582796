/* paddock-session-members.c — which processes are a session's now: its keepers, its process sessions, a signal to all
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A session's processes as its executor finds them
 * (paddock_executor_list_members()), with what only the session knows:
 * which process sessions are its own (the agent's, while it may still
 * have members, and each host command's), and its keepers. It reads the
 * session's tree (PaddockSessionTree: its PaddockSessionProcess's, or a
 * restore's) and never calls into the session; what it learns (the
 * agent's process session is over) goes back in that tree.
 */

#include "config.h"

#include <poll.h>
#include <signal.h>

#include "paddock-autofd.h"
#include "paddock-compat-proc.h"
#include "paddock-session-members.h"

void
paddock_session_tree_clear (PaddockSessionTree *tree)
{
  paddock_sandbox_pidns_clear (&tree->pidns);
  paddock_close_fd (&tree->leftover_keeper_pidfd);
  *tree = (PaddockSessionTree) PADDOCK_SESSION_TREE_INIT;
}

void
paddock_session_tree_move (PaddockSessionTree *dest,
                           PaddockSessionTree *src)
{
  paddock_session_tree_clear (dest);
  *dest = *src;
  *src = (PaddockSessionTree) PADDOCK_SESSION_TREE_INIT;
}

PaddockSessionMembers
paddock_session_members_of (PaddockSessionTree     *tree,
                            PaddockExecutor        *executor,
                            PaddockCgroup          *cgroup,
                            PaddockSessionCommands *commands)
{
  return (PaddockSessionMembers) {
    .executor = executor,
    .cgroup = cgroup,
    .tree = tree,
    .commands = commands,
  };
}

/* The pids of the session's keepers that run: its executor's (unreaped
 * children of ours), and one an earlier daemon left. */
static GArray *
keeper_pids (const PaddockSessionMembers *self)
{
  GArray *pids = self->executor != NULL ? paddock_executor_helper_pids (self->executor)
                                        : g_array_new (FALSE, FALSE, sizeof (pid_t));

  /* Not ours to reap, so only while its pidfd says it runs (a keeper
   * exits once its tree is empty: one gone meanwhile has no descendant
   * left for a stranger with its pid to be mistaken for). */
  if (self->tree->leftover_keeper > 0 &&
      poll (&(struct pollfd) { .fd = self->tree->leftover_keeper_pidfd, .events = POLLIN }, 1, 0) == 0)
    g_array_append_val (pids, self->tree->leftover_keeper);
  return pids;
}

/* Whether a keeper of the session still runs: it ends right after its
 * tree, and the session's cgroup can go only once it has. */
gboolean
paddock_session_members_keepers_running (const PaddockSessionMembers *self)
{
  g_autoptr(GArray) pids = keeper_pids (self);

  return pids->len > 0;
}

/* Every keeper of the session ends its whole tree and then itself. */
static void
kill_keepers (const PaddockSessionMembers *self)
{
  if (self->executor != NULL)
    paddock_executor_kill_helpers (self->executor);
}

/* Whether the agent's process session (the host profile's: sid = the
 * agent's pid) may still have members. Once the agent is reaped, only
 * they keep its pid number taken; when the last one goes, the kernel may
 * hand that number to a stranger that leads a session of its own, and a
 * scan by that sid (Stop, Destroy, the daemon's shutdown) would signal
 * the stranger's processes. The number changed hands when a process has
 * it that did not start when our agent did; and a scan that finds no
 * member after the reap means the session is over for good. */
static gboolean
agent_session_may_live (PaddockSessionMembers *self)
{
  guint64 start_time;

  if (self->tree->pid <= 0 || self->tree->agent_session_gone)
    return FALSE;
  if (!self->tree->reaped)
    return TRUE;

  start_time = paddock_compat_proc_start_time ((guint32) self->tree->pid);
  if (start_time != 0 && start_time != self->tree->pid_start_time)
    self->tree->agent_session_gone = TRUE;
  return !self->tree->agent_session_gone;
}

/* Every process of the session now, as its executor finds them
 * (paddock_executor_list_members()). */
GArray *
paddock_session_members_list (PaddockSessionMembers *self)
{
  g_autoptr(GHashTable) sids = g_hash_table_new (NULL, NULL);
  g_autoptr(GArray) keepers = keeper_pids (self);
  PaddockExecutorMembers members = {
    .cgroup = self->cgroup,
    .keepers = keepers,
    .sandboxed = self->tree->sandboxed,
    .pidns = &self->tree->pidns,
    .pid = self->tree->pid,
    .reaped = self->tree->reaped,
    .sids = sids,
  };
  gboolean agent_session_seen = FALSE;
  GArray *pids;

  /* The agent's process session, and those of the commands exec'd beside
   * it (each the leader of its own): only the host's are looked for. */
  if (self->cgroup == NULL && !self->tree->sandboxed)
    {
      g_autoptr(GArray) command_pids = paddock_session_commands_dup_pids (self->commands, 0);

      if (agent_session_may_live (self))
        g_hash_table_add (sids, GINT_TO_POINTER (self->tree->pid));
      for (guint i = 0; i < command_pids->len; i++)
        g_hash_table_add (sids, GINT_TO_POINTER (g_array_index (command_pids, pid_t, i)));
    }
  pids = paddock_executor_list_members (&members, &agent_session_seen);
  if (self->cgroup == NULL && !self->tree->sandboxed && self->tree->reaped && !agent_session_seen)
    self->tree->agent_session_gone = TRUE;
  return pids;
}

/* @listed: the session's pids as just listed by the caller, or NULL to
 * list them here (not needed for a SIGKILL through the cgroup). */
void
paddock_session_members_signal_all (PaddockSessionMembers *self,
                                    int                    signum,
                                    GArray                *listed)
{
  g_autoptr(GArray) pids = NULL;

  /* The keepers' own loop kills by the pids of their unreaped children,
   * which no stranger can have, and reaps all of it. In a cgroup that is
   * all while they run: cgroup.kill would take the keepers too, and hand
   * whatever they had not reaped yet to init, whose zombies outlive the
   * answer. Once none runs, cgroup.kill takes anything no keeper held
   * (Stop's poll comes back every 10 ms); the kills below by a listing
   * are for that too, without a cgroup. */
  if (signum == SIGKILL)
    kill_keepers (self);
  if (self->cgroup != NULL && signum == SIGKILL)
    {
      if (!paddock_session_members_keepers_running (self))
        paddock_cgroup_kill (self->cgroup);
      return;
    }

  if (listed == NULL)
    listed = pids = paddock_session_members_list (self);

  for (guint i = 0; i < listed->len; i++)
    kill (g_array_index (listed, pid_t, i), signum);
}
