/* paddock-session-impl-private.h — what paddock-session-impl.c declares for itself, ahead of its definitions
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Only paddock-session-impl.c includes this (tests/test-session-circles.sh
 * says so): the session's parts in daemon/session/ are given what they need
 * and report with signals; they never call back into the session.
 */

#pragma once

#include "paddock-cgroup.h"
#include "paddock-domain-rules.h"
#include "paddock-lease.h"
#include "paddock-registry.h"
#include "paddock-reserved-ports.h"
#include "paddock-session-impl.h"
#include "paddock-session-leftovers.h"
#include "paddock-stage.h"

G_BEGIN_DECLS

GStrv         _paddock_session_test_without_layers (void);
gboolean      _paddock_session_impl_is_live   (PaddockSessionImpl    *self);
/* Answers Busy while an earlier daemon's leftovers of the session are
 * being ended (TRUE then); FALSE otherwise, the call not answered. */
gboolean      _paddock_session_impl_refuse_leftovers (PaddockSessionImpl    *self,
                                                      GDBusMethodInvocation *invocation);
gboolean      _paddock_session_impl_freeze    (PaddockSessionImpl    *self,
                                               gboolean               frozen);

G_END_DECLS
