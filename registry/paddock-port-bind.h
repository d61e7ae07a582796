/* paddock-port-bind.h — taking a loopback port for a lease: 127.0.0.1 listening, [::1] guarded
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  PADDOCK_BIND_OK,
  PADDOCK_BIND_IN_USE,
  PADDOCK_BIND_FAILED,
} PaddockBindResult;

PaddockBindResult _paddock_port_bind            (guint16  port,
                                                int     *out_fd4,
                                                int     *out_fd6,
                                                int     *out_errno);
PaddockBindResult _paddock_port_bind_ipv6_guard (guint16  port,
                                                int     *out_fd,
                                                int     *out_errno);

G_END_DECLS
