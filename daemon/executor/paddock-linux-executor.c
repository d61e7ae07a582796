/* paddock-linux-executor.c — a session's processes in a sandbox of paddock-sandbox's
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The safe and strict profiles: the agent runs as pid 2 of a sandbox the
 * helper (daemon/sandbox/) makes: namespaces, Landlock, seccomp, the
 * session's cgroup with its limits, and canaries tried before the agent
 * exists. This builds the helper's command line (one option per layer,
 * the descriptors at the fixed slots of paddock-sandbox-protocol.h),
 * takes a sandbox made ahead where one fits (paddock-spare-sandbox.c),
 * and starts the helper born in the session's cgroup. A session a later
 * daemon can take over whole (why_not_held()) runs its helper under a
 * paddock-keeper (--hold-control-fd, paddock-keeper-protocol.h), which
 * holds the terminal and our end of the control socket while no daemon
 * does: the helper dies with the keeper (--die-with-parent), not with us,
 * and paddock_linux_executor_adopt_agent() takes it over. Any other
 * session's helper is the daemon's child and dies with it. Either way its
 * end goes on as "exited". Its control socket (PaddockSandboxLink) and the commands'
 * own channels (PaddockCommandChannels) are this executor's: requests go
 * out through it, their events come back as its signals.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "paddock-agent-session.h"
#include "paddock-autofd.h"
#include "paddock-boundary.h"
#include "paddock-clone-vm.h"
#include "paddock-command-channels.h"
#include "paddock-compat-proc.h"
#include "paddock-error.h"
#include "paddock-keeper-protocol.h"
#include "paddock-lease.h"
#include "paddock-linux-executor.h"
#include "paddock-reserved-ports.h"
#include "paddock-sandbox-link.h"
#include "paddock-sandbox-program.h"
#include "paddock-sandbox-protocol.h"
#include "paddock-seccomp.h"
#include "paddock-spare-options.h"
#include "paddock-terminal.h"

struct _PaddockLinuxExecutor
{
  GObject                 parent_instance;

  guint                   child_watch;   /* the helper's, until it is reaped */
  PaddockSandboxLink     *link;          /* its control socket, from start_agent() */
  PaddockCommandChannels *channels;      /* each direct command's own, until its end */
  PaddockKeeperClient    *keeper;        /* the helper's parent; NULL: the helper is our child */
  gboolean                holdable;      /* the keeper may hold it for a later daemon */
};

static void paddock_linux_executor_iface_init (PaddockExecutorInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (PaddockLinuxExecutor, paddock_linux_executor, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (PADDOCK_TYPE_EXECUTOR, paddock_linux_executor_iface_init))

/* In the forked child only (async-signal-safe): the leased sockets are
 * first duplicated above 64, where nothing is overwritten, then moved
 * to fds FIRST…, clear of whatever else the child still holds. */
static gboolean
child_take_listen_fds (const int *fds,
                       guint      n,
                       int       *high)
{
  for (guint i = 0; i < n; i++)
    if ((high[i] = fcntl (fds[i], F_DUPFD, 64)) < 0)
      return FALSE;
  return TRUE;
}

static gboolean
child_place_listen_fds (const int *high,
                        guint      n,
                        int        first)
{
  for (guint i = 0; i < n; i++)
    if (dup2 (high[i], first + (int) i) < 0)
      return FALSE;
  return TRUE;
}

/* What the child that becomes paddock-sandbox needs, all prepared before
 * the clone: it only reads this.  */
typedef struct
{
  const char  *program;
  char       **argv;
  char       **envp;
  const char  *workspace;
  int          pty;
  const int   *listen_fds;
  guint        n_listen_fds;
  int          control;            /* sandbox: the control channel */
  int          seccomp_fd;         /* sandbox: the filter, or -1 */
  int          options_fd;         /* sandbox: its options, a sealed memfd */
} AgentChild;

/* The child that execs paddock-sandbox: the terminal at 0-2 and
 * FD_PTY, the control channel at FD_CONTROL, the leased sockets from
 * FD_FIRST_LISTEN on and the seccomp filter after them, nothing else
 * (paddock-sandbox-protocol.h). Async-signal-safe calls only: it runs either in a
 * fork() of the daemon or sharing its memory (paddock-clone-vm.c). */
static int
sandbox_child_main (void *data)
{
  const AgentChild *c = data;
  int listen_high[PADDOCK_SESSION_MAX_PORTS];  /* as the parent's listen_fds */
  int pty_high;
  int control_high;
  int seccomp_high;
  int options_high;
  int options_at = paddock_sandbox_fd_options (c->n_listen_fds);

  if (!child_take_listen_fds (c->listen_fds, c->n_listen_fds, listen_high))
    _exit (126);

  /* Gone with us even before the sandbox takes over (and after:
   * --die-with-parent). Its own stdio is the terminal, so its one line of
   * failure is what the user sees. */
  pty_high = fcntl (c->pty, F_DUPFD, 10);
  control_high = fcntl (c->control, F_DUPFD, 10);
  /* Above 64 like the leased sockets, clear of the fds they go to. */
  seccomp_high = c->seccomp_fd >= 0 ? fcntl (c->seccomp_fd, F_DUPFD, 64) : -1;
  options_high = fcntl (c->options_fd, F_DUPFD, 64);

  prctl (PR_SET_PDEATHSIG, SIGKILL);
  if (setsid () < 0 || pty_high < 0 || control_high < 0 || options_high < 0 ||
      dup2 (pty_high, 0) < 0 || dup2 (pty_high, 1) < 0 || dup2 (pty_high, 2) < 0 ||
      dup2 (pty_high, PADDOCK_SANDBOX_FD_PTY) < 0 || dup2 (control_high, PADDOCK_SANDBOX_FD_CONTROL) < 0 ||
      !child_place_listen_fds (listen_high, c->n_listen_fds,
                                                        PADDOCK_SANDBOX_FD_FIRST_LISTEN) ||
      (c->seccomp_fd >= 0 &&
       (seccomp_high < 0 || dup2 (seccomp_high, paddock_sandbox_fd_seccomp (c->n_listen_fds)) < 0)) ||
      dup2 (options_high, options_at) < 0)
    _exit (126);
  /* The seccomp program's slot, unused: whatever of ours is there goes. */
  if (c->seccomp_fd < 0)
    close (paddock_sandbox_fd_seccomp (c->n_listen_fds));
  syscall (SYS_close_range, (unsigned int) options_at + 1U, ~0U, 0U);

  if (chdir (c->workspace) < 0)
    _exit (126);
  execve (c->program, c->argv, c->envp);
  _exit (127);
}

/* An abstract socket of the daemon's, listening, for the sandbox's canary
 * probe: reaching it from a session would mean its Landlock scope is not
 * in place (abstract names have no path a mount view could hide). Made
 * once; NULL when it cannot be. */
static const char *
canary_abstract_socket (void)
{
  static char *name = NULL;
  static gsize made = 0;

  if (g_once_init_enter (&made))
    {
      int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      struct sockaddr_un addr = { .sun_family = AF_UNIX };
      g_autofree char *candidate = g_strdup_printf ("paddock-canary-%d", (int) getpid ());
      size_t len = strlen (candidate);

      memcpy (addr.sun_path + 1, candidate, len);
      if (fd >= 0 &&
          bind (fd, (struct sockaddr *) &addr, (socklen_t) (offsetof (struct sockaddr_un, sun_path) + 1 + len)) == 0 &&
          listen (fd, 1) == 0)
        name = g_steal_pointer (&candidate);   /* fd kept open for the daemon's life */
      else if (fd >= 0)
        close (fd);
      g_once_init_leave (&made, 1);
    }
  return name;
}

/* A TCP port the daemon listens on at 127.0.0.1, for the canary probe of
 * a session with a network of its own: reaching it would mean the session
 * shares the host's loopback. 0 when none could be made. */
static guint16
canary_tcp_port (void)
{
  static guint16 port = 0;
  static gsize made = 0;

  if (g_once_init_enter (&made))
    {
      int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
      socklen_t len = sizeof addr;

      if (fd >= 0 && bind (fd, (struct sockaddr *) &addr, sizeof addr) == 0 && listen (fd, 1) == 0 &&
          getsockname (fd, (struct sockaddr *) &addr, &len) == 0)
        port = ntohs (addr.sin_port);   /* fd kept open for the daemon's life */
      else if (fd >= 0)
        close (fd);
      g_once_init_leave (&made, 1);
    }
  return port;
}

/* The sandbox's seccomp filter, built once for the daemon's life and handed
 * to every sandbox as a sealed memfd (--seccomp-fd): libseccomp's work is
 * the same for every session (the rules take no parameters) and costs a
 * few milliseconds of each start otherwise. -1 when it cannot be built:
 * then each sandbox builds it itself and fails with the reason. */
static int
sandbox_seccomp_fd (void)
{
  static int fd = -1;
  static gsize made = 0;

  if (g_once_init_enter (&made))
    {
      g_autoptr(GError) error = NULL;

      fd = paddock_seccomp_build_sealed (&error);   /* kept open for the daemon's life */
      if (fd < 0)
        g_warning ("Could not build the sandbox's seccomp filter once for all sessions "
                   "(each sandbox will try itself): %s", error->message);
      g_once_init_leave (&made, 1);
    }
  return fd;
}

/* Resource limits on the session's cgroup, before anything joins it:
 * each controller that is available is asked; why one is not in place is
 * kept for the boundary's evidence (which reads the limits back itself). */
static void
set_limits (const PaddockSessionConfig *config,
            PaddockExecutorAgent       *out)
{
  const struct { const char *controller; const char *file; guint64 value; } limits[] = {
    { "pids", "pids.max", paddock_executor_pids_max (config) },
    { "memory", "memory.max", paddock_executor_memory_max (config) },
  };
  g_autoptr(GString) reasons = g_string_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (limits); i++)
    {
      g_autoptr(GError) error = NULL;

      if (paddock_cgroup_set_limit (out->cgroup, limits[i].controller, limits[i].file, limits[i].value, &error))
        {
          out->resources_requested = TRUE;
          continue;
        }
      /* Available but refused is a request the kernel did not honour. */
      if (!g_error_matches (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED))
        out->resources_requested = TRUE;
      g_string_append_printf (reasons, "%s%s", reasons->len > 0 ? "; " : "", error->message);
    }
  g_clear_pointer (&out->resources_reason, g_free);
  if (reasons->len > 0)
    out->resources_reason = g_string_free (g_steal_pointer (&reasons), FALSE);
}

/* The helper's options for a sandbox made ahead: FULL (the helper's whole
 * command line, as built by build_argv()) without its
 * program and the options fixed when the spare was made, which it has
 * already (its descriptors, network, die with its parent). Every option
 * there but --die-with-parent takes a value, taken with it (a value is
 * never read as an option); the command after "--" is passed as it is. */
static GPtrArray *
spare_session_arguments (const GPtrArray *full)
{
  static const char *const fixed[] = {
    "--pty-fd", "--control-fd", "--seccomp-fd", "--net", "--proxy-port",
  };
  GPtrArray *args = g_ptr_array_new ();
  guint i = 1;

  while (i < full->len && g_ptr_array_index (full, i) != NULL)
    {
      const char *arg = g_ptr_array_index (full, i);

      if (g_str_equal (arg, "--"))
        break;
      if (g_str_equal (arg, "--die-with-parent"))
        {
          i++;
          continue;
        }
      if (!g_strv_contains (fixed, arg))
        {
          g_ptr_array_add (args, (gpointer) arg);
          if (i + 1 < full->len && g_ptr_array_index (full, i + 1) != NULL)
            g_ptr_array_add (args, g_ptr_array_index (full, i + 1));
        }
      i += 2;
    }
  for (; i < full->len && g_ptr_array_index (full, i) != NULL; i++)
    g_ptr_array_add (args, g_ptr_array_index (full, i));
  g_ptr_array_add (args, NULL);
  return args;
}

/* FULL (build_argv()) without its program, as a sealed memfd in *OUT_FD. */
static gboolean
sandbox_options_memfd (const GPtrArray  *full,
                       int              *out_fd,
                       GError          **error)
{
  int err = paddock_spare_options_memfd ((const char * const *) full->pdata + 1, out_fd);

  if (err == E2BIG)
    g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                 "The session's options (its environment and command) are over %d MiB in all",
                 PADDOCK_SPARE_OPTIONS_MAX_BYTES / (1024 * 1024));
  else if (err != 0)
    g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                 "Could not pass the sandbox its options: %s", g_strerror (err));
  return err == 0;
}

static gboolean
paddock_linux_executor_is_sandboxed (PaddockExecutor *executor)
{
  return TRUE;
}

/* The same allowlist, with the sandbox's own HOME and a PATH of folders
 * that exist in its view. */
static char **
paddock_linux_executor_adapt_environment (PaddockExecutor  *executor,
                                          char            **env,
                                          GHashTable       *given)
{
  env = g_environ_setenv (env, "HOME", PADDOCK_SANDBOX_HOME, TRUE);
  if (!g_hash_table_contains (given, "PATH"))
    env = g_environ_setenv (env, "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", TRUE);
  return env;
}

/* The agent is always pid 2 of the sandbox's PID namespace. */
static const char *
paddock_linux_executor_listen_pid (PaddockExecutor *executor)
{
  return "2";
}

static gboolean
paddock_linux_executor_check_start (PaddockExecutor            *executor,
                                    const PaddockSessionConfig *config,
                                    PaddockStage               *stage,
                                    GError                    **error)
{
  if (config->helper == NULL)
    {
      /* Never a silent fallback to running unconfined. */
      g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED,
                           "paddock-sandbox was not found next to paddockd or in libexecdir, so "
                           "the safe profile cannot run; nothing was started");
      return FALSE;
    }
  if (stage == NULL)
    {
      /* A sandboxed agent always writes to a stage, never to the real
       * workspace: refuse rather than run without one. */
      g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED,
                           "No staging area could be set up for this session, so its writes "
                           "would reach the workspace directly; nothing was started");
      return FALSE;
    }
  return TRUE;
}

/* Found in the view the sandbox will have. */
static gboolean
paddock_linux_executor_check_program (PaddockExecutor             *executor,
                                      const PaddockSessionConfig  *config,
                                      char                       **envp,
                                      GError                     **error)
{
  return paddock_sandbox_program_check (config->command[0], g_environ_getenv (envp, "PATH"),
                                        config->workspace, PADDOCK_SANDBOX_HOME, g_get_home_dir (),
                                        (const char * const *) config->expose,
                                        (const char * const *) config->agent_view, error);
}

/* The helper's whole command line for SPEC, its program first. */
static GPtrArray *
build_argv (const PaddockExecutorAgentSpec *spec)
{
  const PaddockSessionConfig *config = spec->config;
  GPtrArray *argv = g_ptr_array_new_with_free_func (g_free);
  GPtrArray *passed_leases = spec->passed_leases;

  g_ptr_array_add (argv, g_strdup (config->helper));
  g_ptr_array_add (argv, g_strdup ("--workspace"));
  g_ptr_array_add (argv, g_strdup (config->workspace));
  g_ptr_array_add (argv, g_strdup ("--pty-fd"));
  g_ptr_array_add (argv, g_strdup_printf ("%d", PADDOCK_SANDBOX_FD_PTY));
  g_ptr_array_add (argv, g_strdup ("--control-fd"));
  g_ptr_array_add (argv, g_strdup_printf ("%d", PADDOCK_SANDBOX_FD_CONTROL));
  if (spec->stage != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("--stage"));
      g_ptr_array_add (argv, paddock_stage_dup_sandbox_arg (spec->stage));
    }
  /* Canaries the sandbox tries before the agent exists: the user's
   * real credentials folder, an abstract socket and the pid of ours. */
  {
    g_autofree char *hidden = g_build_filename (g_get_home_dir (), ".ssh", NULL);
    const char *abstract = canary_abstract_socket ();

    g_ptr_array_add (argv, g_strdup ("--probe-hidden"));
    g_ptr_array_add (argv, g_strdup (hidden));
    if (abstract != NULL)
      {
        g_ptr_array_add (argv, g_strdup ("--probe-abstract"));
        g_ptr_array_add (argv, g_strdup (abstract));
      }
    g_ptr_array_add (argv, g_strdup ("--probe-pid"));
    g_ptr_array_add (argv, g_strdup_printf ("%d", (int) getpid ()));
    if (g_strcmp0 (config->net_mode, "host") != 0)
      {
        guint16 probe_port = canary_tcp_port ();

        if (probe_port != 0)
          {
            g_ptr_array_add (argv, g_strdup ("--probe-port"));
            g_ptr_array_add (argv, g_strdup_printf ("%u", probe_port));
          }
      }
  }
  /* On the host's network its leased sockets at fds FD_FIRST_LISTEN…,
   * for the agent at 3…, and it may bind those ports and no other
   * (Landlock). In none and proxy the daemon forwards them, and the helper
   * leaves bind free in the session's own namespace. */
  for (guint i = 0; config->leases != NULL && i < config->leases->len; i++)
    {
      if (passed_leases != NULL)
        {
          g_ptr_array_add (argv, g_strdup ("--listen-fd"));
          g_ptr_array_add (argv, g_strdup_printf ("%d", paddock_sandbox_fd_listen (i)));
        }
      g_ptr_array_add (argv, g_strdup ("--bind-port"));
      g_ptr_array_add (argv, g_strdup_printf ("%u", paddock_lease_get_port (g_ptr_array_index (config->leases, i))));
    }
  /* And those reserved for a later LeasePort (paddock-session-ports.c),
   * which only none and proxy sessions have. */
  for (guint i = 0; spec->bind_args != NULL && spec->bind_args[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (spec->bind_args[i]));
  g_ptr_array_add (argv, g_strdup ("--net"));
  g_ptr_array_add (argv, g_strdup (config->net_mode));
  if (g_strcmp0 (config->net_mode, "proxy") == 0)
    {
      g_ptr_array_add (argv, g_strdup ("--proxy-port"));
      g_ptr_array_add (argv, g_strdup_printf ("%u", spec->proxy_port));
    }
  /* The filter comes after the leased sockets. */
  if (sandbox_seccomp_fd () >= 0)
    {
      g_ptr_array_add (argv, g_strdup ("--seccomp-fd"));
      g_ptr_array_add (argv, g_strdup_printf ("%d", paddock_sandbox_fd_seccomp (passed_leases != NULL ? passed_leases->len : 0)));
    }
  /* Folders of the user's HOME the user chose to show, read-only. */
  if (config->expose != NULL && config->expose[0] != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("--real-home"));
      g_ptr_array_add (argv, g_strdup (g_get_home_dir ()));
      for (guint i = 0; config->expose[i] != NULL; i++)
        {
          g_ptr_array_add (argv, g_strdup ("--expose"));
          g_ptr_array_add (argv, g_strdup (config->expose[i]));
        }
    }
  /* An agent's home and install (paddock-agent-session.c). */
  paddock_agent_session_add_sandbox_arguments (config, argv);
  /* Protected paths, read-only in the view unless the user allowed them. */
  for (const char *const *p = paddock_boundary_protected_paths (); *p != NULL; p++)
    if (config->allow_write == NULL || !g_strv_contains ((const char *const *) config->allow_write, *p))
      {
        g_ptr_array_add (argv, g_strdup ("--protect"));
        g_ptr_array_add (argv, g_strdup (*p));
      }
  /* A test switch for the strict profile's refusal: layers named in
   * the daemon's own PADDOCK_TEST_WITHOUT_LAYERS are left out (and
   * reported so). Nothing inside a session can set it. */
  {
    g_auto(GStrv) without = paddock_executor_test_without_layers ();

    for (guint i = 0; without[i] != NULL; i++)
      if (without[i][0] != '\0')
        {
          g_ptr_array_add (argv, g_strdup ("--without-layer"));
          g_ptr_array_add (argv, g_strdup (without[i]));
        }
  }
  /* The sandbox goes with its parent rather than run on unsupervised:
   * the daemon, or the keeper that holds the session for a later one. */
  g_ptr_array_add (argv, g_strdup ("--die-with-parent"));
  for (guint i = 0; spec->envp[i] != NULL; i++)
    {
      g_ptr_array_add (argv, g_strdup ("--env"));
      g_ptr_array_add (argv, g_strdup (spec->envp[i]));
    }
  g_ptr_array_add (argv, g_strdup ("--"));
  for (guint i = 0; config->command[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (config->command[i]));
  g_ptr_array_add (argv, NULL);
  return argv;
}

/* The link's events, relayed as the executor's (paddock-executor.c). */
static void
link_started_cb (PaddockSandboxLink *link,
                 JsonObject         *report,
                 JsonObject         *event,
                 int                *fd,
                 PaddockExecutor    *self)
{
  paddock_executor_emit_relayed (self, "started", report, event, fd);
}

static void
link_proxy_cb (PaddockSandboxLink *link,
               int                *fd,
               PaddockExecutor    *self)
{
  paddock_executor_emit_relayed (self, "proxy", fd);
}

static void
link_socket_cb (PaddockSandboxLink *link,
                gint64              id,
                int                *fd,
                PaddockExecutor    *self)
{
  paddock_executor_emit_relayed (self, "socket", id, fd);
}

static void
link_command_event_cb (PaddockSandboxLink *link,
                       JsonObject         *event,
                       int                *fd,
                       PaddockExecutor    *self)
{
  paddock_executor_emit_relayed (self, "command-event", event, fd);
}

/* pid 1's "supervisor-gone": the command's own channel answers it. */
static void
link_supervisor_gone_cb (PaddockSandboxLink   *link,
                         guint                 id,
                         PaddockLinuxExecutor *self)
{
  g_autoptr(PaddockLinuxExecutor) hold = g_object_ref (self);

  paddock_command_channels_supervisor_gone (self->channels, (guint32) id);
}

static void
link_closed_cb (PaddockSandboxLink *link,
                PaddockExecutor    *self)
{
  paddock_executor_emit_relayed (self, "closed");
}

/* A direct command's event, from its own channel, as pid 1's. */
static void
channel_event_cb (PaddockCommandChannels *channels,
                  JsonObject             *event,
                  PaddockExecutor        *self)
{
  int no_fd = -1;

  paddock_executor_emit_relayed (self, "command-event", event, &no_fd);
}

static void
paddock_linux_executor_take_control (PaddockLinuxExecutor *self,
                                     int                   control_fd)
{
  self->link = paddock_sandbox_link_new (control_fd);
  g_signal_connect (self->link, "started", G_CALLBACK (link_started_cb), self);
  g_signal_connect (self->link, "proxy", G_CALLBACK (link_proxy_cb), self);
  g_signal_connect (self->link, "socket", G_CALLBACK (link_socket_cb), self);
  g_signal_connect (self->link, "supervisor-gone", G_CALLBACK (link_supervisor_gone_cb), self);
  g_signal_connect (self->link, "command-event", G_CALLBACK (link_command_event_cb), self);
  g_signal_connect (self->link, "closed", G_CALLBACK (link_closed_cb), self);
}

/* The sandbox's control socket, to send a request on. */
static PaddockSandboxLink *
get_link (PaddockLinuxExecutor  *self,
          GError               **error)
{
  if (self->link == NULL)
    {
      g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_BUSY, "The sandbox no longer listens");
      return NULL;
    }
  return self->link;
}

/* Asks pid 1 to run the command beside the agent, with the same
 * confinement, passing the command's three standard fds (a command on a
 * terminal gets one the sandbox makes: one of ours would be of the
 * daemon's devpts, which the sandbox does not show, and its master comes
 * back with "spawned"). */
static gboolean
paddock_linux_executor_spawn_command (PaddockExecutor                  *executor,
                                      const PaddockExecutorCommandSpec *spec,
                                      pid_t                            *out_pid,
                                      GError                          **error)
{
  PaddockLinuxExecutor *self = PADDOCK_LINUX_EXECUTOR (executor);
  PaddockSandboxLink *link = get_link (self, error);
  paddock_autofd int channel = -1;
  int fds[PADDOCK_SANDBOX_DIRECT_SPAWN_N_FDS];

  if (link == NULL)
    return FALSE;

  /* Its events come on a channel of its own, straight from its supervisor
   * (a terminal's master comes from pid 1: a command on one still has
   * its events relayed). */
  if (!spec->tty && !paddock_command_channels_open (self->channels, spec->id, &channel))
    {
      int saved_errno = errno;

      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "Could not make the command's event channel: %s", g_strerror (saved_errno));
      return FALSE;
    }

  fds[PADDOCK_SANDBOX_REQUEST_FD_STDIN] = spec->stdio[0];
  fds[PADDOCK_SANDBOX_REQUEST_FD_STDOUT] = spec->stdio[1];
  fds[PADDOCK_SANDBOX_REQUEST_FD_STDERR] = spec->stdio[2];
  fds[PADDOCK_SANDBOX_REQUEST_FD_EVENTS] = channel;
  if (paddock_sandbox_link_spawn (link, spec->id, (const char * const *) spec->argv, spec->cwd,
                                  (const char * const *) spec->envp, spec->tty, spec->tty ? NULL : fds, error))
    return TRUE;
  paddock_command_channels_drop (self->channels, spec->id);
  return FALSE;
}

/* Inside the sandbox, the command's supervisor (a subreaper) signals the
 * whole tree, setsid()ed descendants included. What its supervisor says
 * after a SIGKILL asked for here is about a command the session answered
 * already (a deadline passed, or it was dropped). */
static gboolean
paddock_linux_executor_signal_command (PaddockExecutor  *executor,
                                       guint32           id,
                                       int               signum,
                                       GError          **error)
{
  PaddockLinuxExecutor *self = PADDOCK_LINUX_EXECUTOR (executor);
  PaddockSandboxLink *link = get_link (self, error);

  return link != NULL && paddock_sandbox_link_kill (link, id, signum, error);
}

static void
paddock_linux_executor_forget_command (PaddockExecutor *executor,
                                       guint32          id)
{
  PaddockLinuxExecutor *self = PADDOCK_LINUX_EXECUTOR (executor);

  if (self->channels != NULL)
    paddock_command_channels_drop (self->channels, id);
}

static gboolean
paddock_linux_executor_request_socket (PaddockExecutor  *executor,
                                       guint32           id,
                                       int               family,
                                       GError          **error)
{
  PaddockLinuxExecutor *self = PADDOCK_LINUX_EXECUTOR (executor);
  PaddockSandboxLink *link = get_link (self, error);

  return link != NULL && paddock_sandbox_link_request_socket (link, id, family, error);
}

/* Every event waiting on the control socket now (relayed above). FALSE
 * once the sandbox closed its end. */
static gboolean
paddock_linux_executor_drain_events (PaddockExecutor *executor)
{
  PaddockLinuxExecutor *self = PADDOCK_LINUX_EXECUTOR (executor);

  return self->link != NULL && paddock_sandbox_link_drain (self->link);
}

static void
paddock_linux_executor_finish_commands (PaddockExecutor *executor,
                                        gboolean         started)
{
  PaddockLinuxExecutor *self = PADDOCK_LINUX_EXECUTOR (executor);
  g_autoptr(PaddockLinuxExecutor) hold = g_object_ref (self);

  /* What the commands' supervisors wrote before the sandbox ended counts:
   * a command that ended just before it reports its own exit status, not
   * the sandbox's SIGKILL. */
  if (self->channels != NULL)
    paddock_command_channels_drain_all (self->channels);
  /* And what pid 1 relayed before it ended (a command on a terminal
   * reports through it). A sandbox that never said "started" is read by
   * the session instead, which handles that. */
  if (started && self->link != NULL)
    paddock_sandbox_link_drain (self->link);
  /* Nothing more to say: no main loop ran since they were read. */
  if (self->channels != NULL)
    paddock_command_channels_clear (self->channels);
}

static void
paddock_linux_executor_exited_cb (GPid     pid,
                                  int      wait_status,
                                  gpointer user_data)
{
  PaddockLinuxExecutor *self = user_data;

  self->child_watch = 0;
  g_spawn_close_pid (pid);
  paddock_executor_emit_exited (PADDOCK_EXECUTOR (self), wait_status);
}

/* The helper's keeper: the helper's end (its wait status, as our own
 * child's would be), then the keeper's once its tree is empty. */
static void
paddock_linux_executor_keeper_cb (PaddockKeeperClient      *keeper,
                                  PaddockKeeperClientEvent  event,
                                  int                       wait_status,
                                  gpointer                  user_data)
{
  PaddockLinuxExecutor *self = user_data;

  if (event == PADDOCK_KEEPER_CLIENT_EXITED)
    paddock_executor_emit_exited (PADDOCK_EXECUTOR (self), wait_status);
  else if (event == PADDOCK_KEEPER_CLIENT_KEPT)
    paddock_executor_emit_end_kept (PADDOCK_EXECUTOR (self));
}

/* Why a keeper cannot hold this session for a later daemon, or NULL when
 * it can: a later daemon must be able to take all of it over, or the
 * session keeps dying with us, as it always did (never half-adopted).
 * Its leases are the registry's (a later daemon forwards them again) and
 * pid 1 keeps the proxy's socket for it (PADDOCK_SANDBOX_OP_PROXY); what
 * cannot be held is a session without a folder for the keeper's socket,
 * and a sandbox made ahead as the daemon's own child (no keeper found
 * then, or made for another folder). */
static const char *
why_not_held (const PaddockExecutorAgentSpec *spec,
              gboolean                        took_spare,
              const PaddockSpareSandboxTaken *taken)
{
  if (spec->hold_dir == NULL)
    return "it has no folder of its own";
  if (strlen (spec->hold_dir) + sizeof "/" PADDOCK_KEEPER_SOCKET > sizeof ((struct sockaddr_un *) 0)->sun_path)
    return "its folder's path is too long for the keeper's socket";
  if (paddock_keeper_client_find () == NULL)
    return PADDOCK_KEEPER_NAME " was not found";
  if (took_spare && taken->keeper == NULL)
    return "its sandbox was made ahead, as the daemon's child";
  if (took_spare && g_strcmp0 (taken->hold_dir, spec->hold_dir) != 0)
    return "its sandbox was made ahead for another folder";
  return NULL;
}

/* The helper under a keeper that holds the session (--hold-control-fd):
 * the same descriptors at the same slots as sandbox_child_main() places
 * them (the keeper passes them on at 3…), the keeper's own after them. */
static gboolean
start_held (PaddockLinuxExecutor           *self,
            const PaddockExecutorAgentSpec *spec,
            const AgentChild               *c,
            int                             cgroup_dir,
            PaddockExecutorAgent           *out,
            int                             control,
            GError                        **error)
{
  int pass[2 + PADDOCK_SESSION_MAX_PORTS + 2];
  paddock_autofd int filler = -1;
  guint n = 0;
  PaddockKeeperSpawn keeper_spawn;

  pass[n++] = c->pty;        /* PADDOCK_SANDBOX_FD_PTY */
  pass[n++] = c->control;    /* PADDOCK_SANDBOX_FD_CONTROL */
  for (guint i = 0; i < c->n_listen_fds; i++)
    pass[n++] = c->listen_fds[i];
  /* The seccomp program's slot is there used or not: /dev/null when
   * unused (the helper reads it only with --seccomp-fd, and closes
   * everything at the agent's exec). */
  if (c->seccomp_fd < 0 && (filler = open ("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
    {
      int saved_errno = errno;

      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED, "Could not open /dev/null: %s",
                   g_strerror (saved_errno));
      return FALSE;
    }
  pass[n++] = c->seccomp_fd >= 0 ? c->seccomp_fd : filler;
  pass[n++] = c->options_fd;
  g_assert (n == (guint) paddock_sandbox_fd_options (c->n_listen_fds) - 2);

  keeper_spawn = (PaddockKeeperSpawn) {
    .program = c->program,
    .argv = c->argv,
    .envp = c->envp,
    .cwd = c->workspace,
    .stdio = { c->pty, c->pty, c->pty },
    /* The helper's pid 1 makes the terminal the agent's: not the
     * helper's controlling one. */
    .tty = FALSE,
    .pass_fds = pass,
    .n_pass_fds = n,
    .cgroup_dir = cgroup_dir,
    .cgroup_procs_fd = out->cgroup_procs_fd,
    .hold_fd = out->pty_master,
    .hold_dir = spec->hold_dir,
    .hold_control_fd = control,
  };
  self->keeper = paddock_keeper_client_spawn (&keeper_spawn, paddock_linux_executor_keeper_cb, self, error);
  if (self->keeper == NULL)
    {
      g_prefix_error (error, "Could not start the sandbox: ");
      return FALSE;
    }
  out->keeper = self->keeper;
  out->pid = paddock_keeper_client_get_pid (self->keeper);
  out->start_time = paddock_keeper_client_get_start_time (self->keeper);
  return TRUE;
}

static gboolean
paddock_linux_executor_start_agent (PaddockExecutor                *executor,
                                    const PaddockExecutorAgentSpec *spec,
                                    PaddockExecutorAgent           *out,
                                    GError                        **error)
{
  PaddockLinuxExecutor *self = PADDOCK_LINUX_EXECUTOR (executor);
  const PaddockSessionConfig *config = spec->config;
  PaddockSpareSandboxTaken taken = { .pid = 0, .pty_master = -1, .control = -1, .cgroup = NULL,
                                     .keeper = NULL, .hold_dir = NULL };
  g_autofree char *taken_hold_dir = NULL;
  g_autoptr(GPtrArray) argv = NULL;
  g_auto(GStrv) envp = NULL;
  g_autofree char *options_fd_text = NULL;
  const char *exec_argv[4] = { NULL };
  paddock_autofd int options = -1;
  paddock_autofd int slave = -1;
  paddock_autofd int control = -1;            /* ours of the control socket */
  paddock_autofd int control_theirs = -1;
  paddock_autofd int cgroup_dir = -1;
  int listen_fds[PADDOCK_SESSION_MAX_PORTS];
  guint n_listen_fds = 0;
  AgentChild agent_child;
  const char *not_held;
  pid_t pid;

  g_return_val_if_fail (self->child_watch == 0 && self->keeper == NULL, FALSE);

  out->agent_env = g_strdupv (spec->envp);
  out->program = g_strdup (config->helper);
  argv = build_argv (spec);

  /* The sandbox's own environment: nothing of ours either. */
  envp = g_environ_setenv (NULL, "PATH", "/usr/sbin:/usr/bin:/sbin:/bin", TRUE);

  /* A sandbox made ahead, if one fits: it has its terminal, control
   * socket and cgroup (named for this session), and its pid 1 waits for
   * the options above. Not with leased sockets to pass (the host's
   * network): those go at its exec. One not taken is the manager's to end
   * (paddock_spare_sandbox_discard()). */
  if (spec->spare != NULL && spec->passed_leases == NULL)
    {
      g_autoptr(GPtrArray) session_args = spare_session_arguments (argv);

      out->took_spare = paddock_spare_sandbox_take (spec->spare, config->net_mode,
                                                    (const char * const *) session_args->pdata, &taken);
    }

  if (out->took_spare)
    {
      out->pty_master = taken.pty_master;
      control = taken.control;
      out->cgroup = g_steal_pointer (&taken.cgroup);   /* named for us when it was made */
      taken_hold_dir = g_steal_pointer (&taken.hold_dir);
      taken.hold_dir = taken_hold_dir;
      /* Born under a keeper: the helper's end comes from it. */
      if (taken.keeper != NULL)
        {
          self->keeper = taken.keeper;
          paddock_keeper_client_set_func (self->keeper, paddock_linux_executor_keeper_cb, self);
        }
    }
  else
    {
      int pair[2];

      if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
        {
          int saved_errno = errno;
          g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                       "Could not make the sandbox's control channel: %s", g_strerror (saved_errno));
          return FALSE;
        }
      control = pair[0];
      control_theirs = pair[1];
      if (!paddock_executor_open_pty (&out->pty_master, &slave, error))
        return FALSE;
      if (!sandbox_options_memfd (argv, &options, error))
        return FALSE;
    }

  paddock_terminal_set_window_size (out->pty_master, config->columns, config->rows);

  if (out->took_spare)
    out->cgroup_reason = g_strdup (config->cgroup_reason);
  else
    paddock_executor_make_cgroup (spec, out);
  if (out->cgroup != NULL)
    set_limits (config, out);

  /* The leased sockets. */
  for (guint i = 0; spec->passed_leases != NULL && i < spec->passed_leases->len && i < G_N_ELEMENTS (listen_fds); i++)
    listen_fds[n_listen_fds++] = paddock_lease_get_fd (g_ptr_array_index (spec->passed_leases, i));

  /* Everything the child needs is prepared before the clone: it makes
   * only async-signal-safe calls until it execs. */
  if (out->cgroup != NULL)
    cgroup_dir = open (paddock_cgroup_get_path (out->cgroup), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  /* Its options are in the memfd, never on its command line (which any
   * local user may read): the helper is `paddock-sandbox --options-fd N`. */
  options_fd_text = g_strdup_printf ("%d", paddock_sandbox_fd_options (n_listen_fds));
  exec_argv[0] = g_ptr_array_index (argv, 0);
  exec_argv[1] = PADDOCK_SANDBOX_OPTIONS_FD_ARG;
  exec_argv[2] = options_fd_text;
  agent_child = (AgentChild) {
    .program = out->program,
    .argv = (char **) exec_argv,
    .envp = envp,
    .workspace = config->workspace,
    .pty = slave,
    .listen_fds = listen_fds,
    .n_listen_fds = n_listen_fds,
    .control = control_theirs,
    .seccomp_fd = sandbox_seccomp_fd (),
    .options_fd = options,
  };
  not_held = why_not_held (spec, out->took_spare, &taken);
  self->holdable = not_held == NULL;
  if (not_held != NULL)
    g_debug ("Session %s: a later daemon cannot adopt it (%s): its sandbox ends with this daemon",
             spec->session_id, not_held);
  /* Born in the session's cgroup, so that every process the session will
   * ever have is inside; and sharing our memory until it execs rather
   * than copying it, where this kernel and machine allow
   * (paddock-clone-vm.c). A held one's keeper is born there, and forks
   * the helper. */
  if (out->took_spare && self->keeper != NULL)
    {
      /* Held or not, its keeper is its parent (one not asked to HOLD ends
       * it with us, as ever). */
      out->keeper = self->keeper;
      out->pid = taken.pid;
      out->start_time = paddock_keeper_client_get_start_time (self->keeper);
    }
  else if (not_held == NULL)
    {
      if (!start_held (self, spec, &agent_child, cgroup_dir, out, control, error))
        return FALSE;
    }
  else
    {
      if (out->took_spare)
        pid = taken.pid;
      else
        pid = paddock_clone_child_into_cgroup (cgroup_dir, out->cgroup_procs_fd, sandbox_child_main, &agent_child);
      if (pid < 0)
        {
          int saved_errno = errno;
          g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                       "Could not start the agent: %s", g_strerror (saved_errno));
          return FALSE;
        }

      out->pid = pid;
      out->start_time = paddock_compat_proc_start_time ((guint32) pid);
      self->child_watch = g_child_watch_add (pid, paddock_linux_executor_exited_cb, self);
    }
  /* Running once the sandbox says the agent started. */
  self->channels = paddock_command_channels_new (spec->session_id);
  g_signal_connect (self->channels, "event", G_CALLBACK (channel_event_cb), self);
  paddock_linux_executor_take_control (self, paddock_steal_fd (&control));
  return TRUE;
}

/* The sandbox of a session an earlier daemon ran, under the keeper that
 * held it for us (paddock-keeper-protocol.h, --hold-control-fd): its
 * control socket comes back from the keeper with the terminal, and the
 * events pid 1 sent meanwhile wait there. Commands the earlier daemon
 * started are not ours (their channels went with it): what pid 1 says of
 * them finds no caller. NULL, and the pinned keeper's pidfd not taken,
 * where the keeper would not hand the session over. */
PaddockKeeperClient *
paddock_linux_executor_adopt_agent (PaddockLinuxExecutor  *self,
                                    const char            *session_id,
                                    const char            *hold_dir,
                                    pid_t                  keeper_pid,
                                    int                    keeper_pidfd,
                                    int                   *out_pty_master,
                                    GError               **error)
{
  int control = -1;

  g_return_val_if_fail (PADDOCK_IS_LINUX_EXECUTOR (self), NULL);
  g_return_val_if_fail (self->keeper == NULL && self->link == NULL, NULL);

  self->keeper = paddock_keeper_client_adopt (hold_dir, keeper_pid, keeper_pidfd, out_pty_master, &control,
                                              paddock_linux_executor_keeper_cb, self, error);
  if (self->keeper == NULL)
    return NULL;
  self->holdable = TRUE;
  self->channels = paddock_command_channels_new (session_id);
  g_signal_connect (self->channels, "event", G_CALLBACK (channel_event_cb), self);
  paddock_linux_executor_take_control (self, control);
  return self->keeper;
}

/* Asks pid 1 for the proxy's socket again (a session adopted in none or
 * proxy): it comes as "proxy", with the socket or (none) without. */
gboolean
paddock_linux_executor_request_proxy (PaddockLinuxExecutor  *self,
                                      GError               **error)
{
  PaddockSandboxLink *link;

  g_return_val_if_fail (PADDOCK_IS_LINUX_EXECUTOR (self), FALSE);

  link = get_link (self, error);
  return link != NULL && paddock_sandbox_link_request_proxy (link, error);
}

/* The session's record names the keeper from now on: it may outlive us. */
void
paddock_linux_executor_hold (PaddockLinuxExecutor *self)
{
  g_return_if_fail (PADDOCK_IS_LINUX_EXECUTOR (self));

  if (self->keeper != NULL && self->holdable && !paddock_keeper_client_hold (self->keeper))
    g_debug ("Could not ask the sandbox's keeper to hold it: it ends with the daemon");
}

/* The helper's keeper, while it runs: in the session's cgroup, but not
 * one of the session's processes. */
static GArray *
paddock_linux_executor_helper_pids (PaddockExecutor *executor)
{
  PaddockLinuxExecutor *self = PADDOCK_LINUX_EXECUTOR (executor);
  GArray *pids = g_array_new (FALSE, FALSE, sizeof (pid_t));

  if (self->keeper != NULL && paddock_keeper_client_is_running (self->keeper))
    {
      pid_t pid = paddock_keeper_client_get_keeper_pid (self->keeper);

      g_array_append_val (pids, pid);
    }
  return pids;
}

/* The keeper kills the helper (pid 1 dies with it, and the namespace with
 * pid 1), reaps all of it, then exits. */
static void
paddock_linux_executor_kill_helpers (PaddockExecutor *executor)
{
  PaddockLinuxExecutor *self = PADDOCK_LINUX_EXECUTOR (executor);

  if (self->keeper != NULL)
    paddock_keeper_client_signal (self->keeper, SIGKILL);
}

/* Has SPARE make a sandbox ahead for the next session like this one (its
 * network mode), unless it has one; that session will have the id NEXT_ID
 * (the spare's cgroup has its name already: a cgroup v2 cannot be
 * renamed). */
static void
paddock_linux_executor_refill_spare (PaddockExecutor            *executor,
                                     PaddockSpareSandbox        *spare,
                                     const PaddockSessionConfig *config,
                                     guint16                     proxy_port,
                                     const char                 *next_id,
                                     const char                 *next_dir)
{
  g_autofree char *cgroup_name = g_strconcat ("paddock-session-", next_id, NULL);

  /* Under a keeper for the next session's folder. */
  paddock_spare_sandbox_refill (spare, config->net_mode, proxy_port, sandbox_seccomp_fd (), cgroup_name, next_dir);
}

PaddockExecutor *
paddock_linux_executor_new (void)
{
  return g_object_new (PADDOCK_TYPE_LINUX_EXECUTOR, NULL);
}

/* A helper not reaped yet goes with the daemon (--die-with-parent); a
 * held one runs on under its keeper, for a later daemon (or, not asked to
 * hold yet, the keeper ends it at our end of its socket). */
static void
paddock_linux_executor_dispose (GObject *object)
{
  PaddockLinuxExecutor *self = PADDOCK_LINUX_EXECUTOR (object);

  g_clear_handle_id (&self->child_watch, g_source_remove);
  g_clear_pointer (&self->keeper, paddock_keeper_client_free);
  if (self->channels != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->channels, self);
      paddock_command_channels_clear (self->channels);
      g_clear_object (&self->channels);
    }
  /* Its events find nobody from here on. */
  if (self->link != NULL)
    {
      paddock_sandbox_link_close (self->link);
      g_signal_handlers_disconnect_by_data (self->link, self);
      g_clear_object (&self->link);
    }

  G_OBJECT_CLASS (paddock_linux_executor_parent_class)->dispose (object);
}

static void
paddock_linux_executor_class_init (PaddockLinuxExecutorClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = paddock_linux_executor_dispose;
}

static void
paddock_linux_executor_iface_init (PaddockExecutorInterface *iface)
{
  iface->is_sandboxed = paddock_linux_executor_is_sandboxed;
  iface->adapt_environment = paddock_linux_executor_adapt_environment;
  iface->listen_pid = paddock_linux_executor_listen_pid;
  iface->check_start = paddock_linux_executor_check_start;
  iface->check_program = paddock_linux_executor_check_program;
  iface->start_agent = paddock_linux_executor_start_agent;
  iface->refill_spare = paddock_linux_executor_refill_spare;
  iface->spawn_command = paddock_linux_executor_spawn_command;
  iface->signal_command = paddock_linux_executor_signal_command;
  iface->forget_command = paddock_linux_executor_forget_command;
  iface->request_socket = paddock_linux_executor_request_socket;
  iface->drain_events = paddock_linux_executor_drain_events;
  iface->finish_commands = paddock_linux_executor_finish_commands;
  iface->helper_pids = paddock_linux_executor_helper_pids;
  iface->kill_helpers = paddock_linux_executor_kill_helpers;
}

static void
paddock_linux_executor_init (PaddockLinuxExecutor *self)
{
}
