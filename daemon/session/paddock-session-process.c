/* paddock-session-process.c — a session's processes: its executor, agent, keepers, cgroup; counted, signalled, ended
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * What the session knows of its processes, and the one place that finds
 * them (paddock-session-members.c), signals them, counts them once a
 * second and lets their cgroup go once they are gone. It reports upward:
 * "exited" (the agent, or a sandbox's helper, ended: reaped),
 * "counted" (how many run, every second while any may) and "gone" (the
 * last one went, the agent reaped and its keepers ended after their
 * trees). It knows nothing of the session object.
 */

#include "config.h"

#include <signal.h>

#include "paddock-autofd.h"
#include "paddock-compat-proc.h"
#include "paddock-error.h"
#include "paddock-host-executor.h"
#include "paddock-keeper-client.h"
#include "paddock-linux-executor.h"
#include "paddock-session-leftovers.h"
#include "paddock-session-members.h"
#include "paddock-session-process.h"

#define PROCESS_COUNT_MS 1000

struct _PaddockSessionProcess
{
  GObject                 parent_instance;

  /* The session's Exec table, whose host pids are its members too. */
  PaddockSessionCommands *commands;

  /* host: the agent, leader of its own session. safe: paddock-sandbox,
   * the supervisor outside the sandbox whose pid 1 runs the agent; and
   * what else finds its processes (paddock-session-members.h), a
   * restored host session's keeper an earlier daemon left running among
   * them. */
  PaddockSessionTree      tree;
  /* Where and how its processes run (daemon/executor/), from start(). */
  PaddockExecutor        *executor;
  /* host: the agent's keeper, and each host command's (until each is
   * reaped): every descendant of theirs is the session's, setsid()ed or
   * double-forked (daemon/keeper/). */
  PaddockKeeperClient    *keeper;            /* the executor's */
  /* The session's own cgroup v2, joined before its first process existed;
   * NULL where none can be made (cgroup_reason says why). */
  PaddockCgroup          *cgroup;
  char                   *cgroup_reason;
  /* Resource limits on that cgroup: asked of the kernel when a controller
   * was available (resources_requested), and why one is not in place. */
  gboolean                resources_requested;
  char                   *resources_reason;
  int                     cgroup_procs_fd;

  guint                   process_count_id;
};

enum {
  SIGNAL_EXITED,
  SIGNAL_COUNTED,
  SIGNAL_GONE,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (PaddockSessionProcess, paddock_session_process, G_TYPE_OBJECT)

/* What the session's processes are found by, as it is now
 * (paddock-session-members.c). */
static PaddockSessionMembers
paddock_session_process_members (PaddockSessionProcess *self)
{
  return paddock_session_members_of (&self->tree, self->executor, self->cgroup, self->commands);
}

/* Whether a keeper of the session still runs: it ends right after its
 * tree, and the session's cgroup can go only once it has. */
static gboolean
keepers_running (PaddockSessionProcess *self)
{
  PaddockSessionMembers members = paddock_session_process_members (self);

  return paddock_session_members_keepers_running (&members);
}

/* Every process of the session now. */
GArray *
paddock_session_process_list_pids (PaddockSessionProcess *self)
{
  PaddockSessionMembers members = paddock_session_process_members (self);

  return paddock_session_members_list (&members);
}

guint
paddock_session_process_count (PaddockSessionProcess *self)
{
  g_autoptr(GArray) pids = paddock_session_process_list_pids (self);

  return pids->len;
}

/* @listed: the session's pids as just listed by the caller, or NULL to
 * list them here (not needed for a SIGKILL through the cgroup). */
void
paddock_session_process_signal_all (PaddockSessionProcess *self,
                                    int                    signum,
                                    GArray                *listed)
{
  PaddockSessionMembers members = paddock_session_process_members (self);

  paddock_session_members_signal_all (&members, signum, listed);
}

/* The session's last process is gone: its cgroup goes too. */
void
paddock_session_process_release_cgroup (PaddockSessionProcess *self)
{
  if (self->cgroup != NULL && paddock_cgroup_remove (self->cgroup))
    {
      g_clear_pointer (&self->cgroup, paddock_cgroup_free);
      paddock_close_fd (&self->cgroup_procs_fd);
    }
}

static gboolean
paddock_session_process_count_cb (gpointer user_data)
{
  PaddockSessionProcess *self = user_data;
  g_autoptr(PaddockSessionProcess) hold = g_object_ref (self);
  guint count = paddock_session_process_count (self);

  g_signal_emit (self, signals[SIGNAL_COUNTED], 0, count);
  if (count == 0 && self->tree.reaped && !keepers_running (self))
    {
      self->process_count_id = 0;
      paddock_session_process_release_cgroup (self);
      g_signal_emit (self, signals[SIGNAL_GONE], 0);
      return G_SOURCE_REMOVE;
    }

  return G_SOURCE_CONTINUE;
}

static void
paddock_session_process_start_counting (PaddockSessionProcess *self)
{
  g_clear_handle_id (&self->process_count_id, g_source_remove);
  self->process_count_id = g_timeout_add (PROCESS_COUNT_MS, paddock_session_process_count_cb, self);
}

gboolean
paddock_session_process_sweep (PaddockSessionProcess *self,
                               gboolean               kill,
                               guint                 *left)
{
  g_autoptr(GArray) pids = paddock_session_process_list_pids (self);
  gboolean gone = pids->len == 0 && (self->tree.reaped || self->tree.pid <= 0) && !keepers_running (self);

  *left = pids->len;
  if (gone)
    paddock_session_process_release_cgroup (self);
  else if (kill)
    paddock_session_process_signal_all (self, SIGKILL, pids);
  return gone;
}

/* The session is destroyed: no command joins its cgroup any more, which
 * goes now if it is empty. */
void
paddock_session_process_end (PaddockSessionProcess *self)
{
  g_return_if_fail (PADDOCK_IS_SESSION_PROCESS (self));

  paddock_close_fd (&self->cgroup_procs_fd);
  paddock_session_process_release_cgroup (self);
}

/* The daemon is going: wait (briefly) for the kernel to empty the
 * cgroup, so that it can go too rather than linger; the keepers end
 * their trees meanwhile (no main loop will see them go), and what is
 * left at half time goes by cgroup.kill. */
void
paddock_session_process_wait_cgroup_gone (PaddockSessionProcess *self)
{
  gint64 deadline = g_get_monotonic_time () + G_USEC_PER_SEC;

  g_return_if_fail (PADDOCK_IS_SESSION_PROCESS (self));

  while (self->cgroup != NULL && g_get_monotonic_time () < deadline)
    {
      paddock_session_process_release_cgroup (self);
      if (self->cgroup != NULL && g_get_monotonic_time () > deadline - G_USEC_PER_SEC / 2)
        paddock_cgroup_kill (self->cgroup);
      if (self->cgroup != NULL)
        g_usleep (5 * 1000);
    }
}

/* The agent (host) or the sandbox's helper ended, as its executor saw. */
static void
paddock_session_process_exited_cb (PaddockExecutor       *executor,
                                   int                    wait_status,
                                   PaddockSessionProcess *self)
{
  g_autoptr(PaddockSessionProcess) hold = g_object_ref (self);

  self->tree.reaped = TRUE;
  g_signal_emit (self, signals[SIGNAL_EXITED], 0, wait_status);
}

static void
paddock_session_process_clear_executor (PaddockSessionProcess *self)
{
  /* A keeper let go (with the executor) runs on with whatever is left of
   * its tree (the daemon's shutdown ended it already: kill_now()). */
  self->keeper = NULL;
  if (self->executor != NULL)
    g_signal_handlers_disconnect_by_data (self->executor, self);
  g_clear_object (&self->executor);
}

void
paddock_session_process_set_executor (PaddockSessionProcess *self,
                                      PaddockExecutor       *executor)
{
  g_return_if_fail (PADDOCK_IS_SESSION_PROCESS (self));

  paddock_session_process_clear_executor (self);
  self->executor = executor;
  if (executor != NULL)
    g_signal_connect (executor, "exited", G_CALLBACK (paddock_session_process_exited_cb), self);
}

PaddockExecutor *
paddock_session_process_get_executor (PaddockSessionProcess *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_PROCESS (self), NULL);

  return self->executor;
}

void
paddock_session_process_take_agent (PaddockSessionProcess *self,
                                    PaddockExecutorAgent  *agent,
                                    gboolean               sandboxed)
{
  g_return_if_fail (PADDOCK_IS_SESSION_PROCESS (self));

  self->cgroup = g_steal_pointer (&agent->cgroup);
  self->cgroup_procs_fd = paddock_steal_fd (&agent->cgroup_procs_fd);
  g_free (self->cgroup_reason);
  self->cgroup_reason = g_steal_pointer (&agent->cgroup_reason);
  self->resources_requested = agent->resources_requested;
  g_free (self->resources_reason);
  self->resources_reason = g_steal_pointer (&agent->resources_reason);
  self->keeper = agent->keeper;
  self->tree.pid = agent->pid;
  self->tree.pid_start_time = agent->start_time;
  self->tree.sandboxed = sandboxed;
  paddock_session_process_start_counting (self);
}

PaddockKeeperClient *
paddock_session_process_adopt (PaddockSessionProcess  *self,
                               const char             *session_id,
                               PaddockSessionRestore  *restore,
                               gboolean                sandboxed,
                               int                    *pty_master,
                               GError                **error)
{
  PaddockKeeperClient *keeper = NULL;

  g_return_val_if_fail (PADDOCK_IS_SESSION_PROCESS (self), NULL);

  if (sandboxed)
    {
#if PADDOCK_ENABLE_LINUX
      paddock_session_process_set_executor (self, paddock_linux_executor_new ());
      keeper = paddock_linux_executor_adopt_agent (PADDOCK_LINUX_EXECUTOR (self->executor), session_id,
                                                   restore->session_dir, restore->tree.leftover_keeper,
                                                   restore->tree.leftover_keeper_pidfd, pty_master, error);
#else
      /* A sandbox another build started: this one has no executor for it. */
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED,
                   "this build has no Linux executor to adopt a sandbox with");
#endif
    }
  else
    {
      paddock_session_process_set_executor (self, paddock_host_executor_new ());
      keeper = paddock_host_executor_adopt_agent (PADDOCK_HOST_EXECUTOR (self->executor), restore->session_dir,
                                                  restore->tree.leftover_keeper, restore->tree.leftover_keeper_pidfd,
                                                  pty_master, error);
    }
  if (keeper == NULL)
    {
      paddock_session_process_clear_executor (self);
      return NULL;
    }
  /* The keeper's pidfd is the client's now. */
  restore->tree.leftover_keeper_pidfd = -1;
  restore->tree.leftover_keeper = 0;
  self->keeper = keeper;
  self->tree.pid = paddock_keeper_client_get_pid (keeper);
  self->tree.pid_start_time = paddock_keeper_client_get_start_time (keeper);
  self->tree.sandboxed = sandboxed;
  self->tree.reaped = FALSE;
  /* The namespace its processes are counted and ended by. */
  if (sandboxed)
    paddock_sandbox_pidns_find (&self->tree.pidns, self->tree.pid);
  self->cgroup = g_steal_pointer (&restore->cgroup);
  if (self->cgroup != NULL)
    self->cgroup_procs_fd = paddock_cgroup_open_procs (self->cgroup, NULL);
  paddock_session_process_start_counting (self);
  return keeper;
}

void
paddock_session_process_take_leftovers (PaddockSessionProcess *self,
                                        PaddockSessionRestore *restore)
{
  g_return_if_fail (PADDOCK_IS_SESSION_PROCESS (self));

  /* Reaped (no daemon saw it end: it is not waited for), its keeper
   * pinned by the pidfd it moves here. */
  paddock_session_tree_move (&self->tree, &restore->tree);
}

void
paddock_session_process_forget_leftovers (PaddockSessionProcess *self)
{
  g_return_if_fail (PADDOCK_IS_SESSION_PROCESS (self));

  self->tree.pid = 0;
  self->tree.leftover_keeper = 0;
  paddock_close_fd (&self->tree.leftover_keeper_pidfd);
  g_clear_pointer (&self->tree.pidns.name, g_free);
  self->tree.pidns.init_pid = 0;
}

void
paddock_session_process_pin_again (PaddockSessionProcess *self,
                                   GArray                *pinned)
{
  g_return_if_fail (PADDOCK_IS_SESSION_PROCESS (self));

  /* A sandbox whose namespace was not found at the restore is not looked
   * for again by its supervisor's pid, which may be a stranger's by now:
   * its pinned pid 1 takes the namespace with it. The host profile's
   * process session is checked by its leader's start time (see
   * agent_session_may_live()). */
  if ((self->tree.pid <= 0 && self->tree.leftover_keeper <= 0) || (self->tree.sandboxed && self->tree.pidns.name == NULL))
    return;

  _paddock_leftover_pin_listed (pinned, (PaddockLeftoverListFunc) paddock_session_process_list_pids, self);
}

void
paddock_session_process_hold (PaddockSessionProcess *self,
                              gboolean               sandbox_too)
{
  g_return_if_fail (PADDOCK_IS_SESSION_PROCESS (self));

  if (self->executor != NULL && PADDOCK_IS_HOST_EXECUTOR (self->executor))
    paddock_host_executor_hold (PADDOCK_HOST_EXECUTOR (self->executor));
#if PADDOCK_ENABLE_LINUX
  else if (self->executor != NULL && PADDOCK_IS_LINUX_EXECUTOR (self->executor) && sandbox_too)
    paddock_linux_executor_hold (PADDOCK_LINUX_EXECUTOR (self->executor));
#endif
}

/* Whether the agent's keeper keeps the end it told until it is released
 * (it holds the session: paddock-keeper-protocol.h), so that a daemon
 * killed before the end's record is durable leaves it to the next. */
gboolean
paddock_session_process_keeps_end (PaddockSessionProcess *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_PROCESS (self), FALSE);

  return self->keeper != NULL && paddock_keeper_client_keeps_end (self->keeper);
}

/* The end is durable, or not relied on: the keeper may go. */
void
paddock_session_process_release_end (PaddockSessionProcess *self)
{
  g_return_if_fail (PADDOCK_IS_SESSION_PROCESS (self));

  if (self->keeper != NULL)
    paddock_keeper_client_release_end (self->keeper);
}

/* The process part of a look at the session's boundary: its pid, its
 * cgroup and the limits asked of it. */
void
paddock_session_process_fill_boundary_input (PaddockSessionProcess      *self,
                                             const PaddockSessionConfig *config,
                                             PaddockBoundaryInput       *input)
{
  g_return_if_fail (PADDOCK_IS_SESSION_PROCESS (self));

  input->session_pid = self->tree.pid;
  input->cgroup_path = paddock_session_process_get_cgroup_path (self);
  input->pids_max = self->tree.sandboxed ? paddock_executor_pids_max (config) : 0;
  input->memory_max = self->tree.sandboxed ? paddock_executor_memory_max (config) : 0;
  /* Limits the user named are requested even where no controller
   * could take them: strict must refuse those, not run without. */
  input->resources_requested = self->resources_requested ||
                               (self->tree.sandboxed && (config->pids_max != 0 || config->memory_max != 0));
  input->resources_reason = self->resources_reason;
}

void
paddock_session_process_fill_record (PaddockSessionProcess *self,
                                     PaddockSessionRecord  *record)
{
  g_return_if_fail (PADDOCK_IS_SESSION_PROCESS (self));

  record->pid = self->tree.reaped ? 0 : self->tree.pid;
  record->pid_start_time = self->tree.pid_start_time;
  record->sandboxed = self->tree.sandboxed;
  /* A keeper outlives a daemon killed without warning, holding its tree
   * (setsid()ed processes included) for the next daemon to end. */
  if (self->keeper != NULL && paddock_keeper_client_is_running (self->keeper))
    {
      record->keeper_pid = paddock_keeper_client_get_keeper_pid (self->keeper);
      record->keeper_start_time = paddock_compat_proc_start_time ((guint32) record->keeper_pid);
    }
  /* A sandbox dies with the daemon, but not in the same instant: the next
   * daemon waits for this pid 1 (see paddock_session_impl_restore). */
  if (self->tree.sandboxed && !self->tree.reaped && self->tree.pid > 0)
    paddock_sandbox_pidns_find (&self->tree.pidns, self->tree.pid);
  record->init_pid = self->tree.reaped ? 0 : self->tree.pidns.init_pid;
  record->init_start_time = self->tree.reaped ? 0 : self->tree.pidns.init_start_time;
  record->cgroup = g_strdup (paddock_session_process_get_cgroup_path (self));
}

void
paddock_session_process_close (PaddockSessionProcess *self)
{
  g_return_if_fail (PADDOCK_IS_SESSION_PROCESS (self));

  paddock_session_process_clear_executor (self);
  g_clear_handle_id (&self->process_count_id, g_source_remove);
}

pid_t
paddock_session_process_get_pid (PaddockSessionProcess *self)
{
  return self->tree.pid;
}

gboolean
paddock_session_process_is_reaped (PaddockSessionProcess *self)
{
  return self->tree.reaped;
}

gboolean
paddock_session_process_is_sandboxed (PaddockSessionProcess *self)
{
  return self->tree.sandboxed;
}

/* Whether its (the executor's) keeper runs: what a later daemon adopts. */
gboolean
paddock_session_process_has_running_keeper (PaddockSessionProcess *self)
{
  return self->keeper != NULL && paddock_keeper_client_is_running (self->keeper);
}

PaddockCgroup *
paddock_session_process_get_cgroup (PaddockSessionProcess *self)
{
  return self->cgroup;
}

const char *
paddock_session_process_get_cgroup_path (PaddockSessionProcess *self)
{
  return self->cgroup != NULL ? paddock_cgroup_get_path (self->cgroup) : NULL;
}

const char *
paddock_session_process_get_cgroup_reason (PaddockSessionProcess *self)
{
  return self->cgroup_reason;
}

int
paddock_session_process_get_cgroup_procs_fd (PaddockSessionProcess *self)
{
  return self->cgroup_procs_fd;
}

gboolean
paddock_session_process_get_resources_requested (PaddockSessionProcess *self)
{
  return self->resources_requested;
}

const char *
paddock_session_process_get_resources_reason (PaddockSessionProcess *self)
{
  return self->resources_reason;
}

static void
paddock_session_process_dispose (GObject *object)
{
  PaddockSessionProcess *self = PADDOCK_SESSION_PROCESS (object);

  paddock_session_process_close (self);
  paddock_close_fd (&self->cgroup_procs_fd);
  paddock_close_fd (&self->tree.leftover_keeper_pidfd);

  G_OBJECT_CLASS (paddock_session_process_parent_class)->dispose (object);
}

static void
paddock_session_process_finalize (GObject *object)
{
  PaddockSessionProcess *self = PADDOCK_SESSION_PROCESS (object);

  paddock_sandbox_pidns_clear (&self->tree.pidns);
  g_clear_pointer (&self->cgroup, paddock_cgroup_free);
  g_clear_pointer (&self->cgroup_reason, g_free);
  g_clear_pointer (&self->resources_reason, g_free);
  g_clear_object (&self->commands);

  G_OBJECT_CLASS (paddock_session_process_parent_class)->finalize (object);
}

static void
paddock_session_process_class_init (PaddockSessionProcessClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_session_process_dispose;
  object_class->finalize = paddock_session_process_finalize;

  /* The agent (host) or the sandbox's helper ended (int wait status, or
   * PADDOCK_KEEPER_CLIENT_STATUS_UNKNOWN), and is reaped. */
  signals[SIGNAL_EXITED] = g_signal_new ("exited", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT);
  /* How many of its processes run now (every second until "gone"). */
  signals[SIGNAL_COUNTED] = g_signal_new ("counted", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
  /* Every process is gone, and its cgroup with them where it could go. */
  signals[SIGNAL_GONE] = g_signal_new ("gone", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                       0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
paddock_session_process_init (PaddockSessionProcess *self)
{
  self->cgroup_procs_fd = -1;
  self->tree = (PaddockSessionTree) PADDOCK_SESSION_TREE_INIT;
}

PaddockSessionProcess *
paddock_session_process_new (PaddockSessionCommands *commands)
{
  PaddockSessionProcess *self = g_object_new (PADDOCK_TYPE_SESSION_PROCESS, NULL);

  self->commands = g_object_ref (commands);
  return self;
}
