/* paddock-settings.h — the app's GSettings, when its schema is installed
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define PADDOCK_SETTINGS_SCHEMA      "org.paddock.Paddock"
#define PADDOCK_MAX_RECENT_WORKSPACES 10

GSettings *paddock_settings_new                  (void);
void       paddock_settings_add_recent_workspace (GSettings  *settings,
                                                  const char *path);

G_END_DECLS
