/* paddock-command-channels.h — direct event channels of a sandbox's commands
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define PADDOCK_TYPE_COMMAND_CHANNELS (paddock_command_channels_get_type ())

G_DECLARE_FINAL_TYPE (PaddockCommandChannels, paddock_command_channels, PADDOCK, COMMAND_CHANNELS, GObject)

PaddockCommandChannels *paddock_command_channels_new             (const char             *session_id);
gboolean                paddock_command_channels_open            (PaddockCommandChannels *self,
                                                                  guint32                 id,
                                                                  int                    *out_remote);
void                    paddock_command_channels_drop            (PaddockCommandChannels *self,
                                                                  guint32                 id);
void                    paddock_command_channels_drain_all       (PaddockCommandChannels *self);
void                    paddock_command_channels_supervisor_gone (PaddockCommandChannels *self,
                                                                  guint32                 id);
void                    paddock_command_channels_clear           (PaddockCommandChannels *self);

G_END_DECLS
