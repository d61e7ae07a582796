/* paddock-processes-view.h — a session's process tree, refreshed while shown, with kill
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <adwaita.h>

#include "paddock-session-item.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_PROCESSES_VIEW (paddock_processes_view_get_type ())

G_DECLARE_FINAL_TYPE (PaddockProcessesView, paddock_processes_view, PADDOCK, PROCESSES_VIEW, GtkWidget)

GtkWidget          *paddock_processes_view_new             (void);
PaddockSessionItem *paddock_processes_view_get_item        (PaddockProcessesView *self);
void                paddock_processes_view_set_item        (PaddockProcessesView *self,
                                                            PaddockSessionItem   *item);
void                paddock_processes_view_set_processes   (PaddockProcessesView *self,
                                                            GVariant             *processes);
GListModel         *paddock_processes_view_get_roots       (PaddockProcessesView *self);
GtkSingleSelection *paddock_processes_view_get_selection   (PaddockProcessesView *self);
gboolean            paddock_processes_view_select_pid      (PaddockProcessesView *self,
                                                            guint                 pid);
GtkWidget          *paddock_processes_view_get_kill_dialog (PaddockProcessesView *self);
const char         *paddock_processes_view_get_page        (PaddockProcessesView *self);

G_END_DECLS
