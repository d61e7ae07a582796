/* paddock-session-stop.c — a session's Stop and Destroy: the calls waiting, the grace, the SIGKILL sweeps
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The timing of a session's stop, apart from its processes: the Stop and
 * Destroy calls waiting (a shorter grace, Destroy's 0, wins over one
 * under way), the moment the grace is over, and the poll every 10 ms
 * until nothing is left or what is left outlived its SIGKILL by 10 s. It
 * never calls into the session: each round is a "sweep" signal (the
 * session lists its processes, says whether all are gone, and kills what
 * it listed once the grace is over), and the end is "ended" with how many
 * survived. The session then answers the calls it takes from here.
 * Where the session has a cgroup, a change of its cgroup.events (the
 * last member gone) sweeps at once too, rather than at the next poll:
 * up to 10 ms sooner (issue #23's teardown).
 */

#include "config.h"

#include <glib-unix.h>
#include <unistd.h>

#include "paddock-error.h"
#include "paddock-session-stop.h"

/* After SIGKILL, how long processes may take to vanish before Stop reports
 * survivors instead of waiting for ever. */
#define KILL_TIMEOUT_USEC (10 * G_USEC_PER_SEC)
#define STOP_POLL_MS      10

struct _PaddockSessionStop
{
  GObject    parent_instance;

  GPtrArray *waiters;       /* PaddockStopWaiter: the calls of the stop under way */
  /* A Destroy's calls, from the stop's end until the session's files are
   * gone (NULL otherwise). */
  GPtrArray *destroy_waiters;
  guint      poll_id;
  int        wake_fd;       /* cgroup.events of the stop under way, or -1 */
  guint      wake_id;       /* its G_IO_PRI watch */
  gint64     started;       /* monotonic: when its first call came */
  gint64     kill_at;       /* when the grace is over */
  gboolean   killed;        /* SIGKILL sent at least once */
};

enum {
  SIGNAL_SWEEP,
  SIGNAL_ENDED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (PaddockSessionStop, paddock_session_stop, G_TYPE_OBJECT)

PaddockStopWaiter *
paddock_stop_waiter_new (GDBusMethodInvocation *invocation,
                         gboolean               destroy,
                         gint64                 requested)
{
  PaddockStopWaiter *waiter = g_new0 (PaddockStopWaiter, 1);

  waiter->invocation = invocation;
  waiter->destroy = destroy;
  waiter->requested = requested;
  return waiter;
}

/* A waiter owns the reference to its invocation that the handler was given
 * (the handler returned G_DBUS_METHOD_INVOCATION_HANDLED and kept it), so
 * one still unanswered when the session goes away is answered here: that
 * releases the reference, and the caller is not left waiting. */
void
paddock_stop_waiter_free (PaddockStopWaiter *waiter)
{
  if (waiter->invocation != NULL)
    g_dbus_method_invocation_return_error (g_steal_pointer (&waiter->invocation),
                                           PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                                           "The session went away before it stopped");
  g_free (waiter);
}

static GPtrArray *
new_waiters (void)
{
  return g_ptr_array_new_with_free_func ((GDestroyNotify) paddock_stop_waiter_free);
}

/* No more early sweeps: the stop is over. */
static void
paddock_session_stop_unwake (PaddockSessionStop *self)
{
  g_clear_handle_id (&self->wake_id, g_source_remove);
  if (self->wake_fd >= 0)
    close (self->wake_fd);
  self->wake_fd = -1;
}

static gboolean
paddock_session_stop_poll_cb (gpointer user_data)
{
  PaddockSessionStop *self = user_data;
  /* "ended" may drop the last reference to the session, and ours with it. */
  g_autoptr(PaddockSessionStop) hold = g_object_ref (self);
  gint64 now = g_get_monotonic_time ();
  gboolean was_killed = self->killed;
  gboolean kill = self->killed || now >= self->kill_at;
  gboolean gone = FALSE;
  guint left = 0;

  g_signal_emit (self, signals[SIGNAL_SWEEP], 0, kill, &left, &gone);
  if (gone)
    {
      self->poll_id = 0;
      paddock_session_stop_unwake (self);
      g_signal_emit (self, signals[SIGNAL_ENDED], 0, 0u);
      return G_SOURCE_REMOVE;
    }

  self->killed = kill;
  /* Anything forked since the last sweep got its SIGKILL too; what still
   * runs long after the first is reported, not waited for. */
  if (was_killed && now >= self->kill_at + KILL_TIMEOUT_USEC)
    {
      self->poll_id = 0;
      paddock_session_stop_unwake (self);
      g_signal_emit (self, signals[SIGNAL_ENDED], 0, left);
      return G_SOURCE_REMOVE;
    }

  return G_SOURCE_CONTINUE;
}

gboolean
paddock_session_stop_check_grace (guint                  grace_seconds,
                                  GDBusMethodInvocation *invocation)
{
  if (grace_seconds > PADDOCK_SESSION_STOP_GRACE_MAX_SECONDS)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                             "The grace is at most %u seconds",
                                             PADDOCK_SESSION_STOP_GRACE_MAX_SECONDS);
      return FALSE;
    }
  return TRUE;
}

/**
 * paddock_session_stop_add:
 * @invocation: (transfer full): the handler's reference, answered (and so
 *   released) when the stop completes
 * @requested: when the call came (monotonic): the stop's elapsed-ms
 *   counts from there, also for a call that first waited for a restored
 *   session's leftovers to end
 *
 * Returns: %TRUE when this begins a stop (the caller sends its SIGTERM,
 * then calls paddock_session_stop_run()); %FALSE when it joined the one
 * under way, whose grace ends now if this one's ends sooner.
 */
gboolean
paddock_session_stop_add (PaddockSessionStop    *self,
                          GDBusMethodInvocation *invocation,
                          guint                  grace_seconds,
                          gboolean               destroy,
                          gint64                 requested)
{
  gint64 kill_at;

  g_return_val_if_fail (PADDOCK_IS_SESSION_STOP (self), FALSE);

  g_ptr_array_add (self->waiters, paddock_stop_waiter_new (invocation, destroy, 0));
  kill_at = g_get_monotonic_time () + (gint64) grace_seconds * G_USEC_PER_SEC;

  if (self->poll_id != 0)
    {
      /* Already stopping: a shorter grace (Destroy's 0) wins. */
      self->kill_at = MIN (self->kill_at, kill_at);
      return FALSE;
    }

  self->started = requested;
  self->kill_at = kill_at;
  self->killed = FALSE;
  return TRUE;
}

/* One sweep now; then, unless that was the end (nothing left to stop:
 * the session had ended), one every STOP_POLL_MS. */
/* The kernel says the cgroup changed: a sweep now, the poll's timer
 * staying as it was (or going, if that was the end). */
static gboolean
paddock_session_stop_wake_cb (int          fd,
                              GIOCondition condition,
                              gpointer     user_data)
{
  PaddockSessionStop *self = user_data;
  /* "ended" may drop the last reference to the session, and ours with it. */
  g_autoptr(PaddockSessionStop) hold = g_object_ref (self);
  guint timer = self->poll_id;
  gboolean keep = TRUE;
  char events[256];

  /* Read again, or poll() reports the same change for ever; a file that
   * cannot be read again gets this sweep and is watched no more. */
  if (pread (fd, events, sizeof events, 0) < 0)
    {
      self->wake_id = 0;
      keep = FALSE;
    }
  /* Its end removes this watch (unwake()); the timer is ours to remove. */
  if (timer != 0 && paddock_session_stop_poll_cb (self) == G_SOURCE_REMOVE)
    g_source_remove (timer);
  if (!keep && self->wake_fd == fd)
    {
      close (self->wake_fd);
      self->wake_fd = -1;
    }
  return keep ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

/**
 * paddock_session_stop_wake_on:
 * @fd: (transfer full): the session's cgroup.events
 *   (paddock_cgroup_open_events()), or -1
 *
 * Sweeps also whenever @fd changes, for the stop that
 * paddock_session_stop_run() starts next; closed when it is over.
 */
void
paddock_session_stop_wake_on (PaddockSessionStop *self,
                              int                 fd)
{
  g_return_if_fail (PADDOCK_IS_SESSION_STOP (self));

  paddock_session_stop_unwake (self);
  self->wake_fd = fd;
}

void
paddock_session_stop_run (PaddockSessionStop *self)
{
  g_autoptr(PaddockSessionStop) hold = g_object_ref (self);

  g_return_if_fail (PADDOCK_IS_SESSION_STOP (self));

  /* Watched before the first sweep, so that no change falls between. */
  if (self->wake_fd >= 0 && self->wake_id == 0)
    self->wake_id = g_unix_fd_add (self->wake_fd, G_IO_PRI | G_IO_ERR, paddock_session_stop_wake_cb, self);
  if (paddock_session_stop_poll_cb (self) == G_SOURCE_CONTINUE)
    self->poll_id = g_timeout_add (STOP_POLL_MS, paddock_session_stop_poll_cb, self);
}

/* The calls of the stop that ended, for the caller to answer. */
GPtrArray *
paddock_session_stop_take_waiters (PaddockSessionStop *self)
{
  GPtrArray *waiters;

  g_return_val_if_fail (PADDOCK_IS_SESSION_STOP (self), NULL);

  waiters = g_steal_pointer (&self->waiters);
  self->waiters = new_waiters ();
  return waiters;
}

/* The stop is over (SURVIVORS processes left, the session's STATE
 * published): its calls are answered now; but for a Destroy among them
 * once nothing is left, unless the session was destroyed already (from
 * "destroyed" on no Stop or Destroy is taken): then all of them are kept,
 * to be answered once the session's files are gone
 * (paddock_session_stop_take_destroy_waiters()), and TRUE says the session
 * is to be destroyed. */
gboolean
paddock_session_stop_complete (PaddockSessionStop *self,
                               PaddockIpcSession1 *session,
                               const char         *state,
                               guint               survivors)
{
  g_autoptr(GPtrArray) waiters = NULL;
  gboolean destroy = FALSE;

  g_return_val_if_fail (PADDOCK_IS_SESSION_STOP (self), FALSE);

  waiters = paddock_session_stop_take_waiters (self);
  for (guint i = 0; i < waiters->len; i++)
    destroy |= ((PaddockStopWaiter *) g_ptr_array_index (waiters, i))->destroy;

  if (destroy && survivors == 0 && g_strcmp0 (state, "destroyed") != 0)
    {
      g_clear_pointer (&self->destroy_waiters, g_ptr_array_unref);
      self->destroy_waiters = g_steal_pointer (&waiters);
      return TRUE;
    }
  paddock_session_stop_answer (self, session, waiters, state, survivors);
  return FALSE;
}

/* The calls kept by paddock_session_stop_complete() (or NULL), for
 * paddock_session_stop_answer() once the files are gone. */
GPtrArray *
paddock_session_stop_take_destroy_waiters (PaddockSessionStop *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_STOP (self), NULL);

  return g_steal_pointer (&self->destroy_waiters);
}

static GVariant *
stop_result (PaddockSessionStop *self,
             const char         *state,
             guint               survivors)
{
  g_auto(GVariantDict) result = G_VARIANT_DICT_INIT (NULL);
  gint64 elapsed = self->started > 0 ? g_get_monotonic_time () - self->started : 0;

  g_variant_dict_insert (&result, "state", "s", state);
  g_variant_dict_insert (&result, "survivors", "u", survivors);
  g_variant_dict_insert (&result, "elapsed-ms", "t", (guint64) (elapsed / 1000));
  return g_variant_dict_end (&result);
}

/* Answers WAITERS on SESSION's behalf: the session's STATE, or an error
 * when SURVIVORS processes outlived their SIGKILL. */
void
paddock_session_stop_answer (PaddockSessionStop *self,
                             PaddockIpcSession1 *session,
                             GPtrArray          *waiters,
                             const char         *state,
                             guint               survivors)
{
  g_return_if_fail (PADDOCK_IS_SESSION_STOP (self));

  for (guint i = 0; i < waiters->len; i++)
    {
      PaddockStopWaiter *waiter = g_ptr_array_index (waiters, i);

      if (survivors > 0)
        g_dbus_method_invocation_return_error (g_steal_pointer (&waiter->invocation),
                                               PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                                               "%u process(es) of the session survived SIGKILL",
                                               survivors);
      else if (waiter->destroy)
        paddock_ipc_session1_complete_destroy (session, g_steal_pointer (&waiter->invocation),
                                               stop_result (self, state, 0));
      else
        paddock_ipc_session1_complete_stop (session, g_steal_pointer (&waiter->invocation),
                                            stop_result (self, state, 0));
    }
}

/* The session goes: no more sweeps, and the calls still waiting get
 * their answer now. */
void
paddock_session_stop_close (PaddockSessionStop *self)
{
  g_return_if_fail (PADDOCK_IS_SESSION_STOP (self));

  g_clear_handle_id (&self->poll_id, g_source_remove);
  paddock_session_stop_unwake (self);
  g_ptr_array_set_size (self->waiters, 0);
  g_clear_pointer (&self->destroy_waiters, g_ptr_array_unref);
}

static void
paddock_session_stop_dispose (GObject *object)
{
  PaddockSessionStop *self = PADDOCK_SESSION_STOP (object);

  g_clear_handle_id (&self->poll_id, g_source_remove);
  paddock_session_stop_unwake (self);

  G_OBJECT_CLASS (paddock_session_stop_parent_class)->dispose (object);
}

static void
paddock_session_stop_finalize (GObject *object)
{
  PaddockSessionStop *self = PADDOCK_SESSION_STOP (object);

  g_clear_pointer (&self->waiters, g_ptr_array_unref);
  g_clear_pointer (&self->destroy_waiters, g_ptr_array_unref);

  G_OBJECT_CLASS (paddock_session_stop_parent_class)->finalize (object);
}

static void
paddock_session_stop_class_init (PaddockSessionStopClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_session_stop_dispose;
  object_class->finalize = paddock_session_stop_finalize;

  /**
   * PaddockSessionStop::sweep:
   * @kill: whether the grace is over: what is listed gets SIGKILL
   * @left: (out) (type guint): how many processes were listed
   * @gone: (out) (type gboolean): whether every process of the session
   *   is gone, its status known (then nothing is killed)
   *
   * One round of the stop.
   */
  signals[SIGNAL_SWEEP] = g_signal_new ("sweep", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                        0, NULL, NULL, NULL, G_TYPE_NONE, 3,
                                        G_TYPE_BOOLEAN, G_TYPE_POINTER, G_TYPE_POINTER);
  /**
   * PaddockSessionStop::ended:
   * @survivors: how many processes outlived their SIGKILL (0: all gone)
   *
   * The stop is over; its calls are to be answered
   * (paddock_session_stop_take_waiters()).
   */
  signals[SIGNAL_ENDED] = g_signal_new ("ended", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                        0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
}

static void
paddock_session_stop_init (PaddockSessionStop *self)
{
  self->waiters = new_waiters ();
  self->wake_fd = -1;
}

PaddockSessionStop *
paddock_session_stop_new (void)
{
  return g_object_new (PADDOCK_TYPE_SESSION_STOP, NULL);
}
