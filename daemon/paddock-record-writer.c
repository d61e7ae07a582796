/* paddock-record-writer.c — session records written durably, off the main thread
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A session's record (session.json) is replaced durably on every change of
 * state: temp file, fsync, rename, fsync of the folder. On this machine's
 * disk that is 1-5 ms, and done on the main thread it held up whatever
 * came next — the Attach that follows a CreateSession, or another
 * session's output. Here the writes go to one worker thread, in the order
 * they were asked for (one thread: a later state of a record can never be
 * overtaken by an earlier one), and a write that a newer one of the same
 * file replaces before it started is skipped: the newer one says more.
 *
 * What a crash can lose: the last state changes of the few milliseconds
 * before it, never a record's existence past the next flush. Whoever
 * deletes a session's folder flushes first (a queued write would recreate
 * a file in it), and the daemon flushes before it lets go of its state
 * folder. Where a record must be on disk before a client is told (a host
 * session's start, as the agent outlives the daemon; a session's end,
 * "exited" or "stopped", which a restarted daemon must list as such), its
 * writer flushes before the news can go out. What is left to the thread
 * alone is a safe session's "running", whose loss costs nothing: the
 * sandbox dies with the daemon.
 */

#include "config.h"

#include "paddock-record-writer.h"

#include "paddock-durable-file.h"

typedef struct
{
  char   *path;
  char   *contents;
  guint64 generation;
} RecordWrite;

static GMutex lock;
static GCond drained;
static guint pending;                 /* queued or being written */
static GHashTable *latest;            /* path → newest generation asked for */
static guint64 next_generation;
static GThreadPool *pool;

static void
record_write_free (RecordWrite *write)
{
  g_free (write->path);
  g_free (write->contents);
  g_free (write);
}

static void
write_record (gpointer data,
              gpointer user_data)
{
  RecordWrite *write = data;
  const guint64 *newest;
  gboolean superseded;

  g_mutex_lock (&lock);
  newest = g_hash_table_lookup (latest, write->path);
  superseded = newest != NULL && *newest != write->generation;
  g_mutex_unlock (&lock);

  if (!superseded)
    {
      g_autoptr(GError) error = NULL;

      if (!paddock_durable_file_replace (write->path, write->contents, -1, 0600, &error))
        g_message ("Could not save %s: %s", write->path, error->message);
    }

  g_mutex_lock (&lock);
  newest = g_hash_table_lookup (latest, write->path);
  if (newest != NULL && *newest == write->generation)
    g_hash_table_remove (latest, write->path);
  pending--;
  if (pending == 0)
    g_cond_broadcast (&drained);
  g_mutex_unlock (&lock);

  record_write_free (write);
}

/* Replaces the file at PATH with CONTENTS (taken) durably, soon, on the
 * writer's thread. */
void
paddock_record_writer_replace (const char *path,
                               char       *contents)
{
  RecordWrite *write = g_new0 (RecordWrite, 1);
  guint64 *generation = g_new (guint64, 1);

  write->path = g_strdup (path);
  write->contents = contents;

  g_mutex_lock (&lock);
  if (pool == NULL)
    {
      g_autoptr(GError) error = NULL;

      latest = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      /* One thread, not exclusive: it goes back to GLib's shared threads
       * when the queue is empty. */
      pool = g_thread_pool_new (write_record, NULL, 1, FALSE, &error);
      g_assert_no_error (error);
    }
  write->generation = *generation = ++next_generation;
  g_hash_table_replace (latest, g_strdup (path), generation);
  pending++;
  g_mutex_unlock (&lock);

  g_thread_pool_push (pool, write, NULL);
}

/* Returns once every write asked for so far is on disk (or failed, and
 * said so). */
void
paddock_record_writer_flush (void)
{
  g_mutex_lock (&lock);
  while (pending > 0)
    g_cond_wait (&drained, &lock);
  g_mutex_unlock (&lock);
}
