/* A VM's QEMU's own memory between its tiers: the moves, the count of its
 * pages and their nodes (a move_pages query) run in one worker thread, one
 * sweep at a time; the main loop keeps the regions and the figures. */
#include "daemon/vt-qemu-memory.h"

#include <gio/gio.h>
#include <unistd.h>

#include "access/vt-qemu-pages.h"
#include "common/vt-error.h"
#include "migration/vt-migrate.h"

/* Intervals a region must have been unused for to go down: one more than
 * the interval it is looked at, so a page QEMU touches every interval or
 * so stays. */
#define COLD_INTERVALS 2
/* Share of an aggregation's samples (percent) that found a region used for
 * it to come back up: more than a passing touch. */
#define USED_PCT 5
/* Sweeps after which the pages the kernel refused are asked for again. */
#define REFUSED_SWEEPS 20

/* What a sweep's thread and the VM share: the thread uses pages and
 * refused while a sweep is under way, the main loop never then. */
typedef struct {
  VtQemuPages *pages;
  VtProcess process;
  GArray *ranges;      /* VtAddrRange: what its kdamond watches */
  GArray *refused;     /* VtMigrateSpan, sorted: pages the kernel would not move */
  guint refused_age;   /* sweeps since refused was emptied */
  VtQemuMemory *owner; /* NULL once the VM is freed (main loop only) */
} Shared;

struct _VtQemuMemory {
  Shared *shared;
  GArray *regions; /* VtRegion: the last aggregation's */
  guint64 aggr_us, max_accesses;
  gboolean in_flight;
  gint64 last_start_us; /* 0: none yet */
  GCancellable *cancellable;
  VtQemuMemoryStats stats;
  char *error;
};

typedef struct {
  Shared *shared;
  GArray *down, *up; /* VtMigrateSpan */
  int top, slow;
  guint64 up_budget; /* bytes it may bring up */
} Job;

typedef struct {
  guint64 bytes, top_bytes, cold_bytes, demoted, promoted, failed, cpu_us;
} Result;

static void
shared_clear (gpointer data)
{
  Shared *s = data;
  vt_qemu_pages_free (s->pages);
  g_array_unref (s->ranges);
  g_array_unref (s->refused);
}

static void
shared_unref (Shared *s)
{
  g_atomic_rc_box_release_full (s, shared_clear);
}

static void
job_free (gpointer data)
{
  Job *job = data;
  shared_unref (job->shared);
  g_array_unref (job->down);
  g_array_unref (job->up);
  g_free (job);
}

VtQemuMemory *
vt_qemu_memory_new (const VtProcess *process, const VtAddrRange *ranges, guint n, GError **error)
{
  VtQemuPages *pages = vt_qemu_pages_new (process->pid, error);
  if (!pages)
    return NULL;
  VtQemuMemory *m = g_new0 (VtQemuMemory, 1);
  m->shared = g_atomic_rc_box_new0 (Shared);
  m->shared->pages = pages;
  m->shared->process = *process;
  m->shared->ranges = g_array_sized_new (FALSE, FALSE, sizeof (VtAddrRange), n);
  g_array_append_vals (m->shared->ranges, ranges, n);
  m->shared->refused = g_array_new (FALSE, FALSE, sizeof (VtMigrateSpan));
  m->shared->owner = m;
  m->regions = g_array_new (FALSE, FALSE, sizeof (VtRegion));
  m->cancellable = g_cancellable_new ();
  return m;
}

void
vt_qemu_memory_free (VtQemuMemory *m)
{
  if (!m)
    return;
  m->shared->owner = NULL;
  g_cancellable_cancel (m->cancellable);
  g_object_unref (m->cancellable);
  shared_unref (m->shared);
  g_array_unref (m->regions);
  g_free (m->error);
  g_free (m);
}

const VtQemuMemoryStats *vt_qemu_memory_stats (const VtQemuMemory *m) { return &m->stats; }
const char *vt_qemu_memory_error (const VtQemuMemory *m) { return m->error; }

void
vt_qemu_memory_load (VtQemuMemory *m, const VtRegion *regions, guint n, guint64 sample_us,
                     guint64 aggr_us)
{
  g_array_set_size (m->regions, 0);
  g_array_append_vals (m->regions, regions, n);
  m->aggr_us = aggr_us;
  m->max_accesses = sample_us ? MAX (aggr_us / sample_us, 1) : 1;
}

/* ---- in the worker thread ---- */

/* Moves each span to `node`; the bytes moved and refused into the counts.
 * FALSE on an error that ends the sweep (the process is gone); a node the
 * process may not use ends this direction only. */
static gboolean
move_spans (Shared *s, GArray *spans, int node, guint64 budget, guint64 *moved, guint64 *failed,
            GCancellable *cancellable, GError **error)
{
  for (guint i = 0; i < spans->len && *moved < budget; i++) {
    if (g_cancellable_set_error_if_cancelled (cancellable, error))
      return FALSE;
    const VtMigrateSpan *span = &g_array_index (spans, VtMigrateSpan, i);
    VtMigrateStats st = { 0 };
    g_autoptr (GError) local = NULL;
    guint64 left = budget == G_MAXUINT64 ? 0 : budget - *moved; /* 0: all */
    gboolean ok = vt_migrate_range (&s->process, span->start, span->end, node, FALSE, left,
                                    (const VtMigrateSpan *) s->refused->data, s->refused->len,
                                    &st, &local);
    *moved += st.moved;
    *failed += st.failed + st.busy;
    for (guint r = 0; r < st.n_refused; r++) {
      VtMigrateSpan refused = { st.refused[r].start, st.refused[r].end };
      g_array_append_val (s->refused, refused);
    }
    if (st.n_refused)
      g_array_sort (s->refused, vt_migrate_span_compare);
    if (!ok) {
      if (g_error_matches (local, VT_ERROR, VT_ERROR_UNSUPPORTED))
        return TRUE;
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
    if (st.out_of_memory)
      return TRUE;
  }
  return TRUE;
}

/* Whether `addr` lies in one of `spans` (sorted), from *at on: addresses
 * come in order, so the walk goes on from where the last one stopped. */
static gboolean
in_spans (GArray *spans, guint *at, guint64 addr)
{
  const VtMigrateSpan *s = (const VtMigrateSpan *) spans->data;
  while (*at < spans->len && s[*at].end <= addr)
    (*at)++;
  return *at < spans->len && s[*at].start <= addr;
}

/* Runs of consecutive pages onto `runs`. */
static void
add_page (GArray *runs, guint64 addr, guint64 page)
{
  VtMigrateSpan *last = runs->len ? &g_array_index (runs, VtMigrateSpan, runs->len - 1) : NULL;
  if (last && last->end == addr) {
    last->end += page;
    return;
  }
  VtMigrateSpan run = { addr, addr + page };
  g_array_append_val (runs, run);
}

static void
sweep_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  (void) source;
  Job *job = data;
  Shared *s = job->shared;
  guint64 cpu_before = vt_thread_cpu_us ();
  GError *error = NULL;
  g_autofree Result *r = g_new0 (Result, 1);

  if (++s->refused_age >= REFUSED_SWEEPS) {
    g_array_set_size (s->refused, 0);
    s->refused_age = 0;
  }
  /* Its pages and where they are: only pages off their place are asked to
   * move (the regions span gaps, and move_pages asks for every page). */
  g_autoptr (GArray) addrs = vt_qemu_pages_list (s->pages, (const VtAddrRange *) s->ranges->data,
                                                 s->ranges->len, &error);
  g_autofree int *nodes = addrs ? g_new (int, MAX (addrs->len, 1)) : NULL;
  if (!addrs || (addrs->len && !vt_migrate_query_nodes (s->process.pid,
                                                        (const guint64 *) addrs->data,
                                                        addrs->len, nodes, &error))) {
    g_task_return_error (task, error);
    return;
  }
  guint64 page = (guint64) sysconf (_SC_PAGESIZE);
  g_autoptr (GArray) down = g_array_new (FALSE, FALSE, sizeof (VtMigrateSpan));
  g_autoptr (GArray) up = g_array_new (FALSE, FALSE, sizeof (VtMigrateSpan));
  for (guint i = 0, d = 0, u = 0; i < addrs->len; i++) {
    guint64 a = g_array_index (addrs, guint64, i);
    gboolean on_top = job->top >= 0 && nodes[i] == job->top;
    gboolean cold = in_spans (job->down, &d, a);
    r->top_bytes += on_top ? page : 0;
    r->cold_bytes += cold ? page : 0;
    if (cold && on_top)
      add_page (down, a, page);
    else if (in_spans (job->up, &u, a) && !on_top && nodes[i] >= 0)
      add_page (up, a, page);
  }
  r->bytes = (guint64) addrs->len * page;
  gboolean moves = job->top >= 0 && job->slow >= 0;
  if (moves &&
      (!move_spans (s, down, job->slow, G_MAXUINT64, &r->demoted, &r->failed, cancellable,
                    &error) ||
       !move_spans (s, up, job->top, job->up_budget, &r->promoted, &r->failed, cancellable,
                    &error))) {
    g_task_return_error (task, error);
    return;
  }
  r->top_bytes = r->top_bytes + r->promoted - MIN (r->top_bytes + r->promoted, r->demoted);
  r->cpu_us = vt_thread_cpu_us () - cpu_before;
  g_task_return_pointer (task, g_steal_pointer (&r), g_free);
}

/* ---- in the main loop ---- */

static void
on_swept (GObject *source, GAsyncResult *res, gpointer data)
{
  (void) source;
  Shared *s = data;
  g_autoptr (GError) error = NULL;
  g_autofree Result *r = g_task_propagate_pointer (G_TASK (res), &error);
  VtQemuMemory *m = s->owner;
  shared_unref (s);
  if (!m)
    return; /* the VM went while it ran */
  m->in_flight = FALSE;
  g_clear_pointer (&m->error, g_free);
  if (!r) {
    m->error = g_strdup (error->message);
    g_debug ("QEMU's own memory (process %d): %s", (int) m->shared->process.pid, error->message);
    return;
  }
  VtQemuMemoryStats *st = &m->stats;
  st->bytes = r->bytes;
  st->top_bytes = r->top_bytes;
  st->cold_bytes = r->cold_bytes;
  st->demoted += r->demoted;
  st->promoted += r->promoted;
  st->failed += r->failed;
  st->sweep_cpu_us = r->cpu_us;
  st->sweeps++;
}

static void
add_span (GArray *spans, const VtRegion *r)
{
  VtMigrateSpan span = { r->start, r->end };
  g_array_append_val (spans, span);
}

void
vt_qemu_memory_tick (VtQemuMemory *m, int top_node, int slow_node, guint64 room,
                     guint interval_s)
{
  gint64 now = g_get_monotonic_time ();
  if (interval_s == 0 || m->in_flight ||
      (m->last_start_us && now - m->last_start_us < (gint64) interval_s * G_USEC_PER_SEC))
    return;
  Job *job = g_new0 (Job, 1);
  job->down = g_array_new (FALSE, FALSE, sizeof (VtMigrateSpan));
  job->up = g_array_new (FALSE, FALSE, sizeof (VtMigrateSpan));
  guint64 cold_us = (guint64) COLD_INTERVALS * interval_s * G_USEC_PER_SEC;
  for (guint i = 0; i < m->regions->len; i++) {
    const VtRegion *r = &g_array_index (m->regions, VtRegion, i);
    if (r->nr_accesses == 0 && (guint64) r->age * m->aggr_us >= cold_us) {
      add_span (job->down, r);
    } else if ((guint64) r->nr_accesses * 100 >= USED_PCT * m->max_accesses && r->age >= 1) {
      add_span (job->up, r);
    }
  }
  m->in_flight = TRUE;
  m->last_start_us = now;
  job->shared = g_atomic_rc_box_acquire (m->shared);
  job->top = top_node;
  job->slow = slow_node;
  job->up_budget = room / 2;
  g_autoptr (GTask) task = g_task_new (NULL, m->cancellable, on_swept,
                                       g_atomic_rc_box_acquire (m->shared));
  g_task_set_task_data (task, job, job_free);
  g_task_set_name (task, "vt-qemu-memory");
  g_task_run_in_thread (task, sweep_thread);
}
