/* paddock-dbus-checks.h — what every incoming method call must pass before its handler runs
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Longest path or folder a method takes, in bytes (the kernel's PATH_MAX,
 * terminating NUL included). */
#define PADDOCK_DBUS_MAX_PATH 4096

/* One option an a{sv} argument takes: its key and GVariant type string. */
typedef struct
{
  const char *key;
  const char *type;
} PaddockDBusOption;

gboolean              paddock_dbus_check_options     (GVariant               *options,
                                                      const PaddockDBusOption *known,
                                                      const char             *method,
                                                      GError                **error);
gboolean              paddock_dbus_check_call        (GDBusMethodInvocation  *invocation,
                                                      GError                **error);
GDBusInterfaceVTable *paddock_dbus_checked_vtable    (GDBusInterfaceSkeleton *skeleton,
                                                      GDBusInterfaceVTable   *inner);
gboolean              paddock_dbus_check_env         (GVariant               *env,
                                                      const char             *argument,
                                                      guint                   max_items,
                                                      gsize                   max_bytes,
                                                      GError                **error);
gboolean              paddock_env_name_is_valid      (const char             *name);
char                 *paddock_dbus_display_bytes     (const char             *bytes);

/* Defines PREFIX_get_checked_vtable() for a subclass of a generated
 * skeleton: the parent's vtable with every call checked first. Install it
 * in class_init:
 *   G_DBUS_INTERFACE_SKELETON_CLASS (klass)->get_vtable = PREFIX_get_checked_vtable; */
#define PADDOCK_DBUS_DEFINE_CHECKED_VTABLE(prefix)                                         \
  static GDBusInterfaceVTable *                                                            \
  prefix##_get_checked_vtable (GDBusInterfaceSkeleton *skeleton)                           \
  {                                                                                        \
    GDBusInterfaceSkeletonClass *parent = G_DBUS_INTERFACE_SKELETON_CLASS (prefix##_parent_class); \
    return paddock_dbus_checked_vtable (skeleton, parent->get_vtable (skeleton));          \
  }

G_END_DECLS
