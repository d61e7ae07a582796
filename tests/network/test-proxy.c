/* test-proxy.c — the session proxy: rules, tunnels, forwarding, refusals, limits, records
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Everything here stays on 127.0.0.1: the origins listen there, and the
 * proxy's resolver is overridden so that the test names map to it (names
 * missing from the override fail instead of reaching DNS).
 */

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "net-test-util.h"
#include "paddock-autofd.h"
#include "paddock-net-journal.h"
#include "paddock-proxy.h"

/* ---------------------------------------------------------------------- */
/* Helpers                                                                 */

static int
make_listen_socket (guint *out_port)
{
  paddock_autofd int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in addr = { 0 };
  socklen_t len = sizeof addr;

  g_assert_cmpint (fd, >=, 0);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  g_assert_no_errno (bind (fd, (struct sockaddr *) &addr, sizeof addr));
  g_assert_no_errno (listen (fd, 64));
  g_assert_no_errno (getsockname (fd, (struct sockaddr *) &addr, &len));
  *out_port = ntohs (addr.sin_port);
  return paddock_steal_fd (&fd);
}

/* Runs @func in a thread (blocking client code) while this thread runs
 * the main context that serves the proxy. */
typedef struct {
  GThreadFunc func;
  gpointer    data;
  gint        done;
} ThreadCall;

static gpointer
thread_trampoline (gpointer user_data)
{
  ThreadCall *call = user_data;
  gpointer result = call->func (call->data);

  g_atomic_int_set (&call->done, 1);
  g_main_context_wakeup (NULL);
  return result;
}

static gpointer
run_in_thread (GThreadFunc func,
               gpointer    data)
{
  ThreadCall call = { func, data, 0 };
  GThread *thread = g_thread_new ("test-client", thread_trampoline, &call);

  while (!g_atomic_int_get (&call.done))
    g_main_context_iteration (NULL, TRUE);
  return g_thread_join (thread);
}

static void
iterate_briefly (guint ms)
{
  gint64 end = g_get_monotonic_time () + ms * 1000;

  while (g_get_monotonic_time () < end)
    {
      while (g_main_context_iteration (NULL, FALSE))
        ;
      g_usleep (5000);
    }
}

/* Blocking client socket to 127.0.0.1:@port, with a 10 s I/O timeout so
 * that a hang fails the test instead of stalling it. */
static GSocket *
client_connect (guint port)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
                                            G_SOCKET_PROTOCOL_TCP, &error);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new_from_string ("127.0.0.1", port);

  g_assert_no_error (error);
  g_socket_set_timeout (socket, 10);
  g_socket_connect (socket, address, NULL, &error);
  g_assert_no_error (error);
  return g_steal_pointer (&socket);
}

static gboolean
client_send (GSocket    *socket,
             const char *data,
             gsize       len)
{
  while (len > 0)
    {
      gssize n = g_socket_send (socket, data, len, NULL, NULL);

      if (n <= 0)
        return FALSE;
      data += n;
      len -= (gsize) n;
    }
  return TRUE;
}

/* Everything until EOF (or reset, or the timeout). */
static GString *
client_read_all (GSocket *socket)
{
  GString *out = g_string_new (NULL);
  char buffer[4096];

  for (;;)
    {
      gssize n = g_socket_receive (socket, buffer, sizeof buffer, NULL, NULL);

      if (n <= 0)
        break;
      g_string_append_len (out, buffer, n);
    }
  return out;
}

/* One request through the proxy; returns the whole response. */
typedef struct {
  guint       port;
  const char *request;
  gsize       len;
} Exchange;

static gpointer
exchange_thread (gpointer user_data)
{
  Exchange *exchange = user_data;
  g_autoptr(GSocket) socket = client_connect (exchange->port);

  client_send (socket, exchange->request, exchange->len);
  if (exchange->len == 0)
    g_socket_shutdown (socket, FALSE, TRUE, NULL);
  return client_read_all (socket);
}

static char *
exchange_len (guint       port,
              const char *request,
              gsize       len)
{
  Exchange exchange = { port, request, len };
  GString *response = run_in_thread (exchange_thread, &exchange);

  return g_string_free (response, FALSE);
}

static char *
exchange (guint       port,
          const char *request)
{
  return exchange_len (port, request, strlen (request));
}

static void
assert_status (const char *response,
               guint       status)
{
  g_autofree char *prefix = g_strdup_printf ("HTTP/1.1 %u ", status);

  if (!g_str_has_prefix (response, prefix))
    g_error ("expected status %u, got: %.200s", status, response);
}

/* ---------------------------------------------------------------------- */
/* Origins: an HTTP server and an echo server on 127.0.0.1, each serving  */
/* connections in threads with blocking I/O.                               */

static GMutex origin_lock;
static GString *origin_last_head;

static gboolean
origin_run_cb (GThreadedSocketService *service,
               GSocketConnection      *connection,
               GObject                *source_object,
               gpointer                user_data)
{
  GSocket *socket = g_socket_connection_get_socket (connection);
  g_autoptr(GString) head = g_string_new (NULL);
  g_autoptr(GString) body = g_string_new (NULL);
  g_autoptr(GString) response = g_string_new (NULL);
  g_auto(GStrv) words = NULL;
  const char *cl;
  guint64 content_length = 0;
  char c;

  g_socket_set_blocking (socket, TRUE);
  g_socket_set_timeout (socket, 10);
  while (!g_str_has_suffix (head->str, "\r\n\r\n"))
    {
      if (g_socket_receive (socket, &c, 1, NULL, NULL) != 1)
        return TRUE;
      g_string_append_c (head, c);
    }

  cl = strstr (head->str, "Content-Length: ");
  if (cl != NULL)
    content_length = g_ascii_strtoull (cl + strlen ("Content-Length: "), NULL, 10);
  while (body->len < content_length)
    {
      if (g_socket_receive (socket, &c, 1, NULL, NULL) != 1)
        return TRUE;
      g_string_append_c (body, c);
    }

  g_mutex_lock (&origin_lock);
  g_string_assign (origin_last_head, head->str);
  g_mutex_unlock (&origin_lock);

  words = g_strsplit (head->str, " ", 3);
  {
    g_autofree char *text = g_strdup_printf ("hello %s%s%s", words[1],
                                             body->len ? " body=" : "", body->str);

    g_string_printf (response, "HTTP/1.1 200 OK\r\nContent-Length: %" G_GSIZE_FORMAT "\r\n"
                     "Connection: close\r\n\r\n%s", strlen (text), text);
  }
  g_socket_send (socket, response->str, response->len, NULL, NULL);
  g_socket_shutdown (socket, FALSE, TRUE, NULL);
  /* Wait for the proxy to close, so it never sees a reset. */
  while (g_socket_receive (socket, &c, 1, NULL, NULL) > 0)
    ;
  return TRUE;
}

static gboolean
echo_run_cb (GThreadedSocketService *service,
             GSocketConnection      *connection,
             GObject                *source_object,
             gpointer                user_data)
{
  GSocket *socket = g_socket_connection_get_socket (connection);
  char buffer[4096];

  g_socket_set_blocking (socket, TRUE);
  g_socket_set_timeout (socket, 10);
  for (;;)
    {
      gssize n = g_socket_receive (socket, buffer, sizeof buffer, NULL, NULL);

      if (n <= 0)
        break;
      g_socket_send (socket, buffer, (gsize) n, NULL, NULL);
    }
  g_socket_shutdown (socket, FALSE, TRUE, NULL);
  return TRUE;
}

static GSocketService *
start_origin (GCallback  run,
              guint     *out_port)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new_from_string ("127.0.0.1", 0);
  g_autoptr(GSocketAddress) effective = NULL;
  GSocketService *service = g_threaded_socket_service_new (8);

  g_socket_listener_add_address (G_SOCKET_LISTENER (service), address, G_SOCKET_TYPE_STREAM,
                                 G_SOCKET_PROTOCOL_TCP, NULL, &effective, &error);
  g_assert_no_error (error);
  *out_port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (effective));
  g_signal_connect (service, "run", run, NULL);
  g_socket_service_start (service);
  return service;
}

static void
stop_origin (GSocketService *service)
{
  g_socket_service_stop (service);
  g_socket_listener_close (G_SOCKET_LISTENER (service));
  g_object_unref (service);
}

/* ---------------------------------------------------------------------- */
/* Fixture: origins + a proxy allowing allowed.test, denying denied.test   */

typedef struct {
  guint               fds_before;
  GSocketService     *origin;
  guint               origin_port;
  GSocketService     *echo;
  guint               echo_port;
  PaddockProxy       *proxy;
  PaddockDomainRules *rules;
  guint               proxy_port;
  guint               n_added;
  GPtrArray          *records;    /* what the proxy emitted, in order */
} Fixture;

static void
record_added_cb (PaddockProxy     *proxy,
                 PaddockNetRecord *record,
                 Fixture          *fixture)
{
  g_assert_true (PADDOCK_IS_NET_RECORD (record));
  fixture->n_added++;
  g_ptr_array_add (fixture->records, g_object_ref (record));
}

static GHashTable *
test_resolver (void)
{
  GHashTable *table = g_hash_table_new (g_str_hash, g_str_equal);
  static const char * const names[] = {
    "allowed.test", "denied.test", "other.test",
    "a.wild.test", "wild.test", "bad.wild.test",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    g_hash_table_insert (table, (gpointer) names[i], (gpointer) "127.0.0.1");
  return table;
}

static PaddockProxy *
start_proxy (PaddockDomainRules *rules,
             guint              *out_port)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GHashTable) names = test_resolver ();
  int fd = make_listen_socket (out_port);
  PaddockProxy *proxy = paddock_proxy_new (fd, rules, &error);

  g_assert_no_error (error);
  paddock_proxy_set_resolver_override (proxy, names);
  return proxy;
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  fixture->fds_before = net_test_count_fds ();
  fixture->origin = start_origin (G_CALLBACK (origin_run_cb), &fixture->origin_port);
  fixture->echo = start_origin (G_CALLBACK (echo_run_cb), &fixture->echo_port);

  fixture->rules = paddock_domain_rules_new ();
  paddock_domain_rules_add_allow (fixture->rules, "allowed.test", &error);
  g_assert_no_error (error);
  paddock_domain_rules_add_allow (fixture->rules, "denied.test", &error);
  g_assert_no_error (error);
  paddock_domain_rules_add_deny (fixture->rules, "denied.test", &error);
  g_assert_no_error (error);
  paddock_domain_rules_add_port (fixture->rules, fixture->origin_port, &error);
  g_assert_no_error (error);
  paddock_domain_rules_add_port (fixture->rules, fixture->echo_port, &error);
  g_assert_no_error (error);

  fixture->records = g_ptr_array_new_with_free_func (g_object_unref);
  fixture->proxy = start_proxy (fixture->rules, &fixture->proxy_port);
  g_signal_connect (fixture->proxy, "record-added", G_CALLBACK (record_added_cb), fixture);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_clear_object (&fixture->proxy);
  g_clear_object (&fixture->rules);
  g_clear_pointer (&fixture->records, g_ptr_array_unref);
  stop_origin (fixture->origin);
  stop_origin (fixture->echo);

  /* Cancelled operations return on the next iterations; then every
   * socket must be closed again. */
  for (guint i = 0; i < 200 && net_test_count_fds () != fixture->fds_before; i++)
    iterate_briefly (10);
  if (net_test_count_fds () != fixture->fds_before)
    {
      g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
      const char *name;

      while ((name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *link = g_strconcat ("/proc/self/fd/", name, NULL);
          g_autofree char *target = g_file_read_link (link, NULL);

          g_test_message ("fd %s → %s", name, target);
        }
    }
  g_assert_cmpuint (net_test_count_fds (), ==, fixture->fds_before);
}

/* The newest record the proxy emitted (it keeps none itself). */
static PaddockNetRecord *
last_record (Fixture *fixture)
{
  g_assert_cmpuint (fixture->records->len, >, 0);
  return g_object_ref (g_ptr_array_index (fixture->records, fixture->records->len - 1));
}

/* ---------------------------------------------------------------------- */
/* Rules                                                                   */

static void
test_rules_normalize (void)
{
  static const struct {
    const char *in;
    const char *out;
    gboolean    is_ip;
  } cases[] = {
    { "Allowed.TEST.", "allowed.test", FALSE },
    { "bücher.example", "xn--bcher-kva.example", FALSE },
    { "127.0.0.1", "127.0.0.1", TRUE },
    { "127.1", "127.0.0.1", TRUE },
    { "2130706433", "127.0.0.1", TRUE },
    { "[::1]", "::1", TRUE },
    { "2001:DB8::0:1", "2001:db8::1", TRUE },
    { "a..b", NULL, FALSE },
    { "", NULL, FALSE },
    { "a/b", NULL, FALSE },
    { "a b", NULL, FALSE },
    { "x%00.test", NULL, FALSE },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      gboolean is_ip = FALSE;
      g_autofree char *out = paddock_domain_rules_normalize_host (cases[i].in, &is_ip, &error);

      g_test_message ("normalize %s", cases[i].in);
      g_assert_cmpstr (out, ==, cases[i].out);
      if (out != NULL)
        g_assert_cmpint (is_ip, ==, cases[i].is_ip);
      else
        g_assert_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_INVALID_HOST);
    }
}

static PaddockRuleVerdict
check (PaddockDomainRules *rules,
       const char         *host)
{
  return paddock_domain_rules_check_host (rules, host, NULL);
}

static void
test_rules_match (void)
{
  g_autoptr(PaddockDomainRules) rules = paddock_domain_rules_new ();
  g_autoptr(PaddockDomainRules) star = paddock_domain_rules_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *rule = NULL;

  /* Nothing listed: everything denied (an allow-list). */
  g_assert_cmpint (check (rules, "example.org"), ==, PADDOCK_RULE_VERDICT_DENY);

  g_assert_true (paddock_domain_rules_add_allow (rules, "*.wild.test", &error));
  g_assert_true (paddock_domain_rules_add_allow (rules, "Exact.Test.", &error));
  g_assert_true (paddock_domain_rules_add_deny (rules, "bad.wild.test", &error));
  g_assert_true (paddock_domain_rules_add_allow (rules, "bad.wild.test", &error));
  g_assert_true (paddock_domain_rules_add_allow (rules, "10.0.0.1", &error));
  g_assert_no_error (error);

  g_assert_cmpint (check (rules, "a.wild.test"), ==, PADDOCK_RULE_VERDICT_ALLOW);
  g_assert_cmpint (check (rules, "x.y.wild.test"), ==, PADDOCK_RULE_VERDICT_ALLOW);
  g_assert_cmpint (check (rules, "A.WILD.TEST."), ==, PADDOCK_RULE_VERDICT_ALLOW);
  g_assert_cmpint (check (rules, "wild.test"), ==, PADDOCK_RULE_VERDICT_DENY);
  g_assert_cmpint (check (rules, "notwild.test"), ==, PADDOCK_RULE_VERDICT_DENY);
  g_assert_cmpint (check (rules, "exact.test"), ==, PADDOCK_RULE_VERDICT_ALLOW);
  g_assert_cmpint (check (rules, "sub.exact.test"), ==, PADDOCK_RULE_VERDICT_DENY);
  g_assert_cmpint (check (rules, "a/b"), ==, PADDOCK_RULE_VERDICT_INVALID);

  /* Deny wins, whatever the order. */
  g_assert_cmpint (paddock_domain_rules_check_host (rules, "bad.wild.test", &rule), ==,
                   PADDOCK_RULE_VERDICT_DENY);
  g_assert_cmpstr (rule, ==, "deny bad.wild.test");

  /* IP literals: allowed only when listed literally, in any spelling. */
  g_assert_cmpint (check (rules, "10.0.0.1"), ==, PADDOCK_RULE_VERDICT_ALLOW);
  g_assert_cmpint (check (rules, "10.0.0.2"), ==, PADDOCK_RULE_VERDICT_DENY);
  g_assert_cmpint (check (rules, "10.1"), ==, PADDOCK_RULE_VERDICT_ALLOW);
  g_assert_cmpint (check (rules, "167772161"), ==, PADDOCK_RULE_VERDICT_ALLOW);

  g_assert_true (paddock_domain_rules_add_allow (star, "*", &error));
  g_assert_cmpint (check (star, "anything.example"), ==, PADDOCK_RULE_VERDICT_ALLOW);
  g_assert_cmpint (check (star, "127.0.0.1"), ==, PADDOCK_RULE_VERDICT_DENY);
  g_assert_cmpint (check (star, "2130706433"), ==, PADDOCK_RULE_VERDICT_DENY);
  g_assert_cmpint (check (star, "::1"), ==, PADDOCK_RULE_VERDICT_DENY);
  g_assert_true (paddock_domain_rules_add_allow (star, "::1", &error));
  g_assert_cmpint (check (star, "[::1]"), ==, PADDOCK_RULE_VERDICT_ALLOW);
  g_assert_true (paddock_domain_rules_add_deny (star, "*", &error));
  g_assert_cmpint (check (star, "::1"), ==, PADDOCK_RULE_VERDICT_DENY);
  g_assert_cmpint (check (star, "anything.example"), ==, PADDOCK_RULE_VERDICT_DENY);

  /* Ports: 80 and 443 unless told otherwise. */
  g_assert_true (paddock_domain_rules_port_allowed (rules, 80));
  g_assert_true (paddock_domain_rules_port_allowed (rules, 443));
  g_assert_false (paddock_domain_rules_port_allowed (rules, 22));
  g_assert_false (paddock_domain_rules_port_allowed (rules, 0));
  g_assert_true (paddock_domain_rules_add_port (rules, 8080, &error));
  g_assert_true (paddock_domain_rules_port_allowed (rules, 8080));
  g_assert_false (paddock_domain_rules_add_port (rules, 0, &error));
  g_assert_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (paddock_domain_rules_add_port (rules, 65536, &error));
  g_clear_error (&error);
  paddock_domain_rules_clear_ports (rules);
  g_assert_false (paddock_domain_rules_port_allowed (rules, 443));
}

static void
test_rules_limits (void)
{
  g_autoptr(PaddockDomainRules) rules = paddock_domain_rules_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *long_label = g_strnfill (64, 'a');
  g_autofree char *too_long = NULL;
  g_autofree char *longest = NULL;
  static const char * const invalid[] = {
    "", "*.", "*.*.x", "a.*.x", "*x.test", "*.10.0.0.1", "a..b", "a b", "x/y",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (invalid); i++)
    {
      g_test_message ("pattern “%s”", invalid[i]);
      g_assert_false (paddock_domain_rules_add_allow (rules, invalid[i], &error));
      g_assert_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_INVALID_PATTERN);
      g_clear_error (&error);
    }
  g_assert_false (paddock_domain_rules_add_deny (rules, "*.*.x", &error));
  g_assert_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_INVALID_PATTERN);
  g_clear_error (&error);

  /* A 64-byte label is not a DNS label. */
  g_assert_false (paddock_domain_rules_add_allow (rules, long_label, &error));
  g_assert_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_INVALID_PATTERN);
  g_clear_error (&error);

  /* 253 bytes is the longest name; 254 is refused by length. */
  {
    g_autofree char *a = g_strnfill (63, 'a');
    g_autofree char *b = g_strnfill (63, 'b');
    g_autofree char *c = g_strnfill (63, 'c');
    g_autofree char *d = g_strnfill (61, 'd');

    longest = g_strdup_printf ("%s.%s.%s.%s", a, b, c, d);
  }
  g_assert_cmpuint (strlen (longest), ==, 253);
  g_assert_true (paddock_domain_rules_add_allow (rules, longest, &error));
  g_assert_no_error (error);
  too_long = g_strconcat ("x", longest, NULL);
  g_assert_false (paddock_domain_rules_add_allow (rules, too_long, &error));
  g_assert_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_PATTERN_TOO_LONG);
  g_clear_error (&error);

  /* 256 patterns in all (allow + deny), then a typed error. */
  for (guint i = 1; i < PADDOCK_DOMAIN_RULES_MAX_PATTERNS; i++)
    {
      g_autofree char *name = g_strdup_printf ("host%u.test", i);

      g_assert_true ((i % 2 ? paddock_domain_rules_add_allow
                            : paddock_domain_rules_add_deny) (rules, name, &error));
      g_assert_no_error (error);
    }
  g_assert_false (paddock_domain_rules_add_deny (rules, "one-more.test", &error));
  g_assert_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_TOO_MANY_PATTERNS);
}

/* ---------------------------------------------------------------------- */
/* Forwarding and tunnels                                                  */

static void
test_get_allowed (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autofree char *request = g_strdup_printf (
    "GET http://allowed.test:%u/x?q=1 HTTP/1.1\r\n"
    "Host: allowed.test:%u\r\n"
    "Proxy-Authorization: Basic c2VjcmV0\r\n"
    "Proxy-Connection: keep-alive\r\n"
    "Connection: keep-alive, X-Hop\r\n"
    "X-Hop: gone\r\n"
    "X-Kept: yes\r\n"
    "\r\n", fixture->origin_port, fixture->origin_port);
  g_autofree char *response = exchange (fixture->proxy_port, request);
  g_autofree char *expected_host = g_strdup_printf ("Host: allowed.test:%u\r\n",
                                                    fixture->origin_port);
  g_autoptr(PaddockNetRecord) record = NULL;
  g_autofree char *head = NULL;

  assert_status (response, 200);
  g_assert_true (g_str_has_suffix (response, "\r\n\r\nhello /x?q=1"));

  g_mutex_lock (&origin_lock);
  head = g_strdup (origin_last_head->str);
  g_mutex_unlock (&origin_lock);
  g_assert_true (g_str_has_prefix (head, "GET /x?q=1 HTTP/1.1\r\n"));
  g_assert_nonnull (strstr (head, expected_host));
  g_assert_nonnull (strstr (head, "Via: 1.1 paddock\r\n"));
  /* HTTP/1.1 without a body: the origin connection may stay open. */
  g_assert_null (strstr (head, "Connection:"));
  g_assert_nonnull (strstr (head, "X-Kept: yes\r\n"));
  /* The client's connection ends with this response, whatever the origin said. */
  g_assert_nonnull (strstr (response, "\r\nConnection: close\r\n"));
  g_assert_null (strstr (head, "Proxy-"));
  g_assert_null (strstr (head, "X-Hop"));
  g_assert_null (strstr (head, "keep-alive"));

  record = last_record (fixture);
  g_assert_cmpstr (paddock_net_record_get_method (record), ==, "GET");
  g_assert_cmpstr (paddock_net_record_get_host (record), ==, "allowed.test");
  g_assert_cmpuint (paddock_net_record_get_port (record), ==, fixture->origin_port);
  g_assert_cmpint (paddock_net_record_get_verdict (record), ==, PADDOCK_NET_VERDICT_ALLOWED);
  g_assert_cmpuint (paddock_net_record_get_bytes_up (record), ==, strlen (head));
  g_assert_cmpuint (paddock_net_record_get_bytes_down (record), ==, strlen (response));
  g_assert_cmpint (paddock_net_record_get_time (record), >, 0);
  g_assert_cmpint (paddock_net_record_get_duration_ms (record), >=, 0);
  g_assert_cmpuint (fixture->n_added, ==, 1);
}

static void
test_post_body (Fixture       *fixture,
                gconstpointer  data)
{
  g_autofree char *request = g_strdup_printf (
    "POST http://ALLOWED.test.:%u/post HTTP/1.1\r\n"
    "Host: allowed.test\r\n"
    "Content-Length: 5\r\n"
    "\r\n"
    "abcdeGET /smuggled HTTP/1.1\r\n\r\n", fixture->origin_port);
  g_autofree char *response = exchange (fixture->proxy_port, request);

  assert_status (response, 200);
  /* Exactly the body went on; what followed it did not. */
  g_assert_true (g_str_has_suffix (response, "hello /post body=abcde"));
}

typedef struct {
  guint  port;
  guint  echo_port;
  char  *reply;
  char  *echoed;
} Tunnel;

static gpointer
tunnel_thread (gpointer user_data)
{
  Tunnel *tunnel = user_data;
  g_autoptr(GSocket) socket = client_connect (tunnel->port);
  g_autofree char *request = g_strdup_printf ("CONNECT allowed.test:%u HTTP/1.1\r\n"
                                              "Host: allowed.test:%u\r\n\r\nearly",
                                              tunnel->echo_port, tunnel->echo_port);
  g_autoptr(GString) reply = g_string_new (NULL);
  g_autoptr(GString) rest = NULL;
  char c;

  client_send (socket, request, strlen (request));
  while (!g_str_has_suffix (reply->str, "\r\n\r\n") &&
         g_socket_receive (socket, &c, 1, NULL, NULL) == 1)
    g_string_append_c (reply, c);
  client_send (socket, "+ping", 5);
  g_socket_shutdown (socket, FALSE, TRUE, NULL);
  rest = client_read_all (socket);

  tunnel->reply = g_strdup (reply->str);
  tunnel->echoed = g_strdup (rest->str);
  return NULL;
}

static void
test_connect_tunnel (Fixture       *fixture,
                     gconstpointer  data)
{
  Tunnel tunnel = { fixture->proxy_port, fixture->echo_port, NULL, NULL };
  g_autoptr(PaddockNetRecord) record = NULL;

  run_in_thread (tunnel_thread, &tunnel);
  assert_status (tunnel.reply, 200);
  g_assert_cmpstr (tunnel.echoed, ==, "early+ping");

  record = last_record (fixture);
  g_assert_cmpstr (paddock_net_record_get_method (record), ==, "CONNECT");
  g_assert_cmpstr (paddock_net_record_get_host (record), ==, "allowed.test");
  g_assert_cmpuint (paddock_net_record_get_port (record), ==, fixture->echo_port);
  g_assert_cmpint (paddock_net_record_get_verdict (record), ==, PADDOCK_NET_VERDICT_ALLOWED);
  g_assert_cmpuint (paddock_net_record_get_bytes_up (record), ==, 10);
  g_assert_cmpuint (paddock_net_record_get_bytes_down (record), ==, 10);
  g_assert_cmpstr (paddock_net_record_get_error (record), ==, "");

  g_free (tunnel.reply);
  g_free (tunnel.echoed);
}

/* ---------------------------------------------------------------------- */
/* Kept origin connections                                                 */

static gint keep_alive_accepted;

/* An origin that serves many requests on one connection, framed by
 * Content-Length or chunked, and on request drops the connection when the
 * next request comes (as an origin whose idle timeout just struck). */
static gboolean
keep_alive_run_cb (GThreadedSocketService *service,
                   GSocketConnection      *connection,
                   GObject                *source_object,
                   gpointer                user_data)
{
  GSocket *socket = g_socket_connection_get_socket (connection);
  gboolean drop_next = FALSE;

  g_atomic_int_inc (&keep_alive_accepted);
  g_socket_set_blocking (socket, TRUE);
  g_socket_set_timeout (socket, 10);
  for (;;)
    {
      g_autoptr(GString) head = g_string_new (NULL);
      const char *response;
      char c;

      while (!g_str_has_suffix (head->str, "\r\n\r\n"))
        {
          if (g_socket_receive (socket, &c, 1, NULL, NULL) != 1)
            return TRUE;
          g_string_append_c (head, c);
        }
      if (drop_next)
        return TRUE;

      if (g_str_has_prefix (head->str, "HEAD /len "))
        response = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
      else if (g_str_has_prefix (head->str, "GET /len "))
        response = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nKeep-Alive: timeout=5\r\n\r\nhello";
      else if (g_str_has_prefix (head->str, "GET /chunked "))
        response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                   "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n";
      else if (g_str_has_prefix (head->str, "GET /nocontent "))
        response = "HTTP/1.1 204 No Content\r\n\r\n";
      else
        {
          drop_next = TRUE;
          response = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlast";
        }
      g_socket_send (socket, response, strlen (response), NULL, NULL);
    }
}

static char *
keep_alive_request (Fixture    *fixture,
                    guint       port,
                    const char *method,
                    const char *path)
{
  g_autofree char *request = g_strdup_printf ("%s http://allowed.test:%u%s HTTP/1.1\r\n"
                                              "Host: allowed.test:%u\r\n\r\n",
                                              method, port, path, port);

  return exchange (fixture->proxy_port, request);
}

static void
assert_body (const char *response,
             const char *body)
{
  const char *end = strstr (response, "\r\n\r\n");

  g_assert_nonnull (end);
  g_assert_cmpstr (end + 4, ==, body);
}

static void
test_keep_alive (Fixture       *fixture,
                 gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockDomainRules) rules = paddock_proxy_dup_rules (fixture->proxy);
  GSocketService *origin;
  guint port;
  char *response;

  g_atomic_int_set (&keep_alive_accepted, 0);
  origin = start_origin (G_CALLBACK (keep_alive_run_cb), &port);
  g_assert_true (paddock_domain_rules_add_port (rules, port, &error));
  g_assert_no_error (error);

  response = keep_alive_request (fixture, port, "GET", "/len");
  assert_status (response, 200);
  assert_body (response, "hello");
  g_assert_nonnull (strstr (response, "\r\nConnection: close\r\n"));
  g_assert_null (strstr (response, "Keep-Alive"));
  g_free (response);

  /* Chunked, as it came (extension, trailer): the proxy found its end. */
  response = keep_alive_request (fixture, port, "GET", "/chunked");
  assert_status (response, 200);
  assert_body (response, "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n");
  g_free (response);

  /* No body, whatever Content-Length says. */
  response = keep_alive_request (fixture, port, "HEAD", "/len");
  assert_status (response, 200);
  assert_body (response, "");
  g_free (response);
  response = keep_alive_request (fixture, port, "GET", "/nocontent");
  assert_status (response, 204);
  g_free (response);

  /* All of them on one origin connection. */
  g_assert_cmpint (g_atomic_int_get (&keep_alive_accepted), ==, 1);

  /* The origin drops the kept connection when the next request comes:
   * the request goes again, on a new one, counted once. */
  response = keep_alive_request (fixture, port, "GET", "/last");
  assert_body (response, "last");
  g_free (response);
  response = keep_alive_request (fixture, port, "GET", "/len");
  assert_status (response, 200);
  assert_body (response, "hello");
  g_free (response);
  g_assert_cmpint (g_atomic_int_get (&keep_alive_accepted), ==, 2);
  {
    g_autoptr(PaddockNetRecord) record = last_record (fixture);
    g_autofree char *expected = g_strdup_printf ("GET /len HTTP/1.1\r\nHost: allowed.test:%u\r\n"
                                                 "Via: " "1.1 paddock\r\n\r\n", port);

    g_assert_cmpint (paddock_net_record_get_verdict (record), ==, PADDOCK_NET_VERDICT_ALLOWED);
    g_assert_cmpuint (paddock_net_record_get_bytes_up (record), ==, strlen (expected));
  }

  /* A new policy drops the kept connections: they were made under the old. */
  paddock_proxy_set_rules (fixture->proxy, rules);
  response = keep_alive_request (fixture, port, "GET", "/len");
  assert_body (response, "hello");
  g_free (response);
  g_assert_cmpint (g_atomic_int_get (&keep_alive_accepted), ==, 3);

  g_clear_object (&fixture->proxy);  /* closes the kept connection before the origin stops */
  stop_origin (origin);
}

/* ---------------------------------------------------------------------- */
/* Policy                                                                  */

static void
assert_forbidden (Fixture    *fixture,
                  const char *host,
                  guint       port,
                  const char *body_part)
{
  g_autofree char *request = g_strdup_printf ("GET http://%s:%u/ HTTP/1.1\r\nHost: %s\r\n\r\n",
                                              host, port, host);
  g_autofree char *response = exchange (fixture->proxy_port, request);
  g_autoptr(PaddockNetRecord) record = NULL;

  assert_status (response, 403);
  g_assert_nonnull (strstr (response, body_part));
  record = last_record (fixture);
  g_assert_cmpint (paddock_net_record_get_verdict (record), ==, PADDOCK_NET_VERDICT_DENIED);
  g_assert_cmpuint (paddock_net_record_get_bytes_up (record), ==, 0);
}

static void
assert_ok (Fixture    *fixture,
           const char *host)
{
  g_autofree char *request = g_strdup_printf ("GET http://%s:%u/ok HTTP/1.1\r\nHost: %s\r\n\r\n",
                                              host, fixture->origin_port, host);
  g_autofree char *response = exchange (fixture->proxy_port, request);

  assert_status (response, 200);
  g_assert_true (g_str_has_suffix (response, "hello /ok"));
}

static void
test_denied (Fixture       *fixture,
             gconstpointer  data)
{
  g_autoptr(PaddockNetRecord) record = NULL;
  g_autofree char *connect = g_strdup_printf ("CONNECT denied.test:%u HTTP/1.1\r\n\r\n",
                                              fixture->echo_port);
  g_autofree char *response = NULL;

  /* Listed in both: deny wins. */
  assert_forbidden (fixture, "denied.test", fixture->origin_port, "deny denied.test");
  record = last_record (fixture);
  g_assert_cmpstr (paddock_net_record_get_host (record), ==, "denied.test");
  g_assert_cmpstr (paddock_net_record_get_method (record), ==, "GET");
  g_assert_nonnull (strstr (paddock_net_record_get_error (record), "deny denied.test"));

  /* Not listed at all. */
  assert_forbidden (fixture, "other.test", fixture->origin_port, "no allow rule matches");
  /* An IP literal is not covered by a name. */
  assert_forbidden (fixture, "127.0.0.1", fixture->origin_port, "literally");

  response = exchange (fixture->proxy_port, connect);
  assert_status (response, 403);
  g_clear_object (&record);
  record = last_record (fixture);
  g_assert_cmpstr (paddock_net_record_get_method (record), ==, "CONNECT");
  g_assert_cmpint (paddock_net_record_get_verdict (record), ==, PADDOCK_NET_VERDICT_DENIED);
  g_assert_cmpuint (fixture->n_added, ==, 4);
}

static void
test_wildcard_and_runtime_rules (Fixture       *fixture,
                                 gconstpointer  data)
{
  g_autoptr(PaddockDomainRules) rules = paddock_domain_rules_new ();
  g_autoptr(PaddockDomainRules) none = paddock_domain_rules_new ();
  g_autoptr(GError) error = NULL;

  assert_ok (fixture, "allowed.test");

  g_assert_true (paddock_domain_rules_add_allow (rules, "*.wild.test", &error));
  g_assert_true (paddock_domain_rules_add_deny (rules, "bad.wild.test", &error));
  g_assert_true (paddock_domain_rules_add_port (rules, fixture->origin_port, &error));
  g_assert_no_error (error);
  paddock_proxy_set_rules (fixture->proxy, rules);

  assert_ok (fixture, "a.wild.test");
  assert_forbidden (fixture, "wild.test", fixture->origin_port, "no allow rule matches");
  assert_forbidden (fixture, "bad.wild.test", fixture->origin_port, "deny bad.wild.test");
  assert_forbidden (fixture, "allowed.test", fixture->origin_port, "no allow rule matches");

  /* Rules are referenced: a change to the proxy's rules object applies too. */
  g_assert_true (paddock_domain_rules_add_allow (rules, "allowed.test", &error));
  assert_ok (fixture, "allowed.test");

  /* The same host on a port the new rules do not list. */
  paddock_proxy_set_rules (fixture->proxy, none);
  g_assert_true (paddock_domain_rules_add_allow (none, "a.wild.test", &error));
  assert_forbidden (fixture, "a.wild.test", fixture->origin_port, "allowed ports");
}

/* A name that resolves to loopback is refused unless the address came
 * from an explicit source (literal listing, test override). */
static void
test_literal_loopback (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *request = g_strdup_printf ("GET http://127.0.0.1:%u/lit HTTP/1.1\r\n"
                                              "Host: 127.0.0.1\r\n\r\n", fixture->origin_port);
  g_autofree char *response = NULL;
  g_autofree char *unknown = g_strdup_printf ("GET http://unknown.test:%u/ HTTP/1.1\r\n"
                                              "Host: unknown.test\r\n\r\n",
                                              fixture->origin_port);
  g_autoptr(PaddockDomainRules) rules = paddock_proxy_dup_rules (fixture->proxy);

  g_assert_true (paddock_domain_rules_add_allow (rules, "127.0.0.1", &error));
  g_assert_true (paddock_domain_rules_add_allow (rules, "unknown.test", &error));
  g_assert_no_error (error);
  response = exchange (fixture->proxy_port, request);
  assert_status (response, 200);
  g_assert_true (g_str_has_suffix (response, "hello /lit"));

  /* Not in the resolver override: an error, never a DNS query. */
  g_free (response);
  response = exchange (fixture->proxy_port, unknown);
  assert_status (response, 502);
  {
    g_autoptr(PaddockNetRecord) record = last_record (fixture);

    g_assert_cmpint (paddock_net_record_get_verdict (record), ==, PADDOCK_NET_VERDICT_ERROR);
  }
}

/* With the real resolver: a name that resolves to loopback is refused
 * even when the policy allows the name — it would lead into the host's
 * own services. GLib answers "localhost" itself, without DNS. */
static void
test_name_to_loopback_refused (Fixture       *fixture,
                               gconstpointer  data)
{
  g_autoptr(PaddockDomainRules) rules = paddock_proxy_dup_rules (fixture->proxy);
  g_autoptr(PaddockNetRecord) record = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *request = g_strdup_printf ("GET http://localhost:%u/ HTTP/1.1\r\n"
                                              "Host: localhost\r\n\r\n", fixture->origin_port);
  g_autofree char *response = NULL;

  g_assert_true (paddock_domain_rules_add_allow (rules, "localhost", &error));
  g_assert_no_error (error);
  paddock_proxy_set_resolver_override (fixture->proxy, NULL);

  response = exchange (fixture->proxy_port, request);
  assert_status (response, 403);
  g_assert_nonnull (strstr (response, "loopback"));
  record = last_record (fixture);
  g_assert_cmpint (paddock_net_record_get_verdict (record), ==, PADDOCK_NET_VERDICT_DENIED);

  /* The name was looked up once; the second request, refused the same
   * way, used the kept answer (judged again, as every answer is). */
  g_free (response);
  response = exchange (fixture->proxy_port, request);
  assert_status (response, 403);
  g_assert_nonnull (strstr (response, "loopback"));
  g_assert_cmpuint (paddock_proxy_get_n_lookups (fixture->proxy), ==, 1);
}

/* ---------------------------------------------------------------------- */
/* Malformed input and limits                                              */

static void
assert_refused (Fixture    *fixture,
                const char *request,
                gsize       len,
                guint       status)
{
  g_autofree char *response = exchange_len (fixture->proxy_port, request, len);
  g_autoptr(PaddockNetRecord) record = NULL;

  assert_status (response, status);
  record = last_record (fixture);
  g_assert_cmpint (paddock_net_record_get_verdict (record), !=, PADDOCK_NET_VERDICT_ALLOWED);
}

/* A literal request, NULs and all. */
#define REFUSE(fixture, literal, status) \
  assert_refused (fixture, literal, sizeof literal - 1, status)

static void
test_malformed (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GString) huge = g_string_new ("GET http://allowed.test/ HTTP/1.1\r\n"
                                          "Host: allowed.test\r\nX-Big: ");
  g_autoptr(GString) many = g_string_new ("GET http://allowed.test/ HTTP/1.1\r\n"
                                          "Host: allowed.test\r\n");
  g_autofree char *missing_host = g_strdup_printf ("GET http://allowed.test:%u/ HTTP/1.1\r\n\r\n",
                                                   fixture->origin_port);
  g_autofree char *both = g_strdup_printf ("POST http://allowed.test:%u/ HTTP/1.1\r\n"
                                           "Host: a\r\nContent-Length: 1\r\n"
                                           "Transfer-Encoding: chunked\r\n\r\n",
                                           fixture->origin_port);
  static const char nul_request[] = "GET http://allowed.test/ HTTP/1.1\r\nHost: a\0b\r\n\r\n";
  g_autofree char *response = NULL;

  REFUSE (fixture, "\x01\x02 garbage \xff\r\n\r\n", 400);
  REFUSE (fixture, "GET\r\n\r\n", 400);
  REFUSE (fixture, "GET /x HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400);
  REFUSE (fixture, "OPTIONS * HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400);
  assert_refused (fixture, missing_host, strlen (missing_host), 400);
  assert_refused (fixture, both, strlen (both), 400);
  REFUSE (fixture, nul_request, 400);
  REFUSE (fixture, "GET https://allowed.test/ HTTP/1.1\r\nHost: a\r\n\r\n", 400);
  REFUSE (fixture, "CONNECT allowed.test HTTP/1.1\r\n\r\n", 400);
  REFUSE (fixture, "CONNECT allowed.test:99999 HTTP/1.1\r\n\r\n", 400);
  /* An allowed name on a port the policy does not list: refused by
   * policy, and the record says which target and why. */
  REFUSE (fixture, "CONNECT allowed.test:25 HTTP/1.1\r\n\r\n", 403);
  {
    g_autoptr(PaddockNetRecord) record = last_record (fixture);

    g_assert_cmpstr (paddock_net_record_get_method (record), ==, "CONNECT");
    g_assert_cmpstr (paddock_net_record_get_host (record), ==, "allowed.test");
    g_assert_cmpuint (paddock_net_record_get_port (record), ==, 25);
    g_assert_cmpint (paddock_net_record_get_verdict (record), ==, PADDOCK_NET_VERDICT_DENIED);
    g_assert_nonnull (strstr (paddock_net_record_get_error (record), "allowed ports"));
  }
  REFUSE (fixture, "CONNECT bad_host!:443 HTTP/1.1\r\n\r\n", 400);
  REFUSE (fixture, "GET http://allowed.test:81/ HTTP/1.1\r\nHost: a\r\n\r\n", 403);

  /* 40 KiB of header. */
  for (guint i = 0; i < 40 * 1024; i++)
    g_string_append_c (huge, 'a');
  g_string_append (huge, "\r\n\r\n");
  assert_refused (fixture, huge->str, huge->len, 431);

  /* 32 KiB and no end of header at all. */
  g_string_truncate (huge, 33 * 1024);
  assert_refused (fixture, huge->str, huge->len, 431);

  /* 200 header fields. */
  for (guint i = 0; i < 200; i++)
    g_string_append_printf (many, "X-Field-%u: %u\r\n", i, i);
  g_string_append (many, "\r\n");
  assert_refused (fixture, many->str, many->len, 431);

  /* A client that connects and leaves without a byte is not a request. */
  response = exchange (fixture->proxy_port, "");
  g_assert_cmpstr (response, ==, "");
}

typedef struct {
  guint   port;
  char   *response;
  gint    done;
} Slow;

static gpointer
slow_thread (gpointer user_data)
{
  Slow *slow = user_data;
  g_autoptr(GSocket) socket = client_connect (slow->port);
  static const char request[] = "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n";
  g_autoptr(GString) response = NULL;

  for (gsize i = 0; i < sizeof request - 1; i++)
    {
      if (g_socket_condition_check (socket, G_IO_IN | G_IO_HUP) != 0)
        break;
      if (g_socket_send (socket, request + i, 1, NULL, NULL) != 1)
        break;
      g_usleep (100 * 1000);
    }
  response = client_read_all (socket);
  slow->response = g_string_free (g_steal_pointer (&response), FALSE);
  return NULL;
}

static gpointer
slow_trampoline (gpointer user_data)
{
  Slow *slow = user_data;

  slow_thread (slow);
  g_atomic_int_set (&slow->done, 1);
  g_main_context_wakeup (NULL);
  return NULL;
}

static void
test_slowloris (Fixture       *fixture,
                gconstpointer  data)
{
  Slow slow = { fixture->proxy_port, NULL, 0 };
  g_autoptr(PaddockNetRecord) record = NULL;
  GThread *thread;

  /* Shorter than the ~6 s the whole head takes to dribble in, long
   * enough for the request in between on a loaded machine. */
  paddock_proxy_set_header_timeout (fixture->proxy, 3000);
  thread = g_thread_new ("slowloris", slow_trampoline, &slow);

  /* While the slow client dribbles its head, others are served. */
  while (paddock_proxy_get_n_connections (fixture->proxy) == 0)
    g_main_context_iteration (NULL, TRUE);
  assert_ok (fixture, "allowed.test");
  g_assert_cmpint (g_atomic_int_get (&slow.done), ==, 0);
  g_assert_cmpuint (paddock_proxy_get_n_connections (fixture->proxy), ==, 1);

  while (!g_atomic_int_get (&slow.done))
    g_main_context_iteration (NULL, TRUE);
  g_thread_join (thread);
  assert_status (slow.response, 408);
  record = last_record (fixture);
  g_assert_cmpint (paddock_net_record_get_verdict (record), ==, PADDOCK_NET_VERDICT_ERROR);
  g_free (slow.response);
}

typedef struct {
  guint  port;
  char  *third;
} Busy;

static gpointer
busy_thread (gpointer user_data)
{
  Busy *busy = user_data;
  g_autoptr(GSocket) a = client_connect (busy->port);
  g_autoptr(GSocket) b = client_connect (busy->port);
  g_autoptr(GSocket) c = NULL;
  g_autoptr(GString) response = NULL;

  client_send (a, "GET", 3);
  client_send (b, "GET", 3);
  c = client_connect (busy->port);
  response = client_read_all (c);
  busy->third = g_string_free (g_steal_pointer (&response), FALSE);
  return NULL;
}

static void
test_connection_limit (Fixture       *fixture,
                       gconstpointer  data)
{
  Busy busy = { fixture->proxy_port, NULL };

  paddock_proxy_set_max_connections (fixture->proxy, 2);
  run_in_thread (busy_thread, &busy);
  assert_status (busy.third, 503);
  g_assert_nonnull (strstr (busy.third, "too many connections"));
  g_free (busy.third);
  /* Its record (the two held ones may end before or after it). */
  {
    guint busy_records = 0;

    for (guint i = 0; i < fixture->records->len; i++)
      {
        PaddockNetRecord *record = g_ptr_array_index (fixture->records, i);

        if (g_strcmp0 (paddock_net_record_get_error (record), "too many connections") == 0)
          {
            g_assert_cmpint (paddock_net_record_get_verdict (record), ==, PADDOCK_NET_VERDICT_ERROR);
            busy_records++;
          }
      }
    g_assert_cmpuint (busy_records, ==, 1);
  }

  /* The two idle ones went away with the client; the proxy notices. */
  for (guint i = 0; i < 200 && paddock_proxy_get_n_connections (fixture->proxy) > 0; i++)
    iterate_briefly (10);
  g_assert_cmpuint (paddock_proxy_get_n_connections (fixture->proxy), ==, 0);
  assert_ok (fixture, "allowed.test");
}

/* Stopping the proxy ends an open tunnel and completes its record. */
typedef struct {
  guint         port;
  guint         echo_port;
  PaddockProxy *proxy;
  gint          opened;
  char         *rest;
} Held;

static gpointer
held_thread (gpointer user_data)
{
  Held *held = user_data;
  g_autoptr(GSocket) socket = client_connect (held->port);
  g_autofree char *request = g_strdup_printf ("CONNECT allowed.test:%u HTTP/1.1\r\n\r\n",
                                              held->echo_port);
  g_autoptr(GString) rest = NULL;

  client_send (socket, request, strlen (request));
  client_send (socket, "x", 1);
  g_atomic_int_set (&held->opened, 1);
  rest = client_read_all (socket);
  held->rest = g_string_free (g_steal_pointer (&rest), FALSE);
  return NULL;
}

static gboolean
stop_when_open_cb (gpointer user_data)
{
  Held *held = user_data;

  if (!g_atomic_int_get (&held->opened))
    return G_SOURCE_CONTINUE;
  iterate_briefly (100);
  paddock_proxy_stop (held->proxy);
  return G_SOURCE_REMOVE;
}

static void
test_stop_ends_tunnels (Fixture       *fixture,
                        gconstpointer  data)
{
  Held held = { fixture->proxy_port, fixture->echo_port, fixture->proxy, 0, NULL };
  g_autoptr(PaddockNetRecord) record = NULL;

  g_timeout_add (20, stop_when_open_cb, &held);
  run_in_thread (held_thread, &held);
  g_assert_true (g_str_has_prefix (held.rest, "HTTP/1.1 200 Connection established\r\n"));
  g_assert_true (g_str_has_suffix (held.rest, "\r\n\r\nx"));
  g_free (held.rest);

  record = last_record (fixture);
  g_assert_cmpstr (paddock_net_record_get_method (record), ==, "CONNECT");
  g_assert_cmpint (paddock_net_record_get_verdict (record), ==, PADDOCK_NET_VERDICT_ALLOWED);
  g_assert_cmpstr (paddock_net_record_get_error (record), ==, "the proxy stopped");
  g_assert_cmpuint (paddock_net_record_get_bytes_down (record), ==, 1);
  g_assert_cmpuint (paddock_proxy_get_n_connections (fixture->proxy), ==, 0);
}

/* ---------------------------------------------------------------------- */
/* Records                                                                 */

/* Each request is emitted once, finished; the journal the daemon feeds
 * them to keeps every field across a restart. */
static void
test_records_emitted_and_journalled (Fixture       *fixture,
                                     gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("paddock-net-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "network.jsonl", NULL);
  g_autoptr(PaddockNetJournal) journal = NULL;
  g_autoptr(GPtrArray) loaded = NULL;
  guint64 next = 0;

  g_assert_no_error (error);
  assert_ok (fixture, "allowed.test");
  for (guint i = 0; i < 4; i++)
    assert_forbidden (fixture, "denied.test", fixture->origin_port, "deny");
  g_assert_cmpuint (fixture->n_added, ==, 5);
  g_assert_cmpint (paddock_net_record_get_verdict (g_ptr_array_index (fixture->records, 0)), ==,
                   PADDOCK_NET_VERDICT_ALLOWED);
  g_assert_cmpuint (paddock_net_record_get_bytes_down (g_ptr_array_index (fixture->records, 0)), >, 0);

  journal = paddock_net_journal_new (path, 100, 1024 * 1024);
  for (guint i = 0; i < fixture->records->len; i++)
    paddock_net_journal_append (journal, g_ptr_array_index (fixture->records, i));
  paddock_net_journal_flush (journal);
  g_assert_cmpuint (paddock_net_journal_get_durable_seq (journal), ==, 5);
  g_clear_object (&journal);

  journal = paddock_net_journal_new (path, 100, 1024 * 1024);
  loaded = paddock_net_journal_list (journal, 0, 100, &next);
  g_assert_cmpuint (loaded->len, ==, fixture->records->len);
  g_assert_cmpuint (next, ==, 5);
  for (guint i = 0; i < loaded->len; i++)
    {
      PaddockNetRecord *a = g_ptr_array_index (fixture->records, i);
      PaddockNetRecord *b = g_ptr_array_index (loaded, i);

      g_assert_cmpuint (paddock_net_record_get_seq (b), ==, i + 1);
      g_assert_cmpint (paddock_net_record_get_time (a), ==, paddock_net_record_get_time (b));
      g_assert_cmpstr (paddock_net_record_get_method (a), ==, paddock_net_record_get_method (b));
      g_assert_cmpstr (paddock_net_record_get_host (a), ==, paddock_net_record_get_host (b));
      g_assert_cmpuint (paddock_net_record_get_port (a), ==, paddock_net_record_get_port (b));
      g_assert_cmpint (paddock_net_record_get_verdict (a), ==,
                       paddock_net_record_get_verdict (b));
      g_assert_cmpuint (paddock_net_record_get_bytes_up (a), ==,
                        paddock_net_record_get_bytes_up (b));
      g_assert_cmpuint (paddock_net_record_get_bytes_down (a), ==,
                        paddock_net_record_get_bytes_down (b));
      g_assert_cmpint (paddock_net_record_get_duration_ms (a), ==,
                       paddock_net_record_get_duration_ms (b));
      g_assert_cmpstr (paddock_net_record_get_error (a), ==, paddock_net_record_get_error (b));
    }

  g_clear_object (&journal);
  g_unlink (path);
  g_rmdir (dir);
}

static void
test_new_rejects_bad_fd (void)
{
  g_autoptr(PaddockDomainRules) rules = paddock_domain_rules_new ();
  g_autoptr(GError) error = NULL;
  guint fds = net_test_count_fds ();
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  PaddockProxy *proxy;

  /* Not listening: refused, and the fd is closed all the same. */
  proxy = paddock_proxy_new (fd, rules, &error);
  g_assert_null (proxy);
  g_assert_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_INVALID_ARGUMENT);
  g_assert_cmpuint (net_test_count_fds (), ==, fds);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  origin_last_head = g_string_new (NULL);

  /* GLib opens a few fds once per process (the main context's and its
   * worker thread's wakeup eventfds) the first time they are needed: let
   * one full exchange open them before any test counts fds. */
  {
    Fixture warm_up = { 0 };
    g_autofree char *response = NULL;

    fixture_set_up (&warm_up, NULL);
    response = exchange (warm_up.proxy_port, "GET / HTTP/1.1\r\n\r\n");
    warm_up.fds_before = 0;
    g_clear_object (&warm_up.proxy);
    g_clear_object (&warm_up.rules);
    g_clear_pointer (&warm_up.records, g_ptr_array_unref);
    stop_origin (warm_up.origin);
    stop_origin (warm_up.echo);
    iterate_briefly (50);
  }

  g_test_add_func ("/network/rules/normalize", test_rules_normalize);
  g_test_add_func ("/network/rules/match", test_rules_match);
  g_test_add_func ("/network/rules/limits", test_rules_limits);
  g_test_add_func ("/network/proxy/bad-fd", test_new_rejects_bad_fd);

#define ADD(path, func) \
  g_test_add ("/network/proxy/" path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("get-allowed", test_get_allowed);
  ADD ("post-body", test_post_body);
  ADD ("connect-tunnel", test_connect_tunnel);
  ADD ("keep-alive", test_keep_alive);
  ADD ("denied", test_denied);
  ADD ("wildcard-and-runtime-rules", test_wildcard_and_runtime_rules);
  ADD ("literal-loopback", test_literal_loopback);
  ADD ("name-to-loopback-refused", test_name_to_loopback_refused);
  ADD ("malformed", test_malformed);
  ADD ("slowloris", test_slowloris);
  ADD ("connection-limit", test_connection_limit);
  ADD ("stop-ends-tunnels", test_stop_ends_tunnels);
  ADD ("records", test_records_emitted_and_journalled);
#undef ADD

  {
    int ret = g_test_run ();

    g_string_free (origin_last_head, TRUE);
    return ret;
  }
}
