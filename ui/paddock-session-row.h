/* paddock-session-row.h — a session in the sidebar: name, agent, state
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gtk/gtk.h>

#include "paddock-session-item.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_SESSION_ROW (paddock_session_row_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionRow, paddock_session_row, PADDOCK, SESSION_ROW, GtkWidget)

PaddockSessionItem *paddock_session_row_get_item (PaddockSessionRow  *self);
void                paddock_session_row_set_item (PaddockSessionRow  *self,
                                                  PaddockSessionItem *item);

G_END_DECLS
