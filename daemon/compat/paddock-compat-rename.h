/* paddock-compat-rename.h — renames that never replace, and atomic exchanges
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

int paddock_compat_rename_noreplace (int         from_dir,
                                     const char *from,
                                     int         to_dir,
                                     const char *to);
int paddock_compat_rename_exchange  (int         from_dir,
                                     const char *from,
                                     int         to_dir,
                                     const char *to);

G_END_DECLS
