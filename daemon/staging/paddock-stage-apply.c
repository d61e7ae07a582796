/* paddock-stage-apply.c — the items of an apply, their pins, and the reviewed apply
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Part of PaddockStage (paddock-stage.c: the stage, its baseline and reviews).
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

GPtrArray *
select_changes (GPtrArray          *changes,
                PaddockReview      *review,
                const char *const  *paths,
                SelectPurpose       purpose,
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
        if (purpose == SELECT_FOR_DROP || paddock_change_get_unappliable (g_ptr_array_index (changes, i)) == NULL)
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

          if (why != NULL && purpose == SELECT_FOR_APPLY)
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
      /* The bytes themselves, from the token's review: what the user's
       * diff was made of. */
      if (pin->in_review)
        item->pin_review = g_object_ref (paddock_review_token_get_review (token));
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

  chosen = select_changes (paddock_review_get_changes (review), review, paths, SELECT_FOR_APPLY, error);
  if (chosen == NULL)
    return FALSE;
  /* Metadata only as named (never "all"): each one is a deliberate act. */
  if (metadata_paths != NULL && metadata_paths[0] != NULL)
    {
      g_autoptr(GPtrArray) meta = select_changes (paddock_review_get_metadata (review), NULL,
                                                  metadata_paths, SELECT_FOR_APPLY, error);
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
