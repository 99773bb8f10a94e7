/* New intervals for running kdamonds, off the main loop.
 *
 * Writing "commit" to a kdamond's state file returns only once the kdamond
 * has taken the request: on Linux 6.12 at its next aggregation, so up to one
 * aggregation interval (6.4 s at vtierd's longest, 32x 200 ms). Done on the
 * main loop, that stalled every D-Bus call: a `vtierctl list` took 6.4 s
 * while a stopped VM's intervals grew (issue 15). So the interval files and
 * the commit are written by one worker thread, one commit at a time: 6.12
 * serves one such sysfs command at a time and refuses a second with EBUSY.
 * A slot's newer intervals replace its queued ones. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _VtDamonCommits VtDamonCommits;

VtDamonCommits *vt_damon_commits_new (void);
/* Waits for the commit in flight, if any (turn the slots off first: a
 * commit to a kdamond that stops returns within 100 ms). Queued requests
 * complete with G_IO_ERROR_CANCELLED. */
void vt_damon_commits_free (VtDamonCommits *commits);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtDamonCommits, vt_damon_commits_free)

/* Writes sample_us and aggr_us under slot_dir (a kdamonds/N directory),
 * then "commit" to its state, in the worker. `label` names the slot in
 * errors ("DAMON slot 3"). The callback runs in the caller's thread-default
 * main context. */
void vt_damon_commits_request (VtDamonCommits *commits, const char *slot_dir, const char *label,
                               guint64 sample_us, guint64 aggr_us, GCancellable *cancellable,
                               GAsyncReadyCallback callback, gpointer user_data);
/* TRUE also when newer intervals of the slot replaced these before they
 * were written (they went with that commit). */
gboolean vt_damon_commits_finish (GAsyncResult *result, GError **error);

/* The slot's target is gone: its queued intervals are dropped, and once
 * this returns the worker writes none of its files for them. */
void vt_damon_commits_forget (VtDamonCommits *commits, const char *slot_dir);

G_END_DECLS
