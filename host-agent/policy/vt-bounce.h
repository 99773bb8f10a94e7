/* A VM's promotions that came back down: the bytes it promoted while it
 * held its share (each piece taking the place of memory of its own), and
 * how many of those it demoted again within a window. A high share of
 * them bounced says its promotions at share chase heat that passes (a
 * scan: a checksum pass, a backup, its kernel's), and each cost two
 * moves for nothing; vt-tiering.c then asks its promotions at share for
 * lasting use. Both counts decay (a half-life), so that what a VM did a
 * while ago weighs less than what it does now. Pure arithmetic over the
 * times it is given: no clock, no I/O. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _VtBounce VtBounce;

/* `window_us`: how long a promoted range counts as just promoted;
 * `half_life_us`: how fast both counts decay. */
VtBounce *vt_bounce_new (gint64 window_us, gint64 half_life_us);
void vt_bounce_free (VtBounce *bounce);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtBounce, vt_bounce_free)

/* `bytes` of [start, end) went up at `now_us`, the VM at its share. */
void vt_bounce_promoted (VtBounce *bounce, guint64 start, guint64 end, guint64 bytes,
                         gint64 now_us);
/* `bytes` of [start, end) went down at `now_us`, or read cold where they
 * went up (they will go down, or hold the top tier for nothing): as much
 * of them as the range overlaps ranges promoted within the window count
 * as bounced, each promoted byte once (until it is promoted again). */
void vt_bounce_demoted (VtBounce *bounce, guint64 start, guint64 end, guint64 bytes,
                        gint64 now_us);
/* Whether at least `min_bytes` bounced lately, and at least a quarter of
 * what it promoted at share (both as decayed to `now_us`). */
gboolean vt_bounce_high (VtBounce *bounce, guint64 min_bytes, gint64 now_us);
/* Both counts, as decayed to `now_us` (for the log). */
void vt_bounce_counts (VtBounce *bounce, gint64 now_us, guint64 *promoted, guint64 *bounced);

G_END_DECLS
