/* peers-floor-start.c — the floor under `paddockctl create --attach`: a bus login, one call, then the sandbox
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   peers-floor-start CMD...
 *
 * The least a client of the daemon can do before a sandbox prints, in one
 * process and with nothing but libc (no GLib, no GIO: their dynamic
 * linking and set-up are part of what paddockctl costs, not of the
 * floor): connect to $DBUS_SESSION_BUS_ADDRESS (unix:path= or
 * unix:abstract=), the EXTERNAL auth exchange, Hello, one method call to
 * the daemon (org.freedesktop.DBus.Peer.Ping on org.paddock.Daemon,
 * answered by GDBus in the daemon without any of Paddock's code), then
 * exec CMD: bench-peers.sh gives it `unshare -Urmpf --mount-proc sh -c
 * 'echo hi'`, the kernel's own namespaces with nothing of a session.
 * Timed by peers-clock to the first "hi", it is the same work as
 * create --attach minus what Paddock adds: the start floor of issue #23.
 *
 * Messages are marshalled by hand, little-endian, as the D-Bus
 * specification lays them out; only what these two calls need.
 */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define BUFFER_BYTES 4096

static void __attribute__ ((noreturn))
fail (const char *what)
{
  fprintf (stderr, "peers-floor-start: %s%s%s\n", what, errno ? ": " : "", errno ? strerror (errno) : "");
  exit (1);
}

typedef struct
{
  unsigned char data[BUFFER_BYTES];
  size_t        len;
} Buffer;

static void
put (Buffer     *b,
     const void *bytes,
     size_t      n)
{
  if (b->len + n > sizeof b->data)
    fail ("message too long");
  memcpy (b->data + b->len, bytes, n);
  b->len += n;
}

static void
align (Buffer *b,
       size_t  to)
{
  static const unsigned char zeros[8];

  put (b, zeros, (to - b->len % to) % to);
}

static void
put_u32 (Buffer   *b,
         uint32_t  v)
{
  align (b, 4);
  put (b, &v, 4);   /* little-endian machine: the header says 'l' */
}

/* A header field (code, variant of type s or o, its string). */
static void
put_field (Buffer     *b,
           char        code,
           char        type,
           const char *value)
{
  unsigned char signature[3] = { 1, (unsigned char) type, 0 };

  align (b, 8);
  put (b, &code, 1);
  put (b, signature, 3);
  put_u32 (b, (uint32_t) strlen (value));
  put (b, value, strlen (value) + 1);
}

/* A method call with no body. */
static void
method_call (Buffer     *b,
             uint32_t    serial,
             const char *destination,
             const char *path,
             const char *interface,
             const char *member)
{
  static const unsigned char fixed[4] = { 'l', 1 /* METHOD_CALL */, 0, 1 };
  size_t fields_len_at;
  uint32_t fields_len;

  b->len = 0;
  put (b, fixed, 4);
  put_u32 (b, 0);          /* body length */
  put_u32 (b, serial);
  fields_len_at = b->len;
  put_u32 (b, 0);          /* the fields' length, filled in below */
  put_field (b, 1, 'o', path);
  put_field (b, 2, 's', interface);
  put_field (b, 3, 's', member);
  put_field (b, 6, 's', destination);
  fields_len = (uint32_t) (b->len - fields_len_at - 4);
  memcpy (b->data + fields_len_at, &fields_len, 4);
  align (b, 8);
}

static void
write_all (int         fd,
           const void *bytes,
           size_t      n)
{
  const char *p = bytes;

  while (n > 0)
    {
      ssize_t w = send (fd, p, n, MSG_NOSIGNAL);

      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        fail ("send");
      p += w;
      n -= (size_t) w;
    }
}

static void
read_exactly (int    fd,
              void  *bytes,
              size_t n)
{
  char *p = bytes;

  while (n > 0)
    {
      ssize_t r = recv (fd, p, n, 0);

      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        fail ("the bus closed the connection");
      p += r;
      n -= (size_t) r;
    }
}

/* Reads messages until the reply to @serial; fails on an error reply.
 * Signals (NameAcquired after Hello) are skipped. */
static void
await_reply (int      fd,
             uint32_t serial)
{
  for (;;)
    {
      unsigned char head[16];
      unsigned char rest[BUFFER_BYTES];
      uint32_t body_len;
      uint32_t fields_len;
      size_t total;
      size_t at;
      int type;
      uint32_t reply_serial = 0;

      read_exactly (fd, head, sizeof head);
      if (head[0] != 'l')
        fail ("a big-endian message from the bus");
      type = head[1];
      memcpy (&body_len, head + 4, 4);
      memcpy (&fields_len, head + 12, 4);
      total = ((16 + (size_t) fields_len + 7) & ~(size_t) 7) - 16 + body_len;
      if (total > sizeof rest)
        fail ("a message too long for the floor");
      read_exactly (fd, rest, total);

      /* The fields: (byte code, variant); the REPLY_SERIAL one (5, "u"). */
      at = 0;
      while (at + 4 <= fields_len)
        {
          unsigned char code = rest[at];
          unsigned char sig_len = rest[at + 1];
          char sig = (char) rest[at + 2];
          size_t value_at = at + 2 + sig_len + 1;

          if (sig == 'u')
            {
              value_at = (value_at + 16 + 3) / 4 * 4 - 16;
              if (code == 5)
                memcpy (&reply_serial, rest + value_at, 4);
              at = value_at + 4;
            }
          else if (sig == 's' || sig == 'o')
            {
              uint32_t len;

              value_at = (value_at + 16 + 3) / 4 * 4 - 16;
              memcpy (&len, rest + value_at, 4);
              at = value_at + 4 + len + 1;
            }
          else if (sig == 'g')
            at = value_at + 1 + rest[value_at] + 1;
          else
            fail ("a header field the floor does not read");
          at = (at + 16 + 7) / 8 * 8 - 16;
        }

      if ((type == 2 || type == 3) && reply_serial == serial)
        {
          if (type == 3)
            {
              errno = 0;
              fail ("the call was answered with an error");
            }
          return;
        }
    }
}

static int
connect_bus (void)
{
  const char *address = getenv ("DBUS_SESSION_BUS_ADDRESS");
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  socklen_t addr_len;
  const char *path;
  int fd;

  errno = 0;
  if (address == NULL)
    fail ("DBUS_SESSION_BUS_ADDRESS is not set");
  if (strncmp (address, "unix:path=", 10) == 0)
    {
      path = address + 10;
      if (strcspn (path, ",") >= sizeof addr.sun_path)
        fail ("the bus's path is too long");
      memcpy (addr.sun_path, path, strcspn (path, ","));
      addr_len = sizeof addr;
    }
  else if (strncmp (address, "unix:abstract=", 14) == 0)
    {
      path = address + 14;
      if (strcspn (path, ",") + 1 >= sizeof addr.sun_path)
        fail ("the bus's name is too long");
      memcpy (addr.sun_path + 1, path, strcspn (path, ","));
      addr_len = (socklen_t) (offsetof (struct sockaddr_un, sun_path) + 1 + strcspn (path, ","));
    }
  else
    fail ("only unix:path= and unix:abstract= bus addresses are read");

  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect (fd, (struct sockaddr *) &addr, addr_len) != 0)
    fail ("connect to the bus");
  return fd;
}

int
main (int   argc,
      char *argv[])
{
  char auth[64];
  char line[256];
  size_t got = 0;
  char uid[16];
  Buffer message;
  int fd;

  if (argc < 2)
    {
      fprintf (stderr, "usage: %s CMD...\n", argv[0]);
      return 2;
    }

  fd = connect_bus ();

  /* The EXTERNAL mechanism: a NUL byte, then our uid in hex of its
   * decimal digits, as GDBus sends it. */
  snprintf (uid, sizeof uid, "%u", (unsigned) getuid ());
  strcpy (auth, "AUTH EXTERNAL ");
  for (const char *p = uid; *p != '\0'; p++)
    snprintf (auth + strlen (auth), sizeof auth - strlen (auth), "%02x", (unsigned char) *p);
  strcat (auth, "\r\n");
  write_all (fd, "", 1);
  write_all (fd, auth, strlen (auth));
  while (got < 4 || memcmp (line + got - 2, "\r\n", 2) != 0)
    {
      ssize_t r = recv (fd, line + got, 1, 0);

      if (r <= 0 || ++got >= sizeof line)
        fail ("the bus's answer to AUTH");
    }
  if (strncmp (line, "OK ", 3) != 0)
    {
      errno = 0;
      fail ("the bus refused EXTERNAL");
    }
  write_all (fd, "BEGIN\r\n", 7);

  method_call (&message, 1, "org.freedesktop.DBus", "/org/freedesktop/DBus",
               "org.freedesktop.DBus", "Hello");
  write_all (fd, message.data, message.len);
  await_reply (fd, 1);

  method_call (&message, 2, "org.paddock.Daemon", "/org/paddock/Daemon",
               "org.freedesktop.DBus.Peer", "Ping");
  write_all (fd, message.data, message.len);
  await_reply (fd, 2);

  /* The connection is close-on-exec: the floor's client is done here. */
  execvp (argv[1], argv + 1);
  fail ("exec");
}
