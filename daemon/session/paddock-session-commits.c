/* paddock-session-commits.c — org.paddock.Session1's ListCommits, GetCommitDiff and ApplyCommits
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The commits an agent made in its session's repository, offered as a
 * branch of the workspace's (paddock-agent-commits.c). Each call reads the
 * stage's .git and hashes objects: it runs in a worker thread, under the
 * stage's lock, and answers from the main thread.
 *
 * Given the session's id, stage and gate (paddock-session-gate.c) when
 * made, it never calls into the session: an ApplyCommits first asks the
 * gate whether the session takes calls that need it running (one whose
 * leftovers are being ended answers Busy itself).
 */

#include "config.h"

#include <string.h>

#include "paddock-error.h"
#include "paddock-session-calls.h"
#include "paddock-session-commits.h"

struct _PaddockSessionCommits
{
  GObject       parent_instance;

  PaddockSessionCallHandlers calls;  /* its handle-* handlers on the session's skeleton */

  char         *session_id;
  PaddockStage *stage;       /* NULL: the session stages nothing */
  PaddockSessionGate *gate;
};

G_DEFINE_FINAL_TYPE (PaddockSessionCommits, paddock_session_commits, G_TYPE_OBJECT)

static void
paddock_session_commits_finalize (GObject *object)
{
  PaddockSessionCommits *self = PADDOCK_SESSION_COMMITS (object);

  paddock_session_call_handlers_clear (&self->calls);
  g_free (self->session_id);
  g_clear_object (&self->stage);
  g_clear_object (&self->gate);

  G_OBJECT_CLASS (paddock_session_commits_parent_class)->finalize (object);
}

static void
paddock_session_commits_class_init (PaddockSessionCommitsClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = paddock_session_commits_finalize;
}

static void
paddock_session_commits_init (PaddockSessionCommits *self)
{
}

PaddockSessionCommits *
paddock_session_commits_new (const char         *session_id,
                             PaddockStage       *stage,
                             PaddockSessionGate *gate)
{
  PaddockSessionCommits *self;

  g_return_val_if_fail (session_id != NULL, NULL);
  g_return_val_if_fail (PADDOCK_IS_SESSION_GATE (gate), NULL);

  self = g_object_new (PADDOCK_TYPE_SESSION_COMMITS, NULL);
  self->session_id = g_strdup (session_id);
  self->stage = stage != NULL ? g_object_ref (stage) : NULL;
  self->gate = g_object_ref (gate);
  return self;
}

typedef enum {
  COMMITS_LIST,
  COMMITS_GET_DIFF,
  COMMITS_APPLY,
} CommitsOp;

typedef struct {
  CommitsOp              op;
  char                  *session_id;
  PaddockStage          *stage;
  GDBusMethodInvocation *invocation;
  char                  *id;       /* GetCommitDiff's commit */
  char                  *branch;   /* the branch to create or offer */
} CommitsCall;

static void
commits_call_free (CommitsCall *call)
{
  g_free (call->session_id);
  g_clear_object (&call->stage);
  g_clear_object (&call->invocation);
  g_free (call->id);
  g_free (call->branch);
  g_free (call);
}

static GVariant *
list_reply (PaddockAgentCommits *commits,
            const char          *branch)
{
  GPtrArray *list = paddock_agent_commits_get_commits (commits);
  GVariantBuilder builder;
  g_auto(GVariantDict) details = G_VARIANT_DICT_INIT (NULL);

  g_variant_builder_init (&builder, G_VARIANT_TYPE ("a(sssxaay)"));
  for (guint i = 0; i < list->len; i++)
    {
      PaddockAgentCommit *commit = g_ptr_array_index (list, i);
      GVariantBuilder files;

      g_variant_builder_init (&files, G_VARIANT_TYPE ("aay"));
      for (guint k = 0; k < commit->files->len; k++)
        g_variant_builder_add_value (&files,
                                     g_variant_new_bytestring (g_ptr_array_index (commit->files, k)));
      g_variant_builder_add (&builder, "(sssx@aay)", commit->id, commit->subject, commit->author,
                             commit->author_time, g_variant_builder_end (&files));
    }
  if (list->len > 0)
    {
      g_variant_dict_insert (&details, "head", "s", paddock_agent_commits_get_head (commits));
      g_variant_dict_insert (&details, "tip", "s", paddock_agent_commits_get_tip (commits));
      g_variant_dict_insert (&details, "branch", "s", branch);
    }
  return g_variant_new ("(@a(sssxaay)@a{sv})", g_variant_builder_end (&builder),
                        g_variant_dict_end (&details));
}

static void
commits_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  CommitsCall *call = task_data;
  g_autoptr(GError) error = NULL;
  GVariant *reply = NULL;

  switch (call->op)
    {
    case COMMITS_LIST:
      {
        g_autoptr(PaddockAgentCommits) commits = paddock_stage_list_commits (call->stage, cancellable,
                                                                             &error);
        if (commits != NULL)
          reply = list_reply (commits, call->branch);
      }
      break;

    case COMMITS_GET_DIFF:
      {
        g_autoptr(PaddockAgentCommits) commits = paddock_stage_list_commits (call->stage, cancellable,
                                                                             &error);
        g_autoptr(GBytes) diff = NULL;

        if (commits != NULL)
          diff = paddock_agent_commits_get_diff (commits, call->id, &error);
        if (diff != NULL)
          reply = g_variant_new ("(@ay)",
                                 g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, diff, TRUE));
      }
      break;

    case COMMITS_APPLY:
      {
        g_autofree char *who = paddock_session_describe_caller (call->invocation);
        g_autofree char *tip = NULL;
        guint n_objects = 0, n_commits = 0;

        if (paddock_stage_apply_commits (call->stage, call->branch, who, &tip, &n_objects,
                                         &n_commits, cancellable, &error))
          {
            g_auto(GVariantDict) result = G_VARIANT_DICT_INIT (NULL);

            g_message ("Session %s: its %u commit%s offered as branch %s (%s), %u object%s copied",
                       call->session_id, n_commits,
                       n_commits == 1 ? "" : "s", call->branch, tip, n_objects,
                       n_objects == 1 ? "" : "s");
            g_variant_dict_insert (&result, "branch", "s", call->branch);
            g_variant_dict_insert (&result, "commit", "s", tip);
            g_variant_dict_insert (&result, "commits", "u", n_commits);
            g_variant_dict_insert (&result, "objects", "u", n_objects);
            reply = g_variant_new ("(@a{sv})", g_variant_dict_end (&result));
          }
      }
      break;

    default:
      g_assert_not_reached ();
    }

  if (reply == NULL)
    g_task_return_error (task, paddock_session_error_from_staging (error));
  else
    g_task_return_pointer (task, g_variant_ref_sink (reply), (GDestroyNotify) g_variant_unref);
}

static void
commits_done_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  CommitsCall *call = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_task_propagate_pointer (G_TASK (result), &error);

  /* The answer consumes the reference the handler was given. */
  if (reply == NULL)
    g_dbus_method_invocation_return_gerror (g_steal_pointer (&call->invocation), error);
  else
    g_dbus_method_invocation_return_value (g_steal_pointer (&call->invocation), reply);
}

static gboolean
start_call (PaddockSessionCommits *self,
            PaddockIpcSession1    *session,
            GDBusMethodInvocation *invocation,
            CommitsOp              op,
            const char            *id,
            const char            *branch)
{
  PaddockStage *stage = self->stage;
  gboolean refused = FALSE;
  g_autoptr(GTask) task = NULL;
  CommitsCall *call;

  if (g_strcmp0 (paddock_ipc_session1_get_state (session), "destroyed") == 0)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND,
                                             "The session was destroyed");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (stage == NULL)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED,
                                             "This session runs with the host profile: its commits "
                                             "are in the workspace's repository already");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (op == COMMITS_APPLY)
    refused = paddock_session_gate_refuse (self->gate, invocation);
  if (refused)
    return G_DBUS_METHOD_INVOCATION_HANDLED;

  call = g_new0 (CommitsCall, 1);
  call->op = op;
  call->session_id = g_strdup (self->session_id);
  call->stage = g_object_ref (stage);
  /* The handler's reference, answered (and so released) in
   * commits_done_cb(). */
  call->invocation = invocation;
  call->id = g_strdup (id);
  call->branch = branch != NULL ? g_strdup (branch)
                                : g_strconcat ("paddock/", self->session_id, NULL);

  task = g_task_new (self, NULL, commits_done_cb, NULL);
  g_task_set_source_tag (task, start_call);
  g_task_set_task_data (task, call, (GDestroyNotify) commits_call_free);
  g_task_run_in_thread (task, commits_thread);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_list (PaddockIpcSession1    *session,
             GDBusMethodInvocation *invocation,
             PaddockSessionCommits *self)
{
  return start_call (self, session, invocation, COMMITS_LIST, NULL, NULL);
}

static gboolean
handle_get_diff (PaddockIpcSession1    *session,
                 GDBusMethodInvocation *invocation,
                 const char            *id,
                 PaddockSessionCommits *self)
{
  gsize len = strlen (id);

  /* A full id only: an abbreviation could name two commits. */
  if (len != 40 || strspn (id, "0123456789abcdefABCDEF") != len)
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                             "A commit id is 40 hexadecimal digits");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  return start_call (self, session, invocation, COMMITS_GET_DIFF, id, NULL);
}

static gboolean
handle_apply (PaddockIpcSession1    *session,
              GDBusMethodInvocation *invocation,
              GVariant              *options,
              PaddockSessionCommits *self)
{
  const char *branch = NULL;
  GVariantIter iter;
  const char *key;
  GVariant *value;

  g_variant_iter_init (&iter, options);
  while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
    {
      g_autoptr(GVariant) owned = value;

      if (!g_str_equal (key, "branch") || !g_variant_is_of_type (owned, G_VARIANT_TYPE_STRING))
        {
          g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR,
                                                 PADDOCK_ERROR_INVALID_ARGUMENT,
                                                 "Unknown option “%s” (or not of its type)", key);
          return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
    }
  /* Borrowed from @options, which outlives the call's start. */
  g_variant_lookup (options, "branch", "&s", &branch);
  if (branch != NULL && !paddock_agent_commits_branch_name_is_valid (branch))
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                             "“%s” is not a valid branch name", branch);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  return start_call (self, session, invocation, COMMITS_APPLY, NULL, branch);
}

/* From now on it answers its calls on @skeleton itself (the session's
 * D-Bus object leaves those methods to it); they are disconnected when
 * it goes, or when the skeleton does. */
void
paddock_session_commits_attach (PaddockSessionCommits *self,
                                PaddockIpcSession1 *skeleton)
{
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-list-commits", G_CALLBACK (handle_list), self);
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-get-commit-diff", G_CALLBACK (handle_get_diff), self);
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-apply-commits", G_CALLBACK (handle_apply), self);
}
