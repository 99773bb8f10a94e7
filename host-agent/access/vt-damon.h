/* Kernel DAMON as vtierd's primary access source: a bounded number of
 * kdamonds (slots), each with one context of operations "vaddr" and one
 * target per VM, its QEMU process, limited to the guest-RAM ranges (given
 * as the target's initial regions, with an update interval so long that
 * DAMON never widens them to the whole process). This is how KVM's
 * nested-paging accessed bits reach the host: vaddr's access checks go
 * through the MMU notifiers into KVM.
 *
 * A new VM goes to the slot with the fewest VMs, a stopped one first: up
 * to n_slots VMs each have a kdamond of their own, and beyond that they
 * share (a kdamond per VM does not scale to a host of 50 VMs). Joining or
 * leaving a running kdamond is a commit (vt-damon-commit.h). A context
 * runs the shortest intervals any of its VMs asks for; each snapshot says
 * which intervals it was taken at.
 *
 * Coexistence with other DAMON users of the host: DAMON's sysfs recreates
 * every kdamond directory when nr_kdamonds is written (EBUSY while any runs),
 * so vtierd writes it only when it is 0, creating a pool of slots it then
 * owns (recorded in STATE_DIR/damon-slots), and otherwise never writes it.
 * It configures, starts and stops only its own slots. When DAMON is absent,
 * or someone else has kdamonds, vt_damon_new() fails with a message saying
 * so (VT_ERROR_UNSUPPORTED / VT_ERROR_BUSY) and the caller falls back.
 *
 * Results come from the damon_aggregated tracepoint, in a tracefs instance
 * of vtierd's own (instances/vtierd), read from trace_pipe on the main loop:
 * one snapshot of regions per VM per aggregation interval, told apart by
 * the kdamond's thread id. */
#pragma once

#include <gio/gio.h>

#include "access/vt-damos-tiering.h"
#include "regions/vt-regions.h"

G_BEGIN_DECLS

typedef struct _VtDamon VtDamon;

/* Called once per finished aggregation of a target, with the intervals
 * its kdamond ran at (those of another VM of the same kdamond, when they
 * are shorter than the target's own). */
typedef void (*VtDamonSnapshotFunc) (gpointer target_key, const VtRegion *regions, guint n,
                                     guint64 sample_us, guint64 aggr_us, gpointer user_data);

/* sysfs_root: "/" on a host (paths under it: sys/kernel/mm/damon/admin,
 * sys/kernel/tracing, proc); n_slots: kdamonds to create when DAMON is
 * free. */
VtDamon *vt_damon_new (const char *sysfs_root, const char *state_dir, guint n_slots,
                       VtDamonSnapshotFunc func, gpointer user_data, GError **error);
/* Stops vtierd's kdamonds and removes its tracefs instance. */
void vt_damon_free (VtDamon *damon);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtDamon, vt_damon_free)

/* Monitors `pid` (checked against its start time whenever its kdamond's
 * context is written) limited to `ranges`: a stopped kdamond starts with
 * it; on a running one it counts once the commit is taken. `target_key`
 * identifies the target in callbacks (e.g. the VM object). */
gboolean vt_damon_add_target (VtDamon *damon, gpointer target_key, GPid pid,
                              const VtAddrRange *ranges, guint n_ranges,
                              const VtRegionAttrs *attrs, GError **error);
/* Stops monitoring it: its kdamond stops with its last VM. Unknown keys
 * are ignored. */
void vt_damon_remove_target (VtDamon *damon, gpointer target_key);
/* New sampling and aggregation intervals for a running target, committed
 * in a worker thread when they change its kdamond's: the kernel takes them
 * at the kdamond's next aggregation, and the write waits until then
 * (vt-damon-commit.h). */
void vt_damon_set_intervals_async (VtDamon *damon, gpointer target_key, guint64 sample_us,
                                   guint64 aggr_us, GCancellable *cancellable,
                                   GAsyncReadyCallback callback, gpointer user_data);
gboolean vt_damon_set_intervals_finish (GAsyncResult *result, GError **error);
/* Moves at most one VM to another kdamond when VMs that share one ask for
 * intervals far apart (vt-damon-regroup.h), among those whose intervals
 * and kdamond held a minute by `now_us` (monotonic). vtierd's own timer
 * calls it every 15 s; tests call it with a later time. */
void vt_damon_regroup (VtDamon *damon, gint64 now_us);
/* The kdamond's thread id (for CPU accounting), or 0. */
GPid vt_damon_get_kdamond_pid (VtDamon *damon, gpointer target_key);

/* Memory of the target's process beside its RAM (QEMU's own: its heap,
 * stacks, device state), monitored as part of the same DAMON target (no
 * kdamond or target more; a region per range to start, room for
 * BESIDE_REGIONS_PER_RANGE each), from the next commit on. The ranges
 * must neither overlap nor touch its RAM's (a page between keeps DAMON
 * from merging a region of one with one of the other): VT_ERROR_INVALID
 * names one that does. Its regions come to the beside func, apart from
 * the RAM's snapshot; none: none. */
gboolean vt_damon_set_beside (VtDamon *damon, gpointer target_key, const VtAddrRange *ranges,
                              guint n, GError **error);
void vt_damon_set_beside_func (VtDamon *damon, VtDamonSnapshotFunc func, gpointer user_data);

/* Why the kernel's DAMOS cannot move a VM's memory here (the files its
 * sysfs lacks), or NULL when it can (vt-damos-tiering.h). */
const char *vt_damon_tiering_unsupported (VtDamon *damon);
/* The kernel moves the target's memory as `spec` says, from the next
 * commit of its kdamond on (NULL: no more; vtierd's own mover then does).
 * An unchanged spec writes nothing. */
gboolean vt_damon_set_tiering (VtDamon *damon, gpointer target_key, const VtDamosTiering *spec,
                               GError **error);

/* For tests: parses one damon_aggregated trace line. FALSE if it is not one. */
gboolean vt_damon_parse_trace_line (const char *line, GPid *kdamond_tid, guint *target_id,
                                    guint *nr_regions, VtRegion *region);
/* For tests: the clock vt_damon_regroup's steadiness is timed by (NULL:
 * the monotonic clock). */
void vt_damon_set_clock (gint64 (*clock) (void));
/* For tests: feeds trace text as if read from trace_pipe. */
void vt_damon_feed (VtDamon *damon, const char *text);

G_END_DECLS
