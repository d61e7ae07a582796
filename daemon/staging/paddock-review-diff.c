/* paddock-review-diff.c — the diff text of one change and the new content
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Part of PaddockReview (paddock-review.c builds the list).
 */

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-repo-metadata.h"
#include "paddock-review.h"
#include "paddock-beneath.h"
#include "paddock-sparse-copy.h"
#include "paddock-change-details.h"
#include "paddock-review-cache.h"
#include "paddock-review-private.h"
#include "paddock-git-path.h"

/* --- diff text ------------------------------------------------------ */

/* Quotes a path the way git does when it must (control characters, '"',
 * '\\', bytes that are not UTF-8), so that a name with a newline cannot
 * forge a header line. Valid UTF-8 is kept as is for readability. */
static void
append_quoted (GString    *out,
               const char *prefix,
               const char *path)
{
  g_autofree char *full = g_strconcat (prefix, path, NULL);
  gboolean needs = !g_utf8_validate (full, -1, NULL);

  for (const char *p = full; *p != '\0' && !needs; p++)
    needs = (guchar) *p < 0x20 || *p == '"' || *p == '\\' || *p == 0x7f;

  if (!needs)
    {
      g_string_append (out, full);
      return;
    }

  g_string_append_c (out, '"');
  for (const char *p = full; *p != '\0'; )
    {
      const char *end = NULL;
      guchar ch = (guchar) *p;

      if (ch == '\n') { g_string_append (out, "\\n"); p++; continue; }
      if (ch == '\t') { g_string_append (out, "\\t"); p++; continue; }
      if (ch == '"' || ch == '\\') { g_string_append_c (out, '\\'); g_string_append_c (out, (char) ch); p++; continue; }
      if (ch >= 0x80 && g_utf8_validate (p, MIN ((gssize) strlen (p), 4), &end) == FALSE && end == p)
        {
          g_string_append_printf (out, "\\%03o", ch);
          p++;
          continue;
        }
      if (ch >= 0x80)
        {
          const char *next = g_utf8_next_char (p);
          g_string_append_len (out, p, next - p);
          p = next;
          continue;
        }
      if (ch < 0x20 || ch == 0x7f)
        g_string_append_printf (out, "\\%03o", ch);
      else
        g_string_append_c (out, (char) ch);
      p++;
    }
  g_string_append_c (out, '"');
}

static void
append_side_name (GString    *out,
                  const char *prefix,
                  const char *path,
                  gboolean    present)
{
  if (present)
    append_quoted (out, prefix, path);
  else
    g_string_append (out, "/dev/null");
}

static gboolean
check_size (GString  *out,
            GError  **error)
{
  if (out->len <= PADDOCK_REVIEW_MAX_DIFF_SIZE)
    return TRUE;
  g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_TOO_LARGE,
               "The diff is larger than %d bytes", PADDOCK_REVIEW_MAX_DIFF_SIZE);
  return FALSE;
}

static GBytes *
directory_diff (PaddockChange *change)
{
  GString *out = g_string_new ("diff --git ");
  const char *path = paddock_change_get_path (change);

  append_quoted (out, "a/", path);
  g_string_append_c (out, ' ');
  append_quoted (out, "b/", path);
  g_string_append_c (out, '\n');
  switch (paddock_change_get_kind (change))
    {
    case PADDOCK_CHANGE_KIND_ADDED:
      g_string_append_printf (out, "new directory mode %06o\n", paddock_change_get_new_mode (change));
      break;
    case PADDOCK_CHANGE_KIND_DELETED:
      g_string_append_printf (out, "deleted directory mode %06o\n", paddock_change_get_old_mode (change));
      break;
    case PADDOCK_CHANGE_KIND_MODIFIED:
    case PADDOCK_CHANGE_KIND_RENAMED:
    case PADDOCK_CHANGE_KIND_TYPE_CHANGED:
    case PADDOCK_CHANGE_KIND_MODE_CHANGED:
    default:
      g_string_append_printf (out, "old mode %06o\nnew mode %06o\n",
                              paddock_change_get_old_mode (change),
                              paddock_change_get_new_mode (change));
      break;
    }
  return g_string_free_to_bytes (out);
}

/**
 * paddock_review_dup_new_content:
 * @path: a row's path
 *
 * The new side's bytes of the row at @path exactly as this review read
 * them (a file's content, a symlink's text): what its diff shows. Not
 * thread-safe, as get_diff().
 *
 * Returns: (transfer full) (nullable): the bytes, or %NULL when the row
 *   has no new file or link side, or the file was too large to be kept
 *   (over PADDOCK_REVIEW_MAX_BLOB_SIZE: shown as binary, by hash only)
 */
GBytes *
paddock_review_dup_new_content (PaddockReview *self,
                                const char    *path)
{
  g_autoptr(git_blob) blob = NULL;
  const git_diff_delta *delta;
  const char *data;
  gsize length;
  gsize index;
  static const char marker[] = "paddock-large-file\n";

  g_return_val_if_fail (PADDOCK_IS_REVIEW (self), NULL);

  index = GPOINTER_TO_UINT (g_hash_table_lookup (self->delta_index, path));
  if (index == 0)
    return NULL;
  /* The delta alone names the blob: a patch (git_patch_from_diff) would
   * compute the whole text diff just to be thrown away, which for a
   * pinned review of 1,000 files was most of what pinning cost. */
  delta = git_diff_get_delta (self->diff, index - 1);
  if (delta == NULL || delta->status == GIT_DELTA_DELETED ||
      git_blob_lookup (&blob, self->repo, &delta->new_file.id) != 0)
    return NULL;
  data = git_blob_rawcontent (blob);
  length = (gsize) git_blob_rawsize (blob);
  if (length > sizeof marker && data[0] == '\0' && memcmp (data + 1, marker, sizeof marker - 1) == 0)
    return NULL;
  /* The blob lives in the review's in-memory object database: lend its
   * bytes rather than copy them. */
  return g_bytes_new_with_free_func (data, length, (GDestroyNotify) git_blob_free, g_steal_pointer (&blob));
}

/**
 * paddock_review_get_new_content_id:
 * @path: a row's path
 * @out_id: (out caller-allocates): PADDOCK_REVIEW_CONTENT_ID_SIZE bytes
 *
 * Whether this review kept the new side's bytes of the row at @path (what
 * paddock_review_dup_new_content() returns), and if so the id they are
 * stored under, without reading them: pinning a review costs a lookup per
 * row, not a pass over every changed byte. Two reviews listing the same id
 * for a path show the same diff for it (the id is the blob's, or the one
 * the review cache knew that file's stamp by).
 *
 * Returns: FALSE when dup_new_content() would return %NULL
 */
G_STATIC_ASSERT (PADDOCK_REVIEW_CONTENT_ID_SIZE == GIT_OID_RAWSZ);

gboolean
paddock_review_get_new_content_id (PaddockReview *self,
                                   const char    *path,
                                   guint8        *out_id)
{
  g_autoptr(git_odb) odb = NULL;
  const git_diff_delta *delta;
  gsize index;
  size_t length;
  git_object_t type;

  g_return_val_if_fail (PADDOCK_IS_REVIEW (self), FALSE);

  index = GPOINTER_TO_UINT (g_hash_table_lookup (self->delta_index, path));
  if (index == 0)
    return FALSE;
  delta = git_diff_get_delta (self->diff, index - 1);
  if (delta == NULL || delta->status == GIT_DELTA_DELETED || git_repository_odb (&odb, self->repo) != 0 ||
      git_odb_read_header (&length, &type, odb, &delta->new_file.id) != 0 ||
      type != GIT_OBJECT_BLOB)
    return FALSE;
  /* A large file's marker is a few dozen bytes: only a blob that short
   * can be one, and only then are its bytes looked at. */
  if (length < 256)
    {
      g_autoptr(GBytes) kept = paddock_review_dup_new_content (self, path);

      if (kept == NULL)
        return FALSE;
    }
  memcpy (out_id, delta->new_file.id.id, GIT_OID_RAWSZ);
  return TRUE;
}

/**
 * paddock_review_get_diff:
 *
 * Returns: (transfer full): a git-style unified diff of the row at @path,
 * paths as raw bytes (quoted git-style when they hold control characters
 * or invalid UTF-8). Not thread-safe: call from one thread at a time.
 */
GBytes *
paddock_review_get_diff (PaddockReview  *self,
                         const char     *path,
                         GError        **error)
{
  g_autoptr(git_patch) patch = NULL;
  g_autoptr(GString) out = NULL;
  g_autofree char *old_path = NULL;
  g_autofree char *new_path = NULL;
  PaddockChange *change;
  const git_diff_delta *delta;
  gboolean has_old, has_new;
  gsize index;

  g_return_val_if_fail (PADDOCK_IS_REVIEW (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  change = g_hash_table_lookup (self->by_path, path);
  if (change == NULL)
    {
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_NOT_FOUND,
                   "No change at this path");
      return NULL;
    }

  index = GPOINTER_TO_UINT (g_hash_table_lookup (self->delta_index, path));
  if (index == 0)
    return directory_diff (change);
  index--;

  if (git_patch_from_diff (&patch, self->diff, index) != 0 || patch == NULL)
    return set_git_error (error, "Could not compute a diff"), NULL;
  delta = git_patch_get_delta (patch);
  old_path = paddock_git_path_decode (delta->old_file.path);
  new_path = paddock_git_path_decode (delta->new_file.path);
  has_old = delta->status != GIT_DELTA_ADDED;
  has_new = delta->status != GIT_DELTA_DELETED;

  out = g_string_new ("diff --git ");
  append_quoted (out, "a/", old_path);
  g_string_append_c (out, ' ');
  append_quoted (out, "b/", new_path);
  g_string_append_c (out, '\n');

  if (!has_old)
    g_string_append_printf (out, "new file mode %06o\n", delta->new_file.mode);
  else if (!has_new)
    g_string_append_printf (out, "deleted file mode %06o\n", delta->old_file.mode);
  else if (delta->old_file.mode != delta->new_file.mode)
    g_string_append_printf (out, "old mode %06o\nnew mode %06o\n",
                            delta->old_file.mode, delta->new_file.mode);

  if (delta->status == GIT_DELTA_RENAMED)
    {
      g_string_append_printf (out, "similarity index %u%%\nrename from ",
                              GPOINTER_TO_UINT (g_hash_table_lookup (self->similarity, path)));
      append_quoted (out, "", old_path);
      g_string_append (out, "\nrename to ");
      append_quoted (out, "", new_path);
      g_string_append_c (out, '\n');
    }

  if (git_oid_equal (&delta->old_file.id, &delta->new_file.id))
    return g_string_free_to_bytes (g_steal_pointer (&out));

  {
    char old_hex[8], new_hex[8];

    git_oid_tostr (old_hex, sizeof old_hex, &delta->old_file.id);
    git_oid_tostr (new_hex, sizeof new_hex, &delta->new_file.id);
    g_string_append_printf (out, "index %s..%s", old_hex, new_hex);
    if (has_old && has_new && delta->old_file.mode == delta->new_file.mode)
      g_string_append_printf (out, " %06o", delta->old_file.mode);
    g_string_append_c (out, '\n');
  }

  if (delta->flags & GIT_DIFF_FLAG_BINARY)
    {
      g_string_append (out, "Binary files ");
      append_side_name (out, "a/", old_path, has_old);
      g_string_append (out, " and ");
      append_side_name (out, "b/", new_path, has_new);
      g_string_append (out, " differ\n");
      return g_string_free_to_bytes (g_steal_pointer (&out));
    }

  g_string_append (out, "--- ");
  append_side_name (out, "a/", old_path, has_old);
  g_string_append (out, "\n+++ ");
  append_side_name (out, "b/", new_path, has_new);
  g_string_append_c (out, '\n');

  for (gsize h = 0; h < git_patch_num_hunks (patch); h++)
    {
      const git_diff_hunk *hunk = NULL;
      size_t n_lines = 0;

      if (git_patch_get_hunk (&hunk, &n_lines, patch, h) != 0)
        return set_git_error (error, "Could not read a diff"), NULL;
      g_string_append_len (out, hunk->header, (gssize) hunk->header_len);

      for (size_t l = 0; l < n_lines; l++)
        {
          const git_diff_line *line = NULL;

          if (git_patch_get_line_in_hunk (&line, patch, h, l) != 0)
            return set_git_error (error, "Could not read a diff"), NULL;
          /* The "no newline at end of file" markers carry their own text. */
          if (line->origin == GIT_DIFF_LINE_CONTEXT || line->origin == GIT_DIFF_LINE_ADDITION ||
              line->origin == GIT_DIFF_LINE_DELETION)
            g_string_append_c (out, line->origin);
          g_string_append_len (out, line->content, (gssize) line->content_len);
          /* Checked per line so the text never grows far past the bound. */
          if (!check_size (out, error))
            return NULL;
        }
    }

  if (!check_size (out, error))
    return NULL;
  return g_string_free_to_bytes (g_steal_pointer (&out));
}
