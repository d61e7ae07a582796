/* paddock-session-describe.h — a session as the manager lists it (ListSessions, SessionsChanged)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

#include "paddock-ipc-generated.h"
#include "paddock-session-config.h"

G_BEGIN_DECLS

/* An a{sv} (floating) of session ID's published properties (SESSION's) and what it was
 * created with (CONFIG); CGROUP_PATH its cgroup (NULL: none) and
 * CGROUP_REASON why it has none (or NULL). */
GVariant *paddock_session_describe (PaddockIpcSession1         *session,
                                    const char                 *id,
                                    const char                 *object_path,
                                    const PaddockSessionConfig *config,
                                    const char                 *cgroup_path,
                                    const char                 *cgroup_reason);

G_END_DECLS
