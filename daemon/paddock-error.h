/* paddock-error.h — the daemon's error domain, shared with every D-Bus client
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Registered as org.paddock.Error.* so a GLib client gets back the same
 * domain and code that the daemon raised. Append only: codes are ABI. */
typedef enum
{
  PADDOCK_ERROR_FAILED,            /* org.paddock.Error.Failed */
  PADDOCK_ERROR_INVALID_ARGUMENT,  /* org.paddock.Error.InvalidArgument */
  PADDOCK_ERROR_NOT_FOUND,         /* org.paddock.Error.NotFound */
  PADDOCK_ERROR_ACCESS_DENIED,     /* org.paddock.Error.AccessDenied */
  PADDOCK_ERROR_PORT_IN_USE,       /* org.paddock.Error.PortInUse */
  PADDOCK_ERROR_PORT_EXHAUSTED,    /* org.paddock.Error.PortExhausted */
  PADDOCK_ERROR_QUOTA_EXCEEDED,    /* org.paddock.Error.QuotaExceeded */
  PADDOCK_ERROR_NOT_ENFORCED,      /* org.paddock.Error.NotEnforced */
  PADDOCK_ERROR_CONFLICT,          /* org.paddock.Error.Conflict */
  PADDOCK_ERROR_BUSY,              /* org.paddock.Error.Busy */
  PADDOCK_ERROR_RESTART_REQUIRED,  /* org.paddock.Error.RestartRequired */
  PADDOCK_ERROR_REVIEW_STALE,      /* org.paddock.Error.ReviewStale */
  PADDOCK_ERROR_REVIEW_EXPIRED,    /* org.paddock.Error.ReviewExpired */
  PADDOCK_ERROR_NO_SPACE,          /* org.paddock.Error.NoSpace */
  PADDOCK_ERROR_LOST,              /* org.paddock.Error.Lost */
} PaddockError;

#define PADDOCK_ERROR (paddock_error_quark ())

GQuark      paddock_error_quark        (void);
const char *paddock_error_to_dbus_name (PaddockError   code);

G_END_DECLS
