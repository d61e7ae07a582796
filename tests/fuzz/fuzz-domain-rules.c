/* fuzz-domain-rules.c — fuzz target: allow/deny patterns and the hosts judged by them (paddock-domain-rules.c)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Lines of the input: those before an empty line are patterns ("!" first:
 * deny), as a CreateSession or SetNetworkPolicy caller sends them; those
 * after are "host port" targets, as a sandboxed client asks for them.
 * Besides not crashing: a host that normalises must normalise to itself
 * again (one destination, one spelling), and a target allowed with a port
 * must have its host allowed.
 */

#include "config.h"

#include <stdint.h>
#include <string.h>

#include "paddock-domain-rules.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(PaddockDomainRules) rules = paddock_domain_rules_new ();
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  gboolean targets = FALSE;

  if (size > 4096)
    return 0;
  text = g_strndup ((const char *) data, size);
  lines = g_strsplit (text, "\n", 64);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *line = lines[i];

      if (!targets && line[0] == '\0')
        {
          targets = TRUE;
          continue;
        }
      if (!targets)
        {
          g_autoptr(GError) error = NULL;
          gboolean ok = line[0] == '!' ? paddock_domain_rules_add_deny (rules, line + 1, &error)
                                       : paddock_domain_rules_add_allow (rules, line, &error);

          g_assert_true (ok == (error == NULL));
          continue;
        }

      {
        const char *space = strrchr (line, ' ');
        g_autofree char *host = space ? g_strndup (line, (gsize) (space - line)) : g_strdup (line);
        guint port = space ? (guint) g_ascii_strtoull (space + 1, NULL, 10) : 443;
        g_autofree char *normal = paddock_domain_rules_normalize_host (host, NULL, NULL);
        g_autofree char *rule = NULL;
        PaddockRuleVerdict verdict;

        if (normal != NULL)
          {
            g_autofree char *again = paddock_domain_rules_normalize_host (normal, NULL, NULL);

            g_assert_cmpstr (again, ==, normal);
          }
        verdict = paddock_domain_rules_check_target (rules, host, port, &rule);
        g_assert_nonnull (rule);
        if (verdict == PADDOCK_RULE_VERDICT_ALLOW)
          g_assert_cmpint (paddock_domain_rules_check_host (rules, host, NULL), ==,
                           PADDOCK_RULE_VERDICT_ALLOW);
      }
    }
  return 0;
}
