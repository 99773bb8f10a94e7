/* Fake /sys and /proc trees for unit tests: files written under a root. */
#pragma once

#include <glib.h>
#include <string.h>

static inline void
vt_test_put_file (const char *root, const char *rel, const char *contents)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname (path);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, contents, -1, NULL));
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
