/* paddock-changes-view.h — a session's staged changes, their diffs, apply/drop
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gtk/gtk.h>

#include "paddock-session-item.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_CHANGES_VIEW (paddock_changes_view_get_type ())

G_DECLARE_FINAL_TYPE (PaddockChangesView, paddock_changes_view, PADDOCK, CHANGES_VIEW, GtkWidget)

PaddockSessionItem *paddock_changes_view_get_item  (PaddockChangesView *self);
void                paddock_changes_view_set_item  (PaddockChangesView *self,
                                                    PaddockSessionItem *item);
GListModel         *paddock_changes_view_get_model (PaddockChangesView *self);
void                paddock_changes_view_refresh   (PaddockChangesView *self);

G_END_DECLS
