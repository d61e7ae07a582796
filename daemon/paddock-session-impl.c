/* paddock-session-impl.c — org.paddock.Session1: one agent on a live PTY
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <gio/gunixfdlist.h>
#include <glib-unix.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-glib/json-glib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <netinet/in.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "paddock-dbus-checks.h"
#include "paddock-sandbox-program.h"
#include "paddock-sandbox-protocol.h"
#include "paddock-agent-session.h"
#include "paddock-autofd.h"
#include "paddock-boundary.h"
#include "paddock-cgroup.h"
#include "paddock-clone-vm.h"
#include "paddock-command-impl.h"
#include "paddock-command-runner.h"
#include "paddock-durable-file.h"
#include "paddock-exit-status.h"
#include "paddock-error.h"
#include "paddock-folder-trash.h"
#include "paddock-executor.h"
#include "paddock-lease.h"
#include "paddock-process-tree.h"
#include "paddock-record-writer.h"
#include "paddock-scrollback.h"
#include "paddock-session-boundary.h"
#include "paddock-session-commands.h"
#include "paddock-session-commits.h"
#include "paddock-session-describe.h"
#include "paddock-session-gate.h"
#include "paddock-session-impl-private.h"
#include "paddock-session-launch.h"
#include "paddock-session-process.h"
#include "paddock-session-members.h"
#include "paddock-session-network.h"
#include "paddock-session-processes.h"
#include "paddock-session-record.h"
#include "paddock-session-restore.h"
#include "paddock-session-revival.h"
#include "paddock-session-stage-limit.h"
#include "paddock-session-staging.h"
#include "paddock-session-stop.h"
#include "paddock-terminal.h"
#include "paddock-terminal-calls.h"
#include "paddock-spare-sandbox.h"
#include "paddock-stage.h"

/* How long after "running" the workspace's baseline walk waits (see
 * paddock_stage_record_baseline_in_thread()): past a start and its first
 * output (a few ms) on a loaded machine, well before anyone reviews. */
#define BASELINE_DELAY_MS       250
struct _PaddockSessionImpl
{
  PaddockIpcSession1Skeleton  parent_instance;

  char                       *id;
  char                       *object_path;
  PaddockSessionConfig        config;

  /* The agent's PTY, its scrollback and viewers (paddock-terminal.c),
   * and its D-Bus calls (paddock-terminal-calls.c). */
  PaddockTerminal            *terminal;
  PaddockTerminalCalls       *terminal_calls;

  /* Its processes: the executor they run through, the agent, keepers,
   * cgroup; counted and signalled (paddock-session-process.c). */
  PaddockSessionProcess      *process;

  /* Its creator, waiting for the start's outcome; the start itself, and
   * what its executor says (paddock-session-launch.c). */
  PaddockSessionReadyFunc     ready_func;
  gpointer                    ready_data;
  PaddockSessionLaunch       *launch;

  /* Where the session's record lives (NULL: not saved). */
  char                       *record_path;
  /* What its parts ask of it, answered once for all (paddock-session-gate.c). */
  PaddockSessionGate         *gate;
  PaddockSessionStageLimit   *stage_limit;  /* measures while it runs with a stage; SetStageLimit */
  PaddockSessionProcesses    *processes;    /* ListProcesses, KillProcess */
  PaddockSessionCommits      *commits;      /* ListCommits, GetCommitDiff, ApplyCommits */
  PaddockSessionStaging      *staging;      /* review, apply, drop, checkpoints */
  gboolean                    stop_requested;

  /* The session's state and exit status as the daemon knows them. The
   * State and ExitStatus properties are what clients were told: an end
   * ("exited", "stopped") goes out only once the record saying so is on
   * disk, or its keeper keeps it until then (see
   * paddock_session_impl_set_state()), so a client never hears of an end
   * that a daemon killed meanwhile would not list. Cancelled at
   * dispose: a record's flush that comes back later does nothing. */
  const char                 *state;   /* interned */
  int                         exit_status;
  GCancellable               *durable_cancellable;

  /* Exec'd commands, their host pids, the calls waiting for them to
   * start and their callers (paddock-session-commands.c). */
  PaddockSessionCommands     *commands;
  /* How they are run and answered (paddock-command-runner.c). */
  PaddockCommandRunner       *runner;

  /* Where the agent's writes go (NULL: the host profile writes to the
   * workspace itself). */
  PaddockStage               *stage;

  /* The proxy, its policy's effect and the request journal. */
  PaddockSessionNetwork      *network;

  /* Stop/Destroy calls waiting for the last process to go, and the
   * sweeps until it has (paddock-session-stop.c). */
  PaddockSessionStop         *stop;

  /* A restored session, while what an earlier daemon left running of it
   * is being ended (paddock-session-revival.c). */
  PaddockSessionRevival      *revival;
};

/* A Stop or Destroy call waiting (paddock-session-stop.h). */
typedef PaddockStopWaiter Waiter;

enum {
  SIGNAL_CHANGED,
  SIGNAL_DESTROYED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void paddock_session_iface_init (PaddockIpcSession1Iface *iface);
static gboolean paddock_session_impl_check_alive (PaddockSessionImpl    *self,
                                                  GDBusMethodInvocation *invocation);
static void paddock_session_impl_make_stage_limit (PaddockSessionImpl *self);
static void paddock_session_impl_drop_stage_limit (PaddockSessionImpl *self);

G_DEFINE_FINAL_TYPE_WITH_CODE (PaddockSessionImpl, paddock_session_impl,
                               PADDOCK_IPC_TYPE_SESSION1_SKELETON,
                               G_IMPLEMENT_INTERFACE (PADDOCK_IPC_TYPE_SESSION1,
                                                      paddock_session_iface_init))

static void
paddock_session_impl_save (PaddockSessionImpl *self)
{
  g_auto(PaddockSessionRecord) record = { 0, };
  g_autofree char *json = NULL;
  PaddockIpcSession1 *session = PADDOCK_IPC_SESSION1 (self);

  if (self->record_path == NULL)
    return;
  /* The earlier daemon's record, while what it left runs. */
  if (self->revival != NULL && paddock_session_revival_save (self->revival, self->record_path))
    return;

  record.id = g_strdup (self->id);
  record.name = g_strdup (paddock_ipc_session1_get_name (session));
  paddock_session_record_set_config (&record, &self->config);
  record.state = g_strdup (self->state);
  record.exit_status = self->exit_status;
  record.created = (gint64) paddock_ipc_session1_get_created (session);
  paddock_session_process_fill_record (self->process, &record);
  record.boot_id = paddock_session_restore_current_boot_id ();
  record.damaged = g_strdup (paddock_ipc_session1_get_damaged (session));
  json = paddock_session_record_to_json (&record);

  /* On the writer's thread: the main loop goes on serving (see
   * paddock-record-writer.c for what a crash can lose). */
  paddock_record_writer_replace (self->record_path, g_steal_pointer (&json));
}

/* Tells clients the state and exit status the daemon knows: the
 * properties, and through "changed" the manager's SessionsChanged. */
static void
paddock_session_impl_publish (PaddockSessionImpl *self)
{
  PaddockIpcSession1 *session = PADDOCK_IPC_SESSION1 (self);

  if (g_strcmp0 (paddock_ipc_session1_get_state (session), self->state) == 0 &&
      paddock_ipc_session1_get_exit_status (session) == self->exit_status)
    return;

  paddock_ipc_session1_set_exit_status (session, self->exit_status);
  paddock_ipc_session1_set_state (session, self->state);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

/* Calls STEP (self, ARG) once every record write asked for so far is on
 * disk (paddock_record_writer_when_durable()), unless the session goes
 * away meanwhile (durable_cancellable). */
static void
paddock_session_impl_when_durable (PaddockSessionImpl      *self,
                                   PaddockRecordWriterStep  step,
                                   guint                    arg)
{
  paddock_record_writer_when_durable (self, self->durable_cancellable, step, arg);
}

static void
paddock_session_impl_publish_step (gpointer user_data,
                                   guint    unused)
{
  paddock_session_impl_publish (user_data);
}

static gboolean
state_is_end (const char *state)
{
  return g_strcmp0 (state, "exited") == 0 || g_strcmp0 (state, "stopped") == 0;
}

/* The end is on disk: the agent's keeper need not keep it any more. */
static void
paddock_session_impl_release_end_step (gpointer user_data,
                                       guint    unused)
{
  PaddockSessionImpl *self = user_data;

  paddock_session_process_release_end (self->process);
}

/* Whether a daemon killed now would list this end all the same: the
 * agent's keeper told it while holding the session (the record on disk
 * names it), and keeps it until released, or leaves it to the next
 * daemon (paddock-keeper-protocol.h), which lists it "exited" with the
 * same status (paddock-session-restore.c). Not "stopped": the keeper
 * knows no Stop, a later daemon would say "exited". */
static gboolean
paddock_session_impl_end_kept (PaddockSessionImpl *self)
{
  return g_strcmp0 (self->state, "exited") == 0 && self->revival == NULL &&
         paddock_session_process_keeps_end (self->process);
}

static void
paddock_session_impl_set_state (PaddockSessionImpl *self,
                                const char         *state)
{
  if (g_strcmp0 (self->state, state) == 0)
    return;

  g_debug ("Session %s: %s", self->id, state);
  self->state = g_intern_string (state);
  if (g_strcmp0 (state, "destroyed") == 0)
    paddock_session_gate_set_destroyed (self->gate);
  paddock_session_impl_save (self);
  /* A session that ended is on disk so before any client can see it has:
   * a daemon killed in between still lists it as what it was told. The
   * main loop goes on meanwhile (the fsync is the writer thread's), and
   * whatever answers with the end (Stop, Destroy) waits the same way; the
   * daemon itself goes by self->state at once. "running" need not wait:
   * see paddock_session_impl_drain_control() and start(); nor
   * "destroyed", whose record goes. A later state published at once
   * supersedes an end still on its way: publishing is of the latest.
   * An end its keeper keeps until it is on disk goes out at once (a
   * client's exit after the agent's waits for no fsync). */
  if (state_is_end (state) && paddock_session_impl_end_kept (self))
    {
      paddock_session_impl_publish (self);
      paddock_session_impl_when_durable (self, paddock_session_impl_release_end_step, 0);
    }
  else if (g_strcmp0 (state, "exited") == 0)
    {
      /* Its keeper may keep it yet, once asked to hold the session (the
       * record naming it on disk: hold_step(), then end_kept_cb()). */
      paddock_session_impl_when_durable (self, paddock_session_impl_publish_step, 0);
      paddock_session_impl_when_durable (self, paddock_session_impl_release_end_step, 0);
    }
  else if (state_is_end (state))
    {
      /* Not relied on (a Stop's end): the keeper need not keep it, nor
       * leave it for the next daemon, which lists what the record says. */
      paddock_session_impl_release_end_step (self, 0);
      paddock_session_impl_when_durable (self, paddock_session_impl_publish_step, 0);
    }
  else
    paddock_session_impl_publish (self);
}

/* ------------------------------------------------------------------------ */
/* Which processes are the session's                                         */

/* Every process of the session now. */
static GArray *
paddock_session_impl_list_pids (PaddockSessionImpl *self)
{
  return paddock_session_process_list_pids (self->process);
}

guint
paddock_session_impl_count_processes (PaddockSessionImpl *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_IMPL (self), 0);

  return paddock_session_process_count (self->process);
}

/* Every process of the session is gone (the sandbox's PID namespace with
 * its pid 1, or the last member of the host agent's cgroup, or of its and
 * its commands' process sessions and keepers' trees): nothing can accept
 * on its leased ports any more, so a connection to one is reset from now
 * on rather than left queued until Destroy (a new start serves them
 * again). A host process that setsid()s stays below its keeper, and is
 * counted; only one that killed its keeper first (same user: the host
 * profile reports every layer unenforced) and had no cgroup to hold it
 * can go unseen. */
static void
paddock_session_impl_processes_gone (PaddockSessionImpl *self)
{
  _paddock_session_ports_refuse_all (_paddock_session_network_get_ports (self->network));
}

static void
paddock_session_impl_process_gone_cb (PaddockSessionProcess *process,
                                      PaddockSessionImpl    *self)
{
  paddock_session_impl_processes_gone (self);
}

static void
paddock_session_impl_process_counted_cb (PaddockSessionProcess *process,
                                         guint                  count,
                                         PaddockSessionImpl    *self)
{
  if (count != paddock_ipc_session1_get_process_count (PADDOCK_IPC_SESSION1 (self)))
    {
      paddock_ipc_session1_set_process_count (PADDOCK_IPC_SESSION1 (self), count);
      g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
    }
}

/* ------------------------------------------------------------------------ */
/* The terminal (paddock-terminal.c)                                         */

/* OutputOffset follows the terminal's end, as often as it reports it. */
static void
paddock_session_impl_terminal_output_cb (PaddockTerminal *terminal,
                                         guint64          end_offset,
                                         gpointer         user_data)
{
  PaddockSessionImpl *self = user_data;

  paddock_ipc_session1_set_output_offset (PADDOCK_IPC_SESSION1 (self), end_offset);
}

/**
 * paddock_session_impl_attach_terminal:
 * @self: a session that has just started (start() returned %TRUE)
 * @fd: (transfer full): the creator's end of a stream socket pair
 *
 * CreateSession's "terminal": the creator's viewer, attached before the
 * agent can print anything, so that it reads the terminal from its first
 * byte without an Attach round trip. The socket is closed with the
 * session if the start then fails.
 */
void
paddock_session_impl_attach_terminal (PaddockSessionImpl *self,
                                      int                 fd)
{
  g_return_if_fail (PADDOCK_IS_SESSION_IMPL (self));
  g_return_if_fail (fd >= 0);

  paddock_terminal_flush_viewer (self->terminal, paddock_terminal_add_viewer (self->terminal, fd, 0, TRUE));
}

/* ------------------------------------------------------------------------ */
/* The start (paddock-session-launch.c)                                      */

/* The environment of the session's agent and commands. */
static GStrv
build_agent_environment (PaddockSessionImpl *self)
{
  return paddock_session_launch_build_environment (self->launch);
}

static void
paddock_session_impl_ready (PaddockSessionImpl *self,
                            const GError       *error)
{
  PaddockSessionReadyFunc func = self->ready_func;

  self->ready_func = NULL;
  /* Nothing of the start is waited for any more. */
  if (self->launch != NULL)
    paddock_session_launch_answered (self->launch);
  if (func != NULL)
    func (self, error, self->ready_data);
}

static void
paddock_session_impl_ready_step (gpointer user_data,
                                 guint    unused)
{
  paddock_session_impl_ready (user_data, NULL);
}

/* The sandbox is gone: Exec calls it never answered get an answer now. */
static void
paddock_session_impl_fail_pending_execs (PaddockSessionImpl *self)
{
  if (self->runner != NULL)
    paddock_command_runner_fail_pending (self->runner);
}

/* The record that names the session's keeper (a sandbox's, a host
 * agent's) is on disk: from now on the keeper holds the session when we
 * go, for a later daemon to adopt; before, it ended the tree with us, so
 * that nothing runs on that no later daemon knows of. */
static void
paddock_session_impl_hold_step (gpointer user_data,
                                guint    unused)
{
  PaddockSessionImpl *self = user_data;

  /* A host agent's keeper also holds what an agent already gone left
   * (every record names the keeper while it runs), for the next daemon
   * to end. */
  paddock_session_process_hold (self->process,
                                (!paddock_session_process_is_reaped (self->process) &&
                                 g_strcmp0 (self->state, "running") == 0) ||
                                /* Also a sandbox that ended while its "running" record was
                                 * on its way: nothing is left of it to hold, but its keeper
                                 * then keeps the end told before, which goes out without
                                 * waiting for its own record (launch_end_kept_cb()). */
                                (g_strcmp0 (self->state, "exited") == 0 &&
                                 g_strcmp0 (paddock_ipc_session1_get_state (PADDOCK_IPC_SESSION1 (self)), "running") == 0));
}

/* The sandbox said the agent runs, and its boundary was seen (published
 * and not refused): the session runs and its creator is answered. */
static void
paddock_session_impl_launch_started_cb (PaddockSessionLaunch *launch,
                                        PaddockBoundaryLook  *look,
                                        PaddockSessionImpl   *self)
{
  g_autoptr(PaddockSessionImpl) hold = g_object_ref (self);

  /* What the workspace looked like as the session started: walked once
   * the start is over (the agent's first output, the client's Attach),
   * not alongside it, which a walk of a large workspace slowed by a third
   * on two cores; a review or apply before then starts it at once. The
   * agent's writes go to the stage, so this is the same workspace;
   * another writer's changes since the stage was prepared are recorded
   * "unknown". */
  if (self->stage != NULL)
    {
      paddock_stage_record_baseline_in_thread (self->stage, BASELINE_DELAY_MS);
      /* Its writes are bounded from now on (paddock-session-stage-limit.c). */
      paddock_session_impl_make_stage_limit (self);
    }

  /* "running", then the creator's answer, then the record, which the
   * writer thread makes durable while this one goes on (the Attach that
   * follows does not wait for it). A daemon that dies before it is on
   * disk loses it either way, and loses nothing running with it: the
   * sandbox dies with the daemon. */
  self->state = g_intern_static_string ("running");
  paddock_session_impl_publish (self);
  paddock_session_impl_ready (self, NULL);
  /* Unless the creator's side could not take it (not exported): then the
   * session is being killed and its folder is gone. */
  if (g_dbus_interface_skeleton_get_connection (G_DBUS_INTERFACE_SKELETON (self)) != NULL)
    {
      paddock_session_impl_save (self);
      paddock_session_impl_when_durable (self, paddock_session_impl_hold_step, 0);
    }
}

/* The start failed after start() returned (refused strict, or its proxy
 * could not be served): the sandbox is being killed; its creator hears
 * why. */
static void
paddock_session_impl_launch_failed_cb (PaddockSessionLaunch *launch,
                                       const GError         *error,
                                       PaddockSessionImpl   *self)
{
  g_autoptr(PaddockSessionImpl) hold = g_object_ref (self);

  paddock_session_impl_ready (self, error);
}

/* The agent (host) or the sandbox's helper ended, as its executor saw
 * (reaped from now on). */
static void
paddock_session_impl_exited_cb (PaddockSessionProcess *process,
                                int                    wait_status,
                                PaddockSessionImpl    *self)
{
  /* Reading the sandbox's last events may drop the session's last
   * reference (a handler of those events may end the session, and the
   * manager let go of it). */
  g_autoptr(PaddockSessionImpl) hold = g_object_ref (self);

  paddock_session_impl_drop_stage_limit (self);
  paddock_session_launch_agent_ended (self->launch, wait_status);
}

/* The agent (host) or the sandbox's helper ended, and was reaped: the
 * session ends (START_ERROR: it never ran). */
static void
paddock_session_impl_launch_ended_cb (PaddockSessionLaunch *launch,
                                      int                   exit_status,
                                      const GError         *start_error,
                                      PaddockSessionImpl   *self)
{
  g_autoptr(PaddockSessionImpl) hold = g_object_ref (self);

  /* Published with the end (see set_state()). */
  self->exit_status = exit_status;
  paddock_ipc_session1_set_main_pid (PADDOCK_IPC_SESSION1 (self), 0);
  paddock_ipc_session1_set_process_count (PADDOCK_IPC_SESSION1 (self),
                                          paddock_session_impl_count_processes (self));

  if (start_error != NULL)
    {
      paddock_session_impl_set_state (self, "exited");
      paddock_session_impl_ready (self, start_error);
      return;
    }

  if (g_strcmp0 (self->state, "destroyed") != 0)
    paddock_session_impl_set_state (self, self->stop_requested ? "stopped" : "exited");
}

/* A sandbox's keeper keeps the end told before (it was asked to hold the
 * session after it): that end goes out now, if it waits for its record
 * still (see set_state()). */
static void
paddock_session_impl_launch_end_kept_cb (PaddockSessionLaunch *launch,
                                         PaddockSessionImpl   *self)
{
  if (paddock_session_impl_end_kept (self))
    paddock_session_impl_publish (self);
}

static void paddock_session_impl_command_gone_cb (PaddockSessionLaunch *launch,
                                                  int                   pid,
                                                  PaddockSessionImpl   *self);

/* Made once the parts it is given are (new()). */
static void
paddock_session_impl_make_launch (PaddockSessionImpl *self)
{
  self->launch = paddock_session_launch_new (self->id, &self->config, self->process, self->terminal,
                                             self->network, self->runner, self->stage,
                                             PADDOCK_IPC_SESSION1 (self));
  g_signal_connect (self->launch, "started", G_CALLBACK (paddock_session_impl_launch_started_cb), self);
  g_signal_connect (self->launch, "failed", G_CALLBACK (paddock_session_impl_launch_failed_cb), self);
  g_signal_connect (self->launch, "ended", G_CALLBACK (paddock_session_impl_launch_ended_cb), self);
  g_signal_connect (self->launch, "end-kept", G_CALLBACK (paddock_session_impl_launch_end_kept_cb), self);
  g_signal_connect (self->launch, "command-gone", G_CALLBACK (paddock_session_impl_command_gone_cb), self);
}

/* The layers the daemon's own PADDOCK_TEST_WITHOUT_LAYERS leaves out of
 * its sandboxes (paddock_executor_test_without_layers()). */
GStrv
_paddock_session_test_without_layers (void)
{
  return paddock_executor_test_without_layers ();
}

/**
 * paddock_session_impl_offer_spare_sandbox:
 *
 * Lets the next paddock_session_impl_start() take SPARE's sandbox made
 * ahead when it fits (paddock-spare-sandbox.c); borrowed for that call.
 */
void
paddock_session_impl_offer_spare_sandbox (PaddockSessionImpl  *self,
                                          PaddockSpareSandbox *spare)
{
  g_return_if_fail (PADDOCK_IS_SESSION_IMPL (self));

  paddock_session_launch_offer_spare (self->launch, spare);
}

/**
 * paddock_session_impl_refill_spare_sandbox:
 *
 * Has SPARE make a sandbox ahead for the next session like this one (its
 * network mode), unless it has one; that session will have the id NEXT_ID
 * (the spare's cgroup has its name already: a cgroup v2 cannot be
 * renamed). For a safe session that started.
 */
void
paddock_session_impl_refill_spare_sandbox (PaddockSessionImpl  *self,
                                           PaddockSpareSandbox *spare,
                                           const char          *next_id)
{
  g_return_if_fail (PADDOCK_IS_SESSION_IMPL (self));

  paddock_session_launch_refill_spare (self->launch, spare, next_id, self->record_path);
}

gboolean
paddock_session_impl_start (PaddockSessionImpl       *self,
                            PaddockSessionReadyFunc   ready,
                            gpointer                  user_data,
                            GError                  **error)
{
  pid_t pid = 0;

  g_return_val_if_fail (PADDOCK_IS_SESSION_IMPL (self), FALSE);

  if (!paddock_session_launch_start (self->launch, self->record_path, &pid, error))
    return FALSE;
  self->ready_func = ready;
  self->ready_data = user_data;
  paddock_ipc_session1_set_main_pid (PADDOCK_IPC_SESSION1 (self), (guint32) pid);
  paddock_ipc_session1_set_process_count (PADDOCK_IPC_SESSION1 (self), 1);

  /* A host agent runs once exec succeeded, which fork told us nothing
   * against; "running" also writes its first record (once it is on disk
   * the agent's keeper holds it, so that it outlives a daemon that dies,
   * and the next one knows what to adopt or clean up; before, the keeper
   * ends it with the daemon). A sandbox dies with the daemon (--die-with-parent),
   * so its record waits for the sandbox's "started". */
  if (!paddock_session_process_is_sandboxed (self->process))
    {
      /* The record first: the writer's thread makes it durable while this
       * one looks at the boundary (nothing of which goes into the record),
       * so the flush below waits for what is left of the fsync, not all
       * of it. No client can see "running" before the flush: the session
       * is exported, and listed, once ready. */
      paddock_session_impl_set_state (self, "running");
      paddock_session_launch_look_now (self->launch);
      /* On disk before the creator hears of it: the agent would outlive
       * a daemon that died unknowing. The main loop goes on meanwhile; a
       * daemon that shuts down first answers the creator with its error
       * (abandon_start()), which makes this one do nothing. */
      paddock_session_impl_when_durable (self, paddock_session_impl_hold_step, 0);
      paddock_session_impl_when_durable (self, paddock_session_impl_ready_step, 0);
    }

  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Stop and Destroy                                                          */

/* Destroy's end, once every record write queued before the folder goes
 * is on disk (a queued write would recreate a file in it): the folder,
 * then the manager's "destroyed", then the answers. */
static void
paddock_session_impl_remove_files_step (gpointer user_data,
                                        guint    unused)
{
  PaddockSessionImpl *self = user_data;
  g_autoptr(GPtrArray) waiters = paddock_session_stop_take_destroy_waiters (self->stop);

  /* Moved aside at once, removed by a worker: a stage of many files
   * takes seconds to remove, which neither this answer nor the other
   * sessions wait for (paddock-folder-trash.c). */
  if (self->config.home != NULL)
    {
      g_autofree char *session_dir = g_path_get_dirname (self->config.home);
      g_autofree char *trash_dir = paddock_folder_trash_dir_for_session (session_dir);
      g_autoptr(GError) error = NULL;

      if (!paddock_folder_trash_discard (trash_dir, session_dir, &error))
        {
          g_message ("Session %s: %s; removing its folder now", self->id, error->message);
          paddock_remove_tree (session_dir);
        }
    }

  g_signal_emit (self, signals[SIGNAL_DESTROYED], 0);
  if (waiters != NULL)
    paddock_session_stop_answer (self->stop, PADDOCK_IPC_SESSION1 (self), waiters, self->state, 0);
}

/* The stop keeps the calls, answered once the session's files are gone. */
static void
paddock_session_impl_finish_destroy (PaddockSessionImpl *self)
{
  paddock_terminal_close (self->terminal);
  g_clear_pointer (&self->record_path, g_free);
  paddock_session_process_end (self->process);

  /* The commands went with the processes; their objects stay a while. */
  paddock_command_runner_let_go (self->runner);
  /* Published at once: no record says it (its folder goes), and nothing
   * of the session may be called from now on (check_alive()). */
  paddock_session_impl_set_state (self, "destroyed");

  /* The session's own files: its HOME (the staging and records that come
   * with later versions live beside it). Neither the baseline's walk nor
   * a record still queued may write into it once it is gone: the walk is
   * cancelled now, the records are waited for without blocking. */
  if (self->stage != NULL)
    paddock_stage_cancel_baseline (self->stage);
  paddock_session_impl_when_durable (self, paddock_session_impl_remove_files_step, 0);
}

/* The stop is over (SURVIVORS processes left): answered once the end is
 * on disk and published (see set_state()), which a step asked for now
 * follows. */
static void
paddock_session_impl_complete_waiters_step (gpointer user_data,
                                            guint    survivors)
{
  PaddockSessionImpl *self = user_data;
  /* Destroying emits "destroyed", and the manager drops its reference. */
  g_autoptr(PaddockSessionImpl) hold = g_object_ref (self);

  /* A Destroy among them: everyone is answered once the files are gone. */
  if (paddock_session_stop_complete (self->stop, PADDOCK_IPC_SESSION1 (self), self->state, survivors))
    paddock_session_impl_finish_destroy (self);
}

static void
paddock_session_impl_stop_ended_cb (PaddockSessionStop *stop,
                                    guint               survivors,
                                    PaddockSessionImpl *self)
{
  paddock_session_impl_when_durable (self, paddock_session_impl_complete_waiters_step, survivors);
}

/* One round of a stop: listed once, counted, and (KILL) signalled. GONE
 * once nothing is left: zero processes and the agent reaped (so its
 * status is known), and its keepers gone after their trees (so that the
 * cgroup can go). */
static void
paddock_session_impl_stop_sweep_cb (PaddockSessionStop *stop,
                                    gboolean            kill,
                                    guint              *left,
                                    gboolean           *gone,
                                    PaddockSessionImpl *self)
{
  *gone = paddock_session_process_sweep (self->process, kill, left);
  if (*gone)
    {
      paddock_ipc_session1_set_process_count (PADDOCK_IPC_SESSION1 (self), 0);
      paddock_session_impl_processes_gone (self);
    }
}

/* REQUESTED is when the call came (monotonic): the stop's elapsed-ms
 * counts from there, also for a call that first waited for a restored
 * session's leftovers to end. */
static void
paddock_session_impl_begin_stop (PaddockSessionImpl    *self,
                                 GDBusMethodInvocation *invocation,
                                 guint                  grace_seconds,
                                 gboolean               destroy,
                                 gint64                 requested)
{
  /* Completing may destroy the session and drop the manager's reference. */
  g_autoptr(PaddockSessionImpl) hold = g_object_ref (self);

  if (!paddock_session_stop_add (self->stop, invocation, grace_seconds, destroy, requested))
    return;

  self->stop_requested = self->stop_requested || !paddock_session_process_is_reaped (self->process);
  /* The session's commands end with it: they are killed, not done. */
  paddock_command_runner_expect_kill (self->runner);

  /* A session held still because its stage was full goes on, to see its
   * SIGTERM; its stage is measured no more. */
  paddock_session_impl_drop_stage_limit (self);
  if (grace_seconds > 0)
    paddock_session_process_signal_all (self->process, SIGTERM, NULL);

  if (paddock_session_process_get_cgroup (self->process) != NULL)
    paddock_session_stop_wake_on (self->stop, paddock_cgroup_open_events (paddock_session_process_get_cgroup (self->process)));
  paddock_session_stop_run (self->stop);
}

/* FALSE, INVOCATION answered NotFound, once the session is destroyed
 * (set_state() tells the gate). */
static gboolean
paddock_session_impl_check_alive (PaddockSessionImpl    *self,
                                  GDBusMethodInvocation *invocation)
{
  return paddock_session_gate_check_alive (self->gate, invocation);
}

/* Stop or Destroy of a restored session whose leftovers still run: begun
 * once they are gone (paddock_session_revival_wait()). */
static gboolean
paddock_session_impl_wait_for_leftovers (PaddockSessionImpl    *self,
                                         GDBusMethodInvocation *invocation,
                                         guint                  grace_seconds,
                                         gboolean               destroy)
{
  return self->revival != NULL && paddock_session_revival_wait (self->revival, invocation, grace_seconds, destroy);
}

static gboolean
paddock_session_impl_handle_stop (PaddockIpcSession1    *session,
                                  GDBusMethodInvocation *invocation,
                                  guint                  grace_seconds)
{
  PaddockSessionImpl *self = PADDOCK_SESSION_IMPL (session);

  if (!paddock_session_impl_check_alive (self, invocation))
    return G_DBUS_METHOD_INVOCATION_HANDLED;

  if (!paddock_session_stop_check_grace (grace_seconds, invocation))
    return G_DBUS_METHOD_INVOCATION_HANDLED;

  if (paddock_session_impl_wait_for_leftovers (self, invocation, grace_seconds, FALSE))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  paddock_session_impl_begin_stop (self, invocation, grace_seconds, FALSE, g_get_monotonic_time ());
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
paddock_session_impl_handle_destroy (PaddockIpcSession1    *session,
                                     GDBusMethodInvocation *invocation)
{
  PaddockSessionImpl *self = PADDOCK_SESSION_IMPL (session);

  if (!paddock_session_impl_check_alive (self, invocation))
    return G_DBUS_METHOD_INVOCATION_HANDLED;

  if (paddock_session_impl_wait_for_leftovers (self, invocation, 0, TRUE))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  paddock_session_impl_begin_stop (self, invocation, 0, TRUE, g_get_monotonic_time ());
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* The daemon gives up on a session that has not said it runs (shutdown):
 * whoever waits for it to start is told @error now, not never. */
void
paddock_session_impl_abandon_start (PaddockSessionImpl *self,
                                    const GError       *error)
{
  g_return_if_fail (PADDOCK_IS_SESSION_IMPL (self));

  paddock_session_impl_ready (self, error);
}

/* Daemon shutdown with live sessions of the host profile: they cannot be
 * re-adopted, so they are not left running unsupervised. */
void
paddock_session_impl_kill_now (PaddockSessionImpl *self)
{
  g_return_if_fail (PADDOCK_IS_SESSION_IMPL (self));

  if (self->revival != NULL)
    paddock_session_revival_kill_now (self->revival);
  paddock_session_process_signal_all (self->process, SIGKILL, NULL);

  /* No main loop will see the commands end: calls that wait for them are
   * answered now, not left to the bus's NoReply. */
  paddock_command_runner_quit (self->runner);

  /* The daemon is going: the cgroup goes too rather than linger. */
  paddock_session_process_wait_cgroup_gone (self->process);
}

/* ------------------------------------------------------------------------ */
/* Commands                                                                  */

/* Nothing is left of a command its executor started: the session may go
 * (see start_command()). */
static void
paddock_session_impl_command_gone_cb (PaddockSessionLaunch *launch,
                                      int                   pid,
                                      PaddockSessionImpl   *self)
{
  g_object_unref (self);
}

/* Exec and Run: a session that runs has them checked, started and
 * answered by its runner (paddock-command-runner.c). */
static void
paddock_session_impl_start_command (PaddockSessionImpl    *self,
                                    GDBusMethodInvocation *invocation,
                                    const char * const    *argv,
                                    const char            *cwd,
                                    GVariant              *env,
                                    guint                  timeout_ms,
                                    gboolean               tty)
{
  if (!paddock_session_impl_check_alive (self, invocation) ||
      _paddock_session_impl_refuse_leftovers (self, invocation))
    return;
  if (g_strcmp0 (self->state, "running") != 0)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_BUSY,
                                             "Session %s is not running", self->id);
      return;
    }

  /* A command on the host keeps the session alive until nothing is left
   * of it (command_gone_cb()): one that ends after Destroy still records
   * its real exit status. */
  if (paddock_command_runner_start (self->runner,
                                    g_dbus_interface_skeleton_get_connection (G_DBUS_INTERFACE_SKELETON (self)),
                                    invocation, argv, cwd, env, build_agent_environment (self), timeout_ms, tty,
                                    paddock_session_process_get_cgroup (self->process),
                                    paddock_session_process_get_cgroup_procs_fd (self->process)))
    g_object_ref (self);
}

static gboolean
paddock_session_impl_handle_exec (PaddockIpcSession1    *session,
                                  GDBusMethodInvocation *invocation,
                                  const char * const    *argv,
                                  const char            *cwd,
                                  GVariant              *env,
                                  guint                  timeout_ms,
                                  gboolean               tty)
{
  paddock_session_impl_start_command (PADDOCK_SESSION_IMPL (session), invocation, argv, cwd, env, timeout_ms, tty);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* Exec's command, answered when it is over (paddock-command-impl.c). */
static gboolean
paddock_session_impl_handle_run (PaddockIpcSession1    *session,
                                 GDBusMethodInvocation *invocation,
                                 const char * const    *argv,
                                 const char            *cwd,
                                 GVariant              *env,
                                 guint                  timeout_ms,
                                 GVariant              *options)
{
  g_autoptr(GError) error = NULL;

  if (!paddock_command_impl_check_run_options (options, &error))
    g_dbus_method_invocation_return_gerror (invocation, error);
  else
    paddock_session_impl_start_command (PADDOCK_SESSION_IMPL (session), invocation, argv, cwd, env, timeout_ms, FALSE);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

PaddockSessionNetwork *
_paddock_session_impl_get_network (PaddockSessionImpl *self)
{
  return self->network;
}

PaddockStage *
_paddock_session_impl_get_stage (PaddockSessionImpl *self)
{
  return self->stage;
}

/* ------------------------------------------------------------------------ */
/* What its parts ask of it, answered once for all (paddock-session-gate.c) */

/* A running session's stage is bounded from now on. */
static void
paddock_session_impl_make_stage_limit (PaddockSessionImpl *self)
{
  g_return_if_fail (self->stage != NULL);

  paddock_session_stage_limit_begin (self->stage_limit, paddock_stage_get_root (self->stage),
                                     self->config.stage_limit);
}

/* Its processes go on (held still, they would not see their SIGTERM); the
 * stage is measured no more. */
static void
paddock_session_impl_drop_stage_limit (PaddockSessionImpl *self)
{
  if (self->stage_limit != NULL)
    paddock_session_stage_limit_close (self->stage_limit);
}

/* SetStageLimit's new limit: kept in the record, which its answer waits
 * for (paddock-session-stage-limit.c). */
static void
paddock_session_impl_stage_limit_set_cb (PaddockSessionStageLimit *stage_limit,
                                         guint64                   limit,
                                         PaddockSessionImpl       *self)
{
  self->config.stage_limit = limit;
  paddock_session_impl_save (self);
}

/* Busy to what needs a live session while a restored one's leftovers are
 * ended (paddock_session_revival_refuse()). TRUE when it answered. */
gboolean
_paddock_session_impl_refuse_leftovers (PaddockSessionImpl    *self,
                                        GDBusMethodInvocation *invocation)
{
  return self->revival != NULL && paddock_session_revival_refuse (self->revival, invocation);
}

/* Whether any process of the session may still run. */
gboolean
_paddock_session_impl_is_live (PaddockSessionImpl *self)
{
  const char *state = self->state;

  return g_strcmp0 (state, "starting") == 0 || g_strcmp0 (state, "running") == 0 ||
         !paddock_session_process_is_reaped (self->process);
}

/* Holds every process of a live session still (its cgroup's freezer), so
 * that an apply or a checkpoint sees the stage at one moment. FALSE when
 * there is nothing to freeze with (no cgroup) or nothing to freeze. */
gboolean
_paddock_session_impl_freeze (PaddockSessionImpl *self,
                              gboolean            frozen)
{
  PaddockCgroup *cgroup = paddock_session_process_get_cgroup (self->process);

  if (cgroup == NULL || (frozen && !_paddock_session_impl_is_live (self)))
    return FALSE;
  return paddock_cgroup_freeze (cgroup, frozen);
}

/* Asks the sandbox's pid 1 for a socket inside (port forwarding's); the
 * answer comes to paddock_session_impl_link_socket_cb(), through the
 * executor. */
static gboolean
paddock_session_impl_ports_request_socket_cb (PaddockSessionPorts *ports,
                                              guint                id,
                                              int                  family,
                                              gpointer             error,
                                              PaddockSessionImpl  *self)
{
  PaddockExecutor *executor = paddock_session_process_get_executor (self->process);

  if (executor == NULL)
    {
      g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_BUSY, "The sandbox no longer listens");
      return FALSE;
    }
  return paddock_executor_request_socket (executor, id, family, error);
}

static void
paddock_session_iface_init (PaddockIpcSession1Iface *iface)
{
  iface->handle_exec = paddock_session_impl_handle_exec;
  iface->handle_run = paddock_session_impl_handle_run;
  iface->handle_stop = paddock_session_impl_handle_stop;
  iface->handle_destroy = paddock_session_impl_handle_destroy;
}

/* ------------------------------------------------------------------------ */

GVariant *
paddock_session_impl_describe (PaddockSessionImpl *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_IMPL (self), NULL);

  return paddock_session_describe (PADDOCK_IPC_SESSION1 (self), self->id, self->object_path, &self->config,
                                   paddock_session_process_get_cgroup_path (self->process),
                                   paddock_session_process_get_cgroup_reason (self->process));
}

const char *
paddock_session_impl_get_id (PaddockSessionImpl *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_IMPL (self), NULL);

  return self->id;
}

const char *
paddock_session_impl_get_owner (PaddockSessionImpl *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_IMPL (self), NULL);

  return self->config.owner;
}

/* The agent preset it runs in, or NULL. */
const char *
paddock_session_impl_get_agent (PaddockSessionImpl *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_IMPL (self), NULL);

  return self->config.agent;
}

const char *
paddock_session_impl_get_object_path (PaddockSessionImpl *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_IMPL (self), NULL);

  return self->object_path;
}

static void
paddock_session_impl_dispose (GObject *object)
{
  PaddockSessionImpl *self = PADDOCK_SESSION_IMPL (object);

  /* The terminal's sources go now; its scrollback with the session. */
  g_clear_object (&self->terminal_calls);
  if (self->terminal != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->terminal, self);
      paddock_terminal_close (self->terminal);
    }
  /* Nothing the executor says is listened to any more, nor the start's
   * look; before the executor goes with the process. */
  if (self->launch != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->launch, self);
      paddock_session_launch_close (self->launch);
      g_clear_object (&self->launch);
    }
  /* A keeper let go (with the executor) runs on with whatever is left of
   * its tree (the daemon's shutdown ended it already: kill_now()). */
  if (self->process != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->process, self);
      paddock_session_process_close (self->process);
    }
  /* A flush still on its way finds the session gone. */
  g_cancellable_cancel (self->durable_cancellable);
  /* Calls still waiting on the session get their answer now; callers
   * are no longer watched. */
  if (self->runner != NULL)
    paddock_command_runner_close (self->runner);
  if (self->stop != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->stop, self);
      paddock_session_stop_close (self->stop);
    }
  /* The leftovers' poll and the calls waiting on it go with the other sources. */
  if (self->revival != NULL)
    g_signal_handlers_disconnect_by_data (self->revival, self);
  g_clear_object (&self->revival);
  paddock_session_impl_drop_stage_limit (self);
  if (self->stage_limit != NULL)
    g_signal_handlers_disconnect_by_data (self->stage_limit, self);
  g_clear_object (&self->stage_limit);
  if (self->processes != NULL)
    g_signal_handlers_disconnect_by_data (self->processes, self);
  g_clear_object (&self->processes);
  if (self->commits != NULL)
    g_signal_handlers_disconnect_by_data (self->commits, self);
  g_clear_object (&self->commits);
  if (self->staging != NULL)
    g_signal_handlers_disconnect_by_data (self->staging, self);
  g_clear_object (&self->staging);
  g_clear_object (&self->stage);
  if (self->network != NULL)
    {
      g_signal_handlers_disconnect_by_data (_paddock_session_network_get_ports (self->network), self);
      g_signal_handlers_disconnect_by_data (self->network, self);
    }
  g_clear_object (&self->network);
  /* Last: a part let go above may still ask it (a thaw). */
  if (self->gate != NULL)
    g_signal_handlers_disconnect_by_data (self->gate, self);

  G_OBJECT_CLASS (paddock_session_impl_parent_class)->dispose (object);
}

static void
paddock_session_impl_finalize (GObject *object)
{
  PaddockSessionImpl *self = PADDOCK_SESSION_IMPL (object);

  g_clear_pointer (&self->id, g_free);
  g_clear_pointer (&self->object_path, g_free);
  g_clear_object (&self->terminal);
  g_clear_object (&self->gate);
  g_clear_object (&self->stop);
  g_clear_object (&self->runner);
  g_clear_object (&self->commands);
  g_clear_object (&self->process);
  g_clear_pointer (&self->record_path, g_free);
  g_clear_object (&self->durable_cancellable);
  paddock_session_config_clear (&self->config);

  G_OBJECT_CLASS (paddock_session_impl_parent_class)->finalize (object);
}

PADDOCK_DBUS_DEFINE_CHECKED_VTABLE (paddock_session_impl)

static void
paddock_session_impl_class_init (PaddockSessionImplClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  /* Every call's arguments are checked before a handler sees them. */
  G_DBUS_INTERFACE_SKELETON_CLASS (klass)->get_vtable = paddock_session_impl_get_checked_vtable;

  object_class->dispose = paddock_session_impl_dispose;
  object_class->finalize = paddock_session_impl_finalize;

  /* Something the manager lists changed (state, process count). */
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /* Destroyed: stopped, files deleted; the manager unexports and drops it. */
  signals[SIGNAL_DESTROYED] = g_signal_new ("destroyed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                            0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
paddock_session_impl_init (PaddockSessionImpl *self)
{
  paddock_ipc_session1_set_last_recovery (PADDOCK_IPC_SESSION1 (self), "");
  self->commands = paddock_session_commands_new ();
  self->process = paddock_session_process_new (self->commands);
  g_signal_connect (self->process, "exited", G_CALLBACK (paddock_session_impl_exited_cb), self);
  g_signal_connect (self->process, "counted", G_CALLBACK (paddock_session_impl_process_counted_cb), self);
  g_signal_connect (self->process, "gone", G_CALLBACK (paddock_session_impl_process_gone_cb), self);
  self->stop = paddock_session_stop_new ();
  g_signal_connect (self->stop, "sweep", G_CALLBACK (paddock_session_impl_stop_sweep_cb), self);
  g_signal_connect (self->stop, "ended", G_CALLBACK (paddock_session_impl_stop_ended_cb), self);
  self->durable_cancellable = g_cancellable_new ();
}

PaddockSessionImpl *
paddock_session_impl_new (const char                 *id,
                          const PaddockSessionConfig *config)
{
  PaddockSessionImpl *self;
  PaddockIpcSession1 *session;

  g_return_val_if_fail (id != NULL, NULL);
  g_return_val_if_fail (config != NULL && config->command != NULL && config->command[0] != NULL, NULL);

  self = g_object_new (PADDOCK_TYPE_SESSION_IMPL, NULL);
  session = PADDOCK_IPC_SESSION1 (self);
  self->id = g_strdup (id);
  self->object_path = g_strconcat (PADDOCK_OBJECT_PATH "/session/", id, NULL);
  paddock_session_config_copy (&self->config, config);
  self->gate = paddock_session_gate_new (id);
  g_signal_connect_swapped (self->gate, "refuse", G_CALLBACK (_paddock_session_impl_refuse_leftovers), self);
  g_signal_connect_swapped (self->gate, "is-live", G_CALLBACK (_paddock_session_impl_is_live), self);
  g_signal_connect_swapped (self->gate, "freeze", G_CALLBACK (_paddock_session_impl_freeze), self);
  g_signal_connect_swapped (self->gate, "list-pids", G_CALLBACK (paddock_session_impl_list_pids), self);
  self->runner = paddock_command_runner_new (id, self->object_path, config->workspace, self->commands);
  if (config->home != NULL)
    {
      g_autofree char *session_dir = g_path_get_dirname (config->home);
      PaddockStageKind kind;

      self->network = _paddock_session_network_new (id, session_dir, self->gate, &self->config);
      self->record_path = g_build_filename (session_dir, "session.json", NULL);
      if (paddock_stage_kind_from_string (config->staging, &kind))
        {
          g_autofree char *stage_dir = g_build_filename (session_dir, "stage", NULL);
          self->stage = paddock_stage_new (stage_dir, config->workspace, kind);
        }
    }
  if (self->network == NULL)
    self->network = _paddock_session_network_new (id, NULL, self->gate, &self->config);
  /* SetNetworkPolicy's new policy is in the config: recorded. */
  g_signal_connect_swapped (self->network, "policy-changed", G_CALLBACK (paddock_session_impl_save), self);
  g_signal_connect (_paddock_session_network_get_ports (self->network), "request-socket",
                    G_CALLBACK (paddock_session_impl_ports_request_socket_cb), self);
  _paddock_session_network_attach (self->network, session);
  self->processes = paddock_session_processes_new (self->gate);
  paddock_session_processes_attach (self->processes, session);
  self->stage_limit = paddock_session_stage_limit_new (id, self->gate);
  g_signal_connect (self->stage_limit, "limit-set", G_CALLBACK (paddock_session_impl_stage_limit_set_cb), self);
  paddock_session_stage_limit_attach (self->stage_limit, session);
  self->commits = paddock_session_commits_new (id, self->stage, self->gate);
  paddock_session_commits_attach (self->commits, session);
  self->staging = paddock_session_staging_new (id, self->stage, self->gate);
  /* What the stage's journal folder last recovered is published as is. */
  g_signal_connect_swapped (self->staging, "last-recovery", G_CALLBACK (paddock_ipc_session1_set_last_recovery),
                            self);
  paddock_session_staging_attach (self->staging, session);
  self->terminal = paddock_terminal_new (PADDOCK_SCROLLBACK_DEFAULT_CAPACITY);
  g_signal_connect (self->terminal, "output", G_CALLBACK (paddock_session_impl_terminal_output_cb), self);
  self->terminal_calls = paddock_terminal_calls_new (id, self->terminal, self->gate, &self->config);
  paddock_terminal_calls_attach (self->terminal_calls, session);
  paddock_session_impl_make_launch (self);
  /* Kept in the session's folder: a later daemon shows it again. */
  if (self->record_path != NULL)
    {
      g_autofree char *session_dir = g_path_get_dirname (self->record_path);
      g_autofree char *scrollback_path = g_build_filename (session_dir, "scrollback", NULL);
      g_autoptr(GError) scrollback_error = NULL;

      if (!paddock_terminal_persist_scrollback (self->terminal, scrollback_path, &scrollback_error))
        g_message ("Session %s: %s; its scrollback is kept in memory only", id, scrollback_error->message);
    }
  /* What was read back is output too: ReadOutput's offsets go on from it. */
  paddock_ipc_session1_set_output_offset (session, paddock_terminal_get_end_offset (self->terminal));

  paddock_ipc_session1_set_id (session, id);
  paddock_session_config_publish (&self->config, session);
  self->state = g_intern_static_string ("starting");
  paddock_ipc_session1_set_state (session, self->state);
  self->exit_status = PADDOCK_EXIT_STATUS_RUNNING;
  paddock_ipc_session1_set_exit_status (session, self->exit_status);
  paddock_ipc_session1_set_created (session, (guint64) g_get_real_time ());

  return self;
}

/* The daemon is replaced (--replace): a running session whose keeper
 * holds it (paddock-keeper-protocol.h, --hold-dir) is let go, not
 * killed, for the next daemon to adopt: its record is on disk as running
 * (flushed before the state dir's lock goes), the keeper sees our end of
 * its control socket close and listens for the successor. FALSE for any
 * other session: the caller ends it. Its commands end with us, their
 * callers told they were lost: a host command's keeper ends its tree
 * (--end-with-daemon), a sandbox's command supervisor at the hangup of
 * its channel, which only we held. */
gboolean
paddock_session_impl_hand_over (PaddockSessionImpl *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_IMPL (self), FALSE);

  if (self->record_path == NULL || self->revival != NULL ||
      !paddock_session_process_has_running_keeper (self->process) ||
      g_strcmp0 (self->state, "running") != 0)
    return FALSE;
  paddock_session_impl_save (self);
  /* A sandbox's keeper holds it from the record on (asked again, in case
   * the record was not durable yet: the request comes before our end of
   * its socket closes, so it is read first). */
  paddock_session_process_hold (self->process, TRUE);
  paddock_session_impl_fail_pending_execs (self);
  g_signal_handlers_disconnect_by_data (self->terminal, self);
  paddock_terminal_close (self->terminal);
  paddock_session_launch_disconnect_executor (self->launch);
  paddock_command_runner_set_executor (self->runner, NULL);
  paddock_session_process_close (self->process);
  g_message ("Session %s: handed over to the next daemon", self->id);
  return TRUE;
}

/* Whether this restored session was adopted (it has an executor: a
 * restored one gets one only from paddock_session_revival_restore()). */
gboolean
_paddock_session_impl_is_adopted (PaddockSessionImpl *self)
{
  return paddock_session_process_get_executor (self->process) != NULL;
}

/* A session recorded by an earlier daemon: adopted from its keeper, or
 * what is left of it pinned, to be ended by
 * paddock_session_impl_end_leftovers() (paddock-session-revival.c).
 * Returns NULL for a record that cannot be read. */
PaddockSessionImpl *
paddock_session_impl_new_from_record (const char  *record_path,
                                      const char  *helper,
                                      GError     **error)
{
  g_autoptr(PaddockSessionRecord) record = paddock_session_record_load (record_path, error);

  if (record == NULL)
    return NULL;
  return paddock_session_impl_new_from_loaded_record (record, record_path, helper);
}

/* How many of the leftovers still run: listed, and those pinned since in
 * the record too. */
static void
paddock_session_impl_revival_changed_cb (PaddockSessionRevival *revival,
                                         guint                  running,
                                         PaddockSessionImpl    *self)
{
  paddock_ipc_session1_set_process_count (PADDOCK_IPC_SESSION1 (self), running);
  paddock_session_impl_save (self);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

/* The leftovers are all gone, and the revival with them: the session is
 * what its record said it ended as, now on disk (set_state saves its own
 * record), and the calls that waited are begun as if nothing had run. */
static void
paddock_session_impl_revival_ended_cb (PaddockSessionRevival *revival,
                                       const char            *final_state,
                                       GPtrArray             *waiters,
                                       PaddockSessionImpl    *self)
{
  g_autoptr(PaddockSessionImpl) hold = g_object_ref (self);

  g_signal_handlers_disconnect_by_data (self->revival, self);
  g_clear_object (&self->revival);
  paddock_ipc_session1_set_process_count (PADDOCK_IPC_SESSION1 (self), 0);
  if (g_strcmp0 (self->state, final_state) == 0)
    {
      paddock_session_impl_save (self);
      g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
    }
  else
    paddock_session_impl_set_state (self, final_state);

  for (guint i = 0; i < waiters->len; i++)
    {
      Waiter *waiter = g_ptr_array_index (waiters, i);
      GDBusMethodInvocation *invocation = g_steal_pointer (&waiter->invocation);

      /* A Destroy before it may have answered for the session already. */
      if (paddock_session_impl_check_alive (self, invocation))
        paddock_session_impl_begin_stop (self, invocation, 0, waiter->destroy, waiter->requested);
    }
}

/* The same, of a record read already (or salvaged: see
 * paddock-session-record-salvage.c). */
PaddockSessionImpl *
paddock_session_impl_new_from_loaded_record (const PaddockSessionRecord *record,
                                             const char                 *record_path,
                                             const char                 *helper)
{
  g_auto(PaddockSessionRestore) restore = { 0, };
  g_autoptr(PaddockSessionImpl) self = NULL;
  PaddockIpcSession1 *session;

  paddock_session_restore_read (&restore, record, record_path, helper);
  self = paddock_session_impl_new (record->id, &restore.config);
  session = PADDOCK_IPC_SESSION1 (self);
  self->revival = paddock_session_revival_new (self->id, &self->config, self->process, self->terminal,
                                               self->network, self->runner, self->stage, self->staging);
  g_signal_connect (self->revival, "changed", G_CALLBACK (paddock_session_impl_revival_changed_cb), self);
  g_signal_connect (self->revival, "ended", G_CALLBACK (paddock_session_impl_revival_ended_cb), self);
  if (paddock_session_revival_restore (self->revival, session, &restore, record, &self->state, &self->exit_status))
    {
      /* Adopted: its executor's events are the session's, and its stage
       * is bounded again by the limit its creator chose (the record keeps it). */
      paddock_session_launch_connect_executor (self->launch);
      if (record->sandboxed && self->stage != NULL)
        paddock_session_impl_make_stage_limit (self);
    }
  /* Kept while what is left of it is ended. */
  if (!paddock_session_revival_has_leftovers (self->revival))
    g_clear_object (&self->revival);
  /* As the record says, or running (adopted). */
  paddock_ipc_session1_set_exit_status (session, self->exit_status);
  paddock_ipc_session1_set_state (session, self->state);
  paddock_session_impl_save (self);

  return g_steal_pointer (&self);
}

/* Starts ending what an earlier daemon left running of this restored
 * session (paddock_session_revival_end_leftovers()): SIGTERM now, SIGKILL
 * at @kill_at, one grace for every session restored at once. */
void
paddock_session_impl_end_leftovers (PaddockSessionImpl *self,
                                    gint64              kill_at)
{
  g_return_if_fail (PADDOCK_IS_SESSION_IMPL (self));

  if (self->revival != NULL)
    paddock_session_revival_end_leftovers (self->revival, kill_at);
}
