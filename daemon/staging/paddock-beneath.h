/* paddock-beneath.h — opening a path beneath a folder without following any symlink
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

int paddock_open_beneath        (int          root_fd,
                                 const char  *rel,
                                 int          flags);
int paddock_open_parent_beneath (int          root_fd,
                                 const char  *rel,
                                 const char **out_base);

G_END_DECLS
