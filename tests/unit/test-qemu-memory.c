/* QEMU's own memory (vt-qemu-pages.h, vt-qemu-memory.h) on a fake /proc,
 * and behind vt_migrate_set_move_pages_func a two-node host that keeps
 * each page's node. Checked: which ranges its kdamond is given (not guest
 * RAM nor a page beside it, not kernel objects, guard pages or the vDSO;
 * near mappings joined), which pages are counted (not those another
 * process maps), and that of the regions DAMON reports only those unused
 * through two intervals go down and only those used come back up. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <gio/gio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/vt-qemu-pages.h"
#include "common/vt-error.h"
#include "common/vt-process.h"
#include "common/vt-sysfs.h"
#include "daemon/vt-qemu-memory.h"
#include "migration/vt-migrate.h"
#include "vt-test-tree.h"

#define PID 4242
#define START 403450
#define HEAP G_GUINT64_CONSTANT (0x55d000000000)
#define RAM G_GUINT64_CONSTANT (0x7f0000000000)
#define LIB G_GUINT64_CONSTANT (0x7f4000000000)
#define VCPU G_GUINT64_CONSTANT (0x7f5000000000)
#define GUARD G_GUINT64_CONSTANT (0x7f6000000000)

#define PM_PRESENT (G_GUINT64_CONSTANT (1) << 63)
#define PM_EXCLUSIVE (G_GUINT64_CONSTANT (1) << 56)

typedef struct {
  char *root;
  guint64 page;
  int pagemap_fd;
} Fixture;

/* The fake two-node kernel's page -> node (absent: node 0), and its moves. */
static GHashTable *fake_nodes;
static guint fake_moves;

static long
fake_move_pages (int pid, unsigned long count, void **pages, const int *nodes, int *status,
                 int flags)
{
  (void) pid;
  (void) flags;
  for (unsigned long i = 0; i < count; i++) {
    gpointer key = pages[i];
    if (nodes && key == GSIZE_TO_POINTER ((gsize) (LIB + (guint64) sysconf (_SC_PAGESIZE)))) {
      status[i] = -EACCES; /* the library's shared page: MPOL_MF_MOVE moves none */
    } else if (nodes) {
      g_hash_table_insert (fake_nodes, key, GINT_TO_POINTER (nodes[i] + 1));
      fake_moves++;
      status[i] = nodes[i];
    } else {
      status[i] = GPOINTER_TO_INT (g_hash_table_lookup (fake_nodes, key));
      status[i] = status[i] ? status[i] - 1 : 0;
    }
  }
  return 0;
}

static int
node_of (guint64 addr)
{
  int n = GPOINTER_TO_INT (g_hash_table_lookup (fake_nodes, GSIZE_TO_POINTER ((gsize) addr)));
  return n ? n - 1 : 0;
}

static int
create_file (Fixture *fx, const char *rel, guint64 size)
{
  g_autofree char *full = g_build_filename (fx->root, rel, NULL);
  int fd = open (full, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (ftruncate (fd, (off_t) size), ==, 0);
  return fd;
}

static void
put_u64 (int fd, guint64 offset, guint64 value)
{
  g_assert_cmpint (pwrite (fd, &value, sizeof value, (off_t) offset), ==, sizeof value);
}

/* Page k of the mapping at `base`, present at `pfn`, mapped by QEMU alone
 * or not. */
static guint64
map_page (Fixture *fx, guint64 base, guint k, guint64 pfn, gboolean exclusive)
{
  guint64 addr = base + k * fx->page;
  put_u64 (fx->pagemap_fd, addr / fx->page * 8,
           PM_PRESENT | (exclusive ? PM_EXCLUSIVE : 0) | pfn);
  return addr;
}

static void
fixture_set_up (Fixture *fx, gconstpointer data)
{
  (void) data;
  fx->root = vt_test_make_tmpdir ("vt-qemu-memory-XXXXXX");
  fx->page = (guint64) sysconf (_SC_PAGESIZE);
  vt_test_put_stat (fx->root, PID, START);
  vt_test_put_file (fx->root, "proc/4242/status", "Name:\tqemu\nMems_allowed_list:\t0-1\n");
  fx->pagemap_fd = create_file (fx, "proc/4242/pagemap", 0);
  /* Its heap (4 pages), its guest RAM and a mapping right after it, a
   * library with a page of its own and one shared, a vCPU's kvm_run page,
   * a guard page, the vDSO. */
  g_autofree char *maps = g_strdup_printf (
    "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x rw-p 00000000 00:00 0          [heap]\n"
    "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x rw-p 00000000 00:00 0 \n"
    "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x rw-p 00000000 00:00 0 \n"
    "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x r--p 00000000 fe:01 1234   /usr/lib/libfoo.so.1\n"
    "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x rw-s 00000000 00:0f 42    anon_inode:kvm-vcpu:0\n"
    "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x ---p 00000000 00:00 0 \n"
    "7ffd0000000-7ffd0002000 r-xp 00000000 00:00 0                          [vdso]\n",
    HEAP, HEAP + 4 * fx->page, RAM, RAM + 8 * fx->page, RAM + 8 * fx->page,
    RAM + 16 * fx->page, LIB, LIB + 2 * fx->page, VCPU,
    VCPU + fx->page, GUARD, GUARD + fx->page);
  vt_test_put_file (fx->root, "proc/4242/maps", maps);
  for (guint k = 0; k < 4; k++)
    map_page (fx, HEAP, k, 0x100 + k, TRUE);
  for (guint k = 0; k < 10; k++)
    map_page (fx, RAM, k, 0x200 + k, TRUE);
  map_page (fx, LIB, 0, 0x300, TRUE);
  map_page (fx, LIB, 1, 0x301, FALSE);
  map_page (fx, VCPU, 0, 0x400, TRUE);
  map_page (fx, GUARD, 0, 0x500, TRUE);
  vt_sysfs_set_root (fx->root);
  fake_nodes = g_hash_table_new (NULL, NULL);
  fake_moves = 0;
  vt_migrate_set_move_pages_func (fake_move_pages);
}

static void
fixture_tear_down (Fixture *fx, gconstpointer data)
{
  (void) data;
  vt_migrate_set_move_pages_func (NULL);
  g_clear_pointer (&fake_nodes, g_hash_table_unref);
  close (fx->pagemap_fd);
  vt_sysfs_set_root (NULL);
  vt_test_remove_tree (fx->root);
  g_free (fx->root);
}

static const VtAddrRange *
ram_range (Fixture *fx)
{
  static VtAddrRange r;
  r.start = RAM;
  r.end = RAM + 8 * fx->page;
  return &r;
}

/* ---- its ranges and pages ---- */

/* The heap, the library's private mapping and the mapping that touches
 * the RAM (less a page) are watched; RAM, kernel objects, the guard page
 * and the vDSO are not. */
static void
test_ranges (Fixture *fx, gconstpointer data)
{
  (void) data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) ranges = vt_qemu_pages_ranges (PID, ram_range (fx), 1, &error);
  g_assert_no_error (error);
  const VtAddrRange *r = (const VtAddrRange *) ranges->data;
  g_assert_cmpuint (ranges->len, ==, 3);
  g_assert_cmphex (r[0].start, ==, HEAP);
  g_assert_cmphex (r[0].end, ==, HEAP + 4 * fx->page);
  g_assert_cmphex (r[1].start, ==, RAM + 9 * fx->page); /* a page away from the RAM */
  g_assert_cmphex (r[1].end, ==, RAM + 16 * fx->page);
  g_assert_cmphex (r[2].start, ==, LIB);
  g_assert_cmphex (r[2].end, ==, LIB + 2 * fx->page);
}

/* Mappings less than 2 MiB apart are one range; none joins across RAM. */
static void
test_ranges_joined (Fixture *fx, gconstpointer data)
{
  (void) data;
  guint64 mib = 1 << 20;
  g_autofree char *maps = g_strdup_printf (
    "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x rw-p 00000000 00:00 0 \n"
    "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x rw-p 00000000 00:00 0 \n"
    "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x rw-p 00000000 00:00 0 \n"
    "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x rw-p 00000000 00:00 0 \n",
    HEAP, HEAP + mib, HEAP + 2 * mib, HEAP + 3 * mib, RAM - 2 * fx->page - mib,
    RAM - 2 * fx->page, RAM + 8 * fx->page, RAM + 8 * fx->page + mib);
  vt_test_put_file (fx->root, "proc/4242/maps", maps);
  VtAddrRange ram = { RAM, RAM + 8 * fx->page };
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) ranges = vt_qemu_pages_ranges (PID, &ram, 1, &error);
  g_assert_no_error (error);
  const VtAddrRange *r = (const VtAddrRange *) ranges->data;
  g_assert_cmpuint (ranges->len, ==, 3);
  g_assert_cmphex (r[0].start, ==, HEAP);
  g_assert_cmphex (r[0].end, ==, HEAP + 3 * mib);
  g_assert_cmphex (r[1].end, ==, RAM - 2 * fx->page);
  g_assert_cmphex (r[2].start, ==, RAM + 9 * fx->page);
}

/* The pages present and QEMU's alone. */
static void
test_pages (Fixture *fx, gconstpointer data)
{
  (void) data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) ranges = vt_qemu_pages_ranges (PID, ram_range (fx), 1, &error);
  g_autoptr (VtQemuPages) pages = vt_qemu_pages_new (PID, &error);
  g_assert_no_error (error);
  g_autoptr (GArray) addrs = vt_qemu_pages_list (pages, (const VtAddrRange *) ranges->data,
                                                 ranges->len, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (addrs->len, ==, 6);
  for (guint k = 0; k < 4; k++)
    g_assert_cmphex (g_array_index (addrs, guint64, k), ==, HEAP + k * fx->page);
  g_assert_cmphex (g_array_index (addrs, guint64, 4), ==, RAM + 9 * fx->page);
  g_assert_cmphex (g_array_index (addrs, guint64, 5), ==, LIB); /* not LIB + 1: shared */
}

/* A QEMU that exited: VT_ERROR_GONE. */
static void
test_gone (Fixture *fx, gconstpointer data)
{
  (void) data;
  g_autofree char *maps = g_build_filename (fx->root, "proc/4242/maps", NULL);
  g_assert_cmpint (g_unlink (maps), ==, 0);
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) ranges = vt_qemu_pages_ranges (PID, ram_range (fx), 1, &error);
  g_assert_null (ranges);
  g_assert_error (error, VT_ERROR, VT_ERROR_GONE);
}

/* A QEMU that exited between its ranges and its pages: its pagemap reads
 * end early (a fake tree's truncated file: the kernel's reads of an exited
 * process's pagemap), VT_ERROR_GONE naming the process and the file. */
static void
test_pages_gone (Fixture *fx, gconstpointer data)
{
  (void) data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) ranges = vt_qemu_pages_ranges (PID, ram_range (fx), 1, &error);
  g_autoptr (VtQemuPages) pages = vt_qemu_pages_new (PID, &error);
  g_assert_no_error (error);
  g_assert_cmpint (ftruncate (fx->pagemap_fd, 0), ==, 0);
  g_autoptr (GArray) addrs = vt_qemu_pages_list (pages, (const VtAddrRange *) ranges->data,
                                                 ranges->len, &error);
  g_assert_null (addrs);
  g_assert_error (error, VT_ERROR, VT_ERROR_GONE);
  g_assert_nonnull (strstr (error->message, "process 4242 is gone"));
  g_assert_nonnull (strstr (error->message, "proc/4242/pagemap"));
}

/* ---- the moves ---- */

static VtQemuMemory *
memory_new (Fixture *fx)
{
  VtProcess process = { PID, START };
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) ranges = vt_qemu_pages_ranges (PID, ram_range (fx), 1, &error);
  g_assert_no_error (error);
  VtQemuMemory *memory = vt_qemu_memory_new (&process, (const VtAddrRange *) ranges->data,
                                             ranges->len, &error);
  g_assert_no_error (error);
  return memory;
}

/* One tick's sweep, run to its end. */
static const VtQemuMemoryStats *
tick (VtQemuMemory *memory, int top, int slow, guint64 room, gboolean wait_interval)
{
  guint64 before = vt_qemu_memory_stats (memory)->sweeps;
  if (wait_interval)
    g_usleep (G_USEC_PER_SEC); /* the interval: 1 s */
  vt_qemu_memory_tick (memory, top, slow, room, 1);
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (vt_qemu_memory_stats (memory)->sweeps == before && !vt_qemu_memory_error (memory) &&
         g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_null (vt_qemu_memory_error (memory));
  g_assert_cmpuint (vt_qemu_memory_stats (memory)->sweeps, ==, before + 1);
  return vt_qemu_memory_stats (memory);
}

/* Regions of an aggregation of 200 ms at 5 ms samples (40 a region). */
static void
load (VtQemuMemory *memory, const VtRegion *regions, guint n)
{
  vt_qemu_memory_load (memory, regions, n, 5000, 200000);
}

/* Unused through two intervals (2 s: ages of 10 aggregations of 200 ms)
 * on node 0: down to node 1; used on node 1: back up, into half the room
 * the top node has; unused for less, or used in too few samples: where
 * it is. */
static void
test_moves (Fixture *fx, gconstpointer data)
{
  (void) data;
  g_autoptr (VtQemuMemory) memory = memory_new (fx);
  guint64 p = fx->page;
  g_hash_table_insert (fake_nodes, GSIZE_TO_POINTER ((gsize) (HEAP + 3 * p)), GINT_TO_POINTER (2));

  const VtQemuMemoryStats *st = tick (memory, 0, 1, 0, FALSE);
  g_assert_cmpuint (st->bytes, ==, 6 * p);
  g_assert_cmpuint (st->top_bytes, ==, 5 * p);
  g_assert_cmpuint (fake_moves, ==, 0); /* no regions yet */

  VtRegion regions[] = {
    { .start = HEAP, .end = HEAP + 2 * p, .nr_accesses = 0, .age = 10 },          /* cold */
    { .start = HEAP + 2 * p, .end = HEAP + 3 * p, .nr_accesses = 0, .age = 9 },   /* not yet */
    { .start = HEAP + 3 * p, .end = HEAP + 4 * p, .nr_accesses = 4, .age = 1 },   /* used */
    { .start = RAM + 9 * p, .end = RAM + 16 * p, .nr_accesses = 1, .age = 5 },    /* barely */
    { .start = LIB, .end = LIB + 2 * p, .nr_accesses = 0, .age = 30 },            /* cold */
  };
  load (memory, regions, G_N_ELEMENTS (regions));
  /* No room on the top node: the used one waits on node 1. */
  st = tick (memory, 0, 1, 0, TRUE);
  g_assert_cmpint (node_of (HEAP + 3 * p), ==, 1);
  g_assert_cmpuint (st->promoted, ==, 0);
  /* Room: half of it is QEMU's to take. */
  st = tick (memory, 0, 1, 2 * p, TRUE);
  g_assert_cmpint (node_of (HEAP), ==, 1);
  g_assert_cmpint (node_of (HEAP + p), ==, 1);
  g_assert_cmpint (node_of (HEAP + 2 * p), ==, 0);
  g_assert_cmpint (node_of (HEAP + 3 * p), ==, 0);
  g_assert_cmpint (node_of (RAM + 9 * p), ==, 0);
  g_assert_cmpint (node_of (LIB), ==, 1);
  for (guint k = 0; k < 8; k++)
    g_assert_cmpint (node_of (RAM + k * p), ==, 0); /* guest RAM is not its to move */
  g_assert_cmpuint (st->demoted, ==, 3 * p);
  g_assert_cmpuint (st->failed, ==, 0); /* the shared one is not asked for */
  g_assert_cmpuint (st->promoted, ==, p);
  g_assert_cmpuint (st->cold_bytes, ==, 3 * p);
  g_assert_cmpuint (st->top_bytes, ==, 3 * p);
  g_assert_cmpuint (st->bytes, ==, 6 * p);

  /* The same again: nothing more moves. */
  guint moves = fake_moves;
  st = tick (memory, 0, 1, 2 * p, TRUE);
  g_assert_cmpuint (fake_moves, ==, moves);
  g_assert_cmpuint (st->demoted, ==, 3 * p);
}

/* Mode off (no nodes): counted, nothing moved. */
static void
test_no_moves_without_nodes (Fixture *fx, gconstpointer data)
{
  (void) data;
  g_autoptr (VtQemuMemory) memory = memory_new (fx);
  VtRegion cold = { .start = HEAP, .end = HEAP + 4 * fx->page, .nr_accesses = 0, .age = 100 };
  load (memory, &cold, 1);
  const VtQemuMemoryStats *st = tick (memory, -1, -1, 1 << 30, FALSE);
  g_assert_cmpuint (st->cold_bytes, ==, 4 * fx->page);
  g_assert_cmpuint (st->top_bytes, ==, 0);
  g_assert_cmpuint (st->demoted, ==, 0);
  g_assert_cmpuint (fake_moves, ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/qemu-memory/ranges", Fixture, NULL, fixture_set_up, test_ranges, fixture_tear_down);
  g_test_add ("/qemu-memory/ranges-joined", Fixture, NULL, fixture_set_up, test_ranges_joined,
              fixture_tear_down);
  g_test_add ("/qemu-memory/pages", Fixture, NULL, fixture_set_up, test_pages, fixture_tear_down);
  g_test_add ("/qemu-memory/gone", Fixture, NULL, fixture_set_up, test_gone, fixture_tear_down);
  g_test_add ("/qemu-memory/pages-gone", Fixture, NULL, fixture_set_up, test_pages_gone,
              fixture_tear_down);
  g_test_add ("/qemu-memory/moves", Fixture, NULL, fixture_set_up, test_moves, fixture_tear_down);
  g_test_add ("/qemu-memory/no-moves-without-nodes", Fixture, NULL, fixture_set_up,
              test_no_moves_without_nodes, fixture_tear_down);
  int rc = g_test_run ();
  vt_test_remove_tmpdirs ();
  return rc;
}
