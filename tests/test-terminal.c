/* test-terminal.c — a session's terminal alone: output, viewers, input, size, hangup, drain
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * PaddockTerminal on a real PTY pair, without a daemon or a bus: what a
 * program writes reaches the scrollback and every viewer; what viewers and
 * SendInput type reaches the program, bounded; the hangup ends every
 * viewer's stream after the rest of the output.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "paddock-terminal.h"

#define WAIT_USEC (10 * G_USEC_PER_SEC)

typedef struct
{
  int     master;
  int     slave;
  guint   n_output;
  guint64 last_end;
  guint   n_hangup;
} Fixture;

static void
output_cb (PaddockTerminal *terminal,
           guint64          end_offset,
           gpointer         user_data)
{
  Fixture *fixture = user_data;

  fixture->n_output++;
  fixture->last_end = end_offset;
}

static void
hangup_cb (PaddockTerminal *terminal,
           gpointer         user_data)
{
  Fixture *fixture = user_data;

  fixture->n_hangup++;
}

static void
open_pty (Fixture *fixture)
{
  char name[128];
  struct termios attributes;

  fixture->master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  g_assert_cmpint (fixture->master, >=, 0);
  g_assert_cmpint (grantpt (fixture->master), ==, 0);
  g_assert_cmpint (unlockpt (fixture->master), ==, 0);
  g_assert_cmpint (ptsname_r (fixture->master, name, sizeof name), ==, 0);
  fixture->slave = open (name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  g_assert_cmpint (fixture->slave, >=, 0);
  /* Raw: bytes typed come back as they are, without echo or line editing. */
  g_assert_cmpint (tcgetattr (fixture->slave, &attributes), ==, 0);
  cfmakeraw (&attributes);
  g_assert_cmpint (tcsetattr (fixture->slave, TCSANOW, &attributes), ==, 0);
}

static PaddockTerminal *
terminal_new (Fixture *fixture)
{
  PaddockTerminal *terminal = paddock_terminal_new (4096);

  open_pty (fixture);
  g_signal_connect (terminal, "output", G_CALLBACK (output_cb), fixture);
  g_signal_connect (terminal, "hangup", G_CALLBACK (hangup_cb), fixture);
  paddock_terminal_take_pty (terminal, fixture->master);
  fixture->master = -1;
  return terminal;
}

static void
write_all (int         fd,
           const char *text)
{
  gsize length = strlen (text);

  while (length > 0)
    {
      gssize n = write (fd, text, length);

      if (n < 0 && errno == EINTR)
        continue;
      g_assert_cmpint (n, >, 0);
      text += n;
      length -= (gsize) n;
    }
}

/* Runs the main loop until @fd has @want bytes for us (or 10 s passed). */
static char *
read_exactly (int   fd,
              gsize want)
{
  g_autoptr(GString) got = g_string_new (NULL);
  gint64 deadline = g_get_monotonic_time () + WAIT_USEC;

  while (got->len < want && g_get_monotonic_time () < deadline)
    {
      char buffer[4096];
      struct pollfd pfd = { .fd = fd, .events = POLLIN };
      gssize n;

      g_main_context_iteration (NULL, FALSE);
      if (poll (&pfd, 1, 10) <= 0)
        continue;
      n = read (fd, buffer, MIN (sizeof buffer, want - got->len));
      if (n <= 0)
        break;
      g_string_append_len (got, buffer, n);
    }

  return g_string_free (g_steal_pointer (&got), FALSE);
}

static void
iterate_until (gboolean (*done) (Fixture *fixture),
               Fixture  *fixture)
{
  gint64 deadline = g_get_monotonic_time () + WAIT_USEC;

  while (!done (fixture) && g_get_monotonic_time () < deadline)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  g_assert_true (done (fixture));
}

static gboolean
got_output (Fixture *fixture)
{
  return fixture->n_output > 0;
}

static gboolean
hung_up (Fixture *fixture)
{
  return fixture->n_hangup > 0;
}

static gboolean
got_all_output (Fixture *fixture)
{
  return fixture->last_end == strlen ("last words");
}

static char *
read_scrollback (PaddockTerminal *terminal,
                 guint64          offset,
                 guint64         *start)
{
  g_autoptr(GBytes) bytes = paddock_terminal_read (terminal, offset, G_MAXSIZE, start);
  gsize length = 0;
  const char *data = g_bytes_get_data (bytes, &length);

  return g_strndup (data != NULL ? data : "", length);
}

/* What the program writes is in the scrollback, and "output" says where
 * it ends (throttled, but it comes). */
static void
test_output_reaches_scrollback (void)
{
  Fixture fixture = { -1, -1, 0, 0, 0 };
  g_autoptr(PaddockTerminal) terminal = terminal_new (&fixture);
  g_autofree char *text = NULL;
  guint64 start = 99;

  g_assert_true (paddock_terminal_is_live (terminal));
  write_all (fixture.slave, "hello from the agent");
  iterate_until (got_output, &fixture);
  g_assert_cmpuint (fixture.last_end, ==, strlen ("hello from the agent"));
  g_assert_cmpuint (paddock_terminal_get_end_offset (terminal), ==, fixture.last_end);
  text = read_scrollback (terminal, 0, &start);
  g_assert_cmpstr (text, ==, "hello from the agent");
  g_assert_cmpuint (start, ==, 0);
  g_assert_cmpuint (fixture.n_hangup, ==, 0);

  close (fixture.slave);
}

/* A viewer replays from its offset, then follows; its keystrokes reach the
 * program. A read-only viewer's do not. */
static void
test_viewers (void)
{
  Fixture fixture = { -1, -1, 0, 0, 0 };
  g_autoptr(PaddockTerminal) terminal = terminal_new (&fixture);
  g_autofree char *replay = NULL;
  g_autofree char *live = NULL;
  g_autofree char *typed = NULL;
  g_autofree char *late = NULL;
  PaddockTerminalViewer *viewer;
  int pair[2];
  int watcher[2];
  struct pollfd slave_in = { .fd = fixture.slave, .events = POLLIN };

  write_all (fixture.slave, "0123456789");
  iterate_until (got_output, &fixture);

  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), ==, 0);
  viewer = paddock_terminal_add_viewer (terminal, pair[0], 4, TRUE);
  g_assert_cmpuint (paddock_terminal_viewer_get_offset (viewer), ==, 4);
  g_assert_cmpuint (paddock_terminal_get_n_viewers (terminal), ==, 1);
  paddock_terminal_flush_viewer (terminal, viewer);
  replay = read_exactly (pair[1], 6);
  g_assert_cmpstr (replay, ==, "456789");

  /* Asking past the end starts at the end. */
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, watcher), ==, 0);
  viewer = paddock_terminal_add_viewer (terminal, watcher[0], 1000, FALSE);
  g_assert_cmpuint (paddock_terminal_viewer_get_offset (viewer), ==, 10);
  paddock_terminal_flush_viewer (terminal, viewer);
  g_assert_cmpuint (paddock_terminal_get_n_viewers (terminal), ==, 2);

  write_all (fixture.slave, "more");
  live = read_exactly (pair[1], 4);
  g_assert_cmpstr (live, ==, "more");
  late = read_exactly (watcher[1], 4);
  g_assert_cmpstr (late, ==, "more");

  write_all (pair[1], "typed");
  typed = read_exactly (fixture.slave, 5);
  g_assert_cmpstr (typed, ==, "typed");

  /* The read-only viewer's end was shut for reading: its writes fail or
   * go nowhere, and nothing reaches the program. */
  (void) send (watcher[1], "x", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  for (guint i = 0; i < 20; i++)
    g_main_context_iteration (NULL, FALSE);
  g_assert_cmpint (poll (&slave_in, 1, 50), ==, 0);

  /* A viewer that hangs up is dropped, the other stays. */
  close (pair[1]);
  for (gint64 deadline = g_get_monotonic_time () + WAIT_USEC;
       paddock_terminal_get_n_viewers (terminal) > 1 && g_get_monotonic_time () < deadline;)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  g_assert_cmpuint (paddock_terminal_get_n_viewers (terminal), ==, 1);

  close (watcher[1]);
  close (fixture.slave);
}

/* Input is queued up to its bound, all or nothing; what was queued
 * reaches the program. */
static void
test_input_bound (void)
{
  Fixture fixture = { -1, -1, 0, 0, 0 };
  g_autoptr(PaddockTerminal) terminal = terminal_new (&fixture);
  g_autofree guint8 *big = g_malloc0 (PADDOCK_TERMINAL_PENDING_INPUT_MAX + 1);
  g_autofree char *typed = NULL;

  g_assert_false (paddock_terminal_queue_input (terminal, big, PADDOCK_TERMINAL_PENDING_INPUT_MAX + 1));
  g_assert_true (paddock_terminal_queue_input (terminal, (const guint8 *) "ab", 2));
  g_assert_true (paddock_terminal_queue_input (terminal, big, PADDOCK_TERMINAL_PENDING_INPUT_MAX - 2));
  /* Full (the main loop has not run, nothing was written yet). */
  g_assert_false (paddock_terminal_queue_input (terminal, (const guint8 *) "c", 1));

  typed = read_exactly (fixture.slave, 2);
  g_assert_cmpstr (typed, ==, "ab");

  close (fixture.slave);
}

/* Resize is what the program sees. */
static void
test_resize (void)
{
  Fixture fixture = { -1, -1, 0, 0, 0 };
  g_autoptr(PaddockTerminal) terminal = terminal_new (&fixture);
  struct winsize size = { 0, };

  paddock_terminal_resize (terminal, 132, 43);
  g_assert_cmpint (ioctl (fixture.slave, TIOCGWINSZ, &size), ==, 0);
  g_assert_cmpuint (size.ws_col, ==, 132);
  g_assert_cmpuint (size.ws_row, ==, 43);

  close (fixture.slave);
}

/* The program's end: "hangup", the terminal no longer live, and each
 * viewer gets the last words, then the end of its stream. */
static void
test_hangup (void)
{
  Fixture fixture = { -1, -1, 0, 0, 0 };
  g_autoptr(PaddockTerminal) terminal = terminal_new (&fixture);
  g_autofree char *rest = NULL;
  PaddockTerminalViewer *viewer;
  int pair[2];
  char byte;

  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), ==, 0);
  viewer = paddock_terminal_add_viewer (terminal, pair[0], 0, TRUE);
  paddock_terminal_flush_viewer (terminal, viewer);

  write_all (fixture.slave, "last words");
  close (fixture.slave);
  iterate_until (hung_up, &fixture);
  g_assert_cmpuint (fixture.n_hangup, ==, 1);
  /* The last "output" may be one already due when the hangup came. */
  iterate_until (got_all_output, &fixture);
  g_assert_false (paddock_terminal_is_live (terminal));

  rest = read_exactly (pair[1], strlen ("last words"));
  g_assert_cmpstr (rest, ==, "last words");
  g_assert_cmpint (read (pair[1], &byte, 1), ==, 0);
  g_assert_cmpuint (paddock_terminal_get_n_viewers (terminal), ==, 0);

  close (pair[1]);
}

/* The end read by paddock_terminal_drain() (as a session does for the last
 * words of a program that ended at once): one "hangup", and the PTY's
 * watch goes with it. Left behind, it fired again, and once the terminal
 * was freed, on the freed terminal (the daemon's SIGSEGV of 23e3e29). */
static void
test_drain_at_end (void)
{
  Fixture fixture = { -1, -1, 0, 0, 0 };
  g_autoptr(PaddockTerminal) terminal = terminal_new (&fixture);
  g_autofree char *text = NULL;
  guint64 start = 0;

  write_all (fixture.slave, "last words");
  close (fixture.slave);
  /* The slave is closed: the master reads the words, then its end. */
  paddock_terminal_drain (terminal);
  g_assert_cmpuint (fixture.n_hangup, ==, 1);
  g_assert_false (paddock_terminal_is_live (terminal));
  text = read_scrollback (terminal, 0, &start);
  g_assert_cmpstr (text, ==, "last words");

  /* A watch left on the ended PTY is ready at once: give it its chances. */
  for (guint i = 0; i < 50; i++)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  g_assert_cmpuint (fixture.n_hangup, ==, 1);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/terminal/output", test_output_reaches_scrollback);
  g_test_add_func ("/terminal/viewers", test_viewers);
  g_test_add_func ("/terminal/input-bound", test_input_bound);
  g_test_add_func ("/terminal/resize", test_resize);
  g_test_add_func ("/terminal/hangup", test_hangup);
  g_test_add_func ("/terminal/drain-at-end", test_drain_at_end);

  return g_test_run ();
}
