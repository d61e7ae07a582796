/* paddock-terminal.h — a session's terminal: PTY master, scrollback, viewers, input
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gunixfdlist.h>
#include <glib-object.h>

G_BEGIN_DECLS

/* Bounds on what clients can make a terminal hold: attached viewers, and
 * typed input waiting for the program to read its terminal. */
#define PADDOCK_TERMINAL_MAX_VIEWERS       32
#define PADDOCK_TERMINAL_PENDING_INPUT_MAX (1024 * 1024)

/* One attached viewer: borrowed, valid until the main loop runs again (a
 * viewer that hangs up or falls behind a dead socket is dropped). */
typedef struct _PaddockTerminalViewer PaddockTerminalViewer;

#define PADDOCK_TYPE_TERMINAL (paddock_terminal_get_type ())

G_DECLARE_FINAL_TYPE (PaddockTerminal, paddock_terminal, PADDOCK, TERMINAL, GObject)

PaddockTerminal       *paddock_terminal_new              (gsize                  scrollback_capacity);
gboolean               paddock_terminal_persist_scrollback (PaddockTerminal     *self,
                                                          const char          *path,
                                                          GError             **error);
void                   paddock_terminal_take_pty         (PaddockTerminal       *self,
                                                          int                    master);
gboolean               paddock_terminal_is_live          (PaddockTerminal       *self);
void                   paddock_terminal_drain            (PaddockTerminal       *self);
void                   paddock_terminal_close            (PaddockTerminal       *self);
guint64                paddock_terminal_get_first_offset (PaddockTerminal       *self);
guint64                paddock_terminal_get_end_offset   (PaddockTerminal       *self);
GBytes                *paddock_terminal_read             (PaddockTerminal       *self,
                                                          guint64                offset,
                                                          gsize                  max_bytes,
                                                          guint64               *out_start);
gboolean               paddock_terminal_queue_input      (PaddockTerminal       *self,
                                                          const guint8          *data,
                                                          gsize                  length);
void                   paddock_terminal_resize           (PaddockTerminal       *self,
                                                          guint16                columns,
                                                          guint16                rows);
void                   paddock_terminal_set_window_size  (int                    fd,
                                                          guint16                columns,
                                                          guint16                rows);
guint                  paddock_terminal_get_n_viewers    (PaddockTerminal       *self);
PaddockTerminalViewer *paddock_terminal_add_viewer       (PaddockTerminal       *self,
                                                          int                    fd,
                                                          guint64                offset,
                                                          gboolean               input);
guint64                paddock_terminal_viewer_get_offset (PaddockTerminalViewer *viewer);
void                   paddock_terminal_flush_viewer     (PaddockTerminal       *self,
                                                          PaddockTerminalViewer *viewer);
GUnixFDList           *paddock_terminal_attach           (PaddockTerminal        *self,
                                                          guint64                 offset,
                                                          gboolean                input,
                                                          int                    *out_handle,
                                                          PaddockTerminalViewer **out_viewer,
                                                          GError                **error);
char                  *paddock_terminal_dup_last_line    (PaddockTerminal       *self);

G_END_DECLS
