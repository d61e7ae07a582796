/* paddock-domain-rules.c — allow/deny domain patterns and ports for the session proxy
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <arpa/inet.h>
#include <gio/gio.h>
#include <string.h>

#include "paddock-domain-rules.h"

G_DEFINE_QUARK (paddock-network-error-quark, paddock_network_error)

typedef enum {
  PATTERN_ALL,       /* "*" */
  PATTERN_WILDCARD,  /* "*.example.org": strict subdomains only */
  PATTERN_EXACT,     /* "example.org" */
  PATTERN_IP,        /* "192.0.2.1", "2001:db8::1" in canonical form */
} PatternKind;

typedef struct {
  PatternKind  kind;
  char        *text;    /* as normalised, for messages (with ":port" when it has one) */
  char        *suffix;  /* WILDCARD: ".example.org"; EXACT/IP: the name */
  guint        port;    /* "host:port": only that port; 0: the rule set's ports (80, 443…) */
} Pattern;

struct _PaddockDomainRules
{
  GObject    parent_instance;

  GPtrArray *allow;  /* Pattern* */
  GPtrArray *deny;   /* Pattern* */
  guint8     ports[65536 / 8];
};

G_DEFINE_FINAL_TYPE (PaddockDomainRules, paddock_domain_rules, G_TYPE_OBJECT)

static void
pattern_free (gpointer data)
{
  Pattern *pattern = data;

  g_free (pattern->text);
  g_free (pattern->suffix);
  g_free (pattern);
}

static void
paddock_domain_rules_finalize (GObject *object)
{
  PaddockDomainRules *self = PADDOCK_DOMAIN_RULES (object);

  g_clear_pointer (&self->allow, g_ptr_array_unref);
  g_clear_pointer (&self->deny, g_ptr_array_unref);

  G_OBJECT_CLASS (paddock_domain_rules_parent_class)->finalize (object);
}

static void
paddock_domain_rules_class_init (PaddockDomainRulesClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = paddock_domain_rules_finalize;
}

static void
paddock_domain_rules_init (PaddockDomainRules *self)
{
  self->allow = g_ptr_array_new_with_free_func (pattern_free);
  self->deny = g_ptr_array_new_with_free_func (pattern_free);
  /* Plain HTTP and HTTPS only, unless the policy names more ports: other
   * ports carry SSH, SMTP, databases — protocols a domain allow-list was
   * never meant to open. */
  paddock_domain_rules_add_port (self, 80, NULL);
  paddock_domain_rules_add_port (self, 443, NULL);
}

/**
 * paddock_domain_rules_new:
 *
 * Returns: an empty policy that denies every host and allows ports 80 and 443.
 */
PaddockDomainRules *
paddock_domain_rules_new (void)
{
  return g_object_new (PADDOCK_TYPE_DOMAIN_RULES, NULL);
}

/* Returns the canonical text of an IPv4/IPv6 literal, or NULL. Besides
 * the standard forms this accepts what inet_aton() accepts ("127.1",
 * "0x7f.0.0.1", "2130706433"): getaddrinfo() would turn those "names"
 * into addresses, so they must be judged as the addresses they are. */
static char *
canonical_ip (const char *host)
{
  struct in_addr in4;

  if (g_hostname_is_ip_address (host))
    {
      g_autoptr(GInetAddress) address = g_inet_address_new_from_string (host);

      if (address != NULL)
        return g_inet_address_to_string (address);
    }

  if (inet_aton (host, &in4) != 0)
    {
      char buffer[INET_ADDRSTRLEN];

      if (inet_ntop (AF_INET, &in4, buffer, sizeof buffer) != NULL)
        return g_strdup (buffer);
    }

  return NULL;
}

static gboolean
valid_dns_name (const char *name)
{
  gsize label_len = 0;
  gsize len = strlen (name);

  if (len == 0 || len > PADDOCK_DOMAIN_RULES_MAX_PATTERN_LEN)
    return FALSE;

  for (const char *p = name; ; p++)
    {
      if (*p == '.' || *p == '\0')
        {
          if (label_len == 0 || label_len > 63)
            return FALSE;
          if (*p == '\0')
            break;
          label_len = 0;
          continue;
        }
      /* LDH plus '_' (seen in real service names); anything else —
       * '%', '/', '@', spaces, control bytes — is not a host name. */
      if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_')
        return FALSE;
      label_len++;
    }

  return TRUE;
}

/**
 * paddock_domain_rules_normalize_host:
 * @host: a host name or IP literal (IPv6 optionally in brackets)
 * @out_is_ip: (out) (optional): set to whether @host is an IP literal
 * @error: return location for a %PADDOCK_NETWORK_ERROR_INVALID_HOST error
 *
 * Lower-cases, strips one trailing dot, converts IDNs to ASCII
 * (g_hostname_to_ascii) and canonicalises IP literals, so that one
 * destination has exactly one spelling when compared with patterns.
 *
 * Returns: (transfer full): the normalised host, or %NULL
 */
char *
paddock_domain_rules_normalize_host (const char  *host,
                                     gboolean    *out_is_ip,
                                     GError     **error)
{
  g_autofree char *unbracketed = NULL;
  g_autofree char *lower = NULL;
  g_autofree char *ascii = NULL;
  g_autofree char *ip = NULL;
  gsize len;

  g_return_val_if_fail (host != NULL, NULL);

  if (out_is_ip != NULL)
    *out_is_ip = FALSE;

  len = strlen (host);
  if (len == 0 || len > PADDOCK_DOMAIN_RULES_MAX_PATTERN_LEN + 2)
    {
      g_set_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_INVALID_HOST,
                   "Host name is empty or longer than %d bytes",
                   PADDOCK_DOMAIN_RULES_MAX_PATTERN_LEN);
      return NULL;
    }

  if (host[0] == '[' && host[len - 1] == ']')
    unbracketed = g_strndup (host + 1, len - 2);
  else
    unbracketed = g_strdup (host);

  ip = canonical_ip (unbracketed);
  if (ip != NULL)
    {
      if (out_is_ip != NULL)
        *out_is_ip = TRUE;
      return g_steal_pointer (&ip);
    }

  if (!g_utf8_validate (unbracketed, -1, NULL))
    {
      g_set_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_INVALID_HOST,
                   "Host name is not valid UTF-8");
      return NULL;
    }

  lower = g_utf8_strdown (unbracketed, -1);
  len = strlen (lower);
  if (len > 0 && lower[len - 1] == '.')
    lower[len - 1] = '\0';

  ascii = g_hostname_to_ascii (lower);
  if (ascii == NULL)
    {
      g_set_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_INVALID_HOST,
                   "“%s” is not a valid host name", host);
      return NULL;
    }

  /* IDNA maps e.g. full-width digits and dots to ASCII: look again. */
  ip = canonical_ip (ascii);
  if (ip != NULL)
    {
      if (out_is_ip != NULL)
        *out_is_ip = TRUE;
      return g_steal_pointer (&ip);
    }

  {
    g_autofree char *down = g_ascii_strdown (ascii, -1);

    if (!valid_dns_name (down))
      {
        g_set_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_INVALID_HOST,
                     "“%s” is not a valid host name", host);
        return NULL;
      }
    return g_steal_pointer (&down);
  }
}

/* "host:port", "*.example.org:8443", "[2001:db8::1]:22": the port, and
 * @text without it in @out_host. A bare IPv6 literal (two colons or more,
 * no brackets) has no port. FALSE when a port is there but is not 1…65535
 * in plain digits. */
static gboolean
split_port (const char  *text,
            char       **out_host,
            guint       *out_port)
{
  const char *colon = NULL;
  guint64 port;

  *out_port = 0;
  if (text[0] == '[')
    {
      const char *close = strchr (text, ']');

      if (close != NULL && close[1] == ':')
        colon = close + 1;
    }
  else
    {
      colon = strchr (text, ':');
      if (colon != NULL && strchr (colon + 1, ':') != NULL)
        colon = NULL;   /* IPv6 */
    }

  if (colon == NULL)
    {
      *out_host = g_strdup (text);
      return TRUE;
    }
  if (!g_ascii_string_to_unsigned (colon + 1, 10, 1, 65535, &port, NULL) ||
      !g_ascii_isdigit (colon[1]))
    return FALSE;
  *out_host = g_strndup (text, (gsize) (colon - text));
  *out_port = (guint) port;
  return TRUE;
}

static gboolean
add_pattern (PaddockDomainRules  *self,
             GPtrArray           *list,
             const char          *full_text,
             GError             **error)
{
  g_autofree char *name = NULL;
  g_autofree char *text = NULL;
  Pattern *pattern;
  gboolean is_ip = FALSE;
  guint port = 0;
  gsize len;

  g_return_val_if_fail (PADDOCK_IS_DOMAIN_RULES (self), FALSE);
  g_return_val_if_fail (full_text != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  len = strlen (full_text);
  if (len > PADDOCK_DOMAIN_RULES_MAX_PATTERN_LEN)
    {
      g_set_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_PATTERN_TOO_LONG,
                   "Pattern is %" G_GSIZE_FORMAT " bytes; at most %d are allowed",
                   len, PADDOCK_DOMAIN_RULES_MAX_PATTERN_LEN);
      return FALSE;
    }
  if (self->allow->len + self->deny->len >= PADDOCK_DOMAIN_RULES_MAX_PATTERNS)
    {
      g_set_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_TOO_MANY_PATTERNS,
                   "A policy holds at most %d patterns", PADDOCK_DOMAIN_RULES_MAX_PATTERNS);
      return FALSE;
    }

  if (!split_port (full_text, &text, &port))
    {
      g_set_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_INVALID_PATTERN,
                   "“%s” has a port that is not 1…65535", full_text);
      return FALSE;
    }

  pattern = g_new0 (Pattern, 1);
  pattern->port = port;
  if (strcmp (text, "*") == 0)
    {
      pattern->kind = PATTERN_ALL;
      pattern->text = g_strdup ("*");
    }
  else if (g_str_has_prefix (text, "*."))
    {
      g_autoptr(GError) local_error = NULL;

      name = paddock_domain_rules_normalize_host (text + 2, &is_ip, &local_error);
      /* "*.10.0.0.1" would read as a range of addresses, which a name
       * suffix cannot express: refuse instead of guessing. */
      if (name == NULL || is_ip)
        {
          pattern_free (pattern);
          g_set_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_INVALID_PATTERN,
                       "“%s” is not a valid wildcard pattern%s%s", text,
                       local_error ? ": " : "", local_error ? local_error->message : "");
          return FALSE;
        }
      pattern->kind = PATTERN_WILDCARD;
      pattern->text = g_strconcat ("*.", name, NULL);
      pattern->suffix = g_strconcat (".", name, NULL);
    }
  else
    {
      g_autoptr(GError) local_error = NULL;

      name = paddock_domain_rules_normalize_host (text, &is_ip, &local_error);
      if (name == NULL)
        {
          pattern_free (pattern);
          g_set_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_INVALID_PATTERN,
                       "“%s” is not a valid pattern: %s", text, local_error->message);
          return FALSE;
        }
      pattern->kind = is_ip ? PATTERN_IP : PATTERN_EXACT;
      pattern->text = g_strdup (name);
      pattern->suffix = g_steal_pointer (&name);
    }

  if (port != 0)
    {
      gboolean v6 = strchr (pattern->text, ':') != NULL;
      char *with_port = g_strdup_printf ("%s%s%s:%u", v6 ? "[" : "", pattern->text,
                                         v6 ? "]" : "", port);

      g_free (pattern->text);
      pattern->text = with_port;
    }
  g_ptr_array_add (list, pattern);
  return TRUE;
}

/**
 * paddock_domain_rules_add_allow:
 * @pattern: `example.org`, `*.example.org` (strict subdomains), `*` (every
 *   name) or an IP literal, each optionally with `:port` (`github.com:22`,
 *   `[2001:db8::1]:22`): with a port the rule allows only that port;
 *   without one, the rule set's ports (80 and 443 unless
 *   paddock_domain_rules_add_port() added more)
 *
 * Returns: %TRUE, or %FALSE with a typed error (invalid, too long, too many)
 */
gboolean
paddock_domain_rules_add_allow (PaddockDomainRules  *self,
                                const char          *pattern,
                                GError             **error)
{
  g_return_val_if_fail (PADDOCK_IS_DOMAIN_RULES (self), FALSE);

  return add_pattern (self, self->allow, pattern, error);
}

/**
 * paddock_domain_rules_add_deny:
 *
 * Like paddock_domain_rules_add_allow(); a matching deny pattern wins over
 * any allow pattern. A deny pattern without a port denies every port.
 */
gboolean
paddock_domain_rules_add_deny (PaddockDomainRules  *self,
                               const char          *pattern,
                               GError             **error)
{
  g_return_val_if_fail (PADDOCK_IS_DOMAIN_RULES (self), FALSE);

  return add_pattern (self, self->deny, pattern, error);
}

gboolean
paddock_domain_rules_add_port (PaddockDomainRules  *self,
                               guint                port,
                               GError             **error)
{
  g_return_val_if_fail (PADDOCK_IS_DOMAIN_RULES (self), FALSE);

  if (port == 0 || port > 65535)
    {
      g_set_error (error, PADDOCK_NETWORK_ERROR, PADDOCK_NETWORK_ERROR_INVALID_ARGUMENT,
                   "Port %u is not in 1…65535", port);
      return FALSE;
    }
  self->ports[port / 8] |= (guint8) (1u << (port % 8));
  return TRUE;
}

void
paddock_domain_rules_clear_ports (PaddockDomainRules *self)
{
  g_return_if_fail (PADDOCK_IS_DOMAIN_RULES (self));

  memset (self->ports, 0, sizeof self->ports);
}

gboolean
paddock_domain_rules_port_allowed (PaddockDomainRules *self,
                                   guint               port)
{
  g_return_val_if_fail (PADDOCK_IS_DOMAIN_RULES (self), FALSE);

  if (port == 0 || port > 65535)
    return FALSE;
  return (self->ports[port / 8] & (1u << (port % 8))) != 0;
}

/* IP literals match only patterns that are the same literal, never `*`
 * or a wildcard, when *allowing*: `*` means "any domain name", and a
 * literal reaches whatever sits at that address — the host's LAN, cloud
 * metadata at 169.254.169.254, services bound to the host's loopback —
 * without any name the policy could have judged. Granting that must be a
 * deliberate, literal listing. When *denying*, `*` does cover literals:
 * a deny rule can only ever make the policy stricter. */
static gboolean
match_one (const Pattern *pattern,
           const char    *host,
           gsize          host_len,
           gboolean       is_ip,
           gboolean       star_covers_ip)
{
  switch (pattern->kind)
    {
    case PATTERN_ALL:
      return !is_ip || star_covers_ip;

    case PATTERN_WILDCARD:
      {
        gsize suffix_len = strlen (pattern->suffix);

        return !is_ip && host_len > suffix_len &&
               strcmp (host + host_len - suffix_len, pattern->suffix) == 0;
      }

    case PATTERN_EXACT:
    case PATTERN_IP:
      return strcmp (host, pattern->suffix) == 0;

    default:
      g_assert_not_reached ();
    }
}

/* The first pattern of @list naming @host whose port fits: @port_ok says
 * whether a pattern without a port fits (the rule set's ports for allow,
 * always for deny). @out_host_named: whether any pattern named the host at
 * all, whatever its port. */
static const Pattern *
match_target (GPtrArray  *list,
              const char *host,
              gboolean    is_ip,
              gboolean    star_covers_ip,
              guint       port,
              gboolean    port_ok,
              gboolean   *out_host_named)
{
  gsize host_len = strlen (host);

  for (guint i = 0; i < list->len; i++)
    {
      const Pattern *pattern = g_ptr_array_index (list, i);

      if (!match_one (pattern, host, host_len, is_ip, star_covers_ip))
        continue;
      if (out_host_named != NULL)
        *out_host_named = TRUE;
      if (pattern->port != 0 ? pattern->port == port : port_ok)
        return pattern;
    }
  return NULL;
}

/* The first pattern of @list naming @host, whatever its port; with
 * @skip_ported, patterns with a port do not count (a deny rule for one
 * port does not deny the host as a whole). */
static const Pattern *
match (GPtrArray  *list,
       const char *host,
       gboolean    is_ip,
       gboolean    star_covers_ip,
       gboolean    skip_ported)
{
  gsize host_len = strlen (host);

  for (guint i = 0; i < list->len; i++)
    {
      const Pattern *pattern = g_ptr_array_index (list, i);

      if (skip_ported && pattern->port != 0)
        continue;
      if (match_one (pattern, host, host_len, is_ip, star_covers_ip))
        return pattern;
    }
  return NULL;
}

/**
 * paddock_domain_rules_check_host:
 * @host: a host as it came from the request (normalised here)
 * @out_rule: (out) (optional): the rule that decided, for records and 403s
 *
 * Deny patterns are checked first and win; then allow patterns; a host no
 * pattern names is denied (the policy is an allow-list). Ports are not
 * judged: an allow rule for any port allows the host, and only deny rules
 * without a port deny it (paddock_domain_rules_check_target() judges both).
 */
PaddockRuleVerdict
paddock_domain_rules_check_host (PaddockDomainRules  *self,
                                 const char          *host,
                                 char               **out_rule)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *name = NULL;
  const Pattern *pattern;
  gboolean is_ip = FALSE;

  g_return_val_if_fail (PADDOCK_IS_DOMAIN_RULES (self), PADDOCK_RULE_VERDICT_INVALID);
  g_return_val_if_fail (host != NULL, PADDOCK_RULE_VERDICT_INVALID);

  name = paddock_domain_rules_normalize_host (host, &is_ip, &error);
  if (name == NULL)
    {
      if (out_rule != NULL)
        *out_rule = g_strdup (error->message);
      return PADDOCK_RULE_VERDICT_INVALID;
    }

  pattern = match (self->deny, name, is_ip, TRUE, TRUE);
  if (pattern != NULL)
    {
      if (out_rule != NULL)
        *out_rule = g_strdup_printf ("deny %s", pattern->text);
      return PADDOCK_RULE_VERDICT_DENY;
    }

  pattern = match (self->allow, name, is_ip, FALSE, FALSE);
  if (pattern != NULL)
    {
      if (out_rule != NULL)
        *out_rule = g_strdup_printf ("allow %s", pattern->text);
      return PADDOCK_RULE_VERDICT_ALLOW;
    }

  if (out_rule != NULL)
    *out_rule = g_strdup (is_ip ? "no allow rule lists this address literally"
                                : "no allow rule matches");
  return PADDOCK_RULE_VERDICT_DENY;
}

/**
 * paddock_domain_rules_check_target:
 * @host: a host as it came from the request (normalised here)
 * @port: the port asked for
 * @out_rule: (out) (optional): the rule that decided, for records and 403s
 *
 * What the proxy asks of every CONNECT, SOCKS5 request and forwarded
 * request: deny patterns naming the host (without a port, or with this
 * one) win; then an allow pattern naming the host must fit the port: its
 * own port, or for a pattern without one, the rule set's ports.
 *
 * Returns: %PADDOCK_RULE_VERDICT_ALLOW; %PADDOCK_RULE_VERDICT_DENY_PORT when
 *   an allow rule names the host but no rule allows @port; DENY or INVALID
 *   as paddock_domain_rules_check_host()
 */
PaddockRuleVerdict
paddock_domain_rules_check_target (PaddockDomainRules  *self,
                                   const char          *host,
                                   guint                port,
                                   char               **out_rule)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *name = NULL;
  const Pattern *pattern;
  gboolean is_ip = FALSE;
  gboolean host_named = FALSE;

  g_return_val_if_fail (PADDOCK_IS_DOMAIN_RULES (self), PADDOCK_RULE_VERDICT_INVALID);
  g_return_val_if_fail (host != NULL, PADDOCK_RULE_VERDICT_INVALID);

  name = paddock_domain_rules_normalize_host (host, &is_ip, &error);
  if (name == NULL)
    {
      if (out_rule != NULL)
        *out_rule = g_strdup (error->message);
      return PADDOCK_RULE_VERDICT_INVALID;
    }

  pattern = match_target (self->deny, name, is_ip, TRUE, port, TRUE, NULL);
  if (pattern != NULL)
    {
      if (out_rule != NULL)
        *out_rule = g_strdup_printf ("deny %s", pattern->text);
      return PADDOCK_RULE_VERDICT_DENY;
    }

  pattern = match_target (self->allow, name, is_ip, FALSE, port,
                          paddock_domain_rules_port_allowed (self, port), &host_named);
  if (pattern != NULL)
    {
      if (out_rule != NULL)
        *out_rule = g_strdup_printf ("allow %s", pattern->text);
      return PADDOCK_RULE_VERDICT_ALLOW;
    }

  if (host_named)
    {
      if (out_rule != NULL)
        *out_rule = g_strdup_printf ("port %u is not in the allowed ports of the rules naming %s",
                                     port, name);
      return PADDOCK_RULE_VERDICT_DENY_PORT;
    }
  if (out_rule != NULL)
    *out_rule = g_strdup (is_ip ? "no allow rule lists this address literally"
                                : "no allow rule matches");
  return PADDOCK_RULE_VERDICT_DENY;
}
