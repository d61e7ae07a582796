/* paddockctl-send.c — `paddockctl send`: text typed into a session's terminal
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "paddockctl-private.h"

/* What one send types at most, refused here before the call with the
 * size: a script's mistake (a whole file as TEXT) is said, not queued. */
#define MAX_INPUT_BYTES       (64 * 1024)

#define SEND_SUMMARY \
  N_("Type TEXT into the session's terminal, exactly as given: no newline is\n" \
  "added. To press Enter, end TEXT with one, e.g. in bash:\n" \
  "  paddockctl send ID $'ls\\n'\n" \
  "Put “--” before a TEXT that starts with “-”. At most 64 KiB at a time.")

int
paddockctl_send (Paddockctl  *ctl,
                 int          argc,
                 char       **argv)
{
  const char *command_path = "paddockctl send";
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockIpcSession1) session = NULL;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GPtrArray) words = g_ptr_array_new ();
  g_autofree char *id = NULL;
  g_autofree char **options_argv = NULL;
  GVariant *input;
  const char *text;
  int separator = argc;
  int options_argc;
  int exit_code = PADDOCKCTL_EXIT_OK;
  gsize length;

  /* TEXT may well start with "-": after "--" nothing is an option. */
  for (int i = 1; i < argc; i++)
    if (g_str_equal (argv[i], "--"))
      {
        separator = i;
        break;
      }

  options_argc = separator;
  options_argv = g_new0 (char *, options_argc + 1);
  memcpy (options_argv, argv, sizeof (char *) * options_argc);

  context = paddockctl_option_context_new (ctl, "ID [--] TEXT", SEND_SUMMARY, NULL);
  {
    char **parse_argv = options_argv;

    if (!paddockctl_parse_options (ctl, context, command_path,
                                   &options_argc, &parse_argv, &exit_code))
      return exit_code;
  }

  /* The words GOption left, then those after "--". */
  for (int i = 1; i < options_argc; i++)
    g_ptr_array_add (words, options_argv[i]);
  for (int i = separator + 1; i < argc; i++)
    g_ptr_array_add (words, argv[i]);

  if (words->len < 1)
    return paddockctl_usage_error (ctl, command_path, _("missing session ID"));
  if (words->len < 2)
    return paddockctl_usage_error (ctl, command_path, _("missing TEXT"));
  if (words->len > 2)
    return paddockctl_usage_error (ctl, command_path,
                                   _("unexpected argument “%s” (quote TEXT as one argument)"),
                                   (const char *) words->pdata[2]);
  if (!(id = paddockctl_parse_session_id (ctl, command_path, words->pdata[0], &exit_code)))
    return exit_code;

  text = words->pdata[1];
  length = strlen (text);
  if (length > MAX_INPUT_BYTES)
    return paddockctl_usage_error (ctl, command_path,
                                   "TEXT is %" G_GSIZE_FORMAT " bytes; at most %d may be sent "
                                   "at a time", length, MAX_INPUT_BYTES);

  /* The bytes exactly, without the NUL a bytestring would add: the
   * daemon types every byte of the array. */
  input = g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, text, length, 1);
  if (!(session = paddockctl_dup_session (ctl, id, &error)) ||
      !(reply = g_dbus_proxy_call_sync (G_DBUS_PROXY (session), "SendInput",
                                        g_variant_new_tuple (&input, 1),
                                        G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error)))
    {
      if (session != NULL)
        paddockctl_check_session_error (ctl, id, &error);
      return paddockctl_fail (ctl, error);
    }

  if (ctl->json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) root = NULL;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "id");
      json_builder_add_string_value (builder, id);
      json_builder_set_member_name (builder, "sent");
      json_builder_add_int_value (builder, (gint64) length);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }

  return PADDOCKCTL_EXIT_OK;
}
