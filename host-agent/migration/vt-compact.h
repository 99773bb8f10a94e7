/* Asking the kernel to compact a node's memory (nodeN/compact,
 * CONFIG_COMPACTION): it moves movable pages within the node so that its
 * free memory forms whole 2 MiB blocks, where a transparent huge page can
 * move to without being split. The kernel works for as long as that takes
 * (it does not move huge pages themselves): a worker thread writes. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

void vt_compact_node_async (guint node, GCancellable *cancellable, GAsyncReadyCallback callback,
                            gpointer user_data);
/* The wall time the kernel took, in microseconds; -1 and `error` (the
 * file's, a kernel without compaction: not found) when it could not. */
gint64 vt_compact_node_finish (GAsyncResult *result, GError **error);

G_END_DECLS
