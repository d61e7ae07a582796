/* paddock-baseline.h — the stamps of a workspace's entries at session start
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-file-stamp.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_BASELINE (paddock_baseline_get_type ())

G_DECLARE_FINAL_TYPE (PaddockBaseline, paddock_baseline, PADDOCK, BASELINE, GObject)

gboolean         paddock_baseline_record     (const char              *workspace,
                                              const char              *file,
                                              GCancellable            *cancellable,
                                              GError                 **error);
gboolean         paddock_baseline_record_since (const char            *workspace,
                                                const char            *file,
                                                gint64                 since_ns,
                                                GCancellable          *cancellable,
                                                GError               **error);
PaddockBaseline *paddock_baseline_new_unknown (void);
gboolean         paddock_baseline_is_legacy  (PaddockBaseline         *self);
void             paddock_baseline_set_missing_unknown (PaddockBaseline *self);
PaddockBaseline *paddock_baseline_load       (const char              *file,
                                              GError                 **error);
gboolean         paddock_baseline_lookup     (PaddockBaseline         *self,
                                              const char              *relpath,
                                              PaddockFileStamp        *out);
gboolean         paddock_baseline_update     (PaddockBaseline         *self,
                                              const char              *relpath,
                                              const PaddockFileStamp  *stamp,
                                              GError                 **error);
gboolean         paddock_baseline_update_many (PaddockBaseline         *self,
                                              GPtrArray               *relpaths,
                                              GPtrArray               *stamps,
                                              GError                 **error);
gsize            paddock_baseline_get_n_entries (PaddockBaseline      *self);

G_END_DECLS
