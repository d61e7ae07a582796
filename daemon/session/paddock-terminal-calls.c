/* paddock-terminal-calls.c — Session1's terminal calls (Attach, ReadOutput, SendInput, Resize) answered from a PaddockTerminal
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The D-Bus side of a session's terminal: a call's arguments checked
 * against the terminal's bounds, the terminal asked, the call answered.
 * The session decides first whether it may be called at all (a destroyed
 * one answers NotFound), then hands the call over; nothing here calls
 * back into it.
 */

#include "config.h"

#include "paddock-dbus-checks.h"
#include "paddock-error.h"
#include "paddock-terminal-calls.h"

/* Attach: a viewer's socket pair, reading from OFFSET (the first byte
 * still held by default), typing unless "input" is false. */
void
paddock_terminal_calls_attach (PaddockTerminal       *terminal,
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

void
paddock_terminal_calls_read_output (PaddockTerminal       *terminal,
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

void
paddock_terminal_calls_send_input (PaddockTerminal       *terminal,
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

gboolean
paddock_terminal_calls_resize (PaddockTerminal       *terminal,
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
