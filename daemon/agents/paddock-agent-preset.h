/* paddock-agent-preset.h — an agent preset: what one agent needs, read from data/agents/NAME.json
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A preset file is small data: anything bigger is not one. */
#define PADDOCK_AGENT_PRESET_MAX_BYTES  (64 * 1024)
/* At most this many presets are read from each folder. */
#define PADDOCK_AGENT_PRESET_MAX_FILES  64
/* Names are file names and folder names under the state dir. */
#define PADDOCK_AGENT_NAME_MAX          32

typedef struct
{
  char     *name;           /* [a-z0-9_-]{1,32}, the file's name without .json */
  char     *title;          /* for people */
  GStrv     programs;       /* program names, the first found wins */
  GStrv     search;         /* extra folders to look in (absolute, or "~/…"), may be empty */
  char     *install_hint;   /* how to install it, one line */
  gboolean  package_tree;   /* its package tree (node_modules/PKG) is shown read-only */
  gboolean  node_runtime;   /* it needs the node runtime its shebang names */
  GStrv     home_persist;   /* parts of /home/agent it keeps (relative), informational */
  GStrv     domains;        /* what the proxy lets it reach by default */
  GArray   *ports;          /* guint16: the ports it reaches them on */
  GStrv     env_set;        /* "K=V" set inside */
  GStrv     env_pass;       /* variable names it may take from the user */
  GStrv     login;          /* its login command, may be empty */
  GStrv     credentials;    /* files of the real HOME (relative) import-login may copy */
  char     *source;         /* the file it was read from */
} PaddockAgentPreset;

void                paddock_agent_preset_free       (PaddockAgentPreset *preset);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PaddockAgentPreset, paddock_agent_preset_free)

gboolean            paddock_agent_name_is_valid     (const char         *name);
PaddockAgentPreset *paddock_agent_preset_load_file  (const char         *path,
                                                     GError            **error);
const char         *paddock_agent_presets_system_dir (void);
char               *paddock_agent_presets_user_dir  (void);
GPtrArray          *paddock_agent_presets_load_all  (GPtrArray         **out_errors);
GStrv               paddock_agent_presets_list_names (void);
PaddockAgentPreset *paddock_agent_preset_find       (const char         *name,
                                                     GError            **error);

G_END_DECLS
