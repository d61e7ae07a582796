/* paddock-registry-commit.c — group commit: leases asked for together share one fdatasync
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A lease is answered only once its journal line is on disk. Done one by
 * one on the main thread, every lease waits for its own fdatasync and
 * nothing else happens meanwhile (issue #23: 20 racing clients got 0.4–0.6×
 * portserver's rate). Here a lease takes its port at once (bound, counted
 * against the quotas, never handed out twice) but stays off the list; its
 * line joins a queue. One writer thread at a time writes the queue and
 * fdatasyncs it; leases asked for while it runs wait in the next batch.
 * When a batch's sync returns, its leases are listed, announced and
 * answered; when it fails, they are closed and refused. Nothing is answered
 * or announced before the sync that covers it.
 *
 * Every other (synchronous) journal write first waits for the writer
 * (_paddock_registry_commit_join), so the journal has one writer at a time
 * and its lines stay in the order the model changed.
 */

#include "config.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paddock-lease-private.h"
#include "paddock-registry-private.h"

/* What the writer thread gets and gives back: it touches nothing else. */
typedef struct _PaddockJournalJob
{
  int      fd;
  GString *lines;
  guint    n_lines;
  int      saved_errno;   /* 0: written and synced */
  gboolean undo_failed;   /* the journal may end in a torn line */
  off_t    end;           /* where the batch began */
  gboolean done;          /* set by the writer thread, under writer_lock */
  guint    generation;
  GMainContext *context;
} PaddockJournalJob;

typedef struct
{
  PaddockRegistry   *self;
  guint              generation;
} WriterDone;

static void
pending_free (PaddockPendingLeases *entry)
{
  g_clear_object (&entry->task);
  g_clear_pointer (&entry->leases, g_ptr_array_unref);
  g_clear_error (&entry->error);
  g_free (entry);
}

static void
job_free (PaddockJournalJob *job)
{
  g_string_free (job->lines, TRUE);
  g_free (job);
}

void
_paddock_registry_commit_init (PaddockRegistry *self)
{
  self->pending = g_ptr_array_new_with_free_func ((GDestroyNotify) pending_free);
  self->queued_lines = g_string_new (NULL);
  g_mutex_init (&self->writer_lock);
  g_cond_init (&self->writer_cond);
}

/* Dispose: a batch in flight finishes (its task refs keep the registry
 * alive until it is answered, so only a forced dispose gets here with one). */
void
_paddock_registry_commit_clear (PaddockRegistry *self)
{
  _paddock_registry_commit_join (self);
  if (self->writer != NULL)
    {
      g_mutex_lock (&self->writer_lock);
      self->writer_quit = TRUE;
      g_cond_broadcast (&self->writer_cond);
      g_mutex_unlock (&self->writer_lock);
      g_thread_join (g_steal_pointer (&self->writer));
    }
  g_clear_handle_id (&self->complete_id, g_source_remove);
  if (self->pending != NULL)
    for (guint i = 0; i < self->pending->len; i++)
      {
        PaddockPendingLeases *entry = g_ptr_array_index (self->pending, i);

        for (guint j = 0; j < entry->leases->len; j++)
          _paddock_lease_close_sockets (g_ptr_array_index (entry->leases, j));
      }
  g_clear_pointer (&self->pending, g_ptr_array_unref);
  if (self->queued_lines != NULL)
    g_string_free (g_steal_pointer (&self->queued_lines), TRUE);
  g_clear_pointer (&self->context, g_main_context_unref);
}

/* Append, fdatasync, and on failure cut the journal back to where this
 * batch began (see journal_undo in the store). */
static void
write_job (PaddockJournalJob *job)
{
  off_t end = lseek (job->fd, 0, SEEK_END);
  gsize written = 0;

  job->end = end;
  while (written < job->lines->len && job->saved_errno == 0)
    {
      gssize n = write (job->fd, job->lines->str + written, job->lines->len - written);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        job->saved_errno = errno;
      else
        written += (gsize) n;
    }
  if (job->saved_errno == 0 && fdatasync (job->fd) != 0)
    job->saved_errno = errno;
  if (job->saved_errno != 0 &&
      (end < 0 || ftruncate (job->fd, end) != 0 || fdatasync (job->fd) != 0))
    job->undo_failed = TRUE;
}

static gboolean writer_done_cb (gpointer data);
static void     writer_done_free (gpointer data);

/* The writer thread: one batch at a time, for the registry's life. It
 * touches only the job (and the lock); the registry outlives it, since
 * dispose stops and joins it. */
static gpointer
writer_main (gpointer data)
{
  PaddockRegistry *self = data;

  g_mutex_lock (&self->writer_lock);
  for (;;)
    {
      PaddockJournalJob *job;
      WriterDone *done;
      GSource *source;

      while (!self->writer_quit && (self->writer_job == NULL || self->writer_job->done))
        g_cond_wait (&self->writer_cond, &self->writer_lock);
      if (self->writer_quit)
        break;
      job = self->writer_job;
      g_mutex_unlock (&self->writer_lock);

      write_job (job);

      /* Told before it is marked done, so a join cannot finish the
       * registry's dispose while this still refs it. */
      done = g_new0 (WriterDone, 1);
      done->self = g_object_ref (self);
      done->generation = job->generation;
      /* An idle, never g_main_context_invoke(): that runs the callback
       * right here when nobody iterates the context at that moment. */
      source = g_idle_source_new ();
      g_source_set_priority (source, G_PRIORITY_DEFAULT);
      g_source_set_callback (source, writer_done_cb, done, writer_done_free);
      g_source_set_static_name (source, "[paddock] journal batch synced");
      g_source_attach (source, job->context);
      g_source_unref (source);

      g_mutex_lock (&self->writer_lock);
      job->done = TRUE;
      g_cond_broadcast (&self->writer_cond);
    }
  g_mutex_unlock (&self->writer_lock);
  return NULL;
}

static void set_state (PaddockRegistry *self, PaddockPendingState from, PaddockPendingState to, const GError *error);
static void schedule_complete (PaddockRegistry *self);

/* Waits for the batch in flight, if any, and applies its outcome to the
 * journal's bookkeeping and to its leases (durable or failed). Does not
 * answer anyone (that is complete(), from an idle) and starts nothing. */
void
_paddock_registry_commit_join (PaddockRegistry *self)
{
  PaddockJournalJob *job;

  if (self->writer_job == NULL)
    return;

  g_mutex_lock (&self->writer_lock);
  while (!self->writer_job->done)
    g_cond_wait (&self->writer_cond, &self->writer_lock);
  job = g_steal_pointer (&self->writer_job);
  g_mutex_unlock (&self->writer_lock);
  self->writer_generation++;

  if (job->saved_errno == 0)
    {
      self->journal_entries += job->n_lines;
      if (job->end >= 0)
        self->journal_whole_end = job->end + (off_t) job->lines->len;
      _paddock_registry_journal_reserve (self);
      set_state (self, PADDOCK_PENDING_WRITING, PADDOCK_PENDING_DURABLE, NULL);
    }
  else
    {
      g_autoptr(GError) error = g_error_new (PADDOCK_REGISTRY_ERROR,
                                             _paddock_registry_code_for_errno (job->saved_errno),
                                             "Could not save the lease state: %s",
                                             g_strerror (job->saved_errno));

      if (job->undo_failed)
        self->journal_dirty = TRUE;
      if (job->end >= 0)
        self->journal_whole_end = job->end;
      /* The cut back freed the reserve beyond it. */
      self->journal_reserved_to = 0;
      _paddock_registry_journal_reserve (self);
      set_state (self, PADDOCK_PENDING_WRITING, PADDOCK_PENDING_FAILED, error);
    }
  job_free (job);
  schedule_complete (self);
}

static void
set_state (PaddockRegistry     *self,
           PaddockPendingState  from,
           PaddockPendingState  to,
           const GError        *error)
{
  for (guint i = 0; i < self->pending->len; i++)
    {
      PaddockPendingLeases *entry = g_ptr_array_index (self->pending, i);

      if (entry->state != from)
        continue;
      entry->state = to;
      if (error != NULL)
        entry->error = g_error_copy (error);
    }
}

static void kick (PaddockRegistry *self);

/* Lists and answers every settled batch, in the order asked; releases
 * again what was abandoned or cancelled meanwhile; then starts the next
 * batch. Answers go last: a caller's callback may call the registry. */
static void maybe_compact (PaddockRegistry *self);

static int
compare_ports (gconstpointer a,
               gconstpointer b)
{
  return (int) paddock_lease_get_port (*(PaddockLease * const *) a) -
         (int) paddock_lease_get_port (*(PaddockLease * const *) b);
}

/* Lists @leases (borrowed) and announces them, one items-changed per run
 * of them that ends up side by side (ports from the pool's cursor mostly
 * are): each is one LeasesChanged on the bus, which profiling showed
 * costs more than the rest of a lease. Runs go in ascending position and
 * each is announced before the next is listed, so a listener applying
 * them in turn mirrors the list. */
static void
announce (PaddockRegistry *self,
          GPtrArray       *leases)
{
  guint start = 0;
  guint length = 0;

  g_ptr_array_sort (leases, compare_ports);
  for (guint i = 0; i < leases->len; i++)
    {
      PaddockLease *lease = g_ptr_array_index (leases, i);
      guint index;

      /* Sorted: this one goes right after the run unless a listed lease
       * lies between them; then the run is announced first. */
      if (length > 0 && start + length < self->leases->len &&
          paddock_lease_get_port (g_ptr_array_index (self->leases, start + length)) <
            paddock_lease_get_port (lease))
        {
          g_list_model_items_changed (G_LIST_MODEL (self), start, 0, length);
          length = 0;
        }
      index = _paddock_registry_list_lease (self, lease);
      if (length == 0)
        start = index;
      length++;
    }
  if (length > 0)
    g_list_model_items_changed (G_LIST_MODEL (self), start, 0, length);
}

static void
complete (PaddockRegistry *self)
{
  g_autoptr(GPtrArray) settled = g_ptr_array_new_with_free_func ((GDestroyNotify) pending_free);
  g_autoptr(GPtrArray) to_list = g_ptr_array_new ();

  for (guint i = 0; i < self->pending->len;)
    {
      PaddockPendingLeases *entry = g_ptr_array_index (self->pending, i);

      if (entry->state == PADDOCK_PENDING_DURABLE || entry->state == PADDOCK_PENDING_FAILED)
        g_ptr_array_add (settled, g_ptr_array_steal_index (self->pending, i));
      else
        i++;
    }

  for (guint i = 0; i < settled->len; i++)
    {
      PaddockPendingLeases *entry = g_ptr_array_index (settled, i);
      GCancellable *cancellable = g_task_get_cancellable (entry->task);

      if (entry->state == PADDOCK_PENDING_DURABLE && !entry->abandoned &&
          !g_cancellable_is_cancelled (cancellable))
        {
          g_ptr_array_extend (to_list, entry->leases, NULL, NULL);
          continue;
        }

      /* Refused, or durable for nobody: close the sockets; what is on
       * disk is taken back by a remove line in the next batch. */
      for (guint j = 0; j < entry->leases->len; j++)
        {
          PaddockLease *lease = g_ptr_array_index (entry->leases, j);

          _paddock_lease_close_sockets (lease);
          if (entry->state == PADDOCK_PENDING_DURABLE)
            {
              _paddock_registry_journal_add_remove (self->queued_lines, paddock_lease_get_port (lease));
              self->queued_n++;
            }
        }
      if (entry->state == PADDOCK_PENDING_DURABLE)
        {
          entry->abandoned = TRUE;
          if (g_cancellable_is_cancelled (cancellable))
            entry->error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                                "The lease was cancelled");
          else
            entry->error = g_error_new_literal (PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_NOT_FOUND,
                                                "The owner left before the lease was saved");
        }
    }

  announce (self, to_list);
  maybe_compact (self);
  kick (self);

  for (guint i = 0; i < settled->len; i++)
    {
      PaddockPendingLeases *entry = g_ptr_array_index (settled, i);

      if (entry->state == PADDOCK_PENDING_DURABLE && !entry->abandoned)
        g_task_return_pointer (entry->task, g_ptr_array_ref (entry->leases),
                               (GDestroyNotify) g_ptr_array_unref);
      else
        g_task_return_error (entry->task, g_steal_pointer (&entry->error));
    }
}

static gboolean
complete_cb (gpointer data)
{
  PaddockRegistry *self = data;

  self->complete_id = 0;
  complete (self);
  return G_SOURCE_REMOVE;
}

static void
schedule_complete (PaddockRegistry *self)
{
  GSource *source;

  if (self->complete_id != 0)
    return;
  source = g_idle_source_new ();
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, complete_cb, self, NULL);
  g_source_set_static_name (source, "[paddock] registry group commit");
  self->complete_id = g_source_attach (source, self->context);
  g_source_unref (source);
}

/* Back on the main context once the writer thread is done. */
static gboolean
writer_done_cb (gpointer data)
{
  WriterDone *done = data;
  PaddockRegistry *self = done->self;

  /* A synchronous write may have joined this batch already (and maybe
   * started none since, or another one, which is not ours to join). */
  if (self->writer_job != NULL && self->writer_generation == done->generation)
    {
      _paddock_registry_commit_join (self);
      g_clear_handle_id (&self->complete_id, g_source_remove);
      complete (self);
    }
  return G_SOURCE_REMOVE;
}

static void
writer_done_free (gpointer data)
{
  WriterDone *done = data;

  g_object_unref (done->self);
  g_free (done);
}

/* Hands the queued lines to a writer thread, unless one runs (they go
 * with the next batch, when it returns). */
static void
kick (PaddockRegistry *self)
{
  g_autoptr(GError) error = NULL;
  PaddockJournalJob *job;
  struct stat st;

  if (self->writer_job != NULL || self->queued_lines->len == 0)
    return;

  set_state (self, PADDOCK_PENDING_QUEUED, PADDOCK_PENDING_WRITING, NULL);

  /* The cases the store puts right with a full snapshot (not loaded, no
   * journal yet, a dirty or removed journal): done here, synchronously;
   * the snapshot holds the leases being written. */
  if (self->state_file == NULL || self->journal_fd < 0 || self->journal_dirty ||
      fstat (self->journal_fd, &st) != 0 || st.st_nlink == 0)
    {
      g_autoptr(GString) lines = g_steal_pointer (&self->queued_lines);
      guint n = self->queued_n;

      self->queued_lines = g_string_new (NULL);
      self->queued_n = 0;
      if (_paddock_registry_journal_write (self, lines->str, n, &error))
        set_state (self, PADDOCK_PENDING_WRITING, PADDOCK_PENDING_DURABLE, NULL);
      else
        set_state (self, PADDOCK_PENDING_WRITING, PADDOCK_PENDING_FAILED, error);
      schedule_complete (self);
      return;
    }

  if (self->writer == NULL)
    self->writer = g_thread_try_new ("paddock-journal", writer_main, self, &error);

  job = g_new0 (PaddockJournalJob, 1);
  job->fd = self->journal_fd;
  job->lines = g_steal_pointer (&self->queued_lines);
  job->n_lines = self->queued_n;
  job->generation = self->writer_generation;
  job->context = self->context;
  self->queued_lines = g_string_new (NULL);
  self->queued_n = 0;

  if (self->writer == NULL)
    {
      /* No thread (a thread limit): write on this one, as before. */
      g_debug ("No journal writer thread: %s", error->message);
      write_job (job);
      job->done = TRUE;
      self->writer_job = job;
      _paddock_registry_commit_join (self);
      return;
    }

  g_mutex_lock (&self->writer_lock);
  self->writer_job = job;
  g_cond_broadcast (&self->writer_cond);
  g_mutex_unlock (&self->writer_lock);
}

/* After the batch's journal grew past the snapshot by enough, fold it, as
 * a synchronous write would (a failure only leaves the journal longer). */
static void
maybe_compact (PaddockRegistry *self)
{
  g_autoptr(GError) error = NULL;

  if (self->writer_job == NULL && self->journal_entries > 2 * self->leases->len + 256 &&
      !_paddock_registry_compact (self, &error))
    g_debug ("Folding the lease journal: %s", error->message);
}

void
_paddock_registry_commit_queue (PaddockRegistry      *self,
                                PaddockPendingLeases *entry)
{
  for (guint i = 0; i < entry->leases->len; i++)
    _paddock_registry_journal_add_put (self->queued_lines, g_ptr_array_index (entry->leases, i));
  self->queued_n += entry->leases->len;
  entry->state = PADDOCK_PENDING_QUEUED;
  kick (self);
}

gboolean
_paddock_registry_commit_port_taken (PaddockRegistry *self,
                                     guint16          port)
{
  for (guint i = 0; i < self->pending->len; i++)
    {
      PaddockPendingLeases *entry = g_ptr_array_index (self->pending, i);

      for (guint j = 0; j < entry->leases->len; j++)
        if (paddock_lease_get_port (g_ptr_array_index (entry->leases, j)) == port)
          return TRUE;
    }
  return FALSE;
}

/* How many leases wait for their sync, of @owner (everyone's when NULL);
 * with @abandon, marks @owner's to be released once durable. */
static guint
count_pending (PaddockRegistry *self,
               const char      *owner,
               gboolean         abandon)
{
  guint count = 0;

  for (guint i = 0; i < self->pending->len; i++)
    {
      PaddockPendingLeases *entry = g_ptr_array_index (self->pending, i);

      if (entry->leases->len == 0 || (abandon && entry->abandoned) ||
          (owner != NULL &&
           g_strcmp0 (paddock_lease_get_owner (g_ptr_array_index (entry->leases, 0)), owner) != 0))
        continue;
      entry->abandoned |= abandon;
      count += entry->leases->len;
    }
  return count;
}

guint
_paddock_registry_commit_count (PaddockRegistry *self,
                                const char      *owner)
{
  return count_pending (self, owner, FALSE);
}

/* @owner left: its pending leases are released once durable (or refused). */
guint
_paddock_registry_commit_abandon (PaddockRegistry *self,
                                  const char      *owner)
{
  return count_pending (self, owner, TRUE);
}

void
_paddock_registry_commit_add_durable (PaddockRegistry *self,
                                      JsonBuilder     *builder)
{
  for (guint i = 0; i < self->pending->len; i++)
    {
      PaddockPendingLeases *entry = g_ptr_array_index (self->pending, i);

      if (entry->state != PADDOCK_PENDING_DURABLE && entry->state != PADDOCK_PENDING_WRITING)
        continue;
      for (guint j = 0; j < entry->leases->len; j++)
        {
          json_builder_begin_object (builder);
          _paddock_registry_add_lease_members (builder, g_ptr_array_index (entry->leases, j));
          json_builder_end_object (builder);
        }
    }
}

/* Takes @count ports (with @preferred_port when not 0; then @count is 1)
 * for @owner or @session, as paddock_registry_lease() does, all or none,
 * and answers once they are durable: leases asked for while another
 * batch is being synced share the next fdatasync. Resolves to a GPtrArray
 * of PaddockLease, listed and announced just before the answer. */
void
paddock_registry_lease_async (PaddockRegistry     *self,
                              const char          *owner,
                              const char          *session,
                              const char          *name,
                              guint16              preferred_port,
                              guint                count,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GError) error = NULL;
  PaddockPendingLeases *entry;

  g_return_if_fail (PADDOCK_IS_REGISTRY (self));
  g_return_if_fail (owner != NULL || session != NULL);
  g_return_if_fail (count > 0 && (preferred_port == 0 || count == 1));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, paddock_registry_lease_async);

  if (self->context == NULL)
    self->context = g_main_context_ref_thread_default ();

  /* In the pending list while it takes its ports, so that each of them is
   * seen as taken by the next one's scan. */
  entry = g_new0 (PaddockPendingLeases, 1);
  entry->leases = g_ptr_array_new_with_free_func (g_object_unref);
  entry->state = PADDOCK_PENDING_QUEUED;
  g_ptr_array_add (self->pending, entry);

  while (entry->leases->len < count)
    {
      PaddockLease *lease = _paddock_registry_take_unlisted (self, owner, session, name,
                                                             preferred_port, &error);

      if (lease == NULL)
        {
          for (guint i = 0; i < entry->leases->len; i++)
            _paddock_lease_close_sockets (g_ptr_array_index (entry->leases, i));
          g_ptr_array_remove_fast (self->pending, entry);
          g_task_return_error (task, g_steal_pointer (&error));
          return;
        }
      g_ptr_array_add (entry->leases, lease);
    }

  entry->task = g_steal_pointer (&task);
  _paddock_registry_commit_queue (self, entry);
}

GPtrArray *
paddock_registry_lease_finish (PaddockRegistry  *self,
                               GAsyncResult     *result,
                               GError          **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (g_async_result_is_tagged (result, paddock_registry_lease_async), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
