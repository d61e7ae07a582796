/* paddock-agent-discovery.h — where a preset's program is installed, and what its install needs
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include "paddock-agent-preset.h"

G_BEGIN_DECLS

typedef struct
{
  char  *program;    /* the entry found, e.g. ~/.npm-global/bin/claude (NULL: none) */
  char  *resolved;   /* what it resolves to, the file a session runs */
  GStrv  view;       /* host paths shown read-only at the same path: its package tree, its runtime */
  GStrv  path_dirs;  /* folders put first on the session's PATH (the runtime's bin) */
  GStrv  looked;     /* the folders looked in, in order */
} PaddockAgentFound;

void               paddock_agent_found_free (PaddockAgentFound        *found);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PaddockAgentFound, paddock_agent_found_free)

PaddockAgentFound *paddock_agent_discover   (const PaddockAgentPreset *preset,
                                             const char               *home,
                                             GError                  **error);
GStrv              paddock_agent_search_dirs (const PaddockAgentPreset *preset,
                                              const char               *home);

G_END_DECLS
