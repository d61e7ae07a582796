/* paddockctl-complete.c — the hidden helper the shell completions call
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include "paddockctl-private.h"

/* Completion runs on every Tab press: it must answer at once or not at all. */
#define COMPLETE_TIMEOUT_MS 2000

/* `paddockctl __complete sessions` prints one line per session, "ID\tNAME",
 * for data/completions/ (bash keeps the ID, zsh and fish show the name
 * beside it). Unlike `list` it never starts the daemon (NO_AUTO_START):
 * pressing Tab must not launch a service. It prints nothing and exits 1
 * when there is no bus or no daemon, and never writes to stderr, which
 * would land in the middle of the user's command line. */
static int
complete_sessions (Paddockctl *ctl)
{
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) sessions = NULL;
  GDBusConnection *bus;
  GVariantIter iter;
  GVariant *dict;

  if (!(bus = paddockctl_get_bus (ctl, NULL)))
    return PADDOCKCTL_EXIT_FAILED;

  reply = g_dbus_connection_call_sync (bus, PADDOCK_BUS_NAME, PADDOCK_OBJECT_PATH,
                                       "org.paddock.Manager1", "ListSessions",
                                       NULL, G_VARIANT_TYPE ("(aa{sv})"),
                                       G_DBUS_CALL_FLAGS_NO_AUTO_START,
                                       COMPLETE_TIMEOUT_MS, NULL, NULL);
  if (reply == NULL)
    return PADDOCKCTL_EXIT_FAILED;

  sessions = g_variant_get_child_value (reply, 0);
  g_variant_iter_init (&iter, sessions);
  while ((dict = g_variant_iter_next_value (&iter)))
    {
      const char *id = NULL;
      const char *name = NULL;
      g_autofree char *checked = NULL;
      g_autofree char *shown = NULL;

      /* Only the daemon's own ids: a tab or newline would break the lines. */
      if (g_variant_lookup (dict, "id", "&s", &id) &&
          (checked = paddockctl_dup_session_id (id)) != NULL)
        {
          if (!g_variant_lookup (dict, "name", "&s", &name))
            name = "";
          shown = g_strdelimit (g_strdup (name), "\t\n\r", ' ');
          printf ("%s\t%s\n", checked, shown);
        }
      g_variant_unref (dict);
    }

  return PADDOCKCTL_EXIT_OK;
}

/* `paddockctl __complete agents` prints the agent presets' names, one a
 * line, from the folders the daemon reads them from
 * (~/.config/paddock/agents and DATADIR/paddock/agents): no bus at all,
 * so Tab after --agent answers even before the daemon ever ran. */
static int
complete_agents (void)
{
  g_autofree char *user_dir = g_build_filename (g_get_user_config_dir (), "paddock", "agents", NULL);
  const char *const dirs[] = { user_dir, PADDOCK_DATADIR "/paddock/agents" };
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      g_autoptr(GDir) dir = g_dir_open (dirs[i], 0, NULL);
      const char *entry;
      guint seen = 0;

      while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL && seen++ < 64)
        {
          g_autofree char *name = g_str_has_suffix (entry, ".json") ? g_strndup (entry, strlen (entry) - 5) : NULL;

          /* The names the daemon accepts: a-z, 0-9, - and _. */
          if (name == NULL || name[0] == '\0' || strlen (name) > 32 ||
              strspn (name, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen (name) ||
              g_ptr_array_find_with_equal_func (names, name, g_str_equal, NULL))
            continue;
          printf ("%s\n", name);
          g_ptr_array_add (names, g_steal_pointer (&name));
        }
    }
  return PADDOCKCTL_EXIT_OK;
}

int
paddockctl_complete (Paddockctl  *ctl,
                     int          argc,
                     char       **argv)
{
  if (argc == 2 && g_str_equal (argv[1], "sessions"))
    return complete_sessions (ctl);
  if (argc == 2 && g_str_equal (argv[1], "agents"))
    return complete_agents ();

  return PADDOCKCTL_EXIT_USAGE;
}
