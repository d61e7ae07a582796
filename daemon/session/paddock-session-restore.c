/* paddock-session-restore.c — a session's record read back: what the restored session is built from, and what is left running of it
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A session recorded by an earlier daemon. If its record says it was still
 * running, whatever is left of it in this boot (matched by boot id and
 * process start time, never by pid alone) is pinned here, for the session
 * to end (paddock-session-leftovers.c): no daemon supervises it any more,
 * and none may run unsupervised. Nothing here knows the session object:
 * it is built from what this reads.
 */

#include "config.h"

#include <errno.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-compat-pidfd.h"
#include "paddock-compat-proc.h"
#include "paddock-exit-status.h"
#include "paddock-executor.h"
#include "paddock-keeper-client.h"
#include "paddock-keeper-protocol.h"
#include "paddock-net-modes.h"
#include "paddock-session-boundary.h"
#include "paddock-session-commands.h"
#include "paddock-session-leftovers.h"
#include "paddock-session-members.h"
#include "paddock-session-network.h"
#include "paddock-session-restore.h"
#include "paddock-stage.h"
#include "paddock-stage-guard.h"

char *
paddock_session_restore_current_boot_id (void)
{
  static char *boot_id;   /* read once: it cannot change under a running daemon */
  static gsize read_once;

  if (g_once_init_enter (&read_once))
    {
      char *text = NULL;

      if (!g_file_get_contents ("/proc/sys/kernel/random/boot_id", &text, NULL, NULL))
        text = g_strdup ("");
      boot_id = g_strstrip (text);
      g_once_init_leave (&read_once, 1);
    }
  return g_strdup (boot_id);
}

/* Every process of the session now, as the session would list them with
 * what is known of it so far (no executor, no command: it was not
 * started here). */
static GArray *
paddock_session_restore_list_pids (PaddockSessionRestore *self)
{
  g_autoptr(PaddockSessionCommands) commands = paddock_session_commands_new ();
  PaddockSessionMembers members = paddock_session_members_of (&self->tree, NULL, NULL, commands);

  return paddock_session_members_list (&members);
}


/* Whether the keeper behind PIDFD is on its way out: it left its
 * program's end in the exit file, which it writes only once its tree is
 * empty and nothing is left for it but to exit (paddock-keeper.c). That
 * moment is waited for (bounded), so that the end it left is read, not
 * taken for a keeper that went without a word when it will not answer.
 * Not for a record that names leftovers: a daemon was ending them, and
 * the end the keeper saw was that daemon's doing, not the agent's. */
#define KEEPER_GOING_WAIT_MS 2000

static gboolean
keeper_is_going (const char *session_dir,
                 int         pidfd)
{
  g_autofree char *exit_file = g_build_filename (session_dir, PADDOCK_KEEPER_EXIT_FILE, NULL);
  struct pollfd pfd = { .fd = pidfd, .events = POLLIN, .revents = 0 };

  if (!g_file_test (exit_file, G_FILE_TEST_EXISTS))
    return FALSE;
  while (poll (&pfd, 1, KEEPER_GOING_WAIT_MS) < 0 && errno == EINTR)
    ;
  return (pfd.revents & POLLIN) != 0;
}

void
paddock_session_restore_read (PaddockSessionRestore      *self,
                              const PaddockSessionRecord *record,
                              const char                 *record_path,
                              const char                 *helper)
{
  g_autofree char *boot_id = NULL;
  PaddockStageKind kind;

  self->tree.leftover_keeper_pidfd = -1;
  self->tree.reaped = TRUE;
  self->pinned = g_array_new (FALSE, FALSE, sizeof (PaddockLeftover));
  self->session_dir = g_path_get_dirname (record_path);
  self->config.workspace = g_strdup (record->workspace);
  self->config.command = g_strdupv (record->command);
  self->config.name = g_strdup (record->name);
  self->config.profile = g_strdup (record->profile);
  self->config.owner = g_strdup (record->owner);
  self->config.env = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->config.home = g_build_filename (self->session_dir, "home", NULL);
  self->config.helper = g_strdup (helper);
  if (paddock_stage_kind_from_string (record->staging, &kind))
    self->config.staging = g_strdup (record->staging);
  /* The creator's limit, if the record keeps one in CreateSession's
   * bounds; else the default (0). */
  if (record->stage_limit >= PADDOCK_STAGE_LIMIT_MIN && record->stage_limit <= PADDOCK_STAGE_LIMIT_MAX)
    self->config.stage_limit = record->stage_limit;
  self->config.net_mode = g_strdup (paddock_net_mode_is_valid (record->net) ? record->net : "host");
  self->config.allow_domains = g_strdupv (record->allow_domains);
  self->config.columns = 80;
  self->config.rows = 24;

  self->exit_status = record->exit_status;
  /* Recorded while it ran (or by a daemon that ended its leftovers): no
   * daemon saw it end, so its status is unknown, and must not read as
   * "still running" now that it is over. */
  if (self->exit_status < 0 || g_strcmp0 (record->state, "starting") == 0 ||
      g_strcmp0 (record->state, "running") == 0)
    self->exit_status = PADDOCK_EXIT_STATUS_UNKNOWN;

  self->state = record->state;
  boot_id = paddock_session_restore_current_boot_id ();
  self->same_boot = g_strcmp0 (record->boot_id, boot_id) == 0;

  /* A cgroup left behind names exactly what is left of the session; only
   * ever a cgroup of ours, whatever the record says. */
  self->cgroup = paddock_cgroup_open (record->cgroup);
  if (self->cgroup != NULL)
    {
      g_autofree char *cgroup_name = g_path_get_basename (paddock_cgroup_get_path (self->cgroup));

      if (!g_str_has_prefix (cgroup_name, "paddock-session-"))
        g_clear_pointer (&self->cgroup, paddock_cgroup_free);
    }

  /* The session's keeper (a host agent's, a sandbox's), if it still runs: it held on to its tree
   * when the earlier daemon went (paddock-keeper-protocol.h), and every
   * descendant of it is left of the session, setsid()ed or not, whatever
   * the state recorded (an agent that exited may have left a server). */
  {
    gint64 keeper_pid = record->keeper_pid;
    guint64 keeper_start_time = record->keeper_start_time;

    if (self->same_boot && keeper_pid > 0 && keeper_pid < G_MAXINT && keeper_start_time != 0)
      {
        int pidfd = paddock_compat_pidfd_open ((pid_t) keeper_pid);  /* CLOEXEC, always */

        /* Read after the pidfd: it names the keeper we knew, or no one. */
        if (pidfd >= 0 && paddock_compat_proc_start_time ((guint32) keeper_pid) == keeper_start_time &&
            (record->leftovers->len > 0 || !keeper_is_going (self->session_dir, pidfd)))
          {
            self->tree.leftover_keeper = (pid_t) keeper_pid;
            self->tree.leftover_keeper_pidfd = pidfd;
          }
        else if (pidfd >= 0)
          close (pidfd);
      }
  }
}

gboolean
paddock_session_restore_may_adopt (const PaddockSessionRestore *self,
                                   const PaddockSessionRecord  *record)
{
  return self->tree.leftover_keeper > 0 &&
         (g_strcmp0 (self->state, "starting") == 0 || g_strcmp0 (self->state, "running") == 0);
}

void
paddock_session_restore_pin_leftovers (PaddockSessionRestore      *self,
                                       const PaddockSessionRecord *record)
{
  GArray *leftovers = self->pinned;
  const char *state = self->state;
  gint64 pid = record->pid;

  if (g_strcmp0 (state, "starting") == 0 || g_strcmp0 (state, "running") == 0)
    {
      int wait_status = 0;
      /* Its keeper saw the agent (a sandbox's helper, which passes the
       * agent's status on) end while no daemon was there, and left how
       * (paddock-keeper-protocol.h): then it exited, as seen. */
      const char *ended_as = self->tree.leftover_keeper == 0 &&
                             paddock_keeper_client_read_exit (self->session_dir, &wait_status) ? "exited" : "stopped";

      guint64 start_time = record->pid_start_time;
      gint64 init_pid = record->init_pid;
      guint64 init_start_time = record->init_start_time;

      if (self->same_boot && pid > 0 && pid < G_MAXINT && start_time != 0 &&
          _paddock_leftover_pin (leftovers, (pid_t) pid, start_time))
        {
          /* Still there: everything of its session goes. */
          self->tree.pid = (pid_t) pid;
          self->tree.pid_start_time = start_time;
          self->tree.sandboxed = record->sandboxed;
          self->tree.reaped = FALSE;
          _paddock_leftover_pin_listed (leftovers, (PaddockLeftoverListFunc) paddock_session_restore_list_pids, self);
          self->tree.reaped = TRUE;
        }
      /* A sandbox dies with the daemon (--die-with-parent), one process
       * after the other: its pid 1 may outlive the supervisor we knew by
       * a moment, and it exits only once all of the namespace is gone. */
      if (self->same_boot && init_pid > 0 && init_pid < G_MAXINT && init_start_time != 0 &&
          !_paddock_leftover_is_pinned (leftovers, (pid_t) init_pid))
        _paddock_leftover_pin (leftovers, (pid_t) init_pid, init_start_time);
      if (g_strcmp0 (ended_as, "exited") == 0)
        self->exit_status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status)
                                                    : 128 + WTERMSIG (wait_status);
      state = ended_as;
    }

  /* What a daemon killed while it ended the session's leftovers had
   * pinned of them (see paddock_session_leftovers_save()): each the
   * very process, by boot and start time, or none. */
  if (self->same_boot)
    for (guint i = 0; i < record->leftovers->len; i++)
      {
        const PaddockSessionRecordProcess *named = &g_array_index (record->leftovers,
                                                                   PaddockSessionRecordProcess, i);

        if (!_paddock_leftover_is_pinned (leftovers, (pid_t) named->pid))
          _paddock_leftover_pin (leftovers, (pid_t) named->pid, named->start_time);
      }

  /* A host agent gone (an earlier sweep's SIGTERM ended it) while some of
   * what it led, named above, still runs: its process session outlives it,
   * and the kernel keeps its number (the agent's pid) taken for as long as
   * any member has it. So what was forked since, named nowhere, is found
   * through it, now and at the SIGKILL, as if the agent were there. The
   * member's session is read while its pidfd says it still runs, so it is
   * that process's. */
  if (self->tree.pid == 0 && pid > 0 && pid < G_MAXINT && leftovers->len > 0 && !record->sandboxed)
    for (guint i = 0; i < leftovers->len; i++)
      {
        const PaddockLeftover *leftover = &g_array_index (leftovers, PaddockLeftover, i);
        PaddockProcStat stat;

        if (paddock_compat_proc_read_stat ((guint32) leftover->pid, FALSE, &stat) && stat.session == (int) pid &&
            poll (&(struct pollfd) { .fd = leftover->pidfd, .events = POLLIN }, 1, 0) == 0)
          {
            self->tree.pid = (pid_t) pid;
            self->tree.pid_start_time = record->pid_start_time;
            self->tree.sandboxed = FALSE;
            self->tree.reaped = FALSE;
            _paddock_leftover_pin_listed (leftovers, (PaddockLeftoverListFunc) paddock_session_restore_list_pids, self);
            self->tree.reaped = TRUE;
            break;
          }
      }

  if (self->tree.leftover_keeper > 0)
    _paddock_leftover_pin_listed (leftovers, (PaddockLeftoverListFunc) paddock_session_restore_list_pids, self);
  if (self->tree.leftover_keeper > 0 && leftovers->len == 0)
    {
      self->tree.leftover_keeper = 0;
      paddock_close_fd (&self->tree.leftover_keeper_pidfd);
    }

  /* An empty cgroup goes now. */
  if (leftovers->len == 0 && self->cgroup != NULL && paddock_cgroup_remove (self->cgroup))
    g_clear_pointer (&self->cgroup, paddock_cgroup_free);

  if (leftovers->len > 0 || self->cgroup != NULL)
    {
      /* Listed as it was until they are gone. */
      self->final_state = state;
      self->state = record->state;
    }
  else
    {
      self->tree.pid = 0;
      self->state = state;
    }
}

static void
close_pinned (GArray *pinned)
{
  for (guint i = 0; i < pinned->len; i++)
    close (g_array_index (pinned, PaddockLeftover, i).pidfd);
  g_array_set_size (pinned, 0);
}

/* The session's boundary as its start saw it, kept in its folder (a
 * sandbox's look needs the start-up report only that start had), or
 * NULL, said in the log, where it is not known. */
GVariant *
paddock_session_restore_load_boundary (const PaddockSessionRestore *self,
                                       const char                  *id)
{
  g_autofree char *boundary_path = g_build_filename (self->session_dir, "boundary", NULL);
  g_autoptr(GError) error = NULL;
  GVariant *boundary = paddock_boundary_published_load (boundary_path, &error);

  if (boundary == NULL)
    g_message ("Session %s: its boundary as its start saw it is not known (%s)", id, error->message);
  return boundary;
}

/* A policy that no longer parses is not guessed at: the session is not
 * adopted. */
PaddockDomainRules *
paddock_session_restore_parse_policy (const PaddockSessionRestore *self,
                                      const char                  *id)
{
  g_autoptr(GError) error = NULL;
  PaddockDomainRules *rules =
    _paddock_session_network_build_rules (self->config.net_mode,
                                          (const char * const *) self->config.allow_domains, &error);

  if (rules == NULL)
    g_message ("Session %s: its network policy cannot be served again (%s); ending what is left of it",
               id, error->message);
  return rules;
}

void
paddock_session_restore_recover_stage (PaddockStage *stage,
                                       const char   *id)
{
  g_autoptr(GError) recover_error = NULL;

  if (!paddock_stage_recover (stage, &recover_error))
    g_message ("Session %s: could not recover an interrupted apply: %s", id, recover_error->message);
}

PaddockSessionLeftovers *
paddock_session_restore_take_leftovers (PaddockSessionRestore      *self,
                                        const PaddockSessionRecord *record)
{
  if (self->final_state == NULL)
    return NULL;
  return paddock_session_leftovers_new (record->id, g_steal_pointer (&self->pinned),
                                        g_steal_pointer (&self->cgroup), self->final_state, record->root);
}

void
paddock_session_restore_clear (PaddockSessionRestore *self)
{
  paddock_session_config_clear (&self->config);
  g_clear_pointer (&self->session_dir, g_free);
  paddock_session_tree_clear (&self->tree);
  g_clear_pointer (&self->cgroup, paddock_cgroup_free);
  if (self->pinned != NULL)
    close_pinned (self->pinned);
  g_clear_pointer (&self->pinned, g_array_unref);
}
