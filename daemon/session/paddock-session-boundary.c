/* paddock-session-boundary.c — a look at a session's boundary, in a thread or not, and the strict check
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * What the session knows when it looks (PaddockBoundaryInput) is copied
 * whole into the look on the main thread: the session may let its cgroup
 * go, or SetNetworkPolicy replace its mode, while another thread reads
 * /proc. The look knows nothing of the session: its caller publishes what
 * was seen and decides what a strict refusal means.
 */

#include "config.h"

#include <string.h>

#include "paddock-error.h"
#include "paddock-session-boundary.h"
#include "paddock-test-hold.h"

struct _PaddockBoundaryLook
{
  PaddockBoundaryInput  input;      /* every pointer in it ours, below */
  char                 *profile;
  char                 *workspace;
  char                 *staging;
  char                 *stage_dir;
  char                 *cgroup_path;
  char                 *cgroup_reason;
  char                 *net_mode;
  GStrv                 given_env;
  GStrv                 allowed_write;
  GStrv                 exposed;
  char                 *agent_home;
  GStrv                 agent_view;
  char                 *resources_reason;
  JsonObject           *sandbox_report;
  PaddockBoundary      *boundary;   /* what was seen */
  GVariant             *published;  /* and its Session1.Boundary */
};

/* A look at what @input describes, copied: @input may go once this
 * returns. Nothing is looked at yet. */
void
paddock_boundary_input_init_for_config (PaddockBoundaryInput       *input,
                                        const PaddockSessionConfig *config,
                                        char                      **out_stage_dir)
{
  g_autofree char *stage_dir = NULL;

  if (config->home != NULL)
    {
      g_autofree char *session_dir = g_path_get_dirname (config->home);

      stage_dir = g_build_filename (session_dir, "stage", NULL);
    }
  *input = (PaddockBoundaryInput) {
    .profile = config->profile,
    .workspace = config->workspace,
    .staging = config->staging,
    .stage_dir = stage_dir,
    .cgroup_reason = config->cgroup_reason,
    .net_mode = config->net_mode,
    .allowed_write = (const char *const *) config->allow_write,
    .exposed = (const char *const *) config->expose,
    .agent_home = config->agent_home,
    .agent_view = (const char *const *) config->agent_view,
  };
  *out_stage_dir = g_steal_pointer (&stage_dir);
}

PaddockBoundaryLook *
paddock_boundary_look_new (const PaddockBoundaryInput *input)
{
  PaddockBoundaryLook *look;

  g_return_val_if_fail (input != NULL, NULL);

  look = g_new0 (PaddockBoundaryLook, 1);
  look->profile = g_strdup (input->profile);
  look->workspace = g_strdup (input->workspace);
  look->staging = g_strdup (input->staging);
  look->stage_dir = g_strdup (input->stage_dir);
  look->cgroup_path = g_strdup (input->cgroup_path);
  look->cgroup_reason = g_strdup (input->cgroup_reason);
  look->net_mode = g_strdup (input->net_mode);
  look->given_env = g_strdupv ((char **) input->given_env);
  look->allowed_write = g_strdupv ((char **) input->allowed_write);
  look->exposed = g_strdupv ((char **) input->exposed);
  look->agent_home = g_strdup (input->agent_home);
  look->agent_view = g_strdupv ((char **) input->agent_view);
  look->resources_reason = g_strdup (input->resources_reason);
  look->sandbox_report = input->sandbox_report != NULL ? json_object_ref (input->sandbox_report) : NULL;

  look->input = *input;
  look->input.profile = look->profile;
  look->input.workspace = look->workspace;
  look->input.staging = look->staging;
  look->input.stage_dir = look->stage_dir;
  look->input.cgroup_path = look->cgroup_path;
  look->input.cgroup_reason = look->cgroup_reason;
  look->input.net_mode = look->net_mode;
  look->input.given_env = (const char *const *) look->given_env;
  look->input.allowed_write = (const char *const *) look->allowed_write;
  look->input.exposed = (const char *const *) look->exposed;
  look->input.agent_home = look->agent_home;
  look->input.agent_view = (const char *const *) look->agent_view;
  look->input.resources_reason = look->resources_reason;
  look->input.sandbox_report = look->sandbox_report;
  return look;
}

void
paddock_boundary_look_free (PaddockBoundaryLook *look)
{
  if (look == NULL)
    return;
  g_free (look->profile);
  g_free (look->workspace);
  g_free (look->staging);
  g_free (look->stage_dir);
  g_free (look->cgroup_path);
  g_free (look->cgroup_reason);
  g_free (look->net_mode);
  g_strfreev (look->given_env);
  g_strfreev (look->allowed_write);
  g_strfreev (look->exposed);
  g_free (look->agent_home);
  g_strfreev (look->agent_view);
  g_free (look->resources_reason);
  g_clear_pointer (&look->sandbox_report, json_object_unref);
  g_clear_object (&look->boundary);
  g_clear_pointer (&look->published, g_variant_unref);
  g_free (look);
}

/* Looks, and makes the report to publish (a GVariant of some 70 entries,
 * ~0.1 ms to build): in whichever thread the look is done. */
void
paddock_boundary_look_run (PaddockBoundaryLook *look)
{
  g_return_if_fail (look != NULL);
  g_return_if_fail (look->boundary == NULL);

  look->boundary = paddock_boundary_observe (&look->input);
  look->published = g_variant_ref_sink (paddock_boundary_to_variant (look->boundary));
}

/* A session's folder keeps what its start saw (the file "boundary"): a
 * sandbox's look needs its start-up report, which only the start has, so
 * a daemon that adopts the session shows what was recorded instead of
 * nothing. The text is GVariant's own, types annotated. */
char *
paddock_boundary_published_to_text (GVariant *published)
{
  g_return_val_if_fail (published != NULL, NULL);
  g_return_val_if_fail (g_variant_is_of_type (published, G_VARIANT_TYPE ("aa{sv}")), NULL);

  return g_variant_print (published, TRUE);
}

/* More than the ~70 layers a look has, by far. */
#define BOUNDARY_RECORD_MAX (1024 * 1024)

/* What paddock_boundary_published_to_text() wrote to @path, each layer as
 * it was but for its evidence, which now begins "recorded at the start: "
 * (nobody looked again). NULL (and @error set) for a file missing, too
 * large or not such a boundary. */
GVariant *
paddock_boundary_published_load (const char  *path,
                                 GError     **error)
{
  g_autofree char *text = NULL;
  g_autoptr(GVariant) recorded = NULL;
  g_autoptr(GVariantIter) layers = NULL;
  GVariantBuilder builder;
  GVariant *layer;
  gsize length = 0;

  g_return_val_if_fail (path != NULL, NULL);

  if (!g_file_get_contents (path, &text, &length, error))
    return NULL;
  if (length > BOUNDARY_RECORD_MAX || strlen (text) != length)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED, "%s is not a recorded boundary", path);
      return NULL;
    }
  recorded = g_variant_parse (G_VARIANT_TYPE ("aa{sv}"), text, NULL, NULL, error);
  if (recorded == NULL)
    return NULL;

  g_variant_builder_init (&builder, G_VARIANT_TYPE ("aa{sv}"));
  layers = g_variant_iter_new (recorded);
  while ((layer = g_variant_iter_next_value (layers)) != NULL)
    {
      g_autoptr(GVariant) owned = layer;
      GVariantIter entries;
      const char *key;
      GVariant *value;
      const char *text_member;
      gboolean flag;

      /* Each layer what a look publishes, or none is shown. */
      if (!g_variant_lookup (owned, "layer", "&s", &text_member) ||
          !g_variant_lookup (owned, "status", "&s", &text_member) ||
          !g_variant_lookup (owned, "evidence", "&s", &text_member) ||
          !g_variant_lookup (owned, "requested", "b", &flag))
        {
          g_variant_builder_clear (&builder);
          g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED, "%s is not a recorded boundary", path);
          return NULL;
        }
      g_variant_builder_open (&builder, G_VARIANT_TYPE ("a{sv}"));
      g_variant_iter_init (&entries, owned);
      while (g_variant_iter_next (&entries, "{&sv}", &key, &value))
        {
          g_autoptr(GVariant) owned_value = value;

          if (g_str_equal (key, "evidence") && g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
            {
              g_autofree char *marked = g_strconcat ("recorded at the start: ",
                                                     g_variant_get_string (value, NULL), NULL);

              g_variant_builder_add (&builder, "{sv}", key, g_variant_new_string (marked));
            }
          else
            g_variant_builder_add (&builder, "{sv}", key, value);
        }
      g_variant_builder_close (&builder);
    }
  return g_variant_ref_sink (g_variant_builder_end (&builder));
}

static void
boundary_look_thread (GTask        *task,
                      gpointer      source_object,
                      gpointer      task_data,
                      GCancellable *cancellable)
{
  PaddockBoundaryLook *look = task_data;

  /* As a slow /proc would. */
  paddock_test_hold ("PADDOCK_TEST_BOUNDARY_LOOK_HOLD", "a start's look at its boundary");
  paddock_boundary_look_run (look);
  /* Handed back whole, to be freed on the caller's thread (see
   * paddock_boundary_look_run_in_thread()). */
  g_task_return_pointer (task, look, (GDestroyNotify) paddock_boundary_look_free);
}

/**
 * paddock_boundary_look_run_in_thread:
 * @look: (transfer full): a look not run yet
 * @callback: called on the calling thread's main context once it is done
 * @user_data: (transfer full): for @callback, which owns it
 *
 * Runs the look (~0.5 ms of reading /proc) in a worker thread; the look
 * comes back from paddock_boundary_look_finish(). Not cancellable: it
 * reads a few files of /proc and ends; whether its result is still wanted
 * is the caller's to decide when it is back.
 *
 * Neither a source object nor the look as the task's data: the worker
 * thread drops its own reference to the task after it has queued the
 * callback, so that reference can be the last one, and whatever the task
 * still held would be finalized in that thread (the caller's object
 * itself, once it let go of it meanwhile). A reference in @user_data is
 * the callback's, and the look comes back as the task's result: both are
 * let go of on the calling thread.
 */
void
paddock_boundary_look_run_in_thread (PaddockBoundaryLook *look,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (look != NULL);
  g_return_if_fail (callback != NULL);

  task = g_task_new (NULL, NULL, callback, user_data);
  g_task_set_source_tag (task, paddock_boundary_look_run_in_thread);
  g_task_set_task_data (task, look, NULL);
  g_task_run_in_thread (task, boundary_look_thread);
}

/* Returns: (transfer full): the look given to run_in_thread(), run */
PaddockBoundaryLook *
paddock_boundary_look_finish (GAsyncResult *result)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == paddock_boundary_look_run_in_thread, NULL);

  return g_task_propagate_pointer (G_TASK (result), NULL);
}

/* What was seen (NULL before the look ran). */
PaddockBoundary *
paddock_boundary_look_get_boundary (PaddockBoundaryLook *look)
{
  g_return_val_if_fail (look != NULL, NULL);

  return look->boundary;
}

/* What was seen as Session1.Boundary (NULL before the look ran). */
GVariant *
paddock_boundary_look_get_published (PaddockBoundaryLook *look)
{
  g_return_val_if_fail (look != NULL, NULL);

  return look->published;
}

/* The strict profile runs only when every requested layer is observed
 * enforced: FALSE with @error naming the others. Other profiles run with
 * whatever is enforced, and are told so by the boundary they publish. */
gboolean
paddock_boundary_check_strict (const char       *profile,
                               PaddockBoundary  *boundary,
                               GError          **error)
{
  g_autofree char *missing = NULL;

  g_return_val_if_fail (PADDOCK_IS_BOUNDARY (boundary), FALSE);

  if (g_strcmp0 (profile, "strict") != 0)
    return TRUE;
  missing = paddock_boundary_dup_unenforced (boundary);
  if (missing == NULL)
    return TRUE;
  g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_ENFORCED,
               "The strict profile runs only when every requested layer is observed enforced; "
               "not enforced here: %s. The session was killed at once",
               missing);
  return FALSE;
}
