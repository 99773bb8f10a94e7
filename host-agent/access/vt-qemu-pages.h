/* QEMU's own memory: what a QEMU process maps outside its guest RAM (its
 * heap, thread stacks, device state, VGA memory, private file pages:
 * 27-28 MiB a VM in the testbed of pages QEMU alone maps, 45-54 MiB with
 * shared library pages). Its
 * VM's kdamond watches it beside the RAM (vt_damon_set_beside); this says
 * which ranges, and which pages in them QEMU holds.
 *
 * Its ranges: the private, readable or writable mappings but for kernel
 * objects (anon_inode:, /dev/, [vdso], [vvar]), outside the guest RAM and
 * a page away from it, neighbours joined across gaps of up to 2 MiB and
 * then, smallest gap first (up to 1 GiB), down to VT_QEMU_PAGES_MAX_RANGES. Its pages:
 * those present and mapped by QEMU alone (pagemap's exclusive bit:
 * move_pages(MPOL_MF_MOVE) refuses the others). Paths are under the
 * vt_sysfs root (tests run on fake trees). */
#pragma once

#include <glib.h>

#include "regions/vt-regions.h"

G_BEGIN_DECLS

#define VT_QEMU_PAGES_MAX_RANGES 8

/* The ranges of process `pid`'s own memory, outside `ram` (n sorted,
 * disjoint ranges), as a sorted GArray of VtAddrRange. VT_ERROR_GONE
 * without the process. */
GArray *vt_qemu_pages_ranges (GPid pid, const VtAddrRange *ram, guint n, GError **error);

typedef struct _VtQemuPages VtQemuPages;

VtQemuPages *vt_qemu_pages_new (GPid pid, GError **error);
void vt_qemu_pages_free (VtQemuPages *pages);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtQemuPages, vt_qemu_pages_free)

/* The addresses (guint64, sorted) of its pages present and mapped by it
 * alone in `ranges` (n sorted ranges). VT_ERROR_GONE once it exited. */
GArray *vt_qemu_pages_list (VtQemuPages *pages, const VtAddrRange *ranges, guint n,
                            GError **error);

G_END_DECLS
