/* Each VM's share of the top tier: weighted max-min fair over measured hot
 * demand, with min honored first (a guarantee, like memory.low: protection
 * of what it uses, not a reservation of what it does not), max as a cap
 * (like memory.high), and work-conserving (what one VM does not need goes to
 * the others). Pure arithmetic: no I/O. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  VT_TIER_MODE_AUTO,      /* hot memory up, cold memory down, by share */
  VT_TIER_MODE_FAST_ONLY, /* all of its RAM wants the top tier (demand = size) */
  VT_TIER_MODE_SLOW_ONLY, /* none of it: target 0 */
  VT_TIER_MODE_OFF,       /* not managed: its top-tier bytes stay, and count as used */
  VT_TIER_MODE_INTERLEAVE, /* its memory over the tiers in a ratio, whatever its heat
                            * (demand = that part of its resident bytes) */
} VtTierMode;

gboolean vt_tier_mode_parse (const char *text, VtTierMode *out);
/* "auto", "fast-only", "slow-only", "off", "interleave" */
const char *vt_tier_mode_name (VtTierMode mode);

/* Mode interleave's ratio of a VM's memory on the top and the slow tier:
 * "TOP:SLOW", each 1..1000 (e.g. "3:1"), or "auto" (0:0), for the ratio of
 * the tiers' bandwidths (HMAT). */
#define VT_INTERLEAVE_WEIGHT_MAX 1000
gboolean vt_interleave_parse (const char *text, guint *top, guint *slow);
char *vt_interleave_format (guint top, guint slow);

typedef struct {
  guint weight;      /* 1..10000 */
  guint64 min;       /* top-tier bytes guaranteed (0: none) */
  guint64 max;       /* top-tier cap (G_MAXUINT64: none) */
  VtTierMode mode;
  guint64 size;      /* its guest RAM: it can never use more */
  guint64 demand;    /* measured hot bytes (auto mode) */
  guint64 current;   /* its bytes in the top tier now (used for mode off) */
} VtShareRequest;

/* targets[i] = VM i's top-tier bytes, for `capacity` bytes of top tier to
 * divide (top-tier memory minus the host reserve). Guarantees:
 *  - off: target = current, and it is taken from the capacity first;
 *  - slow-only: 0; fast-only: demand is its size;
 *  - every target <= min(max, size) and, in auto, <= demand unless
 *    capacity is left after every demand is met (then nothing more is given:
 *    free top-tier memory stays free for whoever heats up next);
 *  - min first: each VM gets min(min, its demand) before any weighted share;
 *    when the mins alone exceed the capacity they are scaled down in
 *    proportion to min;
 *  - the rest is shared in proportion to weight among VMs whose demand is
 *    not met, in rounds (water filling) until capacity or demand runs out;
 *  - the sum of targets <= capacity (plus off VMs' current). */
void vt_fair_share_compute (guint64 capacity, const VtShareRequest *requests, guint n,
                            guint64 *targets);

G_END_DECLS
