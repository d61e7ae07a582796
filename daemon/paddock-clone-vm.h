/* paddock-clone-vm.h — a child that shares the daemon's memory until it execs, born in a cgroup
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

pid_t paddock_clone_vm_into_cgroup (int    cgroup_dir,
                                    int  (*child_main) (void *data),
                                    void  *data);
pid_t paddock_clone_child_into_cgroup (int    cgroup_dir,
                                       int    cgroup_procs_fd,
                                       int  (*child_main) (void *data),
                                       void  *data);

G_END_DECLS
