/* paddock-session-record.h — a session's durable record (session.json): write and read
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "paddock-session-config.h"

G_BEGIN_DECLS

/* At most this many processes are taken from a record's "leftovers". */
#define PADDOCK_SESSION_RECORD_LEFTOVERS_MAX 32768

/* One process a record names: by pid and start time (clock ticks since
 * boot, /proc/PID/stat's field 22), so that a later daemon of the same
 * boot knows whether a pid is still that process. */
typedef struct
{
  gint64  pid;
  guint64 start_time;
} PaddockSessionRecordProcess;

/* What session.json holds (version 1). Every member is owned. Read back,
 * members missing from the file get the defaults a record of an older
 * daemon means by their absence (see paddock_session_record_load()). */
typedef struct
{
  char    *id;                 /* 12 characters */
  char    *name;
  char    *workspace;
  GStrv    command;            /* at least one word */
  char    *profile;
  char    *owner;
  char    *state;
  gint     exit_status;
  gint64   created;            /* µs since the epoch */
  gint64   pid;                /* 0: none, or reaped */
  guint64  pid_start_time;
  gboolean sandboxed;
  gint64   keeper_pid;         /* the host agent's keeper; 0: none running (not written) */
  guint64  keeper_start_time;
  gint64   init_pid;           /* the sandbox's pid 1 as the host sees it; 0: none */
  guint64  init_start_time;
  char    *boot_id;            /* the boot every pid and start time is of */
  char    *net;
  GStrv    allow_domains;      /* read back: NULL when absent or too long */
  char    *staging;            /* "none" for no stage */
  guint64  stage_limit;        /* bytes the creator bounded its stage to; 0: the default */
  char    *cgroup;             /* "" for none; read back NULL when absent */
  /* Why the record was once found damaged (salvaged), NULL if it never
   * was: every later record keeps it, so that the session stays shown as
   * damaged, with the reason, until it is destroyed (what the salvage
   * lost, a workspace say, does not come back by a rewrite). */
  char    *damaged;
  /* Read back only: the processes a daemon ending the session's leftovers
   * had pinned (paddock_session_record_to_json_with_leftovers()), the
   * malformed ones skipped. */
  GArray  *leftovers;          /* PaddockSessionRecordProcess */
  /* Read back only: the record as it was read. */
  JsonNode *root;
} PaddockSessionRecord;

void                  paddock_session_record_clear (PaddockSessionRecord *record);
void                  paddock_session_record_free  (PaddockSessionRecord *record);
/* RECORD (those members empty) gets copies of what a session was created
 * with: workspace, command, profile, owner, network, staging and its limit. */
void                  paddock_session_record_set_config (PaddockSessionRecord       *record,
                                                         const PaddockSessionConfig *config);
char                 *paddock_session_record_to_json (const PaddockSessionRecord *record);
char                 *paddock_session_record_to_json_with_leftovers (JsonNode                          *earlier,
                                                                     const PaddockSessionRecordProcess *named,
                                                                     guint                              n_named);
PaddockSessionRecord *paddock_session_record_load  (const char                 *path,
                                                    GError                    **error);
PaddockSessionRecord *paddock_session_record_new_from_node (JsonNode          *root,
                                                           const char        *path,
                                                           GError           **error);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (PaddockSessionRecord, paddock_session_record_clear)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PaddockSessionRecord, paddock_session_record_free)

G_END_DECLS
