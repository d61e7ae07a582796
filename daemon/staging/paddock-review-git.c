/* paddock-review-git.c — the libgit2 side: paths as git sees them, the sides' blobs in the index
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

/* --- libgit2 side --------------------------------------------------- */

/* Whether the open file @fd still has the stamp @before. */
static gboolean
unchanged_since (int                fd,
                 const struct stat *before)
{
  PaddockFileStamp a, b;
  struct stat after;

  if (fstat (fd, &after) != 0)
    return FALSE;
  paddock_file_stamp_from_stat (&a, before);
  paddock_file_stamp_from_stat (&b, &after);
  return paddock_file_stamp_equal (&a, &b);
}


/* Stores one side's version of @rel (@base in @parent_fd) as a blob. Files over
 * PADDOCK_REVIEW_MAX_BLOB_SIZE are not loaded: the blob is a marker holding
 * their SHA-256, so an unchanged or moved large file still compares equal,
 * and the leading NUL makes libgit2 treat it as binary. */
static gboolean
write_side_blob (Blobs       *blobs,
                 int          parent_fd,
                 const char  *base,
                 const char  *rel,
                 SideType     type,
                 git_oid     *out_oid,
                 guint64     *out_size,
                 GError     **error)
{
  git_odb *odb = blobs->odb;
  paddock_autofd int fd = -1;
  g_autoptr(GByteArray) data = NULL;
  g_autoptr(GChecksum) checksum = NULL;
  guint64 total = 0;
  struct stat st;

  if (type == SIDE_LINK)
    {
      char target[PATH_MAX];
      ssize_t n = readlinkat (parent_fd, base, target, sizeof target);

      if (n < 0)
        return review_set_errno_error (error, errno, "Could not read the link", rel);
      *out_size = (guint64) n;
      if (git_odb_write (out_oid, odb, target, (gsize) n, GIT_OBJECT_BLOB) != 0)
        return set_git_error (error, "Could not store a link");
      return TRUE;
    }

  /* O_NOFOLLOW | O_NONBLOCK: the entry was a regular file when we looked;
   * if it was swapped for a link or a fifo since, fail rather than follow
   * or hang. */
  fd = openat (parent_fd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return review_set_errno_error (error, errno, "Could not open", rel);
  if (fstat (fd, &st) != 0)
    return review_set_errno_error (error, errno, "Could not stat", rel);
  if (!S_ISREG (st.st_mode))
    {
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_FAILED,
                   "An entry changed type while it was read");
      return FALSE;
    }

  /* Larger than a blob may be: known by its apparent size and a hash of
   * its data extents only, so a sparse terabyte costs what it allocates. A
   * file that grows past the limit while read is caught below. */
  if ((guint64) st.st_size > PADDOCK_REVIEW_MAX_BLOB_SIZE)
    {
      g_autoptr(GError) local_error = NULL;
      g_autofree char *sum = paddock_sparse_sha256 (fd, NULL, &local_error);
      g_autofree char *marker = NULL;
      gsize len;

      if (sum == NULL)
        {
          g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_FAILED,
                       "Could not read “%s”: %s", rel, local_error->message);
          return FALSE;
        }
      marker = g_strdup_printf ("%cpaddock-large-file\nsize %" G_GUINT64_FORMAT
                                "\nextents-sha256 %s\n", '\0', (guint64) st.st_size, sum);
      len = 1 + strlen (marker + 1);
      *out_size = (guint64) st.st_size;
      if (git_odb_write (out_oid, odb, marker, len, GIT_OBJECT_BLOB) != 0)
        return set_git_error (error, "Could not store a file");
      return TRUE;
    }

  data = g_byte_array_sized_new ((guint) MIN ((guint64) st.st_size + 1,
                                              PADDOCK_REVIEW_MAX_BLOB_SIZE + 1));
  for (;;)
    {
      guint8 buf[64 * 1024];
      ssize_t n = read (fd, buf, sizeof buf);

      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return review_set_errno_error (error, errno, "Could not read", rel);
        }
      if (n == 0)
        break;
      total += (guint64) n;
      if (checksum != NULL)
        g_checksum_update (checksum, buf, n);
      else
        {
          g_byte_array_append (data, buf, (guint) n);
          /* Grown past the limit: switch to hashing, keep no more bytes. */
          if (data->len > PADDOCK_REVIEW_MAX_BLOB_SIZE)
            {
              checksum = g_checksum_new (G_CHECKSUM_SHA256);
              g_checksum_update (checksum, data->data, data->len);
              g_byte_array_set_size (data, 0);
            }
        }
    }

  *out_size = total;
  if (checksum != NULL)
    {
      g_autofree char *marker = g_strdup_printf ("%cpaddock-large-file\nsize %" G_GUINT64_FORMAT
                                                 "\nsha256 %s\n", '\0', total,
                                                 g_checksum_get_string (checksum));
      gsize len = 1 + strlen (marker + 1);

      if (git_odb_write (out_oid, odb, marker, len, GIT_OBJECT_BLOB) != 0)
        return set_git_error (error, "Could not store a file");
      return TRUE;
    }

  /* Known by its stamp, and read whole: stored under the id an earlier
   * review computed, without hashing it again. A file that changed while
   * it was read is hashed, and not remembered. */
  if (blobs->cache != NULL && total == (guint64) st.st_size && unchanged_since (fd, &st))
    {
      if (paddock_review_cache_lookup_blob (blobs->cache, &st, out_oid))
        {
          if (blobs->mempack->write (blobs->mempack, out_oid, data->data, data->len, GIT_OBJECT_BLOB) != 0)
            return set_git_error (error, "Could not store a file");
          return TRUE;
        }
      if (git_odb_write (out_oid, odb, data->data, data->len, GIT_OBJECT_BLOB) != 0)
        return set_git_error (error, "Could not store a file");
      paddock_review_cache_add_blob (blobs->cache, &st, out_oid);
      return TRUE;
    }

  if (git_odb_write (out_oid, odb, data->data, data->len, GIT_OBJECT_BLOB) != 0)
    return set_git_error (error, "Could not store a file");
  return TRUE;
}

gboolean
index_add_side (git_index   *index,
                Blobs       *blobs,
                int          parent_fd,
                const char  *base,
                const char  *rel,
                const Side  *side,
                GError     **error)
{
  g_autofree char *encoded = paddock_git_path_encode (rel);
  git_index_entry entry = { 0 };
  guint64 size = 0;

  if (!write_side_blob (blobs, parent_fd, base, rel, side->type, &entry.id, &size, error))
    return FALSE;

  if (side->type == SIDE_LINK)
    entry.mode = GIT_FILEMODE_LINK;
  else if (side->mode & S_IXUSR)
    entry.mode = GIT_FILEMODE_BLOB_EXECUTABLE;
  else
    entry.mode = GIT_FILEMODE_BLOB;
  entry.file_size = (guint32) MIN (size, G_MAXUINT32);
  entry.path = encoded;

  if (git_index_add (index, &entry) != 0)
    return set_git_error (error, "Could not index a file");
  return TRUE;
}
