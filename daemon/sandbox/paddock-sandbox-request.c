/* paddock-sandbox-request.c — a spawn request's a{sv} read and checked
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One request message off a socket (paddock-fdpass.h) and a spawn's
 * members read into a SpawnRequest, checked in full: by pid 1, and again
 * by the spare supervisor it hands the message to.
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include "paddock-fdpass.h"
#include "paddock-sandbox-private.h"

void
spawn_request_clear (SpawnRequest *req)
{
  g_clear_pointer (&req->argv, g_strfreev);
  g_clear_pointer (&req->envp, g_strfreev);
  g_clear_pointer (&req->cwd, g_free);
}

/* A bytestring ("ay" with its one terminating NUL and no other) as a
 * string; NULL if VALUE is not one. */
static const char *
bytestring_of (GVariant *value)
{
  gsize len = 0;
  const char *data;

  if (value == NULL || !g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING))
    return NULL;
  data = g_variant_get_fixed_array (value, &len, sizeof (char));
  if (len == 0 || data[len - 1] != '\0' || memchr (data, '\0', len - 1) != NULL)
    return NULL;
  return data;
}

/* An "aay" of bytestrings, within MAX entries, as a GStrv; NULL if not. */
static char **
dup_bytestring_array (GVariant *value,
                      guint     max)
{
  g_autoptr(GPtrArray) strv = g_ptr_array_new_with_free_func (g_free);
  gsize n;

  if (value == NULL || !g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING_ARRAY))
    return NULL;
  n = g_variant_n_children (value);
  if (n > max)
    return NULL;
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) item = g_variant_get_child_value (value, i);
      const char *text = bytestring_of (item);

      if (text == NULL)
        return NULL;
      g_ptr_array_add (strv, g_strdup (text));
    }
  g_ptr_array_add (strv, NULL);
  g_ptr_array_set_free_func (strv, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&strv), FALSE);
}

/* Reads a spawn request's members into REQ (WORKSPACE is the default
 * cwd). On failure fills ERR and WHY (static text). */
gboolean
parse_spawn_request (const char   *workspace,
                     GVariant     *request,
                     GArray       *fds,
                     SpawnRequest *req,
                     int          *err,
                     const char  **why)
{
  g_autoptr(GVariant) argv = g_variant_lookup_value (request, PADDOCK_SANDBOX_KEY_ARGV, NULL);
  g_autoptr(GVariant) env = g_variant_lookup_value (request, PADDOCK_SANDBOX_KEY_ENV, NULL);
  g_autoptr(GVariant) cwd = g_variant_lookup_value (request, PADDOCK_SANDBOX_KEY_CWD, NULL);
  g_autoptr(GVariant) tty = g_variant_lookup_value (request, PADDOCK_SANDBOX_KEY_TTY, NULL);
  g_autoptr(GVariant) direct = g_variant_lookup_value (request, PADDOCK_SANDBOX_KEY_DIRECT, NULL);
  guint n_fds = fds->len;

  *err = EINVAL;
  if (direct != NULL && !g_variant_is_of_type (direct, G_VARIANT_TYPE_BOOLEAN))
    {
      *why = "direct must be a boolean";
      return FALSE;
    }
  req->direct = direct != NULL && g_variant_get_boolean (direct);
  /* The channel is the last fd: known before anything can fail, so that
   * the failure goes there. */
  if (req->direct && n_fds == PADDOCK_SANDBOX_DIRECT_SPAWN_N_FDS)
    req->events_fd = g_array_index (fds, int, PADDOCK_SANDBOX_REQUEST_FD_EVENTS);
  req->argv = dup_bytestring_array (argv, MAX_ARGS);
  if (req->argv == NULL || req->argv[0] == NULL || req->argv[0][0] == '\0')
    {
      *why = "argv must be a non-empty array of bytestrings (aay, at most 4096)";
      return FALSE;
    }
  if (env == NULL)
    req->envp = g_new0 (char *, 1);
  else if ((req->envp = dup_bytestring_array (env, MAX_ENV)) == NULL)
    {
      *why = "env must be an array of K=V bytestrings (aay, at most 4096)";
      return FALSE;
    }
  req->path_env = DEFAULT_PATH;
  for (guint i = 0; req->envp[i] != NULL; i++)
    {
      if (strchr (req->envp[i], '=') == NULL || req->envp[i][0] == '=')
        {
          *why = "env entries must be K=V";
          return FALSE;
        }
      if (g_str_has_prefix (req->envp[i], "PATH="))
        req->path_env = req->envp[i] + 5;
    }
  if (cwd == NULL)
    req->cwd = g_strdup (workspace);
  else if (bytestring_of (cwd) == NULL || !g_path_is_absolute (bytestring_of (cwd)))
    {
      *why = "cwd must be an absolute path (a bytestring, ay)";
      return FALSE;
    }
  else
    req->cwd = g_strdup (bytestring_of (cwd));
  if (tty != NULL && !g_variant_is_of_type (tty, G_VARIANT_TYPE_BOOLEAN))
    {
      *why = "tty must be a boolean";
      return FALSE;
    }
  req->tty = tty != NULL && g_variant_get_boolean (tty);
  if (req->direct && req->tty)
    {
      *why = "direct is for commands without a terminal (its master comes from pid 1)";
      return FALSE;
    }
  if (req->direct)
    {
      if (n_fds != PADDOCK_SANDBOX_DIRECT_SPAWN_N_FDS)
        {
          *err = EBADF;
          *why = "a direct spawn carries exactly 4 fds (stdin, stdout, stderr, its event channel)";
          return FALSE;
        }
      return TRUE;
    }
  req->own_pty = req->tty && n_fds == 0;
  if (n_fds != PADDOCK_SANDBOX_SPAWN_N_FDS && !req->own_pty)
    {
      *err = EBADF;
      *why = "a spawn carries exactly 3 fds (stdin, stdout, stderr), or none with tty";
      return FALSE;
    }
  return TRUE;
}

/* Receives one request message on FD into BUF (MAX_REQUEST_BYTES),
 * appending the fds it carries (at most MAX_RECV_FDS, CLOEXEC: they must
 * not leak into anything we exec) to FDS. Returns what recvmsg() did, or
 * -1 with EMSGSIZE (larger than MAX_REQUEST_BYTES) or ETOOMANYREFS (more
 * than MAX_RECV_FDS fds), every fd it brought closed (paddock-fdpass.h). */
ssize_t
recv_request (int     fd,
              int     flags,
              char   *buf,
              GArray *fds)
{
  int got[MAX_RECV_FDS];
  size_t n_got = 0;
  ssize_t n = paddock_fdpass_recv (fd, buf, MAX_REQUEST_BYTES, got, G_N_ELEMENTS (got), &n_got, flags);

  if (n >= 0)
    g_array_append_vals (fds, got, (guint) n_got);
  return n;
}

/* The first LEN bytes of BUF as an a{sv}, copied into memory GVariant
 * aligns itself; NULL unless in normal form, so that nothing reading its
 * members meets a non-normal serialization. */
GVariant *
request_from_buf (const char *buf,
                  gsize       len)
{
  g_autoptr(GBytes) bytes = g_bytes_new (buf, len);
  g_autoptr(GVariant) request =
    g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE_VARDICT, bytes, FALSE));

  return g_variant_is_normal_form (request) ? g_steal_pointer (&request) : NULL;
}
