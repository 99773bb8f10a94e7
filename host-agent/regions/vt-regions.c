/* DAMON's adaptive regions (Linux mm/damon/core.c), in user space.
 *
 * Bad attrs or ranges give a plain NULL from vt_region_set_new(), without a
 * g_critical: they come from configuration and from QEMU, not from a bug in
 * the caller. A NULL set or primitives table is a bug: g_return_if_fail.
 *
 * Bounds on the number of regions after vt_region_set_aggregate():
 *  - at most max_nr_regions, whenever there are at most max_nr_regions
 *    ranges (each range needs a region of its own);
 *  - at least min_nr_regions, whenever the ranges hold at least
 *    min_nr_regions pages.
 * DAMON's merge and split keep both on their own once they hold; a loaded
 * snapshot (vt_region_set_load) may break either, so aggregate ends with two
 * repairs that only ever act after a load: merging regardless of heat, then
 * halving the largest regions. */
#include "regions/vt-regions.h"

#include <string.h>

#define PAGE_SIZE ((guint64) 4096)

#define PAGE_ALIGN_DOWN(x) ((x) & ~(PAGE_SIZE - 1))

struct _VtRegionSet {
  VtRegionAttrs attrs;
  GArray *ranges;        /* VtAddrRange, sorted, disjoint */
  guint64 total_bytes;   /* bytes in all ranges */
  GArray *regions;       /* VtRegion, sorted by start, tiling the ranges */
  /* guint per region: checks that counted for it in this aggregation. A
   * region split off at aggregation misses the first one (its page was never
   * prepared), and its count is scaled up to the full window. */
  GArray *checks;
  guint window_checks;   /* checks made in this aggregation */
  gboolean prepared;     /* the sampling pages of the regions are prepared */
  guint last_split_count; /* DAMON's last_nr_regions */
  guint64 rng;           /* splitmix64 state */
};

/* splitmix64: tiny, and the same sequence on every platform and glib. */
static guint64
rand_next (VtRegionSet *set)
{
  guint64 z = (set->rng += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

/* Uniform in [lo, hi); the modulo bias is nil for sizes far below 2^64. */
static guint64
rand_range (VtRegionSet *set, guint64 lo, guint64 hi)
{
  return lo + rand_next (set) % (hi - lo);
}

static guint64
region_size (const VtRegion *r)
{
  return r->end - r->start;
}

static guint64
region_pages (const VtRegion *r)
{
  return region_size (r) / PAGE_SIZE;
}

static VtRegion *
region_at (const VtRegionSet *set, guint i)
{
  return &g_array_index (set->regions, VtRegion, i);
}

static guint
abs_diff (guint a, guint b)
{
  return a > b ? a - b : b - a;
}

static VtRegion
region_new (guint64 start, guint64 end)
{
  return (VtRegion){ .start = start, .end = end, .sampling_addr = start };
}

/* The layout changed: no region has counted a check in this layout yet. */
static void
reset_checks (VtRegionSet *set)
{
  g_array_set_size (set->checks, set->regions->len);
  memset (set->checks->data, 0, sizeof (guint) * set->checks->len);
  set->window_checks = 0;
}

static gboolean
attrs_valid (const VtRegionAttrs *attrs)
{
  return attrs && attrs->min_nr_regions >= 3 && attrs->max_nr_regions >= attrs->min_nr_regions &&
         attrs->sample_us > 0 && attrs->aggr_us >= attrs->sample_us;
}

static gboolean
ranges_valid (const VtAddrRange *ranges, guint n_ranges)
{
  if (!ranges || n_ranges == 0)
    return FALSE;
  for (guint i = 0; i < n_ranges; i++) {
    const VtAddrRange *r = &ranges[i];
    if (r->start >= r->end || r->start % PAGE_SIZE || r->end % PAGE_SIZE)
      return FALSE;
    if (i > 0 && r->start < ranges[i - 1].end)
      return FALSE;
  }
  return TRUE;
}

/* How many regions each range gets: shares proportional to the range sizes
 * summing to min_nr_regions (largest remainder first), at least one per
 * range and at most one per page. More than min only when there are more
 * ranges than min; fewer only when there are fewer pages than min. */
static guint *
pieces_per_range (const VtAddrRange *ranges, guint n_ranges, guint64 total_bytes, guint min_nr)
{
  g_autofree guint *pieces = g_new0 (guint, n_ranges);
  g_autofree double *quota = g_new0 (double, n_ranges);
  guint64 total_pages = total_bytes / PAGE_SIZE;
  guint64 target = MIN (MAX ((guint64) min_nr, n_ranges), total_pages);
  guint64 sum = 0;

  for (guint i = 0; i < n_ranges; i++) {
    guint64 pages = (ranges[i].end - ranges[i].start) / PAGE_SIZE;
    quota[i] = (double) min_nr * (double) pages / (double) total_pages;
    pieces[i] = (guint) CLAMP ((guint64) quota[i], 1, pages);
    sum += pieces[i];
  }
  /* Hand out the rest to the ranges furthest below their share, or take
   * back from those furthest above it. */
  while (sum != target) {
    gboolean grow = sum < target;
    guint best = n_ranges;
    for (guint i = 0; i < n_ranges; i++) {
      guint64 pages = (ranges[i].end - ranges[i].start) / PAGE_SIZE;
      if (grow ? pieces[i] >= pages : pieces[i] <= 1)
        continue;
      double gap = quota[i] - pieces[i];
      if (best == n_ranges || (grow ? gap > quota[best] - pieces[best]
                                    : gap < quota[best] - pieces[best]))
        best = i;
    }
    g_assert (best < n_ranges);
    pieces[best] += grow ? 1 : -1;
    sum += grow ? 1 : -1;
  }
  return g_steal_pointer (&pieces);
}

/* damon_va_evenly_split_region(), spreading the leftover pages one by one
 * over the first pieces. */
static void
append_even_split (GArray *pieces_out, const VtAddrRange *range, guint pieces)
{
  guint64 pages = (range->end - range->start) / PAGE_SIZE;
  guint64 base = pages / pieces, extra = pages % pieces;
  guint64 start = range->start;

  for (guint j = 0; j < pieces; j++) {
    guint64 end = start + (base + (j < extra ? 1 : 0)) * PAGE_SIZE;
    VtAddrRange piece = { start, end };
    g_array_append_val (pieces_out, piece);
    start = end;
  }
}

GArray *
vt_regions_tile (const VtAddrRange *ranges, guint n_ranges, guint min_nr)
{
  GArray *tiles = g_array_new (FALSE, FALSE, sizeof (VtAddrRange));
  guint64 total = 0;
  for (guint i = 0; i < n_ranges; i++)
    total += ranges[i].end - ranges[i].start;
  if (total < PAGE_SIZE)
    return tiles;
  g_autofree guint *pieces = pieces_per_range (ranges, n_ranges, total, min_nr);
  for (guint i = 0; i < n_ranges; i++)
    append_even_split (tiles, &ranges[i], pieces[i]);
  return tiles;
}

gint
vt_addr_range_compare (gconstpointer a, gconstpointer b)
{
  const VtAddrRange *x = a, *y = b;
  return x->start < y->start ? -1 : x->start > y->start;
}

guint
vt_regions_min_for_size (guint64 total_bytes, guint min_nr, guint max_nr, guint64 max_region_bytes)
{
  guint64 want = max_region_bytes ? (total_bytes + max_region_bytes - 1) / max_region_bytes : 0;
  want = MIN (want, (guint64) max_nr / 2);
  return (guint) MAX ((guint64) min_nr, want);
}

VtRegionSet *
vt_region_set_new (const VtRegionAttrs *attrs, const VtAddrRange *ranges, guint n_ranges,
                   guint64 seed)
{
  if (!attrs_valid (attrs) || !ranges_valid (ranges, n_ranges))
    return NULL;

  VtRegionSet *set = g_new0 (VtRegionSet, 1);
  set->attrs = *attrs;
  set->rng = seed;
  set->ranges = g_array_sized_new (FALSE, FALSE, sizeof (VtAddrRange), n_ranges);
  g_array_append_vals (set->ranges, ranges, n_ranges);
  for (guint i = 0; i < n_ranges; i++)
    set->total_bytes += ranges[i].end - ranges[i].start;

  g_autoptr (GArray) tiles = vt_regions_tile (ranges, n_ranges, attrs->min_nr_regions);
  set->regions = g_array_sized_new (FALSE, FALSE, sizeof (VtRegion), tiles->len);
  for (guint i = 0; i < tiles->len; i++) {
    const VtAddrRange *tile = &g_array_index (tiles, VtAddrRange, i);
    VtRegion r = region_new (tile->start, tile->end);
    g_array_append_val (set->regions, r);
  }

  set->checks = g_array_new (FALSE, TRUE, sizeof (guint));
  reset_checks (set);
  return set;
}

void
vt_region_set_free (VtRegionSet *set)
{
  if (!set)
    return;
  g_array_unref (set->ranges);
  g_array_unref (set->regions);
  g_array_unref (set->checks);
  g_free (set);
}

const VtRegionAttrs *
vt_region_set_attrs (const VtRegionSet *set)
{
  g_return_val_if_fail (set, NULL);
  return &set->attrs;
}

guint
vt_region_set_max_accesses (const VtRegionSet *set)
{
  g_return_val_if_fail (set, 0);
  return (guint) (set->attrs.aggr_us / set->attrs.sample_us);
}

const VtRegion *
vt_region_set_regions (const VtRegionSet *set, guint *n)
{
  g_return_val_if_fail (set, NULL);
  if (n)
    *n = set->regions->len;
  return (const VtRegion *) set->regions->data;
}

guint64
vt_regions_bytes_at_least (const VtRegion *regions, guint n, guint min_accesses)
{
  guint64 bytes = 0;
  for (guint i = 0; i < n; i++)
    if (regions[i].nr_accesses >= min_accesses)
      bytes += regions[i].end - regions[i].start;
  return bytes;
}

void
vt_regions_rescale_accesses (VtRegion *regions, guint n, guint from_max, guint to_max)
{
  g_return_if_fail (from_max > 0);
  for (guint i = 0; i < n; i++)
    regions[i].nr_accesses =
      (guint) MIN (to_max, ((guint64) regions[i].nr_accesses * to_max + from_max / 2) / from_max);
}

guint64
vt_region_set_bytes_at_least (const VtRegionSet *set, guint min_accesses)
{
  g_return_val_if_fail (set, 0);
  return vt_regions_bytes_at_least ((const VtRegion *) set->regions->data, set->regions->len,
                                    min_accesses);
}

/* --- Sampling -------------------------------------------------------- */

static void
count_checks (VtRegionSet *set, const VtAccessPrimitives *prims, gpointer data)
{
  guint n = set->regions->len;
  g_autofree gboolean *accessed = g_new0 (gboolean, n);

  prims->check (data, (const VtRegion *) set->regions->data, n, accessed);
  for (guint i = 0; i < n; i++) {
    VtRegion *r = region_at (set, i);
    /* A page outside the region is its parent's, from before a split: it
     * tells about the parent, not about this region. */
    if (r->sampling_addr < r->start || r->sampling_addr >= r->end)
      continue;
    g_array_index (set->checks, guint, i)++;
    if (accessed[i])
      r->cur_accesses++;
  }
  set->window_checks++;
}

void
vt_region_set_sample (VtRegionSet *set, const VtAccessPrimitives *prims, gpointer data)
{
  g_return_if_fail (set && prims && prims->prepare && prims->check);

  /* Nothing to check before the first prepare (DAMON's first
   * kdamond_prepare_access_checks), nor after a load. */
  if (set->prepared)
    count_checks (set, prims, data);

  for (guint i = 0; i < set->regions->len; i++) {
    VtRegion *r = region_at (set, i);
    r->sampling_addr = r->start + rand_range (set, 0, region_pages (r)) * PAGE_SIZE;
  }
  prims->prepare (data, (const VtRegion *) set->regions->data, set->regions->len);
  set->prepared = TRUE;
}

/* --- Aggregation ------------------------------------------------------ */

static guint
age_threshold (const VtRegionSet *set)
{
  return vt_region_set_max_accesses (set) / 10;
}

/* DAMON's damon_region_sz_limit(), page aligned. */
static guint64
size_limit (const VtRegionSet *set)
{
  return MAX (PAGE_ALIGN_DOWN (set->total_bytes / set->attrs.min_nr_regions), PAGE_SIZE);
}

/* The window's count, scaled up for a region that missed checks. */
static guint
window_accesses (const VtRegionSet *set, guint i)
{
  guint cur = region_at (set, i)->cur_accesses;
  guint checks = g_array_index (set->checks, guint, i);

  if (checks == 0 || checks == set->window_checks)
    return cur;
  return (guint) (((guint64) cur * set->window_checks + checks / 2) / checks);
}

/* kdamond_reset_aggregated() with the aging of damon_merge_regions_of(). */
static void
close_window (VtRegionSet *set)
{
  guint threshold = age_threshold (set);

  for (guint i = 0; i < set->regions->len; i++) {
    guint fresh = window_accesses (set, i);
    VtRegion *r = region_at (set, i);
    r->age = abs_diff (fresh, r->nr_accesses) > threshold ? 0 : r->age + 1;
    r->nr_accesses = fresh;
    r->cur_accesses = 0;
  }
}

static guint
weighted_average (guint a, guint64 weight_a, guint b, guint64 weight_b)
{
  return (guint) ((a * weight_a + b * weight_b) / (weight_a + weight_b));
}

/* damon_merge_two_regions(): `left` keeps its sampling page. */
static void
merge_into (VtRegion *left, const VtRegion *right)
{
  guint64 pl = region_pages (left), pr = region_pages (right);

  left->nr_accesses = weighted_average (left->nr_accesses, pl, right->nr_accesses, pr);
  left->age = weighted_average (left->age, pl, right->age, pr);
  left->end = right->end;
}

/* damon_merge_regions_of(): each region merges into the one before it (as
 * merged so far) when they touch, their heat differs by at most
 * `threshold` and the result is at most `sz_limit`. */
static void
merge_pass (VtRegionSet *set, guint threshold, guint64 sz_limit)
{
  guint kept = 0;

  for (guint i = 0; i < set->regions->len; i++) {
    VtRegion *r = region_at (set, i);
    VtRegion *prev = kept > 0 ? region_at (set, kept - 1) : NULL;
    if (prev && prev->end == r->start &&
        abs_diff (prev->nr_accesses, r->nr_accesses) <= threshold &&
        region_size (prev) + region_size (r) <= sz_limit)
      merge_into (prev, r);
    else
      *region_at (set, kept++) = *r;
  }
  g_array_set_size (set->regions, kept);
}

/* kdamond_merge_regions(): the threshold doubles while there are too many
 * regions, up to the largest heat. */
static void
merge_regions (VtRegionSet *set)
{
  guint threshold = age_threshold (set);
  guint max_accesses = vt_region_set_max_accesses (set);
  guint64 sz_limit = size_limit (set);

  for (;;) {
    merge_pass (set, threshold, sz_limit);
    if (set->regions->len <= set->attrs.max_nr_regions || threshold >= max_accesses)
      break;
    threshold = MAX (1, threshold * 2);
  }
}

/* Only after a load of more regions than DAMON could merge away under the
 * size limit: merge regardless of heat, with the size limit doubling. */
static void
merge_down_to_max (VtRegionSet *set)
{
  guint64 sz_limit = size_limit (set);

  while (set->regions->len > set->attrs.max_nr_regions) {
    guint before = set->regions->len;
    sz_limit *= 2;
    merge_pass (set, G_MAXUINT, sz_limit);
    if (set->regions->len == before && sz_limit >= set->total_bytes)
      break; /* one region per range: more ranges than max */
  }
}

/* damon_split_regions_of() for one region: each extra piece is cut off the
 * left piece at a random tenth, page aligned; every piece inherits heat,
 * age and the sampling page. Appends the pieces to `out`. */
static void
append_split (VtRegionSet *set, const VtRegion *r, guint nr_pieces, GArray *out)
{
  VtRegion left = *r;
  VtRegion tail[2];
  guint n_tail = 0;

  g_assert (nr_pieces <= G_N_ELEMENTS (tail) + 1);
  for (guint i = 0; i + 1 < nr_pieces && region_size (&left) > 2 * PAGE_SIZE; i++) {
    guint64 sz = region_size (&left);
    guint64 sz_sub = PAGE_ALIGN_DOWN (rand_range (set, 1, 10) * sz / 10);
    if (sz_sub == 0 || sz_sub >= sz)
      continue;
    tail[n_tail] = left;
    tail[n_tail++].start = left.start + sz_sub;
    left.end = left.start + sz_sub;
  }
  g_array_append_val (out, left);
  while (n_tail > 0)
    g_array_append_val (out, tail[--n_tail]);
}

/* kdamond_split_regions(). */
static void
split_regions (VtRegionSet *set)
{
  guint n = set->regions->len;
  guint max_nr = set->attrs.max_nr_regions;

  if (n > max_nr / 2)
    return;
  /* Maybe the middle of a region differs: try three pieces when the count
   * settled. */
  guint nr_pieces = set->last_split_count == n && n < max_nr / 3 ? 3 : 2;

  GArray *split = g_array_sized_new (FALSE, FALSE, sizeof (VtRegion), n * nr_pieces);
  for (guint i = 0; i < n; i++)
    append_split (set, region_at (set, i), nr_pieces, split);
  g_array_unref (set->regions);
  set->regions = split;
  set->last_split_count = n;
}

/* Only after a load of fewer regions than min: halve the largest region
 * until there are enough. */
static void
split_up_to_min (VtRegionSet *set)
{
  while (set->regions->len < set->attrs.min_nr_regions) {
    guint largest = 0;
    for (guint i = 1; i < set->regions->len; i++)
      if (region_size (region_at (set, i)) > region_size (region_at (set, largest)))
        largest = i;

    VtRegion right = *region_at (set, largest);
    if (region_pages (&right) < 2)
      break; /* every region is one page */
    guint64 middle = right.start + region_pages (&right) / 2 * PAGE_SIZE;
    region_at (set, largest)->end = middle;
    right.start = middle;
    g_array_insert_val (set->regions, largest + 1, right);
  }
}

void
vt_region_set_aggregate (VtRegionSet *set)
{
  g_return_if_fail (set);

  close_window (set);
  merge_regions (set);
  merge_down_to_max (set);
  split_regions (set);
  split_up_to_min (set);
  reset_checks (set);
}

/* --- Loading a snapshot ----------------------------------------------- */

typedef struct {
  VtRegion region;
  guint index; /* in the snapshot, to break ties between equal starts */
} SnapshotRegion;

static int
compare_snapshot_regions (gconstpointer a, gconstpointer b)
{
  const SnapshotRegion *x = a, *y = b;
  if (x->region.start != y->region.start)
    return x->region.start < y->region.start ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* The snapshot sorted by start, bounds rounded down to pages (a boundary
 * two regions share stays shared), empty regions dropped. */
static GArray *
sorted_snapshot (const VtRegion *regions, guint n)
{
  GArray *sorted = g_array_sized_new (FALSE, FALSE, sizeof (SnapshotRegion), n);

  for (guint i = 0; i < n; i++) {
    SnapshotRegion s = { .region = regions[i], .index = i };
    s.region.start = PAGE_ALIGN_DOWN (s.region.start);
    s.region.end = PAGE_ALIGN_DOWN (s.region.end);
    if (s.region.start < s.region.end)
      g_array_append_val (sorted, s);
  }
  g_array_sort (sorted, compare_snapshot_regions);
  return sorted;
}

static void
append_region (GArray *regions, guint64 start, guint64 end, guint nr_accesses, guint age)
{
  VtRegion r = region_new (start, end);
  r.nr_accesses = nr_accesses;
  r.age = age;
  g_array_append_val (regions, r);
}

/* Tiles one range: the snapshot's parts inside it, 0-heat regions in the
 * holes. A part already covered belongs to the region that started first. */
static void
append_loaded_range (GArray *out, const VtAddrRange *range, GArray *sorted)
{
  guint64 covered = range->start;

  for (guint i = 0; i < sorted->len && covered < range->end; i++) {
    const VtRegion *s = &g_array_index (sorted, SnapshotRegion, i).region;
    guint64 start = MAX (s->start, covered);
    guint64 end = MIN (s->end, range->end);
    if (start >= end)
      continue;
    if (start > covered)
      append_region (out, covered, start, 0, 0);
    append_region (out, start, end, s->nr_accesses, s->age);
    covered = end;
  }
  if (covered < range->end)
    append_region (out, covered, range->end, 0, 0);
}

void
vt_region_set_load (VtRegionSet *set, const VtRegion *regions, guint n)
{
  g_return_if_fail (set && (regions || n == 0));

  g_autoptr (GArray) sorted = sorted_snapshot (regions, n);
  GArray *loaded = g_array_sized_new (FALSE, FALSE, sizeof (VtRegion), sorted->len + set->ranges->len);
  for (guint i = 0; i < set->ranges->len; i++)
    append_loaded_range (loaded, &g_array_index (set->ranges, VtAddrRange, i), sorted);

  g_array_unref (set->regions);
  set->regions = loaded;
  /* The loaded regions have no prepared sampling pages. */
  set->prepared = FALSE;
  reset_checks (set);
}
