#include "daemon/vt-vm.h"

#include "access/vt-dirty-pages.h"
#include "access/vt-dirty-rate.h"
#include "access/vt-qemu-pages.h"
#include "common/vt-cpu-parts.h"
#include "common/vt-error.h"
#include "common/vt-names.h"
#include "common/vt-sysfs.h"
#include "daemon/vt-umem-watch.h"

#define RETRY_SECONDS 30

struct _VtVm {
  GObject parent;
  char *name, *uuid, *via;
  VtQmp *qmp;
  VtAccess *access;
  VtConfig *config; /* a reference: the one it was found with, across reloads */
  GCancellable *cancel;

  VtVmState state;
  char *error;
  VtVmStateFunc state_func;
  gpointer state_data;
  GPid pid;
  VtProcess process; /* the QEMU it acts on, identified at set-up */
  /* set-up results */
  JsonNode *memdevs;
  char *ramblocks, *mtree;
  VtRamMap *map;
  VtRamMapSource map_source;
  char *vfio_device; /* a VFIO device's driver on its command line, or NULL */
  VtTracker *tracker;
  VtDirtyRatePoller *dirty;
  double write_mbps;
  /* Pages written per block in the last dirty-page window (VtDirtyPages,
   * in the map's block order), or NULL before one; why not, if not. */
  VtDirtyPagesWatch *dirty_pages;
  GArray *written;
  char *written_why;
  GArray *regions_written; /* guint64, vt_vm_regions_written's */
  gboolean backend_interleaved; /* vt_vm_follow_interleave switched its backends */
  /* Why QEMU refused the last switch, or NULL; it is asked again from
   * backend_retry_us on (monotonic), later after each refusal in a row. */
  char *backend_refused;
  gint64 backend_retry_us;
  guint backend_refusals;
  VtUmemWatch *umems; /* its af-xdp packet buffers, on a QEMU with the series */
  /* its QEMU's own memory between tiers, or NULL and why not */
  VtQemuMemory *qemu_memory;
  char *qemu_memory_why;
  guint residency_timer, retry_timer;
  /* its bytes per node as the tiering engine last measured them, and when */
  GArray *measured_node_bytes;
  gint64 measured_us;
};

G_DEFINE_FINAL_TYPE (VtVm, vt_vm, G_TYPE_OBJECT)

static void set_up (VtVm *vm);

static const char *const state_names[] = {
  [VT_VM_STATE_STARTING] = "starting",
  [VT_VM_STATE_TRACKING] = "tracking",
  [VT_VM_STATE_ERROR] = "error",
  [VT_VM_STATE_STOPPED] = "stopped",
};

const char *
vt_vm_state_name (VtVmState state)
{
  return VT_NAME_LOOKUP (state_names, state);
}

static void
set_state (VtVm *vm, VtVmState state, const char *error)
{
  if (g_strcmp0 (vm->error, error) != 0 && error)
    g_warning ("VM %s: %s", vm->name, error);
  VtVmState old = vm->state;
  vm->state = state;
  g_free (vm->error);
  vm->error = g_strdup (error);
  if (old != state && vm->state_func)
    vm->state_func (vm, old, vm->state_data);
}

void
vt_vm_set_state_func (VtVm *vm, VtVmStateFunc func, gpointer user_data)
{
  vm->state_func = func;
  vm->state_data = user_data;
}

static void
tear_down_tracking (VtVm *vm)
{
  g_clear_handle_id (&vm->residency_timer, g_source_remove);
  vm->measured_us = 0; /* of the process that went */
  g_clear_pointer (&vm->dirty, vt_dirty_rate_poller_free);
  g_clear_pointer (&vm->dirty_pages, vt_dirty_pages_watch_free);
  g_clear_pointer (&vm->umems, vt_umem_watch_free);
  g_clear_pointer (&vm->qemu_memory, vt_qemu_memory_free);
  g_clear_pointer (&vm->qemu_memory_why, g_free);
  g_clear_pointer (&vm->regions_written, g_array_unref);
  vm->backend_interleaved = FALSE;
  g_clear_pointer (&vm->backend_refused, g_free);
  vm->backend_refusals = 0;
  g_clear_pointer (&vm->written, g_array_unref);
  g_clear_pointer (&vm->written_why, g_free);
  g_clear_pointer (&vm->tracker, vt_tracker_free);
  g_clear_pointer (&vm->map, vt_ram_map_free);
  vm->map_source = VT_RAM_MAP_FROM_TEXT;
  g_clear_pointer (&vm->memdevs, json_node_unref);
  g_clear_pointer (&vm->ramblocks, g_free);
  g_clear_pointer (&vm->mtree, g_free);
  g_clear_pointer (&vm->vfio_device, g_free);
}

static gboolean
on_retry (gpointer data)
{
  VtVm *vm = data;
  vm->retry_timer = 0;
  set_up (vm);
  return G_SOURCE_REMOVE;
}

/* A set-up step failed: say why, try again later. */
static void
fail (VtVm *vm, const char *step, const GError *error)
{
  g_autofree char *msg = g_strdup_printf ("%s: %s (retrying in %d s)", step, error->message,
                                          RETRY_SECONDS);
  tear_down_tracking (vm);
  set_state (vm, VT_VM_STATE_ERROR, msg);
  if (!vm->retry_timer && !g_cancellable_is_cancelled (vm->cancel))
    vm->retry_timer = g_timeout_add_seconds (RETRY_SECONDS, on_retry, vm);
}

static gboolean
cancelled (const GError *error)
{
  return g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

static void
on_tracker_failed (const GError *error, gpointer data)
{
  fail (data, "access source", error);
}

static void
on_dirty_rate (const VtDirtyRate *rate, const GError *error, gpointer data)
{
  VtVm *vm = data;
  if (rate)
    vm->write_mbps = rate->mbps;
  else
    g_debug ("VM %s: dirty rate: %s", vm->name, error->message);
}

static void
on_dirty_pages (GArray *windows, const GError *error, gpointer data)
{
  VtVm *vm = data;
  if (windows) {
    g_clear_pointer (&vm->written_why, g_free);
    g_clear_pointer (&vm->written, g_array_unref);
    vm->written = g_array_ref (windows);
    return;
  }
  /* The VM keeps its last window's pages; a QEMU without the commands is
   * not asked again (the watch stops). A failure is logged when it is
   * new, not every window. */
  if (g_error_matches (error, VT_ERROR, VT_ERROR_UNSUPPORTED))
    g_debug ("VM %s: no dirty pages page by page: %s", vm->name, error->message);
  else if (g_strcmp0 (vm->written_why, error->message) != 0)
    g_message ("VM %s: dirty pages: %s", vm->name, error->message);
  g_free (vm->written_why);
  vm->written_why = g_strdup (error->message);
}

static gboolean
read_residency (VtVm *vm, GError **error)
{
  g_autofree char *numa_maps = vt_process_read_file (vm->pid, "numa_maps", error);
  if (!numa_maps)
    return FALSE;
  return vt_ram_map_read_residency (vm->map, numa_maps, error);
}

/* Whether the tiering engine's count of its pages per node is fresh. */
static gboolean
measured_fresh (VtVm *vm)
{
  return vm->measured_node_bytes && vm->measured_us &&
         g_get_monotonic_time () - vm->measured_us <
           2 * (gint64) vm->config->residency_interval_s * G_USEC_PER_SEC;
}

void
vt_vm_set_measured_node_bytes (VtVm *vm, const GArray *node_bytes, gint64 when_us)
{
  if (!vm->measured_node_bytes)
    vm->measured_node_bytes = g_array_new (FALSE, TRUE, sizeof (guint64));
  g_array_set_size (vm->measured_node_bytes, 0);
  g_array_append_vals (vm->measured_node_bytes, node_bytes->data, node_bytes->len);
  vm->measured_us = when_us;
}

static gboolean
on_residency_timer (gpointer data)
{
  VtVm *vm = data;
  VT_CPU_PART (VT_CPU_PART_NUMA_MAPS);
  g_autoptr (GError) error = NULL;
  if (!measured_fresh (vm) && !read_residency (vm, &error))
    g_debug ("VM %s: residency: %s", vm->name, error->message);
  if (vm->umems)
    vt_umem_watch_refresh (vm->umems);
  return G_SOURCE_CONTINUE;
}

static char **
read_cmdline (GPid pid, GError **error)
{
  g_autofree char *path = g_strdup_printf ("proc/%d/cmdline", pid);
  g_autofree char *full = vt_sysfs_path (path);
  g_autofree char *contents = NULL;
  gsize len;
  if (!g_file_get_contents (full, &contents, &len, NULL)) {
    g_set_error (error, VT_ERROR, VT_ERROR_GONE, "QEMU process %d is gone", pid);
    return NULL;
  }
  return vt_ram_map_split_cmdline (contents, len);
}

/* What QEMU said of its RAM is mapped in the process it acts on, and that
 * process is still the one identified at set-up. */
static gboolean
check_process (VtVm *vm, GError **error)
{
  if (!vt_process_check (&vm->process, error))
    return FALSE;
  g_autofree char *maps = vt_process_read_file (vm->pid, "maps", error);
  if (!maps || !vt_ram_map_check_mapped (vm->map, maps, error)) {
    if (error && *error)
      g_prefix_error (error, "process %d: ", vm->pid);
    return FALSE;
  }
  return TRUE;
}

/* Its QEMU's own memory, watched by its kdamond beside its RAM
 * (vt-qemu-memory.h). Where it cannot be (its heat does not come from
 * DAMON; [tiering] qemu-memory-interval is 0) it stays where it is, said
 * in ListVMs (qemu_error): the VM is tracked all the same. */
static void
watch_qemu_memory (VtVm *vm)
{
  if (vm->config->qemu_memory_interval_s == 0 || !vm->config->tiering) {
    vm->qemu_memory_why = g_strdup ("[tiering] qemu-memory-interval is 0, or tiering is off");
    return;
  }
  g_autoptr (GArray) ram = g_array_new (FALSE, FALSE, sizeof (VtAddrRange));
  for (guint i = 0; i < vm->map->blocks->len; i++) {
    const VtRamBlock *b = vm->map->blocks->pdata[i];
    VtAddrRange r = { b->hva, b->hva + b->size };
    g_array_append_val (ram, r);
  }
  g_array_sort (ram, vt_addr_range_compare);
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) own = vt_qemu_pages_ranges (vm->pid, (const VtAddrRange *) ram->data,
                                                 ram->len, &error);
  if (own && !vt_tracker_watch_beside (vm->tracker, (const VtAddrRange *) own->data, own->len,
                                       &error))
    g_clear_pointer (&own, g_array_unref);
  if (own)
    vm->qemu_memory = vt_qemu_memory_new (&vm->process, (const VtAddrRange *) own->data,
                                          own->len, &error);
  if (!vm->qemu_memory) {
    vm->qemu_memory_why = g_strdup (error->message);
    g_message ("VM %s: its QEMU's own memory stays where it is: %s", vm->name, error->message);
  }
}

/* Last step: the map from what QEMU said, then tracking. */
static void
start_tracking (VtVm *vm)
{
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) argv = read_cmdline (vm->pid, &error);
  g_autoptr (GHashTable) nodes = NULL, kinds = NULL;
  g_autoptr (GPtrArray) rows = NULL;
  g_autoptr (GArray) mtree = NULL;

  /* The text answers, unless x-query-ram-blocks gave the map already. */
  if (!argv ||
      (!vm->map &&
       (!vt_ram_map_parse_cmdline ((const char *const *) argv, &nodes, &kinds, &error) ||
        !(rows = vt_ram_map_parse_ramblocks (vm->ramblocks, &error)) ||
        !(mtree = vt_ram_map_parse_mtree (vm->mtree, &error)) ||
        !(vm->map = vt_ram_map_build (json_node_get_array (vm->memdevs), rows, mtree, nodes,
                                      kinds, &error))))) {
    fail (vm, "guest RAM map", error);
    return;
  }
  if (!check_process (vm, &error)) {
    fail (vm, "QEMU process", error);
    return;
  }
  g_free (vm->vfio_device);
  vm->vfio_device = vt_ram_map_cmdline_vfio_device ((const char *const *) argv);
  if (vm->vfio_device)
    g_message ("VM %s has a VFIO device (%s): its RAM is pinned where it sits, vtierd will "
               "not move it", vm->name, vm->vfio_device);
  if (!read_residency (vm, &error)) {
    fail (vm, "guest RAM residency", error);
    return;
  }
  vm->tracker = vt_tracker_new (vm->access, vm->config, vm->map, vm->pid, vm->name, vm,
                                on_tracker_failed, vm, &error);
  if (!vm->tracker) {
    fail (vm, "access source", error);
    return;
  }
  vm->residency_timer = g_timeout_add_seconds (vm->config->residency_interval_s,
                                               on_residency_timer, vm);
  watch_qemu_memory (vm);
  if (vm->config->dirty_rate_interval_s > 0)
    vm->dirty = vt_dirty_rate_poller_new (vm->qmp, vm->config->dirty_rate_interval_s,
                                          on_dirty_rate, vm);
  /* Only a QEMU that gave its map whole can have the dirty-page commands
   * (the same series): no other is asked. */
  if (vm->config->dirty_pages_interval_s > 0 && vm->map_source == VT_RAM_MAP_FROM_RAM_BLOCKS)
    vm->dirty_pages = vt_dirty_pages_watch_new (vm->qmp, vm->map, vm->config->dirty_pages_interval_s,
                                                vm->config->dirty_pages_window_ms, on_dirty_pages,
                                                vm);
  /* Its pinned packet buffers: asked of the same QEMUs, and again with
   * each residency read (netdev_add). */
  if (vm->map_source == VT_RAM_MAP_FROM_RAM_BLOCKS) {
    vm->umems = vt_umem_watch_new (vm->qmp, vm->name, vm->pid);
    vt_umem_watch_refresh (vm->umems);
  }
  g_message ("VM %s (pid %d, via %s): %" G_GUINT64_FORMAT " MiB of guest RAM in %u blocks "
             "(map from %s); heat from %s (%s)", vm->name, vm->pid, vm->via,
             vm->map->total >> 20, vm->map->blocks->len, vt_ram_map_source_name (vm->map_source),
             vt_tracker_source (vm->tracker), vt_tracker_reason (vm->tracker));
  set_state (vm, VT_VM_STATE_TRACKING, NULL);
}

static void
on_mtree (GObject *src, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *text = vt_qmp_hmp_finish (VT_QMP (src), res, &error);
  if (cancelled (error))
    return;
  VtVm *vm = data;
  if (!text) {
    fail (vm, "info mtree -f", error);
    return;
  }
  vm->mtree = g_steal_pointer (&text);
  start_tracking (vm);
}

static void
on_ramblocks (GObject *src, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) reply = vt_qmp_execute_finish (VT_QMP (src), res, &error);
  if (cancelled (error))
    return;
  VtVm *vm = data;
  JsonObject *o = reply && JSON_NODE_HOLDS_OBJECT (reply) ? json_node_get_object (reply) : NULL;
  if (!o || !json_object_has_member (o, "human-readable-text")) {
    if (!error)
      g_set_error (&error, VT_ERROR, VT_ERROR_INVALID, "no human-readable-text in the reply");
    fail (vm, "x-query-ramblock", error);
    return;
  }
  vm->ramblocks = g_strdup (json_object_get_string_member (o, "human-readable-text"));
  vt_qmp_hmp_async (vm->qmp, "info mtree -f", vm->cancel, on_mtree, vm);
}

static void
on_memdevs (GObject *src, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) reply = vt_qmp_execute_finish (VT_QMP (src), res, &error);
  if (cancelled (error))
    return;
  VtVm *vm = data;
  if (!reply || !JSON_NODE_HOLDS_ARRAY (reply)) {
    if (!error)
      g_set_error (&error, VT_ERROR, VT_ERROR_INVALID, "the reply is not an array");
    fail (vm, "query-memdev", error);
    return;
  }
  vm->memdevs = g_steal_pointer (&reply);
  vt_qmp_execute_async (vm->qmp, "x-query-ramblock", NULL, vm->cancel, on_ramblocks, vm);
}

/* A QEMU with qemu-patches/0001 gives the whole map in one answer; any
 * other says CommandNotFound, and the map comes from the text answers. */
static void
on_ram_blocks (GObject *src, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) reply = vt_qmp_execute_finish (VT_QMP (src), res, &error);
  if (cancelled (error))
    return;
  VtVm *vm = data;
  if (g_error_matches (error, VT_ERROR, VT_ERROR_UNSUPPORTED)) {
    g_debug ("VM %s: no x-query-ram-blocks, the map from the text answers: %s", vm->name,
             error->message);
    vt_qmp_execute_async (vm->qmp, "query-memdev", NULL, vm->cancel, on_memdevs, vm);
    return;
  }
  if (!error && (!reply || !JSON_NODE_HOLDS_ARRAY (reply)))
    g_set_error (&error, VT_ERROR, VT_ERROR_INVALID, "the reply is not an array");
  if (!error)
    vm->map = vt_ram_map_from_ram_blocks (json_node_get_array (reply), &error);
  if (!vm->map) {
    fail (vm, "x-query-ram-blocks", error);
    return;
  }
  vm->map_source = VT_RAM_MAP_FROM_RAM_BLOCKS;
  start_tracking (vm);
}

/* libvirt's pid file of the domain (qemu:///system's), or 0: QEMU's pid
 * as libvirt knows it, with no monitor command (libvirt's API has no pid). */
static GPid
libvirt_pid (VtVm *vm)
{
  if (!VT_IS_QMP_LIBVIRT (vm->qmp))
    return 0;
  g_autofree char *path = g_strdup_printf ("run/libvirt/qemu/%s.pid", vm->name);
  g_autofree char *text = vt_sysfs_exists (path) ? vt_sysfs_read (path, NULL) : NULL;
  return text ? (GPid) g_ascii_strtoll (text, NULL, 10) : 0;
}

/* The pid found from a vCPU thread is the one the monitor's other end
 * vouches for: the QMP socket's peer (SO_PEERCRED), or libvirt's pid file
 * of the domain where it has one. A peer in the QMP directory that claims
 * another process's threads is refused before vtierd reads or moves
 * anything of that process. Then the process is identified by pid and
 * start time, checked again before every move. */
static gboolean
identify_process (VtVm *vm, GError **error)
{
  GPid vouched = 0;
  const char *by = NULL;
  if (VT_IS_QMP_SOCKET (vm->qmp)) {
    vouched = vt_qmp_socket_get_pid (VT_QMP_SOCKET (vm->qmp));
    by = "the QMP socket's peer";
  } else if (VT_IS_QMP_LIBVIRT (vm->qmp)) {
    vouched = libvirt_pid (vm);
    by = "libvirt's pid file";
  }
  if (vouched > 0 && vouched != vm->pid) {
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                 "its vCPU threads belong to process %d, but %s is process %d: not trusted",
                 vm->pid, by, vouched);
    return FALSE;
  }
  return vt_process_identify (vm->pid, &vm->process, error);
}

/* QEMU's pid known: the process identified, then its memory backends. */
static void
with_pid (VtVm *vm)
{
  g_autoptr (GError) error = NULL;
  if (!identify_process (vm, &error)) {
    fail (vm, "QEMU process", error);
    return;
  }
  vt_qmp_execute_async (vm->qmp, "x-query-ram-blocks", NULL, vm->cancel, on_ram_blocks, vm);
}

/* QEMU's pid where libvirt's pid file does not say it: the thread group of
 * a vCPU thread, the same for a monitor of our own or libvirt's. */
static void
on_cpus (GObject *src, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) reply = vt_qmp_execute_finish (VT_QMP (src), res, &error);
  if (cancelled (error))
    return;
  VtVm *vm = data;
  JsonArray *cpus = reply && JSON_NODE_HOLDS_ARRAY (reply) ? json_node_get_array (reply) : NULL;
  JsonObject *cpu0 = cpus && json_array_get_length (cpus) ? json_array_get_object_element (cpus, 0)
                                                          : NULL;
  gint64 tid = cpu0 ? json_object_get_int_member_with_default (cpu0, "thread-id", 0) : 0;
  g_autofree char *status_path = g_strdup_printf ("proc/%" G_GINT64_FORMAT "/status", tid);
  g_autofree char *status = tid > 0 ? vt_sysfs_read (status_path, error ? NULL : &error) : NULL;
  const char *tgid = status ? strstr (status, "\nTgid:") : NULL;
  if (!tgid) {
    if (!error)
      g_set_error (&error, VT_ERROR, VT_ERROR_INVALID, "no vCPU thread id to find QEMU's pid by");
    fail (vm, "query-cpus-fast", error);
    return;
  }
  vm->pid = (GPid) g_ascii_strtoll (tgid + 6, NULL, 10);
  with_pid (vm);
}

static void
set_up (VtVm *vm)
{
  tear_down_tracking (vm);
  set_state (vm, VT_VM_STATE_STARTING, NULL);
  /* A libvirt domain's pid needs no monitor command (libvirt counts those as a taint). */
  vm->pid = libvirt_pid (vm);
  if (vm->pid > 0)
    with_pid (vm);
  else
    vt_qmp_execute_async (vm->qmp, "query-cpus-fast", NULL, vm->cancel, on_cpus, vm);
}

void
vt_vm_start (VtVm *vm)
{
  set_up (vm);
}

void
vt_vm_stop (VtVm *vm)
{
  g_cancellable_cancel (vm->cancel);
  g_clear_handle_id (&vm->retry_timer, g_source_remove);
  tear_down_tracking (vm);
  set_state (vm, VT_VM_STATE_STOPPED, NULL);
}

void
vt_vm_load_snapshot (VtVm *vm, const VtRegion *regions, guint n, guint64 sample_us,
                     guint64 aggr_us)
{
  if (vm->tracker)
    vt_tracker_load (vm->tracker, regions, n, sample_us, aggr_us);
}

VtVm *
vt_vm_new (const char *name, const char *uuid, const char *via, VtQmp *qmp, VtAccess *access,
           VtConfig *config)
{
  VtVm *vm = g_object_new (VT_TYPE_VM, NULL);
  vm->name = g_strdup (name);
  vm->uuid = g_strdup (uuid ? uuid : "");
  vm->via = g_strdup (via);
  vm->qmp = g_object_ref (qmp);
  vm->access = access;
  vm->config = vt_config_ref (config);
  vm->write_mbps = -1;
  return vm;
}

static void
vt_vm_finalize (GObject *object)
{
  VtVm *vm = VT_VM (object);
  vt_vm_stop (vm);
  g_object_unref (vm->cancel);
  g_object_unref (vm->qmp);
  vt_config_free (vm->config);
  g_free (vm->name);
  g_free (vm->uuid);
  g_free (vm->via);
  g_free (vm->error);
  g_clear_pointer (&vm->measured_node_bytes, g_array_unref);
  G_OBJECT_CLASS (vt_vm_parent_class)->finalize (object);
}

static void
vt_vm_class_init (VtVmClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = vt_vm_finalize;
}

static void
vt_vm_init (VtVm *vm)
{
  vm->cancel = g_cancellable_new ();
  vm->state = VT_VM_STATE_STARTING;
}

const char *vt_vm_get_name (VtVm *vm) { return vm->name; }
const char *vt_vm_get_uuid (VtVm *vm) { return vm->uuid; }
const char *vt_vm_get_via (VtVm *vm) { return vm->via; }
VtVmState vt_vm_get_state (VtVm *vm) { return vm->state; }
const char *vt_vm_get_error (VtVm *vm) { return vm->error; }
GPid vt_vm_get_pid (VtVm *vm) { return vm->pid; }
const VtProcess *vt_vm_get_process (VtVm *vm) { return &vm->process; }
VtRamMap *vt_vm_get_ram_map (VtVm *vm) { return vm->map; }

gboolean
vt_vm_written_pages (VtVm *vm, guint64 start, guint64 end, guint64 *pages)
{
  *pages = 0;
  if (!vm->written || !vm->map || vm->written->len != vm->map->blocks->len)
    return FALSE;
  for (guint i = 0; i < vm->map->blocks->len; i++) {
    const VtRamBlock *b = g_ptr_array_index (vm->map->blocks, i);
    guint64 s = MAX (start, b->hva), e = MIN (end, b->hva + b->size);
    if (s < e)
      *pages += vt_dirty_pages_count (&g_array_index (vm->written, VtDirtyPages, i), s - b->hva,
                                      e - s);
  }
  return TRUE;
}

/* ---- mode interleave and the backends' own policy ---- */

/* A refusal is said once (again only when QEMU gives another reason) and
 * asked again after a while, doubling up to BACKEND_RETRY_MAX_S: a page
 * under migration at that moment fails 0003's mbind (MPOL_MF_STRICT) as a
 * pinned one does, and only the pinned one refuses every time. Seen:
 * "some of its pages could not be moved" while vtierd moved the VM's pages
 * to its interleave ratio. */
#define BACKEND_RETRY_S 30
#define BACKEND_RETRY_MAX_S 900

typedef struct {
  VtVm *vm;     /* alive while its cancellable is not cancelled */
  gboolean last; /* the switch's last command: its success ends it */
  gboolean on;
} QomSet;

static void
on_qom_set (GObject *src, GAsyncResult *res, gpointer data)
{
  g_autofree QomSet *set = data;
  g_autoptr (GError) error = NULL;
  JsonNode *reply = vt_qmp_execute_finish (VT_QMP (src), res, &error);
  g_clear_pointer (&reply, json_node_unref); /* qom-set returns {} */
  if (error && cancelled (error))
    return; /* the VM may be gone */
  VtVm *vm = set->vm;
  if (!error) {
    if (!set->last)
      return;
    g_message ("VM %s: %s", vm->name,
               set->on ? "mode interleave: its memory backends' own policy is "
                         "weighted-interleave over the host's memory nodes now, so that new "
                         "pages spread too"
                       : "its memory backends' own policy is as it was");
    g_clear_pointer (&vm->backend_refused, g_free);
    vm->backend_refusals = 0;
    return;
  }
  int delay_s = MIN (BACKEND_RETRY_S << MIN (vm->backend_refusals, 5), BACKEND_RETRY_MAX_S);
  if (g_strcmp0 (vm->backend_refused, error->message) != 0)
    g_message ("VM %s: its backend's policy: %s (asked again in %d s)", vm->name, error->message,
               delay_s);
  g_free (vm->backend_refused);
  vm->backend_refused = g_strdup (error->message);
  vm->backend_retry_us = g_get_monotonic_time () + (gint64) delay_s * G_USEC_PER_SEC;
  vm->backend_refusals++;
}

static void
qom_set (VtVm *vm, const char *backend, const char *property, JsonNode *value, gboolean last,
         gboolean on)
{
  g_autoptr (JsonObject) args = json_object_new ();
  g_autofree char *path = g_strconcat ("/objects/", backend, NULL);
  json_object_set_string_member (args, "path", path);
  json_object_set_string_member (args, "property", property);
  json_object_set_member (args, "value", value);
  QomSet *set = g_new (QomSet, 1);
  *set = (QomSet) { vm, last, on };
  /* One connection: QEMU runs them in the order sent. */
  vt_qmp_execute_async (vm->qmp, "qom-set", args, vm->cancel, on_qom_set, set);
}

static JsonNode *
nodes_node (const GArray *nodes)
{
  JsonArray *a = json_array_new ();
  for (guint i = 0; nodes && i < nodes->len; i++)
    json_array_add_int_element (a, g_array_index (nodes, guint, i));
  JsonNode *n = json_node_new (JSON_NODE_ARRAY);
  json_node_take_array (n, a);
  return n;
}

static JsonNode *
string_node (const char *text)
{
  JsonNode *n = json_node_new (JSON_NODE_VALUE);
  json_node_set_string (n, text);
  return n;
}

void
vt_vm_follow_interleave (VtVm *vm, gboolean on)
{
  if (!vm->map || vm->map_source != VT_RAM_MAP_FROM_RAM_BLOCKS)
    return;
  if (vm->backend_refused) {
    if (g_get_monotonic_time () < vm->backend_retry_us)
      return;
    /* Refused: ask again, once until this answer comes. */
    vm->backend_retry_us = g_get_monotonic_time () + BACKEND_RETRY_S * G_USEC_PER_SEC;
    vm->backend_interleaved = !on;
  }
  if (on == vm->backend_interleaved)
    return;
  g_autoptr (GArray) nodes = NULL;
  if (on) {
    g_autofree char *list = vt_sysfs_exists ("sys/kernel/mm/mempolicy/weighted_interleave")
                              ? vt_sysfs_read ("sys/devices/system/node/has_memory", NULL) : NULL;
    nodes = list ? vt_parse_nodelist (g_strstrip (list), NULL) : NULL;
    if (!nodes)
      return; /* a kernel without weighted interleave (before 6.9) */
  }
  vm->backend_interleaved = on;
  /* The last backend with a policy sends the switch's last command. */
  guint last = 0;
  for (guint i = 0; i < vm->map->blocks->len; i++)
    if (((const VtRamBlock *) g_ptr_array_index (vm->map->blocks, i))->policy)
      last = i;
  for (guint i = 0; i < vm->map->blocks->len; i++) {
    const VtRamBlock *b = g_ptr_array_index (vm->map->blocks, i);
    if (!b->policy)
      continue;
    if (on) { /* every node of the host: no page lies off them, none moves now */
      qom_set (vm, b->id, "host-nodes", nodes_node (nodes), FALSE, on);
      qom_set (vm, b->id, "policy", string_node ("weighted-interleave"), i == last, on);
      continue;
    }
    /* Back as it was: under default, host-nodes is only recorded. */
    gboolean keeps_default = g_str_equal (b->policy, "default");
    qom_set (vm, b->id, "policy", string_node ("default"), FALSE, on);
    qom_set (vm, b->id, "host-nodes", nodes_node (b->host_nodes), i == last && keeps_default, on);
    if (!keeps_default)
      qom_set (vm, b->id, "policy", string_node (b->policy), i == last, on);
  }
}

const guint64 *
vt_vm_regions_written (VtVm *vm, const VtRegion *regions, guint n)
{
  guint64 pages;
  if (!vt_vm_written_pages (vm, 0, 0, &pages))
    return NULL;
  if (!vm->regions_written)
    vm->regions_written = g_array_new (FALSE, TRUE, sizeof (guint64));
  g_array_set_size (vm->regions_written, n);
  for (guint i = 0; i < n; i++)
    vt_vm_written_pages (vm, regions[i].start, regions[i].end,
                         &g_array_index (vm->regions_written, guint64, i));
  return (const guint64 *) vm->regions_written->data;
}
const char *vt_vm_get_vfio_device (VtVm *vm) { return vm->vfio_device; }

void
vt_vm_tier_qemu_memory (VtVm *vm, int top_node, int slow_node, guint64 room, guint interval_s)
{
  if (vm->qemu_memory)
    vt_qemu_memory_tick (vm->qemu_memory, top_node, slow_node, room, interval_s);
}

void
vt_vm_load_beside (VtVm *vm, const VtRegion *regions, guint n, guint64 sample_us,
                   guint64 aggr_us)
{
  if (vm->qemu_memory)
    vt_qemu_memory_load (vm->qemu_memory, regions, n, sample_us, aggr_us);
}

/* Its QEMU's own memory as the last sweep found it (vt-qemu-memory.h). */
static void
add_qemu_memory (VtVm *vm, GVariantDict *d)
{
  static const VtQemuMemoryStats none = { 0 };
  const VtQemuMemoryStats *s = vm->qemu_memory ? vt_qemu_memory_stats (vm->qemu_memory) : &none;
  const char *why = vm->qemu_memory ? vt_qemu_memory_error (vm->qemu_memory) : vm->qemu_memory_why;
  g_variant_dict_insert (d, "qemu_bytes", "t", s->bytes);
  g_variant_dict_insert (d, "qemu_top_bytes", "t", s->top_bytes);
  g_variant_dict_insert (d, "qemu_cold_bytes", "t", s->cold_bytes);
  g_variant_dict_insert (d, "qemu_demoted_bytes", "t", s->demoted);
  g_variant_dict_insert (d, "qemu_promoted_bytes", "t", s->promoted);
  g_variant_dict_insert (d, "qemu_failed_bytes", "t", s->failed);
  g_variant_dict_insert (d, "qemu_sweeps", "t", s->sweeps);
  g_variant_dict_insert (d, "qemu_sweep_cpu_us", "t", s->sweep_cpu_us);
  g_variant_dict_insert (d, "qemu_error", "s", why ? why : "");
}
VtTracker *vt_vm_get_tracker (VtVm *vm) { return vm->tracker; }

static GVariant *
node_bytes_variant (VtVm *vm)
{
  if (measured_fresh (vm))
    return vt_node_bytes_sum (&vm->measured_node_bytes, 1);
  const VtRamMap *map = vm->map;
  g_autoptr (GPtrArray) per = g_ptr_array_new ();
  for (guint i = 0; map && i < map->blocks->len; i++)
    g_ptr_array_add (per, ((VtRamBlock *) map->blocks->pdata[i])->node_bytes);
  return vt_node_bytes_sum ((GArray *const *) per->pdata, per->len);
}

GVariant *
vt_vm_to_variant (VtVm *vm)
{
  GVariantDict d;
  g_variant_dict_init (&d, NULL);
  g_variant_dict_insert (&d, "name", "s", vm->name);
  g_variant_dict_insert (&d, "uuid", "s", vm->uuid);
  g_variant_dict_insert (&d, "pid", "u", (guint32) vm->pid);
  g_variant_dict_insert (&d, "via", "s", vm->via);
  g_variant_dict_insert (&d, "state", "s", vt_vm_state_name (vm->state));
  g_variant_dict_insert (&d, "error", "s", vm->error ? vm->error : "");
  g_variant_dict_insert (&d, "source", "s", vm->tracker ? vt_tracker_source (vm->tracker) : "");
  g_variant_dict_insert (&d, "source_reason", "s",
                         vm->tracker ? vt_tracker_reason (vm->tracker) : "");
  g_variant_dict_insert (&d, "ram_bytes", "t", vm->map ? vm->map->total : (guint64) 0);
  g_variant_dict_insert (&d, "ram_map_from", "s",
                         vm->map ? vt_ram_map_source_name (vm->map_source) : "");
  g_variant_dict_insert (&d, "hot_bytes", "t",
                         vm->tracker ? vt_tracker_hot_bytes (vm->tracker) : (guint64) 0);
  g_variant_dict_insert_value (&d, "node_bytes", node_bytes_variant (vm));
  guint n = 0;
  if (vm->tracker)
    vt_tracker_regions (vm->tracker, &n);
  g_variant_dict_insert (&d, "nr_regions", "u", n);
  g_variant_dict_insert (&d, "interval_scale", "u",
                         vm->tracker ? vt_tracker_interval_scale (vm->tracker) : 0);
  g_variant_dict_insert (&d, "write_mbps", "d", vm->write_mbps);
  guint64 written = 0;
  gboolean known = vm->map && vt_vm_written_pages (vm, 0, G_MAXUINT64, &written);
  g_variant_dict_insert (&d, "written_pages", "t", written);
  g_variant_dict_insert (&d, "dirty_pages_source", "s", known ? "x-query-dirty-pages" : "");
  g_variant_dict_insert (&d, "dirty_pages_error", "s", vm->written_why ? vm->written_why : "");
  g_variant_dict_insert (&d, "backend_interleave", "b",
                         vm->backend_interleaved && !vm->backend_refused);
  g_variant_dict_insert (&d, "backend_error", "s", vm->backend_refused ? vm->backend_refused : "");
  /* What the kernel holds in place for it: a VFIO device's pins show in
   * locked_bytes, long-term pins (RDMA) in pinned_bytes. */
  guint64 locked = 0, pinned = 0;
  if (vm->pid > 0)
    vt_process_memory_held (vm->pid, &locked, &pinned, NULL);
  g_variant_dict_insert (&d, "locked_bytes", "t", locked);
  g_variant_dict_insert (&d, "pinned_bytes", "t", pinned);
  /* QEMU's af-xdp packet buffers: pinned, reported, never moved */
  g_variant_dict_insert (&d, "umems", "u", vm->umems ? vt_umem_watch_count (vm->umems) : 0);
  g_variant_dict_insert (&d, "umem_bytes", "t",
                         vm->umems ? vt_umem_watch_bytes (vm->umems) : (guint64) 0);
  g_variant_dict_insert_value (&d, "umem_node_bytes",
                               vm->umems ? vt_umem_watch_node_bytes (vm->umems)
                                         : vt_node_bytes_sum (NULL, 0));
  g_variant_dict_insert (&d, "umem_error", "s", vm->umems ? vt_umem_watch_error (vm->umems) : "");
  g_variant_dict_insert (&d, "kdamond_pid", "u",
                         (guint32) (vm->tracker ? vt_tracker_kdamond (vm->tracker) : 0));
  g_variant_dict_insert (&d, "aggregations", "t",
                         vm->tracker ? vt_tracker_aggregations (vm->tracker) : (guint64) 0);
  add_qemu_memory (vm, &d);
  return g_variant_dict_end (&d);
}
