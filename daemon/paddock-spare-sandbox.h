/* paddock-spare-sandbox.h — the next safe session's sandbox, made ahead of time
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>
#include <sys/types.h>

#include "paddock-cgroup.h"
#include "paddock-keeper-client.h"

G_BEGIN_DECLS

typedef struct _PaddockSpareSandbox PaddockSpareSandbox;

/* A spare handed to its session: the helper's pid (a child of ours, or of
 * its keeper), the master of the terminal its agent will have, our end of
 * its control socket, its cgroup, named for the session when it was made
 * (NULL: it has none), and the keeper it was born under (NULL: none, the
 * helper is ours to reap), with the folder it would hold it in. */
typedef struct {
  pid_t                pid;
  int                  pty_master;
  int                  control;
  PaddockCgroup       *cgroup;
  PaddockKeeperClient *keeper;
  char                *hold_dir;
} PaddockSpareSandboxTaken;

PaddockSpareSandbox *paddock_spare_sandbox_new    (const char               *helper,
                                                   const char               *cgroup_parent);
void                 paddock_spare_sandbox_refill (PaddockSpareSandbox      *self,
                                                   const char               *net_mode,
                                                   guint16                   proxy_port,
                                                   int                       seccomp_fd,
                                                   const char               *cgroup_name,
                                                   const char               *hold_dir);
gboolean             paddock_spare_sandbox_fits   (PaddockSpareSandbox      *self,
                                                   const char               *net_mode);
void                 paddock_spare_sandbox_discard (PaddockSpareSandbox     *self);
gboolean             paddock_spare_sandbox_take   (PaddockSpareSandbox      *self,
                                                   const char               *net_mode,
                                                   const char * const       *session_args,
                                                   PaddockSpareSandboxTaken *out);
void                 paddock_spare_sandbox_free   (PaddockSpareSandbox      *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PaddockSpareSandbox, paddock_spare_sandbox_free)

G_END_DECLS
