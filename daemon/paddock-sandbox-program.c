/* paddock-sandbox-program.c — whether a safe session's command can run in its view, before it starts
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A safe session sees the system folders, its workspace and what the user
 * exposed of their HOME, nothing else: a program installed under a
 * per-user prefix (~/.npm-global, ~/.local) or a typo used to be found
 * missing only inside, where the agent exited 127 after CreateSession had
 * answered with an id and "running". The daemon looks first, on the host,
 * at exactly what the view will show (the sandbox binds these folders at
 * their own paths), and refuses with NotFound saying where it looked and
 * what would make it visible.
 */

#include "config.h"

#include "paddock-sandbox-program.h"

#include <string.h>

#include "paddock-dbus-checks.h"
#include "paddock-error.h"

/* Folders the view shows from the host at their own paths, read-only
 * (the helper's root view: docs/sandbox-protocol.md, paddock-sandbox-plan.c). */
static const char *const system_roots[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", NULL };

static gboolean
under (const char *path,
       const char *root)
{
  size_t n = strlen (root);

  return strncmp (path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* The host path that shows at @inside in the view, or NULL when nothing of
 * the host does. */
static char *
host_path_of (const char         *inside,
              const char         *workspace,
              const char         *sandbox_home,
              const char         *real_home,
              const char * const *expose,
              const char * const *view)
{
  for (guint i = 0; system_roots[i] != NULL; i++)
    if (under (inside, system_roots[i]))
      return g_strdup (inside);
  /* An agent's install, shown at its own path (paddock-agent-session.c). */
  for (guint i = 0; view != NULL && view[i] != NULL; i++)
    if (under (inside, view[i]))
      return g_strdup (inside);
  if (under (inside, workspace))
    return g_strdup (inside);
  if (real_home != NULL && expose != NULL && under (inside, sandbox_home) && inside[strlen (sandbox_home)] == '/')
    {
      const char *rel = inside + strlen (sandbox_home) + 1;

      for (guint i = 0; expose[i] != NULL; i++)
        if (under (rel, expose[i]))
          return g_build_filename (real_home, rel, NULL);
    }
  return NULL;
}

static gboolean
runnable (const char *host_path)
{
  return g_file_test (host_path, G_FILE_TEST_IS_EXECUTABLE) && !g_file_test (host_path, G_FILE_TEST_IS_DIR);
}

/**
 * paddock_sandbox_program_check:
 * @program: the command's argv[0]
 * @path: the PATH the agent gets
 * @workspace: the workspace (its own path inside too, and the cwd)
 * @sandbox_home: the session's HOME inside
 * @real_home: the user's HOME, whose @expose folders show under @sandbox_home
 * @expose: (nullable): those folders, relative to @real_home
 * @view: (nullable): host paths shown at their own path (an agent's install)
 *
 * Returns: TRUE when @program resolves, in the view, to a file the view
 *   shows executable; FALSE with NotFound saying where it looked.
 */
gboolean
paddock_sandbox_program_check (const char         *program,
                               const char         *path,
                               const char         *workspace,
                               const char         *sandbox_home,
                               const char         *real_home,
                               const char * const *expose,
                               const char * const *view,
                               GError            **error)
{
  g_autofree char *shown = paddock_dbus_display_bytes (program);
  g_autoptr(GString) looked = g_string_new (NULL);
  g_auto(GStrv) dirs = NULL;

  if (strchr (program, '/') != NULL)
    {
      g_autofree char *inside = g_path_is_absolute (program) ? g_canonicalize_filename (program, NULL)
                                                             : g_canonicalize_filename (program, workspace);
      g_autofree char *host = host_path_of (inside, workspace, sandbox_home, real_home, expose, view);

      if (host != NULL && runnable (host))
        return TRUE;
      if (host == NULL && g_file_test (inside, G_FILE_TEST_EXISTS))
        g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
                     "“%s” is not in the session's view: a safe session sees the system folders, its "
                     "workspace and what --expose shows of your HOME (at %s). Install the program under "
                     "/usr/local, or expose its folder (paddockctl create --expose PATH-IN-HOME) and give "
                     "its path under %s, or use the host profile; nothing was started",
                     shown, sandbox_home, sandbox_home);
      else
        g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
                     "No program “%s” in the session's view; nothing was started", shown);
      return FALSE;
    }

  dirs = g_strsplit (path, ":", -1);
  for (guint i = 0; dirs[i] != NULL; i++)
    {
      g_autofree char *inside = NULL;
      g_autofree char *host = NULL;

      if (dirs[i][0] != '/')
        continue;  /* a relative PATH entry: the shell's business, not ours */
      inside = g_build_filename (dirs[i], program, NULL);
      host = host_path_of (inside, workspace, sandbox_home, real_home, expose, view);
      g_string_append_printf (looked, "%s%s", looked->len > 0 ? ", " : "", dirs[i]);
      if (host != NULL && runnable (host))
        return TRUE;
    }

  g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
               "No program “%s” in the session's PATH (looked in %s, as the session sees them). A "
               "program installed in your HOME (npm's ~/.npm-global, ~/.local/bin) is not in a safe "
               "session's view: run it through its agent preset (paddockctl create --agent NAME, see "
               "paddockctl agents), expose its folder (paddockctl create --expose PATH-IN-HOME) and give its "
               "path under %s, install it under /usr/local, or use the host profile; nothing was started",
               shown, looked->str, sandbox_home);
  return FALSE;
}
