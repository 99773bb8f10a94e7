#include "daemon/vt-tracker.h"

#include <stdlib.h>
#include <string.h>

#include "common/vt-cpu-parts.h"
#include "common/vt-error.h"
#include "regions/vt-heat-hold.h"
#include "regions/vt-interval-tune.h"

/* The hot bytes reported (vtierctl list, the metrics): their mean over
 * the aggregations that end in the last 4 s (5 or 6 at the start scale,
 * 2 at 16x, the latest alone at 32x, which spans 6.4 s by itself). Not a
 * count of aggregations: at 32x five of them span 32 s, and heat-current
 * (a hot set read at 32x on a slow host) reported 45-47 MiB of a 64 MiB
 * hot set while its hot regions held 98% of it, the earliest of the five
 * from before the hot set read hot. Two at 32x still lagged: a moved hot
 * set, in the hot regions whole at +18 s, was reported at 43 MiB at +18
 * and +25 s (the other aggregation had it half moved) and at 68 at +31. */
#define HOT_SPAN_US (4 * G_USEC_PER_SEC)
#define HOT_MIN 1
/* The demand a VM's share is computed from: hot bytes over ~10 s, so that a
 * hot set accessed at a low rate, whose regions flicker around the hot
 * threshold, does not make its share (and its memory) swing. Not their
 * mean but their 80th percentile: an aggregation in which the guest's vCPU
 * did not run (descheduled, or waiting on its pages while they move) reads
 * nearly nothing hot, and is no drop in what the VM uses. Seen in the
 * fairness scenario: 20-30% of rounds read 24-58 MiB hot of a VM whose hot
 * set is 460 MiB, its mean demand fell from ~470 to 252 MiB, its share with
 * it, and the 3:1 shares did not hold. */
#define DEMAND_WINDOW 50
#define DEMAND_PERCENTILE 80
/* ... and the window is 10 s however long the aggregations are
 * (vt-interval-tune.h), but never fewer than 5 of them. */
#define DEMAND_SPAN_US (10 * G_USEC_PER_SEC)
#define DEMAND_MIN 5

struct _VtTracker {
  char *name;
  const VtRamMap *map;
  VtRegionAttrs attrs;
  VtRegionSet *regions;
  VtHeatHold *hold;      /* what the rest of vtierd sees: the regions, heat held */
  VtAccessTarget *target;
  VtIntervalTune *tune;
  guint64 base_sample_us, base_aggr_us; /* the configured (shortest) intervals */
  guint start_scale;                     /* tracking began at this many times them */
  guint hot_threshold;
  guint64 aggregations;
  gint64 started_us; /* when tracking began (monotonic) */
  /* Hot bytes of the last aggregations: one 200 ms aggregation is noisy
   * when the guest's vCPU is descheduled, so the reported figure is their mean. */
  guint64 recent_hot[DEMAND_WINDOW]; /* a ring, by aggregation number */
  gint64 recent_time[DEMAND_WINDOW];  /* when each ended, monotonic µs */
  /* own sampler */
  guint sample_timer;
  guint samples_per_aggr, samples;
  /* history: a ring of rows */
  VtHeatRow *history;
  guint history_len, history_cap, history_head;
  VtTrackerFailFunc fail;
  gpointer fail_data;
  GCancellable *cancel;    /* interval commits in flight */
  gboolean tuning_refused; /* the source refused new intervals once */
  gboolean fine_ranking;   /* vt_tracker_note_share */
  gboolean starved;        /* the last aggregation's vt_interval_tune_starved */
};

/* The heat row of a region set over a RAM map. */
static void
heat_row_fill (VtHeatRow *row, const VtRamMap *map, const VtRegion *regions, guint n,
               guint max_accesses)
{
  double sums[VT_HISTORY_BINS] = { 0 };
  double bin_size = (double) MAX (map->total, 1) / VT_HISTORY_BINS;

  for (guint i = 0; i < n; i++) {
    guint64 off;
    if (!vt_ram_map_hva_to_offset (map, regions[i].start, &off))
      continue;
    /* A region lies in one RAM block, so its offsets are contiguous. */
    double a = (double) off, b = a + (double) (regions[i].end - regions[i].start);
    double heat = 255.0 * MIN (regions[i].nr_accesses, max_accesses) / MAX (max_accesses, 1);
    for (guint bin = (guint) (a / bin_size); bin < VT_HISTORY_BINS && bin * bin_size < b; bin++) {
      double lo = MAX (a, bin * bin_size), hi = MIN (b, (bin + 1) * bin_size);
      if (hi > lo)
        sums[bin] += heat * (hi - lo);
    }
  }
  row->time_us = g_get_real_time ();
  for (guint bin = 0; bin < VT_HISTORY_BINS; bin++)
    row->bins[bin] = (guint8) CLAMP (sums[bin] / bin_size + 0.5, 0, 255);
}

static gboolean on_sample (gpointer data);

/* The intervals the heat is read at: the held heat's decay and age. */
static void
run_at (VtTracker *t, guint64 sample_us, guint64 aggr_us)
{
  t->attrs.sample_us = sample_us;
  t->attrs.aggr_us = aggr_us;
  vt_heat_hold_set_interval (t->hold, aggr_us, (guint) MAX (1, aggr_us / t->base_aggr_us),
                             sample_us ? (guint) (aggr_us / sample_us) : 0);
}

/* The tracker's side of new intervals: the held heat's interval, the own
 * sampler's timer. */
static void
use_intervals (VtTracker *t, guint scale)
{
  guint64 sample_us = t->base_sample_us * scale, aggr_us = t->base_aggr_us * scale;
  g_debug ("tracking %s: intervals %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " us (%ux the "
           "shortest)", t->name, sample_us, aggr_us, scale);
  run_at (t, sample_us, aggr_us);
  if (t->sample_timer) {
    g_source_remove (t->sample_timer);
    t->samples = 0;
    t->sample_timer = g_timeout_add (MAX (1, sample_us / 1000), on_sample, t);
  }
}

static void apply_interval_scale (VtTracker *t, guint scale);

/* A source that refuses new intervals gets the ones it started with back
 * and no more tuning: the heat is as good as before tuning, and vtierd
 * says so. */
static void
on_intervals_set (G_GNUC_UNUSED GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  if (vt_access_target_set_intervals_finish (result, &error) ||
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  VtTracker *t = data;
  if (t->tuning_refused) {
    g_warning ("tracking %s: back to the starting intervals: %s", t->name, error->message);
    return;
  }
  g_warning ("tracking %s: no more interval tuning, back to the starting %" G_GUINT64_FORMAT
             "/%" G_GUINT64_FORMAT " us: %s", t->name, t->base_sample_us * t->start_scale,
             t->base_aggr_us * t->start_scale, error->message);
  t->tuning_refused = TRUE;
  g_clear_pointer (&t->tune, vt_interval_tune_free);
  t->tune = vt_interval_tune_new (1);
  apply_interval_scale (t, t->start_scale);
}

/* New intervals, `scale` times the configured ones. The kernel takes them
 * at its next aggregation, and its commit waits until then: off the main
 * loop (vt-damon-commit.h). The tracker uses them at once; the snapshots
 * in between still count the same accesses (the two intervals scale
 * together, so max_accesses stays). */
static void
apply_interval_scale (VtTracker *t, guint scale)
{
  vt_access_target_set_intervals_async (t->target, t->base_sample_us * scale,
                                        t->base_aggr_us * scale, t->cancel, on_intervals_set, t);
  use_intervals (t, scale);
}

/* `own`: the aggregation ran at the intervals the tuner asked for. One
 * that did not says nothing of them: a kdamond shared with a VM that asks
 * for shorter ones runs those, and a change is taken at the kdamond's next
 * aggregation. Judged as this VM's, a partner's shorter intervals read its
 * hot set cooler and then hotter again as the partner climbed: in the
 * tracking bench's eight-VM row (two VMs a kdamond), the climb's guard
 * sent both of a pair back to 4x by turns, and the pairs sat at 4, 8 and
 * 16x while four VMs alone all sat at 32x. */
static void
record_aggregation (VtTracker *t, gboolean own)
{
  guint n;
  const VtRegion *fresh = vt_region_set_regions (t->regions, &n);
  guint scale = own ? vt_interval_tune_observe (t->tune, fresh, n,
                                                vt_region_set_max_accesses (t->regions))
                    : 0;
  if (vt_interval_tune_starved (t->tune) != t->starved) {
    t->starved = !t->starved;
    g_debug ("tracking %s: what it uses most reads %s the tuner's band at the longest "
             "intervals: hot from %u of %u", t->name, t->starved ? "under" : "in",
             vt_tracker_hot_threshold (t), vt_region_set_max_accesses (t->regions));
  }
  const VtRegion *r = vt_heat_hold_update (t->hold, fresh, n);
  guint slot = (t->history_head + t->history_len) % t->history_cap;
  if (t->history_len == t->history_cap)
    t->history_head = (t->history_head + 1) % t->history_cap;
  else
    t->history_len++;
  heat_row_fill (&t->history[slot], t->map, r, n, vt_region_set_max_accesses (t->regions));
  t->recent_hot[t->aggregations % DEMAND_WINDOW] =
    vt_regions_bytes_at_least (r, n, vt_tracker_hot_threshold (t));
  t->recent_time[t->aggregations % DEMAND_WINDOW] = g_get_monotonic_time ();
  t->aggregations++;
  /* Until the first, the VM's heat is unknown and none of it moves. */
  if (t->aggregations == 1)
    g_debug ("tracking %s: its first aggregation, %.1f s after tracking began", t->name,
             (double) (g_get_monotonic_time () - t->started_us) / G_USEC_PER_SEC);
  if (scale)
    apply_interval_scale (t, scale);
}

static gboolean
on_sample (gpointer data)
{
  VtTracker *t = data;
  VT_CPU_PART (VT_CPU_PART_HEAT);
  gpointer prims_data;
  const VtAccessPrimitives *prims = vt_access_target_primitives (t->target, &prims_data);

  vt_region_set_sample (t->regions, prims, prims_data);
  g_autoptr (GError) error = vt_access_target_take_error (t->target);
  if (error) {
    t->sample_timer = 0;
    t->fail (error, t->fail_data);
    return G_SOURCE_REMOVE;
  }
  if (++t->samples >= t->samples_per_aggr) {
    t->samples = 0;
    vt_region_set_aggregate (t->regions);
    record_aggregation (t, TRUE);
  }
  return G_SOURCE_CONTINUE;
}

static gint
range_cmp (gconstpointer a, gconstpointer b)
{
  guint64 x = ((const VtAddrRange *) a)->start, y = ((const VtAddrRange *) b)->start;
  return x < y ? -1 : x > y;
}

static GArray *
ram_ranges (const VtRamMap *map)
{
  GArray *ranges = g_array_new (FALSE, FALSE, sizeof (VtAddrRange));
  for (guint i = 0; i < map->blocks->len; i++) {
    const VtRamBlock *b = map->blocks->pdata[i];
    VtAddrRange r = { b->hva, b->hva + b->size };
    g_array_append_val (ranges, r);
  }
  g_array_sort (ranges, range_cmp);
  return ranges;
}

VtTracker *
vt_tracker_new (VtAccess *access, const VtConfig *config, const VtRamMap *map, GPid pid,
                const char *name, gpointer key, VtTrackerFailFunc fail, gpointer user_data,
                GError **error)
{
  g_autoptr (VtTracker) t = g_new0 (VtTracker, 1);
  t->name = g_strdup (name);
  g_autoptr (GArray) ranges = ram_ranges (map);

  t->map = map;
  t->cancel = g_cancellable_new ();
  t->fail = fail;
  t->fail_data = user_data;
  guint64 total = 0;
  for (guint i = 0; i < ranges->len; i++)
    total += g_array_index (ranges, VtAddrRange, i).end - g_array_index (ranges, VtAddrRange, i).start;
  /* Tracking starts at the start scale; sample_us and aggr_us are the
   * shortest intervals the tuner goes back to. */
  guint start = CLAMP (config->start_interval_scale, 1, MAX (config->max_interval_scale, 1));
  t->attrs = (VtRegionAttrs) { config->sample_us * start, config->aggr_us * start,
                               vt_regions_min_for_size (total, config->min_regions,
                                                        config->max_regions,
                                                        config->max_region_bytes),
                               config->max_regions };
  t->regions = vt_region_set_new (&t->attrs, (VtAddrRange *) ranges->data, ranges->len,
                                  (guint64) pid);
  if (!t->regions) {
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                 "the guest RAM ranges cannot be tiled with %u..%u regions", t->attrs.min_nr_regions,
                 t->attrs.max_nr_regions);
    return NULL;
  }
  t->hold = vt_heat_hold_new (config->aggr_us, (guint64) config->heat_half_life_ms * 1000);
  t->tune = vt_interval_tune_new (config->max_interval_scale);
  vt_interval_tune_set_min (t->tune, start); /* until the policy asks to rank finely */
  t->start_scale = start;
  t->started_us = g_get_monotonic_time ();
  t->base_sample_us = config->sample_us;
  t->base_aggr_us = config->aggr_us;
  run_at (t, t->attrs.sample_us, t->attrs.aggr_us);
  guint n_initial;
  const VtRegion *initial = vt_region_set_regions (t->regions, &n_initial);
  vt_heat_hold_update (t->hold, initial, n_initial); /* all cold until the first aggregation */
  guint max = vt_region_set_max_accesses (t->regions);
  t->hot_threshold = MAX (1, (max * config->hot_threshold_percent + 99) / 100);
  vt_interval_tune_aim_long (t->tune, t->hot_threshold); /* fits, until told otherwise */
  t->history_cap = MAX (config->history, 1);
  t->history = g_new0 (VtHeatRow, t->history_cap);

  t->target = vt_access_attach (access, key, pid, (VtAddrRange *) ranges->data, ranges->len,
                                &t->attrs, error);
  if (!t->target)
    return NULL;
  if (!vt_access_target_in_kernel (t->target)) {
    t->samples_per_aggr = (guint) (config->aggr_us / config->sample_us);
    t->sample_timer = g_timeout_add (MAX (1, t->attrs.sample_us / 1000), on_sample, t);
  }
  return g_steal_pointer (&t);
}

void
vt_tracker_free (VtTracker *t)
{
  if (!t)
    return;
  g_clear_handle_id (&t->sample_timer, g_source_remove);
  g_cancellable_cancel (t->cancel);
  g_clear_object (&t->cancel);
  g_clear_pointer (&t->target, vt_access_detach);
  g_clear_pointer (&t->regions, vt_region_set_free);
  g_clear_pointer (&t->hold, vt_heat_hold_free);
  g_clear_pointer (&t->tune, vt_interval_tune_free);
  g_free (t->history);
  g_free (t->name);
  g_free (t);
}

void
vt_tracker_load (VtTracker *t, const VtRegion *regions, guint n, guint64 sample_us,
                 guint64 aggr_us)
{
  g_autofree VtRegion *scaled = NULL;
  gboolean own = TRUE;
  if (sample_us > 0 && aggr_us >= sample_us) {
    own = aggr_us == t->base_aggr_us * vt_interval_tune_scale (t->tune);
    /* A kdamond shared with a VM that asked for shorter intervals ran
     * those: the held heat follows what ran, and when their ratio is not
     * this VM's (a VM set up under another configuration), the counts are
     * brought to this VM's scale of accesses. */
    if (aggr_us != t->attrs.aggr_us || sample_us != t->attrs.sample_us)
      run_at (t, sample_us, aggr_us);
    guint max = vt_region_set_max_accesses (t->regions), ran = (guint) (aggr_us / sample_us);
    if (ran != max) {
      scaled = g_memdup2 (regions, n * sizeof *regions);
      vt_regions_rescale_accesses (scaled, n, ran, max);
      regions = scaled;
    }
  }
  vt_region_set_load (t->regions, regions, n);
  record_aggregation (t, own);
}

const VtRegion *
vt_tracker_regions (VtTracker *t, guint *n)
{
  return vt_heat_hold_regions (t->hold, n);
}

const guint *
vt_tracker_fresh_accesses (VtTracker *t, guint *n)
{
  return vt_heat_hold_fresh_accesses (t->hold, n);
}

const double *
vt_tracker_mean_accesses (VtTracker *t, guint *n)
{
  return vt_heat_hold_mean_accesses (t->hold, n);
}

void
vt_tracker_fill_heat (VtTracker *t, VtTieringInput *in)
{
  in->regions = vt_tracker_regions (t, &in->n_regions);
  guint n_fresh;
  in->fresh_accesses = vt_tracker_fresh_accesses (t, &n_fresh);
  if (n_fresh != in->n_regions)
    in->fresh_accesses = NULL;
  guint n_mean;
  in->mean_accesses = vt_tracker_mean_accesses (t, &n_mean);
  in->mean_span = vt_heat_hold_mean_span (t->hold);
  if (n_mean != in->n_regions)
    in->mean_accesses = NULL;
  in->max_accesses = vt_tracker_max_accesses (t);
  in->hot_threshold = vt_tracker_hot_threshold (t);
  in->band_threshold = vt_interval_tune_starved (t->tune) ? in->hot_threshold : t->hot_threshold;
  in->interval_scale = vt_tracker_interval_scale (t);
  in->warm_threshold = vt_tracker_warm_threshold (t);
  in->demand = vt_tracker_demand_bytes (t);
  in->aggregations = vt_tracker_aggregations (t);
  in->heat_pending = in->aggregations == 0;
}

guint
vt_tracker_max_accesses (VtTracker *t)
{
  return vt_region_set_max_accesses (t->regions);
}

/* A count set for the tuner's band, at the scale the VM runs at: climbed
 * above the band's scale only to cost less (vt_interval_tune_aim_long), the
 * count the same rate of touches reads there. The longer a sample, the more
 * of them a page touched now and then is found accessed in, and at the set
 * count, memory touched more rarely reads hot (or warm). Seen in the fit
 * bench on 7.2: busy VMs climbed from 4x to 16-32x (a climb may grow what
 * reads hot by an eighth), their guests' checksum pass read 5-7 of 40 and
 * "hot again" there, and came up after their hot sets were in, the idle
 * VM's memory going down for the room. */
static guint
at_band_rate (VtTracker *t, guint count)
{
  guint from = vt_interval_tune_climbed_from (t->tune);
  return from ? vt_interval_tune_count_at (count, vt_tracker_max_accesses (t),
                                           vt_tracker_interval_scale (t), from)
              : count;
}

static guint
warm_threshold_set (VtTracker *t)
{
  return MAX (1, t->hot_threshold / 2);
}

/* Halved while the intervals, at their longest, still read the VM's memory
 * in use under the tuner's band: what the guest touches most then reads a
 * few of max_accesses, and only its noisier part reaches the threshold. Not
 * lower than the warm floor (half): an idle VM's checksum pass, a touch a
 * page every 30 s, reads 0 or 1. */
guint
vt_tracker_hot_threshold (VtTracker *t)
{
  return vt_interval_tune_starved (t->tune) ? warm_threshold_set (t)
                                            : at_band_rate (t, t->hot_threshold);
}

guint
vt_tracker_hot_threshold_set (VtTracker *t)
{
  return t->hot_threshold;
}

gboolean
vt_tracker_fine_ranking (VtTracker *t)
{
  return t->fine_ranking;
}

guint
vt_tracker_interval_scale (VtTracker *t)
{
  return (guint) (t->attrs.sample_us / MAX (t->base_sample_us, 1));
}

void
vt_tracker_note_share (VtTracker *t, guint64 demand, guint64 target, guint ref_scale)
{
  /* In by more than an eighth, out within a thirty-second (the tiering
   * round's dead band): a demand that flickers about its target does not
   * change the intervals every round. Not in at any excess: in the fit
   * bench (hot sets that fit but for the reserve) the demands read 0-5%
   * over their targets once the hot sets were up, all three VMs ran at
   * 5 ms to the end, and their kdamonds took 39 of vtierd's 66-76 CPU-s
   * (issue 12's notes). */
  gboolean fine = demand > target + target / 8 || (t->fine_ranking && demand > target + target / 32);
  /* Nor does it climb while the shares read every demand at one rate
   * (ref_scale): its demand is read at that rate from its own counts,
   * and near saturation they no longer tell how often memory is
   * touched. In the contended bench the idle VM climbed 8x -> 16x -> 32x
   * within 20 s of the apps being held to their shares; the threshold
   * converted to 32x stood at 37 of 40 where its own hot set read 29-37
   * (a vCPU that runs in bursts is not seen at every long sample), and
   * its demand fell from 62 MiB to 39, its own hot memory down with it. */
  gboolean climb = !fine && ref_scale == 0;
  if (fine == t->fine_ranking && climb == vt_interval_tune_aiming_long (t->tune))
    return;
  gboolean fine_changed = fine != t->fine_ranking;
  t->fine_ranking = fine;
  if (t->tuning_refused)
    return;
  /* Down to the band's scale before the floor drops; up to the floor
   * before the climb. */
  guint scale = climb ? 0 : vt_interval_tune_aim_long (t->tune, 0);
  guint raised = fine_changed ? vt_interval_tune_set_min (t->tune, fine ? 1 : t->start_scale) : 0;
  scale = raised ? raised : scale;
  if (climb)
    vt_interval_tune_aim_long (t->tune, t->hot_threshold);
  if (scale) {
    g_debug ("tracking %s: %s: not below %ux", t->name,
             fine    ? "its hot memory is more than its share"
             : climb ? "its hot memory fits its share"
                     : "its demand is read at another VM's rate",
             scale);
    apply_interval_scale (t, scale);
  }
}

guint
vt_tracker_warm_threshold (VtTracker *t)
{
  return at_band_rate (t, warm_threshold_set (t));
}

/* The hot bytes of the latest aggregations, newest first, into `out`
 * (DEMAND_WINDOW long): those within `span_us` of the latest, and never
 * fewer than `min` of them (when there are). Returns how many. */
static guint
latest_hot (VtTracker *t, gint64 span_us, guint min, guint64 *out)
{
  guint avail = (guint) MIN (t->aggregations, DEMAND_WINDOW), n = 0;
  gint64 last = avail ? t->recent_time[(t->aggregations - 1) % DEMAND_WINDOW] : 0;
  for (guint i = 1; i <= avail; i++) {
    guint slot = (guint) ((t->aggregations - i) % DEMAND_WINDOW);
    if (n >= min && last - t->recent_time[slot] > span_us)
      break;
    out[n++] = t->recent_hot[slot];
  }
  return n;
}

guint64
vt_tracker_hot_bytes (VtTracker *t)
{
  guint64 recent[DEMAND_WINDOW], sum = 0;
  guint n = latest_hot (t, HOT_SPAN_US, HOT_MIN, recent);
  for (guint i = 0; i < n; i++)
    sum += recent[i];
  return n ? sum / n : 0;
}

static int
compare_u64 (gconstpointer a, gconstpointer b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;
  return x < y ? -1 : x > y;
}

guint64
vt_tracker_demand_bytes (VtTracker *t)
{
  guint64 sorted[DEMAND_WINDOW];
  guint n = latest_hot (t, DEMAND_SPAN_US, DEMAND_MIN, sorted);
  if (n == 0)
    return 0;
  qsort (sorted, n, sizeof sorted[0], compare_u64);
  return sorted[(n - 1) * DEMAND_PERCENTILE / 100];
}

guint64
vt_tracker_aggregations (VtTracker *t)
{
  return t->aggregations;
}

const VtRegionAttrs *
vt_tracker_attrs (VtTracker *t)
{
  return &t->attrs;
}

guint64
vt_tracker_age_unit_us (VtTracker *t)
{
  return t->base_aggr_us;
}

const char *
vt_tracker_source (VtTracker *t)
{
  return vt_access_target_source (t->target);
}

const char *
vt_tracker_tiering_unsupported (VtTracker *t)
{
  return vt_access_target_tiering_unsupported (t->target);
}

gboolean
vt_tracker_set_tiering (VtTracker *t, const VtDamosTiering *spec, GError **error)
{
  return vt_access_target_set_tiering (t->target, spec, error);
}

gboolean
vt_tracker_watch_beside (VtTracker *t, const VtAddrRange *ranges, guint n, GError **error)
{
  return vt_access_target_set_beside (t->target, ranges, n, error);
}

const char *
vt_tracker_reason (VtTracker *t)
{
  return vt_access_target_reason (t->target);
}

GPid
vt_tracker_kdamond (VtTracker *t)
{
  return vt_access_target_kdamond (t->target);
}

const VtHeatRow *
vt_tracker_history (VtTracker *t, guint *n)
{
  /* Rotate the ring so the oldest row is first: callers read it linearly. */
  if (t->history_head != 0) {
    g_autofree VtHeatRow *tmp = g_new (VtHeatRow, t->history_len);
    for (guint i = 0; i < t->history_len; i++)
      tmp[i] = t->history[(t->history_head + i) % t->history_cap];
    memcpy (t->history, tmp, t->history_len * sizeof (VtHeatRow));
    t->history_head = 0;
  }
  *n = t->history_len;
  return t->history;
}
