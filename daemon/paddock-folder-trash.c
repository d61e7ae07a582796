/* paddock-folder-trash.c — a destroyed session's folder, moved aside at once and removed by a worker
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A session's folder holds its stage: an agent's `npm install` leaves a
 * hundred thousand files there, and removing them takes seconds. Removed
 * on the main thread, that held Destroy's answer and every other
 * session's calls and terminals meanwhile. So Destroy moves the folder
 * into the state dir's trash (one rename(): from then on it is no
 * session's, and no daemon lists it), answers, and a worker thread
 * removes it. What a daemon killed meanwhile left in the trash, the next
 * one removes (paddock_folder_trash_empty() at its start).
 *
 * The trash is beside the sessions folder, never in it: the restore
 * lists every folder there that has a record.
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>

#include <gio/gio.h>

#include "paddock-durable-file.h"
#include "paddock-folder-trash.h"
#include "paddock-test-hold.h"

/* One worker: removals take turns rather than both cores. n_queued
 * (under the lock) counts those not done; done_cond says one is. */
static GThreadPool *removals;
static guint n_queued;
static GCond done_cond;
static guint discard_count;
G_LOCK_DEFINE_STATIC (removals);

static void
remove_in_worker (gpointer data,
                  gpointer unused)
{
  g_autofree char *path = data;

  /* As a slow disk would: a test sees the daemon answer meanwhile. */
  paddock_test_hold ("PADDOCK_TEST_TRASH_HOLD", "the removal of %s", path);
  paddock_remove_tree (path);

  G_LOCK (removals);
  n_queued--;
  g_cond_broadcast (&done_cond);
  G_UNLOCK (removals);
}

static void
queue_removal (char *path)
{
  G_LOCK (removals);
  if (removals == NULL)
    removals = g_thread_pool_new (remove_in_worker, NULL, 1, FALSE, NULL);
  n_queued++;
  G_UNLOCK (removals);

  /* Not exclusive: the pool's thread can always be made (or, failing
   * that, the removal runs when one can); a daemon that quits meanwhile
   * leaves the rest to the next one. */
  g_thread_pool_push (removals, path, NULL);
}

/* The trash of @state_dir: STATE/trash. */
char *
paddock_folder_trash_dir (const char *state_dir)
{
  g_return_val_if_fail (state_dir != NULL, NULL);

  return g_build_filename (state_dir, "trash", NULL);
}

/* The trash of the state dir whose session folder is @session_dir
 * (STATE/sessions/ID). */
char *
paddock_folder_trash_dir_for_session (const char *session_dir)
{
  g_autofree char *sessions_dir = NULL;
  g_autofree char *state_dir = NULL;

  g_return_val_if_fail (session_dir != NULL, NULL);

  sessions_dir = g_path_get_dirname (session_dir);
  state_dir = g_path_get_dirname (sessions_dir);
  return paddock_folder_trash_dir (state_dir);
}

/**
 * paddock_folder_trash_discard:
 * @trash_dir: the trash, on the same file system as @folder (made, 0700, if missing)
 * @folder: what goes
 * @error: (out) (nullable): set when FALSE
 *
 * Moves @folder into @trash_dir under a name of its own and queues its
 * removal. FALSE (and @error) when it could not be moved: @folder is
 * where it was, for the caller to remove itself.
 */
gboolean
paddock_folder_trash_discard (const char  *trash_dir,
                              const char  *folder,
                              GError     **error)
{
  g_autofree char *base = NULL;
  g_autofree char *name = NULL;
  g_autofree char *dest = NULL;
  guint count;

  g_return_val_if_fail (trash_dir != NULL, FALSE);
  g_return_val_if_fail (folder != NULL, FALSE);

  if (!paddock_ensure_private_dir (trash_dir, error))
    return FALSE;
  base = g_path_get_basename (folder);
  count = g_atomic_int_add (&discard_count, 1);
  /* Unique within this daemon (the count) and across daemons (the time). */
  name = g_strdup_printf ("%s.%" G_GINT64_FORMAT ".%u", base, g_get_real_time (), count);
  dest = g_build_filename (trash_dir, name, NULL);
  if (rename (folder, dest) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno), "Cannot move %s into %s: %s",
                   folder, trash_dir, g_strerror (saved_errno));
      return FALSE;
    }
  queue_removal (g_steal_pointer (&dest));
  return TRUE;
}

/* Queues the removal of whatever @trash_dir holds: what an earlier daemon
 * moved there and did not get to remove. */
void
paddock_folder_trash_empty (const char *trash_dir)
{
  g_autoptr(GDir) dir = NULL;
  const char *entry;

  g_return_if_fail (trash_dir != NULL);

  dir = g_dir_open (trash_dir, 0, NULL);
  while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
    queue_removal (g_build_filename (trash_dir, entry, NULL));
}

/* Waits (at most @timeout_us) for the removals queued to be done: a
 * daemon that quits leaves nothing behind it can remove in that time,
 * and what is left the next one removes. Whether none is left. */
gboolean
paddock_folder_trash_drain (gint64 timeout_us)
{
  gint64 deadline = g_get_monotonic_time () + timeout_us;
  gboolean drained;

  G_LOCK (removals);
  if (n_queued == 1)
    g_message ("Waiting for a destroyed session's folder to be removed (%" G_GINT64_FORMAT " ms at most)",
               timeout_us / 1000);
  else if (n_queued > 1)
    g_message ("Waiting for %u destroyed sessions' folders to be removed (%" G_GINT64_FORMAT " ms at most)",
               n_queued, timeout_us / 1000);
  while (n_queued > 0 && g_cond_wait_until (&done_cond, &G_LOCK_NAME (removals), deadline))
    ;
  drained = n_queued == 0;
  G_UNLOCK (removals);

  return drained;
}
