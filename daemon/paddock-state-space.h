/* paddock-state-space.h — whether the state dir's filesystem has room to write
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Below this many free bytes on the state dir's filesystem the daemon is
 * read-only: a new session needs its record, folder and stage, a lease its
 * journal line; starting one that cannot be recorded would be worse than
 * refusing it. */
#define PADDOCK_STATE_SPACE_MIN_FREE (1024 * 1024)

void      paddock_state_space_init           (const char  *state_dir);
gboolean  paddock_state_space_check_writable (GError     **error);
char     *paddock_state_space_describe       (void);

G_END_DECLS
