/* test-proxy-ports.c — the proxy reaching any allowed host:port, through CONNECT and SOCKS5
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * An echo server on 127.0.0.1 stands for a non-HTTP service (ssh, a
 * database) on a port that is not 80 or 443; the proxy's rules allow it
 * only as "git.test:PORT". Everything stays on loopback, with the proxy's
 * resolver overridden (names missing from it fail instead of reaching DNS).
 */

#include "config.h"

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "net-test-util.h"
#include "paddock-autofd.h"
#include "paddock-proxy.h"
#include "paddock-socks5.h"

typedef struct {
  guint               fds_before;
  guint               echo_port;
  PaddockProxy       *proxy;
  PaddockDomainRules *rules;
  guint               proxy_port;
  GPtrArray          *records;    /* what the proxy emitted, in order */
} Fixture;

static GSocketService *echo;
static guint echo_port;

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
  /* Speaks first, as an ssh server does. */
  g_socket_send (socket, "SSH-2.0-echo\r\n", 14, NULL, NULL);
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

static void
record_added_cb (PaddockProxy     *proxy,
                 PaddockNetRecord *record,
                 Fixture          *fixture)
{
  g_ptr_array_add (fixture->records, g_object_ref (record));
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new_from_string ("127.0.0.1", 0);
  g_autoptr(GSocketAddress) effective = NULL;
  g_autoptr(GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree char *git_rule = NULL;
  g_autofree char *literal_rule = NULL;
  paddock_autofd int fd = -1;
  struct sockaddr_in addr = { 0 };
  socklen_t len = sizeof addr;

  fixture->fds_before = net_test_count_fds ();
  /* One echo server for all the tests (its service's threads let go of
   * their fds in their own time, which a per-test count cannot follow). */
  if (echo == NULL)
    {
      echo = g_threaded_socket_service_new (8);
      g_socket_listener_add_address (G_SOCKET_LISTENER (echo), address, G_SOCKET_TYPE_STREAM,
                                     G_SOCKET_PROTOCOL_TCP, NULL, &effective, &error);
      g_assert_no_error (error);
      echo_port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (effective));
      g_signal_connect (echo, "run", G_CALLBACK (echo_run_cb), NULL);
      g_socket_service_start (echo);
    }
  fixture->echo_port = echo_port;

  /* allowed.test on the default ports only; git.test and 127.0.0.1 on
   * the echo server's port only; denied.test never. */
  fixture->rules = paddock_domain_rules_new ();
  git_rule = g_strdup_printf ("git.test:%u", fixture->echo_port);
  literal_rule = g_strdup_printf ("127.0.0.1:%u", fixture->echo_port);
  g_assert_true (paddock_domain_rules_add_allow (fixture->rules, "allowed.test", &error));
  g_assert_true (paddock_domain_rules_add_allow (fixture->rules, git_rule, &error));
  g_assert_true (paddock_domain_rules_add_allow (fixture->rules, literal_rule, &error));
  g_assert_true (paddock_domain_rules_add_allow (fixture->rules, "denied.test", &error));
  g_assert_true (paddock_domain_rules_add_deny (fixture->rules, "denied.test", &error));
  g_assert_no_error (error);

  fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (fd, >=, 0);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  g_assert_no_errno (bind (fd, (struct sockaddr *) &addr, sizeof addr));
  g_assert_no_errno (listen (fd, 64));
  g_assert_no_errno (getsockname (fd, (struct sockaddr *) &addr, &len));
  fixture->proxy_port = ntohs (addr.sin_port);
  fixture->proxy = paddock_proxy_new (paddock_steal_fd (&fd), fixture->rules, &error);
  g_assert_no_error (error);
  g_hash_table_insert (names, (gpointer) "allowed.test", (gpointer) "127.0.0.1");
  g_hash_table_insert (names, (gpointer) "git.test", (gpointer) "127.0.0.1");
  g_hash_table_insert (names, (gpointer) "denied.test", (gpointer) "127.0.0.1");
  paddock_proxy_set_resolver_override (fixture->proxy, names);
  fixture->records = g_ptr_array_new_with_free_func (g_object_unref);
  g_signal_connect (fixture->proxy, "record-added", G_CALLBACK (record_added_cb), fixture);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_clear_object (&fixture->proxy);
  g_clear_object (&fixture->rules);
  g_clear_pointer (&fixture->records, g_ptr_array_unref);

  for (guint i = 0; i < 200 && fixture->fds_before != G_MAXUINT &&
                   net_test_count_fds () != fixture->fds_before; i++)
    {
      while (g_main_context_iteration (NULL, FALSE))
        ;
      g_usleep (10000);
    }
  if (fixture->fds_before != G_MAXUINT)
    g_assert_cmpuint (net_test_count_fds (), ==, fixture->fds_before);
}

/* ---------------------------------------------------------------------- */
/* A blocking client in a thread, while this thread serves the proxy       */

typedef struct {
  guint       port;
  GBytes     *first;      /* sent at once */
  GBytes     *second;     /* sent after the first answer's @first_answer bytes */
  gsize       first_answer;
  gsize       second_answer;
  const char *payload;    /* sent once both answers came, then read back */
  /* results */
  GByteArray *answer;     /* every byte the proxy or the origin sent */
  gint        done;
} Client;

static gboolean
read_exactly (GSocket    *socket,
              GByteArray *into,
              gsize       n)
{
  while (n > 0)
    {
      guint8 buffer[512];
      gssize got = g_socket_receive (socket, (char *) buffer, MIN (n, sizeof buffer), NULL, NULL);

      if (got <= 0)
        return FALSE;
      g_byte_array_append (into, buffer, (guint) got);
      n -= (gsize) got;
    }
  return TRUE;
}

static gpointer
client_thread (gpointer user_data)
{
  Client *client = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
                                            G_SOCKET_PROTOCOL_TCP, &error);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new_from_string ("127.0.0.1",
                                                                             client->port);

  g_socket_set_timeout (socket, 10);
  if (g_socket_connect (socket, address, NULL, NULL))
    {
      gsize len;
      const char *data = g_bytes_get_data (client->first, &len);

      g_socket_send (socket, data, len, NULL, NULL);
      if (read_exactly (socket, client->answer, client->first_answer) && client->second != NULL)
        {
          data = g_bytes_get_data (client->second, &len);
          g_socket_send (socket, data, len, NULL, NULL);
          read_exactly (socket, client->answer, client->second_answer);
        }
      if (client->payload != NULL)
        {
          g_socket_send (socket, client->payload, strlen (client->payload), NULL, NULL);
          g_socket_shutdown (socket, FALSE, TRUE, NULL);
        }
      /* Whatever else comes, until the end. */
      for (;;)
        {
          guint8 buffer[512];
          gssize got = g_socket_receive (socket, (char *) buffer, sizeof buffer, NULL, NULL);

          if (got <= 0)
            break;
          g_byte_array_append (client->answer, buffer, (guint) got);
        }
    }
  g_atomic_int_set (&client->done, 1);
  g_main_context_wakeup (NULL);
  return NULL;
}

static GByteArray *
run_client (Client *client)
{
  GThread *thread;

  client->answer = g_byte_array_new ();
  thread = g_thread_new ("test-client", client_thread, client);
  while (!g_atomic_int_get (&client->done))
    g_main_context_iteration (NULL, TRUE);
  g_thread_join (thread);
  /* The records of what just ended. */
  for (guint i = 0; i < 20; i++)
    {
      while (g_main_context_iteration (NULL, FALSE))
        ;
      g_usleep (5000);
    }
  g_clear_pointer (&client->first, g_bytes_unref);
  g_clear_pointer (&client->second, g_bytes_unref);
  return client->answer;
}

static char *
answer_text (GByteArray *answer,
             gsize       from)
{
  if (answer->len <= from)
    return g_strdup ("");
  return g_strndup ((const char *) answer->data + from, answer->len - from);
}

/* The one record the proxy emitted. */
static PaddockNetRecord *
only_record (Fixture *fixture)
{
  g_assert_cmpuint (fixture->records->len, ==, 1);
  return g_ptr_array_index (fixture->records, 0);
}

static void
assert_record (PaddockNetRecord  *record,
               const char        *method,
               const char        *host,
               guint              port,
               PaddockNetVerdict  verdict,
               const char        *error_part)
{
  g_assert_cmpstr (paddock_net_record_get_method (record), ==, method);
  g_assert_cmpstr (paddock_net_record_get_host (record), ==, host);
  g_assert_cmpuint (paddock_net_record_get_port (record), ==, port);
  g_assert_cmpint (paddock_net_record_get_verdict (record), ==, verdict);
  if (error_part != NULL)
    g_assert_nonnull (strstr (paddock_net_record_get_error (record), error_part));
}

/* ---------------------------------------------------------------------- */
/* CONNECT to any allowed port                                             */

static GByteArray *
http_connect (Fixture    *fixture,
              const char *host,
              guint       port,
              const char *payload)
{
  Client client = { fixture->proxy_port };
  char *text = g_strdup_printf ("CONNECT %s:%u HTTP/1.1\r\nHost: %s:%u\r\n\r\n", host, port, host, port);

  client.first = g_bytes_new_take (text, strlen (text));
  client.payload = payload;
  return run_client (&client);
}

static void
test_connect_allowed_port (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autoptr(GByteArray) answer = http_connect (fixture, "git.test", fixture->echo_port, "ping\n");
  g_autofree char *text = answer_text (answer, 0);
  PaddockNetRecord *record;

  g_assert_true (g_str_has_prefix (text, "HTTP/1.1 200 "));
  g_assert_nonnull (strstr (text, "\r\n\r\nSSH-2.0-echo\r\nping\n"));
  record = only_record (fixture);
  assert_record (record, "CONNECT", "git.test", fixture->echo_port, PADDOCK_NET_VERDICT_ALLOWED, NULL);
  g_assert_cmpuint (paddock_net_record_get_bytes_up (record), >=, 5);
  g_assert_cmpuint (paddock_net_record_get_bytes_down (record), >=, 19);
}

static void
test_connect_port_not_allowed (Fixture       *fixture,
                               gconstpointer  data)
{
  g_autoptr(GByteArray) answer = http_connect (fixture, "allowed.test", fixture->echo_port, NULL);
  g_autofree char *text = answer_text (answer, 0);

  /* allowed.test is allowed on 80 and 443, not on the echo server's port. */
  g_assert_true (g_str_has_prefix (text, "HTTP/1.1 403 "));
  g_assert_nonnull (strstr (text, "allowed ports"));
  g_assert_null (strstr (text, "SSH-2.0"));
  assert_record (only_record (fixture), "CONNECT", "allowed.test", fixture->echo_port,
                 PADDOCK_NET_VERDICT_DENIED, "allowed ports");
}

/* ---------------------------------------------------------------------- */
/* SOCKS5                                                                  */

static const guint8 greeting[] = { 5, 1, 0 };

static GBytes *
socks_request_domain (guint8      command,
                      const char *host,
                      guint       port)
{
  GByteArray *request = g_byte_array_new ();
  guint8 head[] = { 5, command, 0, PADDOCK_SOCKS5_ADDRESS_DOMAIN, (guint8) strlen (host) };
  guint8 port_bytes[] = { (guint8) (port >> 8), (guint8) port };

  g_byte_array_append (request, head, sizeof head);
  g_byte_array_append (request, (const guint8 *) host, (guint) strlen (host));
  g_byte_array_append (request, port_bytes, 2);
  return g_byte_array_free_to_bytes (request);
}

static GByteArray *
socks_connect (Fixture    *fixture,
               GBytes     *request,
               const char *payload)
{
  Client client = { fixture->proxy_port };

  client.first = g_bytes_new_static (greeting, sizeof greeting);
  client.first_answer = 2;
  client.second = request;
  client.second_answer = PADDOCK_SOCKS5_REPLY_LEN;
  client.payload = payload;
  return run_client (&client);
}

static void
assert_socks_reply (GByteArray *answer,
                    guint8      code)
{
  g_assert_cmpuint (answer->len, >=, 2 + PADDOCK_SOCKS5_REPLY_LEN);
  g_assert_cmpuint (answer->data[0], ==, 5);
  g_assert_cmpuint (answer->data[1], ==, 0);        /* no authentication */
  g_assert_cmpuint (answer->data[2], ==, 5);
  g_assert_cmpuint (answer->data[3], ==, code);
}

static void
test_socks_domain (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(GByteArray) answer = socks_connect (fixture,
                                                socks_request_domain (1, "git.test", fixture->echo_port),
                                                "ping\n");
  g_autofree char *text = NULL;
  PaddockNetRecord *record;

  assert_socks_reply (answer, PADDOCK_SOCKS5_REPLY_SUCCEEDED);
  text = answer_text (answer, 2 + PADDOCK_SOCKS5_REPLY_LEN);
  g_assert_cmpstr (text, ==, "SSH-2.0-echo\r\nping\n");
  record = only_record (fixture);
  assert_record (record, "SOCKS5", "git.test", fixture->echo_port, PADDOCK_NET_VERDICT_ALLOWED, NULL);
  g_assert_cmpuint (paddock_net_record_get_bytes_up (record), ==, 5);
  g_assert_cmpuint (paddock_net_record_get_bytes_down (record), ==, 19);
}

static void
test_socks_ipv4 (Fixture       *fixture,
                 gconstpointer  data)
{
  guint8 request[] = { 5, 1, 0, PADDOCK_SOCKS5_ADDRESS_IPV4, 127, 0, 0, 1,
                       (guint8) (fixture->echo_port >> 8), (guint8) fixture->echo_port };
  g_autoptr(GByteArray) answer = socks_connect (fixture, g_bytes_new (request, sizeof request), "x");
  g_autofree char *text = NULL;

  /* The literal is listed with this port ("127.0.0.1:PORT"). */
  assert_socks_reply (answer, PADDOCK_SOCKS5_REPLY_SUCCEEDED);
  text = answer_text (answer, 2 + PADDOCK_SOCKS5_REPLY_LEN);
  g_assert_cmpstr (text, ==, "SSH-2.0-echo\r\nx");
  assert_record (only_record (fixture), "SOCKS5", "127.0.0.1", fixture->echo_port,
                 PADDOCK_NET_VERDICT_ALLOWED, NULL);
}

static void
test_socks_ipv6_not_listed (Fixture       *fixture,
                            gconstpointer  data)
{
  guint8 request[22] = { 5, 1, 0, PADDOCK_SOCKS5_ADDRESS_IPV6 };
  g_autoptr(GByteArray) answer = NULL;

  request[19] = 1;   /* ::1 */
  request[20] = (guint8) (fixture->echo_port >> 8);
  request[21] = (guint8) fixture->echo_port;
  answer = socks_connect (fixture, g_bytes_new (request, sizeof request), NULL);
  /* No rule lists ::1: refused before any connect, with a record. */
  assert_socks_reply (answer, PADDOCK_SOCKS5_REPLY_NOT_ALLOWED);
  g_assert_cmpuint (answer->len, ==, 2 + PADDOCK_SOCKS5_REPLY_LEN);
  assert_record (only_record (fixture), "SOCKS5", "::1", fixture->echo_port,
                 PADDOCK_NET_VERDICT_DENIED, "literally");
}

static void
test_socks_denied_name (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(GByteArray) answer = socks_connect (fixture,
                                                socks_request_domain (1, "denied.test", fixture->echo_port),
                                                NULL);

  assert_socks_reply (answer, PADDOCK_SOCKS5_REPLY_NOT_ALLOWED);
  g_assert_cmpuint (answer->len, ==, 2 + PADDOCK_SOCKS5_REPLY_LEN);
  assert_record (only_record (fixture), "SOCKS5", "denied.test", fixture->echo_port,
                 PADDOCK_NET_VERDICT_DENIED, "deny denied.test");
}

static void
test_socks_port_not_allowed (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(GByteArray) answer = socks_connect (fixture,
                                                socks_request_domain (1, "allowed.test", fixture->echo_port),
                                                NULL);

  assert_socks_reply (answer, PADDOCK_SOCKS5_REPLY_NOT_ALLOWED);
  g_assert_cmpuint (answer->len, ==, 2 + PADDOCK_SOCKS5_REPLY_LEN);
  assert_record (only_record (fixture), "SOCKS5", "allowed.test", fixture->echo_port,
                 PADDOCK_NET_VERDICT_DENIED, "allowed ports");
}

static void
test_socks_bind_refused (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autoptr(GByteArray) answer = socks_connect (fixture,
                                                socks_request_domain (2, "git.test", fixture->echo_port),
                                                NULL);

  assert_socks_reply (answer, PADDOCK_SOCKS5_REPLY_COMMAND_NOT_SUPPORTED);
  assert_record (only_record (fixture), "SOCKS5", "", 0, PADDOCK_NET_VERDICT_ERROR, "CONNECT");
}

static void
test_socks_needs_no_auth (Fixture       *fixture,
                          gconstpointer  data)
{
  static const guint8 password_only[] = { 5, 1, 2 };
  Client client = { fixture->proxy_port };
  g_autoptr(GByteArray) answer = NULL;

  client.first = g_bytes_new_static (password_only, sizeof password_only);
  client.first_answer = 2;
  answer = run_client (&client);
  g_assert_cmpuint (answer->len, ==, 2);
  g_assert_cmpuint (answer->data[0], ==, 5);
  g_assert_cmpuint (answer->data[1], ==, 0xff);
  assert_record (only_record (fixture), "SOCKS5", "", 0, PADDOCK_NET_VERDICT_ERROR, "no authentication");
}

/* A tunnel judged when it opened ends when the rules no longer allow it,
 * SOCKS5 as CONNECT. */
static void
test_socks_closed_by_policy (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(PaddockDomainRules) stricter = paddock_domain_rules_new ();
  g_autoptr(GError) error = NULL;
  Client client = { fixture->proxy_port };
  GThread *thread;

  g_assert_true (paddock_domain_rules_add_allow (stricter, "git.test", &error));  /* no port */
  client.first = g_bytes_new_static (greeting, sizeof greeting);
  client.first_answer = 2;
  client.second = socks_request_domain (1, "git.test", fixture->echo_port);
  client.second_answer = PADDOCK_SOCKS5_REPLY_LEN + 14;   /* the reply, then the banner */
  client.answer = g_byte_array_new ();
  thread = g_thread_new ("test-client", client_thread, &client);
  while (client.answer->len < 2 + PADDOCK_SOCKS5_REPLY_LEN + 14 && !g_atomic_int_get (&client.done))
    g_main_context_iteration (NULL, FALSE);
  g_assert_cmpuint (paddock_proxy_get_n_connections (fixture->proxy), ==, 1);

  paddock_proxy_set_rules (fixture->proxy, stricter);
  paddock_proxy_close_denied_connections (fixture->proxy, "the policy changed");
  while (!g_atomic_int_get (&client.done))
    g_main_context_iteration (NULL, TRUE);
  g_thread_join (thread);
  g_assert_cmpuint (paddock_proxy_get_n_connections (fixture->proxy), ==, 0);
  assert_record (only_record (fixture), "SOCKS5", "git.test", fixture->echo_port,
                 PADDOCK_NET_VERDICT_ALLOWED, "the policy changed");
  g_bytes_unref (client.first);
  g_bytes_unref (client.second);
  g_byte_array_unref (client.answer);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  /* GLib opens fds of its own on first use (the thread pool's, the
   * resolver's, the worker context's) and keeps them: one exchange
   * first, so that each test's fd count compares like with like. */
  {
    Fixture warm_up = { 0 };

    fixture_set_up (&warm_up, NULL);
    g_byte_array_unref (http_connect (&warm_up, "git.test", warm_up.echo_port, "warm\n"));
    g_byte_array_unref (socks_connect (&warm_up, socks_request_domain (1, "git.test", warm_up.echo_port),
                                       "warm\n"));
    warm_up.fds_before = G_MAXUINT;   /* nothing to compare with yet */
    fixture_tear_down (&warm_up, NULL);
  }

#define ADD(path, func) \
  g_test_add ("/network/" path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  ADD ("connect/allowed-port", test_connect_allowed_port);
  ADD ("connect/port-not-allowed", test_connect_port_not_allowed);
  ADD ("socks5/domain", test_socks_domain);
  ADD ("socks5/ipv4", test_socks_ipv4);
  ADD ("socks5/ipv6-not-listed", test_socks_ipv6_not_listed);
  ADD ("socks5/denied-name", test_socks_denied_name);
  ADD ("socks5/port-not-allowed", test_socks_port_not_allowed);
  ADD ("socks5/bind-refused", test_socks_bind_refused);
  ADD ("socks5/needs-no-auth", test_socks_needs_no_auth);
  ADD ("socks5/closed-by-policy", test_socks_closed_by_policy);

  {
    int ret = g_test_run ();

    g_socket_service_stop (echo);
    g_socket_listener_close (G_SOCKET_LISTENER (echo));
    g_clear_object (&echo);
    return ret;
  }
}
