/* paddock-host-executor.c — a session's processes as the user, under keepers
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The host profile, and every session of the portable build: no layer
 * is enforced (the boundary says so); the agent runs under its keeper, a
 * child subreaper (daemon/keeper/), so that nothing it forks can leave
 * the session's count and teardown, setsid() or not. The keeper, not the
 * daemon, reaps the agent: its end comes here as the keeper's event and
 * goes on as "exited".
 */

#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-dbus-checks.h"
#include "paddock-error.h"
#include "paddock-host-executor.h"
#include "paddock-keeper-protocol.h"
#include "paddock-lease.h"
#include "paddock-reserved-ports.h"
#include "paddock-terminal.h"

struct _PaddockHostExecutor
{
  GObject              parent_instance;

  PaddockKeeperClient *keeper;   /* the agent's, kept until the executor goes: it is small */
  GPtrArray           *command_keepers;   /* each command's, until it is gone */
  GHashTable          *command_pids;      /* command id → its pid, until it is gone */
};

static void paddock_host_executor_iface_init (PaddockExecutorInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (PaddockHostExecutor, paddock_host_executor, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (PADDOCK_TYPE_EXECUTOR, paddock_host_executor_iface_init))

static gboolean
paddock_host_executor_is_sandboxed (PaddockExecutor *executor)
{
  return FALSE;
}

static char **
paddock_host_executor_adapt_environment (PaddockExecutor  *executor,
                                         char            **env,
                                         GHashTable       *given)
{
  return env;
}

/* Filled in by the keeper with the agent's own pid. */
static const char *
paddock_host_executor_listen_pid (PaddockExecutor *executor)
{
  return "00000000000000000000";
}

/* The agent's end, then the keeper's own once its tree is empty. */
static void
paddock_host_executor_keeper_cb (PaddockKeeperClient      *keeper,
                                 PaddockKeeperClientEvent  event,
                                 int                       wait_status,
                                 gpointer                  user_data)
{
  PaddockHostExecutor *self = user_data;

  if (event == PADDOCK_KEEPER_CLIENT_EXITED)
    paddock_executor_emit_exited (PADDOCK_EXECUTOR (self), wait_status);
  else if (event == PADDOCK_KEEPER_CLIENT_KEPT)
    paddock_executor_emit_end_kept (PADDOCK_EXECUTOR (self));
}

static char *
find_program (const PaddockSessionConfig  *config,
              char                       **envp,
              GError                     **error)
{
  const char *session_path = g_environ_getenv (envp, "PATH");
  char *program = paddock_executor_find_in_path (config->command[0],
                                                 session_path != NULL ? session_path : "/usr/local/bin:/usr/bin:/bin");

  if (program == NULL)
    {
      g_autofree char *shown = paddock_dbus_display_bytes (config->command[0]);

      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
                   "No program “%s” in the session's PATH", shown);
    }
  return program;
}

static gboolean
paddock_host_executor_check_program (PaddockExecutor             *executor,
                                     const PaddockSessionConfig  *config,
                                     char                       **envp,
                                     GError                     **error)
{
  g_autofree char *program = find_program (config, envp, error);

  return program != NULL;
}

static gboolean
paddock_host_executor_start_agent (PaddockExecutor                *executor,
                                   const PaddockExecutorAgentSpec *spec,
                                   PaddockExecutorAgent           *out,
                                   GError                        **error)
{
  PaddockHostExecutor *self = PADDOCK_HOST_EXECUTOR (executor);
  const PaddockSessionConfig *config = spec->config;
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  paddock_autofd int slave = -1;
  paddock_autofd int cgroup_dir = -1;
  const char *hold_dir = spec->hold_dir;
  int listen_fds[PADDOCK_SESSION_MAX_PORTS];
  guint n_listen_fds = 0;

  g_return_val_if_fail (self->keeper == NULL, FALSE);

  out->agent_env = g_strdupv (spec->envp);
  out->program = find_program (config, spec->envp, error);
  if (out->program == NULL)
    return FALSE;
  for (guint i = 0; config->command[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (config->command[i]));
  g_ptr_array_add (argv, NULL);

  if (!paddock_executor_open_pty (&out->pty_master, &slave, error))
    return FALSE;
  paddock_terminal_set_window_size (out->pty_master, config->columns, config->rows);

  paddock_executor_make_cgroup (spec, out);

  for (guint i = 0; spec->passed_leases != NULL && i < spec->passed_leases->len && i < G_N_ELEMENTS (listen_fds); i++)
    listen_fds[n_listen_fds++] = paddock_lease_get_fd (g_ptr_array_index (spec->passed_leases, i));

  if (out->cgroup != NULL)
    cgroup_dir = open (paddock_cgroup_get_path (out->cgroup), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  /* A socket path longer than sun_path has room for (a deep state dir):
   * the session runs all the same, only a later daemon cannot adopt it. */
  if (hold_dir != NULL && strlen (hold_dir) + sizeof "/" PADDOCK_KEEPER_SOCKET >
      sizeof ((struct sockaddr_un *) 0)->sun_path)
    {
      g_message ("Session %s: its folder's path is too long for the keeper's socket; a later "
                 "daemon will not be able to adopt it", spec->session_id);
      hold_dir = NULL;
    }
  {
    /* The agent leads its own process session on the terminal; LISTEN_PID
     * is its own pid. Born in the session's cgroup, so that every process
     * the session will ever have is inside. */
    PaddockKeeperSpawn keeper_spawn = {
      .program = out->program,
      .argv = (char **) argv->pdata,
      .envp = spec->envp,
      .cwd = spec->stage != NULL ? paddock_stage_get_root (spec->stage) : config->workspace,
      .stdio = { slave, slave, slave },
      .tty = TRUE,
      .pass_fds = listen_fds,
      .n_pass_fds = n_listen_fds,
      .listen_pid = n_listen_fds > 0,
      .cgroup_dir = cgroup_dir,
      .cgroup_procs_fd = out->cgroup_procs_fd,
      /* The keeper holds the terminal too: the session outlives us. */
      .hold_fd = out->pty_master,
      .hold_dir = hold_dir,
      .hold_control_fd = -1,
    };

    self->keeper = paddock_keeper_client_spawn (&keeper_spawn, paddock_host_executor_keeper_cb, self, error);
  }
  if (self->keeper == NULL)
    {
      g_prefix_error (error, "Could not start the agent: ");
      return FALSE;
    }

  out->keeper = self->keeper;
  out->pid = paddock_keeper_client_get_pid (self->keeper);
  /* The keeper read it before the agent could be reaped. */
  out->start_time = paddock_keeper_client_get_start_time (self->keeper);
  return TRUE;
}

/* The agent of a session an earlier daemon ran, under the keeper it left
 * holding the session (paddock-keeper-protocol.h, --hold-dir): from here
 * on as if started here. Returns the keeper (the executor's). */
PaddockKeeperClient *
paddock_host_executor_adopt_agent (PaddockHostExecutor  *self,
                                   const char           *hold_dir,
                                   pid_t                 keeper_pid,
                                   int                   keeper_pidfd,
                                   int                  *out_pty_master,
                                   GError              **error)
{
  g_return_val_if_fail (PADDOCK_IS_HOST_EXECUTOR (self), NULL);
  g_return_val_if_fail (self->keeper == NULL, NULL);

  self->keeper = paddock_keeper_client_adopt (hold_dir, keeper_pid, keeper_pidfd, out_pty_master, NULL,
                                              paddock_host_executor_keeper_cb, self, error);
  return self->keeper;
}

/* The session's record names the agent's keeper from now on: it may
 * outlive us (before, it ends the agent's tree with us). */
void
paddock_host_executor_hold (PaddockHostExecutor *self)
{
  g_return_if_fail (PADDOCK_IS_HOST_EXECUTOR (self));

  if (self->keeper != NULL && !paddock_keeper_client_hold (self->keeper))
    g_debug ("Could not ask the agent's keeper to hold it: it ends with the daemon");
}

/* A command's keeper: the command's end; then the keeper's, once its
 * tree is empty, and it goes. */
static void
paddock_host_executor_command_keeper_cb (PaddockKeeperClient      *keeper,
                                         PaddockKeeperClientEvent  event,
                                         int                       wait_status,
                                         gpointer                  user_data)
{
  PaddockHostExecutor *self = user_data;
  pid_t pid = paddock_keeper_client_get_pid (keeper);

  if (event == PADDOCK_KEEPER_CLIENT_EXITED)
    {
      GHashTableIter iter;
      gpointer value;

      /* From its end on a kill of it reaches nothing: whatever it left
       * runs on as the session's, ended with it. */
      g_hash_table_iter_init (&iter, self->command_pids);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        if (GPOINTER_TO_INT (value) == pid)
          g_hash_table_iter_remove (&iter);
      paddock_executor_emit_command_exited (PADDOCK_EXECUTOR (self), pid, wait_status);
    }
  else
    {
      g_autoptr(PaddockHostExecutor) hold = g_object_ref (self);

      g_ptr_array_remove_fast (self->command_keepers, keeper);
      paddock_executor_emit_command_gone (PADDOCK_EXECUTOR (self), pid);
    }
}

/* The command under a keeper of its own, leader of its own process
 * session: its pid names it. */
static gboolean
paddock_host_executor_spawn_command (PaddockExecutor                  *executor,
                                     const PaddockExecutorCommandSpec *spec,
                                     pid_t                            *out_pid,
                                     GError                          **error)
{
  PaddockHostExecutor *self = PADDOCK_HOST_EXECUTOR (executor);
  paddock_autofd int cgroup_dir = -1;
  PaddockKeeperClient *keeper;

  if (spec->cgroup != NULL)
    cgroup_dir = open (paddock_cgroup_get_path (spec->cgroup), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  {
    /* Born in the session's cgroup (a move through cgroup.procs waits for
     * an RCU grace period, often longer than the whole command), the
     * keeper sharing our memory until it execs: paddock-clone-vm.c. */
    PaddockKeeperSpawn keeper_spawn = {
      .program = spec->program,
      .argv = spec->argv,
      .envp = spec->envp,
      .cwd = spec->cwd,
      .stdio = { spec->stdio[0], spec->stdio[1], spec->stdio[2] },
      .tty = spec->tty,
      .cgroup_dir = cgroup_dir,
      .cgroup_procs_fd = spec->cgroup_procs_fd,
      /* Its output goes to the daemon's buffers and its caller waits on
       * the daemon: neither is there for a later daemon to adopt. */
      .end_with_daemon = TRUE,
      .hold_control_fd = -1,
    };

    keeper = paddock_keeper_client_spawn (&keeper_spawn, paddock_host_executor_command_keeper_cb, self, error);
  }
  if (keeper == NULL)
    {
      g_prefix_error (error, "Could not start the command: ");
      return FALSE;
    }
  g_ptr_array_add (self->command_keepers, keeper);
  *out_pid = paddock_keeper_client_get_pid (keeper);
  g_hash_table_replace (self->command_pids, GUINT_TO_POINTER (spec->id), GINT_TO_POINTER (*out_pid));
  return TRUE;
}

/* The command's keeper (a subreaper too) signals its tree, setsid()ed
 * descendants included; a SIGKILL until it is empty. */
static gboolean
paddock_host_executor_signal_command (PaddockExecutor  *executor,
                                      guint32           id,
                                      int               signum,
                                      GError          **error)
{
  PaddockHostExecutor *self = PADDOCK_HOST_EXECUTOR (executor);
  gpointer value;
  pid_t pid;

  /* One whose keeper is gone has nothing left to signal. */
  if (!g_hash_table_lookup_extended (self->command_pids, GUINT_TO_POINTER (id), NULL, &value))
    return TRUE;
  pid = GPOINTER_TO_INT (value);
  for (guint i = 0; i < self->command_keepers->len; i++)
    {
      PaddockKeeperClient *keeper = g_ptr_array_index (self->command_keepers, i);

      if (paddock_keeper_client_get_pid (keeper) == pid)
        paddock_keeper_client_signal (keeper, signum);
    }
  return TRUE;
}

/* The keepers that run: unreaped children of ours. */
static GArray *
paddock_host_executor_helper_pids (PaddockExecutor *executor)
{
  PaddockHostExecutor *self = PADDOCK_HOST_EXECUTOR (executor);
  GArray *pids = g_array_new (FALSE, FALSE, sizeof (pid_t));

  if (self->keeper != NULL && paddock_keeper_client_is_running (self->keeper))
    {
      pid_t pid = paddock_keeper_client_get_keeper_pid (self->keeper);
      g_array_append_val (pids, pid);
    }
  for (guint i = 0; i < self->command_keepers->len; i++)
    {
      PaddockKeeperClient *keeper = g_ptr_array_index (self->command_keepers, i);

      if (paddock_keeper_client_is_running (keeper))
        {
          pid_t pid = paddock_keeper_client_get_keeper_pid (keeper);
          g_array_append_val (pids, pid);
        }
    }
  return pids;
}

/* Every keeper ends its whole tree and then itself. */
static void
paddock_host_executor_kill_helpers (PaddockExecutor *executor)
{
  PaddockHostExecutor *self = PADDOCK_HOST_EXECUTOR (executor);

  if (self->keeper != NULL)
    paddock_keeper_client_signal (self->keeper, SIGKILL);
  for (guint i = 0; i < self->command_keepers->len; i++)
    paddock_keeper_client_signal (g_ptr_array_index (self->command_keepers, i), SIGKILL);
}

PaddockExecutor *
paddock_host_executor_new (void)
{
  return g_object_new (PADDOCK_TYPE_HOST_EXECUTOR, NULL);
}

/* A keeper let go runs on with whatever is left of its tree (the
 * daemon's shutdown ended it already). */
static void
paddock_host_executor_dispose (GObject *object)
{
  PaddockHostExecutor *self = PADDOCK_HOST_EXECUTOR (object);

  g_clear_pointer (&self->keeper, paddock_keeper_client_free);
  if (self->command_keepers != NULL)
    g_ptr_array_set_size (self->command_keepers, 0);

  G_OBJECT_CLASS (paddock_host_executor_parent_class)->dispose (object);
}

static void
paddock_host_executor_finalize (GObject *object)
{
  PaddockHostExecutor *self = PADDOCK_HOST_EXECUTOR (object);

  g_clear_pointer (&self->command_keepers, g_ptr_array_unref);
  g_clear_pointer (&self->command_pids, g_hash_table_unref);

  G_OBJECT_CLASS (paddock_host_executor_parent_class)->finalize (object);
}

static void
paddock_host_executor_class_init (PaddockHostExecutorClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = paddock_host_executor_dispose;
  G_OBJECT_CLASS (klass)->finalize = paddock_host_executor_finalize;
}

static void
paddock_host_executor_iface_init (PaddockExecutorInterface *iface)
{
  iface->is_sandboxed = paddock_host_executor_is_sandboxed;
  iface->adapt_environment = paddock_host_executor_adapt_environment;
  iface->listen_pid = paddock_host_executor_listen_pid;
  iface->check_program = paddock_host_executor_check_program;
  iface->start_agent = paddock_host_executor_start_agent;
  iface->spawn_command = paddock_host_executor_spawn_command;
  iface->signal_command = paddock_host_executor_signal_command;
  iface->helper_pids = paddock_host_executor_helper_pids;
  iface->kill_helpers = paddock_host_executor_kill_helpers;
}

static void
paddock_host_executor_init (PaddockHostExecutor *self)
{
  self->command_keepers = g_ptr_array_new_with_free_func ((GDestroyNotify) paddock_keeper_client_free);
  self->command_pids = g_hash_table_new (NULL, NULL);
}
