/* paddock-compat-poll.c — waiting on many sockets at once, from one thread
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The port forward's worker (daemon/network/paddock-port-forward.c) waits
 * on every socket of its connections and on a wake-up from the thread that
 * hands it new ones. Linux has epoll, edge-triggered (each fd added once,
 * with every event it may want, for its life: no system call per change of
 * direction) and an eventfd to wake it. The fallback is poll(2) and a pipe,
 * level-triggered: it watches exactly what the caller says it waits for
 * (paddock_compat_poller_want()), so an idle connection's writable socket
 * does not spin it. A caller written for both reads and writes until
 * EAGAIN, as edge triggering needs, and says what it then waits for, as
 * level triggering needs; the epoll poller ignores the latter. This is
 * not a security layer: the fallback is slower (poll's cost grows with the
 * fds), never weaker, so it is a real implementation, not an ENOSYS.
 * kqueue(2) (EV_CLEAR) is the macOS and BSD port of the edge-triggered one
 * (docs/PORTING.md).
 *
 * One thread adds, wants, removes and waits; paddock_compat_poller_wake()
 * may be called from any.
 */

#include "config.h"

#include "paddock-compat.h"
#include "paddock-compat-poll.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <unistd.h>

#if PADDOCK_COMPAT_LINUX
#include <sys/epoll.h>
#include <sys/eventfd.h>
#else
#include <poll.h>
#endif

/* Also bounds the fallback's table: a forward holds at most a few hundred
 * connections (two fds each), and poll() walks them all each time. */
#define MAX_FDS 65536

#if !PADDOCK_COMPAT_LINUX
typedef struct
{
  int      fd;          /* -1: a removed entry, dropped before the next wait */
  guint    wanted;
  gpointer data;
} Watch;
#endif

struct _PaddockCompatPoller
{
#if PADDOCK_COMPAT_LINUX
  int     epoll_fd;
  int     wake_fd;      /* eventfd */
#else
  int     wake_pipe[2]; /* [0] read by the waiter, [1] written by wake() */
  GArray *watches;      /* Watch */
  GArray *pollfds;      /* struct pollfd, rebuilt for each wait */
#endif
};

#if !PADDOCK_COMPAT_LINUX
static Watch *
find_watch (PaddockCompatPoller *self,
            int                  fd)
{
  for (guint i = 0; i < self->watches->len; i++)
    {
      Watch *watch = &g_array_index (self->watches, Watch, i);

      if (watch->fd == fd)
        return watch;
    }
  return NULL;
}
#endif

/* NULL and an error when the kernel will not give the fds. */
PaddockCompatPoller *
paddock_compat_poller_new (GError **error)
{
  g_autoptr(PaddockCompatPoller) self = g_new0 (PaddockCompatPoller, 1);

#if PADDOCK_COMPAT_LINUX
  struct epoll_event wake = { .events = EPOLLIN, .data.ptr = NULL };
  int saved_errno;

  self->wake_fd = -1;
  self->epoll_fd = epoll_create1 (EPOLL_CLOEXEC);
  if (self->epoll_fd >= 0)
    self->wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (self->epoll_fd < 0 || self->wake_fd < 0 ||
      epoll_ctl (self->epoll_fd, EPOLL_CTL_ADD, self->wake_fd, &wake) != 0)
    {
      saved_errno = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                   "Could not make a poller: %s", g_strerror (saved_errno));
      return NULL;
    }
#else
  self->wake_pipe[0] = self->wake_pipe[1] = -1;
  self->watches = g_array_new (FALSE, FALSE, sizeof (Watch));
  self->pollfds = g_array_new (FALSE, FALSE, sizeof (struct pollfd));
  /* FD_CLOEXEC from creation (pipe2 where the system has it). */
  if (!g_unix_open_pipe (self->wake_pipe, FD_CLOEXEC, error) ||
      !g_unix_set_fd_nonblocking (self->wake_pipe[0], TRUE, error) ||
      !g_unix_set_fd_nonblocking (self->wake_pipe[1], TRUE, error))
    return NULL;
#endif
  return g_steal_pointer (&self);
}

/* TRUE: an fd's events are reported once per change (epoll's EPOLLET),
 * whatever was asked with paddock_compat_poller_want(). */
gboolean
paddock_compat_poller_edge_triggered (PaddockCompatPoller *self)
{
  (void) self;
  return PADDOCK_COMPAT_LINUX;
}

/* Watches FD. WANTED is what the fallback watches until the next want()
 * (errors always); the edge-triggered poller watches both ways from now
 * on. FALSE (errno set) when it cannot. */
gboolean
paddock_compat_poller_add (PaddockCompatPoller *self,
                           int                  fd,
                           guint                wanted,
                           gpointer             data)
{
  g_return_val_if_fail (fd >= 0 && data != NULL, FALSE);

#if PADDOCK_COMPAT_LINUX
  {
    struct epoll_event event = {
      .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
      .data.ptr = data,
    };

    (void) wanted;
    return epoll_ctl (self->epoll_fd, EPOLL_CTL_ADD, fd, &event) == 0;
  }
#else
  {
    Watch watch = { fd, wanted, data };

    if (find_watch (self, fd) != NULL)
      {
        errno = EEXIST;
        return FALSE;
      }
    if (self->watches->len >= MAX_FDS)
      {
        errno = ENOSPC;
        return FALSE;
      }
    g_array_append_val (self->watches, watch);
    return TRUE;
  }
#endif
}

/* What FD's owner waits for now (PADDOCK_COMPAT_POLL_IN, _OUT, or 0 for
 * nothing but errors). A no-op for the edge-triggered poller. */
void
paddock_compat_poller_want (PaddockCompatPoller *self,
                            int                  fd,
                            guint                wanted)
{
#if PADDOCK_COMPAT_LINUX
  (void) self;
  (void) fd;
  (void) wanted;
#else
  Watch *watch = fd >= 0 ? find_watch (self, fd) : NULL;

  if (watch != NULL)
    watch->wanted = wanted;
#endif
}

/* Stops watching FD, before it is closed: an fd is out of an epoll set
 * only once its file's last reference goes, and a child being forked may
 * hold one. Removing an fd not watched (or -1) does nothing. No event of
 * the current batch names it after. */
void
paddock_compat_poller_remove (PaddockCompatPoller *self,
                              int                  fd)
{
  if (fd < 0)
    return;
#if PADDOCK_COMPAT_LINUX
  epoll_ctl (self->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
#else
  {
    Watch *watch = find_watch (self, fd);

    if (watch != NULL)
      watch->fd = -1;
  }
#endif
}

/* Up to MAX_EVENTS events, waiting TIMEOUT_MS at most (-1: for ever).
 * The number, or -1 with errno set (EINTR included). A wake-up is one
 * event with data NULL, its count read. */
int
paddock_compat_poller_wait (PaddockCompatPoller    *self,
                            PaddockCompatPollEvent *events,
                            int                     max_events,
                            int                     timeout_ms)
{
  int n_events = 0;

  g_return_val_if_fail (max_events > 0, -1);

#if PADDOCK_COMPAT_LINUX
  {
    struct epoll_event ready[64];
    int n = epoll_wait (self->epoll_fd, ready, MIN (max_events, (int) G_N_ELEMENTS (ready)), timeout_ms);

    for (int i = 0; i < n; i++)
      {
        guint flags = 0;

        if (ready[i].data.ptr == NULL)
          {
            guint64 count;

            /* Reset for the next wake-up. Nothing to read (EAGAIN) is
             * the only failure a non-blocking eventfd has: harmless. */
            if (read (self->wake_fd, &count, sizeof count) < 0)
              count = 0;
          }
        if (ready[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP))
          flags |= PADDOCK_COMPAT_POLL_IN;
        if (ready[i].events & EPOLLOUT)
          flags |= PADDOCK_COMPAT_POLL_OUT;
        if (ready[i].events & EPOLLERR)
          flags |= PADDOCK_COMPAT_POLL_ERR;
        events[n_events++] = (PaddockCompatPollEvent) { ready[i].data.ptr, flags };
      }
    return n < 0 ? -1 : n_events;
  }
#else
  {
    struct pollfd wake = { .fd = self->wake_pipe[0], .events = POLLIN };
    int n;

    /* The removed entries go now: none of them can be in a batch of events
     * still being handled. */
    for (guint i = self->watches->len; i > 0; i--)
      if (g_array_index (self->watches, Watch, i - 1).fd < 0)
        g_array_remove_index_fast (self->watches, i - 1);

    g_array_set_size (self->pollfds, 0);
    g_array_append_val (self->pollfds, wake);
    for (guint i = 0; i < self->watches->len; i++)
      {
        const Watch *watch = &g_array_index (self->watches, Watch, i);
        struct pollfd entry = { .fd = watch->fd, .events = 0 };

        if (watch->wanted & PADDOCK_COMPAT_POLL_IN)
          entry.events |= POLLIN;
        if (watch->wanted & PADDOCK_COMPAT_POLL_OUT)
          entry.events |= POLLOUT;
        g_array_append_val (self->pollfds, entry);
      }

    n = poll ((struct pollfd *) (gpointer) self->pollfds->data, self->pollfds->len, timeout_ms);
    if (n < 0)
      return -1;

    for (guint i = 0; i < self->pollfds->len && n_events < max_events; i++)
      {
        const struct pollfd *entry = &g_array_index (self->pollfds, struct pollfd, i);
        guint flags = 0;

        if (entry->revents == 0)
          continue;
        if (i == 0)
          {
            char drain[64];

            while (read (self->wake_pipe[0], drain, sizeof drain) > 0)
              ;
            events[n_events++] = (PaddockCompatPollEvent) { NULL, PADDOCK_COMPAT_POLL_IN };
            continue;
          }
        /* A hang-up reads as EOF, which is how the owner learns of it. */
        if (entry->revents & (POLLIN | POLLHUP))
          flags |= PADDOCK_COMPAT_POLL_IN;
        if (entry->revents & POLLOUT)
          flags |= PADDOCK_COMPAT_POLL_OUT;
        if (entry->revents & (POLLERR | POLLNVAL))
          flags |= PADDOCK_COMPAT_POLL_ERR;
        events[n_events++] = (PaddockCompatPollEvent) { g_array_index (self->watches, Watch, i - 1).data, flags };
      }
    return n_events;
  }
#endif
}

/* Makes the waiter's wait return (an event with data NULL); from any
 * thread. FALSE (errno set) if it could not. */
gboolean
paddock_compat_poller_wake (PaddockCompatPoller *self)
{
#if PADDOCK_COMPAT_LINUX
  guint64 one = 1;

  return write (self->wake_fd, &one, sizeof one) == sizeof one;
#else
  /* A full pipe has a wake-up pending already. */
  return write (self->wake_pipe[1], "", 1) == 1 || errno == EAGAIN;
#endif
}

void
paddock_compat_poller_free (PaddockCompatPoller *self)
{
  if (self == NULL)
    return;
#if PADDOCK_COMPAT_LINUX
  if (self->epoll_fd >= 0)
    close (self->epoll_fd);
  if (self->wake_fd >= 0)
    close (self->wake_fd);
#else
  for (int i = 0; i < 2; i++)
    if (self->wake_pipe[i] >= 0)
      close (self->wake_pipe[i]);
  g_clear_pointer (&self->watches, g_array_unref);
  g_clear_pointer (&self->pollfds, g_array_unref);
#endif
  g_free (self);
}
