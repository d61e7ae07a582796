/* paddock-reserved-ports.h — how many ports a session may have, and its
 * reserved ones, recognised once
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Ports a session may lease, at create and later (LeasePort) together; also
 * the most sockets an agent on the host's network is handed at start. */
#define PADDOCK_SESSION_MAX_PORTS  16
/* Ports a none or proxy session reserves at create unless CreateSession's
 * "reserved-ports" says how many, besides its named ones (within MAX_PORTS
 * together): none, since the agent binds any port in its own namespace and
 * LeasePort can lease a new one after start; those asked for are held for
 * a later LeasePort to name first (daemon/session/paddock-session-ports.c). */
#define PADDOCK_SESSION_RESERVED_PORTS 0

/* The name a none or proxy session's reserved port has in the registry
 * until Session1.LeasePort names it (daemon/session/paddock-session-ports.c). The
 * daemon gives no other port of a session this name, so the daemon,
 * paddockctl and the app recognise a reserved port by it, here alone. */
#define PADDOCK_RESERVED_PORT_NAME "reserved"

/* Whether a lease tied to @session (NULL or "" for none) and named @name
 * is one of that session's reserved ports: held for it, not forwarded. */
static inline gboolean
paddock_lease_is_reserved (const char *session,
                           const char *name)
{
  return session != NULL && session[0] != '\0' && g_strcmp0 (name, PADDOCK_RESERVED_PORT_NAME) == 0;
}

G_END_DECLS
