/* paddock-proc-stat.h — the old name of the process table's one-process read
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The reader is the compat point daemon/compat/paddock-compat-proc.c.
 * This name stays only for the callers not moved yet:
 * paddock-session-impl.c (being split by another change, not to be
 * edited meanwhile) and daemon/executor/paddock-sandbox-pidns.c; include
 * paddock-compat-proc.h in new code, and drop this header once they do.
 */

#pragma once

#include "paddock-compat-proc.h"

static inline gboolean
paddock_proc_stat_read (guint32          pid,
                        gboolean         with_name,
                        PaddockProcStat *out)
{
  return paddock_compat_proc_read_stat (pid, with_name, out);
}
