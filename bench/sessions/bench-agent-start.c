/* bench-agent-start.c — `create --agent` to the agent's first output, next to the agent started by hand
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Issue #21's figure: from CreateSession with "agent" (and "terminal", as
 * `paddockctl create --agent NAME --attach` sends it) to the first byte on
 * the terminal, in the default safe profile on the proxy, next to the same
 * installed program started by hand (fork + exec, its output on a pipe),
 * rounds interleaved, each after the same pause.
 *
 *   bench-agent-start [--rounds N] [--home DIR --agent NAME] [-- ARG…]
 *
 * Without --home, the fake agent of tests/fixtures/fake-agent is installed
 * into a temporary HOME's ~/.npm-global with its preset; with --home DIR
 * (a HOME where `npm i -g` installed real agents) and --agent claude, say,
 * that agent, with ARG… (e.g. --version) when given.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixfdlist.h>
#include <glib-unix.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-common.h"
#include "paddock-error.h"
#include "paddock-test-client.h"
#include "paddock-test-daemon.h"

#define PAUSE_MS 200

/* When it bails, after its session is destroyed. */
static void
free_daemon (gpointer data)
{
  g_clear_pointer ((PaddockTestDaemon **) data, paddock_test_daemon_free);
}

/* The program by hand: its first byte on a pipe. */
static double
by_hand_ms (const char * const *argv)
{
  int out[2];
  gint64 start;
  pid_t pid;
  char byte;
  ssize_t n;
  double ms;

  if (pipe2 (out, O_CLOEXEC) != 0)
    paddock_test_bail ("pipe: %s", g_strerror (errno));
  start = g_get_monotonic_time ();
  pid = fork ();
  if (pid == 0)
    {
      int null = open ("/dev/null", O_RDONLY | O_CLOEXEC);

      dup2 (null, STDIN_FILENO);
      dup2 (out[1], STDOUT_FILENO);
      dup2 (out[1], STDERR_FILENO);
      execv (argv[0], (char * const *) argv);
      _exit (127);
    }
  close (out[1]);
  do
    n = read (out[0], &byte, 1);
  while (n < 0 && errno == EINTR);
  ms = bench_ms_since (start);
  close (out[0]);
  kill (pid, SIGKILL);
  waitpid (pid, NULL, 0);
  if (n != 1)
    paddock_test_bail ("%s printed nothing", argv[0]);
  return ms;
}

typedef struct
{
  char     *path;
  GError   *error;
  gint64    read_at;
} Start;

static void
replied_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  Start *s = user_data;

  s->path = paddock_test_create_session_finish (result, &s->error);
}

static gboolean
readable_cb (int          fd,
             GIOCondition condition,
             gpointer     user_data)
{
  Start *s = user_data;
  char byte;

  if (read (fd, &byte, 1) == 1)
    s->read_at = g_get_monotonic_time ();
  else
    s->read_at = -1;
  return G_SOURCE_REMOVE;
}

/* CreateSession with "agent" and "terminal", to the first byte read. */
static double
paddock_ms (GDBusConnection    *connection,
            const char         *workspace,
            const char         *agent,
            const char * const *command)
{
  g_autoptr(GUnixFDList) fds = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  Start s = { NULL, NULL, 0 };
  gint64 start;
  gint64 deadline;
  int pair[2];
  guint source;

  start = g_get_monotonic_time ();
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    paddock_test_bail ("socketpair: %s", g_strerror (errno));
  fds = g_unix_fd_list_new_from_array (&pair[1], 1);
  /* No profile: the preset's. */
  paddock_test_create_session_async (connection, workspace, NULL,
                                     command != NULL && command[0] != NULL ? command : NULL,
                                     g_variant_new_parsed ("{'agent': <%s>, 'terminal': <@h 0>}", agent), fds,
                                     replied_cb, &s);
  source = g_unix_fd_add (pair[0], G_IO_IN | G_IO_HUP | G_IO_ERR, readable_cb, &s);
  deadline = start + 30 * G_USEC_PER_SEC;
  while ((s.path == NULL && s.error == NULL) || (s.read_at == 0 && s.error == NULL))
    {
      g_main_context_iteration (NULL, FALSE);
      if (g_get_monotonic_time () > deadline)
        paddock_test_bail ("no answer or output in 30 s");
      g_usleep (100);
    }
  if (s.read_at == 0)
    g_source_remove (source);
  close (pair[0]);
  if (s.error != NULL)
    paddock_test_bail ("CreateSession (agent %s): %s", agent, s.error->message);
  path = g_steal_pointer (&s.path);
  if (!paddock_test_destroy_session (connection, path, NULL, &error))
    paddock_test_bail ("Destroy: %s", error->message);
  if (s.read_at < 0)
    paddock_test_bail ("the session's terminal closed before any output");
  return (double) (s.read_at - start) / 1000.0;
}

/* The entry ListAgents found for @agent. */
static char *
agent_program (GDBusConnection *connection,
               const char      *agent)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockIpcManager1) manager = paddock_test_manager (connection);
  g_autoptr(GVariant) agents = NULL;

  if (!paddock_ipc_manager1_call_list_agents_sync (manager, &agents, NULL, &error))
    paddock_test_bail ("ListAgents: %s", error->message);
  for (gsize i = 0; i < g_variant_n_children (agents); i++)
    {
      g_autoptr(GVariant) entry = g_variant_get_child_value (agents, i);
      g_autoptr(GVariant) program = NULL;
      const char *name = NULL;

      if (!g_variant_lookup (entry, "name", "&s", &name) || !g_str_equal (name, agent))
        continue;
      program = g_variant_lookup_value (entry, "resolved", G_VARIANT_TYPE_BYTESTRING);
      if (program == NULL)
        {
          const char *why = "not found";

          g_variant_lookup (entry, "error", "&s", &why);
          paddock_test_bail ("%s: %s", agent, why);
        }
      return g_variant_dup_bytestring (program, NULL);
    }
  paddock_test_bail ("no agent preset %s", agent);
}

static void
install_fake_agent (const char *home)
{
  g_autofree char *fixture = g_build_filename (PADDOCK_SOURCE_ROOT, "tests", "fixtures", "fake-agent", NULL);
  g_autofree char *cmd = g_strdup_printf (
    "set -e; mkdir -p '%1$s/.npm-global/bin' '%1$s/.npm-global/lib/node_modules' '%1$s/.config/paddock/agents'; "
    "cp -R '%2$s' '%1$s/.npm-global/lib/node_modules/fake-agent'; "
    "ln -s ../lib/node_modules/fake-agent/bin/fake-agent.sh '%1$s/.npm-global/bin/fake-agent'; "
    "cp '%2$s/fake.json' '%1$s/.config/paddock/agents/fake.json'", home, fixture);

  if (system (cmd) != 0)
    paddock_test_bail ("could not install the fake agent into %s", home);
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *home = NULL;
  g_autofree char *agent = NULL;
  g_autofree char *workspace = NULL;
  g_autofree char *program = NULL;
  g_autofree char *config = NULL;
  g_autoptr(PaddockTestDaemon) daemon_under_test = NULL;
  g_autoptr(GArray) hand = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) paddock = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GPtrArray) hand_argv = g_ptr_array_new ();
  gint rounds = 15;
  gboolean own_home = FALSE;
  char **command = NULL;
  GDBusConnection *connection;
  GOptionEntry entries[] = {
    { "rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "Rounds (default 15)", "N" },
    { "home", 0, 0, G_OPTION_ARG_FILENAME, &home, "A HOME where the agent is installed", "DIR" },
    { "agent", 0, 0, G_OPTION_ARG_STRING, &agent, "The preset (default: the fake agent)", "NAME" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("[-- ARG…]");
  g_autoptr(GError) error = NULL;

  /* A failure destroys the session it made, then stops its daemon. */
  paddock_test_set_fail_mode (PADDOCK_TEST_FAIL_BAIL, "bench-agent-start");
  paddock_test_on_bail (free_daemon, &daemon_under_test);
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || rounds < 1)
    paddock_test_bail ("%s", error != NULL ? error->message : "--rounds is at least 1");
  for (int i = 1; i < argc; i++)
    if (g_str_equal (argv[i], "--"))
      {
        command = &argv[i + 1];
        break;
      }
  if (home == NULL)
    {
      home = g_dir_make_tmp ("paddock-bench-agent-XXXXXX", NULL);
      own_home = TRUE;
      install_fake_agent (home);
      g_free (agent);
      agent = g_strdup ("fake");
    }
  if (agent == NULL)
    paddock_test_bail ("--home needs --agent NAME");
  g_setenv ("HOME", home, TRUE);
  config = g_build_filename (home, ".config", NULL);
  g_setenv ("XDG_CONFIG_HOME", config, TRUE);
  g_setenv ("PADDOCK_AGENTS_DIR", PADDOCK_SOURCE_ROOT "/data/agents", TRUE);
  g_unsetenv ("NPM_CONFIG_PREFIX");
  if (g_getenv ("PADDOCK_BUILD_ROOT") == NULL)
    {
      g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
      g_autofree char *bench_dir = g_path_get_dirname (exe);
      g_autofree char *root = g_build_filename (bench_dir, "..", "..", NULL);

      g_setenv ("PADDOCK_BUILD_ROOT", root, TRUE);
    }
  workspace = g_dir_make_tmp ("paddock-bench-ws-XXXXXX", NULL);
  g_setenv ("PADDOCK_TEST_QUIET", "1", TRUE);
  daemon_under_test = paddock_test_daemon_new (NULL);
  connection = paddock_test_daemon_get_connection (daemon_under_test);
  program = agent_program (connection, agent);

  g_ptr_array_add (hand_argv, program);
  for (guint i = 0; command != NULL && command[i] != NULL; i++)
    if (i > 0)
      g_ptr_array_add (hand_argv, command[i]);
  g_ptr_array_add (hand_argv, NULL);

  /* One warm-up each, then interleaved, the order swapped each round. */
  for (int r = -1; r < rounds; r++)
    for (int turn = 0; turn < 2; turn++)
      {
        gboolean paddock_turn = (turn + MAX (r, 0)) % 2 == 0;
        double ms;

        g_usleep (PAUSE_MS * 1000);
        ms = paddock_turn ? paddock_ms (connection, workspace, agent, (const char * const *) command)
                          : by_hand_ms ((const char * const *) hand_argv->pdata);
        if (r >= 0)
          g_array_append_val (paddock_turn ? paddock : hand, ms);
      }

  printf ("agent %s (%s), %d rounds, median first output:\n", agent, program, rounds);
  printf ("  started by hand (fork + exec, output on a pipe)      %8.1f ms\n", bench_median (hand));
  printf ("  create --agent (safe, proxy, its home, a terminal)  %8.1f ms  (%.1fx)\n", bench_median (paddock),
          bench_median (paddock) / bench_median (hand));

  paddock_test_daemon_stop (daemon_under_test);
  if (own_home)
    {
      g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", home);
      if (system (cmd) != 0)
        g_printerr ("bench-agent-start: could not remove %s\n", home);
    }
  {
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", workspace);
    if (system (cmd) != 0)
      g_printerr ("bench-agent-start: could not remove %s\n", workspace);
  }
  return EXIT_SUCCESS;
}
