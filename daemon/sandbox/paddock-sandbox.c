/* paddock-sandbox.c — per-session helper: namespaces, minimal root, pid 1 init
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Usage:
 *   paddock-sandbox --workspace DIR [--profile safe|host] [--control-fd N]
 *                   [--pty-fd N] [--env K=V]… [--die-with-parent] -- CMD [ARG…]
 *
 *   --workspace DIR   the project folder: visible read-write at the same
 *                     absolute path, and the agent's working directory.
 *   --profile safe    (default) new user, mount and PID namespaces and the
 *                     minimal root view below.
 *   --profile host    no isolation at all: the agent runs in its own session
 *                     and process group only. Exists only when asked for;
 *                     never a fallback for `safe`.
 *   --control-fd N    events as JSON lines, one per message (a SOCK_SEQPACKET
 *                     socket keeps each line a message; a pipe works too):
 *                       {"event":"started","pid":P}
 *                       {"event":"exited","pid":P,"status":S[,"signal":N]}
 *                     P is the agent's pid in the sandbox's PID namespace (2);
 *                     S follows the shell: the exit code, or 128+N if killed by
 *                     signal N. Later steps add commands read from this fd.
 *   --pty-fd N        PTY slave: the agent runs on it as session leader with it
 *                     as controlling terminal, stdin, stdout and stderr; it is
 *                     also bound at /dev/console so ttyname() resolves. Without
 *                     it the agent inherits our stdio (in its own session).
 *   --env K=V         the agent's environment is exactly these, nothing else.
 *                     The sandbox's HOME is the private tmpfs /home/agent: pass
 *                     HOME=/home/agent. PATH from here is used to find CMD.
 *   --die-with-parent stay tied to the parent for the whole run. By default
 *                     the helper dies with its parent only until the sandbox is
 *                     set up, so that a later daemon can re-adopt a session.
 *
 * Exit status: the agent's (the shell's convention, 128+N when killed by
 * signal N), or one of
 *   64  usage error (unknown option, empty command, bad value)
 *   66  the workspace is missing, not a folder, or overlaps system folders
 *   71  the sandbox could not be set up (a mount failed; stderr says which)
 *  125  user namespaces are unavailable here (stderr says why and which
 *       setting would allow them); nothing is run without them
 *  126  CMD was found but could not be executed
 *  127  CMD was not found
 * Failures are one line on stderr, starting with "paddock-sandbox: ".
 *
 * Process layout (as bubblewrap): this process stays outside, clones pid 1
 * of new user+mount+PID namespaces, forwards SIGTERM, SIGINT, SIGHUP, SIGQUIT,
 * SIGUSR1 and SIGUSR2 to it and exits with its status. Pid 1 builds the root
 * view, forks the agent (pid 2), reaps every process of the namespace, sends
 * forwarded signals to the agent's process group, and exits with the agent's
 * status as soon as the agent is gone. The kernel then kills every other
 * process of the namespace and our waitpid() returns only once they are all
 * gone, so our exit means the session's processes are gone too. If this
 * process is killed, pid 1 gets SIGKILL (PR_SET_PDEATHSIG) with the same result.
 *
 * The root view (built on a tmpfs, pivot_root'ed): /usr, /bin, /sbin, /lib*
 * (symlinks kept as symlinks) and a short list of /etc files read-only; the
 * workspace read-write at its own path; private tmpfs /tmp, /home/agent and
 * /dev/shm; a fresh /proc (with sys, irq, bus read-only); a /dev of null,
 * zero, full, random, urandom and tty plus a new devpts instance. Host
 * submounts below the bound folders are not carried over (no MS_REC). The
 * agent runs with no capabilities at all (empty bounding set, securebits
 * NOROOT locked) and no_new_privs, as uid/gid the caller's own.
 *
 * Everything between clone()/fork() and exec uses only async-signal-safe
 * calls: the whole mount plan is computed before clone().
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <linux/securebits.h>

#include "paddock-autofd.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

enum {
  EXIT_USAGE = 64,
  EXIT_WORKSPACE = 66,
  EXIT_SETUP = 71,
  EXIT_NO_NAMESPACES = 125,
  EXIT_CANNOT_EXEC = 126,
  EXIT_NOT_FOUND = 127,
};

#define HOME_PATH "/home/agent"
#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define PATH_BUF 4096

typedef enum {
  OP_MKDIR,        /* dest */
  OP_CREATE_FILE,  /* dest: an empty file to bind a file onto */
  OP_SYMLINK,      /* source = link target, dest = link */
  OP_BIND_RO,      /* source -> dest, read-only, nosuid, nodev */
  OP_BIND_DEV,     /* source -> dest, read-only flags of the source kept, dev allowed */
  OP_BIND_RW,      /* source -> dest, read-write, nosuid, nodev */
  OP_TMPFS,        /* dest, data = mount options */
  OP_PROC,         /* dest */
  OP_DEVPTS,       /* dest */
  OP_REMOUNT_RO,   /* dest: an existing mount made read-only */
} SetupOpType;

typedef struct {
  SetupOpType type;
  gboolean optional;    /* a missing source is fine (e.g. /proc/irq) */
  const char *source;
  const char *dest;
  const char *data;
  dev_t expect_dev;     /* OP_BIND_RW: the folder the helper resolved, */
  ino_t expect_ino;     /* checked after binding (0, 0: unchecked) */
} SetupOp;

typedef struct {
  gboolean host_profile;
  gboolean die_with_parent;
  int control_fd;
  int pty_fd;
  const char *workspace;         /* canonical absolute path */
  char *const *argv;
  char *const *envp;
  const char *path_env;          /* PATH used to find argv[0] */
  char uid_map[64];
  char gid_map[64];
  const SetupOp *ops;
  guint n_ops;
  int ready_fd;                  /* pid 1 -> helper: setup done (write end) */
  int alive_fd;                  /* helper -> pid 1: EOF means the helper is gone (read end) */
} SandboxConfig;

/* ---- async-signal-safe output ------------------------------------------ */

static void
put_str (const char *s)
{
  size_t len = strlen (s);

  while (len > 0)
    {
      ssize_t n = write (STDERR_FILENO, s, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return;
      s += n;
      len -= (size_t) n;
    }
}

/* strerrordesc_np() returns a static English string without touching the
 * locale, which strerror() may: fine between clone and exec. */
static G_NORETURN void
die_errno (int         code,
           const char *what,
           const char *path,
           int         err)
{
  put_str ("paddock-sandbox: ");
  put_str (what);
  if (path != NULL)
    {
      put_str (" ");
      put_str (path);
    }
  put_str (": ");
  put_str (strerrordesc_np (err) ? strerrordesc_np (err) : "unknown error");
  put_str ("\n");
  _exit (code);
}

static G_NORETURN void
die_msg (int         code,
         const char *what,
         const char *path)
{
  put_str ("paddock-sandbox: ");
  put_str (what);
  if (path != NULL)
    {
      put_str (" ");
      put_str (path);
    }
  put_str ("\n");
  _exit (code);
}

typedef struct {
  char buf[256];
  size_t len;
} LineBuf;

static void
line_add (LineBuf    *line,
          const char *s)
{
  size_t n = strlen (s);

  if (line->len + n < sizeof line->buf)
    {
      memcpy (line->buf + line->len, s, n);
      line->len += n;
    }
}

static void
line_add_int (LineBuf *line,
              long     v)
{
  char tmp[24];
  size_t i = sizeof tmp;
  gboolean neg = v < 0;
  unsigned long u = neg ? (unsigned long) -v : (unsigned long) v;

  tmp[--i] = '\0';
  do
    {
      tmp[--i] = (char) ('0' + u % 10);
      u /= 10;
    }
  while (u > 0 && i > 1);
  if (neg)
    tmp[--i] = '-';
  line_add (line, tmp + i);
}

/* One event per message. MSG_NOSIGNAL: a daemon that went away must not kill
 * pid 1 with SIGPIPE (that would take the session down with it). */
static void
send_event (int            fd,
            const LineBuf *line)
{
  if (fd < 0)
    return;
  while (send (fd, line->buf, line->len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
    {
      if (errno == EINTR)
        continue;
      if (errno == ENOTSOCK)
        {
          /* A pipe: SIGPIPE is ignored in pid 1, so EPIPE just returns. */
          while (write (fd, line->buf, line->len) < 0 && errno == EINTR)
            ;
        }
      return;
    }
}

static int
status_to_code (int status)
{
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return 255;
}

/* ---- the agent: from fork to exec --------------------------------------- */

/* Root inside the user namespace has every capability over our mounts: it
 * could remount the read-only binds read-write, and when the helper runs as
 * real root that would write to the host's /usr. The agent gets none:
 * NOROOT stops uid 0 regaining them at exec, the empty bounding set stops
 * file capabilities, and the locks stop the agent undoing either. Nested user
 * namespaces it may create get locked copies of our mounts (the kernel marks
 * mounts copied into a less privileged namespace MNT_LOCKED/MNT_LOCK_*). */
static void
drop_all_capabilities (void)
{
  struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct data[2] = { { 0, 0, 0 }, { 0, 0, 0 } };

  if (prctl (PR_SET_SECUREBITS,
             SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
             SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
             SECBIT_KEEP_CAPS_LOCKED |
             SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
             0, 0, 0) != 0)
    die_errno (EXIT_SETUP, "cannot set securebits", NULL, errno);

  for (int cap = 0; cap <= 63; cap++)
    {
      if (prctl (PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
        {
          if (errno == EINVAL)
            break;   /* past the kernel's last capability */
          die_errno (EXIT_SETUP, "cannot drop a capability from the bounding set", NULL, errno);
        }
    }

  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    die_errno (EXIT_SETUP, "cannot clear ambient capabilities", NULL, errno);

  if (syscall (SYS_capset, &header, data) != 0)
    die_errno (EXIT_SETUP, "cannot drop capabilities", NULL, errno);
}

static G_NORETURN void
exec_agent (const SandboxConfig *cfg)
{
  sigset_t none;
  const char *cmd = cfg->argv[0];
  int saved_errno = ENOENT;

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
    drop_all_capabilities ();

  /* Nothing of ours or of whoever started us reaches the agent but 0-2. */
  if (close_range (3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
    die_errno (EXIT_SETUP, "close_range failed", NULL, errno);

  if (strchr (cmd, '/') != NULL)
    {
      execve (cmd, cfg->argv, cfg->envp);
      saved_errno = errno;
    }
  else
    {
      /* execvpe() would search the PATH of our own environment, not the
       * agent's: search the agent's PATH by hand. */
      const char *p = cfg->path_env;
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
              execve (buf, cfg->argv, cfg->envp);
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

  die_errno (saved_errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC, "cannot run", cmd, saved_errno);
}

/* ---- pid 1 ---------------------------------------------------------------- */

static void
forwarded_signals (sigset_t *set)
{
  sigemptyset (set);
  sigaddset (set, SIGCHLD);
  sigaddset (set, SIGTERM);
  sigaddset (set, SIGINT);
  sigaddset (set, SIGHUP);
  sigaddset (set, SIGQUIT);
  sigaddset (set, SIGUSR1);
  sigaddset (set, SIGUSR2);
}

/* Runs as pid 1 of the sandbox (or, for the host profile, as the helper
 * itself): spawns the agent, reaps, forwards signals, reports, and exits with
 * the agent's status once the agent is gone. Signals stay blocked (set by
 * main before clone) and are read from a signalfd: for a namespace's init,
 * a blocked signal is queued rather than dropped, while an unhandled one sent
 * from inside the namespace would be discarded. */
static G_NORETURN void
run_init (const SandboxConfig *cfg)
{
  sigset_t set;
  int sfd;
  pid_t agent;
  LineBuf line = { .len = 0 };

  /* A vanished control reader must not kill us; restored for the agent. */
  signal (SIGPIPE, SIG_IGN);

  forwarded_signals (&set);
  sfd = signalfd (-1, &set, SFD_CLOEXEC);
  if (sfd < 0)
    die_errno (EXIT_SETUP, "signalfd failed", NULL, errno);

  agent = fork ();
  if (agent < 0)
    die_errno (EXIT_SETUP, "cannot fork the agent", NULL, errno);
  if (agent == 0)
    exec_agent (cfg);

  line_add (&line, "{\"event\":\"started\",\"pid\":");
  line_add_int (&line, agent);
  line_add (&line, "}\n");
  send_event (cfg->control_fd, &line);

  /* Tell the helper outside that setup is over (it may now let go of its
   * parent). Closing the only write end is the message. */
  if (cfg->ready_fd >= 0)
    {
      char c = 'r';
      while (write (cfg->ready_fd, &c, 1) < 0 && errno == EINTR)
        ;
      close (cfg->ready_fd);
    }

  for (;;)
    {
      struct signalfd_siginfo si;
      ssize_t n = read (sfd, &si, sizeof si);

      if (n < 0 && errno == EINTR)
        continue;
      if (n != (ssize_t) sizeof si)
        die_errno (EXIT_SETUP, "reading signals failed", NULL, n < 0 ? errno : EIO);

      if (si.ssi_signo == SIGCHLD)
        {
          int status;
          pid_t pid;

          /* Orphans of the whole namespace are re-parented to us: reap every
           * one, not just the agent, or they stay zombies. */
          while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
            {
              if (pid != agent)
                continue;

              line.len = 0;
              line_add (&line, "{\"event\":\"exited\",\"pid\":");
              line_add_int (&line, pid);
              line_add (&line, ",\"status\":");
              line_add_int (&line, status_to_code (status));
              if (WIFSIGNALED (status))
                {
                  line_add (&line, ",\"signal\":");
                  line_add_int (&line, WTERMSIG (status));
                }
              line_add (&line, "}\n");
              send_event (cfg->control_fd, &line);

              if (cfg->host_profile)
                {
                  /* Best effort only: without a PID namespace, whatever left
                   * the process group survives (the host profile says so). */
                  kill (-agent, SIGKILL);
                }
              /* As pid 1, our exit makes the kernel SIGKILL everything left
               * in the namespace: setsid'd, double-forked, SIGTERM-ignoring. */
              _exit (status_to_code (status));
            }
        }
      else
        {
          /* The whole group: a shell agent's children get it too. */
          if (kill (-agent, (int) si.ssi_signo) != 0)
            kill (agent, (int) si.ssi_signo);
        }
    }
}

/* ---- namespace setup (pid 1, before the agent exists) --------------------- */

static void
write_file (const char *path,
            const char *text)
{
  paddock_autofd int fd = open (path, O_WRONLY | O_CLOEXEC);
  size_t len = strlen (text);

  if (fd < 0)
    die_errno (EXIT_NO_NAMESPACES, "cannot open", path, errno);
  if (write (fd, text, len) != (ssize_t) len)
    die_errno (EXIT_NO_NAMESPACES, "cannot map ids in the user namespace: writing", path, errno);
}

/* Mount flags a remount must carry over. In a user namespace the kernel
 * refuses (EPERM) a remount that would clear nosuid, nodev, noexec or
 * read-only set by a more privileged mounter (MNT_LOCK_*); statfs() tells us
 * which the source has. Access-time flags are left out, so the kernel keeps
 * the source's (it does when a remount names none). */
static unsigned long
locked_flags_of (const char *path)
{
  struct statfs sfs;
  unsigned long flags = 0;

  if (statfs (path, &sfs) != 0)
    die_errno (EXIT_SETUP, "statfs failed on", path, errno);
  if (sfs.f_flags & ST_RDONLY)
    flags |= MS_RDONLY;
  if (sfs.f_flags & ST_NOSUID)
    flags |= MS_NOSUID;
  if (sfs.f_flags & ST_NODEV)
    flags |= MS_NODEV;
  if (sfs.f_flags & ST_NOEXEC)
    flags |= MS_NOEXEC;
  return flags;
}

static void
bind_mount (const SetupOp *op,
            unsigned long  extra)
{
  /* Not MS_REC: the sandbox sees exactly the listed trees, not whatever the
   * host happens to have mounted below them. */
  if (mount (op->source, op->dest, NULL, MS_BIND, NULL) != 0)
    {
      if (op->optional && errno == ENOENT)
        return;
      die_errno (EXIT_SETUP, "cannot bind-mount", op->source, errno);
    }
  /* MS_BIND ignores every other flag on the first call: read-only and the
   * rest take a second, remount call. */
  if (mount (NULL, op->dest, NULL,
             MS_BIND | MS_REMOUNT | extra | locked_flags_of (op->dest), NULL) != 0)
    die_errno (EXIT_SETUP, "cannot remount", op->dest, errno);
}

static void
run_op (const SetupOp *op)
{
  switch (op->type)
    {
    case OP_MKDIR:
      if (mkdir (op->dest, 0755) != 0 && errno != EEXIST)
        die_errno (EXIT_SETUP, "cannot create", op->dest, errno);
      break;

    case OP_CREATE_FILE:
      {
        int fd = open (op->dest, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0444);
        if (fd < 0)
          die_errno (EXIT_SETUP, "cannot create", op->dest, errno);
        close (fd);
      }
      break;

    case OP_SYMLINK:
      if (symlink (op->source, op->dest) != 0)
        die_errno (EXIT_SETUP, "cannot create the symlink", op->dest, errno);
      break;

    case OP_BIND_RO:
      bind_mount (op, MS_RDONLY | MS_NOSUID | MS_NODEV);
      break;

    case OP_BIND_DEV:
      /* Device nodes: dev stays allowed on these binds (only these). */
      bind_mount (op, MS_NOSUID | MS_NOEXEC);
      break;

    case OP_BIND_RW:
      /* The workspace: writable, but nothing setuid or device-like in it
       * takes effect. */
      bind_mount (op, MS_NOSUID | MS_NODEV);
      /* The path was resolved before clone; if a component was swapped for
       * a symlink since (by an earlier session writing in a parent folder,
       * say), the bind followed it somewhere else: refuse to run there. */
      if (op->expect_ino != 0)
        {
          struct stat st;
          if (stat (op->dest, &st) != 0)
            die_errno (EXIT_SETUP, "cannot stat", op->dest, errno);
          if (st.st_dev != op->expect_dev || st.st_ino != op->expect_ino)
            die_msg (EXIT_SETUP, "the workspace was replaced while being mounted, refusing:", op->source);
        }
      break;

    case OP_TMPFS:
      if (mount ("tmpfs", op->dest, "tmpfs", MS_NOSUID | MS_NODEV, op->data) != 0)
        die_errno (EXIT_SETUP, "cannot mount a tmpfs on", op->dest, errno);
      break;

    case OP_PROC:
      /* A fresh proc for our PID namespace: it shows only the sandbox's
       * processes, and its /proc/self is ours. */
      if (mount ("proc", op->dest, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
        die_errno (EXIT_SETUP, "cannot mount proc on", op->dest, errno);
      break;

    case OP_DEVPTS:
      /* A new devpts instance: the agent cannot open the host's terminals
       * (which belong to the same user and would let it read or type into
       * them). The caller's PTY is bound at /dev/console instead. */
      if (mount ("devpts", op->dest, "devpts", MS_NOSUID | MS_NOEXEC,
                 "newinstance,ptmxmode=0666,mode=620") != 0)
        die_errno (EXIT_SETUP, "cannot mount devpts on", op->dest, errno);
      break;

    case OP_REMOUNT_RO:
      if (mount (NULL, op->dest, NULL,
                 MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV |
                 locked_flags_of (op->dest), NULL) != 0)
        die_errno (EXIT_SETUP, "cannot remount read-only", op->dest, errno);
      break;

    default:
      g_assert_not_reached ();
    }
}

/* The child of clone(): first process of the new namespaces. */
static G_NORETURN void
sandbox_child (const SandboxConfig *cfg)
{
  struct pollfd pfd;

  /* If the helper outside dies, we die: it is the daemon's handle on the
   * session and the thing it kills to end it. Then check it did not die
   * before prctl() took effect: its end of alive_fd closes with it. */
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
    die_errno (EXIT_SETUP, "PR_SET_PDEATHSIG failed", NULL, errno);
  pfd.fd = cfg->alive_fd;
  pfd.events = POLLIN;
  pfd.revents = 0;
  if (poll (&pfd, 1, 0) != 0)
    _exit (EXIT_SETUP);
  close (cfg->alive_fd);

  /* Map our own uid and gid, nothing else. setgroups must be denied first:
   * an unprivileged writer may not map gids otherwise (it could drop
   * supplementary groups used as negative permissions). */
  write_file ("/proc/self/setgroups", "deny");
  write_file ("/proc/self/uid_map", cfg->uid_map);
  write_file ("/proc/self/gid_map", cfg->gid_map);

  /* Nothing we mount propagates back to the host (MS_SLAVE), while host
   * unmounts still reach us. */
  if (mount (NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) != 0)
    die_errno (EXIT_SETUP, "cannot make / a slave mount", NULL, errno);

  /* bubblewrap's order: a tmpfs base, pivot into it with the old root kept
   * at /oldroot, build /newroot from /oldroot, drop /oldroot, pivot again. */
  if (mount ("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
    die_errno (EXIT_SETUP, "cannot mount the base tmpfs on", "/tmp", errno);
  if (chdir ("/tmp") != 0)
    die_errno (EXIT_SETUP, "chdir failed", "/tmp", errno);
  if (mkdir ("newroot", 0755) != 0 || mkdir ("oldroot", 0755) != 0)
    die_errno (EXIT_SETUP, "mkdir failed in", "/tmp", errno);
  if (mount ("newroot", "newroot", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
    die_errno (EXIT_SETUP, "cannot mount the root tmpfs", NULL, errno);
  if (syscall (SYS_pivot_root, "/tmp", "/tmp/oldroot") != 0)
    die_errno (EXIT_SETUP, "pivot_root failed", NULL, errno);
  if (chdir ("/") != 0)
    die_errno (EXIT_SETUP, "chdir failed", "/", errno);

  for (guint i = 0; i < cfg->n_ops; i++)
    run_op (&cfg->ops[i]);

  /* The host's tree is gone from our view: only the binds remain. Private
   * first, so that not even this unmount event propagates anywhere. */
  if (mount ("/oldroot", "/oldroot", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    die_errno (EXIT_SETUP, "cannot make the old root private", NULL, errno);
  if (umount2 ("/oldroot", MNT_DETACH) != 0)
    die_errno (EXIT_SETUP, "cannot detach the old root", NULL, errno);
  if (chdir ("/newroot") != 0)
    die_errno (EXIT_SETUP, "chdir failed", "/newroot", errno);
  /* pivot_root(".", ".") stacks the base under the new root; the detach
   * then removes it, leaving /newroot as / with nothing beneath. */
  if (syscall (SYS_pivot_root, ".", ".") != 0)
    die_errno (EXIT_SETUP, "pivot_root into the new root failed", NULL, errno);
  if (umount2 (".", MNT_DETACH) != 0)
    die_errno (EXIT_SETUP, "cannot detach the base", NULL, errno);
  if (chdir ("/") != 0)
    die_errno (EXIT_SETUP, "chdir failed", "/", errno);

  /* No exec inside may gain privileges (setuid, file capabilities); also a
   * precondition for seccomp filters later. */
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    die_errno (EXIT_SETUP, "PR_SET_NO_NEW_PRIVS failed", NULL, errno);

  run_init (cfg);
}

/* ---- the helper outside: options, plan, clone, supervision --------------- */

typedef struct {
  GArray *ops;           /* SetupOp */
  GStringChunk *strings;
  GHashTable *made;      /* dest paths already created */
} Plan;

static void
plan_clear (Plan *plan)
{
  g_clear_pointer (&plan->ops, g_array_unref);
  g_clear_pointer (&plan->strings, g_string_chunk_free);
  g_clear_pointer (&plan->made, g_hash_table_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Plan, plan_clear)

static void
plan_init (Plan *plan)
{
  plan->ops = g_array_new (FALSE, TRUE, sizeof (SetupOp));
  plan->strings = g_string_chunk_new (4096);
  plan->made = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

static void
plan_add (Plan        *plan,
          SetupOpType  type,
          gboolean     optional,
          const char  *source,
          const char  *dest,
          const char  *data)
{
  SetupOp op = {
    .type = type,
    .optional = optional,
    .source = source ? g_string_chunk_insert_const (plan->strings, source) : NULL,
    .dest = g_string_chunk_insert_const (plan->strings, dest),
    .data = data ? g_string_chunk_insert_const (plan->strings, data) : NULL,
  };

  g_array_append_val (plan->ops, op);
}

/* mkdir -p under /newroot for an absolute path inside the sandbox. */
static void
plan_mkdir_p (Plan       *plan,
              const char *path)
{
  g_auto(GStrv) parts = g_strsplit (path, "/", -1);
  g_autoptr(GString) dest = g_string_new ("/newroot");

  for (guint i = 0; parts[i] != NULL; i++)
    {
      if (parts[i][0] == '\0')
        continue;
      g_string_append_c (dest, '/');
      g_string_append (dest, parts[i]);
      if (g_hash_table_contains (plan->made, dest->str))
        continue;
      g_hash_table_add (plan->made, g_strdup (dest->str));
      plan_add (plan, OP_MKDIR, FALSE, NULL, dest->str, NULL);
    }
}

/* A host path seen the same inside: a symlink stays a symlink (merged /usr:
 * /bin -> usr/bin), a folder or file is bound read-only. */
static void
plan_system_path (Plan       *plan,
                  const char *path,
                  gboolean    follow)
{
  struct stat st;
  g_autofree char *dest = g_strconcat ("/newroot", path, NULL);
  g_autofree char *resolved = NULL;
  g_autofree char *source = NULL;
  g_autofree char *parent = g_path_get_dirname (path);

  if ((follow ? stat (path, &st) : lstat (path, &st)) != 0)
    return;   /* not on this system: nothing to show */

  /* Bind the file a symlink leads to: an absolute link would otherwise be
   * resolved against the base tmpfs, not under /oldroot. */
  resolved = follow ? realpath (path, NULL) : g_strdup (path);
  if (resolved == NULL)
    return;
  source = g_strconcat ("/oldroot", resolved, NULL);

  plan_mkdir_p (plan, parent);

  if (S_ISLNK (st.st_mode))
    {
      g_autofree char *target = g_file_read_link (path, NULL);
      if (target != NULL)
        plan_add (plan, OP_SYMLINK, FALSE, target, dest, NULL);
    }
  else if (S_ISDIR (st.st_mode))
    {
      plan_mkdir_p (plan, path);
      plan_add (plan, OP_BIND_RO, FALSE, source, dest, NULL);
    }
  else if (S_ISREG (st.st_mode))
    {
      plan_add (plan, OP_CREATE_FILE, FALSE, NULL, dest, NULL);
      plan_add (plan, OP_BIND_RO, FALSE, source, dest, NULL);
    }
}

static void
plan_build (Plan          *plan,
            const char    *workspace,
            int            pty_fd)
{
  /* The system: programs and libraries, read-only. */
  static const char *const system_dirs[] = {
    "/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32",
  };
  /* The part of /etc programs need to run, resolve names and verify TLS.
   * Followed when symlinks (resolv.conf often points into /run, which the
   * sandbox does not have). Not shadow, not ssh keys, nothing secret. */
  static const char *const etc_files[] = {
    "/etc/passwd", "/etc/group", "/etc/hosts", "/etc/host.conf",
    "/etc/hostname", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/gai.conf",
    "/etc/services", "/etc/protocols", "/etc/ld.so.cache", "/etc/ld.so.conf",
    "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/ssl", "/etc/ca-certificates",
    "/etc/ca-certificates.conf", "/etc/localtime", "/etc/timezone",
    "/etc/os-release", "/etc/shells", "/etc/profile", "/etc/bash.bashrc",
    "/etc/inputrc", "/etc/terminfo", "/etc/mime.types", "/etc/gitconfig",
    "/etc/locale.alias", "/etc/locale.gen", "/etc/default/locale",
  };
  static const char *const dev_nodes[] = {
    "null", "zero", "full", "random", "urandom", "tty",
  };

  for (guint i = 0; i < G_N_ELEMENTS (system_dirs); i++)
    plan_system_path (plan, system_dirs[i], FALSE);
  plan_mkdir_p (plan, "/etc");
  for (guint i = 0; i < G_N_ELEMENTS (etc_files); i++)
    plan_system_path (plan, etc_files[i], TRUE);

  /* A minimal /dev: a tmpfs holding binds of the harmless host devices. */
  plan_mkdir_p (plan, "/dev");
  plan_add (plan, OP_TMPFS, FALSE, NULL, "/newroot/dev", "mode=0755");
  for (guint i = 0; i < G_N_ELEMENTS (dev_nodes); i++)
    {
      g_autofree char *host = g_strconcat ("/dev/", dev_nodes[i], NULL);
      g_autofree char *source = g_strconcat ("/oldroot/dev/", dev_nodes[i], NULL);
      g_autofree char *dest = g_strconcat ("/newroot/dev/", dev_nodes[i], NULL);

      if (!g_file_test (host, G_FILE_TEST_EXISTS))
        continue;
      plan_add (plan, OP_CREATE_FILE, FALSE, NULL, dest, NULL);
      plan_add (plan, OP_BIND_DEV, FALSE, source, dest, NULL);
    }
  plan_add (plan, OP_MKDIR, FALSE, NULL, "/newroot/dev/pts", NULL);
  plan_add (plan, OP_DEVPTS, FALSE, NULL, "/newroot/dev/pts", NULL);
  plan_add (plan, OP_SYMLINK, FALSE, "pts/ptmx", "/newroot/dev/ptmx", NULL);
  plan_add (plan, OP_MKDIR, FALSE, NULL, "/newroot/dev/shm", NULL);
  plan_add (plan, OP_TMPFS, FALSE, NULL, "/newroot/dev/shm", "mode=1777");
  plan_add (plan, OP_SYMLINK, FALSE, "/proc/self/fd", "/newroot/dev/fd", NULL);
  plan_add (plan, OP_SYMLINK, FALSE, "/proc/self/fd/0", "/newroot/dev/stdin", NULL);
  plan_add (plan, OP_SYMLINK, FALSE, "/proc/self/fd/1", "/newroot/dev/stdout", NULL);
  plan_add (plan, OP_SYMLINK, FALSE, "/proc/self/fd/2", "/newroot/dev/stderr", NULL);
  if (pty_fd >= 0)
    {
      /* Bound by its path in our copy of the host's tree: a bind source must
       * be a mount of our own namespace, which the fd's (the host's) is not.
       * ttyname_r() checks the path is this very terminal. */
      char name[256];

      if (ttyname_r (pty_fd, name, sizeof name) == 0 && name[0] == '/')
        {
          g_autofree char *source = g_strconcat ("/oldroot", name, NULL);
          plan_add (plan, OP_CREATE_FILE, FALSE, NULL, "/newroot/dev/console", NULL);
          plan_add (plan, OP_BIND_DEV, FALSE, source, "/newroot/dev/console", NULL);
        }
    }

  /* /proc of our PID namespace, with the kernel knobs that would act on the
   * host read-only (as bubblewrap does: in a user namespace most writes there
   * fail anyway; this makes it so for every one of them). */
  plan_mkdir_p (plan, "/proc");
  plan_add (plan, OP_PROC, FALSE, NULL, "/newroot/proc", NULL);
  {
    static const char *const proc_ro[] = { "sys", "sysrq-trigger", "irq", "bus" };
    for (guint i = 0; i < G_N_ELEMENTS (proc_ro); i++)
      {
        g_autofree char *p = g_strconcat ("/newroot/proc/", proc_ro[i], NULL);
        plan_add (plan, OP_BIND_RO, TRUE, p, p, NULL);
      }
  }

  /* Private, empty /tmp and HOME: nothing of the host's /tmp or of the real
   * home is visible, and what the agent leaves there dies with it. */
  plan_mkdir_p (plan, "/tmp");
  plan_add (plan, OP_TMPFS, FALSE, NULL, "/newroot/tmp", "mode=1777");
  plan_mkdir_p (plan, HOME_PATH);
  plan_add (plan, OP_TMPFS, FALSE, NULL, "/newroot" HOME_PATH, "mode=0700");

  /* The workspace last: it may lie inside /tmp or HOME's tmpfs, so its mount
   * point is created in them. Same absolute path inside and out, so paths in
   * the agent's output mean the same thing to the user. */
  {
    g_autofree char *source = g_strconcat ("/oldroot", workspace, NULL);
    g_autofree char *dest = g_strconcat ("/newroot", workspace, NULL);
    struct stat st;

    plan_mkdir_p (plan, workspace);
    plan_add (plan, OP_BIND_RW, FALSE, source, dest, NULL);
    if (stat (workspace, &st) == 0)
      {
        SetupOp *op = &g_array_index (plan->ops, SetupOp, plan->ops->len - 1);
        op->expect_dev = st.st_dev;
        op->expect_ino = st.st_ino;
      }
  }

  /* Last, the root tmpfs itself: the skeleton of folders cannot be changed. */
  plan_add (plan, OP_REMOUNT_RO, FALSE, NULL, "/newroot", NULL);
}

static gboolean
path_is_within (const char *path,
                const char *dir)
{
  size_t n = strlen (dir);
  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The workspace is bound over the sandbox's own tree: it must not replace or
 * hide a system folder, /proc, /dev or the private /tmp and HOME. */
static gboolean
workspace_allowed (const char *ws)
{
  static const char *const reserved_within[] = {
    "/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/etc",
    "/proc", "/dev", "/sys", "/run",
  };
  static const char *const reserved_exact[] = { "/", "/tmp", "/home", HOME_PATH };

  for (guint i = 0; i < G_N_ELEMENTS (reserved_within); i++)
    if (path_is_within (ws, reserved_within[i]))
      return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (reserved_exact); i++)
    if (g_str_equal (ws, reserved_exact[i]))
      return FALSE;
  return TRUE;
}

static void
explain_no_userns (int err)
{
  g_autofree char *clone_knob = NULL;
  g_autofree char *apparmor_knob = NULL;
  const char *hint;

  g_file_get_contents ("/proc/sys/kernel/unprivileged_userns_clone", &clone_knob, NULL, NULL);
  g_file_get_contents ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
                       &apparmor_knob, NULL, NULL);

  if (err == ENOSPC || err == EUSERS)
    hint = "user.max_user_namespaces is 0 or used up; raise it with sysctl user.max_user_namespaces=N";
  else if (err == EINVAL)
    hint = "the kernel lacks CONFIG_USER_NS";
  else if (clone_knob != NULL && clone_knob[0] == '0')
    hint = "kernel.unprivileged_userns_clone is 0; allow with sysctl kernel.unprivileged_userns_clone=1";
  else if (apparmor_knob != NULL && apparmor_knob[0] == '1')
    hint = "AppArmor restricts them; allow with sysctl kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile granting userns";
  else
    hint = "a seccomp or LSM policy (e.g. a container's) forbids clone(CLONE_NEWUSER); allow it there, "
           "or check sysctl user.max_user_namespaces and kernel.unprivileged_userns_clone";

  fprintf (stderr, "paddock-sandbox: user namespaces are unavailable: %s (%s); refusing to run without them\n",
           g_strerror (err), hint);
}

static void
forward_or_wait (pid_t child)
{
  sigset_t set;

  forwarded_signals (&set);
  for (;;)
    {
      siginfo_t si;
      int status;
      pid_t r;

      if (sigwaitinfo (&set, &si) < 0)
        {
          if (errno == EINTR)
            continue;
          g_printerr ("paddock-sandbox: sigwaitinfo failed: %s\n", g_strerror (errno));
          kill (child, SIGKILL);
          exit (EXIT_SETUP);
        }

      if (si.si_signo != SIGCHLD)
        {
          /* From the daemon (or a terminal): pid 1 passes it to the agent's
           * process group. */
          kill (child, si.si_signo);
          continue;
        }

      r = waitpid (child, &status, WNOHANG);
      if (r == child)
        {
          /* Pid 1 has exited: the kernel has already killed and reaped every
           * other process of the namespace before this returned. */
          exit (status_to_code (status));
        }
    }
}

static int
parse_fd (const char *name,
          const char *text)
{
  guint64 v;

  if (text == NULL)
    return -1;
  if (!g_ascii_string_to_unsigned (text, 10, 0, G_MAXINT, &v, NULL) ||
      fcntl ((int) v, F_GETFD) < 0)
    {
      g_printerr ("paddock-sandbox: %s wants an open file descriptor, got '%s'\n", name, text);
      exit (EXIT_USAGE);
    }
  return (int) v;
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *workspace_arg = NULL;
  g_autofree char *profile = NULL;
  g_autofree char *control_fd_arg = NULL;
  g_autofree char *pty_fd_arg = NULL;
  g_auto(GStrv) env = NULL;
  gboolean die_with_parent = FALSE;
  GOptionEntry entries[] = {
    { "workspace", 0, 0, G_OPTION_ARG_FILENAME, &workspace_arg, "Project folder (read-write, same path)", "DIR" },
    { "profile", 0, 0, G_OPTION_ARG_STRING, &profile, "safe (default) or host", "PROFILE" },
    { "control-fd", 0, 0, G_OPTION_ARG_STRING, &control_fd_arg, "Write JSON-line events here", "N" },
    { "pty-fd", 0, 0, G_OPTION_ARG_STRING, &pty_fd_arg, "PTY slave for the agent", "N" },
    { "env", 0, 0, G_OPTION_ARG_STRING_ARRAY, &env, "Agent environment entry (repeatable)", "K=V" },
    { "die-with-parent", 0, 0, G_OPTION_ARG_NONE, &die_with_parent, "Die with the parent even after setup", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("-- CMD [ARG...]");
  g_autoptr(GError) error = NULL;
  g_autofree char *workspace = NULL;
  g_auto(Plan) plan = { NULL, NULL, NULL };
  SandboxConfig cfg = { .control_fd = -1, .pty_fd = -1, .ready_fd = -1, .alive_fd = -1 };
  g_autoptr(GPtrArray) envp = g_ptr_array_new ();
  paddock_autofd int ready_read = -1;
  paddock_autofd int alive_write = -1;
  int ready_pipe[2];
  int alive_pipe[2];
  sigset_t set;
  pid_t child;
  int dashdash = -1;

  /* Until the sandbox is set up, our parent's death is ours: a daemon that
   * crashed mid-start must not leave a half-built session behind. (The
   * daemon also sets it in its child before exec, closing the window
   * between its fork and this line.) */
  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);

  /* Everything inherited is closed at the agent's exec. */
  close_range (3, ~0U, CLOSE_RANGE_CLOEXEC);

  for (int i = 1; i < argc; i++)
    if (g_str_equal (argv[i], "--"))
      {
        dashdash = i;
        break;
      }

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_summary (context, "Run CMD in a Paddock session sandbox.");
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("paddock-sandbox: %s\n", error->message);
      return EXIT_USAGE;
    }
  /* After parsing, argv[1..] is what followed "--" (GOption keeps the "--"
   * itself when something follows it). */
  if (argc >= 2 && g_str_equal (argv[1], "--"))
    {
      argv++;
      argc--;
    }
  if (dashdash < 0 || argc < 2)
    {
      g_printerr ("paddock-sandbox: no command given (usage: paddock-sandbox --workspace DIR [OPTION...] -- CMD [ARG...])\n");
      return EXIT_USAGE;
    }
  if (argv[1][0] == '\0')
    {
      g_printerr ("paddock-sandbox: the command is an empty string\n");
      return EXIT_USAGE;
    }

  if (profile == NULL || g_str_equal (profile, "safe"))
    cfg.host_profile = FALSE;
  else if (g_str_equal (profile, "host"))
    cfg.host_profile = TRUE;
  else
    {
      g_printerr ("paddock-sandbox: unknown profile '%s' (safe or host)\n", profile);
      return EXIT_USAGE;
    }

  cfg.control_fd = parse_fd ("--control-fd", control_fd_arg);
  cfg.pty_fd = parse_fd ("--pty-fd", pty_fd_arg);
  if (cfg.pty_fd >= 0)
    {
      if (!isatty (cfg.pty_fd))
        {
          g_printerr ("paddock-sandbox: --pty-fd %d is not a terminal\n", cfg.pty_fd);
          return EXIT_USAGE;
        }
      /* Keep it off 0-2, which the agent's dup2() overwrites. */
      if (cfg.pty_fd < 3)
        cfg.pty_fd = fcntl (cfg.pty_fd, F_DUPFD_CLOEXEC, 3);
    }

  if (workspace_arg == NULL)
    {
      g_printerr ("paddock-sandbox: --workspace DIR is required\n");
      return EXIT_USAGE;
    }
  workspace = realpath (workspace_arg, NULL);
  if (workspace == NULL || !g_file_test (workspace, G_FILE_TEST_IS_DIR))
    {
      g_printerr ("paddock-sandbox: workspace '%s' is not a folder: %s\n", workspace_arg,
                  g_strerror (workspace == NULL ? errno : ENOTDIR));
      return EXIT_WORKSPACE;
    }
  if (!cfg.host_profile && !workspace_allowed (workspace))
    {
      g_printerr ("paddock-sandbox: workspace '%s' overlaps a folder the sandbox provides itself\n",
                  workspace);
      return EXIT_WORKSPACE;
    }

  cfg.path_env = DEFAULT_PATH;
  for (guint i = 0; env != NULL && env[i] != NULL; i++)
    {
      if (strchr (env[i], '=') == NULL || env[i][0] == '=')
        {
          g_printerr ("paddock-sandbox: --env wants K=V, got '%s'\n", env[i]);
          return EXIT_USAGE;
        }
      if (g_str_has_prefix (env[i], "PATH="))
        cfg.path_env = env[i] + 5;
      g_ptr_array_add (envp, env[i]);
    }
  g_ptr_array_add (envp, NULL);

  cfg.workspace = workspace;
  cfg.argv = argv + 1;
  cfg.envp = (char *const *) envp->pdata;
  cfg.die_with_parent = die_with_parent;
  g_snprintf (cfg.uid_map, sizeof cfg.uid_map, "%u %u 1\n", getuid (), getuid ());
  g_snprintf (cfg.gid_map, sizeof cfg.gid_map, "%u %u 1\n", getgid (), getgid ());

  /* Signals are blocked from here on and read synchronously, both here and
   * (inherited) in pid 1: none can arrive half-way through setup. */
  forwarded_signals (&set);
  sigprocmask (SIG_BLOCK, &set, NULL);

  if (cfg.host_profile)
    {
      /* No namespaces, asked for explicitly: we are the init. Orphans of
       * the agent come back to us to be reaped. */
      prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
      if (!die_with_parent)
        prctl (PR_SET_PDEATHSIG, 0, 0, 0, 0);
      run_init (&cfg);
    }

  plan_init (&plan);
  plan_build (&plan, workspace, cfg.pty_fd);
  cfg.ops = (const SetupOp *) (void *) plan.ops->data;
  cfg.n_ops = plan.ops->len;

  if (pipe2 (ready_pipe, O_CLOEXEC) != 0 || pipe2 (alive_pipe, O_CLOEXEC) != 0)
    {
      g_printerr ("paddock-sandbox: pipe2 failed: %s\n", g_strerror (errno));
      return EXIT_SETUP;
    }
  ready_read = ready_pipe[0];
  cfg.ready_fd = ready_pipe[1];
  alive_write = alive_pipe[1];
  cfg.alive_fd = alive_pipe[0];

  /* A fork-like raw clone (no new stack): the child continues here as pid 1
   * of the new namespaces, owning them through the new user namespace, so
   * no privilege is needed. We are single-threaded, so the child's copy of
   * the process is consistent. */
  child = (pid_t) syscall (SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | SIGCHLD,
                           NULL, NULL, NULL, NULL);
  if (child < 0)
    {
      explain_no_userns (errno);
      return EXIT_NO_NAMESPACES;
    }
  if (child == 0)
    {
      close (ready_read);
      close (alive_write);
      sandbox_child (&cfg);
    }

  close (cfg.ready_fd);
  close (cfg.alive_fd);
  {
    char c;
    ssize_t n;

    while ((n = read (ready_read, &c, 1)) < 0 && errno == EINTR)
      ;
    /* Set up (or failed, in which case pid 1 said why and exits with a
     * code below that forward_or_wait() passes on). Past setup, a daemon
     * restart must not take the session down: let go of the parent. */
    if (n == 1 && !die_with_parent)
      prctl (PR_SET_PDEATHSIG, 0, 0, 0, 0);
  }

  forward_or_wait (child);
  return EXIT_SETUP;
}
