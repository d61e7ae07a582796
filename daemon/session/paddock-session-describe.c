/* paddock-session-describe.c — a session as the manager lists it (ListSessions, SessionsChanged)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "paddock-session-describe.h"

GVariant *
paddock_session_describe (PaddockIpcSession1         *session,
                          const char                 *id,
                          const char                 *object_path,
                          const PaddockSessionConfig *config,
                          const char                 *cgroup_path,
                          const char                 *cgroup_reason)
{
  g_auto(GVariantDict) dict = G_VARIANT_DICT_INIT (NULL);

  g_variant_dict_insert (&dict, "id", "s", id);
  g_variant_dict_insert (&dict, "path", "o", object_path);
  g_variant_dict_insert (&dict, "name", "s", paddock_ipc_session1_get_name (session));
  g_variant_dict_insert (&dict, "state", "s", paddock_ipc_session1_get_state (session));
  g_variant_dict_insert (&dict, "workspace", "^ay", config->workspace);
  g_variant_dict_insert (&dict, "command", "^aay", config->command);
  g_variant_dict_insert (&dict, "profile", "s", paddock_ipc_session1_get_profile (session));
  if (config->agent != NULL)
    g_variant_dict_insert (&dict, "agent", "s", config->agent);
  g_variant_dict_insert (&dict, "staging", "s", paddock_ipc_session1_get_staging (session));
  g_variant_dict_insert (&dict, "net", "s", paddock_ipc_session1_get_network_mode (session));
  if (paddock_ipc_session1_get_boundary (session) != NULL)
    g_variant_dict_insert_value (&dict, "boundary", paddock_ipc_session1_get_boundary (session));
  g_variant_dict_insert (&dict, "pid", "u", paddock_ipc_session1_get_main_pid (session));
  g_variant_dict_insert (&dict, "exit-status", "i", paddock_ipc_session1_get_exit_status (session));
  g_variant_dict_insert (&dict, "processes", "u", paddock_ipc_session1_get_process_count (session));
  g_variant_dict_insert (&dict, "created", "t", paddock_ipc_session1_get_created (session));
  g_variant_dict_insert (&dict, "cgroup", "s", cgroup_path != NULL ? cgroup_path : "");
  if (cgroup_reason != NULL)
    g_variant_dict_insert (&dict, "cgroup-unavailable", "s", cgroup_reason);
  if (paddock_ipc_session1_get_damaged (session) != NULL && paddock_ipc_session1_get_damaged (session)[0] != '\0')
    g_variant_dict_insert (&dict, "damaged", "s", paddock_ipc_session1_get_damaged (session));
  return g_variant_dict_end (&dict);
}
