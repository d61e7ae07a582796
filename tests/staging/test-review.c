/* test-review.c — the review list: baselines, overlay uppers, copies, diffs
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "paddock-baseline.h"
#include "paddock-change.h"
#include "paddock-checkpoint.h"
#include "paddock-durable-file.h"
#include "paddock-review.h"
#include "paddock-stage.h"

/* Paths built inline in assertions; freed when the test's fixture goes. */
static GPtrArray *scratch_paths;

typedef struct {
  char *root;
  char *w;       /* the workspace */
  char *upper;   /* the overlay upper, or the copy */
  char *state;   /* where baselines go */
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  f->root = g_dir_make_tmp ("paddock-review-XXXXXX", &error);
  g_assert_no_error (error);
  scratch_paths = g_ptr_array_new_with_free_func (g_free);
  f->w = g_build_filename (f->root, "w", NULL);
  f->upper = g_build_filename (f->root, "upper", NULL);
  f->state = g_build_filename (f->root, "state", NULL);
  g_assert_cmpint (g_mkdir (f->w, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (f->upper, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (f->state, 0700), ==, 0);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  paddock_remove_tree (f->root);
  g_clear_pointer (&scratch_paths, g_ptr_array_unref);
  g_free (f->root);
  g_free (f->w);
  g_free (f->upper);
  g_free (f->state);
}

static const char *
P (const char *dir,
   const char *rel)
{
  char *path = g_build_filename (dir, rel, NULL);

  g_ptr_array_add (scratch_paths, path);
  return path;
}

static void
put (const char *dir,
     const char *rel,
     const char *contents,
     gssize      len)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);
  g_autofree char *parent = g_path_get_dirname (path);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
  g_file_set_contents (path, contents, len, &error);
  g_assert_no_error (error);
}

/* Rewrites an existing file in place: its folder keeps its entries (and
 * its mtime), as an editor saving over the file does. */
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

static void
put_link (const char *dir,
          const char *rel,
          const char *target)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);
  g_assert_cmpint (symlink (target, path), ==, 0);
}

static void
put_whiteout (const char *dir,
              const char *rel)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);
  /* What overlayfs writes for a deletion; mknod of 0:0 needs no privilege. */
  g_assert_cmpint (mknod (path, S_IFCHR | 0000, makedev (0, 0)), ==, 0);
}

static void
make_opaque (const char *dir,
             const char *rel)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);
  g_assert_cmpint (g_mkdir_with_parents (path, 0755), ==, 0);
  g_assert_cmpint (setxattr (path, "user.overlay.opaque", "y", 1, 0), ==, 0);
}

/* n numbered lines, with the lines in @changed replaced. */
static char *
numbered_lines (guint       n,
                const char *tag,
                guint       first_changed,
                guint       n_changed)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < n; i++)
    {
      if (i >= first_changed && i < first_changed + n_changed)
        g_string_append_printf (s, "changed line %u %s\n", i, tag);
      else
        g_string_append_printf (s, "this is line number %u of the original text\n", i);
    }
  return g_string_free (s, FALSE);
}

static PaddockReview *
review (Fixture          *f,
        PaddockStageKind  kind,
        PaddockBaseline  *baseline)
{
  g_autoptr(GError) error = NULL;
  PaddockReview *r = paddock_review_new (f->w, f->upper, kind, baseline, NULL, NULL, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (r);
  return r;
}

static PaddockChange *
find (PaddockReview *r,
      const char    *path)
{
  GPtrArray *changes = paddock_review_get_changes (r);

  for (guint i = 0; i < changes->len; i++)
    {
      PaddockChange *c = g_ptr_array_index (changes, i);
      if (strcmp (paddock_change_get_path (c), path) == 0)
        return c;
    }
  return NULL;
}

static void
dump (PaddockReview *r)
{
  GPtrArray *changes = paddock_review_get_changes (r);

  for (guint i = 0; i < changes->len; i++)
    {
      PaddockChange *c = g_ptr_array_index (changes, i);
      g_autofree char *p = g_strescape (paddock_change_get_path (c), NULL);
      g_autofree char *o = g_strescape (paddock_change_get_old_path (c) ? paddock_change_get_old_path (c) : "", NULL);

      g_test_message ("%s %s [%s] %s +%u -%u%s%s", paddock_change_kind_to_string (paddock_change_get_kind (c)),
                      p, o, paddock_entry_type_to_string (paddock_change_get_entry_type (c)),
                      paddock_change_get_added_lines (c), paddock_change_get_removed_lines (c),
                      paddock_change_get_binary (c) ? " binary" : "",
                      paddock_change_get_conflict (c) ? " conflict" : "");
    }
}

static PaddockChange *
expect (PaddockReview     *r,
        const char        *path,
        PaddockChangeKind  kind,
        PaddockEntryType   type)
{
  PaddockChange *c = find (r, path);

  if (c == NULL)
    {
      dump (r);
      g_error ("no row for %s", path);
    }
  g_assert_cmpstr (paddock_change_kind_to_string (paddock_change_get_kind (c)), ==,
                   paddock_change_kind_to_string (kind));
  g_assert_cmpstr (paddock_entry_type_to_string (paddock_change_get_entry_type (c)), ==,
                   paddock_entry_type_to_string (type));
  return c;
}

static char *
diff_text (PaddockReview *r,
           const char    *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = paddock_review_get_diff (r, path, &error);
  gsize len = 0;
  const char *data;

  g_assert_no_error (error);
  data = g_bytes_get_data (bytes, &len);
  return g_strndup (data, len);
}

/* --- synthesized uppers --------------------------------------------- */

static void
test_synth_edits (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(PaddockReview) r = NULL;
  g_autofree char *orig = numbered_lines (20, "", 0, 0);
  g_autofree char *similar = numbered_lines (20, "new", 3, 6);   /* ~70% alike */
  g_autofree char *exact = numbered_lines (30, "exact", 29, 1);
  g_autofree char *script = g_build_filename (f->upper, "script.sh", NULL);
  static const char bin[] = { 'P', 'N', 'G', 0, 1, 2, 3, 0, 5 };
  static const char bin2[] = { 'P', 'N', 'G', 0, 1, 9, 3, 0, 5 };
  PaddockChange *c;

  put (f->w, "edit.txt", "one\ntwo\nthree\n", -1);
  put (f->w, "gone.txt", "bye\n", -1);
  put (f->w, "old-name.txt", orig, -1);
  put (f->w, "exact-old.txt", exact, -1);
  put (f->w, "was-file", "a file\n", -1);
  put (f->w, "script.sh", "#!/bin/sh\necho hi\n", -1);
  put (f->w, "same.txt", "unchanged\n", -1);
  put (f->w, "image.bin", bin, sizeof bin);

  put (f->upper, "edit.txt", "one\n2\nthree\nfour\n", -1);
  put (f->upper, "new.txt", "hello\n", -1);
  put (f->upper, "empty", "", 0);
  put_whiteout (f->upper, "gone.txt");
  put_whiteout (f->upper, "old-name.txt");
  put (f->upper, "new-name.txt", similar, -1);
  put_whiteout (f->upper, "exact-old.txt");
  put (f->upper, "exact-new.txt", exact, -1);
  put_link (f->upper, "was-file", "edit.txt");
  put (f->upper, "script.sh", "#!/bin/sh\necho hi\n", -1);
  g_assert_cmpint (chmod (script, 0755), ==, 0);
  put (f->upper, "same.txt", "unchanged\n", -1);   /* a copy-up that changed nothing */
  put_link (f->upper, "escape", "/etc/passwd");
  put (f->upper, "image.bin", bin2, sizeof bin2);
  put (f->upper, "\xff\xfe-latin1-\xe9.txt", "bytes\n", -1);
  put (f->upper, "-dash\nnewline name", "odd\n", -1);

  r = review (f, PADDOCK_STAGE_KIND_OVERLAY, NULL);
  dump (r);

  c = expect (r, "edit.txt", PADDOCK_CHANGE_KIND_MODIFIED, PADDOCK_ENTRY_TYPE_FILE);
  g_assert_cmpuint (paddock_change_get_added_lines (c), ==, 2);
  g_assert_cmpuint (paddock_change_get_removed_lines (c), ==, 1);
  g_assert_false (paddock_change_get_binary (c));
  g_assert_false (paddock_change_get_conflict (c));

  expect (r, "new.txt", PADDOCK_CHANGE_KIND_ADDED, PADDOCK_ENTRY_TYPE_FILE);
  c = expect (r, "empty", PADDOCK_CHANGE_KIND_ADDED, PADDOCK_ENTRY_TYPE_FILE);
  g_assert_cmpuint (paddock_change_get_added_lines (c), ==, 0);
  c = expect (r, "gone.txt", PADDOCK_CHANGE_KIND_DELETED, PADDOCK_ENTRY_TYPE_NONE);
  g_assert_cmpuint (paddock_change_get_new_mode (c), ==, 0);
  g_assert_true (S_ISREG (paddock_change_get_old_mode (c)));

  /* A rename is one row, exact or merely similar. */
  c = expect (r, "new-name.txt", PADDOCK_CHANGE_KIND_RENAMED, PADDOCK_ENTRY_TYPE_FILE);
  g_assert_cmpstr (paddock_change_get_old_path (c), ==, "old-name.txt");
  g_assert_cmpuint (paddock_change_get_added_lines (c), ==, 6);
  g_assert_null (find (r, "old-name.txt"));
  c = expect (r, "exact-new.txt", PADDOCK_CHANGE_KIND_RENAMED, PADDOCK_ENTRY_TYPE_FILE);
  g_assert_cmpstr (paddock_change_get_old_path (c), ==, "exact-old.txt");
  g_assert_cmpuint (paddock_change_get_added_lines (c), ==, 0);
  g_assert_null (find (r, "exact-old.txt"));

  c = expect (r, "was-file", PADDOCK_CHANGE_KIND_TYPE_CHANGED, PADDOCK_ENTRY_TYPE_SYMLINK);
  g_assert_true (S_ISREG (paddock_change_get_old_mode (c)));
  g_assert_true (S_ISLNK (paddock_change_get_new_mode (c)));

  c = expect (r, "script.sh", PADDOCK_CHANGE_KIND_MODE_CHANGED, PADDOCK_ENTRY_TYPE_FILE);
  g_assert_cmpuint (paddock_change_get_old_mode (c) & 0777, ==, 0644);
  g_assert_cmpuint (paddock_change_get_new_mode (c) & 0777, ==, 0755);

  g_assert_null (find (r, "same.txt"));
  expect (r, "escape", PADDOCK_CHANGE_KIND_ADDED, PADDOCK_ENTRY_TYPE_SYMLINK);
  c = expect (r, "image.bin", PADDOCK_CHANGE_KIND_MODIFIED, PADDOCK_ENTRY_TYPE_FILE);
  g_assert_true (paddock_change_get_binary (c));
  expect (r, "\xff\xfe-latin1-\xe9.txt", PADDOCK_CHANGE_KIND_ADDED, PADDOCK_ENTRY_TYPE_FILE);
  expect (r, "-dash\nnewline name", PADDOCK_CHANGE_KIND_ADDED, PADDOCK_ENTRY_TYPE_FILE);

  g_assert_cmpuint (paddock_review_get_changes (r)->len, ==, 12);

  /* Sorted by path bytes. */
  for (guint i = 1; i < paddock_review_get_changes (r)->len; i++)
    {
      PaddockChange *a = g_ptr_array_index (paddock_review_get_changes (r), i - 1);
      PaddockChange *b = g_ptr_array_index (paddock_review_get_changes (r), i);
      g_assert_cmpint (strcmp (paddock_change_get_path (a), paddock_change_get_path (b)), <, 0);
    }
}

static void
test_diff_content (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(PaddockReview) r = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) none = NULL;
  g_autofree char *orig = numbered_lines (20, "", 0, 0);
  g_autofree char *similar = numbered_lines (20, "new", 3, 6);
  g_autofree char *edit = NULL;
  g_autofree char *link = NULL;
  g_autofree char *ren = NULL;
  g_autofree char *gone = NULL;
  g_autofree char *bin = NULL;
  g_autofree char *odd = NULL;

  put (f->w, "edit.txt", "one\ntwo\nthree\n", -1);
  put (f->w, "old.txt", orig, -1);
  put (f->w, "gone.txt", "bye\n", -1);
  put (f->w, "blob", "\0\1\2", 3);
  put (f->upper, "edit.txt", "one\n2\nthree", -1);
  put_link (f->upper, "escape", "../../../etc/shadow");
  put_whiteout (f->upper, "old.txt");
  put (f->upper, "new.txt", similar, -1);
  put_whiteout (f->upper, "gone.txt");
  put (f->upper, "blob", "\0\1\3", 3);
  put (f->upper, "-x\ny", "odd\n", -1);

  r = review (f, PADDOCK_STAGE_KIND_OVERLAY, NULL);

  edit = diff_text (r, "edit.txt");
  g_test_message ("%s", edit);
  g_assert_true (g_str_has_prefix (edit, "diff --git a/edit.txt b/edit.txt\n"));
  g_assert_nonnull (strstr (edit, "--- a/edit.txt\n+++ b/edit.txt\n"));
  g_assert_nonnull (strstr (edit, "@@ -1,3 +1,3 @@"));
  g_assert_nonnull (strstr (edit, " one\n-two\n-three\n+2\n+three\n\\ No newline at end of file\n"));

  /* The link is shown as its target, never followed. */
  link = diff_text (r, "escape");
  g_test_message ("%s", link);
  g_assert_nonnull (strstr (link, "new file mode 120000\n"));
  g_assert_nonnull (strstr (link, "+../../../etc/shadow\n"));

  ren = diff_text (r, "new.txt");
  g_test_message ("%s", ren);
  g_assert_nonnull (strstr (ren, "diff --git a/old.txt b/new.txt\n"));
  g_assert_nonnull (strstr (ren, "rename from old.txt\nrename to new.txt\n"));
  g_assert_nonnull (strstr (ren, "similarity index "));
  g_assert_nonnull (strstr (ren, "+changed line 3 new\n"));

  gone = diff_text (r, "gone.txt");
  g_assert_nonnull (strstr (gone, "deleted file mode 100644\n"));
  g_assert_nonnull (strstr (gone, "+++ /dev/null\n"));
  g_assert_nonnull (strstr (gone, "-bye\n"));

  bin = diff_text (r, "blob");
  g_assert_nonnull (strstr (bin, "Binary files a/blob and b/blob differ\n"));

  /* A newline in a name is quoted, so it cannot forge a header line. */
  odd = diff_text (r, "-x\ny");
  g_test_message ("%s", odd);
  g_assert_true (g_str_has_prefix (odd, "diff --git \"a/-x\\ny\" \"b/-x\\ny\"\n"));

  none = paddock_review_get_diff (r, "not-a-change", &error);
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_NOT_FOUND);
  g_assert_null (none);
}

static void
test_synth_dirs (Fixture       *f,
                 gconstpointer  data)
{
  g_autoptr(PaddockReview) r = NULL;
  GPtrArray *changes;
  PaddockChange *last;

  /* dir: wiped whole by a whiteout. */
  put (f->w, "dir/a.txt", "a\n", -1);
  put (f->w, "dir/sub/b.txt", "b\n", -1);
  /* opaque: replaced by a new directory with one file of the old name. */
  put (f->w, "opaque/keep.txt", "old keep\n", -1);
  put (f->w, "opaque/drop.txt", "drop\n", -1);
  put (f->w, "opaque/deep/x.txt", "x\n", -1);
  /* merged: an ordinary directory with one new file. */
  put (f->w, "merged/old.txt", "old\n", -1);
  /* tdir: a directory the session replaced with a file. */
  put (f->w, "tdir/a", "a\n", -1);
  /* xw.txt: deleted by a whiteout stored as an xattr on an empty file. */
  put (f->w, "xw.txt", "x\n", -1);

  put_whiteout (f->upper, "dir");
  put (f->upper, "tdir", "now a file\n", -1);
  put (f->upper, "xw.txt", "", 0);
  g_assert_cmpint (setxattr (P (f->upper, "xw.txt"), "user.overlay.whiteout", "", 0, 0), ==, 0);
  make_opaque (f->upper, "opaque");
  put (f->upper, "opaque/keep.txt", "new keep\n", -1);
  put (f->upper, "merged/new.txt", "new\n", -1);
  g_assert_cmpint (g_mkdir_with_parents (P (f->upper, "emptydir/inner"), 0755), ==, 0);

  r = review (f, PADDOCK_STAGE_KIND_OVERLAY, NULL);
  dump (r);
  changes = paddock_review_get_changes (r);

  expect (r, "dir/a.txt", PADDOCK_CHANGE_KIND_DELETED, PADDOCK_ENTRY_TYPE_NONE);
  expect (r, "dir/sub/b.txt", PADDOCK_CHANGE_KIND_DELETED, PADDOCK_ENTRY_TYPE_NONE);
  expect (r, "dir/sub", PADDOCK_CHANGE_KIND_DELETED, PADDOCK_ENTRY_TYPE_DIRECTORY);
  expect (r, "dir", PADDOCK_CHANGE_KIND_DELETED, PADDOCK_ENTRY_TYPE_DIRECTORY);
  expect (r, "opaque/keep.txt", PADDOCK_CHANGE_KIND_MODIFIED, PADDOCK_ENTRY_TYPE_FILE);
  expect (r, "opaque/drop.txt", PADDOCK_CHANGE_KIND_DELETED, PADDOCK_ENTRY_TYPE_NONE);
  expect (r, "opaque/deep/x.txt", PADDOCK_CHANGE_KIND_DELETED, PADDOCK_ENTRY_TYPE_NONE);
  expect (r, "opaque/deep", PADDOCK_CHANGE_KIND_DELETED, PADDOCK_ENTRY_TYPE_DIRECTORY);
  expect (r, "merged/new.txt", PADDOCK_CHANGE_KIND_ADDED, PADDOCK_ENTRY_TYPE_FILE);
  g_assert_null (find (r, "merged/old.txt"));
  g_assert_null (find (r, "merged"));
  g_assert_null (find (r, "opaque"));
  /* Only the innermost empty new directory gets a row. */
  expect (r, "emptydir/inner", PADDOCK_CHANGE_KIND_ADDED, PADDOCK_ENTRY_TYPE_DIRECTORY);
  g_assert_null (find (r, "emptydir"));
  expect (r, "xw.txt", PADDOCK_CHANGE_KIND_DELETED, PADDOCK_ENTRY_TYPE_NONE);
  g_assert_cmpuint (changes->len, ==, 14);

  /* A directory replaced by a file: its contents go, then the directory,
   * then the file comes, in that order; lookup() and get_diff() see the
   * file's row. */
  for (guint i = 0; i < changes->len; i++)
    if (strcmp (paddock_change_get_path (g_ptr_array_index (changes, i)), "tdir/a") == 0)
      {
        PaddockChange *dir_row = g_ptr_array_index (changes, i + 1);
        PaddockChange *file_row = g_ptr_array_index (changes, i + 2);

        g_assert_cmpuint (paddock_change_get_kind (g_ptr_array_index (changes, i)), ==,
                          PADDOCK_CHANGE_KIND_DELETED);
        g_assert_cmpstr (paddock_change_get_path (dir_row), ==, "tdir");
        g_assert_cmpuint (paddock_change_get_kind (dir_row), ==, PADDOCK_CHANGE_KIND_DELETED);
        g_assert_cmpuint (paddock_change_get_entry_type (dir_row), ==, PADDOCK_ENTRY_TYPE_DIRECTORY);
        g_assert_cmpstr (paddock_change_get_path (file_row), ==, "tdir");
        g_assert_cmpuint (paddock_change_get_kind (file_row), ==, PADDOCK_CHANGE_KIND_ADDED);
        g_assert_true (paddock_review_lookup (r, "tdir") == file_row);
      }

  /* A deleted directory comes after its files, and only after them:
   * "opaque/deep" (deleted) sorts before "opaque/drop.txt". */
  for (guint i = 0; i < changes->len; i++)
    {
      const char *p = paddock_change_get_path (g_ptr_array_index (changes, i));
      if (strcmp (p, "opaque/deep") == 0)
        {
          last = g_ptr_array_index (changes, i + 1);
          g_assert_cmpstr (paddock_change_get_path (last), ==, "opaque/drop.txt");
          last = g_ptr_array_index (changes, i - 1);
          g_assert_cmpstr (paddock_change_get_path (last), ==, "opaque/deep/x.txt");
        }
      if (strcmp (p, "dir") == 0)
        {
          last = g_ptr_array_index (changes, i - 1);
          g_assert_cmpstr (paddock_change_get_path (last), ==, "dir/sub");
        }
      if (strcmp (p, "dir/sub") == 0)
        {
          last = g_ptr_array_index (changes, i - 1);
          g_assert_cmpstr (paddock_change_get_path (last), ==, "dir/sub/b.txt");
        }
    }
}

static void
test_huge (Fixture       *f,
           gconstpointer  data)
{
  g_autoptr(PaddockReview) r = NULL;
  gsize size = PADDOCK_REVIEW_MAX_BLOB_SIZE + 4096;
  g_autofree char *big = g_malloc (size);
  g_autofree char *text = NULL;
  PaddockChange *c;

  for (gsize i = 0; i < size; i++)
    big[i] = (char) ('a' + i % 26);
  put (f->w, "big-moved", big, (gssize) size);
  put (f->w, "big-edited", big, (gssize) size);
  put_whiteout (f->upper, "big-moved");
  put (f->upper, "big-moved-here", big, (gssize) size);
  big[size - 1] = '!';
  put (f->upper, "big-edited", big, (gssize) size);

  r = review (f, PADDOCK_STAGE_KIND_OVERLAY, NULL);
  dump (r);
  c = expect (r, "big-moved-here", PADDOCK_CHANGE_KIND_RENAMED, PADDOCK_ENTRY_TYPE_FILE);
  g_assert_cmpstr (paddock_change_get_old_path (c), ==, "big-moved");
  c = expect (r, "big-edited", PADDOCK_CHANGE_KIND_MODIFIED, PADDOCK_ENTRY_TYPE_FILE);
  g_assert_true (paddock_change_get_binary (c));
  g_assert_cmpuint (paddock_change_get_added_lines (c), ==, 0);
  g_assert_cmpuint (paddock_review_get_changes (r)->len, ==, 2);
  text = diff_text (r, "big-edited");
  g_assert_nonnull (strstr (text, "Binary files a/big-edited and b/big-edited differ\n"));
}

static void
test_diff_too_large (Fixture       *f,
                     gconstpointer  data)
{
  g_autoptr(PaddockReview) r = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) diff = NULL;
  gsize size = PADDOCK_REVIEW_MAX_BLOB_SIZE;
  g_autofree char *a = g_malloc (size);
  g_autofree char *b = g_malloc (size);
  PaddockChange *c;

  /* Two texts at the blob limit with no line in common: the diff holds
   * both whole, over PADDOCK_REVIEW_MAX_DIFF_SIZE. */
  for (gsize i = 0; i < size; i++)
    {
      gboolean eol = i % 64 == 63;
      a[i] = eol ? '\n' : (char) ('a' + (i / 64) % 26);
      b[i] = eol ? '\n' : (char) ('A' + (i / 64) % 26);
    }
  put (f->w, "text", a, (gssize) size);
  put (f->upper, "text", b, (gssize) size);

  r = review (f, PADDOCK_STAGE_KIND_OVERLAY, NULL);
  c = expect (r, "text", PADDOCK_CHANGE_KIND_MODIFIED, PADDOCK_ENTRY_TYPE_FILE);
  g_assert_false (paddock_change_get_binary (c));
  g_assert_cmpuint (paddock_change_get_added_lines (c), ==, size / 64);
  diff = paddock_review_get_diff (r, "text", &error);
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_TOO_LARGE);
  g_assert_null (diff);
}

/* The baseline counts an entry changed in the same clock tick as its walk
 * began as "changed since the start" (it cannot tell that writer from one
 * racing the walk). Trees made by a test a moment earlier must age past
 * that tick (at most 10 ms). */
static void
settle_before_baseline (void)
{
  g_usleep (30 * 1000);
}

static void
test_conflict (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(PaddockReview) r = NULL;
  g_autoptr(PaddockBaseline) baseline = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *file = g_build_filename (f->state, "baseline", NULL);
  g_autofree char *gone = g_build_filename (f->w, "also-deleted.txt", NULL);
  g_autofree char *w_ren = g_build_filename (f->w, "ren-old.txt", NULL);
  g_autofree char *orig = numbered_lines (20, "", 0, 0);
  PaddockFileStamp stamp;
  struct stat st;

  put (f->w, "both.txt", "base\n", -1);
  put (f->w, "theirs-only.txt", "base\n", -1);
  put (f->w, "ours-only.txt", "base\n", -1);
  put (f->w, "also-deleted.txt", "base\n", -1);
  put (f->w, "ren-old.txt", orig, -1);
  put (f->w, "they-deleted.txt", "base\n", -1);
  settle_before_baseline ();
  paddock_baseline_record (f->w, file, NULL, &error);
  g_assert_no_error (error);
  baseline = paddock_baseline_load (file, &error);
  g_assert_no_error (error);

  /* The session's edits. */
  put (f->upper, "both.txt", "ours\n", -1);
  put (f->upper, "ours-only.txt", "ours\n", -1);
  put (f->upper, "created-twice.txt", "ours\n", -1);
  put_whiteout (f->upper, "ren-old.txt");
  put (f->upper, "ren-new.txt", orig, -1);
  put (f->upper, "they-deleted.txt", "ours\n", -1);
  /* External edits of W after the baseline. */
  g_usleep (10 * 1000);
  put (f->w, "both.txt", "theirs, longer\n", -1);
  put (f->w, "theirs-only.txt", "theirs, longer\n", -1);
  put (f->w, "created-twice.txt", "theirs\n", -1);
  g_assert_cmpint (g_unlink (gone), ==, 0);
  g_assert_cmpint (chmod (w_ren, 0600), ==, 0);
  g_assert_cmpint (g_unlink (P (f->w, "they-deleted.txt")), ==, 0);

  r = review (f, PADDOCK_STAGE_KIND_OVERLAY, baseline);
  dump (r);
  g_assert_true (paddock_change_get_conflict (expect (r, "both.txt", PADDOCK_CHANGE_KIND_MODIFIED,
                                                      PADDOCK_ENTRY_TYPE_FILE)));
  g_assert_false (paddock_change_get_conflict (expect (r, "ours-only.txt", PADDOCK_CHANGE_KIND_MODIFIED,
                                                       PADDOCK_ENTRY_TYPE_FILE)));
  g_assert_true (paddock_change_get_conflict (expect (r, "created-twice.txt", PADDOCK_CHANGE_KIND_MODIFIED,
                                                      PADDOCK_ENTRY_TYPE_FILE)));
  /* The old side of a rename counts too. */
  g_assert_true (paddock_change_get_conflict (expect (r, "ren-new.txt", PADDOCK_CHANGE_KIND_RENAMED,
                                                      PADDOCK_ENTRY_TYPE_FILE)));
  /* present → absent: W lost the file the session edited. */
  g_assert_true (paddock_change_get_conflict (expect (r, "they-deleted.txt", PADDOCK_CHANGE_KIND_ADDED,
                                                      PADDOCK_ENTRY_TYPE_FILE)));
  /* Overlay: an external edit of a path the session did not touch is no row. */
  g_assert_null (find (r, "theirs-only.txt"));
  g_assert_null (find (r, "also-deleted.txt"));
  g_clear_object (&r);

  /* After an apply, the baseline learns the new stamp: no conflict. */
  g_assert_cmpint (lstat (P (f->w, "both.txt"), &st), ==, 0);
  paddock_file_stamp_from_stat (&stamp, &st);
  paddock_baseline_update (baseline, "both.txt", &stamp, &error);
  g_assert_no_error (error);
  r = review (f, PADDOCK_STAGE_KIND_OVERLAY, baseline);
  g_assert_false (paddock_change_get_conflict (find (r, "both.txt")));
  g_clear_object (&r);
  g_clear_object (&baseline);

  /* ... and remembers it across a reload (the journal is replayed). */
  baseline = paddock_baseline_load (file, &error);
  g_assert_no_error (error);
  r = review (f, PADDOCK_STAGE_KIND_OVERLAY, baseline);
  g_assert_false (paddock_change_get_conflict (find (r, "both.txt")));
  g_assert_true (paddock_change_get_conflict (find (r, "created-twice.txt")));
}

/* --- baseline ------------------------------------------------------- */

static void
test_baseline_basic (Fixture       *f,
                     gconstpointer  data)
{
  g_autoptr(PaddockBaseline) baseline = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *file = g_build_filename (f->state, "baseline", NULL);
  g_autofree char *a = g_build_filename (f->w, "a", NULL);
  PaddockFileStamp stamp, gone = { FALSE };
  struct stat st;

  put (f->w, "a", "a\n", -1);
  put (f->w, "d/\xff name\n", "b\n", -1);
  put_link (f->w, "link", "/nowhere");

  settle_before_baseline ();
  paddock_baseline_record (f->w, file, NULL, &error);
  g_assert_no_error (error);
  baseline = paddock_baseline_load (file, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_baseline_get_n_entries (baseline), ==, 4);

  g_assert_cmpint (lstat (a, &st), ==, 0);
  g_assert_true (paddock_baseline_lookup (baseline, "a", &stamp));
  g_assert_cmpuint (stamp.ino, ==, st.st_ino);
  g_assert_true (paddock_baseline_lookup (baseline, "d", &stamp));
  g_assert_true (S_ISDIR (stamp.mode));
  g_assert_true (paddock_baseline_lookup (baseline, "d/\xff name\n", &stamp));
  g_assert_true (paddock_baseline_lookup (baseline, "link", &stamp));
  g_assert_true (S_ISLNK (stamp.mode));
  g_assert_false (paddock_baseline_lookup (baseline, "missing", &stamp));
  g_assert_false (stamp.present);
  g_assert_false (paddock_baseline_lookup (baseline, "d/", &stamp));

  paddock_baseline_update (baseline, "a", &gone, &error);
  g_assert_no_error (error);
  g_assert_false (paddock_baseline_lookup (baseline, "a", &stamp));
  paddock_baseline_update (baseline, "/abs", &gone, &error);
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_INVALID_PATH);
  g_clear_error (&error);
  paddock_baseline_update (baseline, "x/../y", &gone, &error);
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_INVALID_PATH);
  g_clear_error (&error);
  g_clear_object (&baseline);

  baseline = paddock_baseline_load (file, &error);
  g_assert_no_error (error);
  g_assert_false (paddock_baseline_lookup (baseline, "a", &stamp));
  g_assert_true (paddock_baseline_lookup (baseline, "link", &stamp));
}

/* Writes a copy of the baseline @file with version 1 in its header (the
 * layout is the same): the file an older daemon wrote. */
static void
make_version_1 (const char *file)
{
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  gsize len = 0;
  guint32 version = 1;

  g_file_get_contents (file, &contents, &len, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (len, >=, 12);
  memcpy (contents + 8, &version, sizeof version);
  g_file_set_contents (file, contents, (gssize) len, &error);
  g_assert_no_error (error);
}

/* The baseline's format says what a missing path means. This daemon writes
 * version 2 (which a daemon of version 1 refuses: "unknown version"); it
 * reads version 1, says so, and reads it as it was written until told that
 * its missing paths are "unknown"; a later version it refuses. */
static void
test_baseline_version (Fixture       *f,
                       gconstpointer  data)
{
  g_autofree char *file = g_build_filename (f->state, "baseline", NULL);
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockBaseline) baseline = NULL;
  PaddockFileStamp stamp;
  gsize len = 0;
  guint32 version = 0;

  put (f->w, "a", "a\n", -1);
  put (f->w, "d/b", "b\n", -1);
  settle_before_baseline ();
  paddock_baseline_record (f->w, file, NULL, &error);
  g_assert_no_error (error);
  g_file_get_contents (file, &contents, &len, &error);
  g_assert_no_error (error);
  memcpy (&version, contents + 8, sizeof version);
  g_assert_cmpuint (version, ==, 2);
  baseline = paddock_baseline_load (file, &error);
  g_assert_no_error (error);
  g_assert_false (paddock_baseline_is_legacy (baseline));
  g_clear_object (&baseline);

  /* An older daemon's file. */
  make_version_1 (file);
  baseline = paddock_baseline_load (file, &error);
  g_assert_no_error (error);
  g_assert_true (paddock_baseline_is_legacy (baseline));
  g_assert_true (paddock_baseline_lookup (baseline, "d/b", &stamp));
  g_assert_cmpint (stamp.ctime_ns, !=, G_MININT64);
  g_assert_false (paddock_baseline_lookup (baseline, "d/missing", &stamp));
  paddock_baseline_set_missing_unknown (baseline);
  g_assert_true (paddock_baseline_lookup (baseline, "d/missing", &stamp));
  g_assert_cmpint (stamp.ctime_ns, ==, G_MININT64);
  g_assert_true (paddock_baseline_lookup (baseline, "missing", &stamp));
  g_assert_cmpint (stamp.ctime_ns, ==, G_MININT64);
  /* Its entries still say what they recorded. */
  g_assert_true (paddock_baseline_lookup (baseline, "a", &stamp));
  g_assert_cmpint (stamp.ctime_ns, !=, G_MININT64);
  g_clear_object (&baseline);

  /* A later version than this daemon knows. */
  version = 3;
  memcpy (contents + 8, &version, sizeof version);
  put (f->state, "version-3", contents, (gssize) len);
  baseline = paddock_baseline_load (P (f->state, "version-3"), &error);
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CORRUPT);
  g_assert_null (baseline);
}

static void
test_baseline_corrupt (Fixture       *f,
                       gconstpointer  data)
{
  g_autofree char *file = g_build_filename (f->state, "baseline", NULL);
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockBaseline) baseline = NULL;
  PaddockFileStamp stamp;
  gsize len = 0;

  put (f->w, "a", "a\n", -1);
  settle_before_baseline ();
  paddock_baseline_record (f->w, file, NULL, &error);
  g_assert_no_error (error);
  g_file_get_contents (file, &contents, &len, &error);
  g_assert_no_error (error);

  /* Bad magic. */
  put (f->state, "bad-magic", "NOTABASELINEFILE-NOTABASELINEFILE-NOTABASELINEFILE-", -1);
  baseline = paddock_baseline_load (P (f->state, "bad-magic"), &error);
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CORRUPT);
  g_assert_null (baseline);
  g_clear_error (&error);

  /* Truncated: the entry table runs past the end. */
  put (f->state, "truncated", contents, (gssize) len - 3);
  baseline = paddock_baseline_load (P (f->state, "truncated"), &error);
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CORRUPT);
  g_clear_error (&error);

  /* A header flag this daemon does not know (header.flags is at byte 32):
   * refused, not read as if it were not there. The one it knows loads. */
  contents[33] = (char) 0x01;
  put (f->state, "unknown-flag", contents, (gssize) len);
  baseline = paddock_baseline_load (P (f->state, "unknown-flag"), &error);
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CORRUPT);
  g_assert_null (baseline);
  g_clear_error (&error);
  contents[33] = 0;
  contents[32] = (char) 0x01;
  put (f->state, "root-changed", contents, (gssize) len);
  baseline = paddock_baseline_load (P (f->state, "root-changed"), &error);
  g_assert_no_error (error);
  g_assert_nonnull (baseline);
  g_assert_true (paddock_baseline_lookup (baseline, "not-there", &stamp));
  g_assert_cmpint (stamp.ctime_ns, ==, G_MININT64);
  g_clear_object (&baseline);
  contents[32] = 0;

  /* An entry whose path points outside the string table. */
  contents[48] = (char) 0x7f;
  put (f->state, "bad-offset", contents, (gssize) len);
  baseline = paddock_baseline_load (P (f->state, "bad-offset"), &error);
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CORRUPT);
  g_clear_error (&error);

  /* Too short for a header. */
  put (f->state, "short", "PDK", 3);
  baseline = paddock_baseline_load (P (f->state, "short"), &error);
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CORRUPT);
  g_clear_error (&error);

  baseline = paddock_baseline_load (P (f->state, "absent"), &error);
  g_assert_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_NOT_FOUND);
}

static void
test_baseline_100k (Fixture       *f,
                    gconstpointer  data)
{
  g_autofree char *file = g_build_filename (f->state, "baseline", NULL);
  g_autofree char *tree = g_strdup ("/dev/shm/paddock-review-100k-XXXXXX");
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockBaseline) baseline = NULL;
  PaddockFileStamp stamp;
  gint64 start, loaded, looked;

  /* What is timed is the baseline, not the disk: creating 100,000 files
   * takes ~45 s on some VM disks and 0.4 s on tmpfs, so use tmpfs when
   * there is one. */
  if (g_mkdtemp (tree) == NULL)
    {
      g_free (tree);
      tree = g_build_filename (f->root, "tree", NULL);
      g_assert_cmpint (g_mkdir (tree, 0755), ==, 0);
    }

  /* 100 directories of 999 files: 100,000 entries. */
  for (guint d = 0; d < 100; d++)
    {
      g_autofree char *dir = g_strdup_printf ("%s/dir%03u", tree, d);
      g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
      for (guint i = 0; i < 999; i++)
        {
          g_autofree char *path = g_strdup_printf ("%s/file-%04u.c", dir, i);
          int fd = open (path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
          g_assert_cmpint (fd, >=, 0);
          close (fd);
        }
    }

  start = g_get_monotonic_time ();
  settle_before_baseline ();
  paddock_baseline_record (tree, file, NULL, &error);
  g_assert_no_error (error);
  g_test_message ("record of 100,000 entries: %.1f ms", (g_get_monotonic_time () - start) / 1000.0);
  paddock_remove_tree (tree);

  start = g_get_monotonic_time ();
  baseline = paddock_baseline_load (file, &error);
  loaded = g_get_monotonic_time ();
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_baseline_get_n_entries (baseline), ==, 100000);
  for (guint d = 0; d < 100; d++)
    for (guint i = 0; i < 999; i += 7)
      {
        g_autofree char *rel = g_strdup_printf ("dir%03u/file-%04u.c", d, i);
        g_assert_true (paddock_baseline_lookup (baseline, rel, &stamp));
      }
  looked = g_get_monotonic_time ();
  g_assert_false (paddock_baseline_lookup (baseline, "dir100", &stamp));
  g_test_message ("load of 100,000 entries: %.3f ms; 14,300 lookups: %.3f ms",
                  (loaded - start) / 1000.0, (looked - loaded) / 1000.0);
}

/* --- copy mode ------------------------------------------------------ */

/* Renames without any type change (so exact matching alone is tried
 * first), and a second and third review through a cache: the same rows,
 * and a file rewritten in place (same size, same inode) is read again. */
static void
test_cache_and_exact_renames (Fixture       *f,
                              gconstpointer  data)
{
  g_autoptr(PaddockReviewCache) cache = paddock_review_cache_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *orig = numbered_lines (20, "", 0, 0);
  g_autofree char *similar = numbered_lines (20, "new", 3, 6);   /* ~70% alike */
  g_autofree char *exact = numbered_lines (30, "exact", 29, 1);
  g_autofree char *edited = g_strconcat (orig, "added one\nadded two\n", NULL);
  g_autofree char *rewritten = g_strdup (edited);
  const char *edit_path = P (f->upper, "edit.txt");

  put (f->w, "edit.txt", orig, -1);
  put (f->w, "old-name.txt", orig, -1);
  put (f->w, "exact-old.txt", exact, -1);
  put (f->w, "only-deleted.txt", exact, -1);
  put (f->upper, "edit.txt", edited, -1);
  put_whiteout (f->upper, "old-name.txt");
  put (f->upper, "new-name.txt", similar, -1);
  put_whiteout (f->upper, "exact-old.txt");
  put (f->upper, "exact-new.txt", exact, -1);
  put_whiteout (f->upper, "only-deleted.txt");
  /* Stamps from before the reviews begin: the cache may keep them. */
  g_usleep (50 * 1000);

  for (guint round = 0; round < 3; round++)
    {
      g_autoptr(PaddockReview) r = NULL;
      PaddockChange *c;

      if (round == 2)
        {
          /* In place and the same length: line 5 changes too. */
          int fd = open (edit_path, O_WRONLY | O_CLOEXEC);
          char *line = strstr (rewritten, "number 5 ");

          g_assert_nonnull (line);
          line[0] = 'N';
          g_assert_cmpint (fd, >=, 0);
          g_assert_cmpint (pwrite (fd, rewritten, strlen (rewritten), 0), ==, (gssize) strlen (rewritten));
          g_assert_cmpint (close (fd), ==, 0);
        }

      r = paddock_review_new (f->w, f->upper, PADDOCK_STAGE_KIND_OVERLAY, NULL, NULL, cache, NULL, &error);
      g_assert_no_error (error);
      dump (r);
      c = expect (r, "edit.txt", PADDOCK_CHANGE_KIND_MODIFIED, PADDOCK_ENTRY_TYPE_FILE);
      g_assert_cmpuint (paddock_change_get_added_lines (c), ==, round == 2 ? 3 : 2);
      g_assert_cmpuint (paddock_change_get_removed_lines (c), ==, round == 2 ? 1 : 0);
      {
        /* The diff text comes from the blobs this review stored, cached
         * ids or not. */
        g_autoptr(GBytes) diff = paddock_review_get_diff (r, "edit.txt", &error);
        g_autofree char *text = NULL;

        g_assert_no_error (error);
        text = g_strndup (g_bytes_get_data (diff, NULL), g_bytes_get_size (diff));
        g_assert_nonnull (strstr (text, "\n+added two\n"));
        g_assert_true ((strstr (text, "\n+this is line Number 5 ") != NULL) == (round == 2));
      }
      c = expect (r, "new-name.txt", PADDOCK_CHANGE_KIND_RENAMED, PADDOCK_ENTRY_TYPE_FILE);
      g_assert_cmpstr (paddock_change_get_old_path (c), ==, "old-name.txt");
      g_assert_cmpuint (paddock_change_get_added_lines (c), ==, 6);
      c = expect (r, "exact-new.txt", PADDOCK_CHANGE_KIND_RENAMED, PADDOCK_ENTRY_TYPE_FILE);
      g_assert_cmpstr (paddock_change_get_old_path (c), ==, "exact-old.txt");
      expect (r, "only-deleted.txt", PADDOCK_CHANGE_KIND_DELETED, PADDOCK_ENTRY_TYPE_NONE);
      g_assert_cmpuint (paddock_review_get_changes (r)->len, ==, 4);
    }

  /* Only exact renames possible: the leftover deleted file stays deleted. */
  {
    g_autoptr(PaddockReview) r = NULL;
    PaddockChange *c;

    g_assert_cmpint (unlink (P (f->upper, "new-name.txt")), ==, 0);
    r = paddock_review_new (f->w, f->upper, PADDOCK_STAGE_KIND_OVERLAY, NULL, NULL, cache, NULL, &error);
    g_assert_no_error (error);
    c = expect (r, "exact-new.txt", PADDOCK_CHANGE_KIND_RENAMED, PADDOCK_ENTRY_TYPE_FILE);
    g_assert_cmpstr (paddock_change_get_old_path (c), ==, "exact-old.txt");
    expect (r, "old-name.txt", PADDOCK_CHANGE_KIND_DELETED, PADDOCK_ENTRY_TYPE_NONE);
    expect (r, "only-deleted.txt", PADDOCK_CHANGE_KIND_DELETED, PADDOCK_ENTRY_TYPE_NONE);
  }
}

static void
test_copy_mode (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(PaddockReview) r = NULL;
  g_autofree char *orig = numbered_lines (20, "", 0, 0);
  PaddockChange *c;

  put (f->w, "same.txt", "same\n", -1);
  put (f->w, "edit.txt", "before\n", -1);
  put (f->w, "gone/inside.txt", "x\n", -1);
  put (f->w, "moved.txt", orig, -1);
  put_link (f->w, "link", "same.txt");

  put (f->upper, "same.txt", "same\n", -1);
  put (f->upper, "edit.txt", "after!\n", -1);   /* different size */
  put (f->upper, "sub/new.txt", "new\n", -1);
  put (f->upper, "renamed.txt", orig, -1);
  put_link (f->upper, "link", "same.txt");
  g_assert_cmpint (g_mkdir (P (f->upper, "empty"), 0755), ==, 0);

  r = review (f, PADDOCK_STAGE_KIND_COPY, NULL);
  dump (r);
  expect (r, "edit.txt", PADDOCK_CHANGE_KIND_MODIFIED, PADDOCK_ENTRY_TYPE_FILE);
  expect (r, "sub/new.txt", PADDOCK_CHANGE_KIND_ADDED, PADDOCK_ENTRY_TYPE_FILE);
  expect (r, "gone/inside.txt", PADDOCK_CHANGE_KIND_DELETED, PADDOCK_ENTRY_TYPE_NONE);
  expect (r, "gone", PADDOCK_CHANGE_KIND_DELETED, PADDOCK_ENTRY_TYPE_DIRECTORY);
  expect (r, "empty", PADDOCK_CHANGE_KIND_ADDED, PADDOCK_ENTRY_TYPE_DIRECTORY);
  c = expect (r, "renamed.txt", PADDOCK_CHANGE_KIND_RENAMED, PADDOCK_ENTRY_TYPE_FILE);
  g_assert_cmpstr (paddock_change_get_old_path (c), ==, "moved.txt");
  g_assert_null (find (r, "same.txt"));
  g_assert_null (find (r, "link"));
  g_assert_cmpuint (paddock_review_get_changes (r)->len, ==, 6);

  /* Same size, different bytes: still found. */
  g_clear_object (&r);
  put (f->upper, "same.txt", "SAME\n", -1);
  r = review (f, PADDOCK_STAGE_KIND_COPY, NULL);
  expect (r, "same.txt", PADDOCK_CHANGE_KIND_MODIFIED, PADDOCK_ENTRY_TYPE_FILE);
}

/* A copy stage with the copy's stamps from when it was made: what only
 * the user changed in the workspace afterwards is not the session's. */
static void
test_copy_mode_user_edits (Fixture       *f,
                           gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockBaseline) baseline = NULL;
  g_autoptr(PaddockBaseline) copy_baseline = NULL;
  g_autoptr(PaddockReview) r = NULL;
  g_autofree char *orig = numbered_lines (20, "", 0, 0);
  const char *w_stamps = P (f->state, "baseline");
  const char *copy_stamps = P (f->state, "copy-baseline");
  PaddockChange *c;

  put (f->w, "agent-edits.txt", "before\n", -1);
  put (f->w, "user-edits.txt", "before\n", -1);       /* same size after */
  put (f->w, "user-grows.txt", "before\n", -1);
  put (f->w, "user-deletes.txt", "before\n", -1);
  put (f->w, "both-edit.txt", "before\n", -1);
  put (f->w, "dir/user-edits-inside.txt", "before\n", -1);
  put (f->w, "moved.txt", orig, -1);
  put (f->w, "agent-deletes.txt", "doomed\n", -1);

  /* What the stage does: copy, wait a clock tick, record both. */
  g_assert_cmpint (rmdir (f->upper), ==, 0);
  g_assert_true (paddock_tree_copy (f->w, f->upper, NULL, &error));
  g_assert_no_error (error);
  paddock_file_time_wait_past_now ();
  g_assert_true (paddock_baseline_record (f->upper, copy_stamps, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (paddock_baseline_record (f->w, w_stamps, NULL, &error));
  g_assert_no_error (error);
  copy_baseline = paddock_baseline_load (copy_stamps, &error);
  g_assert_no_error (error);
  baseline = paddock_baseline_load (w_stamps, &error);
  g_assert_no_error (error);

  /* The session, in its copy. */
  put (f->upper, "agent-edits.txt", "after, by the agent\n", -1);
  put (f->upper, "both-edit.txt", "the agent's\n", -1);
  put (f->upper, "agent-new.txt", "new\n", -1);
  g_assert_cmpint (rename (P (f->upper, "moved.txt"), P (f->upper, "renamed.txt")), ==, 0);
  g_assert_cmpint (unlink (P (f->upper, "agent-deletes.txt")), ==, 0);

  /* The user, in the workspace. */
  put (f->w, "user-edits.txt", "BEFORE\n", -1);
  put (f->w, "user-grows.txt", "before, and more\n", -1);
  g_assert_cmpint (unlink (P (f->w, "user-deletes.txt")), ==, 0);
  put (f->w, "user-new.txt", "the user's\n", -1);
  put (f->w, "dir/user-edits-inside.txt", "the user's\n", -1);
  put (f->w, "both-edit.txt", "the user's\n", -1);

  r = paddock_review_new (f->w, f->upper, PADDOCK_STAGE_KIND_COPY, baseline, copy_baseline, NULL, NULL, &error);
  g_assert_no_error (error);
  dump (r);
  c = expect (r, "agent-edits.txt", PADDOCK_CHANGE_KIND_MODIFIED, PADDOCK_ENTRY_TYPE_FILE);
  g_assert_false (paddock_change_get_conflict (c));
  expect (r, "agent-new.txt", PADDOCK_CHANGE_KIND_ADDED, PADDOCK_ENTRY_TYPE_FILE);
  expect (r, "agent-deletes.txt", PADDOCK_CHANGE_KIND_DELETED, PADDOCK_ENTRY_TYPE_NONE);
  c = expect (r, "renamed.txt", PADDOCK_CHANGE_KIND_RENAMED, PADDOCK_ENTRY_TYPE_FILE);
  g_assert_cmpstr (paddock_change_get_old_path (c), ==, "moved.txt");
  /* Changed on both sides: a conflict, as with an overlay. */
  c = expect (r, "both-edit.txt", PADDOCK_CHANGE_KIND_MODIFIED, PADDOCK_ENTRY_TYPE_FILE);
  g_assert_true (paddock_change_get_conflict (c));
  /* Only the user's: not listed at all. */
  g_assert_null (find (r, "user-edits.txt"));
  g_assert_null (find (r, "user-grows.txt"));
  g_assert_null (find (r, "user-deletes.txt"));
  g_assert_null (find (r, "user-new.txt"));
  g_assert_null (find (r, "dir/user-edits-inside.txt"));
  g_assert_cmpuint (paddock_review_get_changes (r)->len, ==, 5);

  /* Without the copy's stamps every difference is listed, as before. */
  g_clear_object (&r);
  r = review (f, PADDOCK_STAGE_KIND_COPY, NULL);
  g_assert_nonnull (find (r, "user-edits.txt"));
  g_assert_nonnull (find (r, "user-new.txt"));
}

/* The stage keeps the copy's stamps: after dropping a change, that path
 * is the workspace's again, and a later edit of it by the user is not the
 * session's; likewise after dropping everything. */
static void
test_copy_stage_drop (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockStage) stage = NULL;
  g_autoptr(PaddockReview) r = NULL;
  const char *stage_dir = P (f->state, "stage");
  const char *copy = P (stage_dir, "copy");
  const char *const drop_a[] = { "a.txt", NULL };

  put (f->w, "a.txt", "a, as it was\n", -1);
  put (f->w, "b.txt", "b, as it was\n", -1);
  stage = paddock_stage_new (stage_dir, f->w, PADDOCK_STAGE_KIND_COPY);
  g_assert_true (paddock_stage_prepare (stage, NULL, &error));
  g_assert_no_error (error);

  put (copy, "a.txt", "a, by the agent\n", -1);
  put (copy, "b.txt", "b, by the agent\n", -1);
  g_assert_true (paddock_stage_drop (stage, drop_a, NULL, &error));
  g_assert_no_error (error);
  put (f->w, "a.txt", "a, by the user afterwards\n", -1);

  r = paddock_stage_review (stage, NULL, &error);
  g_assert_no_error (error);
  dump (r);
  g_assert_null (find (r, "a.txt"));
  expect (r, "b.txt", PADDOCK_CHANGE_KIND_MODIFIED, PADDOCK_ENTRY_TYPE_FILE);
  g_assert_cmpuint (paddock_review_get_changes (r)->len, ==, 1);

  g_assert_true (paddock_stage_drop (stage, NULL, NULL, &error));
  g_assert_no_error (error);
  put (f->w, "b.txt", "b, by the user afterwards\n", -1);
  g_clear_object (&r);
  r = paddock_stage_review (stage, NULL, &error);
  g_assert_no_error (error);
  dump (r);
  g_assert_cmpuint (paddock_review_get_changes (r)->len, ==, 0);
}

/* A restored checkpoint of a copy stage has new stamps throughout; what
 * the session had changed is kept with the checkpoint, so a file only the
 * user edited is still not listed. */
static void
test_copy_stage_checkpoint (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockStage) stage = NULL;
  g_autoptr(PaddockReview) r = NULL;
  g_autofree char *name = NULL;
  const char *stage_dir = P (f->state, "stage");
  const char *copy = P (stage_dir, "copy");

  put (f->w, "a.txt", "a, as it was\n", -1);
  put (f->w, "b.txt", "b, as it was\n", -1);
  put (f->w, "c.txt", "c, as it was\n", -1);
  stage = paddock_stage_new (stage_dir, f->w, PADDOCK_STAGE_KIND_COPY);
  g_assert_true (paddock_stage_prepare (stage, NULL, &error));
  g_assert_no_error (error);

  put (copy, "a.txt", "a, by the agent\n", -1);
  g_assert_cmpint (unlink (P (copy, "b.txt")), ==, 0);
  name = paddock_stage_create_checkpoint (stage, "cp", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (name, ==, "cp");
  g_assert_true (paddock_stage_drop (stage, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (paddock_stage_restore_checkpoint (stage, "cp", NULL, &error));
  g_assert_no_error (error);
  put (f->w, "c.txt", "c, by the user afterwards\n", -1);

  r = paddock_stage_review (stage, NULL, &error);
  g_assert_no_error (error);
  dump (r);
  expect (r, "a.txt", PADDOCK_CHANGE_KIND_MODIFIED, PADDOCK_ENTRY_TYPE_FILE);
  expect (r, "b.txt", PADDOCK_CHANGE_KIND_DELETED, PADDOCK_ENTRY_TYPE_NONE);
  g_assert_null (find (r, "c.txt"));
  g_assert_cmpuint (paddock_review_get_changes (r)->len, ==, 2);
}

/* --- the stage's baseline, walked after the start ------------------- */

/* Far past the test's timeout: a walk scheduled this far out runs only if
 * a review asks for it (or gives up if a cancel comes), so a test that
 * relies on either times out when it does not happen. */
#define WALK_IN_AN_HOUR_MS (3600 * 1000)

/* The session's start as the daemon makes it: the workspace's files age
 * past the walk's clock tick, an overlay stage in @stage_dir is prepared
 * (the moment the baseline stands for) and its walk scheduled an hour
 * out. */
static PaddockStage *
start_stage (Fixture    *f,
             const char *stage_dir)
{
  g_autoptr(GError) error = NULL;
  PaddockStage *stage;

  settle_before_baseline ();
  stage = paddock_stage_new (stage_dir, f->w, PADDOCK_STAGE_KIND_OVERLAY);
  g_assert_true (paddock_stage_prepare (stage, NULL, &error));
  g_assert_no_error (error);
  paddock_stage_record_baseline_in_thread (stage, WALK_IN_AN_HOUR_MS);
  return stage;
}

/* The baseline's walk waits (here: an hour, far past the test's timeout)
 * unless a review wants it first; what another writer changed between the
 * stage's preparation and the walk is "unknown" in it, so an edit of the
 * session there is a conflict, though the walk saw the workspace only
 * afterwards. A change of the session made right away is listed. */
static void
test_stage_baseline_later (Fixture       *f,
                           gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockStage) stage = NULL;
  g_autoptr(PaddockReview) r = NULL;
  const char *stage_dir = P (f->state, "stage");
  const char *upper = P (stage_dir, "upper");

  put (f->w, "both.txt", "base\n", -1);
  put (f->w, "ours-only.txt", "base\n", -1);
  put (f->w, "theirs-only.txt", "base\n", -1);
  stage = start_stage (f, stage_dir);

  /* Before the walk: the session's edits, and another writer's. */
  put (upper, "both.txt", "ours\n", -1);
  put (upper, "ours-only.txt", "ours\n", -1);
  put (upper, "new.txt", "ours\n", -1);
  overwrite (f->w, "both.txt", "theirs, longer\n");
  overwrite (f->w, "theirs-only.txt", "theirs, longer\n");

  /* Would wait an hour (the test times out) if the review did not start
   * the walk itself. */
  r = paddock_stage_review (stage, NULL, &error);
  g_assert_no_error (error);
  dump (r);
  g_assert_true (g_file_test (P (stage_dir, "baseline"), G_FILE_TEST_IS_REGULAR));
  g_assert_true (paddock_change_get_conflict (expect (r, "both.txt", PADDOCK_CHANGE_KIND_MODIFIED,
                                                      PADDOCK_ENTRY_TYPE_FILE)));
  g_assert_false (paddock_change_get_conflict (expect (r, "ours-only.txt", PADDOCK_CHANGE_KIND_MODIFIED,
                                                       PADDOCK_ENTRY_TYPE_FILE)));
  g_assert_false (paddock_change_get_conflict (expect (r, "new.txt", PADDOCK_CHANGE_KIND_ADDED,
                                                       PADDOCK_ENTRY_TYPE_FILE)));
  g_assert_null (find (r, "theirs-only.txt"));
  g_assert_cmpuint (paddock_review_get_changes (r)->len, ==, 3);
}

/* A file another writer deletes between the stage's preparation and the
 * walk leaves no entry in the baseline; the session then writes the same
 * path. That is a conflict (its folder changed since the start: what was
 * there then cannot be known), not an "added" file that Apply would bring
 * back over the deletion unasked. A folder removed with its files, the
 * same. A new file in a folder nobody touched is no conflict. */
static void
test_stage_baseline_deleted (Fixture       *f,
                             gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockStage) stage = NULL;
  g_autoptr(PaddockReview) r = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  const char *stage_dir = P (f->state, "stage");
  const char *upper = P (stage_dir, "upper");
  PaddockChange *row;

  put (f->w, "gone.txt", "base\n", -1);
  put (f->w, "sub/gone-too.txt", "base\n", -1);
  put (f->w, "sub/stays.txt", "base\n", -1);
  put (f->w, "tree/deep/x.txt", "base\n", -1);
  put (f->w, "calm/old.txt", "base\n", -1);
  stage = start_stage (f, stage_dir);

  /* Before the walk: another writer deletes, the session writes there. */
  g_assert_cmpint (unlink (P (f->w, "gone.txt")), ==, 0);
  g_assert_cmpint (unlink (P (f->w, "sub/gone-too.txt")), ==, 0);
  g_assert_cmpint (unlink (P (f->w, "tree/deep/x.txt")), ==, 0);
  g_assert_cmpint (rmdir (P (f->w, "tree/deep")), ==, 0);
  put (upper, "gone.txt", "ours\n", -1);
  put (upper, "sub/gone-too.txt", "ours\n", -1);
  put (upper, "tree/deep/x.txt", "ours\n", -1);
  put (upper, "calm/new.txt", "ours\n", -1);

  r = paddock_stage_review (stage, NULL, &error);
  g_assert_no_error (error);
  dump (r);
  g_assert_true (paddock_change_get_conflict (expect (r, "gone.txt", PADDOCK_CHANGE_KIND_ADDED,
                                                      PADDOCK_ENTRY_TYPE_FILE)));
  g_assert_true (paddock_change_get_conflict (expect (r, "sub/gone-too.txt", PADDOCK_CHANGE_KIND_ADDED,
                                                      PADDOCK_ENTRY_TYPE_FILE)));
  row = find (r, "tree/deep/x.txt");
  g_assert_nonnull (row);
  g_assert_true (paddock_change_get_conflict (row));
  g_assert_false (paddock_change_get_conflict (expect (r, "calm/new.txt", PADDOCK_CHANGE_KIND_ADDED,
                                                       PADDOCK_ENTRY_TYPE_FILE)));

  /* Apply, unforced: the deletions stand, the new file goes in. */
  g_assert_true (paddock_stage_apply (stage, NULL, NULL, "test", &result, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (P (f->w, "gone.txt"), G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (P (f->w, "sub/gone-too.txt"), G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (P (f->w, "tree/deep"), G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (P (f->w, "calm/new.txt"), G_FILE_TEST_IS_REGULAR));
}

/* A session of an older daemon, whose baseline file (version 1) lacks a
 * file another writer deleted after the stage was prepared, with nothing
 * saying its folder changed: read as it was written, the session's write
 * there would be a plain addition that Apply brings back over the
 * deletion. The stage walks again for the start (baseline-since): a
 * conflict, and a new file in a folder nobody touched still none. Without
 * baseline-since, every path the file lacks is "unknown": both are
 * conflicts, and an entry it has still tells (no conflict where only the
 * session edited). */
static void
test_stage_baseline_version_1 (Fixture       *f,
                               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockStage) stage = NULL;
  g_autoptr(PaddockReview) r = NULL;
  const char *stage_dir = P (f->state, "stage");
  const char *upper = P (stage_dir, "upper");
  const char *baseline_file = P (stage_dir, "baseline");

  put (f->w, "gone.txt", "base\n", -1);
  put (f->w, "ours-only.txt", "base\n", -1);
  put (f->w, "calm/old.txt", "base\n", -1);
  stage = start_stage (f, stage_dir);
  g_assert_cmpint (unlink (P (f->w, "gone.txt")), ==, 0);
  put (upper, "gone.txt", "ours\n", -1);
  put (upper, "ours-only.txt", "ours\n", -1);
  put (upper, "calm/new.txt", "ours\n", -1);
  paddock_stage_cancel_baseline (stage);
  g_clear_object (&stage);

  /* The older daemon's walk came after the deletion, for its own moment. */
  settle_before_baseline ();
  paddock_baseline_record (f->w, baseline_file, NULL, &error);
  g_assert_no_error (error);
  make_version_1 (baseline_file);

  stage = paddock_stage_new (stage_dir, f->w, PADDOCK_STAGE_KIND_OVERLAY);
  r = paddock_stage_review (stage, NULL, &error);
  g_assert_no_error (error);
  dump (r);
  g_assert_true (paddock_change_get_conflict (expect (r, "gone.txt", PADDOCK_CHANGE_KIND_ADDED,
                                                      PADDOCK_ENTRY_TYPE_FILE)));
  g_assert_false (paddock_change_get_conflict (expect (r, "calm/new.txt", PADDOCK_CHANGE_KIND_ADDED,
                                                       PADDOCK_ENTRY_TYPE_FILE)));
  g_assert_false (paddock_change_get_conflict (expect (r, "ours-only.txt", PADDOCK_CHANGE_KIND_MODIFIED,
                                                       PADDOCK_ENTRY_TYPE_FILE)));
  /* Walked again: the file is this daemon's now. */
  {
    g_autoptr(PaddockBaseline) rewalked = paddock_baseline_load (baseline_file, &error);

    g_assert_no_error (error);
    g_assert_false (paddock_baseline_is_legacy (rewalked));
  }
  g_clear_object (&r);
  g_clear_object (&stage);

  /* The same file, and no record of the start. */
  settle_before_baseline ();
  paddock_baseline_record (f->w, baseline_file, NULL, &error);
  g_assert_no_error (error);
  make_version_1 (baseline_file);
  g_assert_cmpint (unlink (P (stage_dir, "baseline-since")), ==, 0);
  stage = paddock_stage_new (stage_dir, f->w, PADDOCK_STAGE_KIND_OVERLAY);
  r = paddock_stage_review (stage, NULL, &error);
  g_assert_no_error (error);
  dump (r);
  g_assert_true (paddock_change_get_conflict (expect (r, "gone.txt", PADDOCK_CHANGE_KIND_ADDED,
                                                      PADDOCK_ENTRY_TYPE_FILE)));
  g_assert_true (paddock_change_get_conflict (expect (r, "calm/new.txt", PADDOCK_CHANGE_KIND_ADDED,
                                                      PADDOCK_ENTRY_TYPE_FILE)));
  g_assert_false (paddock_change_get_conflict (expect (r, "ours-only.txt", PADDOCK_CHANGE_KIND_MODIFIED,
                                                       PADDOCK_ENTRY_TYPE_FILE)));
}

/* The daemon that started a session died before the baseline's walk (here:
 * the walk is cancelled, and the stage dropped, before it ran). A stage
 * made for the same folder, as a restarted daemon makes it, walks the
 * workspace for the moment the first one prepared the stage
 * (baseline-since): an edit or a deletion made by another writer since is
 * a conflict with the session's write there. Without that moment either,
 * every change is a conflict. */
static void
test_stage_baseline_restored (Fixture       *f,
                              gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockStage) stage = NULL;
  g_autoptr(PaddockReview) r = NULL;
  const char *stage_dir = P (f->state, "stage");
  const char *upper = P (stage_dir, "upper");

  put (f->w, "both.txt", "base\n", -1);
  put (f->w, "ours-only.txt", "base\n", -1);
  put (f->w, "gone.txt", "base\n", -1);
  put (f->w, "calm/old.txt", "base\n", -1);
  stage = start_stage (f, stage_dir);

  put (upper, "both.txt", "ours\n", -1);
  put (upper, "ours-only.txt", "ours\n", -1);
  put (upper, "gone.txt", "ours\n", -1);
  put (upper, "calm/new.txt", "ours\n", -1);
  overwrite (f->w, "both.txt", "theirs, longer\n");
  g_assert_cmpint (unlink (P (f->w, "gone.txt")), ==, 0);

  /* The daemon goes before the walk. */
  paddock_stage_cancel_baseline (stage);
  g_clear_object (&stage);
  g_assert_false (g_file_test (P (stage_dir, "baseline"), G_FILE_TEST_EXISTS));

  stage = paddock_stage_new (stage_dir, f->w, PADDOCK_STAGE_KIND_OVERLAY);
  r = paddock_stage_review (stage, NULL, &error);
  g_assert_no_error (error);
  dump (r);
  g_assert_true (paddock_change_get_conflict (expect (r, "both.txt", PADDOCK_CHANGE_KIND_MODIFIED,
                                                      PADDOCK_ENTRY_TYPE_FILE)));
  g_assert_true (paddock_change_get_conflict (expect (r, "gone.txt", PADDOCK_CHANGE_KIND_ADDED,
                                                      PADDOCK_ENTRY_TYPE_FILE)));
  g_assert_false (paddock_change_get_conflict (expect (r, "ours-only.txt", PADDOCK_CHANGE_KIND_MODIFIED,
                                                       PADDOCK_ENTRY_TYPE_FILE)));
  g_assert_false (paddock_change_get_conflict (expect (r, "calm/new.txt", PADDOCK_CHANGE_KIND_ADDED,
                                                       PADDOCK_ENTRY_TYPE_FILE)));
  g_assert_true (g_file_test (P (stage_dir, "baseline"), G_FILE_TEST_IS_REGULAR));
  g_clear_object (&r);
  g_clear_object (&stage);

  /* Neither the baseline nor the moment it stands for: all conflicts. */
  g_assert_cmpint (unlink (P (stage_dir, "baseline")), ==, 0);
  g_assert_cmpint (unlink (P (stage_dir, "baseline-since")), ==, 0);
  stage = paddock_stage_new (stage_dir, f->w, PADDOCK_STAGE_KIND_OVERLAY);
  r = paddock_stage_review (stage, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_review_get_changes (r)->len, ==, 4);
  for (guint i = 0; i < paddock_review_get_changes (r)->len; i++)
    g_assert_true (paddock_change_get_conflict (g_ptr_array_index (paddock_review_get_changes (r), i)));
}

/* A folder the walk may not read (another user's) does not cost the whole
 * baseline: what is below it is "unknown" (a conflict wherever the session
 * writes there), the rest as it was. Root reads every folder, so only the
 * unprivileged run sees the unreadable one. */
static void
test_baseline_unreadable (Fixture       *f,
                          gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockBaseline) baseline = NULL;
  const char *file = P (f->state, "baseline");
  PaddockFileStamp stamp;

  put (f->w, "free.txt", "base\n", -1);
  put (f->w, "locked/inside.txt", "base\n", -1);
  put (f->w, "unsearchable/inside.txt", "base\n", -1);
  g_assert_cmpint (chmod (P (f->w, "locked"), 0000), ==, 0);
  g_assert_cmpint (chmod (P (f->w, "unsearchable"), 0400), ==, 0);
  settle_before_baseline ();
  paddock_baseline_record (f->w, file, NULL, &error);
  g_assert_cmpint (chmod (P (f->w, "locked"), 0755), ==, 0);
  g_assert_cmpint (chmod (P (f->w, "unsearchable"), 0755), ==, 0);
  g_assert_no_error (error);
  baseline = paddock_baseline_load (file, &error);
  g_assert_no_error (error);

  g_assert_true (paddock_baseline_lookup (baseline, "free.txt", &stamp));
  g_assert_cmpint (stamp.ctime_ns, !=, G_MININT64);
  g_assert_false (paddock_baseline_lookup (baseline, "not-there.txt", &stamp));
  if (geteuid () == 0)
    {
      g_test_message ("root reads every folder: the unreadable case is checked unprivileged");
      return;
    }
  g_assert_true (paddock_baseline_lookup (baseline, "locked/inside.txt", &stamp));
  g_assert_cmpint (stamp.ctime_ns, ==, G_MININT64);
  g_assert_true (paddock_baseline_lookup (baseline, "locked/new.txt", &stamp));
  g_assert_cmpint (stamp.ctime_ns, ==, G_MININT64);
  g_assert_true (paddock_baseline_lookup (baseline, "unsearchable/inside.txt", &stamp));
  g_assert_cmpint (stamp.ctime_ns, ==, G_MININT64);
}

/* A session that goes before its baseline was walked: the waiting walk
 * gives up at once (else this waits an hour: the test times out) and
 * writes nothing. A session started again replaces a walk still waiting
 * with its own. */
static void
test_stage_baseline_cancel (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockStage) stage = NULL;
  g_autoptr(PaddockReview) r = NULL;
  const char *stage_dir = P (f->state, "stage");

  put (f->w, "a.txt", "a\n", -1);
  stage = start_stage (f, stage_dir);
  paddock_stage_cancel_baseline (stage);
  g_assert_false (g_file_test (P (stage_dir, "baseline"), G_FILE_TEST_EXISTS));

  paddock_stage_record_baseline_in_thread (stage, WALK_IN_AN_HOUR_MS);
  paddock_stage_record_baseline_in_thread (stage, 0);
  r = paddock_stage_review (stage, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_review_get_changes (r)->len, ==, 0);
  g_assert_true (g_file_test (P (stage_dir, "baseline"), G_FILE_TEST_IS_REGULAR));
}

/* --- a real overlay ------------------------------------------------- */

static void
test_real_overlay (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(PaddockReview) r = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *work = g_build_filename (f->root, "work", NULL);
  g_autofree char *merged = g_build_filename (f->root, "merged", NULL);
  g_autofree char *orig = numbered_lines (20, "", 0, 0);
  g_autofree char *script = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status = 0;
  PaddockChange *c;
  const char *edits =
    "set -e; cd \"$3\";"
    "printf 'one\\nTWO\\n' > edit.txt;"
    "printf 'hello\\n' > new.txt;"
    "rm gone.txt;"
    "mv moved.txt moved-here.txt;"
    "cp -a folder folder2 && rm -r folder;"
    "chmod +x run.sh;"
    "touch same.txt;"
    "ln -s /etc/passwd outside;"
    "mkdir emptydir";

  g_assert_cmpint (g_mkdir (work, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (merged, 0755), ==, 0);
  put (f->w, "edit.txt", "one\ntwo\n", -1);
  put (f->w, "gone.txt", "bye\n", -1);
  put (f->w, "moved.txt", orig, -1);
  put (f->w, "folder/a.txt", "folder a\n", -1);
  put (f->w, "folder/b.txt", orig, -1);
  put (f->w, "run.sh", "#!/bin/sh\n", -1);
  put (f->w, "same.txt", "same\n", -1);

  script = g_strdup_printf ("mount -t overlay overlay -o lowerdir=\"$1\",upperdir=\"$2\",workdir=\"$4\",userxattr \"$3\" && %s",
                            edits);
  {
    const char *argv[] = { "unshare", "-Urm", "sh", "-c", script, "sh",
                           f->w, f->upper, merged, work, NULL };

    if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                       &out, &err, &status, &error) ||
        !g_spawn_check_wait_status (status, NULL))
      {
        g_autofree char *why = g_strdup_printf ("no rootless overlayfs here: %s",
                                                error != NULL ? error->message : err);
        g_test_skip (why);
        return;
      }
  }

  r = review (f, PADDOCK_STAGE_KIND_OVERLAY, NULL);
  dump (r);
  expect (r, "edit.txt", PADDOCK_CHANGE_KIND_MODIFIED, PADDOCK_ENTRY_TYPE_FILE);
  expect (r, "new.txt", PADDOCK_CHANGE_KIND_ADDED, PADDOCK_ENTRY_TYPE_FILE);
  expect (r, "gone.txt", PADDOCK_CHANGE_KIND_DELETED, PADDOCK_ENTRY_TYPE_NONE);
  c = expect (r, "moved-here.txt", PADDOCK_CHANGE_KIND_RENAMED, PADDOCK_ENTRY_TYPE_FILE);
  g_assert_cmpstr (paddock_change_get_old_path (c), ==, "moved.txt");
  /* A folder renamed by copy + delete: one renamed row per file, and the
   * old folder's own row. */
  c = expect (r, "folder2/a.txt", PADDOCK_CHANGE_KIND_RENAMED, PADDOCK_ENTRY_TYPE_FILE);
  g_assert_cmpstr (paddock_change_get_old_path (c), ==, "folder/a.txt");
  c = expect (r, "folder2/b.txt", PADDOCK_CHANGE_KIND_RENAMED, PADDOCK_ENTRY_TYPE_FILE);
  g_assert_cmpstr (paddock_change_get_old_path (c), ==, "folder/b.txt");
  expect (r, "folder", PADDOCK_CHANGE_KIND_DELETED, PADDOCK_ENTRY_TYPE_DIRECTORY);
  expect (r, "run.sh", PADDOCK_CHANGE_KIND_MODE_CHANGED, PADDOCK_ENTRY_TYPE_FILE);
  expect (r, "outside", PADDOCK_CHANGE_KIND_ADDED, PADDOCK_ENTRY_TYPE_SYMLINK);
  expect (r, "emptydir", PADDOCK_CHANGE_KIND_ADDED, PADDOCK_ENTRY_TYPE_DIRECTORY);
  g_assert_null (find (r, "same.txt"));
  g_assert_cmpuint (paddock_review_get_changes (r)->len, ==, 10);
}


/* Makes @depth folders of 200-byte names under @dir, fd by fd (the whole
 * path is longer than PATH_MAX), and a file in the last; returns the
 * relative path of that file. */
static char *
put_deep (const char *dir,
          guint       depth)
{
  g_autofree char *component = g_strnfill (200, 'd');
  GString *rel = g_string_new (NULL);
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  g_assert_cmpint (fd, >=, 0);
  for (guint i = 0; i < depth; i++)
    {
      int next;

      g_assert_cmpint (mkdirat (fd, component, 0755), ==, 0);
      next = openat (fd, component, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      g_assert_cmpint (next, >=, 0);
      close (fd);
      fd = next;
      g_string_append_printf (rel, "%s/", component);
    }
  {
    int file = openat (fd, "deep.txt", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

    g_assert_cmpint (file, >=, 0);
    g_assert_cmpint (write (file, "deep\n", 5), ==, 5);
    close (file);
  }
  close (fd);
  g_string_append (rel, "deep.txt");
  return g_string_free (rel, FALSE);
}

/* One path longer than PATH_MAX is listed as unappliable; the rest of the
 * session reviews as usual. */
static void
test_path_too_long (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(PaddockReview) r = NULL;
  g_autofree char *deep = NULL;
  PaddockChange *c;

  put (f->w, "keep.txt", "keep\n", -1);
  put (f->upper, "ok.txt", "fine\n", -1);
  deep = put_deep (f->upper, 25);
  g_assert_cmpuint (strlen (deep), >, 4096);

  r = review (f, PADDOCK_STAGE_KIND_OVERLAY, NULL);
  expect (r, "ok.txt", PADDOCK_CHANGE_KIND_ADDED, PADDOCK_ENTRY_TYPE_FILE);
  c = find (r, deep);
  g_assert_nonnull (c);
  g_assert_nonnull (paddock_change_get_unappliable (c));
}


/* Makes @depth nested folders named "d" under @dir, fd by fd, and a file
 * in the last; returns the relative path of the folder at @keep levels. */
static char *
put_nested (const char *dir,
            guint       depth,
            guint       keep)
{
  GString *rel = g_string_new (NULL);
  char *kept = NULL;
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  g_assert_cmpint (fd, >=, 0);
  for (guint i = 0; i < depth; i++)
    {
      int next;

      g_assert_cmpint (mkdirat (fd, "d", 0755), ==, 0);
      next = openat (fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      g_assert_cmpint (next, >=, 0);
      close (fd);
      fd = next;
      g_string_append (rel, i == 0 ? "d" : "/d");
      if (i + 1 == keep)
        kept = g_strdup (rel->str);
    }
  {
    int file = openat (fd, "bottom.txt", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

    g_assert_cmpint (file, >=, 0);
    close (file);
  }
  close (fd);
  g_string_free (rel, TRUE);
  return kept;
}

/* An agent's tree 3,000 folders deep (one byte names): the review lists
 * it down to PATH_MAX / 2 levels (nothing deeper could be applied) and
 * neither walk runs out of stack or folders; the copy's walk overflowed
 * a worker thread's stack at 1,920 levels. Both kinds, each in a thread
 * with a 2 MiB stack, less than the daemon's workers have. */
typedef struct {
  Fixture          *f;
  PaddockStageKind  kind;
  PaddockReview    *review;
  GError           *error;
} DeepReview;

static gpointer
deep_review_thread (gpointer data)
{
  DeepReview *d = data;

  d->review = paddock_review_new (d->f->w, d->f->upper, d->kind, NULL, NULL, NULL, NULL, &d->error);
  return NULL;
}

static void
test_tree_deeper_than_path_max (Fixture       *f,
                                gconstpointer  data)
{
  const PaddockStageKind kinds[] = { PADDOCK_STAGE_KIND_OVERLAY, PADDOCK_STAGE_KIND_COPY };
  g_autofree char *last = NULL;
  g_autofree char *beyond = NULL;

  /* An empty workspace: the same stage reads as an overlay's upper layer
   * and as a copy. */
  put (f->upper, "ok.txt", "fine\n", -1);
  last = put_nested (f->upper, 3000, PATH_MAX / 2);
  beyond = g_strconcat (last, "/d", NULL);

  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      DeepReview d = { f, kinds[i], NULL, NULL };
      pthread_attr_t attr;
      pthread_t id;
      g_autoptr(PaddockReview) r = NULL;
      PaddockChange *c;

      g_assert_cmpint (pthread_attr_init (&attr), ==, 0);
      g_assert_cmpint (pthread_attr_setstacksize (&attr, 2 * 1024 * 1024), ==, 0);
      g_assert_cmpint (pthread_create (&id, &attr, deep_review_thread, &d), ==, 0);
      g_assert_cmpint (pthread_join (id, NULL), ==, 0);
      pthread_attr_destroy (&attr);
      g_assert_no_error (d.error);
      r = d.review;

      expect (r, "ok.txt", PADDOCK_CHANGE_KIND_ADDED, PADDOCK_ENTRY_TYPE_FILE);
      c = find (r, last);
      g_assert_nonnull (c);
      g_assert_null (find (r, beyond));
    }
}

/* Makes (or follows) @levels nested folders of 200-byte names under
 * @dir, fd by fd, and writes @contents into "f.txt" in the last; returns
 * the file's relative path (longer than PATH_MAX for 21 levels). */
static char *
put_long (const char *dir,
          guint       levels,
          const char *contents)
{
  g_autofree char *name = g_strnfill (200, 'n');
  GString *rel = g_string_new (NULL);
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int file;

  g_assert_cmpint (fd, >=, 0);
  for (guint i = 0; i < levels; i++)
    {
      int next;

      g_assert_true (mkdirat (fd, name, 0755) == 0 || errno == EEXIST);
      next = openat (fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      g_assert_cmpint (next, >=, 0);
      close (fd);
      fd = next;
      g_string_append (rel, name);
      g_string_append_c (rel, '/');
    }
  file = openat (fd, "f.txt", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  g_assert_cmpint (file, >=, 0);
  g_assert_cmpint (write (file, contents, strlen (contents)), ==, (gssize) strlen (contents));
  close (file);
  close (fd);
  g_string_append (rel, "f.txt");
  return g_string_free (rel, FALSE);
}

/* The "f.txt" put_long() made under @dir, read fd by fd. */
static char *
read_long (const char *dir,
           guint       levels)
{
  g_autofree char *name = g_strnfill (200, 'n');
  char buffer[256] = { 0 };
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int file;

  for (guint i = 0; fd >= 0 && i < levels; i++)
    {
      int next = openat (fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

      close (fd);
      fd = next;
    }
  g_assert_cmpint (fd, >=, 0);
  file = openat (fd, "f.txt", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  close (fd);
  g_assert_cmpint (file, >=, 0);
  g_assert_cmpint (read (file, buffer, sizeof buffer - 1), >=, 0);
  close (file);
  return g_strdup (buffer);
}

/* A row longer than PATH_MAX (an agent's tree) cannot be applied, but it
 * can be dropped: the drop walks folder by folder, never by the whole
 * path, and the row is gone from the next review (before, the drop was
 * refused as if it were an apply, and its path-based walk could not have
 * done it). Both kinds; for a copy, the
 * dropped file's stamps are the workspace's copy's, so it stays unlisted. */
static void
test_drop_long_names_and_paths (Fixture       *f,
                         gconstpointer  data)
{
  const PaddockStageKind kinds[] = { PADDOCK_STAGE_KIND_OVERLAY, PADDOCK_STAGE_KIND_COPY };
  g_autofree char *rel = put_long (f->w, 21, "the workspace's\n");

  g_autofree char *long_name = g_strnfill (245, 'L');

  g_assert_cmpuint (strlen (rel), >, PATH_MAX);
  put (f->w, "short.txt", "short\n", -1);
  put (f->w, long_name, "a long name\n", -1);
  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      g_autofree char *stage_dir = g_build_filename (f->state, i == 0 ? "overlay-stage" : "copy-stage", NULL);
      g_autofree char *root = g_build_filename (stage_dir, i == 0 ? "upper" : "copy", NULL);
      /* A name of 245 bytes too: the drop's temporary beside it was
       * ".paddock-drop-" and the name, longer than NAME_MAX. */
      const char *const drop[] = { rel, long_name, NULL };
      g_autoptr(PaddockStage) stage = paddock_stage_new (stage_dir, f->w, kinds[i]);
      g_autoptr(PaddockReview) r = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *again = NULL;
      PaddockChange *c;

      g_assert_true (paddock_stage_prepare (stage, NULL, &error));
      g_assert_no_error (error);
      g_free (put_long (root, 21, "the agent's\n"));
      put (root, "short.txt", "the agent's short\n", -1);
      put (root, long_name, "the agent's long name\n", -1);

      r = paddock_stage_review (stage, NULL, &error);
      g_assert_no_error (error);
      c = find (r, rel);
      g_assert_nonnull (c);
      g_assert_cmpint (paddock_change_get_kind (c), ==, PADDOCK_CHANGE_KIND_MODIFIED);
      g_assert_nonnull (paddock_change_get_unappliable (c));
      g_clear_object (&r);

      g_assert_true (paddock_stage_drop (stage, drop, NULL, &error));
      g_assert_no_error (error);
      r = paddock_stage_review (stage, NULL, &error);
      g_assert_no_error (error);
      dump (r);
      g_assert_null (find (r, rel));
      g_assert_null (find (r, long_name));
      expect (r, "short.txt", PADDOCK_CHANGE_KIND_MODIFIED, PADDOCK_ENTRY_TYPE_FILE);
      g_assert_cmpuint (paddock_review_get_changes (r)->len, ==, 1);
      /* The stage holds the workspace's file again (read fd by fd). */
      again = read_long (root, 21);
      g_assert_cmpstr (again, ==, "the workspace's\n");
    }
}

static void
put_sparse_file (const char *dir,
                 const char *rel,
                 goffset     size,
                 const char *tail)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (ftruncate (fd, size), ==, 0);
  if (tail != NULL)
    g_assert_cmpint (pwrite (fd, tail, strlen (tail), size - (goffset) strlen (tail)), ==,
                     (gssize) strlen (tail));
  close (fd);
}

/* A terabyte of apparent size that allocates nothing costs what it
 * allocates: the review compares it by its data extents (it would read
 * 1 TiB of zeros otherwise, for hours), shows it as binary with its size,
 * and tells a changed one (same apparent size, other tail) from the
 * workspace's. The rows also carry size, allocated and hard links. */
static void
test_sparse_terabyte (Fixture       *f,
                      gconstpointer  data)
{
  const goffset tib = G_GINT64_CONSTANT (1) << 40;
  g_autoptr(PaddockReview) r = NULL;
  g_autofree char *h1 = NULL, *h2 = NULL;
  gint64 start;
  PaddockChange *c;
  struct stat st;

  put (f->w, "keep.txt", "keep\n", -1);
  {
    g_autofree char *probe = g_build_filename (f->upper, "probe", NULL);
    int fd = open (probe, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

    g_assert_cmpint (fd, >=, 0);
    if (ftruncate (fd, tib) != 0)
      {
        close (fd);
        g_test_skip ("the test folder's file system has no room for a 1 TiB sparse file");
        return;
      }
    close (fd);
    g_assert_cmpint (unlink (probe), ==, 0);
  }
  put_sparse_file (f->upper, "huge.bin", tib, NULL);
  put_sparse_file (f->w, "both.bin", tib, "old");
  put_sparse_file (f->upper, "both.bin", tib, "new");
  put (f->upper, "h1", "linked\n", -1);
  h1 = g_build_filename (f->upper, "h1", NULL);
  h2 = g_build_filename (f->upper, "h2", NULL);
  g_assert_cmpint (link (h1, h2), ==, 0);

  start = g_get_monotonic_time ();
  r = review (f, PADDOCK_STAGE_KIND_OVERLAY, NULL);
  /* Generous for a loaded machine; reading the holes takes many minutes. */
  g_assert_cmpint (g_get_monotonic_time () - start, <, 30 * G_USEC_PER_SEC);

  c = find (r, "huge.bin");
  g_assert_nonnull (c);
  g_assert_true (paddock_change_get_binary (c));
  g_assert_cmpuint (paddock_change_get_size (c), ==, (guint64) tib);
  g_assert_cmpuint (paddock_change_get_allocated (c), <, 1024 * 1024);
  c = find (r, "both.bin");
  g_assert_nonnull (c);
  g_assert_cmpint (paddock_change_get_kind (c), ==, PADDOCK_CHANGE_KIND_MODIFIED);
  c = find (r, "h2");
  g_assert_nonnull (c);
  g_assert_cmpstr (paddock_change_get_hardlink_of (c), ==, "h1");
  g_assert_null (paddock_change_get_hardlink_of (find (r, "h1")));
  g_assert_cmpint (lstat (h1, &st), ==, 0);
  g_assert_cmpuint (paddock_change_get_size (find (r, "h1")), ==, (guint64) st.st_size);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(name, fn) g_test_add (name, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/staging/review/synth-edits", test_synth_edits);
  ADD ("/staging/review/diff-content", test_diff_content);
  ADD ("/staging/review/synth-dirs", test_synth_dirs);
  ADD ("/staging/review/huge", test_huge);
  ADD ("/staging/review/diff-too-large", test_diff_too_large);
  ADD ("/staging/review/conflict", test_conflict);
  ADD ("/staging/review/cache-and-exact-renames", test_cache_and_exact_renames);
  ADD ("/staging/review/copy-mode", test_copy_mode);
  ADD ("/staging/review/copy-mode-user-edits", test_copy_mode_user_edits);
  ADD ("/staging/review/copy-stage-drop", test_copy_stage_drop);
  ADD ("/staging/review/copy-stage-checkpoint", test_copy_stage_checkpoint);
  ADD ("/staging/review/real-overlay", test_real_overlay);
  ADD ("/staging/stage/baseline-later", test_stage_baseline_later);
  ADD ("/staging/stage/baseline-cancel", test_stage_baseline_cancel);
  ADD ("/staging/stage/baseline-deleted", test_stage_baseline_deleted);
  ADD ("/staging/stage/baseline-version-1", test_stage_baseline_version_1);
  ADD ("/staging/stage/baseline-restored", test_stage_baseline_restored);
  ADD ("/staging/baseline/basic", test_baseline_basic);
  ADD ("/staging/baseline/corrupt", test_baseline_corrupt);
  ADD ("/staging/baseline/version", test_baseline_version);
  ADD ("/staging/baseline/unreadable", test_baseline_unreadable);
  ADD ("/staging/baseline/100k", test_baseline_100k);
  ADD ("/staging/review/path-too-long", test_path_too_long);
  ADD ("/staging/review/tree-deeper-than-path-max", test_tree_deeper_than_path_max);
  ADD ("/staging/review/drop-long-names-and-paths", test_drop_long_names_and_paths);
  ADD ("/staging/review/sparse-terabyte", test_sparse_terabyte);
#undef ADD

  return g_test_run ();
}
