/* paddock-port-bind.c — taking a loopback port for a lease: 127.0.0.1 listening, [::1] guarded
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * (Split from paddock-registry.c.)
 *
 * This is the security-relevant part: a lease must make sure that nobody
 * else on this machine, whatever socket options they use, can listen on
 * the port between the lease and its use, and that clients reaching
 * "localhost:port" end up at whoever we hand the socket to.
 */

#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-port-bind.h"

#define LISTEN_BACKLOG SOMAXCONN

static PaddockBindResult
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
  return PADDOCK_BIND_OK;

failed:
  *out_errno = errno;
  return errno == EADDRINUSE ? PADDOCK_BIND_IN_USE : PADDOCK_BIND_FAILED;
}

/* Returns PADDOCK_BIND_OK with *out_fd == -1 when the host has no IPv6 loopback. */
PaddockBindResult
_paddock_port_bind_ipv6_guard (guint16   port,
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
        return PADDOCK_BIND_OK;
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
        return PADDOCK_BIND_OK;
      goto failed;
    }

  *out_fd = paddock_steal_fd (&fd);
  return PADDOCK_BIND_OK;

failed:
  *out_errno = errno;
  return errno == EADDRINUSE ? PADDOCK_BIND_IN_USE : PADDOCK_BIND_FAILED;
}

/* Takes @port for us: both sockets, or nothing. IPv4 first, so a port that
 * another program listens on is rejected before we touch [::1]. */
PaddockBindResult
_paddock_port_bind (guint16   port,
           int      *out_fd4,
           int      *out_fd6,
           int      *out_errno)
{
  paddock_autofd int fd4 = -1;
  paddock_autofd int fd6 = -1;
  PaddockBindResult result;

  result = bind_ipv4 (port, &fd4, out_errno);
  if (result != PADDOCK_BIND_OK)
    return result;

  result = _paddock_port_bind_ipv6_guard (port, &fd6, out_errno);
  if (result != PADDOCK_BIND_OK)
    return result;

  *out_fd4 = paddock_steal_fd (&fd4);
  *out_fd6 = paddock_steal_fd (&fd6);
  return PADDOCK_BIND_OK;
}
