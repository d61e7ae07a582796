/* paddock-sandbox-host-paths.h — the host paths every sandbox's view shows
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The helper binds them (paddock-sandbox-plan.c); the daemon looks at
 * them too, to tell whether a change of its mounts since a spare sandbox
 * was made reaches that spare's view (paddock-spare-sandbox.c). One list,
 * so that neither can show a path the other does not know of. Macros
 * (initialiser lists), so that a file using one list is not warned about
 * the others.
 */

#pragma once

/* Programs and libraries, bound read-only (not recursively). */
#define PADDOCK_SANDBOX_SYSTEM_DIRS \
  "/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"

/* The harmless devices, under /dev, bound into the view's own /dev. */
#define PADDOCK_SANDBOX_DEV_NODES \
  "null", "zero", "full", "random", "urandom", "tty"

/* The part of /etc programs need to run, resolve names and verify TLS.
 * Followed when symlinks (resolv.conf often points into /run, which the
 * sandbox does not have). Not shadow, not ssh keys, nothing secret. */
#define PADDOCK_SANDBOX_ETC_FILES \
  "/etc/passwd", "/etc/group", "/etc/hosts", "/etc/host.conf", \
  "/etc/hostname", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/gai.conf", \
  "/etc/services", "/etc/protocols", "/etc/ld.so.cache", "/etc/ld.so.conf", \
  "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/ssl", "/etc/ca-certificates", \
  "/etc/ca-certificates.conf", "/etc/localtime", "/etc/timezone", \
  "/etc/os-release", "/etc/shells", "/etc/profile", "/etc/bash.bashrc", \
  "/etc/inputrc", "/etc/terminfo", "/etc/mime.types", "/etc/gitconfig", \
  "/etc/locale.alias", "/etc/locale.gen", "/etc/default/locale"
