/* paddock-change-item.c — one staged change in a session's review list
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gi18n.h>

#include "paddock-change-item.h"
#include "paddock-visible-text.h"

/* One row of Session1.Review's "changes" (ayayssbuub) or "metadata"
 * (ayayssbuubs, with the reason it is repository metadata). Paths stay
 * bytes (they go back to the daemon as they came); the display strings,
 * for labels only, are valid UTF-8 with the agent's controls and invisible
 * characters shown (paddock-visible-text.c). Immutable: a refresh makes new
 * items. */
struct _PaddockChangeItem
{
  GObject   parent_instance;

  char     *path;
  char     *old_path;
  char     *kind;
  char     *entry_type;
  guint     added;
  guint     removed;
  gboolean  binary;
  gboolean  conflict;
  char     *metadata_reason;  /* NULL for a file change */
};

G_DEFINE_FINAL_TYPE (PaddockChangeItem, paddock_change_item, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_PATH,
  PROP_DISPLAY_PATH,
  PROP_KIND,
  PROP_KIND_LABEL,
  PROP_BINARY,
  PROP_ADDED_LABEL,
  PROP_REMOVED_LABEL,
  PROP_CONFLICT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const char *
kind_label (const char *kind)
{
  if (g_strcmp0 (kind, "added") == 0)
    return _("Added");
  if (g_strcmp0 (kind, "modified") == 0)
    return _("Modified");
  if (g_strcmp0 (kind, "deleted") == 0)
    return _("Deleted");
  if (g_strcmp0 (kind, "renamed") == 0)
    return _("Renamed");
  if (g_strcmp0 (kind, "type-changed") == 0)
    return _("Type Changed");
  if (g_strcmp0 (kind, "mode-changed") == 0)
    return _("Mode Changed");
  return kind;
}

static void
paddock_change_item_finalize (GObject *object)
{
  PaddockChangeItem *self = (PaddockChangeItem *)object;

  g_clear_pointer (&self->path, g_free);
  g_clear_pointer (&self->old_path, g_free);
  g_clear_pointer (&self->kind, g_free);
  g_clear_pointer (&self->entry_type, g_free);
  g_clear_pointer (&self->metadata_reason, g_free);

  G_OBJECT_CLASS (paddock_change_item_parent_class)->finalize (object);
}

static void
paddock_change_item_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  PaddockChangeItem *self = PADDOCK_CHANGE_ITEM (object);

  switch (prop_id)
    {
    case PROP_PATH:
      g_value_set_string (value, self->path);
      break;

    case PROP_DISPLAY_PATH:
      g_value_take_string (value, paddock_change_item_dup_display_path (self));
      break;

    case PROP_KIND:
      g_value_set_string (value, self->kind);
      break;

    case PROP_KIND_LABEL:
      /* Metadata rows stand out in the list: they are never applied. */
      if (self->metadata_reason != NULL)
        g_value_take_string (value, g_strdup_printf (_("Metadata · %s"), kind_label (self->kind)));
      else
        g_value_set_string (value, kind_label (self->kind));
      break;

    case PROP_BINARY:
      g_value_set_boolean (value, self->binary);
      break;

    case PROP_ADDED_LABEL:
      if (self->binary)
        g_value_set_string (value, _("binary"));
      else
        g_value_take_string (value, g_strdup_printf ("+%u", self->added));
      break;

    case PROP_REMOVED_LABEL:
      if (self->binary)
        g_value_set_string (value, NULL);
      else
        g_value_take_string (value, g_strdup_printf ("−%u", self->removed));
      break;

    case PROP_CONFLICT:
      g_value_set_boolean (value, self->conflict);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_change_item_class_init (PaddockChangeItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->finalize = paddock_change_item_finalize;
  object_class->get_property = paddock_change_item_get_property;

  properties[PROP_PATH] = g_param_spec_string ("path", NULL, NULL, NULL, flags);
  /**
   * PaddockChangeItem:display-path:
   *
   * The path as text; "old → new" for a rename.
   */
  properties[PROP_DISPLAY_PATH] = g_param_spec_string ("display-path", NULL, NULL, NULL, flags);
  properties[PROP_KIND] = g_param_spec_string ("kind", NULL, NULL, NULL, flags);
  properties[PROP_KIND_LABEL] = g_param_spec_string ("kind-label", NULL, NULL, NULL, flags);
  properties[PROP_BINARY] = g_param_spec_boolean ("binary", NULL, NULL, FALSE, flags);
  properties[PROP_ADDED_LABEL] = g_param_spec_string ("added-label", NULL, NULL, NULL, flags);
  properties[PROP_REMOVED_LABEL] = g_param_spec_string ("removed-label", NULL, NULL, NULL, flags);
  properties[PROP_CONFLICT] = g_param_spec_boolean ("conflict", NULL, NULL, FALSE, flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
paddock_change_item_init (PaddockChangeItem *self)
{
}

/**
 * paddock_change_item_new_from_variant:
 * @change: one (ayayssbuub) row of Session1.ListChanges
 *
 * Returns: (transfer full): a new item
 */
PaddockChangeItem *
paddock_change_item_new_from_variant (GVariant *change)
{
  PaddockChangeItem *self;
  const char *path = NULL;
  const char *old_path = NULL;
  const char *kind = NULL;
  const char *entry_type = NULL;

  g_return_val_if_fail (g_variant_is_of_type (change, G_VARIANT_TYPE ("(ayayssbuub)")) ||
                        g_variant_is_of_type (change, G_VARIANT_TYPE ("(ayayssbuubs)")), NULL);

  self = g_object_new (PADDOCK_TYPE_CHANGE_ITEM, NULL);
  if (g_variant_n_children (change) == 9)
    {
      const char *reason = NULL;

      g_variant_get (change, "(^&ay^&ay&s&sbuub&s)",
                     &path, &old_path, &kind, &entry_type,
                     &self->binary, &self->added, &self->removed, &self->conflict, &reason);
      self->metadata_reason = g_strdup (reason);
    }
  else
    g_variant_get (change, "(^&ay^&ay&s&sbuub)",
                   &path, &old_path, &kind, &entry_type,
                   &self->binary, &self->added, &self->removed, &self->conflict);
  self->path = g_strdup (path);
  self->old_path = old_path != NULL && *old_path != '\0' ? g_strdup (old_path) : NULL;
  self->kind = g_strdup (kind);
  self->entry_type = g_strdup (entry_type);

  return self;
}

/* Returns: (nullable): why the row is repository metadata, or %NULL for a
 * file change */
const char *
paddock_change_item_get_metadata_reason (PaddockChangeItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE_ITEM (self), NULL);
  return self->metadata_reason;
}

const char *
paddock_change_item_get_path (PaddockChangeItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE_ITEM (self), NULL);
  return self->path;
}

/**
 * paddock_change_item_get_old_path:
 *
 * Returns: (nullable): the path before a rename, else %NULL
 */
const char *
paddock_change_item_get_old_path (PaddockChangeItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE_ITEM (self), NULL);
  return self->old_path;
}

const char *
paddock_change_item_get_kind (PaddockChangeItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE_ITEM (self), NULL);
  return self->kind;
}

const char *
paddock_change_item_get_entry_type (PaddockChangeItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE_ITEM (self), NULL);
  return self->entry_type;
}

gboolean
paddock_change_item_get_binary (PaddockChangeItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE_ITEM (self), FALSE);
  return self->binary;
}

guint
paddock_change_item_get_added (PaddockChangeItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE_ITEM (self), 0);
  return self->added;
}

guint
paddock_change_item_get_removed (PaddockChangeItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE_ITEM (self), 0);
  return self->removed;
}

gboolean
paddock_change_item_get_conflict (PaddockChangeItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_CHANGE_ITEM (self), FALSE);
  return self->conflict;
}

/**
 * paddock_change_item_dup_display_path:
 *
 * Returns: (transfer full): the path as text, "old → new" for a rename
 */
char *
paddock_change_item_dup_display_path (PaddockChangeItem *self)
{
  g_autofree char *path = NULL;

  g_return_val_if_fail (PADDOCK_IS_CHANGE_ITEM (self), NULL);

  path = paddock_visible_text_dup_label (self->path);
  if (self->old_path != NULL)
    {
      g_autofree char *old_path = paddock_visible_text_dup_label (self->old_path);

      return g_strdup_printf ("%s → %s", old_path, path);
    }

  return g_steal_pointer (&path);
}
