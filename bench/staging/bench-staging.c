/* bench-staging.c — review and apply of staged changes, next to git
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Prints, in one run on this machine, each figure next to its peer:
 *  1. the review workflow on a 10,000-file workspace, 20 files changed by
 *     the agent and 10 of them applied: Session1.ListChanges, GetDiff of
 *     each of the 20, Apply of 10 chosen paths; next to the git-worktree
 *     workflow on a repository of the same tree (`git worktree add`, the
 *     same 20 edits, `git status --porcelain`, `git diff` of each, a commit
 *     in the worktree and `git checkout <branch> -- <10 paths>` in the main
 *     tree), and ANCHORS.md's published pVisor figure;
 *  2. a 100,000-file workspace with 1,000 changes made by the agent (900
 *     files modified, 100 moved to a new name in another folder):
 *     ListChanges next to `git status --porcelain` (-uall, and git's
 *     default) on a repository of the same tree with the same changes made
 *     in its work tree, interleaved; GetDiff of one path; and Apply of all
 *     changes (a fresh session each time; the applied workspace is then
 *     compared with git's tree by `diff -r`, and put back).
 *
 * The trees are generated once per run (deterministic source-like text
 * files of 1-8 KiB, 100 per folder). They, the daemon's state folder and
 * its private bus live on a tmpfs mounted in a private mount namespace when
 * this process may mount one (the sandbox refuses workspaces under /dev, so
 * /dev/shm cannot hold them), else under $TMPDIR; the output says which.
 *
 * Usage: bench-staging [--quick] [--disk]
 *   --quick: 3 review rounds, 5 list rounds, one Apply (the full run: ~45 s)
 *   --disk:  everything under $TMPDIR even when a tmpfs could be mounted,
 *            to see what fsync costs there (writing the trees takes minutes
 *            on a slow disk)
 *
 * Every session made here is destroyed, the daemon stopped and the trees
 * removed before exit, failures included (a helper process removes the
 * trees if this one dies). Exits non-zero when Paddock's correctness breaks
 * during the run: a wrong review list, a rename not detected, an apply
 * that leaves git seeing other changes than the agent's.
 */

#include "config.h"

#include "bench-common.h"

#define _GNU_SOURCE 1

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
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paddock-durable-file.h"
#include "paddock-test-daemon.h"

#define SMALL_FILES       10000
#define SMALL_CHANGED     20
#define SMALL_APPLIED     10
#define LARGE_FILES       100000
#define LARGE_CHANGED     1000
#define LARGE_RENAMED     100
#define FILES_PER_FOLDER  100
#define MARKER            "paddock-bench-edits-done"

/* ANCHORS.md: review workflow, 10,000 files, 20 changed. */
#define PUBLISHED_PVISOR_MS     141.0
#define PUBLISHED_WORKTREE_MS   248.0

static PaddockTestDaemon *daemon_under_test;
static GDBusConnection *bus;
static char *base_dir;
static gboolean base_is_tmpfs;
static char *git_path;
static char *sh_path;
static gboolean failed;

/* ------------------------------------------------------------------------ */
/* Bookkeeping: every session made here is destroyed, whatever happens.     */

static GPtrArray *tracked;   /* object paths */

static void
destroy_session (const char *path)
{
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < tracked->len; i++)
    if (g_str_equal (g_ptr_array_index (tracked, i), path))
      {
        g_ptr_array_remove_index_fast (tracked, i);
        break;
      }
  reply = g_dbus_connection_call_sync (bus, "org.paddock.Daemon", path, "org.paddock.Session1",
                                       "Destroy", NULL, G_VARIANT_TYPE ("(a{sv})"),
                                       G_DBUS_CALL_FLAGS_NONE, 60000, NULL, &error);
  if (reply == NULL)
    {
      g_printerr ("bench-staging: Destroy %s: %s\n", path, error->message);
      failed = TRUE;
    }
}

static void
clean_up (void)
{
  while (tracked != NULL && tracked->len > 0)
    {
      g_autofree char *path = g_strdup (g_ptr_array_index (tracked, tracked->len - 1));

      destroy_session (path);
    }
  g_clear_pointer (&daemon_under_test, paddock_test_daemon_free);
  if (base_dir != NULL)
    {
      if (base_is_tmpfs)
        {
          /* Unmounting frees it at once; the watcher removes the folder. */
          if (umount2 (base_dir, MNT_DETACH) != 0)
            paddock_remove_tree (base_dir);
        }
      else
        paddock_remove_tree (base_dir);
    }
}

static void G_GNUC_NORETURN G_GNUC_PRINTF (1, 2)
bail (const char *format,
      ...)
{
  va_list args;

  va_start (args, format);
  g_printerr ("bench-staging: ");
  vfprintf (stderr, format, args);
  g_printerr ("\n");
  va_end (args);

  clean_up ();
  exit (EXIT_FAILURE);
}

/* A child in the original mount namespace that outlives us: once our end
 * of its pipe closes (however we exit), it removes @dir. */
static void
start_watcher (const char *dir)
{
  int fds[2];
  pid_t pid;

  if (pipe2 (fds, O_CLOEXEC) != 0)
    bail ("pipe: %s", g_strerror (errno));
  pid = fork ();
  if (pid < 0)
    bail ("fork: %s", g_strerror (errno));
  if (pid == 0)
    {
      char byte;
      int null_fd = open ("/dev/null", O_RDWR);

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

/* ------------------------------------------------------------------------ */

static double
minimum (GArray *values)
{
  g_array_sort (values, bench_compare_double);
  return g_array_index (values, double, 0);
}

static double
maximum (GArray *values)
{
  g_array_sort (values, bench_compare_double);
  return g_array_index (values, double, values->len - 1);
}

static void
push (GArray **values,
      double   value)
{
  if (*values == NULL)
    *values = g_array_new (FALSE, FALSE, sizeof (double));
  g_array_append_val (*values, value);
}

/* ------------------------------------------------------------------------ */
/* Trees                                                                     */

static guint64
mix (guint64 x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

static char *
file_rel (guint index)
{
  guint folder = index / FILES_PER_FOLDER;

  return g_strdup_printf ("src/g%02u/m%03u/f%06u.c", folder / 100, folder % 100, index);
}

/* Another folder, another name: where the agent moves file @index. */
static char *
moved_rel (guint index)
{
  guint folder = index / FILES_PER_FOLDER;

  return g_strdup_printf ("src/g%02u/m%03u/moved%06u.c", folder / 100, (folder + 1) % 100, index);
}

/* Source-like text, 1-8 KiB, the same for the same index in every run. */
static void
file_contents (guint    index,
               GString *out)
{
  guint64 state = mix (index + 0x9e3779b97f4a7c15ULL);
  gsize size = 1024 + state % (7 * 1024 + 1);
  guint fn = 0;

  g_string_truncate (out, 0);
  g_string_append_printf (out, "/* f%06u.c - generated by bench-staging */\n\n"
                          "#include \"common.h\"\n\n", index);
  while (out->len < size)
    {
      state = mix (state);
      g_string_append_printf (out,
                              "static int\nfn_%u_%u (int a,\n        int b)\n{\n"
                              "  int total = a * %u + b;\n\n"
                              "  for (int i = 0; i < %u; i++)\n    total += i ^ %u;\n"
                              "  return total - %u;\n}\n\n",
                              index, fn++, (guint) (state % 97), (guint) ((state >> 8) % 1000),
                              (guint) ((state >> 20) % 65536), (guint) ((state >> 40) % 4096));
    }
  g_string_truncate (out, size - 1);
  g_string_append_c (out, '\n');
}

static void
write_file (const char *path,
            const char *data,
            gsize       length)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

  if (fd < 0)
    bail ("create %s: %s", path, g_strerror (errno));
  while (length > 0)
    {
      ssize_t n = write (fd, data, length);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        bail ("write %s: %s", path, g_strerror (errno));
      data += n;
      length -= (gsize) n;
    }
  close (fd);
}

static void
generate_tree (const char *root,
               guint       n_files)
{
  g_autoptr(GString) contents = g_string_sized_new (9 * 1024);

  for (guint i = 0; i < n_files; i++)
    {
      g_autofree char *rel = file_rel (i);
      g_autofree char *path = g_build_filename (root, rel, NULL);

      if (i % FILES_PER_FOLDER == 0)
        {
          g_autofree char *dir = g_path_get_dirname (path);

          if (g_mkdir_with_parents (dir, 0755) != 0)
            bail ("mkdir %s: %s", dir, g_strerror (errno));
        }
      file_contents (i, contents);
      write_file (path, contents->str, contents->len);
    }
  {
    g_autofree char *readme = g_build_filename (root, "README", NULL);
    const char *text = "A generated tree for bench-staging.\n";

    write_file (readme, text, strlen (text));
  }
}

/* ------------------------------------------------------------------------ */
/* Processes                                                                 */

/* Runs @argv (in @cwd, may be NULL); its standard output into @out unless
 * NULL. Bails out with its standard error when it fails. */
static void
run (const char * const *argv,
     const char         *cwd,
     char              **out)
{
  g_autofree char *err = NULL;
  g_autoptr(GError) error = NULL;
  int status = 0;
  GSpawnFlags flags = G_SPAWN_DEFAULT;

  if (out == NULL)
    flags |= G_SPAWN_STDOUT_TO_DEV_NULL;
  if (!g_spawn_sync (cwd, (char **) argv, NULL, flags, NULL, NULL, out, &err, &status, &error))
    bail ("%s: %s", argv[0], error->message);
  if (!g_spawn_check_wait_status (status, NULL))
    {
      g_autofree char *line = g_strjoinv (" ", (char **) argv);

      bail ("`%.200s` failed: %s", line, err != NULL ? err : "");
    }
}

/* git with @args (NULL-terminated) in @cwd. */
static void G_GNUC_NULL_TERMINATED
git (char       **out,
     const char  *cwd,
     ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  va_list args;

  g_ptr_array_add (argv, git_path);
  va_start (args, cwd);
  for (const char *a = va_arg (args, const char *); a != NULL; a = va_arg (args, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (args);
  g_ptr_array_add (argv, NULL);
  run ((const char * const *) argv->pdata, cwd, out);
}

static void
git_argv (GPtrArray  *argv,
          const char *cwd,
          char      **out)
{
  g_ptr_array_insert (argv, 0, git_path);
  g_ptr_array_add (argv, NULL);
  run ((const char * const *) argv->pdata, cwd, out);
}

static guint
count_lines (const char *text)
{
  guint n = 0;

  for (const char *p = text; p != NULL && *p != '\0'; p++)
    if (*p == '\n')
      n++;
  return n;
}

/* ------------------------------------------------------------------------ */
/* The daemon                                                                */

static GVariant *
call (const char         *path,
      const char         *method,
      GVariant           *parameters,
      const GVariantType *reply_type)
{
  g_autoptr(GError) error = NULL;
  GVariant *reply;

  reply = g_dbus_connection_call_sync (bus, "org.paddock.Daemon", path,
                                       g_str_equal (method, "CreateSession") ? "org.paddock.Manager1"
                                                                             : "org.paddock.Session1",
                                       method, parameters, reply_type, G_DBUS_CALL_FLAGS_NONE,
                                       300000, NULL, &error);
  if (reply == NULL)
    bail ("%s: %s", method, error->message);
  return reply;
}

/* Reads @fd until @marker shows up (waiting at most @timeout_s). */
static void
wait_for_marker (int         fd,
                 const char *marker,
                 guint       timeout_s)
{
  g_autoptr(GString) seen = g_string_new (NULL);
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_s * G_USEC_PER_SEC;
  struct pollfd p = { .fd = fd, .events = POLLIN };
  char buffer[4096];

  while (strstr (seen->str, marker) == NULL)
    {
      int left = (int) ((deadline - g_get_monotonic_time ()) / 1000);
      ssize_t n;

      if (left <= 0)
        bail ("the agent did not finish its edits within %u s; it printed: %.500s", timeout_s,
              seen->str);
      if (poll (&p, 1, left) < 0 && errno != EINTR)
        bail ("poll: %s", g_strerror (errno));
      n = read (fd, buffer, sizeof buffer);
      if (n == 0)
        bail ("the agent's terminal closed before its edits were done: %.500s", seen->str);
      if (n < 0 && errno != EINTR && errno != EAGAIN)
        bail ("read: %s", g_strerror (errno));
      if (n > 0)
        g_string_append_len (seen, buffer, n);
      /* Keep the tail only: the marker is short. */
      if (seen->len > 64 * 1024)
        g_string_erase (seen, 0, seen->len - 1024);
    }
}

typedef struct
{
  char   *path;
  double  create_ms;   /* CreateSession's reply */
  double  ready_ms;    /* CreateSession until the agent printed its marker */
} Session;

/* A safe session on @workspace whose agent runs @script, then prints the
 * marker and sleeps. Returns once the marker is read from a viewer. */
static Session
start_session (const char *workspace,
               const char *script,
               guint       timeout_s)
{
  g_autofree char *full = g_strdup_printf ("%s; echo %s; exec sleep 600", script, MARKER);
  const char *argv[] = { "sh", "-c", full, NULL };
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) attached = NULL;
  g_autoptr(GUnixFDList) fds = NULL;
  g_autoptr(GError) error = NULL;
  GVariantBuilder options;
  Session s = { NULL, };
  gint32 handle = -1;
  guint64 first_offset = 0;
  gint64 start;
  int fd;

  g_variant_builder_init (&options, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&options, "{sv}", "workspace", g_variant_new_bytestring (workspace));
  g_variant_builder_add (&options, "{sv}", "command", g_variant_new_bytestring_array (argv, -1));
  g_variant_builder_add (&options, "{sv}", "profile", g_variant_new_string ("safe"));

  start = g_get_monotonic_time ();
  reply = call ("/org/paddock/Daemon", "CreateSession", g_variant_new ("(a{sv})", &options),
                G_VARIANT_TYPE ("(o)"));
  s.create_ms = bench_ms_since (start);
  g_variant_get (reply, "(o)", &s.path);
  g_ptr_array_add (tracked, g_strdup (s.path));

  attached = g_dbus_connection_call_with_unix_fd_list_sync (bus, "org.paddock.Daemon", s.path,
                                                            "org.paddock.Session1", "Attach",
                                                            g_variant_new_parsed ("(@a{sv} {},)"),
                                                            G_VARIANT_TYPE ("(ht)"),
                                                            G_DBUS_CALL_FLAGS_NONE, 10000, NULL,
                                                            &fds, NULL, &error);
  if (attached == NULL)
    bail ("Attach: %s", error->message);
  g_variant_get (attached, "(ht)", &handle, &first_offset);
  fd = g_unix_fd_list_get (fds, handle, &error);
  if (fd < 0)
    bail ("Attach: %s", error->message);
  wait_for_marker (fd, MARKER, timeout_s);
  s.ready_ms = bench_ms_since (start);
  close (fd);
  return s;
}

typedef struct
{
  guint n_rows;
  guint n_modified;
  guint n_renamed;
  guint n_other;
  guint n_conflicts;
  GPtrArray *paths;   /* the new path of each row */
} ChangeList;

static void
change_list_clear (ChangeList *list)
{
  g_clear_pointer (&list->paths, g_ptr_array_unref);
}

static ChangeList
list_changes (const char *session,
              double     *ms)
{
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariantIter) rows = NULL;
  const char *path;
  const char *old_path;
  const char *kind;
  const char *type;
  gboolean binary;
  guint32 added;
  guint32 removed;
  gboolean conflict;
  ChangeList list = { 0, };
  gint64 start = g_get_monotonic_time ();

  reply = call (session, "ListChanges", NULL, G_VARIANT_TYPE ("(a(ayayssbuub))"));
  *ms = bench_ms_since (start);

  list.paths = g_ptr_array_new_with_free_func (g_free);
  g_variant_get (reply, "(a(ayayssbuub))", &rows);
  while (g_variant_iter_next (rows, "(^&ay^&ay&s&sbuub)", &path, &old_path, &kind, &type, &binary,
                              &added, &removed, &conflict))
    {
      list.n_rows++;
      if (g_str_equal (kind, "modified"))
        list.n_modified++;
      else if (g_str_equal (kind, "renamed"))
        list.n_renamed++;
      else
        list.n_other++;
      if (conflict)
        list.n_conflicts++;
      g_ptr_array_add (list.paths, g_strdup (path));
    }
  return list;
}

static gsize
get_diff (const char *session,
          const char *path)
{
  g_autoptr(GVariant) reply = call (session, "GetDiff",
                                    g_variant_new ("(@ay)", g_variant_new_bytestring (path)),
                                    G_VARIANT_TYPE ("(ay)"));
  g_autoptr(GVariant) diff = g_variant_get_child_value (reply, 0);

  return g_variant_get_size (diff);
}

/* Apply @paths (NULL: every change); returns how many paths were applied. */
static guint
apply (const char         *session,
       const char * const *paths,
       guint              *n_conflicts)
{
  const char *none[] = { NULL };
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) applied = NULL;
  g_autoptr(GVariant) conflicts = NULL;

  reply = call (session, "Apply",
                g_variant_new ("(@aay@aay)", g_variant_new_bytestring_array (paths != NULL ? paths : none, -1),
                               g_variant_new_bytestring_array (none, -1)),
                G_VARIANT_TYPE ("(aayaays)"));
  applied = g_variant_get_child_value (reply, 0);
  conflicts = g_variant_get_child_value (reply, 1);
  *n_conflicts = (guint) g_variant_n_children (conflicts);
  return (guint) g_variant_n_children (applied);
}

static void
check (gboolean    ok,
       const char *what)
{
  if (!ok)
    {
      g_printerr ("bench-staging: CORRECTNESS: %s\n", what);
      failed = TRUE;
    }
}

/* ------------------------------------------------------------------------ */
/* 1. The review workflow, 10,000 files                                      */

/* The 20 files edited in round @round (another set each round), the even
 * ones applied. */
static GPtrArray *
small_edit_set (int round)
{
  GPtrArray *rels = g_ptr_array_new_with_free_func (g_free);

  for (guint k = 0; k < SMALL_CHANGED; k++)
    g_ptr_array_add (rels, file_rel ((k * (SMALL_FILES / SMALL_CHANGED) + 37 + (guint) (round + 1) * 13) %
                                     SMALL_FILES));
  return rels;
}

static char *
edit_script (const char *dir,
             GPtrArray  *modify,
             GPtrArray  *move_from,
             GPtrArray  *move_to,
             int         round)
{
  g_autofree char *quoted_dir = g_shell_quote (dir);
  GString *s = g_string_new (NULL);

  g_string_append_printf (s, "cd %s && for f in", quoted_dir);
  for (guint i = 0; i < modify->len; i++)
    g_string_append_printf (s, " %s", (const char *) g_ptr_array_index (modify, i));
  g_string_append_printf (s, "; do echo '/* edited by the agent, round %d */' >> \"$f\"; done", round);
  for (guint i = 0; move_from != NULL && i < move_from->len; i++)
    g_string_append_printf (s, " && mv %s %s", (const char *) g_ptr_array_index (move_from, i),
                            (const char *) g_ptr_array_index (move_to, i));
  return g_string_free (s, FALSE);
}

typedef struct
{
  GArray *ours_review;     /* ListChanges + 20 GetDiff + Apply of 10 */
  GArray *ours_list;
  GArray *ours_diffs;
  GArray *ours_apply;
  GArray *ours_create;     /* CreateSession's reply */
  GArray *ours_ready;      /* CreateSession until the 20 edits are done */
  GArray *peer_total;      /* worktree add + edits + status + diffs + commit + checkout */
  GArray *peer_setup;      /* worktree add + edits */
  GArray *peer_review;     /* status + diffs + commit + checkout */
  GArray *peer_status;
  GArray *peer_diffs;
  GArray *peer_bring;
} SmallFigures;

static void
paddock_small_round (const char   *workspace,
                     int           round,
                     SmallFigures *f)
{
  g_autoptr(GPtrArray) rels = small_edit_set (round);
  g_autofree char *script = edit_script (workspace, rels, NULL, NULL, round);
  g_autoptr(GPtrArray) chosen = g_ptr_array_new ();
  Session s;
  ChangeList list;
  gint64 start;
  gint64 lap;
  double list_ms;
  double diffs_ms;
  double apply_ms;
  double review_ms;
  gsize diff_bytes = 0;
  guint n_conflicts = 0;
  guint n_applied;

  for (guint k = 0; k < rels->len; k += 2)
    g_ptr_array_add (chosen, g_ptr_array_index (rels, k));
  g_ptr_array_add (chosen, NULL);

  s = start_session (workspace, script, 60);

  start = g_get_monotonic_time ();
  list = list_changes (s.path, &list_ms);
  lap = g_get_monotonic_time ();
  for (guint i = 0; i < list.paths->len; i++)
    diff_bytes += get_diff (s.path, g_ptr_array_index (list.paths, i));
  diffs_ms = bench_ms_since (lap);
  lap = g_get_monotonic_time ();
  n_applied = apply (s.path, (const char * const *) chosen->pdata, &n_conflicts);
  apply_ms = bench_ms_since (lap);
  review_ms = bench_ms_since (start);

  check (list.n_rows == SMALL_CHANGED && list.n_modified == SMALL_CHANGED,
         "10k review: ListChanges does not list exactly the 20 modified files");
  check (diff_bytes > 0, "10k review: empty diffs");
  check (n_applied == SMALL_APPLIED && n_conflicts == 0, "10k review: Apply did not apply the 10 paths");
  change_list_clear (&list);
  destroy_session (s.path);
  g_free (s.path);

  if (round < 0)
    return;
  push (&f->ours_review, review_ms);
  push (&f->ours_list, list_ms);
  push (&f->ours_diffs, diffs_ms);
  push (&f->ours_apply, apply_ms);
  push (&f->ours_create, s.create_ms);
  push (&f->ours_ready, s.ready_ms);
}

static void
git_small_round (const char   *repo,
                 int           round,
                 SmallFigures *f)
{
  g_autoptr(GPtrArray) rels = small_edit_set (round);
  g_autofree char *worktree = g_strdup_printf ("%s-wt%d", repo, round + 1);
  g_autofree char *branch = g_strdup_printf ("agent-%d", round + 1);
  g_autofree char *script = edit_script (worktree, rels, NULL, NULL, round);
  g_autofree char *status = NULL;
  g_autoptr(GPtrArray) checkout = g_ptr_array_new ();
  const char *edit_argv[] = { sh_path, "-c", script, NULL };
  gint64 start;
  gint64 lap;
  double setup_ms;
  double status_ms;
  double diffs_ms;
  double bring_ms;
  double total_ms;
  gsize diff_bytes = 0;

  g_ptr_array_add (checkout, (gpointer) "checkout");
  g_ptr_array_add (checkout, branch);
  g_ptr_array_add (checkout, (gpointer) "--");
  for (guint k = 0; k < rels->len; k += 2)
    g_ptr_array_add (checkout, g_ptr_array_index (rels, k));

  start = g_get_monotonic_time ();
  git (NULL, repo, "worktree", "add", "-q", "-b", branch, worktree, NULL);
  run (edit_argv, NULL, NULL);
  setup_ms = bench_ms_since (start);

  lap = g_get_monotonic_time ();
  git (&status, worktree, "status", "--porcelain", NULL);
  status_ms = bench_ms_since (lap);
  lap = g_get_monotonic_time ();
  for (guint i = 0; i < rels->len; i++)
    {
      g_autofree char *diff = NULL;

      git (&diff, worktree, "diff", "--", g_ptr_array_index (rels, i), NULL);
      diff_bytes += strlen (diff);
    }
  diffs_ms = bench_ms_since (lap);
  lap = g_get_monotonic_time ();
  git (NULL, worktree, "commit", "-q", "-a", "-m", "agent", NULL);
  git_argv (checkout, repo, NULL);
  bring_ms = bench_ms_since (lap);
  total_ms = bench_ms_since (start);

  check (count_lines (status) == SMALL_CHANGED && diff_bytes > 0,
         "10k git peer: git status does not list the 20 files");

  /* Back to the committed tree for the next round. */
  git (NULL, repo, "worktree", "remove", "--force", worktree, NULL);
  git (NULL, repo, "reset", "-q", "--hard", NULL);
  git (NULL, repo, "branch", "-q", "-D", branch, NULL);

  if (round < 0)
    return;
  push (&f->peer_total, total_ms);
  push (&f->peer_setup, setup_ms);
  push (&f->peer_review, status_ms + diffs_ms + bring_ms);
  push (&f->peer_status, status_ms);
  push (&f->peer_diffs, diffs_ms);
  push (&f->peer_bring, bring_ms);
}

/* ------------------------------------------------------------------------ */
/* 2. 100,000 files, 1,000 changes of which 100 renames                      */

typedef struct
{
  double  ready_first_ms;
  double  create_first_ms;
  double  list_first_ms;
  GArray *list;             /* ListChanges, warm */
  GArray *diff;             /* GetDiff of one modified file */
  GArray *apply;            /* Apply of everything, fresh session each */
  GArray *create;
  GArray *ready;
  GArray *status_all;       /* git status --porcelain -uall */
  GArray *status_default;   /* git status --porcelain */
  guint   applied_paths;
  guint   rows;
  guint   renamed;
} LargeFigures;

static char *
large_script (const char *workspace,
              int         round)
{
  g_autoptr(GPtrArray) modify = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) from = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) to = g_ptr_array_new_with_free_func (g_free);

  for (guint k = 0; k < LARGE_CHANGED; k++)
    {
      guint index = k * (LARGE_FILES / LARGE_CHANGED) + 50;

      if (k % (LARGE_CHANGED / LARGE_RENAMED) == 0)
        {
          g_ptr_array_add (from, file_rel (index));
          g_ptr_array_add (to, moved_rel (index));
        }
      else
        g_ptr_array_add (modify, file_rel (index));
    }
  return edit_script (workspace, modify, from, to, round);
}

/* Puts the changed files of @root back as generate_tree() wrote them. */
static void
restore_large (const char *root)
{
  g_autoptr(GString) contents = g_string_sized_new (9 * 1024);

  for (guint k = 0; k < LARGE_CHANGED; k++)
    {
      guint index = k * (LARGE_FILES / LARGE_CHANGED) + 50;
      g_autofree char *rel = file_rel (index);
      g_autofree char *path = g_build_filename (root, rel, NULL);

      if (k % (LARGE_CHANGED / LARGE_RENAMED) == 0)
        {
          g_autofree char *moved = moved_rel (index);
          g_autofree char *moved_path = g_build_filename (root, moved, NULL);

          if (unlink (moved_path) != 0)
            bail ("unlink %s: %s", moved_path, g_strerror (errno));
        }
      file_contents (index, contents);
      write_file (path, contents->str, contents->len);
    }
}

static double
git_status_ms (const char *repo,
               gboolean    untracked_all)
{
  g_autofree char *out = NULL;
  gint64 start = g_get_monotonic_time ();
  double ms;

  git (&out, repo, "status", "--porcelain", untracked_all ? "-uall" : "-unormal", NULL);
  ms = bench_ms_since (start);
  /* 900 modified, 100 deleted, 100 untracked: git status does not pair an
   * untracked file with a deleted one. */
  check (count_lines (out) == LARGE_CHANGED + LARGE_RENAMED,
         "100k: git status does not show exactly the agent's changes");
  return ms;
}

/* @repo holds the same tree as @workspace, with the agent's changes made
 * in its work tree (natively, by the same script). */
static void
measure_large (const char   *workspace,
               const char   *repo,
               guint         list_rounds,
               guint         apply_rounds,
               LargeFigures *f)
{
  for (guint a = 0; a < apply_rounds; a++)
    {
      g_autofree char *script = large_script (workspace, 0);
      Session s = start_session (workspace, script, 300);
      ChangeList list;
      double ms = 0;
      guint n_conflicts = 0;
      gint64 start;

      push (&f->create, s.create_ms);
      push (&f->ready, s.ready_ms);

      list = list_changes (s.path, &ms);
      if (a == 0)
        {
          f->create_first_ms = s.create_ms;
          f->ready_first_ms = s.ready_ms;
          f->list_first_ms = ms;
          f->rows = list.n_rows;
          f->renamed = list.n_renamed;
          /* Interleaved, so that the machine's noise hits all three; the
           * first git round (index refresh) is a warm-up. */
          for (int r = -1; r < (int) list_rounds; r++)
            {
              ChangeList again = list_changes (s.path, &ms);
              double all = git_status_ms (repo, TRUE);
              double normal = git_status_ms (repo, FALSE);

              change_list_clear (&again);
              if (r < 0)
                continue;
              push (&f->list, ms);
              push (&f->status_all, all);
              push (&f->status_default, normal);
            }
          for (guint r = 0; r < list_rounds; r++)
            {
              /* Change k = r + 1 is a modification (every tenth is a move). */
              g_autofree char *rel = file_rel ((r + 1) * (LARGE_FILES / LARGE_CHANGED) + 50);
              gint64 lap = g_get_monotonic_time ();

              check (get_diff (s.path, rel) > 0, "100k: an empty diff");
              push (&f->diff, bench_ms_since (lap));
            }
        }
      check (list.n_rows == LARGE_CHANGED, "100k: ListChanges does not list 1,000 changes");
      check (list.n_renamed == LARGE_RENAMED, "100k: ListChanges does not find the 100 renames");
      check (list.n_modified == LARGE_CHANGED - LARGE_RENAMED && list.n_other == 0,
             "100k: ListChanges lists other kinds than the 900 modifications");
      check (list.n_conflicts == 0, "100k: ListChanges reports conflicts");
      change_list_clear (&list);

      start = g_get_monotonic_time ();
      f->applied_paths = apply (s.path, NULL, &n_conflicts);
      push (&f->apply, bench_ms_since (start));
      check (n_conflicts == 0, "100k: Apply reports conflicts");

      list = list_changes (s.path, &ms);
      check (list.n_rows == 0, "100k: changes remain listed after Apply of all");
      change_list_clear (&list);
      destroy_session (s.path);
      g_free (s.path);

      /* The workspace is now what the agent made of it: git's tree. */
      {
        g_autofree char *repo_tree = g_strdup_printf ("%s/", repo);
        g_autofree char *ws_tree = g_strdup_printf ("%s/", workspace);
        const char *diff_argv[] = { "diff", "-r", "-q", "--exclude=.git", ws_tree, repo_tree, NULL };
        g_autofree char *out = NULL;
        g_autofree char *err = NULL;
        int status = 0;

        if (!g_spawn_sync (NULL, (char **) diff_argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out,
                           &err, &status, NULL) ||
            !g_spawn_check_wait_status (status, NULL))
          {
            g_printerr ("bench-staging: after Apply, the workspace differs from the agent's "
                        "tree:\n%.2000s%.500s", out != NULL ? out : "", err != NULL ? err : "");
            check (FALSE, "100k: Apply did not reproduce the agent's tree");
          }
      }
      restore_large (workspace);
    }
}

/* ------------------------------------------------------------------------ */

static char *
find_or_bail (const char *program)
{
  char *path = g_find_program_in_path (program);

  if (path == NULL)
    bail ("%s is not installed", program);
  return path;
}

/* A tmpfs for the trees, the state folder and the bus, in a mount namespace
 * of our own (so it goes away with us); FALSE when we may not mount. */
static gboolean
mount_private_tmpfs (const char *dir)
{
  if (unshare (CLONE_NEWNS) != 0)
    return FALSE;
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
      mount ("paddock-bench", dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") != 0)
    bail ("mount a tmpfs on %s: %s", dir, g_strerror (errno));
  return TRUE;
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *small_ws = NULL;
  g_autofree char *small_repo = NULL;
  g_autofree char *large_ws = NULL;
  g_autofree char *large_repo = NULL;
  gboolean quick = FALSE;
  gboolean on_disk = FALSE;
  guint small_rounds;
  guint list_rounds;
  guint apply_rounds;
  SmallFigures small = { NULL, };
  LargeFigures large = { 0, };
  gint64 start;
  double gen_small_s;
  double gen_large_s;
  double git_small_s;
  double git_large_s;
  double ours;
  double peer;
  double ours_all;
  double peer_all;
  double list_ms;
  double status_ms;
  const char *where;
  g_autofree char *load_at_start = g_strdup ("unknown");

  signal (SIGPIPE, SIG_IGN);

  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--quick"))
        quick = TRUE;
      else if (g_str_equal (argv[i], "--disk"))
        on_disk = TRUE;
      else
        {
          g_printerr ("usage: %s [--quick] [--disk]\n", argv[0]);
          return 2;
        }
    }
  small_rounds = quick ? 3 : 7;
  list_rounds = quick ? 5 : 7;
  apply_rounds = quick ? 1 : 3;

  tracked = g_ptr_array_new_with_free_func (g_free);
  git_path = find_or_bail ("git");
  sh_path = find_or_bail ("sh");

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
    g_autofree char *made = g_build_filename (tmp, "paddock-bench-staging-XXXXXX", NULL);

    if (g_mkdtemp (made) == NULL)
      bail ("no temporary folder in %s: %s", tmp, g_strerror (errno));
    start_watcher (made);
    base_is_tmpfs = !on_disk && mount_private_tmpfs (made);
    base_dir = g_steal_pointer (&made);
  }
  where = base_is_tmpfs ? "a private tmpfs"
          : on_disk ? "$TMPDIR (--disk)" : "$TMPDIR (no tmpfs could be mounted)";
  /* The harness puts the daemon's state folder and its bus in $TMPDIR. */
  g_setenv ("TMPDIR", base_dir, TRUE);

  /* git as any user would have it, without this machine's configuration. */
  g_setenv ("GIT_CONFIG_NOSYSTEM", "1", TRUE);
  g_setenv ("GIT_CONFIG_GLOBAL", "/dev/null", TRUE);
  g_setenv ("GIT_AUTHOR_NAME", "bench", TRUE);
  g_setenv ("GIT_AUTHOR_EMAIL", "bench@example.org", TRUE);
  g_setenv ("GIT_COMMITTER_NAME", "bench", TRUE);
  g_setenv ("GIT_COMMITTER_EMAIL", "bench@example.org", TRUE);

  small_ws = g_build_filename (base_dir, "ws10k", NULL);
  small_repo = g_build_filename (base_dir, "git10k", NULL);
  large_ws = g_build_filename (base_dir, "ws100k", NULL);
  large_repo = g_build_filename (base_dir, "git100k", NULL);

  /* The trees: 10k for Paddock and the same 10k in a git repository;
   * 100k for Paddock and the same 100k in a git repository. */
  start = g_get_monotonic_time ();
  generate_tree (small_ws, SMALL_FILES);
  generate_tree (small_repo, SMALL_FILES);
  gen_small_s = bench_ms_since (start) / 1000;
  start = g_get_monotonic_time ();
  git (NULL, small_repo, "init", "-q", NULL);
  git (NULL, small_repo, "add", "-A", NULL);
  git (NULL, small_repo, "commit", "-q", "-m", "tree", NULL);
  git_small_s = bench_ms_since (start) / 1000;

  start = g_get_monotonic_time ();
  generate_tree (large_ws, LARGE_FILES);
  generate_tree (large_repo, LARGE_FILES);
  gen_large_s = bench_ms_since (start) / 2000;
  start = g_get_monotonic_time ();
  git (NULL, large_repo, "init", "-q", NULL);
  git (NULL, large_repo, "add", "-A", NULL);
  git (NULL, large_repo, "commit", "-q", "-m", "tree", NULL);
  git_large_s = bench_ms_since (start) / 1000;
  {
    /* The agent's changes, made natively in git's work tree. */
    g_autofree char *script = large_script (large_repo, 0);
    const char *edit_argv[] = { sh_path, "-c", script, NULL };

    run (edit_argv, NULL, NULL);
  }

  g_setenv ("PADDOCK_TEST_QUIET", "1", TRUE);
  daemon_under_test = paddock_test_daemon_new (NULL);
  bus = paddock_test_daemon_get_connection (daemon_under_test);

  {
    g_autofree char *loadavg = NULL;

    if (g_file_get_contents ("/proc/loadavg", &loadavg, NULL, NULL))
      {
        g_auto(GStrv) fields = g_strsplit (loadavg, " ", 4);

        if (g_strv_length (fields) >= 3)
          load_at_start = g_strdup_printf ("%s %s %s (a busy machine makes both sides noisy)",
                                           fields[0], fields[1], fields[2]);
      }
  }

  /* 1. One warm-up round each, then interleaved so the noise hits both. */
  for (int r = -1; r < (int) small_rounds; r++)
    {
      paddock_small_round (small_ws, r, &small);
      git_small_round (small_repo, r, &small);
    }

  /* 2. */
  measure_large (large_ws, large_repo, list_rounds, apply_rounds, &large);

  ours = bench_median (small.ours_review);
  peer = bench_median (small.peer_review);
  ours_all = bench_median (small.ours_ready) + ours;
  peer_all = bench_median (small.peer_total);

  g_print ("bench/staging - %s; %u cores, load average %s; trees, daemon state and bus on %s\n",
           quick ? "--quick" : "full run", g_get_num_processors (), load_at_start, where);
  g_print ("trees: 10k files written in %.1f s (x2), committed to git in %.1f s; "
           "100k files written in %.1f s (x2), committed in %.1f s\n\n",
           gen_small_s, git_small_s, gen_large_s, git_large_s);

  g_print ("1. review workflow: %u files, %u changed by the agent, %u applied; medians of %u rounds\n",
           SMALL_FILES, SMALL_CHANGED, SMALL_APPLIED, small_rounds);
  g_print ("   paddock: ListChanges + GetDiff x%u + Apply of %u paths (one batch)\n",
           SMALL_CHANGED, SMALL_APPLIED);
  g_print ("   git:     git status --porcelain + git diff -- F x%u + commit -a in the worktree\n"
           "            + git checkout <worktree branch> -- <%u paths> in the main tree\n",
           SMALL_CHANGED, SMALL_APPLIED);
  g_print ("%-50s %8.1f ms   (list %.1f, diffs %.1f, apply %.1f; min %.1f max %.1f)\n",
           "paddock review", ours, bench_median (small.ours_list), bench_median (small.ours_diffs),
           bench_median (small.ours_apply), minimum (small.ours_review), maximum (small.ours_review));
  g_print ("%-50s %8.1f ms   (status %.1f, diffs %.1f, commit+checkout %.1f)\n",
           "git-worktree review", peer, bench_median (small.peer_status), bench_median (small.peer_diffs),
           bench_median (small.peer_bring));
  g_print ("review: ours %.1f ms, peer %.1f ms, ratio %.2f\n", ours, peer, ours / peer);
  g_print ("%-50s %8.1f ms   (CreateSession reply %.1f)\n",
           "paddock session start, until the 20 edits are done", bench_median (small.ours_ready),
           bench_median (small.ours_create));
  g_print ("%-50s %8.1f ms\n", "git worktree add + the 20 edits", bench_median (small.peer_setup));
  g_print ("whole workflow (start + edits + review + apply): ours %.1f ms, peer %.1f ms, ratio %.2f\n",
           ours_all, peer_all, ours_all / peer_all);
  g_print ("   published (ANCHORS.md): pVisor stage %.0f ms, git worktree %.0f ms (ours/pVisor: review %.2f, whole %.2f)\n",
           PUBLISHED_PVISOR_MS, PUBLISHED_WORKTREE_MS, ours / PUBLISHED_PVISOR_MS,
           ours_all / PUBLISHED_PVISOR_MS);
  g_print ("   target: faster than the git-worktree workflow: review %s, whole %s\n\n",
           bench_verdict (ours < peer), bench_verdict (ours_all < peer_all));

  list_ms = bench_median (large.list);
  status_ms = bench_median (large.status_all);
  g_print ("2. %u files, %u changes (%u modified, %u moved to another folder); "
           "ListChanges and git status interleaved, medians of %u; Apply n=%u (fresh session each)\n",
           LARGE_FILES, LARGE_CHANGED, LARGE_CHANGED - LARGE_RENAMED, LARGE_RENAMED, list_rounds,
           apply_rounds);
  g_print ("%-50s %8u rows, %u renames found\n", "paddock ListChanges", large.rows, large.renamed);
  g_print ("%-50s %8.1f ms   (first call %.1f; min %.1f max %.1f)\n", "paddock ListChanges",
           list_ms, large.list_first_ms, minimum (large.list), maximum (large.list));
  g_print ("%-50s %8.1f ms\n", "git status --porcelain -uall (warm)", status_ms);
  g_print ("%-50s %8.1f ms   (no rename pairing: 100 D + 100 ?\?)\n",
           "git status --porcelain (default -unormal, warm)", bench_median (large.status_default));
  g_print ("list changes: ours %.1f ms, peer %.1f ms, ratio %.2f   (peer: git status -uall)\n",
           list_ms, status_ms, list_ms / status_ms);
  g_print ("list changes: ours %.1f ms, peer %.1f ms, ratio %.2f   (peer: git status default)\n",
           list_ms, bench_median (large.status_default), list_ms / bench_median (large.status_default));
  g_print ("%-50s %8.1f ms   (%u paths applied; min %.1f max %.1f)\n",
           "paddock Apply of all 1,000 changes", bench_median (large.apply), large.applied_paths,
           minimum (large.apply), maximum (large.apply));
  g_print ("apply: ours %.1f ms, git status -uall %.1f ms, ratio %.2f   (for scale: git has no one-step equivalent)\n",
           bench_median (large.apply), status_ms, bench_median (large.apply) / status_ms);
  g_print ("%-50s %8.1f ms   (one modified file, after a ListChanges: from that review while neither side changed)\n",
           "paddock GetDiff, one path", bench_median (large.diff));
  g_print ("%-50s %8.1f ms   (CreateSession reply %.1f; first %.1f / %.1f)\n",
           "paddock session start, until the 1,000 edits done", bench_median (large.ready),
           bench_median (large.create), large.ready_first_ms, large.create_first_ms);
  g_print ("   target: ListChanges faster than git status -uall: %s\n", bench_verdict (list_ms < status_ms));

  clean_up ();
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
