/* paddock-session-network.h — what the daemon asks of every session's network at once
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The per-session calls are private to the session (paddock-session-impl-private.h).
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

void paddock_session_network_stop_all_proxies (void);

G_END_DECLS
