/* test-agent-presets.c — agent presets read, refused and found, as GTest
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The loader must take the shipped presets whole and refuse a file that is
 * wrong, naming it and the field; discovery must find a program where npm,
 * with its prefix in ~/.npmrc, put it, resolve a scoped package's tree, and
 * never offer the HOME itself to the view.
 */

#include "config.h"

#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paddock-agent-discovery.h"
#include "paddock-agent-preset.h"
#include "paddock-error.h"

static char *
write_preset (const char *dir,
              const char *name,
              const char *text)
{
  g_autofree char *file = g_strconcat (name, ".json", NULL);
  char *path = g_build_filename (dir, file, NULL);

  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return path;
}

static void
test_shipped (void)
{
  static const char * const names[] = { "claude", "codex", "opencode", "pi", "shell" };
  g_autofree char *dir = g_test_build_filename (G_TEST_DIST, "..", "data", "agents", NULL);

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *file = g_strconcat (names[i], ".json", NULL);
      g_autofree char *path = g_build_filename (dir, file, NULL);
      g_autoptr(GError) error = NULL;
      g_autoptr(PaddockAgentPreset) preset = paddock_agent_preset_load_file (path, &error);

      g_assert_no_error (error);
      g_assert_cmpstr (preset->name, ==, names[i]);
      g_assert_nonnull (preset->programs[0]);
      g_assert_true (g_strv_contains ((const char * const *) preset->env_set, "TERM=xterm-256color"));
      /* Every agent but the shell reaches hosts of its own, on 443. */
      if (!g_str_equal (names[i], "shell"))
        {
          g_assert_nonnull (preset->domains[0]);
          g_assert_cmpuint (preset->ports->len, ==, 1);
          g_assert_cmpuint (g_array_index (preset->ports, guint16, 0), ==, 443);
          g_assert_nonnull (preset->credentials[0]);
          g_assert_nonnull (preset->login[0]);
        }
    }
}

static void
test_refused (void)
{
  static const struct { const char *name; const char *text; const char *message; } cases[] = {
    { "a", "[1]", "not a JSON object" },
    { "b", "{", "not JSON" },
    { "c", "{\"programs\": [\"c\"]}", "field “title” is missing" },
    { "d", "{\"title\": \"D\", \"programs\": []}", "field “programs” must name at least one" },
    { "e", "{\"title\": \"E\", \"programs\": [\"bin/e\"]}", "field “programs” has an invalid entry “bin/e”" },
    { "f", "{\"name\": \"other\", \"title\": \"F\", \"programs\": [\"f\"]}", "field “name” is “other”" },
    { "g", "{\"title\": \"G\", \"programs\": [\"g\"], \"credentials\": [\"../.ssh/id_rsa\"]}",
      "field “credentials” has an invalid entry “../.ssh/id_rsa”" },
    { "h", "{\"title\": \"H\", \"programs\": [\"h\"], \"network\": {\"ports\": [70000]}}",
      "field “network.ports” must hold at most 64 port numbers" },
    { "i", "{\"title\": \"I\", \"programs\": [\"i\"], \"env\": {\"set\": {\"PATH\": \"/evil\"}}}",
      "field “env.set.PATH” cannot be set by a preset" },
    { "j", "{\"title\": \"J\", \"programs\": [\"j\"], \"env\": {\"pass\": [\"A=B\"]}}",
      "field “env.pass” has an invalid entry “A=B”" },
    { "k", "{\"title\": \"K\", \"programs\": [\"k\"], \"install\": {\"node_runtime\": \"yes\"}}",
      "field “install.node_runtime” must be true or false" },
    { "l", "{\"title\": \"L\", \"programs\": [\"l\"], \"search\": [\"relative/bin\"]}",
      "field “search” has an invalid entry “relative/bin”" },
    { "Bad.Name", "{\"title\": \"M\", \"programs\": [\"m\"]}", "field “name” comes from the file's name" },
  };
  g_autofree char *dir = g_dir_make_tmp ("test-agent-presets.XXXXXX", NULL);

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = write_preset (dir, cases[i].name, cases[i].text);
      g_autoptr(GError) error = NULL;
      g_autoptr(PaddockAgentPreset) preset = paddock_agent_preset_load_file (path, &error);

      g_assert_null (preset);
      g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
      if (strstr (error->message, path) == NULL || strstr (error->message, cases[i].message) == NULL)
        g_error ("case %s: “%s” does not name %s and “%s”", cases[i].name, error->message, path, cases[i].message);
      g_unlink (path);
    }
  {
    /* Bounded before it is read: 64 KiB and one byte is too much. */
    g_autofree char *big = g_strnfill (PADDOCK_AGENT_PRESET_MAX_BYTES + 1, ' ');
    g_autofree char *path = write_preset (dir, "big", big);
    g_autoptr(GError) error = NULL;

    g_assert_null (paddock_agent_preset_load_file (path, &error));
    g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
    g_unlink (path);
  }
  g_rmdir (dir);
}

static void
make_executable (const char *path,
                 const char *text)
{
  g_autofree char *parent = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  g_assert_cmpint (g_chmod (path, 0755), ==, 0);
}

static void
test_discover_npmrc_scoped (void)
{
  g_autofree char *home = g_dir_make_tmp ("test-agent-home.XXXXXX", NULL);
  g_autofree char *npmrc = g_build_filename (home, ".npmrc", NULL);
  g_autofree char *tree = g_build_filename (home, "tools", "npm", "lib", "node_modules", "@acme", "agent", NULL);
  g_autofree char *script = g_build_filename (tree, "dist", "cli.sh", NULL);
  g_autofree char *bin_dir = g_build_filename (home, "tools", "npm", "bin", NULL);
  g_autofree char *bin = g_build_filename (bin_dir, "acme", NULL);
  g_autoptr(PaddockAgentPreset) preset = g_new0 (PaddockAgentPreset, 1);
  g_autoptr(PaddockAgentFound) found = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *cmd = NULL;

  /* What `npm config set prefix ~/tools/npm` writes, quoted as npm may. */
  g_assert_true (g_file_set_contents (npmrc, "; comment\nprefix = \"~/tools/npm\"\n", -1, NULL));
  make_executable (script, "#!/bin/sh\necho acme\n");
  g_assert_cmpint (g_mkdir_with_parents (bin_dir, 0755), ==, 0);
  g_assert_cmpint (symlink ("../lib/node_modules/@acme/agent/dist/cli.sh", bin), ==, 0);
  preset->name = g_strdup ("acme");
  preset->title = g_strdup ("Acme");
  preset->programs = g_strsplit ("acme", " ", -1);
  preset->search = g_new0 (char *, 1);
  preset->install_hint = g_strdup ("npm i -g @acme/agent");
  preset->package_tree = TRUE;

  found = paddock_agent_discover (preset, home, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (found->program, ==, bin);
  g_assert_cmpstr (found->resolved, ==, script);
  g_assert_cmpuint (g_strv_length (found->view), ==, 1);
  g_assert_cmpstr (found->view[0], ==, tree);
  g_assert_cmpstr (found->looked[0], ==, bin_dir);

  /* Not installed: NotFound, where it looked, how to install it. */
  g_unlink (bin);
  g_clear_pointer (&found, paddock_agent_found_free);
  found = paddock_agent_discover (preset, home, &error);
  g_assert_null (found);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, bin_dir));
  g_assert_nonnull (strstr (error->message, "npm i -g @acme/agent"));

  cmd = g_strdup_printf ("rm -rf '%s'", home);
  g_assert_cmpint (system (cmd), ==, 0);
}

static void
test_discover_never_home (void)
{
  g_autofree char *home = g_dir_make_tmp ("test-agent-home.XXXXXX", NULL);
  g_autofree char *script = g_build_filename (home, ".local", "bin", "loose", NULL);
  g_autofree char *node = g_build_filename (home, "bin", "node", NULL);
  g_autoptr(PaddockAgentPreset) preset = g_new0 (PaddockAgentPreset, 1);
  g_autoptr(PaddockAgentFound) found = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *search = g_build_filename (home, "bin", NULL);
  g_autofree char *cmd = NULL;

  /* A script outside any package, whose node is HOME/bin/node: the view
   * gets those two files, not the folders above them (HOME/bin's parent
   * is the HOME). */
  make_executable (script, "#!/usr/bin/env node\n");
  make_executable (node, "#!/bin/sh\n");
  preset->name = g_strdup ("loose");
  preset->title = g_strdup ("Loose");
  preset->programs = g_strsplit ("loose", " ", -1);
  preset->search = g_new0 (char *, 2);
  preset->search[0] = g_strdup ("~/bin");
  preset->install_hint = g_strdup ("");
  preset->package_tree = TRUE;
  preset->node_runtime = TRUE;

  found = paddock_agent_discover (preset, home, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (found->looked[0], ==, search);
  g_assert_cmpuint (g_strv_length (found->view), ==, 2);
  g_assert_cmpstr (found->view[0], ==, script);
  g_assert_cmpstr (found->view[1], ==, node);
  g_assert_cmpstr (found->path_dirs[0], ==, search);

  cmd = g_strdup_printf ("rm -rf '%s'", home);
  g_assert_cmpint (system (cmd), ==, 0);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* The daemon's variables that would change where it looks. */
  g_unsetenv ("NPM_CONFIG_PREFIX");
  g_unsetenv ("npm_config_prefix");
  g_unsetenv ("NVM_DIR");
  g_unsetenv ("PNPM_HOME");
  g_test_add_func ("/agents/presets/shipped", test_shipped);
  g_test_add_func ("/agents/presets/refused", test_refused);
  g_test_add_func ("/agents/discover/npmrc-scoped", test_discover_npmrc_scoped);
  g_test_add_func ("/agents/discover/never-home", test_discover_never_home);
  return g_test_run ();
}
