/* paddock-record-writer.h — session records written durably, off the main thread
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

void paddock_record_writer_replace (const char *path,
                                    char       *contents);
void paddock_record_writer_flush   (void);

void     paddock_record_writer_flush_async  (GCancellable         *cancellable,
                                             GAsyncReadyCallback   callback,
                                             gpointer              user_data);
gboolean paddock_record_writer_flush_finish (GAsyncResult         *result,
                                             GError              **error);

/* A step of OBJECT's, with ARG, once what it wrote is durable. */
typedef void (*PaddockRecordWriterStep) (gpointer object,
                                         guint    arg);

void     paddock_record_writer_when_durable (gpointer                 object,
                                             GCancellable            *cancellable,
                                             PaddockRecordWriterStep  step,
                                             guint                    arg);

G_END_DECLS
