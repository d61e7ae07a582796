/* paddock-spare-sandbox-none.c — the portable build has no spare sandbox
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Without the Linux executor (-Dlinux_executor=false) there is no
 * paddock-sandbox helper to make ahead, so the manager never finds one
 * ready: paddock_spare_sandbox_fits() and _take() always say no and a
 * session takes the ordinary way (which, without a helper, refuses the
 * safe profile with PADDOCK_ERROR_NOT_ENFORCED). The same API as
 * paddock-spare-sandbox.c so the manager and the session need no #if.
 */

#include "config.h"

#include "paddock-spare-sandbox.h"

struct _PaddockSpareSandbox {
  char *helper;
};

PaddockSpareSandbox *
paddock_spare_sandbox_new (const char *helper,
                           const char *cgroup_parent)
{
  PaddockSpareSandbox *self = g_new0 (PaddockSpareSandbox, 1);

  self->helper = g_strdup (helper);
  return self;
}

void
paddock_spare_sandbox_refill (PaddockSpareSandbox *self,
                              const char          *net_mode,
                              guint16              proxy_port,
                              int                  seccomp_fd,
                              const char          *cgroup_name,
                              const char          *hold_dir)
{
  g_return_if_fail (self != NULL);
}

gboolean
paddock_spare_sandbox_fits (PaddockSpareSandbox *self,
                            const char          *net_mode)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return FALSE;
}

void
paddock_spare_sandbox_discard (PaddockSpareSandbox *self)
{
  g_return_if_fail (self != NULL);
}

gboolean
paddock_spare_sandbox_take (PaddockSpareSandbox      *self,
                            const char               *net_mode,
                            const char * const       *session_args,
                            PaddockSpareSandboxTaken *out)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return FALSE;
}

void
paddock_spare_sandbox_free (PaddockSpareSandbox *self)
{
  if (self == NULL)
    return;
  g_free (self->helper);
  g_free (self);
}
