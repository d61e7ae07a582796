/* bench-staging-support.c — what the staging benches share: their trees, git, the daemon
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * bench-staging and bench-pinning generate the same deterministic trees,
 * make the same agent edits and drive the same test daemon over D-Bus; the
 * code lives here once so that their figures measure the same thing.
 */

#include "config.h"

#define _GNU_SOURCE 1

#include "bench-common.h"
#include "bench-staging-support.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixfdlist.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paddock-durable-file.h"

PaddockTestDaemon *daemon_under_test;
GDBusConnection *bus;
char *base_dir;
gboolean base_is_tmpfs;
char *git_path;
char *sh_path;
gboolean failed;

/* ------------------------------------------------------------------------ */
/* Bookkeeping: every session made here is destroyed, whatever happens.     */

GPtrArray *tracked;   /* object paths */

void
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
      g_printerr ("%s: Destroy %s: %s\n", g_get_prgname (), path, error->message);
      failed = TRUE;
    }
}

void
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

void G_GNUC_NORETURN G_GNUC_PRINTF (1, 2)
bail (const char *format,
      ...)
{
  va_list args;

  va_start (args, format);
  g_printerr ("%s: ", g_get_prgname ());
  vfprintf (stderr, format, args);
  g_printerr ("\n");
  va_end (args);

  clean_up ();
  exit (EXIT_FAILURE);
}

/* A child in the original mount namespace that outlives us: once our end
 * of its pipe closes (however we exit), it removes @dir. */
void
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

double
minimum (GArray *values)
{
  g_array_sort (values, bench_compare_double);
  return g_array_index (values, double, 0);
}

double
maximum (GArray *values)
{
  g_array_sort (values, bench_compare_double);
  return g_array_index (values, double, values->len - 1);
}

void
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

/* Change k touches file k * 10 + 5. */
guint
pin_change_index (guint k)
{
  return k * (PIN_FILES / PIN_CHANGED) + 5;
}

gboolean
pin_change_is_move (guint k)
{
  return k % (PIN_CHANGED / PIN_RENAMED) == 0;
}

char *
file_rel (guint index)
{
  guint folder = index / FILES_PER_FOLDER;

  return g_strdup_printf ("src/g%02u/m%03u/f%06u.c", folder / 100, folder % 100, index);
}

/* Another folder, another name: where the agent moves file @index. */
char *
moved_rel (guint index)
{
  guint folder = index / FILES_PER_FOLDER;

  return g_strdup_printf ("src/g%02u/m%03u/moved%06u.c", folder / 100, (folder + 1) % 100, index);
}

/* Source-like text, 1-8 KiB, the same for the same index in every run. */
void
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

void
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

void
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
void
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
void G_GNUC_NULL_TERMINATED
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

void
git_argv (GPtrArray  *argv,
          const char *cwd,
          char      **out)
{
  g_ptr_array_insert (argv, 0, git_path);
  g_ptr_array_add (argv, NULL);
  run ((const char * const *) argv->pdata, cwd, out);
}

guint
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

GVariant *
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

/* A safe session on @workspace whose agent runs @script, then prints the
 * marker and sleeps. Returns once the marker is read from a viewer. */
Session
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

void
change_list_clear (ChangeList *list)
{
  g_clear_pointer (&list->paths, g_ptr_array_unref);
}

ChangeList
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

gsize
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
guint
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

void
check (gboolean    ok,
       const char *what)
{
  if (!ok)
    {
      g_printerr ("%s: CORRECTNESS: %s\n", g_get_prgname (), what);
      failed = TRUE;
    }
}


char *
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



char *
find_or_bail (const char *program)
{
  char *path = g_find_program_in_path (program);

  if (path == NULL)
    bail ("%s is not installed", program);
  return path;
}

/* A tmpfs for the trees, the state folder and the bus, in a mount namespace
 * of our own (so it goes away with us); FALSE when we may not mount. */
gboolean
mount_private_tmpfs (const char *dir)
{
  if (unshare (CLONE_NEWNS) != 0)
    return FALSE;
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
      mount ("paddock-bench", dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") != 0)
    bail ("mount a tmpfs on %s: %s", dir, g_strerror (errno));
  return TRUE;
}
/* Everything a run needs before its trees: git and sh found, the build
 * root for the test daemon, a folder of its own (a private tmpfs unless
 * @on_disk or we may not mount one; removed by a watcher process whatever
 * happens) that $TMPDIR then names, and git without this machine's
 * configuration. Call before any thread exists (it forks and unshares).
 * Returns where the run writes, for the output. */
const char *
prepare_run (const char *prefix,
             gboolean    on_disk)
{
  g_autofree char *template = g_strdup_printf ("%s-XXXXXX", prefix);

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
    g_autofree char *made = g_build_filename (tmp, template, NULL);

    if (g_mkdtemp (made) == NULL)
      bail ("no temporary folder in %s: %s", tmp, g_strerror (errno));
    start_watcher (made);
    base_is_tmpfs = !on_disk && mount_private_tmpfs (made);
    base_dir = g_steal_pointer (&made);
  }
  /* The harness puts the daemon's state folder and its bus in $TMPDIR. */
  g_setenv ("TMPDIR", base_dir, TRUE);

  /* git as any user would have it, without this machine's configuration. */
  g_setenv ("GIT_CONFIG_NOSYSTEM", "1", TRUE);
  g_setenv ("GIT_CONFIG_GLOBAL", "/dev/null", TRUE);
  g_setenv ("GIT_AUTHOR_NAME", "bench", TRUE);
  g_setenv ("GIT_AUTHOR_EMAIL", "bench@example.org", TRUE);
  g_setenv ("GIT_COMMITTER_NAME", "bench", TRUE);
  g_setenv ("GIT_COMMITTER_EMAIL", "bench@example.org", TRUE);

  return base_is_tmpfs ? "a private tmpfs"
         : on_disk ? "$TMPDIR (--disk)" : "$TMPDIR (no tmpfs could be mounted)";
}
