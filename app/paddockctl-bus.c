/* paddockctl-bus.c — connecting to the session bus and the daemon's objects
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gi18n.h>

#include "paddockctl-private.h"

/* The session bus is connected once and only by commands that need it, so
 * --help and usage errors work without one. */
GDBusConnection *
paddockctl_get_bus (Paddockctl  *ctl,
                    GError     **error)
{
  g_autoptr(GError) local_error = NULL;
  const char *address;

  if (ctl->bus != NULL)
    return ctl->bus;

  ctl->bus = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &local_error);
  if (ctl->bus == NULL)
    {
      /* GLib's own message ("Cannot autolaunch D-Bus without X11 $DISPLAY")
       * names a mechanism, not the fix; say what is missing and what to do. */
      address = g_getenv ("DBUS_SESSION_BUS_ADDRESS");
      if (address == NULL || *address == '\0')
        g_set_error_literal (error, G_DBUS_ERROR, G_DBUS_ERROR_NO_SERVER,
                             _("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set); "
                               "run this inside your desktop session or under dbus-run-session"));
      else
        g_set_error (error, G_DBUS_ERROR, G_DBUS_ERROR_NO_SERVER,
                     _("cannot connect to the D-Bus session bus at “%s” (%s); "
                       "run this inside your desktop session or under dbus-run-session"),
                     address, local_error->message);
      return NULL;
    }

  /* The default raises SIGTERM when the bus goes away; a holding
   * `ports lease` watches "closed" instead and says what happened. */
  g_dbus_connection_set_exit_on_close (ctl->bus, FALSE);

  return ctl->bus;
}

/* Proxies load no properties and connect no signals: each command makes a
 * few calls and leaves. They do not start the daemon when they are built,
 * but the calls may, so an activatable daemon starts on first use and a
 * missing one fails with ServiceUnknown, which paddockctl_fail() explains. */
#define PROXY_FLAGS (G_DBUS_PROXY_FLAGS_DO_NOT_LOAD_PROPERTIES | \
                     G_DBUS_PROXY_FLAGS_DO_NOT_CONNECT_SIGNALS | \
                     G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START_AT_CONSTRUCTION)

PaddockIpcManager1 *
paddockctl_get_manager (Paddockctl  *ctl,
                        GError     **error)
{
  GDBusConnection *bus;

  if (ctl->manager != NULL)
    return ctl->manager;

  if (!(bus = paddockctl_get_bus (ctl, error)))
    return NULL;

  ctl->manager = paddock_ipc_manager1_proxy_new_sync (bus, PROXY_FLAGS,
                                                      PADDOCK_BUS_NAME, PADDOCK_OBJECT_PATH,
                                                      NULL, error);
  if (ctl->manager != NULL)
    g_dbus_proxy_set_default_timeout (G_DBUS_PROXY (ctl->manager), PADDOCKCTL_CALL_TIMEOUT_MS);

  return ctl->manager;
}

PaddockIpcPorts1 *
paddockctl_get_ports (Paddockctl  *ctl,
                      GError     **error)
{
  GDBusConnection *bus;

  if (ctl->ports != NULL)
    return ctl->ports;

  if (!(bus = paddockctl_get_bus (ctl, error)))
    return NULL;

  ctl->ports = paddock_ipc_ports1_proxy_new_sync (bus, PROXY_FLAGS,
                                                  PADDOCK_BUS_NAME, PADDOCK_OBJECT_PATH,
                                                  NULL, error);
  if (ctl->ports != NULL)
    g_dbus_proxy_set_default_timeout (G_DBUS_PROXY (ctl->ports), PADDOCKCTL_CALL_TIMEOUT_MS);

  return ctl->ports;
}

/* A new proxy for session @id (validated by the caller). Sessions come
 * and go, so these are not cached; a missing session only shows up when
 * the first call fails (see paddockctl_check_session_error()). */
PaddockIpcSession1 *
paddockctl_dup_session (Paddockctl  *ctl,
                        const char  *id,
                        GError     **error)
{
  return paddockctl_dup_session_on (ctl, id, NULL, error);
}

/* The same, its calls sent to @owner, the daemon's unique name when the
 * caller knows it already (NULL: the well-known name). A proxy on the
 * well-known name asks the bus for its owner before it is made, one
 * round trip on the way to a session's first output (issue #23); one on
 * the unique name does not, but it does not follow the name to a new
 * daemon either: its caller makes another then. */
PaddockIpcSession1 *
paddockctl_dup_session_on (Paddockctl  *ctl,
                           const char  *id,
                           const char  *owner,
                           GError     **error)
{
  g_autofree char *path = paddockctl_session_path (id);
  PaddockIpcSession1 *session;
  GDBusConnection *bus;

  if (!(bus = paddockctl_get_bus (ctl, error)))
    return NULL;

  session = paddock_ipc_session1_proxy_new_sync (bus, PROXY_FLAGS,
                                                 owner != NULL ? owner : PADDOCK_BUS_NAME, path,
                                                 NULL, error);
  if (session != NULL)
    g_dbus_proxy_set_default_timeout (G_DBUS_PROXY (session), PADDOCKCTL_CALL_TIMEOUT_MS);

  return session;
}

/* How long exit waits for the bus to confirm our last messages. */
#define EXIT_PING_TIMEOUT_MS 2000

void
paddockctl_clear (Paddockctl *ctl)
{
  g_clear_object (&ctl->ports);
  g_clear_object (&ctl->manager);

  /* So that a message sent just before exit without awaiting its reply
   * (a Release, a Resize) reaches the bus: the bus answers a Ping only
   * after every message we sent before it. Not g_dbus_connection_flush_sync():
   * GLib runs that flush on a thread of its pool, started just for it,
   * which kept every paddockctl command alive ~5 ms (up to 24 ms under
   * load) after its work was done (issue #23). */
  if (ctl->bus != NULL && !g_dbus_connection_is_closed (ctl->bus))
    {
      g_autoptr(GVariant) reply = g_dbus_connection_call_sync (ctl->bus, "org.freedesktop.DBus",
                                                               "/org/freedesktop/DBus",
                                                               "org.freedesktop.DBus.Peer", "Ping",
                                                               NULL, NULL, G_DBUS_CALL_FLAGS_NONE,
                                                               EXIT_PING_TIMEOUT_MS, NULL, NULL);
    }
  g_clear_object (&ctl->bus);
}
