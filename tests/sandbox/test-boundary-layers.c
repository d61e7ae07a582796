/* test-boundary-layers.c — the seccomp filter and Landlock rules, checked by the kernel
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Each layer is loaded into a subprocess (g_test_trap_subprocess: a fresh
 * exec of this program, so nothing confined leaks into the runner) which
 * then tries what the layer must refuse and what it must still allow. Runs
 * as whoever runs the tests and, through run-unprivileged.sh, as an
 * unprivileged user. Where the kernel lacks a feature the test skips and
 * says which.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <linux/netlink.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-landlock.h"
#include "paddock-seccomp.h"

#define ENV_DIR_A "PADDOCK_LAYERS_TEST_A"
#define ENV_DIR_B "PADDOCK_LAYERS_TEST_B"
#define ENV_PORT_OK "PADDOCK_LAYERS_TEST_PORT_OK"
#define ENV_PORT_NO "PADDOCK_LAYERS_TEST_PORT_NO"
#define ENV_ABSTRACT "PADDOCK_LAYERS_TEST_ABSTRACT"

/* The subprocess ends with _exit(): under LeakSanitizer a normal exit
 * would run its leak check, which needs ptrace, which the filter denies. */
static G_NORETURN void
subprocess_passed (void)
{
  fflush (stdout);
  fflush (stderr);
  _exit (0);
}

static void
set_no_new_privs (void)
{
  g_assert_no_errno (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
}

/* errno of a failed call, 0 if it succeeded. */
#define ERRNO_OF(call) ((call) < 0 ? errno : 0)

static void
load_filter (void)
{
  g_autoptr(GError) error = NULL;
  g_auto(PaddockSeccompProgram) prog = { 0 };
  int before = -1, mode = -1, filters = -1;

  g_assert_cmpint (paddock_seccomp_read_status (NULL, &before), ==, 0);
  g_assert_true (paddock_seccomp_build (&prog, &error));
  g_assert_no_error (error);
  set_no_new_privs ();
  g_assert_cmpint (paddock_seccomp_load (&prog), ==, 0);
  paddock_seccomp_clear (&prog);

  /* The kernel's own account: filter mode, one filter more than before
   * (one in all unless the test runner is itself under a filter). */
  g_assert_cmpint (paddock_seccomp_read_status (&mode, &filters), ==, 0);
  g_assert_cmpint (mode, ==, 2);
  g_assert_cmpint (filters, ==, MAX (before, 0) + 1);
}

/* ---- seccomp ------------------------------------------------------------- */

static void
test_seccomp_build (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = paddock_seccomp_describe ();
  g_auto(PaddockSeccompProgram) prog = { 0 };

  g_assert_true (paddock_seccomp_build (&prog, &error));
  g_assert_no_error (error);
  g_assert_nonnull (prog.filter);
  g_assert_cmpuint (prog.len, >, 0);
  g_assert_cmpuint (prog.len, <=, BPF_MAXINSNS);
  g_test_message ("seccomp filter: %u instructions", prog.len);
  paddock_seccomp_clear (&prog);
  g_assert_null (prog.filter);

  g_assert_nonnull (strstr (text, "ptrace"));
  g_assert_nonnull (strstr (text, "TIOCSTI"));
  g_assert_nonnull (strstr (text, "KILL_PROCESS"));
  g_test_message ("%s", text);
}

/* The daemon's copy (built once, handed to every sandbox as a sealed memfd)
 * is the very program a sandbox would build itself, and an fd that could
 * still be written to is refused rather than loaded. */
static void
test_seccomp_sealed (void)
{
  g_autoptr(GError) error = NULL;
  g_auto(PaddockSeccompProgram) built = { 0 };
  g_auto(PaddockSeccompProgram) read = { 0 };
  g_auto(PaddockSeccompProgram) again = { 0 };
  paddock_autofd int fd = -1;
  paddock_autofd int unsealed = -1;

  g_assert_true (paddock_seccomp_build (&built, &error));
  g_assert_no_error (error);
  fd = paddock_seccomp_build_sealed (&error);
  g_assert_no_error (error);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (fcntl (fd, F_GETFD) & FD_CLOEXEC, ==, FD_CLOEXEC);

  g_assert_true (paddock_seccomp_read_sealed (fd, &read, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (read.filter, read.len * sizeof (struct sock_filter),
                   built.filter, built.len * sizeof (struct sock_filter));
  /* pread: a second reader of the same open file gets all of it again. */
  g_assert_true (paddock_seccomp_read_sealed (fd, &again, &error));
  g_assert_cmpuint (again.len, ==, built.len);

  /* Writes and resizing are sealed off. */
  g_assert_cmpint (ERRNO_OF (write (fd, "x", 1)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (ftruncate (fd, 8)), ==, EPERM);

  unsealed = memfd_create ("not-sealed", MFD_CLOEXEC);
  g_assert_cmpint (unsealed, >=, 0);
  g_assert_cmpint (write (unsealed, built.filter, built.len * sizeof (struct sock_filter)), ==,
                   (ssize_t) (built.len * sizeof (struct sock_filter)));
  paddock_seccomp_clear (&again);
  g_assert_false (paddock_seccomp_read_sealed (unsealed, &again, &error));
  g_assert_null (again.filter);
  g_assert_error (error, PADDOCK_SECCOMP_ERROR, PADDOCK_SECCOMP_ERROR_FAILED);
}

/* An inert mount target: if the filter failed to deny mount() (as root it
 * would succeed), it covers this folder only. */
static void
check_mount_denied (void)
{
  g_autofree char *dir = g_dir_make_tmp ("paddock-layers-XXXXXX", NULL);
  int err;

  g_assert_nonnull (dir);
  err = ERRNO_OF (mount ("none", dir, "tmpfs", 0, NULL));
  if (err == 0)
    umount2 (dir, MNT_DETACH);
  g_assert_cmpint (err, ==, EPERM);
  err = ERRNO_OF (syscall (SYS_fsopen, "tmpfs", 0));
  g_assert_cmpint (err, ==, EPERM);
  g_rmdir (dir);
}

static void
check_tiocsti_denied (void)
{
  paddock_autofd int master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  paddock_autofd int slave = -1;
  char c = 'x';

  g_assert_cmpint (master, >=, 0);
  g_assert_no_errno (grantpt (master));
  g_assert_no_errno (unlockpt (master));
  slave = open (ptsname (master), O_RDWR | O_NOCTTY | O_CLOEXEC);
  g_assert_cmpint (slave, >=, 0);

  g_assert_cmpint (ERRNO_OF (ioctl (slave, TIOCSTI, &c)), ==, EPERM);
  /* The tty layer reads the request as 32 bits: junk above must not help. */
  g_assert_cmpint (ERRNO_OF (syscall (SYS_ioctl, slave, (1UL << 32) | TIOCSTI, &c)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (ioctl (slave, TIOCLINUX, &c)), ==, EPERM);
  /* Other terminal ioctls still work. */
  {
    struct winsize ws = { 0 };
    g_assert_no_errno (ioctl (slave, TIOCGWINSZ, &ws));
  }
}

/* Runs FN in a forked child and returns its wait status. */
static int
wait_status_of (void (*fn) (void))
{
  int status = 0;
  pid_t pid = fork ();

  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      fn ();
      _exit (0);
    }
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  return status;
}

#if defined(__x86_64__)
static void
i386_getpid (void)
{
  long ret = 20;   /* __NR_getpid of the i386 ABI */

  /* A fault (no i386 entry) kills with SIGSEGV, not through the
   * sanitizers' handler, which would make it an abort. */
  signal (SIGSEGV, SIG_DFL);
  __asm__ volatile ("int $0x80" : "+a" (ret) : : "memory");
  _exit (ret > 0 ? 0 : 1);
}

static void
x32_getpid (void)
{
  syscall (0x40000000 | SYS_getpid);   /* __X32_SYSCALL_BIT */
  _exit (0);
}

/* Whether int 0x80 reaches the kernel's i386 entry at all, asked from a
 * process with no filter: a machine without one (a paravirtualized kernel,
 * say) answers it with a general protection fault, SIGSEGV. */
static gboolean
i386_entry_exists (void)
{
  int status = wait_status_of (i386_getpid);

  return !(WIFSIGNALED (status) && WTERMSIG (status) == SIGSEGV);
}
#endif

/* I386_ENTRY: i386_entry_exists(), asked before the filter was loaded. */
static void
check_foreign_abi_killed (gboolean i386_entry)
{
#if defined(__x86_64__)
  int status;

  status = wait_status_of (i386_getpid);
  g_assert_true (WIFSIGNALED (status));
  /* Without the entry, the fault comes before any filter sees the call. */
  g_assert_cmpint (WTERMSIG (status), ==, i386_entry ? SIGSYS : SIGSEGV);

  status = wait_status_of (x32_getpid);
  g_assert_true (WIFSIGNALED (status));
  g_assert_cmpint (WTERMSIG (status), ==, SIGSYS);
#endif
}

static void
check_ordinary_work (void)
{
  g_autofree char *dir = g_dir_make_tmp ("paddock-layers-XXXXXX", NULL);
  g_autofree char *file = g_build_filename (dir, "f", NULL);
  char *argv[] = { (char *) "/bin/true", NULL };
  char buf[8] = { 0 };
  int sv[2];
  pid_t pid;
  int status;

  /* Files. */
  {
    paddock_autofd int fd = open (file, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    g_assert_cmpint (fd, >=, 0);
    g_assert_cmpint (write (fd, "hello", 5), ==, 5);
    g_assert_cmpint (pread (fd, buf, 5, 0), ==, 5);
    g_assert_cmpstr (buf, ==, "hello");
  }
  g_unlink (file);
  g_rmdir (dir);

  /* posix_spawn: glibc tries clone3 first and falls back to clone on the
   * filter's ENOSYS; fork() is clone without namespace flags. */
  g_assert_cmpint (posix_spawn (&pid, argv[0], NULL, NULL, argv, environ), ==, 0);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      execv (argv[0], argv);
      _exit (127);
    }
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);

  /* Sockets of the allowed families. */
  {
    paddock_autofd int inet = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    paddock_autofd int unx = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    paddock_autofd int route = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

    g_assert_cmpint (inet, >=, 0);
    g_assert_cmpint (unx, >=, 0);
    g_assert_cmpint (route, >=, 0);
  }
  g_assert_no_errno (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
  close (sv[0]);
  close (sv[1]);

  /* The query and PER_LINUX itself. */
  g_assert_cmpint (personality (0xffffffff), >=, 0);
  g_assert_cmpint (personality (PER_LINUX), >=, 0);
}

static void
test_seccomp_enforced (void)
{
  G_GNUC_UNUSED gboolean i386_entry = FALSE;

  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
      g_test_trap_assert_passed ();
#if defined(__x86_64__)
      if (!i386_entry_exists ())
        g_test_message ("this machine has no i386 entry (int 0x80 faults with no filter too): "
                        "the filter's rule against that ABI cannot be exercised here; the x32 one was");
#endif
      return;
    }

#if defined(__x86_64__)
  i386_entry = i386_entry_exists ();
#endif
  load_filter ();

  /* Other processes. */
  g_assert_cmpint (ERRNO_OF (ptrace (PTRACE_TRACEME, 0, NULL, NULL)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (syscall (SYS_process_vm_readv, getppid (), NULL, 0, NULL, 0, 0)), ==, EPERM);

  /* Namespaces: unshare and clone with CLONE_NEW*, clone3 unreadable. */
  g_assert_cmpint (ERRNO_OF (unshare (CLONE_NEWUSER)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (unshare (CLONE_NEWNS)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (unshare (CLONE_NEWNET | CLONE_FILES)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (syscall (SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (syscall (SYS_clone3, NULL, 0)), ==, ENOSYS);
  g_assert_cmpint (ERRNO_OF (syscall (SYS_setns, 0, CLONE_NEWNS)), ==, EPERM);

  check_mount_denied ();

  /* Kernel interfaces. Arguments are ones the kernel would reject with
   * another errno (EFAULT, EINVAL) if the call got through. */
  g_assert_cmpint (ERRNO_OF (syscall (SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (syscall (SYS_add_key, NULL, NULL, NULL, 0, 0)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (syscall (SYS_bpf, -1, NULL, 0)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (syscall (SYS_perf_event_open, NULL, 0, -1, -1, 0)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (syscall (SYS_io_uring_setup, 1, NULL)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (syscall (SYS_userfaultfd, 0)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (syscall (SYS_init_module, NULL, 0, NULL)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (syscall (SYS_open_by_handle_at, -1, NULL, 0)), ==, EPERM);

  check_tiocsti_denied ();

  /* Socket families and netlink protocols. */
  g_assert_cmpint (ERRNO_OF (socket (AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0)), ==, EAFNOSUPPORT);
  g_assert_cmpint (ERRNO_OF (socket (AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0)), ==, EAFNOSUPPORT);
  g_assert_cmpint (ERRNO_OF (socket (AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)), ==, EAFNOSUPPORT);
  g_assert_cmpint (ERRNO_OF (socket (AF_MAX + 10, SOCK_STREAM, 0)), ==, EAFNOSUPPORT);
  g_assert_cmpint (ERRNO_OF (socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)),
                   ==, EPROTONOSUPPORT);
  g_assert_cmpint (ERRNO_OF (socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT)),
                   ==, EPROTONOSUPPORT);

  /* Every family up to past AF_MAX, so that the gaps between the allowed
   * ones are covered at their edges too (3, 9, 11, 15, 17, …). */
  for (int family = 0; family <= AF_MAX + 2; family++)
    {
      int err;

      if (family == AF_UNIX || family == AF_INET || family == AF_INET6 || family == AF_NETLINK)
        continue;
      err = ERRNO_OF (syscall (SYS_socket, family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
      if (err != EAFNOSUPPORT)
        g_error ("socket family %d: %s, not refused with EAFNOSUPPORT", family, g_strerror (err));
    }
  /* Junk in the high half of the family is refused, not truncated away. */
  g_assert_cmpint (ERRNO_OF (syscall (SYS_socket, (1UL << 32) | AF_INET, SOCK_STREAM, 0)), ==,
                   EAFNOSUPPORT);

  /* Personas. */
  g_assert_cmpint (ERRNO_OF (personality (PER_LINUX | ADDR_NO_RANDOMIZE)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (personality (PER_LINUX | MMAP_PAGE_ZERO)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (personality (PER_LINUX32)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (personality (0xfffffffe)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (syscall (SYS_personality, 1UL << 32)), ==, EPERM);
  g_assert_cmpint (ERRNO_OF (syscall (SYS_personality, 1UL)), ==, EPERM);

  check_foreign_abi_killed (i386_entry);
  check_ordinary_work ();

  subprocess_passed ();
}

/* ---- Landlock ------------------------------------------------------------- */

static int
require_abi (int min,
             const char *what)
{
  int err = 0;
  int abi = paddock_landlock_probe_abi (&err);

  if (abi < min)
    {
      g_autofree char *why = abi == 0
        ? g_strdup_printf ("no Landlock in this kernel (%s): %s untested", g_strerror (err), what)
        : g_strdup_printf ("Landlock ABI %d < %d: %s untested", abi, min, what);
      g_test_skip (why);
    }
  return abi;
}

static void
test_landlock_abi (void)
{
  int err = 0;
  int abi = paddock_landlock_probe_abi (&err);

  g_test_message ("Landlock ABI %d (%s)", abi, abi > 0 ? "available" : g_strerror (err));
  if (abi == 0)
    g_assert_true (err == ENOSYS || err == EOPNOTSUPP);
}

/* A plan with nothing asked and one with everything asked, on this kernel:
 * the statuses never claim more than the ABI has. */
static void
test_landlock_plan_status (void)
{
  const char *const read_paths[] = { "/", NULL };
  const char *const write_paths[] = { "/tmp", NULL };
  const guint16 ports[] = { 8080 };
  PaddockLandlockRequest none = { 0 };
  PaddockLandlockRequest all = {
    .read_paths = read_paths, .write_paths = write_paths,
    .restrict_bind = TRUE, .bind_ports = ports, .n_bind_ports = 1,
    .scope_signals_and_abstract_unix = TRUE,
  };
  PaddockLandlockRequest relative = { .read_paths = (const char *const[]) { "etc", NULL } };
  PaddockLandlockPlan plan;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  int abi = paddock_landlock_probe_abi (NULL);

  g_assert_true (paddock_landlock_prepare (&none, &plan, &error));
  g_assert_cmpint (plan.fs_status, ==, PADDOCK_LANDLOCK_NOT_REQUESTED);
  g_assert_cmpint (plan.net_status, ==, PADDOCK_LANDLOCK_NOT_REQUESTED);
  g_assert_cmpint (plan.scope_status, ==, PADDOCK_LANDLOCK_NOT_REQUESTED);
  g_assert_cmpint (paddock_landlock_apply (&plan, NULL), ==, 0);   /* nothing to do */
  paddock_landlock_plan_clear (&plan);

  g_assert_true (paddock_landlock_prepare (&all, &plan, &error));
  g_assert_no_error (error);
  g_assert_cmpint (plan.abi, ==, abi);
  g_assert_cmpint (plan.fs_status, ==, abi == 0 ? PADDOCK_LANDLOCK_UNENFORCED
                                     : abi < 3 ? PADDOCK_LANDLOCK_PARTIAL
                                     : PADDOCK_LANDLOCK_ENFORCED);
  g_assert_cmpint (plan.net_status, ==, abi >= 4 ? PADDOCK_LANDLOCK_ENFORCED : PADDOCK_LANDLOCK_UNENFORCED);
  g_assert_cmpint (plan.scope_status, ==, abi >= 6 ? PADDOCK_LANDLOCK_ENFORCED : PADDOCK_LANDLOCK_UNENFORCED);
  text = paddock_landlock_describe (&plan);
  g_test_message ("%s", text);
  if (abi >= 5)
    g_assert_nonnull (strstr (text, "ioctl_dev"));
  paddock_landlock_plan_clear (&plan);

  g_assert_false (paddock_landlock_prepare (&relative, &plan, &error));
  g_assert_error (error, PADDOCK_LANDLOCK_ERROR, PADDOCK_LANDLOCK_ERROR_INVALID);
}

/* Bind left free for a reason (a network namespace of the session's own):
 * no bind right handled, the reason in the evidence, never "enforced" for
 * a bind rule that is not there. */
static void
test_landlock_plan_bind_unrestricted (void)
{
  const char *reason = "bind unrestricted: the session's own network namespace";
  PaddockLandlockRequest nothing = { .unrestricted_bind_reason = reason };
  PaddockLandlockRequest connect_only = {
    .unrestricted_bind_reason = reason,
    .restrict_connect = TRUE, .connect_ports = (const guint16[]) { 443 }, .n_connect_ports = 1,
  };
  PaddockLandlockPlan plan;
  g_autoptr(GError) error = NULL;
  int abi = paddock_landlock_probe_abi (NULL);

  g_assert_true (paddock_landlock_prepare (&nothing, &plan, &error));
  g_assert_cmpint (plan.net_status, ==, PADDOCK_LANDLOCK_NOT_REQUESTED);
  g_assert_false (paddock_landlock_plan_restricts_bind (&plan));
  g_assert_nonnull (strstr (plan.net_evidence, reason));
  paddock_landlock_plan_clear (&plan);

  g_assert_true (paddock_landlock_prepare (&connect_only, &plan, &error));
  g_assert_no_error (error);
  g_assert_false (paddock_landlock_plan_restricts_bind (&plan));
  if (abi >= 4)
    {
      g_assert_cmpint (plan.net_status, ==, PADDOCK_LANDLOCK_ENFORCED);
      g_assert_nonnull (strstr (plan.net_evidence, "bind unrestricted ("));
      g_assert_nonnull (strstr (plan.net_evidence, reason));
      g_assert_nonnull (strstr (plan.net_evidence, "connect only to ports 443"));
    }
  paddock_landlock_plan_clear (&plan);
}

static guint16
free_tcp_port (void)
{
  paddock_autofd int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof addr;

  g_assert_cmpint (fd, >=, 0);
  g_assert_no_errno (bind (fd, (struct sockaddr *) &addr, sizeof addr));
  g_assert_no_errno (getsockname (fd, (struct sockaddr *) &addr, &len));
  return ntohs (addr.sin_port);
}

static int
bind_errno (guint16 port)
{
  paddock_autofd int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in addr = {
    .sin_family = AF_INET, .sin_port = htons (port), .sin_addr.s_addr = htonl (INADDR_LOOPBACK),
  };

  g_assert_cmpint (fd, >=, 0);
  return ERRNO_OF (bind (fd, (struct sockaddr *) &addr, sizeof addr));
}

static int
write_errno (const char *dir,
             const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  paddock_autofd int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

  if (fd < 0)
    return errno;
  return write (fd, "x", 1) == 1 ? 0 : errno;
}

static void
landlock_subprocess (gboolean then_seccomp)
{
  const char *dir_a = g_getenv (ENV_DIR_A);
  const char *dir_b = g_getenv (ENV_DIR_B);
  guint16 port_ok = (guint16) atoi (g_getenv (ENV_PORT_OK));
  guint16 port_no = (guint16) atoi (g_getenv (ENV_PORT_NO));
  const char *const read_paths[] = { "/", NULL };
  const char *const write_paths[] = { dir_a, NULL };
  const char *const device_paths[] = { "/dev/null", "/dev/nonexistent-paddock", NULL };
  const char *const optional_paths[] = { "/dev/nonexistent-paddock", NULL };
  PaddockLandlockRequest request = {
    .read_paths = read_paths, .write_paths = write_paths,
    .device_paths = device_paths, .optional_paths = optional_paths,
    .restrict_bind = TRUE, .bind_ports = &port_ok, .n_bind_ports = 1,
    .scope_signals_and_abstract_unix = TRUE,
  };
  g_auto(PaddockLandlockPlan) plan = { 0 };
  g_autoptr(GError) error = NULL;
  g_autofree char *b_file = g_build_filename (dir_b, "existing", NULL);
  g_autofree char *contents = NULL;
  const char *failed = NULL;

  g_assert_true (paddock_landlock_prepare (&request, &plan, &error));
  g_assert_no_error (error);
  set_no_new_privs ();
  g_assert_cmpint (paddock_landlock_apply (&plan, &failed), ==, 0);
  g_assert_null (failed);
  if (then_seccomp)
    load_filter ();

  /* Files: writes only below A; reading (and executing) anywhere. */
  g_assert_cmpint (write_errno (dir_a, "new"), ==, 0);
  g_assert_cmpint (write_errno (dir_b, "new"), ==, EACCES);
  g_assert_cmpint (write_errno (dir_b, "existing"), ==, EACCES);
  g_assert_true (g_file_get_contents (b_file, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "before");
  g_assert_true (g_file_test ("/etc/passwd", G_FILE_TEST_IS_REGULAR));
  {
    paddock_autofd int fd = open ("/etc/passwd", O_RDONLY | O_CLOEXEC);
    g_assert_cmpint (fd, >=, 0);
  }
  if (plan.abi >= 3)
    g_assert_cmpint (ERRNO_OF (truncate (b_file, 0)), ==, EACCES);
  /* Devices: `> /dev/null` opens with O_TRUNC. */
  {
    paddock_autofd int fd = open ("/dev/null", O_WRONLY | O_TRUNC | O_CLOEXEC);
    g_assert_cmpint (fd, >=, 0);
  }
  /* The rest of /dev is read-only (/dev/zero has no rule here). */
  g_assert_cmpint (ERRNO_OF (open ("/dev/zero", O_WRONLY | O_CLOEXEC)), ==, EACCES);
  {
    char *argv[] = { (char *) "/bin/true", NULL };
    pid_t pid;
    int status;

    g_assert_cmpint (posix_spawn (&pid, argv[0], NULL, NULL, argv, environ), ==, 0);
    g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
    g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  }

  /* TCP ports. */
  if (plan.abi >= 4)
    {
      g_assert_cmpint (plan.net_status, ==, PADDOCK_LANDLOCK_ENFORCED);
      g_assert_cmpint (bind_errno (port_no), ==, EACCES);
      g_assert_cmpint (bind_errno (port_ok), ==, 0);
      /* An ephemeral port is port 0 to Landlock: refused unless listed. */
      g_assert_cmpint (bind_errno (0), ==, EACCES);
      /* Only TCP is covered: a UDP bind to the unlisted port still works. */
      {
        paddock_autofd int udp = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in addr = {
          .sin_family = AF_INET, .sin_port = htons (port_no),
          .sin_addr.s_addr = htonl (INADDR_LOOPBACK),
        };

        g_assert_cmpint (udp, >=, 0);
        g_assert_no_errno (bind (udp, (struct sockaddr *) &addr, sizeof addr));
      }
    }

  /* Scopes: the parent (the test runner) is outside the domain. */
  if (plan.abi >= 6)
    {
      paddock_autofd int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      const char *name = g_getenv (ENV_ABSTRACT);
      struct sockaddr_un addr = { .sun_family = AF_UNIX };
      socklen_t len = offsetof (struct sockaddr_un, sun_path) + 1 + strlen (name);

      g_assert_cmpint (plan.scope_status, ==, PADDOCK_LANDLOCK_ENFORCED);
      g_assert_cmpint (ERRNO_OF (kill (getppid (), 0)), ==, EPERM);
      memcpy (addr.sun_path + 1, name, strlen (name));
      g_assert_cmpint (ERRNO_OF (connect (fd, (struct sockaddr *) &addr, len)), ==, EPERM);
    }

  paddock_landlock_plan_clear (&plan);
  subprocess_passed ();
}

static void
run_landlock_test (const char *test_path,
                   gboolean    then_seccomp)
{
  g_autofree char *dir_a = NULL;
  g_autofree char *dir_b = NULL;
  g_autofree char *b_file = NULL;
  g_autofree char *a_file = NULL;
  g_autofree char *abstract = NULL;
  g_autofree char *port_ok = NULL;
  g_autofree char *port_no = NULL;
  paddock_autofd int listener = -1;
  struct sockaddr_un addr = { .sun_family = AF_UNIX };

  if (g_test_subprocess ())
    landlock_subprocess (then_seccomp);

  if (require_abi (1, "Landlock filesystem rules") < 1)
    return;

  dir_a = g_dir_make_tmp ("paddock-layers-a-XXXXXX", NULL);
  dir_b = g_dir_make_tmp ("paddock-layers-b-XXXXXX", NULL);
  g_assert_nonnull (dir_a);
  g_assert_nonnull (dir_b);
  b_file = g_build_filename (dir_b, "existing", NULL);
  g_assert_true (g_file_set_contents (b_file, "before", -1, NULL));

  /* Two free ports: one listed, one not. */
  port_ok = g_strdup_printf ("%u", free_tcp_port ());
  do
    {
      g_free (port_no);
      port_no = g_strdup_printf ("%u", free_tcp_port ());
    }
  while (g_str_equal (port_ok, port_no));

  /* An abstract socket outside the domain, as the host's X11 or D-Bus. */
  abstract = g_strdup_printf ("paddock-layers-test-%d", (int) getpid ());
  listener = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (listener, >=, 0);
  memcpy (addr.sun_path + 1, abstract, strlen (abstract));
  g_assert_no_errno (bind (listener, (struct sockaddr *) &addr,
                           offsetof (struct sockaddr_un, sun_path) + 1 + strlen (abstract)));
  g_assert_no_errno (listen (listener, 1));

  g_setenv (ENV_DIR_A, dir_a, TRUE);
  g_setenv (ENV_DIR_B, dir_b, TRUE);
  g_setenv (ENV_PORT_OK, port_ok, TRUE);
  g_setenv (ENV_PORT_NO, port_no, TRUE);
  g_setenv (ENV_ABSTRACT, abstract, TRUE);
  g_test_trap_subprocess (test_path, 60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();

  /* Nothing of B changed from outside's point of view either. */
  {
    g_autofree char *contents = NULL;
    g_autofree char *b_new = g_build_filename (dir_b, "new", NULL);

    g_assert_true (g_file_get_contents (b_file, &contents, NULL, NULL));
    g_assert_cmpstr (contents, ==, "before");
    g_assert_false (g_file_test (b_new, G_FILE_TEST_EXISTS));
  }

  a_file = g_build_filename (dir_a, "new", NULL);
  g_assert_true (g_file_test (a_file, G_FILE_TEST_IS_REGULAR));
  g_unlink (a_file);
  g_unlink (b_file);
  g_rmdir (dir_a);
  g_rmdir (dir_b);

  if (paddock_landlock_probe_abi (NULL) < 4)
    g_test_message ("Landlock ABI < 4: TCP port rules untested");
  if (paddock_landlock_probe_abi (NULL) < 6)
    g_test_message ("Landlock ABI < 6: scopes untested");
}

static void
test_landlock_enforced (void)
{
  run_landlock_test ("/boundary-layers/landlock/enforced", FALSE);
}

/* The order the helper uses: Landlock, then the seccomp filter last. */
static void
test_landlock_then_seccomp (void)
{
  run_landlock_test ("/boundary-layers/landlock/then-seccomp", TRUE);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/boundary-layers/seccomp/build", test_seccomp_build);
  g_test_add_func ("/boundary-layers/seccomp/sealed", test_seccomp_sealed);
  g_test_add_func ("/boundary-layers/seccomp/enforced", test_seccomp_enforced);
  g_test_add_func ("/boundary-layers/landlock/abi", test_landlock_abi);
  g_test_add_func ("/boundary-layers/landlock/plan-status", test_landlock_plan_status);
  g_test_add_func ("/boundary-layers/landlock/plan-bind-unrestricted", test_landlock_plan_bind_unrestricted);
  g_test_add_func ("/boundary-layers/landlock/enforced", test_landlock_enforced);
  g_test_add_func ("/boundary-layers/landlock/then-seccomp", test_landlock_then_seccomp);

  return g_test_run ();
}
