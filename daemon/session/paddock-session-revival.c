/* paddock-session-revival.c — a restored session: adopted from its keeper, or what an earlier daemon left of it ended
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A daemon that starts again finds the records of its sessions. A session
 * whose keeper held it for us (paddock-keeper-protocol.h, --hold-dir; a
 * sandboxed one's also its helper's control socket, --hold-control-fd)
 * is taken over: its terminal, its tree, its network the same, running on
 * as if started here. Any other that still has processes in this boot
 * (matched by boot id and start time, never by pid alone) has them
 * pinned and ended (paddock-session-leftovers.c): no daemon supervises
 * them any more, and none may run unsupervised. Until they are gone the
 * session is listed with its recorded state and process count, answers
 * Busy to what needs a live session, and keeps the Stop and Destroy calls
 * for when they are; then it is what its record said it ended as, its
 * files kept for review. The session is told by signals; this object
 * never calls into it.
 */

#include "config.h"

#include "paddock-autofd.h"
#include "paddock-cgroup.h"
#include "paddock-error.h"
#include "paddock-exit-status.h"
#include "paddock-keeper-client.h"
#include "paddock-record-writer.h"
#include "paddock-session-leftovers.h"
#include "paddock-session-revival.h"
#include "paddock-session-stop.h"
#if PADDOCK_ENABLE_LINUX
#include "paddock-linux-executor.h"
#endif

struct _PaddockSessionRevival
{
  GObject                  parent_instance;

  char                    *session_id;
  PaddockSessionConfig    *config;     /* the session's, borrowed */
  PaddockSessionProcess   *process;
  PaddockTerminal         *terminal;
  PaddockSessionNetwork   *network;
  PaddockCommandRunner    *runner;
  PaddockStage            *stage;      /* or NULL */
  PaddockSessionStaging   *staging;

  /* Not adopted: what an earlier daemon left running of it, being ended,
   * with the state it goes to once that is gone and the Stop and Destroy
   * calls that wait for it; NULL once it is gone, or adopted. */
  PaddockSessionLeftovers *leftovers;
};

enum {
  SIGNAL_CHANGED,
  SIGNAL_ENDED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (PaddockSessionRevival, paddock_session_revival, G_TYPE_OBJECT)

/* Its proxy's socket, which pid 1 kept: served again once it comes. */
static void
request_proxy (PaddockSessionRevival *self)
{
#if PADDOCK_ENABLE_LINUX
  g_autoptr(GError) error = NULL;
  PaddockExecutor *executor = paddock_session_process_get_executor (self->process);

  if (!paddock_linux_executor_request_proxy (PADDOCK_LINUX_EXECUTOR (executor), &error))
    g_message ("Session %s: could not ask its sandbox for its proxy's socket: %s", self->session_id, error->message);
#endif
}

/* Taken over from the keeper that held it, running on as if started here,
 * its terminal and its tree the same. FALSE (and nothing changed but the
 * pinned keeper's pidfd, kept) where the keeper would not hand it over:
 * its leftovers are then ended as before. */
static gboolean
adopt (PaddockSessionRevival *self,
       PaddockIpcSession1    *session,
       PaddockSessionRestore *restore,
       gboolean               sandboxed)
{
  g_autoptr(GError) error = NULL;
  paddock_autofd int pty_master = -1;
  PaddockKeeperClient *keeper = NULL;
  gboolean own_network = sandboxed && g_strcmp0 (self->config->net_mode, "host") != 0;

  /* The proxy (or one a none session was switched from) judges by the
   * recorded policy, parsed now: a policy that no longer parses is not
   * guessed at, and the session is not adopted. */
  if (own_network)
    {
      g_autoptr(PaddockDomainRules) rules = paddock_session_restore_parse_policy (restore, self->session_id);

      if (rules == NULL)
        return FALSE;
      g_set_object (&self->config->net_rules, rules);
    }

  /* An earlier daemon killed during an Apply left the session frozen
   * (paddock-session-staging.c), its keeper with it: thawed, or the keeper
   * could not hand it over. */
  if (restore->cgroup != NULL)
    (void) paddock_cgroup_freeze (restore->cgroup, FALSE);

  keeper = paddock_session_process_adopt (self->process, self->session_id, restore, sandboxed, &pty_master, &error);
  if (keeper == NULL)
    {
      g_message ("Session %s: could not adopt it from its keeper %d: %s; ending what is left of it",
                 self->session_id, (int) restore->tree.leftover_keeper, error->message);
      return FALSE;
    }
  paddock_command_runner_set_executor (self->runner, paddock_session_process_get_executor (self->process));
  paddock_terminal_take_pty (self->terminal, paddock_steal_fd (&pty_master));
  paddock_ipc_session1_set_main_pid (session, (guint32) paddock_session_process_get_pid (self->process));
  paddock_ipc_session1_set_process_count (session, MAX (paddock_session_process_count (self->process), 1));
  _paddock_session_network_prepare_adopted (self->network, sandboxed ? self->config->net_mode : "host");
  _paddock_session_ports_adopted (_paddock_session_network_get_ports (self->network));
  _paddock_session_network_spawned (self->network);
  if (own_network)
    request_proxy (self);
  /* What its start saw, marked as recorded then: a sandbox's look needs
   * the start-up report only that start had. */
  {
    g_autoptr(GVariant) boundary = paddock_session_restore_load_boundary (restore, self->session_id);

    if (boundary != NULL)
      paddock_ipc_session1_set_boundary (session, boundary);
  }
  g_message ("Session %s: adopted from its keeper %d, %s %d running", self->session_id,
             (int) paddock_keeper_client_get_keeper_pid (keeper), sandboxed ? "sandbox" : "agent",
             (int) paddock_session_process_get_pid (self->process));
  return TRUE;
}

/* Whatever of the session runs now and is not pinned yet goes into
 * @pinned. */
static void
leftovers_pin_again_cb (PaddockSessionLeftovers *leftovers,
                        GArray                  *pinned,
                        PaddockSessionRevival   *self)
{
  paddock_session_process_pin_again (self->process, pinned);
}

/* How many of them still run; 0: all gone, and the session is what its
 * record said it ended as, the calls that waited begun as if nothing had
 * run. */
static void
leftovers_changed_cb (PaddockSessionLeftovers *leftovers,
                      guint                    running,
                      PaddockSessionRevival   *self)
{
  g_autoptr(PaddockSessionRevival) hold = g_object_ref (self);
  g_autoptr(GPtrArray) waiters = NULL;
  g_autofree char *final_state = NULL;

  if (running > 0)
    {
      g_signal_emit (self, signals[SIGNAL_CHANGED], 0, running);
      return;
    }

  /* Gone before the session hears it: the record it saves now is its own. */
  final_state = g_strdup (paddock_session_leftovers_get_final_state (self->leftovers));
  waiters = paddock_session_leftovers_take_waiters (self->leftovers);
  g_signal_handlers_disconnect_by_data (self->leftovers, self);
  g_clear_object (&self->leftovers);
  paddock_session_process_forget_leftovers (self->process);
  g_signal_emit (self, signals[SIGNAL_ENDED], 0, final_state, waiters);
}

gboolean
paddock_session_revival_restore (PaddockSessionRevival      *self,
                                 PaddockIpcSession1         *session,
                                 PaddockSessionRestore      *restore,
                                 const PaddockSessionRecord *record,
                                 const char                **state,
                                 int                        *exit_status)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_REVIVAL (self), FALSE);
  g_return_val_if_fail (self->leftovers == NULL, FALSE);

  paddock_ipc_session1_set_created (session, (guint64) record->created);
  if (record->damaged != NULL)
    paddock_ipc_session1_set_damaged (session, record->damaged);

  /* An apply the earlier daemon was killed in the middle of: finished or
   * rolled back now, before anyone can look at the workspace through us
   * (an adopted session's too: its agent runs on, but the batch was ours). */
  if (self->stage != NULL)
    {
      paddock_session_restore_recover_stage (self->stage, self->session_id);
      paddock_session_staging_refresh_last_recovery (self->staging);
    }

  /* Its keeper held it for us: the session runs on, adopted. */
  if (paddock_session_restore_may_adopt (restore, record) &&
      adopt (self, session, restore, record->sandboxed))
    {
      *state = g_intern_static_string ("running");
      *exit_status = PADDOCK_EXIT_STATUS_RUNNING;
      return TRUE;
    }

  /* Not adopted: whatever is left of it is pinned, to be ended. */
  paddock_session_restore_pin_leftovers (restore, record);
  paddock_session_process_take_leftovers (self->process, restore);

  /* Listed as it was until they are gone; as the record says: it is on
   * disk already. */
  paddock_ipc_session1_set_process_count (session,
                                          restore->final_state != NULL ? MAX (restore->pinned->len, 1) : 0);
  self->leftovers = paddock_session_restore_take_leftovers (restore, record);
  if (self->leftovers != NULL)
    {
      g_signal_connect (self->leftovers, "pin-again", G_CALLBACK (leftovers_pin_again_cb), self);
      g_signal_connect (self->leftovers, "changed", G_CALLBACK (leftovers_changed_cb), self);
    }
  *state = g_intern_string (restore->state);
  *exit_status = restore->exit_status;
  return FALSE;
}

gboolean
paddock_session_revival_has_leftovers (PaddockSessionRevival *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_REVIVAL (self), FALSE);

  return self->leftovers != NULL;
}

/* The earlier daemon's record names the processes it left: it stays as
 * it is until they are gone (with those pinned since added). */
gboolean
paddock_session_revival_save (PaddockSessionRevival *self,
                              const char            *record_path)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_REVIVAL (self), FALSE);

  if (self->leftovers == NULL)
    return FALSE;
  paddock_session_leftovers_save (self->leftovers, record_path);
  return TRUE;
}

/* SIGTERM now, SIGKILL at @kill_at (the same moment for every session
 * restored at once: one grace for all). Returns once the record that
 * names them is on disk (written at the restore, see
 * paddock_session_leftovers_save()), not waiting for them. */
void
paddock_session_revival_end_leftovers (PaddockSessionRevival *self,
                                       gint64                 kill_at)
{
  g_return_if_fail (PADDOCK_IS_SESSION_REVIVAL (self));

  if (self->leftovers == NULL)
    return;
  /* The SIGTERM may end the agent, after which only that record leads a
   * daemon killed meanwhile to what ignores it (without a cgroup). Every
   * restored record is queued by now: the first session's flush writes
   * them all, the others' find nothing left to wait for. */
  paddock_record_writer_flush ();
  paddock_session_leftovers_begin (self->leftovers, kill_at);
}

/* Stop or Destroy while the leftovers still run: they end with the grace
 * asked (or the one under way, if shorter), and the call is begun as
 * Stop/Destroy once they are gone ("ended"); or, as Stop does, answered
 * with an error if they outlive their SIGKILL by 10 s
 * (paddock-session-leftovers.c). */
gboolean
paddock_session_revival_wait (PaddockSessionRevival *self,
                              GDBusMethodInvocation *invocation,
                              guint                  grace_seconds,
                              gboolean               destroy)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_REVIVAL (self), FALSE);

  if (self->leftovers == NULL)
    return FALSE;
  paddock_session_leftovers_wait (self->leftovers, invocation, grace_seconds, destroy);
  return TRUE;
}

/* While the leftovers are ended the session is listed as its record said
 * (mostly "running", with its process count), but it has no sandbox of
 * ours, no supervisor to run anything in, no network to forward to or set
 * a policy on, and no cgroup of ours to hold its processes still while
 * the stage is read for an apply: calls that need any of that are
 * answered Busy (the session says how it ended, as its record has it,
 * once they are gone). */
gboolean
paddock_session_revival_refuse (PaddockSessionRevival *self,
                                GDBusMethodInvocation *invocation)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_REVIVAL (self), FALSE);

  if (self->leftovers == NULL)
    return FALSE;
  g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_BUSY,
                                         "Session %s is not running: what an earlier daemon left running "
                                         "of it is being ended (it says %s once that is done)", self->session_id,
                                         paddock_session_leftovers_get_final_state (self->leftovers));
  return TRUE;
}

/* Daemon shutdown: what is left of it is not left running unsupervised. */
void
paddock_session_revival_kill_now (PaddockSessionRevival *self)
{
  g_return_if_fail (PADDOCK_IS_SESSION_REVIVAL (self));

  if (self->leftovers != NULL)
    paddock_session_leftovers_kill_now (self->leftovers);
}

static void
paddock_session_revival_dispose (GObject *object)
{
  PaddockSessionRevival *self = PADDOCK_SESSION_REVIVAL (object);

  /* Its poll and the calls waiting on it go with the session's sources. */
  if (self->leftovers != NULL)
    g_signal_handlers_disconnect_by_data (self->leftovers, self);
  g_clear_object (&self->leftovers);
  g_clear_object (&self->process);
  g_clear_object (&self->terminal);
  g_clear_object (&self->network);
  g_clear_object (&self->runner);
  g_clear_object (&self->stage);
  g_clear_object (&self->staging);

  G_OBJECT_CLASS (paddock_session_revival_parent_class)->dispose (object);
}

static void
paddock_session_revival_finalize (GObject *object)
{
  PaddockSessionRevival *self = PADDOCK_SESSION_REVIVAL (object);

  g_free (self->session_id);

  G_OBJECT_CLASS (paddock_session_revival_parent_class)->finalize (object);
}

static void
paddock_session_revival_class_init (PaddockSessionRevivalClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_session_revival_dispose;
  object_class->finalize = paddock_session_revival_finalize;

  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
  signals[SIGNAL_ENDED] = g_signal_new ("ended", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                        0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_POINTER);
}

static void
paddock_session_revival_init (PaddockSessionRevival *self)
{
}

PaddockSessionRevival *
paddock_session_revival_new (const char            *session_id,
                             PaddockSessionConfig  *config,
                             PaddockSessionProcess *process,
                             PaddockTerminal       *terminal,
                             PaddockSessionNetwork *network,
                             PaddockCommandRunner  *runner,
                             PaddockStage          *stage,
                             PaddockSessionStaging *staging)
{
  PaddockSessionRevival *self;

  g_return_val_if_fail (session_id != NULL && config != NULL, NULL);
  g_return_val_if_fail (PADDOCK_IS_SESSION_PROCESS (process), NULL);
  g_return_val_if_fail (PADDOCK_IS_TERMINAL (terminal), NULL);
  g_return_val_if_fail (PADDOCK_IS_SESSION_NETWORK (network), NULL);
  g_return_val_if_fail (PADDOCK_IS_COMMAND_RUNNER (runner), NULL);
  g_return_val_if_fail (PADDOCK_IS_SESSION_STAGING (staging), NULL);

  self = g_object_new (PADDOCK_TYPE_SESSION_REVIVAL, NULL);
  self->session_id = g_strdup (session_id);
  self->config = config;
  self->process = g_object_ref (process);
  self->terminal = g_object_ref (terminal);
  self->network = g_object_ref (network);
  self->runner = g_object_ref (runner);
  self->stage = stage != NULL ? g_object_ref (stage) : NULL;
  self->staging = g_object_ref (staging);
  return self;
}
