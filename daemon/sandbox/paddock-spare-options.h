/* paddock-spare-options.h — a session's options for a sandbox made ahead
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

#include "paddock-spare-options-parse.h"

G_BEGIN_DECLS

int    paddock_spare_options_memfd   (const char * const *args,
                                      int                *out_fd);
int    paddock_spare_options_read    (int                 memfd,
                                      char              **out_block,
                                      GPtrArray         **out_args,
                                      const char        **out_what);
int    paddock_spare_options_send    (int                 control_fd,
                                      const char * const *args);
int    paddock_spare_options_receive (int                 control_fd,
                                      char              **out_block,
                                      GPtrArray         **out_args,
                                      const char        **out_what);

G_END_DECLS
