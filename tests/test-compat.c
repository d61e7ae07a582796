/* test-compat.c — the compat points: the Linux implementation, and (built
 * with PADDOCK_COMPAT_PORTABLE) the fallback every other system gets
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The fallback must say "unsupported" (ENOSYS, or EOPNOTSUPP for a clone,
 * where a copy is the caller's answer) and change nothing; it must never
 * do a weaker version of the call in silence. The same tests run against
 * both builds, each checking what its build must do.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-compat.h"
#include "paddock-compat-clone.h"
#include "paddock-compat-fd-watch.h"
#include "paddock-compat-openat2.h"
#include "paddock-compat-pidfd.h"
#include "paddock-compat-poll.h"
#include "paddock-compat-proc.h"
#include "paddock-compat-relay.h"
#include "paddock-compat-rename.h"
#include "paddock-listening-sockets.h"

static char *
make_dir (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("paddock-compat-XXXXXX", &error);

  g_assert_no_error (error);
  return dir;
}

static void
put (const char *dir,
     const char *name,
     const char *text)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, text, -1, &error);
  g_assert_no_error (error);
}

static char *
get (const char *dir,
     const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  return text;
}

static void
remove_dir (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);

      if (g_file_test (path, G_FILE_TEST_IS_DIR) && !g_file_test (path, G_FILE_TEST_IS_SYMLINK))
        remove_dir (path);
      else
        g_unlink (path);
    }
  g_rmdir (dir);
}

static void
test_pidfd (void)
{
  pid_t child = fork ();
  int status = 0;
  paddock_autofd int pidfd = -1;

  g_assert_cmpint (child, >=, 0);
  if (child == 0)
    {
      pause ();
      _exit (0);
    }

  pidfd = paddock_compat_pidfd_open (child);
  if (PADDOCK_COMPAT_LINUX)
    {
      g_assert_true (paddock_compat_pidfd_supported ());
      g_assert_cmpint (pidfd, >=, 0);
      g_assert_true (fcntl (pidfd, F_GETFD) & FD_CLOEXEC);
      g_assert_cmpint (paddock_compat_pidfd_send_signal (pidfd, SIGTERM), ==, 0);
      g_assert_cmpint (waitpid (child, &status, 0), ==, child);
      g_assert_true (WIFSIGNALED (status));
      g_assert_cmpint (WTERMSIG (status), ==, SIGTERM);
      /* Reaped: the pinned process is gone, and the signal says so. */
      g_assert_cmpint (paddock_compat_pidfd_send_signal (pidfd, SIGTERM), ==, -1);
      g_assert_cmpint (errno, ==, ESRCH);
    }
  else
    {
      g_assert_false (paddock_compat_pidfd_supported ());
      g_assert_cmpint (pidfd, ==, -1);
      g_assert_cmpint (errno, ==, ENOSYS);
      g_assert_cmpint (paddock_compat_pidfd_send_signal (3, SIGTERM), ==, -1);
      g_assert_cmpint (errno, ==, ENOSYS);
      /* Nothing was signalled: the child still runs until we end it. */
      g_assert_cmpint (waitpid (child, &status, WNOHANG), ==, 0);
      kill (child, SIGKILL);
      g_assert_cmpint (waitpid (child, &status, 0), ==, child);
    }
}

/* A child of ours with a known parent, session, state and argv: what
 * Session1.ListProcesses shows of it and how a host session is found. */
static void
test_proc (void)
{
  pid_t child = fork ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) pids = NULL;
  g_autofree char *name = NULL;
  g_autofree char *command_line = NULL;
  PaddockProcStat stat = { 0, };
  int status = 0;
  gboolean listed = FALSE;

  g_assert_cmpint (child, >=, 0);
  if (child == 0)
    {
      /* argv[0] "a b", one argument with a space: joined like any other;
       * the name stays sleep's. */
      char *argv[] = { (char *) "a b", (char *) "60", NULL };

      setsid ();
      execvp ("sleep", argv);
      _exit (127);
    }
  /* Until the exec is seen (its name is sleep's), at most 10 s. */
  for (int i = 0; i < 1000 && PADDOCK_COMPAT_LINUX; i++)
    {
      g_clear_pointer (&name, g_free);
      name = paddock_compat_proc_read_name ((guint32) child);
      if (g_strcmp0 (name, "sleep") == 0)
        break;
      g_usleep (10000);
    }

  pids = paddock_compat_proc_list_pids (&error);
  if (PADDOCK_COMPAT_LINUX)
    {
      g_assert_true (paddock_compat_proc_supported ());
      g_assert_no_error (error);
      for (guint i = 0; i < pids->len; i++)
        listed = listed || g_array_index (pids, guint32, i) == (guint32) child;
      g_assert_true (listed);

      g_assert_true (paddock_compat_proc_read_stat ((guint32) child, TRUE, &stat));
      g_assert_cmpuint (stat.ppid, ==, (guint32) getpid ());
      g_assert_cmpint (stat.session, ==, child);   /* it leads its own (setsid) */
      g_assert_cmpint (stat.state, ==, 'S');
      g_assert_cmpuint (stat.start_time, >, 0);
      g_assert_cmpstr (stat.name, ==, "sleep");
      paddock_proc_stat_clear (&stat);

      command_line = paddock_compat_proc_read_command_line ((guint32) child, 4096);
      g_assert_cmpstr (command_line, ==, "a b 60");
      g_clear_pointer (&command_line, g_free);
      command_line = paddock_compat_proc_read_command_line ((guint32) child, 5);
      g_assert_cmpstr (command_line, ==, "a b 6");   /* cut at 5 bytes */
      g_clear_pointer (&command_line, g_free);

      kill (child, SIGKILL);
      g_assert_cmpint (waitpid (child, &status, 0), ==, child);
      /* Reaped: gone from the table, and a read says so. */
      g_assert_false (paddock_compat_proc_read_stat ((guint32) child, FALSE, &stat));
      g_assert_cmpint (errno, ==, ESRCH);
      g_assert_null (paddock_compat_proc_read_command_line ((guint32) child, 4096));
      g_assert_cmpint (errno, ==, ESRCH);
    }
  else
    {
      /* Unsupported, said as such: no list (never an empty one, which
       * would read as "no process left"), and no row of any process. */
      g_assert_false (paddock_compat_proc_supported ());
      g_assert_null (pids);
      g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOSYS);
      g_assert_false (paddock_compat_proc_read_stat ((guint32) child, TRUE, &stat));
      g_assert_cmpint (errno, ==, ENOSYS);
      g_assert_null (stat.name);
      g_assert_null (paddock_compat_proc_read_name ((guint32) child));
      g_assert_cmpint (errno, ==, ENOSYS);
      g_assert_null (paddock_compat_proc_read_command_line ((guint32) child, 4096));
      g_assert_cmpint (errno, ==, ENOSYS);
      kill (child, SIGKILL);
      g_assert_cmpint (waitpid (child, &status, 0), ==, child);
    }
}

static gpointer
wake_cb (gpointer data)
{
  g_usleep (20000);
  g_assert_true (paddock_compat_poller_wake (data));
  return NULL;
}

/* The port forward's worker: woken from another thread, told when a
 * socket has bytes; the Linux poller once per change (edge), the
 * fallback for as long as they are there and only when asked (level). */
static void
test_poller (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockCompatPoller) poller = paddock_compat_poller_new (&error);
  PaddockCompatPollEvent events[4];
  int pair[2];
  int tag = 0;
  char byte;
  GThread *waker;

  g_assert_no_error (error);
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair), ==, 0);
  g_assert_true (paddock_compat_poller_edge_triggered (poller) == PADDOCK_COMPAT_LINUX);
  g_assert_true (paddock_compat_poller_add (poller, pair[0], PADDOCK_COMPAT_POLL_IN, &tag));

  /* Nothing yet: the wait times out (an idle writable socket, not asked
   * for, does not wake the fallback; epoll says writable once). */
  if (PADDOCK_COMPAT_LINUX)
    {
      g_assert_cmpint (paddock_compat_poller_wait (poller, events, 4, 0), ==, 1);
      g_assert_true (events[0].data == &tag);
      g_assert_cmpuint (events[0].events, ==, PADDOCK_COMPAT_POLL_OUT);
    }
  g_assert_cmpint (paddock_compat_poller_wait (poller, events, 4, 0), ==, 0);

  /* Woken from another thread, while waiting for ever. */
  waker = g_thread_new ("waker", wake_cb, poller);
  g_assert_cmpint (paddock_compat_poller_wait (poller, events, 4, -1), ==, 1);
  g_assert_null (events[0].data);
  g_thread_join (waker);
  g_assert_cmpint (paddock_compat_poller_wait (poller, events, 4, 0), ==, 0);

  /* Two bytes come; one is read. */
  g_assert_cmpint (write (pair[1], "ab", 2), ==, 2);
  g_assert_cmpint (paddock_compat_poller_wait (poller, events, 4, 1000), ==, 1);
  g_assert_true (events[0].data == &tag);
  g_assert_true (events[0].events & PADDOCK_COMPAT_POLL_IN);
  g_assert_cmpint (read (pair[0], &byte, 1), ==, 1);
  if (PADDOCK_COMPAT_LINUX)
    /* Edge: said once; a reader goes on until EAGAIN. */
    g_assert_cmpint (paddock_compat_poller_wait (poller, events, 4, 0), ==, 0);
  else
    {
      /* Level: said while it lasts, unless nothing is wanted. */
      g_assert_cmpint (paddock_compat_poller_wait (poller, events, 4, 0), ==, 1);
      paddock_compat_poller_want (poller, pair[0], 0);
      g_assert_cmpint (paddock_compat_poller_wait (poller, events, 4, 0), ==, 0);
      paddock_compat_poller_want (poller, pair[0], PADDOCK_COMPAT_POLL_IN);
    }

  /* Removed: nothing more of it, though a byte is there and more come. */
  paddock_compat_poller_remove (poller, pair[0]);
  g_assert_cmpint (write (pair[1], "c", 1), ==, 1);
  g_assert_cmpint (paddock_compat_poller_wait (poller, events, 4, 0), ==, 0);
  close (pair[0]);
  close (pair[1]);
}

/* ---------------------------------------------------------------------- */
/* The proxy's waits: one-shot, level-triggered, in a GMainContext         */

typedef struct
{
  PaddockCompatFdWatch *watch;
  guint                 fired;
  GIOCondition          condition;
  int                   fd;
  /* what the callback does besides counting */
  int                   rearm_fd;       /* ≥ 0: waits for it again (G_IO_IN) */
  int                   take_back_fd;   /* ≥ 0: takes back its G_IO_IN wait and closes it */
  int                   reused_fd;      /* then: the new socket of that number */
  int                   reused_peer;
  gpointer              reused_waiter;  /* …waited for (G_IO_IN) with this */
} Fired;

static void
fired_cb (int          fd,
          GIOCondition condition,
          gpointer     user_data)
{
  Fired *fired = user_data;
  int pair[2];

  fired->fired++;
  fired->fd = fd;
  fired->condition = condition;
  if (fired->rearm_fd >= 0)
    g_assert_true (paddock_compat_fd_watch_add (fired->watch, fired->rearm_fd, G_IO_IN, fired_cb, fired, NULL));
  if (fired->take_back_fd >= 0)
    {
      /* The next event of this batch may be the closed socket's: it must
       * not reach the new socket that gets its number. */
      paddock_compat_fd_watch_remove (fired->watch, fired->take_back_fd, G_IO_IN);
      close (fired->take_back_fd);
      g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair), ==, 0);
      fired->reused_fd = pair[0];
      fired->reused_peer = pair[1];
      g_assert_true (paddock_compat_fd_watch_add (fired->watch, pair[0], G_IO_IN, fired_cb,
                                                  fired->reused_waiter, NULL));
      fired->take_back_fd = -1;
    }
}

static void
spin (GMainContext *context)
{
  /* More than one iteration: a wait armed again runs on the next. */
  for (guint i = 0; i < 4; i++)
    g_main_context_iteration (context, FALSE);
}

#define FIRED_INIT { .rearm_fd = -1, .take_back_fd = -1, .reused_fd = -1, .reused_peer = -1 }

static void
test_fd_watch (void)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockCompatFdWatch) watch = paddock_compat_fd_watch_new (context, &error);
  Fired in = FIRED_INIT, out = FIRED_INIT, other = FIRED_INIT, stale = FIRED_INIT;
  int a[2], b[2];
  char bytes[8];

  g_assert_no_error (error);
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, a), ==, 0);
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, b), ==, 0);
  in.watch = out.watch = other.watch = stale.watch = watch;

  /* Writable at once: said once, then nothing (one-shot). */
  g_assert_true (paddock_compat_fd_watch_add (watch, a[0], G_IO_OUT, fired_cb, &out, &error));
  g_assert_true (paddock_compat_fd_watch_waiting (watch, a[0], G_IO_OUT));
  spin (context);
  g_assert_cmpuint (out.fired, ==, 1);
  g_assert_cmpint (out.fd, ==, a[0]);
  g_assert_true (out.condition & G_IO_OUT);
  g_assert_false (paddock_compat_fd_watch_waiting (watch, a[0], G_IO_OUT));
  spin (context);
  g_assert_cmpuint (out.fired, ==, 1);

  /* Readable only once bytes come; the wait on the other direction of
   * the same fd, armed beside it, runs on its own. */
  g_assert_true (paddock_compat_fd_watch_add (watch, a[0], G_IO_IN, fired_cb, &in, &error));
  spin (context);
  g_assert_cmpuint (in.fired, ==, 0);
  g_assert_true (paddock_compat_fd_watch_add (watch, a[0], G_IO_OUT, fired_cb, &out, &error));
  spin (context);
  g_assert_cmpuint (out.fired, ==, 2);
  g_assert_cmpuint (in.fired, ==, 0);
  g_assert_true (paddock_compat_fd_watch_waiting (watch, a[0], G_IO_IN));
  g_assert_cmpint (write (a[1], "xy", 2), ==, 2);
  spin (context);
  g_assert_cmpuint (in.fired, ==, 1);
  g_assert_true (in.condition & G_IO_IN);

  /* Level-triggered: the bytes were not read, so a new wait runs again;
   * one-shot: without a new wait, nothing more. */
  spin (context);
  g_assert_cmpuint (in.fired, ==, 1);
  g_assert_true (paddock_compat_fd_watch_add (watch, a[0], G_IO_IN, fired_cb, &in, &error));
  spin (context);
  g_assert_cmpuint (in.fired, ==, 2);

  /* A callback that waits again is run again while the bytes are there,
   * once per iteration at most. */
  in.rearm_fd = a[0];
  g_assert_true (paddock_compat_fd_watch_add (watch, a[0], G_IO_IN, fired_cb, &in, &error));
  g_main_context_iteration (context, FALSE);
  g_assert_cmpuint (in.fired, ==, 3);
  g_main_context_iteration (context, FALSE);
  g_assert_cmpuint (in.fired, ==, 4);
  in.rearm_fd = -1;
  spin (context);
  g_assert_cmpuint (in.fired, ==, 5);
  g_assert_cmpint (read (a[0], bytes, sizeof bytes), ==, 2);

  /* Taken back: it never runs, though the socket becomes readable. */
  g_assert_true (paddock_compat_fd_watch_add (watch, a[0], G_IO_IN, fired_cb, &in, &error));
  paddock_compat_fd_watch_remove (watch, a[0], G_IO_IN);
  g_assert_false (paddock_compat_fd_watch_waiting (watch, a[0], G_IO_IN));
  paddock_compat_fd_watch_remove (watch, a[0], G_IO_IN);  /* twice: nothing */
  g_assert_cmpint (write (a[1], "z", 1), ==, 1);
  spin (context);
  g_assert_cmpuint (in.fired, ==, 5);
  /* …and given again, it does. */
  g_assert_true (paddock_compat_fd_watch_add (watch, a[0], G_IO_IN, fired_cb, &in, &error));
  spin (context);
  g_assert_cmpuint (in.fired, ==, 6);

  g_assert_cmpint (read (a[0], bytes, sizeof bytes), ==, 1);

  /* Two sockets ready in one go; the first one's callback takes back the
   * second's wait, closes it and waits on a new socket that gets its
   * number: the closed one's event must not reach the new socket. */
  g_assert_cmpint (write (a[1], "0", 1), ==, 1);
  g_assert_cmpint (write (b[1], "1", 1), ==, 1);
  other.take_back_fd = b[0];
  other.reused_waiter = &stale;
  g_assert_true (paddock_compat_fd_watch_add (watch, a[0], G_IO_IN, fired_cb, &other, &error));
  g_assert_true (paddock_compat_fd_watch_add (watch, b[0], G_IO_IN, fired_cb, &stale, &error));
  spin (context);
  g_assert_cmpuint (other.fired, ==, 1);
  g_assert_cmpint (other.reused_fd, ==, b[0]);   /* the number came back */
  g_assert_cmpuint (stale.fired, ==, 0);
  g_assert_true (paddock_compat_fd_watch_waiting (watch, other.reused_fd, G_IO_IN));
  g_assert_cmpint (write (other.reused_peer, "2", 1), ==, 1);
  spin (context);
  g_assert_cmpuint (stale.fired, ==, 1);
  g_assert_cmpint (stale.fd, ==, other.reused_fd);

  /* A hang-up wakes a reader. */
  g_assert_cmpint (read (a[0], bytes, sizeof bytes), ==, 1);
  g_assert_true (paddock_compat_fd_watch_add (watch, a[0], G_IO_IN, fired_cb, &in, &error));
  close (a[1]);
  spin (context);
  g_assert_cmpuint (in.fired, ==, 7);
  g_assert_true (in.condition & (G_IO_HUP | G_IO_IN));
  g_assert_cmpint (read (a[0], bytes, sizeof bytes), ==, 0);

  /* Freed with a wait pending: it never runs. */
  g_assert_true (paddock_compat_fd_watch_add (watch, other.reused_fd, G_IO_IN, fired_cb, &stale, &error));
  g_clear_pointer (&watch, paddock_compat_fd_watch_free);
  spin (context);
  g_assert_cmpuint (stale.fired, ==, 1);

  close (a[0]);
  close (b[1]);
  close (other.reused_fd);
  close (other.reused_peer);
}

static char *
read_all (int fd)
{
  GString *text = g_string_new (NULL);
  char chunk[4096];
  ssize_t n;

  while ((n = read (fd, chunk, sizeof chunk)) > 0)
    g_string_append_len (text, chunk, n);
  return g_string_free (text, FALSE);
}

/* What the forward's download does: every byte from one socket to the
 * other, in order, held back while the destination is full, the end
 * passed on once they are through. Both variants move the bytes (the
 * fallback by a copy, which is not a security layer). */
static void
test_relay (void)
{
  PaddockCompatRelay relay = PADDOCK_COMPAT_RELAY_INIT;
  int src[2], dst[2];
  int small = 4096;
  gsize total = 0;
  g_autofree char *block = g_malloc (64 * 1024);
  g_autofree char *got = NULL;
  GString *received = g_string_new (NULL);
  PaddockCompatRelayStatus status;

  g_assert_true (paddock_compat_relay_kernel_to_kernel () == PADDOCK_COMPAT_LINUX);
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, src), ==, 0);
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, dst), ==, 0);
  setsockopt (dst[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
  g_assert_true (paddock_compat_relay_open (&relay));
  if (PADDOCK_COMPAT_LINUX)
    g_assert_true (fcntl (relay.pipe[0], F_GETFD) & FD_CLOEXEC);
  g_assert_cmpuint (paddock_compat_relay_get_pages (&relay), >, 0);
  g_assert_true (paddock_compat_relay_set_pages (&relay, 4));
  g_assert_cmpuint (paddock_compat_relay_get_pages (&relay), ==, 4);

  /* Nothing to read yet. */
  g_assert_cmpint (paddock_compat_relay_move (&relay, src[0], dst[0], 1 << 20), ==, PADDOCK_COMPAT_RELAY_WAIT_READ);

  /* More than the destination takes: held back, not dropped. */
  for (guint i = 0; i < 64 * 1024; i++)
    block[i] = (char) ('a' + i % 26);
  while (total < 512 * 1024)
    {
      ssize_t n = write (src[1], block, 64 * 1024);

      if (n <= 0)
        break;
      total += (gsize) n;
    }
  g_assert_cmpuint (total, >, 64 * 1024);
  shutdown (src[1], SHUT_WR);
  status = paddock_compat_relay_move (&relay, src[0], dst[0], 1 << 20);
  g_assert_cmpint (status, ==, PADDOCK_COMPAT_RELAY_WAIT_WRITE);
  g_assert_cmpuint (relay.pending, >, 0);
  /* A relay holding bytes keeps its size. */
  g_assert_false (paddock_compat_relay_set_pages (&relay, 1));
  g_assert_cmpint (errno, ==, EBUSY);

  /* The reader drains the destination; the relay goes on, until the end. */
  while (status != PADDOCK_COMPAT_RELAY_DONE)
    {
      char chunk[16384];
      ssize_t n;

      g_assert_cmpint (status, !=, PADDOCK_COMPAT_RELAY_ERROR);
      while ((n = read (dst[1], chunk, sizeof chunk)) > 0)
        g_string_append_len (received, chunk, n);
      status = paddock_compat_relay_move (&relay, src[0], dst[0], 1 << 20);
    }
  g_assert_cmpuint (relay.pending, ==, 0);
  shutdown (dst[0], SHUT_WR);
  {
    int flags = fcntl (dst[1], F_GETFL);

    fcntl (dst[1], F_SETFL, flags & ~O_NONBLOCK);
    got = read_all (dst[1]);
    g_string_append (received, got);
  }
  g_assert_cmpuint (received->len, ==, total);
  for (gsize i = 0; i < received->len; i++)
    if (received->str[i] != (char) ('a' + (i % (64 * 1024)) % 26))
      g_assert_not_reached ();
  g_string_free (received, TRUE);

  paddock_compat_relay_close (&relay);
  paddock_compat_relay_close (&relay);   /* again: harmless */
  for (int i = 0; i < 2; i++)
    {
      close (src[i]);
      close (dst[i]);
    }
}

static void
test_rename (void)
{
  g_autofree char *dir = make_dir ();
  paddock_autofd int dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_autofree char *a = NULL;
  g_autofree char *b = NULL;

  g_assert_cmpint (dfd, >=, 0);
  put (dir, "a", "user's");
  put (dir, "b", "staged");

  g_assert_cmpint (paddock_compat_rename_noreplace (dfd, "b", dfd, "a"), ==, -1);
  g_assert_cmpint (errno, ==, PADDOCK_COMPAT_LINUX ? EEXIST : ENOSYS);
  a = get (dir, "a");
  g_assert_cmpstr (a, ==, "user's");
  g_clear_pointer (&a, g_free);

  if (PADDOCK_COMPAT_LINUX)
    {
      g_assert_cmpint (paddock_compat_rename_noreplace (dfd, "b", dfd, "c"), ==, 0);
      g_assert_cmpint (paddock_compat_rename_exchange (dfd, "c", dfd, "a"), ==, 0);
      a = get (dir, "a");
      b = get (dir, "c");
      g_assert_cmpstr (a, ==, "staged");
      g_assert_cmpstr (b, ==, "user's");
    }
  else
    {
      g_assert_cmpint (paddock_compat_rename_exchange (dfd, "b", dfd, "a"), ==, -1);
      g_assert_cmpint (errno, ==, ENOSYS);
      a = get (dir, "a");
      b = get (dir, "b");
      g_assert_cmpstr (a, ==, "user's");
      g_assert_cmpstr (b, ==, "staged");
    }
  remove_dir (dir);
}

static void
test_openat2 (void)
{
  g_autofree char *dir = make_dir ();
  g_autofree char *sub = g_build_filename (dir, "sub", NULL);
  g_autofree char *link = g_build_filename (dir, "link", NULL);
  paddock_autofd int root = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  paddock_autofd int fd = -1;

  g_assert_cmpint (root, >=, 0);
  g_assert_cmpint (g_mkdir (sub, 0700), ==, 0);
  put (sub, "file", "x");
  g_assert_cmpint (symlink ("sub", link), ==, 0);

  fd = paddock_compat_openat2_beneath (root, "sub/file", O_RDONLY, 0);
  if (PADDOCK_COMPAT_LINUX)
    {
      g_assert_cmpint (fd, >=, 0);
      g_assert_true (fcntl (fd, F_GETFD) & FD_CLOEXEC);
      paddock_close_fd (&fd);
      /* A link on the way, or a way up, is refused, never followed. */
      g_assert_cmpint (paddock_compat_openat2_beneath (root, "link/file", O_RDONLY, 0), ==, -1);
      g_assert_cmpint (errno, ==, ELOOP);
      g_assert_cmpint (paddock_compat_openat2_beneath (root, "../x", O_RDONLY, 0), ==, -1);
      g_assert_cmpint (errno, ==, EXDEV);
    }
  else
    {
      g_assert_cmpint (fd, ==, -1);
      g_assert_cmpint (errno, ==, ENOSYS);
    }
  remove_dir (dir);
}

static void
test_clone (void)
{
  g_autofree char *dir = make_dir ();
  g_autofree char *from_path = g_build_filename (dir, "from", NULL);
  g_autofree char *to_path = g_build_filename (dir, "to", NULL);
  paddock_autofd int from = -1;
  paddock_autofd int to = -1;
  g_autofree char *copied = NULL;

  put (dir, "from", "the same bytes");
  from = open (from_path, O_RDONLY | O_CLOEXEC);
  to = open (to_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  g_assert_cmpint (from, >=, 0);
  g_assert_cmpint (to, >=, 0);

  if (paddock_compat_clone_file_data (to, from) == 0)
    {
      /* Only a filesystem with shared extents, on Linux, says yes. */
      g_assert_true (PADDOCK_COMPAT_LINUX);
      copied = get (dir, "to");
      g_assert_cmpstr (copied, ==, "the same bytes");
    }
  else if (PADDOCK_COMPAT_LINUX)
    /* No shared extents here (tmpfs, ext4): the callers copy instead. */
    g_assert_true (errno == EOPNOTSUPP || errno == EXDEV || errno == EINVAL || errno == ENOTTY);
  else
    {
      g_assert_cmpint (errno, ==, EOPNOTSUPP);
      copied = get (dir, "to");
      g_assert_cmpstr (copied, ==, "");
    }
  remove_dir (dir);
}

static void
test_listening_sockets (void)
{
  paddock_autofd int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t length = sizeof addr;
  g_autoptr(GHashTable) listening = NULL;
  struct stat st;
  guint16 port;

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (bind (fd, (struct sockaddr *) &addr, sizeof addr), ==, 0);
  g_assert_cmpint (listen (fd, 1), ==, 0);
  g_assert_cmpint (getsockname (fd, (struct sockaddr *) &addr, &length), ==, 0);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  port = ntohs (addr.sin_port);

  listening = _paddock_listening_sockets ();
  if (PADDOCK_COMPAT_LINUX)
    {
      if (listening == NULL)
        {
          g_test_skip ("this kernel does not answer sock_diag (said in the warning above)");
          return;
        }
      g_assert_true (_paddock_socket_still_listening (listening, port, (guint64) st.st_ino));
      /* Another socket on the same port is not the one handed out. */
      g_assert_false (_paddock_socket_still_listening (listening, port, (guint64) st.st_ino + 1));
      g_assert_false (_paddock_socket_still_listening (listening, (guint16) (port + 1), (guint64) st.st_ino));
    }
  else
    {
      /* Unknown keeps a port its owner's, whichever socket is asked of. */
      g_assert_null (listening);
      g_assert_true (_paddock_socket_still_listening (NULL, port, (guint64) st.st_ino + 1));
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/compat/pidfd", test_pidfd);
  g_test_add_func ("/compat/proc", test_proc);
  g_test_add_func ("/compat/poller", test_poller);
  g_test_add_func ("/compat/fd-watch", test_fd_watch);
  g_test_add_func ("/compat/relay", test_relay);
  g_test_add_func ("/compat/rename", test_rename);
  g_test_add_func ("/compat/openat2", test_openat2);
  g_test_add_func ("/compat/clone", test_clone);
  g_test_add_func ("/compat/listening-sockets", test_listening_sockets);

  return g_test_run ();
}
