/* One VM as vtierd knows it: found by discovery with its QEMU monitor, then
 * set up asynchronously (its pid, its guest RAM map, an access source) and
 * tracked. A set-up that fails leaves the VM in state "error" with the
 * reason, retried later; vtierd itself goes on. */
#pragma once

#include <glib-object.h>

#include "access/vt-access.h"
#include "common/vt-process.h"
#include "daemon/vt-config.h"
#include "daemon/vt-qemu-memory.h"
#include "daemon/vt-tracker.h"
#include "discovery/vt-qmp.h"
#include "ram-map/vt-ram-map.h"

G_BEGIN_DECLS

/* Where a VM's set-up is (ListVMs' "state"). */
typedef enum {
  VT_VM_STATE_STARTING, /* its set-up is under way */
  VT_VM_STATE_TRACKING, /* set up: its heat is tracked */
  VT_VM_STATE_ERROR,    /* its set-up failed (vt_vm_get_error says why); retried later */
  VT_VM_STATE_STOPPED,  /* gone, or vtierd exits */
} VtVmState;

const char *vt_vm_state_name (VtVmState state); /* "starting", "tracking", ... */

#define VT_TYPE_VM (vt_vm_get_type ())
G_DECLARE_FINAL_TYPE (VtVm, vt_vm, VT, VM, GObject)

/* via: "libvirt" or "qmp". access and config are borrowed (the manager's). */
VtVm *vt_vm_new (const char *name, const char *uuid, const char *via, VtQmp *qmp,
                 VtAccess *access, VtConfig *config);
/* Begins the set-up; state goes "starting" -> "tracking" or "error". */
void vt_vm_start (VtVm *vm);

/* Called on every change of its state, after it (the new state and error
 * are the VM's own by then); NULL: none. The registry hears of them so. */
typedef void (*VtVmStateFunc) (VtVm *vm, VtVmState old_state, gpointer user_data);
void vt_vm_set_state_func (VtVm *vm, VtVmStateFunc func, gpointer user_data);
/* Stops tracking for good (the VM is gone or vtierd exits). */
void vt_vm_stop (VtVm *vm);

const char *vt_vm_get_name (VtVm *vm);
const char *vt_vm_get_uuid (VtVm *vm); /* "" when unknown */
const char *vt_vm_get_via (VtVm *vm);
VtVmState vt_vm_get_state (VtVm *vm);
const char *vt_vm_get_error (VtVm *vm);
GPid vt_vm_get_pid (VtVm *vm);
const VtProcess *vt_vm_get_process (VtVm *vm); /* pid and start time */
VtRamMap *vt_vm_get_ram_map (VtVm *vm);    /* NULL until set up */
/* The driver of a VFIO device on its command line (all of its RAM pinned
 * where it sits), or NULL. */
const char *vt_vm_get_vfio_device (VtVm *vm);
VtTracker *vt_vm_get_tracker (VtVm *vm);   /* NULL until set up */
/* Pages of [start, end) (host addresses in QEMU) written in the last
 * dirty-page window (vt-dirty-pages.h); FALSE when it has none. */
gboolean vt_vm_written_pages (VtVm *vm, guint64 start, guint64 end, guint64 *pages);
/* Mode interleave (`on`) on a QEMU with qemu-patches (its map came from
 * x-query-ram-blocks) on a kernel with weighted interleave: its memory
 * backends' own policy becomes weighted-interleave over the host's memory
 * nodes (by the host's weights), so that the pages the guest allocates
 * from now on spread too; vtierd's moves bring them to the VM's ratio.
 * Out of the mode, each backend's policy and nodes as they were. Once per
 * change; a no-op on any other QEMU. */
void vt_vm_follow_interleave (VtVm *vm, gboolean on);
/* The same for each of `n` regions, in an array the VM owns until the
 * next call; NULL when it has no window. */
const guint64 *vt_vm_regions_written (VtVm *vm, const VtRegion *regions, guint n);

/* Its bytes per host node (guint64 by node id) as the tiering engine
 * measured them page by page at `when_us` (monotonic): the listing shows
 * them, and while they are fresh (within two residency intervals) its own
 * read of numa_maps is skipped: the kernel walks every page of
 * the process for it. In the fit bench, with it off, the main loop's
 * residency part fell from 11.5-15.1 to 3.25-3.5 CPU-s. */
void vt_vm_set_measured_node_bytes (VtVm *vm, const GArray *node_bytes, gint64 when_us);

/* Its QEMU's own memory outside guest RAM (vt-qemu-memory.h): a sweep
 * when `interval_s` have passed, moving between the nodes given (-1:
 * none), bringing up at most half of `room`; nothing before it is tracked, or when its heat does not come
 * from kernel DAMON (qemu_error says so). */
void vt_vm_tier_qemu_memory (VtVm *vm, int top_node, int slow_node, guint64 room,
                             guint interval_s);
/* Its QEMU's own memory's regions (the beside snapshot of its kdamond). */
void vt_vm_load_beside (VtVm *vm, const VtRegion *regions, guint n, guint64 sample_us,
                        guint64 aggr_us);

/* The access source's snapshot for this VM (from the manager's callback). */
void vt_vm_load_snapshot (VtVm *vm, const VtRegion *regions, guint n, guint64 sample_us,
                          guint64 aggr_us);

/* ListVMs' dictionary (see org.vtier.Manager1.xml). */
GVariant *vt_vm_to_variant (VtVm *vm);

G_END_DECLS
