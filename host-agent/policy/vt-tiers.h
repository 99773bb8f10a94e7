/* The host's memory tiers as the kernel sees them: each node with memory,
 * its memory tier (from the HMAT-derived abstract distance), its size and
 * free memory. The top tier is the lowest tier id; every node in a higher
 * tier is "slow". Read from sysfs under the vt_sysfs root. */
#pragma once

#include <glib.h>

typedef struct {
  guint node;
  guint tier;        /* memory_tierN; lower is faster */
  gboolean top;      /* in the top tier */
  gboolean has_cpus;
  char *cpulist;     /* "0-1"; "" when CPU-less */
  /* free: the buddy allocator's free pages (MemFree) and those on the
   * per-CPU lists (pcp_free, /proc/zoneinfo's pagesets "count"), which
   * MemFree leaves out. */
  guint64 total, free, pcp_free;
  /* What the kernel keeps free on the node (/proc/zoneinfo, summed over
   * its zones): kswapd's goal, the promo watermark in NUMA balancing's
   * tiering mode and the high one (a step less) outside it, and boost,
   * and the free pages lower zones hold back from user memory
   * (lowmem_reserve); and one step (promo less high). 0 where zoneinfo
   * does not say. */
  guint64 kernel_floor, kernel_step;
  /* Free pages of the hugetlbfs pools (nodeN/hugepages/hugepages-SIZEkB/
   * free_hugepages), 2 MiB and 1 GiB: where a hugetlbfs page can move to
   * without the kernel making a surplus one (compaction, seconds). */
  guint64 free_huge_2m, free_huge_1g;
  /* Free 2 MiB blocks of the buddy allocator (/proc/buddyinfo, orders 9
   * and up, in zones other than DMA, which holds them back from user
   * memory): where a transparent huge page can move to whole. A THP
   * move_pages finds no block for is split, and its 4 KiB pages move
   * (mm/migrate.c; NUMA balancing's never split). Blocks freed onto a
   * CPU's list are not counted. blocks_known: buddyinfo named the node. */
  guint64 free_blocks_2m;
  gboolean blocks_known;
  /* Of the free blocks of all its zones, those a THP's move takes now
   * (vt_host_tiers_block_room, read with them), where the zones' marks
   * are known; else free_blocks_2m. What a round's plans count on: the
   * moves they plan are held to it again as they run. */
  guint64 block_room_2m;
  /* HMAT figures for access from the nearest initiators
   * (nodeN/access0/initiators/): ns and MB/s; 0 where the host has none. */
  guint64 read_latency, write_latency;
  guint64 read_bandwidth, write_bandwidth;
} VtNodeInfo;

typedef struct {
  GArray *nodes;     /* VtNodeInfo, by node id */
  guint64 top_total, top_free;
  guint64 top_kernel_floor, top_kernel_step; /* summed over top-tier nodes */
} VtHostTiers;

/* Without memory_tiering in sysfs every node is in the top tier. */
VtHostTiers *vt_host_tiers_read (GError **error);
void vt_host_tiers_free (VtHostTiers *tiers);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtHostTiers, vt_host_tiers_free)

/* Adds /proc/zoneinfo's kernel floors and steps, and the free pages on
 * its per-CPU lists, to the nodes it names (kernel_floor, kernel_step,
 * pcp_free; zones of other nodes are skipped). */
void vt_host_tiers_parse_zoneinfo (const char *text, VtNodeInfo *nodes, guint n_nodes);
/* The managed pages of /proc/zoneinfo's largest zone, of any node; 0 when
 * it names none. */
guint64 vt_host_tiers_largest_zone (const char *text);
/* Adds /proc/buddyinfo's free 2 MiB blocks to the nodes it names
 * (free_blocks_2m, blocks_known). */
void vt_host_tiers_parse_buddyinfo (const char *text, VtNodeInfo *nodes, guint n_nodes);
/* The 2 MiB blocks a movable allocation on `node` takes now without a
 * zone going below its low watermark and what it holds back from user
 * memory (/proc/zoneinfo's "pages free", which leaves out the per-CPU
 * lists, "low" and the last "protection" entry), as far as it has free
 * blocks (/proc/buddyinfo): what a THP's move there finds. Below the low
 * mark the page allocator's fast path fails, and move_pages splits the
 * huge page; free blocks alone overstated it (the contended bench: huge
 * pages let through by buddyinfo were refused and split, 6-19 a run). */
typedef struct {
  guint64 blocks; /* the free 2 MiB blocks of its zones (those zoneinfo names) */
  guint64 room;   /* of those, what a THP's move takes now */
  /* Bytes, over its zones with a free block: their free pages, low marks
   * and protection, and the free pages on their per-CPU lists, which the
   * watermark check does not count, nor a huge page's allocation find
   * (each list's high mark is the zone's low mark over the node's CPUs,
   * mm/page_alloc.c zone_highsize: the testbed's one CPU holds all 29 MiB
   * of it, freed THPs too; a host's 32 CPUs less than a THP each). */
  guint64 free, floor, pcp;
} VtBlockRoom;
VtBlockRoom vt_host_tiers_block_room (const char *zoneinfo, const char *buddyinfo, guint node);
const VtNodeInfo *vt_host_tiers_node (const VtHostTiers *tiers, guint node);
/* Bytes of free hugetlbfs pages of `page_size` on the node (0 for another
 * size or no pool). */
guint64 vt_host_tiers_free_huge (const VtHostTiers *tiers, guint node, guint64 page_size);
gboolean vt_host_tiers_has_slow (const VtHostTiers *tiers);
/* The node of the top tier (top = TRUE) or of a slow tier with the most free
 * memory among `allowed` (the VM's cpuset mems) and `own` (the nodes its
 * policy names for that tier), each NULL for any; -1 when there is none. */
int vt_host_tiers_pick (const VtHostTiers *tiers, gboolean top, const GArray *allowed,
                        const GArray *own);
