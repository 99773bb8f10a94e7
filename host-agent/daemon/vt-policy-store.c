#include "daemon/vt-policy-store.h"

#include <errno.h>
#include <glib/gstdio.h>

#include "common/vt-error.h"

GHashTable *
vt_policy_store_load (const char *path)
{
  GHashTable *table = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) error = NULL;
  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, &error)) {
    if (!g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
      g_warning ("%s: %s; live policies start empty", path, error->message);
    return table;
  }
  g_auto (GStrv) groups = g_key_file_get_groups (kf, NULL);
  for (char **g = groups; *g; g++) {
    if (!g_str_has_prefix (*g, "vm ") || !(*g)[3]) {
      g_warning ("%s: [%s] is not a [vm NAME] group; ignored", path, *g);
      continue;
    }
    VtVmPolicy *p = g_new (VtVmPolicy, 1);
    *p = VT_VM_POLICY_DEFAULT;
    g_autoptr (GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);
    vt_vm_policy_read (kf, *g, p, problems);
    for (guint i = 0; i < problems->len; i++)
      g_warning ("%s: %s", path, (char *) problems->pdata[i]);
    g_hash_table_replace (table, g_strdup (*g + 3), p);
  }
  return table;
}

gboolean
vt_policy_store_save (const char *path, GHashTable *policies, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  GHashTableIter it;
  gpointer name, value;
  g_hash_table_iter_init (&it, policies);
  while (g_hash_table_iter_next (&it, &name, &value)) {
    const VtVmPolicy *p = value;
    g_autofree char *group = g_strdup_printf ("vm %s", (char *) name);
    g_autofree char *min = g_strdup_printf ("%" G_GUINT64_FORMAT, p->min);
    g_autofree char *max = p->max == G_MAXUINT64 ? g_strdup ("none")
                                                 : g_strdup_printf ("%" G_GUINT64_FORMAT, p->max);
    g_key_file_set_integer (kf, group, "weight", (int) p->weight);
    g_key_file_set_value (kf, group, "min", min);
    g_key_file_set_value (kf, group, "max", max);
    g_key_file_set_value (kf, group, "mode", vt_tier_mode_name (p->mode));
  }
  g_autofree char *dir = g_path_get_dirname (path);
  if (g_mkdir_with_parents (dir, 0755) < 0) {
    g_set_error (error, VT_ERROR, VT_ERROR_FAILED, "%s: %s", dir, g_strerror (errno));
    return FALSE;
  }
  g_autoptr (GError) local = NULL;
  if (!g_key_file_save_to_file (kf, path, &local)) {
    g_set_error (error, VT_ERROR, VT_ERROR_FAILED, "%s", local->message);
    return FALSE;
  }
  return TRUE;
}
