/* paddock-session-process.h — a session's processes: its executor, agent, keepers, cgroup; counted, signalled, ended
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib-object.h>
#include <sys/types.h>

#include "paddock-boundary.h"
#include "paddock-cgroup.h"
#include "paddock-executor.h"
#include "paddock-sandbox-pidns.h"
#include "paddock-session-commands.h"
#include "paddock-session-record.h"
#include "paddock-session-restore.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_SESSION_PROCESS (paddock_session_process_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionProcess, paddock_session_process, PADDOCK, SESSION_PROCESS, GObject)

PaddockSessionProcess *paddock_session_process_new                (PaddockSessionCommands *commands);

/* Where its processes run, from start() or an adoption (taken). */
void                   paddock_session_process_set_executor       (PaddockSessionProcess  *self,
                                                                   PaddockExecutor        *executor);
PaddockExecutor       *paddock_session_process_get_executor       (PaddockSessionProcess  *self);
/* The agent just started (its cgroup, keeper, pid taken from AGENT):
 * counted from now on. */
void                   paddock_session_process_take_agent         (PaddockSessionProcess  *self,
                                                                   PaddockExecutorAgent   *agent,
                                                                   gboolean                sandboxed);
/* A restored session whose keeper held it: taken over from it through a
 * new executor, counted from now on. NULL (nothing changed but what
 * RESTORE keeps) where the keeper would not hand it over. */
PaddockKeeperClient   *paddock_session_process_adopt              (PaddockSessionProcess  *self,
                                                                   const char             *session_id,
                                                                   PaddockSessionRestore  *restore,
                                                                   gboolean                sandboxed,
                                                                   int                    *pty_master,
                                                                   GError                **error);
/* A restored session not adopted: what is left of it, as RESTORE found. */
void                   paddock_session_process_take_leftovers     (PaddockSessionProcess  *self,
                                                                   PaddockSessionRestore  *restore);
/* Every process an earlier daemon left of it is gone. */
void                   paddock_session_process_forget_leftovers   (PaddockSessionProcess  *self);
/* Whatever of it runs now and is not in PINNED yet goes there. */
void                   paddock_session_process_pin_again          (PaddockSessionProcess  *self,
                                                                   GArray                 *pinned);

pid_t                  paddock_session_process_get_pid            (PaddockSessionProcess  *self);
gboolean               paddock_session_process_is_reaped          (PaddockSessionProcess  *self);
gboolean               paddock_session_process_is_sandboxed       (PaddockSessionProcess  *self);
gboolean               paddock_session_process_has_running_keeper (PaddockSessionProcess  *self);
PaddockCgroup         *paddock_session_process_get_cgroup         (PaddockSessionProcess  *self);
const char            *paddock_session_process_get_cgroup_path    (PaddockSessionProcess  *self);
const char            *paddock_session_process_get_cgroup_reason  (PaddockSessionProcess  *self);
int                    paddock_session_process_get_cgroup_procs_fd (PaddockSessionProcess *self);
gboolean               paddock_session_process_get_resources_requested (PaddockSessionProcess *self);
const char            *paddock_session_process_get_resources_reason (PaddockSessionProcess *self);

GArray                *paddock_session_process_list_pids          (PaddockSessionProcess  *self);
guint                  paddock_session_process_count              (PaddockSessionProcess  *self);
void                   paddock_session_process_signal_all         (PaddockSessionProcess  *self,
                                                                   int                     signum,
                                                                   GArray                 *listed);
/* One round of a stop: TRUE once nothing is left (the cgroup gone with
 * it, "gone" not emitted: the caller is the stop); else, with KILL,
 * what is left SIGKILLed. */
gboolean               paddock_session_process_sweep              (PaddockSessionProcess  *self,
                                                                   gboolean                kill,
                                                                   guint                  *left);
void                   paddock_session_process_release_cgroup     (PaddockSessionProcess  *self);
/* The session is destroyed: its cgroup let go (removed if empty). */
void                   paddock_session_process_end                (PaddockSessionProcess  *self);
/* The daemon goes: waits (a second at most) for the cgroup to empty. */
void                   paddock_session_process_wait_cgroup_gone   (PaddockSessionProcess  *self);
/* From the record of it that is on disk on: its keeper holds it when the
 * daemon goes (a sandbox's only with SANDBOX_TOO). */
gboolean               paddock_session_process_keeps_end          (PaddockSessionProcess  *self);
void                   paddock_session_process_release_end        (PaddockSessionProcess  *self);
void                   paddock_session_process_hold               (PaddockSessionProcess  *self,
                                                                   gboolean                sandbox_too);
/* Into INPUT: what a look at the boundary needs of its processes. */
void                   paddock_session_process_fill_boundary_input (PaddockSessionProcess     *self,
                                                                    const PaddockSessionConfig *config,
                                                                    PaddockBoundaryInput      *input);
/* Into RECORD: what a later daemon finds its processes by. */
void                   paddock_session_process_fill_record        (PaddockSessionProcess  *self,
                                                                   PaddockSessionRecord   *record);
/* Let go for a later daemon (its keeper holds it) or with the session:
 * no count, no executor. */
void                   paddock_session_process_close              (PaddockSessionProcess  *self);

G_END_DECLS
