/* paddock-sandbox.c — per-session helper: namespaces, minimal root, pid 1 init
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Usage:
 *   paddock-sandbox --workspace DIR [--profile safe|host] [--control-fd N]
 *                   [--pty-fd N] [--env K=V]… [--stage overlay:DIR|copy:DIR]
 *                   [--die-with-parent] -- CMD [ARG…]
 *   paddock-sandbox --probe-stage DIR
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
 *                       {"event":"started","pid":P}   once the agent exec'd
 *                       {"event":"exited","pid":P,"status":S[,"signal":N]}
 *                     P is the agent's pid in the sandbox's PID namespace (2);
 *                     S follows the shell: the exit code, or 128+N if killed by
 *                     signal N. On a SOCK_SEQPACKET socket the daemon also
 *                     sends requests (see "Commands" below).
 *   --pty-fd N        PTY slave: the agent runs on it as session leader with it
 *                     as controlling terminal, stdin, stdout and stderr; it is
 *                     also bound at /dev/console so ttyname() resolves. Without
 *                     it the agent inherits our stdio (in its own session).
 *   --env K=V         the agent's environment is exactly these, nothing else.
 *                     The sandbox's HOME is the private tmpfs /home/agent: pass
 *                     HOME=/home/agent. PATH from here is used to find CMD.
 *   --stage overlay:DIR  the workspace is an overlayfs (rootless, userxattr)
 *                     whose lower layer is the real workspace and whose upper
 *                     and work layers are DIR/upper and DIR/work: every write
 *                     lands in DIR/upper, the real folder is never written.
 *   --stage copy:DIR  the workspace path shows DIR (a copy the daemon made),
 *                     read-write; the real folder is not in the view at all.
 *                     Without --stage the real workspace is bound read-write.
 *   --real-home DIR --expose PATH  (repeatable, PATH relative to DIR, the
 *                     user's real HOME, e.g. .config/agent) DIR/PATH, a
 *                     folder or file, is bound read-only at HOME_PATH/PATH:
 *                     a named config folder projected into the session's
 *                     HOME, listed in the report ("exposed").
 *   --home-dir DIR    (an agent's home, under the daemon's state dir) DIR is
 *                     bound read-write at HOME_PATH over its tmpfs, so what
 *                     the agent keeps there lasts; exposures go over it.
 *   --view-ro PATH    (repeatable, absolute: an agent's package tree or
 *                     runtime) PATH, a folder or file, is bound read-only at
 *                     its own path in the view.
 *   --protect PATH    (repeatable, relative to the workspace, e.g. .git/hooks)
 *                     when it exists in the view, PATH is bound onto itself
 *                     read-only (EROFS to every write) and each folder above
 *                     it inside the workspace onto itself (EBUSY to a rename
 *                     or removal). A symlink is followed when it stays in the
 *                     workspace, else reported as "protected_skipped". A
 *                     canary write into each is reported (probe
 *                     "protected-path").
 *   --probe-stage DIR try an overlay mount like --stage overlay would, with
 *                     DIR (on the state folder's filesystem) as scratch space;
 *                     exit 0 if it works, else 71 with the reason on stderr.
 *   --net host|none|proxy  host (default): the user's network. none: a
 *                     network namespace of its own with only loopback, up,
 *                     taking TCP packets of up to 512 KiB (BIG TCP, where the
 *                     kernel has it: loopback_allow_large_packets()).
 *                     proxy: as none, and pid 1 listens on 127.0.0.1:PORT
 *                     (--proxy-port, default 3128) inside it before the
 *                     agent exists, and passes that listening socket to the
 *                     daemon, which serves it (the session's only way out):
 *                       {"event":"proxy","port":PORT}   + the socket (SCM_RIGHTS)
 *                     sent before "started"; pid 1 keeps no copy.
 *   --listen-fd N     (repeatable, at most 16) the agent gets fd N as fd 3,
 *                     the next as 4…, in order: leased sockets passed by the
 *                     socket-activation protocol (the caller sets LISTEN_FDS,
 *                     LISTEN_FDNAMES and LISTEN_PID=2, the agent's pid).
 *   --seccomp-fd N    the seccomp filter to load, as a memfd sealed against
 *                     writes holding its BPF program (the daemon builds it
 *                     once with paddock_seccomp_build_sealed(), as bubblewrap's
 *                     --seccomp FD). Without it the helper builds the same
 *                     filter itself, which costs a few milliseconds per start.
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
 *
 * Commands (the daemon's Exec), over the --control-fd socket when it is a
 * SOCK_SEQPACKET socket: one request per message, a GVariant of type a{sv}
 * in its normal serialized form (native byte order), at most 128 KiB, with
 * fds attached as SCM_RIGHTS (at most 8). Written here in GVariant's text
 * notation (b'…' is a bytestring, "ay"):
 *   {'op': <'spawn'>, 'id': <uint32 N>, 'argv': <[b'cmd', b'arg', …]>,
 *    'cwd': <b'/abs'>, 'env': <[b'K=V', …]>, 'tty': <true>}
 *                                + 3 fds: stdin, stdout, stderr (may be one),
 *                                  or, with tty true, no fd at all: pid 1
 *                                  makes the terminal (see below)
 *   {'op': <'kill'>, 'id': <uint32 N>, 'signal': <int32 S>}   no fds
 *   {'op': <'socket'>, 'id': <uint32 N>, 'family': <'inet6'>}   no fds: a
 *                                TCP socket made in the session's network
 *                                namespace, for the daemon's port
 *                                forwarding, IPv4 or, with 'family' 'inet6'
 *                                (optional; a string, or the request fails
 *                                with EINVAL), IPv6; answered with
 *                                {"event":"socket","id":N} + the socket, or
 *                                {"event":"socket-failed","id":N,"errno":E}
 * (Events going the other way are JSON lines; requests are GVariants so that
 * pid 1, which every command's supervisor is forked from, needs GLib only:
 * no json-glib, GIO and the dozen libraries they load in every session.)
 * N is the daemon's (0 to 2^32-1, unique among running commands); argv is
 * 1 to 4096 bytestrings, env 0 to 4096 K=V bytestrings and is the command's whole
 * environment (its PATH finds argv[0]; default /usr/local/bin:/usr/bin:/bin);
 * cwd defaults to the workspace; tty (default false) makes the command a
 * session leader with fd 0 as controlling terminal, otherwise it gets a
 * process group of its own. A terminal the daemon made belongs to the
 * daemon's devpts, which is not in the sandbox's view: ttyname() and tty(1)
 * fail on it. So a tty spawn without fds gets a PTY pair from the
 * sandbox's own devpts instance (/dev/pts/ptmx), 80x24, the slave as the
 * command's stdio, and the master goes back to the daemon with "spawned"
 * (SCM_RIGHTS). Events, one per message, like the agent's:
 *   {"event":"spawned","id":N,"pid":P}          P in the sandbox's namespace;
 *                                                 + the PTY master when pid 1
 *                                                 made the terminal
 *   {"event":"spawn-failed","id":N,"errno":E,"message":"…"}
 *   {"event":"command-exited","id":N,"status":S[,"signal":K]}
 * Exactly one of spawned/spawn-failed answers a spawn that names a valid id
 * (EBADF: not 3 fds; EINVAL: bad argv/env/cwd/tty; EEXIST: id running;
 * EAGAIN: 64 commands running; EIO: its supervisor was killed before it
 * started it; chdir/exec errno otherwise, after fork).
 * Events of different ids may interleave in any order. A request without a
 * valid id, of an unknown op, not an a{sv} in normal form or too big, a
 * member of the wrong type, and a kill of an id not
 * running, is dropped with one "ignoring a control request" line on stderr;
 * fds that came with it are closed. Without a kill, command-exited comes as
 * soon as the command itself exits: background processes it leaves keep
 * running in the session (re-parented to pid 1; the PID namespace still
 * ends them with the session), which is Exec's "run, get output and status".
 * After any kill, command-exited comes only once the command AND all its
 * descendants are gone: SIGKILL kills the whole tree (setsid'd and
 * double-forked included) and always gets there; another signal is sent
 * once to every process of the tree, and the daemon escalates to SIGKILL
 * if the tree outlives its grace. When the agent exits the session ends and
 * running commands die with it without command-exited.
 *
 * Direct events: a spawn with 'direct': <true> (and tty false) carries a
 * 4th fd, one end of a SOCK_SEQPACKET pair the daemon made for this
 * command alone. Its spawned/spawn-failed/command-exited then go on that
 * channel instead of the control socket, the same JSON lines, written by
 * the command's supervisor itself (or by pid 1 when it refuses the request
 * before any supervisor has it): no wakeup of pid 1 between the command's
 * exec or exit and the daemon, which on a small machine is most of what a
 * short command costs. One writer per channel (pid 1 closes its copy once
 * a supervisor holds it), so a command's events keep their order; the
 * kill rules are the supervisor's own, so command-exited after a kill
 * still waits for the whole tree. The supervisor also tells pid 1 (a
 * SupMsg, after the daemon's event) once it has given the last event; if
 * it ends without that (killed), pid 1 sends, on the control socket,
 *   {"event":"supervisor-gone","id":N}
 * and the daemon answers the command itself (spawn-failed EIO before
 * "spawned", else command-exited with status 255, as pid 1 does for a
 * relayed command). The supervisor wrote whatever it wrote on the channel
 * before it died and pid 1 saw that, so the daemon reads the channel to
 * its end before it acts on supervisor-gone: the order holds. When the
 * whole sandbox goes, its end answers every command, as before. Kills
 * still go through pid 1.
 * Why a channel into the session does not weaken the boundary: only the
 * supervisor holds its end (received CLOEXEC; the command's exec closes
 * it; pid 1 keeps no copy and the supervisors of other commands never had
 * one). The agent and the commands run as the same uid but with no
 * capabilities at all, while pid 1 and the supervisors keep their full set
 * in the sandbox's user namespace, so the kernel refuses them ptrace and
 * /proc/PID/fd of a supervisor (ptrace_may_access: the tracer's
 * capabilities must cover the target's). That alone would leave open the
 * window from the command's child dropping its capabilities to its exec,
 * when it has none but shares the supervisor's memory (CLONE_VM): so a
 * supervisor is not dumpable (supervise_command), and the kernel asks for
 * CAP_SYS_PTRACE over that memory whichever process's /proc entry leads
 * to it. What they can do is kill a
 * supervisor (same uid), which closes the channel: the case above; or
 * stop it (SIGSTOP), which would leave its command unanswered: pid 1
 * resumes a supervisor before it hands it a command or a signal
 * (hand_to_spare, handle_kill) and kills the tree of one it finds stopped
 * when asked for SIGKILL, and the daemon waits a bounded time for
 * "spawned", then asks for the command's SIGKILL. And a
 * compromised supervisor could only lie about its own command: the daemon
 * reads a channel as the events of the command it made it for (the "id"
 * inside is not trusted), accepts "spawned" once and then only its end,
 * and closes the channel after it (anything else ends the command as if
 * its supervisor had died) — as, today, it could send pid 1 any
 * SupMsg about its own command, and no process of the session has ever
 * had a way to the control socket, which is pid 1's alone.
 *
 * Pid 1 reads the requests itself (the helper outside closes its copy of
 * the socket after clone): it is inside the namespaces already, so no
 * process outside relays fds into them. Each command runs under a command
 * supervisor, a child of pid 1 that is a child subreaper (see
 * run_command_supervisor). Commands are confined like the agent: same
 * namespaces and root view, no_new_privs (pid 1's), no capabilities.
 * Requests are parsed with GLib in pid 1, which is single-threaded (a
 * clone of the single-threaded helper, which starts no GLib thread), so
 * GLib and malloc are safe there and in the supervisors it forks; only the
 * supervisor's child, between fork and the command's exec, is limited to
 * async-signal-safe calls.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <linux/capability.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <linux/securebits.h>

#include "paddock-autofd.h"
#include "paddock-landlock.h"
#include "paddock-seccomp.h"
#include "paddock-spare-options.h"

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

#define HOME_PATH "/home/agent"   /* PADDOCK_SANDBOX_HOME in paddock-boundary.h */
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
  OP_OVERLAY,      /* dest, data = overlay mount options (the staging overlay) */
  OP_BIND_ONLY,    /* source -> dest, the source's flags; an OP_SETATTR_TREE above sets the rest */
  OP_SETATTR_TREE, /* dest and every mount below it get attr_set added (mount_setattr) */
  OP_PIN,          /* dest: a folder of the workspace bound onto itself, so it cannot be renamed; absent: skipped */
  OP_PROTECT,      /* dest: a protected path bound onto itself read-only, data = its path in the view; absent: skipped */
} SetupOpType;

typedef struct {
  SetupOpType type;
  gboolean optional;    /* a missing source is fine (e.g. /proc/irq) */
  const char *source;
  const char *dest;
  const char *data;
  dev_t expect_dev;     /* OP_BIND_RW: the folder the helper resolved, */
  ino_t expect_ino;     /* checked after binding (0, 0: unchecked) */
  guint64 attr_set;     /* OP_SETATTR_TREE: MOUNT_ATTR_* to add */
} SetupOp;

/* mount_setattr(2) (Linux 5.12) works here: set before the plan is made
 * and used between clone and exec (a plain read). With it, flags are added
 * to a bind without restating (statfs) the ones the kernel locked, and to a
 * whole tree of binds in one call. */
static gboolean have_mount_setattr;

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
  int alive_fd;                  /* helper -> pid 1: a byte once it let go of its parent,
                                  * EOF when the helper is gone (read end) */
  const char *probe_hidden;      /* a host path the view must not show */
  const char *probe_abstract;    /* a host abstract socket the agent must not reach */
  pid_t probe_pid;               /* a host pid the agent must not signal */
  guint16 probe_port;            /* a host loopback port the agent must not reach (net none) */
  gboolean own_network;          /* --net none or proxy: a network namespace with loopback only */
  guint16 proxy_port;            /* --net proxy: pid 1 listens on 127.0.0.1:PORT inside for the daemon */
  int listen_fds[16];            /* --listen-fd: the agent's fds 3… (socket activation) */
  guint n_listen_fds;
  const struct sock_fprog *seccomp;        /* built before clone; NULL: none */
  const PaddockLandlockPlan *landlock;     /* planned before clone; NULL: none */
  gboolean protect_requested;    /* --protect named at least one path */
  char *const *exposed;          /* --expose paths (relative to HOME), or NULL */
} SandboxConfig;

/* The protected paths pid 1 found and made read-only (their paths in the
 * view), for its canary and its report. Filled by run_op() in pid 1. */
#define MAX_PROTECT 16
static const char *protected_mounted[MAX_PROTECT];
static guint n_protected_mounted;
/* …and those it could not protect: a symlink out of the workspace. */
static const char *protected_skipped[MAX_PROTECT];
static guint n_protected_skipped;

static gboolean path_is_within (const char *path,
                                const char *dir);

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
  char buf[8192];
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

/* @s inside a JSON string: quotes, backslashes and control bytes escaped. */
static void
line_add_json (LineBuf    *line,
               const char *s)
{
  static const char hex[] = "0123456789abcdef";

  for (const unsigned char *p = (const unsigned char *) s; *p != '\0'; p++)
    {
      char esc[7] = { '\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15], '\0' };
      char one[3] = { '\\', (char) *p, '\0' };

      if (*p < 0x20)
        line_add (line, esc);
      else if (*p == '"' || *p == '\\')
        line_add (line, one);
      else
        line_add (line, one + 1);
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

/* One message of LEN bytes on the socket FD with N_FDS (1 to 4) fds
 * attached as SCM_RIGHTS, never blocking nor raising SIGPIPE. Returns what
 * sendmsg() did. */
static ssize_t
send_with_fds (int         fd,
               const void *data,
               gsize       len,
               const int  *pass_fds,
               guint       n_fds)
{
  union {
    struct cmsghdr align;
    char space[CMSG_SPACE (sizeof (int) * 4)];
  } control;
  struct iovec iov = { .iov_base = (void *) data, .iov_len = len };
  struct msghdr msg = {
    .msg_iov = &iov,
    .msg_iovlen = 1,
    .msg_control = control.space,
    .msg_controllen = CMSG_SPACE (sizeof (int) * n_fds),
  };
  struct cmsghdr *header;
  ssize_t n;

  g_assert (n_fds >= 1 && n_fds <= 4);
  memset (&control, 0, sizeof control);
  header = CMSG_FIRSTHDR (&msg);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN (sizeof (int) * n_fds);
  memcpy (CMSG_DATA (header), pass_fds, sizeof (int) * n_fds);
  while ((n = sendmsg (fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT)) < 0 && errno == EINTR)
    ;
  return n;
}

/* send_event(), with FD (if not -1) attached as SCM_RIGHTS. */
static void
send_event_with_fd (int            fd,
                    const LineBuf *line,
                    int            pass_fd)
{
  if (pass_fd < 0 || fd < 0)
    send_event (fd, line);
  else
    send_with_fds (fd, line->buf, line->len, &pass_fd, 1);
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
static int
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
static int
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

static G_NORETURN void
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
        if (dup2 (high[i], 3 + (int) i) < 0)
          die_errno (EXIT_SETUP, "cannot move a listening socket", NULL, errno);
    }

  /* Nothing of ours or of whoever started us reaches the agent but 0-2
   * (and its leased sockets). */
  if (close_range (3 + cfg->n_listen_fds, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
    die_errno (EXIT_SETUP, "close_range failed", NULL, errno);

  err = exec_in_path (cfg->argv, cfg->envp, cfg->path_env);
  die_errno (err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC, "cannot run", cfg->argv[0], err);
}

/* ---- extra commands: the command supervisor -------------------------------
 *
 * Each command runs under a small supervisor, a child of pid 1 (forked from
 * it, so already inside the namespaces, with no_new_privs set and pid 1's
 * blocked signal mask). The supervisor is a child subreaper: every orphan of
 * the command's tree (setsid'd, double-forked) is re-parented to it, not to
 * pid 1, so the tree stays findable through /proc/thread-self/children and
 * its pids cannot be reused while we hold them unreaped. It talks to pid 1
 * over a private SOCK_SEQPACKET pair: SupMsg up, a signal number (int) down.
 * Pid 1 is the only writer of the daemon's control socket, so the events of
 * one command keep their order (spawned before command-exited); a direct
 * command's events have their own channel with one writer at a time (pid 1
 * until it hands the channel to the supervisor, then the supervisor). */

#define MAX_REQUEST_BYTES (128 * 1024)   /* one request message, a serialized a{sv} */
#define MAX_ARGS 4096                    /* argv entries of one command */
#define MAX_ENV 4096                     /* env entries of one command */
#define MAX_COMMANDS 64                  /* running commands per session */
#define MAX_RECV_FDS 8                   /* fds accepted with one message */
#define MAX_TREE 4096                    /* processes signalled per walk */
#define SPARE_IDLE_MS 2                  /* pid 1 idle this long: fork the spare supervisor */
#define SPARE_BUSY_IDLE_MS 100           /* … while a supervisor that may come back free is busy */

typedef enum {
  SUP_SPAWNED = 1,  /* pid: the command exec'd */
  SUP_FAILED,       /* err, stage: it did not */
  SUP_EXITED,       /* status: the command's wait status */
} SupMsgType;

typedef enum {
  STAGE_SETUP,      /* supervisor or child setup (fork, subreaper, dup2) */
  STAGE_TTY,        /* setsid/TIOCSCTTY for "tty":true */
  STAGE_CWD,        /* chdir to the requested folder */
  STAGE_EXEC,       /* execve */
} FailStage;

typedef struct {
  int type;
  int pid;
  int status;
  int err;
  int stage;
  int idle;         /* SUP_EXITED: the supervisor is free for another command */
} SupMsg;

typedef struct {
  guint32 id;
  char **argv;
  char **envp;
  char *cwd;
  const char *path_env;   /* points into envp, or DEFAULT_PATH */
  gboolean tty;
  gboolean own_pty;       /* "tty":true without fds: we make the terminal */
  gboolean direct;        /* "direct":true: events go on EVENTS_FD, not the control socket */
  int fds[3];
  int events_fd;          /* the command's own event channel (the 4th fd), or -1 */
} SpawnRequest;

static void
spawn_request_clear (SpawnRequest *req)
{
  g_clear_pointer (&req->argv, g_strfreev);
  g_clear_pointer (&req->envp, g_strfreev);
  g_clear_pointer (&req->cwd, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SpawnRequest, spawn_request_clear)

static void
sup_send (int           chan,
          const SupMsg *msg)
{
  while (send (chan, msg, sizeof *msg, MSG_NOSIGNAL) < 0 && errno == EINTR)
    ;
}

static const char *stage_text (int stage);

/* What the supervisor has to say about its command: to pid 1 on CHAN,
 * which turns it into the daemon's event; or, for a "direct" spawn,
 * straight to the daemon as that event, on the command's own channel
 * (REQ's events_fd), with no wakeup of pid 1 on the way: see "Direct
 * events" at the top of this file. */
static void
sup_report (const SpawnRequest *req,
            int                 chan,
            const SupMsg       *msg)
{
  LineBuf line = { .len = 0 };

  if (req->events_fd < 0)
    {
      sup_send (chan, msg);
      return;
    }
  switch (msg->type)
    {
    case SUP_SPAWNED:
      line_add (&line, "{\"event\":\"spawned\",\"id\":");
      line_add_int (&line, (long) req->id);
      line_add (&line, ",\"pid\":");
      line_add_int (&line, msg->pid);
      break;
    case SUP_FAILED:
      line_add (&line, "{\"event\":\"spawn-failed\",\"id\":");
      line_add_int (&line, (long) req->id);
      line_add (&line, ",\"errno\":");
      line_add_int (&line, msg->err);
      line_add (&line, ",\"message\":\"");
      line_add_json (&line, stage_text (msg->stage));
      line_add (&line, ": ");
      line_add_json (&line, g_strerror (msg->err));
      line_add (&line, "\"");
      break;
    case SUP_EXITED:
      line_add (&line, "{\"event\":\"command-exited\",\"id\":");
      line_add_int (&line, (long) req->id);
      line_add (&line, ",\"status\":");
      line_add_int (&line, status_to_code (msg->status));
      if (WIFSIGNALED (msg->status))
        {
          line_add (&line, ",\"signal\":");
          line_add_int (&line, WTERMSIG (msg->status));
        }
      break;
    default:
      return;
    }
  line_add (&line, "}\n");
  send_event (req->events_fd, &line);
  /* And pid 1 learns that the command is answered (after the daemon, so
   * not on its way): without this, the channel's end means the
   * supervisor was killed, which pid 1 then reports. */
  if (msg->type != SUP_SPAWNED)
    sup_send (chan, msg);
}

/* From fork to exec of the command: async-signal-safe calls only. A failure
 * goes to pid 1 through ERR_FD (CLOEXEC: EOF means exec succeeded). */
static G_NORETURN void
exec_command (const SpawnRequest *req,
              int                 err_fd,
              gboolean            host_profile)
{
  sigset_t none;
  int fail[2] = { 0, STAGE_SETUP };
  const char *what = NULL;

  signal (SIGPIPE, SIG_DFL);
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);

  if (req->tty)
    {
      /* A session of its own with the terminal as controlling tty: it is
       * then the terminal's foreground group, so ^C and SIGWINCH reach it. */
      fail[1] = STAGE_TTY;
      if (setsid () < 0 || ioctl (req->fds[0], TIOCSCTTY, 0) != 0)
        goto failed;
    }
  else if (setpgid (0, 0) != 0)
    {
      /* Its own process group, apart from pid 1's and the agent's. */
      goto failed;
    }

  fail[1] = STAGE_SETUP;
  /* pid 1 keeps received fds at 3 or above, so these cannot clobber each
   * other; the same fd three times (a PTY slave) is fine. */
  for (int fd = 0; fd < 3; fd++)
    if (dup2 (req->fds[fd], fd) < 0)
      goto failed;

  fail[1] = STAGE_CWD;
  if (chdir (req->cwd) != 0)
    goto failed;

  /* The agent's rules: no capabilities at all (see drop_all_capabilities). */
  fail[1] = STAGE_SETUP;
  if (!host_profile && (errno = drop_all_capabilities (&what)) != 0)
    goto failed;
  if (close_range (3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
    goto failed;

  fail[1] = STAGE_EXEC;
  errno = exec_in_path (req->argv, req->envp, req->path_env);

failed:
  fail[0] = errno;
  while (write (err_fd, fail, sizeof fail) < 0 && errno == EINTR)
    ;
  _exit (127);
}

/* Direct children of this (single-threaded) process. Orphans of the tree
 * land here because we are a subreaper. Returns how many fit in OUT. */
static guint
list_children (const char *path,
               pid_t      *out,
               guint       max)
{
  paddock_autofd int fd = open (path, O_RDONLY | O_CLOEXEC);
  char buf[8192];
  size_t len = 0;
  guint n = 0;
  const char *p;

  if (fd < 0)
    return 0;
  while (len < sizeof buf - 1)
    {
      ssize_t r = read (fd, buf + len, sizeof buf - 1 - len);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      len += (size_t) r;
    }
  buf[len] = '\0';
  /* A cut-off last number is dropped; the next round sees it again. */
  if (len == sizeof buf - 1)
    {
      char *last = strrchr (buf, ' ');
      if (last != NULL)
        *last = '\0';
    }
  for (p = buf; *p != '\0' && n < max;)
    {
      char *end;
      long v = strtol (p, &end, 10);

      if (end == p)
        break;
      if (v > 0)
        out[n++] = (pid_t) v;
      p = end;
      while (*p == ' ')
        p++;
    }
  return n;
}

/* SIG to every process of our tree, once: our children and, recursively,
 * theirs. The whole tree is listed first and signalled after: signalling a
 * parent before reading its children could let it die and hand them to us
 * unseen. Grandchildren are read from their parents' /proc entries, which is
 * racy against pid reuse; the walk only reaches processes of this session
 * (the PID namespace), and SIGKILL does not use it (see kill_tree). A
 * process forked after the walk is missed: only SIGKILL is a guarantee. */
static void
signal_tree (int sig)
{
  g_autofree pid_t *queue = g_new (pid_t, MAX_TREE);
  guint head = 0;
  guint tail = list_children ("/proc/thread-self/children", queue, MAX_TREE);

  while (head < tail)
    {
      pid_t pid = queue[head++];
      g_autofree char *task_dir = g_strdup_printf ("/proc/%d/task", (int) pid);
      g_autoptr(GDir) dir = g_dir_open (task_dir, 0, NULL);
      const char *tid;

      while (dir != NULL && (tid = g_dir_read_name (dir)) != NULL && tail < MAX_TREE)
        {
          g_autofree char *children = g_strdup_printf ("%s/%s/children", task_dir, tid);
          tail += list_children (children, queue + tail, MAX_TREE - tail);
        }
    }
  for (guint i = 0; i < tail; i++)
    kill (queue[i], sig);
}

/* Reaps whatever has exited; records the command's status. FALSE once we
 * have no child left at all: the tree is empty. */
static gboolean
reap_tree (pid_t     command,
           gboolean *command_done,
           int      *command_status)
{
  for (;;)
    {
      int status;
      pid_t pid = waitpid (-1, &status, WNOHANG);

      if (pid > 0)
        {
          if (pid == command)
            {
              *command_done = TRUE;
              *command_status = status;
            }
          continue;
        }
      if (pid < 0 && errno == EINTR)
        continue;
      return !(pid < 0 && errno == ECHILD);
    }
}

/* SIGKILL the whole tree until nothing is left: kill our children, reap,
 * and again, since each death hands that process's children to us. Only
 * our own unreaped children are signalled, so no pid can have been reused.
 * A fork racing with its SIGKILL fails in the kernel (fatal signal
 * pending), so the tree cannot outgrow the loop. */
static void
kill_tree (int        sfd,
           pid_t      command,
           gboolean  *command_done,
           int       *command_status)
{
  pid_t children[512];

  for (;;)
    {
      guint n = list_children ("/proc/thread-self/children", children, G_N_ELEMENTS (children));
      struct pollfd pfd = { .fd = sfd, .events = POLLIN, .revents = 0 };
      struct signalfd_siginfo si;

      for (guint i = 0; i < n; i++)
        kill (children[i], SIGKILL);
      if (!reap_tree (command, command_done, command_status))
        return;
      /* Wait for the next death (or 10 ms, should a SIGCHLD be merged). */
      if (poll (&pfd, 1, 10) > 0)
        while (read (sfd, &si, sizeof si) < 0 && errno == EINTR)
          ;
    }
}

typedef struct {
  const SpawnRequest *req;
  int err_fd;
  gboolean host_profile;
} ExecChild;

/* Under AddressSanitizer the child's frames poison their redzones in the
 * shadow of its stack and never unpoison them (it execs, it never
 * returns). A supervisor runs command after command, so the next child's
 * stack, mapped at the same address, would inherit that poison and be
 * reported for writing its own locals: each stack starts clean, as in
 * daemon/paddock-clone-vm.c. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define UNPOISON_STACK(stack, size) __asan_unpoison_memory_region ((stack), (size))
#else
#define UNPOISON_STACK(stack, size) ((void) 0)
#endif

static int
exec_child_main (void *data)
{
  const ExecChild *child = data;

  exec_command (child->req, child->err_fd, child->host_profile);
}

/* Starts the command as posix_spawn() does: a child that shares our memory
 * (CLONE_VM) on a stack of its own, while we wait (CLONE_VFORK) until it
 * has exec'd or given up. No copy of our page tables is made, which is most
 * of what fork() costs here and sits on the path of every Exec reply. The
 * child only makes async-signal-safe calls on its own stack and data it
 * does not write (exec_command); credentials, signal dispositions, the
 * signal mask and the fd table stay its own (no CLONE_SIGHAND/CLONE_FILES),
 * so what it changes there is not ours. Returns as fork() does, in the
 * parent only; -1 with errno on failure. */
static pid_t
spawn_command (const SpawnRequest *req,
               int                 err_fd,
               gboolean            host_profile)
{
  const size_t stack_size = 256 * 1024;
  ExecChild child = { req, err_fd, host_profile };
  void *stack;
  pid_t pid;
  int saved_errno;

  stack = mmap (NULL, stack_size, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED)
    return -1;
  UNPOISON_STACK (stack, stack_size);
  pid = clone (exec_child_main, (char *) stack + stack_size,
               CLONE_VM | CLONE_VFORK | SIGCHLD, &child);
  saved_errno = errno;
  UNPOISON_STACK (stack, stack_size);
  munmap (stack, stack_size);
  errno = saved_errno;
  return pid;
}

/* Runs REQ's command and reports it (see sup_report) until it is over.
 * TRUE when this process is free for another command: the command ended
 * by itself, nothing was killed and none of its tree is left (as a
 * subreaper we would otherwise keep its background processes, and the
 * next command's kill would reach them). FALSE: the caller exits. */
static gboolean
supervise_command (const SpawnRequest *req,
                   int                 chan,
                   gboolean            host_profile)
{
  gboolean tree_left = TRUE;
  SupMsg msg = { 0, 0, 0, 0, 0, 0 };
  sigset_t set;
  int sfd;
  int err_pipe[2];
  int fail[2];
  ssize_t n;
  pid_t command;
  gboolean command_done = FALSE;
  gboolean killing = FALSE;
  int command_status = 0;

  /* Should pid 1 go (host profile: the helper), so do we. */
  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);

  /* The command's child shares our memory (CLONE_VM, spawn_command) from
   * its capability drop to its exec, a window some PATH lookups make long.
   * With our mm dumpable, any process of the session (no capabilities,
   * same uid) passes the kernel's ptrace check against that child then,
   * and reads our memory's layout, environment and fds through its /proc
   * entries, and would hold our mm through them after the exec (a
   * supervisor serves command after command). Non-dumpable, the kernel
   * asks for CAP_SYS_PTRACE over our mm, which nothing in the session
   * has. The command's own mm, after its exec, is dumpable as usual. */
  sigemptyset (&set);
  sigaddset (&set, SIGCHLD);
  sfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0 || prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 ||
      prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 ||
      pipe2 (err_pipe, O_CLOEXEC) != 0)
    {
      msg.type = SUP_FAILED;
      msg.err = errno;
      msg.stage = STAGE_SETUP;
      sup_report (req, chan, &msg);
      _exit (0);
    }

  /* The read end is CLOEXEC: the command does not keep it. */
  command = spawn_command (req, err_pipe[1], host_profile);
  if (command < 0)
    {
      msg.type = SUP_FAILED;
      msg.err = errno;
      msg.stage = STAGE_SETUP;
      sup_report (req, chan, &msg);
      _exit (0);
    }
  close (err_pipe[1]);
  /* The command holds its stdio now; ours would keep pipes from EOF. */
  for (int i = 0; i < 3; i++)
    close (req->fds[i]);

  while ((n = read (err_pipe[0], fail, sizeof fail)) < 0 && errno == EINTR)
    ;
  close (err_pipe[0]);
  if (n == (ssize_t) sizeof fail)
    {
      int status;

      while (waitpid (command, &status, 0) < 0 && errno == EINTR)
        ;
      msg.type = SUP_FAILED;
      msg.err = fail[0];
      msg.stage = fail[1];
      sup_report (req, chan, &msg);
      _exit (0);
    }

  msg.type = SUP_SPAWNED;
  msg.pid = command;
  sup_report (req, chan, &msg);

  for (;;)
    {
      struct pollfd pfds[2] = {
        { .fd = sfd, .events = POLLIN, .revents = 0 },
        { .fd = chan, .events = POLLIN, .revents = 0 },
      };

      if (poll (pfds, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          kill_tree (sfd, command, &command_done, &command_status);
          break;
        }

      if (pfds[0].revents & POLLIN)
        {
          struct signalfd_siginfo si;
          gboolean left;

          while (read (sfd, &si, sizeof si) > 0)
            ;
          left = reap_tree (command, &command_done, &command_status);
          tree_left = left;
          /* Exited by itself: report now. Background processes it left stay
           * in the session (re-parented to pid 1 when we exit). After a
           * kill, report only once the whole tree is gone. */
          if (command_done && (!killing || !left))
            break;
        }

      if (pfds[1].revents & (POLLIN | POLLHUP | POLLERR))
        {
          int sig = 0;
          ssize_t r = recv (chan, &sig, sizeof sig, MSG_DONTWAIT);

          if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
          if (r != (ssize_t) sizeof sig || sig == SIGKILL)
            {
              /* SIGKILL asked for, or pid 1 gone (host profile: nobody left
               * to report to): the whole tree, until it is empty. */
              killing = TRUE;
              kill_tree (sfd, command, &command_done, &command_status);
              if (r != (ssize_t) sizeof sig)
                _exit (0);
              break;
            }
          killing = TRUE;
          signal_tree (sig);
        }
    }

  msg.type = SUP_EXITED;
  msg.status = command_status;
  msg.idle = !killing && !tree_left;
  close (sfd);
  sup_report (req, chan, &msg);
  if (req->events_fd >= 0)
    close (req->events_fd);
  return msg.idle;
}

/* ---- extra commands: requests and events in pid 1 -------------------------- */

typedef struct {
  guint32 id;
  pid_t supervisor;   /* 0 once reaped (forget_reaped) */
  int chan;           /* pid 1's end of the supervisor's pair */
  int pty_master;     /* the terminal we made, until "spawned" takes it; or -1 */
  gboolean spawned;   /* "spawned" was sent */
  gboolean direct;    /* its supervisor reports to the daemon itself */
  gboolean idle;      /* its supervisor said it is free for another command */
} Command;

typedef struct {
  const SandboxConfig *cfg;
  int sfd;
  gboolean reading;   /* the control fd is a SEQPACKET socket, not at EOF */
  Command commands[MAX_COMMANDS];
  guint n_commands;
  /* A supervisor forked ahead of time, waiting on SPARE_CHAN for the next
   * spawn (see fork_spare); -1 when there is none. Wanted once a first
   * command ran: a session that never runs one never pays for it. */
  pid_t spare;
  int spare_chan;
  gboolean want_spare;
} Init;

static void
send_text (int         fd,
           const char *text,
           size_t      len)
{
  LineBuf line;

  /* send_event's retry rules, for longer lines. */
  if (len < sizeof line.buf)
    {
      memcpy (line.buf, text, len);
      line.len = len;
      send_event (fd, &line);
      return;
    }
  while (send (fd, text, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno == EINTR)
    ;
}

static void
append_json_string (GString    *out,
                    const char *s)
{
  g_string_append_c (out, '"');
  for (; *s != '\0'; s++)
    {
      guchar c = (guchar) *s;

      if (c == '"' || c == '\\')
        g_string_append_printf (out, "\\%c", c);
      else if (c < 0x20)
        g_string_append_printf (out, "\\u%04x", c);
      else
        g_string_append_c (out, (char) c);
    }
  g_string_append_c (out, '"');
}

static void
send_spawn_failed_to (int         fd,
                      guint32     id,
                      int         err,
                      const char *message)
{
  g_autoptr(GString) line = g_string_new (NULL);

  g_string_append_printf (line, "{\"event\":\"spawn-failed\",\"id\":%u,\"errno\":%d,\"message\":",
                          id, err);
  append_json_string (line, message);
  g_string_append (line, "}\n");
  send_text (fd, line->str, line->len);
}

/* REQ's spawn-failed: on its own channel when it is a direct one. */
static void
send_spawn_failed (Init               *init,
                   const SpawnRequest *req,
                   int                 err,
                   const char         *message)
{
  send_spawn_failed_to (req->events_fd >= 0 ? req->events_fd : init->cfg->control_fd,
                        req->id, err, message);
}

static void
request_note (const char *why)
{
  g_printerr ("paddock-sandbox: ignoring a control request: %s\n", why);
}

static void
close_fds (GArray *fds)
{
  for (guint i = 0; i < fds->len; i++)
    close (g_array_index (fds, int, i));
  g_array_set_size (fds, 0);
}

static Command *
find_command (Init    *init,
              guint32  id)
{
  for (guint i = 0; i < init->n_commands; i++)
    if (init->commands[i].id == id)
      return &init->commands[i];
  return NULL;
}

/* A bytestring ("ay" with its one terminating NUL and no other) as a
 * string; NULL if VALUE is not one. */
static const char *
bytestring_of (GVariant *value)
{
  gsize len = 0;
  const char *data;

  if (value == NULL || !g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING))
    return NULL;
  data = g_variant_get_fixed_array (value, &len, sizeof (char));
  if (len == 0 || data[len - 1] != '\0' || memchr (data, '\0', len - 1) != NULL)
    return NULL;
  return data;
}

/* An "aay" of bytestrings, within MAX entries, as a GStrv; NULL if not. */
static char **
dup_bytestring_array (GVariant *value,
                      guint     max)
{
  g_autoptr(GPtrArray) strv = g_ptr_array_new_with_free_func (g_free);
  gsize n;

  if (value == NULL || !g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING_ARRAY))
    return NULL;
  n = g_variant_n_children (value);
  if (n > max)
    return NULL;
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) item = g_variant_get_child_value (value, i);
      const char *text = bytestring_of (item);

      if (text == NULL)
        return NULL;
      g_ptr_array_add (strv, g_strdup (text));
    }
  g_ptr_array_add (strv, NULL);
  g_ptr_array_set_free_func (strv, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&strv), FALSE);
}

/* Reads a spawn request's members into REQ (WORKSPACE is the default
 * cwd). On failure fills ERR and WHY (static text). */
static gboolean
parse_spawn_request (const char   *workspace,
                     GVariant     *request,
                     GArray       *fds,
                     SpawnRequest *req,
                     int          *err,
                     const char  **why)
{
  g_autoptr(GVariant) argv = g_variant_lookup_value (request, "argv", NULL);
  g_autoptr(GVariant) env = g_variant_lookup_value (request, "env", NULL);
  g_autoptr(GVariant) cwd = g_variant_lookup_value (request, "cwd", NULL);
  g_autoptr(GVariant) tty = g_variant_lookup_value (request, "tty", NULL);
  g_autoptr(GVariant) direct = g_variant_lookup_value (request, "direct", NULL);
  guint n_fds = fds->len;

  *err = EINVAL;
  if (direct != NULL && !g_variant_is_of_type (direct, G_VARIANT_TYPE_BOOLEAN))
    {
      *why = "direct must be a boolean";
      return FALSE;
    }
  req->direct = direct != NULL && g_variant_get_boolean (direct);
  /* The channel is the last fd: known before anything can fail, so that
   * the failure goes there. */
  if (req->direct && n_fds == 4)
    req->events_fd = g_array_index (fds, int, 3);
  req->argv = dup_bytestring_array (argv, MAX_ARGS);
  if (req->argv == NULL || req->argv[0] == NULL || req->argv[0][0] == '\0')
    {
      *why = "argv must be a non-empty array of bytestrings (aay, at most 4096)";
      return FALSE;
    }
  if (env == NULL)
    req->envp = g_new0 (char *, 1);
  else if ((req->envp = dup_bytestring_array (env, MAX_ENV)) == NULL)
    {
      *why = "env must be an array of K=V bytestrings (aay, at most 4096)";
      return FALSE;
    }
  req->path_env = DEFAULT_PATH;
  for (guint i = 0; req->envp[i] != NULL; i++)
    {
      if (strchr (req->envp[i], '=') == NULL || req->envp[i][0] == '=')
        {
          *why = "env entries must be K=V";
          return FALSE;
        }
      if (g_str_has_prefix (req->envp[i], "PATH="))
        req->path_env = req->envp[i] + 5;
    }
  if (cwd == NULL)
    req->cwd = g_strdup (workspace);
  else if (bytestring_of (cwd) == NULL || !g_path_is_absolute (bytestring_of (cwd)))
    {
      *why = "cwd must be an absolute path (a bytestring, ay)";
      return FALSE;
    }
  else
    req->cwd = g_strdup (bytestring_of (cwd));
  if (tty != NULL && !g_variant_is_of_type (tty, G_VARIANT_TYPE_BOOLEAN))
    {
      *why = "tty must be a boolean";
      return FALSE;
    }
  req->tty = tty != NULL && g_variant_get_boolean (tty);
  if (req->direct && req->tty)
    {
      *why = "direct is for commands without a terminal (its master comes from pid 1)";
      return FALSE;
    }
  if (req->direct)
    {
      if (n_fds != 4)
        {
          *err = EBADF;
          *why = "a direct spawn carries exactly 4 fds (stdin, stdout, stderr, its event channel)";
          return FALSE;
        }
      return TRUE;
    }
  req->own_pty = req->tty && n_fds == 0;
  if (n_fds != 3 && !req->own_pty)
    {
      *err = EBADF;
      *why = "a spawn carries exactly 3 fds (stdin, stdout, stderr), or none with tty";
      return FALSE;
    }
  return TRUE;
}

/* Validates a spawn request in pid 1. On failure fills ERR and WHY. */
static gboolean
parse_spawn (Init         *init,
             GVariant     *request,
             GArray       *fds,
             SpawnRequest *req,
             int          *err,
             const char  **why)
{
  if (!parse_spawn_request (init->cfg->workspace, request, fds, req, err, why))
    return FALSE;
  if (find_command (init, req->id) != NULL)
    {
      *err = EEXIST;
      *why = "a command with this id is running";
      return FALSE;
    }
  if (init->n_commands >= MAX_COMMANDS)
    {
      *err = EAGAIN;
      *why = "too many commands running in this session (64)";
      return FALSE;
    }
  return TRUE;
}

/* A PTY pair of the sandbox's own devpts: the master (returned) and the
 * slave three times at 3 or above in FDS, CLOEXEC. -1 with errno. */
static int
open_own_pty (GArray *fds)
{
  struct winsize size = { .ws_row = 24, .ws_col = 80 };
  paddock_autofd int master = open ("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  int unlock = 0;
  int slave;

  if (master < 0 || ioctl (master, TIOCSPTLCK, &unlock) != 0)
    return -1;
  /* By the master, not by a path: no lookup anyone could race. */
  slave = ioctl (master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0)
    return -1;
  if (slave < 3)
    {
      int moved = fcntl (slave, F_DUPFD_CLOEXEC, 3);
      int saved_errno = errno;

      close (slave);
      errno = saved_errno;
      if (moved < 0)
        return -1;
      slave = moved;
    }
  g_array_append_val (fds, slave);
  for (int i = 0; i < 2; i++)
    {
      int copy = fcntl (slave, F_DUPFD_CLOEXEC, 3);

      if (copy < 0)
        return -1;   /* the caller closes what FDS holds */
      g_array_append_val (fds, copy);
    }
  ioctl (master, TIOCSWINSZ, &size);
  return paddock_steal_fd (&master);
}

/* What a supervisor forked from pid 1 must not hold of pid 1's: the
 * daemon's socket (its EOF must mean the sandbox is gone), other commands'
 * channels and terminals, the spare's channel, the agent's PTY. */
static void
drop_pid1_fds (Init *init)
{
  close (init->sfd);
  if (init->cfg->control_fd >= 0)
    close (init->cfg->control_fd);
  if (init->cfg->pty_fd >= 0)
    close (init->cfg->pty_fd);
  for (guint i = 0; i < init->n_commands; i++)
    {
      close (init->commands[i].chan);
      if (init->commands[i].pty_master >= 0)
        close (init->commands[i].pty_master);
    }
  if (init->spare_chan >= 0)
    close (init->spare_chan);
}

/* One request message, as the daemon sent it: pid 1 reads it here, and a
 * spare supervisor (a separate process after fork) reads its copy here. */
static char request_buf[MAX_REQUEST_BYTES];

/* Receives one request message on FD into request_buf, appending the fds
 * it carries (at most MAX_RECV_FDS, CLOEXEC: they must not leak into
 * anything we exec) to FDS, and its msg_flags to *OUT_FLAGS. Returns what
 * recvmsg() did. */
static ssize_t
recv_request (int     fd,
              int     flags,
              GArray *fds,
              int    *out_flags)
{
  union {
    struct cmsghdr align;
    char space[CMSG_SPACE (sizeof (int) * MAX_RECV_FDS)];
  } control;
  struct iovec iov = { .iov_base = request_buf, .iov_len = sizeof request_buf };
  struct msghdr msg = {
    .msg_iov = &iov,
    .msg_iovlen = 1,
    .msg_control = control.space,
    .msg_controllen = sizeof control.space,
  };
  ssize_t n = recvmsg (fd, &msg, MSG_CMSG_CLOEXEC | flags);

  *out_flags = n >= 0 ? msg.msg_flags : 0;
  if (n < 0)
    return n;
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); c != NULL; c = CMSG_NXTHDR (&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      {
        size_t count = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
        int *p = (int *) (void *) CMSG_DATA (c);

        for (size_t i = 0; i < count; i++)
          g_array_append_val (fds, p[i]);
      }
  return n;
}

/* The first LEN bytes of request_buf as an a{sv}, copied into memory
 * GVariant aligns itself; NULL unless in normal form, so that nothing
 * reading its members meets a non-normal serialization. */
static GVariant *
request_from_buf (gsize len)
{
  g_autoptr(GBytes) bytes = g_bytes_new (request_buf, len);
  g_autoptr(GVariant) request =
    g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE_VARDICT, bytes, FALSE));

  return g_variant_is_normal_form (request) ? g_steal_pointer (&request) : NULL;
}

/* The spare supervisor: forked while pid 1 is idle, it waits for pid 1 to
 * hand it one spawn request (the daemon's message as pid 1 received and
 * checked it, with the command's 3 fds, 4 for a direct one) and is then
 * that command's supervisor. So the fork of pid 1, and the page faults that
 * follow it, are not on the way from Exec to "spawned". Once that command
 * is over and it is free (supervise_command), it waits again, and pid 1
 * keeps it as its spare: commands in a row then cost no fork of pid 1 and
 * no exit at all, which on a small machine was most of the session's own
 * CPU per short command. EOF on CHAN: pid 1 has no use for it, or is gone. */
static G_NORETURN void
run_spare_supervisor (const SandboxConfig *cfg,
                      int                  chan)
{
  /* Should pid 1 go (host profile: the helper), so do we. */
  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);

  for (;;)
    {
      g_auto(SpawnRequest) req = { 0, NULL, NULL, NULL, NULL, FALSE, FALSE, FALSE, { -1, -1, -1 }, -1 };
      g_autoptr(GArray) fds = g_array_new (FALSE, FALSE, sizeof (int));
      g_autoptr(GVariant) request = NULL;
      SupMsg failed = { SUP_FAILED, 0, 0, EINVAL, STAGE_SETUP, 0 };
      const char *why = NULL;
      int flags = 0;
      ssize_t n;

      while ((n = recv_request (chan, 0, fds, &flags)) < 0 && errno == EINTR)
        ;
      if (n <= 0)
        _exit (0);
      /* A signal number for the command this process ran last, sent by
       * pid 1 before it saw that command's end: there is nothing left to
       * signal (we are free only with an empty tree). */
      if (n == (ssize_t) sizeof (int) && fds->len == 0)
        continue;

      /* pid 1 checked all of it already; this cannot fail short of a bug
       * (a direct spawn's failure then goes on its channel if it got that
       * far, else the daemon sees the channel close without a word). */
      if ((fds->len != 3 && fds->len != 4) || (flags & (MSG_TRUNC | MSG_CTRUNC)) ||
          (request = request_from_buf (n)) == NULL || !g_variant_lookup (request, "id", "u", &req.id) ||
          !parse_spawn_request (cfg->workspace, request, fds, &req, &failed.err, &why) || req.own_pty)
        {
          /* A direct spawn not understood this far has no channel to answer
           * on: our silent end makes pid 1 report "supervisor-gone". */
          if (req.events_fd >= 0 || fds->len == 3)
            sup_report (&req, chan, &failed);
          _exit (0);
        }
      for (int i = 0; i < 3; i++)
        req.fds[i] = g_array_index (fds, int, i);
      /* Free again (and told pid 1 so): wait for the next one. */
      if (!supervise_command (&req, chan, cfg->host_profile))
        _exit (0);
    }
}

/* A supervisor pid 1 forked for REQ itself: REQ, then, if it is free
 * after it, the spare's life. */
static G_NORETURN void
run_command_supervisor (const SandboxConfig *cfg,
                        const SpawnRequest  *req,
                        int                  chan)
{
  if (supervise_command (req, chan, cfg->host_profile))
    run_spare_supervisor (cfg, chan);
  _exit (0);
}

/* Forks the spare supervisor (see run_spare_supervisor). On failure (a
 * pids limit, say) there is none, and none is wanted until the next
 * command: a spawn then forks its supervisor itself. */
static void
fork_spare (Init *init)
{
  int pair[2];
  pid_t pid;

  init->want_spare = FALSE;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    return;
  pid = fork ();
  if (pid < 0)
    {
      close (pair[0]);
      close (pair[1]);
      return;
    }
  if (pid == 0)
    {
      close (pair[0]);
      drop_pid1_fds (init);
      run_spare_supervisor (init->cfg, pair[1]);
    }
  close (pair[1]);
  init->spare = pid;
  init->spare_chan = pair[0];
  init->want_spare = TRUE;
}

/* How long pid 1 waits idle before it forks the next spare; -1: none is
 * wanted. While a command's supervisor is busy it waits longer: a
 * supervisor whose command ends by itself comes back free and is the next
 * spare (see the end of the main loop), so a run of short commands costs no
 * fork at all, where forking after SPARE_IDLE_MS would make the free one
 * exit unused whenever a command outlasts that, as even `true` does on a
 * machine where exec is slow (4 ms under a paravirtualized MMU: one fork
 * and one exit per command there, most of the session's CPU per Exec).
 * A command that runs long still gets a spare forked beside it. */
static int
spare_wait_ms (const Init *init)
{
  if (!init->want_spare || init->spare >= 0)
    return -1;
  for (guint i = 0; i < init->n_commands; i++)
    if (init->commands[i].supervisor > 0)
      return SPARE_BUSY_IDLE_MS;
  return SPARE_IDLE_MS;
}

/* The spare goes: its EOF makes it exit, SIGKILL in case it is busy
 * elsewhere (it is not, short of a bug); the SIGCHLD loop reaps it. */
static void
drop_spare (Init *init)
{
  if (init->spare > 0)
    kill (init->spare, SIGKILL);
  paddock_close_fd (&init->spare_chan);
  init->spare = -1;
}

/* Hands the request (RAW, as received) and the command's 3 fds to the
 * spare, without ever blocking pid 1. FALSE if it did not take them. */
static gboolean
hand_to_spare (Init               *init,
               const SpawnRequest *req,
               const char         *raw,
               gsize               raw_len)
{
  int pass[4] = { req->fds[0], req->fds[1], req->fds[2], req->events_fd };

  /* Any process of the session may SIGSTOP the spare (same uid, same
   * domain): a stopped spare would take the request and never answer it.
   * SIGCONT resumes it as it is sent, costs one call and does nothing to
   * a spare that runs; so it is sent rather than the spare's state read
   * first. A process that stops it again after this still can: the
   * daemon bounds its wait for "spawned" for that. */
  kill (init->spare, SIGCONT);
  return send_with_fds (init->spare_chan, raw, raw_len, pass, req->direct ? 4 : 3) == (ssize_t) raw_len;
}

static void
start_command (Init         *init,
               SpawnRequest *req,
               GArray       *fds,
               const char   *raw,
               gsize         raw_len)
{
  paddock_autofd int pty_master = -1;
  int pair[2];
  pid_t pid;
  Command *command;

  if (req->own_pty && (pty_master = open_own_pty (fds)) < 0)
    {
      send_spawn_failed (init, req, errno, "cannot make a terminal in the sandbox");
      return;
    }

  /* Received fds at 3 or above (if pid 1's stdio was closed, one could land
   * on 0-2 and be clobbered by the command's dup2()); a direct spawn's
   * channel too, which is the 4th. */
  for (guint i = 0; i < (req->direct ? 4u : 3u); i++)
    {
      int fd = g_array_index (fds, int, i);
      if (fd < 3)
        {
          int moved = fcntl (fd, F_DUPFD_CLOEXEC, 3);
          if (moved < 0)
            {
              send_spawn_failed (init, req, errno, "cannot move a received fd");
              return;
            }
          close (fd);
          g_array_index (fds, int, i) = moved;
        }
      if (i < 3)
        req->fds[i] = g_array_index (fds, int, i);
      else
        req->events_fd = g_array_index (fds, int, i);
    }

  /* Commands come in runs: keep one supervisor forked ahead from now on. */
  init->want_spare = TRUE;
  if (init->spare > 0)
    {
      if (hand_to_spare (init, req, raw, raw_len))
        {
          pid = init->spare;
          pair[0] = init->spare_chan;
          init->spare = -1;
          init->spare_chan = -1;
          goto started;
        }
      drop_spare (init);
    }

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    {
      send_spawn_failed (init, req, errno, "socketpair failed");
      return;
    }

  /* pid 1 is single-threaded (a clone of a single-threaded helper), so the
   * supervisor may use anything until it forks the command. */
  pid = fork ();
  if (pid < 0)
    {
      int err = errno;
      close (pair[0]);
      close (pair[1]);
      send_spawn_failed (init, req, err, "cannot fork the command's supervisor");
      return;
    }
  if (pid == 0)
    {
      close (pair[0]);
      drop_pid1_fds (init);
      paddock_close_fd (&pty_master);
      run_command_supervisor (init->cfg, req, pair[1]);
    }
  close (pair[1]);

started:
  command = &init->commands[init->n_commands++];
  command->id = req->id;
  command->supervisor = pid;
  command->chan = pair[0];
  command->pty_master = paddock_steal_fd (&pty_master);
  command->spawned = FALSE;
  command->direct = req->direct;
  command->idle = FALSE;
}

/* PID's state letter in /proc/PID/stat ('T' stopped, 'Z' zombie…), or
 * 0 if it cannot be read (gone); its parent's pid in *PPID if not NULL
 * (0 if unread). */
static char
process_state (pid_t  pid,
               pid_t *ppid)
{
  char path[64];
  char buf[512];
  paddock_autofd int fd = -1;
  const char *end;
  ssize_t n;

  if (ppid != NULL)
    *ppid = 0;
  g_snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  while ((n = read (fd, buf, sizeof buf - 1)) < 0 && errno == EINTR)
    ;
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  /* The name in parentheses may hold anything: the state follows the
   * last ')', then the parent's pid. */
  end = strrchr (buf, ')');
  if (end == NULL || end[1] != ' ' || end[2] == '\0')
    return 0;
  if (ppid != NULL && end[3] == ' ')
    *ppid = (pid_t) strtol (end + 4, NULL, 10);
  return end[2];
}

/* SIGKILL to the command tree of a SUPERVISOR that a process of the
 * session keeps stopped (see handle_kill), without its help, and then to
 * it. Stopped, it reaps none of its children, and as a subreaper it is
 * handed the children of each that dies: killing its living children
 * until none is left kills the whole tree. It may be resumed meanwhile
 * (by the same process of the session) and reap: a pid listed could then
 * be free, and taken by a process that is none of its children (pid
 * allocation is cyclic, but a process of the session can bring the next
 * pid round to it). So each child is pinned with a pidfd first and
 * signalled through it only if /proc then names SUPERVISOR its parent:
 * read while the pidfd's process was not reaped, that entry was its own;
 * reaped, the pidfd's signal reaches no one. SUPERVISOR's own pid is ours
 * to reap, which we do not do here. Its channel's end then answers the
 * command (handle_supervisor). Bounded (200 rounds of 1 ms, pid 1 must
 * not hang): what still lives after that (a tree deeper than the rounds,
 * or a supervisor resumed meanwhile, which then kills the rest itself)
 * is re-parented to pid 1 and goes with the session. */
static void
kill_stopped_supervisor (pid_t supervisor)
{
  char path[64];

  g_snprintf (path, sizeof path, "/proc/%d/task/%d/children", (int) supervisor, (int) supervisor);
  for (guint round = 0; round < 200; round++)
    {
      pid_t children[512];
      guint n = list_children (path, children, G_N_ELEMENTS (children));
      guint living = 0;

      for (guint i = 0; i < n; i++)
        {
          paddock_autofd int pidfd = (int) syscall (SYS_pidfd_open, children[i], 0);  /* CLOEXEC, always */
          pid_t parent = 0;
          char state;

          if (pidfd < 0)
            continue;
          state = process_state (children[i], &parent);
          if (state != 0 && state != 'Z' && parent == supervisor &&
              syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) == 0)
            living++;
        }
      if (living == 0)
        break;
      g_usleep (1000);
    }
  kill (supervisor, SIGKILL);
}

static void
handle_kill (Init     *init,
             GVariant *request,
             guint32   id)
{
  Command *command = find_command (init, id);
  gint32 sig = 0;
  int s;

  if (!g_variant_lookup (request, "signal", "i", &sig) || sig < 1 || sig > 64)
    {
      request_note ("kill wants a signal number from 1 to 64");
      return;
    }
  if (command == NULL)
    {
      /* Already exited (its command-exited is on its way or sent). */
      request_note ("kill for a command that is not running");
      return;
    }
  /* Its supervisor is reaped (forget_reaped): its pid may be anyone's
   * now, and its channel's end, still to be read, answers the command. */
  if (command->supervisor <= 0)
    return;
  s = (int) sig;
  /* The supervisor does the killing. A process of the session may have
   * stopped it (see hand_to_spare), and may stop it again as soon as it
   * is resumed: a SIGKILL (a timeout's, a caller's leaving) then does not
   * wait for it. Nothing else stops a supervisor. */
  if (s == SIGKILL && process_state (command->supervisor, NULL) == 'T')
    {
      kill_stopped_supervisor (command->supervisor);
      return;
    }
  /* Any other signal: it is resumed first, so that it reaches the command. */
  kill (command->supervisor, SIGCONT);
  while (send (command->chan, &s, sizeof s, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno == EINTR)
    ;
}

/* A TCP socket made here, so that it belongs to the session's network
 * namespace, for the daemon to connect to a leased port's server inside
 * (port forwarding). Only made, never bound or connected here: the daemon
 * does that, and Landlock binds the agent's domain, not the daemon's. */
static void
handle_socket (Init     *init,
               GVariant *request,
               guint32   id)
{
  LineBuf line = { .len = 0 };
  g_autoptr(GVariant) value = g_variant_lookup_value (request, "family", NULL);
  const char *family = "inet";   /* when there is no 'family' */
  int fd;

  /* IPv6 for a server that listens on [::1] only: the namespace is the
   * session's either way, with nothing but its own loopback. A 'family'
   * that is not a string is an error (EINVAL), never taken for the
   * default: g_variant_lookup() would say it was absent. */
  if (value != NULL && !g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    {
      fd = -1;
      errno = EINVAL;
    }
  else
    {
      if (value != NULL)
        family = g_variant_get_string (value, NULL);
      if (g_strcmp0 (family, "inet") == 0)
        fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      else if (g_strcmp0 (family, "inet6") == 0)
        fd = socket (AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      else
        {
          fd = -1;
          errno = EAFNOSUPPORT;
        }
    }

  if (fd < 0)
    {
      line_add (&line, "{\"event\":\"socket-failed\",\"id\":");
      line_add_int (&line, (long) id);
      line_add (&line, ",\"errno\":");
      line_add_int (&line, errno);
      line_add (&line, "}\n");
      send_event (init->cfg->control_fd, &line);
      return;
    }
  line_add (&line, "{\"event\":\"socket\",\"id\":");
  line_add_int (&line, (long) id);
  line_add (&line, "}\n");
  send_event_with_fd (init->cfg->control_fd, &line, fd);
  close (fd);
}

/* One request from the daemon: a message of at most MAX_REQUEST_BYTES with
 * up to MAX_RECV_FDS fds. Anything malformed is dropped with a note on
 * stderr (or answered with spawn-failed when it names an id); every
 * received fd is closed before returning. */
static void
handle_request (Init  *init,
                short  revents)
{
  g_autoptr(GArray) fds = g_array_new (FALSE, FALSE, sizeof (int));
  g_autoptr(GVariant) request = NULL;
  g_auto(SpawnRequest) req = { 0, NULL, NULL, NULL, NULL, FALSE, FALSE, FALSE, { -1, -1, -1 }, -1 };
  const char *op = NULL;
  guint32 id = 0;
  ssize_t n;
  int err = 0;
  const char *why = NULL;
  int flags = 0;

  n = recv_request (init->cfg->control_fd, MSG_DONTWAIT, fds, &flags);
  if (n < 0)
    {
      if (errno != EINTR && errno != EAGAIN)
        init->reading = FALSE;
      return;
    }
  if (n == 0 && fds->len == 0)
    {
      /* EOF (the daemon closed its end: events still go out, and fail), or
       * an empty message, which SEQPACKET also returns as 0: only a hangup
       * tells them apart. */
      if (revents & POLLHUP)
        init->reading = FALSE;
      else
        request_note ("empty message");
      return;
    }

  if (flags & MSG_TRUNC)
    why = "message larger than 128 KiB";
  else if (flags & MSG_CTRUNC)
    why = "more than 8 fds attached";
  if (why != NULL)
    {
      request_note (why);
      close_fds (fds);
      return;
    }

  /* Checked in full (at most 128 KiB) before any member is read. */
  request = request_from_buf (n);
  if (request == NULL)
    {
      request_note ("not a serialized a{sv} in normal form");
      close_fds (fds);
      return;
    }
  if (!g_variant_lookup (request, "op", "&s", &op))
    op = NULL;
  if (!g_variant_lookup (request, "id", "u", &id))
    {
      request_note ("no \"id\" (an unsigned 32-bit integer, u)");
      close_fds (fds);
      return;
    }

  if (g_strcmp0 (op, "kill") == 0)
    {
      close_fds (fds);
      handle_kill (init, request, id);
      return;
    }
  if (g_strcmp0 (op, "socket") == 0)
    {
      close_fds (fds);
      handle_socket (init, request, id);
      return;
    }
  if (g_strcmp0 (op, "spawn") != 0)
    {
      request_note ("unknown \"op\"");
      close_fds (fds);
      return;
    }

  req.id = id;
  if (!parse_spawn (init, request, fds, &req, &err, &why))
    send_spawn_failed (init, &req, err, why);
  else
    start_command (init, &req, fds, request_buf, (gsize) n);
  /* The supervisor has its copies now (or there is none). */
  close_fds (fds);
}

static const char *
stage_text (int stage)
{
  switch (stage)
    {
    case STAGE_TTY:
      return "cannot make the terminal the controlling terminal";
    case STAGE_CWD:
      return "cannot enter the working folder";
    case STAGE_EXEC:
      return "cannot run";
    default:
      return "cannot set up the command";
    }
}

/* A message from a command's supervisor. FALSE when the command is over
 * (reported, or its supervisor vanished) and its slot is to be freed. */
static gboolean
handle_supervisor (Init    *init,
                   Command *command)
{
  SupMsg msg;
  ssize_t n = recv (command->chan, &msg, sizeof msg, MSG_DONTWAIT);
  LineBuf line = { .len = 0 };

  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return TRUE;
  /* A direct command's supervisor tells the daemon itself, and here only
   * that it has given the command's last event. Its end without that
   * means it was killed: the daemon hears it from us (see "Direct
   * events"), after everything the supervisor wrote on the channel. */
  if (command->direct)
    {
      if (n == (ssize_t) sizeof msg)
        {
          command->idle = msg.type == SUP_EXITED && msg.idle;
          return msg.type != SUP_FAILED && msg.type != SUP_EXITED;
        }
      line_add (&line, "{\"event\":\"supervisor-gone\",\"id\":");
      line_add_int (&line, command->id);
      line_add (&line, "}\n");
      send_event (init->cfg->control_fd, &line);
      return FALSE;
    }
  if (n != (ssize_t) sizeof msg && !command->spawned)
    {
      /* Killed before it started the command (a spare killed from outside
       * just as it was handed the request): the spawn is answered, as
       * every spawn is, and the command never ran. */
      send_spawn_failed_to (init->cfg->control_fd, command->id, EIO,
                            "the command's supervisor ended before it started the command");
      return FALSE;
    }
  if (n != (ssize_t) sizeof msg)
    {
      /* Cannot happen short of the supervisor being killed: say so. */
      line_add (&line, "{\"event\":\"command-exited\",\"id\":");
      line_add_int (&line, command->id);
      line_add (&line, ",\"status\":255}\n");
      send_event (init->cfg->control_fd, &line);
      return FALSE;
    }

  switch (msg.type)
    {
    case SUP_SPAWNED:
      line_add (&line, "{\"event\":\"spawned\",\"id\":");
      line_add_int (&line, command->id);
      line_add (&line, ",\"pid\":");
      line_add_int (&line, msg.pid);
      line_add (&line, "}\n");
      send_event_with_fd (init->cfg->control_fd, &line, command->pty_master);
      command->spawned = TRUE;
      /* The daemon has its own copy now (or the socket is gone). */
      paddock_close_fd (&command->pty_master);
      return TRUE;

    case SUP_FAILED:
      {
        g_autofree char *text = g_strdup_printf ("%s: %s", stage_text (msg.stage),
                                                 g_strerror (msg.err));
        send_spawn_failed_to (init->cfg->control_fd, command->id, msg.err, text);
      }
      return FALSE;

    case SUP_EXITED:
      line_add (&line, "{\"event\":\"command-exited\",\"id\":");
      line_add_int (&line, command->id);
      line_add (&line, ",\"status\":");
      line_add_int (&line, status_to_code (msg.status));
      if (WIFSIGNALED (msg.status))
        {
          line_add (&line, ",\"signal\":");
          line_add_int (&line, WTERMSIG (msg.status));
        }
      line_add (&line, "}\n");
      send_event (init->cfg->control_fd, &line);
      command->idle = msg.idle;
      return FALSE;

    default:
      return TRUE;
    }
}

/* A command's slot is free: what it held goes. */
static void
command_clear (Command *command)
{
  paddock_close_fd (&command->chan);
  paddock_close_fd (&command->pty_master);
}

/* PID, a child of ours, was reaped: its number is free for any new
 * process of the session, so nothing here may signal it any more. A
 * supervisor or spare reaped here still has its channel's end to be read
 * (it died after poll() returned, or a child not yet exec'd held its end
 * a moment longer): a supervisor's tells its command's end
 * (handle_supervisor); the spare's is closed here, as drop_spare does. */
static void
forget_reaped (Init  *init,
               pid_t  pid)
{
  if (pid == init->spare)
    {
      paddock_close_fd (&init->spare_chan);
      init->spare = -1;
      init->want_spare = FALSE;
    }
  for (guint i = 0; i < init->n_commands; i++)
    if (init->commands[i].supervisor == pid)
      init->commands[i].supervisor = 0;
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
/* ---- canary probes ---------------------------------------------------------- */

enum { PROBE_WRITE_OUTSIDE, PROBE_HIDDEN_PATH, PROBE_ABSTRACT_SOCKET, PROBE_SIGNAL_OUTSIDE, PROBE_CONNECT_OUTSIDE,
       PROBE_PROTECTED_PATH, PROBE_LANDLOCK_FS, PROBE_LANDLOCK_NET, N_PROBES };

/* Which step of a probe its errno is from: the forbidden act itself, or a
 * step before it that failed, so that the act was never tried (an errno
 * from socket() must not pass for the connect's refusal). */
typedef enum {
  PROBE_STEP_ACT,
  PROBE_STEP_SOCKET_INET,   /* socket(AF_INET) */
  PROBE_STEP_SOCKET_UNIX,   /* socket(AF_UNIX) */
  PROBE_STEP_OPEN_FOLDER,   /* open(O_PATH) of a protected folder */
  PROBE_STEP_NAME_TOO_LONG, /* the abstract name does not fit sun_path */
} ProbeStep;

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

/* The errno's name as the kernel's headers spell it ("EACCES"), what the
 * evidence must say; "success" for 0. Not async-signal-safe: pid 1's. */
static void
line_add_errno (LineBuf *line,
                int      e)
{
  const char *name = e == 0 ? "success" : strerrorname_np (e);

  if (name != NULL)
    line_add (line, name);
  else
    {
      line_add (line, "errno ");
      line_add_int (line, e);
    }
}

/* What the agent will meet, tried for real before it exists: a child with
 * the agent's confinement (the boundary is pid 1's, inherited; the
 * capabilities dropped as the agent drops them) attempts each forbidden
 * thing and reports the errno, one int per probe (-1: not run). */
typedef struct {
  pid_t pid;        /* the probing child, or -1 */
  int results_fd;   /* its results come here (read end), or -1 */
  const char *failed;  /* why there is no child: "pipe2()", "fork()"; or NULL */
  int failed_errno;
} Canaries;

/* What the probing child writes: each probe's errno (0: it got through,
 * -1: not run), the ProbeStep each is from, and the errno of its own
 * setup (dropping its capabilities), 0 when none failed. */
#define PROBE_REPORT_INTS (2 * N_PROBES + 1)

/* Forks the child that runs the probes and returns at once: it probes while
 * the agent execs (two cores do both at once); finish_canaries() collects.
 * CLOSE_IN_CHILD: an fd of pid 1's the child has no use for (the read end
 * of the agent's exec pipe), or -1. */
static Canaries
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

      /* A TCP port the session did not lease (0: any free one). Landlock
       * checks the port before the address is looked at, so its EACCES
       * is the answer on the host's network and in a namespace of the
       * session's own alike; without the rule the bind would succeed. */
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
      for (guint i = 0; i < n_protected_mounted; i++)
        {
          struct stat st;
          int result;
          ProbeStep result_step = PROBE_STEP_ACT;

          if (stat (protected_mounted[i], &st) != 0)
            result = 0;   /* gone from the view: not protected either */
          else if (S_ISDIR (st.st_mode))
            {
              int dir = open (protected_mounted[i], O_PATH | O_DIRECTORY | O_CLOEXEC);

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
              fd = open (protected_mounted[i], O_WRONLY | O_APPEND | O_CLOEXEC);
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
static void
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

static void
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

/* --net proxy: the listening socket pid 1 made inside the namespace, until
 * it goes to the daemon (run_init). */
static int proxy_listen_fd = -1;

static G_NORETURN void
run_init (const SandboxConfig *cfg)
{
  int probes[N_PROBES];
  int probe_steps[N_PROBES];
  LineBuf probes_error = { .len = 0 };
  Canaries canaries = { -1, -1, NULL, 0 };
  int exec_pipe[2];
  sigset_t set;
  pid_t agent;
  LineBuf line = { .len = 0 };
  Init init = { .cfg = cfg, .sfd = -1, .reading = FALSE, .n_commands = 0,
                .spare = -1, .spare_chan = -1, .want_spare = FALSE };

  /* A vanished control reader must not kill us; restored for the agent. */
  signal (SIGPIPE, SIG_IGN);
  for (guint i = 0; i < N_PROBES; i++)
    {
      probes[i] = -1;
      probe_steps[i] = PROBE_STEP_ACT;
    }

  forwarded_signals (&set);
  init.sfd = signalfd (-1, &set, SFD_CLOEXEC);
  if (init.sfd < 0)
    die_errno (EXIT_SETUP, "signalfd failed", NULL, errno);

  /* Requests are read here, in pid 1, not relayed by the helper outside:
   * pid 1 is already inside the namespaces with the sandbox's root, so a
   * command's supervisor is simply its child, and no second process has to
   * be trusted to pass fds on. Only a SOCK_SEQPACKET control fd carries
   * requests (one message, one request, fds attached); a pipe is write-only. */
  if (cfg->control_fd >= 0)
    {
      int type = 0;
      socklen_t len = sizeof type;

      init.reading = getsockopt (cfg->control_fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
                     type == SOCK_SEQPACKET;
    }

  /* Setup is over: the helper outside may let go of its parent, and must
   * have done so before the agent runs at all. Otherwise a daemon restart
   * racing the helper's prctl() would take down a session whose agent is
   * already at work. One byte back says it is done; EOF that it died.
   * With --die-with-parent the helper never lets go, so there is nothing
   * to wait for (no ready_fd): its death still kills us (PDEATHSIG). */
  if (cfg->ready_fd < 0 && cfg->alive_fd >= 0)
    close (cfg->alive_fd);
  if (cfg->ready_fd >= 0)
    {
      char c = 'r';
      ssize_t n;

      while (write (cfg->ready_fd, &c, 1) < 0 && errno == EINTR)
        ;
      close (cfg->ready_fd);
      while ((n = read (cfg->alive_fd, &c, 1)) < 0 && errno == EINTR)
        ;
      if (n != 1)
        _exit (EXIT_SETUP);
      close (cfg->alive_fd);
    }

  /* The proxy's socket goes to the daemon before the agent exists, so
   * nothing inside ever holds it; connections made before the daemon
   * serves it wait in its backlog. Without a control socket to send it on
   * there is no way out at all, which is what none means anyway. */
  if (proxy_listen_fd >= 0)
    {
      line_add (&line, "{\"event\":\"proxy\",\"port\":");
      line_add_int (&line, cfg->proxy_port);
      line_add (&line, "}\n");
      send_event_with_fd (cfg->control_fd, &line, proxy_listen_fd);
      close (proxy_listen_fd);
      proxy_listen_fd = -1;
      line.len = 0;
    }

  /* "started" means the agent runs its own program: a close-on-exec pipe
   * reaches EOF only once its exec succeeded (or it died trying). Before
   * that, pid 2 is still our copy, with the capabilities it has yet to
   * drop — what the daemon's evidence and a first Exec must not see. */
  if (pipe2 (exec_pipe, O_CLOEXEC) != 0)
    die_errno (EXIT_SETUP, "pipe2 failed", NULL, errno);
  agent = fork ();
  if (agent < 0)
    die_errno (EXIT_SETUP, "cannot fork the agent", NULL, errno);
  if (agent == 0)
    exec_agent (cfg);
  close (exec_pipe[1]);

  /* The probes run while the agent execs: after the agent (which stays
   * pid 2), in a child of their own with no capabilities, in the same
   * boundary; nothing the agent can do inside it changes what they meet
   * outside it. "started" waits for both, so the boundary evidence is
   * complete (and strict refuses) before the session is reported running. */
  if (!cfg->host_profile)
    canaries = start_canaries (cfg, exec_pipe[0]);
  {
    char c;
    while (read (exec_pipe[0], &c, 1) < 0 && errno == EINTR)
      ;
  }
  close (exec_pipe[0]);
  finish_canaries (&canaries, probes, probe_steps, &probes_error);

  line_add (&line, "{\"event\":\"started\",\"pid\":");
  line_add_int (&line, agent);
  if (!cfg->host_profile)
    {
      const PaddockLandlockPlan *ll = cfg->landlock;
      int mode = -1, filters = -1;

      /* The kernel's account of pid 1, whose filter and Landlock domain the
       * agent and every command inherit and cannot shed. */
      paddock_seccomp_read_status (&mode, &filters);
      line_add (&line, ",\"boundary\":{\"no_new_privs\":");
      line_add_int (&line, prctl (PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
      line_add (&line, ",\"seccomp_mode\":");
      line_add_int (&line, mode);
      line_add (&line, ",\"seccomp_filters\":");
      line_add_int (&line, filters);
      line_add (&line, ",\"network\":\"");
      line_add (&line, cfg->proxy_port != 0 ? "proxy" : cfg->own_network ? "none" : "host");
      line_add (&line, "\",\"landlock_abi\":");
      line_add_int (&line, ll != NULL ? ll->abi : 0);
      line_add (&line, ",\"landlock_fs\":\"");
      line_add (&line, paddock_landlock_status_to_string (ll != NULL ? ll->fs_status : PADDOCK_LANDLOCK_UNENFORCED));
      line_add (&line, "\",\"landlock_net\":\"");
      line_add (&line, paddock_landlock_status_to_string (ll != NULL ? ll->net_status : PADDOCK_LANDLOCK_UNENFORCED));
      /* Which ports it may bind, for the landlock-net layer's evidence. */
      if (ll != NULL && ll->net_evidence != NULL)
        {
          line_add (&line, "\",\"landlock_net_evidence\":\"");
          line_add_json (&line, ll->net_evidence);
        }
      line_add (&line, "\",\"landlock_scope\":\"");
      line_add (&line, paddock_landlock_status_to_string (ll != NULL ? ll->scope_status : PADDOCK_LANDLOCK_UNENFORCED));
      line_add (&line, "\",\"probes\":[");
      {
        gboolean first = TRUE;

        add_probe (&line, &first, "write-outside", "create /usr/.paddock-canary", "EROFS or EACCES",
                   probes[PROBE_WRITE_OUTSIDE], probe_steps[PROBE_WRITE_OUTSIDE], EROFS, EACCES);
        add_probe (&line, &first, "hidden-path", "look up the user's ~/.ssh", "ENOENT",
                   probes[PROBE_HIDDEN_PATH], probe_steps[PROBE_HIDDEN_PATH], ENOENT, 0);
        add_probe (&line, &first, "abstract-socket", "connect to an abstract socket of the daemon's",
                   "EPERM (ECONNREFUSED in a network namespace of its own)",
                   probes[PROBE_ABSTRACT_SOCKET], probe_steps[PROBE_ABSTRACT_SOCKET], EPERM, ECONNREFUSED);
        add_probe (&line, &first, "signal-outside", "kill(0) the daemon's pid", "ESRCH or EPERM",
                   probes[PROBE_SIGNAL_OUTSIDE], probe_steps[PROBE_SIGNAL_OUTSIDE], ESRCH, EPERM);
        add_probe (&line, &first, "connect-outside", "connect to a port the daemon listens on at the host's 127.0.0.1",
                   "ECONNREFUSED", probes[PROBE_CONNECT_OUTSIDE], probe_steps[PROBE_CONNECT_OUTSIDE], ECONNREFUSED, 0);
        add_probe (&line, &first, "protected-path", "write into each read-only protected path of the workspace",
                   "EROFS", probes[PROBE_PROTECTED_PATH], probe_steps[PROBE_PROTECTED_PATH], EROFS, 0);
        add_probe (&line, &first, "landlock-fs", "create /dev/.paddock-canary (a writable tmpfs Landlock does not list)",
                   "EACCES", probes[PROBE_LANDLOCK_FS], probe_steps[PROBE_LANDLOCK_FS], EACCES, 0);
        add_probe (&line, &first, "landlock-net", "bind a TCP socket to a port the session did not lease",
                   "EACCES", probes[PROBE_LANDLOCK_NET], probe_steps[PROBE_LANDLOCK_NET], EACCES, 0);
      }
      line_add (&line, "]");
      /* No probe ran at all: why, as the kernel answered. */
      if (probes_error.len > 0)
        {
          probes_error.buf[probes_error.len] = '\0';
          line_add (&line, ",\"probes_error\":\"");
          line_add_json (&line, probes_error.buf);
          line_add (&line, "\"");
        }
      /* What --protect asked for, as pid 1 found it. */
      line_add (&line, ",\"protect_requested\":");
      line_add (&line, cfg->protect_requested ? "true" : "false");
      line_add (&line, ",\"protected\":[");
      /* Relative to the workspace (short: main() bounds them). */
      for (guint i = 0; i < n_protected_mounted; i++)
        {
          line_add (&line, i > 0 ? ",\"" : "\"");
          line_add_json (&line, protected_mounted[i] + strlen (cfg->workspace) + 1);
          line_add (&line, "\"");
        }
      line_add (&line, "],\"exposed\":[");
      for (guint i = 0; cfg->exposed != NULL && cfg->exposed[i] != NULL; i++)
        {
          line_add (&line, i > 0 ? ",\"" : "\"");
          line_add_json (&line, cfg->exposed[i]);
          line_add (&line, "\"");
        }
      line_add (&line, "],\"protected_skipped\":[");
      for (guint i = 0; i < n_protected_skipped; i++)
        {
          line_add (&line, i > 0 ? ",\"" : "\"");
          line_add_json (&line, protected_skipped[i] + strlen (cfg->workspace) + 1);
          line_add (&line, "\"");
        }
      line_add (&line, "]}");
    }
  line_add (&line, "}\n");
  send_event (cfg->control_fd, &line);

  for (;;)
    {
      struct pollfd pfds[3 + MAX_COMMANDS];
      guint n_commands = init.n_commands;
      int ready;

      pfds[0] = (struct pollfd) { .fd = init.sfd, .events = POLLIN, .revents = 0 };
      pfds[1] = (struct pollfd) { .fd = init.reading ? cfg->control_fd : -1, .events = POLLIN, .revents = 0 };
      /* The spare never speaks first: anything from it means it is gone. */
      pfds[2] = (struct pollfd) { .fd = init.spare_chan, .events = POLLIN, .revents = 0 };
      for (guint i = 0; i < n_commands; i++)
        pfds[3 + i] = (struct pollfd) { .fd = init.commands[i].chan, .events = POLLIN, .revents = 0 };

      /* The next spare is forked once nothing has happened for a moment,
       * so that the fork competes with no command's start or report. */
      ready = poll (pfds, 3 + n_commands, spare_wait_ms (&init));
      if (ready < 0)
        {
          if (errno == EINTR)
            continue;
          die_errno (EXIT_SETUP, "poll failed", NULL, errno);
        }
      if (ready == 0)
        {
          fork_spare (&init);
          continue;
        }
      if (pfds[2].revents != 0)
        {
          drop_spare (&init);
          init.want_spare = FALSE;
        }

      if (pfds[0].revents & POLLIN)
        {
          struct signalfd_siginfo si;
          ssize_t n = read (init.sfd, &si, sizeof si);

          if (n < 0 && errno == EINTR)
            continue;
          if (n != (ssize_t) sizeof si)
            die_errno (EXIT_SETUP, "reading signals failed", NULL, n < 0 ? errno : EIO);

          if (si.ssi_signo == SIGCHLD)
            {
              int status;
              pid_t pid;

              /* Orphans of the whole namespace are re-parented to us: reap
               * every one (command supervisors too), not just the agent, or
               * they stay zombies. */
              while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
                {
                  if (pid != agent)
                    {
                      forget_reaped (&init, pid);
                      continue;
                    }

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
                      /* Best effort only: without a PID namespace, whatever
                       * left the process group survives (the host profile
                       * says so). Commands' supervisors die with us
                       * (PR_SET_PDEATHSIG) and take their trees along. */
                      kill (-agent, SIGKILL);
                    }
                  /* As pid 1, our exit makes the kernel SIGKILL everything
                   * left in the namespace: setsid'd, double-forked,
                   * SIGTERM-ignoring, and every running command. */
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

      /* Downwards, so that freeing slot i (the last one moves into it) only
       * moves a slot already looked at. */
      for (guint i = n_commands; i-- > 0;)
        {
          if (pfds[3 + i].revents == 0)
            continue;
          if (!handle_supervisor (&init, &init.commands[i]))
            {
              /* A supervisor free again is the next spare (no fork, no
               * exit: most of a short command's cost here), unless there
               * is one: then our closing its channel makes it exit. */
              if (init.commands[i].idle && init.spare < 0 && init.commands[i].supervisor > 0)
                {
                  init.spare = init.commands[i].supervisor;
                  init.spare_chan = init.commands[i].chan;
                  init.commands[i].chan = -1;
                }
              command_clear (&init.commands[i]);
              init.commands[i] = init.commands[--init.n_commands];
            }
        }

      if (pfds[1].revents != 0)
        handle_request (&init, pfds[1].revents);
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

/* MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC as MOUNT_ATTR_* bits. */
static guint64
extra_to_attr (unsigned long extra)
{
  return ((extra & MS_RDONLY) ? MOUNT_ATTR_RDONLY : 0) |
         ((extra & MS_NOSUID) ? MOUNT_ATTR_NOSUID : 0) |
         ((extra & MS_NODEV) ? MOUNT_ATTR_NODEV : 0) |
         ((extra & MS_NOEXEC) ? MOUNT_ATTR_NOEXEC : 0);
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
   * rest take a second call. mount_setattr() only adds flags, so the ones
   * the kernel locked (inherited from the host) need not be restated. */
  if (have_mount_setattr)
    {
      struct mount_attr attr = { .attr_set = extra_to_attr (extra) };

      if (mount_setattr (AT_FDCWD, op->dest, 0, &attr, sizeof attr) != 0)
        die_errno (EXIT_SETUP, "cannot set the flags of", op->dest, errno);
      return;
    }
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

    case OP_OVERLAY:
      /* The staged workspace. Rootless overlayfs keeps its whiteouts and
       * opaque marks in user.overlay.* xattrs (userxattr), which the daemon
       * reads back from the upper folder for the review list. */
      if (mount ("overlay", op->dest, "overlay", MS_NOSUID | MS_NODEV, op->data) != 0)
        die_errno (EXIT_SETUP, "cannot mount the staging overlay on", op->dest, errno);
      break;

    case OP_BIND_ONLY:
      /* Flags come from the OP_SETATTR_TREE planned right after the tree. */
      if (mount (op->source, op->dest, NULL, MS_BIND, NULL) != 0)
        {
          if (op->optional && errno == ENOENT)
            break;
          die_errno (EXIT_SETUP, "cannot bind-mount", op->source, errno);
        }
      break;

    case OP_SETATTR_TREE:
      {
        struct mount_attr attr = { .attr_set = op->attr_set };

        if (mount_setattr (AT_FDCWD, op->dest, AT_RECURSIVE, &attr, sizeof attr) != 0)
          die_errno (EXIT_SETUP, "cannot set the flags of the tree", op->dest, errno);
      }
      break;

    case OP_PIN:
      {
        struct stat st;

        /* Every folder between the workspace and a protected path becomes a
         * mount point: the kernel refuses to rename or remove one (EBUSY),
         * so `mv .git .git.old` cannot move .git/hooks out of the way and
         * put a writable one in its place. A symlink or a file is left
         * alone (the protected path below it then does not exist as such). */
        if (lstat (op->dest, &st) != 0 || !S_ISDIR (st.st_mode))
          break;
        if (mount (op->dest, op->dest, NULL, MS_BIND, NULL) != 0)
          die_errno (EXIT_SETUP, "cannot pin", op->dest, errno);
      }
      break;

    case OP_PROTECT:
      {
        /* Pid 1 is single-threaded (see the top): realpath and g_strdup
         * are fine here. Nothing else runs in the namespace yet, so what
         * lstat saw is what gets mounted. */
        char resolved[PATH_BUF];
        const char *target = op->dest;
        struct stat st;

        if (lstat (op->dest, &st) != 0)
          {
            if (errno == ENOENT || errno == ENOTDIR)
              break;
            die_errno (EXIT_SETUP, "cannot look at the protected path", op->dest, errno);
          }
        if (S_ISLNK (st.st_mode))
          {
            /* git follows it: protect what it points at, when that is in
             * the workspace; anything else is reported, not hidden. */
            if (realpath (op->dest, resolved) == NULL || !path_is_within (resolved, op->source) ||
                strlen (resolved) <= strlen (op->source) || stat (resolved, &st) != 0)
              {
                if (n_protected_skipped < MAX_PROTECT)
                  protected_skipped[n_protected_skipped++] = op->data;
                break;
              }
            target = resolved;
          }
        if (!S_ISDIR (st.st_mode) && !S_ISREG (st.st_mode))
          {
            if (n_protected_skipped < MAX_PROTECT)
              protected_skipped[n_protected_skipped++] = op->data;
            break;
          }
        {
          SetupOp bind = { .type = OP_BIND_RO, .source = target, .dest = target };

          bind_mount (&bind, MS_RDONLY | MS_NOSUID | MS_NODEV);
        }
        if (n_protected_mounted < MAX_PROTECT)
          protected_mounted[n_protected_mounted++] =
            target == op->dest ? op->data : g_strdup (resolved + strlen ("/newroot"));
      }
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

/* Attributes of linux/if_link.h that Debian 12's headers (6.1) predate:
 * the IPv4 packet sizes of BIG TCP (Linux 6.3). A kernel without them
 * ignores them. */
#define PADDOCK_IFLA_GSO_IPV4_MAX_SIZE 63
#define PADDOCK_IFLA_GRO_IPV4_MAX_SIZE 64
/* GSO_MAX_SIZE of Linux ≥ 6.2 (8 × 65,535), the largest packet TCP builds
 * when the device allows it; loopback's tso_max_size. */
#define LOOPBACK_LARGE_PACKET_SIZE 524280u

static void
netlink_add_u32 (struct nlmsghdr *message,
                 unsigned short   type,
                 guint32          value)
{
  struct rtattr *attr = (struct rtattr *) ((char *) message + NLMSG_ALIGN (message->nlmsg_len));

  attr->rta_type = type;
  attr->rta_len = RTA_LENGTH (sizeof value);
  memcpy (RTA_DATA (attr), &value, sizeof value);
  message->nlmsg_len = NLMSG_ALIGN (message->nlmsg_len) + RTA_ALIGN (attr->rta_len);
}

/* Lets TCP on the session's own loopback send packets of up to 512 KiB
 * instead of 64 KiB (BIG TCP, IPv4 and IPv6). Loopback's cost is per
 * packet, not per byte (no copy, no checksum), so a stream costs about
 * half the CPU: a forwarded port's inside connection, the leg the daemon
 * adds to every leased port, doubles its throughput on a 2-core machine
 * (BENCHMARKS.md, "Forwarded port throughput"). The host's loopback is not
 * ours to change. Only a speed: a kernel that refuses (older than 6.2:
 * EINVAL) leaves 64 KiB packets, so the answer is not read. Called between
 * clone() and exec: socket(), sendto() and close() only. */
static void
loopback_allow_large_packets (int ifindex)
{
  union {
    struct nlmsghdr header;
    char            bytes[NLMSG_SPACE (sizeof (struct ifinfomsg)) + 4 * RTA_SPACE (sizeof (guint32))];
  } request;
  struct ifinfomsg *info;
  struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
  int sock = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

  if (sock < 0)
    return;
  memset (&request, 0, sizeof request);
  request.header.nlmsg_len = NLMSG_LENGTH (sizeof (struct ifinfomsg));
  request.header.nlmsg_type = RTM_NEWLINK;
  request.header.nlmsg_flags = NLM_F_REQUEST;
  info = NLMSG_DATA (&request.header);
  info->ifi_family = AF_UNSPEC;
  info->ifi_index = ifindex;
  netlink_add_u32 (&request.header, IFLA_GSO_MAX_SIZE, LOOPBACK_LARGE_PACKET_SIZE);
  netlink_add_u32 (&request.header, IFLA_GRO_MAX_SIZE, LOOPBACK_LARGE_PACKET_SIZE);
  netlink_add_u32 (&request.header, PADDOCK_IFLA_GSO_IPV4_MAX_SIZE, LOOPBACK_LARGE_PACKET_SIZE);
  netlink_add_u32 (&request.header, PADDOCK_IFLA_GRO_IPV4_MAX_SIZE, LOOPBACK_LARGE_PACKET_SIZE);
  /* Without NLM_F_ACK, the kernel answers only an error, which stays
   * unread in a socket closed at once. rtnetlink handles the request
   * within sendto(), so it is in force when this returns. */
  (void) sendto (sock, &request, request.header.nlmsg_len, 0,
                 (struct sockaddr *) &kernel, sizeof kernel);
  close (sock);
}

/* The child of clone(), first process of the new namespaces: its identity,
 * network and a base to build the view on, with the host's tree at
 * /oldroot. The same for every session, so a sandbox made ahead does it
 * before its session is known. */
static void
sandbox_child_enter (const SandboxConfig *cfg)
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
  /* Kept open: run_init() waits on it for the helper's answer to "ready". */

  /* Map our own uid and gid, nothing else. setgroups must be denied first:
   * an unprivileged writer may not map gids otherwise (it could drop
   * supplementary groups used as negative permissions). */
  write_file ("/proc/self/setgroups", "deny");
  write_file ("/proc/self/uid_map", cfg->uid_map);
  write_file ("/proc/self/gid_map", cfg->gid_map);

  /* --net none: the new network namespace has only a loopback device, and
   * it starts down. Up, it is the session's own 127.0.0.1: nothing of the
   * host's network, its loopback included, is reachable from here. */
  if (cfg->own_network)
    {
      struct ifreq ifr;
      int sock = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

      memset (&ifr, 0, sizeof ifr);
      memcpy (ifr.ifr_name, "lo", 3);
      if (sock < 0 || ioctl (sock, SIOCGIFFLAGS, &ifr) != 0)
        die_errno (EXIT_SETUP, "cannot read the loopback device's flags", NULL, errno);
      ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
      if (ioctl (sock, SIOCSIFFLAGS, &ifr) != 0)
        die_errno (EXIT_SETUP, "cannot bring the loopback device up", NULL, errno);
      if (ioctl (sock, SIOCGIFINDEX, &ifr) == 0)
        loopback_allow_large_packets (ifr.ifr_ifindex);
      close (sock);
    }

  /* --net proxy: the session's one way out is a socket on its own
   * loopback that the daemon serves from outside. Made here, before any
   * program of the session runs, so none of them can take the port. */
  if (cfg->proxy_port != 0)
    {
      struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons (cfg->proxy_port),
                                  .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
      int one = 1;

      proxy_listen_fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (proxy_listen_fd < 0)
        die_errno (EXIT_SETUP, "cannot make the proxy's socket", NULL, errno);
      setsockopt (proxy_listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (bind (proxy_listen_fd, (struct sockaddr *) &addr, sizeof addr) != 0 ||
          listen (proxy_listen_fd, 128) != 0)
        die_errno (EXIT_SETUP, "cannot listen on the session's 127.0.0.1 for the proxy", NULL, errno);
    }

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
}

/* The view is built: the host's tree goes, the boundary's layers are
 * applied, and pid 1 starts the agent. */
static G_NORETURN void
sandbox_child_finish (const SandboxConfig *cfg)
{
  /* The host's tree goes from our view: only the binds remain. Private
   * first, so that not even its unmount event propagates anywhere. */
  if (mount ("/oldroot", "/oldroot", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    die_errno (EXIT_SETUP, "cannot make the old root private", NULL, errno);
  if (chdir ("/newroot") != 0)
    die_errno (EXIT_SETUP, "chdir failed", "/newroot", errno);
  /* pivot_root(".", ".") stacks the base on the new root; detaching it
   * takes the host's tree at /oldroot with it (a lazy unmount is of a
   * whole tree), leaving /newroot as / with nothing beneath. One unmount,
   * not bubblewrap's two: each waits for an RCU grace period before it
   * returns, 0.1-1 ms on a machine whose cores were idle. */
  if (syscall (SYS_pivot_root, ".", ".") != 0)
    die_errno (EXIT_SETUP, "pivot_root into the new root failed", NULL, errno);
  if (umount2 (".", MNT_DETACH) != 0)
    die_errno (EXIT_SETUP, "cannot detach the base and the host's tree", NULL, errno);
  if (chdir ("/") != 0)
    die_errno (EXIT_SETUP, "chdir failed", "/", errno);

  /* No exec inside may gain privileges (setuid, file capabilities); also a
   * precondition for seccomp filters later. */
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    die_errno (EXIT_SETUP, "PR_SET_NO_NEW_PRIVS failed", NULL, errno);

  /* Landlock first: its paths are the new root's, and its own system calls
   * (open O_PATH, landlock_*) run before any filter exists. */
  if (cfg->landlock != NULL)
    {
      const char *failed = NULL;
      int err = paddock_landlock_apply (cfg->landlock, &failed);

      if (err != 0)
        die_errno (EXIT_SETUP, "cannot apply the Landlock rules", failed, err);
    }
  /* The seccomp filter last: one system call, nothing can fail after it. */
  if (cfg->seccomp != NULL)
    {
      int err = paddock_seccomp_load (cfg->seccomp);

      if (err != 0)
        die_errno (EXIT_SETUP, "cannot load the seccomp filter", NULL, err);
    }

  run_init (cfg);
}

/* The child of clone() of a sandbox made for its session. */
static G_NORETURN void
sandbox_child (const SandboxConfig *cfg)
{
  sandbox_child_enter (cfg);
  for (guint i = 0; i < cfg->n_ops; i++)
    run_op (&cfg->ops[i]);
  sandbox_child_finish (cfg);
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
plan_add_setattr_tree (Plan       *plan,
                       const char *dest,
                       guint64     attr_set)
{
  plan_add (plan, OP_SETATTR_TREE, FALSE, NULL, dest, NULL);
  g_array_index (plan->ops, SetupOp, plan->ops->len - 1).attr_set = attr_set;
}

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
plan_system_path (Plan        *plan,
                  const char  *path,
                  gboolean     follow,
                  SetupOpType  bind)
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
      plan_add (plan, bind, FALSE, source, dest, NULL);
    }
  else if (S_ISREG (st.st_mode))
    {
      plan_add (plan, OP_CREATE_FILE, FALSE, NULL, dest, NULL);
      plan_add (plan, bind, FALSE, source, dest, NULL);
    }
}

/* overlayfs splits its options at ',' and layer lists at ':'; a backslash
 * escapes either (and itself), so any path can be named. */
static void
append_overlay_path (GString    *options,
                     const char *key,
                     const char *path)
{
  g_string_append (options, key);
  g_string_append_c (options, '=');
  for (const char *p = path; *p != '\0'; p++)
    {
      if (*p == ',' || *p == ':' || *p == '\\')
        g_string_append_c (options, '\\');
      g_string_append_c (options, *p);
    }
}

static char *
overlay_options (const char *lower,
                 const char *stage_dir)
{
  g_autoptr(GString) options = g_string_new (NULL);
  g_autofree char *upper = g_build_filename (stage_dir, "upper", NULL);
  g_autofree char *work = g_build_filename (stage_dir, "work", NULL);

  append_overlay_path (options, "lowerdir", lower);
  g_string_append_c (options, ',');
  append_overlay_path (options, "upperdir", upper);
  g_string_append_c (options, ',');
  append_overlay_path (options, "workdir", work);
  /* userxattr: the only way an unprivileged mounter gets an overlay; it
   * also rules out redirect_dir and metacopy, so every changed file is a
   * whole copy in the upper folder. */
  g_string_append (options, ",userxattr");
  return g_string_free (g_steal_pointer (&options), FALSE);
}

typedef enum {
  STAGE_NONE,      /* the real workspace, read-write (host-like, for tests) */
  STAGE_OVERLAY,
  STAGE_COPY,
} StageKind;

/* The part of the view every session has alike: the system, /dev, /proc,
 * and the empty /tmp and HOME. A sandbox made ahead (--spare) builds it
 * before any session is known; plan_build_session() adds the rest. */
static void
plan_build_system (Plan *plan,
                   int   pty_fd)
{
  /* The system: programs and libraries, read-only. */
  static const char *const system_dirs[] = {
    "/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32",
  };
  static const char *const dev_nodes[] = {
    "null", "zero", "full", "random", "urandom", "tty",
  };

  for (guint i = 0; i < G_N_ELEMENTS (system_dirs); i++)
    plan_system_path (plan, system_dirs[i], FALSE, OP_BIND_RO);
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
      plan_add (plan, have_mount_setattr ? OP_BIND_ONLY : OP_BIND_DEV, FALSE, source, dest, NULL);
    }
  /* The device binds (and /dev's tmpfs) nosuid and noexec in one call;
   * devpts and /dev/shm come after, with flags of their own. */
  if (have_mount_setattr)
    plan_add_setattr_tree (plan, "/newroot/dev", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
  plan_add (plan, OP_MKDIR, FALSE, NULL, "/newroot/dev/pts", NULL);
  plan_add (plan, OP_DEVPTS, FALSE, NULL, "/newroot/dev/pts", NULL);
  plan_add (plan, OP_SYMLINK, FALSE, "pts/ptmx", "/newroot/dev/ptmx", NULL);
  plan_add (plan, OP_MKDIR, FALSE, NULL, "/newroot/dev/shm", NULL);
  /* Private tmpfs sizes are bounded: a session filling them pins memory
   * (10% of RAM here, 25% for /tmp, 10% for HOME), not all of it. */
  plan_add (plan, OP_TMPFS, FALSE, NULL, "/newroot/dev/shm", "mode=1777,size=10%");
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
  plan_add (plan, OP_TMPFS, FALSE, NULL, "/newroot/tmp", "mode=1777,size=25%");
  plan_mkdir_p (plan, HOME_PATH);
  plan_add (plan, OP_TMPFS, FALSE, NULL, "/newroot" HOME_PATH, "mode=0700,size=10%");
}

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

/* The part of /etc programs need to run, as a tree of its own: its files
 * are bound one by one (see etc_fingerprint() for a spare's). */
static void
plan_build_etc (Plan *plan)
{
  plan_mkdir_p (plan, "/etc");
  if (have_mount_setattr)
    {
      /* /etc as a tree of its own (a tmpfs holding the binds), made
       * read-only, nosuid and nodev as a whole in one call rather than one
       * remount per file: the same view, 30-odd fewer mount calls. */
      plan_add (plan, OP_TMPFS, FALSE, NULL, "/newroot/etc", "mode=0755");
      for (guint i = 0; i < G_N_ELEMENTS (etc_files); i++)
        plan_system_path (plan, etc_files[i], TRUE, OP_BIND_ONLY);
      plan_add_setattr_tree (plan, "/newroot/etc",
                             MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    }
  else
    for (guint i = 0; i < G_N_ELEMENTS (etc_files); i++)
      plan_system_path (plan, etc_files[i], TRUE, OP_BIND_RO);
}

/* What plan_build_etc() binds as the host shows it now: for each of its
 * paths, the file (or folder) itself and where a symlink leads, by device
 * and inode. A bind shows the inode it was made on, so a file replaced by
 * rename since (an editor's save, a network manager's new resolv.conf),
 * one that appeared or went, or a symlink pointed elsewhere changes it: a
 * spare's /etc, bound ahead, is then bound again for its session. */
static char *
etc_fingerprint (void)
{
  GString *print = g_string_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (etc_files); i++)
    {
      struct stat link_st, st;
      char target[PATH_BUF];
      ssize_t n = 0;

      if (lstat (etc_files[i], &link_st) != 0)
        {
          g_string_append (print, "-\n");
          continue;
        }
      if (S_ISLNK (link_st.st_mode) && (n = readlink (etc_files[i], target, sizeof target - 1)) < 0)
        n = 0;
      target[n] = '\0';
      if (stat (etc_files[i], &st) != 0)
        memset (&st, 0, sizeof st);
      g_string_append_printf (print, "%lu:%lu %s %lu:%lu\n", (gulong) link_st.st_dev, (gulong) link_st.st_ino,
                              target, (gulong) st.st_dev, (gulong) st.st_ino);
    }
  return g_string_free (print, FALSE);
}

/* An agent's part of the view (before plan_build_session(), whose
 * exposures go over its home): its home writable at HOME_PATH, its
 * install read-only at its own paths. Checked by main(). */
static void
plan_build_agent (Plan               *plan,
                  const char         *home_dir,
                  const char * const *view_ro)
{
  if (home_dir != NULL)
    {
      g_autofree char *source = g_strconcat ("/oldroot", home_dir, NULL);
      struct stat st;

      plan_add (plan, OP_BIND_RW, FALSE, source, "/newroot" HOME_PATH, NULL);
      if (stat (home_dir, &st) == 0)
        {
          SetupOp *op = &g_array_index (plan->ops, SetupOp, plan->ops->len - 1);
          op->expect_dev = st.st_dev;
          op->expect_ino = st.st_ino;
        }
    }
  for (guint i = 0; view_ro != NULL && view_ro[i] != NULL; i++)
    {
      g_autofree char *resolved = realpath (view_ro[i], NULL);
      g_autofree char *source = resolved != NULL ? g_strconcat ("/oldroot", resolved, NULL) : NULL;
      g_autofree char *dest = g_strconcat ("/newroot", view_ro[i], NULL);

      if (resolved == NULL)
        continue;
      if (g_file_test (resolved, G_FILE_TEST_IS_DIR))
        plan_mkdir_p (plan, view_ro[i]);
      else
        {
          g_autofree char *parent = g_path_get_dirname (view_ro[i]);

          plan_mkdir_p (plan, parent);
          plan_add (plan, OP_CREATE_FILE, FALSE, NULL, dest, NULL);
        }
      plan_add (plan, OP_BIND_RO, FALSE, source, dest, NULL);
    }
}

/* The session's own part of the view, after plan_build_system()'s: /etc
 * (unless WITH_ETC is FALSE: a spare's, bound ahead and still current),
 * what it shows of the real HOME, its workspace and protected paths, then
 * the root made read-only. Host paths are looked up as the host sees them. */
static void
plan_build_session (Plan               *plan,
                    gboolean            with_etc,
                    const char         *workspace,
                    StageKind           stage_kind,
                    const char         *stage_dir,
                    const char * const *protect,
                    const char         *real_home,
                    const char * const *expose)
{
  if (with_etc)
    plan_build_etc (plan);

  /* Exposures: what the user named of the real HOME, read-only at the same
   * place in the session's HOME (checked by main(): relative, existing). */
  for (guint i = 0; expose != NULL && expose[i] != NULL; i++)
    {
      g_autofree char *host = g_build_filename (real_home, expose[i], NULL);
      g_autofree char *resolved = realpath (host, NULL);
      g_autofree char *inside = g_build_filename (HOME_PATH, expose[i], NULL);
      g_autofree char *source = resolved != NULL ? g_strconcat ("/oldroot", resolved, NULL) : NULL;
      g_autofree char *dest = g_strconcat ("/newroot", inside, NULL);

      if (resolved == NULL)
        continue;
      if (g_file_test (resolved, G_FILE_TEST_IS_DIR))
        plan_mkdir_p (plan, inside);
      else
        {
          g_autofree char *parent = g_path_get_dirname (inside);

          plan_mkdir_p (plan, parent);
          plan_add (plan, OP_CREATE_FILE, FALSE, NULL, dest, NULL);
        }
      plan_add (plan, OP_BIND_RO, FALSE, source, dest, NULL);
    }

  /* The workspace last: it may lie inside /tmp or HOME's tmpfs, so its mount
   * point is created in them. Same absolute path inside and out, so paths in
   * the agent's output mean the same thing to the user. */
  {
    g_autofree char *source = g_strconcat ("/oldroot", workspace, NULL);
    g_autofree char *dest = g_strconcat ("/newroot", workspace, NULL);
    g_autofree char *stage = stage_dir ? g_strconcat ("/oldroot", stage_dir, NULL) : NULL;
    struct stat st;

    plan_mkdir_p (plan, workspace);
    if (stage_kind == STAGE_OVERLAY)
      {
        g_autofree char *options = overlay_options (source, stage);
        plan_add (plan, OP_OVERLAY, FALSE, NULL, dest, options);
      }
    else if (stage_kind == STAGE_COPY)
      {
        /* The copy, at the workspace's path; the real folder stays out of
         * the view. */
        plan_add (plan, OP_BIND_RW, FALSE, stage, dest, NULL);
        if (stat (stage_dir, &st) == 0)
          {
            SetupOp *op = &g_array_index (plan->ops, SetupOp, plan->ops->len - 1);
            op->expect_dev = st.st_dev;
            op->expect_ino = st.st_ino;
          }
      }
    else
      plan_add (plan, OP_BIND_RW, FALSE, source, dest, NULL);
    if (stage_kind == STAGE_NONE && stat (workspace, &st) == 0)
      {
        SetupOp *op = &g_array_index (plan->ops, SetupOp, plan->ops->len - 1);
        op->expect_dev = st.st_dev;
        op->expect_ino = st.st_ino;
      }
  }

  /* Protected paths of the workspace (relative, checked by main()), over
   * the staged view: read-only binds the agent cannot write through,
   * rename or remove, unless the user allowed them (then they are not
   * listed). Folders on the way are pinned first, in order, once each. */
  for (guint i = 0; protect != NULL && protect[i] != NULL; i++)
    {
      g_autofree char *ws_dest = g_strconcat ("/newroot", workspace, NULL);
      g_auto(GStrv) parts = g_strsplit (protect[i], "/", -1);
      g_autoptr(GString) rel = g_string_new (NULL);

      for (guint j = 0; parts[j] != NULL && parts[j + 1] != NULL; j++)
        {
          g_autofree char *pin = NULL;

          g_string_append_printf (rel, "%s%s", j > 0 ? "/" : "", parts[j]);
          pin = g_strconcat (ws_dest, "/", rel->str, NULL);
          if (g_hash_table_contains (plan->made, pin))
            continue;
          plan_add (plan, OP_PIN, TRUE, NULL, pin, NULL);
          /* Not a folder to create: only marks it pinned. */
          g_hash_table_add (plan->made, g_strdup (pin));
        }
      {
        g_autofree char *dest = g_strconcat (ws_dest, "/", protect[i], NULL);
        g_autofree char *view = g_strconcat (workspace, "/", protect[i], NULL);

        plan_add (plan, OP_PROTECT, TRUE, ws_dest, dest, view);
      }
    }

  /* Last, the root tmpfs itself: the skeleton of folders cannot be changed. */
  plan_add (plan, OP_REMOUNT_RO, FALSE, NULL, "/newroot", NULL);
}

/* A relative path of plain components (no "." or "..", no empty one, so
 * no leading or doubled "/"), at most 256 bytes: what --protect and
 * --expose accept, so that nothing they name leaves its folder. */
static gboolean
is_plain_relative_path (const char *path)
{
  g_auto(GStrv) parts = g_strsplit (path, "/", -1);

  if (path[0] == '\0' || strlen (path) > 256)
    return FALSE;
  for (guint j = 0; parts[j] != NULL; j++)
    if (parts[j][0] == '\0' || g_str_equal (parts[j], ".") || g_str_equal (parts[j], ".."))
      return FALSE;
  return TRUE;
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

/* --probe-stage: can this kernel, as this user, mount the staging overlay
 * with its upper layer on DIR's filesystem? (Rootless overlayfs needs
 * Linux 5.11 and user xattrs on the upper filesystem: ext4, xfs and btrfs
 * have them, tmpfs only since 6.6.) The daemon asks once and uses a copy
 * of the workspace instead when the answer is no. */
static int
probe_stage (const char *dir)
{
  static const char *const parts[] = { "lower", "upper", "work", "merged" };
  g_autofree char *lower = g_build_filename (dir, "lower", NULL);
  g_autofree char *merged = g_build_filename (dir, "merged", NULL);
  g_autofree char *probe = g_build_filename (dir, "merged", "probe", NULL);
  g_autofree char *copied = g_build_filename (dir, "upper", "probe", NULL);
  g_autofree char *options = overlay_options (lower, dir);
  char uid_map[64];
  char gid_map[64];
  int status;
  pid_t child;

  for (guint i = 0; i < G_N_ELEMENTS (parts); i++)
    {
      g_autofree char *path = g_build_filename (dir, parts[i], NULL);
      if (g_mkdir_with_parents (path, 0700) != 0)
        {
          g_printerr ("paddock-sandbox: cannot create %s: %s\n", path, g_strerror (errno));
          return EXIT_SETUP;
        }
    }
  g_snprintf (uid_map, sizeof uid_map, "%u %u 1\n", getuid (), getuid ());
  g_snprintf (gid_map, sizeof gid_map, "%u %u 1\n", getgid (), getgid ());

  child = (pid_t) syscall (SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD, NULL, NULL, NULL, NULL);
  if (child < 0)
    {
      explain_no_userns (errno);
      return EXIT_NO_NAMESPACES;
    }
  if (child == 0)
    {
      paddock_autofd int fd = -1;
      struct stat st;

      write_file ("/proc/self/setgroups", "deny");
      write_file ("/proc/self/uid_map", uid_map);
      write_file ("/proc/self/gid_map", gid_map);
      if (mount (NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) != 0)
        die_errno (EXIT_SETUP, "cannot make / a slave mount", NULL, errno);
      if (mount ("overlay", merged, "overlay", MS_NOSUID | MS_NODEV, options) != 0)
        die_errno (EXIT_SETUP, "overlayfs cannot be mounted here (rootless, userxattr):", merged, errno);
      fd = open (probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0)
        die_errno (EXIT_SETUP, "the staging overlay refuses writes:", probe, errno);
      if (lstat (copied, &st) != 0)
        die_errno (EXIT_SETUP, "a write through the overlay did not land in its upper folder:", copied, errno);
      _exit (0);
    }
  while (waitpid (child, &status, 0) < 0)
    if (errno != EINTR)
      return EXIT_SETUP;
  return status_to_code (status);
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

/* --pty-fd's terminal, kept off 0-2 (which the agent's dup2() overwrites);
 * exits with EXIT_USAGE when it is no terminal. -1 without one. */
static int
parse_pty_fd (const char *text)
{
  int fd = parse_fd ("--pty-fd", text);

  if (fd >= 0 && !isatty (fd))
    {
      g_printerr ("paddock-sandbox: --pty-fd %d is not a terminal\n", fd);
      exit (EXIT_USAGE);
    }
  return fd >= 0 && fd < 3 ? fcntl (fd, F_DUPFD_CLOEXEC, 3) : fd;
}

/* --net (and --proxy-port) into CFG; FALSE, said why, when they are wrong:
 * none and proxy need a sandbox of the safe profile. */
static gboolean
parse_net (const char    *net_arg,
           gint           proxy_port,
           SandboxConfig *cfg)
{
  if (net_arg == NULL || g_str_equal (net_arg, "host"))
    cfg->own_network = FALSE;
  else if (g_str_equal (net_arg, "none") && !cfg->host_profile)
    cfg->own_network = TRUE;
  else if (g_str_equal (net_arg, "proxy") && !cfg->host_profile && proxy_port > 0 && proxy_port < 65536)
    {
      cfg->own_network = TRUE;
      cfg->proxy_port = (guint16) proxy_port;
    }
  else
    {
      g_printerr ("paddock-sandbox: --net wants host, none or proxy (none and proxy need the safe profile, "
                  "--proxy-port 1 to 65535), got '%s'\n", net_arg);
      return FALSE;
    }
  return TRUE;
}

/* A sandbox made ahead (--spare): what pid 1 of it fixed before its
 * session was known. Its system part of the view is mounted; the rest of
 * the plan is added once the session's options arrive. */
typedef struct {
  SandboxConfig cfg;
  Plan plan;
  PaddockSeccompProgram seccomp;   /* read when it was made; empty: none */
  int base_fd;                     /* the sandbox's base root, while the host's is our root */
  char *etc_fingerprint;           /* /etc as it was bound ahead; NULL: it was not */
} Spare;

/* The options of a session: those of the whole command line when SPARE is
 * NULL (then it clones the sandbox), or those a sandbox made ahead was
 * sent (then we are its pid 1, looking at the host's tree as our root, and
 * the options fixed when it was made may not be given again). Returns an
 * exit code on failure; with a SPARE it does not return otherwise. */
static int
sandbox_main (int    argc,
              char **argv,
              Spare *spare)
{
  g_autofree char *workspace_arg = NULL;
  g_autofree char *profile = NULL;
  g_autofree char *control_fd_arg = NULL;
  g_autofree char *pty_fd_arg = NULL;
  g_autofree char *stage_arg = NULL;
  g_autofree char *probe_stage_arg = NULL;
  g_auto(GStrv) env = NULL;
  g_auto(GStrv) without_layers = NULL;
  g_auto(GStrv) protect = NULL;
  g_auto(GStrv) expose = NULL;
  g_autofree char *real_home = NULL;
  g_autofree char *home_dir = NULL;
  g_auto(GStrv) view_ro = NULL;
  g_autofree char *probe_hidden = NULL;
  g_autofree char *probe_abstract = NULL;
  gint probe_pid = 0;
  gint probe_port = 0;
  gint proxy_port = -1;   /* not given: 3128 */
  g_auto(GStrv) listen_fd_args = NULL;
  g_auto(GStrv) bind_port_args = NULL;
  g_autoptr(GArray) bind_ports = g_array_new (FALSE, FALSE, sizeof (guint16));
  g_autofree char *net_arg = NULL;
  g_autofree char *seccomp_fd_arg = NULL;
  gboolean die_with_parent = FALSE;
  GOptionEntry entries[] = {
    { "workspace", 0, 0, G_OPTION_ARG_FILENAME, &workspace_arg, "Project folder (read-write, same path)", "DIR" },
    { "profile", 0, 0, G_OPTION_ARG_STRING, &profile, "safe (default) or host", "PROFILE" },
    { "control-fd", 0, 0, G_OPTION_ARG_STRING, &control_fd_arg, "Write JSON-line events here", "N" },
    { "pty-fd", 0, 0, G_OPTION_ARG_STRING, &pty_fd_arg, "PTY slave for the agent", "N" },
    { "env", 0, 0, G_OPTION_ARG_STRING_ARRAY, &env, "Agent environment entry (repeatable)", "K=V" },
    { "stage", 0, 0, G_OPTION_ARG_FILENAME, &stage_arg, "Stage the workspace: overlay:DIR or copy:DIR", "KIND:DIR" },
    { "probe-stage", 0, 0, G_OPTION_ARG_FILENAME, &probe_stage_arg, "Check that a staging overlay can be mounted, with DIR as scratch", "DIR" },
    { "die-with-parent", 0, 0, G_OPTION_ARG_NONE, &die_with_parent, "Die with the parent even after setup", NULL },
    { "probe-hidden", 0, 0, G_OPTION_ARG_FILENAME, &probe_hidden, "Canary: a host path the view must not show", "PATH" },
    { "probe-abstract", 0, 0, G_OPTION_ARG_STRING, &probe_abstract, "Canary: a host abstract socket name the agent must not reach", "NAME" },
    { "probe-pid", 0, 0, G_OPTION_ARG_INT, &probe_pid, "Canary: a host pid the agent must not signal", "PID" },
    { "probe-port", 0, 0, G_OPTION_ARG_INT, &probe_port, "Canary: a host loopback TCP port the agent must not reach", "PORT" },
    { "bind-port", 0, 0, G_OPTION_ARG_STRING_ARRAY, &bind_port_args,
      "A TCP port the agent may bind (its leases; repeatable). Sharing the host's network, it may bind no other", "PORT" },
    { "net", 0, 0, G_OPTION_ARG_STRING, &net_arg,
      "host (default: the user's network), none (own namespace, loopback only) or proxy (as none, plus a socket for the daemon's proxy)", "MODE" },
    { "proxy-port", 0, 0, G_OPTION_ARG_INT, &proxy_port, "With --net proxy: the port inside (default 3128)", "PORT" },
    { "listen-fd", 0, 0, G_OPTION_ARG_STRING_ARRAY, &listen_fd_args,
      "A listening socket for the agent, as fd 3, 4… in order (repeatable, at most 16)", "N" },
    { "seccomp-fd", 0, 0, G_OPTION_ARG_STRING, &seccomp_fd_arg,
      "Load the seccomp filter from this sealed memfd instead of building it", "N" },
    { "real-home", 0, 0, G_OPTION_ARG_FILENAME, &real_home, "The user's real HOME, for --expose", "DIR" },
    { "expose", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &expose,
      "A path of the real HOME (relative) shown read-only at the same place in the session's HOME (repeatable)", "PATH" },
    { "home-dir", 0, 0, G_OPTION_ARG_FILENAME, &home_dir,
      "An agent's home, bound read-write at the session's HOME", "DIR" },
    { "view-ro", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &view_ro,
      "A host path (absolute) shown read-only at its own path (repeatable)", "PATH" },
    { "protect", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &protect,
      "A path of the workspace (relative) made read-only in the view when it exists (repeatable)", "PATH" },
    { "without-layer", 0, 0, G_OPTION_ARG_STRING_ARRAY, &without_layers,
      "Leave out a layer (landlock or seccomp) and report it unenforced, or let Landlock's filesystem "
      "rules allow every write (landlock-fs) or its bind rules any free port (landlock-net): for tests "
      "of the strict profile", "LAYER" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("-- CMD [ARG...]");
  g_autoptr(GError) error = NULL;
  g_autofree char *workspace = NULL;
  g_autofree char *stage_dir = NULL;
  StageKind stage_kind = STAGE_NONE;
  g_auto(Plan) own_plan = { NULL, NULL, NULL };
  Plan *plan = spare != NULL ? &spare->plan : &own_plan;
  guint first_session_op = 0;
  gboolean etc_again = FALSE;
  g_auto(PaddockSeccompProgram) seccomp_prog = { 0 };
  g_auto(PaddockLandlockPlan) landlock_plan = { 0 };
  SandboxConfig cfg = { .control_fd = -1, .pty_fd = -1, .ready_fd = -1, .alive_fd = -1 };
  g_autoptr(GPtrArray) envp = g_ptr_array_new ();
  paddock_autofd int ready_read = -1;
  paddock_autofd int alive_write = -1;
  paddock_autofd int seccomp_fd = -1;
  int ready_pipe[2];
  int alive_pipe[2];
  sigset_t set;
  pid_t child;
  int dashdash = -1;

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
  if (spare != NULL &&
      (control_fd_arg != NULL || pty_fd_arg != NULL || profile != NULL || net_arg != NULL ||
       proxy_port != -1 || seccomp_fd_arg != NULL || listen_fd_args != NULL || die_with_parent ||
       probe_stage_arg != NULL))
    {
      g_printerr ("paddock-sandbox: --control-fd, --pty-fd, --profile, --net, --proxy-port, --seccomp-fd, "
                  "--listen-fd and --die-with-parent were fixed when this sandbox was made ahead\n");
      return EXIT_USAGE;
    }
  if (proxy_port == -1)
    proxy_port = 3128;
  if (spare != NULL)
    cfg = spare->cfg;
  if (probe_stage_arg != NULL)
    return probe_stage (probe_stage_arg);

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

  if (spare != NULL)
    ;   /* safe, and its descriptors given when it was made */
  else if (profile == NULL || g_str_equal (profile, "safe"))
    cfg.host_profile = FALSE;
  else if (g_str_equal (profile, "host"))
    cfg.host_profile = TRUE;
  else
    {
      g_printerr ("paddock-sandbox: unknown profile '%s' (safe or host)\n", profile);
      return EXIT_USAGE;
    }

  if (spare == NULL)
    {
      cfg.control_fd = parse_fd ("--control-fd", control_fd_arg);
      cfg.pty_fd = parse_pty_fd (pty_fd_arg);
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

  if (stage_arg != NULL)
    {
      const char *dir = NULL;

      if (g_str_has_prefix (stage_arg, "overlay:"))
        {
          stage_kind = STAGE_OVERLAY;
          dir = stage_arg + strlen ("overlay:");
        }
      else if (g_str_has_prefix (stage_arg, "copy:"))
        {
          stage_kind = STAGE_COPY;
          dir = stage_arg + strlen ("copy:");
        }
      else
        {
          g_printerr ("paddock-sandbox: --stage wants overlay:DIR or copy:DIR, got '%s'\n", stage_arg);
          return EXIT_USAGE;
        }
      stage_dir = realpath (dir, NULL);
      if (stage_dir == NULL || !g_file_test (stage_dir, G_FILE_TEST_IS_DIR))
        {
          g_printerr ("paddock-sandbox: stage folder '%s' is not a folder: %s\n", dir,
                      g_strerror (stage_dir == NULL ? errno : ENOTDIR));
          return EXIT_USAGE;
        }
      if (cfg.host_profile)
        {
          g_printerr ("paddock-sandbox: the host profile has no mount namespace to stage in\n");
          return EXIT_USAGE;
        }
      /* overlayfs refuses layers inside one another; a copy inside the
       * workspace would show itself. */
      if (path_is_within (stage_dir, workspace) || path_is_within (workspace, stage_dir))
        {
          g_printerr ("paddock-sandbox: the stage folder '%s' and the workspace '%s' overlap\n",
                      stage_dir, workspace);
          return EXIT_WORKSPACE;
        }
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

  /* Protected paths: relative, plain components only (no "." or "..", no
   * empty one), bounded in number and length so the report stays small. */
  if (protect != NULL && g_strv_length (protect) > MAX_PROTECT)
    {
      g_printerr ("paddock-sandbox: at most %d --protect paths\n", MAX_PROTECT);
      return EXIT_USAGE;
    }
  if (protect != NULL && protect[0] != NULL && cfg.host_profile)
    {
      g_printerr ("paddock-sandbox: the host profile has no mount namespace to protect paths in\n");
      return EXIT_USAGE;
    }
  for (guint i = 0; protect != NULL && protect[i] != NULL; i++)
    if (!is_plain_relative_path (protect[i]))
      {
        g_printerr ("paddock-sandbox: --protect wants a path relative to the workspace, got '%s'\n", protect[i]);
        return EXIT_USAGE;
      }
  cfg.protect_requested = protect != NULL && protect[0] != NULL;

  /* Exposures: relative to --real-home (absolute), plain components, each
   * existing; at most MAX_PROTECT of them, each at most 256 bytes. */
  if (expose != NULL && (real_home == NULL || !g_path_is_absolute (real_home) || cfg.host_profile ||
                         g_strv_length (expose) > MAX_PROTECT))
    {
      g_printerr ("paddock-sandbox: --expose needs --real-home DIR (absolute), the safe profile, "
                  "and at most %d paths\n", MAX_PROTECT);
      return EXIT_USAGE;
    }
  for (guint i = 0; expose != NULL && expose[i] != NULL; i++)
    {
      g_autofree char *host = g_build_filename (real_home, expose[i], NULL);

      if (!is_plain_relative_path (expose[i]) || !g_file_test (host, G_FILE_TEST_EXISTS))
        {
          g_printerr ("paddock-sandbox: --expose wants an existing path relative to --real-home, got '%s'\n",
                      expose[i]);
          return EXIT_USAGE;
        }
    }
  cfg.exposed = expose;

  /* An agent's home (a folder of the daemon's state dir) and install
   * (absolute, existing, at most MAX_PROTECT, not over a folder the view
   * has of its own). */
  if (home_dir != NULL && (!g_path_is_absolute (home_dir) || cfg.host_profile ||
                           !g_file_test (home_dir, G_FILE_TEST_IS_DIR)))
    {
      g_printerr ("paddock-sandbox: --home-dir wants an existing absolute folder and the safe profile, got '%s'\n",
                  home_dir);
      return EXIT_USAGE;
    }
  if (view_ro != NULL && (cfg.host_profile || g_strv_length (view_ro) > MAX_PROTECT))
    {
      g_printerr ("paddock-sandbox: --view-ro needs the safe profile, and at most %d paths\n", MAX_PROTECT);
      return EXIT_USAGE;
    }
  for (guint i = 0; view_ro != NULL && view_ro[i] != NULL; i++)
    if (!g_path_is_absolute (view_ro[i]) || !is_plain_relative_path (view_ro[i] + 1) ||
        !workspace_allowed (view_ro[i]) || !g_file_test (view_ro[i], G_FILE_TEST_EXISTS))
      {
        g_printerr ("paddock-sandbox: --view-ro wants an existing absolute path outside the view's own "
                    "folders, got '%s'\n", view_ro[i]);
        return EXIT_USAGE;
      }

  cfg.workspace = workspace;
  cfg.probe_hidden = probe_hidden;
  cfg.probe_abstract = probe_abstract;
  cfg.probe_pid = probe_pid > 0 ? probe_pid : 0;
  cfg.probe_port = probe_port > 0 && probe_port < 65536 ? (guint16) probe_port : 0;
  for (guint i = 0; bind_port_args != NULL && bind_port_args[i] != NULL; i++)
    {
      guint64 port;

      if (!g_ascii_string_to_unsigned (bind_port_args[i], 10, 1, 65535, &port, NULL))
        {
          g_printerr ("paddock-sandbox: --bind-port wants a port from 1 to 65535, got '%s'\n", bind_port_args[i]);
          return EXIT_USAGE;
        }
      {
        guint16 p16 = (guint16) port;
        g_array_append_val (bind_ports, p16);
      }
    }
  for (guint i = 0; listen_fd_args != NULL && listen_fd_args[i] != NULL; i++)
    {
      if (i >= G_N_ELEMENTS (cfg.listen_fds))
        {
          g_printerr ("paddock-sandbox: at most %u --listen-fd\n", (guint) G_N_ELEMENTS (cfg.listen_fds));
          return EXIT_USAGE;
        }
      cfg.listen_fds[cfg.n_listen_fds++] = parse_fd ("--listen-fd", listen_fd_args[i]);
    }
  /* A spare's network namespace, or none, was made with it. */
  if (spare == NULL && !parse_net (net_arg, proxy_port, &cfg))
    return EXIT_USAGE;
  cfg.argv = argv + 1;
  cfg.envp = (char *const *) envp->pdata;
  if (spare == NULL)
    {
      cfg.die_with_parent = die_with_parent;
      g_snprintf (cfg.uid_map, sizeof cfg.uid_map, "%u %u 1\n", getuid (), getuid ());
      g_snprintf (cfg.gid_map, sizeof cfg.gid_map, "%u %u 1\n", getgid (), getgid ());
    }

  /* Signals are blocked from here on and read synchronously, both here and
   * (inherited) in pid 1: none can arrive half-way through setup. */
  forwarded_signals (&set);
  sigprocmask (SIG_BLOCK, &set, NULL);

  if (spare == NULL && cfg.host_profile)
    {
      /* No namespaces, asked for explicitly: we are the init. Orphans of
       * the agent come back to us to be reaped. */
      prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
      if (!die_with_parent)
        prctl (PR_SET_PDEATHSIG, 0, 0, 0, 0);
      run_init (&cfg);
    }

  if (spare == NULL)
    {
      plan_init (plan);
      /* Present: it fails on the bad fd. Absent: ENOSYS (or EPERM from a
       * seccomp filter that does not know it); then the plan remounts. */
      have_mount_setattr = mount_setattr (-1, "", 0, NULL, 0) != 0 && errno != ENOSYS && errno != EPERM;
      plan_build_system (plan, cfg.pty_fd);
    }
  /* A spare ran the system part already: only what follows is left. Its
   * /etc too, unless the host's changed since (then it is bound again,
   * over the old one, which goes). */
  if (spare != NULL && spare->etc_fingerprint != NULL)
    {
      g_autofree char *now = etc_fingerprint ();
      GHashTableIter iter;
      const char *made;

      etc_again = !g_str_equal (now, spare->etc_fingerprint);
      /* The folders made in the old tree go with it. */
      g_hash_table_iter_init (&iter, plan->made);
      while (etc_again && g_hash_table_iter_next (&iter, (gpointer *) &made, NULL))
        if (g_str_has_prefix (made, "/newroot/etc/"))
          g_hash_table_iter_remove (&iter);
    }
  first_session_op = plan->ops->len;
  plan_build_agent (plan, home_dir, (const char * const *) view_ro);
  plan_build_session (plan, spare == NULL || spare->etc_fingerprint == NULL || etc_again,
                      workspace, stage_kind, stage_dir, (const char * const *) protect,
                      real_home, (const char * const *) expose);
  cfg.ops = (const SetupOp *) (void *) plan->ops->data;
  cfg.n_ops = plan->ops->len;

  for (guint i = 0; without_layers != NULL && without_layers[i] != NULL; i++)
    if (!g_str_equal (without_layers[i], "landlock") && !g_str_equal (without_layers[i], "seccomp") &&
        !g_str_equal (without_layers[i], "landlock-fs") && !g_str_equal (without_layers[i], "landlock-net"))
      {
        g_printerr ("paddock-sandbox: --without-layer wants landlock, landlock-fs, landlock-net or seccomp, "
                    "got '%s'\n",
                    without_layers[i]);
        return EXIT_USAGE;
      }

  /* Boundary layers, planned here (GLib, malloc) and applied by pid 1. A
   * layer left out is reported as such ("unenforced", or no filter in
   * /proc), never as applied. */
  if (seccomp_fd_arg != NULL)
    seccomp_fd = parse_fd ("--seccomp-fd", seccomp_fd_arg);
  if (spare != NULL)
    cfg.seccomp = without_layers != NULL && g_strv_contains ((const char *const *) without_layers, "seccomp")
                  ? NULL : &spare->seccomp;
  else if (!(without_layers != NULL && g_strv_contains ((const char *const *) without_layers, "seccomp")))
    {
      /* The daemon's ready-made program when it gave one: the same rules,
       * without libseccomp's work in every session's start. */
      if (seccomp_fd >= 0 ? !paddock_seccomp_read_sealed (seccomp_fd, &seccomp_prog, &error)
                          : !paddock_seccomp_build (&seccomp_prog, &error))
        {
          g_printerr ("paddock-sandbox: %s\n", error->message);
          return EXIT_SETUP;
        }
      cfg.seccomp = &seccomp_prog;
    }
  if (!(without_layers != NULL && g_strv_contains ((const char *const *) without_layers, "landlock")))
  {
    /* Paths of the view pid 1 pivots into (see plan_build). */
    const char *const read_paths[] = { "/", NULL };
    /* --without-layer landlock-fs: Landlock applies, but its filesystem
     * rules let the whole view be written, as a broken rule set would;
     * only the landlock-fs canary can tell (a test of that canary). */
    gboolean fs_wide_open = without_layers != NULL &&
                            g_strv_contains ((const char *const *) without_layers, "landlock-fs");
    const char *const write_paths[] = { workspace, HOME_PATH, "/tmp", "/dev/shm",
                                        fs_wide_open ? "/" : NULL, NULL };
    const char *const device_paths[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/tty",
                                         "/dev/pts", "/dev/console", NULL };
    const char *const optional_paths[] = { "/dev/console", NULL };
    PaddockLandlockRequest request;

    /* --without-layer landlock-net: Landlock applies, but its bind rules
     * also allow port 0 (any free port), as a broken rule set would; only
     * the landlock-net canary can tell (a test of that canary). */
    if (without_layers != NULL && g_strv_contains ((const char *const *) without_layers, "landlock-net"))
      {
        guint16 any_port = 0;

        g_array_append_val (bind_ports, any_port);
      }
    request = (PaddockLandlockRequest) {
      .read_paths = read_paths, .write_paths = write_paths,
      .device_paths = device_paths, .optional_paths = optional_paths,
      /* A session binds only its leased ports: on the host's network any
       * other would be a service on the user's machine nobody asked for,
       * or a port another program expects; in a namespace of its own the
       * leased ones are those the daemon forwards, and a server on any
       * other is one nobody can reach (and the rule is the same in every
       * mode). The rules are fixed here for the session's life: a port
       * leased later cannot be added (Landlock only ever narrows). */
      .restrict_bind = TRUE,
      .bind_ports = (const guint16 *) (void *) bind_ports->data,
      .n_bind_ports = bind_ports->len,
      .restrict_connect = FALSE,
      .scope_signals_and_abstract_unix = TRUE,
    };

    if (!paddock_landlock_prepare (&request, &landlock_plan, &error))
      {
        g_printerr ("paddock-sandbox: %s\n", error->message);
        return EXIT_SETUP;
      }
    cfg.landlock = &landlock_plan;
  }

  /* Read (or not wanted): nothing inside the sandbox holds it. */
  paddock_close_fd (&seccomp_fd);

  if (spare != NULL)
    {
      /* Back from the host's tree to the sandbox's base, for good: the
       * rest of the view is built there, as pid 1 of a sandbox made for
       * its session would. */
      if (fchdir (spare->base_fd) != 0 || chroot (".") != 0 || chdir ("/") != 0)
        die_errno (EXIT_SETUP, "cannot return to the sandbox's base from the host's tree", NULL, errno);
      close (spare->base_fd);
      spare->base_fd = -1;
      if (etc_again && umount2 ("/newroot/etc", MNT_DETACH) != 0)
        die_errno (EXIT_SETUP, "cannot take away /etc as it was bound ahead", NULL, errno);
      for (guint i = first_session_op; i < cfg.n_ops; i++)
        run_op (&cfg.ops[i]);
      sandbox_child_finish (&cfg);
    }

  /* The "ready" handshake (see run_init) only when we let go of our
   * parent after setup: with --die-with-parent pid 1 need not wait for us,
   * which saves the start two wake-ups. */
  if ((!die_with_parent && pipe2 (ready_pipe, O_CLOEXEC) != 0) || pipe2 (alive_pipe, O_CLOEXEC) != 0)
    {
      g_printerr ("paddock-sandbox: pipe2 failed: %s\n", g_strerror (errno));
      return EXIT_SETUP;
    }
  if (!die_with_parent)
    {
      ready_read = ready_pipe[0];
      cfg.ready_fd = ready_pipe[1];
    }
  alive_write = alive_pipe[1];
  cfg.alive_fd = alive_pipe[0];

  /* A fork-like raw clone (no new stack): the child continues here as pid 1
   * of the new namespaces, owning them through the new user namespace, so
   * no privilege is needed. We are single-threaded, so the child's copy of
   * the process is consistent. */
  child = (pid_t) syscall (SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID |
                           (cfg.own_network ? CLONE_NEWNET : 0) | SIGCHLD,
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

  /* pid 1 has its own copies; the helper outside needs neither. */
  paddock_seccomp_clear (&seccomp_prog);
  paddock_landlock_plan_clear (&landlock_plan);
  cfg.seccomp = NULL;
  cfg.landlock = NULL;

  if (cfg.ready_fd >= 0)
    close (cfg.ready_fd);
  close (cfg.alive_fd);
  /* Pid 1 alone owns the control socket from here on: it reads the
   * daemon's requests, and the daemon's EOF then means pid 1 is gone. */
  if (cfg.control_fd >= 0)
    close (cfg.control_fd);
  if (ready_read >= 0)
    {
      char c;
      ssize_t n;

      while ((n = read (ready_read, &c, 1)) < 0 && errno == EINTR)
        ;
      /* Set up (or failed, in which case pid 1 said why and exits with a
       * code below that forward_or_wait() passes on). Past setup, a daemon
       * restart must not take the session down: let go of the parent. */
      if (n == 1)
        {
          prctl (PR_SET_PDEATHSIG, 0, 0, 0, 0);
          /* pid 1 starts the agent only after this answer. */
          while (write (alive_write, &c, 1) < 0 && errno == EINTR)
            ;
        }
    }

  forward_or_wait (child);
  return EXIT_SETUP;
}

/* ---- a sandbox made ahead (--spare) ---------------------------------------
 *
 * Most of a sandbox's start is the same for every session: the helper's
 * exec, the namespaces, the user and group maps, the network namespace's
 * loopback and the proxy's socket, and the system part of the view (about
 * fifty mounts). The daemon starts one such sandbox ahead of its next safe
 * session, with only what is fixed then (its terminal, control socket,
 * seccomp program and network mode); pid 1 does all of the above and waits
 * on the control socket. The session's options then come as one message
 * carrying a sealed memfd of NUL-terminated arguments, the same as the
 * helper's own command line without the fixed ones; pid 1 reads them with
 * the host's tree as its root, as the helper outside would have, builds the
 * rest of the view and goes on exactly as a sandbox made for its session.
 * The daemon closing the socket instead means the spare is not wanted. */

/* Pid 1 of a spare: waits for its session's options, then becomes that
 * session's sandbox. */
static G_NORETURN void
spare_wait_for_session (Spare *spare)
{
  char *block = NULL;   /* kept for pid 1's life: the options point into it */
  GPtrArray *args = NULL;
  const char *what = NULL;
  int err = paddock_spare_options_receive (spare->cfg.control_fd, &block, &args, &what);

  if (err < 0)
    _exit (EXIT_SETUP);   /* not wanted: the daemon let go of us */
  if (err != 0)
    die_errno (EXIT_SETUP, what, NULL, err);

  /* The options name host paths, looked up as the helper outside would:
   * with the host's tree (at /oldroot, where nothing of the session's is
   * mounted yet) as our root, until sandbox_main() returns to the base. */
  spare->base_fd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (spare->base_fd < 0 || chroot ("/oldroot") != 0 || chdir ("/") != 0)
    die_errno (EXIT_SETUP, "cannot look at the host's tree", NULL, errno);
  _exit (sandbox_main ((int) args->len - 1, (char **) args->pdata, spare));
}

/* --spare: make a sandbox ahead of its session (see above). */
static int
spare_main (int    argc,
            char **argv)
{
  g_autofree char *control_fd_arg = NULL;
  g_autofree char *pty_fd_arg = NULL;
  g_autofree char *net_arg = NULL;
  g_autofree char *seccomp_fd_arg = NULL;
  gint proxy_port = 3128;
  gboolean spare_flag = FALSE;
  gboolean die_with_parent = FALSE;
  GOptionEntry entries[] = {
    { "spare", 0, 0, G_OPTION_ARG_NONE, &spare_flag, "Make the sandbox ahead; its session's options come later", NULL },
    { "control-fd", 0, 0, G_OPTION_ARG_STRING, &control_fd_arg, "The daemon's SOCK_SEQPACKET control socket", "N" },
    { "pty-fd", 0, 0, G_OPTION_ARG_STRING, &pty_fd_arg, "PTY slave for the agent", "N" },
    { "net", 0, 0, G_OPTION_ARG_STRING, &net_arg, "host (default), none or proxy", "MODE" },
    { "proxy-port", 0, 0, G_OPTION_ARG_INT, &proxy_port, "With --net proxy: the port inside (default 3128)", "PORT" },
    { "seccomp-fd", 0, 0, G_OPTION_ARG_STRING, &seccomp_fd_arg,
      "Load the seccomp filter from this sealed memfd instead of building it", "N" },
    { "die-with-parent", 0, 0, G_OPTION_ARG_NONE, &die_with_parent, "Die with the parent (required)", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new (NULL);
  g_autoptr(GError) error = NULL;
  /* pid 1's for its life; the helper outside drops its copy. */
  static Spare spare = { .cfg = { .control_fd = -1, .pty_fd = -1, .ready_fd = -1, .alive_fd = -1 },
                         .base_fd = -1 };
  SandboxConfig *cfg = &spare.cfg;
  paddock_autofd int seccomp_fd = -1;
  int alive_pipe[2];
  int type = 0;
  socklen_t type_len = sizeof type;
  sigset_t set;
  pid_t child;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("paddock-sandbox: %s\n", error->message);
      return EXIT_USAGE;
    }
  if (argc > 1)
    {
      g_printerr ("paddock-sandbox: a sandbox made ahead (--spare) gets its session's options later, not '%s'\n",
                  argv[1]);
      return EXIT_USAGE;
    }
  /* Nobody would be left to end it otherwise. */
  if (!die_with_parent)
    {
      g_printerr ("paddock-sandbox: --spare needs --die-with-parent\n");
      return EXIT_USAGE;
    }
  cfg->control_fd = parse_fd ("--control-fd", control_fd_arg);
  if (cfg->control_fd < 0 ||
      getsockopt (cfg->control_fd, SOL_SOCKET, SO_TYPE, &type, &type_len) != 0 || type != SOCK_SEQPACKET)
    {
      g_printerr ("paddock-sandbox: --spare needs --control-fd, a SOCK_SEQPACKET socket: its session comes that way\n");
      return EXIT_USAGE;
    }
  cfg->pty_fd = parse_pty_fd (pty_fd_arg);
  if (!parse_net (net_arg, proxy_port, cfg))
    return EXIT_USAGE;
  cfg->die_with_parent = TRUE;
  g_snprintf (cfg->uid_map, sizeof cfg->uid_map, "%u %u 1\n", getuid (), getuid ());
  g_snprintf (cfg->gid_map, sizeof cfg->gid_map, "%u %u 1\n", getgid (), getgid ());

  forwarded_signals (&set);
  sigprocmask (SIG_BLOCK, &set, NULL);

  plan_init (&spare.plan);
  have_mount_setattr = mount_setattr (-1, "", 0, NULL, 0) != 0 && errno != ENOSYS && errno != EPERM;
  plan_build_system (&spare.plan, cfg->pty_fd);
  /* /etc ahead as well where it is one tree (a tmpfs, mount_setattr), so
   * that it can be taken away whole should the host's change before the
   * session comes; with the fingerprint it is checked against. */
  if (have_mount_setattr)
    {
      spare.etc_fingerprint = etc_fingerprint ();
      plan_build_etc (&spare.plan);
    }

  /* The filter every session gets; --without-layer seccomp, a test
   * switch, may still leave it out when the session comes. */
  if (seccomp_fd_arg != NULL)
    seccomp_fd = parse_fd ("--seccomp-fd", seccomp_fd_arg);
  if (seccomp_fd >= 0 ? !paddock_seccomp_read_sealed (seccomp_fd, &spare.seccomp, &error)
                      : !paddock_seccomp_build (&spare.seccomp, &error))
    {
      g_printerr ("paddock-sandbox: %s\n", error->message);
      return EXIT_SETUP;
    }
  paddock_close_fd (&seccomp_fd);

  if (pipe2 (alive_pipe, O_CLOEXEC) != 0)
    {
      g_printerr ("paddock-sandbox: pipe2 failed: %s\n", g_strerror (errno));
      return EXIT_SETUP;
    }
  cfg->alive_fd = alive_pipe[0];

  child = (pid_t) syscall (SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID |
                           (cfg->own_network ? CLONE_NEWNET : 0) | SIGCHLD,
                           NULL, NULL, NULL, NULL);
  if (child < 0)
    {
      explain_no_userns (errno);
      return EXIT_NO_NAMESPACES;
    }
  if (child == 0)
    {
      close (alive_pipe[1]);
      sandbox_child_enter (cfg);
      for (guint i = 0; i < spare.plan.ops->len; i++)
        run_op (&g_array_index (spare.plan.ops, SetupOp, i));
      spare_wait_for_session (&spare);
    }

  /* As after a sandbox's clone: pid 1 alone has the control socket, and
   * our end of alive_fd goes with us. */
  paddock_seccomp_clear (&spare.seccomp);
  plan_clear (&spare.plan);
  g_clear_pointer (&spare.etc_fingerprint, g_free);
  close (cfg->alive_fd);
  close (cfg->control_fd);
  forward_or_wait (child);
  return EXIT_SETUP;
}

int
main (int    argc,
      char **argv)
{
  /* Until the sandbox is set up, our parent's death is ours: a daemon that
   * crashed mid-start must not leave a half-built session behind. (The
   * daemon also sets it in its child before exec, closing the window
   * between its fork and this line.) */
  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);

  /* Everything inherited is closed at the agent's exec. */
  close_range (3, ~0U, CLOSE_RANGE_CLOEXEC);

  if (argc > 1 && g_str_equal (argv[1], "--spare"))
    return spare_main (argc, argv);
  return sandbox_main (argc, argv, NULL);
}
