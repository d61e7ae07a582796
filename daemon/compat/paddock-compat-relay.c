/* paddock-compat-relay.c — bytes moved from one socket to another, kernel to kernel where it can
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The port forward moves what a session's server sends to the client
 * outside. Linux splices it (splice(2)) through a pipe: the pages go from
 * one socket to the other without a copy into user space. The fallback is
 * a read and write loop through a buffer of the same size: one copy more,
 * the same bytes in the same order, the same back-pressure (nothing more
 * is read while bytes are held). It is not a security layer, so a slower
 * equivalent is acceptable here, unlike the compat points that answer
 * ENOSYS. The relay's size is in pages either way, so the forward's one
 * budget (PADDOCK_PORT_FORWARD_PIPE_BUDGET_PAGES) bounds both: kernel
 * pipe pages on Linux, heap elsewhere.
 */

#include "config.h"

#include "paddock-compat.h"
#include "paddock-compat-relay.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

/* The fallback's buffer to start with: Linux's default pipe size. */
#define FALLBACK_PAGES 16

static long
page_size (void)
{
  long page = sysconf (_SC_PAGESIZE);

  return page > 0 ? page : 4096;
}

/* TRUE where the bytes never pass through user space (splice). */
gboolean
paddock_compat_relay_kernel_to_kernel (void)
{
  return PADDOCK_COMPAT_LINUX;
}

/* FALSE (errno set) when the pipe cannot be made. Every fd CLOEXEC. */
gboolean
paddock_compat_relay_open (PaddockCompatRelay *relay)
{
  *relay = (PaddockCompatRelay) PADDOCK_COMPAT_RELAY_INIT;
#if PADDOCK_COMPAT_LINUX
  return pipe2 (relay->pipe, O_CLOEXEC | O_NONBLOCK) == 0;
#else
  relay->size = FALLBACK_PAGES * (gsize) page_size ();
  relay->buffer = g_malloc (relay->size);
  return TRUE;
#endif
}

/* Its size now, in pages (0 if the kernel will not say). */
guint
paddock_compat_relay_get_pages (PaddockCompatRelay *relay)
{
  long page = page_size ();
#if PADDOCK_COMPAT_LINUX
  int size = fcntl (relay->pipe[1], F_GETPIPE_SZ);

  return size > 0 ? (guint) ((size + page - 1) / page) : 0;
#else
  return (guint) ((relay->size + (gsize) page - 1) / (gsize) page);
#endif
}

/* Resizes an empty relay; FALSE (errno set, the size unchanged) when it
 * holds bytes or the kernel says no (the user's pipe limits). */
gboolean
paddock_compat_relay_set_pages (PaddockCompatRelay *relay,
                                guint               pages)
{
  gsize bytes = (gsize) pages * (gsize) page_size ();

  if (relay->pending > 0 || pages == 0 || bytes > G_MAXINT)
    {
      errno = EBUSY;
      return FALSE;
    }
#if PADDOCK_COMPAT_LINUX
  return fcntl (relay->pipe[1], F_SETPIPE_SZ, (int) bytes) >= 0;
#else
  relay->buffer = g_realloc (relay->buffer, bytes);
  relay->size = bytes;
  relay->start = 0;
  return TRUE;
#endif
}

#if PADDOCK_COMPAT_LINUX
static ssize_t
drain (PaddockCompatRelay *relay,
       int                 dst)
{
  return splice (relay->pipe[0], NULL, dst, NULL, relay->pending, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
}

static ssize_t
fill (PaddockCompatRelay *relay,
      int                 src,
      gsize               chunk)
{
  return splice (src, NULL, relay->pipe[1], NULL, chunk, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
}
#else
static ssize_t
drain (PaddockCompatRelay *relay,
       int                 dst)
{
  ssize_t n = send (dst, relay->buffer + relay->start, relay->pending, MSG_DONTWAIT | MSG_NOSIGNAL);

  if (n > 0)
    relay->start += (gsize) n;
  return n;
}

static ssize_t
fill (PaddockCompatRelay *relay,
      int                 src,
      gsize               chunk)
{
  relay->start = 0;
  return recv (src, relay->buffer, MIN (chunk, relay->size), MSG_DONTWAIT);
}
#endif

/* Moves from SRC to DST (both non-blocking sockets), CHUNK at most per
 * read, until one of them would block or SRC's end is through. */
PaddockCompatRelayStatus
paddock_compat_relay_move (PaddockCompatRelay *relay,
                           int                 src,
                           int                 dst,
                           gsize               chunk)
{
  for (;;)
    {
      ssize_t n;

      if (relay->pending > 0)
        {
          n = drain (relay, dst);
          if (n > 0)
            {
              relay->pending -= (gsize) n;
              continue;
            }
          if (n < 0 && errno == EINTR)
            continue;
          return n < 0 && errno == EAGAIN ? PADDOCK_COMPAT_RELAY_WAIT_WRITE : PADDOCK_COMPAT_RELAY_ERROR;
        }
      if (relay->eof)
        return PADDOCK_COMPAT_RELAY_DONE;
      n = fill (relay, src, chunk);
      if (n > 0)
        {
          relay->pending += (gsize) n;
          continue;
        }
      if (n == 0)
        {
          relay->eof = TRUE;
          continue;
        }
      if (errno == EINTR)
        continue;
      /* Nothing is held here, so EAGAIN is the source's. */
      return errno == EAGAIN ? PADDOCK_COMPAT_RELAY_WAIT_READ : PADDOCK_COMPAT_RELAY_ERROR;
    }
}

/* Closes it; what it held is dropped. Again is harmless. */
void
paddock_compat_relay_close (PaddockCompatRelay *relay)
{
  for (int i = 0; i < 2; i++)
    if (relay->pipe[i] >= 0)
      {
        close (relay->pipe[i]);
        relay->pipe[i] = -1;
      }
  g_clear_pointer (&relay->buffer, g_free);
  relay->pending = relay->size = relay->start = 0;
}
