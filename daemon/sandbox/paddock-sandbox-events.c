/* paddock-sandbox-events.c — events out as JSON lines, and failures on stderr
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The helper's output: async-signal-safe die_*() lines on stderr, and the
 * daemon's events, one JSON line per message, built in a LineBuf (no
 * malloc) and sent with fds through paddock-fdpass.h.
 */

#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "paddock-fdpass.h"
#include "paddock-sandbox-private.h"

static void
put_str (const char *s)
{
  size_t len = strlen (s);

  while (len > 0)
    {
      ssize_t n = write (STDERR_FILENO, s, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return;
      s += n;
      len -= (size_t) n;
    }
}

/* strerrordesc_np() returns a static English string without touching the
 * locale, which strerror() may: fine between clone and exec. */
G_NORETURN void
die_errno (int         code,
           const char *what,
           const char *path,
           int         err)
{
  put_str ("paddock-sandbox: ");
  put_str (what);
  if (path != NULL)
    {
      put_str (" ");
      put_str (path);
    }
  put_str (": ");
  put_str (strerrordesc_np (err) ? strerrordesc_np (err) : "unknown error");
  put_str ("\n");
  _exit (code);
}

G_NORETURN void
die_msg (int         code,
         const char *what,
         const char *path)
{
  put_str ("paddock-sandbox: ");
  put_str (what);
  if (path != NULL)
    {
      put_str (" ");
      put_str (path);
    }
  put_str ("\n");
  _exit (code);
}

void
line_add (LineBuf    *line,
          const char *s)
{
  size_t n = strlen (s);

  if (line->len + n < sizeof line->buf)
    {
      memcpy (line->buf + line->len, s, n);
      line->len += n;
    }
}

/* @s inside a JSON string: quotes, backslashes and control bytes escaped. */
void
line_add_json (LineBuf    *line,
               const char *s)
{
  static const char hex[] = "0123456789abcdef";

  for (const unsigned char *p = (const unsigned char *) s; *p != '\0'; p++)
    {
      char esc[7] = { '\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15], '\0' };
      char one[3] = { '\\', (char) *p, '\0' };

      if (*p < 0x20)
        line_add (line, esc);
      else if (*p == '"' || *p == '\\')
        line_add (line, one);
      else
        line_add (line, one + 1);
    }
}

void
line_add_int (LineBuf *line,
              long     v)
{
  char tmp[24];
  size_t i = sizeof tmp;
  gboolean neg = v < 0;
  unsigned long u = neg ? (unsigned long) -v : (unsigned long) v;

  tmp[--i] = '\0';
  do
    {
      tmp[--i] = (char) ('0' + u % 10);
      u /= 10;
    }
  while (u > 0 && i > 1);
  if (neg)
    tmp[--i] = '-';
  line_add (line, tmp + i);
}

/* One event per message. MSG_NOSIGNAL: a daemon that went away must not kill
 * pid 1 with SIGPIPE (that would take the session down with it). */
void
send_event (int            fd,
            const LineBuf *line)
{
  if (fd < 0)
    return;
  while (send (fd, line->buf, line->len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
    {
      if (errno == EINTR)
        continue;
      if (errno == ENOTSOCK)
        {
          /* A pipe: SIGPIPE is ignored in pid 1, so EPIPE just returns. */
          while (write (fd, line->buf, line->len) < 0 && errno == EINTR)
            ;
        }
      return;
    }
}

/* One message of LEN bytes on the socket FD with N_FDS (1 to 4) fds
 * attached as SCM_RIGHTS, never blocking nor raising SIGPIPE. Returns what
 * sendmsg() did. */
ssize_t
send_with_fds (int         fd,
               const void *data,
               gsize       len,
               const int  *pass_fds,
               guint       n_fds)
{
  g_assert (n_fds >= 1 && n_fds <= PADDOCK_SANDBOX_DIRECT_SPAWN_N_FDS);
  return paddock_fdpass_send (fd, data, len, pass_fds, n_fds, MSG_DONTWAIT);
}

/* send_event(), with FD (if not -1) attached as SCM_RIGHTS. */
void
send_event_with_fd (int            fd,
                    const LineBuf *line,
                    int            pass_fd)
{
  if (pass_fd < 0 || fd < 0)
    send_event (fd, line);
  else
    send_with_fds (fd, line->buf, line->len, &pass_fd, 1);
}

int
status_to_code (int status)
{
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return 255;
}

void
send_text (int         fd,
           const char *text,
           size_t      len)
{
  LineBuf line;

  /* send_event's retry rules, for longer lines. */
  if (len < sizeof line.buf)
    {
      memcpy (line.buf, text, len);
      line.len = len;
      send_event (fd, &line);
      return;
    }
  while (send (fd, text, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno == EINTR)
    ;
}

void
append_json_string (GString    *out,
                    const char *s)
{
  g_string_append_c (out, '"');
  for (; *s != '\0'; s++)
    {
      guchar c = (guchar) *s;

      if (c == '"' || c == '\\')
        g_string_append_printf (out, "\\%c", c);
      else if (c < 0x20)
        g_string_append_printf (out, "\\u%04x", c);
      else
        g_string_append_c (out, (char) c);
    }
  g_string_append_c (out, '"');
}

/* The errno's name as the kernel's headers spell it ("EACCES"), what the
 * evidence must say; "success" for 0. Not async-signal-safe: pid 1's. */
void
line_add_errno (LineBuf *line,
                int      e)
{
  const char *name = e == 0 ? "success" : strerrorname_np (e);

  if (name != NULL)
    line_add (line, name);
  else
    {
      line_add (line, "errno ");
      line_add_int (line, e);
    }
}
