/* paddock-terminal.c — a session's terminal: PTY master, scrollback, viewers, input
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The terminal owns the PTY master of a session's agent: what the agent
 * writes goes into a bounded scrollback ring, from which every attached
 * viewer (a stream socket, CreateSession's "terminal" or Attach's) is fed
 * at its own offset; what viewers and SendInput type waits in one bounded
 * queue until the PTY takes it. It knows nothing of the session: it
 * reports with signals ("output" when the end offset moved, throttled;
 * "hangup" once every slave fd is closed) and is told what to do by the
 * session's method handlers.
 */

#include "config.h"

#include <errno.h>
#include <glib-unix.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <gio/gunixfdlist.h>

#include "paddock-autofd.h"
#include "paddock-error.h"
#include "paddock-scrollback.h"
#include "paddock-terminal.h"

/* PropertiesChanged-worthy "output" at most this often: a flood of output
 * must not turn into a flood of bus messages. */
#define OFFSET_NOTIFY_MS 50
#define VIEWER_CHUNK     (64 * 1024)

struct _PaddockTerminal
{
  GObject            parent_instance;

  PaddockScrollback *scrollback;
  char              *scrollback_path;   /* where it is kept while a PTY writes, or NULL */
  int                pty_master;
  guint              pty_source;
  guint              pty_out_source;
  GByteArray        *pending_input;
  guint              offset_notify_id;

  /* Attached viewers (PaddockTerminalViewer), each at its own offset in
   * the scrollback. */
  GPtrArray         *viewers;
  gboolean           finished;
};

struct _PaddockTerminalViewer
{
  PaddockTerminal *terminal;   /* borrowed: the terminal owns its viewers */
  int              fd;
  guint64          offset;     /* the next byte this viewer gets */
  guint            out_source;
  guint            in_source;
  gboolean         input_paused;  /* stopped reading: the PTY's input queue is full */
};

enum {
  SIGNAL_OUTPUT,
  SIGNAL_HANGUP,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (PaddockTerminal, paddock_terminal, G_TYPE_OBJECT)

static void
viewer_free (PaddockTerminalViewer *viewer)
{
  g_clear_handle_id (&viewer->out_source, g_source_remove);
  g_clear_handle_id (&viewer->in_source, g_source_remove);
  paddock_close_fd (&viewer->fd);
  g_free (viewer);
}

/* ------------------------------------------------------------------------ */
/* The PTY                                                                   */

static gboolean
paddock_terminal_offset_notify_cb (gpointer user_data)
{
  PaddockTerminal *self = user_data;

  self->offset_notify_id = 0;
  g_signal_emit (self, signals[SIGNAL_OUTPUT], 0,
                 paddock_scrollback_get_end_offset (self->scrollback));
  return G_SOURCE_REMOVE;
}

static gboolean
paddock_terminal_pty_readable_cb (int          fd,
                                  GIOCondition condition,
                                  gpointer     user_data)
{
  PaddockTerminal *self = user_data;
  guint8 buffer[64 * 1024];

  /* Drain what is there, but give the main loop back after a while so a
   * flooding agent cannot starve the daemon's other clients. */
  for (guint round = 0; round < 16; round++)
    {
      gssize n = read (fd, buffer, sizeof buffer);

      if (n > 0)
        {
          paddock_scrollback_append (self->scrollback, buffer, (gsize) n);
          continue;
        }

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        break;

      /* EIO (or 0): every slave fd is closed, the terminal is finished.
       * Viewers get what is left, then the end of the stream. The watch
       * goes too, also when paddock_terminal_drain() read the end: left
       * behind, it outlived the terminal and fired on a freed one (a
       * sandbox that failed at once took the daemon down with it). */
      g_clear_handle_id (&self->pty_source, g_source_remove);
      self->finished = TRUE;
      /* Nothing more will be written: its file is complete. */
      paddock_scrollback_close_file (self->scrollback);
      for (guint i = self->viewers->len; i > 0; i--)
        paddock_terminal_flush_viewer (self, g_ptr_array_index (self->viewers, i - 1));
      if (self->offset_notify_id == 0)
        paddock_terminal_offset_notify_cb (self);
      g_signal_emit (self, signals[SIGNAL_HANGUP], 0);
      return G_SOURCE_REMOVE;
    }

  for (guint i = self->viewers->len; i > 0; i--)
    paddock_terminal_flush_viewer (self, g_ptr_array_index (self->viewers, i - 1));

  if (self->offset_notify_id == 0)
    self->offset_notify_id = g_timeout_add (OFFSET_NOTIFY_MS, paddock_terminal_offset_notify_cb, self);

  return G_SOURCE_CONTINUE;
}

static gboolean paddock_terminal_viewer_readable_cb (int          fd,
                                                     GIOCondition condition,
                                                     gpointer     user_data);

/* The input queue has room again: viewers that stopped reading because it
 * was full read on (their keystrokes waited in their own sockets). */
static void
paddock_terminal_resume_viewer_input (PaddockTerminal *self)
{
  if (self->pending_input->len >= PADDOCK_TERMINAL_PENDING_INPUT_MAX)
    return;

  for (guint i = 0; i < self->viewers->len; i++)
    {
      PaddockTerminalViewer *viewer = g_ptr_array_index (self->viewers, i);

      if (!viewer->input_paused)
        continue;
      viewer->input_paused = FALSE;
      viewer->in_source = g_unix_fd_add (viewer->fd, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                         paddock_terminal_viewer_readable_cb, viewer);
    }
}

static gboolean
paddock_terminal_pty_writable_cb (int          fd,
                                  GIOCondition condition,
                                  gpointer     user_data)
{
  PaddockTerminal *self = user_data;
  gboolean done = TRUE;

  while (self->pending_input->len > 0)
    {
      gssize n = write (fd, self->pending_input->data, self->pending_input->len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        {
          done = FALSE;
          break;
        }
      if (n < 0)
        {
          /* The terminal is gone (EIO once nothing holds its other end):
           * what was typed has nowhere to go. */
          g_byte_array_set_size (self->pending_input, 0);
          break;
        }
      g_byte_array_remove_range (self->pending_input, 0, (guint) n);
    }

  paddock_terminal_resume_viewer_input (self);
  if (!done)
    return G_SOURCE_CONTINUE;
  self->pty_out_source = 0;
  return G_SOURCE_REMOVE;
}

static void
paddock_terminal_write_soon (PaddockTerminal *self)
{
  if (self->pty_out_source == 0)
    self->pty_out_source = g_unix_fd_add (self->pty_master, G_IO_OUT,
                                          paddock_terminal_pty_writable_cb, self);
}

/**
 * paddock_terminal_set_window_size:
 * @fd: a PTY master, not necessarily a terminal's yet
 *
 * Sets the size the program on the PTY sees (TIOCSWINSZ).
 */
void
paddock_terminal_set_window_size (int     fd,
                                  guint16 columns,
                                  guint16 rows)
{
  struct winsize size = { .ws_row = rows, .ws_col = columns };

  ioctl (fd, TIOCSWINSZ, &size);
}

/**
 * paddock_terminal_take_pty:
 * @master: (transfer full): the PTY master of the session's agent
 *
 * From now on what the agent writes is read into the scrollback and fed
 * to viewers, and queued input is written to it.
 */
void
paddock_terminal_take_pty (PaddockTerminal *self,
                           int              master)
{
  g_return_if_fail (PADDOCK_IS_TERMINAL (self));
  g_return_if_fail (master >= 0);
  g_return_if_fail (self->pty_master < 0);

  self->pty_master = master;
  g_unix_set_fd_nonblocking (self->pty_master, TRUE, NULL);
  if (self->scrollback_path != NULL)
    {
      g_autoptr(GError) error = NULL;

      if (!paddock_scrollback_persist (self->scrollback, self->scrollback_path, &error))
        g_message ("%s; the scrollback is kept in memory only", error->message);
    }
  self->pty_source = g_unix_fd_add (self->pty_master, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                    paddock_terminal_pty_readable_cb, self);
}

/* A PTY whose slave side still has a holder: input typed now can arrive. */
gboolean
paddock_terminal_is_live (PaddockTerminal *self)
{
  g_return_val_if_fail (PADDOCK_IS_TERMINAL (self), FALSE);

  return self->pty_master >= 0 && self->pty_source != 0;
}

/* Reads what the PTY holds now, as its watch would: so that the last words
 * of a program that just ended are in the scrollback before anyone looks. */
void
paddock_terminal_drain (PaddockTerminal *self)
{
  g_return_if_fail (PADDOCK_IS_TERMINAL (self));

  if (self->pty_source != 0)
    paddock_terminal_pty_readable_cb (self->pty_master, G_IO_IN, self);
}

/* The PTY closed and every viewer dropped: the session is gone. The
 * scrollback stays readable; an "output" already due still comes. */
void
paddock_terminal_close (PaddockTerminal *self)
{
  g_return_if_fail (PADDOCK_IS_TERMINAL (self));

  g_clear_handle_id (&self->pty_source, g_source_remove);
  g_clear_handle_id (&self->pty_out_source, g_source_remove);
  paddock_close_fd (&self->pty_master);
  g_ptr_array_set_size (self->viewers, 0);
  paddock_scrollback_close_file (self->scrollback);
}

guint64
paddock_terminal_get_first_offset (PaddockTerminal *self)
{
  g_return_val_if_fail (PADDOCK_IS_TERMINAL (self), 0);

  return paddock_scrollback_get_first_offset (self->scrollback);
}

guint64
paddock_terminal_get_end_offset (PaddockTerminal *self)
{
  g_return_val_if_fail (PADDOCK_IS_TERMINAL (self), 0);

  return paddock_scrollback_get_end_offset (self->scrollback);
}

/* What the scrollback holds from @offset (or from its oldest byte, if the
 * ring overtook it: @out_start says where the bytes start). */
GBytes *
paddock_terminal_read (PaddockTerminal *self,
                       guint64          offset,
                       gsize            max_bytes,
                       guint64         *out_start)
{
  g_return_val_if_fail (PADDOCK_IS_TERMINAL (self), NULL);

  return paddock_scrollback_read (self->scrollback, offset, max_bytes, out_start);
}

/**
 * paddock_terminal_queue_input:
 *
 * Queues @data to be typed into a live terminal (paddock_terminal_is_live()).
 *
 * Returns: %FALSE, nothing queued, when the queue would grow past
 *   %PADDOCK_TERMINAL_PENDING_INPUT_MAX: the program is not reading.
 */
gboolean
paddock_terminal_queue_input (PaddockTerminal *self,
                              const guint8    *data,
                              gsize            length)
{
  g_return_val_if_fail (PADDOCK_IS_TERMINAL (self), FALSE);
  g_return_val_if_fail (self->pty_master >= 0, FALSE);
  g_return_val_if_fail (data != NULL || length == 0, FALSE);

  if (length > PADDOCK_TERMINAL_PENDING_INPUT_MAX - MIN (self->pending_input->len,
                                                         PADDOCK_TERMINAL_PENDING_INPUT_MAX))
    return FALSE;

  g_byte_array_append (self->pending_input, data, (guint) length);
  paddock_terminal_write_soon (self);
  return TRUE;
}

/* The program's window size, where it still has a terminal. */
void
paddock_terminal_resize (PaddockTerminal *self,
                         guint16          columns,
                         guint16          rows)
{
  g_return_if_fail (PADDOCK_IS_TERMINAL (self));

  if (self->pty_master >= 0)
    paddock_terminal_set_window_size (self->pty_master, columns, rows);
}

/* ------------------------------------------------------------------------ */
/* Viewers                                                                   */

static void
paddock_terminal_drop_viewer (PaddockTerminal       *self,
                              PaddockTerminalViewer *viewer)
{
  g_ptr_array_remove (self->viewers, viewer);
}

static gboolean
paddock_terminal_viewer_writable_cb (int          fd,
                                     GIOCondition condition,
                                     gpointer     user_data)
{
  PaddockTerminalViewer *viewer = user_data;

  viewer->out_source = 0;
  paddock_terminal_flush_viewer (viewer->terminal, viewer);
  return G_SOURCE_REMOVE;
}

/**
 * paddock_terminal_flush_viewer:
 *
 * Sends @viewer what it has not seen yet, as far as its socket takes it;
 * the rest waits in the scrollback, not in a queue of ours. A viewer the
 * ring has overtaken continues at the oldest byte still there. A viewer
 * that got everything of a finished terminal, or whose socket failed, is
 * dropped (and freed).
 */
void
paddock_terminal_flush_viewer (PaddockTerminal       *self,
                               PaddockTerminalViewer *viewer)
{
  g_return_if_fail (PADDOCK_IS_TERMINAL (self));
  g_return_if_fail (viewer != NULL && viewer->terminal == self);

  if (viewer->out_source != 0)
    return;

  while (viewer->offset < paddock_scrollback_get_end_offset (self->scrollback))
    {
      g_autoptr(GBytes) chunk = NULL;
      guint64 start = 0;
      gssize n;

      chunk = paddock_scrollback_read (self->scrollback, viewer->offset, VIEWER_CHUNK, &start);
      viewer->offset = start;
      n = send (viewer->fd, g_bytes_get_data (chunk, NULL), g_bytes_get_size (chunk),
                MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        {
          viewer->out_source = g_unix_fd_add (viewer->fd, G_IO_OUT,
                                              paddock_terminal_viewer_writable_cb, viewer);
          return;
        }
      if (n < 0)
        {
          paddock_terminal_drop_viewer (self, viewer);
          return;
        }
      viewer->offset += (guint64) n;
    }

  /* Everything delivered and nothing more will come: end of stream. */
  if (self->finished)
    paddock_terminal_drop_viewer (self, viewer);
}

/* Keystrokes from a viewer go to the terminal like SendInput's. */
static gboolean
paddock_terminal_viewer_readable_cb (int          fd,
                                     GIOCondition condition,
                                     gpointer     user_data)
{
  PaddockTerminalViewer *viewer = user_data;
  PaddockTerminal *self = viewer->terminal;
  guint8 buffer[4096];
  gsize room = PADDOCK_TERMINAL_PENDING_INPUT_MAX - MIN (self->pending_input->len,
                                                         PADDOCK_TERMINAL_PENDING_INPUT_MAX);
  gssize n;

  /* Backpressure, not loss: while the program does not read its terminal
   * and the queue is full, stop reading the viewer. Its keystrokes wait in
   * its socket, and the viewer blocks (or polls) once that fills. */
  if (self->pty_master >= 0 && room == 0)
    {
      viewer->input_paused = TRUE;
      viewer->in_source = 0;
      return G_SOURCE_REMOVE;
    }

  n = recv (fd, buffer, self->pty_master >= 0 ? MIN (sizeof buffer, room) : sizeof buffer, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return G_SOURCE_CONTINUE;
  if (n <= 0)
    {
      /* The viewer detached: nothing else changes. */
      viewer->in_source = 0;
      paddock_terminal_drop_viewer (self, viewer);
      return G_SOURCE_REMOVE;
    }

  if (self->pty_master >= 0)
    {
      g_byte_array_append (self->pending_input, buffer, (guint) n);
      paddock_terminal_write_soon (self);
    }

  return G_SOURCE_CONTINUE;
}

guint
paddock_terminal_get_n_viewers (PaddockTerminal *self)
{
  g_return_val_if_fail (PADDOCK_IS_TERMINAL (self), 0);

  return self->viewers->len;
}

/**
 * paddock_terminal_add_viewer:
 * @fd: (transfer full): one end of a stream socket pair
 * @offset: where its replay starts (clamped to what the ring holds)
 * @input: whether what it writes is typed into the terminal
 *
 * Nothing is sent yet: the caller answers whoever asked first, then calls
 * paddock_terminal_flush_viewer().
 *
 * Returns: (transfer none): the viewer
 */
PaddockTerminalViewer *
paddock_terminal_add_viewer (PaddockTerminal *self,
                             int              fd,
                             guint64          offset,
                             gboolean         input)
{
  PaddockTerminalViewer *viewer;

  g_return_val_if_fail (PADDOCK_IS_TERMINAL (self), NULL);
  g_return_val_if_fail (fd >= 0, NULL);

  viewer = g_new0 (PaddockTerminalViewer, 1);
  viewer->terminal = self;
  viewer->fd = fd;
  /* Not made non-blocking: every send and recv on it says MSG_DONTWAIT.
   * O_NONBLOCK is a flag of the open file description, which for the
   * creator's socket (CreateSession's "terminal") the caller shares. */
  /* Where the replay starts: never before what the ring still holds. */
  viewer->offset = MIN (MAX (offset, paddock_scrollback_get_first_offset (self->scrollback)),
                        paddock_scrollback_get_end_offset (self->scrollback));
  if (input)
    viewer->in_source = g_unix_fd_add (viewer->fd, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                       paddock_terminal_viewer_readable_cb, viewer);
  else
    shutdown (viewer->fd, SHUT_RD);
  g_ptr_array_add (self->viewers, viewer);
  return viewer;
}

/* The offset its replay starts at, as paddock_terminal_add_viewer() set it. */
guint64
paddock_terminal_viewer_get_offset (PaddockTerminalViewer *viewer)
{
  g_return_val_if_fail (viewer != NULL, 0);

  return viewer->offset;
}

/**
 * paddock_terminal_attach:
 * @offset: where its replay starts (clamped to what the ring holds)
 * @input: whether what it writes is typed into the terminal
 * @out_handle: (out): the index of the viewer's socket in the list
 * @out_viewer: (out) (transfer none): the viewer, for
 *   paddock_terminal_flush_viewer() once the caller answered
 *
 * Attach: a new viewer on our end of a stream socket pair; the other end
 * is in the list returned, for the caller to pass on. At most
 * %PADDOCK_TERMINAL_MAX_VIEWERS at once.
 *
 * Returns: (transfer full): the list with the caller's end, or %NULL
 */
GUnixFDList *
paddock_terminal_attach (PaddockTerminal        *self,
                         guint64                 offset,
                         gboolean                input,
                         int                    *out_handle,
                         PaddockTerminalViewer **out_viewer,
                         GError                **error)
{
  g_autoptr(GUnixFDList) fd_list = NULL;
  paddock_autofd int ours = -1;
  paddock_autofd int theirs = -1;
  int pair[2];

  g_return_val_if_fail (PADDOCK_IS_TERMINAL (self), NULL);

  if (self->viewers->len >= PADDOCK_TERMINAL_MAX_VIEWERS)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_QUOTA_EXCEEDED,
                   "At most %u viewers per session", PADDOCK_TERMINAL_MAX_VIEWERS);
      return NULL;
    }
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "Could not make the viewer's socket: %s", g_strerror (saved_errno));
      return NULL;
    }
  ours = pair[0];
  theirs = pair[1];

  fd_list = g_unix_fd_list_new ();
  *out_handle = g_unix_fd_list_append (fd_list, theirs, error);
  if (*out_handle < 0)
    return NULL;

  *out_viewer = paddock_terminal_add_viewer (self, paddock_steal_fd (&ours), offset, input);
  return g_steal_pointer (&fd_list);
}

/* The last line that is not blank in the last 4 KiB written on the
 * terminal (a helper's failure is one line, "paddock-sandbox: why"), or
 * NULL when there is none. */
char *
paddock_terminal_dup_last_line (PaddockTerminal *self)
{
  g_autoptr(GBytes) tail = NULL;
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  guint64 end;

  g_return_val_if_fail (PADDOCK_IS_TERMINAL (self), NULL);

  end = paddock_scrollback_get_end_offset (self->scrollback);
  tail = paddock_terminal_read (self, end > 4096 ? end - 4096 : 0, 4096, NULL);
  text = g_utf8_make_valid (g_bytes_get_data (tail, NULL) != NULL ? g_bytes_get_data (tail, NULL) : "",
                            (gssize) g_bytes_get_size (tail));
  lines = g_strsplit_set (text, "\r\n", -1);
  for (guint i = g_strv_length (lines); i > 0; i--)
    if (g_strstrip (lines[i - 1])[0] != '\0')
      return g_strdup (lines[i - 1]);
  return NULL;
}

/* ------------------------------------------------------------------------ */

static void
paddock_terminal_dispose (GObject *object)
{
  PaddockTerminal *self = PADDOCK_TERMINAL (object);

  g_clear_handle_id (&self->pty_source, g_source_remove);
  g_clear_handle_id (&self->pty_out_source, g_source_remove);
  g_clear_handle_id (&self->offset_notify_id, g_source_remove);
  if (self->viewers != NULL)
    g_ptr_array_set_size (self->viewers, 0);
  paddock_close_fd (&self->pty_master);

  G_OBJECT_CLASS (paddock_terminal_parent_class)->dispose (object);
}

static void
paddock_terminal_finalize (GObject *object)
{
  PaddockTerminal *self = PADDOCK_TERMINAL (object);

  g_clear_pointer (&self->scrollback, paddock_scrollback_free);
  g_clear_pointer (&self->scrollback_path, g_free);
  g_clear_pointer (&self->pending_input, g_byte_array_unref);
  g_clear_pointer (&self->viewers, g_ptr_array_unref);

  G_OBJECT_CLASS (paddock_terminal_parent_class)->finalize (object);
}

static void
paddock_terminal_class_init (PaddockTerminalClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_terminal_dispose;
  object_class->finalize = paddock_terminal_finalize;

  /**
   * PaddockTerminal::output:
   * @end_offset: the offset just past the last byte the program wrote
   *
   * The program wrote: at most every 50 ms while it writes, and at once
   * at the hangup if none is due.
   */
  signals[SIGNAL_OUTPUT] = g_signal_new ("output", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT64);
  /**
   * PaddockTerminal::hangup:
   *
   * Every slave fd of the PTY is closed: no more output will come; each
   * viewer gets the rest of the scrollback, then the end of its stream.
   */
  signals[SIGNAL_HANGUP] = g_signal_new ("hangup", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
paddock_terminal_init (PaddockTerminal *self)
{
  self->pty_master = -1;
  self->pending_input = g_byte_array_new ();
  self->viewers = g_ptr_array_new_with_free_func ((GDestroyNotify) viewer_free);
}

/* A terminal without a PTY yet, whose scrollback keeps the last
 * @scrollback_capacity bytes (allocated at the first output). */
PaddockTerminal *
paddock_terminal_new (gsize scrollback_capacity)
{
  PaddockTerminal *self;

  g_return_val_if_fail (scrollback_capacity > 0, NULL);

  self = g_object_new (PADDOCK_TYPE_TERMINAL, NULL);
  self->scrollback = paddock_scrollback_new (scrollback_capacity);
  return self;
}

/* What an earlier daemon kept of the scrollback in the file at @path is
 * read back now (paddock_scrollback_persist()), and the scrollback is kept
 * there while a PTY writes to it (from paddock_terminal_take_pty() to
 * paddock_terminal_close()): a session adopted by a new daemon shows what
 * its agent wrote before, and a session that no longer runs holds no fd
 * for it. Call before the PTY is taken. */
gboolean
paddock_terminal_persist_scrollback (PaddockTerminal  *self,
                                     const char       *path,
                                     GError          **error)
{
  g_return_val_if_fail (PADDOCK_IS_TERMINAL (self), FALSE);
  g_return_val_if_fail (self->pty_master < 0 && self->scrollback_path == NULL, FALSE);

  if (!paddock_scrollback_persist (self->scrollback, path, error))
    return FALSE;
  paddock_scrollback_close_file (self->scrollback);
  self->scrollback_path = g_strdup (path);
  return TRUE;
}
