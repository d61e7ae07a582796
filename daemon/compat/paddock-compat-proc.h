/* paddock-compat-proc.h — the process table: which processes there are, and what one is
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  char     state;       /* 'Z' or 'X' once it has exited */
  guint32  ppid;
  int      session;     /* its process session id */
  guint64  start_time;  /* clock ticks since boot; with the boot id it
                         * names one process for good */
  char    *name;        /* the comm, valid UTF-8; NULL unless asked */
} PaddockProcStat;

gboolean  paddock_compat_proc_supported         (void);
GArray   *paddock_compat_proc_list_pids         (GError          **error);
gboolean  paddock_compat_proc_read_stat         (guint32           pid,
                                                 gboolean          with_name,
                                                 PaddockProcStat  *out);
guint64   paddock_compat_proc_start_time        (guint32           pid);
char     *paddock_compat_proc_read_name         (guint32           pid);
char     *paddock_compat_proc_read_command_line (guint32           pid,
                                                 gsize             max_bytes);
void      paddock_proc_stat_clear               (PaddockProcStat  *stat);

G_END_DECLS
