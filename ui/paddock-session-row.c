/* paddock-session-row.c — a session in the sidebar: name, agent, state
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gi18n.h>

#include "paddock-session-row.h"

/* The labels are bound to the item in the template; only the state pill's
 * colour (a style class), the boundary's shield and the row's accessible
 * name are set here. */
struct _PaddockSessionRow
{
  GtkWidget           parent_instance;

  PaddockSessionItem *item;
  char               *state_class;

  /* Template widgets */
  GtkLabel           *state_label;
  GtkImage           *boundary_badge;
  GtkLabel           *changes_label;
};

G_DEFINE_FINAL_TYPE (PaddockSessionRow, paddock_session_row, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_ITEM,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* A small shield before the agent: green when every requested layer of
 * the boundary is enforced, amber when some are, red when none is. */
static const char *
paddock_session_row_update_badge (PaddockSessionRow *self)
{
  static const char * const classes[] = { "enforced", "partial", "unenforced" };
  const char *status = self->item != NULL ? paddock_session_item_get_boundary_status (self->item) : NULL;
  GtkWidget *badge = GTK_WIDGET (self->boundary_badge);
  const char *icon = "security-medium-symbolic";
  const char *text = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (classes); i++)
    gtk_widget_remove_css_class (badge, classes[i]);

  if (g_strcmp0 (status, "enforced") == 0)
    {
      icon = "security-high-symbolic";
      text = _("Boundary enforced");
    }
  else if (g_strcmp0 (status, "partial") == 0)
    text = _("Boundary partly enforced");
  else if (g_strcmp0 (status, "unenforced") == 0)
    {
      icon = "security-low-symbolic";
      text = _("Boundary not enforced");
    }

  gtk_widget_set_visible (badge, text != NULL);
  if (text == NULL)
    return NULL;

  gtk_widget_add_css_class (badge, status);
  gtk_image_set_from_icon_name (self->boundary_badge, icon);
  gtk_widget_set_tooltip_text (badge, text);
  gtk_accessible_update_property (GTK_ACCESSIBLE (badge), GTK_ACCESSIBLE_PROPERTY_LABEL, text, -1);
  return text;
}

static void
paddock_session_row_update (PaddockSessionRow *self)
{
  const char *state = self->item != NULL ? paddock_session_item_get_state (self->item) : NULL;
  g_autofree char *label = NULL;
  const char *boundary;

  if (self->state_class != NULL)
    gtk_widget_remove_css_class (GTK_WIDGET (self->state_label), self->state_class);
  g_clear_pointer (&self->state_class, g_free);

  if (state != NULL)
    {
      self->state_class = g_strdup (state);
      gtk_widget_add_css_class (GTK_WIDGET (self->state_label), self->state_class);
    }

  boundary = paddock_session_row_update_badge (self);

  if (self->item == NULL)
    return;

  /* Translators: a session in the sidebar, e.g. "claude on paddock, claude, Running" */
  label = g_strdup_printf (_("%s, %s, %s"),
                           paddock_session_item_get_name (self->item),
                           paddock_session_item_get_agent (self->item),
                           paddock_session_item_get_state_label (self->item));
  if (boundary != NULL)
    {
      char *with_boundary = g_strdup_printf (_("%s, %s"), label, boundary);

      g_free (label);
      label = with_boundary;
    }
  if (paddock_session_item_get_n_changes (self->item) > 0)
    {
      guint n = paddock_session_item_get_n_changes (self->item);
      /* Translators: a session in the sidebar, then its pending changes */
      char *with_changes = g_strdup_printf (g_dngettext (NULL, "%s, %u change to review", "%s, %u changes to review", n),
                                            label, n);

      g_free (label);
      label = with_changes;
    }
  gtk_accessible_update_property (GTK_ACCESSIBLE (self),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, label,
                                  -1);
}

static void
item_notify_cb (PaddockSessionRow  *self,
                GParamSpec         *pspec,
                PaddockSessionItem *item)
{
  paddock_session_row_update (self);
}

static void
paddock_session_row_dispose (GObject *object)
{
  PaddockSessionRow *self = (PaddockSessionRow *)object;
  GtkWidget *child;

  gtk_widget_dispose_template (GTK_WIDGET (self), PADDOCK_TYPE_SESSION_ROW);
  /* The template's root box is not bound: unparent it too. */
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))))
    gtk_widget_unparent (child);

  if (self->item != NULL)
    g_signal_handlers_disconnect_by_func (self->item, item_notify_cb, self);
  g_clear_object (&self->item);
  g_clear_pointer (&self->state_class, g_free);

  G_OBJECT_CLASS (paddock_session_row_parent_class)->dispose (object);
}

static void
paddock_session_row_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  PaddockSessionRow *self = PADDOCK_SESSION_ROW (object);

  switch (prop_id)
    {
    case PROP_ITEM:
      g_value_set_object (value, self->item);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_session_row_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  PaddockSessionRow *self = PADDOCK_SESSION_ROW (object);

  switch (prop_id)
    {
    case PROP_ITEM:
      paddock_session_row_set_item (self, g_value_get_object (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_session_row_class_init (PaddockSessionRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = paddock_session_row_dispose;
  object_class->get_property = paddock_session_row_get_property;
  object_class->set_property = paddock_session_row_set_property;

  properties[PROP_ITEM] =
    g_param_spec_object ("item", NULL, NULL,
                         PADDOCK_TYPE_SESSION_ITEM,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/paddock/Paddock/paddock-session-row.ui");
  gtk_widget_class_bind_template_child (widget_class, PaddockSessionRow, state_label);
  gtk_widget_class_bind_template_child (widget_class, PaddockSessionRow, boundary_badge);
  gtk_widget_class_bind_template_child (widget_class, PaddockSessionRow, changes_label);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
paddock_session_row_init (PaddockSessionRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

/**
 * paddock_session_row_get_item:
 *
 * Returns: (transfer none) (nullable): the session shown
 */
PaddockSessionItem *
paddock_session_row_get_item (PaddockSessionRow *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ROW (self), NULL);

  return self->item;
}

void
paddock_session_row_set_item (PaddockSessionRow  *self,
                              PaddockSessionItem *item)
{
  g_return_if_fail (PADDOCK_IS_SESSION_ROW (self));
  g_return_if_fail (item == NULL || PADDOCK_IS_SESSION_ITEM (item));

  if (self->item == item)
    return;

  if (self->item != NULL)
    g_signal_handlers_disconnect_by_func (self->item, item_notify_cb, self);

  g_set_object (&self->item, item);

  if (self->item != NULL)
    g_signal_connect_object (self->item, "notify", G_CALLBACK (item_notify_cb), self, G_CONNECT_SWAPPED);

  paddock_session_row_update (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ITEM]);
}
