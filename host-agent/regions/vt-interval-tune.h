/* DAMON's intervals auto-tuning (Linux 6.15, damon_attrs.intervals_goal),
 * done by vtierd for every kernel and for its own sampler.
 *
 * A region's nr_accesses counts the sampling intervals in which its sampled
 * page was found accessed, so it reads the share of a sampling interval to
 * the time between two touches of a page: a hot set the guest sweeps once
 * every 500 ms reads 1 of 40 at 5 ms intervals. That is below the hot
 * threshold, and within DAMON's merge threshold (a tenth of the maximum) of
 * cold memory, so hot and cold regions merge. Seen in the pressure matrix on
 * a slow emulated host: a busy guest's hot set read 0-2 of 40 in 16 MiB
 * regions and was never promoted. How often a guest touches its hot set
 * depends on the host's load and on the hot set's size, not on vtierd.
 *
 * So the intervals are scaled, the sampling and the aggregation interval
 * together (their ratio, max_accesses, stays): each window of aggregations,
 * the byte-weighted mean heat of the regions found accessed is compared
 * with a band; under it the scale doubles, over it the scale halves. The
 * band is wider than a factor two, so one step cannot jump across it. Its
 * floor is a quarter of the maximum, not the hot threshold (a tenth): DAMON
 * merges neighbours whose counts differ by a tenth of the maximum, and a hot
 * set reading a little above that, with a sample's noise, keeps merging
 * into the cold memory around it and reads lower still. A window is five
 * aggregations at the configured intervals and fewer at longer ones (one
 * from 4x on), and a change waits for two windows in a row to ask for it,
 * so the scale reaches 16x about 5 s after vtierd's start at 4x (9 s from
 * 1x). A VM with nothing accessed goes to the longest intervals, which
 * also costs the least. */
#pragma once

#include <glib.h>

#include "regions/vt-regions.h"

/* The band, as shares of max_accesses, and the aggregations per decision. */
#define VT_INTERVAL_TUNE_LOW 0.25
#define VT_INTERVAL_TUNE_HIGH 0.6
#define VT_INTERVAL_TUNE_WINDOW 5 /* at scale 1; at scale s, 5/s (at least 1) */
/* Halvings that each lower the mean by less than GAIN (a share of
 * max_accesses), all the way to the shortest scale allowed, while it still
 * reads over the band, are undone: the scale goes back to the longest one
 * that read the same, and that is the floor for FLOOR_WINDOWS windows
 * (then the tuner looks down again). Counts saturated at every one of
 * those intervals rank no better at the shortest, which costs the most
 * CPU. Seen in the contended bench: busy VMs' THP-backed hot sets read
 * over the band from 8x down to 1x, and their kdamonds at 5 ms took 28-34
 * of vtierd's ~72 CPU-s a run. A run of halvings that reads the same
 * before one that lowers it (a hot set touched every 25 ms, from 16x) goes
 * on down as before. */
#define VT_INTERVAL_TUNE_GAIN 0.1
#define VT_INTERVAL_TUNE_FLOOR_WINDOWS 30
/* Starved is judged on the hottest 1/TOP of the accessed bytes: under
 * LOW it is, and it stays so until they read FED or more. */
#define VT_INTERVAL_TUNE_TOP 10
#define VT_INTERVAL_TUNE_FED 0.4
/* vt_interval_tune_aim_long's: windows at a scale (the first not
 * counted) before it is judged, and windows before it tries again after
 * a step that grew the hot bytes. */
#define VT_INTERVAL_TUNE_AIM_WINDOWS 2
#define VT_INTERVAL_TUNE_AIM_HOLD 30

typedef struct _VtIntervalTune VtIntervalTune;

/* The scale runs from 1 (the configured intervals) to `max_scale`, a power of
 * two (1: no tuning). */
VtIntervalTune *vt_interval_tune_new (guint max_scale);
void vt_interval_tune_free (VtIntervalTune *tune);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtIntervalTune, vt_interval_tune_free)

/* Takes a finished aggregation's regions (their own counts, not held). Returns
 * the new scale when this aggregation ends a window that changes it, else 0. */
guint vt_interval_tune_observe (VtIntervalTune *tune, const VtRegion *regions, guint n,
                                guint max_accesses);
guint vt_interval_tune_scale (const VtIntervalTune *tune);
/* At the longest intervals, the hottest tenth of the last window's accessed
 * bytes still reads under the band: the guest touches what it uses most
 * more slowly than `max_scale` can read (seen on a slow emulated host: a
 * 64 MiB hot set at 32x read 1-4 of 40, 12-19 MiB of it over a 10%
 * threshold). The tracker then halves its hot threshold (vt-tracker.c).
 * The hottest tenth, not the mean of all that was accessed: a guest that
 * sweeps its cold memory slowly (a checksum pass, a page every 120 s)
 * has lots of memory read 1-4 of 40 at 32x beside a small hot set that
 * reads saturated. Its mean reads under the band, and at half the
 * threshold its sweep read hot: 200-330 MiB of an idle VM whose hot set
 * is 8 MiB, in the fit bench (issue 12's notes). Once starved, it stays so
 * until the hottest tenth reads FED: in heat-current, on a slow host, a
 * 64 MiB hot set read "hot from 2 of 40" and "from 4" by turns every 30
 * s, and vtierd's hot bytes (a mean of 5 aggregations) sat at 45-47 MiB
 * while the hot regions held 98% of the hot set. */
gboolean vt_interval_tune_starved (const VtIntervalTune *tune);
/* Back to a scale (e.g. 1 when the source refused the last one). */
void vt_interval_tune_reset (VtIntervalTune *tune, guint scale);
/* The shortest scale it shrinks to (1 at first). Returns the new scale
 * when the current one is below it, else 0. Saturated counts cost ranking
 * only where ranking decides something: a VM whose hot memory all fits its
 * share of the top tier needs hot told from cold, not hot from hotter. */
guint vt_interval_tune_set_min (VtIntervalTune *tune, guint min_scale);
/* For a VM whose hot memory fits its share (0: one that does not): from
 * the band's scale it climbs, a doubling at a time, to the longest scale
 * at which the bytes reading `hot_threshold` or more are those read at
 * the band's scale, within an eighth (and 1/64 of the VM): hot stays
 * hot and cold stays cold, and a longer interval costs less (one sample
 * per region per interval). A step that grows them goes back one step,
 * and the next waits AIM_HOLD windows; a growth where it has stayed goes
 * back to the band's scale, to be measured there. In the tracking bench
 * a near-idle VM's band held it at 4x (a 32 MiB set touched every ~17 ms
 * reads 0.25-0.6 at 20 ms), at 0.10-0.17 CPU s/s, and 32x cost a fifth
 * of that. Turned off, the tuner goes back to the band's scale: a VM
 * whose hot memory is ranked against its share is measured where the
 * band puts it. Returns the new scale when it changes, else 0. */
guint vt_interval_tune_aim_long (VtIntervalTune *tune, guint hot_threshold);
/* Whether it aims long now (the last vt_interval_tune_aim_long's threshold
 * was not 0). */
gboolean vt_interval_tune_aiming_long (const VtIntervalTune *tune);
/* The band's scale vt_interval_tune_aim_long climbed from; 0 while at the
 * band's own. */
guint vt_interval_tune_climbed_from (const VtIntervalTune *tune);
/* The count of `max` a region read at `scale` has when a toucher that reads
 * `count` of `max` at `ref` touches it: a sample is a window of the
 * sampling interval, and a page untouched in one at `ref` is untouched in
 * each of scale/ref at `scale` ((1 - p)^(scale/ref) = 1 - k/max). At 32x
 * against 1x, 4 of 40 reads 39. */
guint vt_interval_tune_count_at (guint count, guint max, guint scale, guint ref);
