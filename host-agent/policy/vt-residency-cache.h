/* A VM's placement by 2 MiB piece, as the last pagemap reads found it, so
 * that a round need not read all of its RAM again.
 *
 * Reading every page's pagemap entry each round is what keeps the belief
 * exact (vt-placement.h), and it is the dearest part of vtierd's main loop:
 * 11.4 of its 14.6 CPU-s in a bench run on the emulated host, ~4 ms a GiB
 * of 4 KiB pages on real hardware, every round, for memory that mostly
 * has not moved. A piece is kept only when all of its pages were present
 * on one node, of one class and this process's alone; a region is counted
 * from the cache only when every piece it touches is kept and none is
 * older than `refresh_rounds` rounds (each piece's first expiry spread
 * over them, so that the reads do not come all in one round), and, if it
 * is in use, no page of the process was faulted in or dropped since the
 * last round (vt_residency_cache_settled). What vtierd
 * moves is dropped as it moves; what the kernel moves by itself (reclaim's
 * demotion, compaction, NUMA balancing) is seen within refresh_rounds. */
#pragma once

#include <glib.h>

#include "common/vt-pagemap.h"

G_BEGIN_DECLS

typedef struct _VtResidencyCache VtResidencyCache;

/* refresh_rounds 1 keeps nothing (every round reads everything). */
VtResidencyCache *vt_residency_cache_new (guint refresh_rounds);
void vt_residency_cache_free (VtResidencyCache *cache);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtResidencyCache, vt_residency_cache_free)

/* A new round: pieces kept since refresh_rounds ago are read again. */
void vt_residency_cache_next_round (VtResidencyCache *cache);

/* A VtPieceFunc (migration/vt-placement.h): keeps a piece a read found
 * on one node, drops one it did not. */
void vt_residency_cache_note (guint64 start, int node, VtPageClass page_class, gpointer cache);

/* Adds [start, end)'s bytes to per_node[node] and per_class[class] when
 * every piece it touches is kept and fresh; FALSE (nothing added) else. */
gboolean vt_residency_cache_count (VtResidencyCache *cache, guint64 start, guint64 end,
                                   guint64 *per_node, guint n_nodes, guint64 *per_class);

/* Notes the process's resident pages this round (`known` FALSE: they
 * could not be read); TRUE when they are the last round's: no page was
 * faulted in or dropped since, so pieces kept stand for memory in use too
 * (its heat says nothing of where its pages are, only that pages may
 * have come or gone there). */
gboolean vt_residency_cache_settled (VtResidencyCache *cache, gboolean known, guint64 resident);

/* Forgets [start, end): its pages are being moved. */
void vt_residency_cache_drop (VtResidencyCache *cache, guint64 start, guint64 end);

G_END_DECLS
