/* paddockctl-escape.h — agent-written text made visible for a terminal
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  PADDOCKCTL_ESCAPE_DEFAULT   = 0,
  /* Each escape in reverse video, so that it stands out from the text
   * (a literal "^[" in a file stays plain): for a terminal only. */
  PADDOCKCTL_ESCAPE_HIGHLIGHT = 1 << 0,
  /* "\r\n" passes as a line end: a terminal's output has them, and a \r
   * right before \n rewrites nothing. A \r elsewhere is still escaped. */
  PADDOCKCTL_ESCAPE_CRLF      = 1 << 1,
  /* \n and \t escaped too: a name that must stay on its line. */
  PADDOCKCTL_ESCAPE_ONE_LINE  = 1 << 2,
} PaddockctlEscapeFlags;

/* Escapes a stream that arrives in pieces: a UTF-8 sequence (or "\r\n")
 * split between two pieces is held back until the next one. */
typedef struct
{
  PaddockctlEscapeFlags flags;
  guint8                pending[4];
  guint                 n_pending;
} PaddockctlEscaper;

void     paddockctl_escaper_init       (PaddockctlEscaper     *self,
                                        PaddockctlEscapeFlags  flags);
void     paddockctl_escaper_feed       (PaddockctlEscaper     *self,
                                        const char            *data,
                                        gsize                  length,
                                        GString               *out);
void     paddockctl_escaper_finish     (PaddockctlEscaper     *self,
                                        GString               *out);

char    *paddockctl_escape             (const char            *data,
                                        gssize                 length,
                                        PaddockctlEscapeFlags  flags);
char    *paddockctl_escape_json        (const char            *json);
glong    paddockctl_escape_text_width  (const char            *text);

gboolean paddockctl_fd_is_terminal     (int                    fd);
char    *paddockctl_dup_visible_line   (const char            *text,
                                        int                    fd);
char    *paddockctl_dup_for_terminal   (const char            *text,
                                        int                    fd,
                                        PaddockctlEscapeFlags  flags);
void     paddockctl_write_agent_bytes  (const char            *data,
                                        gsize                  length,
                                        gboolean               raw,
                                        PaddockctlEscapeFlags  flags);

G_END_DECLS
