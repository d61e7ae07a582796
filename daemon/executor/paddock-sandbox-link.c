/* paddock-sandbox-link.c — the daemon's end of a sandbox helper's control socket
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One object owns the SOCK_SEQPACKET socket the daemon keeps to a
 * sandbox's pid 1 (fd PADDOCK_SANDBOX_FD_CONTROL on the helper's side):
 * typed requests go out (kill, spawn, socket: an a{sv} each, fds
 * attached), and the events that come in (one JSON object per message)
 * are read on the main loop and reported as signals. It knows the
 * protocol (paddock-sandbox-protocol.h, docs/sandbox-protocol.md), not the
 * session: what an event means for the session is its handlers' business,
 * so the session depends on this and never the other way round.
 *
 * Events with a descriptor (a terminal's master with "spawned", a socket
 * with "socket" or "proxy") hand it to the handler by pointer: one that
 * takes it sets it to -1; whatever is left is closed once the emission
 * is over, so no descriptor of the sandbox's outlives its event unasked.
 */

#include "config.h"

#include <errno.h>
#include <glib-unix.h>
#include <sys/socket.h>

#include "paddock-autofd.h"
#include "paddock-error.h"
#include "paddock-fdpass.h"
#include "paddock-sandbox-link.h"
#include "paddock-sandbox-protocol.h"

/* The most one event is: "started" with its boundary report is the
 * largest pid 1 sends (well under this); one larger is not an event of
 * ours and is dropped whole. */
#define EVENT_MAX_BYTES 4096

struct _PaddockSandboxLink
{
  GObject parent_instance;

  int     fd;       /* -1 once closed, by either end */
  guint   source;
};

enum {
  SIGNAL_STARTED,
  SIGNAL_PROXY,
  SIGNAL_SOCKET,
  SIGNAL_SUPERVISOR_GONE,
  SIGNAL_COMMAND_EVENT,
  SIGNAL_CLOSED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (PaddockSandboxLink, paddock_sandbox_link, G_TYPE_OBJECT)

/* One message of the sandbox (a JSON line) from FD, a non-blocking
 * SOCK_SEQPACKET socket, into MESSAGE (SIZE bytes, NUL-terminated), with
 * at most one fd attached, into *OUT_FD (none at all when OUT_FD is
 * NULL). Returns paddock_fdpass_recv()'s: a message cut short (longer
 * than SIZE - 1, or with more fds than that) is -1 with EMSGSIZE or
 * ETOOMANYREFS, whatever came with it closed (see
 * paddock_sandbox_event_was_dropped()). Also the reader of a command's
 * own event channel (a direct spawn's). */
gssize
paddock_sandbox_recv_event (int    fd,
                            char  *message,
                            gsize  size,
                            int   *out_fd)
{
  int fds[1] = { -1 };
  size_t n_fds = 0;
  gssize n;

  g_return_val_if_fail (size > 0, -1);

  n = paddock_fdpass_recv (fd, message, size - 1, fds, out_fd != NULL ? 1 : 0, &n_fds, MSG_DONTWAIT);
  if (n < 0)
    return n;
  if (n_fds > 0)
    *out_fd = fds[0];
  message[n] = '\0';
  return n;
}

/* Whether paddock_sandbox_recv_event() failed on a message cut short
 * (dropped whole, the next one may be fine) rather than on the socket. */
gboolean
paddock_sandbox_event_was_dropped (int saved_errno)
{
  return saved_errno == EMSGSIZE || saved_errno == ETOOMANYREFS;
}

/* Reports one event, as its name says. */
static void
paddock_sandbox_link_dispatch (PaddockSandboxLink *self,
                               JsonObject         *event,
                               int                *fd)
{
  const char *name = json_object_get_string_member_with_default (event, PADDOCK_SANDBOX_EVENT_KEY_EVENT, "");

  if (g_str_equal (name, PADDOCK_SANDBOX_EVENT_PROXY))
    g_signal_emit (self, signals[SIGNAL_PROXY], 0, fd);
  else if (g_str_equal (name, PADDOCK_SANDBOX_EVENT_SOCKET) ||
           g_str_equal (name, PADDOCK_SANDBOX_EVENT_SOCKET_FAILED))
    g_signal_emit (self, signals[SIGNAL_SOCKET], 0,
                   json_object_get_int_member_with_default (event, PADDOCK_SANDBOX_EVENT_KEY_ID, -1), fd);
  else if (g_str_equal (name, PADDOCK_SANDBOX_EVENT_STARTED))
    {
      JsonObject *report = json_object_has_member (event, PADDOCK_SANDBOX_EVENT_KEY_BOUNDARY) &&
                           JSON_NODE_HOLDS_OBJECT (json_object_get_member (event, PADDOCK_SANDBOX_EVENT_KEY_BOUNDARY))
                           ? json_object_get_object_member (event, PADDOCK_SANDBOX_EVENT_KEY_BOUNDARY) : NULL;

      g_signal_emit (self, signals[SIGNAL_STARTED], 0, report, event, fd);
    }
  else if (g_str_equal (name, PADDOCK_SANDBOX_EVENT_SUPERVISOR_GONE))
    {
      gint64 id = json_object_get_int_member_with_default (event, PADDOCK_SANDBOX_EVENT_KEY_ID, -1);

      /* An id the daemon could not have given is nobody's. */
      if (id >= 0 && id <= G_MAXUINT32)
        g_signal_emit (self, signals[SIGNAL_SUPERVISOR_GONE], 0, (guint) id);
    }
  else
    g_signal_emit (self, signals[SIGNAL_COMMAND_EVENT], 0, event, fd);
}

/**
 * paddock_sandbox_link_drain:
 *
 * Reads and reports every event waiting now, without waiting for more
 * (also what the main loop's watch does). A handler may close the link:
 * reading stops there.
 *
 * Returns: FALSE once the sandbox closed its end (or the link is closed);
 * the link itself is closed, and "closed" emitted, only by its watch.
 */
gboolean
paddock_sandbox_link_drain (PaddockSandboxLink *self)
{
  g_return_val_if_fail (PADDOCK_IS_SANDBOX_LINK (self), FALSE);

  for (;;)
    {
      g_autoptr(JsonParser) parser = NULL;
      paddock_autofd int fd = -1;
      char message[EVENT_MAX_BYTES];
      gssize n;

      if (self->fd < 0)
        return FALSE;

      /* Descriptors come only with "spawned" of a command on a terminal
       * (or a socket or proxy event), one at most. */
      n = paddock_sandbox_recv_event (self->fd, message, sizeof message, &fd);
      if (n < 0 && errno == EAGAIN)
        return TRUE;
      if (n < 0 && paddock_sandbox_event_was_dropped (errno))
        {
          /* Cut short, so not an event we could act on; the next may be. */
          g_message ("Dropped a message of a sandbox (%s)", g_strerror (errno));
          continue;
        }
      if (n <= 0)
        return FALSE;

      parser = json_parser_new ();
      if (!json_parser_load_from_data (parser, message, n, NULL) ||
          !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        continue;
      paddock_sandbox_link_dispatch (self, json_node_get_object (json_parser_get_root (parser)), &fd);
    }
}

static gboolean
paddock_sandbox_link_watch_cb (int          fd,
                               GIOCondition condition,
                               gpointer     user_data)
{
  /* A handler may drop the link's last reference (its session's end)
   * while its events are read: it stays until they are. */
  g_autoptr(PaddockSandboxLink) self = g_object_ref (user_data);
  gboolean was_open;

  if (paddock_sandbox_link_drain (self))
    return G_SOURCE_CONTINUE;

  /* The sandbox's end, unless a handler closed ours (and then knows). */
  self->source = 0;
  was_open = self->fd >= 0;
  paddock_close_fd (&self->fd);
  if (was_open)
    g_signal_emit (self, signals[SIGNAL_CLOSED], 0);
  return G_SOURCE_REMOVE;
}

/**
 * paddock_sandbox_link_new:
 * @control_fd: (transfer full): the daemon's end of the control socket,
 *   non-blocking SOCK_SEQPACKET, close-on-exec
 *
 * Takes @control_fd and reads its events on the thread-default main
 * context from now on.
 */
PaddockSandboxLink *
paddock_sandbox_link_new (int control_fd)
{
  PaddockSandboxLink *self;

  g_return_val_if_fail (control_fd >= 0, NULL);

  self = g_object_new (PADDOCK_TYPE_SANDBOX_LINK, NULL);
  self->fd = control_fd;
  self->source = g_unix_fd_add (self->fd, G_IO_IN | G_IO_HUP | G_IO_ERR, paddock_sandbox_link_watch_cb, self);
  return self;
}

/* Whether requests can still go out (neither end closed yet). */
gboolean
paddock_sandbox_link_is_open (PaddockSandboxLink *self)
{
  g_return_val_if_fail (PADDOCK_IS_SANDBOX_LINK (self), FALSE);

  return self->fd >= 0;
}

/**
 * paddock_sandbox_link_close:
 *
 * Stops reading and closes the daemon's end, which the sandbox's pid 1
 * sees as the daemon gone. No signal after this (not "closed" either).
 */
void
paddock_sandbox_link_close (PaddockSandboxLink *self)
{
  g_return_if_fail (PADDOCK_IS_SANDBOX_LINK (self));

  g_clear_handle_id (&self->source, g_source_remove);
  paddock_close_fd (&self->fd);
}

/* One request to the sandbox's pid 1: an a{sv} (@request may be floating;
 * it is consumed), serialized in one SOCK_SEQPACKET message, with @fds
 * attached (SCM_RIGHTS), which stay the caller's. */
static gboolean
paddock_sandbox_link_send (PaddockSandboxLink  *self,
                           GVariant            *request,
                           const int           *fds,
                           guint                n_fds,
                           GError             **error)
{
  g_autoptr(GVariant) owned = g_variant_ref_sink (request);
  g_autoptr(GBytes) data = NULL;

  g_assert (n_fds <= PADDOCK_SANDBOX_MAX_REQUEST_FDS);

  if (self->fd < 0)
    {
      g_set_error_literal (error, PADDOCK_ERROR, PADDOCK_ERROR_BUSY, "The sandbox no longer listens");
      return FALSE;
    }

  data = g_variant_get_data_as_bytes (owned);
  if (paddock_fdpass_send (self->fd, g_bytes_get_data (data, NULL), g_bytes_get_size (data), fds, n_fds, 0) < 0)
    {
      int saved_errno = errno;

      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "Could not reach the sandbox: %s", g_strerror (saved_errno));
      return FALSE;
    }
  return TRUE;
}

/* Asks pid 1 to send SIGNAL_NUMBER to command ID's tree (its supervisor, a
 * subreaper, signals every process of it, setsid()ed ones included). */
gboolean
paddock_sandbox_link_kill (PaddockSandboxLink  *self,
                           guint32              id,
                           int                  signal_number,
                           GError             **error)
{
  g_auto(GVariantBuilder) request = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);

  g_return_val_if_fail (PADDOCK_IS_SANDBOX_LINK (self), FALSE);

  g_variant_builder_add (&request, "{sv}", PADDOCK_SANDBOX_KEY_OP, g_variant_new_string (PADDOCK_SANDBOX_OP_KILL));
  g_variant_builder_add (&request, "{sv}", PADDOCK_SANDBOX_KEY_ID, g_variant_new_uint32 (id));
  g_variant_builder_add (&request, "{sv}", PADDOCK_SANDBOX_KEY_SIGNAL, g_variant_new_int32 (signal_number));
  return paddock_sandbox_link_send (self, g_variant_builder_end (&request), NULL, 0, error);
}

/**
 * paddock_sandbox_link_spawn:
 * @fds: (nullable): for a command not on a terminal, its stdin, stdout,
 *   stderr and event channel (PADDOCK_SANDBOX_REQUEST_FD_*), which make
 *   it a direct spawn; NULL for one on a terminal pid 1 makes
 *
 * Asks pid 1 to run command ID. Its "spawned" (or "spawn-failed") comes
 * as a "command-event", here or on the channel of @fds.
 */
gboolean
paddock_sandbox_link_spawn (PaddockSandboxLink  *self,
                            guint32              id,
                            const char * const  *argv,
                            const char          *cwd,
                            const char * const  *envp,
                            gboolean             tty,
                            const int           *fds,
                            GError             **error)
{
  g_auto(GVariantBuilder) request = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);

  g_return_val_if_fail (PADDOCK_IS_SANDBOX_LINK (self), FALSE);
  g_return_val_if_fail (argv != NULL && argv[0] != NULL, FALSE);
  g_return_val_if_fail (cwd != NULL && envp != NULL, FALSE);

  g_variant_builder_add (&request, "{sv}", PADDOCK_SANDBOX_KEY_OP, g_variant_new_string (PADDOCK_SANDBOX_OP_SPAWN));
  g_variant_builder_add (&request, "{sv}", PADDOCK_SANDBOX_KEY_ID, g_variant_new_uint32 (id));
  g_variant_builder_add (&request, "{sv}", PADDOCK_SANDBOX_KEY_ARGV, g_variant_new_bytestring_array (argv, -1));
  g_variant_builder_add (&request, "{sv}", PADDOCK_SANDBOX_KEY_CWD, g_variant_new_bytestring (cwd));
  g_variant_builder_add (&request, "{sv}", PADDOCK_SANDBOX_KEY_ENV, g_variant_new_bytestring_array (envp, -1));
  g_variant_builder_add (&request, "{sv}", PADDOCK_SANDBOX_KEY_TTY, g_variant_new_boolean (tty));
  if (fds != NULL)
    g_variant_builder_add (&request, "{sv}", PADDOCK_SANDBOX_KEY_DIRECT, g_variant_new_boolean (TRUE));
  return paddock_sandbox_link_send (self, g_variant_builder_end (&request),
                                    fds, fds != NULL ? PADDOCK_SANDBOX_DIRECT_SPAWN_N_FDS : 0, error);
}

/* Asks pid 1 for a socket inside, of FAMILY (AF_INET6 for [::1], any
 * other value AF_INET), for a forwarded connection: "socket" with it, or
 * "socket-failed", tagged ID. */
gboolean
paddock_sandbox_link_request_socket (PaddockSandboxLink  *self,
                                     guint32              id,
                                     int                  family,
                                     GError             **error)
{
  GVariantDict request;

  g_return_val_if_fail (PADDOCK_IS_SANDBOX_LINK (self), FALSE);

  g_variant_dict_init (&request, NULL);
  g_variant_dict_insert (&request, PADDOCK_SANDBOX_KEY_OP, "s", PADDOCK_SANDBOX_OP_SOCKET);
  g_variant_dict_insert (&request, PADDOCK_SANDBOX_KEY_ID, "u", id);
  /* inet is the default: named only for inet6, as pid 1 has always read it. */
  if (family == AF_INET6)
    g_variant_dict_insert (&request, PADDOCK_SANDBOX_KEY_FAMILY, "s", PADDOCK_SANDBOX_FAMILY_INET6);
  return paddock_sandbox_link_send (self, g_variant_dict_end (&request), NULL, 0, error);
}

/* The proxy's listening socket again, as a "proxy" event: for a daemon
 * that took the session over from its keeper (docs/sandbox-protocol.md). */
gboolean
paddock_sandbox_link_request_proxy (PaddockSandboxLink  *self,
                                    GError             **error)
{
  GVariantDict request;

  g_return_val_if_fail (PADDOCK_IS_SANDBOX_LINK (self), FALSE);

  g_variant_dict_init (&request, NULL);
  g_variant_dict_insert (&request, PADDOCK_SANDBOX_KEY_OP, "s", PADDOCK_SANDBOX_OP_PROXY);
  g_variant_dict_insert (&request, PADDOCK_SANDBOX_KEY_ID, "u", 0U);
  return paddock_sandbox_link_send (self, g_variant_dict_end (&request), NULL, 0, error);
}

static void
paddock_sandbox_link_dispose (GObject *object)
{
  paddock_sandbox_link_close (PADDOCK_SANDBOX_LINK (object));

  G_OBJECT_CLASS (paddock_sandbox_link_parent_class)->dispose (object);
}

static void
paddock_sandbox_link_class_init (PaddockSandboxLinkClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_sandbox_link_dispose;

  /**
   * PaddockSandboxLink::started:
   * @report: (nullable): the sandbox's own report of its layers and
   *   probes ("boundary")
   * @event: the whole event
   * @fd: (inout): a descriptor that came with it, or -1
   *
   * The sandbox runs the agent: its layers are in place.
   */
  signals[SIGNAL_STARTED] = g_signal_new ("started", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 3,
                                          JSON_TYPE_OBJECT, JSON_TYPE_OBJECT, G_TYPE_POINTER);
  /**
   * PaddockSandboxLink::proxy:
   * @fd: (inout): the proxy's listening socket inside, or -1; a handler
   *   that takes it sets it to -1
   */
  signals[SIGNAL_PROXY] = g_signal_new ("proxy", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                        0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
  /**
   * PaddockSandboxLink::socket:
   * @id: the request's id, as it came (-1 if none)
   * @fd: (inout): the socket inside, or -1 ("socket-failed")
   *
   * The answer to paddock_sandbox_link_request_socket().
   */
  signals[SIGNAL_SOCKET] = g_signal_new ("socket", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT64, G_TYPE_POINTER);
  /**
   * PaddockSandboxLink::supervisor-gone:
   * @id: the command
   *
   * The supervisor of a direct command ended without its last event.
   */
  signals[SIGNAL_SUPERVISOR_GONE] = g_signal_new ("supervisor-gone", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
  /**
   * PaddockSandboxLink::command-event:
   * @event: the event ("spawned", "spawn-failed", "command-exited", or
   *   any other name, for the handler to ignore)
   * @fd: (inout): a descriptor that came with it (a terminal's master
   *   with "spawned"), or -1
   */
  signals[SIGNAL_COMMAND_EVENT] = g_signal_new ("command-event", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                                0, NULL, NULL, NULL, G_TYPE_NONE, 2,
                                                JSON_TYPE_OBJECT, G_TYPE_POINTER);
  /**
   * PaddockSandboxLink::closed:
   *
   * The sandbox closed its end (it ended): no event and no request any
   * more. Not emitted for paddock_sandbox_link_close().
   */
  signals[SIGNAL_CLOSED] = g_signal_new ("closed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
paddock_sandbox_link_init (PaddockSandboxLink *self)
{
  self->fd = -1;
}
