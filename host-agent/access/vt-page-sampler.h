/* Page-level access checks for vtierd's own region sampler, for hosts where
 * kernel DAMON cannot be had:
 *   - idle page tracking (page_idle bitmap + /proc/PID/pagemap): the accessed
 *     bit, KVM's included (page_idle's checks go through the MMU notifiers);
 *   - soft-dirty (/proc/PID/clear_refs + pagemap bit 55): writes only.
 * They plug into the region engine as its VtAccessPrimitives, the way DAMON
 * keeps its access checks behind damon_operations. Paths are under the
 * vt_sysfs root, so tests run on fake trees. */
#pragma once

#include <glib.h>

#include "regions/vt-regions.h"

G_BEGIN_DECLS

typedef enum {
  VT_PAGE_CHECK_IDLE,       /* accessed bit, through page_idle */
  VT_PAGE_CHECK_SOFT_DIRTY, /* written, through soft-dirty */
} VtPageCheck;

const char *vt_page_check_name (VtPageCheck check); /* "page-idle", "soft-dirty" */

/* Whether this host offers the check; the error says why not. */
gboolean vt_page_sampler_available (VtPageCheck check, GError **error);

typedef struct _VtPageSampler VtPageSampler;

VtPageSampler *vt_page_sampler_new (VtPageCheck check, GPid pid, GError **error);
void vt_page_sampler_free (VtPageSampler *sampler);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtPageSampler, vt_page_sampler_free)

/* The primitives; their `data` is the VtPageSampler. A failure inside them
 * (the process exited, a read failed) marks every region unaccessed and is
 * kept: see vt_page_sampler_take_error(). */
extern const VtAccessPrimitives vt_page_sampler_primitives;

/* The first failure since the last call, or NULL; the caller owns it. */
GError *vt_page_sampler_take_error (VtPageSampler *sampler);

G_END_DECLS
