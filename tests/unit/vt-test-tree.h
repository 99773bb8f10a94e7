/* Fake /sys and /proc trees for unit tests: files written under a root. */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

static inline void
vt_test_put_file (const char *root, const char *rel, const char *contents)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname (path);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, contents, -1, NULL));
}

/* proc/PID/stat of a process started at tick `start` (field 22). */
static inline void
vt_test_put_stat (const char *root, GPid pid, guint64 start)
{
  g_autofree char *rel = g_strdup_printf ("proc/%d/stat", (int) pid);
  g_autofree char *text = g_strdup_printf ("%d (qemu-system-x86) S 1 %d %d 0 -1 4194560 0 0 0 0 "
                                           "0 0 0 0 20 0 4 0 %" G_GUINT64_FORMAT " 0 0\n",
                                           (int) pid, (int) pid, (int) pid, start);
  vt_test_put_file (root, rel, text);
}

/* A file of tests/data (VT_TEST_DATA), whole. */
static inline char *
vt_test_read_data (const char *rel)
{
  g_autofree char *path = g_build_filename (g_getenv ("VT_TEST_DATA"), rel, NULL);
  char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return text;
}

/* Files captured as blocks of "REL/PATH:" then the file's lines (as
 * tests/data/sysfs/node.txt holds them), written under root/dir. A header
 * is a line with no space that ends in ':' and names a path with a '/'. */
static inline void
vt_test_put_captured (const char *root, const char *dir, const char *captured)
{
  g_auto (GStrv) lines = g_strsplit (captured, "\n", -1);
  g_autofree char *rel = NULL;
  g_autoptr (GString) body = g_string_new (NULL);
  for (char **l = lines;; l++) {
    gboolean header = *l && g_str_has_suffix (*l, ":") && strchr (*l, '/') && !strchr (*l, ' ');
    if (!*l || header) {
      if (rel) {
        g_autofree char *path = g_build_filename (dir, rel, NULL);
        vt_test_put_file (root, path, body->str);
      }
      if (!*l)
        break;
      g_free (rel);
      rel = g_strndup (*l, strlen (*l) - 1);
      g_string_truncate (body, 0);
    } else if (rel && (**l || l[1]))
      g_string_append_printf (body, "%s\n", *l);
  }
}

/* Removes `path` and all it holds (a symlink itself, not what it names). */
static inline void
vt_test_remove_tree (const char *path)
{
  GStatBuf st;
  if (g_lstat (path, &st) == 0 && S_ISDIR (st.st_mode)) {
    g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
    for (const char *name; dir && (name = g_dir_read_name (dir));) {
      g_autofree char *child = g_build_filename (path, name, NULL);
      vt_test_remove_tree (child);
    }
  }
  g_remove (path);
}

/* What vt_test_make_tmpdir made, and by which process: a forked child
 * that exits must not remove its parent's directories. */
typedef struct {
  GPtrArray *dirs;
  pid_t owner;
} VtTestTmpdirs;

static inline VtTestTmpdirs *
vt_test_tmpdirs (void)
{
  static VtTestTmpdirs made;
  return &made;
}

/* At a normal exit: a failed test aborts, and leaves its files to look at. */
static inline void
vt_test_remove_tmpdirs (void)
{
  VtTestTmpdirs *made = vt_test_tmpdirs ();
  if (!made->dirs || getpid () != made->owner)
    return;
  for (guint i = 0; i < made->dirs->len; i++)
    vt_test_remove_tree (made->dirs->pdata[i]);
  g_clear_pointer (&made->dirs, g_ptr_array_unref);
}

/* A fresh directory under $TMPDIR (`tmpl` as g_dir_make_tmp takes it),
 * gone with all it holds when the test program exits. */
static inline char *
vt_test_make_tmpdir (const char *tmpl)
{
  g_autoptr (GError) error = NULL;
  char *dir = g_dir_make_tmp (tmpl, &error);
  g_assert_no_error (error);
  VtTestTmpdirs *made = vt_test_tmpdirs ();
  if (!made->dirs) {
    made->dirs = g_ptr_array_new_with_free_func (g_free);
    made->owner = getpid ();
    atexit (vt_test_remove_tmpdirs);
  }
  g_ptr_array_add (made->dirs, g_strdup (dir));
  return dir;
}
