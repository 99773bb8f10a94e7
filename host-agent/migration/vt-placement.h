/* Where a process's pages sit, page by page, exactly: what the tiering
 * engine believes is on each tier is what is there.
 *
 * /proc/PID/pagemap gives each present page's PFN (root only) and the
 * memory blocks in sysfs (nodeN/memoryM, block_size_bytes) give each PFN's
 * node: one sequential read of 8 bytes a page, the kernel walking page
 * tables a PMD at a time. Where pagemap shows no PFNs (no CAP_SYS_ADMIN, a
 * kernel without memory-block sysfs) every page is asked with a move_pages
 * query instead: exact too, and dearer. Sampling a few pages per region is
 * not enough: a guest's allocator scatters a hot buffer over guest-physical
 * memory in 2 MiB or 4 KiB pieces, and regions then mix placements. The
 * same read says which bytes sit in huge pages (kpageflags of one page a
 * 2 MiB piece, see vt-pagemap.h), for the speed a move of them takes.
 * Paths are under the vt_sysfs root (tests run on fake trees). */
#pragma once

#include <glib.h>

#include "common/vt-pagemap.h"

G_BEGIN_DECLS

/* Which host node each physical page frame belongs to. */
typedef struct _VtPfnNodes VtPfnNodes;

/* From the memory blocks each node lists; VT_ERROR_UNSUPPORTED when the
 * host has no memory-block sysfs. */
VtPfnNodes *vt_pfn_nodes_read (GError **error);
void vt_pfn_nodes_free (VtPfnNodes *pfns);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtPfnNodes, vt_pfn_nodes_free)
/* The node of `pfn`, or -1 when no block holds it, or it is the shared
 * zero page or huge zero page (read, never written guest RAM: nobody's
 * memory, and the kernel will not move it). */
int vt_pfn_nodes_lookup (const VtPfnNodes *pfns, guint64 pfn);
/* The same, asking the span at *hint first and leaving there the one that
 * held it: a huge page's frames, and most runs of a VM's, lie in one block. */
int vt_pfn_nodes_lookup_near (const VtPfnNodes *pfns, guint64 pfn, guint *hint);

typedef enum {
  VT_PLACEMENT_PAGEMAP,    /* pagemap PFNs and the memory blocks */
  VT_PLACEMENT_MOVE_PAGES, /* a move_pages query of every page */
} VtPlacementMethod;

const char *vt_placement_method_name (VtPlacementMethod method);

typedef struct _VtPlacement VtPlacement;

/* A reader of `pid`'s placement; `pfns` NULL: move_pages queries. A process
 * that is gone is VT_ERROR_GONE. */
VtPlacement *vt_placement_open (GPid pid, const VtPfnNodes *pfns, GError **error);
void vt_placement_close (VtPlacement *placement);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtPlacement, vt_placement_close)

VtPlacementMethod vt_placement_method (const VtPlacement *placement);

/* Pages [start, end) on `node`. */
typedef struct {
  guint64 start, end;
  int node;
} VtNodeSpan;

/* From now on, each count by pagemap also adds to `spans` (VtNodeSpan, in
 * address order, adjacent ones on a node joined) the pages it counts that
 * another process maps too (pagemap's exclusive bit clear): what
 * move_pages would refuse, known before it is asked. By move_pages
 * queries, none. */
void vt_placement_collect_shared (VtPlacement *placement, GArray *spans);
/* Spans it collects at most (a host with KSM may share every other page):
 * past that, the rest are found by the refusals of moves. */
#define VT_PLACEMENT_SHARED_MAX 65536

/* Adds to per_node[n] (n < n_nodes) the bytes of [start, end) (page
 * aligned) present on node n; pages not present, swapped out, or on a node
 * past n_nodes are in no count. The same bytes by page class go to
 * per_class[VT_PAGE_CLASSES] (common/vt-pagemap.h) unless it is NULL:
 * what a move of them moves the kernel in. Classes need pagemap and
 * kpageflags (root); by move_pages queries they are all UNKNOWN. */
gboolean vt_placement_count (VtPlacement *placement, guint64 start, guint64 end,
                             guint64 *per_node, guint n_nodes, guint64 *per_class,
                             GError **error);

/* A whole 2 MiB piece of address space (at `start`, aligned) that counts
 * by pagemap read, in one call or in the parts of calls for adjacent
 * ranges: `node` when every page of it is present, on that node, of
 * `page_class` and mapped by this process alone; else -1. What a cache
 * of placement keeps (policy/vt-residency-cache.h). */
typedef void (*VtPieceFunc) (guint64 start, int node, VtPageClass page_class, gpointer data);
void vt_placement_note_pieces (VtPlacement *placement, VtPieceFunc func, gpointer data);

G_END_DECLS
