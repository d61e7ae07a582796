/* paddock.c — the Paddock desktop app's entry point
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "paddock-application.h"

int
main (int   argc,
      char *argv[])
{
  g_autoptr(PaddockApplication) app = paddock_application_new ();

  return g_application_run (G_APPLICATION (app), argc, argv);
}
