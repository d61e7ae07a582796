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
  GSource      *watch;    /* readable: the origin closed it (or spoke out of turn) */
} Idle;


static void
idle_free (Idle *idle)
{
  if (idle->watch != NULL)
    {
      g_source_destroy (idle->watch);
      g_source_unref (idle->watch);
    }
  paddock_close_fd (&idle->fd);
  g_free (idle->host);
  g_free (idle);
}

static gboolean
idle_readable_cb (gint         fd,
                  GIOCondition condition,
                  gpointer     user_data)
{
  Idle *idle = user_data;

  /* Closed by the origin, or bytes nobody asked for: either way unusable. */
  g_queue_remove (&idle->proxy->idle, idle);
  g_clear_pointer (&idle->watch, g_source_unref);
  idle_free (idle);
  return G_SOURCE_REMOVE;
}

void
_paddock_proxy_pool_put (PaddockProxy *self,
                         const char   *host,
                         guint         port,
                         int           fd)
{
  Idle *idle = g_new0 (Idle, 1);

  idle->proxy = self;
  idle->host = g_strdup (host);
  idle->port = port;
  idle->fd = fd;
  idle->since = g_get_monotonic_time ();
  idle->watch = g_unix_fd_source_new (fd, G_IO_IN);
  g_source_set_callback (idle->watch, (GSourceFunc) (void (*) (void)) idle_readable_cb, idle, NULL);
  g_source_attach (idle->watch, g_main_context_get_thread_default ());
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
