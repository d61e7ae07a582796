/* paddock-keeper.c — one program of a host-profile session, and all it forks
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The host profile has no PID namespace: a process that calls setsid()
 * or double-forks leaves the agent's process session, and without a
 * cgroup nothing else names it (an `opencode serve` outlived Destroy,
 * re-parented to init). As a child subreaper the keeper is handed every
 * such orphan instead, so the program's whole tree is the keeper's
 * descendants until the last of it is gone. The daemon counts that tree
 * (paddock-process-tree.c) and asks the keeper to end it. The protocol,
 * and how the keeper is started: paddock-keeper-protocol.h.
 *
 * Single-threaded, plain C: it is exec'd for every session and command.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-fdpass.h"
#include "paddock-keeper-protocol.h"

#define MAX_PASS_FDS 256
#define MAX_TREE     4096   /* processes signalled per walk */

/* Signals the keeper itself ignores: a stray one (a session-wide SIGTERM
 * listed by pid, a hangup) must not end it and hand its tree to init. */
static const int ignored_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU };

typedef struct
{
  int          control;
  int          pass_fds;
  const char  *cwd;
  int          tty;
  int          listen_pid;
  const char  *program;
  char       **argv;
  int          hold_fd;    /* the PTY master held for a later daemon, or -1 */
  int          end_with_daemon;
  const char  *hold_dir;   /* the session's folder: the socket and the exit file */
  int          hold_control_fd;  /* the daemon's end of paddock-sandbox's control socket, or -1 */
  int          hold_on_request;  /* listens (and outlives the daemon) only once asked HOLD */
} Options;

static void
die (const char *what)
{
  /* Before the program runs the keeper's stderr is the program's: the
   * user reads this line where the program's output would be. */
  fprintf (stderr, "paddock-keeper: %s\n", what);
  exit (126);
}

static int
parse_int (const char *text,
           int         min,
           int         max)
{
  char *end = NULL;
  long value;

  errno = 0;
  value = text != NULL ? strtol (text, &end, 10) : 0;
  if (text == NULL || errno != 0 || end == text || *end != '\0' || value < min || value > max)
    die ("bad arguments");
  return (int) value;
}

static void
parse_options (int      argc,
               char   **argv,
               Options *options)
{
  int i;

  memset (options, 0, sizeof *options);
  options->control = -1;
  options->hold_fd = -1;
  options->hold_control_fd = -1;
  for (i = 1; i < argc && strcmp (argv[i], "--") != 0; i++)
    {
      if (strcmp (argv[i], "--control-fd") == 0 && i + 1 < argc)
        options->control = parse_int (argv[++i], 3, 65535);
      else if (strcmp (argv[i], "--pass-fds") == 0 && i + 1 < argc)
        options->pass_fds = parse_int (argv[++i], 0, MAX_PASS_FDS);
      else if (strcmp (argv[i], "--cwd") == 0 && i + 1 < argc)
        options->cwd = argv[++i];
      else if (strcmp (argv[i], "--tty") == 0)
        options->tty = 1;
      else if (strcmp (argv[i], "--listen-pid") == 0)
        options->listen_pid = 1;
      else if (strcmp (argv[i], "--end-with-daemon") == 0)
        options->end_with_daemon = 1;
      else if (strcmp (argv[i], "--hold-fd") == 0 && i + 1 < argc)
        options->hold_fd = parse_int (argv[++i], 3, 65535);
      else if (strcmp (argv[i], "--hold-control-fd") == 0 && i + 1 < argc)
        options->hold_control_fd = parse_int (argv[++i], 3, 65535);
      else if (strcmp (argv[i], "--hold-on-request") == 0)
        options->hold_on_request = 1;
      else if (strcmp (argv[i], "--hold-dir") == 0 && i + 1 < argc && argv[i + 1][0] == '/')
        options->hold_dir = argv[++i];
      else
        die ("bad arguments");
    }
  /* "--", PROGRAM, ARGV0: the program's own argv may be just its name. */
  if (i + 2 >= argc || options->control < 3 + options->pass_fds || argv[i + 1][0] != '/')
    die ("bad arguments");
  /* Both or neither, the PTY master right after the control socket. */
  if ((options->hold_fd >= 0) != (options->hold_dir != NULL) ||
      (options->hold_fd >= 0 && options->hold_fd != options->control + 1))
    die ("bad arguments");
  /* The helper's control socket only with the rest held, right after the
   * PTY master; until HOLD the tree goes with the daemon. */
  if (options->hold_control_fd >= 0 &&
      (options->hold_fd < 0 || options->hold_control_fd != options->hold_fd + 1))
    die ("bad arguments");
  /* A sandbox's keeper, and a host agent's asked to: held only once
   * told to, the tree going with the daemon until then. */
  if (options->hold_control_fd >= 0)
    options->hold_on_request = 1;
  if (options->hold_on_request && options->hold_fd < 0)
    die ("bad arguments");
  if (options->hold_on_request)
    options->end_with_daemon = 1;
  options->program = argv[i + 1];
  options->argv = &argv[i + 2];
}

static void
send_event (int                       control,
            const PaddockKeeperEvent *event)
{
  if (control < 0)
    return;
  /* A daemon gone meanwhile is no error: there is no one to tell. */
  while (send (control, event, sizeof *event, MSG_NOSIGNAL) < 0 && errno == EINTR)
    ;
}

/* Field 22 of /proc/PID/stat, the start time in clock ticks; 0 if unread.
 * The comm (field 2) may hold spaces and parentheses: count from its last
 * ')'. */
static uint64_t
read_start_time (pid_t pid)
{
  char path[64];
  char buf[1024];
  ssize_t n;
  int fd;
  char *p;

  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  p = strrchr (buf, ')');
  /* Fields 3…21 come first: 19 spaces past the ')'. */
  for (int field = 2; p != NULL && field < 22; field++)
    p = strchr (p + 1, ' ');
  return p != NULL ? strtoull (p + 1, NULL, 10) : 0;
}

/* Direct children of this single-threaded process, as many as fit. */
static unsigned
list_children (const char *path,
               pid_t      *out,
               unsigned    max)
{
  char buf[16384];
  size_t len = 0;
  unsigned n = 0;
  int fd = open (path, O_RDONLY | O_CLOEXEC);
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
  close (fd);
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

/* SIG once to every process of the tree: listed whole first, signalled
 * after (signalling a parent before reading its children could let it die
 * and hand them to us unseen). Grandchildren are read from their parents'
 * /proc entries, which races with pid reuse, so only a signal that may be
 * refused goes this way; SIGKILL goes through kill_tree(). */
static void
signal_tree (int sig)
{
  static pid_t queue[MAX_TREE];
  unsigned head = 0;
  unsigned tail = list_children ("/proc/thread-self/children", queue, MAX_TREE);

  while (head < tail)
    {
      char path[96];
      pid_t pid = queue[head++];

      /* The main thread's children; a threaded program's other threads'
       * children are rare, and SIGKILL finds them all anyway. */
      snprintf (path, sizeof path, "/proc/%d/task/%d/children", (int) pid, (int) pid);
      tail += list_children (path, queue + tail, MAX_TREE - tail);
    }
  for (unsigned i = 0; i < tail; i++)
    kill (queue[i], sig);
}

/* Reaps whatever exited, noting the program's status. 0 once we have no
 * child left at all: the tree is empty. */
static int
reap (pid_t  program,
      int   *program_done,
      int   *program_status)
{
  for (;;)
    {
      int status;
      pid_t pid = waitpid (-1, &status, WNOHANG);

      if (pid > 0)
        {
          if (pid == program)
            {
              *program_done = 1;
              *program_status = status;
            }
          continue;
        }
      if (pid < 0 && errno == EINTR)
        continue;
      return !(pid < 0 && errno == ECHILD);
    }
}

/* SIGKILL the whole tree until nothing is left: our children, reap, and
 * again, since each death hands that process's children to us. Only our
 * own unreaped children are signalled, so no pid can have been reused; a
 * fork racing with its SIGKILL fails in the kernel (fatal signal
 * pending), so the tree cannot outgrow the loop. */
static void
kill_tree (int    sfd,
           pid_t  program,
           int   *program_done,
           int   *program_status)
{
  static pid_t children[MAX_TREE];

  for (;;)
    {
      unsigned n = list_children ("/proc/thread-self/children", children, MAX_TREE);
      struct pollfd pfd = { .fd = sfd, .events = POLLIN, .revents = 0 };
      struct signalfd_siginfo si;

      for (unsigned i = 0; i < n; i++)
        kill (children[i], SIGKILL);
      if (!reap (program, program_done, program_status))
        return;
      /* Wait for the next death (or 10 ms, should a SIGCHLD be merged). */
      if (poll (&pfd, 1, 10) > 0)
        while (read (sfd, &si, sizeof si) > 0)
          ;
    }
}

/* DIR/NAME into @out; 0 when it does not fit. */
static int
hold_path (const Options *options,
           const char    *name,
           char          *out,
           size_t         size)
{
  int n = snprintf (out, size, "%s/%s", options->hold_dir, name);

  return n > 0 && (size_t) n < size;
}

/* The socket a later daemon adopts the session through, bound before the
 * program runs (so that it is there once the daemon hears STARTED). Its
 * folder is the session's, 0700; the socket itself 0600 (the umask at
 * bind), and every peer is checked again by uid at accept. */
static int
hold_listen (const Options *options)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  mode_t old_umask;
  int fd;
  int r;

  if (!hold_path (options, PADDOCK_KEEPER_SOCKET, addr.sun_path, sizeof addr.sun_path))
    return -1;
  fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return -1;
  /* One a keeper killed earlier left: the folder is the session's own. */
  unlink (addr.sun_path);
  old_umask = umask (0177);
  r = bind (fd, (struct sockaddr *) &addr, sizeof addr);
  umask (old_umask);
  if (r < 0 || listen (fd, 4) < 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

static void
hold_unlink (const Options *options)
{
  char path[sizeof ((struct sockaddr_un *) 0)->sun_path];

  if (options->hold_dir != NULL && hold_path (options, PADDOCK_KEEPER_SOCKET, path, sizeof path))
    unlink (path);
}

/* The program's end, seen while no daemon was there, left for the next
 * one: written whole (a temporary file renamed) or not at all. */
static void
hold_write_exit (const Options *options,
                 int            status)
{
  char path[4096];
  char temporary[4096];
  char text[32];
  int fd;
  int n;

  if (!hold_path (options, PADDOCK_KEEPER_EXIT_FILE, path, sizeof path) ||
      !hold_path (options, PADDOCK_KEEPER_EXIT_FILE ".tmp", temporary, sizeof temporary))
    return;
  n = snprintf (text, sizeof text, "%d\n", status);
  fd = open (temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return;
  if (write (fd, text, (size_t) n) != n || fsync (fd) != 0 || close (fd) != 0 ||
      rename (temporary, path) != 0)
    unlink (temporary);
}

/* Whether PID is in our own NAME namespace ("user", "pid"): a process in
 * a sandbox is not (its uid maps to ours, so SO_PEERCRED alone would let
 * the agent take its own session over). Read while the peer is connected:
 * its pid cannot have been reused. */
static int
same_namespace (pid_t       pid,
                const char *name)
{
  char path[64];
  struct stat ours;
  struct stat theirs;

  snprintf (path, sizeof path, "/proc/self/ns/%s", name);
  if (stat (path, &ours) != 0)
    return 0;
  snprintf (path, sizeof path, "/proc/%d/ns/%s", (int) pid, name);
  if (stat (path, &theirs) != 0)
    return 0;
  return ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

/* A daemon that connected: the same user's, or refused (the socket is the
 * session: whoever holds its fds can type into the agent's terminal and
 * end its tree). Gets a new control socket and the PTY master; returns
 * our end of that control socket, or -1 (the peer is dropped). */
static int
hold_accept (int            listener,
             const Options *options,
             pid_t          program,
             uint64_t       start_time)
{
  PaddockKeeperEvent event = { 0, };
  struct ucred cred;
  socklen_t cred_len = sizeof cred;
  int fds[3];
  size_t n_fds = 2;
  int pair[2];
  int peer = accept4 (listener, NULL, NULL, SOCK_CLOEXEC);

  if (peer < 0)
    return -1;
  if (getsockopt (peer, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0 || cred_len != sizeof cred ||
      cred.uid != getuid () || cred.pid <= 0 || !same_namespace (cred.pid, "user") ||
      !same_namespace (cred.pid, "pid"))
    {
      close (peer);
      return -1;
    }
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    {
      close (peer);
      return -1;
    }
  event.type = PADDOCK_KEEPER_ADOPTED;
  event.pid = program;
  event.start_time = start_time;
  fds[0] = pair[1];
  fds[1] = options->hold_fd;
  if (options->hold_control_fd >= 0)
    fds[n_fds++] = options->hold_control_fd;
  if (paddock_fdpass_send (peer, &event, sizeof event, fds, n_fds, MSG_NOSIGNAL | MSG_DONTWAIT) !=
      (ssize_t) sizeof event)
    {
      close (pair[0]);
      pair[0] = -1;
    }
  close (pair[1]);
  close (peer);
  return pair[0];
}

/* The program's side of the fork: its own session, terminal, folder and
 * signals, then the exec. */
static void
run_program (const Options  *options,
             const sigset_t *original_mask)
{
  struct sigaction default_action = { .sa_handler = SIG_DFL };

  for (size_t i = 0; i < sizeof ignored_signals / sizeof ignored_signals[0]; i++)
    sigaction (ignored_signals[i], &default_action, NULL);
  sigprocmask (SIG_SETMASK, original_mask, NULL);

  if (setsid () < 0 || (options->tty && ioctl (0, TIOCSCTTY, 0) < 0) ||
      (options->cwd != NULL && chdir (options->cwd) < 0))
    _exit (126);
  if (options->listen_pid)
    {
      char digits[16];

      snprintf (digits, sizeof digits, "%d", (int) getpid ());
      if (setenv ("LISTEN_PID", digits, 1) != 0)
        _exit (126);
    }
  execv (options->program, options->argv);
  _exit (127);
}

int
main (int    argc,
      char **argv)
{
  Options options;
  struct sigaction ignore_action = { .sa_handler = SIG_IGN };
  PaddockKeeperEvent event = { 0, };
  sigset_t chld;
  sigset_t original_mask;
  int control;
  int sfd;
  int null_fd;
  int program_done = 0;
  int program_status = 0;
  int reported = 0;
  /* EXITED told to a daemon while we held: kept until its RELEASE. */
  int keeping = 0;
  int killed = 0;
  int listener = -1;
  pid_t program;

  parse_options (argc, argv, &options);
  control = options.control;
  if (fcntl (control, F_SETFD, FD_CLOEXEC) < 0)
    die ("no control socket");
  /* The PTY master is the daemon's, never the program's. */
  /* A keeper held on request (a sandbox's, a host agent's) listens only
   * once asked to HOLD: by then the session's folder exists (a sandbox
   * made ahead has none yet), and one never held has no socket for
   * anyone to try. */
  if (options.hold_fd >= 0 && (fcntl (options.hold_fd, F_SETFD, FD_CLOEXEC) < 0 ||
                               (options.hold_control_fd >= 0 &&
                                fcntl (options.hold_control_fd, F_SETFD, FD_CLOEXEC) < 0) ||
                               (!options.hold_on_request && (listener = hold_listen (&options)) < 0)))
    die ("cannot hold the session for a later daemon");

  sigemptyset (&chld);
  sigaddset (&chld, SIGCHLD);
  sigprocmask (SIG_BLOCK, &chld, &original_mask);
  sigdelset (&original_mask, SIGCHLD);
  for (size_t i = 0; i < sizeof ignored_signals / sizeof ignored_signals[0]; i++)
    sigaction (ignored_signals[i], &ignore_action, NULL);

  sfd = signalfd (-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  /* Not dumpable: no process of the session (same uid) may ptrace the
   * keeper and take its tree over. The program's exec makes its own mm
   * dumpable again. */
  /* From here on every exit is _exit(): there is nothing to flush, and
   * LeakSanitizer's check at exit() must ptrace the process, which a
   * non-dumpable one does not allow its own user (a sanitizer build's
   * keeper would spin there for ever, holding the session open). */
  if (sfd < 0 || prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 || prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
    {
      event.type = PADDOCK_KEEPER_FAILED;
      event.error = errno;
      send_event (control, &event);
      _exit (1);
    }

  program = fork ();
  if (program < 0)
    {
      event.type = PADDOCK_KEEPER_FAILED;
      event.error = errno;
      send_event (control, &event);
      _exit (1);
    }
  if (program == 0)
    run_program (&options, &original_mask);

  /* Zombie or not, the program is ours until reaped below: its stat is
   * there to read. */
  event.type = PADDOCK_KEEPER_STARTED;
  event.pid = program;
  event.start_time = read_start_time (program);
  send_event (control, &event);
  {
    uint64_t program_start_time = event.start_time;

  /* The program holds its stdio and descriptors now. Ours would keep a
   * terminal from hanging up and pipes from their end of file. */
  null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3; fd++)
    {
      if (null_fd >= 0)
        dup2 (null_fd, fd);
      else
        close (fd);
    }
  if (null_fd > 2)
    close (null_fd);
  for (int fd = 3; fd < 3 + options.pass_fds; fd++)
    close (fd);

  for (;;)
    {
      /* The listener counts only while no daemon is connected: one
       * session, one daemon. */
      struct pollfd pfds[3] = {
        { .fd = sfd, .events = POLLIN, .revents = 0 },
        { .fd = control, .events = POLLIN, .revents = 0 },
        { .fd = control < 0 ? listener : -1, .events = POLLIN, .revents = 0 },
      };
      int left = 1;

      if (poll (pfds, 3, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }

      if (pfds[0].revents & POLLIN)
        {
          struct signalfd_siginfo si;

          while (read (sfd, &si, sizeof si) > 0)
            ;
          left = reap (program, &program_done, &program_status);
        }

      if (pfds[2].revents & POLLIN)
        {
          control = hold_accept (listener, &options, program, program_start_time);
          if (control >= 0)
            send_event (control, &(PaddockKeeperEvent) { .type = PADDOCK_KEEPER_HELD });
        }

      if (control >= 0 && (pfds[1].revents & (POLLIN | POLLHUP | POLLERR)))
        {
          PaddockKeeperRequest request;
          size_t n_fds = 0;
          ssize_t r = paddock_fdpass_recv (control, &request, sizeof request, NULL, 0, &n_fds, MSG_DONTWAIT);

          /* A request longer than ours, or with fds, is no request: dropped
           * whole (paddock-fdpass.h), never acted on by its first bytes. */
          if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EMSGSIZE || errno == ETOOMANYREFS))
            continue;
          if (r != (ssize_t) sizeof request)
            {
              /* The daemon went: the tree stays ours until it is gone. A
               * command's goes with it: nobody is left to read its output
               * or tell its caller, who hears it was lost. */
              close (control);
              control = -1;
              /* An end it may have published before its record was
               * durable: untold, so that the next daemon hears it (the
               * exit file, or EXITED again at its adoption). */
              if (keeping && listener >= 0)
                {
                  keeping = 0;
                  reported = 0;
                  left = reap (program, &program_done, &program_status);
                }
              keeping = 0;
              if (options.end_with_daemon)
                {
                  kill_tree (sfd, program, &program_done, &program_status);
                  left = 0;
                }
            }
          else if (request.type == PADDOCK_KEEPER_KILL)
            {
              /* The daemon ends the session: it keeps its own rule. */
              killed = 1;
              keeping = 0;
              kill_tree (sfd, program, &program_done, &program_status);
              left = 0;
            }
          else if (request.type == PADDOCK_KEEPER_SIGNAL && request.signal > 0 && request.signal < NSIG)
            signal_tree (request.signal);
          else if (request.type == PADDOCK_KEEPER_HOLD && options.hold_on_request && listener < 0)
            {
              /* Without its socket no later daemon could reach it: it
               * keeps ending with this one. */
              listener = hold_listen (&options);
              if (listener >= 0)
                {
                  options.end_with_daemon = 0;
                  send_event (control, &(PaddockKeeperEvent) { .type = PADDOCK_KEEPER_HELD });
                }
            }
          else if (request.type == PADDOCK_KEEPER_RELEASE && keeping)
            {
              /* No SIGCHLD may come again: whether the tree is empty is
               * asked here. */
              keeping = 0;
              left = reap (program, &program_done, &program_status);
            }
        }

      /* Told to a daemon, or kept for one: never dropped unheard. */
      if (program_done && !reported && control < 0 && listener >= 0 && !left)
        {
          hold_write_exit (&options, program_status);
          reported = 1;
        }
      if (program_done && !reported && (control >= 0 || listener < 0))
        {
          memset (&event, 0, sizeof event);
          event.type = PADDOCK_KEEPER_EXITED;
          event.pid = program;
          event.status = program_status;
          send_event (control, &event);
          reported = 1;
          /* Held (HELD went before this EXITED), that daemon may
           * publish the end before it is on its disk: we keep it. Not
           * held yet but holdable, it may still be asked HOLD (the
           * record naming us durable), and keeps it from then on: until
           * then, an end of file is the old end-with-daemon. */
          keeping = control >= 0 && (listener >= 0 || options.hold_on_request) && !killed;
        }
      if (reported && !left && !keeping)
        break;
    }
  }

  if (listener >= 0)
    hold_unlink (&options);
  _exit (0);
}
