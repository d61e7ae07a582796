/* paddock-visible-text.h — agent-written text with its controls and invisible characters shown
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define PADDOCK_VISIBLE_TEXT_TAG "paddock-escape"

GtkTextTag *paddock_visible_text_ensure_tag  (GtkTextBuffer *buffer);
void        paddock_visible_text_set_buffer  (GtkTextBuffer *buffer,
                                              const char    *data,
                                              gsize          length);
char       *paddock_visible_text_dup_label   (const char    *text);

G_END_DECLS
