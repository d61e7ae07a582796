/* bench-pinning.c — what pinning a review by content costs, next to git status and cp -a
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Issue #19: a 10,000-file workspace in which the agent changes 1,000 files
 * (900 modified, 100 moved to a new name in another folder). In rounds
 * (medians), through D-Bus as a client does:
 *  - review: Session1.ListChanges (unpinned) and Session1.Review (every
 *    listed entry pinned by SHA-256), each the first call after the
 *    agent's edits in a session of its own (what a user waits for) and once
 *    more warm; next to `git status --porcelain -uall` on a git repository
 *    of the same tree with the same changes made in its work tree;
 *  - apply of all the changes: Apply after that ListChanges, ApplyReviewed
 *    with that Review's token (each temp file re-hashed before any rename),
 *    next to one `cp -a --parents` of the 1,000 changed files from git's
 *    work tree into a copy of the workspace (the 100 old names then removed
 *    outside the clock; cp does not fsync, Paddock's batch does).
 * Each round has a fresh session per side (pinned first in odd rounds); after
 * each apply the workspace is compared with git's tree by `diff -r` and put
 * back, so every round starts from the same state.
 *
 * Usage: bench-pinning [--quick] [--disk] [--rounds N]
 *   --quick: 3 rounds (the full run: 11)
 *   --disk:  the trees under $TMPDIR even when a tmpfs could be mounted
 * Exits non-zero when a correctness check fails (a wrong list, an apply
 * that does not reproduce the agent's tree).
 */

#include "config.h"

#define _GNU_SOURCE 1

#include "bench-common.h"
#include "bench-staging-support.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#define PIN_BUDGET    1.10   /* issue #19: pinning costs at most 10 % */

static char *
pin_script (const char *workspace)
{
  g_autoptr(GPtrArray) modify = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) from = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) to = g_ptr_array_new_with_free_func (g_free);

  for (guint k = 0; k < PIN_CHANGED; k++)
    {
      if (pin_change_is_move (k))
        {
          g_ptr_array_add (from, file_rel (pin_change_index (k)));
          g_ptr_array_add (to, moved_rel (pin_change_index (k)));
        }
      else
        g_ptr_array_add (modify, file_rel (pin_change_index (k)));
    }
  return edit_script (workspace, modify, from, to, 0);
}

/* Puts the changed files of @root back as generate_tree() wrote them;
 * @unlink_moved: the moved names exist there and go. */
static void
restore_tree (const char *root,
              gboolean    unlink_moved)
{
  g_autoptr(GString) contents = g_string_sized_new (9 * 1024);

  for (guint k = 0; k < PIN_CHANGED; k++)
    {
      g_autofree char *rel = file_rel (pin_change_index (k));
      g_autofree char *path = g_build_filename (root, rel, NULL);

      if (pin_change_is_move (k) && unlink_moved)
        {
          g_autofree char *moved = moved_rel (pin_change_index (k));
          g_autofree char *moved_path = g_build_filename (root, moved, NULL);

          if (unlink (moved_path) != 0)
            paddock_test_bail ("unlink %s: %s", moved_path, g_strerror (errno));
        }
      file_contents (pin_change_index (k), contents);
      write_file (path, contents->str, contents->len);
    }
}

static double
git_status_ms (const char *repo)
{
  g_autofree char *out = NULL;
  gint64 start = g_get_monotonic_time ();
  double ms;

  git (&out, repo, "status", "--porcelain", "-uall", NULL);
  ms = bench_ms_since (start);
  /* 900 modified, 100 deleted, 100 untracked (git pairs no renames here). */
  check (count_lines (out) == PIN_CHANGED + PIN_RENAMED,
         "git status does not show exactly the agent's changes");
  return ms;
}

/* Session1.Review: its rows counted into @list, its token returned. */
static char *
review (const char *session,
        ChangeList *list,
        guint      *pinned,
        double     *ms)
{
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) result = NULL;
  g_autoptr(GVariant) changes = NULL;
  GVariantIter rows;
  const char *path;
  const char *old_path;
  const char *kind;
  const char *type;
  gboolean binary;
  guint32 added;
  guint32 removed;
  gboolean conflict;
  const char *token = NULL;
  gint64 start = g_get_monotonic_time ();

  reply = call (session, "Review", g_variant_new_parsed ("(@a{sv} {},)"), G_VARIANT_TYPE ("(a{sv})"));
  *ms = bench_ms_since (start);

  result = g_variant_get_child_value (reply, 0);
  *list = (ChangeList) { 0, };
  *pinned = 0;
  if (!g_variant_lookup (result, "token", "&s", &token) || !g_variant_lookup (result, "pinned", "u", pinned) ||
      (changes = g_variant_lookup_value (result, "changes", G_VARIANT_TYPE ("a(ayayssbuub)"))) == NULL)
    paddock_test_bail ("Review: no token, pinned or changes in its reply");
  g_variant_iter_init (&rows, changes);
  while (g_variant_iter_next (&rows, "(^&ay^&ay&s&sbuub)", &path, &old_path, &kind, &type, &binary, &added,
                              &removed, &conflict))
    {
      list->n_rows++;
      if (g_str_equal (kind, "modified"))
        list->n_modified++;
      else if (g_str_equal (kind, "renamed"))
        list->n_renamed++;
      else
        list->n_other++;
      if (conflict)
        list->n_conflicts++;
    }
  return g_strdup (token);
}

/* Session1.ApplyReviewed of all the token's changes; how many were applied. */
static guint
apply_reviewed (const char *session,
                const char *token,
                guint      *n_conflicts)
{
  const char *none[] = { NULL };
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) result = NULL;
  g_autoptr(GVariant) applied = NULL;
  g_autoptr(GVariant) conflicts = NULL;

  reply = call (session, "ApplyReviewed",
                g_variant_new ("(s@aay@a{sv})", token, g_variant_new_bytestring_array (none, -1),
                               g_variant_new_parsed ("@a{sv} {}")),
                G_VARIANT_TYPE ("(a{sv})"));
  result = g_variant_get_child_value (reply, 0);
  applied = g_variant_lookup_value (result, "applied", G_VARIANT_TYPE_BYTESTRING_ARRAY);
  conflicts = g_variant_lookup_value (result, "conflicts", G_VARIANT_TYPE_BYTESTRING_ARRAY);
  if (applied == NULL || conflicts == NULL)
    paddock_test_bail ("ApplyReviewed: no applied or conflicts in its reply");
  *n_conflicts = (guint) g_variant_n_children (conflicts);
  return (guint) g_variant_n_children (applied);
}

static void
check_list (const ChangeList *list,
            const char       *what)
{
  g_autofree char *rows = g_strdup_printf ("%s does not list 1,000 changes with 100 renames (%u rows, %u renames, "
                                           "%u modified, %u other, %u conflicts)", what, list->n_rows,
                                           list->n_renamed, list->n_modified, list->n_other, list->n_conflicts);

  check (list->n_rows == PIN_CHANGED && list->n_renamed == PIN_RENAMED &&
         list->n_modified == PIN_CHANGED - PIN_RENAMED && list->n_other == 0 && list->n_conflicts == 0, rows);
}

/* The workspace after an apply is git's work tree; then it is put back. */
static void
check_applied_and_restore (const char *workspace,
                           const char *repo,
                           const char *what)
{
  g_autofree char *repo_tree = g_strdup_printf ("%s/", repo);
  g_autofree char *ws_tree = g_strdup_printf ("%s/", workspace);
  const char *diff_argv[] = { "diff", "-r", "-q", "--exclude=.git", ws_tree, repo_tree, NULL };
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status = 0;

  if (!g_spawn_sync (NULL, (char **) diff_argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err, &status,
                     NULL) ||
      !g_spawn_check_wait_status (status, NULL))
    {
      g_autofree char *message = g_strdup_printf ("%s did not reproduce the agent's tree", what);

      g_printerr ("bench-pinning: after %s, the workspace differs from the agent's tree:\n%.2000s%.500s", what,
                  out != NULL ? out : "", err != NULL ? err : "");
      check (FALSE, message);
    }
  restore_tree (workspace, TRUE);
}

/* The session's baseline probably counts a workspace file written in the tick
 * of its start as changed since (paddock-file-stamp.h: it errs on the side
 * of a conflict); the round before has just rewritten 1,000 files. A user
 * does not start a session within milliseconds of such a write. */
static void
settle (void)
{
  g_usleep (200 * 1000);
}

typedef struct
{
  GArray *list_first;     /* ListChanges, first call after the edits */
  GArray *list_warm;
  GArray *review_first;   /* Review, first call after the edits */
  GArray *review_warm;
  GArray *status;         /* git status --porcelain -uall, in the same rounds */
  GArray *apply;          /* Apply of all, after ListChanges */
  GArray *apply_pinned;   /* ApplyReviewed of all, with Review's token */
  GArray *cp;             /* cp -a --parents of the 1,000 changed files */
  GArray *ready;          /* session start until the agent's edits are done */
  guint   pinned;
  guint   applied;
  guint   applied_pinned;
} PinFigures;

static void
unpinned_round (const char *workspace,
                const char *repo,
                PinFigures *f)
{
  g_autofree char *script = pin_script (workspace);
  Session s = (settle (), start_session (workspace, script, 300));
  ChangeList list;
  double ms = 0;
  guint n_conflicts = 0;
  gint64 start;

  push (&f->ready, s.ready_ms);
  list = list_changes (s.path, &ms);
  push (&f->list_first, ms);
  check_list (&list, "ListChanges");
  change_list_clear (&list);
  list = list_changes (s.path, &ms);
  push (&f->list_warm, ms);
  change_list_clear (&list);
  push (&f->status, git_status_ms (repo));

  start = g_get_monotonic_time ();
  f->applied = apply (s.path, NULL, &n_conflicts);
  push (&f->apply, bench_ms_since (start));
  check (n_conflicts == 0 && f->applied > 0, "Apply reports conflicts or applies nothing");
  list = list_changes (s.path, &ms);
  check (list.n_rows == 0, "changes remain listed after Apply of all");
  change_list_clear (&list);
  destroy_session (s.path);
  g_free (s.path);
  check_applied_and_restore (workspace, repo, "Apply");
}

static void
pinned_round (const char *workspace,
              const char *repo,
              PinFigures *f)
{
  g_autofree char *script = pin_script (workspace);
  Session s = (settle (), start_session (workspace, script, 300));
  g_autofree char *token = NULL;
  g_autofree char *again = NULL;
  ChangeList list;
  double ms = 0;
  guint n_conflicts = 0;
  gint64 start;

  push (&f->ready, s.ready_ms);
  token = review (s.path, &list, &f->pinned, &ms);
  push (&f->review_first, ms);
  check_list (&list, "Review");
  /* 900 modified paths, and both sides of each of the 100 renames. */
  check (f->pinned == PIN_CHANGED + PIN_RENAMED, "Review does not pin every path of its rows");
  again = review (s.path, &list, &f->pinned, &ms);
  push (&f->review_warm, ms);
  check (g_str_equal (token, again), "an unchanged Review gave another token");
  push (&f->status, git_status_ms (repo));

  start = g_get_monotonic_time ();
  f->applied_pinned = apply_reviewed (s.path, token, &n_conflicts);
  push (&f->apply_pinned, bench_ms_since (start));
  check (n_conflicts == 0 && f->applied_pinned > 0, "ApplyReviewed reports conflicts or applies nothing");
  list = list_changes (s.path, &ms);
  check (list.n_rows == 0, "changes remain listed after ApplyReviewed of all");
  change_list_clear (&list);
  destroy_session (s.path);
  g_free (s.path);
  check_applied_and_restore (workspace, repo, "ApplyReviewed");
}

/* One cp -a of the 1,000 changed files (the moved ones under their new
 * name) from git's work tree into @copy; the old names removed after. */
static void
cp_round (const char *repo,
          const char *copy,
          PinFigures *f)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  gint64 start;

  g_ptr_array_add (argv, g_strdup ("cp"));
  g_ptr_array_add (argv, g_strdup ("-a"));
  g_ptr_array_add (argv, g_strdup ("--parents"));
  for (guint k = 0; k < PIN_CHANGED; k++)
    g_ptr_array_add (argv, pin_change_is_move (k) ? moved_rel (pin_change_index (k)) : file_rel (pin_change_index (k)));
  g_ptr_array_add (argv, g_strdup (copy));
  g_ptr_array_add (argv, NULL);

  start = g_get_monotonic_time ();
  {
    g_autofree char *cp = find_or_bail ("cp");

    g_free (argv->pdata[0]);
    argv->pdata[0] = g_steal_pointer (&cp);
    run ((const char * const *) argv->pdata, repo, NULL);
  }
  push (&f->cp, bench_ms_since (start));

  for (guint k = 0; k < PIN_CHANGED; k += PIN_CHANGED / PIN_RENAMED)
    {
      g_autofree char *rel = file_rel (pin_change_index (k));
      g_autofree char *path = g_build_filename (copy, rel, NULL);

      if (unlink (path) != 0)
        paddock_test_bail ("unlink %s: %s", path, g_strerror (errno));
    }
  check_applied_and_restore (copy, repo, "cp -a");
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *ws = NULL;
  g_autofree char *repo = NULL;
  g_autofree char *copy = NULL;
  g_autofree char *load_at_start = NULL;
  g_autofree char *load_at_end = NULL;
  gboolean quick = FALSE;
  gboolean on_disk = FALSE;
  guint rounds = 0;
  PinFigures f = { NULL, };
  const char *where;
  double list_first, review_first, list_warm, review_warm, status, ap, ap_pinned, cp;
  double r_review, r_apply, r_both;

  g_set_prgname ("bench-pinning");
  signal (SIGPIPE, SIG_IGN);
  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--quick"))
        quick = TRUE;
      else if (g_str_equal (argv[i], "--disk"))
        on_disk = TRUE;
      else if (g_str_equal (argv[i], "--rounds") && i + 1 < argc)
        rounds = (guint) g_ascii_strtoull (argv[++i], NULL, 10);
      else
        {
          g_printerr ("usage: %s [--quick] [--disk] [--rounds N]\n", argv[0]);
          return 2;
        }
    }
  if (rounds == 0 || rounds > 1000)
    rounds = quick ? 3 : 11;

  where = prepare_run ("paddock-bench-pinning", on_disk);
  ws = g_build_filename (base_dir, "ws", NULL);
  repo = g_build_filename (base_dir, "git", NULL);
  copy = g_build_filename (base_dir, "copy", NULL);
  generate_tree (ws, PIN_FILES);
  generate_tree (repo, PIN_FILES);
  generate_tree (copy, PIN_FILES);
  git (NULL, repo, "init", "-q", NULL);
  git (NULL, repo, "add", "-A", NULL);
  git (NULL, repo, "commit", "-q", "-m", "tree", NULL);
  {
    /* The agent's changes, made natively in git's work tree. */
    g_autofree char *script = pin_script (repo);
    const char *edit_argv[] = { sh_path, "-c", script, NULL };

    run (edit_argv, NULL, NULL);
  }
  (void) git_status_ms (repo);   /* git's index refresh, once */

  g_setenv ("PADDOCK_TEST_QUIET", "1", TRUE);
  daemon_under_test = paddock_test_daemon_new (NULL);
  bus = paddock_test_daemon_get_connection (daemon_under_test);
  if (!g_file_get_contents ("/proc/loadavg", &load_at_start, NULL, NULL))
    load_at_start = g_strdup ("unknown");

  /* A warm-up round of each, then alternating which side goes first. */
  for (int r = -1; r < (int) rounds; r++)
    {
      PinFigures *into = r < 0 ? &(PinFigures) { NULL, } : &f;

      if (r % 2 != 0)
        pinned_round (ws, repo, into);
      unpinned_round (ws, repo, into);
      if (r % 2 == 0)
        pinned_round (ws, repo, into);
      cp_round (repo, copy, into);
    }
  if (!g_file_get_contents ("/proc/loadavg", &load_at_end, NULL, NULL))
    load_at_end = g_strdup ("unknown");
  g_strchomp (load_at_start);
  g_strchomp (load_at_end);

  list_first = bench_median (f.list_first);
  review_first = bench_median (f.review_first);
  list_warm = bench_median (f.list_warm);
  review_warm = bench_median (f.review_warm);
  status = bench_median (f.status);
  ap = bench_median (f.apply);
  ap_pinned = bench_median (f.apply_pinned);
  cp = bench_median (f.cp);
  r_review = review_first / list_first;
  r_apply = ap_pinned / ap;
  r_both = (review_first + ap_pinned) / (list_first + ap);

  g_print ("bench/pinning - %s; %u cores, load average %s at start, %s at end; trees, daemon state and bus on %s\n",
           quick ? "--quick" : "full run", g_get_num_processors (), load_at_start, load_at_end, where);
  g_print ("%u files, %u changes (%u modified, %u moved to another folder); %u rounds after a warm-up, medians;\n"
           "a fresh session per side per round; session start until the edits are done: %.1f ms\n\n",
           PIN_FILES, PIN_CHANGED, PIN_CHANGED - PIN_RENAMED, PIN_RENAMED, rounds, bench_median (f.ready));
  g_print ("%-52s %8.1f ms   (min %.1f max %.1f)\n", "ListChanges, first call (unpinned)", list_first,
           minimum (f.list_first), maximum (f.list_first));
  g_print ("%-52s %8.1f ms   (min %.1f max %.1f; %u paths pinned)\n", "Review, first call (pinned)", review_first,
           minimum (f.review_first), maximum (f.review_first), f.pinned);
  g_print ("%-52s %8.1f ms\n", "ListChanges, again (cached review)", list_warm);
  g_print ("%-52s %8.1f ms   (the pins are taken again each time)\n", "Review, again (cached review)", review_warm);
  g_print ("%-52s %8.1f ms\n", "git status --porcelain -uall (warm)", status);
  g_print ("%-52s %8.1f ms   (%u paths; min %.1f max %.1f)\n", "Apply of all (unpinned)", ap, f.applied,
           minimum (f.apply), maximum (f.apply));
  g_print ("%-52s %8.1f ms   (%u paths; min %.1f max %.1f)\n", "ApplyReviewed of all (pinned)", ap_pinned,
           f.applied_pinned, minimum (f.apply_pinned), maximum (f.apply_pinned));
  g_print ("%-52s %8.1f ms   (no fsync; the 100 old names removed outside the clock)\n",
           "cp -a --parents of the 1,000 changed files", cp);
  g_print ("\nratio pinned/unpinned, review (first calls):  %.2f   (again: %.2f)\n", r_review,
           review_warm / list_warm);
  g_print ("ratio pinned/unpinned, apply:                 %.2f\n", r_apply);
  g_print ("ratio pinned/unpinned, review + apply:        %.2f\n", r_both);
  g_print ("ratio pinned review / git status -uall:       %.2f\n", review_first / status);
  g_print ("ratio pinned apply / cp -a:                   %.2f\n", ap_pinned / cp);
  g_print ("   target (issue #19): pinning costs at most 10 %%: review %s, apply %s, review + apply %s\n",
           bench_verdict (r_review <= PIN_BUDGET), bench_verdict (r_apply <= PIN_BUDGET),
           bench_verdict (r_both <= PIN_BUDGET));

  clean_up ();
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
