/* paddock-exit-status.h — the agent's exit status where none was seen, named once
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* org.paddock.Session1.ExitStatus (and ListSessions' "exit-status") besides
 * a status 0…255: read by the daemon, paddockctl and the app alike.
 * RUNNING: the agent runs, or has not started yet. UNKNOWN: the agent ended
 * while no daemon watched it (its supervisor died with or after the
 * daemon), so nobody saw how; a status that must not read as "still
 * running". */
#define PADDOCK_EXIT_STATUS_RUNNING (-1)
#define PADDOCK_EXIT_STATUS_UNKNOWN (-2)

G_END_DECLS
