/* DAMON commits for running kdamonds, off the main loop.
 *
 * Writing "commit" to a kdamond's state file returns only once the kdamond
 * has taken the request: on Linux 6.12 at its next aggregation, so up to one
 * aggregation interval (6.4 s at vtierd's longest, 32x 200 ms). Done on the
 * main loop, that stalled every D-Bus call: a `vtierctl list` took 6.4 s
 * while a stopped VM's intervals grew (issue 15). So the files of a commit
 * (new intervals, a VM joining or leaving a shared kdamond) and the commit
 * itself are written by one worker thread, one commit at a time: 6.12
 * serves one such sysfs command at a time and refuses a second with EBUSY.
 * Each request carries the slot's whole context, so a slot's newer request
 * replaces its queued one and nothing is lost by it. */
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

/* Writes `files` (pairs of a path under slot_dir and its value, in order)
 * and then "commit" to the slot's state, in the worker. `label` names the
 * slot in errors ("DAMON slot 3"); `generation` is the caller's number for
 * this content. The callback runs in the caller's thread-default main
 * context. */
void vt_damon_commits_request (VtDamonCommits *commits, const char *slot_dir, const char *label,
                               GPtrArray *files, guint64 generation, GCancellable *cancellable,
                               GAsyncReadyCallback callback, gpointer user_data);
/* *generation: the content the kernel took with this request, or 0 when a
 * newer request had replaced it and went with an earlier commit (TRUE
 * then too), or when the slot was forgotten. */
gboolean vt_damon_commits_finish (GAsyncResult *result, guint64 *generation, GError **error);

/* The slot stops: its queued content is dropped, and once this returns the
 * worker writes none of its files. */
void vt_damon_commits_forget (VtDamonCommits *commits, const char *slot_dir);

G_END_DECLS
