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
 * "exited" or "stopped", which a restarted daemon must list as such), the
 * news waits for the flush. What is left to the thread alone is a safe
 * session's "running", whose loss costs nothing: the sandbox dies with
 * the daemon.
 *
 * Those flushes do not block the main loop (an fsync is 1-5 ms here, more
 * on a busy disk, and the loop relays every session's terminal):
 * paddock_record_writer_flush_async() queues a barrier behind the writes
 * asked for so far, and its callback runs on the caller's main context
 * once the thread reached it; the news goes out from there. The blocking
 * flush is left to where nothing else is served any more (the daemon's
 * shutdown) or to rare paths (a start that failed): it waits for barriers
 * as for writes, so no write is lost to a shutdown; a callback whose
 * context never runs again is simply not called.
 */

#include "config.h"

#include "paddock-record-writer.h"

#include "paddock-durable-file.h"
#include "paddock-test-hold.h"

/* A write of PATH, or (path NULL) a barrier: the task of a flush_async,
 * returned once the thread gets to it, unless cancelled first. */
typedef struct
{
  char    *path;
  char    *contents;
  guint64  generation;
  GTask   *task;
  gulong   cancelled_id;
  gboolean returned;   /* under the lock: the task got its answer */
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
  g_clear_object (&write->task);
  g_free (write);
}

/* Whoever answers the barrier's task first: the thread reaching it, or its
 * cancellable. Returns whether that is the caller (who then returns it,
 * outside the lock: a callback may run at once and queue more). */
static gboolean
barrier_claim (RecordWrite *barrier)
{
  gboolean claimed;

  g_mutex_lock (&lock);
  claimed = !barrier->returned;
  barrier->returned = TRUE;
  g_mutex_unlock (&lock);
  return claimed;
}

static void
barrier_cancelled_cb (GCancellable *cancellable,
                      gpointer      user_data)
{
  RecordWrite *barrier = user_data;

  if (barrier_claim (barrier))
    g_task_return_error_if_cancelled (barrier->task);
}

static void
reach_barrier (RecordWrite *barrier)
{
  if (barrier_claim (barrier))
    g_task_return_boolean (barrier->task, TRUE);
  /* Waits for a handler running on another thread: the barrier is freed
   * after. */
  if (barrier->cancelled_id != 0)
    g_cancellable_disconnect (g_task_get_cancellable (barrier->task), barrier->cancelled_id);
}

static void
write_record (gpointer data,
              gpointer user_data)
{
  RecordWrite *write = data;
  const guint64 *newest;
  gboolean superseded;

  if (write->path == NULL)
    {
      reach_barrier (write);
      g_mutex_lock (&lock);
      pending--;
      if (pending == 0)
        g_cond_broadcast (&drained);
      g_mutex_unlock (&lock);
      record_write_free (write);
      return;
    }

  g_mutex_lock (&lock);
  newest = g_hash_table_lookup (latest, write->path);
  superseded = newest != NULL && *newest != write->generation;
  g_mutex_unlock (&lock);

  if (!superseded)
    {
      g_autoptr(GError) error = NULL;

      /* As a stuck disk would: a test looks at the daemon while a
       * record is not on disk yet. */
      paddock_test_hold ("PADDOCK_TEST_RECORD_WRITE_HOLD", "the write of %s", write->path);
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

static void
ensure_pool_locked (void)
{
  if (pool == NULL)
    {
      g_autoptr(GError) error = NULL;

      latest = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      /* One thread, not exclusive: it goes back to GLib's shared threads
       * when the queue is empty. Its queue is first in, first out. */
      pool = g_thread_pool_new (write_record, NULL, 1, FALSE, &error);
      g_assert_no_error (error);
    }
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
  ensure_pool_locked ();
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

/* Calls CALLBACK on the caller's thread-default main context once every
 * write asked for before this call is on disk (or failed, and said so);
 * the writer's thread goes on meanwhile, and so does the caller. Callbacks
 * come in the order of the calls. A cancelled flush answers
 * G_IO_ERROR_CANCELLED at once; the writes go on regardless. */
void
paddock_record_writer_flush_async (GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  RecordWrite *barrier = g_new0 (RecordWrite, 1);

  barrier->task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (barrier->task, paddock_record_writer_flush_async);
  g_task_set_name (barrier->task, "[paddock] record flush");

  /* May answer at once, if already cancelled: the barrier is queued all
   * the same, and the thread finds it answered. */
  if (cancellable != NULL)
    barrier->cancelled_id = g_cancellable_connect (cancellable, G_CALLBACK (barrier_cancelled_cb),
                                                   barrier, NULL);

  g_mutex_lock (&lock);
  ensure_pool_locked ();
  pending++;
  g_mutex_unlock (&lock);

  g_thread_pool_push (pool, barrier, NULL);
}

gboolean
paddock_record_writer_flush_finish (GAsyncResult  *result,
                                    GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == paddock_record_writer_flush_async, FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

typedef struct
{
  GWeakRef                object;
  GCancellable           *cancellable;
  PaddockRecordWriterStep step;
  guint                   arg;
} DurableWait;

static void
durable_wait_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  DurableWait *wait = user_data;
  g_autoptr(GObject) object = g_weak_ref_get (&wait->object);
  g_autoptr(GError) error = NULL;

  /* Not when the object went (or is going) away meanwhile: the daemon's
   * shutdown flushed the records, and there is no one left to tell. */
  if (paddock_record_writer_flush_finish (result, &error) && object != NULL &&
      !g_cancellable_is_cancelled (wait->cancellable))
    wait->step (object, wait->arg);

  g_weak_ref_clear (&wait->object);
  g_clear_object (&wait->cancellable);
  g_free (wait);
}

/**
 * paddock_record_writer_when_durable:
 * @object: (type GObject): held weakly
 * @cancellable: cancelled when @object goes away: the step is not taken
 *
 * Calls STEP (OBJECT, ARG) from the main loop once every record write
 * asked for so far (OBJECT's and any other's) is on disk, without waiting
 * for it here. Steps come in the order they were asked for.
 */
void
paddock_record_writer_when_durable (gpointer                 object,
                                    GCancellable            *cancellable,
                                    PaddockRecordWriterStep  step,
                                    guint                    arg)
{
  DurableWait *wait = g_new0 (DurableWait, 1);

  g_return_if_fail (G_IS_OBJECT (object));
  g_return_if_fail (G_IS_CANCELLABLE (cancellable));

  g_weak_ref_init (&wait->object, object);
  wait->cancellable = g_object_ref (cancellable);
  wait->step = step;
  wait->arg = arg;
  paddock_record_writer_flush_async (cancellable, durable_wait_cb, wait);
}
