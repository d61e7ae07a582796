/* net-test-util.h — what the network unit tests share
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

guint net_test_count_fds (void);

G_END_DECLS
