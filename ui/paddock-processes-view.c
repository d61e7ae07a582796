/* paddock-processes-view.c — a session's process tree, refreshed while shown, with kill
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <signal.h>

#include <glib/gi18n.h>

#include "paddock-process-item.h"
#include "paddock-processes-view.h"
#include "paddock-window.h"

/* A process list is only worth its /proc reads while someone looks. */
#define REFRESH_INTERVAL_MS 1000

/* The tree is kept as items that live as long as their process: a refresh
 * updates them in place and only splices the stores whose members changed,
 * so that selection and expansion survive the refresh. */
struct _PaddockProcessesView
{
  GtkWidget           parent_instance;

  PaddockSessionItem *item;
  GListStore         *roots;
  GHashTable         *by_pid;          /* pid → PaddockProcessItem */
  GtkTreeListModel   *tree;
  GCancellable       *cancellable;     /* the refresh or kill in flight */
  guint               refresh_id;
  gboolean            refreshing;
  GtkWidget          *kill_dialog;

  /* Template widgets */
  GtkStack           *stack;
  GtkColumnView      *column_view;
  GtkSingleSelection *selection;
  GtkLabel           *count_label;
  AdwStatusPage      *unavailable_page;
};

G_DEFINE_FINAL_TYPE (PaddockProcessesView, paddock_processes_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_ITEM,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void paddock_processes_view_refresh (PaddockProcessesView *self);

static PaddockProcessItem *
selected_process (PaddockProcessesView *self)
{
  GtkTreeListRow *row = gtk_single_selection_get_selected_item (self->selection);

  return row != NULL ? PADDOCK_PROCESS_ITEM (gtk_tree_list_row_get_item (row)) : NULL;
}

static void
update_actions (PaddockProcessesView *self)
{
  g_autoptr(PaddockProcessItem) process = selected_process (self);

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "processes.kill", process != NULL);
}

/* The tree: a row expands into its item's children, but only when it has
 * some (a row without children must not show an expander). */
static GListModel *
create_children_cb (gpointer item,
                    gpointer user_data)
{
  GListStore *children = paddock_process_item_get_children (PADDOCK_PROCESS_ITEM (item));

  if (g_list_model_get_n_items (G_LIST_MODEL (children)) == 0)
    return NULL;
  return g_object_ref (G_LIST_MODEL (children));
}

static gboolean
has_children (PaddockProcessItem *item)
{
  return g_list_model_get_n_items (G_LIST_MODEL (paddock_process_item_get_children (item))) > 0;
}

/* Splices @store to hold @wanted (in that order) if it does not already,
 * or if one of its members gained or lost children: the tree list model
 * asks for a row's children only when the row is made. */
static void
reconcile_store (GListStore *store,
                 GPtrArray  *wanted)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (store));
  gboolean same = n == wanted->len;

  for (guint i = 0; same && i < n; i++)
    {
      g_autoptr(PaddockProcessItem) current = g_list_model_get_item (G_LIST_MODEL (store), i);
      gboolean had = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (current), "paddock-had-children"));

      same = current == g_ptr_array_index (wanted, i) && had == has_children (current);
    }
  if (same)
    return;

  for (guint i = 0; i < wanted->len; i++)
    g_object_set_data (g_ptr_array_index (wanted, i), "paddock-had-children",
                       GINT_TO_POINTER (has_children (g_ptr_array_index (wanted, i))));
  g_list_store_splice (store, 0, n, wanted->pdata, wanted->len);
}

static void
paddock_processes_view_update_page (PaddockProcessesView *self)
{
  guint n = g_hash_table_size (self->by_pid);
  g_autofree char *count = NULL;

  if (g_strcmp0 (gtk_stack_get_visible_child_name (self->stack), "unavailable") == 0)
    return;

  count = g_strdup_printf (g_dngettext (NULL, "%u process", "%u processes", n), n);
  gtk_label_set_label (self->count_label, count);
  gtk_stack_set_visible_child_name (self->stack, n == 0 ? "empty" : "processes");
}

/**
 * paddock_processes_view_set_processes:
 * @processes: rows as Session1.ListProcesses gives them, `a(uusss)`
 *
 * Shows @processes as a tree: a process whose parent is not listed (the
 * agent, or one reparented outside the session) is a root.
 */
void
paddock_processes_view_set_processes (PaddockProcessesView *self,
                                      GVariant             *processes)
{
  g_autoptr(GHashTable) next = NULL;
  g_autoptr(GHashTable) wanted = NULL;   /* parent item (NULL: roots) → GPtrArray */
  g_autoptr(GPtrArray) order = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) root_rows = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer value;
  g_autoptr(PaddockProcessItem) selected = NULL;
  GVariantIter rows;
  guint32 pid, ppid;
  const char *state, *name, *command_line;

  g_return_if_fail (PADDOCK_IS_PROCESSES_VIEW (self));
  g_return_if_fail (g_variant_is_of_type (processes, G_VARIANT_TYPE ("a(uusss)")));

  selected = selected_process (self);
  next = g_hash_table_new_full (NULL, NULL, NULL, g_object_unref);
  g_variant_iter_init (&rows, processes);
  while (g_variant_iter_next (&rows, "(uu&s&s&s)", &pid, &ppid, &state, &name, &command_line))
    {
      PaddockProcessItem *process = g_hash_table_lookup (self->by_pid, GUINT_TO_POINTER (pid));

      /* Same pid, other parent: the pid was reused by another process. */
      if (process != NULL && paddock_process_item_get_ppid (process) == ppid)
        g_object_ref (process);
      else
        process = paddock_process_item_new (pid, ppid);
      paddock_process_item_update (process, state, name, command_line);
      if (g_hash_table_contains (next, GUINT_TO_POINTER (pid)))
        {
          g_object_unref (process);
          continue;
        }
      g_hash_table_insert (next, GUINT_TO_POINTER (pid), process);
      g_ptr_array_add (order, g_object_ref (process));
    }

  /* Who is whose child, in the daemon's order (by pid). */
  wanted = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_ptr_array_unref);
  for (guint i = 0; i < order->len; i++)
    {
      PaddockProcessItem *process = g_ptr_array_index (order, i);
      PaddockProcessItem *parent = g_hash_table_lookup (next, GUINT_TO_POINTER (paddock_process_item_get_ppid (process)));
      GPtrArray *siblings;

      if (parent == process)
        parent = NULL;
      if (parent == NULL)
        {
          g_ptr_array_add (root_rows, process);
          continue;
        }
      siblings = g_hash_table_lookup (wanted, parent);
      if (siblings == NULL)
        g_hash_table_insert (wanted, parent, (siblings = g_ptr_array_new ()));
      g_ptr_array_add (siblings, process);
    }

  /* Children first, so that a parent's expandability is known when its
   * own store is reconciled. */
  for (guint i = 0; i < order->len; i++)
    {
      PaddockProcessItem *process = g_ptr_array_index (order, i);
      GPtrArray *children = g_hash_table_lookup (wanted, process);
      g_autoptr(GPtrArray) none = g_ptr_array_new ();

      reconcile_store (paddock_process_item_get_children (process), children != NULL ? children : none);
    }
  /* Items that left: empty their stores so that nothing holds them. */
  g_hash_table_iter_init (&iter, self->by_pid);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (!g_hash_table_contains (next, GUINT_TO_POINTER (paddock_process_item_get_pid (value))) ||
        g_hash_table_lookup (next, GUINT_TO_POINTER (paddock_process_item_get_pid (value))) != value)
      g_list_store_remove_all (paddock_process_item_get_children (value));
  reconcile_store (self->roots, root_rows);

  g_hash_table_unref (self->by_pid);
  self->by_pid = g_steal_pointer (&next);

  /* A splice re-makes the rows of a store: keep the same process selected
   * when it still runs. */
  if (selected != NULL &&
      g_hash_table_lookup (self->by_pid, GUINT_TO_POINTER (paddock_process_item_get_pid (selected))) == selected)
    {
      g_autoptr(PaddockProcessItem) now = selected_process (self);

      if (now != selected)
        paddock_processes_view_select_pid (self, paddock_process_item_get_pid (selected));
    }
  paddock_processes_view_update_page (self);
  update_actions (self);
}

/* Refresh */

static void
list_processes_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  PaddockProcessesView *self;
  g_autoptr(GVariant) processes = NULL;
  g_autoptr(GError) error = NULL;

  if (!paddock_ipc_session1_call_list_processes_finish (PADDOCK_IPC_SESSION1 (source), &processes, result, &error) &&
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;

  self = PADDOCK_PROCESSES_VIEW (user_data);
  self->refreshing = FALSE;

  if (error != NULL)
    {
      g_autofree char *remote = g_dbus_error_get_remote_error (error);

      /* An older daemon: say so instead of an empty list. */
      if (g_strcmp0 (remote, "org.freedesktop.DBus.Error.UnknownMethod") == 0)
        {
          gtk_stack_set_visible_child_name (self->stack, "unavailable");
          return;
        }
      g_debug ("Could not list the processes: %s", error->message);
      return;
    }

  paddock_processes_view_set_processes (self, processes);
}

static void
paddock_processes_view_refresh (PaddockProcessesView *self)
{
  PaddockIpcSession1 *proxy;

  if (self->item == NULL || self->refreshing)
    return;

  proxy = paddock_session_item_get_proxy (self->item);
  if (proxy == NULL)
    return;

  self->refreshing = TRUE;
  paddock_ipc_session1_call_list_processes (proxy, self->cancellable, list_processes_cb, self);
}

static gboolean
refresh_cb (gpointer data)
{
  paddock_processes_view_refresh (PADDOCK_PROCESSES_VIEW (data));
  return G_SOURCE_CONTINUE;
}

static void
paddock_processes_view_stop_refreshing (PaddockProcessesView *self)
{
  g_clear_handle_id (&self->refresh_id, g_source_remove);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  self->refreshing = FALSE;
}

static void
paddock_processes_view_map (GtkWidget *widget)
{
  PaddockProcessesView *self = PADDOCK_PROCESSES_VIEW (widget);

  GTK_WIDGET_CLASS (paddock_processes_view_parent_class)->map (widget);

  paddock_processes_view_refresh (self);
  if (self->refresh_id == 0)
    self->refresh_id = g_timeout_add (REFRESH_INTERVAL_MS, refresh_cb, self);
}

static void
paddock_processes_view_unmap (GtkWidget *widget)
{
  paddock_processes_view_stop_refreshing (PADDOCK_PROCESSES_VIEW (widget));

  GTK_WIDGET_CLASS (paddock_processes_view_parent_class)->unmap (widget);
}

/* Kill */

typedef struct {
  PaddockProcessesView *self;
  guint                 pid;
} KillCall;

static void
kill_process_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autofree KillCall *call = user_data;
  g_autoptr(GError) error = NULL;

  if (!paddock_ipc_session1_call_kill_process_finish (PADDOCK_IPC_SESSION1 (source), result, &error) &&
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;

  if (error != NULL)
    {
      g_autofree char *title = NULL;

      g_dbus_error_strip_remote_error (error);
      title = g_strdup_printf (_("Could not end process %u: %s"), call->pid, error->message);
      paddock_window_toast_from (GTK_WIDGET (call->self), title);
    }
  else
    {
      g_autofree char *title = g_strdup_printf (_("Process %u signalled"), call->pid);

      paddock_window_toast_from (GTK_WIDGET (call->self), title);
    }
  /* Show what is left at once rather than at the next tick. */
  call->self->refreshing = FALSE;
  paddock_processes_view_refresh (call->self);
}

static void
kill_response_cb (AdwMessageDialog     *dialog,
                  const char           *response,
                  PaddockProcessesView *self)
{
  guint pid = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (dialog), "paddock-pid"));
  guint signum;
  KillCall *call;

  if (self->kill_dialog == GTK_WIDGET (dialog))
    self->kill_dialog = NULL;

  if (g_strcmp0 (response, "terminate") == 0)
    signum = SIGTERM;
  else if (g_strcmp0 (response, "kill") == 0)
    signum = SIGKILL;
  else
    return;

  if (self->item == NULL || paddock_session_item_get_proxy (self->item) == NULL)
    return;

  call = g_new0 (KillCall, 1);
  call->self = self;
  call->pid = pid;
  paddock_ipc_session1_call_kill_process (paddock_session_item_get_proxy (self->item), pid, signum,
                                          self->cancellable, kill_process_cb, call);
}

static void
paddock_processes_view_kill_action (GtkWidget  *widget,
                                    const char *action_name,
                                    GVariant   *param)
{
  PaddockProcessesView *self = PADDOCK_PROCESSES_VIEW (widget);
  g_autoptr(PaddockProcessItem) process = selected_process (self);
  GtkRoot *root = gtk_widget_get_root (widget);
  GtkWidget *dialog;
  g_autofree char *heading = NULL;
  guint pid;

  if (process == NULL)
    return;

  pid = paddock_process_item_get_pid (process);
  /* Translators: %s is a command name such as "node", %u its process id */
  heading = g_strdup_printf (_("End “%s” (%u)?"), paddock_process_item_get_name (process), pid);
  dialog = adw_message_dialog_new (GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL, heading,
                                   _("“End” asks the process to quit; “Kill” stops it at once, and it "
                                     "cannot save its work. Its children keep running. The session "
                                     "goes on unless this is its agent."));
  adw_message_dialog_add_responses (ADW_MESSAGE_DIALOG (dialog),
                                    "cancel", _("_Cancel"),
                                    "terminate", _("_End"),
                                    "kill", _("_Kill"),
                                    NULL);
  adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (dialog), "kill", ADW_RESPONSE_DESTRUCTIVE);
  adw_message_dialog_set_default_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  adw_message_dialog_set_close_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  g_object_set_data (G_OBJECT (dialog), "paddock-pid", GUINT_TO_POINTER (pid));
  g_signal_connect_object (dialog, "response", G_CALLBACK (kill_response_cb), self, 0);
  self->kill_dialog = dialog;
  gtk_window_present (GTK_WINDOW (dialog));
}

/* Factories */

static void
setup_command_cb (GtkSignalListItemFactory *factory,
                  GtkListItem              *list_item,
                  PaddockProcessesView     *self)
{
  GtkWidget *expander = gtk_tree_expander_new ();
  GtkWidget *label = g_object_new (GTK_TYPE_LABEL, "xalign", 0.0f, "ellipsize", PANGO_ELLIPSIZE_END, NULL);

  gtk_tree_expander_set_child (GTK_TREE_EXPANDER (expander), label);
  gtk_list_item_set_child (list_item, expander);
}

static void
bind_command_cb (GtkSignalListItemFactory *factory,
                 GtkListItem              *list_item,
                 PaddockProcessesView     *self)
{
  GtkTreeListRow *row = gtk_list_item_get_item (list_item);
  GtkTreeExpander *expander = GTK_TREE_EXPANDER (gtk_list_item_get_child (list_item));
  g_autoptr(PaddockProcessItem) process = gtk_tree_list_row_get_item (row);
  GtkWidget *label = gtk_tree_expander_get_child (expander);

  gtk_tree_expander_set_list_row (expander, row);
  gtk_label_set_label (GTK_LABEL (label), paddock_process_item_get_name (process));
  gtk_widget_set_tooltip_text (label, paddock_process_item_get_command_line (process));
}

static void
setup_label_cb (GtkSignalListItemFactory *factory,
                GtkListItem              *list_item,
                PaddockProcessesView     *self)
{
  gtk_list_item_set_child (list_item, g_object_new (GTK_TYPE_LABEL, "xalign", 0.0f,
                                                    "ellipsize", PANGO_ELLIPSIZE_END, NULL));
}

static void
setup_numeric_cb (GtkSignalListItemFactory *factory,
                  GtkListItem              *list_item,
                  PaddockProcessesView     *self)
{
  GtkWidget *label = g_object_new (GTK_TYPE_LABEL, "xalign", 0.0f, NULL);

  gtk_widget_add_css_class (label, "numeric");
  gtk_list_item_set_child (list_item, label);
}

static void
setup_dim_label_cb (GtkSignalListItemFactory *factory,
                    GtkListItem              *list_item,
                    PaddockProcessesView     *self)
{
  GtkWidget *label = g_object_new (GTK_TYPE_LABEL, "xalign", 0.0f, "ellipsize", PANGO_ELLIPSIZE_END, NULL);

  gtk_widget_add_css_class (label, "dim-label");
  gtk_widget_add_css_class (label, "monospace");
  gtk_list_item_set_child (list_item, label);
}

static PaddockProcessItem *
list_item_process (GtkListItem *list_item)
{
  return gtk_tree_list_row_get_item (gtk_list_item_get_item (list_item));
}

static void
bind_pid_cb (GtkSignalListItemFactory *factory,
             GtkListItem              *list_item,
             PaddockProcessesView     *self)
{
  g_autoptr(PaddockProcessItem) process = list_item_process (list_item);
  char text[16];

  g_snprintf (text, sizeof text, "%u", paddock_process_item_get_pid (process));
  gtk_label_set_label (GTK_LABEL (gtk_list_item_get_child (list_item)), text);
}

static void
bind_state_cb (GtkSignalListItemFactory *factory,
               GtkListItem              *list_item,
               PaddockProcessesView     *self)
{
  g_autoptr(PaddockProcessItem) process = list_item_process (list_item);

  gtk_label_set_label (GTK_LABEL (gtk_list_item_get_child (list_item)),
                       paddock_process_item_get_state_label (process));
}

static void
bind_command_line_cb (GtkSignalListItemFactory *factory,
                      GtkListItem              *list_item,
                      PaddockProcessesView     *self)
{
  g_autoptr(PaddockProcessItem) process = list_item_process (list_item);

  gtk_label_set_label (GTK_LABEL (gtk_list_item_get_child (list_item)),
                       paddock_process_item_get_command_line (process));
}

static void
selection_changed_cb (PaddockProcessesView *self)
{
  update_actions (self);
}

/* GObject */

static void
paddock_processes_view_dispose (GObject *object)
{
  PaddockProcessesView *self = (PaddockProcessesView *)object;

  g_clear_handle_id (&self->refresh_id, g_source_remove);
  g_cancellable_cancel (self->cancellable);
  if (self->kill_dialog != NULL)
    gtk_window_destroy (GTK_WINDOW (g_steal_pointer (&self->kill_dialog)));
  gtk_widget_dispose_template (GTK_WIDGET (self), PADDOCK_TYPE_PROCESSES_VIEW);
  g_clear_object (&self->tree);
  g_clear_object (&self->item);

  G_OBJECT_CLASS (paddock_processes_view_parent_class)->dispose (object);
}

static void
paddock_processes_view_finalize (GObject *object)
{
  PaddockProcessesView *self = (PaddockProcessesView *)object;

  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->by_pid, g_hash_table_unref);
  g_clear_object (&self->roots);

  G_OBJECT_CLASS (paddock_processes_view_parent_class)->finalize (object);
}

static void
paddock_processes_view_get_property (GObject    *object,
                                     guint       prop_id,
                                     GValue     *value,
                                     GParamSpec *pspec)
{
  PaddockProcessesView *self = PADDOCK_PROCESSES_VIEW (object);

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
paddock_processes_view_set_property (GObject      *object,
                                     guint         prop_id,
                                     const GValue *value,
                                     GParamSpec   *pspec)
{
  PaddockProcessesView *self = PADDOCK_PROCESSES_VIEW (object);

  switch (prop_id)
    {
    case PROP_ITEM:
      paddock_processes_view_set_item (self, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_processes_view_class_init (PaddockProcessesViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = paddock_processes_view_dispose;
  object_class->finalize = paddock_processes_view_finalize;
  object_class->get_property = paddock_processes_view_get_property;
  object_class->set_property = paddock_processes_view_set_property;

  widget_class->map = paddock_processes_view_map;
  widget_class->unmap = paddock_processes_view_unmap;

  properties[PROP_ITEM] =
    g_param_spec_object ("item", NULL, NULL,
                         PADDOCK_TYPE_SESSION_ITEM,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/paddock/Paddock/paddock-processes-view.ui");
  gtk_widget_class_bind_template_child (widget_class, PaddockProcessesView, stack);
  gtk_widget_class_bind_template_child (widget_class, PaddockProcessesView, column_view);
  gtk_widget_class_bind_template_child (widget_class, PaddockProcessesView, selection);
  gtk_widget_class_bind_template_child (widget_class, PaddockProcessesView, count_label);
  gtk_widget_class_bind_template_child (widget_class, PaddockProcessesView, unavailable_page);
  gtk_widget_class_bind_template_callback (widget_class, setup_command_cb);
  gtk_widget_class_bind_template_callback (widget_class, bind_command_cb);
  gtk_widget_class_bind_template_callback (widget_class, setup_label_cb);
  gtk_widget_class_bind_template_callback (widget_class, setup_numeric_cb);
  gtk_widget_class_bind_template_callback (widget_class, setup_dim_label_cb);
  gtk_widget_class_bind_template_callback (widget_class, bind_pid_cb);
  gtk_widget_class_bind_template_callback (widget_class, bind_state_cb);
  gtk_widget_class_bind_template_callback (widget_class, bind_command_line_cb);
  gtk_widget_class_bind_template_callback (widget_class, selection_changed_cb);

  gtk_widget_class_install_action (widget_class, "processes.kill", NULL, paddock_processes_view_kill_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Delete, 0, "processes.kill", NULL);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "processesview");
}

static void
paddock_processes_view_init (PaddockProcessesView *self)
{
  self->roots = g_list_store_new (PADDOCK_TYPE_PROCESS_ITEM);
  self->by_pid = g_hash_table_new_full (NULL, NULL, NULL, g_object_unref);
  self->cancellable = g_cancellable_new ();

  gtk_widget_init_template (GTK_WIDGET (self));

  /* Every row open: a session's tree is small and its shape is the point. */
  self->tree = gtk_tree_list_model_new (g_object_ref (G_LIST_MODEL (self->roots)), FALSE, TRUE,
                                        create_children_cb, NULL, NULL);
  gtk_single_selection_set_model (self->selection, G_LIST_MODEL (self->tree));
  paddock_processes_view_update_page (self);
  update_actions (self);
}

GtkWidget *
paddock_processes_view_new (void)
{
  return g_object_new (PADDOCK_TYPE_PROCESSES_VIEW, NULL);
}

PaddockSessionItem *
paddock_processes_view_get_item (PaddockProcessesView *self)
{
  g_return_val_if_fail (PADDOCK_IS_PROCESSES_VIEW (self), NULL);
  return self->item;
}

void
paddock_processes_view_set_item (PaddockProcessesView *self,
                                 PaddockSessionItem   *item)
{
  g_autoptr(GVariant) none = NULL;

  g_return_if_fail (PADDOCK_IS_PROCESSES_VIEW (self));
  g_return_if_fail (item == NULL || PADDOCK_IS_SESSION_ITEM (item));

  if (self->item == item)
    return;

  paddock_processes_view_stop_refreshing (self);
  g_set_object (&self->item, item);
  none = g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("(uusss)"), NULL, 0));
  paddock_processes_view_set_processes (self, none);
  if (gtk_widget_get_mapped (GTK_WIDGET (self)))
    {
      paddock_processes_view_refresh (self);
      self->refresh_id = g_timeout_add (REFRESH_INTERVAL_MS, refresh_cb, self);
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ITEM]);
}

/**
 * paddock_processes_view_get_roots:
 *
 * Returns: (transfer none): the processes without a listed parent, as
 *   #PaddockProcessItem; each one's children hang from it
 */
GListModel *
paddock_processes_view_get_roots (PaddockProcessesView *self)
{
  g_return_val_if_fail (PADDOCK_IS_PROCESSES_VIEW (self), NULL);
  return G_LIST_MODEL (self->roots);
}

GtkSingleSelection *
paddock_processes_view_get_selection (PaddockProcessesView *self)
{
  g_return_val_if_fail (PADDOCK_IS_PROCESSES_VIEW (self), NULL);
  return self->selection;
}

/* Selects the row of @pid, as a click would; FALSE when it is not shown. */
gboolean
paddock_processes_view_select_pid (PaddockProcessesView *self,
                                   guint                 pid)
{
  GListModel *rows;

  g_return_val_if_fail (PADDOCK_IS_PROCESSES_VIEW (self), FALSE);

  rows = G_LIST_MODEL (self->tree);
  for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (rows, i);
      g_autoptr(PaddockProcessItem) process = gtk_tree_list_row_get_item (row);

      if (paddock_process_item_get_pid (process) == pid)
        {
          gtk_single_selection_set_selected (self->selection, i);
          return TRUE;
        }
    }
  return FALSE;
}

/**
 * paddock_processes_view_get_kill_dialog:
 *
 * Returns: (transfer none) (nullable): the confirmation shown, if any
 */
GtkWidget *
paddock_processes_view_get_kill_dialog (PaddockProcessesView *self)
{
  g_return_val_if_fail (PADDOCK_IS_PROCESSES_VIEW (self), NULL);
  return self->kill_dialog;
}

/* "processes", "empty" or "unavailable". */
const char *
paddock_processes_view_get_page (PaddockProcessesView *self)
{
  g_return_val_if_fail (PADDOCK_IS_PROCESSES_VIEW (self), NULL);
  return gtk_stack_get_visible_child_name (self->stack);
}
