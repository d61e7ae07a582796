/* bench-common.h — what the bench programs share: medians, clocks, a session's cgroup
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

int      bench_compare_double    (gconstpointer    a,
                                  gconstpointer    b);
double   bench_median            (GArray          *values);
double   bench_ms_since          (gint64           start);
char    *bench_session_cpu_stat  (GDBusConnection *connection,
                                  const char      *session);
gint64   bench_cpu_usage_us      (const char      *cpu_stat);
double   bench_children_cpu_ms   (void);
int      bench_listen_loopback   (int              backlog,
                                  guint16         *out_port);
const char *bench_verdict        (gboolean         met);

G_END_DECLS
