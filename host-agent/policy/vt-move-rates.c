#include "policy/vt-move-rates.h"

#define HUGE_PAGE (2ull << 20)
/* The weight of a job's speed against the key's so far: a few jobs
 * follow a change (a busy host, a fragmented target), one odd job does
 * not swing it. */
#define NEW_WEIGHT 0.3

struct _VtMoveRates {
  GArray *rates; /* VtMoveRate, sorted by key */
  double all;    /* every key's timed jobs */
};

VtMoveRates *
vt_move_rates_new (void)
{
  VtMoveRates *r = g_new0 (VtMoveRates, 1);
  r->rates = g_array_new (FALSE, FALSE, sizeof (VtMoveRate));
  return r;
}

void
vt_move_rates_free (VtMoveRates *r)
{
  if (!r)
    return;
  g_array_unref (r->rates);
  g_free (r);
}

static int
compare_keys (const VtMoveKey *a, const VtMoveKey *b)
{
  if (a->from != b->from)
    return a->from < b->from ? -1 : 1;
  if (a->to != b->to)
    return a->to < b->to ? -1 : 1;
  return a->page_class < b->page_class ? -1 : a->page_class > b->page_class;
}

/* The index of the key, or where it would go (*found FALSE). */
static guint
find (const VtMoveRates *r, const VtMoveKey *key, gboolean *found)
{
  guint lo = 0, hi = r->rates->len;
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    int c = compare_keys (&g_array_index (r->rates, VtMoveRate, mid).key, key);
    if (c == 0) {
      *found = TRUE;
      return mid;
    }
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  *found = FALSE;
  return lo;
}

static double
weigh (double old, double rate)
{
  return old > 0 ? (1 - NEW_WEIGHT) * old + NEW_WEIGHT * rate : rate;
}

void
vt_move_rates_note (VtMoveRates *r, const VtMoveKey *key, guint64 moved, guint64 cpu_us)
{
  gboolean found;
  guint i = find (r, key, &found);
  if (!found) {
    VtMoveRate fresh = { *key, 0, 0, 0 };
    g_array_insert_val (r->rates, i, fresh);
  }
  VtMoveRate *rate = &g_array_index (r->rates, VtMoveRate, i);
  rate->bytes += moved;
  rate->cpu_us += cpu_us;
  if (moved < HUGE_PAGE || cpu_us == 0)
    return;
  double speed = (double) moved * 1e6 / (double) cpu_us;
  rate->bytes_per_cpu_s = weigh (rate->bytes_per_cpu_s, speed);
  r->all = weigh (r->all, speed);
}

double
vt_move_rates_speed (const VtMoveRates *r, const VtMoveKey *key)
{
  gboolean found;
  guint i = find (r, key, &found);
  double own = found ? g_array_index (r->rates, VtMoveRate, i).bytes_per_cpu_s : 0;
  return own > 0 ? own : r->all;
}

double
vt_move_rates_all (const VtMoveRates *r)
{
  return r->all;
}

guint64
vt_move_rates_job_bytes (const VtMoveRates *r, const VtMoveKey *key, guint64 budget, double cpu_s,
                         guint64 first)
{
  double speed = vt_move_rates_speed (r, key);
  guint64 bytes = speed > 0 ? MIN (budget / 4, (guint64) (speed * cpu_s)) : MIN (budget / 4, first);
  return MAX ((bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1), HUGE_PAGE);
}

GArray *
vt_move_rates_list (const VtMoveRates *r)
{
  GArray *copy = g_array_sized_new (FALSE, FALSE, sizeof (VtMoveRate), r->rates->len);
  g_array_append_vals (copy, r->rates->data, r->rates->len);
  return copy;
}
