/* paddock-session-ports.h — org.paddock.Session1's leased ports: forwarded into its namespace, or released for its agent to bind
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-ipc-generated.h"
#include "paddock-lease.h"
#include "paddock-registry.h"
#include "paddock-session-config.h"
#include "paddock-session-gate.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_SESSION_PORTS (paddock_session_ports_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionPorts, paddock_session_ports, PADDOCK, SESSION_PORTS, GObject)

/* The daemon's one port registry (the manager's), for every session. */
void                 _paddock_session_ports_set_registry        (PaddockRegistry      *registry);
PaddockSessionPorts *_paddock_session_ports_new                 (const char           *session_id,
                                                                 PaddockSessionGate   *gate,
                                                                 PaddockSessionConfig *config);
void                 _paddock_session_ports_start               (PaddockSessionPorts  *ports,
                                                                 gboolean              forwarding);
gboolean             _paddock_session_ports_add                 (PaddockSessionPorts  *ports,
                                                                 PaddockLease         *lease,
                                                                 GError              **error);
void                 _paddock_session_ports_socket_event        (PaddockSessionPorts  *ports,
                                                                 gint64                id,
                                                                 int                  *fd);
void                 _paddock_session_ports_stop                (PaddockSessionPorts  *ports);
void                 _paddock_session_ports_refuse_all          (PaddockSessionPorts  *ports);
void                 _paddock_session_ports_adopted             (PaddockSessionPorts  *ports);
guint                _paddock_session_ports_get_n_connections   (PaddockSessionPorts  *ports);
GPtrArray           *_paddock_session_ports_reserve             (PaddockRegistry      *registry,
                                                                 const char           *session_id,
                                                                 const char           *profile,
                                                                 const char           *net_mode,
                                                                 guint                 n_wanted,
                                                                 GError              **error);
void                 _paddock_session_ports_take_reserved       (PaddockSessionPorts  *ports,
                                                                 GPtrArray            *reserved);
void                 _paddock_session_ports_set_release         (PaddockSessionPorts  *ports,
                                                                 gboolean              release);
gboolean             _paddock_session_ports_get_release         (PaddockSessionPorts  *ports);
void                 _paddock_session_ports_hand_over           (PaddockSessionPorts  *ports,
                                                                 GPtrArray            *leases);
void                 _paddock_session_ports_add_bind_arguments  (PaddockSessionPorts  *ports,
                                                                 GPtrArray            *argv);
gboolean             _paddock_session_ports_check_name          (const char           *name,
                                                                 GError              **error);

void _paddock_session_ports_attach (PaddockSessionPorts *self,
                                   PaddockIpcSession1 *skeleton);

G_END_DECLS
