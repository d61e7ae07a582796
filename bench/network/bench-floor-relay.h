/* bench-floor-relay.h — a minimal one-thread relay, the floor under bench-network's proxy
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

guint16 bench_floor_relay_start (guint16     origin_port,
                                 const char *origin_request);
void    bench_floor_relay_stop  (void);
