/* paddock-sandbox-init.c — pid 1: the namespaces entered, the root, the agent, reaping
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The child of clone(): its identity, network and root view, the boundary
 * layers, then run_init(), the sandbox's init: it starts the agent,
 * reports, reaps, forwards signals and serves the daemon's requests.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-sandbox-private.h"

void
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
G_NORETURN void
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
                .spare = -1, .spare_chan = -1, .want_spare = FALSE,
                .request_buf = g_malloc (MAX_REQUEST_BYTES) };

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

  /* The proxy's socket goes to the daemon before the agent exists;
   * connections made before the daemon serves it wait in its backlog.
   * Without a control socket to send it on there is no way out at all,
   * which is what none means anyway. Pid 1 keeps its copy (CLOEXEC: the
   * agent's exec closes it, and the agent cannot reach pid 1's), so that
   * a daemon that takes the session over can ask for it again
   * (PADDOCK_SANDBOX_OP_PROXY), and so that nothing in the session can
   * bind the proxy's port while no daemon serves it. */
  if (cfg->found->proxy_listen_fd >= 0)
    {
      line_add (&line, JSON_EVENT (PADDOCK_SANDBOX_EVENT_PROXY) JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_PORT));
      line_add_int (&line, cfg->proxy_port);
      line_add (&line, "}\n");
      send_event_with_fd (cfg->control_fd, &line, cfg->found->proxy_listen_fd);
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

  line_add (&line, JSON_EVENT (PADDOCK_SANDBOX_EVENT_STARTED) JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_PID));
  line_add_int (&line, agent);
  if (!cfg->host_profile)
    {
      const PaddockLandlockPlan *ll = cfg->landlock;
      int mode = -1, filters = -1;

      /* The kernel's account of pid 1, whose filter and Landlock domain the
       * agent and every command inherit and cannot shed. */
      paddock_seccomp_read_status (&mode, &filters);
      line_add (&line, JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_BOUNDARY) "{\"no_new_privs\":");
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
      for (guint i = 0; i < cfg->found->n_protected_mounted; i++)
        {
          line_add (&line, i > 0 ? ",\"" : "\"");
          line_add_json (&line, cfg->found->protected_mounted[i] + strlen (cfg->workspace) + 1);
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
      for (guint i = 0; i < cfg->found->n_protected_skipped; i++)
        {
          line_add (&line, i > 0 ? ",\"" : "\"");
          line_add_json (&line, cfg->found->protected_skipped[i] + strlen (cfg->workspace) + 1);
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
                  line_add (&line, JSON_EVENT (PADDOCK_SANDBOX_EVENT_EXITED) JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_PID));
                  line_add_int (&line, pid);
                  line_add (&line, JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_STATUS));
                  line_add_int (&line, status_to_code (status));
                  if (WIFSIGNALED (status))
                    {
                      line_add (&line, JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_SIGNAL));
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

/* The child of clone(), first process of the new namespaces: its identity,
 * network and a base to build the view on, with the host's tree at
 * /oldroot. The same for every session, so a sandbox made ahead does it
 * before its session is known. */
void
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

  /* --net none or proxy: the session's own loopback, and the proxy's
   * socket on it, before any program of the session runs. */
  if (cfg->own_network)
    net_bring_up_loopback ();
  if (cfg->proxy_port != 0)
    net_listen_for_proxy (cfg);

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
G_NORETURN void
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
G_NORETURN void
sandbox_child (const SandboxConfig *cfg)
{
  sandbox_child_enter (cfg);
  for (guint i = 0; i < cfg->n_ops; i++)
    run_op (cfg, &cfg->ops[i]);
  sandbox_child_finish (cfg);
}
