/* paddock-help-window.h — the app's help: how to run an agent
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define PADDOCK_TYPE_HELP_WINDOW (paddock_help_window_get_type ())
G_DECLARE_FINAL_TYPE (PaddockHelpWindow, paddock_help_window, PADDOCK, HELP_WINDOW, AdwWindow)

GtkWindow *paddock_help_window_new (GtkWindow *parent);

G_END_DECLS
