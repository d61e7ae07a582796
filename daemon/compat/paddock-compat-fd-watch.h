/* paddock-compat-fd-watch.h — one-shot waits for many sockets in a GMainContext, without a GSource each
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _PaddockCompatFdWatch PaddockCompatFdWatch;

/* Called once, when @fd became ready for what was waited for (G_IO_IN or
 * G_IO_OUT), or has an error or hang-up pending (then @condition also has
 * G_IO_ERR or G_IO_HUP): the caller's own recv/send says which. */
typedef void (*PaddockCompatFdWatchFunc) (int           fd,
                                          GIOCondition  condition,
                                          gpointer      user_data);

PaddockCompatFdWatch *paddock_compat_fd_watch_new     (GMainContext              *context,
                                                       GError                   **error);
gboolean              paddock_compat_fd_watch_add     (PaddockCompatFdWatch      *self,
                                                       int                        fd,
                                                       GIOCondition               condition,
                                                       PaddockCompatFdWatchFunc   func,
                                                       gpointer                   user_data,
                                                       GError                   **error);
void                  paddock_compat_fd_watch_remove  (PaddockCompatFdWatch      *self,
                                                       int                        fd,
                                                       GIOCondition               condition);
gboolean              paddock_compat_fd_watch_waiting (PaddockCompatFdWatch      *self,
                                                       int                        fd,
                                                       GIOCondition               condition);
void                  paddock_compat_fd_watch_free    (PaddockCompatFdWatch      *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PaddockCompatFdWatch, paddock_compat_fd_watch_free)

G_END_DECLS
