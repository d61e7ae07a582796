/* paddock-session-item.h — one agent session as the app shows it
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-ipc-generated.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_SESSION_ITEM (paddock_session_item_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionItem, paddock_session_item, PADDOCK, SESSION_ITEM, GObject)

PaddockSessionItem *paddock_session_item_new               (GDBusConnection    *connection,
                                                            GVariant           *dict);
void                paddock_session_item_update            (PaddockSessionItem *self,
                                                            GVariant           *dict);
const char         *paddock_session_item_get_id            (PaddockSessionItem *self);
const char         *paddock_session_item_get_object_path   (PaddockSessionItem *self);
const char         *paddock_session_item_get_name          (PaddockSessionItem *self);
const char         *paddock_session_item_get_agent         (PaddockSessionItem *self);
const char         *paddock_session_item_get_state         (PaddockSessionItem *self);
const char         *paddock_session_item_get_state_label   (PaddockSessionItem *self);
const char         *paddock_session_item_get_profile       (PaddockSessionItem *self);
const char         *paddock_session_item_get_staging       (PaddockSessionItem *self);
const char         *paddock_session_item_get_workspace     (PaddockSessionItem *self);
const char         *paddock_session_item_get_command_line  (PaddockSessionItem *self);
guint               paddock_session_item_get_pid           (PaddockSessionItem *self);
guint               paddock_session_item_get_process_count (PaddockSessionItem *self);
gint                paddock_session_item_get_exit_status   (PaddockSessionItem *self);
gboolean            paddock_session_item_is_running        (PaddockSessionItem *self);
gboolean            paddock_session_item_is_staged         (PaddockSessionItem *self);
guint               paddock_session_item_get_n_changes     (PaddockSessionItem *self);
void                paddock_session_item_set_n_changes     (PaddockSessionItem *self,
                                                            guint               n_changes);
const char         *paddock_session_item_get_network_mode  (PaddockSessionItem *self);
const char         *paddock_session_item_describe_network_mode (const char *mode);
GListModel         *paddock_session_item_get_boundary      (PaddockSessionItem *self);
const char         *paddock_session_item_get_boundary_status (PaddockSessionItem *self);
guint               paddock_session_item_get_n_unenforced  (PaddockSessionItem *self);
PaddockIpcSession1 *paddock_session_item_get_proxy         (PaddockSessionItem *self);

G_END_DECLS
