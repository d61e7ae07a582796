/* test-registry.c — unit tests of the port registry library
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <signal.h>

#include <sys/resource.h>

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-durable-file.h"
#include "paddock-registry.h"
#include "paddock-test-seccomp.h"

/* Test pools live in 30000–32767: above the default pool (which the D-Bus
 * tests use) and below the kernel's default ephemeral range. */
#define TEST_RANGE_FIRST 30000
#define TEST_RANGE_LAST  32767

/* Helpers */

static gboolean
have_ipv6 (void)
{
  paddock_autofd int fd = socket (AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in6 addr = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };

  return fd >= 0 && bind (fd, (struct sockaddr *) &addr, sizeof addr) == 0;
}

typedef struct
{
  gboolean    reuseaddr;
  gboolean    reuseport;
  int         v6only;   /* -1: leave the default */
  gboolean    listen;
} BindOptions;

/* Binds a socket the way another program might; returns it (>= 0) or
 * -errno. */
static int
outside_bind (int                family,
              const char        *address,
              guint16            port,
              const BindOptions *options)
{
  paddock_autofd int fd = socket (family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_storage storage;
  socklen_t len;
  int one = 1;

  g_assert_cmpint (fd, >=, 0);

  memset (&storage, 0, sizeof storage);
  if (family == AF_INET)
    {
      struct sockaddr_in *sin = (struct sockaddr_in *) &storage;

      sin->sin_family = AF_INET;
      sin->sin_port = htons (port);
      g_assert_cmpint (inet_pton (AF_INET, address, &sin->sin_addr), ==, 1);
      len = sizeof *sin;
    }
  else
    {
      struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) &storage;

      sin6->sin6_family = AF_INET6;
      sin6->sin6_port = htons (port);
      g_assert_cmpint (inet_pton (AF_INET6, address, &sin6->sin6_addr), ==, 1);
      len = sizeof *sin6;
    }

  if (options->reuseaddr)
    g_assert_no_errno (setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one));
  if (options->reuseport)
    g_assert_no_errno (setsockopt (fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one));
  if (family == AF_INET6 && options->v6only >= 0)
    g_assert_no_errno (setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY,
                                   &options->v6only, sizeof options->v6only));

  if (bind (fd, (struct sockaddr *) &storage, len) != 0)
    return -errno;
  if (options->listen && listen (fd, 16) != 0)
    return -errno;

  return paddock_steal_fd (&fd);
}

/* What another program trying to listen on @port would get: 0 or errno. */
static int
try_listen (int         family,
            const char *address,
            guint16     port,
            gboolean    reuseaddr)
{
  BindOptions options = { .reuseaddr = reuseaddr, .v6only = -1, .listen = TRUE };
  paddock_autofd int fd = outside_bind (family, address, port, &options);

  return fd >= 0 ? 0 : -fd;
}

static gboolean
port_is_free (guint16 port)
{
  if (try_listen (AF_INET, "127.0.0.1", port, FALSE) != 0)
    return FALSE;
  if (have_ipv6 () && try_listen (AF_INET6, "::1", port, FALSE) != 0)
    return FALSE;
  return TRUE;
}

/* Finds @n consecutive ports free right now, starting at a place derived
 * from our pid so that concurrent runs (plain and sanitizer builds) tend
 * not to meet. Returns 0 if none. */
static guint16
find_free_range (guint n)
{
  guint span = TEST_RANGE_LAST - TEST_RANGE_FIRST + 1 - n;
  guint start = ((guint) getpid () * 97u) % span;

  for (guint tries = 0; tries < span; tries += n)
    {
      guint16 base = (guint16) (TEST_RANGE_FIRST + (start + tries) % span);
      gboolean ok = TRUE;

      for (guint i = 0; i < n && ok; i++)
        ok = port_is_free ((guint16) (base + i));

      if (ok)
        return base;
    }

  return 0;
}

/* A registry over @n ports that are free now; NULL (test skipped) if the
 * machine has no such range. */
static PaddockRegistry *
new_registry (guint    n,
              guint    max_leases,
              guint    max_per_owner,
              guint16 *out_base)
{
  g_autoptr(GError) error = NULL;
  PaddockRegistry *registry;
  guint16 base = find_free_range (n);

  if (base == 0)
    {
      g_test_skip ("no free port range on this machine");
      return NULL;
    }

  registry = paddock_registry_new (base, (guint16) (base + n - 1), max_leases, max_per_owner,
                                   &error);
  g_assert_no_error (error);
  g_assert_nonnull (registry);

  *out_base = base;
  return registry;
}

static void
assert_sorted (PaddockRegistry *registry)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (registry));
  guint previous = 0;

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(PaddockLease) lease = g_list_model_get_item (G_LIST_MODEL (registry), i);

      g_assert_cmpuint (paddock_lease_get_port (lease), >, previous);
      previous = paddock_lease_get_port (lease);
    }
}

static char *
make_tmp_dir (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("paddock-registry-XXXXXX", &error);

  g_assert_no_error (error);
  return dir;
}

static void
rm_rf (const char *path)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GFileEnumerator) enumerator = NULL;
  GFileInfo *info;

  enumerator = g_file_enumerate_children (file, G_FILE_ATTRIBUTE_STANDARD_NAME,
                                          G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS, NULL, NULL);
  while (enumerator != NULL &&
         (info = g_file_enumerator_next_file (enumerator, NULL, NULL)) != NULL)
    {
      g_autoptr(GFileInfo) owned = info;
      g_autofree char *child = g_build_filename (path, g_file_info_get_name (owned), NULL);

      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        rm_rf (child);
      else
        g_unlink (child);
    }

  g_rmdir (path);
}

static guint
count_dir_entries (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  guint n = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    n++;

  return n;
}

/* Construction */

static void
test_new_invalid (void)
{
  struct { guint16 first, last; guint max, per_owner; } cases[] = {
    { 1000, 2000, 10, 10 },   /* privileged ports */
    { 0, 2000, 10, 10 },
    { 3000, 2000, 10, 10 },   /* first > last */
    { 20000, 20010, 0, 10 },  /* no leases at all */
    { 20000, 20010, 10, 0 },
  };
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(PaddockRegistry) bad = NULL;

      bad = paddock_registry_new (cases[i].first, cases[i].last, cases[i].max,
                                  cases[i].per_owner, &error);
      g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT);
      g_assert_null (bad);
      g_clear_error (&error);
    }

  /* A one-port pool is fine. */
  registry = paddock_registry_new (20000, 20000, 1, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_registry_get_first_port (registry), ==, 20000);
  g_assert_cmpuint (paddock_registry_get_last_port (registry), ==, 20000);
  g_assert_cmpuint (paddock_registry_get_max_leases (registry), ==, 1);
  g_assert_cmpuint (paddock_registry_get_max_per_owner (registry), ==, 1);
  g_assert_true (g_list_model_get_item_type (G_LIST_MODEL (registry)) == PADDOCK_TYPE_LEASE);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 0);
}

/* Leasing */

static void
test_lease_distinct (void)
{
  const guint n = 40;
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(GHashTable) seen = g_hash_table_new (NULL, NULL);
  g_autoptr(GError) error = NULL;
  guint16 base = 0;

  registry = new_registry (n, 1000, 1000, &base);
  if (registry == NULL)
    return;

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(PaddockLease) lease = NULL;
      guint16 port;

      lease = paddock_registry_lease (registry, ":1.42", NULL, "web", 0, &error);
      g_assert_no_error (error);
      g_assert_nonnull (lease);

      port = paddock_lease_get_port (lease);
      g_assert_cmpuint (port, >=, base);
      g_assert_cmpuint (port, <, base + n);
      g_assert_true (g_hash_table_add (seen, GUINT_TO_POINTER (port)));
      g_assert_cmpint (paddock_lease_get_state (lease), ==, PADDOCK_LEASE_STATE_HELD);
      g_assert_cmpint (paddock_lease_get_fd (lease), >=, 0);
      g_assert_true (paddock_registry_lookup (registry, port) == lease);
    }

  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, n);
  assert_sorted (registry);
}

static void
test_lease_exclusive (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) lease = NULL;
  g_autoptr(GError) error = NULL;
  paddock_autofd int client = -1;
  paddock_autofd int server = -1;
  paddock_autofd int client6 = -1;
  struct sockaddr_in addr = { .sin_family = AF_INET };
  struct sockaddr_in6 addr6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
  const BindOptions reuse = { .reuseaddr = TRUE, .v6only = -1, .listen = TRUE };
  const BindOptions reuse_port = {
    .reuseaddr = TRUE, .reuseport = TRUE, .v6only = -1, .listen = TRUE
  };
  const BindOptions v6only = { .reuseaddr = TRUE, .v6only = 1, .listen = TRUE };
  const BindOptions dual = { .reuseaddr = TRUE, .v6only = 0, .listen = TRUE };
  const BindOptions bound = { .reuseaddr = TRUE, .v6only = -1, .listen = FALSE };
  gboolean ipv6 = have_ipv6 ();
  guint16 base = 0;
  guint16 port;
  int flags;
  char byte = 0;

  registry = new_registry (3, 10, 10, &base);
  if (registry == NULL)
    return;

  lease = paddock_registry_lease (registry, ":1.7", NULL, "web", 0, &error);
  g_assert_no_error (error);
  port = paddock_lease_get_port (lease);
  g_assert_cmpint (paddock_lease_get_ipv6 (lease), ==, ipv6);

  /* No fd leaks into children the daemon spawns. */
  flags = fcntl (paddock_lease_get_fd (lease), F_GETFD);
  g_assert_cmpint (flags & FD_CLOEXEC, !=, 0);

  /* Another program cannot take the port, whatever it tries. */
  g_assert_cmpint (outside_bind (AF_INET, "127.0.0.1", port, &reuse), ==, -EADDRINUSE);
  g_assert_cmpint (outside_bind (AF_INET, "0.0.0.0", port, &reuse), ==, -EADDRINUSE);
  g_assert_cmpint (outside_bind (AF_INET, "127.0.0.1", port, &reuse_port), ==, -EADDRINUSE);
  g_assert_cmpint (outside_bind (AF_INET, "0.0.0.0", port, &reuse_port), ==, -EADDRINUSE);
  g_assert_cmpint (outside_bind (AF_INET, "127.0.0.1", port, &bound), ==, -EADDRINUSE);
  if (ipv6)
    {
      g_assert_cmpint (outside_bind (AF_INET6, "::1", port, &reuse), ==, -EADDRINUSE);
      g_assert_cmpint (outside_bind (AF_INET6, "::1", port, &reuse_port), ==, -EADDRINUSE);
      g_assert_cmpint (outside_bind (AF_INET6, "::1", port, &bound), ==, -EADDRINUSE);
      g_assert_cmpint (outside_bind (AF_INET6, "::", port, &v6only), ==, -EADDRINUSE);
      g_assert_cmpint (outside_bind (AF_INET6, "::", port, &dual), ==, -EADDRINUSE);
    }

  /* The fd is listening: a client connects and the lease holder accepts. */
  client = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  addr.sin_port = htons (port);
  addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  g_assert_no_errno (connect (client, (struct sockaddr *) &addr, sizeof addr));
  server = accept4 (paddock_lease_get_fd (lease), NULL, NULL, SOCK_CLOEXEC);
  g_assert_cmpint (server, >=, 0);
  g_assert_cmpint (write (client, "x", 1), ==, 1);
  g_assert_cmpint (read (server, &byte, 1), ==, 1);
  g_assert_cmpint (byte, ==, 'x');

  /* [::1] refuses at once, so "localhost" clients fall back to 127.0.0.1. */
  if (ipv6)
    {
      client6 = socket (AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
      addr6.sin6_port = htons (port);
      g_assert_cmpint (connect (client6, (struct sockaddr *) &addr6, sizeof addr6), ==, -1);
      g_assert_cmpint (errno, ==, ECONNREFUSED);
    }

  /* Once released, the port is anyone's again. The client hangs up first,
   * as browsers do, so the TIME_WAIT is on its side: a connection the
   * server side closes first keeps the port for the kernel's TIME_WAIT
   * (the lease socket has no SO_REUSEADDR, and accepted sockets inherit
   * that; see bind_ipv4()). */
  paddock_close_fd (&client);
  g_assert_cmpint (read (server, &byte, 1), ==, 0);
  paddock_close_fd (&server);
  g_clear_pointer (&lease, g_object_unref);
  g_assert_true (paddock_registry_release (registry, port, ":1.7", &error));
  g_assert_no_error (error);
  g_assert_cmpint (try_listen (AF_INET, "127.0.0.1", port, TRUE), ==, 0);
  if (ipv6)
    g_assert_cmpint (try_listen (AF_INET6, "::1", port, TRUE), ==, 0);
}

static void
test_lease_preferred (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) lease = NULL;
  g_autoptr(PaddockLease) again = NULL;
  g_autoptr(GError) error = NULL;
  const BindOptions listening = { .v6only = -1, .listen = TRUE };
  const BindOptions v6only = { .v6only = 1, .listen = TRUE };
  paddock_autofd int outside = -1;
  paddock_autofd int outside6 = -1;
  guint16 base = 0;

  registry = new_registry (3, 10, 10, &base);
  if (registry == NULL)
    return;

  lease = paddock_registry_lease (registry, ":1.1", NULL, "web", base + 1, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_lease_get_port (lease), ==, base + 1);

  /* Held by us, for the same or another owner. */
  again = paddock_registry_lease (registry, ":1.1", NULL, "web", base + 1, &error);
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_PORT_IN_USE);
  g_assert_null (again);
  g_clear_error (&error);
  again = paddock_registry_lease (registry, ":1.2", NULL, "api", base + 1, &error);
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_PORT_IN_USE);
  g_clear_error (&error);

  /* Held by another program on 127.0.0.1. */
  outside = outside_bind (AF_INET, "127.0.0.1", base + 2, &listening);
  g_assert_cmpint (outside, >=, 0);
  again = paddock_registry_lease (registry, ":1.1", NULL, "web", base + 2, &error);
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_PORT_IN_USE);
  g_assert_nonnull (strstr (error->message, "another program"));
  g_assert_null (again);
  g_clear_error (&error);

  /* Held by another program on [::] (IPv6 only): still not ours to give. */
  if (have_ipv6 ())
    {
      outside6 = outside_bind (AF_INET6, "::", base, &v6only);
      g_assert_cmpint (outside6, >=, 0);
      again = paddock_registry_lease (registry, ":1.1", NULL, "web", base, &error);
      g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_PORT_IN_USE);
      g_assert_null (again);
      g_clear_error (&error);
      /* ...and the failed attempt left nothing bound behind. */
      paddock_close_fd (&outside6);
      g_assert_true (port_is_free (base));
    }

  /* Outside the pool. */
  again = paddock_registry_lease (registry, ":1.1", NULL, "web", base - 1, &error);
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT);
  g_assert_null (again);
  g_clear_error (&error);
  again = paddock_registry_lease (registry, ":1.1", NULL, "web", base + 3, &error);
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 1);
}

static void
test_lease_skips_used (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) lease = NULL;
  g_autoptr(PaddockLease) none = NULL;
  g_autoptr(GError) error = NULL;
  const BindOptions listening = { .v6only = -1, .listen = TRUE };
  const BindOptions v6only = { .v6only = 1, .listen = TRUE };
  paddock_autofd int outside = -1;
  paddock_autofd int outside6 = -1;
  guint16 base = 0;

  registry = new_registry (3, 10, 10, &base);
  if (registry == NULL)
    return;

  /* Other programs have the first port on 127.0.0.1 and (where IPv6 is
   * available) the second on ::1 only; the scan must skip both. */
  outside = outside_bind (AF_INET, "127.0.0.1", base, &listening);
  g_assert_cmpint (outside, >=, 0);
  if (have_ipv6 ())
    {
      outside6 = outside_bind (AF_INET6, "::1", base + 1, &v6only);
      g_assert_cmpint (outside6, >=, 0);
    }

  lease = paddock_registry_lease (registry, ":1.1", NULL, "web", 0, &error);
  g_assert_no_error (error);
  if (have_ipv6 ())
    g_assert_cmpuint (paddock_lease_get_port (lease), ==, base + 2);
  else
    g_assert_cmpuint (paddock_lease_get_port (lease), !=, base);

  if (have_ipv6 ())
    {
      none = paddock_registry_lease (registry, ":1.1", NULL, "web", 0, &error);
      g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_PORT_EXHAUSTED);
      g_assert_null (none);
      g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 1);
      /* The failed scan did not leave [::1] guards behind. */
      paddock_close_fd (&outside6);
      g_assert_true (port_is_free (base + 1));
    }
}

static void
test_lease_names (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *name64 = g_strnfill (64, 'a');
  g_autofree char *name65 = g_strnfill (65, 'a');
  const char *bad[] = {
    "", name65, "we b", "web/1", "web:1", "w\xc3\xa9" "b", "\xff\xfe", "a\nb", "$(rm)",
  };
  const char *good[] = { "web", name64, "A-z_0.9", "-" };
  guint16 base = 0;

  registry = new_registry (G_N_ELEMENTS (good), 10, 10, &base);
  if (registry == NULL)
    return;

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(PaddockLease) lease = NULL;

      lease = paddock_registry_lease (registry, ":1.1", NULL, bad[i], 0, &error);
      g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT);
      g_assert_null (lease);
      /* The message is safe to send over D-Bus and says what is allowed. */
      g_assert_true (g_utf8_validate (error->message, -1, NULL));
      g_assert_nonnull (strstr (error->message, "64"));
      g_clear_error (&error);

      g_assert_false (paddock_registry_validate_name (bad[i], NULL));
    }

  g_assert_false (paddock_registry_validate_name (NULL, NULL));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 0);

  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autoptr(PaddockLease) lease = NULL;

      lease = paddock_registry_lease (registry, ":1.1", NULL, good[i], 0, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (paddock_lease_get_name (lease), ==, good[i]);
    }
}

static void
test_lease_owners (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) lease = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *long_owner = g_strnfill (300, 'x');
  struct { const char *owner; const char *session; } bad[] = {
    { "", NULL },
    { NULL, "" },
    { "session:abc", NULL },   /* a client may not pose as a session */
    { "\xff", NULL },
    { long_owner, NULL },
  };
  guint16 base = 0;

  registry = new_registry (2, 10, 10, &base);
  if (registry == NULL)
    return;

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(PaddockLease) none = NULL;

      none = paddock_registry_lease (registry, bad[i].owner, bad[i].session, "web", 0, &error);
      g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT);
      g_assert_null (none);
      g_clear_error (&error);
    }
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 0);

  /* A session lease belongs to the session, not to the asking client. */
  lease = paddock_registry_lease (registry, ":1.5", "s1", "web", 0, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (paddock_lease_get_owner (lease), ==, "session:s1");
  g_assert_cmpstr (paddock_lease_get_session (lease), ==, "s1");
  g_clear_object (&lease);

  lease = paddock_registry_lease (registry, ":1.5", NULL, "web", 0, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (paddock_lease_get_owner (lease), ==, ":1.5");
  g_assert_null (paddock_lease_get_session (lease));
}

static void
items_changed_count_cb (GListModel *model,
                        guint       position,
                        guint       removed,
                        guint       added,
                        guint      *count)
{
  (*count)++;
}

static void
test_quota_per_owner (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockLease) a1 = NULL;
  g_autoptr(PaddockLease) a2 = NULL;
  g_autoptr(PaddockLease) a3 = NULL;
  g_autoptr(PaddockLease) b1 = NULL;
  g_autoptr(PaddockLease) s1 = NULL;
  g_autoptr(PaddockLease) s2 = NULL;
  g_autoptr(PaddockLease) s3 = NULL;
  guint16 base = 0;
  guint changes = 0;

  registry = new_registry (6, 10, 2, &base);
  if (registry == NULL)
    return;
  g_signal_connect (registry, "items-changed", G_CALLBACK (items_changed_count_cb), &changes);

  a1 = paddock_registry_lease (registry, ":1.1", NULL, "a", 0, &error);
  g_assert_no_error (error);
  a2 = paddock_registry_lease (registry, ":1.1", NULL, "b", 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (changes, ==, 2);

  a3 = paddock_registry_lease (registry, ":1.1", NULL, "c", 0, &error);
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_QUOTA_EXCEEDED);
  g_assert_nonnull (strstr (error->message, "per owner"));
  g_assert_nonnull (strstr (error->message, "2"));
  g_assert_null (a3);
  g_clear_error (&error);
  g_assert_cmpuint (changes, ==, 2);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 2);

  /* Others are not affected; sessions have their own quota. */
  b1 = paddock_registry_lease (registry, ":1.2", NULL, "a", 0, &error);
  g_assert_no_error (error);
  s1 = paddock_registry_lease (registry, NULL, "s", "a", 0, &error);
  g_assert_no_error (error);
  s2 = paddock_registry_lease (registry, NULL, "s", "b", 0, &error);
  g_assert_no_error (error);
  s3 = paddock_registry_lease (registry, NULL, "s", "c", 0, &error);
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_QUOTA_EXCEEDED);
  g_clear_error (&error);

  /* A release frees quota. */
  g_assert_true (paddock_registry_release (registry, paddock_lease_get_port (a1), ":1.1", &error));
  g_assert_no_error (error);
  g_clear_object (&a3);
  a3 = paddock_registry_lease (registry, ":1.1", NULL, "c", 0, &error);
  g_assert_no_error (error);
}

static void
test_quota_total (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) extra = NULL;
  g_autoptr(GError) error = NULL;
  const char *owners[] = { ":1.1", ":1.2", ":1.3" };
  guint16 base = 0;
  guint changes = 0;

  registry = new_registry (5, 3, 10, &base);
  if (registry == NULL)
    return;
  g_signal_connect (registry, "items-changed", G_CALLBACK (items_changed_count_cb), &changes);

  for (guint i = 0; i < G_N_ELEMENTS (owners); i++)
    {
      g_autoptr(PaddockLease) lease = NULL;

      lease = paddock_registry_lease (registry, owners[i], NULL, "web", 0, &error);

      g_assert_no_error (error);
      g_assert_nonnull (lease);
    }

  extra = paddock_registry_lease (registry, ":1.4", NULL, "web", 0, &error);
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_QUOTA_EXCEEDED);
  g_assert_nonnull (strstr (error->message, "in total"));
  g_assert_nonnull (strstr (error->message, "3"));
  g_assert_null (extra);
  g_clear_error (&error);

  /* Also with a free preferred port. */
  extra = paddock_registry_lease (registry, ":1.4", NULL, "web", base + 4, &error);
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_QUOTA_EXCEEDED);
  g_clear_error (&error);
  g_assert_true (port_is_free (base + 4));

  g_assert_cmpuint (changes, ==, 3);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 3);
}

static void
test_lease_exhausted (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) none = NULL;
  g_autoptr(PaddockLease) again = NULL;
  g_autoptr(GError) error = NULL;
  guint16 ports[3];
  guint16 base = 0;

  registry = new_registry (3, 10, 10, &base);
  if (registry == NULL)
    return;

  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(PaddockLease) lease = NULL;

      lease = paddock_registry_lease (registry, ":1.1", NULL, "web", 0, &error);

      g_assert_no_error (error);
      ports[i] = paddock_lease_get_port (lease);
    }
  g_assert_cmpuint (ports[0], !=, ports[1]);
  g_assert_cmpuint (ports[1], !=, ports[2]);
  g_assert_cmpuint (ports[0], !=, ports[2]);

  none = paddock_registry_lease (registry, ":1.2", NULL, "web", 0, &error);
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_PORT_EXHAUSTED);
  g_assert_null (none);
  g_clear_error (&error);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 3);

  /* A released port comes back into use. */
  g_assert_true (paddock_registry_release (registry, ports[1], NULL, &error));
  g_assert_no_error (error);
  again = paddock_registry_lease (registry, ":1.2", NULL, "web", 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_lease_get_port (again), ==, ports[1]);
}

static void
test_lease_cursor (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) first = NULL;
  g_autoptr(PaddockLease) second = NULL;
  g_autoptr(GError) error = NULL;
  guint16 base = 0;
  guint16 port;

  registry = new_registry (3, 10, 10, &base);
  if (registry == NULL)
    return;

  first = paddock_registry_lease (registry, ":1.1", NULL, "web", 0, &error);
  g_assert_no_error (error);
  port = paddock_lease_get_port (first);
  g_clear_object (&first);
  g_assert_true (paddock_registry_release (registry, port, ":1.1", &error));

  /* Its previous user may still be reaching for it: not handed out next. */
  second = paddock_registry_lease (registry, ":1.2", NULL, "web", 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_lease_get_port (second), !=, port);
}

/* Releasing */

static void
test_release_access (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) mine = NULL;
  g_autoptr(PaddockLease) session = NULL;
  g_autoptr(GError) error = NULL;
  guint16 base = 0;
  guint16 port;
  guint16 session_port;

  registry = new_registry (3, 10, 10, &base);
  if (registry == NULL)
    return;

  mine = paddock_registry_lease (registry, ":1.1", NULL, "web", 0, &error);
  g_assert_no_error (error);
  port = paddock_lease_get_port (mine);
  session = paddock_registry_lease (registry, NULL, "abc", "web", 0, &error);
  g_assert_no_error (error);
  session_port = paddock_lease_get_port (session);

  /* Another client's lease: refused, and still held. */
  g_assert_false (paddock_registry_release (registry, port, ":1.2", &error));
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_ACCESS_DENIED);
  g_clear_error (&error);
  g_assert_true (paddock_registry_lookup (registry, port) == mine);
  g_assert_cmpint (try_listen (AF_INET, "127.0.0.1", port, TRUE), ==, EADDRINUSE);

  /* Not leased at all. */
  g_assert_false (paddock_registry_release (registry, base + 3, ":1.1", &error));
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* Session leases are released by anyone working on the session. */
  g_assert_true (paddock_registry_release (registry, session_port, ":1.9", &error));
  g_assert_no_error (error);
  g_assert_null (paddock_registry_lookup (registry, session_port));
  g_assert_cmpint (paddock_lease_get_fd (session), ==, -1);
  g_assert_true (port_is_free (session_port));

  /* The owner may; twice is NotFound. */
  g_assert_true (paddock_registry_release (registry, port, ":1.1", &error));
  g_assert_no_error (error);
  g_assert_true (port_is_free (port));
  g_assert_false (paddock_registry_release (registry, port, ":1.1", &error));
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* The daemon itself (NULL) may release anything. */
  g_clear_object (&mine);
  mine = paddock_registry_lease (registry, ":1.1", NULL, "web", 0, &error);
  g_assert_no_error (error);
  g_assert_true (paddock_registry_release (registry, paddock_lease_get_port (mine), NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 0);
}

static void
test_release_owner (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) owners = NULL;
  g_auto(GStrv) after = NULL;
  const char *who[] = { ":1.1", ":1.2", ":1.1", NULL, ":1.1" };
  guint16 ports[G_N_ELEMENTS (who)];
  guint16 base = 0;

  registry = new_registry (G_N_ELEMENTS (who), 10, 10, &base);
  if (registry == NULL)
    return;

  for (guint i = 0; i < G_N_ELEMENTS (who); i++)
    {
      g_autoptr(PaddockLease) lease = NULL;

      lease = paddock_registry_lease (registry, who[i], who[i] == NULL ? "s1" : NULL, "web", 0,
                                      &error);
      g_assert_no_error (error);
      ports[i] = paddock_lease_get_port (lease);
    }

  owners = paddock_registry_dup_owners (registry);
  g_assert_cmpuint (g_strv_length (owners), ==, 3);
  g_assert_cmpstr (owners[0], ==, ":1.1");
  g_assert_cmpstr (owners[1], ==, ":1.2");
  g_assert_cmpstr (owners[2], ==, "session:s1");

  g_assert_cmpuint (paddock_registry_release_owner (registry, ":1.1"), ==, 3);
  g_assert_cmpuint (paddock_registry_release_owner (registry, ":1.1"), ==, 0);
  g_assert_cmpuint (paddock_registry_release_owner (registry, "nobody"), ==, 0);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 2);
  for (guint i = 0; i < G_N_ELEMENTS (who); i++)
    {
      gboolean released = g_strcmp0 (who[i], ":1.1") == 0;

      g_assert_cmpint (paddock_registry_lookup (registry, ports[i]) == NULL, ==, released);
      if (released)
        g_assert_true (port_is_free (ports[i]));
    }

  g_assert_cmpuint (paddock_registry_release_owner (registry, "session:s1"), ==, 1);
  after = paddock_registry_dup_owners (registry);
  g_assert_cmpuint (g_strv_length (after), ==, 1);
  g_assert_cmpstr (after[0], ==, ":1.2");
}

/* The model */

typedef struct
{
  GArray *shadow;   /* guint16 ports, as a listener applying the signals sees them */
  guint   position;
  guint   removed;
  guint   added;
  guint   count;
} Mirror;

static void
mirror_items_changed_cb (GListModel *model,
                         guint       position,
                         guint       removed,
                         guint       added,
                         Mirror     *mirror)
{
  guint n = g_list_model_get_n_items (model);

  mirror->position = position;
  mirror->removed = removed;
  mirror->added = added;
  mirror->count++;

  /* Apply the change to a copy, the way a D-Bus client would, and check
   * that the copy is then exactly the model. */
  g_assert_cmpuint (position + removed, <=, mirror->shadow->len);
  g_array_remove_range (mirror->shadow, position, removed);
  for (guint i = 0; i < added; i++)
    {
      g_autoptr(PaddockLease) lease = g_list_model_get_item (model, position + i);
      guint16 port = paddock_lease_get_port (lease);

      g_array_insert_val (mirror->shadow, position + i, port);
    }

  g_assert_cmpuint (mirror->shadow->len, ==, n);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(PaddockLease) lease = g_list_model_get_item (model, i);

      g_assert_cmpuint (g_array_index (mirror->shadow, guint16, i), ==,
                        paddock_lease_get_port (lease));
    }
  g_assert_null (g_list_model_get_item (model, n));

  assert_sorted (PADDOCK_REGISTRY (model));
}

static void
assert_change (Mirror *mirror,
               guint   count,
               guint   position,
               guint   removed,
               guint   added)
{
  g_assert_cmpuint (mirror->count, ==, count);
  g_assert_cmpuint (mirror->position, ==, position);
  g_assert_cmpuint (mirror->removed, ==, removed);
  g_assert_cmpuint (mirror->added, ==, added);
}

static void
test_items_changed (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(GArray) shadow = g_array_new (FALSE, FALSE, sizeof (guint16));
  g_autoptr(GError) error = NULL;
  Mirror mirror = { shadow, 0, 0, 0, 0 };
  struct { const char *owner; guint offset; guint position; } steps[] = {
    { ":1.1", 2, 0 },
    { ":1.2", 0, 0 },
    { ":1.1", 5, 2 },
    { ":1.2", 3, 2 },
    { ":1.1", 1, 1 },
  };
  guint16 base = 0;

  registry = new_registry (6, 10, 10, &base);
  if (registry == NULL)
    return;
  g_signal_connect (registry, "items-changed", G_CALLBACK (mirror_items_changed_cb), &mirror);

  for (guint i = 0; i < G_N_ELEMENTS (steps); i++)
    {
      g_autoptr(PaddockLease) lease = NULL;

      lease = paddock_registry_lease (registry, steps[i].owner, NULL, "web",
                                      (guint16) (base + steps[i].offset), &error);
      g_assert_no_error (error);
      assert_change (&mirror, i + 1, steps[i].position, 0, 1);
    }
  /* Now: base+0 (:1.2), +1 (:1.1), +2 (:1.1), +3 (:1.2), +5 (:1.1). */

  g_assert_true (paddock_registry_release (registry, base + 2, NULL, &error));
  g_assert_no_error (error);
  assert_change (&mirror, 6, 2, 1, 0);

  /* Failures change nothing and say nothing. */
  g_assert_false (paddock_registry_release (registry, base + 2, NULL, &error));
  g_clear_error (&error);
  g_assert_cmpuint (mirror.count, ==, 6);

  /* Several removals, each signalled at a position valid when applied. */
  g_assert_cmpuint (paddock_registry_release_owner (registry, ":1.1"), ==, 2);
  g_assert_cmpuint (mirror.count, ==, 8);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 2);
  g_assert_cmpuint (g_array_index (shadow, guint16, 0), ==, base);
  g_assert_cmpuint (g_array_index (shadow, guint16, 1), ==, base + 3);
}

static void
test_lease_variant (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) lease = NULL;
  g_autoptr(PaddockLease) session = NULL;
  g_autoptr(GVariant) variant = NULL;
  g_autoptr(GVariant) session_variant = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariantDict) dict = NULL;
  const char *str = NULL;
  guint16 port = 0;
  guint64 created = 0;
  gboolean ipv6 = FALSE;
  gint64 before = g_get_real_time ();
  guint16 base = 0;

  registry = new_registry (2, 10, 10, &base);
  if (registry == NULL)
    return;

  lease = paddock_registry_lease (registry, ":1.1", NULL, "web", 0, &error);
  g_assert_no_error (error);
  variant = paddock_lease_to_variant (lease);
  g_assert_false (g_variant_is_floating (variant));
  g_assert_true (g_variant_is_of_type (variant, G_VARIANT_TYPE_VARDICT));

  dict = g_variant_dict_new (variant);
  g_assert_true (g_variant_dict_lookup (dict, "port", "q", &port));
  g_assert_cmpuint (port, ==, paddock_lease_get_port (lease));
  g_assert_true (g_variant_dict_lookup (dict, "name", "&s", &str));
  g_assert_cmpstr (str, ==, "web");
  g_assert_true (g_variant_dict_lookup (dict, "owner", "&s", &str));
  g_assert_cmpstr (str, ==, ":1.1");
  g_assert_true (g_variant_dict_lookup (dict, "session", "&s", &str));
  g_assert_cmpstr (str, ==, "");
  g_assert_true (g_variant_dict_lookup (dict, "state", "&s", &str));
  g_assert_cmpstr (str, ==, "held");
  g_assert_true (g_variant_dict_lookup (dict, "ipv6", "b", &ipv6));
  g_assert_cmpint (ipv6, ==, have_ipv6 ());
  g_assert_true (g_variant_dict_lookup (dict, "created", "t", &created));
  g_assert_cmpuint (created, >=, (guint64) before);
  g_assert_cmpuint (created, <=, (guint64) g_get_real_time ());

  session = paddock_registry_lease (registry, NULL, "s1", "db", 0, &error);
  g_assert_no_error (error);
  session_variant = paddock_lease_to_variant (session);
  g_clear_pointer (&dict, g_variant_dict_unref);
  dict = g_variant_dict_new (session_variant);
  g_assert_true (g_variant_dict_lookup (dict, "session", "&s", &str));
  g_assert_cmpstr (str, ==, "s1");
  g_assert_true (g_variant_dict_lookup (dict, "owner", "&s", &str));
  g_assert_cmpstr (str, ==, "session:s1");

  g_assert_cmpstr (paddock_lease_state_to_string (PADDOCK_LEASE_STATE_HELD), ==, "held");
  g_assert_cmpstr (paddock_lease_state_to_string (PADDOCK_LEASE_STATE_LOST), ==, "lost");
}

/* Persistence */

static PaddockRegistry *
load_registry (guint16     base,
               guint       n,
               const char *state_file)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(GError) error = NULL;

  registry = paddock_registry_new (base, (guint16) (base + n - 1), 10, 10, &error);
  g_assert_no_error (error);
  g_assert_true (paddock_registry_load (registry, state_file, &error));
  g_assert_no_error (error);

  return g_steal_pointer (&registry);
}

/* A session's port released for its program to bind (port-handover
 * 'release'): the port is free for a bind on every address (what
 * python3 -m http.server does, [::] dual-stack), the lease stays, by name,
 * leased to no one else and left alone by reclaim; taken back once free
 * (held), or lost when another program has it then; stored as "lost" so
 * that the file reads back anywhere. */
static void
test_lease_hand_over (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) lease = NULL;
  g_autoptr(PaddockLease) other = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *state_file = g_build_filename (dir, "leases.json", NULL);
  g_autofree char *journal_file = g_strconcat (state_file, ".journal", NULL);
  g_autofree char *stored = NULL;
  g_autoptr(GVariant) description = NULL;
  gboolean released = FALSE;
  BindOptions agent = { .v6only = 0, .listen = TRUE };
  paddock_autofd int bound = -1;
  guint16 base = 0;
  guint16 port;
  guint unheld = 0;

  registry = new_registry (1, 10, 10, &base);
  if (registry == NULL)
    return;
  g_clear_object (&registry);
  registry = load_registry (base, 1, state_file);
  lease = paddock_registry_lease (registry, "session:s1", "s1", "web", 0, &error);
  g_assert_no_error (error);
  port = paddock_lease_get_port (lease);
  g_assert_cmpint (try_listen (AF_INET, "127.0.0.1", port, FALSE), ==, EADDRINUSE);

  g_assert_true (paddock_registry_hand_over (registry, port, &error));
  g_assert_no_error (error);
  g_assert_cmpint (paddock_lease_get_state (lease), ==, PADDOCK_LEASE_STATE_RELEASED);
  g_assert_cmpint (paddock_lease_get_fd (lease), ==, -1);
  description = paddock_lease_to_variant (lease);
  g_assert_true (g_variant_lookup (description, "released", "b", &released));
  g_assert_true (released);
  /* The session's program binds it, on every address. */
  bound = outside_bind (have_ipv6 () ? AF_INET6 : AF_INET, have_ipv6 () ? "::" : "0.0.0.0", port, &agent);
  g_assert_cmpint (bound, >=, 0);
  /* Still the session's: nobody else is leased it, reclaim leaves it. */
  other = paddock_registry_lease (registry, ":1.9", NULL, "api", port, &error);
  g_assert_null (other);
  g_clear_error (&error);
  g_assert_cmpuint (paddock_registry_reclaim (registry, &unheld, &error), ==, 0);
  g_assert_no_error (error);
  g_assert_cmpint (paddock_lease_get_state (lease), ==, PADDOCK_LEASE_STATE_RELEASED);
  /* A state written now says "lost", which an older daemon reads. */
  g_assert_true (paddock_registry_rename (registry, port, "web2", &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (journal_file, &stored, NULL, NULL));
  g_assert_nonnull (strstr (stored, "\"lost\""));
  g_assert_null (strstr (stored, "\"released\""));

  /* The program still has it (another program, as far as we can tell):
   * lost, not held. */
  g_assert_false (paddock_registry_take_back (registry, port));
  g_assert_cmpint (paddock_lease_get_state (lease), ==, PADDOCK_LEASE_STATE_LOST);
  paddock_close_fd (&bound);
  g_assert_cmpuint (paddock_registry_reclaim (registry, &unheld, &error), ==, 1);
  g_assert_no_error (error);
  g_assert_cmpint (paddock_lease_get_state (lease), ==, PADDOCK_LEASE_STATE_HELD);

  /* Released again and taken back while free: held at once. */
  g_assert_true (paddock_registry_hand_over (registry, port, &error));
  g_assert_true (paddock_registry_take_back (registry, port));
  g_assert_cmpint (paddock_lease_get_state (lease), ==, PADDOCK_LEASE_STATE_HELD);
  g_assert_cmpint (try_listen (AF_INET, "127.0.0.1", port, FALSE), ==, EADDRINUSE);
  /* "released" is kept: the session still says which handover it got. */
  g_clear_pointer (&description, g_variant_unref);
  description = paddock_lease_to_variant (lease);
  g_assert_true (g_variant_lookup (description, "released", "b", &released));
  g_assert_true (released);
  /* An unknown port is not handed over. */
  g_assert_false (paddock_registry_hand_over (registry, (guint16) (port + 1), &error));
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_NOT_FOUND);

  g_clear_object (&registry);
  rm_rf (dir);
}

/* A session names a port it reserved: same port, same sockets, the new
 * name announced and kept across a restart; an unknown port or a bad name
 * changes nothing. */
static void
test_persist_rename (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) reserved = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *state_file = g_build_filename (dir, "leases.json", NULL);
  PaddockLease *reloaded;
  guint16 base = 0;
  guint16 port;
  guint changes = 0;
  int fd;

  registry = new_registry (3, 10, 10, &base);
  if (registry == NULL)
    return;
  g_clear_object (&registry);

  registry = load_registry (base, 3, state_file);
  reserved = paddock_registry_lease (registry, NULL, "s1", "reserved", 0, &error);
  g_assert_no_error (error);
  port = paddock_lease_get_port (reserved);
  fd = paddock_lease_get_fd (reserved);
  g_signal_connect (registry, "items-changed", G_CALLBACK (items_changed_count_cb), &changes);

  g_assert_true (paddock_registry_rename (registry, port, "web", &error));
  g_assert_no_error (error);
  g_assert_cmpuint (changes, ==, 1);
  g_assert_cmpstr (paddock_lease_get_name (reserved), ==, "web");
  g_assert_cmpint (paddock_lease_get_fd (reserved), ==, fd);
  g_assert_cmpstr (paddock_lease_get_owner (reserved), ==, "session:s1");

  g_assert_false (paddock_registry_rename (registry, port, "not a name", &error));
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (paddock_registry_rename (registry, port == base ? base + 1 : base, "db", &error));
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_cmpstr (paddock_lease_get_name (reserved), ==, "web");
  g_assert_cmpuint (changes, ==, 1);

  g_clear_object (&reserved);
  g_clear_object (&registry);
  registry = load_registry (base, 3, state_file);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 1);
  reloaded = paddock_registry_lookup (registry, port);
  g_assert_nonnull (reloaded);
  g_assert_cmpstr (paddock_lease_get_name (reloaded), ==, "web");
  g_assert_cmpstr (paddock_lease_get_session (reloaded), ==, "s1");
  g_clear_object (&registry);
  rm_rf (dir);
}

/* Several leases for a session with one durable write: distinct ports,
 * announced one by one, kept across a restart; when not all can be had,
 * none is left and nothing is announced. */
static void
test_persist_several (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(GPtrArray) leases = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *state_file = g_build_filename (dir, "leases.json", NULL);
  guint16 base = 0;
  guint changes = 0;

  registry = new_registry (4, 10, 10, &base);
  if (registry == NULL)
    return;
  g_clear_object (&registry);

  registry = load_registry (base, 4, state_file);
  g_signal_connect (registry, "items-changed", G_CALLBACK (items_changed_count_cb), &changes);
  leases = paddock_registry_lease_several (registry, "s1", "reserved", 3, &error);
  g_assert_no_error (error);
  g_assert_nonnull (leases);
  g_assert_cmpuint (leases->len, ==, 3);
  g_assert_cmpuint (changes, ==, 3);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 3);
  assert_sorted (registry);
  for (guint i = 0; i < leases->len; i++)
    {
      PaddockLease *lease = g_ptr_array_index (leases, i);

      g_assert_true (paddock_registry_lookup (registry, paddock_lease_get_port (lease)) == lease);
      g_assert_cmpstr (paddock_lease_get_name (lease), ==, "reserved");
      g_assert_cmpstr (paddock_lease_get_owner (lease), ==, "session:s1");
      g_assert_cmpint (paddock_lease_get_fd (lease), >=, 0);
    }

  /* Two more do not fit in the pool of four: none is taken. */
  g_assert_null (paddock_registry_lease_several (registry, "s2", "reserved", 2, &error));
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_PORT_EXHAUSTED);
  g_clear_error (&error);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 3);
  g_assert_cmpuint (changes, ==, 3);

  g_clear_pointer (&leases, g_ptr_array_unref);
  g_clear_object (&registry);
  registry = load_registry (base, 4, state_file);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(PaddockLease) lease = g_list_model_get_item (G_LIST_MODEL (registry), i);

      g_assert_cmpstr (paddock_lease_get_session (lease), ==, "s1");
      g_assert_cmpint (paddock_lease_get_state (lease), ==, PADDOCK_LEASE_STATE_HELD);
    }
  g_clear_object (&registry);
  rm_rf (dir);
}

static void
test_persist_reload (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) web = NULL;
  g_autoptr(PaddockLease) db = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *state_file = g_build_filename (dir, "leases.json", NULL);
  PaddockLease *reloaded;
  struct stat st;
  guint16 base = 0;
  guint16 web_port;
  guint16 db_port;
  gint64 web_created;

  registry = new_registry (3, 10, 10, &base);
  if (registry == NULL)
    return;
  g_clear_object (&registry);

  /* A missing file is an empty registry, and is written at once. */
  registry = load_registry (base, 3, state_file);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 0);
  g_assert_no_errno (g_stat (state_file, &st));
  g_assert_cmpint (st.st_mode & 0777, ==, 0600);

  web = paddock_registry_lease (registry, ":1.1", NULL, "web", 0, &error);
  g_assert_no_error (error);
  db = paddock_registry_lease (registry, NULL, "s1", "db", 0, &error);
  g_assert_no_error (error);
  web_port = paddock_lease_get_port (web);
  db_port = paddock_lease_get_port (db);
  web_created = paddock_lease_get_created (web);
  g_clear_object (&web);
  g_clear_object (&db);

  /* The daemon stops: the sockets close, the leases stay on disk. */
  g_clear_object (&registry);
  g_assert_true (port_is_free (web_port));

  registry = load_registry (base, 3, state_file);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 2);
  assert_sorted (registry);

  reloaded = paddock_registry_lookup (registry, web_port);
  g_assert_nonnull (reloaded);
  g_assert_cmpint (paddock_lease_get_state (reloaded), ==, PADDOCK_LEASE_STATE_HELD);
  g_assert_cmpstr (paddock_lease_get_name (reloaded), ==, "web");
  g_assert_cmpstr (paddock_lease_get_owner (reloaded), ==, ":1.1");
  g_assert_null (paddock_lease_get_session (reloaded));
  g_assert_cmpint (paddock_lease_get_created (reloaded), ==, web_created);
  g_assert_cmpint (paddock_lease_get_fd (reloaded), >=, 0);
  g_assert_cmpint (paddock_lease_get_ipv6 (reloaded), ==, have_ipv6 ());
  g_assert_cmpint (try_listen (AF_INET, "127.0.0.1", web_port, TRUE), ==, EADDRINUSE);
  g_assert_cmpint (try_listen (AF_INET, "0.0.0.0", web_port, TRUE), ==, EADDRINUSE);
  if (have_ipv6 ())
    g_assert_cmpint (try_listen (AF_INET6, "::1", web_port, TRUE), ==, EADDRINUSE);

  reloaded = paddock_registry_lookup (registry, db_port);
  g_assert_nonnull (reloaded);
  g_assert_cmpint (paddock_lease_get_state (reloaded), ==, PADDOCK_LEASE_STATE_HELD);
  g_assert_cmpstr (paddock_lease_get_owner (reloaded), ==, "session:s1");
  g_assert_cmpstr (paddock_lease_get_session (reloaded), ==, "s1");
  g_assert_cmpint (try_listen (AF_INET, "127.0.0.1", db_port, TRUE), ==, EADDRINUSE);

  /* Releases are persisted too. */
  g_assert_true (paddock_registry_release (registry, web_port, ":1.1", &error));
  g_assert_no_error (error);
  g_clear_object (&registry);
  registry = load_registry (base, 3, state_file);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 1);
  g_assert_cmpuint (paddock_registry_release_owner (registry, "session:s1"), ==, 1);
  g_clear_object (&registry);
  registry = load_registry (base, 3, state_file);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 0);

  g_clear_object (&registry);
  rm_rf (dir);
}

static void
test_persist_format (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) web = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *state_file = g_build_filename (dir, "leases.json", NULL);
  g_autofree char *journal_file = g_build_filename (dir, "leases.json.journal", NULL);
  JsonObject *root;
  JsonArray *leases;
  JsonObject *entry;
  guint16 base = 0;

  registry = new_registry (1, 10, 10, &base);
  if (registry == NULL)
    return;
  g_clear_object (&registry);

  registry = load_registry (base, 1, state_file);
  web = paddock_registry_lease (registry, ":1.1", NULL, "web", 0, &error);
  g_assert_no_error (error);

  /* A change is one line appended to the journal, durable at once... */
  {
    g_autoptr(JsonParser) line_parser = json_parser_new ();
    g_autofree char *journal = NULL;
    g_auto(GStrv) lines = NULL;

    g_file_get_contents (journal_file, &journal, NULL, &error);
    g_assert_no_error (error);
    lines = g_strsplit (journal, "\n", -1);
    g_assert_cmpuint (g_strv_length (lines), ==, 2);
    g_assert_cmpstr (lines[1], ==, "");
    json_parser_load_from_data (line_parser, lines[0], -1, &error);
    g_assert_no_error (error);
    entry = json_node_get_object (json_parser_get_root (line_parser));
    g_assert_cmpstr (json_object_get_string_member (entry, "op"), ==, "put");
    g_assert_cmpint (json_object_get_int_member (entry, "port"), ==, base);
  }

  /* ...and the next start folds it into the snapshot. */
  g_clear_object (&web);
  g_clear_object (&registry);
  registry = load_registry (base, 1, state_file);
  web = g_object_ref (paddock_registry_lookup (registry, base));

  json_parser_load_from_file (parser, state_file, &error);
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpint (json_object_get_int_member (root, "version"), ==, 1);
  leases = json_object_get_array_member (root, "leases");
  g_assert_cmpuint (json_array_get_length (leases), ==, 1);
  entry = json_array_get_object_element (leases, 0);
  g_assert_cmpint (json_object_get_int_member (entry, "port"), ==, base);
  g_assert_cmpstr (json_object_get_string_member (entry, "name"), ==, "web");
  g_assert_cmpstr (json_object_get_string_member (entry, "owner"), ==, ":1.1");
  g_assert_true (json_object_get_null_member (entry, "session"));
  g_assert_cmpint (json_object_get_int_member (entry, "created"), ==,
                   paddock_lease_get_created (web));
  g_assert_cmpstr (json_object_get_string_member (entry, "state"), ==, "held");
  g_assert_cmpint (json_object_get_int_member (entry, "socket_inode"), ==,
                   (gint64) paddock_lease_get_socket_inode (web));

  /* Only the snapshot and its (now empty) journal: no temporary files. */
  g_assert_cmpuint (count_dir_entries (dir), ==, 2);
  g_assert_true (g_file_test (journal_file, G_FILE_TEST_IS_REGULAR));

  g_clear_object (&registry);
  rm_rf (dir);
}

/* A daemon killed in the middle of an append leaves a line without its
 * newline: that change was never acknowledged and is dropped. A complete
 * line that is not a change is corruption. Churn keeps the journal small. */
static void
test_persist_journal (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) web = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *state_file = g_build_filename (dir, "leases.json", NULL);
  g_autofree char *journal_file = g_build_filename (dir, "leases.json.journal", NULL);
  g_autofree char *journal = NULL;
  g_autoptr(GString) torn = NULL;
  guint16 base = 0;
  guint16 port;
  gsize length = 0;

  registry = new_registry (2, 10, 10, &base);
  if (registry == NULL)
    return;
  g_clear_object (&registry);

  registry = load_registry (base, 2, state_file);
  web = paddock_registry_lease (registry, ":1.1", NULL, "web", 0, &error);
  g_assert_no_error (error);
  port = paddock_lease_get_port (web);
  g_clear_object (&web);
  g_clear_object (&registry);

  /* torn: half a "remove" of the lease we hold */
  g_file_get_contents (journal_file, &journal, NULL, &error);
  g_assert_no_error (error);
  torn = g_string_new (journal);
  g_string_append_printf (torn, "{\"op\":\"remove\",\"po");
  g_file_set_contents (journal_file, torn->str, -1, &error);
  g_assert_no_error (error);

  registry = load_registry (base, 2, state_file);
  g_assert_nonnull (paddock_registry_lookup (registry, port));
  g_clear_object (&registry);

  /* corrupt: a complete line that is no change */
  g_file_set_contents (journal_file, "{\"op\":\"steal\",\"port\":20000}\n", -1, &error);
  g_assert_no_error (error);
  registry = paddock_registry_new (base, (guint16) (base + 1), 10, 10, &error);
  g_assert_no_error (error);
  g_assert_false (paddock_registry_load (registry, state_file, &error));
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED);
  g_clear_error (&error);
  g_clear_object (&registry);

  /* churn: a thousand lease/release pairs leave a bounded journal */
  g_file_set_contents (journal_file, "", -1, &error);
  registry = load_registry (base, 2, state_file);
  for (guint i = 0; i < 1000; i++)
    {
      g_autoptr(PaddockLease) churn = paddock_registry_lease (registry, ":1.2", NULL, "churn", 0, &error);

      g_assert_no_error (error);
      g_assert_true (paddock_registry_release (registry, paddock_lease_get_port (churn), ":1.2", &error));
      g_assert_no_error (error);
    }
  g_clear_pointer (&journal, g_free);
  g_file_get_contents (journal_file, &journal, &length, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (length, <, 300 * 200);

  g_clear_object (&registry);
  rm_rf (dir);
}

/* A program that shutdown()s the listening socket it was handed (some
 * servers do on exit) must not free the port for others while the lease
 * lives: the shared socket stays bound, and without SO_REUSEADDR on it. */
static void
test_lease_client_shutdown (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) lease = NULL;
  g_autoptr(GError) error = NULL;
  guint16 base = 0;
  int copy;

  registry = new_registry (1, 10, 10, &base);
  if (registry == NULL)
    return;

  lease = paddock_registry_lease (registry, ":1.1", NULL, "web", 0, &error);
  g_assert_no_error (error);

  copy = fcntl (paddock_lease_get_fd (lease), F_DUPFD_CLOEXEC, 3);
  g_assert_cmpint (copy, >=, 0);
  shutdown (copy, SHUT_RDWR);
  close (copy);

  g_assert_cmpint (try_listen (AF_INET, "127.0.0.1", base, TRUE), ==, EADDRINUSE);
  g_assert_cmpint (try_listen (AF_INET, "0.0.0.0", base, TRUE), ==, EADDRINUSE);
}

/* A journal append that fails half-way (here: the file size limit) leaves
 * no torn line behind: the lease is refused, later changes still land, and
 * the next start reads the journal. */
static void
test_persist_torn_append (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) first = NULL;
  g_autoptr(PaddockLease) refused = NULL;
  g_autoptr(PaddockLease) later = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *state_file = g_build_filename (dir, "leases.json", NULL);
  g_autofree char *journal_file = g_build_filename (dir, "leases.json.journal", NULL);
  struct rlimit saved;
  struct rlimit small;
  struct stat st;
  guint16 base = 0;
  guint16 first_port;
  guint16 later_port;

  registry = new_registry (3, 10, 10, &base);
  if (registry == NULL)
    return;
  g_clear_object (&registry);

  registry = load_registry (base, 3, state_file);
  first = paddock_registry_lease (registry, ":1.1", NULL, "first", 0, &error);
  g_assert_no_error (error);
  first_port = paddock_lease_get_port (first);

  g_assert_no_errno (stat (journal_file, &st));
  g_assert_no_errno (getrlimit (RLIMIT_FSIZE, &saved));
  small = saved;
  small.rlim_cur = (rlim_t) st.st_size + 40;
  signal (SIGXFSZ, SIG_IGN);
  g_assert_no_errno (setrlimit (RLIMIT_FSIZE, &small));

  refused = paddock_registry_lease (registry, ":1.1", NULL, "refused", 0, &error);
  g_assert_no_errno (setrlimit (RLIMIT_FSIZE, &saved));
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED);
  g_assert_null (refused);
  g_clear_error (&error);

  /* cut back to where the append began */
  g_assert_no_errno (stat (journal_file, &st));
  g_assert_cmpint (st.st_size, ==, small.rlim_cur - 40);

  later = paddock_registry_lease (registry, ":1.1", NULL, "later", 0, &error);
  g_assert_no_error (error);
  later_port = paddock_lease_get_port (later);
  g_clear_object (&first);
  g_clear_object (&later);
  g_clear_object (&registry);

  registry = load_registry (base, 3, state_file);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 2);
  g_assert_nonnull (paddock_registry_lookup (registry, first_port));
  g_assert_nonnull (paddock_registry_lookup (registry, later_port));

  g_clear_object (&registry);
  rm_rf (dir);
}

static void
test_persist_lost (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) a = NULL;
  g_autoptr(PaddockLease) b = NULL;
  g_autoptr(PaddockLease) c = NULL;
  g_autoptr(PaddockLease) none = NULL;
  g_autoptr(GVariant) variant = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *state_file = g_build_filename (dir, "leases.json", NULL);
  g_autofree char *contents = NULL;
  const BindOptions listening = { .v6only = -1, .listen = TRUE };
  paddock_autofd int intruder = -1;
  PaddockLease *lost;
  const char *state = NULL;
  guint16 base = 0;

  registry = new_registry (3, 10, 10, &base);
  if (registry == NULL)
    return;
  g_clear_object (&registry);

  registry = load_registry (base, 3, state_file);
  a = paddock_registry_lease (registry, ":1.1", NULL, "web", base, &error);
  g_assert_no_error (error);
  b = paddock_registry_lease (registry, ":1.1", NULL, "api", base + 1, &error);
  g_assert_no_error (error);
  g_clear_object (&a);
  g_clear_object (&b);
  g_clear_object (&registry);

  /* While the daemon is down, another program takes the first port. */
  intruder = outside_bind (AF_INET, "127.0.0.1", base, &listening);
  g_assert_cmpint (intruder, >=, 0);

  registry = load_registry (base, 3, state_file);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 2);
  lost = paddock_registry_lookup (registry, base);
  g_assert_nonnull (lost);
  g_assert_cmpint (paddock_lease_get_state (lost), ==, PADDOCK_LEASE_STATE_LOST);
  g_assert_cmpint (paddock_lease_get_fd (lost), ==, -1);
  g_assert_false (paddock_lease_get_ipv6 (lost));
  g_assert_cmpstr (paddock_lease_get_name (lost), ==, "web");
  variant = paddock_lease_to_variant (lost);
  g_assert_true (g_variant_lookup (variant, "state", "&s", &state));
  g_assert_cmpstr (state, ==, "lost");
  g_assert_cmpint (paddock_lease_get_state (paddock_registry_lookup (registry, base + 1)),
                   ==, PADDOCK_LEASE_STATE_HELD);

  /* The file says so too. */
  g_file_get_contents (state_file, &contents, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (contents, "\"lost\""));

  /* Never handed out to anyone else, even once the intruder is gone. */
  paddock_close_fd (&intruder);
  none = paddock_registry_lease (registry, ":1.2", NULL, "web", base, &error);
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_PORT_IN_USE);
  g_assert_null (none);
  g_clear_error (&error);
  c = paddock_registry_lease (registry, ":1.2", NULL, "web", 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (paddock_lease_get_port (c), ==, base + 2);
  none = paddock_registry_lease (registry, ":1.2", NULL, "web", 0, &error);
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_PORT_EXHAUSTED);
  g_assert_null (none);
  g_clear_error (&error);

  /* Its owner can release it; then it is free again. */
  g_assert_false (paddock_registry_release (registry, base, ":1.2", &error));
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_ACCESS_DENIED);
  g_clear_error (&error);
  g_assert_true (paddock_registry_release (registry, base, ":1.1", &error));
  g_assert_no_error (error);
  none = paddock_registry_lease (registry, ":1.2", NULL, "web", base, &error);
  g_assert_no_error (error);
  g_assert_cmpint (paddock_lease_get_state (none), ==, PADDOCK_LEASE_STATE_HELD);

  g_clear_object (&registry);
  rm_rf (dir);
}

/* Connects to 127.0.0.1:@port, which @listener listens on, and returns
 * both ends: *out_client and *out_server. */
static void
connect_pair (int      listener,
              guint16  port,
              int     *out_client,
              int     *out_server)
{
  struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons (port) };
  int client = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  g_assert_cmpint (client, >=, 0);
  g_assert_no_errno (connect (client, (struct sockaddr *) &addr, sizeof addr));
  *out_server = accept4 (listener, NULL, NULL, SOCK_CLOEXEC);
  g_assert_cmpint (*out_server, >=, 0);
  *out_client = client;
}

/* A leased socket that its owner's program still listens on when the
 * daemon restarts is the lease's own ("in use", not lost), and another
 * program's listener on a leased port is not (lost) — told apart among
 * the machine's other TCP sockets on the same ports: connections open,
 * closing and in TIME_WAIT, which are not listeners. Once the owner lets
 * go, reclaim takes the port back. */
static void
test_persist_in_use (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) web = NULL;
  g_autoptr(PaddockLease) api = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *state_file = g_build_filename (dir, "leases.json", NULL);
  const BindOptions listening = { .v6only = -1, .listen = TRUE };
  paddock_autofd int served = -1;
  paddock_autofd int intruder = -1;
  int open_ends[2 * 8];
  guint16 base = 0;
  guint unheld = 99;

  registry = new_registry (3, 10, 10, &base);
  if (registry == NULL)
    return;
  g_clear_object (&registry);

  registry = load_registry (base, 3, state_file);
  web = paddock_registry_lease (registry, ":1.1", NULL, "web", base, &error);
  g_assert_no_error (error);
  api = paddock_registry_lease (registry, ":1.1", NULL, "api", base + 1, &error);
  g_assert_no_error (error);
  /* The owner's program keeps web's socket, as a server would. */
  served = fcntl (paddock_lease_get_fd (web), F_DUPFD_CLOEXEC, 3);
  g_assert_cmpint (served, >=, 0);
  g_clear_object (&web);
  g_clear_object (&api);
  g_clear_object (&registry);

  /* Clients come and go: closed from their side first, each leaves a
   * TIME_WAIT socket behind; a few stay connected. */
  for (guint i = 0; i < 64; i++)
    {
      int client;
      int server;

      connect_pair (served, base, &client, &server);
      close (client);
      close (server);
    }
  for (guint i = 0; i < G_N_ELEMENTS (open_ends); i += 2)
    connect_pair (served, base, &open_ends[i], &open_ends[i + 1]);
  /* Another program takes api's port while the daemon is down. */
  intruder = outside_bind (AF_INET, "127.0.0.1", base + 1, &listening);
  g_assert_cmpint (intruder, >=, 0);

  registry = load_registry (base, 3, state_file);
  g_assert_cmpint (paddock_lease_get_state (paddock_registry_lookup (registry, base)), ==,
                   PADDOCK_LEASE_STATE_IN_USE);
  g_assert_cmpint (paddock_lease_get_state (paddock_registry_lookup (registry, base + 1)), ==,
                   PADDOCK_LEASE_STATE_LOST);
  g_assert_cmpint (try_listen (AF_INET, "127.0.0.1", base, TRUE), ==, EADDRINUSE);

  /* Still listening: reclaim leaves it with its owner. */
  g_assert_cmpuint (paddock_registry_reclaim (registry, &unheld, &error), ==, 0);
  g_assert_no_error (error);
  g_assert_cmpuint (unheld, ==, 2);
  g_assert_cmpint (paddock_lease_get_state (paddock_registry_lookup (registry, base)), ==,
                   PADDOCK_LEASE_STATE_IN_USE);

  /* The server stops; its connections end. Reclaim takes the port back. */
  paddock_close_fd (&served);
  for (guint i = 0; i < G_N_ELEMENTS (open_ends); i++)
    close (open_ends[i]);
  paddock_registry_reclaim (registry, &unheld, &error);
  g_assert_no_error (error);
  g_assert_cmpint (paddock_lease_get_state (paddock_registry_lookup (registry, base)), ==,
                   PADDOCK_LEASE_STATE_HELD);
  g_assert_cmpint (try_listen (AF_INET, "127.0.0.1", base, TRUE), ==, EADDRINUSE);

  g_clear_object (&registry);
  rm_rf (dir);
}

/* When the kernel will not say which sockets listen (sock_diag refused:
 * here socket(AF_NETLINK) fails with EPERM under a seccomp filter of the
 * test's, as in a container that forbids netlink), a leased port found in
 * use after a restart is taken to be still its owner's (in use, never
 * lost or handed out), also when another program has it; reclaim leaves
 * it alone even once the owner let go; and the log says so once, with
 * the kernel's answer. */
static void
test_persist_in_use_unknown (void)
{
#ifdef PADDOCK_TEST_AUDIT_ARCH
  if (g_test_subprocess ())
    {
      g_autoptr(PaddockRegistry) registry = NULL;
      g_autoptr(PaddockLease) web = NULL;
      g_autoptr(PaddockLease) api = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *dir = make_tmp_dir ();
      g_autofree char *state_file = g_build_filename (dir, "leases.json", NULL);
      const BindOptions listening = { .v6only = -1, .listen = TRUE };
      paddock_autofd int served = -1;
      paddock_autofd int intruder = -1;
      guint16 base = 0;
      guint unheld = 99;

      registry = new_registry (3, 10, 10, &base);
      if (registry == NULL)
        return;
      g_clear_object (&registry);

      registry = load_registry (base, 3, state_file);
      web = paddock_registry_lease (registry, ":1.1", NULL, "web", base, &error);
      g_assert_no_error (error);
      api = paddock_registry_lease (registry, ":1.1", NULL, "api", base + 1, &error);
      g_assert_no_error (error);
      served = fcntl (paddock_lease_get_fd (web), F_DUPFD_CLOEXEC, 3);
      g_assert_cmpint (served, >=, 0);
      g_clear_object (&web);
      g_clear_object (&api);
      g_clear_object (&registry);
      intruder = outside_bind (AF_INET, "127.0.0.1", base + 1, &listening);
      g_assert_cmpint (intruder, >=, 0);

      g_assert_no_errno (paddock_test_refuse_socket_family (AF_NETLINK, EPERM));
      g_assert_cmpint (socket (AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG), ==, -1);
      g_assert_cmpint (errno, ==, EPERM);

      g_test_expect_message ("paddock-registry", G_LOG_LEVEL_WARNING,
                             "Could not list the listening TCP sockets (sock_diag): Operation not permitted; "
                             "a leased port found in use is taken to be still its owner's");
      registry = load_registry (base, 3, state_file);
      g_test_assert_expected_messages ();
      g_assert_cmpint (paddock_lease_get_state (paddock_registry_lookup (registry, base)), ==,
                       PADDOCK_LEASE_STATE_IN_USE);
      g_assert_cmpint (paddock_lease_get_state (paddock_registry_lookup (registry, base + 1)), ==,
                       PADDOCK_LEASE_STATE_IN_USE);

      /* The owner lets go: still not known, so still not taken back (and
       * not said again). */
      paddock_close_fd (&served);
      g_assert_cmpuint (paddock_registry_reclaim (registry, &unheld, &error), ==, 0);
      g_assert_no_error (error);
      g_assert_cmpuint (unheld, ==, 2);
      g_assert_cmpint (paddock_lease_get_state (paddock_registry_lookup (registry, base)), ==,
                       PADDOCK_LEASE_STATE_IN_USE);
      g_assert_cmpint (paddock_lease_get_fd (paddock_registry_lookup (registry, base)), ==, -1);

      g_clear_object (&registry);
      rm_rf (dir);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDOUT | G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
#else
  g_test_skip ("no seccomp audit arch known for this machine");
#endif
}

static void
test_persist_corrupt (void)
{
  const char *files[] = {
    "",
    "not json",
    "[]",
    "{}",
    "{\"version\":2,\"leases\":[]}",
    "{\"version\":1}",
    "{\"version\":1,\"leases\":{}}",
    "{\"version\":1,\"leases\":[1]}",
    "{\"version\":1,\"leases\":[{\"port\":\"30000\",\"name\":\"web\",\"owner\":\":1.1\","
      "\"session\":null,\"created\":1,\"state\":\"held\"}]}",
    "{\"version\":1,\"leases\":[{\"port\":80,\"name\":\"web\",\"owner\":\":1.1\","
      "\"session\":null,\"created\":1,\"state\":\"held\"}]}",
    "{\"version\":1,\"leases\":[{\"port\":30000,\"name\":\"a b\",\"owner\":\":1.1\","
      "\"session\":null,\"created\":1,\"state\":\"held\"}]}",
    "{\"version\":1,\"leases\":[{\"port\":30000,\"name\":\"web\",\"owner\":\"\","
      "\"session\":null,\"created\":1,\"state\":\"held\"}]}",
    "{\"version\":1,\"leases\":[{\"port\":30000,\"name\":\"web\",\"owner\":\":1.1\","
      "\"session\":null,\"created\":1,\"state\":\"gone\"}]}",
    "{\"version\":1,\"leases\":[{\"port\":30000,\"name\":\"web\",\"owner\":\":1.1\","
      "\"created\":1,\"state\":\"held\"}]}",
    "{\"version\":1,\"leases\":["
      "{\"port\":30000,\"name\":\"web\",\"owner\":\":1.1\",\"session\":null,"
      "\"created\":1,\"state\":\"held\"},"
      "{\"port\":30000,\"name\":\"api\",\"owner\":\":1.2\",\"session\":null,"
      "\"created\":1,\"state\":\"held\"}]}",
  };
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *state_file = g_build_filename (dir, "leases.json", NULL);
  guint16 base = find_free_range (1);

  if (base == 0)
    {
      g_test_skip ("no free port range on this machine");
      return;
    }

  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autoptr(PaddockRegistry) registry = NULL;
      g_autoptr(PaddockLease) lease = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *contents = NULL;

      g_test_message ("corrupt file %u: %s", i, files[i]);
      g_file_set_contents (state_file, files[i], -1, &error);
      g_assert_no_error (error);

      registry = paddock_registry_new (base, base, 10, 10, &error);
      g_assert_no_error (error);
      g_assert_false (paddock_registry_load (registry, state_file, &error));
      g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED);
      g_assert_nonnull (strstr (error->message, "corrupt"));
      g_clear_error (&error);
      g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 0);
      g_assert_null (paddock_registry_lookup (registry, 30000));

      /* Left untouched, and not overwritten by later changes either. */
      lease = paddock_registry_lease (registry, ":1.1", NULL, "web", 0, &error);
      g_assert_no_error (error);
      g_file_get_contents (state_file, &contents, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (contents, ==, files[i]);
    }

  rm_rf (dir);
}

static void
test_persist_failure (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(PaddockLease) lease = NULL;
  g_autoptr(PaddockLease) none = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *sub = g_build_filename (dir, "state", NULL);
  g_autofree char *state_file = g_build_filename (sub, "leases.json", NULL);
  guint16 base = 0;
  guint16 port;
  guint changes = 0;

  registry = new_registry (2, 10, 10, &base);
  if (registry == NULL)
    return;
  g_clear_object (&registry);

  g_assert_no_errno (g_mkdir (sub, 0700));
  registry = load_registry (base, 2, state_file);
  g_signal_connect (registry, "items-changed", G_CALLBACK (items_changed_count_cb), &changes);
  lease = paddock_registry_lease (registry, ":1.1", NULL, "web", 0, &error);
  g_assert_no_error (error);
  port = paddock_lease_get_port (lease);
  g_assert_cmpuint (changes, ==, 1);

  /* The state directory vanishes: nothing can be saved any more. */
  rm_rf (sub);

  /* A lease that cannot be saved is not made (and its port not held). */
  none = paddock_registry_lease (registry, ":1.1", NULL, "api", 0, &error);
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED);
  g_assert_null (none);
  g_clear_error (&error);
  g_assert_cmpuint (changes, ==, 1);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 1);
  g_assert_true (port_is_free (port == base ? base + 1 : base));

  /* A release that cannot be saved is not done: the lease stays held. */
  g_assert_false (paddock_registry_release (registry, port, ":1.1", &error));
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED);
  g_clear_error (&error);
  g_assert_cmpuint (changes, ==, 1);
  g_assert_true (paddock_registry_lookup (registry, port) == lease);
  g_assert_cmpint (paddock_lease_get_fd (lease), >=, 0);
  g_assert_cmpint (try_listen (AF_INET, "127.0.0.1", port, TRUE), ==, EADDRINUSE);

  /* Once the directory is back, both work again. */
  g_assert_no_errno (g_mkdir (sub, 0700));
  g_assert_true (paddock_registry_release (registry, port, ":1.1", &error));
  g_assert_no_error (error);
  g_assert_cmpuint (changes, ==, 2);

  g_clear_object (&registry);
  rm_rf (dir);
}

/* Group commit */

typedef struct
{
  GPtrArray *leases;
  GError    *error;
  gboolean   done;
} LeaseWait;

static void
lease_wait_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  LeaseWait *wait = user_data;

  wait->leases = paddock_registry_lease_finish (PADDOCK_REGISTRY (source), result, &wait->error);
  wait->done = TRUE;
}

static void
lease_wait_for (LeaseWait *wait)
{
  while (!wait->done)
    g_main_context_iteration (NULL, TRUE);
}

static void
lease_wait_clear (LeaseWait *wait)
{
  g_clear_pointer (&wait->leases, g_ptr_array_unref);
  g_clear_error (&wait->error);
}

/* What a restart finds: @expected leases loaded back from @state_file. */
static void
assert_reloaded (guint16     base,
                 guint       n,
                 const char *state_file,
                 guint       expected)
{
  g_autoptr(PaddockRegistry) registry = load_registry (base, n, state_file);

  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, expected);
}

/* Leases asked for together: none is listed, announced or answered before
 * it is durable; then all are, on distinct ports, and a restart has them.
 * They are announced in runs, which a listener mirroring the list follows
 * (Mirror checks the whole list at every announcement). */
static void
test_commit_group (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(GHashTable) ports = g_hash_table_new (NULL, NULL);
  g_autoptr(GArray) shadow = g_array_new (FALSE, FALSE, sizeof (guint16));
  Mirror mirror = { .shadow = shadow };
  g_autoptr(PaddockLease) middle = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *state_file = g_build_filename (dir, "leases.json", NULL);
  LeaseWait waits[5] = { { 0 } };
  guint16 base = 0;
  guint changes = 0;

  registry = new_registry (8, 10, 10, &base);
  if (registry == NULL)
    return;
  g_clear_object (&registry);

  registry = load_registry (base, 8, state_file);
  g_signal_connect (registry, "items-changed", G_CALLBACK (items_changed_count_cb), &changes);
  g_signal_connect (registry, "items-changed", G_CALLBACK (mirror_items_changed_cb), &mirror);
  /* One listed first, in the middle of the pool, so that the batch lands
   * on both sides of it: two runs at least. */
  middle = paddock_registry_lease (registry, ":1.9", NULL, "mid", base + 2, &error);
  g_assert_no_error (error);
  changes = 0;
  for (guint i = 0; i < G_N_ELEMENTS (waits); i++)
    {
      g_autofree char *owner = g_strdup_printf (":1.%u", i + 1);

      paddock_registry_lease_async (registry, owner, NULL, "web", 0, i == 4 ? 3 : 1, NULL,
                                    lease_wait_cb, &waits[i]);
    }
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 1);
  g_assert_cmpuint (changes, ==, 0);
  g_assert_false (waits[0].done);

  for (guint i = 0; i < G_N_ELEMENTS (waits); i++)
    {
      lease_wait_for (&waits[i]);
      g_assert_no_error (waits[i].error);
      g_assert_cmpuint (waits[i].leases->len, ==, i == 4 ? 3 : 1);
      for (guint j = 0; j < waits[i].leases->len; j++)
        {
          PaddockLease *lease = g_ptr_array_index (waits[i].leases, j);

          g_assert_true (g_hash_table_add (ports, GUINT_TO_POINTER (paddock_lease_get_port (lease))));
          g_assert_true (paddock_registry_lookup (registry, paddock_lease_get_port (lease)) == lease);
          g_assert_cmpint (try_listen (AF_INET, "127.0.0.1", paddock_lease_get_port (lease), TRUE),
                           ==, EADDRINUSE);
        }
    }
  /* Fewer announcements than leases (runs), and at least two (the lease
   * in the middle splits them); the mirror followed all of them. */
  g_assert_cmpuint (changes, >=, 2);
  g_assert_cmpuint (changes, <, 7);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 8);
  assert_sorted (registry);
  g_assert_cmpuint (mirror.count, ==, changes + 1);

  /* An owner's leases go the same way: runs, followed by the mirror. */
  changes = 0;
  g_assert_cmpuint (paddock_registry_release_owner (registry, ":1.5"), ==, 3);
  g_assert_cmpuint (changes, >=, 1);
  g_assert_cmpuint (changes, <=, 3);
  g_assert_cmpuint (shadow->len, ==, 5);

  for (guint i = 0; i < G_N_ELEMENTS (waits); i++)
    lease_wait_clear (&waits[i]);
  g_clear_object (&middle);
  g_clear_object (&registry);
  assert_reloaded (base, 8, state_file, 5);
  rm_rf (dir);
}

/* Waiting leases count against the quotas and hold their ports; an owner
 * that leaves (or a caller that cancels) before the sync gets none, its
 * ports are free again and a restart does not bring them back. */
static void
test_commit_abandoned (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(PaddockLease) lease = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *state_file = g_build_filename (dir, "leases.json", NULL);
  LeaseWait left = { 0 };
  LeaseWait over = { 0 };
  LeaseWait cancelled = { 0 };
  LeaseWait kept = { 0 };
  guint16 base = 0;
  guint changes = 0;

  registry = new_registry (8, 10, 10, &base);
  if (registry == NULL)
    return;
  g_clear_object (&registry);

  registry = paddock_registry_new (base, (guint16) (base + 7), 10, 2, &error);
  g_assert_no_error (error);
  g_assert_true (paddock_registry_load (registry, state_file, &error));
  g_assert_no_error (error);
  g_signal_connect (registry, "items-changed", G_CALLBACK (items_changed_count_cb), &changes);

  paddock_registry_lease_async (registry, ":1.1", NULL, "web", 0, 2, NULL, lease_wait_cb, &left);
  /* Two waiting: a third for the same owner is over its quota of two. */
  paddock_registry_lease_async (registry, ":1.1", NULL, "api", 0, 1, NULL, lease_wait_cb, &over);
  paddock_registry_lease_async (registry, ":1.2", NULL, "db", 0, 1, cancellable, lease_wait_cb, &cancelled);
  paddock_registry_lease_async (registry, ":1.3", NULL, "ui", base + 7, 1, NULL, lease_wait_cb, &kept);
  /* The last port is waiting for :1.3: nobody else gets it. */
  g_assert_null (paddock_registry_lease (registry, ":1.4", NULL, "x", base + 7, &error));
  g_assert_error (error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_PORT_IN_USE);
  g_clear_error (&error);

  g_assert_cmpuint (paddock_registry_release_owner (registry, ":1.1"), ==, 2);
  g_cancellable_cancel (cancellable);

  lease_wait_for (&left);
  lease_wait_for (&over);
  lease_wait_for (&cancelled);
  lease_wait_for (&kept);
  g_assert_error (left.error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_NOT_FOUND);
  g_assert_error (over.error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_QUOTA_EXCEEDED);
  g_assert_error (cancelled.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_no_error (kept.error);
  g_assert_cmpuint (paddock_lease_get_port (g_ptr_array_index (kept.leases, 0)), ==, base + 7);
  g_assert_cmpuint (changes, ==, 1);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 1);
  for (guint16 port = base; port < base + 7; port++)
    g_assert_true (port_is_free (port));

  /* A synchronous change waits for the batch that takes them back. */
  lease = paddock_registry_lease (registry, ":1.4", NULL, "x", 0, &error);
  g_assert_no_error (error);
  lease_wait_clear (&left);
  lease_wait_clear (&over);
  lease_wait_clear (&cancelled);
  lease_wait_clear (&kept);
  g_clear_object (&lease);
  g_clear_object (&registry);

  registry = load_registry (base, 8, state_file);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 2);
  /* Sorted by port: :1.4's came from the scan, :1.3's is the last one. */
  lease = g_list_model_get_item (G_LIST_MODEL (registry), 0);
  g_assert_cmpstr (paddock_lease_get_owner (lease), ==, ":1.4");
  g_clear_object (&lease);
  lease = g_list_model_get_item (G_LIST_MODEL (registry), 1);
  g_assert_cmpstr (paddock_lease_get_owner (lease), ==, ":1.3");
  g_clear_object (&registry);
  rm_rf (dir);
}

/* A batch that cannot be written is refused as a whole: no lease listed,
 * its ports free; once the state can be written again, leases work. */
static void
test_commit_failure (void)
{
  g_autoptr(PaddockRegistry) registry = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *sub = g_build_filename (dir, "state", NULL);
  g_autofree char *state_file = g_build_filename (sub, "leases.json", NULL);
  LeaseWait failed = { 0 };
  LeaseWait again = { 0 };
  guint16 base = 0;
  guint changes = 0;

  registry = new_registry (4, 10, 10, &base);
  if (registry == NULL)
    return;
  g_clear_object (&registry);

  g_assert_no_errno (g_mkdir (sub, 0700));
  registry = load_registry (base, 4, state_file);
  g_signal_connect (registry, "items-changed", G_CALLBACK (items_changed_count_cb), &changes);
  rm_rf (sub);

  paddock_registry_lease_async (registry, ":1.1", NULL, "web", 0, 2, NULL, lease_wait_cb, &failed);
  lease_wait_for (&failed);
  g_assert_error (failed.error, PADDOCK_REGISTRY_ERROR, PADDOCK_REGISTRY_ERROR_FAILED);
  g_assert_null (failed.leases);
  g_assert_cmpuint (changes, ==, 0);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (registry)), ==, 0);
  for (guint16 port = base; port < base + 4; port++)
    g_assert_true (port_is_free (port));

  g_assert_no_errno (g_mkdir (sub, 0700));
  paddock_registry_lease_async (registry, ":1.1", NULL, "web", 0, 1, NULL, lease_wait_cb, &again);
  lease_wait_for (&again);
  g_assert_no_error (again.error);
  g_assert_cmpuint (changes, ==, 1);
  lease_wait_clear (&failed);
  lease_wait_clear (&again);
  g_clear_object (&registry);
  assert_reloaded (base, 4, state_file, 1);
  rm_rf (dir);
}

/* Durable files */

static void
test_durable_replace (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "state.json", NULL);
  g_autofree char *missing = g_build_filename (dir, "no", "such", "file", NULL);
  g_autofree char *contents = NULL;
  gsize length = 0;
  struct stat st;

  /* A new file. */
  g_assert_true (paddock_durable_file_replace (path, "{\"a\":1}", -1, 0600, &error));
  g_assert_no_error (error);
  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (contents, ==, "{\"a\":1}");
  g_assert_no_errno (g_stat (path, &st));
  g_assert_cmpint (st.st_mode & 07777, ==, 0600);
  g_clear_pointer (&contents, g_free);

  /* Over an existing file with a wider mode: the mode is ours again. */
  g_assert_no_errno (g_chmod (path, 0644));
  g_assert_true (paddock_durable_file_replace (path, "ab\0cd", 5, 0600, &error));
  g_assert_no_error (error);
  g_file_get_contents (path, &contents, &length, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (contents, length, "ab\0cd", 5);
  g_assert_no_errno (g_stat (path, &st));
  g_assert_cmpint (st.st_mode & 07777, ==, 0600);
  g_assert_true (S_ISREG (st.st_mode));

  /* Empty contents are fine. */
  g_assert_true (paddock_durable_file_replace (path, "", 0, 0600, &error));
  g_assert_no_error (error);
  g_assert_no_errno (g_stat (path, &st));
  g_assert_cmpint (st.st_size, ==, 0);

  /* Failure is reported and leaves nothing behind. */
  g_assert_false (paddock_durable_file_replace (missing, "x", -1, 0600, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_clear_error (&error);

  g_assert_cmpuint (count_dir_entries (dir), ==, 1);
  rm_rf (dir);
}

static void
test_private_dir (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *nested = g_build_filename (dir, "a", "b", "paddock", NULL);
  g_autofree char *file = g_build_filename (dir, "file", NULL);
  struct stat st;

  g_assert_true (paddock_ensure_private_dir (nested, &error));
  g_assert_no_error (error);
  g_assert_no_errno (g_stat (nested, &st));
  g_assert_true (S_ISDIR (st.st_mode));
  g_assert_cmpint (st.st_mode & 07777, ==, 0700);

  /* An existing directory of ours is narrowed to 0700; twice is fine. */
  g_assert_no_errno (g_chmod (nested, 0755));
  g_assert_true (paddock_ensure_private_dir (nested, &error));
  g_assert_no_error (error);
  g_assert_true (paddock_ensure_private_dir (nested, &error));
  g_assert_no_error (error);
  g_assert_no_errno (g_stat (nested, &st));
  g_assert_cmpint (st.st_mode & 07777, ==, 0700);

  /* Not a directory. */
  g_file_set_contents (file, "", -1, &error);
  g_assert_no_error (error);
  g_assert_false (paddock_ensure_private_dir (file, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY);
  g_clear_error (&error);

  rm_rf (dir);
}

/* A folder nested @depth deep under @top (each named "d", a file "f" in
 * each), made through descriptors: its deepest path is longer than
 * PATH_MAX, as an agent can make it in its stage. */
static void
make_deep_tree (const char *top,
                guint       depth)
{
  int fd = open (top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  g_assert_cmpint (fd, >=, 0);
  for (guint i = 0; i < depth; i++)
    {
      int file_fd = openat (fd, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
      int child;

      g_assert_cmpint (file_fd, >=, 0);
      close (file_fd);
      g_assert_no_errno (mkdirat (fd, "d", 0700));
      child = openat (fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      g_assert_cmpint (child, >=, 0);
      close (fd);
      fd = child;
    }
  close (fd);
}

static void
test_remove_tree_deep (void)
{
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *tree = g_build_filename (dir, "stage", NULL);
  struct rlimit limit;
  struct rlimit saved;

  g_assert_no_errno (g_mkdir (tree, 0700));
  /* 3,000 levels of "d/": a 6,000-byte path, past PATH_MAX (4,096). */
  make_deep_tree (tree, 3000);

  /* Few descriptors to spare, as in a daemon serving many sessions: the
   * walk holds a handful, not one a level. */
  g_assert_no_errno (getrlimit (RLIMIT_NOFILE, &saved));
  limit = saved;
  limit.rlim_cur = 64;
  g_assert_no_errno (setrlimit (RLIMIT_NOFILE, &limit));
  paddock_remove_tree (tree);
  g_assert_no_errno (setrlimit (RLIMIT_NOFILE, &saved));

  g_assert_false (g_file_test (tree, G_FILE_TEST_EXISTS));
  g_assert_no_errno (g_rmdir (dir));
}

/* Links are removed, never followed; other kinds of file go too; a
 * folder of ours with no permissions is opened again. */
static void
test_remove_tree_links (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *tree = g_build_filename (dir, "stage", NULL);
  g_autofree char *outside = g_build_filename (dir, "outside", NULL);
  g_autofree char *outside_file = g_build_filename (outside, "keep.txt", NULL);
  g_autofree char *precious = g_build_filename (dir, "precious.txt", NULL);
  g_autofree char *sub = g_build_filename (tree, "sub", NULL);
  g_autofree char *closed = g_build_filename (tree, "work", NULL);
  g_autofree char *closed_file = g_build_filename (closed, "inside", NULL);
  g_autofree char *link_dir = g_build_filename (sub, "to-outside", NULL);
  g_autofree char *link_file = g_build_filename (tree, "to-precious", NULL);
  g_autofree char *dangling = g_build_filename (sub, "dangling", NULL);
  g_autofree char *fifo = g_build_filename (sub, "fifo", NULL);

  g_assert_no_errno (g_mkdir (outside, 0700));
  g_file_set_contents (outside_file, "keep", -1, &error);
  g_assert_no_error (error);
  g_file_set_contents (precious, "precious", -1, &error);
  g_assert_no_error (error);
  g_assert_no_errno (g_mkdir_with_parents (sub, 0700));
  g_assert_no_errno (symlink (outside, link_dir));
  g_assert_no_errno (symlink (precious, link_file));
  g_assert_no_errno (symlink ("/nonexistent/target", dangling));
  g_assert_no_errno (mkfifo (fifo, 0600));
  g_assert_no_errno (g_mkdir (closed, 0700));
  g_file_set_contents (closed_file, "", -1, &error);
  g_assert_no_error (error);
  /* As overlayfs leaves its work folder. */
  g_assert_no_errno (g_chmod (closed, 0));

  paddock_remove_tree (tree);

  g_assert_false (g_file_test (tree, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (outside_file, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_test (precious, G_FILE_TEST_IS_REGULAR));

  /* A link given as the tree itself is removed, not its target. */
  g_assert_no_errno (symlink (outside, tree));
  paddock_remove_tree (tree);
  g_assert_false (g_file_test (tree, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (outside_file, G_FILE_TEST_IS_REGULAR));

  rm_rf (dir);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/registry/new/invalid", test_new_invalid);
  g_test_add_func ("/registry/lease/distinct", test_lease_distinct);
  g_test_add_func ("/registry/lease/exclusive", test_lease_exclusive);
  g_test_add_func ("/registry/lease/preferred", test_lease_preferred);
  g_test_add_func ("/registry/lease/skips-used", test_lease_skips_used);
  g_test_add_func ("/registry/lease/names", test_lease_names);
  g_test_add_func ("/registry/lease/owners", test_lease_owners);
  g_test_add_func ("/registry/lease/exhausted", test_lease_exhausted);
  g_test_add_func ("/registry/lease/cursor", test_lease_cursor);
  g_test_add_func ("/registry/lease/variant", test_lease_variant);
  g_test_add_func ("/registry/quota/per-owner", test_quota_per_owner);
  g_test_add_func ("/registry/quota/total", test_quota_total);
  g_test_add_func ("/registry/release/access", test_release_access);
  g_test_add_func ("/registry/release/owner", test_release_owner);
  g_test_add_func ("/registry/model/items-changed", test_items_changed);
  g_test_add_func ("/registry/persist/reload", test_persist_reload);
  g_test_add_func ("/registry/persist/rename", test_persist_rename);
  g_test_add_func ("/registry/persist/several", test_persist_several);
  g_test_add_func ("/registry/persist/format", test_persist_format);
  g_test_add_func ("/registry/persist/lost", test_persist_lost);
  g_test_add_func ("/registry/persist/in-use", test_persist_in_use);
  g_test_add_func ("/registry/persist/in-use-unknown", test_persist_in_use_unknown);
  g_test_add_func ("/registry/persist/journal", test_persist_journal);
  g_test_add_func ("/registry/persist/torn-append", test_persist_torn_append);
  g_test_add_func ("/registry/lease/client-shutdown", test_lease_client_shutdown);
  g_test_add_func ("/registry/lease/hand-over", test_lease_hand_over);
  g_test_add_func ("/registry/persist/corrupt", test_persist_corrupt);
  g_test_add_func ("/registry/persist/failure", test_persist_failure);
  g_test_add_func ("/registry/commit/group", test_commit_group);
  g_test_add_func ("/registry/commit/abandoned", test_commit_abandoned);
  g_test_add_func ("/registry/commit/failure", test_commit_failure);
  g_test_add_func ("/durable/replace", test_durable_replace);
  g_test_add_func ("/durable/private-dir", test_private_dir);
  g_test_add_func ("/durable/remove-tree/deep", test_remove_tree_deep);
  g_test_add_func ("/durable/remove-tree/links", test_remove_tree_links);

  return g_test_run ();
}
