/* paddock-spare-options-parse.c — a spare's session options, read from their bytes
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The pure half of paddock-spare-options.c: the bytes of the sealed memfd
 * a sandbox made ahead gets (docs/sandbox-protocol.md, "A sandbox made
 * ahead") into the helper's argv. No fds, no system calls: unit-tested in
 * tests/sandbox/test-spare-options.c and fuzzed by
 * tests/fuzz/fuzz-spare-options.c.
 */

#include "config.h"

#include "paddock-spare-options-parse.h"

#include <string.h>

/* BLOCK's LEN bytes are the session's options, each NUL-terminated: at
 * least one byte, at most PADDOCK_SPARE_OPTIONS_MAX_BYTES, ending with a
 * NUL, and at most PADDOCK_SPARE_OPTIONS_MAX_ARGS arguments. *OUT_ARGS
 * gets "paddock-sandbox" (argv[0]), then each option, then NULL, pointing
 * into BLOCK (which must outlive them; it is not copied). FALSE, with
 * *OUT_WHAT saying why (static text) and *OUT_ARGS untouched, if they are
 * not that. */
gboolean
paddock_spare_options_parse (const char   *block,
                             gsize         len,
                             GPtrArray   **out_args,
                             const char  **out_what)
{
  g_autoptr(GPtrArray) args = NULL;

  if (len == 0 || len > PADDOCK_SPARE_OPTIONS_MAX_BYTES)
    {
      *out_what = "the session's options are not a sealed memfd of at most 16 MiB";
      return FALSE;
    }
  if (block[len - 1] != '\0')
    {
      *out_what = "the session's options do not end with a NUL, or are too many";
      return FALSE;
    }
  args = g_ptr_array_new ();
  g_ptr_array_add (args, (char *) "paddock-sandbox");
  /* The last byte is a NUL: every strnlen() below stops inside BLOCK. */
  for (gsize at = 0; at < len; at += strnlen (block + at, len - at) + 1)
    {
      if (args->len > PADDOCK_SPARE_OPTIONS_MAX_ARGS)
        {
          *out_what = "the session's options do not end with a NUL, or are too many";
          return FALSE;
        }
      g_ptr_array_add (args, (char *) (block + at));
    }
  g_ptr_array_add (args, NULL);
  *out_args = g_steal_pointer (&args);
  *out_what = NULL;
  return TRUE;
}
