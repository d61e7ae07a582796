/* fuzz-git-path.c — the review's path encoding for libgit2
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Feeds paddock_git_path_encode() and paddock_git_path_decode()
 * (daemon/staging/paddock-git-path.c) any bytes up to the first NUL, as a
 * path an agent can name in its stage, and checks that the encoding
 * round-trips, that every encoded component starts with '_' (so none is
 * a name libgit2 refuses), and that decoding any input never grows it.
 */

#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "paddock-git-path.h"

int LLVMFuzzerTestOneInput (const uint8_t *data,
                            size_t         size);

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  char *path = g_strndup ((const char *) data, size);
  char *encoded = paddock_git_path_encode (path);
  char *decoded = paddock_git_path_decode (encoded);
  char *raw = paddock_git_path_decode (path);

  if (strcmp (decoded, path) != 0)
    abort ();
  if (encoded[0] != '_')
    abort ();
  for (const char *slash = strchr (encoded, '/'); slash != NULL; slash = strchr (slash + 1, '/'))
    if (slash[1] != '_')
      abort ();
  if (strlen (raw) > strlen (path))
    abort ();
  g_free (raw);
  g_free (decoded);
  g_free (encoded);
  g_free (path);
  return 0;
}
