/* paddock-compat-pidfd.h — pinning a process so a signal reaches it or no one
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

int      paddock_compat_pidfd_open        (pid_t  pid);
int      paddock_compat_pidfd_send_signal (int    pidfd,
                                           int    signum);
gboolean paddock_compat_pidfd_supported   (void);

G_END_DECLS
