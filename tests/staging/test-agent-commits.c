/* test-agent-commits.c — commits an agent made in its stage, offered as a branch
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Real repositories, made by running git in the test's own folders: the
 * workspace's ("w") and the stage (a copy of it, or an overlay's upper
 * dir holding only what the agent's git wrote).
 */

#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "paddock-agent-commits.h"
#include "paddock-change.h"
#include "paddock-durable-file.h"

typedef struct {
  char *root;
  char *w;       /* the workspace, a repository of the user's */
  char *stage;   /* the copy, or the overlay's upper dir */
} Fixture;

static char *
run_in (const char *dir,
        const char *script)
{
  const char *argv[] = { "/bin/sh", "-ec", script, NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status = 0;

  g_assert_true (g_spawn_sync (dir, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &out, &err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("“%s” in %s failed: %s", script, dir, err);
  return g_strstrip (g_steal_pointer (&out));
}

static gboolean
succeeds_in (const char *dir,
             const char *script)
{
  const char *argv[] = { "/bin/sh", "-ec", script, NULL };
  int status = 0;

  g_assert_true (g_spawn_sync (dir, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL |
                               G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL, &status, NULL));
  return g_spawn_check_wait_status (status, NULL);
}

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;

  f->root = g_dir_make_tmp ("paddock-commits-XXXXXX", &error);
  g_assert_no_error (error);
  f->w = g_build_filename (f->root, "w", NULL);
  f->stage = g_build_filename (f->root, "stage", NULL);
  g_assert_cmpint (g_mkdir (f->w, 0755), ==, 0);
  /* The user's repository: main with two commits, a feature branch. */
  out = run_in (f->w,
                "git init -q -b main . && echo hello > README && git add README && "
                "git commit -q -m 'user: first' && git branch feature && "
                "echo more >> README && git commit -q -am 'user: second'");
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  paddock_remove_tree (f->root);
  g_free (f->root);
  g_free (f->w);
  g_free (f->stage);
}

/* A copy stage where the agent committed twice: a file added, then removed
 * from the tree (it stays in history); and its own config and hook. */
static void
make_copy_stage_with_commits (Fixture *f)
{
  g_autofree char *script = g_strdup_printf ("cp -a '%s' '%s'", f->w, f->stage);
  g_autofree char *out = run_in (f->root, script);
  g_autofree char *out2 = NULL;

  out2 = run_in (f->stage,
                 "echo 'the secret' > secret.txt && git add secret.txt && "
                 "GIT_AUTHOR_NAME=Agent GIT_AUTHOR_EMAIL=agent@example.com git "
                 "commit -q -m 'agent: add secret' -m 'a body line' && "
                 "git rm -q secret.txt && echo agent >> README && git add README && "
                 "GIT_AUTHOR_NAME=Agent GIT_AUTHOR_EMAIL=agent@example.com git "
                 "commit -q -m 'agent: hide secret' && "
                 "git config core.fsmonitor 'touch pwned-by-fsmonitor' && "
                 "git config user.name Evil && "
                 "printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/post-checkout && "
                 "chmod +x .git/hooks/post-checkout");
}

static PaddockAgentCommit *
commit_at (PaddockAgentCommits *commits,
           guint                i)
{
  return g_ptr_array_index (paddock_agent_commits_get_commits (commits), i);
}

static gboolean
files_contain (PaddockAgentCommit *commit,
               const char         *path)
{
  for (guint i = 0; i < commit->files->len; i++)
    if (g_str_equal (g_ptr_array_index (commit->files, i), path))
      return TRUE;
  return FALSE;
}

static void
test_copy_list_and_apply (Fixture       *f,
                          gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockAgentCommits) commits = NULL;
  g_autoptr(PaddockAgentCommits) again = NULL;
  g_autoptr(GBytes) diff = NULL;
  g_autofree char *config_before = NULL;
  g_autofree char *config_after = NULL;
  g_autofree char *hooks_before = NULL;
  g_autofree char *hooks_after = NULL;
  g_autofree char *main_before = NULL;
  g_autofree char *feature_before = NULL;
  g_autofree char *agent_tip = NULL;
  g_autofree char *config_path = g_build_filename (f->w, ".git", "config", NULL);
  g_autofree char *ledger = g_build_filename (f->root, "ledger.jsonl", NULL);
  PaddockAgentCommit *newest, *oldest;
  guint n_objects = 0;

  make_copy_stage_with_commits (f);
  agent_tip = run_in (f->stage, "git rev-parse HEAD");
  main_before = run_in (f->w, "git rev-parse main");
  feature_before = run_in (f->w, "git rev-parse feature");
  g_assert_true (g_file_get_contents (config_path, &config_before, NULL, NULL));
  hooks_before = run_in (f->w, "ls -la .git/hooks | sed 1d");

  commits = paddock_agent_commits_new (f->w, f->stage, PADDOCK_STAGE_KIND_COPY, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_agent_commits_get_commits (commits)->len, ==, 2);
  g_assert_cmpstr (paddock_agent_commits_get_head (commits), ==, "refs/heads/main");
  g_assert_cmpstr (paddock_agent_commits_get_tip (commits), ==, agent_tip);

  newest = commit_at (commits, 0);
  oldest = commit_at (commits, 1);
  g_assert_cmpstr (newest->id, ==, agent_tip);
  g_assert_cmpstr (newest->subject, ==, "agent: hide secret");
  g_assert_cmpstr (oldest->subject, ==, "agent: add secret");
  g_assert_cmpstr (oldest->author, ==, "Agent <agent@example.com>");
  /* The file the agent committed and then removed from the tree is shown. */
  g_assert_cmpuint (oldest->files->len, ==, 1);
  g_assert_true (files_contain (oldest, "secret.txt"));
  g_assert_cmpuint (newest->files->len, ==, 2);
  g_assert_true (files_contain (newest, "secret.txt"));
  g_assert_true (files_contain (newest, "README"));

  diff = paddock_agent_commits_get_diff (commits, oldest->id, &error);
  g_assert_no_error (error);
  {
    g_autofree char *text = g_strndup (g_bytes_get_data (diff, NULL), g_bytes_get_size (diff));

    g_assert_nonnull (strstr (text, "+the secret"));
    g_assert_nonnull (strstr (text, "    a body line"));
    g_assert_nonnull (strstr (text, "Author: Agent <agent@example.com>"));
  }
  /* Listing wrote nothing to the repository: the objects are still only
   * the stage's. */
  {
    g_autofree char *check = g_strdup_printf ("git cat-file -e %s", agent_tip);
    g_assert_false (succeeds_in (f->w, check));
  }
  g_assert_null (paddock_agent_commits_get_diff (commits, main_before, &error));
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_NOT_FOUND);
  g_clear_error (&error);

  g_assert_true (paddock_agent_commits_apply (commits, "paddock/s1", ledger, "the test", &n_objects,
                                              &error));
  g_assert_no_error (error);
  /* On record in the stage's ledger: who, which branch, which commits. */
  {
    g_autofree char *text = NULL;
    g_autofree char *expected = g_strdup_printf ("\"commits\":{\"branch\":\"paddock/s1\",\"commit\":\"%s\","
                                                 "\"from\":\"refs/heads/main\",\"ids\":[\"%s\",\"%s\"],"
                                                 "\"objects\":6}", agent_tip, newest->id, oldest->id);

    g_assert_true (g_file_get_contents (ledger, &text, NULL, NULL));
    g_assert_nonnull (strstr (text, "\"who\":\"the test\""));
    g_assert_nonnull (strstr (text, expected));
    g_assert_cmpuint (strlen (text), >, 0);
    g_assert_cmpint (text[strlen (text) - 1], ==, '\n');
  }
  /* Two commits, their trees, the secret and the new README. */
  g_assert_cmpuint (n_objects, ==, 6);

  {
    g_autofree char *branch = run_in (f->w, "git rev-parse refs/heads/paddock/s1");
    g_autofree char *head = run_in (f->w, "git symbolic-ref HEAD");
    g_autofree char *main_after = run_in (f->w, "git rev-parse main");
    g_autofree char *feature_after = run_in (f->w, "git rev-parse feature");
    g_autofree char *secret = run_in (f->w, "git show paddock/s1~1:secret.txt");
    g_autofree char *status = run_in (f->w, "git status --porcelain");

    g_assert_cmpstr (branch, ==, agent_tip);
    g_assert_cmpstr (head, ==, "refs/heads/main");
    g_assert_cmpstr (main_after, ==, main_before);
    g_assert_cmpstr (feature_after, ==, feature_before);
    g_assert_cmpstr (secret, ==, "the secret");
    /* The working tree and index are the user's, untouched. */
    g_assert_cmpstr (status, ==, "");
  }
  g_assert_true (succeeds_in (f->w, "git fsck --strict --no-dangling"));
  g_assert_true (g_file_get_contents (config_path, &config_after, NULL, NULL));
  g_assert_cmpstr (config_after, ==, config_before);
  g_assert_null (strstr (config_after, "fsmonitor"));
  hooks_after = run_in (f->w, "ls -la .git/hooks | sed 1d");
  g_assert_cmpstr (hooks_after, ==, hooks_before);
  {
    g_autofree char *marker = g_build_filename (f->w, "pwned-by-fsmonitor", NULL);
    g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
  }

  /* The same name again: refused, the branch left as it is. */
  g_assert_false (paddock_agent_commits_apply (commits, "paddock/s1", NULL, NULL, NULL, &error));
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CONFLICT);
  g_clear_error (&error);

  /* Now the repository reaches them: nothing new. */
  again = paddock_agent_commits_new (f->w, f->stage, PADDOCK_STAGE_KIND_COPY, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_agent_commits_get_commits (again)->len, ==, 0);
  g_assert_null (paddock_agent_commits_get_tip (again));
}

static void
test_existing_branch (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockAgentCommits) commits = NULL;
  g_autofree char *taken_before = NULL;
  g_autofree char *taken_after = NULL;
  g_autofree char *out = NULL;

  make_copy_stage_with_commits (f);
  out = run_in (f->w, "git branch paddock/taken feature");
  taken_before = run_in (f->w, "git rev-parse paddock/taken");

  commits = paddock_agent_commits_new (f->w, f->stage, PADDOCK_STAGE_KIND_COPY, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (paddock_agent_commits_apply (commits, "paddock/taken", NULL, NULL, NULL, &error));
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CONFLICT);
  g_clear_error (&error);
  taken_after = run_in (f->w, "git rev-parse paddock/taken");
  g_assert_cmpstr (taken_after, ==, taken_before);

  /* The HEAD of an unborn branch would move with it. */
  g_clear_pointer (&out, g_free);
  out = run_in (f->w, "git symbolic-ref HEAD refs/heads/paddock/unborn");
  g_assert_false (paddock_agent_commits_apply (commits, "paddock/unborn", NULL, NULL, NULL, &error));
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CONFLICT);
  g_clear_error (&error);

  /* A branch named as the new one's folder: git cannot have both. */
  g_clear_pointer (&out, g_free);
  out = run_in (f->w, "git branch taken feature");
  g_assert_false (paddock_agent_commits_apply (commits, "taken/sub", NULL, NULL, NULL, &error));
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CONFLICT);
  g_clear_error (&error);
  /* …nor one inside the new one's name. */
  g_assert_false (paddock_agent_commits_apply (commits, "paddock", NULL, NULL, NULL, &error));
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CONFLICT);
  g_clear_error (&error);
  /* None of these refusals wrote an object. */
  {
    g_autofree char *tip = run_in (f->stage, "git rev-parse HEAD");
    g_autofree char *check = g_strdup_printf ("git cat-file -e %s", tip);
    g_assert_false (succeeds_in (f->w, check));
  }

  g_assert_false (paddock_agent_commits_apply (commits, "bad..name", NULL, NULL, NULL, &error));
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_INVALID_PATH);
}

/* An overlay's upper dir holds only what the agent's git wrote: new loose
 * objects and the branch's ref; HEAD and the rest come from the workspace. */
static void
test_overlay_upper (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockAgentCommits) commits = NULL;
  g_autofree char *merged = g_build_filename (f->root, "merged", NULL);
  g_autofree char *script = g_strdup_printf (
    "cp -a '%s' '%s' && cd '%s' && echo new > new.txt && git add new.txt && "
    "git commit -q -m 'agent: overlay commit' && "
    "mkdir -p '%s/.git/refs/heads' && cp .git/refs/heads/main '%s/.git/refs/heads/main' && "
    "for o in $(cd .git && find objects -type f); do "
    "  [ -e '%s/.git/'$o ] || { mkdir -p \"$(dirname '%s/.git/'$o)\"; cp .git/$o '%s/.git/'$o; }; "
    "done", f->w, merged, merged, f->stage, f->stage, f->w, f->stage, f->stage);
  g_autofree char *out = NULL;
  g_autofree char *tip = NULL;

  g_assert_cmpint (g_mkdir (f->stage, 0755), ==, 0);
  out = run_in (f->root, script);
  tip = run_in (merged, "git rev-parse HEAD");
  {
    g_autofree char *head = g_build_filename (f->stage, ".git", "HEAD", NULL);
    g_assert_false (g_file_test (head, G_FILE_TEST_EXISTS));
  }

  commits = paddock_agent_commits_new (f->w, f->stage, PADDOCK_STAGE_KIND_OVERLAY, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_agent_commits_get_commits (commits)->len, ==, 1);
  g_assert_cmpstr (commit_at (commits, 0)->subject, ==, "agent: overlay commit");
  g_assert_cmpstr (paddock_agent_commits_get_tip (commits), ==, tip);
  g_assert_true (paddock_agent_commits_apply (commits, "paddock/overlay", NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  {
    g_autofree char *branch = run_in (f->w, "git rev-parse paddock/overlay");
    g_assert_cmpstr (branch, ==, tip);
  }
  g_assert_true (succeeds_in (f->w, "git fsck --strict --no-dangling"));
}

/* objects/info/alternates of the stage names another repository that has
 * the agent's objects: never followed (nor a symlinked object folder). */
static void
test_alternates_not_followed (Fixture       *f,
                              gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockAgentCommits) commits = NULL;
  g_autofree char *script = NULL;
  g_autofree char *out = NULL;
  g_autofree char *elsewhere = g_build_filename (f->root, "elsewhere", NULL);

  make_copy_stage_with_commits (f);
  /* Every object the agent made moves to another repository's folder. */
  script = g_strdup_printf (
    "mkdir -p '%s' && cd .git && for o in $(find objects -type f -path 'objects/?""?/*'); do "
    "  [ -e '%s/.git/'$o ] || { mkdir -p \"$(dirname '%s/'$o)\"; mv $o '%s/'$o; }; done && "
    "find objects -mindepth 1 -maxdepth 1 -type d -empty -name '?""?' -delete && "
    "echo '%s/objects' > objects/info/alternates",
    elsewhere, f->w, elsewhere, elsewhere, elsewhere);
  out = run_in (f->stage, script);
  /* git itself follows the alternates: the commits are there for it. */
  g_assert_true (succeeds_in (f->stage, "git log -1 --format=%s HEAD~1 | grep -q 'add secret'"));

  commits = paddock_agent_commits_new (f->w, f->stage, PADDOCK_STAGE_KIND_COPY, NULL, &error);
  g_assert_null (commits);
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* A symlinked object folder is not followed either. */
  g_clear_pointer (&script, g_free);
  g_clear_pointer (&out, g_free);
  script = g_strdup_printf ("cd .git/objects && rm -f info/alternates && "
                            "for d in '%s'/objects/?""?; do n=$(basename $d); "
                            "  if [ -d $n ]; then mv $d/* $n/; else ln -s $d $n; fi; done",
                            elsewhere);
  out = run_in (f->stage, script);
  g_assert_true (succeeds_in (f->stage, "git cat-file -e HEAD~1"));
  commits = paddock_agent_commits_new (f->w, f->stage, PADDOCK_STAGE_KIND_COPY, NULL, &error);
  if (commits != NULL)
    {
      /* Every new object folder happened to exist already (moved back):
       * nothing was symlinked; the list must then be complete. */
      g_assert_cmpuint (paddock_agent_commits_get_commits (commits)->len, ==, 2);
      g_test_message ("no new object folder to symlink");
      return;
    }
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_NOT_FOUND);
}

/* An object whose content does not hash to its name is refused. */
static void
test_corrupt_object (Fixture       *f,
                     gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockAgentCommits) commits = NULL;
  g_autofree char *out = NULL;

  make_copy_stage_with_commits (f);
  /* The new README blob's file now holds the secret blob's content. */
  out = run_in (f->stage,
                "b=$(git rev-parse HEAD:README); s=$(git rev-parse HEAD~1:secret.txt); "
                "bp=.git/objects/$(echo $b | cut -c1-2)/$(echo $b | cut -c3-); "
                "sp=.git/objects/$(echo $s | cut -c1-2)/$(echo $s | cut -c3-); "
                "chmod u+w $bp && cp $sp $bp");
  commits = paddock_agent_commits_new (f->w, f->stage, PADDOCK_STAGE_KIND_COPY, NULL, &error);
  g_assert_null (commits);
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CORRUPT);
}

/* A `.git` file (a worktree's gitdir: line) in the stage is never
 * followed: the commits behind it are not listed. */
static void
test_gitdir_file_not_followed (Fixture       *f,
                               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockAgentCommits) commits = NULL;
  g_autofree char *script = NULL;
  g_autofree char *out = NULL;

  make_copy_stage_with_commits (f);
  script = g_strdup_printf ("mv .git '%s/outside.git' && echo 'gitdir: %s/outside.git' > .git",
                            f->root, f->root);
  out = run_in (f->stage, script);
  g_assert_true (succeeds_in (f->stage, "git log -1 | grep -q 'hide secret'"));
  commits = paddock_agent_commits_new (f->w, f->stage, PADDOCK_STAGE_KIND_COPY, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_agent_commits_get_commits (commits)->len, ==, 0);
}

/* Refs as git may keep them: packed (after `git pack-refs`), or a
 * detached HEAD; and a ref that is a symlink, which is not followed. */
static void
test_packed_detached_symlinked_refs (Fixture       *f,
                                     gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockAgentCommits) packed = NULL;
  g_autoptr(PaddockAgentCommits) detached = NULL;
  g_autoptr(PaddockAgentCommits) symlinked = NULL;
  g_autofree char *out = NULL;
  g_autofree char *script = NULL;

  make_copy_stage_with_commits (f);
  out = run_in (f->stage, "git pack-refs --all && test ! -e .git/refs/heads/main");
  packed = paddock_agent_commits_new (f->w, f->stage, PADDOCK_STAGE_KIND_COPY, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_agent_commits_get_commits (packed)->len, ==, 2);
  g_assert_cmpstr (paddock_agent_commits_get_head (packed), ==, "refs/heads/main");

  g_clear_pointer (&out, g_free);
  out = run_in (f->stage, "git checkout -q --detach HEAD~1");
  detached = paddock_agent_commits_new (f->w, f->stage, PADDOCK_STAGE_KIND_COPY, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_agent_commits_get_commits (detached)->len, ==, 1);
  g_assert_cmpstr (paddock_agent_commits_get_head (detached), ==, "HEAD");
  g_assert_cmpstr (commit_at (detached, 0)->subject, ==, "agent: add secret");

  /* HEAD a symlink to a file outside the stage naming the agent's tip, the
   * packed refs gone: HEAD is then the workspace's, and nothing is new. */
  g_clear_pointer (&out, g_free);
  script = g_strdup_printf ("git rev-parse main > '%s/outside-head' && rm .git/HEAD .git/packed-refs && "
                            "ln -s '%s/outside-head' .git/HEAD", f->root, f->root);
  out = run_in (f->stage, script);
  symlinked = paddock_agent_commits_new (f->w, f->stage, PADDOCK_STAGE_KIND_COPY, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_agent_commits_get_commits (symlinked)->len, ==, 0);
}

/* More commits than a list may hold: QuotaExceeded's error, not a partial
 * list. fast-import makes them in a pack, unpacked into loose objects as
 * `git commit` would have written them. */
static void
test_too_many_commits (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockAgentCommits) commits = NULL;
  g_autofree char *script = g_strdup_printf ("cp -a '%s' '%s'", f->w, f->stage);
  g_autofree char *out = run_in (f->root, script);
  g_autofree char *out2 = NULL;

  out2 = run_in (f->stage,
                 "n=$((" G_STRINGIFY (PADDOCK_AGENT_COMMITS_MAX_COMMITS) " + 1)); "
                 "{ i=0; while [ $i -lt $n ]; do i=$((i + 1)); "
                 "    printf 'commit refs/heads/main\ncommitter A <a@example.com> %d +0000\n"
                 "data 4\nc%03d\n' $((1700000000 + i)) $((i % 1000)); "
                 "    [ $i -eq 1 ] && printf 'from refs/heads/main^0\n'; printf '\n'; done; } "
                 "  | git fast-import --quiet && "
                 "mkdir ../packs && mv .git/objects/pack/pack-* ../packs/ && "
                 "for p in ../packs/*.pack; do git unpack-objects -q < $p; done && "
                 "test $(git rev-list --count main) -gt 1000");
  commits = paddock_agent_commits_new (f->w, f->stage, PADDOCK_STAGE_KIND_COPY, NULL, &error);
  g_assert_null (commits);
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_TOO_LARGE);
}

/* Objects only in a pack the agent made (git gc) are not read: NotFound,
 * with the reason, never a list that misses them. */
static void
test_packed_objects_not_read (Fixture       *f,
                              gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockAgentCommits) commits = NULL;
  g_autofree char *out = NULL;

  make_copy_stage_with_commits (f);
  out = run_in (f->stage, "git -c core.fsmonitor=false gc -q --prune=now && "
                          "test -z \"$(find .git/objects -path '*/?""?/*' -type f)\"");
  commits = paddock_agent_commits_new (f->w, f->stage, PADDOCK_STAGE_KIND_COPY, NULL, &error);
  g_assert_null (commits);
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "packs the agent made are not read"));
}

/* No commits: a stage without .git changes, and a workspace that is not a
 * repository. */
static void
test_nothing_new (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockAgentCommits) commits = NULL;
  g_autoptr(PaddockAgentCommits) plain = NULL;
  g_autofree char *plain_dir = g_build_filename (f->root, "plain", NULL);

  g_assert_cmpint (g_mkdir (f->stage, 0755), ==, 0);
  commits = paddock_agent_commits_new (f->w, f->stage, PADDOCK_STAGE_KIND_OVERLAY, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_agent_commits_get_commits (commits)->len, ==, 0);
  g_assert_false (paddock_agent_commits_apply (commits, "paddock/x", NULL, NULL, NULL, &error));
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_NOT_FOUND);
  g_clear_error (&error);

  g_assert_cmpint (g_mkdir (plain_dir, 0755), ==, 0);
  plain = paddock_agent_commits_new (plain_dir, f->stage, PADDOCK_STAGE_KIND_OVERLAY, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_agent_commits_get_commits (plain)->len, ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *git = g_find_program_in_path ("git");
  g_autofree char *home = NULL;

  if (git == NULL)
    {
      g_print ("1..0 # SKIP git is not installed\n");
      return 0;
    }
  /* git as the test runs it: no user's or system's config, a fixed name. */
  home = g_dir_make_tmp ("paddock-commits-home-XXXXXX", NULL);
  g_setenv ("HOME", home, TRUE);
  g_setenv ("GIT_CONFIG_NOSYSTEM", "1", TRUE);
  g_setenv ("GIT_CONFIG_GLOBAL", "/dev/null", TRUE);
  g_setenv ("GIT_AUTHOR_NAME", "User", TRUE);
  g_setenv ("GIT_AUTHOR_EMAIL", "user@example.com", TRUE);
  g_setenv ("GIT_COMMITTER_NAME", "User", TRUE);
  g_setenv ("GIT_COMMITTER_EMAIL", "user@example.com", TRUE);

  g_test_init (&argc, &argv, NULL);

#define ADD(name, fn) g_test_add (name, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/staging/commits/copy-list-and-apply", test_copy_list_and_apply);
  ADD ("/staging/commits/existing-branch", test_existing_branch);
  ADD ("/staging/commits/overlay-upper", test_overlay_upper);
  ADD ("/staging/commits/alternates-not-followed", test_alternates_not_followed);
  ADD ("/staging/commits/corrupt-object", test_corrupt_object);
  ADD ("/staging/commits/gitdir-file-not-followed", test_gitdir_file_not_followed);
  ADD ("/staging/commits/packed-detached-symlinked-refs", test_packed_detached_symlinked_refs);
  ADD ("/staging/commits/too-many-commits", test_too_many_commits);
  ADD ("/staging/commits/packed-objects-not-read", test_packed_objects_not_read);
  ADD ("/staging/commits/nothing-new", test_nothing_new);
#undef ADD

  {
    int ret = g_test_run ();
    paddock_remove_tree (home);
    return ret;
  }
}
