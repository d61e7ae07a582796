/* paddock-session-impl-private.h — what the session's sibling files need of it
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include "paddock-cgroup.h"
#include "paddock-domain-rules.h"
#include "paddock-lease.h"
#include "paddock-reserved-ports.h"
#include "paddock-registry.h"
#include "paddock-session-impl.h"
#include "paddock-session-leftovers.h"
#include "paddock-stage.h"

G_BEGIN_DECLS

PaddockStage *_paddock_session_impl_get_stage (PaddockSessionImpl    *self);

GStrv         _paddock_session_test_without_layers (void);
gboolean      _paddock_session_impl_is_live   (PaddockSessionImpl    *self);
/* Answers Busy while an earlier daemon's leftovers of the session are
 * being ended (TRUE then); FALSE otherwise, the call not answered. */
gboolean      _paddock_session_impl_refuse_leftovers (PaddockSessionImpl    *self,
                                                      GDBusMethodInvocation *invocation);
gboolean      _paddock_session_impl_freeze    (PaddockSessionImpl    *self,
                                               gboolean               frozen);
/* The pids of every process of the session now, as the daemon sees them. */
GArray       *_paddock_session_impl_list_pids (PaddockSessionImpl    *self);

/* The session's network (paddock-session-network.c). */
#define PADDOCK_SESSION_PROXY_PORT 3128
/* PADDOCK_SESSION_MAX_PORTS and PADDOCK_SESSION_RESERVED_PORTS: in
 * paddock-reserved-ports.h, which paddockctl shares. */

typedef struct _PaddockSessionNetwork PaddockSessionNetwork;

PaddockSessionNetwork *_paddock_session_impl_get_network        (PaddockSessionImpl    *self);
void                   _paddock_session_impl_set_network_policy (PaddockSessionImpl    *self,
                                                                 const char            *mode,
                                                                 const char * const    *allow_domains,
                                                                 PaddockDomainRules    *rules);
PaddockDomainRules    *_paddock_session_impl_get_net_rules      (PaddockSessionImpl    *self);

PaddockSessionNetwork *_paddock_session_network_new             (PaddockSessionImpl    *session,
                                                                 const char            *state_dir);
void                   _paddock_session_network_free            (PaddockSessionNetwork *network);
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

/* The session's leased ports forwarded into its network namespace
 * (paddock-session-ports.c); the network part owns them. */
typedef struct _PaddockSessionPorts PaddockSessionPorts;

GPtrArray           *_paddock_session_impl_get_leases           (PaddockSessionImpl   *self);
void                 _paddock_session_impl_add_lease            (PaddockSessionImpl   *self,
                                                                 PaddockLease         *lease);
gboolean             _paddock_session_impl_handle_lease_port    (PaddockIpcSession1    *session,
                                                                 GDBusMethodInvocation *invocation,
                                                                 const char            *name);
gboolean             _paddock_session_impl_request_socket       (PaddockSessionImpl   *self,
                                                                 guint32               id,
                                                                 int                   family,
                                                                 GError              **error);
PaddockSessionPorts *_paddock_session_network_get_ports         (PaddockSessionNetwork *network);

void                 _paddock_session_ports_set_registry        (PaddockRegistry      *registry);
PaddockSessionPorts *_paddock_session_ports_new                 (PaddockSessionImpl   *session);
void                 _paddock_session_ports_free                (PaddockSessionPorts  *ports);
void                 _paddock_session_ports_start               (PaddockSessionPorts  *ports,
                                                                 gboolean              forwarding,
                                                                 GPtrArray            *leases);
gboolean             _paddock_session_ports_add                 (PaddockSessionPorts  *ports,
                                                                 PaddockLease         *lease,
                                                                 GError              **error);
void                 _paddock_session_ports_socket_event        (PaddockSessionPorts  *ports,
                                                                 gint64                id,
                                                                 int                  *fd);
void                 _paddock_session_ports_stop                (PaddockSessionPorts  *ports);
void                 _paddock_session_ports_refuse_all          (PaddockSessionPorts  *ports);
void                 _paddock_session_ports_adopted             (PaddockSessionPorts  *ports);
gboolean             _paddock_session_impl_is_adopted           (PaddockSessionImpl   *self);
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

gboolean _paddock_session_impl_handle_list_network_records (PaddockIpcSession1    *session,
                                                            GDBusMethodInvocation *invocation,
                                                            guint64                after_seq,
                                                            guint                  max);
gboolean _paddock_session_impl_handle_set_network_policy   (PaddockIpcSession1    *session,
                                                            GDBusMethodInvocation *invocation,
                                                            const char            *mode,
                                                            const char * const    *allow_domains);

G_END_DECLS
