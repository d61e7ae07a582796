/* paddock-mount-changes.h — which mounts changed between two looks at a mount table
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

char *paddock_mount_changes_find_affecting (const char         *before,
                                            const char         *after,
                                            const char * const *paths);
void  paddock_mount_changes_add_paths_in   (GPtrArray          *paths,
                                            const char         *text);

G_END_DECLS
