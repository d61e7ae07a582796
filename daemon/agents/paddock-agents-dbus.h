/* paddock-agents-dbus.h — Manager1's agent methods: ListAgents, ResetAgent, ImportAgentLogin
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

GVariant *paddock_agents_dbus_list   (const char  *state_dir);
gboolean  paddock_agents_dbus_reset  (const char  *state_dir,
                                      const char  *name,
                                      gboolean     in_use,
                                      GError     **error);
GStrv     paddock_agents_dbus_import (const char  *state_dir,
                                      const char  *name,
                                      GError     **error);

G_END_DECLS
