/* test-sandbox-link.c — the daemon's end of a sandbox's control socket, alone
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A SOCK_SEQPACKET pair stands for the helper's pid 1: what the link sends
 * is read back as pid 1 would (an a{sv} in normal form, fds attached), and
 * events written on it come out as the link's signals, descriptors with
 * them; a message cut short is dropped whole (its fds closed), and the
 * pid 1's end closing is "closed".
 */

#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-error.h"
#include "paddock-fdpass.h"
#include "paddock-sandbox-link.h"
#include "paddock-sandbox-protocol.h"

typedef struct
{
  PaddockSandboxLink *link;
  int                 helper;       /* pid 1's end */
  GPtrArray          *events;       /* "signal:detail" strings, in order */
  int                 taken_fd;     /* a descriptor a handler took */
  gboolean            closed;
} Fixture;

static void
started_cb (PaddockSandboxLink *link,
            JsonObject         *report,
            JsonObject         *event,
            int                *fd,
            Fixture            *fixture)
{
  g_ptr_array_add (fixture->events,
                   g_strdup_printf ("started:%s", report != NULL && json_object_has_member (report, "layers")
                                                  ? "report" : "none"));
}

static void
proxy_cb (PaddockSandboxLink *link,
          int                *fd,
          Fixture            *fixture)
{
  g_ptr_array_add (fixture->events, g_strdup_printf ("proxy:%s", *fd >= 0 ? "fd" : "nofd"));
  fixture->taken_fd = g_steal_fd (fd);
}

static void
socket_cb (PaddockSandboxLink *link,
           gint64              id,
           int                *fd,
           Fixture            *fixture)
{
  g_ptr_array_add (fixture->events, g_strdup_printf ("socket:%" G_GINT64_FORMAT ":%s", id, *fd >= 0 ? "fd" : "nofd"));
}

static void
supervisor_gone_cb (PaddockSandboxLink *link,
                    guint               id,
                    Fixture            *fixture)
{
  g_ptr_array_add (fixture->events, g_strdup_printf ("supervisor-gone:%u", id));
}

static void
command_event_cb (PaddockSandboxLink *link,
                  JsonObject         *event,
                  int                *fd,
                  Fixture            *fixture)
{
  g_ptr_array_add (fixture->events,
                   g_strdup_printf ("command-event:%s:%" G_GINT64_FORMAT,
                                    json_object_get_string_member_with_default (event, "event", ""),
                                    json_object_get_int_member_with_default (event, "id", -1)));
}

static void
closed_cb (PaddockSandboxLink *link,
           Fixture            *fixture)
{
  fixture->closed = TRUE;
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  int pair[2];

  g_assert_no_errno (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair));
  fixture->helper = pair[1];
  fixture->link = paddock_sandbox_link_new (pair[0]);
  fixture->events = g_ptr_array_new_with_free_func (g_free);
  fixture->taken_fd = -1;
  g_signal_connect (fixture->link, "started", G_CALLBACK (started_cb), fixture);
  g_signal_connect (fixture->link, "proxy", G_CALLBACK (proxy_cb), fixture);
  g_signal_connect (fixture->link, "socket", G_CALLBACK (socket_cb), fixture);
  g_signal_connect (fixture->link, "supervisor-gone", G_CALLBACK (supervisor_gone_cb), fixture);
  g_signal_connect (fixture->link, "command-event", G_CALLBACK (command_event_cb), fixture);
  g_signal_connect (fixture->link, "closed", G_CALLBACK (closed_cb), fixture);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_clear_object (&fixture->link);
  paddock_close_fd (&fixture->helper);
  paddock_close_fd (&fixture->taken_fd);
  g_ptr_array_unref (fixture->events);
}

/* pid 1 writes one event, maybe with a descriptor (a pipe's end). */
static void
helper_send (Fixture    *fixture,
             const char *json,
             gboolean    with_fd)
{
  int fds[2] = { -1, -1 };

  if (with_fd)
    g_assert_no_errno (pipe2 (fds, O_CLOEXEC));
  g_assert_cmpint (paddock_fdpass_send (fixture->helper, json, strlen (json), fds, with_fd ? 1 : 0, 0),
                   ==, (gssize) strlen (json));
  paddock_fdpass_close_all (fds, with_fd ? 2 : 0);
}

/* Runs the main loop until N events were reported (or the link closed). */
static void
wait_for_events (Fixture *fixture,
                 guint    n)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (fixture->events->len < n && !fixture->closed && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
}

/* pid 1 reads one request: its a{sv} and how many fds came with it. */
static GVariant *
helper_recv (Fixture *fixture,
             int     *fds,
             gsize   *n_fds)
{
  g_autofree char *buf = g_malloc (PADDOCK_SANDBOX_MAX_REQUEST_BYTES);
  gssize n = paddock_fdpass_recv (fixture->helper, buf, PADDOCK_SANDBOX_MAX_REQUEST_BYTES,
                                  fds, PADDOCK_SANDBOX_MAX_REQUEST_FDS, n_fds, 0);
  g_autoptr(GVariant) request = NULL;
  g_autoptr(GBytes) bytes = NULL;

  g_assert_cmpint (n, >, 0);
  bytes = g_bytes_new_take (g_steal_pointer (&buf), n);
  request = g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE_VARDICT, bytes, FALSE));
  g_assert_true (g_variant_is_normal_form (request));
  return g_steal_pointer (&request);
}

static void
test_events (Fixture       *fixture,
             gconstpointer  data)
{
  const char *const expected[] = {
    "started:report",
    "proxy:fd",
    "socket:7:fd",
    "socket:8:nofd",
    "supervisor-gone:3",
    "command-event:spawned:4",
    "command-event:command-exited:4",
  };

  helper_send (fixture, "{\"event\":\"started\",\"pid\":2,\"boundary\":{\"layers\":[]}}", FALSE);
  helper_send (fixture, "{\"event\":\"proxy\",\"port\":3128}", TRUE);
  helper_send (fixture, "{\"event\":\"socket\",\"id\":7}", TRUE);
  helper_send (fixture, "{\"event\":\"socket-failed\",\"id\":8,\"errno\":111}", FALSE);
  /* An id the daemon never gives is nobody's: not reported. */
  helper_send (fixture, "{\"event\":\"supervisor-gone\",\"id\":-5}", FALSE);
  helper_send (fixture, "{\"event\":\"supervisor-gone\",\"id\":3}", FALSE);
  /* Not JSON, or not an object: skipped. */
  helper_send (fixture, "not json", FALSE);
  helper_send (fixture, "[1,2]", FALSE);
  helper_send (fixture, "{\"event\":\"spawned\",\"id\":4,\"pid\":9}", FALSE);
  helper_send (fixture, "{\"event\":\"command-exited\",\"id\":4,\"status\":0}", FALSE);

  wait_for_events (fixture, G_N_ELEMENTS (expected));
  g_assert_cmpuint (fixture->events->len, ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    g_assert_cmpstr (g_ptr_array_index (fixture->events, i), ==, expected[i]);
  /* The proxy's handler took its socket; it is still open. */
  g_assert_cmpint (fcntl (fixture->taken_fd, F_GETFD), >=, 0);
  g_assert_false (fixture->closed);
  g_assert_true (paddock_sandbox_link_is_open (fixture->link));
}

/* A message longer than any event, or with two descriptors, is dropped
 * whole; the next one still comes. Its descriptors do not stay open in
 * the daemon: the far end of the pipe sent sees its reader gone. */
static void
test_cut_short (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GString) big = g_string_new ("{\"event\":\"spawned\",\"id\":1,\"message\":\"");
  int pipe_fds[2];
  int two[2];
  paddock_autofd int write_end = -1;
  const char *event = "{\"event\":\"spawned\",\"id\":2}";

  while (big->len < 8192)
    g_string_append_c (big, 'x');
  g_string_append (big, "\"}");
  g_assert_no_errno (pipe2 (pipe_fds, O_CLOEXEC));
  write_end = pipe_fds[1];
  g_assert_cmpint (paddock_fdpass_send (fixture->helper, big->str, big->len, pipe_fds, 1, 0), ==, (gssize) big->len);
  two[0] = pipe_fds[0];
  two[1] = pipe_fds[0];
  g_assert_cmpint (paddock_fdpass_send (fixture->helper, event, strlen (event), two, 2, 0), ==, (gssize) strlen (event));
  close (pipe_fds[0]);
  helper_send (fixture, "{\"event\":\"spawned\",\"id\":3}", FALSE);

  wait_for_events (fixture, 1);
  g_assert_cmpuint (fixture->events->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (fixture->events, 0), ==, "command-event:spawned:3");
  /* Every copy of the read end is closed: writing is EPIPE. */
  signal (SIGPIPE, SIG_IGN);
  g_assert_cmpint (write (write_end, "x", 1), ==, -1);
  g_assert_cmpint (errno, ==, EPIPE);
}

static void
test_requests (Fixture       *fixture,
               gconstpointer  data)
{
  const char *const argv[] = { "/bin/echo", "hi", NULL };
  const char *const envp[] = { "PATH=/usr/bin", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) request = NULL;
  int fds[PADDOCK_SANDBOX_MAX_REQUEST_FDS];
  int spawn_fds[PADDOCK_SANDBOX_DIRECT_SPAWN_N_FDS];
  gsize n_fds;
  const char *op;
  guint32 id;
  gint32 signal_number;
  const char *family;
  gboolean flag;
  g_autofree const char **got_argv = NULL;
  int pipe_fds[2];

  g_assert_true (paddock_sandbox_link_kill (fixture->link, 5, SIGTERM, &error));
  g_assert_no_error (error);
  request = helper_recv (fixture, fds, &n_fds);
  g_assert_cmpuint (n_fds, ==, 0);
  g_assert_true (g_variant_lookup (request, PADDOCK_SANDBOX_KEY_OP, "&s", &op));
  g_assert_cmpstr (op, ==, PADDOCK_SANDBOX_OP_KILL);
  g_assert_true (g_variant_lookup (request, PADDOCK_SANDBOX_KEY_ID, "u", &id));
  g_assert_cmpuint (id, ==, 5);
  g_assert_true (g_variant_lookup (request, PADDOCK_SANDBOX_KEY_SIGNAL, "i", &signal_number));
  g_assert_cmpint (signal_number, ==, SIGTERM);
  g_clear_pointer (&request, g_variant_unref);

  g_assert_true (paddock_sandbox_link_request_socket (fixture->link, 6, AF_INET6, &error));
  request = helper_recv (fixture, fds, &n_fds);
  g_assert_true (g_variant_lookup (request, PADDOCK_SANDBOX_KEY_OP, "&s", &op));
  g_assert_cmpstr (op, ==, PADDOCK_SANDBOX_OP_SOCKET);
  g_assert_true (g_variant_lookup (request, PADDOCK_SANDBOX_KEY_FAMILY, "&s", &family));
  g_assert_cmpstr (family, ==, PADDOCK_SANDBOX_FAMILY_INET6);
  g_clear_pointer (&request, g_variant_unref);
  /* inet is pid 1's default: not named. */
  g_assert_true (paddock_sandbox_link_request_socket (fixture->link, 7, AF_INET, &error));
  request = helper_recv (fixture, fds, &n_fds);
  g_assert_false (g_variant_lookup (request, PADDOCK_SANDBOX_KEY_FAMILY, "&s", &family));
  g_clear_pointer (&request, g_variant_unref);

  /* A direct spawn: its four fds in order. */
  g_assert_no_errno (pipe2 (pipe_fds, O_CLOEXEC));
  spawn_fds[PADDOCK_SANDBOX_REQUEST_FD_STDIN] = pipe_fds[0];
  spawn_fds[PADDOCK_SANDBOX_REQUEST_FD_STDOUT] = pipe_fds[1];
  spawn_fds[PADDOCK_SANDBOX_REQUEST_FD_STDERR] = pipe_fds[1];
  spawn_fds[PADDOCK_SANDBOX_REQUEST_FD_EVENTS] = pipe_fds[0];
  g_assert_true (paddock_sandbox_link_spawn (fixture->link, 9, argv, "/tmp", envp, FALSE, spawn_fds, &error));
  paddock_fdpass_close_all (pipe_fds, 2);
  request = helper_recv (fixture, fds, &n_fds);
  g_assert_cmpuint (n_fds, ==, PADDOCK_SANDBOX_DIRECT_SPAWN_N_FDS);
  paddock_fdpass_close_all (fds, n_fds);
  g_assert_true (g_variant_lookup (request, PADDOCK_SANDBOX_KEY_OP, "&s", &op));
  g_assert_cmpstr (op, ==, PADDOCK_SANDBOX_OP_SPAWN);
  g_assert_true (g_variant_lookup (request, PADDOCK_SANDBOX_KEY_ARGV, "^a&ay", &got_argv));
  g_assert_cmpstrv (got_argv, argv);
  g_assert_true (g_variant_lookup (request, PADDOCK_SANDBOX_KEY_DIRECT, "b", &flag));
  g_assert_true (flag);
  g_assert_true (g_variant_lookup (request, PADDOCK_SANDBOX_KEY_TTY, "b", &flag));
  g_assert_false (flag);
  g_clear_pointer (&request, g_variant_unref);

  /* On a terminal: no fds, not direct. */
  g_assert_true (paddock_sandbox_link_spawn (fixture->link, 10, argv, "/tmp", envp, TRUE, NULL, &error));
  request = helper_recv (fixture, fds, &n_fds);
  g_assert_cmpuint (n_fds, ==, 0);
  g_assert_false (g_variant_lookup (request, PADDOCK_SANDBOX_KEY_DIRECT, "b", &flag));
  g_assert_true (g_variant_lookup (request, PADDOCK_SANDBOX_KEY_TTY, "b", &flag));
  g_assert_true (flag);
}

/* pid 1's end closing is "closed", once; requests then fail typed. A
 * link closed by its owner says nothing. */
static void
test_closed (Fixture       *fixture,
             gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  helper_send (fixture, "{\"event\":\"command-exited\",\"id\":1,\"status\":3}", FALSE);
  paddock_close_fd (&fixture->helper);
  wait_for_events (fixture, 2);
  /* The event before the end still came. */
  g_assert_cmpuint (fixture->events->len, ==, 1);
  g_assert_true (fixture->closed);
  g_assert_false (paddock_sandbox_link_is_open (fixture->link));
  g_assert_false (paddock_sandbox_link_kill (fixture->link, 1, SIGKILL, &error));
  g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_BUSY);
  g_assert_false (paddock_sandbox_link_drain (fixture->link));
}

static void
test_owner_close (Fixture       *fixture,
                  gconstpointer  data)
{
  char byte;

  paddock_sandbox_link_close (fixture->link);
  g_assert_false (paddock_sandbox_link_is_open (fixture->link));
  /* pid 1 sees the daemon gone. */
  g_assert_cmpint (read (fixture->helper, &byte, 1), ==, 0);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_false (fixture->closed);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/sandbox-link/events", Fixture, NULL, fixture_set_up, test_events, fixture_tear_down);
  g_test_add ("/sandbox-link/cut-short", Fixture, NULL, fixture_set_up, test_cut_short, fixture_tear_down);
  g_test_add ("/sandbox-link/requests", Fixture, NULL, fixture_set_up, test_requests, fixture_tear_down);
  g_test_add ("/sandbox-link/closed", Fixture, NULL, fixture_set_up, test_closed, fixture_tear_down);
  g_test_add ("/sandbox-link/owner-close", Fixture, NULL, fixture_set_up, test_owner_close, fixture_tear_down);
  return g_test_run ();
}
