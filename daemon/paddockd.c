/* paddockd.c — the per-user Paddock daemon: options, limits, main loop
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "paddock-daemon.h"
#include "paddock-error.h"

/* File descriptors kept for the bus, the state dir, logs and clients,
 * beyond the two sockets each lease holds. */
#define PADDOCK_FD_RESERVE 256

static gboolean
parse_port_range (const char  *text,
                  guint16     *first,
                  guint16     *last,
                  GError     **error)
{
  g_auto(GStrv) parts = g_strsplit (text, "-", 2);
  guint64 a = 0;
  guint64 b = 0;

  if (g_strv_length (parts) != 2 ||
      !g_ascii_string_to_unsigned (parts[0], 10, 1024, 65535, &a, NULL) ||
      !g_ascii_string_to_unsigned (parts[1], 10, 1024, 65535, &b, NULL) ||
      a > b)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--port-range wants FIRST-LAST within 1024-65535, got “%s”", text);
      return FALSE;
    }

  *first = (guint16) a;
  *last = (guint16) b;
  return TRUE;
}

/* Each lease holds two sockets; raise the soft fd limit to the hard one (as
 * systemd does for services) and never promise more leases than fit. */
static guint
fit_max_leases_to_fd_limit (guint requested)
{
  struct rlimit limit;
  guint fitting;

  if (getrlimit (RLIMIT_NOFILE, &limit) != 0)
    return requested;

  if (limit.rlim_cur < limit.rlim_max)
    {
      limit.rlim_cur = limit.rlim_max;
      if (setrlimit (RLIMIT_NOFILE, &limit) != 0)
        getrlimit (RLIMIT_NOFILE, &limit);
    }

  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > G_MAXUINT)
    return requested;

  fitting = limit.rlim_cur > PADDOCK_FD_RESERVE * 2 ?
            (guint) (limit.rlim_cur - PADDOCK_FD_RESERVE) / 2 : 1;

  if (fitting < requested)
    {
      g_message ("Limiting leases to %u: the file descriptor limit is %llu",
                 fitting, (unsigned long long) limit.rlim_cur);
      return fitting;
    }

  return requested;
}

static void
warn_if_pool_overlaps_ephemeral (guint16 first,
                                 guint16 last)
{
  g_autofree char *contents = NULL;
  guint lo = 0;
  guint hi = 0;

  if (!g_file_get_contents ("/proc/sys/net/ipv4/ip_local_port_range", &contents, NULL, NULL) ||
      sscanf (contents, "%u %u", &lo, &hi) != 2)
    return;

  /* Not a safety problem (held ports stay ours) but the kernel hands
   * ephemeral ports out of the same range, so fewer would be leasable. */
  if (first <= hi && last >= lo)
    g_message ("The port pool %u-%u overlaps the kernel's ephemeral range %u-%u",
               first, last, lo, hi);
}

/* GLib 2.74's GSlice keeps every chunk a GObject or a hash table freed in
 * its own magazines and never gives it back: a review of 200,000 staged
 * files left the daemon ~850 MiB larger after the session was destroyed.
 * With G_SLICE=always-malloc the same chunks go back to malloc (and GLib
 * 2.76+ does this by default). GLib reads the variable while it loads,
 * before main(), so the daemon sets it and executes itself again once; the
 * variable is then removed so that sessions do not inherit it. Measured
 * with bench/staging/bench-review-many: RSS after freeing a review and
 * apply of 20,000 files, 47.8 MiB with GSlice, 11.9 MiB without. */
static gboolean
use_malloc_for_slices (char **argv)
{
  if (getenv ("PADDOCK_SLICE_REEXEC") != NULL)
    {
      unsetenv ("PADDOCK_SLICE_REEXEC");
      unsetenv ("G_SLICE");
      return TRUE;
    }
  if (getenv ("G_SLICE") != NULL)
    return TRUE;  /* the user's choice */
  {
    /* By its own path, not /proc/self/exe: the process name (comm) comes
     * from the file name executed, and tools look for "paddockd". */
    char self[4096];
    ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);

    if (n <= 0 || (size_t) n >= sizeof self - 1)
      return FALSE;
    self[n] = '\0';
    setenv ("G_SLICE", "always-malloc", 1);
    setenv ("PADDOCK_SLICE_REEXEC", "1", 1);
    execv (self, argv);
  }
  /* Could not: run as we are, with GSlice. */
  unsetenv ("G_SLICE");
  unsetenv ("PADDOCK_SLICE_REEXEC");
  return FALSE;
}

int
main (int   argc,
      char *argv[])
{
  /* First, before anything allocates: see use_malloc_for_slices(). */
  gboolean slices_ok = use_malloc_for_slices (argv);
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(PaddockDaemon) daemon = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *state_dir = NULL;
  g_autofree char *port_range = NULL;
  gboolean replace = FALSE;
  gboolean verbose = FALSE;
  gboolean version = FALSE;
  int max_leases = PADDOCK_REGISTRY_DEFAULT_MAX_LEASES;
  int max_per_owner = PADDOCK_REGISTRY_DEFAULT_MAX_PER_OWNER;
  PaddockDaemonOptions options = {
    .first_port = PADDOCK_REGISTRY_DEFAULT_FIRST_PORT,
    .last_port = PADDOCK_REGISTRY_DEFAULT_LAST_PORT,
  };
  const GOptionEntry entries[] = {
    { "state-dir", 0, 0, G_OPTION_ARG_FILENAME, &state_dir,
      "Where leases, sessions and staging are kept (default $XDG_STATE_HOME/paddock; env PADDOCK_STATE_DIR)", "DIR" },
    { "replace", 0, 0, G_OPTION_ARG_NONE, &replace,
      "Take over from a running daemon", NULL },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose,
      "Log every request", NULL },
    { "port-range", 0, 0, G_OPTION_ARG_STRING, &port_range,
      "The pool of leasable ports (default 20000-29999)", "FIRST-LAST" },
    { "max-leases", 0, 0, G_OPTION_ARG_INT, &max_leases,
      "Leases held at most, all owners together (default 4096)", "N" },
    { "max-leases-per-owner", 0, 0, G_OPTION_ARG_INT, &max_per_owner,
      "Leases one client or session may hold (default 256)", "N" },
    { "version", 0, 0, G_OPTION_ARG_NONE, &version,
      "Print the version and exit", NULL },
    { NULL }
  };

  setlocale (LC_ALL, "");
  g_set_prgname ("paddockd");

  /* Peers vanish: a write to a closed socket must be an error, not death. */
  signal (SIGPIPE, SIG_IGN);

  context = g_option_context_new ("— the Paddock session daemon");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("paddockd: %s\n", error->message);
      return 2;
    }

  if (version)
    {
      g_print ("paddockd %s\n", PACKAGE_VERSION);
      return EXIT_SUCCESS;
    }

  if (argc > 1)
    {
      g_printerr ("paddockd: unexpected argument “%s”\n", argv[1]);
      return 2;
    }

  if (port_range != NULL &&
      !parse_port_range (port_range, &options.first_port, &options.last_port, &error))
    {
      g_printerr ("paddockd: %s\n", error->message);
      return 2;
    }

  if (max_leases < 1 || max_per_owner < 1)
    {
      g_printerr ("paddockd: --max-leases and --max-leases-per-owner must be at least 1\n");
      return 2;
    }

  /* A daemon logs to stderr (the journal under systemd); stdout is not
   * ours to fill, test harnesses read it. */
  g_log_writer_default_set_use_stderr (TRUE);
  if (verbose)
    g_setenv ("G_MESSAGES_DEBUG", G_LOG_DOMAIN " paddock-registry", TRUE);
  if (!slices_ok)
    g_message ("Could not run again with G_SLICE=always-malloc: memory freed by large reviews "
               "stays with GSlice");

  if (state_dir == NULL && g_getenv ("PADDOCK_STATE_DIR") != NULL)
    state_dir = g_strdup (g_getenv ("PADDOCK_STATE_DIR"));
  if (state_dir == NULL)
    state_dir = g_build_filename (g_get_user_state_dir (), "paddock", NULL);
  if (!g_path_is_absolute (state_dir))
    {
      g_autofree char *cwd = g_get_current_dir ();
      g_autofree char *absolute = g_build_filename (cwd, state_dir, NULL);

      g_free (state_dir);
      state_dir = g_steal_pointer (&absolute);
    }

  options.state_dir = state_dir;
  options.replace = replace;
  options.max_leases = fit_max_leases_to_fd_limit ((guint) max_leases);
  options.max_leases_per_owner = MIN ((guint) max_per_owner, options.max_leases);

  warn_if_pool_overlaps_ephemeral (options.first_port, options.last_port);

  /* Make sure remote errors come back in our domain for every client. */
  (void) paddock_error_quark ();

  daemon = paddock_daemon_new (&options);
  if (paddock_daemon_run (daemon, &error) != EXIT_SUCCESS)
    {
      g_printerr ("paddockd: %s\n", error != NULL ? error->message : "failed");
      return EXIT_FAILURE;
    }

  return EXIT_SUCCESS;
}
