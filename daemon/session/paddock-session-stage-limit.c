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
 * Made with the session, it measures only between _begin() (the session
 * runs with a stage) and _close(). It never calls into the session: it
 * asks the session's gate (paddock-session-gate.c) whether a process may
 * still run, to hold its cgroup still or let it go (FALSE when there is
 * nothing to freeze with) and for its processes; it publishes the Stage
 * property and StageFull on the skeleton it is attached to, says what the
 * stage is now ("changed") and a limit SetStageLimit set ("limit-set", for
 * the record), so that it can be made and tested without a session or a
 * bus.
 */

#include "config.h"

#include <signal.h>

#include "paddock-error.h"
#include "paddock-record-writer.h"
#include "paddock-session-calls.h"
#include "paddock-session-stage-limit.h"
#include "paddock-stage-guard.h"

struct _PaddockSessionStageLimit
{
  GObject             parent_instance;

  PaddockSessionCallHandlers calls;  /* its handle-* handler on the session's skeleton */

  char               *session_id;  /* for the log */
  PaddockSessionGate *gate;
  PaddockStageGuard  *guard;       /* between _begin() and _close() */
  const char         *paused_by;   /* "cgroup-freezer", "signals" or NULL */
};

enum {
  SIGNAL_CHANGED,
  SIGNAL_LIMIT_SET,
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

static void
signal_listed (PaddockSessionStageLimit *self,
               int                       signum)
{
  g_autoptr(GArray) pids = paddock_session_gate_list_pids (self->gate);

  for (guint i = 0; i < pids->len; i++)
    kill (g_array_index (pids, pid_t, i), signum);
}

static void
hold (PaddockSessionStageLimit *self)
{
  if (paddock_session_gate_freeze (self->gate, TRUE))
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
    paddock_session_gate_freeze (self->gate, FALSE);
  else
    signal_listed (self, SIGCONT);
  self->paused_by = NULL;
}

/* The Stage property, and StageFull when it just became full, on the
 * skeleton it is attached to (if any). */
static void
publish (PaddockSessionStageLimit *self,
         GVariant                 *stage,
         gboolean                  newly_held)
{
  if (self->calls.skeleton == NULL)
    return;
  paddock_ipc_session1_set_stage (self->calls.skeleton, stage);
  if (newly_held)
    paddock_ipc_session1_emit_stage_full (self->calls.skeleton, stage);
}

static void
guard_changed_cb (PaddockStageGuard        *guard,
                  PaddockSessionStageLimit *self)
{
  g_autoptr(GVariant) stage = NULL;
  gboolean full = paddock_stage_guard_is_full (guard);
  gboolean newly_held = FALSE;
  gboolean live = FALSE;

  if (full && self->paused_by == NULL)
    live = paddock_session_gate_is_live (self->gate);
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

  stage = g_variant_ref_sink (stage_variant (self));
  publish (self, stage, newly_held);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0, stage, newly_held);
}

/* A session's stage limit, measuring nothing until _begin(). */
PaddockSessionStageLimit *
paddock_session_stage_limit_new (const char         *session_id,
                                 PaddockSessionGate *gate)
{
  PaddockSessionStageLimit *self;

  g_return_val_if_fail (session_id != NULL, NULL);
  g_return_val_if_fail (PADDOCK_IS_SESSION_GATE (gate), NULL);

  self = g_object_new (PADDOCK_TYPE_SESSION_STAGE_LIMIT, NULL);
  self->session_id = g_strdup (session_id);
  self->gate = g_object_ref (gate);
  return self;
}

/* The session runs with its stage at @stage_root: bounded by @limit (0:
 * the default) from now on, the Stage property published at once. */
void
paddock_session_stage_limit_begin (PaddockSessionStageLimit *self,
                                   const char               *stage_root,
                                   guint64                   limit)
{
  g_autoptr(GVariant) stage = NULL;

  g_return_if_fail (PADDOCK_IS_SESSION_STAGE_LIMIT (self));
  g_return_if_fail (stage_root != NULL);
  g_return_if_fail (self->guard == NULL);

  self->guard = paddock_stage_guard_new (stage_root, limit != 0 ? limit : PADDOCK_STAGE_LIMIT_DEFAULT,
                                         PADDOCK_STAGE_RESERVE_DEFAULT);
  g_signal_connect (self->guard, "changed", G_CALLBACK (guard_changed_cb), self);
  stage = g_variant_ref_sink (stage_variant (self));
  publish (self, stage, FALSE);
  paddock_stage_guard_start (self->guard);
}

/* The Stage property's value now (floating); NULL before _begin(). */
GVariant *
paddock_session_stage_limit_dup_stage (PaddockSessionStageLimit *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_STAGE_LIMIT (self), NULL);

  return self->guard != NULL ? stage_variant (self) : NULL;
}

/* The session stops: its processes go on (held still, they would not see
 * their SIGTERM: letting go asks the gate to thaw), and the stage is no
 * longer measured, until the next _begin(). */
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

/* SetStageLimit's new limit, checked; Busy while nothing is measured (the
 * session does not run, or stages nothing). */
gboolean
paddock_session_stage_limit_set_limit (PaddockSessionStageLimit  *self,
                                       guint64                    limit,
                                       GError                   **error)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_STAGE_LIMIT (self), FALSE);

  if (limit < PADDOCK_STAGE_LIMIT_MIN || limit > PADDOCK_STAGE_LIMIT_MAX)
    {
      g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                           "SetStageLimit: argument “limit” is 1 MiB to 16 TiB");
      return FALSE;
    }
  if (self->guard == NULL)
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

/* SetStageLimit: the new limit holds at once and is the session's
 * ("limit-set": its owner records it); the answer comes once every record
 * written so far (the session's, with the new limit) is on disk: a daemon
 * killed after the answer leaves the limit to the next one, which bounds
 * the adopted session's stage by it again. */
static gboolean
handle_set_stage_limit (PaddockIpcSession1       *session,
                        GDBusMethodInvocation    *invocation,
                        guint64                   limit,
                        PaddockSessionStageLimit *self)
{
  g_autoptr(GError) error = NULL;

  if (!paddock_session_stage_limit_set_limit (self, limit, &error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  g_signal_emit (self, signals[SIGNAL_LIMIT_SET], 0, limit);
  paddock_record_writer_flush_async (NULL, stage_limit_kept_cb, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* From now on it answers SetStageLimit on @skeleton itself (the session's
 * D-Bus object leaves it to it) and publishes the Stage property there;
 * the handler is disconnected when it goes, or when the skeleton does. */
void
paddock_session_stage_limit_attach (PaddockSessionStageLimit *self,
                                    PaddockIpcSession1       *skeleton)
{
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-set-stage-limit",
                                         G_CALLBACK (handle_set_stage_limit), self);
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

  paddock_session_call_handlers_clear (&self->calls);

  G_OBJECT_CLASS (paddock_session_stage_limit_parent_class)->dispose (object);
}

static void
paddock_session_stage_limit_finalize (GObject *object)
{
  PaddockSessionStageLimit *self = PADDOCK_SESSION_STAGE_LIMIT (object);

  g_free (self->session_id);
  g_clear_object (&self->gate);

  G_OBJECT_CLASS (paddock_session_stage_limit_parent_class)->finalize (object);
}

static void
paddock_session_stage_limit_class_init (PaddockSessionStageLimitClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_session_stage_limit_dispose;
  object_class->finalize = paddock_session_stage_limit_finalize;

  /**
   * PaddockSessionStageLimit::changed:
   * @stage: the Stage property's value now (a{sv})
   * @newly_held: the stage just became full and the session was held still
   *
   * What the skeleton it is attached to was just told (the Stage
   * property, and StageFull when @newly_held).
   */
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 2,
                                          G_TYPE_VARIANT, G_TYPE_BOOLEAN);
  /**
   * PaddockSessionStageLimit::limit-set:
   * @limit: the limit SetStageLimit just set, in bytes
   *
   * The owner records it, before the call is answered (once on disk).
   */
  signals[SIGNAL_LIMIT_SET] = g_signal_new ("limit-set", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                            0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT64);
}

static void
paddock_session_stage_limit_init (PaddockSessionStageLimit *self)
{
}
