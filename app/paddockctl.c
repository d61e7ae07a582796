/* paddockctl.c — the scripting CLI: global options and command dispatch
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <string.h>

#include "paddock-error.h"
#include "paddock-i18n.h"
#include "paddockctl-private.h"

/* Commands are a table: one row and one function each. Those of later
 * versions have their rows already, so that scripts get a clear "arrives
 * with a later version" (exit 1) rather than "unknown command" (exit 2). */
static const PaddockctlCommand paddockctl_commands[] = {
  { "create",     paddockctl_create,            N_("Start an agent session in a workspace") },
  { "list",       paddockctl_list,              N_("List the sessions") },
  { "status",     paddockctl_status,            N_("Describe one session") },
  { "logs",       paddockctl_logs,              N_("Print a session's terminal output") },
  { "send",       paddockctl_send,              N_("Type text into a session's terminal") },
  { "stop",       paddockctl_stop,              N_("Stop every process of a session") },
  { "destroy",    paddockctl_destroy,           N_("Stop a session and delete it") },
  { "attach",     paddockctl_attach,            N_("Open a session's terminal; Ctrl-] detaches") },
  { "exec",       paddockctl_exec,              N_("Run a command in a session and wait for it") },
  { "review",     paddockctl_review,            N_("List a session's staged changes, or show their diffs") },
  { "apply",      paddockctl_apply,             N_("Apply staged changes to the workspace, all or some") },
  { "drop",       paddockctl_drop,              N_("Discard staged changes, all or some") },
  { "checkpoint", paddockctl_checkpoint,        N_("Save, list or restore copies of a session's stage") },
  { "net",        paddockctl_net,               N_("List a session's network requests, or change its policy") },
  { "ports",      paddockctl_ports,             N_("Lease, release and list local TCP ports") },
  { "info",       paddockctl_info,              N_("Describe the running daemon") },
  { "agents",     paddockctl_agents,            N_("List the agent presets, reset an agent's home, import its login") },
};

char *
paddockctl_commands_help (const PaddockctlCommand *commands,
                          gsize                    n_commands)
{
  g_autoptr(GString) help = g_string_new (_("Commands:"));
  gsize width = 0;

  for (gsize i = 0; i < n_commands; i++)
    width = MAX (width, strlen (commands[i].name));

  g_string_append_c (help, '\n');
  /* The tables' summaries are marked N_(): translated here, as printed. */
  for (gsize i = 0; i < n_commands; i++)
    g_string_append_printf (help, "  %-*s  %s\n",
                            (int) width, commands[i].name, _(commands[i].summary));

  return g_string_free (g_steal_pointer (&help), FALSE);
}

/* Every context accepts --json so that it works before or after the
 * command words alike; main() has already looked for it (see
 * scan_for_json()), the entry only keeps GOption from rejecting it. */
GOptionContext *
paddockctl_option_context_new (Paddockctl         *ctl,
                               const char         *parameter_string,
                               const char         *summary,
                               const GOptionEntry *entries)
{
  const GOptionEntry json_entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &ctl->json,
      N_("Print one JSON document on standard output"), NULL },
    { NULL }
  };
  GOptionContext *context = g_option_context_new (parameter_string);

  /* GOption translates the summary, the parameter string and the entries'
   * descriptions through this domain, so every command's --help is
   * translated where its strings are marked N_(). */
  g_option_context_set_translation_domain (context, GETTEXT_PACKAGE);
  /* GOption copies the entries, so the local array may go. */
  g_option_context_add_main_entries (context, json_entries, NULL);
  if (entries != NULL)
    g_option_context_add_main_entries (context, entries, NULL);
  if (summary != NULL)
    g_option_context_set_summary (context, summary);

  return context;
}

/* Parses one command's options. On failure prints a usage error and
 * returns FALSE with *exit_code set. --help prints and exits 0 inside
 * GOption, which is what a CLI wants. */
gboolean
paddockctl_parse_options (Paddockctl       *ctl,
                          GOptionContext   *context,
                          const char       *command_path,
                          int              *argc,
                          char           ***argv,
                          int              *exit_code)
{
  g_autoptr(GError) error = NULL;
  gboolean ret;

  /* The usage line of --help reads "<prgname> [OPTION…] <parameters>". */
  g_set_prgname (command_path);
  ret = g_option_context_parse (context, argc, argv, &error);
  g_set_prgname ("paddockctl");

  if (!ret)
    {
      *exit_code = paddockctl_usage_error (ctl, command_path, "%s", error->message);
      return FALSE;
    }

  return TRUE;
}

gboolean
paddockctl_parse_port (const char *text,
                       gboolean    allow_zero,
                       guint16    *out_port)
{
  guint64 value = 0;

  if (!g_ascii_string_to_unsigned (text, 10, allow_zero ? 0 : 1, G_MAXUINT16,
                                   &value, NULL))
    return FALSE;

  *out_port = (guint16) value;
  return TRUE;
}

/* What the daemon accepts as a variable name: letters, digits and _, not
 * starting with a digit. */
gboolean
paddockctl_is_env_name (const char *name)
{
  if (!g_ascii_isalpha (*name) && *name != '_')
    return FALSE;

  for (const char *p = name; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '_')
      return FALSE;

  return TRUE;
}

/* Adds every --env K=V to @builder (a{ss}). Returns the first one that is
 * not K=V with a valid K, for the caller's usage error, or NULL. */
const char *
paddockctl_add_env (GVariantBuilder *builder,
                    char           **env)
{
  for (gsize i = 0; env != NULL && env[i] != NULL; i++)
    {
      const char *equals = strchr (env[i], '=');
      g_autofree char *key = equals != NULL ? g_strndup (env[i], equals - env[i]) : NULL;

      if (key == NULL || !paddockctl_is_env_name (key))
        return env[i];
      g_variant_builder_add (builder, "{ss}", key, equals + 1);
    }

  return NULL;
}

/* The object (a session or command) is not on the bus (any more). */
gboolean
paddockctl_is_unknown_object_error (const GError *error)
{
  return g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_METHOD) ||
         g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_OBJECT) ||
         g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_INTERFACE);
}

int
paddockctl_dispatch (Paddockctl              *ctl,
                     const char              *group,
                     const PaddockctlCommand *commands,
                     gsize                    n_commands,
                     int                      argc,
                     char                   **argv)
{
  if (argc < 2)
    return paddockctl_usage_error (ctl, group, _("missing command"));

  for (gsize i = 0; i < n_commands; i++)
    if (g_str_equal (argv[1], commands[i].name))
      return commands[i].func (ctl, argc - 1, argv + 1);

  return paddockctl_usage_error (ctl, group, _("unknown command “%s”"), argv[1]);
}

/* --json is global, but GOption only sees the options of the context that
 * parses them, and a failed parse reverts what it had set. Looking for it
 * up front means even a usage error comes out as JSON when asked. Words
 * after "--" belong to a user's command and are not ours. */
static gboolean
scan_for_json (int    argc,
               char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--"))
        break;
      if (g_str_equal (argv[i], "--json"))
        return TRUE;
    }

  return FALSE;
}

static int
paddockctl_main (Paddockctl  *ctl,
                 int          argc,
                 char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autofree char *commands_help = NULL;
  g_autofree char *description = NULL;
  gboolean version = FALSE;
  const GOptionEntry entries[] = {
    { "version", 0, 0, G_OPTION_ARG_NONE, &version, N_("Print the version and exit"), NULL },
    { NULL }
  };
  int exit_code = PADDOCKCTL_EXIT_OK;

  ctl->json = scan_for_json (argc, argv);

  context = paddockctl_option_context_new (ctl, "COMMAND [ARG…]",
                                           N_("Control the Paddock daemon from scripts and terminals."),
                                           entries);
  /* Stop at the command word: what follows is the command's to parse. */
  g_option_context_set_strict_posix (context, TRUE);
  commands_help = paddockctl_commands_help (paddockctl_commands,
                                            G_N_ELEMENTS (paddockctl_commands));
  description = g_strdup_printf (_("%s\n"
                                   "On a terminal, what an agent wrote (review --diff, logs, names, hosts)\n"
                                   "is printed with its control and invisible characters as escapes (^[,\n"
                                   "<U+202E>), never acted on; to a pipe or a file, and with review --diff\n"
                                   "--raw or logs --raw, as the exact bytes. attach is the live terminal.\n\n"
                                   "Run “paddockctl COMMAND --help” for a command's options."),
                                 commands_help);
  g_option_context_set_description (context, description);

  if (!paddockctl_parse_options (ctl, context, "paddockctl", &argc, &argv, &exit_code))
    return exit_code;

  if (version)
    {
      if (ctl->json)
        {
          g_autoptr(JsonBuilder) builder = json_builder_new ();
          g_autoptr(JsonNode) root = NULL;

          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "version");
          json_builder_add_string_value (builder, PACKAGE_VERSION);
          json_builder_end_object (builder);
          root = json_builder_get_root (builder);
          paddockctl_print_json (ctl, root);
        }
      else
        {
          g_print ("paddockctl %s\n", PACKAGE_VERSION);
        }
      return PADDOCKCTL_EXIT_OK;
    }

  /* The shell completions' helper: not a command of the table, so that
   * --help and the man pages do not offer it. */
  if (argc >= 2 && g_str_equal (argv[1], "__complete"))
    return paddockctl_complete (ctl, argc - 1, argv + 1);

  return paddockctl_dispatch (ctl, "paddockctl",
                              paddockctl_commands, G_N_ELEMENTS (paddockctl_commands),
                              argc, argv);
}

int
main (int    argc,
      char **argv)
{
  Paddockctl ctl = { 0 };
  int exit_code;

  paddock_i18n_init ();
  g_set_prgname ("paddockctl");

  /* Before GLib installs any handler: a command we run later inherits the
   * dispositions we were started with, not ours. */
  paddockctl_spawn_save_signals ();

  /* Registers org.paddock.Error.* so remote errors come back in our domain. */
  (void) paddock_error_quark ();

  exit_code = paddockctl_main (&ctl, argc, argv);
  paddockctl_clear (&ctl);

  return exit_code;
}
