/* paddock-session-launch.h — a session's start: its agent started through its executor, what the executor says routed, the start's outcome reported
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib-object.h>
#include <sys/types.h>

#include "paddock-command-runner.h"
#include "paddock-ipc-generated.h"
#include "paddock-session-boundary.h"
#include "paddock-session-config.h"
#include "paddock-session-network.h"
#include "paddock-session-process.h"
#include "paddock-spare-sandbox.h"
#include "paddock-stage.h"
#include "paddock-terminal.h"

G_BEGIN_DECLS

/* Signals, each emitted with the launch (and the session, for the
 * executor's) kept alive until its handlers return:
 * "started" (PaddockBoundaryLook *look, borrowed): a sandbox said the
 *   agent runs, its boundary was seen, published and passed the strict
 *   check, and the creator still waits: the session runs.
 * "failed" (const GError *error, borrowed): the start failed after
 *   start() returned TRUE (the strict check, a proxy nobody can serve),
 *   the creator still waiting; the sandbox is being killed.
 * "ended" (int exit_status, const GError *start_error, borrowed or
 *   NULL): the agent (host) or the sandbox's helper ended and was reaped,
 *   what of it the other parts had was ended with it; START_ERROR when a
 *   sandbox ended before its agent started, its creator still waiting.
 * "end-kept": a sandbox's keeper keeps the end told before.
 * "command-gone" (int pid): nothing is left of a host command. */
#define PADDOCK_TYPE_SESSION_LAUNCH (paddock_session_launch_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionLaunch, paddock_session_launch, PADDOCK, SESSION_LAUNCH, GObject)

/* CONFIG and SESSION (the session's skeleton: where its commands' objects
 * are published, kept alive while its boundary is looked at) are
 * borrowed: the session owns them, and the launch. */
PaddockSessionLaunch *paddock_session_launch_new               (const char                 *session_id,
                                                                const PaddockSessionConfig *config,
                                                                PaddockSessionProcess      *process,
                                                                PaddockTerminal            *terminal,
                                                                PaddockSessionNetwork      *network,
                                                                PaddockCommandRunner       *runner,
                                                                PaddockStage               *stage,
                                                                PaddockIpcSession1         *session);
/* The next start() may take SPARE's sandbox made ahead (borrowed for it). */
void                  paddock_session_launch_offer_spare       (PaddockSessionLaunch       *self,
                                                                PaddockSpareSandbox        *spare);
void                  paddock_session_launch_refill_spare      (PaddockSessionLaunch       *self,
                                                                PaddockSpareSandbox        *spare,
                                                                const char                 *next_id,
                                                                const char                 *record_path);
/* Starts the agent (RECORD_PATH: the session's record, or NULL); a
 * creator waits from then on until answered(). *OUT_PID: its MainPid. */
gboolean              paddock_session_launch_start             (PaddockSessionLaunch       *self,
                                                                const char                 *record_path,
                                                                pid_t                      *out_pid,
                                                                GError                    **error);
/* A host agent's boundary, looked at now and published. */
void                  paddock_session_launch_look_now          (PaddockSessionLaunch       *self);
/* The creator was answered, or given up on. */
void                  paddock_session_launch_answered          (PaddockSessionLaunch       *self);
/* The agent (host) or the sandbox's helper ended, as its executor saw. */
void                  paddock_session_launch_agent_ended       (PaddockSessionLaunch       *self,
                                                                int                         wait_status);
/* The environment of the session's agent and commands (new). */
GStrv                 paddock_session_launch_build_environment (PaddockSessionLaunch       *self);
/* What the process's executor says, listened to (one started here, one
 * adopted alike), and no more (the session is handed over or goes). */
void                  paddock_session_launch_connect_executor  (PaddockSessionLaunch       *self);
void                  paddock_session_launch_disconnect_executor (PaddockSessionLaunch     *self);
/* The session goes: nothing more is listened to nor reported. */
void                  paddock_session_launch_close             (PaddockSessionLaunch       *self);

G_END_DECLS
