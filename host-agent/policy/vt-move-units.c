#include "policy/vt-move-units.h"

static gint
cmp_addr (gconstpointer a, gconstpointer b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;
  return x < y ? -1 : x > y;
}

/* The cut points of one run of adjacent regions, first..last: its ends,
 * and each inner boundary, or the ends of the huge page it falls in. */
static gboolean
run_cuts (GArray *cuts, const VtRegion *regions, guint first, guint last,
          VtPageSizeAtFunc size_at, gpointer data)
{
  gboolean moved = FALSE;
  guint64 run_start = regions[first].start, run_end = regions[last].end;
  g_array_set_size (cuts, 0);
  g_array_append_val (cuts, run_start);
  for (guint i = first; i < last; i++) {
    guint64 b = regions[i].end;
    guint64 size = size_at ? size_at (b, data) : 0;
    if (size && (size & (size - 1)) == 0 && b % size) {
      guint64 lo = MAX (b - b % size, run_start), hi = MIN (b - b % size + size, run_end);
      g_array_append_val (cuts, lo);
      g_array_append_val (cuts, hi);
      moved = TRUE;
    } else {
      g_array_append_val (cuts, b);
    }
  }
  g_array_append_val (cuts, run_end);
  g_array_sort (cuts, cmp_addr);
  return moved;
}

/* Unit [a, b) from the regions it overlaps, from *at on (which it leaves
 * at the first that may overlap the next unit): the hottest's heat and
 * age (the older between equals), the highest own count and mean, and
 * the written pages in proportion. */
static VtRegion
unit_of (const VtRegion *regions, const VtRegionFigures *per, guint n, guint *at, guint64 a,
         guint64 b, guint64 *unit_written, guint *unit_fresh, double *unit_mean)
{
  while (*at < n && regions[*at].end <= a)
    (*at)++;
  VtRegion u = { a, b, a, 0, 0, 0 };
  gboolean any = FALSE;
  double w = 0;
  *unit_fresh = 0;
  *unit_mean = 0;
  for (guint k = *at; k < n && regions[k].start < b; k++) {
    const VtRegion *r = &regions[k];
    guint64 lo = MAX (a, r->start), hi = MIN (b, r->end);
    if (!any || r->nr_accesses > u.nr_accesses ||
        (r->nr_accesses == u.nr_accesses && r->age > u.age)) {
      u.nr_accesses = r->nr_accesses;
      u.cur_accesses = r->cur_accesses;
      u.age = r->age;
      u.sampling_addr = r->sampling_addr >= a && r->sampling_addr < b ? r->sampling_addr : a;
      any = TRUE;
    }
    if (per->written && r->end > r->start)
      w += (double) per->written[k] * (double) (hi - lo) / (double) (r->end - r->start);
    if (per->fresh)
      *unit_fresh = MAX (*unit_fresh, per->fresh[k]);
    if (per->mean)
      *unit_mean = MAX (*unit_mean, per->mean[k]);
  }
  *unit_written = (guint64) (w + 0.5);
  return u;
}

GArray *
vt_move_units (const VtRegion *regions, const VtRegionFigures *per, guint n,
               VtPageSizeAtFunc size_at, gpointer data, VtRegionFigures *units_per)
{
  GArray *units = g_array_sized_new (FALSE, FALSE, sizeof (VtRegion), n);
  g_autoptr (GArray) w = g_array_sized_new (FALSE, FALSE, sizeof (guint64), n);
  g_autoptr (GArray) f = g_array_sized_new (FALSE, FALSE, sizeof (guint), n);
  g_autoptr (GArray) m = g_array_sized_new (FALSE, FALSE, sizeof (double), n);
  g_autoptr (GArray) cuts = g_array_new (FALSE, FALSE, sizeof (guint64));
  guint at = 0;
  gboolean moved = FALSE;
  *units_per = (VtRegionFigures) { 0 };
  for (guint first = 0; first < n;) {
    guint last = first;
    while (last + 1 < n && regions[last + 1].start == regions[last].end)
      last++;
    moved |= run_cuts (cuts, regions, first, last, size_at, data);
    for (guint c = 0; c + 1 < cuts->len; c++) {
      guint64 a = g_array_index (cuts, guint64, c), b = g_array_index (cuts, guint64, c + 1);
      if (a == b)
        continue;
      guint64 unit_written;
      guint unit_fresh;
      double unit_mean;
      VtRegion u = unit_of (regions, per, n, &at, a, b, &unit_written, &unit_fresh, &unit_mean);
      g_array_append_val (units, u);
      g_array_append_val (w, unit_written);
      g_array_append_val (f, unit_fresh);
      g_array_append_val (m, unit_mean);
    }
    first = last + 1;
  }
  if (!moved) {
    g_array_unref (units);
    return NULL;
  }
  if (per->written)
    units_per->written = g_memdup2 (w->data, MAX (w->len, 1) * sizeof (guint64));
  if (per->fresh)
    units_per->fresh = g_memdup2 (f->data, MAX (f->len, 1) * sizeof (guint));
  if (per->mean)
    units_per->mean = g_memdup2 (m->data, MAX (m->len, 1) * sizeof (double));
  return units;
}
