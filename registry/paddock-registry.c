/* paddock-registry.c — the machine-wide port registry: leases are sockets we hold
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-durable-file.h"
#include "paddock-lease-private.h"
#include "paddock-listening-sockets.h"
#include "paddock-port-bind.h"
#include "paddock-registry-private.h"

static void paddock_registry_list_model_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (PaddockRegistry, paddock_registry, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL,
                                                      paddock_registry_list_model_init))

G_DEFINE_QUARK (paddock-registry-error-quark, paddock_registry_error)

/* GListModel */

static GType
paddock_registry_get_item_type (GListModel *model)
{
  return PADDOCK_TYPE_LEASE;
}

static guint
paddock_registry_get_n_items (GListModel *model)
{
  PaddockRegistry *self = PADDOCK_REGISTRY (model);

  return self->leases->len;
}

static gpointer
paddock_registry_get_item (GListModel *model,
                           guint       position)
{
  PaddockRegistry *self = PADDOCK_REGISTRY (model);

  if (position >= self->leases->len)
    return NULL;

  return g_object_ref (g_ptr_array_index (self->leases, position));
}

static void
paddock_registry_list_model_init (GListModelInterface *iface)
{
  iface->get_item_type = paddock_registry_get_item_type;
  iface->get_n_items = paddock_registry_get_n_items;
  iface->get_item = paddock_registry_get_item;
}

/* GObject */

static void
paddock_registry_dispose (GObject *object)
{
  PaddockRegistry *self = PADDOCK_REGISTRY (object);

  /* Dropping the registry without releasing is what a daemon shutdown
   * does: the sockets close, the state file keeps the leases for the next
   * start. */
  _paddock_registry_commit_clear (self);
  g_clear_pointer (&self->leases, g_ptr_array_unref);
  g_clear_pointer (&self->owner_counts, g_hash_table_unref);

  G_OBJECT_CLASS (paddock_registry_parent_class)->dispose (object);
}

static void
paddock_registry_finalize (GObject *object)
{
  PaddockRegistry *self = PADDOCK_REGISTRY (object);

  g_clear_pointer (&self->state_file, g_free);
  g_clear_pointer (&self->bus_id, g_free);
  g_clear_pointer (&self->journal_file, g_free);
  paddock_close_fd (&self->journal_fd);
  g_mutex_clear (&self->writer_lock);
  g_cond_clear (&self->writer_cond);

  G_OBJECT_CLASS (paddock_registry_parent_class)->finalize (object);
}

static void
paddock_registry_class_init (PaddockRegistryClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_registry_dispose;
  object_class->finalize = paddock_registry_finalize;
}

static void
paddock_registry_init (PaddockRegistry *self)
{
  self->leases = g_ptr_array_new_with_free_func (g_object_unref);
  self->owner_counts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->journal_fd = -1;
  _paddock_registry_commit_init (self);
}

PaddockRegistry *
paddock_registry_new (guint16   first_port,
                      guint16   last_port,
                      guint     max_leases,
                      guint     max_per_owner,
                      GError  **error)
{
  PaddockRegistry *self;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  /* Ports below 1024 need privileges we do not have and must not want. */
  if (first_port < 1024 || first_port > last_port)
    {
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT,
                   "Invalid port pool %u–%u: it must satisfy 1024 ≤ first ≤ last ≤ 65535",
                   first_port, last_port);
      return NULL;
    }

  if (max_leases == 0 || max_per_owner == 0)
    {
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT,
                   "Lease limits must be positive (total %u, per owner %u)",
                   max_leases, max_per_owner);
      return NULL;
    }

  self = g_object_new (PADDOCK_TYPE_REGISTRY, NULL);
  self->first_port = first_port;
  self->last_port = last_port;
  self->max_leases = max_leases;
  self->max_per_owner = max_per_owner;
  self->cursor = first_port;

  return self;
}

guint16
paddock_registry_get_first_port (PaddockRegistry *self)
{
  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), 0);

  return self->first_port;
}

guint16
paddock_registry_get_last_port (PaddockRegistry *self)
{
  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), 0);

  return self->last_port;
}

guint
paddock_registry_get_max_leases (PaddockRegistry *self)
{
  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), 0);

  return self->max_leases;
}

guint
paddock_registry_get_max_per_owner (PaddockRegistry *self)
{
  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), 0);

  return self->max_per_owner;
}

/* The sorted list */

/* Binary search: TRUE and the index when @port is in the list, else FALSE
 * and the index where it would be inserted. */
static gboolean
find_port (PaddockRegistry *self,
           guint16          port,
           guint           *out_index)
{
  guint lo = 0;
  guint hi = self->leases->len;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      guint16 mid_port = paddock_lease_get_port (g_ptr_array_index (self->leases, mid));

      if (mid_port == port)
        {
          *out_index = mid;
          return TRUE;
        }

      if (mid_port < port)
        lo = mid + 1;
      else
        hi = mid;
    }

  *out_index = lo;
  return FALSE;
}

/* find_port() for a call on a lease: FALSE with NotFound when @port has none. */
static gboolean
find_leased_port (PaddockRegistry  *self,
                  guint16           port,
                  guint            *out_index,
                  GError          **error)
{
  if (find_port (self, port, out_index))
    return TRUE;
  g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_NOT_FOUND,
               "Port %u is not leased", port);
  return FALSE;
}

static guint
owner_count (PaddockRegistry *self,
             const char      *owner)
{
  return GPOINTER_TO_UINT (g_hash_table_lookup (self->owner_counts, owner));
}

static void
owner_count_add (PaddockRegistry *self,
                 const char      *owner,
                 int              delta)
{
  guint count = owner_count (self, owner);

  g_assert (delta > 0 || count >= (guint) -delta);
  count = (guint) ((int) count + delta);

  if (count == 0)
    g_hash_table_remove (self->owner_counts, owner);
  else
    g_hash_table_replace (self->owner_counts, g_strdup (owner), GUINT_TO_POINTER (count));
}

/* Inserts without emitting items-changed; returns the position. */
static guint
insert_lease (PaddockRegistry *self,
              PaddockLease    *lease)
{
  guint index = 0;
  gboolean found;

  found = find_port (self, paddock_lease_get_port (lease), &index);
  g_assert (!found);

  g_ptr_array_insert (self->leases, (int) index, g_object_ref (lease));
  owner_count_add (self, paddock_lease_get_owner (lease), 1);

  return index;
}

guint
_paddock_registry_list_lease (PaddockRegistry *self,
                              PaddockLease    *lease)
{
  return insert_lease (self, lease);
}

/* Held by a listed lease or by one waiting for its journal sync. */
static gboolean
port_taken (PaddockRegistry *self,
            guint16          port)
{
  guint index = 0;

  return find_port (self, port, &index) || _paddock_registry_commit_port_taken (self, port);
}

/* Removes without emitting items-changed or closing; returns the lease. */
static PaddockLease *
steal_lease (PaddockRegistry *self,
             guint            index)
{
  PaddockLease *lease = g_ptr_array_steal_index (self->leases, index);

  owner_count_add (self, paddock_lease_get_owner (lease), -1);

  return lease;
}

/* Reads @state_file (if it exists) and binds every lease in it again; a
 * lease whose port was taken while we were not running comes back LOST:
 * it stays listed, is reported, and is never handed to anyone else until
 * its owner releases it. Remembers @state_file: from now on every change is
 * written there. A corrupt file is an error and stays untouched (the path
 * is not remembered, so it is not overwritten either). If only writing the
 * file back fails, the leases are loaded and the error is returned. */
gboolean
paddock_registry_load (PaddockRegistry  *self,
                       const char       *state_file,
                       GError          **error)
{
  g_autoptr(GPtrArray) records = NULL;
  g_autoptr(GHashTable) listening = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *stored_bus_id = NULL;
  gsize length = 0;
  guint added;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), FALSE);
  g_return_val_if_fail (state_file != NULL, FALSE);
  g_return_val_if_fail (self->state_file == NULL, FALSE);
  g_return_val_if_fail (self->leases->len == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!g_file_get_contents (state_file, &contents, &length, &local_error))
    {
      if (!g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        {
          g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED,
                       "Could not read the lease state: %s", local_error->message);
          return FALSE;
        }
    }
  else
    {
      records = _paddock_registry_parse_state (state_file, contents, length, &stored_bus_id, error);
      if (records == NULL)
        return FALSE;
    }

  self->journal_file = g_strconcat (state_file, ".journal", NULL);
  if (records == NULL)
    records = g_ptr_array_new_with_free_func ((GDestroyNotify) _paddock_lease_record_free);
  if (!_paddock_registry_replay_journal (self->journal_file, records, &self->journal_whole_end, error))
    {
      g_clear_pointer (&self->journal_file, g_free);
      return FALSE;
    }

  /* Leases of clients of another bus (the user logged out and in again):
   * their unique names now belong to other programs, or to nobody. Those
   * clients are gone; their leases go too. */
  if (self->bus_id != NULL && g_strcmp0 (stored_bus_id, self->bus_id) != 0)
    for (guint i = records->len; i > 0; i--)
      if (((PaddockLeaseRecord *) g_ptr_array_index (records, i - 1))->owner[0] == ':')
        g_ptr_array_remove_index (records, i - 1);

  listening = _paddock_listening_sockets ();

  for (guint i = 0; i < records->len; i++)
    {
      PaddockLeaseRecord *record = g_ptr_array_index (records, i);
      g_autoptr(PaddockLease) lease = NULL;
      int fd4 = -1;
      int fd6 = -1;
      int saved_errno = 0;
      PaddockBindResult result;

      /* Any failure to bind again (taken by another program, or even
       * EMFILE) leaves the lease LOST rather than dropping it: the
       * owner is told, and the port is never handed out twice. */
      result = _paddock_port_bind (record->port, &fd4, &fd6, &saved_errno);
      if (result != PADDOCK_BIND_OK)
        fd4 = fd6 = -1;

      lease = _paddock_lease_new (record->port, record->name, record->owner,
                                  record->session, record->created, fd4, fd6);

      /* Unless the listener on the port is the very socket we handed
       * out (same inode): then the owner's program still has it and
       * the port is still the owner's. */
      if (result == PADDOCK_BIND_IN_USE && record->socket_inode != 0 &&
          _paddock_socket_still_listening (listening, record->port, record->socket_inode))
        {
          int guard = -1;
          int guard_errno = 0;

          if (_paddock_port_bind_ipv6_guard (record->port, &guard, &guard_errno) != PADDOCK_BIND_OK)
            guard = -1;
          _paddock_lease_set_in_use (lease, record->socket_inode, guard);
        }

      insert_lease (self, lease);
    }

  self->state_file = g_strdup (state_file);
  added = self->leases->len;

  if (added > 0)
    g_list_model_items_changed (G_LIST_MODEL (self), 0, 0, added);

  self->journal_fd = open (self->journal_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
                           0600);
  if (self->journal_fd < 0)
    {
      int saved_errno = errno;
      g_set_error (error, PADDOCK_REGISTRY_ERROR,
                   saved_errno == ENOSPC || saved_errno == EDQUOT
                     ? PADDOCK_REGISTRY_ERROR_NO_SPACE : PADDOCK_REGISTRY_ERROR_FAILED,
                   "Could not open the lease journal %s: %s", self->journal_file,
                   g_strerror (saved_errno));
      return FALSE;
    }

  /* Write back at once (the snapshot now says which leases are lost) and
   * start an empty journal. If that fails (a full disk), the leases stay
   * loaded and the next change writes the whole snapshot first. */
  if (!_paddock_registry_compact (self, error))
    {
      self->journal_dirty = TRUE;
      /* Still, a reserve for releases if there is room for it. */
      _paddock_registry_journal_reserve (self);
      return FALSE;
    }

  return TRUE;
}

/* TRUE once paddock_registry_load() read the state: from then on every
 * change is written there, even if writing it back at load failed. */
gboolean
paddock_registry_is_loaded (PaddockRegistry *self)
{
  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), FALSE);

  return self->state_file != NULL;
}

/* Takes back every lease we do not hold (in use by its owner's program
 * since a restart, or lost to another program) whose port is free again.
 * Returns how many were taken back; @out_unheld (optional) is how many
 * still are not held, so the caller knows whether to keep trying. */
guint
paddock_registry_reclaim (PaddockRegistry  *self,
                          guint            *out_unheld,
                          GError          **error)
{
  g_autoptr(GString) lines = g_string_new (NULL);
  g_autoptr(GHashTable) listening = NULL;
  guint reclaimed = 0;
  guint changed = 0;
  guint unheld = 0;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), 0);

  listening = _paddock_listening_sockets ();

  for (guint i = 0; i < self->leases->len; i++)
    {
      PaddockLease *lease = g_ptr_array_index (self->leases, i);
      int fd4 = -1;
      int fd6 = -1;
      int saved_errno = 0;

      /* A released lease is its session's program's to bind: taking it
       * back here would make that bind fail (paddock_registry_take_back()). */
      if (paddock_lease_get_state (lease) == PADDOCK_LEASE_STATE_HELD ||
          paddock_lease_get_state (lease) == PADDOCK_LEASE_STATE_RELEASED)
        continue;

      /* An in-use lease keeps its [::1] guard while its owner's socket
       * lives; let go of it first or our own guard blocks the re-bind. */
      if (paddock_lease_get_state (lease) == PADDOCK_LEASE_STATE_IN_USE &&
          _paddock_socket_still_listening (listening, paddock_lease_get_port (lease),
                                  paddock_lease_get_socket_inode (lease)))
        {
          unheld++;
          continue;
        }

      _paddock_lease_close_sockets (lease);
      if (_paddock_port_bind (paddock_lease_get_port (lease), &fd4, &fd6, &saved_errno) != PADDOCK_BIND_OK)
        {
          /* The owner's socket closed and another program was quicker. */
          if (paddock_lease_get_state (lease) == PADDOCK_LEASE_STATE_IN_USE)
            {
              _paddock_lease_set_lost (lease);
              _paddock_registry_journal_add_put (lines, lease);
              changed++;
              g_list_model_items_changed (G_LIST_MODEL (self), i, 1, 1);
            }
          unheld++;
          continue;
        }

      _paddock_lease_take_sockets (lease, fd4, fd6);
      _paddock_registry_journal_add_put (lines, lease);
      reclaimed++;
      g_list_model_items_changed (G_LIST_MODEL (self), i, 1, 1);
    }

  if (out_unheld != NULL)
    *out_unheld = unheld;

  if (reclaimed + changed > 0)
    _paddock_registry_journal_write (self, lines->str, reclaimed + changed, error);

  return reclaimed;
}

/* The id of the message bus whose unique names own client leases
 * (org.freedesktop.DBus.GetId); set before paddock_registry_load(). */
void
paddock_registry_set_bus_id (PaddockRegistry *self,
                             const char      *bus_id)
{
  g_return_if_fail (PADDOCK_IS_REGISTRY (self));
  g_return_if_fail (self->state_file == NULL);

  g_free (self->bus_id);
  self->bus_id = g_strdup (bus_id);
}

gboolean
paddock_registry_validate_name (const char  *name,
                                GError     **error)
{
  gsize len;

  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  len = name != NULL ? strlen (name) : 0;
  if (len == 0 || len > PADDOCK_REGISTRY_MAX_NAME_LEN)
    goto invalid;

  /* An ASCII whitelist: names end up in D-Bus messages, JSON, LISTEN_FDNAMES
   * and terminal output, where anything else needs escaping. Non-UTF-8
   * bytes fail here too. */
  for (gsize i = 0; i < len; i++)
    {
      char c = name[i];

      if (!g_ascii_isalnum (c) && c != '.' && c != '_' && c != '-')
        goto invalid;
    }

  return TRUE;

invalid:
  /* The name itself is not echoed: it may not even be valid UTF-8. */
  g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT,
               "A lease name must be 1–%d characters from A–Z, a–z, 0–9, '.', '_' and '-'",
               PADDOCK_REGISTRY_MAX_NAME_LEN);
  return FALSE;
}

static gboolean
is_session_owner (const char *owner)
{
  return g_str_has_prefix (owner, SESSION_OWNER_PREFIX);
}

/* paddock_registry_lease() up to a bound lease: not listed, not saved,
 * not announced yet. Returns a new reference. */
PaddockLease *
_paddock_registry_take_unlisted (PaddockRegistry  *self,
               const char       *owner,
               const char       *session,
               const char       *name,
               guint16           preferred_port,
               GError          **error)
{
  g_autoptr(PaddockLease) lease = NULL;
  g_autofree char *session_owner = NULL;
  guint16 port = 0;
  int fd4 = -1;
  int fd6 = -1;
  int saved_errno = 0;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (owner != NULL || session != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!paddock_registry_validate_name (name, error))
    return NULL;

  if (preferred_port != 0 &&
      (preferred_port < self->first_port || preferred_port > self->last_port))
    {
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT,
                   "Port %u is outside the pool %u–%u",
                   preferred_port, self->first_port, self->last_port);
      return NULL;
    }

  if (session != NULL)
    {
      if (!_paddock_registry_valid_owner_string (session, MAX_SESSION_LEN))
        {
          g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT,
                       "A session id must be 1–%d bytes of UTF-8", MAX_SESSION_LEN);
          return NULL;
        }
      session_owner = g_strconcat (SESSION_OWNER_PREFIX, session, NULL);
      owner = session_owner;
    }
  else if (!_paddock_registry_valid_owner_string (owner, MAX_OWNER_LEN) || is_session_owner (owner))
    {
      /* A client owner that looked like "session:…" could have its leases
       * released by anyone, and released with that session. */
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT,
                   "An owner must be 1–%d bytes of UTF-8 not starting with \"%s\"",
                   MAX_OWNER_LEN, SESSION_OWNER_PREFIX);
      return NULL;
    }

  if (owner_count (self, owner) + _paddock_registry_commit_count (self, owner) >= self->max_per_owner)
    {
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_QUOTA_EXCEEDED,
                   "Too many leases for this owner (the limit per owner is %u)",
                   self->max_per_owner);
      return NULL;
    }

  if (self->leases->len + _paddock_registry_commit_count (self, NULL) >= self->max_leases)
    {
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_QUOTA_EXCEEDED,
                   "Too many leases in total (the limit is %u)", self->max_leases);
      return NULL;
    }

  if (preferred_port != 0)
    {
      PaddockBindResult result;

      /* Held or lost, a port we have a record of is never handed out. */
      if (port_taken (self, preferred_port))
        {
          g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_PORT_IN_USE,
                       "Port %u is already leased", preferred_port);
          return NULL;
        }

      result = _paddock_port_bind (preferred_port, &fd4, &fd6, &saved_errno);
      switch (result)
        {
        case PADDOCK_BIND_OK:
          break;
        case PADDOCK_BIND_IN_USE:
          g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_PORT_IN_USE,
                       "Port %u is used by another program", preferred_port);
          return NULL;
        case PADDOCK_BIND_FAILED:
        default:
          g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED,
                       "Could not bind port %u: %s", preferred_port, g_strerror (saved_errno));
          return NULL;
        }

      port = preferred_port;
    }
  else
    {
      guint pool_size = (guint) self->last_port - self->first_port + 1;
      guint start = (guint) self->cursor - self->first_port;

      for (guint i = 0; i < pool_size && port == 0; i++)
        {
          guint16 candidate = (guint16) (self->first_port + (start + i) % pool_size);

          if (port_taken (self, candidate))
            continue;

          switch (_paddock_port_bind (candidate, &fd4, &fd6, &saved_errno))
            {
            case PADDOCK_BIND_OK:
              port = candidate;
              break;
            case PADDOCK_BIND_IN_USE:
              /* Another program uses it: not ours to hand out. */
              break;
            case PADDOCK_BIND_FAILED:
            default:
              g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED,
                           "Could not bind port %u: %s", candidate, g_strerror (saved_errno));
              return NULL;
            }
        }

      if (port == 0)
        {
          g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_PORT_EXHAUSTED,
                       "No free port left in the pool %u–%u "
                       "(%u leased here, the rest used by other programs)",
                       self->first_port, self->last_port, self->leases->len);
          return NULL;
        }

      self->cursor = port == self->last_port ? self->first_port : (guint16) (port + 1);
    }

  return _paddock_lease_new (port, name, owner, session, g_get_real_time (), fd4, fd6);
}

/* The same, put in the list (not announced yet). */
static PaddockLease *
lease_unsaved (PaddockRegistry  *self,
               const char       *owner,
               const char       *session,
               const char       *name,
               guint16           preferred_port,
               GError          **error)
{
  PaddockLease *lease = _paddock_registry_take_unlisted (self, owner, session, name,
                                                         preferred_port, error);

  if (lease != NULL)
    insert_lease (self, lease);
  return lease;
}

/* Takes @lease out of the list, without announcing or closing it. */
static void
undo_listing (PaddockRegistry *self,
              PaddockLease    *lease)
{
  guint index = 0;

  if (find_port (self, paddock_lease_get_port (lease), &index) &&
      g_ptr_array_index (self->leases, index) == lease)
    g_object_unref (steal_lease (self, index));
}

/* Takes @lease (in the list, not announced) out again and closes it. */
static void
undo_unsaved (PaddockRegistry *self,
              PaddockLease    *lease)
{
  undo_listing (self, lease);
  _paddock_lease_close_sockets (lease);
}

/* Leases a port for @owner (a D-Bus unique name) or, when @session is not
 * NULL, for that session (the owner is then "session:<session>" and @owner
 * is ignored, since a session lease outlives the client that asked for
 * it). With @preferred_port 0 any free port of the pool is taken. Returns
 * a new reference; the lease's fd is the bound, listening socket. */
PaddockLease *
paddock_registry_lease (PaddockRegistry  *self,
                        const char       *owner,
                        const char       *session,
                        const char       *name,
                        guint16           preferred_port,
                        GError          **error)
{
  g_autoptr(PaddockLease) lease = NULL;
  guint index = 0;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (owner != NULL || session != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  lease = lease_unsaved (self, owner, session, name, preferred_port, error);
  if (lease == NULL)
    return NULL;

  /* Persist before anyone sees the lease: if the state cannot be saved the
   * lease is undone (its sockets close with it), so the file and the
   * model never disagree. */
  if (!_paddock_registry_journal_put (self, lease, error))
    {
      /* _paddock_registry_journal_write() cut its line off again or marked the journal
       * dirty; either way no restart brings this lease back. */
      undo_unsaved (self, lease);
      return NULL;
    }

  find_port (self, paddock_lease_get_port (lease), &index);
  g_list_model_items_changed (G_LIST_MODEL (self), index, 0, 1);

  return g_steal_pointer (&lease);
}

/* @n leases of any free ports of the pool for @session, all named @name,
 * saved with one durable write (a session reserving ports at create waits
 * for one fdatasync, not @n). All or nothing: on an error no lease is
 * left. Returns the leases, in the order taken. */
GPtrArray *
paddock_registry_lease_several (PaddockRegistry  *self,
                                const char       *session,
                                const char       *name,
                                guint             n,
                                GError          **error)
{
  g_autoptr(GPtrArray) leases = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GString) lines = g_string_new (NULL);

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (session != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  for (guint i = 0; i < n; i++)
    {
      PaddockLease *lease = lease_unsaved (self, NULL, session, name, 0, error);

      if (lease == NULL)
        break;
      g_ptr_array_add (leases, lease);
      _paddock_registry_journal_add_put (lines, lease);
    }
  if (leases->len < n || (n > 0 && !_paddock_registry_journal_write (self, lines->str, n, error)))
    {
      for (guint i = 0; i < leases->len; i++)
        undo_unsaved (self, g_ptr_array_index (leases, i));
      return NULL;
    }

  /* Announced one by one, each where it is, so that a listener mirroring
   * the list sees it grow one lease at a time. */
  for (guint i = 0; i < leases->len; i++)
    undo_listing (self, g_ptr_array_index (leases, i));
  for (guint i = 0; i < leases->len; i++)
    g_list_model_items_changed (G_LIST_MODEL (self), insert_lease (self, g_ptr_array_index (leases, i)), 0, 1);

  return g_steal_pointer (&leases);
}

/* Releases the lease on @port. @requester is the D-Bus unique name of the
 * client asking, or NULL for the daemon itself (session teardown), which is
 * always allowed. A client may release its own leases and session leases
 * (any client may work on a session); not another client's. A full disk
 * does not refuse it: the release goes into the journal's reserve (see
 * _paddock_registry_journal_write_release()), or, without one, is done
 * unsaved. If the new state cannot be saved for another reason, nothing
 * is released and an error is returned. */
gboolean
paddock_registry_release (PaddockRegistry  *self,
                          guint16           port,
                          const char       *requester,
                          GError          **error)
{
  g_autoptr(PaddockLease) lease = NULL;
  g_autoptr(GString) lines = g_string_new (NULL);
  g_autoptr(GError) local_error = NULL;
  PaddockLease *found;
  guint index = 0;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!find_leased_port (self, port, &index, error))
    return FALSE;

  found = g_ptr_array_index (self->leases, index);
  if (requester != NULL &&
      !is_session_owner (paddock_lease_get_owner (found)) &&
      g_strcmp0 (requester, paddock_lease_get_owner (found)) != 0)
    {
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_ACCESS_DENIED,
                   "Port %u is leased by another client", port);
      return FALSE;
    }

  lease = steal_lease (self, index);
  _paddock_registry_journal_add_remove (lines, port);
  if (!_paddock_registry_journal_write_release (self, lines->str, 1, &local_error))
    {
      if (!g_error_matches (local_error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_NO_SPACE))
        {
          /* Put it back where it was: still held, still listed. */
          insert_lease (self, lease);
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      /* No room even in the journal's reserve (a filesystem without
       * fallocate, or a journal made on a full disk): a full disk must
       * not keep a port from its user, so it is released all the same,
       * as release_owner() does. The next change with room rewrites the
       * snapshot; until then a restart brings the lease back, lost. */
      g_debug ("Releasing port %u: %s", port, local_error->message);
      self->journal_dirty = TRUE;
    }

  _paddock_lease_close_sockets (lease);
  g_list_model_items_changed (G_LIST_MODEL (self), index, 1, 0);

  return TRUE;
}

/* Gives the lease on @port a new name, kept across restarts: the port,
 * its sockets and its owner stay as they are (a session names a port it
 * reserved at create, see Session1.LeasePort). Only the daemon calls this.
 * If the new name cannot be saved, the lease keeps its old one. */
gboolean
paddock_registry_rename (PaddockRegistry  *self,
                         guint16           port,
                         const char       *name,
                         GError          **error)
{
  g_autofree char *old_name = NULL;
  PaddockLease *lease;
  guint index = 0;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!paddock_registry_validate_name (name, error))
    return FALSE;
  if (!find_leased_port (self, port, &index, error))
    return FALSE;

  lease = g_ptr_array_index (self->leases, index);
  old_name = g_strdup (paddock_lease_get_name (lease));
  _paddock_lease_set_name (lease, name);
  /* A put of the same port replaces its record at replay. */
  if (!_paddock_registry_journal_put (self, lease, error))
    {
      _paddock_lease_set_name (lease, old_name);
      return FALSE;
    }

  g_list_model_items_changed (G_LIST_MODEL (self), index, 1, 1);
  return TRUE;
}

/* Releases every lease of @owner (a client that left the bus, or
 * "session:<id>" for a destroyed session) and returns how many. This is
 * teardown and cannot be refused: if the journal cannot be written, the
 * leases are released anyway and the journal is marked dirty, so the next
 * change rewrites the whole snapshot (until then a restart would re-bind
 * them under a dead owner, whose absence the daemon then notices). The
 * error is only logged: the caller is a disconnect handler with nobody to
 * tell. */
guint
paddock_registry_release_owner (PaddockRegistry *self,
                                const char      *owner)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GString) lines = g_string_new (NULL);
  guint released = 0;
  guint waiting = 0;
  guint run = 0;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), 0);
  g_return_val_if_fail (owner != NULL, 0);

  /* Leases still waiting for their sync are released once it returns. */
  waiting = _paddock_registry_commit_abandon (self, owner);
  released = waiting;
  if (owner_count (self, owner) == 0)
    return released;

  /* Back to front, so each items-changed position is still valid for a
   * listener that applies them one by one; one per run of the owner's
   * leases side by side (a client's leases from the pool's cursor mostly
   * are), each a LeasesChanged on the bus. */
  for (guint i = self->leases->len; i > 0; i--)
    {
      PaddockLease *lease = g_ptr_array_index (self->leases, i - 1);

      if (g_strcmp0 (paddock_lease_get_owner (lease), owner) == 0)
        {
          g_autoptr(PaddockLease) stolen = steal_lease (self, i - 1);

          _paddock_registry_journal_add_remove (lines, paddock_lease_get_port (stolen));
          _paddock_lease_close_sockets (stolen);
          run++;
          released++;
        }
      else if (run > 0)
        {
          g_list_model_items_changed (G_LIST_MODEL (self), i, run, 0);
          run = 0;
        }
    }
  if (run > 0)
    g_list_model_items_changed (G_LIST_MODEL (self), 0, run, 0);

  if (lines->len > 0 &&
      !_paddock_registry_journal_write_release (self, lines->str, released - waiting, &local_error))
    {
      g_debug ("Releasing the leases of %s: %s", owner, local_error->message);
      self->journal_dirty = TRUE;
    }

  return released;
}

/* Closes the daemon's sockets of the held lease on @port so that its
 * session's program can bind the port itself; the lease stays, by name,
 * RELEASED, and no one else is leased the port. Only the daemon calls
 * this, just before the program starts: between the two another program
 * of the host could take the port, which nothing can prevent (a port is
 * either bound by us or free). Not saved: on disk it is what it was, and a
 * daemon that reads it back binds the port again once it is free. */
gboolean
paddock_registry_hand_over (PaddockRegistry  *self,
                            guint16           port,
                            GError          **error)
{
  PaddockLease *lease;
  guint index = 0;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!find_leased_port (self, port, &index, error))
    return FALSE;
  lease = g_ptr_array_index (self->leases, index);
  if (paddock_lease_get_state (lease) == PADDOCK_LEASE_STATE_RELEASED)
    return TRUE;
  if (paddock_lease_get_state (lease) != PADDOCK_LEASE_STATE_HELD)
    {
      g_set_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_PORT_IN_USE,
                   "Port %u is not held by the daemon (%s): another program has it",
                   port, paddock_lease_state_to_string (paddock_lease_get_state (lease)));
      return FALSE;
    }
  _paddock_lease_set_released (lease);
  g_list_model_items_changed (G_LIST_MODEL (self), index, 1, 1);
  return TRUE;
}

/* A session adopted from its keeper by a new daemon (see
 * paddock-keeper-protocol.h): its released lease on @port was stored as
 * lost (see paddock-registry-store.c), and its agent, which runs on, is
 * what listens there. Released again, so that it is taken back once the
 * session's processes are gone (paddock_registry_take_back()), as before
 * the restart. Only a lost lease of @session. */
gboolean
paddock_registry_readopt_released (PaddockRegistry *self,
                                   guint16          port,
                                   const char      *session)
{
  PaddockLease *lease;
  guint index = 0;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), FALSE);

  if (!find_leased_port (self, port, &index, NULL))
    return FALSE;
  lease = g_ptr_array_index (self->leases, index);
  if (paddock_lease_get_state (lease) != PADDOCK_LEASE_STATE_LOST ||
      g_strcmp0 (paddock_lease_get_session (lease), session) != 0)
    return FALSE;
  _paddock_lease_set_released (lease);
  g_list_model_items_changed (G_LIST_MODEL (self), index, 1, 1);
  return TRUE;
}

/* Binds the released lease on @port again (its session's processes are
 * gone): TRUE when held again. FALSE when another program listens there
 * now, which took it between paddock_registry_hand_over() and the
 * session's bind, or after the session let go: the lease is then LOST,
 * and taken back by paddock_registry_reclaim() once that program lets go.
 * A lease not released is left as it is (TRUE if held). */
gboolean
paddock_registry_take_back (PaddockRegistry *self,
                            guint16          port)
{
  PaddockLease *lease;
  guint index = 0;
  int fd4 = -1;
  int fd6 = -1;
  int saved_errno = 0;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), FALSE);

  if (!find_port (self, port, &index))
    return FALSE;
  lease = g_ptr_array_index (self->leases, index);
  if (paddock_lease_get_state (lease) != PADDOCK_LEASE_STATE_RELEASED)
    return paddock_lease_get_state (lease) == PADDOCK_LEASE_STATE_HELD;
  if (_paddock_port_bind (port, &fd4, &fd6, &saved_errno) == PADDOCK_BIND_OK)
    _paddock_lease_take_sockets (lease, fd4, fd6);
  else
    _paddock_lease_set_lost (lease);
  g_list_model_items_changed (G_LIST_MODEL (self), index, 1, 1);
  return paddock_lease_get_state (lease) == PADDOCK_LEASE_STATE_HELD;
}

/* Returns the lease on @port (borrowed), or NULL. */
PaddockLease *
paddock_registry_lookup (PaddockRegistry *self,
                         guint16          port)
{
  guint index = 0;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), NULL);

  if (!find_port (self, port, &index))
    return NULL;

  return g_ptr_array_index (self->leases, index);
}

static int
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return g_strcmp0 (*(const char * const *) a, *(const char * const *) b);
}

/* Returns the distinct owners, sorted, as a new GStrv: after a restart the
 * daemon checks which client owners are still on the bus. */
GStrv
paddock_registry_dup_owners (PaddockRegistry *self)
{
  g_autofree const char **keys = NULL;
  guint n_keys = 0;
  GStrv owners;

  g_return_val_if_fail (PADDOCK_IS_REGISTRY (self), NULL);

  keys = (const char **) g_hash_table_get_keys_as_array (self->owner_counts, &n_keys);
  qsort (keys, n_keys, sizeof (char *), compare_strings);

  owners = g_new0 (char *, n_keys + 1);
  for (guint i = 0; i < n_keys; i++)
    owners[i] = g_strdup (keys[i]);

  return owners;
}
