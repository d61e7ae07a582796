/* paddock-compat-fd-watch.c — one-shot waits for many sockets in a GMainContext, without a GSource each
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The session proxy (daemon/network/paddock-proxy*.c) serves every
 * connection from one thread's GMainContext, and each step of a request
 * waits for one socket to become readable or writable, once. As a
 * GSource per wait, GLib 2.74 costs that thread an eventfd write each
 * time a source's fd is added to or removed from the context
 * (g_main_context_add_poll_unlocked() wakes the context even from its own
 * thread), a rebuilt poll array, and a poll() over every socket of every
 * connection on each iteration: with 64 clients, ~6 such writes a request
 * and a poll of ~130 sockets (strace of bench-network).
 *
 * On Linux the waits share one epoll set, which is the only fd the
 * context polls. Each fd is registered EPOLLONESHOT with the directions
 * waited for: the kernel disarms it when it fires, so a wait costs one
 * epoll_ctl (arming) and nothing to take it down, and the fd stays in
 * the set, disarmed, until it is closed (the kernel then drops it) or
 * waited for again (re-armed). Events carry a generation counted up each
 * time an fd goes from no wait to one, so an event read in the same batch
 * as the close of its fd never reaches a new socket given the same
 * number. The one rule for callers: remove a pending wait before closing
 * its fd (else it never fires, and a new socket given the number cannot be
 * waited for that way: its slot is still taken).
 *
 * Unlike PaddockCompatPoller (a blocking wait for a thread of its own,
 * edge-triggered), this is level-triggered and one-shot, as a GSource per
 * wait was: a step may wait again without reading to EAGAIN first.
 *
 * Elsewhere the fallback is what the proxy did before: a GLib fd source
 * per wait (slower with many connections, the same behaviour).
 */

#include "config.h"

#include "paddock-compat.h"
#include "paddock-compat-fd-watch.h"

#include <errno.h>
#include <glib-unix.h>
#include <unistd.h>

#if PADDOCK_COMPAT_LINUX
#include <sys/epoll.h>
#endif

/* Events taken from the kernel per dispatch; more wait for the next. */
#define EVENTS_PER_DISPATCH 64

typedef struct
{
  PaddockCompatFdWatchFunc  func;      /* NULL: nobody waits this way */
  gpointer                  user_data;
#if !PADDOCK_COMPAT_LINUX
  GSource                  *source;
#endif
} Slot;

typedef struct
{
  Slot     in;
  Slot     out;
#if PADDOCK_COMPAT_LINUX
  guint32  generation;  /* in each event's data, beside the fd */
  guint32  armed;       /* the EPOLLIN/EPOLLOUT bits the kernel has armed */
  gboolean registered;  /* added to the epoll set once (so MOD, not ADD, is tried first) */
#endif
} Entry;

#if PADDOCK_COMPAT_LINUX
typedef struct
{
  GSource               source;
  PaddockCompatFdWatch *watch;
} EpollSource;
#endif

struct _PaddockCompatFdWatch
{
  GMainContext *context;
  GPtrArray    *entries;     /* Entry*, indexed by fd, made on first use */
#if PADDOCK_COMPAT_LINUX
  int           epoll_fd;
  GSource      *source;      /* polls epoll_fd */
#endif
};

static Entry *
entry_get (PaddockCompatFdWatch *self,
           int                   fd,
           gboolean              create)
{
  Entry *entry;

  if ((guint) fd >= self->entries->len)
    {
      if (!create)
        return NULL;
      g_ptr_array_set_size (self->entries, fd + 1);
    }
  entry = g_ptr_array_index (self->entries, fd);
  if (entry == NULL && create)
    {
      entry = g_new0 (Entry, 1);
      g_ptr_array_index (self->entries, fd) = entry;
    }
  return entry;
}

static Slot *
entry_slot (Entry        *entry,
            GIOCondition  condition)
{
  return condition == G_IO_IN ? &entry->in : &entry->out;
}

static void
entry_free (gpointer data)
{
  Entry *entry = data;

#if !PADDOCK_COMPAT_LINUX
  if (entry != NULL)
    {
      if (entry->in.source != NULL)
        {
          g_source_destroy (entry->in.source);
          g_source_unref (entry->in.source);
        }
      if (entry->out.source != NULL)
        {
          g_source_destroy (entry->out.source);
          g_source_unref (entry->out.source);
        }
    }
#endif
  g_free (entry);
}

#if PADDOCK_COMPAT_LINUX

static guint32
entry_wanted (Entry *entry)
{
  return (entry->in.func != NULL ? EPOLLIN : 0) | (entry->out.func != NULL ? EPOLLOUT : 0);
}

/* Arms the kernel's registration of @fd for what its slots wait for. On
 * failure nothing changed: the registration, if any, is as it was. */
static gboolean
entry_arm (PaddockCompatFdWatch  *self,
           int                    fd,
           Entry                 *entry,
           GError               **error)
{
  guint32 wanted = entry_wanted (entry);
  struct epoll_event event = {
    .events = wanted | EPOLLONESHOT,
    .data.u64 = ((guint64) entry->generation << 32) | (guint32) fd,
  };
  int op, saved_errno;

  if (wanted == entry->armed)
    return TRUE;

  /* What we believe about the registration can be out of date in two
   * harmless ways: the fd was closed since (the kernel dropped it: MOD
   * says ENOENT), or this number is a new socket that was never ours. */
  op = entry->registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
  if (epoll_ctl (self->epoll_fd, op, fd, &event) != 0 &&
      !((errno == ENOENT || errno == EEXIST) &&
        epoll_ctl (self->epoll_fd, op == EPOLL_CTL_MOD ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event) == 0))
    {
      saved_errno = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                   "Could not wait for fd %d: %s", fd, g_strerror (saved_errno));
      return FALSE;
    }
  entry->registered = TRUE;
  entry->armed = wanted;
  return TRUE;
}

static void
slot_fire (int           fd,
           Slot         *slot,
           GIOCondition  condition)
{
  PaddockCompatFdWatchFunc func = slot->func;
  gpointer user_data = slot->user_data;

  slot->func = NULL;
  slot->user_data = NULL;
  func (fd, condition, user_data);
}

static void
deliver (PaddockCompatFdWatch     *self,
         const struct epoll_event *event)
{
  int fd = (int) (guint32) event->data.u64;
  guint32 generation = (guint32) (event->data.u64 >> 32);
  Entry *entry = entry_get (self, fd, FALSE);
  GIOCondition condition = 0;

  /* Left from an fd closed earlier in this batch, or from a wait taken
   * back and given again (its own, current event comes next time). */
  if (entry == NULL || entry->generation != generation)
    return;

  if (event->events & EPOLLIN)
    condition |= G_IO_IN;
  if (event->events & EPOLLOUT)
    condition |= G_IO_OUT;
  if (event->events & EPOLLERR)
    condition |= G_IO_ERR;
  if (event->events & EPOLLHUP)
    condition |= G_IO_HUP;

  /* EPOLLONESHOT: the kernel disarmed all of it. Each callback may wait
   * again, take back the other wait or close the fd; entries live as long
   * as the watch, so @entry stays valid, and the generation says whether
   * it is still the same use of the fd. */
  entry->armed = 0;
  if (entry->in.func != NULL && (condition & (G_IO_IN | G_IO_ERR | G_IO_HUP)))
    slot_fire (fd, &entry->in, condition);
  if (entry->generation == generation &&
      entry->out.func != NULL && (condition & (G_IO_OUT | G_IO_ERR | G_IO_HUP)))
    slot_fire (fd, &entry->out, condition);

  if (entry->generation == generation)
    {
      g_autoptr(GError) error = NULL;

      /* A wait the event did not satisfy stays: arm it again. Failing
       * that (the kernel out of memory), it fires now with G_IO_ERR, so
       * that its owner gives up instead of waiting for ever. */
      if (!entry_arm (self, fd, entry, &error))
        {
          g_debug ("%s", error->message);
          if (entry->in.func != NULL)
            slot_fire (fd, &entry->in, G_IO_ERR);
          if (entry->generation == generation && entry->out.func != NULL)
            slot_fire (fd, &entry->out, G_IO_ERR);
        }
    }
}

static gboolean
epoll_source_dispatch (GSource     *source,
                       GSourceFunc  callback,
                       gpointer     user_data)
{
  PaddockCompatFdWatch *self = ((EpollSource *) source)->watch;
  struct epoll_event events[EVENTS_PER_DISPATCH];
  int n;

  do
    n = epoll_wait (self->epoll_fd, events, G_N_ELEMENTS (events), 0);
  while (n < 0 && errno == EINTR);

  for (int i = 0; i < n; i++)
    deliver (self, &events[i]);
  return G_SOURCE_CONTINUE;
}

static GSourceFuncs epoll_source_funcs = {
  .dispatch = epoll_source_dispatch,
};

#else  /* !PADDOCK_COMPAT_LINUX */

static gboolean
slot_source_cb (gint          fd,
                GIOCondition  condition,
                gpointer      user_data)
{
  Slot *slot = user_data;
  PaddockCompatFdWatchFunc func = slot->func;
  gpointer data = slot->user_data;

  g_clear_pointer (&slot->source, g_source_unref);
  slot->func = NULL;
  slot->user_data = NULL;
  func (fd, condition, data);
  return G_SOURCE_REMOVE;
}

#endif

/**
 * paddock_compat_fd_watch_new:
 * @context: (nullable): where the callbacks run (%NULL: the global default)
 *
 * Returns: (transfer full): a watch with no waits, or %NULL when the
 *   kernel gives no epoll fd (@error set)
 */
PaddockCompatFdWatch *
paddock_compat_fd_watch_new (GMainContext  *context,
                             GError       **error)
{
  g_autoptr(PaddockCompatFdWatch) self = g_new0 (PaddockCompatFdWatch, 1);

#if PADDOCK_COMPAT_LINUX
  self->epoll_fd = -1;
#endif
  self->context = context != NULL ? g_main_context_ref (context) : g_main_context_ref (g_main_context_default ());
  self->entries = g_ptr_array_new_with_free_func (entry_free);

#if PADDOCK_COMPAT_LINUX
  self->epoll_fd = epoll_create1 (EPOLL_CLOEXEC);
  if (self->epoll_fd < 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                   "Could not make an epoll set: %s", g_strerror (saved_errno));
      return NULL;
    }
  self->source = g_source_new (&epoll_source_funcs, sizeof (EpollSource));
  ((EpollSource *) self->source)->watch = self;
  g_source_set_static_name (self->source, "paddock-fd-watch");
  g_source_add_unix_fd (self->source, self->epoll_fd, G_IO_IN);
  g_source_attach (self->source, self->context);
#endif
  return g_steal_pointer (&self);
}

/**
 * paddock_compat_fd_watch_add:
 * @condition: %G_IO_IN or %G_IO_OUT
 * @func: runs once, in the watch's context, when @fd is ready that way
 *   (or has an error or hang-up pending)
 *
 * Waits for @fd. One wait per fd and direction at a time: a second is a
 * programming error. Remove a wait that has not fired before closing @fd.
 *
 * Returns: %FALSE with @error set when the kernel refuses (out of memory,
 *   or the fd is not one epoll can watch); nothing is then waited for
 */
gboolean
paddock_compat_fd_watch_add (PaddockCompatFdWatch      *self,
                             int                        fd,
                             GIOCondition               condition,
                             PaddockCompatFdWatchFunc   func,
                             gpointer                   user_data,
                             GError                   **error)
{
  Entry *entry;
  Slot *slot;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (fd >= 0, FALSE);
  g_return_val_if_fail (condition == G_IO_IN || condition == G_IO_OUT, FALSE);
  g_return_val_if_fail (func != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  entry = entry_get (self, fd, TRUE);
  slot = entry_slot (entry, condition);
  g_return_val_if_fail (slot->func == NULL, FALSE);

#if PADDOCK_COMPAT_LINUX
  {
    guint32 generation = entry->generation, armed = entry->armed;

    /* A new use of the fd: events already read are not for it, and the
     * registration (perhaps still armed for a wait taken back, perhaps
     * for a closed fd of this number) is made anew with this generation. */
    if (entry->in.func == NULL && entry->out.func == NULL)
      {
        entry->generation++;
        entry->armed = 0;
      }
    slot->func = func;
    slot->user_data = user_data;
    if (!entry_arm (self, fd, entry, error))
      {
        slot->func = NULL;
        slot->user_data = NULL;
        entry->generation = generation;
        entry->armed = armed;
        return FALSE;
      }
    return TRUE;
  }
#else
  (void) error;
  slot->func = func;
  slot->user_data = user_data;
  slot->source = g_unix_fd_source_new (fd, condition);
  g_source_set_callback (slot->source, (GSourceFunc) (void (*) (void)) slot_source_cb, slot, NULL);
  g_source_attach (slot->source, self->context);
  return TRUE;
#endif
}

/* Takes back a wait that has not fired (nothing if there is none). */
void
paddock_compat_fd_watch_remove (PaddockCompatFdWatch *self,
                                int                   fd,
                                GIOCondition          condition)
{
  Entry *entry;
  Slot *slot;

  g_return_if_fail (self != NULL);
  g_return_if_fail (condition == G_IO_IN || condition == G_IO_OUT);

  if (fd < 0 || (entry = entry_get (self, fd, FALSE)) == NULL)
    return;
  slot = entry_slot (entry, condition);
  if (slot->func == NULL)
    return;
  slot->func = NULL;
  slot->user_data = NULL;

#if PADDOCK_COMPAT_LINUX
  /* No system call: the registration may stay armed for this direction.
   * If it fires, deliver() finds nobody waiting that way and re-arms only
   * what is still waited for; usually the fd is closed first, which drops
   * it. That is at most one spurious wake-up, never a busy loop
   * (EPOLLONESHOT), and the common end of a wait costs nothing. */
#else
  g_source_destroy (slot->source);
  g_clear_pointer (&slot->source, g_source_unref);
#endif
}

gboolean
paddock_compat_fd_watch_waiting (PaddockCompatFdWatch *self,
                                 int                   fd,
                                 GIOCondition          condition)
{
  Entry *entry;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (condition == G_IO_IN || condition == G_IO_OUT, FALSE);

  if (fd < 0 || (entry = entry_get (self, fd, FALSE)) == NULL)
    return FALSE;
  return entry_slot (entry, condition)->func != NULL;
}

/* Drops every wait (none fires) and the epoll set. */
void
paddock_compat_fd_watch_free (PaddockCompatFdWatch *self)
{
  if (self == NULL)
    return;

#if PADDOCK_COMPAT_LINUX
  if (self->source != NULL)
    {
      g_source_destroy (self->source);
      g_source_unref (self->source);
    }
  if (self->epoll_fd >= 0)
    close (self->epoll_fd);
#endif
  g_ptr_array_unref (self->entries);
  g_main_context_unref (self->context);
  g_free (self);
}
