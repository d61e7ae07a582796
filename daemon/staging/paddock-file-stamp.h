/* paddock-file-stamp.h — what a workspace entry looked like, to tell whether it changed
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>
#include <sys/stat.h>
#include <time.h>

G_BEGIN_DECLS

/* A file time (or a clock reading) in nanoseconds since the epoch: how
 * every stamp and moment in staging is compared. */
static inline gint64
paddock_timespec_ns (const struct timespec *ts)
{
  return (gint64) ts->tv_sec * G_GINT64_CONSTANT (1000000000) + ts->tv_nsec;
}

/* The identity of one directory entry as lstat() saw it. Two stamps differ
 * when the entry was replaced (inode), rewritten (size, mtime) or touched in
 * any other way (ctime: chmod, link count, a write that kept mtime). A stamp
 * with present == FALSE says "there was nothing at this path". */
typedef struct {
  gboolean present;
  guint32  mode;        /* st_mode: type and permission bits */
  guint64  ino;
  guint64  size;
  gint64   mtime_ns;
  gint64   ctime_ns;
} PaddockFileStamp;

static inline void
paddock_file_stamp_from_stat (PaddockFileStamp  *stamp,
                              const struct stat *st)
{
  stamp->present = TRUE;
  stamp->mode = st->st_mode;
  stamp->ino = st->st_ino;
  stamp->size = (guint64) st->st_size;
  stamp->mtime_ns = paddock_timespec_ns (&st->st_mtim);
  stamp->ctime_ns = paddock_timespec_ns (&st->st_ctim);
}

static inline gboolean
paddock_file_stamp_equal (const PaddockFileStamp *a,
                          const PaddockFileStamp *b)
{
  if (a->present != b->present)
    return FALSE;
  if (!a->present)
    return TRUE;
  return a->mode == b->mode && a->ino == b->ino && a->size == b->size &&
         a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

/* Now, on the clock the kernel stamps file times with (the coarse one,
 * a tick behind the precise clock at most). Any entry changed from now on
 * has a ctime at or after this; one changed earlier in the same tick may
 * too, which errs on the side of "changed". */
static inline gint64
paddock_file_time_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_REALTIME_COARSE, &ts);
  return paddock_timespec_ns (&ts);
}

/* Waits until every entry changed before this call has a ctime before
 * paddock_file_time_now_ns (). The kernel's multigrain timestamps (6.13+)
 * give a file just stat'ed a fine-grained ctime on its next change, up to
 * two ticks ahead of the coarse clock (measured here: 8 ms), so waiting
 * for the coarse clock to pass its own reading is not enough: it must pass
 * the precise clock's. */
static inline void
paddock_file_time_wait_past_now (void)
{
  struct timespec ts;
  gint64 precise_ns;

  clock_gettime (CLOCK_REALTIME, &ts);
  precise_ns = paddock_timespec_ns (&ts);
  while (paddock_file_time_now_ns () <= precise_ns)
    g_usleep (1000);
}

G_END_DECLS
