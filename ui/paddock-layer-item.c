/* paddock-layer-item.c — one layer of a session's safety boundary
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "paddock-layer-item.h"

/* One a{sv} of the Boundary property, as the Safety page shows it: the
 * daemon's layer name, a name for people, whether the profile asked for
 * it, what the kernel made of it and the evidence. Immutable: a new
 * Boundary makes new items. */
struct _PaddockLayerItem
{
  GObject   parent_instance;

  char     *layer;
  char     *title;
  char     *status;
  char     *evidence;
  gboolean  requested;
};

G_DEFINE_FINAL_TYPE (PaddockLayerItem, paddock_layer_item, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_LAYER,
  PROP_TITLE,
  PROP_REQUESTED,
  PROP_STATUS,
  PROP_STATUS_LABEL,
  PROP_EVIDENCE,
  PROP_PROBE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const struct {
  const char *layer;
  const char *title;
} layer_titles[] = {
  { "user-namespace", N_("User namespace") },
  { "pid-namespace", N_("Process namespace") },
  { "mount-view", N_("Mount view") },
  { "staging", N_("Staging") },
  { "no-new-privs", N_("No new privileges") },
  { "seccomp", N_("Seccomp") },
  { "landlock-fs", N_("Landlock (files)") },
  { "landlock-net", N_("Landlock (network)") },
  { "landlock-scope", N_("Landlock (scope)") },
  { "network", N_("Network") },
  { "cgroup", N_("Control group") },
  { "environment", N_("Environment") },
  { "exposures", N_("Folders from your home") },
  { "probe:write-outside", N_("Canary: write outside") },
  { "probe:hidden-path", N_("Canary: hidden path") },
  { "probe:abstract-socket", N_("Canary: abstract socket") },
  { "probe:signal-outside", N_("Canary: signal outside") },
  { "probe:connect-outside", N_("Canary: connect outside") },
};

/* A layer this version does not know keeps its own name; an unknown probe
 * reads "Canary: its name". */
static char *
make_title (const char *layer)
{
  for (guint i = 0; i < G_N_ELEMENTS (layer_titles); i++)
    if (g_str_equal (layer, layer_titles[i].layer))
      return g_strdup (_(layer_titles[i].title));

  if (g_str_has_prefix (layer, "probe:"))
    {
      g_autofree char *name = g_strdup (layer + strlen ("probe:"));

      g_strdelimit (name, "-_", ' ');
      return g_strdup_printf (_("Canary: %s"), name);
    }

  return g_strdup (layer);
}

/**
 * paddock_boundary_status_label:
 * @status: "enforced", "partial", "unenforced" or "not-requested"
 *
 * Returns: (transfer none): the status as a person reads it
 */
const char *
paddock_boundary_status_label (const char *status)
{
  if (g_strcmp0 (status, "enforced") == 0)
    return _("Enforced");
  if (g_strcmp0 (status, "partial") == 0)
    return _("Partial");
  if (g_strcmp0 (status, "unenforced") == 0)
    return _("Not enforced");
  if (g_strcmp0 (status, "not-requested") == 0)
    return _("Not requested");

  return status != NULL ? status : "";
}

static void
paddock_layer_item_finalize (GObject *object)
{
  PaddockLayerItem *self = (PaddockLayerItem *)object;

  g_clear_pointer (&self->layer, g_free);
  g_clear_pointer (&self->title, g_free);
  g_clear_pointer (&self->status, g_free);
  g_clear_pointer (&self->evidence, g_free);

  G_OBJECT_CLASS (paddock_layer_item_parent_class)->finalize (object);
}

static void
paddock_layer_item_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  PaddockLayerItem *self = PADDOCK_LAYER_ITEM (object);

  switch (prop_id)
    {
    case PROP_LAYER:
      g_value_set_string (value, self->layer);
      break;

    case PROP_TITLE:
      g_value_set_string (value, self->title);
      break;

    case PROP_REQUESTED:
      g_value_set_boolean (value, self->requested);
      break;

    case PROP_STATUS:
      g_value_set_string (value, self->status);
      break;

    case PROP_STATUS_LABEL:
      g_value_set_string (value, paddock_layer_item_get_status_label (self));
      break;

    case PROP_EVIDENCE:
      g_value_set_string (value, self->evidence);
      break;

    case PROP_PROBE:
      g_value_set_boolean (value, paddock_layer_item_is_probe (self));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_layer_item_class_init (PaddockLayerItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->finalize = paddock_layer_item_finalize;
  object_class->get_property = paddock_layer_item_get_property;

  properties[PROP_LAYER] = g_param_spec_string ("layer", NULL, NULL, NULL, flags);
  properties[PROP_TITLE] = g_param_spec_string ("title", NULL, NULL, NULL, flags);
  properties[PROP_REQUESTED] = g_param_spec_boolean ("requested", NULL, NULL, FALSE, flags);
  properties[PROP_STATUS] = g_param_spec_string ("status", NULL, NULL, NULL, flags);
  properties[PROP_STATUS_LABEL] = g_param_spec_string ("status-label", NULL, NULL, NULL, flags);
  properties[PROP_EVIDENCE] = g_param_spec_string ("evidence", NULL, NULL, NULL, flags);
  /**
   * PaddockLayerItem:probe:
   *
   * Whether the layer is a canary probe ("probe:NAME").
   */
  properties[PROP_PROBE] = g_param_spec_boolean ("probe", NULL, NULL, FALSE, flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
paddock_layer_item_init (PaddockLayerItem *self)
{
}

/**
 * paddock_layer_item_new:
 * @dict: one a{sv} of the Boundary property
 *
 * Returns: (transfer full): the layer
 */
PaddockLayerItem *
paddock_layer_item_new (GVariant *dict)
{
  PaddockLayerItem *self;
  const char *layer = NULL;
  const char *status = NULL;
  const char *evidence = NULL;
  gboolean requested = FALSE;

  g_return_val_if_fail (g_variant_is_of_type (dict, G_VARIANT_TYPE_VARDICT), NULL);

  g_variant_lookup (dict, "layer", "&s", &layer);
  g_variant_lookup (dict, "status", "&s", &status);
  g_variant_lookup (dict, "evidence", "&s", &evidence);
  g_variant_lookup (dict, "requested", "b", &requested);

  self = g_object_new (PADDOCK_TYPE_LAYER_ITEM, NULL);
  self->layer = g_strdup (layer != NULL ? layer : "?");
  self->title = make_title (self->layer);
  self->status = g_strdup (status != NULL ? status : (requested ? "unenforced" : "not-requested"));
  self->evidence = g_strdup (evidence != NULL ? evidence : "");
  self->requested = requested;

  return self;
}

const char *
paddock_layer_item_get_layer (PaddockLayerItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_LAYER_ITEM (self), NULL);
  return self->layer;
}

const char *
paddock_layer_item_get_title (PaddockLayerItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_LAYER_ITEM (self), NULL);
  return self->title;
}

gboolean
paddock_layer_item_get_requested (PaddockLayerItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_LAYER_ITEM (self), FALSE);
  return self->requested;
}

const char *
paddock_layer_item_get_status (PaddockLayerItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_LAYER_ITEM (self), NULL);
  return self->status;
}

const char *
paddock_layer_item_get_status_label (PaddockLayerItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_LAYER_ITEM (self), NULL);

  /* A canary is enforced when the forbidden action was blocked. */
  if (paddock_layer_item_is_probe (self))
    {
      if (g_strcmp0 (self->status, "enforced") == 0)
        return _("Blocked");
      if (g_strcmp0 (self->status, "unenforced") == 0)
        return _("Not blocked");
    }

  return paddock_boundary_status_label (self->status);
}

const char *
paddock_layer_item_get_evidence (PaddockLayerItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_LAYER_ITEM (self), NULL);
  return self->evidence;
}

gboolean
paddock_layer_item_is_probe (PaddockLayerItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_LAYER_ITEM (self), FALSE);
  return g_str_has_prefix (self->layer, "probe:");
}
