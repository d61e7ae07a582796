/* paddock-executor.c — where and how a session's processes run
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The session (paddock-session-impl.c) says what to run; its executor
 * says where and how: the linux one (paddock-linux-executor.c) in a
 * sandbox of paddock-sandbox's, the host one (paddock-host-executor.c)
 * as the user, under a keeper. What the session learns of its processes
 * comes back as values and signals ("exited"), never as a child of the
 * daemon's to wait for: an executor that runs them elsewhere (another
 * host, a pod) fits behind the same calls (docs/PORTING.md).
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "paddock-autofd.h"
#include "paddock-error.h"
#include "paddock-executor.h"
#include "paddock-host-executor.h"
#include "paddock-compat-proc.h"
#include "paddock-process-tree.h"
#if PADDOCK_ENABLE_LINUX
#include "paddock-linux-executor.h"
#endif

enum {
  SIGNAL_EXITED,
  SIGNAL_END_KEPT,
  SIGNAL_COMMAND_EXITED,
  SIGNAL_COMMAND_GONE,
  SIGNAL_STARTED,
  SIGNAL_PROXY,
  SIGNAL_SOCKET,
  SIGNAL_COMMAND_EVENT,
  SIGNAL_CLOSED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_INTERFACE (PaddockExecutor, paddock_executor, G_TYPE_OBJECT)

static void
paddock_executor_default_init (PaddockExecutorInterface *iface)
{
  /**
   * PaddockExecutor::exited:
   * @wait_status: as waitpid() tells it
   *
   * The session's main process (the host agent, the sandbox's helper)
   * ended; its other processes may live on a little (the session lists
   * them until none is left).
   */
  signals[SIGNAL_EXITED] = g_signal_new ("exited", G_TYPE_FROM_INTERFACE (iface), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT);
  /**
   * PaddockExecutor::end-kept:
   *
   * The main process's end, told before by "exited", is kept by its
   * keeper from now on (it was asked to hold the session after that end:
   * paddock_keeper_client_keeps_end()).
   */
  signals[SIGNAL_END_KEPT] = g_signal_new ("end-kept", G_TYPE_FROM_INTERFACE (iface), G_SIGNAL_RUN_LAST,
                                           0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /**
   * PaddockExecutor::command-exited:
   * @pid: the command, as spawn_command() named it
   * @wait_status: as waitpid() tells it
   *
   * The command ended; its tree may live on a little.
   */
  signals[SIGNAL_COMMAND_EXITED] = g_signal_new ("command-exited", G_TYPE_FROM_INTERFACE (iface), G_SIGNAL_RUN_LAST,
                                                 0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
  /**
   * PaddockExecutor::command-gone:
   * @pid: the command, as spawn_command() named it
   *
   * Nothing of the command's tree is left, and nothing more will be said
   * of it.
   */
  signals[SIGNAL_COMMAND_GONE] = g_signal_new ("command-gone", G_TYPE_FROM_INTERFACE (iface), G_SIGNAL_RUN_LAST,
                                               0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT);

  /* What an executor with a helper of its own (the linux one's
   * paddock-sandbox) relays of it: PaddockSandboxLink's signals of the
   * same names (paddock-sandbox-link.c says what each carries; a handler
   * that takes a descriptor sets it to -1), and the direct channels'
   * events as "command-event". */
  signals[SIGNAL_STARTED] = g_signal_new ("started", G_TYPE_FROM_INTERFACE (iface), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 3,
                                          JSON_TYPE_OBJECT, JSON_TYPE_OBJECT, G_TYPE_POINTER);
  signals[SIGNAL_PROXY] = g_signal_new ("proxy", G_TYPE_FROM_INTERFACE (iface), G_SIGNAL_RUN_LAST,
                                        0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
  signals[SIGNAL_SOCKET] = g_signal_new ("socket", G_TYPE_FROM_INTERFACE (iface), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT64, G_TYPE_POINTER);
  signals[SIGNAL_COMMAND_EVENT] = g_signal_new ("command-event", G_TYPE_FROM_INTERFACE (iface), G_SIGNAL_RUN_LAST,
                                                0, NULL, NULL, NULL, G_TYPE_NONE, 2,
                                                JSON_TYPE_OBJECT, G_TYPE_POINTER);
  signals[SIGNAL_CLOSED] = g_signal_new ("closed", G_TYPE_FROM_INTERFACE (iface), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

/**
 * paddock_executor_new_for_profile:
 *
 * The executor of a session in PROFILE: the host one for "host", the
 * linux one for any other, or NULL where this build has none (the
 * portable build: no profile but "host" can run, and the caller says so).
 */
PaddockExecutor *
paddock_executor_new_for_profile (const char *profile)
{
  if (g_strcmp0 (profile, "host") == 0)
    return paddock_host_executor_new ();
#if PADDOCK_ENABLE_LINUX
  return paddock_linux_executor_new ();
#else
  return NULL;
#endif
}

gboolean
paddock_executor_is_sandboxed (PaddockExecutor *self)
{
  g_return_val_if_fail (PADDOCK_IS_EXECUTOR (self), FALSE);

  return PADDOCK_EXECUTOR_GET_IFACE (self)->is_sandboxed (self);
}

char **
paddock_executor_adapt_environment (PaddockExecutor  *self,
                                    char            **env,
                                    GHashTable       *given)
{
  g_return_val_if_fail (PADDOCK_IS_EXECUTOR (self), env);

  return PADDOCK_EXECUTOR_GET_IFACE (self)->adapt_environment (self, env, given);
}

const char *
paddock_executor_listen_pid (PaddockExecutor *self)
{
  g_return_val_if_fail (PADDOCK_IS_EXECUTOR (self), NULL);

  return PADDOCK_EXECUTOR_GET_IFACE (self)->listen_pid (self);
}

void
paddock_executor_refill_spare (PaddockExecutor            *self,
                               PaddockSpareSandbox        *spare,
                               const PaddockSessionConfig *config,
                               guint16                     proxy_port,
                               const char                 *next_id,
                               const char                 *next_dir)
{
  PaddockExecutorInterface *iface;

  g_return_if_fail (PADDOCK_IS_EXECUTOR (self));

  iface = PADDOCK_EXECUTOR_GET_IFACE (self);
  if (iface->refill_spare != NULL)
    iface->refill_spare (self, spare, config, proxy_port, next_id, next_dir);
}

gboolean
paddock_executor_check_start (PaddockExecutor            *self,
                              const PaddockSessionConfig *config,
                              PaddockStage               *stage,
                              GError                    **error)
{
  PaddockExecutorInterface *iface;

  g_return_val_if_fail (PADDOCK_IS_EXECUTOR (self), FALSE);

  iface = PADDOCK_EXECUTOR_GET_IFACE (self);
  return iface->check_start == NULL || iface->check_start (self, config, stage, error);
}

gboolean
paddock_executor_spawn_command (PaddockExecutor                  *self,
                                const PaddockExecutorCommandSpec *spec,
                                pid_t                            *out_pid,
                                GError                          **error)
{
  PaddockExecutorInterface *iface;

  g_return_val_if_fail (PADDOCK_IS_EXECUTOR (self), FALSE);

  iface = PADDOCK_EXECUTOR_GET_IFACE (self);
  *out_pid = 0;
  return iface->spawn_command (self, spec, out_pid, error);
}

gboolean
paddock_executor_signal_command (PaddockExecutor  *self,
                                 guint32           id,
                                 int               signum,
                                 GError          **error)
{
  g_return_val_if_fail (PADDOCK_IS_EXECUTOR (self), FALSE);

  return PADDOCK_EXECUTOR_GET_IFACE (self)->signal_command (self, id, signum, error);
}

void
paddock_executor_forget_command (PaddockExecutor *self,
                                 guint32          id)
{
  PaddockExecutorInterface *iface;

  g_return_if_fail (PADDOCK_IS_EXECUTOR (self));

  iface = PADDOCK_EXECUTOR_GET_IFACE (self);
  if (iface->forget_command != NULL)
    iface->forget_command (self, id);
}

gboolean
paddock_executor_request_socket (PaddockExecutor  *self,
                                 guint32           id,
                                 int               family,
                                 GError          **error)
{
  PaddockExecutorInterface *iface;

  g_return_val_if_fail (PADDOCK_IS_EXECUTOR (self), FALSE);

  iface = PADDOCK_EXECUTOR_GET_IFACE (self);
  if (iface->request_socket == NULL)
    {
      g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_BUSY, "The sandbox no longer listens");
      return FALSE;
    }
  return iface->request_socket (self, id, family, error);
}

gboolean
paddock_executor_drain_events (PaddockExecutor *self)
{
  PaddockExecutorInterface *iface;

  g_return_val_if_fail (PADDOCK_IS_EXECUTOR (self), FALSE);

  iface = PADDOCK_EXECUTOR_GET_IFACE (self);
  return iface->drain_events != NULL && iface->drain_events (self);
}

void
paddock_executor_finish_commands (PaddockExecutor *self,
                                  gboolean         started)
{
  PaddockExecutorInterface *iface;

  g_return_if_fail (PADDOCK_IS_EXECUTOR (self));

  iface = PADDOCK_EXECUTOR_GET_IFACE (self);
  if (iface->finish_commands != NULL)
    iface->finish_commands (self, started);
}

GArray *
paddock_executor_helper_pids (PaddockExecutor *self)
{
  PaddockExecutorInterface *iface;

  g_return_val_if_fail (PADDOCK_IS_EXECUTOR (self), NULL);

  iface = PADDOCK_EXECUTOR_GET_IFACE (self);
  if (iface->helper_pids == NULL)
    return g_array_new (FALSE, FALSE, sizeof (pid_t));
  return iface->helper_pids (self);
}

void
paddock_executor_kill_helpers (PaddockExecutor *self)
{
  PaddockExecutorInterface *iface;

  g_return_if_fail (PADDOCK_IS_EXECUTOR (self));

  iface = PADDOCK_EXECUTOR_GET_IFACE (self);
  if (iface->kill_helpers != NULL)
    iface->kill_helpers (self);
}

gboolean
paddock_executor_check_program (PaddockExecutor             *self,
                                const PaddockSessionConfig  *config,
                                char                       **envp,
                                GError                     **error)
{
  g_return_val_if_fail (PADDOCK_IS_EXECUTOR (self), FALSE);

  return PADDOCK_EXECUTOR_GET_IFACE (self)->check_program (self, config, envp, error);
}

/**
 * paddock_executor_start_agent:
 *
 * Starts the session's agent as SPEC says; OUT says what runs. The
 * agent's end comes as "exited".
 */
gboolean
paddock_executor_start_agent (PaddockExecutor                *self,
                              const PaddockExecutorAgentSpec *spec,
                              PaddockExecutorAgent           *out,
                              GError                        **error)
{
  g_return_val_if_fail (PADDOCK_IS_EXECUTOR (self), FALSE);
  g_return_val_if_fail (spec != NULL && out != NULL, FALSE);

  *out = (PaddockExecutorAgent) { .pty_master = -1, .cgroup_procs_fd = -1 };
  return PADDOCK_EXECUTOR_GET_IFACE (self)->start_agent (self, spec, out, error);
}

/* For the implementations. */
void
paddock_executor_emit_exited (PaddockExecutor *self,
                              int              wait_status)
{
  /* A handler may drop the session, and with it the executor, meanwhile. */
  g_autoptr(PaddockExecutor) hold = g_object_ref (self);

  g_signal_emit (self, signals[SIGNAL_EXITED], 0, wait_status);
}

void
paddock_executor_emit_end_kept (PaddockExecutor *self)
{
  g_autoptr(PaddockExecutor) hold = g_object_ref (self);

  g_signal_emit (self, signals[SIGNAL_END_KEPT], 0);
}

void
paddock_executor_emit_command_exited (PaddockExecutor *self,
                                      pid_t            pid,
                                      int              wait_status)
{
  g_autoptr(PaddockExecutor) hold = g_object_ref (self);

  g_signal_emit (self, signals[SIGNAL_COMMAND_EXITED], 0, (int) pid, wait_status);
}

void
paddock_executor_emit_command_gone (PaddockExecutor *self,
                                    pid_t            pid)
{
  g_autoptr(PaddockExecutor) hold = g_object_ref (self);

  g_signal_emit (self, signals[SIGNAL_COMMAND_GONE], 0, (int) pid);
}

/* For the implementations: the signals above, by name, so that the
 * interface's and the relayed link's read alike. */
void
paddock_executor_emit_relayed (PaddockExecutor *self,
                               const char      *name,
                               ...)
{
  g_autoptr(PaddockExecutor) hold = g_object_ref (self);
  va_list args;

  va_start (args, name);
  g_signal_emit_valist (self, g_signal_lookup (name, PADDOCK_TYPE_EXECUTOR), 0, args);
  va_end (args);
}

void
paddock_executor_agent_clear (PaddockExecutorAgent *agent)
{
  paddock_close_fd (&agent->pty_master);
  paddock_close_fd (&agent->cgroup_procs_fd);
  if (agent->cgroup != NULL)
    paddock_cgroup_remove (agent->cgroup);
  g_clear_pointer (&agent->cgroup, paddock_cgroup_free);
  g_clear_pointer (&agent->cgroup_reason, g_free);
  g_clear_pointer (&agent->resources_reason, g_free);
  g_clear_pointer (&agent->agent_env, g_strfreev);
  g_clear_pointer (&agent->program, g_free);
  agent->keeper = NULL;
}

/* A cgroup of its own where one can be made; without one the PID
 * namespace (safe) or the process session (host) is what counts. (Not
 * for a spare's sandbox: its cgroup was made with it, named for us, and
 * its processes are inside already.) */
void
paddock_executor_make_cgroup (const PaddockExecutorAgentSpec *spec,
                              PaddockExecutorAgent           *out)
{
  g_autofree char *name = g_strconcat ("paddock-session-", spec->session_id, NULL);
  g_autoptr(GError) cgroup_error = NULL;

  out->cgroup_reason = g_strdup (spec->config->cgroup_reason);
  if (spec->config->cgroup_parent != NULL)
    out->cgroup = paddock_cgroup_new (spec->config->cgroup_parent, name, &cgroup_error);
  /* Where a child not born in it joins it (and a host session's
   * commands). */
  if (out->cgroup != NULL)
    out->cgroup_procs_fd = paddock_cgroup_open_procs (out->cgroup, &cgroup_error);
  if (cgroup_error != NULL)
    {
      g_clear_pointer (&out->cgroup_reason, g_free);
      out->cgroup_reason = g_strdup (cgroup_error->message);
      if (out->cgroup != NULL)
        paddock_cgroup_remove (out->cgroup);
      g_clear_pointer (&out->cgroup, paddock_cgroup_free);
    }
}

/* A new terminal: its master and the agent's end, both CLOEXEC. */
gboolean
paddock_executor_open_pty (int     *out_master,
                           int     *out_slave,
                           GError **error)
{
  paddock_autofd int master = -1;
  char slave_name[128];

  master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || grantpt (master) != 0 || unlockpt (master) != 0 ||
      ptsname_r (master, slave_name, sizeof slave_name) != 0)
    {
      int saved_errno = errno;
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "Could not make a terminal: %s", g_strerror (saved_errno));
      return FALSE;
    }

  *out_slave = open (slave_name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (*out_slave < 0)
    {
      int saved_errno = errno;
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "Could not open %s: %s", slave_name, g_strerror (saved_errno));
      return FALSE;
    }
  *out_master = paddock_steal_fd (&master);
  return TRUE;
}

/* The layers the daemon's own PADDOCK_TEST_WITHOUT_LAYERS (a comma-separated
 * test switch; nothing inside a session can set it) leaves out of its
 * sandboxes; empty names may be among them. */
GStrv
paddock_executor_test_without_layers (void)
{
  const char *without = g_getenv ("PADDOCK_TEST_WITHOUT_LAYERS");

  return g_strsplit (without != NULL ? without : "", ",", -1);
}

char *
paddock_executor_find_in_path (const char *program,
                               const char *path)
{
  g_auto(GStrv) dirs = NULL;

  if (strchr (program, '/') != NULL)
    return g_file_test (program, G_FILE_TEST_IS_EXECUTABLE) ? g_strdup (program) : NULL;

  dirs = g_strsplit (path, ":", -1);
  for (guint i = 0; dirs[i] != NULL; i++)
    {
      g_autofree char *candidate = g_build_filename (dirs[i][0] != '\0' ? dirs[i] : ".", program, NULL);

      if (g_file_test (candidate, G_FILE_TEST_IS_EXECUTABLE) &&
          !g_file_test (candidate, G_FILE_TEST_IS_DIR))
        return g_steal_pointer (&candidate);
    }

  return NULL;
}

guint64
paddock_executor_pids_max (const PaddockSessionConfig *config)
{
  return config->pids_max != 0 ? config->pids_max : PADDOCK_SESSION_PIDS_MAX_DEFAULT;
}

/* In whole pages: the kernel rounds memory.max down to them, and the
 * value must read back as written. */
guint64
paddock_executor_memory_max (const PaddockSessionConfig *config)
{
  guint64 page = (guint64) sysconf (_SC_PAGESIZE);
  guint64 bytes = config->memory_max;

  if (bytes == 0)
    bytes = (guint64) sysconf (_SC_PHYS_PAGES) * page / 2;
  bytes = MAX (bytes, PADDOCK_SESSION_MEMORY_MAX_MIN);
  return bytes / page * page;
}

/**
 * paddock_executor_list_members:
 * @out_agent_session_seen: (out): host, without a cgroup: whether a
 *   member of the agent's process session (sid = @members->pid) was seen
 *
 * The pids of every process of a session now: what is listed is
 * signalled (held still, stopped, killed), so never pid 1, the daemon
 * itself or a pid that is not one, whatever a listing said.
 *
 * Returns: (transfer full) (element-type pid_t): the pids
 */
GArray *
paddock_executor_list_members (const PaddockExecutorMembers *members,
                               gboolean                     *out_agent_session_seen)
{
  GArray *pids;
  pid_t daemon_pid = getpid ();

  *out_agent_session_seen = FALSE;
  /* The kernel's own list, where the session has a cgroup: cheap, and
   * nobody leaves it. Its keepers are in it too, and are not the
   * session's processes but the daemon's helpers. */
  if (members->cgroup != NULL)
    {
      pids = paddock_cgroup_list_pids (members->cgroup);
      for (guint i = pids->len; i > 0; i--)
        for (guint j = 0; j < members->keepers->len; j++)
          if (g_array_index (pids, pid_t, i - 1) == g_array_index (members->keepers, pid_t, j))
            {
              g_array_remove_index_fast (pids, i - 1);
              break;
            }
    }
  else if (members->sandboxed)
    /* Every process of the sandbox is in its PID namespace, however it
     * forked or setsid()ed: that is what makes teardown complete. */
    pids = paddock_sandbox_pidns_list (members->pidns, members->pid, members->reaped);
  else
    /* The host profile has no PID namespace: the session's processes are
     * those of the agent's session (setsid at spawn) and its commands',
     * and every descendant of their keepers, which a process that
     * setsid()s or double-forks stays (paddock-process-tree.c), in one
     * walk of /proc. */
    pids = paddock_process_tree_list (members->sids, (const pid_t *) (gpointer) members->keepers->data,
                                      members->keepers->len, members->pid, out_agent_session_seen);

  for (guint i = pids->len; i > 0; i--)
    {
      pid_t pid = g_array_index (pids, pid_t, i - 1);

      if (pid <= 1 || pid == daemon_pid)
        g_array_remove_index (pids, i - 1);
    }
  return pids;
}

/**
 * paddock_executor_build_environment:
 * @ports: (nullable): the leased ports' variables, as KEY=VALUE
 *
 * The environment of a session's agent and commands, before an executor
 * adapts it to its view: an allowlist, so nothing else of the daemon's
 * environment (API keys, the bus address, DISPLAY…) reaches them; then
 * @ports; what the creator passed explicitly (@config's env) comes last
 * and wins.
 *
 * Returns: (transfer full): the environment
 */
GStrv
paddock_executor_build_environment (const PaddockSessionConfig *config,
                                    const char                 *session_id,
                                    const char * const         *ports)
{
  g_auto(GStrv) daemon_env = g_get_environ ();
  GStrv env = NULL;
  const char *path = g_environ_getenv (daemon_env, "PATH");
  GHashTableIter iter;
  gpointer key;
  gpointer value;

  env = g_environ_setenv (env, "TERM", "xterm-256color", TRUE);
  env = g_environ_setenv (env, "PATH", path != NULL ? path : "/usr/local/bin:/usr/bin:/bin", TRUE);
  for (guint i = 0; daemon_env[i] != NULL; i++)
    if (g_str_has_prefix (daemon_env[i], "LANG=") || g_str_has_prefix (daemon_env[i], "LC_"))
      {
        g_auto(GStrv) pair = g_strsplit (daemon_env[i], "=", 2);

        if (pair[0] != NULL && pair[1] != NULL)
          env = g_environ_setenv (env, pair[0], pair[1], TRUE);
      }
  env = g_environ_setenv (env, "HOME", config->home, TRUE);
  env = g_environ_setenv (env, "PADDOCK_SESSION", session_id, TRUE);
  for (guint i = 0; ports != NULL && ports[i] != NULL; i++)
    {
      g_auto(GStrv) pair = g_strsplit (ports[i], "=", 2);

      if (pair[0] != NULL && pair[1] != NULL)
        env = g_environ_setenv (env, pair[0], pair[1], TRUE);
    }

  g_hash_table_iter_init (&iter, config->env);
  while (g_hash_table_iter_next (&iter, &key, &value))
    env = g_environ_setenv (env, key, value, TRUE);

  return env;
}
