/* escape-probe.c — one attempt to leave a safe session, run inside it by test-escape.sh
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Usage: escape-probe PROBE [ARG…]. Makes exactly one attempt and prints one
 * line: "blocked ERRNO-NAME" (exit 0) when the kernel refused it, "escaped
 * DETAIL" (exit 1) when it worked; exit 2 on a usage error. A probe the
 * seccomp filter kills prints nothing: the caller sees the signal.
 *
 * Linked statically: it runs inside the sandbox's root view, where only
 * /usr and the workspace (where the test copies it) are certain to exist.
 * Raw syscall() throughout, so that no libc wrapper or fallback hides what
 * the kernel (or the filter) answered.
 */

/* The build defines _GNU_SOURCE for every file; a build of this file alone
 * may not. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef AF_PACKET
#define AF_PACKET 17
#endif
#ifndef NETLINK_AUDIT
#define NETLINK_AUDIT 9
#endif

/* Report a syscall result: r < 0 is the refusal we hope for. */
static int
verdict (long r, const char *what)
{
  if (r < 0)
    {
      int e = errno;
      const char *name = strerrorname_np (e);
      printf ("blocked %s\n", name ? name : "?");
      return 0;
    }
  printf ("escaped %s (returned %ld)\n", what, r);
  return 1;
}

static int
probe_ptrace_attach (const char *pid_text)
{
  pid_t pid = (pid_t) atoi (pid_text);
  long r = syscall (SYS_ptrace, PTRACE_ATTACH, pid, NULL, NULL);
  int rc = verdict (r, "PTRACE_ATTACH");
  if (r == 0)
    syscall (SYS_ptrace, PTRACE_DETACH, pid, NULL, NULL);
  return rc;
}

static int
probe_ptrace_child (void)
{
  /* The natural way a debugger starts: trace one's own child. */
  pid_t child = fork ();
  long r;
  int e;

  if (child == 0)
    {
      pause ();
      _exit (0);
    }
  r = syscall (SYS_ptrace, PTRACE_ATTACH, child, NULL, NULL);
  e = errno;
  kill (child, SIGKILL);
  waitpid (child, NULL, 0);
  errno = e;
  return verdict (r, "PTRACE_ATTACH to own child");
}

static int
probe_mount (const char *dir)
{
  mkdir (dir, 0700);
  return verdict (syscall (SYS_mount, "none", dir, "tmpfs", 0L, NULL), "mount tmpfs");
}

static int
probe_umount (const char *dir)
{
  return verdict (syscall (SYS_umount2, dir, MNT_DETACH), "umount2 MNT_DETACH");
}

static int
probe_unshare (const char *which)
{
  long flag = !strcmp (which, "user") ? CLONE_NEWUSER
            : !strcmp (which, "mount") ? CLONE_NEWNS
            : !strcmp (which, "net") ? CLONE_NEWNET
            : !strcmp (which, "pid") ? CLONE_NEWPID
            : -1;
  if (flag < 0)
    return 2;
  return verdict (syscall (SYS_unshare, flag), "unshare");
}

static int
probe_clone3_newuser (void)
{
  struct clone_args args = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
  long r = syscall (SYS_clone3, &args, sizeof args);
  if (r == 0)
    _exit (0);
  if (r > 0)
    waitpid ((pid_t) r, NULL, 0);
  return verdict (r, "clone3(CLONE_NEWUSER) made a child");
}

static int
probe_keyctl (void)
{
  return verdict (syscall (SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0),
                  "keyctl(KEYCTL_GET_KEYRING_ID, user keyring)");
}

static int
probe_add_key (void)
{
  return verdict (syscall (SYS_add_key, "user", "paddock-escape", "x", 1,
                           KEY_SPEC_SESSION_KEYRING),
                  "add_key into the session keyring");
}

static int
probe_bpf (void)
{
  union bpf_attr attr;
  memset (&attr, 0, sizeof attr);
  attr.map_type = BPF_MAP_TYPE_ARRAY;
  attr.key_size = 4;
  attr.value_size = 4;
  attr.max_entries = 1;
  return verdict (syscall (SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr), "bpf(BPF_MAP_CREATE)");
}

static int
probe_perf (void)
{
  struct perf_event_attr attr;
  memset (&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.exclude_kernel = 1;
  return verdict (syscall (SYS_perf_event_open, &attr, 0, -1, -1, 0L), "perf_event_open(self)");
}

static int
probe_io_uring (void)
{
  struct io_uring_params params;
  memset (&params, 0, sizeof params);
  return verdict (syscall (SYS_io_uring_setup, 4, &params), "io_uring_setup");
}

/* Push "TEXT\n" into PATH's input queue, one character at a time. */
static int
probe_tty_ioctl (const char *path, const char *text, int tioclinux)
{
  int fd = open (path, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    {
      int e = errno;
      printf ("blocked %s (cannot open %s)\n", strerrorname_np (e), path);
      return 0;
    }
  if (tioclinux)
    {
      char sub = 12;   /* TIOCL_GETFGCONSOLE-ish: any subcode shows the ioctl got through */
      return verdict (ioctl (fd, TIOCLINUX, &sub), "TIOCLINUX");
    }
  for (const char *p = text; *p; p++)
    if (ioctl (fd, TIOCSTI, p) != 0)
      return verdict (-1, NULL);
  {
    char nl = '\n';

    ioctl (fd, TIOCSTI, &nl);
  }
  printf ("escaped TIOCSTI pushed \"%s\" into %s\n", text, path);
  return 1;
}

static int
probe_socket (const char *which)
{
  long r;
  if (!strcmp (which, "packet"))
    r = syscall (SYS_socket, AF_PACKET, SOCK_RAW, htons (ETH_P_ALL));
  else if (!strcmp (which, "raw"))
    r = syscall (SYS_socket, AF_INET, SOCK_RAW, IPPROTO_ICMP);
  else if (!strcmp (which, "raw6"))
    r = syscall (SYS_socket, AF_INET6, SOCK_RAW, IPPROTO_ICMPV6);
  else if (!strcmp (which, "netlink-audit"))
    r = syscall (SYS_socket, AF_NETLINK, SOCK_RAW, NETLINK_AUDIT);
  else if (!strcmp (which, "netlink-uevent"))
    r = syscall (SYS_socket, AF_NETLINK, SOCK_RAW, 15 /* NETLINK_KOBJECT_UEVENT */);
  else if (!strcmp (which, "vsock"))
    r = syscall (SYS_socket, 40 /* AF_VSOCK */, SOCK_STREAM, 0);
  else
    return 2;
  return verdict (r, which);
}

static int
probe_bind (const char *port_text)
{
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons (atoi (port_text)),
                             .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  if (fd < 0)
    return verdict (-1, NULL);
  if (bind (fd, (struct sockaddr *) &sin, sizeof sin) != 0)
    return verdict (-1, NULL);
  if (listen (fd, 1) != 0)
    return verdict (-1, NULL);
  printf ("escaped bound and listening on 127.0.0.1:%s\n", port_text);
  return 1;
}

static int
probe_unix_connect (const char *name, int abstract)
{
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  socklen_t len;
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return verdict (-1, NULL);
  if (abstract)
    {
      sun.sun_path[0] = '\0';
      strncpy (sun.sun_path + 1, name, sizeof sun.sun_path - 2);
      len = offsetof (struct sockaddr_un, sun_path) + 1 + strlen (name);
    }
  else
    {
      strncpy (sun.sun_path, name, sizeof sun.sun_path - 1);
      len = sizeof sun;
    }
  return verdict (connect (fd, (struct sockaddr *) &sun, len), "connect");
}

static int
probe_chroot (void)
{
  long r;

  mkdir ("/tmp/jail", 0700);
  r = syscall (SYS_chroot, "/tmp/jail");
  if (r == 0)
    {
      /* The classic escape: chdir up past the new root. */
      for (int i = 0; i < 64; i++)
        chdir ("..");
      syscall (SYS_chroot, ".");
      printf ("escaped chroot() allowed; cwd after breakout: %s\n", getcwd (NULL, 0));
      return 1;
    }
  return verdict (r, NULL);
}

static int
probe_open_by_handle (void)
{
  struct { struct file_handle fh; unsigned char bytes[MAX_HANDLE_SZ]; } h;
  int mount_id;
  int root;

  h.fh.handle_bytes = MAX_HANDLE_SZ;
  if (name_to_handle_at (AT_FDCWD, "/", &h.fh, &mount_id, 0) != 0)
    {
      /* No handle to forge from: try a made-up one (the 'shocker' way). */
      memset (&h, 0, sizeof h);
      h.fh.handle_bytes = 8;
      h.fh.handle_type = 1;
    }
  root = open ("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  return verdict (syscall (SYS_open_by_handle_at, root, &h.fh, O_RDONLY), "open_by_handle_at");
}

static int
probe_personality (void)
{
  long r = syscall (SYS_personality, (unsigned long) READ_IMPLIES_EXEC);
  long now;

  if (r < 0)
    return verdict (r, NULL);
  now = syscall (SYS_personality, 0xffffffffUL);
  if (now & READ_IMPLIES_EXEC)
    {
      printf ("escaped personality is now 0x%lx\n", now);
      return 1;
    }
  printf ("blocked (persona unchanged: 0x%lx)\n", now);
  return 0;
}

static int
probe_int80 (void)
{
#if defined(__x86_64__)
  long ret;
  /* i386 getpid (20) through the compat entry. */
  __asm__ volatile ("int $0x80" : "=a" (ret) : "a" (20L) : "memory");
  printf ("escaped int 0x80 getpid returned %ld\n", ret);
  return 1;
#else
  printf ("skip not x86_64\n");
  return 3;
#endif
}

/* Lowers the soft and hard RLIMIT_NOFILE of PID (a process of the same
 * user: the sandbox's pid 1) to what it has now minus one. */
static int
probe_prlimit (const char *pid_text)
{
  pid_t pid = (pid_t) atoi (pid_text);
  struct rlimit now;
  struct rlimit lower;

  if (prlimit (pid, RLIMIT_NOFILE, NULL, &now) != 0)
    {
      printf ("skip cannot read the limits of %d: %s\n", (int) pid, strerrorname_np (errno));
      return 3;
    }
  lower.rlim_cur = lower.rlim_max = now.rlim_max - 1;
  return verdict (syscall (SYS_prlimit64, pid, RLIMIT_NOFILE, &lower, NULL), "prlimit64 (lower another process's RLIMIT_NOFILE)");
}

static int
probe_kill (const char *pid_text, const char *sig_text)
{
  return verdict (syscall (SYS_kill, (pid_t) atoi (pid_text), atoi (sig_text)), "kill");
}

int
main (int argc, char **argv)
{
  const char *p = argc > 1 ? argv[1] : "";
  const char *a = argc > 2 ? argv[2] : "";
  const char *b = argc > 3 ? argv[3] : "";

  setvbuf (stdout, NULL, _IOLBF, 0);
  if (!strcmp (p, "ptrace-attach")) return probe_ptrace_attach (a);
  if (!strcmp (p, "ptrace-child")) return probe_ptrace_child ();
  if (!strcmp (p, "mount")) return probe_mount (a);
  if (!strcmp (p, "umount")) return probe_umount (a);
  if (!strcmp (p, "unshare")) return probe_unshare (a);
  if (!strcmp (p, "clone3-newuser")) return probe_clone3_newuser ();
  if (!strcmp (p, "keyctl")) return probe_keyctl ();
  if (!strcmp (p, "add-key")) return probe_add_key ();
  if (!strcmp (p, "bpf")) return probe_bpf ();
  if (!strcmp (p, "perf")) return probe_perf ();
  if (!strcmp (p, "io-uring")) return probe_io_uring ();
  if (!strcmp (p, "tiocsti")) return probe_tty_ioctl (a, b, 0);
  if (!strcmp (p, "tioclinux")) return probe_tty_ioctl (a, b, 1);
  if (!strcmp (p, "socket")) return probe_socket (a);
  if (!strcmp (p, "bind")) return probe_bind (a);
  if (!strcmp (p, "unix-connect")) return probe_unix_connect (a, 0);
  if (!strcmp (p, "abstract-connect")) return probe_unix_connect (a, 1);
  if (!strcmp (p, "chroot")) return probe_chroot ();
  if (!strcmp (p, "open-by-handle")) return probe_open_by_handle ();
  if (!strcmp (p, "personality")) return probe_personality ();
  if (!strcmp (p, "int80")) return probe_int80 ();
  if (!strcmp (p, "kill")) return probe_kill (a, b);
  if (!strcmp (p, "prlimit")) return probe_prlimit (a);
  fprintf (stderr, "escape-probe: unknown probe \"%s\"\n", p);
  return 2;
}
