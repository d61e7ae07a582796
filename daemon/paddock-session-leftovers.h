/* paddock-session-leftovers.h — what a dead daemon left running of a session: pinned, named in its record, ended
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <sys/types.h>

#include "paddock-cgroup.h"

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

/* The leftovers of one restored session, ended on the main loop. Owns
 * what is pinned, the session's cgroup, the earlier daemon's record (kept
 * as it is but for the processes pinned since), the state the session
 * goes to once they are gone, and the Stop/Destroy calls that wait for
 * that. Signals: "pin-again" (GArray *pinned: the session pins into it
 * whatever of it runs now and is not pinned yet), "changed" (guint
 * running: how many processes still run; 0: all gone, the waiting calls
 * are to be taken and the leftovers may be dropped). */
#define PADDOCK_TYPE_SESSION_LEFTOVERS (paddock_session_leftovers_get_type ())
G_DECLARE_FINAL_TYPE (PaddockSessionLeftovers, paddock_session_leftovers, PADDOCK, SESSION_LEFTOVERS, GObject)

PaddockSessionLeftovers *paddock_session_leftovers_new             (const char              *session_id,
                                                                    GArray                  *pinned,
                                                                    PaddockCgroup           *cgroup,
                                                                    const char              *final_state,
                                                                    JsonNode                *record);
guint                    paddock_session_leftovers_get_running     (PaddockSessionLeftovers *self);
const char              *paddock_session_leftovers_get_final_state (PaddockSessionLeftovers *self);
void                     paddock_session_leftovers_save            (PaddockSessionLeftovers *self,
                                                                    const char              *record_path);
void                     paddock_session_leftovers_begin           (PaddockSessionLeftovers *self,
                                                                    gint64                   kill_at);
void                     paddock_session_leftovers_wait            (PaddockSessionLeftovers *self,
                                                                    GDBusMethodInvocation   *invocation,
                                                                    guint                    grace_seconds,
                                                                    gboolean                 destroy);
GPtrArray               *paddock_session_leftovers_take_waiters    (PaddockSessionLeftovers *self);
void                     paddock_session_leftovers_kill_now        (PaddockSessionLeftovers *self);

G_END_DECLS
