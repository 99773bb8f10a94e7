/* Moving pages between nodes. The real move_pages(2) on the test's own
 * memory (this host has one node: everything is on node 0 already), and a
 * fake two-node kernel behind vt_migrate_set_move_pages_func for what one
 * node cannot show: real moves, the max_bytes budget, ENOMEM, huge pages,
 * cancellation between batches. */
#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <numa.h>
#include <numaif.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/vt-error.h"
#include "common/vt-process.h"
#include "common/vt-sysfs.h"
#include "migration/vt-migrate.h"
#include "vt-test-tree.h"

static guint64
page (void)
{
  return (guint64) sysconf (_SC_PAGESIZE);
}

static void
rm_tree (const char *path)
{
  GDir *dir = g_file_test (path, G_FILE_TEST_IS_SYMLINK) ? NULL : g_dir_open (path, 0, NULL);
  if (!dir) {
    g_unlink (path);
    return;
  }
  const char *name;
  while ((name = g_dir_read_name (dir))) {
    g_autofree char *child = g_build_filename (path, name, NULL);
    rm_tree (child);
  }
  g_dir_close (dir);
  g_rmdir (path);
}

/* The start time fake roots give their process (proc/PID/stat field 22). */
#define FAKE_START 403450

/* A fake root whose proc/PID/status says `mems` (NULL: no such line), its
 * stat FAKE_START. */
static char *
fake_root (GPid pid, const char *mems)
{
  char *root = vt_test_make_tmpdir ("vt-migrate-XXXXXX");
  vt_test_put_stat (root, pid, FAKE_START);
  g_autofree char *rel = g_strdup_printf ("proc/%d/status", (int) pid);
  g_autofree char *line = mems ? g_strdup_printf ("Mems_allowed_list:\t%s\n", mems) : g_strdup ("");
  g_autofree char *text = g_strdup_printf ("Name:\tqemu\nPid:\t%d\n%sVoluntary_ctxt_switches:\t1\n",
                                           (int) pid, line);
  vt_test_put_file (root, rel, text);
  vt_sysfs_set_root (root);
  return root;
}

static void
fake_root_done (char *root)
{
  vt_sysfs_set_root (NULL);
  rm_tree (root);
  g_free (root);
}

/* n anonymous pages of our own, no THP (so each page is its own folio). */
static char *
map_pages (guint n)
{
  char *m = mmap (NULL, n * page (), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  g_assert_true (m != MAP_FAILED);
  g_assert_cmpint (madvise (m, n * page (), MADV_NOHUGEPAGE), ==, 0);
  return m;
}

static guint64
addr (const void *p)
{
  return (guint64) GPOINTER_TO_SIZE (p);
}

/* The process `pid` names, under the current sysfs root. */
static VtProcess
proc_of (GPid pid)
{
  VtProcess p;
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_process_identify (pid, &p, &error));
  g_assert_no_error (error);
  return p;
}

/* vt_migrate_range on n pages of ours from m. */
static gboolean
own_range (const char *m, guint n, int node, guint64 max_bytes, VtMigrateStats *stats,
           GError **error)
{
  VtProcess self = proc_of (getpid ());
  return vt_migrate_range (&self, addr (m), addr (m) + n * page (), node, FALSE, max_bytes, NULL,
                           0, stats, error);
}

static gboolean
single_node_host (void)
{
  return !g_file_test ("/sys/devices/system/node/node1", G_FILE_TEST_EXISTS);
}

/* ---- The real syscall on our own pages ---- */

/* Touched pages are on node 0 already, untouched ones not present. */
static void
test_real_half_touched (void)
{
  const guint n = 64;
  char *m = map_pages (n);
  for (guint i = 0; i < n; i += 2)
    m[i * page ()] = 1;

  VtMigrateStats stats;
  g_autoptr (GError) error = NULL;
  g_assert_true (own_range (m, n, 0, 0, &stats, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (stats.already, ==, 32 * page ());
  g_assert_cmpuint (stats.skipped, ==, 32 * page ());
  g_assert_cmpuint (stats.moved, ==, 0);
  g_assert_cmpuint (stats.busy, ==, 0);
  g_assert_cmpuint (stats.failed, ==, 0);
  g_assert_false (stats.out_of_memory);

  guint64 addrs[64];
  int nodes[64];
  for (guint i = 0; i < n; i++)
    addrs[i] = addr (m + i * page ());
  g_assert_true (vt_migrate_query_nodes (getpid (), addrs, n, nodes, &error));
  for (guint i = 0; i < n; i++)
    g_assert_cmpint (nodes[i], ==, i % 2 ? -ENOENT : 0);
  munmap (m, n * page ());
}

/* A hole in the range is skipped, not an error. */
static void
test_real_hole (void)
{
  char *m = map_pages (16);
  memset (m, 1, 16 * page ());
  g_assert_cmpint (munmap (m + 6 * page (), 4 * page ()), ==, 0);

  VtMigrateStats stats;
  g_autoptr (GError) error = NULL;
  g_assert_true (own_range (m, 16, 0, 0, &stats, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (stats.already, ==, 12 * page ());
  g_assert_cmpuint (stats.skipped, ==, 4 * page ());
  g_assert_cmpuint (stats.moved + stats.busy + stats.failed, ==, 0);

  guint64 hole = addr (m + 7 * page ());
  int node = 0;
  g_assert_true (vt_migrate_query_nodes (getpid (), &hole, 1, &node, &error));
  g_assert_cmpint (node, ==, -EFAULT);
  munmap (m, 6 * page ());
  munmap (m + 10 * page (), 6 * page ());
}

/* A node outside the cpuset is refused before any call; inside the cpuset
 * but without memory, the kernel's ENODEV is reported (UNSUPPORTED too). */
static void
test_real_outside_cpuset (void)
{
  if (!single_node_host ()) {
    g_test_skip ("node 1 exists on this host");
    return;
  }
  char *m = map_pages (4);
  memset (m, 1, 4 * page ());
  VtMigrateStats stats;
  g_autoptr (GError) error = NULL;

  char *root = fake_root (getpid (), "0");
  g_assert_false (own_range (m, 4, 1, 0, &stats, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED);
  g_autofree char *pid = g_strdup_printf ("pid %d", getpid ());
  g_assert_nonnull (strstr (error->message, pid));
  g_assert_nonnull (strstr (error->message, "node 1"));
  g_assert_nonnull (strstr (error->message, "cpuset"));
  g_assert_cmpuint (stats.moved + stats.already + stats.skipped + stats.busy + stats.failed, ==, 0);
  g_clear_error (&error);
  fake_root_done (root);

  root = fake_root (getpid (), "0-1");
  g_assert_false (own_range (m, 4, 1, 0, &stats, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, g_strerror (ENODEV)));
  g_assert_nonnull (strstr (error->message, "to node 1"));
  g_assert_cmpuint (stats.moved, ==, 0);
  fake_root_done (root);

  guint64 a = addr (m);
  int node = -1;
  g_assert_true (vt_migrate_query_nodes (getpid (), &a, 1, &node, NULL));
  g_assert_cmpint (node, ==, 0);
  munmap (m, 4 * page ());
}

/* A reaped child: no /proc/PID, and move_pages says ESRCH. */
static void
test_real_gone (void)
{
  pid_t child = fork ();
  g_assert_cmpint (child, >=, 0);
  if (child == 0)
    _exit (0);
  g_assert_cmpint (waitpid (child, NULL, 0), ==, child);

  char *m = map_pages (1);
  m[0] = 1;
  VtMigrateStats stats;
  g_autoptr (GError) error = NULL;
  VtProcess gone = { child, 1 };
  g_assert_false (vt_migrate_range (&gone, addr (m), addr (m) + page (), 0, FALSE, 0, NULL, 0,
                                    &stats, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_GONE);
  g_clear_error (&error);

  guint64 a = addr (m);
  int node;
  g_assert_false (vt_migrate_query_nodes (child, &a, 1, &node, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_GONE);
  g_clear_error (&error);

  /* Its status still readable (a fake), the syscall is what notices. */
  char *root = fake_root (child, "0");
  VtProcess faked = { child, FAKE_START };
  g_assert_false (vt_migrate_range (&faked, addr (m), addr (m) + page (), 0, FALSE, 0, NULL, 0,
                                    &stats, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_GONE);
  g_assert_nonnull (strstr (error->message, "move_pages"));
  fake_root_done (root);
  munmap (m, page ());
}

/* On one node nothing ever moves, so max_bytes is never reached: the whole
 * range is looked at. (The budget itself: /migrate/fake/max-bytes.) */
static void
test_real_max_bytes_one_node (void)
{
  char *m = map_pages (64);
  memset (m, 1, 64 * page ());
  VtMigrateStats stats;
  g_assert_true (own_range (m, 64, 0, page (), &stats, NULL));
  g_assert_cmpuint (stats.already, ==, 64 * page ());
  g_assert_cmpuint (stats.moved, ==, 0);
  munmap (m, 64 * page ());
}

static void
test_invalid_range (void)
{
  g_autoptr (GError) error = NULL;
  VtProcess self = proc_of (getpid ());
  g_assert_false (vt_migrate_range (&self, page () + 1, 4 * page (), 0, FALSE, 0, NULL, 0, NULL,
                                    &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
}

/* ---- Async ---- */

static void
on_done (GObject *source, GAsyncResult *result, gpointer data)
{
  (void) source;
  *(GAsyncResult **) data = g_object_ref (result);
}

static VtMigrateStats *
run_async (GPid pid, guint64 start, guint64 end, int node, guint64 max_bytes,
           GCancellable *cancellable, GError **error)
{
  GAsyncResult *result = NULL;
  VtProcess process = proc_of (pid);
  vt_migrate_range_async (&process, start, end, node, FALSE, max_bytes, NULL, cancellable, on_done,
                          &result);
  while (!result)
    g_main_context_iteration (NULL, TRUE);
  VtMigrateStats *stats = vt_migrate_range_finish (result, error);
  g_object_unref (result);
  return stats;
}

/* The scheduler's count of this thread's time on a CPU grows with the
 * thread's own CPU clock (both are its sum_exec_runtime), and a move's
 * three times add up: on a CPU and waiting for one within its wall time. */
static void
test_sched_times (void)
{
  guint64 on0, wait0, on1, wait1;
  g_assert_true (vt_thread_sched_times (&on0, &wait0));
  guint64 start = vt_thread_cpu_us ();
  while (vt_thread_cpu_us () - start < 20000)
    ;
  g_assert_true (vt_thread_sched_times (&on1, NULL));
  g_assert_true (vt_thread_sched_times (NULL, &wait1));
  g_assert_cmpuint (on1 - on0, >=, 19000);
  g_assert_cmpuint (wait1, >=, wait0);

  char *m = map_pages (64);
  for (guint i = 0; i < 64; i++)
    m[i * page ()] = 1;
  VtMigrateStats st;
  g_assert_true (own_range (m, 64, 0, 0, &st, NULL));
  g_assert_cmpuint (st.cpu_us + st.wait_us, <=, st.wall_us + 1000);
  munmap (m, 64 * page ());
}

static void
test_async_same_stats (void)
{
  char *m = map_pages (64);
  for (guint i = 0; i < 64; i += 4)
    m[i * page ()] = 1;
  VtMigrateStats sync;
  g_assert_true (own_range (m, 64, 0, 0, &sync, NULL));

  g_autoptr (GError) error = NULL;
  g_autofree VtMigrateStats *async = run_async (getpid (), addr (m), addr (m) + 64 * page (), 0, 0,
                                                NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (async);
  g_assert_cmpuint (async->already, ==, 16 * page ());
  g_assert_cmpuint (async->skipped, ==, 48 * page ());
  /* The counts are the same; the time each took is not. */
  async->cpu_us = sync.cpu_us = async->wait_us = sync.wait_us = 0;
  async->wall_us = sync.wall_us = 0;
  g_assert_cmpmem (async, sizeof *async, &sync, sizeof sync);
  munmap (m, 64 * page ());
}

static void
test_async_cancelled (void)
{
  char *m = map_pages (4);
  memset (m, 1, 4 * page ());
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_cancellable_cancel (cancellable);
  g_autoptr (GError) error = NULL;
  g_assert_null (run_async (getpid (), addr (m), addr (m) + 4 * page (), 0, 0, cancellable,
                            &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  munmap (m, 4 * page ());
}

/* ---- Mems_allowed_list ---- */

/* Ours, as /proc says, equals the kernel's answer to get_mempolicy; and a
 * captured copy under a fake root parses the same. */
static void
test_allowed_real (void)
{
  g_assert_cmpint (numa_available (), >=, 0);
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) nodes = vt_migrate_allowed_nodes (getpid (), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (nodes->len, >=, 1);

  struct bitmask *mems = numa_get_mems_allowed ();
  guint set = 0;
  for (int n = 0; n <= numa_max_possible_node (); n++)
    set += numa_bitmask_isbitset (mems, n);
  g_assert_cmpuint (set, ==, nodes->len);
  for (guint i = 0; i < nodes->len; i++)
    g_assert_true (numa_bitmask_isbitset (mems, g_array_index (nodes, guint, i)));
  numa_bitmask_free (mems);

  g_autofree char *captured = NULL;
  g_assert_true (g_file_get_contents ("/proc/self/status", &captured, NULL, NULL));
  char *root = vt_test_make_tmpdir ("vt-migrate-XXXXXX");
  vt_test_put_file (root, "proc/4242/status", captured);
  vt_sysfs_set_root (root);
  g_autoptr (GArray) copy = vt_migrate_allowed_nodes (4242, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (copy->data, copy->len * sizeof (guint), nodes->data,
                   nodes->len * sizeof (guint));
  fake_root_done (root);
}

static void
test_allowed_fake (void)
{
  g_autoptr (GError) error = NULL;
  char *root = fake_root (4242, "0-1,3");
  g_autoptr (GArray) nodes = vt_migrate_allowed_nodes (4242, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (nodes->len, ==, 3);
  g_assert_cmpuint (g_array_index (nodes, guint, 0), ==, 0);
  g_assert_cmpuint (g_array_index (nodes, guint, 1), ==, 1);
  g_assert_cmpuint (g_array_index (nodes, guint, 2), ==, 3);

  g_assert_null (vt_migrate_allowed_nodes (4243, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_GONE);
  g_assert_nonnull (strstr (error->message, "4243"));
  g_clear_error (&error);
  fake_root_done (root);

  root = fake_root (4242, "0-x");
  g_assert_null (vt_migrate_allowed_nodes (4242, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "proc/4242/status"));
  g_clear_error (&error);
  fake_root_done (root);

  /* No cpusets: the nodes with memory. */
  root = fake_root (4242, NULL);
  g_assert_null (vt_migrate_allowed_nodes (4242, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  vt_test_put_file (root, "sys/devices/system/node/has_memory", "0-1\n");
  g_autoptr (GArray) all = vt_migrate_allowed_nodes (4242, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (all->len, ==, 2);
  fake_root_done (root);
}

/* ---- A fake two-node kernel ---- */

#define FAKE_PID 4242
#define FAKE_PAGES (3 * VT_MIGRATE_BATCH)
#define FAKE_BASE ((guint64) 1 << 32)
static const VtProcess fake_process = { FAKE_PID, FAKE_START };

typedef struct {
  int where[FAKE_PAGES];      /* node, or -ENOENT / -EFAULT */
  guint head[FAKE_PAGES];     /* first page of its folio */
  guint len[FAKE_PAGES];      /* pages in its folio (valid at the head) */
  gboolean shared[FAKE_PAGES];
  gboolean pinned[FAKE_PAGES]; /* -EBUSY in every move */
  guint asked[FAKE_PAGES];     /* moves that asked for it */
  guint free_pages[2];
  guint queries, moves;
  GCancellable *cancel_after_move; /* cancelled after the first move call */
  const char *reuse_after_move;    /* a root: the pid names another process after the first */
  guint sleep_ms, spin_ms; /* each move waits (off CPU) or works (on it) this long */
  int nice; /* the calling thread's, at the last move */
} FakeKernel;

static FakeKernel fk;

static double
thread_cpu_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static gint64
fake_index (void *p)
{
  guint64 a = (guint64) GPOINTER_TO_SIZE (p);
  if (a < FAKE_BASE || a >= FAKE_BASE + FAKE_PAGES * page ())
    return -1;
  return (gint64) ((a - FAKE_BASE) / page ());
}

/* Like the kernel: a page whose folio was queued by the entry just before
 * reports -EBUSY (already isolated), though it moves with its folio; a
 * target without room fails the whole call with ENOMEM, statuses unwritten
 * from there on. */
static long
fake_move_pages (int pid, unsigned long count, void **pages, const int *nodes, int *status,
                 int flags)
{
  if (pid != FAKE_PID) {
    errno = ESRCH;
    return -1;
  }
  if (!nodes) {
    fk.queries++;
    for (unsigned long i = 0; i < count; i++) {
      gint64 x = fake_index (pages[i]);
      status[i] = x < 0 ? -EFAULT : fk.where[x];
    }
    return 0;
  }
  g_assert_cmpint (flags, ==, MPOL_MF_MOVE);
  fk.moves++;
  fk.nice = getpriority (PRIO_PROCESS, (id_t) syscall (SYS_gettid));
  if (fk.sleep_ms)
    g_usleep (fk.sleep_ms * 1000);
  for (double end = thread_cpu_s () + fk.spin_ms / 1000.0; thread_cpu_s () < end;)
    ;
  gint64 queued = -1; /* the folio the previous entry moved */
  for (unsigned long i = 0; i < count; i++) {
    gint64 x = fake_index (pages[i]);
    int to = nodes[i];
    gint64 moved = -1;
    if (x >= 0)
      fk.asked[x]++;
    if (x < 0)
      status[i] = -EFAULT;
    else if (fk.pinned[x] && fk.where[x] >= 0 && fk.where[x] != to)
      status[i] = -EBUSY;
    else if (fk.where[x] < 0)
      status[i] = fk.where[x];
    else if (fk.head[x] == queued)
      status[i] = -EBUSY;
    else if (fk.where[x] == to)
      status[i] = to;
    else if (fk.shared[x])
      status[i] = -EACCES;
    else {
      guint h = fk.head[x], n = fk.len[h];
      if (fk.free_pages[to] < n) {
        errno = ENOMEM;
        return -1;
      }
      fk.free_pages[fk.where[x]] += n;
      fk.free_pages[to] -= n;
      for (guint k = h; k < h + n; k++)
        fk.where[k] = to;
      status[i] = to;
      moved = h;
    }
    queued = moved;
  }
  if (fk.cancel_after_move && fk.moves == 1)
    g_cancellable_cancel (fk.cancel_after_move);
  if (fk.reuse_after_move && fk.moves == 1)
    vt_test_put_stat (fk.reuse_after_move, FAKE_PID, FAKE_START + 1);
  return 0;
}

typedef struct {
  char *root;
} Fixture;

/* n base pages on node 0, the rest unmapped; the process may use 0-1. */
static void
fake_setup (Fixture *fx, gconstpointer data)
{
  (void) data;
  memset (&fk, 0, sizeof fk);
  for (guint i = 0; i < FAKE_PAGES; i++) {
    fk.where[i] = -EFAULT;
    fk.head[i] = i;
    fk.len[i] = 1;
  }
  fk.free_pages[0] = fk.free_pages[1] = G_MAXUINT / 2;
  fx->root = fake_root (FAKE_PID, "0-1");
  vt_migrate_set_move_pages_func (fake_move_pages);
}

static void
fake_teardown (Fixture *fx, gconstpointer data)
{
  (void) data;
  vt_migrate_set_move_pages_func (NULL);
  fake_root_done (fx->root);
}

static void
fake_place (guint from, guint n, int node)
{
  for (guint i = from; i < from + n; i++)
    fk.where[i] = node;
}

static guint
fake_count_on (int node)
{
  guint c = 0;
  for (guint i = 0; i < FAKE_PAGES; i++)
    c += fk.where[i] == node;
  return c;
}

static guint64
fake_addr (guint i)
{
  return FAKE_BASE + i * page ();
}

/* Every status lands in its count; moved pages are on the target after. */
static void
test_fake_two_nodes (Fixture *fx, gconstpointer data)
{
  (void) fx, (void) data;
  fake_place (0, 8, 0);
  fake_place (8, 4, 1);
  fake_place (12, 2, -ENOENT); /* 14: -EFAULT */
  fake_place (15, 1, 0);
  fk.shared[15] = TRUE;

  VtMigrateStats stats;
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_migrate_range (&fake_process, fake_addr (0), fake_addr (16), 1, FALSE, 0, NULL,
                                   0, &stats, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (stats.moved, ==, 8 * page ());
  g_assert_cmpuint (stats.already, ==, 4 * page ());
  g_assert_cmpuint (stats.skipped, ==, 3 * page ());
  g_assert_cmpuint (stats.failed, ==, 1 * page ());
  g_assert_cmpuint (stats.busy, ==, 0);
  g_assert_false (stats.out_of_memory);
  g_assert_cmpuint (fake_count_on (1), ==, 12);
  g_assert_cmpint (fk.where[15], ==, 0);
  g_assert_cmpuint (fk.moves, ==, 1);
}

/* The pid now names another process (the VM's QEMU exited, the pid was
 * reused): not one page moves, and the error says so. */
static void
test_fake_reused_pid_moves_nothing (Fixture *fx, gconstpointer data)
{
  (void) data;
  fake_place (0, FAKE_PAGES, 0);
  vt_test_put_stat (fx->root, FAKE_PID, FAKE_START + 1);
  VtMigrateStats stats;
  g_autoptr (GError) error = NULL;
  g_assert_false (vt_migrate_range (&fake_process, fake_addr (0), fake_addr (FAKE_PAGES), 1, FALSE,
                                    0, NULL, 0, &stats, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_GONE);
  g_assert_nonnull (strstr (error->message, "now names a process"));
  g_assert_cmpuint (fk.moves, ==, 0);
  g_assert_cmpuint (fake_count_on (1), ==, 0);
}

/* ... and when that happens in the middle of a range, no batch after it
 * moves: the identity is checked before each. */
static void
test_fake_reused_pid_mid_range (Fixture *fx, gconstpointer data)
{
  (void) data;
  fake_place (0, FAKE_PAGES, 0);
  fk.reuse_after_move = fx->root;
  VtMigrateStats stats;
  g_autoptr (GError) error = NULL;
  g_assert_false (vt_migrate_range (&fake_process, fake_addr (0), fake_addr (FAKE_PAGES), 1, FALSE,
                                    0, NULL, 0, &stats, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_GONE);
  g_assert_cmpuint (fk.moves, ==, 1);
  g_assert_cmpuint (fake_count_on (1), ==, VT_MIGRATE_BATCH);
  g_assert_cmpuint (stats.moved, ==, VT_MIGRATE_BATCH * page ());
}

/* A THP of 512 pages moves whole and counts 2 MiB once, though the kernel
 * says -EBUSY for its second page. */
static void
test_fake_huge_page (Fixture *fx, gconstpointer data)
{
  (void) fx, (void) data;
  fake_place (0, 516, 0);
  for (guint i = 0; i < 512; i++)
    fk.head[i] = 0;
  fk.len[0] = 512;

  VtMigrateStats stats;
  g_assert_true (vt_migrate_range (&fake_process, fake_addr (0), fake_addr (516), 1, FALSE, 0,
                                   NULL, 0, &stats, NULL));
  g_assert_cmpuint (stats.moved, ==, 516 * page ());
  g_assert_cmpuint (stats.busy + stats.failed + stats.already, ==, 0);
  g_assert_cmpuint (fake_count_on (1), ==, 516);
}

/* The fake's pages [from, from + 512 * n) as n THPs. */
static void
fake_huge (guint from, guint n)
{
  for (guint i = from; i < from + 512 * n; i++)
    fk.head[i] = i - (i - from) % 512;
  for (guint h = 0; h < n; h++)
    fk.len[from + 512 * h] = 512;
}

static guint
fake_asked (void)
{
  guint c = 0;
  for (guint i = 0; i < FAKE_PAGES; i++)
    c += fk.asked[i];
  return c;
}

/* Known to be in huge pages, a range asks the kernel for one page of each
 * (not 512, each looked up under the mmap lock), and counts as before:
 * every page by where it is after. A piece of base pages among them still
 * moves whole, its other pages asked for in a second call. */
static void
test_fake_huge_pages_asked_once (Fixture *fx, gconstpointer data)
{
  (void) fx, (void) data;
  fake_place (0, 2048, 0);
  fake_huge (0, 3); /* pages 1536-2047: base pages */

  VtMigrateStats stats;
  g_assert_true (vt_migrate_range (&fake_process, fake_addr (0), fake_addr (2048), 1, TRUE, 0,
                                   NULL, 0, &stats, NULL));
  g_assert_cmpuint (stats.moved, ==, 2048 * page ());
  g_assert_cmpuint (stats.busy + stats.failed + stats.already + stats.skipped, ==, 0);
  g_assert_cmpuint (fake_count_on (1), ==, 2048);
  g_assert_cmpuint (fake_asked (), ==, 3 + 512);
  g_assert_cmpuint (fk.moves, ==, 2);

  /* Not told: every page asked for, as the kernel's tails answer -EBUSY. */
  memset (fk.asked, 0, sizeof fk.asked);
  g_assert_true (vt_migrate_range (&fake_process, fake_addr (0), fake_addr (2048), 0, FALSE, 0,
                                   NULL, 0, &stats, NULL));
  g_assert_cmpuint (stats.moved, ==, 2048 * page ());
  g_assert_cmpuint (fake_asked (), ==, 2048);
}

/* Told wrong (base pages only): every page still moves and counts once,
 * and after a batch of pieces that were no huge pages the walk asks page
 * by page (no second call a batch). */
static void
test_fake_huge_pages_told_wrong (Fixture *fx, gconstpointer data)
{
  (void) fx, (void) data;
  fake_place (0, FAKE_PAGES, 0);

  VtMigrateStats stats;
  g_assert_true (vt_migrate_range (&fake_process, fake_addr (0), fake_addr (FAKE_PAGES), 1, TRUE,
                                   0, NULL, 0, &stats, NULL));
  g_assert_cmpuint (stats.moved, ==, FAKE_PAGES * page ());
  g_assert_cmpuint (stats.busy + stats.failed + stats.already + stats.skipped, ==, 0);
  g_assert_cmpuint (fake_count_on (1), ==, FAKE_PAGES);
  g_assert_cmpuint (fake_asked (), ==, FAKE_PAGES);
  g_assert_cmpuint (fk.moves, ==, 2 + 1 + 1);
}

/* A range whose ends lie inside huge pages: the kernel moves both whole,
 * and what moved beside the range counts too (the tiering engine's belief
 * is what moved). Pages beside it that were on the target already, or not
 * in a huge page it moved, do not count. */
static void
test_fake_huge_pages_straddling_ends (Fixture *fx, gconstpointer data)
{
  (void) fx, (void) data;
  fake_place (0, 1024, 0);
  fake_place (1024, 512, 0); /* base pages beside the tail's 2 MiB: they stay */
  for (guint i = 0; i < 1024; i++)
    fk.head[i] = i < 512 ? 0 : 512;
  fk.len[0] = fk.len[512] = 512;

  VtMigrateStats stats;
  g_assert_true (vt_migrate_range (&fake_process, fake_addr (256), fake_addr (768), 1, FALSE, 0,
                                   NULL, 0, &stats, NULL));
  g_assert_cmpuint (fake_count_on (1), ==, 1024);
  g_assert_cmpuint (stats.moved, ==, 1024 * page ());
  g_assert_cmpuint (stats.beside, ==, 512 * page ());

  /* Back, from inside the first only: its other pages count, the second
   * huge page is not touched. */
  g_assert_true (vt_migrate_range (&fake_process, fake_addr (100), fake_addr (200), 0, FALSE, 0,
                                   NULL, 0, &stats, NULL));
  g_assert_cmpuint (stats.moved, ==, 512 * page ());
  g_assert_cmpuint (stats.beside, ==, 412 * page ());
  g_assert_cmpuint (fake_count_on (0), ==, 512 + 512);
}

/* The budget stops the walk: exactly that many pages moved, across a batch
 * boundary, and the third batch never even queried. */
static void
test_fake_max_bytes (Fixture *fx, gconstpointer data)
{
  (void) fx, (void) data;
  fake_place (0, FAKE_PAGES, 0);
  guint want = VT_MIGRATE_BATCH + 5;

  VtMigrateStats stats;
  g_assert_true (vt_migrate_range (&fake_process, fake_addr (0), fake_addr (FAKE_PAGES), 1, FALSE,
                                   want * page () + 100, NULL, 0, &stats, NULL));
  g_assert_cmpuint (stats.moved, ==, want * page ());
  g_assert_cmpuint (stats.already + stats.busy + stats.skipped + stats.failed, ==, 0);
  g_assert_cmpuint (fake_count_on (1), ==, want);
  g_assert_cmpuint (fk.moves, ==, 2);
  g_assert_cmpuint (fk.queries, ==, 4); /* before and after each of 2 moves */
}

/* A move's cost is its thread's CPU time: the kernel copying counts, and
 * waiting (for a CPU, on a busy host) does not. */
static void
test_fake_cpu_time (Fixture *fx, gconstpointer data)
{
  (void) fx, (void) data;
  fake_place (0, 16, 0);
  VtMigrateStats stats;
  fk.sleep_ms = 60;
  g_assert_true (vt_migrate_range (&fake_process, fake_addr (0), fake_addr (8), 1, FALSE, 0, NULL,
                                   0, &stats, NULL));
  g_assert_cmpuint (stats.moved, ==, 8 * page ());
  g_assert_cmpuint (stats.cpu_us, <, 30000);
  fk.sleep_ms = 0, fk.spin_ms = 60;
  g_assert_true (vt_migrate_range (&fake_process, fake_addr (8), fake_addr (16), 1, FALSE, 0, NULL,
                                   0, &stats, NULL));
  g_assert_cmpuint (stats.cpu_us, >=, 60000);
}

/* ENOMEM on the target ends the round: what moved counts, the rest failed,
 * the next batch is not visited. */
static void
test_fake_out_of_memory (Fixture *fx, gconstpointer data)
{
  (void) fx, (void) data;
  fake_place (0, VT_MIGRATE_BATCH + 16, 0);
  fk.free_pages[1] = 5;

  VtMigrateStats stats;
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_migrate_range (&fake_process, fake_addr (0), fake_addr (VT_MIGRATE_BATCH + 16),
                                   1, FALSE, 0, NULL, 0, &stats, &error));
  g_assert_no_error (error);
  g_assert_true (stats.out_of_memory);
  g_assert_cmpuint (stats.moved, ==, 5 * page ());
  g_assert_cmpuint (stats.failed, ==, (VT_MIGRATE_BATCH - 5) * page ());
  g_assert_cmpuint (stats.no_memory, ==, stats.failed);
  /* The batch's before and after, and the pages beside the range's end
   * (up to its 2 MiB boundary) before and after. */
  g_assert_cmpuint (fk.queries, ==, 4);
  g_assert_cmpuint (fake_count_on (1), ==, 5);
}

/* Cancelled during the first batch: no second batch, CANCELLED. */
static void
test_fake_cancel_between_batches (Fixture *fx, gconstpointer data)
{
  (void) fx, (void) data;
  fake_place (0, FAKE_PAGES, 0);
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  fk.cancel_after_move = cancellable;

  g_autoptr (GError) error = NULL;
  g_assert_null (run_async (FAKE_PID, fake_addr (0), fake_addr (FAKE_PAGES), 1, 0, cancellable,
                            &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpuint (fk.moves, ==, 1);
  g_assert_cmpuint (fake_count_on (1), ==, VT_MIGRATE_BATCH);
}

/* The moving thread runs at nice -priority while it moves (as root, or
 * with CAP_SYS_NICE: vtierd's case). */
static void
test_fake_priority (Fixture *fx, gconstpointer data)
{
  (void) fx, (void) data;
  fake_place (0, 64, 0);
  vt_migrate_set_priority (3);
  g_autoptr (GError) error = NULL;
  g_autofree VtMigrateStats *st = run_async (FAKE_PID, fake_addr (0), fake_addr (64), 1, 0, NULL,
                                             &error);
  g_assert_no_error (error);
  g_assert_cmpuint (st->moved, ==, 64 * page ());
  vt_migrate_set_priority (0);
  if (geteuid () != 0) {
    g_test_skip ("a negative nice needs CAP_SYS_NICE");
    return;
  }
  g_assert_cmpint (fk.nice, ==, -3);
}

/* Pages in `skip` are never asked for; where the shared and busy pages
 * sit comes back as runs, and the walk says how far it went. */
static void
test_fake_skip_and_refused (Fixture *fx, gconstpointer data)
{
  (void) fx, (void) data;
  fake_place (0, 64, 0);
  for (guint i = 10; i < 20; i++)
    fk.shared[i] = TRUE;
  fk.shared[30] = fk.shared[31] = TRUE;
  for (guint i = 40; i < 45; i++)
    fk.pinned[i] = TRUE;
  VtMigrateSpan skip[] = { { fake_addr (50), fake_addr (55) }, { fake_addr (58), fake_addr (60) } };
  VtMigrateStats stats;
  g_assert_true (vt_migrate_range (&fake_process, fake_addr (0), fake_addr (64), 1, FALSE, 0, skip,
                                   G_N_ELEMENTS (skip), &stats, NULL));
  for (guint i = 50; i < 60; i++)
    g_assert_cmpuint (fk.asked[i], ==, i >= 55 && i < 58);
  g_assert_cmpuint (stats.moved, ==, (64 - 10 - 2 - 5 - 7) * page ());
  g_assert_cmpuint (stats.walked_end, ==, fake_addr (64));
  g_assert_cmpuint (stats.shared, ==, 12 * page ());
  g_assert_cmpuint (stats.failed, ==, stats.shared);
  g_assert_cmpuint (stats.no_memory, ==, 0);
  g_assert_cmpuint (stats.n_refused, ==, 3);
  VtMigrateRefused want[] = { { fake_addr (10), fake_addr (20), 10 * page (), TRUE },
                              { fake_addr (30), fake_addr (32), 2 * page (), TRUE },
                              { fake_addr (40), fake_addr (45), 5 * page (), FALSE } };
  for (guint i = 0; i < 3; i++) {
    g_assert_cmpuint (stats.refused[i].start, ==, want[i].start);
    g_assert_cmpuint (stats.refused[i].end, ==, want[i].end);
    g_assert_cmpuint (stats.refused[i].bytes, ==, want[i].bytes);
    g_assert_cmpint (stats.refused[i].shared, ==, want[i].shared);
  }
}

/* More runs than fit: the nearest join, every refused page stays inside
 * a run, and the bytes add up. */
static void
test_fake_refused_runs_join (Fixture *fx, gconstpointer data)
{
  (void) fx, (void) data;
  guint n = VT_MIGRATE_REFUSED_MAX + 8;
  fake_place (0, 4 * n, 0);
  for (guint i = 0; i < n; i++)
    fk.shared[4 * i - (i == 5 ? 2 : 0)] = TRUE; /* one pair nearer than the rest */
  VtMigrateStats stats;
  g_assert_true (vt_migrate_range (&fake_process, fake_addr (0), fake_addr (4 * n), 1, FALSE, 0,
                                   NULL, 0, &stats, NULL));
  g_assert_cmpuint (stats.n_refused, ==, VT_MIGRATE_REFUSED_MAX);
  guint64 bytes = 0;
  for (guint r = 0; r < stats.n_refused; r++) {
    bytes += stats.refused[r].bytes;
    g_assert_true (stats.refused[r].shared);
  }
  g_assert_cmpuint (bytes, ==, n * page ());
  for (guint i = 0; i < 4 * n; i++) {
    gboolean inside = FALSE;
    for (guint r = 0; r < stats.n_refused; r++)
      inside |= fake_addr (i) >= stats.refused[r].start && fake_addr (i) < stats.refused[r].end;
    if (fk.shared[i])
      g_assert_true (inside);
  }
  /* The nearest pair, pages 16 and 18 (the others are 4 apart), joined. */
  gboolean joined = FALSE;
  for (guint r = 0; r < stats.n_refused; r++)
    joined |= stats.refused[r].start <= fake_addr (16) && stats.refused[r].end >= fake_addr (19);
  g_assert_true (joined);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/migrate/real/half-touched", test_real_half_touched);
  g_test_add_func ("/migrate/real/sched-times", test_sched_times);
  g_test_add_func ("/migrate/real/hole", test_real_hole);
  g_test_add_func ("/migrate/real/outside-cpuset", test_real_outside_cpuset);
  g_test_add_func ("/migrate/real/gone", test_real_gone);
  g_test_add_func ("/migrate/real/max-bytes-one-node", test_real_max_bytes_one_node);
  g_test_add_func ("/migrate/invalid-range", test_invalid_range);
  g_test_add_func ("/migrate/async/same-stats", test_async_same_stats);
  g_test_add_func ("/migrate/async/cancelled", test_async_cancelled);
  g_test_add_func ("/migrate/allowed-nodes/real", test_allowed_real);
  g_test_add_func ("/migrate/allowed-nodes/fake", test_allowed_fake);
#define add(path, fn) g_test_add (path, Fixture, NULL, fake_setup, fn, fake_teardown)
  add ("/migrate/fake/two-nodes", test_fake_two_nodes);
  add ("/migrate/fake/reused-pid-moves-nothing", test_fake_reused_pid_moves_nothing);
  add ("/migrate/fake/reused-pid-mid-range", test_fake_reused_pid_mid_range);
  add ("/migrate/fake/huge-page", test_fake_huge_page);
  add ("/migrate/fake/huge-pages-straddling-ends", test_fake_huge_pages_straddling_ends);
  add ("/migrate/fake/huge-pages-asked-once", test_fake_huge_pages_asked_once);
  add ("/migrate/fake/huge-pages-told-wrong", test_fake_huge_pages_told_wrong);
  add ("/migrate/fake/max-bytes", test_fake_max_bytes);
  add ("/migrate/fake/cpu-time", test_fake_cpu_time);
  add ("/migrate/fake/out-of-memory", test_fake_out_of_memory);
  add ("/migrate/fake/cancel-between-batches", test_fake_cancel_between_batches);
  add ("/migrate/fake/skip-and-refused", test_fake_skip_and_refused);
  add ("/migrate/fake/priority", test_fake_priority);
  add ("/migrate/fake/refused-runs-join", test_fake_refused_runs_join);
#undef add
  return g_test_run ();
}
