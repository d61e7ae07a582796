/* paddock-proxy-pool.c — origin connections kept open between requests
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * With a new origin connection per request, TCP set-up and tear-down was
 * most of the proxy thread's time (see paddock-proxy.c). A connection
 * whose response ended cleanly waits here (POOL_MAX_IDLE in all, each for
 * POOL_IDLE_USEC) for the next request to the same host and port, which
 * the policy judges first; the pool is emptied when the policy changes.
 */

#include "config.h"

#include <glib-unix.h>
#include <string.h>

#include "paddock-autofd.h"
#include "paddock-proxy-private.h"

/* An origin connection kept open after a complete response, for the next
 * request to the same host and port (which the policy judges first). */
typedef struct
{
  PaddockProxy *proxy;
  char         *host;
  guint         port;
  int           fd;
  gint64        since;
  gboolean      watched;  /* waiting to be readable: the origin closed it (or spoke out of turn) */
} Idle;


static void
idle_free (Idle *idle)
{
  if (idle->watched)
    paddock_compat_fd_watch_remove (idle->proxy->fd_watch, idle->fd, G_IO_IN);
  paddock_close_fd (&idle->fd);
  g_free (idle->host);
  g_free (idle);
}

static void
idle_readable_cb (int          fd,
                  GIOCondition condition,
                  gpointer     user_data)
{
  Idle *idle = user_data;

  /* Closed by the origin, or bytes nobody asked for: either way unusable. */
  idle->watched = FALSE;
  g_queue_remove (&idle->proxy->idle, idle);
  idle_free (idle);
}

void
_paddock_proxy_pool_put (PaddockProxy *self,
                         const char   *host,
                         guint         port,
                         int           fd)
{
  g_autoptr(GError) error = NULL;
  Idle *idle = g_new0 (Idle, 1);

  idle->proxy = self;
  idle->host = g_strdup (host);
  idle->port = port;
  idle->fd = fd;
  idle->since = g_get_monotonic_time ();
  if (!paddock_compat_fd_watch_add (self->fd_watch, fd, G_IO_IN, idle_readable_cb, idle, &error))
    {
      /* Unwatched, a close by the origin would go unseen: not kept. */
      g_debug ("Not keeping an origin connection: %s", error->message);
      idle_free (idle);
      return;
    }
  idle->watched = TRUE;
  g_queue_push_tail (&self->idle, idle);
  while (self->idle.length > POOL_MAX_IDLE)
    idle_free (g_queue_pop_head (&self->idle));
}

/* A kept connection to @host:@port (the newest), or -1. */
int
_paddock_proxy_pool_take (PaddockProxy *self,
                          const char   *host,
                          guint         port)
{
  gint64 now = g_get_monotonic_time ();

  for (GList *l = self->idle.tail; l != NULL; )
    {
      Idle *idle = l->data;
      GList *prev = l->prev;

      if (now - idle->since > POOL_IDLE_USEC)
        {
          g_queue_delete_link (&self->idle, l);
          idle_free (idle);
        }
      else if (idle->port == port && strcmp (idle->host, host) == 0)
        {
          int fd = idle->fd;

          paddock_compat_fd_watch_remove (self->fd_watch, fd, G_IO_IN);
          idle->watched = FALSE;
          idle->fd = -1;
          g_queue_delete_link (&self->idle, l);
          idle_free (idle);
          return fd;
        }
      l = prev;
    }
  return -1;
}

void
_paddock_proxy_pool_clear (PaddockProxy *self)
{
  Idle *idle;

  while ((idle = g_queue_pop_head (&self->idle)) != NULL)
    idle_free (idle);
}
