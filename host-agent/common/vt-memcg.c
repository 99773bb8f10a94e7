/* A process's memory cgroup and its bytes per node. See vt-memcg.h. */

#include "common/vt-memcg.h"

#include <stdlib.h>
#include <string.h>

#include "common/vt-error.h"
#include "common/vt-sysfs.h"

#define CGROUP_ROOT "/sys/fs/cgroup"

static char *
cgroup_file (const char *memcg, const char *name)
{
  return g_build_filename (CGROUP_ROOT, memcg, name, NULL);
}

char *
vt_memcg_of_process (GPid pid, GError **error)
{
  g_autofree char *file = g_strdup_printf ("/proc/%d/cgroup", (int) pid);
  g_autofree char *text = vt_sysfs_read (file, error);
  if (!text)
    return NULL;
  g_autofree char *path = NULL;
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l && !path; l++)
    if (g_str_has_prefix (*l, "0::"))
      path = g_strdup (*l + 3);
  if (!path) {
    g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED,
                 "pid %d: no cgroup v2 line in %s (a cgroup v1 host)", (int) pid, file);
    return NULL;
  }
  /* Up from threaded cgroups (their memory is their domain's) and from
   * cgroups without the memory controller (their memory is charged to the
   * nearest one with it, and DAMOS names memcgs only). */
  while (strcmp (path, "/") != 0) {
    g_autofree char *type_file = cgroup_file (path, "cgroup.type");
    g_autofree char *stat_file = cgroup_file (path, "memory.numa_stat");
    g_autofree char *type = vt_sysfs_read (type_file, NULL);
    if (g_strcmp0 (type, "threaded") != 0 && vt_sysfs_exists (stat_file))
      break;
    char *slash = strrchr (path, '/');
    if (slash == path)
      slash[1] = '\0';
    else
      *slash = '\0';
  }
  if (strcmp (path, "/") == 0) {
    g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED,
                 "pid %d is in the root cgroup: no memory cgroup of its own", (int) pid);
    return NULL;
  }
  return g_steal_pointer (&path);
}

gboolean
vt_memcg_node_lru_bytes (const char *memcg, guint node, guint64 *bytes, GError **error)
{
  static const char *const lru[] = { "active_anon", "inactive_anon", "active_file",
                                     "inactive_file", NULL };
  g_autofree char *file = cgroup_file (memcg, "memory.numa_stat");
  g_autofree char *text = vt_sysfs_read (file, error);
  if (!text)
    return FALSE;
  char key[32];
  g_snprintf (key, sizeof key, " N%u=", node);
  guint found = 0;
  *bytes = 0;
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l; l++) {
    g_autofree char *name = g_strndup (*l, strcspn (*l, " "));
    if (!g_strv_contains (lru, name))
      continue;
    const char *at = strstr (*l, key);
    if (!at)
      continue;
    *bytes += g_ascii_strtoull (at + strlen (key), NULL, 10);
    found++;
  }
  if (found != G_N_ELEMENTS (lru) - 1) {
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                 "%s: %u of the 4 LRU lines have a count for node %u", file, found, node);
    return FALSE;
  }
  return TRUE;
}
