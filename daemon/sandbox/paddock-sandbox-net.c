/* paddock-sandbox-net.c — the session's own network: loopback up, large packets
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * --net none and proxy: what pid 1 does to the network namespace of its
 * own before any program of the session runs.
 */

#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "paddock-sandbox-private.h"

/* Attributes of linux/if_link.h that Debian 12's headers (6.1) predate:
 * the IPv4 packet sizes of BIG TCP (Linux 6.3). A kernel without them
 * ignores them. */
#define PADDOCK_IFLA_GSO_IPV4_MAX_SIZE 63
#define PADDOCK_IFLA_GRO_IPV4_MAX_SIZE 64
/* GSO_MAX_SIZE of Linux ≥ 6.2 (8 × 65,535), the largest packet TCP builds
 * when the device allows it; loopback's tso_max_size. */
#define LOOPBACK_LARGE_PACKET_SIZE 524280u

static void
netlink_add_u32 (struct nlmsghdr *message,
                 unsigned short   type,
                 guint32          value)
{
  struct rtattr *attr = (struct rtattr *) ((char *) message + NLMSG_ALIGN (message->nlmsg_len));

  attr->rta_type = type;
  attr->rta_len = RTA_LENGTH (sizeof value);
  memcpy (RTA_DATA (attr), &value, sizeof value);
  message->nlmsg_len = NLMSG_ALIGN (message->nlmsg_len) + RTA_ALIGN (attr->rta_len);
}

/* Lets TCP on the session's own loopback send packets of up to 512 KiB
 * instead of 64 KiB (BIG TCP, IPv4 and IPv6). Loopback's cost is per
 * packet, not per byte (no copy, no checksum), so a stream costs about
 * half the CPU: a forwarded port's inside connection, the leg the daemon
 * adds to every leased port, doubles its throughput on a 2-core machine
 * (BENCHMARKS.md, "Forwarded port throughput"). The host's loopback is not
 * ours to change. Only a speed: a kernel that refuses (older than 6.2:
 * EINVAL) leaves 64 KiB packets, so the answer is not read. Called between
 * clone() and exec: socket(), sendto() and close() only. */
static void
loopback_allow_large_packets (int ifindex)
{
  union {
    struct nlmsghdr header;
    char            bytes[NLMSG_SPACE (sizeof (struct ifinfomsg)) + 4 * RTA_SPACE (sizeof (guint32))];
  } request;
  struct ifinfomsg *info;
  struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
  int sock = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

  if (sock < 0)
    return;
  memset (&request, 0, sizeof request);
  request.header.nlmsg_len = NLMSG_LENGTH (sizeof (struct ifinfomsg));
  request.header.nlmsg_type = RTM_NEWLINK;
  request.header.nlmsg_flags = NLM_F_REQUEST;
  info = NLMSG_DATA (&request.header);
  info->ifi_family = AF_UNSPEC;
  info->ifi_index = ifindex;
  netlink_add_u32 (&request.header, IFLA_GSO_MAX_SIZE, LOOPBACK_LARGE_PACKET_SIZE);
  netlink_add_u32 (&request.header, IFLA_GRO_MAX_SIZE, LOOPBACK_LARGE_PACKET_SIZE);
  netlink_add_u32 (&request.header, PADDOCK_IFLA_GSO_IPV4_MAX_SIZE, LOOPBACK_LARGE_PACKET_SIZE);
  netlink_add_u32 (&request.header, PADDOCK_IFLA_GRO_IPV4_MAX_SIZE, LOOPBACK_LARGE_PACKET_SIZE);
  /* Without NLM_F_ACK, the kernel answers only an error, which stays
   * unread in a socket closed at once. rtnetlink handles the request
   * within sendto(), so it is in force when this returns. */
  (void) sendto (sock, &request, request.header.nlmsg_len, 0,
                 (struct sockaddr *) &kernel, sizeof kernel);
  close (sock);
}

/* --net none: the new network namespace has only a loopback device, and
 * it starts down. Up, it is the session's own 127.0.0.1: nothing of the
 * host's network, its loopback included, is reachable from here. Pid 1,
 * between clone and exec. */
void
net_bring_up_loopback (void)
{
  struct ifreq ifr;
  int sock = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

  memset (&ifr, 0, sizeof ifr);
  memcpy (ifr.ifr_name, "lo", 3);
  if (sock < 0 || ioctl (sock, SIOCGIFFLAGS, &ifr) != 0)
    die_errno (EXIT_SETUP, "cannot read the loopback device's flags", NULL, errno);
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl (sock, SIOCSIFFLAGS, &ifr) != 0)
    die_errno (EXIT_SETUP, "cannot bring the loopback device up", NULL, errno);
  if (ioctl (sock, SIOCGIFINDEX, &ifr) == 0)
    loopback_allow_large_packets (ifr.ifr_ifindex);
  close (sock);
}

/* --net proxy: the session's one way out is a socket on its own loopback
 * that the daemon serves from outside, kept in CFG's SandboxFound until
 * run_init() sends it. Made before any program of the session runs, so
 * none of them can take the port. */
void
net_listen_for_proxy (const SandboxConfig *cfg)
{
  struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons (cfg->proxy_port),
                              .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int one = 1;

  cfg->found->proxy_listen_fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (cfg->found->proxy_listen_fd < 0)
    die_errno (EXIT_SETUP, "cannot make the proxy's socket", NULL, errno);
  setsockopt (cfg->found->proxy_listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind (cfg->found->proxy_listen_fd, (struct sockaddr *) &addr, sizeof addr) != 0 ||
      listen (cfg->found->proxy_listen_fd, 128) != 0)
    die_errno (EXIT_SETUP, "cannot listen on the session's 127.0.0.1 for the proxy", NULL, errno);
}
