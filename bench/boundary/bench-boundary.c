/* bench-boundary.c — what the `safe` boundary costs next to the `host` profile
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Prints, in one run on this machine, the cost of running inside the full
 * `safe` boundary (user, mount and PID namespaces, the staged workspace,
 * no_new_privs, Landlock, seccomp, the canary probes) as a ratio to the
 * `host` profile (the same daemon, no isolation), rounds interleaved so the
 * machine's noise hits both alike:
 *
 *   1. session start: CreateSession -> Attach -> first output byte of
 *      `sh -c 'echo x'`, in a workspace of 10,000 files under git;
 *   2. a syscall-heavy workload run with Session1.Exec inside a running
 *      session of each profile, until its exit status is in hand:
 *      `git status --porcelain` in that 10,000-file tree, and `gcc -c` of
 *      32 generated C files one after another.
 *
 * The same workload run directly by this process (g_spawn_sync) is printed
 * for reference. The trees live on a tmpfs in a mount namespace of our own
 * when this process may mount one (as bench/staging does), else in $TMPDIR.
 *
 * The workload's figures are built to mean something on a shared 2-core
 * machine: every round runs each variant once, in an order that rotates
 * from round to round; the overhead is the median of the rounds' paired
 * ratios (safe / host of the same round), with a distribution-free 95%
 * confidence interval of that median (order statistics); and next to wall
 * time, CPU time: the session cgroup's usage_usec across the Exec (the
 * command, its supervisor and anything else the session did meanwhile),
 * which waiting for a core does not inflate. CPU is "n/a" where sessions
 * get no cgroup.
 *
 * --attribute adds sessions of the safe profile, each from a daemon of its
 * own, with one layer left out through the daemons' test switches:
 * PADDOCK_TEST_WITHOUT_LAYERS=seccomp, =landlock, and PADDOCK_STAGING=copy
 * (the workspace staged as a plain copy instead of an overlay), so that
 * each layer's share of the overhead shows; and times safe starts of the
 * copy stage's daemon, to show what copying the tree at start costs.
 *
 * The workload also runs on the kernel's floor: the same overlay as a safe
 * session's stage (rootless, userxattr, its upper folder on the same tmpfs)
 * mounted by a child of the bench in a user and mount namespace of its own,
 * with none of Paddock's layers, the workload forked and timed there as the
 * direct run is here. Its overhead over the direct run is what the overlay
 * alone costs; what the safe session costs over host beyond it is Paddock's.
 *
 * Targets (issue #5): workload < 5% over host; start within 2x of host.
 *
 * Start also runs a safe session in an empty workspace, interleaved, to
 * show what the tree's size adds.
 *
 * --peer-build DIR adds, interleaved with the rest, safe starts and a safe
 * workload session from the paddockd of another build tree (say, of the
 * commit before a change), so that a before/after comparison is made in
 * one run, under the same load.
 *
 * Usage: bench-boundary [--rounds N] [--workload-rounds M] [--attribute] [--start-only]
 *                       [--peer-build DIR]
 *        (defaults: N 9, start uses 2N rounds; M 15; --start-only: section 1 alone)
 *
 * Exits non-zero when a session or a workload fails.
 */

#include "config.h"

#include "bench-common.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixfdlist.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "paddock-durable-file.h"
#include "paddock-test-client.h"
#include "paddock-test-daemon.h"

#define TREE_FILES   10000
#define TREE_FOLDERS 100
#define C_FILES      32

static PaddockTestDaemon *daemon_under_test;
static PaddockTestDaemon *peer_daemon;  /* --peer-build: another build's paddockd */
static PaddockTestDaemon *copy_daemon;  /* --attribute: a paddockd staging by copy, for starts */
static GHashTable *ended;        /* command path -> exit status */
static char *base_dir;
static gboolean base_is_tmpfs;
static char *workspace;
static char *empty_workspace;   /* for the start in an empty workspace */

static void
destroy_session_on (GDBusConnection *connection,
                    const char      *path)
{
  g_autoptr(GVariant) result = NULL;
  g_autoptr(GError) error = NULL;
  guint32 survivors = G_MAXUINT32;

  if (!paddock_test_destroy_session (connection, path, &result, &error))
    g_printerr ("bench-boundary: Destroy %s: %s\n", path, error->message);
  else
    {
      g_variant_lookup (result, "survivors", "u", &survivors);
      if (survivors != 0)
        g_printerr ("bench-boundary: Destroy %s: %u survivors\n", path, survivors);
    }
}

static void
destroy_session (const char *path)
{
  destroy_session_on (paddock_test_daemon_get_connection (daemon_under_test), path);
}

static void bare_overlay_stop (void);

/* After the sessions, which the helper library destroys (it made them),
 * on the way out and when the bench bails. */
static void
clean_up (gpointer data G_GNUC_UNUSED)
{
  g_clear_pointer (&daemon_under_test, paddock_test_daemon_free);
  g_clear_pointer (&peer_daemon, paddock_test_daemon_free);
  g_clear_pointer (&copy_daemon, paddock_test_daemon_free);
  bare_overlay_stop ();
  if (base_dir != NULL)
    {
      /* Unmounting a tmpfs frees it at once; the watcher removes the folder. */
      if (!base_is_tmpfs || umount2 (base_dir, MNT_DETACH) != 0)
        paddock_remove_tree (base_dir);
    }
}

/* A child in the original mount namespace that outlives us: once our end
 * of its pipe closes (however we exit), it removes @dir. */
static void
start_watcher (const char *dir)
{
  int fds[2];
  pid_t pid;

  if (pipe2 (fds, O_CLOEXEC) != 0)
    paddock_test_bail ("pipe: %s", g_strerror (errno));
  pid = fork ();
  if (pid < 0)
    paddock_test_bail ("fork: %s", g_strerror (errno));
  if (pid == 0)
    {
      char byte;
      int null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);

      close (fds[1]);
      dup2 (null_fd, STDIN_FILENO);
      dup2 (null_fd, STDOUT_FILENO);
      dup2 (null_fd, STDERR_FILENO);
      setsid ();
      while (read (fds[0], &byte, 1) < 0 && errno == EINTR)
        ;
      /* The daemon dies with us (PDEATHSIG); give it a moment. */
      g_usleep (200 * 1000);
      paddock_remove_tree (dir);
      _exit (0);
    }
  close (fds[0]);
}

/* A tmpfs for the tree, the state folder and the bus, in a mount namespace
 * of our own (so it goes away with us); FALSE when we may not mount. */
static gboolean
mount_private_tmpfs (const char *dir)
{
  if (unshare (CLONE_NEWNS) != 0)
    return FALSE;
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
      mount ("paddock-bench", dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
    paddock_test_bail ("mount a tmpfs on %s: %s", dir, g_strerror (errno));
  return TRUE;
}

static void
write_or_bail (const char *path,
               const char *contents)
{
  g_autoptr(GError) error = NULL;

  if (!g_file_set_contents (path, contents, -1, &error))
    paddock_test_bail ("%s", error->message);
}

static void
run_or_bail (const char * const *argv,
             const char         *cwd)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  int status = 0;

  if (!g_spawn_sync (cwd, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                     NULL, NULL, NULL, &err, &status, &error))
    paddock_test_bail ("%s: %s", argv[0], error->message);
  if (!g_spawn_check_wait_status (status, NULL))
    paddock_test_bail ("%s failed: %s", argv[0], err);
}

/* 10,000 small files in 100 folders, plus C_FILES C files in cc/, all
 * committed: the tree `git status` walks and gcc compiles. */
static void
generate_tree (void)
{
  const char *init[] = { "git", "init", "-q", NULL };
  const char *age[] = { "find", ".", "-path", "./.git", "-prune", "-o", "-exec", "touch", "-h", "-d",
                        "1 hour ago", "{}", "+", NULL };
  const char *refresh[] = { "git", "status", "--porcelain", NULL };
  const char *add[] = { "git", "add", "-A", NULL };
  const char *commit[] = { "git", "commit", "-q", "-m", "tree", NULL };
  g_autofree char *cc = g_build_filename (workspace, "cc", NULL);
  g_autofree char *header = g_build_filename (cc, "common.h", NULL);

  for (guint d = 0; d < TREE_FOLDERS; d++)
    {
      g_autofree char *dir = g_strdup_printf ("%s/src%03u", workspace, d);

      if (g_mkdir_with_parents (dir, 0755) != 0)
        paddock_test_bail ("mkdir %s: %s", dir, g_strerror (errno));
      for (guint f = 0; f < TREE_FILES / TREE_FOLDERS; f++)
        {
          g_autofree char *file = g_strdup_printf ("%s/file%03u.txt", dir, f);
          g_autofree char *text = g_strdup_printf ("file %u of folder %u\n", f, d);

          write_or_bail (file, text);
        }
    }

  if (g_mkdir_with_parents (cc, 0755) != 0)
    paddock_test_bail ("mkdir %s: %s", cc, g_strerror (errno));
  write_or_bail (header, "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
                         "struct item { int key; char name[32]; struct item *next; };\n");
  for (guint i = 0; i < C_FILES; i++)
    {
      g_autofree char *file = g_strdup_printf ("%s/unit%02u.c", cc, i);
      g_autofree char *text =
        g_strdup_printf ("#include \"common.h\"\n\n"
                         "static struct item *\nmake_%u (int key)\n{\n"
                         "  struct item *it = calloc (1, sizeof *it);\n"
                         "  it->key = key * %u;\n"
                         "  snprintf (it->name, sizeof it->name, \"unit %u/%%d\", key);\n"
                         "  return it;\n}\n\n"
                         "int\nsum_%u (int n)\n{\n  struct item *head = NULL;\n  int total = 0;\n\n"
                         "  for (int i = 0; i < n; i++)\n    {\n"
                         "      struct item *it = make_%u (i);\n      it->next = head;\n      head = it;\n    }\n"
                         "  while (head != NULL)\n    {\n      struct item *next = head->next;\n\n"
                         "      total += head->key + (int) strlen (head->name);\n"
                         "      free (head);\n      head = next;\n    }\n  return total;\n}\n",
                         i, i + 1, i, i, i);

      write_or_bail (file, text);
    }

  run_or_bail (init, workspace);
  run_or_bail (add, workspace);
  run_or_bail (commit, workspace);
  /* Files an hour old and an index written after them: otherwise every
   * entry is "racily clean" (as new as the index) and git re-reads each
   * file's content on every status, in whichever session has that index,
   * which measures git's caution rather than the boundary. */
  run_or_bail (age, workspace);
  g_usleep (G_USEC_PER_SEC);
  run_or_bail (refresh, workspace);
}

/* ------------------------------------------------------------------------ */

static char *
create_session_on (GDBusConnection    *connection,
                   const char         *profile,
                   const char * const *argv)
{
  return paddock_test_create_session_or_fail (connection, workspace, profile, argv, NULL);
}

static char *
create_session (const char         *profile,
                const char * const *argv)
{
  return create_session_on (paddock_test_daemon_get_connection (daemon_under_test), profile, argv);
}

/* Reads one byte, waiting at most 10 s; returns it, or -1. */
static int
read_one_byte (int fd)
{
  struct pollfd p = { .fd = fd, .events = POLLIN };
  unsigned char byte;

  for (;;)
    {
      int ready = poll (&p, 1, 10000);

      if (ready < 0 && errno == EINTR)
        continue;
      if (ready <= 0)
        return -1;
      if (read (fd, &byte, 1) == 1)
        return byte;
      if (errno != EINTR && errno != EAGAIN)
        return -1;
    }
}

/* CreateSession -> Attach -> the first byte on the viewer's socket, in ms,
 * on @daemon (its sessions are destroyed right away). */
static double
start_ms_on (PaddockTestDaemon *daemon,
             const char        *profile)
{
  const char *argv[] = { "sh", "-c", "echo x", NULL };
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  gint64 start;
  double ms;
  int byte;
  int fd;

  start = g_get_monotonic_time ();
  path = create_session_on (connection, profile, argv);
  fd = paddock_test_attach (connection, path, NULL, NULL, &error);
  if (fd < 0)
    paddock_test_bail ("Attach: %s", error->message);
  byte = read_one_byte (fd);
  ms = bench_ms_since (start);
  close (fd);

  destroy_session_on (connection, path);
  if (byte != 'x')
    paddock_test_bail ("the %s session printed no 'x' (got %d)", profile, byte);
  return ms;
}

/* Every command's PropertiesChanged: remember those that ended. */
static void
properties_changed_cb (GDBusConnection *connection,
                       const char      *sender_name,
                       const char      *object_path,
                       const char      *interface_name,
                       const char      *signal_name,
                       GVariant        *parameters,
                       gpointer         user_data)
{
  g_autoptr(GVariant) changed = NULL;
  const char *interface = NULL;
  const char *state = NULL;
  gint32 status = -1;

  g_variant_get (parameters, "(&s@a{sv}@as)", &interface, &changed, NULL);
  if (!g_str_equal (interface, "org.paddock.Command1") ||
      !g_variant_lookup (changed, "State", "&s", &state) ||
      g_str_equal (state, "starting") || g_str_equal (state, "running"))
    return;
  g_variant_lookup (changed, "ExitStatus", "i", &status);
  /* Keyed by connection too: each daemon numbers its objects alike. */
  g_hash_table_insert (ended, g_strdup_printf ("%p %s", (void *) connection, object_path),
                       GINT_TO_POINTER (status));
}

/* git as any user would have it, without this machine's configuration; the
 * tree belongs to whoever runs the bench, which inside a user namespace may
 * show as another owner, so git is told the folder is safe. */
static const char *git_env[][2] = {
  { "GIT_CONFIG_NOSYSTEM", "1" },
  { "GIT_CONFIG_GLOBAL", "/dev/null" },
  { "GIT_CONFIG_COUNT", "1" },
  { "GIT_CONFIG_KEY_0", "safe.directory" },
  { "GIT_CONFIG_VALUE_0", "*" },
};

/* One way of running the workload: a session of some profile, from a
 * daemon whose test switches leave one layer out, or the bench itself. */
typedef struct {
  const char *name;
  const char *profile;         /* NULL: run directly by the bench */
  gboolean bare;               /* run on the kernel's floor (bare_ms) */
  const char *without_layers;  /* PADDOCK_TEST_WITHOUT_LAYERS of its daemon */
  const char *staging;         /* PADDOCK_STAGING of its daemon */
  const char *build_root;      /* its daemon's build tree (--peer-build) */
  PaddockTestDaemon *daemon;   /* its own daemon, or NULL: daemon_under_test's */
  GDBusConnection *connection;
  guint subscription;
  char *session;
  PaddockIpcSession1 *proxy;   /* the session's, made before any clock starts */
  char *cpu_stat;              /* the session cgroup's cpu.stat, or NULL */
} Variant;

/* Session1.Exec of @argv in @variant's session (cwd: the workspace) until
 * its exit status is in hand, in ms; *@cpu_ms: the session's CPU time
 * meanwhile, or -1. */
static double
exec_ms (Variant            *variant,
         const char * const *argv,
         double             *cpu_ms)
{
  GDBusConnection *connection = variant->connection;
  g_autoptr(GVariant) released = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;
  g_autofree char *command = NULL;
  GVariantBuilder env;
  gpointer status = NULL;
  gint64 cpu_before;
  gint64 cpu_after;
  gint64 start;
  double ms;

  g_variant_builder_init (&env, G_VARIANT_TYPE ("a{ss}"));
  for (guint i = 0; i < G_N_ELEMENTS (git_env); i++)
    g_variant_builder_add (&env, "{ss}", git_env[i][0], git_env[i][1]);

  cpu_before = bench_cpu_usage_us (variant->cpu_stat);
  start = g_get_monotonic_time ();
  if (!paddock_ipc_session1_call_exec_sync (variant->proxy, argv, "", g_variant_builder_end (&env), 0, FALSE,
                                            &command, NULL, &error))
    paddock_test_bail ("Exec %s: %s", argv[0], error->message);
  key = g_strdup_printf ("%p %s", (void *) connection, command);

  while (!g_hash_table_lookup_extended (ended, key, NULL, &status))
    {
      if (bench_ms_since (start) > 120 * 1000)
        paddock_test_bail ("%s (%s) never ended", command, argv[0]);
      g_main_context_iteration (NULL, TRUE);
    }
  ms = bench_ms_since (start);
  cpu_after = bench_cpu_usage_us (variant->cpu_stat);
  *cpu_ms = cpu_before >= 0 && cpu_after >= cpu_before ? (double) (cpu_after - cpu_before) / 1000.0 : -1;

  if (GPOINTER_TO_INT (status) != 0)
    {
      g_autoptr(GVariant) output =
        paddock_test_command_call (variant->proxy, command, "ReadOutput",
                                   g_variant_new ("(stu)", "stderr", (guint64) 0, 4096), NULL);
      g_autoptr(GVariant) bytes = output != NULL ? g_variant_get_child_value (output, 0) : NULL;

      paddock_test_bail ("`%s` in %s exited with %d: %.*s", argv[0], variant->name, GPOINTER_TO_INT (status),
            bytes != NULL ? (int) g_variant_get_size (bytes) : 0,
            bytes != NULL ? (const char *) g_variant_get_data (bytes) : "");
    }
  released = paddock_test_command_call (variant->proxy, command, "Release", NULL, NULL);
  g_hash_table_remove (ended, key);
  return ms;
}

/* The same workload run by this process directly, in ms; *@cpu_ms: its
 * CPU time (its children's). */
static double
direct_ms (const char * const *argv,
           double             *cpu_ms)
{
  double cpu = bench_children_cpu_ms ();
  gint64 start = g_get_monotonic_time ();
  double ms;

  run_or_bail (argv, workspace);
  ms = bench_ms_since (start);
  *cpu_ms = bench_children_cpu_ms () - cpu;
  return ms;
}

/* The kernel's floor: a child in a user and mount namespace of its own with
 * the workspace under the same overlay a safe session's stage is (see the
 * top of the file). It runs workload K when sent the byte K and answers
 * with a BareAnswer; it exits when its request pipe closes. */
typedef struct {
  gint64 wall_us;
  gint64 cpu_us;    /* the workload's user + system time */
  int    status;    /* its wait status, or -errno if it could not start */
} BareAnswer;

typedef struct {
  pid_t pid;
  int   request;    /* our end: a byte per workload to run */
  int   answer;     /* our end: a BareAnswer per workload */
} BareOverlay;

static BareOverlay bare_overlay = { -1, -1, -1 };

static gint64
monotonic_us (void)
{
  struct timespec now;

  clock_gettime (CLOCK_MONOTONIC, &now);
  return (gint64) now.tv_sec * G_USEC_PER_SEC + now.tv_nsec / 1000;
}

static gboolean
write_map (const char *file,
           const char *line)
{
  int fd = open (file, O_WRONLY | O_CLOEXEC);
  gboolean written;

  if (fd < 0)
    return FALSE;
  written = write (fd, line, strlen (line)) == (ssize_t) strlen (line);
  close (fd);
  return written;
}

/* The child's whole life, after fork: only system calls and what was made
 * before the fork, since the bench may have threads by then. */
static void G_GNUC_NORETURN
bare_overlay_child (int                  request,
                    int                  answer,
                    const char          *merged,
                    const char          *options,
                    const char * const * const *workloads,
                    guint                n_workloads,
                    const char          *uid_map,
                    const char          *gid_map)
{
  int null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  BareAnswer ready = { 0, 0, 0 };
  unsigned char k;

  if (unshare (CLONE_NEWUSER | CLONE_NEWNS) != 0 ||
      !write_map ("/proc/self/setgroups", "deny") ||
      !write_map ("/proc/self/uid_map", uid_map) ||
      !write_map ("/proc/self/gid_map", gid_map) ||
      mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
      mount ("overlay", merged, "overlay", MS_NOSUID | MS_NODEV, options) != 0)
    ready.status = -errno;
  if (write (answer, &ready, sizeof ready) != sizeof ready || ready.status != 0)
    _exit (1);

  while (read (request, &k, 1) == 1 && k < n_workloads)
    {
      BareAnswer done = { 0, 0, 0 };
      gint64 start = monotonic_us ();
      struct rusage usage;
      pid_t pid = fork ();

      if (pid == 0)
        {
          if (chdir (merged) != 0)
            _exit (126);
          dup2 (null_fd, STDIN_FILENO);
          dup2 (null_fd, STDOUT_FILENO);
          execvp (workloads[k][0], (char * const *) workloads[k]);
          _exit (127);
        }
      if (pid < 0)
        done.status = -errno;
      else if (wait4 (pid, &done.status, 0, &usage) != pid)
        done.status = -errno;
      else
        done.cpu_us = (gint64) (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * G_USEC_PER_SEC +
                      usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
      done.wall_us = monotonic_us () - start;
      if (write (answer, &done, sizeof done) != sizeof done)
        _exit (1);
    }
  _exit (0);
}

/* Mounts the floor's overlay over @lower (the workspace) in a child; its
 * upper and work folders in @dir, as a stage's are in the daemon's state
 * folder on the same tmpfs. */
static void
bare_overlay_start (const char                 *lower,
                    const char                 *dir,
                    const char * const * const *workloads,
                    guint                       n_workloads)
{
  g_autofree char *upper = g_build_filename (dir, "upper", NULL);
  g_autofree char *work = g_build_filename (dir, "work", NULL);
  g_autofree char *merged = g_build_filename (dir, "merged", NULL);
  g_autofree char *options = NULL;
  g_autofree char *uid_map = g_strdup_printf ("0 %u 1\n", (guint) getuid ());
  g_autofree char *gid_map = g_strdup_printf ("0 %u 1\n", (guint) getgid ());
  int request[2];
  int answer[2];
  BareAnswer ready;

  /* overlayfs splits its options at ',' and ':'; our own temporary
   * folders have neither, but $TMPDIR might. */
  if (strpbrk (dir, ",:\\") != NULL || strpbrk (lower, ",:\\") != NULL)
    paddock_test_bail ("the overlay's folders may not hold ',', ':' or '\\': %s", dir);
  options = g_strdup_printf ("lowerdir=%s,upperdir=%s,workdir=%s,userxattr", lower, upper, work);
  if (mkdir (dir, 0700) != 0 || mkdir (upper, 0755) != 0 || mkdir (work, 0755) != 0 ||
      mkdir (merged, 0755) != 0)
    paddock_test_bail ("mkdir in %s: %s", dir, g_strerror (errno));
  if (pipe2 (request, O_CLOEXEC) != 0 || pipe2 (answer, O_CLOEXEC) != 0)
    paddock_test_bail ("pipe: %s", g_strerror (errno));

  bare_overlay.pid = fork ();
  if (bare_overlay.pid < 0)
    paddock_test_bail ("fork: %s", g_strerror (errno));
  if (bare_overlay.pid == 0)
    {
      close (request[1]);
      close (answer[0]);
      bare_overlay_child (request[0], answer[1], merged, options, workloads, n_workloads, uid_map, gid_map);
    }
  close (request[0]);
  close (answer[1]);
  bare_overlay.request = request[1];
  bare_overlay.answer = answer[0];
  if (read (bare_overlay.answer, &ready, sizeof ready) != sizeof ready)
    paddock_test_bail ("the overlay's child died before it mounted");
  if (ready.status != 0)
    paddock_test_bail ("the overlay's child could not mount it: %s", g_strerror (-ready.status));
}

static void
bare_overlay_stop (void)
{
  if (bare_overlay.pid <= 0)
    return;
  close (bare_overlay.request);
  close (bare_overlay.answer);
  waitpid (bare_overlay.pid, NULL, 0);
  bare_overlay.pid = -1;
}

/* Workload @k on the floor's overlay, in ms; *@cpu_ms: its CPU time. */
static double
bare_ms (guint   k,
         double *cpu_ms)
{
  unsigned char byte = (unsigned char) k;
  BareAnswer done;

  if (write (bare_overlay.request, &byte, 1) != 1 ||
      read (bare_overlay.answer, &done, sizeof done) != sizeof done)
    paddock_test_bail ("the overlay's child is gone");
  if (done.status < 0)
    paddock_test_bail ("workload %u on the bare overlay could not start: %s", k, g_strerror (-done.status));
  if (!WIFEXITED (done.status) || WEXITSTATUS (done.status) != 0)
    paddock_test_bail ("workload %u on the bare overlay failed (wait status %d)", k, done.status);
  *cpu_ms = (double) done.cpu_us / 1000.0;
  return (double) done.wall_us / 1000.0;
}

/* The median of @values (sorted here) and its distribution-free 95%
 * confidence interval: the order statistics k and n+1-k (1-based) with
 * P(Binomial(n, 1/2) < k) <= 2.5%. FALSE (no interval) below 6 values. */
static gboolean
median_interval (GArray *values,
                 double *low,
                 double *high)
{
  guint n = values->len;
  double tail = 0;
  double term;
  guint k = 0;

  g_array_sort (values, bench_compare_double);
  /* term = C(n, i) / 2^n, summed while the tail stays within 2.5%. */
  term = 1;
  for (guint i = 0; i < n; i++)
    term /= 2;
  while (k < n / 2 && tail + term <= 0.025)
    {
      tail += term;
      term = term * (double) (n - k) / (double) (k + 1);
      k++;
    }
  if (k == 0)
    return FALSE;
  *low = g_array_index (values, double, k - 1);
  *high = g_array_index (values, double, n - k);
  return TRUE;
}

/* "+4.2% [+1.0, +6.3]": the median paired overhead and its interval. */
static void
print_overhead (const char *what,
                GArray     *ratios)
{
  double low;
  double high;
  double m = bench_median (ratios);

  if (median_interval (ratios, &low, &high))
    g_print ("%s %+6.1f%% (95%% CI %+.1f to %+.1f)", what, 100.0 * (m - 1), 100.0 * (low - 1),
             100.0 * (high - 1));
  else
    g_print ("%s %+6.1f%%", what, 100.0 * (m - 1));
}

static void
variant_open (Variant            *variant,
              const char * const *sleep_argv)
{
  if (variant->profile == NULL)
    return;
  if (variant->without_layers != NULL || variant->staging != NULL || variant->build_root != NULL)
    {
      g_autofree char *own_root = g_strdup (g_getenv ("PADDOCK_BUILD_ROOT"));

      if (variant->without_layers != NULL)
        g_setenv ("PADDOCK_TEST_WITHOUT_LAYERS", variant->without_layers, TRUE);
      if (variant->staging != NULL)
        g_setenv ("PADDOCK_STAGING", variant->staging, TRUE);
      if (variant->build_root != NULL)
        g_setenv ("PADDOCK_BUILD_ROOT", variant->build_root, TRUE);
      variant->daemon = paddock_test_daemon_new (NULL);
      g_setenv ("PADDOCK_BUILD_ROOT", own_root, TRUE);
      g_unsetenv ("PADDOCK_TEST_WITHOUT_LAYERS");
      g_unsetenv ("PADDOCK_STAGING");
      variant->connection = paddock_test_daemon_get_connection (variant->daemon);
      variant->session = create_session_on (variant->connection, variant->profile, sleep_argv);
    }
  else
    {
      variant->connection = paddock_test_daemon_get_connection (daemon_under_test);
      variant->session = create_session (variant->profile, sleep_argv);
    }
  variant->subscription = g_dbus_connection_signal_subscribe (variant->connection, "org.paddock.Daemon",
                                                              "org.freedesktop.DBus.Properties",
                                                              "PropertiesChanged", NULL, "org.paddock.Command1",
                                                              G_DBUS_SIGNAL_FLAGS_NONE, properties_changed_cb,
                                                              NULL, NULL);
  variant->cpu_stat = bench_session_cpu_stat (variant->connection, variant->session);
  variant->proxy = paddock_test_session (variant->connection, variant->session);
}

static void
variant_close (Variant *variant)
{
  if (variant->connection != NULL)
    g_dbus_connection_signal_unsubscribe (variant->connection, variant->subscription);
  g_clear_object (&variant->proxy);
  if (variant->daemon != NULL)
    {
      if (variant->session != NULL)
        paddock_test_destroy_session (variant->connection, variant->session, NULL, NULL);
      g_clear_pointer (&variant->daemon, paddock_test_daemon_free);
    }
  else if (variant->session != NULL)
    destroy_session (variant->session);
  g_clear_pointer (&variant->session, g_free);
  g_clear_pointer (&variant->cpu_stat, g_free);
}

int
main (int   argc,
      char *argv[])
{
  const char *sleep_argv[] = { "sleep", "3600", NULL };
  const char *git_argv[] = { "git", "status", "--porcelain", NULL };
  const char *gcc_argv[] = { "sh", "-c", "for f in cc/*.c; do gcc -O1 -c -o /dev/null \"$f\" || exit 1; done",
                             NULL };
  struct {
    const char *name;
    const char * const *argv;
  } workloads[] = {
    { "git status --porcelain, 10,000 files", git_argv },
    { "gcc -O1 -c of 32 C files, one by one", gcc_argv },
  };
  const char * const *workload_argvs[] = { git_argv, gcc_argv };
  Variant variants[] = {
    { .name = "run directly by the bench (reference)" },
    { .name = "host session", .profile = "host" },
    { .name = "safe session", .profile = "safe" },
    { .name = "bare overlay, no Paddock (floor)", .bare = TRUE },
    { .name = "safe without seccomp", .profile = "safe", .without_layers = "seccomp" },
    { .name = "safe without Landlock", .profile = "safe", .without_layers = "landlock" },
    { .name = "safe, copy stage (no overlay)", .profile = "safe", .staging = "copy" },
    { .name = "safe, peer build (--peer-build)", .profile = "safe" },
  };
  Variant *active[G_N_ELEMENTS (variants)];
  enum { DIRECT, HOST, SAFE, BARE, N_BASIC };
  const char *start_names[] = { "host", "safe", "safe, in an empty workspace", "safe, peer build (--peer-build)",
                                "safe, copy stage (--attribute)" };
  GArray *start_wall[5];
  PaddockTestDaemon *start_daemons[5] = { NULL };
  guint start_kinds[5];
  guint n_kinds = 0;
  const char *peer_build = NULL;
  g_autofree char *peer_build_owned = NULL;
  gboolean start_only = FALSE;
  g_autofree char *gcc = NULL;
  g_autofree char *git = NULL;
  guint64 rounds = 9;
  guint64 workload_rounds = 15;
  gboolean attribute = FALSE;
  guint n_variants;
  double s;
  double h;
  const char *where;

  signal (SIGPIPE, SIG_IGN);
  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--rounds") && i + 1 < argc)
        rounds = g_ascii_strtoull (argv[++i], NULL, 10);
      else if (g_str_equal (argv[i], "--workload-rounds") && i + 1 < argc)
        workload_rounds = g_ascii_strtoull (argv[++i], NULL, 10);
      else if (g_str_equal (argv[i], "--attribute"))
        attribute = TRUE;
      else if (g_str_equal (argv[i], "--start-only"))
        start_only = TRUE;
      else if (g_str_equal (argv[i], "--peer-build") && i + 1 < argc)
        peer_build = peer_build_owned = g_canonicalize_filename (argv[++i], NULL);
      else
        {
          g_printerr ("usage: %s [--rounds N] [--workload-rounds M] [--attribute] [--start-only] "
                      "[--peer-build DIR]\n", argv[0]);
          return 2;
        }
    }
  if (rounds < 1 || rounds > 1000 || workload_rounds < 1 || workload_rounds > 1000)
    {
      g_printerr ("bench-boundary: --rounds and --workload-rounds take 1 to 1000\n");
      return 2;
    }
  n_variants = 0;
  for (guint v = 0; v < G_N_ELEMENTS (variants); v++)
    {
      gboolean peer = v == G_N_ELEMENTS (variants) - 1;

      if (v < N_BASIC || (peer && peer_build != NULL) || (!peer && attribute))
        active[n_variants++] = &variants[v];
    }
  variants[G_N_ELEMENTS (variants) - 1].build_root = peer_build;

  paddock_test_set_fail_mode (PADDOCK_TEST_FAIL_BAIL, "bench-boundary");
  paddock_test_on_bail (clean_up, NULL);
  for (guint kind = 0; kind < G_N_ELEMENTS (start_wall); kind++)
    {
      start_wall[kind] = g_array_new (FALSE, FALSE, sizeof (double));
    }
  ended = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  gcc = g_find_program_in_path ("gcc");
  git = g_find_program_in_path ("git");
  if (gcc == NULL || git == NULL)
    paddock_test_bail ("gcc and git are needed");

  if (g_getenv ("PADDOCK_BUILD_ROOT") == NULL)
    {
      g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
      g_autofree char *bench_dir = g_path_get_dirname (exe);
      g_autofree char *root = g_build_filename (bench_dir, "..", "..", NULL);

      g_setenv ("PADDOCK_BUILD_ROOT", root, TRUE);
    }

  /* Before any thread: fork the watcher, then maybe unshare. */
  {
    /* Not g_get_tmp_dir (): it caches $TMPDIR, which we change below. */
    const char *tmp = g_getenv ("TMPDIR") != NULL && g_getenv ("TMPDIR")[0] != '\0'
                      ? g_getenv ("TMPDIR") : "/tmp";
    g_autofree char *made = g_build_filename (tmp, "paddock-bench-boundary-XXXXXX", NULL);

    if (g_mkdtemp (made) == NULL)
      paddock_test_bail ("no temporary folder in %s: %s", tmp, g_strerror (errno));
    start_watcher (made);
    base_is_tmpfs = mount_private_tmpfs (made);
    base_dir = g_steal_pointer (&made);
  }
  where = base_is_tmpfs ? "a private tmpfs" : "$TMPDIR (no tmpfs could be mounted)";
  g_setenv ("TMPDIR", base_dir, TRUE);
  for (guint i = 0; i < G_N_ELEMENTS (git_env); i++)
    g_setenv (git_env[i][0], git_env[i][1], TRUE);
  g_setenv ("GIT_AUTHOR_NAME", "bench", TRUE);
  g_setenv ("GIT_AUTHOR_EMAIL", "bench@example.org", TRUE);
  g_setenv ("GIT_COMMITTER_NAME", "bench", TRUE);
  g_setenv ("GIT_COMMITTER_EMAIL", "bench@example.org", TRUE);

  workspace = g_build_filename (base_dir, "ws", NULL);
  if (mkdir (workspace, 0755) != 0)
    paddock_test_bail ("mkdir %s: %s", workspace, g_strerror (errno));
  empty_workspace = g_build_filename (base_dir, "empty", NULL);
  if (mkdir (empty_workspace, 0755) != 0)
    paddock_test_bail ("mkdir %s: %s", empty_workspace, g_strerror (errno));
  generate_tree ();
  if (!start_only)
    {
      g_autofree char *bare_dir = g_build_filename (base_dir, "bare-overlay", NULL);

      bare_overlay_start (workspace, bare_dir, workload_argvs, G_N_ELEMENTS (workload_argvs));
    }

  g_setenv ("PADDOCK_TEST_QUIET", "1", TRUE);
  daemon_under_test = paddock_test_daemon_new (NULL);

  if (peer_build != NULL)
    {
      g_autofree char *own_root = g_strdup (g_getenv ("PADDOCK_BUILD_ROOT"));

      g_setenv ("PADDOCK_BUILD_ROOT", peer_build, TRUE);
      peer_daemon = paddock_test_daemon_new (NULL);
      g_setenv ("PADDOCK_BUILD_ROOT", own_root, TRUE);
    }

  /* --attribute also times a safe start whose workspace is staged as a
   * copy: what it would cost to avoid the overlay's stacking (the
   * workload's floor) by copying the tree at start. */
  if (attribute)
    {
      g_setenv ("PADDOCK_STAGING", "copy", TRUE);
      copy_daemon = paddock_test_daemon_new (NULL);
      g_unsetenv ("PADDOCK_STAGING");
    }
  start_daemons[0] = start_daemons[1] = start_daemons[2] = daemon_under_test;
  start_daemons[3] = peer_daemon;
  start_daemons[4] = copy_daemon;
  for (guint kind = 0; kind < G_N_ELEMENTS (start_daemons); kind++)
    if (start_daemons[kind] != NULL)
      start_kinds[n_kinds++] = kind;

  /* 1. Start: one warm-up each, then interleaved, in an order that
   * rotates from round to round. (No CPU column: /proc counts a daemon's
   * CPU in ticks of 10 ms, longer than a start.) Starts 0.2 s apart, as a
   * user's are: a safe start then finds the sandbox the daemon made ahead
   * after the one before (bench-sessions also times one that does not). */
  for (gint64 r = -1; r < (gint64) (2 * rounds); r++)
    {
      for (guint i = 0; i < n_kinds; i++)
        {
          guint kind = start_kinds[(r + 1 + i) % n_kinds];
          PaddockTestDaemon *daemon = start_daemons[kind];
          char *tree = workspace;
          double ms;

          if (kind == 2)
            workspace = empty_workspace;
          g_usleep (200 * 1000);
          ms = start_ms_on (daemon, kind == 0 ? "host" : "safe");
          workspace = tree;
          if (r < 0)
            continue;
          g_array_append_val (start_wall[kind], ms);
        }
    }
  {
    g_autofree char *loadavg = NULL;

    g_file_get_contents ("/proc/loadavg", &loadavg, NULL, NULL);
    g_print ("bench/boundary - the `safe` boundary next to the `host` profile, same daemon, same run, "
             "interleaved; %u cores; trees on %s; load %s", g_get_num_processors (), where,
             loadavg != NULL ? loadavg : "unknown\n");
  }

  s = bench_median (start_wall[1]);
  h = bench_median (start_wall[0]);
  g_print ("\n1. session start, CreateSession -> first output byte of `sh -c 'echo x'` "
           "(workspace: %u files under git; medians of %" G_GUINT64_FORMAT "; starts 0.2 s apart)\n",
           TREE_FILES + C_FILES + 1, 2 * rounds);
  for (guint i = 0; i < n_kinds; i++)
    {
      guint kind = start_kinds[i];
      double wall = bench_median (start_wall[kind]);

      g_print ("   %-40s %8.2f ms", start_names[kind], wall);
      if (kind > 0)
        g_print ("   %.2fx host", wall / h);
      g_print ("\n");
    }
  g_print ("   target: safe within 2x of host: %s\n", bench_verdict (s <= 2 * h));
  if (start_only)
    goto done;

  /* 2. The workload inside one long-running session of each variant.
   * Every round runs each variant once, starting at a different one each
   * round, so that none always runs first, or right after the same other,
   * or on a cache the same other warmed. The first two rounds are warm-up:
   * they also refresh git's index where it must (in a copy stage every
   * file has another inode number than the index says; through the
   * overlay a file keeps its own, and git rewrites nothing). */
  for (guint v = 0; v < n_variants; v++)
    variant_open (active[v], sleep_argv);

  g_print ("\n2. workload through Session1.Exec until its exit status; %" G_GUINT64_FORMAT
           " interleaved rounds, medians; overhead: median of the rounds' paired ratios to host,\n"
           "   with its 95%% confidence interval; CPU: the session cgroup's usage across the Exec "
           "(the bench's children's for the direct run)\n", workload_rounds);
  for (guint w = 0; w < G_N_ELEMENTS (workloads); w++)
    {
      GArray *wall[G_N_ELEMENTS (variants)];
      GArray *cpu[G_N_ELEMENTS (variants)];

      for (guint v = 0; v < n_variants; v++)
        {
          wall[v] = g_array_new (FALSE, FALSE, sizeof (double));
          cpu[v] = g_array_new (FALSE, FALSE, sizeof (double));
        }
      for (gint64 r = -2; r < (gint64) workload_rounds; r++)
        {
          for (guint i = 0; i < n_variants; i++)
            {
              guint v = (guint) ((r + 2 + i) % n_variants);
              double c = -1;
              double ms = active[v]->bare ? bare_ms (w, &c)
                          : active[v]->profile == NULL ? direct_ms (workloads[w].argv, &c)
                          : exec_ms (active[v], workloads[w].argv, &c);

              if (r < 0)
                continue;
              g_array_append_val (wall[v], ms);
              g_array_append_val (cpu[v], c);
            }
        }

      g_print ("   %s\n", workloads[w].name);
      g_print ("     %-38s %10s %10s\n", "", "wall", "CPU");
      for (guint v = 0; v < n_variants; v++)
        {
          /* The floor is set against the run it mirrors (the direct
           * one); the sessions against host. */
          guint base = active[v]->bare ? DIRECT : HOST;
          g_autoptr(GArray) wall_ratio = g_array_new (FALSE, FALSE, sizeof (double));
          g_autoptr(GArray) cpu_ratio = g_array_new (FALSE, FALSE, sizeof (double));
          g_autoptr(GArray) cpu_sorted = g_array_copy (cpu[v]);
          g_autoptr(GArray) wall_sorted = g_array_copy (wall[v]);
          double c;

          for (guint r = 0; r < wall[v]->len; r++)
            {
              double wr = g_array_index (wall[v], double, r) / g_array_index (wall[base], double, r);
              double hc = g_array_index (cpu[base], double, r);
              double vc = g_array_index (cpu[v], double, r);

              g_array_append_val (wall_ratio, wr);
              if (hc > 0 && vc >= 0)
                {
                  double cr = vc / hc;
                  g_array_append_val (cpu_ratio, cr);
                }
            }
          c = bench_median (cpu_sorted);
          g_print ("     %-38s %7.1f ms ", active[v]->name, bench_median (wall_sorted));
          if (c >= 0)
            g_print ("%7.1f ms", c);
          else
            g_print ("%10s", "n/a");
          if (v != HOST)
            {
              print_overhead ("   wall", wall_ratio);
              if (cpu_ratio->len == wall_ratio->len)
                print_overhead (";  CPU", cpu_ratio);
              if (active[v]->bare)
                g_print ("  (over the direct run)");
            }
          g_print ("\n");
          if (v == SAFE)
            g_print ("     target: < 5%% over host (median wall): %s\n", bench_verdict (bench_median (wall_ratio) < 1.05));
        }
      for (guint v = 0; v < n_variants; v++)
        {
          g_array_unref (wall[v]);
          g_array_unref (cpu[v]);
        }
    }

  for (guint v = 0; v < n_variants; v++)
    variant_close (active[v]);

done:
  paddock_test_destroy_made ();
  clean_up (NULL);
  g_hash_table_unref (ended);
  for (guint kind = 0; kind < G_N_ELEMENTS (start_wall); kind++)
    {
      g_array_unref (start_wall[kind]);
    }
  return EXIT_SUCCESS;
}
