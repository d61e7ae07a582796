/* paddockctl-logs.c — `paddockctl logs`: a session's terminal output
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <glib-unix.h>

#include <glib/gi18n.h>

#include "paddock-error.h"
#include "paddockctl-escape.h"
#include "paddockctl-private.h"

/* The daemon caps one ReadOutput at 1 MiB. */
#define READ_CHUNK_BYTES (1024 * 1024)

/* --follow reads as soon as the daemon announces new output (OutputOffset
 * in PropertiesChanged); the poll only backs that up, e.g. when the
 * daemon coalesces its announcements. */
#define FOLLOW_POLL_MS   250

#define LOGS_SUMMARY \
  N_("Print the session's terminal output from offset N (default: the oldest\n" \
     "byte still kept), as the raw bytes the programs wrote; on a terminal,\n" \
     "their control and invisible characters are shown as escapes (^[, ^M,\n" \
     "<U+202E>) rather than acted on, unless --raw (\"attach\" is the live\n" \
     "terminal).\n\n" \
     "With --json: {\"offset\", \"next_offset\", \"data\"}, data as text with\n" \
     "invalid UTF-8 replaced; pass next_offset as --offset to read on.\n" \
     "With --follow, keep printing until the session has ended and all of\n" \
     "its output is printed (with --json: one document per line per read);\n" \
     "Ctrl-C stops following.")

typedef struct
{
  Paddockctl         *ctl;
  PaddockIpcSession1 *session;
  const char         *id;
  guint64             offset;      /* the next byte to read */
  GByteArray         *collected;   /* without --follow in JSON: the whole answer */
  guint64             first;       /* …and the offset of its first byte */
  gboolean            have_first;
  GMainLoop          *loop;        /* with --follow */
  gboolean            read_once;   /* the session existed when we started */
  gboolean            done;        /* --follow has decided how to exit */
  int                 exit_code;
  /* To a terminal without --raw: what the agent wrote, made visible. */
  gboolean            escape;
  PaddockctlEscaper   escaper;
} Reader;

/* The scrollback is what the agent's programs wrote to their terminal:
 * replayed on ours it could clear the screen, hide lines or write the
 * clipboard (OSC 52). A terminal's \r\n line ends stay as they are.
 * @data NULL: the output has ended, write what the escaper held back. */
static void
write_output (Reader       *reader,
              const guint8 *data,
              gsize         length)
{
  g_autoptr(GString) shown = NULL;

  if (!reader->escape)
    {
      if (data != NULL)
        fwrite (data, 1, length, stdout);
      fflush (stdout);
      return;
    }

  shown = g_string_sized_new (length + 16);
  if (data != NULL)
    paddockctl_escaper_feed (&reader->escaper, (const char *) data, length, shown);
  else
    paddockctl_escaper_finish (&reader->escaper, shown);
  fwrite (shown->str, 1, shown->len, stdout);
  fflush (stdout);
}

/* One ReadOutput from reader->offset. *out_data borrows from *out_reply.
 * The length comes from the offsets, not from the array: a daemon that
 * answers with a C string (a trailing NUL, as gdbus-codegen's bytestrings
 * do) must not add a byte to the output. */
static gboolean
read_chunk (Reader        *reader,
            GVariant     **out_reply,
            const guint8 **out_data,
            gsize         *out_length,
            guint64       *out_start,
            guint64       *out_next,
            GError       **error)
{
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) data = NULL;
  guint64 first = 0;
  guint64 next = 0;
  guint64 start;
  gsize n_elements = 0;
  const guint8 *bytes;

  reply = g_dbus_proxy_call_sync (G_DBUS_PROXY (reader->session), "ReadOutput",
                                  g_variant_new ("(tu)", reader->offset,
                                                 (guint32) READ_CHUNK_BYTES),
                                  G_DBUS_CALL_FLAGS_NONE, -1, NULL, error);
  if (reply == NULL)
    return FALSE;

  if (!g_variant_is_of_type (reply, G_VARIANT_TYPE ("(aytt)")))
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   _("the daemon answered ReadOutput with “%s”, not “(aytt)”"),
                   g_variant_get_type_string (reply));
      return FALSE;
    }

  g_variant_get (reply, "(@aytt)", &data, &first, &next);
  bytes = g_variant_get_fixed_array (data, &n_elements, 1);
  start = MAX (reader->offset, first);

  *out_data = bytes;
  *out_length = next > start ? (gsize) MIN ((guint64) n_elements, next - start) : 0;
  *out_start = start;
  *out_next = next;
  *out_reply = g_steal_pointer (&reply);
  return TRUE;
}

static void
print_chunk_json (Paddockctl   *ctl,
                  guint64       start,
                  guint64       next,
                  const guint8 *data,
                  gsize         length)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = length > 0 ? g_utf8_make_valid ((const char *) data, (gssize) length)
                                     : g_strdup ("");

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "offset");
  json_builder_add_int_value (builder, (gint64) MIN (start, (guint64) G_MAXINT64));
  json_builder_set_member_name (builder, "next_offset");
  json_builder_add_int_value (builder, (gint64) MIN (next, (guint64) G_MAXINT64));
  json_builder_set_member_name (builder, "data");
  json_builder_add_string_value (builder, text);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  paddockctl_print_json (ctl, root);
}

/* Reads until the daemon has nothing more, printing (or collecting) as it
 * goes. */
static gboolean
drain (Reader  *reader,
       GError **error)
{
  for (;;)
    {
      g_autoptr(GVariant) reply = NULL;
      const guint8 *data = NULL;
      gsize length = 0;
      guint64 start = 0;
      guint64 next = 0;

      if (!read_chunk (reader, &reply, &data, &length, &start, &next, error))
        return FALSE;
      reader->read_once = TRUE;

      if (!reader->have_first)
        {
          reader->first = start;
          reader->have_first = TRUE;
        }

      if (length == 0)
        {
          /* Asked beyond the end: carry on from where the output is. */
          if (next > reader->offset)
            reader->offset = next;
          return TRUE;
        }

      if (reader->collected != NULL)
        g_byte_array_append (reader->collected, data, (guint) length);
      else if (reader->ctl->json)
        print_chunk_json (reader->ctl, start, start + length, data, length);
      else
        write_output (reader, data, length);

      reader->offset = start + length;
    }
}

/* ---- --follow ------------------------------------------------------------------ */

static gboolean
state_is_live (const char *state)
{
  return g_str_equal (state, "starting") || g_str_equal (state, "running");
}

static void
follow_finish (Reader *reader,
               int     exit_code)
{
  reader->exit_code = exit_code;
  reader->done = TRUE;
  g_main_loop_quit (reader->loop);
}

/* Reads the state before the output, so that when the session has ended
 * the read that follows is known to include its last bytes. */
static void
follow_step (Reader *reader)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *state = NULL;

  if (reader->done)
    return;

  if (!paddockctl_get_session_state (reader->ctl, reader->id, &state, &error) ||
      !drain (reader, &error))
    {
      /* Destroyed while we followed it: its output has ended too. */
      paddockctl_check_session_error (reader->ctl, reader->id, &error);
      if (reader->read_once && g_error_matches (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND))
        follow_finish (reader, PADDOCKCTL_EXIT_OK);
      else
        follow_finish (reader, paddockctl_fail (reader->ctl, error));
      return;
    }

  if (!state_is_live (state))
    follow_finish (reader, PADDOCKCTL_EXIT_OK);
}

static gboolean
follow_poll_cb (gpointer user_data)
{
  follow_step (user_data);
  return G_SOURCE_CONTINUE;
}

static void
follow_properties_changed_cb (GDBusConnection *connection,
                              const char      *sender_name,
                              const char      *object_path,
                              const char      *interface_name,
                              const char      *signal_name,
                              GVariant        *parameters,
                              gpointer         user_data)
{
  follow_step (user_data);
}

/* Ctrl-C ends following, which is how people leave it: not a failure. */
static gboolean
follow_interrupt_cb (gpointer user_data)
{
  follow_finish (user_data, PADDOCKCTL_EXIT_OK);
  return G_SOURCE_CONTINUE;
}

static void
follow_bus_closed_cb (GDBusConnection *connection,
                      gboolean         remote_peer_vanished,
                      GError          *error,
                      gpointer         user_data)
{
  paddockctl_warn (_("lost the connection to the D-Bus session bus"));
  follow_finish (user_data, PADDOCKCTL_EXIT_FAILED);
}

static int
follow (Reader *reader)
{
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autofree char *path = paddockctl_session_path (reader->id);
  GDBusConnection *bus = g_dbus_proxy_get_connection (G_DBUS_PROXY (reader->session));
  guint subscription;
  guint poll_id;
  guint interrupt_id;
  gulong closed_id;

  reader->loop = loop;

  /* Subscribe before the first read, so no announcement falls between. */
  subscription = g_dbus_connection_signal_subscribe (bus, PADDOCK_BUS_NAME,
                                                     "org.freedesktop.DBus.Properties",
                                                     "PropertiesChanged", path,
                                                     "org.paddock.Session1",
                                                     G_DBUS_SIGNAL_FLAGS_NONE,
                                                     follow_properties_changed_cb,
                                                     reader, NULL);
  poll_id = g_timeout_add (FOLLOW_POLL_MS, follow_poll_cb, reader);
  interrupt_id = g_unix_signal_add (SIGINT, follow_interrupt_cb, reader);
  closed_id = g_signal_connect (bus, "closed", G_CALLBACK (follow_bus_closed_cb), reader);

  /* A session that has already ended needs no loop at all. */
  follow_step (reader);
  if (!reader->done)
    g_main_loop_run (loop);

  g_signal_handler_disconnect (bus, closed_id);
  g_source_remove (interrupt_id);
  g_source_remove (poll_id);
  g_dbus_connection_signal_unsubscribe (bus, subscription);
  reader->loop = NULL;

  return reader->exit_code;
}

/* ---- logs ------------------------------------------------------------------------ */

int
paddockctl_logs (Paddockctl  *ctl,
                 int          argc,
                 char       **argv)
{
  const char *command_path = "paddockctl logs";
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockIpcSession1) session = NULL;
  g_autoptr(GByteArray) collected = NULL;
  g_autofree char *id = NULL;
  g_autofree char *offset_text = NULL;
  gboolean follow_output = FALSE;
  gboolean raw = FALSE;
  const GOptionEntry entries[] = {
    { "offset", 0, 0, G_OPTION_ARG_STRING, &offset_text,
      N_("Start at this absolute byte offset (default: 0, the oldest kept)"), N_("N") },
    { "follow", 'f', 0, G_OPTION_ARG_NONE, &follow_output,
      N_("Keep printing new output until the session ends"), NULL },
    { "raw", 0, 0, G_OPTION_ARG_NONE, &raw,
      N_("Print the bytes as they are, even on a terminal"), NULL },
    { NULL }
  };
  Reader reader = { 0 };
  int exit_code = PADDOCKCTL_EXIT_OK;
  guint64 offset = 0;

  context = paddockctl_option_context_new (ctl, "ID", LOGS_SUMMARY, entries);
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

  reader.ctl = ctl;
  reader.session = session;
  reader.id = id;
  reader.offset = offset;
  reader.escape = !ctl->json && !raw && paddockctl_fd_is_terminal (STDOUT_FILENO);
  paddockctl_escaper_init (&reader.escaper, PADDOCKCTL_ESCAPE_CRLF | PADDOCKCTL_ESCAPE_HIGHLIGHT);

  if (follow_output)
    {
      exit_code = follow (&reader);
      write_output (&reader, NULL, 0);
      return exit_code;
    }

  /* One document for the whole answer; the scrollback is bounded (8 MiB
   * by default), so holding it is fine. */
  if (ctl->json)
    reader.collected = collected = g_byte_array_new ();

  if (!drain (&reader, &error))
      return paddockctl_fail_session (ctl, id, &error);
  write_output (&reader, NULL, 0);

  if (ctl->json)
    print_chunk_json (ctl, reader.have_first ? reader.first : offset,
                      reader.offset, collected->data, collected->len);

  return PADDOCKCTL_EXIT_OK;
}
