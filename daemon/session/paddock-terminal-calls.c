/* paddock-terminal-calls.c — Session1's terminal calls (Attach, ReadOutput, SendInput, Resize) answered from a PaddockTerminal
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The D-Bus side of a session's terminal: a call's arguments checked
 * against the terminal's bounds, the terminal asked, the call answered.
 * Attached to the session's skeleton, it answers those four calls itself;
 * the session's gate (paddock-session-gate.c) says first whether it may
 * be called at all (a destroyed one answers NotFound). A new window size
 * goes into the session's config too, for its record. Nothing here calls
 * back into the session.
 */

#include "config.h"

#include "paddock-dbus-checks.h"
#include "paddock-error.h"
#include "paddock-session-calls.h"
#include "paddock-terminal-calls.h"

struct _PaddockTerminalCalls
{
  GObject                    parent_instance;

  PaddockSessionCallHandlers calls;  /* its handle-* handlers on the session's skeleton */

  char                      *session_id;
  PaddockTerminal           *terminal;
  PaddockSessionGate        *gate;
  PaddockSessionConfig      *config;  /* the session's: its window size */
};

G_DEFINE_FINAL_TYPE (PaddockTerminalCalls, paddock_terminal_calls, G_TYPE_OBJECT)

/* Attach: a viewer's socket pair, reading from OFFSET (the first byte
 * still held by default), typing unless "input" is false. */
static void
terminal_attach (PaddockTerminal       *terminal,
                 PaddockIpcSession1    *session,
                 GDBusMethodInvocation *invocation,
                 GVariant              *options)
{
  static const PaddockDBusOption attach_options[] = { { "offset", "t" }, { "input", "b" }, { NULL, NULL } };
  g_autoptr(GUnixFDList) fd_list = NULL;
  g_autoptr(GError) error = NULL;
  PaddockTerminalViewer *viewer = NULL;
  guint64 offset = paddock_terminal_get_first_offset (terminal);
  gboolean input = TRUE;
  int handle = -1;

  /* The options are read only once checked; a terminal with as many
   * viewers as it takes says so first (paddock_terminal_attach()). */
  if (paddock_terminal_get_n_viewers (terminal) < PADDOCK_TERMINAL_MAX_VIEWERS)
    {
      if (!paddock_dbus_check_options (options, attach_options, "Attach", &error))
        {
          g_dbus_method_invocation_return_gerror (invocation, error);
          return;
        }
      g_variant_lookup (options, "offset", "t", &offset);
      g_variant_lookup (options, "input", "b", &input);
    }
  fd_list = paddock_terminal_attach (terminal, offset, input, &handle, &viewer, &error);
  if (fd_list == NULL)
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return;
    }

  paddock_ipc_session1_complete_attach (session, invocation, fd_list, g_variant_new_handle (handle),
                                        paddock_terminal_viewer_get_offset (viewer));
  paddock_terminal_flush_viewer (terminal, viewer);
}

static void
terminal_read_output (PaddockTerminal       *terminal,
                      PaddockIpcSession1    *session,
                      GDBusMethodInvocation *invocation,
                      guint64                offset,
                      guint                  max_bytes)
{
  g_autoptr(GBytes) data = NULL;
  guint64 start = 0;

  data = paddock_terminal_read (terminal, offset, MIN (max_bytes, PADDOCK_TERMINAL_READ_OUTPUT_MAX), &start);
  paddock_ipc_session1_complete_read_output (session, invocation,
                                             g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING,
                                                                       data, TRUE),
                                             start, start + g_bytes_get_size (data));
}

static void
terminal_send_input (PaddockTerminal       *terminal,
                     PaddockIpcSession1    *session,
                     GDBusMethodInvocation *invocation,
                     const char            *session_id,
                     GVariant              *data)
{
  gsize length = 0;
  const guint8 *bytes = g_variant_get_fixed_array (data, &length, 1);

  if (length > PADDOCK_TERMINAL_SEND_INPUT_MAX)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                             "At most %u bytes of input at once",
                                             PADDOCK_TERMINAL_SEND_INPUT_MAX);
      return;
    }

  if (!paddock_terminal_is_live (terminal))
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_BUSY,
                                             "Session %s has no live terminal", session_id);
      return;
    }

  if (!paddock_terminal_queue_input (terminal, bytes, length))
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_QUOTA_EXCEEDED,
                                             "The terminal is not reading its input");
      return;
    }

  paddock_ipc_session1_complete_send_input (session, invocation);
}

/* TRUE: the terminal has the new size. */
static gboolean
terminal_resize (PaddockTerminal       *terminal,
                 PaddockIpcSession1    *session,
                 GDBusMethodInvocation *invocation,
                 guint16                columns,
                 guint16                rows)
{
  if (columns < 1 || columns > 1000 || rows < 1 || rows > 1000)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                             "A terminal is 1 to 1000 cells wide and high");
      return FALSE;
    }

  paddock_terminal_resize (terminal, columns, rows);
  paddock_ipc_session1_complete_resize (session, invocation);
  return TRUE;
}

static gboolean
handle_attach (PaddockIpcSession1    *session,
               GDBusMethodInvocation *invocation,
               GUnixFDList           *in_fd_list,
               GVariant              *options,
               PaddockTerminalCalls  *self)
{
  if (paddock_session_gate_check_alive (self->gate, invocation))
    terminal_attach (self->terminal, session, invocation, options);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_read_output (PaddockIpcSession1    *session,
                    GDBusMethodInvocation *invocation,
                    guint64                offset,
                    guint                  max_bytes,
                    PaddockTerminalCalls  *self)
{
  if (paddock_session_gate_check_alive (self->gate, invocation))
    terminal_read_output (self->terminal, session, invocation, offset, max_bytes);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_send_input (PaddockIpcSession1    *session,
                   GDBusMethodInvocation *invocation,
                   GVariant              *data,
                   PaddockTerminalCalls  *self)
{
  if (paddock_session_gate_check_alive (self->gate, invocation))
    terminal_send_input (self->terminal, session, invocation, self->session_id, data);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_resize (PaddockIpcSession1    *session,
               GDBusMethodInvocation *invocation,
               guint16                columns,
               guint16                rows,
               PaddockTerminalCalls  *self)
{
  if (paddock_session_gate_check_alive (self->gate, invocation) &&
      terminal_resize (self->terminal, session, invocation, columns, rows))
    {
      self->config->columns = columns;
      self->config->rows = rows;
    }
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void
paddock_terminal_calls_finalize (GObject *object)
{
  PaddockTerminalCalls *self = PADDOCK_TERMINAL_CALLS (object);

  paddock_session_call_handlers_clear (&self->calls);
  g_free (self->session_id);
  g_clear_object (&self->terminal);
  g_clear_object (&self->gate);

  G_OBJECT_CLASS (paddock_terminal_calls_parent_class)->finalize (object);
}

static void
paddock_terminal_calls_class_init (PaddockTerminalCallsClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = paddock_terminal_calls_finalize;
}

static void
paddock_terminal_calls_init (PaddockTerminalCalls *self)
{
}

/* @config: the session's, which outlives the calls (the session owns
 * both). */
PaddockTerminalCalls *
paddock_terminal_calls_new (const char           *session_id,
                            PaddockTerminal      *terminal,
                            PaddockSessionGate   *gate,
                            PaddockSessionConfig *config)
{
  PaddockTerminalCalls *self;

  g_return_val_if_fail (session_id != NULL, NULL);
  g_return_val_if_fail (PADDOCK_IS_TERMINAL (terminal), NULL);
  g_return_val_if_fail (PADDOCK_IS_SESSION_GATE (gate), NULL);
  g_return_val_if_fail (config != NULL, NULL);

  self = g_object_new (PADDOCK_TYPE_TERMINAL_CALLS, NULL);
  self->session_id = g_strdup (session_id);
  self->terminal = g_object_ref (terminal);
  self->gate = g_object_ref (gate);
  self->config = config;
  return self;
}

/* From now on it answers Attach, ReadOutput, SendInput and Resize on
 * @skeleton itself (the session's D-Bus object leaves those methods to
 * it); they are disconnected when it goes, or when the skeleton does. */
void
paddock_terminal_calls_attach (PaddockTerminalCalls *self,
                               PaddockIpcSession1   *skeleton)
{
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-attach", G_CALLBACK (handle_attach), self);
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-read-output",
                                         G_CALLBACK (handle_read_output), self);
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-send-input",
                                         G_CALLBACK (handle_send_input), self);
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-resize", G_CALLBACK (handle_resize), self);
}
