/* paddock-session-leftovers.h — a process an earlier daemon left running, pinned by a pidfd
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

/* What an earlier daemon left running of a restored session
 * (paddock-session-leftovers.c): pinned processes, ended on the main loop. */
typedef struct
{
  int     pidfd;
  pid_t   pid;         /* as pinned: never read back from the pidfd */
  guint64 start_time;  /* as pinned (0: unknown), for the record */
} PaddockLeftover;

gboolean                 _paddock_leftover_pin             (GArray                  *pinned,
                                                            pid_t                    pid,
                                                            guint64                  start_time);
gboolean                 _paddock_leftover_is_pinned       (GArray                  *pinned,
                                                            pid_t                    pid);
/* Lists pids of the session (a new array), from SOURCE. */
typedef GArray *(*PaddockLeftoverListFunc) (gpointer source);
/* Pins every pid LIST gives that is not pinned yet, and keeps of those only
 * the ones LIST gives again after. */
void                     _paddock_leftover_pin_listed      (GArray                  *pinned,
                                                            PaddockLeftoverListFunc  list,
                                                            gpointer                 source);

G_END_DECLS
