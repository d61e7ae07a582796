/* paddock-session-staging.c — org.paddock.Session1's review, apply, drop and checkpoints
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Each call runs in a worker thread (a review reads files, an apply writes
 * and fsyncs them) and answers from the main thread. The stage runs its
 * operations one at a time, so two clients applying at once are serialised
 * and the second one sees the first's result.
 *
 * Given the session's id, stage and gate (paddock-session-gate.c) when
 * made, it never calls into the session: it asks the gate whether the
 * session takes a call that needs it running (one whose leftovers are
 * being ended answers Busy itself), whether any of its processes may still
 * run, to hold its processes still for a batch or a copy, and says what
 * the stage's journal folder last recovered ("last-recovery"). A call
 * keeps a reference to the D-Bus object it came to until answered.
 */

#include "config.h"

#include <malloc.h>
#include <string.h>

#include "paddock-compat-proc.h"
#include "paddock-error.h"
#include "paddock-session-calls.h"
#include "paddock-session-staging.h"

struct _PaddockSessionStaging
{
  GObject       parent_instance;

  PaddockSessionCallHandlers calls;  /* its handle-* handlers on the session's skeleton */

  char         *session_id;
  PaddockStage *stage;       /* NULL: the session stages nothing */
  PaddockSessionGate *gate;
};

enum {
  SIGNAL_LAST_RECOVERY,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (PaddockSessionStaging, paddock_session_staging, G_TYPE_OBJECT)

static void
paddock_session_staging_finalize (GObject *object)
{
  PaddockSessionStaging *self = PADDOCK_SESSION_STAGING (object);

  paddock_session_call_handlers_clear (&self->calls);
  g_free (self->session_id);
  g_clear_object (&self->stage);
  g_clear_object (&self->gate);

  G_OBJECT_CLASS (paddock_session_staging_parent_class)->finalize (object);
}

static void
paddock_session_staging_class_init (PaddockSessionStagingClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = paddock_session_staging_finalize;

  /**
   * PaddockSessionStaging::last-recovery:
   * @text: the LastRecovery property's value now ("" for none)
   */
  signals[SIGNAL_LAST_RECOVERY] = g_signal_new ("last-recovery", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                                0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
paddock_session_staging_init (PaddockSessionStaging *self)
{
}

PaddockSessionStaging *
paddock_session_staging_new (const char         *session_id,
                             PaddockStage       *stage,
                             PaddockSessionGate *gate)
{
  PaddockSessionStaging *self;

  g_return_val_if_fail (session_id != NULL, NULL);
  g_return_val_if_fail (PADDOCK_IS_SESSION_GATE (gate), NULL);

  self = g_object_new (PADDOCK_TYPE_SESSION_STAGING, NULL);
  self->session_id = g_strdup (session_id);
  self->stage = stage != NULL ? g_object_ref (stage) : NULL;
  self->gate = g_object_ref (gate);
  return self;
}

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
  PaddockIpcSession1    *session;   /* kept until the call is answered */
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
        g_autofree char *who = paddock_session_describe_caller (call->invocation);
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
        g_autofree char *who = paddock_session_describe_caller (call->invocation);
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
    g_task_return_error (task, paddock_session_error_from_staging (error));
  else
    g_task_return_pointer (task, g_variant_ref_sink (reply), (GDestroyNotify) g_variant_unref);
}

/* LastRecovery: what the stage's journal folder says (an Apply recovers
 * a batch left behind before it starts its own). */
void
paddock_session_staging_refresh_last_recovery (PaddockSessionStaging *self)
{
  PaddockStage *stage = self->stage;
  g_autofree char *last = stage != NULL ? paddock_stage_dup_last_recovery (stage) : NULL;

  if (last != NULL)
    g_strstrip (last);
  /* Our own file, but bounded and checked all the same: it is a property. */
  if (last != NULL && (strlen (last) > 4096 || !g_utf8_validate (last, -1, NULL)))
    g_clear_pointer (&last, g_free);
  g_signal_emit (self, signals[SIGNAL_LAST_RECOVERY], 0, last != NULL ? last : "");
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
paddock_session_staging_applies_in_flight (void)
{
  return applies != NULL ? applies->len : 0;
}

void
paddock_session_staging_refuse_applies (void)
{
  refuse_applies = TRUE;
}

/* Each one still before its commit point rolls back whole and fails. */
void
paddock_session_staging_cancel_applies (void)
{
  for (guint i = 0; applies != NULL && i < applies->len; i++)
    g_cancellable_cancel (g_ptr_array_index (applies, i));
}

static void
staging_done_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  PaddockSessionStaging *self = PADDOCK_SESSION_STAGING (source);
  StagingCall *call = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_task_propagate_pointer (G_TASK (result), &error);

  if (call->frozen)
    paddock_session_gate_freeze (self->gate, FALSE);
  /* Here, in the main context the watch was made in (task data may be
   * freed in the worker thread). */
  if (call->caller_watch != 0)
    {
      g_bus_unwatch_name (call->caller_watch);
      call->caller_watch = 0;
    }
  if (call->op == STAGING_APPLY)
    paddock_session_staging_refresh_last_recovery (self);
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
start_call_full (PaddockSessionStaging *self,
                 PaddockIpcSession1    *session,
                 GDBusMethodInvocation *invocation,
                 StagingOp              op,
                 const char *const     *paths,
                 const char *const     *force_paths,
                 const char *const     *metadata_paths,
                 const char            *token,
                 const char            *name)
{
  PaddockStage *stage = self->stage;
  g_autoptr(GTask) task = NULL;
  StagingCall *call;
  gboolean refused = FALSE;
  gboolean live = FALSE;

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
  if (op == STAGING_APPLY || op == STAGING_APPLY_REVIEWED || op == STAGING_CREATE_CHECKPOINT ||
      op == STAGING_DROP || op == STAGING_RESTORE_CHECKPOINT)
    refused = paddock_session_gate_refuse (self->gate, invocation);
  if (refused)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (is_apply (op) && refuse_applies)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_BUSY,
                                             "This daemon is being replaced; apply again once "
                                             "the new one serves");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (op == STAGING_DROP || op == STAGING_RESTORE_CHECKPOINT)
    live = paddock_session_gate_is_live (self->gate);
  if (live)
    {
      /* Under a running agent the stage is a mounted layer: files it holds
       * open would keep their staged content whatever we changed. */
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_BUSY,
                                             "The session is running; stop it first (paddockctl stop %s)",
                                             self->session_id);
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
  call->session = g_object_ref (session);
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
    call->frozen = paddock_session_gate_freeze (self->gate, TRUE);

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
start_call (PaddockSessionStaging *self,
            PaddockIpcSession1    *session,
            GDBusMethodInvocation *invocation,
            StagingOp              op,
            const char *const     *paths,
            const char *const     *force_paths,
            const char            *name)
{
  return start_call_full (self, session, invocation, op, paths, force_paths, NULL, NULL, name);
}

static gboolean
handle_review (PaddockIpcSession1    *session,
               GDBusMethodInvocation *invocation,
               GVariant              *options,
               PaddockSessionStaging *self)
{
  return start_call (self, session, invocation, STAGING_REVIEW, NULL, NULL, NULL);
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

static gboolean
handle_apply_reviewed (PaddockIpcSession1    *session,
                       GDBusMethodInvocation *invocation,
                       const char            *token,
                       const char *const     *paths,
                       GVariant              *options,
                       PaddockSessionStaging *self)
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
  return start_call_full (self, session, invocation, STAGING_APPLY_REVIEWED, paths,
                          (const char *const *) force_paths, (const char *const *) metadata_paths,
                          token, NULL);
}

static gboolean
handle_get_reviewed_diff (PaddockIpcSession1    *session,
                          GDBusMethodInvocation *invocation,
                          const char            *token,
                          const char            *path,
                          PaddockSessionStaging *self)
{
  if (!token_is_valid (invocation, token))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  return start_call_full (self, session, invocation, STAGING_GET_REVIEWED_DIFF, NULL, NULL, NULL, token, path);
}

static gboolean
handle_list_changes (PaddockIpcSession1    *session,
                     GDBusMethodInvocation *invocation,
                     PaddockSessionStaging *self)
{
  return start_call (self, session, invocation, STAGING_LIST_CHANGES, NULL, NULL, NULL);
}

static gboolean
handle_list_change_details (PaddockIpcSession1    *session,
                            GDBusMethodInvocation *invocation,
                            PaddockSessionStaging *self)
{
  return start_call (self, session, invocation, STAGING_LIST_CHANGE_DETAILS, NULL, NULL, NULL);
}

static gboolean
handle_get_diff (PaddockIpcSession1    *session,
                 GDBusMethodInvocation *invocation,
                 const char            *path,
                 PaddockSessionStaging *self)
{
  return start_call (self, session, invocation, STAGING_GET_DIFF, NULL, NULL, path);
}

static gboolean
handle_apply (PaddockIpcSession1    *session,
              GDBusMethodInvocation *invocation,
              const char *const     *paths,
              const char *const     *force_paths,
              PaddockSessionStaging *self)
{
  return start_call (self, session, invocation, STAGING_APPLY, paths, force_paths, NULL);
}

static gboolean
handle_drop (PaddockIpcSession1    *session,
             GDBusMethodInvocation *invocation,
             const char *const     *paths,
             PaddockSessionStaging *self)
{
  return start_call (self, session, invocation, STAGING_DROP, paths, NULL, NULL);
}

static gboolean
handle_create_checkpoint (PaddockIpcSession1    *session,
                          GDBusMethodInvocation *invocation,
                          const char            *name,
                          PaddockSessionStaging *self)
{
  return start_call (self, session, invocation, STAGING_CREATE_CHECKPOINT, NULL, NULL, name);
}

static gboolean
handle_list_checkpoints (PaddockIpcSession1    *session,
                         GDBusMethodInvocation *invocation,
                         PaddockSessionStaging *self)
{
  return start_call (self, session, invocation, STAGING_LIST_CHECKPOINTS, NULL, NULL, NULL);
}

static gboolean
handle_restore_checkpoint (PaddockIpcSession1    *session,
                           GDBusMethodInvocation *invocation,
                           const char            *name,
                           PaddockSessionStaging *self)
{
  return start_call (self, session, invocation, STAGING_RESTORE_CHECKPOINT, NULL, NULL, name);
}

/* From now on it answers its calls on @skeleton itself (the session's
 * D-Bus object leaves those methods to it); they are disconnected when
 * it goes, or when the skeleton does. */
void
paddock_session_staging_attach (PaddockSessionStaging *self,
                                PaddockIpcSession1 *skeleton)
{
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-list-change-details", G_CALLBACK (handle_list_change_details), self);
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-list-changes", G_CALLBACK (handle_list_changes), self);
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-get-diff", G_CALLBACK (handle_get_diff), self);
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-apply", G_CALLBACK (handle_apply), self);
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-review", G_CALLBACK (handle_review), self);
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-apply-reviewed", G_CALLBACK (handle_apply_reviewed), self);
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-get-reviewed-diff", G_CALLBACK (handle_get_reviewed_diff), self);
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-drop", G_CALLBACK (handle_drop), self);
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-create-checkpoint", G_CALLBACK (handle_create_checkpoint), self);
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-list-checkpoints", G_CALLBACK (handle_list_checkpoints), self);
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-restore-checkpoint", G_CALLBACK (handle_restore_checkpoint), self);
}
