/* test-session-record-salvage.c — what a damaged session.json still tells, as a restarted daemon reads it
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A record cut short at any byte, or replaced by garbage, still gives a
 * session to list: the folder's id, the workspace when it was whole, the
 * staging kind from the folder, and a reason; never a stage to apply to a
 * workspace it does not know.
 */

#include "config.h"

#include <string.h>

#include <glib/gstdio.h>

#include "paddock-session-record-salvage.h"

#define ID "0123456789ab"

typedef struct
{
  char *dir;
  char *session_dir;
  char *path;
} Fixture;

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  fixture->dir = g_dir_make_tmp ("paddock-salvage-XXXXXX", &error);
  g_assert_no_error (error);
  fixture->session_dir = g_build_filename (fixture->dir, ID, NULL);
  g_assert_cmpint (g_mkdir (fixture->session_dir, 0700), ==, 0);
  fixture->path = g_build_filename (fixture->session_dir, "session.json", NULL);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autofree char *upper = g_build_filename (fixture->session_dir, "stage", "upper", NULL);
  g_autofree char *stage = g_build_filename (fixture->session_dir, "stage", NULL);

  g_rmdir (upper);
  g_rmdir (stage);
  g_unlink (fixture->path);
  g_rmdir (fixture->session_dir);
  g_rmdir (fixture->dir);
  g_free (fixture->path);
  g_free (fixture->session_dir);
  g_free (fixture->dir);
}

static char *
full_record (void)
{
  const char *command[] = { "claude", "--resume", NULL };
  PaddockSessionRecord written = {
    .id = g_strdup (ID),
    .name = g_strdup ("my {session}, \"quoted\""),
    .workspace = g_strdup ("/home/u/project"),
    .command = g_strdupv ((char **) command),
    .profile = g_strdup ("safe"),
    .owner = g_strdup (":1.42"),
    .state = g_strdup ("exited"),
    .exit_status = 0,
    .boot_id = g_strdup ("b"),
    .net = g_strdup ("none"),
    .staging = g_strdup ("overlay"),
    .cgroup = NULL,
  };
  char *json = paddock_session_record_to_json (&written);

  paddock_session_record_clear (&written);
  return json;
}

static void
write_bytes (Fixture    *fixture,
             const char *bytes,
             gsize       length)
{
  g_autoptr(GError) error = NULL;

  g_file_set_contents (fixture->path, bytes, (gssize) length, &error);
  g_assert_no_error (error);
}

/* Cut at every byte: always a session with the folder's id and a reason;
 * the workspace exactly when its member was whole, and a stage only then. */
static void
test_every_cut (Fixture       *fixture,
                gconstpointer  data)
{
  g_autofree char *json = full_record ();
  gsize length = strlen (json);
  const char *after_workspace = strstr (json, "\"command\"");
  g_autofree char *upper = g_build_filename (fixture->session_dir, "stage", "upper", NULL);

  g_assert_nonnull (after_workspace);
  /* The comma that ends the workspace member (the record may be indented). */
  while (*after_workspace != ',')
    after_workspace--;
  /* The folder says overlay; the record's own "staging" is near its end. */
  g_assert_cmpint (g_mkdir_with_parents (upper, 0700), ==, 0);

  for (gsize cut = 0; cut < length; cut++)
    {
      g_autofree char *reason = NULL;
      g_autoptr(PaddockSessionRecord) record = NULL;

      write_bytes (fixture, json, cut);
      record = paddock_session_record_salvage (fixture->path, ID, "cut short", &reason);
      g_assert_nonnull (record);
      g_assert_cmpstr (record->id, ==, ID);
      g_assert_nonnull (record->command);
      g_assert_nonnull (record->command[0]);
      g_assert_nonnull (reason);
      g_assert_true (g_str_has_prefix (reason, "the session record is damaged (cut short)"));

      /* The comma after the workspace member is what proves it whole. */
      if (cut > (gsize) (after_workspace - json))
        {
          g_assert_cmpstr (record->workspace, ==, "/home/u/project");
          g_assert_cmpstr (record->staging, ==, "overlay");
          g_assert_null (strstr (reason, "workspace"));
        }
      else
        {
          g_assert_cmpstr (record->workspace, ==, "");
          g_assert_cmpstr (record->staging, ==, "none");
          g_assert_nonnull (strstr (reason, "lost: "));
        }
    }
}

static void
test_garbage (Fixture       *fixture,
              gconstpointer  data)
{
  const char garbage[] = "\x00\x01{\"id\":";
  g_autofree char *reason = NULL;
  g_autoptr(PaddockSessionRecord) record = NULL;

  write_bytes (fixture, garbage, sizeof garbage - 1);
  record = paddock_session_record_salvage (fixture->path, ID, "not JSON", &reason);
  g_assert_nonnull (record);
  g_assert_cmpstr (record->id, ==, ID);
  g_assert_cmpstr (record->command[0], ==, "(unknown)");
  g_assert_cmpstr (record->workspace, ==, "");
  g_assert_cmpstr (record->staging, ==, "none");
  g_assert_cmpstr (record->state, ==, "stopped");
  g_assert_cmpstr (reason, ==, "the session record is damaged (not JSON); lost: command, workspace "
                               "(its stage stays on disk but cannot be applied)");
}

/* A salvaged record says it is damaged, and so does every record written
 * after it and read back (the daemon rewrites the record at restore, whole
 * again): the mark and its reason go only with the session. */
static void
test_damaged_kept (Fixture       *fixture,
                   gconstpointer  data)
{
  const char cut[] = "{\"version\":1,\"id\":\"" ID "\",\"workspace\":\"/w\",\"command\":[\"sh\"],\"na";
  g_autofree char *reason = NULL;
  g_autofree char *json = NULL;
  g_autofree char *json_again = NULL;
  g_autoptr(PaddockSessionRecord) record = NULL;
  g_autoptr(PaddockSessionRecord) reread = NULL;
  g_autoptr(PaddockSessionRecord) whole = NULL;
  g_autoptr(GError) error = NULL;

  write_bytes (fixture, cut, sizeof cut - 1);
  record = paddock_session_record_salvage (fixture->path, ID, "cut short", &reason);
  g_assert_nonnull (record);
  g_assert_cmpstr (record->damaged, ==, reason);

  /* Rewritten as the session writes it, then read by the next daemon. */
  json = paddock_session_record_to_json (record);
  g_assert_true (g_file_set_contents (fixture->path, json, -1, &error));
  g_assert_no_error (error);
  reread = paddock_session_record_load (fixture->path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (reread);
  g_assert_cmpstr (reread->damaged, ==, reason);
  g_assert_cmpstr (reread->workspace, ==, "/w");

  /* A record that was never damaged says nothing of it. */
  g_clear_pointer (&reread->damaged, g_free);
  json_again = paddock_session_record_to_json (reread);
  g_assert_null (strstr (json_again, "damaged"));
  g_assert_true (g_file_set_contents (fixture->path, json_again, -1, &error));
  g_assert_no_error (error);
  whole = paddock_session_record_load (fixture->path, &error);
  g_assert_no_error (error);
  g_assert_null (whole->damaged);
}

/* Whole JSON that names another session, or whose folder is no id. */
static void
test_ids (Fixture       *fixture,
          gconstpointer  data)
{
  const char *other = "{\"id\":\"ffffffffffff\",\"workspace\":\"/w\",\"command\":[\"sh\"]}";
  g_autofree char *reason = NULL;
  g_autofree char *no_reason = NULL;
  g_autoptr(PaddockSessionRecord) record = NULL;
  g_autoptr(PaddockSessionRecord) none = NULL;

  write_bytes (fixture, other, strlen (other));
  record = paddock_session_record_salvage (fixture->path, ID, "id mismatch", &reason);
  g_assert_nonnull (record);
  g_assert_cmpstr (record->id, ==, ID);
  g_assert_cmpstr (record->workspace, ==, "/w");
  g_assert_cmpstr (record->command[0], ==, "sh");

  none = paddock_session_record_salvage (fixture->path, "../etc", "x", &no_reason);
  g_assert_null (none);
  g_assert_null (no_reason);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/session-record-salvage/every-cut", Fixture, NULL, fixture_set_up, test_every_cut, fixture_tear_down);
  g_test_add ("/session-record-salvage/garbage", Fixture, NULL, fixture_set_up, test_garbage, fixture_tear_down);
  g_test_add ("/session-record-salvage/damaged-kept", Fixture, NULL, fixture_set_up, test_damaged_kept,
              fixture_tear_down);
  g_test_add ("/session-record-salvage/ids", Fixture, NULL, fixture_set_up, test_ids, fixture_tear_down);

  return g_test_run ();
}
