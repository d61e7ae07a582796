/* paddock-seccomp.c — the sandbox's seccomp filter: built before clone, loaded after
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A deny list on a default-allow filter, as Flatpak's and Docker's: the
 * sandbox's real walls are the namespaces, the root view, the empty
 * capability sets and Landlock; this filter removes kernel interfaces that
 * (a) would let a process get around those walls, or (b) are large kernel
 * attack surface that a coding agent has no use for. Every rule below says
 * which. Denials return an errno (EPERM unless said otherwise) so programs
 * see an ordinary failure and fall back; only a foreign system call ABI
 * kills the process (see the bad-arch action).
 *
 * The filter also applies to the sandbox's pid 1 if it is loaded there;
 * nothing pid 1 does after setup (fork, a CLONE_VM|CLONE_VFORK clone,
 * signalfd, poll, waitpid, kill, sendmsg/recvmsg) is denied.
 */

#include "config.h"

#include "paddock-seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "paddock-autofd.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080    /* unshare() only: in clone() it is CSIGNAL */
#endif

/* personality(2)'s query value: returns the current persona, changes nothing. */
#define PERSONALITY_QUERY 0xffffffffUL

/* scmp_filter_ctx is a plain void pointer: g_auto() with a typedef of our
 * own, so that the cleanup cannot attach to any other void pointer. */
typedef scmp_filter_ctx PaddockScmpCtx;
G_DEFINE_AUTO_CLEANUP_FREE_FUNC (PaddockScmpCtx, seccomp_release, NULL)

G_DEFINE_QUARK (paddock-seccomp-error-quark, paddock_seccomp_error)

/* ---- the rules ------------------------------------------------------------ */

typedef struct {
  const char *syscalls[12];   /* NULL-terminated */
  const char *why;
} DenyGroup;

/* Denied outright with EPERM. */
static const DenyGroup deny_groups[] = {
  { { "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", NULL },
    "reading or writing another process's memory, registers or fds: the agent "
    "could take over its siblings (commands, language servers) and would reach "
    "pid 1's data if a capability check ever slipped; ptrace also used to let a "
    "tracer change a syscall after seccomp checked it (kernels < 4.8)" },
  { { "mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen",
      "fsconfig", "fsmount", "fspick", "mount_setattr", NULL },
    "the root view is the boundary: nothing inside may change, cover or uncover "
    "mounts (pid 1 still holds capabilities in the sandbox's user namespace); "
    "the new mount API is also large attack surface (CVE-2022-0185 in fsconfig)" },
  { { "setns", NULL },
    "entering another namespace through an inherited or /proc-opened fd would "
    "leave the sandbox's view" },
  { { "keyctl", "add_key", "request_key", NULL },
    "kernel keyrings are not namespaced: the user's keys (Kerberos, fscrypt, "
    "ecryptfs) would be readable and writable from inside" },
  { { "bpf", "perf_event_open", NULL },
    "kernel programmability and performance counters: big attack surface and "
    "side channels on the rest of the machine; no agent task needs them" },
  { { "kexec_load", "kexec_file_load", "init_module", "finit_module",
      "delete_module", NULL },
    "replacing the kernel or loading code into it; needs host root anyway, "
    "denied so that a capability mistake cannot become a kernel compromise" },
  { { "userfaultfd", NULL },
    "stalls the kernel on a page fault at a moment of the caller's choosing: "
    "the standard tool to win kernel races in exploits" },
  { { "io_uring_setup", "io_uring_enter", "io_uring_register", NULL },
    "io_uring performs I/O without system calls, so this filter cannot see "
    "it (socket families, ioctls), and has been a steady source of kernel "
    "privilege escalations" },
  { { "open_by_handle_at", NULL },
    "file handles name files by inode, not path: a way around the root view "
    "(the 'shocker' container escape); needs CAP_DAC_READ_SEARCH on the host" },
  { { "syslog", "acct", "swapon", "swapoff", "reboot", "uselib", NULL },
    "host administration and the kernel log (addresses, other users' activity): "
    "nothing for an agent, denied in case a capability check is ever missed" },
};

typedef struct {
  const char *action;
  const char *rule;
  const char *why;
} RuleText;

/* The argument-dependent rules added by add_conditional_rules(), in order;
 * keep the two in step. */
static const RuleText conditional_texts[] = {
  { "ENOSYS", "clone3",
    "its flags sit in a struct in memory that seccomp cannot read; ENOSYS makes "
    "glibc fall back to clone(), whose flags the next rule checks (as Flatpak)" },
  { "EPERM", "clone/unshare with any CLONE_NEW* namespace flag",
    "a new user namespace gives back every capability (and with it mount, "
    "netfilter, the mount API's bugs); the other namespace flags are refused "
    "too, so that no code path depends on a capability check" },
  { "EPERM", "ioctl TIOCSTI / TIOCLINUX (request compared on its low 32 bits)",
    "pushing keystrokes into the terminal's input queue: when the agent shares "
    "a terminal with a shell they run after the agent exits (CVE-2017-5226); "
    "the kernel reads the request as 32 bits, so the high half is masked off" },
  { "EAFNOSUPPORT", "socket with a family other than AF_UNIX, AF_INET, AF_INET6, AF_NETLINK",
    "raw packet sockets, Bluetooth, CAN, vsock, AF_ALG, … are attack surface "
    "and ways around the network policy; EAFNOSUPPORT is what a kernel without "
    "the family answers, which every program already handles" },
  { "EPROTONOSUPPORT", "socket(AF_NETLINK) with a protocol other than NETLINK_ROUTE",
    "NETLINK_ROUTE stays: getifaddrs(), getaddrinfo(AI_ADDRCONFIG), Node's "
    "os.networkInterfaces() and `ip addr` read it (changes need CAP_NET_ADMIN, "
    "which nothing here has). Audit, uevent, sock_diag, netfilter, xfrm, "
    "generic netlink and the rest are refused" },
  { "EPERM", "personality other than PER_LINUX and the query 0xffffffff",
    "personas such as MMAP_PAGE_ZERO or READ_IMPLIES_EXEC weaken the process "
    "against exploits (page 0 mapped, writable memory executable); "
    "ADDR_NO_RANDOMIZE is refused too (gdb, setarch -R, TSan's re-exec fail)" },
  { "EPERM", "prlimit64 that sets the limits of another process (pid not 0, new limits given)",
    "every process inside runs as the same user, and the kernel lets a process "
    "set a same-user process's limits with no capability: the agent could lower "
    "the hard limits of pid 1 and of the command supervisors, which no one "
    "inside can raise again and which every later command inherits. A "
    "process's own limits (pid 0: setrlimit, ulimit) and reading another's "
    "stay allowed" },
};

static const char *const bad_arch_text =
  "every system call of another ABI (i386 via int 0x80, x32 on x86_64): "
  "the compat paths have their own history of kernel bugs and this filter "
  "describes the native ABI only; KILL_PROCESS rather than an errno because a "
  "program on a foreign ABI cannot even exit cleanly when all its calls fail, "
  "and SIGSYS makes the reason visible in its exit status";

static gboolean
add_rule (scmp_filter_ctx        ctx,
          uint32_t               action,
          const char            *name,
          unsigned int           n_args,
          const struct scmp_arg_cmp *args,
          GError               **error)
{
  int nr = seccomp_syscall_resolve_name (name);
  int r;

  if (nr == __NR_SCMP_ERROR)
    {
      g_set_error (error, PADDOCK_SECCOMP_ERROR, PADDOCK_SECCOMP_ERROR_FAILED,
                   "libseccomp does not know the system call %s", name);
      return FALSE;
    }

  /* A negative number is libseccomp's name for a system call this
   * architecture does not have: there is nothing to deny. */
  if (nr < 0)
    return TRUE;

  r = seccomp_rule_add_array (ctx, action, nr, n_args, args);
  if (r != 0)
    {
      g_set_error (error, PADDOCK_SECCOMP_ERROR, PADDOCK_SECCOMP_ERROR_FAILED,
                   "cannot add a seccomp rule for %s: %s", name, g_strerror (-r));
      return FALSE;
    }
  return TRUE;
}

static gboolean
add_rule1 (scmp_filter_ctx     ctx,
           uint32_t            action,
           const char         *name,
           struct scmp_arg_cmp arg,
           GError            **error)
{
  return add_rule (ctx, action, name, 1, &arg, error);
}

/* Denies ARG in [LO, HI] (64-bit, unsigned) for NAME: libseccomp compares
 * each argument at most once per rule, so the range is cut into aligned
 * power-of-two blocks, each one masked comparison. */
static gboolean
deny_range (scmp_filter_ctx ctx,
            uint32_t        action,
            const char     *name,
            unsigned int    arg,
            guint64         lo,
            guint64         hi,
            GError        **error)
{
  g_assert (lo <= hi);

  for (;;)
    {
      guint64 size = 1;

      /* The largest block that starts at LO, is aligned and fits. */
      while (size < (G_GUINT64_CONSTANT (1) << 63) &&
             (lo & (size * 2 - 1)) == 0 &&
             lo + (size * 2 - 1) <= hi &&
             lo + (size * 2 - 1) >= lo)
        size *= 2;

      if (!add_rule1 (ctx, action, name,
                      SCMP_CMP (arg, SCMP_CMP_MASKED_EQ, ~(size - 1), lo), error))
        return FALSE;

      if (lo + (size - 1) >= hi)
        return TRUE;
      lo += size;
    }
}

static gboolean
add_conditional_rules (scmp_filter_ctx ctx,
                       GError        **error)
{
  static const guint64 ns_flags[] = {
    CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
    CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
  };
  /* Allowed socket families, ascending. */
  static const int families[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK };
  /* clone()'s flags are its first argument, except on s390 (second). */
#if defined(__s390__) || defined(__s390x__) || defined(__CRIS__)
  const unsigned int clone_flags_arg = 1;
#else
  const unsigned int clone_flags_arg = 0;
#endif
  const uint32_t eperm = SCMP_ACT_ERRNO (EPERM);
  int next = 0;

  /* clone3: ENOSYS, see conditional_texts. */
  if (!add_rule (ctx, SCMP_ACT_ERRNO (ENOSYS), "clone3", 0, NULL, error))
    return FALSE;

  /* Namespaces: one rule per flag (rules are OR'ed; one comparison each). */
  for (guint i = 0; i < G_N_ELEMENTS (ns_flags); i++)
    {
      if (!add_rule1 (ctx, eperm, "clone",
                      SCMP_CMP (clone_flags_arg, SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]),
                      error) ||
          !add_rule1 (ctx, eperm, "unshare",
                      SCMP_A0 (SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]), error))
        return FALSE;
    }
  if (!add_rule1 (ctx, eperm, "unshare",
                  SCMP_A0 (SCMP_CMP_MASKED_EQ, CLONE_NEWTIME, CLONE_NEWTIME), error))
    return FALSE;

  /* Terminal injection. The tty layer takes `unsigned int cmd`: a request
   * with junk in the high 32 bits still means TIOCSTI there, so compare the
   * low half only. */
  if (!add_rule1 (ctx, eperm, "ioctl",
                  SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xffffffffUL, (guint64) TIOCSTI), error) ||
      !add_rule1 (ctx, eperm, "ioctl",
                  SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xffffffffUL, (guint64) TIOCLINUX), error))
    return FALSE;

  /* Socket families: deny every gap between the allowed ones and all above
   * the last. Compared on all 64 bits: a value with junk in the high half
   * (which the kernel would truncate to an allowed family) is refused, which
   * fails safe. */
  for (guint i = 0; i < G_N_ELEMENTS (families); i++)
    {
      if (families[i] > next &&
          !deny_range (ctx, SCMP_ACT_ERRNO (EAFNOSUPPORT), "socket", 0,
                       (guint64) next, (guint64) families[i] - 1, error))
        return FALSE;
      next = families[i] + 1;
    }
  if (!add_rule1 (ctx, SCMP_ACT_ERRNO (EAFNOSUPPORT), "socket",
                  SCMP_A0 (SCMP_CMP_GE, (guint64) next), error))
    return FALSE;

  /* Netlink: NETLINK_ROUTE (0) only. */
  {
    struct scmp_arg_cmp netlink[] = {
      SCMP_A0 (SCMP_CMP_EQ, AF_NETLINK),
      SCMP_A2 (SCMP_CMP_NE, NETLINK_ROUTE),
    };

    if (!add_rule (ctx, SCMP_ACT_ERRNO (EPROTONOSUPPORT), "socket",
                   G_N_ELEMENTS (netlink), netlink, error))
      return FALSE;
  }

  /* personality: PER_LINUX (0) and the query only. */
  if (!deny_range (ctx, eperm, "personality", 0, PER_LINUX + 1, PERSONALITY_QUERY - 1, error) ||
      !add_rule1 (ctx, eperm, "personality", SCMP_A0 (SCMP_CMP_GT, PERSONALITY_QUERY), error))
    return FALSE;

  /* prlimit64: setting another process's limits (pid and new limits both
   * non-zero; a process naming itself by its own pid is refused too, which
   * glibc never does: setrlimit passes 0). */
  {
    struct scmp_arg_cmp other_process[] = {
      SCMP_A0 (SCMP_CMP_NE, 0),
      SCMP_A2 (SCMP_CMP_NE, 0),
    };

    if (!add_rule (ctx, eperm, "prlimit64", G_N_ELEMENTS (other_process), other_process, error))
      return FALSE;
  }

  return TRUE;
}

/* ---- build, load, describe ------------------------------------------------ */

/* The seals a filter's memfd carries once built: no write, no resize. */
#define PROGRAM_SEALS (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW)

/* Reads a whole BPF program from FD with pread(): the file offset is shared
 * by every duplicate of a memfd handed to several sandboxes at once. */
static gboolean
read_program (int                 fd,
              struct sock_fprog  *prog,
              GError            **error)
{
  g_autofree struct sock_filter *filter = NULL;
  struct stat st;
  gsize done = 0;

  if (fstat (fd, &st) != 0)
    {
      int saved_errno = errno;
      g_set_error (error, PADDOCK_SECCOMP_ERROR, PADDOCK_SECCOMP_ERROR_FAILED,
                   "cannot read the exported seccomp filter back: %s", g_strerror (saved_errno));
      return FALSE;
    }
  if (st.st_size <= 0 || st.st_size % sizeof (struct sock_filter) != 0 ||
      st.st_size / sizeof (struct sock_filter) > BPF_MAXINSNS)
    {
      g_set_error (error, PADDOCK_SECCOMP_ERROR, PADDOCK_SECCOMP_ERROR_FAILED,
                   "the exported seccomp filter has an impossible size (%lld bytes)",
                   (long long) st.st_size);
      return FALSE;
    }

  filter = g_malloc (st.st_size);
  while (done < (gsize) st.st_size)
    {
      ssize_t n = pread (fd, (char *) filter + done, st.st_size - done, (off_t) done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int saved_errno = n < 0 ? errno : EIO;
          g_set_error (error, PADDOCK_SECCOMP_ERROR, PADDOCK_SECCOMP_ERROR_FAILED,
                       "cannot read the exported seccomp filter back: %s",
                       g_strerror (saved_errno));
          return FALSE;
        }
      done += n;
    }

  prog->len = (unsigned short) (st.st_size / sizeof (struct sock_filter));
  prog->filter = g_steal_pointer (&filter);
  return TRUE;
}

/* Builds the filter with libseccomp and exports its BPF into a new memfd
 * (libseccomp 2.5 exports only to an fd). Returns the memfd, or -1. */
static int
build_into_memfd (GError **error)
{
  g_auto(PaddockScmpCtx) ctx = NULL;
  paddock_autofd int fd = -1;
  int r;

  /* Default allow (see the top of the file). The context holds the native
   * architecture only: x86 and x32 are deliberately not added, so that every
   * system call made through their ABIs hits the bad-arch action. */
  ctx = seccomp_init (SCMP_ACT_ALLOW);
  if (ctx == NULL)
    {
      g_set_error (error, PADDOCK_SECCOMP_ERROR, PADDOCK_SECCOMP_ERROR_UNSUPPORTED,
                   "libseccomp cannot build a filter for this architecture");
      return -1;
    }

  if ((r = seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) != 0 ||
      /* A binary tree of syscall numbers instead of a linear list: the
       * filter runs on every system call of the session. */
      (r = seccomp_attr_set (ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) != 0)
    {
      g_set_error (error, PADDOCK_SECCOMP_ERROR, PADDOCK_SECCOMP_ERROR_FAILED,
                   "cannot set a seccomp filter attribute: %s", g_strerror (-r));
      return -1;
    }

  for (guint i = 0; i < G_N_ELEMENTS (deny_groups); i++)
    for (guint j = 0; deny_groups[i].syscalls[j] != NULL; j++)
      if (!add_rule (ctx, SCMP_ACT_ERRNO (EPERM), deny_groups[i].syscalls[j], 0, NULL, error))
        return -1;

  if (!add_conditional_rules (ctx, error))
    return -1;

  fd = memfd_create ("paddock-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    {
      int saved_errno = errno;
      g_set_error (error, PADDOCK_SECCOMP_ERROR, PADDOCK_SECCOMP_ERROR_FAILED,
                   "memfd_create failed: %s", g_strerror (saved_errno));
      return -1;
    }
  if ((r = seccomp_export_bpf (ctx, fd)) != 0)
    {
      g_set_error (error, PADDOCK_SECCOMP_ERROR, PADDOCK_SECCOMP_ERROR_FAILED,
                   "cannot export the seccomp filter: %s", g_strerror (-r));
      return -1;
    }
  return paddock_steal_fd (&fd);
}

gboolean
paddock_seccomp_build (struct sock_fprog *prog,
                       GError           **error)
{
  paddock_autofd int fd = -1;

  g_return_val_if_fail (prog != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  memset (prog, 0, sizeof *prog);
  fd = build_into_memfd (error);
  return fd >= 0 && read_program (fd, prog, error);
}

int
paddock_seccomp_build_sealed (GError **error)
{
  paddock_autofd int fd = -1;

  g_return_val_if_fail (error == NULL || *error == NULL, -1);

  fd = build_into_memfd (error);
  if (fd < 0)
    return -1;
  if (fcntl (fd, F_ADD_SEALS, PROGRAM_SEALS | F_SEAL_SEAL) != 0)
    {
      int saved_errno = errno;
      g_set_error (error, PADDOCK_SECCOMP_ERROR, PADDOCK_SECCOMP_ERROR_FAILED,
                   "cannot seal the seccomp filter's memfd: %s", g_strerror (saved_errno));
      return -1;
    }
  return paddock_steal_fd (&fd);
}

gboolean
paddock_seccomp_read_sealed (int                 fd,
                             struct sock_fprog  *prog,
                             GError            **error)
{
  int seals;

  g_return_val_if_fail (prog != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  memset (prog, 0, sizeof *prog);
  /* Sealed against writes and resizing: what is loaded is what was built
   * (and described), whoever else holds the fd. */
  seals = fcntl (fd, F_GET_SEALS);
  if (seals < 0 || (seals & PROGRAM_SEALS) != PROGRAM_SEALS)
    {
      g_set_error (error, PADDOCK_SECCOMP_ERROR, PADDOCK_SECCOMP_ERROR_FAILED,
                   "the seccomp filter's fd %d is not a memfd sealed against writes%s%s", fd,
                   seals < 0 ? ": " : "", seals < 0 ? g_strerror (errno) : "");
      return FALSE;
    }
  return read_program (fd, prog, error);
}

void
paddock_seccomp_clear (struct sock_fprog *prog)
{
  g_return_if_fail (prog != NULL);

  g_clear_pointer (&prog->filter, g_free);
  prog->len = 0;
}

int
paddock_seccomp_load (const struct sock_fprog *prog)
{
  if (prog == NULL || prog->filter == NULL || prog->len == 0)
    return EINVAL;
  /* Flags 0: no TSYNC (the caller is single-threaded), and the kernel's
   * default speculative-store-bypass mitigation stays on. */
  if (syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) != 0)
    return errno;
  return 0;
}

/* Parses the decimal after "KEY:\t" in BUF (NUL-terminated); -1 if absent. */
static int
status_field (const char *buf,
              const char *key)
{
  size_t key_len = strlen (key);
  const char *p = buf;

  while (p != NULL && *p != '\0')
    {
      if (strncmp (p, key, key_len) == 0 && p[key_len] == ':')
        {
          int value = 0;
          gboolean any = FALSE;

          p += key_len + 1;
          while (*p == ' ' || *p == '\t')
            p++;
          while (*p >= '0' && *p <= '9' && value < 100000000)
            {
              value = value * 10 + (*p++ - '0');
              any = TRUE;
            }
          return any ? value : -1;
        }
      p = strchr (p, '\n');
      if (p != NULL)
        p++;
    }
  return -1;
}

int
paddock_seccomp_read_status (int *mode,
                             int *n_filters)
{
  char buf[8192];
  size_t len = 0;
  paddock_autofd int fd = open ("/proc/self/status", O_RDONLY | O_CLOEXEC | O_NOCTTY);

  if (fd < 0)
    return errno;
  while (len < sizeof buf - 1)
    {
      ssize_t n = read (fd, buf + len, sizeof buf - 1 - len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return errno;
      if (n == 0)
        break;
      len += n;
    }
  buf[len] = '\0';

  if (mode != NULL)
    *mode = status_field (buf, "Seccomp");
  if (n_filters != NULL)
    *n_filters = status_field (buf, "Seccomp_filters");
  return 0;
}

char *
paddock_seccomp_describe (void)
{
  g_autoptr(GString) out = g_string_new ("default ALLOW; the native system call ABI only\n");

  for (guint i = 0; i < G_N_ELEMENTS (deny_groups); i++)
    {
      g_autofree char *names = g_strjoinv (", ", (char **) deny_groups[i].syscalls);

      g_string_append_printf (out, "EPERM %s — %s\n", names, deny_groups[i].why);
    }
  for (guint i = 0; i < G_N_ELEMENTS (conditional_texts); i++)
    g_string_append_printf (out, "%s %s — %s\n", conditional_texts[i].action,
                            conditional_texts[i].rule, conditional_texts[i].why);
  g_string_append_printf (out, "KILL_PROCESS %s\n", bad_arch_text);

  return g_string_free (g_steal_pointer (&out), FALSE);
}
