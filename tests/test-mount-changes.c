/* test-mount-changes.c — which changes of the host's mounts reach a spare sandbox's view
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * paddock-mount-changes.c compares two looks at /proc/self/mountinfo: a
 * mount made, ended or changed on the way to, at or below a path the view
 * shows makes a sandbox made ahead out of date; one elsewhere does not.
 */

#include "config.h"

#include <glib/gstdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "paddock-mount-changes.h"

#define ROOT  "21 1 259:2 / / rw,relatime shared:1 - ext4 /dev/root rw\n"
#define TMP   "30 21 0:30 / /tmp rw,nosuid,nodev shared:12 - tmpfs tmpfs rw\n"
#define HOME  "31 21 259:3 / /home rw,relatime shared:13 - ext4 /dev/home rw\n"

static char *
affecting (const char *before,
           const char *after,
           const char *path)
{
  const char *paths[] = { path, NULL };

  return paddock_mount_changes_find_affecting (before, after, paths);
}

static void
assert_affects (const char *before,
                const char *after,
                const char *path,
                const char *expected_point)
{
  g_autofree char *point = affecting (before, after, path);

  g_assert_cmpstr (point, ==, expected_point);
}

/* A container's overlay, a disk under /media: nowhere near the view. */
static void
test_elsewhere (void)
{
  const char *before = ROOT TMP HOME;
  const char *after = ROOT TMP HOME
    "40 21 0:50 / /var/lib/docker/overlay2/abc/merged rw - overlay overlay rw\n"
    "41 30 0:51 / /tmp/paddock-test-x/mnt rw - tmpfs none rw\n";

  assert_affects (before, after, "/home/user/project", NULL);
  assert_affects (after, before, "/home/user/project", NULL);
  /* A name that only starts the same is another folder. */
  assert_affects (before, after, "/tmp/paddock-test", NULL);
  assert_affects (before, after, "/var/lib/dock", NULL);
  /* Nothing changed: nothing affects even "/". */
  assert_affects (before, before, "/", NULL);
}

/* A mount at the path, above it (what the path leads to) and below it
 * (what is seen through it), made or ended. */
static void
test_on_the_way (void)
{
  const char *before = ROOT TMP HOME;
  const char *at = ROOT TMP HOME "42 31 0:52 / /home/user/project rw - tmpfs none rw\n";
  const char *above = ROOT TMP HOME "43 31 0:53 / /home/user rw - tmpfs none rw\n";
  const char *below = ROOT TMP HOME "44 31 0:54 / /home/user/project/node_modules rw - tmpfs none rw\n";

  assert_affects (before, at, "/home/user/project", "/home/user/project");
  assert_affects (at, before, "/home/user/project", "/home/user/project");
  assert_affects (before, above, "/home/user/project", "/home/user");
  assert_affects (before, below, "/home/user/project", "/home/user/project/node_modules");
  /* /home itself remounted read-only: one line changed. */
  assert_affects (before, ROOT TMP "31 21 259:3 / /home ro,relatime shared:13 - ext4 /dev/home ro\n",
                  "/home/user/project", "/home");
  /* The root's propagation changed: above everything. */
  assert_affects (before, "21 1 259:2 / / rw,relatime - ext4 /dev/root rw\n" TMP HOME, "/usr", "/");
}

/* Mount points are written with octal escapes for a space, a tab, a
 * newline and a backslash. */
static void
test_escaped_mount_point (void)
{
  const char *before = ROOT HOME;
  const char *after = ROOT HOME "45 31 0:55 / /home/user/my\\040work rw - tmpfs none rw\n";

  assert_affects (before, after, "/home/user/my work/app", "/home/user/my work");
  assert_affects (before, after, "/home/user/my", NULL);
  /* A line without a mount point could be anywhere. */
  {
    g_autofree char *point = affecting (before, ROOT HOME "46 31 0:56\n", "/usr");
    g_assert_nonnull (point);
  }
}

static gboolean
contains (GPtrArray  *paths,
          const char *path)
{
  for (guint i = 0; i < paths->len; i++)
    if (g_str_equal (g_ptr_array_index (paths, i), path))
      return TRUE;
  return FALSE;
}

/* The paths in the helper's options: the option itself, what follows a
 * ':' or '=' (whole, and to the next ':'), canonical, and where a
 * symlink leads. */
static void
test_paths_in_options (void)
{
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *dir = g_dir_make_tmp ("paddock-mount-changes-XXXXXX", NULL);
  g_autofree char *real = NULL;
  g_autofree char *link = NULL;
  g_autofree char *resolved = NULL;

  g_assert_nonnull (dir);
  real = g_build_filename (dir, "real", NULL);
  link = g_build_filename (dir, "link", NULL);
  g_assert_cmpint (g_mkdir (real, 0700), ==, 0);
  g_assert_cmpint (symlink (real, link), ==, 0);
  resolved = realpath (real, NULL);

  paddock_mount_changes_add_paths_in (paths, "--workspace");
  g_assert_cmpuint (paths->len, ==, 0);
  paddock_mount_changes_add_paths_in (paths, "a/relative/path");
  g_assert_cmpuint (paths->len, ==, 0);
  paddock_mount_changes_add_paths_in (paths, "/srv//project/./app/../web");
  g_assert_true (contains (paths, "/srv/project/web"));
  paddock_mount_changes_add_paths_in (paths, "copy:/state/sessions/abc/copy");
  g_assert_true (contains (paths, "/state/sessions/abc/copy"));
  paddock_mount_changes_add_paths_in (paths, "ro=/opt/tool:/data/x");
  g_assert_true (contains (paths, "/opt/tool"));
  g_assert_true (contains (paths, "/opt/tool:/data/x"));
  g_assert_true (contains (paths, "/data/x"));
  paddock_mount_changes_add_paths_in (paths, link);
  g_assert_true (contains (paths, link));
  g_assert_true (contains (paths, resolved));

  g_assert_cmpint (g_unlink (link), ==, 0);
  g_assert_cmpint (g_rmdir (real), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/mount-changes/elsewhere", test_elsewhere);
  g_test_add_func ("/mount-changes/on-the-way", test_on_the_way);
  g_test_add_func ("/mount-changes/escaped-mount-point", test_escaped_mount_point);
  g_test_add_func ("/mount-changes/paths-in-options", test_paths_in_options);
  return g_test_run ();
}
