/* paddock-path.c — whether one absolute path is a folder's, by whole names
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "paddock-path.h"

#include <string.h>

bool
paddock_path_is_within (const char *path,
                        const char *dir)
{
  size_t n = strlen (dir);

  if (strcmp (dir, "/") == 0)
    return path[0] == '/';
  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}
