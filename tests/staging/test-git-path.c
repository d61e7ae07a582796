/* test-git-path.c — the review's path encoding for libgit2 (paddock-git-path.c)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * What a user relies on: a workspace file named like something git
 * refuses (".git", "..", "GIT~1") is still listed under its own name.
 */

#include "config.h"

#include "paddock-git-path.h"

static void
check_pair (const char *rel,
            const char *encoded)
{
  g_autofree char *got = paddock_git_path_encode (rel);
  g_autofree char *back = NULL;

  g_assert_cmpstr (got, ==, encoded);
  back = paddock_git_path_decode (got);
  g_assert_cmpstr (back, ==, rel);
}

/* Every component gets one '_' in front, so none is a name git refuses. */
static void
test_encode_components (void)
{
  check_pair ("a", "_a");
  check_pair ("a/b/c.txt", "_a/_b/_c.txt");
  check_pair (".git", "_.git");
  check_pair ("sub/.git/config", "_sub/_.git/_config");
  check_pair ("..", "_..");
  check_pair ("GIT~1/x", "_GIT~1/_x");
  check_pair ("_already", "__already");
  check_pair ("trailing/", "_trailing/_");
  check_pair ("", "_");
}

/* Decoding strips exactly the first byte of each component, whatever it
 * is: libgit2 only ever hands back what the index was given. */
static void
test_decode_strips_one_byte (void)
{
  g_autofree char *a = paddock_git_path_decode ("_x/_y");
  g_autofree char *b = paddock_git_path_decode ("xy/zw");
  g_autofree char *c = paddock_git_path_decode ("");
  g_autofree char *d = paddock_git_path_decode ("//");

  g_assert_cmpstr (a, ==, "x/y");
  g_assert_cmpstr (b, ==, "y/w");
  g_assert_cmpstr (c, ==, "");
  g_assert_cmpstr (d, ==, "/");
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/git-path/encode-components", test_encode_components);
  g_test_add_func ("/git-path/decode-strips-one-byte", test_decode_strips_one_byte);
  return g_test_run ();
}
