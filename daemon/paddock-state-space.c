/* paddock-state-space.c — whether the state dir's filesystem has room to write
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A daemon whose state dir is full still starts and serves what only
 * reads (list, status, review, logs); what must write first (a new
 * session, a lease) is refused with org.paddock.Error.NoSpace naming the
 * full filesystem. Nothing is cached: every check asks statvfs() again,
 * so the first call after space was freed succeeds.
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "paddock-error.h"
#include "paddock-state-space.h"

static char *state_dir;
/* The last answer, only to log each change once (not every refused call). */
static gboolean was_read_only;

/* The mount point holding @path: the last folder up from it on the same
 * device. Only for messages; @path itself when that cannot be told. */
static char *
mount_point_of (const char *path)
{
  g_autofree char *current = g_canonicalize_filename (path, NULL);
  struct stat st;

  if (stat (current, &st) != 0)
    return g_steal_pointer (&current);

  while (strcmp (current, "/") != 0)
    {
      g_autofree char *parent = g_path_get_dirname (current);
      struct stat parent_st;

      if (stat (parent, &parent_st) != 0 || parent_st.st_dev != st.st_dev)
        break;
      g_free (current);
      current = g_steal_pointer (&parent);
    }

  return g_steal_pointer (&current);
}

void
paddock_state_space_init (const char *dir)
{
  g_return_if_fail (dir != NULL);

  g_free (state_dir);
  state_dir = g_strdup (dir);
  was_read_only = FALSE;
}

/* FALSE with @error set (PADDOCK_ERROR_NO_SPACE) when the state dir's
 * filesystem has less than PADDOCK_STATE_SPACE_MIN_FREE bytes (or no
 * inode) left for us. A filesystem that cannot be asked is not called
 * full: the write itself then fails with its own error. */
gboolean
paddock_state_space_check_writable (GError **error)
{
  struct statvfs st;
  guint64 free_bytes;
  gboolean read_only;

  if (state_dir == NULL || statvfs (state_dir, &st) != 0)
    return TRUE;

  free_bytes = (guint64) st.f_bavail * (guint64) st.f_frsize;
  /* f_files == 0: the filesystem does not count inodes (e.g. btrfs). */
  read_only = free_bytes < PADDOCK_STATE_SPACE_MIN_FREE || (st.f_files > 0 && st.f_favail == 0);

  if (read_only != was_read_only)
    {
      g_autofree char *mount = mount_point_of (state_dir);

      if (read_only)
        g_message ("No space left on %s (the state dir %s, %" G_GUINT64_FORMAT " bytes free): "
                   "read-only until space is freed; new sessions and leases are refused",
                   mount, state_dir, free_bytes);
      else
        g_message ("Space is back on %s (the state dir %s): writable again", mount, state_dir);
      was_read_only = read_only;
    }

  if (read_only)
    {
      g_autofree char *mount = mount_point_of (state_dir);

      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NO_SPACE,
                   "No space left on %s (the state dir %s): the daemon is read-only until "
                   "space is freed", mount, state_dir);
      return FALSE;
    }

  return TRUE;
}

/* "writable", or "read-only: no space left on MOUNT" (GetInfo's "state"). */
char *
paddock_state_space_describe (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *mount = NULL;

  if (paddock_state_space_check_writable (&error))
    return g_strdup ("writable");

  mount = mount_point_of (state_dir);
  return g_strdup_printf ("read-only: no space left on %s", mount);
}
