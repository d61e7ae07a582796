/* paddock-sandbox-commands.c — pid 1's side of Exec: requests, supervisors, kills, sockets
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The daemon's requests as pid 1 handles them: a spawn handed to a
 * supervisor (a spare one when there is one), kills, sockets made in the
 * session's network namespace, and the supervisors' reports turned into
 * the daemon's events.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-sandbox-private.h"

static void
send_spawn_failed_to (int         fd,
                      guint32     id,
                      int         err,
                      const char *message)
{
  g_autoptr(GString) line = g_string_new (NULL);

  g_string_append_printf (line,
                          JSON_EVENT (PADDOCK_SANDBOX_EVENT_SPAWN_FAILED)
                          JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_ID) "%u"
                          JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_ERRNO) "%d"
                          JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_MESSAGE),
                          id, err);
  append_json_string (line, message);
  g_string_append (line, "}\n");
  send_text (fd, line->str, line->len);
}

/* REQ's spawn-failed: on its own channel when it is a direct one. */
static void
send_spawn_failed (Init               *init,
                   const SpawnRequest *req,
                   int                 err,
                   const char         *message)
{
  send_spawn_failed_to (req->events_fd >= 0 ? req->events_fd : init->cfg->control_fd,
                        req->id, err, message);
}

static void
request_note (const char *why)
{
  g_printerr ("paddock-sandbox: ignoring a control request: %s\n", why);
}

static void
close_fds (GArray *fds)
{
  for (guint i = 0; i < fds->len; i++)
    close (g_array_index (fds, int, i));
  g_array_set_size (fds, 0);
}

static Command *
find_command (Init    *init,
              guint32  id)
{
  for (guint i = 0; i < init->n_commands; i++)
    if (init->commands[i].id == id)
      return &init->commands[i];
  return NULL;
}

/* Validates a spawn request in pid 1. On failure fills ERR and WHY. */
static gboolean
parse_spawn (Init         *init,
             GVariant     *request,
             GArray       *fds,
             SpawnRequest *req,
             int          *err,
             const char  **why)
{
  if (!parse_spawn_request (init->cfg->workspace, request, fds, req, err, why))
    return FALSE;
  if (find_command (init, req->id) != NULL)
    {
      *err = EEXIST;
      *why = "a command with this id is running";
      return FALSE;
    }
  if (init->n_commands >= MAX_COMMANDS)
    {
      *err = EAGAIN;
      *why = "too many commands running in this session (64)";
      return FALSE;
    }
  return TRUE;
}

/* A PTY pair of the sandbox's own devpts: the master (returned) and the
 * slave three times at 3 or above in FDS, CLOEXEC. -1 with errno. */
static int
open_own_pty (GArray *fds)
{
  struct winsize size = { .ws_row = 24, .ws_col = 80 };
  paddock_autofd int master = open ("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  int unlock = 0;
  int slave;

  if (master < 0 || ioctl (master, TIOCSPTLCK, &unlock) != 0)
    return -1;
  /* By the master, not by a path: no lookup anyone could race. */
  slave = ioctl (master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0)
    return -1;
  if (slave < 3)
    {
      int moved = fcntl (slave, F_DUPFD_CLOEXEC, 3);
      int saved_errno = errno;

      close (slave);
      errno = saved_errno;
      if (moved < 0)
        return -1;
      slave = moved;
    }
  g_array_append_val (fds, slave);
  for (int i = 0; i < 2; i++)
    {
      int copy = fcntl (slave, F_DUPFD_CLOEXEC, 3);

      if (copy < 0)
        return -1;   /* the caller closes what FDS holds */
      g_array_append_val (fds, copy);
    }
  ioctl (master, TIOCSWINSZ, &size);
  return paddock_steal_fd (&master);
}

/* What a supervisor forked from pid 1 must not hold of pid 1's: the
 * daemon's socket (its EOF must mean the sandbox is gone), other commands'
 * channels and terminals, the spare's channel, the agent's PTY. */
static void
drop_pid1_fds (Init *init)
{
  close (init->sfd);
  if (init->cfg->control_fd >= 0)
    close (init->cfg->control_fd);
  if (init->cfg->pty_fd >= 0)
    close (init->cfg->pty_fd);
  for (guint i = 0; i < init->n_commands; i++)
    {
      close (init->commands[i].chan);
      if (init->commands[i].pty_master >= 0)
        close (init->commands[i].pty_master);
    }
  if (init->spare_chan >= 0)
    close (init->spare_chan);
}

/* Forks the spare supervisor (see run_spare_supervisor). On failure (a
 * pids limit, say) there is none, and none is wanted until the next
 * command: a spawn then forks its supervisor itself. */
void
fork_spare (Init *init)
{
  int pair[2];
  pid_t pid;

  init->want_spare = FALSE;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    return;
  pid = fork ();
  if (pid < 0)
    {
      close (pair[0]);
      close (pair[1]);
      return;
    }
  if (pid == 0)
    {
      close (pair[0]);
      drop_pid1_fds (init);
      run_spare_supervisor (init->cfg, pair[1]);
    }
  close (pair[1]);
  init->spare = pid;
  init->spare_chan = pair[0];
  init->want_spare = TRUE;
}

/* How long pid 1 waits idle before it forks the next spare; -1: none is
 * wanted. While a command's supervisor is busy it waits longer: a
 * supervisor whose command ends by itself comes back free and is the next
 * spare (see the end of the main loop), so a run of short commands costs no
 * fork at all, where forking after SPARE_IDLE_MS would make the free one
 * exit unused whenever a command outlasts that, as even `true` does on a
 * machine where exec is slow (4 ms under a paravirtualized MMU: one fork
 * and one exit per command there, most of the session's CPU per Exec).
 * A command that runs long still gets a spare forked beside it. */
int
spare_wait_ms (const Init *init)
{
  if (!init->want_spare || init->spare >= 0)
    return -1;
  for (guint i = 0; i < init->n_commands; i++)
    if (init->commands[i].supervisor > 0)
      return SPARE_BUSY_IDLE_MS;
  return SPARE_IDLE_MS;
}

/* The spare goes: its EOF makes it exit, SIGKILL in case it is busy
 * elsewhere (it is not, short of a bug); the SIGCHLD loop reaps it. */
void
drop_spare (Init *init)
{
  if (init->spare > 0)
    kill (init->spare, SIGKILL);
  paddock_close_fd (&init->spare_chan);
  init->spare = -1;
}

/* Hands the request (RAW, as received) and the command's 3 fds to the
 * spare, without ever blocking pid 1. FALSE if it did not take them. */
static gboolean
hand_to_spare (Init               *init,
               const SpawnRequest *req,
               const char         *raw,
               gsize               raw_len)
{
  int pass[4] = { req->fds[0], req->fds[1], req->fds[2], req->events_fd };

  /* Any process of the session may SIGSTOP the spare (same uid, same
   * domain): a stopped spare would take the request and never answer it.
   * SIGCONT resumes it as it is sent, costs one call and does nothing to
   * a spare that runs; so it is sent rather than the spare's state read
   * first. A process that stops it again after this still can: the
   * daemon bounds its wait for "spawned" for that. */
  kill (init->spare, SIGCONT);
  return send_with_fds (init->spare_chan, raw, raw_len, pass,
                        req->direct ? PADDOCK_SANDBOX_DIRECT_SPAWN_N_FDS : PADDOCK_SANDBOX_SPAWN_N_FDS) == (ssize_t) raw_len;
}

static void
start_command (Init         *init,
               SpawnRequest *req,
               GArray       *fds,
               const char   *raw,
               gsize         raw_len)
{
  paddock_autofd int pty_master = -1;
  int pair[2];
  pid_t pid;
  Command *command;

  if (req->own_pty && (pty_master = open_own_pty (fds)) < 0)
    {
      send_spawn_failed (init, req, errno, "cannot make a terminal in the sandbox");
      return;
    }

  /* Received fds at 3 or above (if pid 1's stdio was closed, one could land
   * on 0-2 and be clobbered by the command's dup2()); a direct spawn's
   * channel too, which is the 4th. */
  for (guint i = 0; i < (guint) (req->direct ? PADDOCK_SANDBOX_DIRECT_SPAWN_N_FDS : PADDOCK_SANDBOX_SPAWN_N_FDS); i++)
    {
      int fd = g_array_index (fds, int, i);
      if (fd < 3)
        {
          int moved = fcntl (fd, F_DUPFD_CLOEXEC, 3);
          if (moved < 0)
            {
              send_spawn_failed (init, req, errno, "cannot move a received fd");
              return;
            }
          close (fd);
          g_array_index (fds, int, i) = moved;
        }
      if (i < PADDOCK_SANDBOX_REQUEST_FD_EVENTS)
        req->fds[i] = g_array_index (fds, int, i);
      else
        req->events_fd = g_array_index (fds, int, i);
    }

  /* Commands come in runs: keep one supervisor forked ahead from now on. */
  init->want_spare = TRUE;
  if (init->spare > 0)
    {
      if (hand_to_spare (init, req, raw, raw_len))
        {
          pid = init->spare;
          pair[0] = init->spare_chan;
          init->spare = -1;
          init->spare_chan = -1;
          goto started;
        }
      drop_spare (init);
    }

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    {
      send_spawn_failed (init, req, errno, "socketpair failed");
      return;
    }

  /* pid 1 is single-threaded (a clone of a single-threaded helper), so the
   * supervisor may use anything until it forks the command. */
  pid = fork ();
  if (pid < 0)
    {
      int err = errno;
      close (pair[0]);
      close (pair[1]);
      send_spawn_failed (init, req, err, "cannot fork the command's supervisor");
      return;
    }
  if (pid == 0)
    {
      close (pair[0]);
      drop_pid1_fds (init);
      paddock_close_fd (&pty_master);
      run_command_supervisor (init->cfg, req, pair[1]);
    }
  close (pair[1]);

started:
  command = &init->commands[init->n_commands++];
  command->id = req->id;
  command->supervisor = pid;
  command->chan = pair[0];
  command->pty_master = paddock_steal_fd (&pty_master);
  command->spawned = FALSE;
  command->direct = req->direct;
  command->idle = FALSE;
}

/* PID's state letter in /proc/PID/stat ('T' stopped, 'Z' zombie…), or
 * 0 if it cannot be read (gone); its parent's pid in *PPID if not NULL
 * (0 if unread). */
static char
process_state (pid_t  pid,
               pid_t *ppid)
{
  char path[64];
  char buf[512];
  paddock_autofd int fd = -1;
  const char *end;
  ssize_t n;

  if (ppid != NULL)
    *ppid = 0;
  g_snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  while ((n = read (fd, buf, sizeof buf - 1)) < 0 && errno == EINTR)
    ;
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  /* The name in parentheses may hold anything: the state follows the
   * last ')', then the parent's pid. */
  end = strrchr (buf, ')');
  if (end == NULL || end[1] != ' ' || end[2] == '\0')
    return 0;
  if (ppid != NULL && end[3] == ' ')
    *ppid = (pid_t) strtol (end + 4, NULL, 10);
  return end[2];
}

/* SIGKILL to the command tree of a SUPERVISOR that a process of the
 * session keeps stopped (see handle_kill), without its help, and then to
 * it. Stopped, it reaps none of its children, and as a subreaper it is
 * handed the children of each that dies: killing its living children
 * until none is left kills the whole tree. It may be resumed meanwhile
 * (by the same process of the session) and reap: a pid listed could then
 * be free, and taken by a process that is none of its children (pid
 * allocation is cyclic, but a process of the session can bring the next
 * pid round to it). So each child is pinned with a pidfd first and
 * signalled through it only if /proc then names SUPERVISOR its parent:
 * read while the pidfd's process was not reaped, that entry was its own;
 * reaped, the pidfd's signal reaches no one. SUPERVISOR's own pid is ours
 * to reap, which we do not do here. Its channel's end then answers the
 * command (handle_supervisor). Bounded (200 rounds of 1 ms, pid 1 must
 * not hang): what still lives after that (a tree deeper than the rounds,
 * or a supervisor resumed meanwhile, which then kills the rest itself)
 * is re-parented to pid 1 and goes with the session. */
static void
kill_stopped_supervisor (pid_t supervisor)
{
  char path[64];

  g_snprintf (path, sizeof path, "/proc/%d/task/%d/children", (int) supervisor, (int) supervisor);
  for (guint round = 0; round < 200; round++)
    {
      pid_t children[512];
      guint n = list_children (path, children, G_N_ELEMENTS (children));
      guint living = 0;

      for (guint i = 0; i < n; i++)
        {
          paddock_autofd int pidfd = (int) syscall (SYS_pidfd_open, children[i], 0);  /* CLOEXEC, always */
          pid_t parent = 0;
          char state;

          if (pidfd < 0)
            continue;
          state = process_state (children[i], &parent);
          if (state != 0 && state != 'Z' && parent == supervisor &&
              syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) == 0)
            living++;
        }
      if (living == 0)
        break;
      g_usleep (1000);
    }
  kill (supervisor, SIGKILL);
}

static void
handle_kill (Init     *init,
             GVariant *request,
             guint32   id)
{
  Command *command = find_command (init, id);
  gint32 sig = 0;
  int s;

  if (!g_variant_lookup (request, PADDOCK_SANDBOX_KEY_SIGNAL, "i", &sig) || sig < 1 || sig > 64)
    {
      request_note ("kill wants a signal number from 1 to 64");
      return;
    }
  if (command == NULL)
    {
      /* Already exited (its command-exited is on its way or sent). */
      request_note ("kill for a command that is not running");
      return;
    }
  /* Its supervisor is reaped (forget_reaped): its pid may be anyone's
   * now, and its channel's end, still to be read, answers the command. */
  if (command->supervisor <= 0)
    return;
  s = (int) sig;
  /* The supervisor does the killing. A process of the session may have
   * stopped it (see hand_to_spare), and may stop it again as soon as it
   * is resumed: a SIGKILL (a timeout's, a caller's leaving) then does not
   * wait for it. Nothing else stops a supervisor. */
  if (s == SIGKILL && process_state (command->supervisor, NULL) == 'T')
    {
      kill_stopped_supervisor (command->supervisor);
      return;
    }
  /* Any other signal: it is resumed first, so that it reaches the command. */
  kill (command->supervisor, SIGCONT);
  while (send (command->chan, &s, sizeof s, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno == EINTR)
    ;
}

/* A TCP socket made here, so that it belongs to the session's network
 * namespace, for the daemon to connect to a leased port's server inside
 * (port forwarding). Only made, never bound or connected here: the daemon
 * does that, and Landlock binds the agent's domain, not the daemon's. */
static void
handle_socket (Init     *init,
               GVariant *request,
               guint32   id)
{
  LineBuf line = { .len = 0 };
  g_autoptr(GVariant) value = g_variant_lookup_value (request, PADDOCK_SANDBOX_KEY_FAMILY, NULL);
  const char *family = PADDOCK_SANDBOX_FAMILY_INET;   /* when there is no 'family' */
  int fd;

  /* IPv6 for a server that listens on [::1] only: the namespace is the
   * session's either way, with nothing but its own loopback. A 'family'
   * that is not a string is an error (EINVAL), never taken for the
   * default: g_variant_lookup() would say it was absent. */
  if (value != NULL && !g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    {
      fd = -1;
      errno = EINVAL;
    }
  else
    {
      if (value != NULL)
        family = g_variant_get_string (value, NULL);
      if (g_strcmp0 (family, PADDOCK_SANDBOX_FAMILY_INET) == 0)
        fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      else if (g_strcmp0 (family, PADDOCK_SANDBOX_FAMILY_INET6) == 0)
        fd = socket (AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      else
        {
          fd = -1;
          errno = EAFNOSUPPORT;
        }
    }

  if (fd < 0)
    {
      line_add (&line, JSON_EVENT (PADDOCK_SANDBOX_EVENT_SOCKET_FAILED) JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_ID));
      line_add_int (&line, (long) id);
      line_add (&line, JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_ERRNO));
      line_add_int (&line, errno);
      line_add (&line, "}\n");
      send_event (init->cfg->control_fd, &line);
      return;
    }
  line_add (&line, JSON_EVENT (PADDOCK_SANDBOX_EVENT_SOCKET) JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_ID));
  line_add_int (&line, (long) id);
  line_add (&line, "}\n");
  send_event_with_fd (init->cfg->control_fd, &line, fd);
  close (fd);
}

/* A daemon that took the session over asks for the proxy's socket again:
 * the same "proxy" event as at the start, with the same socket; port 0
 * and no socket in a session started without the proxy (the daemon asks
 * a none session too: it may have been switched from proxy). */
static void
handle_proxy (Init *init)
{
  LineBuf line = { .len = 0 };
  int fd = init->cfg->found->proxy_listen_fd;

  line_add (&line, JSON_EVENT (PADDOCK_SANDBOX_EVENT_PROXY) JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_PORT));
  line_add_int (&line, fd >= 0 ? init->cfg->proxy_port : 0);
  line_add (&line, "}\n");
  if (fd >= 0)
    send_event_with_fd (init->cfg->control_fd, &line, fd);
  else
    send_event (init->cfg->control_fd, &line);
}

/* One request from the daemon: a message of at most MAX_REQUEST_BYTES with
 * up to MAX_RECV_FDS fds. Anything malformed is dropped with a note on
 * stderr (or answered with spawn-failed when it names an id); every
 * received fd is closed before returning. */
void
handle_request (Init  *init,
                short  revents)
{
  g_autoptr(GArray) fds = g_array_new (FALSE, FALSE, sizeof (int));
  g_autoptr(GVariant) request = NULL;
  g_auto(SpawnRequest) req = { 0, NULL, NULL, NULL, NULL, FALSE, FALSE, FALSE, { -1, -1, -1 }, -1 };
  const char *op = NULL;
  guint32 id = 0;
  ssize_t n;
  int err = 0;
  const char *why = NULL;

  n = recv_request (init->cfg->control_fd, MSG_DONTWAIT, init->request_buf, fds);
  /* Cut short: refused whole, its fds closed (paddock_fdpass_recv). */
  if (n < 0 && errno == EMSGSIZE)
    why = "message larger than 128 KiB";
  else if (n < 0 && errno == ETOOMANYREFS)
    why = "more than 8 fds attached";
  if (why != NULL)
    {
      request_note (why);
      return;
    }
  if (n < 0)
    {
      if (errno != EINTR && errno != EAGAIN)
        init->reading = FALSE;
      return;
    }
  if (n == 0 && fds->len == 0)
    {
      /* EOF (the daemon closed its end: events still go out, and fail), or
       * an empty message, which SEQPACKET also returns as 0: only a hangup
       * tells them apart. */
      if (revents & POLLHUP)
        init->reading = FALSE;
      else
        request_note ("empty message");
      return;
    }

  /* Checked in full (at most 128 KiB) before any member is read. */
  request = request_from_buf (init->request_buf, n);
  if (request == NULL)
    {
      request_note ("not a serialized a{sv} in normal form");
      close_fds (fds);
      return;
    }
  if (!g_variant_lookup (request, PADDOCK_SANDBOX_KEY_OP, "&s", &op))
    op = NULL;
  if (!g_variant_lookup (request, PADDOCK_SANDBOX_KEY_ID, "u", &id))
    {
      request_note ("no \"id\" (an unsigned 32-bit integer, u)");
      close_fds (fds);
      return;
    }

  if (g_strcmp0 (op, PADDOCK_SANDBOX_OP_KILL) == 0)
    {
      close_fds (fds);
      handle_kill (init, request, id);
      return;
    }
  if (g_strcmp0 (op, PADDOCK_SANDBOX_OP_SOCKET) == 0)
    {
      close_fds (fds);
      handle_socket (init, request, id);
      return;
    }
  if (g_strcmp0 (op, PADDOCK_SANDBOX_OP_PROXY) == 0)
    {
      close_fds (fds);
      handle_proxy (init);
      return;
    }
  if (g_strcmp0 (op, PADDOCK_SANDBOX_OP_SPAWN) != 0)
    {
      request_note ("unknown \"op\"");
      close_fds (fds);
      return;
    }

  req.id = id;
  if (!parse_spawn (init, request, fds, &req, &err, &why))
    send_spawn_failed (init, &req, err, why);
  else
    start_command (init, &req, fds, init->request_buf, (gsize) n);
  /* The supervisor has its copies now (or there is none). */
  close_fds (fds);
}

/* A message from a command's supervisor. FALSE when the command is over
 * (reported, or its supervisor vanished) and its slot is to be freed. */
gboolean
handle_supervisor (Init    *init,
                   Command *command)
{
  SupMsg msg;
  ssize_t n = recv (command->chan, &msg, sizeof msg, MSG_DONTWAIT);
  LineBuf line = { .len = 0 };

  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return TRUE;
  /* A direct command's supervisor tells the daemon itself, and here only
   * that it has given the command's last event. Its end without that
   * means it was killed: the daemon hears it from us (see "Direct
   * events"), after everything the supervisor wrote on the channel. */
  if (command->direct)
    {
      if (n == (ssize_t) sizeof msg)
        {
          command->idle = msg.type == SUP_EXITED && msg.idle;
          return msg.type != SUP_FAILED && msg.type != SUP_EXITED;
        }
      line_add (&line, JSON_EVENT (PADDOCK_SANDBOX_EVENT_SUPERVISOR_GONE) JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_ID));
      line_add_int (&line, command->id);
      line_add (&line, "}\n");
      send_event (init->cfg->control_fd, &line);
      return FALSE;
    }
  if (n != (ssize_t) sizeof msg && !command->spawned)
    {
      /* Killed before it started the command (a spare killed from outside
       * just as it was handed the request): the spawn is answered, as
       * every spawn is, and the command never ran. */
      send_spawn_failed_to (init->cfg->control_fd, command->id, EIO,
                            "the command's supervisor ended before it started the command");
      return FALSE;
    }
  if (n != (ssize_t) sizeof msg)
    {
      /* Cannot happen short of the supervisor being killed: say so. */
      line_add (&line, JSON_EVENT (PADDOCK_SANDBOX_EVENT_COMMAND_EXITED) JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_ID));
      line_add_int (&line, command->id);
      line_add (&line, JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_STATUS) G_STRINGIFY (PADDOCK_SANDBOX_STATUS_SUPERVISOR_GONE) "}\n");
      send_event (init->cfg->control_fd, &line);
      return FALSE;
    }

  switch (msg.type)
    {
    case SUP_SPAWNED:
      line_add (&line, JSON_EVENT (PADDOCK_SANDBOX_EVENT_SPAWNED) JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_ID));
      line_add_int (&line, command->id);
      line_add (&line, JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_PID));
      line_add_int (&line, msg.pid);
      line_add (&line, "}\n");
      send_event_with_fd (init->cfg->control_fd, &line, command->pty_master);
      command->spawned = TRUE;
      /* The daemon has its own copy now (or the socket is gone). */
      paddock_close_fd (&command->pty_master);
      return TRUE;

    case SUP_FAILED:
      {
        g_autofree char *text = g_strdup_printf ("%s: %s", stage_text (msg.stage),
                                                 g_strerror (msg.err));
        send_spawn_failed_to (init->cfg->control_fd, command->id, msg.err, text);
      }
      return FALSE;

    case SUP_EXITED:
      line_add (&line, JSON_EVENT (PADDOCK_SANDBOX_EVENT_COMMAND_EXITED) JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_ID));
      line_add_int (&line, command->id);
      line_add (&line, JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_STATUS));
      line_add_int (&line, status_to_code (msg.status));
      if (WIFSIGNALED (msg.status))
        {
          line_add (&line, JSON_KEY (PADDOCK_SANDBOX_EVENT_KEY_SIGNAL));
          line_add_int (&line, WTERMSIG (msg.status));
        }
      line_add (&line, "}\n");
      send_event (init->cfg->control_fd, &line);
      command->idle = msg.idle;
      return FALSE;

    default:
      return TRUE;
    }
}

/* A command's slot is free: what it held goes. */
void
command_clear (Command *command)
{
  paddock_close_fd (&command->chan);
  paddock_close_fd (&command->pty_master);
}

/* PID, a child of ours, was reaped: its number is free for any new
 * process of the session, so nothing here may signal it any more. A
 * supervisor or spare reaped here still has its channel's end to be read
 * (it died after poll() returned, or a child not yet exec'd held its end
 * a moment longer): a supervisor's tells its command's end
 * (handle_supervisor); the spare's is closed here, as drop_spare does. */
void
forget_reaped (Init  *init,
               pid_t  pid)
{
  if (pid == init->spare)
    {
      paddock_close_fd (&init->spare_chan);
      init->spare = -1;
      init->want_spare = FALSE;
    }
  for (guint i = 0; i < init->n_commands; i++)
    if (init->commands[i].supervisor == pid)
      init->commands[i].supervisor = 0;
}
