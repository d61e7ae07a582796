/* paddock-apply.c — apply reviewed staging changes to a workspace in one crash-safe batch
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A batch either fully happens or fully does not, even when the daemon is
 * killed half-way:
 *
 *   1. plan: validate the paths, check each item's workspace entry against
 *      its baseline (a conflicting, non-forced item is skipped with its
 *      group), and order the operations: removals deepest-first, folder
 *      operations shallowest-first, then the other puts;
 *   2. journal "preparing" (durable), naming every temporary/backup entry the
 *      batch will use: `.paddock-apply-<batch>-<n>` in the destination's own
 *      folder, so every rename stays within one folder and file system;
 *   3. write each new entry under its temporary name (files: copied from
 *      the stage, fchmod, fsync);
 *   4. journal "applying" with the temporaries' inode numbers;
 *   5. one renameat2() per item: RENAME_EXCHANGE over an existing entry (the
 *      old version then sits at the temporary name: the backup),
 *      RENAME_NOREPLACE onto a free name, and a removal renames the entry to
 *      its backup name;
 *   6. fsync every touched folder; 7. journal "committed"; 8. ledger line;
 *   9. remove the backups; 10. remove the journal.
 *
 * Any failure before 7 undoes everything in reverse with renames, unlinks
 * and chmods only — none of which needs space, so a full disk cannot stop the
 * rollback. paddock_apply_recover() does the same from the journal after a
 * crash: before "committed" it rolls back (deciding by inode number which
 * renames happened), from "committed" on it rolls forward.
 *
 * Fault injection: with PADDOCK_FAULT_APPLY_STEP=N in the environment the
 * batch raises SIGKILL on reaching its N-th step. Steps, counted from 1:
 * each durable journal write (preparing, applying, committed), each
 * temporary entry created, each rename/chmod of an item (step 5), each
 * folder fsync (step 6), the ledger append, each backup removal, and the
 * journal removal. A batch of k temporaries, r renames, f folders and
 * b backups thus has 3 + k + r + f + 1 + b + 1 steps (the ledger's 1 only
 * with a ledger file). PADDOCK_FAULT_APPLY_STOP=N raises SIGSTOP there
 * instead, so a test can change the workspace at that point and resume it.
 */

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "paddock-apply.h"
#include "paddock-apply-restored.h"
#include "paddock-autofd.h"
#include "paddock-compat-openat2.h"
#include "paddock-compat-rename.h"
#include "paddock-content-hash.h"
#include "paddock-durable-file.h"
#include "paddock-sparse-copy.h"

#define TEMP_PREFIX   ".paddock-apply-"
#define JOURNAL_NAME  "apply-journal.json"
#define LOCK_NAME     "apply.lock"

G_DEFINE_QUARK (paddock-apply-error-quark, paddock_apply_error)

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
  char        *journal_dir;
  char        *journal_path;
  GPtrArray   *stale;         /* char *: pinned paths whose entry is not the pin */
  char        *ledger_file;
} Batch;

static void
op_free (Op *op)
{
  g_free (op->path);
  g_free (op->parent);
  g_free (op->name);
  g_free (op->temp);
  g_free (op->link_text);
  g_free (op->old_sha);
  g_free (op->new_sha);
  if (op->dir_fd >= 0)
    close (op->dir_fd);
  g_free (op);
}

static void
close_fd_value (gpointer data)
{
  close (GPOINTER_TO_INT (data) - 1);
}

static void
batch_free (Batch *b)
{
  g_free (b->batch_id);
  g_free (b->temp_prefix);
  if (b->w_fd >= 0)
    close (b->w_fd);
  if (b->stage_fd >= 0)
    close (b->stage_fd);
  g_clear_pointer (&b->dirs, g_hash_table_unref);
  g_clear_pointer (&b->ops, g_ptr_array_unref);
  g_free (b->journal_dir);
  g_free (b->journal_path);
  g_clear_pointer (&b->stale, g_ptr_array_unref);
  g_free (b->ledger_file);
  g_free (b);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Batch, batch_free)

PaddockApplyItem *
paddock_apply_item_new (const char             *path,
                        PaddockApplyAction      action,
                        guint                   group,
                        gboolean                forced,
                        const PaddockFileStamp *baseline)
{
  PaddockApplyItem *item = g_new0 (PaddockApplyItem, 1);

  g_return_val_if_fail (path != NULL, NULL);

  item->path = g_strdup (path);
  item->action = action;
  item->group = group;
  item->forced = forced;
  if (baseline != NULL)
    item->baseline = *baseline;
  return item;
}

void
paddock_apply_item_free (PaddockApplyItem *item)
{
  if (item == NULL)
    return;
  g_free (item->path);
  g_free (item->pin_sha);
  g_free (item);
}

void
paddock_apply_result_free (PaddockApplyResult *result)
{
  if (result == NULL)
    return;
  g_clear_pointer (&result->applied, g_ptr_array_unref);
  g_clear_pointer (&result->conflicts, g_ptr_array_unref);
  g_clear_pointer (&result->new_stamps, g_ptr_array_unref);
  g_free (result->batch_id);
  g_free (result);
}

/* ---- errors ------------------------------------------------------------ */

static int
code_from_errno (int saved_errno)
{
  switch (saved_errno)
    {
    case ENOSPC:
    case EDQUOT:
      return PADDOCK_APPLY_ERROR_NO_SPACE;
    case EROFS:
    case EACCES:
    case EPERM:
      return PADDOCK_APPLY_ERROR_READ_ONLY;
    default:
      return PADDOCK_APPLY_ERROR_FAILED;
    }
}

/* Paths are raw bytes; messages are UTF-8. */
static char *
printable (const char *path)
{
  return g_utf8_make_valid (path, -1);
}

static gboolean
set_errno_error (GError     **error,
                 int          saved_errno,
                 const char  *what,
                 const char  *path)
{
  g_autofree char *p = printable (path != NULL ? path : "");

  g_set_error (error, PADDOCK_APPLY_ERROR, code_from_errno (saved_errno),
               "%s “%s”: %s", what, p, g_strerror (saved_errno));
  return FALSE;
}

static gboolean
propagate_io_error (GError **error,
                    GError  *io_error)
{
  int code = PADDOCK_APPLY_ERROR_FAILED;

  if (g_error_matches (io_error, G_IO_ERROR, G_IO_ERROR_NO_SPACE))
    code = PADDOCK_APPLY_ERROR_NO_SPACE;
  else if (g_error_matches (io_error, G_IO_ERROR, G_IO_ERROR_READ_ONLY) ||
           g_error_matches (io_error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED))
    code = PADDOCK_APPLY_ERROR_READ_ONLY;
  g_set_error_literal (error, PADDOCK_APPLY_ERROR, code, io_error->message);
  g_error_free (io_error);
  return FALSE;
}

/* ---- paths beneath a root ---------------------------------------------- */

/* Opens @rel beneath @root_fd. RESOLVE_BENEATH: no '..' or absolute path
 * escapes the workspace (or the stage); RESOLVE_NO_SYMLINKS: a symlink in
 * place of a folder is refused (ELOOP) rather than followed out of the tree,
 * since the agent — or anyone writing to the workspace — could plant one;
 * RESOLVE_NO_MAGICLINKS: no /proc-style jumps. Mount points are crossed. */
static int
open_beneath (int         root_fd,
              const char *rel,
              int         flags)
{
  int fd;
  int tries = 0;

  if (rel[0] == '\0')
    return openat (root_fd, ".", flags | O_CLOEXEC);

  do
    fd = paddock_compat_openat2_beneath (root_fd, rel, flags, 0);
  /* EAGAIN: a concurrent rename raced the lookup; the kernel asks us to retry. */
  while (fd < 0 && (errno == EINTR || errno == EAGAIN) && ++tries < 16);

  return fd;
}

static char *
path_parent (const char *path)
{
  const char *slash = strrchr (path, '/');

  return slash != NULL ? g_strndup (path, (gsize) (slash - path)) : g_strdup ("");
}

static const char *
path_name (const char *path)
{
  const char *slash = strrchr (path, '/');

  return slash != NULL ? slash + 1 : path;
}

static guint
path_depth (const char *path)
{
  guint depth = 1;

  for (; *path; path++)
    if (*path == '/')
      depth++;
  return depth;
}

static gboolean
validate_path (const char  *path,
               GError     **error)
{
  g_auto(GStrv) parts = NULL;
  g_autofree char *p = printable (path);

  if (path[0] == '\0' || path[0] == '/')
    goto invalid;

  parts = g_strsplit (path, "/", -1);
  for (guint i = 0; parts[i] != NULL; i++)
    {
      if (parts[i][0] == '\0' || strcmp (parts[i], ".") == 0 || strcmp (parts[i], "..") == 0)
        goto invalid;
      /* Our own temp/backup names are reserved: an item naming one could
       * collide with, or remove, another batch's backup. */
      if (g_str_has_prefix (parts[i], TEMP_PREFIX))
        goto invalid;
    }
  return TRUE;

invalid:
  g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH,
               "Invalid path “%s”", p);
  return FALSE;
}

static void
stamp_clear (PaddockFileStamp *stamp)
{
  memset (stamp, 0, sizeof *stamp);
}

static int
stamp_at (int               dir_fd,
          const char       *name,
          PaddockFileStamp *stamp)
{
  struct stat st;

  stamp_clear (stamp);
  if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? 0 : -1;
  paddock_file_stamp_from_stat (stamp, &st);
  return 0;
}

/* The lstat() stamp of @rel beneath @root_fd; absent when a folder on the
 * way is missing, is not a folder, or is a symlink (the entry is then not
 * part of the tree; the plan refuses to create beneath such a symlink). */
static gboolean
stamp_beneath (int               root_fd,
               const char       *rel,
               PaddockFileStamp *stamp,
               GError          **error)
{
  g_autofree char *parent = path_parent (rel);
  paddock_autofd int fd = open_beneath (root_fd, parent, O_RDONLY | O_DIRECTORY);

  stamp_clear (stamp);
  if (fd < 0)
    {
      if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
        return TRUE;
      return set_errno_error (error, errno, "Could not open the folder of", rel);
    }
  if (stamp_at (fd, path_name (rel), stamp) != 0)
    return set_errno_error (error, errno, "Could not inspect", rel);
  return TRUE;
}

/* After a rename the moved inode's ctime changes (ext4, tmpfs), so the
 * check after our own rename compares what a writer would change: identity,
 * type, mode, size and mtime. A folder's own size and mtime change when the
 * batch renames its children to backups, so a folder compares identity and
 * mode only. */
static gboolean
stamp_same_entry (const PaddockFileStamp *a,
                  const PaddockFileStamp *b)
{
  if (a->present != b->present)
    return FALSE;
  if (!a->present)
    return TRUE;
  if (a->ino != b->ino || a->mode != b->mode)
    return FALSE;
  if (S_ISDIR (a->mode))
    return TRUE;
  return a->size == b->size && a->mtime_ns == b->mtime_ns;
}

/* ---- content ----------------------------------------------------------- */

static gboolean
write_all (int          fd,
           const char  *data,
           gsize        length)
{
  while (length > 0)
    {
      gssize n = write (fd, data, length);

      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return FALSE;
        }
      data += n;
      length -= (gsize) n;
    }
  return TRUE;
}

static char *sha256_fd (int fd);

/* The SHA-256 of a file's bytes; for a file with holes larger than a
 * review blob, paddock_sparse_sha256() (*out_extents set) so a sparse
 * terabyte is not read as a terabyte of zeros. */
static char *
sha256_fd_bounded (int       fd,
                   gboolean *out_extents)
{
  struct stat st;

  *out_extents = FALSE;
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && st.st_size > 8 * 1024 * 1024 &&
      paddock_allocated_bytes (&st) < (guint64) st.st_size)
    {
      *out_extents = TRUE;
      return paddock_sparse_sha256 (fd, NULL, NULL);
    }
  return sha256_fd (fd);
}

static char *
sha256_fd (int fd)
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  char buf[65536];
  off_t offset = 0;

  for (;;)
    {
      gssize n = pread (fd, buf, sizeof buf, offset);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return NULL;
      if (n == 0)
        break;
      g_checksum_update (sum, (const guchar *) buf, n);
      offset += n;
    }
  return g_strdup (g_checksum_get_string (sum));
}

static char *
read_link_at (int         dir_fd,
              const char *name)
{
  char buf[PATH_MAX + 1];
  gssize n = readlinkat (dir_fd, name, buf, sizeof buf - 1);

  if (n < 0)
    return NULL;
  return g_strndup (buf, (gsize) n);
}

/* The SHA-256 of a file's content or a symlink's text; NULL for anything
 * else (folders) or when it cannot be read. */
static char *
sha256_entry_at (int                     dir_fd,
                 const char             *name,
                 const PaddockFileStamp *stamp,
                 gboolean               *out_extents)
{
  *out_extents = FALSE;
  if (!stamp->present)
    return NULL;
  if (S_ISREG (stamp->mode))
    {
      /* O_NOFOLLOW: the entry was a file at lstat time; if it became a
       * symlink since, do not read through it. */
      paddock_autofd int fd = openat (dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

      return fd >= 0 ? sha256_fd_bounded (fd, out_extents) : NULL;
    }
  if (S_ISLNK (stamp->mode))
    {
      g_autofree char *text = read_link_at (dir_fd, name);

      return text != NULL ? g_compute_checksum_for_string (G_CHECKSUM_SHA256, text, -1) : NULL;
    }
  return NULL;
}

/* TRUE when the folder @name holds nothing but this batch's temp names
 * (the backups of its children removed earlier in the batch). */
static gboolean
dir_holds_only_ours (int         dir_fd,
                     const char *name,
                     const char *prefix)
{
  int fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR *dir;
  struct dirent *de;
  gboolean only_ours = TRUE;

  if (fd < 0)
    return FALSE;
  dir = fdopendir (fd);
  if (dir == NULL)
    {
      close (fd);
      return FALSE;
    }
  while ((de = readdir (dir)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (!g_str_has_prefix (de->d_name, prefix))
        {
          only_ours = FALSE;
          break;
        }
    }
  closedir (dir);
  return only_ours;
}

/* Removes the entry @name, which is ours (a temp or a backup). A folder
 * loses the entries named with @prefix (nested temps and backups), then
 * itself; anything else in it stays and so does the folder. Never follows
 * a symlink. Only unlinks, so it works on a full disk. */
static gboolean
remove_ours_at (int         dir_fd,
                const char *name,
                const char *prefix)
{
  struct stat st;

  if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT;

  if (S_ISDIR (st.st_mode))
    {
      int fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
      DIR *dir;
      struct dirent *de;

      if (fd < 0)
        return FALSE;
      /* Let us unlink in it even if the batch made it read-only. */
      (void) fchmod (fd, (st.st_mode & 07777) | S_IRWXU);
      dir = fdopendir (fd);
      if (dir == NULL)
        {
          close (fd);
          return FALSE;
        }
      while ((de = readdir (dir)) != NULL)
        if (g_str_has_prefix (de->d_name, prefix))
          g_ptr_array_add (names, g_strdup (de->d_name));
      for (guint i = 0; i < names->len; i++)
        (void) remove_ours_at (dirfd (dir), g_ptr_array_index (names, i), prefix);
      closedir (dir);
      return unlinkat (dir_fd, name, AT_REMOVEDIR) == 0;
    }

  return unlinkat (dir_fd, name, 0) == 0;
}

/* ---- the batch --------------------------------------------------------- */

static void
step (Batch *b)
{
  b->step++;
  if (b->fault_step != 0 && b->step == b->fault_step)
    raise (SIGKILL);
  /* Lets a test act as a concurrent writer at a chosen point. */
  if (b->stop_step != 0 && b->step == b->stop_step)
    raise (SIGSTOP);
}

/* The folder @rel of the workspace: an existing one opened beneath it, or
 * a new one made by this batch (registered when its temp is made). */
static int
dir_fd_for (Batch      *b,
            const char *rel)
{
  gpointer value = g_hash_table_lookup (b->dirs, rel);
  int fd;

  if (value != NULL)
    return GPOINTER_TO_INT (value) - 1;

  fd = open_beneath (b->w_fd, rel, O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return -1;
  g_hash_table_insert (b->dirs, g_strdup (rel), GINT_TO_POINTER (fd + 1));
  return fd;
}

static int
op_parent_fd (Batch *b,
              Op    *op)
{
  gpointer value = g_hash_table_lookup (b->dirs, op->parent);

  g_assert (value != NULL);
  return GPOINTER_TO_INT (value) - 1;
}

static const char *
op_kind_name (OpKind kind)
{
  switch (kind)
    {
    case OP_REMOVE: return "remove";
    case OP_DIR:    return "dir";
    case OP_CHMOD:  return "chmod";
    case OP_PUT:    return "put";
    default:        g_assert_not_reached ();
    }
}

static void
add_b64 (JsonBuilder *builder,
         const char  *member,
         const char  *bytes)
{
  g_autofree char *b64 = g_base64_encode ((const guchar *) bytes, strlen (bytes));

  json_builder_set_member_name (builder, member);
  json_builder_add_string_value (builder, b64);
}

static gboolean
journal_write (Batch       *b,
               const char  *state,
               const char  *ledger_file,
               const char  *ledger_line,
               GError     **error)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;
  GError *io_error = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "version");
  json_builder_add_int_value (builder, 1);
  json_builder_set_member_name (builder, "batch");
  json_builder_add_string_value (builder, b->batch_id);
  json_builder_set_member_name (builder, "state");
  json_builder_add_string_value (builder, state);
  /* Which workspace the names are relative to: recovery refuses to act on
   * another one (its temp names would not match anyway, but the journal
   * would be lost). */
  json_builder_set_member_name (builder, "workspace_dev");
  json_builder_add_int_value (builder, (gint64) b->w_dev);
  json_builder_set_member_name (builder, "workspace_ino");
  json_builder_add_int_value (builder, (gint64) b->w_ino);
  /* Where recovery records itself, whatever the state. */
  if (b->ledger_file != NULL)
    {
      json_builder_set_member_name (builder, "ledger");
      json_builder_add_string_value (builder, b->ledger_file);
    }
  if (ledger_file != NULL && ledger_line != NULL)
    {
      json_builder_set_member_name (builder, "ledger_line");
      json_builder_add_string_value (builder, ledger_line);
    }
  json_builder_set_member_name (builder, "ops");
  json_builder_begin_array (builder);
  for (guint i = 0; i < b->ops->len; i++)
    {
      Op *op = g_ptr_array_index (b->ops, i);

      if (op->noop)
        continue;
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "kind");
      json_builder_add_string_value (builder, op_kind_name (op->kind));
      add_b64 (builder, "parent", op->parent);
      add_b64 (builder, "name", op->name);
      if (op->temp != NULL)
        {
          json_builder_set_member_name (builder, "temp");
          json_builder_add_string_value (builder, op->temp);
        }
      json_builder_set_member_name (builder, "existed");
      json_builder_add_boolean_value (builder, op->existed);
      json_builder_set_member_name (builder, "ino");
      json_builder_add_int_value (builder, (gint64) op->ino);
      json_builder_set_member_name (builder, "old_mode");
      json_builder_add_int_value (builder, op->old_mode);
      /* The entry as the conflict check saw it: what a rollback must put
       * back, and tell apart from a new ctime (paddock-apply-restored.c). */
      if (op->check.present)
        {
          json_builder_set_member_name (builder, "check");
          json_builder_begin_array (builder);
          json_builder_add_int_value (builder, op->check.mode);
          json_builder_add_int_value (builder, (gint64) op->check.ino);
          json_builder_add_int_value (builder, (gint64) op->check.size);
          json_builder_add_int_value (builder, op->check.mtime_ns);
          json_builder_add_int_value (builder, op->check.ctime_ns);
          json_builder_end_array (builder);
        }
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (gen, root);
  text = json_generator_to_data (gen, NULL);

  step (b);
  if (!paddock_durable_file_replace (b->journal_path, text, -1, 0600, &io_error))
    return propagate_io_error (error, io_error);
  return TRUE;
}

static gboolean
journal_remove (const char  *journal_dir,
                const char  *journal_path,
                GError     **error)
{
  paddock_autofd int dir_fd = -1;

  if (unlink (journal_path) != 0 && errno != ENOENT)
    return set_errno_error (error, errno, "Could not remove the journal", journal_path);
  dir_fd = open (journal_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0 || fsync (dir_fd) != 0)
    return set_errno_error (error, errno, "Could not sync", journal_dir);
  return TRUE;
}

static int
lock_journal_dir (const char  *journal_dir,
                  GError     **error)
{
  g_autofree char *lock_path = g_build_filename (journal_dir, LOCK_NAME, NULL);
  paddock_autofd int fd = -1;

  if (g_mkdir_with_parents (journal_dir, 0700) != 0)
    {
      set_errno_error (error, errno, "Could not create", journal_dir);
      return -1;
    }
  fd = open (lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      set_errno_error (error, errno, "Could not open", lock_path);
      return -1;
    }
  /* One batch per workspace journal at a time: two would each take the
   * other's temps for their own leftovers. */
  if (flock (fd, LOCK_EX | LOCK_NB) != 0)
    {
      g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_FAILED,
                   "Another batch is being applied with the journal in %s", journal_dir);
      return -1;
    }
  return paddock_steal_fd (&fd);
}

static gboolean recover_locked (const char  *journal_dir,
                                const char  *workspace,
                                gboolean    *out_done,
                                GError     **error);

static Op *
op_new (OpKind      kind,
        const char *path)
{
  Op *op = g_new0 (Op, 1);

  op->kind = kind;
  op->path = g_strdup (path);
  op->parent = path_parent (path);
  op->name = g_strdup (path_name (path));
  op->dir_fd = -1;
  return op;
}

static void
op_take_temp (Batch *b,
              Op    *op)
{
  op->temp = g_strdup_printf ("%s%u", b->temp_prefix, b->n_temps++);
}

static int
compare_removals (gconstpointer a,
                  gconstpointer c)
{
  const Op *x = *(Op * const *) a;
  const Op *y = *(Op * const *) c;
  guint dx = path_depth (x->path);
  guint dy = path_depth (y->path);

  if (dx != dy)
    return dx > dy ? -1 : 1;
  return strcmp (x->path, y->path);
}

static int
compare_dirs_shallow_first (gconstpointer a,
                            gconstpointer c)
{
  const char *x = *(const char * const *) a;
  const char *y = *(const char * const *) c;
  guint dx = path_depth (x);
  guint dy = path_depth (y);

  if (dx != dy)
    return dx < dy ? -1 : 1;
  return strcmp (x, y);
}

typedef struct {
  const PaddockApplyItem *item;
  PaddockFileStamp        current;
  struct stat             stage;   /* PUT */
  gboolean                skipped;
} Selected;

/* The Selected of a proper ancestor of @path in @table (path → Selected),
 * if any; with @skipped_only, only one that is skipped. */
static gpointer
find_ancestor (GHashTable *table,
               const char *path,
               gboolean    skipped_only)
{
  g_autofree char *buf = g_strdup (path);

  for (char *slash = strchr (buf, '/'); slash != NULL; slash = strchr (slash + 1, '/'))
    {
      Selected *found;

      *slash = '\0';
      found = g_hash_table_lookup (table, buf);
      *slash = '/';
      if (found != NULL && (!skipped_only || found->skipped))
        return found;
    }
  return NULL;
}

/* ---- review pins ---------------------------------------------------------- */

/* Records @path as not what its review pinned. The batch goes on checking
 * the others, so the error names every such path at once, then refuses. */
static void
note_stale (Batch      *b,
            const char *path)
{
  g_ptr_array_add (b->stale, g_strdup (path));
}

#define STALE_NAMED_MAX 20

static gboolean
stale_error (Batch   *b,
             GError **error)
{
  g_autoptr(GString) names = g_string_new (NULL);

  for (guint i = 0; i < b->stale->len && i < STALE_NAMED_MAX; i++)
    {
      g_autofree char *p = printable (g_ptr_array_index (b->stale, i));
      g_string_append_printf (names, "%s“%s”", i > 0 ? ", " : "", p);
    }
  if (b->stale->len > STALE_NAMED_MAX)
    g_string_append_printf (names, " and %u more", b->stale->len - STALE_NAMED_MAX);
  g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_STALE,
               "Changed in the stage since the review, so nothing was applied: %s "
               "(review again to see the new content)", names->str);
  return FALSE;
}

/* Whether the stage entry as the plan saw it has the pinned type and
 * permission bits (its content is checked on the written temporary). */
static gboolean
stat_matches_pin (const PaddockApplyItem *item,
                  const struct stat      *st)
{
  return !item->pinned ||
         ((guint32) (st->st_mode & S_IFMT) == item->pin_type &&
          (guint32) (st->st_mode & 07777) == item->pin_mode);
}

/* Whether @data (a written temp's canonical digest, or a link text's) is
 * the pinned one. */
static gboolean
sha_matches_pin (const PaddockApplyItem *item,
                 const char             *sha)
{
  return !item->pinned || (sha != NULL && item->pin_sha != NULL && g_str_equal (sha, item->pin_sha));
}

static gboolean
stage_lstat (Batch       *b,
             const char  *path,
             struct stat *st)
{
  g_autofree char *parent = path_parent (path);
  paddock_autofd int fd = open_beneath (b->stage_fd, parent, O_RDONLY | O_DIRECTORY);

  if (fd < 0)
    return FALSE;
  return fstatat (fd, path_name (path), st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Builds b->ops from the selected items. */
static gboolean
plan_ops (Batch      *b,
          GPtrArray  *selected,
          GError    **error)
{
  g_autoptr(GHashTable) dir_items = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) file_items = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) dir_set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) new_dirs = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) removes = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) inodes = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  g_autoptr(GPtrArray) dir_list = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer key;

  for (guint i = 0; i < selected->len; i++)
    {
      Selected *s = g_ptr_array_index (selected, i);
      const char *path = s->item->path;

      if (s->item->action == PADDOCK_APPLY_REMOVE)
        continue;

      if (!stage_lstat (b, path, &s->stage))
        {
          int saved_errno = errno;
          g_autofree char *p = printable (path);

          /* A symlink (or file) where the stage should have a folder: the
           * agent may have planted it to make us copy from elsewhere. */
          if (saved_errno == ELOOP || saved_errno == ENOTDIR || saved_errno == EXDEV)
            {
              g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH,
                           "“%s” is not beneath a folder of the stage", p);
              return FALSE;
            }
          if (s->item->pinned)
            {
              /* Pinned as present, gone now: changed since the review. */
              note_stale (b, path);
              continue;
            }
          return set_errno_error (error, saved_errno, "Not found in the stage:", path);
        }
      if (!stat_matches_pin (s->item, &s->stage))
        {
          note_stale (b, path);
          continue;
        }
      if (S_ISDIR (s->stage.st_mode))
        g_hash_table_insert (dir_items, (gpointer) path, s);
      else if (S_ISREG (s->stage.st_mode) || S_ISLNK (s->stage.st_mode))
        g_hash_table_insert (file_items, (gpointer) path, s);
      else
        {
          g_autofree char *p = printable (path);
          g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_FAILED,
                       "“%s” in the stage is neither a file, a symlink nor a folder", p);
          return FALSE;
        }

      /* Every folder above a PUT must be a folder after the batch. */
      for (g_autofree char *d = path_parent (path); d[0] != '\0'; )
        {
          char *up = path_parent (d);

          g_hash_table_add (dir_set, g_steal_pointer (&d));
          d = up;
        }
      if (S_ISDIR (s->stage.st_mode))
        g_hash_table_add (dir_set, g_strdup (path));
    }

  /* Nothing is written when an entry is not of the pinned type and mode. */
  if (b->stale->len > 0)
    return stale_error (b, error);

  /* A PUT beneath a REMOVE or beneath a file PUT contradicts it. By hash
   * lookups of each ancestor: batches can be large. */
  for (guint i = 0; i < selected->len; i++)
    {
      Selected *s = g_ptr_array_index (selected, i);

      if (s->item->action == PADDOCK_APPLY_REMOVE)
        g_hash_table_insert (removes, (gpointer) s->item->path, s);
    }
  for (guint i = 0; i < selected->len; i++)
    {
      Selected *t = g_ptr_array_index (selected, i);

      if (t->item->action == PADDOCK_APPLY_PUT &&
          (find_ancestor (removes, t->item->path, FALSE) != NULL ||
           find_ancestor (file_items, t->item->path, FALSE) != NULL))
        {
          g_autofree char *p = printable (t->item->path);
          g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH,
                       "“%s” lies beneath an entry the batch removes or makes a file", p);
          return FALSE;
        }
    }

  /* Removals. */
  for (guint i = 0; i < selected->len; i++)
    {
      Selected *s = g_ptr_array_index (selected, i);
      Op *op;

      if (s->item->action != PADDOCK_APPLY_REMOVE)
        continue;
      op = op_new (OP_REMOVE, s->item->path);
      op->item = s->item;
      op->check = s->current;
      g_ptr_array_add (b->ops, op);
      if (!s->current.present)
        {
          op->noop = TRUE;  /* nothing there: nothing to remove */
          continue;
        }
      if (dir_fd_for (b, op->parent) < 0)
        return set_errno_error (error, errno, "Could not open the folder of", op->path);
      op->ino = s->current.ino;
      op->old_sha = sha256_entry_at (dir_fd_for (b, op->parent), op->name, &op->check,
                                    &op->old_sha_extents);
      op_take_temp (b, op);
    }
  /* Only removals so far: deepest first, so a folder's children go first. */
  g_ptr_array_sort (b->ops, compare_removals);

  /* Folders, shallowest first, so a parent is placed before its children. */
  g_hash_table_iter_init (&iter, dir_set);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_ptr_array_add (dir_list, key);
  g_ptr_array_sort (dir_list, compare_dirs_shallow_first);
  for (guint i = 0; i < dir_list->len; i++)
    {
      const char *d = g_ptr_array_index (dir_list, i);
      g_autofree char *parent = path_parent (d);
      Selected *explicit = g_hash_table_lookup (dir_items, d);
      PaddockFileStamp current;
      Op *op;

      if (g_hash_table_contains (file_items, d))
        continue;  /* refused above */

      stamp_clear (&current);
      if (!g_hash_table_contains (new_dirs, parent))
        {
          int pfd = dir_fd_for (b, parent);

          if (pfd < 0)
            {
              int saved_errno = errno;
              g_autofree char *p = printable (parent);

              if (saved_errno == ELOOP || saved_errno == ENOTDIR || saved_errno == EXDEV)
                {
                  g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH,
                               "“%s” in the workspace is not a folder (a symlink?)", p);
                  return FALSE;
                }
              return set_errno_error (error, saved_errno, "Could not open", parent);
            }
          if (stamp_at (pfd, path_name (d), &current) != 0)
            return set_errno_error (error, errno, "Could not inspect", d);
        }

      if (current.present && S_ISDIR (current.mode))
        {
          if (dir_fd_for (b, d) < 0)
            return set_errno_error (error, errno, "Could not open", d);
          if (explicit == NULL)
            continue;
          op = op_new (OP_CHMOD, d);
          op->item = explicit->item;
          op->check = current;
          op->old_mode = current.mode & 07777;
          op->new_mode = explicit->stage.st_mode & 01777;
          op->noop = op->old_mode == op->new_mode;
          g_ptr_array_add (b->ops, op);
          continue;
        }

      if (current.present && explicit == NULL)
        {
          /* Refused, not replaced: the user did not ask for this entry to
           * change, and a symlink here would lead writes out of the tree. */
          g_autofree char *p = printable (d);
          g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH,
                       "“%s” in the workspace is not a folder (a symlink?)", p);
          return FALSE;
        }

      op = op_new (OP_DIR, d);
      op->item = explicit != NULL ? explicit->item : NULL;
      op->check = current;
      op->existed = current.present;
      if (explicit != NULL)
        op->new_mode = explicit->stage.st_mode & 01777;
      else
        {
          struct stat st;

          op->new_mode = stage_lstat (b, d, &st) && S_ISDIR (st.st_mode) ? st.st_mode & 01777 : 0755;
        }
      if (op->existed)
        op->old_sha = sha256_entry_at (dir_fd_for (b, parent), op->name, &op->check,
                                    &op->old_sha_extents);
      op_take_temp (b, op);
      g_hash_table_add (new_dirs, op->path);
      g_ptr_array_add (b->ops, op);
    }

  /* Files and symlinks. */
  for (guint i = 0; i < selected->len; i++)
    {
      Selected *s = g_ptr_array_index (selected, i);
      Op *op;

      if (!g_hash_table_contains (file_items, s->item->path))
        continue;
      op = op_new (OP_PUT, s->item->path);
      op->item = s->item;
      op->check = s->current;
      op->existed = s->current.present;
      op->stage_type = s->stage.st_mode & S_IFMT;
      /* Never setuid/setgid: the agent must not mint privileged programs. */
      op->new_mode = s->stage.st_mode & 01777;
      if (op->stage_type == S_IFREG)
        {
          op->allocated = paddock_allocated_bytes (&s->stage);
          /* Names of one stage inode land as names of one new inode: a
           * file the agent hard-linked N times is not N copies on the
           * user's disk. Only within the batch: a link to anything else
           * (the workspace's own files, an unselected change) is copied. */
          if (s->stage.st_nlink > 1)
            {
              gint64 ino_key = (gint64) s->stage.st_ino;
              Op *first = g_hash_table_lookup (inodes, &ino_key);

              if (first != NULL)
                op->link_of = first;
              else
                g_hash_table_insert (inodes, g_memdup2 (&ino_key, sizeof ino_key), op);
            }
        }
      g_ptr_array_add (b->ops, op);
      /* An existing folder is opened now (a new one when its temp is made). */
      if (!g_hash_table_contains (new_dirs, op->parent) && dir_fd_for (b, op->parent) < 0)
        {
          int saved_errno = errno;
          g_autofree char *p = printable (op->parent);

          if (saved_errno == ELOOP || saved_errno == ENOTDIR || saved_errno == EXDEV)
            {
              g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH,
                           "“%s” in the workspace is not a folder (a symlink?)", p);
              return FALSE;
            }
          return set_errno_error (error, saved_errno, "Could not open", op->parent);
        }
      if (op->existed)
        op->old_sha = sha256_entry_at (dir_fd_for (b, op->parent), op->name, &op->check,
                                    &op->old_sha_extents);
      op_take_temp (b, op);
    }

  return TRUE;
}

/* Refuses a batch that cannot fit before it writes anything: the bytes
 * its new files allocate in the stage (holes cost nothing, a hard-linked
 * inode counts once) and a block per new folder, against what the
 * workspace's file system has free, and the same for inodes. The old
 * versions stay as backups until the commit, so nothing is subtracted for
 * what the batch replaces. The workspace's own file system only: a mount
 * inside it is caught by ENOSPC while writing, with the same rollback. */
static gboolean
check_space (Batch   *b,
             GError **error)
{
  struct statvfs vfs;
  guint64 need = 0, inodes = 0, avail;

  for (guint i = 0; i < b->ops->len; i++)
    {
      Op *op = g_ptr_array_index (b->ops, i);

      if (op->noop || op->kind == OP_REMOVE || op->kind == OP_CHMOD)
        continue;
      if (op->kind == OP_DIR)
        {
          need += 4096;
          inodes++;
        }
      else if (op->link_of == NULL)
        {
          need += op->stage_type == S_IFREG ? op->allocated : 4096;
          inodes++;
        }
    }
  if (fstatvfs (b->w_fd, &vfs) != 0)
    return set_errno_error (error, errno, "Could not inspect the file system of", ".");
  avail = (guint64) vfs.f_bavail * (guint64) vfs.f_frsize;
  if (need > avail)
    {
      g_autofree char *need_s = g_format_size_full (need, G_FORMAT_SIZE_IEC_UNITS);
      g_autofree char *avail_s = g_format_size_full (avail, G_FORMAT_SIZE_IEC_UNITS);

      g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_NO_SPACE,
                   "The changes need %s on the folder's file system; %s are free",
                   need_s, avail_s);
      return FALSE;
    }
  /* f_files == 0: a file system without an inode limit (btrfs). */
  if (vfs.f_files != 0 && inodes > (guint64) vfs.f_favail)
    {
      g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_NO_SPACE,
                   "The changes need %" G_GUINT64_FORMAT " new entries on the folder's "
                   "file system; it has room for %" G_GUINT64_FORMAT,
                   inodes, (guint64) vfs.f_favail);
      return FALSE;
    }
  return TRUE;
}

static gboolean
stage_one (Batch   *b,
           Op      *op,
           GError **error)
{
  int pfd = op_parent_fd (b, op);
  struct stat st;

  if (op->kind == OP_DIR)
    {
      step (b);
      /* 0700 until the batch is placed: we must be able to create the
       * children's temps in it whatever its final mode. */
      if (mkdirat (pfd, op->temp, 0700) != 0)
        return set_errno_error (error, errno, "Could not create a folder for", op->path);
      op->staged = TRUE;
      op->dir_fd = openat (pfd, op->temp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (op->dir_fd < 0 || fstat (op->dir_fd, &st) != 0)
        return set_errno_error (error, errno, "Could not open the new folder", op->path);
      op->ino = st.st_ino;
      g_hash_table_insert (b->dirs, g_strdup (op->path),
                           GINT_TO_POINTER (fcntl (op->dir_fd, F_DUPFD_CLOEXEC, 3) + 1));
      return TRUE;
    }

  g_assert (op->kind == OP_PUT);

  if (op->stage_type == S_IFLNK)
    {
      g_autofree char *sparent = path_parent (op->path);
      paddock_autofd int sfd = open_beneath (b->stage_fd, sparent, O_RDONLY | O_DIRECTORY);

      if (sfd < 0 || (op->link_text = read_link_at (sfd, op->name)) == NULL)
        return set_errno_error (error, errno, "Could not read the stage's", op->path);
      op->new_sha = g_compute_checksum_for_string (G_CHECKSUM_SHA256, op->link_text, -1);
      if (op->item->pinned)
        {
          g_autofree char *pin = paddock_content_hash_bytes (op->link_text, strlen (op->link_text));

          /* The text we are about to write is the one the review saw. */
          if (!sha_matches_pin (op->item, pin))
            {
              note_stale (b, op->path);
              return TRUE;
            }
        }

      step (b);
      if (symlinkat (op->link_text, pfd, op->temp) != 0)
        return set_errno_error (error, errno, "Could not create a symlink for", op->path);
      op->staged = TRUE;
      if (fstatat (pfd, op->temp, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return set_errno_error (error, errno, "Could not inspect the new", op->path);
      op->ino = st.st_ino;
      return TRUE;
    }
  else
    {
      /* The stage is agent-written: O_NOFOLLOW and RESOLVE_NO_SYMLINKS so
       * a symlink swapped in since the review cannot make us copy a file
       * from elsewhere into the workspace. */
      paddock_autofd int sfd = open_beneath (b->stage_fd, op->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
      paddock_autofd int fd = -1;

      if (sfd < 0)
        return set_errno_error (error, errno, "Could not open the stage's", op->path);
      if (fstat (sfd, &st) != 0 || !S_ISREG (st.st_mode))
        {
          g_autofree char *p = printable (op->path);
          g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_FAILED,
                       "“%s” in the stage is no longer a regular file", p);
          return FALSE;
        }

      /* Still the inode the plan saw, and still linked to the earlier
       * one's: then this name is a hard link to what that op wrote. One
       * step either way: a batch's step count is fixed by its plan. */
      step (b);
      if (op->link_of != NULL && op->link_of->staged && op->link_of->ino != 0)
        {
          struct stat first_st;

          if (stage_lstat (b, op->link_of->path, &first_st) && first_st.st_ino == st.st_ino &&
              first_st.st_dev == st.st_dev)
            {
              if (linkat (op_parent_fd (b, op->link_of), op->link_of->temp, pfd, op->temp, 0) == 0)
                {
                  op->staged = TRUE;
                  op->ino = op->link_of->ino;
                  op->new_sha = g_strdup (op->link_of->new_sha);
                  op->new_sha_extents = op->link_of->new_sha_extents;
                  return TRUE;
                }
              /* EXDEV (the two folders are on different mounts), EMLINK:
               * a copy of its own, as without the link. */
              if (errno != EXDEV && errno != EMLINK)
                return set_errno_error (error, errno, "Could not link", op->path);
            }
          op->link_of = NULL;
        }

      /* O_EXCL|O_NOFOLLOW: never write through whatever might sit at the
       * temp name. */
      fd = openat (pfd, op->temp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0)
        return set_errno_error (error, errno, "Could not create a file for", op->path);
      op->staged = TRUE;
      {
        g_autoptr(GError) copy_error = NULL;

        /* Data extents only: a hole in the stage stays a hole here. */
        if (!paddock_sparse_copy (sfd, fd, NULL, &copy_error))
          {
            int code = g_error_matches (copy_error, G_IO_ERROR, G_IO_ERROR_NO_SPACE)
                         ? PADDOCK_APPLY_ERROR_NO_SPACE : PADDOCK_APPLY_ERROR_FAILED;
            g_autofree char *p = printable (op->path);

            g_set_error (error, PADDOCK_APPLY_ERROR, code, "Could not write “%s”: %s",
                         p, copy_error->message);
            return FALSE;
          }
      }
      /* No fsync here: sync_staged() makes every temp durable at once. */
      if (fchmod (fd, op->new_mode) != 0 ||
          fstat (fd, &st) != 0)
        return set_errno_error (error, errno, "Could not write", op->path);
      op->ino = st.st_ino;
      op->new_sha = sha256_fd_bounded (sfd, &op->new_sha_extents);
      if (op->item->pinned)
        {
          /* Hash what was written, not the stage (which the agent may be
           * rewriting as we read it): this temp is what the rename will
           * put in place, and only the pinned bytes may be. */
          g_autoptr(GError) hash_error = NULL;
          g_autofree char *written = paddock_content_hash_fd (fd, NULL, &hash_error);

          if (written == NULL)
            return set_errno_error (error, EIO, "Could not read back", op->path);
          if (!sha_matches_pin (op->item, written))
            note_stale (b, op->path);
        }
      if (close (paddock_steal_fd (&fd)) != 0)
        return set_errno_error (error, errno, "Could not write", op->path);
      return TRUE;
    }
}

/* Makes every temp durable before the journal says "applying": one
 * syncfs() per file system the batch wrote to, rather than an fsync() per
 * file, which for 20,000 small files was a journal commit each (92 s here
 * against a few for the whole batch). syncfs() reports writeback errors
 * of the file system (Linux 5.8+), so a failed write is still caught. */
static gboolean
sync_staged (Batch   *b,
             GError **error)
{
  g_autoptr(GHashTable) devs = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  GHashTableIter iter;
  gpointer key, value;

  g_hash_table_iter_init (&iter, b->dirs);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      int fd = GPOINTER_TO_INT (value) - 1;
      struct stat st;
      gint64 dev;

      if (fstat (fd, &st) != 0)
        return set_errno_error (error, errno, "Could not inspect the folder", key);
      dev = (gint64) st.st_dev;
      if (g_hash_table_contains (devs, &dev))
        continue;
      g_hash_table_add (devs, g_memdup2 (&dev, sizeof dev));
      if (syncfs (fd) != 0)
        return set_errno_error (error, errno, "Could not write the new files to disk under", key);
    }
  return TRUE;
}

static gboolean
place_one (Batch   *b,
           Op      *op,
           GError **error)
{
  int pfd = op_parent_fd (b, op);
  PaddockFileStamp backup;
  int r;

  if (op->kind == OP_CHMOD)
    {
      int fd = dir_fd_for (b, op->path);

      step (b);
      if (fd < 0 || fchmod (fd, op->new_mode) != 0)
        return set_errno_error (error, errno, "Could not change the mode of", op->path);
      op->done = TRUE;
      return TRUE;
    }

  /* A folder goes away (removed, or replaced by a file or symlink) only
   * when empty at this point of the batch, i.e. holding only the backups
   * of its children removed earlier in it. */
  if (op->check.present && S_ISDIR (op->check.mode) &&
      !dir_holds_only_ours (pfd, op->name, b->temp_prefix))
    {
      g_autofree char *p = printable (op->path);
      g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_FAILED,
                   "The folder “%s” is not empty", p);
      return FALSE;
    }

  step (b);
  if (op->kind == OP_REMOVE)
    r = paddock_compat_rename_noreplace (pfd, op->name, pfd, op->temp);
  else if (op->existed)
    r = paddock_compat_rename_exchange (pfd, op->temp, pfd, op->name);
  else
    r = paddock_compat_rename_noreplace (pfd, op->temp, pfd, op->name);
  if (r != 0)
    {
      int saved_errno = errno;
      g_autofree char *p = printable (op->path);

      /* The entry vanished (ENOENT) or one appeared (EEXIST) since the
       * conflict check: someone else is writing there. */
      if ((saved_errno == ENOENT && (op->kind == OP_REMOVE || op->existed)) ||
          (saved_errno == EEXIST && op->kind != OP_REMOVE && !op->existed))
        {
          g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_CONFLICT,
                       "“%s” changed in the workspace while the batch was applied", p);
          return FALSE;
        }
      return set_errno_error (error, saved_errno, "Could not rename", op->path);
    }
  op->done = TRUE;

  if (op->kind != OP_REMOVE && !op->existed)
    return TRUE;

  /* The old version now sits at the temp name. If another writer changed
   * it between the conflict check and the rename, the user never reviewed
   * what we are about to discard: undo the whole batch. */
  if (stamp_at (pfd, op->temp, &backup) != 0)
    return set_errno_error (error, errno, "Could not inspect the old version of", op->path);
  if (!stamp_same_entry (&backup, &op->check))
    {
      g_autofree char *p = printable (op->path);
      g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_CONFLICT,
                   "“%s” changed in the workspace while the batch was applied", p);
      return FALSE;
    }
  return TRUE;
}

static char *
join_rel (const char *parent,
          const char *name)
{
  return parent[0] != '\0' ? g_strconcat (parent, "/", name, NULL) : g_strdup (name);
}

/* After a rollback: the entries back in place as they were, but for the
 * ctime (and a folder's mtime) our renames gave them. */
static void
note_restored (GPtrArray              *restored,
               int                     w_fd,
               const char             *path,
               const PaddockFileStamp *check)
{
  PaddockFileStamp now;
  PaddockApplyRestored *r;

  if (!check->present || !stamp_beneath (w_fd, path, &now, NULL))
    return;
  if (!stamp_same_entry (&now, check) || paddock_file_stamp_equal (&now, check))
    return;
  r = g_new0 (PaddockApplyRestored, 1);
  r->path = g_strdup (path);
  r->from = *check;
  r->to = now;
  g_ptr_array_add (restored, r);
}

static void
record_restored (const char *journal_dir,
                 GPtrArray  *restored)
{
  g_autoptr(GError) error = NULL;

  /* Not fatal: without the record the entries are conflicts, never
   * silently overwritten. */
  if (!paddock_apply_restored_add (journal_dir, restored, &error))
    g_message ("Could not record what the rollback put back in %s: %s", journal_dir,
               error->message);
}

/* Undoes, in reverse, every rename and chmod done, then removes every temp.
 * Renames, unlinks and chmods only: nothing here needs free space. */
static gboolean
rollback (Batch *b)
{
  gboolean ok = TRUE;

  for (guint i = 0; i < b->ops->len; i++)
    {
      Op *op = g_ptr_array_index (b->ops, i);

      if (op->kind == OP_DIR && op->dir_fd >= 0)
        (void) fchmod (op->dir_fd, 0700);
    }

  for (guint i = b->ops->len; i-- > 0; )
    {
      Op *op = g_ptr_array_index (b->ops, i);
      int pfd;
      int r = 0;

      if (!op->done)
        continue;
      pfd = op_parent_fd (b, op);
      switch (op->kind)
        {
        case OP_REMOVE:
          r = paddock_compat_rename_noreplace (pfd, op->temp, pfd, op->name);
          break;
        case OP_CHMOD:
          r = fchmod (dir_fd_for (b, op->path), op->old_mode);
          break;
        case OP_DIR:
        case OP_PUT:
          if (op->existed)
            r = paddock_compat_rename_exchange (pfd, op->temp, pfd, op->name);
          else
            r = paddock_compat_rename_noreplace (pfd, op->name, pfd, op->temp);
          break;
        default:
          g_assert_not_reached ();
        }
      if (r != 0)
        ok = FALSE;
      else
        op->done = FALSE;
    }

  for (guint i = b->ops->len; i-- > 0; )
    {
      Op *op = g_ptr_array_index (b->ops, i);

      if (!op->staged || op->done)
        continue;
      if (unlinkat (op_parent_fd (b, op), op->temp, op->kind == OP_DIR ? AT_REMOVEDIR : 0) != 0 &&
          errno != ENOENT)
        ok = FALSE;
    }

  return ok;
}

static char *
ledger_line_new (Batch      *b,
                 const char *who)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *time = g_date_time_format_iso8601 (now);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "time");
  json_builder_add_string_value (builder, time);
  json_builder_set_member_name (builder, "who");
  json_builder_add_string_value (builder, who != NULL ? who : "");
  json_builder_set_member_name (builder, "batch");
  json_builder_add_string_value (builder, b->batch_id);
  json_builder_set_member_name (builder, "items");
  json_builder_begin_array (builder);
  for (guint i = 0; i < b->ops->len; i++)
    {
      Op *op = g_ptr_array_index (b->ops, i);

      if (op->item == NULL)
        continue;
      json_builder_begin_object (builder);
      if (g_utf8_validate (op->path, -1, NULL))
        {
          json_builder_set_member_name (builder, "path");
          json_builder_add_string_value (builder, op->path);
        }
      else
        add_b64 (builder, "path_base64", op->path);
      json_builder_set_member_name (builder, "action");
      json_builder_add_string_value (builder, op->kind == OP_REMOVE ? "remove" : "put");
      /* A sparse file larger than a review blob is known by the hash of
       * its extents (paddock_sparse_sha256()), under its own name. */
      json_builder_set_member_name (builder, "old_sha256");
      if (op->old_sha != NULL && !op->old_sha_extents)
        json_builder_add_string_value (builder, op->old_sha);
      else
        json_builder_add_null_value (builder);
      if (op->old_sha != NULL && op->old_sha_extents)
        {
          json_builder_set_member_name (builder, "old_extents_sha256");
          json_builder_add_string_value (builder, op->old_sha);
        }
      json_builder_set_member_name (builder, "new_sha256");
      if (op->new_sha != NULL && !op->new_sha_extents)
        json_builder_add_string_value (builder, op->new_sha);
      else
        json_builder_add_null_value (builder);
      if (op->new_sha != NULL && op->new_sha_extents)
        {
          json_builder_set_member_name (builder, "new_extents_sha256");
          json_builder_add_string_value (builder, op->new_sha);
        }
      if (op->link_of != NULL)
        {
          json_builder_set_member_name (builder, "hardlink_of");
          if (g_utf8_validate (op->link_of->path, -1, NULL))
            json_builder_add_string_value (builder, op->link_of->path);
          else
            {
              g_autofree char *b64 = g_base64_encode ((const guchar *) op->link_of->path,
                                                      strlen (op->link_of->path));
              json_builder_add_string_value (builder, b64);
            }
        }
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, NULL);
}

static gboolean
ledger_append (const char  *ledger_file,
               const char  *line,
               GError     **error)
{
  g_autofree char *with_nl = g_strconcat (line, "\n", NULL);
  paddock_autofd int fd = open (ledger_file, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

  if (fd < 0)
    return set_errno_error (error, errno, "Could not open the ledger", ledger_file);
  /* One write() of the whole line with O_APPEND, so lines never interleave. */
  if (!write_all (fd, with_nl, strlen (with_nl)) || fdatasync (fd) != 0)
    return set_errno_error (error, errno, "Could not write the ledger", ledger_file);
  return TRUE;
}

static gboolean
ledger_has_batch (const char *ledger_file,
                  const char *batch_id)
{
  g_autofree char *contents = NULL;
  g_autofree char *needle = g_strdup_printf ("\"batch\":\"%s\"", batch_id);

  if (!g_file_get_contents (ledger_file, &contents, NULL, NULL))
    return FALSE;
  return strstr (contents, needle) != NULL;
}

/**
 * paddock_apply_batch:
 * @workspace: the workspace W
 * @stage_root: the folder the session's agent wrote to (overlay upper or copy)
 * @journal_dir: a private folder of the daemon's, on any file system, one
 *   per workspace; holds the journal and its lock
 * @ledger_file: (nullable): a JSON-lines file; one line per applied batch
 * @who: (nullable): recorded in the ledger
 * @items: (element-type PaddockApplyItem): what to apply
 * @result: (out): what was applied and what was skipped as a conflict
 *
 * Applies @items in one batch (see the top of this file). A conflicting,
 * non-forced item is skipped with its group and every PUT beneath it; the
 * rest is applied. Any failure undoes the whole batch before returning it:
 * %PADDOCK_APPLY_ERROR_NO_SPACE, %PADDOCK_APPLY_ERROR_READ_ONLY,
 * %PADDOCK_APPLY_ERROR_INVALID_PATH (a bad path, or a symlink or file where
 * the batch needs a folder), %PADDOCK_APPLY_ERROR_CONFLICT (an entry changed
 * between the check and its rename) or %PADDOCK_APPLY_ERROR_FAILED. A batch
 * left unfinished by a crash is recovered first.
 *
 * An undone rename still gives the entry a new ctime: after a failed batch,
 * the items it touched no longer match baselines taken before it.
 *
 * Returns: %TRUE when the batch was committed.
 */
gboolean
paddock_apply_batch (const char          *workspace,
                     const char          *stage_root,
                     const char          *journal_dir,
                     const char          *ledger_file,
                     const char          *who,
                     GPtrArray           *items,
                     PaddockApplyResult **result,
                     GCancellable        *cancellable,
                     GError             **error)
{
  g_autoptr(Batch) b = g_new0 (Batch, 1);
  g_autoptr(PaddockApplyResult) res = g_new0 (PaddockApplyResult, 1);
  g_autoptr(GPtrArray) selected = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) skipped_groups = g_hash_table_new (NULL, NULL);
  g_autoptr(GHashTable) put_items = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) checked = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) restored = NULL;
  g_autofree char *ledger_line = NULL;
  g_autoptr(GError) local_error = NULL;
  paddock_autofd int lock_fd = -1;
  const char *fault;
  gboolean cleanup_ok = TRUE;

  g_return_val_if_fail (workspace != NULL, FALSE);
  g_return_val_if_fail (stage_root != NULL, FALSE);
  g_return_val_if_fail (journal_dir != NULL, FALSE);
  g_return_val_if_fail (items != NULL, FALSE);
  g_return_val_if_fail (result != NULL && *result == NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  b->w_fd = -1;
  b->stage_fd = -1;
  b->dirs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, close_fd_value);
  b->ops = g_ptr_array_new_with_free_func ((GDestroyNotify) op_free);
  b->journal_dir = g_strdup (journal_dir);
  b->journal_path = g_build_filename (journal_dir, JOURNAL_NAME, NULL);
  b->stale = g_ptr_array_new_with_free_func (g_free);
  b->ledger_file = g_strdup (ledger_file);
  {
    g_autofree char *uuid = g_uuid_string_random ();
    GString *id = g_string_new (NULL);

    for (const char *c = uuid; *c; c++)
      if (*c != '-')
        g_string_append_c (id, *c);
    b->batch_id = g_string_free (id, FALSE);
  }
  b->temp_prefix = g_strdup_printf (TEMP_PREFIX "%s-", b->batch_id);
  fault = g_getenv ("PADDOCK_FAULT_APPLY_STEP");
  if (fault != NULL)
    b->fault_step = (guint) g_ascii_strtoull (fault, NULL, 10);
  fault = g_getenv ("PADDOCK_FAULT_APPLY_STOP");
  if (fault != NULL)
    b->stop_step = (guint) g_ascii_strtoull (fault, NULL, 10);

  res->applied = g_ptr_array_new_with_free_func (g_free);
  res->conflicts = g_ptr_array_new_with_free_func (g_free);
  res->new_stamps = g_ptr_array_new_with_free_func (g_free);
  res->batch_id = g_strdup (b->batch_id);

  lock_fd = lock_journal_dir (journal_dir, error);
  if (lock_fd < 0)
    return FALSE;
  /* A batch the daemon did not finish is finished (or undone) first. */
  if (!recover_locked (journal_dir, workspace, NULL, error))
    return FALSE;

  b->w_fd = open (workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (b->w_fd < 0)
    return set_errno_error (error, errno, "Could not open the workspace", workspace);
  {
    struct stat st;

    if (fstat (b->w_fd, &st) != 0)
      return set_errno_error (error, errno, "Could not inspect the workspace", workspace);
    b->w_dev = st.st_dev;
    b->w_ino = st.st_ino;
  }
  b->stage_fd = open (stage_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (b->stage_fd < 0)
    return set_errno_error (error, errno, "Could not open the stage", stage_root);
  restored = paddock_apply_restored_load (journal_dir);

  /* Plan: validate, then check every item against its baseline. */
  for (guint i = 0; i < items->len; i++)
    {
      const PaddockApplyItem *item = g_ptr_array_index (items, i);
      Selected *s = g_new0 (Selected, 1);

      g_ptr_array_add (checked, s);
      s->item = item;
      if (!validate_path (item->path, error))
        return FALSE;
      if (!g_hash_table_add (seen, item->path))
        {
          g_autofree char *p = printable (item->path);
          g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_INVALID_PATH,
                       "“%s” appears twice in the batch", p);
          return FALSE;
        }
      if (!stamp_beneath (b->w_fd, item->path, &s->current, error))
        return FALSE;
      /* An entry an earlier rollback put back is unchanged: only its
       * ctime moved, by our own renames. */
      if (paddock_apply_restored_matches (restored, item->path, &item->baseline, &s->current))
        s->current = item->baseline;
      if (!paddock_file_stamp_equal (&s->current, &item->baseline) && !item->forced)
        g_ptr_array_add (res->conflicts, g_strdup (item->path));
    }
  for (guint i = 0; i < checked->len; i++)
    {
      Selected *s = g_ptr_array_index (checked, i);

      s->skipped = !paddock_file_stamp_equal (&s->current, &s->item->baseline) && !s->item->forced;
      if (s->skipped)
        g_hash_table_add (skipped_groups, GUINT_TO_POINTER (s->item->group));
    }
  for (guint i = 0; i < checked->len; i++)
    {
      Selected *s = g_ptr_array_index (checked, i);

      if (s->item->action == PADDOCK_APPLY_PUT)
        g_hash_table_insert (put_items, (gpointer) s->item->path, s);
    }
  /* Skip, until nothing changes: the group of a skipped item, and a PUT
   * beneath a skipped PUT (a file in a folder the batch was to create
   * cannot go in without it; it is listed as a conflict too). */
  for (gboolean changed = TRUE; changed; )
    {
      changed = FALSE;
      for (guint i = 0; i < checked->len; i++)
        {
          Selected *s = g_ptr_array_index (checked, i);

          if (s->skipped)
            {
              g_hash_table_add (skipped_groups, GUINT_TO_POINTER (s->item->group));
              continue;
            }
          if (g_hash_table_contains (skipped_groups, GUINT_TO_POINTER (s->item->group)))
            {
              s->skipped = changed = TRUE;
              continue;
            }
          if (s->item->action == PADDOCK_APPLY_PUT &&
              find_ancestor (put_items, s->item->path, TRUE) != NULL)
            {
              s->skipped = changed = TRUE;
              g_ptr_array_add (res->conflicts, g_strdup (s->item->path));
            }
        }
    }
  for (guint i = 0; i < checked->len; i++)
    {
      Selected *s = g_ptr_array_index (checked, i);

      if (!s->skipped)
        g_ptr_array_add (selected, g_memdup2 (s, sizeof *s));
    }

  if (!plan_ops (b, selected, error))
    return FALSE;
  if (!check_space (b, error))
    return FALSE;

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;

  if (!journal_write (b, "preparing", NULL, NULL, error))
    {
      (void) journal_remove (journal_dir, b->journal_path, NULL);
      return FALSE;
    }

  for (guint i = 0; i < b->ops->len; i++)
    {
      Op *op = g_ptr_array_index (b->ops, i);

      if (op->noop || op->kind == OP_REMOVE || op->kind == OP_CHMOD)
        continue;
      /* Writing the temps is most of a big batch: a client gone (the
       * caller's name left the bus) stops it here, rolled back whole. */
      if (g_cancellable_set_error_if_cancelled (cancellable, &local_error) ||
          !stage_one (b, op, &local_error))
        goto fail;
    }
  /* Every temp is written and checked: refuse the batch if any differs
   * from its review's pin (the rollback removes the temps). */
  if (b->stale->len > 0)
    {
      stale_error (b, &local_error);
      goto fail;
    }

  if (!sync_staged (b, &local_error))
    goto fail;
  if (!journal_write (b, "applying", NULL, NULL, &local_error))
    goto fail;

  for (guint i = 0; i < b->ops->len; i++)
    {
      Op *op = g_ptr_array_index (b->ops, i);

      if (op->noop)
        continue;
      if (g_cancellable_set_error_if_cancelled (cancellable, &local_error) ||
          !place_one (b, op, &local_error))
        goto fail;
    }

  /* The new folders take their own mode now that their children are in. */
  for (guint i = 0; i < b->ops->len; i++)
    {
      Op *op = g_ptr_array_index (b->ops, i);

      if (op->kind == OP_DIR && !op->noop && fchmod (op->dir_fd, op->new_mode) != 0)
        {
          set_errno_error (&local_error, errno, "Could not change the mode of", op->path);
          goto fail;
        }
    }

  /* Make every rename durable before saying "committed". */
  {
    GHashTableIter iter;
    gpointer key, value;

    g_hash_table_iter_init (&iter, b->dirs);
    while (g_hash_table_iter_next (&iter, &key, &value))
      {
        step (b);
        if (fsync (GPOINTER_TO_INT (value) - 1) != 0)
          {
            set_errno_error (&local_error, errno, "Could not sync the folder", key);
            goto fail;
          }
      }
  }

  ledger_line = ledger_line_new (b, who);
  if (!journal_write (b, "committed", ledger_file, ledger_line, &local_error))
    goto fail;

  /* Committed: from here on, nothing is undone. */
  if (ledger_file != NULL)
    {
      step (b);
      if (!ledger_append (ledger_file, ledger_line, NULL))
        cleanup_ok = FALSE;  /* the journal stays; recovery retries */
    }

  for (guint i = 0; i < b->ops->len; i++)
    {
      Op *op = g_ptr_array_index (b->ops, i);
      PaddockFileStamp *stamp;

      if (op->item == NULL)
        continue;
      g_ptr_array_add (res->applied, g_strdup (op->path));
      stamp = g_new0 (PaddockFileStamp, 1);
      if (op->kind != OP_REMOVE)
        (void) stamp_at (op_parent_fd (b, op), op->name, stamp);
      g_ptr_array_add (res->new_stamps, stamp);
    }

  for (guint i = 0; i < b->ops->len; i++)
    {
      Op *op = g_ptr_array_index (b->ops, i);

      if (!op->done || !(op->kind == OP_REMOVE || op->existed) || op->kind == OP_CHMOD)
        continue;
      step (b);
      if (!remove_ours_at (op_parent_fd (b, op), op->temp, b->temp_prefix))
        cleanup_ok = FALSE;
    }

  if (cleanup_ok)
    {
      step (b);
      (void) journal_remove (journal_dir, b->journal_path, NULL);
    }
  if (g_hash_table_size (restored) > 0)
    paddock_apply_restored_forget (journal_dir, res->applied);

  *result = g_steal_pointer (&res);
  return TRUE;

fail:
  /* Nothing was committed: put the workspace back as it was. If the
   * rollback itself fails the journal stays, for paddock_apply_recover(). */
  if (rollback (b))
    {
      g_autoptr(GPtrArray) put_back =
        g_ptr_array_new_with_free_func ((GDestroyNotify) paddock_apply_restored_free);

      for (guint i = 0; i < b->ops->len; i++)
        {
          Op *op = g_ptr_array_index (b->ops, i);

          note_restored (put_back, b->w_fd, op->path, &op->check);
        }
      record_restored (journal_dir, put_back);
      (void) journal_remove (journal_dir, b->journal_path, NULL);
    }
  g_propagate_error (error, g_steal_pointer (&local_error));
  return FALSE;
}

/* ---- recovery ---------------------------------------------------------- */

typedef struct {
  OpKind   kind;
  char    *parent;
  char    *name;
  char    *temp;
  gboolean existed;
  guint64  ino;
  guint32  old_mode;
  PaddockFileStamp check;
} JournalOp;

static void
journal_op_free (JournalOp *op)
{
  g_free (op->parent);
  g_free (op->name);
  g_free (op->temp);
  g_free (op);
}

static char *
b64_member (JsonObject *obj,
            const char *member)
{
  const char *b64 = json_object_get_string_member_with_default (obj, member, NULL);
  gsize len = 0;
  guchar *raw;

  if (b64 == NULL)
    return NULL;
  raw = g_base64_decode (b64, &len);
  if (memchr (raw, '\0', len) != NULL)
    {
      g_free (raw);
      return NULL;
    }
  raw = g_realloc (raw, len + 1);
  raw[len] = '\0';
  return (char *) raw;
}

static gboolean
corrupt (GError     **error,
         const char  *path)
{
  g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_CORRUPT_JOURNAL,
               "The apply journal %s is damaged", path);
  return FALSE;
}

/* A name that only a batch can have made: recovery never touches others. */
static gboolean
is_our_name (const char *name,
             const char *prefix)
{
  return name != NULL && g_str_has_prefix (name, prefix) && strchr (name, '/') == NULL;
}

static gboolean
recover_locked (const char  *journal_dir,
                const char  *workspace,
                gboolean    *out_done,
                GError     **error)
{
  g_autofree char *journal_path = g_build_filename (journal_dir, JOURNAL_NAME, NULL);
  g_autofree char *contents = NULL;
  g_autofree char *prefix = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GPtrArray) ops = g_ptr_array_new_with_free_func ((GDestroyNotify) journal_op_free);
  g_autoptr(GError) local_error = NULL;
  paddock_autofd int w_fd = -1;
  JsonObject *root;
  JsonArray *array;
  const char *state;
  const char *batch;
  const char *outcome = NULL;
  gboolean ok = TRUE;
  g_autoptr(GPtrArray) restored =
    g_ptr_array_new_with_free_func ((GDestroyNotify) paddock_apply_restored_free);

  if (out_done != NULL)
    *out_done = FALSE;

  if (!g_file_get_contents (journal_path, &contents, NULL, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return TRUE;
      g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_FAILED,
                   "Could not read the apply journal: %s", local_error->message);
      return FALSE;
    }

  if (!json_parser_load_from_data (parser, contents, -1, NULL) ||
      !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return corrupt (error, journal_path);
  root = json_node_get_object (json_parser_get_root (parser));
  state = json_object_get_string_member_with_default (root, "state", NULL);
  batch = json_object_get_string_member_with_default (root, "batch", NULL);
  if (state == NULL || batch == NULL || !json_object_has_member (root, "ops") ||
      !JSON_NODE_HOLDS_ARRAY (json_object_get_member (root, "ops")))
    return corrupt (error, journal_path);
  prefix = g_strdup_printf (TEMP_PREFIX "%s-", batch);

  array = json_object_get_array_member (root, "ops");
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *node = json_array_get_element (array, i);
      JsonObject *obj;
      JournalOp *op;
      const char *kind;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        return corrupt (error, journal_path);
      obj = json_node_get_object (node);
      op = g_new0 (JournalOp, 1);
      g_ptr_array_add (ops, op);
      kind = json_object_get_string_member_with_default (obj, "kind", "");
      if (strcmp (kind, "remove") == 0)
        op->kind = OP_REMOVE;
      else if (strcmp (kind, "dir") == 0)
        op->kind = OP_DIR;
      else if (strcmp (kind, "chmod") == 0)
        op->kind = OP_CHMOD;
      else if (strcmp (kind, "put") == 0)
        op->kind = OP_PUT;
      else
        return corrupt (error, journal_path);
      op->parent = b64_member (obj, "parent");
      op->name = b64_member (obj, "name");
      op->temp = g_strdup (json_object_get_string_member_with_default (obj, "temp", NULL));
      op->existed = json_object_get_boolean_member_with_default (obj, "existed", FALSE);
      op->ino = (guint64) json_object_get_int_member_with_default (obj, "ino", 0);
      op->old_mode = (guint32) json_object_get_int_member_with_default (obj, "old_mode", 0) & 07777;
      if (json_object_has_member (obj, "check") &&
          JSON_NODE_HOLDS_ARRAY (json_object_get_member (obj, "check")))
        {
          JsonArray *c = json_object_get_array_member (obj, "check");

          if (json_array_get_length (c) != 5)
            return corrupt (error, journal_path);
          op->check.present = TRUE;
          op->check.mode = (guint32) json_array_get_int_element (c, 0);
          op->check.ino = (guint64) json_array_get_int_element (c, 1);
          op->check.size = (guint64) json_array_get_int_element (c, 2);
          op->check.mtime_ns = json_array_get_int_element (c, 3);
          op->check.ctime_ns = json_array_get_int_element (c, 4);
        }
      if (op->parent == NULL || op->name == NULL || op->name[0] == '\0' ||
          strchr (op->name, '/') != NULL ||
          (op->kind != OP_CHMOD && !is_our_name (op->temp, prefix)))
        return corrupt (error, journal_path);
      if (op->parent[0] != '\0' && !validate_path (op->parent, NULL))
        return corrupt (error, journal_path);
    }

  w_fd = open (workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (w_fd < 0)
    return set_errno_error (error, errno, "Could not open the workspace", workspace);
  {
    struct stat st;

    if (fstat (w_fd, &st) != 0)
      return set_errno_error (error, errno, "Could not inspect the workspace", workspace);
    if ((guint64) json_object_get_int_member_with_default (root, "workspace_dev", 0) != st.st_dev ||
        (guint64) json_object_get_int_member_with_default (root, "workspace_ino", 0) != st.st_ino)
      {
        g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_FAILED,
                     "The apply journal %s belongs to another workspace than %s",
                     journal_path, workspace);
        return FALSE;
      }
  }

  if (strcmp (state, "preparing") == 0 || strcmp (state, "applying") == 0)
    {
      gboolean applying = strcmp (state, "applying") == 0;

      /* New folders back to 0700, parents first, so their temps can go. */
      for (guint i = 0; applying && i < ops->len; i++)
        {
          JournalOp *op = g_ptr_array_index (ops, i);
          paddock_autofd int pfd = -1;
          paddock_autofd int fd = -1;
          struct stat st;

          if (op->kind != OP_DIR)
            continue;
          pfd = open_beneath (w_fd, op->parent, O_RDONLY | O_DIRECTORY);
          if (pfd < 0)
            continue;
          fd = openat (pfd, op->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (fd >= 0 && fstat (fd, &st) == 0 && st.st_ino == op->ino)
            (void) fchmod (fd, 0700);
        }

      for (guint i = ops->len; i-- > 0; )
        {
          JournalOp *op = g_ptr_array_index (ops, i);
          paddock_autofd int pfd = open_beneath (w_fd, op->parent, O_RDONLY | O_DIRECTORY);
          PaddockFileStamp dest, temp;

          /* The folder is not reachable: its own op (earlier in the list,
           * undone after this one) takes our temps away with it. */
          if (pfd < 0)
            continue;
          if (op->kind == OP_CHMOD)
            {
              paddock_autofd int fd = -1;

              if (!applying)
                continue;
              fd = openat (pfd, op->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
              if (fd < 0 || fchmod (fd, op->old_mode) != 0)
                ok = FALSE;
              continue;
            }
          if (stamp_at (pfd, op->name, &dest) != 0 || stamp_at (pfd, op->temp, &temp) != 0)
            {
              ok = FALSE;
              continue;
            }
          if (op->kind == OP_REMOVE)
            {
              /* Renamed away (the backup has the entry's inode) → back. */
              if (applying && temp.present && temp.ino == op->ino && !dest.present &&
                  paddock_compat_rename_noreplace (pfd, op->temp, pfd, op->name) != 0)
                ok = FALSE;
              continue;
            }
          if (!applying)
            {
              /* No rename happened yet: only temps to drop. */
              if (temp.present && !remove_ours_at (pfd, op->temp, prefix))
                ok = FALSE;
              continue;
            }
          if (dest.present && dest.ino == op->ino)
            {
              /* The rename happened: exchange back, or take the new entry
               * back to its temp name, then drop it. */
              if (op->existed)
                {
                  if (!temp.present ||
                      paddock_compat_rename_exchange (pfd, op->temp, pfd, op->name) != 0)
                    {
                      ok = FALSE;
                      continue;
                    }
                }
              else if (paddock_compat_rename_noreplace (pfd, op->name, pfd, op->temp) != 0)
                {
                  ok = FALSE;
                  continue;
                }
              if (!remove_ours_at (pfd, op->temp, prefix))
                ok = FALSE;
            }
          else if (temp.present && temp.ino == op->ino)
            {
              if (!remove_ours_at (pfd, op->temp, prefix))
                ok = FALSE;
            }
        }

      /* What the next batch must not take for a conflict. */
      for (guint i = 0; ok && i < ops->len; i++)
        {
          JournalOp *op = g_ptr_array_index (ops, i);
          g_autofree char *path = join_rel (op->parent, op->name);

          note_restored (restored, w_fd, path, &op->check);
        }
      outcome = "rolled-back";
    }
  else if (strcmp (state, "committed") == 0)
    {
      const char *ledger = json_object_get_string_member_with_default (root, "ledger", NULL);
      const char *line = json_object_get_string_member_with_default (root, "ledger_line", NULL);

      /* Roll forward: the new tree is in place; drop the backups. */
      for (guint i = 0; i < ops->len; i++)
        {
          JournalOp *op = g_ptr_array_index (ops, i);
          paddock_autofd int pfd = -1;

          if (!(op->kind == OP_REMOVE || ((op->kind == OP_PUT || op->kind == OP_DIR) && op->existed)))
            continue;
          pfd = open_beneath (w_fd, op->parent, O_RDONLY | O_DIRECTORY);
          if (pfd >= 0 && !remove_ours_at (pfd, op->temp, prefix))
            ok = FALSE;
        }
      if (ledger != NULL && line != NULL && !ledger_has_batch (ledger, batch) &&
          !ledger_append (ledger, line, &local_error))
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      outcome = "rolled-forward";
    }
  else
    return corrupt (error, journal_path);

  if (!ok)
    {
      g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_FAILED,
                   "Could not finish or undo batch %s in %s; the journal is kept", batch, workspace);
      return FALSE;
    }

  /* Recorded before the journal goes: a crash in between recovers (and
   * records) again, which at worst says it twice. */
  record_restored (journal_dir, restored);
  if (!paddock_apply_record_recovery (journal_dir,
                                      json_object_get_string_member_with_default (root, "ledger", NULL),
                                      batch, outcome, restored->len, &local_error))
    g_message ("Could not record the recovery of batch %s: %s", batch, local_error->message);
  if (!journal_remove (journal_dir, journal_path, error))
    return FALSE;
  if (out_done != NULL)
    *out_done = TRUE;
  return TRUE;
}

/**
 * paddock_apply_recover:
 * @journal_dir: as given to paddock_apply_batch()
 * @workspace: the workspace the journal belongs to (checked)
 * @out_rolled_back_or_forward: (out) (optional): %TRUE when a journal was
 *   found and dealt with
 *
 * Called at daemon start: rolls an uncommitted batch back, a committed one
 * forward (backups dropped, ledger line appended if missing), then deletes
 * the journal. Without a journal it does nothing and returns %TRUE. When it
 * cannot finish, the journal stays for the next attempt.
 */
gboolean
paddock_apply_recover (const char  *journal_dir,
                       const char  *workspace,
                       gboolean    *out_rolled_back_or_forward,
                       GError     **error)
{
  paddock_autofd int lock_fd = -1;

  g_return_val_if_fail (journal_dir != NULL, FALSE);
  g_return_val_if_fail (workspace != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (out_rolled_back_or_forward != NULL)
    *out_rolled_back_or_forward = FALSE;
  if (!g_file_test (journal_dir, G_FILE_TEST_IS_DIR))
    return TRUE;
  lock_fd = lock_journal_dir (journal_dir, error);
  if (lock_fd < 0)
    return FALSE;
  return recover_locked (journal_dir, workspace, out_rolled_back_or_forward, error);
}
