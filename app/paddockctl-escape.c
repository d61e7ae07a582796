/* paddockctl-escape.c — agent-written text made visible for a terminal
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "paddock-visible-char.h"
#include "paddockctl-escape.h"

/* A diff or a scrollback holds what the agent wrote. Printed as is to a
 * terminal, ESC [ 2 J clears the screen, ESC [ A ESC [ 2 K erases the line
 * above (a line of the diff the reviewer never sees), OSC 52 writes the
 * clipboard, and U+202E shows code in another order than it runs. So what
 * paddock_unichar_needs_escape() names is written in the notation less(1)
 * uses, which reviewers know: ^[ and ^M for C0 controls, ^? for DEL,
 * <U+202E> for the others, <FF> for a byte that is not UTF-8. */

#define HIGHLIGHT_ON  "\033[7m"
#define HIGHLIGHT_OFF "\033[27m"

void
paddockctl_escaper_init (PaddockctlEscaper     *self,
                         PaddockctlEscapeFlags  flags)
{
  memset (self, 0, sizeof *self);
  self->flags = flags;
}

static void
append_escape (PaddockctlEscaper *self,
               GString           *out,
               const char        *escape)
{
  if (self->flags & PADDOCKCTL_ESCAPE_HIGHLIGHT)
    g_string_append (out, HIGHLIGHT_ON);
  g_string_append (out, escape);
  if (self->flags & PADDOCKCTL_ESCAPE_HIGHLIGHT)
    g_string_append (out, HIGHLIGHT_OFF);
}

/* The length of the UTF-8 sequence @lead starts, or 0 if no valid one
 * starts with it (a continuation byte, C0/C1 overlong leads, F5–FF). */
static guint
sequence_length (guint8 lead)
{
  if (lead >= 0xC2 && lead <= 0xDF)
    return 2;
  if (lead >= 0xE0 && lead <= 0xEF)
    return 3;
  if (lead >= 0xF0 && lead <= 0xF4)
    return 4;
  return 0;
}

/* Escapes what it can of @data; returns how many bytes it consumed. With
 * @at_end FALSE it stops before a sequence that the next piece may
 * complete (at most 3 bytes are left over). */
static gsize
escape_bytes (PaddockctlEscaper *self,
              const guint8      *data,
              gsize              length,
              gboolean           at_end,
              GString           *out)
{
  gboolean one_line = (self->flags & PADDOCKCTL_ESCAPE_ONE_LINE) != 0;
  gsize i = 0;

  while (i < length)
    {
      guint8 byte = data[i];
      char escape[16];
      guint needed;
      gunichar c;

      if (byte < 0x80)
        {
          gsize plain = i;

          /* Runs of printable ASCII, the bulk of any diff, in one append. */
          while (plain < length && data[plain] >= 0x20 && data[plain] < 0x7F)
            plain++;
          if (plain > i)
            {
              g_string_append_len (out, (const char *) data + i, (gssize) (plain - i));
              i = plain;
              continue;
            }

          if ((byte == '\n' || byte == '\t') && !one_line)
            g_string_append_c (out, (char) byte);
          else if (byte == '\r' && (self->flags & PADDOCKCTL_ESCAPE_CRLF) && !one_line &&
                   i + 1 < length && data[i + 1] == '\n')
            {
              g_string_append (out, "\r\n");
              i++;
            }
          else if (byte == '\r' && (self->flags & PADDOCKCTL_ESCAPE_CRLF) && !one_line &&
                   i + 1 == length && !at_end)
            return i;  /* the \n may come with the next piece */
          else
            {
              escape[0] = '^';
              escape[1] = byte == 0x7F ? '?' : (char) (byte + 0x40);
              escape[2] = '\0';
              append_escape (self, out, escape);
            }
          i++;
          continue;
        }

      needed = sequence_length (byte);
      if (needed > 0 && i + needed > length)
        {
          gboolean prefix = TRUE;

          for (gsize j = i + 1; j < length; j++)
            prefix = prefix && (data[j] & 0xC0) == 0x80;
          if (prefix && !at_end)
            return i;
          needed = 0;
        }

      c = needed > 0 ? g_utf8_get_char_validated ((const char *) data + i, (gssize) needed)
                     : (gunichar) -1;
      if (c == (gunichar) -1 || c == (gunichar) -2)
        {
          g_snprintf (escape, sizeof escape, "<%02X>", byte);
          append_escape (self, out, escape);
          i++;
          continue;
        }

      if (paddock_unichar_needs_escape (c))
        {
          g_snprintf (escape, sizeof escape, "<U+%04X>", c);
          append_escape (self, out, escape);
        }
      else
        g_string_append_len (out, (const char *) data + i, needed);
      i += needed;
    }

  return i;
}

static void
escape_with_pending (PaddockctlEscaper *self,
                     const guint8      *data,
                     gsize              length,
                     gboolean           at_end,
                     GString           *out)
{
  gsize done;

  if (self->n_pending > 0)
    {
      /* Rare (a piece ended inside a character): join the few bytes. */
      g_autoptr(GByteArray) joined = g_byte_array_sized_new (self->n_pending + (guint) length);

      g_byte_array_append (joined, self->pending, self->n_pending);
      g_byte_array_append (joined, data, (guint) length);
      self->n_pending = 0;
      escape_with_pending (self, joined->data, joined->len, at_end, out);
      return;
    }

  done = escape_bytes (self, data, length, at_end, out);
  g_assert (length - done <= sizeof self->pending);
  self->n_pending = (guint) (length - done);
  if (self->n_pending > 0)
    memcpy (self->pending, data + done, self->n_pending);
}

void
paddockctl_escaper_feed (PaddockctlEscaper *self,
                         const char        *data,
                         gsize              length,
                         GString           *out)
{
  escape_with_pending (self, (const guint8 *) data, length, FALSE, out);
}

/* What was held back is escaped as it is: the stream ended in the middle. */
void
paddockctl_escaper_finish (PaddockctlEscaper *self,
                           GString           *out)
{
  escape_with_pending (self, NULL, 0, TRUE, out);
}

/**
 * paddockctl_escape:
 * @data: bytes, any
 * @length: their length, or -1 when NUL-terminated
 * @flags: how to escape
 *
 * Returns: (transfer full): @data as valid UTF-8 that shows every control,
 *   invisible or reordering character and every invalid byte as an escape
 */
char *
paddockctl_escape (const char            *data,
                   gssize                 length,
                   PaddockctlEscapeFlags  flags)
{
  gsize n = length < 0 ? strlen (data) : (gsize) length;
  GString *out = g_string_sized_new (n + 16);
  PaddockctlEscaper escaper;

  paddockctl_escaper_init (&escaper, flags);
  paddockctl_escaper_feed (&escaper, data, n, out);
  paddockctl_escaper_finish (&escaper, out);
  return g_string_free (out, FALSE);
}

/**
 * paddockctl_escape_json:
 * @json: a JSON document, valid UTF-8
 *
 * The same document with every character paddock_unichar_needs_escape()
 * names written as \uXXXX: such characters can only be inside strings,
 * where the escape means the same, so a script reads the same values and
 * a terminal that shows the document is not driven by it (JSON leaves
 * DEL, the C1 controls and U+202E as they are).
 *
 * Returns: (transfer full): the document
 */
char *
paddockctl_escape_json (const char *json)
{
  GString *out = g_string_sized_new (strlen (json) + 16);
  const char *p = json;

  while (*p != '\0')
    {
      gunichar c = g_utf8_get_char_validated (p, -1);
      const char *next;

      /* Not UTF-8 (a caller that did not make a string valid): passed on
       * a byte at a time, never read past the end. */
      if (c == (gunichar) -1 || c == (gunichar) -2)
        {
          g_string_append_c (out, *p);
          p++;
          continue;
        }

      next = g_utf8_next_char (p);
      if (c == '\n' || c == '\t' || c == '\r' || !paddock_unichar_needs_escape (c))
        g_string_append_len (out, p, next - p);
      else if (c < 0x10000)
        g_string_append_printf (out, "\\u%04x", c);
      else
        {
          /* Outside the BMP: a surrogate pair, as JSON spells it. */
          gunichar v = c - 0x10000;

          g_string_append_printf (out, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
        }
      p = next;
    }
  return g_string_free (out, FALSE);
}

/**
 * paddockctl_escape_text_width:
 * @text: valid UTF-8, escaped by this file
 *
 * Returns: how many characters @text shows, without the reverse video
 *   sequences that take no room: for columns
 */
glong
paddockctl_escape_text_width (const char *text)
{
  glong width = 0;

  for (const char *p = text; *p != '\0'; p = g_utf8_next_char (p))
    {
      if (g_str_has_prefix (p, HIGHLIGHT_ON))
        p += strlen (HIGHLIGHT_ON) - 1;
      else if (g_str_has_prefix (p, HIGHLIGHT_OFF))
        p += strlen (HIGHLIGHT_OFF) - 1;
      else
        width++;
    }
  return width;
}

gboolean
paddockctl_fd_is_terminal (int fd)
{
  return isatty (fd) == 1;
}

/**
 * paddockctl_dup_visible_line:
 * @text: a name: a path, a host
 * @fd: where it goes
 *
 * Returns: (transfer full): @text on one line with its controls,
 *   invisible characters and invalid bytes escaped, highlighted when @fd
 *   is a terminal
 */
char *
paddockctl_dup_visible_line (const char *text,
                             int         fd)
{
  PaddockctlEscapeFlags flags = PADDOCKCTL_ESCAPE_ONE_LINE;

  if (paddockctl_fd_is_terminal (fd))
    flags |= PADDOCKCTL_ESCAPE_HIGHLIGHT;
  return paddockctl_escape (text, -1, flags);
}

/**
 * paddockctl_dup_for_terminal:
 * @text: text that came from the agent, or echoes what it named
 * @fd: where it goes
 * @flags: how to escape it there
 *
 * Returns: (transfer full): @text escaped (and highlighted) when @fd is a
 *   terminal, else the same bytes, for the scripts that read them
 */
char *
paddockctl_dup_for_terminal (const char            *text,
                             int                    fd,
                             PaddockctlEscapeFlags  flags)
{
  if (!paddockctl_fd_is_terminal (fd))
    return g_strdup (text);
  return paddockctl_escape (text, -1, flags | PADDOCKCTL_ESCAPE_HIGHLIGHT);
}

/**
 * paddockctl_write_agent_bytes:
 * @data: bytes an agent wrote (a diff, a file)
 * @length: their length
 * @raw: %TRUE to write them as they are even to a terminal (--raw)
 * @flags: how to escape them for a terminal
 *
 * Writes @data to stdout: escaped and highlighted when stdout is a
 * terminal, the exact bytes otherwise (a pipe, a file) or with @raw.
 */
void
paddockctl_write_agent_bytes (const char            *data,
                              gsize                  length,
                              gboolean               raw,
                              PaddockctlEscapeFlags  flags)
{
  g_autofree char *shown = NULL;

  if (raw || !paddockctl_fd_is_terminal (STDOUT_FILENO))
    {
      fwrite (data, 1, length, stdout);
      return;
    }

  shown = paddockctl_escape (data, (gssize) length, flags | PADDOCKCTL_ESCAPE_HIGHLIGHT);
  fputs (shown, stdout);
}
