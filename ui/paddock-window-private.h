/* paddock-window-private.h — what the UI tests reach inside the window
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include "paddock-window.h"

G_BEGIN_DECLS

const char *_paddock_window_get_last_toast (PaddockWindow *self);

G_END_DECLS
