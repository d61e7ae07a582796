/* paddock-fdpass.h — one message with file descriptors over a local socket
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The one place Paddock writes SCM_RIGHTS (systemd's socket-util.c role).
 * Plain libc, no GLib or GIO: the sandbox helper's pid 1 and its command
 * supervisors use it between fork and exec of nothing, and paddock-keeper
 * could without pulling a library in.
 *
 * Receiving: every descriptor arrives close-on-exec (MSG_CMSG_CLOEXEC), so
 * none can leak into a program exec'd before the caller looks at it. A
 * message cut short, of its data (MSG_TRUNC: larger than the buffer) or of
 * its descriptors (MSG_CTRUNC: more than the caller takes), is an error,
 * never half a message: every descriptor that did arrive is closed first.
 */

#pragma once

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most descriptors one message carries here (the kernel's own bound,
 * SCM_MAX_FD, is 253): what a caller's buffers are sized for. */
#define PADDOCK_FDPASS_MAX_FDS 16

/* Sends one message of LEN bytes (LEN may be 0 only with descriptors) on
 * SOCK with the N_FDS (0 to PADDOCK_FDPASS_MAX_FDS) descriptors of FDS
 * attached, as one datagram or SEQPACKET record. MSG_NOSIGNAL is always
 * added to FLAGS (MSG_DONTWAIT, say): a peer that went away is EPIPE, not a
 * SIGPIPE that would kill the sender. EINTR is retried. Returns the bytes
 * sent, or -1 with errno (EINVAL: N_FDS too large). The descriptors stay
 * the caller's. */
ssize_t paddock_fdpass_send (int         sock,
                             const void *data,
                             size_t      len,
                             const int  *fds,
                             size_t      n_fds,
                             int         flags);

/* Receives one message on SOCK into BUF (SIZE bytes) and at most MAX_FDS
 * (up to PADDOCK_FDPASS_MAX_FDS) descriptors into FDS, close-on-exec; how
 * many in *N_FDS. FLAGS are recvmsg()'s (MSG_DONTWAIT, say); EINTR is
 * retried. Returns the bytes received (0: end of stream, or an empty
 * record, then maybe with descriptors), or -1 with errno and no descriptor
 * left open: EMSGSIZE when the data did not fit in SIZE, ETOOMANYREFS when
 * more than MAX_FDS descriptors came, or recvmsg()'s own. */
ssize_t paddock_fdpass_recv (int     sock,
                             void   *buf,
                             size_t  size,
                             int    *fds,
                             size_t  max_fds,
                             size_t *n_fds,
                             int     flags);

/* Closes the N_FDS descriptors of FDS (errno kept). */
void    paddock_fdpass_close_all (const int *fds,
                                  size_t     n_fds);

#ifdef __cplusplus
}
#endif
