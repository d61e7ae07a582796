/* paddock-agent-session.h — a session that runs in an agent preset's environment
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include "paddock-session-config.h"

G_BEGIN_DECLS

/* The PATH a safe session gets when nothing names another
 * (paddock-session-impl.c's build_sandbox_environment()). */
#define PADDOCK_AGENT_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

gboolean paddock_agent_session_configure             (PaddockSessionConfig *config,
                                                      const char           *agent,
                                                      const char           *state_dir,
                                                      gboolean              net_given,
                                                      GError              **error);
void     paddock_agent_session_add_sandbox_arguments (const PaddockSessionConfig *config,
                                                      GPtrArray                  *argv);

G_END_DECLS
