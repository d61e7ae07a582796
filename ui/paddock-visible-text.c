/* paddock-visible-text.c — agent-written text with its controls and invisible characters shown
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <string.h>

#include "paddock-visible-char.h"
#include "paddock-visible-text.h"

/* The diff view and the file names show what the agent wrote. A window
 * is not driven by ESC as a terminal is, but U+202E still shows code in
 * another order than it runs, zero-width characters make two names look
 * the same, \r and U+2028/U+2029 break a line where no \n is (a line of
 * the diff without its + or -), and ESC, NUL or an invalid byte vanish or
 * become a box. So each character paddock_unichar_needs_escape() names
 * (the same as paddockctl's) is replaced by a picture of it, in the
 * notation paddockctl and less(1) use: ^[ ^M ^@ for C0, ^? for DEL,
 * <U+202E> for the others, <FF> for a byte that is not UTF-8; in a text
 * view with a highlight. (Not the Unicode control pictures ␛ ␍: common
 * monospace fonts have no glyph for them, which shows a box again.) */

/* Appends the picture of one escaped character or byte to @out. */
static void
append_picture (GString  *out,
                gunichar  c,
                gboolean  invalid_byte)
{
  if (invalid_byte)
    g_string_append_printf (out, "<%02X>", c);
  else if (c < 0x20)
    {
      g_string_append_c (out, '^');
      g_string_append_c (out, (char) (c + 0x40));
    }
  else if (c == 0x7F)
    g_string_append (out, "^?");
  else
    g_string_append_printf (out, "<U+%04X>", c);
}

typedef void (*PieceFunc) (const char *text,
                           gsize       length,
                           gboolean    escaped,
                           gpointer    user_data);

/* Walks @data, calling @func for each run of plain text and for each
 * picture, in order. */
static void
split_visible (const char *data,
               gsize       length,
               gboolean    one_line,
               PieceFunc   func,
               gpointer    user_data)
{
  const char *end = data + length;
  const char *run = data;
  const char *p = data;

  while (p < end)
    {
      gunichar c = g_utf8_get_char_validated (p, end - p);
      gboolean invalid = c == (gunichar) -1 || c == (gunichar) -2;
      gsize size;

      /* A NUL byte is valid UTF-8 but g_utf8_get_char_validated() reads
       * it as the end of the string. */
      if (invalid && *p == '\0')
        {
          invalid = FALSE;
          c = 0;
        }
      size = invalid || c == 0 ? 1 : (gsize) (g_utf8_next_char (p) - p);

      if (invalid || paddock_unichar_needs_escape (c) || (one_line && (c == '\n' || c == '\t')))
        {
          g_autoptr(GString) picture = g_string_new (NULL);

          if (p > run)
            func (run, (gsize) (p - run), FALSE, user_data);
          append_picture (picture, invalid ? (guchar) *p : c, invalid);
          func (picture->str, picture->len, TRUE, user_data);
          run = p + size;
        }
      p += size;
    }
  if (end > run)
    func (run, (gsize) (end - run), FALSE, user_data);
}

static void
append_piece (const char *text,
              gsize       length,
              gboolean    escaped,
              gpointer    user_data)
{
  g_string_append_len (user_data, text, (gssize) length);
}

typedef struct
{
  GtkTextBuffer *buffer;
  GtkTextTag    *tag;
  GtkTextIter    end;
} Inserting;

static void
insert_piece (const char *text,
              gsize       length,
              gboolean    escaped,
              gpointer    user_data)
{
  Inserting *inserting = user_data;

  if (escaped)
    gtk_text_buffer_insert_with_tags (inserting->buffer, &inserting->end, text, (int) length,
                                      inserting->tag, NULL);
  else
    gtk_text_buffer_insert (inserting->buffer, &inserting->end, text, (int) length);
}

/**
 * paddock_visible_text_ensure_tag:
 * @buffer: a text buffer
 *
 * The tag that highlights pictures in @buffer, made the first time. Made
 * after the buffer's other tags, it has a higher priority than theirs.
 *
 * Returns: (transfer none): the tag named %PADDOCK_VISIBLE_TEXT_TAG
 */
GtkTextTag *
paddock_visible_text_ensure_tag (GtkTextBuffer *buffer)
{
  GtkTextTag *tag;

  g_return_val_if_fail (GTK_IS_TEXT_BUFFER (buffer), NULL);

  tag = gtk_text_tag_table_lookup (gtk_text_buffer_get_tag_table (buffer), PADDOCK_VISIBLE_TEXT_TAG);
  if (tag == NULL)
    {
      GdkRGBA background = { 0.88, 0.11, 0.14, 0.28 };  /* Adwaita's red, see-through for both schemes */

      tag = gtk_text_buffer_create_tag (buffer, PADDOCK_VISIBLE_TEXT_TAG,
                                        "background-rgba", &background,
                                        "weight", 700,
                                        NULL);
    }
  return tag;
}

/**
 * paddock_visible_text_set_buffer:
 * @buffer: a text buffer
 * @data: bytes an agent wrote, any
 * @length: their length
 *
 * Replaces the text of @buffer with @data, its controls, invisible and
 * reordering characters and invalid bytes as highlighted pictures.
 */
void
paddock_visible_text_set_buffer (GtkTextBuffer *buffer,
                                 const char    *data,
                                 gsize          length)
{
  Inserting inserting = { buffer, NULL, { 0 } };

  g_return_if_fail (GTK_IS_TEXT_BUFFER (buffer));

  inserting.tag = paddock_visible_text_ensure_tag (buffer);
  gtk_text_buffer_set_text (buffer, "", 0);
  gtk_text_buffer_get_end_iter (buffer, &inserting.end);
  split_visible (data, length, FALSE, insert_piece, &inserting);
}

/**
 * paddock_visible_text_dup_label:
 * @text: (nullable): a name an agent chose: a path, a host
 *
 * Returns: (transfer full) (nullable): @text on one line with its
 *   controls, invisible and reordering characters and invalid bytes as
 *   pictures, for a label
 */
char *
paddock_visible_text_dup_label (const char *text)
{
  GString *out;

  if (text == NULL)
    return NULL;

  out = g_string_new (NULL);
  split_visible (text, strlen (text), TRUE, append_piece, out);
  return g_string_free (out, FALSE);
}
