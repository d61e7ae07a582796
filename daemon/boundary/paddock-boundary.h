/* paddock-boundary.h — a session's safety boundary, layer by layer, with the kernel's evidence
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

typedef enum {
  PADDOCK_LAYER_NOT_REQUESTED,
  PADDOCK_LAYER_UNENFORCED,
  PADDOCK_LAYER_PARTIAL,
  PADDOCK_LAYER_ENFORCED,
} PaddockLayerStatus;

/* What the daemon knows of a session when it looks. */
typedef struct {
  const char *profile;          /* "host", "safe", "strict" */
  pid_t       session_pid;      /* paddock-sandbox outside (or the host agent), host pid */
  pid_t       init_pid;         /* leave 0: the session's pid 1, found by observe() */
  JsonObject *sandbox_report;   /* "boundary" of the sandbox's "started" event, or NULL */
  const char *workspace;
  const char *staging;          /* "overlay", "copy" or NULL */
  const char *stage_dir;        /* the stage folder, or NULL */
  const char *cgroup_path;      /* the session's cgroup, or NULL… */
  const char *cgroup_reason;    /* …and why there is none */
  const char *net_mode;         /* "host", "none", "proxy" */
  const char *const *given_env; /* the K=V entries the session gave the agent */
  const char *const *allowed_write; /* protected paths the user allowed, relative, or NULL */
  const char *const *exposed;   /* paths of the user's HOME shown read-only (relative), or NULL */
  const char *agent_home;       /* an agent's home, bound writable at PADDOCK_SANDBOX_HOME, or NULL */
  const char *const *agent_view; /* host paths of its install shown read-only at their own path, or NULL */
  guint64     pids_max;         /* the limits asked of the session's cgroup (0: none)… */
  guint64     memory_max;
  gboolean    resources_requested; /* …of a controller that was available… */
  const char *resources_reason; /* …and why one is not in place, or NULL */
} PaddockBoundaryInput;

/* The agent's HOME inside a sandboxed session: the daemon sets it, the
 * boundary looks for exposures under it, and paddock-sandbox makes it
 * (its HOME_PATH, which must stay the same). */
#define PADDOCK_SANDBOX_HOME "/home/agent"

#define PADDOCK_TYPE_BOUNDARY (paddock_boundary_get_type ())

G_DECLARE_FINAL_TYPE (PaddockBoundary, paddock_boundary, PADDOCK, BOUNDARY, GObject)

const char      *paddock_layer_status_to_string (PaddockLayerStatus          status);
const char *const *paddock_boundary_protected_paths (void);
char            *paddock_boundary_normalize_protected (const char *workspace,
                                                       const char *path);
PaddockBoundary *paddock_boundary_observe       (const PaddockBoundaryInput *input);
GVariant        *paddock_boundary_to_variant    (PaddockBoundary            *self);
char            *paddock_boundary_dup_unenforced (PaddockBoundary           *self);

G_END_DECLS
