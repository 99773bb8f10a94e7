/* Each VM's fair share of the top tier (see vt-fair-share.h).
 *
 * The division is weighted max-min fairness with a floor and a ceiling per
 * VM. For a water level L (bytes per unit of weight), VM i's share is
 *     clamp (L * w_i, g_i, d_i)
 * with g_i its guarantee and d_i its effective demand, and L is the highest
 * level whose shares fit in the capacity. A min is therefore a floor, as
 * memory.low is, not a bonus: a VM whose weighted share already exceeds its
 * min gets nothing more for having one.
 *
 * Water filling in rounds reaches the same level; here it is found
 * directly. The sum of shares F(L) is non-decreasing and piecewise linear,
 * with breakpoints at g_i/w_i (VM i starts rising) and d_i/w_i (its demand
 * is met). A binary search over the sorted breakpoints finds the last one
 * that fits; past it, the VMs still rising share what is left in proportion
 * to weight. O(n log n), no rounds, no rounding drift between rounds.
 *
 * Arithmetic is exact: a level is a fraction num/den with num a byte count
 * and den a weight, and levels are compared and shares summed in 128 bits
 * (bytes < 2^64 times weights < 2^32, summed over < 2^32 VMs). Shares are
 * rounded down, so fewer than n bytes may stay unallocated. */
#include "policy/vt-fair-share.h"

#include <stdlib.h>

__extension__ typedef unsigned __int128 Wide;

static const char *const mode_names[] = {
  [VT_TIER_MODE_AUTO] = "auto",
  [VT_TIER_MODE_FAST_ONLY] = "fast-only",
  [VT_TIER_MODE_SLOW_ONLY] = "slow-only",
  [VT_TIER_MODE_OFF] = "off",
  [VT_TIER_MODE_INTERLEAVE] = "interleave",
};

gboolean
vt_tier_mode_parse (const char *text, VtTierMode *out)
{
  g_return_val_if_fail (text != NULL, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);

  for (guint i = 0; i < G_N_ELEMENTS (mode_names); i++)
    if (g_str_equal (text, mode_names[i]))
      {
        *out = (VtTierMode) i;
        return TRUE;
      }
  return FALSE;
}

const char *
vt_tier_mode_name (VtTierMode mode)
{
  g_return_val_if_fail ((guint) mode < G_N_ELEMENTS (mode_names), NULL);
  return mode_names[mode];
}

gboolean
vt_interleave_parse (const char *text, guint *top, guint *slow)
{
  g_return_val_if_fail (text != NULL && top != NULL && slow != NULL, FALSE);
  if (g_str_equal (text, "auto")) {
    *top = *slow = 0;
    return TRUE;
  }
  g_auto (GStrv) parts = g_strsplit (text, ":", -1);
  guint64 a, b;
  if (g_strv_length (parts) != 2 ||
      !g_ascii_string_to_unsigned (parts[0], 10, 1, VT_INTERLEAVE_WEIGHT_MAX, &a, NULL) ||
      !g_ascii_string_to_unsigned (parts[1], 10, 1, VT_INTERLEAVE_WEIGHT_MAX, &b, NULL))
    return FALSE;
  *top = (guint) a, *slow = (guint) b;
  return TRUE;
}

char *
vt_interleave_format (guint top, guint slow)
{
  return top && slow ? g_strdup_printf ("%u:%u", top, slow) : g_strdup ("auto");
}

/* What one VM may get: at least floor (its guarantee), at most ceiling (its
 * effective demand), in between by weight. floor <= ceiling. */
typedef struct {
  guint64 floor;
  guint64 ceiling;
  guint weight;
} Claim;

/* A water level: num / den bytes per unit of weight. */
typedef struct {
  guint64 num;
  guint den;
} Level;

static guint64
effective_demand (const VtShareRequest *r)
{
  guint64 usable = MIN (r->size, r->max);

  switch (r->mode)
    {
    case VT_TIER_MODE_AUTO:
    case VT_TIER_MODE_INTERLEAVE: /* its demand: its ratio's part of what it holds */
      return MIN (r->demand, usable);
    case VT_TIER_MODE_FAST_ONLY:
      return usable;
    case VT_TIER_MODE_SLOW_ONLY:
    case VT_TIER_MODE_OFF:
      return 0; /* off VMs keep their current bytes outside the division */
    }
  return 0;
}

static Claim
claim_of (const VtShareRequest *r)
{
  guint64 demand = effective_demand (r);
  /* Weight 0 is outside the contract (1..10000); count it as 1 rather than
   * divide by it. */
  return (Claim) {
    .floor = MIN (r->min, demand),
    .ceiling = demand,
    .weight = MAX (r->weight, 1u),
  };
}

/* What is left of the capacity once the unmanaged (off) VMs keep what they
 * have; 0 when they already hold more than all of it. */
static guint64
room_after_unmanaged (guint64 capacity, const VtShareRequest *requests, guint n)
{
  guint64 room = capacity;

  for (guint i = 0; i < n; i++)
    if (requests[i].mode == VT_TIER_MODE_OFF)
      room -= MIN (room, requests[i].current);
  return room;
}

/* Mins that together exceed the room shrink in proportion to their size;
 * rounding down keeps their sum within the room. */
static void
fit_guarantees (guint64 room, Claim *claims, guint n)
{
  Wide total = 0;

  for (guint i = 0; i < n; i++)
    total += claims[i].floor;
  if (total <= room)
    return;
  for (guint i = 0; i < n; i++)
    claims[i].floor = (guint64) ((Wide) claims[i].floor * room / total);
}

static int
level_compare (const void *a, const void *b)
{
  const Level *x = a, *y = b;
  Wide left = (Wide) x->num * y->den;
  Wide right = (Wide) y->num * x->den;

  return (left > right) - (left < right);
}

/* The claim's share at `level`, times level.den, so that it is exact. */
static Wide
scaled_share_at (const Claim *c, Level level)
{
  Wide rise = (Wide) level.num * c->weight;
  Wide low = (Wide) c->floor * level.den;
  Wide high = (Wide) c->ceiling * level.den;

  return rise < low ? low : rise > high ? high : rise;
}

static gboolean
level_fits (Level level, guint64 room, const Claim *claims, guint n)
{
  Wide total = 0;

  for (guint i = 0; i < n; i++)
    total += scaled_share_at (&claims[i], level);
  return total <= (Wide) room * level.den;
}

/* Level 0 and each rising claim's two breakpoints, sorted. Level 0 always
 * fits: the guarantees alone fit in the room. */
static Level *
sorted_breakpoints (const Claim *claims, guint n, guint *n_out)
{
  Level *levels = g_new (Level, 2 * (gsize) n + 1);
  guint count = 0;

  levels[count++] = (Level) { 0, 1 };
  for (guint i = 0; i < n; i++)
    if (claims[i].ceiling > claims[i].floor)
      {
        levels[count++] = (Level) { claims[i].floor, claims[i].weight };
        levels[count++] = (Level) { claims[i].ceiling, claims[i].weight };
      }
  qsort (levels, count, sizeof *levels, level_compare);
  *n_out = count;
  return levels;
}

/* The highest breakpoint whose shares fit; F is non-decreasing in the
 * level, so a binary search finds it. */
static guint
last_fitting (const Level *levels, guint count, guint64 room, const Claim *claims, guint n)
{
  guint lo = 0, hi = count; /* levels[lo] fits; levels[hi..] do not */

  while (hi - lo > 1)
    {
      guint mid = lo + (hi - lo) / 2;
      if (level_fits (levels[mid], room, claims, n))
        lo = mid;
      else
        hi = mid;
    }
  return lo;
}

/* At `level`, the claim is above its floor and below its ceiling, so it
 * grows with the level until the next breakpoint. */
static gboolean
rises_at (const Claim *c, Level level)
{
  Wide rise = (Wide) level.num * c->weight;

  return (Wide) c->floor * level.den <= rise && rise < (Wide) c->ceiling * level.den;
}

/* Between `level` and the next breakpoint, which does not fit, the claims
 * that do not rise are pinned at their floor or ceiling; the rising ones
 * share the rest by weight, each below its ceiling and at least its floor. */
static void
share_past_level (Level level, guint64 room, const Claim *claims, guint n, guint64 *shares)
{
  guint64 pinned = 0, rising_weight = 0;

  for (guint i = 0; i < n; i++)
    if (rises_at (&claims[i], level))
      rising_weight += claims[i].weight;
    else
      {
        shares[i] = (guint64) (scaled_share_at (&claims[i], level) / level.den);
        pinned += shares[i];
      }

  /* pinned <= F(level) <= room; rising_weight > 0 since F grows past the
   * level, but guard anyway. */
  guint64 pool = room - MIN (pinned, room);
  for (guint i = 0; i < n; i++)
    if (rises_at (&claims[i], level))
      shares[i] = rising_weight ? (guint64) ((Wide) pool * claims[i].weight / rising_weight) : 0;
}

static void
share_by_level (guint64 room, const Claim *claims, guint n, guint64 *shares)
{
  guint count;
  g_autofree Level *levels = sorted_breakpoints (claims, n, &count);
  guint fit = last_fitting (levels, count, room, claims, n);

  if (fit == count - 1)
    {
      /* Every demand is met; what is left stays free. */
      for (guint i = 0; i < n; i++)
        shares[i] = claims[i].ceiling;
      return;
    }
  share_past_level (levels[fit], room, claims, n, shares);
}

void
vt_fair_share_compute (guint64 capacity, const VtShareRequest *requests, guint n,
                       guint64 *targets)
{
  g_return_if_fail (n == 0 || (requests != NULL && targets != NULL));
  if (n == 0)
    return;

  guint64 room = room_after_unmanaged (capacity, requests, n);
  g_autofree Claim *claims = g_new (Claim, n);
  for (guint i = 0; i < n; i++)
    claims[i] = claim_of (&requests[i]);

  fit_guarantees (room, claims, n);
  share_by_level (room, claims, n, targets);

  for (guint i = 0; i < n; i++)
    if (requests[i].mode == VT_TIER_MODE_OFF)
      targets[i] = requests[i].current;
}
