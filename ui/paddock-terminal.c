/* paddock-terminal.c — a VteTerminal that reports its grid size
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "paddock-terminal.h"

/* The session's PTY lives in the daemon, not here: VTE has no VtePty to
 * resize, so it cannot tell the program inside that the window changed.
 * This subclass notices its own grid changing at allocation and emits
 * ::grid-changed (columns, rows), which the terminal view turns into
 * Session1.Resize. */
struct _PaddockTerminal
{
  VteTerminal parent_instance;

  glong       columns;
  glong       rows;
};

G_DEFINE_FINAL_TYPE (PaddockTerminal, paddock_terminal, VTE_TYPE_TERMINAL)

enum {
  GRID_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
paddock_terminal_size_allocate (GtkWidget *widget,
                                int        width,
                                int        height,
                                int        baseline)
{
  PaddockTerminal *self = PADDOCK_TERMINAL (widget);
  glong columns, rows;

  GTK_WIDGET_CLASS (paddock_terminal_parent_class)->size_allocate (widget, width, height, baseline);

  columns = vte_terminal_get_column_count (VTE_TERMINAL (self));
  rows = vte_terminal_get_row_count (VTE_TERMINAL (self));
  if (columns == self->columns && rows == self->rows)
    return;

  self->columns = columns;
  self->rows = rows;
  g_signal_emit (self, signals[GRID_CHANGED], 0, (guint)columns, (guint)rows);
}

static void
paddock_terminal_class_init (PaddockTerminalClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  widget_class->size_allocate = paddock_terminal_size_allocate;

  /**
   * PaddockTerminal::grid-changed:
   * @columns: the new width in cells
   * @rows: the new height in cells
   */
  signals[GRID_CHANGED] =
    g_signal_new ("grid-changed",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_UINT);
}

static void
paddock_terminal_init (PaddockTerminal *self)
{
}
