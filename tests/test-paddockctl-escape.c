/* test-paddockctl-escape.c — paddockctl's escaping of agent-written text for a terminal
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "paddock-visible-char.h"
#include "paddockctl-escape.h"

#define ON  "\033[7m"
#define OFF "\033[27m"

typedef struct
{
  const char            *input;
  gssize                 length;
  PaddockctlEscapeFlags  flags;
  const char            *expected;
} Case;

/* What a reviewer sees for each attack of the issue, and for the bytes
 * that are not attacks at all (which must stay as they are). */
static const Case cases[] = {
  /* Clear the screen; hide the line above (cursor up, erase line);
   * write the clipboard (OSC 52); a title (OSC 0) ended by ST. */
  { "+ok\n\033[2J", -1, 0, "+ok\n^[[2J" },
  { "+evil();\n\033[1A\033[2K+fine();\n", -1, 0, "+evil();\n^[[1A^[[2K+fine();\n" },
  { "\033]52;c;ZXZpbA==\007", -1, 0, "^[]52;c;ZXZpbA==^G" },
  { "\033]0;title\033\\", -1, 0, "^[]0;title^[\\" },
  /* In reverse video on a terminal, each escape on its own. */
  { "a\033[2Jb", -1, PADDOCKCTL_ESCAPE_HIGHLIGHT, "a" ON "^[" OFF "[2Jb" },
  { "\033\r", -1, PADDOCKCTL_ESCAPE_HIGHLIGHT, ON "^[" OFF ON "^M" OFF },
  /* \r rewrites its line: visible, except right before \n with CRLF. */
  { "safe\rEVIL\n", -1, 0, "safe^MEVIL\n" },
  { "dos line\r\n", -1, 0, "dos line^M\n" },
  { "prompt$ \r\nnext\rover\r\n", -1, PADDOCKCTL_ESCAPE_CRLF, "prompt$ \r\nnext^Mover\r\n" },
  { "ends in \r", -1, PADDOCKCTL_ESCAPE_CRLF, "ends in ^M" },
  /* \n and \t lay text out; on one line they are escaped too. */
  { "a\tb\nc", -1, 0, "a\tb\nc" },
  { "a\tb\nc", -1, PADDOCKCTL_ESCAPE_ONE_LINE, "a^Ib^Jc" },
  { "a\r\nb", -1, PADDOCKCTL_ESCAPE_ONE_LINE | PADDOCKCTL_ESCAPE_CRLF, "a^M^Jb" },
  /* Other C0 controls, NUL and DEL. */
  { "\001\b\v\f\x1f\x7f", -1, 0, "^A^H^K^L^_^?" },
  { "a\0b", 3, 0, "a^@b" },
  /* C1 controls: as characters (U+009B is CSI) and as lone bytes. */
  { "\xc2\x9b" "2J", -1, 0, "<U+009B>2J" },
  { "\xc2\x85\xc2\x9f", -1, 0, "<U+0085><U+009F>" },
  { "\x9b" "2J", -1, 0, "<9B>2J" },
  /* Invalid UTF-8: lone bytes, overlong forms, surrogates, beyond
   * U+10FFFF, a sequence cut short by the end or by another byte. */
  { "\xff\xfe", -1, 0, "<FF><FE>" },
  { "\xc0\xaf", -1, 0, "<C0><AF>" },
  { "\xe0\x80\xaf", -1, 0, "<E0><80><AF>" },
  { "\xed\xa0\x80", -1, 0, "<ED><A0><80>" },
  { "\xf4\x90\x80\x80", -1, 0, "<F4><90><80><80>" },
  { "ab\xe2\x80", -1, 0, "ab<E2><80>" },
  { "\xe2" "x", -1, 0, "<E2>x" },
  { "\xe2\x80" "\033", -1, 0, "<E2><80>^[" },
  /* The invisible and reordering characters ("Trojan Source"). */
  { "if (x\xe2\x80\xae) {", -1, 0, "if (x<U+202E>) {" },
  { "\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", -1, 0, "<U+202A><U+202B><U+202C><U+202D>" },
  { "\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", -1, 0, "<U+2066><U+2067><U+2068><U+2069>" },
  { "\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", -1, 0, "<U+200E><U+200F><U+061C>" },
  { "a\xe2\x80\x8b" "b\xe2\x80\x8c\xe2\x80\x8d\xe2\x81\xa0\xef\xbb\xbf", -1, 0,
    "a<U+200B>b<U+200C><U+200D><U+2060><U+FEFF>" },
  { "one\xe2\x80\xa8two\xe2\x80\xa9", -1, 0, "one<U+2028>two<U+2029>" },
  { "\xe3\x85\xa4\xef\xbe\xa0", -1, 0, "<U+3164><U+FFA0>" },
  { "x\xf3\xa0\x81\x81\xf3\xa0\x84\x80", -1, 0, "x<U+E0041><U+E0100>" },
  { "\xc2\xad", -1, 0, "<U+00AD>" },
  /* Text that is only text stays the same bytes. */
  { "plain ASCII ~!@#$%^&*()[]{}\\|", -1, 0, "plain ASCII ~!@#$%^&*()[]{}\\|" },
  { "h\xc3\xa9llo \xe4\xb8\x96\xe7\x95\x8c \xf0\x9f\x99\x82 \xe2\x9d\xa4\xef\xb8\x8f \xc2\xa0",
    -1, PADDOCKCTL_ESCAPE_HIGHLIGHT,
    "h\xc3\xa9llo \xe4\xb8\x96\xe7\x95\x8c \xf0\x9f\x99\x82 \xe2\x9d\xa4\xef\xb8\x8f \xc2\xa0" },
  { "\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d", -1, 0, "\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d" },
  { "", -1, 0, "" },
};

static void
test_cases (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *shown = paddockctl_escape (cases[i].input, cases[i].length, cases[i].flags);

      g_test_message ("case %u", i);
      g_assert_cmpstr (shown, ==, cases[i].expected);
      g_assert_true (g_utf8_validate (shown, -1, NULL));
    }
}

/* Whatever the bytes, the only ESC that comes out is ours, and nothing
 * that moves, erases or reorders is left. */
static void
test_random_bytes (void)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (19);

  for (guint round = 0; round < 2000; round++)
    {
      guint8 bytes[64];
      guint length = (guint) g_rand_int_range (rand, 0, sizeof bytes);
      g_autofree char *shown = NULL;
      g_autofree char *highlighted = NULL;
      g_autoptr(GString) stripped = NULL;
      const char *p;

      for (guint i = 0; i < length; i++)
        bytes[i] = (guint8) g_rand_int_range (rand, 0, 256);

      shown = paddockctl_escape ((const char *) bytes, length, PADDOCKCTL_ESCAPE_DEFAULT);
      g_assert_true (g_utf8_validate (shown, -1, NULL));
      for (p = shown; *p != '\0'; p = g_utf8_next_char (p))
        g_assert_false (paddock_unichar_needs_escape (g_utf8_get_char (p)));

      /* Highlighted: take our sequences away, and it is the same text. */
      highlighted = paddockctl_escape ((const char *) bytes, length, PADDOCKCTL_ESCAPE_HIGHLIGHT);
      stripped = g_string_new (highlighted);
      g_string_replace (stripped, ON, "", 0);
      g_string_replace (stripped, OFF, "", 0);
      g_assert_cmpstr (stripped->str, ==, shown);
      g_assert_null (strchr (stripped->str, '\033'));
    }
}

/* A piece of output may end in the middle of a character or between \r
 * and \n: fed in two pieces (at every split) or byte by byte, the same
 * text comes out as fed at once. */
static void
test_pieces (void)
{
  static const char sample[] =
    "a\xc3\xa9\r\n\xe2\x80\xae\xf0\x9f\x99\x82\xf3\xa0\x84\x80\033[2J\r\xe2\x80\r\n\xff\xe2\x80";
  gsize length = sizeof sample - 1;
  PaddockctlEscapeFlags flags[] = {
    PADDOCKCTL_ESCAPE_DEFAULT, PADDOCKCTL_ESCAPE_CRLF, PADDOCKCTL_ESCAPE_CRLF | PADDOCKCTL_ESCAPE_HIGHLIGHT,
  };

  for (guint f = 0; f < G_N_ELEMENTS (flags); f++)
    {
      g_autofree char *whole = paddockctl_escape (sample, (gssize) length, flags[f]);
      g_autoptr(GString) one_by_one = g_string_new (NULL);
      PaddockctlEscaper escaper;

      for (gsize split = 0; split <= length; split++)
        {
          g_autoptr(GString) out = g_string_new (NULL);

          paddockctl_escaper_init (&escaper, flags[f]);
          paddockctl_escaper_feed (&escaper, sample, split, out);
          paddockctl_escaper_feed (&escaper, sample + split, length - split, out);
          paddockctl_escaper_finish (&escaper, out);
          g_assert_cmpstr (out->str, ==, whole);
        }

      paddockctl_escaper_init (&escaper, flags[f]);
      for (gsize i = 0; i < length; i++)
        {
          paddockctl_escaper_feed (&escaper, sample + i, 1, one_by_one);
          /* Never more than a character's worth held back. */
          g_assert_cmpuint (escaper.n_pending, <=, 3);
        }
      paddockctl_escaper_finish (&escaper, one_by_one);
      g_assert_cmpstr (one_by_one->str, ==, whole);
    }
}

/* Columns line up whether a cell has escapes or not. */
static void
test_width (void)
{
  g_autofree char *shown = paddockctl_escape ("a\033b\xc3\xa9", -1, PADDOCKCTL_ESCAPE_HIGHLIGHT);

  g_assert_cmpint (paddockctl_escape_text_width (shown), ==, 5);  /* a^[b\xc3\xa9 */
  g_assert_cmpint (paddockctl_escape_text_width ("plain"), ==, 5);
  g_assert_cmpint (paddockctl_escape_text_width (""), ==, 0);
}

static char *
parse_string_member (const char *json)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  return g_strdup (json_object_get_string_member (json_node_get_object (json_parser_get_root (parser)),
                                                  "data"));
}

/* The JSON a terminal may show: same values, no raw DEL, C1 or U+202E. */
static void
test_json (void)
{
  static const char value[] = "x\x7f\xc2\x9b" "2J\xe2\x80\xae\xf3\xa0\x81\x81\xe2\x80\xa8\033\n\t\r\"\\ \xc3\xa9";
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *json = NULL;
  g_autofree char *escaped = NULL;
  g_autofree char *back = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "data");
  json_builder_add_string_value (builder, value);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  json_generator_set_pretty (generator, TRUE);
  json = json_generator_to_data (generator, NULL);

  escaped = paddockctl_escape_json (json);
  for (const char *p = escaped; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      g_assert_true (c == '\n' || !paddock_unichar_needs_escape (c));
    }
  g_assert_nonnull (strstr (escaped, "\\u202e"));
  g_assert_nonnull (strstr (escaped, "\\u009b"));
  g_assert_nonnull (strstr (escaped, "\\udb40\\udc41"));
  g_assert_nonnull (strstr (escaped, "\xc3\xa9"));

  back = parse_string_member (escaped);
  g_assert_cmpstr (back, ==, value);

  /* Bytes that are not UTF-8 pass as they are, the last one included. */
  g_clear_pointer (&escaped, g_free);
  escaped = paddockctl_escape_json ("\"x\xe2\"\xff\xe2\x80");
  g_assert_cmpstr (escaped, ==, "\"x\xe2\"\xff\xe2\x80");
}

/* The shared table, as the app sees it too. */
static void
test_needs_escape (void)
{
  static const gunichar shown[] = {
    0x00, 0x07, 0x08, 0x0D, 0x1B, 0x7F, 0x80, 0x9B, 0x9F, 0xAD, 0x061C, 0x180E, 0x200B, 0x200C,
    0x200D, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2060,
    0x2061, 0x2064, 0x2066, 0x2067, 0x2068, 0x2069, 0xFEFF, 0xFFF9, 0xFFFB, 0x115F, 0x1160,
    0x3164, 0xFFA0, 0xE0001, 0xE0020, 0xE007F, 0xE0100, 0xE01EF,
  };
  static const gunichar kept[] = {
    '\n', '\t', ' ', 'a', '~', 0xA0, 0xE9, 0x05D0, 0x0627, 0x4E16, 0x2192, 0xFE0F, 0x1F642,
    0x20AC, 0x3000, 0xFFFD,
  };

  for (guint i = 0; i < G_N_ELEMENTS (shown); i++)
    {
      g_test_message ("U+%04X", shown[i]);
      g_assert_true (paddock_unichar_needs_escape (shown[i]));
    }
  for (guint i = 0; i < G_N_ELEMENTS (kept); i++)
    {
      g_test_message ("U+%04X", kept[i]);
      g_assert_false (paddock_unichar_needs_escape (kept[i]));
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/paddockctl/escape/cases", test_cases);
  g_test_add_func ("/paddockctl/escape/random-bytes", test_random_bytes);
  g_test_add_func ("/paddockctl/escape/pieces", test_pieces);
  g_test_add_func ("/paddockctl/escape/json", test_json);
  g_test_add_func ("/paddockctl/escape/width", test_width);
  g_test_add_func ("/paddockctl/escape/needs-escape", test_needs_escape);

  return g_test_run ();
}
