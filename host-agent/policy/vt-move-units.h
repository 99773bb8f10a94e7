/* Regions as a move cuts them.
 *
 * The kernel moves a huge page whole when any page of it is asked for
 * (move_pages migrates the folio), and DAMON cuts its regions at any
 * 4 KiB page. So over THP or hugetlbfs memory a region boundary inside a
 * huge page is not where memory can move apart: promoting the hot region
 * on one side moved the other side's part of the page too, and demoting
 * the cold region on the other side took the hot part down again. Seen in
 * a 4-VM matrix case (THP always, hot sets scattered in 4 KiB pieces):
 * moves 2-3 times their plan ("up 6" MiB took a VM from 88 to 98 MiB) and
 * a quarter of each busy VM's moves undone later.
 *
 * The tiering engine plans on units instead: each boundary between two
 * adjacent regions that falls inside a huge page becomes that page, a unit
 * of its own, as hot as the hotter of the regions it joins. Elsewhere the
 * regions stay as DAMON made them. */
#pragma once

#include <glib.h>

#include "regions/vt-regions.h"

G_BEGIN_DECLS

/* The size of the page mapping `addr` as a move moves it (2 MiB, 1 GiB);
 * 0 for a base page, or when unknown. */
typedef guint64 (*VtPageSizeAtFunc) (guint64 addr, gpointer data);

/* What comes per region beside it, each array NULL where unknown: pages
 * written in the last dirty-page window, the region's own count in its
 * last aggregation, its mean count (vt-tiering.h's VtTieringInput). */
typedef struct {
  const guint64 *written;
  const guint *fresh;
  const double *mean;
} VtRegionFigures;

/* `regions[0..n)` (sorted, disjoint) cut into units: a GArray of
 * VtRegion, or NULL when no boundary falls inside a huge page (the
 * regions are the units). What else comes per region (`per`) comes per
 * unit too, into `units_per` (g_free each array; NULL where the region's
 * is): the written pages shared out by overlap; the own count and the
 * mean, the highest of those a unit joins. An array per region indexed by
 * unit reads another region's figures, and past its end. */
GArray *vt_move_units (const VtRegion *regions, const VtRegionFigures *per, guint n,
                       VtPageSizeAtFunc size_at, gpointer data, VtRegionFigures *units_per);

G_END_DECLS
