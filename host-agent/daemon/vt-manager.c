#include "daemon/vt-manager.h"

#include <errno.h>
#include <glib/gstdio.h>

#include "access/vt-access.h"
#include "common/vt-error.h"
#include "daemon/vt-policies.h"
#include "daemon/vt-vm.h"
#include "policy/vt-tiering.h"
#include "discovery/vt-guest-reader.h"
#include "discovery/vt-libvirt-discovery.h"
#include "discovery/vt-qmp-discovery.h"
#include "dbus/vt-dbus-errors.h"
#include "vt-dbus-generated.h"

#define OBJECT_PATH "/org/vtier/Manager1"

struct _VtManager {
  VtConfig *config;
  VtAccess *access;
  GHashTable *vms; /* name -> VtVm */
  VtLibvirtDiscovery *libvirt;
  VtQmpDiscovery *qmp;
  VtDBusManager1 *skeleton;
  VtTiering *tiering;
  VtPolicies *policies;
  GHashTable *guests; /* name -> VtGuestReader */
};

static VtVmPolicy
vm_policy (VtManager *m, const char *name, const char **source)
{
  return vt_policies_get (m->policies, name, source);
}

static void
tiering_inputs (GArray *inputs, gpointer data)
{
  VtManager *m = data;
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init (&it, m->vms);
  while (g_hash_table_iter_next (&it, NULL, &value)) {
    VtVm *vm = value;
    VtTracker *t = vt_vm_get_tracker (vm);
    if (!t)
      continue;
    const char *source;
    VtVmPolicy p = vm_policy (m, vt_vm_get_name (vm), &source);
    VtTieringInput in = {
      .key = vm, .name = vt_vm_get_name (vm), .pid = vt_vm_get_pid (vm),
      .max_accesses = vt_tracker_max_accesses (t), .hot_threshold = vt_tracker_hot_threshold (t),
      .size = vt_vm_get_ram_map (vm)->total, .demand = vt_tracker_demand_bytes (t),
      .weight = p.weight, .min = p.min, .max = p.max, .mode = p.mode,
      .fast_nodes = vt_policies_fast_nodes (m->policies, vt_vm_get_name (vm)),
      .slow_nodes = vt_policies_slow_nodes (m->policies, vt_vm_get_name (vm)),
    };
    in.regions = vt_tracker_regions (t, &in.n_regions);
    g_array_append_val (inputs, in);
  }
}

static void
on_snapshot (gpointer key, const VtRegion *regions, guint n, gpointer data)
{
  (void) data;
  vt_vm_load_snapshot (VT_VM (key), regions, n);
}

static void
on_found (const char *name, const char *uuid, const char *via, VtQmp *qmp, gpointer data)
{
  VtManager *m = data;
  VtVm *old = g_hash_table_lookup (m->vms, name);
  if (old) {
    g_warning ("VM %s found through %s, but a VM of that name is already tracked through %s; "
               "ignoring the second", name, via, vt_vm_get_via (old));
    return;
  }
  VtVm *vm = vt_vm_new (name, uuid, via, qmp, m->access, m->config);
  g_hash_table_insert (m->vms, g_strdup (name), vm);
  g_message ("VM %s found through %s", name, via);
  vt_vm_start (vm);
  g_autofree char *channel = vt_guest_channel_path (name);
  g_hash_table_insert (m->guests, g_strdup (name), vt_guest_reader_new (name, channel));
  if (m->skeleton)
    vt_dbus_manager1_emit_vmadded (m->skeleton, name);
}

static void
on_lost (const char *name, const char *via, gpointer data)
{
  VtManager *m = data;
  VtVm *vm = g_hash_table_lookup (m->vms, name);
  if (!vm || !g_str_equal (vt_vm_get_via (vm), via))
    return;
  g_message ("VM %s gone (%s)", name, via);
  if (m->tiering)
    vt_tiering_forget (m->tiering, vm);
  vt_vm_stop (vm);
  vt_policies_forget (m->policies, name);
  g_hash_table_remove (m->guests, name);
  g_hash_table_remove (m->vms, name);
  if (m->skeleton)
    vt_dbus_manager1_emit_vmremoved (m->skeleton, name);
}

static void
on_metadata (const char *name, const char *xml, gpointer data)
{
  VtManager *m = data;
  vt_policies_set_metadata (m->policies, name, xml);
}

/* ---- D-Bus ---- */

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (vt_vm_get_name (*(VtVm **) a), vt_vm_get_name (*(VtVm **) b));
}

/* ListVMs' dictionary: the VM's own keys and its tiering. */
static GVariant *
vm_variant (VtManager *m, VtVm *vm)
{
  g_autoptr (GVariant) own = g_variant_ref_sink (vt_vm_to_variant (vm));
  GVariantDict d;
  g_variant_dict_init (&d, own);
  const char *source;
  VtVmPolicy p = vm_policy (m, vt_vm_get_name (vm), &source);
  g_variant_dict_insert (&d, "weight", "u", p.weight);
  g_variant_dict_insert (&d, "min", "t", p.min);
  g_variant_dict_insert (&d, "max", "t", p.max);
  g_variant_dict_insert (&d, "mode", "s", vt_tier_mode_name (p.mode));
  g_variant_dict_insert (&d, "policy_source", "s", source);
  const char *policy_error = vt_policies_error (m->policies, vt_vm_get_name (vm));
  g_variant_dict_insert (&d, "policy_error", "s", policy_error ? policy_error : "");
  const GArray *nodes[] = { vt_policies_fast_nodes (m->policies, vt_vm_get_name (vm)),
                            vt_policies_slow_nodes (m->policies, vt_vm_get_name (vm)) };
  for (guint k = 0; k < 2; k++)
    g_variant_dict_insert_value (&d, k == 0 ? "fast_nodes" : "slow_nodes",
                                 g_variant_new_fixed_array (G_VARIANT_TYPE_UINT32,
                                                            nodes[k] ? nodes[k]->data : NULL,
                                                            nodes[k] ? nodes[k]->len : 0,
                                                            sizeof (guint32)));
  const VtTieringStats *st = m->tiering ? vt_tiering_stats (m->tiering, vm) : NULL;
  VtTieringStats none = { 0 };
  if (!st)
    st = &none;
  VtTracker *tracker = vt_vm_get_tracker (vm);
  g_variant_dict_insert (&d, "demand_bytes", "t", tracker ? vt_tracker_demand_bytes (tracker) : 0);
  g_variant_dict_insert (&d, "target_bytes", "t", st->target);
  g_variant_dict_insert (&d, "top_bytes", "t", st->top_bytes);
  g_variant_dict_insert (&d, "promoted_bytes", "t", st->promoted);
  g_variant_dict_insert (&d, "demoted_bytes", "t", st->demoted);
  g_variant_dict_insert (&d, "failed_bytes", "t", st->failed);
  g_variant_dict_insert (&d, "slow_bytes", "t", st->slow_bytes);
  g_variant_dict_insert (&d, "hot_top_bytes", "t", st->hot_top);
  g_variant_dict_insert (&d, "hot_slow_bytes", "t", st->hot_slow);
  g_variant_dict_insert (&d, "busy_bytes", "t", st->busy);
  g_variant_dict_insert (&d, "no_memory_bytes", "t", st->no_memory);
  g_variant_dict_insert (&d, "exchanged_bytes", "t", st->exchanged);
  g_variant_dict_insert (&d, "tiering", "s", m->tiering && st != &none
                                                 ? vt_tiering_status_name (st->status) : "");
  g_variant_dict_insert (&d, "tiering_why", "s", m->tiering && st != &none
                                                     ? vt_tiering_status_describe (st->status) : "");
  g_variant_dict_insert (&d, "move_rate", "t", m->tiering ? vt_tiering_move_rate (m->tiering) : 0);
  return g_variant_dict_end (&d);
}

static gboolean
on_list_vms (VtDBusManager1 *iface, GDBusMethodInvocation *inv, gpointer data)
{
  VtManager *m = data;
  g_autoptr (GPtrArray) vms = g_ptr_array_new ();
  GHashTableIter it;
  gpointer vm;
  g_hash_table_iter_init (&it, m->vms);
  while (g_hash_table_iter_next (&it, NULL, &vm))
    g_ptr_array_add (vms, vm);
  g_ptr_array_sort (vms, compare_names);
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE ("aa{sv}"));
  for (guint i = 0; i < vms->len; i++)
    g_variant_builder_add_value (&b, vm_variant (m, vms->pdata[i]));
  vt_dbus_manager1_complete_list_vms (iface, inv, g_variant_builder_end (&b));
  return TRUE;
}

/* The tracked VM of that name, or an error already returned to the caller. */
static VtVm *
tracked_vm (VtManager *m, GDBusMethodInvocation *inv, const char *name)
{
  VtVm *vm = g_hash_table_lookup (m->vms, name);
  if (!vm) {
    g_dbus_method_invocation_return_error (inv, VT_ERROR, VT_ERROR_NO_SUCH_VM,
                                           "no VM named '%s'", name);
    return NULL;
  }
  if (!vt_vm_get_tracker (vm)) {
    g_dbus_method_invocation_return_error (inv, VT_ERROR, VT_ERROR_BUSY,
                                           "VM %s is not tracked yet: %s%s%s", name,
                                           vt_vm_get_state (vm), vt_vm_get_error (vm) ? ": " : "",
                                           vt_vm_get_error (vm) ? vt_vm_get_error (vm) : "");
    return NULL;
  }
  return vm;
}

/* Regions cut at guest-physical boundaries (a block may have holes). */
static void
add_region (GVariantBuilder *b, const VtRamMap *map, const VtRegion *r)
{
  for (guint i = 0; i < map->blocks->len; i++) {
    const VtRamBlock *blk = map->blocks->pdata[i];
    for (guint j = 0; blk->gpa && j < blk->gpa->len; j++) {
      const VtGpaRange *g = &g_array_index (blk->gpa, VtGpaRange, j);
      guint64 hs = blk->hva + g->offset, he = hs + g->size;
      guint64 s = MAX (r->start, hs), e = MIN (r->end, he);
      if (s < e)
        g_variant_builder_add (b, "(tttuu)", g->gpa + (s - hs), g->gpa + (e - hs), s,
                               r->nr_accesses, r->age);
    }
  }
}

static gboolean
on_get_heat (VtDBusManager1 *iface, GDBusMethodInvocation *inv, const char *name, gpointer data)
{
  VtVm *vm = tracked_vm (data, inv, name);
  if (!vm)
    return TRUE;
  VtTracker *t = vt_vm_get_tracker (vm);
  const VtRegionAttrs *attrs = vt_tracker_attrs (t);
  GVariantDict info;
  g_variant_dict_init (&info, NULL);
  g_variant_dict_insert (&info, "name", "s", name);
  g_variant_dict_insert (&info, "source", "s", vt_tracker_source (t));
  g_variant_dict_insert (&info, "max_accesses", "u", vt_tracker_max_accesses (t));
  g_variant_dict_insert (&info, "sample_us", "t", attrs->sample_us);
  g_variant_dict_insert (&info, "aggr_us", "t", attrs->aggr_us);
  g_variant_dict_insert (&info, "hot_threshold", "u", vt_tracker_hot_threshold (t));

  GVariantBuilder regions;
  g_variant_builder_init (&regions, G_VARIANT_TYPE ("a(tttuu)"));
  guint n;
  const VtRegion *r = vt_tracker_regions (t, &n);
  for (guint i = 0; i < n; i++)
    add_region (&regions, vt_vm_get_ram_map (vm), &r[i]);
  vt_dbus_manager1_complete_get_heat (iface, inv, g_variant_dict_end (&info),
                                      g_variant_builder_end (&regions));
  return TRUE;
}

static gboolean
on_get_heat_history (VtDBusManager1 *iface, GDBusMethodInvocation *inv, const char *name,
                     gpointer data)
{
  VtVm *vm = tracked_vm (data, inv, name);
  if (!vm)
    return TRUE;
  VtTracker *t = vt_vm_get_tracker (vm);
  GVariantDict info;
  g_variant_dict_init (&info, NULL);
  g_variant_dict_insert (&info, "name", "s", name);
  g_variant_dict_insert (&info, "ram_bytes", "t", vt_vm_get_ram_map (vm)->total);
  g_variant_dict_insert (&info, "bins", "u", (guint32) VT_HISTORY_BINS);
  g_variant_dict_insert (&info, "aggr_us", "t", vt_tracker_attrs (t)->aggr_us);

  GVariantBuilder rows;
  g_variant_builder_init (&rows, G_VARIANT_TYPE ("a(xay)"));
  guint n;
  const VtHeatRow *h = vt_tracker_history (t, &n);
  for (guint i = 0; i < n; i++)
    g_variant_builder_add (&rows, "(x@ay)", h[i].time_us,
                           g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, h[i].bins,
                                                      VT_HISTORY_BINS, 1));
  vt_dbus_manager1_complete_get_heat_history (iface, inv, g_variant_dict_end (&info),
                                              g_variant_builder_end (&rows));
  return TRUE;
}

/* Who may call what: reading is everyone's, changes are root's. GDBus
 * emits g-authorize-method in a thread of its own for each call, so the
 * caller's uid is asked of the bus there, never from the main loop (a
 * stalled bus stalled all of vtierd before). */
static const char *const root_only[] = { "SetPolicy", "RegisterDomain", "UnregisterDomain", NULL };

static gboolean
on_authorize (GDBusInterfaceSkeleton *skeleton, GDBusMethodInvocation *inv, gpointer data)
{
  (void) skeleton, (void) data;
  const char *method = g_dbus_method_invocation_get_method_name (inv);
  if (!g_strv_contains (root_only, method))
    return TRUE;
  const char *sender = g_dbus_method_invocation_get_sender (inv);
  if (!sender)
    return TRUE; /* a peer-to-peer connection: only root can reach it */
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) reply = g_dbus_connection_call_sync (
    g_dbus_method_invocation_get_connection (inv), "org.freedesktop.DBus", "/org/freedesktop/DBus",
    "org.freedesktop.DBus", "GetConnectionUnixUser", g_variant_new ("(s)", sender),
    G_VARIANT_TYPE ("(u)"), G_DBUS_CALL_FLAGS_NONE, 2000, NULL, &error);
  guint32 uid = G_MAXUINT32;
  if (reply)
    g_variant_get (reply, "(u)", &uid);
  if (uid == 0)
    return TRUE;
  g_dbus_method_invocation_return_error (inv, VT_ERROR, VT_ERROR_NOT_AUTHORIZED,
                                         "only root may call %s%s%s", method,
                                         error ? ": the caller's uid is unknown: " : "",
                                         error ? error->message : "");
  return FALSE;
}

/* Applies SetPolicy's keys over `p`; FALSE with the message of the first bad one. */
static gboolean
apply_policy_keys (GVariant *dict, VtVmPolicy *p, char **why)
{
  GVariantIter it;
  const char *key;
  GVariant *value;
  g_variant_iter_init (&it, dict);
  while (g_variant_iter_next (&it, "{&sv}", &key, &value)) {
    g_autoptr (GVariant) v = value;
    if (g_str_equal (key, "weight") && g_variant_is_of_type (v, G_VARIANT_TYPE_UINT32) &&
        g_variant_get_uint32 (v) >= 1 && g_variant_get_uint32 (v) <= 10000)
      p->weight = g_variant_get_uint32 (v);
    else if (g_str_equal (key, "min") && g_variant_is_of_type (v, G_VARIANT_TYPE_UINT64))
      p->min = g_variant_get_uint64 (v);
    else if (g_str_equal (key, "max") && g_variant_is_of_type (v, G_VARIANT_TYPE_UINT64))
      p->max = g_variant_get_uint64 (v);
    else if (g_str_equal (key, "mode") && g_variant_is_of_type (v, G_VARIANT_TYPE_STRING) &&
             vt_tier_mode_parse (g_variant_get_string (v, NULL), &p->mode))
      ;
    else {
      g_autofree char *shown = g_variant_print (v, TRUE);
      *why = g_strdup_printf ("bad policy value %s = %s (weight: u 1..10000, min/max: t bytes, "
                              "mode: auto|fast-only|slow-only|off)", key, shown);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
on_set_policy (VtDBusManager1 *iface, GDBusMethodInvocation *inv, const char *name,
               GVariant *dict, gpointer data)
{
  VtManager *m = data;
  if (!g_hash_table_contains (m->vms, name)) {
    g_dbus_method_invocation_return_error (inv, VT_ERROR, VT_ERROR_NO_SUCH_VM,
                                           "no VM named '%s'", name);
    return TRUE;
  }
  const char *source;
  VtVmPolicy p = vm_policy (m, name, &source);
  g_autofree char *why = NULL;
  if (apply_policy_keys (dict, &p, &why) && p.min > p.max)
    why = g_strdup_printf ("min (%" G_GUINT64_FORMAT " bytes) is above max (%" G_GUINT64_FORMAT
                           " bytes)", p.min, p.max);
  if (why) {
    g_dbus_method_invocation_return_error (inv, VT_ERROR, VT_ERROR_INVALID, "%s", why);
    return TRUE;
  }
  VtVm *vm = g_hash_table_lookup (m->vms, name);
  if (m->libvirt && g_str_equal (vt_vm_get_via (vm), "libvirt")) {
    /* One source of truth for a domain: its metadata. libvirt's change
     * event brings it back here; applying it now spares the wait. */
    g_autofree char *xml = vt_policies_format_metadata (m->policies, name, &p);
    g_autoptr (GError) error = NULL;
    if (!vt_libvirt_discovery_set_metadata (m->libvirt, name, xml, &error)) {
      g_dbus_method_invocation_return_error_literal (inv, VT_ERROR, VT_ERROR_FAILED,
                                                     error->message);
      return TRUE;
    }
    vt_policies_set_metadata (m->policies, name, xml);
  } else {
    g_autoptr (GError) error = NULL;
    if (!vt_policies_set (m->policies, name, &p, &error)) {
      g_warning ("%s", error->message);
      g_dbus_method_invocation_return_error_literal (inv, VT_ERROR, VT_ERROR_FAILED,
                                                     error->message);
      return TRUE;
    }
    g_message ("VM %s: policy set: weight %u, min %" G_GUINT64_FORMAT ", max %" G_GUINT64_FORMAT
               ", mode %s", name, p.weight, p.min, p.max, vt_tier_mode_name (p.mode));
  }
  vt_dbus_manager1_complete_set_policy (iface, inv);
  return TRUE;
}

static gboolean
on_get_guest_view (VtDBusManager1 *iface, GDBusMethodInvocation *inv, const char *name,
                   gpointer data)
{
  VtManager *m = data;
  VtGuestReader *c = g_hash_table_lookup (m->guests, name);
  gint64 when = 0;
  const char *report = c ? vt_guest_reader_report (c, &when) : NULL;
  if (!report) {
    g_autofree char *why = c ? g_strdup_printf ("VM %s has not reported its view (no vtier-guest "
                                                "--report in it, or no %s channel)", name,
                                                VT_GUEST_CHANNEL_NAME)
                             : g_strdup_printf ("no VM named '%s'", name);
    g_dbus_method_invocation_return_error_literal (inv, VT_ERROR, c ? VT_ERROR_NOT_FOUND
                                                                    : VT_ERROR_NO_SUCH_VM, why);
    return TRUE;
  }
  vt_dbus_manager1_complete_get_guest_view (iface, inv, report,
                                            (g_get_monotonic_time () - when) / 1e6);
  return TRUE;
}

typedef struct {
  VtManager *m;
  char *name, *uuid;
} HookCall;

static void
register_later (gpointer data)
{
  HookCall *call = data;
  if (call->m->libvirt)
    vt_libvirt_discovery_register (call->m->libvirt, call->name, call->uuid);
  g_free (call->name);
  g_free (call->uuid);
  g_free (call);
}

/* The libvirt hook's calls: answered at once, acted on later (the hook runs
 * while libvirt holds the domain). */
static gboolean
on_register_domain (VtDBusManager1 *iface, GDBusMethodInvocation *inv, const char *name,
                    const char *uuid, gpointer data)
{
  VtManager *m = data;
  if (!m->libvirt) {
    g_dbus_method_invocation_return_error (inv, VT_ERROR, VT_ERROR_UNSUPPORTED,
                                           "vtierd does not watch libvirt ([discovery] libvirt=false)");
    return TRUE;
  }
  g_message ("libvirt hook: domain %s (%s) started", name, uuid);
  /* Looked up from the main loop, after the reply: libvirt may hold the
   * domain until the hook returns. */
  HookCall *call = g_new (HookCall, 1);
  *call = (HookCall) { m, g_strdup (name), g_strdup (uuid) };
  vt_dbus_manager1_complete_register_domain (iface, inv);
  g_idle_add_once (register_later, call);
  return TRUE;
}

static gboolean
on_unregister_domain (VtDBusManager1 *iface, GDBusMethodInvocation *inv, const char *name,
                      const char *uuid, gpointer data)
{
  VtManager *m = data;
  g_message ("libvirt hook: domain %s (%s) stopped", name, uuid);
  g_autofree char *n = g_strdup (name), *u = g_strdup (uuid);
  vt_dbus_manager1_complete_unregister_domain (iface, inv);
  if (m->libvirt)
    vt_libvirt_discovery_unregister (m->libvirt, n, u);
  return TRUE;
}

gboolean
vt_manager_export (VtManager *m, GDBusConnection *bus, GError **error)
{
  vt_dbus_errors_register ();
  m->skeleton = vt_dbus_manager1_skeleton_new ();
  vt_dbus_manager1_set_version (m->skeleton, PACKAGE_VERSION);
  vt_dbus_manager1_set_sources (m->skeleton, vt_access_available (m->access));
  g_signal_connect (m->skeleton, "g-authorize-method", G_CALLBACK (on_authorize), NULL);
  g_signal_connect (m->skeleton, "handle-list-vms", G_CALLBACK (on_list_vms), m);
  g_signal_connect (m->skeleton, "handle-get-heat", G_CALLBACK (on_get_heat), m);
  g_signal_connect (m->skeleton, "handle-get-heat-history", G_CALLBACK (on_get_heat_history), m);
  g_signal_connect (m->skeleton, "handle-set-policy", G_CALLBACK (on_set_policy), m);
  g_signal_connect (m->skeleton, "handle-get-guest-view", G_CALLBACK (on_get_guest_view), m);
  g_signal_connect (m->skeleton, "handle-register-domain", G_CALLBACK (on_register_domain), m);
  g_signal_connect (m->skeleton, "handle-unregister-domain", G_CALLBACK (on_unregister_domain), m);
  return g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (m->skeleton), bus,
                                           OBJECT_PATH, error);
}

VtManager *
vt_manager_new (VtConfig *config, const char *sysfs_root, const char *state_dir)
{
  static const VtDiscoveryEvents events = { on_found, on_lost, on_metadata };
  VtManager *m = g_new0 (VtManager, 1);
  m->config = config;
  m->vms = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  m->guests = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                     (GDestroyNotify) vt_guest_reader_free);
  m->access = vt_access_new (sysfs_root, state_dir, config->source, config->damon_slots,
                             on_snapshot, m);
  for (const char *const *s = vt_access_available (m->access); *s; s++)
    g_message ("access source available: %s", *s);
  static const char *const all[] = { "damon", "page-idle", "soft-dirty" };
  for (gsize i = 0; i < G_N_ELEMENTS (all); i++)
    if (vt_access_unavailable_reason (m->access, all[i]))
      g_message ("access source %s not available: %s", all[i],
                 vt_access_unavailable_reason (m->access, all[i]));

  m->policies = vt_policies_new (config->vm_policies, config->policy_file);
  if (g_mkdir_with_parents (VT_GUEST_CHANNEL_DIR, 0755) < 0)
    g_debug ("%s: %s (guests' reports are read from there)", VT_GUEST_CHANNEL_DIR, g_strerror (errno));
  if (config->tiering) {
    VtTieringConfig tc = {
      config->tiering_interval_ms, config->reserve_bytes, config->low_watermark_pct,
      config->high_watermark_pct, config->migrate_bytes_per_s, config->migrate_cpu_ms_per_s,
      config->promote_min_age, config->demote_min_age, config->cold_max_pct, config->cooldown_s,
    };
    m->tiering = vt_tiering_new (&tc, tiering_inputs, m);
  }
  if (config->libvirt)
    m->libvirt = vt_libvirt_discovery_new (config->libvirt_uri, config->qmp_timeout_ms, &events, m);
  if (config->qmp_dirs && config->qmp_dirs[0])
    m->qmp = vt_qmp_discovery_new ((const char *const *) config->qmp_dirs, config->qmp_timeout_ms,
                                   &events, m);
  return m;
}

void
vt_manager_free (VtManager *m)
{
  if (!m)
    return;
  /* Tiering first (it reads the VMs), then the VMs (their trackers hold
   * access targets). */
  g_clear_pointer (&m->tiering, vt_tiering_free);
  g_clear_pointer (&m->libvirt, vt_libvirt_discovery_free);
  g_clear_pointer (&m->qmp, vt_qmp_discovery_free);
  g_hash_table_remove_all (m->vms);
  g_hash_table_unref (m->vms);
  g_hash_table_unref (m->guests);
  g_clear_pointer (&m->access, vt_access_free);
  if (m->skeleton)
    g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (m->skeleton));
  g_clear_object (&m->skeleton);
  vt_policies_free (m->policies);
  vt_config_free (m->config);
  g_free (m);
}
