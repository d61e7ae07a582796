/* paddock-safety-view.c — a session's safety boundary, layer by layer
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gi18n.h>

#include "paddock-layer-item.h"
#include "paddock-safety-view.h"

/* The Boundary property of a session: a header that sums it up (every
 * requested layer enforced, or how many are not), then one expander row
 * per layer with a status pill and the evidence, then the canary probes.
 * The rows are made from the item's boundary model (split by two filter
 * models), so a new Boundary from the daemon remakes them. */
struct _PaddockSafetyView
{
  GtkWidget           parent_instance;

  PaddockSessionItem *item;
  GtkFilterListModel *layers_model;
  GtkFilterListModel *probes_model;

  /* Template widgets */
  GtkWidget          *page;
  GtkImage           *summary_icon;
  GtkLabel           *profile_badge;
  GtkLabel           *summary_title;
  GtkLabel           *summary_description;
  GtkListBox         *layers_list;
  GtkListBox         *probes_list;
  GtkWidget          *probes_group;
  GtkWidget          *layers_group;
  GtkWidget          *exposed_group;
  AdwActionRow       *workspace_row;
  AdwActionRow       *home_row;
  AdwActionRow       *network_row;

  /* The session's proxy, watched for its allowlist. */
  PaddockIpcSession1 *watched_proxy;
};

G_DEFINE_FINAL_TYPE (PaddockSafetyView, paddock_safety_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_ITEM,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const char * const status_classes[] = { "enforced", "partial", "unenforced", "not-requested" };

/* The profile badge for each known profile: its style class (style.css),
 * its text and its accessible name. "strict-unverified" is the strict
 * profile before its Boundary says every layer is enforced. */
static const struct {
  const char *css_class;
  const char *label;
  const char *accessible;
} profile_badges[] = {
  { "strict", N_("Strict"), N_("Profile: strict, every layer verified enforced") },
  { "strict-unverified", N_("Strict · Not Verified Yet"), N_("Profile: strict, its layers not verified yet") },
  { "safe", N_("Safe"), N_("Profile: safe") },
  { "host", N_("Host · No Isolation"), N_("Profile: host, no isolation") },
};

static void
set_status_class (GtkWidget  *widget,
                  const char *status)
{
  for (guint i = 0; i < G_N_ELEMENTS (status_classes); i++)
    gtk_widget_remove_css_class (widget, status_classes[i]);
  if (status != NULL && g_strv_contains ((const char * const *)status_classes, status))
    gtk_widget_add_css_class (widget, status);
}

/* Rows are made once per layer item: items never change, a new Boundary
 * brings new ones. */
static GtkWidget *
create_layer_row (gpointer item,
                  gpointer user_data)
{
  PaddockLayerItem *layer = PADDOCK_LAYER_ITEM (item);
  const char *title = paddock_layer_item_get_title (layer);
  const char *status_label = paddock_layer_item_get_status_label (layer);
  const char *evidence = paddock_layer_item_get_evidence (layer);
  g_autofree char *row_label = NULL;
  g_autofree char *pill_label = NULL;
  GtkWidget *row;
  GtkWidget *pill;
  GtkWidget *evidence_label;

  row = adw_expander_row_new ();
  gtk_widget_set_name (row, paddock_layer_item_get_layer (layer));
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_preferences_row_set_use_underline (ADW_PREFERENCES_ROW (row), FALSE);
  if (!paddock_layer_item_get_requested (layer))
    adw_expander_row_set_subtitle (ADW_EXPANDER_ROW (row), _("Not requested by the profile"));
  g_object_set_data_full (G_OBJECT (row), "paddock-layer-item", g_object_ref (layer), g_object_unref);

  pill = gtk_label_new (status_label);
  gtk_widget_set_valign (pill, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (pill, "state-pill");
  gtk_widget_add_css_class (pill, "boundary-pill");
  set_status_class (pill, paddock_layer_item_get_status (layer));
  pill_label = g_strdup_printf (_("Status: %s"), status_label);
  gtk_accessible_update_property (GTK_ACCESSIBLE (pill), GTK_ACCESSIBLE_PROPERTY_LABEL, pill_label, -1);
  adw_expander_row_add_action (ADW_EXPANDER_ROW (row), pill);

  evidence_label = gtk_label_new (*evidence != '\0' ? evidence : _("No evidence reported"));
  gtk_label_set_selectable (GTK_LABEL (evidence_label), TRUE);
  gtk_label_set_wrap (GTK_LABEL (evidence_label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (evidence_label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_xalign (GTK_LABEL (evidence_label), 0);
  gtk_widget_set_margin_start (evidence_label, 12);
  gtk_widget_set_margin_end (evidence_label, 12);
  gtk_widget_set_margin_top (evidence_label, 9);
  gtk_widget_set_margin_bottom (evidence_label, 9);
  gtk_widget_add_css_class (evidence_label, "monospace");
  gtk_widget_add_css_class (evidence_label, "caption");
  gtk_widget_add_css_class (evidence_label, "boundary-evidence");
  gtk_accessible_update_property (GTK_ACCESSIBLE (evidence_label),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, _("Evidence"),
                                  GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, evidence,
                                  -1);
  adw_expander_row_add_row (ADW_EXPANDER_ROW (row), evidence_label);

  /* "Seccomp: Enforced", read out before the row is expanded. */
  row_label = paddock_layer_item_get_requested (layer)
                ? g_strdup_printf (_("%s: %s"), title, status_label)
                : g_strdup_printf (_("%s: %s, not requested"), title, status_label);
  gtk_accessible_update_property (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_LABEL, row_label, -1);

  return row;
}

/* The profile as a pill at the top of the page. "Strict" is shown as
 * such only once the daemon's Boundary says every layer is enforced (a
 * strict session refuses to run otherwise, so until then it is only
 * being checked); "host" is marked as the one that isolates nothing. */
static void
paddock_safety_view_update_badge (PaddockSafetyView *self,
                                  const char        *profile,
                                  const char        *status)
{
  GtkWidget *badge = GTK_WIDGET (self->profile_badge);
  const char *key = profile;
  g_autofree char *other_accessible = NULL;
  const char *label;
  const char *accessible;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (profile_badges); i++)
    gtk_widget_remove_css_class (badge, profile_badges[i].css_class);

  if (profile == NULL)
    {
      gtk_widget_set_visible (badge, FALSE);
      return;
    }

  if (g_str_equal (profile, "strict") && g_strcmp0 (status, "enforced") != 0)
    key = "strict-unverified";
  for (i = 0; i < G_N_ELEMENTS (profile_badges); i++)
    if (g_str_equal (key, profile_badges[i].css_class))
      break;

  if (i < G_N_ELEMENTS (profile_badges))
    {
      label = _(profile_badges[i].label);
      accessible = _(profile_badges[i].accessible);
      gtk_widget_add_css_class (badge, profile_badges[i].css_class);
    }
  else
    {
      label = profile;
      /* Translators: %s is the name of a session profile */
      accessible = other_accessible = g_strdup_printf (_("Profile: %s"), profile);
    }

  gtk_label_set_label (self->profile_badge, label);
  gtk_widget_set_tooltip_text (badge, accessible);
  gtk_accessible_update_property (GTK_ACCESSIBLE (badge), GTK_ACCESSIBLE_PROPERTY_LABEL, accessible, -1);
  gtk_widget_set_visible (badge, TRUE);
}

static void proxy_allowlist_cb (PaddockSafetyView *self);

static PaddockLayerItem *
find_layer (GListModel *boundary,
            const char *name)
{
  for (guint i = 0; boundary != NULL && i < g_list_model_get_n_items (boundary); i++)
    {
      g_autoptr(PaddockLayerItem) layer = g_list_model_get_item (boundary, i);

      if (g_strcmp0 (paddock_layer_item_get_layer (layer), name) == 0)
        return g_steal_pointer (&layer);
    }
  return NULL;
}

/* What the agent can reach, in words: the project folder and where its
 * writes go, the folders of HOME shown inside (the exposures layer's
 * evidence), the network and, through the proxy, the allowlist. */
static void
paddock_safety_view_update_exposed (PaddockSafetyView *self)
{
  PaddockIpcSession1 *proxy = self->item != NULL ? paddock_session_item_get_proxy (self->item) : NULL;
  const char *workspace = self->item != NULL ? paddock_session_item_get_workspace (self->item) : NULL;
  const char *staging = self->item != NULL ? paddock_session_item_get_staging (self->item) : NULL;
  const char *profile = self->item != NULL ? paddock_session_item_get_profile (self->item) : NULL;
  const char *network = self->item != NULL ? paddock_session_item_get_network_mode (self->item) : NULL;
  g_autoptr(PaddockLayerItem) exposures = NULL;
  g_autofree char *workspace_text = NULL;
  g_autofree char *network_text = NULL;
  const char *home_text;

  if (proxy != self->watched_proxy)
    {
      if (self->watched_proxy != NULL)
        g_signal_handlers_disconnect_by_func (self->watched_proxy, proxy_allowlist_cb, self);
      g_set_object (&self->watched_proxy, proxy);
      if (proxy != NULL)
        g_signal_connect_object (proxy, "notify::allowed-domains", G_CALLBACK (proxy_allowlist_cb), self,
                                 G_CONNECT_SWAPPED);
    }

  if (g_strcmp0 (staging, "overlay") == 0 || g_strcmp0 (staging, "copy") == 0)
    /* Translators: a folder, then where the agent's writes go */
    workspace_text = g_strdup_printf (_("%s\nWrites are staged for your review"), workspace);
  else if (g_strcmp0 (staging, "none") == 0)
    workspace_text = g_strdup_printf (_("%s\nWrites go straight to the folder"), workspace);
  else
    workspace_text = g_strdup (workspace != NULL ? workspace : "");
  adw_action_row_set_subtitle (self->workspace_row, workspace_text);

  exposures = find_layer (self->item != NULL ? paddock_session_item_get_boundary (self->item) : NULL, "exposures");
  if (g_strcmp0 (profile, "host") == 0)
    home_text = _("All of them: the host profile sees your whole home");
  else if (exposures == NULL)
    home_text = _("Not known yet");
  else if (!paddock_layer_item_get_requested (exposures))
    home_text = _("None: the session's home is empty");
  else
    home_text = paddock_layer_item_get_evidence (exposures);
  adw_action_row_set_subtitle (self->home_row, home_text);

  /* The proxy's row names the domains it allows; the others say what the
   * mode means, in the New Session dialog's words. */
  if (g_strcmp0 (network, "proxy") == 0)
    {
      const char * const *domains = proxy != NULL ? paddock_ipc_session1_get_allowed_domains (proxy) : NULL;
      g_autofree char *joined = domains != NULL && domains[0] != NULL
                                  ? g_strjoinv (", ", (char **) domains) : NULL;

      network_text = joined != NULL
                       /* Translators: %s is the proxy's allowlist, e.g. "pypi.org, *.github.com" */
                       ? g_strdup_printf (_("Only through the proxy, to %s"), joined)
                       : g_strdup (_("Only through the proxy, which allows nothing"));
    }
  else if (paddock_session_item_describe_network_mode (network) != NULL)
    network_text = g_strdup (paddock_session_item_describe_network_mode (network));
  else
    network_text = g_strdup (_("Not known yet"));
  adw_action_row_set_subtitle (self->network_row, network_text);

  gtk_widget_set_visible (self->exposed_group, self->item != NULL);
}

static void
proxy_allowlist_cb (PaddockSafetyView *self)
{
  paddock_safety_view_update_exposed (self);
}

static void
paddock_safety_view_update (PaddockSafetyView *self)
{
  const char *status = NULL;
  const char *profile = NULL;
  g_autofree char *title = NULL;
  g_autoptr(GString) description = g_string_new (NULL);
  const char *icon = "security-medium-symbolic";
  guint n_unenforced = 0;
  guint n_layers = 0;
  guint n_requested = 0;
  GListModel *boundary = NULL;

  if (self->item != NULL)
    {
      status = paddock_session_item_get_boundary_status (self->item);
      profile = paddock_session_item_get_profile (self->item);
      n_unenforced = paddock_session_item_get_n_unenforced (self->item);
      boundary = paddock_session_item_get_boundary (self->item);
      n_layers = g_list_model_get_n_items (boundary);
      for (guint i = 0; i < n_layers; i++)
        {
          g_autoptr(PaddockLayerItem) layer = g_list_model_get_item (boundary, i);

          n_requested += paddock_layer_item_get_requested (layer);
        }
    }

  if (status == NULL)
    {
      title = g_strdup (_("The boundary is not known yet"));
      g_string_append (description, _("The daemon reports it once the session has started."));
    }
  else if (g_str_equal (status, "enforced"))
    {
      icon = "security-high-symbolic";
      title = g_strdup (_("Every requested layer is enforced"));
    }
  else if (n_requested == 0)
    {
      icon = "security-low-symbolic";
      title = g_strdup (_("Nothing is enforced"));
      g_string_append (description,
                       _("The agent runs as you, with your files, processes and network."));
    }
  else
    {
      icon = g_str_equal (status, "partial") ? "security-medium-symbolic" : "security-low-symbolic";
      title = g_strdup_printf (g_dngettext (NULL,
                                            "%u requested layer is not enforced",
                                            "%u requested layers are not enforced",
                                            n_unenforced),
                               n_unenforced);
    }

  /* The profile is the badge above, the network a row below. */

  paddock_safety_view_update_badge (self, profile, status);
  paddock_safety_view_update_exposed (self);
  gtk_image_set_from_icon_name (self->summary_icon, icon);
  set_status_class (GTK_WIDGET (self->summary_icon), status);
  gtk_label_set_label (self->summary_title, title);
  gtk_label_set_label (self->summary_description, description->str);
  gtk_widget_set_visible (GTK_WIDGET (self->summary_description), description->len > 0);

  gtk_widget_set_visible (self->layers_group,
                          g_list_model_get_n_items (G_LIST_MODEL (self->layers_model)) > 0);
  gtk_widget_set_visible (self->probes_group,
                          g_list_model_get_n_items (G_LIST_MODEL (self->probes_model)) > 0);
}

static void
item_notify_cb (PaddockSafetyView  *self,
                GParamSpec         *pspec,
                PaddockSessionItem *item)
{
  paddock_safety_view_update (self);
}

static void
model_items_changed_cb (PaddockSafetyView *self,
                        guint              position,
                        guint              removed,
                        guint              added,
                        GListModel        *model)
{
  paddock_safety_view_update (self);
}

static void
paddock_safety_view_set_item (PaddockSafetyView  *self,
                              PaddockSessionItem *item)
{
  if (self->item == item)
    return;

  if (self->item != NULL)
    g_signal_handlers_disconnect_by_func (self->item, item_notify_cb, self);
  g_set_object (&self->item, item);
  if (self->item != NULL)
    g_signal_connect_object (self->item, "notify", G_CALLBACK (item_notify_cb), self, G_CONNECT_SWAPPED);

  gtk_filter_list_model_set_model (self->layers_model,
                                   item != NULL ? paddock_session_item_get_boundary (item) : NULL);
  gtk_filter_list_model_set_model (self->probes_model,
                                   item != NULL ? paddock_session_item_get_boundary (item) : NULL);

  paddock_safety_view_update (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ITEM]);
}

static void
paddock_safety_view_dispose (GObject *object)
{
  PaddockSafetyView *self = (PaddockSafetyView *)object;
  GtkWidget *child;

  if (self->item != NULL)
    g_signal_handlers_disconnect_by_func (self->item, item_notify_cb, self);
  if (self->watched_proxy != NULL)
    g_signal_handlers_disconnect_by_func (self->watched_proxy, proxy_allowlist_cb, self);
  g_clear_object (&self->watched_proxy);
  if (self->layers_model != NULL)
    g_signal_handlers_disconnect_by_func (self->layers_model, model_items_changed_cb, self);
  if (self->probes_model != NULL)
    g_signal_handlers_disconnect_by_func (self->probes_model, model_items_changed_cb, self);

  gtk_widget_dispose_template (GTK_WIDGET (self), PADDOCK_TYPE_SAFETY_VIEW);
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))))
    gtk_widget_unparent (child);
  g_clear_object (&self->layers_model);
  g_clear_object (&self->probes_model);
  g_clear_object (&self->item);

  G_OBJECT_CLASS (paddock_safety_view_parent_class)->dispose (object);
}

static void
paddock_safety_view_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  PaddockSafetyView *self = PADDOCK_SAFETY_VIEW (object);

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
paddock_safety_view_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  PaddockSafetyView *self = PADDOCK_SAFETY_VIEW (object);

  switch (prop_id)
    {
    case PROP_ITEM:
      paddock_safety_view_set_item (self, g_value_get_object (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_safety_view_class_init (PaddockSafetyViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = paddock_safety_view_dispose;
  object_class->get_property = paddock_safety_view_get_property;
  object_class->set_property = paddock_safety_view_set_property;

  properties[PROP_ITEM] =
    g_param_spec_object ("item", NULL, NULL,
                         PADDOCK_TYPE_SESSION_ITEM,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/paddock/Paddock/paddock-safety-view.ui");
  gtk_widget_class_bind_template_child (widget_class, PaddockSafetyView, page);
  gtk_widget_class_bind_template_child (widget_class, PaddockSafetyView, summary_icon);
  gtk_widget_class_bind_template_child (widget_class, PaddockSafetyView, profile_badge);
  gtk_widget_class_bind_template_child (widget_class, PaddockSafetyView, summary_title);
  gtk_widget_class_bind_template_child (widget_class, PaddockSafetyView, summary_description);
  gtk_widget_class_bind_template_child (widget_class, PaddockSafetyView, layers_group);
  gtk_widget_class_bind_template_child (widget_class, PaddockSafetyView, exposed_group);
  gtk_widget_class_bind_template_child (widget_class, PaddockSafetyView, workspace_row);
  gtk_widget_class_bind_template_child (widget_class, PaddockSafetyView, home_row);
  gtk_widget_class_bind_template_child (widget_class, PaddockSafetyView, network_row);
  gtk_widget_class_bind_template_child (widget_class, PaddockSafetyView, layers_list);
  gtk_widget_class_bind_template_child (widget_class, PaddockSafetyView, probes_group);
  gtk_widget_class_bind_template_child (widget_class, PaddockSafetyView, probes_list);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static GtkFilterListModel *
make_filter_model (gboolean probes)
{
  GtkExpression *expression = gtk_property_expression_new (PADDOCK_TYPE_LAYER_ITEM, NULL, "probe");
  GtkBoolFilter *filter = gtk_bool_filter_new (expression);

  gtk_bool_filter_set_invert (filter, !probes);
  return gtk_filter_list_model_new (NULL, GTK_FILTER (filter));
}

static void
paddock_safety_view_init (PaddockSafetyView *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  self->layers_model = make_filter_model (FALSE);
  self->probes_model = make_filter_model (TRUE);
  g_signal_connect_object (self->layers_model, "items-changed",
                           G_CALLBACK (model_items_changed_cb), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->probes_model, "items-changed",
                           G_CALLBACK (model_items_changed_cb), self, G_CONNECT_SWAPPED);
  gtk_list_box_bind_model (self->layers_list, G_LIST_MODEL (self->layers_model), create_layer_row, NULL, NULL);
  gtk_list_box_bind_model (self->probes_list, G_LIST_MODEL (self->probes_model), create_layer_row, NULL, NULL);

  paddock_safety_view_update (self);
}

/**
 * paddock_safety_view_get_item:
 *
 * Returns: (transfer none) (nullable): the session shown
 */
PaddockSessionItem *
paddock_safety_view_get_item (PaddockSafetyView *self)
{
  g_return_val_if_fail (PADDOCK_IS_SAFETY_VIEW (self), NULL);
  return self->item;
}

/**
 * paddock_safety_view_find_row:
 * @layer: the daemon's name of a layer, such as "seccomp" or "probe:hidden-path"
 *
 * Returns: (transfer none) (nullable): the #AdwExpanderRow of @layer, whose
 *   "paddock-layer-item" data is its #PaddockLayerItem
 */
GtkWidget *
paddock_safety_view_find_row (PaddockSafetyView *self,
                              const char        *layer)
{
  GtkListBox *lists[2];

  g_return_val_if_fail (PADDOCK_IS_SAFETY_VIEW (self), NULL);
  g_return_val_if_fail (layer != NULL, NULL);

  lists[0] = self->layers_list;
  lists[1] = self->probes_list;
  for (guint l = 0; l < G_N_ELEMENTS (lists); l++)
    for (GtkWidget *row = gtk_widget_get_first_child (GTK_WIDGET (lists[l]));
         row != NULL;
         row = gtk_widget_get_next_sibling (row))
      if (ADW_IS_EXPANDER_ROW (row) && g_strcmp0 (gtk_widget_get_name (row), layer) == 0)
        return row;

  return NULL;
}
