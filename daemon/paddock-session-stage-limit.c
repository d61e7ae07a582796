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
 */

#include "config.h"

#include <signal.h>

#include "paddock-error.h"
#include "paddock-record-writer.h"
#include "paddock-session-impl-private.h"
#include "paddock-stage-guard.h"
#include "paddock-stage.h"

struct _PaddockSessionStageLimit
{
  PaddockSessionImpl *session;   /* owns us */
  PaddockStageGuard  *guard;
  const char         *paused_by; /* "cgroup-freezer", "signals" or NULL */
};

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
  g_autoptr(GArray) pids = _paddock_session_impl_list_pids (self->session);

  for (guint i = 0; i < pids->len; i++)
    kill (g_array_index (pids, pid_t, i), signum);
}

static void
hold (PaddockSessionStageLimit *self)
{
  if (_paddock_session_impl_freeze (self->session, TRUE))
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
    _paddock_session_impl_freeze (self->session, FALSE);
  else
    signal_listed (self, SIGCONT);
  self->paused_by = NULL;
}

static void
guard_changed_cb (PaddockStageGuard        *guard,
                  PaddockSessionStageLimit *self)
{
  PaddockIpcSession1 *session = PADDOCK_IPC_SESSION1 (self->session);
  gboolean full = paddock_stage_guard_is_full (guard);
  gboolean newly_held = FALSE;

  if (full && self->paused_by == NULL && _paddock_session_impl_is_live (self->session))
    {
      hold (self);
      newly_held = TRUE;
      g_message ("Session %s is held still (%s): %s", paddock_ipc_session1_get_id (session), self->paused_by,
                 paddock_stage_guard_get_reason (guard));
    }
  else if (!full && self->paused_by != NULL)
    {
      let_go (self);
      g_message ("Session %s goes on: its stage fits again", paddock_ipc_session1_get_id (session));
    }

  paddock_ipc_session1_set_stage (session, stage_variant (self));
  if (newly_held)
    paddock_ipc_session1_emit_stage_full (session, stage_variant (self));
}

/* Measures the stage of @session (which has one and runs) from now on. */
PaddockSessionStageLimit *
_paddock_session_stage_limit_new (PaddockSessionImpl *session,
                                  guint64             limit)
{
  PaddockSessionStageLimit *self = g_new0 (PaddockSessionStageLimit, 1);
  PaddockStage *stage = _paddock_session_impl_get_stage (session);

  g_return_val_if_fail (stage != NULL, NULL);

  self->session = session;
  self->guard = paddock_stage_guard_new (paddock_stage_get_root (stage),
                                         limit != 0 ? limit : PADDOCK_STAGE_LIMIT_DEFAULT,
                                         PADDOCK_STAGE_RESERVE_DEFAULT);
  g_signal_connect (self->guard, "changed", G_CALLBACK (guard_changed_cb), self);
  paddock_ipc_session1_set_stage (PADDOCK_IPC_SESSION1 (session), stage_variant (self));
  paddock_stage_guard_start (self->guard);
  return self;
}

/* The session stops: its processes go on (to see their SIGTERM), and the
 * stage is no longer measured. */
void
_paddock_session_stage_limit_free (PaddockSessionStageLimit *self)
{
  if (self == NULL)
    return;
  let_go (self);
  g_signal_handlers_disconnect_by_data (self->guard, self);
  paddock_stage_guard_stop (self->guard);
  g_object_unref (self->guard);
  g_free (self);
}

static void
limit_kept_cb (GObject      *source,
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

gboolean
_paddock_session_impl_handle_set_stage_limit (PaddockIpcSession1    *session,
                                              GDBusMethodInvocation *invocation,
                                              guint64                limit)
{
  PaddockSessionStageLimit *self = _paddock_session_impl_get_stage_limit (PADDOCK_SESSION_IMPL (session));

  if (limit < PADDOCK_STAGE_LIMIT_MIN || limit > PADDOCK_STAGE_LIMIT_MAX)
    {
      g_dbus_method_invocation_return_error_literal (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                                     "SetStageLimit: argument “limit” is 1 MiB to 16 TiB");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (self == NULL)
    {
      g_dbus_method_invocation_return_error_literal (invocation, PADDOCK_ERROR, PADDOCK_ERROR_BUSY,
                                                     "The session does not run, or stages nothing");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  paddock_stage_guard_set_limit (self->guard, limit);
  /* Answered once the record that keeps it is on disk: a daemon killed
   * after the answer leaves the limit to the next one. */
  _paddock_session_impl_keep_stage_limit (PADDOCK_SESSION_IMPL (session), limit);
  paddock_record_writer_flush_async (NULL, limit_kept_cb, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}
