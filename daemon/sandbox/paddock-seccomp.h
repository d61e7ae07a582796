/* paddock-seccomp.h — the sandbox's seccomp filter: built before clone, loaded after
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Two halves, because everything between clone() and exec must be
 * async-signal-safe: paddock_seccomp_build() runs in the helper before
 * clone (libseccomp allocates) and leaves a finished classic-BPF program;
 * paddock_seccomp_load() is one raw seccomp() syscall that installs it, for
 * the child after PR_SET_NO_NEW_PRIVS. The rules and why each exists are in
 * paddock-seccomp.c; paddock_seccomp_describe() lists them for evidence.
 */

#pragma once

#include <glib.h>
#include <linux/filter.h>

G_BEGIN_DECLS

#define PADDOCK_SECCOMP_ERROR (paddock_seccomp_error_quark ())

typedef enum {
  PADDOCK_SECCOMP_ERROR_FAILED,       /* libseccomp refused a rule or the export */
  PADDOCK_SECCOMP_ERROR_UNSUPPORTED,  /* no filter for this architecture */
} PaddockSeccompError;

/* struct sock_fprog under a one-word name, for g_auto(). */
typedef struct sock_fprog PaddockSeccompProgram;

GQuark   paddock_seccomp_error_quark   (void);

/* Fills PROG with a g_malloc'ed filter; free it with paddock_seccomp_clear()
 * (or declare it g_auto(PaddockSeccompProgram) prog = { 0 }). */
gboolean paddock_seccomp_build         (struct sock_fprog       *prog,
                                        GError                 **error);
void     paddock_seccomp_clear         (struct sock_fprog       *prog);

/* The same filter, built once by the daemon and handed to every sandbox
 * (as bubblewrap's --seccomp FD): a memfd holding the BPF program, sealed
 * against writes and resizing. Returns the fd (close-on-exec) or -1. */
int      paddock_seccomp_build_sealed  (GError                 **error);
/* Fills PROG from such an fd (pread: the offset is not touched); refuses an
 * fd that is not sealed against writes, or a program of impossible size.
 * The kernel checks the program itself when it is loaded. */
gboolean paddock_seccomp_read_sealed   (int                      fd,
                                        struct sock_fprog       *prog,
                                        GError                 **error);

/* Async-signal-safe. Installs PROG on the calling thread (and everything it
 * forks or execs afterwards); PR_SET_NO_NEW_PRIVS must be set already.
 * Returns 0 or an errno value. */
int      paddock_seccomp_load          (const struct sock_fprog *prog);

/* Async-signal-safe. Reads "Seccomp:" and "Seccomp_filters:" from
 * /proc/self/status (the kernel's own account, for evidence). -1 where a
 * field is missing. Returns 0 or an errno value. */
int      paddock_seccomp_read_status   (int                     *mode,
                                        int                     *n_filters);

/* One line per rule: "ACTION  syscall[(condition)]  — why". */
char    *paddock_seccomp_describe      (void);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (PaddockSeccompProgram, paddock_seccomp_clear)

G_END_DECLS
