/* paddock-session-record-salvage.h — what a damaged session record still tells
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include "paddock-session-record.h"

G_BEGIN_DECLS

/* Larger records are not read: a record is a few KiB, its "leftovers" at
 * most PADDOCK_SESSION_RECORD_LEFTOVERS_MAX pairs. */
#define PADDOCK_SESSION_RECORD_SALVAGE_MAX_BYTES (4 * 1024 * 1024)

gboolean              paddock_session_record_is_session_id (const char *name);
PaddockSessionRecord *paddock_session_record_salvage (const char  *path,
                                                      const char  *folder_id,
                                                      const char  *load_error,
                                                      char       **out_reason);

G_END_DECLS
