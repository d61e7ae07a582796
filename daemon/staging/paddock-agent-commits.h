/* paddock-agent-commits.h — the commits an agent made in its stage, offered as a branch
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-review.h"

G_BEGIN_DECLS

/* More new commits than this fail with PADDOCK_STAGING_ERROR_TOO_LARGE. */
#define PADDOCK_AGENT_COMMITS_MAX_COMMITS  1000
/* Objects read from the stage (commits, trees, blobs, tags) for one list. */
#define PADDOCK_AGENT_COMMITS_MAX_OBJECTS  200000
/* Their inflated bytes in all, and one object's. */
#define PADDOCK_AGENT_COMMITS_MAX_BYTES    (512 * 1024 * 1024)
#define PADDOCK_AGENT_COMMITS_MAX_OBJECT   (128 * 1024 * 1024)
/* Files listed per commit. */
#define PADDOCK_AGENT_COMMITS_MAX_FILES    20000

typedef struct
{
  char      *id;           /* 40 hex digits */
  char      *subject;      /* the message's first line, valid UTF-8 */
  char      *author;       /* "Name <email>", valid UTF-8 */
  gint64     author_time;  /* Unix seconds */
  guint      n_parents;
  GPtrArray *files;        /* paths (bytes) the commit changes against its first parent */
} PaddockAgentCommit;

#define PADDOCK_TYPE_AGENT_COMMITS (paddock_agent_commits_get_type ())

G_DECLARE_FINAL_TYPE (PaddockAgentCommits, paddock_agent_commits, PADDOCK, AGENT_COMMITS, GObject)

PaddockAgentCommits *paddock_agent_commits_new         (const char           *workspace,
                                                        const char           *stage_root,
                                                        PaddockStageKind      kind,
                                                        GCancellable         *cancellable,
                                                        GError              **error);
GPtrArray           *paddock_agent_commits_get_commits (PaddockAgentCommits  *self);
const char          *paddock_agent_commits_get_head    (PaddockAgentCommits  *self);
const char          *paddock_agent_commits_get_tip     (PaddockAgentCommits  *self);
GBytes              *paddock_agent_commits_get_diff    (PaddockAgentCommits  *self,
                                                        const char           *id,
                                                        GError              **error);
gboolean             paddock_agent_commits_branch_name_is_valid (const char  *branch);
gboolean             paddock_agent_commits_apply       (PaddockAgentCommits  *self,
                                                        const char           *branch,
                                                        const char           *ledger_file,
                                                        const char           *who,
                                                        guint                *out_n_objects,
                                                        GError              **error);

G_END_DECLS
