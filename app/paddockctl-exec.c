/* paddockctl-exec.c — `paddockctl exec`: run a command in a session
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib-unix.h>

#include <glib/gi18n.h>

#include "paddock-error.h"
#include "paddockctl-private.h"

#define COMMAND_INTERFACE    "org.paddock.Command1"

/* The daemon caps one ReadOutput at 1 MiB and one WriteStdin at 64 KiB. */
#define READ_CHUNK_BYTES     (1024 * 1024)
#define STDIN_CHUNK_BYTES    (64 * 1024)

/* Output is read as soon as the daemon announces it (StdoutOffset and
 * StderrOffset in PropertiesChanged); the poll only backs that up. */
#define POLL_MS              100
/* While the command does not read its input, how often to offer it again. */
#define STDIN_RETRY_MS       50
/* After Ctrl-C, how long the killed command may take to be reaped. */
#define KILL_WAIT_MS         3000

/* What the daemon accepts (Session1.Exec). */
#define MAX_TIMEOUT_MS       (24u * 60 * 60 * 1000)

/* With --json the output is held until the end: up to this much per
 * stream, the rest is read and dropped ("truncated": true). */
#define MAX_JSON_OUTPUT      (16 * 1024 * 1024)

/* What timeout(1) exits with when the time ran out. */
#define EXIT_TIMED_OUT       124

/* Control characters of a terminal in its default (canonical) mode. */
#define TERMINAL_EOF_BYTE    0x04

#define EXEC_SUMMARY \
  N_("Run CMD inside the running session ID, beside its agent, with the\n" \
     "session's environment (plus --env) in its workspace (or --cwd DIR).\n\n" \
     "Its standard output and error arrive here as it runs. Standard input\n" \
     "is passed on when it is not a terminal (a pipe or a file) until it ends;\n" \
     "from a terminal nothing is read and the command's input is closed.\n\n" \
     "paddockctl exits with the command's status: 128+N when signal N ended\n" \
     "it, 124 when --timeout did (as timeout(1) does). Ctrl-C kills the\n" \
     "command and exits 130 (SIGTERM: 143).\n\n" \
     "--tty runs it on a terminal of its own (one stream, “output” in JSON);\n" \
     "piped input is still passed on (its end is sent as Ctrl-D), but what\n" \
     "you type is not: for interactive use, see “paddockctl attach”.\n\n" \
     "With --json: one document at the end, {\"exit_status\", \"signal\",\n" \
     "\"timed_out\", \"stdout\", \"stderr\", \"elapsed_ms\"}, the streams as text\n" \
     "with invalid UTF-8 replaced.")

static const int handled_signals[] = { SIGINT, SIGTERM, SIGHUP };

/* One of the command's output streams, followed by offset. */
typedef struct
{
  const char *name;          /* "stdout", "stderr" or "tty" */
  FILE       *file;          /* where it goes without --json */
  guint64     offset;        /* the next byte to read */
  guint64     end;           /* the daemon's end offset, as last heard */
  guint64     lost;          /* bytes the daemon dropped before we read them */
  GByteArray *collected;     /* with --json */
} Stream;

typedef struct
{
  Paddockctl         *ctl;
  PaddockIpcCommand1 *command;
  char               *daemon_owner;  /* the daemon that runs it: its unique name */
  gboolean            lost;          /* that daemon went: the command with it */
  GMainLoop          *loop;
  gboolean            tty;

  Stream              out;
  Stream              err;
  gboolean            truncated;

  /* The command's state as last read. */
  char               *state;
  gint                exit_status;
  guint               signal_number;
  guint64             elapsed_ms;

  guint               stdin_source;
  guint               stdin_retry_id;
  GBytes             *stdin_pending;  /* refused for now: the command is not reading */
  gboolean            stdin_pending_close;
  gboolean            stdin_last_newline;
  gboolean            stdin_done;     /* at its end, or no longer wanted */

  guint               poll_id;
  guint               kill_wait_id;
  guint               signal_sources[G_N_ELEMENTS (handled_signals)];
  int                 interrupted;    /* the signal that asked us to stop, or 0 */

  gboolean            done;
  gboolean            have_result;    /* the command ended and we read all of it */
  int                 exit_code;
} Exec;

static void
exec_finish (Exec *self,
             int   exit_code)
{
  if (self->done)
    return;

  self->exit_code = exit_code;
  self->done = TRUE;
  g_main_loop_quit (self->loop);
}

/* A failure of ours (not of the command): one line, exit 1. */
static void
exec_fail (Exec         *self,
           const GError *error)
{
  if (self->done)
    return;

  exec_finish (self, paddockctl_fail (self->ctl, error));
}

static gboolean
state_is_live (const char *state)
{
  return g_str_equal (state, "starting") || g_str_equal (state, "running");
}

/* ---- output ------------------------------------------------------------------ */

/* Passes @length bytes on: to our own stream, or into the JSON document. */
static gboolean
stream_emit (Exec          *self,
             Stream        *stream,
             const guint8  *data,
             gsize          length,
             GError       **error)
{
  if (stream->collected != NULL)
    {
      gsize room = MAX_JSON_OUTPUT - MIN (stream->collected->len, MAX_JSON_OUTPUT);

      if (length > room)
        self->truncated = TRUE;
      g_byte_array_append (stream->collected, data, (guint) MIN (length, room));
      return TRUE;
    }

  if (fwrite (data, 1, length, stream->file) != length || fflush (stream->file) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   _("cannot write the command's %s: %s"), stream->name, g_strerror (saved_errno));
      return FALSE;
    }

  return TRUE;
}

/* Reads @stream up to the end the daemon last announced. The length comes
 * from the offsets, not from the array (see paddockctl-logs.c). */
static gboolean
stream_drain (Exec     *self,
              Stream   *stream,
              GError  **error)
{
  while (stream->offset < stream->end)
    {
      g_autoptr(GVariant) data = NULL;
      const guint8 *bytes;
      gsize n_elements = 0;
      guint64 first = 0;
      guint64 next = 0;
      guint64 start;
      gsize length;

      if (!paddock_ipc_command1_call_read_output_sync (self->command, stream->name,
                                                       stream->offset, READ_CHUNK_BYTES,
                                                       &data, &first, &next, NULL, error))
        return FALSE;

      bytes = g_variant_get_fixed_array (data, &n_elements, 1);
      start = MAX (stream->offset, first);
      length = next > start ? (gsize) MIN ((guint64) n_elements, next - start) : 0;

      /* We fell behind the daemon's buffer: say how much is missing. */
      if (start > stream->offset)
        stream->lost += start - stream->offset;

      if (length == 0)
        {
          stream->offset = MAX (stream->offset, next);
          break;
        }

      if (!stream_emit (self, stream, bytes, length, error))
        return FALSE;

      stream->offset = start + length;
      stream->end = MAX (stream->end, stream->offset);
    }

  return TRUE;
}

/* The command's properties, all at once: the state is read with the
 * offsets, so that once it has ended the reads that follow are known to
 * include its last bytes. */
static gboolean
exec_update (Exec    *self,
             GError **error)
{
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) properties = NULL;
  const char *state = NULL;
  guint64 offset = 0;

  reply = g_dbus_connection_call_sync (g_dbus_proxy_get_connection (G_DBUS_PROXY (self->command)),
                                       PADDOCK_BUS_NAME,
                                       g_dbus_proxy_get_object_path (G_DBUS_PROXY (self->command)),
                                       "org.freedesktop.DBus.Properties", "GetAll",
                                       g_variant_new ("(s)", COMMAND_INTERFACE),
                                       G_VARIANT_TYPE ("(a{sv})"),
                                       G_DBUS_CALL_FLAGS_NONE, PADDOCKCTL_CALL_TIMEOUT_MS,
                                       NULL, error);
  if (reply == NULL)
    return FALSE;

  properties = g_variant_get_child_value (reply, 0);
  if (g_variant_lookup (properties, "State", "&s", &state))
    {
      g_free (self->state);
      self->state = g_strdup (state);
    }
  g_variant_lookup (properties, "ExitStatus", "i", &self->exit_status);
  g_variant_lookup (properties, "Signal", "u", &self->signal_number);
  g_variant_lookup (properties, "ElapsedMs", "t", &self->elapsed_ms);
  if (g_variant_lookup (properties, "StdoutOffset", "t", &offset))
    self->out.end = MAX (self->out.end, offset);
  if (g_variant_lookup (properties, "StderrOffset", "t", &offset))
    self->err.end = MAX (self->err.end, offset);

  return TRUE;
}

static int
exec_status_exit_code (Exec *self)
{
  if (g_str_equal (self->state, "timed-out"))
    return EXIT_TIMED_OUT;

  /* The daemon already says 128 + N for a signal. */
  if (self->exit_status >= 0 && self->exit_status <= 255)
    return self->exit_status;

  return PADDOCKCTL_EXIT_FAILED;
}

/* Whether the daemon that runs the command is still the one on the bus. A
 * daemon killed or restarted meanwhile took the command with it (its
 * keeper ends its tree once its daemon goes), and a new one's command of
 * the same path is another's: nothing more is asked of that path. */
static gboolean
exec_daemon_lost (Exec *self)
{
  g_autofree char *owner = NULL;

  /* Never known (no owner when the command was started): nothing to
   * compare with, the calls' own errors tell. */
  if (self->daemon_owner == NULL)
    return FALSE;
  owner = g_dbus_proxy_get_name_owner (G_DBUS_PROXY (self->command));
  if (self->lost || g_strcmp0 (owner, self->daemon_owner) != 0)
    self->lost = TRUE;
  return self->lost;
}

/* The same, asked of the bus itself: a call that failed because the
 * daemon died under it comes back before the proxy hears of the new
 * owner. */
static gboolean
exec_daemon_lost_now (Exec *self)
{
  g_autoptr(GVariant) reply = NULL;
  const char *owner = NULL;

  if (self->daemon_owner == NULL)
    return FALSE;
  reply = g_dbus_connection_call_sync (g_dbus_proxy_get_connection (G_DBUS_PROXY (self->command)),
                                       "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "GetNameOwner",
                                       g_variant_new ("(s)", PADDOCK_BUS_NAME), G_VARIANT_TYPE ("(s)"),
                                       G_DBUS_CALL_FLAGS_NONE, PADDOCKCTL_CALL_TIMEOUT_MS, NULL, NULL);
  if (reply != NULL)
    g_variant_get (reply, "(&s)", &owner);
  if (g_strcmp0 (owner, self->daemon_owner) != 0)
    self->lost = TRUE;
  return self->lost;
}

static void
exec_fail_lost (Exec *self)
{
  g_autoptr(GError) error = g_error_new_literal (PADDOCK_ERROR, PADDOCK_ERROR_LOST,
                                                 _("the daemon went away while the command ran "
                                                   "(killed or restarted): the command was ended "
                                                   "with it, and its exit status is unknown"));

  exec_fail (self, error);
}

static void
exec_step (Exec *self)
{
  g_autoptr(GError) error = NULL;

  if (self->done)
    return;

  if (exec_daemon_lost (self))
    {
      exec_fail_lost (self);
      return;
    }

  if (!exec_update (self, &error) ||
      !stream_drain (self, &self->out, &error) ||
      (!self->tty && !stream_drain (self, &self->err, &error)))
    {
      if (error->domain != G_IO_ERROR && exec_daemon_lost_now (self))
        {
          exec_fail_lost (self);
          return;
        }
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE))
        {
          /* Whoever read our output has gone (`… | head`): stop quietly,
           * as a program killed by SIGPIPE would. */
          paddock_ipc_command1_call_kill_sync (self->command, SIGKILL, NULL, NULL);
          exec_finish (self, 128 + SIGPIPE);
          return;
        }
      if (paddockctl_is_unknown_object_error (error))
        {
          if (self->interrupted != 0)
            {
              exec_finish (self, 128 + self->interrupted);
              return;
            }
          /* The daemon drops the objects of a session's commands when the
           * session ends, which may be before we read how it ended. */
          g_clear_error (&error);
          g_set_error_literal (&error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
                               _("the command ended with its session (stopped or destroyed) "
                                 "before its exit status could be read"));
        }
      exec_fail (self, error);
      return;
    }

  if (state_is_live (self->state))
    return;

  self->have_result = TRUE;
  if (self->interrupted != 0)
    exec_finish (self, 128 + self->interrupted);
  else
    exec_finish (self, exec_status_exit_code (self));
}

static gboolean
poll_cb (gpointer user_data)
{
  exec_step (user_data);
  return G_SOURCE_CONTINUE;
}

static void
properties_changed_cb (GDBusConnection *connection,
                       const char      *sender_name,
                       const char      *object_path,
                       const char      *interface_name,
                       const char      *signal_name,
                       GVariant        *parameters,
                       gpointer         user_data)
{
  exec_step (user_data);
}

static void
bus_closed_cb (GDBusConnection *connection,
               gboolean         remote_peer_vanished,
               GError          *error,
               gpointer         user_data)
{
  Exec *self = user_data;

  paddockctl_warn (_("lost the connection to the D-Bus session bus; the command was killed"));
  exec_finish (self, PADDOCKCTL_EXIT_FAILED);
}

/* ---- input ------------------------------------------------------------------- */

static gboolean stdin_cb (int fd, GIOCondition condition, gpointer user_data);

static void
stdin_stop (Exec *self)
{
  self->stdin_done = TRUE;
  g_clear_handle_id (&self->stdin_source, g_source_remove);
  g_clear_handle_id (&self->stdin_retry_id, g_source_remove);
  g_clear_pointer (&self->stdin_pending, g_bytes_unref);
}

/* Hands @bytes to the command. FALSE when it cannot take them now (they
 * are kept for a retry); input that can never arrive is dropped. */
static gboolean
stdin_send (Exec     *self,
            GBytes   *bytes,
            gboolean  close_after)
{
  g_autoptr(GError) error = NULL;
  GVariant *data = g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, bytes, TRUE);

  if (paddock_ipc_command1_call_write_stdin_sync (self->command, data, close_after,
                                                  NULL, &error))
    return TRUE;

  if (g_error_matches (error, PADDOCK_ERROR, PADDOCK_ERROR_QUOTA_EXCEEDED))
    {
      g_clear_pointer (&self->stdin_pending, g_bytes_unref);
      self->stdin_pending = g_bytes_ref (bytes);
      self->stdin_pending_close = close_after;
      return FALSE;
    }

  /* Busy: the command has closed its input or ended, as `head` does; like
   * a pipe to it, the rest is not wanted. */
  if (!g_error_matches (error, PADDOCK_ERROR, PADDOCK_ERROR_BUSY))
    paddockctl_warn (_("cannot pass standard input on: %s"), error->message);
  stdin_stop (self);
  return TRUE;
}

static gboolean
stdin_retry_cb (gpointer user_data)
{
  Exec *self = user_data;
  g_autoptr(GBytes) bytes = g_steal_pointer (&self->stdin_pending);
  gboolean close_after = self->stdin_pending_close;

  if (!stdin_send (self, bytes, close_after))
    return G_SOURCE_CONTINUE;

  self->stdin_retry_id = 0;
  if (close_after)
    self->stdin_done = TRUE;
  if (!self->stdin_done && !self->done)
    self->stdin_source = g_unix_fd_add (STDIN_FILENO, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                        stdin_cb, self);
  return G_SOURCE_REMOVE;
}

static void
stdin_close (Exec *self)
{
  g_autoptr(GBytes) bytes = NULL;

  /* A terminal has no end of input of its own: type Ctrl-D, twice when a
   * line is pending (the first only sends the line). */
  if (self->tty)
    {
      static const guint8 eof[] = { TERMINAL_EOF_BYTE, TERMINAL_EOF_BYTE };

      bytes = g_bytes_new_static (eof, self->stdin_last_newline ? 1 : 2);
    }
  else
    bytes = g_bytes_new_static ("", 0);

  if (!stdin_send (self, bytes, TRUE))
    self->stdin_retry_id = g_timeout_add (STDIN_RETRY_MS, stdin_retry_cb, self);
  else
    self->stdin_done = TRUE;
}

static gboolean
stdin_cb (int          fd,
          GIOCondition condition,
          gpointer     user_data)
{
  Exec *self = user_data;
  g_autofree guint8 *buffer = g_malloc (STDIN_CHUNK_BYTES);
  g_autoptr(GBytes) bytes = NULL;
  gssize n;

  do
    n = read (fd, buffer, STDIN_CHUNK_BYTES);
  while (n < 0 && errno == EINTR);

  if (n < 0 && errno == EAGAIN)
    return G_SOURCE_CONTINUE;

  if (n <= 0)
    {
      if (n < 0)
        paddockctl_warn (_("cannot read standard input: %s"), g_strerror (errno));
      self->stdin_source = 0;
      stdin_close (self);
      return G_SOURCE_REMOVE;
    }

  self->stdin_last_newline = buffer[n - 1] == '\n';
  bytes = g_bytes_new_take (g_steal_pointer (&buffer), (gsize) n);
  if (stdin_send (self, bytes, FALSE))
    return self->stdin_source != 0 ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;

  /* The command is not reading: stop reading for it, offer it again. */
  self->stdin_source = 0;
  self->stdin_retry_id = g_timeout_add (STDIN_RETRY_MS, stdin_retry_cb, self);
  return G_SOURCE_REMOVE;
}

/* ---- signals ----------------------------------------------------------------- */

static gboolean
kill_wait_cb (gpointer user_data)
{
  Exec *self = user_data;

  self->kill_wait_id = 0;
  paddockctl_warn (_("the command did not end within %d ms of being killed"), KILL_WAIT_MS);
  exec_finish (self, 128 + self->interrupted);
  return G_SOURCE_REMOVE;
}

/* Ctrl-C and friends kill the command and wait for it to be gone, so that
 * nothing of it outlives us; a second one does not wait. */
static void
exec_interrupt (Exec *self,
                int   signal_number)
{
  g_autoptr(GError) error = NULL;

  if (self->interrupted != 0)
    {
      exec_finish (self, 128 + self->interrupted);
      return;
    }

  self->interrupted = signal_number;
  stdin_stop (self);
  if (!paddock_ipc_command1_call_kill_sync (self->command, SIGKILL, NULL, &error))
    {
      exec_finish (self, 128 + signal_number);
      return;
    }

  self->kill_wait_id = g_timeout_add (KILL_WAIT_MS, kill_wait_cb, self);
  exec_step (self);
}

static gboolean
sigint_cb (gpointer user_data)
{
  exec_interrupt (user_data, SIGINT);
  return G_SOURCE_CONTINUE;
}

static gboolean
sigterm_cb (gpointer user_data)
{
  exec_interrupt (user_data, SIGTERM);
  return G_SOURCE_CONTINUE;
}

static gboolean
sighup_cb (gpointer user_data)
{
  exec_interrupt (user_data, SIGHUP);
  return G_SOURCE_CONTINUE;
}

/* ---- the result -------------------------------------------------------------- */

static void
add_text_member (JsonBuilder *builder,
                 const char  *name,
                 GByteArray  *bytes)
{
  g_autofree char *text = bytes->len > 0
                          ? g_utf8_make_valid ((const char *) bytes->data, (gssize) bytes->len)
                          : g_strdup ("");

  json_builder_set_member_name (builder, name);
  json_builder_add_string_value (builder, text);
}

static void
print_result_json (Exec *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "exit_status");
  json_builder_add_int_value (builder, exec_status_exit_code (self));
  json_builder_set_member_name (builder, "signal");
  if (self->signal_number != 0)
    json_builder_add_int_value (builder, self->signal_number);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "timed_out");
  json_builder_add_boolean_value (builder, g_str_equal (self->state, "timed-out"));
  if (self->tty)
    add_text_member (builder, "output", self->out.collected);
  else
    {
      add_text_member (builder, "stdout", self->out.collected);
      add_text_member (builder, "stderr", self->err.collected);
    }
  json_builder_set_member_name (builder, "elapsed_ms");
  json_builder_add_int_value (builder, (gint64) MIN (self->elapsed_ms, (guint64) G_MAXINT64));
  json_builder_set_member_name (builder, "truncated");
  json_builder_add_boolean_value (builder, self->truncated);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  paddockctl_print_json (self->ctl, root);
}

/* ---- exec -------------------------------------------------------------------- */

/* A standard stream we were started without would be the lowest free fd,
 * the one the bus connection takes next: its bytes would then be read as
 * the command's input, or the command's output written into the bus.
 * /dev/null holds the place instead (as systemd does for its services). */
static void
ensure_standard_fds (void)
{
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
    {
      int null_fd;

      if (fcntl (fd, F_GETFD) >= 0 || errno != EBADF)
        continue;

      /* open() returns the lowest free fd: this one. */
      null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
      if (null_fd >= 0 && null_fd != fd)
        close (null_fd);
    }
}

/* Watched from before the command starts, so that a Ctrl-C in between is
 * not lost (nor fatal, leaving the daemon to notice we are gone): it is
 * handled once the loop runs, with the command to kill known. */
static void
exec_watch_signals (Exec *self)
{
  const GSourceFunc funcs[G_N_ELEMENTS (handled_signals)] = { sigint_cb, sigterm_cb, sighup_cb };

  for (gsize i = 0; i < G_N_ELEMENTS (handled_signals); i++)
    self->signal_sources[i] = g_unix_signal_add (handled_signals[i], funcs[i], self);
}

static void
exec_unwatch_signals (Exec *self)
{
  for (gsize i = 0; i < G_N_ELEMENTS (handled_signals); i++)
    g_clear_handle_id (&self->signal_sources[i], g_source_remove);
}

static int
exec_run (Exec *self)
{
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  GDBusConnection *bus = g_dbus_proxy_get_connection (G_DBUS_PROXY (self->command));
  const char *path = g_dbus_proxy_get_object_path (G_DBUS_PROXY (self->command));
  guint subscription;
  gulong closed_id;
  gulong owner_id;

  self->loop = loop;

  subscription = g_dbus_connection_signal_subscribe (bus, PADDOCK_BUS_NAME,
                                                     "org.freedesktop.DBus.Properties",
                                                     "PropertiesChanged", path,
                                                     COMMAND_INTERFACE,
                                                     G_DBUS_SIGNAL_FLAGS_NONE,
                                                     properties_changed_cb, self, NULL);
  closed_id = g_signal_connect (bus, "closed", G_CALLBACK (bus_closed_cb), self);
  owner_id = g_signal_connect_swapped (self->command, "notify::g-name-owner", G_CALLBACK (exec_step), self);
  self->poll_id = g_timeout_add (POLL_MS, poll_cb, self);

  /* Input from a terminal is a person's: without --tty there is nowhere
   * sensible for it, and with --tty it is not relayed (see the summary),
   * so the command sees the end of its input at once rather than wait. */
  if (!isatty (STDIN_FILENO))
    self->stdin_source = g_unix_fd_add (STDIN_FILENO, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                        stdin_cb, self);
  else if (!self->tty)
    stdin_close (self);

  exec_step (self);
  if (!self->done)
    g_main_loop_run (loop);

  stdin_stop (self);
  exec_unwatch_signals (self);
  g_clear_handle_id (&self->poll_id, g_source_remove);
  g_clear_handle_id (&self->kill_wait_id, g_source_remove);
  g_signal_handler_disconnect (bus, closed_id);
  g_signal_handler_disconnect (self->command, owner_id);
  g_dbus_connection_signal_unsubscribe (bus, subscription);
  self->loop = NULL;

  /* Done with it: the daemon frees its buffers (and kills it, should it
   * still run because we are leaving early). */
  if (!g_dbus_connection_is_closed (bus) && !self->lost)
    paddock_ipc_command1_call_release_sync (self->command, NULL, NULL);

  if (self->out.lost > 0 || self->err.lost > 0)
    paddockctl_warn ("the command wrote faster than it was read: %" G_GUINT64_FORMAT
                     " bytes of its output were lost", self->out.lost + self->err.lost);
  if (self->truncated)
    paddockctl_warn (_("the output was cut at %d MiB per stream"), MAX_JSON_OUTPUT / (1024 * 1024));

  /* A result only when the command has one to give. */
  if (self->have_result)
    {
      if (self->ctl->json)
        print_result_json (self);
      else if (g_str_equal (self->state, "timed-out"))
        paddockctl_warn ("the command was killed: its timeout passed after %" G_GUINT64_FORMAT
                         " ms", self->elapsed_ms);
      /* As shells do, say what the status means, but not for the signals
       * that mean "asked to stop" (Ctrl-C, a reader gone). */
      else if (self->signal_number != 0 && self->interrupted == 0 &&
               self->signal_number != SIGINT && self->signal_number != SIGPIPE)
        paddockctl_warn (_("the command was ended by signal %u (%s)"),
                         self->signal_number, g_strsignal ((int) self->signal_number));
    }

  return self->exit_code;
}

int
paddockctl_exec (Paddockctl  *ctl,
                 int          argc,
                 char       **argv)
{
  const char *command_path = "paddockctl exec";
  const char *bad_env = NULL;
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockIpcSession1) session = NULL;
  g_autoptr(PaddockIpcCommand1) command = NULL;
  g_autoptr(GByteArray) collected_out = NULL;
  g_autofree char *owner = NULL;
  g_autoptr(GByteArray) collected_err = NULL;
  g_autofree char *id = NULL;
  g_autofree char *path = NULL;
  g_autofree char *timeout_text = NULL;
  g_autofree char *cwd = NULL;
  g_autofree char **options_argv = NULL;
  g_autofree char *state = NULL;
  g_auto(GStrv) env = NULL;
  g_auto(GVariantBuilder) env_builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a{ss}"));
  const char * const *cmd = NULL;
  gboolean tty = FALSE;
  const GOptionEntry entries[] = {
    { "tty", 't', 0, G_OPTION_ARG_NONE, &tty,
      N_("Run CMD on a terminal of its own (its output as one stream)"), NULL },
    { "timeout", 0, 0, G_OPTION_ARG_STRING, &timeout_text,
      N_("Kill CMD after MS milliseconds, at most 24 hours (default: 0, no limit)"), N_("MS") },
    { "cwd", 0, 0, G_OPTION_ARG_FILENAME, &cwd,
      N_("Run CMD in the absolute folder DIR (default: the session's workspace)"), N_("DIR") },
    { "env", 0, 0, G_OPTION_ARG_STRING_ARRAY, &env,
      N_("Set variable K to V for CMD (repeatable)"), N_("K=V") },
    { NULL }
  };
  Exec self = { 0 };
  int options_argc = argc;
  int exit_code = PADDOCKCTL_EXIT_OK;
  gboolean have_command_separator = FALSE;
  guint64 timeout_ms = 0;

  ensure_standard_fds ();

  /* As in `create`: "--" splits our options from the command's argv. */
  for (int i = 1; i < argc; i++)
    if (g_str_equal (argv[i], "--"))
      {
        options_argc = i;
        have_command_separator = TRUE;
        if (i + 1 < argc)
          cmd = (const char * const *) &argv[i + 1];
        break;
      }

  options_argv = g_new0 (char *, options_argc + 1);
  memcpy (options_argv, argv, sizeof (char *) * options_argc);

  context = paddockctl_option_context_new (ctl, "ID -- CMD [ARG…]", EXEC_SUMMARY, entries);
  {
    char **parse_argv = options_argv;

    if (!paddockctl_parse_options (ctl, context, command_path,
                                   &options_argc, &parse_argv, &exit_code))
      return exit_code;
  }

  if (options_argc < 2)
    return paddockctl_usage_error (ctl, command_path, _("missing session ID"));
  if (options_argc > 2)
    return paddockctl_usage_error (ctl, command_path,
                                   _("unexpected argument “%s” (put the command after “--”)"),
                                   options_argv[2]);
  if (!(id = paddockctl_dup_session_id (options_argv[1])))
    return paddockctl_usage_error (ctl, command_path,
                                   _("invalid session id “%s”: expected 12 hexadecimal digits, "
                                     "as printed by “paddockctl create” or “paddockctl list”"),
                                   options_argv[1]);
  if (cmd == NULL)
    return paddockctl_usage_error (ctl, command_path,
                                   have_command_separator ? _("missing command after “--”")
                                                          : _("missing “-- CMD [ARG…]”"));
  if (*cmd[0] == '\0')
    return paddockctl_usage_error (ctl, command_path, _("the command is an empty string"));
  if (timeout_text != NULL &&
      !g_ascii_string_to_unsigned (timeout_text, 10, 0, MAX_TIMEOUT_MS, &timeout_ms, NULL))
    return paddockctl_usage_error (ctl, command_path,
                                   _("invalid --timeout “%s”: expected milliseconds from 0 "
                                     "(no limit) to %u (24 hours)"), timeout_text, MAX_TIMEOUT_MS);
  /* The folder is one inside the session's view, which is not ours to
   * resolve a relative path against. */
  if (cwd != NULL && !g_path_is_absolute (cwd))
    return paddockctl_usage_error (ctl, command_path,
                                   _("invalid --cwd “%s”: expected an absolute folder"), cwd);

  if ((bad_env = paddockctl_add_env (&env_builder, env)) != NULL)
    return paddockctl_usage_error (ctl, command_path,
                                   _("invalid --env “%s”: expected K=V, K made of letters, "
                                     "digits and _"), bad_env);

  if (!(session = paddockctl_dup_session (ctl, id, &error)))
    return paddockctl_fail (ctl, error);

  exec_watch_signals (&self);
  if (!paddock_ipc_session1_call_exec_sync (session, cmd, cwd != NULL ? cwd : "",
                                            g_variant_builder_end (&env_builder),
                                            (guint) timeout_ms, tty, &path, NULL, &error))
    {
      exec_unwatch_signals (&self);
      paddockctl_check_session_error (ctl, id, &error);

      /* The daemon's "not running" does not say what the session is. */
      if (g_error_matches (error, PADDOCK_ERROR, PADDOCK_ERROR_BUSY) &&
          paddockctl_get_session_state (ctl, id, &state, NULL))
        {
          g_autofree char *message = g_strdup_printf (_("session %s is %s, not running: "
                                                        "commands run only in a running session"),
                                                      id, state);

          return paddockctl_fail_literal (ctl, PADDOCKCTL_EXIT_FAILED,
                                          paddock_error_to_dbus_name (PADDOCK_ERROR_BUSY),
                                          message);
        }
      return paddockctl_fail (ctl, error);
    }

  command = paddock_ipc_command1_proxy_new_sync (g_dbus_proxy_get_connection (G_DBUS_PROXY (session)),
                                                 G_DBUS_PROXY_FLAGS_DO_NOT_LOAD_PROPERTIES |
                                                 G_DBUS_PROXY_FLAGS_DO_NOT_CONNECT_SIGNALS |
                                                 G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START,
                                                 PADDOCK_BUS_NAME, path, NULL, &error);
  if (command == NULL)
    {
      exec_unwatch_signals (&self);
      return paddockctl_fail (ctl, error);
    }
  g_dbus_proxy_set_default_timeout (G_DBUS_PROXY (command), PADDOCKCTL_CALL_TIMEOUT_MS);

  self.ctl = ctl;
  self.command = command;
  self.daemon_owner = owner = g_dbus_proxy_get_name_owner (G_DBUS_PROXY (command));
  self.tty = tty;
  self.exit_status = -1;
  self.stdin_last_newline = TRUE;
  self.out.name = tty ? "tty" : "stdout";
  self.out.file = stdout;
  self.err.name = "stderr";
  self.err.file = stderr;
  if (ctl->json)
    {
      self.out.collected = collected_out = g_byte_array_new ();
      self.err.collected = collected_err = g_byte_array_new ();
    }

  exit_code = exec_run (&self);
  g_clear_pointer (&self.state, g_free);

  return exit_code;
}
