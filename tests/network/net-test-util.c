/* net-test-util.c — what the network unit tests share
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include "net-test-util.h"

/* The fds this process holds now: a test compares the count before and
 * after, so that a leaked socket, pipe or eventfd fails it. */
guint
net_test_count_fds (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  guint n = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    n++;
  /* The directory's own fd. */
  return n - 1;
}
