/* paddock-reserved-ports.h — a session's reserved ports, recognised once
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The name a none or proxy session's reserved port has in the registry
 * until Session1.LeasePort names it (daemon/paddock-session-ports.c). The
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
