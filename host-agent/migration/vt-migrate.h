/* Moving a VM's guest memory between host nodes: move_pages(2) on the QEMU
 * process, in batches, within the process's cpuset mems, handling every
 * per-page status. Blocking (the kernel copies the pages): call it from a
 * worker thread (vt_migrate_range_async does). */
#pragma once

#include <gio/gio.h>

#include "common/vt-process.h"

G_BEGIN_DECLS

/* Pages [start, end) of the process, in address order. */
typedef struct {
  guint64 start, end;
} VtMigrateSpan;

/* For g_array_sort: spans by start. */
gint vt_migrate_span_compare (gconstpointer a, gconstpointer b);

/* A run of pages the kernel would not move: `bytes` of them within
 * [start, end) (all, unless runs were joined to fit). */
typedef struct {
  guint64 start, end, bytes;
  gboolean shared; /* EACCES: mapped by another process too; else busy */
} VtMigrateRefused;

/* Runs of refused pages a walk reports; past that the two nearest of a
 * kind are joined: where a few pages sit, not each of them, is what the
 * caller keeps (to leave them out of later walks). */
#define VT_MIGRATE_REFUSED_MAX 32

typedef struct {
  guint64 moved;      /* bytes now on the target node that were elsewhere */
  guint64 beside;     /* of moved: bytes just outside the range that a huge page
                       * straddling one of its ends took along */
  guint64 already;    /* bytes that were on the target node already */
  guint64 busy;       /* bytes the kernel could not move now (EBUSY, EAGAIN): retry later */
  guint64 skipped;    /* bytes not present or not mapped (ENOENT, EFAULT) */
  guint64 failed;     /* bytes that failed otherwise (EACCES, EINVAL, EIO...) */
  guint64 shared;     /* of failed: EACCES, mapped by another process too (MPOL_MF_MOVE
                       * moves only pages the process alone maps) */
  guint64 no_memory;  /* of failed: ENOMEM, the target node was full */
  gboolean out_of_memory; /* ENOMEM on the target: the round ended early */
  guint64 cpu_us;     /* CPU time of the calling thread it took (the kernel copies on it) */
  guint64 wait_us;    /* time it was runnable and waited for a CPU (schedstat) */
  guint64 wall_us;    /* wall time it took: the rest of it, blocked in the kernel */
  /* Where the busy and shared pages are, by address: the only way a
   * caller learns which pages to leave alone (its job's range is a
   * region's, and regions move). */
  VtMigrateRefused refused[VT_MIGRATE_REFUSED_MAX];
  guint n_refused;
  guint64 walked_end; /* every page of [start, walked_end) not skipped was asked for */
} VtMigrateStats;

/* Pages per move_pages call. */
#define VT_MIGRATE_BATCH 4096

/* Moves the pages of [start, end) (page aligned) of `process` to `node`, at
 * most `max_bytes` (0: all), leaving out the pages in `skip` (n_skip spans
 * sorted by start; NULL: none): pages the kernel
 * refused lately, not asked for again. A target node outside the process's
 * cpuset mems is VT_ERROR_UNSUPPORTED (nothing moved); a vanished process
 * VT_ERROR_GONE. Per-page failures are counted in `stats`, not errors;
 * where the busy and shared ones sit, in stats->refused. Huge pages move
 * whole (the kernel moves the folio of the first of its pages asked for).
 * Every page asked for counts its page size once, by where it is after the
 * move (a 2 MiB THP: 2 MiB moved); so do the pages beside the range, up to
 * the 2 MiB boundaries around its ends, that moved with a huge page
 * straddling an end (`beside`): what moved is what the caller believes.
 * The walk stops when `max_bytes` are moved (pages past that are in no
 * count) or on ENOMEM (out_of_memory). The kernel's ENODEV (node without
 * memory online) is VT_ERROR_UNSUPPORTED too. Before the first batch and
 * each one after it the process is checked to be the one identified
 * (vt_process_check): a pid that names another process now is
 * VT_ERROR_GONE, and none of that process's pages move. On an error
 * `stats` holds what was counted before it. With `huge_pages` (the caller
 * knows the range mostly in huge pages), each whole 2 MiB of it is asked
 * for by its first page, and its other pages only if they stayed (it held
 * no huge page): a THP costs the kernel one lookup, not 512. */
gboolean vt_migrate_range (const VtProcess *process, guint64 start, guint64 end, int node,
                           gboolean huge_pages, guint64 max_bytes, const VtMigrateSpan *skip,
                           guint n_skip, VtMigrateStats *stats, GError **error);

/* The node of each page (a move_pages query), or a negative errno per page. */
gboolean vt_migrate_query_nodes (GPid pid, const guint64 *addrs, guint n, int *nodes,
                                 GError **error);

/* The nodes `pid` may use (its cpuset's mems, /proc/PID/status Mems_allowed_list;
 * without that line, a kernel without cpusets: every node with memory). No
 * /proc/PID: VT_ERROR_GONE. A sorted array of guint. */
GArray *vt_migrate_allowed_nodes (GPid pid, GError **error);

/* One range in a worker thread; the result is a VtMigrateStats (g_free).
 * `skip` (VtMigrateSpan, or NULL) is taken. `cancellable` is checked
 * before each batch: G_IO_ERROR_CANCELLED. */
void vt_migrate_range_async (const VtProcess *process, guint64 start, guint64 end, int node,
                             gboolean huge_pages, guint64 max_bytes, GArray *skip,
                             GCancellable *cancellable, GAsyncReadyCallback callback,
                             gpointer user_data);
VtMigrateStats *vt_migrate_range_finish (GAsyncResult *result, GError **error);

/* The moving thread runs at nice -boost (0..20) while it moves pages:
 * what the CPU allowance grants it, it then gets on a busy host. Without
 * CAP_SYS_NICE it moves at the nice it has (said once). */
void vt_migrate_set_priority (guint boost);
/* The calling thread at that nice too, for as long as it hands moves out
 * (the main loop during a round: each move's hand-off waits for it).
 * TRUE when it changed it; then *before goes back with
 * vt_migrate_restore_thread. */
gboolean vt_migrate_boost_thread (int *before);
void vt_migrate_restore_thread (int before);

/* For tests only: the move_pages(2) used (libnuma's signature), so a test on
 * a one-node host can play a multi-node kernel (budget, ENOMEM, huge pages);
 * NULL restores libnuma's. Set it before any migration starts. */
typedef long (*VtMovePagesFunc) (int pid, unsigned long count, void **pages, const int *nodes,
                                 int *status, int flags);
void vt_migrate_set_move_pages_func (VtMovePagesFunc func);

G_END_DECLS
