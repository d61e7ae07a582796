/* paddock-scrollback.c — a bounded ring of terminal output with absolute offsets
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paddock-scrollback.h"

/* The agent must never block because nobody reads its terminal: appending
 * always succeeds and overwrites the oldest bytes. Offsets count every byte
 * ever written, so each reader keeps its own position and learns exactly
 * what it missed when the ring moved past it. The byte at absolute offset
 * o lives at o % capacity. The buffer is allocated on the first output and
 * at full size: an allocation this large is mmap()ed, so the pages a quiet
 * session never writes cost it no memory. */
struct _PaddockScrollback
{
  guint8  *data;
  gsize    capacity;
  guint64  end;        /* absolute offset just past the last byte */
  gsize    length;     /* bytes retained: end - length is the first offset */
  int      file;       /* where it is kept too (paddock_scrollback_persist()), or -1 */
};

/* The file a ring is kept in: this header, then the ring at its own
 * offsets (byte o at FILE_DATA + o % capacity; a sparse file where a quiet
 * session wrote little). Written with pwrite() after every append, not
 * mapped: the page cache outlives a daemon killed with SIGKILL all the
 * same, and a file truncated behind our back (its folder is the user's)
 * cannot fault the daemon as a mapping would (SIGBUS). */
#define FILE_MAGIC "PDKSCRL1"
#define FILE_DATA  4096

typedef struct
{
  char    magic[8];
  guint64 capacity;
  guint64 end;
  guint64 length;
} FileHeader;

PaddockScrollback *
paddock_scrollback_new (gsize capacity)
{
  PaddockScrollback *self;

  g_return_val_if_fail (capacity > 0, NULL);

  self = g_new0 (PaddockScrollback, 1);
  self->capacity = capacity;
  self->file = -1;
  return self;
}

void
paddock_scrollback_free (PaddockScrollback *self)
{
  if (self == NULL)
    return;

  if (self->file >= 0)
    close (self->file);
  g_free (self->data);
  g_free (self);
}

/* Copies between the ring and a linear buffer, wrapping at capacity. */
static void
ring_copy (PaddockScrollback *self,
           guint64            offset,
           guint8            *linear,
           gsize              length,
           gboolean           into_ring)
{
  gsize position = (gsize) (offset % self->capacity);

  for (gsize done = 0; done < length;)
    {
      gsize chunk = MIN (length - done, self->capacity - position);

      if (into_ring)
        memcpy (self->data + position, linear + done, chunk);
      else
        memcpy (linear + done, self->data + position, chunk);
      done += chunk;
      position = 0;
    }
}

static gboolean
pwrite_all (int           fd,
            const guint8 *data,
            gsize         length,
            off_t         offset)
{
  while (length > 0)
    {
      ssize_t n = pwrite (fd, data, length, offset);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      data += n;
      length -= (gsize) n;
      offset += n;
    }
  return TRUE;
}

/* The ring goes on in memory; only the file is given up (a full disk). */
static void
file_give_up (PaddockScrollback *self)
{
  g_message ("The terminal's scrollback can no longer be kept on disk: %s", g_strerror (errno));
  close (self->file);
  self->file = -1;
}

static void
file_write (PaddockScrollback *self,
            guint64            offset,
            const guint8      *data,
            gsize              length)
{
  gsize position = (gsize) (offset % self->capacity);

  for (gsize done = 0; done < length && self->file >= 0;)
    {
      gsize chunk = MIN (length - done, self->capacity - position);

      if (!pwrite_all (self->file, data + done, chunk, (off_t) (FILE_DATA + position)))
        file_give_up (self);
      done += chunk;
      position = 0;
    }
}

/* After the bytes it names: a daemon killed in between finds the header
 * of the appends before, whose bytes are all there. */
static void
file_write_header (PaddockScrollback *self)
{
  FileHeader header = { FILE_MAGIC, self->capacity, self->end, self->length };

  if (self->file >= 0 && !pwrite_all (self->file, (const guint8 *) &header, sizeof header, 0))
    file_give_up (self);
}

/* The whole ring into the file, as it is now. */
static void
rewrite_file (PaddockScrollback *self)
{
  guint64 first = self->end - self->length;
  gsize position = (gsize) (first % self->capacity);

  if (ftruncate (self->file, 0) != 0)
    {
      file_give_up (self);
      return;
    }
  for (gsize done = 0; done < self->length && self->file >= 0;)
    {
      gsize chunk = MIN (self->length - done, self->capacity - position);

      if (!pwrite_all (self->file, self->data + position, chunk, (off_t) (FILE_DATA + position)))
        file_give_up (self);
      done += chunk;
      position = 0;
    }
  file_write_header (self);
}

/* Stops keeping the ring in its file (the terminal closed): one fd less
 * for every session that no longer writes. The ring stays as it is. */
void
paddock_scrollback_close_file (PaddockScrollback *self)
{
  g_return_if_fail (self != NULL);

  if (self->file >= 0)
    close (self->file);
  self->file = -1;
}

/**
 * paddock_scrollback_persist:
 *
 * Keeps the ring in the file at @path as well, from now on, and first
 * reads back what an earlier daemon kept there: a new daemon shows a
 * session's scrollback from before it started. The file is a session's
 * (its folder is the user's, 0700): what is read back is checked (magic,
 * capacity, lengths) and is only ever shown as terminal output; anything
 * else starts the file afresh. On a ring that holds bytes already, the
 * file is made to hold the same.
 */
gboolean
paddock_scrollback_persist (PaddockScrollback  *self,
                            const char         *path,
                            GError            **error)
{
  FileHeader header = { { 0, }, 0, 0, 0 };
  struct stat st;
  int fd;

  g_return_val_if_fail (self != NULL && self->file < 0, FALSE);

  fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
  if (fd < 0 || fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      int saved_errno = fd < 0 ? errno : EINVAL;

      if (fd >= 0)
        close (fd);
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                   "Could not keep the scrollback in %s: %s", path, g_strerror (saved_errno));
      return FALSE;
    }

  if (self->end > 0)
    {
      /* Kept again (a terminal that gets its PTY after the read-back):
       * the file is the ring already, or is made so. */
      self->file = fd;
      if (pread (fd, &header, sizeof header, 0) != (ssize_t) sizeof header ||
          memcmp (header.magic, FILE_MAGIC, sizeof header.magic) != 0 ||
          header.capacity != self->capacity || header.end != self->end || header.length != self->length)
        rewrite_file (self);
      return TRUE;
    }

  if (pread (fd, &header, sizeof header, 0) == (ssize_t) sizeof header &&
      memcmp (header.magic, FILE_MAGIC, sizeof header.magic) == 0 &&
      header.capacity == self->capacity && header.length <= header.capacity &&
      header.length <= header.end && header.length > 0)
    {
      guint64 first = header.end - header.length;
      gsize position = (gsize) (first % self->capacity);
      gboolean whole = TRUE;

      self->data = g_malloc (self->capacity);
      for (gsize done = 0; done < header.length && whole;)
        {
          gsize chunk = MIN ((gsize) header.length - done, self->capacity - position);
          ssize_t n = pread (fd, self->data + position, chunk, (off_t) (FILE_DATA + position));

          /* A file cut short behind our back: what is missing reads as
           * nothing was written, not as an error. */
          if (n < 0)
            whole = FALSE;
          else if ((gsize) n < chunk)
            memset (self->data + position + n, 0, chunk - (gsize) n);
          done += chunk;
          position = 0;
        }
      if (whole)
        {
          self->end = header.end;
          self->length = (gsize) header.length;
        }
    }

  self->file = fd;
  if (self->end == 0 && ftruncate (fd, 0) != 0)
    file_give_up (self);
  file_write_header (self);
  return TRUE;
}

void
paddock_scrollback_append (PaddockScrollback *self,
                           const guint8      *data,
                           gsize              length)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (data != NULL || length == 0);

  if (length == 0)
    return;

  if (self->data == NULL)
    self->data = g_malloc (self->capacity);

  /* Only the last `capacity` bytes of a huge write can be kept. */
  if (length > self->capacity)
    {
      self->end += length - self->capacity;
      data += length - self->capacity;
      length = self->capacity;
    }

  ring_copy (self, self->end, (guint8 *) data, length, TRUE);
  if (self->file >= 0)
    file_write (self, self->end, data, length);
  self->end += length;
  self->length = MIN (self->length + length, self->capacity);
  if (self->file >= 0)
    file_write_header (self);
}

guint64
paddock_scrollback_get_first_offset (PaddockScrollback *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->end - self->length;
}

guint64
paddock_scrollback_get_end_offset (PaddockScrollback *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->end;
}

/* Up to @max_bytes starting at @offset, or at the first retained offset if
 * @offset has already been overwritten (@out_start says where the data
 * starts). An offset at or past the end gives empty bytes. */
GBytes *
paddock_scrollback_read (PaddockScrollback *self,
                         guint64            offset,
                         gsize              max_bytes,
                         guint64           *out_start)
{
  guint64 first;
  gsize length;
  guint8 *out;

  g_return_val_if_fail (self != NULL, NULL);

  first = self->end - self->length;
  offset = MIN (MAX (offset, first), self->end);
  if (out_start != NULL)
    *out_start = offset;

  length = (gsize) MIN ((guint64) max_bytes, self->end - offset);
  if (length == 0)
    return g_bytes_new (NULL, 0);

  out = g_malloc (length);
  ring_copy (self, offset, out, length, FALSE);
  return g_bytes_new_take (out, length);
}
