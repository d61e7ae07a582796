/* paddock-sandbox-spare.c — a sandbox made ahead of its session (--spare)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-sandbox-private.h"
#include "paddock-spare-options.h"

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
int
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
  static Spare spare = { .cfg = { .control_fd = -1, .pty_fd = -1, .ready_fd = -1, .alive_fd = -1,
                                 .found = &spare.found },
                         .found = { .proxy_listen_fd = -1 }, .base_fd = -1 };
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
  cfg->have_mount_setattr = spare.plan.have_mount_setattr;
  plan_build_system (&spare.plan, cfg->pty_fd);
  /* /etc ahead as well where it is one tree (a tmpfs, mount_setattr), so
   * that it can be taken away whole should the host's change before the
   * session comes; with the fingerprint it is checked against. */
  if (spare.plan.have_mount_setattr)
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
        run_op (cfg, &g_array_index (spare.plan.ops, SetupOp, i));
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
