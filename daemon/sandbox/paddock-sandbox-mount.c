/* paddock-sandbox-mount.c — the mount plan's steps, run by pid 1
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * run_op() and the binds it makes: async-signal-safe, between clone()
 * and the agent's exec, from the plan paddock-sandbox-plan.c made.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-sandbox-private.h"

void
write_file (const char *path,
            const char *text)
{
  paddock_autofd int fd = open (path, O_WRONLY | O_CLOEXEC);
  size_t len = strlen (text);

  if (fd < 0)
    die_errno (EXIT_NO_NAMESPACES, "cannot open", path, errno);
  if (write (fd, text, len) != (ssize_t) len)
    die_errno (EXIT_NO_NAMESPACES, "cannot map ids in the user namespace: writing", path, errno);
}

/* Mount flags a remount must carry over. In a user namespace the kernel
 * refuses (EPERM) a remount that would clear nosuid, nodev, noexec or
 * read-only set by a more privileged mounter (MNT_LOCK_*); statfs() tells us
 * which the source has. Access-time flags are left out, so the kernel keeps
 * the source's (it does when a remount names none). */
static unsigned long
locked_flags_of (const char *path)
{
  struct statfs sfs;
  unsigned long flags = 0;

  if (statfs (path, &sfs) != 0)
    die_errno (EXIT_SETUP, "statfs failed on", path, errno);
  if (sfs.f_flags & ST_RDONLY)
    flags |= MS_RDONLY;
  if (sfs.f_flags & ST_NOSUID)
    flags |= MS_NOSUID;
  if (sfs.f_flags & ST_NODEV)
    flags |= MS_NODEV;
  if (sfs.f_flags & ST_NOEXEC)
    flags |= MS_NOEXEC;
  return flags;
}

/* MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC as MOUNT_ATTR_* bits. */
static guint64
extra_to_attr (unsigned long extra)
{
  return ((extra & MS_RDONLY) ? MOUNT_ATTR_RDONLY : 0) |
         ((extra & MS_NOSUID) ? MOUNT_ATTR_NOSUID : 0) |
         ((extra & MS_NODEV) ? MOUNT_ATTR_NODEV : 0) |
         ((extra & MS_NOEXEC) ? MOUNT_ATTR_NOEXEC : 0);
}

static void
bind_mount (const SandboxConfig *cfg,
            const SetupOp       *op,
            unsigned long        extra)
{
  /* Not MS_REC: the sandbox sees exactly the listed trees, not whatever the
   * host happens to have mounted below them. */
  if (mount (op->source, op->dest, NULL, MS_BIND, NULL) != 0)
    {
      if (op->optional && errno == ENOENT)
        return;
      die_errno (EXIT_SETUP, "cannot bind-mount", op->source, errno);
    }
  /* MS_BIND ignores every other flag on the first call: read-only and the
   * rest take a second call. mount_setattr() only adds flags, so the ones
   * the kernel locked (inherited from the host) need not be restated. */
  if (cfg->have_mount_setattr)
    {
      struct mount_attr attr = { .attr_set = extra_to_attr (extra) };

      if (mount_setattr (AT_FDCWD, op->dest, 0, &attr, sizeof attr) != 0)
        die_errno (EXIT_SETUP, "cannot set the flags of", op->dest, errno);
      return;
    }
  if (mount (NULL, op->dest, NULL,
             MS_BIND | MS_REMOUNT | extra | locked_flags_of (op->dest), NULL) != 0)
    die_errno (EXIT_SETUP, "cannot remount", op->dest, errno);
}

void
run_op (const SandboxConfig *cfg,
        const SetupOp       *op)
{
  switch (op->type)
    {
    case OP_MKDIR:
      if (mkdir (op->dest, 0755) != 0 && errno != EEXIST)
        die_errno (EXIT_SETUP, "cannot create", op->dest, errno);
      break;

    case OP_CREATE_FILE:
      {
        int fd = open (op->dest, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0444);
        if (fd < 0)
          die_errno (EXIT_SETUP, "cannot create", op->dest, errno);
        close (fd);
      }
      break;

    case OP_SYMLINK:
      if (symlink (op->source, op->dest) != 0)
        die_errno (EXIT_SETUP, "cannot create the symlink", op->dest, errno);
      break;

    case OP_BIND_RO:
      bind_mount (cfg, op, MS_RDONLY | MS_NOSUID | MS_NODEV);
      break;

    case OP_BIND_DEV:
      /* Device nodes: dev stays allowed on these binds (only these). */
      bind_mount (cfg, op, MS_NOSUID | MS_NOEXEC);
      break;

    case OP_BIND_RW:
      /* The workspace: writable, but nothing setuid or device-like in it
       * takes effect. */
      bind_mount (cfg, op, MS_NOSUID | MS_NODEV);
      /* The path was resolved before clone; if a component was swapped for
       * a symlink since (by an earlier session writing in a parent folder,
       * say), the bind followed it somewhere else: refuse to run there. */
      if (op->expect_ino != 0)
        {
          struct stat st;
          if (stat (op->dest, &st) != 0)
            die_errno (EXIT_SETUP, "cannot stat", op->dest, errno);
          if (st.st_dev != op->expect_dev || st.st_ino != op->expect_ino)
            die_msg (EXIT_SETUP, "the workspace was replaced while being mounted, refusing:", op->source);
        }
      break;

    case OP_TMPFS:
      if (mount ("tmpfs", op->dest, "tmpfs", MS_NOSUID | MS_NODEV, op->data) != 0)
        die_errno (EXIT_SETUP, "cannot mount a tmpfs on", op->dest, errno);
      break;

    case OP_PROC:
      /* A fresh proc for our PID namespace: it shows only the sandbox's
       * processes, and its /proc/self is ours. */
      if (mount ("proc", op->dest, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
        die_errno (EXIT_SETUP, "cannot mount proc on", op->dest, errno);
      break;

    case OP_DEVPTS:
      /* A new devpts instance: the agent cannot open the host's terminals
       * (which belong to the same user and would let it read or type into
       * them). The caller's PTY is bound at /dev/console instead. */
      if (mount ("devpts", op->dest, "devpts", MS_NOSUID | MS_NOEXEC,
                 "newinstance,ptmxmode=0666,mode=620") != 0)
        die_errno (EXIT_SETUP, "cannot mount devpts on", op->dest, errno);
      break;

    case OP_OVERLAY:
      /* The staged workspace. Rootless overlayfs keeps its whiteouts and
       * opaque marks in user.overlay.* xattrs (userxattr), which the daemon
       * reads back from the upper folder for the review list. */
      if (mount ("overlay", op->dest, "overlay", MS_NOSUID | MS_NODEV, op->data) != 0)
        die_errno (EXIT_SETUP, "cannot mount the staging overlay on", op->dest, errno);
      break;

    case OP_BIND_ONLY:
      /* Flags come from the OP_SETATTR_TREE planned right after the tree. */
      if (mount (op->source, op->dest, NULL, MS_BIND, NULL) != 0)
        {
          if (op->optional && errno == ENOENT)
            break;
          die_errno (EXIT_SETUP, "cannot bind-mount", op->source, errno);
        }
      break;

    case OP_SETATTR_TREE:
      {
        struct mount_attr attr = { .attr_set = op->attr_set };

        if (mount_setattr (AT_FDCWD, op->dest, AT_RECURSIVE, &attr, sizeof attr) != 0)
          die_errno (EXIT_SETUP, "cannot set the flags of the tree", op->dest, errno);
      }
      break;

    case OP_PIN:
      {
        struct stat st;

        /* Every folder between the workspace and a protected path becomes a
         * mount point: the kernel refuses to rename or remove one (EBUSY),
         * so `mv .git .git.old` cannot move .git/hooks out of the way and
         * put a writable one in its place. A symlink or a file is left
         * alone (the protected path below it then does not exist as such). */
        if (lstat (op->dest, &st) != 0 || !S_ISDIR (st.st_mode))
          break;
        if (mount (op->dest, op->dest, NULL, MS_BIND, NULL) != 0)
          die_errno (EXIT_SETUP, "cannot pin", op->dest, errno);
      }
      break;

    case OP_PROTECT:
      {
        /* Pid 1 is single-threaded (paddock-sandbox-private.h): realpath and g_strdup
         * are fine here. Nothing else runs in the namespace yet, so what
         * lstat saw is what gets mounted. */
        char resolved[PATH_BUF];
        const char *target = op->dest;
        struct stat st;

        if (lstat (op->dest, &st) != 0)
          {
            if (errno == ENOENT || errno == ENOTDIR)
              break;
            die_errno (EXIT_SETUP, "cannot look at the protected path", op->dest, errno);
          }
        if (S_ISLNK (st.st_mode))
          {
            /* git follows it: protect what it points at, when that is in
             * the workspace; anything else is reported, not hidden. */
            if (realpath (op->dest, resolved) == NULL || !paddock_path_is_within (resolved, op->source) ||
                strlen (resolved) <= strlen (op->source) || stat (resolved, &st) != 0)
              {
                if (cfg->found->n_protected_skipped < MAX_PROTECT)
                  cfg->found->protected_skipped[cfg->found->n_protected_skipped++] = op->data;
                break;
              }
            target = resolved;
          }
        if (!S_ISDIR (st.st_mode) && !S_ISREG (st.st_mode))
          {
            if (cfg->found->n_protected_skipped < MAX_PROTECT)
              cfg->found->protected_skipped[cfg->found->n_protected_skipped++] = op->data;
            break;
          }
        {
          SetupOp bind = { .type = OP_BIND_RO, .source = target, .dest = target };

          bind_mount (cfg, &bind, MS_RDONLY | MS_NOSUID | MS_NODEV);
        }
        if (cfg->found->n_protected_mounted < MAX_PROTECT)
          cfg->found->protected_mounted[cfg->found->n_protected_mounted++] =
            target == op->dest ? op->data : g_strdup (resolved + strlen ("/newroot"));
      }
      break;

    case OP_REMOUNT_RO:
      if (mount (NULL, op->dest, NULL,
                 MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV |
                 locked_flags_of (op->dest), NULL) != 0)
        die_errno (EXIT_SETUP, "cannot remount read-only", op->dest, errno);
      break;

    default:
      g_assert_not_reached ();
    }
}
