/* A VM's tracker as the tiering engine reads it (vt_tracker_fill_heat):
 * the held heat, and beside it each region's own count in its last
 * aggregation. The engine promotes only what its own counts read warm
 * again (vt-tiering.c); without them it falls back to the held heat, and
 * one pass over cold memory, held for seconds, comes up as hot. Fed as
 * kernel DAMON feeds it (vt_tracker_load), over a fake /proc offering
 * soft-dirty (the source it attaches to; its sampler never runs here). */
#include <glib.h>

#include "common/vt-sysfs.h"
#include "daemon/vt-config.h"
#include "daemon/vt-tracker.h"
#include "regions/vt-interval-tune.h"
#include "vt-test-tree.h"

#define PID 4242
#define MiB (G_GUINT64_CONSTANT (1) << 20)
#define HVA G_GUINT64_CONSTANT (0x7f0000000000)

typedef struct {
  char *root, *state;
  VtConfig *config;
  VtRamMap *map;
  VtAccess *access;
  VtTracker *tracker;
} Fixture;

static void
never_fails (const GError *error, gpointer data)
{
  (void) data;
  g_error ("the tracker failed: %s", error->message);
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  (void) data;
  f->root = vt_test_make_tmpdir ("vt-tracker-XXXXXX");
  f->state = vt_test_make_tmpdir ("vt-tracker-state-XXXXXX");
  vt_test_put_file (f->root, "proc/self/clear_refs", "");
  vt_test_put_file (f->root, "proc/self/pagemap", "");
  vt_test_put_file (f->root, "proc/" G_STRINGIFY (PID) "/clear_refs", "");
  vt_test_put_file (f->root, "proc/" G_STRINGIFY (PID) "/pagemap", "");

  f->config = vt_config_new_defaults ();
  g_free (f->config->source);
  f->config->source = g_strdup ("soft-dirty");
  f->config->heat_half_life_ms = 1000;

  f->map = g_new0 (VtRamMap, 1);
  f->map->blocks = g_ptr_array_new_with_free_func ((GDestroyNotify) vt_ram_block_free);
  VtRamBlock *b = g_new0 (VtRamBlock, 1);
  b->id = g_strdup ("pc.ram");
  b->kind = g_strdup ("ram");
  b->guest_node = -1;
  b->size = 64 * MiB;
  b->hva = HVA;
  b->page_size = 4096;
  g_ptr_array_add (f->map->blocks, b);
  f->map->total = b->size;

  f->access = vt_access_new (f->root, f->state, f->config->source, 1, NULL, NULL);
  g_autoptr (GError) error = NULL;
  f->tracker = vt_tracker_new (f->access, f->config, f->map, PID, "vm", f, never_fails, NULL,
                               &error);
  g_assert_no_error (error);
  g_assert_cmpstr (vt_tracker_source (f->tracker), ==, "soft-dirty");
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  (void) data;
  g_clear_pointer (&f->tracker, vt_tracker_free);
  g_clear_pointer (&f->access, vt_access_free);
  g_clear_pointer (&f->map, vt_ram_map_free);
  g_clear_pointer (&f->config, vt_config_free);
  vt_sysfs_set_root (NULL);
  g_free (f->root);
  g_free (f->state);
}

/* Four 16 MiB regions, the first one's count `first`, the rest cold, read
 * at `scale` times the configured intervals. */
static void
load_at (Fixture *f, guint first, guint scale)
{
  VtRegion r[4];
  for (guint i = 0; i < G_N_ELEMENTS (r); i++)
    r[i] = (VtRegion) { .start = HVA + i * 16 * MiB, .end = HVA + (i + 1) * 16 * MiB,
                        .sampling_addr = HVA + i * 16 * MiB, .nr_accesses = i ? 0 : first };
  vt_tracker_load (f->tracker, r, G_N_ELEMENTS (r), f->config->sample_us * scale,
                   f->config->aggr_us * scale);
}

/* ... at the intervals it runs now. */
static void
load (Fixture *f, guint first)
{
  const VtRegionAttrs *a = vt_tracker_attrs (f->tracker);
  load_at (f, first, (guint) (a->sample_us / f->config->sample_us));
}

/* A region read hot once, then not at all: the held heat still says hot
 * (a second has not passed), and its own count beside it says 0. */
static void
test_heat_comes_with_its_own_counts (Fixture *f, gconstpointer data)
{
  (void) data;
  VtTieringInput in = { 0 };
  vt_tracker_fill_heat (f->tracker, &in);
  g_assert_true (in.heat_pending);

  guint max = vt_tracker_max_accesses (f->tracker);
  load (f, max);
  load (f, 0);

  in = (VtTieringInput) { 0 };
  vt_tracker_fill_heat (f->tracker, &in);
  g_assert_false (in.heat_pending);
  g_assert_cmpuint (in.aggregations, ==, 2);
  g_assert_cmpuint (in.max_accesses, ==, max);
  g_assert_cmpuint (in.hot_threshold, ==, vt_tracker_hot_threshold (f->tracker));
  g_assert_cmpuint (in.warm_threshold, ==, vt_tracker_warm_threshold (f->tracker));
  g_assert_cmpuint (in.demand, ==, vt_tracker_demand_bytes (f->tracker));
  g_assert_cmpuint (in.n_regions, ==, 4);
  g_assert_cmpuint (in.regions[0].start, ==, HVA);
  g_assert_cmpuint (in.regions[0].nr_accesses, >=, in.hot_threshold);
  g_assert_nonnull (in.fresh_accesses);
  g_assert_cmpuint (in.fresh_accesses[0], ==, 0);
  for (guint i = 1; i < in.n_regions; i++)
    g_assert_cmpuint (in.fresh_accesses[i], ==, in.regions[i].nr_accesses);
}

/* Tracking starts at the start scale (4x: 20 ms / 800 ms). While the VM's
 * hot memory fits its share, hot need only be told from cold: with the
 * same bytes reading hot at each doubling (here all of them, saturated),
 * the intervals climb to the longest. Once the tiering round says it does
 * not fit, they go back to the start scale and shrink toward the
 * configured ones, and no further, so its hot set ranks. Counts saturated
 * at every scale down to them rank no better there (vt-interval-tune.h):
 * the intervals go back to the start scale. When it fits again, they
 * climb again. Returns the shortest sampling interval seen. */
static guint64
run_saturated (Fixture *f, guint aggregations)
{
  guint max = vt_tracker_max_accesses (f->tracker);
  guint64 shortest = G_MAXUINT64;
  for (guint i = 0; i < aggregations; i++) {
    load (f, max);
    while (g_main_context_iteration (NULL, FALSE))
      ;
    shortest = MIN (shortest, vt_tracker_attrs (f->tracker)->sample_us);
  }
  return shortest;
}

/* A tracker of a VM whose hot memory fits, read saturated: it climbs to
 * the longest intervals. Returns its intervals. */
static const VtRegionAttrs *
climb_to_longest (Fixture *f)
{
  run_saturated (f, 20);
  const VtRegionAttrs *a = vt_tracker_attrs (f->tracker);
  g_assert_cmpuint (a->sample_us, ==, f->config->sample_us * f->config->max_interval_scale);
  return a;
}

static void
test_starts_long_and_shrinks_when_ranking (Fixture *f, gconstpointer data)
{
  (void) data;
  const VtRegionAttrs *a = vt_tracker_attrs (f->tracker);
  guint start = f->config->start_interval_scale, max = vt_tracker_max_accesses (f->tracker);
  g_assert_cmpuint (start, >, 1);
  g_assert_cmpuint (a->sample_us, ==, f->config->sample_us * start);
  g_assert_cmpuint (a->aggr_us, ==, f->config->aggr_us * start);
  g_assert_cmpuint (vt_tracker_age_unit_us (f->tracker), ==, f->config->aggr_us);

  guint longest = f->config->max_interval_scale;
  g_assert_cmpuint (longest, >, start);
  run_saturated (f, 20);
  g_assert_cmpuint (a->sample_us, ==, f->config->sample_us * longest);
  g_assert_cmpuint (vt_tracker_max_accesses (f->tracker), ==, max);

  /* A demand an eighth over its target or less is noise (a VM's demand
   * flickers), more says its hot memory must rank; once it ranks, it
   * does until its demand is within a thirty-second of its target. */
  vt_tracker_note_share (f->tracker, 112 * MiB, 100 * MiB, 0);
  run_saturated (f, 20);
  g_assert_false (vt_tracker_fine_ranking (f->tracker));
  g_assert_cmpuint (a->sample_us, ==, f->config->sample_us * longest);
  vt_tracker_note_share (f->tracker, 113 * MiB, 100 * MiB, 0);
  g_assert_cmpuint (run_saturated (f, 20), ==, f->config->sample_us);
  g_assert_true (vt_tracker_fine_ranking (f->tracker));
  g_assert_cmpuint (a->sample_us, ==, f->config->sample_us * start);
  g_assert_cmpuint (a->aggr_us, ==, f->config->aggr_us * start);
  g_assert_cmpuint (vt_tracker_max_accesses (f->tracker), ==, max);
  vt_tracker_note_share (f->tracker, 104 * MiB, 100 * MiB, 0);
  g_assert_true (vt_tracker_fine_ranking (f->tracker));

  vt_tracker_note_share (f->tracker, 103 * MiB, 100 * MiB, 0);
  g_assert_false (vt_tracker_fine_ranking (f->tracker));
  g_assert_cmpuint (a->sample_us, ==, f->config->sample_us * start);
  g_assert_cmpuint (run_saturated (f, 20), ==, f->config->sample_us * start);
  g_assert_cmpuint (a->sample_us, ==, f->config->sample_us * longest);
  g_assert_cmpuint (a->aggr_us, ==, f->config->aggr_us * longest);
}

/* A VM whose hot memory fits its share climbs to the longest intervals
 * (cheapest) while no other VM is held to its share. Once the shares read
 * every demand at one rate (ref_scale), its own is read at that rate from
 * its counts, which saturate at long intervals: it goes back to the
 * band's scale and stays there, at its set threshold, until the shares
 * read each VM at its own rate again. */
static void
test_no_climb_while_read_at_one_rate (Fixture *f, gconstpointer data)
{
  (void) data;
  guint start = f->config->start_interval_scale, longest = f->config->max_interval_scale;
  guint threshold = vt_tracker_hot_threshold_set (f->tracker);
  const VtRegionAttrs *a = climb_to_longest (f);
  g_assert_cmpuint (vt_tracker_hot_threshold (f->tracker), >, threshold);

  vt_tracker_note_share (f->tracker, 50 * MiB, 100 * MiB, 1);
  g_assert_false (vt_tracker_fine_ranking (f->tracker));
  g_assert_cmpuint (a->sample_us, ==, f->config->sample_us * start);
  for (guint i = 0; i < 40; i++) {
    run_saturated (f, 1);
    vt_tracker_note_share (f->tracker, 50 * MiB, 100 * MiB, 1);
    g_assert_cmpuint (a->sample_us, ==, f->config->sample_us * start);
    g_assert_cmpuint (vt_tracker_hot_threshold (f->tracker), ==, threshold);
  }

  vt_tracker_note_share (f->tracker, 50 * MiB, 100 * MiB, 0);
  run_saturated (f, 20);
  g_assert_cmpuint (a->sample_us, ==, f->config->sample_us * longest);
}

/* A VM at the longest intervals shares its kdamond with one that asks for
 * the start scale (vt-damon.c runs the shortest any of its VMs asks for).
 * Read there, its hot set reads 1 of 40, under the tuner's band: judged
 * as its own, that said "starved at the longest intervals" and halved its
 * hot threshold. The tracker follows the intervals that ran, and its
 * tuner waits for its own: threshold and wanted scale stay, and once the
 * partner climbs, the VM reads at the longest again and asks nothing. */
static void
test_a_partners_intervals_do_not_tune_it (Fixture *f, gconstpointer data)
{
  (void) data;
  guint start = f->config->start_interval_scale, longest = f->config->max_interval_scale;
  guint threshold = vt_tracker_hot_threshold (f->tracker);
  climb_to_longest (f);

  for (guint i = 0; i < 40; i++) {
    load_at (f, 1, start);
    while (g_main_context_iteration (NULL, FALSE))
      ;
    g_assert_cmpuint (vt_tracker_interval_scale (f->tracker), ==, start);
    g_assert_cmpuint (vt_tracker_hot_threshold (f->tracker), ==, threshold);
  }
  guint max = vt_tracker_max_accesses (f->tracker);
  for (guint i = 0; i < 10; i++) {
    load_at (f, max, longest);
    while (g_main_context_iteration (NULL, FALSE))
      ;
    g_assert_cmpuint (vt_tracker_interval_scale (f->tracker), ==, longest);
  }
  /* Not halved: at the scale it climbed to, the count the threshold
   * means there (test_a_climb_keeps_what_hot_means). */
  g_assert_cmpuint (vt_tracker_hot_threshold (f->tracker), ==,
                    vt_interval_tune_count_at (threshold, max, longest, start));
}

/* A 16 MiB hot set read saturated, and a 2 MiB region a guest's
 * checksum pass crosses now and then, read at `sweep`. */
static void
load_with_sweep (Fixture *f, guint sweep)
{
  guint scale = vt_tracker_interval_scale (f->tracker);
  VtRegion r[] = {
    { .start = HVA, .end = HVA + 16 * MiB, .nr_accesses = vt_tracker_max_accesses (f->tracker) },
    { .start = HVA + 16 * MiB, .end = HVA + 18 * MiB, .nr_accesses = sweep },
    { .start = HVA + 18 * MiB, .end = HVA + 64 * MiB },
  };
  for (guint i = 0; i < G_N_ELEMENTS (r); i++)
    r[i].sampling_addr = r[i].start;
  vt_tracker_load (f->tracker, r, G_N_ELEMENTS (r), f->config->sample_us * scale,
                   f->config->aggr_us * scale);
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* Its hot memory fitting, a VM's intervals climb from the start scale
 * (4x, the band's here) to the longest (32x): hot bytes read the same
 * within an eighth. There a sample is eight times as long, and memory
 * touched as rarely as a checksum pass crosses it reads 7 of 40: over
 * the threshold of 4 set for the band's scale, not over the 23 that the
 * same rate of touches reads at 32x (nor over the warm floor's 14). Its
 * demand is the hot set: read at 4 of 40 it was 18 MiB, and took the
 * pass's memory up (the fit bench on 7.2). */
static void
test_a_climb_keeps_what_hot_means (Fixture *f, gconstpointer data)
{
  (void) data;
  guint start = f->config->start_interval_scale, longest = f->config->max_interval_scale;
  guint threshold = vt_tracker_hot_threshold (f->tracker), max = vt_tracker_max_accesses (f->tracker);
  for (guint i = 0; i < 40; i++)
    load_with_sweep (f, 0);
  g_assert_cmpuint (vt_tracker_interval_scale (f->tracker), ==, longest);
  guint at_longest = vt_interval_tune_count_at (threshold, max, longest, start);
  g_assert_cmpuint (at_longest, ==, 23);
  g_assert_cmpuint (vt_tracker_hot_threshold (f->tracker), ==, at_longest);
  /* and the warm floor, half the threshold at the band's scale: 2 of 40 */
  g_assert_cmpuint (vt_tracker_warm_threshold (f->tracker), ==, 14);
  for (guint i = 0; i < 20; i++)
    load_with_sweep (f, 7);
  g_assert_cmpuint (vt_tracker_interval_scale (f->tracker), ==, longest);
  g_assert_cmpuint (vt_tracker_demand_bytes (f->tracker), ==, 16 * MiB);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/tracker/starts-long-and-shrinks-when-ranking", Fixture, NULL, fixture_setup,
              test_starts_long_and_shrinks_when_ranking, fixture_teardown);
  g_test_add ("/tracker/no-climb-while-read-at-one-rate", Fixture, NULL, fixture_setup,
              test_no_climb_while_read_at_one_rate, fixture_teardown);
  g_test_add ("/tracker/heat-comes-with-its-own-counts", Fixture, NULL, fixture_setup,
              test_heat_comes_with_its_own_counts, fixture_teardown);
  g_test_add ("/tracker/a-climb-keeps-what-hot-means", Fixture, NULL, fixture_setup,
              test_a_climb_keeps_what_hot_means, fixture_teardown);
  g_test_add ("/tracker/a-partners-intervals-do-not-tune-it", Fixture, NULL, fixture_setup,
              test_a_partners_intervals_do_not_tune_it, fixture_teardown);
  return g_test_run ();
}
