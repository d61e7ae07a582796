/* paddock-sandbox-link.h — the daemon's end of a sandbox helper's control socket
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define PADDOCK_TYPE_SANDBOX_LINK (paddock_sandbox_link_get_type ())

G_DECLARE_FINAL_TYPE (PaddockSandboxLink, paddock_sandbox_link, PADDOCK, SANDBOX_LINK, GObject)

PaddockSandboxLink *paddock_sandbox_link_new             (int                  control_fd);
gboolean            paddock_sandbox_link_is_open         (PaddockSandboxLink  *self);
gboolean            paddock_sandbox_link_drain           (PaddockSandboxLink  *self);
void                paddock_sandbox_link_close           (PaddockSandboxLink  *self);

gboolean            paddock_sandbox_link_kill            (PaddockSandboxLink  *self,
                                                          guint32              id,
                                                          int                  signal_number,
                                                          GError             **error);
gboolean            paddock_sandbox_link_spawn           (PaddockSandboxLink  *self,
                                                          guint32              id,
                                                          const char * const  *argv,
                                                          const char          *cwd,
                                                          const char * const  *envp,
                                                          gboolean             tty,
                                                          const int           *fds,
                                                          GError             **error);
gboolean            paddock_sandbox_link_request_socket  (PaddockSandboxLink  *self,
                                                          guint32              id,
                                                          int                  family,
                                                          GError             **error);

gboolean            paddock_sandbox_link_request_proxy   (PaddockSandboxLink  *self,
                                                          GError             **error);

gssize              paddock_sandbox_recv_event           (int                  fd,
                                                          char                *message,
                                                          gsize                size,
                                                          int                 *out_fd);
gboolean            paddock_sandbox_event_was_dropped    (int                  saved_errno);

G_END_DECLS
