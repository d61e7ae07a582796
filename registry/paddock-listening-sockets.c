/* paddock-listening-sockets.c — which listening TCP sockets exist, by inode (the registry's compat point)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * (Split from paddock-registry.c.) A lease whose port is found in use
 * after a restart is still its owner's when the listener is the very
 * socket we handed out; only the kernel can say which sockets listen.
 * Linux answers through sock_diag (netlink). Elsewhere, or when built
 * with PADDOCK_COMPAT_PORTABLE (the tests build it so, to check the
 * fallback), the answer is "unknown": _paddock_listening_sockets() returns
 * NULL and _paddock_socket_still_listening() says TRUE, so a port is never
 * taken from a program that may still hold it. The fallback is the
 * conservative side of the same rule, not a weaker one: a lease may stay
 * "in use" longer, never be handed to two programs.
 */

#include "config.h"

#if defined(__linux__) && !defined(PADDOCK_COMPAT_PORTABLE)
#define PADDOCK_LISTENING_SOCK_DIAG 1
#else
#define PADDOCK_LISTENING_SOCK_DIAG 0
#endif

#include <errno.h>
#include <string.h>

#if PADDOCK_LISTENING_SOCK_DIAG
#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#endif

#include "paddock-autofd.h"
#include "paddock-listening-sockets.h"

#if PADDOCK_LISTENING_SOCK_DIAG
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
#endif

/* The inodes of every listening IPv4 TCP socket in this network namespace
 * (our own, where the daemon runs), mapped to their ports: one dump per
 * pass, however many leases are checked against it. IPv4 only: the inode a
 * lease keeps is that of its 127.0.0.1 socket (the [::1] guard never
 * listens), which the AF_INET6 table cannot hold. Inodes of live sockets
 * are unique, and we only ever handed a lease's socket to the lease's
 * owner. NULL where the kernel would not say: see _paddock_socket_still_listening(). */
GHashTable *
_paddock_listening_sockets (void)
{
  /* Reclaim asks again every second while a lease is not held, and a
   * kernel that cannot answer now will not later: say it once. */
  static gboolean warned = FALSE;
  g_autoptr(GHashTable) inodes = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);

#if PADDOCK_LISTENING_SOCK_DIAG
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
#else
  /* No sock_diag: no socket's inode can be asked of the kernel, so whether
   * a leased port's listener is still the owner's is unknown, and unknown
   * keeps the port the owner's (never handed to someone else). Expected on
   * such a system, so a message rather than a warning. */
  if (!warned)
    g_message ("This system cannot list listening sockets by inode (no sock_diag); a leased port "
               "found in use is taken to be still its owner's");
  warned = TRUE;
  return NULL;
#endif

  return g_steal_pointer (&inodes);
}

gboolean
_paddock_socket_still_listening (GHashTable *listening,
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
