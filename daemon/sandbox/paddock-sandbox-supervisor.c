/* paddock-sandbox-supervisor.c — a command's supervisor, from its fork to its report
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Each command runs under a supervisor forked from pid 1: a child
 * subreaper that starts the command, reports it, signals or kills its
 * whole tree, and may then serve the next command (the spare).
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-sandbox-private.h"

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

static void
sup_send (int           chan,
          const SupMsg *msg)
{
  while (send (chan, msg, sizeof *msg, MSG_NOSIGNAL) < 0 && errno == EINTR)
    ;
}

/* What the supervisor has to say about its command: to pid 1 on CHAN,
 * which turns it into the daemon's event; or, for a "direct" spawn,
 * straight to the daemon as that event, on the command's own channel
 * (REQ's events_fd), with no wakeup of pid 1 on the way: see "Direct
 * events" in docs/sandbox-protocol.md. */
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
      line_add (&line, JSON_EVENT (PADDOCK_SANDBOX_EVENT_SPAWNED) JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_ID));
      line_add_int (&line, (long) req->id);
      line_add (&line, JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_PID));
      line_add_int (&line, msg->pid);
      break;
    case SUP_FAILED:
      line_add (&line, JSON_EVENT (PADDOCK_SANDBOX_EVENT_SPAWN_FAILED) JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_ID));
      line_add_int (&line, (long) req->id);
      line_add (&line, JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_ERRNO));
      line_add_int (&line, msg->err);
      line_add (&line, JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_MESSAGE) "\"");
      line_add_json (&line, stage_text (msg->stage));
      line_add (&line, ": ");
      line_add_json (&line, g_strerror (msg->err));
      line_add (&line, "\"");
      break;
    case SUP_EXITED:
      line_add (&line, JSON_EVENT (PADDOCK_SANDBOX_EVENT_COMMAND_EXITED) JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_ID));
      line_add_int (&line, (long) req->id);
      line_add (&line, JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_STATUS));
      line_add_int (&line, status_to_code (msg->status));
      if (WIFSIGNALED (msg->status))
        {
          line_add (&line, JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_SIGNAL));
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
guint
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
      /* A direct command's channel is the daemon's alone: its hangup
       * means the daemon went (a sandbox its keeper holds outlives it), and
       * the command's caller with it, who hears it was lost. */
      struct pollfd pfds[3] = {
        { .fd = sfd, .events = POLLIN, .revents = 0 },
        { .fd = chan, .events = POLLIN, .revents = 0 },
        { .fd = req->events_fd, .events = 0, .revents = 0 },
      };

      if (poll (pfds, 3, -1) < 0)
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

      if (pfds[2].revents & (POLLHUP | POLLERR))
        {
          killing = TRUE;
          kill_tree (sfd, command, &command_done, &command_status);
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

/* The spare supervisor: forked while pid 1 is idle, it waits for pid 1 to
 * hand it one spawn request (the daemon's message as pid 1 received and
 * checked it, with the command's 3 fds, 4 for a direct one) and is then
 * that command's supervisor. So the fork of pid 1, and the page faults that
 * follow it, are not on the way from Exec to "spawned". Once that command
 * is over and it is free (supervise_command), it waits again, and pid 1
 * keeps it as its spare: commands in a row then cost no fork of pid 1 and
 * no exit at all, which on a small machine was most of the session's own
 * CPU per short command. EOF on CHAN: pid 1 has no use for it, or is gone. */
G_NORETURN void
run_spare_supervisor (const SandboxConfig *cfg,
                      int                  chan)
{
  /* One request message at a time, as pid 1 passed it on. */
  g_autofree char *buf = g_malloc (MAX_REQUEST_BYTES);

  /* Should pid 1 go (host profile: the helper), so do we. */
  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);

  for (;;)
    {
      g_auto(SpawnRequest) req = { 0, NULL, NULL, NULL, NULL, FALSE, FALSE, FALSE, { -1, -1, -1 }, -1 };
      g_autoptr(GArray) fds = g_array_new (FALSE, FALSE, sizeof (int));
      g_autoptr(GVariant) request = NULL;
      SupMsg failed = { SUP_FAILED, 0, 0, EINVAL, STAGE_SETUP, 0 };
      const char *why = NULL;
      ssize_t n = recv_request (chan, 0, buf, fds);

      /* Cut short (pid 1 passes on what fit its own buffer, so only a
       * bug): refused as before, its fds closed already. */
      if (n < 0 && (errno == EMSGSIZE || errno == ETOOMANYREFS))
        {
          sup_report (&req, chan, &failed);
          _exit (0);
        }
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
      if ((fds->len != PADDOCK_SANDBOX_SPAWN_N_FDS && fds->len != PADDOCK_SANDBOX_DIRECT_SPAWN_N_FDS) ||
          (request = request_from_buf (buf, n)) == NULL || !g_variant_lookup (request, PADDOCK_SANDBOX_KEY_ID, "u", &req.id) ||
          !parse_spawn_request (cfg->workspace, request, fds, &req, &failed.err, &why) || req.own_pty)
        {
          /* A direct spawn not understood this far has no channel to answer
           * on: our silent end makes pid 1 report "supervisor-gone". */
          if (req.events_fd >= 0 || fds->len == PADDOCK_SANDBOX_SPAWN_N_FDS)
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
G_NORETURN void
run_command_supervisor (const SandboxConfig *cfg,
                        const SpawnRequest  *req,
                        int                  chan)
{
  if (supervise_command (req, chan, cfg->host_profile))
    run_spare_supervisor (cfg, chan);
  _exit (0);
}

const char *
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
