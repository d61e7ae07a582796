/* test-sandbox-pidns.c — a sandbox's PID namespace found and listed through its helper
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A stand-in for the sandbox helper: a child that enters a new PID
 * namespace (as root, or in a user namespace of its own) and forks its
 * pid 1, which forks one more. The namespace is found through the
 * helper; its listing is the helper and both processes inside, never the
 * test itself; once pid 1 is gone nothing is listed by the namespace's
 * number any more.
 */

#include "config.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-sandbox-pidns.h"

typedef struct
{
  pid_t helper;
  pid_t init;        /* as the host sees it */
  pid_t inner;       /* pid 1's child */
} Sandbox;

static gboolean
pids_contain (GArray *pids,
              pid_t   pid)
{
  for (guint i = 0; i < pids->len; i++)
    if (g_array_index (pids, pid_t, i) == pid)
      return TRUE;
  return FALSE;
}

/* Returns FALSE (and says why) where no PID namespace can be made. */
static gboolean
sandbox_start (Sandbox *sandbox)
{
  int ready[2];
  char byte;

  g_assert_no_errno (pipe (ready));
  sandbox->helper = fork ();
  g_assert_cmpint (sandbox->helper, >=, 0);
  if (sandbox->helper == 0)
    {
      pid_t init;

      close (ready[0]);
      if (unshare (CLONE_NEWPID) < 0 && unshare (CLONE_NEWUSER | CLONE_NEWPID) < 0)
        _exit (77);
      init = fork ();
      if (init < 0)
        _exit (1);
      if (init == 0)
        {
          /* Its pids are the namespace's: the test reads the host's from /proc. */
          pid_t inner = fork ();

          if (inner < 0)
            _exit (1);
          if (inner == 0)
            {
              pause ();
              _exit (0);
            }
          if (write (ready[1], "x", 1) != 1)
            _exit (1);
          pause ();
          _exit (0);
        }
      (void) waitpid (init, NULL, 0);
      _exit (0);
    }
  close (ready[1]);
  if (read (ready[0], &byte, 1) != 1)
    {
      int status = 0;

      close (ready[0]);
      g_assert_cmpint (waitpid (sandbox->helper, &status, 0), ==, sandbox->helper);
      g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 77);
      return FALSE;
    }
  close (ready[0]);
  return TRUE;
}

/* The only child of PID, as /proc lists it. */
static pid_t
only_child (pid_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/task/%d/children", (int) pid, (int) pid);
  g_autofree char *children = NULL;
  guint64 child;

  g_assert_true (g_file_get_contents (path, &children, NULL, NULL));
  g_assert_true (g_ascii_string_to_unsigned (g_strstrip (children), 10, 1, G_MAXINT, &child, NULL));
  return (pid_t) child;
}

static void
test_find_and_list (void)
{
  PaddockSandboxPidns pidns = { 0, };
  g_autofree char *own = g_file_read_link ("/proc/self/ns/pid", NULL);
  g_autoptr(GArray) pids = NULL;
  g_autoptr(GArray) after = NULL;
  Sandbox sandbox;
  const char *name;
  int status;

  if (!sandbox_start (&sandbox))
    {
      g_test_skip ("no PID namespace can be made here (unshare: neither as root nor in a user namespace)");
      return;
    }
  sandbox.init = only_child (sandbox.helper);
  sandbox.inner = only_child (sandbox.init);

  name = paddock_sandbox_pidns_find (&pidns, sandbox.helper);
  g_assert_nonnull (name);
  g_assert_true (g_str_has_prefix (name, "pid:["));
  g_assert_cmpstr (name, !=, own);
  g_assert_cmpint (pidns.init_pid, ==, sandbox.init);
  g_assert_cmpuint (pidns.init_start_time, !=, 0);
  /* Found once: the same answer without looking again. */
  g_assert_true (paddock_sandbox_pidns_find (&pidns, sandbox.helper) == name);

  pids = paddock_sandbox_pidns_list (&pidns, sandbox.helper, FALSE);
  g_assert_cmpuint (pids->len, ==, 3);
  g_assert_true (pids_contain (pids, sandbox.helper));
  g_assert_true (pids_contain (pids, sandbox.init));
  g_assert_true (pids_contain (pids, sandbox.inner));
  g_assert_false (pids_contain (pids, getpid ()));

  /* Pid 1 gone takes the namespace with it; the helper reaped, nothing. */
  g_assert_no_errno (kill (sandbox.init, SIGKILL));
  g_assert_cmpint (waitpid (sandbox.helper, &status, 0), ==, sandbox.helper);
  after = paddock_sandbox_pidns_list (&pidns, sandbox.helper, TRUE);
  g_assert_cmpuint (after->len, ==, 0);

  paddock_sandbox_pidns_clear (&pidns);
  g_assert_null (pidns.name);
  g_assert_cmpint (pidns.init_pid, ==, 0);
}

/* A helper with no child yet: nothing to find, only itself listed. */
static void
test_not_yet (void)
{
  PaddockSandboxPidns pidns = { 0, };
  g_autoptr(GArray) pids = NULL;
  pid_t helper = fork ();
  int status;

  g_assert_cmpint (helper, >=, 0);
  if (helper == 0)
    {
      pause ();
      _exit (0);
    }
  g_assert_null (paddock_sandbox_pidns_find (&pidns, helper));
  pids = paddock_sandbox_pidns_list (&pidns, helper, FALSE);
  g_assert_cmpuint (pids->len, ==, 1);
  g_assert_cmpint (g_array_index (pids, pid_t, 0), ==, helper);
  g_assert_null (paddock_sandbox_pidns_find (&pidns, 0));

  g_assert_no_errno (kill (helper, SIGKILL));
  g_assert_cmpint (waitpid (helper, &status, 0), ==, helper);
}

/* A helper whose one child is still in our namespace (a canary probe it
 * forked before pid 1, say): that child's namespace is the test's own,
 * and it must not be taken for the sandbox's, which would list (and
 * have the daemon signal) every process the test can see. */
static void
test_child_outside (void)
{
  PaddockSandboxPidns pidns = { 0, };
  g_autoptr(GArray) pids = NULL;
  int ready[2];
  char byte;
  pid_t helper;
  int status;

  g_assert_no_errno (pipe (ready));
  helper = fork ();
  g_assert_cmpint (helper, >=, 0);
  if (helper == 0)
    {
      pid_t probe;

      close (ready[0]);
      probe = fork ();
      if (probe < 0)
        _exit (1);
      if (probe == 0)
        {
          pause ();
          _exit (0);
        }
      if (write (ready[1], "x", 1) != 1)
        _exit (1);
      (void) waitpid (probe, NULL, 0);
      _exit (0);
    }
  close (ready[1]);
  g_assert_cmpint (read (ready[0], &byte, 1), ==, 1);
  close (ready[0]);

  g_assert_null (paddock_sandbox_pidns_find (&pidns, helper));
  g_assert_null (pidns.name);
  pids = paddock_sandbox_pidns_list (&pidns, helper, FALSE);
  g_assert_cmpuint (pids->len, ==, 1);
  g_assert_cmpint (g_array_index (pids, pid_t, 0), ==, helper);
  g_assert_false (pids_contain (pids, getpid ()));

  g_assert_no_errno (kill (only_child (helper), SIGKILL));
  g_assert_cmpint (waitpid (helper, &status, 0), ==, helper);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sandbox-pidns/find-and-list", test_find_and_list);
  g_test_add_func ("/sandbox-pidns/not-yet", test_not_yet);
  g_test_add_func ("/sandbox-pidns/child-outside", test_child_outside);
  return g_test_run ();
}
