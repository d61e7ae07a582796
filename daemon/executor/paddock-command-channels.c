/* paddock-command-channels.c — direct event channels of a sandbox's commands
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A command's own event channel: the daemon's end of a SOCK_SEQPACKET
 * pair whose other end went to the sandbox with the spawn ("direct", see
 * docs/sandbox-protocol.md, "Direct events"). The command's supervisor
 * writes its "spawned" and "command-exited" there itself, so neither
 * waits for a wakeup of pid 1.
 * The supervisor runs inside the session's boundary: what comes on this
 * channel is read as about this command only (the "id" inside is
 * replaced by ours), "spawned" once and then only the end, after which
 * the channel is dropped; anything else ends the command as if its
 * supervisor had died (so at most three messages are read per command);
 * so a supervisor that lies can only lie about its own command, as it
 * could already through pid 1. A channel that closes before the end
 * stays (closed) until pid 1 says "supervisor-gone" or the sandbox ends:
 * either answers the command.
 *
 * This object owns the channels and reports what they say with "event",
 * in the same form pid 1 relays its events (PaddockSandboxLink's
 * "command-event"): the session handles both alike and never reads a
 * channel itself.
 */

#include "config.h"

#include <errno.h>
#include <glib-unix.h>
#include <sys/socket.h>

#include "paddock-autofd.h"
#include "paddock-command-channels.h"
#include "paddock-sandbox-link.h"
#include "paddock-sandbox-protocol.h"

struct _PaddockCommandChannels
{
  GObject     parent_instance;

  char       *session_id;   /* for the log */
  GHashTable *channels;     /* id → Channel, until its last event or the sandbox's end */
};

typedef struct {
  PaddockCommandChannels *owner;   /* not a reference: the owner drops its channels in dispose */
  guint32 id;
  int fd;                          /* -1 once the supervisor's end closed */
  guint source;
  gboolean spawned;
} Channel;

enum {
  SIGNAL_EVENT,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (PaddockCommandChannels, paddock_command_channels, G_TYPE_OBJECT)

static void
channel_free (Channel *channel)
{
  g_clear_handle_id (&channel->source, g_source_remove);
  paddock_close_fd (&channel->fd);
  g_free (channel);
}

static void
emit_event (PaddockCommandChannels *self,
            JsonObject             *event)
{
  g_signal_emit (self, signals[SIGNAL_EVENT], 0, event);
}

/* Answers CHANNEL's command without its supervisor, which ended or broke
 * the channel's rules before the command's last event: as pid 1 answers
 * for a relayed command, it did not start, or it ended with status 255.
 * Frees CHANNEL. */
static void
answer_lost_command (PaddockCommandChannels *self,
                     Channel                *channel)
{
  g_autoptr(JsonObject) event = json_object_new ();
  guint32 id = channel->id;

  json_object_set_int_member (event, PADDOCK_SANDBOX_EVENT_KEY_ID, id);
  if (!channel->spawned)
    {
      json_object_set_string_member (event, PADDOCK_SANDBOX_EVENT_KEY_EVENT, PADDOCK_SANDBOX_EVENT_SPAWN_FAILED);
      json_object_set_int_member (event, PADDOCK_SANDBOX_EVENT_KEY_ERRNO, EIO);
      json_object_set_string_member (event, PADDOCK_SANDBOX_EVENT_KEY_MESSAGE, "the command's supervisor ended before it started the command");
    }
  else
    {
      json_object_set_string_member (event, PADDOCK_SANDBOX_EVENT_KEY_EVENT, PADDOCK_SANDBOX_EVENT_COMMAND_EXITED);
      json_object_set_int_member (event, PADDOCK_SANDBOX_EVENT_KEY_STATUS, PADDOCK_SANDBOX_STATUS_SUPERVISOR_GONE);
    }
  g_hash_table_remove (self->channels, GUINT_TO_POINTER (id));
  emit_event (self, event);
}

/* Handles what waits on CHANNEL. FALSE once CHANNEL is gone (freed: the
 * command's last event came, or the channel broke its rules) or closed;
 * TRUE while it stays open. */
static gboolean
drain_channel (PaddockCommandChannels *self,
               Channel                *channel)
{
  /* A handler may drop the owner's last reference. */
  g_autoptr(PaddockCommandChannels) hold = g_object_ref (self);

  while (channel->fd >= 0)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      char message[4096];
      JsonObject *object;
      const char *name;
      /* No event of a direct command carries a descriptor. */
      gssize n = paddock_sandbox_recv_event (channel->fd, message, sizeof message, NULL);

      if (n < 0 && errno == EAGAIN)
        return TRUE;
      if (n < 0 && paddock_sandbox_event_was_dropped (errno))
        {
          /* Larger than any event, or with a descriptor: not one of this
           * channel's, so its supervisor broke the rules (below). */
          g_message ("Session %s: dropped a message of command %u's supervisor (%s)",
                     self->session_id, channel->id, g_strerror (errno));
          answer_lost_command (self, channel);
          return FALSE;
        }
      if (n <= 0)
        {
          /* Its end (our peers never send an empty message) before the
           * command's: pid 1 or the sandbox's end will say why. */
          g_clear_handle_id (&channel->source, g_source_remove);
          paddock_close_fd (&channel->fd);
          return FALSE;
        }

      if (!json_parser_load_from_data (parser, message, n, NULL) ||
          !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        {
          answer_lost_command (self, channel);
          return FALSE;
        }
      object = json_node_get_object (json_parser_get_root (parser));
      name = json_object_get_string_member_with_default (object, PADDOCK_SANDBOX_EVENT_KEY_EVENT, "");
      /* This command's events, whatever the id inside says. */
      json_object_set_int_member (object, PADDOCK_SANDBOX_EVENT_KEY_ID, channel->id);
      if (g_str_equal (name, PADDOCK_SANDBOX_EVENT_SPAWNED) && !channel->spawned)
        {
          channel->spawned = TRUE;
          emit_event (self, object);
          continue;
        }
      if ((g_str_equal (name, PADDOCK_SANDBOX_EVENT_SPAWN_FAILED) && !channel->spawned) ||
          (g_str_equal (name, PADDOCK_SANDBOX_EVENT_COMMAND_EXITED) && channel->spawned))
        {
          guint32 id = channel->id;

          emit_event (self, object);
          g_hash_table_remove (self->channels, GUINT_TO_POINTER (id));
          return FALSE;
        }
      /* Anything else is not an event of this channel. Its supervisor
       * writes at most two, so more is a supervisor taken over from
       * inside the session: reading on would let it hold the daemon's
       * main loop here for as long as it writes. Its command is
       * answered as if it had died, and the channel is dropped. */
      answer_lost_command (self, channel);
      return FALSE;
    }
  return FALSE;
}

static gboolean
channel_cb (int          fd,
            GIOCondition condition,
            gpointer     user_data)
{
  Channel *channel = user_data;

  if (drain_channel (channel->owner, channel))
    return G_SOURCE_CONTINUE;
  /* Gone or closed: its source was destroyed already (allowed from its
   * own dispatch); REMOVE says the same. */
  return G_SOURCE_REMOVE;
}

/**
 * paddock_command_channels_open:
 *
 * A new channel for command ID: *OUT_REMOTE (CLOEXEC) goes to the
 * sandbox with the spawn; ours is watched until the command's last
 * event. FALSE with errno if no pair could be made.
 */
gboolean
paddock_command_channels_open (PaddockCommandChannels *self,
                               guint32                 id,
                               int                    *out_remote)
{
  Channel *channel;
  int pair[2];

  g_return_val_if_fail (PADDOCK_IS_COMMAND_CHANNELS (self), FALSE);

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair) != 0)
    return FALSE;
  channel = g_new0 (Channel, 1);
  channel->owner = self;
  channel->id = id;
  channel->fd = pair[0];
  channel->source = g_unix_fd_add (channel->fd, G_IO_IN | G_IO_HUP | G_IO_ERR, channel_cb, channel);
  g_hash_table_replace (self->channels, GUINT_TO_POINTER (id), channel);
  *out_remote = pair[1];
  return TRUE;
}

/**
 * paddock_command_channels_drop:
 *
 * Command ID's channel goes unread: what its supervisor says after this
 * is about a command already answered (or never sent).
 */
void
paddock_command_channels_drop (PaddockCommandChannels *self,
                               guint32                 id)
{
  g_return_if_fail (PADDOCK_IS_COMMAND_CHANNELS (self));

  g_hash_table_remove (self->channels, GUINT_TO_POINTER (id));
}

/**
 * paddock_command_channels_drain_all:
 *
 * The sandbox ended: what the commands' supervisors wrote before counts
 * (a command that ended just before reports its own exit status).
 */
void
paddock_command_channels_drain_all (PaddockCommandChannels *self)
{
  g_autoptr(PaddockCommandChannels) hold = NULL;
  g_autoptr(GList) ids = NULL;

  g_return_if_fail (PADDOCK_IS_COMMAND_CHANNELS (self));

  hold = g_object_ref (self);
  ids = g_hash_table_get_keys (self->channels);
  for (GList *l = ids; l != NULL; l = l->next)
    {
      /* Looked up again: draining drops the channel it drained. */
      Channel *channel = g_hash_table_lookup (self->channels, l->data);

      if (channel != NULL)
        drain_channel (self, channel);
    }
}

/**
 * paddock_command_channels_supervisor_gone:
 *
 * pid 1's "supervisor-gone": the command's supervisor ended (killed from
 * inside the session, say) before it gave the command's last event.
 * Everything it wrote before is read first, then the command is answered
 * as pid 1 answers for a relayed command: it did not start, or it ended
 * with status 255.
 */
void
paddock_command_channels_supervisor_gone (PaddockCommandChannels *self,
                                          guint32                 id)
{
  g_autoptr(PaddockCommandChannels) hold = NULL;
  Channel *channel;

  g_return_if_fail (PADDOCK_IS_COMMAND_CHANNELS (self));

  channel = g_hash_table_lookup (self->channels, GUINT_TO_POINTER (id));
  if (channel == NULL)
    return;
  hold = g_object_ref (self);
  drain_channel (self, channel);
  channel = g_hash_table_lookup (self->channels, GUINT_TO_POINTER (id));
  if (channel == NULL)
    return;   /* its last event was there after all (or it broke the rules) */
  answer_lost_command (self, channel);
}

/**
 * paddock_command_channels_clear:
 *
 * Every channel goes: the sandbox is gone, they have nothing more to say.
 */
void
paddock_command_channels_clear (PaddockCommandChannels *self)
{
  g_return_if_fail (PADDOCK_IS_COMMAND_CHANNELS (self));

  g_hash_table_remove_all (self->channels);
}

PaddockCommandChannels *
paddock_command_channels_new (const char *session_id)
{
  PaddockCommandChannels *self = g_object_new (PADDOCK_TYPE_COMMAND_CHANNELS, NULL);

  self->session_id = g_strdup (session_id);
  return self;
}

static void
paddock_command_channels_dispose (GObject *object)
{
  PaddockCommandChannels *self = PADDOCK_COMMAND_CHANNELS (object);

  if (self->channels != NULL)
    g_hash_table_remove_all (self->channels);

  G_OBJECT_CLASS (paddock_command_channels_parent_class)->dispose (object);
}

static void
paddock_command_channels_finalize (GObject *object)
{
  PaddockCommandChannels *self = PADDOCK_COMMAND_CHANNELS (object);

  g_clear_pointer (&self->channels, g_hash_table_unref);
  g_free (self->session_id);

  G_OBJECT_CLASS (paddock_command_channels_parent_class)->finalize (object);
}

static void
paddock_command_channels_class_init (PaddockCommandChannelsClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_command_channels_dispose;
  object_class->finalize = paddock_command_channels_finalize;

  /**
   * PaddockCommandChannels::event:
   * @event: "spawned", "spawn-failed" or "command-exited" of one command,
   *   its "id" the channel's (never a descriptor with it)
   */
  signals[SIGNAL_EVENT] = g_signal_new ("event", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                        0, NULL, NULL, NULL, G_TYPE_NONE, 1, JSON_TYPE_OBJECT);
}

static void
paddock_command_channels_init (PaddockCommandChannels *self)
{
  self->channels = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) channel_free);
}
