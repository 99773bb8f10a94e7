/* A VM's tiering policy: its weight in the contended top tier, the bytes it
 * is guaranteed there and its cap, and its mode. Here in policy/ (not in the
 * daemon's config) so that what reads a policy from elsewhere, such as the
 * domain XML's vtier metadata, does not depend on the daemon. */
#pragma once

#include <glib.h>

#include "policy/vt-fair-share.h"

typedef struct {
  guint weight;      /* 1..10000 */
  guint64 min, max;  /* top-tier bytes; max G_MAXUINT64: no cap */
  VtTierMode mode;
  /* mode interleave: its top:slow ratio (vt_interleave_parse); 0:0 auto */
  guint interleave_top, interleave_slow;
} VtVmPolicy;

#define VT_VM_POLICY_WEIGHT_MAX 10000

static inline gboolean
vt_vm_policy_equal (const VtVmPolicy *p, const VtVmPolicy *q)
{
  return p->weight == q->weight && p->min == q->min && p->max == q->max && p->mode == q->mode &&
         p->interleave_top == q->interleave_top && p->interleave_slow == q->interleave_slow;
}
#define VT_VM_POLICY_DEFAULT ((VtVmPolicy) { 100, 0, G_MAXUINT64, VT_TIER_MODE_AUTO, 0, 0 })
