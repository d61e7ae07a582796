/* paddock-change-details.c — what apply will take for each review row: sizes, hard links, unappliable paths
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The review list says what changed; a user deciding whether to apply also
 * needs what it costs: `truncate -s 1G` is a "binary" row either way, but
 * 1 GiB apparent and 0 bytes allocated. Each row gets the stage side's
 * apparent and allocated size, the earlier row it is a hard link of (apply
 * links it instead of copying), and, for a row apply cannot take at all,
 * why — so that one such path leaves the rest of the session appliable.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "paddock-beneath.h"
#include "paddock-autofd.h"
#include "paddock-change.h"
#include "paddock-change-details.h"
#include "paddock-sparse-copy.h"

/* The names apply keeps for its temporaries (paddock-apply.c). */
#define TEMP_PREFIX ".paddock-apply-"

/* Why apply cannot take @path, or NULL. */
static const char *
unappliable_reason (const char *path)
{
  if (path == NULL)
    return NULL;
  /* Apply opens every entry by its path beneath the workspace, as the
   * kernel allows: at most PATH_MAX bytes (the D-Bus API takes no more). */
  if (strlen (path) >= PATH_MAX)
    return "path longer than PATH_MAX (4096 bytes)";
  /* Component by component, without splitting (one review may hold
   * 200,000 rows: no allocation per row). */
  for (const char *p = path; p != NULL; p = strchr (p, '/'), p = p != NULL ? p + 1 : NULL)
    if (g_str_has_prefix (p, TEMP_PREFIX))
      return "name reserved for Paddock's own temporary files";
  return NULL;
}

/**
 * paddock_change_details_fill:
 * @stage_fd: the stage's root folder
 * @changes: (element-type PaddockChange): the review rows, sorted by path
 *
 * Sets each row's details (paddock_change_set_details()). One lstat() per
 * row; the hard-link table holds only inodes with more than one name.
 */
gboolean
paddock_change_details_fill (int            stage_fd,
                             GPtrArray     *changes,
                             GCancellable  *cancellable,
                             GError       **error)
{
  g_autoptr(GHashTable) first_name = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  /* The folder of the last row, kept open for the next: rows are sorted,
   * so the files of one folder come one after another and each would
   * otherwise resolve the same folder again (an openat2 per row). */
  g_autofree char *dir = NULL;
  paddock_autofd int dir_fd = -1;

  for (guint i = 0; i < changes->len; i++)
    {
      PaddockChange *change = g_ptr_array_index (changes, i);
      const char *path = paddock_change_get_path (change);
      const char *reason = unappliable_reason (path);
      const char *link_of = NULL;
      guint64 size = 0, allocated = 0;

      if (reason == NULL)
        reason = unappliable_reason (paddock_change_get_old_path (change));

      if ((i & 1023) == 0 && g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;

      if (paddock_change_get_entry_type (change) == PADDOCK_ENTRY_TYPE_FILE ||
          paddock_change_get_entry_type (change) == PADDOCK_ENTRY_TYPE_SYMLINK)
        {
          const char *slash = strrchr (path, '/');
          gsize len = slash != NULL ? (gsize) (slash - path) : 0;
          const char *base = slash != NULL ? slash + 1 : path;
          struct stat st;

          if (dir == NULL || strlen (dir) != len || strncmp (dir, path, len) != 0)
            {
              g_free (dir);
              paddock_close_fd (&dir_fd);
              dir = g_strndup (path, len);
              dir_fd = len == 0 ? fcntl (stage_fd, F_DUPFD_CLOEXEC, 3)
                                : paddock_open_beneath (stage_fd, dir, O_PATH | O_DIRECTORY);
            }

          if (dir_fd >= 0 && fstatat (dir_fd, base, &st, AT_SYMLINK_NOFOLLOW) == 0)
            {
              size = (guint64) st.st_size;
              allocated = paddock_allocated_bytes (&st);
              if (S_ISREG (st.st_mode) && st.st_nlink > 1 && reason == NULL)
                {
                  gint64 key = (gint64) st.st_ino;

                  link_of = g_hash_table_lookup (first_name, &key);
                  if (link_of == NULL)
                    g_hash_table_insert (first_name, g_memdup2 (&key, sizeof key), (gpointer) path);
                }
            }
        }
      paddock_change_set_details (change, size, allocated, link_of, reason);
    }
  return TRUE;
}
