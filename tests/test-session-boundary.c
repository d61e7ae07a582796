/* test-session-boundary.c — a look at a boundary, from a copy, in a thread; the strict check
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The look reads what it was given after the giver changed or freed it
 * (the session lets its cgroup go, SetNetworkPolicy replaces the mode):
 * so it must have copied it. This test process is in no sandbox: a
 * "strict" look at it sees the requested layers unenforced, which the
 * strict check refuses and other profiles accept.
 */

#include "config.h"

#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "paddock-error.h"
#include "paddock-session-boundary.h"

static PaddockBoundaryLook *
new_look (const char *profile,
          const char *net_mode)
{
  g_autofree char *workspace = g_get_current_dir ();
  g_autofree char *mode = g_strdup (net_mode);
  g_autofree char *owned_profile = g_strdup (profile);
  g_auto(GStrv) env = g_strsplit ("HOME=/home/agent PATH=/usr/bin", " ", -1);
  PaddockBoundaryInput input = {
    .profile = owned_profile,
    .session_pid = getpid (),
    .workspace = workspace,
    .net_mode = mode,
    .given_env = (const char *const *) env,
  };
  PaddockBoundaryLook *look = paddock_boundary_look_new (&input);

  /* What it was given is gone (and overwritten first) before it looks. */
  memset (mode, 'x', strlen (mode));
  memset (owned_profile, 'x', strlen (owned_profile));
  return look;
}

static void
looked_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  PaddockBoundaryLook **out = user_data;

  g_assert_null (source);
  *out = paddock_boundary_look_finish (result);
}

static void
test_in_thread (void)
{
  PaddockBoundaryLook *look = new_look ("strict", "none");
  g_autoptr(PaddockBoundaryLook) back = NULL;
  g_autofree char *printed = NULL;
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  g_assert_null (paddock_boundary_look_get_boundary (look));
  paddock_boundary_look_run_in_thread (look, looked_cb, &back);
  while (back == NULL && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);

  /* The same look, run. */
  g_assert_true (back == look);
  g_assert_true (PADDOCK_IS_BOUNDARY (paddock_boundary_look_get_boundary (back)));
  g_assert_nonnull (paddock_boundary_look_get_published (back));
  /* It judged the mode it was given, not what became of the giver's
   * string (overwritten, then freed: ASan runs say so too). */
  printed = g_variant_print (paddock_boundary_look_get_published (back), FALSE);
  g_assert_nonnull (strstr (printed, "mode none: "));
  g_assert_null (strstr (printed, "xxxx"));
}

static void
test_strict_check (void)
{
  g_autoptr(PaddockBoundaryLook) strict = new_look ("strict", "none");
  g_autoptr(PaddockBoundaryLook) host = new_look ("host", "host");
  g_autoptr(GError) error = NULL;

  paddock_boundary_look_run (strict);
  paddock_boundary_look_run (host);

  /* This process runs in no sandbox: strict is refused, naming what is
   * not enforced; the same boundary is what a safe session runs with. */
  g_assert_false (paddock_boundary_check_strict ("strict", paddock_boundary_look_get_boundary (strict), &error));
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED);
  g_assert_nonnull (strstr (error->message, "not enforced here: "));
  /* It asked for its own network (mode none) and shares this one. */
  g_assert_nonnull (strstr (error->message, "network (unenforced)"));
  g_clear_error (&error);
  g_assert_true (paddock_boundary_check_strict ("safe", paddock_boundary_look_get_boundary (strict), &error));
  g_assert_no_error (error);

  /* The host profile requests nothing: nothing is missing even for strict. */
  g_assert_true (paddock_boundary_check_strict ("strict", paddock_boundary_look_get_boundary (host), &error));
  g_assert_no_error (error);
}

/* What a start saw, kept in the session's folder, reads back layer by
 * layer the same, its evidence marked as recorded then; a damaged file is
 * refused, not guessed at. */
static void
test_recorded (void)
{
  g_autoptr(PaddockBoundaryLook) look = new_look ("safe", "none");
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) back = NULL;
  g_autofree char *dir = g_dir_make_tmp ("paddock-boundary-XXXXXX", &error);
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;
  GVariant *published;

  g_assert_no_error (error);
  path = g_build_filename (dir, "boundary", NULL);
  paddock_boundary_look_run (look);
  published = paddock_boundary_look_get_published (look);
  text = paddock_boundary_published_to_text (published);
  g_file_set_contents (path, text, -1, &error);
  g_assert_no_error (error);

  back = paddock_boundary_published_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_variant_n_children (back), ==, g_variant_n_children (published));
  g_assert_cmpuint (g_variant_n_children (back), >, 10);
  for (gsize i = 0; i < g_variant_n_children (back); i++)
    {
      g_autoptr(GVariant) was = g_variant_get_child_value (published, i);
      g_autoptr(GVariant) is = g_variant_get_child_value (back, i);
      const char *was_layer, *is_layer, *was_status, *is_status, *was_evidence, *is_evidence;
      gboolean was_requested, is_requested;

      g_assert_true (g_variant_lookup (was, "layer", "&s", &was_layer));
      g_assert_true (g_variant_lookup (is, "layer", "&s", &is_layer));
      g_assert_cmpstr (is_layer, ==, was_layer);
      g_assert_true (g_variant_lookup (was, "status", "&s", &was_status));
      g_assert_true (g_variant_lookup (is, "status", "&s", &is_status));
      g_assert_cmpstr (is_status, ==, was_status);
      g_assert_true (g_variant_lookup (was, "requested", "b", &was_requested));
      g_assert_true (g_variant_lookup (is, "requested", "b", &is_requested));
      g_assert_cmpint (is_requested, ==, was_requested);
      g_assert_true (g_variant_lookup (was, "evidence", "&s", &was_evidence));
      g_assert_true (g_variant_lookup (is, "evidence", "&s", &is_evidence));
      g_assert_true (g_str_has_prefix (is_evidence, "recorded at the start: "));
      g_assert_cmpstr (is_evidence + strlen ("recorded at the start: "), ==, was_evidence);
    }
  g_clear_pointer (&back, g_variant_unref);

  /* Cut short, or of another type: refused. */
  g_file_set_contents (path, text, strlen (text) / 2, &error);
  g_assert_no_error (error);
  g_assert_null (paddock_boundary_published_load (path, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  g_file_set_contents (path, "[{'layer': <1>}]", -1, &error);
  g_assert_no_error (error);
  g_assert_null (paddock_boundary_published_load (path, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);

  g_unlink (path);
  g_rmdir (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/session-boundary/in-thread", test_in_thread);
  g_test_add_func ("/session-boundary/strict-check", test_strict_check);
  g_test_add_func ("/session-boundary/recorded", test_recorded);

  return g_test_run ();
}
