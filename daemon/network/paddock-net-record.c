/* paddock-net-record.c — one proxied request or tunnel, as the session's audit sees it
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <string.h>

#include "paddock-domain-rules.h"
#include "paddock-net-record.h"

/* A record is written from untrusted request data: keep each text field
 * bounded so that a ring of records stays bounded too. */
#define MAX_FIELD_LEN 1024

struct _PaddockNetRecord
{
  GObject            parent_instance;

  gint64             time_usec;
  char              *method;
  char              *host;
  guint              port;
  PaddockNetVerdict  verdict;
  guint64            bytes_up;
  guint64            bytes_down;
  gint64             duration_ms;
  char              *error;
  guint64            seq;         /* 0 until a journal numbers it */
};

G_DEFINE_FINAL_TYPE (PaddockNetRecord, paddock_net_record, G_TYPE_OBJECT)

static void
paddock_net_record_finalize (GObject *object)
{
  PaddockNetRecord *self = PADDOCK_NET_RECORD (object);

  g_clear_pointer (&self->method, g_free);
  g_clear_pointer (&self->host, g_free);
  g_clear_pointer (&self->error, g_free);

  G_OBJECT_CLASS (paddock_net_record_parent_class)->finalize (object);
}

static void
paddock_net_record_class_init (PaddockNetRecordClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = paddock_net_record_finalize;
}

static void
paddock_net_record_init (PaddockNetRecord *self)
{
  self->verdict = PADDOCK_NET_VERDICT_ERROR;
}

const char *
paddock_net_verdict_to_string (PaddockNetVerdict verdict)
{
  switch (verdict)
    {
    case PADDOCK_NET_VERDICT_ALLOWED:
      return "allowed";
    case PADDOCK_NET_VERDICT_DENIED:
      return "denied";
    case PADDOCK_NET_VERDICT_ERROR:
      return "error";
    default:
      g_return_val_if_reached ("error");
    }
}

gboolean
paddock_net_verdict_from_string (const char        *text,
                                 PaddockNetVerdict *out_verdict)
{
  if (g_strcmp0 (text, "allowed") == 0)
    *out_verdict = PADDOCK_NET_VERDICT_ALLOWED;
  else if (g_strcmp0 (text, "denied") == 0)
    *out_verdict = PADDOCK_NET_VERDICT_DENIED;
  else if (g_strcmp0 (text, "error") == 0)
    *out_verdict = PADDOCK_NET_VERDICT_ERROR;
  else
    return FALSE;
  return TRUE;
}

/* Untrusted bytes become valid, bounded UTF-8 before they are kept. */
static char *
clean_text (const char *text)
{
  g_autofree char *valid = NULL;
  gsize len;

  if (text == NULL)
    return g_strdup ("");

  len = strnlen (text, MAX_FIELD_LEN);
  valid = g_utf8_make_valid (text, (gssize) len);
  for (char *p = valid; *p != '\0'; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      *p = '?';
  return g_steal_pointer (&valid);
}

PaddockNetRecord *
paddock_net_record_new (gint64      time_usec,
                        const char *method,
                        const char *host,
                        guint       port)
{
  PaddockNetRecord *self = g_object_new (PADDOCK_TYPE_NET_RECORD, NULL);

  self->time_usec = time_usec;
  self->method = clean_text (method);
  self->host = clean_text (host);
  self->port = port;
  self->error = g_strdup ("");
  return self;
}

gint64
paddock_net_record_get_time (PaddockNetRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NET_RECORD (self), 0);
  return self->time_usec;
}

const char *
paddock_net_record_get_method (PaddockNetRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NET_RECORD (self), NULL);
  return self->method;
}

const char *
paddock_net_record_get_host (PaddockNetRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NET_RECORD (self), NULL);
  return self->host;
}

guint
paddock_net_record_get_port (PaddockNetRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NET_RECORD (self), 0);
  return self->port;
}

PaddockNetVerdict
paddock_net_record_get_verdict (PaddockNetRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NET_RECORD (self), PADDOCK_NET_VERDICT_ERROR);
  return self->verdict;
}

guint64
paddock_net_record_get_bytes_up (PaddockNetRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NET_RECORD (self), 0);
  return self->bytes_up;
}

guint64
paddock_net_record_get_bytes_down (PaddockNetRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NET_RECORD (self), 0);
  return self->bytes_down;
}

gint64
paddock_net_record_get_duration_ms (PaddockNetRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NET_RECORD (self), 0);
  return self->duration_ms;
}

/* Returns: "" when the request did not fail. */
const char *
paddock_net_record_get_error (PaddockNetRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NET_RECORD (self), NULL);
  return self->error;
}

void
paddock_net_record_set_target (PaddockNetRecord *self,
                               const char       *method,
                               const char       *host,
                               guint             port)
{
  char *new_method, *new_host;

  g_return_if_fail (PADDOCK_IS_NET_RECORD (self));

  /* Either argument may be the record's own current string. */
  new_method = clean_text (method);
  new_host = clean_text (host);
  g_free (self->method);
  self->method = new_method;
  g_free (self->host);
  self->host = new_host;
  self->port = port;
}

void
paddock_net_record_set_verdict (PaddockNetRecord  *self,
                                PaddockNetVerdict  verdict,
                                const char        *error)
{
  char *new_error;

  g_return_if_fail (PADDOCK_IS_NET_RECORD (self));

  new_error = clean_text (error);  /* @error may be self->error */
  self->verdict = verdict;
  g_free (self->error);
  self->error = new_error;
}

void
paddock_net_record_add_bytes (PaddockNetRecord *self,
                              guint64           up,
                              guint64           down)
{
  g_return_if_fail (PADDOCK_IS_NET_RECORD (self));

  self->bytes_up += up;
  self->bytes_down += down;
}

void
paddock_net_record_set_duration_ms (PaddockNetRecord *self,
                                    gint64            duration_ms)
{
  g_return_if_fail (PADDOCK_IS_NET_RECORD (self));

  self->duration_ms = MAX (duration_ms, 0);
}

/**
 * paddock_net_record_to_json:
 *
 * The `net records` element of INTERFACES.md — `time` (unix µs), `method`,
 * `host`, `port`, `verdict`, `bytes_up`, `bytes_down` — plus `duration_ms`
 * and `error` ("" when none).
 */
JsonNode *
paddock_net_record_to_json (PaddockNetRecord *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  g_return_val_if_fail (PADDOCK_IS_NET_RECORD (self), NULL);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "time");
  json_builder_add_int_value (builder, self->time_usec);
  json_builder_set_member_name (builder, "method");
  json_builder_add_string_value (builder, self->method);
  json_builder_set_member_name (builder, "host");
  json_builder_add_string_value (builder, self->host);
  json_builder_set_member_name (builder, "port");
  json_builder_add_int_value (builder, self->port);
  json_builder_set_member_name (builder, "verdict");
  json_builder_add_string_value (builder, paddock_net_verdict_to_string (self->verdict));
  json_builder_set_member_name (builder, "bytes_up");
  json_builder_add_int_value (builder, (gint64) MIN (self->bytes_up, (guint64) G_MAXINT64));
  json_builder_set_member_name (builder, "bytes_down");
  json_builder_add_int_value (builder, (gint64) MIN (self->bytes_down, (guint64) G_MAXINT64));
  json_builder_set_member_name (builder, "duration_ms");
  json_builder_add_int_value (builder, self->duration_ms);
  json_builder_set_member_name (builder, "error");
  json_builder_add_string_value (builder, self->error);
  if (self->seq != 0)
    {
      json_builder_set_member_name (builder, "seq");
      json_builder_add_int_value (builder, (gint64) MIN (self->seq, (guint64) G_MAXINT64));
    }
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}

static gboolean
get_int (JsonObject  *object,
         const char  *name,
         gint64       min,
         gint64       max,
         gint64      *out_value,
         GError     **error)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_INT64 ||
      json_node_get_int (node) < min || json_node_get_int (node) > max)
    {
      g_set_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_CORRUPT,
                   "Record field “%s” is missing or out of range", name);
      return FALSE;
    }
  *out_value = json_node_get_int (node);
  return TRUE;
}

static const char *
get_string (JsonObject  *object,
            const char  *name,
            gboolean     optional,
            GError     **error)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL && optional)
    return "";
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_STRING)
    {
      g_set_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_CORRUPT,
                   "Record field “%s” is missing or not a string", name);
      return NULL;
    }
  return json_node_get_string (node);
}

PaddockNetRecord *
paddock_net_record_new_from_json (JsonNode  *node,
                                  GError   **error)
{
  g_autoptr(PaddockNetRecord) self = NULL;
  JsonObject *object;
  const char *method, *host, *verdict_text, *error_text;
  gint64 time_usec, port, bytes_up, bytes_down, duration_ms = 0, seq = 0;
  PaddockNetVerdict verdict;

  g_return_val_if_fail (node != NULL, NULL);

  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_CORRUPT,
                   "A record is not a JSON object");
      return NULL;
    }
  object = json_node_get_object (node);

  if (!get_int (object, "time", 0, G_MAXINT64, &time_usec, error) ||
      !get_int (object, "port", 0, 65535, &port, error) ||
      !get_int (object, "bytes_up", 0, G_MAXINT64, &bytes_up, error) ||
      !get_int (object, "bytes_down", 0, G_MAXINT64, &bytes_down, error))
    return NULL;
  if (json_object_has_member (object, "duration_ms") &&
      !get_int (object, "duration_ms", 0, G_MAXINT64, &duration_ms, error))
    return NULL;
  if (json_object_has_member (object, "seq") &&
      !get_int (object, "seq", 0, G_MAXINT64, &seq, error))
    return NULL;
  if ((method = get_string (object, "method", FALSE, error)) == NULL ||
      (host = get_string (object, "host", FALSE, error)) == NULL ||
      (verdict_text = get_string (object, "verdict", FALSE, error)) == NULL ||
      (error_text = get_string (object, "error", TRUE, error)) == NULL)
    return NULL;
  if (!paddock_net_verdict_from_string (verdict_text, &verdict))
    {
      g_set_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_CORRUPT,
                   "Unknown verdict in a record");
      return NULL;
    }

  self = paddock_net_record_new (time_usec, method, host, (guint) port);
  paddock_net_record_set_verdict (self, verdict, error_text);
  self->bytes_up = (guint64) bytes_up;
  self->bytes_down = (guint64) bytes_down;
  self->duration_ms = duration_ms;
  self->seq = (guint64) seq;
  return g_steal_pointer (&self);
}

/* Where the record stands in its session's journal: 1, 2, 3…; 0 before a
 * journal took it. */
guint64
paddock_net_record_get_seq (PaddockNetRecord *self)
{
  g_return_val_if_fail (PADDOCK_IS_NET_RECORD (self), 0);
  return self->seq;
}

void
paddock_net_record_set_seq (PaddockNetRecord *self,
                            guint64           seq)
{
  g_return_if_fail (PADDOCK_IS_NET_RECORD (self));
  self->seq = seq;
}

/**
 * paddock_net_record_new_from_line:
 * @line: one line of a journal file, without its newline
 *
 * What the journal's loader reads, one line at a time: a torn or altered
 * line (empty, blank, not JSON, not a record) is a typed error, never a
 * critical, so that a damaged file loads what it still holds. Fuzzed by
 * tests/fuzz/fuzz-net-record.c.
 *
 * Returns: (transfer full): the record, or %NULL with a
 *   %PADDOCK_NETWORK_ERROR_CORRUPT error
 */
PaddockNetRecord *
paddock_net_record_new_from_line (const char  *line,
                                  GError     **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) local_error = NULL;
  JsonNode *root;

  g_return_val_if_fail (line != NULL, NULL);

  if (!json_parser_load_from_data (parser, line, -1, &local_error))
    {
      g_set_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_CORRUPT,
                   "A record line is not JSON: %s", local_error->message);
      return NULL;
    }
  /* A blank line parses, to nothing. */
  root = json_parser_get_root (parser);
  if (root == NULL)
    {
      g_set_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_CORRUPT,
                   "A record line is empty");
      return NULL;
    }
  return paddock_net_record_new_from_json (root, error);
}
