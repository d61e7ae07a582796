/* paddock-ports-impl.h — org.paddock.Ports1: the port registry on the bus
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include "paddock-ipc-generated.h"
#include "paddock-registry.h"

G_BEGIN_DECLS

/* Answers whether a session id exists; sessions own leases too. */
typedef gboolean (*PaddockSessionExistsFunc) (const char *session_id,
                                              gpointer    user_data);

#define PADDOCK_TYPE_PORTS_IMPL (paddock_ports_impl_get_type ())

G_DECLARE_FINAL_TYPE (PaddockPortsImpl, paddock_ports_impl, PADDOCK, PORTS_IMPL, PaddockIpcPorts1Skeleton)

PaddockPortsImpl *paddock_ports_impl_new                   (GDBusConnection          *connection);
void              paddock_ports_impl_set_registry          (PaddockPortsImpl         *self,
                                                            PaddockRegistry          *registry);
void              paddock_ports_impl_set_session_exists_func (PaddockPortsImpl       *self,
                                                            PaddockSessionExistsFunc  func,
                                                            gpointer                  user_data);
void              paddock_ports_impl_forget_vanished_owners (PaddockPortsImpl        *self);

/* A registry error as the PADDOCK_ERROR that crosses the bus; takes @src. */
void              paddock_error_propagate_registry         (GError                  **dest,
                                                            GError                   *src);

G_END_DECLS
