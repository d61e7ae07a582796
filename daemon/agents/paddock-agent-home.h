/* paddock-agent-home.h — an agent's own HOME that persists between its sessions
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include "paddock-agent-preset.h"

G_BEGIN_DECLS

/* A credential file import-login copies is small (tokens, a JSON file). */
#define PADDOCK_AGENT_CREDENTIAL_MAX_BYTES (1024 * 1024)

char     *paddock_agent_home_path   (const char               *state_dir,
                                     const char               *name);
char     *paddock_agent_home_ensure (const char               *state_dir,
                                     const char               *name,
                                     GError                  **error);
gboolean  paddock_agent_home_reset  (const char               *state_dir,
                                     const char               *name,
                                     GError                  **error);
GStrv     paddock_agent_home_import (const char               *state_dir,
                                     const PaddockAgentPreset *preset,
                                     const char               *real_home,
                                     GError                  **error);

G_END_DECLS
