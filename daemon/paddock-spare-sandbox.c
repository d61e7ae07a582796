/* paddock-spare-sandbox.c — the next safe session's sandbox, made ahead of time
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Most of a safe session's start is the sandbox's, and most of that is
 * the same for every session: paddock-sandbox's exec, the user, mount and
 * PID namespaces (and the network namespace of none and proxy), and the
 * system part of the view. So, as with the spare folder
 * (paddock-spare-folder.c), one is kept ready: `paddock-sandbox --spare`
 * with its terminal, control socket and seccomp program, born in the
 * cgroup of the session that will take it (the manager picks that
 * session's id ahead: a cgroup v2 cannot be renamed), made on the main
 * loop once it is idle after each safe start (none at the daemon's start:
 * the first safe session makes its own). The next session with the same
 * network mode takes it: its options go to pid 1 as one message carrying
 * a sealed memfd (paddock-spare-options.c), and from
 * there on it is that session's sandbox, as if made for it.
 *
 * The spare is only a head start, never the only way to a sandbox: a
 * session it does not fit, or one that finds it gone, makes its own. A
 * spare nobody takes is ended when another kind is wanted, when the
 * session its cgroup is named for does not take it, and when the daemon
 * goes (closing its control socket is enough: pid 1 exits, then the
 * helper), and it dies with the daemon anyway (--die-with-parent); its
 * cgroup is removed once it is reaped (a later daemon removes one a dead
 * daemon left: paddock_manager_impl_restore()).
 *
 * Where the next session's folder is known, the spare is born under a
 * paddock-keeper (--hold-control-fd, paddock-keeper-protocol.h) as a
 * sandbox a later daemon can adopt is: the keeper holds the terminal and
 * our end of the control socket, the helper dies with the keeper, and the
 * keeper ends it with us until its session asks it to HOLD. Ending such a
 * spare is the keeper's KILL, not the end of file (the keeper's copy of
 * the control socket keeps pid 1 from seeing one).
 */

#include "config.h"

#include "paddock-spare-sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-clone-vm.h"
#include "paddock-keeper-client.h"
#include "paddock-mount-changes.h"
#include "paddock-sandbox-host-paths.h"
#include "paddock-sandbox-protocol.h"
#include "paddock-spare-options.h"


/* One spare, from its making until a session takes it or it is ended. */
typedef struct _Spare Spare;
struct _Spare {
  PaddockSpareSandbox *owner;      /* while it is the owner's ready one */
  pid_t                pid;        /* the helper, a child of ours (or of keeper) */
  PaddockKeeperClient *keeper;     /* the helper's parent, or NULL: we are */
  char                *hold_dir;   /* the keeper's: the next session's folder */
  int                  pty_master;
  int                  control;
  PaddockCgroup       *cgroup;
  char                *net_mode;
  guint                watch;      /* its child watch until it is taken or ended */
  int                  mounts;     /* our /proc/self/mountinfo, opened before it was made */
  char                *mounts_then;   /* its text, read before it was made */
  gboolean             mounts_changed;   /* since: seen once, so kept */
};

struct _PaddockSpareSandbox
{
  char  *helper;
  char  *cgroup_parent;
  Spare *ready;                    /* the spare, if one is there */
};

/* What the child of the clone needs, prepared before it (it makes only
 * async-signal-safe calls). */
typedef struct {
  const char  *helper;
  char *const *argv;
  char *const *envp;
  int          pty;
  int          control;
  int          seccomp_fd;
} SpareChild;

/* Frees what is left of a spare whose helper is reaped or handed on. */
static void
spare_free (Spare *spare)
{
  if (spare->watch != 0)
    g_source_remove (spare->watch);
  g_clear_pointer (&spare->keeper, paddock_keeper_client_end);
  g_free (spare->hold_dir);
  paddock_close_fd (&spare->pty_master);
  paddock_close_fd (&spare->control);
  paddock_close_fd (&spare->mounts);
  g_free (spare->mounts_then);
  if (spare->cgroup != NULL)
    paddock_cgroup_remove (spare->cgroup);
  g_clear_pointer (&spare->cgroup, paddock_cgroup_free);
  g_free (spare->net_mode);
  g_free (spare);
}

/* The spare's helper exited before anyone took it (GLib reaped it): its
 * pid 1 went first, so its cgroup is empty and goes too. The next safe
 * start makes its own sandbox. */
static void
spare_exited_cb (GPid     pid,
                 int      status,
                 gpointer user_data)
{
  Spare *spare = user_data;

  g_debug ("The sandbox made ahead (pid %d) ended with wait status %d before a session took it",
           (int) pid, status);
  spare->watch = 0;
  if (spare->owner != NULL && spare->owner->ready == spare)
    spare->owner->ready = NULL;
  spare_free (spare);
}

/* Ends a spare nobody will take, and reaps it: EOF on its control socket
 * makes pid 1 exit, then the helper. Bounded (its pid 1 is our code,
 * waiting in recvmsg(), so this is quick); past the bound it is killed. */
static void
spare_end (Spare *spare)
{
  paddock_autofd int pidfd = -1;
  struct pollfd pfd;
  siginfo_t info = { 0 };
  gboolean killed = FALSE;
  int status;

  if (spare->watch != 0)
    g_source_remove (spare->watch);
  spare->watch = 0;
  paddock_close_fd (&spare->control);
  /* Under a keeper: it kills the helper (pid 1 dies with it), reaps all
   * of it and exits; we reap the keeper. Then the cgroup is empty. */
  if (spare->keeper != NULL)
    {
      g_clear_pointer (&spare->keeper, paddock_keeper_client_end);
      for (guint i = 0; spare->cgroup != NULL && i < 100 && !paddock_cgroup_remove (spare->cgroup); i++)
        g_usleep (10 * 1000);
      spare_free (spare);
      return;
    }
  /* GLib's worker thread reaps a watched child as soon as it exits, before
   * the watch is dispatched here: one reaped so is gone, and its pid may
   * be another process's by now, not ours to signal. Unreaped (WNOWAIT
   * leaves it so), it stays ours: no watch is left to reap it. */
  if (waitid (P_PID, (id_t) spare->pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    {
      spare_free (spare);
      return;
    }
  pidfd = (int) syscall (SYS_pidfd_open, spare->pid, 0);
  pfd = (struct pollfd) { .fd = pidfd, .events = POLLIN };
  if (pidfd < 0 || poll (&pfd, 1, 1000) != 1)
    {
      /* Killed, its pid 1 too: through the cgroup when it has one, since
       * the helper's death reaches pid 1 only as PR_SET_PDEATHSIG, still
       * on its way when the helper is reaped. */
      if (spare->cgroup != NULL)
        paddock_cgroup_kill (spare->cgroup);
      kill (spare->pid, SIGKILL);
      killed = TRUE;
    }
  while (waitpid (spare->pid, &status, 0) < 0 && errno == EINTR)
    ;
  /* Killed, its cgroup empties as they exit: removed once it has (a
   * second at most; spare_free() tries once). */
  for (guint i = 0; killed && spare->cgroup != NULL && i < 100 && !paddock_cgroup_remove (spare->cgroup); i++)
    g_usleep (10 * 1000);
  spare_free (spare);
}

/* The spare's keeper: its helper ended before anyone took it (EXITED),
 * then the keeper went (GONE, last): the spare is no longer there to
 * take, and goes. */
static void
spare_keeper_cb (PaddockKeeperClient      *keeper,
                 PaddockKeeperClientEvent  event,
                 int                       wait_status,
                 gpointer                  user_data)
{
  Spare *spare = user_data;

  if (spare->owner != NULL && spare->owner->ready == spare)
    {
      g_debug ("The sandbox made ahead (pid %d) ended with wait status %d before a session took it",
               (int) spare->pid, wait_status);
      spare->owner->ready = NULL;
    }
  spare->owner = NULL;
  /* Nobody publishes a spare's end: its keeper need not keep it. */
  if (event == PADDOCK_KEEPER_CLIENT_EXITED)
    paddock_keeper_client_release_end (keeper);
  if (event == PADDOCK_KEEPER_CLIENT_GONE)
    {
      /* Freed from its own callback: allowed (paddock-keeper-client.c). */
      paddock_keeper_client_free (g_steal_pointer (&spare->keeper));
      spare_free (spare);
    }
}

/* The spare's helper under a keeper (see the top of this file): the same
 * descriptors at the same slots as spare_child_main() places them. */
static gboolean
spare_spawn_keeper (Spare        *spare,
                    const char   *helper,
                    char        **argv,
                    char        **envp,
                    int           slave,
                    int           control_theirs,
                    int           seccomp_fd,
                    int           cgroup_dir,
                    int           procs,
                    GError      **error)
{
  int pass[3] = { slave, control_theirs, seccomp_fd };
  PaddockKeeperSpawn keeper_spawn = {
    .program = helper,
    .argv = argv,
    .envp = envp,
    .cwd = "/",
    .stdio = { slave, slave, slave },
    .pass_fds = pass,
    .n_pass_fds = seccomp_fd >= 0 ? 3 : 2,
    .cgroup_dir = cgroup_dir,
    .cgroup_procs_fd = procs,
    .hold_fd = spare->pty_master,
    .hold_dir = spare->hold_dir,
    .hold_control_fd = spare->control,
  };

  spare->keeper = paddock_keeper_client_spawn (&keeper_spawn, spare_keeper_cb, spare, error);
  if (spare->keeper == NULL)
    return FALSE;
  spare->pid = paddock_keeper_client_get_pid (spare->keeper);
  return TRUE;
}

static int
spare_child_main (void *data)
{
  const SpareChild *c = data;
  int pty_high;
  int control_high;
  int seccomp_high;

  /* As sandbox_child_main() in paddock-session-impl.c: stdio and FD_PTY
   * the terminal, FD_CONTROL the control socket, then the seccomp program
   * (a spare has no leased sockets): paddock-sandbox-protocol.h. */
  pty_high = fcntl (c->pty, F_DUPFD, 10);
  control_high = fcntl (c->control, F_DUPFD, 10);
  seccomp_high = c->seccomp_fd >= 0 ? fcntl (c->seccomp_fd, F_DUPFD, 10) : -1;

  prctl (PR_SET_PDEATHSIG, SIGKILL);
  if (setsid () < 0 || pty_high < 0 || control_high < 0 ||
      dup2 (pty_high, 0) < 0 || dup2 (pty_high, 1) < 0 || dup2 (pty_high, 2) < 0 ||
      dup2 (pty_high, PADDOCK_SANDBOX_FD_PTY) < 0 || dup2 (control_high, PADDOCK_SANDBOX_FD_CONTROL) < 0 ||
      (c->seccomp_fd >= 0 && (seccomp_high < 0 || dup2 (seccomp_high, paddock_sandbox_fd_seccomp (0)) < 0)))
    _exit (126);
  syscall (SYS_close_range, (unsigned int) paddock_sandbox_fd_seccomp (0) + (c->seccomp_fd >= 0 ? 1U : 0U), ~0U, 0U);
  if (chdir ("/") < 0)
    _exit (126);
  execve (c->helper, c->argv, c->envp);
  _exit (127);
}

PaddockSpareSandbox *
paddock_spare_sandbox_new (const char *helper,
                           const char *cgroup_parent)
{
  PaddockSpareSandbox *self = g_new0 (PaddockSpareSandbox, 1);

  self->helper = g_strdup (helper);
  self->cgroup_parent = g_strdup (cgroup_parent);
  return self;
}

/* Makes a spare for sessions of NET_MODE, unless one is there. On the
 * main thread: the helper dies with the thread that made it. A spare that
 * cannot be made is no error (a session makes its own sandbox then). */
void
paddock_spare_sandbox_refill (PaddockSpareSandbox *self,
                              const char          *net_mode,
                              guint16              proxy_port,
                              int                  seccomp_fd,
                              const char          *cgroup_name,
                              const char          *hold_dir)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_auto(GStrv) envp = g_environ_setenv (NULL, "PATH", "/usr/sbin:/usr/bin:/sbin:/bin", TRUE);
  g_autoptr(GError) error = NULL;
  paddock_autofd int master = -1;
  paddock_autofd int slave = -1;
  paddock_autofd int cgroup_dir = -1;
  paddock_autofd int procs = -1;
  int pair[2] = { -1, -1 };
  char slave_name[128];
  SpareChild child;
  Spare *spare;

  g_return_if_fail (self != NULL);

  if (self->ready != NULL && g_strcmp0 (self->ready->net_mode, net_mode) == 0)
    return;
  if (self->ready != NULL)
    spare_end (g_steal_pointer (&self->ready));

  spare = g_new0 (Spare, 1);
  spare->pty_master = -1;
  spare->control = -1;
  spare->net_mode = g_strdup (net_mode);
  /* Before its namespace copies ours: see spare_view_is_stale(). The
   * watch first, then the text: a change between the two is in both the
   * text and the copy, and only makes the watch fire. */
  spare->mounts = open ("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  if (spare->mounts < 0 || !g_file_get_contents ("/proc/self/mountinfo", &spare->mounts_then, NULL, &error))
    {
      g_debug ("No sandbox made ahead: cannot watch our mounts: %s",
               error != NULL ? error->message : g_strerror (errno));
      spare_free (spare);
      return;
    }

  master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || grantpt (master) != 0 || unlockpt (master) != 0 ||
      ptsname_r (master, slave_name, sizeof slave_name) != 0 ||
      (slave = open (slave_name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0 ||
      socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    {
      g_debug ("No sandbox made ahead: no terminal or socket for it: %s", g_strerror (errno));
      spare_free (spare);
      return;
    }
  spare->control = pair[0];

  if (self->cgroup_parent != NULL)
    {
      spare->cgroup = paddock_cgroup_new (self->cgroup_parent, cgroup_name, &error);
      if (spare->cgroup != NULL)
        {
          procs = paddock_cgroup_open_procs (spare->cgroup, &error);
          cgroup_dir = open (paddock_cgroup_get_path (spare->cgroup), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        }
      if (spare->cgroup == NULL || procs < 0 || cgroup_dir < 0)
        {
          /* A session would have one: without it the spare fits none. */
          g_debug ("No sandbox made ahead: %s", error != NULL ? error->message : g_strerror (errno));
          close (pair[1]);
          spare_free (spare);
          return;
        }
    }

  g_ptr_array_add (argv, g_strdup (self->helper));
  g_ptr_array_add (argv, g_strdup ("--spare"));
  g_ptr_array_add (argv, g_strdup ("--pty-fd"));
  g_ptr_array_add (argv, g_strdup_printf ("%d", PADDOCK_SANDBOX_FD_PTY));
  g_ptr_array_add (argv, g_strdup ("--control-fd"));
  g_ptr_array_add (argv, g_strdup_printf ("%d", PADDOCK_SANDBOX_FD_CONTROL));
  if (seccomp_fd >= 0)
    {
      g_ptr_array_add (argv, g_strdup ("--seccomp-fd"));
      g_ptr_array_add (argv, g_strdup_printf ("%d", paddock_sandbox_fd_seccomp (0)));
    }
  g_ptr_array_add (argv, g_strdup ("--net"));
  g_ptr_array_add (argv, g_strdup (net_mode));
  if (g_strcmp0 (net_mode, "proxy") == 0)
    {
      g_ptr_array_add (argv, g_strdup ("--proxy-port"));
      g_ptr_array_add (argv, g_strdup_printf ("%u", proxy_port));
    }
  g_ptr_array_add (argv, g_strdup ("--die-with-parent"));
  g_ptr_array_add (argv, NULL);

  /* Under a keeper where the next session's folder is known and the
   * keeper there (a later daemon adopts the session it becomes). The
   * master is the spare's before the keeper gets its copy. */
  if (hold_dir != NULL && paddock_keeper_client_find () != NULL)
    {
      spare->hold_dir = g_strdup (hold_dir);
      spare->pty_master = paddock_steal_fd (&master);
      if (!spare_spawn_keeper (spare, self->helper, (char **) argv->pdata, envp, slave, pair[1],
                               seccomp_fd, cgroup_dir, procs, &error))
        {
          g_debug ("No sandbox made ahead: %s", error->message);
          close (pair[1]);
          spare_free (spare);
          return;
        }
      close (pair[1]);
      spare->owner = self;
      self->ready = spare;
      return;
    }

  child = (SpareChild) {
    .helper = self->helper,
    .argv = (char **) argv->pdata,
    .envp = envp,
    .pty = slave,
    .control = pair[1],
    .seccomp_fd = seccomp_fd,
  };
  spare->pid = paddock_clone_child_into_cgroup (cgroup_dir, procs, spare_child_main, &child);
  close (pair[1]);
  if (spare->pid < 0)
    {
      g_debug ("No sandbox made ahead: %s", g_strerror (errno));
      spare->pid = 0;
      spare_free (spare);
      return;
    }
  spare->pty_master = paddock_steal_fd (&master);
  spare->owner = self;
  spare->watch = g_child_watch_add (spare->pid, spare_exited_cb, spare);
  self->ready = spare;
}

/* Whether a mount was made, removed or changed in our mount namespace
 * since SPARE was made. The kernel marks the mountinfo file we opened
 * before then on any change (POLLPRI), once: kept here. */
static gboolean
spare_mounts_changed (Spare *spare)
{
  struct pollfd pfd = { .fd = spare->mounts, .events = POLLPRI };

  if (!spare->mounts_changed && poll (&pfd, 1, 0) != 0)
    spare->mounts_changed = TRUE;
  return spare->mounts_changed;
}

/* Whether SPARE's view would differ from that of a sandbox made now for
 * a session of SESSION_ARGS. Its pid 1 reads the session's paths in its
 * copy of our mounts, taken when it was made, and sees no later change
 * unless the host's mounts propagate (shared; they often are private, in
 * a container): a workspace mounted since would be the empty folder
 * beneath. But most changes are elsewhere (a container, a disk, another
 * daemon's work; on a busy host, one every few seconds), and the view's
 * binds are not recursive: such a change is in neither view, and passing
 * the spare over for it would cost every start on that host its head
 * start. So a change counts when it is on the way to, or below, a path
 * the view shows: the system's, /etc's and every path in the session's
 * options (paddock-mount-changes.c). */
static gboolean
spare_view_is_stale (Spare              *spare,
                     const char * const *session_args)
{
  static const char *const system_dirs[] = { PADDOCK_SANDBOX_SYSTEM_DIRS };
  static const char *const dev_nodes[] = { PADDOCK_SANDBOX_DEV_NODES };
  static const char *const etc_files[] = { PADDOCK_SANDBOX_ETC_FILES };
  g_autoptr(GPtrArray) paths = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *now = NULL;
  g_autofree char *changed = NULL;
  const char *real_home = NULL;

  if (!spare_mounts_changed (spare))
    return FALSE;
  if (!g_file_get_contents ("/proc/self/mountinfo", &now, NULL, &error))
    {
      g_debug ("The sandbox made ahead cannot be compared with our mounts now: %s", error->message);
      return TRUE;
    }
  paths = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < G_N_ELEMENTS (system_dirs); i++)
    paddock_mount_changes_add_paths_in (paths, system_dirs[i]);
  for (guint i = 0; i < G_N_ELEMENTS (dev_nodes); i++)
    {
      g_autofree char *node = g_strconcat ("/dev/", dev_nodes[i], NULL);
      paddock_mount_changes_add_paths_in (paths, node);
    }
  /* Its console: the terminal's name under /dev/pts. */
  paddock_mount_changes_add_paths_in (paths, "/dev/pts");
  for (guint i = 0; i < G_N_ELEMENTS (etc_files); i++)
    paddock_mount_changes_add_paths_in (paths, etc_files[i]);
  for (guint i = 0; session_args[i] != NULL; i++)
    {
      paddock_mount_changes_add_paths_in (paths, session_args[i]);
      if (g_str_equal (session_args[i], "--real-home") && session_args[i + 1] != NULL)
        real_home = session_args[i + 1];
    }
  /* An exposed path is named relative to the real home: where it is, and
   * where a symlink there leads. */
  for (guint i = 0; real_home != NULL && session_args[i] != NULL; i++)
    if (g_str_equal (session_args[i], "--expose") && session_args[i + 1] != NULL)
      {
        g_autofree char *exposed = g_build_filename (real_home, session_args[i + 1], NULL);
        paddock_mount_changes_add_paths_in (paths, exposed);
      }
  g_ptr_array_add (paths, NULL);

  changed = paddock_mount_changes_find_affecting (spare->mounts_then, now, (const char * const *) paths->pdata);
  if (changed == NULL)
    return FALSE;
  g_debug ("The sandbox made ahead predates a change of our mounts at %s; this session makes its own", changed);
  return TRUE;
}

/* Whether there is a spare for sessions of NET_MODE (it may still turn
 * out to be gone, or its view out of date, when taken). */
gboolean
paddock_spare_sandbox_fits (PaddockSpareSandbox *self,
                            const char          *net_mode)
{
  g_return_val_if_fail (self != NULL, FALSE);

  return self->ready != NULL && g_strcmp0 (self->ready->net_mode, net_mode) == 0;
}

/* Ends the spare, if there is one: the session its cgroup was named for
 * did not take it. */
void
paddock_spare_sandbox_discard (PaddockSpareSandbox *self)
{
  g_return_if_fail (self != NULL);

  if (self->ready != NULL)
    spare_end (g_steal_pointer (&self->ready));
}

/* Hands the spare, if there is one for NET_MODE and it is alive, to a
 * session (the one its cgroup is named for): SESSION_ARGS (the helper's
 * options for the session, without those fixed when it was made) go to
 * its pid 1. FALSE: no spare fits, or it is gone; the session makes its
 * own sandbox. Either way nothing of this spare is left to take. */
gboolean
paddock_spare_sandbox_take (PaddockSpareSandbox      *self,
                            const char               *net_mode,
                            const char * const       *session_args,
                            PaddockSpareSandboxTaken *out)
{
  Spare *spare;
  siginfo_t info = { 0 };
  struct pollfd pfd;
  int err;

  g_return_val_if_fail (self != NULL, FALSE);

  if (self->ready == NULL || g_strcmp0 (self->ready->net_mode, net_mode) != 0)
    return FALSE;
  spare = g_steal_pointer (&self->ready);
  spare->owner = NULL;

  /* Ours from here: no watch may reap it behind the session's back. Then
   * alive, still ours to reap (WNOWAIT leaves a dead one for spare_end),
   * and its pid 1 waiting, not gone nor saying anything. */
  pfd = (struct pollfd) { .fd = spare->control, .events = POLLIN };
  if (spare->keeper != NULL)
    {
      /* Its keeper reaps it: alive for as long as the keeper told no end.
       * Its events are the session's from here (the caller's to set). */
      paddock_keeper_client_set_func (spare->keeper, NULL, NULL);
      if (paddock_keeper_client_has_exited (spare->keeper))
        info.si_pid = spare->pid;
    }
  else
    {
      g_source_remove (spare->watch);
      spare->watch = 0;
      if (waitid (P_PID, (id_t) spare->pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0)
        {
          /* Reaped already (a watch that ran just before): nothing to wait for. */
          g_debug ("The sandbox made ahead is gone; this session makes its own");
          spare_free (spare);
          return FALSE;
        }
    }
  if (info.si_pid != 0 || poll (&pfd, 1, 0) != 0)
    {
      g_debug ("The sandbox made ahead is gone; this session makes its own");
      spare_end (spare);
      return FALSE;
    }
  if (spare_view_is_stale (spare, session_args))
    {
      spare_end (spare);
      return FALSE;
    }

  err = paddock_spare_options_send (spare->control, session_args);
  if (err != 0)
    {
      g_debug ("The sandbox made ahead could not be given its session: %s", g_strerror (err));
      spare_end (spare);
      return FALSE;
    }

  *out = (PaddockSpareSandboxTaken) {
    .pid = spare->pid,
    .pty_master = paddock_steal_fd (&spare->pty_master),
    .control = paddock_steal_fd (&spare->control),
    .cgroup = g_steal_pointer (&spare->cgroup),
    .keeper = g_steal_pointer (&spare->keeper),
    .hold_dir = g_steal_pointer (&spare->hold_dir),
  };
  /* What is left is ours alone: the mounts watch was only for staleness. */
  spare_free (spare);
  return TRUE;
}

/* Ends the spare, if any (the daemon goes). */
void
paddock_spare_sandbox_free (PaddockSpareSandbox *self)
{
  if (self == NULL)
    return;
  if (self->ready != NULL)
    spare_end (g_steal_pointer (&self->ready));
  g_free (self->helper);
  g_free (self->cgroup_parent);
  g_free (self);
}

