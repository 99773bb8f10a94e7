/* The page sampler on a fake /proc and /sys: the test plays the kernel
 * between prepare and check (clearing idle bits of accessed PFNs, setting
 * soft-dirty on written pages) and checks what the sampler wrote and reports.
 *
 * The fake page_idle bitmap is a plain file, so it keeps whatever is written;
 * the kernel ignores written 0 bits. A word the sampler writes must hence hold
 * exactly the sampling pages' bits: any other 1 would mark another page idle,
 * and a word written once per region would lose the earlier regions' bits. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/vt-page-sampler.h"
#include "common/vt-error.h"
#include "common/vt-sysfs.h"
#include "vt-test-tree.h"

#define PID 4242
#define BASE G_GUINT64_CONSTANT (0x7f0000000000)
#define MAX_PFN G_GUINT64_CONSTANT (0x100000)

#define PM_PRESENT (G_GUINT64_CONSTANT (1) << 63)
#define PM_SWAPPED (G_GUINT64_CONSTANT (1) << 62)
#define PM_SOFT_DIRTY (G_GUINT64_CONSTANT (1) << 55)
#define KPF_COMPOUND_HEAD (G_GUINT64_CONSTANT (1) << 15)
#define KPF_COMPOUND_TAIL (G_GUINT64_CONSTANT (1) << 16)
#define KPF_HUGE (G_GUINT64_CONSTANT (1) << 17)
#define KPF_THP (G_GUINT64_CONSTANT (1) << 22)
#define KPF_ZERO_PAGE (G_GUINT64_CONSTANT (1) << 24)

typedef struct {
  char *root;
  guint64 page_size;
  int pagemap_fd, kpageflags_fd, bitmap_fd;
  int clear_refs_reader; /* clear_refs is a FIFO: each write the sampler makes is seen */
} Fixture;

static char *
fixture_path (Fixture *fx, const char *path)
{
  return g_build_filename (fx->root, path, NULL);
}

static int
create_file (Fixture *fx, const char *path, guint64 size)
{
  g_autofree char *full = fixture_path (fx, path);
  int fd = open (full, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (ftruncate (fd, (off_t) size), ==, 0); /* sparse: reads as zeros */
  return fd;
}

static void
fixture_set_up (Fixture *fx, gconstpointer data)
{
  (void) data;
  fx->root = vt_test_make_tmpdir ("vt-page-sampler-XXXXXX");
  g_assert_nonnull (fx->root);
  fx->page_size = (guint64) sysconf (_SC_PAGESIZE);

  g_autofree char *proc_pid = fixture_path (fx, "proc/4242");
  g_autofree char *page_idle = fixture_path (fx, "sys/kernel/mm/page_idle");
  g_autofree char *self = fixture_path (fx, "proc/self");
  g_autofree char *clear_refs = fixture_path (fx, "proc/4242/clear_refs");
  g_assert_cmpint (g_mkdir_with_parents (proc_pid, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (page_idle, 0755), ==, 0);
  g_assert_cmpint (symlink ("4242", self), ==, 0);

  fx->pagemap_fd = create_file (fx, "proc/4242/pagemap", 0);
  fx->kpageflags_fd = create_file (fx, "proc/kpageflags", MAX_PFN * 8);
  fx->bitmap_fd = create_file (fx, "sys/kernel/mm/page_idle/bitmap", MAX_PFN / 8);
  g_assert_cmpint (mkfifo (clear_refs, 0600), ==, 0);
  fx->clear_refs_reader = open (clear_refs, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  g_assert_cmpint (fx->clear_refs_reader, >=, 0);

  vt_sysfs_set_root (fx->root);
}


static void
fixture_tear_down (Fixture *fx, gconstpointer data)
{
  (void) data;
  close (fx->pagemap_fd);
  close (fx->kpageflags_fd);
  close (fx->bitmap_fd);
  close (fx->clear_refs_reader);
  vt_sysfs_set_root (NULL);
  vt_test_remove_tree (fx->root);
  g_free (fx->root);
}

/* ---- playing the kernel ---- */

static guint64
page_addr (Fixture *fx, guint k)
{
  return BASE + k * fx->page_size;
}

static void
put_u64 (int fd, guint64 offset, guint64 value)
{
  g_assert_cmpint (pwrite (fd, &value, sizeof value, (off_t) offset), ==, sizeof value);
}

static guint64
get_u64 (int fd, guint64 offset)
{
  guint64 value = 0;
  g_assert_cmpint (pread (fd, &value, sizeof value, (off_t) offset), >=, 0);
  return value;
}

static guint64
pagemap_offset (Fixture *fx, guint64 addr)
{
  return addr / fx->page_size * 8;
}

static void
set_pagemap (Fixture *fx, guint64 addr, guint64 entry)
{
  put_u64 (fx->pagemap_fd, pagemap_offset (fx, addr), entry);
}

static void
map_page (Fixture *fx, guint64 addr, guint64 pfn)
{
  set_pagemap (fx, addr, PM_PRESENT | pfn);
}

static void
set_page_flags (Fixture *fx, guint64 pfn, guint64 flags)
{
  put_u64 (fx->kpageflags_fd, pfn * 8, flags);
}

static guint64
idle_word (Fixture *fx, guint64 word_index)
{
  return get_u64 (fx->bitmap_fd, word_index * 8);
}

static void
set_idle_word (Fixture *fx, guint64 word_index, guint64 word)
{
  put_u64 (fx->bitmap_fd, word_index * 8, word);
}

static guint64
bit (guint64 pfn)
{
  return G_GUINT64_CONSTANT (1) << (pfn % 64);
}

/* The guest touched the page: its idle flag is gone. */
static void
kernel_access (Fixture *fx, guint64 pfn)
{
  set_idle_word (fx, pfn / 64, idle_word (fx, pfn / 64) & ~bit (pfn));
}

static void
kernel_clear_soft_dirty (Fixture *fx, guint64 addr)
{
  guint64 off = pagemap_offset (fx, addr);
  put_u64 (fx->pagemap_fd, off, get_u64 (fx->pagemap_fd, off) & ~PM_SOFT_DIRTY);
}

static void
kernel_write (Fixture *fx, guint64 addr)
{
  guint64 off = pagemap_offset (fx, addr);
  put_u64 (fx->pagemap_fd, off, get_u64 (fx->pagemap_fd, off) | PM_SOFT_DIRTY);
}

/* Everything the sampler wrote to clear_refs since the last call. */
static char *
drain_clear_refs (Fixture *fx)
{
  char buf[64];
  ssize_t n = read (fx->clear_refs_reader, buf, sizeof buf - 1);
  if (n < 0) {
    g_assert_cmpint (errno, ==, EAGAIN);
    n = 0;
  }
  buf[n] = '\0';
  return g_strdup (buf);
}

static VtRegion
region_at (guint64 addr, guint64 page_size)
{
  VtRegion r = { .start = addr, .end = addr + page_size, .sampling_addr = addr };
  return r;
}

static VtPageSampler *
new_sampler (VtPageCheck check)
{
  g_autoptr (GError) error = NULL;
  VtPageSampler *sampler = vt_page_sampler_new (check, PID, &error);
  g_assert_no_error (error);
  g_assert_nonnull (sampler);
  return sampler;
}

static void
prepare (VtPageSampler *sampler, const VtRegion *regions, guint n)
{
  vt_page_sampler_primitives.prepare (sampler, regions, n);
}

static void
check (VtPageSampler *sampler, const VtRegion *regions, guint n, gboolean *accessed)
{
  vt_page_sampler_primitives.check (sampler, regions, n, accessed);
}

static void
assert_no_kept_error (VtPageSampler *sampler)
{
  g_autoptr (GError) error = vt_page_sampler_take_error (sampler);
  g_assert_no_error (error);
}

/* ---- tests ---- */

static void
test_check_names (void)
{
  g_assert_cmpstr (vt_page_check_name (VT_PAGE_CHECK_IDLE), ==, "page-idle");
  g_assert_cmpstr (vt_page_check_name (VT_PAGE_CHECK_SOFT_DIRTY), ==, "soft-dirty");
}

static void
test_available (Fixture *fx, gconstpointer data)
{
  (void) data;
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_page_sampler_available (VT_PAGE_CHECK_IDLE, &error));
  g_assert_true (vt_page_sampler_available (VT_PAGE_CHECK_SOFT_DIRTY, &error));
  g_assert_no_error (error);

  g_autofree char *bitmap = fixture_path (fx, "sys/kernel/mm/page_idle/bitmap");
  g_assert_cmpint (g_unlink (bitmap), ==, 0);
  g_assert_false (vt_page_sampler_available (VT_PAGE_CHECK_IDLE, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, bitmap));
  g_assert_nonnull (strstr (error->message, "CONFIG_IDLE_PAGE_TRACKING"));
  g_clear_error (&error);

  g_assert_null (vt_page_sampler_new (VT_PAGE_CHECK_IDLE, PID, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "sys/kernel/mm/page_idle/bitmap"));
  g_clear_error (&error);

  /* Soft-dirty needs no page_idle. */
  g_assert_true (vt_page_sampler_available (VT_PAGE_CHECK_SOFT_DIRTY, &error));
  g_assert_no_error (error);
  g_autofree char *clear_refs = fixture_path (fx, "proc/4242/clear_refs");
  g_assert_cmpint (g_unlink (clear_refs), ==, 0);
  g_assert_false (vt_page_sampler_available (VT_PAGE_CHECK_SOFT_DIRTY, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "proc/self/clear_refs"));
}

static void
test_pid_gone (Fixture *fx, gconstpointer data)
{
  (void) fx;
  (void) data;
  g_autoptr (GError) error = NULL;
  g_assert_null (vt_page_sampler_new (VT_PAGE_CHECK_IDLE, 4343, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_GONE);
  g_assert_nonnull (strstr (error->message, "4343"));
  g_clear_error (&error);
  g_assert_null (vt_page_sampler_new (VT_PAGE_CHECK_SOFT_DIRTY, 4343, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_GONE);
}

/* prepare sets exactly the sampling pages' bits, in their words only;
 * check reports exactly the pages the kernel saw accessed. */
static void
test_idle_marks_and_checks (Fixture *fx, gconstpointer data)
{
  (void) data;
  const guint64 pfns[] = { 0x1003, 0x2041, 0x30ff /* bit 63 */ };
  VtRegion regions[3];
  for (guint i = 0; i < 3; i++) {
    regions[i] = region_at (page_addr (fx, 10 * i), fx->page_size);
    map_page (fx, regions[i].sampling_addr, pfns[i]);
    /* Neighbouring words must not be written at all. */
    set_idle_word (fx, pfns[i] / 64 - 1, G_MAXUINT64);
    set_idle_word (fx, pfns[i] / 64 + 1, G_MAXUINT64);
  }
  g_autoptr (VtPageSampler) sampler = new_sampler (VT_PAGE_CHECK_IDLE);

  prepare (sampler, regions, 3);
  assert_no_kept_error (sampler);
  for (guint i = 0; i < 3; i++) {
    g_assert_cmphex (idle_word (fx, pfns[i] / 64), ==, bit (pfns[i]));
    g_assert_cmphex (idle_word (fx, pfns[i] / 64 - 1), ==, G_MAXUINT64);
    g_assert_cmphex (idle_word (fx, pfns[i] / 64 + 1), ==, G_MAXUINT64);
  }

  kernel_access (fx, pfns[1]);
  gboolean accessed[3] = { TRUE, FALSE, TRUE };
  check (sampler, regions, 3, accessed);
  assert_no_kept_error (sampler);
  g_assert_false (accessed[0]);
  g_assert_true (accessed[1]);
  g_assert_false (accessed[2]);

  /* The next interval marks it again. */
  prepare (sampler, regions, 3);
  g_assert_cmphex (idle_word (fx, pfns[1] / 64), ==, bit (pfns[1]));
  check (sampler, regions, 3, accessed);
  g_assert_false (accessed[1]);
  assert_no_kept_error (sampler);
}

/* Two regions in one word: one write with both bits, one read; results go to
 * the right region although the PFN order is not the region order. */
static void
test_idle_shared_word (Fixture *fx, gconstpointer data)
{
  (void) data;
  const guint64 pfns[] = { 0x1030, 0x1005, 0x1040 };
  VtRegion regions[3];
  for (guint i = 0; i < 3; i++) {
    regions[i] = region_at (page_addr (fx, i), fx->page_size);
    map_page (fx, regions[i].sampling_addr, pfns[i]);
  }
  g_autoptr (VtPageSampler) sampler = new_sampler (VT_PAGE_CHECK_IDLE);

  prepare (sampler, regions, 3);
  assert_no_kept_error (sampler);
  g_assert_cmphex (idle_word (fx, 0x1000 / 64), ==, bit (0x1030) | bit (0x1005));
  g_assert_cmphex (idle_word (fx, 0x1040 / 64), ==, bit (0x1040));

  kernel_access (fx, 0x1030);
  gboolean accessed[3];
  check (sampler, regions, 3, accessed);
  assert_no_kept_error (sampler);
  g_assert_true (accessed[0]);
  g_assert_false (accessed[1]);
  g_assert_false (accessed[2]);
}

/* Pages that are not there, swapped out, or the shared zero page are not
 * marked (a swap entry's low bits are no PFN) and count as not accessed. */
static void
test_idle_untracked_pages (Fixture *fx, gconstpointer data)
{
  (void) data;
  VtRegion regions[4];
  for (guint i = 0; i < 4; i++)
    regions[i] = region_at (page_addr (fx, i), fx->page_size);
  /* regions[0]: never faulted in: entry 0 */
  set_pagemap (fx, regions[1].sampling_addr, PM_SWAPPED | 0x1002); /* swap type/offset */
  map_page (fx, regions[2].sampling_addr, 0x1001);
  map_page (fx, regions[3].sampling_addr, 0x1007);
  set_page_flags (fx, 0x1007, KPF_ZERO_PAGE);
  g_autoptr (VtPageSampler) sampler = new_sampler (VT_PAGE_CHECK_IDLE);

  prepare (sampler, regions, 4);
  assert_no_kept_error (sampler);
  g_assert_cmphex (idle_word (fx, 0x1000 / 64), ==, bit (0x1001));

  gboolean accessed[4] = { TRUE, TRUE, TRUE, TRUE };
  check (sampler, regions, 4, accessed);
  assert_no_kept_error (sampler);
  for (guint i = 0; i < 4; i++)
    g_assert_false (accessed[i]);
}

/* page_idle ignores tail pages: a THP page is marked and read through its
 * folio's head. */
static void
test_idle_thp_tail (Fixture *fx, gconstpointer data)
{
  (void) data;
  const guint64 head = 0x2200, tail = 0x2203; /* an order-9 folio */
  set_page_flags (fx, head, KPF_COMPOUND_HEAD | KPF_THP);
  for (guint64 pfn = head + 1; pfn < head + 512; pfn++)
    set_page_flags (fx, pfn, KPF_COMPOUND_TAIL | KPF_THP);
  VtRegion regions[1] = { region_at (page_addr (fx, 3), fx->page_size) };
  map_page (fx, regions[0].sampling_addr, tail);
  g_autoptr (VtPageSampler) sampler = new_sampler (VT_PAGE_CHECK_IDLE);

  prepare (sampler, regions, 1);
  assert_no_kept_error (sampler);
  g_assert_cmphex (idle_word (fx, head / 64), ==, bit (head));

  gboolean accessed[1];
  check (sampler, regions, 1, accessed);
  g_assert_false (accessed[0]);
  prepare (sampler, regions, 1);
  kernel_access (fx, head);
  check (sampler, regions, 1, accessed);
  g_assert_true (accessed[0]);
  assert_no_kept_error (sampler);
}

/* A page migrated between prepare and check is judged at its new PFN (the
 * kernel carries the idle flag over to the new page). */
static void
test_idle_migrated_page (Fixture *fx, gconstpointer data)
{
  (void) data;
  VtRegion regions[1] = { region_at (page_addr (fx, 0), fx->page_size) };
  map_page (fx, regions[0].sampling_addr, 0x4001);
  g_autoptr (VtPageSampler) sampler = new_sampler (VT_PAGE_CHECK_IDLE);

  prepare (sampler, regions, 1);
  g_assert_cmphex (idle_word (fx, 0x4001 / 64), ==, bit (0x4001));
  /* migrated: the old page is freed (not idle), the new one is idle */
  map_page (fx, regions[0].sampling_addr, 0x5002);
  kernel_access (fx, 0x4001);
  set_idle_word (fx, 0x5002 / 64, bit (0x5002));

  gboolean accessed[1] = { TRUE };
  check (sampler, regions, 1, accessed);
  assert_no_kept_error (sampler);
  g_assert_false (accessed[0]);
}

/* A check judges only pages the last prepare marked. */
static void
test_idle_unprepared (Fixture *fx, gconstpointer data)
{
  (void) data;
  VtRegion regions[1] = { region_at (page_addr (fx, 0), fx->page_size) };
  VtRegion other[1] = { region_at (page_addr (fx, 1), fx->page_size) };
  map_page (fx, regions[0].sampling_addr, 0x1001);
  map_page (fx, other[0].sampling_addr, 0x1002);
  g_autoptr (VtPageSampler) sampler = new_sampler (VT_PAGE_CHECK_IDLE);

  gboolean accessed[1] = { TRUE };
  check (sampler, regions, 1, accessed); /* no prepare yet; bitmap reads 0 */
  g_assert_false (accessed[0]);
  prepare (sampler, regions, 1);
  accessed[0] = TRUE;
  check (sampler, other, 1, accessed);
  g_assert_false (accessed[0]);
  assert_no_kept_error (sampler);
}

static void
test_idle_no_pfns (Fixture *fx, gconstpointer data)
{
  (void) data;
  VtRegion regions[2] = { region_at (page_addr (fx, 0), fx->page_size),
                          region_at (page_addr (fx, 1), fx->page_size) };
  map_page (fx, regions[0].sampling_addr, 0x1001);
  map_page (fx, regions[1].sampling_addr, 0); /* what an unprivileged reader sees */
  g_autoptr (VtPageSampler) sampler = new_sampler (VT_PAGE_CHECK_IDLE);

  prepare (sampler, regions, 2);
  g_autoptr (GError) error = vt_page_sampler_take_error (sampler);
  g_assert_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "CAP_SYS_ADMIN"));
  g_assert_nonnull (strstr (error->message, "proc/4242/pagemap"));
  assert_no_kept_error (sampler);

  gboolean accessed[2] = { TRUE, TRUE };
  check (sampler, regions, 2, accessed);
  g_assert_false (accessed[0]);
  g_assert_false (accessed[1]);
}

static void
test_idle_hugetlb (Fixture *fx, gconstpointer data)
{
  (void) data;
  VtRegion regions[1] = { region_at (page_addr (fx, 0), fx->page_size) };
  map_page (fx, regions[0].sampling_addr, 0x6001);
  set_page_flags (fx, 0x6001, KPF_HUGE | KPF_COMPOUND_TAIL);
  g_autoptr (VtPageSampler) sampler = new_sampler (VT_PAGE_CHECK_IDLE);

  prepare (sampler, regions, 1);
  g_autoptr (GError) error = vt_page_sampler_take_error (sampler);
  g_assert_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "hugetlbfs"));
  g_assert_cmphex (idle_word (fx, 0x6000 / 64), ==, 0);
}

/* The process exits under the sampler: check reports nothing accessed and
 * keeps the failure; the first failure is the one kept, handed out once. */
static void
test_error_kept_once (Fixture *fx, gconstpointer data)
{
  (void) data;
  VtRegion regions[2] = { region_at (page_addr (fx, 0), fx->page_size),
                          region_at (page_addr (fx, 1), fx->page_size) };
  map_page (fx, regions[0].sampling_addr, 0x1001);
  map_page (fx, regions[1].sampling_addr, 0x1002);
  g_autoptr (VtPageSampler) sampler = new_sampler (VT_PAGE_CHECK_IDLE);
  prepare (sampler, regions, 2);
  assert_no_kept_error (sampler);
  kernel_access (fx, 0x1001);

  /* pagemap of an exited process reads as empty */
  g_assert_cmpint (ftruncate (fx->pagemap_fd, 0), ==, 0);
  gboolean accessed[2] = { TRUE, TRUE };
  check (sampler, regions, 2, accessed);
  g_assert_false (accessed[0]);
  g_assert_false (accessed[1]);

  /* a second, different failure is not kept over the first */
  map_page (fx, regions[0].sampling_addr, 0);
  prepare (sampler, regions, 2);

  g_autoptr (GError) error = vt_page_sampler_take_error (sampler);
  g_assert_error (error, VT_ERROR, VT_ERROR_GONE);
  g_assert_nonnull (strstr (error->message, "process 4242 is gone"));
  g_assert_null (vt_page_sampler_take_error (sampler));
}

/* A failure in the middle of check (a word past the bitmap's end) leaves no
 * region reported accessed, not even those judged before it. */
static void
test_idle_error_midway (Fixture *fx, gconstpointer data)
{
  (void) data;
  VtRegion regions[2] = { region_at (page_addr (fx, 0), fx->page_size),
                          region_at (page_addr (fx, 1), fx->page_size) };
  map_page (fx, regions[0].sampling_addr, 0x1001);
  map_page (fx, regions[1].sampling_addr, 0x2002);
  g_autoptr (VtPageSampler) sampler = new_sampler (VT_PAGE_CHECK_IDLE);
  prepare (sampler, regions, 2);
  assert_no_kept_error (sampler);

  kernel_access (fx, 0x1001);
  g_assert_cmpint (ftruncate (fx->bitmap_fd, (0x1001 / 64 + 1) * 8), ==, 0);
  gboolean accessed[2];
  check (sampler, regions, 2, accessed);
  g_assert_false (accessed[0]);
  g_assert_false (accessed[1]);

  g_autoptr (GError) error = vt_page_sampler_take_error (sampler);
  g_assert_error (error, VT_ERROR, VT_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "sys/kernel/mm/page_idle/bitmap"));
  g_assert_nonnull (strstr (error->message, "PFN 0x2002"));
  g_assert_nonnull (strstr (error->message, "4242"));
}

/* One "4" to clear_refs per prepare whatever the number of regions; check
 * reads bit 55 of present pages only; no PFNs needed. */
static void
test_soft_dirty (Fixture *fx, gconstpointer data)
{
  (void) data;
  VtRegion regions[4];
  for (guint i = 0; i < 4; i++)
    regions[i] = region_at (page_addr (fx, 100 * i), fx->page_size);
  /* Pages start soft-dirty; PFNs read as 0, as for an unprivileged reader. */
  for (guint i = 0; i < 3; i++)
    set_pagemap (fx, regions[i].sampling_addr, PM_PRESENT | PM_SOFT_DIRTY);
  set_pagemap (fx, regions[3].sampling_addr, PM_SWAPPED | PM_SOFT_DIRTY | 0x40);
  g_autoptr (VtPageSampler) sampler = new_sampler (VT_PAGE_CHECK_SOFT_DIRTY);

  for (guint round = 0; round < 2; round++) {
    prepare (sampler, regions, 4);
    assert_no_kept_error (sampler);
    g_autofree char *written = drain_clear_refs (fx);
    g_assert_cmpstr (written, ==, "4");

    for (guint i = 0; i < 3; i++)
      kernel_clear_soft_dirty (fx, regions[i].sampling_addr);
    kernel_write (fx, regions[0].sampling_addr);
    kernel_write (fx, regions[2].sampling_addr);

    gboolean accessed[4] = { FALSE, TRUE, FALSE, TRUE };
    check (sampler, regions, 4, accessed);
    assert_no_kept_error (sampler);
    g_assert_true (accessed[0]);
    g_assert_false (accessed[1]);
    g_assert_true (accessed[2]);
    g_assert_false (accessed[3]); /* not present */
  }

  /* Nothing to sample: nothing written. */
  prepare (sampler, regions, 0);
  g_autofree char *written = drain_clear_refs (fx);
  g_assert_cmpstr (written, ==, "");
}

static void
add (const char *name, void (*func) (Fixture *, gconstpointer))
{
  g_test_add (name, Fixture, NULL, fixture_set_up, func, fixture_tear_down);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/page-sampler/check-names", test_check_names);
  add ("/page-sampler/available", test_available);
  add ("/page-sampler/pid-gone", test_pid_gone);
  add ("/page-sampler/idle/marks-and-checks", test_idle_marks_and_checks);
  add ("/page-sampler/idle/shared-word", test_idle_shared_word);
  add ("/page-sampler/idle/untracked-pages", test_idle_untracked_pages);
  add ("/page-sampler/idle/thp-tail", test_idle_thp_tail);
  add ("/page-sampler/idle/migrated-page", test_idle_migrated_page);
  add ("/page-sampler/idle/unprepared", test_idle_unprepared);
  add ("/page-sampler/idle/no-pfns", test_idle_no_pfns);
  add ("/page-sampler/idle/hugetlb", test_idle_hugetlb);
  add ("/page-sampler/idle/error-midway", test_idle_error_midway);
  add ("/page-sampler/error-kept-once", test_error_kept_once);
  add ("/page-sampler/soft-dirty", test_soft_dirty);
  return g_test_run ();
}
