/* paddock-ports-view.h — a table of port leases with copy and open actions
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define PADDOCK_TYPE_PORTS_VIEW (paddock_ports_view_get_type ())

G_DECLARE_FINAL_TYPE (PaddockPortsView, paddock_ports_view, PADDOCK, PORTS_VIEW, GtkWidget)

GtkWidget  *paddock_ports_view_new       (void);
GListModel *paddock_ports_view_get_model (PaddockPortsView *self);
void        paddock_ports_view_set_model (PaddockPortsView *self,
                                          GListModel       *model);

void        paddock_ports_view_set_session (PaddockPortsView *self,
                                            const char       *session_id);

G_END_DECLS
