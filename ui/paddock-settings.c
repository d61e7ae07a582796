/* paddock-settings.c — the app's GSettings, when its schema is installed
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "paddock-settings.h"

/**
 * paddock_settings_new:
 *
 * g_settings_new() aborts on a schema it cannot find, and an app run from
 * its build tree without GSETTINGS_SCHEMA_DIR has none: then nothing is
 * remembered, and the app says so once in the debug log.
 *
 * Returns: (transfer full) (nullable): the settings, or %NULL
 */
GSettings *
paddock_settings_new (void)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr(GSettingsSchema) schema = NULL;

  if (source != NULL)
    schema = g_settings_schema_source_lookup (source, PADDOCK_SETTINGS_SCHEMA, TRUE);
  if (schema == NULL)
    {
      g_debug ("The schema %s is not installed: window state and recent workspaces are not remembered",
               PADDOCK_SETTINGS_SCHEMA);
      return NULL;
    }

  return g_settings_new_full (schema, NULL, NULL);
}

/* Puts @path first in the recent workspaces, once, keeping the newest
 * PADDOCK_MAX_RECENT_WORKSPACES. */
void
paddock_settings_add_recent_workspace (GSettings  *settings,
                                       const char *path)
{
  g_auto(GStrv) recent = NULL;
  g_autoptr(GStrvBuilder) builder = NULL;
  g_auto(GStrv) updated = NULL;
  guint n = 1;

  g_return_if_fail (G_IS_SETTINGS (settings));
  g_return_if_fail (path != NULL);

  /* GSettings strings are UTF-8; a path that is not cannot be kept. */
  if (!g_utf8_validate (path, -1, NULL))
    return;

  recent = g_settings_get_strv (settings, "recent-workspaces");
  builder = g_strv_builder_new ();
  g_strv_builder_add (builder, path);
  for (guint i = 0; recent[i] != NULL && n < PADDOCK_MAX_RECENT_WORKSPACES; i++)
    if (g_strcmp0 (recent[i], path) != 0)
      {
        g_strv_builder_add (builder, recent[i]);
        n++;
      }
  updated = g_strv_builder_end (builder);
  g_settings_set_strv (settings, "recent-workspaces", (const char * const *) updated);
}
