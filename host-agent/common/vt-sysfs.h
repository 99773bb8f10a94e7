/* Small reads and writes of sysfs/procfs files, with errors naming the file.
 * Every path is taken relative to a root ("/" on a host, a fake tree in unit
 * tests), so the code that reads /sys and /proc is tested on captured trees. */
#pragma once

#include <glib.h>

/* The root all vt_sysfs paths are under; "/" unless set (tests). */
void vt_sysfs_set_root (const char *root);
const char *vt_sysfs_root (void);
/* root + path; the caller frees. */
char *vt_sysfs_path (const char *path);

/* The file's contents with trailing white space removed. */
char *vt_sysfs_read (const char *path, GError **error);
gboolean vt_sysfs_read_u64 (const char *path, guint64 *out, GError **error);
gboolean vt_sysfs_write (const char *path, const char *value, GError **error);
gboolean vt_sysfs_write_u64 (const char *path, guint64 value, GError **error);
/* vt_sysfs_write, again after wait_us while the file says EBUSY, up to
 * `tries` times: DAMON's sysfs takes its one lock with trylock, and any
 * state command (vtierd's, damo's) holds it for a moment. */
gboolean vt_sysfs_write_patiently (const char *path, const char *value, guint tries,
                                   gulong wait_us, GError **error);
gboolean vt_sysfs_exists (const char *path);

/* Parses a node list such as "0-2,5" (ids 0..4095) into a sorted array of
 * guint without repeats, in time linear in the text. */
GArray *vt_parse_nodelist (const char *text, GError **error);
/* The other way: a sorted array of guint as "0-2,5" (repeats once). */
char *vt_format_nodelist (const GArray *nodes);
