#include "migration/vt-migrate.h"

#include <errno.h>
#include <numaif.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/vt-error.h"
#include "common/vt-task.h"
#include "common/vt-sysfs.h"

/* The status array is filled with this before a move: an entry the kernel
 * did not get to (the call stopped early) keeps it. */
#define NOT_REPORTED G_MININT

static VtMovePagesFunc move_pages_func = move_pages;

void
vt_migrate_set_move_pages_func (VtMovePagesFunc func)
{
  move_pages_func = func ? func : move_pages;
}

static guint64
page_size (void)
{
  return (guint64) sysconf (_SC_PAGESIZE);
}

/* ---- Which nodes the process may use ---- */

/* The value of "Key:" in a /proc/PID/status text, or NULL. */
static char *
status_field (const char *text, const char *key)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l; l++)
    if (g_str_has_prefix (*l, key))
      return g_strstrip (g_strdup (*l + strlen (key)));
  return NULL;
}

GArray *
vt_migrate_allowed_nodes (GPid pid, GError **error)
{
  g_autofree char *path = g_strdup_printf ("proc/%d/status", (int) pid);
  g_autoptr (GError) local = NULL;
  g_autofree char *text = vt_sysfs_read (path, &local);
  if (!text) {
    if (g_error_matches (local, VT_ERROR, VT_ERROR_NOT_FOUND))
      g_set_error (error, VT_ERROR, VT_ERROR_GONE, "pid %d is gone: %s", (int) pid, local->message);
    else
      g_propagate_error (error, g_steal_pointer (&local));
    return NULL;
  }

  g_autofree char *list = status_field (text, "Mems_allowed_list:");
  if (!list) {
    /* A kernel without cpusets has no such line: any node with memory. */
    list = vt_sysfs_read ("sys/devices/system/node/has_memory", error);
    if (!list) {
      g_prefix_error (error, "%s has no Mems_allowed_list: ", path);
      return NULL;
    }
  }
  GArray *nodes = vt_parse_nodelist (list, error);
  if (!nodes)
    g_prefix_error (error, "%s: Mems_allowed_list: ", path);
  return nodes;
}

static gboolean
check_node_allowed (GPid pid, int node, GError **error)
{
  g_autoptr (GArray) allowed = vt_migrate_allowed_nodes (pid, error);
  if (!allowed)
    return FALSE;
  g_autoptr (GString) list = g_string_new (NULL);
  for (guint i = 0; i < allowed->len; i++) {
    guint n = g_array_index (allowed, guint, i);
    if (node >= 0 && n == (guint) node)
      return TRUE;
    g_string_append_printf (list, "%s%u", i ? "," : "", n);
  }
  g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED,
               "node %d is outside the cpuset mems of pid %d (%s)", node, (int) pid,
               list->len ? list->str : "none");
  return FALSE;
}

/* ---- move_pages(2) calls ---- */

/* An error for a failed move_pages call (errno `err`) on pages [first, end). */
static void
set_call_error (GError **error, int err, GPid pid, int node, void *first, guint64 end)
{
  guint64 a = (guint64) GPOINTER_TO_SIZE (first);
  int code;
  switch (err) {
  case ESRCH: code = VT_ERROR_GONE; break;
  /* EACCES: the node left the cpuset after our check; ENODEV: the node has
   * no memory online. Either way this node cannot take this process's pages. */
  case EACCES:
  case ENODEV: code = VT_ERROR_UNSUPPORTED; break;
  default: code = VT_ERROR_FAILED; break;
  }
  g_autofree char *target = node >= 0 ? g_strdup_printf (" to node %d", node) : g_strdup ("");
  g_set_error (error, VT_ERROR, code,
               "move_pages on pid %d [0x%" G_GINT64_MODIFIER "x, 0x%" G_GINT64_MODIFIER
               "x)%s: %s%s",
               (int) pid, a, end, target, g_strerror (err),
               err == EPERM ? " (another user's process needs CAP_SYS_NICE)" : "");
}

/* The node of each of pages[0..n) (one call: n <= VT_MIGRATE_BATCH). */
static gboolean
query (GPid pid, void **pages, guint n, int *status, GError **error)
{
  if (move_pages_func ((int) pid, n, pages, NULL, status, 0) < 0) {
    int err = errno;
    set_call_error (error, err, pid, -1, pages[0],
                    (guint64) GPOINTER_TO_SIZE (pages[n - 1]) + page_size ());
    return FALSE;
  }
  return TRUE;
}

gboolean
vt_migrate_query_nodes (GPid pid, const guint64 *addrs, guint n, int *nodes, GError **error)
{
  g_autofree void **pages = g_new (void *, MIN (n, VT_MIGRATE_BATCH) + 1);
  for (guint done = 0; done < n;) {
    guint k = MIN (n - done, VT_MIGRATE_BATCH);
    for (guint i = 0; i < k; i++)
      pages[i] = GSIZE_TO_POINTER ((gsize) addrs[done + i]);
    if (!query (pid, pages, k, nodes + done, error))
      return FALSE;
    done += k;
  }
  return TRUE;
}

/* ---- One batch ---- */

/* Joins refused[i + 1] into refused[i]. */
static void
join_refused (VtMigrateStats *stats, guint i)
{
  VtMigrateRefused *a = &stats->refused[i], *b = &stats->refused[i + 1];
  a->start = MIN (a->start, b->start);
  a->end = MAX (a->end, b->end);
  a->bytes += b->bytes;
  a->shared = a->shared && b->shared; /* a mixed run needs a busy run's strikes */
  memmove (b, b + 1, (stats->n_refused - i - 2) * sizeof *b);
  stats->n_refused--;
}

gint
vt_migrate_span_compare (gconstpointer a, gconstpointer b)
{
  const VtMigrateSpan *x = a, *y = b;
  return x->start < y->start ? -1 : x->start > y->start;
}

static gint
refused_by_start (gconstpointer a, gconstpointer b)
{
  const VtMigrateRefused *x = a, *y = b;
  return x->start < y->start ? -1 : x->start > y->start;
}

/* Notes a refused page where it is: onto the run it extends, or a new run;
 * with no room, the two nearest runs (of a kind where there are two) join. */
static void
note_refused (VtMigrateStats *stats, guint64 addr, guint64 bytes, gboolean shared)
{
  for (guint i = stats->n_refused; i-- > 0;) {
    VtMigrateRefused *r = &stats->refused[i];
    if (r->shared == shared && r->end == addr) {
      r->end += bytes, r->bytes += bytes;
      return;
    }
  }
  if (stats->n_refused == VT_MIGRATE_REFUSED_MAX) {
    qsort (stats->refused, stats->n_refused, sizeof *stats->refused, refused_by_start);
    guint best = 0;
    guint64 best_gap = G_MAXUINT64;
    for (int same = 1; same >= 0 && best_gap == G_MAXUINT64; same--)
      for (guint i = 0; i + 1 < stats->n_refused; i++) {
        const VtMigrateRefused *a = &stats->refused[i], *b = &stats->refused[i + 1];
        guint64 gap = b->start > a->end ? b->start - a->end : 0;
        if ((!same || a->shared == b->shared) && gap < best_gap)
          best = i, best_gap = gap;
      }
    join_refused (stats, best);
  }
  stats->refused[stats->n_refused++] = (VtMigrateRefused) { addr, addr + bytes, bytes, shared };
}

/* Counts a page's negative status. */
static void
count_errno (VtMigrateStats *stats, int status, guint64 addr, guint64 bytes)
{
  switch (-status) {
  case EBUSY:
  case EAGAIN:
    stats->busy += bytes;
    note_refused (stats, addr, bytes, FALSE);
    break;
  case ENOENT: /* not present */
  case EFAULT: /* not mapped, or the zero page */
    stats->skipped += bytes;
    break;
  case ENOMEM: /* the target is full: the round ends after this batch */
    stats->out_of_memory = TRUE;
    stats->failed += bytes;
    stats->no_memory += bytes;
    break;
  case EACCES: /* mapped by another process too: MPOL_MF_MOVE leaves it */
    stats->shared += bytes;
    stats->failed += bytes;
    note_refused (stats, addr, bytes, TRUE);
    break;
  default: /* EIO, EINVAL... */
    stats->failed += bytes;
    break;
  }
}

/* Sorts a batch by its query: pages on `node` already, or with no page to
 * move, are counted now; the others, at most `budget` of them, are gathered
 * at the front of `pages` for the move (returns how many). Pages past the
 * budget are left uncounted for a later round (*deferred). */
static guint
plan_batch (void **pages, const int *status, guint n, int node, guint64 budget,
            VtMigrateStats *stats, gboolean *deferred)
{
  guint64 page = page_size ();
  guint m = 0;
  for (guint i = 0; i < n; i++) {
    if (status[i] == node)
      stats->already += page;
    else if (status[i] < 0)
      count_errno (stats, status[i], (guint64) GPOINTER_TO_SIZE (pages[i]), page);
    else if (m < budget)
      pages[m++] = pages[i];
    else
      *deferred = TRUE;
  }
  return m;
}

/* What a walk is asked to do. */
typedef struct {
  VtProcess process;
  guint64 start, end;
  int node;
  gboolean huge_pages;
  guint64 max_bytes;
  const VtMigrateSpan *skip; /* sorted by start */
  guint n_skip;
} Walk;

/* The buffers of one batch. */
typedef struct {
  void **pages;
  int *nodes, *status, *after;
  void **asked;  /* what one move call asks for */
  guint *at;     /* ... each one's index in pages */
  int *answered; /* ... and its status */
} Batch;

/* A page of a whole 2 MiB piece whose first page was asked for in its
 * stead (move_batch). */
#define TAIL (G_MININT + 1)
#define PIECE (2ull << 20)

/* Whether pages[i..m) begin with a whole 2 MiB piece of address space
 * (the pages are in address order, each once). */
static gboolean
piece_at (void **pages, guint i, guint m, guint64 page)
{
  guint per = (guint) (PIECE / page);
  guint64 a = (guint64) GPOINTER_TO_SIZE (pages[i]);
  return per > 1 && a % PIECE == 0 && i + per <= m &&
         (guint64) GPOINTER_TO_SIZE (pages[i + per - 1]) == a + PIECE - page;
}

/* One move_pages call for b->asked[0..k), its statuses put back by page
 * (b->status). ENOMEM is noted in *err and stats; other errors fail. */
static gboolean
move_call (GPid pid, const Batch *b, guint k, int node, int *err, VtMigrateStats *stats,
           GError **error)
{
  for (guint j = 0; j < k; j++) {
    b->nodes[j] = node;
    b->answered[j] = NOT_REPORTED;
  }
  if (move_pages_func ((int) pid, k, b->asked, b->nodes, b->answered, MPOL_MF_MOVE) < 0) {
    *err = errno;
    if (*err != ENOMEM) {
      set_call_error (error, *err, pid, node, b->asked[0],
                      (guint64) GPOINTER_TO_SIZE (b->asked[k - 1]) + page_size ());
      return FALSE;
    }
    stats->out_of_memory = TRUE;
  }
  for (guint j = 0; j < k; j++)
    b->status[b->at[j]] = b->answered[j];
  return TRUE;
}

/* Asks again for the tails that stayed where they were (their piece was
 * not one huge page), and queries where they are after; returns FALSE on
 * an error. *split: the pieces that had such tails. */
static gboolean
move_tails (GPid pid, const Batch *b, guint m, int node, int *err, guint *split,
            VtMigrateStats *stats, GError **error)
{
  guint k = 0;
  guint64 last_piece = G_MAXUINT64;
  for (guint i = 0; i < m; i++) {
    guint64 a = (guint64) GPOINTER_TO_SIZE (b->pages[i]);
    if (b->status[i] != TAIL || b->after[i] < 0 || b->after[i] == node)
      continue;
    if ((a & ~(PIECE - 1)) != last_piece)
      (*split)++, last_piece = a & ~(PIECE - 1);
    b->asked[k] = b->pages[i], b->at[k++] = i;
  }
  if (k == 0)
    return TRUE;
  /* The same b->asked: move_pages reads its page list, never writes it. */
  if (!move_call (pid, b, k, node, err, stats, error) ||
      !query (pid, b->asked, k, b->answered, error))
    return FALSE;
  for (guint j = 0; j < k; j++)
    b->after[b->at[j]] = b->answered[j];
  return TRUE;
}

/* Moves pages[0..m) (none on `node`) and counts each by where it is after.
 * Where, not the move's status: moving one page of a huge page moves its
 * whole folio, so its other pages, asked for later in the call, report
 * -EBUSY (already isolated) or the node, yet moved; and a call that stops
 * early (ENOMEM, or a positive count of pages not migrated) leaves the rest
 * of the statuses unwritten.
 *
 * With *heads_first, a whole 2 MiB piece is asked for by its first page
 * alone, and its pages that did not go along (it was no huge page) in a
 * second call: the kernel looks each page asked for up under the mmap
 * lock, and in a THP the other 511 only find it gone. A batch whose
 * pieces mostly were not huge pages turns that off for the rest of the
 * walk. */
static gboolean
move_batch (const Walk *w, const Batch *b, guint m, gboolean *heads_first, VtMigrateStats *stats,
            GError **error)
{
  GPid pid = w->process.pid;
  int node = w->node;
  guint64 page = page_size ();
  guint k = 0, pieces = 0, split = 0;
  for (guint i = 0; i < m; i++) {
    b->status[i] = NOT_REPORTED;
    b->asked[k] = b->pages[i], b->at[k++] = i;
    if (*heads_first && piece_at (b->pages, i, m, page)) {
      guint end = i + (guint) (PIECE / page);
      while (++i < end)
        b->status[i] = TAIL;
      i--, pieces++;
    }
  }
  int err = 0;
  if (!move_call (pid, b, k, node, &err, stats, error) ||
      !query (pid, b->pages, m, b->after, error))
    return FALSE;
  if (pieces && err != ENOMEM) {
    /* a second call: the process checked again, as before each batch */
    if (!vt_process_check (&w->process, error) ||
        !move_tails (pid, b, m, node, &err, &split, stats, error))
      return FALSE;
    *heads_first = split * 2 <= pieces;
  }

  for (guint i = 0; i < m; i++) {
    guint64 a = (guint64) GPOINTER_TO_SIZE (b->pages[i]);
    int st = b->status[i];
    if (b->after[i] == node)
      stats->moved += page;
    else if (st < 0 && st != NOT_REPORTED && st != TAIL)
      count_errno (stats, st, a, page);
    else if (b->after[i] < 0) /* unmapped meanwhile */
      count_errno (stats, b->after[i], a, page);
    else if (err == ENOMEM)
      count_errno (stats, -ENOMEM, a, page);
    else /* still elsewhere and the kernel said nothing: try again later */
      count_errno (stats, -EAGAIN, a, page);
  }
  return TRUE;
}

/* ---- A range ---- */

/* Pages beside a range that a huge page straddling one of its ends moves
 * along: the kernel moves a folio whole when any of its pages is asked
 * for. Range ends are a region's, 4 KiB aligned; uncounted, 2 MiB a job
 * end left the tiering engine believing up to 6% less on the top tier
 * than the kernel had, until its next measurement (a matrix case, THP
 * always). Asked where they sit before and after the walk. */
#define EDGE_ALIGN (2ull << 20)

typedef struct {
  void **pages;
  int *before, *after;
  guint n;
} Edges;

static void
edges_clear (Edges *e)
{
  g_free (e->pages);
  g_free (e->before);
  g_free (e->after);
}

static void
edges_collect (Edges *e, guint64 start, guint64 end, guint64 page)
{
  guint64 head = start & ~(EDGE_ALIGN - 1), tail = (end + EDGE_ALIGN - 1) & ~(EDGE_ALIGN - 1);
  guint max = (guint) ((start - head + tail - end) / page);
  *e = (Edges) { g_new (void *, MAX (max, 1)), g_new (int, MAX (max, 1)),
                 g_new (int, MAX (max, 1)), 0 };
  for (guint64 a = head; a < start; a += page)
    e->pages[e->n++] = GSIZE_TO_POINTER ((gsize) a);
  for (guint64 a = end; a < tail && start < end; a += page)
    e->pages[e->n++] = GSIZE_TO_POINTER ((gsize) a);
}

/* Counts the pages beside the range that are on `node` now and were on
 * another node before. A query that fails counts none (not an error: the
 * walk's own result stands). */
static void
edges_count (Edges *e, GPid pid, int node, VtMigrateStats *stats)
{
  guint64 page = page_size ();
  if (!e->n || !query (pid, e->pages, e->n, e->after, NULL))
    return;
  for (guint i = 0; i < e->n; i++)
    if (e->before[i] >= 0 && e->before[i] != node && e->after[i] == node) {
      stats->moved += page;
      stats->beside += page;
    }
}

static gboolean walk_batches (const Walk *w, VtMigrateStats *stats, GCancellable *cancellable,
                              const Batch *b, GError **error);

static gboolean
walk_range (const Walk *w, VtMigrateStats *stats, GCancellable *cancellable, GError **error)
{
  GPid pid = w->process.pid;
  guint64 page = page_size ();
  if (w->start % page || w->end % page || w->start > w->end) {
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "not a range of whole %" G_GUINT64_FORMAT
                 "-byte pages", page);
    return FALSE;
  }
  if (!vt_process_check (&w->process, error) || !check_node_allowed (pid, w->node, error))
    return FALSE;

  g_autofree void **pages = g_new (void *, VT_MIGRATE_BATCH);
  g_autofree int *nodes = g_new (int, VT_MIGRATE_BATCH);
  g_autofree int *status = g_new (int, VT_MIGRATE_BATCH);
  g_autofree int *after = g_new (int, VT_MIGRATE_BATCH);
  g_autofree void **asked = g_new (void *, VT_MIGRATE_BATCH);
  g_autofree guint *at = g_new (guint, VT_MIGRATE_BATCH);
  g_autofree int *answered = g_new (int, VT_MIGRATE_BATCH);
  Batch b = { pages, nodes, status, after, asked, at, answered };
  Edges edges;
  edges_collect (&edges, w->start, w->end, page);
  if (edges.n && !query (pid, edges.pages, edges.n, edges.before, NULL))
    edges.n = 0;
  gboolean ok = walk_batches (w, stats, cancellable, &b, error);
  edges_count (&edges, pid, w->node, stats);
  edges_clear (&edges);
  return ok;
}

/* Fills pages[] with up to VT_MIGRATE_BATCH pages from *addr on, below
 * `end`, past the skipped spans (*skip_at: the first span not behind us);
 * *addr moves past them. */
static guint
gather (const Walk *w, guint64 *addr, guint *skip_at, void **pages)
{
  guint64 page = page_size ();
  guint n = 0;
  while (*addr < w->end && n < VT_MIGRATE_BATCH) {
    while (*skip_at < w->n_skip && w->skip[*skip_at].end <= *addr)
      (*skip_at)++;
    if (*skip_at < w->n_skip && w->skip[*skip_at].start <= *addr) {
      *addr = MIN (w->end, w->skip[*skip_at].end);
      continue;
    }
    pages[n++] = GSIZE_TO_POINTER ((gsize) *addr);
    *addr += page;
  }
  return n;
}

static gboolean
walk_batches (const Walk *w, VtMigrateStats *stats, GCancellable *cancellable, const Batch *b,
              GError **error)
{
  GPid pid = w->process.pid;
  guint64 page = page_size ();
  guint skip_at = 0;
  gboolean heads_first = w->huge_pages; /* until its pieces turn out not to be */

  stats->walked_end = w->start;
  for (guint64 addr = w->start; addr < w->end;) {
    if (g_cancellable_set_error_if_cancelled (cancellable, error))
      return FALSE;
    guint64 budget = G_MAXUINT64;
    if (w->max_bytes) {
      budget = stats->moved < w->max_bytes ? (w->max_bytes - stats->moved) / page : 0;
      if (!budget)
        break;
    }
    guint64 next = addr;
    guint n = gather (w, &next, &skip_at, b->pages);
    if (n && !query (pid, b->pages, n, b->status, error))
      return FALSE;

    gboolean deferred = FALSE;
    guint m = plan_batch (b->pages, b->status, n, w->node, budget, stats, &deferred);
    /* The first batch's check was the one above. */
    if (m && addr > w->start && !vt_process_check (&w->process, error))
      return FALSE;
    if (m && !move_batch (w, b, m, &heads_first, stats, error))
      return FALSE;
    if (stats->out_of_memory || deferred)
      break;
    addr = next;
    stats->walked_end = addr;
  }
  return TRUE;
}

/* vt_migrate_range with cancellation between batches. */
static gboolean
migrate_range (const Walk *w, VtMigrateStats *stats, GCancellable *cancellable, GError **error)
{
  memset (stats, 0, sizeof *stats);
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  /* CPU time, not wall time: on a busy host a move waits for a CPU as
   * long as it likes; what a quota bounds is what it costs the host. */
  guint64 cpu0 = vt_thread_cpu_us (), wait0, wait1;
  /* A mover slow in wall time but light on CPU is starved of CPU or
   * blocked in the kernel: the scheduler's run delay tells which. */
  vt_thread_sched_times (NULL, &wait0);
  gint64 wall0 = g_get_monotonic_time ();
  gboolean ok = walk_range (w, stats, cancellable, error);
  stats->cpu_us = vt_thread_cpu_us () - cpu0;
  vt_thread_sched_times (NULL, &wait1);
  stats->wait_us = wait1 - wait0;
  stats->wall_us = (guint64) (g_get_monotonic_time () - wall0);
  if (ok)
    return TRUE;
  if (error && *error && (*error)->domain == VT_ERROR)
    g_prefix_error (error, "moving pid %d [0x%" G_GINT64_MODIFIER "x, 0x%" G_GINT64_MODIFIER
                    "x) to node %d: ", (int) w->process.pid, w->start, w->end, w->node);
  return FALSE;
}

gboolean
vt_migrate_range (const VtProcess *process, guint64 start, guint64 end, int node,
                  gboolean huge_pages, guint64 max_bytes, const VtMigrateSpan *skip,
                  guint n_skip, VtMigrateStats *stats, GError **error)
{
  VtMigrateStats local;
  Walk w = { *process, start, end, node, huge_pages, max_bytes, skip, n_skip };
  return migrate_range (&w, stats ? stats : &local, NULL, error);
}

/* ---- In a worker thread ---- */

typedef struct {
  Walk walk;
  GArray *skip; /* VtMigrateSpan: walk.skip's storage */
} RangeJob;

static void
range_job_free (gpointer data)
{
  RangeJob *job = data;
  g_clear_pointer (&job->skip, g_array_unref);
  g_free (job);
}

/* How far above the host's other threads (nice steps) the moving thread
 * runs: on a busy host it got a fifth of a CPU beside four busy guests'
 * vCPU threads (a 4-VM matrix case, 40 MiB a 4.7 s round with 1 s of CPU)
 * and the hot sets waited; its CPU allowance, not the scheduler, is what
 * bounds it. Raised for the move and put back after (the pool's threads
 * serve other work). */
static gint thread_boost;
static gint thread_boost_refused;

void
vt_migrate_set_priority (guint boost)
{
  g_atomic_int_set (&thread_boost, (gint) MIN (boost, 20));
}

gboolean
vt_migrate_boost_thread (int *before)
{
  pid_t tid = (pid_t) syscall (SYS_gettid);
  int want = -g_atomic_int_get (&thread_boost);
  errno = 0;
  *before = getpriority (PRIO_PROCESS, (id_t) tid);
  if (errno != 0 || *before == want)
    return FALSE;
  if (setpriority (PRIO_PROCESS, (id_t) tid, want) == 0)
    return TRUE;
  /* Said once: without CAP_SYS_NICE it moves at the nice it has. */
  if (g_atomic_int_compare_and_exchange (&thread_boost_refused, 0, 1))
    g_message ("the moving thread cannot run at nice %d (%s): it moves at nice %d", want,
               g_strerror (errno), *before);
  return FALSE;
}

void
vt_migrate_restore_thread (int before)
{
  setpriority (PRIO_PROCESS, (id_t) syscall (SYS_gettid), before);
}

static void
range_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  (void) source;
  const RangeJob *job = data;
  VtMigrateStats stats;
  GError *error = NULL;
  int before = 0;
  gboolean boosted = vt_migrate_boost_thread (&before);
  gboolean ok = migrate_range (&job->walk, &stats, cancellable, &error);
  if (boosted)
    vt_migrate_restore_thread (before);
  if (ok)
    g_task_return_pointer (task, g_memdup2 (&stats, sizeof stats), g_free);
  else
    g_task_return_error (task, error);
}

void
vt_migrate_range_async (const VtProcess *process, guint64 start, guint64 end, int node,
                        gboolean huge_pages, guint64 max_bytes, GArray *skip,
                        GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, VT_TASK_TAG (vt_migrate_range_async));
  RangeJob *job = g_new0 (RangeJob, 1);
  job->walk = (Walk) { *process, start, end, node, huge_pages, max_bytes, NULL, 0 };
  if (skip) {
    job->skip = skip;
    job->walk.skip = (const VtMigrateSpan *) (gpointer) skip->data;
    job->walk.n_skip = skip->len;
  }
  g_task_set_task_data (task, job, range_job_free);
  /* Its completion hands the next move out: dispatched before the heat's
   * stream and the timers. At one CPU beside four busy guests the main
   * loop was runnable for all but 0.2 s of a 4.5 s round, and each move's
   * hand-off waited behind the dispatches ahead of it: the moves
   * themselves took 0.1-2.5 s of each round. */
  g_task_set_priority (task, G_PRIORITY_HIGH);
  /* move_pages blocks while the kernel copies the pages. */
  g_task_run_in_thread (task, range_thread);
}

VtMigrateStats *
vt_migrate_range_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
