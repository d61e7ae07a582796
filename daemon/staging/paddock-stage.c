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
#include "paddock-stage-private.h"

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

gboolean
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
gboolean
forget_copy_baseline (PaddockStage  *self,
                      GError       **error)
{
  g_clear_object (&self->copy_baseline);
  if (unlink (self->copy_baseline_file) != 0 && errno != ENOENT)
    return errno_error (error, errno, "Could not remove", self->copy_baseline_file);
  return TRUE;
}

/* Records the stamps of copy/ as it is now, just written. */
gboolean
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
gboolean
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

/* The moment the baseline stands for: every change to the workspace before
 * it must carry a ctime before it, every change after it a ctime at or
 * after it, or a file made just before the start makes whatever the agent
 * adds in its folder a conflict (2 of 30 scripted starts here), or a
 * change made just after goes unseen.
 *
 * The coarse clock alone is not such a moment: a folder changed just
 * before may carry a fine-grained ctime up to two ticks ahead of it
 * (multigrain timestamps, kernel 6.13+; measured here: 7.3 ms). Waiting
 * for the coarse clock to pass the precise one is (it costs up to those
 * ticks: 3-8 ms here, most of a start). Where the kernel stamps changes
 * at or after the latest fine-grained stamp it handed out (multigrain's
 * floor, global), a fresh fine-grained stamp is such a moment at once:
 * this one is made on a marker in the stage's folder, and trusted only
 * when that folder is on the workspace's file system and a change made
 * there after it, to a folder nobody asked the ctime of, is stamped at
 * or after it while the coarse clock is still behind it. Anywhere else
 * (older kernels, other file systems, the workspace elsewhere) it waits. */
static gint64
read_start_moment (PaddockStage *self)
{
  g_autofree char *marker = g_build_filename (self->dir, "moment", NULL);
  g_autofree char *probe = g_build_filename (self->dir, "moment-probe", NULL);
  paddock_autofd int marker_fd = -1;
  paddock_autofd int probe_fd = -1;
  struct stat workspace_st, marker_st, probe_st;
  gint64 moment_ns;
  gboolean floor_holds = FALSE;

  (void) rmdir (probe);
  if (stat (self->workspace, &workspace_st) == 0 &&
      mkdir (probe, 0700) == 0 &&
      (marker_fd = open (marker, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) >= 0 &&
      fstat (marker_fd, &marker_st) == 0 &&
      marker_st.st_dev == workspace_st.st_dev &&
      futimens (marker_fd, NULL) == 0 &&
      fstat (marker_fd, &marker_st) == 0)
    {
      moment_ns = paddock_timespec_ns (&marker_st.st_ctim);
      probe_fd = open (probe, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (probe_fd >= 0 && mkdirat (probe_fd, "x", 0700) == 0)
        {
          /* Read the coarse clock before the probe's ctime: if it is still
           * behind the moment, only the floor can have put the probe's
           * change at or after it. */
          gint64 coarse_ns = paddock_file_time_now_ns ();

          floor_holds = fstat (probe_fd, &probe_st) == 0 &&
                        coarse_ns < moment_ns &&
                        paddock_timespec_ns (&probe_st.st_ctim) >= moment_ns;
          (void) unlinkat (probe_fd, "x", AT_REMOVEDIR);
        }
    }
  (void) rmdir (probe);
  if (floor_holds)
    return moment_ns;
  g_debug ("Stage %s: the file system does not stamp changes after its latest fine-grained stamp; "
           "the start waits for the coarse clock", self->dir);
  paddock_file_time_wait_past_now ();
  return paddock_file_time_now_ns ();
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
   * walk for this moment (locked_get_baseline()); see read_start_moment(). */
  started_ns = read_start_moment (self);
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
PaddockBaseline *
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
PaddockBaseline *
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

/* A rolled-back batch renamed entries back with a new ctime (see
 * paddock-apply-restored.c): where the baseline still has the stamp of
 * before, it takes the new one, so the review lists no false conflict;
 * then the record has served. */
void
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

void
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

PaddockReview *
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