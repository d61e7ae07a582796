/* paddock-session-staging.h — org.paddock.Session1's review, apply, drop and checkpoints
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-ipc-generated.h"
#include "paddock-stage.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_SESSION_STAGING (paddock_session_staging_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionStaging, paddock_session_staging, PADDOCK, SESSION_STAGING, GObject)

/* @stage NULL: the session stages nothing (the host profile). */
PaddockSessionStaging *paddock_session_staging_new                      (const char            *session_id,
                                                                         PaddockStage          *stage);
void                   paddock_session_staging_refresh_last_recovery    (PaddockSessionStaging *self);


void paddock_session_staging_attach (PaddockSessionStaging *self,
                                    PaddockIpcSession1 *skeleton);

G_END_DECLS
