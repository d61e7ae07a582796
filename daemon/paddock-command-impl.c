/* paddock-command-impl.c — org.paddock.Command1: an extra command run in a session
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "paddock-dbus-checks.h"
#include "paddock-autofd.h"
#include "paddock-command-impl.h"
#include "paddock-error.h"
#include "paddock-scrollback.h"

/* Each stream keeps its last MiB: with at most 16 commands per client and
 * session, a client can make the daemon hold at most 32 MiB of output. */
#define STREAM_CAPACITY    (1024 * 1024)
#define READ_MAX           (1024 * 1024)
#define STDIN_WRITE_MAX    (64 * 1024)
#define STDIN_PENDING_MAX  (1024 * 1024)
/* Session1.Run's "stdin": what a command may be given at once. */
#define RUN_STDIN_MAX      STDIN_PENDING_MAX
/* After a timeout's SIGKILL, how long a Run waits for the output streams
 * to close (a host command's escaped descendant may hold them). */
#define RUN_EOF_GRACE_MS   1000

typedef struct
{
  PaddockScrollback *ring;
  int                fd;
  guint              source;
} Stream;

struct _PaddockCommandImpl
{
  PaddockIpcCommand1Skeleton  parent_instance;

  GDBusConnection            *connection;
  char                       *object_path;
  char                       *caller;
  /* Started with Run's "shared": other clients may read its output. */
  gboolean                    shared;
  guint32                     id;
  gboolean                    tty;
  guint                       timeout_ms;

  Stream                      out;   /* stdout, or the terminal */
  Stream                      err;
  int                         stdin_fd;
  guint                       stdin_source;
  GByteArray                 *stdin_pending;
  gboolean                    stdin_close_requested;

  gint64                      started;
  gint64                      ended;
  guint                       timeout_id;
  guint                       caller_watch_id;
  gboolean                    running;
  gboolean                    kill_requested;
  gboolean                    timed_out;
  gboolean                    released;

  /* A Session1.Run waiting for the command to be over (exited, both
   * streams at EOF); answered exactly once, then the command is released. */
  GDBusMethodInvocation      *run_invocation;
  guint                       run_release_id;
};

enum {
  SIGNAL_KILL_REQUESTED,
  SIGNAL_RELEASED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void paddock_command_iface_init (PaddockIpcCommand1Iface *iface);
static void paddock_command_impl_answer_run (PaddockCommandImpl *self,
                                             gboolean            give_up);

G_DEFINE_FINAL_TYPE_WITH_CODE (PaddockCommandImpl, paddock_command_impl,
                               PADDOCK_IPC_TYPE_COMMAND1_SKELETON,
                               G_IMPLEMENT_INTERFACE (PADDOCK_IPC_TYPE_COMMAND1,
                                                      paddock_command_iface_init))

static void
stream_clear (Stream *stream)
{
  g_clear_handle_id (&stream->source, g_source_remove);
  paddock_close_fd (&stream->fd);
  g_clear_pointer (&stream->ring, paddock_scrollback_free);
}

/* Reads what is there now; returns FALSE at end of stream. */
static gboolean
stream_drain (Stream *stream)
{
  guint8 buffer[16 * 1024];

  for (guint round = 0; round < 64 && stream->fd >= 0; round++)
    {
      gssize n = read (stream->fd, buffer, sizeof buffer);

      if (n > 0)
        {
          paddock_scrollback_append (stream->ring, buffer, (gsize) n);
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return TRUE;
      return FALSE;   /* EOF, or EIO on a terminal nobody holds any more */
    }

  return TRUE;
}

/* Reads what is there now; at end of stream, stops watching it. */
static void
stream_read_or_close (Stream *stream)
{
  if (stream->fd >= 0 && !stream_drain (stream))
    {
      g_clear_handle_id (&stream->source, g_source_remove);
      paddock_close_fd (&stream->fd);
    }
}

static void
paddock_command_impl_update_offsets (PaddockCommandImpl *self)
{
  paddock_ipc_command1_set_stdout_offset (PADDOCK_IPC_COMMAND1 (self),
                                          paddock_scrollback_get_end_offset (self->out.ring));
  paddock_ipc_command1_set_stderr_offset (PADDOCK_IPC_COMMAND1 (self),
                                          paddock_scrollback_get_end_offset (self->err.ring));
}

static gboolean
paddock_command_impl_stream_cb (int          fd,
                                GIOCondition condition,
                                gpointer     user_data)
{
  PaddockCommandImpl *self = user_data;
  Stream *stream = fd == self->out.fd ? &self->out : &self->err;

  if (!stream_drain (stream))
    {
      stream->source = 0;
      paddock_close_fd (&stream->fd);
      paddock_command_impl_update_offsets (self);
      paddock_command_impl_answer_run (self, FALSE);
      return G_SOURCE_REMOVE;
    }

  paddock_command_impl_update_offsets (self);
  return G_SOURCE_CONTINUE;
}

static gboolean
paddock_command_impl_stdin_cb (int          fd,
                               GIOCondition condition,
                               gpointer     user_data)
{
  PaddockCommandImpl *self = user_data;

  while (self->stdin_pending->len > 0)
    {
      gssize n = write (fd, self->stdin_pending->data, self->stdin_pending->len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return G_SOURCE_CONTINUE;
      if (n < 0)
        {
          /* The command closed its end: nothing more can be written. */
          g_byte_array_set_size (self->stdin_pending, 0);
          self->stdin_close_requested = TRUE;
          break;
        }
      g_byte_array_remove_range (self->stdin_pending, 0, (guint) n);
    }

  self->stdin_source = 0;
  if (self->stdin_close_requested && !self->tty)
    paddock_close_fd (&self->stdin_fd);
  return G_SOURCE_REMOVE;
}

static gboolean
paddock_command_impl_timeout_cb (gpointer user_data)
{
  PaddockCommandImpl *self = user_data;

  self->timeout_id = 0;
  self->timed_out = TRUE;
  if (self->running)
    {
      paddock_command_impl_kill (self, SIGKILL, "its timeout passed");
      /* A Run is answered a little later even if its output never ends. */
      if (self->run_invocation != NULL)
        self->timeout_id = g_timeout_add (RUN_EOF_GRACE_MS, paddock_command_impl_timeout_cb, self);
    }
  else
    paddock_command_impl_answer_run (self, TRUE);   /* exited; background output still open */
  return G_SOURCE_REMOVE;
}

static void
paddock_command_impl_release (PaddockCommandImpl *self)
{
  g_autoptr(PaddockCommandImpl) hold = g_object_ref (self);

  if (self->released)
    return;

  if (self->running)
    paddock_command_impl_kill (self, SIGKILL, "it was released");
  self->released = TRUE;
  g_clear_handle_id (&self->run_release_id, g_source_remove);
  if (self->run_invocation != NULL)
    g_dbus_method_invocation_return_error (g_steal_pointer (&self->run_invocation),
                                           PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                                           "Command %u was released before it ended", self->id);
  g_signal_emit (self, signals[SIGNAL_RELEASED], 0);
}

static void
paddock_command_impl_caller_vanished_cb (GDBusConnection *connection,
                                         const char      *sender_name,
                                         const char      *object_path,
                                         const char      *interface_name,
                                         const char      *signal_name,
                                         GVariant        *parameters,
                                         gpointer         user_data)
{
  PaddockCommandImpl *self = user_data;
  const char *name;
  const char *old_owner;
  const char *new_owner;

  g_variant_get (parameters, "(&s&s&s)", &name, &old_owner, &new_owner);
  if (g_strcmp0 (name, self->caller) != 0 || new_owner[0] != '\0')
    return;

  /* Whoever asked for this command is gone: nobody will read it, and it
   * must not run on unobserved. */
  paddock_command_impl_release (self);
}

/* ------------------------------------------------------------------------ */

/* A command is its caller's, as a lease is its owner's: another client may
 * not type into it, signal it or release it, and may read its output only
 * when it was started shared. Answers @invocation with AccessDenied and
 * returns FALSE otherwise. */
static gboolean
paddock_command_impl_check_caller (PaddockCommandImpl    *self,
                                   GDBusMethodInvocation *invocation,
                                   gboolean               reading)
{
  const char *sender = g_dbus_method_invocation_get_sender (invocation);

  if (g_strcmp0 (sender, self->caller) == 0 || (reading && self->shared))
    return TRUE;

  g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_ACCESS_DENIED,
                                         "Command %u belongs to the client that started it (%s)%s",
                                         self->id, self->caller != NULL ? self->caller : "a peer",
                                         reading ? "; Run's option “shared” lets others read it" : "");
  return FALSE;
}

static gboolean
paddock_command_impl_handle_read_output (PaddockIpcCommand1    *command,
                                         GDBusMethodInvocation *invocation,
                                         const char            *stream_name,
                                         guint64                offset,
                                         guint                  max_bytes)
{
  PaddockCommandImpl *self = PADDOCK_COMMAND_IMPL (command);
  g_autoptr(GBytes) data = NULL;
  Stream *stream;
  guint64 start = 0;

  if (!paddock_command_impl_check_caller (self, invocation, TRUE))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (g_strcmp0 (stream_name, "stdout") == 0 || g_strcmp0 (stream_name, "tty") == 0)
    stream = &self->out;
  else if (g_strcmp0 (stream_name, "stderr") == 0)
    stream = &self->err;
  else
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                             "The streams are stdout, stderr and tty, not “%s”", stream_name);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  /* Whatever arrived since the last wakeup counts too. */
  if (stream->fd >= 0)
    stream_drain (stream);

  data = paddock_scrollback_read (stream->ring, offset, MIN (max_bytes, READ_MAX), &start);
  paddock_ipc_command1_complete_read_output (command, invocation,
                                             g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, data, TRUE),
                                             start, start + g_bytes_get_size (data));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
paddock_command_impl_handle_write_stdin (PaddockIpcCommand1    *command,
                                         GDBusMethodInvocation *invocation,
                                         GVariant              *data,
                                         gboolean               close_after)
{
  PaddockCommandImpl *self = PADDOCK_COMMAND_IMPL (command);
  gsize length = 0;
  const guint8 *bytes = g_variant_get_fixed_array (data, &length, 1);

  if (!paddock_command_impl_check_caller (self, invocation, FALSE))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (length > STDIN_WRITE_MAX)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                             "At most %u bytes at once", STDIN_WRITE_MAX);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (self->stdin_fd < 0 || self->stdin_close_requested || !self->running)
    {
      g_dbus_method_invocation_return_error_literal (invocation, PADDOCK_ERROR, PADDOCK_ERROR_BUSY,
                                                     "The command's input is closed");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (self->stdin_pending->len + length > STDIN_PENDING_MAX)
    {
      g_dbus_method_invocation_return_error_literal (invocation, PADDOCK_ERROR, PADDOCK_ERROR_QUOTA_EXCEEDED,
                                                     "The command is not reading its input");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  g_byte_array_append (self->stdin_pending, bytes, (guint) length);
  self->stdin_close_requested = close_after;
  if (self->stdin_source == 0)
    self->stdin_source = g_unix_fd_add (self->stdin_fd, G_IO_OUT, paddock_command_impl_stdin_cb, self);

  paddock_ipc_command1_complete_write_stdin (command, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
paddock_command_impl_handle_kill (PaddockIpcCommand1    *command,
                                  GDBusMethodInvocation *invocation,
                                  guint                  signal_number)
{
  PaddockCommandImpl *self = PADDOCK_COMMAND_IMPL (command);

  if (!paddock_command_impl_check_caller (self, invocation, FALSE))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (signal_number < 1 || signal_number >= (guint) NSIG)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                             "No signal %u", signal_number);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  if (self->running)
    paddock_command_impl_kill (self, (int) signal_number, "its caller asked");
  paddock_ipc_command1_complete_kill (command, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
paddock_command_impl_handle_release (PaddockIpcCommand1    *command,
                                     GDBusMethodInvocation *invocation)
{
  PaddockCommandImpl *self = PADDOCK_COMMAND_IMPL (command);

  if (!paddock_command_impl_check_caller (self, invocation, FALSE))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  paddock_ipc_command1_complete_release (command, invocation);
  paddock_command_impl_release (self);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void
paddock_command_iface_init (PaddockIpcCommand1Iface *iface)
{
  iface->handle_read_output = paddock_command_impl_handle_read_output;
  iface->handle_write_stdin = paddock_command_impl_handle_write_stdin;
  iface->handle_kill = paddock_command_impl_handle_kill;
  iface->handle_release = paddock_command_impl_handle_release;
}

/* ------------------------------------------------------------------------ */

/* Makes the command's standard streams: pipes (stdout and stderr apart) or a
 * terminal of its own. Returns the ends the command gets; the caller passes
 * them on and closes them. */
gboolean
paddock_command_impl_prepare (PaddockCommandImpl  *self,
                              int                 *out_stdin,
                              int                 *out_stdout,
                              int                 *out_stderr,
                              GError             **error)
{
  int in_pipe[2] = { -1, -1 };
  int out_pipe[2] = { -1, -1 };
  int err_pipe[2] = { -1, -1 };

  g_return_val_if_fail (PADDOCK_IS_COMMAND_IMPL (self), FALSE);

  if (self->tty)
    {
      paddock_autofd int master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
      char name[128];
      int slave;

      if (master < 0 || grantpt (master) != 0 || unlockpt (master) != 0 ||
          ptsname_r (master, name, sizeof name) != 0 ||
          (slave = open (name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
        {
          int saved_errno = errno;
          g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                       "Could not make a terminal: %s", g_strerror (saved_errno));
          return FALSE;
        }

      {
        struct winsize size = { .ws_row = 24, .ws_col = 80 };
        ioctl (master, TIOCSWINSZ, &size);
      }

      self->out.fd = paddock_steal_fd (&master);
      /* On a terminal, input goes through the same master. */
      self->stdin_fd = fcntl (self->out.fd, F_DUPFD_CLOEXEC, 3);
      *out_stdin = slave;
      *out_stdout = fcntl (slave, F_DUPFD_CLOEXEC, 3);
      *out_stderr = fcntl (slave, F_DUPFD_CLOEXEC, 3);
    }
  else
    {
      if (!g_unix_open_pipe (in_pipe, FD_CLOEXEC, error) ||
          !g_unix_open_pipe (out_pipe, FD_CLOEXEC, error) ||
          !g_unix_open_pipe (err_pipe, FD_CLOEXEC, error))
        {
          for (guint i = 0; i < 2; i++)
            {
              paddock_close_fd (&in_pipe[i]);
              paddock_close_fd (&out_pipe[i]);
              paddock_close_fd (&err_pipe[i]);
            }
          return FALSE;
        }

      self->stdin_fd = in_pipe[1];
      self->out.fd = out_pipe[0];
      self->err.fd = err_pipe[0];
      *out_stdin = in_pipe[0];
      *out_stdout = out_pipe[1];
      *out_stderr = err_pipe[1];
    }

  g_unix_set_fd_nonblocking (self->out.fd, TRUE, NULL);
  if (self->err.fd >= 0)
    g_unix_set_fd_nonblocking (self->err.fd, TRUE, NULL);
  if (self->stdin_fd >= 0)
    g_unix_set_fd_nonblocking (self->stdin_fd, TRUE, NULL);

  return TRUE;
}

/* A command on a terminal that neither prepare() nor adopt_terminal()
 * has given one yet. */
gboolean
paddock_command_impl_needs_terminal (PaddockCommandImpl *self)
{
  g_return_val_if_fail (PADDOCK_IS_COMMAND_IMPL (self), FALSE);

  return self->tty && self->out.fd < 0 && self->stdin_fd < 0 && !self->running;
}

/* Instead of prepare() for a command on a terminal made elsewhere (by a
 * sandbox, from its own devpts, so that the command's tty resolves there):
 * takes MASTER, which must be a PTY master, as the terminal's one end. */
gboolean
paddock_command_impl_adopt_terminal (PaddockCommandImpl  *self,
                                     int                  master,
                                     GError             **error)
{
  paddock_autofd int fd = master;
  unsigned int pty_number;

  g_return_val_if_fail (PADDOCK_IS_COMMAND_IMPL (self), FALSE);

  if (!paddock_command_impl_needs_terminal (self))
    {
      g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                           "The command was not waiting for a terminal");
      return FALSE;
    }

  /* Only a PTY master answers TIOCGPTN: anything else is refused rather
   * than read from and written to as the command's terminal. */
  if (ioctl (fd, TIOCGPTN, &pty_number) != 0)
    {
      g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                           "The sandbox sent something other than a terminal");
      return FALSE;
    }

  self->stdin_fd = fcntl (fd, F_DUPFD_CLOEXEC, 3);
  if (self->stdin_fd < 0)
    {
      int saved_errno = errno;
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "Could not keep the terminal: %s", g_strerror (saved_errno));
      return FALSE;
    }
  self->out.fd = paddock_steal_fd (&fd);
  g_unix_set_fd_nonblocking (self->out.fd, TRUE, NULL);
  g_unix_set_fd_nonblocking (self->stdin_fd, TRUE, NULL);
  return TRUE;
}

/* The command runs (host pid, or 0 inside a sandbox): watch its output. */
void
paddock_command_impl_started (PaddockCommandImpl *self,
                              GPid                host_pid)
{
  g_return_if_fail (PADDOCK_IS_COMMAND_IMPL (self));

  self->running = TRUE;
  self->started = g_get_monotonic_time ();
  self->out.source = g_unix_fd_add (self->out.fd, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                    paddock_command_impl_stream_cb, self);
  if (self->err.fd >= 0)
    self->err.source = g_unix_fd_add (self->err.fd, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                      paddock_command_impl_stream_cb, self);
  if (self->timeout_ms > 0)
    self->timeout_id = g_timeout_add (self->timeout_ms, paddock_command_impl_timeout_cb, self);
  paddock_ipc_command1_set_state (PADDOCK_IPC_COMMAND1 (self), "running");
}

void
paddock_command_impl_exited (PaddockCommandImpl *self,
                             int                 exit_status,
                             int                 signal_number)
{
  const char *state;

  g_return_if_fail (PADDOCK_IS_COMMAND_IMPL (self));

  if (!self->running)
    return;

  self->running = FALSE;
  self->ended = g_get_monotonic_time ();
  /* A Run still waits for the output of what the command left behind:
   * its timeout bounds that wait too. */
  if (self->run_invocation == NULL)
    g_clear_handle_id (&self->timeout_id, g_source_remove);

  /* What it wrote before it ended is all there now (what background
   * children keep writing still arrives). */
  stream_read_or_close (&self->out);
  stream_read_or_close (&self->err);
  paddock_command_impl_update_offsets (self);

  if (self->timed_out)
    state = "timed-out";
  else if (self->kill_requested)
    state = "killed";
  else
    state = "exited";

  paddock_ipc_command1_set_exit_status (PADDOCK_IPC_COMMAND1 (self), exit_status);
  paddock_ipc_command1_set_signal (PADDOCK_IPC_COMMAND1 (self), (guint) signal_number);
  paddock_ipc_command1_set_elapsed_ms (PADDOCK_IPC_COMMAND1 (self),
                                       (guint64) ((self->ended - self->started) / 1000));
  paddock_ipc_command1_set_state (PADDOCK_IPC_COMMAND1 (self), state);
  paddock_command_impl_answer_run (self, FALSE);
}

void
paddock_command_impl_kill (PaddockCommandImpl *self,
                           int                 signal_number,
                           const char         *reason)
{
  g_return_if_fail (PADDOCK_IS_COMMAND_IMPL (self));

  if (!self->running)
    return;

  g_debug ("Command %u: signal %d because %s", self->id, signal_number, reason);
  self->kill_requested = TRUE;
  g_signal_emit (self, signals[SIGNAL_KILL_REQUESTED], 0, signal_number);
}

/* The session is ending and takes the command with it: when it ends, it
 * was killed, not done. */
void
paddock_command_impl_expect_kill (PaddockCommandImpl *self)
{
  g_return_if_fail (PADDOCK_IS_COMMAND_IMPL (self));

  if (self->running)
    self->kill_requested = TRUE;
}

/* ------------------------------------------------------------------------ */
/* Session1.Run                                                              */

/* Run's options, checked before anything starts. */
gboolean
paddock_command_impl_check_run_options (GVariant  *options,
                                        GError   **error)
{
  GVariantIter iter;
  const char *key;
  GVariant *value;

  g_variant_iter_init (&iter, options);
  while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
    {
      g_autoptr(GVariant) owned = value;

      if (g_str_equal (key, "stdin") && g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING))
        {
          if (g_variant_get_size (value) > RUN_STDIN_MAX)
            {
              g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                           "Run takes at most %u bytes of input", RUN_STDIN_MAX);
              return FALSE;
            }
        }
      else if (g_str_equal (key, "shared") && g_variant_is_of_type (value, G_VARIANT_TYPE_BOOLEAN))
        {
          /* Read by paddock_command_impl_answer_when_done(). */
        }
      else if (g_str_equal (key, "tty") && g_variant_is_of_type (value, G_VARIANT_TYPE_BOOLEAN))
        {
          /* On a terminal stdout and stderr are one stream, and a terminal
           * expects someone at it: that is Exec's. */
          if (g_variant_get_boolean (value))
            {
              g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                   "Run uses pipes, not a terminal: use Exec for a terminal");
              return FALSE;
            }
        }
      else
        {
          g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                       "Run has no option “%s” of type %s", key, g_variant_get_type_string (value));
          return FALSE;
        }
    }

  return TRUE;
}

static GVariant *
stream_contents (Stream *stream)
{
  g_autoptr(GBytes) data = paddock_scrollback_read (stream->ring, 0, STREAM_CAPACITY, NULL);

  return g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, data, TRUE);
}

static gboolean
paddock_command_impl_run_release_cb (gpointer user_data)
{
  PaddockCommandImpl *self = user_data;

  self->run_release_id = 0;
  paddock_command_impl_release (self);
  return G_SOURCE_REMOVE;
}

/* Answers a waiting Run once the command is over: it has exited and both
 * its streams are at EOF, so all its output is in. GIVE_UP: the timeout
 * passed with a stream still open (held by what the command left behind),
 * and what has arrived is what Run gets. */
static void
paddock_command_impl_answer_run (PaddockCommandImpl *self,
                                 gboolean            give_up)
{
  PaddockIpcCommand1 *command = PADDOCK_IPC_COMMAND1 (self);
  GVariantDict result;
  const char *state;

  if (self->run_invocation == NULL || self->running || self->ended == 0)
    return;

  if (give_up)
    {
      stream_read_or_close (&self->out);
      stream_read_or_close (&self->err);
      g_clear_handle_id (&self->out.source, g_source_remove);
      g_clear_handle_id (&self->err.source, g_source_remove);
      paddock_close_fd (&self->out.fd);
      paddock_close_fd (&self->err.fd);
    }
  else if (self->out.fd >= 0 || self->err.fd >= 0)
    return;

  g_clear_handle_id (&self->timeout_id, g_source_remove);
  paddock_command_impl_update_offsets (self);

  if (self->timed_out)
    state = "timed-out";
  else if (self->kill_requested)
    state = "killed";
  else
    state = "exited";

  g_variant_dict_init (&result, NULL);
  g_variant_dict_insert (&result, "exit-status", "i", paddock_ipc_command1_get_exit_status (command));
  g_variant_dict_insert (&result, "signal", "u", paddock_ipc_command1_get_signal (command));
  g_variant_dict_insert (&result, "state", "s", state);
  g_variant_dict_insert (&result, "timed-out", "b", self->timed_out);
  g_variant_dict_insert_value (&result, "stdout", stream_contents (&self->out));
  g_variant_dict_insert_value (&result, "stderr", stream_contents (&self->err));
  g_variant_dict_insert (&result, "stdout-length", "t", paddock_scrollback_get_end_offset (self->out.ring));
  g_variant_dict_insert (&result, "stderr-length", "t", paddock_scrollback_get_end_offset (self->err.ring));
  g_variant_dict_insert (&result, "elapsed-ms", "t", (guint64) ((self->ended - self->started) / 1000));
  g_dbus_method_invocation_return_value (g_steal_pointer (&self->run_invocation),
                                         g_variant_new ("(@a{sv})", g_variant_dict_end (&result)));

  /* Nobody needs the command now. Released from the main loop, not from
   * inside whoever reported its end (the session may be walking its
   * commands right then). */
  self->run_release_id = g_idle_add_full (G_PRIORITY_DEFAULT, paddock_command_impl_run_release_cb,
                                          g_object_ref (self), g_object_unref);
}

/* Session1.Run: the command runs now. INVOCATION (taken) is answered once
 * it is over; Run's "stdin" goes to its input, which is then closed. */
void
paddock_command_impl_answer_when_done (PaddockCommandImpl    *self,
                                       GDBusMethodInvocation *invocation)
{
  GVariant *parameters = g_dbus_method_invocation_get_parameters (invocation);
  g_autoptr(GVariant) options = g_variant_get_child_value (parameters, 4);
  g_autoptr(GVariant) input = g_variant_lookup_value (options, "stdin", G_VARIANT_TYPE_BYTESTRING);

  g_return_if_fail (PADDOCK_IS_COMMAND_IMPL (self));
  g_return_if_fail (self->run_invocation == NULL && !self->tty);

  self->run_invocation = invocation;
  g_variant_lookup (options, "shared", "b", &self->shared);
  if (input != NULL && g_variant_get_size (input) > 0 && self->stdin_fd >= 0)
    {
      g_byte_array_append (self->stdin_pending, g_variant_get_data (input), (guint) g_variant_get_size (input));
      if (self->stdin_source == 0)
        self->stdin_source = g_unix_fd_add (self->stdin_fd, G_IO_OUT, paddock_command_impl_stdin_cb, self);
    }
  /* Nobody will write more: a command reading its input sees EOF. */
  self->stdin_close_requested = TRUE;
  if (self->stdin_pending->len == 0)
    paddock_close_fd (&self->stdin_fd);

  paddock_command_impl_answer_run (self, FALSE);
}

/* The daemon quits (the session is killed on its way out): a Run still
 * waiting is answered now, while the connection can still carry the answer
 * (the command object may outlive the connection: a child watch holds its
 * session). */
void
paddock_command_impl_answer_run_quitting (PaddockCommandImpl *self)
{
  g_return_if_fail (PADDOCK_IS_COMMAND_IMPL (self));

  if (self->run_invocation != NULL)
    g_dbus_method_invocation_return_error (g_steal_pointer (&self->run_invocation),
                                           PADDOCK_ERROR, PADDOCK_ERROR_BUSY,
                                           "The daemon quit before command %u ended", self->id);
}

guint32
paddock_command_impl_get_id (PaddockCommandImpl *self)
{
  return self->id;
}

const char *
paddock_command_impl_get_caller (PaddockCommandImpl *self)
{
  return self->caller;
}

const char *
paddock_command_impl_get_object_path (PaddockCommandImpl *self)
{
  return self->object_path;
}

gboolean
paddock_command_impl_is_running (PaddockCommandImpl *self)
{
  return self->running;
}

static void
paddock_command_impl_dispose (GObject *object)
{
  PaddockCommandImpl *self = PADDOCK_COMMAND_IMPL (object);

  if (self->caller_watch_id != 0 && self->connection != NULL)
    g_dbus_connection_signal_unsubscribe (self->connection, self->caller_watch_id);
  self->caller_watch_id = 0;
  g_clear_handle_id (&self->timeout_id, g_source_remove);
  g_clear_handle_id (&self->stdin_source, g_source_remove);
  g_clear_handle_id (&self->run_release_id, g_source_remove);
  /* Dropped while a Run waits (its session was destroyed and the command
   * outlived the minute its object is kept): it still gets its one answer. */
  if (self->run_invocation != NULL)
    g_dbus_method_invocation_return_error (g_steal_pointer (&self->run_invocation),
                                           PADDOCK_ERROR, PADDOCK_ERROR_BUSY,
                                           "Command %u was dropped before it ended", self->id);
  paddock_close_fd (&self->stdin_fd);
  stream_clear (&self->out);
  stream_clear (&self->err);
  g_clear_object (&self->connection);

  G_OBJECT_CLASS (paddock_command_impl_parent_class)->dispose (object);
}

static void
paddock_command_impl_finalize (GObject *object)
{
  PaddockCommandImpl *self = PADDOCK_COMMAND_IMPL (object);

  g_clear_pointer (&self->object_path, g_free);
  g_clear_pointer (&self->caller, g_free);
  g_clear_pointer (&self->stdin_pending, g_byte_array_unref);

  G_OBJECT_CLASS (paddock_command_impl_parent_class)->finalize (object);
}

PADDOCK_DBUS_DEFINE_CHECKED_VTABLE (paddock_command_impl)

static void
paddock_command_impl_class_init (PaddockCommandImplClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  /* Every call's arguments are checked before a handler sees them. */
  G_DBUS_INTERFACE_SKELETON_CLASS (klass)->get_vtable = paddock_command_impl_get_checked_vtable;

  object_class->dispose = paddock_command_impl_dispose;
  object_class->finalize = paddock_command_impl_finalize;

  /* The session signals the command's whole tree (it knows how: a process
   * session on the host, the sandbox's command supervisor inside). */
  signals[SIGNAL_KILL_REQUESTED] = g_signal_new ("kill-requested", G_TYPE_FROM_CLASS (klass),
                                                 G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                                 G_TYPE_NONE, 1, G_TYPE_INT);
  /* Done with: the session unexports and drops it. */
  signals[SIGNAL_RELEASED] = g_signal_new ("released", G_TYPE_FROM_CLASS (klass),
                                           G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
paddock_command_impl_init (PaddockCommandImpl *self)
{
  self->stdin_fd = -1;
  self->out.fd = -1;
  self->err.fd = -1;
  self->stdin_pending = g_byte_array_new ();
}

PaddockCommandImpl *
paddock_command_impl_new (GDBusConnection *connection,
                          const char      *object_path,
                          guint32          id,
                          const char      *caller,
                          gboolean         tty,
                          guint            timeout_ms)
{
  PaddockCommandImpl *self = g_object_new (PADDOCK_TYPE_COMMAND_IMPL, NULL);

  self->connection = g_object_ref (connection);
  self->object_path = g_strdup (object_path);
  self->id = id;
  self->caller = g_strdup (caller);
  self->tty = tty;
  self->timeout_ms = timeout_ms;
  self->out.ring = paddock_scrollback_new (STREAM_CAPACITY);
  self->err.ring = paddock_scrollback_new (STREAM_CAPACITY);

  paddock_ipc_command1_set_state (PADDOCK_IPC_COMMAND1 (self), "starting");
  paddock_ipc_command1_set_exit_status (PADDOCK_IPC_COMMAND1 (self), -1);

  /* Subscribed before the command runs: its caller cannot slip away
   * unnoticed in between. */
  if (caller != NULL && caller[0] == ':')
    self->caller_watch_id =
      g_dbus_connection_signal_subscribe (connection, "org.freedesktop.DBus", "org.freedesktop.DBus",
                                          "NameOwnerChanged", "/org/freedesktop/DBus", caller,
                                          G_DBUS_SIGNAL_FLAGS_NONE,
                                          paddock_command_impl_caller_vanished_cb, self, NULL);

  return self;
}
