/* paddock-session-record.c — a session's durable record (session.json): write and read
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The record is what a restarted daemon knows of a session: what it ran,
 * how it ended, and which processes (by pid, start time and boot) may
 * still be left of it. This file only turns a PaddockSessionRecord into
 * JSON and back; the session decides what to record and what a record
 * read back means (paddock-session-impl.c), and paddock-record-writer.c
 * puts the text on disk durably.
 */

#include "config.h"

#include <string.h>

#include "paddock-domain-rules.h"
#include "paddock-error.h"
#include "paddock-session-record.h"

void
paddock_session_record_clear (PaddockSessionRecord *record)
{
  g_clear_pointer (&record->id, g_free);
  g_clear_pointer (&record->name, g_free);
  g_clear_pointer (&record->workspace, g_free);
  g_clear_pointer (&record->command, g_strfreev);
  g_clear_pointer (&record->profile, g_free);
  g_clear_pointer (&record->owner, g_free);
  g_clear_pointer (&record->state, g_free);
  g_clear_pointer (&record->boot_id, g_free);
  g_clear_pointer (&record->net, g_free);
  g_clear_pointer (&record->allow_domains, g_strfreev);
  g_clear_pointer (&record->staging, g_free);
  g_clear_pointer (&record->cgroup, g_free);
  g_clear_pointer (&record->damaged, g_free);
  g_clear_pointer (&record->leftovers, g_array_unref);
  g_clear_pointer (&record->root, json_node_unref);
}

void
paddock_session_record_free (PaddockSessionRecord *record)
{
  if (record == NULL)
    return;
  paddock_session_record_clear (record);
  g_free (record);
}

static char *
node_to_json (JsonNode *root)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();

  json_generator_set_root (generator, root);
  json_generator_set_pretty (generator, TRUE);
  return json_generator_to_data (generator, NULL);
}

static void
add_string (JsonBuilder *builder,
            const char  *name,
            const char  *value)
{
  json_builder_set_member_name (builder, name);
  json_builder_add_string_value (builder, value);
}

static void
add_int (JsonBuilder *builder,
         const char  *name,
         gint64       value)
{
  json_builder_set_member_name (builder, name);
  json_builder_add_int_value (builder, value);
}

static void
add_strv (JsonBuilder        *builder,
          const char         *name,
          const char * const *values)
{
  json_builder_set_member_name (builder, name);
  json_builder_begin_array (builder);
  for (guint i = 0; values != NULL && values[i] != NULL; i++)
    json_builder_add_string_value (builder, values[i]);
  json_builder_end_array (builder);
}

void
paddock_session_record_set_config (PaddockSessionRecord       *record,
                                   const PaddockSessionConfig *config)
{
  record->workspace = g_strdup (config->workspace);
  record->command = g_strdupv (config->command);
  record->profile = g_strdup (config->profile);
  record->owner = g_strdup (config->owner);
  record->net = g_strdup (config->net_mode);
  record->allow_domains = g_strdupv (config->allow_domains);
  record->staging = g_strdup (config->staging);
  record->stage_limit = config->stage_limit;
}

/* The record as session.json's text (version 1), members in the order
 * every daemon wrote them. */
char *
paddock_session_record_to_json (const PaddockSessionRecord *record)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;

  g_return_val_if_fail (record != NULL, NULL);
  g_return_val_if_fail (record->command != NULL, NULL);

  json_builder_begin_object (builder);
  add_int (builder, "version", 1);
  add_string (builder, "id", record->id);
  add_string (builder, "name", record->name);
  add_string (builder, "workspace", record->workspace);
  add_strv (builder, "command", (const char * const *) record->command);
  add_string (builder, "profile", record->profile);
  add_string (builder, "owner", record->owner);
  add_string (builder, "state", record->state);
  add_int (builder, "exit_status", record->exit_status);
  add_int (builder, "created", record->created);
  add_int (builder, "pid", record->pid);
  add_int (builder, "pid_start_time", (gint64) record->pid_start_time);
  json_builder_set_member_name (builder, "sandboxed");
  json_builder_add_boolean_value (builder, record->sandboxed);
  if (record->keeper_pid > 0)
    {
      add_int (builder, "keeper_pid", record->keeper_pid);
      add_int (builder, "keeper_start_time", (gint64) record->keeper_start_time);
    }
  add_int (builder, "init_pid", record->init_pid);
  add_int (builder, "init_start_time", (gint64) record->init_start_time);
  add_string (builder, "boot_id", record->boot_id);
  add_string (builder, "net", record->net);
  add_strv (builder, "allow_domains", (const char * const *) record->allow_domains);
  add_string (builder, "staging", record->staging != NULL ? record->staging : "none");
  /* Only a limit the creator chose: an older daemon's record (and one of
   * a session left at the default) reads back as 0, the default. */
  if (record->stage_limit != 0)
    add_int (builder, "stage_limit", (gint64) MIN (record->stage_limit, (guint64) G_MAXINT64));
  add_string (builder, "cgroup", record->cgroup != NULL ? record->cgroup : "");
  if (record->damaged != NULL && record->damaged[0] != '\0')
    add_string (builder, "damaged", record->damaged);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  return node_to_json (root);
}

/* The earlier daemon's record @earlier as it is, with one member set:
 * "leftovers", the processes @named (the ones without a start time left
 * out: nothing could tell them from a stranger reusing the pid). */
char *
paddock_session_record_to_json_with_leftovers (JsonNode                          *earlier,
                                               const PaddockSessionRecordProcess *named,
                                               guint                              n_named)
{
  g_autoptr(JsonNode) record = NULL;
  JsonArray *array;

  g_return_val_if_fail (earlier != NULL && JSON_NODE_HOLDS_OBJECT (earlier), NULL);
  g_return_val_if_fail (named != NULL || n_named == 0, NULL);

  record = json_node_copy (earlier);
  array = json_array_new ();
  for (guint i = 0; i < n_named && i < PADDOCK_SESSION_RECORD_LEFTOVERS_MAX; i++)
    {
      JsonArray *entry;

      if (named[i].start_time == 0)
        continue;
      entry = json_array_sized_new (2);
      json_array_add_int_element (entry, named[i].pid);
      json_array_add_int_element (entry, (gint64) named[i].start_time);
      json_array_add_array_element (array, entry);
    }
  json_object_set_array_member (json_node_get_object (record), "leftovers", array);

  return node_to_json (record);
}

static JsonArray *
get_array_member (JsonObject *object,
                  const char *name)
{
  return json_object_has_member (object, name) &&
         JSON_NODE_HOLDS_ARRAY (json_object_get_member (object, name))
         ? json_object_get_array_member (object, name) : NULL;
}

/**
 * paddock_session_record_load:
 *
 * Reads a record back. Only a record without an id of 12 characters or
 * without a command is refused (%PADDOCK_ERROR_FAILED); any other member
 * missing gets a default: name the id, workspace "/", profile "safe",
 * owner "", state "stopped", exit status -1, sandboxed, net "host",
 * staging "none" (its limit 0: the default), not damaged, every number 0. Values are as the file has them: the
 * caller checks what it relies on (a net mode, a staging kind, a pid's
 * range).
 */
PaddockSessionRecord *
paddock_session_record_load (const char  *path,
                             GError     **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();

  g_return_val_if_fail (path != NULL, NULL);

  if (!json_parser_load_from_file (parser, path, error))
    return NULL;

  return paddock_session_record_new_from_node (json_parser_get_root (parser), path, error);
}

/* paddock_session_record_load() of a record already parsed (@root, read
 * from @path, which only names it in errors): the same checks and defaults. */
PaddockSessionRecord *
paddock_session_record_new_from_node (JsonNode    *root,
                                      const char  *path,
                                      GError     **error)
{
  g_autoptr(PaddockSessionRecord) record = NULL;
  JsonObject *object;
  JsonArray *command;
  JsonArray *allow;
  JsonArray *named;
  const char *id;

  g_return_val_if_fail (path != NULL, NULL);

  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED, "%s is not a session record", path);
      return NULL;
    }

  object = json_node_get_object (root);
  id = json_object_get_string_member_with_default (object, "id", NULL);
  command = get_array_member (object, "command");
  if (id == NULL || strlen (id) != 12 || command == NULL || json_array_get_length (command) == 0)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED, "%s is not a session record", path);
      return NULL;
    }

  record = g_new0 (PaddockSessionRecord, 1);
  record->root = json_node_copy (root);
  record->id = g_strdup (id);
  record->command = g_new0 (char *, json_array_get_length (command) + 1);
  for (guint i = 0; i < json_array_get_length (command); i++)
    record->command[i] = g_strdup (json_array_get_string_element (command, i));
  record->name = g_strdup (json_object_get_string_member_with_default (object, "name", id));
  record->workspace = g_strdup (json_object_get_string_member_with_default (object, "workspace", "/"));
  record->profile = g_strdup (json_object_get_string_member_with_default (object, "profile", "safe"));
  record->owner = g_strdup (json_object_get_string_member_with_default (object, "owner", ""));
  record->state = g_strdup (json_object_get_string_member_with_default (object, "state", "stopped"));
  record->exit_status = (gint) json_object_get_int_member_with_default (object, "exit_status", -1);
  record->created = json_object_get_int_member_with_default (object, "created", 0);
  record->pid = json_object_get_int_member_with_default (object, "pid", 0);
  record->pid_start_time = (guint64) json_object_get_int_member_with_default (object, "pid_start_time", 0);
  record->sandboxed = json_object_get_boolean_member_with_default (object, "sandboxed", TRUE);
  record->keeper_pid = json_object_get_int_member_with_default (object, "keeper_pid", 0);
  record->keeper_start_time = (guint64) json_object_get_int_member_with_default (object, "keeper_start_time", 0);
  record->init_pid = json_object_get_int_member_with_default (object, "init_pid", 0);
  record->init_start_time = (guint64) json_object_get_int_member_with_default (object, "init_start_time", 0);
  record->boot_id = g_strdup (json_object_get_string_member_with_default (object, "boot_id", ""));
  record->net = g_strdup (json_object_get_string_member_with_default (object, "net", "host"));
  record->staging = g_strdup (json_object_get_string_member_with_default (object, "staging", "none"));
  record->stage_limit = (guint64) MAX (json_object_get_int_member_with_default (object, "stage_limit", 0), 0);
  record->cgroup = g_strdup (json_object_get_string_member_with_default (object, "cgroup", NULL));
  record->damaged = g_strdup (json_object_get_string_member_with_default (object, "damaged", NULL));
  if (record->damaged != NULL && record->damaged[0] == '\0')
    g_clear_pointer (&record->damaged, g_free);

  /* Bounded as CreateSession bounds it; only its strings. */
  allow = get_array_member (object, "allow_domains");
  if (allow != NULL && json_array_get_length (allow) <= PADDOCK_DOMAIN_RULES_MAX_PATTERNS)
    {
      record->allow_domains = g_new0 (char *, json_array_get_length (allow) + 1);
      for (guint i = 0, j = 0; i < json_array_get_length (allow); i++)
        if (JSON_NODE_HOLDS_VALUE (json_array_get_element (allow, i)) &&
            json_node_get_value_type (json_array_get_element (allow, i)) == G_TYPE_STRING)
          record->allow_domains[j++] = g_strdup (json_array_get_string_element (allow, i));
    }

  /* [pid, start time] pairs, both positive integers, the pid an int. */
  record->leftovers = g_array_new (FALSE, FALSE, sizeof (PaddockSessionRecordProcess));
  named = get_array_member (object, "leftovers");
  for (guint i = 0; named != NULL && i < json_array_get_length (named) &&
                    i < PADDOCK_SESSION_RECORD_LEFTOVERS_MAX; i++)
    {
      JsonNode *node = json_array_get_element (named, i);
      JsonArray *entry = JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;
      PaddockSessionRecordProcess process;

      if (entry == NULL || json_array_get_length (entry) != 2 ||
          json_node_get_value_type (json_array_get_element (entry, 0)) != G_TYPE_INT64 ||
          json_node_get_value_type (json_array_get_element (entry, 1)) != G_TYPE_INT64)
        continue;
      process.pid = json_array_get_int_element (entry, 0);
      process.start_time = (guint64) json_array_get_int_element (entry, 1);
      if (process.pid > 0 && process.pid < G_MAXINT && json_array_get_int_element (entry, 1) > 0)
        g_array_append_val (record->leftovers, process);
    }

  return g_steal_pointer (&record);
}
