#include "daemon/vt-policies.h"

#include "daemon/vt-policy-store.h"
#include "policy/vt-domain-metadata.h"

typedef struct {
  gboolean valid;        /* `policy` came from the metadata */
  VtVmPolicy policy;
  GArray *fast, *slow;   /* guint host nodes, or NULL */
  char *error;           /* why the last metadata was rejected */
} Metadata;

struct _VtPolicies {
  GHashTable *config;    /* borrowed */
  char *file;
  GHashTable *set;       /* name -> VtVmPolicy */
  GHashTable *metadata;  /* name -> Metadata */
};

static void
metadata_free (gpointer data)
{
  Metadata *md = data;
  g_clear_pointer (&md->fast, g_array_unref);
  g_clear_pointer (&md->slow, g_array_unref);
  g_free (md->error);
  g_free (md);
}

VtPolicies *
vt_policies_new (GHashTable *config_policies, const char *policy_file)
{
  VtPolicies *ps = g_new0 (VtPolicies, 1);
  ps->config = config_policies;
  ps->file = g_strdup (policy_file);
  ps->set = vt_policy_store_load (policy_file);
  ps->metadata = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, metadata_free);
  return ps;
}

void
vt_policies_set_config_policies (VtPolicies *ps, GHashTable *config_policies)
{
  ps->config = config_policies;
}

void
vt_policies_free (VtPolicies *ps)
{
  if (!ps)
    return;
  g_hash_table_unref (ps->set);
  g_hash_table_unref (ps->metadata);
  g_free (ps->file);
  g_free (ps);
}

VtVmPolicy
vt_policies_get (VtPolicies *ps, const char *name, const char **source)
{
  Metadata *md = g_hash_table_lookup (ps->metadata, name);
  if (md && md->valid) {
    *source = "metadata";
    return md->policy;
  }
  VtVmPolicy *p = g_hash_table_lookup (ps->set, name);
  *source = "set";
  if (!p) {
    p = g_hash_table_lookup (ps->config, name);
    *source = "config";
  }
  if (!p)
    *source = "default";
  return p ? *p : VT_VM_POLICY_DEFAULT;
}

const GArray *
vt_policies_fast_nodes (VtPolicies *ps, const char *name)
{
  Metadata *md = g_hash_table_lookup (ps->metadata, name);
  return md && md->valid ? md->fast : NULL;
}

const GArray *
vt_policies_slow_nodes (VtPolicies *ps, const char *name)
{
  Metadata *md = g_hash_table_lookup (ps->metadata, name);
  return md && md->valid ? md->slow : NULL;
}

const char *
vt_policies_error (VtPolicies *ps, const char *name)
{
  Metadata *md = g_hash_table_lookup (ps->metadata, name);
  return md ? md->error : NULL;
}

gboolean
vt_policies_set (VtPolicies *ps, const char *name, const VtVmPolicy *policy, GError **error)
{
  /* Kept first, applied after: a policy that would be lost at the next
   * restart is refused, and the old one stays (in memory and on disk). */
  VtVmPolicy *old = g_hash_table_lookup (ps->set, name);
  VtVmPolicy *was = old ? g_memdup2 (old, sizeof *old) : NULL;
  g_hash_table_replace (ps->set, g_strdup (name), g_memdup2 (policy, sizeof *policy));
  if (vt_policy_store_save (ps->file, ps->set, error)) {
    g_free (was);
    return TRUE;
  }
  if (was)
    g_hash_table_replace (ps->set, g_strdup (name), was);
  else
    g_hash_table_remove (ps->set, name);
  g_prefix_error (error, "VM %s: the policy is not set, it could not be kept: ", name);
  return FALSE;
}

static void
log_policy (const char *name, const char *how, const VtVmPolicy *p)
{
  g_message ("VM %s: policy %s: weight %u, min %" G_GUINT64_FORMAT ", max %" G_GUINT64_FORMAT
             ", mode %s", name, how, p->weight, p->min, p->max, vt_tier_mode_name (p->mode));
}

void
vt_policies_set_metadata (VtPolicies *ps, const char *name, const char *xml)
{
  Metadata *md = g_hash_table_lookup (ps->metadata, name);
  if (!xml) {
    if (md && md->valid)
      g_message ("VM %s: its vtier metadata was removed; policy from vtierd's own settings", name);
    g_hash_table_remove (ps->metadata, name);
    return;
  }
  if (!md) {
    md = g_new0 (Metadata, 1);
    g_hash_table_insert (ps->metadata, g_strdup (name), md);
  }
  /* What the element leaves out is the default, not the previous value:
   * the element is the whole policy. */
  VtVmPolicy p = VT_VM_POLICY_DEFAULT;
  GArray *fast = NULL, *slow = NULL;
  g_autoptr (GError) error = NULL;
  if (!vt_domain_metadata_parse (xml, &p, &fast, &slow, &error)) {
    g_warning ("VM %s: invalid vtier metadata, keeping its %s policy: %s", name,
               md->valid ? "previous" : "current", error->message);
    g_free (md->error);
    md->error = g_strdup (error->message);
    return;
  }
  g_clear_pointer (&md->error, g_free);
  g_clear_pointer (&md->fast, g_array_unref);
  g_clear_pointer (&md->slow, g_array_unref);
  md->valid = TRUE;
  md->policy = p;
  md->fast = fast;
  md->slow = slow;
  log_policy (name, "from its domain metadata", &p);
}

char *
vt_policies_format_metadata (VtPolicies *ps, const char *name, const VtVmPolicy *policy)
{
  return vt_domain_metadata_format_plain (policy, vt_policies_fast_nodes (ps, name),
                                    vt_policies_slow_nodes (ps, name));
}

void
vt_policies_forget (VtPolicies *ps, const char *name)
{
  g_hash_table_remove (ps->metadata, name);
}
