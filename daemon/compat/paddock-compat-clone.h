/* paddock-compat-clone.h — a file's data shared, not copied, where the filesystem can
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

int paddock_compat_clone_file_data (int to,
                                    int from);

G_END_DECLS
