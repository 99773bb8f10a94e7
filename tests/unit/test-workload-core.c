/* The testbed workload must notice any byte a migration loses, and its
 * patterns must make the hot set the part of memory that is hot. */
#include <glib.h>

#include "wl-core.h"

/* A quarter busy: work in bursts of at least WL_PACE_BURST_S, each
 * followed by three times as long idle; fully busy never pauses. */
static void
test_pacer_keeps_the_duty_cycle (void)
{
  WlPacer quarter = { .busy = 0.25 };
  double worked = 0, paused = 0;
  unsigned pauses = 0;
  for (int i = 0; i < 10000; i++) {
    double spent = 0.0003 + 0.0001 * (i % 7); /* 0.3-0.9 ms a batch */
    double pause = wl_pacer_work (&quarter, spent);
    worked += spent;
    paused += pause;
    if (pause > 0) {
      pauses++;
      g_assert_cmpfloat (pause, >=, 3 * WL_PACE_BURST_S);
    }
  }
  g_assert_cmpfloat_with_epsilon (worked / (worked + paused), 0.25, 0.01);
  g_assert_cmpuint (pauses, >, 10000 / 40);
  g_assert_cmpuint (pauses, <, 10000 / 15);

  WlPacer busy = { .busy = 1 };
  for (int i = 0; i < 1000; i++)
    g_assert_cmpfloat (wl_pacer_work (&busy, 0.001), ==, 0);
}

static void
test_page_intact_and_corrupt (void)
{
  g_autofree uint64_t *page = g_malloc (WL_PAGE_SIZE);

  wl_page_fill (page, 7, 3);
  g_assert_cmpint (wl_page_check (page, 7, 3), ==, -1);
  /* The same bytes are wrong for another page or another write count. */
  g_assert_cmpint (wl_page_check (page, 8, 3), >=, 1);
  g_assert_cmpint (wl_page_check (page, 7, 4), ==, 0);

  ((uint8_t *) page)[4095] ^= 0x10;
  g_assert_cmpint (wl_page_check (page, 7, 3), ==, WL_PAGE_WORDS - 1);

  /* A page of zeroes, as a lost page would read. */
  memset (page, 0, WL_PAGE_SIZE);
  g_assert_cmpint (wl_page_check (page, 0, 0), ==, 1);
}

static void
test_pattern_names (void)
{
  WlPattern p;
  g_assert_true (wl_pattern_parse ("zipf", &p));
  g_assert_cmpint (p, ==, WL_PATTERN_ZIPF);
  g_assert_true (wl_pattern_parse ("seq", &p));
  g_assert_cmpint (p, ==, WL_PATTERN_SEQUENTIAL);
  g_assert_false (wl_pattern_parse ("zipfian", &p));
}

static void
count_samples (WlPattern pattern, size_t n, size_t draws, guint *counts)
{
  WlSampler s;
  WlRng rng = { 1 };
  g_assert_true (wl_sampler_init (&s, pattern, n, 0.99));
  for (size_t i = 0; i < draws; i++) {
    size_t k = wl_sampler_next (&s, &rng);
    g_assert_cmpuint (k, <, n);
    counts[k]++;
  }
  wl_sampler_clear (&s);
}

static void
test_uniform_covers_evenly (void)
{
  g_autofree guint *counts = g_new0 (guint, 1000);
  count_samples (WL_PATTERN_UNIFORM, 1000, 200000, counts);
  for (size_t i = 0; i < 1000; i++)
    g_assert_cmpuint (counts[i], >, 100); /* mean 200 */
}

static void
test_zipf_is_skewed_and_scattered (void)
{
  g_autofree guint *counts = g_new0 (guint, 1000);
  count_samples (WL_PATTERN_ZIPF, 1000, 200000, counts);
  guint max = 0;
  size_t argmax = 0;
  for (size_t i = 0; i < 1000; i++)
    if (counts[i] > max)
      max = counts[i], argmax = i;
  /* Rank 0 takes ~13% of the draws at theta 0.99, n 1000. */
  g_assert_cmpuint (max, >, 200000 / 10);
  /* The scramble maps rank 1 away from rank 0's neighbourhood. */
  g_assert_cmpuint (counts[(2654435761ull) % 1000], >, 200000 / 20);
  g_assert_cmpuint (argmax, ==, 0);
}

static void
test_sequential_wraps (void)
{
  WlSampler s;
  WlRng rng = { 1 };
  g_assert_true (wl_sampler_init (&s, WL_PATTERN_SEQUENTIAL, 3, 0));
  size_t got[7];
  for (int i = 0; i < 7; i++)
    got[i] = wl_sampler_next (&s, &rng);
  size_t want[7] = { 0, 1, 2, 0, 1, 2, 0 };
  g_assert_cmpmem (got, sizeof got, want, sizeof want);
  g_assert_false (wl_sampler_init (&s, WL_PATTERN_UNIFORM, 0, 0));
}

typedef struct {
  GArray *starts, *lengths;
} Runs;

static void
collect_run (uint64_t start, uint64_t n, void *data)
{
  Runs *r = data;
  g_array_append_val (r->starts, start);
  g_array_append_val (r->lengths, n);
}

static void
test_pfn_runs (void)
{
  const uint64_t pfns[] = { 1, 2, 3, 7, 8, 10 };
  Runs r = { g_array_new (FALSE, FALSE, sizeof (uint64_t)),
             g_array_new (FALSE, FALSE, sizeof (uint64_t)) };
  g_assert_cmpuint (wl_pfn_runs (pfns, G_N_ELEMENTS (pfns), collect_run, &r), ==, 3);
  const uint64_t starts[] = { 1, 7, 10 }, lengths[] = { 3, 2, 1 };
  g_assert_cmpmem (r.starts->data, r.starts->len * sizeof (uint64_t), starts, sizeof starts);
  g_assert_cmpmem (r.lengths->data, r.lengths->len * sizeof (uint64_t), lengths, sizeof lengths);
  g_array_unref (r.starts);
  g_array_unref (r.lengths);
}

static void
collect_group (uint64_t start, uint64_t run, uint64_t count, uint64_t step, void *data)
{
  GArray *g = data;
  uint64_t v[4] = { start, run, count, step };
  g_array_append_vals (g, v, 4);
}

static void
test_pfn_groups (void)
{
  /* Every 4th frame from 100 (a scattered hot set), then a run of 3 at 200;
   * then a cold set between such frames (runs of 3, 4 apart). */
  GArray *pf = g_array_new (FALSE, FALSE, sizeof (uint64_t));
  for (uint64_t f = 100; f < 140; f += 4)
    g_array_append_val (pf, f);
  for (uint64_t f = 200; f < 203; f++)
    g_array_append_val (pf, f);
  GArray *g = g_array_new (FALSE, FALSE, sizeof (uint64_t));
  g_assert_cmpuint (wl_pfn_groups ((uint64_t *) pf->data, pf->len, collect_group, g), ==, 2);
  const uint64_t want[] = { 100, 1, 10, 4, 200, 3, 1, 0 };
  g_assert_cmpmem (g->data, g->len * sizeof (uint64_t), want, sizeof want);

  g_array_set_size (pf, 0);
  g_array_set_size (g, 0);
  for (uint64_t f = 102; f < 140; f++)
    if (f % 4 != 0)
      g_array_append_val (pf, f);
  g_assert_cmpuint (wl_pfn_groups ((uint64_t *) pf->data, pf->len, collect_group, g), ==, 2);
  /* 102-103, then 105-107 ... 137-139 four apart: the first run is short. */
  const uint64_t want2[] = { 102, 2, 1, 0, 105, 3, 9, 4 };
  g_assert_cmpmem (g->data, g->len * sizeof (uint64_t), want2, sizeof want2);
  g_array_unref (pf);
  g_array_unref (g);
}

/* The pages' frames: `n` frames from `runs` (start, length) pairs, handed
 * out in a scrambled order, as an allocator might. */
static uint64_t *
scrambled_frames (const uint64_t *runs, size_t n_runs, size_t *n)
{
  *n = 0;
  for (size_t r = 0; r < n_runs; r++)
    *n += runs[2 * r + 1];
  uint64_t *pfns = g_new (uint64_t, *n);
  size_t k = 0;
  for (size_t r = 0; r < n_runs; r++)
    for (uint64_t i = 0; i < runs[2 * r + 1]; i++)
      pfns[k++] = runs[2 * r] + i;
  /* A bijection on 0..n-1 (7919 is prime and no test's n is its multiple). */
  uint64_t *out = g_new (uint64_t, *n);
  for (size_t i = 0; i < *n; i++)
    out[(i * 7919) % *n] = pfns[i];
  g_free (pfns);
  return out;
}

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

/* The frames of the picked pages, sorted; checks the picks are distinct
 * pages in frame order. */
static uint64_t *
picked_frames (const uint64_t *pfns, size_t n, const size_t *out, size_t k)
{
  uint64_t *f = g_new (uint64_t, k);
  g_autofree gboolean *seen = g_new0 (gboolean, n);
  for (size_t i = 0; i < k; i++) {
    g_assert_cmpuint (out[i], <, n);
    g_assert_false (seen[out[i]]);
    seen[out[i]] = TRUE;
    f[i] = pfns[out[i]];
    if (i)
      g_assert_cmpuint (f[i], >, f[i - 1]);
  }
  qsort (f, k, sizeof (uint64_t), cmp_u64);
  return f;
}

static void
test_layout_names (void)
{
  WlLayout l;
  g_assert_true (wl_layout_parse ("scatter2m", &l));
  g_assert_cmpint (l, ==, WL_LAYOUT_SCATTER2M);
  g_assert_true (wl_layout_parse ("scatter4k", &l));
  g_assert_cmpint (l, ==, WL_LAYOUT_SCATTER4K);
  g_assert_true (wl_layout_parse ("contiguous", &l));
  g_assert_cmpint (l, ==, WL_LAYOUT_CONTIGUOUS);
  g_assert_false (wl_layout_parse ("scatter", &l));
  g_assert_cmpstr (wl_layout_name (WL_LAYOUT_INDEX), ==, "index");
}

static void
test_layout_index_is_as_before (void)
{
  const uint64_t runs[] = { 100, 50 };
  size_t n;
  g_autofree uint64_t *pfns = scrambled_frames (runs, 1, &n);
  size_t out[10];
  g_assert_cmpuint (wl_layout_pick (WL_LAYOUT_INDEX, pfns, n, 10, 40, 0, out), ==, 10);
  for (size_t i = 0; i < 10; i++)
    g_assert_cmpuint (out[i], ==, 40 + i);
  g_assert_cmpuint (wl_layout_pick (WL_LAYOUT_INDEX, pfns, n, 10, 41, 0, out), ==, 0);
  g_assert_cmpuint (wl_layout_pick (WL_LAYOUT_INDEX, pfns, n, 51, 0, 0, out), ==, 0);
}

static void
test_layout_contiguous (void)
{
  /* Two runs of frames: the hot set is the frames ranked 900..1199. */
  const uint64_t runs[] = { 1000, 1000, 5000, 1000 };
  size_t n;
  g_autofree uint64_t *pfns = scrambled_frames (runs, 2, &n);
  g_autofree size_t *out = g_new (size_t, 300);
  g_assert_cmpuint (wl_layout_pick (WL_LAYOUT_CONTIGUOUS, pfns, n, 300, 900, 0, out), ==, 300);
  g_autofree uint64_t *f = picked_frames (pfns, n, out, 300);
  for (size_t i = 0; i < 100; i++)
    g_assert_cmpuint (f[i], ==, 1900 + i);
  for (size_t i = 100; i < 300; i++)
    g_assert_cmpuint (f[i], ==, 5000 + i - 100);
  /* Moved: rank 1200 on, one run. */
  g_assert_cmpuint (wl_layout_pick (WL_LAYOUT_CONTIGUOUS, pfns, n, 300, 1200, 0.5, out), ==, 300);
  g_autofree uint64_t *g = picked_frames (pfns, n, out, 300);
  g_assert_cmpuint (g[0], ==, 5200);
  g_assert_cmpuint (g[299], ==, 5499);
  g_assert_cmpuint (wl_layout_pick (WL_LAYOUT_CONTIGUOUS, pfns, n, 300, 1701, 0, out), ==, 0);
}

static void
test_layout_scatter4k (void)
{
  const uint64_t runs[] = { 4096, 1000 };
  size_t n;
  g_autofree uint64_t *pfns = scrambled_frames (runs, 1, &n);
  g_autofree size_t *out = g_new (size_t, 250);
  g_assert_cmpuint (wl_layout_pick (WL_LAYOUT_SCATTER4K, pfns, n, 250, 0, 0, out), ==, 250);
  g_autofree uint64_t *f = picked_frames (pfns, n, out, 250);
  for (size_t i = 0; i < 250; i++)
    g_assert_cmpuint (f[i], ==, 4096 + 4 * i); /* every 4th page */
  /* Moved: the pages halfway between, none of the first set. */
  g_assert_cmpuint (wl_layout_pick (WL_LAYOUT_SCATTER4K, pfns, n, 250, 0, 0.5, out), ==, 250);
  g_autofree uint64_t *g = picked_frames (pfns, n, out, 250);
  for (size_t i = 0; i < 250; i++)
    g_assert_cmpuint (g[i], ==, 4096 + 4 * i + 2);
  /* A hot set of 3 in 8 pages: spread, distinct. */
  size_t few[3];
  g_assert_cmpuint (wl_layout_pick (WL_LAYOUT_SCATTER4K, pfns, 8, 3, 0, 0, few), ==, 3);
  g_free (picked_frames (pfns, 8, few, 3));
  /* All pages hot: every page once. */
  g_autofree size_t *all = g_new (size_t, n);
  g_assert_cmpuint (wl_layout_pick (WL_LAYOUT_SCATTER4K, pfns, n, n, 0, 0.5, all), ==, n);
  g_free (picked_frames (pfns, n, all, n));
}

/* The 2 MiB chunks (frame / 512) the picked frames lie in, and that each
 * of them is picked whole. */
static void
assert_whole_chunks (const uint64_t *f, size_t k, const uint64_t *want, size_t n_want)
{
  g_assert_cmpuint (k, ==, n_want * WL_CHUNK_PAGES);
  for (size_t c = 0; c < n_want; c++)
    for (size_t i = 0; i < WL_CHUNK_PAGES; i++)
      g_assert_cmpuint (f[c * WL_CHUNK_PAGES + i], ==, want[c] * WL_CHUNK_PAGES + i);
}

static void
test_layout_scatter2m (void)
{
  /* Eight whole chunks (10..17), a partial one at each end. */
  const uint64_t runs[] = { 10 * 512 - 100, 100 + 8 * 512 + 60 };
  size_t n;
  g_autofree uint64_t *pfns = scrambled_frames (runs, 1, &n);
  g_autofree size_t *out = g_new (size_t, 1024);
  g_assert_cmpuint (wl_layout_pick (WL_LAYOUT_SCATTER2M, pfns, n, 1024, 0, 0, out), ==, 1024);
  g_autofree uint64_t *f = picked_frames (pfns, n, out, 1024);
  const uint64_t want[] = { 10, 14 };
  assert_whole_chunks (f, 1024, want, 2);
  /* Moved: the chunks halfway between. */
  g_assert_cmpuint (wl_layout_pick (WL_LAYOUT_SCATTER2M, pfns, n, 1024, 0, 0.5, out), ==, 1024);
  g_autofree uint64_t *g = picked_frames (pfns, n, out, 1024);
  const uint64_t moved[] = { 12, 16 };
  assert_whole_chunks (g, 1024, moved, 2);
  /* A hot set that is not whole chunks: the last chunk is cut. */
  g_assert_cmpuint (wl_layout_pick (WL_LAYOUT_SCATTER2M, pfns, n, 700, 0, 0, out), ==, 700);
  g_autofree uint64_t *h = picked_frames (pfns, n, out, 700);
  g_assert_cmpuint (h[0], ==, 10 * 512);
  g_assert_cmpuint (h[511], ==, 10 * 512 + 511);
  g_assert_cmpuint (h[512], ==, 14 * 512);
  g_assert_cmpuint (h[699], ==, 14 * 512 + 187);
}

static void
test_layout_scatter2m_without_whole_chunks (void)
{
  /* Four chunks of 300 frames each: no whole one. */
  const uint64_t runs[] = { 0, 300, 512, 300, 1024, 300, 1536, 300 };
  size_t n;
  g_autofree uint64_t *pfns = scrambled_frames (runs, 4, &n);
  size_t out[700];
  g_assert_cmpuint (wl_layout_pick (WL_LAYOUT_SCATTER2M, pfns, n, 600, 0, 0, out), ==, 600);
  g_autofree uint64_t *f = picked_frames (pfns, n, out, 600);
  g_assert_cmpuint (f[0], ==, 0);       /* chunk 0 */
  g_assert_cmpuint (f[300], ==, 1024);  /* chunk 2 */
  /* Spread picks fall short (2 chunks, 600 frames): one more is added. */
  g_assert_cmpuint (wl_layout_pick (WL_LAYOUT_SCATTER2M, pfns, n, 700, 0, 0, out), ==, 700);
  g_autofree uint64_t *g = picked_frames (pfns, n, out, 700);
  g_assert_cmpuint (g[299], ==, 299);
  g_assert_cmpuint (g[300], ==, 512);
  g_assert_cmpuint (g[600], ==, 1024);
  g_assert_cmpuint (g[699], ==, 1123);
  g_assert_cmpuint (wl_layout_pick (WL_LAYOUT_SCATTER2M, pfns, n, n + 1, 0, 0, out), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/workload/page/intact-and-corrupt", test_page_intact_and_corrupt);
  g_test_add_func ("/workload/pacer/duty-cycle", test_pacer_keeps_the_duty_cycle);
  g_test_add_func ("/workload/pattern/names", test_pattern_names);
  g_test_add_func ("/workload/sampler/uniform", test_uniform_covers_evenly);
  g_test_add_func ("/workload/sampler/zipf", test_zipf_is_skewed_and_scattered);
  g_test_add_func ("/workload/sampler/sequential", test_sequential_wraps);
  g_test_add_func ("/workload/pfn-runs", test_pfn_runs);
  g_test_add_func ("/workload/pfn-groups", test_pfn_groups);
  g_test_add_func ("/workload/layout/names", test_layout_names);
  g_test_add_func ("/workload/layout/index", test_layout_index_is_as_before);
  g_test_add_func ("/workload/layout/contiguous", test_layout_contiguous);
  g_test_add_func ("/workload/layout/scatter4k", test_layout_scatter4k);
  g_test_add_func ("/workload/layout/scatter2m", test_layout_scatter2m);
  g_test_add_func ("/workload/layout/scatter2m-partial-chunks",
                   test_layout_scatter2m_without_whole_chunks);
  return g_test_run ();
}
