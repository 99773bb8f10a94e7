#include "regions/vt-heat-hold.h"

#include <math.h>

struct _VtHeatHold {
  guint64 half_life_us;
  double decay;   /* per aggregation, 0..1 */
  guint age_scale;
  GArray *held;   /* VtRegion, sorted by start */
  GArray *fresh;  /* guint: each held region's own count, unheld */
  GArray *mean;   /* double: each held region's mean count */
};

VtHeatHold *
vt_heat_hold_new (guint64 aggr_us, guint64 half_life_us)
{
  VtHeatHold *h = g_new0 (VtHeatHold, 1);
  h->half_life_us = half_life_us;
  vt_heat_hold_set_interval (h, aggr_us, 1, 0);
  h->held = g_array_new (FALSE, FALSE, sizeof (VtRegion));
  h->fresh = g_array_new (FALSE, FALSE, sizeof (guint));
  h->mean = g_array_new (FALSE, FALSE, sizeof (double));
  return h;
}

void
vt_heat_hold_set_interval (VtHeatHold *h, guint64 aggr_us, guint age_scale, guint max_accesses)
{
  h->decay = h->half_life_us ? exp2 (-(double) aggr_us / (double) h->half_life_us) : 0.0;
  age_scale = MAX (age_scale, 1);
  if (h->mean && h->age_scale && age_scale != h->age_scale && max_accesses > 0) {
    double max = max_accesses, power = (double) age_scale / h->age_scale;
    for (guint i = 0; i < h->mean->len; i++) {
      double *m = &g_array_index (h->mean, double, i);
      *m = max * (1.0 - pow (1.0 - MIN (*m, max) / max, power));
    }
  }
  h->age_scale = age_scale;
}

void
vt_heat_hold_free (VtHeatHold *h)
{
  if (!h)
    return;
  g_array_unref (h->held);
  g_array_unref (h->fresh);
  g_array_unref (h->mean);
  g_free (h);
}

const VtRegion *
vt_heat_hold_update (VtHeatHold *h, const VtRegion *fresh, guint n)
{
  g_autoptr (GArray) next = g_array_sized_new (FALSE, FALSE, sizeof (VtRegion), n);
  g_autoptr (GArray) next_mean = g_array_sized_new (FALSE, FALSE, sizeof (double), n);
  const VtRegion *old = (const VtRegion *) h->held->data;
  const double *old_mean = (const double *) h->mean->data;
  guint n_old = h->held->len, j = 0;

  g_array_set_size (h->fresh, n);
  for (guint i = 0; i < n; i++) {
    g_array_index (h->fresh, guint, i) = fresh[i].nr_accesses;
    VtRegion r = fresh[i];
    r.age = (guint) MIN ((guint64) r.age * h->age_scale, G_MAXUINT);
    /* Old regions wholly before this one can serve no later one either:
     * both lists are sorted and disjoint. */
    while (j < n_old && old[j].end <= r.start)
      j++;
    double weighted = 0, meant = 0;
    guint64 covered = 0;
    for (guint k = j; k < n_old && old[k].start < r.end; k++) {
      guint64 lo = MAX (old[k].start, r.start), hi = MIN (old[k].end, r.end);
      weighted += (double) (hi - lo) * old[k].nr_accesses;
      meant += (double) (hi - lo) * old_mean[k];
      covered += hi - lo;
    }
    /* Bytes no earlier region had start their mean at this count. */
    double mean = r.nr_accesses;
    if (r.end > r.start) {
      guint decayed = (guint) (h->decay * weighted / (double) (r.end - r.start));
      double before = (meant + (double) (r.end - r.start - covered) * r.nr_accesses) /
                      (double) (r.end - r.start);
      mean = h->decay * before + (1.0 - h->decay) * r.nr_accesses;
      r.nr_accesses = MAX (r.nr_accesses, decayed);
    }
    g_array_append_val (next, r);
    g_array_append_val (next_mean, mean);
  }
  g_array_unref (h->held);
  h->held = g_steal_pointer (&next);
  g_array_unref (h->mean);
  h->mean = g_steal_pointer (&next_mean);
  return (const VtRegion *) h->held->data;
}

const VtRegion *
vt_heat_hold_regions (const VtHeatHold *h, guint *n)
{
  *n = h->held->len;
  return (const VtRegion *) h->held->data;
}

const guint *
vt_heat_hold_fresh_accesses (const VtHeatHold *h, guint *n)
{
  *n = h->fresh->len;
  return (const guint *) h->fresh->data;
}

const double *
vt_heat_hold_mean_accesses (const VtHeatHold *h, guint *n)
{
  *n = h->mean->len;
  return (const double *) h->mean->data;
}

double
vt_heat_hold_mean_span (const VtHeatHold *h)
{
  return (1.0 + h->decay) / (1.0 - h->decay);
}
