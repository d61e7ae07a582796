/* paddock-proc-stat.c — what /proc/PID/stat says of a process
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One parser for the session's liveness checks, its process-session scan
 * and Session1.ListProcesses.
 */

#include "config.h"

#include "paddock-proc-stat.h"

#include <stdio.h>
#include <string.h>

/* "pid (comm) state ppid pgrp session …": comm may hold spaces and
 * parentheses, so it ends at the last ')', and the fields are counted
 * from there. FALSE when the process is gone or the line is not whole. */
gboolean
paddock_proc_stat_read (guint32          pid,
                        gboolean         with_name,
                        PaddockProcStat *out)
{
  char path[32];
  g_autofree char *contents = NULL;
  const char *open_paren;
  const char *close_paren;
  unsigned int ppid = 0;

  memset (out, 0, sizeof *out);
  g_snprintf (path, sizeof path, "/proc/%u/stat", pid);
  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return FALSE;

  open_paren = strchr (contents, '(');
  close_paren = strrchr (contents, ')');
  if (open_paren == NULL || close_paren == NULL || close_paren < open_paren ||
      sscanf (close_paren + 1,
              " %c %u %*s %d %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %" G_GUINT64_FORMAT,
              &out->state, &ppid, &out->session, &out->start_time) != 4)
    return FALSE;

  out->ppid = ppid;
  if (with_name)
    out->name = g_utf8_make_valid (open_paren + 1, close_paren - open_paren - 1);
  return TRUE;
}

void
paddock_proc_stat_clear (PaddockProcStat *stat)
{
  g_clear_pointer (&stat->name, g_free);
}
