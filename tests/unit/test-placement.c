/* Exact placement: pagemap PFNs mapped to nodes by the memory blocks, on a
 * fake two-node tree; the page class of each 2 MiB piece from kpageflags;
 * the move_pages fallback when pagemap hides PFNs; and both on this
 * machine's own kernel, against each other. */
#include <glib.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/vt-error.h"
#include "common/vt-pagemap.h"
#include "common/vt-sysfs.h"
#include "migration/vt-migrate.h"
#include "migration/vt-placement.h"
#include "vt-test-tree.h"

#define PAGE 4096ull
#define PID 4343
#define BASE 0x10000000ull /* the fake process's range starts here */
#define PRESENT (1ull << 63)
#define SWAPPED (1ull << 62)
/* 128 MiB blocks: node0 has blocks 0-1 (PFNs 0-65535), node1 blocks 2-3. */
#define NODE1_PFN 65536ull

static char *
make_tree (const guint64 *entries, guint n)
{
  char *root = vt_test_make_tmpdir ("vt-placement-XXXXXX");
  vt_test_put_file (root, "sys/devices/system/memory/block_size_bytes", "8000000\n");
  for (int b = 0; b < 4; b++) {
    g_autofree char *rel = g_strdup_printf ("sys/devices/system/node/node%d/memory%d/online",
                                            b / 2, b);
    vt_test_put_file (root, rel, "1\n");
  }
  vt_test_put_file (root, "proc/" G_STRINGIFY (PID) "/status", "Name:\tqemu\n");
  g_autofree char *pagemap = g_build_filename (root, "proc", G_STRINGIFY (PID), "pagemap", NULL);
  int fd = open (pagemap, O_WRONLY | O_CREAT, 0644);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (pwrite (fd, entries, n * sizeof *entries, (off_t) (BASE / PAGE * 8)), ==,
                   (ssize_t) (n * sizeof *entries));
  close (fd);
  vt_sysfs_set_root (root);
  return root;
}

static void
drop_tree (char *root)
{
  vt_sysfs_set_root (NULL);
  g_autofree char *cmd = g_strdup_printf ("rm -rf %s", root);
  g_assert_cmpint (system (cmd), ==, 0);
  g_free (root);
}

static void
test_pfn_nodes (void)
{
  guint64 none = 0;
  char *root = make_tree (&none, 1);
  g_autoptr (GError) error = NULL;
  g_autoptr (VtPfnNodes) pfns = vt_pfn_nodes_read (&error);
  g_assert_no_error (error);
  g_assert_cmpint (vt_pfn_nodes_lookup (pfns, 0), ==, 0);
  g_assert_cmpint (vt_pfn_nodes_lookup (pfns, NODE1_PFN - 1), ==, 0);
  g_assert_cmpint (vt_pfn_nodes_lookup (pfns, NODE1_PFN), ==, 1);
  g_assert_cmpint (vt_pfn_nodes_lookup (pfns, 2 * NODE1_PFN - 1), ==, 1);
  g_assert_cmpint (vt_pfn_nodes_lookup (pfns, 2 * NODE1_PFN), ==, -1);
  drop_tree (root);
}

/* Pages scattered one by one over two nodes (as a guest allocator leaves a
 * hot buffer): every page counts where its PFN is. */
static void
test_scattered_pages (void)
{
  guint64 e[64];
  for (int i = 0; i < 64; i++) {
    switch (i % 4) {
    case 0: e[i] = PRESENT | (100 + i); break;             /* node0 */
    case 1: e[i] = PRESENT | (NODE1_PFN + 7 * i); break;   /* node1 */
    case 2: e[i] = i < 32 ? 0 : PRESENT | (NODE1_PFN + i); /* absent, then node1 */ break;
    default: e[i] = PRESENT | SWAPPED | 5; break;           /* swapped: nowhere */
    }
  }
  char *root = make_tree (e, 64);
  g_autoptr (GError) error = NULL;
  g_autoptr (VtPfnNodes) pfns = vt_pfn_nodes_read (&error);
  g_assert_no_error (error);
  g_autoptr (VtPlacement) p = vt_placement_open (PID, pfns, &error);
  g_assert_no_error (error);
  guint64 per_node[2] = { 0 };
  g_assert_true (vt_placement_count (p, BASE, BASE + 64 * PAGE, per_node, 2, NULL, &error));
  g_assert_cmpint (vt_placement_method (p), ==, VT_PLACEMENT_PAGEMAP);
  g_assert_cmpuint (per_node[0], ==, 16 * PAGE);
  g_assert_cmpuint (per_node[1], ==, (16 + 8) * PAGE);
  /* A sub-range, added to what is there. */
  g_assert_true (vt_placement_count (p, BASE, BASE + 4 * PAGE, per_node, 2, NULL, &error));
  g_assert_cmpuint (per_node[0], ==, 17 * PAGE);
  g_assert_false (vt_placement_count (p, BASE + 1, BASE + PAGE, per_node, 2, NULL, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  drop_tree (root);
}

/* Pages another process maps too (pagemap's exclusive bit clear), present
 * and on a node, collected by node as runs: what move_pages would refuse
 * with EACCES. Absent pages and pages mapped once are not in them. */
static void
test_shared_pages_collected (void)
{
  guint64 e[16];
  for (int i = 0; i < 16; i++) {
    guint64 pfn = i < 8 ? 100ull + (guint64) i : NODE1_PFN + (guint64) i;
    gboolean exclusive = i == 0 || i == 5 || i >= 12;
    e[i] = i == 3 ? 0 : PRESENT | pfn | (exclusive ? VT_PM_EXCLUSIVE : 0);
  }
  char *root = make_tree (e, 16);
  g_autoptr (GError) error = NULL;
  g_autoptr (VtPfnNodes) pfns = vt_pfn_nodes_read (&error);
  g_assert_no_error (error);
  g_autoptr (VtPlacement) p = vt_placement_open (PID, pfns, &error);
  g_autoptr (GArray) shared = g_array_new (FALSE, FALSE, sizeof (VtNodeSpan));
  vt_placement_collect_shared (p, shared);
  guint64 per_node[2] = { 0 };
  g_assert_true (vt_placement_count (p, BASE, BASE + 16 * PAGE, per_node, 2, NULL, &error));
  /* node0: 1-2 and 4, 6-7; node1 8-11 (a run across the node boundary splits). */
  static const VtNodeSpan want[] = { { 1, 3, 0 }, { 4, 5, 0 }, { 6, 8, 0 }, { 8, 12, 1 } };
  g_assert_cmpuint (shared->len, ==, G_N_ELEMENTS (want));
  for (guint i = 0; i < shared->len; i++) {
    const VtNodeSpan *s = &g_array_index (shared, VtNodeSpan, i);
    g_assert_cmpuint (s->start, ==, BASE + want[i].start * PAGE);
    g_assert_cmpuint (s->end, ==, BASE + want[i].end * PAGE);
    g_assert_cmpint (s->node, ==, want[i].node);
  }
  drop_tree (root);
}

typedef struct {
  guint64 start[8];
  int node[8];
  guint n;
} Pieces;

static void
on_piece (guint64 start, int node, VtPageClass page_class, gpointer data)
{
  (void) page_class;
  Pieces *p = data;
  g_assert_cmpuint (p->n, <, G_N_ELEMENTS (p->start));
  p->start[p->n] = start, p->node[p->n] = node, p->n++;
}

/* Whole 2 MiB pieces a count read are noted with their node when every
 * page is present, on that node and this process's alone, whether one
 * count read the piece or two adjacent ones did; a piece with an absent
 * page or a page another process maps is noted as on none (-1), and a
 * piece read only in part is not noted. */
static void
test_whole_pieces_noted (void)
{
  enum { N = 5 * 512 };
  g_autofree guint64 *e = g_new (guint64, N);
  for (int i = 0; i < N; i++) {
    int piece = i / 512;
    guint64 pfn = (piece == 1 ? NODE1_PFN : 1000) + (guint64) i;
    e[i] = PRESENT | VT_PM_EXCLUSIVE | pfn;
    if (piece == 2 && i % 512 == 7)
      e[i] = 0; /* absent */
    if (piece == 3 && i % 512 == 9)
      e[i] &= ~VT_PM_EXCLUSIVE; /* mapped by another process too */
  }
  char *root = make_tree (e, N);
  g_autoptr (GError) error = NULL;
  g_autoptr (VtPfnNodes) pfns = vt_pfn_nodes_read (&error);
  g_assert_no_error (error);
  g_autoptr (VtPlacement) p = vt_placement_open (PID, pfns, &error);
  Pieces seen = { 0 };
  vt_placement_note_pieces (p, on_piece, &seen);
  guint64 per_node[2] = { 0 };
  /* piece 1 in two counts, split mid-piece; piece 4 only in part */
  g_assert_true (vt_placement_count (p, BASE, BASE + 700 * PAGE, per_node, 2, NULL, &error));
  g_assert_true (vt_placement_count (p, BASE + 700 * PAGE, BASE + 4 * 512 * PAGE, per_node, 2,
                                     NULL, &error));
  g_assert_true (vt_placement_count (p, BASE + 4 * 512 * PAGE, BASE + (N - 1) * PAGE, per_node, 2,
                                     NULL, &error));
  static const int want[] = { 0, 1, -1, -1 };
  g_assert_cmpuint (seen.n, ==, G_N_ELEMENTS (want));
  for (guint i = 0; i < seen.n; i++) {
    g_assert_cmpuint (seen.start[i], ==, BASE + i * 512 * PAGE);
    g_assert_cmpint (seen.node[i], ==, want[i]);
  }
  /* A count that skips a piece's first pages notes nothing of it. */
  seen.n = 0;
  g_assert_true (vt_placement_count (p, BASE + PAGE, BASE + 512 * PAGE, per_node, 2, NULL, &error));
  g_assert_cmpuint (seen.n, ==, 0);
  drop_tree (root);
}

/* kpageflags of the fake tree: `flags` at `pfn`. */
static void
put_page_flags (const char *root, guint64 pfn, guint64 flags)
{
  g_autofree char *path = g_build_filename (root, "proc", "kpageflags", NULL);
  int fd = open (path, O_WRONLY | O_CREAT, 0644);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (pwrite (fd, &flags, sizeof flags, (off_t) (pfn * 8)), ==, sizeof flags);
  close (fd);
}

#define PIECE 512 /* pages of a 2 MiB piece */
#define THP_HEAD (VT_KPF_THP | VT_KPF_COMPOUND_HEAD)
#define HUGE_HEAD (VT_KPF_HUGE | VT_KPF_COMPOUND_HEAD)
#define HUGE_TAIL (VT_KPF_HUGE | VT_KPF_COMPOUND_TAIL)

/* Seven 2 MiB pieces, each mapped as the kernel maps one kind of page;
 * pieces 2 and 3 on node1. */
static char *
make_classes_tree (void)
{
  static guint64 e[7 * PIECE];
  const guint64 first_pfn[] = { 1024, 2048, NODE1_PFN + 512, NODE1_PFN + 4096, 0, 4096, 5120 };
  for (guint piece = 0; piece < 7; piece++)
    for (guint i = 0; i < PIECE; i++) {
      guint64 pfn = first_pfn[piece] + i;
      if (piece == 4)
        pfn = 3072 + 2 * i; /* 4 KiB pages, scattered after a THP's head */
      /* Piece 6 has a page swapped out (its swap entry reads like the PFN);
       * piece 1's pages another process maps too (shared hugetlbfs). */
      e[piece * PIECE + i] = (piece == 6 && i == 7 ? SWAPPED : PRESENT | VT_PM_EXCLUSIVE) | pfn;
      if (piece == 1)
        e[piece * PIECE + i] &= ~VT_PM_EXCLUSIVE;
    }
  char *root = make_tree (e, G_N_ELEMENTS (e));
  put_page_flags (root, 1024, THP_HEAD);           /* 0: a THP */
  put_page_flags (root, 1025, VT_KPF_THP | VT_KPF_COMPOUND_TAIL);
  put_page_flags (root, 2048, HUGE_HEAD);          /* 1: a 2 MiB hugetlbfs page */
  put_page_flags (root, 2048 + PIECE, 0);
  put_page_flags (root, NODE1_PFN + 512, HUGE_TAIL); /* 2: inside a 1 GiB one */
  put_page_flags (root, NODE1_PFN + 4096, HUGE_HEAD); /* 3: the head of one */
  put_page_flags (root, NODE1_PFN + 4096 + PIECE, HUGE_TAIL);
  put_page_flags (root, 3072, THP_HEAD);           /* 4: 4 KiB pages, one a THP's head */
  put_page_flags (root, 4096, 0);                  /* 5: 4 KiB pages in a row */
  put_page_flags (root, 5120, THP_HEAD);           /* 6: was a THP, one page swapped out */
  return root;
}

/* Which bytes sit in which kind of page: a 2 MiB piece is a huge page
 * when its pages are all there at consecutive PFNs from a 2 MiB-aligned
 * one and kpageflags says so (THP, hugetlbfs; 1 GiB when the folio goes
 * on past the piece); anything else is 4 KiB pages. */
static void
test_page_classes (void)
{
  char *root = make_classes_tree ();
  g_autoptr (GError) error = NULL;
  g_autoptr (VtPfnNodes) pfns = vt_pfn_nodes_read (&error);
  g_assert_no_error (error);
  g_autoptr (VtPlacement) p = vt_placement_open (PID, pfns, &error);
  g_assert_no_error (error);
  guint64 per_node[2] = { 0 }, per_class[VT_PAGE_CLASSES] = { 0 };
  g_assert_true (vt_placement_count (p, BASE, BASE + 7 * PIECE * PAGE, per_node, 2, per_class,
                                     &error));
  g_assert_no_error (error);
  g_assert_cmpuint (per_node[0], ==, (5 * PIECE - 1) * PAGE);
  g_assert_cmpuint (per_node[1], ==, 2 * PIECE * PAGE);
  g_assert_cmpuint (per_class[VT_PAGE_CLASS_2M_THP], ==, PIECE * PAGE);
  g_assert_cmpuint (per_class[VT_PAGE_CLASS_2M_HUGETLB], ==, PIECE * PAGE);
  g_assert_cmpuint (per_class[VT_PAGE_CLASS_1G_HUGETLB], ==, 2 * PIECE * PAGE);
  g_assert_cmpuint (per_class[VT_PAGE_CLASS_4K], ==, (3 * PIECE - 1) * PAGE);
  g_assert_cmpuint (per_class[VT_PAGE_CLASS_UNKNOWN], ==, 0);
  g_assert_cmpint (vt_page_class_dominant (per_class), ==, VT_PAGE_CLASS_4K);

  /* Parts of pieces: the second half of the THP, the first of the next. */
  memset (per_class, 0, sizeof per_class);
  g_assert_true (vt_placement_count (p, BASE + PIECE / 2 * PAGE, BASE + 3 * PIECE / 2 * PAGE,
                                     per_node, 2, per_class, &error));
  g_assert_cmpuint (per_class[VT_PAGE_CLASS_2M_THP], ==, PIECE / 2 * PAGE);
  g_assert_cmpuint (per_class[VT_PAGE_CLASS_2M_HUGETLB], ==, PIECE / 2 * PAGE);
  g_assert_cmpint (vt_page_class_dominant (per_class), ==, VT_PAGE_CLASS_2M_THP);

  /* Without kpageflags (not root) nothing says which. */
  g_autofree char *flags = g_build_filename (root, "proc", "kpageflags", NULL);
  g_assert_cmpint (g_unlink (flags), ==, 0);
  g_autoptr (VtPlacement) blind = vt_placement_open (PID, pfns, &error);
  memset (per_class, 0, sizeof per_class);
  g_assert_true (vt_placement_count (blind, BASE, BASE + PIECE * PAGE, per_node, 2, per_class,
                                     &error));
  g_assert_cmpuint (per_class[VT_PAGE_CLASS_UNKNOWN], ==, PIECE * PAGE);
  drop_tree (root);

  guint64 none[VT_PAGE_CLASSES] = { 0 };
  g_assert_cmpint (vt_page_class_dominant (none), ==, VT_PAGE_CLASS_UNKNOWN);
  g_assert_cmpstr (vt_page_class_name (VT_PAGE_CLASS_2M_THP), ==, "2m-thp");
  g_assert_cmpstr (vt_page_class_name (VT_PAGE_CLASS_1G_HUGETLB), ==, "1g-hugetlb");
  g_assert_cmpstr (vt_page_class_name (VT_PAGE_CLASSES), ==, "unknown");
}

/* The move_pages fallback: node by address (odd pages on node1). */
static long
fake_query (int pid, unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
  (void) pid, (void) flags;
  g_assert_null (nodes);
  for (unsigned long i = 0; i < count; i++)
    status[i] = (int) (((guint64) (guintptr) pages[i] / PAGE) % 2);
  return 0;
}

static void
test_hidden_pfns_fall_back (void)
{
  guint64 e[16];
  for (int i = 0; i < 16; i++)
    e[i] = PRESENT; /* PFN 0: hidden from an unprivileged reader */
  char *root = make_tree (e, 16);
  vt_migrate_set_move_pages_func (fake_query);
  g_autoptr (GError) error = NULL;
  g_autoptr (VtPfnNodes) pfns = vt_pfn_nodes_read (&error);
  g_autoptr (VtPlacement) p = vt_placement_open (PID, pfns, &error);
  guint64 per_node[2] = { 0 };
  g_assert_true (vt_placement_count (p, BASE, BASE + 16 * PAGE, per_node, 2, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (vt_placement_method (p), ==, VT_PLACEMENT_MOVE_PAGES);
  g_assert_cmpuint (per_node[0], ==, 8 * PAGE);
  g_assert_cmpuint (per_node[1], ==, 8 * PAGE);
  /* No PFNs, no page flags: every page's class is unknown. */
  guint64 per_class[VT_PAGE_CLASSES] = { 0 };
  g_assert_true (vt_placement_count (p, BASE, BASE + 16 * PAGE, per_node, 2, per_class, &error));
  g_assert_cmpuint (per_class[VT_PAGE_CLASS_UNKNOWN], ==, 16 * PAGE);
  vt_migrate_set_move_pages_func (NULL);
  drop_tree (root);

  g_assert_null (vt_placement_open (999999999, NULL, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_GONE);
}

/* Real kernels only: PFNs need CAP_SYS_ADMIN (root; CI runs as root). */
static gboolean
real_kernel_usable (void)
{
  if (geteuid () == 0 &&
      g_file_test ("/sys/devices/system/memory/block_size_bytes", G_FILE_TEST_EXISTS))
    return TRUE;
  g_test_skip ("needs root and memory-block sysfs");
  return FALSE;
}

/* Our own bytes in [mem, mem + len) on any node, counted through pagemap
 * and by move_pages queries, which must agree node by node; by page class
 * into per_class (pagemap's: the queries know none). */
static guint64
count_own_both_ways (const char *mem, gsize len, guint64 *per_class)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VtPfnNodes) pfns = vt_pfn_nodes_read (&error);
  g_assert_no_error (error);
  guint64 a[64] = { 0 }, b[64] = { 0 };
  guint64 start = (guint64) (guintptr) mem, end = start + len;
  g_autoptr (VtPlacement) by_pagemap = vt_placement_open (getpid (), pfns, &error);
  g_assert_true (vt_placement_count (by_pagemap, start, end, a, 64, per_class, &error));
  g_assert_no_error (error);
  g_assert_cmpint (vt_placement_method (by_pagemap), ==, VT_PLACEMENT_PAGEMAP);
  g_autoptr (VtPlacement) by_query = vt_placement_open (getpid (), NULL, &error);
  g_assert_true (vt_placement_count (by_query, start, end, b, 64, NULL, &error));
  g_assert_no_error (error);
  guint64 total = 0;
  for (int i = 0; i < 64; i++) {
    g_assert_cmpuint (a[i], ==, b[i]);
    total += a[i];
  }
  return total;
}

/* This machine's kernel: our own pages, written, all counted; pages only
 * read (the zero page) not; the same by both methods (move_pages says
 * EFAULT for the zero page). */
static void
test_real_kernel (void)
{
  if (!real_kernel_usable ())
    return;
  const guint n = 256;
  char *mem = mmap (NULL, n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  g_assert_true (mem != MAP_FAILED);
  volatile char sink = 0;
  for (guint i = 0; i < n; i++) {
    if (i % 2 == 0)
      mem[i * PAGE] = 1; /* every other page written: present, ours */
    else if (i % 4 == 1)
      sink += mem[i * PAGE]; /* read only: the shared zero page, nobody's */
  }
  (void) sink;
  guint64 per_class[VT_PAGE_CLASSES] = { 0 };
  g_assert_cmpuint (count_own_both_ways (mem, n * PAGE, per_class), ==, n / 2 * PAGE);
  /* Every other page: no huge page maps them, and kpageflags (root) says so. */
  g_assert_cmpuint (per_class[VT_PAGE_CLASS_4K], ==, n / 2 * PAGE);
  munmap (mem, n * PAGE);
}

/* Anonymous memory of ours, `len` bytes mapped at *map (to unmap), its
 * first 2 MiB boundary returned: len less up to 2 MiB of room after it. */
static char *
map_huge_aligned (gsize len, char **map)
{
  const gsize huge = 2u << 20;
  *map = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  g_assert_true (*map != MAP_FAILED);
  return (char *) (((guintptr) *map + huge - 1) & ~(guintptr) (huge - 1));
}

/* This machine's kernel: of three 2 MiB pieces of ours, one written whole
 * in 4 KiB pages, one half written, one written whole asked to be huge,
 * the first and last are noted on the node move_pages finds their first
 * page on, the half one as on none. */
static void
test_real_kernel_pieces (void)
{
  if (!real_kernel_usable ())
    return;
  const gsize huge = 2u << 20, len = 4 * huge;
  char *map, *mem = map_huge_aligned (len, &map);
  madvise (mem, 2 * huge, MADV_NOHUGEPAGE);
  madvise (mem + 2 * huge, huge, MADV_HUGEPAGE);
  memset (mem, 1, huge);
  memset (mem + huge, 1, huge / 2);
  memset (mem + 2 * huge, 1, huge);
  g_autoptr (GError) error = NULL;
  g_autoptr (VtPfnNodes) pfns = vt_pfn_nodes_read (&error);
  g_assert_no_error (error);
  g_autoptr (VtPlacement) p = vt_placement_open (getpid (), pfns, &error);
  Pieces seen = { 0 };
  vt_placement_note_pieces (p, on_piece, &seen);
  guint64 per_node[64] = { 0 };
  guint64 start = (guint64) (guintptr) mem;
  g_assert_true (vt_placement_count (p, start, start + 3 * huge, per_node, 64, NULL, &error));
  g_assert_cmpuint (seen.n, ==, 3);
  for (guint i = 0; i < 3; i++) {
    guint64 page = start + i * huge;
    int node = -1;
    g_assert_true (vt_migrate_query_nodes (getpid (), &page, 1, &node, &error));
    g_assert_cmpuint (seen.start[i], ==, start + i * huge);
    g_assert_cmpint (seen.node[i], ==, i == 1 ? -1 : node);
  }
  munmap (map, len);
}

/* The huge zero page too: a huge-page-aligned 2 MiB asked to be huge and
 * only read maps it (THP "always" or "madvise" with use_zero_page, as on
 * Debian); it is nobody's, by both methods. */
static void
test_real_kernel_huge_zero (void)
{
  if (!real_kernel_usable ())
    return;
  const gsize huge = 2u << 20, len = 3 * huge;
  char *map, *mem = map_huge_aligned (len, &map);
  madvise (mem, 2 * huge, MADV_HUGEPAGE);
  volatile char sink = mem[0]; /* the huge zero page, when THP gives one */
  (void) sink;
  memset (mem + huge, 1, huge); /* a huge page of ours */
  guint64 per_class[VT_PAGE_CLASSES] = { 0 };
  g_assert_cmpuint (count_own_both_ways (mem, 2 * huge, per_class), ==, huge);
  /* A THP when the kernel had one to give (THP on, memory not too
   * fragmented), else 4 KiB pages: whole either way. */
  g_test_message ("2 MiB written: %" G_GUINT64_FORMAT " KiB in a THP, %" G_GUINT64_FORMAT
                  " KiB in 4 KiB pages", per_class[VT_PAGE_CLASS_2M_THP] >> 10,
                  per_class[VT_PAGE_CLASS_4K] >> 10);
  g_assert_true (per_class[VT_PAGE_CLASS_2M_THP] == huge || per_class[VT_PAGE_CLASS_4K] == huge);
  munmap (map, len);
}

/* This machine's kernel: a memfd's pages mapped at two addresses of ours
 * are shared (as a vhost-user back end's mapping of QEMU's RAM makes them),
 * where the pages only one mapping touched and our private pages are not. */
static void
test_real_kernel_shared (void)
{
  if (!real_kernel_usable ())
    return;
  const guint n = 64;
  int fd = memfd_create ("vt-shared", MFD_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (ftruncate (fd, n * PAGE), ==, 0);
  char *one = mmap (NULL, n * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  char *two = mmap (NULL, n * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  char *own = mmap (NULL, n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  g_assert_true (one != MAP_FAILED && two != MAP_FAILED && own != MAP_FAILED);
  memset (one, 1, n * PAGE);
  memset (own, 1, n * PAGE);
  /* The first half mapped twice: by writes, as a read fault maps the
   * file's pages around it too (fault_around_bytes). */
  for (guint i = 0; i < n / 2; i++)
    two[i * PAGE] = 2;
  g_autoptr (GError) error = NULL;
  g_autoptr (VtPfnNodes) pfns = vt_pfn_nodes_read (&error);
  g_assert_no_error (error);
  g_autoptr (VtPlacement) p = vt_placement_open (getpid (), pfns, &error);
  g_autoptr (GArray) shared = g_array_new (FALSE, FALSE, sizeof (VtNodeSpan));
  vt_placement_collect_shared (p, shared);
  guint64 per_node[64] = { 0 };
  const char *ranges[] = { one, own };
  guint64 bytes = 0;
  for (guint r = 0; r < G_N_ELEMENTS (ranges); r++) {
    guint64 start = (guint64) (guintptr) ranges[r];
    g_assert_true (vt_placement_count (p, start, start + n * PAGE, per_node, 64, NULL, &error));
    g_assert_no_error (error);
  }
  for (guint i = 0; i < shared->len; i++) {
    const VtNodeSpan *s = &g_array_index (shared, VtNodeSpan, i);
    g_assert_cmpuint (s->start, >=, (guint64) (guintptr) one);
    g_assert_cmpuint (s->end, <=, (guint64) (guintptr) one + n / 2 * PAGE);
    bytes += s->end - s->start;
  }
  g_assert_cmpuint (bytes, ==, n / 2 * PAGE);
  munmap (one, n * PAGE);
  munmap (two, n * PAGE);
  munmap (own, n * PAGE);
  close (fd);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/placement/pfn-nodes", test_pfn_nodes);
  g_test_add_func ("/placement/scattered-pages", test_scattered_pages);
  g_test_add_func ("/placement/page-classes", test_page_classes);
  g_test_add_func ("/placement/hidden-pfns-fall-back", test_hidden_pfns_fall_back);
  g_test_add_func ("/placement/real-kernel", test_real_kernel);
  g_test_add_func ("/placement/real-kernel-huge-zero", test_real_kernel_huge_zero);
  g_test_add_func ("/placement/shared-pages-collected", test_shared_pages_collected);
  g_test_add_func ("/placement/whole-pieces-noted", test_whole_pieces_noted);
  g_test_add_func ("/placement/real-kernel-pieces", test_real_kernel_pieces);
  g_test_add_func ("/placement/real-kernel-shared", test_real_kernel_shared);
  return g_test_run ();
}
