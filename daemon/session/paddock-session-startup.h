/* paddock-session-startup.h — a sandboxed session's start: its boundary looked at in a thread, an end that comes meanwhile held back
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib-object.h>

#include "paddock-session-boundary.h"

G_BEGIN_DECLS

/* Signals: "looked" (PaddockBoundaryLook *look, borrowed: what was seen,
 * back on the main thread), then "ended" (int wait_status: the agent's
 * end that came while it looked, now that the start is over). */
#define PADDOCK_TYPE_SESSION_STARTUP (paddock_session_startup_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionStartup, paddock_session_startup, PADDOCK, SESSION_STARTUP, GObject)

PaddockSessionStartup *paddock_session_startup_new        (void);
/* Takes LOOK; OWNER (the session) is kept alive until "looked" and
 * "ended" were emitted, and let go of on the main thread. */
void                   paddock_session_startup_look       (PaddockSessionStartup *self,
                                                           PaddockBoundaryLook   *look,
                                                           gpointer               owner);
gboolean               paddock_session_startup_is_looking (PaddockSessionStartup *self);
/* TRUE while it looks: WAIT_STATUS comes back as "ended" once it is done. */
gboolean               paddock_session_startup_defer_end  (PaddockSessionStartup *self,
                                                           int                    wait_status);

G_END_DECLS
