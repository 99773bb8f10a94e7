/* Every VM's tiering policy and where it comes from, first that has one:
 *
 *   metadata  the libvirt domain's vtier <metadata>: it always wins, and
 *             vtierctl set writes it there too
 *   stored    vtierd's copy of that metadata, kept by the domain's UUID
 *             (vt-policy-store.h), while the domain has none: its XML was
 *             regenerated without it (Nova's hard reboot), or it was renamed
 *   set       a policy set live with vtierctl on a bare QEMU VM, kept in the
 *             same store by its UUID (QMP query-uuid) or else its name
 *   config    its [vm UUID] or else [vm NAME] group in vtierd.conf
 *   default
 *
 * Invalid metadata keeps the previous policy and is reported. Metadata
 * removed from a running domain (virsh metadata --remove) is meant: its
 * stored copy goes too. Each VM is known by name; the registry says which
 * UUID and way of discovery go with it (vt_policies_add_vm). */
#pragma once

#include "daemon/vt-config.h"

typedef struct _VtPolicies VtPolicies;

/* `config_policies`: name -> VtVmPolicy from vtierd.conf (borrowed). */
VtPolicies *vt_policies_new (GHashTable *config_policies, const char *policy_file);
void vt_policies_free (VtPolicies *ps);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtPolicies, vt_policies_free)

/* A reloaded vtierd.conf's [vm NAME] groups (borrowed, as above). */
void vt_policies_set_config_policies (VtPolicies *ps, GHashTable *config_policies);

/* A VM found: `via` "libvirt" or "qmp", `uuid` NULL or "" when unknown.
 * A policy an older vtierd kept by name moves to the VM's UUID now. */
void vt_policies_add_vm (VtPolicies *ps, const char *name, const char *via, const char *uuid);

/* `source`: "metadata", "stored", "set", "config" or "default". */
VtVmPolicy vt_policies_get (VtPolicies *ps, const char *name, const char **source);
/* The host nodes the domain's metadata names as its tiers (guint), or NULL. */
const GArray *vt_policies_fast_nodes (VtPolicies *ps, const char *name);
const GArray *vt_policies_slow_nodes (VtPolicies *ps, const char *name);
/* Its fleet label (metadata <label>), or NULL. */
const char *vt_policies_label (VtPolicies *ps, const char *name);
/* Why its last metadata was rejected, or NULL. */
const char *vt_policies_error (VtPolicies *ps, const char *name);

/* A live change of a VM that has no metadata: kept in the policy file. */
gboolean vt_policies_set (VtPolicies *ps, const char *name, const VtVmPolicy *policy,
                          GError **error);
/* The domain's metadata element as read from libvirt (NULL: it has none). */
void vt_policies_set_metadata (VtPolicies *ps, const char *name, const char *xml);
/* The element for `policy`, keeping the domain's node lists and label. */
char *vt_policies_format_metadata (VtPolicies *ps, const char *name, const VtVmPolicy *policy);
/* The VM is gone: its metadata state goes (what the store keeps stays). */
void vt_policies_forget (VtPolicies *ps, const char *name);
