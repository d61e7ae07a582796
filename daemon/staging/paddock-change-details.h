/* paddock-change-details.h — what apply will take for each review row: sizes, hard links, unappliable paths
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

gboolean paddock_change_details_fill (int            stage_fd,
                                      GPtrArray     *changes,
                                      GCancellable  *cancellable,
                                      GError       **error);

G_END_DECLS
