/* test-net-journal.c — a session's numbered network records: ring, paging, bounded file, restart
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "paddock-net-journal.h"

static PaddockNetRecord *
make_record (guint i)
{
  g_autofree char *host = g_strdup_printf ("host%u.test", i);
  PaddockNetRecord *record = paddock_net_record_new (g_get_real_time (), "GET", host, 80);

  paddock_net_record_set_verdict (record, i % 2 ? PADDOCK_NET_VERDICT_DENIED : PADDOCK_NET_VERDICT_ALLOWED, NULL);
  paddock_net_record_add_bytes (record, i, 2 * i);
  return record;
}

static void
remove_dir (const char *dir)
{
  g_autoptr(GDir) handle = g_dir_open (dir, 0, NULL);
  const char *name;

  while (handle != NULL && (name = g_dir_read_name (handle)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (dir);
}

static gsize
file_size (const char *path)
{
  GStatBuf st;

  return g_stat (path, &st) == 0 ? (gsize) st.st_size : 0;
}

/* Numbers from 1, pages by after_seq, the ring keeps the newest. */
static void
test_paging_and_ring (void)
{
  g_autoptr(PaddockNetJournal) journal = paddock_net_journal_new (NULL, 5, 4096);
  g_autoptr(GPtrArray) page = NULL;
  guint64 next = 0;

  for (guint i = 1; i <= 8; i++)
    {
      g_autoptr(PaddockNetRecord) record = make_record (i);
      g_assert_cmpuint (paddock_net_journal_append (journal, record), ==, i);
    }

  /* Only 4…8 are kept: asking from 0 starts at the oldest kept. */
  page = paddock_net_journal_list (journal, 0, 2, &next);
  g_assert_cmpuint (page->len, ==, 2);
  g_assert_cmpuint (paddock_net_record_get_seq (g_ptr_array_index (page, 0)), ==, 4);
  g_assert_cmpuint (next, ==, 5);
  g_clear_pointer (&page, g_ptr_array_unref);

  page = paddock_net_journal_list (journal, next, 100, &next);
  g_assert_cmpuint (page->len, ==, 3);
  g_assert_cmpuint (paddock_net_record_get_seq (g_ptr_array_index (page, 2)), ==, 8);
  g_assert_cmpuint (next, ==, 8);
  g_clear_pointer (&page, g_ptr_array_unref);

  /* Nothing newer: empty, and next stays where it was. */
  page = paddock_net_journal_list (journal, 8, 100, &next);
  g_assert_cmpuint (page->len, ==, 0);
  g_assert_cmpuint (next, ==, 8);
  g_clear_pointer (&page, g_ptr_array_unref);

  page = paddock_net_journal_list (journal, 6, 0, &next);
  g_assert_cmpuint (page->len, ==, 0);
  g_assert_cmpuint (next, ==, 6);
}

/* The file pair stays under its bound however many records come, and a
 * new journal on the same file continues the numbering and skips a torn
 * last line. */
static void
test_file_bound_and_restart (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("paddock-journal-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "network.jsonl", NULL);
  g_autofree char *old_path = g_strconcat (path, ".1", NULL);
  g_autoptr(PaddockNetJournal) journal = NULL;
  g_autoptr(PaddockNetJournal) again = NULL;
  g_autoptr(GPtrArray) all = NULL;
  const gsize bound = 8192;
  gsize whole_size;
  guint64 next = 0;
  FILE *f;

  g_assert_no_error (error);
  journal = paddock_net_journal_new (path, 10000, bound);
  for (guint i = 1; i <= 1000; i++)
    {
      g_autoptr(PaddockNetRecord) record = make_record (i);
      paddock_net_journal_append (journal, record);
      g_assert_cmpuint (file_size (path) + file_size (old_path), <=, bound);
    }
  g_assert_cmpuint (file_size (old_path), >, 0);
  /* The group commit caught up with every append, rotations included. */
  paddock_net_journal_flush (journal);
  g_assert_cmpuint (paddock_net_journal_get_durable_seq (journal), ==, 1000);
  g_clear_object (&journal);
  whole_size = file_size (path);

  /* A crash in the middle of a line. */
  f = fopen (path, "a");
  g_assert_nonnull (f);
  fputs ("{\"time\":1,\"meth", f);
  fclose (f);

  again = paddock_net_journal_new (path, 10000, bound);
  g_assert_cmpuint (paddock_net_journal_get_last_seq (again), ==, 1000);
  all = paddock_net_journal_list (again, 0, 100000, &next);
  g_assert_cmpuint (all->len, >, 10);
  g_assert_cmpuint (next, ==, 1000);
  /* Consecutive, ending at the newest. */
  for (guint i = 1; i < all->len; i++)
    g_assert_cmpuint (paddock_net_record_get_seq (g_ptr_array_index (all, i)), ==,
                      paddock_net_record_get_seq (g_ptr_array_index (all, i - 1)) + 1);
  g_assert_cmpstr (paddock_net_record_get_host (g_ptr_array_index (all, all->len - 1)), ==, "host1000.test");
  g_assert_cmpuint (file_size (path), >, whole_size);
  {
    g_autoptr(PaddockNetRecord) record = make_record (1001);
    g_assert_cmpuint (paddock_net_journal_append (again, record), ==, 1001);
  }
  g_clear_object (&again);

  /* The torn tail was cut back before the append: the file is the whole
   * lines it had, then the new one, and nothing else. */
  {
    g_autofree char *contents = NULL;
    g_auto(GStrv) lines = NULL;
    gsize length = 0;
    guint n;

    g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
    g_assert_true (g_str_has_suffix (contents, "\n"));
    g_assert_null (strstr (contents, "\"meth\n"));
    lines = g_strsplit (contents, "\n", -1);
    n = g_strv_length (lines);
    g_assert_cmpstr (lines[n - 1], ==, "");
    g_assert_cmpuint (length, ==, whole_size + strlen (lines[n - 2]) + 1);
    for (guint i = 0; i + 1 < n; i++)
      {
        g_autoptr(JsonParser) parser = json_parser_new ();
        g_autoptr(GError) parse_error = NULL;

        g_assert_true (json_parser_load_from_data (parser, lines[i], -1, &parse_error));
        g_assert_no_error (parse_error);
      }
    g_assert_nonnull (strstr (lines[n - 2], "host1001.test"));
  }

  /* The record after the torn line is whole. */
  again = paddock_net_journal_new (path, 10000, bound);
  g_assert_cmpuint (paddock_net_journal_get_last_seq (again), ==, 1001);
  g_clear_object (&again);
  remove_dir (dir);
}

/* What the daemon calls on its way out: every journal's lines are on the
 * disk when it returns, not only one journal's. */
static void
test_flush_all (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("paddock-journal-XXXXXX", &error);
  g_autofree char *first_path = g_build_filename (dir, "first.jsonl", NULL);
  g_autofree char *second_path = g_build_filename (dir, "second.jsonl", NULL);
  g_autoptr(PaddockNetJournal) first = NULL;
  g_autoptr(PaddockNetJournal) second = NULL;

  g_assert_no_error (error);
  first = paddock_net_journal_new (first_path, 100, 1024 * 1024);
  second = paddock_net_journal_new (second_path, 100, 1024 * 1024);
  for (guint i = 1; i <= 50; i++)
    {
      g_autoptr(PaddockNetRecord) one = make_record (i);
      g_autoptr(PaddockNetRecord) other = make_record (i);

      paddock_net_journal_append (first, one);
      paddock_net_journal_append (second, other);
    }
  paddock_net_journal_flush_all ();
  g_assert_cmpuint (paddock_net_journal_get_durable_seq (first), ==, 50);
  g_assert_cmpuint (paddock_net_journal_get_durable_seq (second), ==, 50);

  g_clear_object (&first);
  g_clear_object (&second);
  g_assert_cmpint (g_unlink (first_path), ==, 0);
  g_assert_cmpint (g_unlink (second_path), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/network/journal/paging-and-ring", test_paging_and_ring);
  g_test_add_func ("/network/journal/file-bound-and-restart", test_file_bound_and_restart);
  g_test_add_func ("/network/journal/flush-all", test_flush_all);
  return g_test_run ();
}
