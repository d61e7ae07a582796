/* paddock-session-gate.c — what a session's parts ask of it: whether it may be called, runs, is busy; its processes held still, listed
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The parts in daemon/session/ (stage limit, processes, staging, commits,
 * network, ports, the terminal's calls) all need the same few answers of
 * their session, and may not call into it (tests/test-session-circles.sh):
 * the session owns one gate, gives it to each part as it makes it, and is
 * the one to answer its signals ("refuse", "is-live", "freeze",
 * "list-pids"), once for all of them. Whether it was destroyed, the only
 * state that says no to every call, the session sets here, and the gate
 * answers itself. A part or a test can be made with a gate of its own and
 * handlers that play the session.
 */

#include "config.h"

#include <sys/types.h>

#include "paddock-error.h"
#include "paddock-session-gate.h"

struct _PaddockSessionGate
{
  GObject   parent_instance;

  char     *session_id;  /* for the errors */
  gboolean  destroyed;
};

enum {
  SIGNAL_REFUSE,
  SIGNAL_IS_LIVE,
  SIGNAL_FREEZE,
  SIGNAL_LIST_PIDS,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (PaddockSessionGate, paddock_session_gate, G_TYPE_OBJECT)

PaddockSessionGate *
paddock_session_gate_new (const char *session_id)
{
  PaddockSessionGate *self;

  g_return_val_if_fail (session_id != NULL, NULL);

  self = g_object_new (PADDOCK_TYPE_SESSION_GATE, NULL);
  self->session_id = g_strdup (session_id);
  return self;
}

void
paddock_session_gate_set_destroyed (PaddockSessionGate *self)
{
  g_return_if_fail (PADDOCK_IS_SESSION_GATE (self));

  self->destroyed = TRUE;
}

gboolean
paddock_session_gate_check_alive (PaddockSessionGate    *self,
                                  GDBusMethodInvocation *invocation)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_GATE (self), FALSE);

  if (self->destroyed)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
                                             "Session %s was destroyed", self->session_id);
      return FALSE;
    }
  return TRUE;
}

gboolean
paddock_session_gate_refuse (PaddockSessionGate    *self,
                             GDBusMethodInvocation *invocation)
{
  gboolean refused = FALSE;

  g_return_val_if_fail (PADDOCK_IS_SESSION_GATE (self), FALSE);

  g_signal_emit (self, signals[SIGNAL_REFUSE], 0, invocation, &refused);
  return refused;
}

gboolean
paddock_session_gate_is_live (PaddockSessionGate *self)
{
  gboolean live = FALSE;

  g_return_val_if_fail (PADDOCK_IS_SESSION_GATE (self), FALSE);

  g_signal_emit (self, signals[SIGNAL_IS_LIVE], 0, &live);
  return live;
}

gboolean
paddock_session_gate_freeze (PaddockSessionGate *self,
                             gboolean            frozen)
{
  gboolean done = FALSE;

  g_return_val_if_fail (PADDOCK_IS_SESSION_GATE (self), FALSE);

  g_signal_emit (self, signals[SIGNAL_FREEZE], 0, frozen, &done);
  return done;
}

GArray *
paddock_session_gate_list_pids (PaddockSessionGate *self)
{
  GArray *pids = NULL;

  g_return_val_if_fail (PADDOCK_IS_SESSION_GATE (self), NULL);

  g_signal_emit (self, signals[SIGNAL_LIST_PIDS], 0, &pids);
  return pids != NULL ? pids : g_array_new (FALSE, FALSE, sizeof (pid_t));
}

static void
paddock_session_gate_finalize (GObject *object)
{
  PaddockSessionGate *self = PADDOCK_SESSION_GATE (object);

  g_free (self->session_id);

  G_OBJECT_CLASS (paddock_session_gate_parent_class)->finalize (object);
}

static void
paddock_session_gate_class_init (PaddockSessionGateClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = paddock_session_gate_finalize;

  /**
   * PaddockSessionGate::refuse:
   * @invocation: a call that needs the session running
   *
   * TRUE when the handler answered @invocation itself (Busy: what an
   * earlier daemon left of the session is being ended); the call then
   * goes no further. FALSE with no handler.
   */
  signals[SIGNAL_REFUSE] = g_signal_new ("refuse", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                         0, g_signal_accumulator_true_handled, NULL, NULL,
                                         G_TYPE_BOOLEAN, 1, G_TYPE_DBUS_METHOD_INVOCATION);
  /**
   * PaddockSessionGate::is-live:
   *
   * Whether any process of the session may still run. FALSE with no
   * handler.
   */
  signals[SIGNAL_IS_LIVE] = g_signal_new ("is-live", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, g_signal_accumulator_first_wins, NULL, NULL,
                                          G_TYPE_BOOLEAN, 0);
  /**
   * PaddockSessionGate::freeze:
   * @frozen: hold still (TRUE) or let go
   *
   * TRUE when the session's processes were held still (or let go) at
   * once, by its cgroup's freezer; FALSE when it has nothing to freeze
   * with (or, holding, nothing to freeze), and they are not.
   */
  signals[SIGNAL_FREEZE] = g_signal_new ("freeze", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                         0, g_signal_accumulator_first_wins, NULL, NULL,
                                         G_TYPE_BOOLEAN, 1, G_TYPE_BOOLEAN);
  /**
   * PaddockSessionGate::list-pids:
   *
   * Every process of the session now (a #GArray of pid_t, transfer full).
   */
  signals[SIGNAL_LIST_PIDS] = g_signal_new ("list-pids", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                            0, g_signal_accumulator_first_wins, NULL, NULL,
                                            G_TYPE_ARRAY, 0);
}

static void
paddock_session_gate_init (PaddockSessionGate *self)
{
}
