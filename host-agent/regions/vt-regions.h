/* DAMON's region-based access sampling, in vtierd.
 *
 * A VM's monitored address ranges (its guest RAM in QEMU's address space)
 * are tiled by regions. Each sampling interval one random page per region is
 * checked for access; after an aggregation interval each region's
 * nr_accesses (0..aggr/sample) tells how hot it is, adjacent regions of
 * similar heat merge and every region splits at random points, so the
 * number of regions (and with it the cost) stays within [min, max] whatever
 * the VM size, while boundaries follow the real hot and cold areas. As in
 * Linux mm/damon/core.c; the access checks themselves are behind
 * VtAccessPrimitives, as DAMON keeps them behind damon_operations.
 *
 * Kernel DAMON runs this same algorithm in the kernel: its snapshots are
 * loaded with vt_region_set_load(), so the rest of vtierd sees one model. */
#pragma once

#include <glib.h>

typedef struct {
  guint64 start, end; /* [start, end), page aligned */
} VtAddrRange;

/* For g_array_sort: ranges by start. */
gint vt_addr_range_compare (gconstpointer a, gconstpointer b);

typedef struct {
  guint64 start, end;    /* [start, end), page aligned, within one range */
  guint64 sampling_addr; /* the page checked this sampling interval */
  guint nr_accesses;     /* samples that found it accessed in the last finished
                          * aggregation: its heat, 0..aggr_us/sample_us */
  guint cur_accesses;    /* the same, counting in the aggregation under way */
  guint age;             /* aggregations its access frequency has held */
} VtRegion;

typedef struct {
  guint64 sample_us;     /* sampling interval, e.g. 5000 */
  guint64 aggr_us;       /* aggregation interval, e.g. 200000 */
  guint min_nr_regions;  /* >= 3 */
  guint max_nr_regions;  /* >= min */
} VtRegionAttrs;

/* The access-check primitives (DAMON's operations): */
typedef struct {
  /* Before a sampling interval: mark each region's sampling_addr unaccessed
   * (clear its accessed bit, set it idle, clear soft-dirty). */
  void (*prepare) (gpointer data, const VtRegion *regions, guint n);
  /* After it: accessed[i] = whether region i's sampling page was accessed. */
  void (*check) (gpointer data, const VtRegion *regions, guint n, gboolean *accessed);
} VtAccessPrimitives;

typedef struct _VtRegionSet VtRegionSet;

/* The min_nr_regions for `total_bytes` of guest RAM: at least `min_nr`,
 * and enough that no region exceeds `max_region_bytes` (0: no such
 * bound), but at most half of `max_nr` (room for DAMON to split). */
guint vt_regions_min_for_size (guint64 total_bytes, guint min_nr, guint max_nr,
                               guint64 max_region_bytes);

/* `ranges` (sorted, disjoint, page aligned) cut into about min_nr pieces
 * of about equal size (each range at least one), in order: DAMON's
 * initial regions (damon_va_init_regions()). An array of VtAddrRange. */
GArray *vt_regions_tile (const VtAddrRange *ranges, guint n_ranges, guint min_nr);

/* Tiles `ranges` (sorted, disjoint, page aligned) with min_nr_regions
 * regions of about equal size. `seed` makes the random choices repeatable. */
VtRegionSet *vt_region_set_new (const VtRegionAttrs *attrs, const VtAddrRange *ranges,
                                guint n_ranges, guint64 seed);
void vt_region_set_free (VtRegionSet *set);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtRegionSet, vt_region_set_free)

const VtRegionAttrs *vt_region_set_attrs (const VtRegionSet *set);
guint vt_region_set_max_accesses (const VtRegionSet *set); /* aggr_us / sample_us */

/* One sampling interval of the own sampler: check the accesses since the
 * last prepare, count them, pick new sampling pages, prepare them. */
void vt_region_set_sample (VtRegionSet *set, const VtAccessPrimitives *prims, gpointer data);
/* End of an aggregation interval: cur_accesses becomes nr_accesses (age is
 * reset when it changed by more than a tenth of the maximum, else
 * incremented), then adjacent regions of similar heat merge and regions
 * split; cur_accesses restarts at 0. */
void vt_region_set_aggregate (VtRegionSet *set);

/* Replaces the regions by a snapshot from elsewhere (kernel DAMON: its
 * nr_accesses and age are taken as they are), clipped to the set's ranges;
 * parts of the ranges it leaves out become regions of nr_accesses 0, age 0.
 * The snapshot need not be sorted. */
void vt_region_set_load (VtRegionSet *set, const VtRegion *regions, guint n);

/* The current regions, sorted by start, tiling the ranges exactly; valid
 * until the next call that changes the set. */
const VtRegion *vt_region_set_regions (const VtRegionSet *set, guint *n);
/* Bytes in regions whose nr_accesses is at least `min_accesses`. */
guint64 vt_region_set_bytes_at_least (const VtRegionSet *set, guint min_accesses);
/* The same, of any array of regions. */
guint64 vt_regions_bytes_at_least (const VtRegion *regions, guint n, guint min_accesses);
/* Counts taken with up to `from_max` samples per aggregation, brought to a
 * scale of `to_max` (rounded, never above it), in place. */
void vt_regions_rescale_accesses (VtRegion *regions, guint n, guint from_max, guint to_max);
