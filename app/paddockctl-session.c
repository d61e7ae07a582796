/* paddockctl-session.c — `paddockctl create|list|status|stop|destroy`
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gio/gunixfdlist.h>

#include <glib/gi18n.h>

#include "paddock-error.h"
#include "paddock-exit-status.h"
#include "paddock-net-modes.h"
#include "paddock-reserved-ports.h"
#include "paddockctl-escape.h"
#include "paddockctl-private.h"

/* Session ids are 12 lower-case hexadecimal digits (org.paddock.Session1). */
#define SESSION_ID_LEN       12
#define SESSION_PATH_PREFIX  PADDOCK_OBJECT_PATH "/session/"
#define SESSION_INTERFACE    "org.paddock.Session1"

/* The limits the daemon enforces, checked here first so that a typo is a
 * usage error (exit 2) rather than a failed call (exit 1). */
#define DEFAULT_GRACE_SECONDS 5
#define MAX_GRACE_SECONDS     300
#define MAX_TERMINAL_CELLS    1000

/* Until the network policy exists every session shares the host's network. */
#define NET_HOST "host"

/* ---- ids and errors --------------------------------------------------------- */

/* The canonical (lower-case) id for @text, or NULL when it is not one. */
char *
paddockctl_dup_session_id (const char *text)
{
  if (strlen (text) != SESSION_ID_LEN)
    return NULL;

  for (const char *p = text; *p != '\0'; p++)
    if (!g_ascii_isxdigit (*p))
      return NULL;

  return g_ascii_strdown (text, -1);
}

char *
paddockctl_session_path (const char *id)
{
  return g_strconcat (SESSION_PATH_PREFIX, id, NULL);
}

/* Checks the ID argument of a command; on failure prints the usage error
 * and returns NULL with *exit_code set. */
char *
paddockctl_parse_session_id (Paddockctl *ctl,
                  const char *command_path,
                  const char *text,
                  int        *exit_code)
{
  char *id = paddockctl_dup_session_id (text);

  if (id == NULL)
    *exit_code = paddockctl_usage_error (ctl, command_path,
                                         _("invalid session id “%s”: expected 12 hexadecimal "
                                         "digits, as printed by “paddockctl create” or "
                                         "“paddockctl list”"),
                                         text);
  return id;
}

/* For commands taking exactly one argument, the session ID: checks the
 * count and the ID; on failure prints the usage error and returns NULL
 * with *exit_code set. */
char *
paddockctl_parse_only_session_id (Paddockctl  *ctl,
                                  const char  *command_path,
                                  int          argc,
                                  char       **argv,
                                  int         *exit_code)
{
  if (argc < 2)
    {
      *exit_code = paddockctl_usage_error (ctl, command_path, _("missing session ID"));
      return NULL;
    }
  if (argc > 2)
    {
      *exit_code = paddockctl_usage_error (ctl, command_path, _("unexpected argument “%s”"), argv[2]);
      return NULL;
    }
  return paddockctl_parse_session_id (ctl, command_path, argv[1], exit_code);
}

static gboolean
session_is_listed (Paddockctl *ctl,
                   const char *id)
{
  g_autoptr(GVariant) sessions = NULL;
  PaddockIpcManager1 *manager;
  gsize n_sessions;

  if (!(manager = paddockctl_get_manager (ctl, NULL)) ||
      !paddock_ipc_manager1_call_list_sessions_sync (manager, &sessions, NULL, NULL))
    return TRUE;  /* cannot tell: keep the original error */

  n_sessions = g_variant_n_children (sessions);
  for (gsize i = 0; i < n_sessions; i++)
    {
      g_autoptr(GVariant) dict = g_variant_get_child_value (sessions, i);
      const char *listed = NULL;

      if (g_variant_lookup (dict, "id", "&s", &listed) && g_str_equal (listed, id))
        return TRUE;
    }

  return FALSE;
}

/* A call on the object of a session that does not exist fails with the
 * bus's generic "no such object/interface/method". Where the daemon does
 * not list @id either, say so in our own terms: NotFound, like every other
 * missing thing. */
void
paddockctl_check_session_error (Paddockctl  *ctl,
                                const char  *id,
                                GError     **error)
{
  g_return_if_fail (error != NULL && *error != NULL);

  if (!paddockctl_is_unknown_object_error (*error) || session_is_listed (ctl, id))
    return;

  g_clear_error (error);
  g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND, _("no session “%s”"), id);
}

/* The usual end of a failed call on session @id: the error, with an
 * unknown object reported as "no session", printed; the exit code. */
int
paddockctl_fail_session (Paddockctl  *ctl,
                         const char  *id,
                         GError     **error)
{
  paddockctl_check_session_error (ctl, id, error);
  return paddockctl_fail (ctl, *error);
}

/* The properties of session @id, as an a{sv}. */
static GVariant *
get_session_properties (Paddockctl  *ctl,
                        const char  *id,
                        GError     **error)
{
  g_autofree char *path = paddockctl_session_path (id);
  g_autoptr(GVariant) reply = NULL;
  GDBusConnection *bus;

  if (!(bus = paddockctl_get_bus (ctl, error)))
    return NULL;

  reply = g_dbus_connection_call_sync (bus, PADDOCK_BUS_NAME, path,
                                       "org.freedesktop.DBus.Properties", "GetAll",
                                       g_variant_new ("(s)", SESSION_INTERFACE),
                                       G_VARIANT_TYPE ("(a{sv})"),
                                       G_DBUS_CALL_FLAGS_NONE, PADDOCKCTL_CALL_TIMEOUT_MS,
                                       NULL, error);
  if (reply == NULL)
    {
      paddockctl_check_session_error (ctl, id, error);
      return NULL;
    }

  /* A destroyed session answers for a while longer (so late calls get a
   * clear error); to a user it no longer exists. */
  {
    g_autoptr(GVariant) properties = g_variant_get_child_value (reply, 0);
    const char *state = NULL;

    if (g_variant_lookup (properties, "State", "&s", &state) && g_strcmp0 (state, "destroyed") == 0)
      {
        g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND, _("no session “%s”"), id);
        return NULL;
      }
    return g_steal_pointer (&properties);
  }
}

/* The State property alone, for `logs --follow`. */
gboolean
paddockctl_get_session_state (Paddockctl  *ctl,
                              const char  *id,
                              char       **out_state,
                              GError     **error)
{
  g_autofree char *path = paddockctl_session_path (id);
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) value = NULL;
  GDBusConnection *bus;

  if (!(bus = paddockctl_get_bus (ctl, error)))
    return FALSE;

  reply = g_dbus_connection_call_sync (bus, PADDOCK_BUS_NAME, path,
                                       "org.freedesktop.DBus.Properties", "Get",
                                       g_variant_new ("(ss)", SESSION_INTERFACE, "State"),
                                       G_VARIANT_TYPE ("(v)"),
                                       G_DBUS_CALL_FLAGS_NONE, PADDOCKCTL_CALL_TIMEOUT_MS,
                                       NULL, error);
  if (reply == NULL)
    {
      paddockctl_check_session_error (ctl, id, error);
      return FALSE;
    }

  g_variant_get (reply, "(v)", &value);
  *out_state = g_variant_is_of_type (value, G_VARIANT_TYPE_STRING)
               ? g_variant_dup_string (value, NULL) : g_strdup ("");
  return TRUE;
}

/* ---- one session, from ListSessions or from its properties ----------------- */

typedef struct
{
  char     *id;
  char     *name;
  char     *state;
  char     *profile;
  char     *agent;           /* its agent preset, "" for a plain command */
  char     *staging;         /* "overlay", "copy" or "none" */
  char     *net;             /* "host" or "none" */
  GVariant *boundary;        /* aa{sv}, one per layer; NULL when not known */
  GVariant *stage;           /* a{sv}, Session1.Stage; NULL or empty when not measured */
  char     *workspace;       /* bytes, as the daemon sent them */
  char    **command;         /* bytes, as the daemon sent them */
  guint     pid;             /* 0 when not running */
  gint      exit_status;     /* -1 while running, -2 unknown (paddock-exit-status.h) */
  guint     processes;
  guint64   created;         /* Unix time in microseconds */
  gboolean  have_output_offset;
  guint64   output_offset;
  char     *damaged;         /* NULL, or why its record could not be read whole */
} SessionInfo;

static void
session_info_clear (SessionInfo *info)
{
  g_clear_pointer (&info->id, g_free);
  g_clear_pointer (&info->name, g_free);
  g_clear_pointer (&info->state, g_free);
  g_clear_pointer (&info->profile, g_free);
  g_clear_pointer (&info->agent, g_free);
  g_clear_pointer (&info->staging, g_free);
  g_clear_pointer (&info->net, g_free);
  g_clear_pointer (&info->boundary, g_variant_unref);
  g_clear_pointer (&info->stage, g_variant_unref);
  g_clear_pointer (&info->workspace, g_free);
  g_clear_pointer (&info->command, g_strfreev);
  g_clear_pointer (&info->damaged, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SessionInfo, session_info_clear)

/* ListSessions and the Session1 properties say the same things under
 * different names. */
typedef enum
{
  SOURCE_LIST,
  SOURCE_PROPERTIES,
} SessionSource;

typedef enum
{
  KEY_ID,
  KEY_NAME,
  KEY_STATE,
  KEY_PROFILE,
  KEY_AGENT,
  KEY_STAGING,
  KEY_BOUNDARY,
  KEY_STAGE,
  KEY_NET,
  KEY_WORKSPACE,
  KEY_COMMAND,
  KEY_PID,
  KEY_EXIT_STATUS,
  KEY_PROCESSES,
  KEY_CREATED,
  KEY_OUTPUT_OFFSET,
  KEY_DAMAGED,
  N_KEYS
} SessionKey;

static const struct
{
  const char *list;        /* NULL when ListSessions does not say */
  const char *property;
} session_keys[N_KEYS] = {
  [KEY_ID]            = { "id",          "Id" },
  [KEY_NAME]          = { "name",        "Name" },
  [KEY_STATE]         = { "state",       "State" },
  [KEY_PROFILE]       = { "profile",     "Profile" },
  [KEY_AGENT]         = { "agent",       "Agent" },
  [KEY_STAGING]       = { "staging",     "Staging" },
  [KEY_BOUNDARY]      = { "boundary",    "Boundary" },
  [KEY_STAGE]         = { NULL,          "Stage" },
  [KEY_NET]           = { "net",         "NetworkMode" },
  [KEY_WORKSPACE]     = { "workspace",   "Workspace" },
  [KEY_COMMAND]       = { "command",     "Command" },
  [KEY_PID]           = { "pid",         "MainPid" },
  [KEY_EXIT_STATUS]   = { "exit-status", "ExitStatus" },
  [KEY_PROCESSES]     = { "processes",   "ProcessCount" },
  [KEY_CREATED]       = { "created",     "Created" },
  [KEY_OUTPUT_OFFSET] = { NULL,          "OutputOffset" },
  [KEY_DAMAGED]       = { "damaged",     "Damaged" },
};

static gboolean
lookup (GVariant      *dict,
        SessionSource  source,
        SessionKey     key,
        const char    *format,
        gpointer       out)
{
  const char *name = source == SOURCE_LIST ? session_keys[key].list : session_keys[key].property;

  return name != NULL && g_variant_lookup (dict, name, format, out);
}

/* Reads leniently, as for leases: what is missing or mistyped reads as
 * empty. @fallback_id names the session when the dictionary does not. */
static void
session_info_init (SessionInfo   *info,
                   GVariant      *dict,
                   SessionSource  source,
                   const char    *fallback_id)
{
  memset (info, 0, sizeof *info);
  info->exit_status = -1;

  if (!lookup (dict, source, KEY_ID, "s", &info->id))
    {
      const char *path = NULL;

      if (g_variant_lookup (dict, "path", "&o", &path) && strrchr (path, '/') != NULL)
        info->id = g_strdup (strrchr (path, '/') + 1);
      else
        info->id = g_strdup (fallback_id != NULL ? fallback_id : "");
    }
  if (!lookup (dict, source, KEY_NAME, "s", &info->name))
    info->name = g_strdup ("");
  if (!lookup (dict, source, KEY_STATE, "s", &info->state))
    info->state = g_strdup ("");
  if (!lookup (dict, source, KEY_PROFILE, "s", &info->profile))
    info->profile = g_strdup ("");
  if (!lookup (dict, source, KEY_AGENT, "s", &info->agent))
    info->agent = g_strdup ("");
  if (!lookup (dict, source, KEY_STAGING, "s", &info->staging))
    info->staging = g_strdup ("");
  if (!lookup (dict, source, KEY_BOUNDARY, "@aa{sv}", &info->boundary))
    info->boundary = NULL;
  if (!lookup (dict, source, KEY_STAGE, "@a{sv}", &info->stage))
    info->stage = NULL;
  if (!lookup (dict, source, KEY_NET, "s", &info->net))
    info->net = g_strdup (NET_HOST);
  if (!lookup (dict, source, KEY_WORKSPACE, "^ay", &info->workspace))
    info->workspace = g_strdup ("");
  if (!lookup (dict, source, KEY_COMMAND, "^aay", &info->command))
    info->command = g_new0 (char *, 1);
  lookup (dict, source, KEY_PID, "u", &info->pid);
  lookup (dict, source, KEY_EXIT_STATUS, "i", &info->exit_status);
  lookup (dict, source, KEY_PROCESSES, "u", &info->processes);
  lookup (dict, source, KEY_CREATED, "t", &info->created);
  info->have_output_offset = lookup (dict, source, KEY_OUTPUT_OFFSET, "t", &info->output_offset);
  /* Empty means not damaged (the property is always there). */
  if (lookup (dict, source, KEY_DAMAGED, "s", &info->damaged) && info->damaged[0] == '\0')
    g_clear_pointer (&info->damaged, g_free);
}

/* Paths and argv are bytes; JSON and terminals want text. */
static char *
display_bytes (const char *bytes)
{
  return g_utf8_make_valid (bytes, -1);
}

/* The command as a shell would need it typed, for people. */
static char *
display_command (char **command)
{
  g_autoptr(GString) text = g_string_new (NULL);

  for (gsize i = 0; command[i] != NULL; i++)
    {
      g_autofree char *arg = display_bytes (command[i]);
      gboolean plain = *arg != '\0';

      for (const char *p = arg; *p != '\0' && plain; p++)
        plain = g_ascii_isalnum (*p) || strchr ("@%+=:,./_-", *p) != NULL ||
                (guchar) *p >= 0x80;

      if (i > 0)
        g_string_append_c (text, ' ');
      if (plain)
        g_string_append (text, arg);
      else
        {
          g_autofree char *quoted = g_shell_quote (arg);

          g_string_append (text, quoted);
        }
    }

  return g_string_free (g_steal_pointer (&text), FALSE);
}

/* What a person reads on a terminal: a name, a path, a command may come
 * from an agent (a host-profile session can call the daemon), so their
 * controls and invisible characters are escaped there; scripts that read
 * the human output from a pipe get the same text as before. */
static char *
terminal_text (char *text)
{
  g_autofree char *owned = text;

  return paddockctl_dup_for_terminal (owned, STDOUT_FILENO, PADDOCKCTL_ESCAPE_ONE_LINE);
}

static char *
display_time (guint64 usec)
{
  g_autoptr(GDateTime) utc = NULL;
  g_autoptr(GDateTime) local = NULL;

  if (usec == 0)
    return g_strdup ("-");

  utc = g_date_time_new_from_unix_utc ((gint64) MIN (usec / G_USEC_PER_SEC, (guint64) G_MAXINT64));
  local = utc != NULL ? g_date_time_to_local (utc) : NULL;

  return local != NULL ? g_date_time_format (local, "%Y-%m-%d %H:%M:%S %Z") : g_strdup ("-");
}

/* The daemon's leases (Ports1.ListLeases), for the "ports" of sessions;
 * NULL (no ports shown) when they cannot be listed. */
static GVariant *
list_all_leases (Paddockctl *ctl)
{
  PaddockIpcPorts1 *ports = paddockctl_get_ports (ctl, NULL);
  GVariant *leases = NULL;

  if (ports == NULL || !paddock_ipc_ports1_call_list_leases_sync (ports, &leases, NULL, NULL))
    return NULL;
  return leases;
}

/* Whether @lease (of ListLeases) is tied to the session of @info; if so
 * its members, borrowed from @lease, and how the agent got it: forwarded
 * into its own namespace, or on the host's network released for it to
 * bind, or listening. */
static gboolean
session_lease (const SessionInfo  *info,
               GVariant           *lease,
               guint16            *port,
               const char        **name,
               const char        **owner,
               const char        **state,
               const char        **handover)
{
  const char *session = "";
  gboolean released = FALSE;

  if (!g_variant_lookup (lease, "session", "&s", &session) || g_strcmp0 (session, info->id) != 0)
    return FALSE;
  *port = 0;
  *name = *owner = *state = "";
  g_variant_lookup (lease, "port", "q", port);
  g_variant_lookup (lease, "name", "&s", name);
  g_variant_lookup (lease, "owner", "&s", owner);
  g_variant_lookup (lease, "state", "&s", state);
  g_variant_lookup (lease, "released", "b", &released);
  *handover = g_strcmp0 (info->net, "host") != 0 ? "forward" : released ? "release" : "listen-fds";
  return TRUE;
}

static void
add_session_to_builder (JsonBuilder       *builder,
                        const SessionInfo *info,
                        GVariant          *leases)
{
  g_autofree char *workspace = display_bytes (info->workspace);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "id");
  json_builder_add_string_value (builder, info->id);
  json_builder_set_member_name (builder, "name");
  json_builder_add_string_value (builder, info->name);
  json_builder_set_member_name (builder, "state");
  json_builder_add_string_value (builder, info->state);
  /* null, or why the record could not be read whole (listed anyway). */
  json_builder_set_member_name (builder, "damaged");
  if (info->damaged != NULL)
    json_builder_add_string_value (builder, info->damaged);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "workspace");
  json_builder_add_string_value (builder, workspace);
  json_builder_set_member_name (builder, "command");
  json_builder_begin_array (builder);
  for (gsize i = 0; info->command[i] != NULL; i++)
    {
      g_autofree char *arg = display_bytes (info->command[i]);

      json_builder_add_string_value (builder, arg);
    }
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "profile");
  json_builder_add_string_value (builder, info->profile);
  json_builder_set_member_name (builder, "agent");
  json_builder_add_string_value (builder, info->agent);
  json_builder_set_member_name (builder, "staging");
  json_builder_add_string_value (builder, info->staging);
  json_builder_set_member_name (builder, "net");
  json_builder_add_string_value (builder, info->net);
  json_builder_set_member_name (builder, "pid");
  if (info->pid != 0)
    json_builder_add_int_value (builder, info->pid);
  else
    json_builder_add_null_value (builder);
  /* null while it runs; "unknown" for an agent that ended unwatched. */
  json_builder_set_member_name (builder, "exit_status");
  if (info->exit_status >= 0)
    json_builder_add_int_value (builder, info->exit_status);
  else if (info->exit_status == PADDOCK_EXIT_STATUS_UNKNOWN)
    json_builder_add_string_value (builder, "unknown");
  else
    json_builder_add_null_value (builder);
  /* Its leases: those Ports1 lists as tied to this session. */
  json_builder_set_member_name (builder, "ports");
  json_builder_begin_array (builder);
  for (gsize i = 0; leases != NULL && i < g_variant_n_children (leases); i++)
    {
      g_autoptr(GVariant) lease = g_variant_get_child_value (leases, i);
      const char *name, *owner, *state, *handover;
      guint16 port;

      if (!session_lease (info, lease, &port, &name, &owner, &state, &handover))
        continue;
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "port");
      json_builder_add_int_value (builder, port);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, name);
      json_builder_set_member_name (builder, "owner");
      json_builder_add_string_value (builder, owner);
      json_builder_set_member_name (builder, "session");
      json_builder_add_string_value (builder, info->id);
      json_builder_set_member_name (builder, "reserved");
      json_builder_add_boolean_value (builder, paddock_lease_is_reserved (info->id, name));
      json_builder_set_member_name (builder, "state");
      json_builder_add_string_value (builder, state);
      json_builder_set_member_name (builder, "handover");
      json_builder_add_string_value (builder, handover);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "processes");
  json_builder_add_int_value (builder, info->processes);
  json_builder_set_member_name (builder, "boundary");
  json_builder_begin_array (builder);
  for (gsize i = 0; info->boundary != NULL && i < g_variant_n_children (info->boundary); i++)
    {
      g_autoptr(GVariant) layer = g_variant_get_child_value (info->boundary, i);
      const char *name = "", *status = "", *evidence = "";
      gboolean requested = FALSE;

      g_variant_lookup (layer, "layer", "&s", &name);
      g_variant_lookup (layer, "requested", "b", &requested);
      g_variant_lookup (layer, "status", "&s", &status);
      g_variant_lookup (layer, "evidence", "&s", &evidence);
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "layer");
      json_builder_add_string_value (builder, name);
      json_builder_set_member_name (builder, "requested");
      json_builder_add_boolean_value (builder, requested);
      json_builder_set_member_name (builder, "status");
      json_builder_add_string_value (builder, status);
      json_builder_set_member_name (builder, "evidence");
      json_builder_add_string_value (builder, evidence);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  if (info->stage != NULL && g_variant_n_children (info->stage) > 0)
    {
      guint64 bytes = 0, limit = 0;
      gboolean full = FALSE;
      const char *reason = "", *paused = "";

      g_variant_lookup (info->stage, "bytes", "t", &bytes);
      g_variant_lookup (info->stage, "limit", "t", &limit);
      g_variant_lookup (info->stage, "full", "b", &full);
      g_variant_lookup (info->stage, "reason", "&s", &reason);
      g_variant_lookup (info->stage, "paused", "&s", &paused);
      json_builder_set_member_name (builder, "stage");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "bytes");
      json_builder_add_int_value (builder, (gint64) MIN (bytes, (guint64) G_MAXINT64));
      json_builder_set_member_name (builder, "limit");
      json_builder_add_int_value (builder, (gint64) MIN (limit, (guint64) G_MAXINT64));
      json_builder_set_member_name (builder, "full");
      json_builder_add_boolean_value (builder, full);
      json_builder_set_member_name (builder, "reason");
      json_builder_add_string_value (builder, reason);
      json_builder_set_member_name (builder, "paused");
      json_builder_add_string_value (builder, paused);
      json_builder_end_object (builder);
    }
  json_builder_set_member_name (builder, "created");
  json_builder_add_int_value (builder, (gint64) MIN (info->created, (guint64) G_MAXINT64));
  if (info->have_output_offset)
    {
      json_builder_set_member_name (builder, "output_offset");
      json_builder_add_int_value (builder,
                                  (gint64) MIN (info->output_offset, (guint64) G_MAXINT64));
    }
  json_builder_end_object (builder);
}

static void
print_session_json (Paddockctl        *ctl,
                    const SessionInfo *info)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GVariant) leases = list_all_leases (ctl);

  add_session_to_builder (builder, info, leases);
  root = json_builder_get_root (builder);
  paddockctl_print_json (ctl, root);
}

/* `key: value` lines, values aligned; the session's ports (of @leases,
 * NULL when they could not be listed) one a line, as the JSON has them:
 * name, port, state and how the agent got it. */
static void
print_session_human (const SessionInfo *info,
                     GVariant          *leases)
{
  guint n_ports = 0;
  g_autofree char *workspace = terminal_text (display_bytes (info->workspace));
  g_autofree char *command = terminal_text (display_command (info->command));
  g_autofree char *name = terminal_text (display_bytes (*info->name != '\0' ? info->name : "-"));
  g_autofree char *created = display_time (info->created);
  g_autofree char *pid = info->pid != 0 ? g_strdup_printf ("%u", info->pid) : g_strdup ("-");
  g_autofree char *exit_status = info->exit_status >= 0 ? g_strdup_printf ("%d", info->exit_status)
                                 : info->exit_status == PADDOCK_EXIT_STATUS_UNKNOWN ? g_strdup ("unknown")
                                 : g_strdup ("-");

  g_print ("id:          %s\n", info->id);
  g_print ("name:        %s\n", name);
  g_print ("state:       %s\n", info->state);
  if (info->damaged != NULL)
    {
      g_autofree char *damaged = terminal_text (g_strdup (info->damaged));

      g_print ("damaged:     %s\n", damaged);
    }
  g_print ("workspace:   %s\n", workspace);
  g_print ("command:     %s\n", command);
  g_print ("profile:     %s\n", info->profile);
  g_print ("staging:     %s\n", info->staging);
  g_print ("net:         %s\n", info->net);
  g_print ("pid:         %s\n", pid);
  g_print ("exit_status: %s\n", exit_status);
  g_print ("processes:   %u\n", info->processes);
  for (gsize i = 0; leases != NULL && i < g_variant_n_children (leases); i++)
    {
      g_autoptr(GVariant) lease = g_variant_get_child_value (leases, i);
      g_autofree char *shown = NULL;
      const char *lease_name, *owner, *state, *handover;
      guint16 port;

      if (!session_lease (info, lease, &port, &lease_name, &owner, &state, &handover))
        continue;
      /* Names are the client's: escaped like any text not ours. */
      shown = terminal_text (g_strdup (lease_name));
      g_print ("%s %s %u %s (%s)%s\n", n_ports == 0 ? "ports:      " : "            ", shown, port,
               state, handover, paddock_lease_is_reserved (info->id, lease_name) ? ", reserved" : "");
      n_ports++;
    }
  if (leases == NULL)
    g_print ("ports:       ? (the leases could not be listed)\n");
  else if (n_ports == 0)
    g_print ("ports:       -\n");
  g_print ("created:     %s\n", created);
  if (info->have_output_offset)
    g_print ("output:      %" G_GUINT64_FORMAT " bytes\n", info->output_offset);
}

/* ---- create ----------------------------------------------------------------- */

#define CREATE_SUMMARY \
  N_("Start CMD on a new terminal in a session of its own, in the folder DIR.\n\n" \
  "Prints the session's id, so that id=$(paddockctl create …) works.\n" \
  "The session keeps running when paddockctl exits; stop it with\n" \
  "“paddockctl stop ID” and delete it with “paddockctl destroy ID”.\n\n" \
  "Its environment holds TERM, LANG, LC_*, PATH and a HOME of its own,\n" \
  "plus what --env and --pass-env add: nothing else of yours.\n\n" \
  "In a safe or strict session the workspace's .git/hooks and .git/config\n" \
  "are read-only; --allow-write PATH (either of them, relative to DIR or\n" \
  "absolute) lets the agent change it, in the staged view like the rest.\n\n" \
  "Where the session's cgroup has the pids and memory controllers, a safe\n" \
  "or strict session is limited to --pids-max processes (default 4096) and\n" \
  "--memory-max bytes (K, M, G suffixes; default half of the machine's).\n\n" \
  "Nothing of your HOME is in a safe session's view unless --expose PATH\n" \
  "shows it (e.g. an agent's login folder), read-only, at the same place\n" \
  "in the session's HOME; status --review lists each exposure.")

static const char * const profiles[] = { "host", "safe", "strict" };

/* Options that INTERFACES.md names but this version cannot honour yet:
 * refusing them (exit 1) beats ignoring them, and beats "unknown option"
 * (exit 2), which would read as a typo. */
static int
fail_not_yet (Paddockctl *ctl,
              const char *what)
{
  g_autofree char *message = g_strdup_printf (_("%s arrives with a later version of Paddock"), what);

  return paddockctl_fail_literal (ctl, PADDOCKCTL_EXIT_FAILED,
                                  paddock_error_to_dbus_name (PADDOCK_ERROR_FAILED), message);
}

static gboolean
parse_size (const char *text,
            guint16    *out_columns,
            guint16    *out_rows)
{
  g_auto(GStrv) parts = g_strsplit (text, "x", 0);
  guint64 columns = 0;
  guint64 rows = 0;

  if (g_strv_length (parts) != 2 ||
      !g_ascii_string_to_unsigned (parts[0], 10, 1, MAX_TERMINAL_CELLS, &columns, NULL) ||
      !g_ascii_string_to_unsigned (parts[1], 10, 1, MAX_TERMINAL_CELLS, &rows, NULL))
    return FALSE;

  *out_columns = (guint16) columns;
  *out_rows = (guint16) rows;
  return TRUE;
}

int
paddockctl_create (Paddockctl  *ctl,
                   int          argc,
                   char       **argv)
{
  const char *command_path = "paddockctl create";
  const char *bad_env = NULL;
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) properties = NULL;
  g_autofree char *workspace = NULL;
  g_autofree char *name = NULL;
  g_autofree char *profile = NULL;
  g_autofree char *size = NULL;
  gboolean attach = FALSE;
  gboolean size_given;
  g_autofree char *net = NULL;
  g_autofree char *agent = NULL;
  g_autofree char *pids_max = NULL;
  g_autofree char *memory_max = NULL;
  g_autofree char *stage_limit = NULL;
  g_autofree char *reserved_ports = NULL;
  g_autofree char *port_handover = NULL;
  g_autofree char *path = NULL;
  g_autofree char *absolute = NULL;
  g_autofree char **options_argv = NULL;
  g_auto(GStrv) env = NULL;
  g_auto(GStrv) pass_env = NULL;
  g_auto(GStrv) allow_write = NULL;
  g_auto(GStrv) expose = NULL;
  g_auto(GStrv) allow_domains = NULL;
  g_auto(GStrv) ports = NULL;
  g_auto(GVariantBuilder) options = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_auto(GVariantBuilder) env_builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a{ss}"));
  g_auto(SessionInfo) info = { 0 };
  const char * const *command = NULL;
  PaddockIpcManager1 *manager;
  const char *id;
  const GOptionEntry entries[] = {
    { "workspace", 0, 0, G_OPTION_ARG_FILENAME, &workspace,
      N_("The project folder the agent works in (required)"), N_("DIR") },
    { "name", 0, 0, G_OPTION_ARG_STRING, &name,
      N_("A label for people (default: chosen by the daemon)"), N_("NAME") },
    { "profile", 0, 0, G_OPTION_ARG_STRING, &profile,
      N_("Isolation: host (none), safe (the default) or strict"), N_("PROFILE") },
    { "env", 0, 0, G_OPTION_ARG_STRING_ARRAY, &env,
      N_("Set variable K to V inside (repeatable)"), N_("K=V") },
    { "pass-env", 0, 0, G_OPTION_ARG_STRING_ARRAY, &pass_env,
      N_("Pass your own variable K inside (repeatable)"), N_("K") },
    { "size", 0, 0, G_OPTION_ARG_STRING, &size,
      N_("The terminal's size, 1–1000 each (default: 80x24)"), N_("COLSxROWS") },
    { "agent", 0, 0, G_OPTION_ARG_STRING, &agent,
      N_("Run an agent preset (see “paddockctl agents”): its program, or CMD in its environment; "
      "network proxy with its domains unless --net"), N_("NAME") },
    { "net", 0, 0, G_OPTION_ARG_STRING, &net,
      N_("Network: host (default), none (own namespace, loopback only), proxy (as none, out only through the daemon's proxy)"), N_("MODE") },
    { "allow-write", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &allow_write,
      N_("Let the agent write a protected path of DIR (.git/hooks, .git/config; repeatable)"), N_("PATH") },
    { "expose", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &expose,
      N_("Show a folder or file of your HOME read-only at the same place in the session's HOME (repeatable)"), N_("PATH") },
    { "pids-max", 0, 0, G_OPTION_ARG_STRING, &pids_max,
      N_("At most N processes in the session (16–4194304; default 4096)"), N_("N") },
    { "memory-max", 0, 0, G_OPTION_ARG_STRING, &memory_max,
      N_("At most SIZE bytes of memory, e.g. 2G (64M–16T; default half the machine's)"), N_("SIZE") },
    { "stage-limit", 0, 0, G_OPTION_ARG_STRING, &stage_limit,
      N_("The stage holds at most SIZE bytes, e.g. 20G (1M–16T; default 8G): the session is held still there"), N_("SIZE") },
    { "allow-domain", 0, 0, G_OPTION_ARG_STRING_ARRAY, &allow_domains,
      N_("With --net proxy: let the proxy reach D (example.com, *.example.com, !D denies; repeatable)"), N_("D") },
    { "port", 0, 0, G_OPTION_ARG_STRING_ARRAY, &ports,
      N_("Lease a port named NAME for the session (repeatable): PORT and PADDOCK_PORT_<NAME>; with net host "
      "see --port-handover, with none or proxy it is forwarded in and the agent binds it"), N_("NAME") },
    { "port-handover", 0, 0, G_OPTION_ARG_STRING, &port_handover,
      N_("With net host: release (default: the agent binds its ports itself, the ordinary way) or listen-fds "
      "(it gets them listening: LISTEN_FDS, socket activation)"), N_("MODE") },
    { "attach", 0, 0, G_OPTION_ARG_NONE, &attach,
      N_("Stay on the session's terminal from its first byte, as “paddockctl attach ID” (the id goes to "
      "stderr); the session's terminal takes and follows this one's size unless --size fixes it"), NULL },
    { "reserved-ports", 0, 0, G_OPTION_ARG_STRING, &reserved_ports,
      "With net none or proxy: hold N more ports (0–" G_STRINGIFY (PADDOCK_SESSION_MAX_PORTS) ", with the named ones "
      "at most " G_STRINGIFY (PADDOCK_SESSION_MAX_PORTS) "; default " G_STRINGIFY (PADDOCK_SESSION_RESERVED_PORTS) ") that "
      "“ports lease --session” names first, later (it leases a new port when none is held)", "N" },
    { NULL }
  };
  int options_argc = argc;
  int exit_code = PADDOCKCTL_EXIT_OK;
  gboolean have_command_separator = FALSE;
  guint16 columns = 0;
  guint16 rows = 0;
  g_autoptr(GUnixFDList) fd_list = NULL;
  g_autoptr(GVariant) reply = NULL;
  int viewer[2] = { -1, -1 };

  /* As in `ports lease`: "--" splits our options from the agent's argv. */
  for (int i = 1; i < argc; i++)
    if (g_str_equal (argv[i], "--"))
      {
        options_argc = i;
        have_command_separator = TRUE;
        if (i + 1 < argc)
          command = (const char * const *) &argv[i + 1];
        break;
      }

  options_argv = g_new0 (char *, options_argc + 1);
  memcpy (options_argv, argv, sizeof (char *) * options_argc);

  context = paddockctl_option_context_new (ctl, "--workspace DIR -- CMD [ARG…]",
                                           CREATE_SUMMARY, entries);
  {
    char **parse_argv = options_argv;

    if (!paddockctl_parse_options (ctl, context, command_path,
                                   &options_argc, &parse_argv, &exit_code))
      return exit_code;
  }

  if (net != NULL && !paddock_net_mode_is_valid (net))
    return paddockctl_usage_error (ctl, command_path, "invalid --net “%s”: expected " PADDOCK_NET_MODES_TEXT, net);
  if (allow_domains != NULL && (net != NULL || agent == NULL) && (net == NULL || !g_str_equal (net, "proxy")))
    return paddockctl_usage_error (ctl, command_path, _("--allow-domain needs --net proxy"));

  if (options_argc > 1)
    return paddockctl_usage_error (ctl, command_path,
                                   _("unexpected argument “%s” (put the command after “--”)"),
                                   options_argv[1]);
  if (workspace == NULL || *workspace == '\0')
    return paddockctl_usage_error (ctl, command_path, _("missing --workspace DIR"));
  if (command == NULL && (agent == NULL || have_command_separator))
    return paddockctl_usage_error (ctl, command_path,
                                   have_command_separator ? _("missing command after “--”")
                                                          : _("missing “-- CMD [ARG…]”"));
  if (command != NULL && *command[0] == '\0')
    return paddockctl_usage_error (ctl, command_path, _("the command is an empty string"));

  if (profile != NULL && !g_strv_contains (profiles, profile))
    return paddockctl_usage_error (ctl, command_path,
                                   _("invalid profile “%s”: expected host, safe or strict"),
                                   profile);

  if (size != NULL && !parse_size (size, &columns, &rows))
    return paddockctl_usage_error (ctl, command_path,
                                   _("invalid size “%s”: expected COLSxROWS, e.g. 120x40, "
                                   "each from 1 to %d"),
                                   size, MAX_TERMINAL_CELLS);

  if ((bad_env = paddockctl_add_env (&env_builder, env)) != NULL)
    return paddockctl_usage_error (ctl, command_path,
                                   _("invalid --env “%s”: expected K=V, K made of letters, "
                                   "digits and _"), bad_env);

  for (gsize i = 0; pass_env != NULL && pass_env[i] != NULL; i++)
    {
      const char *value;

      if (!paddockctl_is_env_name (pass_env[i]))
        return paddockctl_usage_error (ctl, command_path,
                                       _("invalid --pass-env “%s”: expected a variable name"),
                                       pass_env[i]);

      /* Like `docker run -e K`: a variable we do not have is not passed. */
      if ((value = g_getenv (pass_env[i])) == NULL)
        {
          paddockctl_warn (_("--pass-env %s: not set here, not passed"), pass_env[i]);
          continue;
        }
      g_variant_builder_add (&env_builder, "{ss}", pass_env[i], value);
    }

  /* The daemon's working directory is not ours. */
  absolute = g_canonicalize_filename (workspace, NULL);

  g_variant_builder_add (&options, "{sv}", "workspace", g_variant_new_bytestring (absolute));
  if (command != NULL)
    g_variant_builder_add (&options, "{sv}", "command", g_variant_new_bytestring_array (command, -1));
  if (agent != NULL)
    g_variant_builder_add (&options, "{sv}", "agent", g_variant_new_string (agent));
  if (agent != NULL && !paddockctl_agents_add_pass_env (ctl, agent, (const char * const *) env,
                                                        (const char * const *) pass_env, &env_builder, &error))
    return paddockctl_fail (ctl, error);
  if (name != NULL)
    g_variant_builder_add (&options, "{sv}", "name", g_variant_new_string (name));
  if (profile != NULL)
    g_variant_builder_add (&options, "{sv}", "profile", g_variant_new_string (profile));
  if (net != NULL)
    g_variant_builder_add (&options, "{sv}", "net", g_variant_new_string (net));
  if (ports != NULL)
    g_variant_builder_add (&options, "{sv}", "ports", g_variant_new_strv ((const char * const *) ports, -1));
  if (port_handover != NULL)
    {
      if (!g_str_equal (port_handover, "release") && !g_str_equal (port_handover, "listen-fds"))
        return paddockctl_usage_error (ctl, command_path, _("invalid --port-handover “%s”: expected release or listen-fds"),
                                       port_handover);
      g_variant_builder_add (&options, "{sv}", "port-handover", g_variant_new_string (port_handover));
    }
  if (allow_domains != NULL)
    g_variant_builder_add (&options, "{sv}", "allow-domains",
                           g_variant_new_strv ((const char * const *) allow_domains, -1));
  g_variant_builder_add (&options, "{sv}", "env", g_variant_builder_end (&env_builder));
  if (expose != NULL)
    {
      /* Relative to where the user is, like any path they type. */
      g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);

      for (gsize i = 0; expose[i] != NULL; i++)
        g_ptr_array_add (paths, g_canonicalize_filename (expose[i], NULL));
      g_ptr_array_add (paths, NULL);
      g_variant_builder_add (&options, "{sv}", "expose",
                             g_variant_new_bytestring_array ((const char * const *) paths->pdata, -1));
    }
  if (pids_max != NULL)
    {
      guint64 n = 0;

      if (!g_ascii_string_to_unsigned (pids_max, 10, 16, 4194304, &n, NULL))
        return paddockctl_usage_error (ctl, command_path, _("invalid --pids-max “%s”: expected 16 to 4194304"), pids_max);
      g_variant_builder_add (&options, "{sv}", "pids-max", g_variant_new_uint64 (n));
    }
  if (reserved_ports != NULL)
    {
      guint64 n = 0;

      if (!g_ascii_string_to_unsigned (reserved_ports, 10, 0, PADDOCK_SESSION_MAX_PORTS, &n, NULL))
        return paddockctl_usage_error (ctl, command_path, _("invalid --reserved-ports “%s”: expected 0 to %d"),
                                       reserved_ports, PADDOCK_SESSION_MAX_PORTS);
      g_variant_builder_add (&options, "{sv}", "reserved-ports", g_variant_new_uint32 ((guint32) n));
    }
  if (memory_max != NULL)
    {
      guint64 bytes;

      if (!paddockctl_parse_bytes (memory_max, (guint64) 64 << 20, (guint64) 16 << 40, &bytes))
        return paddockctl_usage_error (ctl, command_path,
                                       _("invalid --memory-max “%s”: expected 64M to 16T (bytes, or K, M, G, T)"),
                                       memory_max);
      g_variant_builder_add (&options, "{sv}", "memory-max", g_variant_new_uint64 (bytes));
    }
  if (stage_limit != NULL)
    {
      guint64 bytes;

      if (!paddockctl_parse_bytes (stage_limit, (guint64) 1 << 20, (guint64) 16 << 40, &bytes))
        return paddockctl_usage_error (ctl, command_path,
                                       _("invalid --stage-limit “%s”: expected 1M to 16T (bytes, or K, M, G, T)"),
                                       stage_limit);
      g_variant_builder_add (&options, "{sv}", "stage-limit", g_variant_new_uint64 (bytes));
    }
  if (allow_write != NULL)
    {
      /* Relative paths are the workspace's, as the daemon reads them; an
       * absolute one is made canonical here, where its "." and ".." mean
       * what the user meant. */
      g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);

      for (gsize i = 0; allow_write[i] != NULL; i++)
        g_ptr_array_add (paths, g_path_is_absolute (allow_write[i])
                                ? g_canonicalize_filename (allow_write[i], NULL)
                                : g_strdup (allow_write[i]));
      g_ptr_array_add (paths, NULL);
      g_variant_builder_add (&options, "{sv}", "allow-write",
                             g_variant_new_bytestring_array ((const char * const *) paths->pdata, -1));
    }
  if (pass_env != NULL)
    g_variant_builder_add (&options, "{sv}", "pass-env",
                           g_variant_new_strv ((const char * const *) pass_env, -1));
  /* The user's --size wins over ours, also once attached (see below). */
  size_given = size != NULL;
  if (size == NULL && attach && (isatty (STDIN_FILENO) || isatty (STDOUT_FILENO)))
    {
      struct winsize here = { 0 };
      /* Attached, the agent starts at the size it will be shown at: that
       * of the terminal the relay then follows (stdin's, as attach), or
       * else the one it is shown on. */
      int terminal = isatty (STDIN_FILENO) ? STDIN_FILENO : STDOUT_FILENO;

      if (ioctl (terminal, TIOCGWINSZ, &here) == 0 && here.ws_col > 0 && here.ws_row > 0 &&
          here.ws_col <= MAX_TERMINAL_CELLS && here.ws_row <= MAX_TERMINAL_CELLS)
        {
          columns = here.ws_col;
          rows = here.ws_row;
          size = g_strdup_printf ("%ux%u", columns, rows);
        }
    }
  if (size != NULL)
    {
      g_variant_builder_add (&options, "{sv}", "columns", g_variant_new_uint16 (columns));
      g_variant_builder_add (&options, "{sv}", "rows", g_variant_new_uint16 (rows));
    }
  if (attach)
    {
      /* The daemon's end becomes the session's first viewer, attached
       * before the agent can print: nothing of the terminal is missed,
       * and no Attach call is needed. */
      if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, viewer) != 0)
        {
          int saved_errno = errno;

          g_set_error (&error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                       _("could not make the terminal's socket: %s"), g_strerror (saved_errno));
          return paddockctl_fail (ctl, error);
        }
      fd_list = g_unix_fd_list_new_from_array (&viewer[1], 1);   /* takes viewer[1] */
      g_variant_builder_add (&options, "{sv}", "terminal", g_variant_new_handle (0));
    }

  if ((manager = paddockctl_get_manager (ctl, &error)) != NULL)
    reply = g_dbus_proxy_call_with_unix_fd_list_sync (G_DBUS_PROXY (manager), "CreateSession",
                                                      g_variant_new ("(a{sv})", &options),
                                                      G_DBUS_CALL_FLAGS_NONE, -1, fd_list, NULL, NULL,
                                                      &error);
  g_clear_object (&fd_list);
  if (reply == NULL)
    {
      if (viewer[0] >= 0)
        close (viewer[0]);
      return paddockctl_fail (ctl, error);
    }
  g_variant_get (reply, "(o)", &path);

  id = strrchr (path, '/') + 1;

  if (attach)
    {
      /* Also with --json: the terminal has stdout, and nothing else
       * tells the caller which session it shows. */
      paddockctl_warn ("session %s", id);
      return paddockctl_attach_socket (ctl, id, viewer[0], size_given);
    }

  if (!ctl->json)
    {
      g_print ("%s\n", id);
      return PADDOCKCTL_EXIT_OK;
    }

  /* The session exists whatever happens next: a failure to describe it
   * must not read as a failure to create it, so fall back to the id. */
  if (!(properties = get_session_properties (ctl, id, &error)))
    {
      paddockctl_warn (_("created session %s but could not read it back: %s"), id, error->message);
      properties = g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0));
    }

  session_info_init (&info, properties, SOURCE_PROPERTIES, id);
  print_session_json (ctl, &info);

  return PADDOCKCTL_EXIT_OK;
}

/* ---- list ------------------------------------------------------------------- */

#define N_COLUMNS 6

int
paddockctl_list (Paddockctl  *ctl,
                 int          argc,
                 char       **argv)
{
  static const char * const headers[N_COLUMNS] = {
    "ID", "NAME", "STATE", "PROFILE", "PID", "COMMAND"
  };
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) sessions = NULL;
  PaddockIpcManager1 *manager;
  int exit_code = PADDOCKCTL_EXIT_OK;
  gsize n_sessions;

  context = paddockctl_option_context_new (ctl, NULL,
                                           N_("List the sessions, oldest first."), NULL);
  if (!paddockctl_parse_options (ctl, context, "paddockctl list", &argc, &argv, &exit_code))
    return exit_code;

  if (argc > 1)
    return paddockctl_usage_error (ctl, "paddockctl list", _("unexpected argument “%s”"), argv[1]);

  if (!(manager = paddockctl_get_manager (ctl, &error)) ||
      !paddock_ipc_manager1_call_list_sessions_sync (manager, &sessions, NULL, &error))
    return paddockctl_fail (ctl, error);

  n_sessions = g_variant_n_children (sessions);

  if (ctl->json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) root = NULL;
      g_autoptr(GVariant) leases = list_all_leases (ctl);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "sessions");
      json_builder_begin_array (builder);
      for (gsize i = 0; i < n_sessions; i++)
        {
          g_autoptr(GVariant) dict = g_variant_get_child_value (sessions, i);
          g_auto(SessionInfo) info = { 0 };

          session_info_init (&info, dict, SOURCE_LIST, NULL);
          add_session_to_builder (builder, &info, leases);
        }
      json_builder_end_array (builder);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  else if (n_sessions == 0)
    {
      g_print (_("No sessions.\n"));
    }
  else
    {
      g_autoptr(GPtrArray) cells = g_ptr_array_new_with_free_func (g_free);
      int widths[N_COLUMNS];

      for (guint c = 0; c < N_COLUMNS; c++)
        {
          g_ptr_array_add (cells, g_strdup (headers[c]));
          widths[c] = (int) strlen (headers[c]);
        }

      for (gsize i = 0; i < n_sessions; i++)
        {
          g_autoptr(GVariant) dict = g_variant_get_child_value (sessions, i);
          g_auto(SessionInfo) info = { 0 };

          session_info_init (&info, dict, SOURCE_LIST, NULL);
          g_ptr_array_add (cells, g_strdup (info.id));
          g_ptr_array_add (cells, terminal_text (display_bytes (*info.name != '\0' ? info.name : "-")));
          g_ptr_array_add (cells, info.damaged != NULL ? g_strdup_printf ("%s (damaged)", info.state)
                                                       : g_strdup (info.state));
          g_ptr_array_add (cells, g_strdup (info.profile));
          g_ptr_array_add (cells, info.pid != 0 ? g_strdup_printf ("%u", info.pid)
                                                : g_strdup ("-"));
          g_ptr_array_add (cells, terminal_text (display_command (info.command)));
        }

      for (guint i = 0; i < cells->len; i++)
        widths[i % N_COLUMNS] = MAX (widths[i % N_COLUMNS],
                                     (int) paddockctl_escape_text_width (cells->pdata[i]));

      for (guint i = 0; i < cells->len; i++)
        {
          guint c = i % N_COLUMNS;
          const char *cell = cells->pdata[i];

          /* No trailing blanks after the last column; printf pads by bytes,
           * so pad by characters ourselves. */
          if (c == N_COLUMNS - 1)
            g_print ("%s\n", cell);
          else
            g_print ("%s%*s  ", cell, widths[c] - (int) paddockctl_escape_text_width (cell), "");
        }
    }

  return PADDOCKCTL_EXIT_OK;
}

/* ---- status ----------------------------------------------------------------- */

/* One line per layer: its status, whether it was asked for, and how the
 * status was observed. */
static void
print_boundary_human (const SessionInfo *info)
{
  gsize n = info->boundary != NULL ? g_variant_n_children (info->boundary) : 0;

  if (n == 0)
    {
      g_print ("boundary:    - (reported once the session has started)\n");
      return;
    }
  g_print ("boundary:\n");
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) layer = g_variant_get_child_value (info->boundary, i);
      const char *name = "", *status = "", *evidence = "";
      g_autofree char *shown = NULL;
      gboolean requested = FALSE;

      g_variant_lookup (layer, "layer", "&s", &name);
      g_variant_lookup (layer, "requested", "b", &requested);
      g_variant_lookup (layer, "status", "&s", &status);
      g_variant_lookup (layer, "evidence", "&s", &evidence);
      shown = terminal_text (g_strdup (evidence));
      g_print ("  %-22s %-14s %s%s\n", name, status, requested ? "" : "(not requested) ", shown);
    }
}

int
paddockctl_status (Paddockctl  *ctl,
                   int          argc,
                   char       **argv)
{
  const char *command_path = "paddockctl status";
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) properties = NULL;
  g_autofree char *id = NULL;
  g_auto(SessionInfo) info = { 0 };
  g_autoptr(JsonNode) last_recovery = NULL;
  gboolean review = FALSE;
  const GOptionEntry entries[] = {
    { "review", 0, 0, G_OPTION_ARG_NONE, &review,
      N_("Also report the isolation boundary, layer by layer"), NULL },
    { NULL }
  };
  int exit_code = PADDOCKCTL_EXIT_OK;

  context = paddockctl_option_context_new (ctl, "ID", N_("Describe one session."), entries);
  if (!paddockctl_parse_options (ctl, context, command_path, &argc, &argv, &exit_code))
    return exit_code;

  if (!(id = paddockctl_parse_only_session_id (ctl, command_path, argc, argv, &exit_code)))
    return exit_code;

  if (!(properties = get_session_properties (ctl, id, &error)))
    return paddockctl_fail (ctl, error);

  session_info_init (&info, properties, SOURCE_PROPERTIES, id);
  /* The last recovery of a half-done Apply, as the daemon's JSON text
   * (older daemons have no such property). */
  {
    const char *text = NULL;

    if (g_variant_lookup (properties, "LastRecovery", "&s", &text) && text[0] != '\0')
      {
        g_autoptr(JsonParser) parser = json_parser_new ();

        if (json_parser_load_from_data (parser, text, -1, NULL) &&
            JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
          last_recovery = json_node_copy (json_parser_get_root (parser));
      }
  }

  if (ctl->json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) root = NULL;
      g_autoptr(GVariant) leases = list_all_leases (ctl);

      add_session_to_builder (builder, &info, leases);
      root = json_builder_get_root (builder);
      json_object_set_member (json_node_get_object (root), "last_recovery",
                              last_recovery != NULL ? g_steal_pointer (&last_recovery)
                                                    : json_node_new (JSON_NODE_NULL));
      paddockctl_print_json (ctl, root);
    }
  else
    {
      g_autoptr(GVariant) leases = list_all_leases (ctl);

      print_session_human (&info, leases);
      if (info.stage != NULL && g_variant_n_children (info.stage) > 0)
        {
          guint64 bytes = 0, limit = 0;
          const char *reason = "", *paused = "";

          g_variant_lookup (info.stage, "bytes", "t", &bytes);
          g_variant_lookup (info.stage, "limit", "t", &limit);
          g_variant_lookup (info.stage, "reason", "&s", &reason);
          g_variant_lookup (info.stage, "paused", "&s", &paused);
          g_print ("stage:       %.1f of %.1f MiB%s%s%s\n", bytes / 1048576.0, limit / 1048576.0,
                   paused[0] != '\0' ? " — held still: " : "", reason, paused[0] != '\0' ? "" : "");
        }
      if (last_recovery != NULL)
        {
          JsonObject *obj = json_node_get_object (last_recovery);

          g_print ("recovered:   %s, batch %s %s\n",
                   json_object_get_string_member_with_default (obj, "time", "?"),
                   json_object_get_string_member_with_default (obj, "recovered_batch", "?"),
                   json_object_get_string_member_with_default (obj, "recovery", "?"));
        }
      if (review)
        print_boundary_human (&info);
    }

  return PADDOCKCTL_EXIT_OK;
}

/* ---- stop and destroy --------------------------------------------------------- */

static int
print_stop_result (Paddockctl *ctl,
                   const char *id,
                   GVariant   *result,
                   const char *verb)
{
  const char *state = "";
  guint survivors = 0;
  guint64 elapsed_ms = 0;

  g_variant_lookup (result, "state", "&s", &state);
  g_variant_lookup (result, "survivors", "u", &survivors);
  g_variant_lookup (result, "elapsed-ms", "t", &elapsed_ms);

  if (ctl->json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) root = NULL;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "id");
      json_builder_add_string_value (builder, id);
      json_builder_set_member_name (builder, "state");
      json_builder_add_string_value (builder, state);
      json_builder_set_member_name (builder, "survivors");
      json_builder_add_int_value (builder, survivors);
      json_builder_set_member_name (builder, "elapsed_ms");
      json_builder_add_int_value (builder, (gint64) MIN (elapsed_ms, (guint64) G_MAXINT64));
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  else
    {
      g_print ("%s %s in %" G_GUINT64_FORMAT " ms: %s, %u process%s left.\n",
               verb, id, elapsed_ms, state, survivors, survivors == 1 ? "" : "es");
    }

  /* The daemon raises an error rather than leave survivors; should one
   * ever report them anyway, that is a failure a script must see. */
  return survivors == 0 ? PADDOCKCTL_EXIT_OK : PADDOCKCTL_EXIT_FAILED;
}

int
paddockctl_stop (Paddockctl  *ctl,
                 int          argc,
                 char       **argv)
{
  const char *command_path = "paddockctl stop";
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockIpcSession1) session = NULL;
  g_autoptr(GVariant) result = NULL;
  g_autofree char *id = NULL;
  g_autofree char *grace_text = NULL;
  const GOptionEntry entries[] = {
    { "grace", 0, 0, G_OPTION_ARG_STRING, &grace_text,
      N_("Seconds between SIGTERM and SIGKILL, 0–300 (default: 5)"), N_("SECONDS") },
    { NULL }
  };
  int exit_code = PADDOCKCTL_EXIT_OK;
  guint64 grace = DEFAULT_GRACE_SECONDS;

  context = paddockctl_option_context_new (ctl, "ID",
                                           N_("Stop every process of a session: SIGTERM, then "
                                           "SIGKILL after the grace.\nReturns when none is "
                                           "left. The session stays listed until destroyed."),
                                           entries);
  if (!paddockctl_parse_options (ctl, context, command_path, &argc, &argv, &exit_code))
    return exit_code;

  if (!(id = paddockctl_parse_only_session_id (ctl, command_path, argc, argv, &exit_code)))
    return exit_code;
  if (grace_text != NULL &&
      !g_ascii_string_to_unsigned (grace_text, 10, 0, MAX_GRACE_SECONDS, &grace, NULL))
    return paddockctl_usage_error (ctl, command_path,
                                   _("invalid --grace “%s”: expected whole seconds from 0 to %d"),
                                   grace_text, MAX_GRACE_SECONDS);

  if (!(session = paddockctl_dup_session (ctl, id, &error)))
    return paddockctl_fail (ctl, error);

  /* Stop returns only when the session is empty: allow it the grace. */
  g_dbus_proxy_set_default_timeout (G_DBUS_PROXY (session),
                                    (int) grace * 1000 + PADDOCKCTL_CALL_TIMEOUT_MS);
  if (!paddock_ipc_session1_call_stop_sync (session, (guint) grace, &result, NULL, &error))
      return paddockctl_fail_session (ctl, id, &error);

  return print_stop_result (ctl, id, result, "Stopped");
}

int
paddockctl_destroy (Paddockctl  *ctl,
                    int          argc,
                    char       **argv)
{
  const char *command_path = "paddockctl destroy";
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(PaddockIpcSession1) session = NULL;
  g_autoptr(GVariant) result = NULL;
  g_autofree char *id = NULL;
  int exit_code = PADDOCKCTL_EXIT_OK;

  context = paddockctl_option_context_new (ctl, "ID",
                                           N_("Kill every process of a session at once, release "
                                           "its ports and delete it."), NULL);
  if (!paddockctl_parse_options (ctl, context, command_path, &argc, &argv, &exit_code))
    return exit_code;

  if (!(id = paddockctl_parse_only_session_id (ctl, command_path, argc, argv, &exit_code)))
    return exit_code;

  if (!(session = paddockctl_dup_session (ctl, id, &error)))
    return paddockctl_fail (ctl, error);

  if (!paddock_ipc_session1_call_destroy_sync (session, &result, NULL, &error))
      return paddockctl_fail_session (ctl, id, &error);

  return print_stop_result (ctl, id, result, "Destroyed");
}

/* ---- commands of later versions ------------------------------------------------ */

/* net is in INTERFACES.md: a script using it gets a clear failure
 * (exit 1), not "unknown command" (exit 2, which reads as a typo). */
int
paddockctl_not_yet_available (Paddockctl  *ctl,
                              int          argc,
                              char       **argv)
{
  g_autofree char *what = g_strdup_printf ("“paddockctl %s”", argv[0]);

  return fail_not_yet (ctl, what);
}
