/* paddock-daemon.h — paddockd's top object: the bus, the state dir, the services
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-registry.h"

G_BEGIN_DECLS

typedef struct
{
  char    *state_dir;
  gboolean replace;
  guint16  first_port;
  guint16  last_port;
  guint    max_leases;
  guint    max_leases_per_owner;
} PaddockDaemonOptions;

#define PADDOCK_TYPE_DAEMON (paddock_daemon_get_type ())

G_DECLARE_FINAL_TYPE (PaddockDaemon, paddock_daemon, PADDOCK, DAEMON, GObject)

PaddockDaemon   *paddock_daemon_new           (const PaddockDaemonOptions *options);
int              paddock_daemon_run           (PaddockDaemon              *self,
                                               GError                    **error);
void             paddock_daemon_quit          (PaddockDaemon              *self);
const char      *paddock_daemon_get_state_dir (PaddockDaemon              *self);
PaddockRegistry *paddock_daemon_get_registry  (PaddockDaemon              *self);

G_END_DECLS
