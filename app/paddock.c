/* paddock.c — the Paddock desktop app's entry point
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "paddock-application.h"
#include "paddock-i18n.h"

/* --version is answered in the process that was started, before the app
 * registers on the bus: a running instance must not be asked, nor a
 * window opened (returning a status ends the run there). */
static int
on_handle_local_options (GApplication *app,
                         GVariantDict *options,
                         gpointer      user_data)
{
  if (g_variant_dict_contains (options, "version"))
    {
      g_print ("paddock %s\n", PACKAGE_VERSION);
      return 0;
    }

  return -1;
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(PaddockApplication) app = NULL;

  paddock_i18n_init ();

  app = paddock_application_new ();
  g_application_set_option_context_summary (G_APPLICATION (app),
                                            _("Watch, review and stop AI coding agents run by the Paddock daemon."));
  g_application_add_main_option (G_APPLICATION (app), "version", 0, G_OPTION_FLAG_NONE,
                                 G_OPTION_ARG_NONE, _("Print the version and exit"), NULL);
  g_signal_connect (app, "handle-local-options", G_CALLBACK (on_handle_local_options), NULL);

  return g_application_run (G_APPLICATION (app), argc, argv);
}
