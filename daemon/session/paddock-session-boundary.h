/* paddock-session-boundary.h — a look at a session's boundary, in a thread or not, and the strict check
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-boundary.h"
#include "paddock-session-config.h"

G_BEGIN_DECLS

/* One look (paddock_boundary_observe()) and what it saw: made on the main
 * thread from a copy of everything it reads, so that it can be done in
 * another while the session goes on (and changes). */
typedef struct _PaddockBoundaryLook PaddockBoundaryLook;

/* INPUT gets what a session was created with (CONFIG's, borrowed) and the
 * rest zeroed: the caller adds what it knows now (pid, cgroup, limits).
 * OUT_STAGE_DIR: where its stage would be, for the caller to free. */
void                 paddock_boundary_input_init_for_config (PaddockBoundaryInput       *input,
                                                             const PaddockSessionConfig *config,
                                                             char                      **out_stage_dir);
PaddockBoundaryLook *paddock_boundary_look_new           (const PaddockBoundaryInput *input);
void                 paddock_boundary_look_free          (PaddockBoundaryLook        *look);
void                 paddock_boundary_look_run           (PaddockBoundaryLook        *look);
void                 paddock_boundary_look_run_in_thread (PaddockBoundaryLook        *look,
                                                          GAsyncReadyCallback         callback,
                                                          gpointer                    user_data);
PaddockBoundaryLook *paddock_boundary_look_finish        (GAsyncResult               *result);
PaddockBoundary     *paddock_boundary_look_get_boundary  (PaddockBoundaryLook        *look);
GVariant            *paddock_boundary_look_get_published (PaddockBoundaryLook        *look);
char                *paddock_boundary_published_to_text  (GVariant                   *published);
GVariant            *paddock_boundary_published_load     (const char                 *path,
                                                          GError                    **error);
gboolean             paddock_boundary_check_strict       (const char                 *profile,
                                                          PaddockBoundary            *boundary,
                                                          GError                    **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PaddockBoundaryLook, paddock_boundary_look_free)

G_END_DECLS
