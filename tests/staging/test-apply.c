/* test-apply.c — the journaled apply: trees, conflicts, crashes at every step, full disks
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-apply.h"
#include "paddock-apply-restored.h"
#include "paddock-durable-file.h"

#define ODD_NONUTF8 "\xff\xfe.bin"

typedef struct {
  char *tmp;
  char *w;
  char *stage;
  char *journal;
  char *ledger;
  char *outside;
  char *expected;
} Fixture;

/* ---- helpers ----------------------------------------------------------- */

static char *
at (const char *root,
    const char *rel)
{
  return g_build_filename (root, rel, NULL);
}

static void
put_dir (const char *root,
         const char *rel,
         int         mode)
{
  g_autofree char *path = at (root, rel);

  g_assert_cmpint (g_mkdir_with_parents (path, 0755), ==, 0);
  g_assert_cmpint (chmod (path, mode), ==, 0);
}

static void
put_file (const char *root,
          const char *rel,
          const char *content,
          int         mode)
{
  g_autofree char *path = at (root, rel);
  g_autofree char *parent = g_path_get_dirname (path);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
  g_file_set_contents (path, content, -1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (chmod (path, mode), ==, 0);
}

static void
put_link (const char *root,
          const char *rel,
          const char *target)
{
  g_autofree char *path = at (root, rel);
  g_autofree char *parent = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
  g_assert_cmpint (symlink (target, path), ==, 0);
}

static char *
read_file (const char *root,
           const char *rel)
{
  g_autofree char *path = at (root, rel);
  char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return NULL;
  return contents;
}

static void
stamp_of (const char       *root,
          const char       *rel,
          PaddockFileStamp *stamp)
{
  g_autofree char *path = at (root, rel);
  struct stat st;

  memset (stamp, 0, sizeof *stamp);
  if (lstat (path, &st) == 0)
    paddock_file_stamp_from_stat (stamp, &st);
}

static int
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* Names, types, modes, contents and link texts of everything under @dir. */
static void
snapshot_into (GString    *out,
               const char *root,
               const char *rel)
{
  g_autofree char *dir_path = rel[0] ? at (root, rel) : g_strdup (root);
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_strings);

  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *child = rel[0] ? g_strconcat (rel, "/", names->pdata[i], NULL)
                                      : g_strdup (names->pdata[i]);
      g_autofree char *path = at (root, child);
      g_autofree char *escaped = g_strescape (child, NULL);
      struct stat st;

      g_assert_cmpint (lstat (path, &st), ==, 0);
      g_string_append_printf (out, "%s %o", escaped, (guint) st.st_mode);
      if (S_ISREG (st.st_mode))
        {
          g_autofree char *contents = NULL;
          gsize len = 0;
          g_autofree char *sum = NULL;

          g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
          sum = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) contents, len);
          g_string_append_printf (out, " %" G_GSIZE_FORMAT " %s\n", len, sum);
        }
      else if (S_ISLNK (st.st_mode))
        {
          g_autofree char *target = g_file_read_link (path, NULL);
          g_autofree char *esc = g_strescape (target, NULL);

          g_string_append_printf (out, " -> %s\n", esc);
        }
      else
        {
          g_string_append_c (out, '\n');
          if (S_ISDIR (st.st_mode))
            snapshot_into (out, root, child);
        }
    }
}

static char *
snapshot (const char *root)
{
  GString *out = g_string_new (NULL);

  snapshot_into (out, root, "");
  return g_string_free (out, FALSE);
}

static gboolean
has_leftovers (const char *root)
{
  g_autofree char *snap = snapshot (root);

  return strstr (snap, ".paddock-apply-") != NULL;
}

static guint
count_lines (const char *path)
{
  g_autofree char *contents = NULL;
  guint n = 0;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return 0;
  for (const char *c = contents; *c; c++)
    if (*c == '\n')
      n++;
  return n;
}

/* Lines of the ledger holding @needle: committed batches have "items",
 * recoveries "recovery". */
static guint
count_matching (const char *path,
                const char *needle)
{
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  guint n = 0;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return 0;
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (strstr (lines[i], needle) != NULL)
      n++;
  return n;
}

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  f->tmp = g_dir_make_tmp ("paddock-apply-XXXXXX", &error);
  g_assert_no_error (error);
  f->w = at (f->tmp, "w");
  f->stage = at (f->tmp, "stage");
  f->journal = at (f->tmp, "journal");
  f->ledger = at (f->tmp, "ledger.jsonl");
  f->outside = at (f->tmp, "outside");
  f->expected = at (f->tmp, "expected");
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  paddock_remove_tree (f->tmp);
  g_free (f->tmp);
  g_free (f->w);
  g_free (f->stage);
  g_free (f->journal);
  g_free (f->ledger);
  g_free (f->outside);
  g_free (f->expected);
}

/* ---- the scenario ------------------------------------------------------ */

static void
build_old (const char *w)
{
  put_dir (w, "", 0755);
  put_file (w, "a.txt", "alpha\n", 0644);
  put_file (w, "keep.txt", "keep\n", 0644);
  put_file (w, "dir/b.txt", "bravo\n", 0644);
  put_file (w, "dir/sub/c.txt", "charlie\n", 0600);
  put_file (w, "old-name.txt", "rename me\n", 0644);
  put_link (w, "link", "a.txt");
  put_file (w, "gone/x.txt", "x\n", 0644);
  put_file (w, "exec.sh", "#!/bin/sh\n", 0755);
  put_file (w, "was-file", "file\n", 0644);
  put_dir (w, "was-dir", 0755);
}

/* What W must look like after the whole batch. */
static void
build_new (const char *w)
{
  put_dir (w, "", 0755);
  put_file (w, "a.txt", "alpha v2\n", 0600);
  put_file (w, "keep.txt", "keep\n", 0644);
  put_file (w, "dir/b.txt", "bravo v2\n", 0644);
  put_file (w, "dir/sub/c.txt", "charlie\n", 0600);
  put_file (w, "new-name.txt", "rename me\n", 0644);
  put_link (w, "link", "dir/b.txt");
  put_link (w, "newlink", "../outside/target");
  put_file (w, "new/deep/d.txt", "delta\n", 0644);
  put_dir (w, "new/deep", 0755);
  put_dir (w, "new", 0750);
  put_file (w, "exec.sh", "#!/bin/sh\necho\n", 0755);
  put_file (w, "was-file/inner.txt", "inner\n", 0644);
  put_dir (w, "was-file", 0700);
  put_file (w, "was-dir", "now a file\n", 0644);
  put_file (w, "sp ace.txt", "space\n", 0644);
  put_file (w, "new\nline", "newline\n", 0644);
  put_file (w, "-dash", "dash\n", 0644);
  put_file (w, ODD_NONUTF8, "bytes\n", 0644);
}

/* The stage holds the changed entries only (as an overlay upper dir). */
static void
build_stage (const char *s)
{
  put_dir (s, "", 0755);
  put_file (s, "a.txt", "alpha v2\n", 0600);
  put_file (s, "dir/b.txt", "bravo v2\n", 0644);
  put_file (s, "new-name.txt", "rename me\n", 0644);
  put_link (s, "link", "dir/b.txt");
  put_link (s, "newlink", "../outside/target");
  put_file (s, "new/deep/d.txt", "delta\n", 0644);
  put_dir (s, "new", 0750);
  /* setuid in the stage must not reach the workspace. */
  put_file (s, "exec.sh", "#!/bin/sh\necho\n", 04755);
  put_file (s, "was-file/inner.txt", "inner\n", 0644);
  put_dir (s, "was-file", 0700);
  put_file (s, "was-dir", "now a file\n", 0644);
  put_file (s, "sp ace.txt", "space\n", 0644);
  put_file (s, "new\nline", "newline\n", 0644);
  put_file (s, "-dash", "dash\n", 0644);
  put_file (s, ODD_NONUTF8, "bytes\n", 0644);
}

typedef struct {
  const char         *path;
  PaddockApplyAction  action;
  guint               group;
} ItemSpec;

static const ItemSpec all_items[] = {
  { "a.txt", PADDOCK_APPLY_PUT, 0 },
  { "dir/b.txt", PADDOCK_APPLY_PUT, 0 },
  { "old-name.txt", PADDOCK_APPLY_REMOVE, 1 },
  { "new-name.txt", PADDOCK_APPLY_PUT, 1 },
  { "link", PADDOCK_APPLY_PUT, 0 },
  { "newlink", PADDOCK_APPLY_PUT, 0 },
  { "new", PADDOCK_APPLY_PUT, 0 },
  { "new/deep/d.txt", PADDOCK_APPLY_PUT, 0 },
  { "exec.sh", PADDOCK_APPLY_PUT, 0 },
  { "gone/x.txt", PADDOCK_APPLY_REMOVE, 0 },
  { "gone", PADDOCK_APPLY_REMOVE, 0 },
  { "was-file", PADDOCK_APPLY_PUT, 0 },
  { "was-file/inner.txt", PADDOCK_APPLY_PUT, 0 },
  { "was-dir", PADDOCK_APPLY_PUT, 0 },
  { "sp ace.txt", PADDOCK_APPLY_PUT, 0 },
  { "new\nline", PADDOCK_APPLY_PUT, 0 },
  { "-dash", PADDOCK_APPLY_PUT, 0 },
  { ODD_NONUTF8, PADDOCK_APPLY_PUT, 0 },
};

/* Items with W's current stamps as baselines (the session start). Group 0
 * in a spec means "alone": the item gets a group of its own. */
static GPtrArray *
make_items (const char     *w,
            const ItemSpec *specs,
            gsize           n_specs,
            gboolean        forced)
{
  GPtrArray *items = g_ptr_array_new_with_free_func ((GDestroyNotify) paddock_apply_item_free);

  for (gsize i = 0; i < n_specs; i++)
    {
      PaddockFileStamp stamp;

      stamp_of (w, specs[i].path, &stamp);
      g_ptr_array_add (items, paddock_apply_item_new (specs[i].path, specs[i].action,
                                                      specs[i].group != 0 ? specs[i].group
                                                                          : 1000 + (guint) i,
                                                      forced, &stamp));
    }
  return items;
}

static gboolean
run_batch (Fixture             *f,
           GPtrArray           *items,
           PaddockApplyResult **result,
           GError             **error)
{
  return paddock_apply_batch (f->w, f->stage, f->journal, f->ledger, "test", items,
                              result, NULL, error);
}

static gboolean
journal_exists (Fixture *f)
{
  g_autofree char *path = at (f->journal, "apply-journal.json");

  return g_file_test (path, G_FILE_TEST_EXISTS);
}

static gboolean
result_has (GPtrArray  *paths,
            const char *path)
{
  for (guint i = 0; i < paths->len; i++)
    if (strcmp (g_ptr_array_index (paths, i), path) == 0)
      return TRUE;
  return FALSE;
}

/* ---- tests ------------------------------------------------------------- */

static void
test_full_apply (Fixture       *f,
                 gconstpointer  data)
{
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *got = NULL;
  g_autofree char *want = NULL;
  g_autofree char *ledger = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree char *alpha_old = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "alpha\n", -1);
  g_autofree char *alpha_new = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "alpha v2\n", -1);
  JsonArray *ledger_items;
  gboolean found = FALSE;

  build_old (f->w);
  build_stage (f->stage);
  build_new (f->expected);
  items = make_items (f->w, all_items, G_N_ELEMENTS (all_items), FALSE);

  g_assert_true (run_batch (f, items, &result, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (result->applied->len, ==, G_N_ELEMENTS (all_items));
  g_assert_cmpuint (result->new_stamps->len, ==, result->applied->len);
  g_assert_cmpuint (result->conflicts->len, ==, 0);

  got = snapshot (f->w);
  want = snapshot (f->expected);
  g_assert_cmpstr (got, ==, want);
  g_assert_false (has_leftovers (f->w));
  g_assert_false (journal_exists (f));

  /* The returned stamps are W's entries now. */
  for (guint i = 0; i < result->applied->len; i++)
    {
      PaddockFileStamp now;

      stamp_of (f->w, g_ptr_array_index (result->applied, i), &now);
      g_assert_true (paddock_file_stamp_equal (&now, g_ptr_array_index (result->new_stamps, i)));
    }

  /* One ledger line, with the hashes of old and new content. */
  g_assert_cmpuint (count_lines (f->ledger), ==, 1);
  g_assert_true (g_file_get_contents (f->ledger, &ledger, NULL, NULL));
  g_assert_true (json_parser_load_from_data (parser, ledger, -1, NULL));
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (json_parser_get_root (parser)), "batch"),
                   ==, result->batch_id);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (json_parser_get_root (parser)), "who"),
                   ==, "test");
  ledger_items = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "items");
  g_assert_cmpuint (json_array_get_length (ledger_items), ==, G_N_ELEMENTS (all_items));
  for (guint i = 0; i < json_array_get_length (ledger_items); i++)
    {
      JsonObject *item = json_array_get_object_element (ledger_items, i);

      if (g_strcmp0 (json_object_get_string_member_with_default (item, "path", NULL), "a.txt") != 0)
        continue;
      g_assert_cmpstr (json_object_get_string_member (item, "action"), ==, "put");
      g_assert_cmpstr (json_object_get_string_member (item, "old_sha256"), ==, alpha_old);
      g_assert_cmpstr (json_object_get_string_member (item, "new_sha256"), ==, alpha_new);
      found = TRUE;
    }
  g_assert_true (found);
  /* A path that is not UTF-8 is recorded byte for byte, in base64. */
  {
    g_autofree char *b64 = g_base64_encode ((const guchar *) ODD_NONUTF8, strlen (ODD_NONUTF8));
    g_autofree char *member = g_strdup_printf ("\"path_base64\":\"%s\"", b64);

    g_assert_nonnull (strstr (ledger, member));
  }

  /* A second batch, a second line. */
  {
    static const ItemSpec second[] = { { "keep.txt", PADDOCK_APPLY_REMOVE, 0 } };
    g_autoptr(GPtrArray) items2 = make_items (f->w, second, 1, FALSE);
    g_autoptr(PaddockApplyResult) result2 = NULL;

    g_assert_true (run_batch (f, items2, &result2, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (count_lines (f->ledger), ==, 2);
  }
}

static void
test_partial_apply (Fixture       *f,
                    gconstpointer  data)
{
  static const ItemSpec some[] = {
    { "a.txt", PADDOCK_APPLY_PUT, 0 },
    { "new/deep/d.txt", PADDOCK_APPLY_PUT, 0 },
  };
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *a = NULL;
  g_autofree char *b = NULL;
  g_autofree char *d = NULL;
  g_autofree char *new_dir = at (f->w, "new");
  g_autofree char *gone = at (f->w, "gone/x.txt");
  g_autofree char *old_name = at (f->w, "old-name.txt");
  struct stat st;

  build_old (f->w);
  build_stage (f->stage);
  items = make_items (f->w, some, G_N_ELEMENTS (some), FALSE);

  g_assert_true (run_batch (f, items, &result, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (result->applied->len, ==, 2);

  a = read_file (f->w, "a.txt");
  b = read_file (f->w, "dir/b.txt");
  d = read_file (f->w, "new/deep/d.txt");
  g_assert_cmpstr (a, ==, "alpha v2\n");
  g_assert_cmpstr (b, ==, "bravo\n");
  g_assert_cmpstr (d, ==, "delta\n");
  /* The missing parent took the stage folder's mode. */
  g_assert_cmpint (stat (new_dir, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 07777, ==, 0750);
  g_assert_true (g_file_test (gone, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (old_name, G_FILE_TEST_EXISTS));
  g_assert_false (has_leftovers (f->w));
}

static void
test_conflict (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *a = NULL;
  g_autofree char *b = NULL;
  g_autofree char *new_name = at (f->w, "new-name.txt");
  g_autofree char *old_name = at (f->w, "old-name.txt");

  build_old (f->w);
  build_stage (f->stage);
  items = make_items (f->w, all_items, G_N_ELEMENTS (all_items), FALSE);

  /* The user edits W after the session started. */
  put_file (f->w, "a.txt", "user edit, longer\n", 0644);
  put_file (f->w, "old-name.txt", "user edit of the renamed file\n", 0644);

  g_assert_true (run_batch (f, items, &result, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (result->conflicts->len, ==, 2);
  g_assert_true (result_has (result->conflicts, "a.txt"));
  g_assert_true (result_has (result->conflicts, "old-name.txt"));
  g_assert_false (result_has (result->applied, "a.txt"));
  /* The rename's other side is skipped with it. */
  g_assert_false (result_has (result->applied, "new-name.txt"));
  g_assert_false (g_file_test (new_name, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (old_name, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (result->applied->len, ==, G_N_ELEMENTS (all_items) - 3);

  a = read_file (f->w, "a.txt");
  b = read_file (f->w, "dir/b.txt");
  g_assert_cmpstr (a, ==, "user edit, longer\n");
  g_assert_cmpstr (b, ==, "bravo v2\n");
  g_assert_false (has_leftovers (f->w));
}

/* The conflicting side of a group listed after its mate; a folder PUT in
 * conflict takes the PUTs beneath it along. */
static void
test_conflict_cascades (Fixture       *f,
                        gconstpointer  data)
{
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *old_name = at (f->w, "old-name.txt");
  g_autofree char *user_new = NULL;
  g_autofree char *b = NULL;

  build_old (f->w);
  build_stage (f->stage);
  items = make_items (f->w, all_items, G_N_ELEMENTS (all_items), FALSE);
  put_file (f->w, "new-name.txt", "the user's own new-name\n", 0644);
  put_file (f->w, "new", "the user's file named new\n", 0644);

  g_assert_true (run_batch (f, items, &result, &error));
  g_assert_no_error (error);
  g_assert_true (result_has (result->conflicts, "new-name.txt"));
  g_assert_true (result_has (result->conflicts, "new"));
  g_assert_true (result_has (result->conflicts, "new/deep/d.txt"));
  g_assert_false (result_has (result->applied, "old-name.txt"));
  g_assert_true (g_file_test (old_name, G_FILE_TEST_EXISTS));
  user_new = read_file (f->w, "new");
  g_assert_cmpstr (user_new, ==, "the user's file named new\n");
  b = read_file (f->w, "dir/b.txt");
  g_assert_cmpstr (b, ==, "bravo v2\n");
  g_assert_false (has_leftovers (f->w));
}

/* Stops the batch just before its first rename (step 4 of a batch of one
 * item: journal, temp, journal, rename), runs @writer as a concurrent
 * writer, resumes it, and returns the batch's error code (or -1: success). */
static int
run_with_writer (Fixture    *f,
                 GPtrArray  *items,
                 void      (*writer) (Fixture *f))
{
  int status;
  pid_t pid = fork ();

  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      g_autoptr(PaddockApplyResult) result = NULL;
      g_autoptr(GError) error = NULL;

      g_setenv ("PADDOCK_FAULT_APPLY_STOP", "4", TRUE);
      if (run_batch (f, items, &result, &error))
        _exit (100);
      _exit (error->domain == PADDOCK_APPLY_ERROR ? error->code : 101);
    }
  g_assert_cmpint (waitpid (pid, &status, WUNTRACED), ==, pid);
  g_assert_true (WIFSTOPPED (status));
  writer (f);
  g_assert_cmpint (kill (pid, SIGCONT), ==, 0);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  return WEXITSTATUS (status) == 100 ? -1 : WEXITSTATUS (status);
}

static void
append_to_a (Fixture *f)
{
  g_autofree char *path = at (f->w, "a.txt");
  FILE *file = fopen (path, "a");

  /* In place: same inode, new size and mtime. */
  g_assert_nonnull (file);
  fputs ("user's late edit\n", file);
  fclose (file);
}

static void
create_fresh (Fixture *f)
{
  put_file (f->w, "fresh.txt", "the user's fresh file\n", 0644);
}

/* A writer between the conflict check and the rename: the batch is undone
 * with CONFLICT and the writer's version stays. */
static void
test_late_writer (Fixture       *f,
                  gconstpointer  data)
{
  static const ItemSpec put_a[] = { { "a.txt", PADDOCK_APPLY_PUT, 0 } };
  static const ItemSpec put_fresh[] = { { "fresh.txt", PADDOCK_APPLY_PUT, 0 } };
  g_autoptr(GPtrArray) items = NULL;
  g_autofree char *a = NULL;
  g_autofree char *fresh = NULL;

  build_old (f->w);
  build_stage (f->stage);
  put_file (f->stage, "fresh.txt", "the agent's fresh file\n", 0644);

  items = make_items (f->w, put_a, 1, FALSE);
  g_assert_cmpint (run_with_writer (f, items, append_to_a), ==, PADDOCK_APPLY_ERROR_CONFLICT);
  a = read_file (f->w, "a.txt");
  g_assert_cmpstr (a, ==, "alpha\nuser's late edit\n");
  g_assert_false (has_leftovers (f->w));
  g_assert_false (journal_exists (f));
  g_clear_pointer (&items, g_ptr_array_unref);

  items = make_items (f->w, put_fresh, 1, FALSE);
  g_assert_cmpint (run_with_writer (f, items, create_fresh), ==, PADDOCK_APPLY_ERROR_CONFLICT);
  fresh = read_file (f->w, "fresh.txt");
  g_assert_cmpstr (fresh, ==, "the user's fresh file\n");
  g_assert_false (has_leftovers (f->w));
  g_assert_false (journal_exists (f));
}

static void
test_forced_conflict (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *a = NULL;

  build_old (f->w);
  build_stage (f->stage);
  items = make_items (f->w, all_items, G_N_ELEMENTS (all_items), TRUE);
  put_file (f->w, "a.txt", "user edit, longer\n", 0644);

  g_assert_true (run_batch (f, items, &result, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (result->conflicts->len, ==, 0);
  a = read_file (f->w, "a.txt");
  g_assert_cmpstr (a, ==, "alpha v2\n");
}

/* Kill the batch at its N-th step for every N; after recovery W is the old
 * tree or the new one, whole, with no temps left and the ledger matching;
 * the recovery is in the ledger and in last-recovery.json; and applying
 * the same items again — with the baselines of before the crash, as the
 * session still has them — lands every change with no conflict. */
static void
test_crash_every_step (Fixture       *f,
                       gconstpointer  data)
{
  g_autofree char *old_tree = NULL;
  g_autofree char *new_tree = NULL;
  guint n_old = 0, n_new = 0;
  guint n;

  build_old (f->expected);
  old_tree = snapshot (f->expected);
  paddock_remove_tree (f->expected);
  build_new (f->expected);
  new_tree = snapshot (f->expected);

  for (n = 1; n < 1000; n++)
    {
      g_autoptr(GPtrArray) items = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *tree = NULL;
      gboolean done = FALSE;
      int status;
      pid_t pid;

      paddock_remove_tree (f->w);
      paddock_remove_tree (f->stage);
      paddock_remove_tree (f->journal);
      (void) g_unlink (f->ledger);
      build_old (f->w);
      build_stage (f->stage);
      items = make_items (f->w, all_items, G_N_ELEMENTS (all_items), FALSE);

      pid = fork ();
      g_assert_cmpint (pid, >=, 0);
      if (pid == 0)
        {
          g_autofree char *step = g_strdup_printf ("%u", n);
          g_autoptr(PaddockApplyResult) result = NULL;

          g_setenv ("PADDOCK_FAULT_APPLY_STEP", step, TRUE);
          _exit (run_batch (f, items, &result, NULL) ? 0 : 1);
        }
      g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);

      if (WIFEXITED (status))
        {
          /* Ran to the end without reaching step N: all steps covered. */
          g_assert_cmpint (WEXITSTATUS (status), ==, 0);
          tree = snapshot (f->w);
          g_assert_cmpstr (tree, ==, new_tree);
          break;
        }
      g_assert_true (WIFSIGNALED (status));
      g_assert_cmpint (WTERMSIG (status), ==, SIGKILL);

      g_assert_true (paddock_apply_recover (f->journal, f->w, &done, &error));
      g_assert_no_error (error);
      g_assert_false (journal_exists (f));
      g_assert_false (has_leftovers (f->w));

      tree = snapshot (f->w);
      if (g_strcmp0 (tree, old_tree) == 0)
        {
          g_autoptr(PaddockApplyResult) again = NULL;
          g_autofree char *again_tree = NULL;

          /* No journal was written yet at step 1: nothing to recover. */
          if (done)
            {
              g_autofree char *last = paddock_apply_dup_last_recovery (f->journal);

              g_assert_cmpuint (count_matching (f->ledger, "\"recovery\":\"rolled-back\""), ==, 1);
              g_assert_nonnull (last);
              g_assert_nonnull (strstr (last, "rolled-back"));
            }
          n_old++;
          g_assert_cmpuint (count_matching (f->ledger, "\"items\""), ==, 0);

          g_assert_true (run_batch (f, items, &again, &error));
          g_assert_no_error (error);
          g_assert_cmpuint (again->conflicts->len, ==, 0);
          g_assert_cmpuint (again->applied->len, ==, G_N_ELEMENTS (all_items));
          again_tree = snapshot (f->w);
          g_assert_cmpstr (again_tree, ==, new_tree);
          g_assert_false (has_leftovers (f->w));
        }
      else
        {
          g_assert_cmpstr (tree, ==, new_tree);
          n_new++;
          /* Rolled forward: the ledger has the batch once, and the recovery. */
          g_assert_cmpuint (count_matching (f->ledger, "\"items\""), ==, 1);
          g_assert_cmpuint (count_matching (f->ledger, "\"recovery\":\"rolled-forward\""), ==, 1);
        }
    }

  g_assert_cmpuint (n, <, 1000);
  g_assert_cmpuint (n_old, >, 0);
  g_assert_cmpuint (n_new, >, 0);
  g_test_message ("the batch has %u steps: %u crashes rolled back, %u rolled forward",
                  n - 1, n_old, n_new);
}

/* A batch whose later rename fails undoes the earlier renames. */
static void
test_rollback_after_renames (Fixture       *f,
                             gconstpointer  data)
{
  static const ItemSpec specs[] = {
    { "a.txt", PADDOCK_APPLY_PUT, 0 },
    { "dir/sub/c.txt", PADDOCK_APPLY_REMOVE, 0 },
    { "dir", PADDOCK_APPLY_REMOVE, 0 },   /* not empty: dir/b.txt stays */
  };
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;

  build_old (f->w);
  build_stage (f->stage);
  before = snapshot (f->w);
  items = make_items (f->w, specs, G_N_ELEMENTS (specs), FALSE);

  g_assert_false (run_batch (f, items, &result, &error));
  g_assert_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_FAILED);
  g_assert_null (result);
  after = snapshot (f->w);
  g_assert_cmpstr (after, ==, before);
  g_assert_false (journal_exists (f));
  g_assert_cmpuint (count_lines (f->ledger), ==, 0);
}

/* /proc files take one write() in place (g_file_set_contents would rename). */
static gboolean
write_proc (const char *path,
            const char *text)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  gssize n;

  if (fd < 0)
    return FALSE;
  n = write (fd, text, strlen (text));
  close (fd);
  return n == (gssize) strlen (text);
}

/* Runs @func in a child with its own mount namespace (and, unprivileged,
 * its own user namespace mapping us to root in it), so it can mount. */
static void
run_in_mount_ns (Fixture *f,
                 void   (*func) (Fixture *f))
{
  int status;
  pid_t pid = fork ();

  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      uid_t uid = geteuid ();
      gid_t gid = getegid ();

      if (uid == 0)
        {
          if (unshare (CLONE_NEWNS) != 0)
            _exit (77);
        }
      else
        {
          g_autofree char *uid_map = g_strdup_printf ("0 %u 1\n", (guint) uid);
          g_autofree char *gid_map = g_strdup_printf ("0 %u 1\n", (guint) gid);

          if (unshare (CLONE_NEWUSER | CLONE_NEWNS) != 0)
            _exit (77);
          if (!write_proc ("/proc/self/setgroups", "deny") ||
              !write_proc ("/proc/self/uid_map", uid_map) ||
              !write_proc ("/proc/self/gid_map", gid_map))
            _exit (77);
        }
      if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        _exit (77);
      func (f);
      _exit (0);
    }
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  if (WIFEXITED (status) && WEXITSTATUS (status) == 77)
    {
      g_test_skip ("cannot make a mount namespace here");
      return;
    }
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
}

static void
no_space_child (Fixture *f)
{
  static const ItemSpec specs[] = {
    { "a.txt", PADDOCK_APPLY_PUT, 0 },
    { "gone/x.txt", PADDOCK_APPLY_REMOVE, 0 },
    { "big.bin", PADDOCK_APPLY_PUT, 0 },
  };
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *big = g_malloc (1024 * 1024 + 1);

  g_assert_cmpint (g_mkdir_with_parents (f->w, 0755), ==, 0);
  if (mount ("tmpfs", f->w, "tmpfs", 0, "size=256k,mode=0755") != 0)
    _exit (77);
  build_old (f->w);
  build_stage (f->stage);
  memset (big, 'z', 1024 * 1024);
  big[1024 * 1024] = '\0';
  put_file (f->stage, "big.bin", big, 0644);
  before = snapshot (f->w);
  items = make_items (f->w, specs, G_N_ELEMENTS (specs), FALSE);

  g_assert_false (run_batch (f, items, &result, &error));
  g_assert_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_NO_SPACE);
  after = snapshot (f->w);
  g_assert_cmpstr (after, ==, before);
  g_assert_false (journal_exists (f));
}

static void
test_no_space (Fixture       *f,
               gconstpointer  data)
{
  run_in_mount_ns (f, no_space_child);
}

static void
read_only_child (Fixture *f)
{
  static const ItemSpec specs[] = {
    { "a.txt", PADDOCK_APPLY_PUT, 0 },
    { "gone/x.txt", PADDOCK_APPLY_REMOVE, 0 },
    { "ro/f.txt", PADDOCK_APPLY_PUT, 0 },
  };
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *ro = at (f->w, "ro");

  build_old (f->w);
  put_file (f->w, "ro/f.txt", "read only\n", 0644);
  build_stage (f->stage);
  put_file (f->stage, "ro/f.txt", "changed\n", 0644);
  /* Root ignores permission bits: a read-only bind mount is the one thing
   * that refuses it too. */
  if (mount (ro, ro, NULL, MS_BIND, NULL) != 0 ||
      mount (NULL, ro, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0)
    _exit (77);
  before = snapshot (f->w);
  items = make_items (f->w, specs, G_N_ELEMENTS (specs), FALSE);

  g_assert_false (run_batch (f, items, &result, &error));
  g_assert_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_READ_ONLY);
  after = snapshot (f->w);
  g_assert_cmpstr (after, ==, before);
  g_assert_false (journal_exists (f));
}

static void
test_read_only (Fixture       *f,
                gconstpointer  data)
{
  run_in_mount_ns (f, read_only_child);
}

static void
test_symlink_folder_refused (Fixture       *f,
                             gconstpointer  data)
{
  static const ItemSpec specs[] = {
    { "a.txt", PADDOCK_APPLY_PUT, 0 },
    { "dir/new.txt", PADDOCK_APPLY_PUT, 0 },
  };
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *outside_before = NULL;
  g_autofree char *outside_after = NULL;
  g_autofree char *w_before = NULL;
  g_autofree char *w_after = NULL;
  g_autofree char *dir = at (f->w, "dir");

  build_old (f->w);
  build_stage (f->stage);
  put_file (f->stage, "dir/new.txt", "new\n", 0644);
  put_file (f->outside, "b.txt", "outside\n", 0644);
  /* W's folder becomes a symlink to a folder outside W. */
  paddock_remove_tree (dir);
  put_link (f->w, "dir", f->outside);
  outside_before = snapshot (f->outside);
  w_before = snapshot (f->w);
  items = make_items (f->w, specs, G_N_ELEMENTS (specs), FALSE);

  g_assert_false (run_batch (f, items, &result, &error));
  g_assert_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH);
  outside_after = snapshot (f->outside);
  w_after = snapshot (f->w);
  g_assert_cmpstr (outside_after, ==, outside_before);
  g_assert_cmpstr (w_after, ==, w_before);
  g_clear_error (&error);

  /* A forced PUT of a file already there "through" the link: refused too. */
  {
    static const ItemSpec through[] = { { "dir/b.txt", PADDOCK_APPLY_PUT, 0 } };
    g_autoptr(GPtrArray) items2 = make_items (f->w, through, 1, TRUE);

    g_assert_false (run_batch (f, items2, &result, &error));
    g_assert_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH);
    g_free (outside_after);
    outside_after = snapshot (f->outside);
    g_assert_cmpstr (outside_after, ==, outside_before);
  }
}

/* The stage is read beneath its root too: a symlinked folder in it would
 * make us copy a file from elsewhere (say ~/.ssh) into the workspace. */
static void
test_stage_symlink_refused (Fixture       *f,
                            gconstpointer  data)
{
  static const ItemSpec specs[] = {
    { "a.txt", PADDOCK_APPLY_PUT, 0 },
    { "sdir/secret.txt", PADDOCK_APPLY_PUT, 0 },
    { "secret-link.txt", PADDOCK_APPLY_PUT, 0 },
  };
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *secret = NULL;

  build_old (f->w);
  build_stage (f->stage);
  put_file (f->outside, "secret.txt", "secret\n", 0600);
  put_link (f->stage, "sdir", f->outside);
  before = snapshot (f->w);
  items = make_items (f->w, specs, 2, FALSE);

  g_assert_false (run_batch (f, items, &result, &error));
  g_assert_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH);
  after = snapshot (f->w);
  g_assert_cmpstr (after, ==, before);
  g_clear_pointer (&items, g_ptr_array_unref);
  g_clear_error (&error);

  /* A symlink in the stage is applied as a symlink, never read through. */
  secret = at (f->outside, "secret.txt");
  put_link (f->stage, "secret-link.txt", secret);
  items = make_items (f->w, specs + 2, 1, FALSE);
  g_assert_true (run_batch (f, items, &result, &error));
  g_assert_no_error (error);
  g_clear_pointer (&secret, g_free);
  secret = at (f->w, "secret-link.txt");
  g_assert_true (g_file_test (secret, G_FILE_TEST_IS_SYMLINK));
}

static void
test_symlink_entry_replaced (Fixture       *f,
                             gconstpointer  data)
{
  static const ItemSpec specs[] = { { "lnk", PADDOCK_APPLY_PUT, 0 } };
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *target = NULL;
  g_autofree char *lnk = NULL;
  g_autofree char *target_path = at (f->outside, "target.txt");
  g_autofree char *lnk_path = at (f->w, "lnk");

  build_old (f->w);
  build_stage (f->stage);
  put_file (f->outside, "target.txt", "outside target\n", 0644);
  put_link (f->w, "lnk", target_path);
  put_file (f->stage, "lnk", "a file now\n", 0644);
  items = make_items (f->w, specs, 1, FALSE);

  g_assert_true (run_batch (f, items, &result, &error));
  g_assert_no_error (error);
  target = read_file (f->outside, "target.txt");
  g_assert_cmpstr (target, ==, "outside target\n");
  g_assert_false (g_file_test (lnk_path, G_FILE_TEST_IS_SYMLINK));
  lnk = read_file (f->w, "lnk");
  g_assert_cmpstr (lnk, ==, "a file now\n");
}

static void
test_hard_link_outside (Fixture       *f,
                        gconstpointer  data)
{
  static const ItemSpec specs[] = { { "hl", PADDOCK_APPLY_PUT, 0 } };
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *outside_file = at (f->outside, "h.txt");
  g_autofree char *hl = at (f->w, "hl");
  g_autofree char *out = NULL;
  g_autofree char *in = NULL;

  build_old (f->w);
  build_stage (f->stage);
  put_file (f->outside, "h.txt", "shared inode\n", 0644);
  g_assert_cmpint (link (outside_file, hl), ==, 0);
  put_file (f->stage, "hl", "new content\n", 0644);
  items = make_items (f->w, specs, 1, FALSE);

  g_assert_true (run_batch (f, items, &result, &error));
  g_assert_no_error (error);
  out = read_file (f->outside, "h.txt");
  in = read_file (f->w, "hl");
  g_assert_cmpstr (out, ==, "shared inode\n");
  g_assert_cmpstr (in, ==, "new content\n");
}

static void
test_invalid_paths (Fixture       *f,
                    gconstpointer  data)
{
  static const char * const bad[] = {
    "", "/abs", "a//b", "a/./b", "../x", "a/..", "a/", ".", ".paddock-apply-x",
  };

  build_old (f->w);
  build_stage (f->stage);

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func ((GDestroyNotify) paddock_apply_item_free);
      g_autoptr(PaddockApplyResult) result = NULL;
      g_autoptr(GError) error = NULL;

      g_ptr_array_add (items, paddock_apply_item_new (bad[i], PADDOCK_APPLY_PUT, 0, TRUE, NULL));
      g_assert_false (run_batch (f, items, &result, &error));
      g_assert_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH);
    }

  /* A PUT beneath a REMOVE of the same batch. */
  {
    g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func ((GDestroyNotify) paddock_apply_item_free);
    g_autoptr(PaddockApplyResult) result = NULL;
    g_autoptr(GError) error = NULL;

    put_file (f->stage, "gone/y.txt", "y\n", 0644);
    g_ptr_array_add (items, paddock_apply_item_new ("gone", PADDOCK_APPLY_REMOVE, 0, TRUE, NULL));
    g_ptr_array_add (items, paddock_apply_item_new ("gone/y.txt", PADDOCK_APPLY_PUT, 0, TRUE, NULL));
    g_assert_false (run_batch (f, items, &result, &error));
    g_assert_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH);
  }

  /* The same path twice. */
  {
    g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func ((GDestroyNotify) paddock_apply_item_free);
    g_autoptr(PaddockApplyResult) result = NULL;
    g_autoptr(GError) error = NULL;

    g_ptr_array_add (items, paddock_apply_item_new ("a.txt", PADDOCK_APPLY_PUT, 0, TRUE, NULL));
    g_ptr_array_add (items, paddock_apply_item_new ("a.txt", PADDOCK_APPLY_REMOVE, 0, TRUE, NULL));
    g_assert_false (run_batch (f, items, &result, &error));
    g_assert_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH);
  }
}

static void
test_recover_journal (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *journal = at (f->journal, "apply-journal.json");
  gboolean done = TRUE;

  build_old (f->w);
  g_assert_true (paddock_apply_recover (f->journal, f->w, &done, &error));
  g_assert_no_error (error);
  g_assert_false (done);

  put_file (f->journal, "apply-journal.json", "{ not json", 0600);
  g_assert_false (paddock_apply_recover (f->journal, f->w, &done, &error));
  g_assert_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_CORRUPT_JOURNAL);
  g_clear_error (&error);

  /* A journal naming entries that are not ours is refused, not obeyed. */
  put_file (f->journal, "apply-journal.json",
            "{\"version\":1,\"batch\":\"b\",\"state\":\"committed\",\"ops\":"
            "[{\"kind\":\"remove\",\"parent\":\"\",\"name\":\"YS50eHQ=\",\"temp\":\"keep.txt\"}]}", 0600);
  g_assert_false (paddock_apply_recover (f->journal, f->w, &done, &error));
  g_assert_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_CORRUPT_JOURNAL);
  g_assert_true (g_file_test (journal, G_FILE_TEST_EXISTS));
}

/* A batch killed half-way is finished or undone by the next batch first. */
static void
test_next_batch_recovers (Fixture       *f,
                          gconstpointer  data)
{
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *got = NULL;
  g_autofree char *want = NULL;
  int status;
  pid_t pid;

  build_old (f->w);
  build_stage (f->stage);
  build_new (f->expected);
  items = make_items (f->w, all_items, G_N_ELEMENTS (all_items), FALSE);

  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      g_autoptr(PaddockApplyResult) child_result = NULL;

      /* In the middle of the renames. */
      g_setenv ("PADDOCK_FAULT_APPLY_STEP", "25", TRUE);
      _exit (run_batch (f, items, &child_result, NULL) ? 0 : 1);
    }
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFSIGNALED (status));
  g_assert_true (journal_exists (f));

  /* The journal belongs to W: recovery refuses another workspace. */
  g_assert_false (paddock_apply_recover (f->journal, f->stage, NULL, &error));
  g_assert_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_FAILED);
  g_clear_error (&error);
  g_assert_true (journal_exists (f));

  /* Not forced: the rollback's renames gave the entries a new ctime, but
   * it recorded them (paddock-apply-restored.c), so the baselines of
   * before the crash still match. */
  g_assert_true (run_batch (f, items, &result, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (result->conflicts->len, ==, 0);
  got = snapshot (f->w);
  want = snapshot (f->expected);
  g_assert_cmpstr (got, ==, want);
  g_assert_false (journal_exists (f));
  g_assert_cmpuint (count_matching (f->ledger, "\"items\""), ==, 1);
  g_assert_cmpuint (count_matching (f->ledger, "\"recovery\""), ==, 1);
}

static void
test_cancelled (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;

  build_old (f->w);
  build_stage (f->stage);
  before = snapshot (f->w);
  items = make_items (f->w, all_items, G_N_ELEMENTS (all_items), FALSE);
  g_cancellable_cancel (cancellable);

  g_assert_false (paddock_apply_batch (f->w, f->stage, f->journal, f->ledger, "test", items,
                                       &result, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  after = snapshot (f->w);
  g_assert_cmpstr (after, ==, before);
}


/* Writes @text at @offset of a file of apparent size @size that is
 * otherwise a hole. */
static void
put_sparse (const char *root,
            const char *rel,
            goffset     size,
            goffset     offset,
            const char *text)
{
  g_autofree char *path = at (root, rel);
  g_autofree char *parent = g_path_get_dirname (path);
  int fd;

  g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
  fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (ftruncate (fd, size), ==, 0);
  g_assert_cmpint (pwrite (fd, text, strlen (text), offset), ==, (gssize) strlen (text));
  g_assert_cmpint (close (fd), ==, 0);
}

static guint64
allocated_of (const char *root,
              const char *rel)
{
  g_autofree char *path = at (root, rel);
  struct stat st;

  g_assert_cmpint (lstat (path, &st), ==, 0);
  return (guint64) st.st_blocks * 512;
}

/* A sparse file in the stage lands sparse: `truncate -s` then a few bytes
 * is a few blocks on the user's disk, not its apparent size. */
static void
test_sparse (Fixture       *f,
             gconstpointer  data)
{
  static const ItemSpec specs[] = { { "sparse.bin", PADDOCK_APPLY_PUT, 0 } };
  const goffset size = 256 * 1024 * 1024;
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *ledger = NULL;
  char buf[6] = { 0 };
  struct stat st;
  int fd;

  build_old (f->w);
  put_dir (f->stage, "", 0755);
  put_sparse (f->stage, "sparse.bin", size, size / 2, "hello");
  if (allocated_of (f->stage, "sparse.bin") >= 1024 * 1024)
    {
      g_test_skip ("the test folder's file system has no holes");
      return;
    }
  items = make_items (f->w, specs, G_N_ELEMENTS (specs), FALSE);

  g_assert_true (run_batch (f, items, &result, &error));
  g_assert_no_error (error);

  path = at (f->w, "sparse.bin");
  g_assert_cmpint (lstat (path, &st), ==, 0);
  g_assert_cmpint (st.st_size, ==, size);
  g_assert_cmpuint ((guint64) st.st_blocks * 512, <, 1024 * 1024);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (pread (fd, buf, 5, size / 2), ==, 5);
  g_assert_cmpstr (buf, ==, "hello");
  g_assert_cmpint (pread (fd, buf, 5, 4096), ==, 5);
  g_assert_cmpmem (buf, 5, "\0\0\0\0\0", 5);
  close (fd);
  /* The ledger knows it by the hash of its extents, not of 256 MiB read. */
  g_assert_true (g_file_get_contents (f->ledger, &ledger, NULL, NULL));
  g_assert_nonnull (strstr (ledger, "\"new_extents_sha256\""));
}

static void
sparse_on_small_fs_child (Fixture *f)
{
  static const ItemSpec specs[] = {
    { "big-sparse.bin", PADDOCK_APPLY_PUT, 0 },
    { "dense.bin", PADDOCK_APPLY_PUT, 0 },
  };
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *dense = g_malloc0 (512 * 1024 + 1);

  g_assert_cmpint (g_mkdir_with_parents (f->w, 0755), ==, 0);
  if (mount ("tmpfs", f->w, "tmpfs", 0, "size=1m,mode=0755") != 0)
    _exit (77);
  build_old (f->w);
  put_dir (f->stage, "", 0755);
  /* 1 GiB apparent, 4 KiB allocated, onto a 1 MiB file system. */
  put_sparse (f->stage, "big-sparse.bin", 1024 * 1024 * 1024, 4096, "data");
  if (allocated_of (f->stage, "big-sparse.bin") >= 64 * 1024)
    _exit (77);
  items = make_items (f->w, specs, 1, FALSE);
  g_assert_true (run_batch (f, items, &result, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (allocated_of (f->w, "big-sparse.bin"), <, 64 * 1024);
  g_clear_pointer (&result, paddock_apply_result_free);
  g_clear_pointer (&items, g_ptr_array_unref);

  /* Two dense halves of the file system: refused before anything is
   * written, with the typed error. */
  memset (dense, 'd', 512 * 1024);
  put_file (f->stage, "dense.bin", dense, 0644);
  put_file (f->stage, "big-sparse.bin", dense, 0644);
  before = snapshot (f->w);
  {
    static const ItemSpec both[] = {
      { "big-sparse.bin", PADDOCK_APPLY_PUT, 0 },
      { "dense.bin", PADDOCK_APPLY_PUT, 0 },
    };
    items = make_items (f->w, both, G_N_ELEMENTS (both), TRUE);
  }
  g_assert_false (run_batch (f, items, &result, &error));
  g_assert_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_NO_SPACE);
  g_assert_nonnull (strstr (error->message, "free"));
  after = snapshot (f->w);
  g_assert_cmpstr (after, ==, before);
  g_assert_false (journal_exists (f));
  (void) specs;
}

/* The space check counts allocated bytes: a sparse gigabyte fits on a
 * 1 MiB file system; two dense half-megabytes do not, and are refused
 * before any write. */
static void
test_sparse_space (Fixture       *f,
                   gconstpointer  data)
{
  run_in_mount_ns (f, sparse_on_small_fs_child);
}

/* A file hard-linked in the stage lands as hard links to one new inode. */
static void
test_hard_links (Fixture       *f,
                 gconstpointer  data)
{
  static const ItemSpec specs[] = {
    { "h/a", PADDOCK_APPLY_PUT, 0 },
    { "h/b", PADDOCK_APPLY_PUT, 0 },
    { "c", PADDOCK_APPLY_PUT, 0 },
  };
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(PaddockApplyResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *content = g_strnfill (32 * 1024, 'L');
  g_autofree char *a = NULL, *b = NULL, *c = NULL;
  g_autofree char *sa = at (f->stage, "h/a");
  g_autofree char *sb = at (f->stage, "h/b");
  g_autofree char *sc = at (f->stage, "c");
  g_autofree char *got = NULL;
  g_autofree char *ledger = NULL;
  struct stat sta, stb, stc;

  build_old (f->w);
  put_file (f->stage, "h/a", content, 0640);
  g_assert_cmpint (link (sa, sb), ==, 0);
  g_assert_cmpint (link (sa, sc), ==, 0);
  items = make_items (f->w, specs, G_N_ELEMENTS (specs), FALSE);

  g_assert_true (run_batch (f, items, &result, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (result->applied->len, ==, 3);

  a = at (f->w, "h/a");
  b = at (f->w, "h/b");
  c = at (f->w, "c");
  g_assert_cmpint (lstat (a, &sta), ==, 0);
  g_assert_cmpint (lstat (b, &stb), ==, 0);
  g_assert_cmpint (lstat (c, &stc), ==, 0);
  g_assert_cmpuint (sta.st_ino, ==, stb.st_ino);
  g_assert_cmpuint (sta.st_ino, ==, stc.st_ino);
  g_assert_cmpuint (sta.st_nlink, ==, 3);
  g_assert_cmpint (sta.st_mode & 07777, ==, 0640);
  got = read_file (f->w, "c");
  g_assert_cmpstr (got, ==, content);
  g_assert_false (has_leftovers (f->w));
  g_assert_true (g_file_get_contents (f->ledger, &ledger, NULL, NULL));
  g_assert_nonnull (strstr (ledger, "\"hardlink_of\":\"h/a\""));
}

int
main (int    argc,
      char **argv)
{
  umask (022);
  g_test_init (&argc, &argv, NULL);

#define ADD(name, func) \
  g_test_add ("/apply/" name, Fixture, NULL, fixture_setup, func, fixture_teardown)

  ADD ("full", test_full_apply);
  ADD ("partial", test_partial_apply);
  ADD ("conflict", test_conflict);
  ADD ("conflict-cascades", test_conflict_cascades);
  ADD ("forced-conflict", test_forced_conflict);
  ADD ("late-writer", test_late_writer);
  ADD ("crash-every-step", test_crash_every_step);
  ADD ("rollback-after-renames", test_rollback_after_renames);
  ADD ("no-space", test_no_space);
  ADD ("read-only", test_read_only);
  ADD ("symlink-folder-refused", test_symlink_folder_refused);
  ADD ("symlink-entry-replaced", test_symlink_entry_replaced);
  ADD ("stage-symlink-refused", test_stage_symlink_refused);
  ADD ("hard-link-outside", test_hard_link_outside);
  ADD ("invalid-paths", test_invalid_paths);
  ADD ("recover-journal", test_recover_journal);
  ADD ("next-batch-recovers", test_next_batch_recovers);
  ADD ("cancelled", test_cancelled);
  ADD ("sparse", test_sparse);
  ADD ("sparse-space", test_sparse_space);
  ADD ("hard-links", test_hard_links);

  return g_test_run ();
}
