/* paddock-keeper-client.h — a host-profile program under its paddock-keeper
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

typedef struct _PaddockKeeperClient PaddockKeeperClient;

typedef enum
{
  PADDOCK_KEEPER_CLIENT_EXITED,  /* the program was reaped: wait_status is its own */
  PADDOCK_KEEPER_CLIENT_GONE,    /* the keeper was reaped: its tree is empty (or it was killed) */
  PADDOCK_KEEPER_CLIENT_KEPT,    /* the keeper holds now, and keeps the end it told before (EXITED) */
} PaddockKeeperClientEvent;

/* The wait status of a program whose end nobody saw: its adopted keeper
 * went without a word. Not a status waitpid() gives (bits above 16). */
#define PADDOCK_KEEPER_CLIENT_STATUS_UNKNOWN (-1)

/* EXITED comes once, before GONE, which comes once and last (a keeper
 * killed before it reported gives its own wait status for EXITED). The
 * client may be freed from GONE. */
typedef void (*PaddockKeeperClientFunc) (PaddockKeeperClient      *keeper,
                                         PaddockKeeperClientEvent  event,
                                         int                       wait_status,
                                         gpointer                  user_data);

/* What to run; all of it read only before paddock_keeper_client_spawn()
 * returns. */
typedef struct
{
  const char  *program;      /* absolute */
  char       **argv;
  char       **envp;
  const char  *cwd;
  int          stdio[3];
  gboolean     tty;          /* stdio[0] is a terminal, to be the program's controlling one */
  const int   *pass_fds;     /* at 3… in the program */
  guint        n_pass_fds;
  gboolean     listen_pid;   /* LISTEN_PID= the program's pid */
  int          cgroup_dir;   /* the keeper is born in it (-1: none) */
  int          cgroup_procs_fd;
  int          hold_fd;      /* with hold_dir: the agent's PTY master, held for a later daemon */
  gboolean     end_with_daemon;  /* a command's: its tree ends when the daemon goes */
  const char  *hold_dir;     /* the session's folder, or NULL: nothing held (paddock-keeper-protocol.h) */
  int          hold_control_fd;  /* with hold_dir: the daemon's end of paddock-sandbox's control
                                  * socket, held too (-1: a host session's keeper) */
} PaddockKeeperSpawn;

const char          *paddock_keeper_client_find           (void);
PaddockKeeperClient *paddock_keeper_client_spawn          (const PaddockKeeperSpawn *spawn,
                                                           PaddockKeeperClientFunc   func,
                                                           gpointer                  user_data,
                                                           GError                  **error);
PaddockKeeperClient *paddock_keeper_client_adopt          (const char               *hold_dir,
                                                           pid_t                     keeper_pid,
                                                           int                       keeper_pidfd,
                                                           int                      *out_pty_master,
                                                           int                      *out_sandbox_control,
                                                           PaddockKeeperClientFunc   func,
                                                           gpointer                  user_data,
                                                           GError                  **error);
gboolean             paddock_keeper_client_read_exit      (const char               *hold_dir,
                                                           int                      *out_wait_status);
pid_t                paddock_keeper_client_get_pid        (PaddockKeeperClient      *self);
guint64              paddock_keeper_client_get_start_time (PaddockKeeperClient      *self);
pid_t                paddock_keeper_client_get_keeper_pid (PaddockKeeperClient      *self);
gboolean             paddock_keeper_client_is_running     (PaddockKeeperClient      *self);
void                 paddock_keeper_client_signal         (PaddockKeeperClient      *self,
                                                           int                       signum);
gboolean             paddock_keeper_client_hold           (PaddockKeeperClient      *self);
gboolean             paddock_keeper_client_has_exited     (PaddockKeeperClient      *self);
gboolean             paddock_keeper_client_keeps_end      (PaddockKeeperClient      *self);
void                 paddock_keeper_client_release_end    (PaddockKeeperClient      *self);
void                 paddock_keeper_client_set_func       (PaddockKeeperClient      *self,
                                                           PaddockKeeperClientFunc   func,
                                                           gpointer                  user_data);
void                 paddock_keeper_client_end            (PaddockKeeperClient      *self);
void                 paddock_keeper_client_free           (PaddockKeeperClient      *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PaddockKeeperClient, paddock_keeper_client_free)

G_END_DECLS
