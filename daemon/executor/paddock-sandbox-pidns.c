/* paddock-sandbox-pidns.c — a sandbox's PID namespace as the host sees it: found, listed
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The linux executor's process-tree facts: every process of a sandboxed
 * session is in its PID namespace, however it forked or setsid()ed, so
 * that namespace (found through the helper's one child, pid 1) is what
 * makes listing, and so teardown, complete. Reads /proc only; owns no
 * process and signals none.
 */

#include "config.h"

#include <string.h>

#include "paddock-compat-proc.h"
#include "paddock-sandbox-pidns.h"

static gboolean
process_alive (pid_t pid)
{
  PaddockProcStat stat;

  return paddock_compat_proc_read_stat ((guint32) pid, FALSE, &stat) && stat.state != 'Z' && stat.state != 'X';
}

/* Whether @pid is the first process of a PID namespace other than ours:
 * the last number of its NSpid line (its pid in its own namespace) is 1.
 * The helper forks other children too (the canary probes) in the
 * daemon's namespace, and its pid 1 may not have been cloned yet: a
 * namespace found through one of those would be the daemon's own, whose
 * every process would then count as the session's (and be signalled
 * with it, SIGSTOP by the stage guard, say). */
static gboolean
is_namespace_init (pid_t pid)
{
  g_autofree char *status_path = g_strdup_printf ("/proc/%d/status", (int) pid);
  g_autofree char *status = NULL;
  const char *line;
  const char *last;

  if (!g_file_get_contents (status_path, &status, NULL, NULL))
    return FALSE;
  line = strstr (status, "\nNSpid:");
  if (line == NULL)
    return FALSE;
  line += strlen ("\nNSpid:");
  last = line;
  for (const char *c = line; *c != '\0' && *c != '\n'; c++)
    if ((*c == ' ' || *c == '\t') && c[1] != ' ' && c[1] != '\t' && c[1] != '\n')
      last = c + 1;
  /* A single number: the process is in our namespace (or one we cannot
   * see into), never a sandbox's pid 1. */
  return last != line && strncmp (last, "1", 1) == 0 && (last[1] == '\n' || last[1] == '\0');
}

/**
 * paddock_sandbox_pidns_find:
 * @helper_pid: the sandbox helper (the daemon's child), whose one child
 *   is the sandbox's pid 1
 *
 * Finds the namespace through pid 1, once: later calls return what was
 * found. Pid 1 is remembered (with its start time) only when it was the
 * same process before and after its namespace was read.
 *
 * Returns: (nullable): the namespace's name, or NULL while there is no
 *   pid 1 to find it through
 */
const char *
paddock_sandbox_pidns_find (PaddockSandboxPidns *pidns,
                            pid_t                helper_pid)
{
  g_autofree char *children_path = NULL;
  g_autofree char *children = NULL;
  g_autofree char *ns_path = NULL;
  g_autofree char *own_name = NULL;
  guint64 init_pid;
  guint64 init_start_time;

  if (pidns->name != NULL || helper_pid <= 0)
    return pidns->name;

  children_path = g_strdup_printf ("/proc/%d/task/%d/children", (int) helper_pid, (int) helper_pid);
  if (!g_file_get_contents (children_path, &children, NULL, NULL) ||
      !g_ascii_string_to_unsigned (g_strstrip (children), 10, 1, G_MAXINT, &init_pid, NULL))
    return NULL;

  init_start_time = paddock_compat_proc_start_time ((guint32) init_pid);
  if (!is_namespace_init ((pid_t) init_pid))
    return NULL;
  ns_path = g_strdup_printf ("/proc/%" G_GUINT64_FORMAT "/ns/pid", init_pid);
  pidns->name = g_file_read_link (ns_path, NULL);
  own_name = g_file_read_link ("/proc/self/ns/pid", NULL);
  /* Never our own namespace, whatever was read (see is_namespace_init). */
  if (pidns->name != NULL && (own_name == NULL || g_str_equal (pidns->name, own_name)))
    {
      g_clear_pointer (&pidns->name, g_free);
      return NULL;
    }
  /* Read before and after the namespace: the same process both times. */
  if (pidns->name != NULL && init_start_time != 0 &&
      paddock_compat_proc_start_time ((guint32) init_pid) == init_start_time)
    {
      pidns->init_pid = (pid_t) init_pid;
      pidns->init_start_time = init_start_time;
    }
  return pidns->name;
}

/**
 * paddock_sandbox_pidns_list:
 * @helper_pid: the sandbox helper, listed first while it runs unreaped
 * @helper_reaped: whether it was reaped (its pid may be a stranger's)
 *
 * Returns: (transfer full) (element-type pid_t): the session's processes
 *   that run: the helper and every process of the namespace
 */
GArray *
paddock_sandbox_pidns_list (PaddockSandboxPidns *pidns,
                            pid_t                helper_pid,
                            gboolean             helper_reaped)
{
  GArray *pids = g_array_new (FALSE, FALSE, sizeof (pid_t));
  g_autoptr(GDir) proc = NULL;
  const char *name = paddock_sandbox_pidns_find (pidns, helper_pid);
  const char *entry;

  if (helper_pid > 0 && !helper_reaped && process_alive (helper_pid))
    g_array_append_val (pids, helper_pid);

  if (name == NULL)
    return pids;
  /* Pid 1 exits only after everything else in its namespace, and then the
   * namespace's number may go to a new namespace (another session's): no
   * scan by that number once our pid 1 is gone. */
  if (pidns->init_pid > 0 &&
      (!process_alive (pidns->init_pid) || paddock_compat_proc_start_time ((guint32) pidns->init_pid) != pidns->init_start_time))
    return pids;

  proc = g_dir_open ("/proc", 0, NULL);
  while (proc != NULL && (entry = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *ns_path = NULL;
      g_autofree char *ns = NULL;
      guint64 pid;

      if (!g_ascii_string_to_unsigned (entry, 10, 1, G_MAXINT, &pid, NULL))
        continue;

      ns_path = g_strdup_printf ("/proc/%s/ns/pid", entry);
      ns = g_file_read_link (ns_path, NULL);
      if (g_strcmp0 (ns, name) == 0 && process_alive ((pid_t) pid))
        {
          pid_t found = (pid_t) pid;
          g_array_append_val (pids, found);
        }
    }

  return pids;
}

/* Forgets everything known (the namespace is gone). */
void
paddock_sandbox_pidns_clear (PaddockSandboxPidns *pidns)
{
  g_clear_pointer (&pidns->name, g_free);
  pidns->init_pid = 0;
  pidns->init_start_time = 0;
}
