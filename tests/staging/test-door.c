/* test-door.c — the door to the workspace: repository metadata apart, apply pinned to the review
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Stages here are overlay stages whose upper folder the test writes
 * directly (as the agent's writes land there); no mount is needed for a
 * review or an apply, which read the upper and the workspace.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "paddock-apply.h"
#include "paddock-change.h"
#include "paddock-content-hash.h"
#include "paddock-durable-file.h"
#include "paddock-repo-metadata.h"
#include "paddock-review-token.h"
#include "paddock-stage.h"

#define WALK_IN_AN_HOUR_MS (3600 * 1000)

typedef struct {
  char *root;
  char *w;
  char *stage_dir;
  char *upper;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  f->root = g_dir_make_tmp ("paddock-door-XXXXXX", &error);
  g_assert_no_error (error);
  f->w = g_build_filename (f->root, "w", NULL);
  f->stage_dir = g_build_filename (f->root, "stage", NULL);
  f->upper = g_build_filename (f->stage_dir, "upper", NULL);
  g_assert_cmpint (g_mkdir (f->w, 0755), ==, 0);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  paddock_remove_tree (f->root);
  g_free (f->root);
  g_free (f->w);
  g_free (f->stage_dir);
  g_free (f->upper);
}

static void
put (const char *dir,
     const char *rel,
     const char *contents)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);
  g_autofree char *parent = g_path_get_dirname (path);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

static void
put_dir (const char *dir,
         const char *rel)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);
  g_assert_cmpint (g_mkdir_with_parents (path, 0755), ==, 0);
}

/* Rewrites a file in place, same size: only its content tells. */
static void
overwrite (const char *dir,
           const char *rel,
           const char *contents)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);
  int fd = open (path, O_WRONLY | O_TRUNC | O_CLOEXEC);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, contents, strlen (contents)), ==, (gssize) strlen (contents));
  g_assert_cmpint (close (fd), ==, 0);
}

static gboolean
exists (const char *dir,
        const char *rel)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);
  struct stat st;

  return lstat (path, &st) == 0;
}

static char *
slurp (const char *dir,
       const char *rel)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);
  char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  return text;
}

static PaddockStage *
start_stage (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  PaddockStage *stage;

  g_usleep (30 * 1000);  /* the workspace's files age past the clock tick */
  stage = paddock_stage_new (f->stage_dir, f->w, PADDOCK_STAGE_KIND_OVERLAY);
  g_assert_true (paddock_stage_prepare (stage, NULL, &error));
  g_assert_no_error (error);
  paddock_stage_record_baseline_in_thread (stage, WALK_IN_AN_HOUR_MS);
  return stage;
}

static PaddockChange *
find_in (GPtrArray  *rows,
         const char *path)
{
  for (guint i = 0; i < rows->len; i++)
    if (g_str_equal (paddock_change_get_path (g_ptr_array_index (rows, i)), path))
      return g_ptr_array_index (rows, i);
  return NULL;
}

static void
dump (PaddockReview *r)
{
  GPtrArray *lists[2] = { paddock_review_get_changes (r), paddock_review_get_metadata (r) };

  for (guint l = 0; l < 2; l++)
    for (guint i = 0; i < lists[l]->len; i++)
      {
        PaddockChange *c = g_ptr_array_index (lists[l], i);
        const char *reason = paddock_change_get_metadata_reason (c);

        g_test_message ("%s %s %s%s%s", l == 0 ? "change" : "metadata",
                        paddock_change_kind_to_string (paddock_change_get_kind (c)),
                        paddock_change_get_path (c), reason ? ": " : "", reason ? reason : "");
      }
}

/* No batch left anything of itself in the workspace. */
static void
assert_no_leftovers (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *sub = g_build_filename (dir, name, NULL);

      g_assert_false (g_str_has_prefix (name, ".paddock-apply-"));
      if (g_file_test (sub, G_FILE_TEST_IS_DIR) && !g_file_test (sub, G_FILE_TEST_IS_SYMLINK))
        assert_no_leftovers (sub);
    }
}

/* ---- content hash ------------------------------------------------------ */

static char *
hash_file (const char *path)
{
  g_autoptr(GError) error = NULL;
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  char *sum;

  g_assert_cmpint (fd, >=, 0);
  sum = paddock_content_hash_fd (fd, NULL, &error);
  g_assert_no_error (error);
  close (fd);
  g_assert_cmpuint (strlen (sum), ==, PADDOCK_CONTENT_HASH_HEX_LEN);
  return sum;
}

/* The same bytes give the same digest whether zeros are holes or written,
 * and a byte's difference anywhere gives another digest. */
static void
test_hash_layouts (Fixture       *f,
                   gconstpointer  data)
{
  const gsize size = 3 * 1024 * 1024 + 123;  /* not a whole number of blocks */
  g_autofree guint8 *bytes = g_malloc0 (size);
  g_autofree char *dense = g_build_filename (f->root, "dense", NULL);
  g_autofree char *sparse = g_build_filename (f->root, "sparse", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *h_dense = NULL, *h_sparse = NULL, *h_mem = NULL, *h_other = NULL;
  int fd;

  memcpy (bytes + 5000, "data in the middle", 18);
  memcpy (bytes + size - 7, "the end", 7);
  g_file_set_contents (dense, (const char *) bytes, (gssize) size, &error);
  g_assert_no_error (error);

  /* The same bytes, with holes where the zeros are. */
  fd = open (sparse, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (ftruncate (fd, (off_t) size), ==, 0);
  g_assert_cmpint (pwrite (fd, "data in the middle", 18, 5000), ==, 18);
  g_assert_cmpint (pwrite (fd, "the end", 7, (off_t) size - 7), ==, 7);
  close (fd);

  h_dense = hash_file (dense);
  h_sparse = hash_file (sparse);
  h_mem = paddock_content_hash_bytes (bytes, size);
  g_assert_cmpstr (h_dense, ==, h_sparse);
  g_assert_cmpstr (h_dense, ==, h_mem);

  bytes[size / 2] = 1;
  h_other = paddock_content_hash_bytes (bytes, size);
  g_assert_cmpstr (h_other, !=, h_dense);
  /* A zero more at the end is another file too. */
  {
    g_autofree char *a = paddock_content_hash_bytes ("", 0);
    g_autofree char *b = paddock_content_hash_bytes ("\0", 1);
    g_assert_cmpstr (a, !=, b);
  }
}

/* A file of 64 GiB with 8 KiB of data hashes in the time of its data: a
 * hash that read its zeros would take minutes. */
static void
test_hash_sparse_fast (Fixture       *f,
                       gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->root, "huge-sparse", NULL);
  const off_t size = (off_t) 64 << 30;
  g_autofree char *sum = NULL;
  gint64 started;
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

  g_assert_cmpint (fd, >=, 0);
  if (ftruncate (fd, size) != 0)
    {
      g_test_skip ("this file system cannot hold a 64 GiB sparse file");
      close (fd);
      return;
    }
  g_assert_cmpint (pwrite (fd, "head", 4, 0), ==, 4);
  g_assert_cmpint (pwrite (fd, "tail", 4, size - 4), ==, 4);
  close (fd);

  started = g_get_monotonic_time ();
  sum = hash_file (path);
  g_test_message ("64 GiB sparse file hashed in %" G_GINT64_FORMAT " ms",
                  (g_get_monotonic_time () - started) / 1000);
  g_assert_cmpint (g_get_monotonic_time () - started, <, 2 * G_USEC_PER_SEC);
}

/* ---- repository metadata ---------------------------------------------- */

static void
test_metadata_names (Fixture       *f,
                     gconstpointer  data)
{
  static const char *const metadata[] = {
    ".git", ".git/config", "sub/.git/hooks/pre-commit", "a/b/.git", ".gitmodules",
    "lib/.gitmodules", ".hg/hgrc", ".svn/wc.db", ".bzr/branch/branch.conf",
    "_darcs/prefs/defaults", ".jj/repo/config.toml", ".GIT/config", ".Git",
    ".git./config", ".git /config", "GIT~1/config", ".hgsub", ".lfsconfig", ".pijul/config",
    ".fslckout",
  };
  static const char *const ordinary[] = {
    "src/main.c", ".github/workflows/ci.yml", ".gitignore", ".gitattributes", "foo.git/x",
    "git/config", "x.hg", ".gitmodules.bak", "svn/readme", "notes/.git-notes",
  };

  for (guint i = 0; i < G_N_ELEMENTS (metadata); i++)
    if (paddock_repo_metadata_name_reason (metadata[i]) == NULL)
      g_error ("“%s” is repository metadata", metadata[i]);
  for (guint i = 0; i < G_N_ELEMENTS (ordinary); i++)
    if (paddock_repo_metadata_name_reason (ordinary[i]) != NULL)
      g_error ("“%s” is an ordinary file", ordinary[i]);
}

/* Every way in for a VCS's own files, each one known by what it is: none
 * existed at the start (except the worktree's .git file, rewritten). */
static void
test_metadata_classes (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockStage) stage = NULL;
  g_autoptr(PaddockReview) r = NULL;
  static const char *const metadata[] = {
    ".git/commondir",                 /* points git at the agent's own config */
    "evil/config",                    /* ...which lives here: not by name, see below */
    "nested/.git/config",             /* a nested repository */
    "nested/.git/hooks/post-checkout",
    "wt/.git",                        /* a linked worktree's .git file, rewritten */
    ".gitmodules",
    "vendor/bare/HEAD",               /* a bare repository by its shape */
    "vendor/bare/config",
    ".hg/hgrc",
    ".svn/entries",
    ".bzr/branch/branch.conf",
    "_darcs/prefs/defaults",
    ".jj/repo/config.toml",
    ".git/hooks/pre-commit",          /* renamed in from an ordinary file */
  };
  GPtrArray *changes, *meta;

  put (f->w, "README", "hello\n");
  put (f->w, "wt/.git", "gitdir: /home/user/repo/.git/worktrees/wt\n");
  put (f->w, "script.sh", "#!/bin/sh\necho a fairly long script, long enough to be a rename\n");
  put_dir (f->w, ".git");
  put (f->w, ".git/HEAD", "ref: refs/heads/main\n");
  stage = start_stage (f);

  put (f->upper, "src/main.c", "int main (void) { return 0; }\n");
  put (f->upper, ".github/workflows/ci.yml", "on: push\n");
  put (f->upper, ".git/commondir", "../evil\n");
  put (f->upper, "evil/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
  put (f->upper, "nested/.git/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
  put (f->upper, "nested/.git/hooks/post-checkout", "#!/bin/sh\ntouch /tmp/pwned\n");
  put (f->upper, "wt/.git", "gitdir: ../evil\n");
  put (f->upper, ".gitmodules", "[submodule \"x\"]\n\tpath = x\n\turl = ext::sh -c touch% /tmp/pwned\n");
  put (f->upper, "vendor/bare/HEAD", "ref: refs/heads/main\n");
  put (f->upper, "vendor/bare/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
  put_dir (f->upper, "vendor/bare/objects");
  put_dir (f->upper, "vendor/bare/refs");
  put (f->upper, ".hg/hgrc", "[hooks]\npre-status = touch /tmp/pwned\n");
  put (f->upper, ".svn/entries", "12\n");
  put (f->upper, ".bzr/branch/branch.conf", "x\n");
  put (f->upper, "_darcs/prefs/defaults", "x\n");
  put (f->upper, ".jj/repo/config.toml", "x\n");
  /* script.sh moves into .git/hooks: a rename across the boundary. */
  {
    g_autofree char *from = g_build_filename (f->w, "script.sh", NULL);
    g_autofree char *text = NULL;
    g_autofree char *whiteout = g_build_filename (f->upper, "script.sh", NULL);

    g_assert_true (g_file_get_contents (from, &text, NULL, NULL));
    put (f->upper, ".git/hooks/pre-commit", text);
    g_assert_cmpint (mknod (whiteout, S_IFCHR | 0000, makedev (0, 0)), ==, 0);
  }

  r = paddock_stage_review (stage, NULL, &error);
  g_assert_no_error (error);
  dump (r);
  changes = paddock_review_get_changes (r);
  meta = paddock_review_get_metadata (r);

  g_assert_nonnull (find_in (changes, "src/main.c"));
  g_assert_nonnull (find_in (changes, ".github/workflows/ci.yml"));
  /* evil/config is an ordinary file by itself: what makes it dangerous
   * is .git/commondir, which is metadata. */
  g_assert_nonnull (find_in (changes, "evil/config"));
  for (guint i = 0; i < G_N_ELEMENTS (metadata); i++)
    {
      PaddockChange *row = find_in (meta, metadata[i]);

      if (g_str_equal (metadata[i], "evil/config"))
        continue;
      if (row == NULL)
        g_error ("“%s” is not listed as metadata", metadata[i]);
      g_assert_nonnull (paddock_change_get_metadata_reason (row));
      g_assert_null (find_in (changes, metadata[i]));
    }
  /* The rename is one metadata row, its old side included. */
  {
    PaddockChange *renamed = find_in (meta, ".git/hooks/pre-commit");

    g_assert_cmpint (paddock_change_get_kind (renamed), ==, PADDOCK_CHANGE_KIND_RENAMED);
    g_assert_cmpstr (paddock_change_get_old_path (renamed), ==, "script.sh");
    g_assert_null (find_in (changes, "script.sh"));
  }
  for (guint i = 0; i < changes->len; i++)
    {
      const char *path = paddock_change_get_path (g_ptr_array_index (changes, i));
      g_assert_false (g_str_has_prefix (path, "vendor/bare"));
      g_assert_null (strstr (path, ".git/"));
    }
}

/* Shapes: a bare repository that was in the workspace all along (named
 * like any folder), a linked worktree's git dir (HEAD and commondir) the
 * agent makes, and a .git turned into a symlink to the agent's folder. */
static void
test_metadata_shapes (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockStage) stage = NULL;
  g_autoptr(PaddockReview) r = NULL;
  GPtrArray *meta;

  put (f->w, "tools/mirror/HEAD", "ref: refs/heads/main\n");
  put_dir (f->w, "tools/mirror/objects");
  put_dir (f->w, "tools/mirror/refs");
  put (f->w, "lib/HEAD", "not git: a file named HEAD in a source folder\n");
  put_dir (f->w, ".git");
  stage = start_stage (f);

  put (f->upper, "tools/mirror/hooks/post-update", "#!/bin/sh\ntouch pwned\n");
  put (f->upper, "wtgit/HEAD", "ref: refs/heads/x\n");
  put (f->upper, "wtgit/commondir", "../evil\n");
  put (f->upper, "lib/HEAD", "still not git\n");
  put (f->upper, "lib/code.c", "int y;\n");
  {
    g_autofree char *dot_git = g_build_filename (f->upper, ".git", NULL);
    g_assert_cmpint (symlink ("evil", dot_git), ==, 0);
  }

  r = paddock_stage_review (stage, NULL, &error);
  g_assert_no_error (error);
  dump (r);
  meta = paddock_review_get_metadata (r);
  g_assert_nonnull (find_in (meta, "tools/mirror/hooks/post-update"));
  g_assert_nonnull (find_in (meta, "wtgit/HEAD"));
  g_assert_nonnull (find_in (meta, "wtgit/commondir"));
  g_assert_nonnull (find_in (meta, ".git"));
  /* A HEAD alone does not make a git directory. */
  g_assert_nonnull (find_in (paddock_review_get_changes (r), "lib/HEAD"));
  g_assert_nonnull (find_in (paddock_review_get_changes (r), "lib/code.c"));
}

/* "Apply everything" applies the file changes and not one metadata row;
 * naming metadata as a file change is refused; only metadata_paths apply
 * it, and then exactly the named row. */
static void
test_metadata_never_applied (Fixture       *f,
                             gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockStage) stage = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(PaddockReviewToken) token = NULL;
  const char *const hook_only[] = { ".git/hooks/pre-commit", NULL };
  const char *const none[] = { NULL };

  put (f->w, "README", "hello\n");
  put (f->w, ".git/HEAD", "ref: refs/heads/main\n");
  put (f->w, ".git/config", "[core]\n");
  put (f->w, "script.sh", "#!/bin/sh\necho a fairly long script, long enough to be a rename\n");
  stage = start_stage (f);

  put (f->upper, "README", "hello, world\n");
  put (f->upper, ".git/config", "[core]\n\tfsmonitor = touch pwned\n");
  put (f->upper, ".git/hooks/pre-commit", "#!/bin/sh\ntouch pwned\n");
  put (f->upper, "sub/.git/config", "[core]\n\tfsmonitor = touch pwned\n");
  put (f->upper, "sub/file.c", "int x;\n");
  put (f->upper, "bare/HEAD", "ref: refs/heads/main\n");
  put_dir (f->upper, "bare/objects");
  put_dir (f->upper, "bare/refs");
  put (f->upper, ".gitmodules", "[submodule \"x\"]\n");
  {
    g_autofree char *whiteout = g_build_filename (f->upper, "script.sh", NULL);
    put (f->upper, ".git/hooks/post-checkout",
         "#!/bin/sh\necho a fairly long script, long enough to be a rename\n");
    g_assert_cmpint (mknod (whiteout, S_IFCHR | 0000, makedev (0, 0)), ==, 0);
  }

  /* A metadata path named as a file change: refused, nothing applied. */
  g_assert_false (paddock_stage_apply (stage, hook_only, none, "test", &result, NULL, &error));
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_METADATA);
  g_clear_error (&error);
  g_assert_false (exists (f->w, ".git/hooks"));

  /* Everything: the file changes only. */
  g_assert_true (paddock_stage_apply (stage, none, none, "test", &result, NULL, &error));
  g_assert_no_error (error);
  {
    g_autofree char *readme = slurp (f->w, "README");
    g_autofree char *config = slurp (f->w, ".git/config");

    g_assert_cmpstr (readme, ==, "hello, world\n");
    g_assert_cmpstr (config, ==, "[core]\n");
  }
  g_assert_true (exists (f->w, "sub/file.c"));
  g_assert_false (exists (f->w, ".git/hooks"));
  g_assert_false (exists (f->w, "sub/.git"));
  g_assert_false (exists (f->w, "bare"));
  g_assert_false (exists (f->w, ".gitmodules"));
  /* The rename into .git/hooks did not happen by halves either. */
  g_assert_true (exists (f->w, "script.sh"));
  g_clear_pointer (&result, paddock_apply_result_free);

  /* Named as metadata with a review's token: that row and no other. */
  token = paddock_stage_review_pinned (stage, NULL, &error);
  g_assert_no_error (error);
  {
    const char *const meta[] = { ".git/hooks/pre-commit", NULL };

    g_assert_true (paddock_stage_apply_reviewed (stage, paddock_review_token_get_id (token), none, none,
                                                 meta, "test", &result, NULL, &error));
    g_assert_no_error (error);
  }
  g_assert_true (exists (f->w, ".git/hooks/pre-commit"));
  {
    g_autofree char *config = slurp (f->w, ".git/config");
    g_assert_cmpstr (config, ==, "[core]\n");
  }
  g_assert_false (exists (f->w, "sub/.git"));
  g_assert_false (exists (f->w, ".git/hooks/post-checkout"));
  g_assert_true (exists (f->w, "script.sh"));
}

/* ---- review pins -------------------------------------------------------- */

static gboolean
is_stale (const GError *error)
{
  return g_error_matches (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_REVIEW_STALE) ||
         g_error_matches (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_STALE);
}

/* Unchanged since the review: applied, byte for byte. */
static void
test_pin_unchanged (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockStage) stage = NULL;
  g_autoptr(PaddockReviewToken) token = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  const char *const none[] = { NULL };
  g_autofree char *text = NULL;

  put (f->w, "old.txt", "old\n");
  stage = start_stage (f);
  put (f->upper, "run.sh", "echo harmless\n");
  put (f->upper, "old.txt", "new\n");
  {
    g_autofree char *link = g_build_filename (f->upper, "link", NULL);
    g_assert_cmpint (symlink ("run.sh", link), ==, 0);
  }

  token = paddock_stage_review_pinned (stage, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_review_token_get_n_pins (token), ==, 3);
  g_assert_true (paddock_stage_apply_reviewed (stage, paddock_review_token_get_id (token), none, none,
                                               NULL, "test", &result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (result->applied->len, ==, 3);
  text = slurp (f->w, "run.sh");
  g_assert_cmpstr (text, ==, "echo harmless\n");
}

/* The agent rewrites a reviewed file after the review, same size, same
 * type and mode: only the bytes differ, and the batch sees it in what it
 * wrote to its temp. Nothing lands, not even the untouched other file. */
static void
test_pin_rewritten (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockStage) stage = NULL;
  g_autoptr(PaddockReviewToken) token = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  const char *const none[] = { NULL };
  g_autofree char *text = NULL;

  put (f->w, "other.txt", "before\n");
  stage = start_stage (f);
  put (f->upper, "run.sh", "echo harmless\n");
  put (f->upper, "other.txt", "after\n");

  token = paddock_stage_review_pinned (stage, NULL, &error);
  g_assert_no_error (error);
  overwrite (f->upper, "run.sh", "rm -rf ~/ #!!\n");

  /* The diff of that review is still of what it read. */
  {
    g_autoptr(GBytes) diff = paddock_stage_get_reviewed_diff (stage, paddock_review_token_get_id (token),
                                                              "run.sh", &error);
    g_autofree char *shown = NULL;

    g_assert_no_error (error);
    shown = g_strndup (g_bytes_get_data (diff, NULL), g_bytes_get_size (diff));
    g_assert_nonnull (strstr (shown, "+echo harmless\n"));
    g_assert_null (strstr (shown, "rm -rf"));
  }

  g_assert_false (paddock_stage_apply_reviewed (stage, paddock_review_token_get_id (token), none, none,
                                                NULL, "test", &result, NULL, &error));
  g_assert_true (is_stale (error));
  g_assert_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_STALE);
  g_assert_nonnull (strstr (error->message, "run.sh"));
  g_assert_null (strstr (error->message, "other.txt"));
  g_clear_error (&error);
  g_assert_false (exists (f->w, "run.sh"));
  text = slurp (f->w, "other.txt");
  g_assert_cmpstr (text, ==, "before\n");
  assert_no_leftovers (f->w);

  /* A new review shows the new content, and its token applies it. */
  g_clear_pointer (&token, paddock_review_token_unref);
  token = paddock_stage_review_pinned (stage, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (paddock_stage_apply_reviewed (stage, paddock_review_token_get_id (token), none, none,
                                               NULL, "test", &result, NULL, &error));
  g_assert_no_error (error);
  g_clear_pointer (&text, g_free);
  text = slurp (f->w, "run.sh");
  g_assert_cmpstr (text, ==, "rm -rf ~/ #!!\n");
}

/* Other ways to be not what was reviewed: a mode change, a file turned
 * into a symlink, a deleted file brought back, a reviewed file deleted. */
static void
test_pin_other_changes (Fixture       *f,
                        gconstpointer  data)
{
  const char *const none[] = { NULL };

  for (guint round = 0; round < 4; round++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(PaddockStage) stage = NULL;
      g_autoptr(PaddockReviewToken) token = NULL;
      g_autoptr(PaddockApplyResult) result = NULL;
      g_autofree char *path = NULL;

      paddock_remove_tree (f->w);
      paddock_remove_tree (f->stage_dir);
      g_assert_cmpint (g_mkdir (f->w, 0755), ==, 0);
      put (f->w, "gone.txt", "the user's\n");
      stage = start_stage (f);
      put (f->upper, "a.sh", "echo a\n");
      path = g_build_filename (f->upper, "gone.txt", NULL);
      g_assert_cmpint (mknod (path, S_IFCHR | 0000, makedev (0, 0)), ==, 0);

      token = paddock_stage_review_pinned (stage, NULL, &error);
      g_assert_no_error (error);
      g_clear_pointer (&path, g_free);
      switch (round)
        {
        case 0:
          path = g_build_filename (f->upper, "a.sh", NULL);
          g_assert_cmpint (chmod (path, 0755), ==, 0);
          break;
        case 1:
          path = g_build_filename (f->upper, "a.sh", NULL);
          g_assert_cmpint (unlink (path), ==, 0);
          g_assert_cmpint (symlink ("/etc/passwd", path), ==, 0);
          break;
        case 2:
          path = g_build_filename (f->upper, "gone.txt", NULL);
          g_assert_cmpint (unlink (path), ==, 0);
          put (f->upper, "gone.txt", "the agent's\n");
          break;
        default:
          path = g_build_filename (f->upper, "a.sh", NULL);
          g_assert_cmpint (unlink (path), ==, 0);
          break;
        }
      g_assert_false (paddock_stage_apply_reviewed (stage, paddock_review_token_get_id (token), none,
                                                    none, NULL, "test", &result, NULL, &error));
      if (!is_stale (error))
        g_error ("round %u: %s", round, error ? error->message : "applied");
      g_assert_false (exists (f->w, "a.sh"));
      g_assert_true (exists (f->w, "gone.txt"));
      assert_no_leftovers (f->w);
    }
}

/* The review's bytes are the pin, compared byte for byte with what the
 * apply wrote: a file grown by one byte, cut to a prefix, a symlink
 * retargeted to a name of the same length are each refused, named; the
 * very bytes written again (a new inode, new times) apply. */
static void
test_pin_exact_bytes (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockStage) stage = NULL;
  g_autoptr(PaddockReviewToken) token = NULL;
  g_autofree char *link = g_build_filename (f->upper, "link", NULL);
  const char *const none[] = { NULL };
  const char *const variants[][2] = {
    { "echo harmless\n#\n", "run.sh" },
    { "echo harmless", "run.sh" },
    { "echo harmless\n", "link" },
  };
  g_autofree char *text = NULL;
  g_autofree char *target = NULL;

  stage = start_stage (f);
  put (f->upper, "run.sh", "echo harmless\n");
  g_assert_cmpint (symlink ("run.sh", link), ==, 0);
  token = paddock_stage_review_pinned (stage, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_review_token_get_n_pins (token), ==, 2);

  for (guint i = 0; i < G_N_ELEMENTS (variants); i++)
    {
      g_autoptr(PaddockApplyResult) result = NULL;

      put (f->upper, "run.sh", variants[i][0]);
      if (g_str_equal (variants[i][1], "link"))
        {
          g_assert_cmpint (unlink (link), ==, 0);
          g_assert_cmpint (symlink ("run.sx", link), ==, 0);
        }
      g_assert_false (paddock_stage_apply_reviewed (stage, paddock_review_token_get_id (token), none, none,
                                                    NULL, "test", &result, NULL, &error));
      g_assert_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_STALE);
      if (strstr (error->message, variants[i][1]) == NULL)
        g_error ("variant %u: %s", i, error->message);
      g_clear_error (&error);
      g_assert_false (exists (f->w, "run.sh"));
      g_assert_false (exists (f->w, "link"));
      assert_no_leftovers (f->w);
      g_assert_cmpint (unlink (link), ==, 0);
      g_assert_cmpint (symlink ("run.sh", link), ==, 0);
    }

  {
    g_autoptr(PaddockApplyResult) result = NULL;

    put (f->upper, "run.sh", "echo harmless\n");
    g_assert_true (paddock_stage_apply_reviewed (stage, paddock_review_token_get_id (token), none, none,
                                                 NULL, "test", &result, NULL, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (result->applied->len, ==, 2);
  }
  text = slurp (f->w, "run.sh");
  g_assert_cmpstr (text, ==, "echo harmless\n");
  {
    g_autofree char *wlink = g_build_filename (f->w, "link", NULL);
    target = g_file_read_link (wlink, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (target, ==, "run.sh");
  }
}

/* Two names the review showed with different content, hard-linked by
 * the agent after it (the second now the first's inode): the apply would
 * land the first's bytes under the second name through one link, which
 * is not what was reviewed there. Refused, naming the second. */
static void
test_pin_linked_after_review (Fixture       *f,
                              gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockStage) stage = NULL;
  g_autoptr(PaddockReviewToken) token = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autofree char *first = g_build_filename (f->upper, "a.sh", NULL);
  g_autofree char *second = g_build_filename (f->upper, "b.sh", NULL);
  const char *const none[] = { NULL };

  stage = start_stage (f);
  put (f->upper, "a.sh", "echo reviewed as a\n");
  put (f->upper, "b.sh", "echo reviewed as b\n");
  token = paddock_stage_review_pinned (stage, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_review_token_get_n_pins (token), ==, 2);

  g_assert_cmpint (unlink (second), ==, 0);
  g_assert_cmpint (link (first, second), ==, 0);
  g_assert_false (paddock_stage_apply_reviewed (stage, paddock_review_token_get_id (token), none, none,
                                                NULL, "test", &result, NULL, &error));
  g_assert_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_STALE);
  if (strstr (error->message, "b.sh") == NULL)
    g_error ("the second name is not named: %s", error->message);
  g_assert_false (exists (f->w, "a.sh"));
  g_assert_false (exists (f->w, "b.sh"));
  assert_no_leftovers (f->w);
}

/* A file too large for the review to keep (over
 * PADDOCK_REVIEW_MAX_BLOB_SIZE) is pinned by the SHA-256 of the stage's
 * content instead: one byte rewritten in its middle is refused. */
static void
test_pin_large_file (Fixture       *f,
                     gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockStage) stage = NULL;
  g_autoptr(PaddockReviewToken) token = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autofree char *path = g_build_filename (f->upper, "big.bin", NULL);
  const char *const none[] = { NULL };
  int fd;

  stage = start_stage (f);
  put (f->upper, "big.bin", "head");
  /* Sparse: 9 MiB apparent, a few bytes of data (cheap to read). */
  fd = open (path, O_WRONLY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (ftruncate (fd, PADDOCK_REVIEW_MAX_BLOB_SIZE + 1024 * 1024), ==, 0);
  g_assert_cmpint (close (fd), ==, 0);

  token = paddock_stage_review_pinned (stage, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_review_token_get_n_pins (token), ==, 1);
  g_assert_false (paddock_review_token_lookup_pin (token, "big.bin")->in_review);
  g_assert_nonnull (paddock_review_token_lookup_pin (token, "big.bin")->sha);

  fd = open (path, O_WRONLY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (pwrite (fd, "x", 1, 4 * 1024 * 1024), ==, 1);
  g_assert_cmpint (close (fd), ==, 0);
  g_assert_false (paddock_stage_apply_reviewed (stage, paddock_review_token_get_id (token), none, none,
                                                NULL, "test", &result, NULL, &error));
  g_assert_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_STALE);
  g_assert_nonnull (strstr (error->message, "big.bin"));
  g_assert_false (exists (f->w, "big.bin"));
  assert_no_leftovers (f->w);
}

/* A token the stage does not know, and one pushed out by newer reviews. */
static void
test_token_bounds (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockStage) stage = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(PaddockReviewToken) first = NULL;
  const char *const none[] = { NULL };

  stage = start_stage (f);
  put (f->upper, "a.txt", "a\n");

  g_assert_false (paddock_stage_apply_reviewed (stage, "0123456789abcdef0123456789abcdef", none, none,
                                                NULL, "test", &result, NULL, &error));
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_REVIEW_EXPIRED);
  g_clear_error (&error);

  first = paddock_stage_review_pinned (stage, NULL, &error);
  g_assert_no_error (error);
  /* The same review again is the same token: a refresh pushes nothing out. */
  {
    g_autoptr(PaddockReviewToken) again = paddock_stage_review_pinned (stage, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (paddock_review_token_get_id (again), ==, paddock_review_token_get_id (first));
  }
  for (guint i = 0; i < PADDOCK_REVIEW_TOKENS_MAX; i++)
    {
      g_autoptr(PaddockReviewToken) later = NULL;
      g_autofree char *text = g_strdup_printf ("version %u\n", i);

      put (f->upper, "a.txt", text);
      later = paddock_stage_review_pinned (stage, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (paddock_review_token_get_id (later), !=, paddock_review_token_get_id (first));
    }
  g_assert_false (paddock_stage_apply_reviewed (stage, paddock_review_token_get_id (first), none, none,
                                                NULL, "test", &result, NULL, &error));
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_REVIEW_EXPIRED);
  g_assert_false (exists (f->w, "a.txt"));
}

/* A row the stage gained after the review is not applied with its token. */
static void
test_token_only_reviewed_rows (Fixture       *f,
                               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockStage) stage = NULL;
  g_autoptr(PaddockReviewToken) token = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  const char *const none[] = { NULL };

  stage = start_stage (f);
  put (f->upper, "reviewed.txt", "seen\n");
  token = paddock_stage_review_pinned (stage, NULL, &error);
  g_assert_no_error (error);
  put (f->upper, "later.txt", "never seen\n");

  g_assert_true (paddock_stage_apply_reviewed (stage, paddock_review_token_get_id (token), none, none,
                                               NULL, "test", &result, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (exists (f->w, "reviewed.txt"));
  g_assert_false (exists (f->w, "later.txt"));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(name, fn) g_test_add (name, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/staging/content-hash/layouts", test_hash_layouts);
  ADD ("/staging/content-hash/sparse-fast", test_hash_sparse_fast);
  ADD ("/staging/metadata/names", test_metadata_names);
  ADD ("/staging/metadata/classes", test_metadata_classes);
  ADD ("/staging/metadata/shapes", test_metadata_shapes);
  ADD ("/staging/metadata/never-applied", test_metadata_never_applied);
  ADD ("/staging/pin/unchanged", test_pin_unchanged);
  ADD ("/staging/pin/rewritten", test_pin_rewritten);
  ADD ("/staging/pin/other-changes", test_pin_other_changes);
  ADD ("/staging/pin/exact-bytes", test_pin_exact_bytes);
  ADD ("/staging/pin/linked-after-review", test_pin_linked_after_review);
  ADD ("/staging/pin/large-file", test_pin_large_file);
  ADD ("/staging/pin/token-bounds", test_token_bounds);
  ADD ("/staging/pin/only-reviewed-rows", test_token_only_reviewed_rows);
#undef ADD

  return g_test_run ();
}
