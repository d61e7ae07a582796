/* paddock-review-cache.c — what one review learnt that the next can reuse
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A review reads and hashes both sides of every change and diffs each
 * pair for its line counts; the next review of an unchanged stage would do
 * it all again. Like git's index, this remembers a file's blob id by what
 * lstat() says of it (device, inode, size, mode, mtime, ctime), and a pair
 * of blobs' line counts by their ids.
 *
 * Racy entries: a file written in the same clock tick as it was stat'ed
 * could keep its stamp while its bytes change. The kernel stamps writes
 * with the coarse clock, so an entry whose ctime is before the review
 * began has not been written since; only those are remembered.
 *
 * Bounded: a review starts a new generation and what it used or learnt
 * replaces the old one when it commits, so the cache never holds more than
 * one review's worth. Not thread-safe: the stage runs one review at a time.
 */

#include "config.h"

#include <string.h>

#include "paddock-review-cache.h"
#include "paddock-file-stamp.h"

typedef struct {
  guint64 dev;
  guint64 ino;
  guint64 size;
  gint64  mtime_ns;
  gint64  ctime_ns;
  guint32 mode;
  guint32 padding;
} BlobKey;

typedef struct {
  git_oid old_id;
  git_oid new_id;
} PairKey;

struct _PaddockReviewCache
{
  GObject parent_instance;

  gint64 started_ns;
  /* The last committed generation, and the one being built. */
  GHashTable *blobs;        /* BlobKey → git_oid */
  GHashTable *stats;        /* PairKey → PaddockLineStats */
  GHashTable *next_blobs;
  GHashTable *next_stats;
};

G_DEFINE_FINAL_TYPE (PaddockReviewCache, paddock_review_cache, G_TYPE_OBJECT)

static guint
blob_key_hash (gconstpointer key)
{
  const BlobKey *k = key;

  return (guint) (k->ino * 0x9e3779b97f4a7c15ULL ^ (guint64) k->ctime_ns ^ k->size ^ (k->dev << 17));
}

static gboolean
blob_key_equal (gconstpointer a,
                gconstpointer b)
{
  return memcmp (a, b, sizeof (BlobKey)) == 0;
}

static guint
pair_key_hash (gconstpointer key)
{
  const PairKey *k = key;
  guint h;
  guint g;

  /* Blob ids are uniformly distributed already. */
  memcpy (&h, k->old_id.id, sizeof h);
  memcpy (&g, k->new_id.id, sizeof g);
  return h ^ (g * 31);
}

static gboolean
pair_key_equal (gconstpointer a,
                gconstpointer b)
{
  return memcmp (a, b, sizeof (PairKey)) == 0;
}

static GHashTable *
new_blobs (void)
{
  return g_hash_table_new_full (blob_key_hash, blob_key_equal, g_free, g_free);
}

static GHashTable *
new_stats (void)
{
  return g_hash_table_new_full (pair_key_hash, pair_key_equal, g_free, g_free);
}

static void
paddock_review_cache_finalize (GObject *object)
{
  PaddockReviewCache *self = PADDOCK_REVIEW_CACHE (object);

  g_clear_pointer (&self->blobs, g_hash_table_unref);
  g_clear_pointer (&self->stats, g_hash_table_unref);
  g_clear_pointer (&self->next_blobs, g_hash_table_unref);
  g_clear_pointer (&self->next_stats, g_hash_table_unref);

  G_OBJECT_CLASS (paddock_review_cache_parent_class)->finalize (object);
}

static void
paddock_review_cache_class_init (PaddockReviewCacheClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = paddock_review_cache_finalize;
}

static void
paddock_review_cache_init (PaddockReviewCache *self)
{
  self->blobs = new_blobs ();
  self->stats = new_stats ();
}

PaddockReviewCache *
paddock_review_cache_new (void)
{
  return g_object_new (PADDOCK_TYPE_REVIEW_CACHE, NULL);
}

/* Starts a review that began at @started_ns (paddock_file_time_now_ns()). */
void
paddock_review_cache_begin (PaddockReviewCache *self,
                            gint64              started_ns)
{
  g_return_if_fail (PADDOCK_IS_REVIEW_CACHE (self));

  self->started_ns = started_ns;
  g_clear_pointer (&self->next_blobs, g_hash_table_unref);
  g_clear_pointer (&self->next_stats, g_hash_table_unref);
  self->next_blobs = new_blobs ();
  self->next_stats = new_stats ();
}

/* The review succeeded: what it used is what the cache holds now. (A
 * review that failed never commits, and the previous generation stays.) */
void
paddock_review_cache_commit (PaddockReviewCache *self)
{
  g_return_if_fail (PADDOCK_IS_REVIEW_CACHE (self));
  g_return_if_fail (self->next_blobs != NULL);

  g_clear_pointer (&self->blobs, g_hash_table_unref);
  g_clear_pointer (&self->stats, g_hash_table_unref);
  self->blobs = g_steal_pointer (&self->next_blobs);
  self->stats = g_steal_pointer (&self->next_stats);
}

static void
blob_key_from_stat (BlobKey           *key,
                    const struct stat *st)
{
  memset (key, 0, sizeof *key);
  key->dev = st->st_dev;
  key->ino = st->st_ino;
  key->size = (guint64) st->st_size;
  key->mtime_ns = paddock_timespec_ns (&st->st_mtim);
  key->ctime_ns = paddock_timespec_ns (&st->st_ctim);
  key->mode = st->st_mode;
}

/* The blob id of the file @st describes (fstat() of the open file, before
 * reading it), when an earlier review hashed it with this very stamp. */
gboolean
paddock_review_cache_lookup_blob (PaddockReviewCache *self,
                                  const struct stat  *st,
                                  git_oid            *out)
{
  BlobKey key;
  const git_oid *oid;

  g_return_val_if_fail (PADDOCK_IS_REVIEW_CACHE (self), FALSE);
  g_return_val_if_fail (self->next_blobs != NULL, FALSE);

  blob_key_from_stat (&key, st);
  oid = g_hash_table_lookup (self->blobs, &key);
  if (oid == NULL)
    return FALSE;
  *out = *oid;
  g_hash_table_replace (self->next_blobs, g_memdup2 (&key, sizeof key), g_memdup2 (oid, sizeof *oid));
  return TRUE;
}

/* Remembers that the file @st describes hashed to @oid, unless it was
 * written too recently to be sure of (see the top of this file). */
void
paddock_review_cache_add_blob (PaddockReviewCache *self,
                               const struct stat  *st,
                               const git_oid      *oid)
{
  BlobKey key;

  g_return_if_fail (PADDOCK_IS_REVIEW_CACHE (self));
  g_return_if_fail (self->next_blobs != NULL);

  blob_key_from_stat (&key, st);
  if (key.ctime_ns >= self->started_ns || key.mtime_ns >= self->started_ns)
    return;
  g_hash_table_replace (self->next_blobs, g_memdup2 (&key, sizeof key), g_memdup2 (oid, sizeof *oid));
}

gboolean
paddock_review_cache_lookup_stats (PaddockReviewCache *self,
                                   const git_oid      *old_id,
                                   const git_oid      *new_id,
                                   PaddockLineStats   *out)
{
  PairKey key;
  const PaddockLineStats *stats;

  g_return_val_if_fail (PADDOCK_IS_REVIEW_CACHE (self), FALSE);
  g_return_val_if_fail (self->next_stats != NULL, FALSE);

  memset (&key, 0, sizeof key);
  key.old_id = *old_id;
  key.new_id = *new_id;
  stats = g_hash_table_lookup (self->stats, &key);
  if (stats == NULL)
    return FALSE;
  *out = *stats;
  g_hash_table_replace (self->next_stats, g_memdup2 (&key, sizeof key), g_memdup2 (stats, sizeof *stats));
  return TRUE;
}

/* Line counts depend on the two blobs' bytes only: no racy case here. */
void
paddock_review_cache_add_stats (PaddockReviewCache     *self,
                                const git_oid          *old_id,
                                const git_oid          *new_id,
                                const PaddockLineStats *stats)
{
  PairKey key;

  g_return_if_fail (PADDOCK_IS_REVIEW_CACHE (self));
  g_return_if_fail (self->next_stats != NULL);

  memset (&key, 0, sizeof key);
  key.old_id = *old_id;
  key.new_id = *new_id;
  g_hash_table_replace (self->next_stats, g_memdup2 (&key, sizeof key), g_memdup2 (stats, sizeof *stats));
}
