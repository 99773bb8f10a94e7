/* Fake /sys and /proc trees for unit tests: files written under a root. */
#pragma once

#include <glib.h>

static inline void
vt_test_put_file (const char *root, const char *rel, const char *contents)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname (path);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, contents, -1, NULL));
}
