/* paddock-stage.c — one session's stage: where its writes go, review, apply, drop, checkpoints
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The stage folder of a session (STATE/sessions/ID/stage) holds:
 *   upper/, work/     the overlayfs layers (kind "overlay"), or
 *   copy/             a copy of the workspace (kind "copy", where overlayfs
 *                     cannot be mounted rootless);
 *   baseline          every workspace entry's stamp at session start, to
 *                     tell conflicts (paddock-baseline.c);
 *   baseline-since    the moment the baseline stands for (nanoseconds on
 *                     the file-time clock, in decimal): written before the
 *                     agent starts (and made durable by the walk's thread),
 *                     so a daemon that died before the walk lets the next
 *                     one walk for that same moment;
 *   copy-baseline     (kind "copy") every entry's stamp in copy/ as it was
 *                     made, to tell what the session touched;
 *   journal/          the apply batch in flight, if any (paddock-apply.c);
 *   ledger.jsonl      who applied what, when, with content hashes;
 *   checkpoints/      named copies of upper/ (or copy/).
 *
 * Every operation here blocks on the filesystem: the daemon calls them from
 * worker threads, and the lock below runs them one at a time per session
 * (a review never sees half an apply).
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "paddock-apply-restored.h"
#include "paddock-autofd.h"
#include "paddock-baseline.h"
#include "paddock-change.h"
#include "paddock-durable-file.h"
#include "paddock-review-token.h"
#include "paddock-stage.h"

/* In a checkpoint of a copy stage: the paths the session had changed,
 * each NUL-terminated. */
#define COPY_CHANGES_FILE "session-paths"

struct _PaddockStage
{
  GObject           parent_instance;

  char             *dir;
  char             *workspace;
  PaddockStageKind  kind;
  char             *root;            /* upper/ or copy/ */
  char             *work;            /* work/ (overlay only) */
  char             *baseline_file;
  char             *since_file;
  char             *copy_baseline_file;
  char             *journal_dir;
  char             *ledger_file;
  char             *checkpoints_dir;

  /* One operation at a time; and the baseline, which a thread records
   * once the session has started, is waited for before any review (which
   * asks for it at once: baseline_wanted). */
  GMutex            lock;
  GCond             baseline_cond;
  gboolean          baseline_pending;
  gboolean          baseline_wanted;
  GCancellable     *baseline_cancellable;
  PaddockBaseline  *baseline;
  /* When the session's view of the workspace was set up (prepare), on the
   * file-time clock; 0 before. The baseline stands for that moment. */
  gint64            started_ns;
  /* Copy stages: the copy's stamps as made (NULL until first needed, or
   * when they could not be read: every difference is then listed). */
  PaddockBaseline  *copy_baseline;

  /* The last review, for GetDiff: a diff is taken from it while both
   * sides of that change still have the stamps they had (path → two
   * PaddockFileStamp, stage then workspace), else recomputed. */
  PaddockReview    *last_review;
  GHashTable       *last_stamps;
  /* Blob ids and line counts from the last review, for the next one. */
  PaddockReviewCache *review_cache;
  /* PaddockReviewToken: the last few pinned reviews, oldest first. */
  GPtrArray        *tokens;
};

G_DEFINE_FINAL_TYPE (PaddockStage, paddock_stage, G_TYPE_OBJECT)

const char *
paddock_stage_kind_to_string (PaddockStageKind kind)
{
  switch (kind)
    {
    case PADDOCK_STAGE_KIND_OVERLAY:
      return "overlay";
    case PADDOCK_STAGE_KIND_COPY:
      return "copy";
    default:
      return "none";
    }
}

gboolean
paddock_stage_kind_from_string (const char       *text,
                                PaddockStageKind *kind)
{
  if (g_strcmp0 (text, "overlay") == 0)
    *kind = PADDOCK_STAGE_KIND_OVERLAY;
  else if (g_strcmp0 (text, "copy") == 0)
    *kind = PADDOCK_STAGE_KIND_COPY;
  else
    return FALSE;
  return TRUE;
}

/* Asks the helper whether it can mount the staging overlay with its upper
 * layer on @scratch_dir's filesystem (the state folder's). */
gboolean
paddock_stage_probe_overlay (const char  *helper,
                             const char  *scratch_dir,
                             char       **out_reason)
{
  const char *argv[] = { helper, "--probe-stage", scratch_dir, NULL };
  g_autofree char *err_text = NULL;
  g_autoptr(GError) error = NULL;
  int status = 0;
  gboolean ok;

  ok = g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL,
                     NULL, NULL, NULL, &err_text, &status, &error) &&
       g_spawn_check_wait_status (status, NULL);
  paddock_remove_tree (scratch_dir);

  if (!ok && out_reason != NULL)
    {
      if (error != NULL)
        *out_reason = g_strdup (error->message);
      else
        *out_reason = g_strdup (err_text != NULL && err_text[0] != '\0'
                                ? g_strstrip (err_text)
                                : "paddock-sandbox could not mount an overlay");
    }
  return ok;
}

static void
paddock_stage_finalize (GObject *object)
{
  PaddockStage *self = PADDOCK_STAGE (object);

  g_clear_object (&self->baseline);
  g_clear_object (&self->baseline_cancellable);
  g_clear_object (&self->copy_baseline);
  g_clear_object (&self->last_review);
  g_clear_pointer (&self->last_stamps, g_hash_table_unref);
  g_clear_object (&self->review_cache);
  g_clear_pointer (&self->tokens, g_ptr_array_unref);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->baseline_cond);
  g_free (self->dir);
  g_free (self->workspace);
  g_free (self->root);
  g_free (self->work);
  g_free (self->baseline_file);
  g_free (self->since_file);
  g_free (self->copy_baseline_file);
  g_free (self->journal_dir);
  g_free (self->ledger_file);
  g_free (self->checkpoints_dir);

  G_OBJECT_CLASS (paddock_stage_parent_class)->finalize (object);
}

static void
paddock_stage_class_init (PaddockStageClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = paddock_stage_finalize;
}

static void
paddock_stage_init (PaddockStage *self)
{
  g_mutex_init (&self->lock);
  g_cond_init (&self->baseline_cond);
  self->review_cache = paddock_review_cache_new ();
  self->tokens = g_ptr_array_new_with_free_func ((GDestroyNotify) paddock_review_token_unref);
}

PaddockStage *
paddock_stage_new (const char       *dir,
                   const char       *workspace,
                   PaddockStageKind  kind)
{
  PaddockStage *self;

  g_return_val_if_fail (dir != NULL && workspace != NULL, NULL);
  g_return_val_if_fail (kind == PADDOCK_STAGE_KIND_OVERLAY || kind == PADDOCK_STAGE_KIND_COPY, NULL);

  self = g_object_new (PADDOCK_TYPE_STAGE, NULL);
  self->dir = g_strdup (dir);
  self->workspace = g_strdup (workspace);
  self->kind = kind;
  self->root = g_build_filename (dir, kind == PADDOCK_STAGE_KIND_OVERLAY ? "upper" : "copy", NULL);
  self->work = g_build_filename (dir, "work", NULL);
  self->baseline_file = g_build_filename (dir, "baseline", NULL);
  self->since_file = g_build_filename (dir, "baseline-since", NULL);
  self->copy_baseline_file = g_build_filename (dir, "copy-baseline", NULL);
  self->journal_dir = g_build_filename (dir, "journal", NULL);
  self->ledger_file = g_build_filename (dir, "ledger.jsonl", NULL);
  self->checkpoints_dir = g_build_filename (dir, "checkpoints", NULL);
  return self;
}

PaddockStageKind
paddock_stage_get_kind (PaddockStage *self)
{
  return self->kind;
}

const char *
paddock_stage_get_root (PaddockStage *self)
{
  return self->root;
}

/* The --stage argument of paddock-sandbox. */
char *
paddock_stage_dup_sandbox_arg (PaddockStage *self)
{
  if (self->kind == PADDOCK_STAGE_KIND_OVERLAY)
    return g_strconcat ("overlay:", self->dir, NULL);
  return g_strconcat ("copy:", self->root, NULL);
}

static gboolean
errno_error (GError    **error,
             int         saved_errno,
             const char *what,
             const char *path)
{
  g_autofree char *shown = g_utf8_make_valid (path, -1);

  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "%s “%s”: %s", what, shown, g_strerror (saved_errno));
  return FALSE;
}

/* The copy's stamps no longer describe copy/ (it is being replaced). */
static gboolean
forget_copy_baseline (PaddockStage  *self,
                      GError       **error)
{
  g_clear_object (&self->copy_baseline);
  if (unlink (self->copy_baseline_file) != 0 && errno != ENOENT)
    return errno_error (error, errno, "Could not remove", self->copy_baseline_file);
  return TRUE;
}

/* Records the stamps of copy/ as it is now, just written. */
static gboolean
record_copy_baseline (PaddockStage  *self,
                      GCancellable  *cancellable,
                      GError       **error)
{
  /* The record calls an entry changed at or after its walk starts
   * "unknown" (always compared); the files just copied must not be. */
  paddock_file_time_wait_past_now ();

  if (!paddock_baseline_record (self->root, self->copy_baseline_file, cancellable, error))
    return FALSE;
  self->copy_baseline = paddock_baseline_load (self->copy_baseline_file, error);
  return self->copy_baseline != NULL;
}

/* Copies the workspace to copy/ and records the copy's stamps, before any
 * agent writes there: the stamps then tell what the session touched. */
static gboolean
make_copy (PaddockStage  *self,
           GCancellable  *cancellable,
           GError       **error)
{
  return forget_copy_baseline (self, error) &&
         paddock_tree_copy (self->workspace, self->root, cancellable, error) &&
         record_copy_baseline (self, cancellable, error);
}

static char *
format_since (gint64 started_ns)
{
  return g_strdup_printf ("%" G_GINT64_FORMAT "\n", started_ns);
}

/* Writes baseline-since without fsync(): this is on the session's start,
 * and what it must survive before the walk's thread makes it durable
 * (record_baseline_thread(), which does so first thing, before its wait:
 * concurrently with the CreateSession reply, not after it) is a daemon's
 * death, which leaves the page cache alone. The file is new at a start (a
 * stage is prepared once, in a new session folder), and for a new file
 * GLib writes a temp file and renames it without any fsync
 * (ONLY_EXISTING: the fsyncs only for a file that exists; checked with
 * strace: the main thread makes no fsync on the start path, the walk's
 * thread both). A power loss before the durable write leaves no file, an
 * empty one or a torn one, read as none or as a far earlier moment (a
 * prefix of the digits), and locked_get_baseline() then errs towards
 * conflicts: a session whose agent ran before that loses no conflict, at
 * worst it gets more. */
static gboolean
write_since_quickly (PaddockStage  *self,
                     gint64         started_ns,
                     GError       **error)
{
  g_autofree char *text = format_since (started_ns);

  return g_file_set_contents_full (self->since_file, text, -1,
                                   G_FILE_SET_CONTENTS_CONSISTENT | G_FILE_SET_CONTENTS_ONLY_EXISTING,
                                   0600, error);
}

/* Makes the layers (or the copy) before the sandbox mounts them. */
gboolean
paddock_stage_prepare (PaddockStage  *self,
                       GCancellable  *cancellable,
                       GError       **error)
{
  g_autoptr(GMutexLocker) locker = NULL;
  gint64 started_ns;

  if (!paddock_ensure_private_dir (self->dir, error))
    return FALSE;
  /* Before the sandbox can show the workspace to the agent: whatever
   * another writer changes from here on is "unknown" in the baseline,
   * however late its walk comes. In a file before the agent runs: the
   * walk comes later, and a daemon that dies before it lets the next one
   * walk for this moment (locked_get_baseline()). */
  started_ns = paddock_file_time_now_ns ();
  if (!write_since_quickly (self, started_ns, error))
    return FALSE;
  g_mutex_lock (&self->lock);
  self->started_ns = started_ns;
  g_mutex_unlock (&self->lock);
  if (self->kind == PADDOCK_STAGE_KIND_OVERLAY)
    return paddock_ensure_private_dir (self->root, error) &&
           paddock_ensure_private_dir (self->work, error);

  if (g_file_test (self->root, G_FILE_TEST_IS_DIR))
    return TRUE;
  locker = g_mutex_locker_new (&self->lock);
  return make_copy (self, cancellable, error);
}

/* The walk runs on a thread of its own at a lower priority (nice +10; a
 * thread's niceness is its own on Linux, and this one ends with the walk),
 * and only after @delay_ms, or as soon as a review wants it: walking a
 * large workspace took a core for longer than the whole start of a
 * session, and on a machine of few cores slowed that start down, though
 * nothing on it waits for the baseline. The agent's writes go to the
 * stage, never to the workspace, so the walk sees the workspace as it was
 * at the start, except for another writer's changes since, which the
 * walk records as "unknown" (started_ns). */
typedef struct {
  PaddockStage *stage;
  /* The walk's own reference to the stage's baseline_cancellable, which a
   * later start replaces: the thread never reads the field. */
  GCancellable *cancellable;
  guint         delay_ms;
} BaselineWalk;

static gpointer
record_baseline_thread (gpointer data)
{
  BaselineWalk *walk = data;
  g_autoptr(PaddockStage) self = walk->stage;
  g_autoptr(GCancellable) cancellable = walk->cancellable;
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockBaseline) baseline = NULL;
  gint64 deadline = g_get_monotonic_time () + (gint64) walk->delay_ms * 1000;
  gint64 since_ns;

  g_free (walk);
  setpriority (PRIO_PROCESS, (id_t) syscall (SYS_gettid), 10);

  /* The start's moment, durably now (prepare only wrote it quickly). */
  g_mutex_lock (&self->lock);
  since_ns = self->started_ns;
  g_mutex_unlock (&self->lock);
  if (!g_cancellable_is_cancelled (cancellable))
    {
      g_autofree char *text = format_since (since_ns);

      if (!paddock_durable_file_replace (self->since_file, text, -1, 0600, &error))
        {
          g_message ("Could not keep %s: %s", self->since_file, error->message);
          g_clear_error (&error);
        }
    }

  g_mutex_lock (&self->lock);
  while (!self->baseline_wanted && !g_cancellable_is_cancelled (cancellable) &&
         g_cond_wait_until (&self->baseline_cond, &self->lock, deadline))
    ;
  since_ns = self->started_ns;
  g_mutex_unlock (&self->lock);

  if (paddock_baseline_record_since (self->workspace, self->baseline_file, since_ns,
                                     cancellable, &error))
    baseline = paddock_baseline_load (self->baseline_file, &error);
  if (baseline == NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_message ("No baseline for %s: walked again when first needed: %s",
               self->workspace, error->message);

  g_mutex_lock (&self->lock);
  g_set_object (&self->baseline, baseline);
  self->baseline_pending = FALSE;
  g_cond_broadcast (&self->baseline_cond);
  g_mutex_unlock (&self->lock);
  return NULL;
}

/* Records what the workspace looked like at the session's start, in a
 * worker thread, @delay_ms from now or when first needed (a review, an
 * apply), whichever comes first. Reviews wait until it is done.
 *
 * For tests: PADDOCK_TEST_BASELINE_DELAY_MS=N in the environment makes the
 * delay N ms, so a test can kill the daemon before the walk and check that
 * the next daemon still tells conflicts (locked_get_baseline()). */
void
paddock_stage_record_baseline_in_thread (PaddockStage *self,
                                         guint         delay_ms)
{
  BaselineWalk *walk = NULL;
  const char *test_delay = g_getenv ("PADDOCK_TEST_BASELINE_DELAY_MS");
  guint64 value = 0;

  if (test_delay != NULL && g_ascii_string_to_unsigned (test_delay, 10, 0, G_MAXUINT, &value, NULL))
    delay_ms = (guint) value;

  /* A walk of an earlier start still waiting or under way (a session
   * started again) gives way: one walk, one baseline at a time. */
  paddock_stage_cancel_baseline (self);

  walk = g_new0 (BaselineWalk, 1);
  g_mutex_lock (&self->lock);
  self->baseline_pending = TRUE;
  self->baseline_wanted = FALSE;
  if (self->started_ns == 0)
    self->started_ns = paddock_file_time_now_ns ();
  g_clear_object (&self->baseline_cancellable);
  self->baseline_cancellable = g_cancellable_new ();
  walk->cancellable = g_object_ref (self->baseline_cancellable);
  g_mutex_unlock (&self->lock);
  walk->stage = g_object_ref (self);
  walk->delay_ms = delay_ms;
  g_thread_unref (g_thread_new ("paddock-baseline", record_baseline_thread, walk));
}

/* The session is going: a walk still under way stops (it would go on
 * using a core for a session that is gone, and write into a folder being
 * deleted); returns once it has. */
void
paddock_stage_cancel_baseline (PaddockStage *self)
{
  g_return_if_fail (PADDOCK_IS_STAGE (self));

  g_mutex_lock (&self->lock);
  if (self->baseline_cancellable != NULL)
    g_cancellable_cancel (self->baseline_cancellable);
  /* A walk still waiting for its turn gives up at once. */
  g_cond_broadcast (&self->baseline_cond);
  while (self->baseline_pending)
    g_cond_wait (&self->baseline_cond, &self->lock);
  g_mutex_unlock (&self->lock);
}

/* The moment the stage was prepared (see paddock_stage_prepare()): this
 * daemon's, or the one a previous daemon wrote; 0 when unknown. */
static gint64
locked_get_started_ns (PaddockStage *self)
{
  g_autofree char *text = NULL;
  guint64 value = 0;

  if (self->started_ns != 0)
    return self->started_ns;
  if (!g_file_get_contents (self->since_file, &text, NULL, NULL))
    return 0;
  g_strchomp (text);
  if (!g_ascii_string_to_unsigned (text, 10, 1, G_MAXINT64, &value, NULL))
    return 0;
  return (gint64) value;
}

/* With the lock held: the baseline, once recorded. When there is none —
 * the daemon that started the session died before its walk, or the walk
 * failed — the workspace is walked now for the moment the stage was
 * prepared: whatever changed since is "unknown" in it, so nothing another
 * writer did meanwhile goes unseen. Without that moment, or when the walk
 * fails again, every path is "unknown" (paddock_baseline_new_unknown()):
 * every change of the session is a conflict, never silently applied over
 * someone else's edit. NULL only with @error set (cancelled). */
static PaddockBaseline *
locked_get_baseline (PaddockStage  *self,
                     GCancellable  *cancellable,
                     GError       **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(PaddockBaseline) legacy = NULL;
  gint64 since_ns;

  if (self->baseline_pending && !self->baseline_wanted)
    {
      self->baseline_wanted = TRUE;
      g_cond_broadcast (&self->baseline_cond);
    }
  while (self->baseline_pending)
    g_cond_wait (&self->baseline_cond, &self->lock);
  if (self->baseline != NULL)
    return self->baseline;

  if (g_file_test (self->baseline_file, G_FILE_TEST_EXISTS))
    {
      self->baseline = paddock_baseline_load (self->baseline_file, &local_error);
      /* An older daemon's file (version 1) may lack a file another
       * writer deleted after the start, and reading that as "absent"
       * would let the session's write there bring it back unasked. It is
       * walked again for the session's start when that moment is known,
       * which tells a path deleted since (unknown) from one that was never
       * there (absent); the walk drops the file's applied paths, which are
       * then "unknown" too: more conflicts, never fewer. Without that
       * moment (or if the walk fails) the file stands, with every path it
       * lacks "unknown": every file the session added is a conflict. */
      if (self->baseline != NULL && paddock_baseline_is_legacy (self->baseline))
        {
          paddock_baseline_set_missing_unknown (self->baseline);
          if (locked_get_started_ns (self) != 0)
            {
              g_message ("The baseline %s is in an older daemon's format: walked again for the "
                         "session's start", self->baseline_file);
              legacy = g_steal_pointer (&self->baseline);
            }
        }
      if (self->baseline != NULL)
        return self->baseline;
      if (legacy == NULL)
        {
          g_message ("Cannot read the baseline %s: %s", self->baseline_file, local_error->message);
          g_clear_error (&local_error);
        }
    }

  since_ns = locked_get_started_ns (self);
  if (since_ns != 0)
    {
      if (paddock_baseline_record_since (self->workspace, self->baseline_file, since_ns,
                                         cancellable, &local_error))
        self->baseline = paddock_baseline_load (self->baseline_file, &local_error);
      if (self->baseline != NULL)
        return self->baseline;
      if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return NULL;
        }
      /* The older file still says what it can. */
      if (legacy != NULL)
        {
          g_message ("Could not walk %s again: its older baseline stands: %s",
                     self->workspace, local_error->message);
          self->baseline = g_steal_pointer (&legacy);
          return self->baseline;
        }
      g_message ("No baseline for %s: every change will count as a conflict: %s",
                 self->workspace, local_error->message);
    }
  else
    g_message ("No baseline for %s and no record of when its session started: every change "
               "will count as a conflict", self->workspace);

  self->baseline = paddock_baseline_new_unknown ();
  return self->baseline;
}

/* With the lock held: the copy's stamps as made, for a copy stage (NULL
 * for an overlay, or a copy made before they were recorded). */
static PaddockBaseline *
locked_get_copy_baseline (PaddockStage *self)
{
  if (self->kind != PADDOCK_STAGE_KIND_COPY)
    return NULL;
  if (self->copy_baseline == NULL && g_file_test (self->copy_baseline_file, G_FILE_TEST_EXISTS))
    {
      g_autoptr(GError) error = NULL;
      self->copy_baseline = paddock_baseline_load (self->copy_baseline_file, &error);
      if (self->copy_baseline == NULL)
        g_message ("Cannot read the copy's stamps %s: every difference will be listed: %s",
                   self->copy_baseline_file, error->message);
    }
  return self->copy_baseline;
}

static void forget_last_review (PaddockStage *self);

/* A rolled-back batch renamed entries back with a new ctime (see
 * paddock-apply-restored.c): where the baseline still has the stamp of
 * before, it takes the new one, so the review lists no false conflict;
 * then the record has served. */
static void
locked_take_restored (PaddockStage *self)
{
  g_autoptr(GHashTable) table = paddock_apply_restored_load (self->journal_dir);
  g_autoptr(GPtrArray) paths = g_ptr_array_new ();
  g_autoptr(GPtrArray) stamps = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  PaddockBaseline *baseline;
  GHashTableIter iter;
  gpointer value;

  if (g_hash_table_size (table) == 0)
    return;
  baseline = locked_get_baseline (self, NULL, &error);
  if (baseline == NULL)
    {
      g_message ("Cannot read the baseline of %s to record what a rollback put back: %s",
                 self->workspace, error->message);
      return;
    }
  g_hash_table_iter_init (&iter, table);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      PaddockApplyRestored *r = value;
      PaddockFileStamp then;

      paddock_baseline_lookup (baseline, r->path, &then);
      if (!paddock_file_stamp_equal (&then, &r->from))
        continue;
      g_ptr_array_add (paths, r->path);
      g_ptr_array_add (stamps, &r->to);
    }
  if (paths->len == 0)
    return;
  if (!paddock_baseline_update_many (baseline, paths, stamps, &error))
    {
      g_message ("Could not record what a rollback put back in %s: %s", self->workspace,
                 error->message);
      return;
    }
  forget_last_review (self);
  paddock_apply_restored_forget (self->journal_dir, paths);
}

/* Finishes or rolls back an apply a previous daemon left half-done. */
gboolean
paddock_stage_recover (PaddockStage  *self,
                       GError       **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  if (!paddock_apply_recover (self->journal_dir, self->workspace, NULL, error))
    return FALSE;
  locked_take_restored (self);
  return TRUE;
}

/* The last recovery's record (JSON), for status; NULL when there was none. */
char *
paddock_stage_dup_last_recovery (PaddockStage *self)
{
  return paddock_apply_dup_last_recovery (self->journal_dir);
}

/* Both sides of @rel as lstat() sees them now: the stage's, then the
 * workspace's. */
static void
stamp_both_sides (PaddockStage     *self,
                  const char       *rel,
                  PaddockFileStamp  stamps[2])
{
  const char *roots[2] = { self->root, self->workspace };

  for (guint i = 0; i < 2; i++)
    {
      g_autofree char *full = g_build_filename (roots[i], rel, NULL);
      struct stat st;

      memset (&stamps[i], 0, sizeof stamps[i]);
      if (lstat (full, &st) == 0)
        paddock_file_stamp_from_stat (&stamps[i], &st);
    }
}

static void
forget_last_review (PaddockStage *self)
{
  g_clear_object (&self->last_review);
  g_clear_pointer (&self->last_stamps, g_hash_table_unref);
}

/* Keeps @review for later diffs, with the stamps of every path it lists
 * (taken by the review before it read each entry). An entry changed since
 * @started_ns may have changed while the review read it: that path is not
 * kept, so its diff is always recomputed. */
static void
remember_review (PaddockStage  *self,
                 PaddockReview *review,
                 gint64         started_ns)
{
  GPtrArray *changes = paddock_review_get_changes (review);

  forget_last_review (self);
  self->last_review = g_object_ref (review);
  self->last_stamps = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  for (guint i = 0; i < changes->len; i++)
    {
      PaddockChange *change = g_ptr_array_index (changes, i);
      const char *sides[2] = { paddock_change_get_path (change), paddock_change_get_old_path (change) };

      for (guint s = 0; s < G_N_ELEMENTS (sides); s++)
        {
          PaddockFileStamp *stamps;

          if (sides[s] == NULL || g_hash_table_contains (self->last_stamps, sides[s]))
            continue;
          stamps = g_new0 (PaddockFileStamp, 2);
          /* As the review read them: no second lstat() of each path. */
          if (!paddock_review_get_stamps (review, sides[s], &stamps[0], &stamps[1]))
            stamp_both_sides (self, sides[s], stamps);
          if ((stamps[0].present && stamps[0].ctime_ns >= started_ns) ||
              (stamps[1].present && stamps[1].ctime_ns >= started_ns))
            {
              g_free (stamps);
              continue;
            }
          g_hash_table_insert (self->last_stamps, g_strdup (sides[s]), stamps);
        }
    }
}

static gboolean
still_stamped (PaddockStage *self,
               const char   *rel)
{
  PaddockFileStamp *kept;
  PaddockFileStamp now[2];

  if (rel == NULL)
    return TRUE;
  kept = g_hash_table_lookup (self->last_stamps, rel);
  if (kept == NULL)
    return FALSE;
  stamp_both_sides (self, rel, now);
  return paddock_file_stamp_equal (&kept[0], &now[0]) && paddock_file_stamp_equal (&kept[1], &now[1]);
}

static PaddockReview *
locked_review (PaddockStage  *self,
               GCancellable  *cancellable,
               GError       **error)
{
  PaddockBaseline *baseline = locked_get_baseline (self, cancellable, error);
  gint64 started_ns = paddock_file_time_now_ns ();
  g_autoptr(PaddockReview) review = NULL;

  if (baseline == NULL)
    return NULL;
  review = paddock_review_new (self->workspace, self->root, self->kind, baseline,
                               locked_get_copy_baseline (self), self->review_cache,
                               cancellable, error);
  if (review != NULL)
    remember_review (self, review, started_ns);
  return g_steal_pointer (&review);
}

/* The diff of one change, from the last review while neither side of it
 * changed since; a GetDiff per row of a large review list then costs a
 * few lstat()s, not a review each. */
GBytes *
paddock_stage_get_diff (PaddockStage  *self,
                        const char    *path,
                        GCancellable  *cancellable,
                        GError       **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  g_autoptr(PaddockReview) review = NULL;

  if (self->last_review != NULL)
    {
      PaddockChange *change = paddock_review_lookup (self->last_review, path);

      if (change != NULL && still_stamped (self, paddock_change_get_path (change)) &&
          still_stamped (self, paddock_change_get_old_path (change)))
        return paddock_review_get_diff (self->last_review, path, error);
    }

  review = locked_review (self, cancellable, error);
  if (review == NULL)
    return NULL;
  return paddock_review_get_diff (review, path, error);
}

PaddockReview *
paddock_stage_review (PaddockStage  *self,
                      GCancellable  *cancellable,
                      GError       **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  return locked_review (self, cancellable, error);
}

/* The changes @paths name (by their path or, for a rename, either side);
 * all of them when @paths is empty. */
static GPtrArray *
select_changes (GPtrArray          *changes,
                PaddockReview      *review,
                const char *const  *paths,
                GError            **error)
{
  g_autoptr(GPtrArray) chosen = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GHashTable) by_path = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                                          (GDestroyNotify) g_ptr_array_unref);
  g_autoptr(GHashTable) taken = g_hash_table_new (NULL, NULL);

  if (paths == NULL || paths[0] == NULL)
    {
      /* Everything that can be applied: a row apply cannot take (a path
       * over PATH_MAX…) is listed with its reason and left in the stage,
       * so one such path does not hold back the rest of the session. */
      for (guint i = 0; i < changes->len; i++)
        if (paddock_change_get_unappliable (g_ptr_array_index (changes, i)) == NULL)
          g_ptr_array_add (chosen, g_object_ref (g_ptr_array_index (changes, i)));
      return g_steal_pointer (&chosen);
    }

  /* Every row under each of its paths (a type change has two rows at one
   * path), so that each requested path is one lookup. */
  for (guint i = 0; i < changes->len; i++)
    {
      PaddockChange *change = g_ptr_array_index (changes, i);
      const char *sides[2] = { paddock_change_get_path (change), paddock_change_get_old_path (change) };

      for (guint k = 0; k < G_N_ELEMENTS (sides); k++)
        {
          GPtrArray *rows;

          if (sides[k] == NULL)
            continue;
          rows = g_hash_table_lookup (by_path, sides[k]);
          if (rows == NULL)
            {
              rows = g_ptr_array_new ();
              g_hash_table_insert (by_path, (gpointer) sides[k], rows);
            }
          g_ptr_array_add (rows, change);
        }
    }

  for (guint p = 0; paths[p] != NULL; p++)
    {
      GPtrArray *rows = g_hash_table_lookup (by_path, paths[p]);

      if (rows == NULL)
        {
          g_autofree char *shown = g_utf8_make_valid (paths[p], -1);
          PaddockChange *row = review != NULL ? paddock_review_lookup (review, paths[p]) : NULL;

          /* Named as a file change, but it is repository metadata: only
           * the option that names metadata may apply it. */
          if (row != NULL && paddock_change_get_metadata_reason (row) != NULL)
            g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_METADATA,
                         "“%s” is repository metadata (%s), not a file change: it is applied "
                         "only when named as metadata", shown, paddock_change_get_metadata_reason (row));
          else
            g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_NOT_FOUND,
                         "“%s” is not in the review list", shown);
          return NULL;
        }
      for (guint i = 0; i < rows->len; i++)
        {
          const char *why = paddock_change_get_unappliable (g_ptr_array_index (rows, i));

          if (why != NULL)
            {
              g_autofree char *shown = g_utf8_make_valid (paths[p], -1);
              g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_INVALID_PATH,
                           "“%s” cannot be applied: %s", shown, why);
              return NULL;
            }
          if (g_hash_table_add (taken, g_ptr_array_index (rows, i)))
            g_ptr_array_add (chosen, g_object_ref (g_ptr_array_index (rows, i)));
        }
    }
  return g_steal_pointer (&chosen);
}

static void
add_item (PaddockStage       *self,
          GPtrArray          *items,
          PaddockBaseline    *baseline,
          const char         *path,
          PaddockApplyAction  action,
          guint               group,
          GHashTable         *forced)
{
  PaddockApplyItem *item = g_new0 (PaddockApplyItem, 1);

  item->path = g_strdup (path);
  item->action = action;
  item->group = group;
  item->forced = g_hash_table_contains (forced, path);
  paddock_baseline_lookup (baseline, path, &item->baseline);
  g_ptr_array_add (items, item);
}

/* Whether the stage holds an entry at @rel (a whiteout is a deletion). */
static gboolean
stage_has_entry (PaddockStage *self,
                 const char   *rel)
{
  g_autofree char *full = g_build_filename (self->root, rel, NULL);
  struct stat st;

  if (lstat (full, &st) != 0)
    return FALSE;
  return !(S_ISCHR (st.st_mode) && st.st_rdev == 0);
}

/* One item per path: what the stage has there is what the workspace gets
 * (PUT), or nothing (REMOVE). Deciding from the stage itself, not from the
 * row's kind, folds the rows of a type change (a folder's files deleted,
 * then the folder replaced by a file; or a file replaced by a folder with
 * files in it) into the single item per path the batch expects. */
static void
add_path_item (PaddockStage    *self,
               GPtrArray       *items,
               GHashTable      *seen,
               PaddockBaseline *baseline,
               const char      *path,
               guint            group,
               GHashTable      *forced)
{
  if (g_hash_table_contains (seen, path))
    return;
  g_hash_table_add (seen, (gpointer) path);
  add_item (self, items, baseline, path,
            stage_has_entry (self, path) ? PADDOCK_APPLY_PUT : PADDOCK_APPLY_REMOVE,
            group, forced);
}

/* Pins the items of a reviewed batch: a PUT must write the pinned entry
 * (paddock-apply.c checks what it wrote), a REMOVE must still find the
 * stage empty there. Paths that no longer match are collected in @stale. */
static void
pin_items (PaddockStage       *self,
           PaddockReviewToken *token,
           GPtrArray          *items,
           GPtrArray          *stale)
{
  paddock_autofd int stage_fd = open (self->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  for (guint i = 0; i < items->len; i++)
    {
      PaddockApplyItem *item = g_ptr_array_index (items, i);
      const PaddockPin *pin = paddock_review_token_lookup_pin (token, item->path);
      PaddockPin now;

      if (pin == NULL || pin->unreadable || stage_fd < 0)
        {
          g_ptr_array_add (stale, g_strdup (item->path));
          continue;
        }
      if (pin->type == PADDOCK_ENTRY_TYPE_NONE)
        {
          item->action = PADDOCK_APPLY_REMOVE;
          (void) paddock_pin_stage_entry (stage_fd, item->path, FALSE, &now, NULL, NULL);
          if (now.unreadable || now.type != PADDOCK_ENTRY_TYPE_NONE)
            g_ptr_array_add (stale, g_strdup (item->path));
          paddock_pin_clear (&now);
          continue;
        }
      item->action = PADDOCK_APPLY_PUT;
      item->pinned = TRUE;
      item->pin_type = paddock_pin_type_bits (pin);
      item->pin_mode = pin->mode;
      item->pin_sha = g_strdup (pin->sha);
    }
}

static gboolean
stale_paths_error (GPtrArray  *stale,
                   GError    **error)
{
  g_autoptr(GString) names = g_string_new (NULL);

  for (guint i = 0; i < stale->len && i < 20; i++)
    {
      g_autofree char *shown = g_utf8_make_valid (g_ptr_array_index (stale, i), -1);
      g_string_append_printf (names, "%s“%s”", i > 0 ? ", " : "", shown);
    }
  if (stale->len > 20)
    g_string_append_printf (names, " and %u more", stale->len - 20);
  g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_REVIEW_STALE,
               "Changed in the stage since the review, so nothing was applied: %s "
               "(review again to see the new content)", names->str);
  return FALSE;
}

/* The batch of the rows @paths and @metadata_paths name in @review (all
 * its file changes when @paths is empty, no metadata unless named), pinned
 * by @token when there is one. */
static gboolean
locked_apply (PaddockStage        *self,
              PaddockReview       *review,
              PaddockReviewToken  *token,
              const char *const   *paths,
              const char *const   *force_paths,
              const char *const   *metadata_paths,
              const char          *who,
              PaddockApplyResult **result,
              GCancellable        *cancellable,
              GError             **error)
{
  g_autoptr(GPtrArray) chosen = NULL;
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func ((GDestroyNotify) paddock_apply_item_free);
  g_autoptr(GHashTable) forced = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(PaddockApplyResult) outcome = NULL;
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GError) local_error = NULL;
  PaddockBaseline *baseline;

  baseline = locked_get_baseline (self, cancellable, error);
  if (baseline == NULL)
    return FALSE;

  chosen = select_changes (paddock_review_get_changes (review), review, paths, error);
  if (chosen == NULL)
    return FALSE;
  /* Metadata only as named (never "all"): each one is a deliberate act. */
  if (metadata_paths != NULL && metadata_paths[0] != NULL)
    {
      g_autoptr(GPtrArray) meta = select_changes (paddock_review_get_metadata (review), NULL,
                                                  metadata_paths, error);
      if (meta == NULL)
        return FALSE;
      for (guint i = 0; i < meta->len; i++)
        g_ptr_array_add (chosen, g_object_ref (g_ptr_array_index (meta, i)));
    }
  for (guint i = 0; force_paths != NULL && force_paths[i] != NULL; i++)
    g_hash_table_add (forced, (gpointer) force_paths[i]);

  for (guint i = 0; i < chosen->len; i++)
    {
      PaddockChange *change = g_ptr_array_index (chosen, i);
      const char *path = paddock_change_get_path (change);
      const char *old_path = paddock_change_get_old_path (change);

      /* A rename is one group: both sides happen, or neither. */
      if (old_path != NULL)
        add_path_item (self, items, seen, baseline, old_path, i, forced);
      add_path_item (self, items, seen, baseline, path, i, forced);
    }
  /* A forced path that is not in the batch would be forced in vain, and
   * the caller would believe a conflict there was overwritten. */
  for (guint i = 0; force_paths != NULL && force_paths[i] != NULL; i++)
    if (!g_hash_table_contains (seen, force_paths[i]))
      {
        g_autofree char *shown = g_utf8_make_valid (force_paths[i], -1);

        g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_NOT_FOUND,
                     "“%s” is to be forced but is not among the changes applied", shown);
        return FALSE;
      }

  if (token != NULL)
    {
      g_autoptr(GPtrArray) stale = g_ptr_array_new_with_free_func (g_free);

      pin_items (self, token, items, stale);
      if (stale->len > 0)
        return stale_paths_error (stale, error);
    }

  forget_last_review (self);
  if (!paddock_apply_batch (self->workspace, self->root, self->journal_dir, self->ledger_file,
                            who, items, &outcome, cancellable, error))
    {
      locked_take_restored (self);
      return FALSE;
    }
  locked_take_restored (self);

  /* Applied paths now differ from the start on purpose: they must not
   * count as conflicts when the session changes them again. */
  if (!paddock_baseline_update_many (baseline, outcome->applied, outcome->new_stamps, &local_error))
    g_message ("Could not record the applied state of %u paths: %s", outcome->applied->len,
               local_error->message);

  *result = g_steal_pointer (&outcome);
  return TRUE;
}

/* Applies the file changes @paths names (all when empty) as a review made
 * now lists them; never repository metadata. Not pinned: the entries'
 * content is what the stage holds as the batch copies it. */
gboolean
paddock_stage_apply (PaddockStage        *self,
                     const char *const   *paths,
                     const char *const   *force_paths,
                     const char          *who,
                     PaddockApplyResult **result,
                     GCancellable        *cancellable,
                     GError             **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  g_autoptr(PaddockReview) review = NULL;

  review = locked_review (self, cancellable, error);
  if (review == NULL)
    return FALSE;
  return locked_apply (self, review, NULL, paths, force_paths, NULL, who, result, cancellable, error);
}

#define REVIEW_ATTEMPTS_MAX 3

/**
 * paddock_stage_review_pinned:
 *
 * A review whose every row's entries are pinned by content, kept as a
 * token for paddock_stage_apply_reviewed() (the last
 * PADDOCK_REVIEW_TOKENS_MAX of them).
 *
 * Returns: (transfer full): the token (its review is the list), or %NULL
 */
PaddockReviewToken *
paddock_stage_review_pinned (PaddockStage  *self,
                             GCancellable  *cancellable,
                             GError       **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  g_autoptr(PaddockReviewToken) token = NULL;

  /* An agent writing as we read makes the review and its pins disagree:
   * read again, a few times, rather than pin what nobody was shown. */
  for (guint attempt = 0; token == NULL; attempt++)
    {
      g_autoptr(PaddockReview) review = locked_review (self, cancellable, error);
      g_autoptr(GError) local_error = NULL;

      if (review == NULL)
        return NULL;
      token = paddock_review_token_new (review, self->root, cancellable, &local_error);
      if (token == NULL)
        {
          if (attempt + 1 < REVIEW_ATTEMPTS_MAX &&
              g_error_matches (local_error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_REVIEW_STALE))
            continue;
          if (g_error_matches (local_error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_REVIEW_STALE))
            g_prefix_error (&local_error, "The agent keeps rewriting its files (%u reviews): ",
                            REVIEW_ATTEMPTS_MAX);
          g_propagate_error (error, g_steal_pointer (&local_error));
          return NULL;
        }
    }
  /* An unchanged review keeps its token (and its id). */
  return paddock_review_tokens_add (self->tokens, token);
}

/**
 * paddock_stage_get_reviewed_diff:
 * @token_id: a token from paddock_stage_review_pinned()
 * @path: a row of that review (a file change or a metadata row)
 *
 * The diff of @path as that review read it: the very bytes its token
 * pins, whatever the stage holds now.
 */
GBytes *
paddock_stage_get_reviewed_diff (PaddockStage  *self,
                                 const char    *token_id,
                                 const char    *path,
                                 GError       **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  g_autoptr(PaddockReviewToken) token = paddock_review_tokens_lookup (self->tokens, token_id, error);

  if (token == NULL)
    return NULL;
  /* Under the stage's lock: a review's diffs are made one at a time. */
  return paddock_review_get_diff (paddock_review_token_get_review (token), path, error);
}

/**
 * paddock_stage_apply_reviewed:
 * @token: a token from paddock_stage_review_pinned()
 * @paths: file changes of that review to apply; empty for all of them
 * @force_paths: of those, the ones to apply even in conflict
 * @metadata_paths: (nullable): metadata rows of that review to apply too;
 *   never implied
 *
 * Applies rows of the review @token names exactly as that review pinned
 * them: if any entry's type, mode or content differs, nothing is applied
 * (PADDOCK_STAGING_ERROR_REVIEW_STALE or PADDOCK_APPLY_ERROR_STALE, naming
 * the paths). Rows the stage gained since are not applied.
 */
gboolean
paddock_stage_apply_reviewed (PaddockStage        *self,
                              const char          *token_id,
                              const char *const   *paths,
                              const char *const   *force_paths,
                              const char *const   *metadata_paths,
                              const char          *who,
                              PaddockApplyResult **result,
                              GCancellable        *cancellable,
                              GError             **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  g_autoptr(PaddockReviewToken) token = NULL;

  g_return_val_if_fail (token_id != NULL, FALSE);

  token = paddock_review_tokens_lookup (self->tokens, token_id, error);
  if (token == NULL)
    return FALSE;
  return locked_apply (self, paddock_review_token_get_review (token), token, paths, force_paths,
                       metadata_paths, who, result, cancellable, error);
}

static gpointer
ref_copy (gconstpointer object,
          gpointer      unused)
{
  return g_object_ref ((gpointer) object);
}

/* Empties a folder in place (the overlay's work folder, a whole drop). */
static gboolean
reset_dir (const char  *path,
           GError     **error)
{
  paddock_remove_tree (path);
  return paddock_ensure_private_dir (path, error);
}

/* Copies the workspace's entry at @rel (a file, link or whole folder) into
 * the stage at the same path. */
static gboolean
copy_from_workspace (PaddockStage  *self,
                     const char    *rel,
                     GCancellable  *cancellable,
                     GError       **error)
{
  g_autofree char *from = g_build_filename (self->workspace, rel, NULL);
  g_autofree char *to = g_build_filename (self->root, rel, NULL);
  g_autofree char *from_parent = g_path_get_dirname (from);
  g_autofree char *to_parent = g_path_get_dirname (to);
  g_autofree char *name = g_path_get_basename (from);
  g_autofree char *tmp_name = g_strdup_printf (".paddock-drop-%s", name);
  g_autofree char *tmp = g_build_filename (to_parent, tmp_name, NULL);

  paddock_remove_tree (tmp);
  /* Beside its destination first, then renamed over it: the stage never
   * holds half an entry. */
  if (!paddock_entry_copy (from_parent, name, to_parent, tmp_name, cancellable, error))
    {
      paddock_remove_tree (tmp);
      return FALSE;
    }
  paddock_remove_tree (to);
  if (g_rename (tmp, to) != 0)
    {
      int saved_errno = errno;
      paddock_remove_tree (tmp);
      return errno_error (error, saved_errno, "Could not place", to);
    }
  return TRUE;
}

/* Makes the stage show the workspace's own entry at @rel again. */
static gboolean
drop_path (PaddockStage  *self,
           const char    *rel,
           GCancellable  *cancellable,
           GError       **error)
{
  g_auto(GStrv) parts = g_strsplit (rel, "/", -1);
  g_autoptr(GString) stage_path = g_string_new (self->root);
  g_autoptr(GString) ws_path = g_string_new (self->workspace);
  g_autofree char *ws_entry = g_build_filename (self->workspace, rel, NULL);
  g_autofree char *stage_entry = g_build_filename (self->root, rel, NULL);
  guint n = g_strv_length (parts);
  struct stat st;

  /* The folders on the way. In an overlay upper a missing folder means
   * "unchanged, the workspace shows through" — and so does everything
   * below it: nothing to do. A whiteout or a non-folder there (the
   * session deleted or replaced the folder) becomes an opaque folder that
   * will hold just the entry brought back. A copy stage gets the folder
   * made. */
  for (guint i = 0; i + 1 < n; i++)
    {
      struct stat ws_st;

      g_string_append_c (stage_path, '/');
      g_string_append (stage_path, parts[i]);
      g_string_append_c (ws_path, '/');
      g_string_append (ws_path, parts[i]);

      if (lstat (stage_path->str, &st) == 0 && S_ISDIR (st.st_mode))
        continue;
      if (self->kind == PADDOCK_STAGE_KIND_OVERLAY && errno == ENOENT && lstat (stage_path->str, &st) != 0)
        return TRUE;
      if (lstat (ws_path->str, &ws_st) != 0 || !S_ISDIR (ws_st.st_mode))
        return TRUE;   /* the workspace has no folder here either */
      paddock_remove_tree (stage_path->str);
      if (g_mkdir (stage_path->str, ws_st.st_mode & 07777) != 0)
        return errno_error (error, errno, "Could not create", stage_path->str);
      if (self->kind == PADDOCK_STAGE_KIND_OVERLAY &&
          lsetxattr (stage_path->str, "user.overlay.opaque", "y", 1, 0) != 0)
        return errno_error (error, errno, "Could not mark opaque", stage_path->str);
    }

  if (lstat (ws_entry, &st) == 0)
    return copy_from_workspace (self, rel, cancellable, error);
  paddock_remove_tree (stage_entry);
  return TRUE;
}

/* Adds the copy's entry at @rel (or its absence) and, for a folder,
 * everything below it, with their stamps now. */
static void
note_copy_entries (PaddockStage *self,
                   const char   *rel,
                   GPtrArray    *relpaths,
                   GPtrArray    *stamps)
{
  g_autofree char *full = g_build_filename (self->root, rel, NULL);
  PaddockFileStamp *stamp = g_new0 (PaddockFileStamp, 1);
  struct stat st;
  GDir *dir;

  if (lstat (full, &st) == 0)
    paddock_file_stamp_from_stat (stamp, &st);
  g_ptr_array_add (relpaths, g_strdup (rel));
  g_ptr_array_add (stamps, stamp);
  if (!stamp->present || !S_ISDIR (st.st_mode) || (dir = g_dir_open (full, 0, NULL)) == NULL)
    return;
  for (const char *name = g_dir_read_name (dir); name != NULL; name = g_dir_read_name (dir))
    {
      g_autofree char *child = g_strconcat (rel, "/", name, NULL);
      note_copy_entries (self, child, relpaths, stamps);
    }
  g_dir_close (dir);
}

gboolean
paddock_stage_drop (PaddockStage       *self,
                    const char *const  *paths,
                    GCancellable       *cancellable,
                    GError            **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  g_autoptr(PaddockReview) review = NULL;
  g_autoptr(GPtrArray) chosen = NULL;
  g_autoptr(GPtrArray) relpaths = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) stamps = g_ptr_array_new_with_free_func (g_free);
  PaddockBaseline *copy_baseline;

  forget_last_review (self);
  if (paths == NULL || paths[0] == NULL)
    {
      if (self->kind == PADDOCK_STAGE_KIND_OVERLAY)
        return reset_dir (self->root, error) && reset_dir (self->work, error);
      paddock_remove_tree (self->root);
      return make_copy (self, cancellable, error);
    }

  review = locked_review (self, cancellable, error);
  if (review == NULL)
    return FALSE;
  copy_baseline = locked_get_copy_baseline (self);
  {
    /* Dropping is always safe: metadata rows may be named too (it is how
     * a user discards what the agent wrote into .git). */
    g_autoptr(GPtrArray) every = g_ptr_array_copy (paddock_review_get_changes (review),
                                                   ref_copy, NULL);

    g_ptr_array_set_free_func (every, g_object_unref);
    g_ptr_array_extend (every, paddock_review_get_metadata (review),
                        ref_copy, NULL);
    chosen = select_changes (every, NULL, paths, error);
  }
  if (chosen == NULL)
    return FALSE;
  for (guint i = 0; i < chosen->len; i++)
    {
      PaddockChange *change = g_ptr_array_index (chosen, i);
      const char *old_path = paddock_change_get_old_path (change);

      if (!drop_path (self, paddock_change_get_path (change), cancellable, error))
        return FALSE;
      if (old_path != NULL && !drop_path (self, old_path, cancellable, error))
        return FALSE;
      if (copy_baseline != NULL)
        {
          note_copy_entries (self, paddock_change_get_path (change), relpaths, stamps);
          if (old_path != NULL)
            note_copy_entries (self, old_path, relpaths, stamps);
        }
    }
  forget_last_review (self);

  /* What was dropped is the workspace's again, as the copy now has it: a
   * later edit of it by the user is theirs, not the session's. */
  if (copy_baseline != NULL && !paddock_baseline_update_many (copy_baseline, relpaths, stamps, error))
    return FALSE;
  return TRUE;
}

char *
paddock_stage_create_checkpoint (PaddockStage  *self,
                                 const char    *name,
                                 GCancellable  *cancellable,
                                 GError       **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  g_autoptr(PaddockReview) review = NULL;
  g_autoptr(GString) listed = NULL;
  g_autofree char *chosen = NULL;
  g_autofree char *list_file = NULL;
  g_autoptr(GError) local_error = NULL;

  if (self->kind != PADDOCK_STAGE_KIND_COPY || locked_get_copy_baseline (self) == NULL)
    return paddock_checkpoint_create (self->checkpoints_dir, name, self->root, cancellable, error);

  /* A restored copy has new stamps throughout: which of its entries are
   * the session's must be kept with the checkpoint. */
  review = locked_review (self, cancellable, error);
  if (review == NULL)
    return NULL;
  chosen = paddock_checkpoint_create (self->checkpoints_dir, name, self->root, cancellable, error);
  if (chosen == NULL)
    return NULL;

  listed = g_string_new (NULL);
  for (guint i = 0; i < paddock_review_get_changes (review)->len; i++)
    {
      PaddockChange *change = g_ptr_array_index (paddock_review_get_changes (review), i);
      const char *old_path = paddock_change_get_old_path (change);

      g_string_append_len (listed, paddock_change_get_path (change),
                           (gssize) strlen (paddock_change_get_path (change)) + 1);
      if (old_path != NULL)
        g_string_append_len (listed, old_path, (gssize) strlen (old_path) + 1);
    }
  list_file = g_build_filename (self->checkpoints_dir, chosen, COPY_CHANGES_FILE, NULL);
  /* Without it, a restore lists every difference: the safe way round. */
  if (!paddock_durable_file_replace (list_file, listed->str, (gssize) listed->len, 0600, &local_error))
    g_message ("Checkpoint %s: could not keep the session's paths: %s", chosen, local_error->message);
  return g_steal_pointer (&chosen);
}

GPtrArray *
paddock_stage_list_checkpoints (PaddockStage  *self,
                                GError       **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  return paddock_checkpoint_list (self->checkpoints_dir, error);
}

/* After a restore, copy/ has new stamps throughout: its stamps now are
 * the copy's, except for the paths the session had changed when the
 * checkpoint was made, which are always compared ("unknown" stamps, and
 * "was there" for those it had deleted). A checkpoint without that list
 * (made by an older daemon) leaves no stamps: every difference is listed. */
static gboolean
restamp_restored_copy (PaddockStage  *self,
                       const char    *name,
                       GCancellable  *cancellable,
                       GError       **error)
{
  g_autofree char *list_file = g_build_filename (self->checkpoints_dir, name, COPY_CHANGES_FILE, NULL);
  g_autofree char *listed = NULL;
  g_autoptr(GPtrArray) relpaths = g_ptr_array_new ();
  g_autoptr(GPtrArray) stamps = g_ptr_array_new ();
  PaddockFileStamp unknown = { TRUE, 0, 0, 0, 0, G_MININT64 };
  g_autoptr(GError) local_error = NULL;
  gsize length = 0;

  if (!forget_copy_baseline (self, error))
    return FALSE;
  if (!g_file_get_contents (list_file, &listed, &length, NULL))
    return TRUE;
  if (!record_copy_baseline (self, cancellable, error))
    return FALSE;

  for (gsize pos = 0; pos < length; )
    {
      const char *path = listed + pos;
      gsize len = strnlen (path, length - pos);

      if (pos + len == length)
        break;  /* not NUL-terminated: cut short */
      g_ptr_array_add (relpaths, (gpointer) path);
      g_ptr_array_add (stamps, &unknown);
      pos += len + 1;
    }
  if (!paddock_baseline_update_many (self->copy_baseline, relpaths, stamps, &local_error))
    {
      g_message ("Checkpoint %s: the session's paths could not be kept (%s): every difference "
                 "will be listed", name, local_error->message);
      return forget_copy_baseline (self, error);
    }
  return TRUE;
}

gboolean
paddock_stage_restore_checkpoint (PaddockStage  *self,
                                  const char    *name,
                                  GCancellable  *cancellable,
                                  GError       **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  forget_last_review (self);
  if (!paddock_checkpoint_restore (self->checkpoints_dir, name, self->root, cancellable, error))
    return FALSE;
  if (self->kind == PADDOCK_STAGE_KIND_COPY)
    return restamp_restored_copy (self, name, cancellable, error);
  /* overlayfs keeps scratch state in the work folder; it belongs to the
   * upper layer that just left. */
  return reset_dir (self->work, error);
}

/* The commits the agent made in the stage's repository, against the
 * workspace's repository as it is now (paddock-agent-commits.c). */
PaddockAgentCommits *
paddock_stage_list_commits (PaddockStage  *self,
                            GCancellable  *cancellable,
                            GError       **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  return paddock_agent_commits_new (self->workspace, self->root, self->kind, cancellable, error);
}

/* Lists the commits again and offers them as @branch of the workspace's
 * repository, in one locked step: what is applied is what was just read.
 * Sets the tip and how many objects were copied. */
gboolean
paddock_stage_apply_commits (PaddockStage  *self,
                             const char    *branch,
                             const char    *who,
                             char         **out_tip,
                             guint         *out_n_objects,
                             guint         *out_n_commits,
                             GCancellable  *cancellable,
                             GError       **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  g_autoptr(PaddockAgentCommits) commits = NULL;

  commits = paddock_agent_commits_new (self->workspace, self->root, self->kind, cancellable, error);
  if (commits == NULL ||
      !paddock_agent_commits_apply (commits, branch, self->ledger_file, who, out_n_objects, error))
    return FALSE;
  if (out_tip != NULL)
    *out_tip = g_strdup (paddock_agent_commits_get_tip (commits));
  if (out_n_commits != NULL)
    *out_n_commits = paddock_agent_commits_get_commits (commits)->len;
  return TRUE;
}
