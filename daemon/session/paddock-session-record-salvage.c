/* paddock-session-record-salvage.c — what a damaged session record still tells
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A session whose session.json cannot be read (cut short by a crash of
 * the filesystem, a full disk under another writer, an editor) must not
 * vanish: its stage may hold work nobody applied. The record is read as
 * far as it is whole (records are written member by member, id and
 * workspace first), what is missing is taken from the session's folder
 * (its name is the id, stage/upper or stage/copy the staging kind), and
 * the session is listed as damaged, with the reason.
 *
 * Nothing is guessed that could do harm: without a workspace the stage is
 * not attached (applying it to a default "/" would write who knows where),
 * and the session can only be destroyed.
 */

#include "config.h"

#include <string.h>

#include "paddock-session-record-salvage.h"

/* The longest prefix of @text that is a JSON object of whole members:
 * @text cut after its last complete top-level member, closed with "}".
 * Parses a few candidates from the end; NULL when none parses. */
static JsonNode *
parse_whole_members (const char *text,
                     gsize       length)
{
  g_autoptr(GArray) cuts = g_array_new (FALSE, FALSE, sizeof (gsize));
  gboolean in_string = FALSE;
  gboolean escaped = FALSE;
  gint depth = 0;
  gsize start = 0;

  /* Skip to the opening brace: anything else is not a record at all. */
  while (start < length && g_ascii_isspace (text[start]))
    start++;
  if (start >= length || text[start] != '{')
    return NULL;

  for (gsize i = start; i < length; i++)
    {
      char c = text[i];

      if (c == '\0')
        break;
      if (in_string)
        {
          if (escaped)
            escaped = FALSE;
          else if (c == '\\')
            escaped = TRUE;
          else if (c == '"')
            in_string = FALSE;
          continue;
        }
      if (c == '"')
        in_string = TRUE;
      else if (c == '{' || c == '[')
        depth++;
      else if (c == '}' || c == ']')
        {
          depth--;
          if (depth <= 0)
            break;
        }
      else if (c == ',' && depth == 1)
        g_array_append_val (cuts, i);
    }

  /* Whole, but not a record (no id, no command): all of it is usable. */
  {
    g_autoptr(JsonParser) parser = json_parser_new ();

    if (json_parser_load_from_data (parser, text, (gssize) length, NULL) &&
        JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
      return json_node_copy (json_parser_get_root (parser));
  }

  /* The last few cuts only: the damage is at the end, or this is not a
   * truncated record and nothing is to be had. */
  for (guint n = 0; n < cuts->len && n < 8; n++)
    {
      gsize cut = g_array_index (cuts, gsize, cuts->len - 1 - n);
      g_autofree char *candidate = g_strdup_printf ("%.*s}", (int) cut, text);
      g_autoptr(JsonParser) parser = json_parser_new ();

      if (json_parser_load_from_data (parser, candidate, -1, NULL) &&
          JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        return json_node_copy (json_parser_get_root (parser));
    }

  return NULL;
}

/* @name's value if it is a string; NULL when absent or of another type. */
static const char *
string_member (JsonObject *object,
               const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

/* Session ids are 12 lowercase hex digits (the manager's new_session_id());
 * anything else in sessions/ (".spare", a marker) is no session. */
gboolean
paddock_session_record_is_session_id (const char *name)
{
  if (name == NULL || strlen (name) != 12)
    return FALSE;
  return strspn (name, "0123456789abcdef") == 12;
}

/* The staging kind the session's folder shows (a record cut short may
 * have lost its "staging" member, the last but one). */
static const char *
staging_from_folder (const char *session_dir)
{
  g_autofree char *upper = g_build_filename (session_dir, "stage", "upper", NULL);
  g_autofree char *copy = g_build_filename (session_dir, "stage", "copy", NULL);

  if (g_file_test (upper, G_FILE_TEST_IS_DIR))
    return "overlay";
  if (g_file_test (copy, G_FILE_TEST_IS_DIR))
    return "copy";
  return "none";
}

/**
 * paddock_session_record_salvage:
 * @path: the record paddock_session_record_load() refused
 * @folder_id: the name of the session's folder: its id
 * @load_error: why it was refused, for @out_reason
 * @out_reason: (out): why the session is damaged, what was lost
 *
 * Returns a record of what @path still tells plus what its folder does,
 * or NULL when @folder_id is no session id.
 */
PaddockSessionRecord *
paddock_session_record_salvage (const char  *path,
                                const char  *folder_id,
                                const char  *load_error,
                                char       **out_reason)
{
  g_autofree char *session_dir = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GString) lost = g_string_new (NULL);
  g_autoptr(GMappedFile) mapped = NULL;
  JsonObject *object;
  const char *id;
  gboolean has_workspace;

  g_return_val_if_fail (path != NULL && out_reason != NULL, NULL);

  *out_reason = NULL;
  if (!paddock_session_record_is_session_id (folder_id))
    return NULL;

  session_dir = g_path_get_dirname (path);
  mapped = g_mapped_file_new (path, FALSE, NULL);
  if (mapped != NULL && g_mapped_file_get_length (mapped) <= PADDOCK_SESSION_RECORD_SALVAGE_MAX_BYTES)
    root = parse_whole_members (g_mapped_file_get_contents (mapped), g_mapped_file_get_length (mapped));
  if (root == NULL)
    {
      root = json_node_new (JSON_NODE_OBJECT);
      json_node_take_object (root, json_object_new ());
    }
  object = json_node_get_object (root);

  /* The folder's name is the id the daemon gave it; a record naming
   * another is not this session's. */
  id = string_member (object, "id");
  if (g_strcmp0 (id, folder_id) != 0)
    json_object_set_string_member (object, "id", folder_id);

  if (!json_object_has_member (object, "command") ||
      !JSON_NODE_HOLDS_ARRAY (json_object_get_member (object, "command")) ||
      json_array_get_length (json_object_get_array_member (object, "command")) == 0)
    {
      JsonArray *command = json_array_new ();

      json_array_add_string_element (command, "(unknown)");
      json_object_set_array_member (object, "command", command);
      g_string_append (lost, ", command");
    }

  has_workspace = string_member (object, "workspace") != NULL &&
                  g_path_is_absolute (string_member (object, "workspace"));
  if (string_member (object, "staging") == NULL)
    json_object_set_string_member (object, "staging", staging_from_folder (session_dir));
  if (!has_workspace)
    {
      /* See above: no stage to apply without knowing where to. */
      json_object_set_string_member (object, "workspace", "");
      json_object_set_string_member (object, "staging", "none");
      g_string_append (lost, ", workspace (its stage stays on disk but cannot be applied)");
    }
  if (!json_object_has_member (object, "state"))
    json_object_set_string_member (object, "state", "stopped");

  *out_reason = g_strdup_printf ("the session record is damaged (%s)%s%s", load_error,
                                 lost->len > 0 ? "; lost: " : "",
                                 lost->len > 0 ? lost->str + 2 : "");
  /* Kept in the record from now on (see PaddockSessionRecord's
   * "damaged"): the session's next record is whole again, and would
   * otherwise read back as a session that never lost anything. */
  json_object_set_string_member (object, "damaged", *out_reason);

  return paddock_session_record_new_from_node (root, path, NULL);
}
