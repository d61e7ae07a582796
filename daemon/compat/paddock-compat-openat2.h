/* paddock-compat-openat2.h — opening beneath a folder, resolved by the kernel
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

int paddock_compat_openat2_beneath (int         root_fd,
                                    const char *rel,
                                    int         flags,
                                    guint       mode);

G_END_DECLS
