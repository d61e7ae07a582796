/* paddockctl-info.c — `paddockctl info`: describe the running daemon
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gi18n.h>

#include "paddockctl-private.h"

/* Human form of one GetInfo value: strings bare ("-" when empty, as for
 * a missing helper), "started" as a local time, anything else in GVariant
 * text form. */
static char *
format_info_value (const char *key,
                   GVariant   *value)
{
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    {
      const char *text = g_variant_get_string (value, NULL);

      return g_strdup (*text != '\0' ? text : "-");
    }

  if (g_str_equal (key, "started") && g_variant_is_of_type (value, G_VARIANT_TYPE_UINT64))
    {
      guint64 seconds = g_variant_get_uint64 (value) / G_USEC_PER_SEC;
      g_autoptr(GDateTime) utc = NULL;
      g_autoptr(GDateTime) local = NULL;

      utc = g_date_time_new_from_unix_utc ((gint64) MIN (seconds, (guint64) G_MAXINT64));
      local = utc != NULL ? g_date_time_to_local (utc) : NULL;

      if (local != NULL)
        return g_date_time_format (local, "%Y-%m-%d %H:%M:%S %Z");
    }

  return g_variant_print (value, FALSE);
}

int
paddockctl_info (Paddockctl  *ctl,
                 int          argc,
                 char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) info = NULL;
  PaddockIpcManager1 *manager;
  int exit_code = 0;

  context = paddockctl_option_context_new (ctl, NULL, N_("Describe the running daemon."), NULL);
  if (!paddockctl_parse_options (ctl, context, "paddockctl info", &argc, &argv, &exit_code))
    return exit_code;

  if (argc > 1)
    return paddockctl_usage_error (ctl, "paddockctl info", _("unexpected argument “%s”"), argv[1]);

  if (!(manager = paddockctl_get_manager (ctl, &error)) ||
      !paddock_ipc_manager1_call_get_info_sync (manager, &info, NULL, &error))
    return paddockctl_fail (ctl, error);

  if (ctl->json)
    {
      /* a{sv} becomes an object of plain values; new keys flow through. */
      g_autoptr(JsonNode) root = json_gvariant_serialize (info);

      paddockctl_print_json (ctl, root);
    }
  else
    {
      GVariantIter iter;
      const char *key;
      GVariant *value;

      g_variant_iter_init (&iter, info);
      while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
        {
          g_autoptr(GVariant) owned = value;
          g_autofree char *text = format_info_value (key, value);

          g_print ("%-10s %s\n", key, text);
        }
    }

  return PADDOCKCTL_EXIT_OK;
}
