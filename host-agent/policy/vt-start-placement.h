/* Where the RAM of a VM that cannot move later goes when it starts (issue
 * 19): a VFIO device pins all of it, so its placement at start is the only
 * one it gets. Chosen from its policy and its share of the top tier, in
 * the modes libvirt's numatune has (no weighted interleave there; the
 * patched QEMU's backend policy is the way to a ratio):
 *  - auto: its RAM on the top tier (preferred) when its share holds all of
 *    it; spread over both tiers (interleave) when its share holds at least
 *    half; else on the slow tier (preferred);
 *  - fast-only: preferred on the top tier; slow-only: on the slow tier;
 *    interleave: interleave over both;
 *  - off: nothing is chosen.
 * "preferred" lets the kernel take other nodes when the node is full, so a
 * VM is never refused memory by it. */
#pragma once

#include <glib.h>

#include "policy/vt-fair-share.h"

typedef struct {
  const char *mode; /* libvirt's numatune memory mode: "preferred", "interleave" */
  char *nodeset;    /* "0", "0,1" */
} VtStartPlacement;

/* FALSE when nothing is to be chosen (mode off, or no slow node for a
 * placement that needs one); else *out, whose nodeset the caller frees. */
gboolean vt_start_placement (guint64 ram_bytes, guint64 share, VtTierMode mode, int fast_node,
                             int slow_node, VtStartPlacement *out);
