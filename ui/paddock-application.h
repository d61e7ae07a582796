/* paddock-application.h — the Paddock desktop app
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <adwaita.h>

#include "paddock-client.h"

G_BEGIN_DECLS

#define PADDOCK_TYPE_APPLICATION (paddock_application_get_type ())

G_DECLARE_FINAL_TYPE (PaddockApplication, paddock_application, PADDOCK, APPLICATION, AdwApplication)

PaddockApplication *paddock_application_new        (void);
PaddockClient      *paddock_application_get_client (PaddockApplication *self);

G_END_DECLS
