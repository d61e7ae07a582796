/* paddock-compat-proc.c — the process table: which processes there are, and what one is
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A host session without a cgroup is found in the process table (its
 * process sessions, its keepers' descendants: paddock-process-tree.c),
 * a leftover is named by its pid and start time, and
 * Session1.ListProcesses shows each process's parent, state, name and
 * command line. Linux has all of it in /proc (/proc/PID/stat, one parser
 * here, and /proc/PID/cmdline). Elsewhere the fallback says unsupported
 * (ENOSYS; G_FILE_ERROR_NOSYS for the listing) and reads nothing:
 * a caller that cannot list a session's processes must say it does not
 * know them, never guess from something weaker (a process group, a ps(1)
 * run). macOS's proc_listpids()/proc_pidinfo() and FreeBSD's
 * sysctl(KERN_PROC) are the ports (docs/PORTING.md).
 */

#include "config.h"

#include "paddock-compat.h"
#include "paddock-compat-proc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

gboolean
paddock_compat_proc_supported (void)
{
  return PADDOCK_COMPAT_LINUX;
}

/* The pids (guint32) of every process there is now, in no order; NULL
 * with an error where the system has no process table we can read. */
GArray *
paddock_compat_proc_list_pids (GError **error)
{
#if PADDOCK_COMPAT_LINUX
  g_autoptr(GArray) pids = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, error);
  const char *entry;

  if (proc == NULL)
    return NULL;
  while ((entry = g_dir_read_name (proc)) != NULL)
    {
      guint64 number;
      guint32 pid;

      if (!g_ascii_string_to_unsigned (entry, 10, 1, G_MAXINT, &number, NULL))
        continue;
      pid = (guint32) number;
      g_array_append_val (pids, pid);
    }
  return g_steal_pointer (&pids);
#else
  g_set_error_literal (error, G_FILE_ERROR, G_FILE_ERROR_NOSYS,
                       "This system has no process table Paddock can read");
  return NULL;
#endif
}

/* "pid (comm) state ppid pgrp session …": comm may hold spaces and
 * parentheses, so it ends at the last ')', and the fields are counted
 * from there (3 state, 4 ppid, 6 session, 22 start time). FALSE when the
 * process is gone or the line is not whole (errno ESRCH), or where there
 * is no process table to read (ENOSYS). */
gboolean
paddock_compat_proc_read_stat (guint32          pid,
                               gboolean         with_name,
                               PaddockProcStat *out)
{
#if PADDOCK_COMPAT_LINUX
  char path[32];
  g_autofree char *contents = NULL;
  const char *open_paren;
  const char *close_paren;
  unsigned int ppid = 0;

  memset (out, 0, sizeof *out);
  g_snprintf (path, sizeof path, "/proc/%u/stat", pid);
  if (!g_file_get_contents (path, &contents, NULL, NULL))
    {
      errno = ESRCH;
      return FALSE;
    }

  open_paren = strchr (contents, '(');
  close_paren = strrchr (contents, ')');
  if (open_paren == NULL || close_paren == NULL || close_paren < open_paren ||
      sscanf (close_paren + 1,
              " %c %u %*s %d %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %" G_GUINT64_FORMAT,
              &out->state, &ppid, &out->session, &out->start_time) != 4)
    {
      errno = ESRCH;
      return FALSE;
    }

  out->ppid = ppid;
  if (with_name)
    out->name = g_utf8_make_valid (open_paren + 1, close_paren - open_paren - 1);
  return TRUE;
#else
  (void) pid;
  (void) with_name;
  memset (out, 0, sizeof *out);
  errno = ENOSYS;
  return FALSE;
#endif
}

/* A process's start time (with the boot id, its name for good), or 0 when
 * it is gone or there is no process table. */
guint64
paddock_compat_proc_start_time (guint32 pid)
{
  PaddockProcStat stat;

  return paddock_compat_proc_read_stat (pid, FALSE, &stat) ? stat.start_time : 0;
}

/* Its comm (valid UTF-8, the process's own choice), or NULL (errno as
 * paddock_compat_proc_read_stat()'s). */
char *
paddock_compat_proc_read_name (guint32 pid)
{
  PaddockProcStat stat;

  if (!paddock_compat_proc_read_stat (pid, TRUE, &stat))
    return NULL;
  return g_steal_pointer (&stat.name);
}

/* Its arguments joined by spaces, at most MAX_BYTES of them, valid UTF-8;
 * "" for kernel threads and zombies, which have none; NULL when it is gone
 * (errno ESRCH) or where there is no process table (ENOSYS). */
char *
paddock_compat_proc_read_command_line (guint32 pid,
                                       gsize   max_bytes)
{
#if PADDOCK_COMPAT_LINUX
  g_autofree char *path = g_strdup_printf ("/proc/%u/cmdline", pid);
  g_autofree char *contents = NULL;
  gsize length = 0;

  if (!g_file_get_contents (path, &contents, &length, NULL))
    {
      errno = ESRCH;
      return NULL;
    }

  if (length > max_bytes)
    length = max_bytes;
  while (length > 0 && contents[length - 1] == '\0')
    length--;
  for (gsize i = 0; i < length; i++)
    if (contents[i] == '\0')
      contents[i] = ' ';

  return g_utf8_make_valid (contents, length);
#else
  (void) pid;
  (void) max_bytes;
  errno = ENOSYS;
  return NULL;
#endif
}

void
paddock_proc_stat_clear (PaddockProcStat *stat)
{
  g_clear_pointer (&stat->name, g_free);
}
