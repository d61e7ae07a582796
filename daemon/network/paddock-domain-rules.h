/* paddock-domain-rules.h — allow/deny domain patterns and ports for the session proxy
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

/* The one error domain of daemon/network (rules, proxy, records). */
#define PADDOCK_NETWORK_ERROR (paddock_network_error_quark ())

typedef enum {
  PADDOCK_NETWORK_ERROR_FAILED,
  PADDOCK_NETWORK_ERROR_INVALID_PATTERN,
  PADDOCK_NETWORK_ERROR_PATTERN_TOO_LONG,
  PADDOCK_NETWORK_ERROR_TOO_MANY_PATTERNS,
  PADDOCK_NETWORK_ERROR_INVALID_HOST,
  PADDOCK_NETWORK_ERROR_INVALID_ARGUMENT,
  PADDOCK_NETWORK_ERROR_TOO_MANY_CONNECTIONS,
  PADDOCK_NETWORK_ERROR_CORRUPT,
  PADDOCK_NETWORK_ERROR_TOO_LARGE,
} PaddockNetworkError;

GQuark paddock_network_error_quark (void);

/* Limits: every pattern list is user-controlled input. */
#define PADDOCK_DOMAIN_RULES_MAX_PATTERNS    256
#define PADDOCK_DOMAIN_RULES_MAX_PATTERN_LEN 253

typedef enum {
  PADDOCK_RULE_VERDICT_ALLOW,
  PADDOCK_RULE_VERDICT_DENY,
  PADDOCK_RULE_VERDICT_INVALID,
  PADDOCK_RULE_VERDICT_DENY_PORT,   /* an allow rule names the host, none this port */
} PaddockRuleVerdict;

#define PADDOCK_TYPE_DOMAIN_RULES (paddock_domain_rules_get_type ())

G_DECLARE_FINAL_TYPE (PaddockDomainRules, paddock_domain_rules, PADDOCK, DOMAIN_RULES, GObject)

PaddockDomainRules *paddock_domain_rules_new            (void);
gboolean            paddock_domain_rules_add_allow      (PaddockDomainRules  *self,
                                                         const char          *pattern,
                                                         GError             **error);
gboolean            paddock_domain_rules_add_deny       (PaddockDomainRules  *self,
                                                         const char          *pattern,
                                                         GError             **error);
gboolean            paddock_domain_rules_add_port       (PaddockDomainRules  *self,
                                                         guint                port,
                                                         GError             **error);
void                paddock_domain_rules_clear_ports    (PaddockDomainRules  *self);
gboolean            paddock_domain_rules_port_allowed   (PaddockDomainRules  *self,
                                                         guint                port);
PaddockRuleVerdict  paddock_domain_rules_check_host     (PaddockDomainRules  *self,
                                                         const char          *host,
                                                         char               **out_rule);
PaddockRuleVerdict  paddock_domain_rules_check_target   (PaddockDomainRules  *self,
                                                         const char          *host,
                                                         guint                port,
                                                         char               **out_rule);
char               *paddock_domain_rules_normalize_host (const char          *host,
                                                         gboolean            *out_is_ip,
                                                         GError             **error);

G_END_DECLS
