/* paddock-process-tree.c — a host session's processes, from one walk of /proc
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

GArray *paddock_process_tree_list (GHashTable   *sids,
                                   const pid_t  *roots,
                                   guint         n_roots,
                                   pid_t         watched_sid,
                                   gboolean     *out_watched_seen);

G_END_DECLS
