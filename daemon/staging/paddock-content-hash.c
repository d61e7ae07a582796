/* paddock-content-hash.c — a file's content as one SHA-256, in time proportional to its data
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A review pins a file too large for it to keep (over
 * PADDOCK_REVIEW_MAX_BLOB_SIZE; smaller ones are pinned by the bytes it
 * kept, compared exactly by paddock_content_equal_fd()) by this digest,
 * and the apply checks what it wrote against that pin, so the two must
 * agree on the bytes whatever the files' layouts: the stage may hold a sparse file, the workspace's temporary a
 * dense copy of it (or the other way round). So the digest is not of the
 * raw bytes but of a canonical stream of them, cut into BLOCK-sized blocks
 * at fixed offsets:
 *
 *   a run of all-zero blocks       'Z' + run length (u64, little endian)
 *   a block with any non-zero byte 'D' + block length (u64 LE) + its bytes
 *   the end                        'E' + file size (u64 LE)
 *
 * A hole is a run of zeros without reading it: SEEK_DATA/SEEK_HOLE find
 * the allocated ranges, so a 1 TiB file with 4 KiB of data costs a few
 * syscalls and one block read, not a terabyte of reads. The same bytes
 * give the same digest whether they are holes or written zeros.
 *
 * SHA-256 is OpenSSL's (libcrypto), not GLib's GChecksum: when a review
 * pinned every changed byte by digest and an apply checked every pinned
 * byte it wrote that way, GChecksum's portable C runs at ~260 MB/s here against OpenSSL's ~1.5 GB/s
 * (SHA-NI, AVX2), which made pinning a review cost ~12 % on its own
 * (BENCHMARKS.md, bench-pinning). The digest is the same SHA-256.
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "paddock-change.h"
#include "paddock-content-hash.h"

#define BLOCK 4096
/* Reads in chunks of this many blocks. */
#define CHUNK_BLOCKS 16

typedef EVP_MD_CTX Sha256;

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Sha256, EVP_MD_CTX_free)

/* One SHA-256 context, or NULL when libcrypto cannot make one (no
 * provider loaded, out of memory): then nothing is hashed and the callers
 * report it, never a digest of something else. */
static Sha256 *
sha256_new (void)
{
  static gsize md_once = 0;
  static EVP_MD *md = NULL;
  EVP_MD_CTX *ctx;

  /* Fetched once: an implicit fetch on every init costs more than
   * hashing a small file. */
  if (g_once_init_enter (&md_once))
    {
      md = EVP_MD_fetch (NULL, "SHA256", NULL);
      g_once_init_leave (&md_once, 1);
    }
  if (md == NULL || (ctx = EVP_MD_CTX_new ()) == NULL)
    return NULL;
  if (EVP_DigestInit_ex (ctx, md, NULL) != 1)
    {
      EVP_MD_CTX_free (ctx);
      return NULL;
    }
  return ctx;
}

static void
sha256_update (Sha256     *sum,
               const void *data,
               gsize       length)
{
  /* Cannot fail for a software digest once initialised. */
  (void) EVP_DigestUpdate (sum, data, length);
}

/* Lowercase hex, as GChecksum gave; NULL when the digest fails. */
static char *
sha256_hex (Sha256 *sum)
{
  guint8 digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  static const char hex[] = "0123456789abcdef";
  char *out;

  if (EVP_DigestFinal_ex (sum, digest, &length) != 1 || length * 2 != PADDOCK_CONTENT_HASH_HEX_LEN)
    return NULL;
  out = g_malloc (length * 2 + 1);
  for (unsigned int i = 0; i < length; i++)
    {
      out[2 * i] = hex[digest[i] >> 4];
      out[2 * i + 1] = hex[digest[i] & 0xf];
    }
  out[length * 2] = '\0';
  return out;
}

typedef struct {
  Sha256  *sum;
  guint64  zeros;  /* pending zero run */
} Canon;

static void
put_u64 (Sha256  *sum,
         guint64  value)
{
  guint8 bytes[8];

  for (guint i = 0; i < 8; i++)
    bytes[i] = (guint8) (value >> (8 * i));
  sha256_update (sum, bytes, sizeof bytes);
}

static void
flush_zeros (Canon *c)
{
  if (c->zeros == 0)
    return;
  sha256_update (c->sum, "Z", 1);
  put_u64 (c->sum, c->zeros);
  c->zeros = 0;
}

/* Every byte zero: the first is, and each equals the next (memcmp runs
 * word-wide, a byte loop would cost as much as the hash). */
static gboolean
all_zero (const guint8 *data,
          gsize         length)
{
  return length == 0 || (data[0] == 0 && memcmp (data, data + 1, length - 1) == 0);
}

/* One block that starts at a multiple of BLOCK (the last may be short). */
static void
feed_block (Canon        *c,
            const guint8 *data,
            gsize         length)
{
  if (all_zero (data, length))
    {
      c->zeros += length;
      return;
    }
  flush_zeros (c);
  sha256_update (c->sum, "D", 1);
  put_u64 (c->sum, length);
  sha256_update (c->sum, data, length);
}

static void
finish (Canon   *c,
        guint64  size)
{
  flush_zeros (c);
  sha256_update (c->sum, "E", 1);
  put_u64 (c->sum, size);
}

static gboolean
set_errno_error (GError     **error,
                 int          saved_errno,
                 const char  *what)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno), "%s: %s", what,
               g_strerror (saved_errno));
  return FALSE;
}

/* Feeds [start, end), both multiples of BLOCK or @end the file size, by
 * reading it. */
static gboolean
feed_range (Canon    *c,
            int       fd,
            guint64   start,
            guint64   end,
            guint8   *buf,
            GError  **error)
{
  while (start < end)
    {
      gsize want = (gsize) MIN ((guint64) BLOCK * CHUNK_BLOCKS, end - start);
      gsize got = 0;

      while (got < want)
        {
          gssize n = pread (fd, buf + got, want - got, (off_t) (start + got));

          if (n < 0 && errno == EINTR)
            continue;
          if (n < 0)
            return set_errno_error (error, errno, "Could not read the file to hash it");
          if (n == 0)
            {
              /* Shorter than fstat() said: it shrank while we read. */
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                           "The file changed size while it was hashed");
              return FALSE;
            }
          got += (gsize) n;
        }
      for (gsize off = 0; off < got; off += BLOCK)
        feed_block (c, buf + off, MIN ((gsize) BLOCK, got - off));
      start += got;
    }
  return TRUE;
}

/**
 * paddock_content_hash_fd:
 * @fd: a regular file open for reading
 *
 * The canonical SHA-256 (see above) of @fd's content, as lowercase hex.
 * The file offset is not used (pread) and not changed meaningfully.
 *
 * Returns: (transfer full): the digest, or %NULL with @error set
 */
char *
paddock_content_hash_fd (int            fd,
                         GCancellable  *cancellable,
                         GError       **error)
{
  g_autoptr(Sha256) sum = sha256_new ();
  g_autofree guint8 *buf = NULL;
  Canon c = { sum, 0 };
  char *hex;
  struct stat st;
  guint64 size;
  guint64 pos = 0;
  gboolean seekable = TRUE;

  if (sum == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           "libcrypto could not start a SHA-256");
      return NULL;
    }
  buf = g_malloc ((gsize) BLOCK * CHUNK_BLOCKS);
  if (fstat (fd, &st) != 0)
    return set_errno_error (error, errno, "Could not inspect the file to hash it"), NULL;
  if (!S_ISREG (st.st_mode))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE, "Not a regular file");
      return NULL;
    }
  size = (guint64) st.st_size;

  while (pos < size)
    {
      guint64 data, hole;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;

      data = pos;
      if (seekable)
        {
          off_t d = lseek (fd, (off_t) pos, SEEK_DATA);

          if (d < 0 && errno == ENXIO)
            d = (off_t) size;  /* only a hole from here on */
          else if (d < 0)
            seekable = FALSE;  /* EINVAL: no SEEK_DATA here; read it all */
          if (seekable)
            data = MIN ((guint64) d, size);
        }
      /* [pos, data) is a hole: whole blocks inside it are zeros unread;
       * the partial blocks at its edges are read (they may share a block
       * with data). */
      {
        guint64 first_whole = (pos + BLOCK - 1) / BLOCK * BLOCK;
        guint64 last_whole = data / BLOCK * BLOCK;

        if (first_whole < last_whole)
          {
            if (!feed_range (&c, fd, pos, first_whole, buf, error))
              return NULL;
            c.zeros += last_whole - first_whole;
            pos = last_whole;
          }
      }
      if (pos >= size)
        break;

      hole = size;
      if (seekable)
        {
          off_t h = lseek (fd, (off_t) data, SEEK_HOLE);

          if (h < 0)
            return set_errno_error (error, errno, "Could not find the file's holes"), NULL;
          hole = MIN ((guint64) h, size);
        }
      /* Read from pos to the block boundary at or after the hole's start
       * (or the end): every block read is fed whole. */
      hole = MIN ((hole + BLOCK - 1) / BLOCK * BLOCK, size);
      if (hole <= pos)
        hole = MIN (pos + BLOCK, size);
      if (!feed_range (&c, fd, pos, hole, buf, error))
        return NULL;
      pos = hole;
    }
  finish (&c, size);
  hex = sha256_hex (sum);
  if (hex == NULL)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, "libcrypto could not finish a SHA-256");
  return hex;
}

/* The same canonical digest of bytes in memory (what a review read, a
 * symlink's text). Returns: (nullable): NULL only when libcrypto cannot
 * hash, which callers treat as content that matches nothing. */
char *
paddock_content_hash_bytes (const void *data,
                            gsize       length)
{
  g_autoptr(Sha256) sum = sha256_new ();
  Canon c = { sum, 0 };

  if (sum == NULL)
    return NULL;
  for (gsize off = 0; off < length; off += BLOCK)
    feed_block (&c, (const guint8 *) data + off, MIN ((gsize) BLOCK, length - off));
  finish (&c, length);
  return sha256_hex (sum);
}

/**
 * paddock_content_equal_fd:
 * @fd: a regular file open for reading
 * @expected: bytes in memory (what a review read and kept)
 *
 * Whether @fd holds exactly @expected, compared byte for byte (a hole
 * reads as zeros, as it hashes above): for content a review kept, an
 * exact comparison both proves more than a digest and costs less (one
 * read and memcmp, no SHA-256 on either side). Reads at most
 * @expected's size plus one byte: a longer file differs.
 *
 * Returns: 1 when equal, 0 when not, -1 with @error set when @fd could
 *   not be read
 */
int
paddock_content_equal_fd (int       fd,
                          GBytes   *expected,
                          GError  **error)
{
  gsize length = 0;
  const guint8 *want = g_bytes_get_data (expected, &length);
  g_autofree guint8 *buf = NULL;
  struct stat st;
  gsize pos = 0;

  if (fstat (fd, &st) != 0)
    return set_errno_error (error, errno, "Could not inspect the file to compare it"), -1;
  if (!S_ISREG (st.st_mode))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE, "Not a regular file");
      return -1;
    }
  if ((guint64) st.st_size != (guint64) length)
    return 0;
  buf = g_malloc ((gsize) BLOCK * CHUNK_BLOCKS);
  /* Up to one byte past the end: a file that grew since fstat() differs. */
  while (pos <= length)
    {
      gsize want_now = MIN ((gsize) BLOCK * CHUNK_BLOCKS, length - pos + 1);
      gssize n = pread (fd, buf, want_now, (off_t) pos);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return set_errno_error (error, errno, "Could not read the file to compare it"), -1;
      if (n == 0)
        break;
      if (pos + (gsize) n > length || memcmp (buf, want + pos, (gsize) n) != 0)
        return 0;
      pos += (gsize) n;
    }
  return pos == length ? 1 : 0;
}
