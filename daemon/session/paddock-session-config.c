/* paddock-session-config.c — what a session is created with: its workspace, command, profile, network, limits
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "paddock-session-config.h"

void
paddock_session_config_copy (PaddockSessionConfig       *dest,
                             const PaddockSessionConfig *src)
{
  dest->workspace = g_strdup (src->workspace);
  dest->command = g_strdupv (src->command);
  dest->name = g_strdup (src->name);
  dest->profile = g_strdup (src->profile);
  dest->env = g_hash_table_ref (src->env);
  dest->columns = src->columns;
  dest->rows = src->rows;
  dest->owner = g_strdup (src->owner);
  dest->home = g_strdup (src->home);
  dest->helper = g_strdup (src->helper);
  dest->cgroup_parent = g_strdup (src->cgroup_parent);
  dest->cgroup_reason = g_strdup (src->cgroup_reason);
  dest->staging = g_strdup (src->staging);
  dest->net_mode = g_strdup (src->net_mode != NULL ? src->net_mode : "host");
  dest->allow_domains = src->allow_domains != NULL ? g_strdupv (src->allow_domains) : g_new0 (char *, 1);
  dest->net_rules = src->net_rules != NULL ? g_object_ref (src->net_rules) : NULL;
  dest->leases = src->leases != NULL ? g_ptr_array_ref (src->leases) : NULL;
  dest->allow_write = g_strdupv (src->allow_write);
  dest->expose = g_strdupv (src->expose);
  dest->agent = g_strdup (src->agent);
  dest->agent_home = g_strdup (src->agent_home);
  dest->agent_view = g_strdupv (src->agent_view);
  dest->pids_max = src->pids_max;
  dest->memory_max = src->memory_max;
  dest->stage_limit = src->stage_limit;
}

void
paddock_session_config_clear (PaddockSessionConfig *config)
{
  g_clear_pointer (&config->workspace, g_free);
  g_clear_pointer (&config->command, g_strfreev);
  g_clear_pointer (&config->name, g_free);
  g_clear_pointer (&config->profile, g_free);
  g_clear_pointer (&config->env, g_hash_table_unref);
  g_clear_pointer (&config->owner, g_free);
  g_clear_pointer (&config->home, g_free);
  g_clear_pointer (&config->helper, g_free);
  g_clear_pointer (&config->cgroup_parent, g_free);
  g_clear_pointer (&config->cgroup_reason, g_free);
  g_clear_pointer (&config->staging, g_free);
  g_clear_pointer (&config->net_mode, g_free);
  g_clear_pointer (&config->allow_domains, g_strfreev);
  g_clear_object (&config->net_rules);
  g_clear_pointer (&config->leases, g_ptr_array_unref);
  g_clear_pointer (&config->allow_write, g_strfreev);
  g_clear_pointer (&config->expose, g_strfreev);
  g_clear_pointer (&config->agent, g_free);
  g_clear_pointer (&config->agent_home, g_free);
  g_clear_pointer (&config->agent_view, g_strfreev);
}

void
paddock_session_config_add_lease (PaddockSessionConfig *config,
                                  gpointer              lease)
{
  g_return_if_fail (G_IS_OBJECT (lease));

  if (config->leases == NULL)
    config->leases = g_ptr_array_new_with_free_func (g_object_unref);
  g_ptr_array_add (config->leases, g_object_ref (lease));
}

void
paddock_session_config_set_network (PaddockSessionConfig *config,
                                    const char           *mode,
                                    const char * const   *allow_domains,
                                    PaddockDomainRules   *rules)
{
  g_set_object (&config->net_rules, rules);

  g_free (config->net_mode);
  config->net_mode = g_strdup (mode);
  g_strfreev (config->allow_domains);
  config->allow_domains = g_strdupv ((GStrv) allow_domains);
}

void
paddock_session_config_publish (const PaddockSessionConfig *config,
                                PaddockIpcSession1         *session)
{
  paddock_ipc_session1_set_name (session, config->name);
  paddock_ipc_session1_set_workspace (session, config->workspace);
  paddock_ipc_session1_set_command (session, (const char * const *) config->command);
  paddock_ipc_session1_set_profile (session, config->profile);
  paddock_ipc_session1_set_agent (session, config->agent != NULL ? config->agent : "");
  paddock_ipc_session1_set_staging (session, config->staging != NULL ? config->staging : "none");
  paddock_ipc_session1_set_network_mode (session, config->net_mode);
  paddock_ipc_session1_set_allowed_domains (session, (const char * const *) config->allow_domains);
}
