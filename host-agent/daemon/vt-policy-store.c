#include "daemon/vt-policy-store.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

#include "common/vt-error.h"
#include "common/vt-sysfs.h"

/* The groups' prefixes: by UUID (one per way a VM is found), by name. */
static const char *const uuid_prefixes[] = { "libvirt ", "qmp " };
#define NAME_PREFIX "vm "

VtPolicyEntry *
vt_policy_entry_new (const VtVmPolicy *policy, const char *name)
{
  VtPolicyEntry *e = g_new0 (VtPolicyEntry, 1);
  e->policy = *policy;
  e->name = g_strdup (name);
  return e;
}

static GArray *
nodes_copy (const GArray *nodes)
{
  if (!nodes)
    return NULL;
  GArray *copy = g_array_sized_new (FALSE, FALSE, sizeof (guint), nodes->len);
  return g_array_append_vals (copy, nodes->data, nodes->len);
}

VtPolicyEntry *
vt_policy_entry_copy (const VtPolicyEntry *e)
{
  VtPolicyEntry *copy = vt_policy_entry_new (&e->policy, e->name);
  copy->label = g_strdup (e->label);
  copy->fast = nodes_copy (e->fast);
  copy->slow = nodes_copy (e->slow);
  return copy;
}

static gboolean
nodes_equal (const GArray *a, const GArray *b)
{
  if (!a || !b)
    return a == b;
  return a->len == b->len && memcmp (a->data, b->data, a->len * sizeof (guint)) == 0;
}

gboolean
vt_policy_entry_equal (const VtPolicyEntry *a, const VtPolicyEntry *b)
{
  return vt_vm_policy_equal (&a->policy, &b->policy)
         && g_strcmp0 (a->name, b->name) == 0 && g_strcmp0 (a->label, b->label) == 0
         && nodes_equal (a->fast, b->fast) && nodes_equal (a->slow, b->slow);
}

void
vt_policy_entry_free (VtPolicyEntry *e)
{
  if (!e)
    return;
  g_free (e->name);
  g_free (e->label);
  g_clear_pointer (&e->fast, g_array_unref);
  g_clear_pointer (&e->slow, g_array_unref);
  g_free (e);
}

char *
vt_policy_store_key (const char *via, const char *uuid, const char *name)
{
  if (uuid && *uuid)
    return g_strdup_printf ("%s %s", via, uuid);
  return g_strdup_printf (NAME_PREFIX "%s", name);
}

gboolean
vt_policy_store_key_has_uuid (const char *key)
{
  for (gsize i = 0; i < G_N_ELEMENTS (uuid_prefixes); i++)
    if (g_str_has_prefix (key, uuid_prefixes[i]))
      return TRUE;
  return FALSE;
}

/* A known prefix, and something after it. */
static gboolean
is_group (const char *group)
{
  const char *space = strchr (group, ' ');
  return space && space[1]
         && (vt_policy_store_key_has_uuid (group) || g_str_has_prefix (group, NAME_PREFIX));
}

/* The keys besides the policy's, taken out of the group (so that the
 * policy's reader does not call them unknown). */
static void
take_extras (GKeyFile *kf, const char *group, VtPolicyEntry *e, GPtrArray *problems)
{
  e->name = g_key_file_get_string (kf, group, "name", NULL);
  e->label = g_key_file_get_string (kf, group, "label", NULL);
  static const char *const lists[] = { "fast-nodes", "slow-nodes" };
  GArray **outs[] = { &e->fast, &e->slow };
  for (gsize i = 0; i < G_N_ELEMENTS (lists); i++) {
    g_autofree char *text = g_key_file_get_value (kf, group, lists[i], NULL);
    if (text && !(*outs[i] = vt_parse_nodelist (text, NULL)))
      g_ptr_array_add (problems, g_strdup_printf ("[%s] %s = '%s' is not a node list", group,
                                                  lists[i], text));
  }
  static const char *const extras[] = { "name", "label", "fast-nodes", "slow-nodes" };
  for (gsize i = 0; i < G_N_ELEMENTS (extras); i++)
    g_key_file_remove_key (kf, group, extras[i], NULL);
}

GHashTable *
vt_policy_store_load (const char *path)
{
  GHashTable *table = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                             (GDestroyNotify) vt_policy_entry_free);
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) error = NULL;
  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, &error)) {
    if (!g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
      g_warning ("%s: %s; live policies start empty", path, error->message);
    return table;
  }
  g_auto (GStrv) groups = g_key_file_get_groups (kf, NULL);
  for (char **g = groups; *g; g++) {
    if (!is_group (*g)) {
      g_warning ("%s: [%s] is not a [libvirt UUID], [qmp UUID] or [vm NAME] group; ignored",
                 path, *g);
      continue;
    }
    VtVmPolicy p = VT_VM_POLICY_DEFAULT;
    VtPolicyEntry *e = vt_policy_entry_new (&p, NULL);
    g_autoptr (GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);
    take_extras (kf, *g, e, problems);
    vt_vm_policy_read (kf, *g, &e->policy, problems);
    for (guint i = 0; i < problems->len; i++)
      g_warning ("%s: %s", path, (char *) problems->pdata[i]);
    g_hash_table_replace (table, g_strdup (*g), e);
  }
  return table;
}

gboolean
vt_policy_store_save (const char *path, GHashTable *entries, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init (&it, entries);
  while (g_hash_table_iter_next (&it, &key, &value)) {
    const char *group = key;
    const VtPolicyEntry *e = value;
    const VtVmPolicy *p = &e->policy;
    g_autofree char *min = g_strdup_printf ("%" G_GUINT64_FORMAT, p->min);
    g_autofree char *max = p->max == G_MAXUINT64 ? g_strdup ("none")
                                                 : g_strdup_printf ("%" G_GUINT64_FORMAT, p->max);
    if (e->name)
      g_key_file_set_string (kf, group, "name", e->name);
    g_key_file_set_integer (kf, group, "weight", (int) p->weight);
    g_key_file_set_value (kf, group, "min", min);
    g_key_file_set_value (kf, group, "max", max);
    g_key_file_set_value (kf, group, "mode", vt_tier_mode_name (p->mode));
    if (p->interleave_top && p->interleave_slow) {
      g_autofree char *ratio = vt_interleave_format (p->interleave_top, p->interleave_slow);
      g_key_file_set_value (kf, group, "interleave", ratio);
    }
    if (e->label)
      g_key_file_set_string (kf, group, "label", e->label);
    const GArray *lists[] = { e->fast, e->slow };
    static const char *const names[] = { "fast-nodes", "slow-nodes" };
    for (gsize i = 0; i < G_N_ELEMENTS (lists); i++) {
      if (!lists[i] || !lists[i]->len)
        continue;
      g_autofree char *text = vt_format_nodelist (lists[i]);
      g_key_file_set_value (kf, group, names[i], text);
    }
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
