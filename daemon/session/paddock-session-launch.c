/* paddock-session-launch.c — a session's start: its agent started through its executor, what the executor says routed, the start's outcome reported
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The start of a session's agent, and what its executor says afterwards:
 * given the parts the start concerns (the session's processes, terminal,
 * network, command runner, stage and config), it prepares them, starts the
 * agent, and routes each of the executor's signals to the part it is
 * about. What the session itself must act on (its state, its record, its
 * creator's answer) it reports with signals: "started", "failed", "ended",
 * "end-kept", "command-gone". It owns the start's own state: whether a
 * creator waits, the sandbox made ahead it was offered, the environment
 * the agent was given, and the look at a sandbox's boundary
 * (PaddockSessionStartup).
 */

#include "config.h"

#include <signal.h>
#include <sys/wait.h>

#include "paddock-autofd.h"
#include "paddock-error.h"
#include "paddock-executor.h"
#include "paddock-exit-status.h"
#include "paddock-keeper-client.h"
#include "paddock-record-writer.h"
#include "paddock-session-launch.h"
#include "paddock-session-ports.h"
#include "paddock-session-startup.h"

struct _PaddockSessionLaunch
{
  GObject                     parent_instance;

  char                       *id;
  const PaddockSessionConfig *config;   /* the session's */
  PaddockIpcSession1         *session;  /* borrowed: it owns us */
  PaddockSessionProcess      *process;
  PaddockTerminal            *terminal;
  PaddockSessionNetwork      *network;
  PaddockCommandRunner       *runner;
  PaddockStage               *stage;    /* or NULL */

  /* A creator waits for the start's outcome (the session's ready func). */
  gboolean                    waiting;
  PaddockSpareSandbox        *offered_spare;  /* start() only: a sandbox made ahead it may take */
  GStrv                       agent_env;      /* the environment the agent was given, for the boundary */
  /* Where the boundary seen is kept (the session's folder), or NULL. */
  char                       *session_dir;
  /* A sandbox's start: its boundary looked at in a thread, after
   * "started", and an end meanwhile held back (paddock-session-startup.c). */
  PaddockSessionStartup      *startup;
};

enum {
  SIGNAL_STARTED,
  SIGNAL_FAILED,
  SIGNAL_ENDED,
  SIGNAL_END_KEPT,
  SIGNAL_COMMAND_GONE,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (PaddockSessionLaunch, paddock_session_launch, G_TYPE_OBJECT)

/* The agent's environment: an allowlist (paddock_executor_build_environment()),
 * its leased ports, and what the creator passed. */
static GStrv
build_environment (PaddockSessionLaunch *self)
{
  g_auto(GStrv) ports = _paddock_session_network_add_port_environment (self->config->leases, NULL);

  return paddock_executor_build_environment (self->config, self->id, (const char * const *) ports);
}

/* The environment of the session's agent and commands: the allowlist, as
 * the executor's view needs it, and where the proxy is. */
GStrv
paddock_session_launch_build_environment (PaddockSessionLaunch *self)
{
  g_auto(GStrv) env = NULL;
  PaddockExecutor *executor;

  g_return_val_if_fail (PADDOCK_IS_SESSION_LAUNCH (self), NULL);

  env = build_environment (self);
  executor = paddock_session_process_get_executor (self->process);
  if (executor != NULL)
    env = paddock_executor_adapt_environment (executor, g_steal_pointer (&env), self->config->env);
  env = _paddock_session_network_add_environment (self->network, g_steal_pointer (&env));
  return g_steal_pointer (&env);
}

/* The last line the sandbox wrote on the terminal before it gave up: its
 * failures are one line, "paddock-sandbox: why". */
static char *
paddock_session_launch_last_line (PaddockSessionLaunch *self)
{
  char *line = paddock_terminal_dup_last_line (self->terminal);

  return line != NULL ? line : g_strdup ("the sandbox ended without saying why");
}

/* Events about commands run inside the sandbox, for the runner; their
 * objects are published where the session is, while it is. */
static void
paddock_session_launch_command_event (PaddockSessionLaunch *self,
                                      JsonObject           *event,
                                      int                  *fd)
{
  paddock_command_runner_handle_event (self->runner,
                                       g_dbus_interface_skeleton_get_connection (G_DBUS_INTERFACE_SKELETON (self->session)),
                                       event, fd);
}

/* A look at the session's boundary as it is now (paddock-session-boundary.c
 * copies what it reads, so it can be done in another thread). */
static PaddockBoundaryLook *
paddock_session_launch_new_boundary_look (PaddockSessionLaunch *self,
                                          JsonObject           *sandbox_report)
{
  g_autofree char *stage_dir = NULL;
  PaddockBoundaryInput input;

  paddock_boundary_input_init_for_config (&input, self->config, &stage_dir);
  paddock_session_process_fill_boundary_input (self->process, self->config, &input);
  input.sandbox_report = sandbox_report;
  input.given_env = (const char *const *) self->agent_env;
  return paddock_boundary_look_new (&input);
}

/* Publishes what was seen (Session1.Boundary), and keeps it in the
 * session's folder for a daemon that adopts the session: queued before
 * the record that makes a keeper hold, so it is on disk first. */
static void
paddock_session_launch_publish_boundary (PaddockSessionLaunch *self,
                                         PaddockBoundaryLook  *look)
{
  GVariant *published = paddock_boundary_look_get_published (look);

  paddock_ipc_session1_set_boundary (self->session, published);
  if (self->session_dir != NULL)
    {
      g_autofree char *path = g_build_filename (self->session_dir, "boundary", NULL);

      paddock_record_writer_replace (path, paddock_boundary_published_to_text (published));
    }
}

void
paddock_session_launch_look_now (PaddockSessionLaunch *self)
{
  g_autoptr(PaddockBoundaryLook) look = NULL;

  g_return_if_fail (PADDOCK_IS_SESSION_LAUNCH (self));

  look = paddock_session_launch_new_boundary_look (self, NULL);
  paddock_boundary_look_run (look);
  paddock_session_launch_publish_boundary (self, look);
}

/* The start failed after start() returned TRUE: the creator waits for
 * its answer. */
static void
paddock_session_launch_fail (PaddockSessionLaunch *self,
                             const GError         *error)
{
  g_autoptr(PaddockSessionLaunch) hold = g_object_ref (self);

  g_signal_emit (self, signals[SIGNAL_FAILED], 0, error);
}

/* The look at the boundary is back, on the main thread: the session runs
 * (or, strict, is refused) and its creator is answered. */
static void
paddock_session_launch_startup_looked_cb (PaddockSessionStartup *startup,
                                          PaddockBoundaryLook   *look,
                                          PaddockSessionLaunch  *self)
{
  g_autoptr(PaddockSessionLaunch) hold = g_object_ref (self);
  g_autoptr(GError) refusal = NULL;

  /* Unless its creator was answered meanwhile: the daemon is quitting
   * (abandon_start()), or the session's proxy could not be served. */
  if (!self->waiting)
    return;

  paddock_session_launch_publish_boundary (self, look);
  if (!paddock_boundary_check_strict (self->config->profile, paddock_boundary_look_get_boundary (look), &refusal))
    {
      paddock_session_process_signal_all (self->process, SIGKILL, NULL);
      paddock_session_launch_fail (self, refusal);
      return;
    }
  g_signal_emit (self, signals[SIGNAL_STARTED], 0, look);
}

/* The agent (host) or the sandbox's helper ended, and was reaped: what of
 * it the session's parts had goes, then the session hears of its end. */
static void
paddock_session_launch_sandbox_ended (PaddockSessionLaunch *self,
                                      int                   wait_status)
{
  g_autoptr(PaddockSessionLaunch) hold = g_object_ref (self);
  PaddockExecutor *executor = paddock_session_process_get_executor (self->process);
  gboolean sandboxed = paddock_session_process_is_sandboxed (self->process);
  g_autoptr(GError) start_error = NULL;
  int exit_status = 0;

  /* An adopted keeper that went without a word: nobody saw the end. */
  if (wait_status == PADDOCK_KEEPER_CLIENT_STATUS_UNKNOWN)
    exit_status = PADDOCK_EXIT_STATUS_UNKNOWN;
  else if (WIFEXITED (wait_status))
    exit_status = WEXITSTATUS (wait_status);
  else if (WIFSIGNALED (wait_status))
    exit_status = 128 + WTERMSIG (wait_status);

  /* What the commands' supervisors wrote before the sandbox ended counts:
   * a command that ended just before it reports its own exit status, not
   * the sandbox's SIGKILL below. */
  if (executor != NULL)
    paddock_executor_finish_commands (executor, !self->waiting);
  /* The sandbox is gone: Exec calls it never answered get an answer now. */
  paddock_command_runner_fail_pending (self->runner);
  /* Its network namespace went with it: nothing can use the proxy now. */
  _paddock_session_network_stop (self->network);
  if (sandboxed)
    {
      /* And every process of a sandbox went with its pid 1: nothing can
       * accept on its leased ports any more (see the session's
       * processes_gone()). */
      _paddock_session_ports_refuse_all (_paddock_session_network_get_ports (self->network));
      /* Its PID namespace went with it too: every command it ran was
       * killed, and no "command-exited" will come for them. Say so, or
       * their callers would wait for ever. */
      paddock_command_runner_sandbox_gone (self->runner);
    }

  /* The sandbox ended before the agent started (agent_ended() read every
   * event it sent, "started" would have been among them): the session
   * never ran. (A host agent ran once exec'd: its creator only waits for
   * its first record to be on disk, see the session's start(), and is
   * answered from there.) Drain the terminal first so its last words are
   * in the scrollback. */
  if (sandboxed && self->waiting)
    {
      g_autofree char *why = NULL;

      paddock_terminal_drain (self->terminal);
      why = paddock_session_launch_last_line (self);
      g_set_error (&start_error, PADDOCK_ERROR,
                   exit_status == 125 ? PADDOCK_ERROR_NOT_ENFORCED : PADDOCK_ERROR_FAILED,
                   "The session could not start (status %d): %s", exit_status, why);
    }
  g_signal_emit (self, signals[SIGNAL_ENDED], 0, exit_status, start_error);
}

/* The sandbox ended while we looked: now that the session ran (or was
 * refused), its end. */
static void
paddock_session_launch_startup_ended_cb (PaddockSessionStartup *startup,
                                         int                    wait_status,
                                         PaddockSessionLaunch  *self)
{
  paddock_session_launch_sandbox_ended (self, wait_status);
}

void
paddock_session_launch_agent_ended (PaddockSessionLaunch *self,
                                    int                   wait_status)
{
  /* Reading the sandbox's last events may drop the session's last
   * reference (a handler of those events may end the session, and the
   * manager let go of it): the caller holds it, this the launch. */
  g_autoptr(PaddockSessionLaunch) hold = g_object_ref (self);
  PaddockExecutor *executor;

  /* A sandbox that ran the agent may have said so in an event not read
   * yet. Its "started" is then looked at (or was being looked at
   * already): the session's end comes after its start, from
   * startup_ended_cb(). */
  executor = paddock_session_process_get_executor (self->process);
  if (executor != NULL && self->waiting && !paddock_session_startup_is_looking (self->startup))
    paddock_executor_drain_events (executor);
  if (paddock_session_startup_defer_end (self->startup, wait_status))
    return;
  paddock_session_launch_sandbox_ended (self, wait_status);
}

/* ------------------------------------------------------------------------ */
/* What the executor says                                                    */

/* Each of these holds the session (and with it the launch) while it
 * runs: an event can end the session's last reference (a start that
 * fails: the creator is answered and the session dropped) while it is
 * handled. */

/* The sandbox's proxy listens inside the session's namespace: its
 * listening socket. A session in proxy mode with nobody serving its proxy
 * would reach nothing and never say why: it does not run. */
static void
paddock_session_launch_link_proxy_cb (PaddockExecutor      *executor,
                                      int                  *fd,
                                      PaddockSessionLaunch *self)
{
  g_autoptr(GObject) hold = g_object_ref (G_OBJECT (self->session));
  g_autoptr(GError) proxy_error = NULL;

  if (*fd >= 0 &&
      !_paddock_session_network_take_listener (self->network, g_steal_fd (fd), &proxy_error))
    {
      g_message ("Session %s: %s; killing it", self->id, proxy_error->message);
      paddock_session_process_signal_all (self->process, SIGKILL, NULL);
      if (self->waiting)
        {
          g_prefix_error (&proxy_error, "The session could not start in proxy mode and was "
                          "killed at once: ");
          paddock_session_launch_fail (self, proxy_error);
        }
    }
}

/* A socket inside for a forwarded connection (paddock-session-ports.c). */
static void
paddock_session_launch_link_socket_cb (PaddockExecutor      *executor,
                                       gint64                id,
                                       int                  *fd,
                                       PaddockSessionLaunch *self)
{
  g_autoptr(GObject) hold = g_object_ref (G_OBJECT (self->session));

  _paddock_session_ports_socket_event (_paddock_session_network_get_ports (self->network), id, fd);
}

static void
paddock_session_launch_link_started_cb (PaddockExecutor      *executor,
                                        JsonObject           *report,
                                        JsonObject           *event,
                                        int                  *fd,
                                        PaddockSessionLaunch *self)
{
  g_autoptr(GObject) hold = g_object_ref (G_OBJECT (self->session));

  /* The layers are in place from here on: look at them, in a thread
   * (paddock-session-startup.c), once; the session runs, and its creator
   * is answered, once the look is done (startup_looked_cb()). */
  if (self->waiting && !paddock_session_startup_is_looking (self->startup))
    paddock_session_startup_look (self->startup, paddock_session_launch_new_boundary_look (self, report),
                                  self->session);
  else
    paddock_session_launch_command_event (self, event, fd);
}

static void
paddock_session_launch_link_command_event_cb (PaddockExecutor      *executor,
                                              JsonObject           *event,
                                              int                  *fd,
                                              PaddockSessionLaunch *self)
{
  g_autoptr(GObject) hold = g_object_ref (G_OBJECT (self->session));

  paddock_session_launch_command_event (self, event, fd);
}

/* The sandbox closed its end: no Exec waiting can be answered by it. */
static void
paddock_session_launch_link_closed_cb (PaddockExecutor      *executor,
                                       PaddockSessionLaunch *self)
{
  g_autoptr(GObject) hold = g_object_ref (G_OBJECT (self->session));

  paddock_command_runner_fail_pending (self->runner);
}

/* The agent's keeper keeps the end told before (it was asked to hold
 * the session after it): that end may go out now. */
static void
paddock_session_launch_end_kept_cb (PaddockExecutor      *executor,
                                    PaddockSessionLaunch *self)
{
  g_autoptr(PaddockSessionLaunch) hold = g_object_ref (self);

  /* Only a sandbox's: a host agent that ended before its keeper was asked
   * to hold was seen, under load, listed "stopped" by the next daemon
   * when this one was killed right after such an end went out (its keeper
   * not reachable; sessions-dbus' restart-ends-what-the-keeper-held, about
   * 1 in 4 runs unprivileged at load 3). Its end waits for its record. */
  if (paddock_session_process_is_sandboxed (self->process))
    g_signal_emit (self, signals[SIGNAL_END_KEPT], 0);
}

/* A command its executor started ended (host: its keeper reaped it). */
static void
paddock_session_launch_command_exited_cb (PaddockExecutor      *executor,
                                          int                   pid,
                                          int                   wait_status,
                                          PaddockSessionLaunch *self)
{
  paddock_command_runner_command_exited (self->runner, pid, wait_status);
}

/* Nothing is left of a command its executor started: the session, which
 * a host command keeps alive until then, may go. */
static void
paddock_session_launch_command_gone_cb (PaddockExecutor      *executor,
                                        int                   pid,
                                        PaddockSessionLaunch *self)
{
  g_autoptr(PaddockSessionLaunch) hold = g_object_ref (self);

  g_signal_emit (self, signals[SIGNAL_COMMAND_GONE], 0, pid);
}

void
paddock_session_launch_connect_executor (PaddockSessionLaunch *self)
{
  PaddockExecutor *executor;

  g_return_if_fail (PADDOCK_IS_SESSION_LAUNCH (self));

  executor = paddock_session_process_get_executor (self->process);
  g_signal_connect (executor, "end-kept", G_CALLBACK (paddock_session_launch_end_kept_cb), self);
  g_signal_connect (executor, "command-exited", G_CALLBACK (paddock_session_launch_command_exited_cb), self);
  g_signal_connect (executor, "command-gone", G_CALLBACK (paddock_session_launch_command_gone_cb), self);
  /* A sandbox's: running once it says the agent started. */
  g_signal_connect (executor, "started", G_CALLBACK (paddock_session_launch_link_started_cb), self);
  g_signal_connect (executor, "proxy", G_CALLBACK (paddock_session_launch_link_proxy_cb), self);
  g_signal_connect (executor, "socket", G_CALLBACK (paddock_session_launch_link_socket_cb), self);
  g_signal_connect (executor, "command-event", G_CALLBACK (paddock_session_launch_link_command_event_cb), self);
  g_signal_connect (executor, "closed", G_CALLBACK (paddock_session_launch_link_closed_cb), self);
}

void
paddock_session_launch_disconnect_executor (PaddockSessionLaunch *self)
{
  PaddockExecutor *executor;

  g_return_if_fail (PADDOCK_IS_SESSION_LAUNCH (self));

  executor = paddock_session_process_get_executor (self->process);
  if (executor != NULL)
    g_signal_handlers_disconnect_by_data (executor, self);
}

/* ------------------------------------------------------------------------ */
/* The start                                                                 */

void
paddock_session_launch_offer_spare (PaddockSessionLaunch *self,
                                    PaddockSpareSandbox  *spare)
{
  g_return_if_fail (PADDOCK_IS_SESSION_LAUNCH (self));

  self->offered_spare = spare;
}

/* Has SPARE make a sandbox ahead for the next session like this one (its
 * network mode), the one NEXT_ID, whose folder goes beside RECORD_PATH's. */
void
paddock_session_launch_refill_spare (PaddockSessionLaunch *self,
                                     PaddockSpareSandbox  *spare,
                                     const char           *next_id,
                                     const char           *record_path)
{
  g_autofree char *sessions_dir = NULL;
  g_autofree char *next_dir = NULL;
  PaddockExecutor *executor;

  g_return_if_fail (PADDOCK_IS_SESSION_LAUNCH (self));

  /* The next session's folder, beside this one's: its keeper binds its
   * socket there once that session runs. */
  if (record_path != NULL)
    {
      g_autofree char *session_dir = g_path_get_dirname (record_path);

      sessions_dir = g_path_get_dirname (session_dir);
      next_dir = g_build_filename (sessions_dir, next_id, NULL);
    }
  executor = paddock_session_process_get_executor (self->process);
  if (executor != NULL)
    paddock_executor_refill_spare (executor, spare, self->config, PADDOCK_SESSION_PROXY_PORT, next_id, next_dir);
}

gboolean
paddock_session_launch_start (PaddockSessionLaunch  *self,
                              const char            *record_path,
                              pid_t                 *out_pid,
                              GError               **error)
{
  g_auto(PaddockExecutorAgent) agent = { .pty_master = -1, .cgroup_procs_fd = -1 };
  g_autoptr(GPtrArray) bind_args = g_ptr_array_new_with_free_func (g_free);
  PaddockSessionPorts *ports = _paddock_session_network_get_ports (self->network);
  const PaddockSessionConfig *config = self->config;
  PaddockExecutorAgentSpec spec;
  g_auto(GStrv) envp = NULL;
  gboolean sandboxed;
  PaddockExecutor *executor;
  /* The leased sockets the agent gets (socket activation): on the host's
   * network only; a namespace of its own gets them forwarded instead. */
  GPtrArray *passed_leases = g_strcmp0 (config->net_mode, "host") == 0 &&
    !_paddock_session_ports_get_release (ports) ? config->leases : NULL;

  g_return_val_if_fail (PADDOCK_IS_SESSION_LAUNCH (self), FALSE);
  g_return_val_if_fail (paddock_session_process_get_executor (self->process) == NULL, FALSE);

  /* Where a host agent's keeper holds the session for a later daemon,
   * and where the boundary seen is kept. */
  g_clear_pointer (&self->session_dir, g_free);
  self->session_dir = record_path != NULL ? g_path_get_dirname (record_path) : NULL;

  executor = paddock_executor_new_for_profile (config->profile);
  if (executor == NULL)
    {
      /* Never a silent fallback to running unconfined. */
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED,
                   "This build has no executor for the %s profile (only host sessions run "
                   "here); nothing was started", config->profile);
      return FALSE;
    }
  paddock_session_process_set_executor (self->process, executor);
  paddock_command_runner_set_executor (self->runner, executor);
  if (!paddock_executor_check_start (executor, config, self->stage, error))
    return FALSE;
  sandboxed = paddock_executor_is_sandboxed (executor);

  /* A host session has a stage only in the portable build (a copy the
   * agent starts in: paddock_manager_impl_handle_create_session()). */
  if (self->stage != NULL)
    {
      /* The layers exist before the sandbox mounts them; a copy stage is
       * copied here (the fallback where overlayfs cannot be mounted). The
       * workspace's baseline is recorded once the agent started (see
       * the session's "started"). */
      if (!paddock_stage_prepare (self->stage, NULL, error))
        {
          g_prefix_error (error, "Could not prepare the staging area: ");
          return FALSE;
        }
    }

  _paddock_session_network_prepare (self->network, sandboxed ? config->net_mode : "host");
  envp = paddock_session_launch_build_environment (self);
  envp = _paddock_session_network_add_listen_environment (passed_leases, envp,
                                                          paddock_executor_listen_pid (executor));
  if (!paddock_executor_check_program (executor, config, envp, error))
    return FALSE;
  /* Ports reserved for a later LeasePort (paddock-session-ports.c). */
  _paddock_session_ports_add_bind_arguments (ports, bind_args);
  g_ptr_array_add (bind_args, NULL);
  /* With 'release', the leased ports are left for the agent to bind, now. */
  _paddock_session_ports_hand_over (ports, config->leases);

  spec = (PaddockExecutorAgentSpec) {
    .session_id = self->id,
    .config = config,
    .stage = self->stage,
    .envp = envp,
    .passed_leases = passed_leases,
    .bind_args = (const char * const *) bind_args->pdata,
    .spare = self->offered_spare,
    .proxy_port = PADDOCK_SESSION_PROXY_PORT,
    .hold_dir = self->session_dir,
  };
  self->offered_spare = NULL;
  /* Right before the start: its events can come at once. */
  paddock_session_launch_connect_executor (self);
  if (!paddock_executor_start_agent (executor, &spec, &agent, error))
    return FALSE;

  g_strfreev (self->agent_env);
  self->agent_env = g_steal_pointer (&agent.agent_env);
  paddock_session_process_take_agent (self->process, &agent, sandboxed);
  self->waiting = TRUE;
  paddock_terminal_take_pty (self->terminal, paddock_steal_fd (&agent.pty_master));
  *out_pid = agent.pid;

  _paddock_session_network_spawned (self->network);

  g_debug ("Session %s: started %s as pid %d (%s profile%s)", self->id, agent.program, (int) agent.pid,
           config->profile, agent.took_spare ? ", in a sandbox made ahead" : "");
  return TRUE;
}

void
paddock_session_launch_answered (PaddockSessionLaunch *self)
{
  g_return_if_fail (PADDOCK_IS_SESSION_LAUNCH (self));

  self->waiting = FALSE;
}

void
paddock_session_launch_close (PaddockSessionLaunch *self)
{
  g_return_if_fail (PADDOCK_IS_SESSION_LAUNCH (self));

  paddock_session_launch_disconnect_executor (self);
  g_signal_handlers_disconnect_by_data (self->startup, self);
  self->waiting = FALSE;
}

static void
paddock_session_launch_finalize (GObject *object)
{
  PaddockSessionLaunch *self = PADDOCK_SESSION_LAUNCH (object);

  g_signal_handlers_disconnect_by_data (self->startup, self);
  g_clear_object (&self->startup);
  g_clear_pointer (&self->id, g_free);
  g_clear_pointer (&self->agent_env, g_strfreev);
  g_clear_pointer (&self->session_dir, g_free);
  g_clear_object (&self->process);
  g_clear_object (&self->terminal);
  g_clear_object (&self->network);
  g_clear_object (&self->runner);
  g_clear_object (&self->stage);

  G_OBJECT_CLASS (paddock_session_launch_parent_class)->finalize (object);
}

static void
paddock_session_launch_class_init (PaddockSessionLaunchClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = paddock_session_launch_finalize;

  signals[SIGNAL_STARTED] = g_signal_new ("started", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
  signals[SIGNAL_FAILED] = g_signal_new ("failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
  signals[SIGNAL_ENDED] = g_signal_new ("ended", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                        0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_POINTER);
  signals[SIGNAL_END_KEPT] = g_signal_new ("end-kept", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                           0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_COMMAND_GONE] = g_signal_new ("command-gone", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                               0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT);
}

static void
paddock_session_launch_init (PaddockSessionLaunch *self)
{
  self->startup = paddock_session_startup_new ();
  g_signal_connect (self->startup, "looked", G_CALLBACK (paddock_session_launch_startup_looked_cb), self);
  g_signal_connect (self->startup, "ended", G_CALLBACK (paddock_session_launch_startup_ended_cb), self);
}

PaddockSessionLaunch *
paddock_session_launch_new (const char                 *session_id,
                            const PaddockSessionConfig *config,
                            PaddockSessionProcess      *process,
                            PaddockTerminal            *terminal,
                            PaddockSessionNetwork      *network,
                            PaddockCommandRunner       *runner,
                            PaddockStage               *stage,
                            PaddockIpcSession1         *session)
{
  PaddockSessionLaunch *self;

  g_return_val_if_fail (session_id != NULL && config != NULL, NULL);
  g_return_val_if_fail (PADDOCK_IS_SESSION_PROCESS (process) && PADDOCK_IS_TERMINAL (terminal), NULL);
  g_return_val_if_fail (PADDOCK_IS_SESSION_NETWORK (network) && PADDOCK_IS_COMMAND_RUNNER (runner), NULL);
  g_return_val_if_fail (PADDOCK_IPC_IS_SESSION1 (session), NULL);

  self = g_object_new (PADDOCK_TYPE_SESSION_LAUNCH, NULL);
  self->id = g_strdup (session_id);
  self->config = config;
  self->session = session;
  self->process = g_object_ref (process);
  self->terminal = g_object_ref (terminal);
  self->network = g_object_ref (network);
  self->runner = g_object_ref (runner);
  self->stage = stage != NULL ? g_object_ref (stage) : NULL;
  return self;
}
