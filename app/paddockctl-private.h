/* paddockctl-private.h — what the files of paddockctl share
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "paddock-ipc-generated.h"

G_BEGIN_DECLS

/* Exit codes are part of the interface (INTERFACES.md); a command run by
 * `ports lease -- CMD` passes its own status through instead. */
#define PADDOCKCTL_EXIT_OK             0
#define PADDOCKCTL_EXIT_FAILED         1
#define PADDOCKCTL_EXIT_USAGE          2
/* What shells use when a command cannot be executed or found. */
#define PADDOCKCTL_EXIT_CANNOT_EXECUTE 126
#define PADDOCKCTL_EXIT_NOT_FOUND      127

/* Long enough for the bus to activate the daemon on first use, short enough
 * that a wedged daemon does not hang a script forever. */
#define PADDOCKCTL_CALL_TIMEOUT_MS     20000

/* The state of one invocation: how to print, and the bus once connected. */
typedef struct
{
  gboolean            json;
  GDBusConnection    *bus;
  PaddockIpcManager1 *manager;
  PaddockIpcPorts1   *ports;
} Paddockctl;

typedef int (*PaddockctlCommandFunc) (Paddockctl  *ctl,
                                      int          argc,
                                      char       **argv);

/* One row of a command table: `paddockctl NAME …` or `paddockctl ports NAME …`.
 * The function gets argv with argv[0] == NAME. */
typedef struct
{
  const char            *name;
  PaddockctlCommandFunc  func;
  const char            *summary;
} PaddockctlCommand;

/* paddockctl.c */
int                 paddockctl_dispatch          (Paddockctl               *ctl,
                                                  const char               *group,
                                                  const PaddockctlCommand  *commands,
                                                  gsize                     n_commands,
                                                  int                       argc,
                                                  char                    **argv);
char               *paddockctl_commands_help     (const PaddockctlCommand  *commands,
                                                  gsize                     n_commands);
GOptionContext     *paddockctl_option_context_new (Paddockctl              *ctl,
                                                  const char               *parameter_string,
                                                  const char               *summary,
                                                  const GOptionEntry       *entries);
gboolean            paddockctl_parse_options     (Paddockctl               *ctl,
                                                  GOptionContext           *context,
                                                  const char               *command_path,
                                                  int                      *argc,
                                                  char                   ***argv,
                                                  int                      *exit_code);
gboolean            paddockctl_parse_port        (const char               *text,
                                                  gboolean                  allow_zero,
                                                  guint16                  *out_port);

/* paddockctl-output.c */
gboolean            paddockctl_parse_bytes       (const char               *text,
                                                  guint64                   min,
                                                  guint64                   max,
                                                  guint64                  *out_bytes);
void                paddockctl_print_json        (Paddockctl               *ctl,
                                                  JsonNode                 *root);
int                 paddockctl_fail              (Paddockctl               *ctl,
                                                  const GError             *error);
int                 paddockctl_fail_literal      (Paddockctl               *ctl,
                                                  int                       exit_code,
                                                  const char               *dbus_name,
                                                  const char               *message);
int                 paddockctl_usage_error       (Paddockctl               *ctl,
                                                  const char               *command_path,
                                                  const char               *format,
                                                  ...) G_GNUC_PRINTF (3, 4);
void                paddockctl_warn              (const char               *format,
                                                  ...) G_GNUC_PRINTF (1, 2);
char               *paddockctl_dup_error_name    (const GError             *error);

/* paddockctl-bus.c */
GDBusConnection    *paddockctl_get_bus           (Paddockctl               *ctl,
                                                  GError                  **error);
PaddockIpcManager1 *paddockctl_get_manager       (Paddockctl               *ctl,
                                                  GError                  **error);
PaddockIpcPorts1   *paddockctl_get_ports         (Paddockctl               *ctl,
                                                  GError                  **error);
PaddockIpcSession1 *paddockctl_dup_session       (Paddockctl               *ctl,
                                                  const char               *id,
                                                  GError                  **error);
PaddockIpcSession1 *paddockctl_dup_session_on    (Paddockctl               *ctl,
                                                  const char               *id,
                                                  const char               *owner,
                                                  GError                  **error);
void                paddockctl_clear             (Paddockctl               *ctl);

/* paddockctl-spawn.c */
void                paddockctl_spawn_save_signals (void);
gboolean            paddockctl_spawn_with_listen_fd (const char * const    *argv,
                                                  int                       listen_fd,
                                                  const char               *fd_name,
                                                  guint16                   port,
                                                  GPid                     *out_pid,
                                                  GError                  **error);
int                 paddockctl_wait_status_to_exit_code (int                wait_status);

/* paddockctl.c: shared parsing */
gboolean            paddockctl_is_env_name       (const char               *name);
const char         *paddockctl_add_env           (GVariantBuilder          *builder,
                                                  char                    **env);
gboolean            paddockctl_is_unknown_object_error (const GError       *error);

/* paddockctl-session.c */
char               *paddockctl_dup_session_id    (const char               *text);
char               *paddockctl_session_path      (const char               *id);
char               *paddockctl_parse_only_session_id (Paddockctl           *ctl,
                                                  const char               *command_path,
                                                  int                       argc,
                                                  char                    **argv,
                                                  int                      *exit_code);
char               *paddockctl_parse_session_id  (Paddockctl               *ctl,
                                                  const char               *command_path,
                                                  const char               *text,
                                                  int                      *exit_code);
void                paddockctl_check_session_error (Paddockctl             *ctl,
                                                  const char               *id,
                                                  GError                  **error);
int                 paddockctl_fail_session      (Paddockctl               *ctl,
                                                  const char               *id,
                                                  GError                  **error);
gboolean            paddockctl_get_session_state (Paddockctl               *ctl,
                                                  const char               *id,
                                                  char                    **out_state,
                                                  GError                  **error);

/* paddockctl-agents.c */
gboolean            paddockctl_agents_add_pass_env (Paddockctl             *ctl,
                                                  const char               *agent,
                                                  const char * const       *env,
                                                  const char * const       *pass_env,
                                                  GVariantBuilder          *env_builder,
                                                  GError                  **error);

/* Command entry points. */
int                 paddockctl_agents            (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);
int                 paddockctl_ports             (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);
int                 paddockctl_info              (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);
int                 paddockctl_create            (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);
int                 paddockctl_list              (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);
int                 paddockctl_status            (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);
int                 paddockctl_attach            (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);
int                 paddockctl_attach_socket     (Paddockctl               *ctl,
                                                  const char               *id,
                                                  int                       socket_fd,
                                                  gboolean                  fixed_size);
int                 paddockctl_logs              (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);
int                 paddockctl_send              (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);
int                 paddockctl_stop              (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);
int                 paddockctl_destroy           (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);
int                 paddockctl_exec              (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);
int                 paddockctl_review            (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);
int                 paddockctl_apply             (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);
/* The agent's commits (paddockctl-commits.c), for review and apply. */
gboolean            paddockctl_commits_review    (Paddockctl               *ctl,
                                                  PaddockIpcSession1       *session,
                                                  const char               *id,
                                                  JsonBuilder              *builder,
                                                  gboolean                  with_diff,
                                                  GError                  **error);
int                 paddockctl_commits_show      (Paddockctl               *ctl,
                                                  PaddockIpcSession1       *session,
                                                  const char               *id,
                                                  const char               *sha);
int                 paddockctl_commits_apply     (Paddockctl               *ctl,
                                                  PaddockIpcSession1       *session,
                                                  const char               *id,
                                                  const char               *branch);
int                 paddockctl_drop              (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);
int                 paddockctl_checkpoint        (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);
int                 paddockctl_net               (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);
int                 paddockctl_complete          (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);
int                 paddockctl_not_yet_available (Paddockctl               *ctl,
                                                  int                       argc,
                                                  char                    **argv);

G_END_DECLS
