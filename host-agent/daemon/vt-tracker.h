/* A VM's heat: its region set over its guest RAM, fed either by kernel
 * DAMON's snapshots or by vtierd's own sampler (timers on the main loop),
 * and the recent history of aggregations for heat maps. */
#pragma once

#include <glib.h>

#include "access/vt-access.h"
#include "daemon/vt-config.h"
#include "policy/vt-tiering.h"
#include "ram-map/vt-ram-map.h"
#include "regions/vt-regions.h"

G_BEGIN_DECLS

#define VT_HISTORY_BINS 256

typedef struct {
  gint64 time_us;                /* wall clock, µs since the epoch */
  guint8 bins[VT_HISTORY_BINS];  /* heat 0..255 per equal slice of guest RAM */
} VtHeatRow;

typedef struct _VtTracker VtTracker;
/* The source failed for good (e.g. the VM is gone). */
typedef void (*VtTrackerFailFunc) (const GError *error, gpointer user_data);

/* `map` is borrowed and must outlive the tracker. `name` is the VM's, for
 * messages. `key` identifies the VM in the access source's snapshot
 * callbacks. */
VtTracker *vt_tracker_new (VtAccess *access, const VtConfig *config, const VtRamMap *map,
                           GPid pid, const char *name, gpointer key, VtTrackerFailFunc fail,
                           gpointer user_data, GError **error);
void vt_tracker_free (VtTracker *tracker);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtTracker, vt_tracker_free)

/* A finished aggregation from the kernel, taken at these intervals (those
 * of another VM of the same kdamond, when they were shorter). */
void vt_tracker_load (VtTracker *tracker, const VtRegion *regions, guint n, guint64 sample_us,
                      guint64 aggr_us);

/* The regions of the last aggregation, their heat held (vt-heat-hold.h):
 * what vtierd calls hot, tiers and reports. */
const VtRegion *vt_tracker_regions (VtTracker *tracker, guint *n);
/* The same regions' counts in that aggregation alone, unheld. */
const guint *vt_tracker_fresh_accesses (VtTracker *tracker, guint *n);
/* The same regions' mean counts (vt-heat-hold.h): what ranks them. */
const double *vt_tracker_mean_accesses (VtTracker *tracker, guint *n);
guint vt_tracker_max_accesses (VtTracker *tracker);
/* The heat part of the tiering engine's input: the held regions and their
 * own counts beside them, the scale and thresholds, the demand, how many
 * aggregations there were. `in` borrows the tracker's arrays. */
void vt_tracker_fill_heat (VtTracker *tracker, VtTieringInput *in);
guint vt_tracker_hot_threshold (VtTracker *tracker); /* nr_accesses from which hot, now */
guint vt_tracker_hot_threshold_set (VtTracker *tracker); /* ... as configured */
/* The VM's demand and target, from the tiering round: they say whether its
 * heat must rank its hot memory, not only tell it from cold. It must when
 * its demand is more than its target by an eighth, and then until it is
 * within a thirty-second. Then the intervals may shrink to the configured
 * ones when its counts saturate; else not below the start scale, and they
 * climb while the same bytes read hot (vt_interval_tune_aim_long), but
 * not while the shares read demands at one rate (`ref_scale`, the
 * round's VtTieringStats.ref_scale; 0: none): there they stay at the
 * band's scale, where counts are not saturated. */
void vt_tracker_note_share (VtTracker *tracker, guint64 demand, guint64 target, guint ref_scale);
gboolean vt_tracker_fine_ranking (VtTracker *tracker);
/* The intervals now, as a multiple of the configured ones. */
guint vt_tracker_interval_scale (VtTracker *tracker);
guint vt_tracker_warm_threshold (VtTracker *tracker); /* ... warm: half the configured */
/* Bytes in hot regions, averaged over the aggregations that end in the
 * last 4 s (at least the latest). */
guint64 vt_tracker_hot_bytes (VtTracker *tracker);
/* The 80th percentile of the hot bytes of the aggregations in the last 10 s
 * (at least 5, at most 50): the demand its share of the top tier is
 * computed from. */
guint64 vt_tracker_demand_bytes (VtTracker *tracker);
guint64 vt_tracker_aggregations (VtTracker *tracker);
/* The intervals now (vt-interval-tune.h). */
const VtRegionAttrs *vt_tracker_attrs (VtTracker *tracker);
/* What a region's age counts: the configured aggregation interval. */
guint64 vt_tracker_age_unit_us (VtTracker *tracker);
const char *vt_tracker_source (VtTracker *tracker);
const char *vt_tracker_reason (VtTracker *tracker);
GPid vt_tracker_kdamond (VtTracker *tracker);
/* The kernel engine on its access target (vt-access.h). */
const char *vt_tracker_tiering_unsupported (VtTracker *tracker);
gboolean vt_tracker_set_tiering (VtTracker *tracker, const VtDamosTiering *spec, GError **error);
/* Its QEMU's own memory, watched with its RAM (vt_access_target_set_beside). */
gboolean vt_tracker_watch_beside (VtTracker *tracker, const VtAddrRange *ranges, guint n,
                                  GError **error);

/* Oldest first. */
const VtHeatRow *vt_tracker_history (VtTracker *tracker, guint *n);

G_END_DECLS
