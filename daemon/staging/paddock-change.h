/* paddock-change.h — one row of a session's review list
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

/* The one error domain of daemon/staging (baseline, review, apply). */
#define PADDOCK_STAGING_ERROR (paddock_staging_error_quark ())

typedef enum {
  PADDOCK_STAGING_ERROR_FAILED,
  PADDOCK_STAGING_ERROR_CORRUPT,
  PADDOCK_STAGING_ERROR_NOT_FOUND,
  PADDOCK_STAGING_ERROR_INVALID_PATH,
  PADDOCK_STAGING_ERROR_CONFLICT,
  PADDOCK_STAGING_ERROR_TOO_LARGE,
  PADDOCK_STAGING_ERROR_REVIEW_STALE,    /* content changed since the review */
  PADDOCK_STAGING_ERROR_REVIEW_EXPIRED,  /* unknown or expired review token */
  PADDOCK_STAGING_ERROR_METADATA,        /* repository metadata named as a file change */
} PaddockStagingError;

GQuark paddock_staging_error_quark (void);

typedef enum {
  PADDOCK_CHANGE_KIND_ADDED,
  PADDOCK_CHANGE_KIND_MODIFIED,
  PADDOCK_CHANGE_KIND_DELETED,
  PADDOCK_CHANGE_KIND_RENAMED,
  PADDOCK_CHANGE_KIND_TYPE_CHANGED,
  PADDOCK_CHANGE_KIND_MODE_CHANGED,
} PaddockChangeKind;

/* What a row's path holds on the new side: NONE for a deleted file or
 * link, DIRECTORY for directory rows (an empty new directory, a deleted
 * directory, a directory's mode change). old_mode/new_mode carry the
 * st_mode type bits of each side as well. */
typedef enum {
  PADDOCK_ENTRY_TYPE_NONE,
  PADDOCK_ENTRY_TYPE_FILE,
  PADDOCK_ENTRY_TYPE_SYMLINK,
  PADDOCK_ENTRY_TYPE_DIRECTORY,
} PaddockEntryType;

#define PADDOCK_TYPE_CHANGE_KIND (paddock_change_kind_get_type ())
#define PADDOCK_TYPE_ENTRY_TYPE  (paddock_entry_type_get_type ())
#define PADDOCK_TYPE_CHANGE      (paddock_change_get_type ())

GType paddock_change_kind_get_type (void);
GType paddock_entry_type_get_type  (void);

G_DECLARE_FINAL_TYPE (PaddockChange, paddock_change, PADDOCK, CHANGE, GObject)

const char       *paddock_change_kind_to_string   (PaddockChangeKind  kind);
const char       *paddock_entry_type_to_string    (PaddockEntryType   type);

PaddockChange    *paddock_change_new              (const char        *path,
                                                   const char        *old_path,
                                                   PaddockChangeKind  kind,
                                                   PaddockEntryType   entry_type,
                                                   guint32            old_mode,
                                                   guint32            new_mode,
                                                   gboolean           binary,
                                                   guint              added_lines,
                                                   guint              removed_lines,
                                                   gboolean           conflict);
const char       *paddock_change_get_path          (PaddockChange     *self);
const char       *paddock_change_get_old_path      (PaddockChange     *self);
PaddockChangeKind paddock_change_get_kind          (PaddockChange     *self);
PaddockEntryType  paddock_change_get_entry_type    (PaddockChange     *self);
guint32           paddock_change_get_old_mode      (PaddockChange     *self);
guint32           paddock_change_get_new_mode      (PaddockChange     *self);
gboolean          paddock_change_get_binary        (PaddockChange     *self);
guint             paddock_change_get_added_lines   (PaddockChange     *self);
guint             paddock_change_get_removed_lines (PaddockChange     *self);
gboolean          paddock_change_get_conflict      (PaddockChange     *self);
const char       *paddock_change_get_metadata_reason (PaddockChange   *self);
void              paddock_change_set_metadata_reason (PaddockChange   *self,
                                                      const char      *reason);
void              paddock_change_set_details       (PaddockChange     *self,
                                                    guint64            size,
                                                    guint64            allocated,
                                                    const char        *hardlink_of,
                                                    const char        *unappliable);
guint64           paddock_change_get_size          (PaddockChange     *self);
guint64           paddock_change_get_allocated     (PaddockChange     *self);
const char       *paddock_change_get_hardlink_of   (PaddockChange     *self);
const char       *paddock_change_get_unappliable   (PaddockChange     *self);

G_END_DECLS
