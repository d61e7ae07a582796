/* paddock-record-writer.h — session records written durably, off the main thread
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

void paddock_record_writer_replace (const char *path,
                                    char       *contents);
void paddock_record_writer_flush   (void);

G_END_DECLS
