/* test-session-stop.c — a session's stop alone: sweeps, the grace, a shorter one joining, survivors
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Without a bus or a daemon: the "sweep" handler plays the session (how
 * many processes are left, whether all are gone), and the test checks when
 * the stop asks for SIGKILL and how it ends, and that a change of the fd it
 * is woken by (the cgroup's cgroup.events) sweeps at once. The calls waiting are NULL
 * here: answering them is the session's.
 */

#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "paddock-session-stop.h"

typedef struct
{
  PaddockSessionStop *stop;
  guint               sweeps;
  guint               kills;        /* sweeps that asked for SIGKILL */
  guint               gone_after;   /* the sweep at which all is gone (0: never) */
  guint               left;         /* what a sweep says is left meanwhile */
  guint               n_ended;
  guint               survivors;
  GMainLoop          *loop;
} Fixture;

static void
sweep_cb (PaddockSessionStop *stop,
          gboolean            kill,
          guint              *left,
          gboolean           *gone,
          Fixture            *fixture)
{
  fixture->sweeps++;
  *gone = fixture->gone_after != 0 && fixture->sweeps >= fixture->gone_after;
  *left = *gone ? 0 : fixture->left;
  if (kill && !*gone)
    fixture->kills++;
}

static void
ended_cb (PaddockSessionStop *stop,
          guint               survivors,
          Fixture            *fixture)
{
  fixture->n_ended++;
  fixture->survivors = survivors;
  if (fixture->loop != NULL)
    g_main_loop_quit (fixture->loop);
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  fixture->stop = paddock_session_stop_new ();
  fixture->loop = g_main_loop_new (NULL, FALSE);
  g_signal_connect (fixture->stop, "sweep", G_CALLBACK (sweep_cb), fixture);
  g_signal_connect (fixture->stop, "ended", G_CALLBACK (ended_cb), fixture);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_clear_object (&fixture->stop);
  g_clear_pointer (&fixture->loop, g_main_loop_unref);
}

static gboolean
give_up_cb (gpointer user_data)
{
  g_assert_not_reached ();
  return G_SOURCE_REMOVE;
}

static void
run_until_ended (Fixture *fixture,
                 guint    seconds)
{
  guint give_up = g_timeout_add_seconds (seconds, give_up_cb, NULL);

  if (fixture->n_ended == 0)
    g_main_loop_run (fixture->loop);
  g_source_remove (give_up);
}

/* A session with nothing left: the first sweep ends the stop, before
 * run() returns, and no SIGKILL is asked for. */
static void
test_stop_nothing_left (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(GPtrArray) waiters = NULL;

  fixture->gone_after = 1;
  g_assert_true (paddock_session_stop_add (fixture->stop, NULL, 5, FALSE, g_get_monotonic_time ()));
  paddock_session_stop_run (fixture->stop);
  g_assert_cmpuint (fixture->n_ended, ==, 1);
  g_assert_cmpuint (fixture->survivors, ==, 0);
  g_assert_cmpuint (fixture->sweeps, ==, 1);
  g_assert_cmpuint (fixture->kills, ==, 0);

  waiters = paddock_session_stop_take_waiters (fixture->stop);
  g_assert_cmpuint (waiters->len, ==, 1);
  g_assert_false (((PaddockStopWaiter *) g_ptr_array_index (waiters, 0))->destroy);
}

/* No grace (Destroy's): every sweep kills until all is gone. */
static void
test_stop_no_grace (Fixture       *fixture,
                    gconstpointer  data)
{
  fixture->gone_after = 4;
  fixture->left = 2;
  g_assert_true (paddock_session_stop_add (fixture->stop, NULL, 0, TRUE, g_get_monotonic_time ()));
  paddock_session_stop_run (fixture->stop);
  run_until_ended (fixture, 5);
  g_assert_cmpuint (fixture->n_ended, ==, 1);
  g_assert_cmpuint (fixture->survivors, ==, 0);
  g_assert_cmpuint (fixture->sweeps, ==, 4);
  g_assert_cmpuint (fixture->kills, ==, 3);
}

static gboolean
join_destroy_cb (gpointer user_data)
{
  Fixture *fixture = user_data;

  /* Joins the stop under way: no new stop, but its grace (none) wins. */
  g_assert_false (paddock_session_stop_add (fixture->stop, NULL, 0, TRUE, g_get_monotonic_time ()));
  fixture->gone_after = fixture->sweeps + 2;
  return G_SOURCE_REMOVE;
}

/* A long grace sweeps without killing; a Destroy that joins ends it. */
static void
test_stop_shorter_grace_wins (Fixture       *fixture,
                              gconstpointer  data)
{
  g_autoptr(GPtrArray) waiters = NULL;

  fixture->left = 1;
  g_assert_true (paddock_session_stop_add (fixture->stop, NULL, 300, FALSE, g_get_monotonic_time ()));
  paddock_session_stop_run (fixture->stop);
  g_timeout_add (100, join_destroy_cb, fixture);
  run_until_ended (fixture, 5);
  g_assert_cmpuint (fixture->survivors, ==, 0);
  g_assert_cmpuint (fixture->sweeps, >, 3);
  /* The sweeps before the Destroy did not kill; the one after it did. */
  g_assert_cmpuint (fixture->kills, ==, 1);

  waiters = paddock_session_stop_take_waiters (fixture->stop);
  g_assert_cmpuint (waiters->len, ==, 2);
}

/* What outlives its SIGKILL by 10 s is reported, not waited for. */
static void
test_stop_survivors (Fixture       *fixture,
                     gconstpointer  data)
{
  gint64 begun = g_get_monotonic_time ();

  fixture->left = 3;
  g_assert_true (paddock_session_stop_add (fixture->stop, NULL, 0, FALSE, begun));
  paddock_session_stop_run (fixture->stop);
  run_until_ended (fixture, 20);
  g_assert_cmpuint (fixture->n_ended, ==, 1);
  g_assert_cmpuint (fixture->survivors, ==, 3);
  g_assert_cmpint (g_get_monotonic_time () - begun, >=, 10 * G_USEC_PER_SEC);
  g_assert_cmpuint (fixture->kills, ==, fixture->sweeps);
}

/* A session that goes mid-stop: no more sweeps. */
static void
test_stop_close (Fixture       *fixture,
                 gconstpointer  data)
{
  guint sweeps;

  fixture->left = 1;
  g_assert_true (paddock_session_stop_add (fixture->stop, NULL, 300, FALSE, g_get_monotonic_time ()));
  paddock_session_stop_run (fixture->stop);
  paddock_session_stop_close (fixture->stop);
  sweeps = fixture->sweeps;
  for (guint i = 0; i < 5; i++)
    {
      g_usleep (15 * 1000);
      while (g_main_context_iteration (NULL, FALSE))
        ;
    }
  g_assert_cmpuint (fixture->sweeps, ==, sweeps);
  g_assert_cmpuint (fixture->n_ended, ==, 0);
}

/* An fd with something urgent to read (POLLPRI, G_IO_PRI), as a
 * cgroup's cgroup.events is once its last member has gone: TCP's
 * out-of-band byte, on loopback. */
static int
urgent_fd (int *other)
{
  struct sockaddr_in addr = { .sin_family = AF_INET };
  socklen_t len = sizeof addr;
  int listener = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int accepted;

  addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  g_assert_no_errno (bind (listener, (struct sockaddr *) &addr, sizeof addr));
  g_assert_no_errno (listen (listener, 1));
  g_assert_no_errno (getsockname (listener, (struct sockaddr *) &addr, &len));
  *other = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_no_errno (connect (*other, (struct sockaddr *) &addr, sizeof addr));
  accepted = accept4 (listener, NULL, NULL, SOCK_CLOEXEC);
  g_assert_cmpint (accepted, >=, 0);
  close (listener);
  g_assert_cmpint (send (*other, "!", 1, MSG_OOB), ==, 1);
  return accepted;
}

/* A change of the fd given to wake_on() sweeps at once, not at the next
 * 10 ms poll: a single look at what is ready right after run() ends the
 * stop. (A socket cannot be read again from its start as cgroup.events
 * is: it gets that sweep and is watched no more.) The fd is closed with
 * the stop's end. */
static void
test_stop_wake (Fixture       *fixture,
                gconstpointer  data)
{
  int other = -1;
  int fd = urgent_fd (&other);

  fixture->gone_after = 2;
  fixture->left = 3;
  g_assert_true (paddock_session_stop_add (fixture->stop, NULL, 0, TRUE, g_get_monotonic_time ()));
  paddock_session_stop_wake_on (fixture->stop, fd);
  paddock_session_stop_run (fixture->stop);
  g_assert_cmpuint (fixture->sweeps, ==, 1);
  g_assert_cmpuint (fixture->n_ended, ==, 0);

  g_main_context_iteration (NULL, FALSE);
  g_assert_cmpuint (fixture->n_ended, ==, 1);
  g_assert_cmpuint (fixture->sweeps, ==, 2);
  g_assert_cmpuint (fixture->survivors, ==, 0);
  errno = 0;
  g_assert_cmpint (fcntl (fd, F_GETFD), ==, -1);
  g_assert_cmpint (errno, ==, EBADF);

  /* Nothing is left of the stop: no sweep later, from the timer or the fd. */
  for (guint i = 0; i < 3; i++)
    {
      g_usleep (15 * 1000);
      while (g_main_context_iteration (NULL, FALSE))
        ;
    }
  g_assert_cmpuint (fixture->sweeps, ==, 2);
  close (other);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/session-stop/nothing-left", Fixture, NULL, fixture_set_up, test_stop_nothing_left, fixture_tear_down);
  g_test_add ("/session-stop/no-grace", Fixture, NULL, fixture_set_up, test_stop_no_grace, fixture_tear_down);
  g_test_add ("/session-stop/shorter-grace-wins", Fixture, NULL, fixture_set_up, test_stop_shorter_grace_wins,
              fixture_tear_down);
  g_test_add ("/session-stop/survivors", Fixture, NULL, fixture_set_up, test_stop_survivors, fixture_tear_down);
  g_test_add ("/session-stop/close", Fixture, NULL, fixture_set_up, test_stop_close, fixture_tear_down);
  g_test_add ("/session-stop/wake", Fixture, NULL, fixture_set_up, test_stop_wake, fixture_tear_down);

  return g_test_run ();
}
