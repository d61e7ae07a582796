/* paddock-lease.h — one leased port and the sockets that hold it
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

/* HELD: the daemon holds the listening socket.
 * IN_USE: the daemon restarted while the socket it had handed out was still
 *   open in the owner's program; that very socket (same inode) still listens,
 *   so the port is still the owner's. The daemon takes it back when it closes.
 * LOST: another program took the port while no daemon ran; it is reported
 *   and taken back if that program lets go, never handed to anyone else.
 * RELEASED: the daemon closed its sockets so that the session's own program
 *   binds the port itself (CreateSession's "port-handover" 'release'); the
 *   port stays the session's by name, is never leased to anyone else and is
 *   not taken back by the reclaim timer, only by
 *   paddock_registry_take_back() once the session's processes are gone. */
typedef enum
{
  PADDOCK_LEASE_STATE_HELD,
  PADDOCK_LEASE_STATE_LOST,
  PADDOCK_LEASE_STATE_IN_USE,
  PADDOCK_LEASE_STATE_RELEASED,
} PaddockLeaseState;

#define PADDOCK_TYPE_LEASE (paddock_lease_get_type ())

G_DECLARE_FINAL_TYPE (PaddockLease, paddock_lease, PADDOCK, LEASE, GObject)

guint16            paddock_lease_get_port         (PaddockLease *self);
const char        *paddock_lease_get_name         (PaddockLease *self);
const char        *paddock_lease_get_owner        (PaddockLease *self);
const char        *paddock_lease_get_session      (PaddockLease *self);
PaddockLeaseState  paddock_lease_get_state        (PaddockLease *self);
const char        *paddock_lease_state_to_string  (PaddockLeaseState state);
gboolean           paddock_lease_get_ipv6         (PaddockLease *self);
gint64             paddock_lease_get_created      (PaddockLease *self);
int                paddock_lease_get_fd           (PaddockLease *self);
guint64            paddock_lease_get_socket_inode (PaddockLease *self);
GVariant          *paddock_lease_to_variant       (PaddockLease *self);

G_END_DECLS
