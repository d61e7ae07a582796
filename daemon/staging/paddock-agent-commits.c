/* paddock-agent-commits.c — the commits an agent made in its stage, offered as a branch
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * An agent that runs `git commit` in its session writes objects and a ref
 * into the stage's .git (the overlay's upper layer, or the copy). Apply
 * never writes .git as files; instead the commits are offered here as one
 * new branch of the real repository, made with libgit2 by copying objects
 * and writing one ref.
 *
 * The stage's .git is the agent's: everything in it is hostile. So it is
 * never opened as a repository (its config could name alternates, an
 * fsmonitor, filters, hooks; a `.git` file could point anywhere). We read
 * only three things, each through openat() with O_NOFOLLOW on every
 * component, beneath the stage's .git: HEAD, loose refs and packed-refs
 * (bounded, names validated), and loose objects (inflated with a bound,
 * hashed again and compared with their name — the daemon turns libgit2's
 * own hash verification off for its in-memory reviews). Objects that pass
 * are copied into an in-memory pack (mempack) and everything after —
 * parsing, walking, diffs, the copy into the real repository — reads that
 * memory, never the stage again: what is shown is what is applied.
 * objects/info/alternates, commit-graph, hooks, config and packs of the
 * stage are never read (a commit whose objects are only in a pack of the
 * stage fails as not found rather than reading a pack we cannot bound).
 *
 * The real repository (the workspace's, the user's own) is opened
 * normally, read-only until Apply; the listed commits are the ones
 * reachable from the stage's HEAD and from no ref of the real repository.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <json-glib/json-glib.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "paddock-agent-commits.h"
#include "paddock-autofd.h"
#include "paddock-change.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_repository, git_repository_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_odb, git_odb_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_odb_object, git_odb_object_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_object, git_object_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_commit, git_commit_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_tree, git_tree_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_diff, git_diff_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_reference, git_reference_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_reference_iterator, git_reference_iterator_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_revwalk, git_revwalk_free)

/* A ref file or HEAD is one line; packed-refs of a large repository is
 * large, but not without bound. Symbolic refs chain at most this deep
 * (git's own limit is 5). */
#define REF_FILE_MAX      4096
#define PACKED_REFS_MAX   (32 * 1024 * 1024)
#define SYMREF_DEPTH_MAX  5
/* A subject or author as shown: a line, not a novel. */
#define LINE_MAX_BYTES    1024
/* A commit's message in its diff header. */
#define MESSAGE_MAX_BYTES (64 * 1024)

struct _PaddockAgentCommits
{
  GObject          parent_instance;

  char            *stage_root;
  int              git_fd;        /* the stage's .git, or -1 */
  int              objects_fd;    /* its objects/, or -1 */
  char            *packed_refs;   /* the stage's packed-refs, read once (NULL: none) */
  gboolean         packed_refs_read;

  git_repository  *real;          /* the workspace's repository, or NULL */
  git_odb         *real_odb;
  git_repository  *work;          /* mempack + the real objects, read-only */
  git_odb         *work_odb;

  char            *head;          /* "refs/heads/…" the stage's HEAD names, or "HEAD" */
  char            *tip;           /* hex */
  git_oid          tip_oid;
  GArray          *fetched;       /* git_oid: objects the stage has and the real repo lacks */
  guint64          fetched_bytes;
  GPtrArray       *commits;       /* PaddockAgentCommit, newest first */
};

G_DEFINE_FINAL_TYPE (PaddockAgentCommits, paddock_agent_commits, G_TYPE_OBJECT)

static void
agent_commit_free (PaddockAgentCommit *commit)
{
  g_free (commit->id);
  g_free (commit->subject);
  g_free (commit->author);
  g_clear_pointer (&commit->files, g_ptr_array_unref);
  g_free (commit);
}

static void
paddock_agent_commits_finalize (GObject *object)
{
  PaddockAgentCommits *self = PADDOCK_AGENT_COMMITS (object);

  paddock_close_fd (&self->git_fd);
  paddock_close_fd (&self->objects_fd);
  g_free (self->stage_root);
  g_free (self->packed_refs);
  g_clear_pointer (&self->work, git_repository_free);
  g_clear_pointer (&self->work_odb, git_odb_free);
  g_clear_pointer (&self->real_odb, git_odb_free);
  g_clear_pointer (&self->real, git_repository_free);
  g_free (self->head);
  g_free (self->tip);
  g_clear_pointer (&self->fetched, g_array_unref);
  g_clear_pointer (&self->commits, g_ptr_array_unref);

  G_OBJECT_CLASS (paddock_agent_commits_parent_class)->finalize (object);
}

static void
paddock_agent_commits_class_init (PaddockAgentCommitsClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = paddock_agent_commits_finalize;
}

static void
paddock_agent_commits_init (PaddockAgentCommits *self)
{
  self->git_fd = -1;
  self->objects_fd = -1;
  self->fetched = g_array_new (FALSE, FALSE, sizeof (git_oid));
  self->commits = g_ptr_array_new_with_free_func ((GDestroyNotify) agent_commit_free);
}

static void
ensure_libgit2 (void)
{
  static gsize initialized = 0;

  if (g_once_init_enter (&initialized))
    {
      git_libgit2_init ();
      /* The only files libgit2 writes in the daemon are the objects and
       * the ref Apply makes here: each durable before the ref names it. */
      git_libgit2_opts (GIT_OPT_ENABLE_FSYNC_GITDIR, 1);
      g_once_init_leave (&initialized, 1);
    }
}

static gboolean
set_git_error (GError     **error,
               const char  *what)
{
  const git_error *e = git_error_last ();

  g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_FAILED,
               "%s: %s", what, e != NULL && e->message != NULL ? e->message : "libgit2 error");
  return FALSE;
}

/* ---- reading beneath the stage's .git -------------------------------------- */

/* Opens @relpath beneath @dirfd, refusing a symlink at every component (the
 * agent could point one anywhere the daemon can read) and any "." or ".."
 * component. Returns -1 with errno set. */
static int
open_beneath (int         dirfd,
              const char *relpath,
              int         flags)
{
  g_auto(GStrv) parts = g_strsplit (relpath, "/", -1);
  paddock_autofd int current = -1;
  int at = dirfd;

  for (guint i = 0; parts[i] != NULL; i++)
    {
      gboolean last = parts[i + 1] == NULL;
      int fd;

      if (parts[i][0] == '\0' || g_str_equal (parts[i], ".") || g_str_equal (parts[i], ".."))
        {
          errno = EINVAL;
          return -1;
        }
      fd = openat (at, parts[i], last ? flags | O_NOFOLLOW | O_CLOEXEC
                                      : O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        return -1;
      paddock_close_fd (&current);
      current = fd;
      at = current;
    }
  return paddock_steal_fd (&current);
}

/* Reads a regular file beneath @dirfd of at most @max bytes (a fifo or a
 * device would block or never end: only regular files are read).
 * FALSE with errno ENOENT when absent or not a regular file. */
static gboolean
read_beneath (int           dirfd,
              const char   *relpath,
              gsize         max,
              GByteArray  **out,
              GError      **error)
{
  paddock_autofd int fd = -1;
  g_autoptr(GByteArray) bytes = NULL;
  struct stat st;

  if (dirfd < 0)
    {
      errno = ENOENT;
      return FALSE;
    }
  fd = open_beneath (dirfd, relpath, O_RDONLY | O_NONBLOCK);
  if (fd < 0 || fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      int e = fd < 0 ? errno : ENOENT;

      if (e == ENOENT || e == ENOTDIR || e == ELOOP || e == EINVAL)
        {
          errno = ENOENT;
          return FALSE;
        }
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_FAILED,
                   "Could not read %s in the stage's .git: %s", relpath, g_strerror (e));
      errno = e;
      return FALSE;
    }
  if ((guint64) st.st_size > max)
    {
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_TOO_LARGE,
                   "%s in the stage's .git is larger than %" G_GSIZE_FORMAT " bytes", relpath, max);
      errno = EFBIG;
      return FALSE;
    }
  bytes = g_byte_array_sized_new ((guint) st.st_size);
  for (;;)
    {
      guint8 chunk[65536];
      ssize_t n = read (fd, chunk, sizeof chunk);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int e = errno;
          g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_FAILED,
                       "Could not read %s in the stage's .git: %s", relpath, g_strerror (e));
          errno = e;
          return FALSE;
        }
      if (n == 0)
        break;
      /* The file may grow under a running agent: the bound holds anyway. */
      if (bytes->len + (gsize) n > max)
        {
          g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_TOO_LARGE,
                       "%s in the stage's .git is larger than %" G_GSIZE_FORMAT " bytes", relpath, max);
          errno = EFBIG;
          return FALSE;
        }
      g_byte_array_append (bytes, chunk, (guint) n);
    }
  *out = g_steal_pointer (&bytes);
  return TRUE;
}

/* A loose object is zlib("TYPE SIZE\0CONTENT"). Inflates at most @limit
 * bytes: a small file can inflate to gigabytes. */
static GByteArray *
inflate_bounded (const guint8  *in,
                 gsize          in_len,
                 gsize          limit,
                 GError       **error)
{
  g_autoptr(GByteArray) out = g_byte_array_new ();
  z_stream z = { 0 };
  int ret;

  if (inflateInit (&z) != Z_OK)
    {
      g_set_error_literal (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_FAILED,
                           "Could not start inflating an object");
      return NULL;
    }
  z.next_in = (Bytef *) in;
  z.avail_in = (uInt) in_len;
  do
    {
      guint8 chunk[65536];

      z.next_out = chunk;
      z.avail_out = sizeof chunk;
      ret = inflate (&z, Z_NO_FLUSH);
      if (ret != Z_OK && ret != Z_STREAM_END)
        break;
      if (out->len + (sizeof chunk - z.avail_out) > limit)
        {
          inflateEnd (&z);
          g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_TOO_LARGE,
                       "An object of the stage is larger than %" G_GSIZE_FORMAT " bytes", limit);
          return NULL;
        }
      g_byte_array_append (out, chunk, (guint) (sizeof chunk - z.avail_out));
    }
  while (ret == Z_OK && (z.avail_in > 0 || z.avail_out == 0));
  inflateEnd (&z);
  if (ret != Z_STREAM_END)
    {
      g_set_error_literal (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CORRUPT,
                           "An object of the stage is not a complete zlib stream");
      return NULL;
    }
  return g_steal_pointer (&out);
}

/* Reads loose object @oid of the stage, checks its header and that it
 * hashes to its name, and stores it in the in-memory pack. */
static gboolean
fetch_stage_object (PaddockAgentCommits  *self,
                    const git_oid        *oid,
                    git_object_t         *out_type,
                    GError              **error)
{
  char hex[GIT_OID_HEXSZ + 1];
  char relpath[GIT_OID_HEXSZ + 2];
  g_autoptr(GByteArray) compressed = NULL;
  g_autoptr(GByteArray) raw = NULL;
  g_autoptr(GError) local_error = NULL;
  const guint8 *nul;
  git_object_t type;
  git_oid computed, written;
  guint64 size;
  gsize header_len;
  char *end = NULL;
  g_autofree char *header = NULL;
  char *space;

  git_oid_tostr (hex, sizeof hex, oid);
  g_snprintf (relpath, sizeof relpath, "%.2s/%s", hex, hex + 2);

  if (!read_beneath (self->objects_fd, relpath, PADDOCK_AGENT_COMMITS_MAX_OBJECT, &compressed,
                     &local_error))
    {
      if (local_error != NULL)
        g_propagate_error (error, g_steal_pointer (&local_error));
      else
        g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_NOT_FOUND,
                     "Object %s is in neither the repository nor the stage as a loose object "
                     "(packs the agent made are not read)", hex);
      return FALSE;
    }
  raw = inflate_bounded (compressed->data, compressed->len, PADDOCK_AGENT_COMMITS_MAX_OBJECT + 64,
                         error);
  if (raw == NULL)
    return FALSE;

  nul = memchr (raw->data, '\0', MIN (raw->len, 64));
  if (nul == NULL)
    goto corrupt;
  header_len = (gsize) (nul - raw->data);
  header = g_strndup ((const char *) raw->data, header_len);
  space = strchr (header, ' ');
  if (space == NULL)
    goto corrupt;
  *space = '\0';
  type = git_object_string2type (header);
  if (type != GIT_OBJECT_COMMIT && type != GIT_OBJECT_TREE && type != GIT_OBJECT_BLOB &&
      type != GIT_OBJECT_TAG)
    goto corrupt;
  if (!g_ascii_isdigit (space[1]))
    goto corrupt;
  size = g_ascii_strtoull (space + 1, &end, 10);
  if (end == NULL || *end != '\0' || size != raw->len - header_len - 1)
    goto corrupt;

  if (self->fetched_bytes + size > PADDOCK_AGENT_COMMITS_MAX_BYTES)
    {
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_TOO_LARGE,
                   "The session's commits hold more than %u MiB of new objects",
                   PADDOCK_AGENT_COMMITS_MAX_BYTES / (1024 * 1024));
      return FALSE;
    }

  /* An object whose content does not hash to its name would show one thing
   * and be something else wherever git looks it up by id. */
  if (git_odb_hash (&computed, nul + 1, (size_t) size, type) != 0 ||
      !git_oid_equal (&computed, oid))
    {
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CORRUPT,
                   "Object %s of the stage does not hash to its name", hex);
      return FALSE;
    }
  if (git_odb_write (&written, self->work_odb, nul + 1, (size_t) size, type) != 0)
    return set_git_error (error, "Could not keep an object in memory");
  g_assert (git_oid_equal (&written, oid));

  g_array_append_val (self->fetched, *oid);
  self->fetched_bytes += size;
  *out_type = type;
  return TRUE;

corrupt:
  g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CORRUPT,
               "Object %s of the stage has a malformed header", hex);
  return FALSE;
}

/* ---- refs of the stage ------------------------------------------------------ */

static gboolean
parse_hex_oid (const char *text,
               gsize       len,
               git_oid    *out)
{
  if (len < GIT_OID_HEXSZ)
    return FALSE;
  for (guint i = 0; i < GIT_OID_HEXSZ; i++)
    if (!g_ascii_isxdigit (text[i]))
      return FALSE;
  if (len > GIT_OID_HEXSZ && text[GIT_OID_HEXSZ] != '\n' && text[GIT_OID_HEXSZ] != ' ')
    return FALSE;
  return git_oid_fromstrn (out, text, GIT_OID_HEXSZ) == 0;
}

static gboolean
lookup_packed_ref (PaddockAgentCommits  *self,
                   const char           *name,
                   git_oid              *out,
                   GError              **error)
{
  const char *line;
  gsize name_len = strlen (name);

  if (!self->packed_refs_read)
    {
      g_autoptr(GByteArray) bytes = NULL;

      self->packed_refs_read = TRUE;
      if (!read_beneath (self->git_fd, "packed-refs", PACKED_REFS_MAX, &bytes, error))
        return FALSE;
      g_byte_array_append (bytes, (const guint8 *) "", 1);
      self->packed_refs = (char *) g_byte_array_free (g_steal_pointer (&bytes), FALSE);
    }
  if (self->packed_refs == NULL)
    return FALSE;

  /* Lines: "HEX NAME", with '#' headers and "^HEX" peeled lines between. */
  for (line = self->packed_refs; *line != '\0'; )
    {
      const char *eol = strchr (line, '\n');
      gsize len = eol != NULL ? (gsize) (eol - line) : strlen (line);

      if (len == GIT_OID_HEXSZ + 1 + name_len && line[GIT_OID_HEXSZ] == ' ' &&
          memcmp (line + GIT_OID_HEXSZ + 1, name, name_len) == 0)
        return parse_hex_oid (line, len, out);
      line += len + (eol != NULL ? 1 : 0);
    }
  return FALSE;
}

/* The stage's value of ref @name: a loose file beneath the stage's .git,
 * else its packed-refs, else (an overlay's .git holds only what the agent
 * changed) the real repository's. FALSE without an error when nowhere. */
static gboolean
resolve_ref (PaddockAgentCommits  *self,
             const char           *name,
             guint                 depth,
             char                **out_branch,
             git_oid              *out,
             GError              **error)
{
  g_autoptr(GByteArray) bytes = NULL;
  g_autoptr(GError) local_error = NULL;
  int valid = 0;

  if (depth > SYMREF_DEPTH_MAX)
    {
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CORRUPT,
                   "The stage's symbolic refs chain deeper than %u", SYMREF_DEPTH_MAX);
      return FALSE;
    }
  if (!g_str_equal (name, "HEAD") &&
      (git_reference_name_is_valid (&valid, name) != 0 || !valid ||
       !g_str_has_prefix (name, "refs/heads/")))
    {
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CORRUPT,
                   "The stage's HEAD names a ref that is not a valid branch name");
      return FALSE;
    }

  if (read_beneath (self->git_fd, name, REF_FILE_MAX, &bytes, &local_error))
    {
      const char *text = (const char *) bytes->data;

      if (bytes->len > 5 && memcmp (text, "ref: ", 5) == 0)
        {
          g_autofree char *target = g_strndup (text + 5, bytes->len - 5);

          g_strchomp (target);
          return resolve_ref (self, target, depth + 1, out_branch, out, error);
        }
      if (!parse_hex_oid (text, bytes->len, out))
        {
          g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CORRUPT,
                       "The stage's ref %s is malformed", name);
          return FALSE;
        }
      *out_branch = g_strdup (name);
      return TRUE;
    }
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  if (!g_str_equal (name, "HEAD"))
    {
      if (lookup_packed_ref (self, name, out, &local_error))
        {
          *out_branch = g_strdup (name);
          return TRUE;
        }
      if (local_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      if (git_reference_name_to_id (out, self->real, name) == 0)
        {
          *out_branch = g_strdup (name);
          return TRUE;
        }
      return FALSE;
    }

  /* HEAD as the real repository has it: its branch may have moved in the
   * stage, so a symbolic one is resolved through the stage again. */
  {
    g_autoptr(git_reference) head = NULL;

    if (git_reference_lookup (&head, self->real, "HEAD") != 0)
      return FALSE;
    if (git_reference_type (head) == GIT_REFERENCE_SYMBOLIC)
      return resolve_ref (self, git_reference_symbolic_target (head), depth + 1, out_branch,
                          out, error);
    git_oid_cpy (out, git_reference_target (head));
    *out_branch = g_strdup ("HEAD");
    return TRUE;
  }
}

/* ---- listing ---------------------------------------------------------------- */

/* A line as a terminal may show it: valid UTF-8, control characters
 * replaced (a subject could carry escape sequences), bounded. */
static char *
printable_line (const char *text,
                gsize       len)
{
  g_autofree char *valid = g_utf8_make_valid (text, (gssize) MIN (len, LINE_MAX_BYTES));
  GString *out = g_string_new (NULL);

  for (const char *p = valid; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (g_unichar_iscntrl (c))
        g_string_append_unichar (out, 0xFFFD);
      else
        g_string_append_unichar (out, c);
    }
  return g_string_free (out, FALSE);
}

/* Copies into memory every object reachable from the tip that the real
 * repository lacks (it has the rest, and whatever they reference). */
static gboolean
fetch_closure (PaddockAgentCommits  *self,
               GCancellable         *cancellable,
               GError              **error)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GArray) queue = g_array_new (FALSE, FALSE, sizeof (git_oid));
  guint next = 0;

  g_array_append_val (queue, self->tip_oid);
  while (next < queue->len)
    {
      git_oid oid = g_array_index (queue, git_oid, next++);
      char hex[GIT_OID_HEXSZ + 1];
      g_autoptr(git_object) object = NULL;
      git_object_t type;

      git_oid_tostr (hex, sizeof hex, &oid);
      if (g_hash_table_contains (seen, hex))
        continue;
      g_hash_table_add (seen, g_strdup (hex));
      if (git_odb_exists (self->real_odb, &oid))
        continue;
      if (self->fetched->len >= PADDOCK_AGENT_COMMITS_MAX_OBJECTS)
        {
          g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_TOO_LARGE,
                       "The session's commits hold more than %u new objects",
                       PADDOCK_AGENT_COMMITS_MAX_OBJECTS);
          return FALSE;
        }
      if ((self->fetched->len & 1023) == 0 && g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      if (!fetch_stage_object (self, &oid, &type, error))
        return FALSE;
      if (next == 1 && type != GIT_OBJECT_COMMIT)
        {
          g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CORRUPT,
                       "The stage's HEAD names a %s, not a commit", git_object_type2string (type));
          return FALSE;
        }
      /* Parsed from memory, where it was stored under the hash it has. */
      if (git_object_lookup (&object, self->work, &oid, type) != 0)
        return set_git_error (error, "Could not parse an object of the stage");

      if (type == GIT_OBJECT_COMMIT)
        {
          const git_commit *commit = (const git_commit *) object;

          g_array_append_val (queue, *git_commit_tree_id (commit));
          for (guint i = 0; i < git_commit_parentcount (commit); i++)
            g_array_append_val (queue, *git_commit_parent_id (commit, i));
        }
      else if (type == GIT_OBJECT_TREE)
        {
          const git_tree *tree = (const git_tree *) object;

          for (size_t i = 0; i < git_tree_entrycount (tree); i++)
            {
              const git_tree_entry *entry = git_tree_entry_byindex (tree, i);
              git_object_t entry_type = git_tree_entry_type (entry);

              /* A submodule's commit (a gitlink) is another repository's:
               * not ours to copy. */
              if (entry_type == GIT_OBJECT_BLOB || entry_type == GIT_OBJECT_TREE)
                g_array_append_val (queue, *git_tree_entry_id (entry));
            }
        }
      else if (type == GIT_OBJECT_TAG)
        g_array_append_val (queue, *git_tag_target_id ((const git_tag *) object));
    }
  return TRUE;
}

static gboolean
commit_diff (PaddockAgentCommits  *self,
             const git_oid        *oid,
             git_commit          **out_commit,
             git_diff            **out_diff,
             GError              **error)
{
  g_autoptr(git_commit) commit = NULL;
  g_autoptr(git_commit) parent = NULL;
  g_autoptr(git_tree) tree = NULL;
  g_autoptr(git_tree) parent_tree = NULL;
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;

  if (git_commit_lookup (&commit, self->work, oid) != 0 || git_commit_tree (&tree, commit) != 0)
    return set_git_error (error, "Could not read a commit of the stage");
  /* Against the first parent, as `git show --first-parent` would: a merge
   * shows everything it brings to the branch it lands on. */
  if (git_commit_parentcount (commit) > 0 &&
      (git_commit_parent (&parent, commit, 0) != 0 || git_commit_tree (&parent_tree, parent) != 0))
    return set_git_error (error, "Could not read a commit's parent");
  if (git_diff_tree_to_tree (out_diff, self->work, parent_tree, tree, &opts) != 0)
    return set_git_error (error, "Could not compare a commit with its parent");
  if (out_commit != NULL)
    *out_commit = g_steal_pointer (&commit);
  return TRUE;
}

static gboolean
list_commits (PaddockAgentCommits  *self,
              GCancellable         *cancellable,
              GError              **error)
{
  g_autoptr(git_revwalk) walk = NULL;
  g_autoptr(git_reference_iterator) refs = NULL;
  git_reference *ref = NULL;
  git_oid oid;
  int ret;

  if (git_revwalk_new (&walk, self->work) != 0)
    return set_git_error (error, "Could not walk the stage's commits");
  git_revwalk_sorting (walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
  if (git_revwalk_push (walk, &self->tip_oid) != 0)
    return set_git_error (error, "Could not walk the stage's commits");

  /* Whatever a ref of the real repository reaches is not the agent's. */
  if (git_reference_iterator_new (&refs, self->real) != 0)
    return set_git_error (error, "Could not list the repository's refs");
  while ((ret = git_reference_next (&ref, refs)) == 0)
    {
      g_autoptr(git_reference) owned = ref;
      g_autoptr(git_object) peeled = NULL;

      if (git_reference_peel (&peeled, owned, GIT_OBJECT_COMMIT) == 0)
        git_revwalk_hide (walk, git_object_id (peeled));
    }
  if (ret != GIT_ITEROVER)
    return set_git_error (error, "Could not list the repository's refs");
  if (git_repository_head_detached (self->real) == 1 &&
      git_reference_name_to_id (&oid, self->real, "HEAD") == 0)
    git_revwalk_hide (walk, &oid);

  while ((ret = git_revwalk_next (&oid, walk)) == 0)
    {
      g_autoptr(git_commit) commit = NULL;
      g_autoptr(git_diff) diff = NULL;
      g_autofree PaddockAgentCommit *entry = NULL;
      const git_signature *author;
      const char *message;
      char hex[GIT_OID_HEXSZ + 1];
      size_t n_deltas;

      if (self->commits->len >= PADDOCK_AGENT_COMMITS_MAX_COMMITS)
        {
          g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_TOO_LARGE,
                       "The session made more than %u commits", PADDOCK_AGENT_COMMITS_MAX_COMMITS);
          return FALSE;
        }
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      if (!commit_diff (self, &oid, &commit, &diff, error))
        return FALSE;

      n_deltas = git_diff_num_deltas (diff);
      if (n_deltas > PADDOCK_AGENT_COMMITS_MAX_FILES)
        {
          g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_TOO_LARGE,
                       "A commit of the session changes more than %u files",
                       PADDOCK_AGENT_COMMITS_MAX_FILES);
          return FALSE;
        }

      entry = g_new0 (PaddockAgentCommit, 1);
      git_oid_tostr (hex, sizeof hex, &oid);
      entry->id = g_strdup (hex);
      message = git_commit_message (commit);
      entry->subject = printable_line (message, strcspn (message, "\n"));
      author = git_commit_author (commit);
      {
        g_autofree char *line = g_strdup_printf ("%s <%s>", author->name, author->email);
        entry->author = printable_line (line, strlen (line));
      }
      entry->author_time = author->when.time;
      entry->n_parents = git_commit_parentcount (commit);
      entry->files = g_ptr_array_new_with_free_func (g_free);
      for (size_t i = 0; i < n_deltas; i++)
        {
          const git_diff_delta *delta = git_diff_get_delta (diff, i);
          const char *path = delta->status == GIT_DELTA_DELETED ? delta->old_file.path
                                                                : delta->new_file.path;
          g_ptr_array_add (entry->files, g_strdup (path));
        }
      g_ptr_array_add (self->commits, g_steal_pointer (&entry));
    }
  if (ret != GIT_ITEROVER)
    return set_git_error (error, "Could not walk the stage's commits");
  return TRUE;
}

/**
 * paddock_agent_commits_new:
 * @workspace: the real project folder
 * @stage_root: the overlay's upper dir or the copy
 *
 * The commits the agent made: none when the workspace is not a
 * repository, when the stage has no .git directory of its own (a `.git`
 * file or symlink is never followed) or when its HEAD reaches nothing new.
 */
PaddockAgentCommits *
paddock_agent_commits_new (const char        *workspace,
                           const char        *stage_root,
                           PaddockStageKind   kind,
                           GCancellable      *cancellable,
                           GError           **error)
{
  g_autoptr(PaddockAgentCommits) self = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *objects_dir = NULL;
  g_autofree char *branch = NULL;
  paddock_autofd int root_fd = -1;
  git_odb_backend *mempack = NULL;
  char hex[GIT_OID_HEXSZ + 1];
  int ret;

  g_return_val_if_fail (workspace != NULL, NULL);
  g_return_val_if_fail (stage_root != NULL, NULL);

  ensure_libgit2 ();
  self = g_object_new (PADDOCK_TYPE_AGENT_COMMITS, NULL);
  self->stage_root = g_strdup (stage_root);
  (void) kind;

  /* The workspace's repository, at its top only: a repository above the
   * workspace is not the one the agent saw. */
  ret = git_repository_open_ext (&self->real, workspace, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
  if (ret == GIT_ENOTFOUND)
    return g_steal_pointer (&self);
  if (ret != 0)
    {
      set_git_error (error, "Could not open the workspace's repository");
      return NULL;
    }
  if (git_repository_is_bare (self->real))
    return g_steal_pointer (&self);

  root_fd = open (stage_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    {
      int e = errno;
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_FAILED,
                   "Could not open the stage: %s", g_strerror (e));
      return NULL;
    }
  self->git_fd = openat (root_fd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (self->git_fd < 0)
    return g_steal_pointer (&self);
  self->objects_fd = openat (self->git_fd, "objects", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  if (!resolve_ref (self, "HEAD", 0, &branch, &self->tip_oid, &local_error))
    {
      if (local_error == NULL)
        return g_steal_pointer (&self);  /* an unborn branch */
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  self->head = g_steal_pointer (&branch);
  git_oid_tostr (hex, sizeof hex, &self->tip_oid);
  self->tip = g_strdup (hex);

  if (git_repository_odb (&self->real_odb, self->real) != 0)
    {
      set_git_error (error, "Could not open the workspace's objects");
      return NULL;
    }
  /* Nothing new: the real repository has the tip already. It may still be
   * unreachable from its refs (a dangling commit), which the walk tells. */
  objects_dir = g_build_filename (git_repository_commondir (self->real), "objects", NULL);
  if (git_odb_new (&self->work_odb) != 0 || git_mempack_new (&mempack) != 0)
    {
      set_git_error (error, "Could not create an in-memory repository");
      return NULL;
    }
  if (git_odb_add_backend (self->work_odb, mempack, 1000) != 0)
    {
      mempack->free (mempack);
      set_git_error (error, "Could not create an in-memory repository");
      return NULL;
    }
  /* As an alternate, the real objects are read and never written: writes
   * go to the mempack only. */
  if (git_odb_add_disk_alternate (self->work_odb, objects_dir) != 0 ||
      git_repository_wrap_odb (&self->work, self->work_odb) != 0)
    {
      set_git_error (error, "Could not create an in-memory repository");
      return NULL;
    }

  if (!fetch_closure (self, cancellable, error) || !list_commits (self, cancellable, error))
    return NULL;
  return g_steal_pointer (&self);
}

/* PaddockAgentCommit, newest first. */
GPtrArray *
paddock_agent_commits_get_commits (PaddockAgentCommits *self)
{
  g_return_val_if_fail (PADDOCK_IS_AGENT_COMMITS (self), NULL);
  return self->commits;
}

/* The ref the stage's HEAD names ("refs/heads/…", or "HEAD" when
 * detached), or NULL when the stage has no commit. */
const char *
paddock_agent_commits_get_head (PaddockAgentCommits *self)
{
  g_return_val_if_fail (PADDOCK_IS_AGENT_COMMITS (self), NULL);
  return self->commits->len > 0 ? self->head : NULL;
}

const char *
paddock_agent_commits_get_tip (PaddockAgentCommits *self)
{
  g_return_val_if_fail (PADDOCK_IS_AGENT_COMMITS (self), NULL);
  return self->commits->len > 0 ? self->tip : NULL;
}

static PaddockAgentCommit *
find_commit (PaddockAgentCommits  *self,
             const char           *id,
             GError              **error)
{
  for (guint i = 0; i < self->commits->len; i++)
    {
      PaddockAgentCommit *commit = g_ptr_array_index (self->commits, i);

      if (g_ascii_strcasecmp (commit->id, id) == 0)
        return commit;
    }
  g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_NOT_FOUND,
               "No commit of the session has id “%s”", id);
  return NULL;
}

/* The commit as `git show` would print it: a header, its whole message
 * (indented), then the patch against its first parent. */
GBytes *
paddock_agent_commits_get_diff (PaddockAgentCommits  *self,
                                const char           *id,
                                GError              **error)
{
  PaddockAgentCommit *entry;
  g_autoptr(git_commit) commit = NULL;
  g_autoptr(git_diff) diff = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autofree char *message = NULL;
  g_autoptr(GDateTime) when = NULL;
  g_autofree char *date = NULL;
  git_buf patch = GIT_BUF_INIT;
  git_oid oid;

  g_return_val_if_fail (PADDOCK_IS_AGENT_COMMITS (self), NULL);
  g_return_val_if_fail (id != NULL, NULL);

  if ((entry = find_commit (self, id, error)) == NULL)
    return NULL;
  if (git_oid_fromstr (&oid, entry->id) != 0)
    g_assert_not_reached ();
  if (!commit_diff (self, &oid, &commit, &diff, error))
    return NULL;

  when = g_date_time_new_from_unix_utc (entry->author_time);
  date = when != NULL ? g_date_time_format_iso8601 (when) : g_strdup ("?");
  g_string_append_printf (out, "commit %s\nAuthor: %s\nDate:   %s\n\n", entry->id, entry->author,
                          date);
  {
    const char *raw = git_commit_message (commit);
    g_autofree char *valid = g_utf8_make_valid (raw, (gssize) MIN (strlen (raw), MESSAGE_MAX_BYTES));
    g_auto(GStrv) lines = g_strsplit (valid, "\n", -1);

    for (guint i = 0; lines[i] != NULL; i++)
      if (lines[i + 1] != NULL || lines[i][0] != '\0')
        {
          g_autofree char *line = printable_line (lines[i], strlen (lines[i]));
          g_string_append_printf (out, "    %s\n", line);
        }
    g_string_append_c (out, '\n');
  }

  if (git_diff_to_buf (&patch, diff, GIT_DIFF_FORMAT_PATCH) != 0)
    {
      set_git_error (error, "Could not format a commit's diff");
      return NULL;
    }
  if (out->len + patch.size > PADDOCK_REVIEW_MAX_DIFF_SIZE)
    {
      git_buf_dispose (&patch);
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_TOO_LARGE,
                   "The diff of commit %s is larger than %u MiB", entry->id,
                   PADDOCK_REVIEW_MAX_DIFF_SIZE / (1024 * 1024));
      return NULL;
    }
  g_string_append_len (out, patch.ptr, (gssize) patch.size);
  git_buf_dispose (&patch);
  return g_string_free_to_bytes (g_steal_pointer (&out));
}

/* A branch name Apply may create: a valid ref name under refs/heads/. */
gboolean
paddock_agent_commits_branch_name_is_valid (const char *branch)
{
  g_autofree char *refname = NULL;
  int valid = 0;

  ensure_libgit2 ();
  if (branch == NULL || branch[0] == '\0' || strlen (branch) > 200)
    return FALSE;
  refname = g_strconcat ("refs/heads/", branch, NULL);
  return git_reference_name_is_valid (&valid, refname) == 0 && valid;
}

/* One line of the stage's ledger.jsonl, appended in one write() and
 * fdatasync'ed, as the apply batch's are; "commits" tells it from theirs. */
static gboolean
ledger_append (PaddockAgentCommits  *self,
               const char           *ledger_file,
               const char           *who,
               const char           *branch,
               guint                 n_objects,
               GError              **error)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *time = g_date_time_format_iso8601 (now);
  g_autofree char *line = NULL;
  g_autofree char *with_nl = NULL;
  paddock_autofd int fd = -1;
  gsize done = 0, len;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "time");
  json_builder_add_string_value (builder, time);
  json_builder_set_member_name (builder, "who");
  json_builder_add_string_value (builder, who != NULL ? who : "");
  json_builder_set_member_name (builder, "commits");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "branch");
  json_builder_add_string_value (builder, branch);
  json_builder_set_member_name (builder, "commit");
  json_builder_add_string_value (builder, self->tip);
  json_builder_set_member_name (builder, "from");
  json_builder_add_string_value (builder, self->head);
  json_builder_set_member_name (builder, "ids");
  json_builder_begin_array (builder);
  for (guint i = 0; i < self->commits->len; i++)
    json_builder_add_string_value (builder, ((PaddockAgentCommit *) g_ptr_array_index (self->commits, i))->id);
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "objects");
  json_builder_add_int_value (builder, n_objects);
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (gen, root);
  line = json_generator_to_data (gen, NULL);
  with_nl = g_strconcat (line, "\n", NULL);
  len = strlen (with_nl);

  fd = open (ledger_file, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    goto failed;
  while (done < len)
    {
      ssize_t n = write (fd, with_nl + done, len - done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        goto failed;
      done += (gsize) n;
    }
  if (fdatasync (fd) != 0)
    goto failed;
  return TRUE;

failed:
  {
    int e = errno;
    g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_FAILED,
                 "Could not write the apply ledger %s: %s", ledger_file, g_strerror (e));
    return FALSE;
  }
}

/**
 * paddock_agent_commits_apply:
 * @branch: the new branch's name (without refs/heads/)
 * @ledger_file: (nullable): the stage's apply ledger, to record this in
 * @who: (nullable): who asked, for the ledger
 *
 * Copies the new objects into the real repository and creates @branch at
 * the stage's tip. Refuses (PADDOCK_STAGING_ERROR_CONFLICT) a branch that
 * exists, or one the repository's HEAD names; writes no other ref, no
 * config, and moves neither HEAD nor any branch of the user's.
 */
gboolean
paddock_agent_commits_apply (PaddockAgentCommits  *self,
                             const char           *branch,
                             const char           *ledger_file,
                             const char           *who,
                             guint                *out_n_objects,
                             GError              **error)
{
  g_autofree char *refname = NULL;
  g_autofree char *log_message = NULL;
  g_autoptr(git_reference) existing = NULL;
  g_autoptr(git_reference) head = NULL;
  g_autoptr(git_reference) created = NULL;
  guint n_written = 0;
  int ret;

  g_return_val_if_fail (PADDOCK_IS_AGENT_COMMITS (self), FALSE);

  if (self->commits->len == 0)
    {
      g_set_error_literal (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_NOT_FOUND,
                           "The session made no commits that the repository lacks");
      return FALSE;
    }
  if (!paddock_agent_commits_branch_name_is_valid (branch))
    {
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_INVALID_PATH,
                   "“%s” is not a valid branch name", branch);
      return FALSE;
    }
  refname = g_strconcat ("refs/heads/", branch, NULL);

  ret = git_reference_lookup (&existing, self->real, refname);
  if (ret != GIT_ENOTFOUND)
    {
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CONFLICT,
                   "The repository already has a branch %s: it is left as it is", branch);
      return FALSE;
    }
  /* Nor may a branch be the new one's folder, or in it (git keeps refs as
   * paths): asked before any object is written. */
  {
    g_autofree char *taken = NULL;
    g_autofree char *glob = g_strconcat (refname, "/*", NULL);
    g_autoptr(git_reference_iterator) below = NULL;
    git_reference *inside = NULL;

    for (char *slash = strchr (refname + strlen ("refs/heads/"), '/'); slash != NULL && taken == NULL;
         slash = strchr (slash + 1, '/'))
      {
        g_autofree char *prefix = g_strndup (refname, (gsize) (slash - refname));
        g_autoptr(git_reference) found = NULL;

        if (git_reference_lookup (&found, self->real, prefix) == 0)
          taken = g_strdup (prefix + strlen ("refs/heads/"));
      }
    if (taken == NULL && git_reference_iterator_glob_new (&below, self->real, glob) == 0 &&
        git_reference_next (&inside, below) == 0)
      {
        taken = g_strdup (git_reference_name (inside) + strlen ("refs/heads/"));
        git_reference_free (inside);
      }
    if (taken != NULL)
      {
        g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CONFLICT,
                     "The repository's branch %s leaves no room for a branch %s", taken, branch);
        return FALSE;
      }
  }
  /* An unborn HEAD naming this branch would move with it. */
  if (git_reference_lookup (&head, self->real, "HEAD") == 0 &&
      git_reference_type (head) == GIT_REFERENCE_SYMBOLIC &&
      g_strcmp0 (git_reference_symbolic_target (head), refname) == 0)
    {
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CONFLICT,
                   "The repository's HEAD names %s: it would move", branch);
      return FALSE;
    }

  /* Every object first, each durable (GIT_OPT_ENABLE_FSYNC_GITDIR): the
   * ref never names a commit whose objects are missing. */
  for (guint i = 0; i < self->fetched->len; i++)
    {
      const git_oid *oid = &g_array_index (self->fetched, git_oid, i);
      g_autoptr(git_odb_object) object = NULL;
      git_oid written;

      if (git_odb_exists (self->real_odb, oid))
        continue;
      if (git_odb_read (&object, self->work_odb, oid) != 0)
        return set_git_error (error, "Could not read a staged object");
      if (git_odb_write (&written, self->real_odb, git_odb_object_data (object),
                         git_odb_object_size (object), git_odb_object_type (object)) != 0)
        return set_git_error (error, "Could not write an object to the repository");
      g_assert (git_oid_equal (&written, oid));
      n_written++;
    }

  /* The ledger before the ref: a branch made is always on record (a ref
   * that then fails to be written leaves a line for nothing, which says
   * so by the branch's absence). */
  if (ledger_file != NULL && !ledger_append (self, ledger_file, who, branch, n_written, error))
    return FALSE;

  log_message = g_strdup_printf ("paddock: the session's commits, from its %s", self->head);
  ret = git_reference_create (&created, self->real, refname, &self->tip_oid, 0, log_message);
  if (ret == GIT_EEXISTS)
    {
      g_set_error (error, PADDOCK_STAGING_ERROR, PADDOCK_STAGING_ERROR_CONFLICT,
                   "The repository already has a branch %s: it is left as it is", branch);
      return FALSE;
    }
  if (ret != 0)
    return set_git_error (error, "Could not create the branch");
  if (out_n_objects != NULL)
    *out_n_objects = n_written;
  return TRUE;
}
