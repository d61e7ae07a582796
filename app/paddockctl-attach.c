/* paddockctl-attach.c — `paddockctl attach`: a session's terminal, here
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <gio/gunixfdlist.h>
#include <glib-unix.h>

#include <glib/gi18n.h>

#include "paddock-error.h"
#include "paddock-exit-status.h"
#include "paddockctl-private.h"

/* Ctrl-], as telnet, docker and virsh use it: rare in what people type
 * into a program, and not a key any shell binds. */
#define DETACH_BYTE           0x1d
/* Ctrl-C: with --no-input nothing is typed, so it detaches too. */
#define INTERRUPT_BYTE        0x03

#define MAX_TERMINAL_CELLS    1000

/* How much we read at a time, and how much may wait for a slow reader of
 * our stdout (or a slow daemon) before we stop reading the other side:
 * the daemon's scrollback holds the rest, not our memory. */
#define READ_CHUNK_BYTES      (64 * 1024)
#define MAX_PENDING_OUTPUT    (256 * 1024)
#define MAX_PENDING_INPUT     (64 * 1024)

/* After the stream ends, how long the session may take to be reaped and
 * say how it ended, and how long keystrokes typed just before a detach
 * may take to reach the daemon. */
#define END_STATE_WAIT_MS     2000
/* How long a viewer whose daemon went waits for the next one (a restart,
 * --replace, socket activation). */
#define REATTACH_WAIT_MS      10000
#define PING_TIMEOUT_MS       2000
#define END_STATE_POLL_MS     100
#define INPUT_FLUSH_WAIT_MS   1000

#define SESSION_INTERFACE     "org.paddock.Session1"

#define ATTACH_SUMMARY \
  N_("Open the session's terminal here: its scrollback is replayed (from\n" \
     "offset N with --offset), then its live output follows, and what you\n" \
     "type goes to the programs in it. Press Ctrl-] to detach: the session\n" \
     "keeps running. The session's terminal follows the size of yours.\n\n" \
     "When standard input is not a terminal it is sent as it is (Ctrl-] is\n" \
     "an ordinary byte then) until it ends, and the output is printed until\n" \
     "the session ends or Ctrl-C, so that scripts can use it:\n" \
     "  printf 'ls\\n' | paddockctl attach ID\n" \
     "With --no-input nothing is sent; on a terminal Ctrl-C detaches too.\n\n" \
     "Exits 0 on detach, on Ctrl-C when standard input is not a terminal,\n" \
     "and when the session's terminal ends (a note on standard error says\n" \
     "how the session ended); 128 + the signal's number on SIGTERM or SIGHUP.\n\n" \
     "attach is interactive, so with --json it prints only errors, as JSON\n" \
     "documents on standard output: the terminal's bytes are still relayed\n" \
     "as they are, and the notes on standard error are left out.")

typedef enum
{
  ENDING_NONE,
  ENDING_DETACHED,      /* Ctrl-], or our terminal went away */
  ENDING_STREAM_ENDED,  /* the daemon closed the stream: the terminal ended */
  ENDING_SIGNALLED,     /* SIGINT, SIGTERM or SIGHUP */
  ENDING_FAILED,        /* error says why */
} Ending;

static const int handled_signals[] = { SIGINT, SIGTERM, SIGHUP };

typedef struct
{
  Paddockctl         *ctl;
  PaddockIpcSession1 *session;            /* ours: replaced when the daemon is */
  const char         *id;
  GMainLoop          *loop;
  GCancellable       *cancellable;

  int                 socket_fd;          /* the terminal stream: ours, non-blocking */
  guint64             offset;             /* the absolute offset of the next byte it gives */
  char               *daemon_owner;       /* the daemon it comes from: its unique name */
  gboolean            tty;                /* stdin is a terminal */
  gboolean            input;              /* what is typed goes to the session */
  gboolean            fixed_size;         /* the session keeps its size, not ours */
  gboolean            raw;                /* saved_termios is to be put back */
  struct termios      saved_termios;
  gboolean            have_saved_sigpipe;
  struct sigaction    saved_sigpipe;

  GByteArray         *to_stdout;
  GByteArray         *to_socket;
  guint               socket_in_source;
  guint               socket_out_source;
  guint               stdin_source;
  guint               stdout_source;
  guint               signal_sources[G_N_ELEMENTS (handled_signals)];
  guint               winch_source;
  gulong              closed_id;

  gboolean            stdin_done;         /* read to its end, or not ours to read */
  gboolean            input_refused;      /* the daemon stopped reading keystrokes */
  gboolean            at_line_start;      /* the last byte written to stdout was '\n' */
  gboolean            resize_in_flight;
  gboolean            resize_again;

  Ending              ending;
  int                 signal_number;
  GError             *error;
} Attach;

static void
attach_clear (Attach *self)
{
  g_clear_handle_id (&self->socket_in_source, g_source_remove);
  g_clear_handle_id (&self->socket_out_source, g_source_remove);
  g_clear_handle_id (&self->stdin_source, g_source_remove);
  g_clear_handle_id (&self->stdout_source, g_source_remove);
  g_clear_handle_id (&self->winch_source, g_source_remove);
  for (gsize i = 0; i < G_N_ELEMENTS (handled_signals); i++)
    g_clear_handle_id (&self->signal_sources[i], g_source_remove);
  if (self->closed_id != 0 && self->ctl->bus != NULL)
    g_clear_signal_handler (&self->closed_id, self->ctl->bus);
  if (self->socket_fd >= 0)
    {
      close (self->socket_fd);
      self->socket_fd = -1;
    }
  g_clear_pointer (&self->to_stdout, g_byte_array_unref);
  g_clear_pointer (&self->to_socket, g_byte_array_unref);
  g_clear_pointer (&self->daemon_owner, g_free);
  g_clear_object (&self->session);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->loop, g_main_loop_unref);
  g_clear_error (&self->error);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Attach, attach_clear)

static void flush_stdout (Attach *self);
static void flush_socket (Attach *self);
static void watch_socket_input (Attach *self);
static void watch_stdin (Attach *self);

/* The first reason to stop wins: a failure while detaching is still a
 * detach. */
static void
finish (Attach *self,
        Ending  ending)
{
  if (self->ending != ENDING_NONE)
    return;

  self->ending = ending;
  g_main_loop_quit (self->loop);
}

static void
fail_errno (Attach     *self,
            int         saved_errno,
            const char *what)
{
  if (self->ending != ENDING_NONE)
    return;

  g_set_error (&self->error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "%s: %s", what, g_strerror (saved_errno));
  finish (self, ENDING_FAILED);
}

/* ---- the terminal --------------------------------------------------------------- */

static gboolean
set_termios (const struct termios *termios)
{
  while (tcsetattr (STDIN_FILENO, TCSADRAIN, termios) != 0)
    if (errno != EINTR)
      return FALSE;

  return TRUE;
}

/* Raw mode, as ssh and screen use it: every key reaches the session as it
 * is (Ctrl-C, Ctrl-Z and Ctrl-D included, for the programs there to act
 * on), and output is not post-processed, since the session's own terminal
 * has already done that. */
static gboolean
enter_raw_mode (Attach  *self,
                GError **error)
{
  struct termios raw;

  if (tcgetattr (STDIN_FILENO, &self->saved_termios) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   _("could not read the terminal's settings: %s"), g_strerror (saved_errno));
      return FALSE;
    }

  raw = self->saved_termios;
  cfmakeraw (&raw);
  if (!set_termios (&raw))
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   _("could not put the terminal in raw mode: %s"), g_strerror (saved_errno));
      return FALSE;
    }

  self->raw = TRUE;
  return TRUE;
}

static void
leave_raw_mode (Attach *self)
{
  if (!self->raw)
    return;

  self->raw = FALSE;
  set_termios (&self->saved_termios);
}

/* ---- following the size of our terminal ----------------------------------------- */

static void send_resize (Attach *self);

/* Errors are not worth a word: a session whose terminal has ended has no
 * size to follow, and its end is reported anyway. */
static void
resize_cb (GObject      *object,
           GAsyncResult *result,
           gpointer      user_data)
{
  Attach *self = user_data;

  paddock_ipc_session1_call_resize_finish (PADDOCK_IPC_SESSION1 (object), result, NULL);
  self->resize_in_flight = FALSE;

  if (g_cancellable_is_cancelled (self->cancellable))
    return;

  if (self->resize_again)
    {
      self->resize_again = FALSE;
      send_resize (self);
    }
}

/* One Resize in flight at a time; a window dragged across the screen
 * sends a burst of SIGWINCH, of which only the last size matters. */
static void
send_resize (Attach *self)
{
  struct winsize size = { 0 };

  if (self->resize_in_flight)
    {
      self->resize_again = TRUE;
      return;
    }

  if (ioctl (STDIN_FILENO, TIOCGWINSZ, &size) != 0 || size.ws_col == 0 || size.ws_row == 0)
    return;

  self->resize_in_flight = TRUE;
  paddock_ipc_session1_call_resize (self->session,
                                    MIN (size.ws_col, MAX_TERMINAL_CELLS),
                                    MIN (size.ws_row, MAX_TERMINAL_CELLS),
                                    self->cancellable, resize_cb, self);
}

static gboolean
winch_cb (gpointer user_data)
{
  send_resize (user_data);
  return G_SOURCE_CONTINUE;
}

/* ---- session → stdout ----------------------------------------------------------- */

static gboolean
stdout_writable_cb (int          fd,
                    GIOCondition condition,
                    gpointer     user_data)
{
  Attach *self = user_data;

  self->stdout_source = 0;
  flush_stdout (self);
  if (self->to_stdout->len < MAX_PENDING_OUTPUT)
    watch_socket_input (self);
  return G_SOURCE_REMOVE;
}

/* Also TRUE when stdout is broken (a closed pipe, a closed fd): the write
 * then says what is wrong, rather than a watch that never fires. */
static gboolean
stdout_has_room (void)
{
  struct pollfd pfd = { .fd = STDOUT_FILENO, .events = POLLOUT };

  return poll (&pfd, 1, 0) > 0 && pfd.revents != 0;
}

static gboolean
write_stdout_chunk (Attach *self)
{
  gssize n = write (STDOUT_FILENO, self->to_stdout->data,
                    MIN (self->to_stdout->len, READ_CHUNK_BYTES));

  if (n <= 0)
    {
      if (n < 0 && errno != EINTR && errno != EAGAIN)
        fail_errno (self, errno, _("could not write to standard output"));
      return FALSE;
    }

  self->at_line_start = self->to_stdout->data[n - 1] == '\n';
  g_byte_array_remove_range (self->to_stdout, 0, (guint) n);
  return TRUE;
}

/* stdout is shared with whoever started us, so it stays as it is
 * (blocking): we write when poll says there is room, and read no more of
 * the stream while too much waits, so that Ctrl-] is still seen while a
 * slow pipe drains. */
static void
flush_stdout (Attach *self)
{
  while (self->to_stdout->len > 0 && self->ending == ENDING_NONE)
    {
      if (!stdout_has_room ())
        {
          if (self->stdout_source == 0)
            self->stdout_source = g_unix_fd_add (STDOUT_FILENO, G_IO_OUT,
                                                 stdout_writable_cb, self);
          break;
        }
      if (!write_stdout_chunk (self) && self->ending != ENDING_NONE)
        return;
    }
}

static gboolean open_stream (Attach   *self,
                             guint64   offset,
                             gboolean  have_offset,
                             GError  **error);

/* The bus's owner of our name now, or NULL (none, or the bus did not
 * answer). */
static char *
dup_daemon_owner (Attach *self)
{
  g_autoptr(GVariant) reply = NULL;
  char *owner = NULL;

  reply = g_dbus_connection_call_sync (g_dbus_proxy_get_connection (G_DBUS_PROXY (self->session)),
                                       "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "GetNameOwner",
                                       g_variant_new ("(s)", PADDOCK_BUS_NAME), G_VARIANT_TYPE ("(s)"),
                                       G_DBUS_CALL_FLAGS_NONE, PADDOCKCTL_CALL_TIMEOUT_MS, NULL, NULL);
  if (reply != NULL)
    g_variant_get (reply, "(s)", &owner);
  return owner;
}

static gboolean
pause_done_cb (gpointer user_data)
{
  *(gboolean *) user_data = TRUE;
  return G_SOURCE_REMOVE;
}

/* 100 ms of the main loop's own work: the session's proxy hears of the
 * new owner there (it calls that unique name), and a Ctrl-C or a detach
 * meanwhile is seen. */
static void
pause_a_little (void)
{
  gboolean done = FALSE;
  g_timeout_add (100, pause_done_cb, &done);

  while (!done)
    g_main_context_iteration (NULL, TRUE);
}

/* The stream ended because its daemon went (killed, crashed, replaced),
 * not because the terminal did: the session outlives its daemon, so the
 * next one is waited for (a little) and attached to from the byte we got
 * to, nothing replayed twice and nothing missed that its scrollback
 * kept. FALSE when it was the terminal's end, or no daemon came. */
static gboolean
reattach (Attach *self)
{
  gint64 deadline = g_get_monotonic_time () + REATTACH_WAIT_MS * G_TIME_SPAN_MILLISECOND;
  g_autofree char *owner = dup_daemon_owner (self);
  g_autoptr(GError) error = NULL;

  if (self->daemon_owner == NULL)
    return FALSE;
  /* The bus may not have seen a killed daemon go yet: still the owner,
   * it is asked whether it is there at all. */
  if (g_strcmp0 (owner, self->daemon_owner) == 0)
    {
      g_autoptr(GVariant) pong = NULL;

      pong = g_dbus_connection_call_sync (g_dbus_proxy_get_connection (G_DBUS_PROXY (self->session)),
                                          self->daemon_owner, "/", "org.freedesktop.DBus.Peer", "Ping",
                                          NULL, NULL, G_DBUS_CALL_FLAGS_NO_AUTO_START, PING_TIMEOUT_MS,
                                          NULL, NULL);
      if (pong != NULL)
        return FALSE;
      g_clear_pointer (&owner, g_free);
    }
  while (owner == NULL && g_get_monotonic_time () < deadline && self->ending == ENDING_NONE)
    {
      pause_a_little ();
      owner = dup_daemon_owner (self);
    }
  if (owner == NULL)
    return FALSE;

  g_clear_handle_id (&self->socket_out_source, g_source_remove);
  close (self->socket_fd);
  self->socket_fd = -1;
  /* A proxy made on the old daemon's unique name (create --attach's)
   * would keep calling it: the new one gets a proxy of its own. */
  if (g_dbus_is_unique_name (g_dbus_proxy_get_name (G_DBUS_PROXY (self->session))))
    {
      PaddockIpcSession1 *session = paddockctl_dup_session_on (self->ctl, self->id, owner, &error);

      if (session == NULL)
        {
          g_propagate_error (&self->error, g_steal_pointer (&error));
          finish (self, ENDING_FAILED);
          return TRUE;
        }
      g_object_unref (self->session);
      self->session = session;
    }
  /* A daemon just started may export the session a moment after it owns
   * the name: tried again until the deadline. */
  while (self->ending == ENDING_NONE && !open_stream (self, self->offset, TRUE, &error))
    {
      if (g_get_monotonic_time () >= deadline)
        {
          g_propagate_error (&self->error, g_steal_pointer (&error));
          finish (self, ENDING_FAILED);
          return TRUE;
        }
      g_clear_error (&error);
      pause_a_little ();
    }
  if (self->ending != ENDING_NONE)
    return TRUE;
  g_free (self->daemon_owner);
  self->daemon_owner = g_steal_pointer (&owner);
  if (!self->ctl->json)
    paddockctl_warn (_("the daemon was restarted; attached to %s again"), self->id);
  self->input_refused = FALSE;
  watch_socket_input (self);
  flush_socket (self);
  return TRUE;
}

static gboolean
socket_readable_cb (int          fd,
                    GIOCondition condition,
                    gpointer     user_data)
{
  Attach *self = user_data;
  guint old_len = self->to_stdout->len;
  gssize n;

  g_byte_array_set_size (self->to_stdout, old_len + READ_CHUNK_BYTES);
  n = recv (fd, self->to_stdout->data + old_len, READ_CHUNK_BYTES, MSG_DONTWAIT);
  g_byte_array_set_size (self->to_stdout, old_len + (guint) MAX (n, 0));
  self->offset += (guint64) MAX (n, 0);

  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return G_SOURCE_CONTINUE;

  if (n == 0 || (n < 0 && errno == ECONNRESET))
    {
      /* This source goes either way: reattach() makes a new one. */
      self->socket_in_source = 0;
      flush_stdout (self);
      if (reattach (self))
        return G_SOURCE_REMOVE;
      /* The daemon has sent everything there was: the terminal ended, or
       * the session went away. What is left to print is printed when
       * the loop has ended. */
      self->socket_in_source = 0;
      finish (self, ENDING_STREAM_ENDED);
      return G_SOURCE_REMOVE;
    }

  if (n < 0)
    {
      self->socket_in_source = 0;
      fail_errno (self, errno, _("could not read the session's terminal"));
      return G_SOURCE_REMOVE;
    }

  flush_stdout (self);
  if (self->to_stdout->len >= MAX_PENDING_OUTPUT)
    {
      /* Resumed by stdout_writable_cb(). */
      self->socket_in_source = 0;
      return G_SOURCE_REMOVE;
    }

  return G_SOURCE_CONTINUE;
}

static void
watch_socket_input (Attach *self)
{
  if (self->socket_in_source == 0 && self->ending == ENDING_NONE)
    self->socket_in_source = g_unix_fd_add (self->socket_fd, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                            socket_readable_cb, self);
}

/* ---- stdin → session ------------------------------------------------------------ */

static gboolean
socket_writable_cb (int          fd,
                    GIOCondition condition,
                    gpointer     user_data)
{
  Attach *self = user_data;

  self->socket_out_source = 0;
  flush_socket (self);
  if (self->to_socket->len < MAX_PENDING_INPUT)
    watch_stdin (self);
  return G_SOURCE_REMOVE;
}

/* Returns FALSE when the socket is full (or broken). */
static gboolean
send_pending_input (Attach *self)
{
  while (self->to_socket->len > 0)
    {
      gssize n = send (self->socket_fd, self->to_socket->data, self->to_socket->len,
                       MSG_DONTWAIT | MSG_NOSIGNAL);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return FALSE;
      if (n < 0)
        {
          /* The daemon no longer takes keystrokes (the viewer was dropped
           * or the terminal ended): the read side tells how it ended. */
          if (errno != EPIPE && errno != ECONNRESET)
            paddockctl_warn (_("could not send input to the session: %s"), g_strerror (errno));
          self->input_refused = TRUE;
          g_byte_array_set_size (self->to_socket, 0);
          return FALSE;
        }
      g_byte_array_remove_range (self->to_socket, 0, (guint) n);
    }

  return TRUE;
}

static void
flush_socket (Attach *self)
{
  if (!send_pending_input (self) && self->to_socket->len > 0 && self->socket_out_source == 0)
    self->socket_out_source = g_unix_fd_add (self->socket_fd, G_IO_OUT,
                                             socket_writable_cb, self);
}

static void
queue_input (Attach       *self,
             const guint8 *data,
             gsize         length)
{
  if (length == 0 || !self->input || self->input_refused)
    return;

  g_byte_array_append (self->to_socket, data, (guint) length);
}

static gboolean
stdin_readable_cb (int          fd,
                   GIOCondition condition,
                   gpointer     user_data)
{
  Attach *self = user_data;
  guint8 buffer[4096];
  gssize n = read (STDIN_FILENO, buffer, sizeof buffer);

  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return G_SOURCE_CONTINUE;

  if (n <= 0)
    {
      self->stdin_source = 0;
      self->stdin_done = TRUE;
      /* A terminal in raw mode never reads as ended: it was hung up, and
       * there is no one left to show the session to. A pipe or a file
       * has said all it had; the output goes on. */
      if (self->tty)
        finish (self, ENDING_DETACHED);
      return G_SOURCE_REMOVE;
    }

  if (self->tty)
    {
      const guint8 *detach = memchr (buffer, DETACH_BYTE, (gsize) n);

      if (!self->input && detach == NULL)
        detach = memchr (buffer, INTERRUPT_BYTE, (gsize) n);

      if (detach != NULL)
        {
          /* What was typed before the key still goes; nothing after. */
          queue_input (self, buffer, (gsize) (detach - buffer));
          self->stdin_source = 0;
          finish (self, ENDING_DETACHED);
          return G_SOURCE_REMOVE;
        }
    }

  queue_input (self, buffer, (gsize) n);
  flush_socket (self);
  if (self->to_socket->len >= MAX_PENDING_INPUT)
    {
      /* Resumed by socket_writable_cb(). */
      self->stdin_source = 0;
      return G_SOURCE_REMOVE;
    }

  return G_SOURCE_CONTINUE;
}

static void
watch_stdin (Attach *self)
{
  if (self->stdin_source == 0 && !self->stdin_done && self->ending == ENDING_NONE)
    self->stdin_source = g_unix_fd_add (STDIN_FILENO, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                        stdin_readable_cb, self);
}

/* ---- signals and the bus --------------------------------------------------------- */

typedef struct
{
  Attach *self;
  int     signal_number;
} SignalData;

static gboolean
signal_cb (gpointer user_data)
{
  SignalData *data = user_data;

  if (data->self->ending == ENDING_NONE)
    data->self->signal_number = data->signal_number;
  finish (data->self, ENDING_SIGNALLED);
  return G_SOURCE_CONTINUE;
}

static void
bus_closed_cb (GDBusConnection *connection,
               gboolean         remote_peer_vanished,
               GError          *error,
               gpointer         user_data)
{
  Attach *self = user_data;

  if (self->ending == ENDING_NONE)
    g_set_error_literal (&self->error, G_DBUS_ERROR, G_DBUS_ERROR_DISCONNECTED,
                         _("lost the connection to the D-Bus session bus"));
  finish (self, ENDING_FAILED);
}

/* ---- after the loop ------------------------------------------------------------------ */

/* Prints what is still pending, blocking: the last bytes of a session
 * that ended are what a script most wants. */
static void
drain_stdout (Attach *self)
{
  while (self->to_stdout->len > 0)
    {
      gssize n = write (STDOUT_FILENO, self->to_stdout->data, self->to_stdout->len);

      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        {
          struct pollfd pfd = { .fd = STDOUT_FILENO, .events = POLLOUT };

          poll (&pfd, 1, -1);
          continue;
        }
      if (n <= 0)
        break;

      self->at_line_start = self->to_stdout->data[n - 1] == '\n';
      g_byte_array_remove_range (self->to_stdout, 0, (guint) n);
    }
}

/* Keystrokes typed just before Ctrl-] still reach the session, unless the
 * daemon does not take them within a second. */
static void
drain_socket (Attach *self)
{
  gint64 deadline = g_get_monotonic_time () + INPUT_FLUSH_WAIT_MS * G_TIME_SPAN_MILLISECOND;

  while (!send_pending_input (self) && self->to_socket->len > 0)
    {
      struct pollfd pfd = { .fd = self->socket_fd, .events = POLLOUT };
      gint64 left_ms = (deadline - g_get_monotonic_time ()) / G_TIME_SPAN_MILLISECOND;

      if (left_ms <= 0 || (poll (&pfd, 1, (int) left_ms) < 0 && errno != EINTR))
        break;
    }
}

/* Waits for a pending Resize to give up, so that its callback does not
 * outlive us. */
static void
cancel_resize (Attach *self)
{
  g_cancellable_cancel (self->cancellable);
  while (self->resize_in_flight)
    g_main_context_iteration (NULL, TRUE);
}

static gboolean
state_is_live (const char *state)
{
  return g_str_equal (state, "starting") || g_str_equal (state, "running");
}

static GVariant *
get_properties (Attach  *self,
                GError **error)
{
  g_autofree char *path = paddockctl_session_path (self->id);
  g_autoptr(GVariant) reply = NULL;

  reply = g_dbus_connection_call_sync (self->ctl->bus, PADDOCK_BUS_NAME, path,
                                       "org.freedesktop.DBus.Properties", "GetAll",
                                       g_variant_new ("(s)", SESSION_INTERFACE),
                                       G_VARIANT_TYPE ("(a{sv})"),
                                       G_DBUS_CALL_FLAGS_NONE, PADDOCKCTL_CALL_TIMEOUT_MS,
                                       NULL, error);
  if (reply == NULL)
    {
      paddockctl_check_session_error (self->ctl, self->id, error);
      return NULL;
    }

  return g_variant_get_child_value (reply, 0);
}

static void
session_properties_changed_cb (GDBusConnection *connection,
                               const char      *sender,
                               const char      *object_path,
                               const char      *interface_name,
                               const char      *signal_name,
                               GVariant        *parameters,
                               gpointer         user_data)
{
  gboolean *changed = user_data;

  *changed = TRUE;
}

static gboolean
wait_timed_out_cb (gpointer user_data)
{
  gboolean *timed_out = user_data;

  *timed_out = TRUE;
  return G_SOURCE_REMOVE;
}

/* Sleeps until the session's properties change or @wait_ms pass. The
 * signal only wakes us: what the state is, is read again with GetAll. */
static void
wait_for_properties_change (gboolean *changed,
                            guint     wait_ms)
{
  gboolean timed_out = FALSE;
  guint timeout_id = g_timeout_add (wait_ms, wait_timed_out_cb, &timed_out);

  while (!*changed && !timed_out)
    g_main_context_iteration (NULL, TRUE);
  if (!timed_out)
    g_source_remove (timeout_id);
  *changed = FALSE;
}

/* The stream ends when the session's terminal does; the session's state
 * follows as soon as the daemon has reaped it and recorded the end. Says
 * which, in one line. The end is awaited through the session's
 * PropertiesChanged, not by polling: a poll every 100 ms kept the client
 * running ~100 ms after its agent had ended (issue #23). The poll stays
 * as a fallback should a signal be lost on the way. */
static int
report_stream_end (Attach *self)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) properties = NULL;
  GDBusConnection *connection = g_dbus_proxy_get_connection (G_DBUS_PROXY (self->session));
  gint64 deadline = g_get_monotonic_time () + END_STATE_WAIT_MS * G_TIME_SPAN_MILLISECOND;
  const char *state = "";
  gint32 exit_status = -1;
  gboolean changed = FALSE;
  guint subscription;

  /* Before the first GetAll, so that no change falls between the two.
   * Any sender: a forged signal could only make us read the state sooner. */
  subscription = g_dbus_connection_signal_subscribe (connection, NULL,
                                                     "org.freedesktop.DBus.Properties",
                                                     "PropertiesChanged",
                                                     g_dbus_proxy_get_object_path (G_DBUS_PROXY (self->session)),
                                                     SESSION_INTERFACE, G_DBUS_SIGNAL_FLAGS_NONE,
                                                     session_properties_changed_cb, &changed, NULL);
  for (;;)
    {
      gint64 left_ms;

      g_clear_pointer (&properties, g_variant_unref);
      if (!(properties = get_properties (self, &error)))
        {
          g_dbus_connection_signal_unsubscribe (connection, subscription);
          /* Destroyed while we watched: that is how it ended. */
          if (g_error_matches (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND))
            {
              if (!self->ctl->json)
                paddockctl_warn (_("session %s was destroyed"), self->id);
              return PADDOCKCTL_EXIT_OK;
            }
          return paddockctl_fail (self->ctl, error);
        }

      if (!g_variant_lookup (properties, "State", "&s", &state))
        state = "";
      left_ms = (deadline - g_get_monotonic_time ()) / G_TIME_SPAN_MILLISECOND;
      if (!state_is_live (state) || left_ms <= 0)
        break;
      wait_for_properties_change (&changed, (guint) MIN (left_ms, END_STATE_POLL_MS));
    }
  g_dbus_connection_signal_unsubscribe (connection, subscription);

  if (self->ctl->json)
    return PADDOCKCTL_EXIT_OK;

  if (state_is_live (state))
    {
      /* The programs closed the terminal but some of them still run. */
      paddockctl_warn (_("the terminal of session %s was closed; the session is still %s"),
                       self->id, state);
      return PADDOCKCTL_EXIT_OK;
    }

  g_variant_lookup (properties, "ExitStatus", "i", &exit_status);
  if (exit_status >= 0)
    paddockctl_warn (_("session %s ended (%s, exit status %d)"), self->id, state, exit_status);
  else if (exit_status == PADDOCK_EXIT_STATUS_UNKNOWN)
    paddockctl_warn (_("session %s ended (%s, exit status unknown)"), self->id, state);
  else
    paddockctl_warn (_("session %s ended (%s)"), self->id, state);

  return PADDOCKCTL_EXIT_OK;
}

/* ---- attach ------------------------------------------------------------------------ */

/* What both ways of attaching share, once the session is known. */
static void
attach_init (Attach             *self,
             Paddockctl         *ctl,
             PaddockIpcSession1 *session,
             const char         *id,
             gboolean            input)
{
  self->ctl = ctl;
  self->session = g_object_ref (session);
  self->id = id;
  self->loop = g_main_loop_new (NULL, FALSE);
  self->cancellable = g_cancellable_new ();
  self->to_stdout = g_byte_array_new ();
  self->to_socket = g_byte_array_new ();
  self->tty = isatty (STDIN_FILENO);
  self->input = input;
  self->at_line_start = TRUE;
  self->daemon_owner = g_dbus_proxy_get_name_owner (G_DBUS_PROXY (session));
}


static gboolean
open_stream (Attach   *self,
             guint64   offset,
             gboolean  have_offset,
             GError  **error)
{
  g_auto(GVariantBuilder) options = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) handle = NULL;
  g_autoptr(GUnixFDList) fd_list = NULL;
  guint64 first_offset = 0;
  gint32 index;

  if (have_offset)
    g_variant_builder_add (&options, "{sv}", "offset", g_variant_new_uint64 (offset));
  g_variant_builder_add (&options, "{sv}", "input", g_variant_new_boolean (self->input));

  if (!paddock_ipc_session1_call_attach_sync (self->session, g_variant_builder_end (&options),
                                              NULL, &handle, &first_offset, &fd_list,
                                              NULL, error))
    {
      paddockctl_check_session_error (self->ctl, self->id, error);
      return FALSE;
    }

  index = g_variant_get_handle (handle);
  if (fd_list == NULL || index < 0 || index >= g_unix_fd_list_get_length (fd_list))
    {
      g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                           _("the daemon answered Attach without a terminal stream"));
      return FALSE;
    }

  /* g_unix_fd_list_get() dups with O_CLOEXEC; the list closes its own. */
  if ((self->socket_fd = g_unix_fd_list_get (fd_list, index, error)) < 0)
    return FALSE;
  self->offset = first_offset;

  return g_unix_set_fd_nonblocking (self->socket_fd, TRUE, error);
}

/* Runs the relay once the stream is open; returns the exit code. */
static int
relay (Attach *self)
{
  g_autoptr(GError) error = NULL;
  struct sigaction ignore = { .sa_handler = SIG_IGN };

  for (gsize i = 0; i < G_N_ELEMENTS (handled_signals); i++)
    {
      SignalData *data = g_new0 (SignalData, 1);

      data->self = self;
      data->signal_number = handled_signals[i];
      self->signal_sources[i] = g_unix_signal_add_full (G_PRIORITY_DEFAULT, handled_signals[i],
                                                        signal_cb, data, g_free);
    }
  self->closed_id = g_signal_connect (self->ctl->bus, "closed",
                                      G_CALLBACK (bus_closed_cb), self);

  /* A reader of our output that went away is an error to report, with
   * the terminal put back first: SIGPIPE would kill us in raw mode. */
  self->have_saved_sigpipe = sigaction (SIGPIPE, &ignore, &self->saved_sigpipe) == 0;

  if (self->tty)
    {
      if (!self->ctl->json)
        paddockctl_warn (self->input ? _("attached to %s; press Ctrl-] to detach")
                                     : _("attached to %s (read-only); press Ctrl-] to detach"),
                         self->id);
      if (!enter_raw_mode (self, &error))
        {
          g_propagate_error (&self->error, g_steal_pointer (&error));
          self->ending = ENDING_FAILED;
        }
      else if (!self->fixed_size)
        {
          self->winch_source = g_unix_signal_add (SIGWINCH, winch_cb, self);
          send_resize (self);
        }
    }

  /* Without a terminal, --no-input leaves stdin alone entirely. */
  self->stdin_done = !self->tty && !self->input;

  if (self->ending == ENDING_NONE)
    {
      watch_socket_input (self);
      watch_stdin (self);
      g_main_loop_run (self->loop);
    }

  g_clear_handle_id (&self->socket_in_source, g_source_remove);
  g_clear_handle_id (&self->socket_out_source, g_source_remove);
  g_clear_handle_id (&self->stdin_source, g_source_remove);
  g_clear_handle_id (&self->stdout_source, g_source_remove);
  g_clear_handle_id (&self->winch_source, g_source_remove);

  if (self->ending == ENDING_DETACHED || self->ending == ENDING_STREAM_ENDED)
    drain_socket (self);
  if (self->ending == ENDING_STREAM_ENDED)
    drain_stdout (self);
  cancel_resize (self);

  leave_raw_mode (self);

  for (gsize i = 0; i < G_N_ELEMENTS (handled_signals); i++)
    g_clear_handle_id (&self->signal_sources[i], g_source_remove);
  if (self->have_saved_sigpipe)
    sigaction (SIGPIPE, &self->saved_sigpipe, NULL);

  /* Notes start on a line of their own. */
  if (!self->at_line_start && !self->ctl->json && self->ending != ENDING_FAILED &&
      isatty (STDOUT_FILENO))
    {
      fputc ('\n', stdout);
      fflush (stdout);
    }

  switch (self->ending)
    {
    case ENDING_DETACHED:
      if (self->tty && !self->ctl->json)
        paddockctl_warn (_("detached from %s; it keeps running"), self->id);
      return PADDOCKCTL_EXIT_OK;

    case ENDING_STREAM_ENDED:
      return report_stream_end (self);

    case ENDING_SIGNALLED:
      /* Ctrl-C is how people stop watching (as `logs --follow`); other
       * signals read as such to the shell. */
      return self->signal_number == SIGINT ? PADDOCKCTL_EXIT_OK : 128 + self->signal_number;

    case ENDING_FAILED:
      return paddockctl_fail (self->ctl, self->error);

    case ENDING_NONE:
    default:
      g_assert_not_reached ();
    }
}

int
paddockctl_attach (Paddockctl  *ctl,
                   int          argc,
                   char       **argv)
{
  const char *command_path = "paddockctl attach";
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockIpcSession1) session = NULL;
  g_autofree char *id = NULL;
  g_autofree char *offset_text = NULL;
  gboolean no_input = FALSE;
  const GOptionEntry entries[] = {
    { "no-input", 0, 0, G_OPTION_ARG_NONE, &no_input,
      N_("Only watch: send nothing to the session"), NULL },
    { "offset", 0, 0, G_OPTION_ARG_STRING, &offset_text,
      N_("Replay from this absolute byte offset (default: the oldest kept)"), N_("N") },
    { NULL }
  };
  g_auto(Attach) self = { 0 };
  int exit_code = PADDOCKCTL_EXIT_OK;
  guint64 offset = 0;

  self.socket_fd = -1;

  context = paddockctl_option_context_new (ctl, "ID", ATTACH_SUMMARY, entries);
  if (!paddockctl_parse_options (ctl, context, command_path, &argc, &argv, &exit_code))
    return exit_code;

  if (argc < 2)
    return paddockctl_usage_error (ctl, command_path, _("missing session ID"));
  if (argc > 2)
    return paddockctl_usage_error (ctl, command_path, _("unexpected argument “%s”"), argv[2]);
  if (!(id = paddockctl_dup_session_id (argv[1])))
    return paddockctl_usage_error (ctl, command_path,
                                   _("invalid session id “%s”: expected 12 hexadecimal digits, "
                                     "as printed by “paddockctl create” or “paddockctl list”"),
                                   argv[1]);
  if (offset_text != NULL &&
      !g_ascii_string_to_unsigned (offset_text, 10, 0, G_MAXINT64, &offset, NULL))
    return paddockctl_usage_error (ctl, command_path,
                                   _("invalid --offset “%s”: expected a byte offset (0 or more)"),
                                   offset_text);

  if (!(session = paddockctl_dup_session (ctl, id, &error)))
    return paddockctl_fail (ctl, error);

  attach_init (&self, ctl, session, id, !no_input);

  /* Errors (no such session, too many viewers) come before the terminal
   * changes, so they print as for any other command. */
  if (!open_stream (&self, offset, offset_text != NULL, &error))
    return paddockctl_fail (ctl, error);

  return relay (&self);
}

/* `paddockctl create --attach`: the terminal of the session just made, on
 * the socket CreateSession attached as its first viewer (@socket_fd, ours
 * to close), from its first byte; then as `paddockctl attach ID`, but for
 * the size when @fixed_size (the user gave one with --size): the session
 * keeps it rather than follow ours. */
int
paddockctl_attach_socket (Paddockctl *ctl,
                          const char *id,
                          int         socket_fd,
                          gboolean    fixed_size)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockIpcSession1) session = NULL;
  g_autofree char *owner = NULL;
  g_auto(Attach) self = { 0 };

  /* The daemon that just answered CreateSession: its unique name spares
   * the session's proxy a GetNameOwner round trip before the relay
   * starts (reattach() makes another if that daemon goes). */
  if (ctl->manager != NULL)
    owner = g_dbus_proxy_get_name_owner (G_DBUS_PROXY (ctl->manager));
  self.socket_fd = socket_fd;
  if (!(session = paddockctl_dup_session_on (ctl, id, owner, &error)) ||
      !g_unix_set_fd_nonblocking (self.socket_fd, TRUE, &error))
    return paddockctl_fail (ctl, error);

  attach_init (&self, ctl, session, id, TRUE);
  self.fixed_size = fixed_size;

  return relay (&self);
}
