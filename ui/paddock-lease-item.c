/* paddock-lease-item.c — one port lease as the daemon describes it
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "paddock-lease-item.h"
#include "paddock-reserved-ports.h"

/* An immutable snapshot of one lease: the daemon never edits a lease in
 * place, it replaces it through LeasesChanged, so the item needs no
 * notifications after construction. */
struct _PaddockLeaseItem
{
  GObject  parent_instance;

  char    *name;
  char    *owner;
  /* "command (pid N)" when the daemon knows it; shown instead of the bus name */
  char    *owner_label;
  char    *session;
  char    *state;
  guint16  port;
};

G_DEFINE_FINAL_TYPE (PaddockLeaseItem, paddock_lease_item, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_PORT,
  PROP_NAME,
  PROP_OWNER,
  PROP_SESSION,
  PROP_STATE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
paddock_lease_item_finalize (GObject *object)
{
  PaddockLeaseItem *self = (PaddockLeaseItem *)object;

  g_clear_pointer (&self->name, g_free);
  g_clear_pointer (&self->owner, g_free);
  g_clear_pointer (&self->owner_label, g_free);
  g_clear_pointer (&self->session, g_free);
  g_clear_pointer (&self->state, g_free);

  G_OBJECT_CLASS (paddock_lease_item_parent_class)->finalize (object);
}

static void
paddock_lease_item_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  PaddockLeaseItem *self = PADDOCK_LEASE_ITEM (object);

  switch (prop_id)
    {
    case PROP_PORT:
      g_value_set_uint (value, self->port);
      break;

    case PROP_NAME:
      g_value_set_string (value, self->name);
      break;

    case PROP_OWNER:
      g_value_set_string (value, self->owner);
      break;

    case PROP_SESSION:
      g_value_set_string (value, self->session);
      break;

    case PROP_STATE:
      g_value_set_string (value, self->state);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_lease_item_set_property (GObject      *object,
                                 guint         prop_id,
                                 const GValue *value,
                                 GParamSpec   *pspec)
{
  PaddockLeaseItem *self = PADDOCK_LEASE_ITEM (object);

  /* Construct-only: a NULL string is kept as "" so getters never return NULL. */
  switch (prop_id)
    {
    case PROP_PORT:
      self->port = (guint16)g_value_get_uint (value);
      break;

    case PROP_NAME:
      self->name = g_strdup (g_value_get_string (value) ?: "");
      break;

    case PROP_OWNER:
      self->owner = g_strdup (g_value_get_string (value) ?: "");
      break;

    case PROP_SESSION:
      self->session = g_strdup (g_value_get_string (value) ?: "");
      break;

    case PROP_STATE:
      self->state = g_strdup (g_value_get_string (value) ?: "held");
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
paddock_lease_item_class_init (PaddockLeaseItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = paddock_lease_item_finalize;
  object_class->get_property = paddock_lease_item_get_property;
  object_class->set_property = paddock_lease_item_set_property;

  properties[PROP_PORT] =
    g_param_spec_uint ("port", NULL, NULL,
                       0, G_MAXUINT16, 0,
                       (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  properties[PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL,
                         NULL,
                         (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  properties[PROP_OWNER] =
    g_param_spec_string ("owner", NULL, NULL,
                         NULL,
                         (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  properties[PROP_SESSION] =
    g_param_spec_string ("session", NULL, NULL,
                         NULL,
                         (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  properties[PROP_STATE] =
    g_param_spec_string ("state", NULL, NULL,
                         NULL,
                         (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
paddock_lease_item_init (PaddockLeaseItem *self)
{
}

PaddockLeaseItem *
paddock_lease_item_new (guint16     port,
                        const char *name,
                        const char *owner,
                        const char *session,
                        const char *state)
{
  return g_object_new (PADDOCK_TYPE_LEASE_ITEM,
                       "port", (guint)port,
                       "name", name,
                       "owner", owner,
                       "session", session,
                       "state", state,
                       NULL);
}

/**
 * paddock_lease_item_new_from_variant:
 * @lease: an `a{sv}` lease dictionary from org.paddock.Ports1
 *
 * Missing or mistyped keys read as empty (the daemon may add keys; a client
 * must not fail on an older or newer daemon).
 *
 * Returns: (transfer full): a new item
 */
PaddockLeaseItem *
paddock_lease_item_new_from_variant (GVariant *lease)
{
  guint16 port = 0;
  const char *name = NULL;
  const char *owner = NULL;
  const char *session = NULL;
  const char *state = NULL;
  const char *owner_label = NULL;
  PaddockLeaseItem *item;

  g_return_val_if_fail (lease != NULL, NULL);
  g_return_val_if_fail (g_variant_is_of_type (lease, G_VARIANT_TYPE_VARDICT), NULL);

  g_variant_lookup (lease, "port", "q", &port);
  g_variant_lookup (lease, "name", "&s", &name);
  g_variant_lookup (lease, "owner", "&s", &owner);
  g_variant_lookup (lease, "session", "&s", &session);
  g_variant_lookup (lease, "state", "&s", &state);
  g_variant_lookup (lease, "owner-label", "&s", &owner_label);

  item = paddock_lease_item_new (port, name, owner, session, state);
  item->owner_label = g_strdup (owner_label);
  return item;
}

/* What to show for the owner: the program when the daemon told us which,
 * else the raw owner (a bus name or "session:ID"). */
const char *
paddock_lease_item_get_owner_label (PaddockLeaseItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_LEASE_ITEM (self), NULL);

  if (self->owner_label != NULL && self->owner_label[0] != '\0')
    return self->owner_label;
  return self->owner;
}

guint16
paddock_lease_item_get_port (PaddockLeaseItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_LEASE_ITEM (self), 0);

  return self->port;
}

const char *
paddock_lease_item_get_name (PaddockLeaseItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_LEASE_ITEM (self), NULL);

  return self->name;
}

const char *
paddock_lease_item_get_owner (PaddockLeaseItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_LEASE_ITEM (self), NULL);

  return self->owner;
}

const char *
paddock_lease_item_get_session (PaddockLeaseItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_LEASE_ITEM (self), NULL);

  return self->session;
}

/**
 * paddock_lease_item_is_reserved:
 *
 * Whether this is one of a session's reserved ports, not named yet
 * (Session1.LeasePort names them): held for the session, but nothing is
 * forwarded to it, so there is no address to open.
 */
gboolean
paddock_lease_item_is_reserved (PaddockLeaseItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_LEASE_ITEM (self), FALSE);

  return paddock_lease_is_reserved (self->session, self->name);
}

const char *
paddock_lease_item_get_state (PaddockLeaseItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_LEASE_ITEM (self), NULL);

  return self->state;
}

gboolean
paddock_lease_item_is_lost (PaddockLeaseItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_LEASE_ITEM (self), FALSE);

  /* Anything the daemon does not hold right now, "in-use" aside, is lost
   * to us: unknown future states included. */
  return g_strcmp0 (self->state, "held") != 0 && g_strcmp0 (self->state, "in-use") != 0;
}

/**
 * paddock_lease_item_dup_url:
 *
 * Returns: (transfer full): the lease as a loopback URL, "http://127.0.0.1:PORT"
 */
char *
paddock_lease_item_dup_url (PaddockLeaseItem *self)
{
  g_return_val_if_fail (PADDOCK_IS_LEASE_ITEM (self), NULL);

  return g_strdup_printf ("http://127.0.0.1:%u", (guint)self->port);
}
