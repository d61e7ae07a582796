/* paddock-test-session.c — what the D-Bus session tests share: a
 * session's processes (and the daemon's) looked at from outside
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "paddock-test-session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paddock-test-daemon.h"

/* Whether @pid is a process that has not exited (a zombie has). */
gboolean
paddock_test_pid_alive (GPid pid)
{
  g_autofree char *stat_path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *contents = NULL;
  const char *after;

  if (!g_file_get_contents (stat_path, &contents, NULL, NULL))
    return FALSE;
  after = strrchr (contents, ')');
  return after != NULL && after[2] != 'Z';
}

/* How many processes run a program whose path contains @marker, seen from
 * outside the session, the way a user would check with ps. */
guint
paddock_test_count_marked (const char *marker)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *entry;
  guint count = 0;

  while (proc != NULL && (entry = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *cmdline_path = g_strdup_printf ("/proc/%s/cmdline", entry);
      g_autofree char *cmdline = NULL;
      gsize length = 0;

      if (g_ascii_isdigit (entry[0]) &&
          g_file_get_contents (cmdline_path, &cmdline, &length, NULL) && length > 0 &&
          strstr (cmdline, marker) != NULL && paddock_test_pid_alive ((GPid) atoi (entry)))
        count++;
    }

  return count;
}

/* Waits (up to 20 s, then fails) until at least @count processes carry
 * @marker, or, with @count 0, until none does. */
void
paddock_test_wait_for_marked (const char *marker,
                              guint       count)
{
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;

  for (;;)
    {
      guint now = paddock_test_count_marked (marker);

      if (count == 0 ? now == 0 : now >= count)
        return;
      if (g_get_monotonic_time () > deadline)
        g_error ("%u processes carry %s after 20 s, waiting for %s%u", now, marker,
                 count == 0 ? "" : "at least ", count);
      g_usleep (10 * 1000);
    }
}

/* The pid of the daemon serving org.paddock.Daemon on CONNECTION's bus. */
GPid
paddock_test_daemon_pid (GDBusConnection *connection)
{
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;
  guint32 pid = 0;

  reply = g_dbus_connection_call_sync (connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "GetConnectionUnixProcessID",
                                       g_variant_new ("(s)", "org.paddock.Daemon"), G_VARIANT_TYPE ("(u)"),
                                       G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
  g_assert_no_error (error);
  g_variant_get (reply, "(u)", &pid);
  return (GPid) pid;
}

/* How many descriptors the daemon holds (found as the bus name's owner):
 * what a test compares before and after calls that must leave none. */
guint
paddock_test_daemon_fd_count (GDBusConnection *connection)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_strdup_printf ("/proc/%d/fd", (int) paddock_test_daemon_pid (connection));
  g_autoptr(GDir) dir = g_dir_open (path, 0, &error);
  guint n = 0;

  g_assert_no_error (error);
  while (g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

/* The parent of PID, from /proc/PID/stat; 0 once it is gone. */
static GPid
parent_of (GPid pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *text = NULL;
  const char *close_paren;
  int parent = 0;
  char state;

  if (!g_file_get_contents (path, &text, NULL, NULL) || (close_paren = strrchr (text, ')')) == NULL ||
      sscanf (close_paren + 1, " %c %d", &state, &parent) != 2)
    return 0;
  return (GPid) parent;
}

/* Whether PID runs `paddock-sandbox --spare`. */
static gboolean
is_spare (GPid pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/cmdline", (int) pid);
  g_autofree char *cmdline = NULL;
  gsize length = 0;

  if (!g_file_get_contents (path, &cmdline, &length, NULL) || length == 0)
    return FALSE;
  return g_str_has_suffix (cmdline, "paddock-sandbox") &&
         strlen (cmdline) + 1 < length && g_str_equal (cmdline + strlen (cmdline) + 1, "--spare");
}

/**
 * paddock_test_namespace_pid:
 * @pid: a process, as our /proc names it
 *
 * Returns: @pid's number in its innermost PID namespace (the last number
 *   of its NSpid line: @pid itself for one of ours, 1 for a sandbox's
 *   pid 1), or 0 when it cannot be read
 */
GPid
paddock_test_namespace_pid (GPid pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/status", (int) pid);
  g_autofree char *status = NULL;
  char *line;
  const char *last;

  if (!g_file_get_contents (path, &status, NULL, NULL) || (line = strstr (status, "\nNSpid:")) == NULL)
    return 0;
  *strchrnul (line + 1, '\n') = '\0';
  last = strrchr (line, '\t');
  return last != NULL ? (GPid) g_ascii_strtoll (last + 1, NULL, 10) : 0;
}

/* The daemon's child (or its keeper's, a keeper of the daemon's:
 * paddock-spare-sandbox.c) that is a sandbox made ahead, other than
 * NOT_THIS (one a session took keeps its command line), or 0. A spare's
 * own pid 1 is forked, not executed, so it has the same command line and
 * the daemon as its grandparent, or, once an ended spare's helper is gone
 * and the keeper (a subreaper) has it, as its parent (both seen under load
 * while an ended spare's pid 1 was still going): it is told apart by its
 * PID namespace, the sandbox's, not ours. */
static GPid
find_spare (GPid daemon,
            GPid not_this)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc", 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      GPid pid = (GPid) g_ascii_strtoll (name, NULL, 10);

      GPid parent = pid > 0 ? parent_of (pid) : 0;

      if (pid > 0 && pid != not_this && (parent == daemon || parent_of (parent) == daemon) &&
          is_spare (pid) && paddock_test_namespace_pid (pid) == pid && paddock_test_pid_alive (pid))
        return pid;
    }
  return 0;
}

typedef struct {
  GPid daemon;
  GPid not_this;   /* an earlier spare, or 0 */
  GPid found;
} SpareWait;

static gboolean
spare_made (gpointer data)
{
  SpareWait *wait = data;

  wait->found = find_spare (wait->daemon, wait->not_this);
  return wait->found != 0;
}

/* Waits (10 s at most) for the sandbox the daemon makes ahead after a
 * safe session's start (paddock-spare-sandbox.c), other than NOT_THIS (0:
 * any); fails the test without one. Returns its pid. */
GPid
paddock_test_wait_for_spare_sandbox (GDBusConnection *connection,
                GPid             not_this)
{
  SpareWait wait = { .daemon = paddock_test_daemon_pid (connection), .not_this = not_this, .found = 0 };

  g_assert_true (paddock_test_wait_for (spare_made, &wait, 10000));
  return wait.found;
}
