/* paddock-review-token.c — what a review listed, pinned by content, for an apply of exactly that
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Why: the agent may still be running while the user reads the review. If
 * the apply copied whatever the stage holds at that later moment, the user
 * would review `+echo harmless` and land what the agent wrote since. A
 * review token names one review: its rows, and for each of their paths
 * what the stage entry was (type, permission bits, content): wherever the
 * review kept the bytes it read and shows (a file up to
 * PADDOCK_REVIEW_MAX_BLOB_SIZE, a symlink's text) the content is those
 * bytes themselves, held by the token's review; otherwise (a larger file)
 * the SHA-256 of the stage's content (paddock-content-hash.c). Applying
 * with the token applies those rows only, and paddock-apply.c checks the
 * bytes it wrote to each temporary file against the pin (byte for byte,
 * or by digest) before anything is renamed into place: one difference
 * refuses the whole batch.
 *
 * A token id is 128 random bits: knowing one proves nothing (every client
 * allowed to apply may review), it only has to be unambiguous.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "paddock-beneath.h"
#include "paddock-autofd.h"
#include "paddock-content-hash.h"
#include "paddock-review-token.h"

struct _PaddockReviewToken
{
  gint           ref_count;
  char          *id;
  gint64         created_us;  /* monotonic */
  PaddockReview *review;
  GHashTable    *pins;        /* path → PaddockPin */
};

void
paddock_pin_clear (PaddockPin *pin)
{
  g_clear_pointer (&pin->sha, g_free);
  memset (pin, 0, sizeof *pin);
}

static void
pin_free (PaddockPin *pin)
{
  paddock_pin_clear (pin);
  g_free (pin);
}

/* S_IFREG, S_IFLNK, S_IFDIR, or 0 for an absent or unreadable entry. */
guint32
paddock_pin_type_bits (const PaddockPin *pin)
{
  if (pin->unreadable)
    return 0;
  switch (pin->type)
    {
    case PADDOCK_ENTRY_TYPE_FILE:
      return S_IFREG;
    case PADDOCK_ENTRY_TYPE_SYMLINK:
      return S_IFLNK;
    case PADDOCK_ENTRY_TYPE_DIRECTORY:
      return S_IFDIR;
    case PADDOCK_ENTRY_TYPE_NONE:
    default:
      return 0;
    }
}

/**
 * paddock_pin_stage_entry:
 * @stage_fd: the stage root
 * @rel: a path beneath it
 * @with_content: FALSE to learn the type and mode only
 * @out: (out caller-allocates): the pin; clear it with paddock_pin_clear()
 *
 * What the stage holds at @rel, never following a symlink on the way (the
 * agent writes the stage). An entry that cannot be read, or that changed
 * while it was read, is pinned as unreadable: it matches nothing, so its
 * apply is refused rather than guessed.
 *
 * Returns: FALSE only when cancelled
 */
gboolean
paddock_pin_stage_entry (int            stage_fd,
                         const char    *rel,
                         gboolean       with_content,
                         PaddockPin    *out,
                         GCancellable  *cancellable,
                         GError       **error)
{
  g_autofree char *parent = NULL;
  const char *slash = strrchr (rel, '/');
  const char *name = slash != NULL ? slash + 1 : rel;
  paddock_autofd int dir_fd = -1;
  struct stat st;

  memset (out, 0, sizeof *out);
  parent = slash != NULL ? g_strndup (rel, (gsize) (slash - rel)) : g_strdup ("");
  dir_fd = paddock_open_beneath (stage_fd, parent, O_RDONLY | O_DIRECTORY);
  if (dir_fd < 0)
    {
      /* No such folder, or a file where a folder was: nothing at @rel. A
       * symlink on the way (ELOOP, EXDEV) is not a place to read from. */
      out->unreadable = !(errno == ENOENT || errno == ENOTDIR);
      return TRUE;
    }
  if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    {
      out->unreadable = errno != ENOENT;
      return TRUE;
    }
  out->mode = st.st_mode & 07777;
  if (S_ISCHR (st.st_mode) && st.st_rdev == 0)
    {
      out->mode = 0;  /* an overlay whiteout: deleted */
      return TRUE;
    }
  if (S_ISDIR (st.st_mode))
    out->type = PADDOCK_ENTRY_TYPE_DIRECTORY;
  else if (S_ISLNK (st.st_mode))
    {
      char buf[PATH_MAX + 1];
      gssize n;

      out->type = PADDOCK_ENTRY_TYPE_SYMLINK;
      if (!with_content)
        return TRUE;
      n = readlinkat (dir_fd, name, buf, sizeof buf - 1);
      if (n < 0)
        out->unreadable = TRUE;
      else if ((out->sha = paddock_content_hash_bytes (buf, (gsize) n)) == NULL)
        out->unreadable = TRUE;
    }
  else if (S_ISREG (st.st_mode))
    {
      paddock_autofd int fd = -1;
      struct stat fst;
      g_autoptr(GError) local_error = NULL;

      out->type = PADDOCK_ENTRY_TYPE_FILE;
      if (!with_content)
        return TRUE;
      fd = openat (dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0 || fstat (fd, &fst) != 0 || fst.st_ino != st.st_ino || !S_ISREG (fst.st_mode))
        {
          out->unreadable = TRUE;
          return TRUE;
        }
      out->mode = fst.st_mode & 07777;
      out->sha = paddock_content_hash_fd (fd, cancellable, &local_error);
      if (out->sha == NULL)
        {
          if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
            {
              g_propagate_error (error, g_steal_pointer (&local_error));
              return FALSE;
            }
          out->unreadable = TRUE;
        }
    }
  else
    out->unreadable = TRUE;  /* a fifo, socket or device: never applied */
  return TRUE;
}

static gboolean
pin_path (PaddockReviewToken *self,
          int                 stage_fd,
          const char         *path,
          GCancellable       *cancellable,
          GError            **error)
{
  PaddockPin *pin;

  if (path == NULL || g_hash_table_contains (self->pins, path))
    return TRUE;
  pin = g_new0 (PaddockPin, 1);
  if (!paddock_pin_stage_entry (stage_fd, path, TRUE, pin, cancellable, error))
    {
      pin_free (pin);
      return FALSE;
    }
  g_hash_table_insert (self->pins, g_strdup (path), pin);
  return TRUE;
}

/* Pins @change's path to what @review read of it, when the review kept
 * its new side's bytes (a file up to PADDOCK_REVIEW_MAX_BLOB_SIZE, a
 * symlink's text): the type and permission bits the review listed, and
 * those very bytes, which the token keeps with its review. Nothing is read
 * or hashed here: the apply compares what it wrote with the kept bytes,
 * byte for byte (paddock-stage-apply.c), so content the agent rewrote
 * since is refused there, named. Returns FALSE when the row and its bytes
 * disagree (it changed between the two reads of the review); TRUE
 * otherwise, the path then pinned or left for pin_path(). */
static gboolean
pin_from_review (PaddockReviewToken *self,
                 PaddockReview      *review,
                 PaddockChange      *change)
{
  const char *path = paddock_change_get_path (change);
  PaddockEntryType type = paddock_change_get_entry_type (change);
  guint32 mode = paddock_change_get_new_mode (change);
  PaddockPin *pin;

  if (path == NULL || g_hash_table_contains (self->pins, path))
    return TRUE;
  if (type != PADDOCK_ENTRY_TYPE_FILE && type != PADDOCK_ENTRY_TYPE_SYMLINK)
    return TRUE;
  if ((mode & S_IFMT) != (type == PADDOCK_ENTRY_TYPE_FILE ? S_IFREG : S_IFLNK))
    return (mode & S_IFMT) == 0;  /* no mode listed: pin_path() reads the stage */
  pin = g_new0 (PaddockPin, 1);
  if (!paddock_review_get_new_content_id (review, path, pin->content_id))
    {
      g_free (pin);
      return TRUE;  /* too large to be kept: hashed from the stage */
    }
  pin->type = type;
  pin->mode = mode & 07777;
  pin->in_review = TRUE;
  g_hash_table_insert (self->pins, g_strdup (path), pin);
  return TRUE;
}

static char *
random_id (void)
{
  g_autofree char *uuid = g_uuid_string_random ();
  GString *id = g_string_new (NULL);

  for (const char *c = uuid; *c; c++)
    if (*c != '-')
      g_string_append_c (id, *c);
  return g_string_free (id, FALSE);
}

static PaddockReviewToken *
changed_while_reviewed (const char  *path,
                        GError     **error)
{
  g_autofree char *shown = g_utf8_make_valid (path, -1);

  g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_REVIEW_STALE,
               "“%s” changed while the review read it", shown);
  return NULL;
}

/**
 * paddock_review_token_new:
 * @review: the review to pin
 * @stage_root: the stage it was taken of
 *
 * Pins every path of @review's rows, file changes and metadata alike.
 *
 * Returns: (transfer full): the token, or %NULL with @error set
 */
PaddockReviewToken *
paddock_review_token_new (PaddockReview  *review,
                          const char     *stage_root,
                          GCancellable   *cancellable,
                          GError        **error)
{
  g_autoptr(PaddockReviewToken) self = g_new0 (PaddockReviewToken, 1);
  paddock_autofd int stage_fd = -1;
  GPtrArray *lists[2] = { paddock_review_get_changes (review), paddock_review_get_metadata (review) };

  self->ref_count = 1;
  self->id = random_id ();
  self->created_us = g_get_monotonic_time ();
  self->review = g_object_ref (review);
  self->pins = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) pin_free);

  stage_fd = open (stage_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (stage_fd < 0)
    {
      int saved_errno = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not open the stage: %s", g_strerror (saved_errno));
      return NULL;
    }
  /* First the rows whose new side the review read whole: their pin is
   * the very bytes the review read, the ones the user's diff is made of.
   * Reading the stage again here would only add a second read of every
   * changed byte (~35 % of a review of 1,000 files), and hashing the kept
   * bytes 5-8 ms (~5 %): neither proves anything the apply does not check
   * anyway, comparing what it writes with those bytes. */
  for (guint l = 0; l < G_N_ELEMENTS (lists); l++)
    for (guint i = 0; i < lists[l]->len; i++)
      if (!pin_from_review (self, review, g_ptr_array_index (lists[l], i)))
        return changed_while_reviewed (paddock_change_get_path (g_ptr_array_index (lists[l], i)), error);
  /* The rest from the stage: deletions and a move's old name (absent),
   * folders (type and mode), files too large to be kept (hashed from the
   * stage, by their data extents). */
  for (guint l = 0; l < G_N_ELEMENTS (lists); l++)
    for (guint i = 0; i < lists[l]->len; i++)
      {
        PaddockChange *change = g_ptr_array_index (lists[l], i);

        if (!pin_path (self, stage_fd, paddock_change_get_path (change), cancellable, error) ||
            !pin_path (self, stage_fd, paddock_change_get_old_path (change), cancellable, error))
          return NULL;
      }
  return g_steal_pointer (&self);
}

PaddockReviewToken *
paddock_review_token_ref (PaddockReviewToken *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_atomic_int_inc (&self->ref_count);
  return self;
}

void
paddock_review_token_unref (PaddockReviewToken *self)
{
  if (self == NULL || !g_atomic_int_dec_and_test (&self->ref_count))
    return;
  g_free (self->id);
  g_clear_object (&self->review);
  g_clear_pointer (&self->pins, g_hash_table_unref);
  g_free (self);
}

const char *
paddock_review_token_get_id (PaddockReviewToken *self)
{
  return self->id;
}

/* Returns: (transfer none): the review the token pinned */
PaddockReview *
paddock_review_token_get_review (PaddockReviewToken *self)
{
  return self->review;
}

/* Returns: (transfer none) (nullable): the pin of @path, a path of one of
 * the review's rows */
const PaddockPin *
paddock_review_token_lookup_pin (PaddockReviewToken *self,
                                 const char         *path)
{
  return g_hash_table_lookup (self->pins, path);
}

guint
paddock_review_token_get_n_pins (PaddockReviewToken *self)
{
  return g_hash_table_size (self->pins);
}

static gboolean
pins_equal (const PaddockPin *a,
            const PaddockPin *b)
{
  return a->type == b->type && a->mode == b->mode && a->unreadable == b->unreadable &&
         g_strcmp0 (a->sha, b->sha) == 0 && a->in_review == b->in_review &&
         (!a->in_review || memcmp (a->content_id, b->content_id, sizeof a->content_id) == 0);
}

static gboolean
rows_equal (GPtrArray *a,
            GPtrArray *b)
{
  if (a->len != b->len)
    return FALSE;
  for (guint i = 0; i < a->len; i++)
    {
      PaddockChange *x = g_ptr_array_index (a, i);
      PaddockChange *y = g_ptr_array_index (b, i);

      if (g_strcmp0 (paddock_change_get_path (x), paddock_change_get_path (y)) != 0 ||
          g_strcmp0 (paddock_change_get_old_path (x), paddock_change_get_old_path (y)) != 0 ||
          paddock_change_get_kind (x) != paddock_change_get_kind (y) ||
          paddock_change_get_entry_type (x) != paddock_change_get_entry_type (y) ||
          paddock_change_get_old_mode (x) != paddock_change_get_old_mode (y) ||
          paddock_change_get_new_mode (x) != paddock_change_get_new_mode (y) ||
          paddock_change_get_binary (x) != paddock_change_get_binary (y) ||
          paddock_change_get_added_lines (x) != paddock_change_get_added_lines (y) ||
          paddock_change_get_removed_lines (x) != paddock_change_get_removed_lines (y) ||
          paddock_change_get_conflict (x) != paddock_change_get_conflict (y) ||
          g_strcmp0 (paddock_change_get_metadata_reason (x), paddock_change_get_metadata_reason (y)) != 0)
        return FALSE;
    }
  return TRUE;
}

/* Whether @a and @b list the same rows with the same pins: the same review
 * as far as anyone can tell (its diffs are then the same too). */
static gboolean
tokens_equal (PaddockReviewToken *a,
              PaddockReviewToken *b)
{
  GHashTableIter iter;
  gpointer key, value;

  if (g_hash_table_size (a->pins) != g_hash_table_size (b->pins) ||
      !rows_equal (paddock_review_get_changes (a->review), paddock_review_get_changes (b->review)) ||
      !rows_equal (paddock_review_get_metadata (a->review), paddock_review_get_metadata (b->review)))
    return FALSE;
  g_hash_table_iter_init (&iter, a->pins);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      const PaddockPin *other = g_hash_table_lookup (b->pins, key);

      if (other == NULL || !pins_equal (value, other))
        return FALSE;
    }
  return TRUE;
}

/**
 * paddock_review_tokens_add:
 * @tokens: (element-type PaddockReviewToken): a stage's tokens, oldest first
 * @token: a new token
 *
 * Keeps @token, dropping the oldest beyond PADDOCK_REVIEW_TOKENS_MAX; but
 * when the newest kept token lists the same rows with the same pins, that
 * one is kept instead (and made young again): a client that refreshes an
 * unchanged review every few seconds (the app) then does not push out the
 * token a user is about to apply with.
 *
 * Returns: (transfer full): the token to hand out
 */
PaddockReviewToken *
paddock_review_tokens_add (GPtrArray          *tokens,
                           PaddockReviewToken *token)
{
  if (tokens->len > 0)
    {
      PaddockReviewToken *newest = g_ptr_array_index (tokens, tokens->len - 1);

      if (tokens_equal (newest, token))
        {
          newest->created_us = g_get_monotonic_time ();
          return paddock_review_token_ref (newest);
        }
    }
  while (tokens->len >= PADDOCK_REVIEW_TOKENS_MAX)
    g_ptr_array_remove_index (tokens, 0);
  g_ptr_array_add (tokens, paddock_review_token_ref (token));
  return paddock_review_token_ref (token);
}

/* Returns: (transfer full): the token @id, or %NULL with
 * PADDOCK_STAGING_ERROR_REVIEW_EXPIRED when it is unknown, was dropped for
 * newer ones, or is older than PADDOCK_REVIEW_TOKEN_MAX_AGE_US. */
PaddockReviewToken *
paddock_review_tokens_lookup (GPtrArray   *tokens,
                              const char  *id,
                              GError     **error)
{
  gint64 now = g_get_monotonic_time ();

  for (guint i = 0; i < tokens->len; i++)
    {
      PaddockReviewToken *token = g_ptr_array_index (tokens, i);

      if (!g_str_equal (token->id, id))
        continue;
      if (now - token->created_us > PADDOCK_REVIEW_TOKEN_MAX_AGE_US)
        {
          g_ptr_array_remove_index (tokens, i);
          break;
        }
      return paddock_review_token_ref (token);
    }
  g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_REVIEW_EXPIRED,
               "The review “%.64s” is unknown or expired (a session keeps its last %u reviews, "
               "for at most %u hours): review again", id, PADDOCK_REVIEW_TOKENS_MAX,
               (guint) (PADDOCK_REVIEW_TOKEN_MAX_AGE_US / G_TIME_SPAN_HOUR));
  return NULL;
}
