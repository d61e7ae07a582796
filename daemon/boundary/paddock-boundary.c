/* paddock-boundary.c — a session's safety boundary, layer by layer, with the kernel's evidence
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every status here comes from something the kernel reports about the
 * session's processes — /proc/PID/ns/…, /proc/PID/status, mountinfo,
 * cgroup membership, environ — or, for what /proc does not show (Landlock),
 * from what the kernel answered the sandbox's pid 1 when it applied the
 * layer and from the canary probes it ran inside the boundary afterwards.
 * Nothing is inferred from what we asked for: a layer we requested but
 * cannot see is "unenforced", one we can see only in part is "partial".
 *
 * We look at the session's pid 1 (or the agent itself for the host
 * profile): every process of the session descends from it, and
 * namespaces, no_new_privs, seccomp filters and Landlock domains are
 * inherited and can never be shed.
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "paddock-boundary.h"

typedef struct {
  char               *name;
  gboolean            requested;
  PaddockLayerStatus  status;
  char               *evidence;
} Layer;

struct _PaddockBoundary
{
  GObject   parent_instance;
  GArray   *layers;   /* Layer */
  /* pid 1's mountinfo, read and parsed once per observation (every
   * mount layer looks at it): MountEntry in the file's order, NULL when
   * it could not be read. */
  GPtrArray *mounts;
  guint      n_mounts;   /* lines of the file, as its count of mounts */
  gboolean   mounts_read;
};

/* One line of mountinfo, what the layers look at. */
typedef struct {
  char *point;      /* the mount point, unescaped */
  char *options;    /* its per-mount options ("ro,nosuid,…"), or NULL */
  char *described;  /* after " - ": "fstype source super-options", unescaped */
} MountEntry;

static void
mount_entry_free (MountEntry *entry)
{
  g_free (entry->point);
  g_free (entry->options);
  g_free (entry->described);
  g_free (entry);
}

G_DEFINE_FINAL_TYPE (PaddockBoundary, paddock_boundary, G_TYPE_OBJECT)

static void
layer_clear (Layer *layer)
{
  g_free (layer->name);
  g_free (layer->evidence);
}

const char *
paddock_layer_status_to_string (PaddockLayerStatus status)
{
  switch (status)
    {
    case PADDOCK_LAYER_ENFORCED:
      return "enforced";
    case PADDOCK_LAYER_PARTIAL:
      return "partial";
    case PADDOCK_LAYER_UNENFORCED:
      return "unenforced";
    case PADDOCK_LAYER_NOT_REQUESTED:
    default:
      return "not-requested";
    }
}

static PaddockLayerStatus
status_from_string (const char *text)
{
  if (g_strcmp0 (text, "enforced") == 0)
    return PADDOCK_LAYER_ENFORCED;
  if (g_strcmp0 (text, "partial") == 0)
    return PADDOCK_LAYER_PARTIAL;
  if (g_strcmp0 (text, "not-requested") == 0)
    return PADDOCK_LAYER_NOT_REQUESTED;
  return PADDOCK_LAYER_UNENFORCED;
}

static void
add_layer (PaddockBoundary    *self,
           const char         *name,
           gboolean            requested,
           PaddockLayerStatus  status,
           char               *evidence)   /* owned */
{
  Layer layer = { g_strdup (name), requested, status, evidence };

  g_array_append_val (self->layers, layer);
}

/* ---- protected paths ---------------------------------------------------------- */

/* Paths of a workspace a sandboxed session sees read-only unless the user
 * allows them: what git runs on the user's machine (hooks) or tells it to
 * run (config: core.hooksPath, core.fsmonitor, aliases, filters), so that
 * an agent's change there would act outside the session once applied. */
static const char *const protected_paths[] = { ".git/hooks", ".git/config", NULL };

const char *const *
paddock_boundary_protected_paths (void)
{
  return protected_paths;
}

/* @path as one of the protected paths (relative to @workspace), accepting
 * it relative or absolute within @workspace, with redundant slashes; NULL
 * when it is not one of them. */
char *
paddock_boundary_normalize_protected (const char *workspace,
                                      const char *path)
{
  g_autofree char *absolute = NULL;
  g_autofree char *root = NULL;

  g_return_val_if_fail (workspace != NULL && path != NULL, NULL);

  root = g_canonicalize_filename (workspace, "/");
  absolute = g_canonicalize_filename (path, root);
  if (g_str_equal (root, "/") || !g_str_has_prefix (absolute, root) || absolute[strlen (root)] != '/')
    return NULL;
  if (g_strv_contains (protected_paths, absolute + strlen (root) + 1))
    return g_strdup (absolute + strlen (root) + 1);
  return NULL;
}

/* ---- what /proc says -------------------------------------------------------- */

static char *
namespace_of (pid_t       pid,
              const char *kind)
{
  g_autofree char *path = pid > 0 ? g_strdup_printf ("/proc/%d/ns/%s", (int) pid, kind)
                                  : g_strdup_printf ("/proc/self/ns/%s", kind);

  return g_file_read_link (path, NULL);
}

/* /proc/PID/status, read once for all the fields a layer shows (one
 * snapshot, one read), or NULL. */
static char *
status_read (pid_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/status", (int) pid);
  char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  return text;
}

/* The value of @field in a status text ("Field:\tvalue\n"), or NULL. */
static char *
status_field (const char *status,
              const char *field)
{
  size_t n = strlen (field);

  for (const char *line = status; line != NULL && *line != '\0';)
    {
      const char *end = strchr (line, '\n');
      size_t length = end != NULL ? (size_t) (end - line) : strlen (line);

      if (length > n && strncmp (line, field, n) == 0 && line[n] == ':')
        return g_strstrip (g_strndup (line + n + 1, length - n - 1));
      line = end != NULL ? end + 1 : NULL;
    }
  return NULL;
}

/* The first child of @pid: the agent under the session's pid 1. */
static pid_t
first_child_of (pid_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/task/%d/children", (int) pid, (int) pid);
  g_autofree char *text = NULL;
  guint64 child = 0;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return 0;
  g_strstrip (text);
  if (text[0] == '\0')
    return 0;
  if (strchr (text, ' ') != NULL)
    *strchr (text, ' ') = '\0';
  if (!g_ascii_string_to_unsigned (text, 10, 1, G_MAXINT, &child, NULL))
    return 0;
  return (pid_t) child;
}

static void
observe_namespace (PaddockBoundary *self,
                   const char      *layer,
                   const char      *kind,
                   gboolean         requested,
                   pid_t            pid,
                   const char      *extra)
{
  g_autofree char *theirs = namespace_of (pid, kind);
  g_autofree char *ours = namespace_of (0, kind);

  if (theirs == NULL || ours == NULL)
    add_layer (self, layer, requested, PADDOCK_LAYER_UNENFORCED,
               g_strdup_printf ("/proc/%d/ns/%s could not be read: the session has no process to look at",
                                (int) pid, kind));
  else if (g_strcmp0 (theirs, ours) != 0)
    add_layer (self, layer, requested, PADDOCK_LAYER_ENFORCED,
               g_strdup_printf ("the session's %s differs from the daemon's %s (/proc/%d/ns/%s)%s%s",
                                theirs, ours, (int) pid, kind, extra != NULL ? "; " : "",
                                extra != NULL ? extra : ""));
  else
    add_layer (self, layer, requested, PADDOCK_LAYER_UNENFORCED,
               g_strdup_printf ("the session shares the daemon's %s (/proc/%d/ns/%s)", ours, (int) pid, kind));
}

/* @pid's mountinfo, parsed into self->mounts at the observation's first
 * call (the same pid 1 throughout). */
static void
read_mounts (PaddockBoundary *self,
             pid_t            pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/mountinfo", (int) pid);
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;

  self->mounts_read = TRUE;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return;
  self->mounts = g_ptr_array_new_with_free_func ((GDestroyNotify) mount_entry_free);
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) halves = g_strsplit (lines[i], " - ", 2);
      g_auto(GStrv) fields = NULL;
      MountEntry *entry;

      if (halves[0] == NULL || halves[1] == NULL)
        continue;
      self->n_mounts++;
      fields = g_strsplit (halves[0], " ", -1);
      if (g_strv_length (fields) < 5)
        continue;
      entry = g_new0 (MountEntry, 1);
      entry->point = g_strcompress (fields[4]);
      entry->options = g_strv_length (fields) >= 6 ? g_strdup (fields[5]) : NULL;
      entry->described = g_strcompress (halves[1]);
      g_ptr_array_add (self->mounts, entry);
    }
}

/* The mount of @mount_point in @pid's mountinfo (the last one there: the
 * one that shows): "fstype source super-options", and in @out_options
 * its per-mount options ("ro,nosuid,…") when asked. */
static char *
mount_at (PaddockBoundary *self,
          pid_t            pid,
          const char      *mount_point,
          guint           *out_n_mounts,
          char           **out_options)
{
  MountEntry *found = NULL;

  if (!self->mounts_read)
    read_mounts (self, pid);
  if (self->mounts == NULL)
    return NULL;
  /* The last mount at the point is the one that shows. */
  for (guint i = self->mounts->len; i > 0 && found == NULL; i--)
    {
      MountEntry *entry = g_ptr_array_index (self->mounts, i - 1);

      if (g_str_equal (entry->point, mount_point))
        found = entry;
    }
  if (out_n_mounts != NULL)
    *out_n_mounts = self->n_mounts;
  if (found == NULL)
    return NULL;
  if (out_options != NULL && found->options != NULL)
    {
      g_free (*out_options);
      *out_options = g_strdup (found->options);
    }
  return g_strdup (found->described);
}

static void
observe_mounts (PaddockBoundary            *self,
                const PaddockBoundaryInput *input,
                gboolean                    sandboxed)
{
  guint n_mounts = 0;
  g_autofree char *workspace_mount = NULL;
  g_autofree char *root_mount = NULL;

  if (!sandboxed)
    {
      add_layer (self, "mount-view", FALSE, PADDOCK_LAYER_UNENFORCED,
                 g_strdup ("the host profile sees the user's whole filesystem"));
      add_layer (self, "staging", FALSE, PADDOCK_LAYER_UNENFORCED,
                 input->staging != NULL
                 ? g_strdup_printf ("the host executor starts the agent in a %s of the workspace, whose "
                                    "changes are reviewed and applied, but nothing keeps it from writing "
                                    "the workspace itself, or anywhere else", input->staging)
                 : g_strdup ("the host profile writes to the workspace itself"));
      return;
    }

  root_mount = mount_at (self, input->init_pid, "/", &n_mounts, NULL);
  {
    g_autofree char *extra = root_mount != NULL
      ? g_strdup_printf ("its / is \"%s\" with %u mounts in all (/proc/%d/mountinfo)",
                         root_mount, n_mounts, (int) input->init_pid)
      : NULL;
    observe_namespace (self, "mount-view", "mnt", TRUE, input->init_pid, extra);
  }

  workspace_mount = input->workspace != NULL ? mount_at (self, input->init_pid, input->workspace, NULL, NULL) : NULL;
  if (workspace_mount == NULL)
    add_layer (self, "staging", TRUE, PADDOCK_LAYER_UNENFORCED,
               g_strdup_printf ("no mount at %s in /proc/%d/mountinfo", input->workspace, (int) input->init_pid));
  else if (g_strcmp0 (input->staging, "overlay") == 0 && g_str_has_prefix (workspace_mount, "overlay ") &&
           input->stage_dir != NULL && strstr (workspace_mount, input->stage_dir) != NULL)
    add_layer (self, "staging", TRUE, PADDOCK_LAYER_ENFORCED,
               g_strdup_printf ("overlay: %s is \"%s\" (/proc/%d/mountinfo); writes land in the upper folder",
                                input->workspace, workspace_mount, (int) input->init_pid));
  else if (g_strcmp0 (input->staging, "copy") == 0 && !g_str_has_prefix (workspace_mount, "overlay "))
    add_layer (self, "staging", TRUE, PADDOCK_LAYER_ENFORCED,
               g_strdup_printf ("copy: %s is a bind of the session's copy, \"%s\" (/proc/%d/mountinfo); "
                                "the real folder is not in the view",
                                input->workspace, workspace_mount, (int) input->init_pid));
  else
    add_layer (self, "staging", TRUE, PADDOCK_LAYER_UNENFORCED,
               g_strdup_printf ("%s is \"%s\", not the session's stage", input->workspace, workspace_mount));
}

static gboolean
options_say_read_only (const char *options)
{
  g_auto(GStrv) each = options != NULL ? g_strsplit (options, ",", -1) : NULL;

  return each != NULL && g_strv_contains ((const char *const *) each, "ro");
}

static JsonArray *
report_array (JsonObject *report,
              const char *member)
{
  if (report == NULL || !json_object_has_member (report, member) ||
      !JSON_NODE_HOLDS_ARRAY (json_object_get_member (report, member)))
    return NULL;
  return json_object_get_array_member (report, member);
}

/* The probe @name of the sandbox's report, or NULL. */
static JsonObject *
report_probe (JsonObject *report,
              const char *name)
{
  JsonArray *probes = report_array (report, "probes");

  for (guint i = 0; probes != NULL && i < json_array_get_length (probes); i++)
    {
      JsonNode *node = json_array_get_element (probes, i);

      if (JSON_NODE_HOLDS_OBJECT (node) &&
          g_strcmp0 (json_object_get_string_member_with_default (json_node_get_object (node), "probe", NULL),
                     name) == 0)
        return json_node_get_object (node);
    }
  return NULL;
}

/* "; no canary result", and why when the sandbox could say (no probe ran
 * at all: its "probes_error", the kernel's answer). */
static char *
no_canary_text (JsonObject *report)
{
  const char *why = report != NULL ? json_object_get_string_member_with_default (report, "probes_error", NULL)
                                   : NULL;

  return why != NULL ? g_strdup_printf ("; no canary result (%s)", why) : g_strdup ("; no canary result");
}

/* Protected paths of the workspace: each one pid 1 found must show as a
 * read-only mount in its mountinfo, and the canary write into them must
 * have failed with EROFS. */
static void
observe_protected (PaddockBoundary            *self,
                   const PaddockBoundaryInput *input,
                   gboolean                    sandboxed)
{
  JsonObject *report = input->sandbox_report;
  JsonArray *mounted = report_array (report, "protected");
  JsonArray *skipped = report_array (report, "protected_skipped");
  JsonObject *probe = report_probe (report, "protected-path");
  g_autofree char *allowed = input->allowed_write != NULL && input->allowed_write[0] != NULL
    ? g_strjoinv (", ", (char **) input->allowed_write) : NULL;
  g_autoptr(GString) evidence = g_string_new (NULL);
  gboolean all_in_place = TRUE;

  if (!sandboxed)
    {
      add_layer (self, "protected-paths", FALSE, PADDOCK_LAYER_UNENFORCED,
                 g_strdup ("the host profile writes to .git/hooks and .git/config like anywhere else"));
      return;
    }
  if (report == NULL || !json_object_get_boolean_member_with_default (report, "protect_requested", FALSE))
    {
      add_layer (self, "protected-paths", FALSE, PADDOCK_LAYER_NOT_REQUESTED,
                 allowed != NULL ? g_strdup_printf ("the user allowed writes to %s", allowed)
                                 : g_strdup ("paddock-sandbox was asked to protect no path"));
      return;
    }
  if ((mounted == NULL || json_array_get_length (mounted) == 0) &&
      (skipped == NULL || json_array_get_length (skipped) == 0))
    {
      g_autofree char *asked = g_strjoinv (", ", (char **) protected_paths);

      add_layer (self, "protected-paths", FALSE, PADDOCK_LAYER_NOT_REQUESTED,
                 g_strdup_printf ("none of %s exists in the workspace%s%s", asked,
                                  allowed != NULL ? "; the user allowed writes to " : "",
                                  allowed != NULL ? allowed : ""));
      return;
    }

  for (guint i = 0; mounted != NULL && i < json_array_get_length (mounted); i++)
    {
      const char *relative = json_array_get_string_element (mounted, i);
      g_autofree char *point = g_build_filename (input->workspace, relative, NULL);
      g_autofree char *options = NULL;

      g_free (mount_at (self, input->init_pid, point, NULL, &options));
      all_in_place = all_in_place && options_say_read_only (options);
      g_string_append_printf (evidence, "%s%s is a mount with \"%s\"", evidence->len > 0 ? "; " : "",
                              point, options != NULL ? options : "no entry");
    }
  g_string_append_printf (evidence, " (/proc/%d/mountinfo)", (int) input->init_pid);
  for (guint i = 0; skipped != NULL && i < json_array_get_length (skipped); i++)
    g_string_append_printf (evidence, "; %s/%s is a symlink out of the workspace or not a file or folder: "
                            "not protected", input->workspace, json_array_get_string_element (skipped, i));
  if (probe != NULL)
    g_string_append_printf (evidence, "; canary: %s: expected %s, got %s",
                            json_object_get_string_member_with_default (probe, "what", ""),
                            json_object_get_string_member_with_default (probe, "expected", "?"),
                            json_object_get_string_member_with_default (probe, "actual", "?"));
  else
    {
      g_autofree char *none = no_canary_text (report);

      g_string_append (evidence, none);
    }
  if (allowed != NULL)
    g_string_append_printf (evidence, "; the user allowed writes to %s", allowed);

  {
    gboolean blocked = probe != NULL &&
                       g_strcmp0 (json_object_get_string_member_with_default (probe, "actual", NULL), "EROFS") == 0;
    PaddockLayerStatus status = PADDOCK_LAYER_UNENFORCED;

    if (blocked && all_in_place && mounted != NULL && json_array_get_length (mounted) > 0)
      status = skipped != NULL && json_array_get_length (skipped) > 0 ? PADDOCK_LAYER_PARTIAL
                                                                      : PADDOCK_LAYER_ENFORCED;
    add_layer (self, "protected-paths", TRUE, status, g_string_free (g_steal_pointer (&evidence), FALSE));
  }
}

/* @status: @pid's status text, or NULL (read here). */
static void
observe_status (PaddockBoundary *self,
                pid_t            pid,
                const char      *status_text,
                gboolean         sandboxed)
{
  g_autofree char *read_here = status_text == NULL ? status_read (pid) : NULL;
  const char *status = status_text != NULL ? status_text : read_here;
  g_autofree char *nnp = status_field (status, "NoNewPrivs");
  g_autofree char *seccomp = status_field (status, "Seccomp");
  g_autofree char *filters = status_field (status, "Seccomp_filters");
  g_autofree char *cap_eff = status_field (status, "CapEff");
  g_autofree char *cap_bnd = status_field (status, "CapBnd");

  if (g_strcmp0 (nnp, "1") == 0)
    add_layer (self, "no-new-privs", sandboxed, PADDOCK_LAYER_ENFORCED,
               g_strdup_printf ("NoNewPrivs: 1, CapEff: %s, CapBnd: %s (/proc/%d/status)",
                                cap_eff ? cap_eff : "?", cap_bnd ? cap_bnd : "?", (int) pid));
  else
    add_layer (self, "no-new-privs", sandboxed, PADDOCK_LAYER_UNENFORCED,
               g_strdup_printf ("NoNewPrivs: %s (/proc/%d/status)", nnp ? nnp : "unreadable", (int) pid));

  if (g_strcmp0 (seccomp, "2") == 0 && filters != NULL && g_strcmp0 (filters, "0") != 0)
    add_layer (self, "seccomp", sandboxed, PADDOCK_LAYER_ENFORCED,
               g_strdup_printf ("Seccomp: 2 (filter mode), Seccomp_filters: %s (/proc/%d/status)",
                                filters, (int) pid));
  else
    add_layer (self, "seccomp", sandboxed, PADDOCK_LAYER_UNENFORCED,
               g_strdup_printf ("Seccomp: %s, Seccomp_filters: %s (/proc/%d/status): no filter",
                                seccomp ? seccomp : "unreadable", filters ? filters : "-", (int) pid));
}

static void
observe_landlock (PaddockBoundary *self,
                  JsonObject      *report,
                  gboolean         sandboxed)
{
  /* Layer, its key in the report, and the canary only that layer stops
   * (NULL: none of its own; scoping's abstract-socket probe is also
   * answered by a network namespace, so it proves no Landlock rule). */
  static const char *const layers[][3] = {
    { "landlock-fs", "landlock_fs", "landlock-fs" },
    { "landlock-net", "landlock_net", "landlock-net" },
    { "landlock-scope", "landlock_scope", NULL },
  };
  gint64 abi = report != NULL ? json_object_get_int_member_with_default (report, "landlock_abi", 0) : 0;

  for (guint i = 0; i < G_N_ELEMENTS (layers); i++)
    {
      const char *status = report != NULL
        ? json_object_get_string_member_with_default (report, layers[i][1], NULL) : NULL;
      g_autofree char *evidence_key = g_strconcat (layers[i][1], "_evidence", NULL);
      const char *detail = report != NULL
        ? json_object_get_string_member_with_default (report, evidence_key, NULL) : NULL;

      if (!sandboxed)
        add_layer (self, layers[i][0], FALSE, PADDOCK_LAYER_UNENFORCED,
                   g_strdup ("the host profile applies no Landlock rules"));
      else if (g_strcmp0 (status, "not-requested") == 0)
        add_layer (self, layers[i][0], FALSE, PADDOCK_LAYER_NOT_REQUESTED,
                   g_strdup_printf ("not asked of Landlock (ABI %" G_GINT64_FORMAT ")%s%s", abi,
                                    detail != NULL ? ": " : "", detail != NULL ? detail : ""));
      else if (status == NULL)
        add_layer (self, layers[i][0], TRUE, PADDOCK_LAYER_UNENFORCED,
                   g_strdup ("paddock-sandbox reported no Landlock domain for the session"));
      else if (status_from_string (status) == PADDOCK_LAYER_UNENFORCED)
        add_layer (self, layers[i][0], TRUE, PADDOCK_LAYER_UNENFORCED,
                   g_strdup_printf ("paddock-sandbox put no Landlock rule of this kind in place "
                                    "(kernel ABI %" G_GINT64_FORMAT ", 0: none, or the layer was left out)%s%s",
                                    abi, detail != NULL ? ": " : "", detail != NULL ? detail : ""));
      else
        {
          /* The filesystem and bind rules have a canary each: a write, a
           * bind only Landlock stops. Not blocked as expected, the rules
           * are not what the kernel enforces, whatever it answered. */
          const char *canary_name = layers[i][2];
          JsonObject *probe = canary_name != NULL ? report_probe (report, canary_name) : NULL;
          PaddockLayerStatus observed = status_from_string (status);
          g_autofree char *canary = NULL;

          if (canary_name != NULL && probe == NULL)
            {
              observed = PADDOCK_LAYER_UNENFORCED;
              canary = no_canary_text (report);
            }
          else if (probe != NULL)
            {
              const char *actual = json_object_get_string_member_with_default (probe, "actual", "?");

              if (!g_str_equal (actual, "EACCES"))
                observed = PADDOCK_LAYER_UNENFORCED;
              canary = g_strdup_printf ("; canary: %s: expected %s, got %s",
                                        json_object_get_string_member_with_default (probe, "what", ""),
                                        json_object_get_string_member_with_default (probe, "expected", "?"),
                                        actual);
            }
          add_layer (self, layers[i][0], TRUE, observed,
                     g_strdup_printf ("landlock_restrict_self() in the session's pid 1 succeeded at ABI %"
                                      G_GINT64_FORMAT "%s%s%s", abi, detail != NULL ? ": " : "",
                                      detail != NULL ? detail : "", canary != NULL ? canary : ""));
        }
    }
}

static void
observe_network (PaddockBoundary            *self,
                 const PaddockBoundaryInput *input,
                 gboolean                    sandboxed)
{
  g_autofree char *theirs = namespace_of (input->init_pid, "net");
  g_autofree char *ours = namespace_of (0, "net");
  gboolean requested = sandboxed && g_strcmp0 (input->net_mode, "host") != 0 && input->net_mode != NULL;

  if (theirs != NULL && ours != NULL && g_strcmp0 (theirs, ours) != 0)
    add_layer (self, "network", requested, requested ? PADDOCK_LAYER_ENFORCED : PADDOCK_LAYER_PARTIAL,
               g_strdup_printf ("mode %s: the session's %s differs from the daemon's %s",
                                input->net_mode, theirs, ours));
  else
    add_layer (self, "network", requested, PADDOCK_LAYER_UNENFORCED,
               g_strdup_printf ("mode %s: the session shares the daemon's %s, the user's network",
                                input->net_mode != NULL ? input->net_mode : "host",
                                ours != NULL ? ours : "network namespace"));
}

static void
observe_cgroup (PaddockBoundary            *self,
                const PaddockBoundaryInput *input,
                gboolean                    sandboxed)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/cgroup", (int) input->init_pid);
  g_autofree char *membership = NULL;

  /* Asked for where the daemon can make cgroups (root, or a delegated
   * subtree); elsewhere the PID namespace alone is the teardown and the
   * layer says so, without blocking strict. */
  if (input->cgroup_path == NULL)
    {
      add_layer (self, "cgroup", input->cgroup_reason == NULL && sandboxed, PADDOCK_LAYER_UNENFORCED,
                 g_strdup_printf ("no cgroup of its own: %s; teardown relies on the PID namespace",
                                  input->cgroup_reason != NULL ? input->cgroup_reason : "none could be made"));
      return;
    }
  if (g_file_get_contents (path, &membership, NULL, NULL))
    {
      g_autofree char *name = g_path_get_basename (input->cgroup_path);
      g_auto(GStrv) lines = g_strsplit (membership, "\n", -1);

      /* The unified hierarchy's line: "0::/path". */
      for (guint i = 0; lines[i] != NULL; i++)
        if (g_str_has_prefix (lines[i], "0::") && g_str_has_suffix (lines[i], name))
          {
            add_layer (self, "cgroup", sandboxed, PADDOCK_LAYER_ENFORCED,
                       g_strdup_printf ("member of %s (/proc/%d/cgroup: \"%s\"): counted and killed as one",
                                        input->cgroup_path, (int) input->init_pid, lines[i]));
            return;
          }
    }
  add_layer (self, "cgroup", sandboxed, PADDOCK_LAYER_UNENFORCED,
             g_strdup_printf ("/proc/%d/cgroup does not name %s", (int) input->init_pid, input->cgroup_path));
}

/* Exposures of the user's HOME: each listed with where it shows in the
 * session's HOME, which must be a read-only mount in pid 1's mountinfo.
 * Enforced means "each one asked for is a read-only mount there": that the
 * rest of HOME is absent is the mount-view layer's evidence, and which
 * source folder a mount shows is not compared here. */
static void
observe_exposures (PaddockBoundary            *self,
                   const PaddockBoundaryInput *input,
                   gboolean                    sandboxed)
{
  JsonArray *reported = report_array (input->sandbox_report, "exposed");
  g_autoptr(GString) evidence = g_string_new (NULL);
  gboolean all_in_place = TRUE;
  guint n = input->exposed != NULL ? g_strv_length ((char **) input->exposed) : 0;
  guint n_view = input->agent_view != NULL ? g_strv_length ((char **) input->agent_view) : 0;

  if (!sandboxed)
    {
      add_layer (self, "exposures", FALSE, PADDOCK_LAYER_UNENFORCED,
                 g_strdup ("the host profile sees the user's whole HOME"));
      return;
    }
  if (n == 0 && n_view == 0 && input->agent_home == NULL)
    {
      add_layer (self, "exposures", FALSE, PADDOCK_LAYER_NOT_REQUESTED,
                 g_strdup ("nothing of the user's HOME is shown in the session's"));
      return;
    }
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *inside = g_build_filename (PADDOCK_SANDBOX_HOME, input->exposed[i], NULL);
      g_autofree char *outside = g_build_filename (g_get_home_dir (), input->exposed[i], NULL);
      g_autofree char *options = NULL;
      gboolean listed = FALSE;

      g_free (mount_at (self, input->init_pid, inside, NULL, &options));
      for (guint j = 0; reported != NULL && j < json_array_get_length (reported); j++)
        listed = listed || g_strcmp0 (json_array_get_string_element (reported, j), input->exposed[i]) == 0;
      all_in_place = all_in_place && listed && options_say_read_only (options);
      g_string_append_printf (evidence, "%s%s shown at %s: %s", evidence->len > 0 ? "; " : "", outside, inside,
                              options != NULL ? options : "no mount there");
    }
  /* An agent's home: its own folder of the state dir, writable (what it
   * keeps between its sessions), never the real HOME; and its install,
   * read-only at its own path. */
  if (input->agent_home != NULL)
    {
      g_autofree char *options = NULL;

      g_free (mount_at (self, input->init_pid, PADDOCK_SANDBOX_HOME, NULL, &options));
      all_in_place = all_in_place && options != NULL && !options_say_read_only (options);
      g_string_append_printf (evidence, "%sthe agent's home %s at %s, kept between its sessions: %s",
                              evidence->len > 0 ? "; " : "", input->agent_home, PADDOCK_SANDBOX_HOME,
                              options != NULL ? options : "no mount there");
    }
  for (guint i = 0; i < n_view; i++)
    {
      g_autofree char *options = NULL;

      g_free (mount_at (self, input->init_pid, input->agent_view[i], NULL, &options));
      all_in_place = all_in_place && options_say_read_only (options);
      g_string_append_printf (evidence, "%sthe agent's install %s at its own path: %s",
                              evidence->len > 0 ? "; " : "", input->agent_view[i],
                              options != NULL ? options : "no mount there");
    }
  g_string_append_printf (evidence, " (/proc/%d/mountinfo)", (int) input->init_pid);
  add_layer (self, "exposures", TRUE, all_in_place ? PADDOCK_LAYER_ENFORCED : PADDOCK_LAYER_UNENFORCED,
             g_string_free (g_steal_pointer (&evidence), FALSE));
}

/* Resource limits, as the session's cgroup reads them back now: each
 * limit file must hold what was asked. Requested only where a controller
 * was available to the daemon (as the cgroup layer is only where one could
 * be made); partial when one of the two is missing. */
static void
observe_resources (PaddockBoundary            *self,
                   const PaddockBoundaryInput *input,
                   gboolean                    sandboxed)
{
  const struct { const char *file; guint64 wanted; } limits[] = {
    { "pids.max", input->pids_max },
    { "memory.max", input->memory_max },
  };
  g_autoptr(GString) evidence = g_string_new (NULL);
  guint in_place = 0;

  if (!sandboxed)
    {
      add_layer (self, "resources", FALSE, PADDOCK_LAYER_UNENFORCED,
                 g_strdup ("the host profile sets no pids or memory limit"));
      return;
    }
  if (input->cgroup_path == NULL)
    {
      /* Still "requested" when limits were asked for: strict must refuse
       * a session whose limits have nowhere to go. */
      add_layer (self, "resources", input->resources_requested, PADDOCK_LAYER_UNENFORCED,
                 g_strdup_printf ("no pids or memory limit: no cgroup of its own (%s)",
                                  input->cgroup_reason != NULL ? input->cgroup_reason : "none could be made"));
      return;
    }
  for (guint i = 0; i < G_N_ELEMENTS (limits); i++)
    {
      g_autofree char *path = g_build_filename (input->cgroup_path, limits[i].file, NULL);
      g_autofree char *text = NULL;
      g_autofree char *wanted = g_strdup_printf ("%" G_GUINT64_FORMAT, limits[i].wanted);

      if (!g_file_get_contents (path, &text, NULL, NULL))
        continue;
      g_strstrip (text);
      if (g_str_equal (text, wanted))
        in_place++;
      g_string_append_printf (evidence, "%s%s: %s%s%s", evidence->len > 0 ? ", " : "", path, text,
                              g_str_equal (text, wanted) ? "" : ", asked ", g_str_equal (text, wanted) ? "" : wanted);
    }
  if (evidence->len == 0)
    g_string_append_printf (evidence, "no pids.max or memory.max in %s", input->cgroup_path);
  if (input->resources_reason != NULL)
    g_string_append_printf (evidence, "; %s", input->resources_reason);

  add_layer (self, "resources", input->resources_requested,
             in_place == G_N_ELEMENTS (limits) ? PADDOCK_LAYER_ENFORCED
             : in_place > 0 ? PADDOCK_LAYER_PARTIAL : PADDOCK_LAYER_UNENFORCED,
             g_string_free (g_steal_pointer (&evidence), FALSE));
}

/* The agent's environment, as the kernel kept it: an entry of the
 * daemon's own environment found there that the session did not give the
 * agent on purpose (@given: its allowlist and the caller's variables)
 * leaked. */
static void
observe_environment (PaddockBoundary    *self,
                     pid_t               agent,
                     const char *const  *given,
                     gboolean            sandboxed)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/environ", (int) agent);
  g_autofree char *text = NULL;
  g_autoptr(GPtrArray) leaked = g_ptr_array_new ();
  g_auto(GStrv) ours = g_get_environ ();
  gsize len = 0;
  guint n = 0;

  if (agent <= 0 || !g_file_get_contents (path, &text, &len, NULL))
    {
      add_layer (self, "environment", sandboxed, PADDOCK_LAYER_UNENFORCED,
                 g_strdup_printf ("/proc/%d/environ could not be read", (int) agent));
      return;
    }
  for (gsize off = 0; off < len; off += strlen (text + off) + 1)
    {
      const char *entry = text + off;

      n++;
      if (given != NULL && g_strv_contains (given, entry))
        continue;
      if (ours != NULL && g_strv_contains ((const char *const *) ours, entry))
        g_ptr_array_add (leaked, (gpointer) entry);
    }

  if (leaked->len == 0)
    add_layer (self, "environment", sandboxed, sandboxed ? PADDOCK_LAYER_ENFORCED : PADDOCK_LAYER_UNENFORCED,
               g_strdup_printf ("%u variables in /proc/%d/environ, none of them inherited from the daemon",
                                n, (int) agent));
  else
    {
      g_autoptr(GString) names = g_string_new (NULL);
      for (guint i = 0; i < leaked->len; i++)
        {
          const char *entry = g_ptr_array_index (leaked, i);
          g_string_append_printf (names, "%s%.*s", i > 0 ? ", " : "", (int) strcspn (entry, "="), entry);
        }
      add_layer (self, "environment", sandboxed, sandboxed ? PADDOCK_LAYER_PARTIAL : PADDOCK_LAYER_UNENFORCED,
                 g_strdup_printf ("/proc/%d/environ holds the daemon's own %s", (int) agent, names->str));
    }
}

/* Canary probes the sandbox ran inside the boundary: each is a layer of
 * its own, enforced only when the probe was blocked as expected. */
static void
observe_probes (PaddockBoundary *self,
                JsonObject      *report)
{
  JsonArray *probes;

  if (report == NULL || !json_object_has_member (report, "probes") ||
      !JSON_NODE_HOLDS_ARRAY (json_object_get_member (report, "probes")))
    return;
  probes = json_object_get_array_member (report, "probes");
  for (guint i = 0; i < json_array_get_length (probes); i++)
    {
      JsonNode *node = json_array_get_element (probes, i);
      JsonObject *probe;
      g_autofree char *name = NULL;
      gboolean blocked;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        continue;
      probe = json_node_get_object (node);
      name = g_strconcat ("probe:", json_object_get_string_member_with_default (probe, "probe", "?"), NULL);
      blocked = json_object_get_boolean_member_with_default (probe, "blocked", FALSE);
      add_layer (self, name, TRUE, blocked ? PADDOCK_LAYER_ENFORCED : PADDOCK_LAYER_UNENFORCED,
                 g_strdup_printf ("%s: expected %s, got %s",
                                  json_object_get_string_member_with_default (probe, "what", ""),
                                  json_object_get_string_member_with_default (probe, "expected", "?"),
                                  json_object_get_string_member_with_default (probe, "actual", "?")));
    }
}

static void
paddock_boundary_finalize (GObject *object)
{
  PaddockBoundary *self = PADDOCK_BOUNDARY (object);

  g_array_unref (self->layers);
  g_clear_pointer (&self->mounts, g_ptr_array_unref);
  G_OBJECT_CLASS (paddock_boundary_parent_class)->finalize (object);
}

static void
paddock_boundary_class_init (PaddockBoundaryClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = paddock_boundary_finalize;
}

static void
paddock_boundary_init (PaddockBoundary *self)
{
  self->layers = g_array_new (FALSE, TRUE, sizeof (Layer));
  g_array_set_clear_func (self->layers, (GDestroyNotify) layer_clear);
}

/* "         0       1000          1\n" → "0 1000 1", in place. */
static char *
collapse_spaces (char *text)
{
  char *out = text;
  gboolean space = FALSE;

  for (const char *p = text; *p != '\0'; p++)
    {
      if (g_ascii_isspace (*p))
        {
          space = out != text;
          continue;
        }
      if (space)
        *out++ = ' ';
      space = FALSE;
      *out++ = *p;
    }
  *out = '\0';
  return text;
}

/* Looks at the session now. Call it once the sandbox reported "started"
 * (the layers are in place from then on, and cannot be undone). */
PaddockBoundary *
paddock_boundary_observe (const PaddockBoundaryInput *input)
{
  PaddockBoundary *self;
  g_autofree char *init_status = NULL;
  gboolean sandboxed;
  pid_t init_pid;
  pid_t agent;

  g_return_val_if_fail (input != NULL, NULL);

  self = g_object_new (PADDOCK_TYPE_BOUNDARY, NULL);
  sandboxed = g_strcmp0 (input->profile, "host") != 0;
  /* The sandbox's pid 1 is the helper's only child; the agent its first. */
  init_pid = sandboxed ? first_child_of (input->session_pid) : input->session_pid;
  agent = sandboxed ? first_child_of (init_pid) : init_pid;
  {
    PaddockBoundaryInput seen = *input;
    seen.init_pid = init_pid;
    input = &seen;

  {
    g_autofree char *uid_map_path = g_strdup_printf ("/proc/%d/uid_map", (int) input->init_pid);
    g_autofree char *uid_map = NULL;
    g_autofree char *extra = NULL;

    if (g_file_get_contents (uid_map_path, &uid_map, NULL, NULL))
      extra = g_strdup_printf ("uid_map \"%s\"", collapse_spaces (uid_map));
    observe_namespace (self, "user-namespace", "user", sandboxed, input->init_pid, extra);
  }
  /* pid 1's status, also the agent's when they are one process (the
   * host profile): read once. */
  init_status = status_read (input->init_pid);
  {
    g_autofree char *nspid = status_field (init_status, "NSpid");
    g_autofree char *extra = nspid != NULL ? g_strdup_printf ("NSpid: %s", nspid) : NULL;
    observe_namespace (self, "pid-namespace", "pid", sandboxed, input->init_pid, extra);
  }
  observe_mounts (self, input, sandboxed);
  /* The agent's own account: pid 1 keeps its capabilities (in its user
   * namespace) to run commands; the agent dropped them all. */
  if (agent > 0 && agent != input->init_pid)
    observe_status (self, agent, NULL, sandboxed);
  else
    observe_status (self, input->init_pid, init_status, sandboxed);
  observe_landlock (self, input->sandbox_report, sandboxed);
  observe_network (self, input, sandboxed);
  observe_cgroup (self, input, sandboxed);
  observe_environment (self, agent > 0 ? agent : input->init_pid, input->given_env, sandboxed);
  /* Layers beyond INTERFACES.md's first twelve come after them, in order. */
  observe_protected (self, input, sandboxed);
  observe_resources (self, input, sandboxed);
  observe_exposures (self, input, sandboxed);
  observe_probes (self, input->sandbox_report);
  /* The mount layers are done with it. */
  g_clear_pointer (&self->mounts, g_ptr_array_unref);
  }

  return self;
}

/* As Session1.Boundary: one a{sv} per layer, "layer", "requested",
 * "status", "evidence". */
GVariant *
paddock_boundary_to_variant (PaddockBoundary *self)
{
  GVariantBuilder builder;

  g_return_val_if_fail (PADDOCK_IS_BOUNDARY (self), NULL);

  g_variant_builder_init (&builder, G_VARIANT_TYPE ("aa{sv}"));
  for (guint i = 0; i < self->layers->len; i++)
    {
      Layer *layer = &g_array_index (self->layers, Layer, i);

      /* Built in place, not through a GVariantDict's hash table: this
       * runs on every session's start, before its creator's answer. */
      g_variant_builder_open (&builder, G_VARIANT_TYPE_VARDICT);
      g_variant_builder_add (&builder, "{sv}", "layer", g_variant_new_string (layer->name));
      g_variant_builder_add (&builder, "{sv}", "requested", g_variant_new_boolean (layer->requested));
      g_variant_builder_add (&builder, "{sv}", "status",
                             g_variant_new_string (paddock_layer_status_to_string (layer->status)));
      g_variant_builder_add (&builder, "{sv}", "evidence", g_variant_new_string (layer->evidence));
      g_variant_builder_close (&builder);
    }
  return g_variant_builder_end (&builder);
}

/* The requested layers that are not observed enforced, comma-separated,
 * or NULL when there is none: what strict refuses to run without. */
char *
paddock_boundary_dup_unenforced (PaddockBoundary *self)
{
  g_autoptr(GString) names = g_string_new (NULL);

  for (guint i = 0; i < self->layers->len; i++)
    {
      Layer *layer = &g_array_index (self->layers, Layer, i);

      if (layer->requested && layer->status != PADDOCK_LAYER_ENFORCED)
        g_string_append_printf (names, "%s%s (%s)", names->len > 0 ? ", " : "", layer->name,
                                paddock_layer_status_to_string (layer->status));
    }
  if (names->len == 0)
    return NULL;
  return g_string_free (g_steal_pointer (&names), FALSE);
}
