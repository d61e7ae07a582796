/* paddock-proc-stat.h — what /proc/PID/stat says of a process
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  char     state;       /* field 3: 'Z' or 'X' once it has exited */
  guint32  ppid;        /* field 4 */
  int      session;     /* field 6: its process session id */
  guint64  start_time;  /* field 22: clock ticks since boot; with the boot
                         * id it names one process for good */
  char    *name;        /* field 2, the comm, valid UTF-8; NULL unless asked */
} PaddockProcStat;

gboolean paddock_proc_stat_read  (guint32          pid,
                                  gboolean         with_name,
                                  PaddockProcStat *out);
void     paddock_proc_stat_clear (PaddockProcStat *stat);

G_END_DECLS
