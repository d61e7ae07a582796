/* test-session-stage-limit.c — a session held still while its stage is full, without a session
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * PaddockSessionStageLimit alone (issue #20: the session's parts are
 * testable without a bus or a daemon): the test plays the session in the
 * handlers of its gate's signals (whether it runs, whether it has a
 * freezer, its processes: one child of the test's) and checks what a user sees: the
 * Stage property's value (full, paused and by what), that the process
 * really stops and goes on again, and that a session that no longer runs
 * is not held.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-error.h"
#include "paddock-session-gate.h"
#include "paddock-session-stage-limit.h"

typedef struct
{
  char                     *root;
  PaddockSessionGate       *gate;
  PaddockSessionStageLimit *limit;
  PaddockIpcSession1       *skeleton;    /* where the Stage property goes */
  guint                     n_stage_full; /* StageFull signals on it */
  gboolean                  live;
  gboolean                  has_freezer;
  guint                     n_freeze;
  guint                     n_thaw;
  guint                     n_list;
  guint                     n_held;
  pid_t                     child;
  GVariant                 *stage;       /* the last "changed" */
  GMainLoop                *loop;
} Fixture;

static gboolean
is_live_cb (PaddockSessionGate *gate,
            Fixture            *fixture)
{
  return fixture->live;
}

static gboolean
freeze_cb (PaddockSessionGate *gate,
           gboolean            frozen,
           Fixture            *fixture)
{
  if (frozen)
    fixture->n_freeze++;
  else
    fixture->n_thaw++;
  return fixture->has_freezer;
}

static GArray *
list_pids_cb (PaddockSessionGate *gate,
              Fixture            *fixture)
{
  GArray *pids = g_array_new (FALSE, FALSE, sizeof (pid_t));

  fixture->n_list++;
  if (fixture->child > 0)
    g_array_append_val (pids, fixture->child);
  return pids;
}

static void
changed_cb (PaddockSessionStageLimit *limit,
            GVariant                 *stage,
            gboolean                  newly_held,
            Fixture                  *fixture)
{
  g_clear_pointer (&fixture->stage, g_variant_unref);
  fixture->stage = g_variant_ref (stage);
  if (newly_held)
    fixture->n_held++;
  g_main_loop_quit (fixture->loop);
}

static void
stage_full_cb (PaddockIpcSession1 *skeleton,
               GVariant           *stage,
               Fixture            *fixture)
{
  fixture->n_stage_full++;
}

/* Real blocks, over the 1 MiB limit the fixture sets. */
static void
write_stage (Fixture *fixture)
{
  g_autofree char *path = g_build_filename (fixture->root, "big", NULL);
  g_autofree char *data = g_malloc (2 << 20);
  g_autoptr(GError) error = NULL;
  int fd;

  memset (data, 'x', 2 << 20);
  g_file_set_contents (path, data, 2 << 20, &error);
  g_assert_no_error (error);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (fsync (fd), ==, 0);
  close (fd);
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  fixture->root = g_dir_make_tmp ("paddock-stage-limit-XXXXXX", &error);
  g_assert_no_error (error);
  write_stage (fixture);
  fixture->live = TRUE;
  fixture->loop = g_main_loop_new (NULL, FALSE);
  fixture->gate = paddock_session_gate_new ("s1");
  g_signal_connect (fixture->gate, "is-live", G_CALLBACK (is_live_cb), fixture);
  g_signal_connect (fixture->gate, "freeze", G_CALLBACK (freeze_cb), fixture);
  g_signal_connect (fixture->gate, "list-pids", G_CALLBACK (list_pids_cb), fixture);
  fixture->limit = paddock_session_stage_limit_new ("s1", fixture->gate);
  g_signal_connect (fixture->limit, "changed", G_CALLBACK (changed_cb), fixture);
  fixture->skeleton = PADDOCK_IPC_SESSION1 (paddock_ipc_session1_skeleton_new ());
  g_signal_connect (fixture->skeleton, "stage-full", G_CALLBACK (stage_full_cb), fixture);
  paddock_session_stage_limit_attach (fixture->limit, fixture->skeleton);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autofree char *path = g_build_filename (fixture->root, "big", NULL);

  paddock_session_stage_limit_close (fixture->limit);
  g_clear_object (&fixture->limit);
  g_clear_object (&fixture->gate);
  g_clear_object (&fixture->skeleton);
  if (fixture->child > 0)
    {
      kill (fixture->child, SIGKILL);
      waitpid (fixture->child, NULL, 0);
    }
  g_clear_pointer (&fixture->stage, g_variant_unref);
  g_main_loop_unref (fixture->loop);
  g_unlink (path);
  g_rmdir (fixture->root);
  g_free (fixture->root);
}

static const char *
stage_string (Fixture    *fixture,
              const char *key)
{
  const char *value = NULL;

  g_assert_nonnull (fixture->stage);
  g_assert_true (g_variant_lookup (fixture->stage, key, "&s", &value));
  return value;
}

static gboolean
stage_full (Fixture *fixture)
{
  gboolean full = FALSE;

  g_assert_nonnull (fixture->stage);
  g_assert_true (g_variant_lookup (fixture->stage, "full", "b", &full));
  return full;
}

/* The guard's first measure says full: "changed". */
static void
run_until_changed (Fixture *fixture)
{
  paddock_session_stage_limit_begin (fixture->limit, fixture->root, (guint64) 1 << 20);
  g_main_loop_run (fixture->loop);
}

/* What a client of the session sees: the Stage property says full. */
static gboolean
published_full (Fixture *fixture)
{
  GVariant *stage = paddock_ipc_session1_get_stage (fixture->skeleton);
  gboolean full = FALSE;

  g_assert_nonnull (stage);
  g_assert_true (g_variant_lookup (stage, "full", "b", &full));
  return full;
}

static void
test_held_by_signals (Fixture       *fixture,
                      gconstpointer  data)
{
  int status = 0;

  fixture->child = fork ();
  g_assert_cmpint (fixture->child, >=, 0);
  if (fixture->child == 0)
    {
      for (;;)
        pause ();
    }

  run_until_changed (fixture);
  g_assert_true (stage_full (fixture));
  g_assert_true (published_full (fixture));
  g_assert_cmpuint (fixture->n_stage_full, ==, 1);
  g_assert_cmpstr (stage_string (fixture, "paused"), ==, "signals");
  g_assert_cmpuint (fixture->n_held, ==, 1);
  g_assert_cmpuint (fixture->n_freeze, ==, 1);
  /* Twice: a child forked while the first sweep ran is in the second. */
  g_assert_cmpuint (fixture->n_list, ==, 2);
  /* The session's process is stopped indeed. */
  g_assert_cmpint (waitpid (fixture->child, &status, WUNTRACED), ==, fixture->child);
  g_assert_true (WIFSTOPPED (status));

  /* Stop or Destroy: it goes on, to see its SIGTERM. */
  paddock_session_stage_limit_close (fixture->limit);
  g_assert_cmpint (waitpid (fixture->child, &status, WCONTINUED), ==, fixture->child);
  g_assert_true (WIFCONTINUED (status));
  g_assert_cmpuint (fixture->n_thaw, ==, 0);
}

static void
test_held_by_freezer (Fixture       *fixture,
                      gconstpointer  data)
{
  fixture->has_freezer = TRUE;
  run_until_changed (fixture);
  g_assert_true (stage_full (fixture));
  g_assert_cmpstr (stage_string (fixture, "paused"), ==, "cgroup-freezer");
  g_assert_cmpuint (fixture->n_held, ==, 1);
  g_assert_cmpuint (fixture->n_freeze, ==, 1);
  /* The cgroup holds the whole tree: nothing is signalled one by one. */
  g_assert_cmpuint (fixture->n_list, ==, 0);

  paddock_session_stage_limit_close (fixture->limit);
  g_assert_cmpuint (fixture->n_thaw, ==, 1);
  /* Once only. */
  paddock_session_stage_limit_close (fixture->limit);
  g_assert_cmpuint (fixture->n_thaw, ==, 1);
}

static void
test_not_live (Fixture       *fixture,
               gconstpointer  data)
{
  fixture->live = FALSE;
  run_until_changed (fixture);
  /* Full, said so, but nothing is held: nothing runs. */
  g_assert_true (stage_full (fixture));
  g_assert_true (published_full (fixture));
  g_assert_cmpuint (fixture->n_stage_full, ==, 0);
  g_assert_cmpstr (stage_string (fixture, "paused"), ==, "");
  g_assert_cmpuint (fixture->n_held, ==, 0);
  g_assert_cmpuint (fixture->n_freeze, ==, 0);
  g_assert_cmpuint (fixture->n_list, ==, 0);
}

/* SetStageLimit: Busy while the session does not run; a larger limit
 * lets a held session go on at once. */
static void
test_set_limit (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  g_assert_false (paddock_session_stage_limit_set_limit (fixture->limit, (guint64) 64 << 20, &error));
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_BUSY);
  g_clear_error (&error);

  fixture->has_freezer = TRUE;
  run_until_changed (fixture);
  g_assert_true (published_full (fixture));
  g_assert_cmpstr (stage_string (fixture, "paused"), ==, "cgroup-freezer");

  g_assert_false (paddock_session_stage_limit_set_limit (fixture->limit, 1, &error));
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_true (paddock_session_stage_limit_set_limit (fixture->limit, (guint64) 64 << 20, &error));
  g_assert_no_error (error);
  g_assert_false (published_full (fixture));
  g_assert_cmpstr (stage_string (fixture, "paused"), ==, "");
  g_assert_cmpuint (fixture->n_thaw, ==, 1);

  paddock_session_stage_limit_close (fixture->limit);
  g_assert_false (paddock_session_stage_limit_set_limit (fixture->limit, (guint64) 64 << 20, &error));
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_BUSY);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/stage-limit/held-by-signals", Fixture, NULL, fixture_set_up, test_held_by_signals,
              fixture_tear_down);
  g_test_add ("/stage-limit/held-by-freezer", Fixture, NULL, fixture_set_up, test_held_by_freezer,
              fixture_tear_down);
  g_test_add ("/stage-limit/set-limit", Fixture, NULL, fixture_set_up, test_set_limit, fixture_tear_down);
  g_test_add ("/stage-limit/not-live", Fixture, NULL, fixture_set_up, test_not_live, fixture_tear_down);
  return g_test_run ();
}
