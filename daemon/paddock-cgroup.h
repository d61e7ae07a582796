/* paddock-cgroup.h — a session's own cgroup v2, where one may be made
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

typedef struct _PaddockCgroup PaddockCgroup;

char          *paddock_cgroup_find_of       (pid_t         pid,
                                             char        **out_reason);
char          *paddock_cgroup_find_own      (char        **out_reason);
char          *paddock_cgroup_find_parent   (char        **out_reason);
gboolean       paddock_cgroup_enter_leaf    (const char   *parent,
                                             const char   *leaf,
                                             GError      **error);
PaddockCgroup *paddock_cgroup_new           (const char   *parent,
                                             const char   *name,
                                             GError      **error);
PaddockCgroup *paddock_cgroup_open          (const char   *path);
const char    *paddock_cgroup_get_path      (PaddockCgroup *self);
int            paddock_cgroup_open_events   (PaddockCgroup *self);
int            paddock_cgroup_open_procs    (PaddockCgroup *self,
                                             GError      **error);
GArray        *paddock_cgroup_list_pids     (PaddockCgroup *self);
void           paddock_cgroup_signal        (PaddockCgroup *self,
                                             int           signal_number);
gboolean       paddock_cgroup_kill          (PaddockCgroup *self);
gboolean       paddock_cgroup_freeze        (PaddockCgroup *self,
                                             gboolean      frozen);
gboolean       paddock_cgroup_remove        (PaddockCgroup *self);
gboolean       paddock_cgroup_set_limit     (PaddockCgroup *self,
                                             const char   *controller,
                                             const char   *file,
                                             guint64       value,
                                             GError      **error);
void           paddock_cgroup_free          (PaddockCgroup *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PaddockCgroup, paddock_cgroup_free)

G_END_DECLS
