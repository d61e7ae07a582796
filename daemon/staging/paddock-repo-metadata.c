/* paddock-repo-metadata.c — which review rows are repository metadata, not file changes
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Why: a version-control tool runs what its metadata tells it to. A
 * `.git/config` with core.fsmonitor or core.hooksPath, a hook, a
 * `.git/commondir` or a worktree's `.git` file pointing at a folder with
 * such a config, a nested repository, a `.gitmodules`, a bare repository
 * somewhere in the tree, a `.hg/hgrc` with a hook: once any of these lands
 * in the user's folder, the user's next ordinary `git status` (or their
 * prompt's, or their editor's) runs the agent's code outside the sandbox.
 * Shown as ordinary rows among a hundred, they are applied with the rest.
 *
 * So a row is metadata by what it is, never by what existed at the start:
 *   - a path component named like a VCS's metadata folder or file (`.git`
 *     folder or file, `.gitmodules`, `.hg`, `.hgsub`, `.svn`, `.bzr`,
 *     `_darcs`, `.jj`, `.pijul`, `.fslckout`, `_FOSSIL_`, `.lfsconfig`),
 *     at any depth, and everything beneath it. Names compare without
 *     ASCII case and without trailing dots and spaces, and `git~1` counts
 *     as `.git`: on a case-insensitive or Windows-style file system (vfat,
 *     ntfs3, casefolded ext4) those are the same entry as `.git`;
 *   - anything at or beneath a folder shaped like a git directory on
 *     either side (stage or workspace): a `HEAD` beside `objects`, `refs`
 *     or `commondir` — a bare repository or a linked worktree's git dir,
 *     which git finds by its shape whatever the folder is called.
 * A rename is metadata when either of its sides is: a file renamed into
 * (or out of) `.git/` must not be applied as an ordinary rename.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-compat-openat2.h"
#include "paddock-change.h"
#include "paddock-repo-metadata.h"

static const struct {
  const char *name;
  const char *reason;
} metadata_names[] = {
  { ".git",       "git metadata (.git)" },
  { "git~1",      "git metadata (.git by its 8.3 short name)" },
  { ".gitmodules", "git submodule configuration (.gitmodules)" },
  { ".lfsconfig", "git-lfs configuration (.lfsconfig)" },
  { ".hg",        "Mercurial metadata (.hg)" },
  { ".hgsub",     "Mercurial subrepository configuration (.hgsub)" },
  { ".hgsubstate", "Mercurial subrepository state (.hgsubstate)" },
  { ".svn",       "Subversion metadata (.svn)" },
  { ".bzr",       "Bazaar metadata (.bzr)" },
  { "_darcs",     "Darcs metadata (_darcs)" },
  { ".jj",        "Jujutsu metadata (.jj)" },
  { ".pijul",     "Pijul metadata (.pijul)" },
  { ".fslckout",  "Fossil checkout database (.fslckout)" },
  { "_FOSSIL_",   "Fossil checkout database (_FOSSIL_)" },
};

#define GIT_DIR_REASON "a git directory (HEAD beside objects, refs or commondir)"

/* Whether the component [name, name + length) is @want, ignoring ASCII
 * case and trailing dots and spaces. */
static gboolean
component_is (const char *name,
              gsize       length,
              const char *want)
{
  gsize want_length = strlen (want);

  while (length > 0 && (name[length - 1] == '.' || name[length - 1] == ' '))
    length--;
  return length == want_length && g_ascii_strncasecmp (name, want, length) == 0;
}

/**
 * paddock_repo_metadata_name_reason:
 * @path: a relative path, components separated by '/'
 *
 * Returns: (nullable): why @path is repository metadata by the names of
 *   its components, or %NULL
 */
const char *
paddock_repo_metadata_name_reason (const char *path)
{
  const char *p = path;

  g_return_val_if_fail (path != NULL, NULL);

  while (*p != '\0')
    {
      const char *slash = strchr (p, '/');
      gsize length = slash != NULL ? (gsize) (slash - p) : strlen (p);

      for (guint i = 0; i < G_N_ELEMENTS (metadata_names); i++)
        if (component_is (p, length, metadata_names[i].name))
          return metadata_names[i].reason;
      if (slash == NULL)
        break;
      p = slash + 1;
    }
  return NULL;
}

/* Opens the folder @rel beneath @root_fd without following any symlink
 * (both trees may hold the agent's symlinks); -1 when it is not there. */
static int
open_dir_beneath (int         root_fd,
                  const char *rel)
{
  int fd;
  int tries = 0;

  if (rel[0] == '\0')
    return openat (root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  do
    fd = paddock_compat_openat2_beneath (root_fd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
  while (fd < 0 && (errno == EINTR || errno == EAGAIN) && ++tries < 16);
  return fd;
}

/* Which of git's markers the folder @rel holds on one side, as bits:
 * 1 HEAD, 2 objects, 4 refs, 8 commondir. Any type counts (a symlinked
 * HEAD or objects is still one to git). */
static guint
markers_in (int         root_fd,
            const char *rel)
{
  static const char *const names[] = { "HEAD", "objects", "refs", "commondir" };
  paddock_autofd int fd = open_dir_beneath (root_fd, rel);
  guint bits = 0;

  if (fd < 0)
    return 0;
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      struct stat st;

      /* An overlay whiteout is a character device 0/0: a deletion. */
      if (fstatat (fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          !(S_ISCHR (st.st_mode) && st.st_rdev == 0))
        bits |= 1u << i;
    }
  return bits;
}

/* The folder of the last path looked at on one side, kept open: rows
 * come sorted, so the files of one folder follow one another. */
typedef struct {
  char *dir;  /* NULL: none yet */
  int   fd;   /* -1: not a folder on this side */
} Folder;

typedef struct {
  int         w_fd;
  int         s_fd;
  GHashTable *shaped;  /* folder → GINT_TO_POINTER (1 not a git dir, 2 a git dir) */
  Folder      w_parent;
  Folder      s_parent;
} Shapes;

/* Whether @rel is a folder (not a symlink to one) beneath @root_fd, with
 * one fstatat() in its parent folder: telling a file's path from a folder
 * this way costs no path walk per row, where opening it as a folder (to
 * find it is none) cost two openat2() per changed file. */
static gboolean
is_folder (Folder     *parent,
           int         root_fd,
           const char *rel)
{
  const char *slash = strrchr (rel, '/');
  gsize len = slash != NULL ? (gsize) (slash - rel) : 0;
  struct stat st;

  if (parent->dir == NULL || strlen (parent->dir) != len || strncmp (parent->dir, rel, len) != 0)
    {
      g_free (parent->dir);
      paddock_close_fd (&parent->fd);
      parent->dir = g_strndup (rel, len);
      parent->fd = open_dir_beneath (root_fd, parent->dir);
    }
  return parent->fd >= 0 &&
         fstatat (parent->fd, slash != NULL ? slash + 1 : rel, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISDIR (st.st_mode);
}

/* Whether the folder @rel looks like a git directory on either side. The
 * union of both sides errs towards metadata: HEAD in the workspace and
 * objects in the stage make a git directory once both are there. */
static gboolean
is_git_dir (Shapes     *shapes,
            const char *rel)
{
  gpointer known = g_hash_table_lookup (shapes->shaped, rel);
  guint bits;
  gboolean answer;

  if (known != NULL)
    return GPOINTER_TO_INT (known) == 2;
  bits = markers_in (shapes->s_fd, rel) | markers_in (shapes->w_fd, rel);
  answer = (bits & 1) != 0 && (bits & (2 | 4 | 8)) != 0;
  g_hash_table_insert (shapes->shaped, g_strdup (rel), GINT_TO_POINTER (answer ? 2 : 1));
  return answer;
}

static const char *
path_reason (Shapes     *shapes,
             const char *path)
{
  const char *reason = paddock_repo_metadata_name_reason (path);
  g_autofree char *prefix = NULL;

  if (reason != NULL)
    return reason;
  /* Every folder on the way, the workspace itself included (an agent's
   * HEAD+objects+refs at the top turns the workspace into a bare
   * repository), and @path itself when it is a folder. */
  if (is_git_dir (shapes, ""))
    return GIT_DIR_REASON;
  prefix = g_strdup (path);
  for (char *slash = prefix; slash != NULL; )
    {
      char saved;

      slash = strchr (slash, '/');
      if (slash != NULL)
        {
          saved = *slash;
          *slash = '\0';
        }
      /* @path itself only when it is a folder on either side. */
      if (slash == NULL && !g_hash_table_contains (shapes->shaped, prefix) &&
          !is_folder (&shapes->s_parent, shapes->s_fd, prefix) &&
          !is_folder (&shapes->w_parent, shapes->w_fd, prefix))
        break;
      if (is_git_dir (shapes, prefix))
        return GIT_DIR_REASON;
      if (slash != NULL)
        *slash++ = saved;
    }
  return NULL;
}

/**
 * paddock_repo_metadata_classify:
 * @changes: (element-type PaddockChange): review rows
 * @workspace_fd: the workspace folder
 * @stage_fd: the stage root (an overlay upper or a full copy)
 *
 * Sets each row's metadata reason: %NULL for an ordinary change.
 */
void
paddock_repo_metadata_classify (GPtrArray *changes,
                                int        workspace_fd,
                                int        stage_fd)
{
  Shapes shapes = { workspace_fd, stage_fd,
                    g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL),
                    { NULL, -1 }, { NULL, -1 } };

  for (guint i = 0; i < changes->len; i++)
    {
      PaddockChange *change = g_ptr_array_index (changes, i);
      const char *old_path = paddock_change_get_old_path (change);
      const char *reason = path_reason (&shapes, paddock_change_get_path (change));

      if (reason == NULL && old_path != NULL)
        reason = path_reason (&shapes, old_path);
      paddock_change_set_metadata_reason (change, reason);
    }
  g_hash_table_unref (shapes.shaped);
  g_free (shapes.w_parent.dir);
  g_free (shapes.s_parent.dir);
  paddock_close_fd (&shapes.w_parent.fd);
  paddock_close_fd (&shapes.s_parent.fd);
}
