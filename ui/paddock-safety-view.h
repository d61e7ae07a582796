/* paddock-safety-view.h — a session's safety boundary, layer by layer
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <adwaita.h>

#include "paddock-session-item.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_SAFETY_VIEW (paddock_safety_view_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSafetyView, paddock_safety_view, PADDOCK, SAFETY_VIEW, GtkWidget)

PaddockSessionItem *paddock_safety_view_get_item (PaddockSafetyView *self);
GtkWidget          *paddock_safety_view_find_row (PaddockSafetyView *self,
                                                  const char        *layer);

G_END_DECLS
