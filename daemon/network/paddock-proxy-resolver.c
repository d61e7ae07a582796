/* paddock-proxy-resolver.c — from a connection's host to the addresses it connects to
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Names are resolved here (there is no resolver inside the session); what
 * a name resolved to is kept for NAME_CACHE_USEC (at most NAME_CACHE_MAX
 * names), so a burst of tunnels to one host costs one lookup, and every
 * answer, kept or fresh, is judged by address_is_reachable() when it is
 * used. The lookup takes the connection's GCancellable: closing the
 * connection cancels it.
 */

#include "config.h"

#include "paddock-proxy-private.h"

/* What a name resolved to, and until when that is used without asking
 * again. The addresses are judged (address_is_reachable) at each use, so
 * a cached answer is never trusted more than a fresh one. */
typedef struct
{
  GList  *addresses;  /* GInetAddress* */
  gint64  expires;
} CachedName;

static void
cached_name_free (gpointer data)
{
  CachedName *cached = data;

  g_resolver_free_addresses (cached->addresses);
  g_free (cached);
}
/* Which resolved addresses a name may lead to. A session's names resolve
 * in the daemon's network namespace, where 127.0.0.1 is the *host's*
 * loopback (other users' dev servers, the daemon's own forwarders) and
 * 169.254.169.254 is a cloud metadata service. A name that resolves there
 * (by accident or by DNS rebinding) must not become a way in; an IP literal
 * the policy lists explicitly, or the test resolver override, may. */
static gboolean
address_is_reachable (GInetAddress *address)
{
  return !(g_inet_address_get_is_loopback (address) ||
           g_inet_address_get_is_link_local (address) ||
           g_inet_address_get_is_any (address) ||
           g_inet_address_get_is_multicast (address));
}

static void
conn_use_addresses (Conn  *conn,
                    GList *addresses)
{
  gboolean refused = FALSE;

  for (GList *l = addresses; l != NULL; l = l->next)
    {
      GInetAddress *address = l->data;

      if (conn->trust_any_address || address_is_reachable (address))
        conn->addresses = g_list_append (conn->addresses, g_object_ref (address));
      else
        refused = TRUE;
    }

  if (conn->addresses == NULL)
    {
      g_autofree char *body = NULL;

      if (refused)
        {
          body = g_strdup_printf ("Paddock proxy: %s resolves only to loopback, link-local "
                                  "or multicast addresses, which are never reachable by name\n",
                                  conn->host);
          _paddock_proxy_conn_respond_error (conn, 403, PADDOCK_NET_VERDICT_DENIED, body);
        }
      else
        {
          body = g_strdup_printf ("Paddock proxy: %s has no address\n", conn->host);
          _paddock_proxy_conn_respond_error (conn, 502, PADDOCK_NET_VERDICT_ERROR, body);
        }
      return;
    }

  conn->next_address = conn->addresses;
  _paddock_proxy_conn_try_next_address (conn);
}

static void
resolve_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(Conn) conn = user_data;
  g_autoptr(GError) error = NULL;
  GList *addresses;

  addresses = g_resolver_lookup_by_name_finish (G_RESOLVER (source), result, &error);
  if (conn->closed)
    {
      g_resolver_free_addresses (addresses);
      return;
    }
  if (addresses == NULL)
    {
      g_autofree char *body = g_strdup_printf ("Paddock proxy: cannot resolve %s: %s\n",
                                               conn->host, error->message);
      _paddock_proxy_conn_respond_error (conn, 502, PADDOCK_NET_VERDICT_ERROR, body);
      return;
    }
  /* Kept for the next requests to the same name; bounded: expired ones
   * go first, then (still full) all of them. */
  {
    PaddockProxy *proxy = conn->proxy;
    CachedName *cached = g_new0 (CachedName, 1);
    gint64 now = g_get_monotonic_time ();

    if (g_hash_table_size (proxy->names) >= NAME_CACHE_MAX)
      {
        GHashTableIter iter;
        gpointer value;

        g_hash_table_iter_init (&iter, proxy->names);
        while (g_hash_table_iter_next (&iter, NULL, &value))
          if (((CachedName *) value)->expires <= now)
            g_hash_table_iter_remove (&iter);
        if (g_hash_table_size (proxy->names) >= NAME_CACHE_MAX)
          g_hash_table_remove_all (proxy->names);
      }
    cached->expires = now + NAME_CACHE_USEC;
    cached->addresses = g_list_copy_deep (addresses, (GCopyFunc) (void (*) (void)) g_object_ref, NULL);
    g_hash_table_replace (proxy->names, g_strdup (conn->host), cached);
  }
  conn_use_addresses (conn, addresses);
  g_resolver_free_addresses (addresses);
}

void
_paddock_proxy_conn_resolve (Conn *conn)
{
  PaddockProxy *proxy = conn->proxy;

  /* A kept connection to the same host and port needs neither a lookup
   * nor a connect. */
  if (conn->mode == MODE_FORWARD && conn->want_reuse && !conn->no_pool)
    {
      int fd = _paddock_proxy_pool_take (proxy, conn->host, conn->port);

      if (fd >= 0)
        {
          conn->origin = fd;
          conn->reused = TRUE;
          _paddock_proxy_conn_connected (conn);
          return;
        }
    }

  if (conn->host_is_ip)
    {
      g_autoptr(GInetAddress) address = g_inet_address_new_from_string (conn->host);
      GList single = { address, NULL, NULL };

      g_assert (address != NULL);
      /* Only a literal listing allows a literal (paddock-domain-rules.c). */
      conn->trust_any_address = TRUE;
      conn_use_addresses (conn, &single);
      return;
    }

  if (proxy->resolver_override != NULL)
    {
      const char *text = g_hash_table_lookup (proxy->resolver_override, conn->host);
      g_autoptr(GInetAddress) address = text ? g_inet_address_new_from_string (text) : NULL;
      GList single = { address, NULL, NULL };

      /* The override replaces the resolver entirely: a test never falls
       * through to real DNS. */
      if (address == NULL)
        {
          g_autofree char *body = g_strdup_printf ("Paddock proxy: cannot resolve %s "
                                                   "(resolver override)\n", conn->host);
          _paddock_proxy_conn_respond_error (conn, 502, PADDOCK_NET_VERDICT_ERROR, body);
          return;
        }
      conn->trust_any_address = TRUE;
      conn_use_addresses (conn, &single);
      return;
    }

  {
    CachedName *cached = g_hash_table_lookup (proxy->names, conn->host);

    if (cached != NULL && cached->expires > g_get_monotonic_time ())
      {
        conn_use_addresses (conn, cached->addresses);
        return;
      }
  }
  proxy->n_lookups++;
  g_resolver_lookup_by_name_async (proxy->resolver, conn->host, conn->cancellable,
                                   resolve_cb, _paddock_proxy_conn_ref (conn));
}

GHashTable *
_paddock_proxy_names_new (void)
{
  return g_hash_table_new_full (g_str_hash, g_str_equal, g_free, cached_name_free);
}
