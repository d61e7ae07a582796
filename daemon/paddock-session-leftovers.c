/* paddock-session-leftovers.c — what a dead daemon left running of a session
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A daemon that died (SIGKILL, a crash) leaves its sessions' processes
 * running with nobody to supervise them. The next daemon pins each of them
 * with a pidfd (so that a signal reaches that process or no one, never a
 * stranger that got its pid), and ends them as Stop would: SIGTERM, a
 * grace, SIGKILL. This runs on the main loop for every restored session
 * at once, with one grace for all of them: the daemon serves from the
 * start (ListSessions lists the session "running", with its process
 * count), and a session says "stopped" only once nothing of it runs.
 *
 * Processes forked after the pinning are found again when the SIGKILL is
 * due and at every tick after it (through the session's own listing and
 * its cgroup, where it had one), as Stop's sweep does.
 */

#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "paddock-compat-pidfd.h"
#include "paddock-compat-proc.h"
#include "paddock-error.h"
#include "paddock-record-writer.h"
#include "paddock-session-leftovers.h"
#include "paddock-session-record.h"
#include "paddock-session-stop.h"

/* How often the pidfds are polled: a process's exit is seen within this. */
#define LEFTOVERS_POLL_MS      20
/* How long after the SIGKILL a process that still has not exited is worth
 * a warning (it is watched on regardless: in uninterruptible sleep, on a
 * hung file system). */
#define LEFTOVERS_KILL_WARN_US (10 * G_USEC_PER_SEC)
/* Past that warning, the sweep for new processes (a walk of /proc for a
 * session without a cgroup) runs this often, not at every poll. */
#define LEFTOVERS_SLOW_SWEEP_US (1 * G_USEC_PER_SEC)

struct _PaddockSessionLeftovers
{
  GObject             parent_instance;

  char               *session_id;
  GArray             *pinned;    /* PaddockLeftover */
  PaddockCgroup      *cgroup;    /* the session's cgroup, to remove once empty; or NULL */
  guint               poll_id;
  gint64              kill_at;   /* monotonic; 0 until begun */
  gboolean            killed;
  gboolean            warned;
  gint64              last_sweep;
  guint               running;
  /* The state the session goes to once they are gone; the earlier
   * daemon's record, kept as it is while they are ended; and the Stop and
   * Destroy calls (PaddockStopWaiter) that wait for that. */
  char               *final_state;
  JsonNode           *record;
  GPtrArray          *waiters;
};

enum {
  SIGNAL_PIN_AGAIN,
  SIGNAL_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (PaddockSessionLeftovers, paddock_session_leftovers, G_TYPE_OBJECT)

gboolean
_paddock_leftover_pin (GArray  *pinned,
                       pid_t    pid,
                       guint64  start_time)
{
  PaddockLeftover leftover = { paddock_compat_pidfd_open (pid), pid, 0 };  /* CLOEXEC, always */

  if (leftover.pidfd < 0)
    return FALSE;
  /* Read after the pidfd and before the check that it still runs: then
   * it is the start time of the process pinned, not of a later one. */
  leftover.start_time = paddock_compat_proc_start_time ((guint32) pid);
  /* Readable: it has exited already (a zombie waiting for its parent). */
  if ((start_time != 0 && leftover.start_time != start_time) ||
      poll (&(struct pollfd) { .fd = leftover.pidfd, .events = POLLIN }, 1, 0) != 0)
    {
      close (leftover.pidfd);
      return FALSE;
    }
  g_array_append_val (pinned, leftover);
  return TRUE;
}

gboolean
_paddock_leftover_is_pinned (GArray *pinned,
                             pid_t   pid)
{
  for (guint i = 0; i < pinned->len; i++)
    if (g_array_index (pinned, PaddockLeftover, i).pid == pid)
      return TRUE;
  return FALSE;
}

/* Of the pinned from index @first on, keeps those whose pid is in
 * @relisted. */
static void
keep_relisted (GArray *pinned,
               guint   first,
               GArray *relisted)
{
  for (guint i = first; i < pinned->len;)
    {
      const PaddockLeftover *leftover = &g_array_index (pinned, PaddockLeftover, i);
      gboolean listed = FALSE;

      for (guint j = 0; j < relisted->len && !listed; j++)
        listed = g_array_index (relisted, pid_t, j) == leftover->pid;
      if (listed)
        i++;
      else
        {
          close (leftover->pidfd);
          g_array_remove_index_fast (pinned, i);
        }
    }
}

void
_paddock_leftover_pin_listed (GArray                  *pinned,
                              PaddockLeftoverListFunc  list,
                              gpointer                 source)
{
  g_autoptr(GArray) listed = list (source);
  g_autoptr(GArray) relisted = NULL;
  guint first = pinned->len;

  for (guint i = 0; i < listed->len; i++)
    if (!_paddock_leftover_is_pinned (pinned, g_array_index (listed, pid_t, i)))
      _paddock_leftover_pin (pinned, g_array_index (listed, pid_t, i), 0);
  /* Pinned first, listed again after: a pid that changed hands in between
   * is not the session's any more, and its pidfd (the old process's)
   * reaches no one else. */
  relisted = list (source);
  keep_relisted (pinned, first, relisted);
}

static void
close_pinned (GArray *pinned)
{
  for (guint i = 0; i < pinned->len; i++)
    close (g_array_index (pinned, PaddockLeftover, i).pidfd);
  g_array_set_size (pinned, 0);
}

static GPtrArray *
new_waiters (void)
{
  return g_ptr_array_new_with_free_func ((GDestroyNotify) paddock_stop_waiter_free);
}

static void
paddock_session_leftovers_dispose (GObject *object)
{
  PaddockSessionLeftovers *self = PADDOCK_SESSION_LEFTOVERS (object);

  /* Its poll points at us: it goes with the other sources. */
  g_clear_handle_id (&self->poll_id, g_source_remove);
  /* Calls still waiting are told the session went away. */
  if (self->waiters != NULL)
    g_ptr_array_set_size (self->waiters, 0);

  G_OBJECT_CLASS (paddock_session_leftovers_parent_class)->dispose (object);
}

static void
paddock_session_leftovers_finalize (GObject *object)
{
  PaddockSessionLeftovers *self = PADDOCK_SESSION_LEFTOVERS (object);

  close_pinned (self->pinned);
  g_array_unref (self->pinned);
  g_clear_pointer (&self->cgroup, paddock_cgroup_free);
  g_clear_pointer (&self->waiters, g_ptr_array_unref);
  g_clear_pointer (&self->record, json_node_unref);
  g_free (self->final_state);
  g_free (self->session_id);

  G_OBJECT_CLASS (paddock_session_leftovers_parent_class)->finalize (object);
}

static void
paddock_session_leftovers_class_init (PaddockSessionLeftoversClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_session_leftovers_dispose;
  object_class->finalize = paddock_session_leftovers_finalize;

  signals[SIGNAL_PIN_AGAIN] = g_signal_new ("pin-again", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                            0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
}

static void
paddock_session_leftovers_init (PaddockSessionLeftovers *self)
{
  self->waiters = new_waiters ();
}

PaddockSessionLeftovers *
paddock_session_leftovers_new (const char    *session_id,
                               GArray        *pinned,
                               PaddockCgroup *cgroup,
                               const char    *final_state,
                               JsonNode      *record)
{
  PaddockSessionLeftovers *self = g_object_new (PADDOCK_TYPE_SESSION_LEFTOVERS, NULL);

  self->session_id = g_strdup (session_id);
  self->pinned = pinned;
  self->cgroup = cgroup;
  self->running = pinned->len;
  self->final_state = g_strdup (final_state);
  self->record = json_node_ref (record);
  return self;
}

guint
paddock_session_leftovers_get_running (PaddockSessionLeftovers *self)
{
  return self->running;
}

const char *
paddock_session_leftovers_get_final_state (PaddockSessionLeftovers *self)
{
  return self->final_state;
}

/* The earlier daemon's record stays as it is until they are gone, so that
 * a daemon killed meanwhile checks them again, with one member added:
 * every process pinned now, by pid and start time. A later daemon finds
 * them by that alone where nothing else names them: the agent that led
 * them may be gone (SIGTERM ended it), and without a cgroup the listing of
 * its process session starts from it. */
void
paddock_session_leftovers_save (PaddockSessionLeftovers *self,
                                const char              *record_path)
{
  GArray *pinned = self->pinned;
  g_autoptr(GArray) named = g_array_sized_new (FALSE, FALSE, sizeof (PaddockSessionRecordProcess), pinned->len);

  for (guint i = 0; i < pinned->len; i++)
    {
      const PaddockLeftover *leftover = &g_array_index (pinned, PaddockLeftover, i);
      PaddockSessionRecordProcess process = { leftover->pid, leftover->start_time };

      g_array_append_val (named, process);
    }
  paddock_record_writer_replace (record_path,
                                 paddock_session_record_to_json_with_leftovers (self->record,
                                                                                (const PaddockSessionRecordProcess *) named->data,
                                                                                named->len));
}

static void
signal_pinned (PaddockSessionLeftovers *self,
               int                      signum)
{
  for (guint i = 0; i < self->pinned->len; i++)
    paddock_compat_pidfd_send_signal (g_array_index (self->pinned, PaddockLeftover, i).pidfd, signum);
}

/* Pins what of the session runs now and is not pinned yet: found through
 * the session's own listing, and its cgroup's (which nobody leaves). */
static void
pin_again (PaddockSessionLeftovers *self)
{
  g_signal_emit (self, signals[SIGNAL_PIN_AGAIN], 0, self->pinned);
  if (self->cgroup != NULL)
    _paddock_leftover_pin_listed (self->pinned, (PaddockLeftoverListFunc) paddock_cgroup_list_pids, self->cgroup);
}

/* SIGKILL to everything of the session, found again: what was pinned, and
 * whatever it forked since. */
static void
kill_all (PaddockSessionLeftovers *self)
{
  pin_again (self);
  if (self->cgroup != NULL)
    paddock_cgroup_kill (self->cgroup);
  signal_pinned (self, SIGKILL);
}

/* Whether a process runs in @cgroup or below it ("populated 1" in
 * cgroup.events); TRUE when that cannot be read. */
static gboolean
cgroup_populated (PaddockCgroup *cgroup)
{
  g_autofree char *events_path = g_build_filename (paddock_cgroup_get_path (cgroup), "cgroup.events", NULL);
  g_autofree char *events = NULL;

  if (!g_file_get_contents (events_path, &events, NULL, NULL))
    return TRUE;
  return strstr (events, "populated 0") == NULL;
}

/* Drops the pidfds of processes that have exited (readable pidfd);
 * returns how many still run. */
static guint
forget_exited (GArray *pinned)
{
  g_autofree struct pollfd *polls = g_new0 (struct pollfd, MAX (pinned->len, 1));
  guint i = 0;

  for (guint j = 0; j < pinned->len; j++)
    {
      polls[j].fd = g_array_index (pinned, PaddockLeftover, j).pidfd;
      polls[j].events = POLLIN;
    }
  if (pinned->len > 0 && poll (polls, pinned->len, 0) < 0)
    return pinned->len;

  /* Walked from the end: removal moves the last element into the hole. */
  for (i = pinned->len; i-- > 0;)
    if (polls[i].revents != 0)
      {
        close (g_array_index (pinned, PaddockLeftover, i).pidfd);
        g_array_remove_index_fast (pinned, i);
      }
  return pinned->len;
}

/* They outlived their SIGKILL by as long as Stop waits: the Stop/Destroy
 * calls waiting for them get an error. */
static void
answer_survived (PaddockSessionLeftovers *self,
                 guint                    running)
{
  g_autoptr(GPtrArray) waiters = NULL;

  if (self->waiters->len == 0)
    return;

  waiters = g_steal_pointer (&self->waiters);
  self->waiters = new_waiters ();
  for (guint i = 0; i < waiters->len; i++)
    {
      PaddockStopWaiter *waiter = g_ptr_array_index (waiters, i);

      g_dbus_method_invocation_return_error (g_steal_pointer (&waiter->invocation),
                                             PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                                             "%u process(es) of the session survived SIGKILL", running);
    }
}

static gboolean
paddock_session_leftovers_poll_cb (gpointer user_data)
{
  PaddockSessionLeftovers *self = user_data;
  gint64 now = g_get_monotonic_time ();
  guint running;

  if (!self->killed && now >= self->kill_at)
    {
      self->killed = TRUE;
      g_message ("Session %s: SIGKILL to what an earlier daemon left of it", self->session_id);
    }
  /* Every tick after the grace (every second once it is clear that
   * something does not die): anything forked since the last sweep gets its
   * SIGKILL too. */
  if (self->killed && (!self->warned || now - self->last_sweep >= LEFTOVERS_SLOW_SWEEP_US))
    {
      self->last_sweep = now;
      kill_all (self);
    }

  running = forget_exited (self->pinned);
  /* The last pinned process gone within the grace: whatever it forked
   * since is found before the session is said to be over. */
  if (running == 0 && !self->killed)
    {
      pin_again (self);
      running = forget_exited (self->pinned);
    }
  /* A cgroup lives on until the kernel has emptied it. One that empty
   * still cannot go (a cgroup made below it by the agent, as root) is left
   * where it is: nothing runs in it. */
  if (running == 0 && self->cgroup != NULL)
    {
      /* Read first: empty before the rmdir, then not a process still
       * exiting that made it fail. */
      gboolean populated = cgroup_populated (self->cgroup);

      if (paddock_cgroup_remove (self->cgroup))
        g_clear_pointer (&self->cgroup, paddock_cgroup_free);
      else if (!populated)
        {
          g_message ("Session %s: its cgroup %s is empty but cannot be removed (%s); left there",
                     self->session_id, paddock_cgroup_get_path (self->cgroup), g_strerror (errno));
          g_clear_pointer (&self->cgroup, paddock_cgroup_free);
        }
    }

  if (running == 0 && self->cgroup == NULL)
    {
      /* The session lets go of us as it is told. */
      g_autoptr(PaddockSessionLeftovers) hold = g_object_ref (self);

      self->poll_id = 0;
      self->running = 0;
      g_message ("Session %s was left running by an earlier daemon: it ended", self->session_id);
      g_signal_emit (self, signals[SIGNAL_CHANGED], 0, 0u);
      return G_SOURCE_REMOVE;
    }

  if (self->killed && !self->warned && now >= self->kill_at + LEFTOVERS_KILL_WARN_US)
    {
      self->warned = TRUE;
      g_message ("Session %s: %u process(es) left by an earlier daemon still run %d s after SIGKILL; "
                 "still watching them", self->session_id, running,
                 (int) (LEFTOVERS_KILL_WARN_US / G_USEC_PER_SEC));
    }
  /* As Stop answers for a session's own processes after as long: a Stop
   * or Destroy waiting for these is told they survived SIGKILL, rather
   * than left waiting for as long as they hang (they are still watched,
   * and the session says "stopped" once they are gone). */
  if (self->warned)
    answer_survived (self, MAX (running, 1));

  if (running != self->running)
    {
      self->running = running;
      g_signal_emit (self, signals[SIGNAL_CHANGED], 0, MAX (running, 1));
    }
  return G_SOURCE_CONTINUE;
}

void
paddock_session_leftovers_begin (PaddockSessionLeftovers *self,
                                  gint64                   kill_at)
{
  g_return_if_fail (self->poll_id == 0);

  self->kill_at = kill_at;
  g_message ("Session %s was left running by an earlier daemon: SIGTERM to its %u process(es)%s",
             self->session_id, self->pinned->len, self->cgroup != NULL ? " and its cgroup" : "");
  if (self->cgroup != NULL)
    paddock_cgroup_signal (self->cgroup, SIGTERM);
  signal_pinned (self, SIGTERM);
  self->poll_id = g_timeout_add (LEFTOVERS_POLL_MS, paddock_session_leftovers_poll_cb, self);
}

/* Stop or Destroy of the session: it waits for them to be gone, and a
 * shorter grace wins. */
void
paddock_session_leftovers_wait (PaddockSessionLeftovers *self,
                                GDBusMethodInvocation   *invocation,
                                guint                    grace_seconds,
                                gboolean                 destroy)
{
  gint64 kill_at;

  g_ptr_array_add (self->waiters, paddock_stop_waiter_new (invocation, destroy, g_get_monotonic_time ()));
  kill_at = g_get_monotonic_time () + (gint64) grace_seconds * G_USEC_PER_SEC;
  self->kill_at = self->kill_at == 0 ? kill_at : MIN (self->kill_at, kill_at);
}

/* The calls waiting for them (PaddockStopWaiter), once they are gone. */
GPtrArray *
paddock_session_leftovers_take_waiters (PaddockSessionLeftovers *self)
{
  GPtrArray *waiters = g_steal_pointer (&self->waiters);

  self->waiters = new_waiters ();
  return waiters;
}

/* The daemon is going: no grace left, and nobody to watch the end. The
 * session's record still names the processes, so the next daemon checks
 * again that they are gone. */
void
paddock_session_leftovers_kill_now (PaddockSessionLeftovers *self)
{
  gint64 deadline = g_get_monotonic_time () + G_USEC_PER_SEC;

  g_clear_handle_id (&self->poll_id, g_source_remove);
  kill_all (self);

  /* As for a live session: wait (briefly) for the kernel to empty the
   * cgroup, so that it can go too rather than linger. */
  while (self->cgroup != NULL && g_get_monotonic_time () < deadline)
    {
      if (paddock_cgroup_remove (self->cgroup))
        g_clear_pointer (&self->cgroup, paddock_cgroup_free);
      else
        g_usleep (5 * 1000);
    }
}
