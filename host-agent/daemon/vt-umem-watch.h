/* A VM's af-xdp packet buffers (UMEMs): asked of its QEMU with
 * x-query-af-xdp-umems (qemu-patches/0006) each time its residency is
 * read, since a netdev can come and go with netdev_add/netdev_del; where
 * they sit per host node, page by page. The kernel pins them
 * for the NIC, so vtierd only reports them (pinned I/O buffers), and its
 * plans never see them: they are not guest RAM. */
#pragma once

#include <glib.h>

#include "discovery/vt-qmp.h"

G_BEGIN_DECLS

typedef struct _VtUmemWatch VtUmemWatch;

VtUmemWatch *vt_umem_watch_new (VtQmp *qmp, const char *vm_name, GPid pid);
void vt_umem_watch_free (VtUmemWatch *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtUmemWatch, vt_umem_watch_free)

/* Asks QEMU again (not once it said it lacks the command); the answer is
 * checked against the process's maps and measured from its numa_maps. */
void vt_umem_watch_refresh (VtUmemWatch *w);

/* As of the last answer: the UMEMs' bytes, on each host node (a{ut}), and
 * why there is no answer ("" when there is one, or QEMU lacks the
 * command: then unsupported is TRUE). */
guint64 vt_umem_watch_bytes (VtUmemWatch *w);
GVariant *vt_umem_watch_node_bytes (VtUmemWatch *w);
guint vt_umem_watch_count (VtUmemWatch *w);
const char *vt_umem_watch_error (VtUmemWatch *w);
gboolean vt_umem_watch_unsupported (VtUmemWatch *w);

G_END_DECLS
