/* test-http-parsers.c — the proxy's pure parsers: HTTP head and body framing, SOCKS5, rules with ports
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * No sockets here: these are the functions the fuzz targets call
 * (tests/fuzz/), checked against what RFC 9112 and RFC 1928 say.
 */

#include "config.h"

#include <string.h>

#include "paddock-domain-rules.h"
#include "paddock-http-body.h"
#include "paddock-http-head.h"
#include "paddock-socks5.h"

#define BYTES(s) ((const guint8 *) (s)), strlen (s)

static void
test_head_end (void)
{
  const char *crlf = "GET / HTTP/1.1\r\nHost: a\r\n\r\nbody";
  const char *lf = "GET / HTTP/1.1\nHost: a\n\nbody";

  g_assert_cmpuint (paddock_http_find_head_end (BYTES (crlf), 0), ==, strlen (crlf) - 4);
  g_assert_cmpuint (paddock_http_find_head_end (BYTES (lf), 0), ==, strlen (lf) - 4);
  g_assert_cmpuint (paddock_http_find_head_end (BYTES ("GET / HTTP/1.1\r\nHost: a\r\n\r"), 0), ==, 0);
  g_assert_cmpuint (paddock_http_find_head_end (BYTES (""), 0), ==, 0);
  /* Searching from the middle of an end still finds it. */
  g_assert_cmpuint (paddock_http_find_head_end (BYTES (crlf), strlen ("GET / HTTP/1.1\r\nHost: a\r")), ==,
                    strlen (crlf) - 4);
  g_assert_cmpuint (paddock_http_count_lines (BYTES (crlf)), ==, 3);
}

static void
test_authority (void)
{
  g_autofree char *host = NULL;
  guint port = 0;

  g_assert_true (paddock_http_parse_authority ("example.org:443", &host, &port));
  g_assert_cmpstr (host, ==, "example.org");
  g_assert_cmpuint (port, ==, 443);
  g_clear_pointer (&host, g_free);
  g_assert_true (paddock_http_parse_authority ("[2001:db8::1]:22", &host, &port));
  g_assert_cmpstr (host, ==, "[2001:db8::1]");
  g_assert_cmpuint (port, ==, 22);

  g_assert_false (paddock_http_parse_authority ("example.org", &host, &port));
  g_assert_false (paddock_http_parse_authority ("example.org:", &host, &port));
  g_assert_false (paddock_http_parse_authority ("example.org:0", &host, &port));
  g_assert_false (paddock_http_parse_authority ("example.org:65536", &host, &port));
  g_assert_false (paddock_http_parse_authority ("example.org:+80", &host, &port));
  g_assert_false (paddock_http_parse_authority ("example.org:80x", &host, &port));
  g_assert_false (paddock_http_parse_authority ("2001:db8::1:22", &host, &port));
  g_assert_false (paddock_http_parse_authority (":80", &host, &port));
  g_assert_false (paddock_http_parse_authority ("[::1]", &host, &port));
}

static void
test_content_length (void)
{
  guint64 length = 1;

  g_assert_true (paddock_http_parse_content_length ("0", &length));
  g_assert_cmpuint (length, ==, 0);
  g_assert_true (paddock_http_parse_content_length ("12345", &length));
  g_assert_cmpuint (length, ==, 12345);
  /* A list, a sign, spaces, or an overflow are smuggling shapes. */
  g_assert_false (paddock_http_parse_content_length ("5, 5", &length));
  g_assert_false (paddock_http_parse_content_length ("-1", &length));
  g_assert_false (paddock_http_parse_content_length (" 5", &length));
  g_assert_false (paddock_http_parse_content_length ("", &length));
  g_assert_false (paddock_http_parse_content_length (NULL, &length));
  g_assert_false (paddock_http_parse_content_length ("99999999999999999999", &length));
}

static void
test_fields (void)
{
  g_assert_true (paddock_http_field_is_clean ("text/plain"));
  g_assert_false (paddock_http_field_is_clean ("a\r\nX-Injected: 1"));
  g_assert_false (paddock_http_field_is_clean ("a\n"));

  g_assert_true (paddock_http_list_contains ("keep-alive, Upgrade", "upgrade"));
  g_assert_true (paddock_http_list_contains (" ,close ,", "close"));
  g_assert_false (paddock_http_list_contains ("closed", "close"));
  g_assert_false (paddock_http_list_contains ("\"a, close\"", "close"));
  g_assert_false (paddock_http_list_contains ("", "close"));

  g_assert_true (paddock_http_is_hop_by_hop ("Connection", NULL));
  g_assert_true (paddock_http_is_hop_by_hop ("proxy-authorization", NULL));
  g_assert_true (paddock_http_is_hop_by_hop ("Host", NULL));
  g_assert_true (paddock_http_is_hop_by_hop ("X-Secret", "close, x-secret"));
  g_assert_false (paddock_http_is_hop_by_hop ("Transfer-Encoding", NULL));
  g_assert_false (paddock_http_is_hop_by_hop ("Accept", "close"));
}

/* Feeds @text to @body one byte at a time (framing must not depend on how
 * the bytes arrive) and returns how many belonged to it. */
static gsize
feed_bytewise (PaddockHttpBody *body,
               const char      *text)
{
  gsize used = 0;

  for (gsize i = 0; text[i] != '\0' && !body->complete; i++)
    used += paddock_http_body_accept (body, (const guint8 *) text + i, 1);
  return used;
}

static void
test_body_framing (void)
{
  const char *chunked = "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\nNEXT";
  PaddockHttpBody body;

  paddock_http_body_init (&body, PADDOCK_HTTP_BODY_LENGTH, 5);
  g_assert_cmpuint (paddock_http_body_accept (&body, BYTES ("helloNEXT")), ==, 5);
  g_assert_true (body.complete);
  g_assert_false (body.broken);

  paddock_http_body_init (&body, PADDOCK_HTTP_BODY_NONE, 0);
  g_assert_cmpuint (paddock_http_body_accept (&body, BYTES ("NEXT")), ==, 0);
  g_assert_true (body.complete);

  paddock_http_body_init (&body, PADDOCK_HTTP_BODY_UNTIL_CLOSE, 0);
  g_assert_cmpuint (paddock_http_body_accept (&body, BYTES ("anything")), ==, 8);
  g_assert_false (body.complete);

  paddock_http_body_init (&body, PADDOCK_HTTP_BODY_CHUNKED, 0);
  g_assert_cmpuint (paddock_http_body_accept (&body, BYTES (chunked)), ==, strlen (chunked) - 4);
  g_assert_true (body.complete);
  g_assert_false (body.broken);

  paddock_http_body_init (&body, PADDOCK_HTTP_BODY_CHUNKED, 0);
  g_assert_cmpuint (feed_bytewise (&body, chunked), ==, strlen (chunked) - 4);
  g_assert_true (body.complete);
  g_assert_false (body.broken);

  /* Nonsense ends the body, broken: the connection is not kept. */
  paddock_http_body_init (&body, PADDOCK_HTTP_BODY_CHUNKED, 0);
  g_assert_cmpuint (paddock_http_body_accept (&body, BYTES ("zz\r\n")), ==, 4);
  g_assert_true (body.complete);
  g_assert_true (body.broken);

  paddock_http_body_init (&body, PADDOCK_HTTP_BODY_CHUNKED, 0);
  paddock_http_body_accept (&body, BYTES ("fffffffffffffffff\r\n"));   /* > 64 bits */
  g_assert_true (body.broken);

  paddock_http_body_init (&body, PADDOCK_HTTP_BODY_CHUNKED, 0);
  paddock_http_body_accept (&body, BYTES ("5\r\nhelloX"));   /* no CRLF after the data */
  g_assert_true (body.broken);

  {
    g_autofree char *long_line = g_strnfill (PADDOCK_HTTP_MAX_CHUNK_LINE + 1, ' ');

    paddock_http_body_init (&body, PADDOCK_HTTP_BODY_CHUNKED, 0);
    paddock_http_body_accept (&body, BYTES ("1;"));
    paddock_http_body_accept (&body, BYTES (long_line));
    g_assert_true (body.broken);
  }
}

static void
test_socks5 (void)
{
  static const guint8 greeting[] = { 5, 2, 2, 0 };
  static const guint8 password_only[] = { 5, 1, 2 };
  static const guint8 domain[] = { 5, 1, 0, 3, 10, 'g', 'i', 't', 'h', 'u', 'b', '.', 'c', 'o', 'm', 0, 22, 'X' };
  static const guint8 ipv4[] = { 5, 1, 0, 1, 192, 0, 2, 1, 0x1f, 0x90 };
  static const guint8 ipv6[] = { 5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 187 };
  static const guint8 bind[] = { 5, 2, 0, 1, 127, 0, 0, 1, 0, 80 };
  static const guint8 nul_name[] = { 5, 1, 0, 3, 3, 'a', 0, 'b', 0, 80 };
  static const guint8 bad_type[] = { 5, 1, 0, 9 };
  PaddockSocks5Request request;
  guint8 reply[PADDOCK_SOCKS5_REPLY_LEN];
  gsize used = 0;

  g_assert_cmpint (paddock_socks5_parse_greeting (greeting, sizeof greeting, &used), ==, PADDOCK_SOCKS5_OK);
  g_assert_cmpuint (used, ==, 4);
  for (gsize len = 0; len < sizeof greeting; len++)
    g_assert_cmpint (paddock_socks5_parse_greeting (greeting, len, &used), ==, PADDOCK_SOCKS5_NEED_MORE);
  g_assert_cmpint (paddock_socks5_parse_greeting (password_only, sizeof password_only, &used), ==,
                   PADDOCK_SOCKS5_NO_METHOD);
  g_assert_cmpint (paddock_socks5_parse_greeting ((const guint8 *) "GET", 3, &used), ==,
                   PADDOCK_SOCKS5_BAD_VERSION);

  g_assert_cmpint (paddock_socks5_parse_request (domain, sizeof domain, &request, &used), ==,
                   PADDOCK_SOCKS5_OK);
  g_assert_cmpstr (request.host, ==, "github.com");
  g_assert_cmpuint (request.port, ==, 22);
  g_assert_cmpuint (used, ==, sizeof domain - 1);   /* 'X' is the tunnel's first byte */
  for (gsize len = 0; len < sizeof domain - 1; len++)
    g_assert_cmpint (paddock_socks5_parse_request (domain, len, &request, &used), ==,
                     PADDOCK_SOCKS5_NEED_MORE);

  g_assert_cmpint (paddock_socks5_parse_request (ipv4, sizeof ipv4, &request, &used), ==, PADDOCK_SOCKS5_OK);
  g_assert_cmpstr (request.host, ==, "192.0.2.1");
  g_assert_cmpuint (request.port, ==, 8080);
  g_assert_cmpint (paddock_socks5_parse_request (ipv6, sizeof ipv6, &request, &used), ==, PADDOCK_SOCKS5_OK);
  g_assert_cmpstr (request.host, ==, "2001:db8::1");
  g_assert_cmpuint (request.port, ==, 443);

  g_assert_cmpint (paddock_socks5_parse_request (bind, sizeof bind, &request, &used), ==,
                   PADDOCK_SOCKS5_BAD_COMMAND);
  g_assert_cmpint (paddock_socks5_parse_request (nul_name, sizeof nul_name, &request, &used), ==,
                   PADDOCK_SOCKS5_BAD_ADDRESS);
  g_assert_cmpint (paddock_socks5_parse_request (bad_type, sizeof bad_type, &request, &used), ==,
                   PADDOCK_SOCKS5_BAD_ADDRESS_TYPE);

  paddock_socks5_format_reply (PADDOCK_SOCKS5_REPLY_NOT_ALLOWED, reply);
  g_assert_cmpuint (reply[0], ==, 5);
  g_assert_cmpuint (reply[1], ==, 2);
  g_assert_cmpuint (reply[3], ==, PADDOCK_SOCKS5_ADDRESS_IPV4);
}

static void
test_rules_ports (void)
{
  g_autoptr(PaddockDomainRules) rules = paddock_domain_rules_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *rule = NULL;

  g_assert_true (paddock_domain_rules_add_allow (rules, "github.com:22", &error));
  g_assert_true (paddock_domain_rules_add_allow (rules, "github.com", &error));
  g_assert_true (paddock_domain_rules_add_allow (rules, "*.example.com:8443", &error));
  g_assert_true (paddock_domain_rules_add_allow (rules, "[2001:db8::1]:22", &error));
  g_assert_true (paddock_domain_rules_add_allow (rules, "2001:db8::2", &error));
  g_assert_true (paddock_domain_rules_add_allow (rules, "git.test", &error));
  g_assert_true (paddock_domain_rules_add_deny (rules, "git.test:8080", &error));
  g_assert_no_error (error);

  g_assert_cmpint (paddock_domain_rules_check_target (rules, "github.com", 22, &rule), ==,
                   PADDOCK_RULE_VERDICT_ALLOW);
  g_assert_cmpstr (rule, ==, "allow github.com:22");
  g_clear_pointer (&rule, g_free);
  g_assert_cmpint (paddock_domain_rules_check_target (rules, "GitHub.com.", 443, NULL), ==,
                   PADDOCK_RULE_VERDICT_ALLOW);
  g_assert_cmpint (paddock_domain_rules_check_target (rules, "github.com", 23, &rule), ==,
                   PADDOCK_RULE_VERDICT_DENY_PORT);
  g_assert_nonnull (strstr (rule, "allowed ports"));
  g_clear_pointer (&rule, g_free);

  /* A port on a wildcard: only that port, only strict subdomains. */
  g_assert_cmpint (paddock_domain_rules_check_target (rules, "a.example.com", 8443, NULL), ==,
                   PADDOCK_RULE_VERDICT_ALLOW);
  g_assert_cmpint (paddock_domain_rules_check_target (rules, "a.example.com", 443, NULL), ==,
                   PADDOCK_RULE_VERDICT_DENY_PORT);
  g_assert_cmpint (paddock_domain_rules_check_target (rules, "example.com", 8443, NULL), ==,
                   PADDOCK_RULE_VERDICT_DENY);

  g_assert_cmpint (paddock_domain_rules_check_target (rules, "2001:db8::1", 22, NULL), ==,
                   PADDOCK_RULE_VERDICT_ALLOW);
  g_assert_cmpint (paddock_domain_rules_check_target (rules, "[2001:db8::1]", 80, NULL), ==,
                   PADDOCK_RULE_VERDICT_DENY_PORT);
  g_assert_cmpint (paddock_domain_rules_check_target (rules, "2001:db8::2", 443, NULL), ==,
                   PADDOCK_RULE_VERDICT_ALLOW);

  /* A deny with a port denies that port, not the host. */
  g_assert_cmpint (paddock_domain_rules_check_target (rules, "git.test", 8080, &rule), ==,
                   PADDOCK_RULE_VERDICT_DENY);
  g_assert_cmpstr (rule, ==, "deny git.test:8080");
  g_assert_cmpint (paddock_domain_rules_check_target (rules, "git.test", 80, NULL), ==,
                   PADDOCK_RULE_VERDICT_ALLOW);
  g_assert_cmpint (paddock_domain_rules_check_host (rules, "git.test", NULL), ==,
                   PADDOCK_RULE_VERDICT_ALLOW);

  /* Port 0 is never a target. */
  g_assert_cmpint (paddock_domain_rules_check_target (rules, "github.com", 0, NULL), !=,
                   PADDOCK_RULE_VERDICT_ALLOW);

  /* Ports that are not 1…65535 in plain digits are refused, typed. */
  g_assert_false (paddock_domain_rules_add_allow (rules, "github.com:0", &error));
  g_assert_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_INVALID_PATTERN);
  g_clear_error (&error);
  g_assert_false (paddock_domain_rules_add_allow (rules, "github.com:65536", &error));
  g_assert_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_INVALID_PATTERN);
  g_clear_error (&error);
  g_assert_false (paddock_domain_rules_add_allow (rules, "github.com:", &error));
  g_clear_error (&error);
  g_assert_false (paddock_domain_rules_add_allow (rules, "github.com:+22", &error));
  g_clear_error (&error);
  g_assert_false (paddock_domain_rules_add_allow (rules, "github.com:22:22", &error));
  g_clear_error (&error);
  g_assert_false (paddock_domain_rules_add_allow (rules, "[2001:db8::1]:x", &error));
  g_clear_error (&error);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/network/http-head/end", test_head_end);
  g_test_add_func ("/network/http-head/authority", test_authority);
  g_test_add_func ("/network/http-head/content-length", test_content_length);
  g_test_add_func ("/network/http-head/fields", test_fields);
  g_test_add_func ("/network/http-body/framing", test_body_framing);
  g_test_add_func ("/network/socks5/messages", test_socks5);
  g_test_add_func ("/network/rules/ports", test_rules_ports);

  return g_test_run ();
}
