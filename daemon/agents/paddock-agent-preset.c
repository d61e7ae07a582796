/* paddock-agent-preset.c — an agent preset: what one agent needs, read from data/agents/NAME.json
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Presets are data so that a new agent, or a new host an agent needs, is a
 * file and not a release: the installed ones (datadir/paddock/agents) are
 * overridden file by file by ~/.config/paddock/agents/NAME.json. A preset
 * is read whole or refused: a typo in a user's override is an error naming
 * the file and the field, never a preset silently missing its domains.
 */

#include "config.h"

#include "paddock-agent-preset.h"

#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paddock-error.h"
#include "paddock-autofd.h"

/* Bounds of the lists a preset holds: each is read into the sandbox's
 * arguments or the proxy's rules, so none may grow without limit. */
#define MAX_LIST_ITEMS   64
#define MAX_STRING_BYTES 512

void
paddock_agent_preset_free (PaddockAgentPreset *preset)
{
  if (preset == NULL)
    return;
  g_free (preset->name);
  g_free (preset->title);
  g_strfreev (preset->programs);
  g_strfreev (preset->search);
  g_free (preset->install_hint);
  g_strfreev (preset->home_persist);
  g_strfreev (preset->domains);
  g_clear_pointer (&preset->ports, g_array_unref);
  g_strfreev (preset->env_set);
  g_strfreev (preset->env_pass);
  g_strfreev (preset->login);
  g_strfreev (preset->credentials);
  g_free (preset->source);
  g_free (preset);
}

gboolean
paddock_agent_name_is_valid (const char *name)
{
  size_t n = name != NULL ? strlen (name) : 0;

  if (n == 0 || n > PADDOCK_AGENT_NAME_MAX)
    return FALSE;
  for (size_t i = 0; i < n; i++)
    if (!g_ascii_islower (name[i]) && !g_ascii_isdigit (name[i]) && name[i] != '-' && name[i] != '_')
      return FALSE;
  return TRUE;
}

static gboolean
is_env_name (const char *name)
{
  if (name[0] == '\0' || g_ascii_isdigit (name[0]))
    return FALSE;
  for (const char *p = name; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '_')
      return FALSE;
  return TRUE;
}

/* A relative path of plain components (what the sandbox's --expose takes
 * too): nothing a preset names may leave the HOME it is relative to. */
static gboolean
is_plain_relative (const char *path)
{
  g_auto(GStrv) parts = g_strsplit (path, "/", -1);

  if (path[0] == '\0' || strlen (path) > 256)
    return FALSE;
  for (guint i = 0; parts[i] != NULL; i++)
    if (parts[i][0] == '\0' || g_str_equal (parts[i], ".") || g_str_equal (parts[i], ".."))
      return FALSE;
  return TRUE;
}

typedef enum
{
  ITEM_ANY,
  ITEM_PROGRAM,    /* a file name: no '/' */
  ITEM_RELATIVE,   /* a plain path relative to HOME */
  ITEM_FOLDER,     /* absolute, or "~/" and a plain relative path */
  ITEM_ENV_NAME,
  ITEM_DOMAIN,     /* one token, no spaces, no '/' */
} ItemKind;

static gboolean
item_ok (const char *item,
         ItemKind    kind)
{
  if (strlen (item) > MAX_STRING_BYTES || !g_utf8_validate (item, -1, NULL))
    return FALSE;
  for (const char *p = item; *p != '\0'; p++)
    if ((guchar) *p < 0x20)
      return FALSE;
  switch (kind)
    {
    case ITEM_ANY:
      return TRUE;
    case ITEM_PROGRAM:
      return item[0] != '\0' && strchr (item, '/') == NULL && !g_str_equal (item, ".") && !g_str_equal (item, "..");
    case ITEM_RELATIVE:
      return is_plain_relative (item);
    case ITEM_FOLDER:
      if (g_str_has_prefix (item, "~/"))
        return is_plain_relative (item + 2);
      return g_path_is_absolute (item) && strstr (item, "/../") == NULL && !g_str_has_suffix (item, "/..");
    case ITEM_ENV_NAME:
      return is_env_name (item);
    case ITEM_DOMAIN:
      return item[0] != '\0' && strpbrk (item, " /\\") == NULL;
    default:
      return FALSE;
    }
}

static gboolean
fail (GError    **error,
      const char *path,
      const char *field,
      const char *why)
{
  g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
               "Agent preset %s: field “%s” %s", path, field, why);
  return FALSE;
}

/* @object's member @member (a dotted @field for messages): an array of
 * strings of @kind, at most MAX_LIST_ITEMS. Missing: empty, unless
 * @required. */
static gboolean
read_strv (JsonObject  *object,
           const char  *member,
           const char  *field,
           ItemKind     kind,
           gboolean     required,
           const char  *path,
           GStrv       *out,
           GError     **error)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, member) : NULL;
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_free);
  JsonArray *array;

  if (node == NULL)
    {
      if (required)
        return fail (error, path, field, "is missing (a list of strings)");
      *out = g_new0 (char *, 1);
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return fail (error, path, field, "must be a list of strings");
  array = json_node_get_array (node);
  if (json_array_get_length (array) > MAX_LIST_ITEMS)
    return fail (error, path, field, "has more than 64 entries");
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *element = json_array_get_element (array, i);
      const char *text;

      if (!JSON_NODE_HOLDS_VALUE (element) || json_node_get_value_type (element) != G_TYPE_STRING)
        return fail (error, path, field, "must hold only strings");
      text = json_node_get_string (element);
      if (!item_ok (text, kind))
        {
          g_autofree char *why = g_strdup_printf ("has an invalid entry “%s”%s", text,
                                                  kind == ITEM_PROGRAM ? " (a program name, no “/”)" :
                                                  kind == ITEM_RELATIVE ? " (a path relative to HOME, no “..”)" :
                                                  kind == ITEM_FOLDER ? " (an absolute folder or “~/…”)" :
                                                  kind == ITEM_ENV_NAME ? " (a variable name)" : "");
          return fail (error, path, field, why);
        }
      g_ptr_array_add (items, g_strdup (text));
    }
  if (required && items->len == 0)
    return fail (error, path, field, "must name at least one");
  g_ptr_array_add (items, NULL);
  *out = (GStrv) g_ptr_array_free (g_steal_pointer (&items), FALSE);
  return TRUE;
}

static gboolean
read_string (JsonObject  *object,
             const char  *member,
             gboolean     required,
             const char  *path,
             char       **out,
             GError     **error)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL)
    {
      if (required)
        return fail (error, path, member, "is missing (a string)");
      *out = g_strdup ("");
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING ||
      !item_ok (json_node_get_string (node), ITEM_ANY))
    return fail (error, path, member, "must be a string of one line (at most 512 bytes)");
  *out = g_strdup (json_node_get_string (node));
  return TRUE;
}

/* An optional member that must be an object when present; NULL when absent. */
static gboolean
read_object (JsonObject  *object,
             const char  *member,
             const char  *path,
             JsonObject **out,
             GError     **error)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, member) : NULL;

  *out = NULL;
  if (node == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return fail (error, path, member, "must be an object");
  *out = json_node_get_object (node);
  return TRUE;
}

static gboolean
read_bool (JsonObject  *object,
           const char  *member,
           const char  *field,
           const char  *path,
           gboolean    *out,
           GError     **error)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, member) : NULL;

  *out = FALSE;
  if (node == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
    return fail (error, path, field, "must be true or false");
  *out = json_node_get_boolean (node);
  return TRUE;
}

/* The file's bytes, bounded before anything is allocated for them. */
static char *
read_bounded (const char *path,
              gsize      *out_length,
              GError    **error)
{
  paddock_autofd int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  g_autofree char *data = NULL;
  struct stat st;
  gsize done = 0;

  if (fd < 0 || fstat (fd, &st) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, PADDOCK_ERROR, saved_errno == ENOENT ? PADDOCK_ERROR_NOT_FOUND : PADDOCK_ERROR_FAILED,
                   "Agent preset %s: %s", path, g_strerror (saved_errno));
      return NULL;
    }
  if (!S_ISREG (st.st_mode) || st.st_size > PADDOCK_AGENT_PRESET_MAX_BYTES)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                   "Agent preset %s: not a regular file of at most %d KiB", path,
                   PADDOCK_AGENT_PRESET_MAX_BYTES / 1024);
      return NULL;
    }
  data = g_malloc (PADDOCK_AGENT_PRESET_MAX_BYTES + 1);
  for (;;)
    {
      ssize_t n = read (fd, data + done, PADDOCK_AGENT_PRESET_MAX_BYTES + 1 - done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved_errno = errno;

          g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED, "Agent preset %s: %s", path,
                       g_strerror (saved_errno));
          return NULL;
        }
      if (n == 0)
        break;
      done += (gsize) n;
      if (done > PADDOCK_AGENT_PRESET_MAX_BYTES)
        {
          /* It grew since fstat(). */
          g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                       "Agent preset %s: larger than %d KiB", path, PADDOCK_AGENT_PRESET_MAX_BYTES / 1024);
          return NULL;
        }
    }
  data[done] = '\0';
  *out_length = done;
  return g_steal_pointer (&data);
}

/**
 * paddock_agent_preset_load_file:
 * @path: a preset file, NAME.json
 *
 * Returns: (transfer full): the preset, or NULL with InvalidArgument
 *   naming @path and the field that is wrong (NotFound: no file).
 */
PaddockAgentPreset *
paddock_agent_preset_load_file (const char  *path,
                                GError     **error)
{
  g_autoptr(PaddockAgentPreset) preset = g_new0 (PaddockAgentPreset, 1);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) parse_error = NULL;
  g_autofree char *data = NULL;
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *file_name = NULL;
  g_autofree char *declared = NULL;
  JsonObject *root;
  JsonObject *install = NULL;
  JsonObject *home = NULL;
  JsonObject *network = NULL;
  JsonObject *env = NULL;
  JsonObject *env_set = NULL;
  gsize length = 0;

  data = read_bounded (path, &length, error);
  if (data == NULL)
    return NULL;
  if (!json_parser_load_from_data (parser, data, (gssize) length, &parse_error))
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                   "Agent preset %s: not JSON: %s", path, parse_error->message);
      return NULL;
    }
  if (json_parser_get_root (parser) == NULL || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                   "Agent preset %s: not a JSON object", path);
      return NULL;
    }
  root = json_node_get_object (json_parser_get_root (parser));
  preset->source = g_strdup (path);

  /* The file's name is the preset's: an override replaces the file of the
   * same name, so "name" inside must agree with it. */
  file_name = g_str_has_suffix (base, ".json") ? g_strndup (base, strlen (base) - 5) : g_strdup (base);
  if (!paddock_agent_name_is_valid (file_name))
    {
      fail (error, path, "name", "comes from the file's name, which must be 1–32 of a-z, 0-9, - and _ before .json");
      return NULL;
    }
  if (!read_string (root, "name", FALSE, path, &declared, error))
    return NULL;
  if (declared[0] != '\0' && !g_str_equal (declared, file_name))
    {
      g_autofree char *why = g_strdup_printf ("is “%s”, but the file is named for “%s”", declared, file_name);

      fail (error, path, "name", why);
      return NULL;
    }
  preset->name = g_steal_pointer (&file_name);

  if (!read_string (root, "title", TRUE, path, &preset->title, error) ||
      !read_strv (root, "programs", "programs", ITEM_PROGRAM, TRUE, path, &preset->programs, error) ||
      !read_strv (root, "search", "search", ITEM_FOLDER, FALSE, path, &preset->search, error) ||
      !read_string (root, "install_hint", FALSE, path, &preset->install_hint, error) ||
      !read_object (root, "install", path, &install, error) ||
      !read_bool (install, "package_tree", "install.package_tree", path, &preset->package_tree, error) ||
      !read_bool (install, "node_runtime", "install.node_runtime", path, &preset->node_runtime, error) ||
      !read_object (root, "home", path, &home, error) ||
      !read_strv (home, "persist", "home.persist", ITEM_RELATIVE, FALSE, path, &preset->home_persist, error) ||
      !read_object (root, "network", path, &network, error) ||
      !read_strv (network, "domains", "network.domains", ITEM_DOMAIN, FALSE, path, &preset->domains, error) ||
      !read_object (root, "env", path, &env, error) ||
      !read_object (env, "set", path, &env_set, error) ||
      !read_strv (env, "pass", "env.pass", ITEM_ENV_NAME, FALSE, path, &preset->env_pass, error) ||
      !read_strv (root, "login", "login", ITEM_ANY, FALSE, path, &preset->login, error) ||
      !read_strv (root, "credentials", "credentials", ITEM_RELATIVE, FALSE, path, &preset->credentials, error))
    return NULL;

  preset->ports = g_array_new (FALSE, FALSE, sizeof (guint16));
  {
    JsonNode *node = network != NULL ? json_object_get_member (network, "ports") : NULL;

    if (node != NULL && !JSON_NODE_HOLDS_ARRAY (node))
      {
        fail (error, path, "network.ports", "must be a list of port numbers");
        return NULL;
      }
    for (guint i = 0; node != NULL && i < json_array_get_length (json_node_get_array (node)); i++)
      {
        JsonNode *element = json_array_get_element (json_node_get_array (node), i);
        gint64 port;
        guint16 p16;

        if (i >= MAX_LIST_ITEMS || !JSON_NODE_HOLDS_VALUE (element) ||
            json_node_get_value_type (element) != G_TYPE_INT64 ||
            (port = json_node_get_int (element)) < 1 || port > 65535)
          {
            fail (error, path, "network.ports", "must hold at most 64 port numbers, 1–65535");
            return NULL;
          }
        p16 = (guint16) port;
        g_array_append_val (preset->ports, p16);
      }
  }

  {
    g_autoptr(GPtrArray) set = g_ptr_array_new_with_free_func (g_free);
    g_autoptr(GList) members = env_set != NULL ? json_object_get_members (env_set) : NULL;

    if (g_list_length (members) > MAX_LIST_ITEMS)
      {
        fail (error, path, "env.set", "has more than 64 variables");
        return NULL;
      }
    for (GList *l = members; l != NULL; l = l->next)
      {
        JsonNode *value = json_object_get_member (env_set, l->data);
        g_autofree char *field = g_strdup_printf ("env.set.%s", (const char *) l->data);

        if (!item_ok (l->data, ITEM_ENV_NAME))
          {
            fail (error, path, "env.set", "has a name that is not a variable name");
            return NULL;
          }
        /* HOME and PATH are the session's: a preset cannot move them. */
        if (g_str_equal (l->data, "HOME") || g_str_equal (l->data, "PATH"))
          {
            fail (error, path, field, "cannot be set by a preset (the session sets it)");
            return NULL;
          }
        if (!JSON_NODE_HOLDS_VALUE (value) || json_node_get_value_type (value) != G_TYPE_STRING ||
            !item_ok (json_node_get_string (value), ITEM_ANY))
          {
            fail (error, path, field, "must be a string of one line");
            return NULL;
          }
        g_ptr_array_add (set, g_strdup_printf ("%s=%s", (const char *) l->data, json_node_get_string (value)));
      }
    g_ptr_array_add (set, NULL);
    preset->env_set = (GStrv) g_ptr_array_free (g_steal_pointer (&set), FALSE);
  }
  return g_steal_pointer (&preset);
}

/**
 * paddock_agent_presets_system_dir:
 *
 * Returns: where the installed presets are: the daemon's own
 *   PADDOCK_AGENTS_DIR (for running from a build tree and for tests), else
 *   datadir/paddock/agents.
 */
const char *
paddock_agent_presets_system_dir (void)
{
  const char *dir = g_getenv ("PADDOCK_AGENTS_DIR");

  return dir != NULL && g_path_is_absolute (dir) ? dir : PADDOCK_DATADIR "/paddock/agents";
}

char *
paddock_agent_presets_user_dir (void)
{
  return g_build_filename (g_get_user_config_dir (), "paddock", "agents", NULL);
}

/* Adds the names NAME of @dir's NAME.json files to @names (bounded). */
static void
list_names (const char *dir,
            GPtrArray  *names)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *entry;
  guint seen = 0;

  while (d != NULL && (entry = g_dir_read_name (d)) != NULL && seen < PADDOCK_AGENT_PRESET_MAX_FILES)
    {
      g_autofree char *name = NULL;

      if (!g_str_has_suffix (entry, ".json"))
        continue;
      name = g_strndup (entry, strlen (entry) - 5);
      if (!paddock_agent_name_is_valid (name))
        continue;
      seen++;
      if (!g_ptr_array_find_with_equal_func (names, name, g_str_equal, NULL))
        g_ptr_array_add (names, g_steal_pointer (&name));
    }
}

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/**
 * paddock_agent_preset_find:
 * @name: a preset's name
 *
 * The user's ~/.config/paddock/agents/NAME.json when there is one, else
 * the installed one.
 *
 * Returns: (transfer full): the preset, or NULL: InvalidArgument (a bad
 *   name or file), NotFound (no such preset, saying where it looked).
 */
PaddockAgentPreset *
paddock_agent_preset_find (const char  *name,
                           GError     **error)
{
  g_autofree char *user_dir = paddock_agent_presets_user_dir ();
  g_autofree char *file = g_strconcat (name, ".json", NULL);
  g_autofree char *user_path = NULL;
  g_autofree char *system_path = NULL;

  if (!paddock_agent_name_is_valid (name))
    {
      g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                           "An agent preset's name is 1–32 of a-z, 0-9, - and _");
      return NULL;
    }
  user_path = g_build_filename (user_dir, file, NULL);
  if (g_file_test (user_path, G_FILE_TEST_EXISTS))
    return paddock_agent_preset_load_file (user_path, error);
  system_path = g_build_filename (paddock_agent_presets_system_dir (), file, NULL);
  if (g_file_test (system_path, G_FILE_TEST_EXISTS))
    return paddock_agent_preset_load_file (system_path, error);
  g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
               "No agent preset “%s” (looked for %s and %s)", name, user_path, system_path);
  return NULL;
}

/**
 * paddock_agent_presets_list_names:
 *
 * Returns: (transfer full): the names of the presets, the user's and the
 *   installed ones, sorted, each once.
 */
GStrv
paddock_agent_presets_list_names (void)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *user_dir = paddock_agent_presets_user_dir ();

  list_names (user_dir, names);
  list_names (paddock_agent_presets_system_dir (), names);
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  return (GStrv) g_ptr_array_free (g_steal_pointer (&names), FALSE);
}

/**
 * paddock_agent_presets_load_all:
 * @out_errors: (out) (optional): GError* of the files that could not be read
 *
 * Returns: (transfer full): PaddockAgentPreset*, by name, each the user's
 *   override where there is one.
 */
GPtrArray *
paddock_agent_presets_load_all (GPtrArray **out_errors)
{
  g_auto(GStrv) names = paddock_agent_presets_list_names ();
  g_autoptr(GPtrArray) presets = g_ptr_array_new_with_free_func ((GDestroyNotify) paddock_agent_preset_free);
  g_autoptr(GPtrArray) errors = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);

  for (guint i = 0; names[i] != NULL; i++)
    {
      GError *error = NULL;
      PaddockAgentPreset *preset = paddock_agent_preset_find (names[i], &error);

      if (preset != NULL)
        g_ptr_array_add (presets, preset);
      else
        g_ptr_array_add (errors, error);
    }
  if (out_errors != NULL)
    *out_errors = g_steal_pointer (&errors);
  return g_steal_pointer (&presets);
}
