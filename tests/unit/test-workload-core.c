/* The testbed workload must notice any byte a migration loses, and its
 * patterns must make the hot set the part of memory that is hot. */
#include <glib.h>

#include "wl-core.h"

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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/workload/page/intact-and-corrupt", test_page_intact_and_corrupt);
  g_test_add_func ("/workload/pattern/names", test_pattern_names);
  g_test_add_func ("/workload/sampler/uniform", test_uniform_covers_evenly);
  g_test_add_func ("/workload/sampler/zipf", test_zipf_is_skewed_and_scattered);
  g_test_add_func ("/workload/sampler/sequential", test_sequential_wraps);
  g_test_add_func ("/workload/pfn-runs", test_pfn_runs);
  return g_test_run ();
}
