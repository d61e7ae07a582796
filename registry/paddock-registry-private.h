/* paddock-registry-private.h — what the registry's files share: the instance and its store
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-registry.h"

G_BEGIN_DECLS

#define SESSION_OWNER_PREFIX "session:"
/* Owners are D-Bus unique names (at most 255 bytes by the spec) or
 * "session:<id>"; bound them so one client cannot bloat the state file. */
#define MAX_OWNER_LEN        255
#define MAX_SESSION_LEN      128

struct _PaddockRegistry
{
  GObject     parent_instance;

  /* PaddockLease, sorted by port: the GListModel order. */
  GPtrArray  *leases;
  /* owner → number of leases (GUINT_TO_POINTER), for O(1) quota checks. */
  GHashTable *owner_counts;

  char       *state_file;
  /* The message bus the client owners' unique names belong to: a new bus
   * (a new login) hands out ":1.N" again, to other programs. */
  char       *bus_id;
  /* Changes since the last snapshot, one JSON line each (see _paddock_registry_journal_write):
   * a change costs an append and an fdatasync, not a rewrite of every lease. */
  char       *journal_file;
  int         journal_fd;
  guint       journal_entries;
  /* A write to the journal failed and could not be undone: the journal may
   * end in a torn line, or miss changes the model has. The next write
   * rebuilds the snapshot instead of appending. */
  gboolean    journal_dirty;

  guint       max_leases;
  guint       max_per_owner;
  guint16     first_port;
  guint16     last_port;
  /* Where the next pool scan starts: just after the last port handed out,
   * so a port that was just released is not handed straight to someone
   * else while its previous user may still try to reach it. */
  guint16     cursor;
};

/* One lease as the snapshot or a journal line has it (paddock-registry-store.c). */
typedef struct
{
  char    *name;
  char    *owner;
  char    *session;
  gint64   created;
  guint64  socket_inode;
  guint16  port;
} PaddockLeaseRecord;

void        _paddock_lease_record_free            (PaddockLeaseRecord *record);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PaddockLeaseRecord, _paddock_lease_record_free)

gboolean    _paddock_registry_valid_owner_string  (const char         *str,
                                                   gsize               max_len);

/* The durable state: a snapshot plus a journal of changes (paddock-registry-store.c). */
gboolean    _paddock_registry_compact             (PaddockRegistry    *self,
                                                   GError            **error);
gboolean    _paddock_registry_journal_write       (PaddockRegistry    *self,
                                                   const char         *lines,
                                                   guint               n_lines,
                                                   GError            **error);
void        _paddock_registry_journal_add_put     (GString            *lines,
                                                   PaddockLease       *lease);
void        _paddock_registry_journal_add_remove  (GString            *lines,
                                                   guint16             port);
gboolean    _paddock_registry_journal_put         (PaddockRegistry    *self,
                                                   PaddockLease       *lease,
                                                   GError            **error);
gboolean    _paddock_registry_journal_remove      (PaddockRegistry    *self,
                                                   guint16             port,
                                                   GError            **error);
GPtrArray  *_paddock_registry_parse_state         (const char         *path,
                                                   const char         *contents,
                                                   gsize               length,
                                                   char              **out_bus_id,
                                                   GError            **error);
gboolean    _paddock_registry_replay_journal      (const char         *journal_file,
                                                   GPtrArray          *records,
                                                   GError            **error);

G_END_DECLS
