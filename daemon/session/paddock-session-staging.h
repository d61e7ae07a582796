/* paddock-session-staging.h — org.paddock.Session1's review, apply, drop and checkpoints
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-ipc-generated.h"
#include "paddock-session-gate.h"
#include "paddock-stage.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_SESSION_STAGING (paddock_session_staging_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionStaging, paddock_session_staging, PADDOCK, SESSION_STAGING, GObject)

/* @stage NULL: the session stages nothing (the host profile). */
PaddockSessionStaging *paddock_session_staging_new                      (const char            *session_id,
                                                                         PaddockStage          *stage,
                                                                         PaddockSessionGate    *gate);
void                   paddock_session_staging_refresh_last_recovery    (PaddockSessionStaging *self);


void paddock_session_staging_attach (PaddockSessionStaging *self,
                                    PaddockIpcSession1 *skeleton);

/* Every session's Apply calls in flight (main thread only): a daemon being
 * replaced answers them before it hands its sessions over (paddock-daemon.c),
 * refuses new ones meanwhile, and cancels those that take too long. */
guint                  paddock_session_staging_applies_in_flight  (void);
void                   paddock_session_staging_refuse_applies     (void);
void                   paddock_session_staging_cancel_applies     (void);

G_END_DECLS
