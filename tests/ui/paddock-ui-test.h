/* paddock-ui-test.h — what the UI tests share: settling, screenshots, dialogs, the app
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <adwaita.h>

#include "paddock-test-daemon.h"
#include "paddock-session-view.h"
#include "paddock-window.h"

G_BEGIN_DECLS

#define PADDOCK_UI_TIMEOUT_MS 30000  /* generous: the sanitizer build on a loaded 2-core machine is slow */

typedef struct
{
  PaddockTestDaemon *daemon;
  char              *workspace;
  gboolean           ran;
  gboolean           skipped;
} PaddockUiFixture;

void           paddock_ui_test_init              (int          *argc,
                                                  char       ***argv);
void           paddock_ui_settle                 (guint         ms);
void           paddock_ui_save_screenshot        (GtkWindow    *window,
                                                  const char   *name);
void           paddock_ui_assert_controls_named  (GtkWidget    *widget);
void           paddock_ui_assert_buttons_named   (GtkWidget    *widget);
GtkWindow     *paddock_ui_wait_for_message_dialog (void);
void           paddock_ui_answer_dialog          (const char   *screenshot,
                                                  const char   *response);
void           paddock_ui_assert_toast           (PaddockWindow *window,
                                                  const char    *title);
PaddockWindow *paddock_ui_fixture_window         (GApplication *app);
void           paddock_ui_run_app                (GCallback     callback,
                                                  const char   *skip_reason);
void           paddock_ui_run_app_activatable    (GCallback     callback,
                                                  const char   *skip_reason);
char          *paddock_ui_create_session         (GDBusConnection *connection,
                                                  const char      *workspace,
                                                  const char      *name,
                                                  const char      *profile,
                                                  const char      *script,
                                                  GError         **error);
char          *paddock_ui_create_session_argv    (GDBusConnection    *connection,
                                                  const char         *workspace,
                                                  const char         *name,
                                                  const char         *profile,
                                                  const char * const *argv,
                                                  GError            **error);
GVariant      *paddock_ui_destroy_session        (GDBusConnection *connection,
                                                  const char      *path);
gpointer       paddock_ui_window_child           (PaddockWindow *window,
                                                  const char    *name);
PaddockSessionView *paddock_ui_current_session_view (PaddockWindow *window);
GtkWidget     *paddock_ui_session_view_child     (PaddockWindow *window,
                                                  const char    *name);
void           paddock_ui_show_view              (PaddockWindow *window,
                                                  const char    *name);
void           paddock_ui_wait_for_sessions      (PaddockWindow *window,
                                                  guint          n_sessions);
void           paddock_ui_select_session         (PaddockWindow *window,
                                                  const char    *path);

G_END_DECLS
