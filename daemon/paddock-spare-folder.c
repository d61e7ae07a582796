/* paddock-spare-folder.c — the next safe session's folder, made ahead of time
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A safe session's folder is four or five folders (the session's, home/,
 * stage/ and, for an overlay stage, stage/upper/ and stage/work/): each a
 * new inode, and on an ext4 state folder that sees many files come and go
 * the inode allocator's search (recently_deleted()) made them ~1 ms of the
 * daemon's CPU on the path to the agent's first byte. So one such folder
 * is kept ready under a name no session has (sessions/.spare: session ids
 * are hex), made on a thread of its own after each safe start (none at
 * the daemon's start: the first safe session makes its own), and a new
 * session takes it with one rename(). The daemon's restore skips it (it
 * holds no session.json), and a later daemon removes it as it starts
 * (paddock_manager_impl_new(): it may be for another kind of stage).
 *
 * Whoever takes it still makes whatever is missing (the daemon may have
 * died while making it), as it would without one: the spare is only a
 * head start, never the only way to a folder.
 */

#include "config.h"

#include "paddock-spare-folder.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

struct _PaddockSpareFolder
{
  char     *path;
  gboolean  overlay;
  GThread  *maker;       /* the last refill's thread, joined before the next */
  gint      making;      /* atomic: a refill is under way */
};

PaddockSpareFolder *
paddock_spare_folder_new (const char *path,
                          gboolean    overlay)
{
  PaddockSpareFolder *self = g_new0 (PaddockSpareFolder, 1);

  self->path = g_strdup (path);
  self->overlay = overlay;
  return self;
}

static gpointer
make_spare (gpointer data)
{
  PaddockSpareFolder *self = data;
  const char *const parts[] = { "", "home", "stage", "stage/upper", "stage/work" };
  guint n_parts = self->overlay ? G_N_ELEMENTS (parts) : 3;

  /* Folder by folder, stopping at the first failure: if a session took
   * the folder meanwhile, nothing lands in it (paths, not descriptors). */
  for (guint i = 0; i < n_parts; i++)
    {
      g_autofree char *dir = g_build_filename (self->path, parts[i], NULL);

      if (mkdir (dir, 0700) != 0 && errno != EEXIST)
        break;
    }

  g_atomic_int_set (&self->making, 0);
  return NULL;
}

/* Starts making the spare folder, unless that is already under way. */
void
paddock_spare_folder_refill (PaddockSpareFolder *self)
{
  g_return_if_fail (self != NULL);

  if (!g_atomic_int_compare_and_exchange (&self->making, 0, 1))
    return;
  /* Done (making was 0), so this returns at once. */
  g_clear_pointer (&self->maker, g_thread_join);
  self->maker = g_thread_new ("paddock-spare", make_spare, self);
}

/* Renames the spare folder to DEST (which must not exist). FALSE when
 * there is none ready: the caller makes DEST itself. */
gboolean
paddock_spare_folder_take (PaddockSpareFolder *self,
                           const char         *dest)
{
  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (dest != NULL, FALSE);

  /* Not while it is being made: the caller would only wait for it. */
  if (g_atomic_int_get (&self->making))
    return FALSE;
  return rename (self->path, dest) == 0;
}

void
paddock_spare_folder_free (PaddockSpareFolder *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->maker, g_thread_join);
  g_free (self->path);
  g_free (self);
}
