/* paddock-network-record.c — one request the session's proxy saw
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "paddock-network-record.h"

/* A record never changes once the proxy wrote it: plain fields, read by
 * the view's factories. */
struct _PaddockNetworkRecord
{
  GObject  parent_instance;

  guint64  seq;
  gint64   time;        /* µs since the epoch */
  char    *method;
  char    *host;
  guint16  port;
  char    *verdict;     /* allowed, denied or error */
  guint64  bytes_up;
  guint64  bytes_down;
  guint    duration_ms;
};

G_DEFINE_FINAL_TYPE (PaddockNetworkRecord, paddock_network_record, G_TYPE_OBJECT)

static void
paddock_network_record_finalize (GObject *object)
{
  PaddockNetworkRecord *self = (PaddockNetworkRecord *)object;

  g_clear_pointer (&self->method, g_free);
  g_clear_pointer (&self->host, g_free);
  g_clear_pointer (&self->verdict, g_free);

  G_OBJECT_CLASS (paddock_network_record_parent_class)->finalize (object);
}

static void
paddock_network_record_class_init (PaddockNetworkRecordClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = paddock_network_record_finalize;
}

static void
paddock_network_record_init (PaddockNetworkRecord *self)
{
}

static char *
dup_string (GVariant   *record,
            const char *key)
{
  const char *value = NULL;

  if (!g_variant_lookup (record, key, "&s", &value))
    return g_strdup ("");
  return g_utf8_make_valid (value, -1);
}

/**
 * paddock_network_record_new_from_variant:
 * @record: an `a{sv}` as Session1.ListNetworkRecords and NetworkRecord give it
 *
 * Missing or mistyped keys read as empty or zero: the record is shown
 * with what it has.
 *
 * Returns: (transfer full): the record
 */
PaddockNetworkRecord *
paddock_network_record_new_from_variant (GVariant *record)
{
  PaddockNetworkRecord *self;
  guint32 port = 0;
  gint64 duration_ms = 0;

  g_return_val_if_fail (g_variant_is_of_type (record, G_VARIANT_TYPE_VARDICT), NULL);

  /* The types Session1.ListNetworkRecords documents: a lookup of another
   * type finds nothing, and the row would say port 0. */
  self = g_object_new (PADDOCK_TYPE_NETWORK_RECORD, NULL);
  g_variant_lookup (record, "seq", "t", &self->seq);
  g_variant_lookup (record, "time", "x", &self->time);
  g_variant_lookup (record, "port", "u", &port);
  g_variant_lookup (record, "bytes_up", "t", &self->bytes_up);
  g_variant_lookup (record, "bytes_down", "t", &self->bytes_down);
  g_variant_lookup (record, "duration_ms", "x", &duration_ms);
  self->port = (guint16) MIN (port, G_MAXUINT16);
  self->duration_ms = (guint) CLAMP (duration_ms, 0, G_MAXUINT);
  self->method = dup_string (record, "method");
  self->host = dup_string (record, "host");
  self->verdict = dup_string (record, "verdict");

  return self;
}

guint64
paddock_network_record_get_seq (PaddockNetworkRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NETWORK_RECORD (self), 0);
  return self->seq;
}

gint64
paddock_network_record_get_time (PaddockNetworkRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NETWORK_RECORD (self), 0);
  return self->time;
}

const char *
paddock_network_record_get_method (PaddockNetworkRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NETWORK_RECORD (self), NULL);
  return self->method;
}

const char *
paddock_network_record_get_host (PaddockNetworkRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NETWORK_RECORD (self), NULL);
  return self->host;
}

guint16
paddock_network_record_get_port (PaddockNetworkRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NETWORK_RECORD (self), 0);
  return self->port;
}

const char *
paddock_network_record_get_verdict (PaddockNetworkRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NETWORK_RECORD (self), NULL);
  return self->verdict;
}

guint64
paddock_network_record_get_bytes_up (PaddockNetworkRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NETWORK_RECORD (self), 0);
  return self->bytes_up;
}

guint64
paddock_network_record_get_bytes_down (PaddockNetworkRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NETWORK_RECORD (self), 0);
  return self->bytes_down;
}

guint
paddock_network_record_get_duration_ms (PaddockNetworkRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NETWORK_RECORD (self), 0);
  return self->duration_ms;
}

gboolean
paddock_network_record_is_allowed (PaddockNetworkRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NETWORK_RECORD (self), FALSE);
  return g_strcmp0 (self->verdict, "allowed") == 0;
}
