/* paddock-session-network.h — org.paddock.Session1's network: the proxy, its policy, its records, leased ports
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>
#include <sys/types.h>

#include "paddock-domain-rules.h"
#include "paddock-ipc-generated.h"
#include "paddock-session-config.h"
#include "paddock-session-gate.h"
#include "paddock-session-ports.h"

G_BEGIN_DECLS

#define PADDOCK_SESSION_PROXY_PORT 3128
/* PADDOCK_SESSION_MAX_PORTS and PADDOCK_SESSION_RESERVED_PORTS: in
 * paddock-reserved-ports.h, which paddockctl shares. */

#define PADDOCK_TYPE_SESSION_NETWORK (paddock_session_network_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionNetwork, paddock_session_network, PADDOCK, SESSION_NETWORK, GObject)

/* What the daemon asks of every session's network at once. */
void                   paddock_session_network_stop_all_proxies (void);

PaddockSessionNetwork *_paddock_session_network_new             (const char            *session_id,
                                                                 const char            *state_dir,
                                                                 PaddockSessionGate    *gate,
                                                                 PaddockSessionConfig  *config);
void                   _paddock_session_network_prepare_adopted (PaddockSessionNetwork *network,
                                                                 const char            *mode);
void                   _paddock_session_network_prepare         (PaddockSessionNetwork *network,
                                                                 const char            *mode);
void                   _paddock_session_network_spawned         (PaddockSessionNetwork *network);
char                 **_paddock_session_network_add_environment (PaddockSessionNetwork *network,
                                                                 char                 **env);
gboolean               _paddock_session_network_take_listener   (PaddockSessionNetwork *network,
                                                                 int                    fd,
                                                                 GError               **error);
void                   _paddock_session_network_stop            (PaddockSessionNetwork *network);
PaddockSessionPorts   *_paddock_session_network_get_ports       (PaddockSessionNetwork *network);

/* Pure: the environment leased ports give, and a policy parsed. */
char                 **_paddock_session_network_add_port_environment   (GPtrArray   *leases,
                                                                        char       **env);
char                 **_paddock_session_network_add_listen_environment (GPtrArray   *leases,
                                                                        char       **env,
                                                                        const char  *pid);
/* Async-signal-safe. */
void                   _paddock_session_network_child_format_pid       (char        *out,
                                                                        pid_t        value);
PaddockDomainRules    *_paddock_session_network_build_rules     (const char            *mode,
                                                                 const char * const    *allow,
                                                                 GError               **error);

void _paddock_session_network_attach (PaddockSessionNetwork *self,
                                     PaddockIpcSession1 *skeleton);

G_END_DECLS
