/* The region engine against fake memory: tiling, sampling, aging, merge and
 * split bounds, snapshot loading. The memory is fake, the algorithm is the
 * real one: where DAMON only promises best effort (region boundaries follow
 * a hot area to within a fraction of a region), the tests allow that slack
 * and say how much. */
#include <math.h>

#include <glib.h>

#include "regions/vt-heat-hold.h"
#include "regions/vt-interval-tune.h"
#include "regions/vt-regions.h"

#define KiB (G_GUINT64_CONSTANT (1024))
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)
#define PAGE (4 * KiB)

/* 40 samples per aggregation: heat 0..40, merge threshold 4. */
static const VtRegionAttrs default_attrs = {
  .sample_us = 5000, .aggr_us = 200000, .min_nr_regions = 10, .max_nr_regions = 1000
};
#define SAMPLES 40
#define THRESHOLD (SAMPLES / 10)

/* --- Fake memory ------------------------------------------------------- */

/* Pages in [start, end) are accessed in the last `hits` checks of each
 * window of SAMPLES checks. */
typedef struct {
  guint64 start, end;
  guint hits;
} Band;

typedef struct {
  const VtAddrRange *ranges;  /* the monitored ranges, for the invariants */
  guint n_ranges;
  guint64 hot_start, hot_end; /* every check of a page in here finds it accessed */
  guint hit_every;            /* > 0: the window's checks number hit_every, 2*hit_every, ...
                               * (counting from 1) find every page accessed */
  GRand *noise;               /* non-NULL: every check is accessed at random, p = 1/2 */
  const Band *bands;
  guint n_bands;
  guint prepares, checks, window_check;
  GHashTable *prepared;       /* pages marked by the last prepare */
} FakeMemory;

static void
fake_memory_clear (FakeMemory *mem)
{
  g_clear_pointer (&mem->noise, g_rand_free);
  g_clear_pointer (&mem->prepared, g_hash_table_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (FakeMemory, fake_memory_clear)

static void
fake_prepare (gpointer data, const VtRegion *regions, guint n)
{
  FakeMemory *mem = data;
  mem->prepares++;
  g_clear_pointer (&mem->prepared, g_hash_table_unref);
  mem->prepared = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  for (guint i = 0; i < n; i++) {
    const VtRegion *r = &regions[i];
    g_assert_cmpuint (r->sampling_addr % PAGE, ==, 0);
    g_assert_cmpuint (r->sampling_addr, >=, r->start);
    g_assert_cmpuint (r->sampling_addr, <, r->end);
    g_hash_table_add (mem->prepared, g_memdup2 (&r->sampling_addr, sizeof r->sampling_addr));
  }
}

static gboolean
in_band_hit (const FakeMemory *mem, guint64 addr)
{
  for (guint b = 0; b < mem->n_bands; b++)
    if (addr >= mem->bands[b].start && addr < mem->bands[b].end)
      return mem->window_check > SAMPLES - mem->bands[b].hits;
  return FALSE;
}

static void
fake_check (gpointer data, const VtRegion *regions, guint n, gboolean *accessed)
{
  FakeMemory *mem = data;
  mem->checks++;
  mem->window_check++;
  gboolean all_hit = mem->hit_every && mem->window_check % mem->hit_every == 0;
  for (guint i = 0; i < n; i++) {
    guint64 addr = regions[i].sampling_addr;
    /* Only prepared pages say anything. */
    g_assert_nonnull (mem->prepared);
    g_assert_true (g_hash_table_contains (mem->prepared, &addr));
    accessed[i] = all_hit || (addr >= mem->hot_start && addr < mem->hot_end) ||
                  in_band_hit (mem, addr) || (mem->noise && g_rand_boolean (mem->noise));
  }
}

static const VtAccessPrimitives fake_prims = { fake_prepare, fake_check };

/* --- Helpers ----------------------------------------------------------- */

static const VtRegion *
regions_of (const VtRegionSet *set, guint *n)
{
  const VtRegion *regions = vt_region_set_regions (set, n);
  g_assert_nonnull (regions);
  return regions;
}

/* Sorted, page aligned, each within one range, no holes, nothing outside. */
static void
assert_tiles (const VtRegionSet *set, const VtAddrRange *ranges, guint n_ranges)
{
  guint n;
  const VtRegion *r = regions_of (set, &n);
  guint i = 0;

  for (guint k = 0; k < n_ranges; k++) {
    guint64 at = ranges[k].start;
    while (at < ranges[k].end) {
      g_assert_cmpuint (i, <, n);
      g_assert_cmpuint (r[i].start, ==, at);
      g_assert_cmpuint (r[i].end, >, r[i].start);
      g_assert_cmpuint (r[i].end, <=, ranges[k].end);
      g_assert_cmpuint (r[i].start % PAGE, ==, 0);
      g_assert_cmpuint (r[i].end % PAGE, ==, 0);
      at = r[i++].end;
    }
  }
  g_assert_cmpuint (i, ==, n);
}

static guint64
pages_in (const VtAddrRange *ranges, guint n_ranges)
{
  guint64 pages = 0;
  for (guint k = 0; k < n_ranges; k++)
    pages += (ranges[k].end - ranges[k].start) / PAGE;
  return pages;
}

static void
assert_bounds (const VtRegionSet *set, const VtAddrRange *ranges, guint n_ranges)
{
  const VtRegionAttrs *attrs = vt_region_set_attrs (set);
  guint n;
  regions_of (set, &n);
  g_assert_cmpuint (n, <=, attrs->max_nr_regions);
  if (pages_in (ranges, n_ranges) >= attrs->min_nr_regions)
    g_assert_cmpuint (n, >=, attrs->min_nr_regions);
}

/* One aggregation interval: `samples` samples, then aggregate, then the
 * invariants. */
static void
run_window (VtRegionSet *set, FakeMemory *mem, guint samples)
{
  mem->window_check = 0;
  for (guint s = 0; s < samples; s++)
    vt_region_set_sample (set, &fake_prims, mem);
  vt_region_set_aggregate (set);
  assert_tiles (set, mem->ranges, mem->n_ranges);
  assert_bounds (set, mem->ranges, mem->n_ranges);
}

static guint
region_count (const VtRegionSet *set)
{
  guint n;
  regions_of (set, &n);
  return n;
}

/* Lowest and highest heat of the regions overlapping [start, end). */
static guint
min_heat_over (const VtRegionSet *set, guint64 start, guint64 end)
{
  guint n, heat = G_MAXUINT;
  const VtRegion *r = regions_of (set, &n);
  for (guint i = 0; i < n; i++)
    if (r[i].end > start && r[i].start < end)
      heat = MIN (heat, r[i].nr_accesses);
  return heat;
}

static guint
max_heat_over (const VtRegionSet *set, guint64 start, guint64 end)
{
  guint n, heat = 0;
  const VtRegion *r = regions_of (set, &n);
  for (guint i = 0; i < n; i++)
    if (r[i].end > start && r[i].start < end)
      heat = MAX (heat, r[i].nr_accesses);
  return heat;
}

/* Bytes of [start, end) in regions of heat >= min_heat. */
static guint64
bytes_over (const VtRegionSet *set, guint64 start, guint64 end, guint min_heat)
{
  guint n;
  guint64 bytes = 0;
  const VtRegion *r = regions_of (set, &n);
  for (guint i = 0; i < n; i++) {
    guint64 s = MAX (r[i].start, start), e = MIN (r[i].end, end);
    if (e > s && r[i].nr_accesses >= min_heat)
      bytes += e - s;
  }
  return bytes;
}

static void
assert_all_regions (const VtRegionSet *set, guint nr_accesses, guint age)
{
  guint n;
  const VtRegion *r = regions_of (set, &n);
  for (guint i = 0; i < n; i++) {
    g_assert_cmpuint (r[i].nr_accesses, ==, nr_accesses);
    g_assert_cmpuint (r[i].age, ==, age);
    g_assert_cmpuint (r[i].cur_accesses, ==, 0);
  }
}

static guint
regions_in (const VtRegionSet *set, const VtAddrRange *range)
{
  guint n, count = 0;
  const VtRegion *r = regions_of (set, &n);
  for (guint i = 0; i < n; i++)
    count += r[i].start >= range->start && r[i].end <= range->end;
  return count;
}

/* --- new() --------------------------------------------------------------- */

static void
test_new_one_range (void)
{
  VtAddrRange range = { 1 * GiB, 2 * GiB };
  g_autoptr (VtRegionSet) set = vt_region_set_new (&default_attrs, &range, 1, 1);
  g_assert_nonnull (set);
  assert_tiles (set, &range, 1);

  guint n;
  const VtRegion *r = regions_of (set, &n);
  g_assert_cmpuint (n, ==, 10);
  for (guint i = 0; i < n; i++) {
    /* 1 GiB / 10: 26214 or 26215 pages. */
    g_assert_cmpuint (r[i].end - r[i].start, >=, 26214 * PAGE);
    g_assert_cmpuint (r[i].end - r[i].start, <=, 26215 * PAGE);
    g_assert_cmpuint (r[i].nr_accesses, ==, 0);
    g_assert_cmpuint (r[i].age, ==, 0);
  }
  g_assert_cmpuint (vt_region_set_max_accesses (set), ==, SAMPLES);
  g_assert_cmpuint (vt_region_set_attrs (set)->max_nr_regions, ==, 1000);
  g_assert_cmpuint (vt_region_set_bytes_at_least (set, 0), ==, 1 * GiB);
}

static void
test_new_ranges_with_gaps (void)
{
  /* Shares of 10: 6.25, 2.5, 1.25 -> 6, 3 (largest remainder), 1. */
  VtAddrRange ranges[] = {
    { 0, 640 * MiB }, { 1 * GiB, 1 * GiB + 256 * MiB }, { 4 * GiB, 4 * GiB + 128 * MiB }
  };
  g_autoptr (VtRegionSet) set = vt_region_set_new (&default_attrs, ranges, 3, 1);
  assert_tiles (set, ranges, 3);
  g_assert_cmpuint (region_count (set), ==, 10);
  g_assert_cmpuint (regions_in (set, &ranges[0]), ==, 6);
  g_assert_cmpuint (regions_in (set, &ranges[1]), ==, 3);
  g_assert_cmpuint (regions_in (set, &ranges[2]), ==, 1);

  /* A one-page range still gets its region, the big one gives it up. */
  VtAddrRange tiny[] = { { 0, 1 * GiB }, { 2 * GiB, 2 * GiB + PAGE } };
  g_autoptr (VtRegionSet) with_tiny = vt_region_set_new (&default_attrs, tiny, 2, 1);
  assert_tiles (with_tiny, tiny, 2);
  g_assert_cmpuint (regions_in (with_tiny, &tiny[0]), ==, 9);
  g_assert_cmpuint (regions_in (with_tiny, &tiny[1]), ==, 1);

  /* Fewer pages than min: one region per page. */
  VtAddrRange few_pages = { 0, 5 * PAGE };
  g_autoptr (VtRegionSet) small = vt_region_set_new (&default_attrs, &few_pages, 1, 1);
  assert_tiles (small, &few_pages, 1);
  g_assert_cmpuint (region_count (small), ==, 5);

  /* More ranges than min: one region per range. */
  VtRegionAttrs three = default_attrs;
  three.min_nr_regions = 3;
  VtAddrRange four[] = { { 0, MiB }, { 2 * MiB, 3 * MiB }, { 4 * MiB, 5 * MiB }, { 6 * MiB, 7 * MiB } };
  g_autoptr (VtRegionSet) many = vt_region_set_new (&three, four, 4, 1);
  assert_tiles (many, four, 4);
  g_assert_cmpuint (region_count (many), ==, 4);
}

static void
test_new_rejects_invalid (void)
{
  VtAddrRange good = { 0, 1 * GiB };
  VtRegionAttrs a;

  a = default_attrs;
  a.min_nr_regions = 2;
  g_assert_null (vt_region_set_new (&a, &good, 1, 1));
  a = default_attrs;
  a.max_nr_regions = 9;
  g_assert_null (vt_region_set_new (&a, &good, 1, 1));
  a = default_attrs;
  a.sample_us = 0;
  g_assert_null (vt_region_set_new (&a, &good, 1, 1));
  a = default_attrs;
  a.aggr_us = 4999;
  g_assert_null (vt_region_set_new (&a, &good, 1, 1));
  g_assert_null (vt_region_set_new (NULL, &good, 1, 1));
  /* The smallest valid: max == min, one sample per aggregation. */
  a = default_attrs;
  a.max_nr_regions = a.min_nr_regions;
  a.aggr_us = a.sample_us;
  g_autoptr (VtRegionSet) edge = vt_region_set_new (&a, &good, 1, 1);
  g_assert_nonnull (edge);
  g_assert_cmpuint (vt_region_set_max_accesses (edge), ==, 1);

  g_assert_null (vt_region_set_new (&default_attrs, NULL, 0, 1));
  g_assert_null (vt_region_set_new (&default_attrs, &good, 0, 1));
  VtAddrRange unsorted[] = { { 2 * GiB, 3 * GiB }, { 0, 1 * GiB } };
  g_assert_null (vt_region_set_new (&default_attrs, unsorted, 2, 1));
  VtAddrRange overlapping[] = { { 0, 2 * GiB }, { 1 * GiB, 3 * GiB } };
  g_assert_null (vt_region_set_new (&default_attrs, overlapping, 2, 1));
  VtAddrRange empty = { 1 * GiB, 1 * GiB };
  g_assert_null (vt_region_set_new (&default_attrs, &empty, 1, 1));
  VtAddrRange misaligned_start = { 100, 1 * GiB };
  g_assert_null (vt_region_set_new (&default_attrs, &misaligned_start, 1, 1));
  VtAddrRange misaligned_end = { 0, 1 * GiB + 100 };
  g_assert_null (vt_region_set_new (&default_attrs, &misaligned_end, 1, 1));
  /* Touching ranges are disjoint. */
  VtAddrRange touching[] = { { 0, 1 * GiB }, { 1 * GiB, 2 * GiB } };
  g_autoptr (VtRegionSet) ok = vt_region_set_new (&default_attrs, touching, 2, 1);
  g_assert_nonnull (ok);
}

/* --- sample() and aggregate() --------------------------------------------- */

static void
test_sample_prepares_then_checks (void)
{
  VtAddrRange range = { 0, 1 * GiB };
  g_auto (FakeMemory) mem = { .ranges = &range, .n_ranges = 1, .hot_start = 0, .hot_end = 1 * GiB };
  g_autoptr (VtRegionSet) set = vt_region_set_new (&default_attrs, &range, 1, 1);

  /* The first sample has nothing to check yet. */
  vt_region_set_sample (set, &fake_prims, &mem);
  g_assert_cmpuint (mem.prepares, ==, 1);
  g_assert_cmpuint (mem.checks, ==, 0);
  guint n;
  const VtRegion *r = regions_of (set, &n);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (r[i].cur_accesses, ==, 0);

  vt_region_set_sample (set, &fake_prims, &mem);
  vt_region_set_sample (set, &fake_prims, &mem);
  g_assert_cmpuint (mem.prepares, ==, 3);
  g_assert_cmpuint (mem.checks, ==, 2);
  r = regions_of (set, &n);
  for (guint i = 0; i < n; i++) {
    g_assert_cmpuint (r[i].cur_accesses, ==, 2);
    g_assert_cmpuint (r[i].nr_accesses, ==, 0); /* until the aggregation */
  }
  vt_region_set_aggregate (set);
  r = regions_of (set, &n);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (r[i].nr_accesses, ==, 2);
}

/* All memory equally hot: every region, including those split off at an
 * aggregation (whose sampling page for the first check was their parent's),
 * reads exactly the full heat. */
static void
test_uniform_heat_is_exact (void)
{
  VtAddrRange ranges[] = { { 0, 512 * MiB }, { 1 * GiB, 1 * GiB + 512 * MiB } };
  g_auto (FakeMemory) mem = { .ranges = ranges, .n_ranges = 2, .hot_end = G_MAXUINT64 };
  g_autoptr (VtRegionSet) set = vt_region_set_new (&default_attrs, ranges, 2, 3);

  /* The first window had one check less: its first sample only prepared. */
  run_window (set, &mem, SAMPLES);
  g_assert_cmpuint (min_heat_over (set, 0, G_MAXUINT64), ==, SAMPLES - 1);
  for (guint w = 0; w < 10; w++) {
    run_window (set, &mem, SAMPLES);
    g_assert_cmpuint (min_heat_over (set, 0, G_MAXUINT64), ==, SAMPLES);
    g_assert_cmpuint (max_heat_over (set, 0, G_MAXUINT64), ==, SAMPLES);
  }
  g_assert_cmpuint (vt_region_set_bytes_at_least (set, SAMPLES), ==, 1 * GiB);

  mem.hot_end = 0;
  for (guint w = 0; w < 3; w++) {
    run_window (set, &mem, SAMPLES);
    g_assert_cmpuint (max_heat_over (set, 0, G_MAXUINT64), ==, 0);
  }
}

/* 1 GiB with a hot 64 MiB in the middle. */
static void
test_hot_range_found (void)
{
  VtAddrRange range = { 0, 1 * GiB };
  const guint64 hot_start = 512 * MiB, hot_end = 576 * MiB;
  g_auto (FakeMemory) mem = { .ranges = &range, .n_ranges = 1, .hot_start = hot_start,
                              .hot_end = hot_end };
  g_autoptr (VtRegionSet) set = vt_region_set_new (&default_attrs, &range, 1, 42);
  const guint64 hot_len = hot_end - hot_start, quarter = hot_len / 4;
  guint full_heat_windows = 0;

  for (guint w = 0; w < 30; w++) {
    run_window (set, &mem, SAMPLES);
    if (w < 10)
      continue;
    /* (b) What reads hot is the hot range, to 10%. */
    guint64 hot_bytes = vt_region_set_bytes_at_least (set, SAMPLES / 2);
    g_assert_cmpuint (hot_bytes, >=, hot_len - hot_len / 10);
    g_assert_cmpuint (hot_bytes, <=, hot_len + hot_len / 10);
    if (w < 20)
      continue;
    /* (c) Boundaries are exact only to a fraction of a region: a region
     * straddling one has a mixed heat, and one that merged into the hot
     * region pulls its (floored) average below the full heat by at most the
     * merge threshold. Over 1000 seeds, from the 20th aggregation on: hot
     * pages read below half heat only within 0.92 MiB of the ends, cold
     * pages above it only within 2.5 MiB; the middle half reads at least
     * 37, and the full 40 in at least one of the last ten aggregations. */
    g_assert_cmpuint (min_heat_over (set, hot_start + 2 * MiB, hot_end - 2 * MiB), >=, SAMPLES / 2);
    g_assert_cmpuint (max_heat_over (set, 0, hot_start - 4 * MiB), <, SAMPLES / 2);
    g_assert_cmpuint (max_heat_over (set, hot_end + 4 * MiB, 1 * GiB), <, SAMPLES / 2);
    guint middle = min_heat_over (set, hot_start + quarter, hot_end - quarter);
    g_assert_cmpuint (middle, >=, SAMPLES - THRESHOLD);
    full_heat_windows += middle == SAMPLES;
  }
  g_assert_cmpuint (full_heat_windows, >=, 1);
}

static void
test_hot_range_moves (void)
{
  VtAddrRange range = { 0, 1 * GiB };
  g_auto (FakeMemory) mem = { .ranges = &range, .n_ranges = 1, .hot_start = 512 * MiB,
                              .hot_end = 576 * MiB };
  g_autoptr (VtRegionSet) set = vt_region_set_new (&default_attrs, &range, 1, 5);
  const guint64 hot_len = 64 * MiB;

  for (guint w = 0; w < 20; w++)
    run_window (set, &mem, SAMPLES);
  g_assert_cmpuint (bytes_over (set, 512 * MiB, 576 * MiB, SAMPLES / 2), >=, hot_len * 9 / 10);

  /* Moves to overlap its old place by a half. Over 1000 seeds, 10
   * aggregations at most found it (12 here for a margin). */
  mem.hot_start = 544 * MiB;
  mem.hot_end = 608 * MiB;
  for (guint w = 0; w < 12; w++)
    run_window (set, &mem, SAMPLES);
  g_assert_cmpuint (bytes_over (set, 544 * MiB, 608 * MiB, SAMPLES / 2), >=, hot_len * 9 / 10);
  g_assert_cmpuint (bytes_over (set, 512 * MiB, 544 * MiB, SAMPLES / 2), <=, hot_len / 10);
  g_assert_cmpuint (vt_region_set_bytes_at_least (set, SAMPLES / 2), <=, hot_len * 11 / 10);

  /* And again, far away. */
  mem.hot_start = 128 * MiB;
  mem.hot_end = 192 * MiB;
  for (guint w = 0; w < 12; w++)
    run_window (set, &mem, SAMPLES);
  g_assert_cmpuint (bytes_over (set, 128 * MiB, 192 * MiB, SAMPLES / 2), >=, hot_len * 9 / 10);
  g_assert_cmpuint (bytes_over (set, 512 * MiB, 608 * MiB, SAMPLES / 2), <=, hot_len / 10);
  g_assert_cmpuint (vt_region_set_bytes_at_least (set, SAMPLES / 2), <=, hot_len * 11 / 10);
}

/* vtierd sizes a VM's min_nr_regions so that no region exceeds
 * max-region-mib: a hot set then never hides inside one large cold region
 * (DAMON merges neighbours whose heat differs by less than a tenth), and a
 * move is found within two aggregations, where min 10 took up to 10. */
static void
test_min_for_size (void)
{
  g_assert_cmpuint (vt_regions_min_for_size (1 * GiB, 10, 1000, 16 * MiB), ==, 64);
  g_assert_cmpuint (vt_regions_min_for_size (100 * MiB, 10, 1000, 16 * MiB), ==, 10);
  g_assert_cmpuint (vt_regions_min_for_size (1 * GiB + 1, 10, 1000, 16 * MiB), ==, 65);
  g_assert_cmpuint (vt_regions_min_for_size (64 * GiB, 10, 1000, 16 * MiB), ==, 500);
  g_assert_cmpuint (vt_regions_min_for_size (64 * GiB, 10, 1000, 0), ==, 10);

  VtAddrRange range = { 0, 1 * GiB };
  VtRegionAttrs attrs = default_attrs;
  attrs.min_nr_regions = vt_regions_min_for_size (1 * GiB, 10, 1000, 16 * MiB);
  g_auto (FakeMemory) mem = { .ranges = &range, .n_ranges = 1, .hot_start = 512 * MiB,
                              .hot_end = 576 * MiB };
  g_autoptr (VtRegionSet) set = vt_region_set_new (&attrs, &range, 1, 5);
  for (guint w = 0; w < 20; w++)
    run_window (set, &mem, SAMPLES);
  guint n;
  const VtRegion *regions = vt_region_set_regions (set, &n);
  for (guint r = 0; r < n; r++)
    g_assert_cmpuint (regions[r].end - regions[r].start, <=, 16 * MiB);
  mem.hot_start = 128 * MiB;
  mem.hot_end = 192 * MiB;
  for (guint w = 0; w < 2; w++)
    run_window (set, &mem, SAMPLES);
  g_assert_cmpuint (bytes_over (set, 128 * MiB, 192 * MiB, SAMPLES / 2), >=, 64 * MiB * 9 / 10);
  g_assert_cmpuint (bytes_over (set, 512 * MiB, 576 * MiB, SAMPLES / 2), <=, 64 * MiB / 10);
}

/* Everywhere the same heat, so every region has the same age. */
static void
test_aging (void)
{
  VtAddrRange range = { 0, 1 * GiB };
  g_auto (FakeMemory) mem = { .ranges = &range, .n_ranges = 1 };
  g_autoptr (VtRegionSet) set = vt_region_set_new (&default_attrs, &range, 1, 9);

  run_window (set, &mem, SAMPLES);
  assert_all_regions (set, 0, 1);
  run_window (set, &mem, SAMPLES);
  assert_all_regions (set, 0, 2);
  /* 0 -> 4: a change of the threshold itself keeps the age. */
  mem.hit_every = SAMPLES / 4;
  run_window (set, &mem, SAMPLES);
  assert_all_regions (set, 4, 3);
  /* 4 -> 10: more than the threshold resets it. */
  mem.hit_every = SAMPLES / 10;
  run_window (set, &mem, SAMPLES);
  assert_all_regions (set, 10, 0);
  run_window (set, &mem, SAMPLES);
  assert_all_regions (set, 10, 1);
  /* 10 -> 5: so does a drop. */
  mem.hit_every = SAMPLES / 5;
  run_window (set, &mem, SAMPLES);
  assert_all_regions (set, 5, 0);
  mem.hit_every = 0;
  mem.hot_end = G_MAXUINT64;
  run_window (set, &mem, SAMPLES);
  assert_all_regions (set, SAMPLES, 0);
  run_window (set, &mem, SAMPLES);
  assert_all_regions (set, SAMPLES, 1);
}

static void
load_even_regions (VtRegionSet *set, guint64 start, guint64 end, guint count, guint heat)
{
  g_autofree VtRegion *snapshot = g_new0 (VtRegion, count);
  guint64 pages = (end - start) / PAGE;
  for (guint i = 0; i < count; i++) {
    snapshot[i].start = start + pages * i / count * PAGE;
    snapshot[i].end = start + pages * (i + 1) / count * PAGE;
    snapshot[i].nr_accesses = heat;
  }
  vt_region_set_load (set, snapshot, count);
}

/* All cold: regions merge back towards min, never below, never above max,
 * and never beyond the size limit. */
static void
test_merge_when_cold (void)
{
  VtAddrRange range = { 0, 1 * GiB };
  g_auto (FakeMemory) mem = { .ranges = &range, .n_ranges = 1 };
  g_autoptr (VtRegionSet) set = vt_region_set_new (&default_attrs, &range, 1, 11);
  const guint64 size_limit = 1 * GiB / 10 / PAGE * PAGE;

  load_even_regions (set, 0, 1 * GiB, 800, 0);
  g_assert_cmpuint (region_count (set), ==, 800);
  /* Merging under the size limit (1/10 of the space) leaves at most
   * 2 * 10 + 1 regions, splitting at most triples them. */
  for (guint w = 0; w < 20; w++) {
    run_window (set, &mem, SAMPLES);
    g_assert_cmpuint (region_count (set), <=, 3 * (2 * 10 + 1));
    guint n;
    const VtRegion *r = regions_of (set, &n);
    for (guint i = 0; i < n; i++)
      g_assert_cmpuint (r[i].end - r[i].start, <=, size_limit);
  }
}

/* Neighbours within the threshold merge into their size-weighted average
 * (rounded down, as DAMON), heat and age; the pieces they split into
 * inherit both. */
static void
test_merge_averages (void)
{
  VtAddrRange range = { 0, 64 * MiB };
  const Band bands[] = {
    { 0, 2 * MiB, SAMPLES },                     /* 40 */
    { 2 * MiB, 3 * MiB, SAMPLES - THRESHOLD },   /* 36: merges with 40 */
    { 3 * MiB, 4 * MiB, SAMPLES - 9 },           /* 31: too far from 38 */
  };
  g_auto (FakeMemory) mem = { .ranges = &range, .n_ranges = 1, .bands = bands, .n_bands = 3 };
  g_autoptr (VtRegionSet) set = vt_region_set_new (&default_attrs, &range, 1, 17);

  /* The cold rest in regions of 6 MiB: two of them would pass the size
   * limit of 6.4 MiB. */
  VtRegion snapshot[13] = { 0 };
  snapshot[0] = (VtRegion){ .start = 0, .end = 2 * MiB, .nr_accesses = SAMPLES, .age = 5 };
  snapshot[1] = (VtRegion){ .start = 2 * MiB, .end = 3 * MiB, .nr_accesses = 36, .age = 1 };
  snapshot[2] = (VtRegion){ .start = 3 * MiB, .end = 4 * MiB, .nr_accesses = 20, .age = 7 };
  for (guint i = 0; i < 10; i++)
    snapshot[3 + i] = (VtRegion){ .start = 4 * MiB + i * 6 * MiB, .end = 4 * MiB + (i + 1) * 6 * MiB };
  vt_region_set_load (set, snapshot, G_N_ELEMENTS (snapshot));

  /* After a load the first sample only prepares: one more for a full
   * window. */
  vt_region_set_sample (set, &fake_prims, &mem);
  run_window (set, &mem, SAMPLES);
  /* (40 * 2 + 36 * 1) / 3 = 38.67; ages 6 and 2: 4.67. The 31 went up
   * from 20: its age restarted. */
  g_assert_cmpuint (min_heat_over (set, 0, 3 * MiB), ==, 38);
  g_assert_cmpuint (max_heat_over (set, 0, 3 * MiB), ==, 38);
  g_assert_cmpuint (min_heat_over (set, 3 * MiB, 4 * MiB), ==, 31);
  g_assert_cmpuint (max_heat_over (set, 3 * MiB, 4 * MiB), ==, 31);
  g_assert_cmpuint (max_heat_over (set, 4 * MiB, 64 * MiB), ==, 0);
  guint n;
  const VtRegion *r = regions_of (set, &n);
  for (guint i = 0; i < n; i++) {
    if (r[i].end <= 3 * MiB)
      g_assert_cmpuint (r[i].age, ==, 4);
    else if (r[i].end <= 4 * MiB)
      g_assert_cmpuint (r[i].age, ==, 0);
  }
  g_assert_cmpuint (region_count (set), >, 13); /* split */
}

/* A noisy pattern keeps neighbours' heat apart: the count still stays
 * within [min, max], also after snapshots with too many or too few. */
static void
test_count_bounded_when_noisy (void)
{
  VtAddrRange ranges[] = { { 0, 256 * MiB }, { 1 * GiB, 2 * GiB } };
  VtRegionAttrs attrs = default_attrs;
  attrs.min_nr_regions = 3;
  attrs.max_nr_regions = 12;
  g_auto (FakeMemory) mem = { .ranges = ranges, .n_ranges = 2, .noise = g_rand_new_with_seed (1) };
  g_autoptr (VtRegionSet) set = vt_region_set_new (&attrs, ranges, 2, 13);

  for (guint w = 0; w < 40; w++)
    run_window (set, &mem, SAMPLES);

  /* Min 10 and max 12: DAMON's merge may keep up to 2 * 10 + 2 regions.
   * Many small ones merge under the size limit (128 MiB)... */
  attrs.min_nr_regions = 10;
  g_autoptr (VtRegionSet) tight = vt_region_set_new (&attrs, ranges, 2, 13);
  load_even_regions (tight, 1 * GiB, 2 * GiB, 300, 0);
  g_assert_cmpuint (region_count (tight), ==, 301);
  for (guint w = 0; w < 10; w++)
    run_window (tight, &mem, SAMPLES);
  /* ... but not 15 of 85 MiB, no two of which fit under it. */
  load_even_regions (tight, 0, 2 * GiB, 24, 0);
  g_assert_cmpuint (region_count (tight), >, 12);
  run_window (tight, &mem, SAMPLES);

  /* Too few: one region per range. */
  vt_region_set_load (tight, NULL, 0);
  g_assert_cmpuint (region_count (tight), ==, 2);
  run_window (tight, &mem, SAMPLES);
  g_assert_cmpuint (region_count (tight), >=, 10);
}

/* --- load() -------------------------------------------------------------- */

static void
assert_region (const VtRegion *r, guint64 start, guint64 end, guint nr_accesses, guint age)
{
  g_assert_cmpuint (r->start, ==, start);
  g_assert_cmpuint (r->end, ==, end);
  g_assert_cmpuint (r->nr_accesses, ==, nr_accesses);
  g_assert_cmpuint (r->age, ==, age);
  g_assert_cmpuint (r->cur_accesses, ==, 0);
}

static void
test_load_clips_and_fills (void)
{
  VtAddrRange ranges[] = { { 0, 1 * MiB }, { 2 * MiB, 3 * MiB } };
  g_autoptr (VtRegionSet) set = vt_region_set_new (&default_attrs, ranges, 2, 1);
  /* Unsorted; A spans the gap; C runs past the end; E overlaps A's second
   * part; F starts with B. */
  const VtRegion snapshot[] = {
    { .start = 512 * KiB, .end = 2 * MiB + 512 * KiB, .nr_accesses = 7, .age = 3 },  /* A */
    { .start = 2 * MiB + 768 * KiB, .end = 4 * MiB, .nr_accesses = 9, .age = 5 },    /* C */
    { .start = 0, .end = 256 * KiB, .nr_accesses = 2, .age = 1, .cur_accesses = 8 }, /* B */
    { .start = 2 * MiB + 256 * KiB, .end = 2 * MiB + 768 * KiB, .nr_accesses = 4, .age = 2 }, /* E */
    { .start = 0, .end = 128 * KiB, .nr_accesses = 30, .age = 30 },                 /* F */
    { .start = 5 * MiB, .end = 6 * MiB, .nr_accesses = 30, .age = 30 },             /* outside */
    { .start = 700 * KiB, .end = 700 * KiB, .nr_accesses = 30, .age = 30 },         /* empty */
  };
  vt_region_set_load (set, snapshot, G_N_ELEMENTS (snapshot));
  assert_tiles (set, ranges, 2);

  /* Where snapshot regions overlap, the one that starts first keeps the
   * overlap (on equal starts, the first in the snapshot). */
  guint n;
  const VtRegion *r = regions_of (set, &n);
  g_assert_cmpuint (n, ==, 6);
  assert_region (&r[0], 0, 256 * KiB, 2, 1);                               /* B, not F */
  assert_region (&r[1], 256 * KiB, 512 * KiB, 0, 0);                       /* hole */
  assert_region (&r[2], 512 * KiB, 1 * MiB, 7, 3);                         /* A */
  assert_region (&r[3], 2 * MiB, 2 * MiB + 512 * KiB, 7, 3);               /* A */
  assert_region (&r[4], 2 * MiB + 512 * KiB, 2 * MiB + 768 * KiB, 4, 2);   /* E, after A */
  assert_region (&r[5], 2 * MiB + 768 * KiB, 3 * MiB, 9, 5);               /* C */

  /* Nothing: one cold region per range. */
  vt_region_set_load (set, NULL, 0);
  r = regions_of (set, &n);
  g_assert_cmpuint (n, ==, 2);
  assert_region (&r[0], 0, 1 * MiB, 0, 0);
  assert_region (&r[1], 2 * MiB, 3 * MiB, 0, 0);
}

static void
test_load_keeps_kernel_view (void)
{
  VtAddrRange range = { 0, 64 * MiB };
  VtRegionAttrs attrs = default_attrs;
  attrs.max_nr_regions = 20;
  g_autoptr (VtRegionSet) set = vt_region_set_new (&attrs, &range, 1, 1);
  g_auto (FakeMemory) mem = { .ranges = &range, .n_ranges = 1 };

  /* More than max: kept. */
  load_even_regions (set, 0, 64 * MiB, 100, 3);
  assert_tiles (set, &range, 1);
  g_assert_cmpuint (region_count (set), ==, 100);
  g_assert_cmpuint (vt_region_set_bytes_at_least (set, 3), ==, 64 * MiB);

  /* Bounds off a page round down, so neighbours stay neighbours. */
  const VtRegion odd[] = {
    { .start = 100, .end = 8 * KiB + 100, .nr_accesses = 1 },
    { .start = 8 * KiB + 100, .end = 64 * MiB, .nr_accesses = 2 },
  };
  vt_region_set_load (set, odd, 2);
  guint n;
  const VtRegion *r = regions_of (set, &n);
  g_assert_cmpuint (n, ==, 2);
  assert_region (&r[0], 0, 8 * KiB, 1, 0);
  assert_region (&r[1], 8 * KiB, 64 * MiB, 2, 0);

  /* The loaded regions' pages were never prepared: the next sample only
   * prepares. */
  vt_region_set_sample (set, &fake_prims, &mem);
  g_assert_cmpuint (mem.checks, ==, 0);
  vt_region_set_sample (set, &fake_prims, &mem);
  g_assert_cmpuint (mem.checks, ==, 1);
  vt_region_set_load (set, odd, 2);
  vt_region_set_sample (set, &fake_prims, &mem);
  g_assert_cmpuint (mem.checks, ==, 1);
  g_assert_cmpuint (mem.prepares, ==, 3);
}

static void
test_bytes_at_least (void)
{
  VtAddrRange range = { 0, 16 * MiB };
  g_autoptr (VtRegionSet) set = vt_region_set_new (&default_attrs, &range, 1, 1);
  const VtRegion snapshot[] = {
    { .start = 0, .end = 1 * MiB, .nr_accesses = 40 },
    { .start = 1 * MiB, .end = 3 * MiB, .nr_accesses = 20 },
    { .start = 3 * MiB, .end = 7 * MiB, .nr_accesses = 5 },
    { .start = 8 * MiB, .end = 16 * MiB, .nr_accesses = 1 },
  };
  vt_region_set_load (set, snapshot, G_N_ELEMENTS (snapshot));
  g_assert_cmpuint (vt_region_set_bytes_at_least (set, 0), ==, 16 * MiB);
  g_assert_cmpuint (vt_region_set_bytes_at_least (set, 1), ==, 15 * MiB);
  g_assert_cmpuint (vt_region_set_bytes_at_least (set, 2), ==, 7 * MiB);
  g_assert_cmpuint (vt_region_set_bytes_at_least (set, 5), ==, 7 * MiB);
  g_assert_cmpuint (vt_region_set_bytes_at_least (set, 6), ==, 3 * MiB);
  g_assert_cmpuint (vt_region_set_bytes_at_least (set, 21), ==, 1 * MiB);
  g_assert_cmpuint (vt_region_set_bytes_at_least (set, 40), ==, 1 * MiB);
  g_assert_cmpuint (vt_region_set_bytes_at_least (set, 41), ==, 0);
}

/* --- Determinism --------------------------------------------------------- */

static gboolean
same_regions (const VtRegionSet *a, const VtRegionSet *b)
{
  guint na, nb;
  const VtRegion *ra = regions_of (a, &na), *rb = regions_of (b, &nb);
  if (na != nb)
    return FALSE;
  for (guint i = 0; i < na; i++)
    if (ra[i].start != rb[i].start || ra[i].end != rb[i].end ||
        ra[i].sampling_addr != rb[i].sampling_addr || ra[i].nr_accesses != rb[i].nr_accesses ||
        ra[i].age != rb[i].age)
      return FALSE;
  return TRUE;
}

static VtRegionSet *
run_seeded (guint64 seed)
{
  VtAddrRange range = { 0, 1 * GiB };
  g_auto (FakeMemory) mem = { .ranges = &range, .n_ranges = 1, .hot_start = 100 * MiB,
                              .hot_end = 200 * MiB };
  VtRegionSet *set = vt_region_set_new (&default_attrs, &range, 1, seed);
  for (guint w = 0; w < 5; w++)
    run_window (set, &mem, SAMPLES);
  return set;
}

static void
test_same_seed_same_regions (void)
{
  g_autoptr (VtRegionSet) a = run_seeded (7);
  g_autoptr (VtRegionSet) b = run_seeded (7);
  g_autoptr (VtRegionSet) c = run_seeded (8);
  g_assert_true (same_regions (a, b));
  g_assert_false (same_regions (a, c));
}

/* --- Held heat --------------------------------------------------------- */

/* A hot region read cold for a few aggregations (its vCPU off the host CPU)
 * stays hot, and cools within a few half-lives once it is cold for good. */
static void
test_hold_bridges_cold_readings (void)
{
  /* 200 ms aggregations, half-life 1 s: x0.871 per aggregation. */
  g_autoptr (VtHeatHold) hold = vt_heat_hold_new (200000, 1000000);
  VtRegion r[2] = { { .start = 0, .end = 8 * MiB, .nr_accesses = SAMPLES },
                    { .start = 8 * MiB, .end = 64 * MiB, .nr_accesses = 0 } };
  guint n;
  vt_heat_hold_update (hold, r, 2);
  r[0].nr_accesses = 0;
  guint hot_for = 0;
  for (guint i = 0; i < 30; i++) {
    const VtRegion *held = vt_heat_hold_update (hold, r, 2);
    g_assert_cmpuint (held[1].nr_accesses, ==, 0);
    if (held[0].nr_accesses >= THRESHOLD)
      hot_for++;
    else
      break;
  }
  /* 40, 34, 29, 25, ... 4 (rounded down each time): a full reading stays
   * above 10% for 13 aggregations, 2.6 s */
  g_assert_cmpuint (hot_for, ==, 13);
  /* A fresh reading above the held one wins at once. */
  r[1].nr_accesses = SAMPLES / 2;
  const VtRegion *held = vt_heat_hold_update (hold, r, 2);
  g_assert_cmpuint (held[1].nr_accesses, ==, SAMPLES / 2);
  g_assert_true (vt_heat_hold_regions (hold, &n) == held);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpuint (vt_regions_bytes_at_least (held, n, THRESHOLD), ==, 56 * MiB);
  /* Beside them, what this aggregation read alone: region 0 is held hot,
   * its own count is 0. */
  const guint *fresh = vt_heat_hold_fresh_accesses (hold, &n);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpuint (held[0].nr_accesses, >, 0);
  g_assert_cmpuint (fresh[0], ==, 0);
  g_assert_cmpuint (fresh[1], ==, SAMPLES / 2);
}

/* When DAMON splits and merges between aggregations, the held heat follows
 * the bytes: a split keeps its parent's, a merge takes the byte-weighted
 * mean, a region of bytes nobody held before starts cold. */
static void
test_hold_follows_split_and_merge (void)
{
  g_autoptr (VtHeatHold) hold = vt_heat_hold_new (200000, 200000); /* x0.5 */
  VtRegion before[3] = { { .start = 0, .end = 4 * MiB, .nr_accesses = 40 },
                         { .start = 4 * MiB, .end = 8 * MiB, .nr_accesses = 0 },
                         { .start = 16 * MiB, .end = 20 * MiB, .nr_accesses = 20 } };
  vt_heat_hold_update (hold, before, 3);
  VtRegion after[5] = { { .start = 0, .end = 1 * MiB },          /* split of the hot one */
                        { .start = 1 * MiB, .end = 2 * MiB },
                        { .start = 2 * MiB, .end = 8 * MiB },    /* hot 2 MiB + cold 4 MiB */
                        { .start = 12 * MiB, .end = 16 * MiB },  /* bytes never held */
                        { .start = 16 * MiB, .end = 20 * MiB, .nr_accesses = 30 } };
  const VtRegion *held = vt_heat_hold_update (hold, after, 5);
  g_assert_cmpuint (held[0].nr_accesses, ==, 20);
  g_assert_cmpuint (held[1].nr_accesses, ==, 20);
  g_assert_cmpuint (held[2].nr_accesses, ==, 6);  /* 0.5 x (2 x 40 + 4 x 0) / 6 = 6.67 */
  g_assert_cmpuint (held[3].nr_accesses, ==, 0);
  g_assert_cmpuint (held[4].nr_accesses, ==, 30); /* fresh 30 > held 10 */
  g_assert_cmpuint (held[2].start, ==, 2 * MiB);
  g_assert_cmpuint (held[2].end, ==, 8 * MiB);
}

/* Half-life 0: no hold, the fresh counts pass through. */
static void
test_hold_off (void)
{
  g_autoptr (VtHeatHold) hold = vt_heat_hold_new (200000, 0);
  VtRegion r = { .start = 0, .end = 4 * MiB, .nr_accesses = 40 };
  vt_heat_hold_update (hold, &r, 1);
  r.nr_accesses = 1;
  g_assert_cmpuint (vt_heat_hold_update (hold, &r, 1)->nr_accesses, ==, 1);
}

/* Ages are given in configured aggregations, whatever the interval. */
static void
test_hold_age_in_configured_aggregations (void)
{
  g_autoptr (VtHeatHold) hold = vt_heat_hold_new (200000, 1000000);
  VtRegion r = { .start = 0, .end = 4 * MiB, .nr_accesses = 0, .age = 7 };
  g_assert_cmpuint (vt_heat_hold_update (hold, &r, 1)->age, ==, 7);
  vt_heat_hold_set_interval (hold, 800000, 4, 40);
  g_assert_cmpuint (vt_heat_hold_update (hold, &r, 1)->age, ==, 28);
}

/* Beside the held count (a peak), a mean count: the fresh counts' moving
 * average, byte-weighted as the held count is, converted when the
 * intervals scale, and standing for (1 + d) / (1 - d) aggregations at a
 * decay d per aggregation. */
static void
test_hold_means (void)
{
  g_autoptr (VtHeatHold) hold = vt_heat_hold_new (200000, 200000); /* x0.5 */
  g_assert_cmpfloat_with_epsilon (vt_heat_hold_mean_span (hold), 3.0, 1e-9);
  VtRegion r[2] = { { .start = 0, .end = 4 * MiB, .nr_accesses = 0 },
                    { .start = 4 * MiB, .end = 8 * MiB, .nr_accesses = 40 } };
  guint n;
  vt_heat_hold_update (hold, r, 2);
  const double *mean = vt_heat_hold_mean_accesses (hold, &n);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpfloat (mean[0], ==, 0); /* bytes nobody held: their count */
  g_assert_cmpfloat (mean[1], ==, 40);
  r[0].nr_accesses = 40, r[1].nr_accesses = 0;
  const VtRegion *held = vt_heat_hold_update (hold, r, 2);
  mean = vt_heat_hold_mean_accesses (hold, &n);
  g_assert_cmpuint (held[0].nr_accesses, ==, 40); /* the peak, at once */
  g_assert_cmpfloat (mean[0], ==, 20);            /* the mean, half-way */
  g_assert_cmpuint (held[1].nr_accesses, ==, 20);
  g_assert_cmpfloat (mean[1], ==, 20);
  /* One region over both: the bytes' means weighted, then the fresh 10. */
  VtRegion whole = { .start = 0, .end = 8 * MiB, .nr_accesses = 10 };
  vt_heat_hold_update (hold, &whole, 1);
  mean = vt_heat_hold_mean_accesses (hold, &n);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpfloat (mean[0], ==, 15); /* 0.5 x 20 + 0.5 x 10 */
  /* At 4x the intervals, memory read in 15 of 40 samples reads in
   * 1 - (25/40)^4 of them: 34.7. */
  vt_heat_hold_set_interval (hold, 800000, 4, 40);
  mean = vt_heat_hold_mean_accesses (hold, &n);
  g_assert_cmpfloat_with_epsilon (mean[0], 40 * (1 - pow (25.0 / 40, 4)), 1e-9);
  /* No hold: the mean is the fresh count, over one aggregation. */
  g_autoptr (VtHeatHold) off = vt_heat_hold_new (200000, 0);
  g_assert_cmpfloat (vt_heat_hold_mean_span (off), ==, 1);
  vt_heat_hold_update (off, r, 2);
  g_assert_cmpfloat (vt_heat_hold_mean_accesses (off, &n)[1], ==, 0);
}

/* --- Interval tuning --------------------------------------------------- */

/* Guest memory whose hot range the guest touches every `period_us`: a page
 * checked after a sampling interval of `sample_us` is found accessed with
 * probability sample_us / period_us (at most 1). Optionally, a pass sweeps
 * [scan_start, scan_end) at scan_bytes_per_s, round and round, and a page
 * reads accessed when the pass touched any of its `scan_page` bytes within
 * the sampling interval (a huge page's one accessed bit). The rest is
 * never touched. */
typedef struct {
  guint64 hot_start, hot_end;
  guint64 period_us, sample_us;
  GRand *rand;
  guint64 scan_start, scan_end, scan_bytes_per_s, scan_page;
  guint64 now_us;
  guint64 warm_start, warm_end, warm_period_us; /* a second set, touched more slowly */
} SweptMemory;

/* A 1 GiB guest whose 64 MiB hot set at 512 MiB is touched every `period_us`. */
static SweptMemory
hot_set_every (guint64 period_us, guint32 seed)
{
  return (SweptMemory) { 512 * MiB, 576 * MiB, period_us, 0, g_rand_new_with_seed (seed),
                         0, 0, 0, 0, 0, 0, 0, 0 };
}

/* The tracking bench's near-idle 256 MiB guest: a 4 MiB set at 100 MiB
 * touched every `period_us`, and a pass over all of it at 1 MiB/s in huge
 * pages. */
static SweptMemory
near_idle_guest (guint64 period_us, guint32 seed)
{
  return (SweptMemory) { 100 * MiB, 104 * MiB, period_us, 0, g_rand_new_with_seed (seed),
                         0, 256 * MiB, 1 * MiB, 2 * MiB, 0, 0, 0, 0 };
}

/* Whether the pass touched [page, page + scan_page) in (now - sample, now]. */
static gboolean
swept_by_scan (const SweptMemory *mem, guint64 addr)
{
  if (mem->scan_bytes_per_s == 0 || addr < mem->scan_start || addr >= mem->scan_end)
    return FALSE;
  double len = (double) (mem->scan_end - mem->scan_start);
  double page = (double) (addr - mem->scan_start) - (double) ((addr - mem->scan_start) % mem->scan_page);
  double to = (double) mem->now_us * (double) mem->scan_bytes_per_s / 1e6;
  double from = to - (double) mem->sample_us * (double) mem->scan_bytes_per_s / 1e6;
  for (double lap = floor (from / len) * len; lap <= to; lap += len)
    if (lap + page < to && lap + page + (double) mem->scan_page > from)
      return TRUE;
  return FALSE;
}

static void
swept_prepare (G_GNUC_UNUSED gpointer data, G_GNUC_UNUSED const VtRegion *regions,
               G_GNUC_UNUSED guint n)
{
}

static void
swept_check (gpointer data, const VtRegion *regions, guint n, gboolean *accessed)
{
  SweptMemory *mem = data;
  mem->now_us += mem->sample_us;
  double p = MIN (1.0, (double) mem->sample_us / (double) mem->period_us);
  double warm_p = mem->warm_period_us
                    ? MIN (1.0, (double) mem->sample_us / (double) mem->warm_period_us)
                    : 0;
  for (guint i = 0; i < n; i++) {
    guint64 a = regions[i].sampling_addr;
    accessed[i] = (a >= mem->hot_start && a < mem->hot_end && g_rand_double (mem->rand) < p) ||
                  (a >= mem->warm_start && a < mem->warm_end &&
                   g_rand_double (mem->rand) < warm_p) ||
                  swept_by_scan (mem, a);
  }
}

static const VtAccessPrimitives swept_prims = { swept_prepare, swept_check };

/* Runs `aggregations` through the region engine and the tuner at the
 * intervals the tuner picks; returns how often the scale changed in the
 * last `tail` of them. */
static guint
run_tuned (VtRegionSet *set, VtIntervalTune *tune, SweptMemory *mem, guint aggregations,
           guint tail)
{
  guint changes = 0;
  for (guint a = 0; a < aggregations; a++) {
    mem->sample_us = default_attrs.sample_us * vt_interval_tune_scale (tune);
    for (guint s = 0; s < SAMPLES; s++)
      vt_region_set_sample (set, &swept_prims, mem);
    vt_region_set_aggregate (set);
    guint n;
    const VtRegion *r = vt_region_set_regions (set, &n);
    if (vt_interval_tune_observe (tune, r, n, SAMPLES) && a >= aggregations - tail)
      changes++;
  }
  return changes;
}

/* A region set over [0, size) as vtierd sets one up: no region over 16
 * MiB (its max-region-mib). */
static VtRegionSet *
vtierd_region_set (guint64 size)
{
  VtAddrRange range = { 0, size };
  VtRegionAttrs attrs = default_attrs;
  attrs.min_nr_regions = vt_regions_min_for_size (size, 10, 1000, 16 * MiB);
  return vt_region_set_new (&attrs, &range, 1, 42);
}

/* The case of the slow emulated host: a 64 MiB hot set of a 1 GiB guest,
 * each page touched every 500 ms. At 5 ms it reads about 1 of 40, under
 * the hot threshold; tuned, it reads hot, the cold memory does not, and the
 * scale holds still. */
static void
test_tune_slow_hot_set_reads_hot (void)
{
  VtAddrRange range = { 0, 1 * GiB };
  SweptMemory mem = hot_set_every (500000, 3);
  g_autoptr (VtRegionSet) untuned = vt_region_set_new (&default_attrs, &range, 1, 42);
  g_autoptr (VtIntervalTune) off = vt_interval_tune_new (1);
  run_tuned (untuned, off, &mem, 100, 0);
  g_assert_cmpuint (vt_interval_tune_scale (off), ==, 1);
  g_assert_cmpuint (vt_region_set_bytes_at_least (untuned, THRESHOLD), <, 32 * MiB);

  g_autoptr (VtRegionSet) set = vt_region_set_new (&default_attrs, &range, 1, 42);
  g_autoptr (VtIntervalTune) tune = vt_interval_tune_new (32);
  guint changes = run_tuned (set, tune, &mem, 300, 200);
  guint scale = vt_interval_tune_scale (tune);
  g_test_message ("scale %u, %u changes in the last 200 aggregations", scale, changes);
  g_assert_cmpuint (scale, >=, 16);
  g_assert_cmpuint (changes, ==, 0);
  g_assert_false (vt_interval_tune_starved (tune)); /* it reads in the band */
  /* What reads hot is the hot set, to within a region's slack at its ends
   * (boundaries follow it only to a fraction of a region), every time. */
  for (guint w = 0; w < 20; w++) {
    run_tuned (set, tune, &mem, 1, 0);
    guint64 hot = vt_region_set_bytes_at_least (set, THRESHOLD);
    g_test_message ("hot %" G_GUINT64_FORMAT " MiB", hot / MiB);

    g_assert_cmpuint (hot, >=, 48 * MiB);
    g_assert_cmpuint (hot, <=, 96 * MiB);
    g_assert_cmpuint (max_heat_over (set, 0, 448 * MiB), <, THRESHOLD);
    g_assert_cmpuint (max_heat_over (set, 640 * MiB, 1 * GiB), <, THRESHOLD);
  }
  g_rand_free (mem.rand);
}

/* Starved is a judgment on a window read at the longest scale. The window
 * that doubles the scale to it read under the band at the scale before
 * (that is why it doubled), and says nothing of how the hot set reads at
 * the longest: a hot set touched every 1.5 s reads ~2 of 40 at 16x (80 ms
 * samples) and ~4 at 32x; only a window read at 32x may say starved. */
static void
test_tune_starved_judged_at_the_longest_scale (void)
{
  SweptMemory mem = hot_set_every (1500000, 11);
  g_autoptr (VtRegionSet) set = vtierd_region_set (1 * GiB);
  g_autoptr (VtIntervalTune) tune = vt_interval_tune_new (32);
  guint a = 0;
  while (vt_interval_tune_scale (tune) < 32 && a++ < 300)
    run_tuned (set, tune, &mem, 1, 0);
  g_assert_cmpuint (vt_interval_tune_scale (tune), ==, 32);
  g_assert_false (vt_interval_tune_starved (tune)); /* no window at 32x yet */
  guint starved = 0;
  for (guint w = 0; w < 20; w++) {
    run_tuned (set, tune, &mem, 1, 0);
    starved += vt_interval_tune_starved (tune);
  }
  g_test_message ("arrived after %u aggregations, starved in %u of 20 at 32x", a, starved);
  g_assert_cmpuint (starved, >=, 18);
  g_rand_free (mem.rand);
}

/* A hot set touched more slowly than the longest intervals can read: each
 * page every 2.5 s, 2.5 of 40 samples at 32x (160 ms), the slow emulated
 * host's case (its 64 MiB hot set read 1-4 of 40). The tuner says so
 * (starved), and at half the threshold most of the hot set reads hot where
 * at the threshold little of it does; cold memory reads 0 either way. */
static void
test_tune_starved_at_bound (void)
{
  SweptMemory mem = hot_set_every (2500000, 5);
  g_autoptr (VtRegionSet) set = vtierd_region_set (1 * GiB);
  g_autoptr (VtIntervalTune) tune = vt_interval_tune_new (32);
  run_tuned (set, tune, &mem, 300, 0);
  g_assert_cmpuint (vt_interval_tune_scale (tune), ==, 32);
  guint64 at_set = 0, at_half = 0;
  gboolean seen[64] = { FALSE }; /* the hot set's MiB read hot at half, ever */
  for (guint w = 0; w < 20; w++) {
    run_tuned (set, tune, &mem, 1, 0);
    g_assert_true (vt_interval_tune_starved (tune));
    at_set += vt_region_set_bytes_at_least (set, THRESHOLD);
    at_half += vt_region_set_bytes_at_least (set, THRESHOLD / 2);
    guint n;
    const VtRegion *r = regions_of (set, &n);
    for (guint i = 0; i < n; i++)
      for (guint64 a = MAX (r[i].start, 512 * MiB); r[i].nr_accesses >= THRESHOLD / 2 &&
                                                    a < MIN (r[i].end, 576 * MiB); a += MiB)
        seen[(a - 512 * MiB) / MiB] = TRUE;
    g_assert_cmpuint (max_heat_over (set, 0, 448 * MiB), <, THRESHOLD / 2);
    g_assert_cmpuint (max_heat_over (set, 640 * MiB, 1 * GiB), <, THRESHOLD / 2);
  }
  guint ever = 0;
  for (guint m = 0; m < 64; m++)
    ever += seen[m];
  g_test_message ("mean hot: %" G_GUINT64_FORMAT " MiB at the threshold, %" G_GUINT64_FORMAT
                  " MiB at half; %u of the hot set's 64 MiB hot at half in some aggregation",
                  at_set / 20 / MiB, at_half / 20 / MiB, ever);
  g_assert_cmpuint (at_set / 20, <, 16 * MiB);
  g_assert_cmpuint (at_half / 20, >=, 3 * (at_set / 20));
  g_assert_cmpuint (at_half / 20, >=, 32 * MiB);
  g_assert_cmpuint (ever, >=, 60); /* promoted as it reads hot, all of it within 20 */
  g_rand_free (mem.rand);
}

/* An idle guest: an 8 MiB hot set touched all the time, and a checksum
 * pass over the rest of its 512 MiB, every page once in ~110 s, in huge
 * pages (the fit bench's idle VM). At 32x a huge page the pass is in reads
 * accessed for a sampling interval and then some (~3.5 of 40 per pass),
 * and the regions it crosses read 1-6 of 40: most of the memory accessed
 * reads under the band, but what the guest uses most reads saturated. It
 * is not starved, so its threshold stays whole: what reads hot is the hot
 * set and the regions the pass is in (starved, at half the threshold,
 * the fit bench's idle VM read 200-330 MiB hot). */
static void
test_tune_scan_beside_hot_set_is_not_starved (void)
{
  SweptMemory mem = { 0, 8 * MiB, 2000, 0, g_rand_new_with_seed (6),
                      8 * MiB, 512 * MiB, 4700 * 1024, 2 * MiB, 0, 0, 0, 0 };
  g_autoptr (VtRegionSet) set = vtierd_region_set (512 * MiB);
  g_autoptr (VtIntervalTune) tune = vt_interval_tune_new (32);
  /* There since its start (the tuner takes an idle VM there in seconds). */
  vt_interval_tune_reset (tune, 32);
  run_tuned (set, tune, &mem, 100, 0);
  g_assert_cmpuint (vt_interval_tune_scale (tune), ==, 32);
  guint64 most_at_set = 0, most_at_half = 0;
  for (guint w = 0; w < 40; w++) {
    run_tuned (set, tune, &mem, 1, 0);
    g_assert_false (vt_interval_tune_starved (tune));
    most_at_set = MAX (most_at_set, vt_region_set_bytes_at_least (set, THRESHOLD));
    most_at_half = MAX (most_at_half, vt_region_set_bytes_at_least (set, THRESHOLD / 2));
  }
  g_test_message ("most read hot: %" G_GUINT64_FORMAT " MiB at the threshold, %" G_GUINT64_FORMAT
                  " MiB at half", most_at_set / MiB, most_at_half / MiB);
  g_assert_cmpuint (most_at_set, <=, 64 * MiB);
  g_rand_free (mem.rand);
}

/* A tuner up to `max_scale`, started at `start_scale`, and the regions of
 * `mem`'s guest, after `aggregations` of them. */
static VtIntervalTune *
tuned_from (SweptMemory *mem, VtRegionSet **set, guint max_scale, guint start_scale,
            guint aggregations)
{
  VtAddrRange range = { 0, 1 * GiB };
  *set = vt_region_set_new (&default_attrs, &range, 1, 42);
  VtIntervalTune *tune = vt_interval_tune_new (max_scale);
  vt_interval_tune_reset (tune, start_scale);
  run_tuned (*set, tune, mem, aggregations, 0);
  return tune;
}

/* Runs `aggregations` and counts those at scale 1 (the shortest). */
static guint
aggregations_at_scale_1 (VtRegionSet *set, VtIntervalTune *tune, SweptMemory *mem,
                         guint aggregations)
{
  guint at_1 = 0;
  for (guint a = 0; a < aggregations; a++) {
    at_1 += vt_interval_tune_scale (tune) == 1;
    run_tuned (set, tune, mem, 1, 0);
  }
  return at_1;
}

/* A hot set touched faster than any sampling interval the tuner may pick
 * (every 2 ms) reads saturated at all of them: halving down to 5 ms ranks
 * it no better, at 8x the kdamond's CPU of 40 ms. The tuner goes back to
 * the longest scale that read the same and stays there, looking down again
 * now and then (a window at each scale below, every 30 windows); the hot
 * set reads hot all along. Without the rule it sat at 1x throughout. */
static void
test_tune_saturated_hot_set_goes_back_up (void)
{
  SweptMemory mem = hot_set_every (2000, 4);
  g_autoptr (VtRegionSet) set = NULL;
  g_autoptr (VtIntervalTune) tune = tuned_from (&mem, &set, 16, 8, 100);
  guint at_1 = aggregations_at_scale_1 (set, tune, &mem, 200);
  g_test_message ("scale %u at the end, %u of 200 aggregations at 1x",
                  vt_interval_tune_scale (tune), at_1);
  g_assert_cmpuint (at_1, <=, 60);
  g_assert_cmpuint (vt_region_set_bytes_at_least (set, THRESHOLD), >=, 48 * MiB);
  g_assert_false (vt_interval_tune_starved (tune));
  g_rand_free (mem.rand);
}

/* A hot set touched every 25 ms reads saturated at 16x and 8x (80 and 40
 * ms) and spreads from 4x on (20 ms: 0.8 of the samples, 10 ms: 0.4): the
 * halvings that bought nothing do not stop the tuner above the one that
 * does; it settles at 2x or 1x, in the band. */
static void
test_tune_saturated_then_spreading_goes_down (void)
{
  SweptMemory mem = hot_set_every (25000, 7);
  g_autoptr (VtRegionSet) set = NULL;
  g_autoptr (VtIntervalTune) tune = tuned_from (&mem, &set, 32, 16, 200);
  guint changes = run_tuned (set, tune, &mem, 100, 100);
  g_test_message ("scale %u, %u changes in the last 100", vt_interval_tune_scale (tune), changes);
  g_assert_cmpuint (vt_interval_tune_scale (tune), <=, 2);
  g_assert_cmpuint (changes, <=, 2);
  g_rand_free (mem.rand);
}

/* Nothing accessed: the longest intervals, the least cost; never past the
 * bound, however long. */
static void
test_tune_idle_goes_to_bound (void)
{
  VtRegion cold = { .start = 0, .end = 1 * GiB };
  g_autoptr (VtIntervalTune) tune = vt_interval_tune_new (16);
  guint changes = 0;
  for (guint a = 0; a < 200; a++)
    changes += vt_interval_tune_observe (tune, &cold, 1, SAMPLES) != 0;
  g_assert_cmpuint (vt_interval_tune_scale (tune), ==, 16);
  g_assert_cmpuint (changes, ==, 4); /* 2, 4, 8, 16 */
  g_assert_false (vt_interval_tune_starved (tune)); /* nothing in use to read */
  /* A bound that is no power of two is still the bound. */
  g_autoptr (VtIntervalTune) odd = vt_interval_tune_new (12);
  for (guint a = 0; a < 200; a++)
    vt_interval_tune_observe (odd, &cold, 1, SAMPLES);
  g_assert_cmpuint (vt_interval_tune_scale (odd), ==, 12);
}

/* A hot set touched at about the longest intervals' reach: each page of
 * a 64 MiB hot set every 700-900 ms, read at 32x (160 ms) by its hottest
 * tenth at about a quarter of the maximum. Starved or not decides the
 * hot threshold (vt-tracker.c halves it), so it must not turn with each
 * window's noise. Before the hysteresis it turned 322 times in these 900
 * aggregations; in heat-current on a slow host it turned every ~30 s,
 * and vtierd's hot bytes (a mean of 5 aggregations, each at the
 * threshold then) sat at 45-47 MiB for a 64 MiB hot set while its hot
 * regions held 98% of it. */
static void
test_tune_starved_holds_near_the_edge (void)
{
  guint flips = 0;
  for (guint64 period_ms = 700; period_ms <= 900; period_ms += 100) {
    SweptMemory mem = hot_set_every (period_ms * 1000, 9);
    g_autoptr (VtRegionSet) set = vtierd_region_set (1 * GiB);
    g_autoptr (VtIntervalTune) tune = vt_interval_tune_new (32);
    vt_interval_tune_set_min (tune, 4);
    run_tuned (set, tune, &mem, 100, 0);
    gboolean was = vt_interval_tune_starved (tune);
    for (guint a = 0; a < 300; a++) {
      run_tuned (set, tune, &mem, 1, 0);
      flips += vt_interval_tune_starved (tune) != was;
      was = vt_interval_tune_starved (tune);
    }
    g_rand_free (mem.rand);
  }
  g_test_message ("%u flips of starved in 900 aggregations", flips);
  g_assert_cmpuint (flips, <=, 60);
}

/* A near-idle guest (the tracking bench's): of its 256 MiB, a 4 MiB set
 * touched every 50 or 100 ms, and a pass over the rest at 1 MiB/s in huge
 * pages. A handful of regions read accessed, and from 4x on a window is
 * one aggregation: its mean swings from one window to the next. The scale
 * follows what the VM reads, not each swing: changes take two windows
 * in a row asking for them. Before, these 12 runs changed scale 493
 * times in all, 28-64 times in 300 aggregations at 50 ms (the bench's VM
 * went 4x to 32x and back within a minute); now 93, at most 15 a run. */
static void
test_tune_noisy_reads_hold_the_scale (void)
{
  guint total = 0;
  for (guint seed = 1; seed <= 6; seed++) {
    for (guint64 period_ms = 50; period_ms <= 100; period_ms += 50) {
      SweptMemory mem = near_idle_guest (period_ms * 1000, seed);
      g_autoptr (VtRegionSet) set = vtierd_region_set (256 * MiB);
      g_autoptr (VtIntervalTune) tune = vt_interval_tune_new (32);
      vt_interval_tune_set_min (tune, 4); /* vtierd's start scale, the floor of a VM that fits */
      run_tuned (set, tune, &mem, 100, 0);
      guint changes = run_tuned (set, tune, &mem, 300, 300);
      g_test_message ("seed %u, touched every %" G_GUINT64_FORMAT " ms: %u changes in 300, "
                      "at %ux", seed, period_ms, changes, vt_interval_tune_scale (tune));
      total += changes;
      g_rand_free (mem.rand);
    }
  }
  g_test_message ("%u changes in all", total);
  g_assert_cmpuint (total, <=, 160); /* 493 before */
}

/* Runs `aggregations` at the tuner's intervals and adds up what each one
 * read hot (THRESHOLD or more) and its samples' time at its scale. */
typedef struct {
  double hot_bytes, aggregations, sampled_s;
} TunedRun;

static void
run_tuned_measured (VtRegionSet *set, VtIntervalTune *tune, SweptMemory *mem,
                    guint aggregations, TunedRun *out)
{
  for (guint a = 0; a < aggregations; a++) {
    out->sampled_s += (double) vt_interval_tune_scale (tune) * default_attrs.aggr_us / 1e6;
    run_tuned (set, tune, mem, 1, 0);
    guint n;
    const VtRegion *r = vt_region_set_regions (set, &n);
    out->hot_bytes += (double) vt_regions_bytes_at_least (r, n, THRESHOLD);
    out->aggregations++;
  }
}

/* A VM that fits its share needs hot told from cold, and at longer
 * intervals a kdamond samples less often. The tracking bench's near-idle
 * VM (the memory of noisy-reads-hold-the-scale) sat at 4x, where its
 * band put it, at 0.10-0.17 CPU s/s; 32x cost a fifth. Aiming long, the
 * same seeds sample at most a third as often, and read the same bytes
 * hot, within an eighth and 2 MiB (1/128 of the VM). */
static void
test_tune_fitting_vm_climbs_while_hot_holds (void)
{
  TunedRun band = { 0 }, aimed = { 0 };
  for (guint seed = 1; seed <= 6; seed++) {
    for (guint64 period_ms = 50; period_ms <= 100; period_ms += 50) {
      for (guint aim = 0; aim <= 1; aim++) {
        SweptMemory mem = near_idle_guest (period_ms * 1000, seed);
        g_autoptr (VtRegionSet) set = vtierd_region_set (256 * MiB);
        g_autoptr (VtIntervalTune) tune = vt_interval_tune_new (32);
        vt_interval_tune_set_min (tune, 4);
        vt_interval_tune_aim_long (tune, aim ? THRESHOLD : 0);
        run_tuned (set, tune, &mem, 50, 0);
        run_tuned_measured (set, tune, &mem, 300, aim ? &aimed : &band);
        g_rand_free (mem.rand);
      }
    }
  }
  double band_rate = band.aggregations * SAMPLES / band.sampled_s;
  double aimed_rate = aimed.aggregations * SAMPLES / aimed.sampled_s;
  double band_hot = band.hot_bytes / band.aggregations;
  double aimed_hot = aimed.hot_bytes / aimed.aggregations;
  g_test_message ("samples/s per region: band %.1f, aiming long %.1f; hot %.1f and %.1f MiB",
                  band_rate, aimed_rate, band_hot / MiB, aimed_hot / MiB);
  double longest_rate = SAMPLES / (32 * default_attrs.aggr_us / 1e6);
  g_assert_cmpfloat (aimed_rate, <=, band_rate * 0.6);
  g_assert_cmpfloat (aimed_rate, <=, longest_rate * 1.3);
  g_assert_cmpfloat (aimed_hot, <=, band_hot + band_hot / 8 + 2 * MiB);
  g_assert_cmpfloat (aimed_hot, >=, band_hot - band_hot / 8 - 2 * MiB);
}

/* Beside a 64 MiB hot set touched every 10 ms, 128 MiB the guest touches
 * once a second: at 20 ms (4x) it reads about 0.8 of 40, cold, and at 160
 * ms (32x) 6.4, hot. A VM aiming long stops where the warm set still
 * reads cold; at 32x the same memory reads it hot. */
static void
test_tune_fitting_vm_leaves_warm_memory_cold (void)
{
  for (guint at_longest = 0; at_longest <= 1; at_longest++) {
    SweptMemory mem = hot_set_every (10000, 11);
    mem.warm_start = 128 * MiB;
    mem.warm_end = 256 * MiB;
    mem.warm_period_us = 1000000;
    g_autoptr (VtRegionSet) set = vtierd_region_set (1 * GiB);
    g_autoptr (VtIntervalTune) tune = vt_interval_tune_new (32);
    vt_interval_tune_set_min (tune, at_longest ? 32 : 4);
    vt_interval_tune_aim_long (tune, THRESHOLD);
    run_tuned (set, tune, &mem, 100, 0);
    TunedRun run = { 0 };
    run_tuned_measured (set, tune, &mem, 300, &run);
    double hot = run.hot_bytes / run.aggregations;
    double mean_scale = run.sampled_s / run.aggregations / (default_attrs.aggr_us / 1e6);
    g_test_message ("%s: mean scale %.1f, %.1f MiB hot", at_longest ? "at 32x" : "aiming long",
                    mean_scale, hot / MiB);
    if (at_longest) {
      g_assert_cmpfloat (hot, >=, 150 * MiB); /* the warm set too: the case is real */
    } else {
      g_assert_cmpfloat (hot, <=, 64 * MiB + 64 * MiB / 8 + 8 * MiB);
      g_assert_cmpfloat (hot, >=, 56 * MiB);
      g_assert_cmpfloat (mean_scale, >, 5); /* it climbed as far as it could */
    }
    g_rand_free (mem.rand);
  }
}

/* A shared kdamond that ran another VM's ratio of intervals: 40 samples
 * an aggregation brought to a VM that counts 20, and 10 to one of 40. */
static void
test_rescale_accesses (void)
{
  VtRegion r[] = { { .start = 0, .end = 4096, .nr_accesses = 40 },
                   { .start = 4096, .end = 8192, .nr_accesses = 3 },
                   { .start = 8192, .end = 12288, .nr_accesses = 0 } };
  vt_regions_rescale_accesses (r, 3, 40, 20);
  g_assert_cmpuint (r[0].nr_accesses, ==, 20);
  g_assert_cmpuint (r[1].nr_accesses, ==, 2);
  g_assert_cmpuint (r[2].nr_accesses, ==, 0);
  r[0].nr_accesses = 10;
  r[1].nr_accesses = 11; /* above its own maximum: a bad line, capped */
  vt_regions_rescale_accesses (r, 2, 10, 40);
  g_assert_cmpuint (r[0].nr_accesses, ==, 40);
  g_assert_cmpuint (r[1].nr_accesses, ==, 40);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/regions/new/one-range", test_new_one_range);
  g_test_add_func ("/regions/min-for-size", test_min_for_size);
  g_test_add_func ("/regions/new/ranges-with-gaps", test_new_ranges_with_gaps);
  g_test_add_func ("/regions/new/rejects-invalid", test_new_rejects_invalid);
  g_test_add_func ("/regions/sample/prepares-then-checks", test_sample_prepares_then_checks);
  g_test_add_func ("/regions/sample/uniform-heat-is-exact", test_uniform_heat_is_exact);
  g_test_add_func ("/regions/sample/hot-range-found", test_hot_range_found);
  g_test_add_func ("/regions/sample/hot-range-moves", test_hot_range_moves);
  g_test_add_func ("/regions/aggregate/aging", test_aging);
  g_test_add_func ("/regions/aggregate/merge-when-cold", test_merge_when_cold);
  g_test_add_func ("/regions/aggregate/merge-averages", test_merge_averages);
  g_test_add_func ("/regions/aggregate/count-bounded-when-noisy", test_count_bounded_when_noisy);
  g_test_add_func ("/regions/load/clips-and-fills", test_load_clips_and_fills);
  g_test_add_func ("/regions/load/keeps-kernel-view", test_load_keeps_kernel_view);
  g_test_add_func ("/regions/bytes-at-least", test_bytes_at_least);
  g_test_add_func ("/regions/same-seed-same-regions", test_same_seed_same_regions);
  g_test_add_func ("/regions/hold/bridges-cold-readings", test_hold_bridges_cold_readings);
  g_test_add_func ("/regions/hold/follows-split-and-merge", test_hold_follows_split_and_merge);
  g_test_add_func ("/regions/hold/off", test_hold_off);
  g_test_add_func ("/regions/hold/age-in-configured-aggregations",
                   test_hold_age_in_configured_aggregations);
  g_test_add_func ("/regions/hold/means", test_hold_means);
  g_test_add_func ("/regions/tune/starved-at-bound", test_tune_starved_at_bound);
  g_test_add_func ("/regions/tune/starved-judged-at-the-longest-scale",
                   test_tune_starved_judged_at_the_longest_scale);
  g_test_add_func ("/regions/tune/scan-beside-hot-set-is-not-starved",
                   test_tune_scan_beside_hot_set_is_not_starved);
  g_test_add_func ("/regions/tune/slow-hot-set-reads-hot", test_tune_slow_hot_set_reads_hot);
  g_test_add_func ("/regions/tune/fitting-vm-climbs-while-hot-holds",
                   test_tune_fitting_vm_climbs_while_hot_holds);
  g_test_add_func ("/regions/tune/fitting-vm-leaves-warm-memory-cold",
                   test_tune_fitting_vm_leaves_warm_memory_cold);
  g_test_add_func ("/regions/tune/saturated-hot-set-goes-back-up",
                   test_tune_saturated_hot_set_goes_back_up);
  g_test_add_func ("/regions/tune/saturated-then-spreading-goes-down",
                   test_tune_saturated_then_spreading_goes_down);
  g_test_add_func ("/regions/tune/idle-goes-to-bound", test_tune_idle_goes_to_bound);
  g_test_add_func ("/regions/tune/starved-holds-near-the-edge",
                   test_tune_starved_holds_near_the_edge);
  g_test_add_func ("/regions/tune/noisy-reads-hold-the-scale",
                   test_tune_noisy_reads_hold_the_scale);
  g_test_add_func ("/regions/rescale-accesses", test_rescale_accesses);
  return g_test_run ();
}
