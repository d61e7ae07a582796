/* paddock-layer-item.h — one layer of a session's safety boundary
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define PADDOCK_TYPE_LAYER_ITEM (paddock_layer_item_get_type ())

G_DECLARE_FINAL_TYPE (PaddockLayerItem, paddock_layer_item, PADDOCK, LAYER_ITEM, GObject)

PaddockLayerItem *paddock_layer_item_new              (GVariant         *dict);
const char       *paddock_layer_item_get_layer        (PaddockLayerItem *self);
const char       *paddock_layer_item_get_title        (PaddockLayerItem *self);
gboolean          paddock_layer_item_get_requested    (PaddockLayerItem *self);
const char       *paddock_layer_item_get_status       (PaddockLayerItem *self);
const char       *paddock_layer_item_get_status_label (PaddockLayerItem *self);
const char       *paddock_layer_item_get_evidence     (PaddockLayerItem *self);
gboolean          paddock_layer_item_is_probe         (PaddockLayerItem *self);

const char       *paddock_boundary_status_label       (const char       *status);

G_END_DECLS
