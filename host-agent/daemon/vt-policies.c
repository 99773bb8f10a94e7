#include "daemon/vt-policies.h"

#include "daemon/vt-policy-store.h"
#include "policy/vt-domain-metadata.h"

typedef struct {
  VtPolicyEntry *entry;  /* its last valid metadata, or NULL */
  char *error;           /* why the last metadata was rejected */
} Metadata;

/* What the registry said of a VM. */
typedef struct {
  char *key;             /* its group in the store */
  char *uuid;            /* NULL when unknown */
} Vm;

struct _VtPolicies {
  GHashTable *config;    /* borrowed */
  char *file;
  GHashTable *store;     /* group -> VtPolicyEntry */
  GHashTable *metadata;  /* name -> Metadata */
  GHashTable *vms;       /* name -> Vm */
};

static void
metadata_free (gpointer data)
{
  Metadata *md = data;
  vt_policy_entry_free (md->entry);
  g_free (md->error);
  g_free (md);
}

static void
vm_free (gpointer data)
{
  Vm *vm = data;
  g_free (vm->key);
  g_free (vm->uuid);
  g_free (vm);
}

VtPolicies *
vt_policies_new (GHashTable *config_policies, const char *policy_file)
{
  VtPolicies *ps = g_new0 (VtPolicies, 1);
  ps->config = config_policies;
  ps->file = g_strdup (policy_file);
  ps->store = vt_policy_store_load (policy_file);
  ps->metadata = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, metadata_free);
  ps->vms = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, vm_free);
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
  g_hash_table_unref (ps->store);
  g_hash_table_unref (ps->metadata);
  g_hash_table_unref (ps->vms);
  g_free (ps->file);
  g_free (ps);
}

/* The VM's group in the store; by name for a VM the registry never named. */
static char *
key_of (VtPolicies *ps, const char *name)
{
  Vm *vm = g_hash_table_lookup (ps->vms, name);
  return vm ? g_strdup (vm->key) : vt_policy_store_key (NULL, NULL, name);
}

/* A change the store makes by itself (not asked for by a caller that could
 * be told): said, and the next save tries again. */
static void
save_or_warn (VtPolicies *ps)
{
  g_autoptr (GError) error = NULL;
  if (!vt_policy_store_save (ps->file, ps->store, &error))
    g_warning ("%s: the policies vtierd keeps could not be saved: %s", ps->file, error->message);
}

void
vt_policies_add_vm (VtPolicies *ps, const char *name, const char *via, const char *uuid)
{
  Vm *vm = g_new0 (Vm, 1);
  vm->key = vt_policy_store_key (via, uuid, name);
  vm->uuid = uuid && *uuid ? g_strdup (uuid) : NULL;
  g_hash_table_replace (ps->vms, g_strdup (name), vm);
  if (!vm->uuid)
    return;
  VtPolicyEntry *kept = g_hash_table_lookup (ps->store, vm->key);
  if (kept) {
    if (kept->name && !g_str_equal (kept->name, name))
      g_message ("VM %s: was %s; its policy follows its UUID %s", name, kept->name, uuid);
    g_free (kept->name);
    kept->name = g_strdup (name);
    return;
  }
  /* Kept by name (an older vtierd's file): by UUID from now on. */
  g_autofree char *by_name = vt_policy_store_key (via, NULL, name);
  gpointer old_key, entry;
  if (!g_hash_table_steal_extended (ps->store, by_name, &old_key, &entry))
    return;
  g_free (old_key);
  VtPolicyEntry *e = entry;
  g_free (e->name);
  e->name = g_strdup (name);
  g_hash_table_insert (ps->store, g_strdup (vm->key), e);
  g_message ("VM %s: its kept policy moves from [%s] to [%s]", name, by_name, vm->key);
  save_or_warn (ps);
}

/* Its valid metadata, else what the store keeps for it, or NULL. */
static const VtPolicyEntry *
current (VtPolicies *ps, const char *name)
{
  Metadata *md = g_hash_table_lookup (ps->metadata, name);
  if (md && md->entry)
    return md->entry;
  g_autofree char *key = key_of (ps, name);
  return g_hash_table_lookup (ps->store, key);
}

VtVmPolicy
vt_policies_get (VtPolicies *ps, const char *name, const char **source)
{
  Metadata *md = g_hash_table_lookup (ps->metadata, name);
  if (md && md->entry) {
    *source = "metadata";
    return md->entry->policy;
  }
  g_autofree char *key = key_of (ps, name);
  const VtPolicyEntry *kept = g_hash_table_lookup (ps->store, key);
  if (kept) {
    /* A domain's entry is the copy of its metadata; a bare VM's was set. */
    *source = g_str_has_prefix (key, "libvirt ") ? "stored" : "set";
    return kept->policy;
  }
  Vm *vm = g_hash_table_lookup (ps->vms, name);
  const VtVmPolicy *p = vm && vm->uuid ? g_hash_table_lookup (ps->config, vm->uuid) : NULL;
  if (!p)
    p = g_hash_table_lookup (ps->config, name);
  *source = p ? "config" : "default";
  return p ? *p : VT_VM_POLICY_DEFAULT;
}

const GArray *
vt_policies_fast_nodes (VtPolicies *ps, const char *name)
{
  const VtPolicyEntry *e = current (ps, name);
  return e ? e->fast : NULL;
}

const GArray *
vt_policies_slow_nodes (VtPolicies *ps, const char *name)
{
  const VtPolicyEntry *e = current (ps, name);
  return e ? e->slow : NULL;
}

const char *
vt_policies_label (VtPolicies *ps, const char *name)
{
  const VtPolicyEntry *e = current (ps, name);
  return e ? e->label : NULL;
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
  g_autofree char *key = key_of (ps, name);
  VtPolicyEntry *old = g_hash_table_lookup (ps->store, key);
  VtPolicyEntry *was = old ? vt_policy_entry_copy (old) : NULL;
  VtPolicyEntry *now = old ? vt_policy_entry_copy (old) : vt_policy_entry_new (policy, name);
  now->policy = *policy;
  g_free (now->name);
  now->name = g_strdup (name);
  g_hash_table_replace (ps->store, g_strdup (key), now);
  if (vt_policy_store_save (ps->file, ps->store, error)) {
    vt_policy_entry_free (was);
    return TRUE;
  }
  if (was)
    g_hash_table_replace (ps->store, g_strdup (key), was);
  else
    g_hash_table_remove (ps->store, key);
  g_prefix_error (error, "VM %s: the policy is not set, it could not be kept: ", name);
  return FALSE;
}

static void
log_policy (const char *name, const char *how, const VtVmPolicy *p)
{
  g_message ("VM %s: policy %s: weight %u, min %" G_GUINT64_FORMAT ", max %" G_GUINT64_FORMAT
             ", mode %s", name, how, p->weight, p->min, p->max, vt_tier_mode_name (p->mode));
}

/* The domain's metadata, copied by its UUID (a VM known by name alone has
 * nothing to outlive a new name or XML by). */
static void
keep_copy (VtPolicies *ps, const char *key, const VtPolicyEntry *entry)
{
  const VtPolicyEntry *kept = g_hash_table_lookup (ps->store, key);
  if (!vt_policy_store_key_has_uuid (key) || (kept && vt_policy_entry_equal (kept, entry)))
    return;
  g_hash_table_replace (ps->store, g_strdup (key), vt_policy_entry_copy (entry));
  save_or_warn (ps);
}

void
vt_policies_set_metadata (VtPolicies *ps, const char *name, const char *xml)
{
  Metadata *md = g_hash_table_lookup (ps->metadata, name);
  g_autofree char *key = key_of (ps, name);
  if (!xml) {
    /* Removed from a running domain: meant, so the copy goes too. None
     * when found: the copy stands in (the XML was made without it). */
    if (md && md->entry) {
      g_message ("VM %s: its vtier metadata was removed; policy from vtierd's own settings", name);
      if (vt_policy_store_key_has_uuid (key) && g_hash_table_remove (ps->store, key))
        save_or_warn (ps);
    } else if (!md && vt_policy_store_key_has_uuid (key)
               && g_hash_table_contains (ps->store, key)) {
      g_message ("VM %s: its domain has no vtier metadata; the policy kept for [%s] applies",
                 name, key);
    }
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
  char *label = NULL;
  g_autoptr (GError) error = NULL;
  if (!vt_domain_metadata_parse (xml, &p, &fast, &slow, &label, &error)) {
    g_warning ("VM %s: invalid vtier metadata, keeping its %s policy: %s", name,
               md->entry ? "previous" : "current", error->message);
    g_free (md->error);
    md->error = g_strdup (error->message);
    return;
  }
  g_clear_pointer (&md->error, g_free);
  vt_policy_entry_free (md->entry);
  md->entry = vt_policy_entry_new (&p, name);
  md->entry->fast = fast;
  md->entry->slow = slow;
  md->entry->label = label;
  log_policy (name, "from its domain metadata", &p);
  keep_copy (ps, key, md->entry);
}

char *
vt_policies_format_metadata (VtPolicies *ps, const char *name, const VtVmPolicy *policy)
{
  return vt_domain_metadata_format_plain (policy, vt_policies_fast_nodes (ps, name),
                                          vt_policies_slow_nodes (ps, name),
                                          vt_policies_label (ps, name));
}

void
vt_policies_forget (VtPolicies *ps, const char *name)
{
  g_hash_table_remove (ps->metadata, name);
  g_hash_table_remove (ps->vms, name);
}
