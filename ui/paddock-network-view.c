/* paddock-network-view.c — a session's proxy records, live, and its allowlist
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "paddock-network-record.h"
#include "paddock-network-view.h"
#include "paddock-visible-text.h"
#include "paddock-window.h"

/* The daemon keeps (and bounds) the records; the view holds the newest. */
#define MAX_SHOWN_RECORDS  10000
/* Records asked for per call while catching up. */
#define RECORDS_PER_CALL   1000
/* Domains in the allowlist, as the daemon would bound them too. */
#define MAX_DOMAINS        256

typedef enum {
  VERDICT_ALL,
  VERDICT_ALLOWED,
  VERDICT_DENIED,
} VerdictFilter;

/* Records come two ways: ListNetworkRecords to catch up from a sequence
 * number, and the NetworkRecord signal as they happen. Signals that arrive
 * while catching up wait in @pending, so that nothing is shown twice or
 * lost between the two. Newest first. */
struct _PaddockNetworkView
{
  GtkWidget           parent_instance;

  PaddockSessionItem *item;
  GListStore         *records;
  GtkCustomFilter    *filter;
  VerdictFilter       verdict;
  guint64             next_seq;
  gboolean            catching_up;
  GPtrArray          *pending;        /* GVariant a{sv} */
  GDBusConnection    *connection;
  guint               record_signal_id;
  gulong              properties_changed_id;
  GDBusProxy         *properties_proxy;
  GCancellable       *cancellable;
  GStrv               domains;
  gboolean            domains_known;
  gboolean            loaded;         /* the daemon answered the first list */

  /* Template widgets */
  GtkStack           *stack;
  GtkStack           *records_stack;
  GtkColumnView      *column_view;
  GtkNoSelection     *selection;
  GtkFilterListModel *filter_model;
  GtkToggleButton    *all_button;
  GtkToggleButton    *allowed_button;
  GtkToggleButton    *denied_button;
  GtkLabel           *summary_label;
  AdwPreferencesGroup *allowlist_group;
  GtkListBox         *domains_list;
  AdwEntryRow        *add_domain_row;
  AdwActionRow       *mode_row;
};

G_DEFINE_FINAL_TYPE (PaddockNetworkView, paddock_network_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_ITEM,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void paddock_network_view_catch_up (PaddockNetworkView *self);

static gboolean
is_unknown (const GError *error)
{
  g_autofree char *remote = NULL;

  if (error == NULL || !g_dbus_error_is_remote_error (error))
    return FALSE;
  remote = g_dbus_error_get_remote_error (error);
  return g_strcmp0 (remote, "org.freedesktop.DBus.Error.UnknownMethod") == 0 ||
         g_strcmp0 (remote, "org.freedesktop.DBus.Error.UnknownInterface") == 0 ||
         g_strcmp0 (remote, "org.freedesktop.DBus.Error.UnknownProperty") == 0;
}

static void
update_summary (PaddockNetworkView *self)
{
  guint shown = g_list_model_get_n_items (G_LIST_MODEL (self->filter_model));
  guint total = g_list_model_get_n_items (G_LIST_MODEL (self->records));
  g_autofree char *summary = NULL;

  if (shown == total)
    summary = g_strdup_printf (g_dngettext (NULL, "%u request", "%u requests", total), total);
  else
    /* Translators: "3 of 10 requests" */
    summary = g_strdup_printf (g_dngettext (NULL, "%u of %u request", "%u of %u requests", total), shown, total);
  gtk_label_set_label (self->summary_label, summary);
  gtk_stack_set_visible_child_name (self->records_stack, shown == 0 ? "empty" : "records");
}

/* Records */

static gboolean
record_matches (gpointer item,
                gpointer user_data)
{
  PaddockNetworkView *self = user_data;
  const char *verdict = paddock_network_record_get_verdict (item);

  switch (self->verdict)
    {
    case VERDICT_ALLOWED:
      return g_strcmp0 (verdict, "allowed") == 0;
    case VERDICT_DENIED:
      return g_strcmp0 (verdict, "denied") == 0;
    case VERDICT_ALL:
    default:
      return TRUE;
    }
}

/**
 * paddock_network_view_add_records:
 * @records: `aa{sv}` in the order the proxy made them
 *
 * Shows @records (newest first), skipping those already shown.
 */
void
paddock_network_view_add_records (PaddockNetworkView *self,
                                  GVariant           *records)
{
  g_autoptr(GPtrArray) fresh = g_ptr_array_new_with_free_func (g_object_unref);
  GVariantIter iter;
  GVariant *record;
  guint n;

  g_return_if_fail (PADDOCK_IS_NETWORK_VIEW (self));
  g_return_if_fail (g_variant_is_of_type (records, G_VARIANT_TYPE ("aa{sv}")));

  g_variant_iter_init (&iter, records);
  while ((record = g_variant_iter_next_value (&iter)) != NULL)
    {
      PaddockNetworkRecord *item = paddock_network_record_new_from_variant (record);
      guint64 seq = paddock_network_record_get_seq (item);

      g_variant_unref (record);
      if (seq < self->next_seq)
        {
          g_object_unref (item);
          continue;
        }
      self->next_seq = seq + 1;
      g_ptr_array_add (fresh, item);
    }
  if (fresh->len == 0)
    return;

  /* Newest first: the batch reversed, in front. */
  for (guint i = 0; i < fresh->len / 2; i++)
    {
      gpointer swap = fresh->pdata[i];

      fresh->pdata[i] = fresh->pdata[fresh->len - 1 - i];
      fresh->pdata[fresh->len - 1 - i] = swap;
    }
  if (fresh->len > MAX_SHOWN_RECORDS)
    g_ptr_array_set_size (fresh, MAX_SHOWN_RECORDS);
  g_list_store_splice (self->records, 0, 0, fresh->pdata, fresh->len);

  n = g_list_model_get_n_items (G_LIST_MODEL (self->records));
  if (n > MAX_SHOWN_RECORDS)
    g_list_store_splice (self->records, MAX_SHOWN_RECORDS, n - MAX_SHOWN_RECORDS, NULL, 0);

  update_summary (self);
}

static void
add_one_record (PaddockNetworkView *self,
                GVariant           *record)
{
  GVariantBuilder builder;
  g_autoptr(GVariant) batch = NULL;

  g_variant_builder_init (&builder, G_VARIANT_TYPE ("aa{sv}"));
  g_variant_builder_add_value (&builder, record);
  batch = g_variant_ref_sink (g_variant_builder_end (&builder));
  paddock_network_view_add_records (self, batch);
}

static void
network_record_cb (GDBusConnection *connection,
                   const char      *sender_name,
                   const char      *object_path,
                   const char      *interface_name,
                   const char      *signal_name,
                   GVariant        *parameters,
                   gpointer         user_data)
{
  PaddockNetworkView *self = user_data;
  g_autoptr(GVariant) record = NULL;

  if (!g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(a{sv})")))
    return;

  record = g_variant_get_child_value (parameters, 0);
  if (self->catching_up)
    {
      /* Bounded like the list itself: a flood while catching up is caught
       * up by the next ListNetworkRecords instead. */
      if (self->pending->len < MAX_SHOWN_RECORDS)
        g_ptr_array_add (self->pending, g_steal_pointer (&record));
      return;
    }
  add_one_record (self, record);
}

static void
list_records_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  PaddockNetworkView *self;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) records = NULL;
  g_autoptr(GError) error = NULL;
  guint64 next_seq = 0;

  reply = g_dbus_proxy_call_finish (G_DBUS_PROXY (source), result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;

  self = PADDOCK_NETWORK_VIEW (user_data);
  self->loaded = TRUE;
  if (reply == NULL || !g_variant_is_of_type (reply, G_VARIANT_TYPE ("(aa{sv}t)")))
    {
      self->catching_up = FALSE;
      g_ptr_array_set_size (self->pending, 0);
      /* A daemon without network records: say so rather than show none. */
      if (is_unknown (error) || error == NULL)
        gtk_stack_set_visible_child_name (self->stack, "unavailable");
      else
        g_debug ("Could not list the network records: %s", error->message);
      return;
    }

  gtk_stack_set_visible_child_name (self->stack, "network");
  g_variant_get (reply, "(@aa{sv}t)", &records, &next_seq);
  paddock_network_view_add_records (self, records);
  if (next_seq > self->next_seq)
    self->next_seq = next_seq;

  /* More to come: ask again from where this answer ended. */
  if (g_variant_n_children (records) >= RECORDS_PER_CALL)
    {
      paddock_network_view_catch_up (self);
      return;
    }

  self->catching_up = FALSE;
  for (guint i = 0; i < self->pending->len; i++)
    add_one_record (self, g_ptr_array_index (self->pending, i));
  g_ptr_array_set_size (self->pending, 0);
}

static void
paddock_network_view_catch_up (PaddockNetworkView *self)
{
  PaddockIpcSession1 *proxy = self->item != NULL ? paddock_session_item_get_proxy (self->item) : NULL;

  if (proxy == NULL)
    return;

  self->catching_up = TRUE;
  g_dbus_proxy_call (G_DBUS_PROXY (proxy), "ListNetworkRecords",
                     g_variant_new ("(tu)", self->next_seq, (guint32) RECORDS_PER_CALL),
                     G_DBUS_CALL_FLAGS_NO_AUTO_START, -1, self->cancellable, list_records_cb, self);
}

/* Allowlist and mode */

static void
remove_domain_cb (GtkButton          *button,
                  PaddockNetworkView *self);

static void
rebuild_domains (PaddockNetworkView *self)
{
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->domains_list))) != NULL)
    gtk_list_box_remove (self->domains_list, child);

  for (guint i = 0; self->domains != NULL && self->domains[i] != NULL; i++)
    {
      GtkWidget *row = adw_action_row_new ();
      GtkWidget *remove = gtk_button_new_from_icon_name ("list-remove-symbolic");
      g_autofree char *label = g_strdup_printf (_("Remove %s"), self->domains[i]);

      adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), self->domains[i]);
      gtk_widget_set_valign (remove, GTK_ALIGN_CENTER);
      gtk_widget_set_tooltip_text (remove, label);
      gtk_widget_add_css_class (remove, "flat");
      gtk_accessible_update_property (GTK_ACCESSIBLE (remove), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
      g_object_set_data_full (G_OBJECT (remove), "paddock-domain", g_strdup (self->domains[i]), g_free);
      g_signal_connect (remove, "clicked", G_CALLBACK (remove_domain_cb), self);
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), remove);
      gtk_list_box_append (self->domains_list, row);
    }
  gtk_widget_set_visible (GTK_WIDGET (self->domains_list), self->domains != NULL && self->domains[0] != NULL);
}

/**
 * paddock_network_view_set_domains:
 *
 * Shows @domains as the allowlist (what the AllowedDomains property says).
 */
void
paddock_network_view_set_domains (PaddockNetworkView *self,
                                  const char * const *domains)
{
  g_return_if_fail (PADDOCK_IS_NETWORK_VIEW (self));

  g_strfreev (self->domains);
  self->domains = g_strdupv ((char **) domains);
  self->domains_known = domains != NULL;
  gtk_widget_set_sensitive (GTK_WIDGET (self->allowlist_group), self->domains_known);
  rebuild_domains (self);
}

const char * const *
paddock_network_view_get_domains (PaddockNetworkView *self)
{
  g_return_val_if_fail (PADDOCK_IS_NETWORK_VIEW (self), NULL);
  return (const char * const *) self->domains;
}

static const char *
current_mode (PaddockNetworkView *self)
{
  const char *mode = self->item != NULL ? paddock_session_item_get_network_mode (self->item) : NULL;

  return mode != NULL ? mode : "";
}

static void
update_mode (PaddockNetworkView *self)
{
  const char *mode = current_mode (self);
  const char *description = paddock_session_item_describe_network_mode (mode);

  if (description == NULL)
    description = mode;
  adw_action_row_set_subtitle (self->mode_row, description);
}

typedef struct {
  PaddockNetworkView *self;
  GStrv               previous;
} PolicyCall;

static void
set_policy_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  PolicyCall *call = user_data;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;

  reply = g_dbus_proxy_call_finish (G_DBUS_PROXY (source), result, &error);
  if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) && error != NULL)
    {
      g_autofree char *title = NULL;

      if (is_unknown (error))
        title = g_strdup (_("This daemon cannot change the network policy"));
      else
        {
          g_dbus_error_strip_remote_error (error);
          title = g_strdup_printf (_("Could not change the allowlist: %s"), error->message);
        }
      /* What the daemon still enforces is the old list. */
      paddock_network_view_set_domains (call->self, (const char * const *) call->previous);
      paddock_window_toast_from (GTK_WIDGET (call->self), title);
    }
  g_strfreev (call->previous);
  g_free (call);
}

static void
paddock_network_view_set_policy (PaddockNetworkView *self,
                                 GStrv               domains)
{
  PaddockIpcSession1 *proxy = self->item != NULL ? paddock_session_item_get_proxy (self->item) : NULL;
  PolicyCall *call;

  if (proxy == NULL)
    {
      g_strfreev (domains);
      return;
    }

  call = g_new0 (PolicyCall, 1);
  call->self = self;
  call->previous = g_steal_pointer (&self->domains);
  /* Shown at once; put back if the daemon refuses. */
  self->domains = domains;
  rebuild_domains (self);
  g_dbus_proxy_call (G_DBUS_PROXY (proxy), "SetNetworkPolicy",
                     g_variant_new ("(s^as)", current_mode (self), self->domains),
                     G_DBUS_CALL_FLAGS_NO_AUTO_START, -1, self->cancellable, set_policy_cb, call);
}

static void
remove_domain_cb (GtkButton          *button,
                  PaddockNetworkView *self)
{
  const char *domain = g_object_get_data (G_OBJECT (button), "paddock-domain");
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();

  for (guint i = 0; self->domains != NULL && self->domains[i] != NULL; i++)
    if (g_strcmp0 (self->domains[i], domain) != 0)
      g_strv_builder_add (builder, self->domains[i]);
  paddock_network_view_set_policy (self, g_strv_builder_end (builder));
}

/* A domain as a user types it: a name, or a wildcard for its subdomains
 * ("*.example.com"). The daemon checks it too; this catches typing
 * mistakes before a round trip. */
static gboolean
domain_is_plausible (const char *domain)
{
  const char *name = g_str_has_prefix (domain, "*.") ? domain + 2 : domain;

  if (*name == '\0' || strlen (domain) > 253 || *name == '.' || g_str_has_suffix (name, "."))
    return FALSE;
  for (const char *c = name; *c != '\0'; c++)
    if (!g_ascii_isalnum (*c) && *c != '-' && *c != '.')
      return FALSE;
  return TRUE;
}

static void
add_domain_apply_cb (PaddockNetworkView *self)
{
  g_autofree char *domain = g_ascii_strdown (gtk_editable_get_text (GTK_EDITABLE (self->add_domain_row)), -1);
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();

  g_strstrip (domain);
  if (!domain_is_plausible (domain))
    {
      paddock_window_toast_from (GTK_WIDGET (self), _("Not a domain name: use a name like example.com or *.example.com"));
      return;
    }
  if (self->domains != NULL && g_strv_contains ((const char * const *) self->domains, domain))
    {
      gtk_editable_set_text (GTK_EDITABLE (self->add_domain_row), "");
      return;
    }
  if (self->domains != NULL && g_strv_length (self->domains) >= MAX_DOMAINS)
    {
      paddock_window_toast_from (GTK_WIDGET (self), _("The allowlist is full"));
      return;
    }

  if (self->domains != NULL)
    g_strv_builder_addv (builder, (const char **) self->domains);
  g_strv_builder_add (builder, domain);
  gtk_editable_set_text (GTK_EDITABLE (self->add_domain_row), "");
  paddock_network_view_set_policy (self, g_strv_builder_end (builder));
}

static void
read_allowed_domains (PaddockNetworkView *self)
{
  PaddockIpcSession1 *proxy = self->item != NULL ? paddock_session_item_get_proxy (self->item) : NULL;
  g_autoptr(GVariant) value = NULL;

  if (proxy != NULL)
    value = g_dbus_proxy_get_cached_property (G_DBUS_PROXY (proxy), "AllowedDomains");
  if (value != NULL && g_variant_is_of_type (value, G_VARIANT_TYPE_STRING_ARRAY))
    {
      g_autofree const char **domains = g_variant_get_strv (value, NULL);

      paddock_network_view_set_domains (self, domains);
    }
  else
    paddock_network_view_set_domains (self, NULL);
}

static void
properties_changed_cb (GDBusProxy         *proxy,
                       GVariant           *changed,
                       GStrv               invalidated,
                       PaddockNetworkView *self)
{
  g_autoptr(GVariant) domains = g_variant_lookup_value (changed, "AllowedDomains", NULL);

  if (domains != NULL ||
      (invalidated != NULL && g_strv_contains ((const char * const *) invalidated, "AllowedDomains")))
    read_allowed_domains (self);
}

static void
verdict_toggled_cb (PaddockNetworkView *self)
{
  VerdictFilter verdict = VERDICT_ALL;

  if (gtk_toggle_button_get_active (self->allowed_button))
    verdict = VERDICT_ALLOWED;
  else if (gtk_toggle_button_get_active (self->denied_button))
    verdict = VERDICT_DENIED;

  if (verdict == self->verdict)
    return;
  self->verdict = verdict;
  gtk_filter_changed (GTK_FILTER (self->filter), GTK_FILTER_CHANGE_DIFFERENT);
  update_summary (self);
}

/* Factories */

static void
setup_label_cb (GtkSignalListItemFactory *factory,
                GtkListItem              *list_item,
                PaddockNetworkView       *self)
{
  gtk_list_item_set_child (list_item, g_object_new (GTK_TYPE_LABEL, "xalign", 0.0f,
                                                    "ellipsize", PANGO_ELLIPSIZE_END, NULL));
}

static void
setup_numeric_cb (GtkSignalListItemFactory *factory,
                  GtkListItem              *list_item,
                  PaddockNetworkView       *self)
{
  GtkWidget *label = g_object_new (GTK_TYPE_LABEL, "xalign", 0.0f, NULL);

  gtk_widget_add_css_class (label, "numeric");
  gtk_widget_add_css_class (label, "dim-label");
  gtk_list_item_set_child (list_item, label);
}

static void
setup_verdict_cb (GtkSignalListItemFactory *factory,
                  GtkListItem              *list_item,
                  PaddockNetworkView       *self)
{
  GtkWidget *label = g_object_new (GTK_TYPE_LABEL, "halign", GTK_ALIGN_START, "valign", GTK_ALIGN_CENTER, NULL);

  gtk_widget_add_css_class (label, "verdict");
  gtk_list_item_set_child (list_item, label);
}

static void
bind_time_cb (GtkSignalListItemFactory *factory,
              GtkListItem              *list_item,
              PaddockNetworkView       *self)
{
  PaddockNetworkRecord *record = gtk_list_item_get_item (list_item);
  gint64 usec = paddock_network_record_get_time (record);
  g_autoptr(GDateTime) seconds = g_date_time_new_from_unix_local (usec / G_USEC_PER_SEC);
  /* %X shows whole seconds: the microseconds would change nothing. */
  g_autofree char *text = seconds != NULL ? g_date_time_format (seconds, "%X") : g_strdup ("");

  gtk_label_set_label (GTK_LABEL (gtk_list_item_get_child (list_item)), text);
}

static void
bind_verdict_cb (GtkSignalListItemFactory *factory,
                 GtkListItem              *list_item,
                 PaddockNetworkView       *self)
{
  PaddockNetworkRecord *record = gtk_list_item_get_item (list_item);
  GtkWidget *label = gtk_list_item_get_child (list_item);
  const char *verdict = paddock_network_record_get_verdict (record);

  gtk_widget_remove_css_class (label, "allowed");
  gtk_widget_remove_css_class (label, "denied");
  gtk_widget_remove_css_class (label, "failed");
  if (g_strcmp0 (verdict, "allowed") == 0)
    {
      gtk_label_set_label (GTK_LABEL (label), _("Allowed"));
      gtk_widget_add_css_class (label, "allowed");
    }
  else if (g_strcmp0 (verdict, "denied") == 0)
    {
      gtk_label_set_label (GTK_LABEL (label), _("Denied"));
      gtk_widget_add_css_class (label, "denied");
    }
  else
    {
      gtk_label_set_label (GTK_LABEL (label), g_strcmp0 (verdict, "error") == 0 ? _("Error") : verdict);
      gtk_widget_add_css_class (label, "failed");
    }
}

static void
bind_request_cb (GtkSignalListItemFactory *factory,
                 GtkListItem              *list_item,
                 PaddockNetworkView       *self)
{
  PaddockNetworkRecord *record = gtk_list_item_get_item (list_item);
  /* The agent's request named them: shown, not reordered (U+202E). */
  g_autofree char *method = paddock_visible_text_dup_label (paddock_network_record_get_method (record));
  g_autofree char *host = paddock_visible_text_dup_label (paddock_network_record_get_host (record));
  g_autofree char *text = NULL;

  text = g_strdup_printf ("%s %s:%u", method, host, (guint) paddock_network_record_get_port (record));
  gtk_label_set_label (GTK_LABEL (gtk_list_item_get_child (list_item)), text);
}

static void
bind_bytes_cb (GtkSignalListItemFactory *factory,
               GtkListItem              *list_item,
               PaddockNetworkView       *self)
{
  PaddockNetworkRecord *record = gtk_list_item_get_item (list_item);
  g_autofree char *up = g_format_size (paddock_network_record_get_bytes_up (record));
  g_autofree char *down = g_format_size (paddock_network_record_get_bytes_down (record));
  g_autofree char *text = g_strdup_printf ("↑ %s  ↓ %s", up, down);

  gtk_label_set_label (GTK_LABEL (gtk_list_item_get_child (list_item)), text);
}

static void
bind_duration_cb (GtkSignalListItemFactory *factory,
                  GtkListItem              *list_item,
                  PaddockNetworkView       *self)
{
  PaddockNetworkRecord *record = gtk_list_item_get_item (list_item);
  /* Translators: a duration in milliseconds */
  g_autofree char *text = g_strdup_printf (_("%u ms"), paddock_network_record_get_duration_ms (record));

  gtk_label_set_label (GTK_LABEL (gtk_list_item_get_child (list_item)), text);
}

/* Session */

static void
paddock_network_view_disconnect (PaddockNetworkView *self)
{
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  if (self->record_signal_id != 0)
    g_dbus_connection_signal_unsubscribe (self->connection, self->record_signal_id);
  self->record_signal_id = 0;
  g_clear_object (&self->connection);
  if (self->properties_proxy != NULL)
    g_clear_signal_handler (&self->properties_changed_id, self->properties_proxy);
  g_clear_object (&self->properties_proxy);
  self->catching_up = FALSE;
  g_ptr_array_set_size (self->pending, 0);
}

/* Follows the item's proxy (made asynchronously, after the item). */
static void
paddock_network_view_attach (PaddockNetworkView *self)
{
  PaddockIpcSession1 *proxy = self->item != NULL ? paddock_session_item_get_proxy (self->item) : NULL;

  paddock_network_view_disconnect (self);
  g_list_store_remove_all (self->records);
  self->next_seq = 0;
  self->loaded = FALSE;
  update_summary (self);
  update_mode (self);
  if (proxy == NULL)
    return;

  /* Subscribed before the first list, so that nothing falls between. */
  self->connection = g_object_ref (g_dbus_proxy_get_connection (G_DBUS_PROXY (proxy)));
  self->record_signal_id =
    g_dbus_connection_signal_subscribe (self->connection, g_dbus_proxy_get_name (G_DBUS_PROXY (proxy)),
                                        "org.paddock.Session1", "NetworkRecord",
                                        g_dbus_proxy_get_object_path (G_DBUS_PROXY (proxy)), NULL,
                                        G_DBUS_SIGNAL_FLAGS_NONE, network_record_cb, self, NULL);
  self->properties_proxy = G_DBUS_PROXY (g_object_ref (proxy));
  self->properties_changed_id = g_signal_connect (proxy, "g-properties-changed",
                                                  G_CALLBACK (properties_changed_cb), self);
  read_allowed_domains (self);
  paddock_network_view_catch_up (self);
}

void
paddock_network_view_set_item (PaddockNetworkView *self,
                               PaddockSessionItem *item)
{
  g_return_if_fail (PADDOCK_IS_NETWORK_VIEW (self));
  g_return_if_fail (item == NULL || PADDOCK_IS_SESSION_ITEM (item));

  if (self->item == item)
    return;

  if (self->item != NULL)
    g_signal_handlers_disconnect_by_data (self->item, self);
  g_set_object (&self->item, item);
  if (item != NULL)
    {
      g_signal_connect_swapped (item, "notify::network-mode", G_CALLBACK (update_mode), self);
      g_signal_connect_swapped (item, "notify::proxy", G_CALLBACK (paddock_network_view_attach), self);
    }
  paddock_network_view_attach (self);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ITEM]);
}

/* GObject */

static void
paddock_network_view_dispose (GObject *object)
{
  PaddockNetworkView *self = (PaddockNetworkView *)object;

  paddock_network_view_disconnect (self);
  if (self->item != NULL)
    g_signal_handlers_disconnect_by_data (self->item, self);
  gtk_widget_dispose_template (GTK_WIDGET (self), PADDOCK_TYPE_NETWORK_VIEW);
  g_clear_object (&self->item);

  G_OBJECT_CLASS (paddock_network_view_parent_class)->dispose (object);
}

static void
paddock_network_view_finalize (GObject *object)
{
  PaddockNetworkView *self = (PaddockNetworkView *)object;

  g_clear_object (&self->cancellable);
  g_clear_object (&self->records);
  g_clear_object (&self->filter);
  g_clear_pointer (&self->pending, g_ptr_array_unref);
  g_clear_pointer (&self->domains, g_strfreev);

  G_OBJECT_CLASS (paddock_network_view_parent_class)->finalize (object);
}

static void
paddock_network_view_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  PaddockNetworkView *self = PADDOCK_NETWORK_VIEW (object);

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
paddock_network_view_set_property (GObject      *object,
                                   guint         prop_id,
                                   const GValue *value,
                                   GParamSpec   *pspec)
{
  PaddockNetworkView *self = PADDOCK_NETWORK_VIEW (object);

  switch (prop_id)
    {
    case PROP_ITEM:
      paddock_network_view_set_item (self, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_network_view_class_init (PaddockNetworkViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = paddock_network_view_dispose;
  object_class->finalize = paddock_network_view_finalize;
  object_class->get_property = paddock_network_view_get_property;
  object_class->set_property = paddock_network_view_set_property;

  properties[PROP_ITEM] =
    g_param_spec_object ("item", NULL, NULL,
                         PADDOCK_TYPE_SESSION_ITEM,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/paddock/Paddock/paddock-network-view.ui");
  gtk_widget_class_bind_template_child (widget_class, PaddockNetworkView, stack);
  gtk_widget_class_bind_template_child (widget_class, PaddockNetworkView, records_stack);
  gtk_widget_class_bind_template_child (widget_class, PaddockNetworkView, column_view);
  gtk_widget_class_bind_template_child (widget_class, PaddockNetworkView, selection);
  gtk_widget_class_bind_template_child (widget_class, PaddockNetworkView, filter_model);
  gtk_widget_class_bind_template_child (widget_class, PaddockNetworkView, all_button);
  gtk_widget_class_bind_template_child (widget_class, PaddockNetworkView, allowed_button);
  gtk_widget_class_bind_template_child (widget_class, PaddockNetworkView, denied_button);
  gtk_widget_class_bind_template_child (widget_class, PaddockNetworkView, summary_label);
  gtk_widget_class_bind_template_child (widget_class, PaddockNetworkView, allowlist_group);
  gtk_widget_class_bind_template_child (widget_class, PaddockNetworkView, domains_list);
  gtk_widget_class_bind_template_child (widget_class, PaddockNetworkView, add_domain_row);
  gtk_widget_class_bind_template_child (widget_class, PaddockNetworkView, mode_row);
  gtk_widget_class_bind_template_callback (widget_class, setup_label_cb);
  gtk_widget_class_bind_template_callback (widget_class, setup_numeric_cb);
  gtk_widget_class_bind_template_callback (widget_class, setup_verdict_cb);
  gtk_widget_class_bind_template_callback (widget_class, bind_time_cb);
  gtk_widget_class_bind_template_callback (widget_class, bind_verdict_cb);
  gtk_widget_class_bind_template_callback (widget_class, bind_request_cb);
  gtk_widget_class_bind_template_callback (widget_class, bind_bytes_cb);
  gtk_widget_class_bind_template_callback (widget_class, bind_duration_cb);
  gtk_widget_class_bind_template_callback (widget_class, verdict_toggled_cb);
  gtk_widget_class_bind_template_callback (widget_class, add_domain_apply_cb);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "networkview");
}

static void
paddock_network_view_init (PaddockNetworkView *self)
{
  self->records = g_list_store_new (PADDOCK_TYPE_NETWORK_RECORD);
  self->pending = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  self->cancellable = g_cancellable_new ();

  gtk_widget_init_template (GTK_WIDGET (self));

  self->filter = gtk_custom_filter_new (record_matches, self, NULL);
  gtk_filter_list_model_set_filter (self->filter_model, GTK_FILTER (self->filter));
  gtk_filter_list_model_set_model (self->filter_model, G_LIST_MODEL (self->records));
  paddock_network_view_set_domains (self, NULL);
  update_summary (self);
}

GtkWidget *
paddock_network_view_new (void)
{
  return g_object_new (PADDOCK_TYPE_NETWORK_VIEW, NULL);
}

PaddockSessionItem *
paddock_network_view_get_item (PaddockNetworkView *self)
{
  g_return_val_if_fail (PADDOCK_IS_NETWORK_VIEW (self), NULL);
  return self->item;
}

/**
 * paddock_network_view_get_shown:
 *
 * Returns: (transfer none): the records the filter lets through, newest first
 */
GListModel *
paddock_network_view_get_shown (PaddockNetworkView *self)
{
  g_return_val_if_fail (PADDOCK_IS_NETWORK_VIEW (self), NULL);
  return G_LIST_MODEL (self->filter_model);
}

/**
 * paddock_network_view_get_records:
 *
 * Returns: (transfer none): every record held, newest first
 */
GListModel *
paddock_network_view_get_records (PaddockNetworkView *self)
{
  g_return_val_if_fail (PADDOCK_IS_NETWORK_VIEW (self), NULL);
  return G_LIST_MODEL (self->records);
}

/* "network" or "unavailable". */
const char *
paddock_network_view_get_page (PaddockNetworkView *self)
{
  g_return_val_if_fail (PADDOCK_IS_NETWORK_VIEW (self), NULL);
  return gtk_stack_get_visible_child_name (self->stack);
}

/* Whether the daemon answered (with records or that it has none to give). */
gboolean
paddock_network_view_is_loaded (PaddockNetworkView *self)
{
  g_return_val_if_fail (PADDOCK_IS_NETWORK_VIEW (self), FALSE);
  return self->loaded;
}
