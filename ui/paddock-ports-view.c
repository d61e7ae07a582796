/* paddock-ports-view.c — a table of port leases with copy and open actions
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gi18n.h>

#include "paddock-lease-item.h"
#include "paddock-ports-view.h"
#include "paddock-window.h"


/* Shows any GListModel of PaddockLeaseItem: today every lease of the daemon,
 * later the leases of one session (a filter model in front). Rows are made
 * by the column view's factories; nothing here refills widgets by hand. */
struct _PaddockPortsView
{
  GtkWidget       parent_instance;

  GListModel     *model;
  /* The command the empty page offers: for one session's view, one that
   * ties the lease to that session. */
  char           *lease_command;

  /* Template widgets */
  GtkStack       *stack;
  GtkColumnView  *column_view;
  GtkNoSelection *selection;
  GtkLabel       *lease_command_label;
  GtkColumnViewColumn *session_column;
};

G_DEFINE_FINAL_TYPE (PaddockPortsView, paddock_ports_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_MODEL,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
paddock_ports_view_update_page (PaddockPortsView *self)
{
  gboolean empty = self->model == NULL || g_list_model_get_n_items (self->model) == 0;

  gtk_stack_set_visible_child_name (self->stack, empty ? "empty" : "leases");
}

static void
model_items_changed_cb (PaddockPortsView *self,
                        guint             position,
                        guint             removed,
                        guint             added,
                        GListModel       *model)
{
  paddock_ports_view_update_page (self);
}

static char *
lease_url (guint16 port)
{
  return g_strdup_printf ("http://127.0.0.1:%u", (guint)port);
}

static void
paddock_ports_view_copy_address_action (GtkWidget  *widget,
                                        const char *action_name,
                                        GVariant   *param)
{
  PaddockPortsView *self = PADDOCK_PORTS_VIEW (widget);
  g_autofree char *url = lease_url (g_variant_get_uint16 (param));
  g_autofree char *title = NULL;

  gdk_clipboard_set_text (gtk_widget_get_clipboard (widget), url);

  /* Translators: %s is an address such as http://127.0.0.1:20001 */
  title = g_strdup_printf (_("Copied %s"), url);
  paddock_window_toast_from (GTK_WIDGET (self), title);
}

static void
paddock_ports_view_open_address_action (GtkWidget  *widget,
                                        const char *action_name,
                                        GVariant   *param)
{
  g_autofree char *url = lease_url (g_variant_get_uint16 (param));
  GtkRoot *root = gtk_widget_get_root (widget);

  gtk_show_uri (GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL, url, GDK_CURRENT_TIME);
}

static void
paddock_ports_view_copy_command_action (GtkWidget  *widget,
                                        const char *action_name,
                                        GVariant   *param)
{
  gdk_clipboard_set_text (gtk_widget_get_clipboard (widget), PADDOCK_PORTS_VIEW (widget)->lease_command);
  paddock_window_toast_from (widget, _("Command copied"));
}

/* Factories */

static GtkWidget *
make_cell_label (void)
{
  return g_object_new (GTK_TYPE_LABEL,
                       "xalign", 0.0f,
                       "ellipsize", PANGO_ELLIPSIZE_END,
                       NULL);
}

static void
setup_label_cb (GtkSignalListItemFactory *factory,
                GtkListItem              *list_item,
                PaddockPortsView         *self)
{
  gtk_list_item_set_child (list_item, make_cell_label ());
}

static void
setup_dim_label_cb (GtkSignalListItemFactory *factory,
                    GtkListItem              *list_item,
                    PaddockPortsView         *self)
{
  GtkWidget *label = make_cell_label ();

  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_MIDDLE);
  gtk_widget_add_css_class (label, "dim-label");
  gtk_list_item_set_child (list_item, label);
}

static void
setup_port_cb (GtkSignalListItemFactory *factory,
               GtkListItem              *list_item,
               PaddockPortsView         *self)
{
  GtkWidget *label = make_cell_label ();

  gtk_widget_add_css_class (label, "numeric");
  gtk_widget_add_css_class (label, "lease-port");
  gtk_label_set_selectable (GTK_LABEL (label), FALSE);
  gtk_list_item_set_child (list_item, label);
}

static void
setup_state_cb (GtkSignalListItemFactory *factory,
                GtkListItem              *list_item,
                PaddockPortsView         *self)
{
  GtkWidget *label = g_object_new (GTK_TYPE_LABEL,
                                   "halign", GTK_ALIGN_START,
                                   "valign", GTK_ALIGN_CENTER,
                                   NULL);

  gtk_widget_add_css_class (label, "lease-state");
  gtk_list_item_set_child (list_item, label);
}

static GtkWidget *
make_row_button (const char *icon_name,
                 const char *action_name,
                 const char *tooltip)
{
  GtkWidget *button = g_object_new (GTK_TYPE_BUTTON,
                                    "icon-name", icon_name,
                                    "tooltip-text", tooltip,
                                    "valign", GTK_ALIGN_CENTER,
                                    NULL);

  /* A target of the right type first, then the action: the real port comes
   * with bind. */
  gtk_actionable_set_action_target (GTK_ACTIONABLE (button), "q", (guint16)0);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (button), action_name);
  gtk_widget_add_css_class (button, "flat");
  gtk_widget_add_css_class (button, "circular");

  return button;
}

static void
setup_actions_cb (GtkSignalListItemFactory *factory,
                  GtkListItem              *list_item,
                  PaddockPortsView         *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);

  gtk_widget_set_halign (box, GTK_ALIGN_END);
  gtk_box_append (GTK_BOX (box),
                  make_row_button ("edit-copy-symbolic", "ports.copy-address",
                                   _("Copy Address")));
  gtk_box_append (GTK_BOX (box),
                  make_row_button ("adw-external-link-symbolic", "ports.open-address",
                                   _("Open in Browser")));
  gtk_list_item_set_child (list_item, box);
  /* The row itself has nothing to activate; its buttons take the focus. */
  gtk_list_item_set_activatable (list_item, FALSE);
}

static void
bind_port_cb (GtkSignalListItemFactory *factory,
              GtkListItem              *list_item,
              PaddockPortsView         *self)
{
  PaddockLeaseItem *lease = gtk_list_item_get_item (list_item);
  GtkLabel *label = GTK_LABEL (gtk_list_item_get_child (list_item));
  char text[8];

  g_snprintf (text, sizeof text, "%u", (guint)paddock_lease_item_get_port (lease));
  gtk_label_set_text (label, text);
}

static void
bind_name_cb (GtkSignalListItemFactory *factory,
              GtkListItem              *list_item,
              PaddockPortsView         *self)
{
  PaddockLeaseItem *lease = gtk_list_item_get_item (list_item);
  GtkLabel *label = GTK_LABEL (gtk_list_item_get_child (list_item));

  gtk_label_set_text (label, paddock_lease_item_get_name (lease));
}

static void
set_text_or_dash (GtkLabel   *label,
                  const char *text)
{
  /* An em dash marks "none", and is read as such by screen readers. */
  gtk_label_set_text (label, text != NULL && text[0] != '\0' ? text : "—");
  gtk_widget_set_tooltip_text (GTK_WIDGET (label),
                               text != NULL && text[0] != '\0' ? text : NULL);
  gtk_accessible_update_property (GTK_ACCESSIBLE (label),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  text != NULL && text[0] != '\0' ? text : _("None"),
                                  -1);
}

static void
bind_owner_cb (GtkSignalListItemFactory *factory,
               GtkListItem              *list_item,
               PaddockPortsView         *self)
{
  PaddockLeaseItem *lease = gtk_list_item_get_item (list_item);
  GtkLabel *label = GTK_LABEL (gtk_list_item_get_child (list_item));

  set_text_or_dash (label, paddock_lease_item_get_owner_label (lease));
  gtk_widget_set_tooltip_text (GTK_WIDGET (label), paddock_lease_item_get_owner (lease));
}

static void
bind_session_cb (GtkSignalListItemFactory *factory,
                 GtkListItem              *list_item,
                 PaddockPortsView         *self)
{
  PaddockLeaseItem *lease = gtk_list_item_get_item (list_item);
  GtkLabel *label = GTK_LABEL (gtk_list_item_get_child (list_item));

  set_text_or_dash (label, paddock_lease_item_get_session (lease));
}

static void
bind_state_cb (GtkSignalListItemFactory *factory,
               GtkListItem              *list_item,
               PaddockPortsView         *self)
{
  static const struct {
    const char *state;
    const char *css_class;
    const char *label;
    const char *tooltip;
  } states[] = {
    { "held", "held", N_("Held"), N_("The daemon holds this port: no other program can bind it") },
    { "in-use", "in-use", N_("In Use"),
      N_("The daemon restarted while its owner's program kept the port's socket open; "
         "no other program can bind it, and the daemon takes it back when it closes") },
    { "reserved", "reserved", N_("Reserved"),
      N_("Held for this session until a port is leased for it while it runs; "
         "nothing reaches it from this computer until then") },
    /* Last: what anything unknown is shown as. */
    { "lost", "lost", N_("Lost"), N_("Another program took this port while the daemon was stopped") },
  };
  PaddockLeaseItem *lease = gtk_list_item_get_item (list_item);
  GtkWidget *label = gtk_list_item_get_child (list_item);
  const char *state = paddock_lease_item_get_state (lease);
  guint shown = G_N_ELEMENTS (states) - 1;

  /* A reserved port the daemon holds is shown as reserved; one that is
   * lost or in use still says so. */
  if (g_strcmp0 (state, "held") == 0 && paddock_lease_item_is_reserved (lease))
    state = "reserved";

  for (guint i = 0; i < G_N_ELEMENTS (states); i++)
    if (g_strcmp0 (state, states[i].state) == 0)
      shown = i;

  for (guint i = 0; i < G_N_ELEMENTS (states); i++)
    gtk_widget_remove_css_class (label, states[i].css_class);

  gtk_label_set_text (GTK_LABEL (label), _(states[shown].label));
  gtk_widget_set_tooltip_text (label, _(states[shown].tooltip));
  gtk_widget_add_css_class (label, states[shown].css_class);
}

static void
bind_actions_cb (GtkSignalListItemFactory *factory,
                 GtkListItem              *list_item,
                 PaddockPortsView         *self)
{
  PaddockLeaseItem *lease = gtk_list_item_get_item (list_item);
  GtkWidget *box = gtk_list_item_get_child (list_item);
  GtkWidget *copy_button = gtk_widget_get_first_child (box);
  GtkWidget *open_button = gtk_widget_get_next_sibling (copy_button);
  guint16 port = paddock_lease_item_get_port (lease);
  g_autofree char *copy_label = NULL;
  g_autofree char *open_label = NULL;

  gtk_actionable_set_action_target (GTK_ACTIONABLE (copy_button), "q", port);
  gtk_actionable_set_action_target (GTK_ACTIONABLE (open_button), "q", port);
  /* Nothing to open at a reserved port's address. */
  gtk_widget_set_visible (box, !paddock_lease_item_is_reserved (lease));

  /* Translators: %u is a port number */
  copy_label = g_strdup_printf (_("Copy address of port %u"), (guint)port);
  /* Translators: %u is a port number */
  open_label = g_strdup_printf (_("Open port %u in a browser"), (guint)port);
  gtk_accessible_update_property (GTK_ACCESSIBLE (copy_button),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, copy_label,
                                  -1);
  gtk_accessible_update_property (GTK_ACCESSIBLE (open_button),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, open_label,
                                  -1);
}

/* GObject */

static void
paddock_ports_view_dispose (GObject *object)
{
  PaddockPortsView *self = (PaddockPortsView *)object;

  gtk_widget_dispose_template (GTK_WIDGET (self), PADDOCK_TYPE_PORTS_VIEW);

  g_clear_object (&self->model);
  g_clear_pointer (&self->lease_command, g_free);

  G_OBJECT_CLASS (paddock_ports_view_parent_class)->dispose (object);
}

static void
paddock_ports_view_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  PaddockPortsView *self = PADDOCK_PORTS_VIEW (object);

  switch (prop_id)
    {
    case PROP_MODEL:
      g_value_set_object (value, self->model);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_ports_view_set_property (GObject      *object,
                                 guint         prop_id,
                                 const GValue *value,
                                 GParamSpec   *pspec)
{
  PaddockPortsView *self = PADDOCK_PORTS_VIEW (object);

  switch (prop_id)
    {
    case PROP_MODEL:
      paddock_ports_view_set_model (self, g_value_get_object (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_ports_view_class_init (PaddockPortsViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = paddock_ports_view_dispose;
  object_class->get_property = paddock_ports_view_get_property;
  object_class->set_property = paddock_ports_view_set_property;

  /**
   * PaddockPortsView:model:
   *
   * A #GListModel of #PaddockLeaseItem.
   */
  properties[PROP_MODEL] =
    g_param_spec_object ("model", NULL, NULL,
                         G_TYPE_LIST_MODEL,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/paddock/Paddock/paddock-ports-view.ui");
  gtk_widget_class_bind_template_child (widget_class, PaddockPortsView, stack);
  gtk_widget_class_bind_template_child (widget_class, PaddockPortsView, column_view);
  gtk_widget_class_bind_template_child (widget_class, PaddockPortsView, selection);
  gtk_widget_class_bind_template_child (widget_class, PaddockPortsView, lease_command_label);
  gtk_widget_class_bind_template_child (widget_class, PaddockPortsView, session_column);
  gtk_widget_class_bind_template_callback (widget_class, setup_label_cb);
  gtk_widget_class_bind_template_callback (widget_class, setup_dim_label_cb);
  gtk_widget_class_bind_template_callback (widget_class, setup_port_cb);
  gtk_widget_class_bind_template_callback (widget_class, setup_state_cb);
  gtk_widget_class_bind_template_callback (widget_class, setup_actions_cb);
  gtk_widget_class_bind_template_callback (widget_class, bind_port_cb);
  gtk_widget_class_bind_template_callback (widget_class, bind_name_cb);
  gtk_widget_class_bind_template_callback (widget_class, bind_owner_cb);
  gtk_widget_class_bind_template_callback (widget_class, bind_session_cb);
  gtk_widget_class_bind_template_callback (widget_class, bind_state_cb);
  gtk_widget_class_bind_template_callback (widget_class, bind_actions_cb);

  gtk_widget_class_install_action (widget_class, "ports.copy-address", "q",
                                   paddock_ports_view_copy_address_action);
  gtk_widget_class_install_action (widget_class, "ports.open-address", "q",
                                   paddock_ports_view_open_address_action);
  gtk_widget_class_install_action (widget_class, "ports.copy-command", NULL,
                                   paddock_ports_view_copy_command_action);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "portsview");
}

static void
paddock_ports_view_init (PaddockPortsView *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  self->lease_command = g_strdup ("paddockctl ports lease --name web");
  paddock_ports_view_update_page (self);
}

GtkWidget *
paddock_ports_view_new (void)
{
  return g_object_new (PADDOCK_TYPE_PORTS_VIEW, NULL);
}

/**
 * paddock_ports_view_get_model:
 *
 * Returns: (transfer none) (nullable): the leases shown
 */
GListModel *
paddock_ports_view_get_model (PaddockPortsView *self)
{
  g_return_val_if_fail (PADDOCK_IS_PORTS_VIEW (self), NULL);

  return self->model;
}

void
paddock_ports_view_set_model (PaddockPortsView *self,
                              GListModel       *model)
{
  g_return_if_fail (PADDOCK_IS_PORTS_VIEW (self));
  g_return_if_fail (model == NULL || G_IS_LIST_MODEL (model));

  if (self->model == model)
    return;

  if (self->model != NULL)
    g_signal_handlers_disconnect_by_func (self->model, model_items_changed_cb, self);

  g_set_object (&self->model, model);

  if (self->model != NULL)
    g_signal_connect_object (self->model,
                             "items-changed",
                             G_CALLBACK (model_items_changed_cb),
                             self,
                             G_CONNECT_SWAPPED);

  gtk_no_selection_set_model (self->selection, self->model);
  paddock_ports_view_update_page (self);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MODEL]);
}

/**
 * paddock_ports_view_set_session:
 * @session_id: (nullable): the session whose leases the model holds
 *
 * Makes this the view of one session's leases: no session column (they
 * are all its), and the empty page tells how to lease a port for it.
 */
void
paddock_ports_view_set_session (PaddockPortsView *self,
                                const char       *session_id)
{
  g_return_if_fail (PADDOCK_IS_PORTS_VIEW (self));

  g_free (self->lease_command);
  if (session_id != NULL && *session_id != '\0')
    self->lease_command = g_strdup_printf ("paddockctl ports lease --session %s --name web", session_id);
  else
    self->lease_command = g_strdup ("paddockctl ports lease --name web");
  gtk_label_set_label (self->lease_command_label, self->lease_command);
  gtk_column_view_column_set_visible (self->session_column, session_id == NULL || *session_id == '\0');
}
