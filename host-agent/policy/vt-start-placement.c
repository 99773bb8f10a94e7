/* The start placement of a VM whose RAM cannot move. See vt-start-placement.h. */

#include "policy/vt-start-placement.h"

static gboolean
preferred (int node, VtStartPlacement *out)
{
  if (node < 0)
    return FALSE;
  *out = (VtStartPlacement) { "preferred", g_strdup_printf ("%d", node) };
  return TRUE;
}

static gboolean
interleave (int fast, int slow, VtStartPlacement *out)
{
  if (fast < 0 || slow < 0)
    return FALSE;
  *out = (VtStartPlacement) { "interleave", g_strdup_printf ("%d,%d", MIN (fast, slow),
                                                              MAX (fast, slow)) };
  return TRUE;
}

gboolean
vt_start_placement (guint64 ram_bytes, guint64 share, VtTierMode mode, int fast_node,
                    int slow_node, VtStartPlacement *out)
{
  switch (mode) {
  case VT_TIER_MODE_OFF:
    return FALSE;
  case VT_TIER_MODE_FAST_ONLY:
    return preferred (fast_node, out);
  case VT_TIER_MODE_SLOW_ONLY:
    return preferred (slow_node, out);
  case VT_TIER_MODE_INTERLEAVE:
    return interleave (fast_node, slow_node, out);
  case VT_TIER_MODE_AUTO:
    break;
  }
  if (share >= ram_bytes || slow_node < 0)
    return preferred (fast_node, out);
  if (share >= ram_bytes / 2)
    return interleave (fast_node, slow_node, out);
  return preferred (slow_node, out);
}
