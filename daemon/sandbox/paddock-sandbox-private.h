/* paddock-sandbox-private.h — what the files of paddock-sandbox share
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * paddock-sandbox is one executable split by concern, as bubblewrap is
 * (bubblewrap.c, bind-mount.c, network.c, utils.c):
 *
 *   paddock-sandbox-main.c        main, the options into a SandboxConfig, checks, clone,
 *                                 the helper outside (forward_or_wait), --probe-stage
 *   paddock-sandbox-plan.c        the mount plan, computed before clone (Plan, SetupOp)
 *   paddock-sandbox-mount.c       the plan's steps, run in pid 1 (run_op)
 *   paddock-sandbox-net.c         the session's own loopback and the proxy's socket
 *   paddock-sandbox-init.c        pid 1: entering the namespaces, the root, run_init
 *   paddock-sandbox-canaries.c    the canary probes, run while the agent execs
 *   paddock-sandbox-exec.c        capabilities, exec_in_path, the agent's exec
 *   paddock-sandbox-commands.c    pid 1's side of Exec: requests, spare supervisors, kills
 *   paddock-sandbox-request.c     a spawn request's a{sv} read into a SpawnRequest
 *   paddock-sandbox-supervisor.c  a command's supervisor, from its fork to its report
 *   paddock-sandbox-events.c      JSON lines out, die_*(), async-signal-safe output
 *   paddock-sandbox-spare.c       --spare: a sandbox made ahead of its session
 *
 * The protocol both ends speak is paddock-sandbox-protocol.h; the prose
 * is docs/sandbox-protocol.md. State lives in the structs below and is
 * passed around, not kept at file level: the configuration and plan
 * (SandboxConfig, Plan), what pid 1 finds while it sets up (SandboxFound,
 * through SandboxConfig), pid 1's commands (Init) and a spare (Spare).
 *
 * Everything between clone()/fork() and exec uses only async-signal-safe
 * calls: the whole mount plan is computed before clone(). Pid 1 is
 * single-threaded (a clone of the single-threaded helper, which starts no
 * GLib thread), so GLib and malloc are safe there and in the supervisors
 * it forks; only the supervisor's child, between its clone and the
 * command's exec, is limited to async-signal-safe calls.
 */

#pragma once

#include <glib.h>
#include <signal.h>
#include <sys/types.h>

#include "paddock-landlock.h"
#include "paddock-path.h"
#include "paddock-sandbox-protocol.h"
#include "paddock-seccomp.h"

G_BEGIN_DECLS

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* The protocol's names, as the helper's own code spells them. */
enum {
  EXIT_USAGE = PADDOCK_SANDBOX_EXIT_USAGE,
  EXIT_WORKSPACE = PADDOCK_SANDBOX_EXIT_WORKSPACE,
  EXIT_SETUP = PADDOCK_SANDBOX_EXIT_SETUP,
  EXIT_NO_NAMESPACES = PADDOCK_SANDBOX_EXIT_NO_NAMESPACES,
  EXIT_CANNOT_EXEC = PADDOCK_SANDBOX_EXIT_CANNOT_EXEC,
  EXIT_NOT_FOUND = PADDOCK_SANDBOX_EXIT_NOT_FOUND,
};

#define HOME_PATH PADDOCK_SANDBOX_HOME_PATH   /* PADDOCK_SANDBOX_HOME in paddock-boundary.h */
#define DEFAULT_PATH PADDOCK_SANDBOX_DEFAULT_PATH
#define PATH_BUF 4096

#define MAX_REQUEST_BYTES PADDOCK_SANDBOX_MAX_REQUEST_BYTES
#define MAX_ARGS PADDOCK_SANDBOX_MAX_ARGS
#define MAX_ENV PADDOCK_SANDBOX_MAX_ENV
#define MAX_COMMANDS PADDOCK_SANDBOX_MAX_COMMANDS
#define MAX_RECV_FDS PADDOCK_SANDBOX_MAX_REQUEST_FDS
#define MAX_PROTECT PADDOCK_SANDBOX_MAX_PROTECT
#define MAX_TREE 4096                    /* processes signalled per walk */
#define SPARE_IDLE_MS 2                  /* pid 1 idle this long: fork the spare supervisor */
#define SPARE_BUSY_IDLE_MS 100           /* … while a supervisor that may come back free is busy */

/* ---- the plan and the configuration ---------------------------------------- */

/* What pid 1 found or made while it set up, for run_init(): the protected
 * paths it made read-only (their paths in the view) and those it could
 * not protect (a symlink out of the workspace), filled by run_op(); and
 * --net proxy's listening socket, made inside the namespace, until it goes
 * to the daemon. */
typedef struct {
  const char *protected_mounted[MAX_PROTECT];
  guint n_protected_mounted;
  const char *protected_skipped[MAX_PROTECT];
  guint n_protected_skipped;
  int proxy_listen_fd;           /* -1: none */
} SandboxFound;

typedef enum {
  OP_MKDIR,        /* dest */
  OP_CREATE_FILE,  /* dest: an empty file to bind a file onto */
  OP_SYMLINK,      /* source = link target, dest = link */
  OP_BIND_RO,      /* source -> dest, read-only, nosuid, nodev */
  OP_BIND_DEV,     /* source -> dest, read-only flags of the source kept, dev allowed */
  OP_BIND_RW,      /* source -> dest, read-write, nosuid, nodev */
  OP_TMPFS,        /* dest, data = mount options */
  OP_PROC,         /* dest */
  OP_DEVPTS,       /* dest */
  OP_REMOUNT_RO,   /* dest: an existing mount made read-only */
  OP_OVERLAY,      /* dest, data = overlay mount options (the staging overlay) */
  OP_BIND_ONLY,    /* source -> dest, the source's flags; an OP_SETATTR_TREE above sets the rest */
  OP_SETATTR_TREE, /* dest and every mount below it get attr_set added (mount_setattr) */
  OP_PIN,          /* dest: a folder of the workspace bound onto itself, so it cannot be renamed; absent: skipped */
  OP_PROTECT,      /* dest: a protected path bound onto itself read-only, data = its path in the view; absent: skipped */
} SetupOpType;

typedef struct {
  SetupOpType type;
  gboolean optional;    /* a missing source is fine (e.g. /proc/irq) */
  const char *source;
  const char *dest;
  const char *data;
  dev_t expect_dev;     /* OP_BIND_RW: the folder the helper resolved, */
  ino_t expect_ino;     /* checked after binding (0, 0: unchecked) */
  guint64 attr_set;     /* OP_SETATTR_TREE: MOUNT_ATTR_* to add */
} SetupOp;

typedef struct {
  gboolean host_profile;
  gboolean die_with_parent;
  int control_fd;
  int pty_fd;
  const char *workspace;         /* canonical absolute path */
  char *const *argv;
  char *const *envp;
  const char *path_env;          /* PATH used to find argv[0] */
  char uid_map[64];
  char gid_map[64];
  const SetupOp *ops;
  guint n_ops;
  int ready_fd;                  /* pid 1 -> helper: setup done (write end) */
  int alive_fd;                  /* helper -> pid 1: a byte once it let go of its parent,
                                  * EOF when the helper is gone (read end) */
  const char *probe_hidden;      /* a host path the view must not show */
  const char *probe_abstract;    /* a host abstract socket the agent must not reach */
  pid_t probe_pid;               /* a host pid the agent must not signal */
  guint16 probe_port;            /* a host loopback port the agent must not reach (net none) */
  gboolean own_network;          /* --net none or proxy: a network namespace with loopback only */
  guint16 proxy_port;            /* --net proxy: pid 1 listens on 127.0.0.1:PORT inside for the daemon */
  int listen_fds[16];            /* --listen-fd: the agent's fds 3… (socket activation) */
  guint n_listen_fds;
  const struct sock_fprog *seccomp;        /* built before clone; NULL: none */
  const PaddockLandlockPlan *landlock;     /* planned before clone; NULL: none */
  gboolean protect_requested;    /* --protect named at least one path */
  char *const *exposed;          /* --expose paths (relative to HOME), or NULL */
  gboolean have_mount_setattr;   /* as the plan found it (Plan's): run_op() follows the plan */
  SandboxFound *found;           /* pid 1 fills it while it sets up; never NULL */
} SandboxConfig;

typedef struct {
  GArray *ops;           /* SetupOp */
  GStringChunk *strings;
  GHashTable *made;      /* dest paths already created */
  /* mount_setattr(2) (Linux 5.12) works here: found by plan_init(), before
   * the plan is made, and followed by run_op() between clone and exec (a
   * plain read). With it, flags are added to a bind without restating
   * (statfs) the ones the kernel locked, and to a whole tree of binds in
   * one call. */
  gboolean have_mount_setattr;
} Plan;

typedef enum {
  STAGE_NONE,      /* the real workspace, read-write (host-like, for tests) */
  STAGE_OVERLAY,
  STAGE_COPY,
} StageKind;

/* A sandbox made ahead (--spare): what pid 1 of it fixed before its
 * session was known. Its system part of the view is mounted; the rest of
 * the plan is added once the session's options arrive. */
typedef struct {
  SandboxConfig cfg;
  Plan plan;
  PaddockSeccompProgram seccomp;   /* read when it was made; empty: none */
  int base_fd;                     /* the sandbox's base root, while the host's is our root */
  char *etc_fingerprint;           /* /etc as it was bound ahead; NULL: it was not */
  SandboxFound found;              /* what its pid 1 made ahead (the proxy's socket) */
} Spare;

/* ---- output ------------------------------------------------------------------ */

/* An event's JSON line as string literals: its start, naming the event,
 * and the key of each member after it (paddock-sandbox-protocol.h's names). */
#define JSON_EVENT(name) "{\"" PADDOCK_SANDBOX_EVENT_KEY_EVENT "\":\"" name "\""
#define JSON_KEY(key) ",\"" key "\":"

typedef struct {
  char buf[8192];
  size_t len;
} LineBuf;

/* ---- commands ---------------------------------------------------------------- */

typedef enum {
  SUP_SPAWNED = 1,  /* pid: the command exec'd */
  SUP_FAILED,       /* err, stage: it did not */
  SUP_EXITED,       /* status: the command's wait status */
} SupMsgType;

typedef enum {
  STAGE_SETUP,      /* supervisor or child setup (fork, subreaper, dup2) */
  STAGE_TTY,        /* setsid/TIOCSCTTY for "tty":true */
  STAGE_CWD,        /* chdir to the requested folder */
  STAGE_EXEC,       /* execve */
} FailStage;

typedef struct {
  int type;
  int pid;
  int status;
  int err;
  int stage;
  int idle;         /* SUP_EXITED: the supervisor is free for another command */
} SupMsg;

typedef struct {
  guint32 id;
  char **argv;
  char **envp;
  char *cwd;
  const char *path_env;   /* points into envp, or DEFAULT_PATH */
  gboolean tty;
  gboolean own_pty;       /* "tty":true without fds: we make the terminal */
  gboolean direct;        /* "direct":true: events go on EVENTS_FD, not the control socket */
  int fds[3];
  int events_fd;          /* the command's own event channel (the 4th fd), or -1 */
} SpawnRequest;

typedef struct {
  guint32 id;
  pid_t supervisor;   /* 0 once reaped (forget_reaped) */
  int chan;           /* pid 1's end of the supervisor's pair */
  int pty_master;     /* the terminal we made, until "spawned" takes it; or -1 */
  gboolean spawned;   /* "spawned" was sent */
  gboolean direct;    /* its supervisor reports to the daemon itself */
  gboolean idle;      /* its supervisor said it is free for another command */
} Command;

typedef struct {
  const SandboxConfig *cfg;
  int sfd;
  gboolean reading;   /* the control fd is a SEQPACKET socket, not at EOF */
  Command commands[MAX_COMMANDS];
  guint n_commands;
  /* A supervisor forked ahead of time, waiting on SPARE_CHAN for the next
   * spawn (see fork_spare); -1 when there is none. Wanted once a first
   * command ran: a session that never runs one never pays for it. */
  pid_t spare;
  int spare_chan;
  gboolean want_spare;
  char *request_buf;  /* MAX_REQUEST_BYTES: one request message, as received */
} Init;

/* ---- probes ------------------------------------------------------------------ */

enum { PROBE_WRITE_OUTSIDE, PROBE_HIDDEN_PATH, PROBE_ABSTRACT_SOCKET, PROBE_SIGNAL_OUTSIDE, PROBE_CONNECT_OUTSIDE,
       PROBE_PROTECTED_PATH, PROBE_LANDLOCK_FS, PROBE_LANDLOCK_NET, N_PROBES };

/* Which step of a probe its errno is from: the forbidden act itself, or a
 * step before it that failed, so that the act was never tried (an errno
 * from socket() must not pass for the connect's refusal). */
typedef enum {
  PROBE_STEP_ACT,
  PROBE_STEP_SOCKET_INET,   /* socket(AF_INET) */
  PROBE_STEP_SOCKET_UNIX,   /* socket(AF_UNIX) */
  PROBE_STEP_OPEN_FOLDER,   /* open(O_PATH) of a protected folder */
  PROBE_STEP_NAME_TOO_LONG, /* the abstract name does not fit sun_path */
} ProbeStep;

/* What the agent will meet, tried for real before it exists: a child with
 * the agent's confinement (the boundary is pid 1's, inherited; the
 * capabilities dropped as the agent drops them) attempts each forbidden
 * thing and reports the errno, one int per probe (-1: not run). */
typedef struct {
  pid_t pid;        /* the probing child, or -1 */
  int results_fd;   /* its results come here (read end), or -1 */
  const char *failed;  /* why there is no child: "pipe2()", "fork()"; or NULL */
  int failed_errno;
} Canaries;

/* What the probing child writes: each probe's errno (0: it got through,
 * -1: not run), the ProbeStep each is from, and the errno of its own
 * setup (dropping its capabilities), 0 when none failed. */
#define PROBE_REPORT_INTS (2 * N_PROBES + 1)

/* ---- functions shared between the files -------------------------------------- */

/* paddock-sandbox-main.c */
void explain_no_userns (int err);
void forward_or_wait (pid_t child);
int parse_fd (const char *name,
              const char *text);
int parse_pty_fd (const char *text);
gboolean parse_net (const char    *net_arg,
                    gint           proxy_port,
                    SandboxConfig *cfg);
int sandbox_main (int     argc,
                  char  **argv,
                  Spare  *spare);

/* paddock-sandbox-plan.c */
void plan_clear (Plan *plan);
void plan_init (Plan *plan);
char *overlay_options (const char *lower,
                       const char *stage_dir);
void plan_build_system (Plan *plan,
                        int   pty_fd);
void plan_build_etc (Plan *plan);
char *etc_fingerprint (void);
void plan_build_agent (Plan               *plan,
                       const char         *home_dir,
                       const char * const *view_ro);
void plan_build_session (Plan               *plan,
                         gboolean            with_etc,
                         const char         *workspace,
                         StageKind           stage_kind,
                         const char         *stage_dir,
                         const char * const *protect,
                         const char         *real_home,
                         const char * const *expose);
gboolean is_plain_relative_path (const char *path);
gboolean workspace_allowed (const char *ws);

/* paddock-sandbox-mount.c */
void write_file (const char *path,
                 const char *text);
void run_op (const SandboxConfig *cfg,
             const SetupOp       *op);

/* paddock-sandbox-net.c */
void net_bring_up_loopback (void);
void net_listen_for_proxy (const SandboxConfig *cfg);

/* paddock-sandbox-init.c */
void forwarded_signals (sigset_t *set);
G_NORETURN void run_init (const SandboxConfig *cfg);
void sandbox_child_enter (const SandboxConfig *cfg);
G_NORETURN void sandbox_child_finish (const SandboxConfig *cfg);
G_NORETURN void sandbox_child (const SandboxConfig *cfg);

/* paddock-sandbox-canaries.c */
Canaries start_canaries (const SandboxConfig *cfg,
                         int                  close_in_child);
void finish_canaries (Canaries *canaries,
                      int       results[N_PROBES],
                      int       steps[N_PROBES],
                      LineBuf  *error);
void add_probe (LineBuf    *line,
                gboolean   *first,
                const char *name,
                const char *what,
                const char *expected,
                int         result,
                int         step,
                int         expected_errno,
                int         other_expected_errno);

/* paddock-sandbox-exec.c */
int drop_all_capabilities (const char **what);
int exec_in_path (char *const *argv,
                  char *const *envp,
                  const char  *path_env);
G_NORETURN void exec_agent (const SandboxConfig *cfg);

/* paddock-sandbox-commands.c */
void fork_spare (Init *init);
int spare_wait_ms (const Init *init);
void drop_spare (Init *init);
void handle_request (Init  *init,
                     short  revents);
gboolean handle_supervisor (Init    *init,
                            Command *command);
void command_clear (Command *command);
void forget_reaped (Init  *init,
                    pid_t  pid);

/* paddock-sandbox-request.c */
void spawn_request_clear (SpawnRequest *req);
gboolean parse_spawn_request (const char    *workspace,
                              GVariant      *request,
                              GArray        *fds,
                              SpawnRequest  *req,
                              int           *err,
                              const char   **why);
ssize_t recv_request (int     fd,
                      int     flags,
                      char   *buf,
                      GArray *fds);
GVariant *request_from_buf (const char *buf,
                            gsize       len);

/* paddock-sandbox-supervisor.c */
guint list_children (const char *path,
                     pid_t      *out,
                     guint       max);
G_NORETURN void run_spare_supervisor (const SandboxConfig *cfg,
                                      int                  chan);
G_NORETURN void run_command_supervisor (const SandboxConfig *cfg,
                                        const SpawnRequest  *req,
                                        int                  chan);
const char *stage_text (int stage);

/* paddock-sandbox-events.c */
G_NORETURN void die_errno (int         code,
                           const char *what,
                           const char *path,
                           int         err);
G_NORETURN void die_msg (int         code,
                         const char *what,
                         const char *path);
void line_add (LineBuf    *line,
               const char *s);
void line_add_json (LineBuf    *line,
                    const char *s);
void line_add_int (LineBuf *line,
                   long     v);
void send_event (int            fd,
                 const LineBuf *line);
ssize_t send_with_fds (int         fd,
                       const void *data,
                       gsize       len,
                       const int  *pass_fds,
                       guint       n_fds);
void send_event_with_fd (int            fd,
                         const LineBuf *line,
                         int            pass_fd);
int status_to_code (int status);
void send_text (int         fd,
                const char *text,
                size_t      len);
void append_json_string (GString    *out,
                         const char *s);
void line_add_errno (LineBuf *line,
                     int      e);

/* paddock-sandbox-spare.c */
int spare_main (int    argc,
                char **argv);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Plan, plan_clear)
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SpawnRequest, spawn_request_clear)

G_END_DECLS
