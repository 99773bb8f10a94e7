#include "policy/vt-bounce.h"

#include <math.h>

typedef struct {
  guint64 start, end;
  gint64 at_us;
} Promoted;

struct _VtBounce {
  gint64 window_us, half_life_us;
  GArray *recent;            /* Promoted, oldest first */
  double promoted, bounced;  /* bytes, decayed to decayed_us */
  gint64 decayed_us;
};

VtBounce *
vt_bounce_new (gint64 window_us, gint64 half_life_us)
{
  VtBounce *b = g_new0 (VtBounce, 1);
  b->window_us = window_us;
  b->half_life_us = MAX (half_life_us, 1);
  b->recent = g_array_new (FALSE, FALSE, sizeof (Promoted));
  return b;
}

void
vt_bounce_free (VtBounce *b)
{
  if (!b)
    return;
  g_array_unref (b->recent);
  g_free (b);
}

/* Both counts decayed to `now_us`, and ranges older than the window gone. */
static void
age (VtBounce *b, gint64 now_us)
{
  if (now_us > b->decayed_us) {
    double f = exp2 (-(double) (now_us - b->decayed_us) / (double) b->half_life_us);
    b->promoted *= f, b->bounced *= f;
    b->decayed_us = now_us;
  }
  guint old = 0;
  while (old < b->recent->len &&
         g_array_index (b->recent, Promoted, old).at_us + b->window_us < now_us)
    old++;
  g_array_remove_range (b->recent, 0, old);
}

/* Cuts [start, end) out of the ranges promoted within the window, and
 * returns how many of their bytes it cut: each promoted byte bounces at
 * most once, however often its range goes down again (it went down once,
 * came up into spare room, not at share, and went down again: the log read
 * "bounced 141 of 126 MiB", more than promoted). */
static guint64
cut (VtBounce *b, guint64 start, guint64 end)
{
  /* Most calls overlap nothing (vt-tiering.c asks of every cold range on
   * the top tier, every round): the copy starts at the first overlap. */
  guint64 cut_bytes = 0;
  GArray *kept = NULL;
  for (guint i = 0; i < b->recent->len; i++) {
    Promoted p = g_array_index (b->recent, Promoted, i);
    guint64 lo = MAX (p.start, start), hi = MIN (p.end, end);
    if (hi <= lo) {
      if (kept)
        g_array_append_val (kept, p);
      continue;
    }
    if (!kept) {
      kept = g_array_sized_new (FALSE, FALSE, sizeof (Promoted), b->recent->len + 1);
      g_array_append_vals (kept, b->recent->data, i);
    }
    cut_bytes += hi - lo;
    Promoted before = { p.start, lo, p.at_us }, after = { hi, p.end, p.at_us };
    if (before.end > before.start)
      g_array_append_val (kept, before);
    if (after.end > after.start)
      g_array_append_val (kept, after);
  }
  if (kept) {
    g_array_unref (b->recent);
    b->recent = kept; /* still oldest first: the pieces keep their times */
  }
  return cut_bytes;
}

void
vt_bounce_promoted (VtBounce *b, guint64 start, guint64 end, guint64 bytes, gint64 now_us)
{
  age (b, now_us);
  if (bytes == 0 || end <= start)
    return;
  cut (b, start, end); /* promoted again: its window starts anew */
  Promoted p = { start, end, now_us };
  g_array_append_val (b->recent, p);
  b->promoted += (double) bytes;
}

void
vt_bounce_demoted (VtBounce *b, guint64 start, guint64 end, guint64 bytes, gint64 now_us)
{
  age (b, now_us);
  guint64 overlap = cut (b, start, end); /* once: MIN () would cut twice */
  b->bounced += (double) MIN (bytes, overlap);
}

gboolean
vt_bounce_high (VtBounce *b, guint64 min_bytes, gint64 now_us)
{
  age (b, now_us);
  return b->bounced >= (double) min_bytes && b->bounced * 4 >= b->promoted;
}

void
vt_bounce_counts (VtBounce *b, gint64 now_us, guint64 *promoted, guint64 *bounced)
{
  age (b, now_us);
  *promoted = (guint64) b->promoted, *bounced = (guint64) b->bounced;
}
