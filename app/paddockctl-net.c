/* paddockctl-net.c — `paddockctl net ID records|set`: a session's network requests and policy
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <unistd.h>

#include <json-glib/json-glib.h>

#include <glib/gi18n.h>

#include "paddock-error.h"
#include "paddock-net-modes.h"
#include "paddockctl-escape.h"
#include "paddockctl-private.h"

/* Pages of ListNetworkRecords; the daemon answers at most 1000 a call. */
#define RECORDS_PAGE 1000

static void
add_record_json (JsonBuilder *builder,
                 GVariant    *record)
{
  GVariantDict dict;
  guint64 seq = 0, bytes_up = 0, bytes_down = 0;
  gint64 time_usec = 0, duration_ms = 0;
  guint32 port = 0;
  const char *method = "", *host = "", *verdict = "", *error = "";

  g_variant_dict_init (&dict, record);
  g_variant_dict_lookup (&dict, "seq", "t", &seq);
  g_variant_dict_lookup (&dict, "time", "x", &time_usec);
  g_variant_dict_lookup (&dict, "method", "&s", &method);
  g_variant_dict_lookup (&dict, "host", "&s", &host);
  g_variant_dict_lookup (&dict, "port", "u", &port);
  g_variant_dict_lookup (&dict, "verdict", "&s", &verdict);
  g_variant_dict_lookup (&dict, "bytes_up", "t", &bytes_up);
  g_variant_dict_lookup (&dict, "bytes_down", "t", &bytes_down);
  g_variant_dict_lookup (&dict, "duration_ms", "x", &duration_ms);
  g_variant_dict_lookup (&dict, "error", "&s", &error);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "seq");
  json_builder_add_int_value (builder, (gint64) MIN (seq, (guint64) G_MAXINT64));
  json_builder_set_member_name (builder, "time");
  json_builder_add_int_value (builder, time_usec);
  json_builder_set_member_name (builder, "method");
  json_builder_add_string_value (builder, method);
  json_builder_set_member_name (builder, "host");
  json_builder_add_string_value (builder, host);
  json_builder_set_member_name (builder, "port");
  json_builder_add_int_value (builder, port);
  json_builder_set_member_name (builder, "verdict");
  json_builder_add_string_value (builder, verdict);
  json_builder_set_member_name (builder, "bytes_up");
  json_builder_add_int_value (builder, (gint64) MIN (bytes_up, (guint64) G_MAXINT64));
  json_builder_set_member_name (builder, "bytes_down");
  json_builder_add_int_value (builder, (gint64) MIN (bytes_down, (guint64) G_MAXINT64));
  json_builder_set_member_name (builder, "duration_ms");
  json_builder_add_int_value (builder, duration_ms);
  json_builder_set_member_name (builder, "error");
  json_builder_add_string_value (builder, error);
  json_builder_end_object (builder);
  g_variant_dict_clear (&dict);
}

static void
print_record (GVariant *record)
{
  GVariantDict dict;
  gint64 time_usec = 0, duration_ms = 0;
  guint64 bytes_up = 0, bytes_down = 0;
  guint32 port = 0;
  const char *method = "", *host = "", *verdict = "", *error = "";
  g_autoptr(GDateTime) when = NULL;
  g_autofree char *when_text = NULL;
  g_autofree char *shown_method = NULL;
  g_autofree char *shown_host = NULL;
  g_autofree char *shown_error = NULL;

  g_variant_dict_init (&dict, record);
  g_variant_dict_lookup (&dict, "time", "x", &time_usec);
  g_variant_dict_lookup (&dict, "method", "&s", &method);
  g_variant_dict_lookup (&dict, "host", "&s", &host);
  g_variant_dict_lookup (&dict, "port", "u", &port);
  g_variant_dict_lookup (&dict, "verdict", "&s", &verdict);
  g_variant_dict_lookup (&dict, "bytes_up", "t", &bytes_up);
  g_variant_dict_lookup (&dict, "bytes_down", "t", &bytes_down);
  g_variant_dict_lookup (&dict, "duration_ms", "x", &duration_ms);
  g_variant_dict_lookup (&dict, "error", "&s", &error);
  when = g_date_time_new_from_unix_local (time_usec / G_USEC_PER_SEC);
  when_text = when != NULL ? g_date_time_format (when, "%Y-%m-%d %H:%M:%S") : g_strdup ("?");
  /* The method and host are what the agent's request said. */
  shown_method = paddockctl_dup_for_terminal (method[0] != '\0' ? method : "-", STDOUT_FILENO,
                                              PADDOCKCTL_ESCAPE_ONE_LINE);
  shown_host = paddockctl_dup_for_terminal (host[0] != '\0' ? host : "-", STDOUT_FILENO,
                                            PADDOCKCTL_ESCAPE_ONE_LINE);
  shown_error = paddockctl_dup_for_terminal (error, STDOUT_FILENO, PADDOCKCTL_ESCAPE_ONE_LINE);

  g_print ("%s %-7s %-8s %s:%u ↑%" G_GUINT64_FORMAT " ↓%" G_GUINT64_FORMAT " %" G_GINT64_FORMAT " ms%s%s\n",
           when_text, verdict, shown_method, shown_host, port,
           bytes_up, bytes_down, duration_ms, error[0] != '\0' ? "  " : "", shown_error);
  g_variant_dict_clear (&dict);
}

static int
net_records (Paddockctl         *ctl,
             const char         *id,
             PaddockIpcSession1 *session)
{
  g_autoptr(JsonBuilder) builder = NULL;
  g_autoptr(GError) error = NULL;
  guint64 after = 0;
  guint count = 0;

  if (ctl->json)
    {
      builder = json_builder_new ();
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "records");
      json_builder_begin_array (builder);
    }

  for (;;)
    {
      g_autoptr(GVariant) records = NULL;
      guint64 next = 0;
      GVariantIter iter;
      GVariant *record;

      if (!paddock_ipc_session1_call_list_network_records_sync (session, after, RECORDS_PAGE,
                                                                &records, &next, NULL, &error))
        return paddockctl_fail_session (ctl, id, &error);
      g_variant_iter_init (&iter, records);
      while ((record = g_variant_iter_next_value (&iter)) != NULL)
        {
          if (builder != NULL)
            add_record_json (builder, record);
          else
            print_record (record);
          count++;
          g_variant_unref (record);
        }
      if (g_variant_n_children (records) == 0 || next <= after)
        break;
      after = next;
    }

  if (builder != NULL)
    {
      g_autoptr(JsonNode) root = NULL;

      json_builder_end_array (builder);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  else if (count == 0)
    g_print (_("No network requests.\n"));
  return PADDOCKCTL_EXIT_OK;
}

int
paddockctl_net (Paddockctl  *ctl,
                int          argc,
                char       **argv)
{
  const char *command_path = "paddockctl net";
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockIpcSession1) session = NULL;
  g_autofree char *id = NULL;
  g_autofree char *mode = NULL;
  g_auto(GStrv) allow_domains = NULL;
  const char *action;
  int exit_code = PADDOCKCTL_EXIT_OK;
  const GOptionEntry entries[] = {
    { "net", 0, 0, G_OPTION_ARG_STRING, &mode,
      N_("With set: host, none or proxy (only none and proxy switch while running)"), N_("MODE") },
    { "allow-domain", 0, 0, G_OPTION_ARG_STRING_ARRAY, &allow_domains,
      N_("With set: a domain the proxy may reach (example.com, *.example.com, !D denies; repeatable). "
         "The list replaces the session's"), N_("D") },
    { NULL }
  };

  context = paddockctl_option_context_new (ctl, "ID records | ID set --net MODE [--allow-domain D]…",
                                           N_("List the requests a session made through its proxy, or "
                                              "change its network policy\n(the allowlist applies to the "
                                              "next request at once)."), entries);
  if (!paddockctl_parse_options (ctl, context, command_path, &argc, &argv, &exit_code))
    return exit_code;
  if (argc < 3)
    return paddockctl_usage_error (ctl, command_path, _("expected ID and records or set"));
  if (argc > 3)
    return paddockctl_usage_error (ctl, command_path, _("unexpected argument “%s”"), argv[3]);
  if (!(id = paddockctl_parse_session_id (ctl, command_path, argv[1], &exit_code)))
    return exit_code;
  action = argv[2];
  if (!g_str_equal (action, "records") && !g_str_equal (action, "set"))
    return paddockctl_usage_error (ctl, command_path, _("unknown action “%s”: records or set"), action);
  if (g_str_equal (action, "records") && (mode != NULL || allow_domains != NULL))
    return paddockctl_usage_error (ctl, command_path, _("--net and --allow-domain go with set"));
  if (g_str_equal (action, "set") && mode == NULL)
    return paddockctl_usage_error (ctl, command_path, _("set needs --net MODE"));
  if (mode != NULL && !paddock_net_mode_is_valid (mode))
    return paddockctl_usage_error (ctl, command_path, "invalid --net “%s”: expected " PADDOCK_NET_MODES_TEXT, mode);

  if (!(session = paddockctl_dup_session (ctl, id, &error)))
    return paddockctl_fail (ctl, error);

  if (g_str_equal (action, "records"))
    return net_records (ctl, id, session);

  {
    const char * const empty[] = { NULL };

    if (!paddock_ipc_session1_call_set_network_policy_sync (session, mode,
                                                            allow_domains != NULL
                                                            ? (const char * const *) allow_domains : empty,
                                                            NULL, &error))
      return paddockctl_fail_session (ctl, id, &error);
  }
  if (ctl->json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) root = NULL;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "id");
      json_builder_add_string_value (builder, id);
      json_builder_set_member_name (builder, "net");
      json_builder_add_string_value (builder, mode);
      json_builder_set_member_name (builder, "allow_domains");
      json_builder_begin_array (builder);
      for (guint i = 0; allow_domains != NULL && allow_domains[i] != NULL; i++)
        json_builder_add_string_value (builder, allow_domains[i]);
      json_builder_end_array (builder);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  else
    g_print (_("The network of %s is now %s.\n"), id, mode);
  return PADDOCKCTL_EXIT_OK;
}
