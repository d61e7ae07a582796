/* test-sandbox.c — paddock-sandbox seen from inside and from outside
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Runs the built helper ($PADDOCK_BUILD_ROOT/daemon/sandbox/paddock-sandbox)
 * on a fresh temporary workspace per test. Each claim the helper makes is
 * checked by something the agent does inside and, where it matters, by
 * looking from outside (files, /proc). Runs as whoever runs the tests and,
 * through run-unprivileged.sh, as an unprivileged user. Where the kernel
 * refuses user namespaces every test skips with the helper's own reason.
 * The commands/ tests drive the control socket as the daemon does: spawn
 * and kill requests with fds attached, events read back one per message.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "../paddock-test-seccomp.h"

#define CANARY_NAME "PADDOCK_SANDBOX_TEST_CANARY"
#define CANARY_VALUE "canary-must-not-leak"
#define AGENT_PATH "PATH=/usr/local/bin:/usr/bin:/bin"

static guint count_marked (const char *marker);
static guint wait_marked_gone (const char *marker,
                               guint       timeout_ms);

static char *sandbox_path;
static char *userns_skip_reason;

typedef struct {
  char *workspace;
} Fixture;

static void
remove_tree (const char *path)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GFileEnumerator) children = NULL;
  GFileInfo *info;

  children = g_file_enumerate_children (file, G_FILE_ATTRIBUTE_STANDARD_NAME ","
                                        G_FILE_ATTRIBUTE_STANDARD_TYPE,
                                        G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS, NULL, NULL);
  while (children != NULL &&
         (info = g_file_enumerator_next_file (children, NULL, NULL)) != NULL)
    {
      g_autoptr(GFileInfo) owned = info;
      g_autofree char *child = g_build_filename (path, g_file_info_get_name (owned), NULL);

      if (g_file_info_get_file_type (owned) == G_FILE_TYPE_DIRECTORY)
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

static void
fixture_setup (Fixture       *fx,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  fx->workspace = g_dir_make_tmp ("paddock-sandbox-ws-XXXXXX", &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture       *fx,
                  gconstpointer  data)
{
  remove_tree (fx->workspace);
  g_clear_pointer (&fx->workspace, g_free);
}

static gboolean
skip_without_userns (void)
{
  if (userns_skip_reason == NULL)
    return FALSE;
  g_test_skip (userns_skip_reason);
  return TRUE;
}

/* argv of the helper: OPTIONS (NULL-terminated) then "--" then CMD. */
static GPtrArray *
helper_argv (const char         *workspace,
             const char * const *options,
             const char * const *cmd)
{
  GPtrArray *argv = g_ptr_array_new_with_free_func (g_free);

  g_ptr_array_add (argv, g_strdup (sandbox_path));
  if (workspace != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("--workspace"));
      g_ptr_array_add (argv, g_strdup (workspace));
    }
  for (guint i = 0; options != NULL && options[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (options[i]));
  if (cmd != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("--"));
      for (guint i = 0; cmd[i] != NULL; i++)
        g_ptr_array_add (argv, g_strdup (cmd[i]));
    }
  g_ptr_array_add (argv, NULL);
  return argv;
}

static int
shell_status (GSubprocess *proc)
{
  if (g_subprocess_get_if_exited (proc))
    return g_subprocess_get_exit_status (proc);
  if (g_subprocess_get_if_signaled (proc))
    return 128 + g_subprocess_get_term_sig (proc);
  return -1;
}

/* Runs the helper to completion; returns its exit code (128+N if killed). */
static int
run_helper (const char         *workspace,
            const char * const *options,
            const char * const *cmd,
            char              **out,
            char              **err)
{
  g_autoptr(GPtrArray) argv = helper_argv (workspace, options, cmd);
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *stdout_text = NULL;
  g_autofree char *stderr_text = NULL;

  proc = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (proc, NULL, NULL, &stdout_text, &stderr_text, &error);
  g_assert_no_error (error);
  if (stderr_text != NULL && stderr_text[0] != '\0')
    g_test_message ("helper stderr: %s", stderr_text);
  if (out != NULL)
    *out = g_steal_pointer (&stdout_text);
  if (err != NULL)
    *err = g_steal_pointer (&stderr_text);
  return shell_status (proc);
}

static int
run_sh (const char  *workspace,
        const char  *script,
        char       **out)
{
  const char *options[] = { "--env", AGENT_PATH, "--env", "HOME=/home/agent", NULL };
  const char *cmd[] = { "sh", "-c", script, "sh", workspace, NULL };

  return run_helper (workspace, options, cmd, out, NULL);
}

/* ---- identity: pid, namespaces, init ----------------------------------- */

static void
test_pid_and_namespaces (Fixture       *fx,
                         gconstpointer  data)
{
  static const char *const ns[] = { "user", "mnt", "pid" };
  g_autofree char *out = NULL;
  g_auto(GStrv) lines = NULL;

  if (skip_without_userns ())
    return;

  g_assert_cmpint (run_sh (fx->workspace,
                           "echo $$; readlink /proc/self/ns/user /proc/self/ns/mnt /proc/self/ns/pid;"
                           "cat /proc/1/comm; cat /proc/$$/status | grep '^PPid:'",
                           &out), ==, 0);
  lines = g_strsplit (out, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), >=, 6);

  /* The agent is the first child of our init: pid 2, parent 1. */
  g_assert_cmpstr (lines[0], ==, "2");
  g_assert_cmpstr (lines[4], ==, "paddock-sandbox");
  g_assert_true (g_str_has_prefix (lines[5], "PPid:"));
  g_assert_cmpstr (g_strstrip (lines[5] + 5), ==, "1");

  for (guint i = 0; i < G_N_ELEMENTS (ns); i++)
    {
      g_autofree char *link = g_strdup_printf ("/proc/self/ns/%s", ns[i]);
      g_autofree char *ours = g_file_read_link (link, NULL);

      g_assert_nonnull (ours);
      g_assert_true (g_str_has_prefix (lines[1 + i], ns[i]));
      g_assert_cmpstr (lines[1 + i], !=, ours);
    }
}

static void
test_fds_and_reaping (Fixture       *fx,
                      gconstpointer  data)
{
  const char *options[] = { "--control-fd", "3", "--env", AGENT_PATH, NULL };
  const char *cmd[] = {
    "sh", "-c",
    /* An orphan that exits: re-parented to pid 1, which must reap it. */
    "sh -c 'sleep 0.1 & exit 0'; sleep 0.5;"
    /* In a subshell, into a file: the shell itself opens nothing while ls
     * reads its list (its end of a pipe to tr could still be open then,
     * seen on a loaded machine; a redirection of its own shows as fd 10). */
    "(ls /proc/$$/fd > /tmp/fds); tr '\\n' ' ' < /tmp/fds; echo;"
    "for f in /proc/[0-9]*/stat; do read pid comm state rest < $f; echo \"$state\"; done | grep -c Z",
    NULL
  };
  g_autoptr(GPtrArray) argv = helper_argv (fx->workspace, options, cmd);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  int pair[2];
  int extra;

  if (skip_without_userns ())
    return;

  /* The control fd and an fd the helper merely inherited (fd 7, without
   * CLOEXEC): neither may reach the agent. */
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), ==, 0);
  g_subprocess_launcher_take_fd (launcher, pair[1], 3);
  extra = open ("/dev/null", O_RDONLY);
  g_assert_cmpint (extra, >=, 0);
  g_subprocess_launcher_take_fd (launcher, extra, 7);
  proc = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_clear_object (&launcher);
  g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  close (pair[0]);

  g_assert_cmpint (shell_status (proc), ==, 1);   /* grep -c found no zombie */
  g_assert_cmpstr (out, ==, "0 1 2 \n0\n");
}

/* Dies with its parent before setup is done (always) and after it only with
 * --die-with-parent: otherwise a session must outlive a daemon restart. */
static void
test_parent_death (Fixture       *fx,
                   gconstpointer  data)
{
  gboolean die_with_parent = GPOINTER_TO_INT (data);
  g_autofree char *marker = g_strdup_printf ("pdkmark-%08x%08x", g_random_int (), g_random_int ());
  g_autofree char *script = g_strdup_printf ("\"$@\" >/dev/null & echo $!; wait");
  g_autofree char *up = g_build_filename (fx->workspace, "up", NULL);
  const char *options[] = { "--env", AGENT_PATH, die_with_parent ? "--die-with-parent" : "--env",
                            die_with_parent ? NULL : "X=1", NULL };
  const char *cmd[] = { "sh", "-c", "touch up; sleep 1000; :", marker, NULL };
  g_autoptr(GPtrArray) helper = helper_argv (fx->workspace, options, cmd);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocess) parent = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GDataInputStream) lines = NULL;
  g_autofree char *pid_line = NULL;
  gint64 deadline;
  int helper_pid;

  if (skip_without_userns ())
    return;

  g_ptr_array_add (argv, (char *) "sh");
  g_ptr_array_add (argv, (char *) "-c");
  g_ptr_array_add (argv, script);
  g_ptr_array_add (argv, (char *) "sh");
  for (guint i = 0; g_ptr_array_index (helper, i) != NULL; i++)
    g_ptr_array_add (argv, g_ptr_array_index (helper, i));
  g_ptr_array_add (argv, NULL);

  parent = g_subprocess_newv ((const char * const *) argv->pdata, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
  g_assert_no_error (error);
  lines = g_data_input_stream_new (g_subprocess_get_stdout_pipe (parent));
  pid_line = g_data_input_stream_read_line (lines, NULL, NULL, &error);
  g_assert_no_error (error);
  helper_pid = atoi (pid_line);
  g_assert_cmpint (helper_pid, >, 1);

  deadline = g_get_monotonic_time () + 30 * G_TIME_SPAN_SECOND;
  while (!g_file_test (up, G_FILE_TEST_EXISTS))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (20 * G_TIME_SPAN_MILLISECOND);
    }

  g_subprocess_force_exit (parent);
  g_subprocess_wait (parent, NULL, &error);
  g_assert_no_error (error);

  if (die_with_parent)
    {
      g_assert_cmpuint (wait_marked_gone (marker, 5000), ==, 0);
    }
  else
    {
      /* Still there a while later: the helper, pid 1 and the agent. */
      g_usleep (300 * G_TIME_SPAN_MILLISECOND);
      g_assert_cmpuint (count_marked (marker), ==, 3);
      g_assert_cmpint (kill (helper_pid, SIGKILL), ==, 0);
      g_assert_cmpuint (wait_marked_gone (marker, 5000), ==, 0);
    }
}

/* ---- the root view ------------------------------------------------------- */

static void
test_workspace_shared (Fixture       *fx,
                       gconstpointer  data)
{
  g_autofree char *out = NULL;
  g_autofree char *outside = g_build_filename (fx->workspace, "from-outside", NULL);
  g_autofree char *inside = g_build_filename (fx->workspace, "from-inside", NULL);
  g_autofree char *contents = NULL;
  g_autofree char *expected = NULL;

  if (skip_without_userns ())
    return;

  g_assert_true (g_file_set_contents (outside, "hello in", -1, NULL));
  g_assert_cmpint (run_sh (fx->workspace,
                           "pwd; cat \"$1/from-outside\"; echo; echo out > \"$1/from-inside\"",
                           &out), ==, 0);
  expected = g_strdup_printf ("%s\nhello in\n", fx->workspace);
  g_assert_cmpstr (out, ==, expected);

  /* Same absolute path, and the write landed in the real folder. */
  g_assert_true (g_file_get_contents (inside, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "out\n");
}

static void
test_system_read_only (Fixture       *fx,
                       gconstpointer  data)
{
  g_autofree char *out = NULL;

  if (skip_without_userns ())
    return;

  /* Creating a file is refused by the mount (EROFS) before any permission
   * check, so the answer is the same as root and as a user. Also as root
   * inside, the agent holds no capability to remount anything. */
  g_assert_cmpint (run_sh (fx->workspace,
                           "for p in /usr /etc /bin /lib /; do"
                           "  if touch \"$p/paddock-probe\" 2>/tmp/err; then echo \"writable $p\";"
                           "  elif grep -q 'Read-only file system' /tmp/err; then echo \"erofs $p\";"
                           "  else cat /tmp/err; fi;"
                           "done;"
                           "mount -o remount,rw /usr 2>/dev/null && echo remounted;"
                           "grep -E '^(CapEff|CapBnd):' /proc/self/status",
                           &out), ==, 0);
  g_assert_cmpstr (out, ==,
                   "erofs /usr\nerofs /etc\nerofs /bin\nerofs /lib\nerofs /\n"
                   "CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n");
  g_assert_false (g_file_test ("/usr/paddock-probe", G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test ("/etc/paddock-probe", G_FILE_TEST_EXISTS));
}

static void
test_home_invisible (Fixture       *fx,
                     gconstpointer  data)
{
  g_autofree char *out = NULL;
  g_autofree char *script = NULL;
  const char *real_home = g_get_home_dir ();

  if (skip_without_userns ())
    return;

  g_assert_false (g_str_has_prefix (fx->workspace, real_home) &&
                  fx->workspace[strlen (real_home)] == '/');

  script = g_strdup_printf ("test -e '%s' && echo 'real home visible';"
                            "test -e /root && echo '/root visible';"
                            "echo \"HOME=$HOME\"; ls -A \"$HOME\"; touch \"$HOME/x\" && echo home-writable",
                            real_home);
  g_assert_cmpint (run_sh (fx->workspace, script, &out), ==, 0);
  g_assert_cmpstr (out, ==, "HOME=/home/agent\nhome-writable\n");
}

static void
test_tmp_private (Fixture       *fx,
                  gconstpointer  data)
{
  g_autofree char *out = NULL;
  g_autofree char *canary = NULL;
  g_autofree char *script = NULL;
  g_autoptr(GError) error = NULL;
  int fd;

  if (skip_without_userns ())
    return;

  fd = g_file_open_tmp ("paddock-sandbox-tmp-XXXXXX", &canary, &error);
  g_assert_no_error (error);
  close (fd);
  g_assert_true (g_str_has_prefix (canary, "/tmp/"));

  script = g_strdup_printf ("test -e '%s' && echo 'host /tmp visible';"
                            "ls -A /tmp | grep -v '^paddock-sandbox-ws-' ;"
                            "echo inside > /tmp/paddock-sandbox-inside && echo tmp-writable",
                            canary);
  g_assert_cmpint (run_sh (fx->workspace, script, &out), ==, 0);
  g_unlink (canary);
  /* Only the workspace's own mount point is in the private /tmp. */
  g_assert_cmpstr (out, ==, "tmp-writable\n");
  g_assert_false (g_file_test ("/tmp/paddock-sandbox-inside", G_FILE_TEST_EXISTS));
}

static void
test_environment_exact (Fixture       *fx,
                        gconstpointer  data)
{
  const char *options[] = { "--env", AGENT_PATH, "--env", "FOO=bar baz", NULL };
  const char *cmd[] = { "env", NULL };
  g_autofree char *out = NULL;

  if (skip_without_userns ())
    return;

  g_assert_cmpstr (g_getenv (CANARY_NAME), ==, CANARY_VALUE);
  /* Exactly what was passed, in order, and nothing of ours. */
  g_assert_cmpint (run_helper (fx->workspace, options, cmd, &out, NULL), ==, 0);
  g_assert_cmpstr (out, ==, AGENT_PATH "\nFOO=bar baz\n");
}

/* ---- exits, errors --------------------------------------------------------- */

static void
test_exit_status (Fixture       *fx,
                  gconstpointer  data)
{
  if (skip_without_userns ())
    return;

  g_assert_cmpint (run_sh (fx->workspace, "exit 0", NULL), ==, 0);
  g_assert_cmpint (run_sh (fx->workspace, "exit 42", NULL), ==, 42);
  g_assert_cmpint (run_sh (fx->workspace, "kill -KILL $$", NULL), ==, 128 + SIGKILL);
  g_assert_cmpint (run_sh (fx->workspace, "kill -TERM $$", NULL), ==, 128 + SIGTERM);
}

static void
assert_fails (const char         *workspace,
              const char * const *options,
              const char * const *cmd,
              int                 code,
              const char         *message)
{
  g_autofree char *err = NULL;

  g_assert_cmpint (run_helper (workspace, options, cmd, NULL, &err), ==, code);
  g_assert_true (g_str_has_prefix (err, "paddock-sandbox: "));
  g_assert_nonnull (strstr (err, message));
  /* One line. */
  g_assert_cmpint (strchr (err, '\n') - err, ==, (long) strlen (err) - 1);
}

static void
test_bad_input (Fixture       *fx,
                gconstpointer  data)
{
  const char *true_cmd[] = { "true", NULL };
  const char *empty_cmd[] = { NULL };
  const char *missing_cmd[] = { "paddock-no-such-program", NULL };
  const char *empty_string_cmd[] = { "", NULL };
  const char *bad_profile[] = { "--profile", "lax", NULL };
  const char *bad_fd[] = { "--control-fd", "987", NULL };
  const char *bad_env[] = { "--env", "NOEQUALS", NULL };
  const char *protect_up[] = { "--protect", "../outside", NULL };
  const char *protect_absolute[] = { "--protect", "/etc", NULL };
  const char *protect_empty_part[] = { "--protect", ".git//hooks", NULL };
  const char *expose_no_home[] = { "--expose", ".config", NULL };
  const char *expose_up[] = { "--real-home", "/tmp", "--expose", "../etc", NULL };
  g_autofree char *missing = g_build_filename (fx->workspace, "missing", NULL);
  g_autofree char *file = g_build_filename (fx->workspace, "file", NULL);

  g_assert_true (g_file_set_contents (file, "", -1, NULL));

  assert_fails (missing, NULL, true_cmd, 66, "is not a folder");
  assert_fails (file, NULL, true_cmd, 66, "is not a folder");
  assert_fails (NULL, NULL, true_cmd, 64, "--workspace");
  assert_fails (fx->workspace, NULL, NULL, 64, "no command");
  assert_fails (fx->workspace, NULL, empty_cmd, 64, "no command");
  assert_fails (fx->workspace, NULL, empty_string_cmd, 64, "empty");
  assert_fails (fx->workspace, bad_profile, true_cmd, 64, "unknown profile");
  assert_fails (fx->workspace, bad_fd, true_cmd, 64, "--control-fd");
  assert_fails (fx->workspace, bad_env, true_cmd, 64, "--env");
  /* Protected and exposed paths stay relative to their folder. */
  assert_fails (fx->workspace, protect_up, true_cmd, 64, "--protect");
  assert_fails (fx->workspace, protect_absolute, true_cmd, 64, "--protect");
  assert_fails (fx->workspace, protect_empty_part, true_cmd, 64, "--protect");
  assert_fails (fx->workspace, expose_no_home, true_cmd, 64, "--expose");
  assert_fails (fx->workspace, expose_up, true_cmd, 64, "--expose");
  assert_fails ("/usr", NULL, true_cmd, 66, "overlaps");
  assert_fails ("/", NULL, true_cmd, 66, "overlaps");

  if (skip_without_userns ())
    return;
  assert_fails (fx->workspace, NULL, missing_cmd, 127, "cannot run paddock-no-such-program");
}

/* Where the kernel refuses user namespaces, the helper says why and runs
 * nothing. Made real in a user namespace of our own whose
 * user.max_user_namespaces is 0 (the limit is per user namespace). */
static void
test_no_userns (Fixture       *fx,
                gconstpointer  data)
{
  g_autofree char *unshare = g_find_program_in_path ("unshare");
  g_autofree char *script = NULL;
  g_autofree char *ran = g_build_filename (fx->workspace, "ran", NULL);
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  if (skip_without_userns ())
    return;
  if (unshare == NULL)
    {
      g_test_skip ("unshare(1) is not installed");
      return;
    }

  script = g_strdup_printf ("echo 0 > /proc/sys/user/max_user_namespaces || exit 77;"
                            "exec '%s' --workspace '%s' -- touch '%s'",
                            sandbox_path, fx->workspace, ran);
  proc = g_subprocess_launcher_spawn (launcher, &error, unshare, "-Ur", "sh", "-c", script, NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, &err, &error);
  g_assert_no_error (error);
  if (shell_status (proc) == 77)
    {
      g_test_skip ("cannot lower user.max_user_namespaces in a user namespace here");
      return;
    }
  g_test_message ("helper stderr: %s", err);
  g_assert_cmpint (shell_status (proc), ==, 125);
  g_assert_true (g_str_has_prefix (err, "paddock-sandbox: user namespaces are unavailable: "));
  g_assert_nonnull (strstr (err, "user.max_user_namespaces"));
  g_assert_false (g_file_test (ran, G_FILE_TEST_EXISTS));
}

/* ---- control fd and PTY ------------------------------------------------- */

static char *
recv_message (int fd)
{
  char buf[512];
  ssize_t n;

  do
    n = recv (fd, buf, sizeof buf - 1, 0);
  while (n < 0 && errno == EINTR);
  g_assert_cmpint (n, >, 0);
  buf[n] = '\0';
  return g_strdup (buf);
}

static void
test_control_fd (Fixture       *fx,
                 gconstpointer  data)
{
  const char *options[] = { "--control-fd", "3", NULL };
  const char *cmd[] = { "sh", "-c", "exit 5", NULL };
  g_autoptr(GPtrArray) argv = helper_argv (fx->workspace, options, cmd);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *started = NULL;
  g_autofree char *exited = NULL;
  paddock_autofd int ours = -1;
  int pair[2];

  if (skip_without_userns ())
    return;

  g_assert_cmpint (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), ==, 0);
  ours = pair[0];
  g_subprocess_launcher_take_fd (launcher, pair[1], 3);
  proc = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_clear_object (&launcher);   /* closes our copy of their end */

  started = recv_message (ours);
  exited = recv_message (ours);
  g_subprocess_wait (proc, NULL, &error);
  g_assert_no_error (error);

  g_assert_true (g_str_has_prefix (started, "{\"event\":\"started\",\"pid\":2,\"boundary\":{"));
  g_assert_cmpstr (exited, ==, "{\"event\":\"exited\",\"pid\":2,\"status\":5}\n");
  g_assert_cmpint (shell_status (proc), ==, 5);
  /* Nothing more, and the sandbox's end is closed. */
  g_assert_cmpint (recv (ours, (char[8]) { 0 }, 8, 0), ==, 0);
}

static void
test_pty (Fixture       *fx,
          gconstpointer  data)
{
  const char *options[] = { "--pty-fd", "3", "--env", AGENT_PATH, NULL };
  const char *cmd[] = {
    "sh", "-c",
    "test -t 0 && test -t 1 && test -t 2 && echo TTY-OK;"
    "read pid comm state ppid pgrp sid tty tpgid rest < /proc/$$/stat;"
    "echo \"IDS:$pid:$pgrp:$sid:$tpgid\"; tty",
    NULL
  };
  g_autoptr(GPtrArray) argv = helper_argv (fx->workspace, options, cmd);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) output = g_string_new (NULL);
  paddock_autofd int master = -1;
  int slave;

  if (skip_without_userns ())
    return;

  master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  g_assert_cmpint (master, >=, 0);
  g_assert_cmpint (grantpt (master), ==, 0);
  g_assert_cmpint (unlockpt (master), ==, 0);
  slave = open (ptsname (master), O_RDWR | O_NOCTTY | O_CLOEXEC);
  g_assert_cmpint (slave, >=, 0);

  g_subprocess_launcher_take_fd (launcher, slave, 3);
  proc = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_clear_object (&launcher);

  /* Read until every slave is closed (EIO): the agent and pid 1 are gone. */
  for (;;)
    {
      char buf[256];
      ssize_t n = read (master, buf, sizeof buf);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      g_string_append_len (output, buf, n);
    }
  g_subprocess_wait (proc, NULL, &error);
  g_assert_no_error (error);
  g_test_message ("pty output: %s", output->str);

  g_assert_cmpint (shell_status (proc), ==, 0);
  g_assert_nonnull (strstr (output->str, "TTY-OK"));
  /* Session leader (sid = pid), its own group, and the foreground group of
   * its controlling terminal (tpgid). */
  g_assert_nonnull (strstr (output->str, "IDS:2:2:2:2"));
  g_assert_nonnull (strstr (output->str, "/dev/console"));
}

/* ---- teardown of whole process trees ---------------------------------- */

/* $1 marker, $2 a pattern matching it but not itself, $3 exit|wait.
 * Starts, from the agent: a setsid'd process, a double-forked orphan, one
 * ignoring SIGTERM and a plain background child, then counts from inside. */
static const char tree_script[] =
  "m=\"$1\"\n"
  "setsid sh -c 'sleep 1000; :' \"$m\" &\n"
  "sh -c 'sh -c \"sleep 1000; :\" \"$1\" & exit 0' \"$m\" \"$m\"\n"
  "sh -c 'trap \"\" TERM; sleep 1000; :' \"$m\" &\n"
  "sh -c 'sleep 1000; :' \"$m\" &\n"
  "i=0; n=0\n"
  "while [ $i -lt 400 ]; do\n"
  "  n=$(grep -l -a -s -e \"$2\" /proc/[0-9]*/cmdline | wc -l)\n"
  "  [ \"$n\" -ge 5 ] && break\n"
  "  sleep 0.05; i=$((i+1))\n"
  "done\n"
  "echo $n > count.tmp && mv count.tmp count\n"
  "[ \"$3\" = exit ] && exit 7\n"
  "sleep 1000; :\n";

/* Processes on the whole machine whose command line holds MARKER. */
static guint
count_marked (const char *marker)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc", 0, NULL);
  const char *name;
  guint count = 0;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *cmdline = NULL;
      gsize len = 0;

      if (!g_ascii_isdigit (name[0]))
        continue;
      path = g_strdup_printf ("/proc/%s/cmdline", name);
      if (!g_file_get_contents (path, &cmdline, &len, NULL))
        continue;   /* gone meanwhile */
      if (memmem (cmdline, len, marker, strlen (marker)) != NULL)
        count++;
    }
  return count;
}

/* Waits up to TIMEOUT_MS for the number of marked processes to reach 0. */
static guint
wait_marked_gone (const char *marker,
                  guint       timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + timeout_ms * G_TIME_SPAN_MILLISECOND;
  guint n;

  while ((n = count_marked (marker)) > 0 && g_get_monotonic_time () < deadline)
    g_usleep (20 * G_TIME_SPAN_MILLISECOND);
  return n;
}

typedef enum { END_EXIT, END_SIGKILL, END_SIGTERM } TreeEnd;

static void
test_tree_teardown (Fixture       *fx,
                    gconstpointer  data)
{
  TreeEnd end = GPOINTER_TO_INT (data);
  g_autofree char *marker = g_strdup_printf ("pdkmark-%08x%08x", g_random_int (), g_random_int ());
  g_autofree char *pattern = g_strdup_printf ("pdkmar[k]-%s", marker + strlen ("pdkmark-"));
  g_autofree char *script = g_build_filename (fx->workspace, "tree.sh", NULL);
  g_autofree char *count_file = g_build_filename (fx->workspace, "count", NULL);
  g_autofree char *count_text = NULL;
  const char *options[] = { "--env", AGENT_PATH, NULL };
  const char *cmd[] = { "sh", script, marker, pattern, end == END_EXIT ? "exit" : "wait", NULL };
  g_autoptr(GPtrArray) argv = helper_argv (fx->workspace, options, cmd);
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  gint64 deadline;

  if (skip_without_userns ())
    return;

  g_assert_true (g_file_set_contents (script, tree_script, -1, NULL));
  proc = g_subprocess_newv ((const char * const *) argv->pdata, G_SUBPROCESS_FLAGS_NONE, &error);
  g_assert_no_error (error);

  /* The tree is up once the agent has counted it from inside. */
  deadline = g_get_monotonic_time () + 30 * G_TIME_SPAN_SECOND;
  while (!g_file_get_contents (count_file, &count_text, NULL, NULL))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (20 * G_TIME_SPAN_MILLISECOND);
    }
  /* The agent and its four children, seen from inside ... */
  g_assert_cmpint (atoi (count_text), >=, 5);

  switch (end)
    {
    case END_EXIT:
      break;
    case END_SIGKILL:
      /* ... and from outside, also the helper and its pid 1. */
      g_assert_cmpuint (count_marked (marker), >=, 7);
      g_subprocess_force_exit (proc);
      break;
    case END_SIGTERM:
      g_assert_cmpuint (count_marked (marker), >=, 7);
      g_subprocess_send_signal (proc, SIGTERM);
      break;
    default:
      g_assert_not_reached ();
    }

  g_subprocess_wait (proc, NULL, &error);
  g_assert_no_error (error);

  switch (end)
    {
    case END_EXIT:
      g_assert_cmpint (shell_status (proc), ==, 7);
      /* When the helper has exited, pid 1 has, and the kernel kills and
       * reaps a namespace's members before its init is reaped: nothing left,
       * not even briefly. */
      g_assert_cmpuint (count_marked (marker), ==, 0);
      break;
    case END_SIGTERM:
      /* Forwarded to the agent's group; the TERM-ignoring one goes with pid 1. */
      g_assert_cmpint (shell_status (proc), ==, 128 + SIGTERM);
      g_assert_cmpuint (count_marked (marker), ==, 0);
      break;
    case END_SIGKILL:
      /* The helper died first; pid 1 follows by PR_SET_PDEATHSIG, then the
       * rest: asynchronous, so allow a little time. */
      g_assert_cmpint (shell_status (proc), ==, 128 + SIGKILL);
      g_assert_cmpuint (wait_marked_gone (marker, 5000), ==, 0);
      break;
    default:
      g_assert_not_reached ();
    }
}

/* ---- extra commands over the control socket ------------------------------ */

#define COMMAND_ENV "\"env\":[\"" AGENT_PATH "\"]"

typedef struct {
  GSubprocess *proc;
  int ctl;
} Session;

/* A session whose agent just sleeps, with a SEQPACKET control socket; the
 * "started" event is consumed. Helper stderr is piped to check notes. */
static void
session_start_full (Session    *s,
                    const char *workspace,
                    const char *profile)
{
  /* --die-with-parent: a failing test must not leave sessions behind. */
  const char *options[] = { "--control-fd", "3", "--env", AGENT_PATH, "--die-with-parent",
                            "--profile", profile, NULL };
  const char *cmd[] = { "sleep", "100000", NULL };
  g_autoptr(GPtrArray) argv = helper_argv (workspace, options, cmd);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GError) error = NULL;
  g_autofree char *started = NULL;
  int pair[2];

  g_assert_cmpint (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), ==, 0);
  s->ctl = pair[0];
  g_subprocess_launcher_take_fd (launcher, pair[1], 3);
  s->proc = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_clear_object (&launcher);

  started = recv_message (s->ctl);
  if (g_str_equal (profile, "safe"))
    g_assert_true (g_str_has_prefix (started, "{\"event\":\"started\",\"pid\":2,\"boundary\":{"));
  else
    g_assert_true (g_str_has_prefix (started, "{\"event\":\"started\",\"pid\":"));
}

static void
session_start (Session    *s,
               const char *workspace)
{
  session_start_full (s, workspace, "safe");
}

/* Ends the session (SIGKILL to the helper); returns its stderr. */
static char *
session_stop (Session *s)
{
  g_autoptr(GError) error = NULL;
  char *err = NULL;

  g_subprocess_force_exit (s->proc);
  g_subprocess_communicate_utf8 (s->proc, NULL, NULL, NULL, &err, &error);
  g_assert_no_error (error);
  g_clear_object (&s->proc);
  close (s->ctl);
  s->ctl = -1;
  if (err != NULL && err[0] != '\0')
    g_test_message ("helper stderr: %s", err);
  return err;
}

/* Requests are written below in JSON for readability and sent as the
 * sandbox takes them: a serialized a{sv} (see docs/sandbox-protocol.md). Members
 * get the sandbox's types ("op" s, "id" u, "signal" i, "cwd" ay, "argv" and
 * "env" aay, "tty" b) when their JSON value fits; a value that does not
 * (an "id" of -1, an array of numbers) keeps a type of its own, which the
 * sandbox must refuse. Text that is not a JSON object goes as it is. */
static GBytes *
request_bytes (const char *json)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_auto(GVariantBuilder) dict = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) request = NULL;
  g_autoptr(GList) members = NULL;
  JsonObject *object;

  if (!json_parser_load_from_data (parser, json, -1, NULL) ||
      !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return g_bytes_new (json, strlen (json));

  object = json_node_get_object (json_parser_get_root (parser));
  members = json_object_get_members (object);
  for (GList *l = members; l != NULL; l = l->next)
    {
      const char *name = l->data;
      JsonNode *node = json_object_get_member (object, name);
      GVariant *value = NULL;

      if (JSON_NODE_HOLDS_ARRAY (node))
        {
          JsonArray *array = json_node_get_array (node);
          g_autoptr(GPtrArray) strings = g_ptr_array_new ();
          gboolean all_strings = TRUE;

          for (guint i = 0; i < json_array_get_length (array); i++)
            {
              JsonNode *item = json_array_get_element (array, i);

              if (json_node_get_value_type (item) != G_TYPE_STRING)
                all_strings = FALSE;
              else
                g_ptr_array_add (strings, (gpointer) json_node_get_string (item));
            }
          g_ptr_array_add (strings, NULL);
          value = all_strings
                  ? g_variant_new_bytestring_array ((const char * const *) strings->pdata, -1)
                  : json_gvariant_deserialize (node, NULL, NULL);
        }
      else if (json_node_get_value_type (node) == G_TYPE_INT64)
        {
          gint64 v = json_node_get_int (node);

          if (g_str_equal (name, "id") && v >= 0 && v <= G_MAXUINT32)
            value = g_variant_new_uint32 ((guint32) v);
          else if (g_str_equal (name, "signal") && v >= G_MININT32 && v <= G_MAXINT32)
            value = g_variant_new_int32 ((gint32) v);
          else
            value = g_variant_new_int64 (v);
        }
      else if (json_node_get_value_type (node) == G_TYPE_STRING)
        value = g_str_equal (name, "cwd") ? g_variant_new_bytestring (json_node_get_string (node))
                                          : g_variant_new_string (json_node_get_string (node));
      else if (json_node_get_value_type (node) == G_TYPE_BOOLEAN)
        value = g_variant_new_boolean (json_node_get_boolean (node));
      else
        value = json_gvariant_deserialize (node, NULL, NULL);
      g_assert_nonnull (value);
      g_variant_builder_add (&dict, "{sv}", name, value);
    }
  request = g_variant_ref_sink (g_variant_builder_end (&dict));
  return g_variant_get_data_as_bytes (request);
}

static void
send_request (int         ctl,
              const char *json,
              const int  *fds,
              guint       n_fds)
{
  g_autoptr(GBytes) bytes = request_bytes (json);
  union {
    struct cmsghdr align;
    char space[CMSG_SPACE (sizeof (int) * 8)];
  } control;
  struct iovec iov = { .iov_base = (void *) g_bytes_get_data (bytes, NULL), .iov_len = g_bytes_get_size (bytes) };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

  g_assert_cmpuint (n_fds, <=, 8);
  if (n_fds > 0)
    {
      struct cmsghdr *c;

      memset (&control, 0, sizeof control);
      msg.msg_control = control.space;
      msg.msg_controllen = CMSG_SPACE (sizeof (int) * n_fds);
      c = CMSG_FIRSTHDR (&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int) * n_fds);
      memcpy (CMSG_DATA (c), fds, sizeof (int) * n_fds);
    }
  g_assert_cmpint (sendmsg (ctl, &msg, MSG_NOSIGNAL), ==, (ssize_t) g_bytes_get_size (bytes));
}

/* The next event, within 30 s. */
static char *
recv_event (int ctl)
{
  struct pollfd pfd = { .fd = ctl, .events = POLLIN, .revents = 0 };

  g_assert_cmpint (poll (&pfd, 1, 30000), ==, 1);
  return recv_message (ctl);
}

static void
expect_event (int         ctl,
              const char *expected)
{
  g_autofree char *event = recv_event (ctl);
  g_assert_cmpstr (event, ==, expected);
}

/* "spawned" for ID; returns the pid. */
static int
expect_spawned (int     ctl,
                guint32 id)
{
  g_autofree char *event = recv_event (ctl);
  g_autofree char *prefix = g_strdup_printf ("{\"event\":\"spawned\",\"id\":%u,\"pid\":", id);

  g_test_message ("event: %s", event);

  g_assert_true (g_str_has_prefix (event, prefix));
  g_assert_true (g_str_has_suffix (event, "}\n"));
  return atoi (event + strlen (prefix));
}

/* "spawn-failed" for ID with ERR; returns the message's JSON text. */
static char *
expect_spawn_failed (int     ctl,
                     guint32 id,
                     int     err)
{
  g_autofree char *event = recv_event (ctl);
  g_autofree char *prefix = g_strdup_printf ("{\"event\":\"spawn-failed\",\"id\":%u,\"errno\":%d,\"message\":\"",
                                             id, err);

  g_test_message ("event: %s", event);
  g_assert_true (g_str_has_prefix (event, prefix));
  return g_strdup (event + strlen (prefix));
}

static void
expect_exited (int         ctl,
               guint32     id,
               const char *status)
{
  g_autofree char *expected = g_strdup_printf ("{\"event\":\"command-exited\",\"id\":%u,%s}\n", id, status);
  expect_event (ctl, expected);
}

/* {"op":"spawn",...} for a shell script, with the agent's PATH. */
static char *
spawn_sh_json (guint32     id,
               const char *script,
               const char *cwd,
               gboolean    tty)
{
  g_autofree char *escaped = g_strescape (script, NULL);
  g_autofree char *cwd_member = cwd != NULL ? g_strdup_printf (",\"cwd\":\"%s\"", cwd) : g_strdup ("");

  return g_strdup_printf ("{\"op\":\"spawn\",\"id\":%u,\"argv\":[\"sh\",\"-c\",\"%s\"]%s,%s%s}",
                          id, escaped, cwd_member, COMMAND_ENV, tty ? ",\"tty\":true" : "");
}

static char *
read_all (int fd)
{
  g_autoptr(GString) out = g_string_new (NULL);

  for (;;)
    {
      char buf[512];
      ssize_t n = read (fd, buf, sizeof buf);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;   /* EOF, or EIO from a PTY master once every slave is closed */
      g_string_append_len (out, buf, n);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static void
test_command_output_and_status (Fixture       *fx,
                                gconstpointer  data)
{
  Session s;
  g_autofree char *out = NULL;
  g_autofree char *json = NULL;
  paddock_autofd int null_fd = -1;
  int pipe_fds[2];
  int fds[3];

  if (skip_without_userns ())
    return;

  session_start (&s, fx->workspace);
  null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  g_assert_cmpint (null_fd, >=, 0);

  /* echo hi into a pipe: output, spawned, status 0. */
  g_assert_cmpint (pipe2 (pipe_fds, O_CLOEXEC), ==, 0);
  fds[0] = null_fd;
  fds[1] = pipe_fds[1];
  fds[2] = null_fd;
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":1,\"argv\":[\"echo\",\"hi\"]," COMMAND_ENV "}", fds, 3);
  close (pipe_fds[1]);
  /* EOF means every copy of the write end is closed: the sandbox keeps
   * none of the fds it was given. */
  out = read_all (pipe_fds[0]);
  close (pipe_fds[0]);
  g_assert_cmpstr (out, ==, "hi\n");
  g_assert_cmpint (expect_spawned (s.ctl, 1), >, 2);
  expect_exited (s.ctl, 1, "\"status\":0");

  /* Exit status and death by signal, the agent's conventions. */
  fds[1] = null_fd;
  json = spawn_sh_json (2, "exit 3", NULL, FALSE);
  send_request (s.ctl, json, fds, 3);
  expect_spawned (s.ctl, 2);
  expect_exited (s.ctl, 2, "\"status\":3");
  g_clear_pointer (&json, g_free);
  json = spawn_sh_json (4294967295u, "kill -9 $$", NULL, FALSE);
  send_request (s.ctl, json, fds, 3);
  expect_spawned (s.ctl, 4294967295u);
  expect_exited (s.ctl, 4294967295u, "\"status\":137,\"signal\":9");

  g_free (session_stop (&s));
}

/* The next event, within 30 s, and the fd that came with it (or -1). */
static char *
recv_event_with_fd (int  ctl,
                    int *fd)
{
  struct pollfd pfd = { .fd = ctl, .events = POLLIN, .revents = 0 };
  union {
    struct cmsghdr align;
    char space[CMSG_SPACE (sizeof (int))];
  } control;
  char buf[512];
  struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf - 1 };
  struct msghdr msg = {
    .msg_iov = &iov,
    .msg_iovlen = 1,
    .msg_control = control.space,
    .msg_controllen = sizeof control.space,
  };
  struct cmsghdr *c;
  ssize_t n;

  *fd = -1;
  g_assert_cmpint (poll (&pfd, 1, 30000), ==, 1);
  do
    n = recvmsg (ctl, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  g_assert_cmpint (n, >, 0);
  g_assert_false (msg.msg_flags & MSG_CTRUNC);
  buf[n] = '\0';
  for (c = CMSG_FIRSTHDR (&msg); c != NULL; c = CMSG_NXTHDR (&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      memcpy (fd, CMSG_DATA (c), sizeof (int));
  return g_strdup (buf);
}

/* {"op":"socket"}: a TCP socket made in the session's namespace, IPv4 or
 * with 'family' 'inet6' IPv6; an unknown family is EAFNOSUPPORT and a
 * 'family' that is not a string EINVAL, never a default socket. */
static void
test_command_socket (Fixture       *fx,
                     gconstpointer  data)
{
  static const struct { const char *request; int domain; int err; } cases[] = {
    { "{\"op\":\"socket\",\"id\":1}", AF_INET, 0 },
    { "{\"op\":\"socket\",\"id\":2,\"family\":\"inet6\"}", AF_INET6, 0 },
    { "{\"op\":\"socket\",\"id\":3,\"family\":\"ipx\"}", -1, EAFNOSUPPORT },
    { "{\"op\":\"socket\",\"id\":4,\"family\":10}", -1, EINVAL },
    { "{\"op\":\"socket\",\"id\":5,\"family\":true}", -1, EINVAL },
    { "{\"op\":\"socket\",\"id\":6,\"family\":[\"inet6\"]}", -1, EINVAL },
  };
  Session s;

  if (skip_without_userns ())
    return;

  session_start (&s, fx->workspace);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *event = NULL;
      g_autofree char *expected = NULL;
      int fd = -1;

      send_request (s.ctl, cases[i].request, NULL, 0);
      event = recv_event_with_fd (s.ctl, &fd);
      g_test_message ("%s: %s", cases[i].request, event);
      if (cases[i].err == 0)
        {
          int domain = -1;
          socklen_t len = sizeof domain;

          expected = g_strdup_printf ("{\"event\":\"socket\",\"id\":%u}\n", i + 1);
          g_assert_cmpstr (event, ==, expected);
          g_assert_cmpint (fd, >=, 0);
          g_assert_cmpint (getsockopt (fd, SOL_SOCKET, SO_DOMAIN, &domain, &len), ==, 0);
          g_assert_cmpint (domain, ==, cases[i].domain);
          close (fd);
        }
      else
        {
          expected = g_strdup_printf ("{\"event\":\"socket-failed\",\"id\":%u,\"errno\":%d}\n",
                                      i + 1, cases[i].err);
          g_assert_cmpstr (event, ==, expected);
          g_assert_cmpint (fd, ==, -1);
        }
    }
  g_free (session_stop (&s));
}

/* ---- a canary probe whose socket() the kernel refuses -------------------- */

#ifdef PADDOCK_TEST_AUDIT_ARCH
/* In the helper's child, before exec (async-signal-safe): socket(AF_INET,
 * …) fails with EACCES for the helper and everything it starts, its
 * probing child among them. */
static void
refuse_inet_sockets (gpointer user_data)
{
  if (paddock_test_refuse_socket_family (AF_INET, EACCES) != 0)
    _exit (121);
}
#endif

/* Starts the helper in @workspace with the safe profile and @more_options
 * (NULL-terminated, or NULL), @setup run in its child before exec when
 * given; reads its "started" event into @parser, ends it, and returns the
 * event's "boundary" object (owned by @parser). */
static JsonObject *
started_boundary (const char           *workspace,
                  const char * const   *more_options,
                  GSubprocessLauncher  *launcher,
                  JsonParser           *parser)
{
  g_autoptr(GPtrArray) options = g_ptr_array_new ();
  const char *cmd[] = { "sleep", "100000", NULL };
  g_autoptr(GPtrArray) argv = NULL;
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  paddock_autofd int ours = -1;
  JsonObject *boundary;
  struct pollfd pfd = { .fd = -1, .events = POLLIN, .revents = 0 };
  char buf[16384];
  ssize_t n;
  int pair[2];

  for (const char * const *o = (const char * const[]) { "--control-fd", "3", "--env", AGENT_PATH,
                                                        "--die-with-parent", "--profile", "safe", NULL };
       *o != NULL; o++)
    g_ptr_array_add (options, (gpointer) *o);
  for (guint i = 0; more_options != NULL && more_options[i] != NULL; i++)
    g_ptr_array_add (options, (gpointer) more_options[i]);
  g_ptr_array_add (options, NULL);

  argv = helper_argv (workspace, (const char * const *) options->pdata, cmd);
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), ==, 0);
  ours = pair[0];
  g_subprocess_launcher_take_fd (launcher, pair[1], 3);
  proc = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  /* Our copy of the helper's end goes now, not with the caller's launcher. */
  g_subprocess_launcher_close (launcher);

  pfd.fd = ours;
  g_assert_cmpint (poll (&pfd, 1, 30000), ==, 1);
  do
    n = recv (ours, buf, sizeof buf - 1, 0);
  while (n < 0 && errno == EINTR);
  g_subprocess_force_exit (proc);
  g_subprocess_wait (proc, NULL, NULL);
  g_assert_cmpint (n, >, 0);
  buf[n] = '\0';
  g_test_message ("started: %s", buf);
  g_assert_true (json_parser_load_from_data (parser, buf, n, NULL));
  boundary = json_object_get_object_member (json_node_get_object (json_parser_get_root (parser)), "boundary");
  g_assert_nonnull (boundary);
  return boundary;
}

/* The canary @name in @boundary's "probes"; fails the test if absent. */
static JsonObject *
boundary_probe (JsonObject *boundary,
                const char *name)
{
  JsonArray *probes = json_object_get_array_member (boundary, "probes");
  JsonObject *probe = NULL;

  for (guint i = 0; probes != NULL && i < json_array_get_length (probes); i++)
    {
      JsonObject *p = json_array_get_object_element (probes, i);

      if (g_strcmp0 (json_object_get_string_member_with_default (p, "probe", ""), name) == 0)
        probe = p;
    }
  g_assert_nonnull (probe);
  return probe;
}

/* The landlock-net canary needs a TCP socket to bind: when the kernel
 * refuses the socket itself, the evidence says so, with its errno, and the
 * probe is not taken for blocked (nor "no canary result"). */
static void
test_probe_socket_refused (Fixture       *fx,
                           gconstpointer  data)
{
#ifdef PADDOCK_TEST_AUDIT_ARCH
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *boundary;
  JsonObject *probe;

  if (skip_without_userns ())
    return;

  g_subprocess_launcher_set_child_setup (launcher, refuse_inet_sockets, NULL, NULL);
  boundary = started_boundary (fx->workspace, NULL, launcher, parser);
  if (g_strcmp0 (json_object_get_string_member_with_default (boundary, "landlock_net", ""), "enforced") != 0)
    {
      g_test_skip ("Landlock restricts no TCP bind here (ABI < 4): no landlock-net canary runs");
      return;
    }
  probe = boundary_probe (boundary, "landlock-net");
  g_assert_cmpstr (json_object_get_string_member (probe, "actual"), ==, "socket(AF_INET) failed: EACCES");
  g_assert_false (json_object_get_boolean_member (probe, "blocked"));
#else
  g_test_skip ("no seccomp audit arch known for this machine");
#endif
}

/* In a network namespace of its own (--net none) the session's bind is
 * not restricted: the landlock-net layer is not asked of Landlock, says
 * why, and no bind canary claims a refusal that is not there; the
 * namespace's own canary (connect-outside) is what guards the host. On
 * the host's network the bind rule and its canary stay (see
 * test_probe_socket_refused and tests/test-paddockctl-net.sh). */
static void
test_own_netns_bind_unrestricted (Fixture       *fx,
                                  gconstpointer  data)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(JsonParser) parser = json_parser_new ();
  const char *net_none[] = { "--net", "none", "--bind-port", "8080", NULL };
  JsonArray *probes;
  JsonObject *boundary;

  if (skip_without_userns ())
    return;
  boundary = started_boundary (fx->workspace, net_none, launcher, parser);
  g_assert_cmpstr (json_object_get_string_member (boundary, "network"), ==, "none");
  g_assert_cmpstr (json_object_get_string_member (boundary, "landlock_net"), ==, "not-requested");
  g_assert_nonnull (strstr (json_object_get_string_member (boundary, "landlock_net_evidence"),
                            "bind unrestricted: the session's own network namespace; "
                            "only leased ports are forwarded from the host"));
  probes = json_object_get_array_member (boundary, "probes");
  for (guint i = 0; probes != NULL && i < json_array_get_length (probes); i++)
    g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (probes, i), "probe"),
                     !=, "landlock-net");
}

/* The protected-path canary writes into each protected path; "blocked"
 * must mean every one gave the read-only mount's EROFS. Here the first
 * (.git/hooks, a file the probing child may not write, mode 0444) fails
 * with EACCES before the mount is looked at, the second (.git/config)
 * with EROFS: the EACCES is what is reported, not blocked, and a later
 * EROFS does not cover it. */
static void
test_probe_protected_first_unexpected (Fixture       *fx,
                                       gconstpointer  data)
{
  const char *protect[] = { "--protect", ".git/hooks", "--protect", ".git/config", NULL };
  g_autofree char *git = g_build_filename (fx->workspace, ".git", NULL);
  g_autofree char *hooks = g_build_filename (git, "hooks", NULL);
  g_autofree char *config = g_build_filename (git, "config", NULL);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *probe;

  if (skip_without_userns ())
    return;

  g_assert_no_errno (g_mkdir (git, 0755));
  g_assert_true (g_file_set_contents (hooks, "not a folder\n", -1, NULL));
  g_assert_no_errno (chmod (hooks, 0444));
  g_assert_true (g_file_set_contents (config, "[core]\n", -1, NULL));

  probe = boundary_probe (started_boundary (fx->workspace, protect, launcher, parser), "protected-path");
  g_assert_cmpstr (json_object_get_string_member (probe, "actual"), ==, "EACCES");
  g_assert_false (json_object_get_boolean_member (probe, "blocked"));
}

/* "tty":true without fds: the sandbox makes the terminal from its own
 * devpts (so the command's tty has a name inside) and sends its master
 * back with "spawned". */
static void
test_command_own_tty (Fixture       *fx,
                      gconstpointer  data)
{
  Session s;
  g_autofree char *json = NULL;
  g_autofree char *event = NULL;
  g_autofree char *out = NULL;
  paddock_autofd int master = -1;
  unsigned int pty_number = 0;

  if (skip_without_userns ())
    return;

  session_start (&s, fx->workspace);
  json = spawn_sh_json (8,
                        "test -t 0 && test -t 1 && test -t 2 && echo TTY-OK; stty size; tty;"
                        "test \"$(readlink /proc/self/fd/0)\" = \"$(tty)\" && echo SAME-TTY",
                        NULL, TRUE);
  send_request (s.ctl, json, NULL, 0);
  event = recv_event_with_fd (s.ctl, &master);
  g_test_message ("event: %s", event);
  g_assert_true (g_str_has_prefix (event, "{\"event\":\"spawned\",\"id\":8,\"pid\":"));
  g_assert_cmpint (master, >=, 0);
  g_assert_cmpint (ioctl (master, TIOCGPTN, &pty_number), ==, 0);
  out = read_all (master);
  g_test_message ("tty output: %s", out);
  expect_exited (s.ctl, 8, "\"status\":0");

  g_assert_nonnull (strstr (out, "TTY-OK"));
  g_assert_nonnull (strstr (out, "24 80"));
  g_assert_nonnull (strstr (out, "/dev/pts/"));
  g_assert_nonnull (strstr (out, "SAME-TTY"));

  g_free (session_stop (&s));
}

static void
test_command_tty (Fixture       *fx,
                  gconstpointer  data)
{
  Session s;
  struct winsize ws = { .ws_row = 33, .ws_col = 101 };
  g_autofree char *json = NULL;
  g_autofree char *out = NULL;
  g_autofree char *ids = NULL;
  paddock_autofd int master = -1;
  int slave;
  int fds[3];
  int pid;

  if (skip_without_userns ())
    return;

  master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  g_assert_cmpint (master, >=, 0);
  g_assert_cmpint (grantpt (master), ==, 0);
  g_assert_cmpint (unlockpt (master), ==, 0);
  g_assert_cmpint (ioctl (master, TIOCSWINSZ, &ws), ==, 0);
  slave = open (ptsname (master), O_RDWR | O_NOCTTY | O_CLOEXEC);
  g_assert_cmpint (slave, >=, 0);

  session_start (&s, fx->workspace);
  fds[0] = fds[1] = fds[2] = slave;
  json = spawn_sh_json (7,
                        "test -t 0 && test -t 1 && test -t 2 && echo TTY-OK; stty size;"
                        "read pid comm state ppid pgrp sid tty tpgid rest < /proc/$$/stat;"
                        "echo \"IDS:$pid:$pgrp:$sid:$tpgid\"",
                        NULL, TRUE);
  send_request (s.ctl, json, fds, 3);
  close (slave);
  out = read_all (master);
  g_test_message ("tty output: %s", out);
  pid = expect_spawned (s.ctl, 7);
  expect_exited (s.ctl, 7, "\"status\":0");

  g_assert_nonnull (strstr (out, "TTY-OK"));
  g_assert_nonnull (strstr (out, "33 101"));
  /* Session leader of its own session, its own group, and the foreground
   * group of its controlling terminal. */
  ids = g_strdup_printf ("IDS:%d:%d:%d:%d", pid, pid, pid, pid);
  g_assert_nonnull (strstr (out, ids));

  g_free (session_stop (&s));
}

static void
test_command_kill_tree (Fixture       *fx,
                        gconstpointer  data)
{
  int sig = GPOINTER_TO_INT (data);
  Session s;
  g_autofree char *marker = g_strdup_printf ("pdkmark-%08x%08x", g_random_int (), g_random_int ());
  g_autofree char *link = g_build_filename (fx->workspace, marker, NULL);
  g_autofree char *sleep_path = g_find_program_in_path ("sleep");
  g_autofree char *sleep_real = NULL;
  g_autofree char *script = NULL;
  g_autofree char *json = NULL;
  g_autofree char *kill_json = NULL;
  g_autofree char *status = NULL;
  paddock_autofd int null_fd = -1;
  gint64 deadline;
  int fds[3];

  if (skip_without_userns ())
    return;

  /* A sleep whose command line carries the marker, in the workspace (the
   * same path inside): setsid'd, double-forked and a plain child. */
  g_assert_nonnull (sleep_path);
  sleep_real = realpath (sleep_path, NULL);
  g_assert_nonnull (sleep_real);
  g_assert_cmpint (symlink (sleep_real, link), ==, 0);
  script = g_strdup_printf ("setsid ./%s 300 & (./%s 300 &); ./%s 300", marker, marker, marker);

  session_start (&s, fx->workspace);
  null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  fds[0] = fds[1] = fds[2] = null_fd;
  json = spawn_sh_json (11, script, fx->workspace, FALSE);
  send_request (s.ctl, json, fds, 3);
  expect_spawned (s.ctl, 11);

  /* The shell and its three sleeps. */
  deadline = g_get_monotonic_time () + 30 * G_TIME_SPAN_SECOND;
  while (count_marked (marker) < 4)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (20 * G_TIME_SPAN_MILLISECOND);
    }

  kill_json = g_strdup_printf ("{\"op\":\"kill\",\"id\":11,\"signal\":%d}", sig);
  send_request (s.ctl, kill_json, NULL, 0);
  status = g_strdup_printf ("\"status\":%d,\"signal\":%d", 128 + sig, sig);
  expect_exited (s.ctl, 11, status);
  /* Reported once the tree is empty and reaped: none left, not even briefly. */
  g_assert_cmpuint (count_marked (marker), ==, 0);

  /* The session goes on: the agent is still there, commands still run. */
  g_clear_pointer (&json, g_free);
  json = spawn_sh_json (12, "kill -0 2", NULL, FALSE);
  send_request (s.ctl, json, fds, 3);
  expect_spawned (s.ctl, 12);
  expect_exited (s.ctl, 12, "\"status\":0");

  g_free (session_stop (&s));
}

static void
test_command_confined (Fixture       *fx,
                       gconstpointer  data)
{
  Session s;
  g_autofree char *json = NULL;
  g_autofree char *out = NULL;
  g_autofree char *ours = g_file_read_link ("/proc/self/ns/pid", NULL);
  g_auto(GStrv) lines = NULL;
  paddock_autofd int null_fd = -1;
  int pipe_fds[2];
  int fds[3];

  if (skip_without_userns ())
    return;

  session_start (&s, fx->workspace);
  null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  g_assert_cmpint (pipe2 (pipe_fds, O_CLOEXEC), ==, 0);
  fds[0] = null_fd;
  fds[1] = pipe_fds[1];
  fds[2] = pipe_fds[1];
  /* "started" comes once the agent is forked, not exec'd: until then
   * /proc/2 is a copy of pid 1 (and not dumpable), so wait for sleep. */
  json = spawn_sh_json (21,
                        "i=0; while [ \"$(cat /proc/2/comm)\" != sleep ] && [ $i -lt 500 ]; do"
                        " i=$((i+1)); sleep 0.01; done;"
                        "readlink /proc/self/ns/pid /proc/2/ns/pid /proc/self/ns/mnt /proc/2/ns/mnt;"
                        "pwd; cat /proc/2/comm;"
                        "touch /usr/paddock-probe 2>&1 | grep -c 'Read-only file system';"
                        "grep -E '^(CapEff|CapBnd|NoNewPrivs):' /proc/self/status;"
                        "printenv " CANARY_NAME " || echo no-canary",
                        fx->workspace, FALSE);
  send_request (s.ctl, json, fds, 3);
  close (pipe_fds[1]);
  out = read_all (pipe_fds[0]);
  close (pipe_fds[0]);
  expect_spawned (s.ctl, 21);
  expect_exited (s.ctl, 21, "\"status\":0");
  g_test_message ("command output: %s", out);

  lines = g_strsplit (out, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 12);
  /* The agent's PID and mount namespaces, not ours. */
  g_assert_cmpstr (lines[0], ==, lines[1]);
  g_assert_cmpstr (lines[0], !=, ours);
  g_assert_cmpstr (lines[2], ==, lines[3]);
  /* The workspace at the same path; pid 2 is the agent. */
  g_assert_cmpstr (lines[4], ==, fx->workspace);
  g_assert_cmpstr (lines[5], ==, "sleep");
  g_assert_cmpstr (lines[6], ==, "1");
  g_assert_cmpstr (lines[7], ==, "CapEff:\t0000000000000000");
  g_assert_cmpstr (lines[8], ==, "CapBnd:\t0000000000000000");
  g_assert_cmpstr (lines[9], ==, "NoNewPrivs:\t1");
  g_assert_cmpstr (lines[10], ==, "no-canary");
  g_assert_false (g_file_test ("/usr/paddock-probe", G_FILE_TEST_EXISTS));

  g_free (session_stop (&s));
}

static void
assert_failed_event (GHashTable *events,
                     guint32     id,
                     int         err,
                     const char *message)
{
  const char *event = g_hash_table_lookup (events, GINT_TO_POINTER (id));
  g_autofree char *expected = g_strdup_printf ("{\"event\":\"spawn-failed\",\"id\":%u,\"errno\":%d,\"message\":\"%s",
                                               id, err, message);

  g_assert_nonnull (event);
  g_assert_true (g_str_has_prefix (event, expected));
}

static void
test_command_bad_requests (Fixture       *fx,
                           gconstpointer  data)
{
  Session s;
  g_autofree char *message = NULL;
  g_autofree char *err = NULL;
  g_autoptr(GString) huge = g_string_new ("{\"op\":\"spawn\",\"id\":9,\"argv\":[\"echo\",\"");
  g_autoptr(GHashTable) failed = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  paddock_autofd int null_fd = -1;
  int fds[3];
  int pipe_fds[2];
  const char *p;
  guint notes = 0;

  if (skip_without_userns ())
    return;

  session_start (&s, fx->workspace);
  null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  fds[0] = fds[1] = fds[2] = null_fd;

  /* Ignored, with a note each: not JSON, not an object, unknown op, no id,
   * too big (160 KiB > 128 KiB), kill of an unknown id. */
  send_request (s.ctl, "not json at all {", fds, 3);
  send_request (s.ctl, "[1,2,3]", NULL, 0);
  send_request (s.ctl, "{\"op\":\"frobnicate\",\"id\":1}", fds, 3);
  send_request (s.ctl, "{\"op\":\"spawn\",\"argv\":[\"true\"]}", fds, 3);
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":-1,\"argv\":[\"true\"]}", fds, 3);
  while (huge->len < 160 * 1024)
    g_string_append (huge, "xxxxxxxxxxxxxxxx");
  g_string_append (huge, "\"]}");
  send_request (s.ctl, huge->str, fds, 3);
  send_request (s.ctl, "{\"op\":\"kill\",\"id\":77,\"signal\":9}", NULL, 0);

  /* Answered with spawn-failed: wrong fd count, cwd outside the view, empty
   * argv, bad env, a missing program, a relative cwd. */
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":2,\"argv\":[\"true\"]}", fds, 1);
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":3,\"argv\":[\"true\"],\"cwd\":\"/var/lib\"}", fds, 3);
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":4,\"argv\":[]}", fds, 3);
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":5,\"argv\":[\"true\"],\"env\":[\"NOEQUALS\"]}", fds, 3);
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":6,\"argv\":[\"paddock-no-such-program\"]," COMMAND_ENV "}",
                fds, 3);
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":8,\"argv\":[\"true\"],\"cwd\":\"tmp\"}", fds, 3);

  /* Failures found while parsing are answered at once, those found in the
   * supervisor (cwd, exec) a little later: ids may come in any order. */
  for (guint i = 0; i < 6; i++)
    {
      char *event = recv_event (s.ctl);
      const char *id = strstr (event, "\"id\":");

      g_test_message ("event: %s", event);
      g_assert_nonnull (id);
      g_hash_table_insert (failed, GINT_TO_POINTER (atoi (id + 5)), event);
    }
  assert_failed_event (failed, 2, EBADF, "a spawn carries exactly 3 fds");
  assert_failed_event (failed, 3, ENOENT, "cannot enter the working folder");
  assert_failed_event (failed, 4, EINVAL, "argv must be");
  assert_failed_event (failed, 5, EINVAL, "env entries must be K=V");
  assert_failed_event (failed, 6, ENOENT, "cannot run");
  assert_failed_event (failed, 8, EINVAL, "cwd must be an absolute path");

  /* ... and the sandbox keeps serving. */
  g_assert_cmpint (pipe2 (pipe_fds, O_CLOEXEC), ==, 0);
  fds[1] = pipe_fds[1];
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":10,\"argv\":[\"echo\",\"still here\"]," COMMAND_ENV "}",
                fds, 3);
  close (pipe_fds[1]);
  g_free (message);
  message = read_all (pipe_fds[0]);
  close (pipe_fds[0]);
  g_assert_cmpstr (message, ==, "still here\n");
  expect_spawned (s.ctl, 10);
  expect_exited (s.ctl, 10, "\"status\":0");

  err = session_stop (&s);
  for (p = err; (p = strstr (p, "paddock-sandbox: ignoring a control request: ")) != NULL; p++)
    notes++;
  g_assert_cmpuint (notes, ==, 7);
}

static void
test_command_limit (Fixture       *fx,
                    gconstpointer  data)
{
  Session s;
  paddock_autofd int null_fd = -1;
  int fds[3];

  if (skip_without_userns ())
    return;

  session_start (&s, fx->workspace);
  null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  fds[0] = fds[1] = fds[2] = null_fd;

  for (guint id = 100; id < 164; id++)
    {
      g_autofree char *json = g_strdup_printf ("{\"op\":\"spawn\",\"id\":%u,\"argv\":[\"sleep\",\"1000\"],"
                                               COMMAND_ENV "}", id);
      send_request (s.ctl, json, fds, 3);
      expect_spawned (s.ctl, id);
    }
  /* The 65th: refused. A running id again: refused. */
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":164,\"argv\":[\"true\"]}", fds, 3);
  g_free (expect_spawn_failed (s.ctl, 164, EAGAIN));

  /* One ends: there is room again. */
  send_request (s.ctl, "{\"op\":\"kill\",\"id\":100,\"signal\":15}", NULL, 0);
  expect_exited (s.ctl, 100, "\"status\":143,\"signal\":15");
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":101,\"argv\":[\"true\"]}", fds, 3);
  g_free (expect_spawn_failed (s.ctl, 101, EEXIST));
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":165,\"argv\":[\"true\"]," COMMAND_ENV "}", fds, 3);
  expect_spawned (s.ctl, 165);
  expect_exited (s.ctl, 165, "\"status\":0");

  g_free (session_stop (&s));
}

/* Host pids of the direct children of the sandbox's pid 1 other than the
 * agent (pid 2 inside): the command supervisors, and the one pid 1 forks
 * ahead while idle. */
static GArray *
pid1_other_children (Session *s)
{
  g_autoptr(GArray) out = g_array_new (FALSE, FALSE, sizeof (int));
  const char *helper = g_subprocess_get_identifier (s->proc);
  g_autofree char *path = g_strdup_printf ("/proc/%s/task/%s/children", helper, helper);
  g_autofree char *text = NULL;
  g_autofree char *children = NULL;
  g_auto(GStrv) pids = NULL;
  int pid1;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  pid1 = atoi (text);
  g_assert_cmpint (pid1, >, 0);
  g_free (path);
  path = g_strdup_printf ("/proc/%d/task/%d/children", pid1, pid1);
  if (!g_file_get_contents (path, &children, NULL, NULL))
    return g_steal_pointer (&out);
  pids = g_strsplit (g_strstrip (children), " ", -1);
  for (guint i = 0; pids[i] != NULL; i++)
    {
      g_autofree char *status_path = g_strdup_printf ("/proc/%s/status", pids[i]);
      g_autofree char *status = NULL;
      const char *nspid;
      int pid = atoi (pids[i]);

      if (pid <= 0 || !g_file_get_contents (status_path, &status, NULL, NULL) ||
          (nspid = strstr (status, "\nNSpid:")) == NULL)
        continue;
      /* The innermost pid is the last field of the line. */
      {
        const char *eol = strchr (nspid + 1, '\n');
        const char *last = eol;

        while (last > nspid && last[-1] != '\t' && last[-1] != ' ')
          last--;
        if (atoi (last) != 2)
          g_array_append_val (out, pid);
      }
    }
  return g_steal_pointer (&out);
}

/* The state letter of /proc/PID/stat ('S': asleep, 'Z': a zombie…), or 0
 * if PID is gone. */
static char
process_state (int pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", pid);
  g_autofree char *stat = NULL;
  const char *paren;

  if (!g_file_get_contents (path, &stat, NULL, NULL) || (paren = strrchr (stat, ')')) == NULL ||
      paren[1] != ' ')
    return 0;
  return paren[2];
}

/* Whether PID has a child of its own. */
static gboolean
has_children (int pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/task/%d/children", pid, pid);
  g_autofree char *children = NULL;

  return g_file_get_contents (path, &children, NULL, NULL) && g_strstrip (children)[0] != '\0';
}

/* Waits (up to 10 s) until pid 1 has exactly one child besides the agent,
 * asleep (waiting for a request) with no child of its own: with no command
 * running, that is the supervisor forked ahead, not the supervisor of a
 * command that just ended on its way out. */
static int
wait_for_spare (Session *s)
{
  for (guint i = 0; i < 1000; i++)
    {
      g_autoptr(GArray) others = pid1_other_children (s);

      if (others->len == 1 && process_state (g_array_index (others, int, 0)) == 'S' &&
          !has_children (g_array_index (others, int, 0)))
        return g_array_index (others, int, 0);
      g_usleep (10000);
    }
  g_assert_not_reached ();
}

/* Kills the spare supervisor from outside. The one child wait_for_spare()
 * sees may still be the supervisor of the command that just ended, on its
 * way out (and reaped before our signal): then the spare is the next one
 * pid 1 forks, so look again. */
static int
kill_spare (Session *s)
{
  for (guint i = 0; i < 100; i++)
    {
      int spare = wait_for_spare (s);

      if (kill (spare, SIGKILL) == 0)
        return spare;
      g_assert_cmpint (errno, ==, ESRCH);
      g_usleep (10000);
    }
  g_assert_not_reached ();
}

/* Commands started by the supervisor pid 1 forks ahead of time behave as
 * any: their own stdin, stdout and stderr, status, a terminal; and when
 * that spare is killed from outside, the next command still runs. */
static void
test_command_spare (Fixture       *fx,
                    gconstpointer  data)
{
  Session s;
  paddock_autofd int null_fd = -1;
  int in_pipe[2];
  int out_pipe[2];
  int err_pipe[2];
  int fds[3];
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *json = NULL;
  g_autofree char *event = NULL;
  paddock_autofd int master = -1;
  int spare;

  if (skip_without_userns ())
    return;

  session_start (&s, fx->workspace);
  null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  fds[0] = fds[1] = fds[2] = null_fd;
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":1,\"argv\":[\"true\"]," COMMAND_ENV "}", fds, 3);
  expect_spawned (s.ctl, 1);
  expect_exited (s.ctl, 1, "\"status\":0");

  /* After a command, pid 1 keeps one supervisor ready. */
  spare = wait_for_spare (&s);
  g_assert_cmpint (pipe2 (in_pipe, O_CLOEXEC), ==, 0);
  g_assert_cmpint (pipe2 (out_pipe, O_CLOEXEC), ==, 0);
  g_assert_cmpint (pipe2 (err_pipe, O_CLOEXEC), ==, 0);
  fds[0] = in_pipe[0];
  fds[1] = out_pipe[1];
  fds[2] = err_pipe[1];
  json = spawn_sh_json (2, "cat; echo to-stderr >&2; exit 4", NULL, FALSE);
  send_request (s.ctl, json, fds, 3);
  close (in_pipe[0]);
  close (out_pipe[1]);
  close (err_pipe[1]);
  /* While cat waits for its stdin: the one forked ahead runs it. */
  expect_spawned (s.ctl, 2);
  g_assert_true (has_children (spare));
  g_assert_cmpint (write (in_pipe[1], "from-stdin\n", 11), ==, 11);
  close (in_pipe[1]);
  out = read_all (out_pipe[0]);
  err = read_all (err_pipe[0]);
  close (out_pipe[0]);
  close (err_pipe[0]);
  g_assert_cmpstr (out, ==, "from-stdin\n");
  g_assert_cmpstr (err, ==, "to-stderr\n");
  expect_exited (s.ctl, 2, "\"status\":4");

  /* A terminal pid 1 makes, for a command the spare runs. */
  wait_for_spare (&s);
  g_clear_pointer (&json, g_free);
  json = spawn_sh_json (3, "test -t 0 && test -t 2 && tty", NULL, TRUE);
  send_request (s.ctl, json, NULL, 0);
  event = recv_event_with_fd (s.ctl, &master);
  g_assert_true (g_str_has_prefix (event, "{\"event\":\"spawned\",\"id\":3,\"pid\":"));
  g_assert_cmpint (master, >=, 0);
  g_clear_pointer (&out, g_free);
  out = read_all (master);
  g_assert_nonnull (strstr (out, "/dev/pts/"));
  expect_exited (s.ctl, 3, "\"status\":0");

  /* The spare killed from outside: the next command still runs. */
  spare = kill_spare (&s);
  {
    /* Gone (reaped by pid 1) before the next request. */
    g_autofree char *proc = g_strdup_printf ("/proc/%d", spare);

    for (guint i = 0; i < 1000 && g_file_test (proc, G_FILE_TEST_EXISTS); i++)
      g_usleep (10000);
    g_assert_false (g_file_test (proc, G_FILE_TEST_EXISTS));
  }
  fds[0] = fds[1] = fds[2] = null_fd;
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":4,\"argv\":[\"true\"]," COMMAND_ENV "}", fds, 3);
  expect_spawned (s.ctl, 4);
  expect_exited (s.ctl, 4, "\"status\":0");

  /* Killed just as a request comes: the request is still answered, by
   * "spawned" or, if the spare took it and died, "spawn-failed" (EIO). */
  spare = kill_spare (&s);
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":5,\"argv\":[\"true\"]," COMMAND_ENV "}", fds, 3);
  g_clear_pointer (&event, g_free);
  event = recv_event (s.ctl);
  g_test_message ("event: %s", event);
  if (g_str_has_prefix (event, "{\"event\":\"spawned\",\"id\":5,"))
    expect_exited (s.ctl, 5, "\"status\":0");
  else
    g_assert_true (g_str_has_prefix (event, "{\"event\":\"spawn-failed\",\"id\":5,\"errno\":5,"));

  g_free (session_stop (&s));
}

/* A supervisor whose command ended by itself with nothing left is the next
 * command's (no fork per command); one whose command left a background
 * process is not, so a kill of the next command never reaches what an
 * earlier one left running. */
static void
test_command_supervisor_reuse (Fixture       *fx,
                               gconstpointer  data)
{
  Session s;
  paddock_autofd int null_fd = -1;
  int out_pipe[2];
  int fds[3];
  int spare;
  gboolean reused = FALSE;
  g_autofree char *out = NULL;
  g_autofree char *json = NULL;
  g_autofree char *check = NULL;

  if (skip_without_userns ())
    return;

  session_start (&s, fx->workspace);
  null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  fds[0] = fds[1] = fds[2] = null_fd;
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":1,\"argv\":[\"true\"]," COMMAND_ENV "}", fds, 3);
  expect_spawned (s.ctl, 1);
  expect_exited (s.ctl, 1, "\"status\":0");

  /* The spare runs the next command and, free again, stays the spare.
   * Not every time: pid 1 forks a new spare when it has none for 2 ms,
   * which a command running that long on a loaded machine allows, and
   * the free one then goes. So: within 20 commands in a row, at least
   * once (without reuse, never: each supervisor exits). */
  for (guint32 id = 2; id < 22 && !reused; id++)
    {
      g_autofree char *spawn = g_strdup_printf ("{\"op\":\"spawn\",\"id\":%u,\"argv\":[\"true\"]," COMMAND_ENV "}",
                                                id);

      spare = wait_for_spare (&s);
      send_request (s.ctl, spawn, fds, 3);
      expect_spawned (s.ctl, id);
      expect_exited (s.ctl, id, "\"status\":0");
      reused = wait_for_spare (&s) == spare;
    }
  g_assert_true (reused);

  /* A kill for a command already over is dropped (by pid 1; one that
   * races the end reaches a free supervisor, which drops it too, but
   * that race cannot be made on demand from here): the next command runs
   * as usual. */
  send_request (s.ctl, "{\"op\":\"kill\",\"id\":1,\"signal\":9}", NULL, 0);
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":3,\"argv\":[\"true\"]," COMMAND_ENV "}", fds, 3);
  expect_spawned (s.ctl, 3);
  expect_exited (s.ctl, 3, "\"status\":0");

  /* A command that leaves a process behind: its supervisor goes. */
  g_assert_cmpint (pipe2 (out_pipe, O_CLOEXEC), ==, 0);
  fds[1] = out_pipe[1];
  json = spawn_sh_json (4, "sleep 1000 >/dev/null 2>&1 & echo $!", NULL, FALSE);
  send_request (s.ctl, json, fds, 3);
  close (out_pipe[1]);
  out = read_all (out_pipe[0]);
  close (out_pipe[0]);
  g_assert_cmpint (atoi (out), >, 2);
  expect_spawned (s.ctl, 4);
  expect_exited (s.ctl, 4, "\"status\":0");

  /* The next command, killed with its whole tree: the sleep stays. */
  fds[1] = null_fd;
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":5,\"argv\":[\"sleep\",\"1000\"]," COMMAND_ENV "}", fds, 3);
  expect_spawned (s.ctl, 5);
  send_request (s.ctl, "{\"op\":\"kill\",\"id\":5,\"signal\":9}", NULL, 0);
  expect_exited (s.ctl, 5, "\"status\":137,\"signal\":9");
  g_assert_cmpint (pipe2 (out_pipe, O_CLOEXEC), ==, 0);
  fds[1] = out_pipe[1];
  check = g_strdup_printf ("kill -0 %d && echo alive", atoi (out));
  g_clear_pointer (&json, g_free);
  json = spawn_sh_json (6, check, NULL, FALSE);
  send_request (s.ctl, json, fds, 3);
  close (out_pipe[1]);
  g_clear_pointer (&out, g_free);
  out = read_all (out_pipe[0]);
  close (out_pipe[0]);
  g_assert_cmpstr (out, ==, "alive\n");
  expect_spawned (s.ctl, 6);
  expect_exited (s.ctl, 6, "\"status\":0");

  g_free (session_stop (&s));
}

/* The channel's end: nothing more comes on it, within 30 s. */
static void
expect_channel_end (int chan)
{
  struct pollfd pfd = { .fd = chan, .events = POLLIN, .revents = 0 };
  char buf[64];
  ssize_t n;

  g_assert_cmpint (poll (&pfd, 1, 30000), ==, 1);
  do
    n = recv (chan, buf, sizeof buf, MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  g_assert_cmpint (n, ==, 0);
}

/* A direct spawn: the command's events come on the channel that came
 * with it, from its supervisor, and none on the control socket; a
 * request pid 1 refuses is answered there too; a supervisor killed before
 * the command's end is reported by pid 1 as "supervisor-gone". */
static void
test_command_direct (Fixture       *fx,
                     gconstpointer  data)
{
  Session s;
  paddock_autofd int null_fd = -1;
  int chan[2];
  int out_pipe[2];
  int fds[4];
  g_autofree char *out = NULL;
  g_autofree char *json = NULL;

  if (skip_without_userns ())
    return;

  session_start (&s, fx->workspace);
  null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);

  for (guint round = 0; round < 2; round++)
    {
      /* Round 0: pid 1 forks the supervisor; round 1: the spare runs it. */
      guint32 id = 20 + round;

      if (round == 1)
        wait_for_spare (&s);
      g_assert_cmpint (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan), ==, 0);
      g_assert_cmpint (pipe2 (out_pipe, O_CLOEXEC), ==, 0);
      fds[0] = null_fd;
      fds[1] = out_pipe[1];
      fds[2] = null_fd;
      fds[3] = chan[1];
      g_clear_pointer (&json, g_free);
      json = g_strdup_printf ("{\"op\":\"spawn\",\"id\":%u,\"argv\":[\"sh\",\"-c\",\"echo direct; exit 5\"],"
                              COMMAND_ENV ",\"direct\":true}", id);
      send_request (s.ctl, json, fds, 4);
      close (out_pipe[1]);
      close (chan[1]);
      g_clear_pointer (&out, g_free);
      out = read_all (out_pipe[0]);
      close (out_pipe[0]);
      g_assert_cmpstr (out, ==, "direct\n");
      g_assert_cmpint (expect_spawned (chan[0], id), >, 2);
      expect_exited (chan[0], id, "\"status\":5");
      /* Nobody else holds the channel: it ends with its supervisor. */
      expect_channel_end (chan[0]);
      close (chan[0]);
    }

  /* The command cannot reach its supervisor's fds, the channel among
   * them: the supervisor keeps pid 1's capabilities, the command has none,
   * and the kernel refuses it /proc/PID/fd of a more privileged (and
   * non-dumpable) process. Every fd number the supervisor could hold is
   * tried, listed or not: with the supervisor non-dumpable the listing
   * itself is refused when the command's uid is not root. */
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan), ==, 0);
  g_assert_cmpint (pipe2 (out_pipe, O_CLOEXEC), ==, 0);
  fds[0] = null_fd;
  fds[1] = out_pipe[1];
  fds[2] = null_fd;
  fds[3] = chan[1];
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":25,\"argv\":[\"sh\",\"-c\","
                "\"n=0; for i in $(seq 0 63); do f=/proc/$PPID/fd/$i; n=$((n+1)); readlink $f && exit 1; "
                "cat $f </dev/null 2>/dev/null && exit 1; done; "
                "if l=$(ls /proc/$PPID/fd 2>/dev/null); then l=$(echo $l | wc -w); else l=refused; fi; "
                "echo denied $n listed $l\"]," COMMAND_ENV ",\"direct\":true}", fds, 4);
  close (out_pipe[1]);
  close (chan[1]);
  g_clear_pointer (&out, g_free);
  out = read_all (out_pipe[0]);
  close (out_pipe[0]);
  g_test_message ("output: %s", out);
  /* Denied for each, and there were some (stdio at least) if the kernel
   * let it list them at all. */
  g_assert_true (g_str_has_prefix (out, "denied 64 listed "));
  if (!g_str_equal (out, "denied 64 listed refused\n"))
    g_assert_cmpint (atoi (out + strlen ("denied 64 listed ")), >=, 3);
  expect_spawned (chan[0], 25);
  expect_exited (chan[0], 25, "\"status\":0");
  close (chan[0]);

  /* Nothing about those on the control socket: the next event there is
   * this ordinary spawn's. */
  fds[0] = fds[1] = fds[2] = null_fd;
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":30,\"argv\":[\"true\"]," COMMAND_ENV "}", fds, 3);
  expect_spawned (s.ctl, 30);
  expect_exited (s.ctl, 30, "\"status\":0");

  /* Refused by pid 1 (a relative cwd): answered on the channel. */
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan), ==, 0);
  fds[3] = chan[1];
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":31,\"argv\":[\"true\"],\"cwd\":\"tmp\",\"direct\":true}", fds, 4);
  close (chan[1]);
  g_free (expect_spawn_failed (chan[0], 31, EINVAL));
  expect_channel_end (chan[0]);
  close (chan[0]);
  /* A direct spawn with a terminal is refused: its master comes from pid 1. */
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":32,\"argv\":[\"true\"],\"tty\":true,\"direct\":true}", NULL, 0);
  g_free (expect_spawn_failed (s.ctl, 32, EINVAL));

  /* The command kills its supervisor (its parent): the channel ends
   * after "spawned", and pid 1 says so on the control socket. */
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan), ==, 0);
  fds[3] = chan[1];
  send_request (s.ctl, "{\"op\":\"spawn\",\"id\":33,\"argv\":[\"sh\",\"-c\",\"sleep 0.3; kill -KILL $PPID\"],"
                COMMAND_ENV ",\"direct\":true}", fds, 4);
  close (chan[1]);
  {
    struct pollfd pfd = { .fd = chan[0], .events = POLLIN, .revents = 0 };
    char buf[512];
    ssize_t n;

    g_assert_cmpint (poll (&pfd, 1, 30000), ==, 1);
    do
      n = recv (chan[0], buf, sizeof buf - 1, 0);
    while (n < 0 && errno == EINTR);
    g_assert_cmpint (n, >=, 0);
    buf[MAX (n, 0)] = '\0';
    g_test_message ("event: %s", buf);
    /* "spawned", then the end; or the end at once, had the kill beaten
     * the supervisor's own report. Never an exit status it did not see. */
    if (n > 0)
      {
        g_assert_true (g_str_has_prefix (buf, "{\"event\":\"spawned\",\"id\":33,"));
        expect_channel_end (chan[0]);
      }
  }
  close (chan[0]);
  expect_event (s.ctl, "{\"event\":\"supervisor-gone\",\"id\":33}\n");

  g_free (session_stop (&s));
}

/* Watches the newest pids for a process whose memory map is the helper's
 * while it has no capabilities: a command's child between its capability
 * drop and its exec, sharing its supervisor's memory. Prints how many it
 * could read; stops once the file "stop" appears in its folder. */
#define WINDOW_WATCHER \
  "import os\n" \
  "hits = 0\n" \
  "last = os.getpid()\n" \
  "stop = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'stop')\n" \
  "i = 0\n" \
  "while not os.path.exists(stop):\n" \
  "    i += 1\n" \
  "    if i % 100 == 0:\n" \
  "        last = max(int(x) for x in os.listdir('/proc') if x.isdigit())\n" \
  "    for p in range(last - 1, last + 6):\n" \
  "        try:\n" \
  "            with open('/proc/%d/maps' % p, 'rb') as f:\n" \
  "                data = f.read()\n" \
  "        except OSError:\n" \
  "            continue\n" \
  "        last = max(last, p)\n" \
  "        if b'paddock-sandbox' in data:\n" \
  "            hits += 1\n" \
  "print('hits', hits, flush=True)\n"

/* A command's supervisor, whose memory its command's child shares until
 * exec (CLONE_VM), is not dumpable: no process of the session can read or
 * hold that memory through the child's /proc entries in the window
 * between the child's capability drop and its exec. */
static void
test_command_supervisor_memory (Fixture       *fx,
                                gconstpointer  data)
{
  Session s;
  paddock_autofd int null_fd = -1;
  int out_pipe[2];
  int fds[3];
  g_autofree char *out = NULL;
  g_autofree char *json = NULL;
  g_autofree char *watcher = g_build_filename (fx->workspace, "watcher.py", NULL);
  g_autofree char *stop = g_build_filename (fx->workspace, "stop", NULL);
  g_autoptr(GString) path = g_string_new ("PATH=");
  guint32 id;

  if (skip_without_userns ())
    return;

  session_start (&s, fx->workspace);
  null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  fds[0] = null_fd;
  fds[2] = null_fd;

  /* The kernel's own evidence: a non-dumpable process's /proc files
   * belong to root (of its user namespace, or the overflow uid), not to
   * its uid, which is the command's; when that is root too (a run as
   * root), only the watch below tells. */
  g_assert_cmpint (pipe2 (out_pipe, O_CLOEXEC), ==, 0);
  fds[1] = out_pipe[1];
  json = spawn_sh_json (1, "u=$(id -u); if [ $u = 0 ]; then echo root;"
                        " elif [ \"$(stat -c %u /proc/$PPID/mem)\" != $u ]; then echo not-dumpable; fi",
                        NULL, FALSE);
  send_request (s.ctl, json, fds, 3);
  close (out_pipe[1]);
  out = read_all (out_pipe[0]);
  close (out_pipe[0]);
  g_assert_cmpstr (out, ==, getuid () == 0 ? "root\n" : "not-dumpable\n");
  expect_spawned (s.ctl, 1);
  expect_exited (s.ctl, 1, "\"status\":0");

  /* And the window itself, held open by a PATH of 2000 missing folders,
   * watched by another command of the session. */
  if (!g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_message ("no /usr/bin/python3: the window is not watched");
      g_free (session_stop (&s));
      return;
    }
  g_assert_true (g_file_set_contents (watcher, WINDOW_WATCHER, -1, NULL));
  g_assert_cmpint (pipe2 (out_pipe, O_CLOEXEC), ==, 0);
  fds[1] = out_pipe[1];
  g_clear_pointer (&json, g_free);
  json = g_strdup_printf ("{\"op\":\"spawn\",\"id\":2,\"argv\":[\"/usr/bin/python3\",\"%s\"]," COMMAND_ENV "}",
                          watcher);
  send_request (s.ctl, json, fds, 3);
  close (out_pipe[1]);
  expect_spawned (s.ctl, 2);

  for (guint k = 0; k < 2000; k++)
    g_string_append_printf (path, "/nonexistent-%u:", k);
  g_string_append (path, "/usr/bin:/bin");
  fds[1] = null_fd;
  for (id = 3; id < 103; id++)
    {
      g_autofree char *spawn = g_strdup_printf ("{\"op\":\"spawn\",\"id\":%u,\"argv\":[\"true\"],\"env\":[\"%s\"]}",
                                                id, path->str);

      send_request (s.ctl, spawn, fds, 3);
      expect_spawned (s.ctl, id);
      expect_exited (s.ctl, id, "\"status\":0");
    }
  g_assert_true (g_file_set_contents (stop, "", 0, NULL));
  g_clear_pointer (&out, g_free);
  out = read_all (out_pipe[0]);
  close (out_pipe[0]);
  g_assert_cmpstr (out, ==, "hits 0\n");
  expect_exited (s.ctl, 2, "\"status\":0");

  g_free (session_stop (&s));
}

/* ---- the host profile ---------------------------------------------------- */

static void
test_host_profile (Fixture       *fx,
                   gconstpointer  data)
{
  const char *options[] = { "--profile", "host", "--env", AGENT_PATH, NULL };
  const char *cmd[] = { "sh", "-c", "readlink /proc/self/ns/user; pwd; exit 3", NULL };
  g_autofree char *out = NULL;
  g_autofree char *ours = g_file_read_link ("/proc/self/ns/user", NULL);
  g_autofree char *expected = g_strdup_printf ("%s\n%s\n", ours, fx->workspace);

  /* Only when asked for: no namespaces, same view, same status rules. */
  g_assert_cmpint (run_helper (fx->workspace, options, cmd, &out, NULL), ==, 3);
  g_assert_cmpstr (out, ==, expected);
}

/* ---- main ------------------------------------------------------------------ */

/* One probe run decides whether the kernel lets us create namespaces here;
 * exit 125 is the helper's way of saying no, with the reason on stderr. */
static void
probe_userns (void)
{
  g_autofree char *ws = g_dir_make_tmp ("paddock-sandbox-probe-XXXXXX", NULL);
  const char *cmd[] = { "/bin/true", NULL };
  g_autofree char *err = NULL;
  int status;

  g_assert_nonnull (ws);
  status = run_helper (ws, NULL, cmd, NULL, &err);
  g_rmdir (ws);
  if (status == 125)
    userns_skip_reason = g_strdup_printf ("user namespaces unavailable: %s", g_strstrip (err));
  else if (status != 0)
    g_error ("the helper fails a plain run (exit %d): %s", status, err);
}

int
main (int    argc,
      char **argv)
{
  const char *build_root = g_getenv ("PADDOCK_BUILD_ROOT");

  g_test_init (&argc, &argv, NULL);

  if (build_root == NULL)
    {
      g_printerr ("PADDOCK_BUILD_ROOT is not set\n");
      return 1;
    }
  sandbox_path = g_build_filename (build_root, "daemon", "sandbox", "paddock-sandbox", NULL);
  /* In our environment, where a leak would show. */
  g_setenv (CANARY_NAME, CANARY_VALUE, TRUE);

  probe_userns ();

#define ADD(path, func, data) \
  g_test_add ("/sandbox/" path, Fixture, data, fixture_setup, func, fixture_teardown)

  ADD ("pid-and-namespaces", test_pid_and_namespaces, NULL);
  ADD ("fds-and-reaping", test_fds_and_reaping, NULL);
  ADD ("parent-death/survives", test_parent_death, GINT_TO_POINTER (FALSE));
  ADD ("parent-death/die-with-parent", test_parent_death, GINT_TO_POINTER (TRUE));
  ADD ("workspace-shared", test_workspace_shared, NULL);
  ADD ("system-read-only", test_system_read_only, NULL);
  ADD ("home-invisible", test_home_invisible, NULL);
  ADD ("tmp-private", test_tmp_private, NULL);
  ADD ("environment-exact", test_environment_exact, NULL);
  ADD ("exit-status", test_exit_status, NULL);
  ADD ("bad-input", test_bad_input, NULL);
  ADD ("no-userns", test_no_userns, NULL);
  ADD ("control-fd", test_control_fd, NULL);
  ADD ("pty", test_pty, NULL);
  ADD ("teardown/agent-exits", test_tree_teardown, GINT_TO_POINTER (END_EXIT));
  ADD ("teardown/helper-sigkill", test_tree_teardown, GINT_TO_POINTER (END_SIGKILL));
  ADD ("teardown/helper-sigterm", test_tree_teardown, GINT_TO_POINTER (END_SIGTERM));
  ADD ("host-profile", test_host_profile, NULL);
  ADD ("commands/output-and-status", test_command_output_and_status, NULL);
  ADD ("commands/tty", test_command_tty, NULL);
  ADD ("commands/own-tty", test_command_own_tty, NULL);
  ADD ("commands/kill-tree/sigkill", test_command_kill_tree, GINT_TO_POINTER (SIGKILL));
  ADD ("commands/kill-tree/sigterm", test_command_kill_tree, GINT_TO_POINTER (SIGTERM));
  ADD ("commands/confined", test_command_confined, NULL);
  ADD ("commands/bad-requests", test_command_bad_requests, NULL);
  ADD ("commands/socket", test_command_socket, NULL);
  ADD ("probe-socket-refused", test_probe_socket_refused, NULL);
  ADD ("own-netns-bind-unrestricted", test_own_netns_bind_unrestricted, NULL);
  ADD ("probe-protected-first-unexpected", test_probe_protected_first_unexpected, NULL);
  ADD ("commands/limit", test_command_limit, NULL);
  ADD ("commands/spare-supervisor", test_command_spare, NULL);
  ADD ("commands/direct", test_command_direct, NULL);
  ADD ("commands/supervisor-reuse", test_command_supervisor_reuse, NULL);
  ADD ("commands/supervisor-memory", test_command_supervisor_memory, NULL);

#undef ADD

  return g_test_run ();
}
