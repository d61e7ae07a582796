/* paddock-content-hash.h — a file's content as one SHA-256, in time proportional to its data
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* The hex digest's length without its NUL. */
#define PADDOCK_CONTENT_HASH_HEX_LEN 64

char *paddock_content_hash_fd    (int            fd,
                                  GCancellable  *cancellable,
                                  GError       **error);
char *paddock_content_hash_bytes (const void    *data,
                                  gsize          length);
int   paddock_content_equal_fd   (int            fd,
                                  GBytes        *expected,
                                  GError       **error);

G_END_DECLS
