/* fuzz-spare-options.c — the options message of a sandbox made ahead
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Feeds paddock_spare_options_parse() (daemon/sandbox/
 * paddock-spare-options-parse.c) any bytes as the sealed memfd's contents,
 * and checks what it accepts: argv[0], then arguments that lie inside the
 * input, each NUL-terminated there, in order and back to back, covering it
 * exactly; then NULL.
 */

#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "paddock-spare-options-parse.h"

int LLVMFuzzerTestOneInput (const uint8_t *data,
                            size_t         size);

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  /* A copy of exactly SIZE bytes: a read past it is the sanitizer's. */
  char *block = g_malloc (size > 0 ? size : 1);
  GPtrArray *args = NULL;
  const char *what = NULL;
  gsize at = 0;

  if (size > 0)
    memcpy (block, data, size);
  if (!paddock_spare_options_parse (block, size, &args, &what))
    {
      if (what == NULL || args != NULL)
        abort ();
      g_free (block);
      return 0;
    }
  if (what != NULL || args->len < 3 || strcmp (g_ptr_array_index (args, 0), "paddock-sandbox") != 0 ||
      g_ptr_array_index (args, args->len - 1) != NULL)
    abort ();
  for (guint i = 1; i + 1 < args->len; i++)
    {
      const char *arg = g_ptr_array_index (args, i);

      if (arg != block + at || at >= size)
        abort ();
      at += strnlen (arg, size - at) + 1;
      if (at > size || block[at - 1] != '\0')
        abort ();
    }
  if (at != size)
    abort ();
  g_ptr_array_unref (args);
  g_free (block);
  return 0;
}
