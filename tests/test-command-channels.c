/* test-command-channels.c — a sandboxed command's own event channel, alone
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The remote end of each channel stands for the command's supervisor
 * inside the sandbox: what it writes comes out as "event", about that
 * command whatever id it claims; "spawned" once, then its end, after
 * which nothing more is read; anything else (a second "spawned", a
 * message too large for an event) answers the command as if its
 * supervisor had died, and so does its supervisor's death.
 */

#include "config.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "paddock-autofd.h"
#include "paddock-command-channels.h"
#include "paddock-sandbox-protocol.h"

typedef struct
{
  PaddockCommandChannels *channels;
  GPtrArray              *events;   /* "name:id[:status or errno]", in order */
} Fixture;

static void
event_cb (PaddockCommandChannels *channels,
          JsonObject             *event,
          Fixture                *fixture)
{
  const char *name = json_object_get_string_member_with_default (event, PADDOCK_SANDBOX_EVENT_KEY_EVENT, "");
  gint64 id = json_object_get_int_member_with_default (event, PADDOCK_SANDBOX_EVENT_KEY_ID, -1);

  if (g_str_equal (name, PADDOCK_SANDBOX_EVENT_COMMAND_EXITED))
    g_ptr_array_add (fixture->events, g_strdup_printf ("%s:%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT, name, id,
                                                       json_object_get_int_member_with_default (event, PADDOCK_SANDBOX_EVENT_KEY_STATUS, -1)));
  else if (g_str_equal (name, PADDOCK_SANDBOX_EVENT_SPAWN_FAILED))
    g_ptr_array_add (fixture->events, g_strdup_printf ("%s:%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT, name, id,
                                                       json_object_get_int_member_with_default (event, PADDOCK_SANDBOX_EVENT_KEY_ERRNO, 0)));
  else
    g_ptr_array_add (fixture->events, g_strdup_printf ("%s:%" G_GINT64_FORMAT, name, id));
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  fixture->channels = paddock_command_channels_new ("test");
  fixture->events = g_ptr_array_new_with_free_func (g_free);
  g_signal_connect (fixture->channels, "event", G_CALLBACK (event_cb), fixture);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_clear_object (&fixture->channels);
  g_ptr_array_unref (fixture->events);
}

static int
open_channel (Fixture *fixture,
              guint32  id)
{
  int remote = -1;

  g_assert_true (paddock_command_channels_open (fixture->channels, id, &remote));
  g_assert_cmpint (remote, >=, 0);
  return remote;
}

static void
supervisor_send (int         fd,
                 const char *json)
{
  g_assert_cmpint (send (fd, json, strlen (json), MSG_NOSIGNAL), ==, (gssize) strlen (json));
}

/* Runs the main loop until N events were reported, or for a moment when
 * none more should come. */
static void
wait_for_events (Fixture *fixture,
                 guint    n)
{
  gint64 deadline = g_get_monotonic_time () + (n > fixture->events->len ? 10 : 0.2) * G_USEC_PER_SEC;

  while ((fixture->events->len < n || n == 0) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, FALSE);
}

static void
assert_events (Fixture    *fixture,
               const char *expected)
{
  g_autofree char *joined = NULL;

  g_ptr_array_add (fixture->events, NULL);
  joined = g_strjoinv (" ", (char **) fixture->events->pdata);
  g_ptr_array_remove_index (fixture->events, fixture->events->len - 1);
  g_assert_cmpstr (joined, ==, expected);
}

/* "spawned" then the end, both as command 7's whatever id they claim;
 * what comes after the end is not read. */
static void
test_spawned_then_exited (Fixture       *fixture,
                          gconstpointer  data)
{
  paddock_autofd int remote = open_channel (fixture, 7);

  supervisor_send (remote, "{\"event\":\"spawned\",\"id\":99}");
  supervisor_send (remote, "{\"event\":\"command-exited\",\"id\":99,\"status\":3}");
  supervisor_send (remote, "{\"event\":\"command-exited\",\"id\":7,\"status\":4}");
  wait_for_events (fixture, 2);
  wait_for_events (fixture, 0);
  assert_events (fixture, "spawned:7 command-exited:7:3");
}

/* A second "spawned" is not an event of this channel: the command ends
 * as if its supervisor had died (255), and nothing more is read. */
static void
test_rules_broken (Fixture       *fixture,
                   gconstpointer  data)
{
  paddock_autofd int remote = open_channel (fixture, 3);

  supervisor_send (remote, "{\"event\":\"spawned\",\"id\":3}");
  supervisor_send (remote, "{\"event\":\"spawned\",\"id\":3}");
  supervisor_send (remote, "{\"event\":\"command-exited\",\"id\":3,\"status\":0}");
  wait_for_events (fixture, 2);
  wait_for_events (fixture, 0);
  assert_events (fixture, "spawned:3 command-exited:3:255");
}

/* Larger than any event, before "spawned": the command did not start. */
static void
test_too_large (Fixture       *fixture,
                gconstpointer  data)
{
  paddock_autofd int remote = open_channel (fixture, 5);
  g_autofree char *large = g_strnfill (8192, ' ');

  supervisor_send (remote, large);
  wait_for_events (fixture, 1);
  assert_events (fixture, "spawn-failed:5:" G_STRINGIFY (EIO));
}

/* The supervisor gone after "spawned" with its end closed and no end of
 * the command said: pid 1's "supervisor-gone" answers it (255), once. */
static void
test_supervisor_gone (Fixture       *fixture,
                      gconstpointer  data)
{
  int remote = open_channel (fixture, 9);

  supervisor_send (remote, "{\"event\":\"spawned\",\"id\":9}");
  close (remote);
  wait_for_events (fixture, 1);
  wait_for_events (fixture, 0);
  assert_events (fixture, "spawned:9");
  paddock_command_channels_supervisor_gone (fixture->channels, 9);
  paddock_command_channels_supervisor_gone (fixture->channels, 9);
  assert_events (fixture, "spawned:9 command-exited:9:255");
}

/* The sandbox ended: what was written before is read (drain_all), then a
 * dropped channel is closed and says nothing more. */
static void
test_drain_and_drop (Fixture       *fixture,
                     gconstpointer  data)
{
  paddock_autofd int first = open_channel (fixture, 1);
  paddock_autofd int second = open_channel (fixture, 2);

  supervisor_send (first, "{\"event\":\"spawned\",\"id\":1}");
  supervisor_send (first, "{\"event\":\"command-exited\",\"id\":1,\"status\":0}");
  paddock_command_channels_drain_all (fixture->channels);
  assert_events (fixture, "spawned:1 command-exited:1:0");

  /* Dropped: our end is closed, so the supervisor's writes fail. */
  paddock_command_channels_drop (fixture->channels, 2);
  g_assert_cmpint (send (second, "{}", 2, MSG_NOSIGNAL), ==, -1);
  wait_for_events (fixture, 0);
  paddock_command_channels_clear (fixture->channels);
  assert_events (fixture, "spawned:1 command-exited:1:0");
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/command-channels/spawned-then-exited", Fixture, NULL, fixture_set_up, test_spawned_then_exited, fixture_tear_down);
  g_test_add ("/command-channels/rules-broken", Fixture, NULL, fixture_set_up, test_rules_broken, fixture_tear_down);
  g_test_add ("/command-channels/too-large", Fixture, NULL, fixture_set_up, test_too_large, fixture_tear_down);
  g_test_add ("/command-channels/supervisor-gone", Fixture, NULL, fixture_set_up, test_supervisor_gone, fixture_tear_down);
  g_test_add ("/command-channels/drain-and-drop", Fixture, NULL, fixture_set_up, test_drain_and_drop, fixture_tear_down);
  return g_test_run ();
}
