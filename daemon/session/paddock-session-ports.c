/* paddock-session-ports.c — org.paddock.Session1's leased ports: forwarded into its namespace, or released for its agent to bind
 *
 * On the host's network (net host, the host profile) the agent gets its
 * leases one of two ways, CreateSession's "port-handover": 'listen-fds',
 * the sockets themselves, listening (socket activation, LISTEN_FDS), or
 * 'release', the default: the daemon closes its sockets just before the
 * agent starts (_paddock_session_ports_hand_over()) and the agent binds
 * the port itself; the registry keeps the lease by name (RELEASED) and
 * holds the port again once the session's processes are gone
 * (_paddock_session_ports_refuse_all()), or says it lost, when another
 * program of the host bound it in between.
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
 * the socket attached), connected to 127.0.0.1:PORT there, or, if that is
 * refused, to [::1]:PORT with an IPv6 socket ('family': 'inet6'). Requests are
 * numbered; each answer goes to the forward that asked.
 *
 * The forwards live as long as the sandbox: stopped when it exits, so
 * nothing of a session's connections outlives it, and the leases are
 * released with the session by the manager.
 *
 * A none or proxy session binds any port in its own namespace (no
 * Landlock bind rule there, paddock-sandbox-main.c), so a port leased after
 * start is forwarded like one leased at create. It may also reserve ports
 * at create when asked (CreateSession's "reserved-ports"): real leases of
 * the session, named "reserved", held for LeasePort. A session an earlier
 * daemon started may still have Landlock bind rules fixed at its start
 * (landlock-net enforced); LeasePort then names only its reserved ports.
 * Reserved ports are not forwarded: the
 * agent may bind one inside its own namespace, but nothing reaches it from
 * the host. While the session runs, a connection to one is reset at once
 * (a held socket nobody accepts on would leave the client waiting for good);
 * so is one to any of a session's ports once its processes are gone (of
 * any profile, also one an earlier daemon ran), until Destroy.
 * LeasePort names one of them and starts forwarding it, which is how a
 * port leased after start can be served at all.
 *
 * Given the session's id, gate (paddock-session-gate.c) and config when
 * made, it never calls into the session: the session's leases are its
 * config's (a lease that becomes the session's, LeasePort's or an adopted
 * session's, is added there), it asks the gate whether the session takes
 * a call that needs it running and whether any of its processes may still
 * run, and asks by a signal for a socket inside its sandbox
 * ("request-socket", answered later with
 * _paddock_session_ports_socket_event()).
 */

#include "config.h"

#include <errno.h>
#include <glib-unix.h>
#include <sys/socket.h>
#include <unistd.h>

#include "paddock-state-space.h"
#include "paddock-error.h"
#include "paddock-reserved-ports.h"
#include "paddock-lease.h"
#include "paddock-port-forward.h"
#include "paddock-ports-impl.h"
#include "paddock-registry.h"
#include "paddock-session-calls.h"
#include "paddock-session-ports.h"

/* The daemon's one port registry, for LeasePort; unowned (the manager
 * holds it), cleared when it goes. */
static PaddockRegistry *session_registry;

struct _PaddockSessionPorts
{
  GObject parent_instance;

  PaddockSessionCallHandlers calls;  /* its handle-* handlers on the session's skeleton */

  char *session_id;
  PaddockSessionGate *gate;
  PaddockSessionConfig *config;  /* the session's: its leases */
  GPtrArray *forwards;           /* PaddockPortForward* */
  GHashTable *requests;          /* request id → PaddockPortForward* (a ref) */
  guint32 next_request;
  gboolean forwarding;           /* the session has a network namespace of its own */
  GPtrArray *reserved;           /* PaddockLease*: reserved at create, not yet named */
  GHashTable *refusers;          /* PaddockLease* nothing serves → the GSource resetting its connections */
  /* While the session's processes are gone (_paddock_session_ports_refuse_all()):
   * the registry watched, so that a lease of the session it takes back
   * later (reclaim, once a leftover let go of the port) is refused too. */
  PaddockRegistry *refusing_in; /* weak */
  gulong refusing_id;
  guint n_reserved_at_create;
  /* On the host's network: the leases' sockets are closed just before the
   * agent starts, for it to bind the ports itself (CreateSession's
   * "port-handover" 'release'), rather than handed to it listening. */
  gboolean release;
};

enum {
  SIGNAL_REQUEST_SOCKET,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (PaddockSessionPorts, paddock_session_ports, G_TYPE_OBJECT)

/* The session's leases now (a reference, or NULL for none). */
static GPtrArray *
list_leases (PaddockSessionPorts *ports)
{
  return ports->config->leases != NULL ? g_ptr_array_ref (ports->config->leases) : NULL;
}

/* A refusing source may have ended itself (refuse_cb): destroyed again
 * harmlessly, as it is held by reference, not by id. */
static void
destroy_source (gpointer source)
{
  g_source_destroy (source);
  g_source_unref (source);
}

/* A connection to @user_data (a PaddockLease: reserved, or the session's
 * once its sandbox is gone): reset at once, as nothing can be reached
 * through it. */
static gboolean
refuse_cb (int          fd,
           GIOCondition condition,
           gpointer     user_data)
{
  const struct linger reset = { .l_onoff = 1, .l_linger = 0 };
  int connection;

  /* Released meanwhile (Ports1.Release closed its socket): @fd may be
   * another socket's number by now, which is not ours to touch. */
  if (paddock_lease_get_fd (user_data) != fd)
    return G_SOURCE_REMOVE;

  connection = accept4 (fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (connection >= 0)
    {
      setsockopt (connection, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
      close (connection);
    }
  else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
    {
      /* Out of fds, say: stop rather than spin on a connection that stays
       * queued; it waits, as it would without us. */
      g_message ("Cannot reset a connection to port %u, which nothing serves: %s",
                 paddock_lease_get_port (user_data), g_strerror (errno));
      return G_SOURCE_REMOVE;
    }
  return G_SOURCE_CONTINUE;
}

/* Starts (@refuse) or stops resetting connections to @lease. */
static void
refuse_connections (PaddockSessionPorts *ports,
                    PaddockLease        *lease,
                    gboolean             refuse)
{
  GSource *source;

  if (!refuse)
    {
      g_hash_table_remove (ports->refusers, lease);
      return;
    }
  source = g_hash_table_lookup (ports->refusers, lease);
  /* One that ended itself (refuse_cb, out of fds) is made anew. */
  if (source != NULL && !g_source_is_destroyed (source))
    return;
  source = g_unix_fd_source_new (paddock_lease_get_fd (lease), G_IO_IN);
  /* The table holds the lease for as long as the source. */
  g_source_set_callback (source, G_SOURCE_FUNC (refuse_cb), lease, NULL);
  g_source_attach (source, NULL);
  g_hash_table_replace (ports->refusers, g_object_ref (lease), source);
}

/* @config: the session's, which outlives the ports (the session owns
 * both): its leases read and added to. */
PaddockSessionPorts *
_paddock_session_ports_new (const char           *session_id,
                            PaddockSessionGate   *gate,
                            PaddockSessionConfig *config)
{
  PaddockSessionPorts *ports;

  g_return_val_if_fail (session_id != NULL, NULL);
  g_return_val_if_fail (PADDOCK_IS_SESSION_GATE (gate), NULL);
  g_return_val_if_fail (config != NULL, NULL);

  ports = g_object_new (PADDOCK_TYPE_SESSION_PORTS, NULL);
  ports->session_id = g_strdup (session_id);
  ports->gate = g_object_ref (gate);
  ports->config = config;
  ports->forwards = g_ptr_array_new_with_free_func (g_object_unref);
  ports->requests = g_hash_table_new_full (NULL, NULL, NULL, g_object_unref);
  ports->reserved = g_ptr_array_new_with_free_func (g_object_unref);
  ports->refusers = g_hash_table_new_full (NULL, NULL, g_object_unref, destroy_source);
  return ports;
}

/* The session's processes are back (a start) or it goes: stop watching
 * the registry for its leases. */
static void
stop_refusing_all (PaddockSessionPorts *ports)
{
  if (ports->refusing_in == NULL)
    return;
  g_clear_signal_handler (&ports->refusing_id, ports->refusing_in);
  g_object_remove_weak_pointer (G_OBJECT (ports->refusing_in), (gpointer *) &ports->refusing_in);
  ports->refusing_in = NULL;
}

static void
paddock_session_ports_dispose (GObject *object)
{
  PaddockSessionPorts *ports = PADDOCK_SESSION_PORTS (object);

  _paddock_session_ports_stop (ports);

  G_OBJECT_CLASS (paddock_session_ports_parent_class)->dispose (object);
}

static void
paddock_session_ports_finalize (GObject *object)
{
  PaddockSessionPorts *ports = PADDOCK_SESSION_PORTS (object);

  paddock_session_call_handlers_clear (&ports->calls);
  g_ptr_array_unref (ports->forwards);
  g_hash_table_unref (ports->requests);
  g_ptr_array_unref (ports->reserved);
  g_hash_table_unref (ports->refusers);
  g_free (ports->session_id);
  g_clear_object (&ports->gate);

  G_OBJECT_CLASS (paddock_session_ports_parent_class)->finalize (object);
}

static void
paddock_session_ports_class_init (PaddockSessionPortsClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_session_ports_dispose;
  object_class->finalize = paddock_session_ports_finalize;

  /**
   * PaddockSessionPorts::request-socket:
   * @id: the request's number, for _paddock_session_ports_socket_event()
   * @family: AF_INET, or AF_INET6 for [::1]
   * @error: (out) (nullable): a `GError **`, set when FALSE
   *
   * Asks the sandbox's pid 1 for a socket inside, connected to the
   * port. FALSE (and @error) when nothing can ask it any more.
   */
  signals[SIGNAL_REQUEST_SOCKET] = g_signal_new ("request-socket", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                                 0, g_signal_accumulator_first_wins, NULL, NULL,
                                                 G_TYPE_BOOLEAN, 3, G_TYPE_UINT, G_TYPE_INT, G_TYPE_POINTER);
}

static void
paddock_session_ports_init (PaddockSessionPorts *ports)
{
}

/* A connection came on a forwarded port: a socket inside, please. */
static void
request_socket_cb (PaddockPortForward *forward,
                   int                 family,
                   gpointer            user_data)
{
  PaddockSessionPorts *ports = user_data;
  g_autoptr(GError) error = NULL;
  guint32 id = ports->next_request++;
  gboolean asked = FALSE;

  /* AF_INET6 for [::1], after 127.0.0.1 refused. */
  g_signal_emit (ports, signals[SIGNAL_REQUEST_SOCKET], 0, id, family, &error, &asked);
  if (!asked)
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

/* The sandbox runs: if @forwarding (net none or proxy) every lease in
 * @leases is forwarded from now on. */
void
_paddock_session_ports_start (PaddockSessionPorts *ports,
                              gboolean             forwarding)
{
  g_autoptr(GPtrArray) leases = list_leases (ports);

  _paddock_session_ports_stop (ports);
  ports->forwarding = forwarding;
  for (guint i = 0; leases != NULL && i < leases->len; i++)
    {
      PaddockLease *lease = g_ptr_array_index (leases, i);
      g_autoptr(GError) error = NULL;

      if (!_paddock_session_ports_add (ports, lease, &error))
        g_message ("Session %s: cannot forward port %u (%s): %s",
                   ports->session_id, paddock_lease_get_port (lease),
                   paddock_lease_get_name (lease), error->message);
    }
  for (guint i = 0; forwarding && i < ports->reserved->len; i++)
    refuse_connections (ports, g_ptr_array_index (ports->reserved, i), TRUE);
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
  g_hash_table_remove_all (ports->refusers);
  stop_refusing_all (ports);
  ports->forwarding = FALSE;
}

/* Every process of the session that could accept on its ports is gone:
 * its sandbox (and a PID namespace with it) exited, the last process of a
 * host-profile session ended, or an earlier daemon ran it (and the next
 * one killed what was left of it). So a connection to any port the
 * registry holds for the session (its leases, named later or not, and
 * those reserved for LeasePort; not one a client released) is reset from
 * now on rather than left queued on a socket nobody accepts on, until
 * the lease is released (Destroy) or a new start serves it
 * (_paddock_session_ports_start()). After a daemon restart the session
 * object has no leases of its own, which is why the registry is asked; a
 * lease whose socket an earlier process still has is not held by the
 * daemon (no fd) and is left alone until the registry takes the port back
 * (reclaim, once that process let go of it), which its "items-changed"
 * says: then it is refused too. Idempotent. */
static void refuse_all_registry_changed_cb (GListModel *model,
                                            guint       position,
                                            guint       removed,
                                            guint       added,
                                            gpointer    user_data);

/* The session's held leases among the registry's items [@start, @end). */
static void
refuse_in_range (PaddockSessionPorts *ports,
                 GListModel          *model,
                 guint                start,
                 guint                end)
{
  for (guint i = start; i < end; i++)
    {
      g_autoptr(PaddockLease) lease = g_list_model_get_item (model, i);

      if (lease != NULL &&
          g_strcmp0 (paddock_lease_get_session (lease), ports->session_id) == 0 &&
          paddock_lease_get_fd (lease) >= 0)
        refuse_connections (ports, lease, TRUE);
    }
}

void
_paddock_session_ports_refuse_all (PaddockSessionPorts *ports)
{
  g_autoptr(GPtrArray) leases = NULL;
  GListModel *model;

  if (session_registry == NULL)
    return;
  leases = list_leases (ports);
  /* Ports the agent bound itself: nobody holds them now; held again, so
   * that no other program gets them before Destroy or the next start. */
  for (guint i = 0; leases != NULL && i < leases->len; i++)
    {
      PaddockLease *lease = g_ptr_array_index (leases, i);

      if (paddock_lease_get_state (lease) == PADDOCK_LEASE_STATE_RELEASED &&
          !paddock_registry_take_back (session_registry, paddock_lease_get_port (lease)))
        g_message ("Session %s: port %u (%s), which its agent was to bind itself, is taken by another "
                   "program of the host; it stays the session's, lost, until that program lets go",
                   ports->session_id, paddock_lease_get_port (lease),
                   paddock_lease_get_name (lease));
    }
  model = G_LIST_MODEL (session_registry);
  if (ports->refusing_in == NULL)
    {
      ports->refusing_in = session_registry;
      g_object_add_weak_pointer (G_OBJECT (ports->refusing_in), (gpointer *) &ports->refusing_in);
      ports->refusing_id = g_signal_connect (ports->refusing_in, "items-changed",
                                             G_CALLBACK (refuse_all_registry_changed_cb), ports);
    }
  refuse_in_range (ports, model, 0, g_list_model_get_n_items (model));
}

/* Only the items that changed: the registry says a lease's change (a
 * reclaim that took its socket back, a rename) as that item removed and
 * added again, and the rest are as they were. Rescanning the whole
 * registry here made every Lease of any client cost O(leases) for each
 * ended session still listed (issue #23: 20 racing clients got a third
 * of portserver's rate beside 27 ended sessions). */
static void
refuse_all_registry_changed_cb (GListModel *model,
                                guint       position,
                                guint       removed,
                                guint       added,
                                gpointer    user_data)
{
  refuse_in_range (user_data, model, position, position + added);
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

/* At create: the @n_wanted ports @session_id reserves for LeasePort,
 * leased from @registry to the session (so they are released with it).
 * Only a sandboxed none or proxy session reserves any, and only as many as
 * CreateSession's "reserved-ports" asked for (none by default): the agent
 * binds any port in its own namespace, so LeasePort can lease a new port
 * at any time, and a reserved one is only a port held for it (named
 * first, so LeasePort cannot then fail for a pool another session
 * exhausted). On the host's network the agent is handed its sockets at
 * start. Returns the leases (maybe none), or NULL with @error (in
 * PADDOCK_ERROR) when the registry cannot give them all; then none is
 * left. */
GPtrArray *
_paddock_session_ports_reserve (PaddockRegistry  *registry,
                                const char       *session_id,
                                const char       *profile,
                                const char       *net_mode,
                                guint             n_wanted,
                                GError          **error)
{
  g_autoptr(GError) local_error = NULL;
  GPtrArray *reserved;

  if (registry == NULL || g_strcmp0 (profile, "host") == 0 ||
      (g_strcmp0 (net_mode, "none") != 0 && g_strcmp0 (net_mode, "proxy") != 0) ||
      n_wanted == 0)
    return g_ptr_array_new_with_free_func (g_object_unref);

  /* One durable write for all of them: this is on the way to the
   * session's start. */
  reserved = paddock_registry_lease_several (registry, session_id, PADDOCK_RESERVED_PORT_NAME,
                                             n_wanted, &local_error);
  if (reserved == NULL)
    {
      paddock_error_propagate_registry (error, g_steal_pointer (&local_error));
      g_prefix_error (error, "Could not reserve %u ports for LeasePort (ask for fewer, or 0, with "
                      "CreateSession's “reserved-ports”, paddockctl create --reserved-ports N): ", n_wanted);
    }
  return reserved;
}

/* At create: the handover CreateSession's "port-handover" asked for on the
 * host's network, @release ('release') or not ('listen-fds'). */
void
_paddock_session_ports_set_release (PaddockSessionPorts *ports,
                                    gboolean             release)
{
  ports->release = release;
}

/* Whether the agent binds its leased ports itself on the host's network,
 * so it gets no LISTEN_FDS. */
gboolean
_paddock_session_ports_get_release (PaddockSessionPorts *ports)
{
  return ports->release;
}

/* Just before the agent starts on the host's network: with 'release' the
 * daemon's sockets for @leases are closed, so that its own bind() of $PORT
 * succeeds. As late as the daemon can: another program of the host could
 * take a port between this and that bind (a port is bound or free, there
 * is no handing it to one bind), so the window is kept to the agent's
 * start. A lease that is not the daemon's to close (lost to another
 * program) is said in the log: the agent's bind will fail, as it would
 * have outside Paddock. */
void
_paddock_session_ports_hand_over (PaddockSessionPorts *ports,
                                  GPtrArray           *leases)
{
  if (!ports->release || session_registry == NULL)
    return;
  for (guint i = 0; leases != NULL && i < leases->len; i++)
    {
      PaddockLease *lease = g_ptr_array_index (leases, i);
      g_autoptr(GError) error = NULL;

      if (!paddock_registry_hand_over (session_registry, paddock_lease_get_port (lease), &error))
        g_message ("Session %s: port %u (%s) cannot be left for the agent to bind: %s",
                   ports->session_id, paddock_lease_get_port (lease),
                   paddock_lease_get_name (lease), error->message);
    }
}

/* A session adopted by a new daemon from its keeper: its leases are the
 * session's again (taken back once its processes are gone, released with
 * it at Destroy), and one its agent was left to bind is released again,
 * not lost: the agent that bound it runs on. */
void
_paddock_session_ports_adopted (PaddockSessionPorts *ports)
{
  const char *id = ports->session_id;
  GListModel *model;

  if (session_registry == NULL)
    return;
  model = G_LIST_MODEL (session_registry);
  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr(PaddockLease) lease = g_list_model_get_item (model, i);

      if (g_strcmp0 (paddock_lease_get_session (lease), id) != 0)
        continue;
      /* A reserved port is held for a later LeasePort, as before the
       * restart: refused, not forwarded (_paddock_session_ports_start()). */
      if (paddock_lease_is_reserved (id, paddock_lease_get_name (lease)))
        {
          g_ptr_array_add (ports->reserved, g_object_ref (lease));
          continue;
        }
      paddock_session_config_add_lease (ports->config, lease);
      paddock_registry_readopt_released (session_registry, paddock_lease_get_port (lease), id);
    }
}

/* The session's reserved ports (from _paddock_session_ports_reserve()). */
void
_paddock_session_ports_take_reserved (PaddockSessionPorts *ports,
                                      GPtrArray           *reserved)
{
  for (guint i = 0; reserved != NULL && i < reserved->len; i++)
    g_ptr_array_add (ports->reserved, g_object_ref (g_ptr_array_index (reserved, i)));
  ports->n_reserved_at_create = ports->reserved->len;
}

/* Whether a port of a session may be named @name: never as its reserved
 * ports are (CreateSession's "ports", Ports1.Lease for a session,
 * LeasePort), so that the name tells them apart. Sets @error
 * (InvalidArgument) and returns FALSE for that name. */
gboolean
_paddock_session_ports_check_name (const char  *name,
                                   GError     **error)
{
  if (g_strcmp0 (name, PADDOCK_RESERVED_PORT_NAME) != 0)
    return TRUE;
  g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                       "“" PADDOCK_RESERVED_PORT_NAME "” is what a session's ports not named yet are "
                       "called: choose another name");
  return FALSE;
}

/* paddock-sandbox's arguments naming the reserved ports, those LeasePort
 * may name after start: the ports its Landlock bind rules would allow
 * (none and proxy sessions, where the helper now sets no bind rule, are
 * the only ones with reserved ports). */
void
_paddock_session_ports_add_bind_arguments (PaddockSessionPorts *ports,
                                           GPtrArray           *argv)
{
  for (guint i = 0; i < ports->reserved->len; i++)
    {
      PaddockLease *lease = g_ptr_array_index (ports->reserved, i);

      /* Not one a client released meanwhile (Ports1.Release). */
      if (session_registry != NULL &&
          paddock_registry_lookup (session_registry, paddock_lease_get_port (lease)) != lease)
        continue;
      g_ptr_array_add (argv, g_strdup ("--bind-port"));
      g_ptr_array_add (argv, g_strdup_printf ("%u", paddock_lease_get_port (lease)));
    }
}

/* Names a reserved port @name: the lease, or NULL when none is left (then
 * @error is not set) or the name could not be saved. A reserved port some
 * client released meanwhile (Ports1.Release) is skipped. */
static PaddockLease *
take_reserved (PaddockSessionPorts  *ports,
               const char           *name,
               GError              **error)
{
  while (ports->reserved->len > 0)
    {
      PaddockLease *lease = g_ptr_array_index (ports->reserved, 0);
      g_autoptr(GError) local_error = NULL;

      if (session_registry == NULL ||
          paddock_registry_lookup (session_registry, paddock_lease_get_port (lease)) != lease)
        {
          refuse_connections (ports, lease, FALSE);
          g_ptr_array_remove_index (ports->reserved, 0);
          continue;
        }
      if (!paddock_registry_rename (session_registry, paddock_lease_get_port (lease), name, &local_error))
        {
          paddock_error_propagate_registry (error, g_steal_pointer (&local_error));
          return NULL;
        }
      /* From now on its forward accepts. */
      refuse_connections (ports, lease, FALSE);
      return g_ptr_array_steal_index (ports->reserved, 0);
    }
  return NULL;
}

/* Undoes take_reserved() for @lease, which could not be forwarded: named
 * "reserved" again and first in line, so a failed LeasePort costs the
 * session none of its reserved ports. FALSE if the old name could not be
 * saved (then the caller releases it). */
static gboolean
return_reserved (PaddockSessionPorts *ports,
                 PaddockLease        *lease)
{
  if (session_registry == NULL ||
      !paddock_registry_rename (session_registry, paddock_lease_get_port (lease), PADDOCK_RESERVED_PORT_NAME,
                                NULL))
    return FALSE;
  g_ptr_array_insert (ports->reserved, 0, g_object_ref (lease));
  /* Nothing serves a reserved port: refused while the sandbox runs
   * (forwarding), and once its processes are gone (refusing_in: then the
   * rename's "items-changed" has just refused it, which this must not
   * undo). */
  refuse_connections (ports, lease, ports->forwarding || ports->refusing_in != NULL);
  return TRUE;
}

void
_paddock_session_ports_set_registry (PaddockRegistry *registry)
{
  if (session_registry != NULL)
    g_object_remove_weak_pointer (G_OBJECT (session_registry), (gpointer *) &session_registry);
  session_registry = registry;
  if (session_registry != NULL)
    g_object_add_weak_pointer (G_OBJECT (session_registry), (gpointer *) &session_registry);
}

/* Whether the session's Landlock rules restrict TCP bind, as observed at
 * start: then they were fixed with the ports leased at create. */
static gboolean
landlock_net_enforced (PaddockIpcSession1 *session)
{
  GVariant *boundary = paddock_ipc_session1_get_boundary (session);
  gsize n = boundary != NULL ? g_variant_n_children (boundary) : 0;

  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) layer = g_variant_get_child_value (boundary, i);
      const char *name = NULL;
      const char *status = NULL;

      if (g_variant_lookup (layer, "layer", "&s", &name) && g_strcmp0 (name, "landlock-net") == 0 &&
          g_variant_lookup (layer, "status", "&s", &status))
        return g_strcmp0 (status, "enforced") == 0;
    }
  return FALSE;
}

/* Session1.LeasePort: see its documentation in org.paddock.Session1.xml. */
static gboolean
handle_lease_port (PaddockIpcSession1    *session,
                   GDBusMethodInvocation *invocation,
                   const char            *name,
                   PaddockSessionPorts   *ports)
{
  g_autoptr(GPtrArray) leases = list_leases (ports);
  const char *mode = paddock_ipc_session1_get_network_mode (session);
  g_autoptr(PaddockLease) lease = NULL;
  g_autoptr(GVariant) description = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GError) local_error = NULL;
  gboolean from_reserved;

  if (!paddock_registry_validate_name (name, &local_error))
    {
      g_dbus_method_invocation_return_error_literal (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                                     local_error->message);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (!_paddock_session_ports_check_name (name, &error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  for (guint i = 0; leases != NULL && i < leases->len; i++)
    if (g_strcmp0 (paddock_lease_get_name (g_ptr_array_index (leases, i)), name) == 0)
      {
        g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                               "The session has a port named “%s” already", name);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
      }
  if (leases != NULL && leases->len >= PADDOCK_SESSION_MAX_PORTS)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_QUOTA_EXCEEDED,
                                             "A session leases at most %d ports", PADDOCK_SESSION_MAX_PORTS);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (paddock_session_gate_refuse (ports->gate, invocation))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (!paddock_session_gate_is_live (ports->gate))
    {
      g_dbus_method_invocation_return_error_literal (invocation, PADDOCK_ERROR, PADDOCK_ERROR_CONFLICT,
                                                     "The session is not running: nothing could use the port");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (g_strcmp0 (mode, "host") == 0)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_RESTART_REQUIRED,
                                             "On the host's network the agent's ports are settled at start (handed "
                                             "over listening, or released for it to bind) and it binds no other "
                                             "port: create the session again with "
                                             "--port %s; nothing was leased", name);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (session_registry == NULL)
    {
      g_dbus_method_invocation_return_error_literal (invocation, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                                                     "No port registry");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  /* Naming a port is a change to the lease state: on a full state disk
   * it is refused up front, naming the filesystem (paddock-state-space.c). */
  if (!paddock_state_space_check_writable (&error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  /* A port reserved at create first: the only kind the agent can bind
   * when its Landlock rules restrict bind. */
  lease = take_reserved (ports, name, &error);
  from_reserved = lease != NULL;
  if (lease == NULL && error != NULL)
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (lease == NULL && landlock_net_enforced (session))
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_QUOTA_EXCEEDED,
                                             "The session had %u reserved port(s) for LeasePort and none is "
                                             "left (each named, or released); its Landlock rules, fixed at "
                                             "start, let it bind no other port. Create the session with --port "
                                             "%s, or with more --reserved-ports; nothing was leased",
                                             ports->n_reserved_at_create, name);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (lease == NULL)
    {
      lease = paddock_registry_lease (session_registry, NULL, ports->session_id, name, 0,
                                      &local_error);
      if (lease == NULL)
        {
          paddock_error_propagate_registry (&error, g_steal_pointer (&local_error));
          g_dbus_method_invocation_return_gerror (invocation, error);
          return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
    }
  if (!_paddock_session_ports_add (ports, lease, &error))
    {
      if (!from_reserved || !return_reserved (ports, lease))
        paddock_registry_release (session_registry, paddock_lease_get_port (lease), NULL, NULL);
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                                             "Could not forward the port: %s; nothing was leased", error->message);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  paddock_session_config_add_lease (ports->config, lease);
  description = paddock_lease_to_variant (lease);
  paddock_ipc_session1_complete_lease_port (session, invocation, description);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* From now on it answers its calls on @skeleton itself (the session's
 * D-Bus object leaves those methods to it); they are disconnected when
 * it goes, or when the skeleton does. */
void
_paddock_session_ports_attach (PaddockSessionPorts *self,
                               PaddockIpcSession1 *skeleton)
{
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-lease-port", G_CALLBACK (handle_lease_port), self);
}
