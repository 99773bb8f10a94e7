/* The move speeds (policy/vt-move-rates.c): one per pair of nodes and page
 * class, weighted over its jobs; the all-keys speed where a key has none;
 * what a job too small to time adds; a job's size from its key's speed. */
#include <glib.h>

#include "policy/vt-move-rates.h"

#define MiB (G_GUINT64_CONSTANT (1) << 20)
#define SECOND G_USEC_PER_SEC

static const VtMoveKey thp_up = { 1, 0, VT_PAGE_CLASS_2M_THP };
static const VtMoveKey small_up = { 1, 0, VT_PAGE_CLASS_4K };
static const VtMoveKey thp_down = { 0, 1, VT_PAGE_CLASS_2M_THP };

/* Each key keeps its own speed: THPs move faster than 4 KiB pages. */
static void
test_per_key (void)
{
  g_autoptr (VtMoveRates) r = vt_move_rates_new ();
  vt_move_rates_note (r, &thp_up, 640 * MiB, SECOND);
  vt_move_rates_note (r, &small_up, 64 * MiB, SECOND);
  g_assert_cmpfloat (vt_move_rates_speed (r, &thp_up), ==, 640.0 * MiB);
  g_assert_cmpfloat (vt_move_rates_speed (r, &small_up), ==, 64.0 * MiB);
}

/* A key's speed and the all-keys one weigh each job 0.3 against the
 * jobs before it. */
static void
test_weighted (void)
{
  g_autoptr (VtMoveRates) r = vt_move_rates_new ();
  vt_move_rates_note (r, &thp_up, 640 * MiB, SECOND);
  vt_move_rates_note (r, &thp_up, 320 * MiB, SECOND);
  g_assert_cmpfloat_with_epsilon (vt_move_rates_speed (r, &thp_up), 544.0 * MiB, 1);
  vt_move_rates_note (r, &small_up, 64 * MiB, SECOND);
  g_assert_cmpfloat_with_epsilon (vt_move_rates_all (r), 0.7 * 544 * MiB + 0.3 * 64 * MiB, 1);
}

/* Less than a huge page, or no CPU time, is too little to time: the
 * totals count it, the speeds do not move. */
static void
test_untimed_jobs_count (void)
{
  g_autoptr (VtMoveRates) r = vt_move_rates_new ();
  vt_move_rates_note (r, &thp_up, 640 * MiB, SECOND);
  vt_move_rates_note (r, &thp_up, MiB, 1);
  vt_move_rates_note (r, &thp_up, 64 * MiB, 0);
  g_assert_cmpfloat (vt_move_rates_speed (r, &thp_up), ==, 640.0 * MiB);
  g_assert_cmpfloat (vt_move_rates_all (r), ==, 640.0 * MiB);
  g_autoptr (GArray) list = vt_move_rates_list (r);
  g_assert_cmpuint (list->len, ==, 1);
  const VtMoveRate *rate = &g_array_index (list, VtMoveRate, 0);
  g_assert_cmpuint (rate->bytes, ==, 705 * MiB);
  g_assert_cmpuint (rate->cpu_us, ==, SECOND + 1);
}

/* A key with no speed of its own (never seen, or only untimed jobs) has
 * the all-keys speed; before any job, none. */
static void
test_falls_back_to_all (void)
{
  g_autoptr (VtMoveRates) r = vt_move_rates_new ();
  g_assert_cmpfloat (vt_move_rates_speed (r, &thp_up), ==, 0);
  vt_move_rates_note (r, &thp_down, MiB, 1);
  g_assert_cmpfloat (vt_move_rates_speed (r, &thp_down), ==, 0);
  vt_move_rates_note (r, &small_up, 64 * MiB, SECOND);
  g_assert_cmpfloat (vt_move_rates_speed (r, &thp_up), ==, 64.0 * MiB);
  g_assert_cmpfloat (vt_move_rates_speed (r, &thp_down), ==, 64.0 * MiB);
}

/* A job is what its key's speed moves in the CPU given, at most a quarter
 * of the round's budget, in whole 2 MiB; before any speed, the first
 * size; without its own, the all-keys speed's. */
static void
test_job_bytes (void)
{
  g_autoptr (VtMoveRates) r = vt_move_rates_new ();
  guint64 budget = 1024 * MiB;
  g_assert_cmpuint (vt_move_rates_job_bytes (r, &thp_up, budget, 0.25, 8 * MiB), ==, 8 * MiB);
  g_assert_cmpuint (vt_move_rates_job_bytes (r, &thp_up, 16 * MiB, 0.25, 8 * MiB), ==, 4 * MiB);
  vt_move_rates_note (r, &thp_up, 640 * MiB, SECOND);
  vt_move_rates_note (r, &small_up, 41 * MiB, SECOND);
  g_assert_cmpuint (vt_move_rates_job_bytes (r, &thp_up, budget, 0.25, 8 * MiB), ==, 160 * MiB);
  g_assert_cmpuint (vt_move_rates_job_bytes (r, &thp_up, 256 * MiB, 0.25, 8 * MiB), ==, 64 * MiB);
  /* 10.25 MiB: up to whole huge pages. */
  g_assert_cmpuint (vt_move_rates_job_bytes (r, &small_up, budget, 0.25, 8 * MiB), ==, 12 * MiB);
  /* All-keys: 0.7 * 640 + 0.3 * 41 = 460.3 MiB/s; 115.1 MiB in 0.25 s. */
  g_assert_cmpuint (vt_move_rates_job_bytes (r, &thp_down, budget, 0.25, 8 * MiB), ==, 116 * MiB);
  /* Never under a huge page, not even with no CPU to spend. */
  g_assert_cmpuint (vt_move_rates_job_bytes (r, &small_up, budget, 0, 8 * MiB), ==, 2 * MiB);
}

/* Every key, by from, to and class, whatever the order they came in. */
static void
test_list_order (void)
{
  g_autoptr (VtMoveRates) r = vt_move_rates_new ();
  const VtMoveKey keys[] = { { 2, 0, VT_PAGE_CLASS_4K }, thp_down, thp_up, small_up,
                             { 1, 0, VT_PAGE_CLASS_UNKNOWN } };
  for (gsize i = 0; i < G_N_ELEMENTS (keys); i++)
    vt_move_rates_note (r, &keys[i], (i + 1) * 4 * MiB, SECOND);
  vt_move_rates_note (r, &small_up, 4 * MiB, SECOND);
  g_autoptr (GArray) list = vt_move_rates_list (r);
  g_assert_cmpuint (list->len, ==, 5);
  static const struct { guint from, to; VtPageClass c; guint64 bytes; } want[] = {
    { 0, 1, VT_PAGE_CLASS_2M_THP, 8 * MiB },   { 1, 0, VT_PAGE_CLASS_4K, 20 * MiB },
    { 1, 0, VT_PAGE_CLASS_2M_THP, 12 * MiB },  { 1, 0, VT_PAGE_CLASS_UNKNOWN, 20 * MiB },
    { 2, 0, VT_PAGE_CLASS_4K, 4 * MiB },
  };
  for (guint i = 0; i < list->len; i++) {
    const VtMoveRate *rate = &g_array_index (list, VtMoveRate, i);
    g_assert_cmpuint (rate->key.from, ==, want[i].from);
    g_assert_cmpuint (rate->key.to, ==, want[i].to);
    g_assert_cmpint (rate->key.page_class, ==, want[i].c);
    g_assert_cmpuint (rate->bytes, ==, want[i].bytes);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/move-rates/per-key", test_per_key);
  g_test_add_func ("/move-rates/weighted", test_weighted);
  g_test_add_func ("/move-rates/untimed-jobs-count", test_untimed_jobs_count);
  g_test_add_func ("/move-rates/falls-back-to-all", test_falls_back_to_all);
  g_test_add_func ("/move-rates/job-bytes", test_job_bytes);
  g_test_add_func ("/move-rates/list-order", test_list_order);
  return g_test_run ();
}
