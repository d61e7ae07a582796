/* paddock-visible-char.h — the characters a reader must see as escapes
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

gboolean paddock_unichar_needs_escape (gunichar c);

G_END_DECLS
