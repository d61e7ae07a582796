/* paddock-registry-private.h — what the registry's files share: the instance and its store
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <sys/types.h>

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
  /* Where the journal's acknowledged lines end (what replay reads, a torn
   * last line left out), for a release appended while it is dirty; see
   * _paddock_registry_journal_write_release(). */
  off_t       journal_whole_end;
  /* The journal keeps blocks allocated beyond its end (fallocate,
   * FALLOC_FL_KEEP_SIZE) up to this offset, enough for a release of every
   * lease: on a full disk a release is appended without a new block. */
  off_t       journal_reserved_to;

  /* Group commit (paddock-registry-commit.c): leases taken but not yet
   * durable. They hold their ports and count against the quotas, but are
   * not listed (nor announced, nor answered) until the fdatasync that
   * covers them returns; those asked for while one runs are written and
   * synced together by the next. */
  GPtrArray  *pending;         /* PaddockPendingLeases, in the order asked */
  GString    *queued_lines;    /* their journal lines not yet handed to the writer */
  guint       queued_n;
  /* One writer thread for the registry's life (started at the first
   * batch): it writes and syncs writer_job, then sets writer_job->done. */
  GThread    *writer;
  GMutex      writer_lock;
  GCond       writer_cond;
  gboolean    writer_quit;
  struct _PaddockJournalJob *writer_job;  /* the batch in flight, or NULL */
  guint       writer_generation;
  guint       complete_id;     /* idle that answers the batches already settled */
  GMainContext *context;       /* where the answers go (the registry's owner's) */

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
gboolean    _paddock_registry_journal_write_release (PaddockRegistry  *self,
                                                   const char         *lines,
                                                   guint               n_lines,
                                                   GError            **error);
void        _paddock_registry_journal_reserve     (PaddockRegistry    *self);
/* Group commit (paddock-registry-commit.c). */
typedef enum
{
  PADDOCK_PENDING_QUEUED,   /* its lines wait for the next batch */
  PADDOCK_PENDING_WRITING,  /* its lines are being written and synced */
  PADDOCK_PENDING_DURABLE,  /* on disk; to be listed and answered */
  PADDOCK_PENDING_FAILED,   /* the write failed; to be undone and answered */
} PaddockPendingState;

typedef struct
{
  GTask              *task;      /* returns the GPtrArray of leases */
  GPtrArray          *leases;    /* PaddockLease, not listed yet */
  PaddockPendingState state;
  /* The owner left (release_owner) before the leases were durable: once
   * they are, they are released again instead of listed. */
  gboolean            abandoned;
  GError             *error;
} PaddockPendingLeases;

void        _paddock_registry_commit_init         (PaddockRegistry    *self);
void        _paddock_registry_commit_clear        (PaddockRegistry    *self);
void        _paddock_registry_commit_join         (PaddockRegistry    *self);
void        _paddock_registry_commit_queue        (PaddockRegistry    *self,
                                                   PaddockPendingLeases *entry);
gboolean    _paddock_registry_commit_port_taken   (PaddockRegistry    *self,
                                                   guint16             port);
guint       _paddock_registry_commit_count        (PaddockRegistry    *self,
                                                   const char         *owner);
guint       _paddock_registry_commit_abandon      (PaddockRegistry    *self,
                                                   const char         *owner);
void        _paddock_registry_commit_add_durable  (PaddockRegistry    *self,
                                                   JsonBuilder        *builder);
int         _paddock_registry_code_for_errno      (int                 saved_errno);
/* paddock-registry.c, for the commit's completion */
PaddockLease *_paddock_registry_take_unlisted      (PaddockRegistry    *self,
                                                   const char         *owner,
                                                   const char         *session,
                                                   const char         *name,
                                                   guint16             preferred_port,
                                                   GError            **error);
guint       _paddock_registry_list_lease          (PaddockRegistry    *self,
                                                   PaddockLease       *lease);
void        _paddock_registry_add_lease_members   (JsonBuilder        *builder,
                                                   PaddockLease       *lease);

GPtrArray  *_paddock_registry_parse_state         (const char         *path,
                                                   const char         *contents,
                                                   gsize               length,
                                                   char              **out_bus_id,
                                                   GError            **error);
gboolean    _paddock_registry_replay_journal      (const char         *journal_file,
                                                   GPtrArray          *records,
                                                   off_t              *out_whole_end,
                                                   GError            **error);

G_END_DECLS
