/* paddock-apply-private.h — what the paddock-apply*.c files share: a batch, its operations
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Not installed and not for callers of paddock-apply.h: the batch's
 * state and the helpers of its steps, split over files by step.
 */

#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "paddock-apply.h"
#include "paddock-file-stamp.h"

G_BEGIN_DECLS

#define TEMP_PREFIX   ".paddock-apply-"
#define JOURNAL_NAME  "apply-journal.json"
#define LOCK_NAME     "apply.lock"

typedef enum {
  OP_REMOVE,
  OP_DIR,      /* a new folder: made at its temp name, renamed into place */
  OP_CHMOD,    /* PUT of a folder onto an existing folder: only its mode */
  OP_PUT,      /* a file or a symlink */
} OpKind;

typedef struct _Op {
  OpKind                  kind;
  char                   *path;
  char                   *parent;     /* "" for the workspace itself */
  char                   *name;
  char                   *temp;       /* temp/backup name in the same folder */
  const PaddockApplyItem *item;       /* NULL for a missing parent folder */
  gboolean                existed;    /* an entry was there: EXCHANGE */
  PaddockFileStamp        check;      /* the entry at the conflict check */
  guint32                 new_mode;
  guint32                 old_mode;   /* OP_CHMOD */
  guint32                 stage_type; /* OP_PUT: S_IFREG or S_IFLNK */
  char                   *link_text;
  guint64                 ino;        /* PUT/DIR: the temp's; REMOVE: the entry's */
  int                     dir_fd;     /* OP_DIR: the new folder */
  gboolean                staged;     /* the temp exists */
  gboolean                done;       /* the rename/chmod happened */
  gboolean                noop;       /* applied, nothing to do */
  char                   *old_sha;
  char                   *new_sha;
  gboolean                old_sha_extents;  /* old_sha is paddock_sparse_sha256()'s */
  gboolean                new_sha_extents;
  guint64                 allocated;  /* OP_PUT of a file: the stage's st_blocks in bytes */
  struct _Op             *link_of;    /* OP_PUT: an earlier op of the same stage inode */
} Op;

typedef struct {
  char        *batch_id;
  char        *temp_prefix;   /* TEMP_PREFIX "<batch>-" */
  int          w_fd;
  int          stage_fd;
  GHashTable  *dirs;          /* relative folder path → fd + 1 */
  GPtrArray   *ops;           /* Op*, in apply order */
  guint64      w_dev;
  guint64      w_ino;
  guint        n_temps;
  guint        step;
  guint        fault_step;
  guint        stop_step;
  char        *hold_path;     /* PADDOCK_TEST_APPLY_STEP_HOLD */
  char        *journal_dir;
  char        *journal_path;
  GPtrArray   *stale;         /* char *: pinned paths whose entry is not the pin */
  char        *ledger_file;
} Batch;
typedef struct {
  const PaddockApplyItem *item;
  PaddockFileStamp        current;
  struct stat             stage;   /* PUT */
  gboolean                skipped;
} Selected;

/* Helpers one file of the part calls in another, grouped by the file
 * that defines them (their comments are there). */

/* paddock-apply.c */

char *
join_rel (const char *parent,
          const char *name);

void
note_restored (GPtrArray              *restored,
               int                     w_fd,
               const char             *path,
               const PaddockFileStamp *check);

void
record_restored (const char *journal_dir,
                 GPtrArray  *restored);

gboolean
ledger_append (const char  *ledger_file,
               const char  *line,
               GError     **error);

gboolean
ledger_has_batch (const char *ledger_file,
                  const char *batch_id);

/* paddock-apply-fs.c */

char *
printable (const char *path);

gboolean
set_errno_error (GError     **error,
                 int          saved_errno,
                 const char  *what,
                 const char  *path);

gboolean
propagate_io_error (GError **error,
                    GError  *io_error);

int
open_beneath (int         root_fd,
              const char *rel,
              int         flags);

char *
path_parent (const char *path);

const char *
path_name (const char *path);

guint
path_depth (const char *path);

gboolean
validate_path (const char  *path,
               GError     **error);

void
stamp_clear (PaddockFileStamp *stamp);

int
stamp_at (int               dir_fd,
          const char       *name,
          PaddockFileStamp *stamp);

gboolean
stamp_beneath (int               root_fd,
               const char       *rel,
               PaddockFileStamp *stamp,
               GError          **error);

gboolean
stamp_same_entry (const PaddockFileStamp *a,
                  const PaddockFileStamp *b);

gboolean
write_all (int          fd,
           const char  *data,
           gsize        length);

char *
sha256_fd_bounded (int       fd,
                   gboolean *out_extents);

char *
read_link_at (int         dir_fd,
              const char *name);

char *
sha256_entry_at (int                     dir_fd,
                 const char             *name,
                 const PaddockFileStamp *stamp,
                 gboolean               *out_extents);

gboolean
dir_holds_only_ours (int         dir_fd,
                     const char *name,
                     const char *prefix);

gboolean
remove_ours_at (int         dir_fd,
                const char *name,
                const char *prefix);

/* paddock-apply-journal.c */

void
step (Batch *b);

int
dir_fd_for (Batch      *b,
            const char *rel);

int
op_parent_fd (Batch *b,
              Op    *op);

void
add_b64 (JsonBuilder *builder,
         const char  *member,
         const char  *bytes);

gboolean
journal_write (Batch       *b,
               const char  *state,
               const char  *ledger_file,
               const char  *ledger_line,
               GError     **error);

gboolean
journal_remove (const char  *journal_dir,
                const char  *journal_path,
                GError     **error);

int
lock_journal_dir (const char  *journal_dir,
                  GError     **error);

/* paddock-apply-plan.c */

gpointer
find_ancestor (GHashTable *table,
               const char *path,
               gboolean    skipped_only);

void
note_stale (Batch      *b,
            const char *path);

gboolean
stale_error (Batch   *b,
             GError **error);

gboolean
bytes_match_pin (const PaddockApplyItem *item,
                 const void             *data,
                 gsize                   length);

int
fd_matches_pin (const PaddockApplyItem  *item,
                int                      fd,
                GError                 **error);

gboolean
stage_lstat (Batch       *b,
             const char  *path,
             struct stat *st);

gboolean
plan_ops (Batch      *b,
          GPtrArray  *selected,
          GError    **error);

gboolean
check_space (Batch   *b,
             GError **error);

/* paddock-apply-recover.c */

gboolean
recover_locked (const char  *journal_dir,
                const char  *workspace,
                gboolean    *out_done,
                GError     **error);

G_END_DECLS
