/* paddock-listening-sockets.h — which listening TCP sockets exist, by inode (the registry's compat point)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* inode (gint64) → port of every listening IPv4 TCP socket in our network
 * namespace; NULL where this system cannot say (then every check below
 * answers TRUE: unknown keeps a port its owner's). */
GHashTable *_paddock_listening_sockets      (void);
gboolean    _paddock_socket_still_listening (GHashTable *listening,
                                             guint16     port,
                                             guint64     inode);

G_END_DECLS
