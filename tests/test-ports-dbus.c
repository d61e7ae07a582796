/* test-ports-dbus.c — the port registry over D-Bus, against the real daemon
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gio/gunixfdlist.h>
#include <gio/gunixinputstream.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "paddock-error.h"
#include "paddock-test-client.h"
#include "paddock-test-daemon.h"

#define N_WORKERS          20
#define LEASES_PER_WORKER  100

typedef struct
{
  guint16 port;
  int     fd;
  char   *owner;
  char   *state;
} Lease;

static void
lease_clear (Lease *lease)
{
  if (lease->fd >= 0)
    close (lease->fd);
  lease->fd = -1;
  g_clear_pointer (&lease->owner, g_free);
  g_clear_pointer (&lease->state, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Lease, lease_clear)

static gboolean
call_lease (GDBusConnection  *connection,
            const char       *name,
            guint16           preferred,
            GVariant         *options,
            Lease            *out,
            GError          **error)
{
  g_autoptr(GVariant) lease = NULL;
  int fd = -1;

  lease = paddock_test_lease (connection, name, preferred, options, out != NULL ? &fd : NULL, error);
  if (lease == NULL)
    return FALSE;
  if (out != NULL)
    {
      g_assert_true (g_variant_lookup (lease, "port", "q", &out->port));
      g_assert_true (g_variant_lookup (lease, "owner", "s", &out->owner));
      g_assert_true (g_variant_lookup (lease, "state", "s", &out->state));
      g_assert_cmpint (fd, >=, 0);
      out->fd = fd;
    }

  return TRUE;
}

static GVariant *
list_leases (GDBusConnection *connection)
{
  return paddock_test_list_leases (connection);
}

static guint
count_leases (GDBusConnection *connection)
{
  g_autoptr(GVariant) leases = list_leases (connection);

  return (guint) g_variant_n_children (leases);
}

static GVariant *
find_lease (GDBusConnection *connection,
            guint16          port)
{
  g_autoptr(GVariant) leases = list_leases (connection);

  for (gsize i = 0; i < g_variant_n_children (leases); i++)
    {
      g_autoptr(GVariant) lease = g_variant_get_child_value (leases, i);
      guint16 lease_port = 0;

      g_variant_lookup (lease, "port", "q", &lease_port);
      if (lease_port == port)
        return g_steal_pointer (&lease);
    }

  return NULL;
}

static gboolean
call_release (GDBusConnection  *connection,
              guint16           port,
              GError          **error)
{
  return paddock_test_release (connection, port, error);
}

/* Try to take @port the way another program would: its own socket, with
 * SO_REUSEADDR (which many servers set), on @family's loopback or wildcard. */
static int
try_bind (int      family,
          gboolean wildcard,
          guint16  port)
{
  int fd = socket (family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  int result;
  int saved_errno;

  if (fd < 0)
    return -errno;

  setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);

  if (family == AF_INET)
    {
      struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons (port) };
      addr.sin_addr.s_addr = htonl (wildcard ? INADDR_ANY : INADDR_LOOPBACK);
      result = bind (fd, (struct sockaddr *) &addr, sizeof addr);
    }
  else
    {
      struct sockaddr_in6 addr = { .sin6_family = AF_INET6, .sin6_port = htons (port) };
      addr.sin6_addr = wildcard ? in6addr_any : in6addr_loopback;
      result = bind (fd, (struct sockaddr *) &addr, sizeof addr);
    }

  saved_errno = errno;
  close (fd);
  return result == 0 ? 0 : -saved_errno;
}

static gboolean
ipv6_loopback_available (void)
{
  int fd = socket (AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in6 addr = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
  gboolean ok;

  if (fd < 0)
    return FALSE;
  ok = bind (fd, (struct sockaddr *) &addr, sizeof addr) == 0;
  close (fd);
  return ok;
}

static void
assert_port_unbindable (guint16 port)
{
  g_assert_cmpint (try_bind (AF_INET, FALSE, port), ==, -EADDRINUSE);
  g_assert_cmpint (try_bind (AF_INET, TRUE, port), ==, -EADDRINUSE);
  if (ipv6_loopback_available ())
    {
      g_assert_cmpint (try_bind (AF_INET6, FALSE, port), ==, -EADDRINUSE);
      g_assert_cmpint (try_bind (AF_INET6, TRUE, port), ==, -EADDRINUSE);
    }
}

/* ------------------------------------------------------------------------ */

static void
test_lease_gives_listening_socket (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_auto(Lease) lease = { .fd = -1 };
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) listed = NULL;
  struct sockaddr_in addr;
  socklen_t len = sizeof addr;
  int accepting = 0;
  socklen_t optlen = sizeof accepting;
  int client;
  int server;
  g_autofree char *name = NULL;

  g_assert_true (call_lease (connection, "web", 0, NULL, &lease, &error));
  g_assert_no_error (error);

  g_assert_cmpuint (lease.port, >=, paddock_test_daemon_get_first_port (daemon));
  g_assert_cmpuint (lease.port, <=, paddock_test_daemon_get_last_port (daemon));
  g_assert_cmpstr (lease.owner, ==, g_dbus_connection_get_unique_name (connection));
  g_assert_cmpstr (lease.state, ==, "held");

  /* The fd is the daemon's socket: bound to 127.0.0.1:port, listening. */
  g_assert_cmpint (getsockname (lease.fd, (struct sockaddr *) &addr, &len), ==, 0);
  g_assert_cmpint (ntohs (addr.sin_port), ==, lease.port);
  g_assert_cmpuint (ntohl (addr.sin_addr.s_addr), ==, INADDR_LOOPBACK);
  g_assert_cmpint (getsockopt (lease.fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &optlen), ==, 0);
  g_assert_cmpint (accepting, ==, 1);

  client = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (connect (client, (struct sockaddr *) &addr, sizeof addr), ==, 0);
  server = accept4 (lease.fd, NULL, NULL, SOCK_CLOEXEC);
  g_assert_cmpint (server, >=, 0);
  close (client);
  close (server);

  assert_port_unbindable (lease.port);

  listed = find_lease (connection, lease.port);
  g_assert_nonnull (listed);
  g_assert_true (g_variant_lookup (listed, "name", "s", &name));
  g_assert_cmpstr (name, ==, "web");

  g_assert_true (call_release (connection, lease.port, &error));
  g_assert_no_error (error);
  g_assert_null (find_lease (connection, lease.port));

  /* Our copy of the socket is still open, so the port stays ours; once we
   * close it too, anyone may bind it again. */
  lease_clear (&lease);
  g_assert_cmpint (try_bind (AF_INET, FALSE, lease.port), ==, 0);
}


/* ------------------------------------------------------------------------ */

/* A worker process: lease LEASES_PER_WORKER ports, print them, hold them
 * until stdin closes. Runs as `test-ports-dbus --worker ADDRESS ID`. */
static int
run_worker (const char *address,
            const char *id)
{
  g_autoptr(GDBusConnection) connection = NULL;
  g_autoptr(GError) error = NULL;
  GString *out = g_string_new (NULL);
  char buf[16];

  connection = g_dbus_connection_new_for_address_sync (address,
                                                       G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                                       G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                                                       NULL, NULL, &error);
  if (connection == NULL)
    {
      g_printerr ("worker %s: %s\n", id, error->message);
      return 1;
    }

  for (guint i = 0; i < LEASES_PER_WORKER; i++)
    {
      g_autofree char *name = g_strdup_printf ("w%s-%u", id, i);
      Lease lease = { .fd = -1 };

      if (!call_lease (connection, name, 0, NULL, &lease, &error))
        {
          g_printerr ("worker %s: lease %u: %s\n", id, i, error->message);
          return 1;
        }
      g_string_append_printf (out, "%u\n", lease.port);
      lease_clear (&lease);
    }

  g_string_append (out, "ready\n");
  if (write (STDOUT_FILENO, out->str, out->len) != (ssize_t) out->len)
    return 1;
  g_string_free (out, TRUE);

  /* Hold the leases (by staying connected) until the test lets go. */
  while (read (STDIN_FILENO, buf, sizeof buf) > 0)
    ;

  return 0;
}

static char *self_exe;

static void
test_concurrent_leases_are_distinct (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GHashTable) seen = g_hash_table_new (NULL, NULL);
  GSubprocess *workers[N_WORKERS];
  gint64 deadline;

  for (guint w = 0; w < N_WORKERS; w++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *id = g_strdup_printf ("%u", w);

      workers[w] = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE,
                                     &error, self_exe, "--worker",
                                     paddock_test_daemon_get_address (daemon), id, NULL);
      g_assert_no_error (error);
    }

  for (guint w = 0; w < N_WORKERS; w++)
    {
      g_autoptr(GDataInputStream) lines =
        g_data_input_stream_new (g_subprocess_get_stdout_pipe (workers[w]));
      guint got = 0;

      for (;;)
        {
          g_autoptr(GError) error = NULL;
          g_autofree char *line = g_data_input_stream_read_line (lines, NULL, NULL, &error);
          guint64 port;

          g_assert_no_error (error);
          g_assert_nonnull (line);
          if (g_str_equal (line, "ready"))
            break;

          g_assert_true (g_ascii_string_to_unsigned (line, 10,
                                                     paddock_test_daemon_get_first_port (daemon),
                                                     paddock_test_daemon_get_last_port (daemon),
                                                     &port, NULL));
          /* The point of the registry: no port is ever handed out twice. */
          g_assert_false (g_hash_table_contains (seen, GUINT_TO_POINTER (port)));
          g_hash_table_add (seen, GUINT_TO_POINTER (port));
          got++;
        }

      g_assert_cmpuint (got, ==, LEASES_PER_WORKER);
    }

  g_assert_cmpuint (g_hash_table_size (seen), ==, N_WORKERS * LEASES_PER_WORKER);
  g_assert_cmpuint (count_leases (connection), ==, N_WORKERS * LEASES_PER_WORKER);

  /* Every leased port is really held: this process cannot bind any of them,
   * on loopback or on the wildcard address, IPv4 or IPv6. */
  {
    GHashTableIter iter;
    gpointer key;

    g_hash_table_iter_init (&iter, seen);
    while (g_hash_table_iter_next (&iter, &key, NULL))
      assert_port_unbindable ((guint16) GPOINTER_TO_UINT (key));
  }

  /* The workers go away; their leases go with them. */
  for (guint w = 0; w < N_WORKERS; w++)
    {
      g_autoptr(GError) error = NULL;

      g_output_stream_close (g_subprocess_get_stdin_pipe (workers[w]), NULL, NULL);
      g_subprocess_wait_check (workers[w], NULL, &error);
      g_assert_no_error (error);
      g_object_unref (workers[w]);
    }

  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (count_leases (connection) != 0)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (20 * 1000);
    }
}

/* ------------------------------------------------------------------------ */

static void
test_disconnect_releases (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *observer = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GDBusConnection) client = paddock_test_daemon_new_connection (daemon);
  g_autoptr(GError) error = NULL;
  guint16 ports[3];
  gint64 deadline;

  for (guint i = 0; i < G_N_ELEMENTS (ports); i++)
    {
      g_auto(Lease) lease = { .fd = -1 };

      g_assert_true (call_lease (client, "dev", 0, NULL, &lease, &error));
      ports[i] = lease.port;
    }
  g_assert_cmpuint (count_leases (observer), ==, 3);

  g_dbus_connection_close_sync (client, NULL, &error);
  g_assert_no_error (error);

  deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (count_leases (observer) != 0)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (10 * 1000);
    }

  for (guint i = 0; i < G_N_ELEMENTS (ports); i++)
    g_assert_cmpint (try_bind (AF_INET, FALSE, ports[i]), ==, 0);
}

/* ------------------------------------------------------------------------ */

static char *
lease_state (GDBusConnection *connection,
             guint16          port)
{
  g_autoptr(GVariant) lease = find_lease (connection, port);
  char *state = NULL;

  if (lease != NULL)
    g_variant_lookup (lease, "state", "s", &state);
  return state;
}

static void
wait_for_state (GDBusConnection *connection,
                guint16          port,
                const char      *wanted)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  for (;;)
    {
      g_autofree char *state = lease_state (connection, port);

      if (g_strcmp0 (state, wanted) == 0)
        return;
      if (g_get_monotonic_time () > deadline)
        g_error ("lease %u is “%s”, not “%s”, after 10 s", port, state, wanted);
      g_usleep (50 * 1000);
    }
}

static void
test_restart_keeps_leases (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *client = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GDBusConnection) leaver = paddock_test_daemon_new_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *state = NULL;
  guint16 kept[2];
  g_auto(Lease) in_use = { .fd = -1 };
  guint16 taken;
  guint16 orphan;
  int squatter;
  struct sockaddr_in addr = { .sin_family = AF_INET };
  g_autoptr(GSubprocess) replacement = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (kept); i++)
    {
      g_auto(Lease) lease = { .fd = -1 };

      g_assert_true (call_lease (client, "keep", 0, NULL, &lease, &error));
      kept[i] = lease.port;
    }

  {
    g_auto(Lease) lease = { .fd = -1 };
    g_assert_true (call_lease (client, "taken", 0, NULL, &lease, &error));
    taken = lease.port;
  }
  {
    g_auto(Lease) lease = { .fd = -1 };
    g_assert_true (call_lease (leaver, "orphan", 0, NULL, &lease, &error));
    orphan = lease.port;
  }
  /* This one's socket stays open here, as in a server started with
   * `paddockctl ports lease -- server` while the daemon restarts. */
  g_assert_true (call_lease (client, "serving", 0, NULL, &in_use, &error));

  /* A clean stop, then while no daemon runs: one client leaves and another
   * program takes one of the leased ports. */
  paddock_test_daemon_stop (daemon);
  g_dbus_connection_close_sync (leaver, NULL, NULL);

  squatter = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  addr.sin_port = htons (taken);
  addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  /* On a shared machine another program may have been quicker than our
   * squatter; the port is taken either way, but then it is not ours to
   * free again below. */
  if (bind (squatter, (struct sockaddr *) &addr, sizeof addr) != 0)
    {
      g_assert_cmpint (errno, ==, EADDRINUSE);
      g_test_message ("port %u was taken by another program before our squatter", taken);
      close (squatter);
      squatter = -1;
    }
  else
    g_assert_cmpint (listen (squatter, 1), ==, 0);

  paddock_test_daemon_start (daemon);

  for (guint i = 0; i < G_N_ELEMENTS (kept); i++)
    {
      g_autofree char *kept_state = lease_state (client, kept[i]);

      g_assert_cmpstr (kept_state, ==, "held");
      assert_port_unbindable (kept[i]);
    }

  /* The squatter's port is reported lost, and not handed to anyone. */
  state = lease_state (client, taken);
  g_assert_cmpstr (state, ==, "lost");
  g_assert_false (call_lease (client, "again", taken, NULL, NULL, &error));
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_PORT_IN_USE);
  g_clear_error (&error);

  /* The socket we kept open is recognised as the lease's own: in use by its
   * owner, not lost, and still nobody else's. */
  g_clear_pointer (&state, g_free);
  state = lease_state (client, in_use.port);
  g_assert_cmpstr (state, ==, "in-use");
  assert_port_unbindable (in_use.port);

  /* Once the squatter and our server let go, the daemon takes both back. */
  lease_clear (&in_use);
  wait_for_state (client, in_use.port, "held");
  assert_port_unbindable (in_use.port);
  if (squatter >= 0)
    {
      close (squatter);
      wait_for_state (client, taken, "held");
      assert_port_unbindable (taken);
    }

  /* The client that left while we were down has no leases any more. */
  g_assert_null (find_lease (client, orphan));

  /* Killed without warning: every lease was already on disk. */
  paddock_test_daemon_kill (daemon);
  paddock_test_daemon_start (daemon);
  for (guint i = 0; i < G_N_ELEMENTS (kept); i++)
    {
      g_autofree char *kept_state = lease_state (client, kept[i]);

      g_assert_cmpstr (kept_state, ==, "held");
      assert_port_unbindable (kept[i]);
    }

  /* --replace hands over without losing a lease to the old daemon's
   * still-open sockets. */
  replacement = paddock_test_daemon_spawn_replacement (daemon);
  paddock_test_daemon_adopt (daemon, replacement);
  for (guint i = 0; i < G_N_ELEMENTS (kept); i++)
    {
      g_autofree char *kept_state = NULL;
      gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

      /* The old owner may still be answering for a moment. */
      while ((kept_state = lease_state (client, kept[i])) == NULL ||
             !g_str_equal (kept_state, "held"))
        {
          g_clear_pointer (&kept_state, g_free);
          g_assert_cmpint (g_get_monotonic_time (), <, deadline);
          g_usleep (20 * 1000);
        }
      assert_port_unbindable (kept[i]);
    }
}

/* ------------------------------------------------------------------------ */

static void
assert_lease_error (GDBusConnection *connection,
                    const char      *name,
                    guint16          port,
                    GVariant        *options,
                    gint             code)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *remote = NULL;

  g_assert_false (call_lease (connection, name, port, options, NULL, &error));
  g_assert_error (error, PADDOCK_ERROR, code);
  remote = g_dbus_error_get_remote_error (error);
  g_assert_true (g_str_has_prefix (remote, "org.paddock.Error."));
}

static void
test_bad_input (void)
{
  guint16 first = 0;
  guint16 last = 0;
  g_autofree char *range = paddock_test_port_range_new (6, &first, &last);
  const char *args[] = { "--port-range", range, "--max-leases", "5",
                         "--max-leases-per-owner", "3", NULL };
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (args);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GDBusConnection) other = paddock_test_daemon_new_connection (daemon);
  g_autoptr(GError) error = NULL;
  g_autofree char *long_name = g_strnfill (65, 'a');
  g_autofree char *huge_name = g_strnfill (1 << 20, 'a');
  g_autofree char *max_name = g_strnfill (64, 'a');
  g_auto(Lease) mine = { .fd = -1 };
  g_auto(Lease) theirs = { .fd = -1 };
  g_autoptr(GVariant) reply = NULL;

  assert_lease_error (connection, "web", (guint16) (first - 1), NULL, PADDOCK_ERROR_INVALID_ARGUMENT);
  assert_lease_error (connection, "web", (guint16) (last + 1), NULL, PADDOCK_ERROR_INVALID_ARGUMENT);
  assert_lease_error (connection, "", 0, NULL, PADDOCK_ERROR_INVALID_ARGUMENT);
  assert_lease_error (connection, long_name, 0, NULL, PADDOCK_ERROR_INVALID_ARGUMENT);
  assert_lease_error (connection, huge_name, 0, NULL, PADDOCK_ERROR_INVALID_ARGUMENT);
  assert_lease_error (connection, "no spaces", 0, NULL, PADDOCK_ERROR_INVALID_ARGUMENT);
  assert_lease_error (connection, "naïve", 0, NULL, PADDOCK_ERROR_INVALID_ARGUMENT);
  assert_lease_error (connection, "web", 0,
                      g_variant_new_parsed ("{'sesion': <'typo'>}"), PADDOCK_ERROR_INVALID_ARGUMENT);
  assert_lease_error (connection, "web", 0,
                      g_variant_new_parsed ("{'session': <'no-such-session'>}"), PADDOCK_ERROR_NOT_FOUND);
  g_assert_cmpuint (count_leases (connection), ==, 0);

  g_assert_true (call_lease (connection, max_name, 0, NULL, &mine, &error));
  g_assert_no_error (error);

  /* Someone else's lease is theirs to release. */
  g_assert_true (call_lease (other, "theirs", 0, NULL, &theirs, &error));
  g_assert_false (call_release (connection, theirs.port, &error));
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_ACCESS_DENIED);
  g_clear_error (&error);
  g_assert_false (call_release (connection, (guint16) (last + 1), &error));
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* A preferred port that is already leased. */
  assert_lease_error (connection, "web", theirs.port, NULL, PADDOCK_ERROR_PORT_IN_USE);

  /* Per-owner quota (3), then the total (5) while the owner is below its
   * own quota. */
  {
    g_auto(Lease) a = { .fd = -1 };
    g_auto(Lease) b = { .fd = -1 };
    g_auto(Lease) c = { .fd = -1 };

    g_assert_true (call_lease (connection, "a", 0, NULL, &a, &error));
    g_assert_true (call_lease (connection, "b", 0, NULL, &b, &error));
    g_assert_no_error (error);
    assert_lease_error (connection, "c", 0, NULL, PADDOCK_ERROR_QUOTA_EXCEEDED);
    g_assert_true (call_lease (other, "c", 0, NULL, &c, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (count_leases (connection), ==, 5);
    assert_lease_error (other, "d", 0, NULL, PADDOCK_ERROR_QUOTA_EXCEEDED);
  }

  /* Garbage over raw D-Bus: wrong signature, unknown method, wrong
   * interface. GDBus answers these before our code; the daemon lives on. */
  reply = g_dbus_connection_call_sync (connection, "org.paddock.Daemon", "/org/paddock/Daemon",
                                       "org.paddock.Ports1", "Lease", g_variant_new ("(i)", 42),
                                       NULL, G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &error);
  g_assert_null (reply);
  g_assert_error (error, G_DBUS_ERROR, G_DBUS_ERROR_INVALID_ARGS);
  g_clear_error (&error);
  reply = g_dbus_connection_call_sync (connection, "org.paddock.Daemon", "/org/paddock/Daemon",
                                       "org.paddock.Ports1", "Release", g_variant_new ("(s)", "20001"),
                                       NULL, G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &error);
  g_assert_error (error, G_DBUS_ERROR, G_DBUS_ERROR_INVALID_ARGS);
  g_clear_error (&error);
  reply = g_dbus_connection_call_sync (connection, "org.paddock.Daemon", "/org/paddock/Daemon",
                                       "org.paddock.Ports1", "Steal", NULL,
                                       NULL, G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &error);
  g_assert_error (error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_METHOD);
  g_clear_error (&error);
  reply = g_dbus_connection_call_sync (connection, "org.paddock.Daemon", "/org/paddock/Nope",
                                       "org.paddock.Ports1", "ListLeases", NULL,
                                       NULL, G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &error);
  g_assert_nonnull (error);
  g_clear_error (&error);

  /* Still serving, registry intact. */
  g_assert_cmpuint (count_leases (connection), ==, 5);
  g_assert_true (paddock_test_daemon_is_running (daemon));
  g_assert_true (call_release (connection, mine.port, &error));
  g_assert_no_error (error);
}

/* ------------------------------------------------------------------------ */

/* Speak the wire protocol by hand, to send what no well-behaved library
 * would: a Lease whose name is not UTF-8, and bytes that are no message at
 * all. The bus drops such a client; the daemon must not notice. */
static GIOStream *
raw_bus_connect (PaddockTestDaemon *daemon)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GIOStream) stream = NULL;
  g_autofree char *uid = g_strdup_printf ("%u", (guint) getuid ());
  g_autoptr(GString) auth = g_string_new ("");
  GOutputStream *out;
  GInputStream *in;
  char reply[256] = "";
  gssize n;

  stream = g_dbus_address_get_stream_sync (paddock_test_daemon_get_address (daemon), NULL, NULL, &error);
  g_assert_no_error (error);
  out = g_io_stream_get_output_stream (stream);
  in = g_io_stream_get_input_stream (stream);

  g_string_append_c (auth, '\0');
  g_string_append (auth, "AUTH EXTERNAL ");
  for (const char *p = uid; *p != '\0'; p++)
    g_string_append_printf (auth, "%02x", (guint) (guchar) *p);
  g_string_append (auth, "\r\n");
  g_assert_true (g_output_stream_write_all (out, auth->str, auth->len, NULL, NULL, &error));
  n = g_input_stream_read (in, reply, sizeof reply - 1, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (n, >, 2);
  g_assert_true (g_str_has_prefix (reply, "OK "));
  g_assert_true (g_output_stream_write_all (out, "BEGIN\r\n", 7, NULL, NULL, &error));

  return g_steal_pointer (&stream);
}

static void
raw_send (GIOStream    *stream,
          GDBusMessage *message,
          const char   *marker,
          const char   *replacement)
{
  g_autoptr(GError) error = NULL;
  g_autofree guchar *blob = NULL;
  gsize size = 0;

  blob = g_dbus_message_to_blob (message, &size, G_DBUS_CAPABILITY_FLAGS_NONE, &error);
  g_assert_no_error (error);

  if (marker != NULL)
    {
      guchar *at = memmem (blob, size, marker, strlen (marker));

      g_assert_nonnull (at);
      g_assert_cmpuint (strlen (replacement), ==, strlen (marker));
      memcpy (at, replacement, strlen (replacement));
    }

  /* The bus may already have hung up on us; that is the expected outcome. */
  g_output_stream_write_all (g_io_stream_get_output_stream (stream), blob, size, NULL, NULL, NULL);
}

static void
drain_until_closed (GIOStream *stream)
{
  GInputStream *in = g_io_stream_get_input_stream (stream);
  GSocket *socket = g_socket_connection_get_socket (G_SOCKET_CONNECTION (stream));
  char buf[4096];

  g_socket_set_timeout (socket, 3);
  while (g_input_stream_read (in, buf, sizeof buf, NULL, NULL) > 0)
    ;
}

static void
test_raw_garbage (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GIOStream) first = raw_bus_connect (daemon);
  g_autoptr(GIOStream) second = raw_bus_connect (daemon);
  g_autoptr(GDBusMessage) hello = NULL;
  g_autoptr(GDBusMessage) lease = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(Lease) after = { .fd = -1 };
  static const char junk[] = "l\x01\x00\x01\xff\xff\xff\x7f garbage that is not a message";

  hello = g_dbus_message_new_method_call ("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                          "org.freedesktop.DBus", "Hello");
  g_dbus_message_set_serial (hello, 1);
  raw_send (first, hello, NULL, NULL);

  lease = g_dbus_message_new_method_call ("org.paddock.Daemon", "/org/paddock/Daemon",
                                          "org.paddock.Ports1", "Lease");
  g_dbus_message_set_serial (lease, 2);
  g_dbus_message_set_body (lease, g_variant_new ("(sq@a{sv})", "MARKERMARKER", 0,
                                                 g_variant_new ("a{sv}", NULL)));
  raw_send (first, lease, "MARKERMARKER", "\xff\xfe\xc0\x80nonutf\xed\xa0");
  drain_until_closed (first);

  g_output_stream_write_all (g_io_stream_get_output_stream (second), junk, sizeof junk,
                             NULL, NULL, NULL);
  drain_until_closed (second);

  /* Nothing was leased, and the daemon still serves. */
  g_assert_cmpuint (count_leases (connection), ==, 0);
  g_assert_true (paddock_test_daemon_is_running (daemon));
  g_assert_true (call_lease (connection, "after", 0, NULL, &after, &error));
  g_assert_no_error (error);
}

static void
test_pool_exhausted (void)
{
  g_autofree char *range = paddock_test_port_range_new (3, NULL, NULL);
  const char *args[] = { "--port-range", range, NULL };
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (args);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GPtrArray) held = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  guint leased = 0;

  /* Take the pool dry: ports other programs happen to use are skipped, so
   * count what we get rather than assume all three. */
  for (;;)
    {
      Lease lease = { .fd = -1 };

      if (!call_lease (connection, "x", 0, NULL, &lease, &error))
        break;
      leased++;
      lease_clear (&lease);
      g_assert_cmpuint (leased, <=, 3);
    }

  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_PORT_EXHAUSTED);
  g_assert_cmpuint (count_leases (connection), ==, leased);
}

static GVariant *
call_lease_many (GDBusConnection  *connection,
                 const char       *name,
                 guint             count,
                 GUnixFDList     **out_fd_list,
                 GError          **error)
{
  return paddock_test_lease_many (connection, name, count, out_fd_list, error);
}

/* LeaseMany: several held leases in one call, each as Lease gives one;
 * a count out of range or over the owner's quota leaves nothing. */
static void
test_lease_many (void)
{
  const char *args[] = { "--max-leases-per-owner", "6", NULL };
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (args);
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GHashTable) ports = g_hash_table_new (NULL, NULL);
  g_autoptr(GUnixFDList) fd_list = NULL;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) leases = NULL;
  g_autoptr(GVariant) handles = NULL;
  g_autoptr(GError) error = NULL;

  reply = call_lease_many (connection, "many", 5, &fd_list, &error);
  g_assert_no_error (error);
  g_variant_get (reply, "(@aa{sv}@ah)", &leases, &handles);
  g_assert_cmpuint (g_variant_n_children (leases), ==, 5);
  g_assert_cmpuint (g_variant_n_children (handles), ==, 5);

  for (gsize i = 0; i < 5; i++)
    {
      g_autoptr(GVariant) lease = g_variant_get_child_value (leases, i);
      g_autoptr(GVariant) listed = NULL;
      g_autofree char *owner = NULL;
      g_autofree char *name = NULL;
      struct sockaddr_in addr;
      socklen_t len = sizeof addr;
      int accepting = 0;
      socklen_t optlen = sizeof accepting;
      guint16 port = 0;
      gint32 handle = -1;
      int fd;

      g_variant_get_child (handles, i, "h", &handle);
      g_assert_true (g_variant_lookup (lease, "port", "q", &port));
      g_assert_true (g_variant_lookup (lease, "owner", "s", &owner));
      g_assert_cmpstr (owner, ==, g_dbus_connection_get_unique_name (connection));
      g_assert_false (g_hash_table_contains (ports, GUINT_TO_POINTER (port)));
      g_hash_table_add (ports, GUINT_TO_POINTER (port));

      /* Each socket is the daemon's, bound to its own port and listening. */
      fd = g_unix_fd_list_get (fd_list, handle, &error);
      g_assert_no_error (error);
      g_assert_cmpint (getsockname (fd, (struct sockaddr *) &addr, &len), ==, 0);
      g_assert_cmpint (ntohs (addr.sin_port), ==, port);
      g_assert_cmpint (getsockopt (fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &optlen), ==, 0);
      g_assert_cmpint (accepting, ==, 1);
      close (fd);
      assert_port_unbindable (port);

      listed = find_lease (connection, port);
      g_assert_nonnull (listed);
      g_assert_true (g_variant_lookup (listed, "name", "s", &name));
      g_assert_cmpstr (name, ==, "many");
    }
  g_assert_cmpuint (count_leases (connection), ==, 5);

  /* Out of range: refused, nothing leased. */
  g_clear_pointer (&reply, g_variant_unref);
  reply = call_lease_many (connection, "none", 0, NULL, &error);
  g_assert_null (reply);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  reply = call_lease_many (connection, "none", 17, NULL, &error);
  g_assert_null (reply);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* Two more would pass the owner's 6: neither is taken, not even the
   * first that fit. */
  reply = call_lease_many (connection, "over", 2, NULL, &error);
  g_assert_null (reply);
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_QUOTA_EXCEEDED);
  g_clear_error (&error);
  g_assert_cmpuint (count_leases (connection), ==, 5);
}

/* A new bus hands out the same unique names to other programs: the leases
 * of the old bus's clients must not survive on the strength of a name. */
static void
test_new_bus_forgets_clients (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new (NULL);
  g_autoptr(GError) error = NULL;
  g_auto(Lease) lease = { .fd = -1 };
  guint16 port;

  g_assert_true (call_lease (paddock_test_daemon_get_connection (daemon), "old", 0, NULL, &lease, &error));
  g_assert_no_error (error);
  port = lease.port;
  lease_clear (&lease);

  /* On the new bus the test's own connection is again the first client,
   * so it gets the very unique name that owned the lease: only the bus id
   * tells the daemon that this is not the same client. */
  paddock_test_daemon_restart_bus (daemon);

  g_assert_null (find_lease (paddock_test_daemon_get_connection (daemon), port));
  g_assert_cmpuint (count_leases (paddock_test_daemon_get_connection (daemon)), ==, 0);
}

/* Nothing runs until a client asks: the bus starts paddockd from its
 * .service file, and the first call is answered by the new daemon. */
static void
test_activation (void)
{
  g_autoptr(PaddockTestDaemon) daemon = paddock_test_daemon_new_activatable ();
  GDBusConnection *connection = paddock_test_daemon_get_connection (daemon);
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(Lease) lease = { .fd = -1 };
  gboolean running = TRUE;

  reply = g_dbus_connection_call_sync (connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "NameHasOwner",
                                       g_variant_new ("(s)", "org.paddock.Daemon"),
                                       G_VARIANT_TYPE ("(b)"), G_DBUS_CALL_FLAGS_NONE, 5000,
                                       NULL, &error);
  g_assert_no_error (error);
  g_variant_get (reply, "(b)", &running);
  g_assert_false (running);

  g_assert_true (call_lease (connection, "activated", 0, NULL, &lease, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (lease.port, >=, paddock_test_daemon_get_first_port (daemon));
  g_assert_cmpuint (lease.port, <=, paddock_test_daemon_get_last_port (daemon));
  assert_port_unbindable (lease.port);
}

int
main (int   argc,
      char *argv[])
{
  if (argc == 4 && g_str_equal (argv[1], "--worker"))
    return run_worker (argv[2], argv[3]);

  g_test_init (&argc, &argv, NULL);
  self_exe = g_file_read_link ("/proc/self/exe", NULL);
  (void) paddock_error_quark ();
  signal (SIGPIPE, SIG_IGN);

  g_test_add_func ("/ports/lease-gives-listening-socket", test_lease_gives_listening_socket);
  g_test_add_func ("/ports/concurrent-leases-are-distinct", test_concurrent_leases_are_distinct);
  g_test_add_func ("/ports/disconnect-releases", test_disconnect_releases);
  g_test_add_func ("/ports/restart-keeps-leases", test_restart_keeps_leases);
  g_test_add_func ("/ports/bad-input", test_bad_input);
  g_test_add_func ("/ports/pool-exhausted", test_pool_exhausted);
  g_test_add_func ("/ports/lease-many", test_lease_many);
  g_test_add_func ("/ports/raw-garbage", test_raw_garbage);
  g_test_add_func ("/ports/activation", test_activation);
  g_test_add_func ("/ports/new-bus-forgets-clients", test_new_bus_forgets_clients);

  return g_test_run ();
}
