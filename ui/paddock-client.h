/* paddock-client.h — the app's live connection to paddockd
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-ipc-generated.h"

G_BEGIN_DECLS

typedef enum
{
  PADDOCK_CLIENT_STATE_CONNECTING,    /* looking for the daemon, or loading its lists */
  PADDOCK_CLIENT_STATE_CONNECTED,     /* lists mirror the daemon and follow its signals */
  PADDOCK_CLIENT_STATE_DISCONNECTED,  /* no daemon (or no session bus) */
} PaddockClientState;

#define PADDOCK_TYPE_CLIENT_STATE (paddock_client_state_get_type ())
#define PADDOCK_TYPE_CLIENT       (paddock_client_get_type ())

GType paddock_client_state_get_type (void) G_GNUC_CONST;

G_DECLARE_FINAL_TYPE (PaddockClient, paddock_client, PADDOCK, CLIENT, GObject)

PaddockClient      *paddock_client_new             (GDBusConnection *connection);
GDBusConnection    *paddock_client_get_connection  (PaddockClient   *self);
PaddockClientState  paddock_client_get_state       (PaddockClient   *self);
const char         *paddock_client_get_error       (PaddockClient   *self);
GListModel         *paddock_client_get_leases      (PaddockClient   *self);
PaddockIpcPorts1   *paddock_client_get_ports       (PaddockClient   *self);
GListModel         *paddock_client_get_sessions    (PaddockClient   *self);
PaddockIpcManager1 *paddock_client_get_manager     (PaddockClient   *self);

G_END_DECLS
