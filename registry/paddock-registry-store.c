/* paddock-registry-store.c — the registry's durable state: a snapshot and a journal of changes
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * (Split from paddock-registry.c.) The snapshot is rewritten durably
 * (paddock_durable_file_replace); each change in between is one JSON line
 * appended to the journal and fdatasync'd before it is acknowledged.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-durable-file.h"
#include "paddock-lease-private.h"
#include "paddock-registry-private.h"

#define STATE_VERSION 1

/* A full filesystem is told apart: the daemon then serves read-only and
 * says why (org.paddock.Error.NoSpace), rather than a generic failure. */
int
_paddock_registry_code_for_errno (int saved_errno)
{
  return saved_errno == ENOSPC || saved_errno == EDQUOT ? PADDOCK_REGISTRY_ERROR_NO_SPACE
                                                        : PADDOCK_REGISTRY_ERROR_FAILED;
}

void
_paddock_registry_add_lease_members (JsonBuilder  *builder,
                                     PaddockLease *lease)
{
  const char *session = paddock_lease_get_session (lease);
  PaddockLeaseState state = paddock_lease_get_state (lease);

  json_builder_set_member_name (builder, "port");
  json_builder_add_int_value (builder, paddock_lease_get_port (lease));
  json_builder_set_member_name (builder, "name");
  json_builder_add_string_value (builder, paddock_lease_get_name (lease));
  json_builder_set_member_name (builder, "owner");
  json_builder_add_string_value (builder, paddock_lease_get_owner (lease));
  json_builder_set_member_name (builder, "session");
  if (session != NULL)
    json_builder_add_string_value (builder, session);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "created");
  json_builder_add_int_value (builder, paddock_lease_get_created (lease));
  json_builder_set_member_name (builder, "state");
  /* A released lease is stored as lost, which is what it is to a daemon
   * that reads it back: no socket of ours, the port taken back once free
   * (the session's processes are killed by then). So the file stays
   * readable by a daemon that knows no "released". */
  json_builder_add_string_value (builder, paddock_lease_state_to_string (state == PADDOCK_LEASE_STATE_RELEASED
                                                                         ? PADDOCK_LEASE_STATE_LOST : state));
  json_builder_set_member_name (builder, "socket_inode");
  json_builder_add_int_value (builder, (gint64) paddock_lease_get_socket_inode (lease));
}

static char *
serialize (PaddockRegistry *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "version");
  json_builder_add_int_value (builder, STATE_VERSION);
  if (self->bus_id != NULL)
    {
      json_builder_set_member_name (builder, "bus_id");
      json_builder_add_string_value (builder, self->bus_id);
    }
  json_builder_set_member_name (builder, "leases");
  json_builder_begin_array (builder);

  for (guint i = 0; i < self->leases->len; i++)
    {
      PaddockLease *lease = g_ptr_array_index (self->leases, i);

      json_builder_begin_object (builder);
      _paddock_registry_add_lease_members (builder, lease);
      json_builder_end_object (builder);
    }
  /* Leases already on disk in the journal (or being written with this
   * snapshot) but not listed yet: emptying the journal must not lose them. */
  _paddock_registry_commit_add_durable (self, builder);

  json_builder_end_array (builder);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  json_generator_set_pretty (generator, FALSE);

  return json_generator_to_data (generator, NULL);
}

/* Writes the current list; a no-op until paddock_registry_load() gave us a
 * path. Errors come back in our domain so the daemon maps them as one. */
static gboolean
persist (PaddockRegistry  *self,
         GError          **error)
{
  g_autofree char *json = NULL;
  g_autoptr(GError) local_error = NULL;

  if (self->state_file == NULL)
    return TRUE;

  json = serialize (self);
  if (!paddock_durable_file_replace (self->state_file, json, -1, 0600, &local_error))
    {
      g_set_error (error, PADDOCK_REGISTRY_ERROR,
                   g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NO_SPACE)
                     ? PADDOCK_REGISTRY_ERROR_NO_SPACE : PADDOCK_REGISTRY_ERROR_FAILED,
                   "Could not save the lease state: %s", local_error->message);
      return FALSE;
    }

  return TRUE;
}

/* Folds the journal into the snapshot: write every lease durably, then
 * empty the journal. A crash in between replays a journal whose changes
 * the snapshot already has; replaying them again changes nothing. */
gboolean
_paddock_registry_compact (PaddockRegistry  *self,
         GError          **error)
{
  /* The writer thread must not be appending to the journal we empty. */
  _paddock_registry_commit_join (self);

  if (!persist (self, error))
    return FALSE;

  if (self->journal_fd >= 0 &&
      (ftruncate (self->journal_fd, 0) != 0 || fsync (self->journal_fd) != 0))
    {
      int saved_errno = errno;
      g_set_error (error, PADDOCK_REGISTRY_ERROR, _paddock_registry_code_for_errno (saved_errno),
                   "Could not empty the lease journal: %s", g_strerror (saved_errno));
      return FALSE;
    }

  self->journal_entries = 0;
  self->journal_dirty = FALSE;
  self->journal_whole_end = 0;
  /* The truncate freed the reserve too. */
  self->journal_reserved_to = 0;
  _paddock_registry_journal_reserve (self);
  return TRUE;
}

/* A failed append must leave no trace: a torn line would make the journal
 * unreadable at the next start, and a complete but unacknowledged one would
 * bring back a change the caller was told had failed. Cut the journal back
 * to where the append began; if even that fails, mark it dirty. */
static gboolean
journal_undo (PaddockRegistry  *self,
              off_t             end,
              int               saved_errno,
              GError          **error)
{
  if (end < 0 || ftruncate (self->journal_fd, end) != 0 || fdatasync (self->journal_fd) != 0)
    self->journal_dirty = TRUE;
  /* What was acknowledged ends where this append began; and a cut freed
   * the reserve beyond it. */
  if (end >= 0)
    self->journal_whole_end = end;
  self->journal_reserved_to = 0;
  _paddock_registry_journal_reserve (self);

  g_set_error (error, PADDOCK_REGISTRY_ERROR, _paddock_registry_code_for_errno (saved_errno),
               "Could not save the lease state: %s", g_strerror (saved_errno));
  return FALSE;
}

/* Appends @lines (N_LINES complete JSON lines) at the journal's end and
 * makes them durable with fdatasync; a failed append is cut off again
 * (journal_undo()). The one place the journal is written to. */
static gboolean
journal_append_sync (PaddockRegistry  *self,
                     const char       *lines,
                     guint             n_lines,
                     GError          **error)
{
  gsize length = strlen (lines);
  gsize done = 0;
  /* Where this append starts, so a failed one can be cut off again. */
  off_t end = lseek (self->journal_fd, 0, SEEK_END);

  while (done < length)
    {
      gssize n = write (self->journal_fd, lines + done, length - done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return journal_undo (self, end, errno, error);
      done += (gsize) n;
    }
  if (fdatasync (self->journal_fd) != 0)
    return journal_undo (self, end, errno, error);

  self->journal_entries += n_lines;
  self->journal_whole_end = end + (off_t) length;
  return TRUE;
}

/* Appends @lines (complete JSON lines) to the journal and makes them
 * durable with fdatasync before returning: a change is acknowledged only
 * once it is on disk. When the journal has grown well past the number of
 * leases, it is folded into a new snapshot (durable replace) and emptied. */
gboolean
_paddock_registry_journal_write (PaddockRegistry  *self,
               const char       *lines,
               guint             n_lines,
               GError          **error)
{
  struct stat st;

  /* Not loaded yet: nothing is durable, by design (tests, the start). */
  if (self->state_file == NULL)
    return TRUE;

  /* One writer at a time: a batch of leases being synced on the writer
   * thread finishes first (its lines stay before ours, as the model's
   * changes were made). */
  _paddock_registry_commit_join (self);

  /* Loaded, but the journal could not be opened then (a full disk at
   * start): open it now; until that works, changes fail rather than go
   * unrecorded. The snapshot then written holds this change too. */
  if (self->journal_fd < 0)
    {
      int fd = open (self->journal_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);

      if (fd < 0)
        {
          int saved_errno = errno;
          g_set_error (error, PADDOCK_REGISTRY_ERROR, _paddock_registry_code_for_errno (saved_errno),
                       "Could not save the lease state: %s", g_strerror (saved_errno));
          return FALSE;
        }
      self->journal_fd = fd;
      if (!_paddock_registry_compact (self, error))
        {
          /* Still full: the next change tries the snapshot again. */
          self->journal_dirty = TRUE;
          return FALSE;
        }
      return TRUE;
    }

  /* After a failed write the model is ahead of the journal (or the journal
   * ends in half a line): a full snapshot puts both right, and holds this
   * change too. Until it succeeds, changes fail. */
  if (self->journal_dirty)
    return _paddock_registry_compact (self, error);

  /* Someone removed the journal (or the whole state dir): appending to the
   * orphaned file would "succeed" and save nothing. Start a new journal
   * from a full snapshot instead, which already holds this change. */
  if (fstat (self->journal_fd, &st) == 0 && st.st_nlink == 0)
    {
      int fd = open (self->journal_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);

      if (fd < 0)
        {
          int saved_errno = errno;
          g_set_error (error, PADDOCK_REGISTRY_ERROR, _paddock_registry_code_for_errno (saved_errno),
                       "Could not save the lease state: %s", g_strerror (saved_errno));
          return FALSE;
        }
      paddock_close_fd (&self->journal_fd);
      self->journal_fd = fd;
      return _paddock_registry_compact (self, error);
    }

  if (!journal_append_sync (self, lines, n_lines, error))
    return FALSE;
  if (self->journal_entries > 2 * self->leases->len + 256)
    {
      g_autoptr(GError) compact_error = NULL;

      /* The change is durable in the journal already: a snapshot that
       * cannot be written now (a full disk) is tried again later, and the
       * change is not reported as failed. */
      if (!_paddock_registry_compact (self, &compact_error))
        g_debug ("Could not fold the lease journal into its snapshot: %s", compact_error->message);
      return TRUE;
    }
  _paddock_registry_journal_reserve (self);

  return TRUE;
}

void
_paddock_registry_journal_add_put (GString      *lines,
                 PaddockLease *lease)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *line = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "op");
  json_builder_add_string_value (builder, "put");
  _paddock_registry_add_lease_members (builder, lease);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  line = json_generator_to_data (generator, NULL);
  g_string_append (lines, line);
  g_string_append_c (lines, '\n');
}

void
_paddock_registry_journal_add_remove (GString *lines,
                    guint16  port)
{
  g_string_append_printf (lines, "{\"op\":\"remove\",\"port\":%u}\n", port);
}

gboolean
_paddock_registry_journal_put (PaddockRegistry  *self,
             PaddockLease     *lease,
             GError          **error)
{
  g_autoptr(GString) lines = g_string_new (NULL);

  _paddock_registry_journal_add_put (lines, lease);
  return _paddock_registry_journal_write (self, lines->str, 1, error);
}

/* The longest "remove" line (_paddock_registry_journal_add_remove), with
 * room to spare. */
#define REMOVE_LINE_MAX 32

/* Blocks allocated beyond the journal's end for releases on a full disk
 * (see journal_reserved_to): a remove line for every lease the registry
 * may hold. Taken again whenever the journal's end gets within half of it
 * of the reserve's end, and after every cut (a truncate frees the blocks
 * beyond the new end). Best effort: a filesystem without fallocate, or
 * with no room left now, keeps what it has, and a release that finds no
 * block is still done (see paddock_registry_release()). */
void
_paddock_registry_journal_reserve (PaddockRegistry *self)
{
  off_t reserve = (off_t) self->max_leases * REMOVE_LINE_MAX + 4096;
  struct stat st;

  if (self->journal_fd < 0 || fstat (self->journal_fd, &st) != 0)
    return;
  if (st.st_size + reserve / 2 <= self->journal_reserved_to)
    return;
#ifdef FALLOC_FL_KEEP_SIZE
  if (fallocate (self->journal_fd, FALLOC_FL_KEEP_SIZE, st.st_size, reserve) == 0)
    self->journal_reserved_to = st.st_size + reserve;
#endif
}

/* Appends @lines (remove lines only) where the journal's acknowledged
 * lines end, into its reserve: no snapshot, no new block. A journal that
 * is dirty is cut back there first (its tail is torn or a change the
 * caller was told had failed); the changes the model has and the journal
 * lacks are all releases or marks of leases lost, so a journal that misses
 * them and has these removes never names a lease the model does not. It
 * stays dirty: the next change with room rewrites the snapshot. */
static gboolean
journal_append_release (PaddockRegistry  *self,
                        const char       *lines,
                        guint             n_lines,
                        GError          **error)
{
  if (self->journal_fd < 0)
    {
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_NO_SPACE,
                   "Could not save the lease state: there is no lease journal");
      return FALSE;
    }

  if (self->journal_dirty)
    {
      if (ftruncate (self->journal_fd, self->journal_whole_end) != 0)
        {
          int saved_errno = errno;
          g_set_error (error, PADDOCK_REGISTRY_ERROR, _paddock_registry_code_for_errno (saved_errno),
                       "Could not save the lease state: %s", g_strerror (saved_errno));
          return FALSE;
        }
      /* The cut freed the reserve beyond it: take those blocks again. */
      self->journal_reserved_to = 0;
      _paddock_registry_journal_reserve (self);
    }

  return journal_append_sync (self, lines, n_lines, error);
}

/**
 * _paddock_registry_journal_write_release:
 *
 * _paddock_registry_journal_write() for releases (@lines only remove
 * lines), which a full disk must not block: a user frees ports, and
 * sessions, precisely when the disk is full. Where the ordinary write
 * fails for want of space (a dirty journal's snapshot cannot be written,
 * or no block is left for the append), the lines go into the journal's
 * reserve, durably (fdatasync) all the same.
 */
gboolean
_paddock_registry_journal_write_release (PaddockRegistry  *self,
                                         const char       *lines,
                                         guint             n_lines,
                                         GError          **error)
{
  g_autoptr(GError) local_error = NULL;

  if (_paddock_registry_journal_write (self, lines, n_lines, &local_error))
    return TRUE;
  if (!g_error_matches (local_error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_NO_SPACE))
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  _paddock_registry_commit_join (self);
  if (!journal_append_release (self, lines, n_lines, error))
    return FALSE;
  _paddock_registry_journal_reserve (self);
  return TRUE;
}

void
_paddock_lease_record_free (PaddockLeaseRecord *record)
{
  g_free (record->name);
  g_free (record->owner);
  g_free (record->session);
  g_free (record);
}

static gboolean
corrupt (GError     **error,
         const char  *path,
         const char  *detail)
{
  g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED,
               "The lease state file %s is corrupt (%s); it was left untouched: "
               "move it aside to start with no leases",
               path, detail);
  return FALSE;
}

static gboolean
get_int_member (JsonObject *object,
                const char *member,
                gint64     *out_value)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;

  *out_value = json_node_get_int (node);
  return TRUE;
}

/* Returns the member's string (borrowed), or NULL if missing / not a string. */
static const char *
get_string_member (JsonObject *object,
                   const char *member)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;

  return json_node_get_string (node);
}

gboolean
_paddock_registry_valid_owner_string (const char *str,
                    gsize       max_len)
{
  gsize len = strlen (str);

  return len > 0 && len <= max_len && g_utf8_validate (str, (gssize) len, NULL);
}

/* Parses the whole file before touching anything, so a corrupt file leaves
 * the registry empty rather than half loaded. */
/* One lease of the snapshot or of a journal line; NULL (and @error) when
 * anything is missing or invalid. */
static PaddockLeaseRecord *
parse_record (const char  *path,
              JsonNode    *node,
              guint        i,
              GError     **error)
{
  g_autoptr(PaddockLeaseRecord) record = g_new0 (PaddockLeaseRecord, 1);
  g_autofree char *detail = NULL;
  JsonObject *entry;
  JsonNode *session_node;
  const char *name;
  const char *owner;
  const char *state;
  gint64 port = 0;
  gint64 created = 0;
  gint64 socket_inode = 0;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      detail = g_strdup_printf ("lease %u is not an object", i);
      corrupt (error, path, detail);
      return NULL;
    }

  entry = json_node_get_object (node);
  name = get_string_member (entry, "name");
  owner = get_string_member (entry, "owner");
  state = get_string_member (entry, "state");
  session_node = json_object_get_member (entry, "session");

  /* The ports are checked against the valid range, not the pool: the
   * pool may have been reconfigured, but the owner still uses it. */
  if (!get_int_member (entry, "port", &port) || port < 1024 || port > G_MAXUINT16 ||
      !get_int_member (entry, "created", &created) ||
      name == NULL || !paddock_registry_validate_name (name, NULL) ||
      owner == NULL ||
      !_paddock_registry_valid_owner_string (owner, MAX_OWNER_LEN) ||
      state == NULL ||
      (g_strcmp0 (state, "held") != 0 && g_strcmp0 (state, "lost") != 0 &&
       g_strcmp0 (state, "in-use") != 0) ||
      /* absent in files written before leases remembered their socket */
      (json_object_has_member (entry, "socket_inode") &&
       (!get_int_member (entry, "socket_inode", &socket_inode) || socket_inode < 0)) ||
      session_node == NULL ||
      !(JSON_NODE_HOLDS_NULL (session_node) ||
        (JSON_NODE_HOLDS_VALUE (session_node) &&
         json_node_get_value_type (session_node) == G_TYPE_STRING &&
         _paddock_registry_valid_owner_string (json_node_get_string (session_node), MAX_SESSION_LEN))))
    {
      detail = g_strdup_printf ("lease %u has a missing or invalid member", i);
      corrupt (error, path, detail);
      return NULL;
    }

  record->port = (guint16) port;
  record->name = g_strdup (name);
  record->owner = g_strdup (owner);
  record->session = JSON_NODE_HOLDS_NULL (session_node)
                    ? NULL : g_strdup (json_node_get_string (session_node));
  record->created = created;
  record->socket_inode = (guint64) socket_inode;
  return g_steal_pointer (&record);
}

GPtrArray *
_paddock_registry_parse_state (const char  *path,
             const char  *contents,
             gsize        length,
             char       **out_bus_id,
             GError     **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GPtrArray) records = NULL;
  g_autoptr(GHashTable) seen = g_hash_table_new (NULL, NULL);
  g_autoptr(GError) local_error = NULL;
  JsonNode *root;
  JsonObject *object;
  JsonNode *leases_node;
  JsonArray *leases;
  gint64 version = 0;

  records = g_ptr_array_new_with_free_func ((GDestroyNotify) _paddock_lease_record_free);

  if (!json_parser_load_from_data (parser, contents, (gssize) length, &local_error))
    {
      corrupt (error, path, local_error->message);
      return NULL;
    }

  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      corrupt (error, path, "not a JSON object");
      return NULL;
    }

  object = json_node_get_object (root);
  if (json_object_has_member (object, "bus_id"))
    {
      const char *bus_id = get_string_member (object, "bus_id");

      if (bus_id == NULL)
        {
          corrupt (error, path, "\"bus_id\" is not a string");
          return NULL;
        }
      *out_bus_id = g_strdup (bus_id);
    }

  if (!get_int_member (object, "version", &version) || version != STATE_VERSION)
    {
      corrupt (error, path, "missing or unknown version");
      return NULL;
    }

  leases_node = json_object_get_member (object, "leases");
  if (leases_node == NULL || !JSON_NODE_HOLDS_ARRAY (leases_node))
    {
      corrupt (error, path, "\"leases\" is not an array");
      return NULL;
    }

  leases = json_node_get_array (leases_node);
  for (guint i = 0; i < json_array_get_length (leases); i++)
    {
      JsonNode *node = json_array_get_element (leases, i);
      PaddockLeaseRecord *record;

      record = parse_record (path, node, i, error);
      if (record == NULL)
        return NULL;

      if (!g_hash_table_add (seen, GINT_TO_POINTER ((int) record->port)))
        {
          g_autofree char *detail = g_strdup_printf ("port %u is leased twice", (guint) record->port);

          _paddock_lease_record_free (record);
          corrupt (error, path, detail);
          return NULL;
        }

      g_ptr_array_add (records, record);
    }

  return g_steal_pointer (&records);
}

/* Applies the journal's changes to the snapshot's @records, in order. A
 * last line without its newline is a write the daemon did not finish
 * (killed mid-append): that change was never acknowledged, so it is
 * dropped. Anything else unreadable is corruption, reported as such.
 * @out_whole_end: where the whole lines end (0 without a journal). */
gboolean
_paddock_registry_replay_journal (const char  *journal_file,
                GPtrArray   *records,
                off_t       *out_whole_end,
                GError     **error)
{
  g_autofree char *contents = NULL;
  g_autoptr(GError) local_error = NULL;
  g_auto(GStrv) lines = NULL;
  gsize length = 0;
  guint n_lines;

  *out_whole_end = 0;
  if (!g_file_get_contents (journal_file, &contents, &length, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return TRUE;
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED,
                   "Could not read the lease journal: %s", local_error->message);
      return FALSE;
    }

  /* Where the whole lines end: after the last newline (a plain loop, not
   * memrchr, which the portable build's libcs may lack). */
  for (gsize i = length; i > 0; i--)
    if (contents[i - 1] == '\n')
      {
        *out_whole_end = (off_t) i;
        break;
      }
  lines = g_strsplit (contents, "\n", -1);
  /* The element after the last newline is "" or the torn line: skip it. */
  n_lines = g_strv_length (lines);
  for (guint i = 0; i + 1 < n_lines; i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      JsonObject *object;
      const char *op;
      gint64 port = 0;
      guint index;

      if (!json_parser_load_from_data (parser, lines[i], -1, NULL) ||
          !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        return corrupt (error, journal_file, "a line is not a JSON object");

      object = json_node_get_object (json_parser_get_root (parser));
      op = get_string_member (object, "op");
      if (!get_int_member (object, "port", &port) || port < 1 || port > G_MAXUINT16)
        return corrupt (error, journal_file, "a change names no valid port");

      /* Find the port's record, if any (records are few; a scan is fine). */
      for (index = 0; index < records->len; index++)
        if (((PaddockLeaseRecord *) g_ptr_array_index (records, index))->port == port)
          break;

      if (g_strcmp0 (op, "remove") == 0)
        {
          if (index < records->len)
            g_ptr_array_remove_index (records, index);
        }
      else if (g_strcmp0 (op, "put") == 0)
        {
          PaddockLeaseRecord *record = parse_record (journal_file, json_parser_get_root (parser), i, error);

          if (record == NULL)
            return FALSE;
          if (index < records->len)
            g_ptr_array_remove_index (records, index);
          g_ptr_array_add (records, record);
        }
      else
        return corrupt (error, journal_file, "a change has an unknown op");
    }

  return TRUE;
}
