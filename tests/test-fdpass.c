/* test-fdpass.c — the one fd-passing helper (daemon/base/paddock-fdpass.c):
 * what is sent arrives whole and close-on-exec, and a message cut short
 * is refused with every descriptor it brought closed, never half-read.
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "paddock-fdpass.h"

static void
socket_pair (int type,
             int pair[2])
{
  g_assert_cmpint (socketpair (AF_UNIX, type | SOCK_CLOEXEC, 0, pair), ==, 0);
}

/* A pipe whose write end is to be sent: once every copy of that end is
 * closed, the read end reads EOF (0), while one copy left open anywhere
 * (a leaked received fd) makes it EAGAIN. */
typedef struct {
  int read_end;
  int write_end;
} Probe;

static Probe
probe_new (void)
{
  int p[2];

  g_assert_cmpint (pipe2 (p, O_CLOEXEC | O_NONBLOCK), ==, 0);
  return (Probe) { p[0], p[1] };
}

/* TRUE when no copy of PROBE's write end is open any more. */
static gboolean
probe_all_closed (Probe *probe)
{
  char c;
  ssize_t n = read (probe->read_end, &c, 1);

  g_assert_true (n == 0 || (n < 0 && errno == EAGAIN));
  return n == 0;
}

static void
probe_clear (Probe *probe)
{
  close (probe->read_end);
  if (probe->write_end >= 0)
    close (probe->write_end);
}

static void
test_round_trip (void)
{
  int pair[2];
  Probe probes[3] = { probe_new (), probe_new (), probe_new () };
  int send_fds[3] = { probes[0].write_end, probes[1].write_end, probes[2].write_end };
  int got[4] = { -1, -1, -1, -1 };
  size_t n_got = 99;
  char buf[64];
  ssize_t n;

  socket_pair (SOCK_SEQPACKET, pair);
  g_assert_cmpint (paddock_fdpass_send (pair[0], "hello", 5, send_fds, 3, MSG_DONTWAIT), ==, 5);
  n = paddock_fdpass_recv (pair[1], buf, sizeof buf, got, G_N_ELEMENTS (got), &n_got, MSG_DONTWAIT);
  g_assert_cmpint (n, ==, 5);
  g_assert_cmpmem (buf, 5, "hello", 5);
  g_assert_cmpuint (n_got, ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      /* The same pipe, as a new descriptor, close-on-exec. */
      g_assert_cmpint (got[i], >=, 0);
      g_assert_cmpint (fcntl (got[i], F_GETFD), ==, FD_CLOEXEC);
      g_assert_cmpint (write (got[i], "x", 1), ==, 1);
      {
        char c = 0;
        g_assert_cmpint (read (probes[i].read_end, &c, 1), ==, 1);
        g_assert_cmpint (c, ==, 'x');
      }
      close (got[i]);
      close (probes[i].write_end);
      probes[i].write_end = -1;
      g_assert_true (probe_all_closed (&probes[i]));
      probe_clear (&probes[i]);
    }

  /* Data alone, and descriptors alone (an empty record). */
  g_assert_cmpint (paddock_fdpass_send (pair[0], "ab", 2, NULL, 0, 0), ==, 2);
  g_assert_cmpint (paddock_fdpass_recv (pair[1], buf, sizeof buf, got, 4, &n_got, MSG_DONTWAIT), ==, 2);
  g_assert_cmpuint (n_got, ==, 0);
  g_assert_cmpint (paddock_fdpass_send (pair[0], NULL, 0, &pair[0], 1, 0), ==, 0);
  g_assert_cmpint (paddock_fdpass_recv (pair[1], buf, sizeof buf, got, 4, &n_got, MSG_DONTWAIT), ==, 0);
  g_assert_cmpuint (n_got, ==, 1);
  close (got[0]);

  /* The peer's end: end of stream, nothing received. */
  close (pair[0]);
  g_assert_cmpint (paddock_fdpass_recv (pair[1], buf, sizeof buf, got, 4, &n_got, 0), ==, 0);
  g_assert_cmpuint (n_got, ==, 0);
  close (pair[1]);
}

/* Data larger than the buffer: EMSGSIZE, and the descriptors that came
 * with it are closed (the kernel drops the rest of the record). */
static void
test_truncated_data (void)
{
  int pair[2];
  Probe probe = probe_new ();
  int got[4] = { -1, -1, -1, -1 };
  size_t n_got = 99;
  char buf[4];

  socket_pair (SOCK_SEQPACKET, pair);
  g_assert_cmpint (paddock_fdpass_send (pair[0], "too long", 8, &probe.write_end, 1, 0), ==, 8);
  close (probe.write_end);
  probe.write_end = -1;
  errno = 0;
  g_assert_cmpint (paddock_fdpass_recv (pair[1], buf, sizeof buf, got, 4, &n_got, MSG_DONTWAIT), ==, -1);
  g_assert_cmpint (errno, ==, EMSGSIZE);
  g_assert_cmpuint (n_got, ==, 0);
  g_assert_true (probe_all_closed (&probe));

  /* The same on a datagram socket, where the daemon's keeper lives. */
  close (pair[0]);
  close (pair[1]);
  probe_clear (&probe);
  probe = probe_new ();
  socket_pair (SOCK_DGRAM, pair);
  g_assert_cmpint (paddock_fdpass_send (pair[0], "too long", 8, &probe.write_end, 1, 0), ==, 8);
  close (probe.write_end);
  probe.write_end = -1;
  g_assert_cmpint (paddock_fdpass_recv (pair[1], buf, sizeof buf, got, 4, &n_got, MSG_DONTWAIT), ==, -1);
  g_assert_cmpint (errno, ==, EMSGSIZE);
  g_assert_true (probe_all_closed (&probe));
  probe_clear (&probe);
  close (pair[0]);
  close (pair[1]);
}

/* More descriptors than the receiver takes: ETOOMANYREFS, every one
 * closed, those that fit included; the next message is read as usual. */
static void
test_too_many_fds (void)
{
  int pair[2];
  char buf[16];
  int got[PADDOCK_FDPASS_MAX_FDS];
  size_t n_got = 99;

  socket_pair (SOCK_SEQPACKET, pair);
  for (size_t max = 0; max < 4; max++)
    {
      Probe probes[4] = { probe_new (), probe_new (), probe_new (), probe_new () };
      int send_fds[4];

      /* MAX + 1: the kernel's CTRUNC, or CMSG_SPACE's rounding letting one
       * more in than asked for, are both refused. */
      for (guint i = 0; i < 4; i++)
        send_fds[i] = probes[i].write_end;
      g_assert_cmpint (paddock_fdpass_send (pair[0], "m", 1, send_fds, max + 1, 0), ==, 1);
      for (guint i = 0; i < 4; i++)
        {
          close (probes[i].write_end);
          probes[i].write_end = -1;
        }
      errno = 0;
      g_assert_cmpint (paddock_fdpass_recv (pair[1], buf, sizeof buf, got, max, &n_got, MSG_DONTWAIT), ==, -1);
      g_assert_cmpint (errno, ==, ETOOMANYREFS);
      g_assert_cmpuint (n_got, ==, 0);
      for (guint i = 0; i < 4; i++)
        {
          g_assert_true (probe_all_closed (&probes[i]));
          probe_clear (&probes[i]);
        }
    }
  g_assert_cmpint (paddock_fdpass_send (pair[0], "next", 4, NULL, 0, 0), ==, 4);
  g_assert_cmpint (paddock_fdpass_recv (pair[1], buf, sizeof buf, got, 1, &n_got, MSG_DONTWAIT), ==, 4);
  g_assert_cmpmem (buf, 4, "next", 4);
  close (pair[0]);
  close (pair[1]);
}

static void
test_bounds (void)
{
  int pair[2];
  int fds[PADDOCK_FDPASS_MAX_FDS + 1];
  char buf[4];
  size_t n_got = 99;

  socket_pair (SOCK_SEQPACKET, pair);
  for (guint i = 0; i < G_N_ELEMENTS (fds); i++)
    fds[i] = pair[0];
  errno = 0;
  g_assert_cmpint (paddock_fdpass_send (pair[0], "x", 1, fds, G_N_ELEMENTS (fds), 0), ==, -1);
  g_assert_cmpint (errno, ==, EINVAL);
  errno = 0;
  g_assert_cmpint (paddock_fdpass_recv (pair[1], buf, sizeof buf, fds, G_N_ELEMENTS (fds), &n_got, 0), ==, -1);
  g_assert_cmpint (errno, ==, EINVAL);
  /* Nothing was sent by the refused call: the receiver has nothing. */
  g_assert_cmpint (paddock_fdpass_recv (pair[1], buf, sizeof buf, fds, 1, &n_got, MSG_DONTWAIT), ==, -1);
  g_assert_cmpint (errno, ==, EAGAIN);
  /* A peer gone: EPIPE, and no SIGPIPE killed us. */
  close (pair[1]);
  g_assert_cmpint (paddock_fdpass_send (pair[0], "x", 1, NULL, 0, 0), ==, -1);
  g_assert_cmpint (errno, ==, EPIPE);
  close (pair[0]);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/fdpass/round-trip", test_round_trip);
  g_test_add_func ("/fdpass/truncated-data", test_truncated_data);
  g_test_add_func ("/fdpass/too-many-fds", test_too_many_fds);
  g_test_add_func ("/fdpass/bounds", test_bounds);
  return g_test_run ();
}
