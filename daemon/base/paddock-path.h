/* paddock-path.h — whether one absolute path is a folder's, by whole names
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Plain libc: the sandbox helper, the daemon and its tests share it.
 */

#pragma once

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether PATH is DIR or below it, comparing whole names ("/tmp/ab" is
 * not within "/tmp/a"); everything is within "/". Both absolute, without
 * "." or ".." names or a trailing '/' (other than "/" itself). */
bool paddock_path_is_within (const char *path,
                             const char *dir);

#ifdef __cplusplus
}
#endif
