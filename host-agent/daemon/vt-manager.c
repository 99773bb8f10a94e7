/* The registry of VMs and what feeds it: discovery's found/lost/metadata
 * events, the policies, the tiering engine's inputs and the access sources'
 * snapshots. The D-Bus API on top of it is vt-manager-bus.c. */
#include "daemon/vt-manager-private.h"

#include <errno.h>

#include "access/vt-access.h"
#include "common/vt-error.h"
#include "discovery/vt-guest-reader.h"
#include "discovery/vt-libvirt-discovery.h"
#include "discovery/vt-qmp-discovery.h"
#include "daemon/vt-kernel-engine.h"
#include "policy/vt-domain-metadata.h"
#include "policy/vt-start-placement.h"
#include "policy/vt-tiers.h"

struct _VtManager {
  VtConfig *config;
  VtAccess *access;
  GHashTable *vms; /* name -> VtVm */
  VtLibvirtDiscovery *libvirt;
  VtQmpDiscovery *qmp;
  VtManagerBus *bus; /* NULL until exported */
  VtManagerMetrics *metrics; /* NULL unless [metrics] listen or textfile */
  VtTiering *tiering;
  VtPolicies *policies;
  GHashTable *guests; /* name -> VtGuestReader */
  GHashTable *at_target; /* the VMs at their target as of their last round (a set) */
  VtKernelEngine *kernel; /* which VMs the kernel's DAMOS moves, and their goals */
  VtPercpuLists *percpu; /* NULL unless vtierd holds the per-CPU lists small */
  char *state_dir;
};

/* hugetlbfs: the page size of the VM's largest RAM block, when it is one
 * (the tiering engine plans its moves into the pools' free pages); 0. */
static guint64
huge_page_size (const VtRamMap *map)
{
  const VtRamBlock *largest = NULL;
  for (guint i = 0; i < map->blocks->len; i++) {
    const VtRamBlock *b = g_ptr_array_index (map->blocks, i);
    if (!largest || b->size > largest->size)
      largest = b;
  }
  return largest && largest->page_size > 4096 ? largest->page_size : 0;
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
    VtVmPolicy p = vt_policies_get (m->policies, vt_vm_get_name (vm), &source);
    VtTieringInput in = {
      .key = vm, .name = vt_vm_get_name (vm), .process = *vt_vm_get_process (vm),
      .size = vt_vm_get_ram_map (vm)->total,
      .huge_page_size = huge_page_size (vt_vm_get_ram_map (vm)),
      .weight = p.weight, .min = p.min, .max = p.max,
      .interleave_top = p.interleave_top, .interleave_slow = p.interleave_slow,
      /* VFIO pins all of its RAM: managed as off (its bytes stay where they
       * are, outside the division), and said so. */
      .mode = vt_vm_get_vfio_device (vm) ? VT_TIER_MODE_OFF : p.mode,
      .pinned_by = vt_vm_get_vfio_device (vm),
      .fast_nodes = vt_policies_fast_nodes (m->policies, vt_vm_get_name (vm)),
      .slow_nodes = vt_policies_slow_nodes (m->policies, vt_vm_get_name (vm)),
    };
    vt_tracker_fill_heat (t, &in);
    vt_vm_follow_interleave (vm, in.mode == VT_TIER_MODE_INTERLEAVE);
    in.kernel_moves = vt_kernel_engine_choose (m->kernel, vm, m->config->tiering_engine, &in) ==
                      VT_TIERING_ENGINE_KERNEL;
    in.written = vt_vm_regions_written (vm, in.regions, in.n_regions);
    g_array_append_val (inputs, in);
  }
}

static void
on_snapshot (gpointer key, const VtRegion *regions, guint n, guint64 sample_us, guint64 aggr_us,
             gpointer data)
{
  (void) data;
  vt_vm_load_snapshot (VT_VM (key), regions, n, sample_us, aggr_us);
}

/* Its QEMU's own memory's regions, from the same aggregation. */
static void
on_beside (gpointer key, const VtRegion *regions, guint n, guint64 sample_us, guint64 aggr_us,
           gpointer data)
{
  (void) data;
  vt_vm_load_beside (VT_VM (key), regions, n, sample_us, aggr_us);
}

/* ---- what the registry tells its bus layer ---- */

static void
notify (VtManager *m, VtManagerEventKind kind, VtVm *vm, VtVmState old_state,
        const VtTieringStats *stats)
{
  VtManagerEvent event = { kind, vm, old_state, stats };
  vt_manager_bus_notify (m->bus, &event);
}

static void
on_vm_state (VtVm *vm, VtVmState old_state, gpointer data)
{
  notify (data, VT_MANAGER_EVENT_VM_STATE_CHANGED, vm, old_state, NULL);
}

/* Transitions only: a VM at its target round after round is told once. A
 * VM's first round counts as a transition when it finds it at its target
 * (it was not known to be before), not when it finds it away. */
void
vt_manager_note_tiering (VtManager *m, VtVm *vm, const VtTieringStats *stats)
{
  gboolean now = stats->status == VT_TIERING_STATUS_AT_TARGET;
  if (now == g_hash_table_contains (m->at_target, vm))
    return;
  if (now)
    g_hash_table_add (m->at_target, vm);
  else
    g_hash_table_remove (m->at_target, vm);
  notify (m, now ? VT_MANAGER_EVENT_TARGET_REACHED : VT_MANAGER_EVENT_TARGET_LEFT, vm,
          vt_vm_get_state (vm), stats);
}

static void
on_planned (gpointer data)
{
  VtManager *m = data;
  g_autoptr (GPtrArray) vms = vt_manager_list_vms (m);
  for (guint i = 0; i < vms->len; i++) {
    const VtTieringStats *st = vt_tiering_stats (m->tiering, vms->pdata[i]);
    VtTracker *tracker = vt_vm_get_tracker (vms->pdata[i]);
    if (st)
      vt_manager_note_tiering (m, vms->pdata[i], st);
    if (st && tracker)
      vt_tracker_note_share (tracker, st->demand, st->target, st->ref_scale);
    gint64 when = 0;
    const GArray *node_bytes = vt_tiering_node_bytes (m->tiering, vms->pdata[i], &when);
    if (node_bytes)
      vt_vm_set_measured_node_bytes (vms->pdata[i], node_bytes, when);
    /* Its QEMU's own memory follows the tiers the engine moves it between;
     * not for a VM the engine leaves alone (mode off, a strict cpuset). */
    gboolean moves = st && st->status != VT_TIERING_STATUS_OFF &&
                     st->status != VT_TIERING_STATUS_PINNED;
    guint64 room = st && st->top_node_free > st->top_keep_free
                     ? st->top_node_free - st->top_keep_free : 0;
    if (st)
      vt_vm_tier_qemu_memory (vms->pdata[i], moves ? st->top_node : -1,
                              moves ? st->slow_node : -1, room / MAX (vms->len, 1),
                              m->config->qemu_memory_interval_s);
  }
  vt_kernel_engine_apply (m->kernel, vms, m->tiering, m->config);
}

/* ---- what discovery reports ---- */

/* A domain's share of the top tier were it to start now with all of its
 * RAM wanting it: the tiering engine's own division beside the VMs
 * running now (vt_tiering_share_beside), so others' mins, caps, modes and
 * pins count as they do each round. */
static VtTieringConfig tiering_config (const VtConfig *config);

static guint64
pinned_share (VtManager *m, const VtVmPolicy *p, guint64 ram_bytes, guint64 capacity)
{
  VtShareRequest own = { p->weight, p->min, p->max, p->mode, ram_bytes, ram_bytes, 0 };
  if (m->tiering)
    return vt_tiering_share_beside (m->tiering, &own, capacity);
  guint64 target = 0;
  vt_fair_share_compute (capacity, &own, 1, &target);
  return target;
}

/* A defined domain whose RAM a VFIO device will pin ([tiering]
 * place-pinned): its RAM's placement at start from its policy (its
 * metadata, else what vtierd has for its name) and its weighted share of
 * the top tier beside the VMs running now (vt-start-placement.h). */
static void
on_pinned_defined (const char *name, const char *uuid, guint64 ram_bytes, const char *metadata,
                   gpointer data)
{
  VtManager *m = data;
  if (!m->config->place_pinned || !m->libvirt)
    return;
  const char *source;
  VtVmPolicy p = vt_policies_get (m->policies, name, &source);
  g_autoptr (GArray) fast_nodes = NULL, slow_nodes = NULL;
  g_autoptr (GError) error = NULL;
  if (metadata && !vt_domain_metadata_parse (metadata, &p, &fast_nodes, &slow_nodes, NULL, &error))
    g_message ("domain %s (%s): its vtier metadata is rejected (%s); placing it by %s policy",
               name, uuid, error->message, source);
  g_autoptr (VtHostTiers) tiers = vt_host_tiers_read (&error);
  if (!tiers) {
    g_warning ("domain %s: its RAM will be pinned by VFIO, and the host's tiers are unknown "
               "(%s): it starts as it is defined", name, error->message);
    return;
  }
  /* The engine's, before any host use: what its rounds divide at most. */
  VtTieringConfig tc = tiering_config (m->config);
  VtFreeTargets marks = vt_tiering_free_targets (&tc, tiers->top_total,
                                                 tiers->top_kernel_floor, tiers->top_kernel_step);
  guint64 keep = MAX (m->config->reserve_bytes, marks.low);
  guint64 capacity = tiers->top_total > keep ? tiers->top_total - keep : 0;
  guint64 share = pinned_share (m, &p, ram_bytes, capacity);
  int fast = vt_host_tiers_pick (tiers, TRUE, NULL, fast_nodes);
  int slow = vt_host_tiers_pick (tiers, FALSE, NULL, slow_nodes);
  VtStartPlacement placement;
  if (!vt_start_placement (ram_bytes, share, p.mode, fast, slow, &placement))
    return;
  g_autofree char *nodeset = placement.nodeset;
  g_message ("domain %s: its RAM (%" G_GUINT64_FORMAT " MiB) will be pinned by VFIO and its "
             "share of the top tier is %" G_GUINT64_FORMAT " MiB (mode %s): placing it %s on "
             "node(s) %s", name, ram_bytes >> 20, share >> 20, vt_tier_mode_name (p.mode),
             placement.mode, nodeset);
  vt_libvirt_discovery_place_at_start (m->libvirt, name, placement.mode, nodeset);
}

void
vt_manager_add_vm (VtManager *m, const char *name, const char *uuid, const char *via, VtQmp *qmp)
{
  VtVm *old = g_hash_table_lookup (m->vms, name);
  if (old) {
    g_warning ("VM %s found through %s, but a VM of that name is already tracked through %s; "
               "ignoring the second", name, via, vt_vm_get_via (old));
    return;
  }
  VtVm *vm = vt_vm_new (name, uuid, via, qmp, m->access, m->config);
  g_hash_table_insert (m->vms, g_strdup (name), vm);
  g_message ("VM %s found through %s", name, via);
  vt_policies_add_vm (m->policies, name, via, uuid);
  g_autofree char *channel = vt_guest_channel_path (name);
  g_hash_table_insert (m->guests, g_strdup (name), vt_guest_reader_new (name, channel));
  /* Told before its set-up starts, so that no change of its state comes
   * before the VM itself. */
  notify (m, VT_MANAGER_EVENT_VM_ADDED, vm, vt_vm_get_state (vm), NULL);
  vt_vm_set_state_func (vm, on_vm_state, m);
  vt_vm_start (vm);
}

void
vt_manager_remove_vm (VtManager *m, const char *name, const char *via)
{
  VtVm *vm = g_hash_table_lookup (m->vms, name);
  if (!vm || !g_str_equal (vt_vm_get_via (vm), via))
    return;
  g_message ("VM %s gone (%s)", name, via);
  /* Told while it is whole; its stopping is its removal, not a state. */
  notify (m, VT_MANAGER_EVENT_VM_REMOVED, vm, vt_vm_get_state (vm), NULL);
  vt_vm_set_state_func (vm, NULL, NULL);
  g_hash_table_remove (m->at_target, vm);
  vt_kernel_engine_forget (m->kernel, vm);
  if (m->tiering)
    vt_tiering_forget (m->tiering, vm);
  vt_vm_stop (vm);
  vt_policies_forget (m->policies, name);
  g_hash_table_remove (m->guests, name);
  g_hash_table_remove (m->vms, name);
}

static void
on_found (const char *name, const char *uuid, const char *via, VtQmp *qmp, gpointer data)
{
  vt_manager_add_vm (data, name, uuid, via, qmp);
}

static void
on_lost (const char *name, const char *via, gpointer data)
{
  vt_manager_remove_vm (data, name, via);
}

static void
on_metadata (const char *name, const char *xml, gpointer data)
{
  VtManager *m = data;
  vt_policies_set_metadata (m->policies, name, xml);
}

/* ---- for the bus layer ---- */

VtVm *
vt_manager_lookup_vm (VtManager *m, const char *name)
{
  return g_hash_table_lookup (m->vms, name);
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (vt_vm_get_name (*(VtVm **) a), vt_vm_get_name (*(VtVm **) b));
}

GPtrArray *
vt_manager_list_vms (VtManager *m)
{
  GPtrArray *vms = g_ptr_array_sized_new (g_hash_table_size (m->vms));
  GHashTableIter it;
  gpointer vm;
  g_hash_table_iter_init (&it, m->vms);
  while (g_hash_table_iter_next (&it, NULL, &vm))
    g_ptr_array_add (vms, vm);
  g_ptr_array_sort (vms, compare_names);
  return vms;
}

VtPolicies *
vt_manager_get_policies (VtManager *m)
{
  return m->policies;
}

VtTiering *
vt_manager_get_tiering (VtManager *m)
{
  return m->tiering;
}

const char *const *
vt_manager_get_sources (VtManager *m)
{
  return vt_access_available (m->access);
}

gboolean
vt_manager_set_policy (VtManager *m, const char *name, const VtVmPolicy *policy, GError **error)
{
  VtVm *vm = g_hash_table_lookup (m->vms, name);
  g_return_val_if_fail (vm != NULL, FALSE);
  if (m->libvirt && g_str_equal (vt_vm_get_via (vm), "libvirt")) {
    /* One source of truth for a domain: its metadata. libvirt's change
     * event brings it back here; applying it now spares the wait. */
    g_autofree char *xml = vt_policies_format_metadata (m->policies, name, policy);
    if (!vt_libvirt_discovery_set_metadata (m->libvirt, name, xml, error))
      return FALSE;
    vt_policies_set_metadata (m->policies, name, xml);
    return TRUE;
  }
  g_autoptr (GError) local = NULL;
  if (!vt_policies_set (m->policies, name, policy, &local)) {
    g_warning ("%s", local->message);
    g_propagate_error (error, g_steal_pointer (&local));
    return FALSE;
  }
  g_message ("VM %s: policy set: weight %u, min %" G_GUINT64_FORMAT ", max %" G_GUINT64_FORMAT
             ", mode %s", name, policy->weight, policy->min, policy->max,
             vt_tier_mode_name (policy->mode));
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

gboolean
vt_manager_register_domain (VtManager *m, const char *name, const char *uuid, GError **error)
{
  if (!m->libvirt) {
    g_set_error_literal (error, VT_ERROR, VT_ERROR_UNSUPPORTED,
                         "vtierd does not watch libvirt ([discovery] libvirt=false)");
    return FALSE;
  }
  g_message ("libvirt hook: domain %s (%s) started", name, uuid);
  /* Looked up from the main loop, after the reply: libvirt may hold the
   * domain until the hook returns. */
  HookCall *call = g_new (HookCall, 1);
  *call = (HookCall) { m, g_strdup (name), g_strdup (uuid) };
  g_idle_add_once (register_later, call);
  return TRUE;
}

void
vt_manager_unregister_domain (VtManager *m, const char *name, const char *uuid)
{
  g_message ("libvirt hook: domain %s (%s) stopped", name, uuid);
  if (m->libvirt)
    vt_libvirt_discovery_unregister (m->libvirt, name, uuid);
}

const char *
vt_manager_get_guest_view (VtManager *m, const char *name, gint64 *received_us, GError **error)
{
  VtGuestReader *c = g_hash_table_lookup (m->guests, name);
  if (!c) {
    g_set_error (error, VT_ERROR, VT_ERROR_NO_SUCH_VM, "no VM named '%s'", name);
    return NULL;
  }
  const char *report = vt_guest_reader_report (c, received_us);
  if (!report)
    g_set_error (error, VT_ERROR, VT_ERROR_NOT_FOUND,
                 "VM %s has not reported its view (no vtier-guest --report in it, or no %s "
                 "channel)", name, VT_GUEST_CHANNEL_NAME);
  return report;
}

/* ---- life ---- */

gboolean
vt_manager_export (VtManager *m, GDBusConnection *connection, GError **error)
{
  m->bus = vt_manager_bus_new (m, connection, error);
  return m->bus != NULL;
}

static void
log_sources (VtAccess *access)
{
  for (const char *const *s = vt_access_available (access); *s; s++)
    g_message ("access source available: %s", *s);
  static const char *const all[] = { "damon", "page-idle", "soft-dirty" };
  for (gsize i = 0; i < G_N_ELEMENTS (all); i++)
    if (vt_access_unavailable_reason (access, all[i]))
      g_message ("access source %s not available: %s", all[i],
                 vt_access_unavailable_reason (access, all[i]));
}

static VtTieringConfig
tiering_config (const VtConfig *config)
{
  /* By name: a field added to VtTieringConfig cannot take another's value. */
  return (VtTieringConfig) {
    .interval_ms = config->tiering_interval_ms,
    .reserve_bytes = config->reserve_bytes,
    .low_watermark_pct = config->low_watermark_pct,
    .high_watermark_pct = config->high_watermark_pct,
    .bytes_per_s = config->migrate_bytes_per_s,
    .cpu_ms_per_s = config->migrate_cpu_ms_per_s,
    /* Counted in the configured aggregations, which a VM tracked since
     * before a reload changed aggr-us does not share (its ages then
     * read short or long by the ratio until it is tracked again). */
    .promote_min_age = vt_config_age_aggregations (config->promote_min_age, config->aggr_us),
    .demote_min_age = vt_config_age_aggregations (config->demote_min_age, config->aggr_us),
    .refill_min_age = vt_config_age_aggregations (config->refill_min_age, config->aggr_us),
    .cold_max_pct = config->cold_max_pct,
    .exchange_gap_pct = config->exchange_gap_pct,
    .cooldown_s = config->cooldown_s,
    .residency_refresh_rounds = config->residency_refresh_rounds,
  };
}

static VtTiering *
tiering_new (const VtConfig *config, VtManager *m)
{
  VtTieringConfig tc = tiering_config (config);
  vt_migrate_set_priority (config->migrate_priority);
  VtTiering *t = vt_tiering_new (&tc, tiering_inputs, m);
  vt_tiering_set_planned_func (t, on_planned, m);
  return t;
}

/* The per-CPU lists small while vtierd tiers with [tiering]
 * per-cpu-lists = small, as the kernel has them otherwise. */
static void
percpu_lists_apply (VtManager *m)
{
  const VtConfig *config = m->config;
  gboolean want = config->tiering && config->percpu_lists == VT_PERCPU_LISTS_SMALL;
  if (!want) {
    if (m->percpu)
      g_message ("per-CPU lists: the kernel's size put back");
    g_clear_pointer (&m->percpu, vt_percpu_lists_release);
    return;
  }
  if (m->percpu)
    return;
  g_autoptr (GError) error = NULL;
  g_autofree char *state = g_build_filename (m->state_dir, "percpu-lists", NULL);
  m->percpu = vt_percpu_lists_hold (state, &error);
  if (m->percpu)
    g_message ("per-CPU lists: vm.percpu_pagelist_high_fraction %" G_GUINT64_FORMAT
               " -> %" G_GUINT64_FORMAT " while vtierd tiers (four batches a list: a freed "
               "huge page is room for a promotion)", vt_percpu_lists_found (m->percpu),
               vt_percpu_lists_set_to (m->percpu));
  else
    g_message ("per-CPU lists left as they are: %s", error->message);
}

/* The scrape endpoint and the textfile, as the config says (none: none). */
static void
metrics_start (VtManager *m)
{
  const VtConfig *config = m->config;
  if (!config->metrics_listen && !config->metrics_textfile)
    return;
  g_autoptr (GError) error = NULL;
  m->metrics = vt_manager_metrics_new (m, config->metrics_listen, config->metrics_textfile,
                                       &error);
  if (!m->metrics) {
    g_warning ("%s; no metrics served", error->message);
    return;
  }
  g_autofree char *uri = vt_manager_metrics_uri (m->metrics);
  if (uri)
    g_message ("metrics at %smetrics", uri);
  if (config->metrics_textfile)
    g_message ("metrics written to %s", config->metrics_textfile);
}

VtManager *
vt_manager_new (VtConfig *config, const char *sysfs_root, const char *state_dir)
{
  static const VtDiscoveryEvents events = { on_found, on_lost, on_metadata, on_pinned_defined };
  VtManager *m = g_new0 (VtManager, 1);
  m->config = config;
  m->vms = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  m->guests = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                     (GDestroyNotify) vt_guest_reader_free);
  m->at_target = g_hash_table_new (NULL, NULL);
  m->state_dir = g_strdup (state_dir);
  m->kernel = vt_kernel_engine_new ();
  m->access = vt_access_new (sysfs_root, state_dir, config->source, config->damon_slots,
                             on_snapshot, m);
  vt_access_set_beside_func (m->access, on_beside, m);
  log_sources (m->access);
  m->policies = vt_policies_new (config->vm_policies, config->policy_file);
  if (g_mkdir_with_parents (VT_GUEST_CHANNEL_DIR, 0755) < 0)
    g_debug ("%s: %s (guests' reports are read from there)", VT_GUEST_CHANNEL_DIR,
             g_strerror (errno));
  if (config->tiering)
    m->tiering = tiering_new (config, m);
  percpu_lists_apply (m);
  if (config->libvirt)
    m->libvirt = vt_libvirt_discovery_new (config->libvirt_uri, config->qmp_timeout_ms, &events, m);
  if (config->qmp_dirs && config->qmp_dirs[0])
    m->qmp = vt_qmp_discovery_new ((const char *const *) config->qmp_dirs, config->qmp_timeout_ms,
                                   &events, m);
  metrics_start (m);
  return m;
}

static gboolean
any_changed (GPtrArray *changed, const char *prefix)
{
  for (guint i = 0; i < changed->len; i++)
    if (g_str_has_prefix (changed->pdata[i], prefix))
      return TRUE;
  return FALSE;
}

static char *
join_changes (GPtrArray *changed)
{
  g_ptr_array_add (changed, NULL);
  char *text = g_strjoinv (", ", (char **) changed->pdata);
  g_ptr_array_remove_index (changed, changed->len - 1);
  return text;
}

void
vt_manager_reload (VtManager *m, VtConfig *config)
{
  g_autoptr (GPtrArray) now = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) new_vms = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) restart = g_ptr_array_new_with_free_func (g_free);
  GPtrArray *changed[VT_CONFIG_APPLY_N] = { now, new_vms, restart };
  vt_config_diff (m->config, config, changed);
  vt_config_keep_restart_options (config, m->config);
  VtConfig *old = m->config;
  m->config = config;
  /* The policies borrow the config's [vm NAME] table: theirs first. */
  vt_policies_set_config_policies (m->policies, config->vm_policies);

  if (any_changed (now, "[tiering]")) {
    if (config->tiering && m->tiering) {
      VtTieringConfig tc = tiering_config (config);
      vt_tiering_set_config (m->tiering, &tc);
      vt_migrate_set_priority (config->migrate_priority);
    } else if (config->tiering) {
      m->tiering = tiering_new (config, m);
    } else {
      g_clear_pointer (&m->tiering, vt_tiering_free); /* a move under way is cancelled */
    }
    percpu_lists_apply (m);
  }
  if (any_changed (now, "[metrics]")) {
    g_clear_pointer (&m->metrics, vt_manager_metrics_free);
    metrics_start (m);
  }
  vt_config_free (old); /* VMs keep theirs for their tracking */

  if (!now->len && !new_vms->len && !restart->len) {
    g_message ("configuration reloaded: nothing changed");
    return;
  }
  g_autoptr (GString) said = g_string_new ("configuration reloaded");
  if (now->len) {
    g_autofree char *list = join_changes (now);
    g_string_append_printf (said, "; in effect now: %s", list);
  }
  if (new_vms->len) {
    g_autofree char *list = join_changes (new_vms);
    g_string_append_printf (said, "; for VMs found from now on: %s", list);
  }
  g_message ("%s", said->str);
  if (restart->len) {
    g_autofree char *list = join_changes (restart);
    g_warning ("configuration reloaded: %s changed, in effect only when vtierd restarts; "
               "the running values stay", list);
  }
}

void
vt_manager_free (VtManager *m)
{
  if (!m)
    return;
  /* Tiering first (it reads the VMs), then the VMs (their trackers hold
   * access targets). */
  g_clear_pointer (&m->metrics, vt_manager_metrics_free);
  g_clear_pointer (&m->tiering, vt_tiering_free);
  g_clear_pointer (&m->percpu, vt_percpu_lists_release);
  g_clear_pointer (&m->kernel, vt_kernel_engine_free);
  g_clear_pointer (&m->libvirt, vt_libvirt_discovery_free);
  g_clear_pointer (&m->qmp, vt_qmp_discovery_free);
  /* Their stopping is vtierd's exit, not news. */
  GHashTableIter it;
  gpointer vm;
  g_hash_table_iter_init (&it, m->vms);
  while (g_hash_table_iter_next (&it, NULL, &vm))
    vt_vm_set_state_func (vm, NULL, NULL);
  g_hash_table_remove_all (m->vms);
  g_hash_table_unref (m->vms);
  g_hash_table_unref (m->guests);
  g_hash_table_unref (m->at_target);
  g_clear_pointer (&m->access, vt_access_free);
  g_clear_pointer (&m->bus, vt_manager_bus_free);
  vt_policies_free (m->policies);
  vt_config_free (m->config);
  g_free (m->state_dir);
  g_free (m);
}

VtManagerMetrics *
vt_manager_get_metrics (VtManager *m)
{
  return m->metrics;
}

/* ---- what ListVMs and the metrics say of a VM ---- */

static GVariant *
nodes_variant (const GArray *nodes)
{
  return g_variant_new_fixed_array (G_VARIANT_TYPE_UINT32, nodes ? nodes->data : NULL,
                                    nodes ? nodes->len : 0, sizeof (guint32));
}

/* The keys of the VM's policy and where it comes from. */
static void
add_policy (GVariantDict *d, VtPolicies *policies, const char *name)
{
  const char *source;
  VtVmPolicy p = vt_policies_get (policies, name, &source);
  g_variant_dict_insert (d, "weight", "u", p.weight);
  g_variant_dict_insert (d, "min", "t", p.min);
  g_variant_dict_insert (d, "max", "t", p.max);
  g_variant_dict_insert (d, "mode", "s", vt_tier_mode_name (p.mode));
  g_autofree char *ratio = vt_interleave_format (p.interleave_top, p.interleave_slow);
  g_variant_dict_insert (d, "interleave", "s", ratio);
  g_variant_dict_insert (d, "policy_source", "s", source);
  const char *policy_error = vt_policies_error (policies, name);
  g_variant_dict_insert (d, "policy_error", "s", policy_error ? policy_error : "");
  const char *label = vt_policies_label (policies, name);
  g_variant_dict_insert (d, "label", "s", label ? label : "");
  g_variant_dict_insert_value (d, "fast_nodes",
                               nodes_variant (vt_policies_fast_nodes (policies, name)));
  g_variant_dict_insert_value (d, "slow_nodes",
                               nodes_variant (vt_policies_slow_nodes (policies, name)));
}

/* The keys of its tiering: zeros and "" until the engine has seen it. */
static void
add_tiering (GVariantDict *d, VtTiering *tiering, VtVm *vm)
{
  const VtTieringStats *st = tiering ? vt_tiering_stats (tiering, vm) : NULL;
  static const VtTieringStats none = { 0 };
  const VtTieringStats *s = st ? st : &none;
  VtTracker *tracker = vt_vm_get_tracker (vm);
  /* The demand its share was divided by, once the engine has seen it. */
  g_variant_dict_insert (d, "demand_bytes", "t",
                         st ? st->demand : tracker ? vt_tracker_demand_bytes (tracker) : 0);
  g_variant_dict_insert (d, "demand_scale", "u", s->demand_scale);
  g_variant_dict_insert (d, "target_bytes", "t", s->target);
  g_variant_dict_insert (d, "top_bytes", "t", s->top_bytes);
  g_variant_dict_insert (d, "promoted_bytes", "t", s->promoted);
  g_variant_dict_insert (d, "demoted_bytes", "t", s->demoted);
  g_variant_dict_insert (d, "failed_bytes", "t", s->failed);
  g_variant_dict_insert (d, "slow_bytes", "t", s->slow_bytes);
  g_variant_dict_insert (d, "hot_top_bytes", "t", s->hot_top);
  g_variant_dict_insert (d, "hot_slow_bytes", "t", s->hot_slow);
  g_variant_dict_insert (d, "hot_slow_young_bytes", "t", s->hot_slow_young);
  g_variant_dict_insert (d, "hot_slow_cooling_bytes", "t", s->hot_slow_cooling);
  g_variant_dict_insert (d, "hot_slow_no_block_bytes", "t", s->hot_slow_no_block);
  g_variant_dict_insert (d, "warm_slow_bytes", "t", s->warm_slow);
  g_variant_dict_insert (d, "busy_bytes", "t", s->busy);
  g_variant_dict_insert (d, "no_memory_bytes", "t", s->no_memory);
  g_variant_dict_insert (d, "failed_shared_bytes", "t", s->shared);
  g_variant_dict_insert (d, "failed_other_bytes", "t",
                         s->failed - MIN (s->failed, s->no_memory + s->shared));
  g_variant_dict_insert (d, "exchanged_bytes", "t", s->exchanged);
  g_variant_dict_insert (d, "filled_bytes", "t", s->filled);
  g_variant_dict_insert (d, "promoted_at_share_bytes", "t", s->at_share);
  g_variant_dict_insert (d, "moving_up_bytes", "t", s->moving_up);
  g_variant_dict_insert (d, "moving_down_bytes", "t", s->moving_down);
  g_variant_dict_insert (d, "unmovable_bytes", "t", s->unmovable);
  g_variant_dict_insert (d, "unmovable_reason", "s", vt_unmovable_reason_name (s->unmovable_reason));
  g_variant_dict_insert (d, "tiering", "s", st ? vt_tiering_status_name (st->status) : "");
  g_variant_dict_insert (d, "tiering_why", "s", st ? vt_tiering_status_describe (st->status) : "");
  g_variant_dict_insert (d, "move_rate", "t", tiering ? vt_tiering_move_rate (tiering) : 0);
  g_variant_dict_insert (d, "tiering_rounds", "t", s->rounds);
}

/* Who moves its memory, and why not the kernel when [tiering] engine
 * asked for it. */
static void
add_engine (GVariantDict *d, VtKernelEngine *kernel, VtVm *vm)
{
  const char *why;
  VtTieringEngine engine = vt_kernel_engine_of (kernel, vm, &why);
  g_variant_dict_insert (d, "engine", "s", vt_tiering_engine_name (engine));
  g_variant_dict_insert (d, "engine_why", "s", why ? why : "");
}

GVariant *
vt_manager_vm_info (VtManager *m, VtVm *vm)
{
  g_autoptr (GVariant) own = g_variant_ref_sink (vt_vm_to_variant (vm));
  GVariantDict d;
  g_variant_dict_init (&d, own);
  add_policy (&d, vt_manager_get_policies (m), vt_vm_get_name (vm));
  add_tiering (&d, vt_manager_get_tiering (m), vm);
  add_engine (&d, m->kernel, vm);
  return g_variant_dict_end (&d);
}

GVariant *
vt_manager_move_rates (VtManager *m)
{
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE ("a(uusttd)"));
  g_autoptr (GArray) rates = m->tiering ? vt_move_rates_list (vt_tiering_move_rates (m->tiering))
                                        : NULL;
  for (guint i = 0; rates && i < rates->len; i++) {
    const VtMoveRate *r = &g_array_index (rates, VtMoveRate, i);
    g_variant_builder_add (&b, "(uusttd)", r->key.from, r->key.to,
                           vt_page_class_name (r->key.page_class), (guint64) r->bytes_per_cpu_s,
                           r->bytes, r->cpu_us / 1e6);
  }
  return g_variant_builder_end (&b);
}

GVariant *
vt_manager_list_info (VtManager *m)
{
  g_autoptr (GPtrArray) vms = vt_manager_list_vms (m);
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE ("aa{sv}"));
  for (guint i = 0; i < vms->len; i++)
    g_variant_builder_add_value (&b, vt_manager_vm_info (m, vms->pdata[i]));
  return g_variant_builder_end (&b);
}
