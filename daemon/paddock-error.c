/* paddock-error.c — the daemon's error domain, shared with every D-Bus client
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "paddock-error.h"

static const GDBusErrorEntry paddock_error_entries[] = {
  { PADDOCK_ERROR_FAILED,           "org.paddock.Error.Failed" },
  { PADDOCK_ERROR_INVALID_ARGUMENT, "org.paddock.Error.InvalidArgument" },
  { PADDOCK_ERROR_NOT_FOUND,        "org.paddock.Error.NotFound" },
  { PADDOCK_ERROR_ACCESS_DENIED,    "org.paddock.Error.AccessDenied" },
  { PADDOCK_ERROR_PORT_IN_USE,      "org.paddock.Error.PortInUse" },
  { PADDOCK_ERROR_PORT_EXHAUSTED,   "org.paddock.Error.PortExhausted" },
  { PADDOCK_ERROR_QUOTA_EXCEEDED,   "org.paddock.Error.QuotaExceeded" },
  { PADDOCK_ERROR_NOT_ENFORCED,     "org.paddock.Error.NotEnforced" },
  { PADDOCK_ERROR_CONFLICT,         "org.paddock.Error.Conflict" },
  { PADDOCK_ERROR_BUSY,             "org.paddock.Error.Busy" },
  { PADDOCK_ERROR_RESTART_REQUIRED, "org.paddock.Error.RestartRequired" },
  { PADDOCK_ERROR_REVIEW_STALE,     "org.paddock.Error.ReviewStale" },
  { PADDOCK_ERROR_REVIEW_EXPIRED,   "org.paddock.Error.ReviewExpired" },
  { PADDOCK_ERROR_NO_SPACE,         "org.paddock.Error.NoSpace" },
  { PADDOCK_ERROR_LOST,             "org.paddock.Error.Lost" },
};

GQuark
paddock_error_quark (void)
{
  static gsize quark = 0;

  g_dbus_error_register_error_domain ("paddock-error-quark",
                                      &quark,
                                      paddock_error_entries,
                                      G_N_ELEMENTS (paddock_error_entries));
  return (GQuark) quark;
}

const char *
paddock_error_to_dbus_name (PaddockError code)
{
  for (gsize i = 0; i < G_N_ELEMENTS (paddock_error_entries); i++)
    if (paddock_error_entries[i].error_code == (gint) code)
      return paddock_error_entries[i].dbus_error_name;

  return paddock_error_entries[0].dbus_error_name;
}
