/* paddock-session-view.c — one session: terminal, changes, safety and info views
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "paddock-changes-view.h"
#include "paddock-lease-item.h"
#include "paddock-network-view.h"
#include "paddock-ports-view.h"
#include "paddock-processes-view.h"
#include "paddock-safety-view.h"
#include "paddock-session-view.h"
#include "paddock-terminal-view.h"

/* Everything about one session, in an AdwViewStack whose switcher lives
 * in the window's header bar. The template binds the views and the info
 * rows to the item; nothing is copied by hand. */
struct _PaddockSessionView
{
  GtkWidget           parent_instance;

  PaddockSessionItem *item;

  /* Template widgets */
  AdwViewStack       *view_stack;
  GtkWidget          *terminal_view;
  GtkWidget          *changes_view;
  GtkWidget          *safety_view;
  GtkWidget          *processes_view;
  GtkWidget          *network_view;
  GtkWidget          *ports_view;
  AdwViewStackPage   *ports_page;

  /* The daemon's leases, and those of this session in front of them. */
  GtkFilterListModel *session_leases;
};

G_DEFINE_FINAL_TYPE (PaddockSessionView, paddock_session_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_ITEM,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* The terminal takes the keyboard when it is the view shown. */
static gboolean
paddock_session_view_grab_focus (GtkWidget *widget)
{
  PaddockSessionView *self = PADDOCK_SESSION_VIEW (widget);

  if (g_strcmp0 (adw_view_stack_get_visible_child_name (self->view_stack), "terminal") == 0)
    return gtk_widget_grab_focus (self->terminal_view);

  return gtk_widget_child_focus (GTK_WIDGET (self->view_stack), GTK_DIR_TAB_FORWARD);
}

static void
paddock_session_view_dispose (GObject *object)
{
  PaddockSessionView *self = (PaddockSessionView *)object;
  GtkWidget *child;

  gtk_widget_dispose_template (GTK_WIDGET (self), PADDOCK_TYPE_SESSION_VIEW);
  /* The template's root box is not bound: unparent it too. */
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))))
    gtk_widget_unparent (child);
  g_clear_object (&self->item);
  g_clear_object (&self->session_leases);

  G_OBJECT_CLASS (paddock_session_view_parent_class)->dispose (object);
}

static void
paddock_session_view_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  PaddockSessionView *self = PADDOCK_SESSION_VIEW (object);

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
paddock_session_view_set_property (GObject      *object,
                                   guint         prop_id,
                                   const GValue *value,
                                   GParamSpec   *pspec)
{
  PaddockSessionView *self = PADDOCK_SESSION_VIEW (object);

  switch (prop_id)
    {
    case PROP_ITEM:
      self->item = g_value_dup_object (value);
      /* Wakes the template's bindings, made before the item was set. */
      g_object_notify_by_pspec (object, pspec);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_session_view_class_init (PaddockSessionViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = paddock_session_view_dispose;
  object_class->get_property = paddock_session_view_get_property;
  object_class->set_property = paddock_session_view_set_property;

  widget_class->grab_focus = paddock_session_view_grab_focus;

  properties[PROP_ITEM] =
    g_param_spec_object ("item", NULL, NULL,
                         PADDOCK_TYPE_SESSION_ITEM,
                         (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (PADDOCK_TYPE_SESSION_ITEM);
  g_type_ensure (PADDOCK_TYPE_TERMINAL_VIEW);
  g_type_ensure (PADDOCK_TYPE_CHANGES_VIEW);
  g_type_ensure (PADDOCK_TYPE_SAFETY_VIEW);
  g_type_ensure (PADDOCK_TYPE_PROCESSES_VIEW);
  g_type_ensure (PADDOCK_TYPE_PORTS_VIEW);
  g_type_ensure (PADDOCK_TYPE_NETWORK_VIEW);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/paddock/Paddock/paddock-session-view.ui");
  gtk_widget_class_bind_template_child (widget_class, PaddockSessionView, view_stack);
  gtk_widget_class_bind_template_child (widget_class, PaddockSessionView, terminal_view);
  gtk_widget_class_bind_template_child (widget_class, PaddockSessionView, changes_view);
  gtk_widget_class_bind_template_child (widget_class, PaddockSessionView, safety_view);
  gtk_widget_class_bind_template_child (widget_class, PaddockSessionView, processes_view);
  gtk_widget_class_bind_template_child (widget_class, PaddockSessionView, network_view);
  gtk_widget_class_bind_template_child (widget_class, PaddockSessionView, ports_view);
  gtk_widget_class_bind_template_child (widget_class, PaddockSessionView, ports_page);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void
paddock_session_view_init (PaddockSessionView *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

/**
 * paddock_session_view_new:
 *
 * Returns: (transfer floating): a view of @item
 */
GtkWidget *
paddock_session_view_new (PaddockSessionItem *item)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_ITEM (item), NULL);

  return g_object_new (PADDOCK_TYPE_SESSION_VIEW, "item", item, NULL);
}

/**
 * paddock_session_view_get_item:
 *
 * Returns: (transfer none): the session shown
 */
PaddockSessionItem *
paddock_session_view_get_item (PaddockSessionView *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_VIEW (self), NULL);

  return self->item;
}

/**
 * paddock_session_view_get_view_stack:
 *
 * Returns: (transfer none): the stack of views, for a switcher
 */
AdwViewStack *
paddock_session_view_get_view_stack (PaddockSessionView *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_VIEW (self), NULL);

  return self->view_stack;
}

static gboolean
lease_is_the_sessions (gpointer item,
                       gpointer user_data)
{
  PaddockSessionView *self = user_data;

  return self->item != NULL &&
         g_strcmp0 (paddock_lease_item_get_session (PADDOCK_LEASE_ITEM (item)),
                    paddock_session_item_get_id (self->item)) == 0;
}

/* The badge counts the ports the session's programs can be reached at: its
 * reserved ports are listed on the page, but nothing reaches them yet. */
static void
session_leases_changed_cb (PaddockSessionView *self)
{
  guint n_items = g_list_model_get_n_items (G_LIST_MODEL (self->session_leases));
  guint n = 0;

  for (guint i = 0; i < n_items; i++)
    {
      g_autoptr(PaddockLeaseItem) lease = g_list_model_get_item (G_LIST_MODEL (self->session_leases), i);

      if (!paddock_lease_item_is_reserved (lease))
        n++;
    }
  adw_view_stack_page_set_badge_number (self->ports_page, n);
}

/**
 * paddock_session_view_set_leases:
 * @leases: (nullable): every lease of the daemon, as #PaddockLeaseItem
 *
 * The Ports page shows those of @leases tied to this session.
 */
void
paddock_session_view_set_leases (PaddockSessionView *self,
                                 GListModel         *leases)
{
  g_return_if_fail (PADDOCK_IS_SESSION_VIEW (self));
  g_return_if_fail (leases == NULL || G_IS_LIST_MODEL (leases));

  if (self->session_leases == NULL)
    {
      GtkCustomFilter *filter = gtk_custom_filter_new (lease_is_the_sessions, self, NULL);

      self->session_leases = gtk_filter_list_model_new (NULL, GTK_FILTER (filter));
      g_signal_connect_object (self->session_leases, "items-changed",
                               G_CALLBACK (session_leases_changed_cb), self, G_CONNECT_SWAPPED);
      paddock_ports_view_set_model (PADDOCK_PORTS_VIEW (self->ports_view), G_LIST_MODEL (self->session_leases));
    }
  gtk_filter_list_model_set_model (self->session_leases, leases);
  paddock_ports_view_set_session (PADDOCK_PORTS_VIEW (self->ports_view),
                                  self->item != NULL ? paddock_session_item_get_id (self->item) : NULL);
}
