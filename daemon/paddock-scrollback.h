/* paddock-scrollback.h — a bounded ring of terminal output with absolute offsets
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define PADDOCK_SCROLLBACK_DEFAULT_CAPACITY (8 * 1024 * 1024)

typedef struct _PaddockScrollback PaddockScrollback;

PaddockScrollback *paddock_scrollback_new              (gsize              capacity);
void               paddock_scrollback_free             (PaddockScrollback *self);
gboolean           paddock_scrollback_persist          (PaddockScrollback *self,
                                                        const char        *path,
                                                        GError           **error);
void               paddock_scrollback_close_file       (PaddockScrollback *self);
void               paddock_scrollback_append           (PaddockScrollback *self,
                                                        const guint8      *data,
                                                        gsize              length);
guint64            paddock_scrollback_get_first_offset (PaddockScrollback *self);
guint64            paddock_scrollback_get_end_offset   (PaddockScrollback *self);
GBytes            *paddock_scrollback_read             (PaddockScrollback *self,
                                                        guint64            offset,
                                                        gsize              max_bytes,
                                                        guint64           *out_start);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PaddockScrollback, paddock_scrollback_free)

G_END_DECLS
