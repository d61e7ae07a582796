/* paddock-clone-vm.c — a child that shares the daemon's memory until it execs, born in a cgroup
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * fork() of the daemon copies its page tables and then makes both sides
 * take a copy-on-write fault for every page either writes: in profiles of
 * a session start that was ~20 % of the daemon's own CPU, on the path to
 * the agent's first byte, for a child that only sets up a few descriptors
 * and execs paddock-sandbox. posix_spawn() avoids it with
 * clone(CLONE_VM | CLONE_VFORK), but neither it nor glibc's clone() can
 * create the child inside a cgroup (CLONE_INTO_CGROUP is clone3() only),
 * and moving it in afterwards through cgroup.procs waits for an RCU grace
 * period (7-15 ms on a loaded machine). So: clone3() with CLONE_VM |
 * CLONE_VFORK | CLONE_INTO_CGROUP and a stack of the child's own. The raw
 * system call returns in the child on that new stack, where no C frame
 * exists, so the child's side is a few instructions of assembly that call
 * CHILD_MAIN(DATA) and exit with its result; x86_64 only, elsewhere the
 * paddock_clone_child_into_cgroup() falls back to fork().
 *
 * CHILD_MAIN runs while the parent is suspended (CLONE_VFORK), in its
 * memory: it may read what DATA points to, must make only
 * async-signal-safe calls, and must exec or _exit. Every signal is
 * blocked across the clone, so no handler of the daemon's runs in the
 * child; the child has its own copy of the dispositions (no
 * CLONE_SIGHAND), which paddock_clone_child_into_cgroup() resets in it
 * before its CHILD_MAIN runs.
 */

#include "config.h"

#include "paddock-clone-vm.h"

#include <errno.h>
#include <linux/sched.h>   /* struct clone_args, CLONE_INTO_CGROUP */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHILD_STACK_SIZE (256 * 1024)

/* Under AddressSanitizer the child's frames poison their redzones in the
 * shadow of this stack and never unpoison them (the child execs or exits,
 * it never returns): the next mapping at the same address would inherit
 * that poison and a child with another frame layout would be reported for
 * writing its own locals. Each stack starts clean. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define UNPOISON_STACK(stack, size) __asan_unpoison_memory_region ((stack), (size))
#else
#define UNPOISON_STACK(stack, size) ((void) 0)
#endif

#if defined(__x86_64__) && defined(SYS_clone3)
static long
clone3_call (struct clone_args *args,
             int              (*child_main) (void *data),
             void              *data)
{
  register long rax __asm__ ("rax") = SYS_clone3;
  register struct clone_args *rdi __asm__ ("rdi") = args;
  register long rsi __asm__ ("rsi") = (long) sizeof *args;
  /* Callee-saved registers, which the kernel also leaves as they were:
   * the child finds the function and its argument there. */
  register int (*r12) (void *) __asm__ ("r12") = child_main;
  register void *r13 __asm__ ("r13") = data;

  __asm__ volatile ("syscall\n\t"
                    "testq %%rax, %%rax\n\t"
                    "jnz 1f\n\t"
                    /* The child, on its own stack (16-byte aligned: the
                     * call leaves it as the ABI wants at entry). */
                    "xorl %%ebp, %%ebp\n\t"
                    "movq %%r13, %%rdi\n\t"
                    "callq *%%r12\n\t"
                    "movl %%eax, %%edi\n\t"
                    "movl %[sys_exit], %%eax\n\t"
                    "syscall\n\t"
                    "hlt\n\t"
                    "1:\n\t"
                    : "+r" (rax)
                    : "r" (rdi), "r" (rsi), "r" (r12), "r" (r13), [sys_exit] "i" (SYS_exit)
                    : "rcx", "r11", "memory", "cc");
  return rax;
}
#endif

/* Returns the child's pid once it exec'd or exited (CLONE_VFORK), or -1
 * with errno; ENOSYS where this cannot be done here (then
 * paddock_clone_child_into_cgroup() forks). */
pid_t
paddock_clone_vm_into_cgroup (int    cgroup_dir,
                              int  (*child_main) (void *data),
                              void  *data)
{
#if defined(__x86_64__) && defined(SYS_clone3)
  sigset_t all_signals;
  sigset_t saved_mask;
  void *stack;
  long result;

  stack = mmap (NULL, CHILD_STACK_SIZE, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED)
    return -1;
  UNPOISON_STACK (stack, CHILD_STACK_SIZE);

  {
    struct clone_args args = {
      .flags = CLONE_VM | CLONE_VFORK | (cgroup_dir >= 0 ? CLONE_INTO_CGROUP : 0),
      .exit_signal = SIGCHLD,
      .stack = (guint64) (guintptr) stack,
      .stack_size = CHILD_STACK_SIZE,
      .cgroup = cgroup_dir >= 0 ? (guint64) cgroup_dir : 0,
    };

    sigfillset (&all_signals);
    pthread_sigmask (SIG_SETMASK, &all_signals, &saved_mask);
    result = clone3_call (&args, child_main, data);
    pthread_sigmask (SIG_SETMASK, &saved_mask, NULL);
  }

  UNPOISON_STACK (stack, CHILD_STACK_SIZE);
  munmap (stack, CHILD_STACK_SIZE);
  if (result < 0)
    {
      errno = (int) -result;
      return -1;
    }
  return (pid_t) result;
#else
  errno = ENOSYS;
  return -1;
#endif
}

/* A new process that runs CHILD_MAIN (DATA) and exits with what it
 * returns, born in the cgroup CGROUP_DIR (-1: ours), by the cheapest means
 * this kernel and machine allow:
 *  1. paddock_clone_vm_into_cgroup(): no copy of our memory, born inside;
 *  2. clone3 (CLONE_INTO_CGROUP), Linux 5.7: a fork() born inside;
 *  3. fork(), and the child moves itself by writing "0" to
 *     CGROUP_PROCS_FD (an fd on the cgroup's cgroup.procs, or -1: no
 *     cgroup to join) before CHILD_MAIN runs; it _exit()s 125 if it
 *     cannot. That move takes the kernel's cgroup_threadgroup_rwsem for
 *     writing, which waits for an RCU grace period (7-15 ms on a loaded
 *     machine): the last resort.
 * Every signal is blocked across the clone or fork, so no handler of ours
 * runs in the child; in any of the three CHILD_MAIN then starts with
 * every disposition at its default and nothing blocked. Returns as fork()
 * does in the parent: the pid, or -1 with errno. */
typedef struct
{
  int  (*child_main) (void *data);
  void  *data;
} ChildStart;

/* In the child, before CHILD_MAIN: the dispositions and the mask a new
 * program expects. Async-signal-safe; it may run in our memory. */
static int
child_start (void *data)
{
  const ChildStart *start = data;
  /* sigaction(), not signal(): the one POSIX lists as async-signal-safe. */
  struct sigaction default_action = { .sa_handler = SIG_DFL };
  sigset_t empty;

  for (int signum = 1; signum < NSIG; signum++)
    sigaction (signum, &default_action, NULL);
  sigemptyset (&empty);
  sigprocmask (SIG_SETMASK, &empty, NULL);
  return start->child_main (start->data);
}

pid_t
paddock_clone_child_into_cgroup (int    cgroup_dir,
                                 int    cgroup_procs_fd,
                                 int  (*child_main) (void *data),
                                 void  *data)
{
  /* Read by the child in our memory (we are suspended until it has
   * exec'd or exited) or in its copy of it. */
  ChildStart start = { child_main, data };
  sigset_t all_signals;
  sigset_t saved_mask;
  gboolean born_inside = FALSE;
  pid_t pid;
  int saved_errno;

  /* A cgroup to join with no folder fd to be born in: only 3. can. */
  if (cgroup_dir >= 0 || cgroup_procs_fd < 0)
    {
      pid = paddock_clone_vm_into_cgroup (cgroup_dir, child_start, &start);
      if (pid >= 0)
        return pid;
    }

  /* No handler of ours may run in the child before it resets them. */
  sigfillset (&all_signals);
  pthread_sigmask (SIG_SETMASK, &all_signals, &saved_mask);
  pid = -1;
#if defined(SYS_clone3)
  if (cgroup_dir >= 0)
    {
      struct clone_args args = {
        .flags = CLONE_INTO_CGROUP,
        .exit_signal = SIGCHLD,
        .cgroup = (guint64) cgroup_dir,
      };

      /* Like fork() (no new stack): the child returns here. */
      pid = (pid_t) syscall (SYS_clone3, &args, sizeof args);
      born_inside = pid >= 0;
    }
#endif
  if (pid < 0)
    pid = fork ();
  if (pid == 0)
    {
      if (!born_inside && cgroup_procs_fd >= 0 && write (cgroup_procs_fd, "0", 1) != 1)
        _exit (125);
      _exit (child_start (&start));
    }
  saved_errno = errno;
  pthread_sigmask (SIG_SETMASK, &saved_mask, NULL);
  errno = saved_errno;
  return pid;
}
