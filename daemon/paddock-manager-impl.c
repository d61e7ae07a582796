/* paddock-manager-impl.c — org.paddock.Manager1: the daemon's entry point
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <unistd.h>

#include "paddock-manager-impl.h"

struct _PaddockManagerImpl
{
  PaddockIpcManager1Skeleton parent_instance;

  char   *helper_path;
  gint64  started;
};

static void paddock_manager_iface_init (PaddockIpcManager1Iface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (PaddockManagerImpl, paddock_manager_impl,
                               PADDOCK_IPC_TYPE_MANAGER1_SKELETON,
                               G_IMPLEMENT_INTERFACE (PADDOCK_IPC_TYPE_MANAGER1,
                                                      paddock_manager_iface_init))

static gboolean
paddock_manager_impl_handle_get_info (PaddockIpcManager1     *manager,
                                      GDBusMethodInvocation  *invocation)
{
  PaddockManagerImpl *self = PADDOCK_MANAGER_IMPL (manager);
  g_auto(GVariantDict) info = G_VARIANT_DICT_INIT (NULL);

  g_variant_dict_insert (&info, "version", "s", PACKAGE_VERSION);
  g_variant_dict_insert (&info, "state-dir", "s",
                         paddock_ipc_manager1_get_state_dir (manager));
  g_variant_dict_insert (&info, "pid", "u", (guint32) getpid ());
  g_variant_dict_insert (&info, "started", "t", (guint64) self->started);
  g_variant_dict_insert (&info, "helper", "s",
                         self->helper_path != NULL ? self->helper_path : "");

  paddock_ipc_manager1_complete_get_info (manager, invocation,
                                          g_variant_dict_end (&info));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void
paddock_manager_iface_init (PaddockIpcManager1Iface *iface)
{
  iface->handle_get_info = paddock_manager_impl_handle_get_info;
}

static void
paddock_manager_impl_finalize (GObject *object)
{
  PaddockManagerImpl *self = PADDOCK_MANAGER_IMPL (object);

  g_clear_pointer (&self->helper_path, g_free);

  G_OBJECT_CLASS (paddock_manager_impl_parent_class)->finalize (object);
}

static void
paddock_manager_impl_class_init (PaddockManagerImplClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = paddock_manager_impl_finalize;
}

static void
paddock_manager_impl_init (PaddockManagerImpl *self)
{
  self->started = g_get_real_time ();
}

PaddockManagerImpl *
paddock_manager_impl_new (const char *state_dir,
                          const char *helper_path)
{
  PaddockManagerImpl *self;

  g_return_val_if_fail (state_dir != NULL, NULL);

  self = g_object_new (PADDOCK_TYPE_MANAGER_IMPL, NULL);
  self->helper_path = g_strdup (helper_path);
  paddock_ipc_manager1_set_version (PADDOCK_IPC_MANAGER1 (self), PACKAGE_VERSION);
  paddock_ipc_manager1_set_state_dir (PADDOCK_IPC_MANAGER1 (self), state_dir);

  return self;
}
