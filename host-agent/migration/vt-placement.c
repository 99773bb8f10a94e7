#include "migration/vt-placement.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/vt-error.h"
#include "common/vt-names.h"
#include "common/vt-pagemap.h"
#include "common/vt-sysfs.h"
#include "migration/vt-migrate.h"

#define PAGE 4096ull
/* Entries read per pread: 64 KiB, 32 MiB of address space. */
#define CHUNK 8192
#define HUGE_PAGE_BYTES (2ull << 20)
#define PIECE_PAGES (HUGE_PAGE_BYTES / PAGE) /* what a huge page maps, classed at once */

typedef struct {
  guint64 first, end; /* PFNs [first, end) */
  int node;
} PfnSpan;

struct _VtPfnNodes {
  GArray *spans; /* PfnSpan, sorted, adjacent ones of a node merged */
  /* The shared zero page and huge zero page: guest RAM that was read but
   * never written maps them, they belong to nobody and never move (the
   * kernel's move_pages says EFAULT), so they are on no node here.
   * G_MAXUINT64: not known. */
  guint64 zero_pfn, huge_zero_pfn;
};

static gint
by_first (gconstpointer a, gconstpointer b)
{
  const PfnSpan *x = a, *y = b;
  return x->first < y->first ? -1 : x->first > y->first;
}

/* The entries of a sysfs directory named prefix<number>, as numbers. */
static GArray *
numbered_entries (const char *dir, const char *prefix, GError **error)
{
  g_autofree char *path = vt_sysfs_path (dir);
  g_autoptr (GDir) d = g_dir_open (path, 0, error);
  if (!d)
    return NULL;
  GArray *out = g_array_new (FALSE, FALSE, sizeof (guint64));
  for (const char *name; (name = g_dir_read_name (d));) {
    if (!g_str_has_prefix (name, prefix))
      continue;
    const char *digits = name + strlen (prefix);
    guint64 n;
    if (g_ascii_string_to_unsigned (digits, 10, 0, G_MAXUINT64, &n, NULL))
      g_array_append_val (out, n);
  }
  return out;
}

/* The PFN our own page at `addr` maps (G_MAXUINT64: none, or not ours to
 * see), from pagemap under the vt_sysfs root (a fake tree has none). */
static guint64
own_pfn (gconstpointer addr)
{
  g_autofree char *path = vt_sysfs_path ("proc/self/pagemap");
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return G_MAXUINT64;
  guint64 e = 0;
  gssize n = vt_pagemap_pread (fd, (guintptr) addr / PAGE, &e, 1);
  close (fd);
  guint64 pfn = e & VT_PM_PFN_MASK;
  return n == 1 && (e & VT_PM_PRESENT) && pfn ? pfn : G_MAXUINT64;
}

/* The PFN a read of fresh anonymous memory of ours maps: `len` bytes
 * mapped, read at its first 2 MiB boundary when `huge`, else at its start. */
static guint64
zero_pfn_of_fresh_read (gsize len, gboolean huge)
{
  char *mem = mmap (NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED)
    return G_MAXUINT64;
  char *at = mem;
  if (huge) {
    at = (char *) (((guintptr) mem + HUGE_PAGE_BYTES - 1) & ~(guintptr) (HUGE_PAGE_BYTES - 1));
    madvise (at, HUGE_PAGE_BYTES, MADV_HUGEPAGE);
  }
  volatile char sink = at[0];
  (void) sink;
  guint64 pfn = own_pfn (at);
  munmap (mem, len);
  return pfn;
}

/* Finds the zero pages' PFNs by reading fresh anonymous memory of our
 * own. The small one from a mapping of one page, which cannot hold a huge
 * page: the kernel aligns larger anonymous mappings to 2 MiB, and with THP
 * "always" their first read maps the huge zero page (which first passed for
 * the small one here, and the huge one then went uncounted: 52 MiB of a VM
 * believed in DRAM that was nowhere). The huge one from an aligned 2 MiB
 * asked to be huge (none when THP is off or does not use it). */
static void
find_zero_pages (VtPfnNodes *pfns)
{
  pfns->zero_pfn = zero_pfn_of_fresh_read (PAGE, FALSE);
  pfns->huge_zero_pfn = G_MAXUINT64;
  guint64 pfn = zero_pfn_of_fresh_read (2 * HUGE_PAGE_BYTES, TRUE);
  if (pfn != pfns->zero_pfn && pfn != G_MAXUINT64)
    pfns->huge_zero_pfn = pfn & ~(guint64) (HUGE_PAGE_BYTES / PAGE - 1);
}

VtPfnNodes *
vt_pfn_nodes_read (GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autofree char *bs_text = vt_sysfs_read ("sys/devices/system/memory/block_size_bytes", &local);
  guint64 block = 0;
  if (!bs_text || !g_ascii_string_to_unsigned (bs_text, 16, PAGE, G_MAXUINT64, &block, NULL) ||
      block % PAGE) {
    g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED, "no memory-block sysfs: %s",
                 local ? local->message : "block_size_bytes is not a page multiple in hex");
    return NULL;
  }
  g_autoptr (GArray) nodes = numbered_entries ("sys/devices/system/node", "node", error);
  if (!nodes)
    return NULL;
  g_autoptr (VtPfnNodes) pfns = g_new0 (VtPfnNodes, 1);
  pfns->spans = g_array_new (FALSE, FALSE, sizeof (PfnSpan));
  for (guint i = 0; i < nodes->len; i++) {
    guint64 node = g_array_index (nodes, guint64, i);
    g_autofree char *dir = g_strdup_printf ("sys/devices/system/node/node%" G_GUINT64_FORMAT, node);
    g_autoptr (GArray) blocks = numbered_entries (dir, "memory", error);
    if (!blocks)
      return NULL;
    for (guint k = 0; k < blocks->len; k++) {
      guint64 b = g_array_index (blocks, guint64, k);
      PfnSpan s = { b * (block / PAGE), (b + 1) * (block / PAGE), (int) node };
      g_array_append_val (pfns->spans, s);
    }
  }
  if (pfns->spans->len == 0) {
    g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED, "no node lists a memory block");
    return NULL;
  }
  g_array_sort (pfns->spans, by_first);
  guint w = 0;
  for (guint i = 1; i < pfns->spans->len; i++) {
    PfnSpan *last = &g_array_index (pfns->spans, PfnSpan, w);
    const PfnSpan *s = &g_array_index (pfns->spans, PfnSpan, i);
    if (s->first == last->end && s->node == last->node)
      last->end = s->end;
    else
      g_array_index (pfns->spans, PfnSpan, ++w) = *s;
  }
  g_array_set_size (pfns->spans, w + 1);
  find_zero_pages (pfns);
  return g_steal_pointer (&pfns);
}

void
vt_pfn_nodes_free (VtPfnNodes *pfns)
{
  if (!pfns)
    return;
  g_array_unref (pfns->spans);
  g_free (pfns);
}

int
vt_pfn_nodes_lookup_near (const VtPfnNodes *pfns, guint64 pfn, guint *hint)
{
  if (pfn == pfns->zero_pfn ||
      (pfn >= pfns->huge_zero_pfn && pfn - pfns->huge_zero_pfn < HUGE_PAGE_BYTES / PAGE))
    return -1;
  if (*hint < pfns->spans->len) {
    const PfnSpan *s = &g_array_index (pfns->spans, PfnSpan, *hint);
    if (pfn >= s->first && pfn < s->end)
      return s->node;
  }
  guint lo = 0, hi = pfns->spans->len;
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    const PfnSpan *s = &g_array_index (pfns->spans, PfnSpan, mid);
    if (pfn < s->first)
      hi = mid;
    else if (pfn >= s->end)
      lo = mid + 1;
    else
      return *hint = mid, s->node;
  }
  return -1;
}

int
vt_pfn_nodes_lookup (const VtPfnNodes *pfns, guint64 pfn)
{
  guint hint = G_MAXUINT;
  return vt_pfn_nodes_lookup_near (pfns, pfn, &hint);
}

/* ---- a process's placement ---- */

const char *
vt_placement_method_name (VtPlacementMethod method)
{
  static const char *const names[] = {
    [VT_PLACEMENT_PAGEMAP] = "pagemap",
    [VT_PLACEMENT_MOVE_PAGES] = "move_pages",
  };
  return VT_NAME_LOOKUP (names, method);
}

struct _VtPlacement {
  GPid pid;
  const VtPfnNodes *pfns;
  int pagemap_fd; /* -1: move_pages */
  guint64 *entries;
  VtPageFlags *flags; /* NULL: page classes unknown */
  GArray *shared;     /* VtNodeSpan, or NULL: shared pages not collected */
  VtPieceFunc piece_func; /* or NULL */
  gpointer piece_data;
  /* the 2 MiB piece counted so far: its next page, and its node and
   * class while those are one (node -1: not) */
  guint64 piece_next;
  int piece_node;
  VtPageClass piece_class;
  guint span_hint; /* the PFN span the last page was in (vt_pfn_nodes_lookup_near) */
};

VtPlacement *
vt_placement_open (GPid pid, const VtPfnNodes *pfns, GError **error)
{
  g_autofree char *rel = g_strdup_printf ("proc/%d", (int) pid);
  if (!vt_sysfs_exists (rel)) {
    g_set_error (error, VT_ERROR, VT_ERROR_GONE, "pid %d is gone", (int) pid);
    return NULL;
  }
  VtPlacement *p = g_new0 (VtPlacement, 1);
  p->pid = pid;
  p->pfns = pfns;
  p->pagemap_fd = -1;
  p->piece_next = G_MAXUINT64;
  if (pfns) {
    g_autofree char *path = g_strdup_printf ("%s/pagemap", rel);
    g_autofree char *full = vt_sysfs_path (path);
    p->pagemap_fd = open (full, O_RDONLY | O_CLOEXEC);
    if (p->pagemap_fd >= 0) {
      p->entries = g_new (guint64, CHUNK);
      p->flags = vt_page_flags_open (NULL);
    }
  }
  return p;
}

void
vt_placement_close (VtPlacement *p)
{
  if (!p)
    return;
  if (p->pagemap_fd >= 0)
    close (p->pagemap_fd);
  vt_page_flags_close (p->flags);
  g_clear_pointer (&p->shared, g_array_unref);
  g_free (p->entries);
  g_free (p);
}

VtPlacementMethod
vt_placement_method (const VtPlacement *p)
{
  return p->pagemap_fd >= 0 ? VT_PLACEMENT_PAGEMAP : VT_PLACEMENT_MOVE_PAGES;
}

void
vt_placement_collect_shared (VtPlacement *p, GArray *spans)
{
  g_clear_pointer (&p->shared, g_array_unref);
  p->shared = spans ? g_array_ref (spans) : NULL;
}

void
vt_placement_note_pieces (VtPlacement *p, VtPieceFunc func, gpointer data)
{
  p->piece_func = func;
  p->piece_data = data;
  p->piece_next = G_MAXUINT64;
}

/* Notes pages [vpage, vpage + m) of one 2 MiB piece, all on `node` (-1:
 * not), and reports the piece once its last page is counted, if its
 * first one and all between were (a range may end or start mid-piece). */
static void
note_piece (VtPlacement *p, guint64 vpage, guint m, int node, VtPageClass page_class)
{
  if (!p->piece_func)
    return;
  if (vpage % PIECE_PAGES == 0)
    p->piece_node = node, p->piece_class = page_class;
  else if (vpage != p->piece_next) {
    p->piece_next = G_MAXUINT64;
    return;
  } else if (node != p->piece_node || page_class != p->piece_class)
    p->piece_node = -1;
  p->piece_next = vpage + m;
  if (p->piece_next % PIECE_PAGES == 0) {
    p->piece_func ((p->piece_next - PIECE_PAGES) * PAGE, p->piece_node, p->piece_class,
                   p->piece_data);
    p->piece_next = G_MAXUINT64;
  }
}

/* Adds the page at `addr` on `node` to the shared spans, joined to the
 * last one when it follows it on that node. */
static void
add_shared (GArray *spans, guint64 addr, int node)
{
  if (spans->len > 0) {
    VtNodeSpan *last = &g_array_index (spans, VtNodeSpan, spans->len - 1);
    if (last->end == addr && last->node == node) {
      last->end += PAGE;
      return;
    }
  }
  if (spans->len >= VT_PLACEMENT_SHARED_MAX)
    return;
  VtNodeSpan s = { addr, addr + PAGE, node };
  g_array_append_val (spans, s);
}

/* Counts a page of `page_class` on `node`: in no count when on no node
 * (not ours, the zero page) or on one past n_nodes. */
static void
add_pages (guint64 *per_node, guint n_nodes, guint64 *per_class, VtPageClass page_class, int node,
           guint pages)
{
  if (node < 0 || (guint) node >= n_nodes)
    return;
  per_node[node] += (guint64) pages * PAGE;
  if (per_class)
    per_class[page_class] += (guint64) pages * PAGE;
}

static void
add (guint64 *per_node, guint n_nodes, guint64 *per_class, VtPageClass page_class, int node)
{
  add_pages (per_node, n_nodes, per_class, page_class, node, 1);
}

/* Whether a piece of `page_class` is one huge page: its frames present
 * and in a row (vt_page_flags_classify says so only then), so in one
 * memory block, on one node. */
static gboolean
one_huge_page (VtPageClass page_class)
{
  return page_class == VT_PAGE_CLASS_2M_THP || page_class == VT_PAGE_CLASS_2M_HUGETLB ||
         page_class == VT_PAGE_CLASS_1G_HUGETLB;
}

static gboolean
count_move_pages (VtPlacement *p, guint64 start, guint64 end, guint64 *per_node, guint n_nodes,
                  guint64 *per_class, GError **error)
{
  guint64 n = MIN ((end - start) / PAGE, (guint64) CHUNK);
  g_autofree guint64 *addrs = g_new (guint64, MAX (n, 1));
  g_autofree int *nodes = g_new (int, MAX (n, 1));
  for (guint64 at = start; at < end;) {
    guint k = (guint) MIN ((end - at) / PAGE, (guint64) CHUNK);
    for (guint i = 0; i < k; i++)
      addrs[i] = at + i * PAGE;
    if (!vt_migrate_query_nodes (p->pid, addrs, k, nodes, error))
      return FALSE;
    for (guint i = 0; i < k; i++)
      add (per_node, n_nodes, per_class, VT_PAGE_CLASS_UNKNOWN, nodes[i]);
    at += k * PAGE;
  }
  return TRUE;
}

/* Reads the entries of [at, at + k pages); FALSE with errno. A short read
 * (past the end of the address space) leaves the rest not present. */
static gboolean
read_entries (VtPlacement *p, guint64 at, guint k)
{
  gssize got = vt_pagemap_pread (p->pagemap_fd, at / PAGE, p->entries, k);
  if (got < 0)
    return FALSE;
  memset (p->entries + got, 0, (k - (gsize) got) * sizeof *p->entries);
  return TRUE;
}

/* Counts entries [i, i + m) of the last read, one piece a huge page would
 * map, at virtual page `vpage`; FALSE when a PFN is hidden. */
static gboolean
count_piece (VtPlacement *p, guint64 vpage, guint i, guint m, guint64 *per_node, guint n_nodes,
             guint64 *per_class)
{
  VtPageClass page_class = p->flags
    ? vt_page_flags_classify (p->flags, vpage, p->entries + i, m) : VT_PAGE_CLASS_UNKNOWN;
  if (one_huge_page (page_class) && (p->entries[i] & VT_PM_PFN_MASK) != 0) {
    /* Looked up once, not per page (as below): on a native host a pass
     * over 1 GiB of THP took 1.3 ms instead of 2.3 ms. */
    gboolean exclusive = TRUE;
    for (guint j = i; j < i + m; j++)
      exclusive &= (p->entries[j] & VT_PM_EXCLUSIVE) != 0;
    int node = vt_pfn_nodes_lookup_near (p->pfns, p->entries[i] & VT_PM_PFN_MASK, &p->span_hint);
    if (exclusive || node < 0) {
      add_pages (per_node, n_nodes, per_class, page_class, node, m);
      note_piece (p, vpage, m, node, page_class);
      return TRUE;
    }
  }
  int one_node = -2; /* -2: no page yet; -1: not one node */
  for (guint j = i; j < i + m; j++) {
    guint64 e = p->entries[j];
    if (!(e & VT_PM_PRESENT) || (e & VT_PM_SWAP)) {
      one_node = -1;
      continue;
    }
    guint64 pfn = e & VT_PM_PFN_MASK;
    if (pfn == 0)
      return FALSE;
    int node = vt_pfn_nodes_lookup_near (p->pfns, pfn, &p->span_hint);
    add (per_node, n_nodes, per_class, page_class, node);
    one_node = one_node == -2 || one_node == node ? node : -1;
    /* The zero pages are nobody's: on no node, and not shared memory. */
    if (node >= 0 && !(e & VT_PM_EXCLUSIVE)) {
      one_node = -1;
      if (p->shared)
        add_shared (p->shared, (vpage + (j - i)) * PAGE, node);
    }
  }
  note_piece (p, vpage, m, one_node < 0 ? -1 : one_node, page_class);
  return TRUE;
}

gboolean
vt_placement_count (VtPlacement *p, guint64 start, guint64 end, guint64 *per_node,
                    guint n_nodes, guint64 *per_class, GError **error)
{
  if (start % PAGE || end % PAGE || start > end)
    return vt_error_invalid (error, "not a range of whole pages: 0x%" G_GINT64_MODIFIER
                             "x-0x%" G_GINT64_MODIFIER "x", start, end);
  if (p->pagemap_fd < 0)
    return count_move_pages (p, start, end, per_node, n_nodes, per_class, error);

  g_autofree guint64 *counted = g_new0 (guint64, MAX (n_nodes, 1));
  guint64 classes[VT_PAGE_CLASSES] = { 0 };
  for (guint64 at = start; at < end;) {
    /* Reads end on a 2 MiB boundary: a huge page's piece is classed once. */
    guint k = (guint) MIN ((end - at) / PAGE, CHUNK - at / PAGE % PIECE_PAGES);
    if (!read_entries (p, at, k)) {
      int e = errno;
      g_autofree char *path = g_strdup_printf ("/proc/%d/pagemap", (int) p->pid);
      g_propagate_error (error, vt_pagemap_read_error (p->pid, path, at, e));
      return FALSE;
    }
    for (guint i = 0; i < k;) {
      guint64 vpage = at / PAGE + i;
      guint m = (guint) MIN (k - i, PIECE_PAGES - vpage % PIECE_PAGES);
      if (!count_piece (p, vpage, i, m, counted, n_nodes, classes)) {
        /* PFNs hidden (no CAP_SYS_ADMIN): ask every page instead, from the
         * start of this range, and from now on. */
        close (p->pagemap_fd);
        p->pagemap_fd = -1;
        return count_move_pages (p, start, end, per_node, n_nodes, per_class, error);
      }
      i += m;
    }
    at += (guint64) k * PAGE;
  }
  for (guint n = 0; n < n_nodes; n++)
    per_node[n] += counted[n];
  for (guint c = 0; per_class && c < VT_PAGE_CLASSES; c++)
    per_class[c] += classes[c];
  return TRUE;
}
