/* paddock-executor.h — where and how a session's processes run
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-cgroup.h"
#include "paddock-keeper-client.h"
#include "paddock-sandbox-pidns.h"
#include "paddock-session-config.h"
#include "paddock-spare-sandbox.h"
#include "paddock-stage.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_EXECUTOR (paddock_executor_get_type ())

G_DECLARE_INTERFACE (PaddockExecutor, paddock_executor, PADDOCK, EXECUTOR, GObject)

/* What a session asks of its executor to start its agent: all borrowed,
 * for the call. */
typedef struct
{
  const char                 *session_id;
  const PaddockSessionConfig *config;
  PaddockStage               *stage;          /* where its writes go, or NULL */
  char                      **envp;           /* its environment, as the session built it */
  GPtrArray                  *passed_leases;  /* PaddockLease*: sockets it gets at exec, or NULL */
  const char * const         *bind_args;      /* more of the helper's options (ports kept for
                                               * later leases), or NULL */
  PaddockSpareSandbox        *spare;          /* a sandbox made ahead it may take, or NULL */
  guint16                     proxy_port;     /* where the proxy listens inside (proxy mode) */
  const char                 *hold_dir;       /* the session's folder, where its keeper holds it for
                                               * a later daemon; or NULL */
} PaddockExecutorAgentSpec;

/* What came of it: the caller's, cleared by paddock_executor_agent_clear(). */
typedef struct
{
  pid_t               pid;              /* shown as MainPid: the agent (host), the helper (linux) */
  guint64             start_time;       /* of that pid, for a later daemon */
  int                 pty_master;
  PaddockKeeperClient *keeper;          /* the agent's keeper (host), the sandbox's (a sandbox a
                                         * later daemon can adopt); borrowed: the executor's */
  PaddockCgroup      *cgroup;           /* NULL where none could be made… */
  int                 cgroup_procs_fd;
  char               *cgroup_reason;    /* …and then why */
  gboolean            resources_requested;
  char               *resources_reason;
  GStrv               agent_env;        /* what the agent was given, for the boundary */
  char               *program;          /* what was exec'd */
  gboolean            took_spare;
} PaddockExecutorAgent;

void paddock_executor_agent_clear (PaddockExecutorAgent *agent);

/* A command (Exec/Run) to start beside the agent, its program found and
 * its standard fds made already: all borrowed, for the call. */
typedef struct
{
  guint32         id;                /* the session's name for it */
  const char     *program;           /* host: found in PATH; NULL where the executor finds it */
  char          **argv;
  const char     *cwd;
  char          **envp;
  gboolean        tty;
  int             stdio[3];          /* -1 each for a terminal the executor makes */
  PaddockCgroup  *cgroup;            /* the session's, or NULL */
  int             cgroup_procs_fd;
} PaddockExecutorCommandSpec;

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (PaddockExecutorAgent, paddock_executor_agent_clear)

struct _PaddockExecutorInterface
{
  GTypeInterface parent_iface;

  /* Whether its processes are confined (the session's Sandboxed). */
  gboolean  (*is_sandboxed)      (PaddockExecutor                *self);
  /* The environment a process of the session gets, from ENV (taken):
   * what this executor's view needs changed. */
  char    **(*adapt_environment) (PaddockExecutor                *self,
                                  char                          **env,
                                  GHashTable                     *given);
  /* LISTEN_PID for the agent's leased sockets: its pid as it will see it
   * (or a placeholder its starter fills in). */
  const char *(*listen_pid)      (PaddockExecutor                *self);
  /* Whether a session of CONFIG with STAGE (NULL: none) may start here:
   * asked before anything is prepared for it. */
  gboolean  (*check_start)       (PaddockExecutor                *self,
                                  const PaddockSessionConfig     *config,
                                  PaddockStage                   *stage,
                                  GError                        **error);
  /* Whether the agent's program can be found, with ENVP's PATH, where
   * it will run: refused now, not an exit 127 after "running". */
  gboolean  (*check_program)     (PaddockExecutor                *self,
                                  const PaddockSessionConfig     *config,
                                  char                          **envp,
                                  GError                        **error);
  gboolean  (*start_agent)       (PaddockExecutor                *self,
                                  const PaddockExecutorAgentSpec *spec,
                                  PaddockExecutorAgent           *out,
                                  GError                        **error);
  /* Starts a command beside the agent. Either it runs now: *OUT_PID
   * (> 0) names it in "command-exited" and "command-gone"; or it is asked
   * for (*OUT_PID 0), and "command-event" says "spawned" or why not, and
   * later its end. */
  gboolean  (*spawn_command)     (PaddockExecutor                  *self,
                                  const PaddockExecutorCommandSpec *spec,
                                  pid_t                            *out_pid,
                                  GError                          **error);
  /* Signals the whole tree of the command spawn_command() started as ID. */
  gboolean  (*signal_command)    (PaddockExecutor                *self,
                                  guint32                         id,
                                  int                             signum,
                                  GError                        **error);
  /* What is said of command ID from now on is about a command the
   * session answered already: not relayed. */
  void      (*forget_command)    (PaddockExecutor                *self,
                                  guint32                         id);
  /* A socket inside the session's network for a forwarded connection,
   * given by "socket" with ID. */
  gboolean  (*request_socket)    (PaddockExecutor                *self,
                                  guint32                         id,
                                  int                             family,
                                  GError                        **error);
  /* Handles every event waiting now; FALSE once there can be none more. */
  gboolean  (*drain_events)      (PaddockExecutor                *self);
  /* The session's main process ended: what its commands' own channels
   * said before counts (read now), and, when STARTED (the agent ran),
   * what the helper relayed before it ended; then the channels go. */
  void      (*finish_commands)   (PaddockExecutor                *self,
                                  gboolean                        started);
  /* The executor's own helpers that run in the session's cgroup (host:
   * the keepers), which are not the session's processes; and their
   * SIGKILL, which ends each one's tree and then itself. */
  GArray   *(*helper_pids)       (PaddockExecutor                *self);
  void      (*kill_helpers)      (PaddockExecutor                *self);
  /* Has SPARE make a sandbox ahead for the next session like CONFIG's,
   * to be NEXT_ID in the folder NEXT_DIR (NULL: none; it need not exist
   * yet), where this executor has spares (NULL: none). */
  void      (*refill_spare)      (PaddockExecutor                *self,
                                  PaddockSpareSandbox            *spare,
                                  const PaddockSessionConfig     *config,
                                  guint16                         proxy_port,
                                  const char                     *next_id,
                                  const char                     *next_dir);
};

PaddockExecutor *paddock_executor_new_for_profile   (const char                     *profile);
gboolean         paddock_executor_is_sandboxed      (PaddockExecutor                *self);
char           **paddock_executor_adapt_environment (PaddockExecutor                *self,
                                                     char                          **env,
                                                     GHashTable                     *given);
const char      *paddock_executor_listen_pid        (PaddockExecutor                *self);
void             paddock_executor_refill_spare      (PaddockExecutor                *self,
                                                     PaddockSpareSandbox            *spare,
                                                     const PaddockSessionConfig     *config,
                                                     guint16                         proxy_port,
                                                     const char                     *next_id,
                                                     const char                     *next_dir);
gboolean         paddock_executor_check_start       (PaddockExecutor                *self,
                                                     const PaddockSessionConfig     *config,
                                                     PaddockStage                   *stage,
                                                     GError                        **error);
gboolean         paddock_executor_spawn_command     (PaddockExecutor                  *self,
                                                     const PaddockExecutorCommandSpec *spec,
                                                     pid_t                            *out_pid,
                                                     GError                          **error);
gboolean         paddock_executor_signal_command    (PaddockExecutor                *self,
                                                     guint32                         id,
                                                     int                             signum,
                                                     GError                        **error);
void             paddock_executor_forget_command    (PaddockExecutor                *self,
                                                     guint32                         id);
gboolean         paddock_executor_request_socket    (PaddockExecutor                *self,
                                                     guint32                         id,
                                                     int                             family,
                                                     GError                        **error);
gboolean         paddock_executor_drain_events      (PaddockExecutor                *self);
void             paddock_executor_finish_commands   (PaddockExecutor                *self,
                                                     gboolean                        started);
GArray          *paddock_executor_helper_pids       (PaddockExecutor                *self);
void             paddock_executor_kill_helpers      (PaddockExecutor                *self);
void             paddock_executor_emit_command_exited (PaddockExecutor              *self,
                                                       pid_t                         pid,
                                                       int                           wait_status);
void             paddock_executor_emit_relayed      (PaddockExecutor                *self,
                                                     const char                     *name,
                                                     ...);
void             paddock_executor_emit_command_gone (PaddockExecutor                *self,
                                                     pid_t                           pid);
gboolean         paddock_executor_check_program     (PaddockExecutor                *self,
                                                     const PaddockSessionConfig     *config,
                                                     char                          **envp,
                                                     GError                        **error);
gboolean         paddock_executor_start_agent       (PaddockExecutor                *self,
                                                     const PaddockExecutorAgentSpec *spec,
                                                     PaddockExecutorAgent           *out,
                                                     GError                        **error);
void             paddock_executor_emit_exited       (PaddockExecutor                *self,
                                                     int                             wait_status);
void             paddock_executor_emit_end_kept     (PaddockExecutor                *self);

/* For the implementations: a cgroup of the session's own (named
 * paddock-session-ID) under the config's parent, into OUT. */
void             paddock_executor_make_cgroup       (const PaddockExecutorAgentSpec *spec,
                                                     PaddockExecutorAgent           *out);
gboolean         paddock_executor_open_pty          (int                            *out_master,
                                                     int                            *out_slave,
                                                     GError                        **error);
GStrv            paddock_executor_test_without_layers (void);
char            *paddock_executor_find_in_path      (const char                     *program,
                                                     const char                     *path);
guint64          paddock_executor_pids_max          (const PaddockSessionConfig     *config);

/* What a session's processes are found from, in either executor's
 * session, and in one an earlier daemon left (no executor of ours). */
typedef struct
{
  PaddockCgroup       *cgroup;      /* the session's, or NULL: the kernel's own list */
  GArray              *keepers;     /* pid_t: its keepers that run, the daemon's helpers */
  gboolean             sandboxed;
  PaddockSandboxPidns *pidns;       /* sandboxed: its PID namespace */
  pid_t                pid;         /* the helper (sandboxed), or the agent */
  gboolean             reaped;
  GHashTable          *sids;        /* host: the process sessions that are the session's */
} PaddockExecutorMembers;

GArray          *paddock_executor_list_members      (const PaddockExecutorMembers   *members,
                                                     gboolean                       *out_agent_session_seen);
GStrv            paddock_executor_build_environment (const PaddockSessionConfig     *config,
                                                     const char                     *session_id,
                                                     const char * const             *ports);
guint64          paddock_executor_memory_max        (const PaddockSessionConfig     *config);

G_END_DECLS
