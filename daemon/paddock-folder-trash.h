/* paddock-folder-trash.h — a destroyed session's folder, moved aside at once and removed by a worker
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

char     *paddock_folder_trash_dir             (const char  *state_dir);
char     *paddock_folder_trash_dir_for_session (const char  *session_dir);
gboolean  paddock_folder_trash_discard         (const char  *trash_dir,
                                                const char  *folder,
                                                GError     **error);
void      paddock_folder_trash_empty           (const char  *trash_dir);
gboolean  paddock_folder_trash_drain           (gint64       timeout_us);

G_END_DECLS
