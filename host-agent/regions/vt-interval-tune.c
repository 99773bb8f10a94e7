#include "regions/vt-interval-tune.h"

#include <math.h>
#include <string.h>

struct _VtIntervalTune {
  guint scale, min_scale, max_scale;
  guint seen;            /* aggregations in this window */
  double weighted, bytes; /* over the window: sum of nr * bytes, bytes, of accessed regions */
  double top_weighted, top_bytes; /* ... of each aggregation's hottest tenth of them */
  /* The last window's mean heat of its accessed regions' hottest tenth, of
   * the last window that had any; < 0: none yet. */
  double last_top;
  GArray *bytes_by_heat; /* add_hottest_tenth's, kept from one to the next */
  /* The last window's halving: the scale it halved from (0: none) and the
   * mean that asked for it. `plateau`: the longest scale of the run of
   * halvings that bought no spread up to the current one (0: none). At the
   * floor with a plateau, the scale goes back to it and stays there for
   * `floor_windows` windows. */
  guint trial_from, plateau;
  double trial_mean;
  guint saturated_floor, floor_windows;
  gboolean starved; /* vt_interval_tune_starved, held from window to window */
  guint asked; /* the scale the last window asked for, if it asked for a change (else 0) */
  /* vt_interval_tune_aim_long's: the hot threshold (0: off); this window's
   * sum over its aggregations of the bytes reading it, and of all bytes;
   * the windows since the scale last changed and their mean hot bytes
   * (the first window after a change left out: the regions settle). */
  guint aim_hot;
  double hot_sum, total;
  guint at_windows;
  double at_hot;
  /* Climbing: the band's scale it climbed from (0: at it) and the hot
   * bytes read there; windows left before the next try (after a step
   * that grew the hot bytes). */
  guint climb_from;
  double climb_hot;
  guint climb_hold;
  guint climb_step_from; /* the last step's scale, until this one is judged (0: judged) */
};

/* A window begins at `scale`: nothing observed in it yet. */
static void
new_window (VtIntervalTune *t, guint scale)
{
  guint was = t->scale;
  t->scale = CLAMP (scale, t->min_scale, t->max_scale);
  t->seen = 0;
  t->weighted = t->bytes = t->top_weighted = t->top_bytes = t->hot_sum = t->total = 0;
  if (t->scale != was) {
    t->at_windows = 0;
    t->at_hot = 0;
  }
  if (t->scale < t->max_scale)
    t->starved = FALSE;
}

VtIntervalTune *
vt_interval_tune_new (guint max_scale)
{
  VtIntervalTune *t = g_new0 (VtIntervalTune, 1);
  t->scale = t->min_scale = 1;
  t->max_scale = MAX (max_scale, 1);
  t->last_top = -1;
  t->bytes_by_heat = g_array_new (FALSE, TRUE, sizeof (double));
  return t;
}

void
vt_interval_tune_free (VtIntervalTune *t)
{
  if (!t)
    return;
  g_array_unref (t->bytes_by_heat);
  g_free (t);
}

/* Adds the hottest tenth of an aggregation's accessed bytes to the window:
 * their bytes by heat (at most max_accesses), taken hottest first. */
static void
add_hottest_tenth (VtIntervalTune *t, const VtRegion *regions, guint n, double accessed,
                   guint max_accesses)
{
  g_array_set_size (t->bytes_by_heat, max_accesses + 1);
  double *by_heat = (double *) (void *) t->bytes_by_heat->data;
  memset (by_heat, 0, (max_accesses + 1) * sizeof *by_heat);
  for (guint i = 0; i < n; i++) {
    const VtRegion *r = &regions[i];
    if (r->nr_accesses > 0)
      by_heat[MIN (r->nr_accesses, max_accesses)] += (double) (r->end - r->start);
  }
  double want = accessed / VT_INTERVAL_TUNE_TOP;
  for (guint heat = max_accesses; heat > 0 && want > 0; heat--) {
    double bytes = MIN (by_heat[heat], want);
    t->top_weighted += bytes * heat;
    t->top_bytes += bytes;
    want -= bytes;
  }
}

/* vt_interval_tune_aim_long's step, at a window's end: the scale after
 * it, given the band's `band_next`. `settled`: a judgment over windows,
 * which needs no second window to confirm it. */
static guint
aim_long_next (VtIntervalTune *t, guint band_next, double mean, gboolean *settled)
{
  double hot = t->hot_sum / t->seen, total = t->total / t->seen;
  /* The first window at a scale is left out (its regions were split and
   * merged at the last one); then the mean of about the last two. */
  if (++t->at_windows == 2)
    t->at_hot = hot;
  else if (t->at_windows > 2)
    t->at_hot = (t->at_hot + hot) / 2;
  gboolean judged = t->at_windows > VT_INTERVAL_TUNE_AIM_WINDOWS;
  if (t->climb_hold)
    t->climb_hold--;
  if (!t->climb_from) {
    /* At the band's scale, the band decides; when it asks for nothing and
     * what is in use reads in it or over, one step up. */
    if (band_next != t->scale || !judged || t->climb_hold || t->scale >= t->max_scale ||
        mean < VT_INTERVAL_TUNE_LOW)
      return band_next;
    t->climb_from = t->climb_step_from = t->scale;
    t->climb_hot = t->at_hot;
    *settled = TRUE;
    return MIN (t->scale * 2, t->max_scale);
  }
  /* Over the band's scale the counts read higher, which is the point: the
   * band's halving is not taken. Under its floor, what is in use reads
   * too slowly even here: its doubling is, and becomes the band's scale. */
  if (mean < VT_INTERVAL_TUNE_LOW && band_next > t->scale) {
    t->climb_from = t->climb_step_from = 0;
    return band_next;
  }
  if (!judged)
    return t->scale;
  *settled = TRUE;
  if (t->at_hot > t->climb_hot + t->climb_hot / 8 + total / 64) {
    /* More reads hot here than at the band's scale: here the threshold
     * means another thing. Just stepped up: back one step (warm memory
     * read hot at the longer one). Held here a while: the guest's use
     * changed, and is measured again at the band's scale. */
    guint back = t->climb_step_from ? t->climb_step_from : t->climb_from;
    if (back == t->climb_from)
      t->climb_from = 0;
    t->climb_step_from = 0;
    t->climb_hold = VT_INTERVAL_TUNE_AIM_HOLD;
    return back;
  }
  t->climb_step_from = 0;
  if (t->climb_hold || t->scale >= t->max_scale)
    return t->scale;
  t->climb_step_from = t->scale;
  return MIN (t->scale * 2, t->max_scale);
}

guint
vt_interval_tune_observe (VtIntervalTune *t, const VtRegion *regions, guint n, guint max_accesses)
{
  if (t->max_scale == 1 || max_accesses == 0)
    return 0;
  double accessed = 0;
  for (guint i = 0; i < n; i++) {
    double bytes = (double) (regions[i].end - regions[i].start);
    t->total += bytes;
    if (t->aim_hot && regions[i].nr_accesses >= t->aim_hot)
      t->hot_sum += bytes;
    if (regions[i].nr_accesses == 0)
      continue;
    t->weighted += bytes * MIN (regions[i].nr_accesses, max_accesses);
    accessed += bytes;
  }
  t->bytes += accessed;
  if (accessed > 0)
    add_hottest_tenth (t, regions, n, accessed, max_accesses);
  if (++t->seen < MAX (1, VT_INTERVAL_TUNE_WINDOW / t->scale))
    return 0;

  double mean = t->bytes > 0 ? t->weighted / (t->bytes * max_accesses) : 0.0;
  /* A window with nothing accessed says nothing of how the memory in use
   * reads: the last one that had some stands. */
  double last_top = t->top_bytes > 0 ? t->top_weighted / (t->top_bytes * max_accesses)
                                     : t->last_top;
  if (t->floor_windows && --t->floor_windows == 0)
    t->saturated_floor = 0;
  if (t->trial_from && mean > t->trial_mean - VT_INTERVAL_TUNE_GAIN)
    t->plateau = t->plateau ? t->plateau : t->trial_from;
  else if (t->trial_from)
    t->plateau = 0;
  guint floor = MAX (t->min_scale, t->saturated_floor);
  guint next = t->scale;
  gboolean settled = FALSE; /* a change a run of windows asked for */
  if (mean < VT_INTERVAL_TUNE_LOW && t->scale < t->max_scale) {
    next = MIN (t->scale * 2, t->max_scale);
    t->plateau = 0;
  } else if (mean > VT_INTERVAL_TUNE_HIGH && t->scale > floor) {
    next = MAX (t->scale / 2, floor);
  } else if (mean > VT_INTERVAL_TUNE_HIGH && t->plateau > t->scale) {
    /* At the floor, and every halving since the plateau read as saturated
     * as before: what is in use is touched faster than any of these
     * intervals (or its huge page is), and ranking it at the shortest
     * costs the most and tells no more. Back to the longest of them. */
    next = t->saturated_floor = t->plateau;
    settled = TRUE;
    t->floor_windows = VT_INTERVAL_TUNE_FLOOR_WINDOWS;
    t->plateau = 0;
  } else if (mean <= VT_INTERVAL_TUNE_HIGH) {
    t->plateau = 0; /* in the band: no run of saturated halvings */
  }
  if (t->aim_hot)
    next = aim_long_next (t, next, mean, &settled);
  /* A change waits for a second window in a row to ask for it. One
   * window can be one aggregation (at 4x and up), and the few regions a
   * near-idle VM touches make its mean noisy: in the tracking bench such a
   * VM swung 4x -> 32x -> 4x within a minute, its kdamond's CPU 10x apart
   * from one end to the other. */
  guint asked = next != t->scale && !settled ? next : 0;
  if (asked && asked != t->asked)
    next = t->scale;
  t->asked = next != t->scale ? 0 : asked;
  guint was = t->scale;
  new_window (t, next);
  t->trial_from = next < was ? was : 0;
  t->trial_mean = mean;
  t->last_top = last_top;
  /* Starved from under the band, and no longer only from well within it:
   * a hot set whose hottest tenth reads about a quarter of the maximum
   * at the longest intervals read under and in by turns, and the hot
   * threshold halved and came back with it (see the header). Judged on
   * a window read at the longest scale: the one that brought it there
   * read under the band at the scale before, and said nothing of this. */
  if (t->scale < t->max_scale || was < t->max_scale || last_top < 0)
    t->starved = FALSE;
  else if (last_top < VT_INTERVAL_TUNE_LOW)
    t->starved = TRUE;
  else if (last_top >= VT_INTERVAL_TUNE_FED)
    t->starved = FALSE;
  return next != was ? next : 0;
}

gboolean
vt_interval_tune_starved (const VtIntervalTune *t)
{
  return t->starved; /* set only at a window's end at the longest scale, cleared below it */
}

guint
vt_interval_tune_scale (const VtIntervalTune *t)
{
  return t->scale;
}

guint
vt_interval_tune_set_min (VtIntervalTune *t, guint min_scale)
{
  t->min_scale = CLAMP (min_scale, 1, t->max_scale);
  if (t->scale >= t->min_scale)
    return 0;
  vt_interval_tune_reset (t, t->min_scale);
  return t->scale;
}

guint
vt_interval_tune_aim_long (VtIntervalTune *t, guint hot_threshold)
{
  t->aim_hot = hot_threshold;
  t->climb_hold = 0;
  if (hot_threshold || !t->climb_from)
    return 0;
  guint was = t->scale;
  t->trial_from = t->plateau = t->asked = 0;
  new_window (t, t->climb_from);
  t->climb_from = t->climb_step_from = 0;
  return t->scale != was ? t->scale : 0;
}

gboolean
vt_interval_tune_aiming_long (const VtIntervalTune *t)
{
  return t->aim_hot != 0;
}

guint
vt_interval_tune_climbed_from (const VtIntervalTune *t)
{
  return t->climb_from;
}

guint
vt_interval_tune_count_at (guint count, guint max, guint scale, guint ref)
{
  if (max == 0 || scale == 0 || ref == 0 || scale == ref)
    return count;
  double untouched = pow (1.0 - (double) MIN (count, max) / max, (double) scale / ref);
  guint k = (guint) ceil ((1.0 - untouched) * max - 1e-9);
  return CLAMP (k, 1, max);
}

void
vt_interval_tune_reset (VtIntervalTune *t, guint scale)
{
  t->trial_from = t->plateau = t->saturated_floor = t->floor_windows = t->asked = 0;
  t->climb_from = t->climb_hold = t->climb_step_from = 0;
  t->starved = FALSE;
  new_window (t, scale);
}
