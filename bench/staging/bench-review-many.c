/* bench-review-many.c — review and apply of 200,000 small staged files: time and memory, next to git and cp
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * In one process, with the staging library the daemon uses: a workspace
 * with one file and a stage (an overlay upper dir as the agent leaves it)
 * with N new files of 0-64 bytes, 100 per folder. Prints the wall time and
 * this process's RSS of: the review (paddock_review_new), the same review
 * again (with the cache), the apply of every row (one batch), and RSS
 * after each is freed (with malloc_trim, as the daemon does after large
 * operations); next to `git status --porcelain -uall` on the same tree as
 * an untracked work tree and `cp -a` of the stage. Trees live under
 * $TMPDIR and are removed before exit.
 *
 * Usage: bench-review-many [N] [--review-only]   (N: 200000 by default)
 *
 * paddockd runs with G_SLICE=always-malloc (see daemon/paddockd.c); run
 * this with it too for the daemon's figures, without it for GLib 2.74's
 * default (GSlice keeps what GObjects freed).
 */

#include "config.h"

#include <glib/gstdio.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "paddock-apply.h"
#include "paddock-durable-file.h"
#include "paddock-review.h"

static guint64
rss_kib (const char *field)
{
  g_autofree char *status = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return 0;
  line = strstr (status, field);
  return line != NULL ? g_ascii_strtoull (line + strlen (field) + 1, NULL, 10) : 0;
}

/* This process's CPU time (user + system), in seconds. */
static double
cpu_seconds (void)
{
  struct rusage ru;

  if (getrusage (RUSAGE_SELF, &ru) != 0)
    return 0;
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Wall time since @start_us, and the CPU time since the last report: on a
 * loaded machine the CPU time is the steadier figure. */
static void
report (const char *what,
        gint64      start_us)
{
  static double last_cpu = 0;
  double cpu = cpu_seconds ();

  g_print ("%-44s %8.2f s (CPU %6.2f s)   RSS %7" G_GUINT64_FORMAT " KiB (peak %" G_GUINT64_FORMAT " KiB)\n",
           what, (g_get_monotonic_time () - start_us) / 1e6, cpu - last_cpu,
           rss_kib ("VmRSS:"), rss_kib ("VmHWM:"));
  last_cpu = cpu;
}

static void
shell (const char *what,
       const char *cmd)
{
  gint64 start = g_get_monotonic_time ();
  int status = system (cmd);

  g_print ("%-44s %8.2f s%s\n", what, (g_get_monotonic_time () - start) / 1e6,
           status == 0 ? "" : "   (failed)");
}

int
main (int    argc,
      char **argv)
{
  guint n = argc > 1 ? (guint) g_ascii_strtoull (argv[1], NULL, 10) : 200000;
  gboolean review_only = argc > 2 && g_str_equal (argv[2], "--review-only");
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp ("paddock-bench-many-XXXXXX", &error);
  g_autofree char *w = g_build_filename (tmp, "w", NULL);
  g_autofree char *stage = g_build_filename (tmp, "stage", NULL);
  g_autofree char *journal = g_build_filename (tmp, "journal", NULL);
  g_autofree char *baseline_file = g_build_filename (tmp, "baseline", NULL);
  g_autoptr(PaddockReviewCache) cache = paddock_review_cache_new ();
  g_autoptr(PaddockBaseline) baseline = NULL;
  gint64 start;

  g_assert_no_error (error);
  g_mkdir_with_parents (w, 0755);
  g_file_set_contents (g_build_filename (w, "README", NULL), "hello\n", -1, NULL);
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *dir = g_strdup_printf ("%s/d%04u", stage, i / 100);
      g_autofree char *file = g_strdup_printf ("%s/f%02u.txt", dir, i % 100);
      g_autofree char *text = g_strdup_printf ("%u\n", i * 2654435761u % 100000);

      if (i % 100 == 0)
        g_mkdir_with_parents (dir, 0755);
      g_file_set_contents (file, i % 7 == 0 ? "" : text, -1, NULL);
    }
  g_print ("%u files in %u folders, 0-8 bytes each (%s), G_SLICE=%s\n", n, (n + 99) / 100, tmp,
           g_getenv ("G_SLICE") != NULL ? g_getenv ("G_SLICE") : "(unset)");
  if (!paddock_baseline_record (w, baseline_file, NULL, &error))
    g_error ("baseline: %s", error->message);
  baseline = paddock_baseline_load (baseline_file, &error);
  g_assert_no_error (error);
  report ("start", g_get_monotonic_time ());

  for (int round = 0; round < (review_only ? 1 : 2); round++)
    {
      g_autoptr(PaddockReview) review = NULL;

      start = g_get_monotonic_time ();
      review = paddock_review_new (w, stage, PADDOCK_STAGE_KIND_OVERLAY, baseline, NULL, cache,
                                   NULL, &error);
      if (review == NULL)
        g_error ("review: %s", error->message);
      g_print ("  %u rows\n", paddock_review_get_changes (review)->len);
      report (round == 0 ? "review" : "review again (cache warm)", start);
      if (round == 1)
        {
          GPtrArray *changes = paddock_review_get_changes (review);
          g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func ((GDestroyNotify) paddock_apply_item_free);
          g_autoptr(PaddockApplyResult) result = NULL;

          for (guint i = 0; i < changes->len; i++)
            {
              PaddockChange *c = g_ptr_array_index (changes, i);
              PaddockFileStamp none = { 0 };

              g_ptr_array_add (items, paddock_apply_item_new (paddock_change_get_path (c),
                                                              PADDOCK_APPLY_PUT, i, FALSE, &none));
            }
          start = g_get_monotonic_time ();
          if (!paddock_apply_batch (w, stage, journal, NULL, "bench", items, &result, NULL, &error))
            g_error ("apply: %s", error->message);
          report ("apply of every row (one batch)", start);
        }
    }
  g_clear_object (&cache);
  g_clear_object (&baseline);
  malloc_trim (0);
  report ("after, everything freed (malloc_trim)", g_get_monotonic_time ());

  {
    g_autofree char *git = g_strdup_printf ("cd '%s' && git init -q . && git status --porcelain -uall >/dev/null", stage);
    g_autofree char *cp = g_strdup_printf ("cp -a '%s' '%s/copy'", stage, tmp);

    shell ("git status --porcelain -uall (same tree)", git);
    shell ("cp -a of the stage", cp);
  }
  paddock_remove_tree (tmp);
  return 0;
}
