/* paddock-process-tree.c — a host session's processes, from one walk of /proc
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Without a cgroup, a host session's processes are those of the process
 * sessions it leads (the agent's, each command's: setsid at spawn) and
 * every descendant of its keepers (daemon/keeper/): a process that left
 * its process session by setsid() or a double fork is still below its
 * keeper, a child subreaper. Both in one walk of the process table
 * (daemon/compat/paddock-compat-proc.c: /proc on Linux).
 */

#include "config.h"

#include "paddock-process-tree.h"

#include "paddock-compat-proc.h"

/* The pids (a new array) of every live process (no zombie: nothing left
 * to stop) whose process session is one of SIDS (GINT_TO_POINTER keys; 0
 * ignored) or that descends from one of ROOTS (the roots themselves not
 * included). ROOTS must be unreaped children of the caller, whose pids
 * cannot name another process meanwhile. In OUT_WATCHED_SEEN, whether
 * WATCHED_SID had a live member.
 *
 * Where the process table cannot be read (the compat point's fallback,
 * paddock_compat_proc_supported() FALSE) the list is empty and
 * OUT_WATCHED_SEEN FALSE: no pid is guessed, so nothing is signalled by a
 * pid that was never seen. A caller must not take that emptiness for an
 * ended tree there (the keeper, which ends the tree itself, is Linux's
 * too: docs/PORTING.md). */
GArray *
paddock_process_tree_list (GHashTable   *sids,
                           const pid_t  *roots,
                           guint         n_roots,
                           pid_t         watched_sid,
                           gboolean     *out_watched_seen)
{
  GArray *pids = g_array_new (FALSE, FALSE, sizeof (pid_t));
  g_autoptr(GHashTable) children = NULL;   /* ppid → GArray of live pids */
  g_autoptr(GHashTable) chosen = g_hash_table_new (NULL, NULL);
  g_autoptr(GArray) queue = g_array_new (FALSE, FALSE, sizeof (pid_t));
  g_autoptr(GHashTable) visited = g_hash_table_new (NULL, NULL);
  g_autoptr(GArray) table = NULL;

  *out_watched_seen = FALSE;
  g_hash_table_remove (sids, GINT_TO_POINTER (0));
  if (g_hash_table_size (sids) == 0 && n_roots == 0)
    return pids;

  children = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_array_unref);
  table = paddock_compat_proc_list_pids (NULL);
  for (guint t = 0; table != NULL && t < table->len; t++)
    {
      guint32 number = g_array_index (table, guint32, t);
      PaddockProcStat stat;
      pid_t pid;

      if (!paddock_compat_proc_read_stat (number, FALSE, &stat))
        continue;
      pid = (pid_t) number;
      /* A zombie has exited, but its children are still below it until it
       * is reaped: walked through, not counted. */
      if (n_roots > 0)
        {
          GArray *siblings = g_hash_table_lookup (children, GUINT_TO_POINTER (stat.ppid));

          if (siblings == NULL)
            {
              siblings = g_array_new (FALSE, FALSE, sizeof (pid_t));
              g_hash_table_insert (children, GUINT_TO_POINTER (stat.ppid), siblings);
            }
          g_array_append_val (siblings, pid);
        }
      if (stat.state == 'Z' || stat.state == 'X')
        {
          g_hash_table_add (chosen, GINT_TO_POINTER (-pid));  /* seen, never listed */
          continue;
        }
      if (stat.session > 0 && g_hash_table_contains (sids, GINT_TO_POINTER (stat.session)))
        {
          g_hash_table_add (chosen, GINT_TO_POINTER (pid));
          *out_watched_seen = *out_watched_seen || stat.session == watched_sid;
        }
    }

  for (guint i = 0; i < n_roots; i++)
    g_array_append_val (queue, roots[i]);
  for (guint head = 0; head < queue->len; head++)
    {
      GArray *below = g_hash_table_lookup (children, GUINT_TO_POINTER ((guint) g_array_index (queue, pid_t, head)));

      for (guint i = 0; below != NULL && i < below->len; i++)
        {
          pid_t child = g_array_index (below, pid_t, i);

          /* Read once each, so one parent each; but a pid reused during
           * the walk could close a loop. */
          if (!g_hash_table_add (visited, GINT_TO_POINTER (child)))
            continue;
          g_array_append_val (queue, child);
          if (!g_hash_table_contains (chosen, GINT_TO_POINTER (-child)))
            g_hash_table_add (chosen, GINT_TO_POINTER (child));
        }
    }

  {
    GHashTableIter iter;
    gpointer key;

    g_hash_table_iter_init (&iter, chosen);
    while (g_hash_table_iter_next (&iter, &key, NULL))
      if (GPOINTER_TO_INT (key) > 0)
        {
          pid_t found = GPOINTER_TO_INT (key);
          g_array_append_val (pids, found);
        }
  }
  return pids;
}
