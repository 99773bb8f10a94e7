/* What vtierd calls a region's heat: its nr_accesses held at the recent
 * peak and let decay, rather than the last aggregation's alone.
 *
 * One aggregation (200 ms) of a guest whose vCPU did not run, or ran its
 * checksum pass, reads its hot set cold: seen in the heat scenario on a
 * loaded host, the hot pages in regions over the threshold swung from 99% to
 * 0% and back between polls 4 s apart, and the tiering and the reports swung
 * with them. Kernel DAMON smooths the same way for its schemes
 * (nr_accesses_bp, a moving sum); here a region is as hot as its fresh count,
 * or as the decayed heat the same bytes had, whichever is higher, so a hot
 * set that moves is hot at its new place at once and cools at its old one
 * within a few half-lives. The held regions have the fresh regions'
 * boundaries and ages: only nr_accesses is held.
 *
 * Beside the held count, each region's mean count: the fresh counts'
 * moving average over the same half-life, byte-weighted over the bytes
 * it had in earlier aggregations as the held count is. The held count
 * says whether memory is in use (a peak); the mean ranks memory in use
 * against other memory in use, where a single aggregation's count is too
 * noisy: 40 samples of memory touched in 86% of them read 35 +- 2.2. */
#pragma once

#include <glib.h>

#include "regions/vt-regions.h"

typedef struct _VtHeatHold VtHeatHold;

/* Held heat halves every `half_life_us` (0: no hold, the fresh counts as they
 * are); aggregations come every `aggr_us`. */
VtHeatHold *vt_heat_hold_new (guint64 aggr_us, guint64 half_life_us);
void vt_heat_hold_free (VtHeatHold *hold);
/* The aggregation interval changed (vt-interval-tune.h) to `age_scale` times
 * the configured one: the decay per aggregation follows, and the held
 * regions' ages are given in configured aggregations, so that settings
 * counted in aggregations (demote-min-age) keep their length in time. The
 * means so far are converted to what the new intervals would have read of
 * the same accesses of `max_accesses` (accesses at random: a page untouched
 * in a sample at one scale is untouched in each of scale/old samples at
 * the other). */
void vt_heat_hold_set_interval (VtHeatHold *hold, guint64 aggr_us, guint age_scale,
                                guint max_accesses);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtHeatHold, vt_heat_hold_free)

/* Takes a finished aggregation (`fresh`, sorted by start, disjoint) and
 * returns the held regions: the same `n` regions, each with nr_accesses =
 * max (fresh, decayed byte-weighted mean of the held heat its bytes had).
 * Valid until the next update. */
const VtRegion *vt_heat_hold_update (VtHeatHold *hold, const VtRegion *fresh, guint n);

/* The held regions of the last update (none before the first). */
const VtRegion *vt_heat_hold_regions (const VtHeatHold *hold, guint *n);
/* The last update's own counts, before the hold: one per held region, in
 * the same order. What a single aggregation saw, for what asks whether
 * memory read warm again in another one (a scan's pass reads hot in one,
 * and the hold would carry it into the next ones). */
const guint *vt_heat_hold_fresh_accesses (const VtHeatHold *hold, guint *n);
/* The held regions' mean counts (see above), one per held region, in the
 * same order. */
const double *vt_heat_hold_mean_accesses (const VtHeatHold *hold, guint *n);
/* How many aggregations' worth of samples a mean stands for: its variance
 * is one aggregation's over this (an exponential average of weight a
 * per aggregation has a/(2-a) of a single reading's variance). 1 without
 * a hold. */
double vt_heat_hold_mean_span (const VtHeatHold *hold);
