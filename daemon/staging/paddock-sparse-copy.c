/* paddock-sparse-copy.c — copy and hash files by their data extents, keeping holes
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A session can stage `truncate -s 1T big`: zero bytes on disk, a terabyte
 * of apparent size. Reading such a file from offset 0 to its end makes the
 * kernel hand out a terabyte of zeros, and writing what was read allocates
 * it on the user's disk. Both functions here walk the file with
 * SEEK_DATA/SEEK_HOLE instead, so their cost follows the allocated bytes.
 * copy_file_range() is used per data extent only: on file systems without
 * shared extents it falls back to an in-kernel splice, which writes holes
 * densely when given a range that spans one.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "paddock-sparse-copy.h"

#define CHUNK (1 << 20)

static gboolean
errno_error (GError     **error,
             int          saved_errno,
             const char  *what)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno), "%s: %s",
               what, g_strerror (saved_errno));
  return FALSE;
}

/* The next data extent at or after @offset: [*out_start, *out_end).
 * FALSE at the end of the file. A file system without SEEK_DATA
 * (EINVAL from lseek) is one extent from @offset to @size. */
static gboolean
next_extent (int      fd,
             off_t    offset,
             off_t    size,
             off_t   *out_start,
             off_t   *out_end,
             int     *out_errno)
{
  off_t start, end;

  *out_errno = 0;
  if (offset >= size)
    return FALSE;
  start = lseek (fd, offset, SEEK_DATA);
  if (start < 0)
    {
      if (errno == ENXIO)
        return FALSE;  /* only a hole up to the end */
      if (errno != EINVAL && errno != EOPNOTSUPP)
        {
          *out_errno = errno;
          return FALSE;
        }
      *out_start = offset;
      *out_end = size;
      return TRUE;
    }
  if (start >= size)
    return FALSE;
  end = lseek (fd, start, SEEK_HOLE);
  if (end < 0 || end > size)
    end = size;
  *out_start = start;
  *out_end = end;
  return TRUE;
}

static gboolean
pwrite_all (int          fd,
            const char  *data,
            gsize        length,
            off_t        offset)
{
  while (length > 0)
    {
      gssize n = pwrite (fd, data, length, offset);

      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return FALSE;
        }
      data += n;
      length -= (gsize) n;
      offset += n;
    }
  return TRUE;
}

/* Copies [start, end) of @in_fd to the same offsets of @out_fd. */
static gboolean
copy_range (int           in_fd,
            int           out_fd,
            off_t         start,
            off_t         end,
            gboolean     *use_cfr,
            char        **buf,
            GCancellable *cancellable,
            GError      **error)
{
  off_t pos = start;

  while (pos < end)
    {
      gsize want = (gsize) MIN ((off_t) CHUNK, end - pos);
      gssize n;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      if (*use_cfr)
        {
          loff_t in_off = pos, out_off = pos;

          n = copy_file_range (in_fd, &in_off, out_fd, &out_off, want, 0);
          if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
                        errno == EOPNOTSUPP || errno == EBADF))
            {
              *use_cfr = FALSE;
              continue;
            }
        }
      else
        {
          if (*buf == NULL)
            *buf = g_malloc (CHUNK);
          n = pread (in_fd, *buf, want, pos);
          if (n > 0 && !pwrite_all (out_fd, *buf, (gsize) n, pos))
            return errno_error (error, errno, "Could not write");
        }
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return errno_error (error, errno, "Could not copy");
        }
      if (n == 0)
        break;  /* the file shrank under us: the size below still holds */
      pos += n;
    }
  return TRUE;
}

/**
 * paddock_sparse_copy:
 * @in_fd: a regular file, read from its data extents
 * @out_fd: an empty regular file opened for writing
 *
 * Makes @out_fd hold @in_fd's content with the same apparent size, writing
 * only the data extents: a hole stays a hole (where the destination's file
 * system has them), so what lands on disk is what the source allocated.
 */
gboolean
paddock_sparse_copy (int            in_fd,
                     int            out_fd,
                     GCancellable  *cancellable,
                     GError       **error)
{
  g_autofree char *buf = NULL;
  gboolean use_cfr = TRUE;
  struct stat st;
  off_t offset = 0;
  off_t start, end;
  int saved_errno = 0;

  if (fstat (in_fd, &st) != 0)
    return errno_error (error, errno, "Could not inspect the source");

  while (next_extent (in_fd, offset, st.st_size, &start, &end, &saved_errno))
    {
      if (!copy_range (in_fd, out_fd, start, end, &use_cfr, &buf, cancellable, error))
        return FALSE;
      offset = end;
    }
  if (saved_errno != 0)
    return errno_error (error, saved_errno, "Could not find the data of the source");
  /* The trailing hole (or the whole file, when it is all hole). */
  if (ftruncate (out_fd, st.st_size) != 0)
    return errno_error (error, errno, "Could not set the size");
  return TRUE;
}

static void
checksum_record (GChecksum *sum,
                 char       tag,
                 guint64    a,
                 guint64    b)
{
  guint8 rec[17];

  rec[0] = (guint8) tag;
  for (int i = 0; i < 8; i++)
    {
      rec[1 + i] = (guint8) (a >> (56 - 8 * i));
      rec[9 + i] = (guint8) (b >> (56 - 8 * i));
    }
  g_checksum_update (sum, rec, sizeof rec);
}

/**
 * paddock_sparse_sha256:
 * @fd: a regular file
 *
 * A SHA-256 that identifies @fd's content and its holes, computed without
 * reading the holes: the hash runs over one record per data extent (its
 * offset and length, then its bytes) and a last record with the size.
 * Every record states its length before its bytes, so two different
 * contents never give the same input to the hash. Two files with the
 * same bytes but different holes hash differently: they compare as
 * changed, the safe side. Cost: proportional to the allocated bytes.
 */
char *
paddock_sparse_sha256 (int            fd,
                       GCancellable  *cancellable,
                       GError       **error)
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree char *buf = g_malloc (CHUNK);
  struct stat st;
  off_t offset = 0;
  off_t start, end;
  int saved_errno = 0;

  if (fstat (fd, &st) != 0)
    {
      errno_error (error, errno, "Could not inspect");
      return NULL;
    }

  while (next_extent (fd, offset, st.st_size, &start, &end, &saved_errno))
    {
      checksum_record (sum, 'D', (guint64) start, (guint64) (end - start));
      for (off_t pos = start; pos < end; )
        {
          gssize n = pread (fd, buf, (gsize) MIN ((off_t) CHUNK, end - pos), pos);

          if (n < 0 && errno == EINTR)
            continue;
          if (n < 0)
            {
              errno_error (error, errno, "Could not read");
              return NULL;
            }
          if (n == 0)
            {
              /* Shrank while read: the record would lie about its length. */
              g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                                   "The file changed while it was read");
              return NULL;
            }
          if (g_cancellable_set_error_if_cancelled (cancellable, error))
            return NULL;
          g_checksum_update (sum, (const guchar *) buf, n);
          pos += n;
        }
      offset = end;
    }
  if (saved_errno != 0)
    {
      errno_error (error, saved_errno, "Could not find the data");
      return NULL;
    }
  checksum_record (sum, 'E', (guint64) st.st_size, 0);
  return g_strdup (g_checksum_get_string (sum));
}
