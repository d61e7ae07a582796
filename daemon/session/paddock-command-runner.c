/* paddock-command-runner.c — a session's Exec and Run: checked, started through its executor, answered
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * How a session's commands are run, apart from the table that keeps them
 * (PaddockSessionCommands): an Exec or Run call checked, its command
 * started through the session's executor (on the host under a keeper of
 * its own; in a sandbox by its pid 1), and the call answered once it runs
 * or why it does not; then what the executor reports of it ("spawned",
 * "spawn-failed", "command-exited", a host command reaped), a spawn
 * deadline that passed, and a command's kill or release. It never calls
 * into the session: the session checks that it may run commands at all,
 * hands it the executor, and passes on what the executor says.
 */

#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "paddock-autofd.h"
#include "paddock-command-impl.h"
#include "paddock-command-runner.h"
#include "paddock-dbus-checks.h"
#include "paddock-error.h"
#include "paddock-sandbox-protocol.h"

struct _PaddockCommandRunner
{
  GObject                 parent_instance;

  char                   *session_id;
  char                   *session_path;
  char                   *workspace;   /* a command's folder when its call names none */
  PaddockSessionCommands *commands;
  /* Where the commands run, from the session's start() until it goes. */
  PaddockExecutor        *executor;
};

G_DEFINE_FINAL_TYPE (PaddockCommandRunner, paddock_command_runner, G_TYPE_OBJECT)

/* Asks pid 1 to SIGKILL command ID's tree (a command nobody can see). */
static void
kill_in_sandbox (PaddockCommandRunner *self,
                 guint32               id)
{
  if (self->executor != NULL)
    (void) paddock_executor_signal_command (self->executor, id, SIGKILL, NULL);
}

/* A sandboxed command is exported only once it runs (see
 * paddock_command_runner_start()), so one that goes before may never
 * have been. */
static void
unexport_command (PaddockCommandImpl *command)
{
  if (g_dbus_interface_skeleton_get_connection (G_DBUS_INTERFACE_SKELETON (command)) != NULL)
    g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (command));
}

/* The command runs: Exec answers with its object; Run's call goes to the
 * command, which answers once the command is over. */
static void
answer_started (GDBusMethodInvocation *invocation,
                PaddockCommandImpl    *command)
{
  if (g_str_equal (g_dbus_method_invocation_get_method_name (invocation), "Run"))
    paddock_command_impl_answer_when_done (command, invocation);
  else
    /* The generated completion answers INVOCATION alone (its object is
     * unused): the runner holds no session to pass. */
    paddock_ipc_session1_complete_exec (NULL, invocation, paddock_command_impl_get_object_path (command));
}

/* Command ID's Exec call leaves the table of those waiting for "spawned",
 * with its deadline: it is answered now (with the reference the table
 * held, which the caller of this already has as the borrowed pointer). */
static void
steal_pending (PaddockCommandRunner *self,
               guint32               id)
{
  (void) paddock_session_commands_steal_pending (self->commands, id);
}

/* A command the sandbox started but that cannot be one of ours (no
 * terminal, not published): killed, and its Exec or Run (INVOCATION, if
 * any) told why. */
static void G_GNUC_PRINTF (4, 5)
drop_spawned (PaddockCommandRunner  *self,
              PaddockCommandImpl    *command,
              GDBusMethodInvocation *invocation,
              const char            *format,
              ...)
{
  guint32 id = paddock_command_impl_get_id (command);

  kill_in_sandbox (self, id);
  if (invocation != NULL)
    {
      g_autofree char *message = NULL;
      va_list args;

      va_start (args, format);
      message = g_strdup_vprintf (format, args);
      va_end (args);
      steal_pending (self, id);
      g_dbus_method_invocation_return_error_literal (invocation, PADDOCK_ERROR, PADDOCK_ERROR_FAILED, message);
    }
  g_signal_handlers_disconnect_by_data (command, self);
  paddock_session_commands_remove (self->commands, id);
}

/**
 * paddock_command_runner_handle_event:
 * @connection: (nullable): the session's, where its commands are published;
 *   %NULL once it is no longer on the bus
 * @fd: (inout): a descriptor that came with the event, or -1
 *
 * Events about commands run inside the sandbox: "spawned" and
 * "spawn-failed" answer a pending Exec, "command-exited" ends a command.
 * "spawned" of a command on a terminal carries the terminal the sandbox
 * made, which this takes; any other *FD is left for the caller to close.
 */
void
paddock_command_runner_handle_event (PaddockCommandRunner *self,
                                     GDBusConnection      *connection,
                                     JsonObject           *event,
                                     int                  *fd)
{
  const char *name = json_object_get_string_member_with_default (event, PADDOCK_SANDBOX_EVENT_KEY_EVENT, "");
  gint64 id = json_object_get_int_member_with_default (event, PADDOCK_SANDBOX_EVENT_KEY_ID, -1);
  g_autoptr(PaddockCommandRunner) hold = NULL;
  PaddockCommandImpl *command;
  GDBusMethodInvocation *invocation;

  g_return_if_fail (PADDOCK_IS_COMMAND_RUNNER (self));

  /* Answering a call may drop the session's last reference, and ours. */
  hold = g_object_ref (self);
  if (id < 0 || id > G_MAXUINT32)
    return;

  command = paddock_session_commands_lookup (self->commands, (guint32) id);
  invocation = paddock_session_commands_get_pending (self->commands, (guint32) id);

  if (g_str_equal (name, PADDOCK_SANDBOX_EVENT_SPAWNED) && command != NULL)
    {
      g_autoptr(GError) error = NULL;

      /* Once per command (pid 1 says it once): a second would start its
       * streams again, their first sources left to fire on a command
       * freed when its export failed. */
      if (g_strcmp0 (paddock_ipc_command1_get_state (PADDOCK_IPC_COMMAND1 (command)), "starting") != 0)
        return;
      /* Its Exec or Run was answered already, that it did not start: the
       * sandbox's end was seen first (paddock_command_runner_fail_pending())
       * and this was read after. Nobody knows its path: not published. */
      if (invocation == NULL)
        {
          drop_spawned (self, command, NULL, "%s", "answered already");
          return;
        }

      /* A command on a terminal comes with the terminal the sandbox made:
       * no terminal, no command. */
      if (paddock_command_impl_needs_terminal (command) &&
          (*fd < 0 || !paddock_command_impl_adopt_terminal (command, paddock_steal_fd (fd), &error)))
        {
          drop_spawned (self, command, invocation, "The command could not start in the sandbox: %s",
                        error != NULL ? error->message : "it made no terminal");
          return;
        }

      /* Running before it is exported: its first State is "running", and
       * no PropertiesChanged for a "starting" nobody could see goes to
       * every listener (and through the bus) with each command. */
      paddock_command_impl_started (command, 0);
      /* A session no longer on the bus (destroyed, with a sandbox that
       * outlived its SIGKILL and a "spawned" still on its way) has nowhere
       * to publish it. */
      if (connection == NULL ||
          !g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (command), connection,
                                             paddock_command_impl_get_object_path (command), &error))
        {
          drop_spawned (self, command, invocation, "The command could not be published: %s",
                        error != NULL ? error->message : "its session is gone");
          return;
        }
      steal_pending (self, (guint32) id);
      answer_started (invocation, command);
    }
  else if (g_str_equal (name, PADDOCK_SANDBOX_EVENT_SPAWNED))
    {
      /* Released (its caller left) before it started: it goes at once. */
      kill_in_sandbox (self, (guint32) id);
      if (invocation != NULL)
        {
          steal_pending (self, (guint32) id);
          g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                                                 "Command %u was released before it started", (guint32) id);
        }
    }
  else if (g_str_equal (name, PADDOCK_SANDBOX_EVENT_SPAWN_FAILED))
    {
      gint64 err = json_object_get_int_member_with_default (event, PADDOCK_SANDBOX_EVENT_KEY_ERRNO, 0);
      const char *message = json_object_get_string_member_with_default (event, PADDOCK_SANDBOX_EVENT_KEY_MESSAGE, "could not start");

      if (invocation != NULL)
        {
          steal_pending (self, (guint32) id);
          g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR,
                                                 err == ENOENT ? PADDOCK_ERROR_NOT_FOUND :
                                                 err == EINVAL || err == EBADF ? PADDOCK_ERROR_INVALID_ARGUMENT :
                                                 err == EAGAIN ? PADDOCK_ERROR_QUOTA_EXCEEDED :
                                                 PADDOCK_ERROR_FAILED,
                                                 "The command could not start in the sandbox: %s", message);
        }
      if (command != NULL)
        {
          /* Not exported unless it was said "spawned" before, which
           * pid 1 never does. */
          unexport_command (command);
          g_signal_handlers_disconnect_by_data (command, self);
          paddock_session_commands_remove (self->commands, (guint32) id);
        }
    }
  else if (g_str_equal (name, PADDOCK_SANDBOX_EVENT_COMMAND_EXITED) && command != NULL)
    {
      paddock_command_impl_exited (command,
                                   (int) json_object_get_int_member_with_default (event, PADDOCK_SANDBOX_EVENT_KEY_STATUS, -1),
                                   (int) json_object_get_int_member_with_default (event, PADDOCK_SANDBOX_EVENT_KEY_SIGNAL, 0));
    }
}

/* No "spawned" in time (paddock-session-commands.c's spawn deadline): the
 * command's supervisor was stopped (or the whole sandbox is). The Exec
 * gets its one answer now, the command's object and channel go, and
 * pid 1 is asked for the command's SIGKILL: it kills a supervisor it
 * finds stopped, tree and all, or resumes it, and it ends what it
 * started. pid 1 no longer counts that supervisor as its spare, so later
 * commands do not go to it. */
static void
spawn_deadline_cb (PaddockSessionCommands *commands,
                   guint                   id,
                   PaddockCommandRunner   *self)
{
  g_autoptr(JsonObject) event = json_object_new ();
  g_autofree char *message = NULL;
  int no_fd = -1;

  kill_in_sandbox (self, id);
  /* What its supervisor says after this is about a command already answered. */
  paddock_executor_forget_command (self->executor, id);

  message = g_strdup_printf ("the session's command supervisor did not answer within %u ms "
                             "(a process in the session may have stopped it); the sandbox is asked to kill the command",
                             paddock_session_commands_get_spawn_deadline_ms ());
  json_object_set_string_member (event, PADDOCK_SANDBOX_EVENT_KEY_EVENT, PADDOCK_SANDBOX_EVENT_SPAWN_FAILED);
  json_object_set_int_member (event, PADDOCK_SANDBOX_EVENT_KEY_ID, id);
  json_object_set_int_member (event, PADDOCK_SANDBOX_EVENT_KEY_ERRNO, ETIMEDOUT);
  json_object_set_string_member (event, PADDOCK_SANDBOX_EVENT_KEY_MESSAGE, message);
  g_message ("Session %s: command %u: %s", self->session_id, id, message);
  /* Not published: spawn-failed only answers and forgets. */
  paddock_command_runner_handle_event (self, NULL, event, &no_fd);
}

static void
command_kill_cb (PaddockCommandImpl   *command,
                 int                   signal_number,
                 PaddockCommandRunner *self)
{
  g_autoptr(GError) error = NULL;

  /* The executor signals the command's whole tree (a subreaper holds it:
   * the sandbox's supervisor, the host's keeper), setsid()ed descendants
   * included. */
  if (!paddock_executor_signal_command (self->executor, paddock_command_impl_get_id (command), signal_number, &error))
    g_debug ("Session %s: could not kill command %u: %s", self->session_id,
             paddock_command_impl_get_id (command), error->message);
}

static void
command_released_cb (PaddockCommandImpl   *command,
                     PaddockCommandRunner *self)
{
  unexport_command (command);
  g_signal_handlers_disconnect_by_data (command, self);
  paddock_session_commands_remove (self->commands, paddock_command_impl_get_id (command));
}

/* A command its executor started ended (host: its keeper reaped it). */
void
paddock_command_runner_command_exited (PaddockCommandRunner *self,
                                       pid_t                 pid,
                                       int                   wait_status)
{
  guint32 id = paddock_session_commands_take_pid (self->commands, pid);
  PaddockCommandImpl *command = id != 0 ? paddock_session_commands_lookup (self->commands, id) : NULL;
  int exit_status = 0;
  int signal_number = 0;

  g_return_if_fail (PADDOCK_IS_COMMAND_RUNNER (self));

  if (WIFEXITED (wait_status))
    exit_status = WEXITSTATUS (wait_status);
  else if (WIFSIGNALED (wait_status))
    {
      signal_number = WTERMSIG (wait_status);
      exit_status = 128 + signal_number;
    }

  if (command != NULL)
    paddock_command_impl_exited (command, exit_status, signal_number);
}

/* Starts the command through the executor (host: under a keeper of its
 * own, leader of its own process session). */
static gboolean
spawn_on_host (PaddockCommandRunner  *self,
               PaddockCommandImpl    *command,
               char                 **argv,
               const char            *cwd,
               char                 **envp,
               gboolean               tty,
               PaddockCgroup         *cgroup,
               int                    cgroup_procs_fd,
               GError               **error)
{
  paddock_autofd int child_in = -1;
  paddock_autofd int child_out = -1;
  paddock_autofd int child_err = -1;
  g_autofree char *program = NULL;
  const char *path = g_environ_getenv (envp, "PATH");
  PaddockExecutorCommandSpec spec;
  pid_t pid;

  program = paddock_executor_find_in_path (argv[0], path != NULL ? path : "/usr/local/bin:/usr/bin:/bin");
  if (program == NULL)
    {
      g_autofree char *shown = paddock_dbus_display_bytes (argv[0]);

      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
                   "No program “%s” in the session's PATH", shown);
      return FALSE;
    }

  if (!paddock_command_impl_prepare (command, &child_in, &child_out, &child_err, error))
    return FALSE;

  spec = (PaddockExecutorCommandSpec) {
    .id = paddock_command_impl_get_id (command),
    .program = program,
    .argv = argv,
    .cwd = cwd,
    .envp = envp,
    .tty = tty,
    .stdio = { child_in, child_out, child_err },
    .cgroup = cgroup,
    .cgroup_procs_fd = cgroup_procs_fd,
  };
  if (!paddock_executor_spawn_command (self->executor, &spec, &pid, error))
    return FALSE;

  paddock_session_commands_add_pid (self->commands, pid, paddock_command_impl_get_id (command));
  paddock_command_impl_started (command, pid);
  return TRUE;
}

/* Asks the sandbox's pid 1 to run the command beside the agent, with the
 * same confinement, passing the command's three standard fds. */
static gboolean
spawn_in_sandbox (PaddockCommandRunner  *self,
                  PaddockCommandImpl    *command,
                  const char * const    *argv,
                  const char            *cwd,
                  char                 **envp,
                  gboolean               tty,
                  GError               **error)
{
  paddock_autofd int child_in = -1;
  paddock_autofd int child_out = -1;
  paddock_autofd int child_err = -1;
  PaddockExecutorCommandSpec spec;
  pid_t pid;

  /* A terminal of ours would be of the daemon's devpts, which the sandbox
   * does not show: the sandbox makes one (paddock-linux-executor.c). */
  if (!tty && !paddock_command_impl_prepare (command, &child_in, &child_out, &child_err, error))
    return FALSE;

  /* Our copies of the command's ends close when we return: the sandbox
   * has its own, and output ends when the command's are closed. */
  spec = (PaddockExecutorCommandSpec) {
    .id = paddock_command_impl_get_id (command),
    .argv = (char **) argv,
    .cwd = cwd,
    .envp = envp,
    .tty = tty,
    .stdio = { child_in, child_out, child_err },
    .cgroup_procs_fd = -1,
  };
  return paddock_executor_spawn_command (self->executor, &spec, &pid, error);
}

/* Whether the request itself may be run: FALSE with why. */
static gboolean
check_request (PaddockCommandRunner  *self,
               const char            *method,
               const char            *caller,
               const char * const    *argv,
               const char            *cwd,
               GVariant              *env,
               guint                  timeout_ms,
               GError               **error)
{
  g_autofree char *argument = NULL;
  gsize argv_bytes = 0;

  if (argv == NULL || argv[0] == NULL || argv[0][0] == '\0')
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT, "%s needs a command", method);
      return FALSE;
    }
  for (guint i = 0; argv[i] != NULL; i++)
    argv_bytes += strlen (argv[i]) + 1;
  if (g_strv_length ((char **) argv) > 4096 || argv_bytes > 256 * 1024)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                   "%s: argument “argv” takes at most 4096 arguments (256 KiB)", method);
      return FALSE;
    }
  if ((cwd[0] != '\0' && cwd[0] != '/') || strlen (cwd) >= PADDOCK_DBUS_MAX_PATH)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                   "%s: argument “cwd” is an absolute folder of at most %d bytes, "
                   "or empty for the workspace", method, PADDOCK_DBUS_MAX_PATH - 1);
      return FALSE;
    }
  if (timeout_ms > PADDOCK_COMMAND_MAX_TIMEOUT_MS)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                   "%s: argument “timeout_ms” is at most 24 hours", method);
      return FALSE;
    }
  argument = g_strdup_printf ("%s: argument “env”", method);
  if (!paddock_dbus_check_env (env, argument, 256, 256 * 1024, error))
    return FALSE;
  return paddock_session_commands_check_quota (self->commands, caller, error);
}

/**
 * paddock_command_runner_start:
 * @base_envp: (transfer full): the session's environment for its commands
 *
 * Exec and Run of a session that runs: checks the request, starts the
 * command and answers @invocation once it runs or why it does not.
 * Returns %TRUE when a command now runs under the executor on the host
 * (not in a sandbox), until the executor says "command-gone" of it.
 */
gboolean
paddock_command_runner_start (PaddockCommandRunner   *self,
                              GDBusConnection        *connection,
                              GDBusMethodInvocation  *invocation,
                              const char * const     *argv,
                              const char             *cwd,
                              GVariant               *env,
                              char                  **base_envp,
                              guint                   timeout_ms,
                              gboolean                tty,
                              PaddockCgroup          *cgroup,
                              int                     cgroup_procs_fd)
{
  const char *method = g_dbus_method_invocation_get_method_name (invocation);
  const char *caller = g_dbus_method_invocation_get_sender (invocation);
  g_auto(GStrv) envp = base_envp;
  g_autoptr(PaddockCommandImpl) command = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  gboolean on_host = FALSE;
  GVariantIter iter;
  const char *key;
  const char *value;
  guint32 id;

  g_return_val_if_fail (PADDOCK_IS_COMMAND_RUNNER (self), FALSE);
  g_return_val_if_fail (self->executor != NULL, FALSE);

  if (!check_request (self, method, caller, argv, cwd, env, timeout_ms, &error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return FALSE;
    }

  g_variant_iter_init (&iter, env);
  while (g_variant_iter_next (&iter, "{&s&s}", &key, &value))
    envp = g_environ_setenv (envp, key, value, TRUE);

  paddock_session_commands_watch_caller (self->commands, connection, caller);

  id = paddock_session_commands_next_id (self->commands);
  path = g_strdup_printf ("%s/command/%u", self->session_path, id);
  command = paddock_command_impl_new (connection, path, id, caller, tty, timeout_ms);
  g_signal_connect (command, "kill-requested", G_CALLBACK (command_kill_cb), self);
  g_signal_connect (command, "released", G_CALLBACK (command_released_cb), self);

  if (paddock_executor_is_sandboxed (self->executor))
    {
      /* Exported once the sandbox says it runs (the Exec answer carries
       * its path; nobody can ask for it before). */
      paddock_session_commands_add (self->commands, command);
      if (spawn_in_sandbox (self, command, argv, cwd[0] != '\0' ? cwd : self->workspace, envp, tty, &error))
        {
          /* Answered when the sandbox says "spawned" or why not; the
           * table holds the handler's reference until then. */
          paddock_session_commands_add_pending (self->commands, id, invocation);
          return FALSE;
        }
      paddock_session_commands_remove (self->commands, id);
    }
  else if (g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (command), connection, path, &error))
    {
      paddock_session_commands_add (self->commands, command);
      on_host = spawn_on_host (self, command, (char **) argv, cwd[0] != '\0' ? cwd : self->workspace,
                               envp, tty, cgroup, cgroup_procs_fd, &error);
      if (!on_host)
        {
          g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (command));
          paddock_session_commands_remove (self->commands, id);
        }
    }

  if (error != NULL)
    {
      g_signal_handlers_disconnect_by_data (command, self);
      g_dbus_method_invocation_return_gerror (invocation, error);
      return FALSE;
    }

  answer_started (invocation, command);
  return on_host;
}

/* The sandbox is gone (or the session): Exec calls it never answered get
 * an answer now. */
void
paddock_command_runner_fail_pending (PaddockCommandRunner *self)
{
  g_autoptr(GError) error = NULL;

  g_return_if_fail (PADDOCK_IS_COMMAND_RUNNER (self));

  if (self->commands == NULL)
    return;
  g_set_error (&error, PADDOCK_ERROR, PADDOCK_ERROR_BUSY, "Session %s ended before the command started",
               self->session_id);
  paddock_session_commands_fail_pending (self->commands, error);
}

/* The session's commands end with it: they are killed, not done. */
void
paddock_command_runner_expect_kill (PaddockCommandRunner *self)
{
  g_autoptr(GPtrArray) commands = paddock_session_commands_dup_all (self->commands);

  for (guint i = 0; i < commands->len; i++)
    paddock_command_impl_expect_kill (g_ptr_array_index (commands, i));
}

/* The sandbox is gone and its PID namespace with it: every command it
 * ran was killed with it, and no "command-exited" will come for them.
 * Say so, or their callers would wait for ever. */
void
paddock_command_runner_sandbox_gone (PaddockCommandRunner *self)
{
  g_autoptr(GPtrArray) commands = paddock_session_commands_dup_all (self->commands);

  for (guint i = 0; i < commands->len; i++)
    if (paddock_command_impl_is_running (g_ptr_array_index (commands, i)))
      {
        paddock_command_impl_expect_kill (g_ptr_array_index (commands, i));
        paddock_command_impl_exited (g_ptr_array_index (commands, i), 128 + SIGKILL, SIGKILL);
      }
}

/* The daemon quits: no main loop will see the commands end, so calls
 * that wait for them are answered now, not left to the bus's NoReply. */
void
paddock_command_runner_quit (PaddockCommandRunner *self)
{
  g_autoptr(GPtrArray) commands = NULL;

  paddock_command_runner_fail_pending (self);
  commands = paddock_session_commands_dup_all (self->commands);
  for (guint i = 0; i < commands->len; i++)
    paddock_command_impl_answer_run_quitting (g_ptr_array_index (commands, i));
}

static gboolean
unexport_later_cb (gpointer user_data)
{
  unexport_command (user_data);
  return G_SOURCE_REMOVE;
}

/* The session was destroyed: the commands went with its processes. Their
 * objects stay a minute so that callers can still read how they ended,
 * then go. They stay in the table too: a child watch that fires after
 * this finds its command and records the real exit status. */
void
paddock_command_runner_let_go (PaddockCommandRunner *self)
{
  g_autoptr(GPtrArray) commands = paddock_session_commands_dup_all (self->commands);

  for (guint i = 0; i < commands->len; i++)
    {
      g_signal_handlers_disconnect_by_data (g_ptr_array_index (commands, i), self);
      g_timeout_add_seconds_full (G_PRIORITY_DEFAULT, 60, unexport_later_cb,
                                  g_object_ref (g_ptr_array_index (commands, i)), g_object_unref);
    }
}

/* The session's start() made its executor: commands run through it. */
void
paddock_command_runner_set_executor (PaddockCommandRunner *self,
                                     PaddockExecutor      *executor)
{
  g_return_if_fail (PADDOCK_IS_COMMAND_RUNNER (self));

  g_set_object (&self->executor, executor);
}

/* The session goes: the executor is let go with it, calls still waiting
 * are answered, and callers are no longer watched. */
void
paddock_command_runner_close (PaddockCommandRunner *self)
{
  g_return_if_fail (PADDOCK_IS_COMMAND_RUNNER (self));

  g_clear_object (&self->executor);
  paddock_command_runner_fail_pending (self);
  if (self->commands != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->commands, self);
      paddock_session_commands_unwatch_callers (self->commands);
    }
}

static void
paddock_command_runner_dispose (GObject *object)
{
  PaddockCommandRunner *self = PADDOCK_COMMAND_RUNNER (object);

  if (self->commands != NULL)
    g_signal_handlers_disconnect_by_data (self->commands, self);
  g_clear_object (&self->executor);

  G_OBJECT_CLASS (paddock_command_runner_parent_class)->dispose (object);
}

static void
paddock_command_runner_finalize (GObject *object)
{
  PaddockCommandRunner *self = PADDOCK_COMMAND_RUNNER (object);

  g_clear_object (&self->commands);
  g_clear_pointer (&self->session_id, g_free);
  g_clear_pointer (&self->session_path, g_free);
  g_clear_pointer (&self->workspace, g_free);

  G_OBJECT_CLASS (paddock_command_runner_parent_class)->finalize (object);
}

static void
paddock_command_runner_class_init (PaddockCommandRunnerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_command_runner_dispose;
  object_class->finalize = paddock_command_runner_finalize;
}

static void
paddock_command_runner_init (PaddockCommandRunner *self)
{
}

PaddockCommandRunner *
paddock_command_runner_new (const char             *session_id,
                            const char             *session_path,
                            const char             *workspace,
                            PaddockSessionCommands *commands)
{
  PaddockCommandRunner *self;

  g_return_val_if_fail (PADDOCK_IS_SESSION_COMMANDS (commands), NULL);

  self = g_object_new (PADDOCK_TYPE_COMMAND_RUNNER, NULL);
  self->session_id = g_strdup (session_id);
  self->session_path = g_strdup (session_path);
  self->workspace = g_strdup (workspace);
  self->commands = g_object_ref (commands);
  g_signal_connect (commands, "spawn-deadline", G_CALLBACK (spawn_deadline_cb), self);
  return self;
}
