/* bench-staging-support.h — what the staging benches share: their trees, git, the daemon
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

#include "paddock-test-client.h"
#include "paddock-test-daemon.h"

G_BEGIN_DECLS

#define FILES_PER_FOLDER  100
#define MARKER            "paddock-bench-edits-done"

/* The run's state; clean_up() undoes it, whatever happened. */
extern PaddockTestDaemon *daemon_under_test;
extern GDBusConnection *bus;
extern char *base_dir;          /* everything the run writes is beneath it */
extern gboolean base_is_tmpfs;
extern char *git_path;
extern char *sh_path;
extern gboolean failed;         /* a correctness check failed */

typedef struct
{
  char   *path;
  double  create_ms;   /* CreateSession's reply */
  double  ready_ms;    /* CreateSession until the agent printed its marker */
} Session;

typedef struct
{
  guint n_rows;
  guint n_modified;
  guint n_renamed;
  guint n_other;
  guint n_conflicts;
  GPtrArray *paths;   /* the new path of each row */
} ChangeList;

/* Bookkeeping */
const char *prepare_run         (const char          *prefix,
                                 gboolean             on_disk);
void        destroy_session     (const char          *path);
void        clean_up            (void);
void        start_watcher       (const char          *dir);
char       *find_or_bail        (const char          *program);
gboolean    mount_private_tmpfs (const char          *dir);
void        check               (gboolean             ok,
                                 const char          *what);

/* Figures */
double      minimum             (GArray              *values);
double      maximum             (GArray              *values);
void        push                (GArray             **values,
                                 double               value);

/* The change the pinning benches make (issue #19): PIN_CHANGED of
 * PIN_FILES files, change k touching file pin_change_index (k); every
 * tenth change is a move (PIN_RENAMED in all). */
#define PIN_FILES     10000
#define PIN_CHANGED   1000
#define PIN_RENAMED   100
guint       pin_change_index    (guint                k);
gboolean    pin_change_is_move  (guint                k);

/* Trees */
char       *file_rel            (guint                index);
char       *moved_rel           (guint                index);
void        file_contents       (guint                index,
                                 GString             *out);
void        write_file          (const char          *path,
                                 const char          *data,
                                 gsize                length);
void        generate_tree       (const char          *root,
                                 guint                n_files);
char       *edit_script         (const char          *dir,
                                 GPtrArray           *modify,
                                 GPtrArray           *move_from,
                                 GPtrArray           *move_to,
                                 int                  round);

/* Processes */
void        run                 (const char * const  *argv,
                                 const char          *cwd,
                                 char               **out);
void        git                 (char               **out,
                                 const char          *cwd,
                                 ...) G_GNUC_NULL_TERMINATED;
void        git_argv            (GPtrArray           *argv,
                                 const char          *cwd,
                                 char               **out);
guint       count_lines         (const char          *text);

/* The daemon */
GVariant   *call                (const char          *path,
                                 const char          *method,
                                 GVariant            *parameters,
                                 const GVariantType  *reply_type);
Session     start_session       (const char          *workspace,
                                 const char          *script,
                                 guint                timeout_s);
void        change_list_clear   (ChangeList          *list);
ChangeList  list_changes        (const char          *session,
                                 double              *ms);
gsize       get_diff            (const char          *session,
                                 const char          *path);
guint       apply               (const char          *session,
                                 const char * const  *paths,
                                 guint               *n_conflicts);

G_END_DECLS
