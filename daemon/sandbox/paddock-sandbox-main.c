/* paddock-sandbox-main.c — the helper outside: options, checks, clone, supervision
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * paddock-sandbox's entry point: the command line into a SandboxConfig
 * and a mount plan, checks, the clone of pid 1 into new namespaces, and
 * the helper outside that forwards signals and exits with pid 1's status.
 * Usage, exit codes and the control protocol: docs/sandbox-protocol.md and
 * paddock-sandbox-protocol.h; how the files divide the work:
 * paddock-sandbox-private.h.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-sandbox-private.h"
#include "paddock-spare-options.h"

void
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

void
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

int
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
int
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
gboolean
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

/* The options of a session: those of the whole command line when SPARE is
 * NULL (then it clones the sandbox), or those a sandbox made ahead was
 * sent (then we are its pid 1, looking at the host's tree as our root, and
 * the options fixed when it was made may not be given again). Returns an
 * exit code on failure; with a SPARE it does not return otherwise. */
int
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
  SandboxFound found = { .n_protected_mounted = 0, .n_protected_skipped = 0, .proxy_listen_fd = -1 };
  SandboxConfig cfg = { .control_fd = -1, .pty_fd = -1, .ready_fd = -1, .alive_fd = -1, .found = &found };
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
      if (paddock_path_is_within (stage_dir, workspace) || paddock_path_is_within (workspace, stage_dir))
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
  cfg.have_mount_setattr = plan->have_mount_setattr;
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
      /* On the host's network a session binds only its leased ports: any
       * other would be a service on the user's machine nobody asked for,
       * or a port another program expects. The rules are fixed here for
       * the session's life (Landlock only ever narrows). In a network
       * namespace of its own nothing outside reaches a socket it binds
       * (the daemon forwards only the leased ports in), so a rule there
       * would isolate nothing and break ordinary programs: an agent's own
       * server, an MCP server, a test suite's port 0. */
      .restrict_bind = !cfg.own_network,
      .bind_ports = (const guint16 *) (void *) bind_ports->data,
      .n_bind_ports = bind_ports->len,
      .unrestricted_bind_reason = cfg.own_network
        ? "bind unrestricted: the session's own network namespace; only leased ports are forwarded "
          "from the host. Connect is not restricted by Landlock in any mode: in this namespace it "
          "reaches only the session's own loopback (the network layer), the proxy's socket with proxy"
        : NULL,
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
        run_op (&cfg, &cfg.ops[i]);
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

/* The options as the daemon passes them: one sealed memfd (--options-fd N,
 * paddock-sandbox-protocol.h), never our command line, which every local
 * user can read for the session's whole life. Held in a static because
 * pid 1, the agent's environment and its argv point into it until exit. */
static char *options_block;
static GPtrArray *options_args;

static int
options_fd_main (int    argc,
                 char **argv)
{
  const char *what = NULL;
  gint64 fd = -1;
  int err;

  if (argc != 3 || !g_ascii_string_to_signed (argv[2], 10, 3, G_MAXINT, &fd, NULL))
    {
      g_printerr ("paddock-sandbox: %s takes one descriptor number and nothing else\n",
                  PADDOCK_SANDBOX_OPTIONS_FD_ARG);
      return EXIT_SETUP;
    }
  err = paddock_spare_options_read ((int) fd, &options_block, &options_args, &what);
  close ((int) fd);
  if (err != 0)
    {
      g_printerr ("paddock-sandbox: %s: %s\n", what, g_strerror (err));
      return EXIT_SETUP;
    }
  return sandbox_main ((int) options_args->len - 1, (char **) options_args->pdata, NULL);
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
  if (argc > 1 && g_str_equal (argv[1], PADDOCK_SANDBOX_OPTIONS_FD_ARG))
    return options_fd_main (argc, argv);
  return sandbox_main (argc, argv, NULL);
}
