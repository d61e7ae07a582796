/* paddock-window.h — the main window: the daemon's state and its leases
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <adwaita.h>

#include "paddock-client.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_WINDOW (paddock_window_get_type ())

G_DECLARE_FINAL_TYPE (PaddockWindow, paddock_window, PADDOCK, WINDOW, AdwApplicationWindow)

PaddockWindow *paddock_window_new        (GtkApplication *application,
                                          PaddockClient  *client);
PaddockClient *paddock_window_get_client (PaddockWindow  *self);
void           paddock_window_toast_from (GtkWidget      *widget,
                                          const char     *title);

G_END_DECLS
