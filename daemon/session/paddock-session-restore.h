/* paddock-session-restore.h — a session's record read back: what the restored session is built from, and what is left running of it
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>
#include <sys/types.h>

#include "paddock-cgroup.h"
#include "paddock-sandbox-pidns.h"
#include "paddock-session-config.h"
#include "paddock-session-leftovers.h"
#include "paddock-stage.h"
#include "paddock-domain-rules.h"
#include "paddock-session-members.h"
#include "paddock-session-record.h"

G_BEGIN_DECLS

/* A record turned into what a restored session is made of. Read in two
 * steps, with the session's attempt to adopt its keeper in between:
 * paddock_session_restore_read() (the config, the exit status, the
 * session's cgroup and its keeper, pinned, if they are still there), then,
 * if it was not adopted, paddock_session_restore_pin_leftovers() (every
 * process of it left in this boot, pinned by a pidfd). The session takes
 * what it needs from here (stealing what it keeps); the rest is cleared
 * with it. Borrows from the record it was read from: it lives no longer. */
typedef struct
{
  PaddockSessionConfig  config;       /* what the session is created with */
  char                 *session_dir;
  int                   exit_status;
  gboolean              same_boot;    /* recorded in the boot the daemon runs in */
  /* The state the session is listed with now; and, while something of it
   * still runs (pinned or cgroup), the state it goes to once that is gone
   * (NULL otherwise). Both borrowed from the record or static. */
  const char           *state;
  const char           *final_state;
  /* The agent (host) or the helper (sandbox) as recorded, once found
   * still there (pid 0 otherwise), and what a listing of its processes
   * found out; reaped TRUE (no daemon saw it end: it is not waited for)
   * but while the processes of one found still there are listed as a
   * running one's; the host agent's keeper, still running (0 and -1:
   * none). */
  PaddockSessionTree    tree;
  /* The session's cgroup, left behind (only ever one of ours); or NULL. */
  PaddockCgroup        *cgroup;
  /* What is left running of it (PaddockLeftover). */
  GArray               *pinned;
} PaddockSessionRestore;

void     paddock_session_restore_read           (PaddockSessionRestore      *self,
                                                 const PaddockSessionRecord *record,
                                                 const char                 *record_path,
                                                 const char                 *helper);
/* Whether its keeper holds it for this daemon to adopt. */
gboolean paddock_session_restore_may_adopt      (const PaddockSessionRestore *self,
                                                 const PaddockSessionRecord  *record);
void     paddock_session_restore_pin_leftovers  (PaddockSessionRestore      *self,
                                                 const PaddockSessionRecord *record);
GVariant *paddock_session_restore_load_boundary (const PaddockSessionRestore *self,
                                                 const char                  *id);
/* What an adopted session's proxy judges by, its recorded policy parsed
 * again; NULL (said why) where it no longer parses. */
PaddockDomainRules *paddock_session_restore_parse_policy (const PaddockSessionRestore *self,
                                                          const char                  *id);
/* An apply an earlier daemon was killed in the middle of, finished or
 * rolled back (said why not). */
void     paddock_session_restore_recover_stage  (PaddockStage               *stage,
                                                 const char                 *id);
/* What is left running of a session not adopted, stolen from @self to be
 * ended; NULL where nothing of it runs. */
PaddockSessionLeftovers *paddock_session_restore_take_leftovers (PaddockSessionRestore      *self,
                                                                 const PaddockSessionRecord *record);
void     paddock_session_restore_clear          (PaddockSessionRestore      *self);

/* The boot this daemon runs in: a pid recorded in another boot means
 * nothing now. */
char    *paddock_session_restore_current_boot_id (void);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (PaddockSessionRestore, paddock_session_restore_clear)

G_END_DECLS
