/* test-session-record.c — session.json written and read back, defaults, refusals, leftovers
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * What a restarted daemon reads of a session is what the earlier one
 * wrote; an older or damaged record gets the documented defaults or is
 * refused; the processes a record names are only well-formed ones.
 */

#include "config.h"

#include <glib/gstdio.h>

#include "paddock-domain-rules.h"
#include "paddock-error.h"
#include "paddock-session-record.h"

typedef struct
{
  char *dir;
  char *path;
} Fixture;

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  fixture->dir = g_dir_make_tmp ("paddock-record-XXXXXX", &error);
  g_assert_no_error (error);
  fixture->path = g_build_filename (fixture->dir, "session.json", NULL);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_unlink (fixture->path);
  g_rmdir (fixture->dir);
  g_free (fixture->path);
  g_free (fixture->dir);
}

static void
write_text (Fixture    *fixture,
            const char *text)
{
  g_autoptr(GError) error = NULL;

  g_file_set_contents (fixture->path, text, -1, &error);
  g_assert_no_error (error);
}

static PaddockSessionRecord *
load_text (Fixture    *fixture,
           const char *text)
{
  g_autoptr(GError) error = NULL;
  PaddockSessionRecord *record;

  write_text (fixture, text);
  record = paddock_session_record_load (fixture->path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (record);
  return record;
}

static void
test_round_trip (Fixture       *fixture,
                 gconstpointer  data)
{
  const char *command[] = { "bash", "-c", "echo \"hi\"", NULL };
  const char *allow[] = { "example.org", "*.debian.org", NULL };
  PaddockSessionRecord written = {
    .id = g_strdup ("0123456789ab"),
    .name = g_strdup ("my session"),
    .workspace = g_strdup ("/home/u/project"),
    .command = g_strdupv ((char **) command),
    .profile = g_strdup ("host"),
    .owner = g_strdup (":1.42"),
    .state = g_strdup ("running"),
    .exit_status = 3,
    .created = 1764633600000000,
    .pid = 4242,
    .pid_start_time = 987654,
    .sandboxed = FALSE,
    .keeper_pid = 4241,
    .keeper_start_time = 987650,
    .init_pid = 0,
    .init_start_time = 0,
    .boot_id = g_strdup ("5d2a-boot"),
    .net = g_strdup ("proxy"),
    .allow_domains = g_strdupv ((char **) allow),
    .staging = NULL,
    .stage_limit = 3 * (guint64) 1024 * 1024 * 1024,
    .cgroup = NULL,
  };
  g_autofree char *json = paddock_session_record_to_json (&written);
  g_autoptr(PaddockSessionRecord) read = load_text (fixture, json);

  g_assert_cmpstr (read->id, ==, "0123456789ab");
  g_assert_cmpstr (read->name, ==, "my session");
  g_assert_cmpstr (read->workspace, ==, "/home/u/project");
  g_assert_cmpstrv (read->command, command);
  g_assert_cmpstr (read->profile, ==, "host");
  g_assert_cmpstr (read->owner, ==, ":1.42");
  g_assert_cmpstr (read->state, ==, "running");
  g_assert_cmpint (read->exit_status, ==, 3);
  g_assert_cmpint (read->created, ==, 1764633600000000);
  g_assert_cmpint (read->pid, ==, 4242);
  g_assert_cmpuint (read->pid_start_time, ==, 987654);
  g_assert_false (read->sandboxed);
  g_assert_cmpint (read->keeper_pid, ==, 4241);
  g_assert_cmpuint (read->keeper_start_time, ==, 987650);
  g_assert_cmpint (read->init_pid, ==, 0);
  g_assert_cmpstr (read->boot_id, ==, "5d2a-boot");
  g_assert_cmpstr (read->net, ==, "proxy");
  g_assert_cmpstrv (read->allow_domains, allow);
  /* No stage and no cgroup are written as such, and read back so. */
  g_assert_cmpstr (read->staging, ==, "none");
  g_assert_cmpstr (read->cgroup, ==, "");
  g_assert_cmpuint (read->stage_limit, ==, 3 * (guint64) 1024 * 1024 * 1024);
  g_assert_cmpuint (read->leftovers->len, ==, 0);

  /* Without a keeper running, none is named. */
  g_clear_pointer (&json, g_free);
  written.keeper_pid = 0;
  json = paddock_session_record_to_json (&written);
  g_assert_null (g_strstr_len (json, -1, "keeper_pid"));

  paddock_session_record_clear (&written);
}

/* A record of an older daemon: what is missing means the defaults. */
static void
test_defaults (Fixture       *fixture,
               gconstpointer  data)
{
  g_autoptr(PaddockSessionRecord) read = load_text (fixture, "{\"id\": \"abcdefghijkl\", \"command\": [\"sh\"]}");
  const char *command[] = { "sh", NULL };

  g_assert_cmpstr (read->id, ==, "abcdefghijkl");
  g_assert_cmpstrv (read->command, command);
  g_assert_cmpstr (read->name, ==, "abcdefghijkl");
  g_assert_cmpstr (read->workspace, ==, "/");
  g_assert_cmpstr (read->profile, ==, "safe");
  g_assert_cmpstr (read->owner, ==, "");
  g_assert_cmpstr (read->state, ==, "stopped");
  g_assert_cmpint (read->exit_status, ==, -1);
  g_assert_cmpint (read->pid, ==, 0);
  g_assert_true (read->sandboxed);
  g_assert_cmpint (read->keeper_pid, ==, 0);
  g_assert_cmpstr (read->boot_id, ==, "");
  g_assert_cmpstr (read->net, ==, "host");
  g_assert_null (read->allow_domains);
  g_assert_cmpstr (read->staging, ==, "none");
  g_assert_cmpuint (read->stage_limit, ==, 0);
  g_assert_null (read->cgroup);
  g_assert_cmpuint (read->leftovers->len, ==, 0);
}

static void
test_refused (Fixture       *fixture,
              gconstpointer  data)
{
  const char *bad[] = {
    "[1, 2]",
    "{\"command\": [\"sh\"]}",
    "{\"id\": \"short\", \"command\": [\"sh\"]}",
    "{\"id\": \"abcdefghijkl\"}",
    "{\"id\": \"abcdefghijkl\", \"command\": []}",
    "{\"id\": \"abcdefghijkl\", \"command\": \"sh\"}",
  };
  g_autoptr(GError) error = NULL;
  PaddockSessionRecord *record;

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      write_text (fixture, bad[i]);
      record = paddock_session_record_load (fixture->path, &error);
      g_assert_null (record);
      g_assert_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED);
      g_clear_error (&error);
    }

  /* Not JSON at all: the parser's error. */
  write_text (fixture, "{\"id\": ");
  record = paddock_session_record_load (fixture->path, &error);
  g_assert_null (record);
  g_assert_nonnull (error);
}

/* The allowlist read back is bounded as CreateSession bounds it, and has
 * only its strings. */
static void
test_allow_domains (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(GString) text = g_string_new ("{\"id\": \"abcdefghijkl\", \"command\": [\"sh\"], \"allow_domains\": [");
  g_autoptr(PaddockSessionRecord) mixed = NULL;
  g_autoptr(PaddockSessionRecord) too_long = NULL;
  const char *strings[] = { "a.org", "b.org", NULL };

  mixed = load_text (fixture, "{\"id\": \"abcdefghijkl\", \"command\": [\"sh\"],"
                              " \"allow_domains\": [\"a.org\", 7, [\"x\"], \"b.org\"]}");
  g_assert_cmpstrv (mixed->allow_domains, strings);

  for (guint i = 0; i <= PADDOCK_DOMAIN_RULES_MAX_PATTERNS; i++)
    g_string_append_printf (text, "%s\"d%u.org\"", i > 0 ? ", " : "", i);
  g_string_append (text, "]}");
  too_long = load_text (fixture, text->str);
  g_assert_null (too_long->allow_domains);
}

/* A daemon ending leftovers keeps the earlier record and adds what it
 * pinned; read back, only well-formed [pid, start time] pairs count. */
static void
test_leftovers (Fixture       *fixture,
                gconstpointer  data)
{
  const PaddockSessionRecordProcess named[] = { { 100, 5000 }, { 101, 0 }, { 102, 5002 } };
  g_autoptr(PaddockSessionRecord) earlier = NULL;
  g_autoptr(PaddockSessionRecord) again = NULL;
  g_autoptr(PaddockSessionRecord) damaged = NULL;
  g_autofree char *json = NULL;
  const PaddockSessionRecordProcess *process;

  earlier = load_text (fixture, "{\"id\": \"abcdefghijkl\", \"command\": [\"sh\"], \"state\": \"running\","
                                " \"pid\": 99, \"boot_id\": \"b\"}");
  json = paddock_session_record_to_json_with_leftovers (earlier->root, named, G_N_ELEMENTS (named));
  again = load_text (fixture, json);
  g_assert_cmpstr (again->state, ==, "running");
  g_assert_cmpint (again->pid, ==, 99);
  g_assert_cmpstr (again->boot_id, ==, "b");
  /* The one without a start time could be anyone by now: not named. */
  g_assert_cmpuint (again->leftovers->len, ==, 2);
  process = &g_array_index (again->leftovers, PaddockSessionRecordProcess, 0);
  g_assert_cmpint (process->pid, ==, 100);
  g_assert_cmpuint (process->start_time, ==, 5000);
  process = &g_array_index (again->leftovers, PaddockSessionRecordProcess, 1);
  g_assert_cmpint (process->pid, ==, 102);
  g_assert_cmpuint (process->start_time, ==, 5002);

  damaged = load_text (fixture, "{\"id\": \"abcdefghijkl\", \"command\": [\"sh\"], \"leftovers\": ["
                                "[1], [\"7\", 2], [0, 5], [-3, 5], [6, 0], [2147483647, 1], [8, 9, 10],"
                                " 12, {\"pid\": 1}, [300, 400]]}");
  g_assert_cmpuint (damaged->leftovers->len, ==, 1);
  process = &g_array_index (damaged->leftovers, PaddockSessionRecordProcess, 0);
  g_assert_cmpint (process->pid, ==, 300);
  g_assert_cmpuint (process->start_time, ==, 400);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/session-record/round-trip", Fixture, NULL, fixture_set_up, test_round_trip, fixture_tear_down);
  g_test_add ("/session-record/defaults", Fixture, NULL, fixture_set_up, test_defaults, fixture_tear_down);
  g_test_add ("/session-record/refused", Fixture, NULL, fixture_set_up, test_refused, fixture_tear_down);
  g_test_add ("/session-record/allow-domains", Fixture, NULL, fixture_set_up, test_allow_domains, fixture_tear_down);
  g_test_add ("/session-record/leftovers", Fixture, NULL, fixture_set_up, test_leftovers, fixture_tear_down);

  return g_test_run ();
}
