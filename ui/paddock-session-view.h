/* paddock-session-view.h — one session: terminal, changes and info views
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <adwaita.h>

#include "paddock-session-item.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_SESSION_VIEW (paddock_session_view_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionView, paddock_session_view, PADDOCK, SESSION_VIEW, GtkWidget)

GtkWidget          *paddock_session_view_new            (PaddockSessionItem *item);
PaddockSessionItem *paddock_session_view_get_item       (PaddockSessionView *self);
AdwViewStack       *paddock_session_view_get_view_stack (PaddockSessionView *self);

void                paddock_session_view_set_leases     (PaddockSessionView *self,
                                                         GListModel         *leases);

G_END_DECLS
