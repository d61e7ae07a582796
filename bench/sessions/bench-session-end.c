/* bench-session-end.c — how long paddockd's main loop stalls as sessions end
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A session's end ("exited", "stopped") must be in its record on disk
 * before any client hears of it. Waiting for that fsync on the main loop
 * stalls every session's relay and every client's call; the daemon now
 * waits for it off the loop. This measures the stall as a client sees it:
 * a thread of this process calls a method the daemon answers on its main
 * loop (Properties.Get of the manager's StateDir) back to back, while the
 * bench ends sessions: N host sessions each exit at once (input sent to
 * `read x`), then N are destroyed. The figure is the round trip of the
 * calls made while sessions end (median, p99, max), and, for reference,
 * while nothing happens.
 *
 * Peer: the paddockd of another build tree (--peer-build DIR, e.g. one of
 * the commit before), rounds interleaved with ours in the same run.
 *
 * Usage: bench-session-end [--peer-build DIR] [--rounds N] [--sessions N]
 */

#include "config.h"

#include "bench-common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paddock-test-client.h"
#include "paddock-test-daemon.h"

typedef struct
{
  const char        *name;
  PaddockTestDaemon *daemon;
  GArray            *idle;      /* ms */
  GArray            *ends;
  GArray            *destroys;
} Variant;

typedef struct
{
  /* Made before the pings start: each ping is the call alone. */
  PaddockIpcManager1 *manager;
  GArray          *latencies;   /* where the pings go now; NULL: drop */
  GMutex           lock;
  gboolean         quit;
} Pinger;

static char *workspace;

static gpointer
pinger_main (gpointer data)
{
  Pinger *pinger = data;

  for (;;)
    {
      g_autoptr(GVariant) reply = NULL;
      g_autoptr(GError) error = NULL;
      gint64 start = g_get_monotonic_time ();
      double ms;

      g_mutex_lock (&pinger->lock);
      if (pinger->quit)
        {
          g_mutex_unlock (&pinger->lock);
          return NULL;
        }
      g_mutex_unlock (&pinger->lock);

      reply = paddock_test_read_property (G_DBUS_PROXY (pinger->manager), "StateDir", &error);
      if (reply == NULL)
        paddock_test_bail ("Ping failed: %s", error->message);
      ms = bench_ms_since (start);

      g_mutex_lock (&pinger->lock);
      if (pinger->latencies != NULL)
        g_array_append_val (pinger->latencies, ms);
      g_mutex_unlock (&pinger->lock);
    }
}

static void
pinger_record_into (Pinger *pinger,
                    GArray *latencies)
{
  g_mutex_lock (&pinger->lock);
  pinger->latencies = latencies;
  g_mutex_unlock (&pinger->lock);
}

static char *
get_state (GDBusConnection *connection,
           const char      *path)
{
  g_autoptr(GVariant) value = paddock_test_session_property (connection, path, "State");

  return g_variant_dup_string (value, NULL);
}

static void
remove_files (gpointer data)
{
  Variant *variants = data;

  for (guint v = 0; v < 2; v++)
    g_clear_pointer (&variants[v].daemon, paddock_test_daemon_free);
  if (workspace != NULL)
    rmdir (workspace);
}

static void
run_round (Variant *variant,
           guint    n_sessions)
{
  GDBusConnection *connection = paddock_test_daemon_get_connection (variant->daemon);
  g_autoptr(GDBusConnection) ping_connection = paddock_test_daemon_new_connection (variant->daemon);
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  const char *argv[] = { "sh", "-c", "echo up; read x; exit 0", NULL };
  Pinger pinger = { .manager = paddock_test_manager (ping_connection) };
  GThread *thread;

  g_mutex_init (&pinger.lock);
  for (guint i = 0; i < n_sessions; i++)
    g_ptr_array_add (paths, paddock_test_create_session_or_fail (connection, workspace, "host", argv, NULL));

  thread = g_thread_new ("pinger", pinger_main, &pinger);

  /* Nothing happening: the round trip itself. */
  pinger_record_into (&pinger, variant->idle);
  g_usleep (100 * 1000);

  /* Every session's agent exits; until each is listed as ended. */
  pinger_record_into (&pinger, variant->ends);
  for (guint i = 0; i < paths->len; i++)
    {
      g_autoptr(PaddockIpcSession1) session = paddock_test_session (connection, g_ptr_array_index (paths, i));

      paddock_ipc_session1_call_send_input_sync (session, g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, "\n", 1, 1),
                                                 NULL, NULL);
    }
  for (guint i = 0; i < paths->len; i++)
    {
      gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

      for (;;)
        {
          g_autofree char *state = get_state (connection, g_ptr_array_index (paths, i));

          if (g_str_equal (state, "exited"))
            break;
          if (g_get_monotonic_time () > deadline)
            paddock_test_bail ("Session %s did not end", (char *) g_ptr_array_index (paths, i));
          g_usleep (1000);
        }
    }

  /* Destroyed, one after the other. */
  pinger_record_into (&pinger, variant->destroys);
  for (guint i = 0; i < paths->len; i++)
    {
      g_autoptr(GError) error = NULL;

      if (!paddock_test_destroy_session (connection, g_ptr_array_index (paths, i), NULL, &error))
        paddock_test_bail ("Destroy: %s", error->message);
    }

  g_mutex_lock (&pinger.lock);
  pinger.latencies = NULL;
  pinger.quit = TRUE;
  g_mutex_unlock (&pinger.lock);
  g_thread_join (thread);
  g_mutex_clear (&pinger.lock);
  g_object_unref (pinger.manager);
}

static double
percentile (GArray *values,
            double  fraction)
{
  guint index;

  if (values->len == 0)
    return 0;
  g_array_sort (values, bench_compare_double);
  index = (guint) (fraction * (values->len - 1) + 0.5);
  return g_array_index (values, double, index);
}

static void
print_row (const char *what,
           Variant    *ours,
           Variant    *peer,
           GArray     *(*pick) (Variant *))
{
  GArray *a = pick (ours);

  printf ("| %s | %.3f / %.3f / %.2f (%u calls)", what, percentile (a, 0.5), percentile (a, 0.99),
          percentile (a, 1.0), a->len);
  if (peer != NULL)
    {
      GArray *b = pick (peer);

      printf (" | %.3f / %.3f / %.2f (%u calls) | %.2f× / %.2f×", percentile (b, 0.5), percentile (b, 0.99),
              percentile (b, 1.0), b->len, percentile (a, 0.99) / percentile (b, 0.99),
              percentile (a, 1.0) / percentile (b, 1.0));
    }
  printf (" |\n");
}

static GArray *pick_idle (Variant *v) { return v->idle; }
static GArray *pick_ends (Variant *v) { return v->ends; }
static GArray *pick_destroys (Variant *v) { return v->destroys; }

int
main (int   argc,
      char *argv[])
{
  Variant variants[2] = { { .name = "ours" }, { .name = "peer" } };
  const char *peer_build = NULL;
  guint rounds = 10;
  guint n_sessions = 10;
  guint n_variants = 1;
  double load[3] = { 0 };

  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--peer-build") && i + 1 < argc)
        peer_build = argv[++i];
      else if (g_str_equal (argv[i], "--rounds") && i + 1 < argc)
        rounds = (guint) g_ascii_strtoull (argv[++i], NULL, 10);
      else if (g_str_equal (argv[i], "--sessions") && i + 1 < argc)
        n_sessions = (guint) g_ascii_strtoull (argv[++i], NULL, 10);
      else
        {
          fprintf (stderr, "Usage: %s [--peer-build DIR] [--rounds N] [--sessions N]\n", argv[0]);
          return 2;
        }
    }

  workspace = g_dir_make_tmp ("paddock-bench-end-XXXXXX", NULL);
  /* A failure destroys the sessions made so far, then this cleanup runs. */
  paddock_test_set_fail_mode (PADDOCK_TEST_FAIL_BAIL, "bench-session-end");
  paddock_test_on_bail (remove_files, variants);
  variants[0].daemon = paddock_test_daemon_new (NULL);
  if (peer_build != NULL)
    {
      g_autofree char *own_root = g_strdup (g_getenv ("PADDOCK_BUILD_ROOT"));

      g_setenv ("PADDOCK_BUILD_ROOT", peer_build, TRUE);
      variants[1].daemon = paddock_test_daemon_new (NULL);
      g_setenv ("PADDOCK_BUILD_ROOT", own_root, TRUE);
      n_variants = 2;
    }
  for (guint v = 0; v < n_variants; v++)
    {
      variants[v].idle = g_array_new (FALSE, FALSE, sizeof (double));
      variants[v].ends = g_array_new (FALSE, FALSE, sizeof (double));
      variants[v].destroys = g_array_new (FALSE, FALSE, sizeof (double));
    }

  /* Interleaved, the order alternating. */
  for (guint round = 0; round < rounds; round++)
    for (guint k = 0; k < n_variants; k++)
      run_round (&variants[(round + k) % n_variants], n_sessions);

  if (getloadavg (load, 3) < 0)
    load[0] = -1;
  printf ("Main-loop stall as %u host sessions end, %u rounds (load %.1f): round trip of a call the daemon "
          "answers on its main loop, ms, median / p99 / max\n\n", n_sessions, rounds, load[0]);
  printf ("| while | Paddock%s |\n", peer_build != NULL ? " | peer build | ratio p99 / max" : "");
  printf ("| --- | ---%s |\n", peer_build != NULL ? " | --- | ---" : "");
  print_row ("nothing happens", &variants[0], n_variants > 1 ? &variants[1] : NULL, pick_idle);
  print_row ("agents exit, until listed \"exited\"", &variants[0], n_variants > 1 ? &variants[1] : NULL, pick_ends);
  print_row ("Destroy, one after the other", &variants[0], n_variants > 1 ? &variants[1] : NULL, pick_destroys);

  for (guint v = 0; v < n_variants; v++)
    {
      g_clear_pointer (&variants[v].daemon, paddock_test_daemon_free);
      g_array_unref (variants[v].idle);
      g_array_unref (variants[v].ends);
      g_array_unref (variants[v].destroys);
    }
  rmdir (workspace);
  g_free (workspace);
  return 0;
}
