/* paddock-fdpass.c — one message with file descriptors over a local socket
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * See paddock-fdpass.h. Async-signal-safe (sendmsg, recvmsg, close): a
 * forked child of a multi-threaded process may call it too.
 */

#include "config.h"

#include "paddock-fdpass.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Linux marks received fds close-on-exec atomically. Where recvmsg() has
 * no such flag (the BSDs and macOS of a portable build) each is marked
 * right after: racy against a fork+exec in another thread of the caller,
 * which the callers here (single-threaded, or forking only on their main
 * loop) do not do. */
#ifndef MSG_CMSG_CLOEXEC
#define MSG_CMSG_CLOEXEC 0
#define PADDOCK_FDPASS_MARK_CLOEXEC 1
#endif

/* Control space for the most descriptors one message carries, aligned as
 * the CMSG_* macros expect. */
typedef union {
  struct cmsghdr align;
  char space[CMSG_SPACE (sizeof (int) * PADDOCK_FDPASS_MAX_FDS)];
} FdpassControl;

ssize_t
paddock_fdpass_send (int         sock,
                     const void *data,
                     size_t      len,
                     const int  *fds,
                     size_t      n_fds,
                     int         flags)
{
  FdpassControl control;
  struct iovec iov = { .iov_base = (void *) data, .iov_len = len };
  struct msghdr msg = {
    .msg_iov = &iov,
    .msg_iovlen = 1,
  };
  ssize_t n;

  if (n_fds > PADDOCK_FDPASS_MAX_FDS || (n_fds > 0 && fds == NULL))
    {
      errno = EINVAL;
      return -1;
    }
  if (n_fds > 0)
    {
      struct cmsghdr *header;

      memset (&control, 0, sizeof control);
      msg.msg_control = control.space;
      msg.msg_controllen = CMSG_SPACE (sizeof (int) * n_fds);
      header = CMSG_FIRSTHDR (&msg);
      header->cmsg_level = SOL_SOCKET;
      header->cmsg_type = SCM_RIGHTS;
      header->cmsg_len = CMSG_LEN (sizeof (int) * n_fds);
      memcpy (CMSG_DATA (header), fds, sizeof (int) * n_fds);
    }
  while ((n = sendmsg (sock, &msg, flags | MSG_NOSIGNAL)) < 0 && errno == EINTR)
    ;
  return n;
}

void
paddock_fdpass_close_all (const int *fds,
                          size_t     n_fds)
{
  int saved_errno = errno;

  for (size_t i = 0; i < n_fds; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  errno = saved_errno;
}

ssize_t
paddock_fdpass_recv (int     sock,
                     void   *buf,
                     size_t  size,
                     int    *fds,
                     size_t  max_fds,
                     size_t *n_fds,
                     int     flags)
{
  FdpassControl control;
  struct iovec iov = { .iov_base = buf, .iov_len = size };
  struct msghdr msg = {
    .msg_iov = &iov,
    .msg_iovlen = 1,
    .msg_control = control.space,
    /* Room for MAX_FDS only: one more and the kernel sets MSG_CTRUNC
     * (and closes what did not fit), which is then our error. */
    .msg_controllen = CMSG_SPACE (sizeof (int) * (max_fds > 0 ? max_fds : 1)),
  };
  size_t got = 0;
  ssize_t n;

  *n_fds = 0;
  if (max_fds > PADDOCK_FDPASS_MAX_FDS || (max_fds > 0 && fds == NULL))
    {
      errno = EINVAL;
      return -1;
    }
  if (max_fds == 0)
    {
      /* No room at all: any descriptor sent is a CTRUNC. */
      msg.msg_control = NULL;
      msg.msg_controllen = 0;
    }
  memset (&control, 0, sizeof control);
  while ((n = recvmsg (sock, &msg, flags | MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
    ;
  if (n < 0)
    return -1;

  for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); c != NULL; c = CMSG_NXTHDR (&msg, c))
    {
      size_t count;
      const unsigned char *data;

      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
        continue;
      count = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
      data = CMSG_DATA (c);
      for (size_t i = 0; i < count; i++)
        {
          int fd;

          memcpy (&fd, data + i * sizeof (int), sizeof fd);
#ifdef PADDOCK_FDPASS_MARK_CLOEXEC
          (void) fcntl (fd, F_SETFD, FD_CLOEXEC);
#endif
          if (got < max_fds)
            fds[got++] = fd;
          else
            {
              /* CMSG_SPACE rounds the room up (two ints for one asked
               * for): a descriptor past MAX_FDS is closed, not kept, and
               * the message refused below as the kernel's CTRUNC is. */
              close (fd);
              msg.msg_flags |= MSG_CTRUNC;
            }
        }
    }

  if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
    {
      paddock_fdpass_close_all (fds, got);
      errno = (msg.msg_flags & MSG_TRUNC) ? EMSGSIZE : ETOOMANYREFS;
      return -1;
    }
  *n_fds = got;
  return n;
}
