/* paddock-terminal-view.c — a session's live terminal, attached over D-Bus
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gi18n.h>
#include <gio/gunixfdlist.h>
#include <string.h>
#include <unistd.h>

#define PCRE2_CODE_UNIT_WIDTH 0
#include <pcre2.h>

#include <adwaita.h>

#include "paddock-exit-status.h"
#include "paddock-terminal.h"
#include "paddock-terminal-view.h"

/* A flood (`yes`) keeps the socket readable all the time, and VTE works
 * through all that it was fed at once (16 KiB of "y\n" is 8,000 lines to
 * scroll): the loop stalled for up to 1.7 s. So reads are small, below GTK's redraw priority, and after a
 * full chunk the next read waits a moment: at most ~0.5 MiB/s reaches VTE,
 * frames, input and timers run between chunks, and the daemon skips the
 * view ahead when it falls behind (Session1.Attach). See bench/ui. */
#define READ_CHUNK     (2 * 1024)
#define READ_PRIORITY  G_PRIORITY_DEFAULT_IDLE
#define READ_PAUSE_MS  4
/* The replay of the scrollback on attach (all of it: up to 8 MiB) is read
 * in larger pieces into a bounded backlog and fed to VTE one slice at a
 * time. VTE parses what it was fed in its own timeout, for up to 100 ms at
 * once (VTE_MAX_PROCESS_TIME), so the next slice waits until VTE says it
 * took the last one in (::contents-changed) and then for an idle main loop:
 * one slice of work per loop iteration. A slice is bounded in bytes and in
 * lines, VTE's cost being mostly per line scrolled into the history; the
 * bounds trade the replay's speed for the loop's latency (bench/ui, 8 MiB
 * of 74-byte lines on 2 loaded cores: 200 lines, p99 18-23 ms, 21 s; 300
 * lines, 64 ms at load 10, 16-18 s; 500 lines, 34 ms, 10 s; 1,000 lines,
 * 47 ms, 5.5 s). A bound that adapted to how long each slice took to come
 * back was tried: on a loaded machine that time is mostly everything
 * else, and it only made the replay slower. */
#define REPLAY_READ         (64 * 1024)
#define REPLAY_BACKLOG_MAX  (256 * 1024)
#define REPLAY_SLICE_BYTES  (16 * 1024)
#define REPLAY_SLICE_LINES  200
/* If VTE reports no change (a slice of only escape sequences), go on. */
#define REPLAY_ACK_MS       50
/* Shorter replays end before a progress bar would be worth showing. */
#define REPLAY_PROGRESS_MIN (256 * 1024)
/* The agent printed this much more since the attach: it floods, the
 * daemon overwrites what the replay has not reached yet, and the rest is
 * read as live output (paced, the daemon skipping the view ahead). */
#define REPLAY_OUTRUN       (1024 * 1024)
#define FONT_SCALE_MIN 0.5
#define FONT_SCALE_MAX 4.0

/* The terminal shows what Session1.Attach's socket carries: first the
 * scrollback the daemon kept (all of it, replayed progressively, with its
 * progress shown above the terminal), then the live output. What the user types
 * (VteTerminal::commit, also for pastes) is written back to the same socket,
 * and the grid size goes to Session1.Resize. The view attaches the first
 * time it is shown; dropping the view closes the socket, which detaches
 * without touching the session. */
struct _PaddockTerminalView
{
  GtkWidget           parent_instance;

  PaddockSessionItem *item;
  /* Cancelled in dispose and on detach: Attach, reads, writes, Resize. */
  GCancellable       *cancellable;
  GIOStream          *stream;
  GQueue              pending_writes;   /* of GBytes */
  guint               columns;
  guint               rows;
  guint               read_pause_id;

  /* Offsets in the session's output: the first byte the socket carried,
   * the next byte VTE gets, and where the scrollback ended at attach. */
  guint64             replay_start;
  guint64             position;
  guint64             replay_end;
  /* Read from the socket, not yet fed (of GBytes, in order). */
  GQueue              backlog;
  gsize               backlog_size;
  guint               feed_id;

  guint               attaching : 1;
  guint               writing : 1;
  guint               reading : 1;
  /* Bytes go through the backlog and the slices (not straight to VTE)
   * until the replay and what was read along with it are all fed. */
  guint               replaying : 1;
  guint               awaiting_ack : 1;
  /* The socket ended; the backlog is still fed before detaching. */
  guint               eof : 1;
  /* The socket closed after the agent ended: the terminal holds all of
   * it, and attaching again would only replay the same bytes. */
  guint               complete : 1;
  /* The daemon closed the socket (the agent's terminal hung up), perhaps
   * before the session said it is no longer running: once it says so,
   * the terminal is complete all the same. */
  guint               socket_ended : 1;

  /* Template widgets */
  GtkSearchBar       *search_bar;
  GtkSearchEntry     *search_entry;
  VteTerminal        *terminal;
  GtkRevealer        *ended_revealer;
  GtkLabel           *ended_label;
  GtkRevealer        *replay_revealer;
  GtkProgressBar     *replay_progress;
  GtkLabel           *replay_label;
};

G_DEFINE_FINAL_TYPE (PaddockTerminalView, paddock_terminal_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_ITEM,
  PROP_ATTACHED,
  PROP_REPLAYING,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void paddock_terminal_view_read (PaddockTerminalView *self);
static void paddock_terminal_view_write_next (PaddockTerminalView *self);
static void paddock_terminal_view_schedule_feed (PaddockTerminalView *self);

static void
paddock_terminal_view_set_replaying (PaddockTerminalView *self,
                                     gboolean             replaying)
{
  if (self->replaying == !!replaying)
    return;

  self->replaying = !!replaying;
  if (!replaying)
    gtk_revealer_set_reveal_child (self->replay_revealer, FALSE);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_REPLAYING]);
}

static void
paddock_terminal_view_clear_backlog (PaddockTerminalView *self)
{
  g_queue_clear_full (&self->backlog, (GDestroyNotify)g_bytes_unref);
  self->backlog_size = 0;
  g_clear_handle_id (&self->feed_id, g_source_remove);
  self->awaiting_ack = FALSE;
}

/* Ends every call and drops the socket and what was read or waits to be
 * written; shared by detach and dispose. */
static void
paddock_terminal_view_drop_stream (PaddockTerminalView *self)
{
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_handle_id (&self->read_pause_id, g_source_remove);
  g_clear_object (&self->stream);
  g_queue_clear_full (&self->pending_writes, (GDestroyNotify)g_bytes_unref);
  paddock_terminal_view_clear_backlog (self);
}

static void
paddock_terminal_view_detach (PaddockTerminalView *self)
{
  gboolean was_attached = self->stream != NULL;

  paddock_terminal_view_drop_stream (self);
  self->attaching = FALSE;
  self->writing = FALSE;
  self->reading = FALSE;
  self->eof = FALSE;
  paddock_terminal_view_set_replaying (self, FALSE);

  vte_terminal_set_input_enabled (self->terminal, FALSE);

  if (was_attached)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ATTACHED]);
}

/* The daemon closed the socket: the terminal is gone (the session ended or
 * was destroyed). What it showed stays readable. */
static void
paddock_terminal_view_finish (PaddockTerminalView *self)
{
  self->complete = self->item != NULL && !paddock_session_item_is_running (self->item);
  self->socket_ended = TRUE;
  paddock_terminal_view_detach (self);
}

static void
paddock_terminal_view_update_progress (PaddockTerminalView *self)
{
  guint64 total = self->replay_end - self->replay_start;
  guint64 done = MIN (self->position, self->replay_end) - self->replay_start;
  double fraction = total > 0 ? (double)done / (double)total : 1.0;
  g_autofree char *label = NULL;

  if (self->position >= self->replay_end)
    {
      gtk_revealer_set_reveal_child (self->replay_revealer, FALSE);
      return;
    }

  gtk_progress_bar_set_fraction (self->replay_progress, fraction);
  /* Translators: the terminal is being rebuilt from the output the
   * daemon kept; %d is how much of it is done. */
  label = g_strdup_printf (_("Replaying output… %d %%"), (int)(fraction * 100));
  gtk_label_set_label (self->replay_label, label);
}

/* Feeds VTE one slice of the backlog: at most REPLAY_SLICE_BYTES, cut
 * after REPLAY_SLICE_LINES line ends. */
static void
paddock_terminal_view_feed_slice (PaddockTerminalView *self)
{
  g_autoptr(GBytes) head = g_queue_pop_head (&self->backlog);
  const char *data;
  gsize size, n = 0;
  guint lines = 0;

  g_assert (head != NULL);
  data = g_bytes_get_data (head, &size);
  while (n < size && n < REPLAY_SLICE_BYTES && lines < REPLAY_SLICE_LINES)
    {
      const char *newline = memchr (data + n, '\n', MIN (size, REPLAY_SLICE_BYTES) - n);

      if (newline == NULL)
        {
          n = MIN (size, REPLAY_SLICE_BYTES);
          break;
        }
      n = (gsize)(newline - data) + 1;
      lines++;
    }

  if (n < size)
    g_queue_push_head (&self->backlog, g_bytes_new_from_bytes (head, n, size - n));
  self->backlog_size -= n;
  self->position += n;

  self->awaiting_ack = TRUE;
  vte_terminal_feed (self->terminal, data, n);
}

static gboolean
feed_cb (gpointer data)
{
  PaddockTerminalView *self = data;

  self->feed_id = 0;
  self->awaiting_ack = FALSE;

  if (!g_queue_is_empty (&self->backlog))
    {
      paddock_terminal_view_feed_slice (self);
      paddock_terminal_view_update_progress (self);
      /* Until VTE says it took the slice in; ::contents-changed comes
       * sooner and brings the next one forward. */
      if (self->awaiting_ack && self->feed_id == 0)
        self->feed_id = g_timeout_add_full (READ_PRIORITY, REPLAY_ACK_MS, feed_cb, self, NULL);
    }

  if (self->item != NULL && paddock_session_item_get_proxy (self->item) != NULL &&
      self->position + self->backlog_size < self->replay_end &&
      paddock_ipc_session1_get_output_offset (paddock_session_item_get_proxy (self->item)) >
        self->replay_end + REPLAY_OUTRUN)
    {
      /* What was read is fed first, in order; then live. */
      self->replay_end = self->position + self->backlog_size;
      gtk_revealer_set_reveal_child (self->replay_revealer, FALSE);
    }

  /* More of the replay to read: keep the backlog filled. */
  if (!self->reading && !self->eof && self->stream != NULL &&
      self->position + self->backlog_size < self->replay_end &&
      self->backlog_size < REPLAY_BACKLOG_MAX)
    paddock_terminal_view_read (self);

  if (g_queue_is_empty (&self->backlog) && !self->reading)
    {
      g_clear_handle_id (&self->feed_id, g_source_remove);
      self->awaiting_ack = FALSE;

      if (self->eof)
        paddock_terminal_view_finish (self);
      else if (self->position >= self->replay_end && self->stream != NULL)
        {
          /* All of the replay is in: live output from here on, paced. */
          paddock_terminal_view_set_replaying (self, FALSE);
          paddock_terminal_view_read (self);
        }
    }

  return G_SOURCE_REMOVE;
}

/* The next slice when the main loop has nothing more urgent to do. */
static void
paddock_terminal_view_schedule_feed (PaddockTerminalView *self)
{
  if (self->feed_id != 0 || self->awaiting_ack)
    return;

  self->feed_id = g_idle_add_full (READ_PRIORITY, feed_cb, self, NULL);
}

static void
terminal_contents_changed_cb (PaddockTerminalView *self,
                              VteTerminal         *terminal)
{
  if (!self->awaiting_ack)
    return;

  g_clear_handle_id (&self->feed_id, g_source_remove);
  self->awaiting_ack = FALSE;
  paddock_terminal_view_schedule_feed (self);
}

static void
resize_cb (GObject      *object,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  if (!paddock_ipc_session1_call_resize_finish (PADDOCK_IPC_SESSION1 (object), result, &error) &&
      !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_debug ("Resize failed: %s", error->message);
}

static void
paddock_terminal_view_send_size (PaddockTerminalView *self)
{
  PaddockIpcSession1 *proxy;

  if (self->stream == NULL || self->item == NULL || self->columns == 0 || self->rows == 0)
    return;

  if (!(proxy = paddock_session_item_get_proxy (self->item)) ||
      !paddock_session_item_is_running (self->item))
    return;

  paddock_ipc_session1_call_resize (proxy,
                                    MIN (self->columns, 1000),
                                    MIN (self->rows, 1000),
                                    self->cancellable,
                                    resize_cb,
                                    NULL);
}

static gboolean
read_after_pause_cb (gpointer data)
{
  PaddockTerminalView *self = data;

  self->read_pause_id = 0;
  if (self->stream != NULL)
    paddock_terminal_view_read (self);
  return G_SOURCE_REMOVE;
}

static void
read_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(PaddockTerminalView) self = user_data;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) error = NULL;

  if (!(bytes = g_input_stream_read_bytes_finish (G_INPUT_STREAM (object), result, &error)))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;

      g_debug ("Terminal socket: %s", error->message);
      self->reading = FALSE;
      if (self->replaying && !g_queue_is_empty (&self->backlog))
        {
          /* What was read before the error is still shown, in order: the
           * feeder takes the socket's end as an end of file once it is fed. */
          self->eof = TRUE;
          paddock_terminal_view_schedule_feed (self);
          return;
        }
      paddock_terminal_view_detach (self);
      return;
    }

  self->reading = FALSE;

  if (self->replaying)
    {
      /* In order behind what was read before; the feeder reads on. */
      if (g_bytes_get_size (bytes) == 0)
        self->eof = TRUE;
      else
        {
          self->backlog_size += g_bytes_get_size (bytes);
          g_queue_push_tail (&self->backlog, g_steal_pointer (&bytes));
        }
      paddock_terminal_view_schedule_feed (self);
      return;
    }

  if (g_bytes_get_size (bytes) == 0)
    {
      paddock_terminal_view_finish (self);
      return;
    }

  self->position += g_bytes_get_size (bytes);
  vte_terminal_feed (self->terminal,
                     g_bytes_get_data (bytes, NULL),
                     g_bytes_get_size (bytes));
  if (g_bytes_get_size (bytes) < READ_CHUNK)
    paddock_terminal_view_read (self);
  else
    self->read_pause_id = g_timeout_add_full (READ_PRIORITY, READ_PAUSE_MS, read_after_pause_cb,
                                              g_object_ref (self), g_object_unref);
}

static void
paddock_terminal_view_read (PaddockTerminalView *self)
{
  g_assert (self->stream != NULL);
  g_assert (!self->reading);

  self->reading = TRUE;
  g_input_stream_read_bytes_async (g_io_stream_get_input_stream (self->stream),
                                   self->replaying ? REPLAY_READ : READ_CHUNK,
                                   READ_PRIORITY,
                                   self->cancellable,
                                   read_cb,
                                   g_object_ref (self));
}

static void
write_cb (GObject      *object,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(PaddockTerminalView) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) head = NULL;
  gssize written;

  written = g_output_stream_write_bytes_finish (G_OUTPUT_STREAM (object), result, &error);
  if (written < 0)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_debug ("Typing into the terminal failed: %s", error->message);
      return;
    }

  self->writing = FALSE;

  /* A short write leaves the rest at the head of the queue. */
  head = g_queue_pop_head (&self->pending_writes);
  if (head != NULL && (gsize)written < g_bytes_get_size (head))
    g_queue_push_head (&self->pending_writes,
                       g_bytes_new_from_bytes (head, written, g_bytes_get_size (head) - written));

  paddock_terminal_view_write_next (self);
}

static void
paddock_terminal_view_write_next (PaddockTerminalView *self)
{
  GBytes *head;

  if (self->writing || self->stream == NULL)
    return;

  if (!(head = g_queue_peek_head (&self->pending_writes)))
    return;

  self->writing = TRUE;
  g_output_stream_write_bytes_async (g_io_stream_get_output_stream (self->stream),
                                     head,
                                     G_PRIORITY_DEFAULT,
                                     self->cancellable,
                                     write_cb,
                                     g_object_ref (self));
}

static void
terminal_commit_cb (PaddockTerminalView *self,
                    const char          *text,
                    guint                size,
                    VteTerminal         *terminal)
{
  if (self->stream == NULL || size == 0)
    return;

  g_queue_push_tail (&self->pending_writes, g_bytes_new (text, size));
  paddock_terminal_view_write_next (self);
}

static void
terminal_grid_changed_cb (PaddockTerminalView *self,
                          guint                columns,
                          guint                rows,
                          VteTerminal         *terminal)
{
  self->columns = columns;
  self->rows = rows;
  paddock_terminal_view_send_size (self);
}

static void
attach_cb (GObject      *object,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(PaddockTerminalView) self = user_data;
  g_autoptr(GVariant) handle = NULL;
  g_autoptr(GUnixFDList) fd_list = NULL;
  g_autoptr(GSocket) socket = NULL;
  g_autoptr(GError) error = NULL;
  guint64 first_offset = 0;
  int fd;

  if (!paddock_ipc_session1_call_attach_finish (PADDOCK_IPC_SESSION1 (object),
                                                &handle, &first_offset, &fd_list,
                                                result, &error))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;

      self->attaching = FALSE;
      g_dbus_error_strip_remote_error (error);
      g_debug ("Attach failed: %s", error->message);
      return;
    }

  self->attaching = FALSE;

  if (fd_list == NULL ||
      (fd = g_unix_fd_list_get (fd_list, g_variant_get_handle (handle), &error)) < 0)
    {
      g_debug ("Attach gave no terminal: %s", error ? error->message : "no fd");
      return;
    }

  if (!(socket = g_socket_new_from_fd (fd, &error)))
    {
      g_debug ("Terminal socket: %s", error->message);
      close (fd);
      return;
    }

  self->stream = G_IO_STREAM (g_socket_connection_factory_create_connection (socket));
  self->socket_ended = FALSE;

  /* The replay rebuilds the screen from scratch: reset the state, then
   * clear the screen and the history (reset keeps the screen's cells). */
  vte_terminal_reset (self->terminal, TRUE, TRUE);
  vte_terminal_feed (self->terminal, "\033[H\033[2J\033[3J", -1);
  vte_terminal_set_input_enabled (self->terminal, paddock_session_item_is_running (self->item));

  /* What the daemon kept up to now is the replay; the rest is live. */
  self->replay_start = first_offset;
  self->position = first_offset;
  self->replay_end = MAX (first_offset, paddock_ipc_session1_get_output_offset (PADDOCK_IPC_SESSION1 (object)));
  self->eof = FALSE;
  paddock_terminal_view_set_replaying (self, self->replay_end > first_offset);
  if (self->replay_end - first_offset >= REPLAY_PROGRESS_MIN)
    {
      paddock_terminal_view_update_progress (self);
      gtk_revealer_set_reveal_child (self->replay_revealer, TRUE);
    }

  paddock_terminal_view_read (self);
  paddock_terminal_view_send_size (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ATTACHED]);
}

/* Attach once the view is shown and the session's proxy exists. */
static void
paddock_terminal_view_maybe_attach (PaddockTerminalView *self)
{
  PaddockIpcSession1 *proxy;

  if (self->stream != NULL || self->attaching || self->item == NULL)
    return;

  if (self->complete && !paddock_session_item_is_running (self->item))
    return;

  if (!gtk_widget_get_mapped (GTK_WIDGET (self)))
    return;

  if (!(proxy = paddock_session_item_get_proxy (self->item)))
    return;

  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  self->attaching = TRUE;

  /* No "offset": all the scrollback the daemon kept. */
  paddock_ipc_session1_call_attach (proxy,
                                    g_variant_new ("a{sv}", NULL),
                                    NULL,
                                    self->cancellable,
                                    attach_cb,
                                    g_object_ref (self));
}

static void
item_proxy_cb (PaddockTerminalView *self,
               GParamSpec          *pspec,
               PaddockSessionItem  *item)
{
  paddock_terminal_view_maybe_attach (self);
}

/* Once the agent ended, say so under what it printed. */
static void
paddock_terminal_view_update_ended (PaddockTerminalView *self)
{
  const char *state = self->item != NULL ? paddock_session_item_get_state (self->item) : NULL;
  gboolean unseen = self->item != NULL &&
                    paddock_session_item_get_exit_status (self->item) == PADDOCK_EXIT_STATUS_UNKNOWN;

  /* Its supervisor died while no daemon watched: nobody saw how it ended. */
  if (unseen && (g_strcmp0 (state, "exited") == 0 || g_strcmp0 (state, "stopped") == 0))
    gtk_label_set_label (self->ended_label, _("The agent ended while Paddock was not running, so how it ended is unknown. Its terminal is kept here as it was; its changes stay reviewable."));
  else if (g_strcmp0 (state, "exited") == 0)
    gtk_label_set_label (self->ended_label, _("The agent exited. Its terminal is kept here as it was; its changes stay reviewable."));
  else if (g_strcmp0 (state, "stopped") == 0)
    gtk_label_set_label (self->ended_label, _("The session was stopped. Its terminal is kept here as it was; its changes stay reviewable."));

  gtk_revealer_set_reveal_child (self->ended_revealer,
                                 g_strcmp0 (state, "exited") == 0 || g_strcmp0 (state, "stopped") == 0);
}

static void
item_exit_status_cb (PaddockTerminalView *self,
                     GParamSpec          *pspec,
                     PaddockSessionItem  *item)
{
  paddock_terminal_view_update_ended (self);
}

static void
item_running_cb (PaddockTerminalView *self,
                 GParamSpec          *pspec,
                 PaddockSessionItem  *item)
{
  /* Nothing to type into once the agent ended; a terminal whose socket
   * already ended holds all of it (attaching again would replay it). */
  if (!paddock_session_item_is_running (item))
    {
      vte_terminal_set_input_enabled (self->terminal, FALSE);
      if (self->socket_ended)
        self->complete = TRUE;
    }
  else
    paddock_terminal_view_maybe_attach (self);

  paddock_terminal_view_update_ended (self);
}

/* Search: a literal, case-insensitive unless it has capitals (as in
 * GNOME Text Editor), across wrapped lines. */
static void
search_changed_cb (PaddockTerminalView *self,
                   GtkSearchEntry      *entry)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->search_entry));
  g_autoptr(VteRegex) regex = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *escaped = NULL;
  g_autofree char *lower = NULL;
  guint32 flags = PCRE2_UTF | PCRE2_NO_UTF_CHECK | PCRE2_UCP | PCRE2_MULTILINE;

  if (text == NULL || *text == '\0')
    {
      vte_terminal_search_set_regex (self->terminal, NULL, 0);
      return;
    }

  lower = g_utf8_strdown (text, -1);
  if (g_strcmp0 (lower, text) == 0)
    flags |= PCRE2_CASELESS;

  escaped = g_regex_escape_string (text, -1);
  if (!(regex = vte_regex_new_for_search (escaped, -1, flags, &error)))
    {
      g_debug ("Search: %s", error->message);
      return;
    }

  vte_terminal_search_set_regex (self->terminal, regex, 0);
  vte_terminal_search_set_wrap_around (self->terminal, TRUE);
  vte_terminal_search_find_previous (self->terminal);
}

static void
search_next_cb (PaddockTerminalView *self)
{
  vte_terminal_search_find_next (self->terminal);
}

static void
search_previous_cb (PaddockTerminalView *self)
{
  vte_terminal_search_find_previous (self->terminal);
}

static void
search_stop_cb (PaddockTerminalView *self)
{
  gtk_search_bar_set_search_mode (self->search_bar, FALSE);
  gtk_widget_grab_focus (GTK_WIDGET (self->terminal));
}

static void
paddock_terminal_view_copy_action (GtkWidget  *widget,
                                   const char *action_name,
                                   GVariant   *param)
{
  PaddockTerminalView *self = PADDOCK_TERMINAL_VIEW (widget);

  if (vte_terminal_get_has_selection (self->terminal))
    vte_terminal_copy_clipboard_format (self->terminal, VTE_FORMAT_TEXT);
}

static void
paddock_terminal_view_paste_action (GtkWidget  *widget,
                                    const char *action_name,
                                    GVariant   *param)
{
  PaddockTerminalView *self = PADDOCK_TERMINAL_VIEW (widget);

  vte_terminal_paste_clipboard (self->terminal);
}

static void
paddock_terminal_view_zoom_action (GtkWidget  *widget,
                                   const char *action_name,
                                   GVariant   *param)
{
  PaddockTerminalView *self = PADDOCK_TERMINAL_VIEW (widget);
  double scale = vte_terminal_get_font_scale (self->terminal);

  if (g_str_equal (action_name, "terminal.zoom-in"))
    scale = MIN (scale * 1.1, FONT_SCALE_MAX);
  else if (g_str_equal (action_name, "terminal.zoom-out"))
    scale = MAX (scale / 1.1, FONT_SCALE_MIN);
  else
    scale = 1.0;

  vte_terminal_set_font_scale (self->terminal, scale);
}

static void
paddock_terminal_view_search_action (GtkWidget  *widget,
                                     const char *action_name,
                                     GVariant   *param)
{
  PaddockTerminalView *self = PADDOCK_TERMINAL_VIEW (widget);

  gtk_search_bar_set_search_mode (self->search_bar, TRUE);
  gtk_widget_grab_focus (GTK_WIDGET (self->search_entry));
}

static void
style_dark_cb (PaddockTerminalView *self,
               GParamSpec          *pspec,
               AdwStyleManager     *style_manager)
{
  /* libadwaita's view colours, so the terminal sits in the window. */
  gboolean dark = adw_style_manager_get_dark (style_manager);
  GdkRGBA fg, bg;

  gdk_rgba_parse (&fg, dark ? "#ffffff" : "#000000");
  gdk_rgba_parse (&bg, dark ? "#1e1e1e" : "#ffffff");
  vte_terminal_set_colors (self->terminal, &fg, &bg, NULL, 0);
}

static void
paddock_terminal_view_map (GtkWidget *widget)
{
  GTK_WIDGET_CLASS (paddock_terminal_view_parent_class)->map (widget);

  paddock_terminal_view_maybe_attach (PADDOCK_TERMINAL_VIEW (widget));
}

static gboolean
paddock_terminal_view_grab_focus (GtkWidget *widget)
{
  return gtk_widget_grab_focus (GTK_WIDGET (PADDOCK_TERMINAL_VIEW (widget)->terminal));
}

static void
paddock_terminal_view_dispose (GObject *object)
{
  PaddockTerminalView *self = (PaddockTerminalView *)object;
  GtkWidget *child;

  paddock_terminal_view_drop_stream (self);

  if (self->item != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->item, self);
      g_clear_object (&self->item);
    }

  gtk_widget_dispose_template (GTK_WIDGET (self), PADDOCK_TYPE_TERMINAL_VIEW);
  /* The template's root box is not bound: unparent it too. */
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))))
    gtk_widget_unparent (child);

  G_OBJECT_CLASS (paddock_terminal_view_parent_class)->dispose (object);
}

static void
paddock_terminal_view_get_property (GObject    *object,
                                    guint       prop_id,
                                    GValue     *value,
                                    GParamSpec *pspec)
{
  PaddockTerminalView *self = PADDOCK_TERMINAL_VIEW (object);

  switch (prop_id)
    {
    case PROP_ITEM:
      g_value_set_object (value, self->item);
      break;

    case PROP_ATTACHED:
      g_value_set_boolean (value, self->stream != NULL);
      break;

    case PROP_REPLAYING:
      g_value_set_boolean (value, self->replaying);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_terminal_view_set_property (GObject      *object,
                                    guint         prop_id,
                                    const GValue *value,
                                    GParamSpec   *pspec)
{
  PaddockTerminalView *self = PADDOCK_TERMINAL_VIEW (object);

  switch (prop_id)
    {
    case PROP_ITEM:
      paddock_terminal_view_set_item (self, g_value_get_object (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_terminal_view_class_init (PaddockTerminalViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = paddock_terminal_view_dispose;
  object_class->get_property = paddock_terminal_view_get_property;
  object_class->set_property = paddock_terminal_view_set_property;

  widget_class->map = paddock_terminal_view_map;
  widget_class->grab_focus = paddock_terminal_view_grab_focus;

  properties[PROP_ITEM] =
    g_param_spec_object ("item", NULL, NULL,
                         PADDOCK_TYPE_SESSION_ITEM,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  properties[PROP_ATTACHED] =
    g_param_spec_boolean ("attached", NULL, NULL,
                          FALSE,
                          (G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /* Whether the scrollback is still being fed to the terminal. */
  properties[PROP_REPLAYING] =
    g_param_spec_boolean ("replaying", NULL, NULL,
                          FALSE,
                          (G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (PADDOCK_TYPE_TERMINAL);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/paddock/Paddock/paddock-terminal-view.ui");
  gtk_widget_class_bind_template_child (widget_class, PaddockTerminalView, search_bar);
  gtk_widget_class_bind_template_child (widget_class, PaddockTerminalView, search_entry);
  gtk_widget_class_bind_template_child (widget_class, PaddockTerminalView, terminal);
  gtk_widget_class_bind_template_child (widget_class, PaddockTerminalView, ended_revealer);
  gtk_widget_class_bind_template_child (widget_class, PaddockTerminalView, ended_label);
  gtk_widget_class_bind_template_child (widget_class, PaddockTerminalView, replay_revealer);
  gtk_widget_class_bind_template_child (widget_class, PaddockTerminalView, replay_progress);
  gtk_widget_class_bind_template_child (widget_class, PaddockTerminalView, replay_label);
  gtk_widget_class_bind_template_callback (widget_class, terminal_contents_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, terminal_commit_cb);
  gtk_widget_class_bind_template_callback (widget_class, terminal_grid_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, search_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, search_next_cb);
  gtk_widget_class_bind_template_callback (widget_class, search_previous_cb);
  gtk_widget_class_bind_template_callback (widget_class, search_stop_cb);

  gtk_widget_class_install_action (widget_class, "terminal.copy", NULL, paddock_terminal_view_copy_action);
  gtk_widget_class_install_action (widget_class, "terminal.paste", NULL, paddock_terminal_view_paste_action);
  gtk_widget_class_install_action (widget_class, "terminal.zoom-in", NULL, paddock_terminal_view_zoom_action);
  gtk_widget_class_install_action (widget_class, "terminal.zoom-out", NULL, paddock_terminal_view_zoom_action);
  gtk_widget_class_install_action (widget_class, "terminal.zoom-reset", NULL, paddock_terminal_view_zoom_action);
  gtk_widget_class_install_action (widget_class, "terminal.search", NULL, paddock_terminal_view_search_action);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void
paddock_terminal_view_init (PaddockTerminalView *self)
{
  static const struct {
    const char *trigger;
    const char *action;
  } shortcuts[] = {
    { "<Control><Shift>c", "terminal.copy" },
    { "<Control><Shift>v", "terminal.paste" },
    { "<Control>plus", "terminal.zoom-in" },
    { "<Control>equal", "terminal.zoom-in" },
    { "<Control>KP_Add", "terminal.zoom-in" },
    { "<Control>minus", "terminal.zoom-out" },
    { "<Control>KP_Subtract", "terminal.zoom-out" },
    { "<Control>0", "terminal.zoom-reset" },
    { "<Control><Shift>f", "terminal.search" },
  };
  AdwStyleManager *style_manager = adw_style_manager_get_default ();
  GtkEventController *controller;

  g_queue_init (&self->pending_writes);
  g_queue_init (&self->backlog);

  gtk_widget_init_template (GTK_WIDGET (self));

  gtk_search_bar_connect_entry (self->search_bar, GTK_EDITABLE (self->search_entry));

  /* Capture phase: the terminal would otherwise type these keys into the
   * session before any bubbling shortcut sees them. */
  controller = gtk_shortcut_controller_new ();
  gtk_event_controller_set_propagation_phase (controller, GTK_PHASE_CAPTURE);
  for (guint i = 0; i < G_N_ELEMENTS (shortcuts); i++)
    gtk_shortcut_controller_add_shortcut (GTK_SHORTCUT_CONTROLLER (controller),
                                          gtk_shortcut_new (gtk_shortcut_trigger_parse_string (shortcuts[i].trigger),
                                                            gtk_named_action_new (shortcuts[i].action)));
  gtk_widget_add_controller (GTK_WIDGET (self), controller);

  g_signal_connect_object (style_manager, "notify::dark", G_CALLBACK (style_dark_cb), self, G_CONNECT_SWAPPED);
  style_dark_cb (self, NULL, style_manager);
}

/**
 * paddock_terminal_view_get_item:
 *
 * Returns: (transfer none) (nullable): the session shown
 */
PaddockSessionItem *
paddock_terminal_view_get_item (PaddockTerminalView *self)
{
  g_return_val_if_fail (PADDOCK_IS_TERMINAL_VIEW (self), NULL);

  return self->item;
}

void
paddock_terminal_view_set_item (PaddockTerminalView *self,
                                PaddockSessionItem  *item)
{
  g_return_if_fail (PADDOCK_IS_TERMINAL_VIEW (self));
  g_return_if_fail (item == NULL || PADDOCK_IS_SESSION_ITEM (item));

  if (self->item == item)
    return;

  paddock_terminal_view_detach (self);
  vte_terminal_reset (self->terminal, TRUE, TRUE);
  vte_terminal_feed (self->terminal, "\033[H\033[2J\033[3J", -1);
  self->complete = FALSE;
  self->socket_ended = FALSE;

  if (self->item != NULL)
    g_signal_handlers_disconnect_by_data (self->item, self);

  g_set_object (&self->item, item);

  if (self->item != NULL)
    {
      g_signal_connect_object (self->item, "notify::proxy", G_CALLBACK (item_proxy_cb), self, G_CONNECT_SWAPPED);
      g_signal_connect_object (self->item, "notify::running", G_CALLBACK (item_running_cb), self, G_CONNECT_SWAPPED);
      g_signal_connect_object (self->item, "notify::exit-status", G_CALLBACK (item_exit_status_cb), self,
                               G_CONNECT_SWAPPED);
    }

  paddock_terminal_view_maybe_attach (self);
  paddock_terminal_view_update_ended (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ITEM]);
}

/**
 * paddock_terminal_view_get_terminal:
 *
 * Returns: (transfer none): the terminal widget
 */
VteTerminal *
paddock_terminal_view_get_terminal (PaddockTerminalView *self)
{
  g_return_val_if_fail (PADDOCK_IS_TERMINAL_VIEW (self), NULL);

  return self->terminal;
}

gboolean
paddock_terminal_view_is_attached (PaddockTerminalView *self)
{
  g_return_val_if_fail (PADDOCK_IS_TERMINAL_VIEW (self), FALSE);

  return self->stream != NULL;
}

/**
 * paddock_terminal_view_is_replaying:
 *
 * Returns: whether the scrollback kept by the daemon is still being fed
 *   to the terminal (live output follows it)
 */
gboolean
paddock_terminal_view_is_replaying (PaddockTerminalView *self)
{
  g_return_val_if_fail (PADDOCK_IS_TERMINAL_VIEW (self), FALSE);

  return self->replaying;
}
