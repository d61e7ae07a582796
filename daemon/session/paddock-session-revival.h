/* paddock-session-revival.h — a restored session: adopted from its keeper, or what an earlier daemon left of it ended
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-command-runner.h"
#include "paddock-ipc-generated.h"
#include "paddock-session-config.h"
#include "paddock-session-network.h"
#include "paddock-session-process.h"
#include "paddock-session-record.h"
#include "paddock-session-restore.h"
#include "paddock-session-staging.h"
#include "paddock-stage.h"
#include "paddock-terminal.h"

G_BEGIN_DECLS

/* A session made from an earlier daemon's record: given the session's
 * parts, it takes the session over from its keeper, or owns what is left
 * running of it (its PaddockSessionLeftovers) until that is gone (the
 * session keeps it only so long).
 * Signals: "changed" (guint running: how many of the leftovers still
 * run, the record naming those pinned since to be saved again), "ended"
 * (const char *final_state, GPtrArray *waiters (PaddockStopWaiter,
 * borrowed: their invocations may be stolen): the leftovers are all gone,
 * the session goes to FINAL_STATE, and the Stop and Destroy calls that
 * waited for that are the session's to begin; it may drop the revival). */
#define PADDOCK_TYPE_SESSION_REVIVAL (paddock_session_revival_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionRevival, paddock_session_revival, PADDOCK, SESSION_REVIVAL, GObject)

/* CONFIG is the session's, borrowed (an adoption sets its net_rules);
 * the parts are kept; STAGE may be NULL (STAGING then has none). */
PaddockSessionRevival *paddock_session_revival_new            (const char             *session_id,
                                                               PaddockSessionConfig   *config,
                                                               PaddockSessionProcess  *process,
                                                               PaddockTerminal        *terminal,
                                                               PaddockSessionNetwork  *network,
                                                               PaddockCommandRunner   *runner,
                                                               PaddockStage           *stage,
                                                               PaddockSessionStaging  *staging);
/* The session SESSION is what RESTORE, read from RECORD, says: TRUE if it
 * was adopted (the session then connects to its executor), FALSE if what
 * is left of it, if anything, is to be ended. *STATE (interned) and
 * *EXIT_STATUS are what it is listed with now. Called once; after it,
 * the revival is needed only while it has leftovers. */
gboolean               paddock_session_revival_restore        (PaddockSessionRevival      *self,
                                                               PaddockIpcSession1         *session,
                                                               PaddockSessionRestore      *restore,
                                                               const PaddockSessionRecord *record,
                                                               const char                **state,
                                                               int                        *exit_status);
gboolean               paddock_session_revival_has_leftovers  (PaddockSessionRevival  *self);
/* While the leftovers run, the earlier daemon's record is the session's
 * (TRUE: written to RECORD_PATH); FALSE: the session writes its own. */
gboolean               paddock_session_revival_save           (PaddockSessionRevival  *self,
                                                               const char             *record_path);
void                   paddock_session_revival_end_leftovers  (PaddockSessionRevival  *self,
                                                               gint64                  kill_at);
/* TRUE when the leftovers run: INVOCATION (a Stop or a Destroy) waits
 * for them, or is answered Busy (refuse). FALSE: not answered. */
gboolean               paddock_session_revival_wait           (PaddockSessionRevival  *self,
                                                               GDBusMethodInvocation  *invocation,
                                                               guint                   grace_seconds,
                                                               gboolean                destroy);
gboolean               paddock_session_revival_refuse         (PaddockSessionRevival  *self,
                                                               GDBusMethodInvocation  *invocation);
void                   paddock_session_revival_kill_now       (PaddockSessionRevival  *self);

G_END_DECLS
