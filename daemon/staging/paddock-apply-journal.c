/* paddock-apply-journal.c — the batch's steps, folders and durable journal
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Part of the journaled apply (the steps: paddock-apply.c's head comment).
 */

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "paddock-apply.h"
#include "paddock-apply-restored.h"
#include "paddock-autofd.h"
#include "paddock-compat-openat2.h"
#include "paddock-compat-rename.h"
#include "paddock-content-hash.h"
#include "paddock-durable-file.h"
#include "paddock-sparse-copy.h"
#include "paddock-apply-private.h"

/* ---- the batch --------------------------------------------------------- */

/* The test switch PADDOCK_TEST_APPLY_STEP_HOLD=PATH in the daemon's own
 * environment (like PADDOCK_TEST_RECORD_WRITE_HOLD: nothing a client or a
 * session can set) holds a batch before its step N (PATH's content, a
 * number; the first step when it is empty) for as long as PATH exists (a
 * minute at most), so that a test can kill or replace the daemon with an
 * apply at a known point of its journal, with no timing in it. Logged
 * whenever it holds a batch. */
#define TEST_HOLD_MAX_USEC (60 * G_USEC_PER_SEC)

static void
test_step_hold (Batch *b)
{
  g_autofree char *text = NULL;
  gint64 deadline;
  guint64 at = 1;

  if (b->hold_path == NULL || !g_file_get_contents (b->hold_path, &text, NULL, NULL))
    return;
  g_strstrip (text);
  if (text[0] != '\0')
    at = g_ascii_strtoull (text, NULL, 10);
  if (at != b->step)
    return;
  g_message ("PADDOCK_TEST_APPLY_STEP_HOLD=%s exists, so batch %s waits before its step %u "
             "until it is gone (a test switch)", b->hold_path, b->batch_id, b->step);
  deadline = g_get_monotonic_time () + TEST_HOLD_MAX_USEC;
  while (g_file_test (b->hold_path, G_FILE_TEST_EXISTS) && g_get_monotonic_time () < deadline)
    g_usleep (10 * 1000);
}

void
step (Batch *b)
{
  b->step++;
  test_step_hold (b);
  if (b->fault_step != 0 && b->step == b->fault_step)
    raise (SIGKILL);
  /* Lets a test act as a concurrent writer at a chosen point. */
  if (b->stop_step != 0 && b->step == b->stop_step)
    raise (SIGSTOP);
}

/* The folder @rel of the workspace: an existing one opened beneath it, or
 * a new one made by this batch (registered when its temp is made). */
int
dir_fd_for (Batch      *b,
            const char *rel)
{
  gpointer value = g_hash_table_lookup (b->dirs, rel);
  int fd;

  if (value != NULL)
    return GPOINTER_TO_INT (value) - 1;

  fd = open_beneath (b->w_fd, rel, O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return -1;
  g_hash_table_insert (b->dirs, g_strdup (rel), GINT_TO_POINTER (fd + 1));
  return fd;
}

int
op_parent_fd (Batch *b,
              Op    *op)
{
  gpointer value = g_hash_table_lookup (b->dirs, op->parent);

  g_assert (value != NULL);
  return GPOINTER_TO_INT (value) - 1;
}

static const char *
op_kind_name (OpKind kind)
{
  switch (kind)
    {
    case OP_REMOVE: return "remove";
    case OP_DIR:    return "dir";
    case OP_CHMOD:  return "chmod";
    case OP_PUT:    return "put";
    default:        g_assert_not_reached ();
    }
}

void
add_b64 (JsonBuilder *builder,
         const char  *member,
         const char  *bytes)
{
  g_autofree char *b64 = g_base64_encode ((const guchar *) bytes, strlen (bytes));

  json_builder_set_member_name (builder, member);
  json_builder_add_string_value (builder, b64);
}

gboolean
journal_write (Batch       *b,
               const char  *state,
               const char  *ledger_file,
               const char  *ledger_line,
               GError     **error)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;
  GError *io_error = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "version");
  json_builder_add_int_value (builder, 1);
  json_builder_set_member_name (builder, "batch");
  json_builder_add_string_value (builder, b->batch_id);
  json_builder_set_member_name (builder, "state");
  json_builder_add_string_value (builder, state);
  /* Which workspace the names are relative to: recovery refuses to act on
   * another one (its temp names would not match anyway, but the journal
   * would be lost). */
  json_builder_set_member_name (builder, "workspace_dev");
  json_builder_add_int_value (builder, (gint64) b->w_dev);
  json_builder_set_member_name (builder, "workspace_ino");
  json_builder_add_int_value (builder, (gint64) b->w_ino);
  /* Where recovery records itself, whatever the state. */
  if (b->ledger_file != NULL)
    {
      json_builder_set_member_name (builder, "ledger");
      json_builder_add_string_value (builder, b->ledger_file);
    }
  if (ledger_file != NULL && ledger_line != NULL)
    {
      json_builder_set_member_name (builder, "ledger_line");
      json_builder_add_string_value (builder, ledger_line);
    }
  json_builder_set_member_name (builder, "ops");
  json_builder_begin_array (builder);
  for (guint i = 0; i < b->ops->len; i++)
    {
      Op *op = g_ptr_array_index (b->ops, i);

      if (op->noop)
        continue;
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "kind");
      json_builder_add_string_value (builder, op_kind_name (op->kind));
      add_b64 (builder, "parent", op->parent);
      add_b64 (builder, "name", op->name);
      if (op->temp != NULL)
        {
          json_builder_set_member_name (builder, "temp");
          json_builder_add_string_value (builder, op->temp);
        }
      json_builder_set_member_name (builder, "existed");
      json_builder_add_boolean_value (builder, op->existed);
      json_builder_set_member_name (builder, "ino");
      json_builder_add_int_value (builder, (gint64) op->ino);
      json_builder_set_member_name (builder, "old_mode");
      json_builder_add_int_value (builder, op->old_mode);
      /* The entry as the conflict check saw it: what a rollback must put
       * back, and tell apart from a new ctime (paddock-apply-restored.c). */
      if (op->check.present)
        {
          json_builder_set_member_name (builder, "check");
          json_builder_begin_array (builder);
          json_builder_add_int_value (builder, op->check.mode);
          json_builder_add_int_value (builder, (gint64) op->check.ino);
          json_builder_add_int_value (builder, (gint64) op->check.size);
          json_builder_add_int_value (builder, op->check.mtime_ns);
          json_builder_add_int_value (builder, op->check.ctime_ns);
          json_builder_end_array (builder);
        }
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (gen, root);
  text = json_generator_to_data (gen, NULL);

  step (b);
  if (!paddock_durable_file_replace (b->journal_path, text, -1, 0600, &io_error))
    return propagate_io_error (error, io_error);
  return TRUE;
}

gboolean
journal_remove (const char  *journal_dir,
                const char  *journal_path,
                GError     **error)
{
  paddock_autofd int dir_fd = -1;

  if (unlink (journal_path) != 0 && errno != ENOENT)
    return set_errno_error (error, errno, "Could not remove the journal", journal_path);
  dir_fd = open (journal_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0 || fsync (dir_fd) != 0)
    return set_errno_error (error, errno, "Could not sync", journal_dir);
  return TRUE;
}

int
lock_journal_dir (const char  *journal_dir,
                  GError     **error)
{
  g_autofree char *lock_path = g_build_filename (journal_dir, LOCK_NAME, NULL);
  paddock_autofd int fd = -1;

  if (g_mkdir_with_parents (journal_dir, 0700) != 0)
    {
      set_errno_error (error, errno, "Could not create", journal_dir);
      return -1;
    }
  fd = open (lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      set_errno_error (error, errno, "Could not open", lock_path);
      return -1;
    }
  /* One batch per workspace journal at a time: two would each take the
   * other's temps for their own leftovers. */
  if (flock (fd, LOCK_EX | LOCK_NB) != 0)
    {
      g_set_error (error, PADDOCK_APPLY_ERROR, PADDOCK_APPLY_ERROR_FAILED,
                   "Another batch is being applied with the journal in %s", journal_dir);
      return -1;
    }
  return paddock_steal_fd (&fd);
}
