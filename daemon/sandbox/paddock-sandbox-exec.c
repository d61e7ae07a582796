/* paddock-sandbox-exec.c — the agent: capabilities dropped, the program exec'd
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * From fork to exec of the agent (and the capability drop every command
 * shares): async-signal-safe calls only.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "paddock-sandbox-private.h"

/* Root inside the user namespace has every capability over our mounts: it
 * could remount the read-only binds read-write, and when the helper runs as
 * real root that would write to the host's /usr. The agent gets none:
 * NOROOT stops uid 0 regaining them at exec, the empty bounding set stops
 * file capabilities, and the locks stop the agent undoing either. Nested user
 * namespaces it may create get locked copies of our mounts (the kernel marks
 * mounts copied into a less privileged namespace MNT_LOCKED/MNT_LOCK_*). */
int
drop_all_capabilities (const char **what)
{
  struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct data[2] = { { 0, 0, 0 }, { 0, 0, 0 } };

  if (prctl (PR_SET_SECUREBITS,
             SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
             SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
             SECBIT_KEEP_CAPS_LOCKED |
             SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
             0, 0, 0) != 0)
    {
      *what = "cannot set securebits";
      return errno;
    }

  for (int cap = 0; cap <= 63; cap++)
    {
      if (prctl (PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
        {
          if (errno == EINVAL)
            break;   /* past the kernel's last capability */
          *what = "cannot drop a capability from the bounding set";
          return errno;
        }
    }

  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    {
      *what = "cannot clear ambient capabilities";
      return errno;
    }

  if (syscall (SYS_capset, &header, data) != 0)
    {
      *what = "cannot drop capabilities";
      return errno;
    }
  return 0;
}

/* execve() ARGV[0] as execvpe() would, but searching PATH_ENV (the
 * program's own PATH), not our environment's. Returns only on failure, with
 * the most telling errno. Async-signal-safe. */
int
exec_in_path (char *const *argv,
              char *const *envp,
              const char   *path_env)
{
  const char *cmd = argv[0];
  int saved_errno = ENOENT;

  if (strchr (cmd, '/') != NULL)
    {
      execve (cmd, argv, envp);
      return errno;
    }
  else
    {
      const char *p = path_env;
      char buf[PATH_BUF];
      size_t cmd_len = strlen (cmd);

      for (;;)
        {
          const char *end = strchrnul (p, ':');
          size_t dir_len = (size_t) (end - p);

          if (dir_len == 0)
            {
              buf[0] = '.';
              dir_len = 1;
            }
          else if (dir_len < sizeof buf)
            memcpy (buf, p, dir_len);

          if (dir_len + 1 + cmd_len + 1 <= sizeof buf)
            {
              buf[dir_len] = '/';
              memcpy (buf + dir_len + 1, cmd, cmd_len + 1);
              execve (buf, argv, envp);
              /* Keep the most telling error: "found but not executable"
               * beats "not in this folder". */
              if (errno != ENOENT && errno != ENOTDIR)
                saved_errno = errno;
            }
          if (*end == '\0')
            break;
          p = end + 1;
        }
    }
  return saved_errno;
}

G_NORETURN void
exec_agent (const SandboxConfig *cfg)
{
  sigset_t none;
  int err;

  /* The agent starts with default dispositions and nothing blocked: ignored
   * signals and the blocked mask would otherwise survive exec. */
  signal (SIGPIPE, SIG_DFL);
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);

  /* Its own session and process group: forwarded signals reach its whole
   * group, and a terminal's hangup reaches it as the session leader. */
  if (setsid () < 0)
    die_errno (EXIT_SETUP, "setsid failed", NULL, errno);

  if (cfg->pty_fd >= 0)
    {
      if (ioctl (cfg->pty_fd, TIOCSCTTY, 0) != 0)
        die_errno (EXIT_SETUP, "cannot make the PTY the controlling terminal", NULL, errno);
      for (int fd = 0; fd < 3; fd++)
        if (dup2 (cfg->pty_fd, fd) < 0)
          die_errno (EXIT_SETUP, "cannot attach the PTY", NULL, errno);
    }

  if (chdir (cfg->workspace) != 0)
    die_errno (EXIT_SETUP, "cannot enter the workspace", cfg->workspace, errno);

  if (!cfg->host_profile)
    {
      const char *what = NULL;

      if ((err = drop_all_capabilities (&what)) != 0)
        die_errno (EXIT_SETUP, what, NULL, err);
    }

  /* Its leased sockets at 3…: first out of the way of every target, then
   * into place (dup2 leaves the targets open across exec). */
  if (cfg->n_listen_fds > 0)
    {
      int high[G_N_ELEMENTS (cfg->listen_fds)];

      for (guint i = 0; i < cfg->n_listen_fds; i++)
        if ((high[i] = fcntl (cfg->listen_fds[i], F_DUPFD_CLOEXEC, 64)) < 0)
          die_errno (EXIT_SETUP, "cannot move a listening socket", NULL, errno);
      for (guint i = 0; i < cfg->n_listen_fds; i++)
        if (dup2 (high[i], PADDOCK_SANDBOX_AGENT_FIRST_LISTEN_FD + (int) i) < 0)
          die_errno (EXIT_SETUP, "cannot move a listening socket", NULL, errno);
    }

  /* Nothing of ours or of whoever started us reaches the agent but 0-2
   * (and its leased sockets). */
  if (close_range (PADDOCK_SANDBOX_AGENT_FIRST_LISTEN_FD + cfg->n_listen_fds, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
    die_errno (EXIT_SETUP, "close_range failed", NULL, errno);

  err = exec_in_path (cfg->argv, cfg->envp, cfg->path_env);
  die_errno (err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC, "cannot run", cfg->argv[0], err);
}
