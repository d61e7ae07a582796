/* paddock-agent-discovery.c — where a preset's program is installed, and what its install needs
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The daemon is often started by D-Bus activation, with no login shell
 * and so no PATH of the user's: `npm i -g` into ~/.npm-global, nvm's
 * node, ~/.local/bin are all invisible to it. So it looks where those
 * tools install, by their own conventions (npm's prefix from ~/.npmrc or
 * NPM_CONFIG_PREFIX, nvm/fnm/volta/bun/pnpm folders), then the system's.
 * A program found is resolved to the file it links to; what that file
 * needs to run is named: its package tree (node_modules/PKG, which holds
 * its dependencies) and the node runtime its "#!" line asks for, each to
 * be shown read-only in the view at its own path — never the whole HOME.
 */

#include "config.h"

#include "paddock-agent-discovery.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-error.h"

/* Folders the safe view shows from the host anyway (paddock-sandbox.c). */
static const char *const system_roots[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", NULL };

/* Version folders of one node manager that are looked in, newest first. */
#define MAX_VERSIONS 8

void
paddock_agent_found_free (PaddockAgentFound *found)
{
  if (found == NULL)
    return;
  g_free (found->program);
  g_free (found->resolved);
  g_strfreev (found->view);
  g_strfreev (found->path_dirs);
  g_strfreev (found->looked);
  g_free (found);
}

static gboolean
under (const char *path,
       const char *root)
{
  size_t n = strlen (root);

  return strncmp (path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static gboolean
in_system_roots (const char *path)
{
  for (guint i = 0; system_roots[i] != NULL; i++)
    if (under (path, system_roots[i]))
      return TRUE;
  return FALSE;
}

static void
add_dir (GPtrArray  *dirs,
         char       *dir)
{
  if (dir == NULL || !g_path_is_absolute (dir) || g_ptr_array_find_with_equal_func (dirs, dir, g_str_equal, NULL))
    {
      g_free (dir);
      return;
    }
  g_ptr_array_add (dirs, dir);
}

static char *
expand_home (const char *text,
             const char *home)
{
  if (g_str_has_prefix (text, "~/"))
    return g_build_filename (home, text + 2, NULL);
  if (g_str_has_prefix (text, "${HOME}/"))
    return g_build_filename (home, text + 8, NULL);
  if (g_str_has_prefix (text, "$HOME/"))
    return g_build_filename (home, text + 6, NULL);
  return g_canonicalize_filename (text, "/");
}

/* npm's `prefix=` in ~/.npmrc (what `npm config set prefix` writes). */
static char *
npmrc_prefix (const char *home)
{
  g_autofree char *path = g_build_filename (home, ".npmrc", NULL);
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  gsize length = 0;
  struct stat st;

  /* Bounded: an .npmrc is a few lines. */
  if (stat (path, &st) != 0 || !S_ISREG (st.st_mode) || st.st_size > 64 * 1024 ||
      !g_file_get_contents (path, &contents, &length, NULL))
    return NULL;
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autofree char *line = g_strstrip (g_strdup (lines[i]));
      char *eq;

      if (!g_str_has_prefix (line, "prefix") || (eq = strchr (line, '=')) == NULL)
        continue;
      *eq = '\0';
      if (!g_str_equal (g_strstrip (line), "prefix"))
        continue;
      {
        g_autofree char *value = g_strstrip (g_strdup (eq + 1));
        size_t n = strlen (value);

        if (n >= 2 && ((value[0] == '"' && value[n - 1] == '"') || (value[0] == '\'' && value[n - 1] == '\'')))
          {
            value[n - 1] = '\0';
            memmove (value, value + 1, n - 1);
          }
        if (value[0] != '\0')
          return expand_home (value, home);
      }
    }
  return NULL;
}

static int
newest_first (gconstpointer a,
              gconstpointer b)
{
  g_autofree char *ka = g_utf8_collate_key_for_filename (*(const char * const *) a, -1);
  g_autofree char *kb = g_utf8_collate_key_for_filename (*(const char * const *) b, -1);

  return -strcmp (ka, kb);
}

/* @base/VERSION/@tail for each version folder of a node manager. */
static void
add_versions (GPtrArray  *dirs,
              const char *base,
              const char *tail)
{
  g_autoptr(GDir) d = g_dir_open (base, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *entry;
  guint seen = 0;

  while (d != NULL && (entry = g_dir_read_name (d)) != NULL && seen++ < 256)
    g_ptr_array_add (names, g_strdup (entry));
  g_ptr_array_sort (names, newest_first);
  for (guint i = 0; i < names->len && i < MAX_VERSIONS; i++)
    add_dir (dirs, g_build_filename (base, g_ptr_array_index (names, i), tail, NULL));
}

/**
 * paddock_agent_search_dirs:
 * @preset: (nullable): whose "search" folders come first
 * @home: the user's HOME
 *
 * Returns: (transfer full): the folders looked in, in order.
 */
GStrv
paddock_agent_search_dirs (const PaddockAgentPreset *preset,
                           const char               *home)
{
  g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func (g_free);
  const char *env_prefix = g_getenv ("NPM_CONFIG_PREFIX");
  const char *pnpm_home = g_getenv ("PNPM_HOME");
  const char *nvm_dir = g_getenv ("NVM_DIR");
  g_autofree char *rc_prefix = npmrc_prefix (home);

  for (guint i = 0; preset != NULL && preset->search[i] != NULL; i++)
    add_dir (dirs, expand_home (preset->search[i], home));
  /* npm's global prefix for the user, as npm itself finds it. */
  if (env_prefix == NULL)
    env_prefix = g_getenv ("npm_config_prefix");
  if (env_prefix != NULL && g_path_is_absolute (env_prefix))
    add_dir (dirs, g_build_filename (env_prefix, "bin", NULL));
  if (rc_prefix != NULL)
    add_dir (dirs, g_build_filename (rc_prefix, "bin", NULL));
  add_dir (dirs, g_build_filename (home, ".npm-global", "bin", NULL));
  add_dir (dirs, g_build_filename (home, ".local", "bin", NULL));
  /* Node version managers: each version has its own global bin. */
  {
    g_autofree char *nvm = nvm_dir != NULL && g_path_is_absolute (nvm_dir)
                             ? g_build_filename (nvm_dir, "versions", "node", NULL)
                             : g_build_filename (home, ".nvm", "versions", "node", NULL);
    g_autofree char *fnm_xdg = g_build_filename (home, ".local", "share", "fnm", "node-versions", NULL);
    g_autofree char *fnm_old = g_build_filename (home, ".fnm", "node-versions", NULL);

    add_versions (dirs, nvm, "bin");
    add_versions (dirs, fnm_xdg, "installation/bin");
    add_versions (dirs, fnm_old, "installation/bin");
  }
  add_dir (dirs, g_build_filename (home, ".volta", "bin", NULL));
  add_dir (dirs, g_build_filename (home, ".bun", "bin", NULL));
  if (pnpm_home != NULL && g_path_is_absolute (pnpm_home))
    add_dir (dirs, g_strdup (pnpm_home));
  add_dir (dirs, g_build_filename (home, ".local", "share", "pnpm", NULL));
  add_dir (dirs, g_strdup ("/usr/local/bin"));
  add_dir (dirs, g_strdup ("/usr/bin"));
  add_dir (dirs, g_strdup ("/bin"));
  g_ptr_array_add (dirs, NULL);
  return (GStrv) g_ptr_array_free (g_steal_pointer (&dirs), FALSE);
}

static gboolean
runnable (const char *path)
{
  struct stat st;

  return stat (path, &st) == 0 && S_ISREG (st.st_mode) && access (path, X_OK) == 0;
}

/* What may be shown of the host for an install: never "/", the HOME or a
 * folder holding it; else @tree, or just @file when @tree is one of those. */
static char *
view_root (const char *tree,
           const char *file,
           const char *home)
{
  if (tree != NULL && !g_str_equal (tree, "/") && !under (home, tree))
    return g_strdup (tree);
  return g_strdup (file);
}

/* The package folder (…/node_modules/PKG or …/node_modules/@SCOPE/PKG)
 * holding @resolved, or NULL. */
static char *
package_tree_of (const char *resolved)
{
  g_autofree char *dir = g_path_get_dirname (resolved);

  while (!g_str_equal (dir, "/") && !g_str_equal (dir, "."))
    {
      g_autofree char *parent = g_path_get_dirname (dir);
      g_autofree char *parent_name = g_path_get_basename (parent);

      if (g_str_equal (parent_name, "node_modules"))
        return g_steal_pointer (&dir);
      if (parent_name[0] == '@')
        {
          g_autofree char *grand = g_path_get_dirname (parent);
          g_autofree char *grand_name = g_path_get_basename (grand);

          if (g_str_equal (grand_name, "node_modules"))
            return g_steal_pointer (&dir);
        }
      g_free (dir);
      dir = g_steal_pointer (&parent);
    }
  return NULL;
}

/* The interpreter named by @path's "#!" line when it is node (directly or
 * through env): its name or path, or NULL. */
static char *
node_interpreter (const char *path)
{
  paddock_autofd int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  char line[256];
  ssize_t n;
  g_auto(GStrv) words = NULL;
  char *end;
  guint i = 0;

  if (fd < 0 || (n = read (fd, line, sizeof line - 1)) < 2)
    return NULL;
  line[n] = '\0';
  if (line[0] != '#' || line[1] != '!')
    return NULL;
  if ((end = strchr (line, '\n')) != NULL)
    *end = '\0';
  words = g_strsplit_set (g_strstrip (line + 2), " \t", -1);
  while (words[i] != NULL && words[i][0] == '\0')
    i++;
  if (words[i] == NULL)
    return NULL;
  if (g_str_has_suffix (words[i], "/env"))
    {
      i++;
      while (words[i] != NULL && (words[i][0] == '\0' || words[i][0] == '-'))
        i++;   /* env -S, and empty words of doubled spaces */
      if (words[i] == NULL)
        return NULL;
    }
  {
    g_autofree char *base = g_path_get_basename (words[i]);

    return g_str_has_prefix (base, "node") ? g_strdup (words[i]) : NULL;
  }
}

/**
 * paddock_agent_discover:
 * @preset: the agent
 * @home: the user's HOME
 *
 * Returns: (transfer full): where its program is and what the view must
 *   show for it to run; NULL with NotFound saying where it looked and how
 *   to install it.
 */
PaddockAgentFound *
paddock_agent_discover (const PaddockAgentPreset *preset,
                        const char               *home,
                        GError                  **error)
{
  g_autoptr(PaddockAgentFound) found = g_new0 (PaddockAgentFound, 1);
  g_autoptr(GPtrArray) view = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) path_dirs = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *programs = g_strjoinv (", ", preset->programs);
  g_autofree char *looked = NULL;
  g_autofree char *interpreter = NULL;

  found->looked = paddock_agent_search_dirs (preset, home);
  looked = g_strjoinv (", ", found->looked);
  for (guint i = 0; found->program == NULL && found->looked[i] != NULL; i++)
    for (guint j = 0; found->program == NULL && preset->programs[j] != NULL; j++)
      {
        g_autofree char *candidate = g_build_filename (found->looked[i], preset->programs[j], NULL);

        if (runnable (candidate))
          found->program = g_steal_pointer (&candidate);
      }
  if (found->program == NULL)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
                   "%s is not installed: no %s in %s. Install it (%s), or add the folder it is in to "
                   "\"search\" in ~/.config/paddock/agents/%s.json; nothing was started",
                   preset->title, programs, looked,
                   preset->install_hint[0] != '\0' ? preset->install_hint : "see its documentation",
                   preset->name);
      return NULL;
    }
  found->resolved = realpath (found->program, NULL);
  if (found->resolved == NULL)
    found->resolved = g_strdup (found->program);

  if (!in_system_roots (found->resolved))
    {
      g_autofree char *tree = preset->package_tree ? package_tree_of (found->resolved) : NULL;

      g_ptr_array_add (view, view_root (tree, found->resolved, home));
    }

  if (preset->node_runtime && (interpreter = node_interpreter (found->resolved)) != NULL)
    {
      g_autofree char *node = NULL;
      g_autofree char *node_real = NULL;

      if (g_path_is_absolute (interpreter))
        node = runnable (interpreter) ? g_strdup (interpreter) : NULL;
      else
        {
          /* Beside the program first (nvm and fnm put node and the global
           * bins in one folder), then where programs are looked for. */
          g_autofree char *beside_dir = g_path_get_dirname (found->program);
          g_autofree char *beside = g_build_filename (beside_dir, interpreter, NULL);

          if (runnable (beside))
            node = g_steal_pointer (&beside);
          for (guint i = 0; node == NULL && found->looked[i] != NULL; i++)
            {
              g_autofree char *candidate = g_build_filename (found->looked[i], interpreter, NULL);

              if (runnable (candidate))
                node = g_steal_pointer (&candidate);
            }
        }
      if (node == NULL)
        {
          g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
                       "%s (%s) needs %s, which was not found beside it or in %s. Install Node.js "
                       "(apt install nodejs, or nvm); nothing was started",
                       preset->title, found->program, interpreter, looked);
          return NULL;
        }
      node_real = realpath (node, NULL);
      if (node_real == NULL)
        node_real = g_strdup (node);
      if (!in_system_roots (node_real))
        {
          /* NODE/bin/node: the runtime is NODE (its lib/ beside bin/). */
          g_autofree char *bin = g_path_get_dirname (node_real);
          g_autofree char *runtime = g_path_get_dirname (bin);
          char *root = view_root (runtime, node_real, home);

          if (!g_ptr_array_find_with_equal_func (view, root, g_str_equal, NULL))
            g_ptr_array_add (view, root);
          else
            g_free (root);
          g_ptr_array_add (path_dirs, g_steal_pointer (&bin));
        }
    }

  g_ptr_array_add (view, NULL);
  g_ptr_array_add (path_dirs, NULL);
  found->view = (GStrv) g_ptr_array_free (g_steal_pointer (&view), FALSE);
  found->path_dirs = (GStrv) g_ptr_array_free (g_steal_pointer (&path_dirs), FALSE);
  return g_steal_pointer (&found);
}
