/* paddock-landlock.c — the sandbox's Landlock rules: planned before clone, applied after
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Landlock is the sandbox's second wall around files and the only one
 * around TCP ports and signals: the root view decides what exists, Landlock
 * decides what may be written even where the view is writable, and it keeps
 * holding if a mount is ever wrong. The ruleset handles every right the
 * running kernel knows (an unhandled right is simply allowed), then grants:
 *   read + execute   below the read paths ("/": the view is already minimal);
 *   write            below the write paths only (workspace, HOME, /tmp,
 *                    /dev/shm): create, remove, rename (REFER), truncate;
 *   device use       on the device paths (/dev/null, /dev/tty, /dev/pts, …):
 *                    write, truncate (`> /dev/null` opens with O_TRUNC) and
 *                    ioctl (termios on a terminal).
 * Never granted anywhere: MAKE_CHAR/MAKE_BLOCK (device nodes), writes to
 * /proc (/proc/PID/mem of a sibling would go around the seccomp ptrace
 * denial), /sys, /etc, /usr. Network (ABI >= 4): TCP bind and connect
 * limited to the given ports. Scopes (ABI >= 6): no connecting to abstract
 * unix sockets made outside the sandbox (the host's X11, D-Bus, …) and no
 * signals to processes outside it.
 */

#include "config.h"

#include "paddock-landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Debian 12's <linux/landlock.h> (Linux 6.1) knows ABI 1 and 2 only. What
 * later kernels added, with the same values as the kernel's uapi header:
 * ABI 3 (6.2) TRUNCATE, ABI 4 (6.7) TCP rules, ABI 5 (6.10) IOCTL_DEV,
 * ABI 6 (6.12) scopes. The ruleset attribute grew with them, so it is our
 * own struct here, passed with the size the probed ABI understands. */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
#define PADDOCK_LANDLOCK_RULE_NET_PORT 2    /* enum landlock_rule_type, ABI 4 */

typedef struct {
  guint64 handled_access_fs;
  guint64 handled_access_net;   /* ABI 4 */
  guint64 scoped;               /* ABI 6 */
} PaddockRulesetAttr;

typedef struct {
  guint64 allowed_access;
  guint64 port;
} PaddockNetPortAttr;

#define FS_READ (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | \
                 LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_WRITE (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | \
                  LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_DIR | \
                  LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK | \
                  LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_SYM | \
                  LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE)
#define FS_DEVICE (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
                   LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)
/* The rights that mean something on a file (not a folder): a rule on a
 * file with any other right is refused (EINVAL). */
#define FS_FILE (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
                 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
                 LANDLOCK_ACCESS_FS_IOCTL_DEV)

#define MAX_PATH_RULES 64
#define MAX_PORT_RULES 1024

G_DEFINE_QUARK (paddock-landlock-error-quark, paddock_landlock_error)

static const struct {
  guint64 bit;
  const char *name;
} fs_right_names[] = {
  { LANDLOCK_ACCESS_FS_EXECUTE, "execute" },
  { LANDLOCK_ACCESS_FS_WRITE_FILE, "write_file" },
  { LANDLOCK_ACCESS_FS_READ_FILE, "read_file" },
  { LANDLOCK_ACCESS_FS_READ_DIR, "read_dir" },
  { LANDLOCK_ACCESS_FS_REMOVE_DIR, "remove_dir" },
  { LANDLOCK_ACCESS_FS_REMOVE_FILE, "remove_file" },
  { LANDLOCK_ACCESS_FS_MAKE_CHAR, "make_char" },
  { LANDLOCK_ACCESS_FS_MAKE_DIR, "make_dir" },
  { LANDLOCK_ACCESS_FS_MAKE_REG, "make_reg" },
  { LANDLOCK_ACCESS_FS_MAKE_SOCK, "make_sock" },
  { LANDLOCK_ACCESS_FS_MAKE_FIFO, "make_fifo" },
  { LANDLOCK_ACCESS_FS_MAKE_BLOCK, "make_block" },
  { LANDLOCK_ACCESS_FS_MAKE_SYM, "make_sym" },
  { LANDLOCK_ACCESS_FS_REFER, "refer" },
  { LANDLOCK_ACCESS_FS_TRUNCATE, "truncate" },
  { LANDLOCK_ACCESS_FS_IOCTL_DEV, "ioctl_dev" },
};

/* Every filesystem right ABI version ABI knows. */
static guint64
fs_rights_of_abi (int abi)
{
  guint64 rights = 0;

  if (abi >= 1)
    rights |= (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;   /* EXECUTE … MAKE_SYM */
  if (abi >= 2)
    rights |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3)
    rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 5)
    rights |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  return rights;
}

int
paddock_landlock_probe_abi (int *err)
{
  long abi = syscall (SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

  if (err != NULL)
    *err = abi < 0 ? errno : 0;
  return abi < 0 ? 0 : (int) abi;
}

static gsize
strv_len0 (const char *const *v)
{
  return v == NULL ? 0 : g_strv_length ((char **) v);
}

static gboolean
add_paths (GArray             *rules,
           const char *const  *paths,
           guint64             access,
           const char *const  *optional,
           GError            **error)
{
  for (gsize i = 0; paths != NULL && paths[i] != NULL; i++)
    {
      PaddockLandlockPathRule rule;

      if (!g_path_is_absolute (paths[i]))
        {
          g_set_error (error, PADDOCK_LANDLOCK_ERROR, PADDOCK_LANDLOCK_ERROR_INVALID,
                       "Landlock paths are absolute paths of the sandbox's view: %s", paths[i]);
          return FALSE;
        }
      if (rules->len >= MAX_PATH_RULES)
        {
          g_set_error (error, PADDOCK_LANDLOCK_ERROR, PADDOCK_LANDLOCK_ERROR_INVALID,
                       "more than %d Landlock path rules", MAX_PATH_RULES);
          return FALSE;
        }
      rule.path = g_strdup (paths[i]);
      rule.access = access;
      rule.optional = optional != NULL && g_strv_contains (optional, paths[i]);
      g_array_append_val (rules, rule);
    }
  return TRUE;
}

static guint64 *
copy_ports (const guint16 *ports,
            gsize          n)
{
  guint64 *out = g_new (guint64, MAX (n, 1));

  for (gsize i = 0; i < n; i++)
    out[i] = ports[i];
  return out;
}

static char *
ports_text (const guint64 *ports,
            gsize          n)
{
  g_autoptr(GString) out = g_string_new (NULL);

  if (n == 0)
    return g_strdup ("none");
  for (gsize i = 0; i < n; i++)
    g_string_append_printf (out, "%s%" G_GUINT64_FORMAT "%s", i > 0 ? ", " : "",
                            ports[i], ports[i] == 0 ? " (ephemeral)" : "");
  return g_string_free (g_steal_pointer (&out), FALSE);
}

gboolean
paddock_landlock_prepare (const PaddockLandlockRequest *request,
                          PaddockLandlockPlan          *plan,
                          GError                      **error)
{
  g_autoptr(GArray) rules = NULL;
  gboolean fs_requested, net_requested;
  int abi, abi_errno = 0;
  guint64 known_fs;

  g_return_val_if_fail (request != NULL, FALSE);
  g_return_val_if_fail (plan != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  g_return_val_if_fail (request->n_bind_ports == 0 || request->bind_ports != NULL, FALSE);
  g_return_val_if_fail (request->n_connect_ports == 0 || request->connect_ports != NULL, FALSE);

  memset (plan, 0, sizeof *plan);

  if (request->n_bind_ports > MAX_PORT_RULES || request->n_connect_ports > MAX_PORT_RULES)
    {
      g_set_error (error, PADDOCK_LANDLOCK_ERROR, PADDOCK_LANDLOCK_ERROR_INVALID,
                   "more than %d Landlock port rules", MAX_PORT_RULES);
      return FALSE;
    }

  abi = paddock_landlock_probe_abi (&abi_errno);
  known_fs = fs_rights_of_abi (abi);
  fs_requested = strv_len0 (request->read_paths) + strv_len0 (request->write_paths) +
                 strv_len0 (request->device_paths) > 0;
  net_requested = request->restrict_bind || request->restrict_connect;

  rules = g_array_new (FALSE, FALSE, sizeof (PaddockLandlockPathRule));
  if (!add_paths (rules, request->read_paths, FS_READ, request->optional_paths, error) ||
      !add_paths (rules, request->write_paths, FS_READ | FS_WRITE, request->optional_paths, error) ||
      !add_paths (rules, request->device_paths, FS_DEVICE, request->optional_paths, error))
    {
      for (guint i = 0; i < rules->len; i++)
        g_free (g_array_index (rules, PaddockLandlockPathRule, i).path);
      return FALSE;
    }

  plan->abi = abi;
  plan->abi_errno = abi_errno;

  /* ---- filesystem ---- */
  if (!fs_requested)
    {
      plan->fs_status = PADDOCK_LANDLOCK_NOT_REQUESTED;
      plan->fs_evidence = g_strdup ("no filesystem rules were asked for");
    }
  else if (abi == 0)
    {
      plan->fs_status = PADDOCK_LANDLOCK_UNENFORCED;
      plan->fs_evidence = g_strdup_printf ("this kernel has no Landlock (landlock_create_ruleset: %s)",
                                           g_strerror (abi_errno));
    }
  else
    {
      /* Handle everything the kernel knows; grant only what it knows too
       * (a rule naming an unhandled right is refused). */
      plan->handled_fs = known_fs;
      for (guint i = 0; i < rules->len; i++)
        g_array_index (rules, PaddockLandlockPathRule, i).access &= known_fs;

      if (abi < 3)
        {
          plan->fs_status = PADDOCK_LANDLOCK_PARTIAL;
          plan->fs_evidence = g_strdup_printf (
            "Landlock ABI %d: writes outside the write paths are refused, but truncation "
            "(truncate(2), O_TRUNC) is not covered before ABI 3%s", abi,
            abi < 2 ? ", and files cannot be renamed or linked across folders at all (no REFER before ABI 2)" : "");
        }
      else
        {
          plan->fs_status = PADDOCK_LANDLOCK_ENFORCED;
          plan->fs_evidence = g_strdup_printf (
            "Landlock ABI %d: read and execute below the read paths, writes only below "
            "the write paths and on the listed devices%s", abi,
            abi < 5 ? " (device ioctls are not covered before ABI 5)" : "");
        }
    }

  /* ---- network ---- */
  if (!net_requested)
    {
      plan->net_status = PADDOCK_LANDLOCK_NOT_REQUESTED;
      plan->net_evidence = g_strdup_printf ("no TCP port rules were asked for%s%s",
                                            request->unrestricted_bind_reason != NULL ? ": " : "",
                                            request->unrestricted_bind_reason != NULL
                                              ? request->unrestricted_bind_reason : "");
    }
  else if (abi < 4)
    {
      plan->net_status = PADDOCK_LANDLOCK_UNENFORCED;
      plan->net_evidence = abi == 0
        ? g_strdup ("this kernel has no Landlock: TCP bind and connect are not restricted")
        : g_strdup_printf ("Landlock ABI %d has no network rules (ABI 4, Linux 6.7): "
                           "TCP bind and connect are not restricted", abi);
    }
  else
    {
      g_autofree char *bind_text = NULL;
      g_autofree char *connect_text = NULL;
      g_autofree char *bind_note = NULL;

      if (request->restrict_bind)
        {
          plan->handled_net |= LANDLOCK_ACCESS_NET_BIND_TCP;
          plan->bind_ports = copy_ports (request->bind_ports, request->n_bind_ports);
          plan->n_bind_ports = request->n_bind_ports;
          bind_text = ports_text (plan->bind_ports, plan->n_bind_ports);
        }
      if (request->restrict_connect)
        {
          plan->handled_net |= LANDLOCK_ACCESS_NET_CONNECT_TCP;
          plan->connect_ports = copy_ports (request->connect_ports, request->n_connect_ports);
          plan->n_connect_ports = request->n_connect_ports;
          connect_text = ports_text (plan->connect_ports, plan->n_connect_ports);
        }
      /* Landlock only ever narrows: bind rules cannot take a port leased
       * after start. */
      if (bind_text != NULL)
        bind_note = g_strdup_printf ("only to ports %s (fixed at start: the session's leased ports; "
                                     "no other can be added)", bind_text);
      else if (request->unrestricted_bind_reason != NULL)
        bind_note = g_strdup_printf ("unrestricted (%s)", request->unrestricted_bind_reason);
      else
        bind_note = g_strdup ("unrestricted");
      plan->net_status = PADDOCK_LANDLOCK_ENFORCED;
      plan->net_evidence = g_strdup_printf (
        "Landlock ABI %d, TCP only (UDP and other protocols are not covered): bind %s; connect %s%s",
        abi, bind_note,
        connect_text != NULL ? "only to ports " : "unrestricted", connect_text != NULL ? connect_text : "");
    }

  /* ---- scopes ---- */
  if (!request->scope_signals_and_abstract_unix)
    {
      plan->scope_status = PADDOCK_LANDLOCK_NOT_REQUESTED;
      plan->scope_evidence = g_strdup ("no scoping was asked for");
    }
  else if (abi < 6)
    {
      plan->scope_status = PADDOCK_LANDLOCK_UNENFORCED;
      plan->scope_evidence = g_strdup_printf (
        "Landlock ABI %d has no scopes (ABI 6, Linux 6.12): abstract unix sockets and "
        "signals outside the sandbox are not restricted by Landlock", abi);
    }
  else
    {
      plan->scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
      plan->scope_status = PADDOCK_LANDLOCK_ENFORCED;
      plan->scope_evidence = g_strdup_printf (
        "Landlock ABI %d: no connections to abstract unix sockets and no signals "
        "to processes outside the sandbox's Landlock domain", abi);
    }

  if (plan->handled_fs != 0)
    {
      plan->n_paths = rules->len;
      plan->paths = (PaddockLandlockPathRule *) (void *) g_array_free (g_steal_pointer (&rules), FALSE);
    }
  else
    {
      for (guint i = 0; i < rules->len; i++)
        g_free (g_array_index (rules, PaddockLandlockPathRule, i).path);
    }

  return TRUE;
}

gboolean
paddock_landlock_plan_restricts_bind (const PaddockLandlockPlan *plan)
{
  return (plan->handled_net & LANDLOCK_ACCESS_NET_BIND_TCP) != 0;
}

void
paddock_landlock_plan_clear (PaddockLandlockPlan *plan)
{
  g_return_if_fail (plan != NULL);

  for (gsize i = 0; i < plan->n_paths; i++)
    g_free (plan->paths[i].path);
  g_free (plan->paths);
  g_free (plan->bind_ports);
  g_free (plan->connect_ports);
  g_free (plan->fs_evidence);
  g_free (plan->net_evidence);
  g_free (plan->scope_evidence);
  memset (plan, 0, sizeof *plan);
}

/* ---- in the child: raw system calls only ------------------------------- */

static int
add_net_rules (int            ruleset,
               guint64        access,
               const guint64 *ports,
               gsize          n)
{
  for (gsize i = 0; i < n; i++)
    {
      PaddockNetPortAttr attr = { .allowed_access = access, .port = ports[i] };

      if (syscall (SYS_landlock_add_rule, ruleset, PADDOCK_LANDLOCK_RULE_NET_PORT, &attr, 0) != 0)
        return errno;
    }
  return 0;
}

int
paddock_landlock_apply (const PaddockLandlockPlan *plan,
                        const char               **failed_path)
{
  PaddockRulesetAttr attr;
  size_t attr_size;
  int ruleset, err = 0;

  if (failed_path != NULL)
    *failed_path = NULL;
  if (plan == NULL)
    return EINVAL;
  if (plan->abi == 0 ||
      (plan->handled_fs == 0 && plan->handled_net == 0 && plan->scoped == 0))
    return 0;

  /* The size of the attribute the probed ABI knows: an older kernel refuses
   * a larger struct only if the fields it does not know are non-zero, but
   * passing its own size keeps that question away. */
  attr.handled_access_fs = plan->handled_fs;
  attr.handled_access_net = plan->handled_net;
  attr.scoped = plan->scoped;
  attr_size = plan->abi >= 6 ? sizeof attr
            : plan->abi >= 4 ? G_STRUCT_OFFSET (PaddockRulesetAttr, scoped)
            : G_STRUCT_OFFSET (PaddockRulesetAttr, handled_access_net);

  ruleset = (int) syscall (SYS_landlock_create_ruleset, &attr, attr_size, 0);
  if (ruleset < 0)
    return errno;

  for (gsize i = 0; i < plan->n_paths && err == 0; i++)
    {
      const PaddockLandlockPathRule *rule = &plan->paths[i];
      struct landlock_path_beneath_attr beneath;
      struct stat st;
      int fd;

      /* O_PATH: no read permission needed and nothing opened for real. */
      fd = open (rule->path, O_PATH | O_CLOEXEC);
      if (fd < 0)
        {
          if (errno == ENOENT && rule->optional)
            continue;
          err = errno;
          if (failed_path != NULL)
            *failed_path = rule->path;
          break;
        }

      beneath.allowed_access = rule->access;
      beneath.parent_fd = fd;
      if (fstat (fd, &st) != 0)
        err = errno;
      else if (!S_ISDIR (st.st_mode))
        beneath.allowed_access &= FS_FILE;

      if (err == 0 && beneath.allowed_access != 0 &&
          syscall (SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) != 0)
        err = errno;
      if (err != 0 && failed_path != NULL)
        *failed_path = rule->path;
      close (fd);
    }

  if (err == 0 && (plan->handled_net & LANDLOCK_ACCESS_NET_BIND_TCP))
    err = add_net_rules (ruleset, LANDLOCK_ACCESS_NET_BIND_TCP, plan->bind_ports, plan->n_bind_ports);
  if (err == 0 && (plan->handled_net & LANDLOCK_ACCESS_NET_CONNECT_TCP))
    err = add_net_rules (ruleset, LANDLOCK_ACCESS_NET_CONNECT_TCP, plan->connect_ports,
                         plan->n_connect_ports);

  if (err == 0 && syscall (SYS_landlock_restrict_self, ruleset, 0) != 0)
    err = errno;

  close (ruleset);
  return err;
}

const char *
paddock_landlock_status_to_string (PaddockLandlockStatus status)
{
  switch (status)
    {
    case PADDOCK_LANDLOCK_NOT_REQUESTED:
      return "not-requested";
    case PADDOCK_LANDLOCK_ENFORCED:
      return "enforced";
    case PADDOCK_LANDLOCK_PARTIAL:
      return "partial";
    case PADDOCK_LANDLOCK_UNENFORCED:
      return "unenforced";
    default:
      g_return_val_if_reached ("unenforced");
    }
}

static void
append_rights (GString *out,
               guint64  rights)
{
  gboolean first = TRUE;

  for (guint i = 0; i < G_N_ELEMENTS (fs_right_names); i++)
    if (rights & fs_right_names[i].bit)
      {
        g_string_append_printf (out, "%s%s", first ? "" : " ", fs_right_names[i].name);
        first = FALSE;
      }
  if (first)
    g_string_append (out, "none");
}

char *
paddock_landlock_describe (const PaddockLandlockPlan *plan)
{
  g_autoptr(GString) out = g_string_new (NULL);

  g_return_val_if_fail (plan != NULL, NULL);

  g_string_append_printf (out, "Landlock ABI %d\nhandled fs: ", plan->abi);
  append_rights (out, plan->handled_fs);
  g_string_append_printf (out, "\nhandled net:%s%s\nscoped:%s%s\n",
                          plan->handled_net & LANDLOCK_ACCESS_NET_BIND_TCP ? " bind_tcp" : "",
                          plan->handled_net & LANDLOCK_ACCESS_NET_CONNECT_TCP ? " connect_tcp" : "",
                          plan->scoped & LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET ? " abstract_unix_socket" : "",
                          plan->scoped & LANDLOCK_SCOPE_SIGNAL ? " signal" : "");
  for (gsize i = 0; i < plan->n_paths; i++)
    {
      g_string_append_printf (out, "%s%s: ", plan->paths[i].path,
                              plan->paths[i].optional ? " (optional)" : "");
      append_rights (out, plan->paths[i].access);
      g_string_append_c (out, '\n');
    }
  g_string_append_printf (out, "landlock-fs %s: %s\nlandlock-net %s: %s\nlandlock-scope %s: %s\n",
                          paddock_landlock_status_to_string (plan->fs_status), plan->fs_evidence,
                          paddock_landlock_status_to_string (plan->net_status), plan->net_evidence,
                          paddock_landlock_status_to_string (plan->scope_status), plan->scope_evidence);
  return g_string_free (g_steal_pointer (&out), FALSE);
}
