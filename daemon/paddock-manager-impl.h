/* paddock-manager-impl.h — org.paddock.Manager1: the daemon's entry point
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include "paddock-ipc-generated.h"
#include "paddock-registry.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_MANAGER_IMPL (paddock_manager_impl_get_type ())

G_DECLARE_FINAL_TYPE (PaddockManagerImpl, paddock_manager_impl, PADDOCK, MANAGER_IMPL, PaddockIpcManager1Skeleton)

PaddockManagerImpl *paddock_manager_impl_new            (const char         *state_dir,
                                                         const char         *helper_path);
void                paddock_manager_impl_set_connection (PaddockManagerImpl *self,
                                                         GDBusConnection    *connection);
void                paddock_manager_impl_set_registry   (PaddockManagerImpl *self,
                                                         PaddockRegistry    *registry);
void                paddock_manager_impl_set_cgroup_parent (PaddockManagerImpl *self,
                                                            const char         *parent,
                                                            const char         *reason);
gboolean            paddock_manager_impl_has_session    (PaddockManagerImpl *self,
                                                         const char         *id);
void                paddock_manager_impl_restore        (PaddockManagerImpl *self);
void                paddock_manager_impl_shutdown       (PaddockManagerImpl *self);
void                paddock_manager_impl_hand_over_at_shutdown (PaddockManagerImpl *self);

G_END_DECLS
