/* Where a VM writes, page by page: KVM's dirty log through QEMU's
 * x-dirty-pages-start / x-query-dirty-pages / x-dirty-pages-stop
 * (qemu-patches/0004). While the log is on, KVM maps guest memory with
 * 4 KiB pages and write-protects each page again at every query (a
 * guest's first write after one costs an exit), as during a live
 * migration: so it is on for a window of window_ms every interval_s
 * seconds, not all the time. Each window gives, per RAM block, the pages
 * the guest (or QEMU's devices) wrote in it. A QEMU without the commands
 * answers CommandNotFound: the watch says so once and stops. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "discovery/vt-qmp.h"
#include "ram-map/vt-ram-map.h"

G_BEGIN_DECLS

/* One block's pages written in one window. */
typedef struct {
  guint64 page_size; /* bytes a bit stands for */
  guint64 length;    /* the block's used length */
  guint64 dirty;     /* bits set */
  GBytes *bitmap;    /* bit N of byte M: page 8 * M + N written */
} VtDirtyPages;

void vt_dirty_pages_clear (VtDirtyPages *pages);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (VtDirtyPages, vt_dirty_pages_clear)

/* x-query-dirty-pages' return for a block of `length` bytes. What cannot
 * be is VT_ERROR_INVALID, named (another length, a page size that is not a
 * power of two, a bitmap of the wrong size or not base64, a count that is
 * not the bitmap's). */
gboolean vt_dirty_pages_parse (JsonNode *reply, guint64 length, VtDirtyPages *out,
                               GError **error);
/* Pages written in [offset, offset + bytes) of the block (partly covered
 * pages count). */
guint64 vt_dirty_pages_count (const VtDirtyPages *pages, guint64 offset, guint64 bytes);

/* A window's result: VtDirtyPages per block of the map, in its order
 * (NULL with `error` set when the window failed). A holder may keep a
 * reference: a later window never changes it. */
typedef void (*VtDirtyPagesFunc) (GArray *windows, const GError *error, gpointer user_data);
typedef struct _VtDirtyPagesWatch VtDirtyPagesWatch;

/* Opens a window on every block of `map` (copied: block names and lengths)
 * every interval_s seconds, the first one a second from now. */
VtDirtyPagesWatch *vt_dirty_pages_watch_new (VtQmp *qmp, const VtRamMap *map, guint interval_s,
                                             guint window_ms, VtDirtyPagesFunc func,
                                             gpointer user_data);
void vt_dirty_pages_watch_free (VtDirtyPagesWatch *watch);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtDirtyPagesWatch, vt_dirty_pages_watch_free)

G_END_DECLS
