/* paddock-terminal.h — a VteTerminal that reports its grid size
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <vte/vte.h>

G_BEGIN_DECLS

#define PADDOCK_TYPE_TERMINAL (paddock_terminal_get_type ())

G_DECLARE_FINAL_TYPE (PaddockTerminal, paddock_terminal, PADDOCK, TERMINAL, VteTerminal)

G_END_DECLS
