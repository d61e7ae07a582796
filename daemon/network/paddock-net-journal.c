/* paddock-net-journal.c — a session's numbered network records: a ring in memory, a bounded file on disk
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every record the session's proxy finishes gets the next sequence number
 * (1, 2, 3…, never reused, continued across daemon restarts from what the
 * file holds) and goes to two places:
 *
 *  - a ring of at most max_records in memory, what ListNetworkRecords
 *    pages through by sequence number;
 *  - PATH, one JSON object per line, appended with O_APPEND. When a line
 *    would take PATH past max_file_bytes / 2, PATH becomes PATH.1 (the
 *    previous PATH.1 goes) and a new PATH starts: the pair never holds
 *    more than max_file_bytes, however long the session runs.
 *
 * An append is one write(2) of a whole line, on the caller's thread: it
 * reaches the page cache at once, so a daemon that is killed loses
 * nothing. Durability against a crash of the machine is a group commit:
 * the append only marks the journal dirty, and a worker of a thread pool
 * shared by every journal fdatasync()s it, again and again while appends
 * keep coming, so one disk flush covers every line written while the
 * previous one ran and the request path never waits for the disk. A
 * rotation hands the old file to the worker to flush and close, and the
 * folder is fsync'd after a file was made or renamed.
 * paddock_net_journal_flush() waits for all of it for one journal,
 * paddock_net_journal_flush_all() for every journal (the daemon, on its
 * way out).
 *
 * A crash can still tear the last line: opening the file cuts such a tail
 * back to the last whole line before anything is appended, and loading
 * skips whatever is not a whole record.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paddock-net-journal.h"

struct _PaddockNetJournal
{
  GObject  parent_instance;

  char    *path;       /* NULL: memory only */
  char    *old_path;   /* PATH.1 */
  int      fd;         /* PATH, O_APPEND; -1 until the first append, or failed */
  gboolean open_failed; /* said so once; not retried for every record */
  gsize    file_bytes; /* PATH's size */
  gsize    max_file_bytes;
  guint    max_records;
  GQueue   records;    /* PaddockNetRecord*, oldest first, seq ascending */
  guint64  last_seq;

  /* Shared with the sync worker, under sync_lock. */
  GMutex   sync_lock;
  GCond    synced;
  gboolean sync_queued;  /* a worker has (or will get) this journal, holding a ref */
  int      sync_fd;      /* a duplicate of fd for the worker; moved to retired_fds, never
                          * closed, by the owner: the worker closes what it retired */
  GArray  *retired_fds;  /* int: rotated-away files still to flush and close */
  gboolean dir_dirty;    /* a file was made or renamed since the last folder fsync */
  guint64  written_seq;  /* the newest record whose line was written */
  guint64  durable_seq;  /* …and the newest flushed to the disk */
};

G_DEFINE_FINAL_TYPE (PaddockNetJournal, paddock_net_journal, G_TYPE_OBJECT)

static GThreadPool *sync_pool;

/* Journals with a sync queued, all of them: what flush_all waits out.
 * Taken inside a journal's sync_lock, never the other way. */
static GMutex all_lock;
static GCond  all_synced;
static guint  n_queued;

static void sync_worker (gpointer data, gpointer user_data);

static gboolean
sync_all (int fd)
{
  while (fdatasync (fd) != 0)
    if (errno != EINTR)
      return FALSE;
  return TRUE;
}

/* One round of the group commit: flush what was written, the retired
 * files and the folder; returns whether more arrived meanwhile. */
static gboolean
sync_once (PaddockNetJournal *self)
{
  g_autoptr(GArray) retired = NULL;
  gboolean dir_dirty, more;
  guint64 target;
  int fd;

  g_mutex_lock (&self->sync_lock);
  target = self->written_seq;
  fd = self->sync_fd;
  retired = g_steal_pointer (&self->retired_fds);
  self->retired_fds = g_array_new (FALSE, FALSE, sizeof (int));
  dir_dirty = self->dir_dirty;
  self->dir_dirty = FALSE;
  g_mutex_unlock (&self->sync_lock);

  for (guint i = 0; i < retired->len; i++)
    {
      int old = g_array_index (retired, int, i);

      if (!sync_all (old))
        g_message ("Cannot flush the network journal %s.1: %s", self->path, g_strerror (errno));
      close (old);
    }
  if (dir_dirty)
    {
      g_autofree char *dir = g_path_get_dirname (self->path);
      int dir_fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

      /* A folder already gone (the session destroyed) has nothing to keep. */
      if ((dir_fd < 0 && errno != ENOENT) || (dir_fd >= 0 && fsync (dir_fd) != 0))
        g_message ("Cannot flush the folder of the network journal %s: %s", self->path,
                   g_strerror (errno));
      if (dir_fd >= 0)
        close (dir_fd);
    }
  if (fd >= 0 && !sync_all (fd))
    g_message ("Cannot flush the network journal %s: %s", self->path, g_strerror (errno));

  g_mutex_lock (&self->sync_lock);
  self->durable_seq = MAX (self->durable_seq, target);
  more = self->written_seq != target || self->retired_fds->len > 0 || self->dir_dirty;
  if (!more)
    {
      self->sync_queued = FALSE;
      g_cond_broadcast (&self->synced);
      g_mutex_lock (&all_lock);
      if (--n_queued == 0)
        g_cond_broadcast (&all_synced);
      g_mutex_unlock (&all_lock);
    }
  g_mutex_unlock (&self->sync_lock);
  return more;
}

static void
sync_worker (gpointer data,
             gpointer user_data)
{
  PaddockNetJournal *self = data;

  while (sync_once (self))
    ;
  /* The reference taken when it was queued; the last one may be this. */
  g_object_unref (self);
}

/* Called with sync_lock held, after something changed on disk. */
static void
queue_sync_locked (PaddockNetJournal *self)
{
  if (self->sync_queued)
    return;
  self->sync_queued = TRUE;
  g_mutex_lock (&all_lock);
  n_queued++;
  g_mutex_unlock (&all_lock);
  g_thread_pool_push (sync_pool, g_object_ref (self), NULL);
}

/**
 * paddock_net_journal_flush:
 *
 * Waits until every record appended so far is on the disk (fdatasync'd,
 * and the folder entry too).
 */
void
paddock_net_journal_flush (PaddockNetJournal *self)
{
  g_return_if_fail (PADDOCK_IS_NET_JOURNAL (self));

  g_mutex_lock (&self->sync_lock);
  while (self->sync_queued)
    g_cond_wait (&self->synced, &self->sync_lock);
  g_mutex_unlock (&self->sync_lock);
}

/**
 * paddock_net_journal_flush_all:
 *
 * Waits until every journal's records appended so far are on the disk:
 * the daemon calls it on its way out, since a sync worker still running
 * then would die with the process.
 */
void
paddock_net_journal_flush_all (void)
{
  g_mutex_lock (&all_lock);
  while (n_queued > 0)
    g_cond_wait (&all_synced, &all_lock);
  g_mutex_unlock (&all_lock);
}

/* The newest record number known to be on the disk. */
guint64
paddock_net_journal_get_durable_seq (PaddockNetJournal *self)
{
  guint64 seq;

  g_return_val_if_fail (PADDOCK_IS_NET_JOURNAL (self), 0);

  g_mutex_lock (&self->sync_lock);
  seq = self->durable_seq;
  g_mutex_unlock (&self->sync_lock);
  return seq;
}

static void
paddock_net_journal_finalize (GObject *object)
{
  PaddockNetJournal *self = PADDOCK_NET_JOURNAL (object);

  /* A queued sync holds a reference, and a worker lets go only once a
   * round found nothing more to flush: everything written is on the disk. */
  g_assert (!self->sync_queued);
  g_assert (self->written_seq == self->durable_seq && self->retired_fds->len == 0 && !self->dir_dirty);
  if (self->sync_fd >= 0)
    close (self->sync_fd);
  g_array_unref (self->retired_fds);
  g_mutex_clear (&self->sync_lock);
  g_cond_clear (&self->synced);
  if (self->fd >= 0)
    close (self->fd);
  g_queue_clear_full (&self->records, g_object_unref);
  g_clear_pointer (&self->path, g_free);
  g_clear_pointer (&self->old_path, g_free);

  G_OBJECT_CLASS (paddock_net_journal_parent_class)->finalize (object);
}

static void
paddock_net_journal_class_init (PaddockNetJournalClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = paddock_net_journal_finalize;

  /* A few threads for every journal of the daemon: a flush of one
   * session's file does not hold up another's for long. */
  sync_pool = g_thread_pool_new (sync_worker, NULL, 4, FALSE, NULL);
}

static void
paddock_net_journal_init (PaddockNetJournal *self)
{
  self->fd = -1;
  self->sync_fd = -1;
  self->retired_fds = g_array_new (FALSE, FALSE, sizeof (int));
  g_mutex_init (&self->sync_lock);
  g_cond_init (&self->synced);
  g_queue_init (&self->records);
}

static void
push (PaddockNetJournal *self,
      PaddockNetRecord  *record)
{
  g_queue_push_tail (&self->records, record);
  while (self->records.length > self->max_records)
    g_object_unref (g_queue_pop_head (&self->records));
}

/* Records of one file, in order; lines that are not a whole record (a
 * torn last line after a crash, anything else) are skipped. */
static void
load_file (PaddockNetJournal *self,
           const char        *path)
{
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  gsize length = 0;

  if (!g_file_get_contents (path, &contents, &length, NULL) ||
      length > self->max_file_bytes || memchr (contents, '\0', length) != NULL)
    return;

  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      PaddockNetRecord *record;

      if (lines[i][0] == '\0' || (record = paddock_net_record_new_from_line (lines[i], NULL)) == NULL)
        continue;
      if (paddock_net_record_get_seq (record) <= self->last_seq)
        {
          g_object_unref (record);
          continue;
        }
      self->last_seq = paddock_net_record_get_seq (record);
      push (self, record);
    }
}

/* A torn last line (a crash mid-write) is cut off, back to the end of the
 * last whole line, so that the next record starts a line of its own and
 * the file holds only whole lines. */
static void
cut_torn_tail (PaddockNetJournal *self)
{
  char buffer[4096];
  gsize end = self->file_bytes;

  while (end > 0)
    {
      gsize chunk = MIN (end, sizeof buffer);
      ssize_t n = pread (self->fd, buffer, chunk, (off_t) (end - chunk));
      const char *newline;

      if (n != (ssize_t) chunk)
        return;  /* cannot read it: leave it, loading skips a torn line anyway */
      newline = memrchr (buffer, '\n', chunk);
      if (newline != NULL)
        {
          end = end - chunk + (gsize) (newline - buffer) + 1;
          break;
        }
      end -= chunk;
    }

  if (end == self->file_bytes)
    return;
  if (ftruncate (self->fd, (off_t) end) != 0)
    {
      g_message ("Cannot cut the torn end of the network journal %s: %s", self->path,
                 g_strerror (errno));
      return;
    }
  self->file_bytes = end;
}

static void
open_file (PaddockNetJournal *self)
{
  struct stat st;

  self->fd = open (self->path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (self->fd < 0)
    {
      g_message ("Cannot open the network journal %s: %s", self->path, g_strerror (errno));
      return;
    }
  self->file_bytes = fstat (self->fd, &st) == 0 ? (gsize) st.st_size : 0;
  cut_torn_tail (self);

  g_mutex_lock (&self->sync_lock);
  if (self->sync_fd >= 0)
    g_array_append_val (self->retired_fds, self->sync_fd);
  self->sync_fd = fcntl (self->fd, F_DUPFD_CLOEXEC, 3);
  self->dir_dirty = TRUE;
  queue_sync_locked (self);
  g_mutex_unlock (&self->sync_lock);
}

/**
 * paddock_net_journal_new:
 * @path: (nullable): the journal's file; existing records there (and in
 *   PATH.1) are loaded and numbering continues after them
 * @max_records: how many records the ring keeps (at least 1)
 * @max_file_bytes: PATH and PATH.1 together stay below this
 */
PaddockNetJournal *
paddock_net_journal_new (const char *path,
                         guint       max_records,
                         gsize       max_file_bytes)
{
  PaddockNetJournal *self = g_object_new (PADDOCK_TYPE_NET_JOURNAL, NULL);

  self->max_records = MAX (max_records, 1);
  self->max_file_bytes = MAX (max_file_bytes, 4096);
  if (path != NULL)
    {
      self->path = g_strdup (path);
      self->old_path = g_strconcat (path, ".1", NULL);
      load_file (self, self->old_path);
      load_file (self, self->path);
      /* The file is opened (made) by the first append: a session that
       * never uses the network has none. */
    }
  return self;
}

static void
write_line (PaddockNetJournal *self,
            const char        *line,
            gsize              len)
{
  gsize done = 0;

  if (self->path == NULL)
    return;
  if (self->fd < 0 && !self->open_failed)
    {
      open_file (self);
      self->open_failed = self->fd < 0;
    }

  if (self->fd >= 0 && self->file_bytes > 0 && self->file_bytes + len > self->max_file_bytes / 2)
    {
      close (self->fd);
      self->fd = -1;
      if (rename (self->path, self->old_path) != 0)
        g_message ("Cannot rotate the network journal %s: %s", self->path, g_strerror (errno));
      open_file (self);
    }
  if (self->fd < 0 || len > self->max_file_bytes / 2)
    return;

  while (done < len)
    {
      ssize_t n = write (self->fd, line + done, len - done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          g_message ("Cannot write the network journal %s: %s", self->path,
                     n < 0 ? g_strerror (errno) : "short write");
          break;
        }
      done += (gsize) n;
    }
  self->file_bytes += done;
}

/* The line of record @seq is in the file: the worker makes it durable. */
static void
mark_written (PaddockNetJournal *self,
              guint64            seq)
{
  if (self->fd < 0)
    return;
  g_mutex_lock (&self->sync_lock);
  self->written_seq = seq;
  queue_sync_locked (self);
  g_mutex_unlock (&self->sync_lock);
}

/**
 * paddock_net_journal_append:
 *
 * Numbers @record (paddock_net_record_set_seq()), keeps a reference in the
 * ring and appends it to the file. Returns its number.
 */
guint64
paddock_net_journal_append (PaddockNetJournal *self,
                            PaddockNetRecord  *record)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *text = NULL;
  g_autofree char *line = NULL;

  g_return_val_if_fail (PADDOCK_IS_NET_JOURNAL (self), 0);
  g_return_val_if_fail (PADDOCK_IS_NET_RECORD (record), 0);

  paddock_net_record_set_seq (record, ++self->last_seq);
  push (self, g_object_ref (record));

  node = paddock_net_record_to_json (record);
  json_generator_set_root (generator, node);
  text = json_generator_to_data (generator, NULL);
  line = g_strconcat (text, "\n", NULL);
  write_line (self, line, strlen (line));
  mark_written (self, self->last_seq);

  return self->last_seq;
}

/**
 * paddock_net_journal_list:
 * @after_seq: records numbered above this (0: from the oldest kept)
 * @max: at most this many (0: none)
 * @out_next_seq: (out): what to pass as @after_seq to continue: the last
 *   returned record's number, or @after_seq when there was none
 *
 * Returns: (transfer container): the records, oldest first
 */
GPtrArray *
paddock_net_journal_list (PaddockNetJournal *self,
                          guint64            after_seq,
                          guint              max,
                          guint64           *out_next_seq)
{
  GPtrArray *records = g_ptr_array_new_with_free_func (g_object_unref);
  guint64 next = after_seq;
  GList *l;

  g_return_val_if_fail (PADDOCK_IS_NET_JOURNAL (self), records);

  /* Newest last: walk back to the first record after @after_seq. */
  for (l = self->records.tail; l != NULL && l->prev != NULL &&
       paddock_net_record_get_seq (l->prev->data) > after_seq; l = l->prev)
    ;
  for (; l != NULL && records->len < max; l = l->next)
    if (paddock_net_record_get_seq (l->data) > after_seq)
      {
        g_ptr_array_add (records, g_object_ref (l->data));
        next = paddock_net_record_get_seq (l->data);
      }

  if (out_next_seq != NULL)
    *out_next_seq = next;
  return records;
}

guint64
paddock_net_journal_get_last_seq (PaddockNetJournal *self)
{
  g_return_val_if_fail (PADDOCK_IS_NET_JOURNAL (self), 0);
  return self->last_seq;
}
