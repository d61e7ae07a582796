/* paddock-test-seccomp.h — a seccomp filter that makes the kernel refuse socket() of one family, for tests
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * What a container that forbids netlink, or a sandbox that forbids
 * AF_INET, does to a program: socket(FAMILY, …) fails with the errno the
 * test names, every other call goes through. For the calling process and
 * everything it starts from then on.
 */

#pragma once

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define PADDOCK_TEST_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define PADDOCK_TEST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#ifdef PADDOCK_TEST_AUDIT_ARCH
/* Async-signal-safe (a child's setup before exec may call it). Returns 0,
 * or -1 with errno set. */
static inline int
paddock_test_refuse_socket_family (unsigned int family,
                                   int          error_number)
{
  struct sock_filter code[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, PADDOCK_TEST_AUDIT_ARCH, 1, 0),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 1, 0),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, args[0])),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, family, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned int) error_number & SECCOMP_RET_DATA)),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = { .len = sizeof code / sizeof code[0], .filter = code };

  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return -1;
  return prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program);
}
#endif
