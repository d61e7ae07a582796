/* paddock-change.c — one row of a session's review list
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "paddock-change.h"

G_DEFINE_QUARK (paddock-staging-error-quark, paddock_staging_error)

G_DEFINE_ENUM_TYPE (PaddockChangeKind, paddock_change_kind,
  G_DEFINE_ENUM_VALUE (PADDOCK_CHANGE_KIND_ADDED, "added"),
  G_DEFINE_ENUM_VALUE (PADDOCK_CHANGE_KIND_MODIFIED, "modified"),
  G_DEFINE_ENUM_VALUE (PADDOCK_CHANGE_KIND_DELETED, "deleted"),
  G_DEFINE_ENUM_VALUE (PADDOCK_CHANGE_KIND_RENAMED, "renamed"),
  G_DEFINE_ENUM_VALUE (PADDOCK_CHANGE_KIND_TYPE_CHANGED, "type-changed"),
  G_DEFINE_ENUM_VALUE (PADDOCK_CHANGE_KIND_MODE_CHANGED, "mode-changed"))

G_DEFINE_ENUM_TYPE (PaddockEntryType, paddock_entry_type,
  G_DEFINE_ENUM_VALUE (PADDOCK_ENTRY_TYPE_NONE, "none"),
  G_DEFINE_ENUM_VALUE (PADDOCK_ENTRY_TYPE_FILE, "file"),
  G_DEFINE_ENUM_VALUE (PADDOCK_ENTRY_TYPE_SYMLINK, "symlink"),
  G_DEFINE_ENUM_VALUE (PADDOCK_ENTRY_TYPE_DIRECTORY, "directory"))

struct _PaddockChange
{
  GObject parent_instance;

  /* Raw bytes, as the file system has them: not necessarily UTF-8. */
  char *path;
  char *old_path;
  PaddockChangeKind kind;
  PaddockEntryType entry_type;
  guint32 old_mode;
  guint32 new_mode;
  guint added_lines;
  guint removed_lines;
  guint binary : 1;
  guint conflict : 1;
  /* Non-NULL when the row touches repository metadata (a static string
   * from paddock-repo-metadata.c): listed apart, never applied unasked. */
  const char *metadata_reason;

  /* The stage's side as apply would take it (set after the review, see
   * paddock_change_set_details()): apparent and allocated size of a file,
   * an earlier row naming the same stage inode, and why the row cannot be
   * applied at all. */
  guint64 size;
  guint64 allocated;
  char *hardlink_of;
  char *unappliable;
};

G_DEFINE_FINAL_TYPE (PaddockChange, paddock_change, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_PATH,
  PROP_OLD_PATH,
  PROP_KIND,
  PROP_ENTRY_TYPE,
  PROP_OLD_MODE,
  PROP_NEW_MODE,
  PROP_BINARY,
  PROP_ADDED_LINES,
  PROP_REMOVED_LINES,
  PROP_CONFLICT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

const char *
paddock_change_kind_to_string (PaddockChangeKind kind)
{
  switch (kind)
    {
    case PADDOCK_CHANGE_KIND_ADDED: return "added";
    case PADDOCK_CHANGE_KIND_MODIFIED: return "modified";
    case PADDOCK_CHANGE_KIND_DELETED: return "deleted";
    case PADDOCK_CHANGE_KIND_RENAMED: return "renamed";
    case PADDOCK_CHANGE_KIND_TYPE_CHANGED: return "type-changed";
    case PADDOCK_CHANGE_KIND_MODE_CHANGED: return "mode-changed";
    default: g_return_val_if_reached (NULL);
    }
}

const char *
paddock_entry_type_to_string (PaddockEntryType type)
{
  switch (type)
    {
    case PADDOCK_ENTRY_TYPE_NONE: return "none";
    case PADDOCK_ENTRY_TYPE_FILE: return "file";
    case PADDOCK_ENTRY_TYPE_SYMLINK: return "symlink";
    case PADDOCK_ENTRY_TYPE_DIRECTORY: return "directory";
    default: g_return_val_if_reached (NULL);
    }
}

static void
paddock_change_finalize (GObject *object)
{
  PaddockChange *self = PADDOCK_CHANGE (object);

  g_clear_pointer (&self->path, g_free);
  g_clear_pointer (&self->old_path, g_free);
  g_clear_pointer (&self->hardlink_of, g_free);
  g_clear_pointer (&self->unappliable, g_free);

  G_OBJECT_CLASS (paddock_change_parent_class)->finalize (object);
}

static void
paddock_change_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  PaddockChange *self = PADDOCK_CHANGE (object);

  switch (prop_id)
    {
    case PROP_PATH: g_value_set_string (value, self->path); break;
    case PROP_OLD_PATH: g_value_set_string (value, self->old_path); break;
    case PROP_KIND: g_value_set_enum (value, self->kind); break;
    case PROP_ENTRY_TYPE: g_value_set_enum (value, self->entry_type); break;
    case PROP_OLD_MODE: g_value_set_uint (value, self->old_mode); break;
    case PROP_NEW_MODE: g_value_set_uint (value, self->new_mode); break;
    case PROP_BINARY: g_value_set_boolean (value, self->binary); break;
    case PROP_ADDED_LINES: g_value_set_uint (value, self->added_lines); break;
    case PROP_REMOVED_LINES: g_value_set_uint (value, self->removed_lines); break;
    case PROP_CONFLICT: g_value_set_boolean (value, self->conflict); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_change_class_init (PaddockChangeClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->finalize = paddock_change_finalize;
  object_class->get_property = paddock_change_get_property;

  /* Paths are raw bytes relative to the workspace, '/'-separated. */
  properties[PROP_PATH] = g_param_spec_string ("path", NULL, NULL, NULL, flags);
  properties[PROP_OLD_PATH] = g_param_spec_string ("old-path", NULL, NULL, NULL, flags);
  properties[PROP_KIND] = g_param_spec_enum ("kind", NULL, NULL, PADDOCK_TYPE_CHANGE_KIND,
                                             PADDOCK_CHANGE_KIND_MODIFIED, flags);
  properties[PROP_ENTRY_TYPE] = g_param_spec_enum ("entry-type", NULL, NULL, PADDOCK_TYPE_ENTRY_TYPE,
                                                   PADDOCK_ENTRY_TYPE_NONE, flags);
  properties[PROP_OLD_MODE] = g_param_spec_uint ("old-mode", NULL, NULL, 0, G_MAXUINT32, 0, flags);
  properties[PROP_NEW_MODE] = g_param_spec_uint ("new-mode", NULL, NULL, 0, G_MAXUINT32, 0, flags);
  properties[PROP_BINARY] = g_param_spec_boolean ("binary", NULL, NULL, FALSE, flags);
  properties[PROP_ADDED_LINES] = g_param_spec_uint ("added-lines", NULL, NULL, 0, G_MAXUINT, 0, flags);
  properties[PROP_REMOVED_LINES] = g_param_spec_uint ("removed-lines", NULL, NULL, 0, G_MAXUINT, 0, flags);
  properties[PROP_CONFLICT] = g_param_spec_boolean ("conflict", NULL, NULL, FALSE, flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
paddock_change_init (PaddockChange *self)
{
}

/* @old_mode and @new_mode are st_mode bits (type and permissions), 0 for a
 * side where the path is absent. @old_path is only set for renames. */
PaddockChange *
paddock_change_new (const char        *path,
                    const char        *old_path,
                    PaddockChangeKind  kind,
                    PaddockEntryType   entry_type,
                    guint32            old_mode,
                    guint32            new_mode,
                    gboolean           binary,
                    guint              added_lines,
                    guint              removed_lines,
                    gboolean           conflict)
{
  PaddockChange *self;

  g_return_val_if_fail (path != NULL && *path != '\0', NULL);
  g_return_val_if_fail ((old_path != NULL) == (kind == PADDOCK_CHANGE_KIND_RENAMED), NULL);

  self = g_object_new (PADDOCK_TYPE_CHANGE, NULL);
  self->path = g_strdup (path);
  self->old_path = g_strdup (old_path);
  self->kind = kind;
  self->entry_type = entry_type;
  self->old_mode = old_mode;
  self->new_mode = new_mode;
  self->binary = !!binary;
  self->added_lines = added_lines;
  self->removed_lines = removed_lines;
  self->conflict = !!conflict;

  return self;
}

const char *
paddock_change_get_path (PaddockChange *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE (self), NULL);
  return self->path;
}

const char *
paddock_change_get_old_path (PaddockChange *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE (self), NULL);
  return self->old_path;
}

PaddockChangeKind
paddock_change_get_kind (PaddockChange *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE (self), 0);
  return self->kind;
}

PaddockEntryType
paddock_change_get_entry_type (PaddockChange *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE (self), 0);
  return self->entry_type;
}

guint32
paddock_change_get_old_mode (PaddockChange *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE (self), 0);
  return self->old_mode;
}

guint32
paddock_change_get_new_mode (PaddockChange *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE (self), 0);
  return self->new_mode;
}

gboolean
paddock_change_get_binary (PaddockChange *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE (self), FALSE);
  return self->binary;
}

guint
paddock_change_get_added_lines (PaddockChange *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE (self), 0);
  return self->added_lines;
}

guint
paddock_change_get_removed_lines (PaddockChange *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE (self), 0);
  return self->removed_lines;
}

gboolean
paddock_change_get_conflict (PaddockChange *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE (self), FALSE);
  return self->conflict;
}

/* Returns: (nullable): why this row is repository metadata, or %NULL for
 * an ordinary file change */
const char *
paddock_change_get_metadata_reason (PaddockChange *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE (self), NULL);
  return self->metadata_reason;
}

/* @reason must be a static string (it is not copied). */
void
paddock_change_set_metadata_reason (PaddockChange *self,
                                    const char    *reason)
{
  g_return_if_fail (PADDOCK_IS_CHANGE (self));
  self->metadata_reason = reason;
}

/**
 * paddock_change_set_details:
 * @size: the new side's apparent size in bytes (a file's st_size, a
 *   link's text length; 0 otherwise)
 * @allocated: what it occupies on disk (st_blocks × 512)
 * @hardlink_of: (nullable): an earlier row whose stage entry is the same
 *   inode: apply makes this path a hard link to that one
 * @unappliable: (nullable): why apply cannot take this row (it is then
 *   left out of an apply of everything)
 */
void
paddock_change_set_details (PaddockChange *self,
                            guint64        size,
                            guint64        allocated,
                            const char    *hardlink_of,
                            const char    *unappliable)
{
  g_return_if_fail (PADDOCK_IS_CHANGE (self));

  self->size = size;
  self->allocated = allocated;
  g_free (self->hardlink_of);
  self->hardlink_of = g_strdup (hardlink_of);
  g_free (self->unappliable);
  self->unappliable = g_strdup (unappliable);
}

guint64
paddock_change_get_size (PaddockChange *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE (self), 0);
  return self->size;
}

guint64
paddock_change_get_allocated (PaddockChange *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE (self), 0);
  return self->allocated;
}

const char *
paddock_change_get_hardlink_of (PaddockChange *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE (self), NULL);
  return self->hardlink_of;
}

const char *
paddock_change_get_unappliable (PaddockChange *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE (self), NULL);
  return self->unappliable;
}
