/* bench-common.c — what the bench programs share: medians, clocks, a session's cgroup
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "bench-common.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/resource.h>

/* For g_array_sort over doubles. */
int
bench_compare_double (gconstpointer a,
                      gconstpointer b)
{
  double x = *(const double *) a;
  double y = *(const double *) b;

  return (x > y) - (x < y);
}

/* The median of @values (sorted here): the middle one, or the mean of the
 * two middle ones for an even count. */
double
bench_median (GArray *values)
{
  g_return_val_if_fail (values->len > 0, 0);

  g_array_sort (values, bench_compare_double);
  if (values->len % 2 == 1)
    return g_array_index (values, double, values->len / 2);
  return (g_array_index (values, double, values->len / 2 - 1) +
          g_array_index (values, double, values->len / 2)) / 2;
}

/* Milliseconds of the monotonic clock since @start (g_get_monotonic_time). */
double
bench_ms_since (gint64 start)
{
  return (double) (g_get_monotonic_time () - start) / 1000.0;
}

/* The cgroup v2 mount point, from our mountinfo; NULL if none. */
static char *
cgroup2_mount (void)
{
  g_autofree char *mountinfo = NULL;
  g_auto(GStrv) lines = NULL;

  if (!g_file_get_contents ("/proc/self/mountinfo", &mountinfo, NULL, NULL))
    return NULL;
  lines = g_strsplit (mountinfo, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) fields = g_strsplit (lines[i], " ", -1);
      guint n = g_strv_length (fields);

      /* ... mount-point(4) ... - fstype source options */
      for (guint f = 6; f + 1 < n; f++)
        if (g_str_equal (fields[f], "-") && g_str_equal (fields[f + 1], "cgroup2"))
          return g_strcompress (fields[4]);
    }
  return NULL;
}

/* The cpu.stat of the cgroup a session's main process is in, if it is a
 * cgroup of the session's own (paddock-…), else NULL. */
char *
bench_session_cpu_stat (GDBusConnection *connection,
                        const char      *session)
{
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) value = NULL;
  g_autofree char *proc = NULL;
  g_autofree char *membership = NULL;
  g_autofree char *mount_point = NULL;
  char *path = NULL;
  char *v2;
  char *end;
  guint32 pid = 0;

  reply = g_dbus_connection_call_sync (connection, "org.paddock.Daemon", session,
                                       "org.freedesktop.DBus.Properties", "Get",
                                       g_variant_new ("(ss)", "org.paddock.Session1", "MainPid"),
                                       G_VARIANT_TYPE ("(v)"), G_DBUS_CALL_FLAGS_NONE, 10000, NULL, NULL);
  if (reply == NULL || (mount_point = cgroup2_mount ()) == NULL)
    return NULL;
  g_variant_get (reply, "(v)", &value);
  if (!g_variant_is_of_type (value, G_VARIANT_TYPE_UINT32) || (pid = g_variant_get_uint32 (value)) == 0)
    return NULL;
  proc = g_strdup_printf ("/proc/%u/cgroup", pid);
  if (!g_file_get_contents (proc, &membership, NULL, NULL))
    return NULL;
  /* The v2 line, "0::/path" (after v1 controllers' lines on a hybrid
   * system). */
  v2 = g_str_has_prefix (membership, "0::/") ? membership : strstr (membership, "\n0::/");
  if (v2 == NULL)
    return NULL;
  v2 += v2 == membership ? 3 : 4;
  if ((end = strchr (v2, '\n')) != NULL)
    *end = '\0';
  if (strstr (v2, "paddock") == NULL)
    return NULL;
  path = g_build_filename (mount_point, v2, "cpu.stat", NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    g_clear_pointer (&path, g_free);
  return path;
}

/* usage_usec of a cpu.stat, or -1. */
gint64
bench_cpu_usage_us (const char *cpu_stat)
{
  g_autofree char *text = NULL;
  const char *line;

  if (cpu_stat == NULL || !g_file_get_contents (cpu_stat, &text, NULL, NULL) ||
      (line = strstr (text, "usage_usec ")) == NULL)
    return -1;
  return g_ascii_strtoll (line + strlen ("usage_usec "), NULL, 10);
}

/* User + system CPU of this process's reaped children, in ms. */
double
bench_children_cpu_ms (void)
{
  struct rusage usage;

  getrusage (RUSAGE_CHILDREN, &usage);
  return (double) (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000.0 +
         (double) (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000.0;
}

/* How a target is reported: "met" or "MISSED". */
const char *
bench_verdict (gboolean met)
{
  return met ? "met" : "MISSED";
}

/* A TCP socket listening on 127.0.0.1, on a port the kernel picks
 * (*@out_port); a bench without one cannot run, so failing is fatal. */
int
bench_listen_loopback (int      backlog,
                       guint16 *out_port)
{
  struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof addr;
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (fd < 0 || bind (fd, (struct sockaddr *) &addr, sizeof addr) != 0 || listen (fd, backlog) != 0 ||
      getsockname (fd, (struct sockaddr *) &addr, &len) != 0)
    g_error ("cannot listen on 127.0.0.1: %s", g_strerror (errno));
  *out_port = ntohs (addr.sin_port);
  return fd;
}
