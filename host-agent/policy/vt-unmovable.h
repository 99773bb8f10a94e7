/* Memory of a VM the kernel would not move, by range and reason, held for
 * a while so that rounds do not spend their budget asking again (or, for
 * pages a measurement found shared, at all): pages
 * mapped by another process too (move_pages' EACCES: MPOL_MF_MOVE moves
 * only pages the process alone maps; vhost-user back ends, a second
 * mapper of a shared file), and pages still busy after every retry (a
 * long-term pin: VFIO, an I/O buffer, an AF_XDP UMEM). */
#pragma once

#include <glib.h>

#include "migration/vt-migrate.h"

G_BEGIN_DECLS

typedef enum {
  VT_UNMOVABLE_NONE,
  VT_UNMOVABLE_SHARED, /* mapped by another process too */
  VT_UNMOVABLE_PINNED, /* busy in every try: pinned, or in I/O for good */
  VT_UNMOVABLE_DEVICE, /* all of its RAM, pinned by a device (VFIO) */
} VtUnmovableReason;

const char *vt_unmovable_reason_name (VtUnmovableReason reason); /* "", "shared", "pinned" */
/* For a person: why it cannot move. */
const char *vt_unmovable_reason_describe (VtUnmovableReason reason);

typedef struct _VtUnmovable VtUnmovable;

VtUnmovable *vt_unmovable_new (void);
void vt_unmovable_free (VtUnmovable *u);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtUnmovable, vt_unmovable_free)

/* A move that way (`promote`) asked for the pages of [start, walked_end)
 * and the kernel refused `runs` (VtMigrateStats.refused). By address, not
 * by the move's range: ranges are regions', and regions split and merge.
 * A shared run is held out at once; a busy run once it has been refused in
 * `pinned_strikes` moves in a row; held until until_us (monotonic). The
 * notes of the walked range not held yet are replaced: a page it moved
 * starts its count again. */
void vt_unmovable_note (VtUnmovable *u, guint64 start, guint64 walked_end, gboolean promote,
                        const VtMigrateRefused *runs, guint n_runs, guint pinned_strikes,
                        gint64 until_us);
/* The VM's pages another process maps too, as its last measurement read
 * them (vt_placement_collect_shared), held out until the next one or
 * until_us: no move asks for them, where a refusal would tell of each
 * piece only once a move had asked. `up`: those on slow nodes (held out
 * of promotion), `down`: on top nodes (of demotion); VtMigrateSpan,
 * sorted, not overlapping; taken, NULL for none. The refusals noted as
 * shared within them are what these say now, and go. */
void vt_unmovable_set_shared (VtUnmovable *u, GArray *up, GArray *down, gint64 until_us);
/* Of [start, end), the bytes held unmovable that way now (a run that
 * overlaps it in part counts in proportion). */
guint64 vt_unmovable_bytes_in (VtUnmovable *u, guint64 start, guint64 end, gboolean promote,
                               gint64 now);
/* The runs held that way now within [start, end), cut to it, by address
 * (VtMigrateSpan: what a move leaves out); NULL for none. */
GArray *vt_unmovable_spans_in (VtUnmovable *u, guint64 start, guint64 end, gboolean promote,
                               gint64 now);
/* All of it held now, either way; *main the reason of the most of it. */
guint64 vt_unmovable_total (VtUnmovable *u, gint64 now, VtUnmovableReason *main);

G_END_DECLS
