/* paddock-keeper-client.c — a host-profile program under its paddock-keeper
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The daemon's side of daemon/keeper/paddock-keeper-protocol.h: starts the
 * keeper (born in the session's cgroup where there is one), waits for the
 * program's pid, then relays its exit and the keeper's own, and asks the
 * keeper to signal or end the program's tree. The keeper is a child of the
 * daemon until reaped here, so its pid names it for as long as
 * paddock_keeper_client_get_keeper_pid() returns it.
 */

#include "config.h"

#include "paddock-keeper-client.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-clone-vm.h"
#include "paddock-error.h"
#include "paddock-fdpass.h"
#include "paddock-keeper-protocol.h"

/* A fork and an exec of a small program: milliseconds. Bounded all the
 * same: the daemon's main loop waits for it. */
#define STARTED_TIMEOUT_MS  (10 * 1000)
#define MAX_PASS_FDS        64
/* A keeper answers a connect at once; bounded, for a hung one. */
#define ADOPT_TIMEOUT_MS    2000

struct _PaddockKeeperClient
{
  pid_t                    keeper_pid;   /* 0 once reaped */
  pid_t                    pid;          /* the program's */
  guint64                  start_time;
  int                      control;
  guint                    control_source;
  guint                    child_watch;
  int                      keeper_pidfd;   /* adopted: the keeper is not our child; else -1 */
  guint                    pidfd_source;
  gboolean                 exited;       /* EXITED told */
  gboolean                 held;         /* HELD: the keeper listens, and keeps an end until RELEASE */
  gboolean                 end_kept;     /* EXITED came after HELD, and no KILL was asked */
  gboolean                 exit_told;    /* by an EXITED (not by the keeper's own end) */
  gboolean                 released;     /* RELEASE sent */
  gboolean                 killing;      /* KILL asked: once is enough */
  guint                    depth;        /* in a callback of ours */
  gboolean                 free_pending; /* freed from one: freed on the way out */
  PaddockKeeperClientFunc  func;
  gpointer                 user_data;
};

/* What the child that execs the keeper reads, prepared before the clone. */
typedef struct
{
  const char  *keeper;
  char       **argv;
  char       **envp;
  int          sources[3 + MAX_PASS_FDS + 3];  /* stdio, passed fds, control, held PTY, held control */
  guint        n_sources;
} KeeperChild;

static char *
find_keeper (void)
{
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *exe_dir = exe != NULL ? g_path_get_dirname (exe) : NULL;
  g_autofree char *beside = exe_dir != NULL ? g_build_filename (exe_dir, PADDOCK_KEEPER_NAME, NULL) : NULL;
  g_autofree char *beside_sub = exe_dir != NULL ? g_build_filename (exe_dir, "keeper", PADDOCK_KEEPER_NAME, NULL) : NULL;
  g_autofree char *installed = g_build_filename (PADDOCK_LIBEXECDIR, PADDOCK_KEEPER_NAME, NULL);
  const char *candidates[] = { beside, beside_sub, installed };

  /* As paddock-sandbox is found: next to our own executable first (the
   * build tree, or a relocated install), then libexecdir. */
  for (guint i = 0; i < G_N_ELEMENTS (candidates); i++)
    if (candidates[i] != NULL && g_file_test (candidates[i], G_FILE_TEST_IS_EXECUTABLE))
      return g_strdup (candidates[i]);
  return NULL;
}

/* The keeper's path, or NULL when it was not found. Looked for once. */
const char *
paddock_keeper_client_find (void)
{
  static char *keeper;
  static gsize found_once;

  if (g_once_init_enter (&found_once))
    {
      keeper = find_keeper ();
      g_once_init_leave (&found_once, 1);
    }
  return keeper;
}

/* Async-signal-safe: it may share the daemon's memory (paddock-clone-vm.c).
 * Its own session, with no terminal: a terminal the daemon runs in cannot
 * signal it; the program gets the one meant for it. */
static int
keeper_child_main (void *data)
{
  const KeeperChild *c = data;
  int high[G_N_ELEMENTS (c->sources)];
  int above = (int) c->n_sources;

  /* Above every place they go first, then each to its place. */
  for (guint i = 0; i < c->n_sources; i++)
    if ((high[i] = fcntl (c->sources[i], F_DUPFD, above)) < 0)
      _exit (126);
  if (setsid () < 0)
    _exit (126);
  for (guint i = 0; i < c->n_sources; i++)
    if (dup2 (high[i], (int) i) < 0)
      _exit (126);
  syscall (SYS_close_range, (unsigned) above, ~0U, 0U);
  execve (c->keeper, c->argv, c->envp);
  _exit (127);
}

static gboolean
keeper_receive (PaddockKeeperClient *self,
                PaddockKeeperEvent  *event,
                gboolean            *out_closed)
{
  ssize_t n;

  *out_closed = FALSE;
  /* A keeper that exits with a request of ours unread makes the socket
   * report ECONNRESET once, ahead of what it sent before it went (its
   * EXITED): that is still there to read. */
  for (guint resets = 0;; )
    {
      size_t n_fds = 0;

      n = paddock_fdpass_recv (self->control, event, sizeof *event, NULL, 0, &n_fds, MSG_DONTWAIT);
      if (n < 0 && (errno == EINTR || (errno == ECONNRESET && resets++ < 4)))
        continue;
      /* An event longer than ours, or with fds, is no event: dropped whole
       * (paddock-fdpass.h), never read by its first bytes. */
      if (n < 0 && (errno == EMSGSIZE || errno == ETOOMANYREFS))
        continue;
      break;
    }
  if (n < 0 && errno == EAGAIN)
    return FALSE;
  if (n != (ssize_t) sizeof *event)
    {
      *out_closed = TRUE;
      return FALSE;
    }
  return TRUE;
}

/* FUNC may free the client: that waits until our callback returns
 * (keeper_leave()), and nothing more is told. */
static void
keeper_tell (PaddockKeeperClient      *self,
             PaddockKeeperClientEvent  event,
             int                       wait_status)
{
  if (self->func != NULL)
    self->func (self, event, wait_status, self->user_data);
}

static void
keeper_tell_exited (PaddockKeeperClient *self,
                    int                  wait_status)
{
  if (self->exited)
    return;
  self->exited = TRUE;
  keeper_tell (self, PADDOCK_KEEPER_CLIENT_EXITED, wait_status);
}

static void
keeper_leave (PaddockKeeperClient *self)
{
  if (--self->depth == 0 && self->free_pending)
    g_free (self);
}

/* Reads what the keeper said; FALSE once it can say nothing more. */
static gboolean
keeper_drain (PaddockKeeperClient *self)
{
  PaddockKeeperEvent event;
  gboolean closed = FALSE;

  while (self->control >= 0 && keeper_receive (self, &event, &closed))
    {
      if (event.type == PADDOCK_KEEPER_HELD)
        {
          self->held = TRUE;
          /* Held after it told the end (asked HOLD once the record that
           * names it was on disk): it keeps that end from now on. */
          if (self->exited && self->exit_told && !self->released && !self->killing)
            {
              self->end_kept = TRUE;
              keeper_tell (self, PADDOCK_KEEPER_CLIENT_KEPT, 0);
            }
        }
      else if (event.type == PADDOCK_KEEPER_EXITED && event.pid == self->pid)
        {
          /* The keeper keeps it exactly then (paddock-keeper-protocol.h). */
          self->end_kept = self->held && !self->killing && !self->exited;
          self->exit_told = !self->exited;
          keeper_tell_exited (self, event.status);
        }
    }
  if (closed)
    {
      g_clear_handle_id (&self->control_source, g_source_remove);
      paddock_close_fd (&self->control);
    }
  return !closed;
}

static gboolean
keeper_control_cb (int          fd,
                   GIOCondition condition,
                   gpointer     user_data)
{
  PaddockKeeperClient *self = user_data;
  gboolean more;

  self->depth++;
  more = keeper_drain (self);
  keeper_leave (self);
  /* Otherwise keeper_drain() (or a free) removed this source already. */
  return more ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static void
keeper_exited_cb (GPid     pid,
                  int      wait_status,
                  gpointer user_data)
{
  PaddockKeeperClient *self = user_data;

  self->depth++;
  self->child_watch = 0;
  self->keeper_pid = 0;
  g_spawn_close_pid (pid);
  /* What it said before it went comes first; a keeper killed before it
   * could report leaves its own status as the program's end. */
  keeper_drain (self);
  if (!self->exited)
    g_message ("paddock-keeper %d ended (status 0x%x) before its program %d did",
               (int) pid, (unsigned) wait_status, (int) self->pid);
  keeper_tell_exited (self, wait_status);
  keeper_tell (self, PADDOCK_KEEPER_CLIENT_GONE, wait_status);
  keeper_leave (self);
}

/* Waits (bounded) for the keeper's first word: the program's pid. */
static gboolean
keeper_wait_started (PaddockKeeperClient  *self,
                     GError              **error)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) STARTED_TIMEOUT_MS * 1000;
  PaddockKeeperEvent event;
  gboolean closed = FALSE;

  for (;;)
    {
      struct pollfd pfd = { .fd = self->control, .events = POLLIN, .revents = 0 };
      gint64 left_ms = (deadline - g_get_monotonic_time ()) / 1000;
      int ready;

      if (left_ms <= 0)
        {
          g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                       "paddock-keeper did not start the program within %d s", STARTED_TIMEOUT_MS / 1000);
          return FALSE;
        }
      ready = poll (&pfd, 1, (int) left_ms);
      if (ready < 0 && errno == EINTR)
        continue;
      if (ready <= 0)
        continue;
      if (keeper_receive (self, &event, &closed))
        break;
      if (closed)
        {
          g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                       "paddock-keeper ended before it started the program");
          return FALSE;
        }
    }

  if (event.type == PADDOCK_KEEPER_FAILED)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "paddock-keeper could not start the program: %s", g_strerror (event.error));
      return FALSE;
    }
  if (event.type != PADDOCK_KEEPER_STARTED || event.pid <= 0)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "paddock-keeper said %u, not that the program started", event.type);
      return FALSE;
    }
  self->pid = event.pid;
  self->start_time = event.start_time;
  return TRUE;
}

/* Starts SPAWN's program under a keeper of its own; returns once the
 * program's pid is known (it runs, or has exited already and EXITED
 * follows). FUNC is called from the main loop. */
PaddockKeeperClient *
paddock_keeper_client_spawn (const PaddockKeeperSpawn *spawn,
                             PaddockKeeperClientFunc   func,
                             gpointer                  user_data,
                             GError                  **error)
{
  g_autoptr(PaddockKeeperClient) self = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  paddock_autofd int theirs = -1;
  const char *keeper = paddock_keeper_client_find ();
  KeeperChild child = { 0, };
  int pair[2];
  pid_t pid;

  g_return_val_if_fail (spawn->n_pass_fds <= MAX_PASS_FDS, NULL);

  /* The host profile's teardown counts on it: no program runs without. */
  if (keeper == NULL)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
                   PADDOCK_KEEPER_NAME " was not found next to paddockd or in libexecdir, so "
                   "nothing could hold what the program forks");
      return NULL;
    }
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "Could not make the keeper's control socket: %s", g_strerror (saved_errno));
      return NULL;
    }

  self = g_new0 (PaddockKeeperClient, 1);
  self->keeper_pidfd = -1;
  self->control = pair[0];
  theirs = pair[1];
  self->func = func;
  self->user_data = user_data;

  g_ptr_array_add (argv, g_strdup (keeper));
  g_ptr_array_add (argv, g_strdup ("--control-fd"));
  g_ptr_array_add (argv, g_strdup_printf ("%u", 3 + spawn->n_pass_fds));
  if (spawn->hold_dir != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("--hold-fd"));
      g_ptr_array_add (argv, g_strdup_printf ("%u", 3 + spawn->n_pass_fds + 1));
      g_ptr_array_add (argv, g_strdup ("--hold-dir"));
      g_ptr_array_add (argv, g_strdup (spawn->hold_dir));
      if (spawn->hold_control_fd >= 0)
        {
          g_ptr_array_add (argv, g_strdup ("--hold-control-fd"));
          g_ptr_array_add (argv, g_strdup_printf ("%u", 3 + spawn->n_pass_fds + 2));
        }
      /* Either way held only once the record names the keeper
       * (paddock_keeper_client_hold()). */
      else
        g_ptr_array_add (argv, g_strdup ("--hold-on-request"));
    }
  g_ptr_array_add (argv, g_strdup ("--pass-fds"));
  g_ptr_array_add (argv, g_strdup_printf ("%u", spawn->n_pass_fds));
  if (spawn->cwd != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("--cwd"));
      g_ptr_array_add (argv, g_strdup (spawn->cwd));
    }
  if (spawn->tty)
    g_ptr_array_add (argv, g_strdup ("--tty"));
  if (spawn->listen_pid)
    g_ptr_array_add (argv, g_strdup ("--listen-pid"));
  if (spawn->end_with_daemon)
    g_ptr_array_add (argv, g_strdup ("--end-with-daemon"));
  g_ptr_array_add (argv, g_strdup ("--"));
  g_ptr_array_add (argv, g_strdup (spawn->program));
  for (guint i = 0; spawn->argv[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (spawn->argv[i]));
  g_ptr_array_add (argv, NULL);

  child.keeper = keeper;
  child.argv = (char **) argv->pdata;
  child.envp = spawn->envp;
  for (guint i = 0; i < 3; i++)
    child.sources[child.n_sources++] = spawn->stdio[i];
  for (guint i = 0; i < spawn->n_pass_fds; i++)
    child.sources[child.n_sources++] = spawn->pass_fds[i];
  child.sources[child.n_sources++] = theirs;
  if (spawn->hold_dir != NULL)
    child.sources[child.n_sources++] = spawn->hold_fd;
  if (spawn->hold_dir != NULL && spawn->hold_control_fd >= 0)
    child.sources[child.n_sources++] = spawn->hold_control_fd;

  pid = paddock_clone_child_into_cgroup (spawn->cgroup_dir, spawn->cgroup_procs_fd, keeper_child_main, &child);
  if (pid < 0)
    {
      int saved_errno = errno;

      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "Could not start " PADDOCK_KEEPER_NAME ": %s", g_strerror (saved_errno));
      return NULL;
    }
  self->keeper_pid = pid;
  /* Ours closed, so that the keeper's end is the only one: its exit is an
   * end of file here. */
  paddock_close_fd (&theirs);

  if (!keeper_wait_started (self, error))
    {
      /* It said nothing in time (or failed): asked to end what it may
       * hold, and killed. A program it forked but did not report in 10 s
       * would outlive it; the session does not start either way. */
      PaddockKeeperRequest request = { .type = PADDOCK_KEEPER_KILL };

      send (self->control, &request, sizeof request, MSG_NOSIGNAL | MSG_DONTWAIT);
      kill (pid, SIGKILL);
      while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
        ;
      self->keeper_pid = 0;
      return NULL;
    }

  self->child_watch = g_child_watch_add (pid, keeper_exited_cb, self);
  self->control_source = g_unix_fd_add (self->control, G_IO_IN | G_IO_HUP | G_IO_ERR, keeper_control_cb, self);
  return g_steal_pointer (&self);
}

/* An adopted keeper is no child of ours: its end is its pidfd's. What it
 * said before it went comes first; one that went without a word leaves
 * the program's end unknown (PADDOCK_KEEPER_CLIENT_STATUS_UNKNOWN). */
static gboolean
keeper_pidfd_cb (int          fd,
                 GIOCondition condition,
                 gpointer     user_data)
{
  PaddockKeeperClient *self = user_data;

  self->depth++;
  self->pidfd_source = 0;
  self->keeper_pid = 0;
  keeper_drain (self);
  if (!self->exited)
    g_message ("paddock-keeper (adopted) ended before its program %d did", (int) self->pid);
  keeper_tell_exited (self, PADDOCK_KEEPER_CLIENT_STATUS_UNKNOWN);
  keeper_tell (self, PADDOCK_KEEPER_CLIENT_GONE, PADDOCK_KEEPER_CLIENT_STATUS_UNKNOWN);
  keeper_leave (self);
  return G_SOURCE_REMOVE;
}

/* Whether @fd is a socket of @type. */
static gboolean
fd_is_socket (int fd,
              int type)
{
  int got = 0;
  socklen_t len = sizeof got;

  return getsockopt (fd, SOL_SOCKET, SO_TYPE, &got, &len) == 0 && got == type;
}

/* Takes over a keeper an earlier daemon left (paddock-keeper-protocol.h,
 * --hold-dir): @keeper_pid, pinned by the caller with @keeper_pidfd (taken
 * on success), listening in @hold_dir. Only that very keeper is believed
 * (its socket's peer must be @keeper_pid, of our uid), and only what it
 * hands over as said: an ADOPTED event with a SEQPACKET socket and a
 * terminal, and with @out_sandbox_control (a sandboxed session's keeper,
 * --hold-control-fd) a second SEQPACKET socket, nothing else. Returns the
 * client, the PTY master and that socket. */
PaddockKeeperClient *
paddock_keeper_client_adopt (const char               *hold_dir,
                             pid_t                     keeper_pid,
                             int                       keeper_pidfd,
                             int                      *out_pty_master,
                             int                      *out_sandbox_control,
                             PaddockKeeperClientFunc   func,
                             gpointer                  user_data,
                             GError                  **error)
{
  size_t n_expected = out_sandbox_control != NULL ? 3 : 2;
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  g_autofree char *path = g_build_filename (hold_dir, PADDOCK_KEEPER_SOCKET, NULL);
  paddock_autofd int sock = -1;
  PaddockKeeperEvent event = { 0, };
  struct ucred cred;
  socklen_t cred_len = sizeof cred;
  int fds[PADDOCK_FDPASS_MAX_FDS];
  size_t n_fds = 0;
  gint64 deadline = g_get_monotonic_time () + (gint64) ADOPT_TIMEOUT_MS * 1000;
  ssize_t n = -1;
  PaddockKeeperClient *self;

  g_return_val_if_fail (keeper_pid > 0 && keeper_pidfd >= 0, NULL);

  if (strlen (path) >= sizeof addr.sun_path)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED, "The keeper's socket path is too long");
      return NULL;
    }
  strcpy (addr.sun_path, path);
  sock = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (sock < 0 || connect (sock, (struct sockaddr *) &addr, sizeof addr) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "Could not reach the session's keeper: %s", g_strerror (saved_errno));
      return NULL;
    }
  /* The keeper we pinned, not whoever bound that path since. */
  if (getsockopt (sock, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0 || cred_len != sizeof cred ||
      cred.pid != keeper_pid || cred.uid != getuid ())
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_ACCESS_DENIED,
                   "The session's socket is not its keeper's (pid %d, uid %u)",
                   (int) cred.pid, (unsigned) cred.uid);
      return NULL;
    }

  for (;;)
    {
      struct pollfd pfd = { .fd = sock, .events = POLLIN, .revents = 0 };
      gint64 left_ms = (deadline - g_get_monotonic_time ()) / 1000;

      if (left_ms <= 0)
        break;
      if (poll (&pfd, 1, (int) left_ms) < 0 && errno != EINTR)
        break;
      if (pfd.revents == 0)
        continue;
      n = paddock_fdpass_recv (sock, &event, sizeof event, fds, G_N_ELEMENTS (fds), &n_fds, MSG_DONTWAIT);
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      break;
    }
  if (n != (ssize_t) sizeof event || event.type != PADDOCK_KEEPER_ADOPTED || event.pid <= 0 ||
      n_fds != n_expected || !fd_is_socket (fds[0], SOCK_SEQPACKET) || !isatty (fds[1]) ||
      (n_expected == 3 && !fd_is_socket (fds[2], SOCK_SEQPACKET)))
    {
      paddock_fdpass_close_all (fds, n_fds);
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "The session's keeper did not hand it over (%zd bytes, %zu fds)", n, n_fds);
      return NULL;
    }

  self = g_new0 (PaddockKeeperClient, 1);
  self->keeper_pid = keeper_pid;
  self->keeper_pidfd = keeper_pidfd;
  self->pid = event.pid;
  self->start_time = event.start_time;
  self->control = fds[0];
  self->func = func;
  self->user_data = user_data;
  self->pidfd_source = g_unix_fd_add (keeper_pidfd, G_IO_IN | G_IO_HUP | G_IO_ERR, keeper_pidfd_cb, self);
  self->control_source = g_unix_fd_add (self->control, G_IO_IN | G_IO_HUP | G_IO_ERR, keeper_control_cb, self);
  *out_pty_master = fds[1];
  if (out_sandbox_control != NULL)
    *out_sandbox_control = fds[2];
  return self;
}

/* The wait status a keeper left in @hold_dir for us (its program's end
 * while no daemon was there), read once: the file goes. Only a status a
 * waitpid() can give, an exit or a signal, is believed. */
gboolean
paddock_keeper_client_read_exit (const char *hold_dir,
                                 int        *out_wait_status)
{
  g_autofree char *path = g_build_filename (hold_dir, PADDOCK_KEEPER_EXIT_FILE, NULL);
  g_autofree char *text = NULL;
  gsize length = 0;
  guint64 value = 0;

  if (!g_file_get_contents (path, &text, &length, NULL))
    return FALSE;
  unlink (path);
  if (length == 0 || length > 16 || text[length - 1] != '\n')
    return FALSE;
  text[length - 1] = '\0';
  if (!g_ascii_string_to_unsigned (text, 10, 0, 0xffff, &value, NULL))
    return FALSE;
  if (!WIFEXITED ((int) value) && !WIFSIGNALED ((int) value))
    return FALSE;
  *out_wait_status = (int) value;
  return TRUE;
}

pid_t
paddock_keeper_client_get_pid (PaddockKeeperClient *self)
{
  return self->pid;
}

guint64
paddock_keeper_client_get_start_time (PaddockKeeperClient *self)
{
  return self->start_time;
}

/* The keeper's own pid while it is an unreaped child of ours (so no other
 * process can have that pid); 0 after. */
pid_t
paddock_keeper_client_get_keeper_pid (PaddockKeeperClient *self)
{
  return self->keeper_pid;
}

gboolean
paddock_keeper_client_is_running (PaddockKeeperClient *self)
{
  return self->keeper_pid > 0;
}

/* SIGNUM to every process of the program's tree; SIGKILL again and again
 * until the tree is empty, after which the keeper exits (GONE). */
void
paddock_keeper_client_signal (PaddockKeeperClient *self,
                              int                  signum)
{
  PaddockKeeperRequest request = {
    .type = signum == SIGKILL ? PADDOCK_KEEPER_KILL : PADDOCK_KEEPER_SIGNAL,
    .signal = signum,
  };

  if (self->control < 0 || self->keeper_pid <= 0 || self->killing)
    return;
  /* One datagram on an idle socket: it does not block. One that could
   * not go is asked again by the next SIGKILL (Stop polls). */
  if (send (self->control, &request, sizeof request, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
    g_debug ("Could not ask paddock-keeper %d for signal %d: %s", (int) self->keeper_pid, signum,
             g_strerror (errno));
  else
    self->killing = signum == SIGKILL;
}

/* A session's keeper (--hold-control-fd or --hold-on-request) outlives
 * the daemon from now on: the session's record names it. FALSE when it could not be
 * asked (it is gone, or going). */
gboolean
paddock_keeper_client_hold (PaddockKeeperClient *self)
{
  PaddockKeeperRequest request = { .type = PADDOCK_KEEPER_HOLD };

  if (self->control < 0 || self->keeper_pid <= 0 || self->killing)
    return FALSE;
  return send (self->control, &request, sizeof request, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t) sizeof request;
}

/* Whether the program's end that was told keeps with the keeper until
 * paddock_keeper_client_release_end(): the keeper held when it told it,
 * was not asked to KILL, and still runs. A daemon gone before then leaves
 * that end to the next one (the exit file, or EXITED at its adoption),
 * so the end may be published before the daemon's own record of it is
 * durable. */
gboolean
paddock_keeper_client_keeps_end (PaddockKeeperClient *self)
{
  return self->end_kept && !self->killing && self->keeper_pid > 0 && self->control >= 0;
}

/* The daemon's record of the program's end is durable, or the end is
 * not relied on: the keeper need not keep it, nor wait to be asked HOLD
 * (it goes once its tree is empty). */
void
paddock_keeper_client_release_end (PaddockKeeperClient *self)
{
  PaddockKeeperRequest request = { .type = PADDOCK_KEEPER_RELEASE };

  if (!self->exit_told || self->released || self->control < 0 || self->keeper_pid <= 0)
    return;
  self->end_kept = FALSE;
  self->released = TRUE;
  /* One datagram on an idle socket: it does not block. One that could
   * not go leaves the keeper until our end of its socket closes, when it
   * writes the end to its exit file, which the record then overrides. */
  if (send (self->control, &request, sizeof request, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
    g_debug ("Could not tell paddock-keeper %d the end is recorded: %s", (int) self->keeper_pid,
             g_strerror (errno));
}

/* Whether the program's end was told (or is: an EXITED not read yet). */
gboolean
paddock_keeper_client_has_exited (PaddockKeeperClient *self)
{
  if (self->depth == 0 && self->control >= 0)
    {
      self->depth++;
      keeper_drain (self);
      keeper_leave (self);
    }
  return self->exited || self->keeper_pid <= 0;
}

/* Whom the keeper's events go to from now on (a sandbox made ahead, and
 * the session that took it). */
void
paddock_keeper_client_set_func (PaddockKeeperClient     *self,
                                PaddockKeeperClientFunc  func,
                                gpointer                 user_data)
{
  self->func = func;
  self->user_data = user_data;
}

/* Ends the keeper's tree and the keeper, waits (a second at most, then
 * SIGKILL) until it is reaped, and frees the client: for a keeper of ours
 * that holds nothing anybody wants (a sandbox made ahead nobody took).
 * Nothing is told. */
void
paddock_keeper_client_end (PaddockKeeperClient *self)
{
  pid_t pid;

  if (self == NULL)
    return;
  g_return_if_fail (self->depth == 0);
  self->func = NULL;
  pid = self->keeper_pidfd < 0 ? self->keeper_pid : 0;
  paddock_keeper_client_signal (self, SIGKILL);
  g_clear_handle_id (&self->child_watch, g_source_remove);
  if (pid > 0)
    {
      gint64 deadline = g_get_monotonic_time () + G_USEC_PER_SEC;
      int status;
      pid_t r;

      /* GLib's worker may have reaped it already (then ECHILD). */
      while ((r = waitpid (pid, &status, WNOHANG)) == 0 && g_get_monotonic_time () < deadline)
        g_usleep (2 * 1000);
      if (r == 0)
        {
          kill (pid, SIGKILL);
          while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
            ;
        }
      self->keeper_pid = 0;
    }
  paddock_keeper_client_free (self);
}

/* Lets go of the keeper: it runs on with its tree, if any (the keeper
 * protocol's end of file), which a later daemon ends. */
void
paddock_keeper_client_free (PaddockKeeperClient *self)
{
  if (self == NULL)
    return;
  g_clear_handle_id (&self->control_source, g_source_remove);
  g_clear_handle_id (&self->child_watch, g_source_remove);
  g_clear_handle_id (&self->pidfd_source, g_source_remove);
  paddock_close_fd (&self->control);
  paddock_close_fd (&self->keeper_pidfd);
  self->func = NULL;
  if (self->depth > 0)
    self->free_pending = TRUE;
  else
    g_free (self);
}
