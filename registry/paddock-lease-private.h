/* paddock-lease-private.h — constructor and mutators the registry uses on leases
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include "paddock-lease.h"

G_BEGIN_DECLS

/* Takes ownership of @fd4 and @fd6 (either may be -1). A lease whose @fd4 is
 * -1 is LOST: its port is recorded but no longer held by us. */
PaddockLease *_paddock_lease_new           (guint16       port,
                                            const char   *name,
                                            const char   *owner,
                                            const char   *session,
                                            gint64        created,
                                            int           fd4,
                                            int           fd6);
void          _paddock_lease_close_sockets (PaddockLease *self);
void          _paddock_lease_set_in_use    (PaddockLease *self,
                                            guint64       socket_inode,
                                            int           fd6);
void          _paddock_lease_set_lost      (PaddockLease *self);
void          _paddock_lease_set_released  (PaddockLease *self);
void          _paddock_lease_take_sockets  (PaddockLease *self,
                                            int           fd4,
                                            int           fd6);
void          _paddock_lease_set_name      (PaddockLease *self,
                                            const char   *name);

G_END_DECLS
