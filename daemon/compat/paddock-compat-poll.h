/* paddock-compat-poll.h — waiting on many sockets at once, from one thread
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _PaddockCompatPoller PaddockCompatPoller;

typedef enum
{
  PADDOCK_COMPAT_POLL_IN  = 1 << 0,   /* readable, or its end read (EOF, hang-up) */
  PADDOCK_COMPAT_POLL_OUT = 1 << 1,   /* writable */
  PADDOCK_COMPAT_POLL_ERR = 1 << 2,   /* an error is pending; always reported */
} PaddockCompatPollFlags;

typedef struct
{
  gpointer data;      /* as added; NULL: paddock_compat_poller_wake() was called */
  guint    events;    /* PaddockCompatPollFlags */
} PaddockCompatPollEvent;

PaddockCompatPoller *paddock_compat_poller_new            (GError               **error);
gboolean             paddock_compat_poller_edge_triggered (PaddockCompatPoller   *self);
gboolean             paddock_compat_poller_add            (PaddockCompatPoller   *self,
                                                           int                    fd,
                                                           guint                  wanted,
                                                           gpointer               data);
void                 paddock_compat_poller_want           (PaddockCompatPoller   *self,
                                                           int                    fd,
                                                           guint                  wanted);
void                 paddock_compat_poller_remove         (PaddockCompatPoller   *self,
                                                           int                    fd);
int                  paddock_compat_poller_wait           (PaddockCompatPoller   *self,
                                                           PaddockCompatPollEvent *events,
                                                           int                    max_events,
                                                           int                    timeout_ms);
gboolean             paddock_compat_poller_wake           (PaddockCompatPoller   *self);
void                 paddock_compat_poller_free           (PaddockCompatPoller   *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PaddockCompatPoller, paddock_compat_poller_free)

G_END_DECLS
