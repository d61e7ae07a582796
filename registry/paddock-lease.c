/* paddock-lease.c — one leased port and the sockets that hold it
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <sys/stat.h>

#include "paddock-autofd.h"
#include "paddock-lease-private.h"

struct _PaddockLease
{
  GObject            parent_instance;

  char              *name;
  char              *owner;
  char              *session;
  gint64             created;
  PaddockLeaseState  state;
  guint16            port;

  /* The listening 127.0.0.1 socket that reserves the port (and is handed to
   * the client), and the non-listening [::1] guard; -1 when not held. */
  int                fd4;
  int                fd6;

  /* The inode of the IPv4 socket: how a restarted daemon recognises its own
   * socket still listening in the program it was handed to. */
  guint64            socket_inode;

  /* Whether [::1] was guarded when the lease was made; kept after release
   * so a released lease still describes itself correctly. */
  guint              ipv6 : 1;

  /* Whether its sockets were closed once for its session's program to bind
   * the port itself (_paddock_lease_set_released()): kept when the port is
   * taken back, so that the session still says which handover it got. */
  guint              handed_over : 1;
};

G_DEFINE_FINAL_TYPE (PaddockLease, paddock_lease, G_TYPE_OBJECT)

static void
paddock_lease_dispose (GObject *object)
{
  PaddockLease *self = PADDOCK_LEASE (object);

  /* Close early (not only in finalize) so that a released port is free
   * again as soon as the registry lets go, even if a reference lingers. */
  _paddock_lease_close_sockets (self);

  G_OBJECT_CLASS (paddock_lease_parent_class)->dispose (object);
}

static void
paddock_lease_finalize (GObject *object)
{
  PaddockLease *self = PADDOCK_LEASE (object);

  _paddock_lease_close_sockets (self);
  g_clear_pointer (&self->name, g_free);
  g_clear_pointer (&self->owner, g_free);
  g_clear_pointer (&self->session, g_free);

  G_OBJECT_CLASS (paddock_lease_parent_class)->finalize (object);
}

static void
paddock_lease_class_init (PaddockLeaseClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_lease_dispose;
  object_class->finalize = paddock_lease_finalize;
}

static void
paddock_lease_init (PaddockLease *self)
{
  self->fd4 = -1;
  self->fd6 = -1;
}

static guint64
socket_inode_of (int fd)
{
  struct stat st;

  if (fd < 0 || fstat (fd, &st) != 0)
    return 0;
  return (guint64) st.st_ino;
}

PaddockLease *
_paddock_lease_new (guint16     port,
                    const char *name,
                    const char *owner,
                    const char *session,
                    gint64      created,
                    int         fd4,
                    int         fd6)
{
  PaddockLease *self;

  g_return_val_if_fail (port > 0, NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (owner != NULL, NULL);

  self = g_object_new (PADDOCK_TYPE_LEASE, NULL);
  self->port = port;
  self->name = g_strdup (name);
  self->owner = g_strdup (owner);
  self->session = g_strdup (session);
  self->created = created;
  self->fd4 = fd4;
  self->fd6 = fd6;
  self->state = fd4 >= 0 ? PADDOCK_LEASE_STATE_HELD : PADDOCK_LEASE_STATE_LOST;

  /* A lost lease holds nothing; never keep a stray guard socket. */
  if (self->state == PADDOCK_LEASE_STATE_LOST)
    paddock_close_fd (&self->fd6);
  self->ipv6 = self->fd6 >= 0;
  self->socket_inode = socket_inode_of (self->fd4);

  return self;
}

void
_paddock_lease_set_in_use (PaddockLease *self,
                           guint64       socket_inode,
                           int           fd6)
{
  g_return_if_fail (PADDOCK_IS_LEASE (self));
  g_return_if_fail (self->fd4 < 0);

  paddock_close_fd (&self->fd6);
  self->fd6 = fd6;
  self->ipv6 = fd6 >= 0;
  self->socket_inode = socket_inode;
  self->state = PADDOCK_LEASE_STATE_IN_USE;
}

void
_paddock_lease_set_lost (PaddockLease *self)
{
  g_return_if_fail (PADDOCK_IS_LEASE (self));

  _paddock_lease_close_sockets (self);
  self->socket_inode = 0;
  self->state = PADDOCK_LEASE_STATE_LOST;
}

/* The port is ours again (reclaimed): takes ownership of both sockets. */
/* Its sockets closed for its owner's program to bind the port itself. */
void
_paddock_lease_set_released (PaddockLease *self)
{
  g_return_if_fail (PADDOCK_IS_LEASE (self));

  _paddock_lease_close_sockets (self);
  self->socket_inode = 0;
  self->state = PADDOCK_LEASE_STATE_RELEASED;
  self->handed_over = TRUE;
}

void
_paddock_lease_take_sockets (PaddockLease *self,
                             int           fd4,
                             int           fd6)
{
  g_return_if_fail (PADDOCK_IS_LEASE (self));
  g_return_if_fail (fd4 >= 0);

  _paddock_lease_close_sockets (self);
  self->fd4 = fd4;
  self->fd6 = fd6;
  self->ipv6 = fd6 >= 0;
  self->socket_inode = socket_inode_of (fd4);
  self->state = PADDOCK_LEASE_STATE_HELD;
}

/* The registry renamed it (paddock_registry_rename()). */
void
_paddock_lease_set_name (PaddockLease *self,
                         const char   *name)
{
  g_return_if_fail (PADDOCK_IS_LEASE (self));
  g_return_if_fail (name != NULL);

  g_free (self->name);
  self->name = g_strdup (name);
}

/* Closes both sockets: the port becomes free for anyone. The state is left
 * alone; the registry drops the lease from its list at the same time. */
void
_paddock_lease_close_sockets (PaddockLease *self)
{
  g_return_if_fail (PADDOCK_IS_LEASE (self));

  paddock_close_fd (&self->fd4);
  paddock_close_fd (&self->fd6);
}

guint16
paddock_lease_get_port (PaddockLease *self)
{
  g_return_val_if_fail (PADDOCK_IS_LEASE (self), 0);

  return self->port;
}

const char *
paddock_lease_get_name (PaddockLease *self)
{
  g_return_val_if_fail (PADDOCK_IS_LEASE (self), NULL);

  return self->name;
}

/* Either a D-Bus unique name or "session:<id>". */
const char *
paddock_lease_get_owner (PaddockLease *self)
{
  g_return_val_if_fail (PADDOCK_IS_LEASE (self), NULL);

  return self->owner;
}

/* The session the lease is tied to, or NULL. */
const char *
paddock_lease_get_session (PaddockLease *self)
{
  g_return_val_if_fail (PADDOCK_IS_LEASE (self), NULL);

  return self->session;
}

PaddockLeaseState
paddock_lease_get_state (PaddockLease *self)
{
  g_return_val_if_fail (PADDOCK_IS_LEASE (self), PADDOCK_LEASE_STATE_LOST);

  return self->state;
}

const char *
paddock_lease_state_to_string (PaddockLeaseState state)
{
  switch (state)
    {
    case PADDOCK_LEASE_STATE_HELD:
      return "held";
    case PADDOCK_LEASE_STATE_LOST:
      return "lost";
    case PADDOCK_LEASE_STATE_IN_USE:
      return "in-use";
    case PADDOCK_LEASE_STATE_RELEASED:
      return "released";
    default:
      g_return_val_if_reached ("unknown");
    }
}

/* TRUE when [::1]:port is guarded too, FALSE when the host has no IPv6
 * loopback (the lease is then IPv4-only) or the lease is lost. */
gboolean
paddock_lease_get_ipv6 (PaddockLease *self)
{
  g_return_val_if_fail (PADDOCK_IS_LEASE (self), FALSE);

  return self->ipv6;
}

/* Wall-clock time of the lease, in microseconds since the epoch. */
gint64
paddock_lease_get_created (PaddockLease *self)
{
  g_return_val_if_fail (PADDOCK_IS_LEASE (self), 0);

  return self->created;
}

/* The listening IPv4 socket, borrowed: dup it to pass it on. -1 when the
 * lease is lost or has been released. */
int
paddock_lease_get_fd (PaddockLease *self)
{
  g_return_val_if_fail (PADDOCK_IS_LEASE (self), -1);

  return self->fd4;
}

/* 0 when the lease is lost. */
guint64
paddock_lease_get_socket_inode (PaddockLease *self)
{
  g_return_val_if_fail (PADDOCK_IS_LEASE (self), 0);

  return self->socket_inode;
}

/* Returns a new, non-floating (already sunk) a{sv} reference: release it
 * with g_variant_unref(); embed it with "@a{sv}" and unref afterwards.
 * Keys: port (q), name (s), owner (s), session (s, "" when none),
 * state (s, "held"/"in-use"/"lost"/"released"), released (b: its sockets
 * were closed for its session's program to bind the port itself), ipv6
 * (b), created (t, µs since the epoch). */
GVariant *
paddock_lease_to_variant (PaddockLease *self)
{
  GVariantBuilder builder;

  g_return_val_if_fail (PADDOCK_IS_LEASE (self), NULL);

  g_variant_builder_init (&builder, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&builder, "{sv}", "port", g_variant_new_uint16 (self->port));
  g_variant_builder_add (&builder, "{sv}", "name", g_variant_new_string (self->name));
  g_variant_builder_add (&builder, "{sv}", "owner", g_variant_new_string (self->owner));
  g_variant_builder_add (&builder, "{sv}", "session",
                         g_variant_new_string (self->session != NULL ? self->session : ""));
  g_variant_builder_add (&builder, "{sv}", "state",
                         g_variant_new_string (paddock_lease_state_to_string (self->state)));
  g_variant_builder_add (&builder, "{sv}", "ipv6", g_variant_new_boolean (self->ipv6));
  g_variant_builder_add (&builder, "{sv}", "released", g_variant_new_boolean (self->handed_over));
  g_variant_builder_add (&builder, "{sv}", "created",
                         g_variant_new_uint64 ((guint64) MAX (self->created, 0)));

  return g_variant_ref_sink (g_variant_builder_end (&builder));
}
