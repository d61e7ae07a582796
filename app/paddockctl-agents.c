/* paddockctl-agents.c — `paddockctl agents`: the agent presets, their homes and logins
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   paddockctl agents [list] [--json]     each preset: found or not, where, where it looked
 *   paddockctl agents reset NAME          empty the agent's home (its kept logins and state)
 *   paddockctl agents import-login NAME --yes
 *                                         copy its credential files from your HOME, once
 */

#include "config.h"

#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "paddockctl-escape.h"
#include "paddockctl-private.h"

/* A path of ListAgents (ay) as text: itself when UTF-8, else as GLib
 * shows a file name. */
static char *
path_text (GVariant *value)
{
  const char *bytes = g_variant_get_bytestring (value);

  return g_utf8_validate (bytes, -1, NULL) ? g_strdup (bytes) : g_filename_display_name (bytes);
}

static char *
lookup_path (GVariant   *agent,
             const char *key)
{
  g_autoptr(GVariant) value = g_variant_lookup_value (agent, key, G_VARIANT_TYPE_BYTESTRING);

  return value != NULL ? path_text (value) : NULL;
}

static GStrv
lookup_paths (GVariant   *agent,
              const char *key)
{
  g_autoptr(GVariant) value = g_variant_lookup_value (agent, key, G_VARIANT_TYPE_BYTESTRING_ARRAY);
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);

  for (gsize i = 0; value != NULL && i < g_variant_n_children (value); i++)
    {
      g_autoptr(GVariant) child = g_variant_get_child_value (value, i);

      g_ptr_array_add (paths, path_text (child));
    }
  g_ptr_array_add (paths, NULL);
  return (GStrv) g_ptr_array_free (g_steal_pointer (&paths), FALSE);
}

static GStrv
lookup_strv (GVariant   *agent,
             const char *key)
{
  g_autoptr(GVariant) value = g_variant_lookup_value (agent, key, G_VARIANT_TYPE_STRING_ARRAY);

  return value != NULL ? g_variant_dup_strv (value, NULL) : g_new0 (char *, 1);
}

static char *
lookup_string (GVariant   *agent,
               const char *key)
{
  g_autofree char *text = NULL;

  return g_variant_lookup (agent, key, "s", &text) ? g_steal_pointer (&text) : NULL;
}

static void
json_add_strv (JsonBuilder        *builder,
               const char         *member,
               const char * const *strv)
{
  json_builder_set_member_name (builder, member);
  json_builder_begin_array (builder);
  for (guint i = 0; strv[i] != NULL; i++)
    json_builder_add_string_value (builder, strv[i]);
  json_builder_end_array (builder);
}

static void
json_add_string_or_null (JsonBuilder *builder,
                         const char  *member,
                         const char  *text)
{
  json_builder_set_member_name (builder, member);
  if (text != NULL)
    json_builder_add_string_value (builder, text);
  else
    json_builder_add_null_value (builder);
}

/* One agent, as `agents --json` prints it (README, "Agents"). */
static void
json_add_agent (JsonBuilder *builder,
                GVariant    *agent)
{
  g_autofree char *name = lookup_string (agent, "name");
  g_autofree char *title = lookup_string (agent, "title");
  g_autofree char *error = lookup_string (agent, "error");
  g_autofree char *hint = lookup_string (agent, "install-hint");
  g_autofree char *source = lookup_string (agent, "source");
  g_autofree char *program = lookup_path (agent, "program");
  g_autofree char *resolved = lookup_path (agent, "resolved");
  g_autofree char *home = lookup_path (agent, "home");
  g_auto(GStrv) view = lookup_paths (agent, "view");
  g_auto(GStrv) looked = lookup_paths (agent, "looked");
  g_auto(GStrv) login = lookup_strv (agent, "login");
  g_auto(GStrv) domains = lookup_strv (agent, "domains");
  g_auto(GStrv) env_pass = lookup_strv (agent, "env-pass");
  g_auto(GStrv) persist = lookup_strv (agent, "home-persist");
  g_auto(GStrv) credentials = lookup_strv (agent, "credentials");
  gboolean found = FALSE;

  g_variant_lookup (agent, "found", "b", &found);
  json_builder_begin_object (builder);
  json_add_string_or_null (builder, "name", name);
  json_add_string_or_null (builder, "title", title);
  json_builder_set_member_name (builder, "found");
  json_builder_add_boolean_value (builder, found);
  json_add_string_or_null (builder, "program", program);
  json_add_string_or_null (builder, "resolved", resolved);
  json_add_strv (builder, "view", (const char * const *) view);
  json_add_strv (builder, "looked", (const char * const *) looked);
  json_add_string_or_null (builder, "error", error);
  json_add_string_or_null (builder, "install_hint", hint);
  json_add_strv (builder, "login", (const char * const *) login);
  json_add_strv (builder, "domains", (const char * const *) domains);
  json_add_strv (builder, "env_pass", (const char * const *) env_pass);
  json_add_string_or_null (builder, "home", home);
  json_add_strv (builder, "home_persist", (const char * const *) persist);
  json_add_strv (builder, "credentials", (const char * const *) credentials);
  json_add_string_or_null (builder, "source", source);
  json_builder_end_object (builder);
}

static void
print_line (const char *text)
{
  g_autofree char *shown = paddockctl_dup_for_terminal (text, STDOUT_FILENO, PADDOCKCTL_ESCAPE_ONE_LINE);

  printf ("%s\n", shown);
}

static void
print_agent (GVariant *agent)
{
  g_autofree char *name = lookup_string (agent, "name");
  g_autofree char *title = lookup_string (agent, "title");
  g_autofree char *error = lookup_string (agent, "error");
  g_autofree char *program = lookup_path (agent, "program");
  g_autofree char *home = lookup_path (agent, "home");
  g_auto(GStrv) looked = lookup_paths (agent, "looked");
  g_auto(GStrv) login = lookup_strv (agent, "login");
  g_autofree char *looked_text = g_strjoinv (", ", looked);
  g_autofree char *login_text = g_strjoinv (" ", login);
  g_autofree char *line = NULL;
  gboolean found = FALSE;

  g_variant_lookup (agent, "found", "b", &found);
  if (found)
    line = g_strdup_printf (_("%s (%s): found, %s"), name, title, program);
  else
    line = g_strdup_printf (_("%s (%s): not found"), name, title);
  print_line (line);
  if (error != NULL)
    {
      g_autofree char *text = g_strdup_printf ("  %s", error);
      print_line (text);
    }
  if (looked[0] != NULL)
    {
      g_autofree char *text = g_strdup_printf (_("  looked in: %s"), looked_text);
      print_line (text);
    }
  if (login[0] != NULL)
    {
      g_autofree char *text = g_strdup_printf (_("  log in: paddockctl create --agent %s --workspace DIR -- %s"),
                                               name, login_text);
      print_line (text);
    }
  if (home != NULL)
    {
      g_autofree char *text = g_strdup_printf (_("  home: %s"), home);
      print_line (text);
    }
}

static int
agents_list (Paddockctl  *ctl,
             int          argc,
             char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) agents = NULL;
  PaddockIpcManager1 *manager;
  int exit_code = PADDOCKCTL_EXIT_OK;

  context = paddockctl_option_context_new (ctl, NULL, N_("List the agent presets: found or not, and where."), NULL);
  if (!paddockctl_parse_options (ctl, context, "paddockctl agents list", &argc, &argv, &exit_code))
    return exit_code;
  if (argc > 1)
    return paddockctl_usage_error (ctl, "paddockctl agents list", _("unexpected argument “%s”"), argv[1]);
  if (!(manager = paddockctl_get_manager (ctl, &error)) ||
      !paddock_ipc_manager1_call_list_agents_sync (manager, &agents, NULL, &error))
    return paddockctl_fail (ctl, error);

  if (ctl->json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) root = NULL;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "agents");
      json_builder_begin_array (builder);
      for (gsize i = 0; i < g_variant_n_children (agents); i++)
        {
          g_autoptr(GVariant) agent = g_variant_get_child_value (agents, i);

          json_add_agent (builder, agent);
        }
      json_builder_end_array (builder);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  else
    for (gsize i = 0; i < g_variant_n_children (agents); i++)
      {
        g_autoptr(GVariant) agent = g_variant_get_child_value (agents, i);

        print_agent (agent);
      }
  return PADDOCKCTL_EXIT_OK;
}

/* Options of CONTEXT, then exactly one NAME: returned, or NULL with
 * *exit_code set (the usage error said). */
static const char *
parse_name (Paddockctl     *ctl,
            GOptionContext *context,
            const char     *command_path,
            int             argc,
            char          **argv,
            int            *exit_code)
{
  if (!paddockctl_parse_options (ctl, context, command_path, &argc, &argv, exit_code))
    return NULL;
  if (argc < 2)
    *exit_code = paddockctl_usage_error (ctl, command_path, "%s", _("missing NAME"));
  else if (argc > 2)
    *exit_code = paddockctl_usage_error (ctl, command_path, _("unexpected argument “%s”"), argv[2]);
  else
    return argv[1];
  return NULL;
}

static int
agents_reset (Paddockctl  *ctl,
              int          argc,
              char       **argv)
{
  const char *command_path = "paddockctl agents reset";
  const char *name;
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  PaddockIpcManager1 *manager;
  int exit_code = PADDOCKCTL_EXIT_OK;

  context = paddockctl_option_context_new (ctl, "NAME",
                                           N_("Empty an agent's home: the logins, settings and caches its "
                                              "sessions kept. Refused while a session of it runs."), NULL);
  if (!(name = parse_name (ctl, context, command_path, argc, argv, &exit_code)))
    return exit_code;
  if (!(manager = paddockctl_get_manager (ctl, &error)) ||
      !paddock_ipc_manager1_call_reset_agent_sync (manager, name, NULL, &error))
    return paddockctl_fail (ctl, error);
  if (ctl->json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) root = NULL;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "reset");
      json_builder_add_string_value (builder, name);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  else
    {
      g_autofree char *line = g_strdup_printf (_("The home of %s is empty"), name);
      print_line (line);
    }
  return PADDOCKCTL_EXIT_OK;
}

static int
agents_import_login (Paddockctl  *ctl,
                     int          argc,
                     char       **argv)
{
  const char *command_path = "paddockctl agents import-login";
  const char *name;
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) copied = NULL;
  PaddockIpcManager1 *manager;
  gboolean yes = FALSE;
  int exit_code = PADDOCKCTL_EXIT_OK;
  const GOptionEntry entries[] = {
    { "yes", 0, 0, G_OPTION_ARG_NONE, &yes,
      N_("Yes, copy the agent's credential files from my HOME into its home"), NULL },
    { NULL }
  };

  context = paddockctl_option_context_new (ctl, "NAME --yes",
                                           N_("Copy, once, the credential files an agent's preset names from your "
                                              "HOME into the agent's home, so a login made on this machine works "
                                              "in its sessions. Nothing else of your HOME is read."), entries);
  if (!(name = parse_name (ctl, context, command_path, argc, argv, &exit_code)))
    return exit_code;
  /* A copy of credentials is the user's decision, said explicitly. */
  if (!yes)
    return paddockctl_usage_error (ctl, command_path,
                                   _("this copies your login of %s into Paddock's copy of its home: "
                                     "say so with --yes (see “paddockctl agents” for the files)"), name);
  if (!(manager = paddockctl_get_manager (ctl, &error)) ||
      !paddock_ipc_manager1_call_import_agent_login_sync (manager, name, &copied, NULL, &error))
    return paddockctl_fail (ctl, error);
  if (ctl->json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) root = NULL;

      json_builder_begin_object (builder);
      json_add_strv (builder, "copied", (const char * const *) copied);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  else
    for (guint i = 0; copied[i] != NULL; i++)
      {
        g_autofree char *line = g_strdup_printf (_("Copied ~/%s"), copied[i]);
        print_line (line);
      }
  return PADDOCKCTL_EXIT_OK;
}

static const PaddockctlCommand agents_commands[] = {
  { "list",         agents_list,         N_("List the agent presets: found or not, where, where they looked") },
  { "reset",        agents_reset,        N_("Empty an agent's home (its kept logins and state)") },
  { "import-login", agents_import_login, N_("Copy an agent's credential files from your HOME, once (--yes)") },
};

int
paddockctl_agents (Paddockctl  *ctl,
                   int          argc,
                   char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autofree char *description = NULL;
  int exit_code = PADDOCKCTL_EXIT_OK;

  context = paddockctl_option_context_new (ctl, "[COMMAND [ARG…]]",
                                           N_("Agent presets (Claude Code, Codex, OpenCode, pi, a shell…): "
                                              "where they are installed, their homes, their logins. "
                                              "Without a command: list."), NULL);
  g_option_context_set_strict_posix (context, TRUE);
  description = paddockctl_commands_help (agents_commands, G_N_ELEMENTS (agents_commands));
  g_option_context_set_description (context, description);
  if (!paddockctl_parse_options (ctl, context, "paddockctl agents", &argc, &argv, &exit_code))
    return exit_code;
  if (argc < 2)
    return agents_list (ctl, argc, argv);
  return paddockctl_dispatch (ctl, "paddockctl agents", agents_commands, G_N_ELEMENTS (agents_commands),
                              argc, argv);
}

/**
 * paddockctl_agents_add_pass_env:
 * @agent: the preset's name
 * @env: (nullable): the user's --env K=V
 * @pass_env: (nullable): the user's --pass-env K
 * @env_builder: the session's "env", where the caller's own values go
 *
 * The variables the preset may take from the user (ANTHROPIC_API_KEY,
 * say), passed from ours as --pass-env would, unless the user named them
 * already: a daemon started by D-Bus activation has none of the user's
 * shell.
 */
gboolean
paddockctl_agents_add_pass_env (Paddockctl         *ctl,
                                const char         *agent,
                                const char * const *env,
                                const char * const *pass_env,
                                GVariantBuilder    *env_builder,
                                GError            **error)
{
  g_autoptr(GVariant) agents = NULL;
  PaddockIpcManager1 *manager = paddockctl_get_manager (ctl, error);

  if (manager == NULL || !paddock_ipc_manager1_call_list_agents_sync (manager, &agents, NULL, error))
    return FALSE;
  for (gsize i = 0; i < g_variant_n_children (agents); i++)
    {
      g_autoptr(GVariant) entry = g_variant_get_child_value (agents, i);
      g_autofree char *name = lookup_string (entry, "name");
      g_auto(GStrv) pass = NULL;

      if (g_strcmp0 (name, agent) != 0)
        continue;
      pass = lookup_strv (entry, "env-pass");
      for (guint j = 0; pass[j] != NULL; j++)
        {
          const char *value = g_getenv (pass[j]);
          gboolean named = pass_env != NULL && g_strv_contains (pass_env, pass[j]);

          for (guint k = 0; env != NULL && env[k] != NULL && !named; k++)
            named = g_str_has_prefix (env[k], pass[j]) && env[k][strlen (pass[j])] == '=';
          if (value != NULL && !named && paddockctl_is_env_name (pass[j]))
            g_variant_builder_add (env_builder, "{ss}", pass[j], value);
        }
    }
  return TRUE;
}
