/* paddock-spare-options.c — a session's options for a sandbox made ahead
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Both ends of the one message a sandbox made ahead (paddock-sandbox
 * --spare) gets on its control socket: the word "session" with one fd, a
 * sealed memfd holding the helper's options for that session, each
 * NUL-terminated (the command line without the options fixed when the
 * spare was made). The daemon sends it (paddock-spare-sandbox.c), pid 1
 * of the spare receives it; bench-sandbox-alone sends it as the daemon
 * does. Sealed, so that what pid 1 reads is what stays.
 *
 * A sandbox made for its session gets the same memfd at its exec
 * (--options-fd) instead of a command line: /proc/PID/cmdline is readable
 * by every local user, and the options hold the agent's environment (its
 * API keys among them) for the session's whole life.
 */

#include "config.h"

#include "paddock-spare-options.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-fdpass.h"
#include "paddock-sandbox-protocol.h"

#define SESSION_TAG PADDOCK_SANDBOX_SPARE_SESSION_TAG
#define MAX_RECV_FDS 8
#define SEALS (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW)

/* Makes a sealed memfd holding ARGS (NULL-terminated, at least one), each
 * NUL-terminated; *OUT_FD gets it (CLOEXEC). Returns 0 or an errno. Sealed,
 * so that what the helper reads is what stays. */
int
paddock_spare_options_memfd (const char * const *args,
                             int                *out_fd)
{
  paddock_autofd int memfd = memfd_create ("paddock-session-options", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  g_autoptr(GString) blob = g_string_new (NULL);
  gsize done = 0;

  if (memfd < 0)
    return errno;
  for (guint i = 0; args[i] != NULL; i++)
    g_string_append_len (blob, args[i], (gssize) strlen (args[i]) + 1);
  if (blob->len == 0 || blob->len > PADDOCK_SPARE_OPTIONS_MAX_BYTES)
    return E2BIG;
  while (done < blob->len)
    {
      ssize_t n = write (memfd, blob->str + done, blob->len - done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return n < 0 ? errno : EIO;
      done += (gsize) n;
    }
  if (fcntl (memfd, F_ADD_SEALS, SEALS | F_SEAL_SEAL) != 0)
    return errno;
  *out_fd = paddock_steal_fd (&memfd);
  return 0;
}

/* Sends ARGS (NULL-terminated, at least one) to the spare whose control
 * socket is CONTROL_FD. Returns 0, or an errno: EPIPE or ECONNRESET when
 * the spare is gone. */
int
paddock_spare_options_send (int                 control_fd,
                            const char * const *args)
{
  paddock_autofd int memfd = -1;
  int err = paddock_spare_options_memfd (args, &memfd);

  if (err != 0)
    return err;
  if (paddock_fdpass_send (control_fd, SESSION_TAG, strlen (SESSION_TAG), &memfd, 1, 0) < 0)
    return errno;
  return 0;
}

/* Receives the session's options on CONTROL_FD: *OUT_ARGS gets
 * "paddock-sandbox" (argv[0]), then each option, then NULL; they point
 * into *OUT_BLOCK, which the caller frees after them (pid 1 never does:
 * the agent's argv and environment are among them). Returns 0; -1 on EOF
 * (the daemon let go of the spare); or an errno with *OUT_WHAT saying what
 * was wrong (then neither is set). Fds beyond the first are closed. */
int
paddock_spare_options_receive (int          control_fd,
                               char       **out_block,
                               GPtrArray  **out_args,
                               const char **out_what)
{
  char tag[sizeof SESSION_TAG + 8];
  int fds[MAX_RECV_FDS];
  size_t n_fds = 0;
  paddock_autofd int memfd = -1;
  ssize_t n;

  *out_what = "cannot read the session's options";
  n = paddock_fdpass_recv (control_fd, tag, sizeof tag, fds, G_N_ELEMENTS (fds), &n_fds, 0);
  if (n == 0)
    {
      /* The daemon let go of us (or sent nothing: the same to us). */
      paddock_fdpass_close_all (fds, n_fds);
      return -1;
    }
  /* Cut short (a longer word, more fds than any message of ours has):
   * not the message, and what it brought is closed already. */
  *out_what = "the message for a sandbox made ahead is not its session's options";
  if (n < 0 && (errno == EMSGSIZE || errno == ETOOMANYREFS))
    return EINVAL;
  *out_what = "cannot read the session's options";
  if (n < 0)
    return errno;
  /* The first fd is the options; any other is closed. */
  if (n_fds > 0)
    memfd = fds[0];
  paddock_fdpass_close_all (fds + 1, n_fds > 1 ? n_fds - 1 : 0);
  *out_what = "the message for a sandbox made ahead is not its session's options";
  if ((size_t) n != strlen (SESSION_TAG) || memcmp (tag, SESSION_TAG, (size_t) n) != 0 || memfd < 0)
    return EINVAL;
  return paddock_spare_options_read (memfd, out_block, out_args, out_what);
}

/* Reads the sealed memfd MEMFD (as paddock_spare_options_memfd() makes it)
 * into *OUT_BLOCK and *OUT_ARGS, as paddock_spare_options_receive() says.
 * Returns 0, or an errno with *OUT_WHAT saying what was wrong. */
int
paddock_spare_options_read (int          memfd,
                            char       **out_block,
                            GPtrArray  **out_args,
                            const char **out_what)
{
  GPtrArray *args;
  struct stat st;
  char *blob;
  gsize got = 0;
  ssize_t n;
  int seals;

  *out_what = "the session's options are not a sealed memfd of at most 16 MiB";
  seals = fcntl (memfd, F_GET_SEALS);
  if (seals < 0 || (seals & SEALS) != SEALS || fstat (memfd, &st) != 0 || st.st_size <= 0 ||
      st.st_size > PADDOCK_SPARE_OPTIONS_MAX_BYTES)
    return EINVAL;
  blob = g_malloc ((gsize) st.st_size);
  *out_what = "cannot read the session's options";
  while (got < (gsize) st.st_size)
    {
      n = pread (memfd, blob + got, (gsize) st.st_size - got, (off_t) got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int err = n < 0 ? errno : EIO;

          g_free (blob);
          return err;
        }
      got += (gsize) n;
    }
  if (!paddock_spare_options_parse (blob, got, &args, out_what))
    {
      g_free (blob);
      return EINVAL;
    }
  *out_block = blob;
  *out_args = args;
  *out_what = NULL;
  return 0;
}
