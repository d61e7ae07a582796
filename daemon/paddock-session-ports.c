/* paddock-session-ports.c — org.paddock.Session1's leased ports forwarded into its network namespace
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A session in net none or proxy cannot be handed its leased sockets: they
 * belong to the host's network namespace, and its program binds the port in
 * its own. So the daemon keeps each lease and forwards it (a
 * PaddockPortForward per lease): every connection to 127.0.0.1:PORT on the
 * host is spliced to a socket the sandbox's pid 1 made inside ({'op':
 * 'socket'} on the control channel, answered by {"event":"socket"} with
 * the socket attached), connected to 127.0.0.1:PORT there. Requests are
 * numbered; each answer goes to the forward that asked.
 *
 * The forwards live as long as the sandbox: stopped when it exits, so
 * nothing of a session's connections outlives it, and the leases are
 * released with the session by the manager.
 */

#include "config.h"

#include <unistd.h>

#include "paddock-lease.h"
#include "paddock-port-forward.h"
#include "paddock-session-impl-private.h"

struct _PaddockSessionPorts
{
  PaddockSessionImpl *session;   /* unowned: the session owns us */
  GPtrArray *forwards;           /* PaddockPortForward* */
  GHashTable *requests;          /* request id → PaddockPortForward* (a ref) */
  guint32 next_request;
  gboolean forwarding;           /* the session has a network namespace of its own */
};

PaddockSessionPorts *
_paddock_session_ports_new (PaddockSessionImpl *session)
{
  PaddockSessionPorts *ports = g_new0 (PaddockSessionPorts, 1);

  ports->session = session;
  ports->forwards = g_ptr_array_new_with_free_func (g_object_unref);
  ports->requests = g_hash_table_new_full (NULL, NULL, NULL, g_object_unref);
  return ports;
}

void
_paddock_session_ports_free (PaddockSessionPorts *ports)
{
  if (ports == NULL)
    return;
  _paddock_session_ports_stop (ports);
  g_ptr_array_unref (ports->forwards);
  g_hash_table_unref (ports->requests);
  g_free (ports);
}

/* A connection came on a forwarded port: a socket inside, please. */
static void
request_socket_cb (PaddockPortForward *forward,
                   gpointer            user_data)
{
  PaddockSessionPorts *ports = user_data;
  g_autoptr(GError) error = NULL;
  guint32 id = ports->next_request++;
  GVariantDict request;

  g_variant_dict_init (&request, NULL);
  g_variant_dict_insert (&request, "op", "s", "socket");
  g_variant_dict_insert (&request, "id", "u", id);
  if (!_paddock_session_impl_send_control (ports->session, g_variant_dict_end (&request), &error))
    {
      paddock_port_forward_take_inside_socket (forward, -1);
      return;
    }
  g_hash_table_insert (ports->requests, GUINT_TO_POINTER (id), g_object_ref (forward));
}

/* Forwards @lease into the session's namespace, if it has one of its own. */
gboolean
_paddock_session_ports_add (PaddockSessionPorts  *ports,
                            PaddockLease         *lease,
                            GError              **error)
{
  PaddockPortForward *forward;

  if (!ports->forwarding)
    return TRUE;
  forward = paddock_port_forward_new (paddock_lease_get_fd (lease), paddock_lease_get_port (lease),
                                      request_socket_cb, ports, error);
  if (forward == NULL)
    return FALSE;
  g_ptr_array_add (ports->forwards, forward);
  return TRUE;
}

/* The sandbox is about to start with @net_mode: in none and proxy every
 * lease in @leases is forwarded from now on. */
void
_paddock_session_ports_start (PaddockSessionPorts *ports,
                              const char          *net_mode,
                              GPtrArray           *leases)
{
  _paddock_session_ports_stop (ports);
  ports->forwarding = g_strcmp0 (net_mode, "none") == 0 || g_strcmp0 (net_mode, "proxy") == 0;
  for (guint i = 0; leases != NULL && i < leases->len; i++)
    {
      PaddockLease *lease = g_ptr_array_index (leases, i);
      g_autoptr(GError) error = NULL;

      if (!_paddock_session_ports_add (ports, lease, &error))
        g_message ("Session %s: cannot forward port %u (%s): %s",
                   paddock_session_impl_get_id (ports->session), paddock_lease_get_port (lease),
                   paddock_lease_get_name (lease), error->message);
    }
}

/* {"event":"socket","id":N} with the socket as *@fd, or "socket-failed". */
void
_paddock_session_ports_socket_event (PaddockSessionPorts *ports,
                                     gint64               id,
                                     int                 *fd)
{
  gpointer forward = NULL;

  if (id < 0 || id > G_MAXUINT32 ||
      !g_hash_table_steal_extended (ports->requests, GUINT_TO_POINTER ((guint32) id), NULL, &forward))
    return;   /* *fd, if any, is closed by the caller */
  paddock_port_forward_take_inside_socket (forward, *fd);
  *fd = -1;
  g_object_unref (forward);
}

/* The sandbox is gone: every forwarded connection ends with it. */
void
_paddock_session_ports_stop (PaddockSessionPorts *ports)
{
  for (guint i = 0; i < ports->forwards->len; i++)
    paddock_port_forward_stop (g_ptr_array_index (ports->forwards, i));
  g_ptr_array_set_size (ports->forwards, 0);
  g_hash_table_remove_all (ports->requests);
  ports->forwarding = FALSE;
}

/* Forwarded connections of the session now (open or waiting for their
 * socket inside). */
guint
_paddock_session_ports_get_n_connections (PaddockSessionPorts *ports)
{
  guint n = 0;

  for (guint i = 0; i < ports->forwards->len; i++)
    n += paddock_port_forward_get_n_connections (g_ptr_array_index (ports->forwards, i));
  return n;
}
