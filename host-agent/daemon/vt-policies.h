/* Every VM's tiering policy and where it comes from. For a libvirt domain
 * with vtier <metadata>, the metadata is the one source of truth (vtierctl
 * set writes it there too); otherwise a policy set live with vtierctl (kept
 * in the policy file), else its [vm NAME] group in vtierd.conf, else the
 * default. Invalid metadata keeps the previous policy and is reported. */
#pragma once

#include "daemon/vt-config.h"

typedef struct _VtPolicies VtPolicies;

/* `config_policies`: name -> VtVmPolicy from vtierd.conf (borrowed). */
VtPolicies *vt_policies_new (GHashTable *config_policies, const char *policy_file);
void vt_policies_free (VtPolicies *ps);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtPolicies, vt_policies_free)

/* A reloaded vtierd.conf's [vm NAME] groups (borrowed, as above). */
void vt_policies_set_config_policies (VtPolicies *ps, GHashTable *config_policies);

/* `source`: "metadata", "set", "config" or "default". */
VtVmPolicy vt_policies_get (VtPolicies *ps, const char *name, const char **source);
/* The host nodes the domain's metadata names as its tiers (guint), or NULL. */
const GArray *vt_policies_fast_nodes (VtPolicies *ps, const char *name);
const GArray *vt_policies_slow_nodes (VtPolicies *ps, const char *name);
/* Why its last metadata was rejected, or NULL. */
const char *vt_policies_error (VtPolicies *ps, const char *name);

/* A live change of a VM that has no metadata: kept in the policy file. */
gboolean vt_policies_set (VtPolicies *ps, const char *name, const VtVmPolicy *policy,
                          GError **error);
/* The domain's metadata element as read from libvirt (NULL: it has none). */
void vt_policies_set_metadata (VtPolicies *ps, const char *name, const char *xml);
/* The element for `policy`, keeping the domain's node lists. */
char *vt_policies_format_metadata (VtPolicies *ps, const char *name, const VtVmPolicy *policy);
/* The VM is gone: its metadata state goes (set and config ones stay). */
void vt_policies_forget (VtPolicies *ps, const char *name);
