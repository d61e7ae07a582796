/* test-scrollback.c — the terminal scrollback ring: offsets, wrap, huge writes
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "paddock-scrollback.h"

static char *
read_all (PaddockScrollback *ring,
          guint64            offset,
          guint64           *start)
{
  g_autoptr(GBytes) bytes = paddock_scrollback_read (ring, offset, G_MAXSIZE, start);
  gsize length = 0;
  const char *data = g_bytes_get_data (bytes, &length);

  return g_strndup (data != NULL ? data : "", length);
}

static void
test_offsets_and_wrap (void)
{
  g_autoptr(PaddockScrollback) ring = paddock_scrollback_new (8);
  g_autofree char *a = NULL;
  g_autofree char *b = NULL;
  g_autofree char *c = NULL;
  g_autofree char *d = NULL;
  guint64 start = 0;

  g_assert_cmpuint (paddock_scrollback_get_end_offset (ring), ==, 0);
  a = read_all (ring, 0, &start);
  g_assert_cmpstr (a, ==, "");

  paddock_scrollback_append (ring, (const guint8 *) "hello", 5);
  b = read_all (ring, 0, &start);
  g_assert_cmpstr (b, ==, "hello");
  g_assert_cmpuint (start, ==, 0);

  /* 11 bytes written into 8: the first 3 are gone, and a reader that asks
   * for offset 0 is told the data starts at 3. */
  paddock_scrollback_append (ring, (const guint8 *) " world", 6);
  g_assert_cmpuint (paddock_scrollback_get_first_offset (ring), ==, 3);
  g_assert_cmpuint (paddock_scrollback_get_end_offset (ring), ==, 11);
  c = read_all (ring, 0, &start);
  g_assert_cmpstr (c, ==, "lo world");
  g_assert_cmpuint (start, ==, 3);

  /* Each reader its own cursor: from the middle, and past the end. */
  d = read_all (ring, 6, &start);
  g_assert_cmpstr (d, ==, "world");
  g_assert_cmpuint (start, ==, 6);
  g_clear_pointer (&d, g_free);
  d = read_all (ring, 99, &start);
  g_assert_cmpstr (d, ==, "");
  g_assert_cmpuint (start, ==, 11);
}

static void
test_bounded_reads_and_huge_writes (void)
{
  g_autoptr(PaddockScrollback) ring = paddock_scrollback_new (16);
  g_autoptr(GBytes) part = NULL;
  g_autofree char *all = NULL;
  char huge[100];
  guint64 start = 0;

  for (guint i = 0; i < sizeof huge; i++)
    huge[i] = (char) ('a' + i % 26);

  /* A write larger than the ring keeps its last 16 bytes. */
  paddock_scrollback_append (ring, (const guint8 *) huge, sizeof huge);
  g_assert_cmpuint (paddock_scrollback_get_end_offset (ring), ==, 100);
  g_assert_cmpuint (paddock_scrollback_get_first_offset (ring), ==, 84);
  all = read_all (ring, 0, &start);
  g_assert_cmpuint (strlen (all), ==, 16);
  g_assert_cmpint (memcmp (all, huge + 84, 16), ==, 0);

  part = paddock_scrollback_read (ring, 90, 4, &start);
  g_assert_cmpuint (g_bytes_get_size (part), ==, 4);
  g_assert_cmpint (memcmp (g_bytes_get_data (part, NULL), huge + 90, 4), ==, 0);
}

/* Many small writes through many wraps always read back as the tail of
 * everything written. */
static void
test_many_wraps (void)
{
  g_autoptr(PaddockScrollback) ring = paddock_scrollback_new (1000);
  g_autoptr(GString) written = g_string_new (NULL);
  g_autofree char *tail = NULL;
  guint64 start = 0;

  for (guint i = 0; i < 5000; i++)
    {
      g_autofree char *chunk = g_strdup_printf ("<%u>", i);

      paddock_scrollback_append (ring, (const guint8 *) chunk, strlen (chunk));
      g_string_append (written, chunk);
    }

  tail = read_all (ring, 0, &start);
  g_assert_cmpuint (start, ==, written->len - 1000);
  g_assert_cmpstr (tail, ==, written->str + written->len - 1000);
}

/* Kept in a file, the ring is read back whole by a new one (a daemon
 * after SIGKILL), wrapped or not; a damaged file starts afresh, and one
 * cut short behind its back costs only what was cut. */
static void
test_persist (void)
{
  g_autofree char *dir = g_dir_make_tmp ("test-scrollback-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "scrollback", NULL);
  g_autoptr(GError) error = NULL;
  guint64 start = 0;

  {
    g_autoptr(PaddockScrollback) ring = paddock_scrollback_new (8);

    g_assert_true (paddock_scrollback_persist (ring, path, &error));
    g_assert_no_error (error);
    paddock_scrollback_append (ring, (const guint8 *) "hello", 5);
    paddock_scrollback_append (ring, (const guint8 *) " world", 6);
  }
  {
    g_autoptr(PaddockScrollback) ring = paddock_scrollback_new (8);
    g_autofree char *all = NULL;
    g_autofree char *more = NULL;

    g_assert_true (paddock_scrollback_persist (ring, path, &error));
    all = read_all (ring, 0, &start);
    g_assert_cmpstr (all, ==, "lo world");
    g_assert_cmpuint (start, ==, 3);
    g_assert_cmpuint (paddock_scrollback_get_end_offset (ring), ==, 11);
    paddock_scrollback_append (ring, (const guint8 *) "!", 1);
    more = read_all (ring, 0, &start);
    g_assert_cmpstr (more, ==, "o world!");
  }
  /* Another capacity (or garbage): not this ring's; started afresh. */
  {
    g_autoptr(PaddockScrollback) ring = paddock_scrollback_new (16);

    g_assert_true (paddock_scrollback_persist (ring, path, &error));
    g_assert_cmpuint (paddock_scrollback_get_end_offset (ring), ==, 0);
    paddock_scrollback_append (ring, (const guint8 *) "abc", 3);
  }
  g_assert_no_errno (truncate (path, 4096 + 1));
  {
    g_autoptr(PaddockScrollback) ring = paddock_scrollback_new (16);
    g_autofree char *cut = NULL;

    g_assert_true (paddock_scrollback_persist (ring, path, &error));
    cut = read_all (ring, 0, &start);
    g_assert_cmpuint (strlen (cut), ==, 1);
    g_assert_cmpstr (cut, ==, "a");
  }
  /* Not a regular file: refused, with the reason. */
  {
    g_autoptr(PaddockScrollback) ring = paddock_scrollback_new (8);

    g_assert_false (paddock_scrollback_persist (ring, dir, &error));
    g_assert_nonnull (error);
    g_clear_error (&error);
  }

  g_unlink (path);
  g_rmdir (dir);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/scrollback/offsets-and-wrap", test_offsets_and_wrap);
  g_test_add_func ("/scrollback/bounded-reads-and-huge-writes", test_bounded_reads_and_huge_writes);
  g_test_add_func ("/scrollback/many-wraps", test_many_wraps);
  g_test_add_func ("/scrollback/persist", test_persist);

  return g_test_run ();
}
