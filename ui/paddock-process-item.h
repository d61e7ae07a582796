/* paddock-process-item.h — one process of a session, a node of the process tree
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define PADDOCK_TYPE_PROCESS_ITEM (paddock_process_item_get_type ())

G_DECLARE_FINAL_TYPE (PaddockProcessItem, paddock_process_item, PADDOCK, PROCESS_ITEM, GObject)

PaddockProcessItem *paddock_process_item_new              (guint               pid,
                                                           guint               ppid);
gboolean            paddock_process_item_update           (PaddockProcessItem *self,
                                                           const char         *state,
                                                           const char         *name,
                                                           const char         *command_line);
guint               paddock_process_item_get_pid          (PaddockProcessItem *self);
guint               paddock_process_item_get_ppid         (PaddockProcessItem *self);
const char         *paddock_process_item_get_state        (PaddockProcessItem *self);
const char         *paddock_process_item_get_state_label  (PaddockProcessItem *self);
const char         *paddock_process_item_get_name         (PaddockProcessItem *self);
const char         *paddock_process_item_get_command_line (PaddockProcessItem *self);
GListStore         *paddock_process_item_get_children     (PaddockProcessItem *self);

G_END_DECLS
