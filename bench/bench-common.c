/* bench-common.c — what the bench programs share: medians, clocks, a session's cgroup
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "bench-common.h"
#include "paddock-cgroup.h"
#include "paddock-test-client.h"

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

/* The cpu.stat of the cgroup a session's main process is in, if it is a
 * cgroup of the session's own (paddock-…), else NULL. */
char *
bench_session_cpu_stat (GDBusConnection *connection,
                        const char      *session)
{
  g_autoptr(PaddockIpcSession1) proxy = paddock_test_session (connection, session);
  g_autoptr(GVariant) value = NULL;
  g_autofree char *cgroup = NULL;
  g_autofree char *reason = NULL;
  char *path = NULL;
  guint32 pid = 0;

  /* A session gone meanwhile has no cgroup to read: NULL, not a failure. */
  value = paddock_test_read_property (G_DBUS_PROXY (proxy), "MainPid", NULL);
  if (value == NULL || (pid = g_variant_get_uint32 (value)) == 0 || pid > G_MAXINT)
    return NULL;
  /* The daemon's own lookup (mountinfo, then the "0::" line). */
  cgroup = paddock_cgroup_find_of ((pid_t) pid, &reason);
  if (cgroup == NULL || strstr (cgroup, "paddock") == NULL)
    return NULL;
  path = g_build_filename (cgroup, "cpu.stat", NULL);
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
