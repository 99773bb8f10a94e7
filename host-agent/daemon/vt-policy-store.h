/* vtierd's own store of VM policies (the policy file), so that they outlive
 * a vtierd restart and a domain XML regenerated without vtier's metadata
 * (OpenStack Nova rewrites it at a hard reboot): what `vtierctl set` set on
 * a VM without domain metadata, and a copy of each libvirt domain's vtier
 * metadata. A key file, one group a VM, keyed by how it is found and its
 * UUID where it has one, else by name:
 *
 *   [libvirt UUID]   a libvirt domain (the copy of its metadata)
 *   [qmp UUID]       a bare QEMU VM whose QMP query-uuid is not all zeros
 *   [vm NAME]        a bare QEMU VM without one
 *
 * Keys: weight, min, max, mode (as in a [vm NAME] group of vtierd.conf);
 * name (the VM's name when kept, for people), label, fast-nodes, slow-nodes
 * when known. The file of an older vtierd has [vm NAME] groups alone: they
 * load as they are, and move to the VM's UUID group when a VM of that name
 * is found with a UUID (vt-policies.c). */
#pragma once

#include "daemon/vt-config.h"

typedef struct {
  VtVmPolicy policy;
  char *name;            /* the VM's name when kept, or NULL */
  char *label;           /* its fleet label, or NULL */
  GArray *fast, *slow;   /* guint host nodes, or NULL */
} VtPolicyEntry;

VtPolicyEntry *vt_policy_entry_new (const VtVmPolicy *policy, const char *name);
VtPolicyEntry *vt_policy_entry_copy (const VtPolicyEntry *entry);
gboolean vt_policy_entry_equal (const VtPolicyEntry *a, const VtPolicyEntry *b);
void vt_policy_entry_free (VtPolicyEntry *entry);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtPolicyEntry, vt_policy_entry_free)

/* The group of a VM: "VIA UUID" when `uuid` is given (not NULL, not ""),
 * else "vm NAME". */
char *vt_policy_store_key (const char *via, const char *uuid, const char *name);
/* Whether the group is by UUID. */
gboolean vt_policy_store_key_has_uuid (const char *key);

/* group -> VtPolicyEntry; a missing file is an empty table. Problems (bad
 * values, unknown groups) are logged and the defaults kept. */
GHashTable *vt_policy_store_load (const char *path);
gboolean vt_policy_store_save (const char *path, GHashTable *entries, GError **error);
