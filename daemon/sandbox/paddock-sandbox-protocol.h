/* paddock-sandbox-protocol.h — the sandbox helper's control protocol
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The one source of truth for what paddockd and paddock-sandbox say to
 * each other, included by the helper (daemon/sandbox/) and by the daemon's
 * side (paddock-session-impl.c, paddock-session-ports.c,
 * paddock-spare-sandbox.c). The prose — who sends what when, the ordering
 * and trust rules of direct channels, the spare's life — is in
 * docs/sandbox-protocol.md; this header names what both ends must spell
 * alike. Plain C (no GLib): usable by the helper's async-signal-safe parts.
 *
 * Three ways in:
 *  - the command line (options, fd numbers the daemon placed: FD_*),
 *  - requests on the control socket: a GVariant a{sv} in normal form per
 *    SOCK_SEQPACKET message, fds attached (OP_*, KEY_*, REQUEST_FD_*),
 *  - for a sandbox made ahead (--spare): one SPARE_SESSION_TAG message
 *    with a sealed memfd of the session's options (paddock-spare-options.h).
 * One way out: events, one JSON object per message, one line each
 * (EVENT_*, EVENT_KEY_*), fds attached to a few (see docs).
 */

#pragma once

/* ---- exit codes of the helper (besides the agent's own status) ---------- */

enum {
  PADDOCK_SANDBOX_EXIT_USAGE = 64,          /* unknown option, empty command, bad value */
  PADDOCK_SANDBOX_EXIT_WORKSPACE = 66,      /* missing, not a folder, or overlaps the system */
  PADDOCK_SANDBOX_EXIT_SETUP = 71,          /* the sandbox could not be set up (stderr says which) */
  PADDOCK_SANDBOX_EXIT_NO_NAMESPACES = 125, /* user namespaces unavailable: nothing is run */
  PADDOCK_SANDBOX_EXIT_CANNOT_EXEC = 126,   /* CMD found but not executable */
  PADDOCK_SANDBOX_EXIT_NOT_FOUND = 127,     /* CMD not found */
};

/* ---- the view --------------------------------------------------------- */

/* The agent's HOME inside (PADDOCK_SANDBOX_HOME in paddock-boundary.h). */
#define PADDOCK_SANDBOX_HOME_PATH "/home/agent"
/* A command's PATH when its environment has none. */
#define PADDOCK_SANDBOX_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/* ---- fds as the daemon places them for the helper's exec --------------- */

/* The daemon's child that execs the helper (sandbox_child_main in
 * paddock-session-impl.c, spare_child_main in paddock-spare-sandbox.c) puts
 * the PTY slave at 0-2 and at FD_PTY, the control socket at FD_CONTROL,
 * the session's leased sockets from FD_FIRST_LISTEN on, then the sealed
 * seccomp program, then the sealed options; nothing else. The helper itself takes whatever numbers
 * its options name: these are the daemon's convention, named once. */
#define PADDOCK_SANDBOX_FD_PTY           3
#define PADDOCK_SANDBOX_FD_CONTROL       4
#define PADDOCK_SANDBOX_FD_FIRST_LISTEN  5

/* The fd of leased socket I (--listen-fd). */
static inline int
paddock_sandbox_fd_listen (unsigned int i)
{
  return PADDOCK_SANDBOX_FD_FIRST_LISTEN + (int) i;
}

/* The seccomp program's fd, after N_LISTEN leased sockets (--seccomp-fd). */
static inline int
paddock_sandbox_fd_seccomp (unsigned int n_listen)
{
  return PADDOCK_SANDBOX_FD_FIRST_LISTEN + (int) n_listen;
}

/* The helper's options, a sealed memfd of NUL-terminated arguments, in the
 * slot after the seccomp program's (used or not): the daemon execs the
 * helper as `paddock-sandbox --options-fd N` and nothing else, because a
 * command line is every local user's to read (/proc/PID/cmdline) and the
 * options hold the agent's environment. */
#define PADDOCK_SANDBOX_OPTIONS_FD_ARG "--options-fd"

static inline int
paddock_sandbox_fd_options (unsigned int n_listen)
{
  return paddock_sandbox_fd_seccomp (n_listen) + 1;
}

/* Inside: the agent gets its leased sockets at 3, 4… (socket activation:
 * LISTEN_FDS, LISTEN_PID = PADDOCK_SANDBOX_AGENT_PID). */
#define PADDOCK_SANDBOX_AGENT_FIRST_LISTEN_FD 3
#define PADDOCK_SANDBOX_MAX_LISTEN_FDS        16
/* The agent's pid in the sandbox's PID namespace. */
#define PADDOCK_SANDBOX_AGENT_PID             2

/* ---- requests (daemon -> pid 1), a{sv} ---------------------------------- */

#define PADDOCK_SANDBOX_MAX_REQUEST_BYTES (128 * 1024)  /* one serialized a{sv} */
#define PADDOCK_SANDBOX_MAX_REQUEST_FDS   8             /* fds with one message */
#define PADDOCK_SANDBOX_MAX_ARGS          4096          /* argv entries of one command */
#define PADDOCK_SANDBOX_MAX_ENV           4096          /* env entries of one command */
#define PADDOCK_SANDBOX_MAX_COMMANDS      64            /* running commands per session */
#define PADDOCK_SANDBOX_MAX_PROTECT       16            /* --protect, and --expose, paths */

#define PADDOCK_SANDBOX_KEY_OP      "op"       /* s: one of OP_* */
#define PADDOCK_SANDBOX_KEY_ID      "id"       /* u: the daemon's command (or socket) id */
#define PADDOCK_SANDBOX_KEY_ARGV    "argv"     /* aay: spawn, 1 to MAX_ARGS bytestrings */
#define PADDOCK_SANDBOX_KEY_CWD     "cwd"      /* ay: spawn, absolute; default the workspace */
#define PADDOCK_SANDBOX_KEY_ENV     "env"      /* aay: spawn, K=V, the whole environment */
#define PADDOCK_SANDBOX_KEY_TTY     "tty"      /* b: spawn, fd 0 the controlling terminal */
#define PADDOCK_SANDBOX_KEY_DIRECT  "direct"   /* b: spawn, events on its own channel */
#define PADDOCK_SANDBOX_KEY_SIGNAL  "signal"   /* i: kill, 1 to 64 */
#define PADDOCK_SANDBOX_KEY_FAMILY  "family"   /* s: socket, FAMILY_*; default inet */

#define PADDOCK_SANDBOX_OP_SPAWN   "spawn"
#define PADDOCK_SANDBOX_OP_KILL    "kill"
#define PADDOCK_SANDBOX_OP_SOCKET  "socket"
#define PADDOCK_SANDBOX_OP_PROXY   "proxy"    /* the proxy's socket again (a new daemon) */

#define PADDOCK_SANDBOX_FAMILY_INET   "inet"
#define PADDOCK_SANDBOX_FAMILY_INET6  "inet6"

/* The fds attached to a spawn, by position: stdin, stdout, stderr (may be
 * one fd thrice), and a direct spawn's event channel; a tty spawn with no
 * fd at all has pid 1 make the terminal. */
enum {
  PADDOCK_SANDBOX_REQUEST_FD_STDIN = 0,
  PADDOCK_SANDBOX_REQUEST_FD_STDOUT = 1,
  PADDOCK_SANDBOX_REQUEST_FD_STDERR = 2,
  PADDOCK_SANDBOX_REQUEST_FD_EVENTS = 3,
  PADDOCK_SANDBOX_SPAWN_N_FDS = 3,          /* a spawn's fds */
  PADDOCK_SANDBOX_DIRECT_SPAWN_N_FDS = 4,   /* a direct spawn's */
};

/* ---- events (pid 1 or a supervisor -> daemon), JSON lines --------------- */

#define PADDOCK_SANDBOX_EVENT_KEY_EVENT    "event"
#define PADDOCK_SANDBOX_EVENT_KEY_PID      "pid"
#define PADDOCK_SANDBOX_EVENT_KEY_STATUS   "status"    /* the shell's: code, or 128+N */
#define PADDOCK_SANDBOX_EVENT_KEY_SIGNAL   "signal"    /* N, when killed by a signal */
#define PADDOCK_SANDBOX_EVENT_KEY_ID       "id"
#define PADDOCK_SANDBOX_EVENT_KEY_ERRNO    "errno"
#define PADDOCK_SANDBOX_EVENT_KEY_MESSAGE  "message"
#define PADDOCK_SANDBOX_EVENT_KEY_PORT     "port"
#define PADDOCK_SANDBOX_EVENT_KEY_BOUNDARY "boundary"  /* started: the layers and probes */

#define PADDOCK_SANDBOX_EVENT_STARTED         "started"          /* pid[, boundary] */
#define PADDOCK_SANDBOX_EVENT_EXITED          "exited"           /* pid, status[, signal] */
#define PADDOCK_SANDBOX_EVENT_PROXY           "proxy"            /* port + the listening socket */
#define PADDOCK_SANDBOX_EVENT_SPAWNED         "spawned"          /* id, pid[+ the PTY master] */
#define PADDOCK_SANDBOX_EVENT_SPAWN_FAILED    "spawn-failed"     /* id, errno, message */
#define PADDOCK_SANDBOX_EVENT_COMMAND_EXITED  "command-exited"   /* id, status[, signal] */
#define PADDOCK_SANDBOX_EVENT_SOCKET          "socket"           /* id + the socket */
#define PADDOCK_SANDBOX_EVENT_SOCKET_FAILED   "socket-failed"    /* id, errno */
#define PADDOCK_SANDBOX_EVENT_SUPERVISOR_GONE "supervisor-gone"  /* id: a direct command's */

/* The status command-exited gives a command whose supervisor died before
 * reporting it. */
#define PADDOCK_SANDBOX_STATUS_SUPERVISOR_GONE 255

/* ---- a sandbox made ahead (--spare) ------------------------------------- */

/* The data of the one message that gives a spare its session's options. */
#define PADDOCK_SANDBOX_SPARE_SESSION_TAG "session"
