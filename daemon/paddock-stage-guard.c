/* paddock-stage-guard.c — a running session's stage measured against its size limit
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every write of a staged session lands in its stage, in the user's state
 * folder: without a bound an agent could fill that disk (1 GiB written
 * there without a word, once). No kernel interface bounds one folder of a
 * file system for an unprivileged user (project quotas need root), so the
 * guard measures: the blocks the stage really holds (holes cost nothing, a
 * hard link counts once), and the free space of its file system. Over the
 * session's limit, or under the reserve of free space, the guard says it
 * is full and the session holds its processes still (its cgroup's freezer,
 * or SIGSTOP where it has none) until the limit is raised or the session
 * is stopped; what is staged stays, reviewable and appliable. Between two
 * measurements the agent can write on: the interval (one second, or ten
 * times what the last walk took, at most ten) bounds that, and the
 * boundary says so.
 */

#include "config.h"

#include "paddock-stage-guard.h"

#include "paddock-autofd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Folders deep the walk goes (each holds a little memory, no fd), and
 * walks it starts again when the agent moves a folder under it. */
#define WALK_MAX_DEPTH     65536
#define WALK_ATTEMPTS      3
#define INTERVAL_MIN_MS    1000
#define INTERVAL_MAX_MS    10000

struct _PaddockStageGuard
{
  GObject       parent_instance;

  char         *root;
  guint64       limit;
  guint64       reserve;
  guint64       used;
  guint64       free_bytes;
  char         *unmeasured;   /* why the last measurement missed part of the stage */
  gboolean      full;
  char         *reason;

  guint         timeout_id;
  GCancellable *cancellable;   /* the walk in flight */
  guint         interval_ms;
  gboolean      running;
};

G_DEFINE_FINAL_TYPE (PaddockStageGuard, paddock_stage_guard, G_TYPE_OBJECT)

enum {
  SIGNAL_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

typedef struct
{
  guint64     bytes;
  GHashTable *linked;      /* (dev, ino) of files with more than one link, counted once */
  char       *unmeasured;  /* why part of the stage could not be measured, or NULL */
} Walk;

/* One folder on the walk's path: which one (to check that ".." leads
 * back to it), and the names of its sub-folders still to go into. Only
 * the folder the walk is in is open: the depth is the agent's to choose. */
typedef struct
{
  dev_t      dev;
  ino_t      ino;
  GPtrArray *subdirs;
} Level;

static void
level_clear (gpointer data)
{
  Level *level = data;

  g_clear_pointer (&level->subdirs, g_ptr_array_unref);
}

static guint
file_id_hash (gconstpointer key)
{
  const guint64 *id = key;

  return g_int64_hash (&id[0]) ^ g_int64_hash (&id[1]);
}

static gboolean
file_id_equal (gconstpointer a,
               gconstpointer b)
{
  const guint64 *x = a;
  const guint64 *y = b;

  return x[0] == y[0] && x[1] == y[1];
}

/* Counts the entries of the folder @dir_fd and lists its sub-folders in
 * @level. */
static gboolean
read_level (Walk          *walk,
            int            dir_fd,
            Level         *level,
            GCancellable  *cancellable,
            GError       **error)
{
  int dup_fd = fcntl (dir_fd, F_DUPFD_CLOEXEC, 3);
  DIR *dir;
  struct dirent *entry;

  /* A dup shares the offset, which an earlier walk of the root left at
   * its end: read from the start. */
  if (dup_fd >= 0)
    lseek (dup_fd, 0, SEEK_SET);
  dir = dup_fd >= 0 ? fdopendir (dup_fd) : NULL;

  if (dir == NULL)
    {
      int saved_errno = errno;

      if (dup_fd >= 0)
        close (dup_fd);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno), "Cannot read the stage: %s",
                   g_strerror (saved_errno));
      return FALSE;
    }

  while ((entry = readdir (dir)) != NULL)
    {
      struct stat st;

      if (g_strcmp0 (entry->d_name, ".") == 0 || g_strcmp0 (entry->d_name, "..") == 0)
        continue;
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        {
          closedir (dir);
          return FALSE;
        }
      if (fstatat (dir_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        continue;  /* gone meanwhile: the agent runs */

      if (!S_ISDIR (st.st_mode) && st.st_nlink > 1)
        {
          guint64 id[2] = { (guint64) st.st_dev, (guint64) st.st_ino };

          if (g_hash_table_contains (walk->linked, id))
            continue;
          g_hash_table_add (walk->linked, g_memdup2 (id, sizeof id));
        }
      walk->bytes += (guint64) st.st_blocks * 512;
      if (S_ISDIR (st.st_mode))
        g_ptr_array_add (level->subdirs, g_strdup (entry->d_name));
    }
  closedir (dir);
  return TRUE;
}

/* Walks the tree under @root_fd without recursion, with one folder open
 * at a time (going back up by ".."), so that neither the stack nor the
 * fds bound how deep the agent may nest its folders. FALSE with
 * @out_moved set when a folder the walk was in was moved meanwhile (".."
 * led elsewhere): the caller walks again. What cannot be walked (a folder
 * nested deeper than WALK_MAX_DEPTH, one the agent made unreadable) is
 * not skipped: walk->unmeasured says so, and the guard then calls the
 * stage full, since a limit it cannot measure is not enforced. */
static gboolean
walk_tree (Walk          *walk,
           int            root_fd,
           gboolean      *out_moved,
           GCancellable  *cancellable,
           GError       **error)
{
  g_autoptr(GArray) levels = g_array_new (FALSE, TRUE, sizeof (Level));
  paddock_autofd int cur = fcntl (root_fd, F_DUPFD_CLOEXEC, 3);
  Level root = { 0, 0, g_ptr_array_new_with_free_func (g_free) };
  struct stat st;

  *out_moved = FALSE;
  g_array_set_clear_func (levels, level_clear);
  if (cur < 0 || fstat (cur, &st) != 0)
    {
      int saved_errno = errno;

      g_ptr_array_unref (root.subdirs);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno), "Cannot read the stage: %s",
                   g_strerror (saved_errno));
      return FALSE;
    }
  root.dev = st.st_dev;
  root.ino = st.st_ino;
  g_array_append_val (levels, root);
  if (!read_level (walk, cur, &g_array_index (levels, Level, 0), cancellable, error))
    return FALSE;

  while (walk->unmeasured == NULL)
    {
      Level *level = &g_array_index (levels, Level, levels->len - 1);
      g_autofree char *name = NULL;
      Level next = { 0, 0, NULL };
      int fd;

      if (level->subdirs->len == 0)
        {
          Level *parent;

          g_array_set_size (levels, levels->len - 1);
          if (levels->len == 0)
            break;
          parent = &g_array_index (levels, Level, levels->len - 1);
          fd = openat (cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
          if (fd < 0 || fstat (fd, &st) != 0 || st.st_dev != parent->dev || st.st_ino != parent->ino)
            {
              if (fd >= 0)
                close (fd);
              *out_moved = TRUE;
              return FALSE;
            }
          paddock_close_fd (&cur);
          cur = fd;
          continue;
        }

      name = g_ptr_array_steal_index (level->subdirs, level->subdirs->len - 1);
      fd = openat (cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        {
          /* Gone or replaced by something else meanwhile: the agent runs. */
          if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
            continue;
          walk->unmeasured = g_strdup_printf ("a folder in it cannot be opened (%s)", g_strerror (errno));
          break;
        }
      if (levels->len >= WALK_MAX_DEPTH)
        walk->unmeasured = g_strdup_printf ("its folders are nested deeper than %u levels", WALK_MAX_DEPTH);
      else if (fstat (fd, &st) != 0)
        walk->unmeasured = g_strdup_printf ("a folder in it cannot be read (%s)", g_strerror (errno));
      if (walk->unmeasured != NULL)
        {
          close (fd);
          break;
        }
      paddock_close_fd (&cur);
      cur = fd;
      next.dev = st.st_dev;
      next.ino = st.st_ino;
      next.subdirs = g_ptr_array_new_with_free_func (g_free);
      g_array_append_val (levels, next);
      if (!read_level (walk, cur, &g_array_index (levels, Level, levels->len - 1), cancellable, error))
        return FALSE;
    }
  return TRUE;
}

/* The bytes @root really holds (allocated blocks, each hard-linked file
 * once) and the free space of its file system for an unprivileged writer.
 * @out_unmeasured: why part of it could not be measured (then the bytes
 * are those of the rest), or NULL. */
gboolean
paddock_stage_guard_measure (const char  *root,
                             guint64     *out_bytes,
                             guint64     *out_free,
                             char       **out_unmeasured,
                             GError     **error)
{
  g_autoptr(GHashTable) linked = g_hash_table_new_full (file_id_hash, file_id_equal, g_free, NULL);
  Walk walk = { 0, linked, NULL };
  struct statvfs vfs;
  int fd;

  fd = open (root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno), "Cannot open the stage %s: %s",
                   root, g_strerror (saved_errno));
      return FALSE;
    }
  if (fstatvfs (fd, &vfs) != 0)
    {
      int saved_errno = errno;

      close (fd);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno), "Cannot read the stage's disk: %s",
                   g_strerror (saved_errno));
      return FALSE;
    }
  /* A walk cut short by the agent moving a folder it was in is started
   * again (counts restart); after WALK_ATTEMPTS such walks in a row the
   * stage is unmeasured. */
  for (guint attempt = 0; ; attempt++)
    {
      gboolean moved = FALSE;

      walk.bytes = 0;
      g_hash_table_remove_all (linked);
      if (walk_tree (&walk, fd, &moved, NULL, error))
        break;
      if (!moved)
        {
          close (fd);
          g_free (walk.unmeasured);
          return FALSE;
        }
      if (attempt + 1 == WALK_ATTEMPTS)
        {
          walk.unmeasured = g_strdup ("its folders kept moving while it was measured");
          break;
        }
    }
  close (fd);

  *out_bytes = walk.bytes;
  *out_free = (guint64) vfs.f_bavail * (guint64) vfs.f_frsize;
  *out_unmeasured = walk.unmeasured;
  return TRUE;
}

static void schedule (PaddockStageGuard *self);

/* Decides full or not from the last measurement; "changed" when that
 * flips (and when the limit is set, so that the session republishes). */
static void
paddock_stage_guard_judge (PaddockStageGuard *self,
                           gboolean           always_notify)
{
  g_autofree char *reason = NULL;
  gboolean full;

  if (self->unmeasured != NULL)
    reason = g_strdup_printf ("the stage cannot be measured against its limit: %s", self->unmeasured);
  else if (self->used > self->limit)
    reason = g_strdup_printf ("the stage holds %" G_GUINT64_FORMAT " MiB, over its limit of %" G_GUINT64_FORMAT " MiB",
                              self->used / (1024 * 1024), self->limit / (1024 * 1024));
  else if (self->free_bytes < self->reserve)
    reason = g_strdup_printf ("the state folder's disk has %" G_GUINT64_FORMAT " MiB free, under the reserve of %"
                              G_GUINT64_FORMAT " MiB", self->free_bytes / (1024 * 1024),
                              self->reserve / (1024 * 1024));
  full = reason != NULL;

  if (full == self->full && !always_notify)
    return;
  self->full = full;
  g_free (self->reason);
  self->reason = g_steal_pointer (&reason);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

typedef struct
{
  char    *root;
  guint64  bytes;
  guint64  free_bytes;
  char    *unmeasured;
  gint64   elapsed_us;
} Measure;

static void
measure_free (Measure *measure)
{
  g_free (measure->unmeasured);
  g_free (measure->root);
  g_free (measure);
}

static void
measure_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  Measure *measure = task_data;
  gint64 start = g_get_monotonic_time ();
  GError *error = NULL;

  if (!paddock_stage_guard_measure (measure->root, &measure->bytes, &measure->free_bytes,
                                    &measure->unmeasured, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  measure->elapsed_us = g_get_monotonic_time () - start;
  g_task_return_boolean (task, TRUE);
}

static void
measure_done_cb (GObject      *object,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  PaddockStageGuard *self = PADDOCK_STAGE_GUARD (object);
  Measure *measure = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;

  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          /* Not measured is not within the limit (the agent can make its
           * stage's root unreadable to a user's daemon): held, saying why. */
          g_debug ("Could not measure the stage %s: %s", self->root, error->message);
          g_free (self->unmeasured);
          self->unmeasured = g_strdup (error->message);
          paddock_stage_guard_judge (self, FALSE);
        }
    }
  else
    {
      self->used = measure->bytes;
      self->free_bytes = measure->free_bytes;
      g_free (self->unmeasured);
      self->unmeasured = g_steal_pointer (&measure->unmeasured);
      /* A large stage is walked less often: at most a tenth of the time. */
      self->interval_ms = CLAMP ((guint) (measure->elapsed_us / 100), INTERVAL_MIN_MS, INTERVAL_MAX_MS);
      paddock_stage_guard_judge (self, FALSE);
    }
  g_clear_object (&self->cancellable);
  if (self->running)
    schedule (self);
}

static void
measure_now (PaddockStageGuard *self)
{
  g_autoptr(GTask) task = NULL;
  Measure *measure = g_new0 (Measure, 1);

  measure->root = g_strdup (self->root);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  task = g_task_new (self, self->cancellable, measure_done_cb, NULL);
  g_task_set_task_data (task, measure, (GDestroyNotify) measure_free);
  g_task_run_in_thread (task, measure_thread);
}

static gboolean
tick_cb (gpointer user_data)
{
  PaddockStageGuard *self = user_data;

  self->timeout_id = 0;
  measure_now (self);
  return G_SOURCE_REMOVE;
}

static void
schedule (PaddockStageGuard *self)
{
  g_clear_handle_id (&self->timeout_id, g_source_remove);
  self->timeout_id = g_timeout_add (self->interval_ms, tick_cb, self);
}

static void
paddock_stage_guard_dispose (GObject *object)
{
  PaddockStageGuard *self = PADDOCK_STAGE_GUARD (object);

  paddock_stage_guard_stop (self);
  G_OBJECT_CLASS (paddock_stage_guard_parent_class)->dispose (object);
}

static void
paddock_stage_guard_finalize (GObject *object)
{
  PaddockStageGuard *self = PADDOCK_STAGE_GUARD (object);

  g_free (self->root);
  g_free (self->reason);
  g_free (self->unmeasured);
  G_OBJECT_CLASS (paddock_stage_guard_parent_class)->finalize (object);
}

static void
paddock_stage_guard_class_init (PaddockStageGuardClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_stage_guard_dispose;
  object_class->finalize = paddock_stage_guard_finalize;

  /* Full or not changed, or the limit was set: read the getters. */
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                          NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
paddock_stage_guard_init (PaddockStageGuard *self)
{
  self->interval_ms = INTERVAL_MIN_MS;
}

PaddockStageGuard *
paddock_stage_guard_new (const char *root,
                         guint64     limit,
                         guint64     reserve)
{
  PaddockStageGuard *self;

  g_return_val_if_fail (root != NULL, NULL);

  self = g_object_new (PADDOCK_TYPE_STAGE_GUARD, NULL);
  self->root = g_strdup (root);
  self->limit = limit;
  self->reserve = reserve;
  return self;
}

/* Measures now and then every interval, while the session runs. */
void
paddock_stage_guard_start (PaddockStageGuard *self)
{
  g_return_if_fail (PADDOCK_IS_STAGE_GUARD (self));

  if (self->running)
    return;
  self->running = TRUE;
  measure_now (self);
}

void
paddock_stage_guard_stop (PaddockStageGuard *self)
{
  g_return_if_fail (PADDOCK_IS_STAGE_GUARD (self));

  self->running = FALSE;
  g_clear_handle_id (&self->timeout_id, g_source_remove);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
}

/* A new limit: judged against the last measurement at once, and measured
 * again right away. */
void
paddock_stage_guard_set_limit (PaddockStageGuard *self,
                               guint64            limit)
{
  g_return_if_fail (PADDOCK_IS_STAGE_GUARD (self));

  self->limit = limit;
  paddock_stage_guard_judge (self, TRUE);
  if (self->running)
    measure_now (self);
}

guint64
paddock_stage_guard_get_limit (PaddockStageGuard *self)
{
  g_return_val_if_fail (PADDOCK_IS_STAGE_GUARD (self), 0);
  return self->limit;
}

guint64
paddock_stage_guard_get_used (PaddockStageGuard *self)
{
  g_return_val_if_fail (PADDOCK_IS_STAGE_GUARD (self), 0);
  return self->used;
}

gboolean
paddock_stage_guard_is_full (PaddockStageGuard *self)
{
  g_return_val_if_fail (PADDOCK_IS_STAGE_GUARD (self), FALSE);
  return self->full;
}

/* Why it is full, or NULL. */
const char *
paddock_stage_guard_get_reason (PaddockStageGuard *self)
{
  g_return_val_if_fail (PADDOCK_IS_STAGE_GUARD (self), NULL);
  return self->reason;
}
