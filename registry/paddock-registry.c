/* paddock-registry.c — the machine-wide port registry: leases are sockets we hold
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-durable-file.h"
#include "paddock-lease-private.h"
#include "paddock-registry.h"

#define STATE_VERSION        1
#define SESSION_OWNER_PREFIX "session:"
/* Owners are D-Bus unique names (at most 255 bytes by the spec) or
 * "session:<id>"; bound them so one client cannot bloat the state file. */
#define MAX_OWNER_LEN        255
#define MAX_SESSION_LEN      128
#define LISTEN_BACKLOG       SOMAXCONN

struct _PaddockRegistry
{
  GObject     parent_instance;

  /* PaddockLease, sorted by port: the GListModel order. */
  GPtrArray  *leases;
  /* owner → number of leases (GUINT_TO_POINTER), for O(1) quota checks. */
  GHashTable *owner_counts;

  char       *state_file;
  /* The message bus the client owners' unique names belong to: a new bus
   * (a new login) hands out ":1.N" again, to other programs. */
  char       *bus_id;
  /* Changes since the last snapshot, one JSON line each (see journal_write):
   * a change costs an append and an fdatasync, not a rewrite of every lease. */
  char       *journal_file;
  int         journal_fd;
  guint       journal_entries;
  /* A write to the journal failed and could not be undone: the journal may
   * end in a torn line, or miss changes the model has. The next write
   * rebuilds the snapshot instead of appending. */
  gboolean    journal_dirty;

  guint       max_leases;
  guint       max_per_owner;
  guint16     first_port;
  guint16     last_port;
  /* Where the next pool scan starts: just after the last port handed out,
   * so a port that was just released is not handed straight to someone
   * else while its previous user may still try to reach it. */
  guint16     cursor;
};

static void paddock_registry_list_model_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (PaddockRegistry, paddock_registry, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL,
                                                      paddock_registry_list_model_init))

G_DEFINE_QUARK (paddock-registry-error-quark, paddock_registry_error)

/* GListModel */

static GType
paddock_registry_get_item_type (GListModel *model)
{
  return PADDOCK_TYPE_LEASE;
}

static guint
paddock_registry_get_n_items (GListModel *model)
{
  PaddockRegistry *self = PADDOCK_REGISTRY (model);

  return self->leases->len;
}

static gpointer
paddock_registry_get_item (GListModel *model,
                           guint       position)
{
  PaddockRegistry *self = PADDOCK_REGISTRY (model);

  if (position >= self->leases->len)
    return NULL;

  return g_object_ref (g_ptr_array_index (self->leases, position));
}

static void
paddock_registry_list_model_init (GListModelInterface *iface)
{
  iface->get_item_type = paddock_registry_get_item_type;
  iface->get_n_items = paddock_registry_get_n_items;
  iface->get_item = paddock_registry_get_item;
}

/* GObject */

static void
paddock_registry_dispose (GObject *object)
{
  PaddockRegistry *self = PADDOCK_REGISTRY (object);

  /* Dropping the registry without releasing is what a daemon shutdown
   * does: the sockets close, the state file keeps the leases for the next
   * start. */
  g_clear_pointer (&self->leases, g_ptr_array_unref);
  g_clear_pointer (&self->owner_counts, g_hash_table_unref);

  G_OBJECT_CLASS (paddock_registry_parent_class)->dispose (object);
}

static void
paddock_registry_finalize (GObject *object)
{
  PaddockRegistry *self = PADDOCK_REGISTRY (object);

  g_clear_pointer (&self->state_file, g_free);
  g_clear_pointer (&self->bus_id, g_free);
  g_clear_pointer (&self->journal_file, g_free);
  paddock_close_fd (&self->journal_fd);

  G_OBJECT_CLASS (paddock_registry_parent_class)->finalize (object);
}

static void
paddock_registry_class_init (PaddockRegistryClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_registry_dispose;
  object_class->finalize = paddock_registry_finalize;
}

static void
paddock_registry_init (PaddockRegistry *self)
{
  self->leases = g_ptr_array_new_with_free_func (g_object_unref);
  self->owner_counts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->journal_fd = -1;
}

PaddockRegistry *
paddock_registry_new (guint16   first_port,
                      guint16   last_port,
                      guint     max_leases,
                      guint     max_per_owner,
                      GError  **error)
{
  PaddockRegistry *self;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  /* Ports below 1024 need privileges we do not have and must not want. */
  if (first_port < 1024 || first_port > last_port)
    {
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT,
                   "Invalid port pool %u–%u: it must satisfy 1024 ≤ first ≤ last ≤ 65535",
                   first_port, last_port);
      return NULL;
    }

  if (max_leases == 0 || max_per_owner == 0)
    {
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT,
                   "Lease limits must be positive (total %u, per owner %u)",
                   max_leases, max_per_owner);
      return NULL;
    }

  self = g_object_new (PADDOCK_TYPE_REGISTRY, NULL);
  self->first_port = first_port;
  self->last_port = last_port;
  self->max_leases = max_leases;
  self->max_per_owner = max_per_owner;
  self->cursor = first_port;

  return self;
}

guint16
paddock_registry_get_first_port (PaddockRegistry *self)
{
  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), 0);

  return self->first_port;
}

guint16
paddock_registry_get_last_port (PaddockRegistry *self)
{
  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), 0);

  return self->last_port;
}

guint
paddock_registry_get_max_leases (PaddockRegistry *self)
{
  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), 0);

  return self->max_leases;
}

guint
paddock_registry_get_max_per_owner (PaddockRegistry *self)
{
  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), 0);

  return self->max_per_owner;
}

/* The sorted list */

/* Binary search: TRUE and the index when @port is in the list, else FALSE
 * and the index where it would be inserted. */
static gboolean
find_port (PaddockRegistry *self,
           guint16          port,
           guint           *out_index)
{
  guint lo = 0;
  guint hi = self->leases->len;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      guint16 mid_port = paddock_lease_get_port (g_ptr_array_index (self->leases, mid));

      if (mid_port == port)
        {
          *out_index = mid;
          return TRUE;
        }

      if (mid_port < port)
        lo = mid + 1;
      else
        hi = mid;
    }

  *out_index = lo;
  return FALSE;
}

static guint
owner_count (PaddockRegistry *self,
             const char      *owner)
{
  return GPOINTER_TO_UINT (g_hash_table_lookup (self->owner_counts, owner));
}

static void
owner_count_add (PaddockRegistry *self,
                 const char      *owner,
                 int              delta)
{
  guint count = owner_count (self, owner);

  g_assert (delta > 0 || count >= (guint) -delta);
  count = (guint) ((int) count + delta);

  if (count == 0)
    g_hash_table_remove (self->owner_counts, owner);
  else
    g_hash_table_replace (self->owner_counts, g_strdup (owner), GUINT_TO_POINTER (count));
}

/* Inserts without emitting items-changed; returns the position. */
static guint
insert_lease (PaddockRegistry *self,
              PaddockLease    *lease)
{
  guint index = 0;
  gboolean found;

  found = find_port (self, paddock_lease_get_port (lease), &index);
  g_assert (!found);

  g_ptr_array_insert (self->leases, (int) index, g_object_ref (lease));
  owner_count_add (self, paddock_lease_get_owner (lease), 1);

  return index;
}

/* Removes without emitting items-changed or closing; returns the lease. */
static PaddockLease *
steal_lease (PaddockRegistry *self,
             guint            index)
{
  PaddockLease *lease = g_ptr_array_steal_index (self->leases, index);

  owner_count_add (self, paddock_lease_get_owner (lease), -1);

  return lease;
}

/* Sockets
 *
 * This is the security-relevant part: a lease must make sure that nobody
 * else on this machine, whatever socket options they use, can listen on
 * the port between the lease and its use, and that clients reaching
 * "localhost:port" end up at whoever we hand the socket to.
 */

typedef enum
{
  BIND_OK,
  BIND_IN_USE,
  BIND_FAILED,
} BindResult;

static BindResult
bind_ipv4 (guint16   port,
           int      *out_fd,
           int      *out_errno)
{
  paddock_autofd int fd = -1;
  struct sockaddr_in addr;
  int one = 1;

  /* SOCK_CLOEXEC: the daemon spawns sessions; no child may inherit a
   * lease it was not given explicitly. */
  fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    goto failed;

  /* SO_REUSEADDR for the bind only: it lets us bind over TIME_WAIT
   * remnants of earlier connections (so a port can be leased again right
   * after its previous user closed connections). While the socket listens,
   * Linux refuses every other bind of the address, SO_REUSEADDR or not; we
   * clear the option after listen() so that stays true if the program we
   * hand the socket to stops listening (see below). We deliberately do NOT
   * set SO_REUSEPORT: with it, any process of the same user that also sets
   * SO_REUSEPORT could bind the very same port and steal connections. */
  if (setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0)
    goto failed;

  memset (&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons (port);
  addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);

  /* 127.0.0.1 only: leases are for local development servers, never
   * exposed to the network. A listener on 127.0.0.1 also makes binds of
   * 0.0.0.0:port (and dual-stack [::]:port) by others fail. */
  if (bind (fd, (struct sockaddr *) &addr, sizeof addr) != 0)
    goto failed;

  /* Listening is what makes the reservation absolute (see above), and it
   * makes the fd we hand out ready to accept() at once. listen() can
   * itself fail with EADDRINUSE when another non-listening SO_REUSEADDR
   * socket shares the address: that port is someone else's, skip it. */
  if (listen (fd, LISTEN_BACKLOG) != 0)
    goto failed;

  /* Clear SO_REUSEADDR again now that we are bound: the socket is shared
   * with whoever we hand it to, and if that program shutdown()s it, it
   * stops listening. A bound socket without SO_REUSEADDR still refuses
   * every other bind of the address, listening or not; with the option
   * left on, any SO_REUSEADDR socket of any user could then take it while
   * we still report it held. The price: accepted connections inherit the
   * cleared option, so after release a connection the server side closed
   * first keeps the port for TIME_WAIT (about a minute) before it can be
   * bound again. A held port is worth more than a quick re-bind. */
  if (setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &(int) { 0 }, sizeof (int)) != 0)
    goto failed;

  *out_fd = paddock_steal_fd (&fd);
  return BIND_OK;

failed:
  *out_errno = errno;
  return errno == EADDRINUSE ? BIND_IN_USE : BIND_FAILED;
}

/* Returns BIND_OK with *out_fd == -1 when the host has no IPv6 loopback. */
static BindResult
bind_ipv6_guard (guint16   port,
                 int      *out_fd,
                 int      *out_errno)
{
  paddock_autofd int fd = -1;
  struct sockaddr_in6 addr;
  int one = 1;

  *out_fd = -1;

  fd = socket (AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    {
      /* No IPv6 in this kernel/namespace: nobody can use [::1]:port
       * either, so the IPv4 socket alone is a complete lease. */
      if (errno == EAFNOSUPPORT)
        return BIND_OK;
      goto failed;
    }

  /* V6ONLY so this guard covers [::1] alone and does not interact with
   * the IPv4 listener for the same port. */
  if (setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0)
    goto failed;

  memset (&addr, 0, sizeof addr);
  addr.sin6_family = AF_INET6;
  addr.sin6_port = htons (port);
  addr.sin6_addr = in6addr_loopback;

  /* The guard is bound but NOT listening and has NO SO_REUSEADDR:
   *  - without SO_REUSEADDR on our side, Linux refuses every other bind of
   *    [::1]:port or [::]:port (v6only or dual-stack), whatever options the
   *    other socket sets, so no one can listen on the IPv6 loopback of our
   *    port and capture clients resolving "localhost" to ::1 first;
   *  - not listening, connections to [::1]:port are refused at once, so
   *    such clients fall back to 127.0.0.1, where the lease holder listens.
   * EADDRINUSE here means another program has [::1]:port or [::]:port (or
   * an old [::1] connection is in TIME_WAIT): the port is not free now.
   * EADDRNOTAVAIL means the loopback has no ::1 (IPv6 disabled): nobody can
   * bind it, so the lease is IPv4-only. */
  if (bind (fd, (struct sockaddr *) &addr, sizeof addr) != 0)
    {
      if (errno == EADDRNOTAVAIL || errno == EAFNOSUPPORT)
        return BIND_OK;
      goto failed;
    }

  *out_fd = paddock_steal_fd (&fd);
  return BIND_OK;

failed:
  *out_errno = errno;
  return errno == EADDRINUSE ? BIND_IN_USE : BIND_FAILED;
}

/* Takes @port for us: both sockets, or nothing. IPv4 first, so a port that
 * another program listens on is rejected before we touch [::1]. */
static BindResult
bind_port (guint16   port,
           int      *out_fd4,
           int      *out_fd6,
           int      *out_errno)
{
  paddock_autofd int fd4 = -1;
  paddock_autofd int fd6 = -1;
  BindResult result;

  result = bind_ipv4 (port, &fd4, out_errno);
  if (result != BIND_OK)
    return result;

  result = bind_ipv6_guard (port, &fd6, out_errno);
  if (result != BIND_OK)
    return result;

  *out_fd4 = paddock_steal_fd (&fd4);
  *out_fd6 = paddock_steal_fd (&fd6);
  return BIND_OK;
}

/* Adds the listening TCP sockets of @family in our network namespace to
 * @inodes, asked of the kernel's sock_diag (what `ss -l` does): it walks
 * the listening sockets only, so the cost does not grow with the machine's
 * connections (thousands in TIME_WAIT after a burst of them). FALSE where
 * the kernel does not answer. */
static gboolean
dump_listening_tcp (int         family,
                    GHashTable *inodes)
{
  paddock_autofd int fd = socket (AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
  struct
  {
    struct nlmsghdr         header;
    struct inet_diag_req_v2 request;
  } message = {
    .header = {
      .nlmsg_len = sizeof message,
      .nlmsg_type = SOCK_DIAG_BY_FAMILY,
      .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
      .nlmsg_seq = 1,
    },
    .request = {
      .sdiag_family = (guint8) family,
      .sdiag_protocol = IPPROTO_TCP,
      .idiag_states = 1U << TCP_LISTEN,
    },
  };
  g_autofree struct nlmsghdr *buffer = NULL;
  const gsize buffer_size = 32 * 1024;

  if (fd < 0)
    return FALSE;
  if (sendto (fd, &message, sizeof message, 0, (struct sockaddr *) &kernel, sizeof kernel) < 0)
    return FALSE;

  buffer = g_malloc (buffer_size);
  for (;;)
    {
      /* MSG_TRUNC: the datagram's whole length, so that one cut short
       * (its last sockets dropped, by NLMSG_OK below, without a word) is
       * an error rather than a list with a listener missing. */
      ssize_t received = recv (fd, buffer, buffer_size, MSG_TRUNC);
      int remaining;

      if (received < 0 && errno == EINTR)
        continue;
      if (received == 0)
        errno = EIO;
      else if (received > (ssize_t) buffer_size)
        errno = EMSGSIZE;
      if (received <= 0 || received > (ssize_t) buffer_size)
        return FALSE;

      remaining = (int) received;
      for (struct nlmsghdr *header = buffer; NLMSG_OK (header, remaining);
           header = NLMSG_NEXT (header, remaining))
        {
          const struct inet_diag_msg *socket_info;
          guint port;

          if (header->nlmsg_seq != message.header.nlmsg_seq)
            continue;
          if (header->nlmsg_type == NLMSG_DONE)
            return TRUE;
          if (header->nlmsg_type == NLMSG_ERROR)
            {
              const struct nlmsgerr *failure = NLMSG_DATA (header);

              errno = header->nlmsg_len >= NLMSG_LENGTH (sizeof *failure) && failure->error < 0
                      ? -failure->error : EIO;
              return FALSE;
            }
          if (header->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
              header->nlmsg_len < NLMSG_LENGTH (sizeof *socket_info))
            continue;

          socket_info = NLMSG_DATA (header);
          port = ntohs (socket_info->id.idiag_sport);
          if (socket_info->idiag_state != TCP_LISTEN || socket_info->idiag_inode == 0 || port == 0)
            continue;
          g_hash_table_insert (inodes, g_memdup2 (&(gint64) { (gint64) socket_info->idiag_inode }, sizeof (gint64)),
                               GUINT_TO_POINTER (port));
        }
    }
}

/* The inodes of every listening IPv4 TCP socket in this network namespace
 * (our own, where the daemon runs), mapped to their ports: one dump per
 * pass, however many leases are checked against it. IPv4 only: the inode a
 * lease keeps is that of its 127.0.0.1 socket (the [::1] guard never
 * listens), which the AF_INET6 table cannot hold. Inodes of live sockets
 * are unique, and we only ever handed a lease's socket to the lease's
 * owner. NULL where the kernel would not say: see socket_still_listening(). */
static GHashTable *
listening_sockets (void)
{
  /* Reclaim asks again every second while a lease is not held, and a
   * kernel that cannot answer now will not later: say it once. */
  static gboolean warned = FALSE;
  g_autoptr(GHashTable) inodes = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);

  if (!dump_listening_tcp (AF_INET, inodes))
    {
      int saved_errno = errno;

      if (!warned)
        g_warning ("Could not list the listening TCP sockets (sock_diag): %s; a leased port "
                   "found in use is taken to be still its owner's", g_strerror (saved_errno));
      else
        g_debug ("Could not list the listening TCP sockets (sock_diag): %s", g_strerror (saved_errno));
      warned = TRUE;
      return NULL;
    }

  return g_steal_pointer (&inodes);
}

static gboolean
socket_still_listening (GHashTable *listening,
                        guint16     port,
                        guint64     inode)
{
  gint64 key = (gint64) inode;

  /* Not known: the owner's program may still hold its socket, and a port
   * is never taken from a program that may hold it. */
  if (listening == NULL)
    return TRUE;
  return GPOINTER_TO_UINT (g_hash_table_lookup (listening, &key)) == port;
}

/* Persistence */

static void
add_lease_members (JsonBuilder  *builder,
                   PaddockLease *lease)
{
  const char *session = paddock_lease_get_session (lease);
  PaddockLeaseState state = paddock_lease_get_state (lease);

  json_builder_set_member_name (builder, "port");
  json_builder_add_int_value (builder, paddock_lease_get_port (lease));
  json_builder_set_member_name (builder, "name");
  json_builder_add_string_value (builder, paddock_lease_get_name (lease));
  json_builder_set_member_name (builder, "owner");
  json_builder_add_string_value (builder, paddock_lease_get_owner (lease));
  json_builder_set_member_name (builder, "session");
  if (session != NULL)
    json_builder_add_string_value (builder, session);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "created");
  json_builder_add_int_value (builder, paddock_lease_get_created (lease));
  json_builder_set_member_name (builder, "state");
  json_builder_add_string_value (builder, paddock_lease_state_to_string (state));
  json_builder_set_member_name (builder, "socket_inode");
  json_builder_add_int_value (builder, (gint64) paddock_lease_get_socket_inode (lease));
}

static char *
serialize (PaddockRegistry *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "version");
  json_builder_add_int_value (builder, STATE_VERSION);
  if (self->bus_id != NULL)
    {
      json_builder_set_member_name (builder, "bus_id");
      json_builder_add_string_value (builder, self->bus_id);
    }
  json_builder_set_member_name (builder, "leases");
  json_builder_begin_array (builder);

  for (guint i = 0; i < self->leases->len; i++)
    {
      PaddockLease *lease = g_ptr_array_index (self->leases, i);

      json_builder_begin_object (builder);
      add_lease_members (builder, lease);
      json_builder_end_object (builder);
    }

  json_builder_end_array (builder);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  json_generator_set_pretty (generator, FALSE);

  return json_generator_to_data (generator, NULL);
}

/* Writes the current list; a no-op until paddock_registry_load() gave us a
 * path. Errors come back in our domain so the daemon maps them as one. */
static gboolean
persist (PaddockRegistry  *self,
         GError          **error)
{
  g_autofree char *json = NULL;
  g_autoptr(GError) local_error = NULL;

  if (self->state_file == NULL)
    return TRUE;

  json = serialize (self);
  if (!paddock_durable_file_replace (self->state_file, json, -1, 0600, &local_error))
    {
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED,
                   "Could not save the lease state: %s", local_error->message);
      return FALSE;
    }

  return TRUE;
}

/* Folds the journal into the snapshot: write every lease durably, then
 * empty the journal. A crash in between replays a journal whose changes
 * the snapshot already has; replaying them again changes nothing. */
static gboolean
compact (PaddockRegistry  *self,
         GError          **error)
{
  if (!persist (self, error))
    return FALSE;

  if (self->journal_fd >= 0 &&
      (ftruncate (self->journal_fd, 0) != 0 || fsync (self->journal_fd) != 0))
    {
      int saved_errno = errno;
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED,
                   "Could not empty the lease journal: %s", g_strerror (saved_errno));
      return FALSE;
    }

  self->journal_entries = 0;
  self->journal_dirty = FALSE;
  return TRUE;
}

/* A failed append must leave no trace: a torn line would make the journal
 * unreadable at the next start, and a complete but unacknowledged one would
 * bring back a change the caller was told had failed. Cut the journal back
 * to where the append began; if even that fails, mark it dirty. */
static gboolean
journal_undo (PaddockRegistry  *self,
              off_t             end,
              int               saved_errno,
              GError          **error)
{
  if (end < 0 || ftruncate (self->journal_fd, end) != 0 || fdatasync (self->journal_fd) != 0)
    self->journal_dirty = TRUE;

  g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED,
               "Could not save the lease state: %s", g_strerror (saved_errno));
  return FALSE;
}

/* Appends @lines (complete JSON lines) to the journal and makes them
 * durable with fdatasync before returning: a change is acknowledged only
 * once it is on disk. When the journal has grown well past the number of
 * leases, it is folded into a new snapshot (durable replace) and emptied. */
static gboolean
journal_write (PaddockRegistry  *self,
               const char       *lines,
               guint             n_lines,
               GError          **error)
{
  gsize length = strlen (lines);
  gsize done = 0;
  struct stat st;
  off_t end;

  if (self->journal_fd < 0)
    return TRUE;

  /* After a failed write the model is ahead of the journal (or the journal
   * ends in half a line): a full snapshot puts both right, and holds this
   * change too. Until it succeeds, changes fail. */
  if (self->journal_dirty)
    return compact (self, error);

  /* Someone removed the journal (or the whole state dir): appending to the
   * orphaned file would "succeed" and save nothing. Start a new journal
   * from a full snapshot instead, which already holds this change. */
  if (fstat (self->journal_fd, &st) == 0 && st.st_nlink == 0)
    {
      int fd = open (self->journal_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);

      if (fd < 0)
        {
          int saved_errno = errno;
          g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED,
                       "Could not save the lease state: %s", g_strerror (saved_errno));
          return FALSE;
        }
      paddock_close_fd (&self->journal_fd);
      self->journal_fd = fd;
      return compact (self, error);
    }

  /* Where this append starts, so a failed one can be cut off again. */
  end = lseek (self->journal_fd, 0, SEEK_END);

  while (done < length)
    {
      gssize n = write (self->journal_fd, lines + done, length - done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return journal_undo (self, end, errno, error);
      done += (gsize) n;
    }

  if (fdatasync (self->journal_fd) != 0)
    return journal_undo (self, end, errno, error);

  self->journal_entries += n_lines;
  if (self->journal_entries > 2 * self->leases->len + 256)
    return compact (self, error);

  return TRUE;
}

static void
journal_add_put (GString      *lines,
                 PaddockLease *lease)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *line = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "op");
  json_builder_add_string_value (builder, "put");
  add_lease_members (builder, lease);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  line = json_generator_to_data (generator, NULL);
  g_string_append (lines, line);
  g_string_append_c (lines, '\n');
}

static void
journal_add_remove (GString *lines,
                    guint16  port)
{
  g_string_append_printf (lines, "{\"op\":\"remove\",\"port\":%u}\n", port);
}

static gboolean
journal_put (PaddockRegistry  *self,
             PaddockLease     *lease,
             GError          **error)
{
  g_autoptr(GString) lines = g_string_new (NULL);

  journal_add_put (lines, lease);
  return journal_write (self, lines->str, 1, error);
}

static gboolean
journal_remove (PaddockRegistry  *self,
                guint16           port,
                GError          **error)
{
  g_autoptr(GString) lines = g_string_new (NULL);

  journal_add_remove (lines, port);
  return journal_write (self, lines->str, 1, error);
}

typedef struct
{
  char    *name;
  char    *owner;
  char    *session;
  gint64   created;
  guint64  socket_inode;
  guint16  port;
} LeaseRecord;

static void
lease_record_free (LeaseRecord *record)
{
  g_free (record->name);
  g_free (record->owner);
  g_free (record->session);
  g_free (record);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LeaseRecord, lease_record_free)

static gboolean
corrupt (GError     **error,
         const char  *path,
         const char  *detail)
{
  g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED,
               "The lease state file %s is corrupt (%s); it was left untouched: "
               "move it aside to start with no leases",
               path, detail);
  return FALSE;
}

static gboolean
get_int_member (JsonObject *object,
                const char *member,
                gint64     *out_value)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;

  *out_value = json_node_get_int (node);
  return TRUE;
}

/* Returns the member's string (borrowed), or NULL if missing / not a string. */
static const char *
get_string_member (JsonObject *object,
                   const char *member)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;

  return json_node_get_string (node);
}

static gboolean
valid_owner_string (const char *str,
                    gsize       max_len)
{
  gsize len = strlen (str);

  return len > 0 && len <= max_len && g_utf8_validate (str, (gssize) len, NULL);
}

/* Parses the whole file before touching anything, so a corrupt file leaves
 * the registry empty rather than half loaded. */
/* One lease of the snapshot or of a journal line; NULL (and @error) when
 * anything is missing or invalid. */
static LeaseRecord *
parse_record (const char  *path,
              JsonNode    *node,
              guint        i,
              GError     **error)
{
  g_autoptr(LeaseRecord) record = g_new0 (LeaseRecord, 1);
  g_autofree char *detail = NULL;
  JsonObject *entry;
  JsonNode *session_node;
  const char *name;
  const char *owner;
  const char *state;
  gint64 port = 0;
  gint64 created = 0;
  gint64 socket_inode = 0;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      detail = g_strdup_printf ("lease %u is not an object", i);
      corrupt (error, path, detail);
      return NULL;
    }

  entry = json_node_get_object (node);
  name = get_string_member (entry, "name");
  owner = get_string_member (entry, "owner");
  state = get_string_member (entry, "state");
  session_node = json_object_get_member (entry, "session");

  /* The ports are checked against the valid range, not the pool: the
   * pool may have been reconfigured, but the owner still uses it. */
  if (!get_int_member (entry, "port", &port) || port < 1024 || port > G_MAXUINT16 ||
      !get_int_member (entry, "created", &created) ||
      name == NULL || !paddock_registry_validate_name (name, NULL) ||
      owner == NULL ||
      !valid_owner_string (owner, MAX_OWNER_LEN) ||
      state == NULL ||
      (g_strcmp0 (state, "held") != 0 && g_strcmp0 (state, "lost") != 0 &&
       g_strcmp0 (state, "in-use") != 0) ||
      /* absent in files written before leases remembered their socket */
      (json_object_has_member (entry, "socket_inode") &&
       (!get_int_member (entry, "socket_inode", &socket_inode) || socket_inode < 0)) ||
      session_node == NULL ||
      !(JSON_NODE_HOLDS_NULL (session_node) ||
        (JSON_NODE_HOLDS_VALUE (session_node) &&
         json_node_get_value_type (session_node) == G_TYPE_STRING &&
         valid_owner_string (json_node_get_string (session_node), MAX_SESSION_LEN))))
    {
      detail = g_strdup_printf ("lease %u has a missing or invalid member", i);
      corrupt (error, path, detail);
      return NULL;
    }

  record->port = (guint16) port;
  record->name = g_strdup (name);
  record->owner = g_strdup (owner);
  record->session = JSON_NODE_HOLDS_NULL (session_node)
                    ? NULL : g_strdup (json_node_get_string (session_node));
  record->created = created;
  record->socket_inode = (guint64) socket_inode;
  return g_steal_pointer (&record);
}

static GPtrArray *
parse_state (const char  *path,
             const char  *contents,
             gsize        length,
             char       **out_bus_id,
             GError     **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GPtrArray) records = NULL;
  g_autoptr(GHashTable) seen = g_hash_table_new (NULL, NULL);
  g_autoptr(GError) local_error = NULL;
  JsonNode *root;
  JsonObject *object;
  JsonNode *leases_node;
  JsonArray *leases;
  gint64 version = 0;

  records = g_ptr_array_new_with_free_func ((GDestroyNotify) lease_record_free);

  if (!json_parser_load_from_data (parser, contents, (gssize) length, &local_error))
    {
      corrupt (error, path, local_error->message);
      return NULL;
    }

  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      corrupt (error, path, "not a JSON object");
      return NULL;
    }

  object = json_node_get_object (root);
  if (json_object_has_member (object, "bus_id"))
    {
      const char *bus_id = get_string_member (object, "bus_id");

      if (bus_id == NULL)
        {
          corrupt (error, path, "\"bus_id\" is not a string");
          return NULL;
        }
      *out_bus_id = g_strdup (bus_id);
    }

  if (!get_int_member (object, "version", &version) || version != STATE_VERSION)
    {
      corrupt (error, path, "missing or unknown version");
      return NULL;
    }

  leases_node = json_object_get_member (object, "leases");
  if (leases_node == NULL || !JSON_NODE_HOLDS_ARRAY (leases_node))
    {
      corrupt (error, path, "\"leases\" is not an array");
      return NULL;
    }

  leases = json_node_get_array (leases_node);
  for (guint i = 0; i < json_array_get_length (leases); i++)
    {
      JsonNode *node = json_array_get_element (leases, i);
      LeaseRecord *record;

      record = parse_record (path, node, i, error);
      if (record == NULL)
        return NULL;

      if (!g_hash_table_add (seen, GINT_TO_POINTER ((int) record->port)))
        {
          g_autofree char *detail = g_strdup_printf ("port %u is leased twice", (guint) record->port);

          lease_record_free (record);
          corrupt (error, path, detail);
          return NULL;
        }

      g_ptr_array_add (records, record);
    }

  return g_steal_pointer (&records);
}

/* Applies the journal's changes to the snapshot's @records, in order. A
 * last line without its newline is a write the daemon did not finish
 * (killed mid-append): that change was never acknowledged, so it is
 * dropped. Anything else unreadable is corruption, reported as such. */
static gboolean
replay_journal (const char  *journal_file,
                GPtrArray   *records,
                GError     **error)
{
  g_autofree char *contents = NULL;
  g_autoptr(GError) local_error = NULL;
  g_auto(GStrv) lines = NULL;
  gsize length = 0;
  guint n_lines;

  if (!g_file_get_contents (journal_file, &contents, &length, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return TRUE;
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED,
                   "Could not read the lease journal: %s", local_error->message);
      return FALSE;
    }

  lines = g_strsplit (contents, "\n", -1);
  /* The element after the last newline is "" or the torn line: skip it. */
  n_lines = g_strv_length (lines);
  for (guint i = 0; i + 1 < n_lines; i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      JsonObject *object;
      const char *op;
      gint64 port = 0;
      guint index;

      if (!json_parser_load_from_data (parser, lines[i], -1, NULL) ||
          !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        return corrupt (error, journal_file, "a line is not a JSON object");

      object = json_node_get_object (json_parser_get_root (parser));
      op = get_string_member (object, "op");
      if (!get_int_member (object, "port", &port) || port < 1 || port > G_MAXUINT16)
        return corrupt (error, journal_file, "a change names no valid port");

      /* Find the port's record, if any (records are few; a scan is fine). */
      for (index = 0; index < records->len; index++)
        if (((LeaseRecord *) g_ptr_array_index (records, index))->port == port)
          break;

      if (g_strcmp0 (op, "remove") == 0)
        {
          if (index < records->len)
            g_ptr_array_remove_index (records, index);
        }
      else if (g_strcmp0 (op, "put") == 0)
        {
          LeaseRecord *record = parse_record (journal_file, json_parser_get_root (parser), i, error);

          if (record == NULL)
            return FALSE;
          if (index < records->len)
            g_ptr_array_remove_index (records, index);
          g_ptr_array_add (records, record);
        }
      else
        return corrupt (error, journal_file, "a change has an unknown op");
    }

  return TRUE;
}

/* Reads @state_file (if it exists) and binds every lease in it again; a
 * lease whose port was taken while we were not running comes back LOST:
 * it stays listed, is reported, and is never handed to anyone else until
 * its owner releases it. Remembers @state_file: from now on every change is
 * written there. A corrupt file is an error and stays untouched (the path
 * is not remembered, so it is not overwritten either). If only writing the
 * file back fails, the leases are loaded and the error is returned. */
gboolean
paddock_registry_load (PaddockRegistry  *self,
                       const char       *state_file,
                       GError          **error)
{
  g_autoptr(GPtrArray) records = NULL;
  g_autoptr(GHashTable) listening = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *stored_bus_id = NULL;
  gsize length = 0;
  guint added;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), FALSE);
  g_return_val_if_fail (state_file != NULL, FALSE);
  g_return_val_if_fail (self->state_file == NULL, FALSE);
  g_return_val_if_fail (self->leases->len == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!g_file_get_contents (state_file, &contents, &length, &local_error))
    {
      if (!g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        {
          g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED,
                       "Could not read the lease state: %s", local_error->message);
          return FALSE;
        }
    }
  else
    {
      records = parse_state (state_file, contents, length, &stored_bus_id, error);
      if (records == NULL)
        return FALSE;
    }

  self->journal_file = g_strconcat (state_file, ".journal", NULL);
  if (records == NULL)
    records = g_ptr_array_new_with_free_func ((GDestroyNotify) lease_record_free);
  if (!replay_journal (self->journal_file, records, error))
    {
      g_clear_pointer (&self->journal_file, g_free);
      return FALSE;
    }

  /* Leases of clients of another bus (the user logged out and in again):
   * their unique names now belong to other programs, or to nobody. Those
   * clients are gone; their leases go too. */
  if (self->bus_id != NULL && g_strcmp0 (stored_bus_id, self->bus_id) != 0)
    for (guint i = records->len; i > 0; i--)
      if (((LeaseRecord *) g_ptr_array_index (records, i - 1))->owner[0] == ':')
        g_ptr_array_remove_index (records, i - 1);

  listening = listening_sockets ();

  for (guint i = 0; i < records->len; i++)
    {
      LeaseRecord *record = g_ptr_array_index (records, i);
      g_autoptr(PaddockLease) lease = NULL;
      int fd4 = -1;
      int fd6 = -1;
      int saved_errno = 0;
      BindResult result;

      /* Any failure to bind again (taken by another program, or even
       * EMFILE) leaves the lease LOST rather than dropping it: the
       * owner is told, and the port is never handed out twice. */
      result = bind_port (record->port, &fd4, &fd6, &saved_errno);
      if (result != BIND_OK)
        fd4 = fd6 = -1;

      lease = _paddock_lease_new (record->port, record->name, record->owner,
                                  record->session, record->created, fd4, fd6);

      /* Unless the listener on the port is the very socket we handed
       * out (same inode): then the owner's program still has it and
       * the port is still the owner's. */
      if (result == BIND_IN_USE && record->socket_inode != 0 &&
          socket_still_listening (listening, record->port, record->socket_inode))
        {
          int guard = -1;
          int guard_errno = 0;

          if (bind_ipv6_guard (record->port, &guard, &guard_errno) != BIND_OK)
            guard = -1;
          _paddock_lease_set_in_use (lease, record->socket_inode, guard);
        }

      insert_lease (self, lease);
    }

  self->state_file = g_strdup (state_file);
  added = self->leases->len;

  if (added > 0)
    g_list_model_items_changed (G_LIST_MODEL (self), 0, 0, added);

  self->journal_fd = open (self->journal_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
                           0600);
  if (self->journal_fd < 0)
    {
      int saved_errno = errno;
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED,
                   "Could not open the lease journal %s: %s", self->journal_file,
                   g_strerror (saved_errno));
      return FALSE;
    }

  /* Write back at once (the snapshot now says which leases are lost) and
   * start an empty journal. */
  return compact (self, error);
}

/* Takes back every lease we do not hold (in use by its owner's program
 * since a restart, or lost to another program) whose port is free again.
 * Returns how many were taken back; @out_unheld (optional) is how many
 * still are not held, so the caller knows whether to keep trying. */
guint
paddock_registry_reclaim (PaddockRegistry  *self,
                          guint            *out_unheld,
                          GError          **error)
{
  g_autoptr(GString) lines = g_string_new (NULL);
  g_autoptr(GHashTable) listening = NULL;
  guint reclaimed = 0;
  guint changed = 0;
  guint unheld = 0;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), 0);

  listening = listening_sockets ();

  for (guint i = 0; i < self->leases->len; i++)
    {
      PaddockLease *lease = g_ptr_array_index (self->leases, i);
      int fd4 = -1;
      int fd6 = -1;
      int saved_errno = 0;

      if (paddock_lease_get_state (lease) == PADDOCK_LEASE_STATE_HELD)
        continue;

      /* An in-use lease keeps its [::1] guard while its owner's socket
       * lives; let go of it first or our own guard blocks the re-bind. */
      if (paddock_lease_get_state (lease) == PADDOCK_LEASE_STATE_IN_USE &&
          socket_still_listening (listening, paddock_lease_get_port (lease),
                                  paddock_lease_get_socket_inode (lease)))
        {
          unheld++;
          continue;
        }

      _paddock_lease_close_sockets (lease);
      if (bind_port (paddock_lease_get_port (lease), &fd4, &fd6, &saved_errno) != BIND_OK)
        {
          /* The owner's socket closed and another program was quicker. */
          if (paddock_lease_get_state (lease) == PADDOCK_LEASE_STATE_IN_USE)
            {
              _paddock_lease_set_lost (lease);
              journal_add_put (lines, lease);
              changed++;
              g_list_model_items_changed (G_LIST_MODEL (self), i, 1, 1);
            }
          unheld++;
          continue;
        }

      _paddock_lease_take_sockets (lease, fd4, fd6);
      journal_add_put (lines, lease);
      reclaimed++;
      g_list_model_items_changed (G_LIST_MODEL (self), i, 1, 1);
    }

  if (out_unheld != NULL)
    *out_unheld = unheld;

  if (reclaimed + changed > 0)
    journal_write (self, lines->str, reclaimed + changed, error);

  return reclaimed;
}

/* The id of the message bus whose unique names own client leases
 * (org.freedesktop.DBus.GetId); set before paddock_registry_load(). */
void
paddock_registry_set_bus_id (PaddockRegistry *self,
                             const char      *bus_id)
{
  g_return_if_fail (PADDOCK_IS_REGISTRY (self));
  g_return_if_fail (self->state_file == NULL);

  g_free (self->bus_id);
  self->bus_id = g_strdup (bus_id);
}

gboolean
paddock_registry_validate_name (const char  *name,
                                GError     **error)
{
  gsize len;

  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  len = name != NULL ? strlen (name) : 0;
  if (len == 0 || len > PADDOCK_REGISTRY_MAX_NAME_LEN)
    goto invalid;

  /* An ASCII whitelist: names end up in D-Bus messages, JSON, LISTEN_FDNAMES
   * and terminal output, where anything else needs escaping. Non-UTF-8
   * bytes fail here too. */
  for (gsize i = 0; i < len; i++)
    {
      char c = name[i];

      if (!g_ascii_isalnum (c) && c != '.' && c != '_' && c != '-')
        goto invalid;
    }

  return TRUE;

invalid:
  /* The name itself is not echoed: it may not even be valid UTF-8. */
  g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT,
               "A lease name must be 1–%d characters from A–Z, a–z, 0–9, '.', '_' and '-'",
               PADDOCK_REGISTRY_MAX_NAME_LEN);
  return FALSE;
}

static gboolean
is_session_owner (const char *owner)
{
  return g_str_has_prefix (owner, SESSION_OWNER_PREFIX);
}

/* paddock_registry_lease() up to the lease in the list: not saved, not
 * announced yet. Returns a new reference. */
static PaddockLease *
lease_unsaved (PaddockRegistry  *self,
               const char       *owner,
               const char       *session,
               const char       *name,
               guint16           preferred_port,
               GError          **error)
{
  g_autoptr(PaddockLease) lease = NULL;
  g_autofree char *session_owner = NULL;
  guint16 port = 0;
  guint index = 0;
  int fd4 = -1;
  int fd6 = -1;
  int saved_errno = 0;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (owner != NULL || session != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!paddock_registry_validate_name (name, error))
    return NULL;

  if (preferred_port != 0 &&
      (preferred_port < self->first_port || preferred_port > self->last_port))
    {
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT,
                   "Port %u is outside the pool %u–%u",
                   preferred_port, self->first_port, self->last_port);
      return NULL;
    }

  if (session != NULL)
    {
      if (!valid_owner_string (session, MAX_SESSION_LEN))
        {
          g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT,
                       "A session id must be 1–%d bytes of UTF-8", MAX_SESSION_LEN);
          return NULL;
        }
      session_owner = g_strconcat (SESSION_OWNER_PREFIX, session, NULL);
      owner = session_owner;
    }
  else if (!valid_owner_string (owner, MAX_OWNER_LEN) || is_session_owner (owner))
    {
      /* A client owner that looked like "session:…" could have its leases
       * released by anyone, and released with that session. */
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT,
                   "An owner must be 1–%d bytes of UTF-8 not starting with \"%s\"",
                   MAX_OWNER_LEN, SESSION_OWNER_PREFIX);
      return NULL;
    }

  if (owner_count (self, owner) >= self->max_per_owner)
    {
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_QUOTA_EXCEEDED,
                   "Too many leases for this owner (the limit per owner is %u)",
                   self->max_per_owner);
      return NULL;
    }

  if (self->leases->len >= self->max_leases)
    {
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_QUOTA_EXCEEDED,
                   "Too many leases in total (the limit is %u)", self->max_leases);
      return NULL;
    }

  if (preferred_port != 0)
    {
      BindResult result;

      /* Held or lost, a port we have a record of is never handed out. */
      if (find_port (self, preferred_port, &index))
        {
          g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_PORT_IN_USE,
                       "Port %u is already leased", preferred_port);
          return NULL;
        }

      result = bind_port (preferred_port, &fd4, &fd6, &saved_errno);
      switch (result)
        {
        case BIND_OK:
          break;
        case BIND_IN_USE:
          g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_PORT_IN_USE,
                       "Port %u is used by another program", preferred_port);
          return NULL;
        case BIND_FAILED:
        default:
          g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED,
                       "Could not bind port %u: %s", preferred_port, g_strerror (saved_errno));
          return NULL;
        }

      port = preferred_port;
    }
  else
    {
      guint pool_size = (guint) self->last_port - self->first_port + 1;
      guint start = (guint) self->cursor - self->first_port;

      for (guint i = 0; i < pool_size && port == 0; i++)
        {
          guint16 candidate = (guint16) (self->first_port + (start + i) % pool_size);

          if (find_port (self, candidate, &index))
            continue;

          switch (bind_port (candidate, &fd4, &fd6, &saved_errno))
            {
            case BIND_OK:
              port = candidate;
              break;
            case BIND_IN_USE:
              /* Another program uses it: not ours to hand out. */
              break;
            case BIND_FAILED:
            default:
              g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED,
                           "Could not bind port %u: %s", candidate, g_strerror (saved_errno));
              return NULL;
            }
        }

      if (port == 0)
        {
          g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_PORT_EXHAUSTED,
                       "No free port left in the pool %u–%u "
                       "(%u leased here, the rest used by other programs)",
                       self->first_port, self->last_port, self->leases->len);
          return NULL;
        }

      self->cursor = port == self->last_port ? self->first_port : (guint16) (port + 1);
    }

  lease = _paddock_lease_new (port, name, owner, session, g_get_real_time (), fd4, fd6);
  insert_lease (self, lease);

  return g_steal_pointer (&lease);
}

/* Takes @lease out of the list, without announcing or closing it. */
static void
undo_listing (PaddockRegistry *self,
              PaddockLease    *lease)
{
  guint index = 0;

  if (find_port (self, paddock_lease_get_port (lease), &index) &&
      g_ptr_array_index (self->leases, index) == lease)
    g_object_unref (steal_lease (self, index));
}

/* Takes @lease (in the list, not announced) out again and closes it. */
static void
undo_unsaved (PaddockRegistry *self,
              PaddockLease    *lease)
{
  undo_listing (self, lease);
  _paddock_lease_close_sockets (lease);
}

/* Leases a port for @owner (a D-Bus unique name) or, when @session is not
 * NULL, for that session (the owner is then "session:<session>" and @owner
 * is ignored, since a session lease outlives the client that asked for
 * it). With @preferred_port 0 any free port of the pool is taken. Returns
 * a new reference; the lease's fd is the bound, listening socket. */
PaddockLease *
paddock_registry_lease (PaddockRegistry  *self,
                        const char       *owner,
                        const char       *session,
                        const char       *name,
                        guint16           preferred_port,
                        GError          **error)
{
  g_autoptr(PaddockLease) lease = NULL;
  guint index = 0;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (owner != NULL || session != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  lease = lease_unsaved (self, owner, session, name, preferred_port, error);
  if (lease == NULL)
    return NULL;

  /* Persist before anyone sees the lease: if the state cannot be saved the
   * lease is undone (its sockets close with it), so the file and the
   * model never disagree. */
  if (!journal_put (self, lease, error))
    {
      /* journal_write() cut its line off again or marked the journal
       * dirty; either way no restart brings this lease back. */
      undo_unsaved (self, lease);
      return NULL;
    }

  find_port (self, paddock_lease_get_port (lease), &index);
  g_list_model_items_changed (G_LIST_MODEL (self), index, 0, 1);

  return g_steal_pointer (&lease);
}

/* @n leases of any free ports of the pool for @session, all named @name,
 * saved with one durable write (a session reserving ports at create waits
 * for one fdatasync, not @n). All or nothing: on an error no lease is
 * left. Returns the leases, in the order taken. */
GPtrArray *
paddock_registry_lease_several (PaddockRegistry  *self,
                                const char       *session,
                                const char       *name,
                                guint             n,
                                GError          **error)
{
  g_autoptr(GPtrArray) leases = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GString) lines = g_string_new (NULL);

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (session != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  for (guint i = 0; i < n; i++)
    {
      PaddockLease *lease = lease_unsaved (self, NULL, session, name, 0, error);

      if (lease == NULL)
        break;
      g_ptr_array_add (leases, lease);
      journal_add_put (lines, lease);
    }
  if (leases->len < n || (n > 0 && !journal_write (self, lines->str, n, error)))
    {
      for (guint i = 0; i < leases->len; i++)
        undo_unsaved (self, g_ptr_array_index (leases, i));
      return NULL;
    }

  /* Announced one by one, each where it is, so that a listener mirroring
   * the list sees it grow one lease at a time. */
  for (guint i = 0; i < leases->len; i++)
    undo_listing (self, g_ptr_array_index (leases, i));
  for (guint i = 0; i < leases->len; i++)
    g_list_model_items_changed (G_LIST_MODEL (self), insert_lease (self, g_ptr_array_index (leases, i)), 0, 1);

  return g_steal_pointer (&leases);
}

/* Releases the lease on @port. @requester is the D-Bus unique name of the
 * client asking, or NULL for the daemon itself (session teardown), which is
 * always allowed. A client may release its own leases and session leases
 * (any client may work on a session); not another client's. If the new
 * state cannot be saved, nothing is released and an error is returned. */
gboolean
paddock_registry_release (PaddockRegistry  *self,
                          guint16           port,
                          const char       *requester,
                          GError          **error)
{
  g_autoptr(PaddockLease) lease = NULL;
  PaddockLease *found;
  guint index = 0;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!find_port (self, port, &index))
    {
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_NOT_FOUND,
                   "Port %u is not leased", port);
      return FALSE;
    }

  found = g_ptr_array_index (self->leases, index);
  if (requester != NULL &&
      !is_session_owner (paddock_lease_get_owner (found)) &&
      g_strcmp0 (requester, paddock_lease_get_owner (found)) != 0)
    {
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_ACCESS_DENIED,
                   "Port %u is leased by another client", port);
      return FALSE;
    }

  lease = steal_lease (self, index);
  if (!journal_remove (self, port, error))
    {
      /* Put it back where it was: still held, still listed. */
      insert_lease (self, lease);
      return FALSE;
    }

  _paddock_lease_close_sockets (lease);
  g_list_model_items_changed (G_LIST_MODEL (self), index, 1, 0);

  return TRUE;
}

/* Gives the lease on @port a new name, kept across restarts: the port,
 * its sockets and its owner stay as they are (a session names a port it
 * reserved at create, see Session1.LeasePort). Only the daemon calls this.
 * If the new name cannot be saved, the lease keeps its old one. */
gboolean
paddock_registry_rename (PaddockRegistry  *self,
                         guint16           port,
                         const char       *name,
                         GError          **error)
{
  g_autofree char *old_name = NULL;
  PaddockLease *lease;
  guint index = 0;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!paddock_registry_validate_name (name, error))
    return FALSE;
  if (!find_port (self, port, &index))
    {
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_NOT_FOUND,
                   "Port %u is not leased", port);
      return FALSE;
    }

  lease = g_ptr_array_index (self->leases, index);
  old_name = g_strdup (paddock_lease_get_name (lease));
  _paddock_lease_set_name (lease, name);
  /* A put of the same port replaces its record at replay. */
  if (!journal_put (self, lease, error))
    {
      _paddock_lease_set_name (lease, old_name);
      return FALSE;
    }

  g_list_model_items_changed (G_LIST_MODEL (self), index, 1, 1);
  return TRUE;
}

/* Releases every lease of @owner (a client that left the bus, or
 * "session:<id>" for a destroyed session) and returns how many. This is
 * teardown and cannot be refused: if the journal cannot be written, the
 * leases are released anyway and the journal is marked dirty, so the next
 * change rewrites the whole snapshot (until then a restart would re-bind
 * them under a dead owner, whose absence the daemon then notices). The
 * error is only logged: the caller is a disconnect handler with nobody to
 * tell. */
guint
paddock_registry_release_owner (PaddockRegistry *self,
                                const char      *owner)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GString) lines = g_string_new (NULL);
  guint released = 0;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), 0);
  g_return_val_if_fail (owner != NULL, 0);

  if (owner_count (self, owner) == 0)
    return 0;

  /* Back to front, so each items-changed position is still valid for a
   * listener that applies them one by one. */
  for (guint i = self->leases->len; i > 0; i--)
    {
      PaddockLease *lease = g_ptr_array_index (self->leases, i - 1);

      if (g_strcmp0 (paddock_lease_get_owner (lease), owner) == 0)
        {
          g_autoptr(PaddockLease) stolen = steal_lease (self, i - 1);

          journal_add_remove (lines, paddock_lease_get_port (stolen));
          _paddock_lease_close_sockets (stolen);
          g_list_model_items_changed (G_LIST_MODEL (self), i - 1, 1, 0);
          released++;
        }
    }

  if (released > 0 && !journal_write (self, lines->str, released, &local_error))
    g_debug ("Releasing the leases of %s: %s", owner, local_error->message);

  return released;
}

/* Returns the lease on @port (borrowed), or NULL. */
PaddockLease *
paddock_registry_lookup (PaddockRegistry *self,
                         guint16          port)
{
  guint index = 0;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), NULL);

  if (!find_port (self, port, &index))
    return NULL;

  return g_ptr_array_index (self->leases, index);
}

static int
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return g_strcmp0 (*(const char * const *) a, *(const char * const *) b);
}

/* Returns the distinct owners, sorted, as a new GStrv: after a restart the
 * daemon checks which client owners are still on the bus. */
GStrv
paddock_registry_dup_owners (PaddockRegistry *self)
{
  g_autofree const char **keys = NULL;
  guint n_keys = 0;
  GStrv owners;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), NULL);

  keys = (const char **) g_hash_table_get_keys_as_array (self->owner_counts, &n_keys);
  qsort (keys, n_keys, sizeof (char *), compare_strings);

  owners = g_new0 (char *, n_keys + 1);
  for (guint i = 0; i < n_keys; i++)
    owners[i] = g_strdup (keys[i]);

  return owners;
}
