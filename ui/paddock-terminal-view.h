/* paddock-terminal-view.h — a session's live terminal, attached over D-Bus
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gtk/gtk.h>
#include <vte/vte.h>

#include "paddock-session-item.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_TERMINAL_VIEW (paddock_terminal_view_get_type ())

G_DECLARE_FINAL_TYPE (PaddockTerminalView, paddock_terminal_view, PADDOCK, TERMINAL_VIEW, GtkWidget)

PaddockSessionItem *paddock_terminal_view_get_item     (PaddockTerminalView *self);
void                paddock_terminal_view_set_item     (PaddockTerminalView *self,
                                                        PaddockSessionItem  *item);
VteTerminal        *paddock_terminal_view_get_terminal (PaddockTerminalView *self);
gboolean            paddock_terminal_view_is_attached  (PaddockTerminalView *self);
gboolean            paddock_terminal_view_is_replaying (PaddockTerminalView *self);

G_END_DECLS
