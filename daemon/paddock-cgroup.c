/* paddock-cgroup.c — a session's own cgroup v2, where one may be made
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "paddock-cgroup.h"
#include "paddock-error.h"

/* A cgroup is the kernel's list of a session's processes: membership is
 * inherited by every child and cannot be left without write access to
 * another cgroup, so counting and killing through it misses nothing —
 * not even a host-profile process that setsid()s or double-forks.
 * cgroup.kill (Linux 5.14) kills every member atomically. */
struct _PaddockCgroup
{
  char *path;
};

/* The portable build (-Dlinux_executor=false) has no cgroup layer: cgroup
 * v2 is the Linux executor's, and the host executor of other systems has
 * its own (a Job Object, a kqueue watch: docs/PORTING.md). So there the
 * cgroupfs is never looked at, let alone written, even on Linux: no
 * session gets a cgroup, nothing asks systemd for a scope (the daemon
 * asks only when it has a cgroup of its own), and the reason below is
 * what every session's cgroup and resources layers report, unenforced.
 * One answer for both builds' tests to check, rather than a host session
 * in a cgroup in one portable build and not in another. */
#define PORTABLE_REASON "this build has no cgroup layer (-Dlinux_executor=false: cgroup v2 is the Linux executor's)"

/* Where the v2 hierarchy is mounted (a pure v2 system: /sys/fs/cgroup;
 * a hybrid one: /sys/fs/cgroup/unified), from our mountinfo. */
static char *
find_cgroup2_mount (void)
{
  g_autofree char *mountinfo = NULL;
  g_auto(GStrv) lines = NULL;

  if (!g_file_get_contents ("/proc/self/mountinfo", &mountinfo, NULL, NULL))
    return NULL;

  lines = g_strsplit (mountinfo, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) halves = g_strsplit (lines[i], " - ", 2);
      g_auto(GStrv) fields = NULL;

      if (halves[0] == NULL || halves[1] == NULL || !g_str_has_prefix (halves[1], "cgroup2 "))
        continue;
      fields = g_strsplit (halves[0], " ", -1);
      if (g_strv_length (fields) >= 5)
        return g_strcompress (fields[4]);
    }

  return NULL;
}

/* The cgroup v2 of process @pid (0: ours) as a folder (mount point + the
 * "0::" line of /proc/PID/cgroup), or NULL and @out_reason says why. */
char *
paddock_cgroup_find_of (pid_t   pid,
                        char  **out_reason)
{
  g_autofree char *mount = PADDOCK_ENABLE_LINUX ? find_cgroup2_mount () : NULL;
  g_autofree char *proc_path = pid > 0 ? g_strdup_printf ("/proc/%d/cgroup", (int) pid)
                                       : g_strdup ("/proc/self/cgroup");
  g_autofree char *membership = NULL;
  g_autofree char *relative = NULL;
  g_auto(GStrv) lines = NULL;

  if (!PADDOCK_ENABLE_LINUX)
    {
      *out_reason = g_strdup (PORTABLE_REASON);
      return NULL;
    }
  if (mount == NULL)
    {
      *out_reason = g_strdup ("no cgroup v2 hierarchy is mounted");
      return NULL;
    }

  if (!g_file_get_contents (proc_path, &membership, NULL, NULL))
    {
      *out_reason = g_strdup_printf ("could not read %s", proc_path);
      return NULL;
    }

  lines = g_strsplit (membership, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], "0::"))
      relative = g_strdup (lines[i] + 3);

  if (relative == NULL)
    {
      *out_reason = g_strdup (pid > 0 ? "the process is in no cgroup v2" : "the daemon is in no cgroup v2");
      return NULL;
    }

  *out_reason = NULL;
  return g_build_filename (mount, relative, NULL);
}

/* Our own cgroup v2 as a folder, or NULL and @out_reason says why. */
char *
paddock_cgroup_find_own (char **out_reason)
{
  return paddock_cgroup_find_of (0, out_reason);
}

/* The folder under which session cgroups go: our own cgroup v2, when we
 * may write to it — as root, or when the service manager delegated it to
 * us (systemd: Delegate=yes, as data/paddockd.service asks). Otherwise
 * NULL, and @out_reason says why, for the boundary's evidence. */
char *
paddock_cgroup_find_parent (char **out_reason)
{
  g_autofree char *parent = paddock_cgroup_find_own (out_reason);
  g_autofree char *mount = NULL;

  if (parent == NULL)
    return NULL;

  if (access (parent, W_OK) != 0)
    {
      mount = find_cgroup2_mount ();
      *out_reason = g_strdup_printf ("the daemon's cgroup %s is not writable (not delegated to this user)",
                                     mount != NULL && g_str_has_prefix (parent, mount) && parent[strlen (mount)] != '\0'
                                     ? parent + strlen (mount) : "/");
      return NULL;
    }

  *out_reason = NULL;
  return g_steal_pointer (&parent);
}

/* Moves this whole process (every thread: cgroup.procs) into the child
 * @leaf of @parent, made if need be. cgroup v2 lets a cgroup either hold
 * processes or enable controllers for its children, not both (the "no
 * internal processes" rule): with the daemon in a leaf of its own, the
 * sessions' cgroups can be its siblings and @parent may hand them
 * controllers. Needs write access to @parent's cgroup.procs (the common
 * ancestor of where we are and where we go), which delegation gives. */
gboolean
paddock_cgroup_enter_leaf (const char  *parent,
                           const char  *leaf,
                           GError     **error)
{
  g_autofree char *path = g_build_filename (parent, leaf, NULL);
  g_autofree char *procs = g_build_filename (path, "cgroup.procs", NULL);
  int fd;
  gboolean ok;
  int saved_errno;

  if (!PADDOCK_ENABLE_LINUX)
    {
      g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED, PORTABLE_REASON);
      return FALSE;
    }
  if (g_mkdir (path, 0755) != 0 && errno != EEXIST)
    {
      saved_errno = errno;
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "Could not make the cgroup %s: %s", path, g_strerror (saved_errno));
      return FALSE;
    }

  fd = open (procs, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    {
      saved_errno = errno;
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "Could not open %s: %s", procs, g_strerror (saved_errno));
      g_rmdir (path);
      return FALSE;
    }
  /* "0": the writer's own thread group, whatever our pid is named here. */
  ok = write (fd, "0", 1) == 1;
  saved_errno = errno;
  close (fd);
  if (!ok)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "Could not move the daemon into %s: %s", path, g_strerror (saved_errno));
      g_rmdir (path);
      return FALSE;
    }

  return TRUE;
}

PaddockCgroup *
paddock_cgroup_new (const char  *parent,
                    const char  *name,
                    GError     **error)
{
  g_autofree char *path = g_build_filename (parent, name, NULL);
  PaddockCgroup *self;

  if (!PADDOCK_ENABLE_LINUX)
    {
      g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED, PORTABLE_REASON);
      return NULL;
    }
  if (g_mkdir (path, 0755) != 0 && errno != EEXIST)
    {
      int saved_errno = errno;
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "Could not make the cgroup %s: %s", path, g_strerror (saved_errno));
      return NULL;
    }

  self = g_new0 (PaddockCgroup, 1);
  self->path = g_steal_pointer (&path);
  return self;
}

PaddockCgroup *
paddock_cgroup_open (const char *path)
{
  PaddockCgroup *self;

  /* A record an earlier, Linux-executor daemon left names a cgroup:
   * still not ours to look at here. */
  if (!PADDOCK_ENABLE_LINUX || path == NULL || !g_file_test (path, G_FILE_TEST_IS_DIR))
    return NULL;

  self = g_new0 (PaddockCgroup, 1);
  self->path = g_strdup (path);
  return self;
}

const char *
paddock_cgroup_get_path (PaddockCgroup *self)
{
  return self->path;
}

/* An fd on cgroup.procs, opened before fork: the child writes "0" to it
 * (async-signal-safe) to join before it execs anything. */
int
paddock_cgroup_open_procs (PaddockCgroup  *self,
                           GError        **error)
{
  g_autofree char *procs = g_build_filename (self->path, "cgroup.procs", NULL);
  int fd = open (procs, O_WRONLY | O_CLOEXEC);

  if (fd < 0)
    {
      int saved_errno = errno;
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "Could not open %s: %s", procs, g_strerror (saved_errno));
    }
  return fd;
}

/* An fd on cgroup.events, or -1: the kernel marks it readable with
 * POLLPRI (G_IO_PRI) whenever a line of it changes ("populated 0" once
 * the last member is gone), until it is read again. */
int
paddock_cgroup_open_events (PaddockCgroup *self)
{
  g_autofree char *events = g_build_filename (self->path, "cgroup.events", NULL);

  return open (events, O_RDONLY | O_CLOEXEC);
}

GArray *
paddock_cgroup_list_pids (PaddockCgroup *self)
{
  g_autofree char *procs = g_build_filename (self->path, "cgroup.procs", NULL);
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  GArray *pids = g_array_new (FALSE, FALSE, sizeof (pid_t));

  if (!g_file_get_contents (procs, &contents, NULL, NULL))
    return pids;

  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      guint64 pid;

      if (g_ascii_string_to_unsigned (lines[i], 10, 1, G_MAXINT, &pid, NULL))
        {
          pid_t found = (pid_t) pid;
          g_array_append_val (pids, found);
        }
    }

  return pids;
}

void
paddock_cgroup_signal (PaddockCgroup *self,
                       int            signal_number)
{
  g_autoptr(GArray) pids = paddock_cgroup_list_pids (self);

  for (guint i = 0; i < pids->len; i++)
    kill (g_array_index (pids, pid_t, i), signal_number);
}

/* cgroupfs files take one write(); no temp file and rename here. */
static gboolean
write_control (const char *path,
               const char *value)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  gboolean ok;

  if (fd < 0)
    return FALSE;
  ok = write (fd, value, strlen (value)) == (gssize) strlen (value);
  close (fd);
  return ok;
}

/* SIGKILL to every member at once (cgroup.kill); on kernels without it,
 * one by one. */
gboolean
paddock_cgroup_kill (PaddockCgroup *self)
{
  g_autofree char *kill_path = g_build_filename (self->path, "cgroup.kill", NULL);

  if (write_control (kill_path, "1"))
    return TRUE;

  paddock_cgroup_signal (self, SIGKILL);
  return FALSE;
}

/* Freezes (or thaws) every member at once, for the moment an apply or a
 * checkpoint needs the stage to hold still. Returns once the kernel says
 * the whole cgroup is frozen ("frozen 1" in cgroup.events), or FALSE after
 * a second without it. */
gboolean
paddock_cgroup_freeze (PaddockCgroup *self,
                       gboolean       frozen)
{
  g_autofree char *freeze_path = g_build_filename (self->path, "cgroup.freeze", NULL);
  g_autofree char *events_path = g_build_filename (self->path, "cgroup.events", NULL);
  const char *want = frozen ? "frozen 1" : "frozen 0";

  if (!write_control (freeze_path, frozen ? "1" : "0"))
    return FALSE;

  for (guint i = 0; i < 1000; i++)
    {
      g_autofree char *events = NULL;

      if (!g_file_get_contents (events_path, &events, NULL, NULL))
        return FALSE;
      if (strstr (events, want) != NULL)
        return TRUE;
      g_usleep (1000);
    }
  return FALSE;
}

/* @word as a whole word of the space-separated @list. */
static gboolean
list_has_word (const char *list,
               const char *word)
{
  g_auto(GStrv) words = g_strsplit_set (list != NULL ? list : "", " \n", -1);

  return g_strv_contains ((const char *const *) words, word);
}

/* Sets a limit of @controller ("pids", "memory") on the session's cgroup:
 * the controller must be available to the cgroup above (its
 * cgroup.controllers), is enabled there for its children
 * (cgroup.subtree_control) if need be, then @value goes to @file
 * ("pids.max") and is read back. FALSE with why in @error: NOT_ENFORCED
 * when the controller is not available at all, FAILED when it is but the
 * kernel refused. Call it before any process joins the cgroup. */
gboolean
paddock_cgroup_set_limit (PaddockCgroup *self,
                          const char    *controller,
                          const char    *file,
                          guint64        value,
                          GError       **error)
{
  g_autofree char *parent = g_path_get_dirname (self->path);
  g_autofree char *available_path = g_build_filename (parent, "cgroup.controllers", NULL);
  g_autofree char *enabled_path = g_build_filename (parent, "cgroup.subtree_control", NULL);
  g_autofree char *limit_path = g_build_filename (self->path, file, NULL);
  g_autofree char *available = NULL;
  g_autofree char *enabled = NULL;
  g_autofree char *wanted = g_strdup_printf ("%" G_GUINT64_FORMAT, value);
  g_autofree char *read_back = NULL;

  if (!g_file_get_contents (available_path, &available, NULL, NULL) || !list_has_word (available, controller))
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED,
                   "%s controller not available in %s (cgroup.controllers: %s)", controller, parent,
                   available != NULL && g_strstrip (available)[0] != '\0' ? available : "none");
      return FALSE;
    }
  if (!g_file_get_contents (enabled_path, &enabled, NULL, NULL) || !list_has_word (enabled, controller))
    {
      g_autofree char *plus = g_strconcat ("+", controller, NULL);

      if (!write_control (enabled_path, plus))
        {
          int saved_errno = errno;

          /* EBUSY: the cgroup above holds processes itself (the "no
           * internal processes" rule), e.g. a daemon not at the root. */
          g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                       "could not enable the %s controller in %s: %s", controller, enabled_path,
                       g_strerror (saved_errno));
          return FALSE;
        }
    }
  if (!write_control (limit_path, wanted))
    {
      int saved_errno = errno;

      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "could not write %s to %s: %s", wanted, limit_path, g_strerror (saved_errno));
      return FALSE;
    }
  if (!g_file_get_contents (limit_path, &read_back, NULL, NULL) || !g_str_equal (g_strstrip (read_back), wanted))
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "%s reads back \"%s\", not %s", limit_path, read_back != NULL ? read_back : "nothing", wanted);
      return FALSE;
    }
  return TRUE;
}

/* Removes the (empty) cgroup; FALSE while members remain. */
gboolean
paddock_cgroup_remove (PaddockCgroup *self)
{
  return g_rmdir (self->path) == 0 || errno == ENOENT;
}

void
paddock_cgroup_free (PaddockCgroup *self)
{
  if (self == NULL)
    return;

  g_free (self->path);
  g_free (self);
}
