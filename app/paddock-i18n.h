/* paddock-i18n.h — the message catalogue, bound once at the start of main()
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <locale.h>

#include <glib.h>
#include <glib/gi18n.h>

/* Binds GETTEXT_PACKAGE to the installed catalogues and makes it the default
 * domain, so that _() in C and translatable="yes" in .ui files (GtkBuilder
 * without a translation-domain uses gettext()) find them.
 *
 * PADDOCK_LOCALEDIR replaces the installed folder: the tests run the
 * programs of the build tree against the catalogues built beside them
 * (build/po/LANG/LC_MESSAGES/). It only chooses which translations a user's
 * own process prints, nothing a user could not do with their own binary. */
static inline void
paddock_i18n_init (void)
{
  const char *localedir = g_getenv ("PADDOCK_LOCALEDIR");

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE,
                  localedir != NULL && *localedir != '\0' ? localedir : PADDOCK_LOCALEDIR);
  /* Messages reach GLib and the terminal as UTF-8 whatever the locale's
   * charset, as GTK and GLib expect of every string. */
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
}
