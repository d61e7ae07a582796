/* paddock-durable-file.h — atomic, durable replacement of small state files
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

gboolean paddock_durable_file_replace (const char  *path,
                                       const char  *contents,
                                       gssize       length,
                                       int          mode,
                                       GError     **error);
gboolean paddock_ensure_private_dir   (const char  *path,
                                       GError     **error);
void     paddock_remove_tree          (const char  *path);
void     paddock_remove_tree_at       (int          dir_fd,
                                       const char  *name);

G_END_DECLS
