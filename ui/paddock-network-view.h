/* paddock-network-view.h — a session's proxy records, live, and its allowlist
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <adwaita.h>

#include "paddock-session-item.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_NETWORK_VIEW (paddock_network_view_get_type ())

G_DECLARE_FINAL_TYPE (PaddockNetworkView, paddock_network_view, PADDOCK, NETWORK_VIEW, GtkWidget)

GtkWidget          *paddock_network_view_new            (void);
PaddockSessionItem *paddock_network_view_get_item       (PaddockNetworkView *self);
void                paddock_network_view_set_item       (PaddockNetworkView *self,
                                                         PaddockSessionItem *item);
void                paddock_network_view_add_records    (PaddockNetworkView *self,
                                                         GVariant           *records);
GListModel         *paddock_network_view_get_shown      (PaddockNetworkView *self);
GListModel         *paddock_network_view_get_records    (PaddockNetworkView *self);
void                paddock_network_view_set_domains    (PaddockNetworkView *self,
                                                         const char * const *domains);
const char * const *paddock_network_view_get_domains    (PaddockNetworkView *self);
const char         *paddock_network_view_get_page       (PaddockNetworkView *self);

gboolean            paddock_network_view_is_loaded     (PaddockNetworkView *self);

G_END_DECLS
