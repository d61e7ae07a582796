/* paddock-session-commands.c — a session's Exec/Run table: ids, quotas, pending calls, deadlines, callers
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The bookkeeping of a session's commands, apart from how they are run:
 * the Command1 objects by id and the quotas on them, the host pids that
 * are commands, the Exec and Run calls waiting for a sandbox to say their
 * command started (each with its deadline), and one NameOwnerChanged
 * match per caller. It never calls into the session: a deadline that
 * passes is reported with "spawn-deadline", and the session (which knows
 * how to kill a command) answers the call.
 */

#include "config.h"

#include "paddock-error.h"
#include "paddock-session-commands.h"

/* How long an Exec or Run waits for the sandbox to say its command
 * started: a fork and an exec take milliseconds, but the command's
 * supervisor runs inside the session, where any process can SIGSTOP it
 * (see hand_to_spare in paddock-sandbox-commands.c). For tests,
 * PADDOCK_TEST_SPAWN_DEADLINE_MS=N in the daemon's own environment makes
 * it N ms. */
#define SPAWN_DEADLINE_MS (10 * 1000)

struct _PaddockSessionCommands
{
  GObject     parent_instance;

  /* Commands by id (PaddockCommandImpl), and host pids → ids. */
  GHashTable *commands;
  GHashTable *pids;
  /* Exec calls waiting for the sandbox to say "spawned", by command id,
   * and each one's deadline (SpawnDeadline), by the same id. */
  GHashTable *pending;
  GHashTable *deadlines;
  /* Callers of Exec → CallerWatch, until they leave the bus. */
  GHashTable *caller_watches;
  guint32     next_id;
};

enum {
  SIGNAL_SPAWN_DEADLINE,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (PaddockSessionCommands, paddock_session_commands, G_TYPE_OBJECT)

/* The bound on one Exec's wait for "spawned". */
typedef struct {
  PaddockSessionCommands *self;   /* not a reference: the table drops its deadlines first */
  guint32                 id;
  guint                   source;
} SpawnDeadline;

static void
spawn_deadline_free (SpawnDeadline *deadline)
{
  g_clear_handle_id (&deadline->source, g_source_remove);
  g_free (deadline);
}

/* Each command watches its caller's NameOwnerChanged (the command dies
 * with its caller). The session holds the same match for as long as the
 * caller is on the bus, so that GDBus, which sends one AddMatch per
 * distinct rule, sends it once per caller rather than an AddMatch and a
 * RemoveMatch to the bus daemon around every command. */
typedef struct
{
  GDBusConnection *connection;
  guint            id;
} CallerWatch;

static void
caller_watch_free (CallerWatch *watch)
{
  g_dbus_connection_signal_unsubscribe (watch->connection, watch->id);
  g_object_unref (watch->connection);
  g_free (watch);
}

guint
paddock_session_commands_get_spawn_deadline_ms (void)
{
  const char *text = g_getenv ("PADDOCK_TEST_SPAWN_DEADLINE_MS");
  guint64 ms;

  if (text != NULL && g_ascii_string_to_unsigned (text, 10, 1, 3600 * 1000, &ms, NULL))
    return (guint) ms;
  return SPAWN_DEADLINE_MS;
}

/* ------------------------------------------------------------------------ */
/* Commands                                                                  */

/* The id of the next command: never 0, never one given before. */
guint32
paddock_session_commands_next_id (PaddockSessionCommands *self)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_COMMANDS (self), 0);

  return ++self->next_id;
}

static guint
count_running_of (PaddockSessionCommands *self,
                  const char             *caller)
{
  GHashTableIter iter;
  gpointer value;
  guint count = 0;

  g_hash_table_iter_init (&iter, self->commands);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (paddock_command_impl_is_running (value) &&
        g_strcmp0 (paddock_command_impl_get_caller (value), caller) == 0)
      count++;
  return count;
}

/* Whether @caller may start one more command: FALSE with
 * %PADDOCK_ERROR_QUOTA_EXCEEDED when it runs as many as it may, or the
 * table holds as many as it keeps. */
gboolean
paddock_session_commands_check_quota (PaddockSessionCommands  *self,
                                      const char              *caller,
                                      GError                 **error)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_COMMANDS (self), FALSE);

  if (count_running_of (self, caller) >= PADDOCK_SESSION_MAX_COMMANDS_PER_CLIENT ||
      g_hash_table_size (self->commands) >= PADDOCK_SESSION_MAX_COMMANDS_KEPT)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_QUOTA_EXCEEDED,
                   "A client runs at most %u commands in a session at once "
                   "(release finished ones)", PADDOCK_SESSION_MAX_COMMANDS_PER_CLIENT);
      return FALSE;
    }
  return TRUE;
}

/* Keeps a reference to @command, by its id. */
void
paddock_session_commands_add (PaddockSessionCommands *self,
                              PaddockCommandImpl     *command)
{
  g_return_if_fail (PADDOCK_IS_SESSION_COMMANDS (self));
  g_return_if_fail (PADDOCK_IS_COMMAND_IMPL (command));

  g_hash_table_insert (self->commands, GUINT_TO_POINTER (paddock_command_impl_get_id (command)),
                       g_object_ref (command));
}

void
paddock_session_commands_remove (PaddockSessionCommands *self,
                                 guint32                 id)
{
  g_return_if_fail (PADDOCK_IS_SESSION_COMMANDS (self));

  g_hash_table_remove (self->commands, GUINT_TO_POINTER (id));
}

/* Returns: (transfer none) (nullable): command @id */
PaddockCommandImpl *
paddock_session_commands_lookup (PaddockSessionCommands *self,
                                 guint32                 id)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_COMMANDS (self), NULL);

  return g_hash_table_lookup (self->commands, GUINT_TO_POINTER (id));
}

/* Returns: (transfer full) (element-type PaddockCommandImpl): every
 * command in the table now, each a reference: what is done with them may
 * change the table. */
GPtrArray *
paddock_session_commands_dup_all (PaddockSessionCommands *self)
{
  GPtrArray *all;
  GHashTableIter iter;
  gpointer value;

  g_return_val_if_fail (PADDOCK_IS_SESSION_COMMANDS (self), NULL);

  all = g_ptr_array_new_full (g_hash_table_size (self->commands), g_object_unref);
  g_hash_table_iter_init (&iter, self->commands);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (all, g_object_ref (value));
  return all;
}

/* ------------------------------------------------------------------------ */
/* Host pids                                                                 */

/* @pid (a host command's keeper's child) is command @id's. */
void
paddock_session_commands_add_pid (PaddockSessionCommands *self,
                                  pid_t                   pid,
                                  guint32                 id)
{
  g_return_if_fail (PADDOCK_IS_SESSION_COMMANDS (self));
  g_return_if_fail (pid > 0 && id != 0);

  g_hash_table_insert (self->pids, GINT_TO_POINTER (pid), GUINT_TO_POINTER (id));
}

/* @pid ended: whose command it was (0: none's), forgotten. */
guint32
paddock_session_commands_take_pid (PaddockSessionCommands *self,
                                   pid_t                   pid)
{
  guint32 id;

  g_return_val_if_fail (PADDOCK_IS_SESSION_COMMANDS (self), 0);

  id = GPOINTER_TO_UINT (g_hash_table_lookup (self->pids, GINT_TO_POINTER (pid)));
  g_hash_table_remove (self->pids, GINT_TO_POINTER (pid));
  return id;
}

/* Returns: (transfer full) (element-type pid_t): the host pids of command
 * @id, or of every command when @id is 0. */
GArray *
paddock_session_commands_dup_pids (PaddockSessionCommands *self,
                                   guint32                 id)
{
  GArray *pids;
  GHashTableIter iter;
  gpointer key;
  gpointer value;

  g_return_val_if_fail (PADDOCK_IS_SESSION_COMMANDS (self), NULL);

  pids = g_array_new (FALSE, FALSE, sizeof (pid_t));
  g_hash_table_iter_init (&iter, self->pids);
  while (g_hash_table_iter_next (&iter, &key, &value))
    if (id == 0 || GPOINTER_TO_UINT (value) == id)
      {
        pid_t pid = GPOINTER_TO_INT (key);

        g_array_append_val (pids, pid);
      }
  return pids;
}

/* ------------------------------------------------------------------------ */
/* Calls waiting for a command to start                                      */

/* No "spawned" in time: the command's supervisor was stopped (or the
 * whole sandbox is). Its call is still pending: the session answers it. */
static gboolean
spawn_deadline_cb (gpointer user_data)
{
  SpawnDeadline *deadline = user_data;
  PaddockSessionCommands *self = deadline->self;
  guint32 id = deadline->id;

  deadline->source = 0;
  g_hash_table_remove (self->deadlines, GUINT_TO_POINTER (id));
  g_signal_emit (self, signals[SIGNAL_SPAWN_DEADLINE], 0, (guint) id);
  return G_SOURCE_REMOVE;
}

/**
 * paddock_session_commands_add_pending:
 * @invocation: (transfer full): the Exec or Run call of command @id
 *
 * Keeps @invocation until it is answered, bounded by the spawn deadline
 * ("spawn-deadline" once it passes).
 */
void
paddock_session_commands_add_pending (PaddockSessionCommands *self,
                                      guint32                 id,
                                      GDBusMethodInvocation  *invocation)
{
  SpawnDeadline *deadline;

  g_return_if_fail (PADDOCK_IS_SESSION_COMMANDS (self));
  g_return_if_fail (G_IS_DBUS_METHOD_INVOCATION (invocation));

  g_hash_table_insert (self->pending, GUINT_TO_POINTER (id), invocation);
  deadline = g_new0 (SpawnDeadline, 1);
  deadline->self = self;
  deadline->id = id;
  deadline->source = g_timeout_add (paddock_session_commands_get_spawn_deadline_ms (), spawn_deadline_cb, deadline);
  g_hash_table_replace (self->deadlines, GUINT_TO_POINTER (id), deadline);
}

/* Returns: (transfer none) (nullable): command @id's call, if waiting */
GDBusMethodInvocation *
paddock_session_commands_get_pending (PaddockSessionCommands *self,
                                      guint32                 id)
{
  g_return_val_if_fail (PADDOCK_IS_SESSION_COMMANDS (self), NULL);

  return g_hash_table_lookup (self->pending, GUINT_TO_POINTER (id));
}

/* Command @id's call leaves the table, with its deadline: it is answered
 * now, by the caller of this.
 * Returns: (transfer full) (nullable): the call */
GDBusMethodInvocation *
paddock_session_commands_steal_pending (PaddockSessionCommands *self,
                                        guint32                 id)
{
  gpointer invocation = NULL;

  g_return_val_if_fail (PADDOCK_IS_SESSION_COMMANDS (self), NULL);

  g_hash_table_remove (self->deadlines, GUINT_TO_POINTER (id));
  g_hash_table_steal_extended (self->pending, GUINT_TO_POINTER (id), NULL, &invocation);
  return invocation;
}

/* Every call still waiting is answered with @error. */
void
paddock_session_commands_fail_pending (PaddockSessionCommands *self,
                                       const GError           *error)
{
  GHashTableIter iter;
  gpointer value;

  g_return_if_fail (PADDOCK_IS_SESSION_COMMANDS (self));
  g_return_if_fail (error != NULL);

  g_hash_table_remove_all (self->deadlines);
  g_hash_table_iter_init (&iter, self->pending);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      /* The table's reference goes with the answer. */
      g_hash_table_iter_steal (&iter);
      g_dbus_method_invocation_return_gerror (value, error);
    }
}

/* ------------------------------------------------------------------------ */
/* Callers                                                                   */

static void
caller_vanished_cb (GDBusConnection *connection,
                    const char      *sender_name,
                    const char      *object_path,
                    const char      *interface_name,
                    const char      *signal_name,
                    GVariant        *parameters,
                    gpointer         user_data)
{
  PaddockSessionCommands *self = user_data;
  const char *name;
  const char *new_owner;

  g_variant_get (parameters, "(&s&s&s)", &name, NULL, &new_owner);
  if (new_owner[0] == '\0')
    g_hash_table_remove (self->caller_watches, name);
}

void
paddock_session_commands_watch_caller (PaddockSessionCommands *self,
                                       GDBusConnection        *connection,
                                       const char             *caller)
{
  CallerWatch *watch;

  g_return_if_fail (PADDOCK_IS_SESSION_COMMANDS (self));

  /* Unique names only (a peer-to-peer caller has none), and bounded: a
   * client that has left is dropped when it leaves. */
  if (connection == NULL || caller == NULL || caller[0] != ':' ||
      g_hash_table_contains (self->caller_watches, caller))
    return;

  watch = g_new0 (CallerWatch, 1);
  watch->connection = g_object_ref (connection);
  /* The very rule of paddock_command_impl_new(). */
  watch->id = g_dbus_connection_signal_subscribe (connection, "org.freedesktop.DBus", "org.freedesktop.DBus",
                                                  "NameOwnerChanged", "/org/freedesktop/DBus", caller,
                                                  G_DBUS_SIGNAL_FLAGS_NONE, caller_vanished_cb, self, NULL);
  g_hash_table_insert (self->caller_watches, g_strdup (caller), watch);
}

void
paddock_session_commands_unwatch_callers (PaddockSessionCommands *self)
{
  g_return_if_fail (PADDOCK_IS_SESSION_COMMANDS (self));

  g_hash_table_remove_all (self->caller_watches);
}

/* ------------------------------------------------------------------------ */

static void
paddock_session_commands_dispose (GObject *object)
{
  PaddockSessionCommands *self = PADDOCK_SESSION_COMMANDS (object);

  /* Their callbacks point at us. */
  g_hash_table_remove_all (self->deadlines);
  g_hash_table_remove_all (self->caller_watches);

  G_OBJECT_CLASS (paddock_session_commands_parent_class)->dispose (object);
}

static void
paddock_session_commands_finalize (GObject *object)
{
  PaddockSessionCommands *self = PADDOCK_SESSION_COMMANDS (object);

  g_clear_pointer (&self->commands, g_hash_table_unref);
  g_clear_pointer (&self->pids, g_hash_table_unref);
  g_clear_pointer (&self->pending, g_hash_table_unref);
  g_clear_pointer (&self->deadlines, g_hash_table_unref);
  g_clear_pointer (&self->caller_watches, g_hash_table_unref);

  G_OBJECT_CLASS (paddock_session_commands_parent_class)->finalize (object);
}

static void
paddock_session_commands_class_init (PaddockSessionCommandsClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_session_commands_dispose;
  object_class->finalize = paddock_session_commands_finalize;

  /**
   * PaddockSessionCommands::spawn-deadline:
   * @id: the command whose call waited too long
   *
   * Command @id's start was not confirmed within the spawn deadline. Its
   * call is still pending, for the handler to answer.
   */
  signals[SIGNAL_SPAWN_DEADLINE] = g_signal_new ("spawn-deadline", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                                 0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
}

static void
paddock_session_commands_init (PaddockSessionCommands *self)
{
  self->commands = g_hash_table_new_full (NULL, NULL, NULL, g_object_unref);
  self->pids = g_hash_table_new (NULL, NULL);
  self->pending = g_hash_table_new_full (NULL, NULL, NULL, g_object_unref);
  self->deadlines = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) spawn_deadline_free);
  self->caller_watches = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) caller_watch_free);
}

PaddockSessionCommands *
paddock_session_commands_new (void)
{
  return g_object_new (PADDOCK_TYPE_SESSION_COMMANDS, NULL);
}
