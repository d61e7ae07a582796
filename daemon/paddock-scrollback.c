/* paddock-scrollback.c — a bounded ring of terminal output with absolute offsets
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <string.h>

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
};

PaddockScrollback *
paddock_scrollback_new (gsize capacity)
{
  PaddockScrollback *self;

  g_return_val_if_fail (capacity > 0, NULL);

  self = g_new0 (PaddockScrollback, 1);
  self->capacity = capacity;
  return self;
}

void
paddock_scrollback_free (PaddockScrollback *self)
{
  if (self == NULL)
    return;

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
  self->end += length;
  self->length = MIN (self->length + length, self->capacity);
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
