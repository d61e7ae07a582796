/* paddock-visible-char.c — the characters a reader must see as escapes
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "paddock-visible-char.h"

/* An agent writes the files and the terminal output a person reviews, so
 * what it wrote must not act on the terminal or the window that shows it,
 * nor show the reader other text than the bytes that will be applied.
 * paddockctl and the app both ask this one function, so that they agree
 * on what a reader sees. */

/* Blank letters (category Lo, so the categories below miss them) that
 * render as nothing: an identifier made of them looks like whitespace. */
static gboolean
is_blank_letter (gunichar c)
{
  return c == 0x115F || c == 0x1160 ||  /* HANGUL CHOSEONG/JUNGSEONG FILLER */
         c == 0x3164 ||                 /* HANGUL FILLER */
         c == 0xFFA0;                   /* HALFWIDTH HANGUL FILLER */
}

/**
 * paddock_unichar_needs_escape:
 * @c: a character of valid UTF-8
 *
 * Whether @c, shown as it is, would drive a terminal or hide, move or
 * reorder the text around it, so that it must be shown as an escape:
 *
 * - C0 controls but \n and \t, DEL and the C1 controls (U+0080–U+009F):
 *   ESC and CSI start the sequences that move the cursor, erase lines,
 *   clear the screen or write the clipboard (OSC 52); \r and \b rewrite
 *   a line in place. \n and \t lay text out as a reader expects and are
 *   for the caller to decide.
 * - Format characters (Cf): the bidirectional embeddings, overrides and
 *   isolates (U+202A–U+202E, U+2066–U+2069) and marks (U+200E, U+200F,
 *   U+061C) that show code in another order than it runs ("Trojan
 *   Source"); the zero-width ones (U+200B–U+200D, U+2060, U+FEFF) that
 *   make two different names look the same; the tag characters
 *   (U+E0000–U+E007F) that carry invisible text.
 * - The line and paragraph separators U+2028 and U+2029, which break a
 *   line where no \n is.
 * - The blank Hangul fillers and the variation selectors of
 *   U+E0100–U+E01EF (invisible text appended to a character).
 *
 * Returns: %TRUE if @c must be shown as an escape
 */
gboolean
paddock_unichar_needs_escape (gunichar c)
{
  GUnicodeType type;

  if (c < 0x20)
    return c != '\n' && c != '\t';
  if (c < 0x7F)
    return FALSE;
  if (c <= 0x9F)
    return TRUE;  /* DEL, C1 */

  if (is_blank_letter (c) || (c >= 0xE0100 && c <= 0xE01EF))
    return TRUE;

  type = g_unichar_type (c);
  return type == G_UNICODE_CONTROL || type == G_UNICODE_FORMAT ||
         type == G_UNICODE_LINE_SEPARATOR || type == G_UNICODE_PARAGRAPH_SEPARATOR ||
         type == G_UNICODE_SURROGATE;
}
