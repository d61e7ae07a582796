/* paddock-repo-metadata.h — which review rows are repository metadata, not file changes
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

const char *paddock_repo_metadata_name_reason (const char *path);
void        paddock_repo_metadata_classify    (GPtrArray  *changes,
                                               int         workspace_fd,
                                               int         stage_fd);

G_END_DECLS
