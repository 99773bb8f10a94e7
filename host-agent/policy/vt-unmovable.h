/* Memory of a VM the kernel would not move, by range and reason, held for
 * a while so that rounds do not spend their budget asking again: pages
 * mapped by another process too (move_pages' EACCES: MPOL_MF_MOVE moves
 * only pages the process alone maps; vhost-user back ends, a second
 * mapper of a shared file), and pages still busy after every retry (a
 * long-term pin: VFIO, an I/O buffer, an AF_XDP UMEM). */
#pragma once

#include <glib.h>

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

/* `bytes` of [start, end) would not move up (`promote`) or down, for
 * `reason`. Once the range has been noted so `strikes` times in a row
 * (1: at once) it is held out until until_us (monotonic), counted from
 * its last note. A range noted again keeps the newest figures. */
void vt_unmovable_note (VtUnmovable *u, guint64 start, guint64 end, gboolean promote,
                        guint64 bytes, VtUnmovableReason reason, guint strikes, gint64 until_us);
/* [start, end) moved that way with nothing left behind: forget it. */
void vt_unmovable_clear (VtUnmovable *u, guint64 start, guint64 end, gboolean promote);
/* Of [start, end), the bytes held unmovable that way now (a range that
 * overlaps it in part counts in proportion). */
guint64 vt_unmovable_bytes_in (VtUnmovable *u, guint64 start, guint64 end, gboolean promote,
                               gint64 now);
/* All of it held now, either way; *main the reason of the most of it. */
guint64 vt_unmovable_total (VtUnmovable *u, gint64 now, VtUnmovableReason *main);

G_END_DECLS
