/* bench-floor-relay.c — the floor under the proxy: the least a one-thread relay must do
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Issue #23 asks for the proxy within 1.5x of direct loopback with 64
 * clients on a 2-core machine. Every proxied request costs two loopback
 * connections' worth of kernel work (client to proxy, proxy to origin)
 * where the direct one costs one, and the proxy serves them from one
 * thread. To tell the proxy's own cost from that, this is the same hop
 * done by the least code that can do it: one epoll thread, accept, read
 * the head up to its blank line, send the origin-form request on a kept
 * origin connection (or a new one), read the response by its
 * Content-Length, write it back and close the client. No policy, no
 * parser, no journal, no timeouts, no limits: not a proxy, a floor.
 */

#include "config.h"

#include "bench-floor-relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench-common.h"

#define MAX_IDLE 512

typedef struct Relay Relay;
typedef struct
{
  Relay    *relay;
  gboolean  origin;
} Side;

struct Relay
{
  int    client;
  int    origin;
  Side   client_side;
  Side   origin_side;
  gsize  have;
  char   buffer[4096];
};

static int relay_listen_fd = -1;
static int relay_stop_fd = -1;
static guint16 relay_origin_port;
static char *relay_request;
static GThread *relay_thread;
static int idle[MAX_IDLE];
static guint n_idle;

static int
origin_connect (void)
{
  struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons (relay_origin_port),
                              .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int fd;
  int one = 1;

  if (n_idle > 0)
    return idle[--n_idle];
  fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect (fd, (struct sockaddr *) &addr, sizeof addr) != 0)
    g_error ("floor relay: connect: %s", g_strerror (errno));
  setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

static void
relay_free (Relay *r,
            int    epfd,
            gboolean keep_origin)
{
  if (r->origin >= 0)
    {
      epoll_ctl (epfd, EPOLL_CTL_DEL, r->origin, NULL);
      if (keep_origin && n_idle < MAX_IDLE)
        idle[n_idle++] = r->origin;
      else
        close (r->origin);
    }
  close (r->client);
  g_free (r);
}

/* TRUE once @r->buffer holds a whole response (head + Content-Length). */
static gboolean
response_complete (Relay *r)
{
  const char *end = g_strstr_len (r->buffer, (gssize) r->have, "\r\n\r\n");
  const char *length = g_strstr_len (r->buffer, (gssize) r->have, "Content-Length: ");

  return end != NULL && length != NULL && length < end &&
         r->have >= (gsize) (end + 4 - r->buffer) + g_ascii_strtoull (length + 16, NULL, 10);
}

static void
side_ready (Side *side,
            int   epfd)
{
  Relay *r = side->relay;
  int fd = side->origin ? r->origin : r->client;

  for (;;)
    {
      ssize_t n = read (fd, r->buffer + r->have, sizeof r->buffer - 1 - r->have);

      if (n < 0 && errno == EAGAIN)
        return;
      if (n <= 0 || r->have + (gsize) n >= sizeof r->buffer - 1)
        {
          relay_free (r, epfd, FALSE);
          return;
        }
      r->have += (gsize) n;
      r->buffer[r->have] = '\0';

      if (!side->origin && strstr (r->buffer, "\r\n\r\n") != NULL)
        {
          struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &r->origin_side };
          gsize len = strlen (relay_request);

          r->have = 0;
          r->origin = origin_connect ();
          if (write (r->origin, relay_request, len) != (ssize_t) len ||
              fcntl (r->origin, F_SETFL, O_NONBLOCK) != 0 ||
              epoll_ctl (epfd, EPOLL_CTL_ADD, r->origin, &ev) != 0)
            g_error ("floor relay: origin: %s", g_strerror (errno));
          return;
        }
      if (side->origin && response_complete (r))
        {
          if (write (r->client, r->buffer, r->have) != (ssize_t) r->have)
            g_error ("floor relay: client write: %s", g_strerror (errno));
          relay_free (r, epfd, TRUE);
          return;
        }
    }
}

static gpointer
relay_main (gpointer data)
{
  int epfd = epoll_create1 (EPOLL_CLOEXEC);
  struct epoll_event lev = { .events = EPOLLIN, .data.ptr = &relay_listen_fd };
  struct epoll_event sev = { .events = EPOLLIN, .data.ptr = &relay_stop_fd };

  if (epfd < 0 || epoll_ctl (epfd, EPOLL_CTL_ADD, relay_listen_fd, &lev) != 0 ||
      epoll_ctl (epfd, EPOLL_CTL_ADD, relay_stop_fd, &sev) != 0)
    g_error ("floor relay: epoll: %s", g_strerror (errno));

  for (;;)
    {
      struct epoll_event events[64];
      int n = epoll_wait (epfd, events, G_N_ELEMENTS (events), -1);

      for (int e = 0; e < n; e++)
        {
          int client;

          if (events[e].data.ptr == &relay_stop_fd)
            {
              while (n_idle > 0)
                close (idle[--n_idle]);
              close (epfd);
              return NULL;
            }
          if (events[e].data.ptr != &relay_listen_fd)
            {
              side_ready (events[e].data.ptr, epfd);
              continue;
            }
          while ((client = accept4 (relay_listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
            {
              Relay *r = g_new0 (Relay, 1);
              struct epoll_event cev = { .events = EPOLLIN, .data.ptr = &r->client_side };
              int one = 1;

              r->client = client;
              r->origin = -1;
              r->client_side = (Side) { r, FALSE };
              r->origin_side = (Side) { r, TRUE };
              setsockopt (client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
              epoll_ctl (epfd, EPOLL_CTL_ADD, client, &cev);
            }
        }
    }
}

/* Starts the relay in front of 127.0.0.1:@origin_port, sending it
 * @origin_request for each request; returns the port to connect to. */
guint16
bench_floor_relay_start (guint16     origin_port,
                         const char *origin_request)
{
  guint16 port = 0;

  relay_origin_port = origin_port;
  relay_request = g_strdup (origin_request);
  relay_listen_fd = bench_listen_loopback (512, &port);
  relay_stop_fd = eventfd (0, EFD_CLOEXEC);
  if (relay_stop_fd < 0 || fcntl (relay_listen_fd, F_SETFL, O_NONBLOCK) != 0)
    g_error ("floor relay: %s", g_strerror (errno));
  relay_thread = g_thread_new ("floor-relay", relay_main, NULL);
  return port;
}

void
bench_floor_relay_stop (void)
{
  guint64 one = 1;

  if (write (relay_stop_fd, &one, sizeof one) != sizeof one)
    g_error ("floor relay: stop: %s", g_strerror (errno));
  g_thread_join (relay_thread);
  close (relay_listen_fd);
  close (relay_stop_fd);
  g_clear_pointer (&relay_request, g_free);
}
