/* paddock-ui-test.h — what every UI test does with a window
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Generous: the sanitizer build on a loaded 2-core machine is slow. */
#define PADDOCK_UI_TEST_TIMEOUT_MS 30000

void paddock_ui_test_settle          (guint       ms);
void paddock_ui_test_save_screenshot (GtkWindow  *window,
                                      const char *file_prefix,
                                      const char *name);

G_END_DECLS
