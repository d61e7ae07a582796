/* test-spare-options.c — the message that carries a session's options to a
 * sandbox made ahead: what is sent is what pid 1 reads, and what is not
 * that message is refused, never read as options.
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "paddock-spare-options.h"

static void
socket_pair (int pair[2])
{
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), ==, 0);
}

/* Sends TEXT with FD (or none when -1) as one message. */
static void
send_raw (int         socket_fd,
          const char *text,
          int         fd)
{
  union {
    struct cmsghdr align;
    char space[CMSG_SPACE (sizeof (int))];
  } control;
  struct iovec iov = { .iov_base = (void *) text, .iov_len = strlen (text) };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

  if (fd >= 0)
    {
      struct cmsghdr *header;

      msg.msg_control = control.space;
      msg.msg_controllen = sizeof control.space;
      header = CMSG_FIRSTHDR (&msg);
      header->cmsg_level = SOL_SOCKET;
      header->cmsg_type = SCM_RIGHTS;
      header->cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (header), &fd, sizeof (int));
    }
  g_assert_cmpint (sendmsg (socket_fd, &msg, 0), ==, (gssize) strlen (text));
}

/* A memfd holding LENGTH bytes of DATA, sealed with SEALS (0: none). */
static int
memfd_with (const char *data,
            gsize       length,
            int         seals)
{
  int fd = memfd_create ("test", MFD_CLOEXEC | MFD_ALLOW_SEALING);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, data, length), ==, (gssize) length);
  if (seals != 0)
    g_assert_cmpint (fcntl (fd, F_ADD_SEALS, seals), ==, 0);
  return fd;
}

static void
test_round_trip (void)
{
  const char *const args[] = { "--workspace", "/tmp/a b", "--expose", "--net", "--", "sh", "-c", "echo x", "", NULL };
  g_autoptr(GPtrArray) received = NULL;
  g_autofree char *block = NULL;
  const char *what = NULL;
  int pair[2];

  socket_pair (pair);
  g_assert_cmpint (paddock_spare_options_send (pair[0], args), ==, 0);
  g_assert_cmpint (paddock_spare_options_receive (pair[1], &block, &received, &what), ==, 0);
  g_assert_null (what);
  /* argv[0], then every option as sent (an empty one too), then NULL. */
  g_assert_cmpuint (received->len, ==, G_N_ELEMENTS (args) + 1);
  g_assert_cmpstr (g_ptr_array_index (received, 0), ==, "paddock-sandbox");
  for (guint i = 0; args[i] != NULL; i++)
    g_assert_cmpstr (g_ptr_array_index (received, i + 1), ==, args[i]);
  g_assert_null (g_ptr_array_index (received, received->len - 1));

  /* The daemon letting go is EOF, not an error. */
  close (pair[0]);
  g_assert_cmpint (paddock_spare_options_receive (pair[1], &block, &received, &what), ==, -1);
  close (pair[1]);
}

static void
test_refused (void)
{
  const int all_seals = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;
  struct {
    const char *why;
    const char *tag;
    const char *data;
    gsize length;
    int seals;   /* -1: no fd at all */
  } cases[] = {
    { "no fd", "session", NULL, 0, -1 },
    { "another word", "sessions", "a\0", 2, all_seals },
    { "a memfd that can still change", "session", "a\0", 2, F_SEAL_SHRINK | F_SEAL_GROW },
    { "an empty memfd", "session", "", 0, all_seals },
    { "options not ending with a NUL", "session", "a\0b", 3, all_seals },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GPtrArray) received = NULL;
      g_autofree char *block = NULL;
      const char *what = NULL;
      int pair[2];
      int fd = cases[i].seals >= 0 ? memfd_with (cases[i].data, cases[i].length, cases[i].seals) : -1;

      g_test_message ("%s", cases[i].why);
      socket_pair (pair);
      send_raw (pair[0], cases[i].tag, fd);
      g_assert_cmpint (paddock_spare_options_receive (pair[1], &block, &received, &what), ==, EINVAL);
      g_assert_null (received);
      g_assert_null (block);
      g_assert_nonnull (what);
      if (fd >= 0)
        close (fd);
      close (pair[0]);
      close (pair[1]);
    }
}

/* The pure parser alone (paddock-spare-options-parse.c): what a block
 * holds is read as the arguments it holds, in order, pointing into it;
 * anything else is refused with a reason and no arguments. */
static void
test_parse (void)
{
  static const char block[] = "--workspace\0/w\0\0--\0sh\0";
  g_autoptr(GPtrArray) args = NULL;
  g_autofree char *many = NULL;
  const char *what = "unset";

  /* sizeof - 1: the literal's own last NUL is not part of the block. */
  g_assert_true (paddock_spare_options_parse (block, sizeof block - 1, &args, &what));
  g_assert_null (what);
  g_assert_cmpuint (args->len, ==, 7);
  g_assert_cmpstr (g_ptr_array_index (args, 0), ==, "paddock-sandbox");
  g_assert_cmpstr (g_ptr_array_index (args, 1), ==, "--workspace");
  g_assert_cmpstr (g_ptr_array_index (args, 2), ==, "/w");
  g_assert_cmpstr (g_ptr_array_index (args, 3), ==, "");
  g_assert_cmpstr (g_ptr_array_index (args, 4), ==, "--");
  g_assert_cmpstr (g_ptr_array_index (args, 5), ==, "sh");
  g_assert_null (g_ptr_array_index (args, 6));
  /* Not copied: the arguments are BLOCK's own bytes. */
  g_assert_true ((const char *) g_ptr_array_index (args, 2) == block + 12);
  g_clear_pointer (&args, g_ptr_array_unref);

  /* One empty argument is a block of one NUL. */
  g_assert_true (paddock_spare_options_parse ("", 1, &args, &what));
  g_assert_cmpuint (args->len, ==, 3);
  g_assert_cmpstr (g_ptr_array_index (args, 1), ==, "");
  g_clear_pointer (&args, g_ptr_array_unref);

  what = NULL;
  g_assert_false (paddock_spare_options_parse ("", 0, &args, &what));
  g_assert_nonnull (what);
  g_assert_null (args);
  what = NULL;
  g_assert_false (paddock_spare_options_parse ("a\0b", 3, &args, &what));
  g_assert_nonnull (what);
  g_assert_null (args);
  what = NULL;
  g_assert_false (paddock_spare_options_parse ("a", PADDOCK_SPARE_OPTIONS_MAX_BYTES + 1, &args, &what));
  g_assert_nonnull (what);
  g_assert_null (args);

  /* At most PADDOCK_SPARE_OPTIONS_MAX_ARGS arguments: that many pass, one
   * more is refused. */
  many = g_malloc0 (PADDOCK_SPARE_OPTIONS_MAX_ARGS + 1);
  g_assert_true (paddock_spare_options_parse (many, PADDOCK_SPARE_OPTIONS_MAX_ARGS, &args, &what));
  g_assert_cmpuint (args->len, ==, PADDOCK_SPARE_OPTIONS_MAX_ARGS + 2);
  g_clear_pointer (&args, g_ptr_array_unref);
  what = NULL;
  g_assert_false (paddock_spare_options_parse (many, PADDOCK_SPARE_OPTIONS_MAX_ARGS + 1, &args, &what));
  g_assert_nonnull (what);
  g_assert_null (args);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/spare-options/round-trip", test_round_trip);
  g_test_add_func ("/spare-options/refused", test_refused);
  g_test_add_func ("/spare-options/parse", test_parse);
  return g_test_run ();
}
