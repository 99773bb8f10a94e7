/* `vtierctl xml`: a libvirt domain XML rewritten so that the guest's memory
 * is two NUMA cells, one in each host tier, and vtierd can move pages
 * between them:
 *
 * - <cpu><numa>: cell 0 with every vCPU and the fast share of <memory>,
 *   cell 1 without CPUs (libvirt >= 6.6) with the rest; an existing <numa>
 *   is replaced, the <cpu> element's other attributes and children kept
 *   (a missing <cpu> is added, mode='host-passthrough' for kvm domains).
 * - <interconnects> in <numa>: latency (ns) and bandwidth (KiB/s) from
 *   initiator 0 to each cell, the host's HMAT figures of the cell's nodes
 *   (the worst of them when a cell has several); left out, with a note,
 *   when the host has none.
 * - <numatune>: each cell's memory preferred (not bound) on its nodes. No
 *   <memory> element: a strict one on the CPU-less node keeps the domain
 *   from starting ("cannot set CPU affinity"), and any that narrows the
 *   QEMU process's cpuset mems to one tier makes move_pages to the other
 *   fail with EACCES.
 * - <vcpu cpuset> and <cputune><emulatorpin cpuset>: the fast nodes' CPUs,
 *   unless the input sets them (needed once the slow node has no CPUs).
 * - the vtier guest channel (see common/vt-guest-channel.h), unless there.
 * - the vtier <metadata> element with the default policy and these fast
 *   and slow nodes, unless the domain has vtier metadata already. */
#pragma once

#include <glib.h>

#include "common/vt-guest-channel.h"
#include "policy/vt-tiers.h"

/* How <memory> is split: the fast cell's (or with `slow`, the slow cell's)
 * share as a percentage of <memory> or in bytes. A percentage is rounded
 * down to whole 2 MiB (the unit of THP-backed memory); bytes must be whole
 * KiB. The default is 50% fast. */
typedef struct {
  gboolean slow;
  gboolean percent;
  guint64 amount; /* percent 1..99, or bytes */
} VtCellSplit;

#define VT_CELL_SPLIT_DEFAULT ((VtCellSplit) { FALSE, TRUE, 50 })

/* "25%" or a size ("512M", "2G", bytes). */
gboolean vt_cell_split_parse (const char *text, gboolean slow, VtCellSplit *out, GError **error);

typedef struct {
  VtCellSplit split;
  GArray *fast_nodes, *slow_nodes; /* host nodes (guint); NULL: by tier */
} VtDomainXmlOptions;

/* The rewritten domain XML. `tiers` are the host's; fast nodes default to
 * its top tier, slow nodes to the others. `notes` (may be NULL) gets what
 * the user should know that is not an error (no HMAT figures, a replaced
 * <numa> or <numatune>). Errors (VT_ERROR_INVALID) name the problem: not
 * XML, no <memory>, a split that leaves a cell empty, nodes the host does
 * not have, a domain with more than one cell with CPUs. */
char *vt_domain_xml_tier (const char *domain_xml, const VtHostTiers *tiers,
                          const VtDomainXmlOptions *options, GPtrArray *notes, GError **error);
