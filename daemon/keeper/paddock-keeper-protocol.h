/* paddock-keeper-protocol.h — what paddockd and paddock-keeper say to each other
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * paddock-keeper runs one program of a host-profile session (the agent, or
 * a command of Exec/Run) as a child subreaper: every orphan of the
 * program's tree (a setsid()ed server, a double fork) is re-parented to the
 * keeper, not to init, so the tree stays the keeper's descendants for as
 * long as any of it runs, and the keeper can end all of it.
 *
 * Started as
 *   paddock-keeper --control-fd N [--pass-fds K] [--cwd DIR] [--tty]
 *                  [--listen-pid] [--end-with-daemon] [--hold-on-request] -- PROGRAM ARGV0 [ARG…]
 * with the program's stdio at 0-2, K descriptors for it at 3…3+K-1, the
 * control socket (SOCK_SEQPACKET) at N, nothing else, and the program's
 * environment as its own. --tty: fd 0 becomes the program's controlling
 * terminal; --listen-pid: LISTEN_PID is set to the program's pid
 * (systemd socket activation). The program leads a process session of its
 * own (setsid) and is exec'd from PROGRAM (an absolute path); it exits 126
 * if its setup (the terminal, DIR) fails, 127 if the exec does, as a
 * program started by a shell would.
 *
 * Each message is one fixed-size struct, one datagram. The keeper sends
 * STARTED once (or FAILED, then exits), EXITED once the program is
 * reaped. It exits once it has no child left (the program reported) — or
 * after a KILL, once the whole tree is gone. It keeps running with its tree
 * if the daemon goes (the socket's end-of-file): a later daemon ends what
 * is left of the session (see paddock-session-leftovers.c), and killing
 * the keeper would only hand its tree to init. That is also why it sets no
 * PR_SET_PDEATHSIG.
 *
 * --end-with-daemon (a command's keeper): at that end of file the keeper
 * ends its tree and exits instead; the command's caller hears from
 * paddockctl that it was lost with its daemon.
 *
 * An agent's keeper is also the session's holder, so that the session
 * outlives the daemon (re-adoption):
 *   --hold-fd M --hold-dir DIR
 * M (the next fd after the control socket) is the daemon's end of the
 * agent's terminal, the PTY master, which the keeper keeps open (CLOEXEC:
 * the program never sees it) so the terminal never hangs up while no
 * daemon holds it. DIR is the session's folder (0700): the keeper listens
 * on DIR/PADDOCK_KEEPER_SOCKET (SOCK_SEQPACKET, 0600). While no daemon is
 * connected (the control socket's end of file), a process of the same uid
 * (SO_PEERCRED) that connects there gets one ADOPTED event, with pid and
 * start_time, carrying two fds: a new control socket and the PTY master.
 * From then on it is the daemon, exactly as the first one was; an EXITED
 * the program had while nobody listened comes next. A program whose tree
 * ends while no daemon is there leaves its wait status in
 * DIR/PADDOCK_KEEPER_EXIT_FILE ("STATUS\n", decimal) for the next one.
 *
 * A sandboxed session's keeper runs paddock-sandbox (the helper) as its
 * program and holds one more fd for a later daemon:
 *   --hold-fd M --hold-dir DIR --hold-control-fd C
 * C (right after M) is the daemon's end of the helper's control socket
 * (docs/sandbox-protocol.md), kept open and never read (CLOEXEC: the
 * helper, and so the agent, never see it), so that the sandbox's pid 1
 * sees no end of file while no daemon is there, and its events wait in
 * the socket for the next one; ADOPTED then carries it as a third fd.
 * The helper dies with its parent, the keeper, not with the daemon. Such
 * a keeper ends its tree with the daemon (as --end-with-daemon), and has
 * no socket, until it is asked HOLD: then it binds DIR/PADDOCK_KEEPER_SOCKET
 * (DIR may not exist before: a sandbox made ahead is born before its
 * session's folder) and from then on outlives the daemon. A daemon gone
 * before the session's record named the keeper must not leave a sandbox
 * that nobody can find.
 *
 * --hold-on-request (with --hold-fd and --hold-dir: a host agent's keeper)
 * is the same without the helper's socket: the keeper ends its tree with
 * the daemon and has no socket until asked HOLD, so that an agent whose
 * daemon died before its record named the keeper is not left running
 * unknown to any later daemon.
 *
 * A keeper that holds (it listens: asked HOLD, or adopted) says HELD once
 * it does, and from then on keeps its program's end for the daemon it
 * told: after EXITED it stays (its tree empty or not) until that daemon
 * says RELEASE (the session's record of the end is durable) or KILL. Its
 * daemon gone first, the end counts as untold: written to the exit file
 * (tree empty) or told again to the next daemon that adopts it. So a
 * daemon that heard HELD before EXITED may publish that end before its
 * own record of it is on disk: a later daemon lists the same end.
 *
 * Only a peer in the keeper's own user and PID namespaces is handed the
 * session: never a process inside a sandbox (whose uid maps to ours).
 */

#pragma once

#include <stdint.h>

#define PADDOCK_KEEPER_NAME "paddock-keeper"
#define PADDOCK_KEEPER_SOCKET    "keeper.sock"
#define PADDOCK_KEEPER_EXIT_FILE "agent-exit"

typedef enum
{
  PADDOCK_KEEPER_STARTED = 1,  /* pid, start_time: the program's */
  PADDOCK_KEEPER_FAILED  = 2,  /* error: errno of the fork */
  PADDOCK_KEEPER_EXITED  = 3,  /* status: the program's wait status */
  PADDOCK_KEEPER_ADOPTED = 4,  /* pid, start_time: the program's; fds: control, PTY master
                                * [, the helper's control socket: --hold-control-fd] */
  PADDOCK_KEEPER_HELD    = 5,  /* it listens for a later daemon, and keeps the program's end until RELEASE */
} PaddockKeeperEventType;

typedef struct
{
  uint32_t type;        /* PaddockKeeperEventType */
  int32_t  pid;
  int32_t  status;
  int32_t  error;
  uint64_t start_time;  /* field 22 of /proc/PID/stat, read before the program can be reaped */
} PaddockKeeperEvent;

typedef enum
{
  PADDOCK_KEEPER_SIGNAL = 1,  /* signal: sent once to every process of the tree */
  PADDOCK_KEEPER_KILL   = 2,  /* SIGKILL to the tree until it is empty, then exit */
  PADDOCK_KEEPER_HOLD   = 3,  /* --hold-control-fd or --hold-on-request: outlive the daemon from now on */
  PADDOCK_KEEPER_RELEASE = 4, /* the daemon has the program's end durable: the keeper need not keep it */
} PaddockKeeperRequestType;

typedef struct
{
  uint32_t type;        /* PaddockKeeperRequestType */
  int32_t  signal;
} PaddockKeeperRequest;
