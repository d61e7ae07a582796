/* paddock-session-stop.h — a session's Stop and Destroy: the calls waiting, the grace, the SIGKILL sweeps
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-ipc-generated.h"

G_BEGIN_DECLS

/* The longest grace a Stop may ask for. */
#define PADDOCK_SESSION_STOP_GRACE_MAX_SECONDS 300

/* A Stop or Destroy call waiting for the session's processes to go. It
 * owns the reference to its invocation the handler kept: one freed still
 * unanswered is answered with an error. */
typedef struct
{
  GDBusMethodInvocation *invocation;
  gboolean               destroy;
  gint64                 requested;   /* monotonic: when the call came */
} PaddockStopWaiter;

PaddockStopWaiter *paddock_stop_waiter_new  (GDBusMethodInvocation *invocation,
                                             gboolean               destroy,
                                             gint64                 requested);
void               paddock_stop_waiter_free (PaddockStopWaiter     *waiter);

#define PADDOCK_TYPE_SESSION_STOP (paddock_session_stop_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionStop, paddock_session_stop, PADDOCK, SESSION_STOP, GObject)

PaddockSessionStop *paddock_session_stop_new           (void);
/* FALSE, INVOCATION answered: a Stop may not ask for GRACE_SECONDS. */
gboolean            paddock_session_stop_check_grace   (guint                  grace_seconds,
                                                        GDBusMethodInvocation *invocation);
gboolean            paddock_session_stop_add           (PaddockSessionStop    *self,
                                                        GDBusMethodInvocation *invocation,
                                                        guint                  grace_seconds,
                                                        gboolean               destroy,
                                                        gint64                 requested);
void                paddock_session_stop_wake_on       (PaddockSessionStop    *self,
                                                        int                    fd);
void                paddock_session_stop_run           (PaddockSessionStop    *self);
GPtrArray          *paddock_session_stop_take_waiters  (PaddockSessionStop    *self);
void                paddock_session_stop_answer        (PaddockSessionStop    *self,
                                                        PaddockIpcSession1    *session,
                                                        GPtrArray             *waiters,
                                                        const char            *state,
                                                        guint                  survivors);
gboolean            paddock_session_stop_complete      (PaddockSessionStop    *self,
                                                        PaddockIpcSession1    *session,
                                                        const char            *state,
                                                        guint                  survivors);
GPtrArray          *paddock_session_stop_take_destroy_waiters (PaddockSessionStop *self);
void                paddock_session_stop_close         (PaddockSessionStop    *self);

G_END_DECLS
