/* paddock-session-stage-limit.c — a running session held still while its stage is full
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The session's side of paddock-stage-guard.c: while the session runs,
 * its guard measures the stage; when the guard says full, every process
 * of the session is held still — by its cgroup's freezer where it has one
 * (the kernel holds the whole tree at once), by SIGSTOP to each process
 * listed otherwise (a process forked between the listing and the signal
 * may run on; the sweep is made twice) — and the Stage property and the
 * StageFull signal say why. SetStageLimit lets it go on; Stop and Destroy
 * let it go first, so that its processes see their SIGTERM.
 *
 * It never calls into the session: it asks it, by signals, whether a
 * process may still run ("is-live"), to hold its cgroup still or let it go
 * ("freeze", FALSE when there is nothing to freeze with) and for its
 * processes ("list-pids"), and says what the stage is now ("changed"), so
 * that it can be made and tested without a session or a bus.
 */

#include "config.h"

#include <signal.h>

#include "paddock-error.h"
#include "paddock-record-writer.h"
#include "paddock-session-stage-limit.h"
#include "paddock-stage-guard.h"

struct _PaddockSessionStageLimit
{
  GObject            parent_instance;

  char              *session_id;  /* for the log */
  PaddockStageGuard *guard;
  const char        *paused_by;   /* "cgroup-freezer", "signals" or NULL */
};

enum {
  SIGNAL_IS_LIVE,
  SIGNAL_FREEZE,
  SIGNAL_LIST_PIDS,
  SIGNAL_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (PaddockSessionStageLimit, paddock_session_stage_limit, G_TYPE_OBJECT)

static GVariant *
stage_variant (PaddockSessionStageLimit *self)
{
  GVariantDict dict;
  const char *reason = paddock_stage_guard_get_reason (self->guard);

  g_variant_dict_init (&dict, NULL);
  g_variant_dict_insert (&dict, "bytes", "t", paddock_stage_guard_get_used (self->guard));
  g_variant_dict_insert (&dict, "limit", "t", paddock_stage_guard_get_limit (self->guard));
  g_variant_dict_insert (&dict, "full", "b", paddock_stage_guard_is_full (self->guard));
  g_variant_dict_insert (&dict, "reason", "s", reason != NULL ? reason : "");
  g_variant_dict_insert (&dict, "paused", "s", self->paused_by != NULL ? self->paused_by : "");
  return g_variant_dict_end (&dict);
}

static gboolean
freeze (PaddockSessionStageLimit *self,
        gboolean                  frozen)
{
  gboolean done = FALSE;

  g_signal_emit (self, signals[SIGNAL_FREEZE], 0, frozen, &done);
  return done;
}

static void
signal_listed (PaddockSessionStageLimit *self,
               int                       signum)
{
  g_autoptr(GArray) pids = NULL;

  g_signal_emit (self, signals[SIGNAL_LIST_PIDS], 0, &pids);
  for (guint i = 0; pids != NULL && i < pids->len; i++)
    kill (g_array_index (pids, pid_t, i), signum);
}

static void
hold (PaddockSessionStageLimit *self)
{
  if (freeze (self, TRUE))
    self->paused_by = "cgroup-freezer";
  else
    {
      /* Twice: a child forked while the first sweep ran is in the second. */
      signal_listed (self, SIGSTOP);
      signal_listed (self, SIGSTOP);
      self->paused_by = "signals";
    }
}

static void
let_go (PaddockSessionStageLimit *self)
{
  if (self->paused_by == NULL)
    return;
  if (g_str_equal (self->paused_by, "cgroup-freezer"))
    freeze (self, FALSE);
  else
    signal_listed (self, SIGCONT);
  self->paused_by = NULL;
}

static void
guard_changed_cb (PaddockStageGuard        *guard,
                  PaddockSessionStageLimit *self)
{
  gboolean full = paddock_stage_guard_is_full (guard);
  gboolean newly_held = FALSE;
  gboolean live = FALSE;

  if (full && self->paused_by == NULL)
    g_signal_emit (self, signals[SIGNAL_IS_LIVE], 0, &live);
  if (full && self->paused_by == NULL && live)
    {
      hold (self);
      newly_held = TRUE;
      g_message ("Session %s is held still (%s): %s", self->session_id, self->paused_by,
                 paddock_stage_guard_get_reason (guard));
    }
  else if (!full && self->paused_by != NULL)
    {
      let_go (self);
      g_message ("Session %s goes on: its stage fits again", self->session_id);
    }

  g_signal_emit (self, signals[SIGNAL_CHANGED], 0, stage_variant (self), newly_held);
}

/* Measures the stage at @stage_root of a running session, once started. */
PaddockSessionStageLimit *
paddock_session_stage_limit_new (const char *session_id,
                                 const char *stage_root,
                                 guint64     limit)
{
  PaddockSessionStageLimit *self;

  g_return_val_if_fail (session_id != NULL, NULL);
  g_return_val_if_fail (stage_root != NULL, NULL);

  self = g_object_new (PADDOCK_TYPE_SESSION_STAGE_LIMIT, NULL);
  self->session_id = g_strdup (session_id);
  self->guard = paddock_stage_guard_new (stage_root, limit != 0 ? limit : PADDOCK_STAGE_LIMIT_DEFAULT,
                                         PADDOCK_STAGE_RESERVE_DEFAULT);
  g_signal_connect (self->guard, "changed", G_CALLBACK (guard_changed_cb), self);
  return self;
}

/* After the owner connected its handlers: its measures begin. */
void
paddock_session_stage_limit_start (PaddockSessionStageLimit *self)
{
  g_return_if_fail (PADDOCK_IS_SESSION_STAGE_LIMIT (self));

  paddock_stage_guard_start (self->guard);
}

/* The Stage property's value now (floating). */
GVariant *
paddock_session_stage_limit_dup_stage (PaddockSessionStageLimit *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_STAGE_LIMIT (self), NULL);

  return stage_variant (self);
}

/* The session stops: its processes go on (to see their SIGTERM), and the
 * stage is no longer measured. Before the owner disconnects: letting go
 * asks it to thaw. */
void
paddock_session_stage_limit_close (PaddockSessionStageLimit *self)
{
  g_return_if_fail (PADDOCK_IS_SESSION_STAGE_LIMIT (self));

  if (self->guard == NULL)
    return;
  let_go (self);
  g_signal_handlers_disconnect_by_data (self->guard, self);
  paddock_stage_guard_stop (self->guard);
  g_clear_object (&self->guard);
}

/* SetStageLimit's new limit, checked; NULL: the session has no limit to
 * change (it does not run, or stages nothing). */
gboolean
paddock_session_stage_limit_set_limit (PaddockSessionStageLimit  *self,
                                       guint64                    limit,
                                       GError                   **error)
{
  if (limit < PADDOCK_STAGE_LIMIT_MIN || limit > PADDOCK_STAGE_LIMIT_MAX)
    {
      g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                           "SetStageLimit: argument “limit” is 1 MiB to 16 TiB");
      return FALSE;
    }
  if (self == NULL)
    {
      g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_BUSY, "The session does not run, or stages nothing");
      return FALSE;
    }
  paddock_stage_guard_set_limit (self->guard, limit);
  return TRUE;
}

static void
stage_limit_kept_cb (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  GDBusMethodInvocation *invocation = user_data;
  g_autoptr(GError) error = NULL;

  /* The limit holds now either way; only a later daemon would not know it. */
  if (!paddock_record_writer_flush_finish (result, &error))
    g_message ("SetStageLimit: the new limit is not on disk: %s", error->message);
  g_dbus_method_invocation_return_value (invocation, g_variant_new ("()"));
}

/* SetStageLimit's answer, once every record written so far (the session's,
 * with the new limit) is on disk: a daemon killed after the answer leaves
 * the limit to the next one, which bounds the adopted session's stage by it
 * again. */
void
paddock_session_stage_limit_answer_kept (GDBusMethodInvocation *invocation)
{
  paddock_record_writer_flush_async (NULL, stage_limit_kept_cb, invocation);
}

static void
paddock_session_stage_limit_dispose (GObject *object)
{
  PaddockSessionStageLimit *self = PADDOCK_SESSION_STAGE_LIMIT (object);

  if (self->guard != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->guard, self);
      paddock_stage_guard_stop (self->guard);
    }
  g_clear_object (&self->guard);

  G_OBJECT_CLASS (paddock_session_stage_limit_parent_class)->dispose (object);
}

static void
paddock_session_stage_limit_finalize (GObject *object)
{
  PaddockSessionStageLimit *self = PADDOCK_SESSION_STAGE_LIMIT (object);

  g_free (self->session_id);

  G_OBJECT_CLASS (paddock_session_stage_limit_parent_class)->finalize (object);
}

static void
paddock_session_stage_limit_class_init (PaddockSessionStageLimitClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_session_stage_limit_dispose;
  object_class->finalize = paddock_session_stage_limit_finalize;

  /**
   * PaddockSessionStageLimit::is-live:
   *
   * Whether any process of the session may still run: a full stage
   * holds nothing still otherwise. FALSE with no handler.
   */
  signals[SIGNAL_IS_LIVE] = g_signal_new ("is-live", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, g_signal_accumulator_first_wins, NULL, NULL,
                                          G_TYPE_BOOLEAN, 0);
  /**
   * PaddockSessionStageLimit::freeze:
   * @frozen: hold still (TRUE) or let go
   *
   * TRUE when the session's processes were held still (or let go) at
   * once, by its cgroup's freezer; FALSE when it has nothing to freeze
   * with, and they are signalled one by one instead.
   */
  signals[SIGNAL_FREEZE] = g_signal_new ("freeze", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                         0, g_signal_accumulator_first_wins, NULL, NULL,
                                         G_TYPE_BOOLEAN, 1, G_TYPE_BOOLEAN);
  /**
   * PaddockSessionStageLimit::list-pids:
   *
   * Every process of the session now (a #GArray of pid_t).
   */
  signals[SIGNAL_LIST_PIDS] = g_signal_new ("list-pids", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                            0, g_signal_accumulator_first_wins, NULL, NULL,
                                            G_TYPE_ARRAY, 0);
  /**
   * PaddockSessionStageLimit::changed:
   * @stage: the Stage property's value now (a{sv})
   * @newly_held: the stage just became full and the session was held still
   *
   * The owner publishes @stage, and says StageFull when @newly_held.
   */
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 2,
                                          G_TYPE_VARIANT, G_TYPE_BOOLEAN);
}

static void
paddock_session_stage_limit_init (PaddockSessionStageLimit *self)
{
}
