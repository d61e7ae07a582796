/* paddock-agent-session.c — a session that runs in an agent preset's environment
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * CreateSession's "agent": the preset is read and its program looked for
 * at create, so that an agent that cannot run is refused then (NotFound
 * saying where it looked), not found dead after "running". The session
 * then gets what the preset names: the program (or the caller's command,
 * which runs in the same environment: the way to run its login command or
 * a shell beside it), its install shown read-only at its own path, its
 * persistent home, its variables, and — unless the caller chose a network
 * — the proxy with the preset's domains as the allowlist.
 */

#include "config.h"

#include "paddock-agent-session.h"

#include <string.h>

#include "paddock-agent-discovery.h"
#include "paddock-agent-home.h"
#include "paddock-agent-preset.h"
#include "paddock-error.h"

/* The allowlist the proxy takes is bounded by the caller's checks in the
 * manager; a preset adds at most its 64 domains. */

/**
 * paddock_agent_session_configure:
 * @config: the session being created: its options are read (command,
 *   profile, env, allow_domains) and completed
 * @agent: the preset's name
 * @state_dir: the daemon's state dir, where agents' homes are
 * @net_given: whether the caller chose a network mode
 *
 * Returns: FALSE with InvalidArgument (a bad name or preset file),
 *   NotFound (no such preset, or its program is not installed: where it
 *   looked, how to install it) or Failed (its home cannot be made).
 */
/* Takes RULE; adds it to RULES unless it is there already. */
static void
add_rule_once (GPtrArray *rules,
               char      *rule)
{
  if (g_ptr_array_find_with_equal_func (rules, rule, g_str_equal, NULL))
    g_free (rule);
  else
    g_ptr_array_add (rules, rule);
}

gboolean
paddock_agent_session_configure (PaddockSessionConfig *config,
                                 const char           *agent,
                                 const char           *state_dir,
                                 gboolean              net_given,
                                 GError              **error)
{
  g_autoptr(PaddockAgentPreset) preset = paddock_agent_preset_find (agent, error);
  g_autoptr(PaddockAgentFound) found = NULL;
  gboolean sandboxed = g_strcmp0 (config->profile, "host") != 0;

  if (preset == NULL)
    return FALSE;
  found = paddock_agent_discover (preset, g_get_home_dir (), error);
  if (found == NULL)
    return FALSE;

  /* Its program, or the caller's command; a command naming one of the
   * preset's programs is that program (the session's PATH does not hold
   * a per-user install, its resolved file is shown instead). */
  if (config->command == NULL || config->command[0] == NULL)
    {
      g_strfreev (config->command);
      config->command = g_new0 (char *, 2);
      config->command[0] = g_strdup (found->resolved);
    }
  else if (strchr (config->command[0], '/') == NULL &&
           g_strv_contains ((const char * const *) preset->programs, config->command[0]))
    {
      g_free (config->command[0]);
      config->command[0] = g_strdup (found->resolved);
    }

  /* The preset's variables, under the caller's own ("env" wins). */
  for (guint i = 0; preset->env_set[i] != NULL; i++)
    {
      const char *eq = strchr (preset->env_set[i], '=');
      g_autofree char *key = g_strndup (preset->env_set[i], (gsize) (eq - preset->env_set[i]));

      if (!g_hash_table_contains (config->env, key))
        g_hash_table_replace (config->env, g_steal_pointer (&key), g_strdup (eq + 1));
    }
  /* Its runtime first on PATH (node of nvm, say), where the "#!" line's
   * env finds it. */
  if (found->path_dirs[0] != NULL && !g_hash_table_contains (config->env, "PATH"))
    {
      g_autofree char *dirs = g_strjoinv (":", found->path_dirs);

      g_hash_table_replace (config->env, g_strdup ("PATH"),
                            g_strconcat (dirs, ":", PADDOCK_AGENT_DEFAULT_PATH, NULL));
    }

  g_free (config->agent);
  config->agent = g_strdup (preset->name);
  g_strfreev (config->agent_view);
  config->agent_view = g_strdupv (found->view);
  if (sandboxed)
    {
      g_free (config->agent_home);
      config->agent_home = paddock_agent_home_ensure (state_dir, preset->name, error);
      if (config->agent_home == NULL)
        return FALSE;

      /* A network that works by default and is still the proxy; on the
       * proxy, chosen or not, the preset's domains with any the caller
       * added (the agent does not work without them). */
      if (!net_given)
        {
          g_free (config->net_mode);
          config->net_mode = g_strdup ("proxy");
        }
      if (g_strcmp0 (config->net_mode, "proxy") == 0)
        {
          g_autoptr(GPtrArray) domains = g_ptr_array_new_with_free_func (g_free);

          for (guint i = 0; config->allow_domains != NULL && config->allow_domains[i] != NULL; i++)
            g_ptr_array_add (domains, g_strdup (config->allow_domains[i]));
          for (guint i = 0; preset->domains[i] != NULL; i++)
            {
              const char *domain = preset->domains[i];

              /* A domain that names its port ("github.com:22", "[::1]:22")
               * is a rule as it is; a bare one is reached on the preset's
               * ports ("ports": [443] keeps it to HTTPS), or on the rules'
               * own 80 and 443 when the preset names none. */
              if (strchr (domain, ':') != NULL || preset->ports->len == 0)
                add_rule_once (domains, g_strdup (domain));
              else
                for (guint p = 0; p < preset->ports->len; p++)
                  add_rule_once (domains, g_strdup_printf ("%s:%u", domain,
                                                           (guint) g_array_index (preset->ports, guint16, p)));
            }
          g_ptr_array_add (domains, NULL);
          g_strfreev (config->allow_domains);
          config->allow_domains = (GStrv) g_ptr_array_free (g_steal_pointer (&domains), FALSE);
        }
    }
  return TRUE;
}

/**
 * paddock_agent_session_add_sandbox_arguments:
 *
 * paddock-sandbox's options for the agent's home (--home-dir, writable at
 * /home/agent) and its install (--view-ro PATH, read-only at PATH).
 */
void
paddock_agent_session_add_sandbox_arguments (const PaddockSessionConfig *config,
                                             GPtrArray                  *argv)
{
  if (config->agent_home != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("--home-dir"));
      g_ptr_array_add (argv, g_strdup (config->agent_home));
    }
  for (guint i = 0; config->agent_view != NULL && config->agent_view[i] != NULL; i++)
    {
      g_ptr_array_add (argv, g_strdup ("--view-ro"));
      g_ptr_array_add (argv, g_strdup (config->agent_view[i]));
    }
}
