/* paddock-agents-dbus.c — Manager1's agent methods: ListAgents, ResetAgent, ImportAgentLogin
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The manager checks the caller and the sessions; what an agent is, where
 * it is installed and what its home holds is answered here.
 */

#include "config.h"

#include "paddock-agents-dbus.h"

#include "paddock-agent-discovery.h"
#include "paddock-agent-home.h"
#include "paddock-agent-preset.h"
#include "paddock-error.h"

static void
add_strv (GVariantBuilder    *dict,
          const char         *key,
          const char * const *strv)
{
  g_variant_builder_add (dict, "{sv}", key, g_variant_new_strv (strv, -1));
}

static void
add_paths (GVariantBuilder    *dict,
           const char         *key,
           const char * const *paths)
{
  g_variant_builder_add (dict, "{sv}", key, g_variant_new_bytestring_array (paths, -1));
}

/* One preset's dictionary (see ListAgents in org.paddock.Manager1.xml). */
static GVariant *
describe (const char *state_dir,
          const char *name)
{
  g_auto(GVariantBuilder) dict = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockAgentPreset) preset = paddock_agent_preset_find (name, &error);
  g_autoptr(PaddockAgentFound) found = NULL;
  g_autofree char *home = paddock_agent_home_path (state_dir, name);

  g_variant_builder_add (&dict, "{sv}", "name", g_variant_new_string (name));
  g_variant_builder_add (&dict, "{sv}", "home", g_variant_new_bytestring (home));
  if (preset == NULL)
    {
      /* A preset file that is not valid is listed, with why. */
      g_variant_builder_add (&dict, "{sv}", "title", g_variant_new_string (name));
      g_variant_builder_add (&dict, "{sv}", "found", g_variant_new_boolean (FALSE));
      g_variant_builder_add (&dict, "{sv}", "error", g_variant_new_string (error->message));
      return g_variant_builder_end (&dict);
    }
  found = paddock_agent_discover (preset, g_get_home_dir (), &error);
  g_variant_builder_add (&dict, "{sv}", "title", g_variant_new_string (preset->title));
  g_variant_builder_add (&dict, "{sv}", "found", g_variant_new_boolean (found != NULL));
  if (found != NULL)
    {
      g_variant_builder_add (&dict, "{sv}", "program", g_variant_new_bytestring (found->program));
      g_variant_builder_add (&dict, "{sv}", "resolved", g_variant_new_bytestring (found->resolved));
      add_paths (&dict, "view", (const char * const *) found->view);
      add_paths (&dict, "looked", (const char * const *) found->looked);
    }
  else
    {
      g_auto(GStrv) looked = paddock_agent_search_dirs (preset, g_get_home_dir ());

      add_paths (&dict, "looked", (const char * const *) looked);
      g_variant_builder_add (&dict, "{sv}", "error", g_variant_new_string (error->message));
    }
  g_variant_builder_add (&dict, "{sv}", "install-hint", g_variant_new_string (preset->install_hint));
  add_strv (&dict, "login", (const char * const *) preset->login);
  add_strv (&dict, "domains", (const char * const *) preset->domains);
  add_strv (&dict, "env-pass", (const char * const *) preset->env_pass);
  add_strv (&dict, "home-persist", (const char * const *) preset->home_persist);
  add_strv (&dict, "credentials", (const char * const *) preset->credentials);
  g_variant_builder_add (&dict, "{sv}", "source", g_variant_new_string (preset->source));
  return g_variant_builder_end (&dict);
}

/**
 * paddock_agents_dbus_list:
 *
 * Returns: (transfer floating): ListAgents' aa{sv}.
 */
GVariant *
paddock_agents_dbus_list (const char *state_dir)
{
  g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("aa{sv}"));
  g_auto(GStrv) names = paddock_agent_presets_list_names ();

  for (guint i = 0; names[i] != NULL; i++)
    g_variant_builder_add_value (&builder, describe (state_dir, names[i]));
  return g_variant_builder_end (&builder);
}

/* A preset that exists (valid or not): reset must work even on an agent
 * whose preset file a user broke, so only its name is needed. */
static gboolean
check_name (const char  *name,
            GError     **error)
{
  g_auto(GStrv) names = NULL;

  if (!paddock_agent_name_is_valid (name))
    {
      g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                           "An agent preset's name is 1–32 of a-z, 0-9, - and _");
      return FALSE;
    }
  names = paddock_agent_presets_list_names ();
  if (!g_strv_contains ((const char * const *) names, name))
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
                   "No agent preset “%s” (see paddockctl agents)", name);
      return FALSE;
    }
  return TRUE;
}

gboolean
paddock_agents_dbus_reset (const char  *state_dir,
                           const char  *name,
                           gboolean     in_use,
                           GError     **error)
{
  if (!check_name (name, error))
    return FALSE;
  if (in_use)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_BUSY,
                   "A session of %s is starting or running and uses its home: stop or destroy it first", name);
      return FALSE;
    }
  return paddock_agent_home_reset (state_dir, name, error);
}

GStrv
paddock_agents_dbus_import (const char  *state_dir,
                            const char  *name,
                            GError     **error)
{
  g_autoptr(PaddockAgentPreset) preset = NULL;

  if (!check_name (name, error))
    return NULL;
  preset = paddock_agent_preset_find (name, error);
  if (preset == NULL)
    return NULL;
  return paddock_agent_home_import (state_dir, preset, g_get_home_dir (), error);
}
