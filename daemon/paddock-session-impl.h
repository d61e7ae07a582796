/* paddock-session-impl.h — org.paddock.Session1: one agent on a live PTY
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include "paddock-spare-sandbox.h"
#include "paddock-domain-rules.h"
#include "paddock-ipc-generated.h"
#include "paddock-session-config.h"
#include "paddock-session-network.h"
#include "paddock-session-record.h"
#include "paddock-stage.h"

G_BEGIN_DECLS

typedef struct _PaddockSessionImpl PaddockSessionImpl;

/* Called once: with NULL when the session runs, or with why it could not
 * start (the session is then finished and must be dropped). */
typedef void (*PaddockSessionReadyFunc) (PaddockSessionImpl *session,
                                         const GError       *error,
                                         gpointer            user_data);

#define PADDOCK_TYPE_SESSION_IMPL (paddock_session_impl_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSessionImpl, paddock_session_impl, PADDOCK, SESSION_IMPL, PaddockIpcSession1Skeleton)

PaddockSessionImpl *paddock_session_impl_new         (const char                 *id,
                                                      const PaddockSessionConfig *config);
PaddockSessionImpl *paddock_session_impl_new_from_record (const char              *record_path,
                                                          const char              *helper,
                                                          GError                 **error);
PaddockSessionImpl *paddock_session_impl_new_from_loaded_record (const PaddockSessionRecord *record,
                                                                 const char                 *record_path,
                                                                 const char                 *helper);
void                paddock_session_impl_offer_spare_sandbox  (PaddockSessionImpl  *self,
                                                               PaddockSpareSandbox *spare);
void                paddock_session_impl_refill_spare_sandbox (PaddockSessionImpl  *self,
                                                               PaddockSpareSandbox *spare,
                                                               const char          *next_id);
gboolean            paddock_session_impl_start       (PaddockSessionImpl         *self,
                                                      PaddockSessionReadyFunc     ready,
                                                      gpointer                    user_data,
                                                      GError                    **error);
void                paddock_session_impl_attach_terminal (PaddockSessionImpl     *self,
                                                          int                     fd);
const char         *paddock_session_impl_get_id      (PaddockSessionImpl         *self);
const char         *paddock_session_impl_get_owner   (PaddockSessionImpl         *self);
const char         *paddock_session_impl_get_agent   (PaddockSessionImpl         *self);
const char         *paddock_session_impl_get_object_path (PaddockSessionImpl     *self);
GVariant           *paddock_session_impl_describe    (PaddockSessionImpl         *self);
guint               paddock_session_impl_count_processes (PaddockSessionImpl     *self);
void                paddock_session_impl_kill_now    (PaddockSessionImpl         *self);
void                paddock_session_impl_end_leftovers (PaddockSessionImpl       *self,
                                                        gint64                    kill_at);
void                paddock_session_impl_abandon_start (PaddockSessionImpl       *self,
                                                        const GError             *error);

gboolean            paddock_session_impl_hand_over           (PaddockSessionImpl *self);

/* For the manager, which makes and ends its sessions: the session's stage
 * (NULL: it stages nothing), its network (with its ports), and whether a
 * keeper of an earlier daemon's was adopted for it. */
PaddockStage          *_paddock_session_impl_get_stage   (PaddockSessionImpl *self);
PaddockSessionNetwork *_paddock_session_impl_get_network (PaddockSessionImpl *self);
gboolean               _paddock_session_impl_is_adopted  (PaddockSessionImpl *self);

G_END_DECLS
