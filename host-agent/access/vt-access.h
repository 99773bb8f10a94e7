/* Where heat comes from, behind one small interface (as DAMON keeps its
 * access checks behind damon_operations). Host-wide, VtAccess knows which
 * sources this host offers; per VM, vt_access_attach() picks the best one
 * that works (or the configured one) and says why:
 *   damon       kernel DAMON vaddr on the QEMU process: regions come ready
 *               from the kernel, through the snapshot callback;
 *   page-idle   vtierd's own sampler over idle page tracking;
 *   soft-dirty  vtierd's own sampler over soft-dirty bits (writes only).
 * For the own-sampler kinds the caller drives the region engine with the
 * target's primitives. KVM dirty logging (per-VM write rate) is separate:
 * access/vt-dirty-rate.h. */
#pragma once

#include <glib.h>

#include "access/vt-damon.h"
#include "regions/vt-regions.h"

G_BEGIN_DECLS

typedef struct _VtAccess VtAccess;
typedef struct _VtAccessTarget VtAccessTarget;

/* wanted: "auto", "damon", "page-idle" or "soft-dirty". Never fails: a host
 * without any source gives targets that fail to attach, with the reason. */
VtAccess *vt_access_new (const char *sysfs_root, const char *state_dir, const char *wanted,
                         guint damon_slots, VtDamonSnapshotFunc snapshot_func, gpointer user_data);
void vt_access_free (VtAccess *access);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtAccess, vt_access_free)

/* The sources this host offers, best first (NULL-terminated, owned by access). */
const char *const *vt_access_available (VtAccess *access);
/* Why a source is not offered (NULL when it is). */
const char *vt_access_unavailable_reason (VtAccess *access, const char *source);

VtAccessTarget *vt_access_attach (VtAccess *access, gpointer key, GPid pid,
                                  const VtAddrRange *ranges, guint n_ranges,
                                  const VtRegionAttrs *attrs, GError **error);
void vt_access_detach (VtAccessTarget *target);

const char *vt_access_target_source (VtAccessTarget *target);
/* Why this source: e.g. "kernel DAMON (vaddr)", or "DAMON is in use by
 * another user ...; using soft-dirty". */
const char *vt_access_target_reason (VtAccessTarget *target);
/* TRUE: regions arrive by the snapshot callback. FALSE: sample with these. */
gboolean vt_access_target_in_kernel (VtAccessTarget *target);
const VtAccessPrimitives *vt_access_target_primitives (VtAccessTarget *target, gpointer *data);
/* A failure of the primitives since the last call (the VM is gone...), or NULL. */
GError *vt_access_target_take_error (VtAccessTarget *target);
/* New intervals (vt-interval-tune.h). Kernel DAMON takes them at its next
 * aggregation, committed off the main loop (vt-damon-commit.h); the own
 * sampler's timers are the caller's to change (it completes at once). */
void vt_access_target_set_intervals_async (VtAccessTarget *target, guint64 sample_us,
                                           guint64 aggr_us, GCancellable *cancellable,
                                           GAsyncReadyCallback callback, gpointer user_data);
gboolean vt_access_target_set_intervals_finish (GAsyncResult *result, GError **error);
/* The kdamond thread of a damon target, else 0 (CPU accounting). */
GPid vt_access_target_kdamond (VtAccessTarget *target);
/* Why the kernel cannot move this target's memory (its heat does not come
 * from DAMON, or the kernel's DAMOS lacks what it needs), or NULL. */
const char *vt_access_target_tiering_unsupported (VtAccessTarget *target);
/* The kernel moves its memory as `spec` says (vt-damos-tiering.h); NULL:
 * no more. */
gboolean vt_access_target_set_tiering (VtAccessTarget *target, const VtDamosTiering *spec,
                                       GError **error);

/* Memory of its process beside its RAM (QEMU's own), watched with it
 * (vt_damon_set_beside); its regions come to the beside func.
 * VT_ERROR_UNSUPPORTED for a target of the own samplers. */
gboolean vt_access_target_set_beside (VtAccessTarget *target, const VtAddrRange *ranges,
                                      guint n, GError **error);
void vt_access_set_beside_func (VtAccess *access, VtDamonSnapshotFunc func, gpointer user_data);

G_END_DECLS
