/* paddock-baseline.c — the stamps of a workspace's entries at session start
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-baseline.h"
#include "paddock-change.h"
#include "paddock-durable-file.h"

/* File layout, native byte order (the file never leaves the machine that
 * wrote it): a header, an array of fixed-size entries sorted by path in
 * memcmp() order (a shorter prefix first), then the paths' bytes. Fixed-size
 * entries let load() map the file and search it in place, with no
 * allocation per entry. */
#define BASELINE_MAGIC    "PDKBASE\1"
/* Version 2: a path the walk did not see is "absent at the start" only
 * where the folder above it is known to have kept its entries since the
 * moment the baseline stands for (baseline-since, T0): a folder changed
 * since is "unknown" (its ctime), the workspace's own in the header's
 * flags, and an entry changed since is "unknown" too (see record_dir()).
 *
 * Version 1, the same layout, was written by daemons that walked at other
 * moments (before the agent ran; once it ran, for the walk's own start;
 * for T0 but without the folders' marks) and all called a path missing
 * from the walk "absent at the start", which for the later ones is wrong
 * for a file another writer deleted between T0 and the walk: the session
 * writing that path then looked like a plain addition, and Apply brought
 * the file back over the deletion. Such a file is still read (load() sets
 * legacy, paddock_baseline_is_legacy()), and its user decides what it can
 * tell: the stage walks the workspace again for T0 when it knows T0, and
 * otherwise reads it with every path it lacks "unknown", never "absent"
 * (paddock_baseline_set_missing_unknown()); a copy's own stamps, recorded
 * before the session ran in a folder nobody else writes, are read as they
 * are (paddock-stage.c). A daemon of version 1 refuses this version
 * ("unknown version") and walks again or counts every change a conflict. */
#define BASELINE_VERSION         2
#define BASELINE_VERSION_LEGACY  1
#define UPDATE_MAGIC      0x55444b50u  /* "PKDU" */
/* header.flags: the workspace's own folder had entries added or removed
 * since the moment the baseline stands for (see record_dir()). A file of
 * an older daemon has 0 there. */
#define BASELINE_FLAG_ROOT_CHANGED 0x1u
#define BASELINE_FLAGS_KNOWN       BASELINE_FLAG_ROOT_CHANGED

typedef struct {
  char    magic[8];
  guint32 version;
  guint32 entry_size;
  guint64 n_entries;
  guint64 strings_size;
  guint64 flags;      /* BASELINE_FLAG_* */
  guint64 reserved;
} BaselineHeader;

typedef struct {
  guint64 path_offset;  /* into the string table */
  guint32 path_len;
  guint32 mode;
  guint64 ino;
  guint64 size;
  gint64  mtime_ns;
  gint64  ctime_ns;
} BaselineEntry;

/* One record of FILE.updates, followed by path_len bytes of path. */
typedef struct {
  guint32 magic;
  guint32 path_len;
  guint32 present;
  guint32 mode;
  guint64 ino;
  guint64 size;
  gint64  mtime_ns;
  gint64  ctime_ns;
} UpdateRecord;

G_STATIC_ASSERT (sizeof (BaselineHeader) == 48);
G_STATIC_ASSERT (sizeof (BaselineEntry) == 48);
G_STATIC_ASSERT (sizeof (UpdateRecord) == 48);

/* A path of the journal is bounded so a corrupt length cannot make load()
 * allocate gigabytes. PATH_MAX is what the kernel accepts anyway. */
#define MAX_RELPATH 4096

struct _PaddockBaseline
{
  GObject parent_instance;

  char *file;
  GMappedFile *map;
  const BaselineEntry *entries;
  gsize n_entries;
  const char *strings;
  /* BASELINE_FLAG_*: from the file's header, or ROOT_CHANGED with no
   * entries for a baseline with no record of the start at all
   * (paddock_baseline_new_unknown()). */
  guint64 flags;
  /* Read from a version 1 file; and whether a path the walk did not see
   * is "unknown" whatever its folder says. */
  gboolean legacy;
  gboolean missing_unknown;
  /* relpath → PaddockFileStamp*, from FILE.updates; overrides the map. */
  GHashTable *updates;
};

G_DEFINE_FINAL_TYPE (PaddockBaseline, paddock_baseline, G_TYPE_OBJECT)

static void
paddock_baseline_finalize (GObject *object)
{
  PaddockBaseline *self = PADDOCK_BASELINE (object);

  g_clear_pointer (&self->file, g_free);
  g_clear_pointer (&self->map, g_mapped_file_unref);
  g_clear_pointer (&self->updates, g_hash_table_unref);

  G_OBJECT_CLASS (paddock_baseline_parent_class)->finalize (object);
}

static void
paddock_baseline_class_init (PaddockBaselineClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = paddock_baseline_finalize;
}

static void
paddock_baseline_init (PaddockBaseline *self)
{
  self->updates = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

static gboolean
set_errno_error (GError     **error,
                 int          saved_errno,
                 const char  *what,
                 const char  *path)
{
  g_autofree char *display = g_filename_display_name (path);

  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "%s %s: %s", what, display, g_strerror (saved_errno));
  return FALSE;
}

static gboolean
relpath_is_valid (const char *relpath)
{
  const char *p = relpath;

  if (*p == '\0' || *p == '/')
    return FALSE;

  /* No empty, "." or ".." component: one spelling per entry, and nothing
   * that could name a place outside the workspace. */
  while (*p != '\0')
    {
      const char *end = strchrnul (p, '/');
      gsize len = (gsize) (end - p);

      if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
        return FALSE;
      p = *end == '/' ? end + 1 : end;
      if (*end == '/' && *p == '\0')
        return FALSE;
    }

  return (p - relpath) <= MAX_RELPATH;
}

/* --- record --------------------------------------------------------- */

typedef struct {
  guint64 path_offset;
  guint32 path_len;
  PaddockFileStamp stamp;
} RecordEntry;

typedef struct {
  GArray *entries;   /* RecordEntry */
  GString *strings;  /* paths, each NUL-terminated while sorting */
  GCancellable *cancellable;
  gint64 started_ns; /* the moment the baseline stands for (the session's
                      * start, or the walk's), on the file-time clock */
  gboolean root_changed;
} RecordWalk;

/* A stamp no entry has: what was at a path at the start cannot be known
 * (it changed since, or may have been removed since). It differs from any
 * stamp lstat() gives and from "absent", so a later change of the session
 * there is always a conflict. */
static void
stamp_set_unknown (PaddockFileStamp *stamp)
{
  memset (stamp, 0, sizeof *stamp);
  stamp->present = TRUE;
  stamp->ctime_ns = G_MININT64;
}

static gboolean
stamp_is_unknown (const PaddockFileStamp *stamp)
{
  return stamp->present && stamp->ctime_ns == G_MININT64;
}

/* The folder @index of the walk (-1: the workspace itself) had entries
 * added or removed since the moment the baseline stands for: a path below
 * it that the walk did not see may have been there then. */
static void
mark_dir_changed (RecordWalk *walk,
                  gssize      index)
{
  if (index < 0)
    walk->root_changed = TRUE;
  else
    g_array_index (walk->entries, RecordEntry, index).stamp.ctime_ns = G_MININT64;
}

static int
record_entry_compare (gconstpointer a,
                      gconstpointer b,
                      gpointer      user_data)
{
  const RecordEntry *ea = a;
  const RecordEntry *eb = b;
  const char *strings = user_data;
  int cmp = memcmp (strings + ea->path_offset, strings + eb->path_offset,
                    MIN (ea->path_len, eb->path_len));

  if (cmp != 0)
    return cmp;
  return ea->path_len < eb->path_len ? -1 : ea->path_len > eb->path_len ? 1 : 0;
}

/* Records the entries of the folder @dir_fd (at @prefix; @self_index its
 * own entry in walk->entries, -1 for the workspace), then its subfolders'.
 *
 * A file removed after the moment the baseline stands for leaves no entry;
 * its folder does, though: removing (or adding, or renaming) an entry
 * changes the folder's mtime and ctime. A folder whose ctime is at or after
 * that moment once its entries have been read is marked (its own stamp
 * "unknown", or the header's flag for the workspace), and
 * paddock_baseline_lookup() calls a path missing below it "unknown", not
 * "absent at the start". A folder that vanishes or is replaced before the
 * walk opens it is marked too. */
static gboolean
record_dir (RecordWalk  *walk,
            int          dir_fd,
            const char  *prefix,
            gssize       self_index,
            GError     **error)
{
  g_autoptr(GPtrArray) subdirs = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GArray) subdir_indexes = g_array_new (FALSE, FALSE, sizeof (gssize));
  DIR *dir;
  struct dirent *de;
  struct stat dir_st;
  int dup_fd;

  if (g_cancellable_set_error_if_cancelled (walk->cancellable, error))
    return FALSE;

  /* fdopendir() takes the fd over; keep ours for openat() below. */
  dup_fd = fcntl (dir_fd, F_DUPFD_CLOEXEC, 3);
  if (dup_fd < 0)
    return set_errno_error (error, errno, "Could not read", prefix);
  dir = fdopendir (dup_fd);
  if (dir == NULL)
    {
      int saved_errno = errno;
      close (dup_fd);
      return set_errno_error (error, saved_errno, "Could not read", prefix);
    }

  while ((errno = 0, de = readdir (dir)) != NULL)
    {
      RecordEntry entry = { 0 };
      struct stat st;

      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;

      /* Never follow a symlink: the stamp is the link's own. */
      if (fstatat (dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        {
          if (errno == ENOENT)
            continue;  /* removed while we walk: nothing to record */
          if (errno == EACCES)
            {
              /* A folder we may list but not search: what it held cannot
               * be known, so everything below it is "unknown". */
              mark_dir_changed (walk, self_index);
              continue;
            }
          {
            int saved_errno = errno;
            closedir (dir);
            return set_errno_error (error, saved_errno, "Could not stat an entry of", prefix);
          }
        }

      entry.path_offset = walk->strings->len;
      if (*prefix != '\0')
        {
          g_string_append (walk->strings, prefix);
          g_string_append_c (walk->strings, '/');
        }
      g_string_append (walk->strings, de->d_name);
      entry.path_len = (guint32) (walk->strings->len - entry.path_offset);
      g_string_append_c (walk->strings, '\0');
      paddock_file_stamp_from_stat (&entry.stamp, &st);
      /* Changed since that moment: by another writer, since the
       * session's own writes never reach the workspace. What we saw may
       * already be that writer's version, so record "unknown" — a value
       * no file has — and a later change of the session there counts as a
       * conflict rather than going unnoticed. */
      if (entry.stamp.ctime_ns >= walk->started_ns)
        entry.stamp.ctime_ns = G_MININT64;
      g_array_append_val (walk->entries, entry);

      if (S_ISDIR (st.st_mode))
        {
          gssize index = (gssize) walk->entries->len - 1;

          g_ptr_array_add (subdirs, g_strdup (de->d_name));
          g_array_append_val (subdir_indexes, index);
        }
    }

  if (errno != 0)
    {
      int saved_errno = errno;
      closedir (dir);
      return set_errno_error (error, saved_errno, "Could not read", prefix);
    }
  closedir (dir);

  /* After the entries were read: a removal up to the end of readdir()
   * shows here; one after it removed an entry the walk recorded. */
  if (fstat (dir_fd, &dir_st) != 0)
    return set_errno_error (error, errno, "Could not stat", *prefix != '\0' ? prefix : ".");
  if (paddock_timespec_ns (&dir_st.st_ctim) >= walk->started_ns ||
      paddock_timespec_ns (&dir_st.st_mtim) >= walk->started_ns)
    mark_dir_changed (walk, self_index);

  for (guint i = 0; i < subdirs->len; i++)
    {
      const char *name = g_ptr_array_index (subdirs, i);
      gssize index = g_array_index (subdir_indexes, gssize, i);
      g_autofree char *sub_prefix = *prefix != '\0' ? g_strconcat (prefix, "/", name, NULL)
                                                    : g_strdup (name);
      /* O_NOFOLLOW: the entry was a directory when we stat'ed it; if it was
       * swapped for a symlink since, we must not walk out of the workspace.
       * Other mounts below W are walked: the agent sees them too. */
      paddock_autofd int sub_fd = openat (dir_fd, name,
                                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

      if (sub_fd < 0)
        {
          if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
            {
              /* Gone or replaced since it was listed, with whatever it held. */
              mark_dir_changed (walk, index);
              continue;
            }
          if (errno == EACCES)
            {
              /* A folder we may not read (another user's, say): what it
               * holds is "unknown", a conflict wherever the session writes
               * below it, rather than the whole baseline lost. */
              mark_dir_changed (walk, index);
              continue;
            }
          return set_errno_error (error, errno, "Could not open", sub_prefix);
        }
      if (!record_dir (walk, sub_fd, sub_prefix, index, error))
        return FALSE;
    }

  return TRUE;
}

/* Walks @workspace and writes the stamp of every entry below it to @file,
 * durably. A previous FILE.updates journal is removed: it belonged to the
 * previous baseline. */
gboolean
paddock_baseline_record (const char    *workspace,
                         const char    *file,
                         GCancellable  *cancellable,
                         GError       **error)
{
  return paddock_baseline_record_since (workspace, file, 0, cancellable, error);
}

/* Like paddock_baseline_record(), for the workspace as it was at @since_ns
 * (paddock_file_time_now_ns(), taken earlier; 0: when the walk begins): an
 * entry changed at or after it is recorded "unknown", so a walk that starts
 * well after the session did misses no change made meanwhile. */
gboolean
paddock_baseline_record_since (const char    *workspace,
                               const char    *file,
                               gint64         since_ns,
                               GCancellable  *cancellable,
                               GError       **error)
{
  g_autoptr(GArray) entries = g_array_new (FALSE, FALSE, sizeof (RecordEntry));
  g_autoptr(GString) strings = g_string_new (NULL);
  g_autoptr(GByteArray) out = NULL;
  g_autofree char *updates_file = NULL;
  paddock_autofd int root_fd = -1;
  gint64 now_ns = paddock_file_time_now_ns ();
  RecordWalk walk = { entries, strings, cancellable, since_ns > 0 ? MIN (since_ns, now_ns) : now_ns, FALSE };
  BaselineHeader header = { BASELINE_MAGIC, BASELINE_VERSION, sizeof (BaselineEntry) };
  gsize strings_size = 0;

  g_return_val_if_fail (workspace != NULL, FALSE);
  g_return_val_if_fail (file != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  root_fd = open (workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    return set_errno_error (error, errno, "Could not open the workspace", workspace);

  if (!record_dir (&walk, root_fd, "", -1, error))
    return FALSE;

  g_array_sort_with_data (entries, record_entry_compare, strings->str);

  for (guint i = 0; i < entries->len; i++)
    strings_size += g_array_index (entries, RecordEntry, i).path_len;

  header.n_entries = entries->len;
  header.strings_size = strings_size;
  header.flags = walk.root_changed ? BASELINE_FLAG_ROOT_CHANGED : 0;
  out = g_byte_array_sized_new (sizeof header + entries->len * sizeof (BaselineEntry) + strings_size);
  g_byte_array_append (out, (const guint8 *) &header, sizeof header);

  strings_size = 0;
  for (guint i = 0; i < entries->len; i++)
    {
      const RecordEntry *re = &g_array_index (entries, RecordEntry, i);
      BaselineEntry be = {
        .path_offset = strings_size,
        .path_len = re->path_len,
        .mode = re->stamp.mode,
        .ino = re->stamp.ino,
        .size = re->stamp.size,
        .mtime_ns = re->stamp.mtime_ns,
        .ctime_ns = re->stamp.ctime_ns,
      };

      g_byte_array_append (out, (const guint8 *) &be, sizeof be);
      strings_size += re->path_len;
    }
  for (guint i = 0; i < entries->len; i++)
    {
      const RecordEntry *re = &g_array_index (entries, RecordEntry, i);
      g_byte_array_append (out, (const guint8 *) strings->str + re->path_offset, re->path_len);
    }

  /* Remove the old journal first: a crash in between leaves the old
   * baseline without its updates, which can only flag too many conflicts,
   * never hide one. */
  updates_file = g_strconcat (file, ".updates", NULL);
  if (unlink (updates_file) != 0 && errno != ENOENT)
    return set_errno_error (error, errno, "Could not remove", updates_file);

  return paddock_durable_file_replace (file, (const char *) out->data, (gssize) out->len,
                                       0600, error);
}

/* --- load ----------------------------------------------------------- */

static gboolean
corrupt (GError     **error,
         const char  *file,
         const char  *why)
{
  g_autofree char *display = g_filename_display_name (file);

  g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CORRUPT,
               "Baseline %s is corrupt: %s", display, why);
  return FALSE;
}

static void
stamp_from_entry (PaddockFileStamp    *stamp,
                  const BaselineEntry *entry)
{
  stamp->present = TRUE;
  stamp->mode = entry->mode;
  stamp->ino = entry->ino;
  stamp->size = entry->size;
  stamp->mtime_ns = entry->mtime_ns;
  stamp->ctime_ns = entry->ctime_ns;
}

static gboolean
replay_updates (PaddockBaseline  *self,
                GError          **error)
{
  g_autofree char *updates_file = g_strconcat (self->file, ".updates", NULL);
  g_autofree char *contents = NULL;
  gsize length = 0;
  gsize pos = 0;
  g_autoptr(GError) local_error = NULL;

  if (!g_file_get_contents (updates_file, &contents, &length, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return TRUE;
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  while (length - pos >= sizeof (UpdateRecord))
    {
      UpdateRecord record;
      PaddockFileStamp *stamp;

      memcpy (&record, contents + pos, sizeof record);
      if (record.magic != UPDATE_MAGIC || record.path_len == 0 || record.path_len > MAX_RELPATH)
        return corrupt (error, updates_file, "bad update record");
      /* A record cut short is the tail of a write a crash interrupted: the
       * update never completed, so it is ignored (it was never acknowledged). */
      if (length - pos - sizeof record < record.path_len)
        break;

      stamp = g_new0 (PaddockFileStamp, 1);
      stamp->present = record.present != 0;
      stamp->mode = record.mode;
      stamp->ino = record.ino;
      stamp->size = record.size;
      stamp->mtime_ns = record.mtime_ns;
      stamp->ctime_ns = record.ctime_ns;
      g_hash_table_replace (self->updates,
                            g_strndup (contents + pos + sizeof record, record.path_len),
                            stamp);
      pos += sizeof record + record.path_len;
    }

  return TRUE;
}

/* Maps @file; the check of every entry's bounds is the only pass over it,
 * so a lookup can never read outside the mapping. */
PaddockBaseline *
paddock_baseline_load (const char  *file,
                       GError     **error)
{
  g_autoptr(PaddockBaseline) self = NULL;
  paddock_autofd int fd = -1;
  BaselineHeader header;
  const char *data;
  gsize length;
  guint64 table_size;

  g_return_val_if_fail (file != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  fd = open (file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    {
      int saved_errno = errno;
      g_autofree char *display = g_filename_display_name (file);

      if (saved_errno == ENOENT)
        g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_NOT_FOUND,
                     "No baseline at %s", display);
      else
        set_errno_error (error, saved_errno, "Could not open the baseline", file);
      return NULL;
    }

  self = g_object_new (PADDOCK_TYPE_BASELINE, NULL);
  self->file = g_strdup (file);
  self->map = g_mapped_file_new_from_fd (fd, FALSE, error);
  if (self->map == NULL)
    return NULL;

  data = g_mapped_file_get_contents (self->map);
  length = g_mapped_file_get_length (self->map);
  if (data == NULL || length < sizeof header)
    return corrupt (error, file, "too short"), NULL;

  memcpy (&header, data, sizeof header);
  if (memcmp (header.magic, BASELINE_MAGIC, sizeof header.magic) != 0)
    return corrupt (error, file, "bad magic"), NULL;
  if ((header.version != BASELINE_VERSION && header.version != BASELINE_VERSION_LEGACY) ||
      header.entry_size != sizeof (BaselineEntry))
    return corrupt (error, file, "unknown version"), NULL;
  /* A flag this daemon does not know may mean "more is unknown" in a way
   * lookup() would not honour: refused like an unknown version, so the
   * stage walks again (or counts every change a conflict), never fewer
   * conflicts than there are. */
  if ((header.flags & ~(guint64) BASELINE_FLAGS_KNOWN) != 0 || header.reserved != 0)
    return corrupt (error, file, "unknown flags"), NULL;
  if (header.n_entries > (length - sizeof header) / sizeof (BaselineEntry))
    return corrupt (error, file, "entry count out of bounds"), NULL;
  table_size = header.n_entries * sizeof (BaselineEntry);
  if (header.strings_size != length - sizeof header - table_size)
    return corrupt (error, file, "size mismatch"), NULL;

  /* mmap() is page-aligned and the header is 48 bytes, so the entries are
   * naturally aligned. */
  self->entries = (const BaselineEntry *) (gconstpointer) (data + sizeof header);
  self->n_entries = header.n_entries;
  self->strings = data + sizeof header + table_size;
  self->flags = header.flags;
  self->legacy = header.version == BASELINE_VERSION_LEGACY;

  for (gsize i = 0; i < self->n_entries; i++)
    {
      const BaselineEntry *e = &self->entries[i];

      if (e->path_len == 0 || e->path_offset > header.strings_size ||
          e->path_len > header.strings_size - e->path_offset)
        return corrupt (error, file, "path out of bounds"), NULL;
    }

  if (!replay_updates (self, error))
    return NULL;

  return g_steal_pointer (&self);
}

/* The stamp recorded for exactly @relpath (@len bytes of it): its last
 * update, else the walk's entry. FALSE when neither has it. */
static gboolean
lookup_exact (PaddockBaseline  *self,
              const char       *relpath,
              gsize             len,
              PaddockFileStamp *out)
{
  g_autofree char *key = NULL;
  const PaddockFileStamp *updated;
  gsize lo = 0;
  gsize hi = self->n_entries;

  if (g_hash_table_size (self->updates) == 0)
    updated = NULL;
  else if (relpath[len] == '\0')
    updated = g_hash_table_lookup (self->updates, relpath);
  else
    updated = g_hash_table_lookup (self->updates, (key = g_strndup (relpath, len)));
  if (updated != NULL)
    {
      *out = *updated;
      return TRUE;
    }

  while (lo < hi)
    {
      gsize mid = lo + (hi - lo) / 2;
      const BaselineEntry *e = &self->entries[mid];
      int cmp = memcmp (self->strings + e->path_offset, relpath, MIN (e->path_len, len));

      if (cmp == 0)
        cmp = e->path_len < len ? -1 : e->path_len > len ? 1 : 0;
      if (cmp == 0)
        {
          stamp_from_entry (out, e);
          return TRUE;
        }
      if (cmp < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
  return FALSE;
}

/* Fills @out with what @relpath was at session start (or at its last
 * update()); returns FALSE, with out->present = FALSE, when it did not
 * exist. A path the walk did not see is "unknown" (present, with a stamp
 * no entry has; returns TRUE) rather than absent when the nearest folder
 * above it that the baseline knows had entries added or removed since the
 * start (see record_dir()): it may have been removed meanwhile. */
gboolean
paddock_baseline_lookup (PaddockBaseline  *self,
                         const char       *relpath,
                         PaddockFileStamp *out)
{
  gsize len;

  g_return_val_if_fail (PADDOCK_IS_BASELINE (self), FALSE);
  g_return_val_if_fail (relpath != NULL, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);

  memset (out, 0, sizeof *out);

  len = strlen (relpath);
  if (lookup_exact (self, relpath, len, out))
    return out->present;

  if (self->missing_unknown)
    {
      stamp_set_unknown (out);
      return TRUE;
    }

  /* Absent from the walk: ask the folders above it, nearest first. A
   * folder the baseline knows and that kept its entries since the start
   * held no such entry then either (a folder put there since is newer
   * than the start, so "unknown" itself: rename changes its ctime). */
  while (len > 0)
    {
      PaddockFileStamp dir;

      while (len > 0 && relpath[len - 1] != '/')
        len--;
      if (len == 0)
        break;
      len--;  /* the '/' */
      if (len > 0 && lookup_exact (self, relpath, len, &dir))
        {
          if (stamp_is_unknown (&dir))
            {
              stamp_set_unknown (out);
              return TRUE;
            }
          return FALSE;
        }
    }

  if ((self->flags & BASELINE_FLAG_ROOT_CHANGED) != 0)
    {
      stamp_set_unknown (out);
      return TRUE;
    }
  return FALSE;
}

/* Whether @self was read from a file of an older daemon (version 1): one
 * in which a path the walk did not see may have been there at the start
 * (see BASELINE_VERSION). */
gboolean
paddock_baseline_is_legacy (PaddockBaseline *self)
{
  g_return_val_if_fail (PADDOCK_IS_BASELINE (self), FALSE);

  return self->legacy;
}

/* From now on lookup() calls every path the walk did not see (and no
 * update names) "unknown": for a version 1 file of the workspace, which
 * cannot say which folders kept their entries since the start. */
void
paddock_baseline_set_missing_unknown (PaddockBaseline *self)
{
  g_return_if_fail (PADDOCK_IS_BASELINE (self));

  self->missing_unknown = TRUE;
}

/* A baseline with no record of the start at all: every path is "unknown"
 * (a conflict wherever the session changed something) until an update()
 * says what Paddock put there. Updates are kept in memory only. For a
 * session whose start could not be recorded: better every change flagged
 * than an edit of someone else's overwritten unseen. */
PaddockBaseline *
paddock_baseline_new_unknown (void)
{
  PaddockBaseline *self = g_object_new (PADDOCK_TYPE_BASELINE, NULL);

  /* No entries, and the workspace's own folder "changed": lookup() finds
   * no folder above any path that kept its entries, so every path not
   * updated since is "unknown". */
  self->flags = BASELINE_FLAG_ROOT_CHANGED;
  return self;
}

/* Records that the workspace entries at @relpaths now have @stamps (one
 * stamp per path; present == FALSE: gone), because Paddock itself put them
 * there: an applied path must not later look like an external edit. The
 * records are appended to FILE.updates in one write and on disk
 * (fdatasync) before this returns. */
gboolean
paddock_baseline_update_many (PaddockBaseline  *self,
                              GPtrArray        *relpaths,
                              GPtrArray        *stamps,
                              GError          **error)
{
  g_autofree char *updates_file = NULL;
  g_autoptr(GByteArray) buf = g_byte_array_new ();
  paddock_autofd int fd = -1;
  struct stat st;
  gsize done = 0;

  g_return_val_if_fail (PADDOCK_IS_BASELINE (self), FALSE);
  g_return_val_if_fail (relpaths != NULL && stamps != NULL && relpaths->len == stamps->len, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (relpaths->len == 0)
    return TRUE;

  for (guint i = 0; i < relpaths->len && self->file == NULL; i++)
    if (!relpath_is_valid (g_ptr_array_index (relpaths, i)))
      {
        g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_INVALID_PATH,
                     "Not a relative workspace path");
        return FALSE;
      }
  if (self->file == NULL)
    goto remember;

  for (guint i = 0; i < relpaths->len; i++)
    {
      const char *relpath = g_ptr_array_index (relpaths, i);
      const PaddockFileStamp *stamp = g_ptr_array_index (stamps, i);
      UpdateRecord record = { 0 };

      if (!relpath_is_valid (relpath))
        {
          g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_INVALID_PATH,
                       "Not a relative workspace path");
          return FALSE;
        }
      record.magic = UPDATE_MAGIC;
      record.path_len = (guint32) strlen (relpath);
      record.present = stamp->present ? 1 : 0;
      if (stamp->present)
        {
          record.mode = stamp->mode;
          record.ino = stamp->ino;
          record.size = stamp->size;
          record.mtime_ns = stamp->mtime_ns;
          record.ctime_ns = stamp->ctime_ns;
        }
      g_byte_array_append (buf, (const guint8 *) &record, sizeof record);
      g_byte_array_append (buf, (const guint8 *) relpath, record.path_len);
    }

  updates_file = g_strconcat (self->file, ".updates", NULL);
  /* O_APPEND: one record after the other even if a previous write was
   * torn; O_NOFOLLOW: the state dir is ours, a symlink there is not. */
  fd = open (updates_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
  if (fd < 0)
    return set_errno_error (error, errno, "Could not open", updates_file);
  if (fstat (fd, &st) != 0)
    return set_errno_error (error, errno, "Could not stat", updates_file);

  while (done < buf->len)
    {
      gssize n = write (fd, buf->data + done, buf->len - done);

      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return set_errno_error (error, errno, "Could not write", updates_file);
        }
      done += (gsize) n;
    }

  if (fdatasync (fd) != 0)
    return set_errno_error (error, errno, "Could not sync", updates_file);

  /* The first record created the file: make its name durable too, or a
   * power loss could drop the whole journal. */
  if (st.st_size == 0)
    {
      g_autofree char *dirname = g_path_get_dirname (updates_file);
      paddock_autofd int dir_fd = open (dirname, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

      if (dir_fd < 0 || fsync (dir_fd) != 0)
        return set_errno_error (error, errno, "Could not sync the folder of", updates_file);
    }

remember:
  for (guint i = 0; i < relpaths->len; i++)
    g_hash_table_replace (self->updates, g_strdup (g_ptr_array_index (relpaths, i)),
                          g_memdup2 (g_ptr_array_index (stamps, i), sizeof (PaddockFileStamp)));
  return TRUE;
}

/* One path: see paddock_baseline_update_many(). */
gboolean
paddock_baseline_update (PaddockBaseline         *self,
                         const char              *relpath,
                         const PaddockFileStamp  *stamp,
                         GError                 **error)
{
  g_autoptr(GPtrArray) relpaths = g_ptr_array_new ();
  g_autoptr(GPtrArray) stamps = g_ptr_array_new ();

  g_return_val_if_fail (relpath != NULL && stamp != NULL, FALSE);

  g_ptr_array_add (relpaths, (gpointer) relpath);
  g_ptr_array_add (stamps, (gpointer) stamp);
  return paddock_baseline_update_many (self, relpaths, stamps, error);
}

gsize
paddock_baseline_get_n_entries (PaddockBaseline *self)
{
  g_return_val_if_fail (PADDOCK_IS_BASELINE (self), 0);
  return self->n_entries;
}
