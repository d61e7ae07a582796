/* paddock-change-item.h — one staged change in a session's review list
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define PADDOCK_TYPE_CHANGE_ITEM (paddock_change_item_get_type ())

G_DECLARE_FINAL_TYPE (PaddockChangeItem, paddock_change_item, PADDOCK, CHANGE_ITEM, GObject)

PaddockChangeItem *paddock_change_item_new_from_variant (GVariant          *change);
const char        *paddock_change_item_get_path         (PaddockChangeItem *self);
const char        *paddock_change_item_get_old_path     (PaddockChangeItem *self);
const char        *paddock_change_item_get_kind         (PaddockChangeItem *self);
const char        *paddock_change_item_get_entry_type   (PaddockChangeItem *self);
gboolean           paddock_change_item_get_binary       (PaddockChangeItem *self);
guint              paddock_change_item_get_added        (PaddockChangeItem *self);
guint              paddock_change_item_get_removed      (PaddockChangeItem *self);
gboolean           paddock_change_item_get_conflict     (PaddockChangeItem *self);
char              *paddock_change_item_dup_display_path (PaddockChangeItem *self);
const char        *paddock_change_item_get_metadata_reason (PaddockChangeItem *self);

G_END_DECLS
