/* paddock-session-startup.c — a sandboxed session's start: its boundary looked at in a thread, an end that comes meanwhile held back
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A sandboxed session's boundary is looked at as it starts (~0.5 ms of
 * reading /proc) in a thread, not on the main loop: that goes on relaying
 * the agent's first output, to a viewer attached at create among others,
 * and serving every other client. The session runs, and its creator is
 * answered, once the look is done ("looked"). Not cancellable: it reads a
 * few files of /proc and ends; whether its result is still wanted is
 * decided when it is back. The sandbox may end while it looks: its end
 * comes after its start ("ended").
 */

#include "config.h"

#include "paddock-session-startup.h"

struct _PaddockSessionStartup
{
  GObject   parent_instance;

  gboolean  looking;              /* at the boundary, in a thread */
  gpointer  owner;                /* a reference, while it looks */
  gboolean  end_deferred;         /* the sandbox ended while looking: */
  int       deferred_wait_status; /* its wait status */
};

enum {
  SIGNAL_LOOKED,
  SIGNAL_ENDED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (PaddockSessionStartup, paddock_session_startup, G_TYPE_OBJECT)

static void
paddock_session_startup_looked_cb (GObject      *source,
                                   GAsyncResult *result,
                                   gpointer      user_data)
{
  /* look()'s references, dropped here, on the main thread. */
  g_autoptr(PaddockSessionStartup) self = user_data;
  g_autoptr(GObject) owner = g_steal_pointer (&self->owner);
  g_autoptr(PaddockBoundaryLook) look = paddock_boundary_look_finish (result);

  self->looking = FALSE;
  g_signal_emit (self, signals[SIGNAL_LOOKED], 0, look);
  /* The sandbox ended while we looked: now that the session ran (or was
   * refused), its end. */
  if (self->end_deferred)
    {
      self->end_deferred = FALSE;
      g_signal_emit (self, signals[SIGNAL_ENDED], 0, self->deferred_wait_status);
    }
}

void
paddock_session_startup_look (PaddockSessionStartup *self,
                              PaddockBoundaryLook   *look,
                              gpointer               owner)
{
  g_return_if_fail (PADDOCK_IS_SESSION_STARTUP (self));
  g_return_if_fail (!self->looking);

  /* The references are the callback's, let go of on this thread (see
   * paddock_boundary_look_run_in_thread()). */
  self->looking = TRUE;
  self->owner = g_object_ref (owner);
  paddock_boundary_look_run_in_thread (look, paddock_session_startup_looked_cb, g_object_ref (self));
}

gboolean
paddock_session_startup_is_looking (PaddockSessionStartup *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_STARTUP (self), FALSE);

  return self->looking;
}

gboolean
paddock_session_startup_defer_end (PaddockSessionStartup *self,
                                   int                    wait_status)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_STARTUP (self), FALSE);

  if (!self->looking)
    return FALSE;
  self->end_deferred = TRUE;
  self->deferred_wait_status = wait_status;
  return TRUE;
}

static void
paddock_session_startup_class_init (PaddockSessionStartupClass *klass)
{
  signals[SIGNAL_LOOKED] = g_signal_new ("looked", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
  signals[SIGNAL_ENDED] = g_signal_new ("ended", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                        0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT);
}

static void
paddock_session_startup_init (PaddockSessionStartup *self)
{
}

PaddockSessionStartup *
paddock_session_startup_new (void)
{
  return g_object_new (PADDOCK_TYPE_SESSION_STARTUP, NULL);
}
