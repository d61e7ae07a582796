/* paddock-sandbox-canaries.c — the canary probes run before "started"
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * What the agent will meet, tried for real before it exists, by a child
 * with the agent's confinement; the results go into "started".
 */

#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-sandbox-private.h"

static const char *
probe_step_text (ProbeStep step)
{
  switch (step)
    {
    case PROBE_STEP_SOCKET_INET: return "socket(AF_INET) failed: ";
    case PROBE_STEP_SOCKET_UNIX: return "socket(AF_UNIX) failed: ";
    case PROBE_STEP_OPEN_FOLDER: return "open(O_PATH) of the folder failed: ";
    case PROBE_STEP_NAME_TOO_LONG: return "the abstract socket's name is too long to try: ";
    case PROBE_STEP_ACT:
    default: return "";
    }
}

/* Forks the child that runs the probes and returns at once: it probes while
 * the agent execs (two cores do both at once); finish_canaries() collects.
 * CLOSE_IN_CHILD: an fd of pid 1's the child has no use for (the read end
 * of the agent's exec pipe), or -1. */
Canaries
start_canaries (const SandboxConfig *cfg,
                int                  close_in_child)
{
  Canaries canaries = { -1, -1, NULL, 0 };
  int pipe_fds[2];
  pid_t child;

  if (pipe2 (pipe_fds, O_CLOEXEC) != 0)
    {
      canaries.failed = "pipe2()";
      canaries.failed_errno = errno;
      return canaries;
    }
  child = fork ();
  if (child < 0)
    {
      canaries.failed = "fork()";
      canaries.failed_errno = errno;
      close (pipe_fds[0]);
      close (pipe_fds[1]);
      return canaries;
    }
  if (child == 0)
    {
      /* out[0..N_PROBES): each probe's errno (0: it got through, -1:
       * not run); out[N_PROBES + i]: the ProbeStep it is from. */
      int out[PROBE_REPORT_INTS];
      int *step = out + N_PROBES;
      const char *what = NULL;
      int fd;

      for (guint i = 0; i < N_PROBES; i++)
        {
          out[i] = -1;
          step[i] = PROBE_STEP_ACT;
        }
      out[2 * N_PROBES] = 0;
      close (pipe_fds[0]);
      if (close_in_child >= 0)
        close (close_in_child);
      /* Probing with capabilities would prove nothing: none is run. */
      out[2 * N_PROBES] = drop_all_capabilities (&what);
      if (out[2 * N_PROBES] != 0)
        {
          if (write (pipe_fds[1], out, sizeof out) != (ssize_t) sizeof out)
            _exit (1);
          _exit (0);
        }

      /* A file outside the workspace, in the read-only system view. */
      fd = open ("/usr/.paddock-canary", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      out[PROBE_WRITE_OUTSIDE] = fd >= 0 ? 0 : errno;
      if (fd >= 0)
        {
          close (fd);
          unlink ("/usr/.paddock-canary");
        }

      /* A tmpfs of the view the mount plan leaves writable (/dev holds the
       * device binds) but Landlock does not list for writing: only
       * Landlock stands between the agent and a new file there. */
      if (cfg->landlock != NULL)
        {
          fd = open ("/dev/.paddock-canary", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
          out[PROBE_LANDLOCK_FS] = fd >= 0 ? 0 : errno;
          if (fd >= 0)
            {
              close (fd);
              unlink ("/dev/.paddock-canary");
            }
        }

      /* A TCP port the session did not lease (0: any free one): without
       * the rule the bind would succeed. Only where the rules restrict
       * bind, on the host's network: in a namespace of the session's own
       * bind is left free (see sandbox_main()), and what keeps the host
       * out of reach there is the namespace, which connect-outside
       * probes; a refusal probed there would claim a rule that is not. */
      if (cfg->landlock != NULL && paddock_landlock_plan_restricts_bind (cfg->landlock))
        {
          int sock = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
          struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = 0,
                                      .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };

          if (sock < 0)
            {
              out[PROBE_LANDLOCK_NET] = errno;
              step[PROBE_LANDLOCK_NET] = PROBE_STEP_SOCKET_INET;
            }
          else
            {
              out[PROBE_LANDLOCK_NET] = bind (sock, (struct sockaddr *) &addr, sizeof addr) == 0 ? 0 : errno;
              close (sock);
            }
        }

      /* Each protected path the plan made read-only: a new file in a
       * folder, an append to a file. Blocked only if every one is. */
      for (guint i = 0; i < cfg->found->n_protected_mounted; i++)
        {
          struct stat st;
          int result;
          ProbeStep result_step = PROBE_STEP_ACT;

          if (stat (cfg->found->protected_mounted[i], &st) != 0)
            result = 0;   /* gone from the view: not protected either */
          else if (S_ISDIR (st.st_mode))
            {
              int dir = open (cfg->found->protected_mounted[i], O_PATH | O_DIRECTORY | O_CLOEXEC);

              if (dir < 0)
                result_step = PROBE_STEP_OPEN_FOLDER;
              fd = dir >= 0 ? openat (dir, ".paddock-canary", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
              result = fd >= 0 ? 0 : errno;
              if (fd >= 0)
                {
                  close (fd);
                  unlinkat (dir, ".paddock-canary", 0);
                }
              if (dir >= 0)
                close (dir);
            }
          else
            {
              fd = open (cfg->found->protected_mounted[i], O_WRONLY | O_APPEND | O_CLOEXEC);
              result = fd >= 0 ? 0 : errno;
              if (fd >= 0)
                close (fd);
            }
          /* What is reported: a write that got through, above all; else
           * the first that was not blocked as expected (EROFS from the
           * act: a folder that could not be opened was never tried), which
           * a later EROFS must not cover; else EROFS, every one blocked. */
          if (out[PROBE_PROTECTED_PATH] != 0 &&
              (result == 0 || out[PROBE_PROTECTED_PATH] < 0 ||
               (out[PROBE_PROTECTED_PATH] == EROFS && step[PROBE_PROTECTED_PATH] == PROBE_STEP_ACT)))
            {
              out[PROBE_PROTECTED_PATH] = result;
              step[PROBE_PROTECTED_PATH] = result_step;
            }
        }

      /* The user's real credentials folder: not in the view at all. */
      if (cfg->probe_hidden != NULL)
        out[PROBE_HIDDEN_PATH] = access (cfg->probe_hidden, F_OK) == 0 ? 0 : errno;

      /* An abstract socket the daemon listens on outside: Landlock scoping
       * must refuse the connect (the session shares no filesystem path
       * with it, abstract names have none). */
      if (cfg->probe_abstract != NULL)
        {
          int sock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
          struct sockaddr_un addr = { .sun_family = AF_UNIX };
          size_t len = strlen (cfg->probe_abstract);

          if (sock < 0)
            {
              out[PROBE_ABSTRACT_SOCKET] = errno;
              step[PROBE_ABSTRACT_SOCKET] = PROBE_STEP_SOCKET_UNIX;
            }
          else if (len + 1 >= sizeof addr.sun_path)
            {
              out[PROBE_ABSTRACT_SOCKET] = ENAMETOOLONG;
              step[PROBE_ABSTRACT_SOCKET] = PROBE_STEP_NAME_TOO_LONG;
            }
          else
            {
              memcpy (addr.sun_path + 1, cfg->probe_abstract, len);
              out[PROBE_ABSTRACT_SOCKET] =
                connect (sock, (struct sockaddr *) &addr, (socklen_t) (offsetof (struct sockaddr_un, sun_path) + 1 + len)) == 0
                ? 0 : errno;
            }
          if (sock >= 0)
            close (sock);
        }

      /* A TCP port the daemon listens on at the host's 127.0.0.1: in its
       * own network namespace the session's 127.0.0.1 is another one. */
      if (cfg->probe_port > 0)
        {
          int sock = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
          struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons (cfg->probe_port),
                                      .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };

          if (sock < 0)
            {
              out[PROBE_CONNECT_OUTSIDE] = errno;
              step[PROBE_CONNECT_OUTSIDE] = PROBE_STEP_SOCKET_INET;
            }
          else
            {
              out[PROBE_CONNECT_OUTSIDE] = connect (sock, (struct sockaddr *) &addr, sizeof addr) == 0 ? 0 : errno;
              close (sock);
            }
        }

      /* The daemon's pid, as the host numbers it. */
      if (cfg->probe_pid > 0)
        out[PROBE_SIGNAL_OUTSIDE] = kill (cfg->probe_pid, 0) == 0 ? 0 : errno;

      if (write (pipe_fds[1], out, sizeof out) != (ssize_t) sizeof out)
        _exit (1);
      _exit (0);
    }

  close (pipe_fds[1]);
  canaries.pid = child;
  canaries.results_fd = pipe_fds[0];
  return canaries;
}

/* Waits for the probing child: RESULTS get its errno values (0: the probe
 * got through) and STEPS the ProbeStep of each, or -1 for every probe when
 * none ran; then ERROR says why (the kernel's answer), else it is left
 * empty. */
void
finish_canaries (Canaries *canaries,
                 int       results[N_PROBES],
                 int       steps[N_PROBES],
                 LineBuf  *error)
{
  int got[PROBE_REPORT_INTS];
  ssize_t n = 0;
  int read_errno = 0;
  int status = 0;

  for (guint i = 0; i < N_PROBES; i++)
    {
      results[i] = -1;
      steps[i] = PROBE_STEP_ACT;
    }
  if (canaries->pid < 0)
    {
      if (canaries->failed != NULL)
        {
          line_add (error, canaries->failed);
          line_add (error, " for the probing child failed: ");
          line_add_errno (error, canaries->failed_errno);
        }
      return;
    }
  while ((n = read (canaries->results_fd, got, sizeof got)) < 0 && errno == EINTR)
    ;
  read_errno = n < 0 ? errno : 0;
  close (canaries->results_fd);
  while (waitpid (canaries->pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (n == (ssize_t) sizeof got && got[2 * N_PROBES] != 0)
    {
      line_add (error, "the probing child could not drop its capabilities: ");
      line_add_errno (error, got[2 * N_PROBES]);
    }
  else if (n == (ssize_t) sizeof got)
    {
      memcpy (results, got, sizeof results[0] * N_PROBES);
      memcpy (steps, got + N_PROBES, sizeof steps[0] * N_PROBES);
    }
  else
    {
      line_add (error, "the probing child did not report (");
      if (n < 0)
        {
          line_add (error, "read failed: ");
          line_add_errno (error, read_errno);
        }
      else
        {
          line_add (error, "got ");
          line_add_int (error, (long) n);
          line_add (error, " bytes");
        }
      if (WIFSIGNALED (status))
        {
          line_add (error, "; killed by signal ");
          line_add_int (error, WTERMSIG (status));
        }
      else
        {
          line_add (error, "; exit status ");
          line_add_int (error, WEXITSTATUS (status));
        }
      line_add (error, ")");
    }
  canaries->pid = -1;
  canaries->results_fd = -1;
}

void
add_probe (LineBuf    *line,
           gboolean   *first,
           const char *name,
           const char *what,
           const char *expected,
           int         result,
           int         step,
           int         expected_errno,
           int         other_expected_errno)
{
  /* Blocked means the kernel gave the refusal the probe names, not just
   * any failure: an EMFILE or ENOSPC in the probing child proves nothing,
   * nor does a step before the act (socket(), say) that failed. */
  gboolean blocked = step == PROBE_STEP_ACT && result != 0 &&
                     (result == expected_errno || result == other_expected_errno);

  if (result < 0)
    return;
  line_add (line, *first ? "{\"probe\":\"" : ",{\"probe\":\"");
  *first = FALSE;
  line_add (line, name);
  line_add (line, "\",\"what\":\"");
  line_add (line, what);
  line_add (line, "\",\"expected\":\"");
  line_add (line, expected);
  line_add (line, "\",\"actual\":\"");
  line_add (line, probe_step_text ((ProbeStep) step));
  line_add_errno (line, result);
  line_add (line, "\",\"blocked\":");
  line_add (line, blocked ? "true}" : "false}");
}
