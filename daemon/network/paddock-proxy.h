/* paddock-proxy.h — the HTTP proxy that is a proxy-mode session's only way out
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-domain-rules.h"
#include "paddock-net-record.h"

G_BEGIN_DECLS

#define PADDOCK_PROXY_DEFAULT_MAX_CONNECTIONS   256
#define PADDOCK_PROXY_DEFAULT_HEADER_TIMEOUT_MS 10000
#define PADDOCK_PROXY_MAX_HEADER_BYTES          (32 * 1024)
#define PADDOCK_PROXY_MAX_HEADERS               100

#define PADDOCK_TYPE_PROXY (paddock_proxy_get_type ())

G_DECLARE_FINAL_TYPE (PaddockProxy, paddock_proxy, PADDOCK, PROXY, GObject)

PaddockProxy       *paddock_proxy_new                    (int                  listen_fd,
                                                          PaddockDomainRules  *rules,
                                                          GError             **error);
void                paddock_proxy_set_rules              (PaddockProxy        *self,
                                                          PaddockDomainRules  *rules);
PaddockDomainRules *paddock_proxy_dup_rules              (PaddockProxy        *self);
void                paddock_proxy_set_resolver_override  (PaddockProxy        *self,
                                                          GHashTable          *name_to_address);
void                paddock_proxy_set_header_timeout     (PaddockProxy        *self,
                                                          guint                timeout_ms);
void                paddock_proxy_set_max_connections    (PaddockProxy        *self,
                                                          guint                max_connections);
guint               paddock_proxy_get_n_connections      (PaddockProxy        *self);
guint               paddock_proxy_get_n_lookups          (PaddockProxy        *self);
void                paddock_proxy_stop                   (PaddockProxy        *self);
void                paddock_proxy_close_denied_connections (PaddockProxy      *self,
                                                            const char        *reason);
char               *paddock_proxy_git_ssh_command        (guint                proxy_port);

G_END_DECLS
