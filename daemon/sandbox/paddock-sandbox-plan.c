/* paddock-sandbox-plan.c — the mount plan, computed before clone
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Everything pid 1 will mount, as a list of SetupOps made with GLib and
 * malloc before clone(): between clone and exec only run_op() reads it.
 */

#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paddock-sandbox-host-paths.h"
#include "paddock-sandbox-private.h"

void
plan_clear (Plan *plan)
{
  g_clear_pointer (&plan->ops, g_array_unref);
  g_clear_pointer (&plan->strings, g_string_chunk_free);
  g_clear_pointer (&plan->made, g_hash_table_unref);
}

void
plan_init (Plan *plan)
{
  plan->ops = g_array_new (FALSE, TRUE, sizeof (SetupOp));
  plan->strings = g_string_chunk_new (4096);
  plan->made = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  /* Present: it fails on the bad fd. Absent: ENOSYS (or EPERM from a
   * seccomp filter that does not know it); then the plan remounts. */
  plan->have_mount_setattr = mount_setattr (-1, "", 0, NULL, 0) != 0 && errno != ENOSYS && errno != EPERM;
}

static void
plan_add (Plan        *plan,
          SetupOpType  type,
          gboolean     optional,
          const char  *source,
          const char  *dest,
          const char  *data)
{
  SetupOp op = {
    .type = type,
    .optional = optional,
    .source = source ? g_string_chunk_insert_const (plan->strings, source) : NULL,
    .dest = g_string_chunk_insert_const (plan->strings, dest),
    .data = data ? g_string_chunk_insert_const (plan->strings, data) : NULL,
  };

  g_array_append_val (plan->ops, op);
}

/* mkdir -p under /newroot for an absolute path inside the sandbox. */
static void
plan_add_setattr_tree (Plan       *plan,
                       const char *dest,
                       guint64     attr_set)
{
  plan_add (plan, OP_SETATTR_TREE, FALSE, NULL, dest, NULL);
  g_array_index (plan->ops, SetupOp, plan->ops->len - 1).attr_set = attr_set;
}

static void
plan_mkdir_p (Plan       *plan,
              const char *path)
{
  g_auto(GStrv) parts = g_strsplit (path, "/", -1);
  g_autoptr(GString) dest = g_string_new ("/newroot");

  for (guint i = 0; parts[i] != NULL; i++)
    {
      if (parts[i][0] == '\0')
        continue;
      g_string_append_c (dest, '/');
      g_string_append (dest, parts[i]);
      if (g_hash_table_contains (plan->made, dest->str))
        continue;
      g_hash_table_add (plan->made, g_strdup (dest->str));
      plan_add (plan, OP_MKDIR, FALSE, NULL, dest->str, NULL);
    }
}

/* A host path seen the same inside: a symlink stays a symlink (merged /usr:
 * /bin -> usr/bin), a folder or file is bound read-only. */
static void
plan_system_path (Plan        *plan,
                  const char  *path,
                  gboolean     follow,
                  SetupOpType  bind)
{
  struct stat st;
  g_autofree char *dest = g_strconcat ("/newroot", path, NULL);
  g_autofree char *resolved = NULL;
  g_autofree char *source = NULL;
  g_autofree char *parent = g_path_get_dirname (path);

  if ((follow ? stat (path, &st) : lstat (path, &st)) != 0)
    return;   /* not on this system: nothing to show */

  /* Bind the file a symlink leads to: an absolute link would otherwise be
   * resolved against the base tmpfs, not under /oldroot. */
  resolved = follow ? realpath (path, NULL) : g_strdup (path);
  if (resolved == NULL)
    return;
  source = g_strconcat ("/oldroot", resolved, NULL);

  plan_mkdir_p (plan, parent);

  if (S_ISLNK (st.st_mode))
    {
      g_autofree char *target = g_file_read_link (path, NULL);
      if (target != NULL)
        plan_add (plan, OP_SYMLINK, FALSE, target, dest, NULL);
    }
  else if (S_ISDIR (st.st_mode))
    {
      plan_mkdir_p (plan, path);
      plan_add (plan, bind, FALSE, source, dest, NULL);
    }
  else if (S_ISREG (st.st_mode))
    {
      plan_add (plan, OP_CREATE_FILE, FALSE, NULL, dest, NULL);
      plan_add (plan, bind, FALSE, source, dest, NULL);
    }
}

/* overlayfs splits its options at ',' and layer lists at ':'; a backslash
 * escapes either (and itself), so any path can be named. */
static void
append_overlay_path (GString    *options,
                     const char *key,
                     const char *path)
{
  g_string_append (options, key);
  g_string_append_c (options, '=');
  for (const char *p = path; *p != '\0'; p++)
    {
      if (*p == ',' || *p == ':' || *p == '\\')
        g_string_append_c (options, '\\');
      g_string_append_c (options, *p);
    }
}

char *
overlay_options (const char *lower,
                 const char *stage_dir)
{
  g_autoptr(GString) options = g_string_new (NULL);
  g_autofree char *upper = g_build_filename (stage_dir, "upper", NULL);
  g_autofree char *work = g_build_filename (stage_dir, "work", NULL);

  append_overlay_path (options, "lowerdir", lower);
  g_string_append_c (options, ',');
  append_overlay_path (options, "upperdir", upper);
  g_string_append_c (options, ',');
  append_overlay_path (options, "workdir", work);
  /* userxattr: the only way an unprivileged mounter gets an overlay; it
   * also rules out redirect_dir and metacopy, so every changed file is a
   * whole copy in the upper folder. */
  g_string_append (options, ",userxattr");
  return g_string_free (g_steal_pointer (&options), FALSE);
}

/* The part of the view every session has alike: the system, /dev, /proc,
 * and the empty /tmp and HOME. A sandbox made ahead (--spare) builds it
 * before any session is known; plan_build_session() adds the rest. */
void
plan_build_system (Plan *plan,
                   int   pty_fd)
{
  /* The system: programs and libraries, read-only. */
  static const char *const system_dirs[] = { PADDOCK_SANDBOX_SYSTEM_DIRS };
  static const char *const dev_nodes[] = { PADDOCK_SANDBOX_DEV_NODES };

  for (guint i = 0; i < G_N_ELEMENTS (system_dirs); i++)
    plan_system_path (plan, system_dirs[i], FALSE, OP_BIND_RO);
  /* A minimal /dev: a tmpfs holding binds of the harmless host devices. */
  plan_mkdir_p (plan, "/dev");
  plan_add (plan, OP_TMPFS, FALSE, NULL, "/newroot/dev", "mode=0755");
  for (guint i = 0; i < G_N_ELEMENTS (dev_nodes); i++)
    {
      g_autofree char *host = g_strconcat ("/dev/", dev_nodes[i], NULL);
      g_autofree char *source = g_strconcat ("/oldroot/dev/", dev_nodes[i], NULL);
      g_autofree char *dest = g_strconcat ("/newroot/dev/", dev_nodes[i], NULL);

      if (!g_file_test (host, G_FILE_TEST_EXISTS))
        continue;
      plan_add (plan, OP_CREATE_FILE, FALSE, NULL, dest, NULL);
      plan_add (plan, plan->have_mount_setattr ? OP_BIND_ONLY : OP_BIND_DEV, FALSE, source, dest, NULL);
    }
  /* The device binds (and /dev's tmpfs) nosuid and noexec in one call;
   * devpts and /dev/shm come after, with flags of their own. */
  if (plan->have_mount_setattr)
    plan_add_setattr_tree (plan, "/newroot/dev", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
  plan_add (plan, OP_MKDIR, FALSE, NULL, "/newroot/dev/pts", NULL);
  plan_add (plan, OP_DEVPTS, FALSE, NULL, "/newroot/dev/pts", NULL);
  plan_add (plan, OP_SYMLINK, FALSE, "pts/ptmx", "/newroot/dev/ptmx", NULL);
  plan_add (plan, OP_MKDIR, FALSE, NULL, "/newroot/dev/shm", NULL);
  /* Private tmpfs sizes are bounded: a session filling them pins memory
   * (10% of RAM here, 25% for /tmp, 10% for HOME), not all of it. */
  plan_add (plan, OP_TMPFS, FALSE, NULL, "/newroot/dev/shm", "mode=1777,size=10%");
  plan_add (plan, OP_SYMLINK, FALSE, "/proc/self/fd", "/newroot/dev/fd", NULL);
  plan_add (plan, OP_SYMLINK, FALSE, "/proc/self/fd/0", "/newroot/dev/stdin", NULL);
  plan_add (plan, OP_SYMLINK, FALSE, "/proc/self/fd/1", "/newroot/dev/stdout", NULL);
  plan_add (plan, OP_SYMLINK, FALSE, "/proc/self/fd/2", "/newroot/dev/stderr", NULL);
  if (pty_fd >= 0)
    {
      /* Bound by its path in our copy of the host's tree: a bind source must
       * be a mount of our own namespace, which the fd's (the host's) is not.
       * ttyname_r() checks the path is this very terminal. */
      char name[256];

      if (ttyname_r (pty_fd, name, sizeof name) == 0 && name[0] == '/')
        {
          g_autofree char *source = g_strconcat ("/oldroot", name, NULL);
          plan_add (plan, OP_CREATE_FILE, FALSE, NULL, "/newroot/dev/console", NULL);
          plan_add (plan, OP_BIND_DEV, FALSE, source, "/newroot/dev/console", NULL);
        }
    }

  /* /proc of our PID namespace, with the kernel knobs that would act on the
   * host read-only (as bubblewrap does: in a user namespace most writes there
   * fail anyway; this makes it so for every one of them). */
  plan_mkdir_p (plan, "/proc");
  plan_add (plan, OP_PROC, FALSE, NULL, "/newroot/proc", NULL);
  {
    static const char *const proc_ro[] = { "sys", "sysrq-trigger", "irq", "bus" };
    for (guint i = 0; i < G_N_ELEMENTS (proc_ro); i++)
      {
        g_autofree char *p = g_strconcat ("/newroot/proc/", proc_ro[i], NULL);
        plan_add (plan, OP_BIND_RO, TRUE, p, p, NULL);
      }
  }

  /* Private, empty /tmp and HOME: nothing of the host's /tmp or of the real
   * home is visible, and what the agent leaves there dies with it. */
  plan_mkdir_p (plan, "/tmp");
  plan_add (plan, OP_TMPFS, FALSE, NULL, "/newroot/tmp", "mode=1777,size=25%");
  plan_mkdir_p (plan, HOME_PATH);
  plan_add (plan, OP_TMPFS, FALSE, NULL, "/newroot" HOME_PATH, "mode=0700,size=10%");
}

/* The part of /etc programs need to run, resolve names and verify TLS.
 * Followed when symlinks (resolv.conf often points into /run, which the
 * sandbox does not have). Not shadow, not ssh keys, nothing secret. */
static const char *const etc_files[] = { PADDOCK_SANDBOX_ETC_FILES };

/* The part of /etc programs need to run, as a tree of its own: its files
 * are bound one by one (see etc_fingerprint() for a spare's). */
void
plan_build_etc (Plan *plan)
{
  plan_mkdir_p (plan, "/etc");
  if (plan->have_mount_setattr)
    {
      /* /etc as a tree of its own (a tmpfs holding the binds), made
       * read-only, nosuid and nodev as a whole in one call rather than one
       * remount per file: the same view, 30-odd fewer mount calls. */
      plan_add (plan, OP_TMPFS, FALSE, NULL, "/newroot/etc", "mode=0755");
      for (guint i = 0; i < G_N_ELEMENTS (etc_files); i++)
        plan_system_path (plan, etc_files[i], TRUE, OP_BIND_ONLY);
      plan_add_setattr_tree (plan, "/newroot/etc",
                             MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    }
  else
    for (guint i = 0; i < G_N_ELEMENTS (etc_files); i++)
      plan_system_path (plan, etc_files[i], TRUE, OP_BIND_RO);
}

/* What plan_build_etc() binds as the host shows it now: for each of its
 * paths, the file (or folder) itself and where a symlink leads, by device
 * and inode. A bind shows the inode it was made on, so a file replaced by
 * rename since (an editor's save, a network manager's new resolv.conf),
 * one that appeared or went, or a symlink pointed elsewhere changes it: a
 * spare's /etc, bound ahead, is then bound again for its session. */
char *
etc_fingerprint (void)
{
  GString *print = g_string_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (etc_files); i++)
    {
      struct stat link_st, st;
      char target[PATH_BUF];
      ssize_t n = 0;

      if (lstat (etc_files[i], &link_st) != 0)
        {
          g_string_append (print, "-\n");
          continue;
        }
      if (S_ISLNK (link_st.st_mode) && (n = readlink (etc_files[i], target, sizeof target - 1)) < 0)
        n = 0;
      target[n] = '\0';
      if (stat (etc_files[i], &st) != 0)
        memset (&st, 0, sizeof st);
      g_string_append_printf (print, "%lu:%lu %s %lu:%lu\n", (gulong) link_st.st_dev, (gulong) link_st.st_ino,
                              target, (gulong) st.st_dev, (gulong) st.st_ino);
    }
  return g_string_free (print, FALSE);
}

/* An agent's part of the view (before plan_build_session(), whose
 * exposures go over its home): its home writable at HOME_PATH, its
 * install read-only at its own paths. Checked by main(). */
void
plan_build_agent (Plan               *plan,
                  const char         *home_dir,
                  const char * const *view_ro)
{
  if (home_dir != NULL)
    {
      g_autofree char *source = g_strconcat ("/oldroot", home_dir, NULL);
      struct stat st;

      plan_add (plan, OP_BIND_RW, FALSE, source, "/newroot" HOME_PATH, NULL);
      if (stat (home_dir, &st) == 0)
        {
          SetupOp *op = &g_array_index (plan->ops, SetupOp, plan->ops->len - 1);
          op->expect_dev = st.st_dev;
          op->expect_ino = st.st_ino;
        }
    }
  for (guint i = 0; view_ro != NULL && view_ro[i] != NULL; i++)
    {
      g_autofree char *resolved = realpath (view_ro[i], NULL);
      g_autofree char *source = resolved != NULL ? g_strconcat ("/oldroot", resolved, NULL) : NULL;
      g_autofree char *dest = g_strconcat ("/newroot", view_ro[i], NULL);

      if (resolved == NULL)
        continue;
      if (g_file_test (resolved, G_FILE_TEST_IS_DIR))
        plan_mkdir_p (plan, view_ro[i]);
      else
        {
          g_autofree char *parent = g_path_get_dirname (view_ro[i]);

          plan_mkdir_p (plan, parent);
          plan_add (plan, OP_CREATE_FILE, FALSE, NULL, dest, NULL);
        }
      plan_add (plan, OP_BIND_RO, FALSE, source, dest, NULL);
    }
}

/* The session's own part of the view, after plan_build_system()'s: /etc
 * (unless WITH_ETC is FALSE: a spare's, bound ahead and still current),
 * what it shows of the real HOME, its workspace and protected paths, then
 * the root made read-only. Host paths are looked up as the host sees them. */
void
plan_build_session (Plan               *plan,
                    gboolean            with_etc,
                    const char         *workspace,
                    StageKind           stage_kind,
                    const char         *stage_dir,
                    const char * const *protect,
                    const char         *real_home,
                    const char * const *expose)
{
  if (with_etc)
    plan_build_etc (plan);

  /* Exposures: what the user named of the real HOME, read-only at the same
   * place in the session's HOME (checked by main(): relative, existing). */
  for (guint i = 0; expose != NULL && expose[i] != NULL; i++)
    {
      g_autofree char *host = g_build_filename (real_home, expose[i], NULL);
      g_autofree char *resolved = realpath (host, NULL);
      g_autofree char *inside = g_build_filename (HOME_PATH, expose[i], NULL);
      g_autofree char *source = resolved != NULL ? g_strconcat ("/oldroot", resolved, NULL) : NULL;
      g_autofree char *dest = g_strconcat ("/newroot", inside, NULL);

      if (resolved == NULL)
        continue;
      if (g_file_test (resolved, G_FILE_TEST_IS_DIR))
        plan_mkdir_p (plan, inside);
      else
        {
          g_autofree char *parent = g_path_get_dirname (inside);

          plan_mkdir_p (plan, parent);
          plan_add (plan, OP_CREATE_FILE, FALSE, NULL, dest, NULL);
        }
      plan_add (plan, OP_BIND_RO, FALSE, source, dest, NULL);
    }

  /* The workspace last: it may lie inside /tmp or HOME's tmpfs, so its mount
   * point is created in them. Same absolute path inside and out, so paths in
   * the agent's output mean the same thing to the user. */
  {
    g_autofree char *source = g_strconcat ("/oldroot", workspace, NULL);
    g_autofree char *dest = g_strconcat ("/newroot", workspace, NULL);
    g_autofree char *stage = stage_dir ? g_strconcat ("/oldroot", stage_dir, NULL) : NULL;
    struct stat st;

    plan_mkdir_p (plan, workspace);
    if (stage_kind == STAGE_OVERLAY)
      {
        g_autofree char *options = overlay_options (source, stage);
        plan_add (plan, OP_OVERLAY, FALSE, NULL, dest, options);
      }
    else if (stage_kind == STAGE_COPY)
      {
        /* The copy, at the workspace's path; the real folder stays out of
         * the view. */
        plan_add (plan, OP_BIND_RW, FALSE, stage, dest, NULL);
        if (stat (stage_dir, &st) == 0)
          {
            SetupOp *op = &g_array_index (plan->ops, SetupOp, plan->ops->len - 1);
            op->expect_dev = st.st_dev;
            op->expect_ino = st.st_ino;
          }
      }
    else
      plan_add (plan, OP_BIND_RW, FALSE, source, dest, NULL);
    if (stage_kind == STAGE_NONE && stat (workspace, &st) == 0)
      {
        SetupOp *op = &g_array_index (plan->ops, SetupOp, plan->ops->len - 1);
        op->expect_dev = st.st_dev;
        op->expect_ino = st.st_ino;
      }
  }

  /* Protected paths of the workspace (relative, checked by main()), over
   * the staged view: read-only binds the agent cannot write through,
   * rename or remove, unless the user allowed them (then they are not
   * listed). Folders on the way are pinned first, in order, once each. */
  for (guint i = 0; protect != NULL && protect[i] != NULL; i++)
    {
      g_autofree char *ws_dest = g_strconcat ("/newroot", workspace, NULL);
      g_auto(GStrv) parts = g_strsplit (protect[i], "/", -1);
      g_autoptr(GString) rel = g_string_new (NULL);

      for (guint j = 0; parts[j] != NULL && parts[j + 1] != NULL; j++)
        {
          g_autofree char *pin = NULL;

          g_string_append_printf (rel, "%s%s", j > 0 ? "/" : "", parts[j]);
          pin = g_strconcat (ws_dest, "/", rel->str, NULL);
          if (g_hash_table_contains (plan->made, pin))
            continue;
          plan_add (plan, OP_PIN, TRUE, NULL, pin, NULL);
          /* Not a folder to create: only marks it pinned. */
          g_hash_table_add (plan->made, g_strdup (pin));
        }
      {
        g_autofree char *dest = g_strconcat (ws_dest, "/", protect[i], NULL);
        g_autofree char *view = g_strconcat (workspace, "/", protect[i], NULL);

        plan_add (plan, OP_PROTECT, TRUE, ws_dest, dest, view);
      }
    }

  /* Last, the root tmpfs itself: the skeleton of folders cannot be changed. */
  plan_add (plan, OP_REMOUNT_RO, FALSE, NULL, "/newroot", NULL);
}

/* A relative path of plain components (no "." or "..", no empty one, so
 * no leading or doubled "/"), at most 256 bytes: what --protect and
 * --expose accept, so that nothing they name leaves its folder. */
gboolean
is_plain_relative_path (const char *path)
{
  g_auto(GStrv) parts = g_strsplit (path, "/", -1);

  if (path[0] == '\0' || strlen (path) > 256)
    return FALSE;
  for (guint j = 0; parts[j] != NULL; j++)
    if (parts[j][0] == '\0' || g_str_equal (parts[j], ".") || g_str_equal (parts[j], ".."))
      return FALSE;
  return TRUE;
}

/* The workspace is bound over the sandbox's own tree: it must not replace or
 * hide a system folder, /proc, /dev or the private /tmp and HOME. */
gboolean
workspace_allowed (const char *ws)
{
  static const char *const reserved_within[] = {
    PADDOCK_SANDBOX_SYSTEM_DIRS, "/etc", "/proc", "/dev", "/sys", "/run",
  };
  static const char *const reserved_exact[] = { "/", "/tmp", "/home", HOME_PATH };

  for (guint i = 0; i < G_N_ELEMENTS (reserved_within); i++)
    if (paddock_path_is_within (ws, reserved_within[i]))
      return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (reserved_exact); i++)
    if (g_str_equal (ws, reserved_exact[i]))
      return FALSE;
  return TRUE;
}
