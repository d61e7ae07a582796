/* paddockctl-output.c — JSON documents, error lines and usage errors
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gi18n.h>

#include "paddock-error.h"
#include "paddockctl-escape.h"
#include "paddockctl-private.h"

#define DAEMON_NOT_RUNNING_MESSAGE \
  N_("the Paddock daemon is not running; start it with \"paddockd &\" " \
     "(build tree: build/daemon/paddockd) or \"make run\"")

/* Scripts read exactly one document from stdout, so it is flushed at once:
 * `ports lease` keeps running after printing it. The document may hold
 * what an agent wrote (a diff, its output, a host it asked for): the
 * characters that would drive a terminal are written as \uXXXX, which
 * JSON reads as the same string. */
void
paddockctl_print_json (Paddockctl *ctl,
                       JsonNode   *root)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autofree char *generated = NULL;
  g_autofree char *text = NULL;

  json_generator_set_pretty (generator, isatty (STDOUT_FILENO));
  json_generator_set_root (generator, root);
  generated = json_generator_to_data (generator, NULL);
  text = paddockctl_escape_json (generated);

  fputs (text, stdout);
  fputc ('\n', stdout);
  fflush (stdout);
}

/* The D-Bus error name a script can match on: the remote name when the
 * error crossed the bus, our registered name otherwise. */
char *
paddockctl_dup_error_name (const GError *error)
{
  if (g_dbus_error_is_remote_error (error))
    return g_dbus_error_get_remote_error (error);

  if (error->domain == PADDOCK_ERROR)
    return g_strdup (paddock_error_to_dbus_name ((PaddockError) error->code));

  /* GIO registers its own domain, so this gives org.freedesktop.DBus.Error.*. */
  if (error->domain == G_DBUS_ERROR)
    return g_dbus_error_encode_gerror (error);

  if (error->domain == G_SPAWN_ERROR && error->code == G_SPAWN_ERROR_NOENT)
    return g_strdup (paddock_error_to_dbus_name (PADDOCK_ERROR_NOT_FOUND));

  if (error->domain == G_OPTION_ERROR)
    return g_strdup (paddock_error_to_dbus_name (PADDOCK_ERROR_INVALID_ARGUMENT));

  return g_strdup (paddock_error_to_dbus_name (PADDOCK_ERROR_FAILED));
}

/* Turns what the bus says about a missing or failing daemon into one line
 * that tells the user what to do; other messages pass through stripped of
 * their "GDBus.Error:name:" prefix. */
static char *
dup_error_message (const GError *error,
                   const char   *name)
{
  g_autoptr(GError) copy = NULL;

  if (g_dbus_error_is_remote_error (error))
    {
      if (g_str_equal (name, "org.freedesktop.DBus.Error.ServiceUnknown") ||
          g_str_equal (name, "org.freedesktop.DBus.Error.NameHasNoOwner"))
        return g_strdup (_(DAEMON_NOT_RUNNING_MESSAGE));

      copy = g_error_copy (error);
      g_dbus_error_strip_remote_error (copy);

      if (g_str_has_prefix (name, "org.freedesktop.DBus.Error.Spawn."))
        return g_strdup_printf (_("the Paddock daemon could not be started by D-Bus activation: %s"),
                                copy->message);

      if (g_str_equal (name, "org.freedesktop.DBus.Error.NoReply") ||
          g_str_equal (name, "org.freedesktop.DBus.Error.Timeout"))
        return g_strdup_printf (_("the Paddock daemon did not answer within %d seconds"),
                                PADDOCKCTL_CALL_TIMEOUT_MS / 1000);

      return g_strdup (copy->message);
    }

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
    return g_strdup_printf (_("the Paddock daemon did not answer within %d seconds"),
                            PADDOCKCTL_CALL_TIMEOUT_MS / 1000);

  return g_strdup (error->message);
}

int
paddockctl_fail_literal (Paddockctl *ctl,
                         int         exit_code,
                         const char *dbus_name,
                         const char *message)
{
  if (ctl->json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) root = NULL;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "error");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, dbus_name);
      json_builder_set_member_name (builder, "message");
      json_builder_add_string_value (builder, message);
      json_builder_end_object (builder);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  else
    {
      /* Messages echo paths and names an agent may have chosen. */
      g_autofree char *shown = paddockctl_dup_for_terminal (message, STDERR_FILENO,
                                                            PADDOCKCTL_ESCAPE_DEFAULT);

      fflush (stdout);
      fprintf (stderr, "paddockctl: %s\n", shown);
    }

  return exit_code;
}

int
paddockctl_fail (Paddockctl   *ctl,
                 const GError *error)
{
  g_autofree char *name = paddockctl_dup_error_name (error);
  g_autofree char *message = dup_error_message (error, name);

  return paddockctl_fail_literal (ctl, PADDOCKCTL_EXIT_FAILED, name, message);
}

int
paddockctl_usage_error (Paddockctl *ctl,
                        const char *command_path,
                        const char *format,
                        ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  paddockctl_fail_literal (ctl, PADDOCKCTL_EXIT_USAGE,
                           paddock_error_to_dbus_name (PADDOCK_ERROR_INVALID_ARGUMENT),
                           message);

  /* The hint is for people; JSON readers get the document alone. */
  if (!ctl->json)
    {
      fprintf (stderr, _("Try “%s --help” for more information."), command_path);
      fputc ('\n', stderr);
    }

  return PADDOCKCTL_EXIT_USAGE;
}

/* Notes that do not change the outcome go to stderr in every mode, so
 * stdout keeps exactly one JSON document. */
void
paddockctl_warn (const char *format,
                 ...)
{
  g_autofree char *message = NULL;
  g_autofree char *shown = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  shown = paddockctl_dup_for_terminal (message, STDERR_FILENO, PADDOCKCTL_ESCAPE_DEFAULT);

  fflush (stdout);
  fprintf (stderr, "paddockctl: %s\n", shown);
}

/* A size as "2G", "512M", "4096" (bytes, or K, M, G, T: powers of 1024),
 * within [@min, @max]. */
gboolean
paddockctl_parse_bytes (const char *text,
                        guint64     min,
                        guint64     max,
                        guint64    *out_bytes)
{
  static const char suffixes[] = "KMGT";
  g_autofree char *digits = g_strdup (text);
  size_t len = strlen (digits);
  const char *unit = len > 0 ? strchr (suffixes, g_ascii_toupper (digits[len - 1])) : NULL;
  guint shift = 0;
  guint64 n = 0;

  if (unit != NULL && digits[len - 1] != '\0')
    {
      shift = 10 * (guint) (unit - suffixes + 1);
      digits[len - 1] = '\0';
    }
  if (!g_ascii_string_to_unsigned (digits, 10, 1, G_MAXUINT64 >> shift, &n, NULL) ||
      (n << shift) < min || (n << shift) > max)
    return FALSE;
  *out_bytes = n << shift;
  return TRUE;
}
