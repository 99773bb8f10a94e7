#include "common/vt-sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/vt-error.h"

static char *sysfs_root;

void
vt_sysfs_set_root (const char *root)
{
  g_free (sysfs_root);
  sysfs_root = g_strdup (root);
}

const char *
vt_sysfs_root (void)
{
  return sysfs_root ? sysfs_root : "/";
}

char *
vt_sysfs_path (const char *path)
{
  return g_build_filename (vt_sysfs_root (), path, NULL);
}

/* errno as a VtError code: callers retry on BUSY (DAMON's sysfs lock) and
 * tell a file that is not there from one that fails. */
static int
errno_code (int e)
{
  return e == ENOENT ? VT_ERROR_NOT_FOUND : e == EBUSY ? VT_ERROR_BUSY : VT_ERROR_FAILED;
}

char *
vt_sysfs_read (const char *path, GError **error)
{
  g_autofree char *full = vt_sysfs_path (path);
  int fd = open (full, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    g_set_error (error, VT_ERROR, errno_code (e), "%s: %s", full, g_strerror (e));
    return NULL;
  }
  g_autoptr (GString) text = g_string_new (NULL);
  char buf[4096];
  ssize_t n;
  while ((n = read (fd, buf, sizeof buf)) != 0) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int e = errno;
      close (fd);
      g_set_error (error, VT_ERROR, errno_code (e), "reading %s: %s", full, g_strerror (e));
      return NULL;
    }
    g_string_append_len (text, buf, n);
  }
  close (fd);
  return g_strchomp (g_string_free (g_steal_pointer (&text), FALSE));
}

gboolean
vt_sysfs_read_u64 (const char *path, guint64 *out, GError **error)
{
  g_autofree char *text = vt_sysfs_read (path, error);
  if (!text)
    return FALSE;
  if (!g_ascii_string_to_unsigned (text, 10, 0, G_MAXUINT64, out, NULL)) {
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "%s: '%s' is not a number", path, text);
    return FALSE;
  }
  return TRUE;
}

gboolean
vt_sysfs_write (const char *path, const char *value, GError **error)
{
  g_autofree char *full = vt_sysfs_path (path);
  FILE *f = fopen (full, "w");
  if (!f) {
    int e = errno;
    g_set_error (error, VT_ERROR, errno_code (e), "%s: %s", full, g_strerror (e));
    return FALSE;
  }
  /* sysfs reports a rejected value at write or at close: check both. */
  gboolean ok = fputs (value, f) >= 0;
  int e = errno;
  if (fclose (f) != 0 && ok) {
    ok = FALSE;
    e = errno;
  }
  if (!ok)
    g_set_error (error, VT_ERROR, errno_code (e),
                 "writing '%s' to %s: %s", value, full, g_strerror (e));
  return ok;
}

gboolean
vt_sysfs_write_patiently (const char *path, const char *value, guint tries, gulong wait_us,
                          GError **error)
{
  g_autoptr (GError) local = NULL;
  for (guint i = 0;; i++) {
    if (vt_sysfs_write (path, value, &local))
      return TRUE;
    if (!g_error_matches (local, VT_ERROR, VT_ERROR_BUSY) || i + 1 >= tries)
      break;
    g_clear_error (&local);
    g_usleep (wait_us);
  }
  g_propagate_error (error, g_steal_pointer (&local));
  return FALSE;
}

gboolean
vt_sysfs_write_u64 (const char *path, guint64 value, GError **error)
{
  char buf[32];
  g_snprintf (buf, sizeof buf, "%" G_GUINT64_FORMAT, value);
  return vt_sysfs_write (path, buf, error);
}

gboolean
vt_sysfs_exists (const char *path)
{
  g_autofree char *full = vt_sysfs_path (path);
  return g_file_test (full, G_FILE_TEST_EXISTS);
}

GArray *
vt_parse_nodelist (const char *text, GError **error)
{
  /* Node ids are below 4096 (the kernel's MAX_NUMNODES is at most 1024):
   * a set of them is a bitmap, whatever the text repeats or overlaps, so
   * a hostile list costs its length and no more. */
  g_autofree guint8 *seen = g_new0 (guint8, 4096);
  g_auto (GStrv) parts = g_strsplit (text ? text : "", ",", -1);

  for (char **p = parts; *p; p++) {
    char *part = g_strstrip (*p);
    if (!*part)
      continue;
    g_auto (GStrv) ab = g_strsplit (part, "-", 2);
    guint64 a, b;
    if (!g_ascii_string_to_unsigned (ab[0], 10, 0, 4095, &a, NULL) ||
        !g_ascii_string_to_unsigned (ab[1] ? ab[1] : ab[0], 10, a, 4095, &b, NULL)) {
      g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "'%s' is not a node list", text);
      return NULL;
    }
    memset (seen + a, 1, b - a + 1);
  }
  GArray *nodes = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint n = 0; n < 4096; n++)
    if (seen[n])
      g_array_append_val (nodes, n);
  return nodes;
}

char *
vt_format_nodelist (const GArray *nodes)
{
  g_autoptr (GString) s = g_string_new (NULL);
  for (guint i = 0; nodes && i < nodes->len;) {
    guint first = g_array_index (nodes, guint, i), last = first;
    /* Extend the run over repeats and successors. */
    while (++i < nodes->len && g_array_index (nodes, guint, i) <= last + 1)
      last = MAX (last, g_array_index (nodes, guint, i));
    g_string_append_printf (s, s->len ? ",%u" : "%u", first);
    if (last != first)
      g_string_append_printf (s, "-%u", last);
  }
  return g_string_free (g_steal_pointer (&s), FALSE);
}
