/* paddock-session-processes.c — org.paddock.Session1's process list and kill
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The session's processes are the ones the session itself counts and stops
 * (its cgroup where it has one, else its PID namespace or process session):
 * the same list, so that what the app shows is what Stop would end. Kill
 * checks membership after pinning the process with a pidfd, so a pid that
 * is reused between the check and the signal cannot redirect it.
 *
 * The list is the session's gate's (paddock-session-gate.c), asked each
 * time (for Kill, after the pin): this never calls into the session, and
 * is made without one.
 */

#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "paddock-compat-pidfd.h"
#include "paddock-compat-proc.h"
#include "paddock-error.h"
#include "paddock-session-calls.h"
#include "paddock-session-processes.h"

/* A session may fork without limit where it has no cgroup; the answer does
 * not. ProcessCount still tells the whole number. */
#define MAX_PROCESS_ROWS    4096
/* The command line is for reading, not for replaying. */
#define MAX_COMMAND_LINE    4096

struct _PaddockSessionProcesses
{
  GObject parent_instance;

  PaddockSessionCallHandlers calls;  /* its handle-* handlers on the session's skeleton */
  PaddockSessionGate        *gate;
};

G_DEFINE_FINAL_TYPE (PaddockSessionProcesses, paddock_session_processes, G_TYPE_OBJECT)

static void
paddock_session_processes_finalize (GObject *object)
{
  PaddockSessionProcesses *self = PADDOCK_SESSION_PROCESSES (object);

  paddock_session_call_handlers_clear (&self->calls);
  g_clear_object (&self->gate);

  G_OBJECT_CLASS (paddock_session_processes_parent_class)->finalize (object);
}

static void
paddock_session_processes_class_init (PaddockSessionProcessesClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = paddock_session_processes_finalize;
}

static void
paddock_session_processes_init (PaddockSessionProcesses *self)
{
}

/* @gate lists the session's processes, as the session counts and stops
 * them. */
PaddockSessionProcesses *
paddock_session_processes_new (PaddockSessionGate *gate)
{
  PaddockSessionProcesses *self;

  g_return_val_if_fail (PADDOCK_IS_SESSION_GATE (gate), NULL);

  self = g_object_new (PADDOCK_TYPE_SESSION_PROCESSES, NULL);
  self->gate = g_object_ref (gate);
  return self;
}

typedef struct
{
  guint32  pid;
  guint32  ppid;
  char     state;
  char    *name;
  char    *command_line;
} ProcessRow;

static void
process_row_clear (ProcessRow *row)
{
  g_clear_pointer (&row->name, g_free);
  g_clear_pointer (&row->command_line, g_free);
}

static gboolean
read_stat (guint32     pid,
           ProcessRow *row)
{
  PaddockProcStat stat;

  if (!paddock_compat_proc_read_stat (pid, TRUE, &stat))
    return FALSE;
  row->pid = pid;
  row->ppid = stat.ppid;
  row->state = stat.state;
  row->name = g_steal_pointer (&stat.name);
  return TRUE;
}

static int
compare_pids (gconstpointer a,
              gconstpointer b)
{
  pid_t pa = *(const pid_t *) a;
  pid_t pb = *(const pid_t *) b;

  return (pa > pb) - (pa < pb);
}

static gboolean
handle_list (PaddockIpcSession1      *session,
             GDBusMethodInvocation   *invocation,
             PaddockSessionProcesses *self)
{
  g_autoptr(GArray) pids = paddock_session_gate_list_pids (self->gate);
  GVariantBuilder builder;
  guint rows = 0;

  /* Nothing to read the rows from (the compat point's fallback): an empty
   * list would read as a session with no process left. */
  if (!paddock_compat_proc_supported ())
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED,
                                             "This system has no process table Paddock can read, "
                                             "so a session's processes cannot be listed");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  g_array_sort (pids, compare_pids);
  g_variant_builder_init (&builder, G_VARIANT_TYPE ("a(uusss)"));

  for (guint i = 0; i < pids->len && rows < MAX_PROCESS_ROWS; i++)
    {
      ProcessRow row = { 0, };
      g_autofree char *command_line = NULL;
      char state[2] = { 0, };

      /* Gone since it was listed: nothing to show. */
      if (!read_stat ((guint32) g_array_index (pids, pid_t, i), &row))
        continue;

      /* Empty for kernel threads and zombies, which have none, and for
       * one gone since its stat was read. */
      command_line = paddock_compat_proc_read_command_line (row.pid, MAX_COMMAND_LINE);
      if (command_line == NULL)
        command_line = g_strdup ("");
      state[0] = g_ascii_isalpha (row.state) ? row.state : '?';
      g_variant_builder_add (&builder, "(uusss)", row.pid, row.ppid, state, row.name, command_line);
      process_row_clear (&row);
      rows++;
    }

  paddock_ipc_session1_complete_list_processes (session, invocation, g_variant_builder_end (&builder));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
session_has_pid (PaddockSessionProcesses *self,
                 pid_t                    pid)
{
  g_autoptr(GArray) pids = paddock_session_gate_list_pids (self->gate);

  for (guint i = 0; i < pids->len; i++)
    if (g_array_index (pids, pid_t, i) == pid)
      return TRUE;
  return FALSE;
}

static gboolean
handle_kill (PaddockIpcSession1      *session,
             GDBusMethodInvocation   *invocation,
             guint                   pid,
             guint                   signum,
             PaddockSessionProcesses *self)
{
  int pidfd;
  int saved_errno;

  if (signum < 1 || signum > (guint) SIGRTMAX)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                             "%u is not a signal number (1 to %d)", signum, SIGRTMAX);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (pid < 1 || pid > G_MAXINT)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                             "%u is not a process id", pid);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  /* Pin the process first, then check that the pinned one is the session's:
   * a pid that dies and is reused after this point makes the signal fail
   * (ESRCH) instead of reaching a stranger. pidfds are CLOEXEC. */
  pidfd = paddock_compat_pidfd_open ((pid_t) pid);
  if (pidfd < 0 && errno == ENOSYS)
    {
      /* No way to pin it here: kill(pid) could reach a stranger that
       * took the pid after our check, so no signal is sent at all. */
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED,
                                             "This system cannot pin a process (no pidfd), so no signal "
                                             "is sent by process id");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (pidfd < 0 || !session_has_pid (self, (pid_t) pid))
    {
      if (pidfd >= 0)
        close (pidfd);
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_ACCESS_DENIED,
                                             "Process %u is not one of this session's", pid);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  if (paddock_compat_pidfd_send_signal (pidfd, (int) signum) < 0)
    {
      saved_errno = errno;
      close (pidfd);
      if (saved_errno == ESRCH)
        g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
                                               "Process %u has already ended", pid);
      else
        g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                                               "Could not signal process %u: %s", pid, g_strerror (saved_errno));
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  close (pidfd);
  paddock_ipc_session1_complete_kill_process (session, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* From now on it answers its calls on @skeleton itself (the session's
 * D-Bus object leaves those methods to it); they are disconnected when
 * it goes, or when the skeleton does. */
void
paddock_session_processes_attach (PaddockSessionProcesses *self,
                                  PaddockIpcSession1 *skeleton)
{
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-list-processes", G_CALLBACK (handle_list), self);
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-kill-process", G_CALLBACK (handle_kill), self);
}
