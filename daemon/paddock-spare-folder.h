/* paddock-spare-folder.h — the next safe session's folder, made ahead of time
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _PaddockSpareFolder PaddockSpareFolder;

PaddockSpareFolder *paddock_spare_folder_new    (const char         *path,
                                                 gboolean            overlay);
gboolean            paddock_spare_folder_take   (PaddockSpareFolder *self,
                                                 const char         *dest);
void                paddock_spare_folder_refill (PaddockSpareFolder *self);
void                paddock_spare_folder_free   (PaddockSpareFolder *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PaddockSpareFolder, paddock_spare_folder_free)

G_END_DECLS
