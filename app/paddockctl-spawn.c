/* paddockctl-spawn.c — run a command with a listening socket, systemd-style
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib-unix.h>

#include <glib/gi18n.h>

#include "paddockctl-private.h"

/* sd_listen_fds(3): passed sockets start at fd 3. */
#define SD_LISTEN_FDS_START 3

#define LISTEN_PID_PREFIX "LISTEN_PID="

/* The signals whose disposition paddockctl (or GLib on its behalf) may
 * change: the ones we forward, SIGCHLD for the child watch, and SIGPIPE
 * in case a library ignores it. */
static const int saved_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD };
static struct sigaction saved_actions[G_N_ELEMENTS (saved_signals)];
static gboolean have_saved_actions;

/* Remember how we were started: a command run under `nohup` or from a
 * script's background job must keep ignoring SIGHUP or SIGINT, so the child
 * gets these back rather than a blanket SIG_DFL. */
void
paddockctl_spawn_save_signals (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (saved_signals); i++)
    if (sigaction (saved_signals[i], NULL, &saved_actions[i]) != 0)
      return;

  have_saved_actions = TRUE;
}

int
paddockctl_wait_status_to_exit_code (int wait_status)
{
  if (WIFEXITED (wait_status))
    return WEXITSTATUS (wait_status);
  if (WIFSIGNALED (wait_status))
    return 128 + WTERMSIG (wait_status);
  return PADDOCKCTL_EXIT_FAILED;
}

/* Moves @fd to a number above SD_LISTEN_FDS_START, keeping it close-on-exec,
 * so the child's dup2() onto fd 3 can never clobber it. */
static int
move_fd_above_listen_fds (int fd)
{
  int moved;

  if (fd > SD_LISTEN_FDS_START)
    return fd;

  moved = fcntl (fd, F_DUPFD_CLOEXEC, SD_LISTEN_FDS_START + 1);
  close (fd);
  return moved;
}

/* The variable name for a lease called @name: PADDOCK_PORT_ and the name
 * upper-cased with everything outside [A-Z0-9] as "_", so "web-api" gives
 * PADDOCK_PORT_WEB_API, usable from any shell. */
static char *
port_variable_for_name (const char *name)
{
  GString *variable = g_string_new ("PADDOCK_PORT_");

  for (const char *p = name; *p != '\0'; p++)
    g_string_append_c (variable, g_ascii_isalnum (*p) ? g_ascii_toupper (*p) : '_');

  return g_string_free (variable, FALSE);
}

/* Sets (or with a NULL @value, unsets) @variable in *@environ_copy. */
static void
environ_set (GStrv      *environ_copy,
             const char *variable,
             const char *value)
{
  if (value != NULL)
    *environ_copy = g_environ_setenv (*environ_copy, variable, value, TRUE);
  else
    *environ_copy = g_environ_unsetenv (*environ_copy, variable);
}

/* Everything here runs between fork() and execve() in a process whose
 * parent has GDBus worker threads: a lock another thread held at fork()
 * stays locked forever, so only async-signal-safe calls are allowed — no
 * malloc, no stdio, no GLib. The result goes to the parent through
 * @error_fd as an errno value. */
G_GNUC_NORETURN static void
child_exec (const char  *path,
            char *const *argv,
            char *const *envp,
            char        *listen_pid,
            int          listen_fd,
            int          error_fd,
            sigset_t    *mask)
{
  char digits[3 * sizeof (pid_t) + 1];
  gsize n_digits = 0;
  gsize offset = sizeof LISTEN_PID_PREFIX - 1;
  pid_t pid;
  int saved_errno;

  if (have_saved_actions)
    for (gsize i = 0; i < G_N_ELEMENTS (saved_signals); i++)
      sigaction (saved_signals[i], &saved_actions[i], NULL);

  /* dup2() leaves FD_CLOEXEC clear on the copy; when the socket already is
   * fd 3 there is no copy, so clear the flag by hand. */
  if (listen_fd == SD_LISTEN_FDS_START)
    {
      int flags = fcntl (listen_fd, F_GETFD);

      if (flags < 0 || fcntl (listen_fd, F_SETFD, flags & ~FD_CLOEXEC) < 0)
        goto fail;
    }
  else
    {
      while (dup2 (listen_fd, SD_LISTEN_FDS_START) < 0)
        if (errno != EINTR)
          goto fail;
    }

  /* LISTEN_PID must be the pid that execs, which only the child knows. */
  pid = getpid ();
  do
    {
      digits[n_digits++] = (char) ('0' + pid % 10);
      pid /= 10;
    }
  while (pid > 0);
  while (n_digits > 0)
    listen_pid[offset++] = digits[--n_digits];
  listen_pid[offset] = '\0';

  /* The parent blocked every signal around fork(); the command gets the
   * mask paddockctl was started with. */
  pthread_sigmask (SIG_SETMASK, mask, NULL);

  execve (path, argv, envp);

fail:
  saved_errno = errno;
  while (write (error_fd, &saved_errno, sizeof saved_errno) < 0 && errno == EINTR)
    ;
  _exit (PADDOCKCTL_EXIT_NOT_FOUND);
}

/* Starts @argv with @listen_fd as fd 3 and the environment of the systemd
 * socket-activation protocol (LISTEN_FDS=1, LISTEN_PID, LISTEN_FDNAMES)
 * plus PORT and PADDOCK_PORT_<NAME>. @listen_fd stays ours; the caller
 * closes it. On success the caller must reap *out_pid (g_child_watch_add).
 * Errors are G_SPAWN_ERROR: NOENT when the command is not found. */
gboolean
paddockctl_spawn_with_listen_fd (const char * const  *argv,
                                 int                  listen_fd,
                                 const char          *fd_name,
                                 guint16              port,
                                 GPid                *out_pid,
                                 GError             **error)
{
  g_autofree char *path = NULL;
  g_autofree char *port_text = NULL;
  g_autofree char *port_variable = NULL;
  g_autofree char *listen_pid = NULL;
  g_auto(GStrv) environ_copy = NULL;
  g_autoptr(GPtrArray) envp = NULL;
  sigset_t all_signals;
  sigset_t old_mask;
  int error_pipe[2] = { -1, -1 };
  int child_errno = 0;
  gssize n_read;
  pid_t pid;
  int flags;

  g_return_val_if_fail (argv != NULL && argv[0] != NULL, FALSE);
  g_return_val_if_fail (listen_fd >= 0, FALSE);

  /* Everything that allocates happens here, before fork(). A name with a
   * slash is a path and execve() reports on it; a bare name is looked up
   * in PATH like a shell would. */
  if (strchr (argv[0], '/') != NULL)
    path = g_strdup (argv[0]);
  else if (!(path = g_find_program_in_path (argv[0])))
    {
      g_set_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT,
                   _("%s: command not found"), argv[0]);
      return FALSE;
    }

  port_text = g_strdup_printf ("%u", port);
  port_variable = port_variable_for_name (fd_name);

  environ_copy = g_get_environ ();
  /* A LISTEN_* set inherited from our own activation would describe the
   * wrong sockets. */
  environ_set (&environ_copy, "LISTEN_PID", NULL);
  environ_set (&environ_copy, "LISTEN_FDS", "1");
  environ_set (&environ_copy, "LISTEN_FDNAMES", fd_name);
  environ_set (&environ_copy, "PORT", port_text);
  environ_set (&environ_copy, port_variable, port_text);

  /* Room for "LISTEN_PID=" and the digits of any pid; the child fills in
   * the digits without allocating. */
  listen_pid = g_malloc0 (sizeof LISTEN_PID_PREFIX + 3 * sizeof (pid_t) + 1);
  memcpy (listen_pid, LISTEN_PID_PREFIX, sizeof LISTEN_PID_PREFIX - 1);

  envp = g_ptr_array_new ();
  for (gsize i = 0; environ_copy[i] != NULL; i++)
    g_ptr_array_add (envp, environ_copy[i]);
  g_ptr_array_add (envp, listen_pid);
  g_ptr_array_add (envp, NULL);

  /* systemd hands over blocking sockets unless told otherwise, and servers
   * written for it (Python's socket.socket(fileno=3) among them) expect a
   * blocking accept(). The daemon creates it blocking already, and it only
   * holds its copy (the open file description is shared), so this is a
   * guard, not a change. */
  flags = fcntl (listen_fd, F_GETFL);
  if (flags >= 0 && (flags & O_NONBLOCK) != 0)
    (void) fcntl (listen_fd, F_SETFL, flags & ~O_NONBLOCK);

  /* execve() closes the write end when it succeeds, so the parent reads
   * either nothing or the child's errno. Both ends live above fd 3. */
  if (!g_unix_open_pipe (error_pipe, FD_CLOEXEC, error) ||
      (error_pipe[0] = move_fd_above_listen_fds (error_pipe[0])) < 0 ||
      (error_pipe[1] = move_fd_above_listen_fds (error_pipe[1])) < 0)
    {
      int saved_errno = errno;

      if (error_pipe[0] >= 0)
        close (error_pipe[0]);
      if (error_pipe[1] >= 0)
        close (error_pipe[1]);
      if (error != NULL && *error == NULL)
        g_set_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED,
                     _("cannot create a pipe: %s"), g_strerror (saved_errno));
      return FALSE;
    }

  /* Block every signal across fork() so that no handler of ours (GLib's
   * unix-signal handler writes to a wakeup fd shared with the parent) runs
   * in the child before it has put the original dispositions back. */
  sigfillset (&all_signals);
  pthread_sigmask (SIG_SETMASK, &all_signals, &old_mask);

  pid = fork ();
  if (pid == 0)
    child_exec (path, (char *const *) argv, (char *const *) envp->pdata,
                listen_pid, listen_fd, error_pipe[1], &old_mask);

  pthread_sigmask (SIG_SETMASK, &old_mask, NULL);
  close (error_pipe[1]);

  if (pid < 0)
    {
      int saved_errno = errno;

      close (error_pipe[0]);
      g_set_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_FORK,
                   _("cannot fork: %s"), g_strerror (saved_errno));
      return FALSE;
    }

  do
    n_read = read (error_pipe[0], &child_errno, sizeof child_errno);
  while (n_read < 0 && errno == EINTR);
  close (error_pipe[0]);

  if (n_read == sizeof child_errno)
    {
      /* The child has nothing left to do but exit; reap it here since the
       * caller only watches children that started. */
      while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
        ;

      g_set_error (error, G_SPAWN_ERROR,
                   child_errno == ENOENT ? G_SPAWN_ERROR_NOENT :
                   child_errno == EACCES ? G_SPAWN_ERROR_ACCES : G_SPAWN_ERROR_FAILED,
                   _("cannot run “%s”: %s"), argv[0], g_strerror (child_errno));
      return FALSE;
    }

  *out_pid = pid;
  return TRUE;
}
