/* fuzz-net-record.c — fuzz target: one line of a session's network journal (paddock-net-record.c)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The journal (network.jsonl in the session's state folder) is read back
 * at start-up one line at a time (paddock_net_record_new_from_line()). A torn or altered file must be
 * refused line by line, never crash the daemon; a record that loads must
 * say the same when written out and read again.
 */

#include "config.h"

#include <json-glib/json-glib.h>
#include <stdint.h>
#include <string.h>

#include "paddock-net-record.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(PaddockNetRecord) record = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  if (size > 64 * 1024)
    return 0;
  /* The loader splits the file at newlines and skips empty lines. */
  text = g_strndup ((const char *) data, size);
  if (strchr (text, '\n') != NULL || text[0] == '\0')
    return 0;
  record = paddock_net_record_new_from_line (text, &error);
  g_assert_true ((record == NULL) == (error != NULL));
  if (record != NULL)
    {
      g_autoptr(JsonNode) node = paddock_net_record_to_json (record);
      g_autoptr(PaddockNetRecord) again = paddock_net_record_new_from_json (node, NULL);

      g_assert_nonnull (again);
      g_assert_cmpstr (paddock_net_record_get_host (again), ==, paddock_net_record_get_host (record));
      g_assert_cmpuint (paddock_net_record_get_port (again), ==, paddock_net_record_get_port (record));
      g_assert_cmpint (paddock_net_record_get_verdict (again), ==, paddock_net_record_get_verdict (record));
      g_assert_cmpuint (paddock_net_record_get_bytes_up (again), ==, paddock_net_record_get_bytes_up (record));
    }
  return 0;
}
