/* paddock-compat-relay.h — bytes moved from one socket to another, kernel to kernel where it can
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* What a move ended on: both sockets are non-blocking. */
typedef enum
{
  PADDOCK_COMPAT_RELAY_ERROR = -1,     /* errno set: the connection is over */
  PADDOCK_COMPAT_RELAY_WAIT_READ = 0,  /* nothing held, the source has nothing yet */
  PADDOCK_COMPAT_RELAY_WAIT_WRITE,     /* bytes held, the destination takes none yet */
  PADDOCK_COMPAT_RELAY_DONE,           /* the source read to its end, every byte through */
} PaddockCompatRelayStatus;

typedef struct
{
  int     pipe[2];   /* Linux: what the bytes pass through; -1 elsewhere */
  char   *buffer;    /* the fallback's: bytes read, not yet written */
  gsize   size;      /* the fallback buffer's */
  gsize   start;     /* of the bytes held, in the buffer */
  gsize   pending;   /* bytes held (in the pipe or the buffer) */
  gboolean eof;      /* the source read to its end */
} PaddockCompatRelay;

#define PADDOCK_COMPAT_RELAY_INIT { { -1, -1 }, NULL, 0, 0, 0, FALSE }

gboolean                 paddock_compat_relay_kernel_to_kernel (void);
gboolean                 paddock_compat_relay_open      (PaddockCompatRelay *relay);
guint                    paddock_compat_relay_get_pages (PaddockCompatRelay *relay);
gboolean                 paddock_compat_relay_set_pages (PaddockCompatRelay *relay,
                                                         guint               pages);
PaddockCompatRelayStatus paddock_compat_relay_move      (PaddockCompatRelay *relay,
                                                         int                 src,
                                                         int                 dst,
                                                         gsize               chunk);
void                     paddock_compat_relay_close     (PaddockCompatRelay *relay);

G_END_DECLS
