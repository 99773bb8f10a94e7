/* Tiering a VM's QEMU's own memory (vt-qemu-pages.h), watched by its
 * kdamond beside its RAM: every interval, in a worker thread, its regions
 * that DAMON found unused through two intervals go to the VM's slow
 * node, those used in its last aggregation come back to its top node
 * into room the VMs leave free, and
 * its pages are counted per node. Whatever the top tier's contention:
 * this memory is a few % of a VM's, and what of it QEMU does not touch for
 * half a minute waits on a slow node as well as anywhere (per-VM DAMOS on
 * the whole process moves it so too: in the contended bench it took
 * 30-40 MiB of it off DRAM, where vtierd left it and the hot sets were
 * then short of room). The room it leaves goes to the VMs through the
 * engine's count of the host's own use of the top tier (vt-tiering.c). */
#pragma once

#include <glib.h>

#include "common/vt-process.h"
#include "regions/vt-regions.h"

G_BEGIN_DECLS

/* What vtierd knows of a VM's QEMU's own memory. */
typedef struct {
  guint64 bytes;      /* its pages QEMU alone maps in the watched ranges, at the last sweep */
  guint64 top_bytes;  /* of them, on the VM's top node then (after that sweep's moves) */
  guint64 cold_bytes; /* bytes of the regions unused through two intervals then */
  guint64 demoted, promoted, failed; /* bytes, since tracking began */
  guint64 sweeps;
  guint64 sweep_cpu_us; /* the last sweep's CPU time, its moves included */
} VtQemuMemoryStats;

typedef struct _VtQemuMemory VtQemuMemory;

/* `ranges` (sorted; vt_qemu_pages_ranges) are those its kdamond watches. */
VtQemuMemory *vt_qemu_memory_new (const VtProcess *process, const VtAddrRange *ranges, guint n,
                                  GError **error);
/* A sweep under way is cancelled; its result dropped. */
void vt_qemu_memory_free (VtQemuMemory *memory);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtQemuMemory, vt_qemu_memory_free)

/* Its regions from its kdamond's last aggregation (the beside snapshot). */
void vt_qemu_memory_load (VtQemuMemory *memory, const VtRegion *regions, guint n,
                          guint64 sample_us, guint64 aggr_us);

/* Called each tiering round: a sweep starts when `interval_s` have passed
 * since the last one began and none is under way. Moves go between
 * `top_node` and `slow_node`; either -1: none (the VM's mode is off, or
 * its cpuset allows no such node), and the sweep still counts. Of the
 * top node's `room` (its free memory beyond what the engine keeps free)
 * half at most comes up: this memory is outside the VMs' shares, and
 * where the top tier is contended it is theirs. */
void vt_qemu_memory_tick (VtQemuMemory *memory, int top_node, int slow_node, guint64 room,
                          guint interval_s);

const VtQemuMemoryStats *vt_qemu_memory_stats (const VtQemuMemory *memory);
/* The last sweep's failure, or NULL. */
const char *vt_qemu_memory_error (const VtQemuMemory *memory);

G_END_DECLS
