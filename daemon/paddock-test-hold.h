/* paddock-test-hold.h — the test switches that hold a step while a file exists
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * PADDOCK_TEST_*_HOLD=PATH in the daemon's own environment (nothing a
 * client or a session can set) holds one kind of step for as long as PATH
 * exists, a minute at most, as a slow disk or /proc would: a test sees
 * what the daemon does meanwhile, with no timing in it. Logged whenever
 * it holds, in the caller's log domain (so inline).
 */

#pragma once

#include <stdarg.h>

#include <glib.h>

G_BEGIN_DECLS

#define PADDOCK_TEST_HOLD_MAX_US (60 * G_USEC_PER_SEC)

/* Holds while the file $VARIABLE names exists; WHAT_FORMAT says what
 * waits ("the write of %s"). */
static inline void paddock_test_hold (const char *variable, const char *what_format, ...) G_GNUC_PRINTF (2, 3);

static inline void
paddock_test_hold (const char *variable,
                   const char *what_format,
                   ...)
{
  const char *hold = g_getenv (variable);
  g_autofree char *what = NULL;
  gint64 deadline;
  va_list args;

  if (hold == NULL || hold[0] == '\0' || !g_file_test (hold, G_FILE_TEST_EXISTS))
    return;
  va_start (args, what_format);
  what = g_strdup_vprintf (what_format, args);
  va_end (args);
  g_message ("%s=%s exists, so %s waits until it is gone (a test switch)", variable, hold, what);
  deadline = g_get_monotonic_time () + PADDOCK_TEST_HOLD_MAX_US;
  while (g_file_test (hold, G_FILE_TEST_EXISTS) && g_get_monotonic_time () < deadline)
    g_usleep (10 * 1000);
}

G_END_DECLS
