/* paddock-session-calls.c — what the session's stage calls share: who called, and its errors as D-Bus's
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Pure helpers of the staging and commit calls (paddock-session-staging.c,
 * paddock-session-commits.c): they hold no state and know no session.
 */

#include "config.h"

#include "paddock-compat-proc.h"
#include "paddock-error.h"
#include "paddock-session-calls.h"
#include "paddock-apply.h"
#include "paddock-change.h"

/* The staging library speaks its own error domains (and GIO's for the
 * filesystem); clients get org.paddock.Error.* names. */
GError *
paddock_session_error_from_staging (const GError *error)
{
  PaddockError code = PADDOCK_ERROR_FAILED;

  if (error->domain == PADDOCK_ERROR)
    return g_error_copy (error);
  if (error->domain == PADDOCK_STAGING_ERROR)
    {
      switch (error->code)
        {
        case PADDOCK_STAGING_ERROR_NOT_FOUND:
          code = PADDOCK_ERROR_NOT_FOUND;
          break;
        case PADDOCK_STAGING_ERROR_INVALID_PATH:
          code = PADDOCK_ERROR_INVALID_ARGUMENT;
          break;
        case PADDOCK_STAGING_ERROR_CONFLICT:
          code = PADDOCK_ERROR_CONFLICT;
          break;
        case PADDOCK_STAGING_ERROR_TOO_LARGE:
          code = PADDOCK_ERROR_QUOTA_EXCEEDED;
          break;
        case PADDOCK_STAGING_ERROR_REVIEW_STALE:
          code = PADDOCK_ERROR_REVIEW_STALE;
          break;
        case PADDOCK_STAGING_ERROR_REVIEW_EXPIRED:
          code = PADDOCK_ERROR_REVIEW_EXPIRED;
          break;
        case PADDOCK_STAGING_ERROR_METADATA:
          code = PADDOCK_ERROR_INVALID_ARGUMENT;
          break;
        default:
          code = PADDOCK_ERROR_FAILED;
          break;
        }
    }
  else if (error->domain == PADDOCK_APPLY_ERROR)
    {
      switch (error->code)
        {
        case PADDOCK_APPLY_ERROR_CONFLICT:
          code = PADDOCK_ERROR_CONFLICT;
          break;
        case PADDOCK_APPLY_ERROR_INVALID_PATH:
          code = PADDOCK_ERROR_INVALID_ARGUMENT;
          break;
        case PADDOCK_APPLY_ERROR_STALE:
          code = PADDOCK_ERROR_REVIEW_STALE;
          break;
        case PADDOCK_APPLY_ERROR_NO_SPACE:
          code = PADDOCK_ERROR_NO_SPACE;
          break;
        default:
          code = PADDOCK_ERROR_FAILED;
          break;
        }
    }
  else if (error->domain == G_IO_ERROR)
    {
      switch (error->code)
        {
        case G_IO_ERROR_NOT_FOUND:
          code = PADDOCK_ERROR_NOT_FOUND;
          break;
        case G_IO_ERROR_INVALID_ARGUMENT:
        case G_IO_ERROR_EXISTS:
          code = PADDOCK_ERROR_INVALID_ARGUMENT;
          break;
        default:
          code = PADDOCK_ERROR_FAILED;
          break;
        }
    }
  return g_error_new_literal (PADDOCK_ERROR, code, error->message);
}

/* Who applied: the caller as the bus knows it (uid and pid come from the
 * kernel through the bus daemon, not from anything the caller says). */
char *
paddock_session_describe_caller (GDBusMethodInvocation *invocation)
{
  GDBusConnection *connection = g_dbus_method_invocation_get_connection (invocation);
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) credentials = NULL;
  guint32 uid = G_MAXUINT32;
  guint32 pid = 0;
  g_autofree char *comm = NULL;

  if (sender == NULL)
    return g_strdup ("a peer-to-peer client");

  reply = g_dbus_connection_call_sync (connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "GetConnectionCredentials",
                                       g_variant_new ("(s)", sender), G_VARIANT_TYPE ("(a{sv})"),
                                       G_DBUS_CALL_FLAGS_NONE, 1000, NULL, NULL);
  if (reply != NULL)
    {
      credentials = g_variant_get_child_value (reply, 0);
      g_variant_lookup (credentials, "UnixUserID", "u", &uid);
      g_variant_lookup (credentials, "ProcessID", "u", &pid);
    }
  if (pid != 0)
    comm = paddock_compat_proc_read_name (pid);
  return g_strdup_printf ("%s uid=%d pid=%u (%s)", sender,
                          uid == G_MAXUINT32 ? -1 : (int) uid, pid, comm != NULL ? comm : "?");
}

void
paddock_session_call_handlers_connect (PaddockSessionCallHandlers *handlers,
                                       PaddockIpcSession1         *skeleton,
                                       const char                 *signal,
                                       GCallback                   callback,
                                       gpointer                    data)
{
  gulong id;

  g_return_if_fail (handlers->skeleton == NULL || handlers->skeleton == skeleton);

  if (handlers->skeleton == NULL)
    g_set_weak_pointer (&handlers->skeleton, skeleton);
  if (handlers->handler_ids == NULL)
    handlers->handler_ids = g_array_new (FALSE, FALSE, sizeof (gulong));
  id = g_signal_connect (skeleton, signal, callback, data);
  g_array_append_val (handlers->handler_ids, id);
}

void
paddock_session_call_handlers_clear (PaddockSessionCallHandlers *handlers)
{
  if (handlers->skeleton != NULL && handlers->handler_ids != NULL)
    for (guint i = 0; i < handlers->handler_ids->len; i++)
      g_signal_handler_disconnect (handlers->skeleton, g_array_index (handlers->handler_ids, gulong, i));
  g_clear_weak_pointer (&handlers->skeleton);
  g_clear_pointer (&handlers->handler_ids, g_array_unref);
}
