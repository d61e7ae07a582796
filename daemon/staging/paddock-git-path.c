/* paddock-git-path.c — workspace paths as the review's in-memory git index holds them
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Pure (no I/O): the review's encoding of a path for libgit2 and back, in
 * a file of its own so that it is unit-tested and fuzzed alone
 * (tests/fuzz/fuzz-git-path.c).
 */

#include "config.h"

#include "paddock-git-path.h"

/* libgit2 refuses some names in an index or tree (".git", "..", NTFS
 * aliases such as "GIT~1"), but a workspace may hold any of them: prefix
 * every component with '_' so each is valid, and strip it on the way out. */
char *
paddock_git_path_encode (const char *rel)
{
  GString *s = g_string_new ("_");

  for (const char *p = rel; *p != '\0'; p++)
    {
      g_string_append_c (s, *p);
      if (*p == '/')
        g_string_append_c (s, '_');
    }
  return g_string_free (s, FALSE);
}

char *
paddock_git_path_decode (const char *encoded)
{
  GString *s = g_string_new (NULL);
  gboolean at_start = TRUE;

  for (const char *p = encoded; *p != '\0'; p++)
    {
      if (at_start)
        {
          at_start = FALSE;
          continue;  /* the '_' */
        }
      g_string_append_c (s, *p);
      if (*p == '/')
        at_start = TRUE;
    }
  return g_string_free (s, FALSE);
}
