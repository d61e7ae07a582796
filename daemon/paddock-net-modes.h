/* paddock-net-modes.h — the network modes of a session, named once
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* org.paddock.Session1's NetworkMode values, in the order they are offered
 * (paddockctl create and net, the app's New Session dialog, the daemon's
 * checks): host (the user's network), none (a namespace with loopback
 * only), proxy (as none, the daemon's proxy the only way out). */
#define PADDOCK_NET_MODES      "host", "none", "proxy"
#define PADDOCK_NET_MODES_TEXT "host, none or proxy"

static inline gboolean
paddock_net_mode_is_valid (const char *mode)
{
  static const char * const modes[] = { PADDOCK_NET_MODES, NULL };

  return mode != NULL && g_strv_contains (modes, mode);
}

G_END_DECLS
