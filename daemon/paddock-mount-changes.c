/* paddock-mount-changes.c — which mounts changed between two looks at a mount table
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A sandbox made ahead (paddock-spare-sandbox.c) holds a copy of the
 * daemon's mounts from when it was made. Any mount or unmount anywhere on
 * the host since (a container started, a disk plugged in, another user's
 * session) changes the daemon's table, but only one on the way to a path
 * the view shows, or below one, makes the copy show something other than
 * a sandbox made now would: the view's binds are not recursive, so a
 * mount elsewhere is in neither. This tells the two apart, from the text
 * of /proc/self/mountinfo (proc(5)) read then and now.
 */

#include "config.h"

#include "paddock-mount-changes.h"

#include <stdlib.h>
#include <string.h>

#include "paddock-path.h"

/* The mount point (the fifth field) of a mountinfo line, its octal
 * escapes (\040 for a space, \011, \012, \134) undone as the
 * boundary's reading does (g_strcompress()); NULL for a line that has
 * none. */
static char *
mount_point_of (const char *line)
{
  g_auto(GStrv) fields = g_strsplit (line, " ", 6);
  char *point;

  if (g_strv_length (fields) < 6)
    return NULL;
  point = g_strcompress (fields[4]);
  if (point[0] != '/')
    g_clear_pointer (&point, g_free);
  return point;
}

static GHashTable *
lines_of (const char *text)
{
  GHashTable *lines = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  char **split = g_strsplit (text, "\n", -1);

  /* Each line the table's, the array then freed alone. */
  for (guint i = 0; split[i] != NULL; i++)
    {
      if (split[i][0] != '\0')
        g_hash_table_add (lines, split[i]);
      else
        g_free (split[i]);
    }
  g_free (split);
  return lines;
}

/* The mount point of a line of ONE that is not in OTHER (a mount made,
 * ended, or changed: its options, its propagation) at, above or below one
 * of PATHS, or NULL. */
static char *
first_affecting (GHashTable         *one,
                 GHashTable         *other,
                 const char * const *paths)
{
  GHashTableIter iter;
  gpointer line;

  g_hash_table_iter_init (&iter, one);
  while (g_hash_table_iter_next (&iter, &line, NULL))
    {
      g_autofree char *point = NULL;

      if (g_hash_table_contains (other, line))
        continue;
      point = mount_point_of (line);
      /* A line we cannot read could be anywhere. */
      if (point == NULL)
        return g_strdup ("(a line of the mount table without a mount point)");
      for (guint i = 0; paths[i] != NULL; i++)
        if (paddock_path_is_within (paths[i], point) || paddock_path_is_within (point, paths[i]))
          return g_steal_pointer (&point);
    }
  return NULL;
}

/**
 * paddock_mount_changes_find_affecting:
 * @before: a mount table (mountinfo's text) as it was
 * @after: the same table now
 * @paths: (array zero-terminated=1): absolute paths, without "." or ".."
 *   names (canonical: see paddock_mount_changes_add_paths_in())
 *
 * Compares the tables line by line (a line is one mount with its id,
 * parent, options and propagation): a mount made, ended or changed
 * affects a path when its mount point is that path, a folder above it
 * (what the path leads to may differ now), or below it (what is seen
 * through it may). Returns the mount point of the first change that
 * affects one of @paths, or %NULL when none does.
 */
char *
paddock_mount_changes_find_affecting (const char         *before,
                                      const char         *after,
                                      const char * const *paths)
{
  g_autoptr(GHashTable) then = lines_of (before);
  g_autoptr(GHashTable) now = lines_of (after);
  char *point = first_affecting (now, then, paths);

  return point != NULL ? point : first_affecting (then, now, paths);
}

static void
add_path (GPtrArray  *paths,
          const char *path)
{
  g_autofree char *canonical = g_canonicalize_filename (path, "/");
  g_autofree char *resolved = realpath (canonical, NULL);

  /* As written and as it resolves: a symlink on the way leads elsewhere,
   * whose mounts count as well. */
  g_ptr_array_add (paths, g_steal_pointer (&canonical));
  if (resolved != NULL)
    g_ptr_array_add (paths, g_steal_pointer (&resolved));
}

/**
 * paddock_mount_changes_add_paths_in:
 * @paths: (element-type utf8): where to add them
 * @text: an option of the helper's, or its value
 *
 * Adds every absolute path @text names to @paths: @text itself if it is
 * one, and what follows a ':' or '=' that starts one (as in "copy:/dir"
 * or "ro=/path"), both to the end of @text and to the next ':', since a
 * path may hold either. A superset on purpose: a path too many only makes
 * a spare be passed over; one missed would leave a session a stale view.
 * Each is added canonical (no ".", "..", or doubled '/') and, when it
 * exists, resolved through its symlinks.
 */
void
paddock_mount_changes_add_paths_in (GPtrArray  *paths,
                                    const char *text)
{
  for (const char *p = text; *p != '\0'; p++)
    {
      const char *colon;

      if (*p != '/' || (p != text && p[-1] != ':' && p[-1] != '='))
        continue;
      add_path (paths, p);
      colon = strchr (p, ':');
      if (colon != NULL)
        {
          g_autofree char *part = g_strndup (p, (gsize) (colon - p));
          add_path (paths, part);
        }
    }
}
