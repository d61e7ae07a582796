/* paddock-spare-options-parse.h — a spare's session options, read from their bytes
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Bounds pid 1 of a spare holds its session's options to. */
#define PADDOCK_SPARE_OPTIONS_MAX_BYTES (16 * 1024 * 1024)
#define PADDOCK_SPARE_OPTIONS_MAX_ARGS  (64 * 1024)

gboolean paddock_spare_options_parse (const char   *block,
                                      gsize         len,
                                      GPtrArray   **out_args,
                                      const char  **out_what);

G_END_DECLS
