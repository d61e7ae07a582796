/* bench-pin-cost.c — what pinning costs a review and an apply, in-process, where load does not reach
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * bench-pinning times Review against ListChanges through D-Bus, with a
 * daemon, sandboxes and an agent: on a shared machine its medians move by
 * tens of percent between runs, more than the 10 % it judges. This one
 * calls the staging library the daemon uses, in one process, on the same
 * shape of change (10,000 files, 1,000 changed: 900 modified, 100 moved to
 * another folder), written straight into an overlay stage's upper folder
 * as the agent's writes land there (no mount needed to review or apply):
 * per round, two fresh stages of two identical workspaces, one reviewed
 * with paddock_stage_review() and applied with paddock_stage_apply(), the
 * other with paddock_stage_review_pinned() and
 * paddock_stage_apply_reviewed() (order alternating), each a first call
 * of its stage. It prints wall and CPU time medians; run it under
 * `valgrind --tool=callgrind` for instruction counts, which no load moves
 * (callgrind_annotate --inclusive=yes: paddock_stage_review,
 * paddock_stage_review_pinned, paddock_review_token_new, ...). What the
 * daemon adds around a call (D-Bus, the reply's GVariant) is not here.
 *
 * Usage: bench-pin-cost [--rounds N] [--review-only]   (N: 11 by default)
 *   --review-only: no applies (valgrind 3.19 has no openat2, without
 *   which an apply refuses to run: use it under callgrind)
 * Needs root (the moves' whiteouts are character devices 0/0).
 */

#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "paddock-apply.h"
#include "paddock-durable-file.h"
#include "paddock-review-token.h"
#include "paddock-stage.h"

#include "bench-common.h"
#include "bench-staging-support.h"

/* The stage's baseline walk is not what is measured: put off for good. */
#define BASELINE_NEVER_MS (3600 * 1000)

static double
cpu_ms (void)
{
  struct rusage ru;

  if (getrusage (RUSAGE_SELF, &ru) != 0)
    return 0;
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static void
write_under (const char *root,
             const char *rel,
             GString    *contents)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname (path);

  if (g_mkdir_with_parents (dir, 0755) != 0)
    paddock_test_bail ("mkdir %s: %s", dir, g_strerror (errno));
  write_file (path, contents->str, contents->len);
}

/* The agent's 1,000 changes, as an overlay's upper folder holds them. */
static void
edit_upper (const char *upper)
{
  g_autoptr(GString) contents = g_string_sized_new (9 * 1024);

  for (guint k = 0; k < PIN_CHANGED; k++)
    {
      g_autofree char *rel = file_rel (pin_change_index (k));

      file_contents (pin_change_index (k), contents);
      g_string_append (contents, "/* edited by the agent */\n");
      if (pin_change_is_move (k))
        {
          g_autofree char *moved = moved_rel (pin_change_index (k));
          g_autofree char *path = g_build_filename (upper, rel, NULL);
          g_autofree char *dir = g_path_get_dirname (path);

          write_under (upper, moved, contents);
          if (g_mkdir_with_parents (dir, 0755) != 0)
            paddock_test_bail ("mkdir %s: %s", dir, g_strerror (errno));
          if (mknod (path, S_IFCHR | 0000, makedev (0, 0)) != 0)
            paddock_test_bail ("mknod %s (a whiteout; run as root): %s", path, g_strerror (errno));
        }
      else
        write_under (upper, rel, contents);
    }
}

/* Puts @workspace back as generate_tree() wrote it, after an apply. */
static void
restore_workspace (const char *workspace)
{
  g_autoptr(GString) contents = g_string_sized_new (9 * 1024);

  for (guint k = 0; k < PIN_CHANGED; k++)
    {
      g_autofree char *rel = file_rel (pin_change_index (k));

      if (pin_change_is_move (k))
        {
          g_autofree char *moved = moved_rel (pin_change_index (k));
          g_autofree char *path = g_build_filename (workspace, moved, NULL);

          if (g_unlink (path) != 0)
            paddock_test_bail ("the apply did not create %s: %s", path, g_strerror (errno));
        }
      file_contents (pin_change_index (k), contents);
      write_under (workspace, rel, contents);
    }
}

typedef struct {
  GArray *review_ms, *review_cpu, *apply_ms, *apply_cpu;
} Side;

static gboolean review_only;

static void
run_side (const char *root,
          const char *workspace,
          guint       round,
          gboolean    pinned,
          Side       *side)
{
  g_autofree char *name = g_strdup_printf ("stage-%u-%s", round, pinned ? "pinned" : "plain");
  g_autofree char *stage_dir = g_build_filename (root, name, NULL);
  g_autofree char *upper = g_build_filename (stage_dir, "upper", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockStage) stage = NULL;
  g_autoptr(PaddockReview) review = NULL;
  g_autoptr(PaddockReviewToken) token = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  const char *const none[] = { NULL };
  gint64 start;
  double cpu;
  guint rows;

  g_usleep (30 * 1000);  /* the workspace's files age past the clock tick */
  stage = paddock_stage_new (stage_dir, workspace, PADDOCK_STAGE_KIND_OVERLAY);
  if (!paddock_stage_prepare (stage, NULL, &error))
    paddock_test_bail ("prepare: %s", error->message);
  paddock_stage_record_baseline_in_thread (stage, BASELINE_NEVER_MS);
  edit_upper (upper);
  g_usleep (30 * 1000);

  start = g_get_monotonic_time ();
  cpu = cpu_ms ();
  if (pinned)
    {
      token = paddock_stage_review_pinned (stage, NULL, &error);
      if (token == NULL)
        paddock_test_bail ("review (pinned): %s", error->message);
      rows = paddock_review_get_changes (paddock_review_token_get_review (token))->len;
    }
  else
    {
      review = paddock_stage_review (stage, NULL, &error);
      if (review == NULL)
        paddock_test_bail ("review: %s", error->message);
      rows = paddock_review_get_changes (review)->len;
    }
  push (&side->review_ms, (g_get_monotonic_time () - start) / 1e3);
  push (&side->review_cpu, cpu_ms () - cpu);
  check (rows == PIN_CHANGED, "the review does not list exactly the agent's changes");
  if (review_only)
    {
      g_clear_object (&review);
      g_clear_pointer (&token, paddock_review_token_unref);
      g_clear_object (&stage);
      paddock_remove_tree (stage_dir);
      return;
    }

  start = g_get_monotonic_time ();
  cpu = cpu_ms ();
  if (pinned ? !paddock_stage_apply_reviewed (stage, paddock_review_token_get_id (token), none, none, NULL,
                                              "bench", &result, NULL, &error)
             : !paddock_stage_apply (stage, none, none, "bench", &result, NULL, &error))
    paddock_test_bail ("apply%s: %s", pinned ? " (pinned)" : "", error->message);
  push (&side->apply_ms, (g_get_monotonic_time () - start) / 1e3);
  push (&side->apply_cpu, cpu_ms () - cpu);
  check (result->applied->len == PIN_CHANGED + PIN_RENAMED, "the apply did not apply every change");
  check (result->conflicts->len == 0, "the apply saw conflicts where there are none");

  g_clear_object (&review);
  g_clear_pointer (&token, paddock_review_token_unref);
  g_clear_object (&stage);
  restore_workspace (workspace);
  paddock_remove_tree (stage_dir);
}

int
main (int    argc,
      char **argv)
{
  guint rounds = 11;
  g_autoptr(GError) error = NULL;
  g_autofree char *root = NULL;
  g_autofree char *w_plain = NULL;
  g_autofree char *w_pinned = NULL;
  Side plain = { NULL, }, pinned = { NULL, };

  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--rounds") && i + 1 < argc)
        rounds = (guint) g_ascii_strtoull (argv[++i], NULL, 10);
      else if (g_str_equal (argv[i], "--review-only"))
        review_only = TRUE;
      else
        {
          fprintf (stderr, "Usage: %s [--rounds N] [--review-only]\n", argv[0]);
          return 2;
        }
    }
  rounds = MAX (rounds, 1);
  if (geteuid () != 0)
    {
      printf ("bench/pin-cost: skipped: needs root (whiteouts are character devices 0/0)\n");
      return 0;
    }

  root = g_dir_make_tmp ("paddock-bench-pin-cost-XXXXXX", &error);
  if (root == NULL)
    paddock_test_bail ("%s", error->message);
  w_plain = g_build_filename (root, "w-plain", NULL);
  w_pinned = g_build_filename (root, "w-pinned", NULL);
  generate_tree (w_plain, PIN_FILES);
  generate_tree (w_pinned, PIN_FILES);

  /* A warm-up round, then the measured ones. */
  for (guint r = 0; r <= rounds; r++)
    {
      Side *first = r % 2 ? &pinned : &plain;
      Side *second = r % 2 ? &plain : &pinned;

      run_side (root, first == &pinned ? w_pinned : w_plain, r, first == &pinned, first);
      run_side (root, second == &pinned ? w_pinned : w_plain, r, second == &pinned, second);
      if (r == 0)
        {
          GArray **all[] = { &plain.review_ms, &plain.review_cpu, &plain.apply_ms, &plain.apply_cpu,
                             &pinned.review_ms, &pinned.review_cpu, &pinned.apply_ms, &pinned.apply_cpu };

          for (guint i = 0; i < G_N_ELEMENTS (all); i++)
            if (*all[i] != NULL)
              g_array_set_size (*all[i], 0);
        }
    }

  printf ("bench/pin-cost - in-process, %u rounds after a warm-up, medians; %u files, %u changes "
          "(%u moved)\n", rounds, PIN_FILES, PIN_CHANGED, PIN_RENAMED);
  printf ("review, first call: unpinned %.1f ms (cpu %.1f), pinned %.1f ms (cpu %.1f): ratio %.3f (cpu %.3f)\n",
          bench_median (plain.review_ms), bench_median (plain.review_cpu), bench_median (pinned.review_ms),
          bench_median (pinned.review_cpu), bench_median (pinned.review_ms) / bench_median (plain.review_ms),
          bench_median (pinned.review_cpu) / bench_median (plain.review_cpu));
  if (!review_only)
    printf ("apply of all:       unpinned %.1f ms (cpu %.1f), pinned %.1f ms (cpu %.1f): ratio %.3f (cpu %.3f)\n",
          bench_median (plain.apply_ms), bench_median (plain.apply_cpu), bench_median (pinned.apply_ms),
          bench_median (pinned.apply_cpu), bench_median (pinned.apply_ms) / bench_median (plain.apply_ms),
          bench_median (pinned.apply_cpu) / bench_median (plain.apply_cpu));

  paddock_remove_tree (root);
  return failed ? 1 : 0;
}
