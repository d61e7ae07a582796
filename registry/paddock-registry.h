/* paddock-registry.h — the machine-wide port registry: leases are sockets we hold
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-lease.h"

G_BEGIN_DECLS

#define PADDOCK_REGISTRY_ERROR (paddock_registry_error_quark ())

typedef enum
{
  PADDOCK_REGISTRY_ERROR_FAILED,
  PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT,
  PADDOCK_REGISTRY_ERROR_NOT_FOUND,
  PADDOCK_REGISTRY_ERROR_ACCESS_DENIED,
  PADDOCK_REGISTRY_ERROR_PORT_IN_USE,
  PADDOCK_REGISTRY_ERROR_PORT_EXHAUSTED,
  PADDOCK_REGISTRY_ERROR_QUOTA_EXCEEDED,
  /* The state file's filesystem is full (ENOSPC, EDQUOT): nothing changed. */
  PADDOCK_REGISTRY_ERROR_NO_SPACE,
} PaddockRegistryError;

#define PADDOCK_REGISTRY_DEFAULT_FIRST_PORT      20000
#define PADDOCK_REGISTRY_DEFAULT_LAST_PORT       29999
#define PADDOCK_REGISTRY_DEFAULT_MAX_LEASES      4096
#define PADDOCK_REGISTRY_DEFAULT_MAX_PER_OWNER   256
#define PADDOCK_REGISTRY_MAX_NAME_LEN            64

#define PADDOCK_TYPE_REGISTRY (paddock_registry_get_type ())

/* PaddockRegistry is a GListModel of PaddockLease, ordered by port, so the
 * daemon can forward items-changed as the LeasesChanged D-Bus signal. */
G_DECLARE_FINAL_TYPE (PaddockRegistry, paddock_registry, PADDOCK, REGISTRY, GObject)

GQuark           paddock_registry_error_quark       (void);
PaddockRegistry *paddock_registry_new               (guint16          first_port,
                                                     guint16          last_port,
                                                     guint            max_leases,
                                                     guint            max_per_owner,
                                                     GError         **error);
guint16          paddock_registry_get_first_port    (PaddockRegistry *self);
guint16          paddock_registry_get_last_port     (PaddockRegistry *self);
guint            paddock_registry_get_max_leases    (PaddockRegistry *self);
guint            paddock_registry_get_max_per_owner (PaddockRegistry *self);
void             paddock_registry_set_bus_id        (PaddockRegistry *self,
                                                     const char      *bus_id);
gboolean         paddock_registry_load              (PaddockRegistry *self,
                                                     const char      *state_file,
                                                     GError         **error);
gboolean         paddock_registry_is_loaded         (PaddockRegistry *self);
PaddockLease    *paddock_registry_lease             (PaddockRegistry *self,
                                                     const char      *owner,
                                                     const char      *session,
                                                     const char      *name,
                                                     guint16          preferred_port,
                                                     GError         **error);
void             paddock_registry_lease_async       (PaddockRegistry *self,
                                                     const char      *owner,
                                                     const char      *session,
                                                     const char      *name,
                                                     guint16          preferred_port,
                                                     guint            count,
                                                     GCancellable    *cancellable,
                                                     GAsyncReadyCallback callback,
                                                     gpointer         user_data);
GPtrArray       *paddock_registry_lease_finish      (PaddockRegistry *self,
                                                     GAsyncResult    *result,
                                                     GError         **error);
GPtrArray       *paddock_registry_lease_several     (PaddockRegistry *self,
                                                     const char      *session,
                                                     const char      *name,
                                                     guint            n,
                                                     GError         **error);
gboolean         paddock_registry_release           (PaddockRegistry *self,
                                                     guint16          port,
                                                     const char      *requester,
                                                     GError         **error);
gboolean         paddock_registry_rename            (PaddockRegistry *self,
                                                     guint16          port,
                                                     const char      *name,
                                                     GError         **error);
guint            paddock_registry_release_owner     (PaddockRegistry *self,
                                                     const char      *owner);
gboolean         paddock_registry_hand_over         (PaddockRegistry *self,
                                                     guint16          port,
                                                     GError         **error);
gboolean         paddock_registry_take_back         (PaddockRegistry *self,
                                                     guint16          port);
gboolean         paddock_registry_readopt_released  (PaddockRegistry *self,
                                                     guint16          port,
                                                     const char      *session);
PaddockLease    *paddock_registry_lookup            (PaddockRegistry *self,
                                                     guint16          port);
GStrv            paddock_registry_dup_owners        (PaddockRegistry *self);
guint            paddock_registry_reclaim           (PaddockRegistry *self,
                                                     guint           *out_unheld,
                                                     GError         **error);
gboolean         paddock_registry_validate_name     (const char      *name,
                                                     GError         **error);

G_END_DECLS
