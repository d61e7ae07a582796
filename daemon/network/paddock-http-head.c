/* paddock-http-head.c — pure helpers for HTTP/1.x heads (no I/O, no GIO)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * What the proxy decides about a request head before and around libsoup's
 * field parser: where the head ends, how many lines it has, the CONNECT
 * authority, Content-Length, which fields are hop-by-hop. They take bytes
 * and give answers, with no socket or main loop anywhere, so that they are
 * unit-tested and fuzzed alone (tests/fuzz/fuzz-http-head.c): every byte
 * they see comes from a sandboxed program.
 */

#include "config.h"

#include <string.h>

#include "paddock-http-head.h"

/**
 * paddock_http_find_head_end:
 * @from: where to start looking (a caller that read more may skip what it
 *   searched already, less the two bytes an end may straddle)
 *
 * Returns: the index just past the empty line that ends the head
 *   ("\r\n\r\n", or the bare "\n\n" some clients send), or 0 if it is not
 *   in @data yet
 */
gsize
paddock_http_find_head_end (const guint8 *data,
                            gsize         len,
                            gsize         from)
{
  for (gsize i = from; i < len; i++)
    {
      if (data[i] != '\n')
        continue;
      if (i + 1 < len && data[i + 1] == '\n')
        return i + 2;
      if (i + 2 < len && data[i + 1] == '\r' && data[i + 2] == '\n')
        return i + 3;
    }
  return 0;
}

/* Line feeds in @data: bounds the field count before any parser runs. */
gsize
paddock_http_count_lines (const guint8 *data,
                          gsize         len)
{
  gsize lines = 0;

  for (gsize i = 0; i < len; i++)
    if (data[i] == '\n')
      lines++;
  return lines;
}

/**
 * paddock_http_parse_authority:
 * @authority: "host:port" with a mandatory port, IPv6 in brackets
 * @out_host: (out): the host as written (brackets kept)
 * @out_port: (out): 1…65535
 */
gboolean
paddock_http_parse_authority (const char  *authority,
                              char       **out_host,
                              guint       *out_port)
{
  const char *colon;
  guint64 port;
  char *end = NULL;

  if (authority[0] == '[')
    {
      const char *close = strchr (authority, ']');

      if (close == NULL || close[1] != ':')
        return FALSE;
      colon = close + 1;
    }
  else
    {
      colon = strrchr (authority, ':');
      if (colon == NULL || memchr (authority, ':', (gsize) (colon - authority)) != NULL)
        return FALSE;
    }

  if (colon == authority || !g_ascii_isdigit (colon[1]) || strlen (colon + 1) > 5)
    return FALSE;
  port = g_ascii_strtoull (colon + 1, &end, 10);
  if (*end != '\0' || port == 0 || port > 65535)
    return FALSE;

  *out_host = g_strndup (authority, (gsize) (colon - authority));
  *out_port = (guint) port;
  return TRUE;
}

/* Digits only (no sign, no spaces, no list: two lengths are a smuggling
 * shape, not a choice), and no overflow. */
gboolean
paddock_http_parse_content_length (const char *text,
                                   guint64    *out_length)
{
  guint64 value = 0;

  if (text == NULL || *text == '\0')
    return FALSE;
  for (const char *p = text; *p != '\0'; p++)
    {
      if (!g_ascii_isdigit (*p) || value > (G_MAXINT64 - 9) / 10)
        return FALSE;
      value = value * 10 + (guint64) (*p - '0');
    }
  *out_length = value;
  return TRUE;
}

/* No CR or LF: a value that has one would start a new field (or a new
 * request) when written out again. */
gboolean
paddock_http_field_is_clean (const char *text)
{
  for (const char *p = text; *p != '\0'; p++)
    if (*p == '\r' || *p == '\n')
      return FALSE;
  return TRUE;
}

static gboolean
is_white (char c)
{
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/**
 * paddock_http_list_contains:
 * @list: a comma-separated field value ("keep-alive, Upgrade")
 * @token: a token, compared case-insensitively
 *
 * The same reading as libsoup's soup_header_contains() (items trimmed,
 * empty items skipped, commas inside quoted strings not splitting), so
 * that the fields the proxy drops are the ones libsoup would name.
 */
gboolean
paddock_http_list_contains (const char *list,
                            const char *token)
{
  gsize token_len = strlen (token);
  const char *p = list;

  for (;;)
    {
      const char *start, *end;
      gboolean quoted = FALSE;

      while (is_white (*p) || *p == ',')
        p++;
      if (*p == '\0')
        return FALSE;
      start = p;
      while (*p != '\0')
        {
          if (*p == '"')
            quoted = !quoted;
          else if (quoted)
            {
              if (*p == '\\' && p[1] != '\0')
                p++;
            }
          else if (*p == ',')
            break;
          p++;
        }
      end = p;
      while (end > start && is_white (end[-1]))
        end--;
      if ((gsize) (end - start) == token_len && g_ascii_strncasecmp (start, token, token_len) == 0)
        return TRUE;
    }
}

/**
 * paddock_http_is_hop_by_hop:
 * @connection_header: (nullable): the request's Connection field
 *
 * Hop-by-hop fields (RFC 9110 §7.6.1) and the proxy's own: they describe
 * the client↔proxy connection, not the request. Transfer-Encoding stays,
 * because the body is passed on in the framing the client chose.
 */
gboolean
paddock_http_is_hop_by_hop (const char *name,
                            const char *connection_header)
{
  static const char * const fields[] = {
    "Connection", "Keep-Alive", "TE", "Trailer", "Upgrade", "Host", "Via",
  };

  if (g_ascii_strncasecmp (name, "Proxy-", 6) == 0)
    return TRUE;
  for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
    if (g_ascii_strcasecmp (name, fields[i]) == 0)
      return TRUE;
  /* …and whatever the client's Connection field names. */
  return connection_header != NULL && paddock_http_list_contains (connection_header, name);
}
