/* paddock-landlock.h — the sandbox's Landlock rules: planned before clone, applied after
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * paddock_landlock_prepare() runs in the helper before clone (GLib, malloc):
 * it probes the kernel's Landlock ABI and decides which rights to handle and
 * which to grant where. The paths are those of the sandbox's view (after
 * pivot_root), so they are opened only by paddock_landlock_apply(), in the
 * child after the final pivot_root and PR_SET_NO_NEW_PRIVS, with raw system
 * calls only (async-signal-safe). The plan says per sub-layer what the
 * kernel will enforce; it is true once apply has returned 0, not before.
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define PADDOCK_LANDLOCK_ERROR (paddock_landlock_error_quark ())

typedef enum {
  PADDOCK_LANDLOCK_ERROR_INVALID,     /* a path not absolute, too many rules */
} PaddockLandlockError;

typedef enum {
  PADDOCK_LANDLOCK_NOT_REQUESTED,     /* the caller asked for nothing here */
  PADDOCK_LANDLOCK_ENFORCED,          /* everything asked is enforced */
  PADDOCK_LANDLOCK_PARTIAL,           /* some of it: the reason says what is not */
  PADDOCK_LANDLOCK_UNENFORCED,        /* nothing (no Landlock, or ABI too old) */
} PaddockLandlockStatus;

typedef struct {
  /* Read and execute below these (typically "/": the whole view). */
  const char *const *read_paths;
  /* Everything that creates, changes or removes files below these
   * (workspace, /home/agent, /tmp, /dev/shm). */
  const char *const *write_paths;
  /* Devices that programs open for writing and ioctl: /dev/null, /dev/tty,
   * /dev/pts, … (write, truncate, ioctl on devices; read comes from
   * read_paths). */
  const char *const *device_paths;
  /* Paths in any list that may be missing in the view (skipped, not fatal). */
  const char *const *optional_paths;

  gboolean restrict_bind;             /* TCP bind only to bind_ports */
  const guint16 *bind_ports;          /* 0 = ephemeral ports (bind to port 0) */
  gsize n_bind_ports;
  /* Without restrict_bind: why (said in the evidence), or NULL. */
  const char *unrestricted_bind_reason;
  gboolean restrict_connect;          /* TCP connect only to connect_ports */
  const guint16 *connect_ports;
  gsize n_connect_ports;

  /* No abstract unix socket connections and no signals to processes
   * outside the sandbox's Landlock domain. */
  gboolean scope_signals_and_abstract_unix;
} PaddockLandlockRequest;

typedef struct {
  char *path;                         /* in the sandbox's view */
  guint64 access;                     /* as for a folder; masked for a file */
  gboolean optional;
} PaddockLandlockPathRule;

typedef struct {
  int abi;                            /* 0: no Landlock in this kernel */
  int abi_errno;                      /* why 0: ENOSYS (not built), EOPNOTSUPP (disabled) */

  guint64 handled_fs;                 /* the rights the ruleset handles */
  guint64 handled_net;
  guint64 scoped;

  PaddockLandlockPathRule *paths;
  gsize n_paths;
  guint64 *bind_ports;                /* as the kernel takes them (u64) */
  gsize n_bind_ports;
  guint64 *connect_ports;
  gsize n_connect_ports;

  PaddockLandlockStatus fs_status;
  PaddockLandlockStatus net_status;
  PaddockLandlockStatus scope_status;
  char *fs_evidence;                  /* one sentence each, for the boundary layer */
  char *net_evidence;
  char *scope_evidence;
} PaddockLandlockPlan;

GQuark      paddock_landlock_error_quark   (void);

/* The running kernel's Landlock ABI version, 0 if none (errno in *err). */
int         paddock_landlock_probe_abi     (int                          *err);

gboolean    paddock_landlock_prepare       (const PaddockLandlockRequest *request,
                                            PaddockLandlockPlan          *plan,
                                            GError                      **error);
void        paddock_landlock_plan_clear    (PaddockLandlockPlan          *plan);

/* Whether the plan limits which TCP ports may be bound (the bind canary
 * has something to try). */
gboolean    paddock_landlock_plan_restricts_bind (const PaddockLandlockPlan *plan);

/* Async-signal-safe. Builds the ruleset from PLAN in the caller's view and
 * restricts the calling thread (and all it forks or execs later). Returns 0
 * (also when the plan has nothing to enforce) or an errno value, with the
 * path that failed in *failed_path when a path did. PR_SET_NO_NEW_PRIVS must
 * be set (or CAP_SYS_ADMIN held). */
int         paddock_landlock_apply         (const PaddockLandlockPlan    *plan,
                                            const char                  **failed_path);

const char *paddock_landlock_status_to_string (PaddockLandlockStatus       status);

/* The rights of PLAN, as names ("execute read_file … ioctl_dev"). */
char       *paddock_landlock_describe      (const PaddockLandlockPlan    *plan);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (PaddockLandlockPlan, paddock_landlock_plan_clear)

G_END_DECLS
