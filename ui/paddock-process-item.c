/* paddock-process-item.c — one process of a session, a node of the process tree
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gi18n.h>

#include "paddock-process-item.h"

/* A pid and its parent never change for one process, so they are
 * construct-only: a row with a known pid but another parent is another
 * process (the pid was reused) and gets a new item. The children store
 * is what the tree list model expands. */
struct _PaddockProcessItem
{
  GObject     parent_instance;

  guint       pid;
  guint       ppid;
  char       *state;
  char       *name;
  char       *command_line;
  GListStore *children;
};

G_DEFINE_FINAL_TYPE (PaddockProcessItem, paddock_process_item, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_PID,
  PROP_PPID,
  PROP_STATE,
  PROP_STATE_LABEL,
  PROP_NAME,
  PROP_COMMAND_LINE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
paddock_process_item_finalize (GObject *object)
{
  PaddockProcessItem *self = (PaddockProcessItem *)object;

  g_clear_pointer (&self->state, g_free);
  g_clear_pointer (&self->name, g_free);
  g_clear_pointer (&self->command_line, g_free);
  g_clear_object (&self->children);

  G_OBJECT_CLASS (paddock_process_item_parent_class)->finalize (object);
}

static void
paddock_process_item_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  PaddockProcessItem *self = PADDOCK_PROCESS_ITEM (object);

  switch (prop_id)
    {
    case PROP_PID:
      g_value_set_uint (value, self->pid);
      break;
    case PROP_PPID:
      g_value_set_uint (value, self->ppid);
      break;
    case PROP_STATE:
      g_value_set_string (value, self->state);
      break;
    case PROP_STATE_LABEL:
      g_value_set_string (value, paddock_process_item_get_state_label (self));
      break;
    case PROP_NAME:
      g_value_set_string (value, self->name);
      break;
    case PROP_COMMAND_LINE:
      g_value_set_string (value, self->command_line);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_process_item_set_property (GObject      *object,
                                   guint         prop_id,
                                   const GValue *value,
                                   GParamSpec   *pspec)
{
  PaddockProcessItem *self = PADDOCK_PROCESS_ITEM (object);

  switch (prop_id)
    {
    case PROP_PID:
      self->pid = g_value_get_uint (value);
      break;
    case PROP_PPID:
      self->ppid = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_process_item_class_init (PaddockProcessItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = paddock_process_item_finalize;
  object_class->get_property = paddock_process_item_get_property;
  object_class->set_property = paddock_process_item_set_property;

  properties[PROP_PID] =
    g_param_spec_uint ("pid", NULL, NULL, 0, G_MAXUINT, 0,
                       (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));
  properties[PROP_PPID] =
    g_param_spec_uint ("ppid", NULL, NULL, 0, G_MAXUINT, 0,
                       (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));
  properties[PROP_STATE] =
    g_param_spec_string ("state", NULL, NULL, "",
                         (G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));
  properties[PROP_STATE_LABEL] =
    g_param_spec_string ("state-label", NULL, NULL, "",
                         (G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));
  properties[PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, "",
                         (G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));
  properties[PROP_COMMAND_LINE] =
    g_param_spec_string ("command-line", NULL, NULL, "",
                         (G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
paddock_process_item_init (PaddockProcessItem *self)
{
  self->state = g_strdup ("");
  self->name = g_strdup ("");
  self->command_line = g_strdup ("");
  self->children = g_list_store_new (PADDOCK_TYPE_PROCESS_ITEM);
}

PaddockProcessItem *
paddock_process_item_new (guint pid,
                          guint ppid)
{
  return g_object_new (PADDOCK_TYPE_PROCESS_ITEM, "pid", pid, "ppid", ppid, NULL);
}

static gboolean
replace_string (char       **field,
                const char  *value)
{
  if (g_strcmp0 (*field, value) == 0)
    return FALSE;
  g_free (*field);
  *field = g_strdup (value != NULL ? value : "");
  return TRUE;
}

/**
 * paddock_process_item_update:
 *
 * Takes what the daemon lists now; notifies only what changed, so that a
 * refresh of an unchanged tree redraws nothing.
 *
 * Returns: whether anything changed
 */
gboolean
paddock_process_item_update (PaddockProcessItem *self,
                             const char         *state,
                             const char         *name,
                             const char         *command_line)
{
  gboolean changed = FALSE;

  g_return_val_if_fail (PADDOCK_IS_PROCESS_ITEM (self), FALSE);

  if (replace_string (&self->state, state))
    {
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE_LABEL]);
      changed = TRUE;
    }
  if (replace_string (&self->name, name))
    {
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_NAME]);
      changed = TRUE;
    }
  if (replace_string (&self->command_line, command_line))
    {
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COMMAND_LINE]);
      changed = TRUE;
    }
  return changed;
}

guint
paddock_process_item_get_pid (PaddockProcessItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_PROCESS_ITEM (self), 0);
  return self->pid;
}

guint
paddock_process_item_get_ppid (PaddockProcessItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_PROCESS_ITEM (self), 0);
  return self->ppid;
}

const char *
paddock_process_item_get_state (PaddockProcessItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_PROCESS_ITEM (self), NULL);
  return self->state;
}

/* The letters of /proc/PID/stat, in words (proc(5)). */
const char *
paddock_process_item_get_state_label (PaddockProcessItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_PROCESS_ITEM (self), NULL);

  switch (self->state[0])
    {
    case 'R':
      return _("Running");
    case 'S':
      return _("Sleeping");
    case 'D':
      return _("Waiting on disk");
    case 'T':
      return _("Stopped");
    case 't':
      return _("Traced");
    case 'Z':
      return _("Zombie");
    case 'X':
      return _("Dead");
    case 'I':
      return _("Idle");
    case '\0':
      return "";
    default:
      return self->state;
    }
}

const char *
paddock_process_item_get_name (PaddockProcessItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_PROCESS_ITEM (self), NULL);
  return self->name;
}

const char *
paddock_process_item_get_command_line (PaddockProcessItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_PROCESS_ITEM (self), NULL);
  return self->command_line;
}

/**
 * paddock_process_item_get_children:
 *
 * Returns: (transfer none): the processes whose parent this one is
 */
GListStore *
paddock_process_item_get_children (PaddockProcessItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_PROCESS_ITEM (self), NULL);
  return self->children;
}
