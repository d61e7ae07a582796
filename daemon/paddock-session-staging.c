/* paddock-session-staging.c — org.paddock.Session1's review, apply, drop and checkpoints
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Each call runs in a worker thread (a review reads files, an apply writes
 * and fsyncs them) and answers from the main thread. The stage runs its
 * operations one at a time, so two clients applying at once are serialised
 * and the second one sees the first's result.
 */

#include "config.h"

#include <malloc.h>
#include <string.h>

#include "paddock-compat-proc.h"
#include "paddock-error.h"
#include "paddock-session-impl-private.h"

typedef enum {
  STAGING_LIST_CHANGES,
  STAGING_LIST_CHANGE_DETAILS,
  STAGING_GET_DIFF,
  STAGING_APPLY,
  STAGING_REVIEW,
  STAGING_APPLY_REVIEWED,
  STAGING_GET_REVIEWED_DIFF,
  STAGING_DROP,
  STAGING_CREATE_CHECKPOINT,
  STAGING_LIST_CHECKPOINTS,
  STAGING_RESTORE_CHECKPOINT,
} StagingOp;

typedef struct {
  StagingOp              op;
  PaddockSessionImpl    *session;
  PaddockStage          *stage;
  GDBusMethodInvocation *invocation;
  GStrv                  paths;
  GStrv                  force_paths;
  char                  *name;      /* a path (GetDiff), a checkpoint name */
  char                  *token;     /* a review token */
  GStrv                  metadata_paths;
  gboolean               frozen;
  GCancellable          *cancellable;
  guint                  caller_watch;
} StagingCall;

static void
staging_call_free (StagingCall *call)
{
  if (call->caller_watch != 0)
    g_bus_unwatch_name (call->caller_watch);
  g_clear_object (&call->cancellable);
  g_clear_object (&call->session);
  g_clear_object (&call->stage);
  g_clear_object (&call->invocation);
  g_clear_pointer (&call->paths, g_strfreev);
  g_clear_pointer (&call->force_paths, g_strfreev);
  g_clear_pointer (&call->metadata_paths, g_strfreev);
  g_clear_pointer (&call->name, g_free);
  g_clear_pointer (&call->token, g_free);
  g_free (call);
}

/* The staging library speaks its own error domains (and GIO's for the
 * filesystem); clients get org.paddock.Error.* names. */
GError *
_paddock_session_error_from_staging (const GError *error)
{
  PaddockError code = PADDOCK_ERROR_FAILED;

  if (error->domain == PADDOCK_ERROR)
    return g_error_copy (error);
  if (error->domain == PADDOCK_STAGING_ERROR)
    {
      switch (error->code)
        {
        case PADDOCK_STAGING_ERROR_NOT_FOUND:
          code = PADDOCK_ERROR_NOT_FOUND;
          break;
        case PADDOCK_STAGING_ERROR_INVALID_PATH:
          code = PADDOCK_ERROR_INVALID_ARGUMENT;
          break;
        case PADDOCK_STAGING_ERROR_CONFLICT:
          code = PADDOCK_ERROR_CONFLICT;
          break;
        case PADDOCK_STAGING_ERROR_TOO_LARGE:
          code = PADDOCK_ERROR_QUOTA_EXCEEDED;
          break;
        case PADDOCK_STAGING_ERROR_REVIEW_STALE:
          code = PADDOCK_ERROR_REVIEW_STALE;
          break;
        case PADDOCK_STAGING_ERROR_REVIEW_EXPIRED:
          code = PADDOCK_ERROR_REVIEW_EXPIRED;
          break;
        case PADDOCK_STAGING_ERROR_METADATA:
          code = PADDOCK_ERROR_INVALID_ARGUMENT;
          break;
        default:
          code = PADDOCK_ERROR_FAILED;
          break;
        }
    }
  else if (error->domain == PADDOCK_APPLY_ERROR)
    {
      switch (error->code)
        {
        case PADDOCK_APPLY_ERROR_CONFLICT:
          code = PADDOCK_ERROR_CONFLICT;
          break;
        case PADDOCK_APPLY_ERROR_INVALID_PATH:
          code = PADDOCK_ERROR_INVALID_ARGUMENT;
          break;
        case PADDOCK_APPLY_ERROR_STALE:
          code = PADDOCK_ERROR_REVIEW_STALE;
          break;
        case PADDOCK_APPLY_ERROR_NO_SPACE:
          code = PADDOCK_ERROR_NO_SPACE;
          break;
        default:
          code = PADDOCK_ERROR_FAILED;
          break;
        }
    }
  else if (error->domain == G_IO_ERROR)
    {
      switch (error->code)
        {
        case G_IO_ERROR_NOT_FOUND:
          code = PADDOCK_ERROR_NOT_FOUND;
          break;
        case G_IO_ERROR_INVALID_ARGUMENT:
        case G_IO_ERROR_EXISTS:
          code = PADDOCK_ERROR_INVALID_ARGUMENT;
          break;
        default:
          code = PADDOCK_ERROR_FAILED;
          break;
        }
    }
  return g_error_new_literal (PADDOCK_ERROR, code, error->message);
}

/* Who applied: the caller as the bus knows it (uid and pid come from the
 * kernel through the bus daemon, not from anything the caller says). */
char *
_paddock_session_impl_describe_caller (GDBusMethodInvocation *invocation)
{
  GDBusConnection *connection = g_dbus_method_invocation_get_connection (invocation);
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) credentials = NULL;
  guint32 uid = G_MAXUINT32;
  guint32 pid = 0;
  g_autofree char *comm = NULL;

  if (sender == NULL)
    return g_strdup ("a peer-to-peer client");

  reply = g_dbus_connection_call_sync (connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "GetConnectionCredentials",
                                       g_variant_new ("(s)", sender), G_VARIANT_TYPE ("(a{sv})"),
                                       G_DBUS_CALL_FLAGS_NONE, 1000, NULL, NULL);
  if (reply != NULL)
    {
      credentials = g_variant_get_child_value (reply, 0);
      g_variant_lookup (credentials, "UnixUserID", "u", &uid);
      g_variant_lookup (credentials, "ProcessID", "u", &pid);
    }
  if (pid != 0)
    comm = paddock_compat_proc_read_name (pid);
  return g_strdup_printf ("%s uid=%d pid=%u (%s)", sender,
                          uid == G_MAXUINT32 ? -1 : (int) uid, pid, comm != NULL ? comm : "?");
}

static GVariant *
bytestring_array (GPtrArray *paths)
{
  GVariantBuilder builder;

  g_variant_builder_init (&builder, G_VARIANT_TYPE ("aay"));
  for (guint i = 0; paths != NULL && i < paths->len; i++)
    g_variant_builder_add_value (&builder, g_variant_new_bytestring (g_ptr_array_index (paths, i)));
  return g_variant_builder_end (&builder);
}

/* Rows as a(ayayssbuub), or with @with_reason a(ayayssbuubs). */
static GVariant *
rows_variant (GPtrArray *changes,
              gboolean   with_reason)
{
  GVariantBuilder builder;

  g_variant_builder_init (&builder, with_reason ? G_VARIANT_TYPE ("a(ayayssbuubs)")
                                                : G_VARIANT_TYPE ("a(ayayssbuub)"));
  for (guint i = 0; i < changes->len; i++)
    {
      PaddockChange *change = g_ptr_array_index (changes, i);
      const char *old_path = paddock_change_get_old_path (change);
      const char *reason = paddock_change_get_metadata_reason (change);
      GVariant *row[9] = {
        g_variant_new_bytestring (paddock_change_get_path (change)),
        g_variant_new_bytestring (old_path != NULL ? old_path : ""),
        g_variant_new_string (paddock_change_kind_to_string (paddock_change_get_kind (change))),
        g_variant_new_string (paddock_entry_type_to_string (paddock_change_get_entry_type (change))),
        g_variant_new_boolean (paddock_change_get_binary (change)),
        g_variant_new_uint32 (paddock_change_get_added_lines (change)),
        g_variant_new_uint32 (paddock_change_get_removed_lines (change)),
        g_variant_new_boolean (paddock_change_get_conflict (change)),
        g_variant_new_string (reason != NULL ? reason : ""),
      };

      g_variant_builder_add_value (&builder, g_variant_new_tuple (row, with_reason ? 9 : 8));
      if (!with_reason)
        g_variant_unref (g_variant_ref_sink (row[8]));
    }
  return g_variant_builder_end (&builder);
}

static GVariant *
list_changes_reply (PaddockReview *review)
{
  return g_variant_new ("(@a(ayayssbuub))", rows_variant (paddock_review_get_changes (review), FALSE));
}

static GVariant *
review_reply (PaddockReviewToken *token)
{
  PaddockReview *review = paddock_review_token_get_review (token);
  GVariantDict dict;

  g_variant_dict_init (&dict, NULL);
  g_variant_dict_insert_value (&dict, "changes", rows_variant (paddock_review_get_changes (review), FALSE));
  g_variant_dict_insert_value (&dict, "metadata", rows_variant (paddock_review_get_metadata (review), TRUE));
  g_variant_dict_insert (&dict, "token", "s", paddock_review_token_get_id (token));
  g_variant_dict_insert (&dict, "pinned", "u", paddock_review_token_get_n_pins (token));
  return g_variant_new ("(@a{sv})", g_variant_dict_end (&dict));
}

static GVariant *
apply_reviewed_reply (PaddockApplyResult *result)
{
  GVariantDict dict;

  g_variant_dict_init (&dict, NULL);
  g_variant_dict_insert_value (&dict, "applied", bytestring_array (result->applied));
  g_variant_dict_insert_value (&dict, "conflicts", bytestring_array (result->conflicts));
  g_variant_dict_insert (&dict, "batch", "s", result->batch_id);
  return g_variant_new ("(@a{sv})", g_variant_dict_end (&dict));
}

static GVariant *
list_change_details_reply (PaddockReview *review)
{
  GPtrArray *changes = paddock_review_get_changes (review);
  GVariantBuilder builder;

  g_variant_builder_init (&builder, G_VARIANT_TYPE ("a(aya{sv})"));
  for (guint i = 0; i < changes->len; i++)
    {
      PaddockChange *change = g_ptr_array_index (changes, i);
      const char *link_of = paddock_change_get_hardlink_of (change);
      const char *why = paddock_change_get_unappliable (change);
      GVariantBuilder dict;

      g_variant_builder_init (&dict, G_VARIANT_TYPE_VARDICT);
      g_variant_builder_add (&dict, "{sv}", "size", g_variant_new_uint64 (paddock_change_get_size (change)));
      g_variant_builder_add (&dict, "{sv}", "allocated",
                             g_variant_new_uint64 (paddock_change_get_allocated (change)));
      if (link_of != NULL)
        g_variant_builder_add (&dict, "{sv}", "hardlink_of", g_variant_new_bytestring (link_of));
      if (why != NULL)
        g_variant_builder_add (&dict, "{sv}", "unappliable", g_variant_new_string (why));
      g_variant_builder_add (&builder, "(@ay@a{sv})",
                             g_variant_new_bytestring (paddock_change_get_path (change)),
                             g_variant_builder_end (&dict));
    }
  return g_variant_new ("(@a(aya{sv}))", g_variant_builder_end (&builder));
}

static void
staging_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  StagingCall *call = task_data;
  g_autoptr(GError) error = NULL;
  GVariant *reply = NULL;

  switch (call->op)
    {
    case STAGING_LIST_CHANGES:
      {
        g_autoptr(PaddockReview) review = paddock_stage_review (call->stage, cancellable, &error);
        if (review != NULL)
          reply = list_changes_reply (review);
      }
      break;

    case STAGING_LIST_CHANGE_DETAILS:
      {
        g_autoptr(PaddockReview) review = paddock_stage_review (call->stage, cancellable, &error);
        if (review != NULL)
          reply = list_change_details_reply (review);
      }
      break;

    case STAGING_GET_DIFF:
      {
        g_autoptr(GBytes) diff = paddock_stage_get_diff (call->stage, call->name, cancellable, &error);

        if (diff != NULL)
          reply = g_variant_new ("(@ay)",
                                 g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, diff, TRUE));
      }
      break;

    case STAGING_APPLY:
      {
        g_autofree char *who = _paddock_session_impl_describe_caller (call->invocation);
        g_autoptr(PaddockApplyResult) result = NULL;

        if (paddock_stage_apply (call->stage, (const char *const *) call->paths,
                                 (const char *const *) call->force_paths, who, &result,
                                 cancellable, &error))
          reply = g_variant_new ("(@aay@aays)", bytestring_array (result->applied),
                                 bytestring_array (result->conflicts), result->batch_id);
      }
      break;

    case STAGING_REVIEW:
      {
        g_autoptr(PaddockReviewToken) token = paddock_stage_review_pinned (call->stage, cancellable, &error);
        if (token != NULL)
          reply = review_reply (token);
      }
      break;

    case STAGING_APPLY_REVIEWED:
      {
        g_autofree char *who = _paddock_session_impl_describe_caller (call->invocation);
        g_autoptr(PaddockApplyResult) result = NULL;

        if (paddock_stage_apply_reviewed (call->stage, call->token, (const char *const *) call->paths,
                                          (const char *const *) call->force_paths,
                                          (const char *const *) call->metadata_paths, who, &result,
                                          cancellable, &error))
          reply = apply_reviewed_reply (result);
      }
      break;

    case STAGING_GET_REVIEWED_DIFF:
      {
        g_autoptr(GBytes) diff = paddock_stage_get_reviewed_diff (call->stage, call->token, call->name, &error);

        if (diff != NULL)
          reply = g_variant_new ("(@ay)",
                                 g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, diff, TRUE));
      }
      break;

    case STAGING_DROP:
      if (paddock_stage_drop (call->stage, (const char *const *) call->paths, cancellable, &error))
        reply = g_variant_new ("()");
      break;

    case STAGING_CREATE_CHECKPOINT:
      {
        g_autofree char *name = paddock_stage_create_checkpoint (call->stage, call->name, cancellable, &error);
        if (name != NULL)
          reply = g_variant_new ("(s)", name);
      }
      break;

    case STAGING_LIST_CHECKPOINTS:
      {
        g_autoptr(GPtrArray) list = paddock_stage_list_checkpoints (call->stage, &error);
        GVariantBuilder builder;

        if (list == NULL)
          break;
        g_variant_builder_init (&builder, G_VARIANT_TYPE ("a(st)"));
        for (guint i = 0; i < list->len; i++)
          {
            PaddockCheckpointInfo *info = g_ptr_array_index (list, i);
            g_variant_builder_add (&builder, "(st)", info->name, info->created_usec);
          }
        reply = g_variant_new ("(@a(st))", g_variant_builder_end (&builder));
      }
      break;

    case STAGING_RESTORE_CHECKPOINT:
      if (paddock_stage_restore_checkpoint (call->stage, call->name, cancellable, &error))
        reply = g_variant_new ("()");
      break;

    default:
      g_assert_not_reached ();
    }

  if (reply == NULL)
    g_task_return_error (task, _paddock_session_error_from_staging (error));
  else
    g_task_return_pointer (task, g_variant_ref_sink (reply), (GDestroyNotify) g_variant_unref);
}

/* LastRecovery: what the stage's journal folder says (an Apply recovers
 * a batch left behind before it starts its own). */
void
_paddock_session_impl_refresh_last_recovery (PaddockSessionImpl *self)
{
  PaddockStage *stage = _paddock_session_impl_get_stage (self);
  g_autofree char *last = stage != NULL ? paddock_stage_dup_last_recovery (stage) : NULL;

  if (last != NULL)
    g_strstrip (last);
  /* Our own file, but bounded and checked all the same: it is a property. */
  if (last != NULL && (strlen (last) > 4096 || !g_utf8_validate (last, -1, NULL)))
    g_clear_pointer (&last, g_free);
  paddock_ipc_session1_set_last_recovery (PADDOCK_IPC_SESSION1 (self), last != NULL ? last : "");
}

/* Every session's Apply calls in flight, by their cancellables (main
 * thread only): a daemon being replaced answers them before it hands its
 * sessions over (paddock-daemon.c), and takes no new ones meanwhile. */
static GPtrArray *applies;
static gboolean refuse_applies;

static gboolean
is_apply (StagingOp op)
{
  return op == STAGING_APPLY || op == STAGING_APPLY_REVIEWED;
}

guint
paddock_session_impl_applies_in_flight (void)
{
  return applies != NULL ? applies->len : 0;
}

void
paddock_session_impl_refuse_applies (void)
{
  refuse_applies = TRUE;
}

/* Each one still before its commit point rolls back whole and fails. */
void
paddock_session_impl_cancel_applies (void)
{
  for (guint i = 0; applies != NULL && i < applies->len; i++)
    g_cancellable_cancel (g_ptr_array_index (applies, i));
}

static void
staging_done_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  StagingCall *call = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_task_propagate_pointer (G_TASK (result), &error);

  if (call->frozen)
    _paddock_session_impl_freeze (call->session, FALSE);
  /* Here, in the main context the watch was made in (task data may be
   * freed in the worker thread). */
  if (call->caller_watch != 0)
    {
      g_bus_unwatch_name (call->caller_watch);
      call->caller_watch = 0;
    }
  if (call->op == STAGING_APPLY)
    _paddock_session_impl_refresh_last_recovery (call->session);
  if (is_apply (call->op))
    g_ptr_array_remove (applies, call->cancellable);

  /* The answer consumes the reference the handler was given. */
  if (reply == NULL)
    g_dbus_method_invocation_return_gerror (g_steal_pointer (&call->invocation), error);
  else
    g_dbus_method_invocation_return_value (g_steal_pointer (&call->invocation), reply);

  /* A review or a batch of many entries freed its rows and plans in the
   * worker (the stage keeps one review at most): hand the pages back to
   * the system rather than keeping the peak for the daemon's lifetime.
   * Cheap (milliseconds), and only after the calls that allocate per entry. */
  if (call->op == STAGING_LIST_CHANGES || call->op == STAGING_LIST_CHANGE_DETAILS ||
      call->op == STAGING_APPLY || call->op == STAGING_REVIEW || call->op == STAGING_APPLY_REVIEWED)
    malloc_trim (0);
}

/* What one call may name: more than a review list could reasonably hold
 * is a mistake or an attempt to make the daemon work for nothing. */
#define PATHS_MAX      200000
#define PATH_BYTES_MAX 4096

static gboolean
paths_within_bounds (const char *const *paths)
{
  guint n = 0;

  for (; paths != NULL && paths[n] != NULL; n++)
    if (paths[n][0] == '\0' || strlen (paths[n]) > PATH_BYTES_MAX || n >= PATHS_MAX)
      return FALSE;
  return TRUE;
}

static void
caller_vanished_cb (GDBusConnection *connection,
                    const char      *name,
                    gpointer         user_data)
{
  GCancellable *cancellable = user_data;

  if (!g_cancellable_is_cancelled (cancellable))
    g_message ("%s left before its staging call finished: stopping the work", name);
  g_cancellable_cancel (cancellable);
}

static gboolean
start_call_full (PaddockIpcSession1    *session,
                 GDBusMethodInvocation *invocation,
                 StagingOp              op,
                 const char *const     *paths,
                 const char *const     *force_paths,
                 const char *const     *metadata_paths,
                 const char            *token,
                 const char            *name)
{
  PaddockSessionImpl *self = PADDOCK_SESSION_IMPL (session);
  PaddockStage *stage = _paddock_session_impl_get_stage (self);
  g_autoptr(GTask) task = NULL;
  StagingCall *call;

  if (g_strcmp0 (paddock_ipc_session1_get_state (session), "destroyed") == 0)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
                                             "The session was destroyed");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (stage == NULL)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED,
                                             "This session runs with the host profile: it writes to "
                                             "the workspace directly and nothing is staged");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  /* What an earlier daemon left of the session may still be writing
   * through its stage, and nothing of ours can freeze it (its cgroup, where
   * it has one, is being emptied; without one there is no freezer at all):
   * a batch or a copy made now would not be of one moment. Reading the
   * review list is harmless, as under a running agent. */
  if ((op == STAGING_APPLY || op == STAGING_APPLY_REVIEWED || op == STAGING_CREATE_CHECKPOINT ||
       op == STAGING_DROP ||
       op == STAGING_RESTORE_CHECKPOINT) && _paddock_session_impl_refuse_leftovers (self, invocation))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (is_apply (op) && refuse_applies)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_BUSY,
                                             "This daemon is being replaced; apply again once "
                                             "the new one serves");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if ((op == STAGING_DROP || op == STAGING_RESTORE_CHECKPOINT) && _paddock_session_impl_is_live (self))
    {
      /* Under a running agent the stage is a mounted layer: files it holds
       * open would keep their staged content whatever we changed. */
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_BUSY,
                                             "The session is running; stop it first (paddockctl stop %s)",
                                             paddock_session_impl_get_id (self));
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  if (!paths_within_bounds (paths) || !paths_within_bounds (force_paths) ||
      !paths_within_bounds (metadata_paths) ||
      (name != NULL && strlen (name) > PATH_BYTES_MAX))
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                             "At most %u paths of at most %u bytes each, none empty",
                                             PATHS_MAX, PATH_BYTES_MAX);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  call = g_new0 (StagingCall, 1);
  call->op = op;
  call->session = g_object_ref (self);
  call->stage = g_object_ref (stage);
  /* The handler's reference, answered (and so released) in
   * staging_done_cb(). */
  call->invocation = invocation;
  call->paths = g_strdupv ((char **) paths);
  call->force_paths = g_strdupv ((char **) force_paths);
  call->metadata_paths = g_strdupv ((char **) metadata_paths);
  call->name = g_strdup (name);
  call->token = g_strdup (token);
  /* A review of a huge stage or an apply of a huge batch is work for a
   * client: when the client is gone (it gave up waiting, or was killed),
   * the work stops (an Apply then rolls back whole). */
  call->cancellable = g_cancellable_new ();
  if (g_dbus_method_invocation_get_sender (invocation) != NULL)
    call->caller_watch =
      g_bus_watch_name_on_connection (g_dbus_method_invocation_get_connection (invocation),
                                      g_dbus_method_invocation_get_sender (invocation),
                                      G_BUS_NAME_WATCHER_FLAGS_NONE, NULL, caller_vanished_cb,
                                      g_object_ref (call->cancellable), g_object_unref);
  /* The stage holds still for a batch or a copy (where a cgroup allows). */
  if (op == STAGING_APPLY || op == STAGING_APPLY_REVIEWED || op == STAGING_CREATE_CHECKPOINT)
    call->frozen = _paddock_session_impl_freeze (self, TRUE);

  if (is_apply (op))
    {
      if (applies == NULL)
        applies = g_ptr_array_new_with_free_func (g_object_unref);
      g_ptr_array_add (applies, g_object_ref (call->cancellable));
    }

  task = g_task_new (self, call->cancellable, staging_done_cb, NULL);
  /* The answer still goes out (to nobody, if the caller is gone). */
  g_task_set_check_cancellable (task, FALSE);
  g_task_set_source_tag (task, start_call_full);
  g_task_set_task_data (task, call, (GDestroyNotify) staging_call_free);
  g_task_run_in_thread (task, staging_thread);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
start_call (PaddockIpcSession1    *session,
            GDBusMethodInvocation *invocation,
            StagingOp              op,
            const char *const     *paths,
            const char *const     *force_paths,
            const char            *name)
{
  return start_call_full (session, invocation, op, paths, force_paths, NULL, NULL, name);
}

gboolean
_paddock_session_impl_handle_review (PaddockIpcSession1    *session,
                                     GDBusMethodInvocation *invocation,
                                     GVariant              *options)
{
  return start_call (session, invocation, STAGING_REVIEW, NULL, NULL, NULL);
}

/* An aay option, or an error when it is there with another type. */
static gboolean
lookup_paths_option (GVariant   *options,
                     const char *key,
                     GStrv      *out)
{
  g_autoptr(GVariant) value = g_variant_lookup_value (options, key, NULL);

  *out = NULL;
  if (value == NULL)
    return TRUE;
  if (!g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING_ARRAY))
    return FALSE;
  *out = g_variant_dup_bytestring_array (value, NULL);
  return TRUE;
}

/* A token is 32 hex digits; anything much longer is not one of ours. */
#define TOKEN_BYTES_MAX 64

static gboolean
token_is_valid (GDBusMethodInvocation *invocation,
                const char            *token)
{
  if (token[0] != '\0' && strlen (token) <= TOKEN_BYTES_MAX)
    return TRUE;
  g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                         "The token is the one a Review returned");
  return FALSE;
}

gboolean
_paddock_session_impl_handle_apply_reviewed (PaddockIpcSession1    *session,
                                             GDBusMethodInvocation *invocation,
                                             const char            *token,
                                             const char *const     *paths,
                                             GVariant              *options)
{
  g_auto(GStrv) force_paths = NULL;
  g_auto(GStrv) metadata_paths = NULL;

  if (!lookup_paths_option (options, "force_paths", &force_paths) ||
      !lookup_paths_option (options, "metadata_paths", &metadata_paths))
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                             "force_paths and metadata_paths are arrays of "
                                             "byte strings (aay)");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (!token_is_valid (invocation, token))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  return start_call_full (session, invocation, STAGING_APPLY_REVIEWED, paths,
                          (const char *const *) force_paths, (const char *const *) metadata_paths,
                          token, NULL);
}

gboolean
_paddock_session_impl_handle_get_reviewed_diff (PaddockIpcSession1    *session,
                                                GDBusMethodInvocation *invocation,
                                                const char            *token,
                                                const char            *path)
{
  if (!token_is_valid (invocation, token))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  return start_call_full (session, invocation, STAGING_GET_REVIEWED_DIFF, NULL, NULL, NULL, token, path);
}

gboolean
_paddock_session_impl_handle_list_changes (PaddockIpcSession1    *session,
                                           GDBusMethodInvocation *invocation)
{
  return start_call (session, invocation, STAGING_LIST_CHANGES, NULL, NULL, NULL);
}

gboolean
_paddock_session_impl_handle_list_change_details (PaddockIpcSession1    *session,
                                                  GDBusMethodInvocation *invocation)
{
  return start_call (session, invocation, STAGING_LIST_CHANGE_DETAILS, NULL, NULL, NULL);
}

gboolean
_paddock_session_impl_handle_get_diff (PaddockIpcSession1    *session,
                                       GDBusMethodInvocation *invocation,
                                       const char            *path)
{
  return start_call (session, invocation, STAGING_GET_DIFF, NULL, NULL, path);
}

gboolean
_paddock_session_impl_handle_apply (PaddockIpcSession1    *session,
                                    GDBusMethodInvocation *invocation,
                                    const char *const     *paths,
                                    const char *const     *force_paths)
{
  return start_call (session, invocation, STAGING_APPLY, paths, force_paths, NULL);
}

gboolean
_paddock_session_impl_handle_drop (PaddockIpcSession1    *session,
                                   GDBusMethodInvocation *invocation,
                                   const char *const     *paths)
{
  return start_call (session, invocation, STAGING_DROP, paths, NULL, NULL);
}

gboolean
_paddock_session_impl_handle_create_checkpoint (PaddockIpcSession1    *session,
                                                GDBusMethodInvocation *invocation,
                                                const char            *name)
{
  return start_call (session, invocation, STAGING_CREATE_CHECKPOINT, NULL, NULL, name);
}

gboolean
_paddock_session_impl_handle_list_checkpoints (PaddockIpcSession1    *session,
                                               GDBusMethodInvocation *invocation)
{
  return start_call (session, invocation, STAGING_LIST_CHECKPOINTS, NULL, NULL, NULL);
}

gboolean
_paddock_session_impl_handle_restore_checkpoint (PaddockIpcSession1    *session,
                                                 GDBusMethodInvocation *invocation,
                                                 const char            *name)
{
  return start_call (session, invocation, STAGING_RESTORE_CHECKPOINT, NULL, NULL, name);
}
