/* paddock-sandbox-program.h — whether a safe session's command can run in its view, before it starts
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

gboolean paddock_sandbox_program_check (const char         *program,
                                        const char         *path,
                                        const char         *workspace,
                                        const char         *sandbox_home,
                                        const char         *real_home,
                                        const char * const *expose,
                                        const char * const *view,
                                        GError            **error);

G_END_DECLS
