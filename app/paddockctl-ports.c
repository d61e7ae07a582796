/* paddockctl-ports.c — `paddockctl ports lease|release|list`
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <gio/gunixfdlist.h>
#include <glib-unix.h>

#include <glib/gi18n.h>

#include "paddock-error.h"
#include "paddock-reserved-ports.h"
#include "paddockctl-private.h"

/* The default lease name when neither --name nor a command names it. */
#define DEFAULT_LEASE_NAME "port"
/* Ports1.Lease accepts 1 to 64 characters of [A-Za-z0-9._-]. */
#define MAX_LEASE_NAME_LEN 64

/* One lease as the daemon describes it (see org.paddock.Ports1.xml). */
typedef struct
{
  guint16     port;
  const char *name;
  const char *owner;
  const char *session;   /* NULL when the lease is not tied to a session */
  const char *state;
  gboolean    ipv6;
  gint64      created;
} Lease;

/* Reads the dictionary leniently: a key the daemon left out or typed
 * differently reads as empty rather than failing the whole command. The
 * strings are borrowed from @dict. */
static void
lease_from_variant (GVariant *dict,
                    Lease    *lease)
{
  guint64 created = 0;

  memset (lease, 0, sizeof *lease);
  lease->name = "";
  lease->owner = "";
  lease->state = "";

  g_variant_lookup (dict, "port", "q", &lease->port);
  g_variant_lookup (dict, "name", "&s", &lease->name);
  g_variant_lookup (dict, "owner", "&s", &lease->owner);
  g_variant_lookup (dict, "state", "&s", &lease->state);
  g_variant_lookup (dict, "ipv6", "b", &lease->ipv6);
  if (g_variant_lookup (dict, "created", "t", &created))
    lease->created = (gint64) MIN (created, (guint64) G_MAXINT64);
  if (g_variant_lookup (dict, "session", "&s", &lease->session) && *lease->session == '\0')
    lease->session = NULL;
}

static void
add_lease_to_builder (JsonBuilder *builder,
                      GVariant    *dict)
{
  Lease lease;

  lease_from_variant (dict, &lease);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "port");
  json_builder_add_int_value (builder, lease.port);
  json_builder_set_member_name (builder, "name");
  json_builder_add_string_value (builder, lease.name);
  json_builder_set_member_name (builder, "owner");
  json_builder_add_string_value (builder, lease.owner);
  json_builder_set_member_name (builder, "session");
  if (lease.session != NULL)
    json_builder_add_string_value (builder, lease.session);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "reserved");
  json_builder_add_boolean_value (builder, paddock_lease_is_reserved (lease.session, lease.name));
  json_builder_set_member_name (builder, "state");
  json_builder_add_string_value (builder, lease.state);
  json_builder_set_member_name (builder, "ipv6");
  json_builder_add_boolean_value (builder, lease.ipv6);
  json_builder_set_member_name (builder, "created");
  json_builder_add_int_value (builder, lease.created);
  json_builder_end_object (builder);
}

static void
print_lease (Paddockctl *ctl,
             GVariant   *dict)
{
  if (ctl->json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) root = NULL;

      add_lease_to_builder (builder, dict);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  else
    {
      Lease lease;

      lease_from_variant (dict, &lease);
      /* "PORT  NAME": `read port name` in a shell takes it apart. */
      g_print ("%u  %s\n", lease.port, lease.name);
      fflush (stdout);
    }
}

/* Releases @port on the way out, where the exit status is already
 * decided: a lease that is already gone is fine, and so is a daemon that
 * went away (NO_AUTO_START: starting a daemon only to release a lease it
 * never had would be absurd). */
static void
release_quietly (Paddockctl *ctl,
                 guint16     port)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = NULL;
  PaddockIpcPorts1 *ports;

  if ((ports = paddockctl_get_ports (ctl, &error)))
    reply = g_dbus_proxy_call_sync (G_DBUS_PROXY (ports), "Release",
                                    g_variant_new ("(q)", port),
                                    G_DBUS_CALL_FLAGS_NO_AUTO_START, -1,
                                    NULL, &error);

  if (reply == NULL &&
      !g_error_matches (error, PADDOCK_ERROR, PADDOCK_ERROR_NOT_FOUND) &&
      !g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_SERVICE_UNKNOWN) &&
      !g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_NAME_HAS_NO_OWNER))
    {
      g_autoptr(GError) stripped = g_error_copy (error);

      g_dbus_error_strip_remote_error (stripped);
      paddockctl_warn (_("could not release port %u: %s"), port, stripped->message);
    }
}

/* A lease name from a command: its basename in the characters the daemon
 * accepts, so `ports list` shows what the port is for. */
static char *
lease_name_for_command (const char *command)
{
  g_autofree char *base = g_path_get_basename (command);
  GString *name = g_string_new (NULL);

  for (const char *p = base; *p != '\0' && name->len < MAX_LEASE_NAME_LEN; p++)
    {
      gboolean allowed = g_ascii_isalnum (*p) || *p == '.' || *p == '_' || *p == '-';

      g_string_append_c (name, allowed ? *p : '_');
    }

  if (name->len == 0 || g_str_equal (name->str, ".") || g_str_equal (name->str, ".."))
    g_string_assign (name, DEFAULT_LEASE_NAME);

  return g_string_free (name, FALSE);
}

/* ---- holding a lease until we are told to stop -------------------------- */

typedef struct
{
  GMainLoop *loop;
  GPid       child;      /* 0 while holding without a command */
  int        exit_code;
  gboolean   bus_closed;
} Holder;

static gboolean
holder_signal_cb (gpointer user_data)
{
  Holder *holder = user_data;

  g_main_loop_quit (holder->loop);
  return G_SOURCE_CONTINUE;
}

static void
holder_bus_closed_cb (GDBusConnection *connection,
                      gboolean         remote_peer_vanished,
                      GError          *error,
                      gpointer         user_data)
{
  Holder *holder = user_data;

  holder->bus_closed = TRUE;
  g_main_loop_quit (holder->loop);
}

/* Signals meant for us are meant for the command: a Ctrl-C or a
 * `kill` of paddockctl should stop the server it runs, and we leave
 * when it has. */
typedef struct
{
  Holder *holder;
  int     signum;
} Forward;

static gboolean
forward_signal_cb (gpointer user_data)
{
  Forward *forward = user_data;

  if (forward->holder->child > 0)
    kill (forward->holder->child, forward->signum);
  return G_SOURCE_CONTINUE;
}

static void
child_exited_cb (GPid     pid,
                 int      wait_status,
                 gpointer user_data)
{
  Holder *holder = user_data;

  holder->exit_code = paddockctl_wait_status_to_exit_code (wait_status);
  holder->child = 0;
  g_spawn_close_pid (pid);
  g_main_loop_quit (holder->loop);
}

static const int held_signals[] = { SIGINT, SIGTERM, SIGHUP };

static int
hold_lease (Paddockctl *ctl,
            GVariant   *lease_dict,
            guint16     port)
{
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  Holder holder = { loop, 0, PADDOCKCTL_EXIT_OK, FALSE };
  guint signal_ids[G_N_ELEMENTS (held_signals)] = { 0 };
  gulong closed_id;

  for (gsize i = 0; i < G_N_ELEMENTS (held_signals); i++)
    signal_ids[i] = g_unix_signal_add (held_signals[i], holder_signal_cb, &holder);
  closed_id = g_signal_connect (ctl->bus, "closed", G_CALLBACK (holder_bus_closed_cb), &holder);

  print_lease (ctl, lease_dict);
  if (!ctl->json && isatty (STDERR_FILENO))
    paddockctl_warn (_("holding port %u until interrupted (Ctrl-C releases it)"), port);

  g_main_loop_run (loop);

  g_signal_handler_disconnect (ctl->bus, closed_id);
  for (gsize i = 0; i < G_N_ELEMENTS (held_signals); i++)
    g_source_remove (signal_ids[i]);

  if (holder.bus_closed)
    {
      /* Our stdout already carries the lease document; the loss is news. */
      paddockctl_warn (_("lost the connection to the D-Bus session bus; port %u is no longer leased"),
                       port);
      return PADDOCKCTL_EXIT_FAILED;
    }

  /* Disconnecting would release it too; saying so is clearer in the
   * daemon's log and does not depend on when our connection drops. */
  release_quietly (ctl, port);
  return PADDOCKCTL_EXIT_OK;
}

static int
run_with_lease (Paddockctl         *ctl,
                const char * const *command,
                int                 listen_fd,
                const char         *name,
                guint16             port)
{
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(GError) error = NULL;
  Holder holder = { loop, 0, PADDOCKCTL_EXIT_FAILED, FALSE };
  Forward forwards[G_N_ELEMENTS (held_signals)];
  guint signal_ids[G_N_ELEMENTS (held_signals)] = { 0 };
  GPid pid = 0;

  /* Handlers go in before the fork so that a signal arriving while the
   * command starts is queued for it rather than killing us and leaving
   * the command orphaned. */
  for (gsize i = 0; i < G_N_ELEMENTS (held_signals); i++)
    {
      forwards[i].holder = &holder;
      forwards[i].signum = held_signals[i];
      signal_ids[i] = g_unix_signal_add (held_signals[i], forward_signal_cb, &forwards[i]);
    }

  if (!paddockctl_spawn_with_listen_fd (command, listen_fd, name, port, &pid, &error))
    {
      for (gsize i = 0; i < G_N_ELEMENTS (held_signals); i++)
        g_source_remove (signal_ids[i]);
      release_quietly (ctl, port);

      paddockctl_fail (ctl, error);
      if (g_error_matches (error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT))
        return PADDOCKCTL_EXIT_NOT_FOUND;
      if (g_error_matches (error, G_SPAWN_ERROR, G_SPAWN_ERROR_ACCES) ||
          g_error_matches (error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED))
        return PADDOCKCTL_EXIT_CANNOT_EXECUTE;
      return PADDOCKCTL_EXIT_FAILED;
    }

  holder.child = pid;
  g_child_watch_add (pid, child_exited_cb, &holder);

  /* Only the command's exit ends this loop: the bus going away costs the
   * lease but not the running server. */
  g_main_loop_run (loop);

  for (gsize i = 0; i < G_N_ELEMENTS (held_signals); i++)
    g_source_remove (signal_ids[i]);

  release_quietly (ctl, port);
  return holder.exit_code;
}

/* ---- ports lease ---------------------------------------------------------- */

#define LEASE_SUMMARY \
  N_("Lease a local TCP port from the Paddock daemon.\n\n" \
     "Without CMD, print the lease and hold it until interrupted.\n" \
     "With CMD, run it with the bound socket as fd 3 (systemd socket\n" \
     "activation: LISTEN_FDS, LISTEN_PID, LISTEN_FDNAMES), PORT and\n" \
     "PADDOCK_PORT_<NAME> set; release the port and exit with its status\n" \
     "when it exits. CMD's standard output is its own.")

static int
ports_lease (Paddockctl  *ctl,
             int          argc,
             char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) lease_dict = NULL;
  g_autoptr(GVariant) socket_handle = NULL;
  g_autoptr(GUnixFDList) fd_list = NULL;
  g_autofree char *name = NULL;
  g_autofree char *port_text = NULL;
  g_autofree char *session = NULL;
  g_autofree char *default_name = NULL;
  g_autofree char **options_argv = NULL;
  g_auto(GVariantBuilder) options = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  const char * const *command = NULL;
  PaddockIpcPorts1 *ports;
  const GOptionEntry entries[] = {
    { "name", 0, 0, G_OPTION_ARG_STRING, &name,
      "A label for the lease, 1–64 of A-Z a-z 0-9 . _ - "
      "(default: the command's name, or “" DEFAULT_LEASE_NAME "”)", "NAME" },
    { "port", 0, 0, G_OPTION_ARG_STRING, &port_text,
      N_("The port wanted; fails if it is taken (default: any free port of the pool)"), N_("P") },
    { "session", 0, 0, G_OPTION_ARG_STRING, &session,
      N_("Tie the lease to session ID instead of this process; without CMD and --port, "
         "the session gets it (Session1.LeasePort)"), N_("ID") },
    { NULL }
  };
  guint16 preferred_port = 0;
  int options_argc = argc;
  int exit_code = PADDOCKCTL_EXIT_OK;
  int listen_fd;
  gint32 handle;
  guint16 port = 0;

  /* Split at the first "--" ourselves: GOption sometimes keeps it and
   * sometimes drops it, and nothing after it is ours to parse. */
  for (int i = 1; i < argc; i++)
    if (g_str_equal (argv[i], "--"))
      {
        options_argc = i;
        if (i + 1 < argc)
          command = (const char * const *) &argv[i + 1];
        else
          return paddockctl_usage_error (ctl, "paddockctl ports lease",
                                         _("missing command after “--”"));
        break;
      }

  /* GOption rearranges the array it parses: give it a copy. */
  options_argv = g_new0 (char *, options_argc + 1);
  memcpy (options_argv, argv, sizeof (char *) * options_argc);

  context = paddockctl_option_context_new (ctl, "[-- CMD ARG…]", LEASE_SUMMARY, entries);
  {
    char **parse_argv = options_argv;

    if (!paddockctl_parse_options (ctl, context, "paddockctl ports lease",
                                   &options_argc, &parse_argv, &exit_code))
      return exit_code;
  }

  if (options_argc > 1)
    return paddockctl_usage_error (ctl, "paddockctl ports lease",
                                   _("unexpected argument “%s” (put the command after “--”)"),
                                   options_argv[1]);

  if (port_text != NULL && !paddockctl_parse_port (port_text, TRUE, &preferred_port))
    return paddockctl_usage_error (ctl, "paddockctl ports lease",
                                   _("invalid port “%s”: expected a number from 0 to 65535"),
                                   port_text);

  if (name == NULL)
    name = command != NULL ? lease_name_for_command (command[0]) : g_strdup (DEFAULT_LEASE_NAME);

  if (session != NULL && command == NULL && port_text == NULL)
    {
      /* For the session itself: Session1.LeasePort hands it over (forwarded
       * into a namespace of its own) or says why it cannot. */
      g_autoptr(PaddockIpcSession1) session_proxy = NULL;
      g_autofree char *id = paddockctl_parse_session_id (ctl, "paddockctl ports lease", session, &exit_code);

      if (id == NULL)
        return exit_code;
      if (!(session_proxy = paddockctl_dup_session (ctl, id, &error)))
        return paddockctl_fail (ctl, error);
      if (!paddock_ipc_session1_call_lease_port_sync (session_proxy, name, &lease_dict, NULL, &error))
        return paddockctl_fail_session (ctl, id, &error);
      print_lease (ctl, lease_dict);
      return PADDOCKCTL_EXIT_OK;
    }
  if (session != NULL)
    g_variant_builder_add (&options, "{sv}", "session", g_variant_new_string (session));

  if (!(ports = paddockctl_get_ports (ctl, &error)) ||
      !paddock_ipc_ports1_call_lease_sync (ports, name, preferred_port,
                                           g_variant_builder_end (&options),
                                           NULL, &lease_dict, &socket_handle, &fd_list,
                                           NULL, &error))
    return paddockctl_fail (ctl, error);

  g_variant_lookup (lease_dict, "port", "q", &port);

  if (command == NULL)
    {
      /* The socket is the daemon's to hold; we only keep the lease alive. */
      if (session != NULL)
        {
          /* A session lease lives as long as the session, not as us. */
          print_lease (ctl, lease_dict);
          return PADDOCKCTL_EXIT_OK;
        }

      return hold_lease (ctl, lease_dict, port);
    }

  handle = g_variant_get_handle (socket_handle);
  if (fd_list == NULL || handle < 0 || handle >= g_unix_fd_list_get_length (fd_list) ||
      (listen_fd = g_unix_fd_list_get (fd_list, handle, &error)) < 0)
    {
      release_quietly (ctl, port);
      if (error == NULL)
        g_set_error (&error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                     _("the daemon sent no socket for port %u"), port);
      return paddockctl_fail (ctl, error);
    }

  /* Nothing goes to stdout: it belongs to CMD. */
  exit_code = run_with_lease (ctl, command, listen_fd, name, port);
  close (listen_fd);

  return exit_code;
}

/* ---- ports release -------------------------------------------------------- */

static int
ports_release (Paddockctl  *ctl,
               int          argc,
               char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  PaddockIpcPorts1 *ports;
  int exit_code = PADDOCKCTL_EXIT_OK;
  guint16 port = 0;

  context = paddockctl_option_context_new (ctl, "PORT",
                                           N_("Release a port leased by this user."), NULL);
  if (!paddockctl_parse_options (ctl, context, "paddockctl ports release",
                                 &argc, &argv, &exit_code))
    return exit_code;

  if (argc < 2)
    return paddockctl_usage_error (ctl, "paddockctl ports release", _("missing PORT"));
  if (argc > 2)
    return paddockctl_usage_error (ctl, "paddockctl ports release",
                                   _("unexpected argument “%s”"), argv[2]);
  if (!paddockctl_parse_port (argv[1], FALSE, &port))
    return paddockctl_usage_error (ctl, "paddockctl ports release",
                                   _("invalid port “%s”: expected a number from 1 to 65535"),
                                   argv[1]);

  if (!(ports = paddockctl_get_ports (ctl, &error)) ||
      !paddock_ipc_ports1_call_release_sync (ports, port, NULL, &error))
    return paddockctl_fail (ctl, error);

  if (ctl->json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) root = NULL;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "released");
      json_builder_add_int_value (builder, port);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  else
    {
      g_print (_("Released port %u.\n"), port);
    }

  return PADDOCKCTL_EXIT_OK;
}

/* ---- ports list ----------------------------------------------------------- */

#define N_COLUMNS 5

static int
ports_list (Paddockctl  *ctl,
            int          argc,
            char       **argv)
{
  static const char * const headers[N_COLUMNS] = { "PORT", "NAME", "OWNER", "SESSION", "STATE" };
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) leases = NULL;
  PaddockIpcPorts1 *ports;
  int exit_code = PADDOCKCTL_EXIT_OK;
  gsize n_leases;

  context = paddockctl_option_context_new (ctl, NULL,
                                           N_("List the leased ports, ordered by port."), NULL);
  if (!paddockctl_parse_options (ctl, context, "paddockctl ports list",
                                 &argc, &argv, &exit_code))
    return exit_code;

  if (argc > 1)
    return paddockctl_usage_error (ctl, "paddockctl ports list",
                                   _("unexpected argument “%s”"), argv[1]);

  if (!(ports = paddockctl_get_ports (ctl, &error)) ||
      !paddock_ipc_ports1_call_list_leases_sync (ports, &leases, NULL, &error))
    return paddockctl_fail (ctl, error);

  n_leases = g_variant_n_children (leases);

  if (ctl->json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) root = NULL;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "leases");
      json_builder_begin_array (builder);
      for (gsize i = 0; i < n_leases; i++)
        {
          g_autoptr(GVariant) dict = g_variant_get_child_value (leases, i);

          add_lease_to_builder (builder, dict);
        }
      json_builder_end_array (builder);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      paddockctl_print_json (ctl, root);
    }
  else if (n_leases == 0)
    {
      g_print (_("No leases.\n"));
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

      for (gsize i = 0; i < n_leases; i++)
        {
          g_autoptr(GVariant) dict = g_variant_get_child_value (leases, i);
          Lease lease;

          lease_from_variant (dict, &lease);
          g_ptr_array_add (cells, g_strdup_printf ("%u", lease.port));
          g_ptr_array_add (cells, g_strdup (lease.name));
          g_ptr_array_add (cells, g_strdup (lease.owner));
          g_ptr_array_add (cells, g_strdup (lease.session != NULL ? lease.session : "-"));
          g_ptr_array_add (cells, g_strdup (lease.state));
        }

      for (guint i = 0; i < cells->len; i++)
        widths[i % N_COLUMNS] = MAX (widths[i % N_COLUMNS],
                                     (int) g_utf8_strlen (cells->pdata[i], -1));

      for (guint i = 0; i < cells->len; i++)
        {
          guint c = i % N_COLUMNS;

          /* No trailing blanks after the last column. */
          if (c == N_COLUMNS - 1)
            g_print ("%s\n", (const char *) cells->pdata[i]);
          else
            g_print ("%-*s  ", widths[c], (const char *) cells->pdata[i]);
        }
    }

  return PADDOCKCTL_EXIT_OK;
}

/* ---- ports ------------------------------------------------------------------ */

static const PaddockctlCommand ports_commands[] = {
  { "lease",   ports_lease,   N_("Lease a port and hold it, or run a command on it") },
  { "release", ports_release, N_("Release a leased port") },
  { "list",    ports_list,    N_("List the leased ports") },
};

int
paddockctl_ports (Paddockctl  *ctl,
                  int          argc,
                  char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autofree char *description = NULL;
  int exit_code = PADDOCKCTL_EXIT_OK;

  context = paddockctl_option_context_new (ctl, "COMMAND [ARG…]",
                                           N_("Lease local TCP ports that no other process can take."),
                                           NULL);
  g_option_context_set_strict_posix (context, TRUE);
  description = paddockctl_commands_help (ports_commands, G_N_ELEMENTS (ports_commands));
  g_option_context_set_description (context, description);

  if (!paddockctl_parse_options (ctl, context, "paddockctl ports", &argc, &argv, &exit_code))
    return exit_code;

  return paddockctl_dispatch (ctl, "paddockctl ports",
                              ports_commands, G_N_ELEMENTS (ports_commands),
                              argc, argv);
}
