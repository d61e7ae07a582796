/* fuzz-replay.c — runs a fuzz target without libFuzzer: its corpus, then mutations of it, as TAP
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   fuzz-replay-NAME [--tap] [--mutations=N] [--seed=S] PATH…
 *
 * Linked with one target's LLVMFuzzerTestOneInput() and built by the
 * normal compiler, so that `meson test --suite fuzz` replays every corpus
 * file (tests/fuzz/corpus/NAME/) on every build, and under the ASan build
 * checks each with the sanitizers too. Then it feeds N inputs mutated from
 * the corpus by a fixed-seed generator (bit flips, interesting bytes,
 * inserted, deleted and repeated ranges, splices of two inputs): not
 * coverage-guided like libFuzzer (make fuzz), but cheap, deterministic and
 * everywhere. Each input is passed in a buffer of exactly its size, so an
 * overread is a sanitizer error. FUZZ_REPLAY_LAST=FILE writes each input to
 * FILE before running it: after a crash, FILE is the input that crashed.
 */

#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#define REPLAY_MAX_INPUT (64 * 1024)

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static guint64 rng_state;

static guint64
rng_next (void)
{
  /* xorshift64*: deterministic for one seed, good enough to pick edits. */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ULL;
}

static gsize
rng_below (gsize n)
{
  return n == 0 ? 0 : (gsize) (rng_next () % n);
}

static const char *last_path;

static void
run_one (const guint8 *data,
         gsize         size)
{
  guint8 *copy = g_malloc (MAX (size, 1));

  memcpy (copy, data, size);
  if (last_path != NULL)
    g_file_set_contents (last_path, (const char *) data, (gssize) size, NULL);
  LLVMFuzzerTestOneInput (copy, size);
  g_free (copy);
}

static void
mutate (GByteArray *input,
        GPtrArray  *corpus)
{
  static const guint8 interesting[] = { 0, 1, 5, 0x7f, 0x80, 0xff, '\r', '\n', ':', ';', ' ',
                                        '0', '9', 'f', '[', ']', '.', '*', '!', '"', ',' };
  guint edits = 1 + (guint) rng_below (4);

  for (guint e = 0; e < edits; e++)
    {
      gsize len = input->len;

      switch (rng_below (7))
        {
        case 0:   /* flip a bit */
          if (len > 0)
            input->data[rng_below (len)] ^= (guint8) (1u << rng_below (8));
          break;
        case 1:   /* an interesting byte */
          if (len > 0)
            input->data[rng_below (len)] = interesting[rng_below (sizeof interesting)];
          break;
        case 2:   /* insert interesting bytes */
          {
            guint8 bytes[8];
            gsize n = 1 + rng_below (sizeof bytes);

            for (gsize i = 0; i < n; i++)
              bytes[i] = interesting[rng_below (sizeof interesting)];
            if (len + n <= REPLAY_MAX_INPUT)
              {
                gsize at = rng_below (len + 1);

                g_byte_array_set_size (input, (guint) (len + n));
                memmove (input->data + at + n, input->data + at, len - at);
                memcpy (input->data + at, bytes, n);
              }
          }
          break;
        case 3:   /* delete a range */
          if (len > 0)
            {
              gsize at = rng_below (len);

              g_byte_array_remove_range (input, (guint) at, (guint) (1 + rng_below (MIN (len - at, 64))));
            }
          break;
        case 4:   /* repeat a range */
          if (len > 0)
            {
              gsize at = rng_below (len);
              gsize n = 1 + rng_below (MIN (len - at, 256));
              guint times = 1 + (guint) rng_below (16);
              g_autofree guint8 *range = g_memdup2 (input->data + at, n);

              for (guint t = 0; t < times && input->len + n <= REPLAY_MAX_INPUT; t++)
                g_byte_array_append (input, range, (guint) n);
            }
          break;
        case 5:   /* splice another input's tail */
          {
            GBytes *other = g_ptr_array_index (corpus, rng_below (corpus->len));
            gsize other_len;
            const guint8 *other_data = g_bytes_get_data (other, &other_len);
            gsize cut = rng_below (len + 1);
            gsize from = rng_below (other_len + 1);

            g_byte_array_set_size (input, (guint) cut);
            g_byte_array_append (input, other_data + from, (guint) MIN (other_len - from, REPLAY_MAX_INPUT - cut));
          }
          break;
        default:  /* truncate */
          g_byte_array_set_size (input, (guint) rng_below (len + 1));
          break;
        }
    }
}

/* A file, or every file of a directory (sorted later, with the rest). */
static void
add_path (GPtrArray  *paths,
          const char *path)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
      const char *name;

      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        g_ptr_array_add (paths, g_build_filename (path, name, NULL));
    }
  else
    g_ptr_array_add (paths, g_strdup (path));
}

static int
compare_paths (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(char * const *) a, *(char * const *) b);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) corpus = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  guint64 mutations = 0, seed = 1;
  guint n = 0;

  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--tap") == 0)
        continue;
      if (g_str_has_prefix (argv[i], "--mutations="))
        mutations = g_ascii_strtoull (argv[i] + 12, NULL, 10);
      else if (g_str_has_prefix (argv[i], "--seed="))
        seed = g_ascii_strtoull (argv[i] + 7, NULL, 10);
      else
        add_path (paths, argv[i]);
    }
  g_ptr_array_sort (paths, compare_paths);
  last_path = g_getenv ("FUZZ_REPLAY_LAST");

  for (guint i = 0; i < paths->len; i++)
    {
      g_autoptr(GError) error = NULL;
      char *contents = NULL;
      gsize len = 0;

      if (!g_file_get_contents (g_ptr_array_index (paths, i), &contents, &len, &error))
        {
          printf ("Bail out! %s\n", error->message);
          return 1;
        }
      g_ptr_array_add (corpus, g_bytes_new_take (contents, MIN (len, REPLAY_MAX_INPUT)));
    }
  if (corpus->len == 0)
    {
      printf ("1..0 # SKIP no corpus files given\n");
      return 0;
    }

  printf ("1..%u\n", corpus->len + (mutations > 0 ? 1 : 0));
  for (guint i = 0; i < corpus->len; i++)
    {
      gsize len;
      const guint8 *data = g_bytes_get_data (g_ptr_array_index (corpus, i), &len);

      run_one (data, len);
      printf ("ok %u - %s\n", ++n, (const char *) g_ptr_array_index (paths, i));
      fflush (stdout);
    }

  if (mutations > 0)
    {
      rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
      for (guint64 m = 0; m < mutations; m++)
        {
          GBytes *base = g_ptr_array_index (corpus, rng_below (corpus->len));
          gsize len;
          const guint8 *data = g_bytes_get_data (base, &len);
          g_autoptr(GByteArray) input = g_byte_array_sized_new ((guint) len);

          g_byte_array_append (input, data, (guint) len);
          mutate (input, corpus);
          run_one (input->data, input->len);
        }
      printf ("ok %u - %" G_GUINT64_FORMAT " mutated inputs (seed %" G_GUINT64_FORMAT ")\n",
              ++n, mutations, seed);
    }
  return 0;
}
