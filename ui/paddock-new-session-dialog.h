/* paddock-new-session-dialog.h — start an agent on a folder
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <adwaita.h>

#include "paddock-client.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_NEW_SESSION_DIALOG (paddock_new_session_dialog_get_type ())

G_DECLARE_FINAL_TYPE (PaddockNewSessionDialog, paddock_new_session_dialog, PADDOCK, NEW_SESSION_DIALOG, AdwWindow)

PaddockNewSessionDialog *paddock_new_session_dialog_new           (GtkWindow               *parent,
                                                                   PaddockClient           *client);
void                     paddock_new_session_dialog_set_workspace (PaddockNewSessionDialog *self,
                                                                   GFile                   *workspace);

G_END_DECLS
