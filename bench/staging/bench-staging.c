/* bench-staging.c — review and apply of staged changes, next to git
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Prints, in one run on this machine, each figure next to its peer:
 *  1. the review workflow on a 10,000-file workspace, 20 files changed by
 *     the agent and 10 of them applied: Session1.ListChanges, GetDiff of
 *     each of the 20, Apply of 10 chosen paths; next to the git-worktree
 *     workflow on a repository of the same tree (`git worktree add`, the
 *     same 20 edits, `git status --porcelain`, `git diff` of each, a commit
 *     in the worktree and `git checkout <branch> -- <10 paths>` in the main
 *     tree), and ANCHORS.md's published pVisor figure;
 *  2. a 100,000-file workspace with 1,000 changes made by the agent (900
 *     files modified, 100 moved to a new name in another folder):
 *     ListChanges next to `git status --porcelain` (-uall, and git's
 *     default) on a repository of the same tree with the same changes made
 *     in its work tree, interleaved; GetDiff of one path; and Apply of all
 *     changes (a fresh session each time; the applied workspace is then
 *     compared with git's tree by `diff -r`, and put back).
 *
 * The trees are generated once per run (deterministic source-like text
 * files of 1-8 KiB, 100 per folder). They, the daemon's state folder and
 * its private bus live on a tmpfs mounted in a private mount namespace when
 * this process may mount one (the sandbox refuses workspaces under /dev, so
 * /dev/shm cannot hold them), else under $TMPDIR; the output says which.
 *
 * Usage: bench-staging [--quick] [--disk]
 *   --quick: 3 review rounds, 5 list rounds, one Apply (the full run: ~45 s)
 *   --disk:  everything under $TMPDIR even when a tmpfs could be mounted,
 *            to see what fsync costs there (writing the trees takes minutes
 *            on a slow disk)
 *
 * Every session made here is destroyed, the daemon stopped and the trees
 * removed before exit, failures included (a helper process removes the
 * trees if this one dies). Exits non-zero when Paddock's correctness breaks
 * during the run: a wrong review list, a rename not detected, an apply
 * that leaves git seeing other changes than the agent's.
 */

#include "config.h"

#include "bench-common.h"
#include "bench-staging-support.h"

#define _GNU_SOURCE 1

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixfdlist.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-durable-file.h"

#define SMALL_FILES       10000
#define SMALL_CHANGED     20
#define SMALL_APPLIED     10
#define LARGE_FILES       100000
#define LARGE_CHANGED     1000
#define LARGE_RENAMED     100

/* ANCHORS.md: review workflow, 10,000 files, 20 changed. */
#define PUBLISHED_PVISOR_MS     141.0
#define PUBLISHED_WORKTREE_MS   248.0

/* ------------------------------------------------------------------------ */
/* 1. The review workflow, 10,000 files                                      */

/* The 20 files edited in round @round (another set each round), the even
 * ones applied. */
static GPtrArray *
small_edit_set (int round)
{
  GPtrArray *rels = g_ptr_array_new_with_free_func (g_free);

  for (guint k = 0; k < SMALL_CHANGED; k++)
    g_ptr_array_add (rels, file_rel ((k * (SMALL_FILES / SMALL_CHANGED) + 37 + (guint) (round + 1) * 13) %
                                     SMALL_FILES));
  return rels;
}

typedef struct
{
  GArray *ours_review;     /* ListChanges + 20 GetDiff + Apply of 10 */
  GArray *ours_list;
  GArray *ours_diffs;
  GArray *ours_apply;
  GArray *ours_create;     /* CreateSession's reply */
  GArray *ours_ready;      /* CreateSession until the 20 edits are done */
  GArray *peer_total;      /* worktree add + edits + status + diffs + commit + checkout */
  GArray *peer_setup;      /* worktree add + edits */
  GArray *peer_review;     /* status + diffs + commit + checkout */
  GArray *peer_status;
  GArray *peer_diffs;
  GArray *peer_bring;
} SmallFigures;

static void
paddock_small_round (const char   *workspace,
                     int           round,
                     SmallFigures *f)
{
  g_autoptr(GPtrArray) rels = small_edit_set (round);
  g_autofree char *script = edit_script (workspace, rels, NULL, NULL, round);
  g_autoptr(GPtrArray) chosen = g_ptr_array_new ();
  Session s;
  ChangeList list;
  gint64 start;
  gint64 lap;
  double list_ms;
  double diffs_ms;
  double apply_ms;
  double review_ms;
  gsize diff_bytes = 0;
  guint n_conflicts = 0;
  guint n_applied;

  for (guint k = 0; k < rels->len; k += 2)
    g_ptr_array_add (chosen, g_ptr_array_index (rels, k));
  g_ptr_array_add (chosen, NULL);

  s = start_session (workspace, script, 60);

  start = g_get_monotonic_time ();
  list = list_changes (s.path, &list_ms);
  lap = g_get_monotonic_time ();
  for (guint i = 0; i < list.paths->len; i++)
    diff_bytes += get_diff (s.path, g_ptr_array_index (list.paths, i));
  diffs_ms = bench_ms_since (lap);
  lap = g_get_monotonic_time ();
  n_applied = apply (s.path, (const char * const *) chosen->pdata, &n_conflicts);
  apply_ms = bench_ms_since (lap);
  review_ms = bench_ms_since (start);

  check (list.n_rows == SMALL_CHANGED && list.n_modified == SMALL_CHANGED,
         "10k review: ListChanges does not list exactly the 20 modified files");
  check (diff_bytes > 0, "10k review: empty diffs");
  check (n_applied == SMALL_APPLIED && n_conflicts == 0, "10k review: Apply did not apply the 10 paths");
  change_list_clear (&list);
  destroy_session (s.path);
  g_free (s.path);

  if (round < 0)
    return;
  push (&f->ours_review, review_ms);
  push (&f->ours_list, list_ms);
  push (&f->ours_diffs, diffs_ms);
  push (&f->ours_apply, apply_ms);
  push (&f->ours_create, s.create_ms);
  push (&f->ours_ready, s.ready_ms);
}

static void
git_small_round (const char   *repo,
                 int           round,
                 SmallFigures *f)
{
  g_autoptr(GPtrArray) rels = small_edit_set (round);
  g_autofree char *worktree = g_strdup_printf ("%s-wt%d", repo, round + 1);
  g_autofree char *branch = g_strdup_printf ("agent-%d", round + 1);
  g_autofree char *script = edit_script (worktree, rels, NULL, NULL, round);
  g_autofree char *status = NULL;
  g_autoptr(GPtrArray) checkout = g_ptr_array_new ();
  const char *edit_argv[] = { sh_path, "-c", script, NULL };
  gint64 start;
  gint64 lap;
  double setup_ms;
  double status_ms;
  double diffs_ms;
  double bring_ms;
  double total_ms;
  gsize diff_bytes = 0;

  g_ptr_array_add (checkout, (gpointer) "checkout");
  g_ptr_array_add (checkout, branch);
  g_ptr_array_add (checkout, (gpointer) "--");
  for (guint k = 0; k < rels->len; k += 2)
    g_ptr_array_add (checkout, g_ptr_array_index (rels, k));

  start = g_get_monotonic_time ();
  git (NULL, repo, "worktree", "add", "-q", "-b", branch, worktree, NULL);
  run (edit_argv, NULL, NULL);
  setup_ms = bench_ms_since (start);

  lap = g_get_monotonic_time ();
  git (&status, worktree, "status", "--porcelain", NULL);
  status_ms = bench_ms_since (lap);
  lap = g_get_monotonic_time ();
  for (guint i = 0; i < rels->len; i++)
    {
      g_autofree char *diff = NULL;

      git (&diff, worktree, "diff", "--", g_ptr_array_index (rels, i), NULL);
      diff_bytes += strlen (diff);
    }
  diffs_ms = bench_ms_since (lap);
  lap = g_get_monotonic_time ();
  git (NULL, worktree, "commit", "-q", "-a", "-m", "agent", NULL);
  git_argv (checkout, repo, NULL);
  bring_ms = bench_ms_since (lap);
  total_ms = bench_ms_since (start);

  check (count_lines (status) == SMALL_CHANGED && diff_bytes > 0,
         "10k git peer: git status does not list the 20 files");

  /* Back to the committed tree for the next round. */
  git (NULL, repo, "worktree", "remove", "--force", worktree, NULL);
  git (NULL, repo, "reset", "-q", "--hard", NULL);
  git (NULL, repo, "branch", "-q", "-D", branch, NULL);

  if (round < 0)
    return;
  push (&f->peer_total, total_ms);
  push (&f->peer_setup, setup_ms);
  push (&f->peer_review, status_ms + diffs_ms + bring_ms);
  push (&f->peer_status, status_ms);
  push (&f->peer_diffs, diffs_ms);
  push (&f->peer_bring, bring_ms);
}

/* ------------------------------------------------------------------------ */
/* 2. 100,000 files, 1,000 changes of which 100 renames                      */

typedef struct
{
  double  ready_first_ms;
  double  create_first_ms;
  double  list_first_ms;
  GArray *list;             /* ListChanges, warm */
  GArray *diff;             /* GetDiff of one modified file */
  GArray *apply;            /* Apply of everything, fresh session each */
  GArray *create;
  GArray *ready;
  GArray *status_all;       /* git status --porcelain -uall */
  GArray *status_default;   /* git status --porcelain */
  guint   applied_paths;
  guint   rows;
  guint   renamed;
} LargeFigures;

static char *
large_script (const char *workspace,
              int         round)
{
  g_autoptr(GPtrArray) modify = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) from = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) to = g_ptr_array_new_with_free_func (g_free);

  for (guint k = 0; k < LARGE_CHANGED; k++)
    {
      guint index = k * (LARGE_FILES / LARGE_CHANGED) + 50;

      if (k % (LARGE_CHANGED / LARGE_RENAMED) == 0)
        {
          g_ptr_array_add (from, file_rel (index));
          g_ptr_array_add (to, moved_rel (index));
        }
      else
        g_ptr_array_add (modify, file_rel (index));
    }
  return edit_script (workspace, modify, from, to, round);
}

/* Puts the changed files of @root back as generate_tree() wrote them. */
static void
restore_large (const char *root)
{
  g_autoptr(GString) contents = g_string_sized_new (9 * 1024);

  for (guint k = 0; k < LARGE_CHANGED; k++)
    {
      guint index = k * (LARGE_FILES / LARGE_CHANGED) + 50;
      g_autofree char *rel = file_rel (index);
      g_autofree char *path = g_build_filename (root, rel, NULL);

      if (k % (LARGE_CHANGED / LARGE_RENAMED) == 0)
        {
          g_autofree char *moved = moved_rel (index);
          g_autofree char *moved_path = g_build_filename (root, moved, NULL);

          if (unlink (moved_path) != 0)
            paddock_test_bail ("unlink %s: %s", moved_path, g_strerror (errno));
        }
      file_contents (index, contents);
      write_file (path, contents->str, contents->len);
    }
}

static double
git_status_ms (const char *repo,
               gboolean    untracked_all)
{
  g_autofree char *out = NULL;
  gint64 start = g_get_monotonic_time ();
  double ms;

  git (&out, repo, "status", "--porcelain", untracked_all ? "-uall" : "-unormal", NULL);
  ms = bench_ms_since (start);
  /* 900 modified, 100 deleted, 100 untracked: git status does not pair an
   * untracked file with a deleted one. */
  check (count_lines (out) == LARGE_CHANGED + LARGE_RENAMED,
         "100k: git status does not show exactly the agent's changes");
  return ms;
}

/* @repo holds the same tree as @workspace, with the agent's changes made
 * in its work tree (natively, by the same script). */
static void
measure_large (const char   *workspace,
               const char   *repo,
               guint         list_rounds,
               guint         apply_rounds,
               LargeFigures *f)
{
  for (guint a = 0; a < apply_rounds; a++)
    {
      g_autofree char *script = large_script (workspace, 0);
      Session s = start_session (workspace, script, 300);
      ChangeList list;
      double ms = 0;
      guint n_conflicts = 0;
      gint64 start;

      push (&f->create, s.create_ms);
      push (&f->ready, s.ready_ms);

      list = list_changes (s.path, &ms);
      if (a == 0)
        {
          f->create_first_ms = s.create_ms;
          f->ready_first_ms = s.ready_ms;
          f->list_first_ms = ms;
          f->rows = list.n_rows;
          f->renamed = list.n_renamed;
          /* Interleaved, so that the machine's noise hits all three; the
           * first git round (index refresh) is a warm-up. */
          for (int r = -1; r < (int) list_rounds; r++)
            {
              ChangeList again = list_changes (s.path, &ms);
              double all = git_status_ms (repo, TRUE);
              double normal = git_status_ms (repo, FALSE);

              change_list_clear (&again);
              if (r < 0)
                continue;
              push (&f->list, ms);
              push (&f->status_all, all);
              push (&f->status_default, normal);
            }
          for (guint r = 0; r < list_rounds; r++)
            {
              /* Change k = r + 1 is a modification (every tenth is a move). */
              g_autofree char *rel = file_rel ((r + 1) * (LARGE_FILES / LARGE_CHANGED) + 50);
              gint64 lap = g_get_monotonic_time ();

              check (get_diff (s.path, rel) > 0, "100k: an empty diff");
              push (&f->diff, bench_ms_since (lap));
            }
        }
      check (list.n_rows == LARGE_CHANGED, "100k: ListChanges does not list 1,000 changes");
      check (list.n_renamed == LARGE_RENAMED, "100k: ListChanges does not find the 100 renames");
      check (list.n_modified == LARGE_CHANGED - LARGE_RENAMED && list.n_other == 0,
             "100k: ListChanges lists other kinds than the 900 modifications");
      check (list.n_conflicts == 0, "100k: ListChanges reports conflicts");
      change_list_clear (&list);

      start = g_get_monotonic_time ();
      f->applied_paths = apply (s.path, NULL, &n_conflicts);
      push (&f->apply, bench_ms_since (start));
      check (n_conflicts == 0, "100k: Apply reports conflicts");

      list = list_changes (s.path, &ms);
      check (list.n_rows == 0, "100k: changes remain listed after Apply of all");
      change_list_clear (&list);
      destroy_session (s.path);
      g_free (s.path);

      /* The workspace is now what the agent made of it: git's tree. */
      {
        g_autofree char *repo_tree = g_strdup_printf ("%s/", repo);
        g_autofree char *ws_tree = g_strdup_printf ("%s/", workspace);
        const char *diff_argv[] = { "diff", "-r", "-q", "--exclude=.git", ws_tree, repo_tree, NULL };
        g_autofree char *out = NULL;
        g_autofree char *err = NULL;
        int status = 0;

        if (!g_spawn_sync (NULL, (char **) diff_argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out,
                           &err, &status, NULL) ||
            !g_spawn_check_wait_status (status, NULL))
          {
            g_printerr ("bench-staging: after Apply, the workspace differs from the agent's "
                        "tree:\n%.2000s%.500s", out != NULL ? out : "", err != NULL ? err : "");
            check (FALSE, "100k: Apply did not reproduce the agent's tree");
          }
      }
      restore_large (workspace);
    }
}


int
main (int   argc,
      char *argv[])
{
  g_autofree char *small_ws = NULL;
  g_autofree char *small_repo = NULL;
  g_autofree char *large_ws = NULL;
  g_autofree char *large_repo = NULL;
  gboolean quick = FALSE;
  gboolean on_disk = FALSE;
  guint small_rounds;
  guint list_rounds;
  guint apply_rounds;
  SmallFigures small = { NULL, };
  LargeFigures large = { 0, };
  gint64 start;
  double gen_small_s;
  double gen_large_s;
  double git_small_s;
  double git_large_s;
  double ours;
  double peer;
  double ours_all;
  double peer_all;
  double list_ms;
  double status_ms;
  const char *where;
  g_autofree char *load_at_start = g_strdup ("unknown");

  g_set_prgname ("bench-staging");
  signal (SIGPIPE, SIG_IGN);

  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--quick"))
        quick = TRUE;
      else if (g_str_equal (argv[i], "--disk"))
        on_disk = TRUE;
      else
        {
          g_printerr ("usage: %s [--quick] [--disk]\n", argv[0]);
          return 2;
        }
    }
  small_rounds = quick ? 3 : 7;
  list_rounds = quick ? 5 : 7;
  apply_rounds = quick ? 1 : 3;

  where = prepare_run ("paddock-bench-staging", on_disk);

  small_ws = g_build_filename (base_dir, "ws10k", NULL);
  small_repo = g_build_filename (base_dir, "git10k", NULL);
  large_ws = g_build_filename (base_dir, "ws100k", NULL);
  large_repo = g_build_filename (base_dir, "git100k", NULL);

  /* The trees: 10k for Paddock and the same 10k in a git repository;
   * 100k for Paddock and the same 100k in a git repository. */
  start = g_get_monotonic_time ();
  generate_tree (small_ws, SMALL_FILES);
  generate_tree (small_repo, SMALL_FILES);
  gen_small_s = bench_ms_since (start) / 1000;
  start = g_get_monotonic_time ();
  git (NULL, small_repo, "init", "-q", NULL);
  git (NULL, small_repo, "add", "-A", NULL);
  git (NULL, small_repo, "commit", "-q", "-m", "tree", NULL);
  git_small_s = bench_ms_since (start) / 1000;

  start = g_get_monotonic_time ();
  generate_tree (large_ws, LARGE_FILES);
  generate_tree (large_repo, LARGE_FILES);
  gen_large_s = bench_ms_since (start) / 2000;
  start = g_get_monotonic_time ();
  git (NULL, large_repo, "init", "-q", NULL);
  git (NULL, large_repo, "add", "-A", NULL);
  git (NULL, large_repo, "commit", "-q", "-m", "tree", NULL);
  git_large_s = bench_ms_since (start) / 1000;
  {
    /* The agent's changes, made natively in git's work tree. */
    g_autofree char *script = large_script (large_repo, 0);
    const char *edit_argv[] = { sh_path, "-c", script, NULL };

    run (edit_argv, NULL, NULL);
  }

  g_setenv ("PADDOCK_TEST_QUIET", "1", TRUE);
  daemon_under_test = paddock_test_daemon_new (NULL);
  bus = paddock_test_daemon_get_connection (daemon_under_test);

  {
    g_autofree char *loadavg = NULL;

    if (g_file_get_contents ("/proc/loadavg", &loadavg, NULL, NULL))
      {
        g_auto(GStrv) fields = g_strsplit (loadavg, " ", 4);

        if (g_strv_length (fields) >= 3)
          load_at_start = g_strdup_printf ("%s %s %s (a busy machine makes both sides noisy)",
                                           fields[0], fields[1], fields[2]);
      }
  }

  /* 1. One warm-up round each, then interleaved so the noise hits both. */
  for (int r = -1; r < (int) small_rounds; r++)
    {
      paddock_small_round (small_ws, r, &small);
      git_small_round (small_repo, r, &small);
    }

  /* 2. */
  measure_large (large_ws, large_repo, list_rounds, apply_rounds, &large);

  ours = bench_median (small.ours_review);
  peer = bench_median (small.peer_review);
  ours_all = bench_median (small.ours_ready) + ours;
  peer_all = bench_median (small.peer_total);

  g_print ("bench/staging - %s; %u cores, load average %s; trees, daemon state and bus on %s\n",
           quick ? "--quick" : "full run", g_get_num_processors (), load_at_start, where);
  g_print ("trees: 10k files written in %.1f s (x2), committed to git in %.1f s; "
           "100k files written in %.1f s (x2), committed in %.1f s\n\n",
           gen_small_s, git_small_s, gen_large_s, git_large_s);

  g_print ("1. review workflow: %u files, %u changed by the agent, %u applied; medians of %u rounds\n",
           SMALL_FILES, SMALL_CHANGED, SMALL_APPLIED, small_rounds);
  g_print ("   paddock: ListChanges + GetDiff x%u + Apply of %u paths (one batch)\n",
           SMALL_CHANGED, SMALL_APPLIED);
  g_print ("   git:     git status --porcelain + git diff -- F x%u + commit -a in the worktree\n"
           "            + git checkout <worktree branch> -- <%u paths> in the main tree\n",
           SMALL_CHANGED, SMALL_APPLIED);
  g_print ("%-50s %8.1f ms   (list %.1f, diffs %.1f, apply %.1f; min %.1f max %.1f)\n",
           "paddock review", ours, bench_median (small.ours_list), bench_median (small.ours_diffs),
           bench_median (small.ours_apply), minimum (small.ours_review), maximum (small.ours_review));
  g_print ("%-50s %8.1f ms   (status %.1f, diffs %.1f, commit+checkout %.1f)\n",
           "git-worktree review", peer, bench_median (small.peer_status), bench_median (small.peer_diffs),
           bench_median (small.peer_bring));
  g_print ("review: ours %.1f ms, peer %.1f ms, ratio %.2f\n", ours, peer, ours / peer);
  g_print ("%-50s %8.1f ms   (CreateSession reply %.1f)\n",
           "paddock session start, until the 20 edits are done", bench_median (small.ours_ready),
           bench_median (small.ours_create));
  g_print ("%-50s %8.1f ms\n", "git worktree add + the 20 edits", bench_median (small.peer_setup));
  g_print ("whole workflow (start + edits + review + apply): ours %.1f ms, peer %.1f ms, ratio %.2f\n",
           ours_all, peer_all, ours_all / peer_all);
  g_print ("   published (ANCHORS.md): pVisor stage %.0f ms, git worktree %.0f ms (ours/pVisor: review %.2f, whole %.2f)\n",
           PUBLISHED_PVISOR_MS, PUBLISHED_WORKTREE_MS, ours / PUBLISHED_PVISOR_MS,
           ours_all / PUBLISHED_PVISOR_MS);
  g_print ("   target: faster than the git-worktree workflow: review %s, whole %s\n\n",
           bench_verdict (ours < peer), bench_verdict (ours_all < peer_all));

  list_ms = bench_median (large.list);
  status_ms = bench_median (large.status_all);
  g_print ("2. %u files, %u changes (%u modified, %u moved to another folder); "
           "ListChanges and git status interleaved, medians of %u; Apply n=%u (fresh session each)\n",
           LARGE_FILES, LARGE_CHANGED, LARGE_CHANGED - LARGE_RENAMED, LARGE_RENAMED, list_rounds,
           apply_rounds);
  g_print ("%-50s %8u rows, %u renames found\n", "paddock ListChanges", large.rows, large.renamed);
  g_print ("%-50s %8.1f ms   (first call %.1f; min %.1f max %.1f)\n", "paddock ListChanges",
           list_ms, large.list_first_ms, minimum (large.list), maximum (large.list));
  g_print ("%-50s %8.1f ms\n", "git status --porcelain -uall (warm)", status_ms);
  g_print ("%-50s %8.1f ms   (no rename pairing: 100 D + 100 ?\?)\n",
           "git status --porcelain (default -unormal, warm)", bench_median (large.status_default));
  g_print ("list changes: ours %.1f ms, peer %.1f ms, ratio %.2f   (peer: git status -uall)\n",
           list_ms, status_ms, list_ms / status_ms);
  g_print ("list changes: ours %.1f ms, peer %.1f ms, ratio %.2f   (peer: git status default)\n",
           list_ms, bench_median (large.status_default), list_ms / bench_median (large.status_default));
  g_print ("%-50s %8.1f ms   (%u paths applied; min %.1f max %.1f)\n",
           "paddock Apply of all 1,000 changes", bench_median (large.apply), large.applied_paths,
           minimum (large.apply), maximum (large.apply));
  g_print ("apply: ours %.1f ms, git status -uall %.1f ms, ratio %.2f   (for scale: git has no one-step equivalent)\n",
           bench_median (large.apply), status_ms, bench_median (large.apply) / status_ms);
  g_print ("%-50s %8.1f ms   (one modified file, after a ListChanges: from that review while neither side changed)\n",
           "paddock GetDiff, one path", bench_median (large.diff));
  g_print ("%-50s %8.1f ms   (CreateSession reply %.1f; first %.1f / %.1f)\n",
           "paddock session start, until the 1,000 edits done", bench_median (large.ready),
           bench_median (large.create), large.ready_first_ms, large.create_first_ms);
  g_print ("   target: ListChanges faster than git status -uall: %s\n", bench_verdict (list_ms < status_ms));

  clean_up ();
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
