/* paddock-session-config.h — what a session is created with: its workspace, command, profile, network, limits
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

#include "paddock-domain-rules.h"
#include "paddock-ipc-generated.h"

G_BEGIN_DECLS

/* Resource limits of a sandboxed session's cgroup (CreateSession's
 * "pids-max" and "memory-max"): the bounds a caller may ask for, and the
 * default pids.max. memory.max defaults to half the machine's memory. */
#define PADDOCK_SESSION_PIDS_MAX_DEFAULT 4096
#define PADDOCK_SESSION_PIDS_MAX_MIN     16
#define PADDOCK_SESSION_PIDS_MAX_MAX     4194304
#define PADDOCK_SESSION_MEMORY_MAX_MIN   ((guint64) 64 << 20)
#define PADDOCK_SESSION_MEMORY_MAX_MAX   ((guint64) 16 << 40)

typedef struct
{
  char        *workspace;
  GStrv        command;
  char        *name;
  char        *profile;
  GHashTable  *env;      /* extra variables, name → value */
  guint16      columns;
  guint16      rows;
  char        *owner;    /* the client that created it */
  char        *home;     /* the session's own HOME folder, under the state dir */
  char        *helper;   /* paddock-sandbox, or NULL when none was found */
  char        *cgroup_parent;  /* where session cgroups go, or NULL… */
  char        *cgroup_reason;  /* …and then why there is none */
  char        *staging;        /* "overlay" or "copy"; NULL for the host profile */
  char        *net_mode;       /* "host", "none" or "proxy" */
  GStrv        allow_domains;  /* the proxy's allowlist (NULL: empty) */
  PaddockDomainRules *net_rules; /* net_mode and allow_domains parsed, once: at create or by
                                  * SetNetworkPolicy; what the proxy judges by. NULL only in a
                                  * session restored from its record, which never runs again */
  GPtrArray   *leases;         /* PaddockLease*: ports leased for it at create (NULL: none) */
  GStrv        allow_write;    /* protected paths the user allowed (relative to the workspace), or NULL */
  GStrv        expose;         /* paths of the user's HOME shown read-only in the session's (relative), or NULL */
  guint64      pids_max;       /* the cgroup's pids.max for a sandboxed session; 0: the default */
  guint64      memory_max;     /* its memory.max in bytes; 0: the default */
  guint64      stage_limit;    /* bytes its stage may hold; 0: the default */
  char        *agent;          /* the agent preset it runs in (CreateSession's "agent"), or NULL */
  char        *agent_home;     /* that agent's home (STATE/agents/NAME/home), bound writable at
                                * /home/agent in a sandboxed session, or NULL */
  GStrv        agent_view;     /* host paths its install needs, shown read-only at their own path, or NULL */
} PaddockSessionConfig;

/* DEST (zeroed) gets a deep copy of SRC, as a new session keeps it: a
 * missing network mode is "host", a missing allowlist an empty one. */
void paddock_session_config_copy  (PaddockSessionConfig       *dest,
                                   const PaddockSessionConfig *src);
void paddock_session_config_clear (PaddockSessionConfig       *config);
/* SESSION's properties of what it was created with: name, workspace,
 * command, profile, agent ("" for none), staging ("none"), network. */
void paddock_session_config_publish (const PaddockSessionConfig *config,
                                     PaddockIpcSession1         *session);
/* A port leased while it runs (LeasePort): a PaddockLease, referenced. */
void paddock_session_config_add_lease   (PaddockSessionConfig *config,
                                         gpointer              lease);
/* SetNetworkPolicy's outcome: the mode, the allowlist and both parsed. */
void paddock_session_config_set_network (PaddockSessionConfig *config,
                                         const char           *mode,
                                         const char * const   *allow_domains,
                                         PaddockDomainRules   *rules);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (PaddockSessionConfig, paddock_session_config_clear)

G_END_DECLS
