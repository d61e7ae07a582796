/* paddock-net-journal.h — a session's numbered network records: a ring in memory, a bounded file on disk
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include "paddock-net-record.h"

G_BEGIN_DECLS

#define PADDOCK_NET_JOURNAL_DEFAULT_MAX_RECORDS    10000
#define PADDOCK_NET_JOURNAL_DEFAULT_MAX_FILE_BYTES (2 * 1024 * 1024)

#define PADDOCK_TYPE_NET_JOURNAL (paddock_net_journal_get_type ())

G_DECLARE_FINAL_TYPE (PaddockNetJournal, paddock_net_journal, PADDOCK, NET_JOURNAL, GObject)

PaddockNetJournal *paddock_net_journal_new          (const char         *path,
                                                     guint               max_records,
                                                     gsize               max_file_bytes);
guint64            paddock_net_journal_append       (PaddockNetJournal  *self,
                                                     PaddockNetRecord   *record);
GPtrArray         *paddock_net_journal_list         (PaddockNetJournal  *self,
                                                     guint64             after_seq,
                                                     guint               max,
                                                     guint64            *out_next_seq);
guint64            paddock_net_journal_get_last_seq (PaddockNetJournal  *self);
guint64            paddock_net_journal_get_durable_seq (PaddockNetJournal *self);
void               paddock_net_journal_flush        (PaddockNetJournal  *self);
void               paddock_net_journal_flush_all    (void);

G_END_DECLS
