/* paddock-git-path.h — workspace paths as the review's in-memory git index holds them
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

char *paddock_git_path_encode (const char *rel);
char *paddock_git_path_decode (const char *encoded);

G_END_DECLS
