/* peers-floor-start-glib.c — the start's floor for a client built on GIO, as paddockctl is
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   peers-floor-start-glib CMD...
 *
 * peers-floor-start does the least a client can do before the sandbox
 * prints with libc alone. This one does the same work the way any GNOME
 * command-line tool does it, with nothing of Paddock's: the libraries
 * paddockctl loads (GIO, GObject, GLib, json-glib; linked, not called),
 * the locale set up, g_bus_get_sync() (connect, EXTERNAL, Hello, GDBus's
 * worker thread), one Peer.Ping to org.paddock.Daemon, then exec CMD.
 * Timed beside paddockctl and the libc floor, it tells what GIO itself
 * costs on the way to the first byte (issue #23) from what paddockctl and
 * the daemon add.
 */

#include "config.h"

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <locale.h>
#include <stdio.h>
#include <unistd.h>

static volatile GType json_type;

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GDBusConnection) bus = NULL;
  g_autoptr(GVariant) pong = NULL;

  setlocale (LC_ALL, "");
  if (argc < 2)
    {
      fprintf (stderr, "usage: %s CMD...\n", argv[0]);
      return 2;
    }
  /* Linked as paddockctl links it: its loading is part of the floor (a
   * volatile store, or the call to this const function would go). */
  json_type = json_node_get_type ();

  if (!(bus = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &error)) ||
      !(pong = g_dbus_connection_call_sync (bus, PADDOCK_BUS_NAME, PADDOCK_OBJECT_PATH,
                                            "org.freedesktop.DBus.Peer", "Ping", NULL, NULL,
                                            G_DBUS_CALL_FLAGS_NONE, 25000, NULL, &error)))
    {
      fprintf (stderr, "peers-floor-start-glib: %s\n", error->message);
      return 1;
    }

  /* GDBus opens its socket close-on-exec: the client is done here. */
  execvp (argv[1], argv + 1);
  perror ("peers-floor-start-glib: exec");
  return 1;
}
